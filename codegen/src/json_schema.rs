//! JSON Schema (as schemars, kube-rs and k8s-openapi generate it: draft 2020-12 or OpenAPI 3.0)
//! converted to the subset a ClusterClass variable schema accepts (CAPI's `JSONSchemaProps`:
//! `sigs.k8s.io/cluster-api/api/core/v1beta2`). What cannot be expressed is an error naming the
//! place and the keyword, never dropped silently; annotations with no meaning to CAPI (`title`,
//! `$schema`, `readOnly`…) are dropped.

use serde_json::{Map, Value, json};

/// A schema that cannot be expressed for CAPI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionError {
    /// Where, as a path from the schema's root (`.properties.tolerations.items`).
    pub path: String,
    /// Why.
    pub message: String,
}

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ConversionError {}

/// Keywords kept as they are.
const KEPT: &[&str] = &[
    "description",
    "required",
    "maxProperties",
    "minProperties",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxLength",
    "minLength",
    "pattern",
    "enum",
    "default",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
    "x-metadata",
    "x-kubernetes-int-or-string",
];

/// Annotations dropped: CAPI's schema has no place for them and they change nothing.
const DROPPED: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "readOnly",
    "writeOnly",
    "nullable",
    "externalDocs",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-embedded-resource",
];

/// The string formats the API server validates (apiextensions-apiserver's
/// `supportedVersionedFormats`, Kubernetes 1.34 and later), named without dashes as it
/// normalizes them; it drops every other format of a string.
pub const KUBERNETES_STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8s-short-name",
    "k8s-long-name",
];

/// Formats Kubernetes knows (the string ones, `date-time` as written, and those of integers and
/// numbers); others are dropped (schemars' `uint32`, `int8`… carry no more than their
/// `minimum`/`maximum`).
fn known_format(format: &str) -> bool {
    KUBERNETES_STRING_FORMATS.contains(&format)
        || matches!(format, "date-time" | "int32" | "int64" | "float" | "double")
}

fn is_null_schema(s: &Value) -> bool {
    s.get("type") == Some(&json!("null"))
        || s.get("const") == Some(&Value::Null)
        || s.get("enum") == Some(&json!([null]))
}

/// Converts a JSON Schema to CAPI's subset.
///
/// ```
/// use capi_ext_codegen::json_schema::from_json_schema;
/// use serde_json::json;
///
/// let schemars = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Toleration",
///     "type": "object",
///     "properties": {
///         "seconds": {"type": ["integer", "null"], "format": "int64"},
///         "effect": {"oneOf": [{"const": "NoSchedule"}, {"const": "NoExecute"}]}
///     }
/// });
/// assert_eq!(from_json_schema(&schemars).unwrap(), json!({
///     "type": "object",
///     "properties": {
///         "seconds": {"type": "integer", "format": "int64"},
///         "effect": {"type": "string", "enum": ["NoSchedule", "NoExecute"]}
///     }
/// }));
/// ```
pub fn from_json_schema(schema: &Value) -> Result<Value, ConversionError> {
    convert(schema, "")
}

fn fail(path: &str, message: impl Into<String>) -> ConversionError {
    ConversionError {
        path: if path.is_empty() {
            ".".into()
        } else {
            path.into()
        },
        message: message.into(),
    }
}

