//! Small helpers over Kubernetes objects held as JSON: nested fields, metadata maps, and the
//! field copy CAPI's patch engine uses (`CopyFields` with preserved paths).

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The value at `path`, if every segment exists.
pub(crate) fn get<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, segment| v.get(segment))
}

/// The string at `path`, or `""`.
pub(crate) fn string<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    get(object, path).and_then(Value::as_str).unwrap_or("")
}

/// Sets `path` to `value`, creating objects on the way (`unstructured.SetNestedField`).
pub(crate) fn set(object: &mut Value, path: &[&str], value: Value) {
    let mut current = object;
    for segment in &path[..path.len() - 1] {
        if !current.is_object() {
            *current = Value::Object(Map::new());
        }
        current = current
            .as_object_mut()
            .expect("made an object above")
            .entry(segment.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !current.is_object() {
        *current = Value::Object(Map::new());
    }
    current
        .as_object_mut()
        .expect("made an object above")
        .insert(path[path.len() - 1].to_string(), value);
}

/// A string map (labels, annotations) at `path`; empty when absent.
pub(crate) fn string_map(object: &Value, path: &[&str]) -> BTreeMap<String, String> {
    get(object, path)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A string map as JSON.
pub(crate) fn map_value(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// `util.MergeMap`: the first map wins on conflicts.
pub(crate) fn merge_maps(maps: &[BTreeMap<String, String>]) -> BTreeMap<String, String> {
    let mut merged = BTreeMap::new();
    for map in maps.iter().rev() {
        merged.extend(map.clone());
    }
    merged
}

/// A field copy: from `src` path in the source to `dest` path in the destination.
pub(crate) type FieldCopy<'a> = (&'a [&'a str], &'a [&'a str]);

/// `patchutil.CopyFields`: copies each field that exists in `src` over `dest` (replacing it),
/// keeping the `preserve` paths of `dest` as they were.
pub(crate) fn copy_fields(
    dest: &mut Value,
    src: &Value,
    fields: &[FieldCopy<'_>],
    preserve: &[&[&str]],
) {
    let kept: Vec<(&[&str], Value)> = preserve
        .iter()
        .filter_map(|path| get(dest, path).map(|v| (*path, v.clone())))
        .collect();
    for (from, to) in fields {
        if let Some(value) = get(src, from) {
            set(dest, to, value.clone());
        }
    }
    for (path, value) in kept {
        set(dest, path, value);
    }
}
