//! The template a patch function edits: a JSON object with pointer-based setters that create
//! what is missing, so a patch says what it wants (`set("/spec/template/spec/version", ..)`)
//! and the [`PatchSet`](super::PatchSet) computes the JSON Patch CAPI applies.

use crate::hooks::v1alpha1::{JsonPatchOp, TemplateObject, push_escaped_token, unescape_token};
use crate::json_text::same_text;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::OnceLock;

/// Why an edit could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: {reason}")]
pub struct EditError {
    /// The JSON pointer that was being edited.
    pub pointer: String,
    /// What was in the way.
    pub reason: String,
}

/// A template object under edit.
///
/// ```
/// use capi_ext::patches::Template;
/// use serde_json::json;
///
/// let mut t = Template::new(json!({"kind": "KubeadmControlPlaneTemplate", "spec": {}}));
/// t.set("/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository", "registry.example.com").unwrap();
/// t.push("/spec/template/spec/kubeadmConfigSpec/files", json!({"path": "/etc/motd"})).unwrap();
/// t.label("example.com/team", "a").unwrap();
/// assert_eq!(t.get("/spec/template/spec/kubeadmConfigSpec/files/0/path"), Some(&json!("/etc/motd")));
/// assert_eq!(t.object()["metadata"]["labels"]["example.com/team"], "a");
/// ```
#[derive(Debug, Clone)]
pub struct Template {
    /// The template as CAPI sent it: its text, decoded on first read.
    sent: TemplateObject,
    /// The template as the edits left it; `None` until the first edit (or while the only
    /// edit is `typed`).
    edited: Option<Value>,
    /// The edit of a typed patch that found its own difference, while no other edit followed.
    typed: Option<TypedEdit>,
}

/// A typed patch's edit kept as its JSON Patch from the template as sent; the object it
/// makes is built only when something reads the template.
#[derive(Debug, Clone)]
struct TypedEdit {
    ops: Vec<JsonPatchOp>,
    object: OnceLock<Value>,
}

impl PartialEq for Template {
    fn eq(&self, other: &Self) -> bool {
        self.object() == other.object()
    }
}

/// The deepest pointer an edit accepts: the nesting serde_json reads (the template came in
/// through it, and an answer nested deeper could not be read back by the same decoder).
/// Deeper edits would build objects whose drop and encoding recurse past the stack.
///
/// ```
/// use capi_ext::patches::{MAX_POINTER_DEPTH, Template};
///
/// let mut t = Template::new(serde_json::json!({}));
/// assert!(t.set(&"/a".repeat(MAX_POINTER_DEPTH), 1).is_ok());
/// assert!(t.set(&"/a".repeat(MAX_POINTER_DEPTH + 1), 1).is_err());
/// ```
pub const MAX_POINTER_DEPTH: usize = 128;

/// Splits a JSON pointer into unescaped tokens (RFC 6901).
fn tokens(pointer: &str) -> Result<Vec<String>, EditError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(EditError {
            pointer: pointer.into(),
            reason: "a JSON pointer starts with `/` (e.g. /spec/template/spec)".into(),
        });
    };
    let depth = pointer.bytes().filter(|b| *b == b'/').count();
    if depth > MAX_POINTER_DEPTH {
        return Err(EditError {
            pointer: pointer.chars().take(80).chain("…".chars()).collect(),
            reason: format!(
                "{depth} levels deep; an edit goes at most {MAX_POINTER_DEPTH} levels into a template (the nesting a JSON document may have to be read back)"
            ),
        });
    }
    Ok(rest
        .split('/')
        .map(|t| unescape_token(t).into_owned())
        .collect())
}

impl Template {
    /// Wraps a template object.
    pub fn new(object: Value) -> Self {
        Template {
            sent: TemplateObject::new(object),
            edited: None,
            typed: None,
        }
    }

