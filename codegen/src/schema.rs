//! ClusterClass variable schemas: CAPI's OpenAPI v3 subset, built from Rust types.
//!
//! These functions are the single definition of how a Rust type becomes a schema. The derive
//! macros call them at run time (the generated `Schema` impls), the CLI calls them while reading
//! sources statically; both therefore produce the same JSON.
//!
//! ```
//! use capi_ext_codegen::schema::{self, Primitive, SchemaAttrs};
//!
//! let port = schema::apply(schema::primitive(Primitive::Integer), &SchemaAttrs {
//!     minimum: Some(1), maximum: Some(65535), ..Default::default()
//! });
//! assert_eq!(port, serde_json::json!({"type": "integer", "minimum": 1, "maximum": 65535}));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Types that map to one schema without looking inside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// `String`, `&str`, `char`.
    String,
    /// Every integer type.
    Integer,
    /// `f32`, `f64`.
    Number,
    /// `bool`.
    Boolean,
    /// `serde_json::Value`: anything (`x-kubernetes-preserve-unknown-fields`).
    Any,
    /// An int-or-string (`x-kubernetes-int-or-string`).
    IntOrString,
}

/// The schema of a primitive.
pub fn primitive(p: Primitive) -> Value {
    match p {
        Primitive::String => json!({"type": "string"}),
        Primitive::Integer => json!({"type": "integer"}),
        Primitive::Number => json!({"type": "number"}),
        Primitive::Boolean => json!({"type": "boolean"}),
        Primitive::Any => json!({"x-kubernetes-preserve-unknown-fields": true}),
        Primitive::IntOrString => {
            json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]})
        }
    }
}

/// An array of `items`.
pub fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// A map with string keys and `values`.
pub fn map(values: Value) -> Value {
    json!({"type": "object", "additionalProperties": values})
}

/// An object with named properties; `required` lists the ones that must be set.
pub fn object(properties: Vec<(String, Value)>, required: Vec<String>) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    out.insert(
        "properties".into(),
        Value::Object(properties.into_iter().collect()),
    );
    if !required.is_empty() {
        out.insert("required".into(), required.into());
    }
    Value::Object(out)
}

/// A string restricted to the given values (a unit-variant enum).
pub fn string_enum(values: Vec<String>) -> Value {
    json!({"type": "string", "enum": values})
}

/// A CEL validation rule with its message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// The CEL expression, e.g. `self.size() <= 10`.
    #[serde(default)]
    pub rule: String,
    /// The message when it fails.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// A CEL expression that computes the message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message_expression: String,
    /// A machine-readable reason (`FieldValueInvalid`, `FieldValueForbidden`, `FieldValueRequired`,
    /// `FieldValueDuplicate`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The field the failure is reported on, relative to this schema (`.name`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
}

/// What attributes can say about a schema that the type cannot.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SchemaAttrs {
    /// Description (defaults to the doc comment).
    pub description: Option<String>,
    /// Regular expression for strings.
    pub pattern: Option<String>,
    /// Format, e.g. `uri`.
    pub format: Option<String>,
    /// Minimum string length.
    pub min_length: Option<i64>,
    /// Maximum string length.
    pub max_length: Option<i64>,
    /// Minimum value (integers only in CAPI).
    pub minimum: Option<i64>,
    /// Maximum value.
    pub maximum: Option<i64>,
    /// Minimum number of items.
    pub min_items: Option<i64>,
    /// Maximum number of items.
    pub max_items: Option<i64>,
    /// Items must be unique.
    pub unique_items: Option<bool>,
    /// Allowed values.
    pub enum_values: Option<Vec<Value>>,
    /// Default value.
    pub default: Option<Value>,
    /// Example value.
    pub example: Option<Value>,
    /// CEL rules (`x-kubernetes-validations`).
    pub rules: Vec<Rule>,
    /// `x-metadata` labels.
    pub labels: Vec<(String, String)>,
    /// `x-metadata` annotations.
    pub annotations: Vec<(String, String)>,
    /// Marks the schema deprecated (the description says so).
    pub deprecated: bool,
}

impl SchemaAttrs {
    /// Whether no attribute is set.
    pub fn is_empty(&self) -> bool {
        *self == SchemaAttrs::default()
    }
}

/// Applies attributes to a base schema (attributes win).
pub fn apply(base: Value, attrs: &SchemaAttrs) -> Value {
    let mut out = match base {
        Value::Object(map) => map,
        other => return other,
    };
    let mut set = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            out.insert(key.to_string(), v);
        }
    };
    let description = match (&attrs.description, attrs.deprecated) {
        (Some(d), true) => Some(format!("Deprecated: {d}")),
        (None, true) => Some("Deprecated.".to_string()),
        (d, false) => d.clone(),
    };
    set("description", description.map(Value::from));
    set("pattern", attrs.pattern.clone().map(Value::from));
    set("format", attrs.format.clone().map(Value::from));
    set("minLength", attrs.min_length.map(Value::from));
    set("maxLength", attrs.max_length.map(Value::from));
    set("minimum", attrs.minimum.map(Value::from));
    set("maximum", attrs.maximum.map(Value::from));
    set("minItems", attrs.min_items.map(Value::from));
    set("maxItems", attrs.max_items.map(Value::from));
    set("uniqueItems", attrs.unique_items.map(Value::from));
    set("enum", attrs.enum_values.clone().map(Value::from));
    set("default", attrs.default.clone());
    set("example", attrs.example.clone());
    if !attrs.rules.is_empty() {
        set(
            "x-kubernetes-validations",
            Some(serde_json::to_value(&attrs.rules).expect("rules serialize")),
        );
    }
    if !attrs.labels.is_empty() || !attrs.annotations.is_empty() {
        let pairs = |list: &[(String, String)]| {
            Value::Object(
                list.iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                    .collect(),
            )
        };
        let mut meta = Map::new();
        if !attrs.labels.is_empty() {
            meta.insert("labels".into(), pairs(&attrs.labels));
        }
        if !attrs.annotations.is_empty() {
            meta.insert("annotations".into(), pairs(&attrs.annotations));
        }
        set("x-metadata", Some(Value::Object(meta)));
    }
    Value::Object(out)
}

