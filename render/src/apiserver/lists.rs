//! `x-kubernetes-list-type: set` and `map`: no item twice, no two items with the same keys
//! (apiextensions-apiserver's `ValidateListSetsAndMaps`). The second of equal items is the
//! one reported, once.

use super::schema::{Additional, Schema};
use super::{ErrorType, FieldError};
use serde_json::{Map, Value};

/// The duplicate items of every set and map list in `object`.
pub fn validate(schema: &Schema, object: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    in_object("", schema, object, &mut errors);
    errors
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn in_object(
    path: &str,
    schema: &Schema,
    object: &Map<String, Value>,
    errors: &mut Vec<FieldError>,
) {
    if let Some(Additional::Schema(additional)) = &schema.additional_properties {
        for (key, value) in object {
            in_value(&format!("{path}[{key}]"), additional, value, errors);
        }
    }
    for (key, value) in object {
        if let Some(property) = schema.properties.get(key) {
            in_value(&child(path, key), property, value, errors);
        }
    }
}

fn in_value(path: &str, schema: &Schema, value: &Value, errors: &mut Vec<FieldError>) {
    match value {
        Value::Array(items) => in_array(path, schema, items, errors),
        Value::Object(map) => in_object(path, schema, map, errors),
        _ => {}
    }
}

/// The identity Go's `validateListSet` gives an item: compounds by their JSON text, scalars
/// by value and Go type (an `int64` 1 and a `float64` 1 differ).
fn identity(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_i64() => format!("i{n}"),
        Value::Number(n) => format!("f{}", n.as_f64().unwrap_or_default()),
        Value::Object(_) | Value::Array(_) => format!("c{}", go_json(value)),
        other => format!("s{other}"),
    }
}

/// JSON as Go's `encoding/json` writes a decoded value: keys sorted, floats without `.0`.
fn go_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), go_json(&map[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_json).collect::<Vec<_>>().join(",")
        ),
        Value::Number(n) if !n.is_i64() => {
            crate::go_template::go_float(n.as_f64().unwrap_or_default())
        }
        other => other.to_string(),
    }
}

fn second_occurrences(ids: &[String]) -> Vec<usize> {
    let mut seen = std::collections::HashMap::new();
    let mut out = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let times = seen.entry(id.as_str()).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn in_array(path: &str, schema: &Schema, items: &[Value], errors: &mut Vec<FieldError>) {
    match schema.list_type.as_deref() {
        Some("set") if items.len() > 1 => {
            let ids: Vec<String> = items.iter().map(identity).collect();
            for i in second_occurrences(&ids) {
                errors.push(duplicate(path, i, &items[i]));
            }
        }
        Some("map") => {
            if let Some(i) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
                errors.push(FieldError {
                    field: format!("{path}[{i}]"),
                    type_: ErrorType::Invalid,
                    message: "must be an object for an array of list-type map".into(),
                });
            } else if items.len() > 1 {
                let keys: Vec<Value> = items
                    .iter()
                    .map(|x| {
                        let mut key = Map::new();
                        for name in &schema.list_map_keys {
                            if let Some(v) = x.get(name) {
                                key.insert(name.clone(), v.clone());
                            }
                        }
                        Value::Object(key)
                    })
                    .collect();
                let ids: Vec<String> = if schema.list_map_keys.len() == 1 {
                    let name = &schema.list_map_keys[0];
                    items
                        .iter()
                        .map(|x| {
                            x.get(name)
                                .map_or_else(|| "unspecified".to_string(), identity)
                        })
                        .collect()
                } else {
                    keys.iter().map(identity).collect()
                };
                for i in second_occurrences(&ids) {
                    errors.push(duplicate(path, i, &keys[i]));
                }
            }
        }
        _ => {}
    }
    if let Some(item_schema) = &schema.items {
        for (i, item) in items.iter().enumerate() {
            in_value(&format!("{path}[{i}]"), item_schema, item, errors);
        }
    }
}

fn duplicate(path: &str, i: usize, value: &Value) -> FieldError {
    FieldError {
        field: format!("{path}[{i}]"),
        type_: ErrorType::Duplicate,
        message: format!("Duplicate value: {value}"),
    }
}
