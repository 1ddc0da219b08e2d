//! The JSON Patch between two values of a typed template, found on the values themselves: what
//! [`diff`](super::diff) finds between their encodings, without encoding either whole. A typed
//! patch on a type that implements it (the types `capi-ext generate types` writes do) answers
//! with this difference; only the members that changed are encoded, for the operations' values.

use super::template::{diff_members, push_token};
use crate::hooks::v1alpha1::JsonPatchOp;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Where a difference is being written: the members that lead to the value being compared
/// (made into a JSON pointer only for an operation), the operations found so far, and the
/// first value that did not encode.
#[derive(Debug, Default)]
pub struct Differences<'a> {
    keys: Vec<&'a str>,
    ops: Vec<JsonPatchOp>,
    failed: Option<serde_json::Error>,
}

impl<'a> Differences<'a> {
    /// Nothing found yet, at the object's root.
    pub fn new() -> Self {
        Differences {
            keys: Vec::new(),
            ops: Vec::new(),
            failed: None,
        }
    }

    /// The operations, or the error of a value that did not encode.
    pub fn finish(self) -> Result<Vec<JsonPatchOp>, serde_json::Error> {
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.ops),
        }
    }

    /// The JSON pointer of the value being compared.
    fn path(&self) -> String {
        let mut path = String::new();
        for key in &self.keys {
            push_token(&mut path, key);
        }
        path
    }

    fn encode(&mut self, value: &impl Serialize) -> Value {
        serde_json::to_value(value).unwrap_or_else(|e| {
            self.failed.get_or_insert(e);
            Value::Null
        })
    }

    /// `replace` of the value being compared.
    pub fn replace(&mut self, after: &impl Serialize) {
        let value = self.encode(after);
        self.ops.push(JsonPatchOp::Replace {
            path: self.path(),
            value,
        });
    }

    /// Compares a member of an object (`key`) that is written when `before_present` /
    /// `after_present`: removed, added, or compared below.
    pub fn member<T: Difference>(
        &mut self,
        key: &'a str,
        before: &'a T,
        before_present: bool,
        after: &'a T,
        after_present: bool,
    ) {
        if !before_present && !after_present {
            return;
        }
        self.keys.push(key);
        match (before_present, after_present) {
            (true, true) => before.difference(after, self),
            (true, false) => {
                let path = self.path();
                self.ops.push(JsonPatchOp::Remove { path });
            }
            _ => {
                let value = self.encode(after);
                let path = self.path();
                self.ops.push(JsonPatchOp::Add { path, value });
            }
        }
        self.keys.pop();
    }

    /// The members a type keeps as JSON (its unknown fields), compared as [`diff`](super::diff)
    /// compares objects.
    pub fn members(&mut self, before: &Map<String, Value>, after: &Map<String, Value>) {
        if before.is_empty() && after.is_empty() {
            return;
        }
        let mut path = self.path();
        diff_members(before, after, &mut path, &mut self.ops);
    }
}

/// A type whose values find their own difference: the JSON Patch that turns the encoding of
/// `self` into the encoding of `after`, with the same effect as [`diff`](super::diff) of the
/// two encodings (objects compared member by member, anything else replaced whole when it
/// differs). The types `capi-ext generate types` writes implement it; a typed patch on such a
/// type answers with it rather than encoding the template twice.
///
/// ```
/// use capi_ext::patches::{Difference, Differences};
/// use capi_ext::hooks::v1alpha1::JsonPatchOp;
/// use std::collections::BTreeMap;
///
/// let before = BTreeMap::from([("a".to_string(), 1), ("b".to_string(), 2)]);
/// let after = BTreeMap::from([("a".to_string(), 1), ("c".to_string(), 3)]);
/// let mut found = Differences::new();
/// before.difference(&after, &mut found);
/// assert_eq!(found.finish().unwrap(), [
///     JsonPatchOp::Remove { path: "/b".into() },
///     JsonPatchOp::Add { path: "/c".into(), value: 3.into() },
/// ]);
/// ```
pub trait Difference: Serialize {
    /// Adds the operations that turn `self` into `after`, at `out`'s pointer.
    fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>);

    /// Whether a struct field of this type is left out of its encoding: `None`, or (for the
    /// types Go's encoder omits when empty, as the generated types declare them) empty.
    fn is_omitted(&self) -> bool {
        false
    }
}