/// [`apply`] with attributes given as the JSON the macros embed.
pub fn apply_json(base: Value, attrs_json: &str) -> Value {
    let attrs: SchemaAttrs =
        serde_json::from_str(attrs_json).expect("the derive macro embeds valid attributes");
    apply(base, &attrs)
}

/// A ClusterClass variable definition (CAPI's `ClusterClassVariable`), `required` always set.
pub fn variable(name: &str, required: bool, schema: Value) -> Value {
    json!({"name": name, "required": required, "schema": {"openAPIV3Schema": schema}})
}

/// Checks a variable name against CAPI's rules.
///
/// ```
/// use capi_ext_codegen::schema::validate_variable_name;
/// assert!(validate_variable_name("imageRepository").is_ok());
/// assert!(validate_variable_name("builtin").unwrap_err().contains("reserved"));
/// assert!(validate_variable_name("a.b").unwrap_err().contains("'.'"));
/// ```
pub fn validate_variable_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("variable names must not be empty".into());
    }
    if name == "builtin" {
        return Err("`builtin` is reserved for CAPI's builtin variables; rename the field (e.g. #[serde(rename = \"...\")])".into());
    }
    if name.contains('.') {
        return Err(format!(
            "variable name `{name}` contains a '.', which CAPI forbids (it separates path segments)"
        ));
    }
    if name.len() > 256 {
        return Err(format!(
            "variable name `{name}` is longer than 256 characters"
        ));
    }
    Ok(())
}

/// serde's `rename_all` rules, applied to a Rust field or variant name.
pub fn rename(name: &str, rule: &str) -> Option<String> {
    let words: Vec<String> = split_words(name);
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let capitalize = |w: &String| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    Some(match rule {
        "lowercase" => name.to_lowercase(),
        "UPPERCASE" => name.to_uppercase(),
        "PascalCase" => lower.iter().map(capitalize).collect(),
        "camelCase" => {
            let pascal: String = lower.iter().map(capitalize).collect();
            let mut c = pascal.chars();
            c.next()
                .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        }
        "snake_case" => lower.join("_"),
        "SCREAMING_SNAKE_CASE" => lower.join("_").to_uppercase(),
        "kebab-case" => lower.join("-"),
        "SCREAMING-KEBAB-CASE" => lower.join("-").to_uppercase(),
        _ => return None,
    })
}

fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    for c in name.chars() {
        if c == '_' || c == '-' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        } else if c.is_uppercase()
            && !cur.is_empty()
            && cur
                .chars()
                .last()
                .is_some_and(|l| l.is_lowercase() || l.is_ascii_digit())
        {
            words.push(std::mem::take(&mut cur));
            cur.push(c);
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_like_serde() {
        assert_eq!(
            rename("image_repository", "camelCase").as_deref(),
            Some("imageRepository")
        );
        assert_eq!(
            rename("ImageRepository", "camelCase").as_deref(),
            Some("imageRepository")
        );
        assert_eq!(
            rename("ImageRepository", "kebab-case").as_deref(),
            Some("image-repository")
        );
        assert_eq!(
            rename("image_repository", "SCREAMING_SNAKE_CASE").as_deref(),
            Some("IMAGE_REPOSITORY")
        );
        assert_eq!(
            rename("HighAvailability", "snake_case").as_deref(),
            Some("high_availability")
        );
        assert_eq!(rename("x", "Weird").as_deref(), None);
    }

    #[test]
    fn applies_every_attribute() {
        let attrs = SchemaAttrs {
            description: Some("d".into()),
            deprecated: true,
            rules: vec![Rule {
                rule: "self != ''".into(),
                message: "empty".into(),
                ..Rule::default()
            }],
            labels: vec![("a".into(), "b".into())],
            enum_values: Some(vec![json!("x")]),
            ..Default::default()
        };
        let out = apply(primitive(Primitive::String), &attrs);
        assert_eq!(
            out,
            json!({"type": "string", "description": "Deprecated: d", "enum": ["x"],
                   "x-kubernetes-validations": [{"rule": "self != ''", "message": "empty"}],
                   "x-metadata": {"labels": {"a": "b"}}})
        );
        let round = apply_json(
            primitive(Primitive::Integer),
            &serde_json::to_string(&attrs).unwrap(),
        );
        assert_eq!(round["description"], "Deprecated: d");
    }

    #[test]
    fn objects_list_required_only_when_any() {
        assert_eq!(
            object(vec![], vec![]),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            map(primitive(Primitive::Boolean))["additionalProperties"]["type"],
            "boolean"
        );
        assert_eq!(
            array(string_enum(vec!["a".into()]))["items"]["enum"][0],
            "a"
        );
    }
}