    /// The template of a request item: kept as the text CAPI sent until a patch reads or
    /// edits it, so a template no patch edits costs no decoding and no difference.
    pub fn from_sent(object: &TemplateObject) -> Self {
        Template {
            sent: object.clone(),
            edited: None,
            typed: None,
        }
    }

    /// The object as it is now.
    pub fn object(&self) -> &Value {
        if let Some(edited) = &self.edited {
            return edited;
        }
        match &self.typed {
            Some(typed) => typed
                .object
                .get_or_init(|| apply_changes(self.sent.value().clone(), &typed.ops)),
            None => self.sent.value(),
        }
    }

    /// The object, to edit directly.
    pub fn object_mut(&mut self) -> &mut Value {
        if let Some(typed) = self.typed.take() {
            let object = typed
                .object
                .into_inner()
                .unwrap_or_else(|| apply_changes(self.sent.value().clone(), &typed.ops));
            self.edited = Some(object);
        }
        let sent = &self.sent;
        self.edited.get_or_insert_with(|| sent.value().clone())
    }

    /// The object, consumed.
    pub fn into_object(mut self) -> Value {
        if self.typed.is_some() {
            self.object_mut();
        }
        match self.edited {
            Some(object) => object,
            None => self.sent.into_value(),
        }
    }

    /// The JSON Patch from the template as sent to the template now: empty when it was not
    /// edited (see [`diff`]).
    pub fn changes(&self) -> Vec<JsonPatchOp> {
        match (&self.edited, &self.typed) {
            (Some(now), _) => diff(self.sent.value(), now),
            (None, Some(typed)) => typed.ops.clone(),
            (None, None) => Vec::new(),
        }
    }

    /// [`Self::changes`], consuming the template.
    pub fn into_changes(self) -> Vec<JsonPatchOp> {
        match (self.edited, self.typed) {
            (Some(now), _) => diff(self.sent.value(), &now),
            (None, Some(typed)) => typed.ops,
            (None, None) => Vec::new(),
        }
    }

    /// The template's `kind` (read without decoding an unedited template).
    pub fn kind(&self) -> &str {
        self.top_level_string("kind", TemplateObject::kind)
    }

    /// The template's `apiVersion` (read without decoding an unedited template).
    pub fn api_version(&self) -> &str {
        self.top_level_string("apiVersion", TemplateObject::api_version)
    }

    fn top_level_string<'a>(
        &'a self,
        key: &str,
        scan: fn(&'a TemplateObject) -> Cow<'a, str>,
    ) -> &'a str {
        let unchanged = match &self.typed {
            Some(typed) => !typed.ops.iter().any(|op| op.path().get(1..) == Some(key)),
            None => true,
        };
        if self.edited.is_none()
            && unchanged
            && let Cow::Borrowed(text) = scan(&self.sent)
        {
            return text;
        }
        self.object()
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The text CAPI sent, while the template is unedited and not yet decoded.
    pub(crate) fn unedited_text(&self) -> Option<&str> {
        match (&self.edited, &self.typed, self.sent.decoded()) {
            (None, None, None) => self.sent.raw(),
            _ => None,
        }
    }

    /// Whether `typed` encodes as the text CAPI sent (see [`Self::is_sent`]), while the
    /// template is unedited and not yet decoded.
    pub(crate) fn encodes_as_sent(&self, typed: &impl serde::Serialize) -> bool {
        let Some(text) = self.unedited_text() else {
            return false;
        };
        let mut encoded = Vec::with_capacity(text.len());
        serde_json::to_writer(&mut encoded, typed).is_ok() && same_text(&encoded, text)
    }

    /// Records a typed patch's edit as its JSON Patch from the template as sent (which
    /// [`Self::encodes_as_sent`] said the typed value encodes as).
    pub(crate) fn set_changes(&mut self, ops: Vec<JsonPatchOp>) {
        debug_assert!(self.edited.is_none() && self.typed.is_none());
        self.typed = Some(TypedEdit {
            ops,
            object: OnceLock::new(),
        });
    }

