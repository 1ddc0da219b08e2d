//! [`LazyValue`]: a JSON value of a request kept as the text CAPI sent until a handler reads it.
//! A GeneratePatches request carries every template of the Cluster (tens of KiB each, the
//! [`TemplateObject`]s) and each template's variables, and a handler usually patches a few
//! templates and reads a few variables: decoding each into a tree first was most of the
//! server's CPU. Reading a top-level string (a template's `kind` and `apiVersion`, what a
//! selector looks at) or the top-level keys scans the text; decoding into a type reads the
//! text (no tree); the first read as a `Value` decodes the whole value once.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// A JSON value as CAPI sent it: the text, decoded into a [`Value`] on first read (through
/// `Deref`) and edited as one (through `DerefMut`, which drops the text). Template objects
/// ([`TemplateObject`]) and variable values ([`Variable::value`](super::Variable::value)) are
/// kept this way.
///
/// It reads as a `Value` wherever one is expected:
///
/// ```
/// use capi_ext::hooks::v1alpha1::GeneratePatchesRequestItem;
///
/// let item: GeneratePatchesRequestItem = serde_json::from_str(
///     r#"{"uid": "1", "object": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
///         "kind": "DockerMachineTemplate", "spec": {"template": {"spec": {}}}}}"#,
/// )
/// .unwrap();
/// assert_eq!(item.object.kind(), "DockerMachineTemplate"); // no decoding
/// assert!(!item.object.is_decoded());
/// assert!(item.object["spec"]["template"].is_object()); // decodes once
/// assert!(item.object.is_decoded());
/// ```
pub struct LazyValue {
    /// The text as received; `None` once the value was edited or when it was built from a
    /// `Value`.
    raw: Option<Box<RawValue>>,
    /// The decoded value; always set when `raw` is `None`.
    value: OnceLock<Value>,
}

/// A template of a topology request (`item.object`): a [`LazyValue`] whose `kind` and
/// `apiVersion` are read from the text.
pub type TemplateObject = LazyValue;

impl LazyValue {
    /// A value built from a `Value` (as a test or a request builder has it).
    pub fn new(value: Value) -> Self {
        LazyValue {
            raw: None,
            value: OnceLock::from(value),
        }
    }

    /// The JSON text CAPI sent, when the value has not been edited since.
    pub fn raw(&self) -> Option<&str> {
        self.raw.as_deref().map(RawValue::get)
    }

    /// Whether the value has been decoded into a `Value` (read or edited).
    pub fn is_decoded(&self) -> bool {
        self.value.get().is_some()
    }

    /// The object's `kind`, read without decoding it (`""` when absent or not a string).
    pub fn kind(&self) -> Cow<'_, str> {
        self.top_level_string("kind")
    }

    /// The object's `apiVersion`, read without decoding it (`""` when absent or not a
    /// string).
    pub fn api_version(&self) -> Cow<'_, str> {
        self.top_level_string("apiVersion")
    }

    /// Whether the value is an object with a member `key`, read without decoding it.
    pub fn has_key(&self, key: &str) -> bool {
        self.keys()
            .is_some_and(|keys| keys.iter().any(|k| k == key))
    }

    /// The keys of the value's members when it is an object (`None` otherwise), read without
    /// decoding it, in the order of the text (of the map once decoded).
    pub fn keys(&self) -> Option<Vec<Cow<'_, str>>> {
        match (self.value.get(), &self.raw) {
            (None, Some(raw)) => crate::json_text::top_level_keys(raw.get()),
            _ => self
                .value()
                .as_object()
                .map(|map| map.keys().map(|k| Cow::Borrowed(k.as_str())).collect()),
        }
    }

    /// Decodes the value into `T`: straight from the text when it has not been decoded yet
    /// (no intermediate `Value`), else from the value.
    pub fn decode<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        match (self.value.get(), &self.raw) {
            (None, Some(raw)) => serde_json::from_str(raw.get()),
            _ => T::deserialize(self.value()),
        }
    }

    /// The decoded value, if it has been decoded.
    pub(crate) fn decoded(&self) -> Option<&Value> {
        self.value.get()
    }

    /// Records `value` as the decoded value (the caller knows it equals the text); nothing
    /// when it is decoded already.
    pub(crate) fn set_decoded(&self, value: Value) {
        let _ = self.value.set(value);
    }

    /// The decoded value.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            let raw = self
                .raw
                .as_ref()
                .expect("a LazyValue holds text or a value");
            serde_json::from_str(raw.get()).expect("RawValue holds valid JSON")
        })
    }

    /// The decoded value, owned.
    pub fn into_value(mut self) -> Value {
        self.value();
        self.value.take().expect("decoded above")
    }

    fn top_level_string(&self, key: &str) -> Cow<'_, str> {
        match (self.value.get(), &self.raw) {
            (None, Some(raw)) => {
                crate::json_text::top_level_string(raw.get(), key).unwrap_or_default()
            }
            _ => Cow::Borrowed(
                self.value()
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
        }
    }
}

