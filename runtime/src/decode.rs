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

/// Decoding into a value that is already there (the struct's default), rather than making one
/// and moving it: a kind's types nest structs of kilobytes (a KubeadmControlPlaneTemplate is
/// 3.4 KiB), and each level returned by value copied everything below it again (half of
/// decoding such a template was `memmove`). Implemented by [`__deserialize_keeping_unknown!`];
/// not a public API.
#[doc(hidden)]
pub trait DecodeInPlace {
    /// Decodes into `place`, which holds the type's default value.
    fn decode_in_place<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
        place: &mut Self,
    ) -> Result<(), D::Error>;
}

/// A struct field decoded in place ([`DecodeInPlace`]).
#[doc(hidden)]
pub struct InPlace<'a, T>(pub &'a mut T);

impl<'de, T: DecodeInPlace> serde::de::DeserializeSeed<'de> for InPlace<'_, T> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        T::decode_in_place(deserializer, self.0)
    }
}

/// An optional struct field decoded in place: `null` is `None`, as `Option`'s own
/// `Deserialize` reads it; anything else is decoded into the struct's default.
#[doc(hidden)]
pub struct OptionInPlace<'a, T>(pub &'a mut Option<T>);

impl<'de, T: DecodeInPlace + Default> serde::de::DeserializeSeed<'de> for OptionInPlace<'_, T> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        struct OptionVisitor<'a, T>(&'a mut Option<T>);
        impl<'de, T: DecodeInPlace + Default> serde::de::Visitor<'de> for OptionVisitor<'_, T> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("option")
            }
            fn visit_none<E>(self) -> Result<(), E> {
                *self.0 = None;
                Ok(())
            }
            fn visit_unit<E>(self) -> Result<(), E> {
                *self.0 = None;
                Ok(())
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, inner: D) -> Result<(), D::Error> {
                T::decode_in_place(inner, self.0.insert(T::default()))
            }
        }
        deserializer.deserialize_option(OptionVisitor(self.0))
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
/// missing one an error, and `in_place` (a struct field) and `option_in_place` (an optional
/// one) decode a struct that implements [`DecodeInPlace`] (as this macro's do) where it will
/// stay, without moving it. A named field given twice is an error, as serde's derive makes it;
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
                let mut out = <$ty as ::std::default::Default>::default();
                <$ty as $crate::__private::DecodeInPlace>::decode_in_place(deserializer, &mut out)?;
                ::std::result::Result::Ok(out)
            }
        }
        impl $crate::__private::DecodeInPlace for $ty {
            fn decode_in_place<'de, D>(deserializer: D, place: &mut Self) -> ::std::result::Result<(), D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                use $crate::__private::serde::de::Error as _;
                struct ObjectVisitor<'a>(&'a mut $ty);
                impl<'de> $crate::__private::serde::de::Visitor<'de> for ObjectVisitor<'_> {
                    type Value = ();
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_map<A>(self, mut map: A) -> ::std::result::Result<(), A::Error>
                    where
                        A: $crate::__private::serde::de::MapAccess<'de>,
                    {
                        let out = self.0;
                        $(let mut $field = false;)*
                        while let ::std::option::Option::Some(key) = map.next_key::<$crate::__private::Key<'de>>()? {
                            match &*key.0 {
                                $($key => {
                                    if $field {
                                        return ::std::result::Result::Err(A::Error::duplicate_field($key));
                                    }
                                    $field = true;
                                    $crate::__deserialize_keeping_unknown!(@value map out.$field $(, $flag)?);
                                })*
                                _ => {
                                    let value = map.next_value::<$crate::__private::serde_json::Value>()?;
                                    out.$unknown.insert(key.0.into_owned(), value);
                                }
                            }
                        }
                        $($crate::__deserialize_keeping_unknown!(@check $field $key $($flag)?);)*
                        ::std::result::Result::Ok(())
                    }
                }
                deserializer.deserialize_map(ObjectVisitor(place))
            }
        }
        // Every field of the struct is named above: one left out would not compile here
        // (and would otherwise decode into the map, leaving the typed field empty).
        const _: fn(&$ty) = |object| {
            let $ty { $($field: _,)* $unknown: _ } = object;
        };
    };
    (@value $map:ident $place:expr) => { $place = $map.next_value()? };
    (@value $map:ident $place:expr, required) => { $place = $map.next_value()? };
    (@value $map:ident $place:expr, or_null) => {
        $place = $map.next_value::<::std::option::Option<_>>()?.unwrap_or_default()
    };
    (@value $map:ident $place:expr, in_place) => {
        $map.next_value_seed($crate::__private::InPlace(&mut $place))?
    };
    (@value $map:ident $place:expr, option_in_place) => {
        $map.next_value_seed($crate::__private::OptionInPlace(&mut $place))?
    };
    (@check $field:ident $key:literal) => {};
    (@check $field:ident $key:literal required) => {
        if !$field {
            return ::std::result::Result::Err(A::Error::missing_field($key));
        }
    };
    (@check $field:ident $key:literal $flag:ident) => {};

}