    /// Whether `object` is the template as sent: its text compared first (Kubernetes' and
    /// serde_json's encoders agree on most objects, but for Go's escapes of `<`, `>` and `&`,
    /// which the comparison reads), else the decoded values.
    pub(crate) fn is_sent(&self, object: &Value) -> bool {
        if let (None, Some(text)) = (self.sent.decoded(), self.sent.raw()) {
            // Sized for the text: the usual answer is "the same", so it fits without growing.
            let mut encoded = Vec::with_capacity(text.len());
            if serde_json::to_writer(&mut encoded, object).is_ok() && same_text(&encoded, text) {
                return true;
            }
        }
        self.sent.value() == object
    }

    /// Records an edit made whole: `sent` equals the template as sent ([`Self::is_sent`]),
    /// `now` is the template after the edit.
    pub(crate) fn set_edited(&mut self, sent: Value, now: Value) {
        self.sent.set_decoded(sent);
        self.edited = Some(now);
    }

    /// The value at a JSON pointer, if present.
    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.object().pointer(pointer)
    }

    /// The parent container of the last token, creating missing objects on the way.
    fn parent(&mut self, pointer: &str) -> Result<(&mut Value, String), EditError> {
        let mut tokens = tokens(pointer)?;
        let Some(last) = tokens.pop() else {
            return Err(EditError {
                pointer: pointer.into(),
                reason: "the whole object cannot be replaced; name a field".into(),
            });
        };
        let mut current = self.object_mut();
        let mut walked = String::new();
        for token in tokens {
            walked.push('/');
            push_escaped_token(&mut walked, &token);
            if current.is_null() {
                *current = Value::Object(Map::new());
            }
            current = match current {
                Value::Object(map) => map.entry(token).or_insert(Value::Null),
                Value::Array(items) => {
                    let len = items.len();
                    let index = index(&token, len, &walked)?;
                    items.get_mut(index).ok_or_else(|| EditError {
                        pointer: walked.clone(),
                        reason: format!("index {index} is past the end of a list of {len}"),
                    })?
                }
                other => {
                    return Err(EditError {
                        pointer: walked,
                        reason: format!("is {}, not an object", kind_of(other)),
                    });
                }
            };
        }
        match current {
            Value::Null => *current = Value::Object(Map::new()),
            Value::Object(_) | Value::Array(_) => {}
            other => {
                return Err(EditError {
                    pointer: if walked.is_empty() {
                        "/".into()
                    } else {
                        walked
                    },
                    reason: format!("is {}, not an object", kind_of(other)),
                });
            }
        }
        Ok((current, last))
    }

    /// Sets the value at a JSON pointer, creating missing parent objects; a list index
    /// replaces that element and `-` appends.
    pub fn set(&mut self, pointer: &str, value: impl Into<Value>) -> Result<(), EditError> {
        let value = value.into();
        let (parent, last) = self.parent(pointer)?;
        match parent {
            Value::Object(map) => {
                map.insert(last, value);
                Ok(())
            }
            Value::Array(items) if last == "-" => {
                items.push(value);
                Ok(())
            }
            Value::Array(items) => {
                let i = index(&last, items.len(), pointer)?;
                match items.get_mut(i) {
                    Some(slot) => {
                        *slot = value;
                        Ok(())
                    }
                    None => Err(EditError {
                        pointer: pointer.into(),
                        reason: format!("index {i} is past the end of a list of {}", items.len()),
                    }),
                }
            }
            other => Err(EditError {
                pointer: pointer.into(),
                reason: format!("the parent is {}, not an object or a list", kind_of(other)),
            }),
        }
    }

    /// Appends to the list at a JSON pointer, creating an empty list when it is absent.
    pub fn push(&mut self, pointer: &str, value: impl Into<Value>) -> Result<(), EditError> {
        let value = value.into();
        let (parent, last) = self.parent(pointer)?;
        let slot = match parent {
            Value::Object(map) => map.entry(last).or_insert_with(|| Value::Array(Vec::new())),
            other => {
                return Err(EditError {
                    pointer: pointer.into(),
                    reason: format!("the parent is {}, not an object", kind_of(other)),
                });
            }
        };
        match slot {
            Value::Array(items) => {
                items.push(value);
                Ok(())
            }
            other => Err(EditError {
                pointer: pointer.into(),
                reason: format!("is {}, not a list", kind_of(other)),
            }),
        }
    }

    /// Removes the value at a JSON pointer; `None` when there was none.
    pub fn remove(&mut self, pointer: &str) -> Option<Value> {
        let (parent, last) = pointer.rsplit_once('/')?;
        let last = unescape_token(last);
        self.object().pointer(pointer)?;
        match self.object_mut().pointer_mut(parent)? {
            Value::Object(map) => map.remove(last.as_ref()),
            Value::Array(items) => {
                let i: usize = last.parse().ok()?;
                (i < items.len()).then(|| items.remove(i))
            }
            _ => None,
        }
    }

    /// Merges a document into the object as an RFC 7386 JSON merge patch (`null` removes).
    pub fn merge(&mut self, document: &Value) {
        merge(self.object_mut(), document);
    }

    /// Removes every empty list (`[]`) from the template, at any depth: what Go's encoder
    /// does to a list field declared `omitempty` (every list of Cluster API's v1beta2 types
    /// is), so an extension ported from Go answers with the objects Go's answers make. A
    /// template a typed patch edited is not built for it: the lists are found in the text
    /// CAPI sent and in the typed patch's changes.
    ///
    /// ```
    /// use capi_ext::patches::Template;
    /// use serde_json::json;
    ///
    /// let mut t = Template::new(json!({"spec": {"images": [], "files": [{"args": []}], "name": "a"}}));
    /// t.remove_empty_lists();
    /// assert_eq!(t.object(), &json!({"spec": {"files": [{}], "name": "a"}}));
    /// ```
    pub fn remove_empty_lists(&mut self) {
        if self.edited.is_none()
            && let Some(text) = self.sent.raw()
            && let Some(lists) = crate::json_text::empty_lists(text)
        {
            match &mut self.typed {
                Some(typed) => {
                    remove_empty_lists_from_changes(&mut typed.ops, lists);
                    typed.object = OnceLock::new();
                    return;
                }
                None if lists.is_empty() => return,
                None => {}
            }
        }
        if has_empty_list(self.object()) {
            drop_empty_lists(self.object_mut());
        }
    }

    /// Sets a label on the template object's own metadata.
    pub fn label(&mut self, key: &str, value: &str) -> Result<(), EditError> {
        self.set(
            &crate::hooks::v1alpha1::pointer(["metadata", "labels", key]),
            value,
        )
    }

    /// Sets an annotation on the template object's own metadata.
    pub fn annotation(&mut self, key: &str, value: &str) -> Result<(), EditError> {
        self.set(
            &crate::hooks::v1alpha1::pointer(["metadata", "annotations", key]),
            value,
        )
    }
}

