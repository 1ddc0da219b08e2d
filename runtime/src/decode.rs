//! Decoding the way Go's encoding/json writes: helpers the hook types and the objects they
//! embed share (so that neither depends on the other for them).

use serde::Deserialize;

/// Deserializes `null` as the default value: Go's encoding/json writes a nil slice or map
/// without `omitempty` as `null` (e.g. `items` of GeneratePatches), and decodes `null` as empty.
pub(crate) fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A map key, borrowed from the input where the input allows it (serde_json's `from_slice`
/// lends every key without escapes), so that matching a key allocates nothing.
pub(crate) struct Key<'de>(pub(crate) std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// `Deserialize` for an object type that names some fields and keeps every other one in its
/// `extra` map: what `#[serde(default)]` on each named field plus `#[serde(flatten)] extra`
/// would derive, without serde's buffering of the whole object before it decodes a field
/// (flatten first copies every member into an intermediate tree; this decodes each member
/// once, straight into its field or into `extra`).
///
/// Each `field: "jsonName"` is decoded with the field type's own `Deserialize`, a missing one
/// is the default; `field: "jsonName" or_null` also takes `null` as the default (Go writes a
/// nil slice or map as `null`). A named field given twice is an error, as serde's derive makes
/// it; of an unknown one given twice the last is kept, as in any map.
macro_rules! deserialize_keeping_extra {
    ($ty:ident, $expecting:literal, { $($field:ident: $key:literal $($or_null:ident)?),* $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct ObjectVisitor;
                impl<'de> serde::de::Visitor<'de> for ObjectVisitor {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$ty, A::Error> {
                        let mut out = <$ty>::default();
                        $(let mut $field = false;)*
                        while let Some(key) = map.next_key::<$crate::decode::Key<'de>>()? {
                            match key.0.as_ref() {
                                $($key => {
                                    if $field {
                                        return Err(<A::Error as serde::de::Error>::duplicate_field($key));
                                    }
                                    $field = true;
                                    out.$field = deserialize_keeping_extra!(@value map $($or_null)?);
                                })*
                                _ => {
                                    let value = map.next_value::<serde_json::Value>()?;
                                    out.extra.insert(key.0.into_owned(), value);
                                }
                            }
                        }
                        Ok(out)
                    }
                }
                deserializer.deserialize_map(ObjectVisitor)
            }
        }
        // Every field of the struct is named above: one left out would not compile here
        // (and would otherwise decode into `extra`, leaving the typed field empty).
        const _: fn(&$ty) = |object| {
            let $ty { $($field: _,)* extra: _ } = object;
        };
    };
    (@value $map:ident) => { $map.next_value()? };
    (@value $map:ident or_null) => { $map.next_value::<Option<_>>()?.unwrap_or_default() };
}
pub(crate) use deserialize_keeping_extra;
