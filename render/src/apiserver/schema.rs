//! A CRD version's `openAPIV3Schema`, read once into the shape the API server works with: the
//! structural parts (properties, items, additionalProperties, the `x-kubernetes-*` extensions)
//! that pruning, defaulting and the list checks walk, and the value validations (types,
//! formats, bounds, junctors, CEL rules) the schema validator checks.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// One node of a CRD schema.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Schema {
    /// `type`: empty, or one of `object`, `array`, `string`, `integer`, `number`, `boolean`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `nullable`.
    pub nullable: bool,
    /// `format` (what the API server keeps of it is [`Schema::checked_format`]).
    pub format: String,
    /// `enum`.
    #[serde(rename = "enum")]
    pub enum_: Option<Vec<Value>>,
    /// `default`.
    pub default: Option<Value>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength`, in characters.
    pub max_length: Option<i64>,
    /// `minLength`, in characters.
    pub min_length: Option<i64>,
    /// `pattern` (Go's RE2 syntax, unanchored).
    pub pattern: Option<String>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `properties`.
    pub properties: BTreeMap<String, Schema>,
    /// `additionalProperties`: a schema, or `true`/`false`.
    pub additional_properties: Option<Additional>,
    /// `items`.
    pub items: Option<Box<Schema>>,
    /// `allOf`.
    pub all_of: Vec<Schema>,
    /// `anyOf`.
    pub any_of: Vec<Schema>,
    /// `oneOf`.
    pub one_of: Vec<Schema>,
    /// `not`.
    pub not: Option<Box<Schema>>,
    /// `x-kubernetes-preserve-unknown-fields`.
    #[serde(rename = "x-kubernetes-preserve-unknown-fields")]
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-int-or-string`.
    #[serde(rename = "x-kubernetes-int-or-string")]
    pub int_or_string: bool,
    /// `x-kubernetes-embedded-resource`.
    #[serde(rename = "x-kubernetes-embedded-resource")]
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    #[serde(rename = "x-kubernetes-list-type")]
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    #[serde(rename = "x-kubernetes-list-map-keys")]
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-validations`.
    #[serde(rename = "x-kubernetes-validations")]
    pub validations: Vec<Rule>,
    #[serde(skip)]
    pattern_compiled: OnceLock<Result<regex::Regex, String>>,
}

/// `additionalProperties`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Additional {
    /// `true` (anything) or `false` (nothing).
    Allows(bool),
    /// Every value follows this schema.
    Schema(Box<Schema>),
}

/// One `x-kubernetes-validations` rule.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Rule {
    /// The CEL expression.
    pub rule: String,
    /// The message when it fails.
    pub message: String,
    /// A CEL expression for the message.
    pub message_expression: String,
    /// The error's type: `FieldValueInvalid` (the default), `FieldValueForbidden`,
    /// `FieldValueRequired` or `FieldValueDuplicate`.
    pub reason: String,
    /// A path relative to the node the rule is on, where the error is reported.
    pub field_path: String,
    /// Whether a transition rule is also run on create (with no old value).
    pub optional_old_self: Option<bool>,
}

impl Schema {
    /// Reads a schema from its JSON form.
    pub fn from_value(value: &Value) -> Result<Schema, String> {
        Schema::deserialize(value).map_err(|e| format!("not an OpenAPI v3 schema: {e}"))
    }

    /// The types the schema validator checks: `integer,string` for int-or-string.
    pub fn types(&self) -> Vec<&str> {
        if self.int_or_string {
            vec!["integer", "string"]
        } else if self.type_.is_empty() {
            Vec::new()
        } else {
            vec![self.type_.as_str()]
        }
    }

    /// The format the API server keeps (it strips the ones it does not support, so they are
    /// never checked): normalized without dashes for strings.
    pub fn checked_format(&self) -> Option<String> {
        if self.format.is_empty() {
            return None;
        }
        let types = self.types();
        let single = if types.len() == 1 { types[0] } else { "" };
        match single {
            "" | "string" => {
                let normalized = if self.format.starts_with("k8s-") {
                    self.format.clone()
                } else {
                    self.format.replace('-', "")
                };
                capi_ext_codegen::json_schema::KUBERNETES_STRING_FORMATS
                    .contains(&normalized.as_str())
                    .then_some(normalized)
            }
            "integer" => {
                matches!(self.format.as_str(), "int32" | "int64").then(|| self.format.clone())
            }
            "number" => {
                matches!(self.format.as_str(), "float" | "double").then(|| self.format.clone())
            }
            _ => None,
        }
    }

    /// Whether this node or any below it has `x-kubernetes-validations`.
    pub fn has_rules(&self) -> bool {
        !self.validations.is_empty()
            || self.properties.values().any(Schema::has_rules)
            || self.items.as_deref().is_some_and(Schema::has_rules)
            || matches!(&self.additional_properties, Some(Additional::Schema(s)) if s.has_rules())
    }

    /// The schema of the value of `key` in an object of this schema, if the schema knows it.
    pub fn field(&self, key: &str) -> Option<&Schema> {
        match self.properties.get(key) {
            Some(property) => Some(property),
            None => match &self.additional_properties {
                Some(Additional::Schema(schema)) => Some(schema),
                _ => None,
            },
        }
    }

    /// The compiled `pattern` (Go's syntax), or why it does not compile.
    pub(crate) fn pattern_regex(&self) -> Option<&Result<regex::Regex, String>> {
        let pattern = self.pattern.as_deref()?;
        Some(
            self.pattern_compiled
                .get_or_init(|| crate::go_regex::compile(pattern)),
        )
    }
}