/// The changes of a typed edit made to also remove the empty lists: those of the template as
/// sent (`lists`, pointers) that no change replaces or removes, and those of the changes'
/// values.
fn remove_empty_lists_from_changes(ops: &mut Vec<JsonPatchOp>, lists: Vec<String>) {
    let covered = |list: &str, ops: &[JsonPatchOp]| {
        ops.iter().any(|op| {
            let path = op.path();
            list.strip_prefix(path)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    };
    let removals: Vec<JsonPatchOp> = lists
        .into_iter()
        .filter(|list| !covered(list, ops))
        .map(|path| JsonPatchOp::Remove { path })
        .collect();
    ops.retain_mut(|op| match op {
        JsonPatchOp::Add { value, .. } if value.as_array().is_some_and(Vec::is_empty) => false,
        JsonPatchOp::Replace { path, value } if value.as_array().is_some_and(Vec::is_empty) => {
            *op = JsonPatchOp::Remove {
                path: std::mem::take(path),
            };
            true
        }
        JsonPatchOp::Add { value, .. } | JsonPatchOp::Replace { value, .. } => {
            drop_empty_lists(value);
            true
        }
        _ => true,
    });
    ops.extend(removals);
}

fn has_empty_list(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .values()
            .any(|v| v.as_array().is_some_and(Vec::is_empty) || has_empty_list(v)),
        Value::Array(items) => items.iter().any(has_empty_list),
        _ => false,
    }
}

fn drop_empty_lists(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.as_array().is_some_and(Vec::is_empty));
            map.values_mut().for_each(drop_empty_lists);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_empty_lists),
        _ => {}
    }
}

