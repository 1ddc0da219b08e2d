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
#[doc(hidden)]
pub struct Key<'de>(pub std::borrow::Cow<'de, str>);

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

/// `Deserialize` for a struct that names some fields and keeps every other one in a map
/// member: what `#[serde(default)]` on each named field plus `#[serde(flatten)]` on the map
/// would derive, without serde's buffering of the whole object before it decodes a field
/// (flatten first copies every member into an intermediate tree; this decodes each member
/// once, straight into its field or into the map). Used by [`crate::objects`] and by the types
/// `capi-ext generate types` writes; not a public API.
///
/// `__deserialize_keeping_unknown!(Type, "struct Type", map_member, { field: "jsonName", ... })`:
/// each named field is decoded with its type's own `Deserialize`, and a missing one is the
/// default (the struct implements `Default`); `field: "jsonName" or_null` also takes `null` as
/// the default (Go writes a nil slice or map as `null`), `field: "jsonName" required` makes a
/// missing one an error. A named field given twice is an error, as serde's derive makes it;
/// of an unknown one given twice the last is kept, as in any map. Every field of the struct
/// must be named (one left out does not compile).
#[doc(hidden)]
#[macro_export]
macro_rules! __deserialize_keeping_unknown {
    ($ty:ident, $expecting:literal, $unknown:ident, { $($field:ident: $key:literal $($flag:ident)?),* $(,)? }) => {
        impl<'de> $crate::__private::serde::Deserialize<'de> for $ty {
            fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                use $crate::__private::serde::de::Error as _;
                struct ObjectVisitor;
                impl<'de> $crate::__private::serde::de::Visitor<'de> for ObjectVisitor {
                    type Value = $ty;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_map<A>(self, mut map: A) -> ::std::result::Result<$ty, A::Error>
                    where
                        A: $crate::__private::serde::de::MapAccess<'de>,
                    {
                        let mut out = <$ty as ::std::default::Default>::default();
                        $(let mut $field = false;)*
                        while let ::std::option::Option::Some(key) = map.next_key::<$crate::__private::Key<'de>>()? {
                            match &*key.0 {
                                $($key => {
                                    if $field {
                                        return ::std::result::Result::Err(A::Error::duplicate_field($key));
                                    }
                                    $field = true;
                                    out.$field = $crate::__deserialize_keeping_unknown!(@value map $($flag)?);
                                })*
                                _ => {
                                    let value = map.next_value::<$crate::__private::serde_json::Value>()?;
                                    out.$unknown.insert(key.0.into_owned(), value);
                                }
                            }
                        }
                        $($crate::__deserialize_keeping_unknown!(@check $field $key $($flag)?);)*
                        ::std::result::Result::Ok(out)
                    }
                }
                deserializer.deserialize_map(ObjectVisitor)
            }
        }
        // Every field of the struct is named above: one left out would not compile here
        // (and would otherwise decode into the map, leaving the typed field empty).
        const _: fn(&$ty) = |object| {
            let $ty { $($field: _,)* $unknown: _ } = object;
        };
    };
    (@value $map:ident) => { $map.next_value()? };
    (@value $map:ident required) => { $map.next_value()? };
    (@value $map:ident or_null) => { $map.next_value::<::std::option::Option<_>>()?.unwrap_or_default() };
    (@check $field:ident $key:literal) => {};
    (@check $field:ident $key:literal or_null) => {};
    (@check $field:ident $key:literal required) => {
        if !$field {
            return ::std::result::Result::Err(A::Error::missing_field($key));
        }
    };
}