/// Compared whole, replaced when different.
macro_rules! leaf {
    ($($ty:ty),* $(,)?) => {$(
        impl Difference for $ty {
            fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
                if self != after {
                    out.replace(after);
                }
            }
        }
    )*};
}

leaf!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
leaf!(crate::schema::IntOrString);

impl Difference for String {
    fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
        if self != after {
            out.replace(after);
        }
    }
    fn is_omitted(&self) -> bool {
        self.is_empty()
    }
}

/// A list is replaced whole when it differs, as [`diff`](super::diff) replaces lists.
impl<T: Serialize + PartialEq> Difference for Vec<T> {
    fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
        if self != after {
            out.replace(after);
        }
    }
    fn is_omitted(&self) -> bool {
        self.is_empty()
    }
}

/// `None` is `null` where it is written at all.
impl<T: Difference> Difference for Option<T> {
    fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
        match (self, after) {
            (Some(before), Some(after)) => before.difference(after, out),
            (None, None) => {}
            _ => out.replace(after),
        }
    }
    fn is_omitted(&self) -> bool {
        self.is_none()
    }
}

/// An object: member by member.
impl<V: Difference> Difference for BTreeMap<String, V> {
    fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
        for (key, old) in self {
            match after.get(key) {
                Some(new) => out.member(key, old, true, new, true),
                None => out.member(key, old, true, old, false),
            }
        }
        for (key, new) in after {
            if !self.contains_key(key) {
                out.member(key, new, false, new, true);
            }
        }
    }
    fn is_omitted(&self) -> bool {
        self.is_empty()
    }
}

impl Difference for Map<String, Value> {
    fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
        out.members(self, after);
    }
}

impl Difference for Value {
    fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
        match (self, after) {
            (Value::Object(before), Value::Object(after)) => out.members(before, after),
            _ if self == after => {}
            _ => out.replace(after),
        }
    }
}

/// `Difference` for a struct of `capi-ext generate types`: each named field compared as a
/// member of the object (`required` fields are always written; others are left out as their
/// type's [`Difference::is_omitted`] says, which matches the `skip_serializing_if` the
/// generator writes), then the map of unknown fields. `__difference!(@leaf Type)` compares a
/// type whole (the generated enums). Not a public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __difference {
    (@leaf $ty:ident) => {
        impl $crate::patches::Difference for $ty {
            fn difference<'a>(&'a self, after: &'a Self, out: &mut $crate::patches::Differences<'a>) {
                if self != after {
                    out.replace(after);
                }
            }
            fn is_omitted(&self) -> bool {
                self.is_empty()
            }
        }
    };
    ($ty:ident, $unknown:ident, { $($field:ident: $key:literal $($flag:ident)?),* $(,)? }) => {
        impl $crate::patches::Difference for $ty {
            fn difference<'a>(&'a self, after: &'a Self, out: &mut $crate::patches::Differences<'a>) {
                $(out.member(
                    $key,
                    &self.$field,
                    $crate::__difference!(@present self.$field $(, $flag)?),
                    &after.$field,
                    $crate::__difference!(@present after.$field $(, $flag)?),
                );)*
                out.members(&self.$unknown, &after.$unknown);
            }
        }
    };
    (@present $value:expr, required) => { true };
    (@present $value:expr, in_place) => { true };
    (@present $value:expr $(, $flag:ident)?) => {
        !$crate::patches::Difference::is_omitted(&$value)
    };
}
