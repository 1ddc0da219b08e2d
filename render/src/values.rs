//! Variable values checked as CAPI's Cluster webhook checks them: defaults from the schema,
//! then the OpenAPI rules (type, bounds, lengths, patterns, enums, required properties) and the
//! `x-kubernetes-validations` CEL rules, each error naming the field path.

use capi_ext::hooks::v1alpha1::{JSONSchemaProps, ValidationRule};
use serde_json::Value;
use std::fmt;

/// The message of a field the schema does not declare (and does not preserve); see
/// [`unknown_fields`].
pub const UNKNOWN_FIELD: &str = "field not declared in schema";

/// Folds the unknown-field errors below `path` into the one error CAPI's webhook gives for them:
/// `Invalid value: "<value>": failed validation: "a,b.c" field(s) are not specified in the
/// variable schema of variable "<name>"`.
pub fn unknown_fields(errors: &mut Vec<FieldError>, path: &str, name: &str, value: &Value) {
    let prefix = format!("{path}.value.");
    let mut fields = Vec::new();
    errors.retain(|e| match e.path.strip_prefix(&prefix) {
        Some(field) if e.message == UNKNOWN_FIELD => {
            fields.push(field.to_string());
            false
        }
        _ => true,
    });
    if !fields.is_empty() {
        errors.push(raw_invalid(
            path,
            value,
            &format!(
                "failed validation: {:?} field(s) are not specified in the variable schema of variable {name:?}",
                fields.join(",")
            ),
        ));
    }
}

