//! Patches as CAPI carries them: a `patchType` and the patch document, base64-encoded.
//!
//! In Rust a patch is a plain value ([`Patch::Json`] with [`JsonPatchOp`]s, or
//! [`Patch::Merge`] with a JSON merge document); the base64 encoding is applied on the wire
//! only.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The kind of a patch document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PatchType {
    /// RFC 6902 JSON Patch.
    #[serde(rename = "JSONPatch")]
    JsonPatch,
    /// RFC 7386 JSON Merge Patch.
    #[serde(rename = "JSONMergePatch")]
    JsonMergePatch,
}

/// One RFC 6902 operation. Paths are JSON pointers rooted at the whole object
/// (e.g. `/spec/template/spec/version`); build them with [`pointer`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum JsonPatchOp {
    /// Adds (or replaces an object member).
    Add {
        /// Target.
        path: String,
        /// Value to add.
        value: Value,
    },
    /// Removes.
    Remove {
        /// Target.
        path: String,
    },
    /// Replaces an existing value.
    Replace {
        /// Target.
        path: String,
        /// New value.
        value: Value,
    },
    /// Moves a value.
    Move {
        /// Source.
        from: String,
        /// Target.
        path: String,
    },
    /// Copies a value.
    Copy {
        /// Source.
        from: String,
        /// Target.
        path: String,
    },
    /// Fails the patch unless the value matches.
    Test {
        /// Target.
        path: String,
        /// Expected value.
        value: Value,
    },
}

impl JsonPatchOp {
    /// The JSON pointer the operation changes (its target; not a move's or copy's `from`).
    ///
    /// ```
    /// use capi_ext::hooks::v1alpha1::JsonPatchOp;
    ///
    /// assert_eq!(JsonPatchOp::Remove { path: "/spec/a".into() }.path(), "/spec/a");
    /// ```
    pub fn path(&self) -> &str {
        match self {
            JsonPatchOp::Add { path, .. }
            | JsonPatchOp::Remove { path }
            | JsonPatchOp::Replace { path, .. }
            | JsonPatchOp::Move { path, .. }
            | JsonPatchOp::Copy { path, .. }
            | JsonPatchOp::Test { path, .. } => path,
        }
    }
}

/// A patch with its type. Serializes as `{"patchType": ..., "patch": "<base64>"}`.
///
/// ```
/// use capi_ext::hooks::v1alpha1::{JsonPatchOp, Patch};
/// use serde_json::json;
///
/// let patch = Patch::json()
///     .add("/spec/template/spec/customImage", json!("kindest/node:v1.33.0"));
/// let wire = serde_json::to_value(&patch).unwrap();
/// assert_eq!(wire["patchType"], "JSONPatch");
/// assert_eq!(
///     wire["patch"],
///     "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvdGVtcGxhdGUvc3BlYy9jdXN0b21JbWFnZSIsInZhbHVlIjoia2luZGVzdC9ub2RlOnYxLjMzLjAifV0="
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Patch {
    /// An RFC 6902 JSON Patch (an empty list is a no-op, sent as `W10=`).
    Json(Vec<JsonPatchOp>),
    /// An RFC 7386 merge patch document (`{}` is a no-op).
    Merge(Value),
}

impl Default for Patch {
    fn default() -> Self {
        Patch::Json(Vec::new())
    }
}

impl Patch {
    /// An empty JSON Patch, to extend with [`Patch::add`], [`Patch::replace`], [`Patch::remove`].
    pub fn json() -> Self {
        Patch::Json(Vec::new())
    }

    /// A merge patch.
    pub fn merge(document: Value) -> Self {
        Patch::Merge(document)
    }

    /// The patch type.
    pub fn patch_type(&self) -> PatchType {
        match self {
            Patch::Json(_) => PatchType::JsonPatch,
            Patch::Merge(_) => PatchType::JsonMergePatch,
        }
    }

    /// Whether applying the patch changes nothing.
    pub fn is_noop(&self) -> bool {
        match self {
            Patch::Json(ops) => ops.is_empty(),
            Patch::Merge(doc) => doc.as_object().is_some_and(|o| o.is_empty()),
        }
    }

    fn push(mut self, op: JsonPatchOp) -> Self {
        match &mut self {
            Patch::Json(ops) => ops.push(op),
            Patch::Merge(_) => panic!("JSON Patch operations cannot be added to a merge patch"),
        }
        self
    }

    /// Appends an `add` operation. Panics on a merge patch.
    pub fn add(self, path: impl Into<String>, value: impl Into<Value>) -> Self {
        self.push(JsonPatchOp::Add {
            path: path.into(),
            value: value.into(),
        })
    }

    /// Appends a `replace` operation. Panics on a merge patch.
    pub fn replace(self, path: impl Into<String>, value: impl Into<Value>) -> Self {
        self.push(JsonPatchOp::Replace {
            path: path.into(),
            value: value.into(),
        })
    }

    /// Appends a `remove` operation. Panics on a merge patch.
    pub fn remove(self, path: impl Into<String>) -> Self {
        self.push(JsonPatchOp::Remove { path: path.into() })
    }