fn integral(value: &Value, path: &str, keyword: &str) -> Result<Value, ConversionError> {
    match value.as_f64() {
        Some(_) if value.is_i64() || value.is_u64() => Ok(value.clone()),
        Some(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Ok(json!(n as i64)),
        _ => Err(fail(
            path,
            format!("`{keyword}: {value}` is not an integer; CAPI's bounds are integers"),
        )),
    }
}

fn convert(schema: &Value, path: &str) -> Result<Value, ConversionError> {
    let map = match schema {
        Value::Bool(true) => return Ok(json!({"x-kubernetes-preserve-unknown-fields": true})),
        Value::Bool(false) => return Err(fail(path, "the schema `false` accepts nothing")),
        Value::Object(map) => map,
        other => return Err(fail(path, format!("{other} is not a schema"))),
    };
    // A nullable union (`Option<T>`): the non-null branch stands for the schema.
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            let rest: Vec<&Value> = branches.iter().filter(|b| !is_null_schema(b)).collect();
            if rest.len() == 1 && rest.len() < branches.len() {
                let mut merged = map.clone();
                merged.remove(key);
                let Value::Object(inner) = rest[0] else {
                    return convert(rest[0], path);
                };
                for (k, v) in inner {
                    merged.entry(k.clone()).or_insert_with(|| v.clone());
                }
                return convert(&Value::Object(merged), path);
            }
        }
    }
    if let Some(Value::Array(parts)) = map.get("allOf")
        && parts.len() == 1
    {
        let mut merged = map.clone();
        merged.remove("allOf");
        if let Value::Object(inner) = &parts[0] {
            for (k, v) in inner {
                merged.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        return convert(&Value::Object(merged), path);
    }
    let mut out = Map::new();
    for (key, value) in map {
        let here = format!("{path}.{key}");
        match key.as_str() {
            k if KEPT.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            k if DROPPED.contains(&k) => {}
            "deprecated" => {}
            "examples" => {
                if let Some(first) = value.as_array().and_then(|a| a.first()) {
                    out.entry("example").or_insert_with(|| first.clone());
                }
            }
            "const" => {
                out.insert("enum".into(), json!([value]));
            }
            "type" => {
                let types: Vec<&str> = match value {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                let types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
                match types.as_slice() {
                    [one] => {
                        out.insert("type".into(), json!(one));
                    }
                    [] => return Err(fail(path, "the schema only allows null")),
                    several => {
                        return Err(fail(
                            path,
                            format!(
                                "several types {several:?}: CAPI's schemas have one type per value (use anyOf of typed schemas)"
                            ),
                        ));
                    }
                }
            }
            "format" => {
                if value.as_str().is_some_and(known_format) {
                    out.insert(key.clone(), value.clone());
                }
            }
            "minimum" | "maximum" => {
                out.insert(key.clone(), integral(value, &here, key)?);
            }
            "exclusiveMinimum" | "exclusiveMaximum" => {
                if value.is_boolean() {
                    out.insert(key.clone(), value.clone());
                } else {
                    // JSON Schema 2020-12: the bound itself; OpenAPI 3.0 (CAPI): a flag on it.
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    out.insert(bound.into(), integral(value, &here, key)?);
                    out.insert(key.clone(), json!(true));
                }
            }
            "properties" => {
                let props = value
                    .as_object()
                    .ok_or_else(|| fail(&here, "is not an object"))?;
                let mut converted = Map::new();
                for (name, prop) in props {
                    converted.insert(name.clone(), convert(prop, &format!("{here}.{name}"))?);
                }
                out.insert(key.clone(), Value::Object(converted));
            }
            "additionalProperties" => match value {
                Value::Bool(false) => {}
                Value::Bool(true) => {
                    out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                }
                schema => {
                    out.insert(key.clone(), convert(schema, &here)?);
                }
            },
            "items" => match value {
                Value::Array(_) => {
                    return Err(fail(
                        &here,
                        "tuple items (a fixed-length list of different types) cannot be expressed; use an object",
                    ));
                }
                schema => {
                    out.insert(key.clone(), convert(schema, &here)?);
                }
            },
            "allOf" | "anyOf" | "oneOf" => {
                let branches = value
                    .as_array()
                    .ok_or_else(|| fail(&here, "is not a list"))?;
                let consts: Option<Vec<&Value>> = branches
                    .iter()
                    .map(|b| {
                        b.get("const").or_else(|| {
                            b.get("enum")
                                .and_then(|e| e.as_array())
                                .filter(|e| e.len() == 1)
                                .and_then(|e| e.first())
                        })
                    })
                    .collect();
                match consts {
                    // Unit enum variants (schemars writes one branch per documented variant).
                    Some(values) if key != "allOf" && values.iter().all(|v| v.is_string()) => {
                        out.insert("type".into(), json!("string"));
                        out.insert(
                            "enum".into(),
                            Value::Array(values.into_iter().cloned().collect()),
                        );
                    }
                    _ => {
                        let converted = branches
                            .iter()
                            .enumerate()
                            .map(|(i, b)| convert(b, &format!("{here}[{i}]")))
                            .collect::<Result<Vec<_>, _>>()?;
                        out.insert(key.clone(), Value::Array(converted));
                    }
                }
            }
            "not" => {
                out.insert(key.clone(), convert(value, &here)?);
            }
            "$ref" => {
                return Err(fail(
                    path,
                    format!(
                        "`$ref: {value}` remains after inlining: the type refers to itself, and CAPI schemas cannot be recursive"
                    ),
                ));
            }
            other => {
                return Err(fail(
                    path,
                    format!(
                        "`{other}` cannot be expressed in a ClusterClass variable schema (CAPI's subset of OpenAPI v3)"
                    ),
                ));
            }
        }
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_unions_and_bounds() {
        let s = json!({"anyOf": [{"type": "object", "properties": {"a": {"type": "integer", "format": "uint32", "minimum": 0.0}}}, {"type": "null"}],
                       "description": "d"});
        assert_eq!(
            from_json_schema(&s).unwrap(),
            json!({"type": "object", "description": "d", "properties": {"a": {"type": "integer", "minimum": 0}}})
        );
        let s = json!({"type": "integer", "exclusiveMinimum": 0});
        assert_eq!(
            from_json_schema(&s).unwrap(),
            json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true})
        );
        assert_eq!(
            from_json_schema(&json!(true)).unwrap(),
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            from_json_schema(&json!({"type": "object", "additionalProperties": {"type": "string"}, "examples": [{"a": "b"}]})).unwrap(),
            json!({"type": "object", "additionalProperties": {"type": "string"}, "example": {"a": "b"}})
        );
    }

    #[test]
    fn what_cannot_be_expressed_is_named() {
        let err = |s: Value| from_json_schema(&s).unwrap_err().to_string();
        assert_eq!(
            err(
                json!({"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^a": {}}}}})
            ),
            ".properties.m: `patternProperties` cannot be expressed in a ClusterClass variable schema (CAPI's subset of OpenAPI v3)"
        );
        assert!(err(json!({"$ref": "#/$defs/Node"})).contains("CAPI schemas cannot be recursive"));
        assert!(err(json!({"type": ["string", "integer"]})).contains("several types"));
        assert!(
            err(json!({"type": "number", "minimum": 0.5}))
                .contains("`minimum: 0.5` is not an integer")
        );
        assert!(
            err(json!({"type": "array", "items": [{"type": "string"}]}))
                .starts_with(".items: tuple items")
        );
    }
}