impl Deref for LazyValue {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl DerefMut for LazyValue {
    fn deref_mut(&mut self) -> &mut Value {
        self.value();
        self.raw = None;
        self.value.get_mut().expect("decoded above")
    }
}

/// `null`, as an absent member decodes.
impl Default for LazyValue {
    fn default() -> Self {
        LazyValue::new(Value::Null)
    }
}

/// Anything a `Value` is made from (`json!(…)`, `42`, `"text"`, a `Vec`, a `Map`): in a test
/// or a request builder, `variable.value = 42.into()`. The other way is
/// [`LazyValue::into_value`].
impl<T: Into<Value>> From<T> for LazyValue {
    fn from(value: T) -> Self {
        LazyValue::new(value.into())
    }
}

impl Clone for LazyValue {
    fn clone(&self) -> Self {
        LazyValue {
            raw: self.raw.clone(),
            value: self.value.clone(),
        }
    }
}

impl PartialEq for LazyValue {
    fn eq(&self, other: &Self) -> bool {
        match (self.raw(), other.raw()) {
            (Some(a), Some(b)) if a == b => true,
            _ => self.value() == other.value(),
        }
    }
}

impl PartialEq<Value> for LazyValue {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl fmt::Debug for LazyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.value(), f)
    }
}

/// Encodes the value (keys in the order a `Value` keeps them), so a request read and written
/// again prints as one built from values does.
impl Serialize for LazyValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LazyValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(LazyValue {
            raw: Some(Box::<RawValue>::deserialize(deserializer)?),
            value: OnceLock::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn received(text: &str) -> LazyValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn reads_kind_without_decoding_and_decodes_once_on_first_read() {
        let object = received(r#"{"apiVersion": "a/v1", "kind": "K", "spec": {"x": 1}}"#);
        assert_eq!((&*object.api_version(), &*object.kind()), ("a/v1", "K"));
        assert!(!object.is_decoded());
        assert_eq!(object["spec"]["x"], 1);
        assert!(object.is_decoded());
        assert!(object.raw().is_some(), "text kept until edited");
    }

    #[test]
    fn an_edit_drops_the_text_and_is_what_is_encoded() {
        let mut object = received(r#"{"kind": "K", "spec": {}}"#);
        object["spec"]["x"] = json!(2);
        assert_eq!(object.raw(), None);
        assert_eq!(
            serde_json::to_value(&object).unwrap(),
            json!({"kind": "K", "spec": {"x": 2}})
        );
        object["kind"] = json!("L");
        assert_eq!(object.kind(), "L");
    }

    #[test]
    fn lists_keys_from_the_text_or_the_value_alike() {
        let sent = received(r#"{"cluster": {"name": "c"}, "machineDeployment": {}}"#);
        assert_eq!(sent.keys().unwrap(), ["cluster", "machineDeployment"]);
        assert!(sent.has_key("cluster") && !sent.has_key("name"));
        assert!(!sent.is_decoded());
        let built = LazyValue::from(json!({"b": 1, "a": 2}));
        assert_eq!(built.keys().unwrap(), ["a", "b"]);
        assert_eq!(received("[1]").keys(), None);
        assert_eq!(LazyValue::from(42).keys(), None);
        assert_eq!(LazyValue::from("text"), json!("text"));
    }

    #[test]
    fn decodes_into_a_type_from_the_text_or_the_value_alike() {
        #[derive(Deserialize, PartialEq, Debug)]
        struct Spec {
            x: i64,
        }
        #[derive(Deserialize, PartialEq, Debug)]
        struct Object {
            spec: Spec,
        }
        let object = received(r#"{"spec": {"x": 3}}"#);
        let from_text: Object = object.decode().unwrap();
        let _ = object.value();
        assert_eq!(from_text, object.decode().unwrap());
        assert_eq!(from_text.spec.x, 3);
    }

    #[test]
    fn equal_by_content_and_encoded_as_values_are() {
        let spaced = received(r#"{ "b": 1, "a": [1, 2] }"#);
        let built = LazyValue::new(json!({"a": [1, 2], "b": 1}));
        assert_eq!(spaced, built);
        assert_eq!(spaced, json!({"a": [1, 2], "b": 1}));
        assert_eq!(
            serde_json::to_string(&spaced).unwrap(),
            serde_json::to_string(&built).unwrap()
        );
        assert_eq!(LazyValue::default(), LazyValue::new(Value::Null));
        assert_eq!(received("null"), LazyValue::default());
    }
}