    /// The patch document as JSON bytes (before base64).
    pub fn document(&self) -> Vec<u8> {
        match self {
            Patch::Json(ops) => serde_json::to_vec(ops),
            Patch::Merge(doc) => serde_json::to_vec(doc),
        }
        .expect("patch documents always serialize")
    }

    /// Reads a patch from its type and document bytes.
    pub fn from_document(
        patch_type: PatchType,
        document: &[u8],
    ) -> Result<Self, serde_json::Error> {
        Ok(match patch_type {
            PatchType::JsonPatch => Patch::Json(serde_json::from_slice(document)?),
            PatchType::JsonMergePatch => Patch::Merge(serde_json::from_slice(document)?),
        })
    }
}

/// Builds a JSON pointer from path segments, escaping `~` and `/` (RFC 6901), so that label
/// keys such as `example.com/owner` can be addressed.
///
/// ```
/// use capi_ext::hooks::v1alpha1::pointer;
/// assert_eq!(pointer(["metadata", "labels", "example.com/owner"]), "/metadata/labels/example.com~1owner");
/// ```
pub fn pointer<'a>(segments: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for seg in segments {
        out.push('/');
        push_escaped_token(&mut out, seg);
    }
    out
}

/// One reference token of a JSON pointer escaped (RFC 6901: `~` as `~0`, then `/` as `~1`);
/// the one escaping every part of capi-ext uses.
///
/// ```
/// use capi_ext::hooks::v1alpha1::{escape_token, unescape_token};
/// assert_eq!(escape_token("a/b~c"), "a~1b~0c");
/// assert_eq!(unescape_token("a~1b~0c"), "a/b~c");
/// assert_eq!(unescape_token("~01"), "~1");
/// ```
pub fn escape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains(['~', '/']) {
        let mut out = String::with_capacity(token.len() + 2);
        push_escaped_token(&mut out, token);
        out.into()
    } else {
        token.into()
    }
}

/// Appends `token` escaped as [`escape_token`] escapes it, in one pass and with no copy of its
/// own (pointers are built on hot paths: the difference of every typed patch).
pub(crate) fn push_escaped_token(out: &mut String, token: &str) {
    let mut rest = token;
    while let Some(at) = rest.find(['~', '/']) {
        out.push_str(&rest[..at]);
        out.push_str(if rest.as_bytes()[at] == b'~' {
            "~0"
        } else {
            "~1"
        });
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

/// One reference token of a JSON pointer unescaped (`~1` as `/`, then `~0` as `~`).
pub fn unescape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PatchWire {
    pub patch_type: PatchType,
    #[serde(default, with = "base64_bytes")]
    pub patch: Option<Vec<u8>>,
}

impl Serialize for Patch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        PatchWire {
            patch_type: self.patch_type(),
            patch: Some(self.document()),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Patch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = PatchWire::deserialize(deserializer)?;
        let bytes = wire
            .patch
            .ok_or_else(|| D::Error::custom("patch: missing patch document"))?;
        Patch::from_document(wire.patch_type, &bytes).map_err(|e| {
            D::Error::custom(format!(
                "patch: the base64-decoded document is not a valid {:?}: {e}",
                wire.patch_type
            ))
        })
    }
}

/// Serde helpers for Go `[]byte` fields: standard base64 with padding, `null` for nil.
pub(crate) mod base64_bytes {
    use super::*;

    pub fn serialize<S: Serializer>(
        bytes: &Option<Vec<u8>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(b) => serializer.serialize_str(&STANDARD.encode(b)),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        match Option::<String>::deserialize(deserializer)? {
            None => Ok(None),
            Some(s) => STANDARD
                .decode(s.as_bytes())
                .map(Some)
                .map_err(|e| D::Error::custom(format!("patch: not standard base64: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_json_patch_is_w10() {
        let wire = serde_json::to_value(Patch::json()).unwrap();
        assert_eq!(wire, json!({"patchType": "JSONPatch", "patch": "W10="}));
        assert!(Patch::json().is_noop());
    }

    #[test]
    fn round_trips_both_types() {
        for patch in [
            Patch::json()
                .add("/a", 1)
                .remove("/b")
                .replace("/c", json!({"d": true})),
            Patch::merge(json!({"spec": {"x": 1}})),
        ] {
            let text = serde_json::to_string(&patch).unwrap();
            assert_eq!(serde_json::from_str::<Patch>(&text).unwrap(), patch);
        }
    }

    #[test]
    fn rejects_bad_documents_with_a_reason() {
        let err = serde_json::from_value::<Patch>(
            json!({"patchType": "JSONPatch", "patch": "not base64!"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("base64"), "{err}");
        let err = serde_json::from_value::<Patch>(
            json!({"patchType": "JSONPatch", "patch": STANDARD.encode("{}")}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("not a valid JsonPatch"), "{err}");
        let err =
            serde_json::from_value::<Patch>(json!({"patchType": "Strategic", "patch": "W10="}))
                .unwrap_err();
        assert!(err.to_string().contains("unknown variant"), "{err}");
    }
}