/// One value that breaks its schema, with the path CAPI would print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Where, e.g. `spec.topology.variables[imageRepository].value.registry`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Fills absent properties that have a `default`, recursively, as the API server's structural
/// defaulting does (the value itself is defaulted by the caller when it is absent).
///
/// ```
/// use capi_ext::hooks::v1alpha1::JSONSchemaProps;
/// use capi_ext_render::values::apply_defaults;
/// let schema = JSONSchemaProps::object([("port".into(), JSONSchemaProps::integer().with_default(6443.into()))], &[]);
/// let mut value = serde_json::json!({});
/// apply_defaults(&schema, &mut value);
/// assert_eq!(value, serde_json::json!({"port": 6443}));
/// ```
pub fn apply_defaults(schema: &JSONSchemaProps, value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (name, property) in &schema.properties {
                if !map.contains_key(name)
                    && let Some(default) = &property.default
                {
                    map.insert(name.clone(), default.clone());
                }
                if let Some(child) = map.get_mut(name) {
                    apply_defaults(property, child);
                }
            }
            if let Some(additional) = &schema.additional_properties {
                for (name, child) in map.iter_mut() {
                    if !schema.properties.contains_key(name) {
                        apply_defaults(additional, child);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for item in items {
                    apply_defaults(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

/// Checks `value` against `schema`; every violation is pushed to `errors` with its path below
/// `path`.
///
/// ```
/// use capi_ext::hooks::v1alpha1::JSONSchemaProps;
/// use capi_ext_render::values::validate;
/// let schema = JSONSchemaProps::string().with_rule("!self.endsWith('/')", "must not end with '/'");
/// let mut errors = Vec::new();
/// validate(&schema, &serde_json::json!("registry.example.com/"), "value", &mut errors);
/// assert_eq!(errors[0].to_string(), r#"value: Invalid value: "\"registry.example.com/\"": must not end with '/'"#);
/// ```
pub fn validate(schema: &JSONSchemaProps, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let before = errors.len();
    check_type(schema, value, path, errors);
    if errors.len() > before {
        return;
    }
    check_bounds(schema, value, path, errors);
    match value {
        Value::Object(map) => {
            for required in &schema.required {
                if !map.contains_key(required) {
                    errors.push(FieldError {
                        path: format!("{path}.{required}"),
                        message: "Required value".into(),
                    });
                }
            }
            for (name, child) in map {
                let child_path = format!("{path}.{name}");
                if let Some(property) = schema.properties.get(name) {
                    validate(property, child, &child_path, errors);
                } else if let Some(additional) = &schema.additional_properties {
                    validate(additional, child, &child_path, errors);
                } else if schema.x_preserve_unknown_fields != Some(true) {
                    errors.push(FieldError {
                        path: child_path,
                        message: UNKNOWN_FIELD.into(),
                    });
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for (i, item) in items.iter().enumerate() {
                    validate(item_schema, item, &format!("{path}[{i}]"), errors);
                }
            }
        }
        _ => {}
    }
    for sub in &schema.all_of {
        validate(sub, value, path, errors);
    }
    let matches = |subs: &[JSONSchemaProps]| {
        subs.iter()
            .filter(|s| {
                let mut e = Vec::new();
                validate(s, value, path, &mut e);
                e.is_empty()
            })
            .count()
    };
    if !schema.one_of.is_empty() && matches(&schema.one_of) != 1 {
        errors.push(invalid(
            path,
            value,
            "must validate one and only one schema (oneOf)",
        ));
    }
    if !schema.any_of.is_empty() && matches(&schema.any_of) == 0 {
        errors.push(invalid(
            path,
            value,
            "must validate at least one schema (anyOf)",
        ));
    }
    if let Some(not) = &schema.not
        && matches(std::slice::from_ref(not)) == 1
    {
        errors.push(invalid(path, value, "must not validate the schema (not)"));
    }
    if errors.len() == before {
        for rule in &schema.x_validations {
            check_rule(rule, value, path, errors);
        }
    }
}

fn invalid(path: &str, value: &Value, message: &str) -> FieldError {
    FieldError {
        path: path.to_string(),
        message: format!("Invalid value: {}: {message}", compact(value)),
    }
}

/// How CAPI prints a variable value it rejects as a whole (`field.Invalid(path, string(raw), ..)`):
/// the JSON text, quoted again.
pub(crate) fn raw_invalid(path: &str, value: &Value, message: &str) -> FieldError {
    FieldError {
        path: path.to_string(),
        message: format!(
            "Invalid value: {}: {message}",
            serde_json::to_string(&value.to_string()).expect("a string serializes")
        ),
    }
}

fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 80 {
        format!("{}...", &text[..77])
    } else {
        text
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check_type(schema: &JSONSchemaProps, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let actual = type_name(value);
    if schema.x_int_or_string == Some(true) {
        if !matches!(actual, "integer" | "string") {
            errors.push(FieldError {
                path: path.into(),
                message: format!("Invalid value: \"{actual}\": must be an integer or a string"),
            });
        }
        return;
    }
    let ok = match schema.type_.as_str() {
        "" => true,
        "number" => matches!(actual, "number" | "integer"),
        wanted => wanted == actual,
    };
    if !ok {
        errors.push(FieldError {
            path: path.into(),
            message: format!(
                "Invalid value: \"{actual}\": {} must be of type {}",
                path, schema.type_
            ),
        });
    }
}

fn check_bounds(schema: &JSONSchemaProps, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let mut fail = |message: String| errors.push(invalid(path, value, &message));
    if !schema.enum_.is_empty() && !schema.enum_.contains(value) {
        let allowed: Vec<String> = schema.enum_.iter().map(Value::to_string).collect();
        fail(format!("supported values: {}", allowed.join(", ")));
    }
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or_default();
            if let Some(max) = schema.maximum {
                let exclusive = schema.exclusive_maximum == Some(true);
                if x > max as f64 || (exclusive && x >= max as f64) {
                    fail(format!(
                        "should be less than {}{max}",
                        if exclusive { "" } else { "or equal to " }
                    ));
                }
            }
            if let Some(min) = schema.minimum {
                let exclusive = schema.exclusive_minimum == Some(true);
                if x < min as f64 || (exclusive && x <= min as f64) {
                    fail(format!(
                        "should be greater than {}{min}",
                        if exclusive { "" } else { "or equal to " }
                    ));
                }
            }
        }
        Value::String(s) => {
            let length = s.chars().count() as i64;
            if let Some(max) = schema.max_length
                && length > max
            {
                fail(format!("may not be longer than {max}"));
            }
            if let Some(min) = schema.min_length
                && length < min
            {
                fail(format!("should be at least {min} chars long"));
            }
            if !schema.pattern.is_empty() {
                match regex::Regex::new(&schema.pattern) {
                    Ok(re) if !re.is_match(s) => fail(format!("should match '{}'", schema.pattern)),
                    Ok(_) => {}
                    Err(e) => fail(format!(
                        "the schema's pattern '{}' does not compile: {e}",
                        schema.pattern
                    )),
                }
            }
            if let Some(message) = check_format(&schema.format, s) {
                fail(message);
            }
        }
        Value::Array(items) => {
            let count = items.len() as i64;
            if let Some(max) = schema.max_items
                && count > max
            {
                fail(format!("must have at most {max} items"));
            }
            if let Some(min) = schema.min_items
                && count < min
            {
                fail(format!("should have at least {min} items"));
            }
            if schema.unique_items == Some(true)
                && items
                    .iter()
                    .enumerate()
                    .any(|(i, a)| items[..i].contains(a))
            {
                fail("shouldn't contain duplicates".into());
            }
        }
        Value::Object(map) => {
            let count = map.len() as i64;
            if let Some(max) = schema.max_properties
                && count > max
            {
                fail(format!("must have at most {max} properties"));
            }
            if let Some(min) = schema.min_properties
                && count < min
            {
                fail(format!("should have at least {min} properties"));
            }
        }
        _ => {}
    }
}

/// The formats the API server checks that are cheap to check here; others pass.
fn check_format(format: &str, s: &str) -> Option<String> {
    let ok = match format {
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => s.split_once('/').is_some_and(|(ip, bits)| {
            ip.parse::<std::net::IpAddr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= 128)
        }),
        "uuid" => {
            s.len() == 36
                && s.chars().enumerate().all(|(i, c)| {
                    if matches!(i, 8 | 13 | 18 | 23) {
                        c == '-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                })
        }
        _ => true,
    };
    (!ok).then(|| format!("must be of format {format}"))
}

fn check_rule(rule: &ValidationRule, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    // Transition rules need the old value; on create (which is what render models) the API
    // server skips them too.
    if rule.rule.contains("oldSelf") {
        return;
    }
    let field_path = if rule.field_path.is_empty() {
        path.to_string()
    } else {
        format!("{path}{}", rule.field_path)
    };
    let program = match cel::Program::compile(&rule.rule) {
        Ok(program) => program,
        Err(e) => {
            errors.push(FieldError {
                path: field_path,
                message: format!("the CEL rule `{}` does not compile: {e}", rule.rule),
            });
            return;
        }
    };
    let mut context = cel::Context::default();
    if let Err(e) = context.add_variable("self", CelValue(value)) {
        errors.push(FieldError {
            path: field_path,
            message: format!("cannot give the value to CEL: {e}"),
        });
        return;
    }
    match program.execute(&context) {
        Ok(cel::Value::Bool(true)) => {}
        Ok(cel::Value::Bool(false)) => {
            let message = crate::apiserver::cel::failed_rule_message(
                &rule.rule,
                &rule.message,
                &rule.message_expression,
                &context,
            );
            errors.push(raw_invalid(&field_path, value, &message));
        }
        Ok(other) => errors.push(FieldError {
            path: field_path,
            message: format!(
                "the CEL rule `{}` returned {other:?}, not a bool",
                rule.rule
            ),
        }),
        Err(e) => errors.push(FieldError {
            path: field_path,
            message: format!("the CEL rule `{}` failed: {e}", rule.rule),
        }),
    }
}

/// A JSON value as Kubernetes gives it to CEL: integers are `int` (serde would pass positive
/// integers as `uint`, for which `self % 2` has no overload).
struct CelValue<'a>(&'a Value);

impl serde::Serialize for CelValue<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Number(n) => match n.as_i64() {
                Some(i) => serializer.serialize_i64(i),
                None => serializer.serialize_f64(n.as_f64().unwrap_or_default()),
            },
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&CelValue(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    out.serialize_entry(k, &CelValue(v))?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: &JSONSchemaProps, value: Value) -> Vec<String> {
        let mut errors = Vec::new();
        validate(schema, &value, "v", &mut errors);
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn types_bounds_and_required() {
        let schema = JSONSchemaProps::object(
            [
                (
                    "name".into(),
                    JSONSchemaProps {
                        min_length: Some(2),
                        pattern: "^[a-z]+$".into(),
                        ..JSONSchemaProps::string()
                    },
                ),
                (
                    "replicas".into(),
                    JSONSchemaProps {
                        minimum: Some(1),
                        maximum: Some(5),
                        ..JSONSchemaProps::integer()
                    },
                ),
                (
                    "zones".into(),
                    JSONSchemaProps {
                        unique_items: Some(true),
                        ..JSONSchemaProps::array(JSONSchemaProps::string())
                    },
                ),
            ],
            &["name"],
        );
        assert!(
            errors(
                &schema,
                json!({"name": "ab", "replicas": 3, "zones": ["a", "b"]})
            )
            .is_empty()
        );
        assert_eq!(
            errors(&schema, json!({"replicas": 3})),
            ["v.name: Required value"]
        );
        assert_eq!(
            errors(
                &schema,
                json!({"name": "A", "replicas": 9, "zones": ["a", "a"], "x": 1})
            ),
            [
                "v.name: Invalid value: \"A\": should be at least 2 chars long",
                "v.name: Invalid value: \"A\": should match '^[a-z]+$'",
                "v.replicas: Invalid value: 9: should be less than or equal to 5",
                "v.x: field not declared in schema",
                "v.zones: Invalid value: [\"a\",\"a\"]: shouldn't contain duplicates",
            ]
        );
        assert_eq!(
            errors(&schema, json!("text")),
            ["v: Invalid value: \"string\": v must be of type object"]
        );
    }

    #[test]
    fn unknown_fields_fold_into_capis_error() {
        let schema = JSONSchemaProps::object([("a".into(), JSONSchemaProps::string())], &[]);
        let value = json!({"a": "x", "b": 1, "c": {"d": 2}});
        let mut errors = Vec::new();
        validate(
            &schema,
            &value,
            "spec.topology.variables[v].value",
            &mut errors,
        );
        unknown_fields(&mut errors, "spec.topology.variables[v]", "v", &value);
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            [
                r#"spec.topology.variables[v]: Invalid value: "{\"a\":\"x\",\"b\":1,\"c\":{\"d\":2}}": failed validation: "b,c" field(s) are not specified in the variable schema of variable "v""#
            ]
        );
    }

    #[test]
    fn cel_rules_use_message_or_rule() {
        let mut schema = JSONSchemaProps::integer();
        schema.x_validations.push(ValidationRule {
            rule: "self % 2 == 0".into(),
            ..Default::default()
        });
        assert!(errors(&schema, json!(4)).is_empty());
        assert_eq!(
            errors(&schema, json!(3)),
            [r#"v: Invalid value: "3": failed rule: self % 2 == 0"#]
        );
        schema.x_validations[0].message_expression = "'odd: ' + string(self)".into();
        assert_eq!(
            errors(&schema, json!(3)),
            [r#"v: Invalid value: "3": odd: 3"#]
        );
        schema.x_validations[0].rule = "self ==".into();
        assert!(errors(&schema, json!(3))[0].contains("does not compile"));
    }

    #[test]
    fn defaults_fill_nested_properties() {
        let schema = JSONSchemaProps::object(
            [(
                "inner".into(),
                JSONSchemaProps::object(
                    [(
                        "port".into(),
                        JSONSchemaProps::integer().with_default(json!(6443)),
                    )],
                    &[],
                ),
            )],
            &[],
        );
        let mut value = json!({"inner": {}});
        apply_defaults(&schema, &mut value);
        assert_eq!(value, json!({"inner": {"port": 6443}}));
    }
}