/// `object` with the operations of a typed difference applied (adds and replaces of object
/// members, removals; their parents exist).
fn apply_changes(object: Value, ops: &[JsonPatchOp]) -> Value {
    let mut template = Template::new(object);
    for op in ops {
        match op {
            JsonPatchOp::Add { path, value } | JsonPatchOp::Replace { path, value } => {
                // A difference's pointers lead to members of objects that are there.
                let _ = template.set(path, value.clone());
            }
            JsonPatchOp::Remove { path } => {
                template.remove(path);
            }
            _ => {}
        }
    }
    template.into_object()
}

/// A list index as RFC 6901 writes it: `0`, or digits without a leading zero (no sign). Rust's
/// `parse` would also take `01` and `+1`, which a JSON pointer (and so `get`, and CAPI's JSON
/// patches) does not.
fn index(token: &str, len: usize, pointer: &str) -> Result<usize, EditError> {
    let canonical = token == "0"
        || (token.starts_with(|c: char| ('1'..='9').contains(&c))
            && token.bytes().all(|b| b.is_ascii_digit()));
    canonical
        .then(|| token.parse().ok())
        .flatten()
        .ok_or_else(|| EditError {
            pointer: pointer.into(),
            reason: format!("`{token}` is not an index into a list of {len}"),
        })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// RFC 7386.
fn merge(target: &mut Value, document: &Value) {
    let Value::Object(patch) = document else {
        *target = document.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let map = target.as_object_mut().expect("made an object above");
    for (key, value) in patch {
        if value.is_null() {
            map.remove(key);
        } else {
            merge(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// The JSON Patch that turns `before` into `after`: objects are compared member by member,
/// anything else (lists included) is replaced whole when it differs.
pub fn diff(before: &Value, after: &Value) -> Vec<JsonPatchOp> {
    let mut ops = Vec::new();
    diff_into(before, after, &mut String::new(), &mut ops);
    ops
}

/// Objects are walked member by member, without first comparing them whole (which compared the
/// deepest members once for every level above them); anything else is compared whole.
fn diff_into(before: &Value, after: &Value, path: &mut String, ops: &mut Vec<JsonPatchOp>) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => diff_members(b, a, path, ops),
        _ if before == after => {}
        _ => ops.push(JsonPatchOp::Replace {
            path: path.clone(),
            value: after.clone(),
        }),
    }
}

/// The members of two objects at `path`: removals and changes in `before`'s order, then
/// additions.
pub(crate) fn diff_members(
    b: &Map<String, Value>,
    a: &Map<String, Value>,
    path: &mut String,
    ops: &mut Vec<JsonPatchOp>,
) {
    for (key, old) in b {
        let new = a.get(key);
        // A member's pointer is written only for an op or an object to walk into:
        // most members are equal leaves (label keys, say, which need escaping).
        let walk = matches!((old, new), (Value::Object(_), Some(Value::Object(_))));
        if !walk && new == Some(old) {
            continue;
        }
        let len = path.len();
        push_token(path, key);
        match new {
            Some(new) if walk => diff_into(old, new, path, ops),
            Some(new) => ops.push(JsonPatchOp::Replace {
                path: path.clone(),
                value: new.clone(),
            }),
            None => ops.push(JsonPatchOp::Remove { path: path.clone() }),
        }
        path.truncate(len);
    }
    for (key, new) in a {
        if !b.contains_key(key) {
            let len = path.len();
            push_token(path, key);
            ops.push(JsonPatchOp::Add {
                path: path.clone(),
                value: new.clone(),
            });
            path.truncate(len);
        }
    }
}

/// Appends `/key` to a JSON pointer, escaped (most keys need no escaping, and are not copied
/// to find out).
pub(crate) fn push_token(path: &mut String, key: &str) {
    path.push('/');
    push_escaped_token(path, key);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Found by fuzzing (`fuzz/fuzz_targets/patch_template.rs`): a pointer of 32,000 levels made
    /// `set` build objects that deep, whose drop overflowed the stack. The saved input is
    /// replayed as the fuzz target reads it, on a thread with a 2 MiB stack (tokio's default).
    #[test]
    fn pointers_deeper_than_the_limit_are_errors_not_a_stack_overflow() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let input =
                    include_str!("../../tests/fuzz-crashes/patch_template/deep-pointer.txt");
                let (pointer, _) = input.split_once('\n').unwrap_or((input, "{}"));
                let mut t = Template::new(json!({}));
                let err = t.set(pointer, json!({})).unwrap_err();
                assert!(
                    err.reason
                        .contains("levels deep; an edit goes at most 128 levels"),
                    "{err}"
                );
                assert!(t.push(pointer, 1).is_err());
                assert_eq!(t.object(), &json!({}));

                let deepest = "/a".repeat(MAX_POINTER_DEPTH);
                t.set(&deepest, 1).unwrap();
                assert_eq!(t.get(&deepest), Some(&json!(1)));
                assert!(t.set(&format!("{deepest}/b"), 1).is_err());
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/patch_template.rs`): `set` took `01` and `00` as
    /// list indexes, which `get` (a JSON pointer) does not, so a value set could not be read.
    #[test]
    fn list_indexes_are_json_pointer_indexes() {
        let mut t = Template::new(json!({"list": [1, 2], "0": {}}));
        for bad in ["/list/01", "/list/00", "/list/+1", "/list/-0"] {
            let err = t.set(bad, 9).unwrap_err();
            assert!(err.reason.contains("is not an index"), "{bad}: {err}");
        }
        t.set("/list/1", 9).unwrap();
        assert_eq!(t.get("/list/1"), Some(&json!(9)));
        assert_eq!(t.object()["list"], json!([1, 9]));
    }

    #[test]
    fn set_creates_parents_and_refuses_scalars() {
        let mut t = Template::new(json!({"spec": {"a": 1, "list": [{"x": 1}]}}));
        t.set("/spec/b/c", true).unwrap();
        t.set("/spec/list/0/x", 2).unwrap();
        t.set("/spec/list/-", 3).unwrap();
        assert_eq!(
            t.object(),
            &json!({"spec": {"a": 1, "b": {"c": true}, "list": [{"x": 2}, 3]}})
        );
        let err = t.set("/spec/a/b", 1).unwrap_err();
        assert_eq!(err.to_string(), "/spec/a: is a number, not an object");
        let err = t.set("/spec/list/5/x", 1).unwrap_err();
        assert!(err.to_string().contains("past the end"), "{err}");
        assert!(
            t.set("spec", 1)
                .unwrap_err()
                .reason
                .contains("starts with `/`")
        );
        assert_eq!(t.remove("/spec/b"), Some(json!({"c": true})));
        assert_eq!(t.remove("/spec/nothing"), None);
    }

    #[test]
    fn diff_compares_objects_member_by_member() {
        let before = json!({"a": {"b": 1, "c": [1, 2], "gone": true}, "k/e~y": 1});
        let after = json!({"a": {"b": 2, "c": [1], "new": {"x": 1}}, "k/e~y": 2});
        let ops = diff(&before, &after);
        let replace = |path: &str, value| JsonPatchOp::Replace {
            path: path.into(),
            value,
        };
        assert_eq!(
            ops,
            [
                replace("/a/b", json!(2)),
                replace("/a/c", json!([1])),
                JsonPatchOp::Remove {
                    path: "/a/gone".into()
                },
                JsonPatchOp::Add {
                    path: "/a/new".into(),
                    value: json!({"x": 1})
                },
                replace("/k~1e~0y", json!(2)),
            ]
        );
        assert!(diff(&after, &after).is_empty());
    }

    #[test]
    fn diff_lists_removals_and_changes_in_key_order_then_additions() {
        let before = json!({"a": 1, "c": {"x": 1}, "e": 1});
        let after = json!({"b": 1, "c": {"w": 0, "x": 2}, "d": 1, "f": 1});
        let paths: Vec<String> = diff(&before, &after)
            .iter()
            .map(|op| match op {
                JsonPatchOp::Add { path, .. } => format!("add {path}"),
                JsonPatchOp::Remove { path } => format!("remove {path}"),
                JsonPatchOp::Replace { path, .. } => format!("replace {path}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            paths,
            [
                "remove /a",
                "replace /c/x",
                "add /c/w",
                "remove /e",
                "add /b",
                "add /d",
                "add /f"
            ]
        );
    }

    #[test]
    fn diff_applied_to_before_gives_after() {
        // Objects drawn from a few keys at each level, so members are shared, dropped and new.
        fn draw(seed: &mut u64, depth: u32) -> Value {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = *seed >> 33;
            if depth == 0 || r.is_multiple_of(4) {
                return json!(r % 3);
            }
            let mut map = serde_json::Map::new();
            for key in ["a", "b/c", "d", "e~f", "g"] {
                *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                if !(*seed >> 40).is_multiple_of(3) {
                    map.insert(key.into(), draw(seed, depth - 1));
                }
            }
            Value::Object(map)
        }
        let mut seed = 7;
        for _ in 0..500 {
            let (before, after) = (draw(&mut seed, 4), draw(&mut seed, 4));
            if !before.is_object() || !after.is_object() {
                continue;
            }
            let mut t = Template::new(before.clone());
            for op in diff(&before, &after) {
                match op {
                    JsonPatchOp::Add { path, value } | JsonPatchOp::Replace { path, value } => {
                        t.set(&path, value).unwrap();
                    }
                    JsonPatchOp::Remove { path } => {
                        t.remove(&path).unwrap();
                    }
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(t.object(), &after, "from {before}");
        }
    }

    #[test]
    fn an_unedited_template_has_no_changes_and_is_not_decoded_for_its_kind() {
        let sent: TemplateObject = serde_json::from_str(
            r#"{"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 1}}"#,
        )
        .unwrap();
        let mut t = Template::from_sent(&sent);
        assert_eq!((t.kind(), t.api_version()), ("Widget", "example.com/v1"));
        assert_eq!(t.unedited_text(), sent.raw());
        assert_eq!(t.get("/spec/size"), Some(&json!(1)));
        assert!(t.changes().is_empty());
        assert_eq!(t.remove("/spec/absent"), None);
        assert!(t.changes().is_empty(), "removing nothing is no edit");
        t.set("/spec/size", 2).unwrap();
        assert_eq!(
            t.changes(),
            [JsonPatchOp::Replace {
                path: "/spec/size".into(),
                value: json!(2)
            }]
        );
        assert!(
            !sent.is_decoded(),
            "the request's own object is left as sent"
        );
    }

    #[test]
    fn merge_follows_rfc_7386() {
        let mut t = Template::new(json!({"a": {"b": 1, "c": 2}}));
        t.merge(&json!({"a": {"b": null, "d": [1]}}));
        assert_eq!(t.object(), &json!({"a": {"c": 2, "d": [1]}}));
    }
}
