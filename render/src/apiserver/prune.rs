//! What the API server does to a custom resource before it validates it: pruning (fields the
//! schema does not declare are dropped, outside `x-kubernetes-preserve-unknown-fields`), nulls
//! of fields that are neither nullable nor defaulted dropped, then CRD defaults filled in
//! (apiextensions-apiserver's `pruning`, `PruneNonNullableNullsWithoutDefaults` and `Default`).

use super::schema::{Additional, Schema};
use serde_json::Value;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Prunes `object` (a whole resource) by its root schema; returns the dropped fields' paths
/// (`spec.a.b[0].c`, sorted), as the API server's `unknown field` warnings name them.
pub fn prune(object: &mut Value, root: &Schema) -> Vec<String> {
    let mut dropped = Vec::new();
    let mut path = String::new();
    walk(object, Some(root), true, &mut path, &mut dropped);
    dropped.sort();
    dropped
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

fn walk(
    x: &mut Value,
    s: Option<&Schema>,
    embedded: bool,
    path: &mut String,
    out: &mut Vec<String>,
) {
    if let Some(schema) = s
        && schema.preserve_unknown_fields
    {
        skip(x, schema, embedded, path, out);
        return;
    }
    let start = path.len();
    match x {
        Value::Object(map) => {
            let Some(schema) = s else {
                for key in map.keys() {
                    push_key(path, key);
                    out.push(path.clone());
                    path.truncate(start);
                }
                map.clear();
                return;
            };
            let embedded = embedded || schema.embedded_resource;
            map.retain(|key, value| {
                if embedded && META_FIELDS.contains(&key.as_str()) {
                    return true;
                }
                let child = match (schema.properties.get(key), &schema.additional_properties) {
                    (Some(property), _) => Some(Some(property)),
                    (None, Some(Additional::Schema(additional))) => Some(Some(&**additional)),
                    (None, Some(Additional::Allows(_))) => Some(None),
                    (None, None) => None,
                };
                match child {
                    Some(child) => {
                        push_key(path, key);
                        walk(value, child, false, path, out);
                        path.truncate(start);
                        true
                    }
                    None => {
                        if !META_FIELDS.contains(&key.as_str()) || start > 0 {
                            push_key(path, key);
                            out.push(path.clone());
                            path.truncate(start);
                        }
                        false
                    }
                }
            });
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|schema| schema.items.as_deref());
            for (i, item) in items.iter_mut().enumerate() {
                path.push_str(&format!("[{i}]"));
                walk(item, item_schema, false, path, out);
                path.truncate(start);
            }
        }
        _ => {}
    }
}

fn skip(x: &mut Value, schema: &Schema, embedded: bool, path: &mut String, out: &mut Vec<String>) {
    let start = path.len();
    match x {
        Value::Object(map) => {
            let embedded = embedded || schema.embedded_resource;
            for (key, value) in map.iter_mut() {
                if embedded && META_FIELDS.contains(&key.as_str()) {
                    continue;
                }
                let child = match (schema.properties.get(key), &schema.additional_properties) {
                    (Some(property), _) => Some(Some(property)),
                    (None, Some(Additional::Schema(additional))) => Some(Some(&**additional)),
                    (None, Some(Additional::Allows(_))) => Some(None),
                    (None, None) => None,
                };
                if let Some(child) = child {
                    push_key(path, key);
                    walk(value, child, false, path, out);
                    path.truncate(start);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.items.as_deref() {
                for (i, item) in items.iter_mut().enumerate() {
                    path.push_str(&format!("[{i}]"));
                    skip(item, item_schema, false, path, out);
                    path.truncate(start);
                }
            }
        }
        _ => {}
    }
}

/// Drops the nulls of fields that are neither nullable nor defaulted.
pub fn prune_nulls(x: &mut Value, s: Option<&Schema>) {
    match x {
        Value::Object(map) => map.retain(|key, value| {
            let schema = s.and_then(|s| s.field(key));
            let drop = value.is_null()
                && schema.is_some_and(|schema| !schema.nullable && schema.default.is_none());
            if !drop {
                prune_nulls(value, schema);
            }
            !drop
        }),
        Value::Array(items) => {
            let schema = s.and_then(|s| s.items.as_deref());
            for item in items {
                prune_nulls(item, schema);
            }
        }
        _ => {}
    }
}

/// Fills absent fields (and non-nullable nulls) that have a default, then defaults inside every
/// value, the defaulted ones included.
pub fn default(x: &mut Value, s: &Schema) {
    match x {
        Value::Object(map) => {
            for (key, property) in &s.properties {
                let Some(value) = &property.default else {
                    continue;
                };
                let fill = match map.get(key) {
                    None => true,
                    Some(current) => current.is_null() && !property.nullable,
                };
                if fill {
                    map.insert(key.clone(), value.clone());
                }
            }
            for (key, value) in map.iter_mut() {
                if let Some(property) = s.properties.get(key) {
                    default(value, property);
                } else if let Some(Additional::Schema(additional)) = &s.additional_properties {
                    default(value, additional);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &s.items {
                for item in items {
                    default(item, item_schema);
                }
            }
        }
        _ => {}
    }
}
