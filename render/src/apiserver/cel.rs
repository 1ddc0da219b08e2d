//! `x-kubernetes-validations`: each rule runs on every non-null value its schema node covers,
//! with `self` typed as Kubernetes types it (`integer` → int, `number` → double, objects and
//! maps → maps); a false rule is an error at the value's path plus the rule's `fieldPath`, with
//! its `reason`; a rule that fails to evaluate (a missing key) is an invalid value at the value's
//! path. Rules the engine here cannot run (a function outside CEL's standard library, a
//! transition rule) are returned as not checked, never passed silently.

use super::schema::{Additional, Rule, Schema};
use super::{ErrorType, FieldError, NIL_PATH};
use cel::Value as Cel;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A rule that was not checked, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unchecked {
    /// The path of the value it is on.
    pub field: String,
    /// The rule.
    pub rule: String,
    /// Why it was not checked.
    pub reason: String,
}

/// Runs every rule of `schema` over `value` (the whole object).
pub fn validate(
    schema: &Schema,
    value: &Value,
    errors: &mut Vec<FieldError>,
    unchecked: &mut Vec<Unchecked>,
) {
    walk(None, schema, value, errors, unchecked);
}

fn child(path: Option<&str>, key: &str) -> String {
    match path {
        None => key.to_string(),
        Some(p) => format!("{p}.{key}"),
    }
}

fn walk(
    path: Option<&str>,
    schema: &Schema,
    value: &Value,
    errors: &mut Vec<FieldError>,
    unchecked: &mut Vec<Unchecked>,
) {
    if value.is_null() {
        return;
    }
    if !schema.validations.is_empty() {
        let here = path.unwrap_or(NIL_PATH);
        let this = to_cel(schema, value);
        for rule in &schema.validations {
            check(here, path, rule, &this, errors, unchecked);
        }
    }
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if let Some(property) = schema.properties.get(key) {
                    walk(Some(&child(path, key)), property, v, errors, unchecked);
                } else if let Some(Additional::Schema(additional)) = &schema.additional_properties {
                    let p = format!("{}[{key}]", path.unwrap_or(""));
                    walk(Some(&p), additional, v, errors, unchecked);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for (i, item) in items.iter().enumerate() {
                    let p = format!("{}[{i}]", path.unwrap_or(""));
                    walk(Some(&p), item_schema, item, errors, unchecked);
                }
            }
        }
        _ => {}
    }
}

/// A JSON value as Kubernetes hands it to CEL, by its schema.
fn to_cel(schema: &Schema, value: &Value) -> Cel {
    match value {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Number(n) => {
            if schema.type_ == "number" {
                Cel::Float(n.as_f64().unwrap_or_default())
            } else if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else {
                Cel::Float(n.as_f64().unwrap_or_default())
            }
        }
        Value::Array(items) => {
            let empty = Schema::default();
            let item_schema = schema.items.as_deref().unwrap_or(&empty);
            Cel::List(Arc::new(
                items.iter().map(|i| to_cel(item_schema, i)).collect(),
            ))
        }
        Value::Object(map) => {
            let empty = Schema::default();
            let mut out: HashMap<cel::objects::Key, Cel> = HashMap::new();
            for (k, v) in map {
                let field_schema = schema.field(k).unwrap_or(&empty);
                out.insert(
                    cel::objects::Key::String(Arc::new(k.clone())),
                    to_cel(field_schema, v),
                );
            }
            Cel::Map(cel::objects::Map { map: Arc::new(out) })
        }
    }
}

/// The functions of Kubernetes' CEL libraries that CRDs use and CEL's standard library lacks:
/// `isIP` and `isCIDR` (Go's `netip` parsing: no zones, no leading zeros).
fn kubernetes_library(context: &mut cel::Context) {
    context
        .add_function("isIP", |s: Arc<String>| is_ip(&s))
        .expect("isIP is not a standard function");
    context
        .add_function("isCIDR", |s: Arc<String>| {
            s.split_once('/').is_some_and(|(ip, bits)| {
                let Some(v6) = is_ip(ip).then(|| ip.contains(':')) else {
                    return false;
                };
                !bits.is_empty()
                    && bits.bytes().all(|b| b.is_ascii_digit())
                    && (bits == "0" || !bits.starts_with('0'))
                    && bits
                        .parse::<u32>()
                        .is_ok_and(|n| n <= if v6 { 128 } else { 32 })
            })
        })
        .expect("isCIDR is not a standard function");
}

fn is_ip(s: &str) -> bool {
    !s.contains('%') && s.parse::<std::net::IpAddr>().is_ok()
}

/// The message of a rule that evaluated to false, as the API server gives it: its
/// `messageExpression` evaluated (when it gives a string), else its `message`, else
/// `failed rule: <rule>`.
pub(crate) fn failed_rule_message(
    rule: &str,
    message: &str,
    message_expression: &str,
    context: &cel::Context,
) -> String {
    let evaluated = (!message_expression.is_empty())
        .then(|| cel::Program::compile(message_expression).ok())
        .flatten()
        .and_then(|p| match p.execute(context) {
            Ok(Cel::String(s)) => Some(s.to_string()),
            _ => None,
        });
    evaluated.unwrap_or_else(|| {
        if message.is_empty() {
            format!("failed rule: {rule}")
        } else {
            message.to_string()
        }
    })
}

/// A rule's `fieldPath` (`.a.b`, `['x']`) as the field path it adds.
fn normalized_field_path(field_path: &str) -> String {
    let mut out = String::new();
    let mut rest = field_path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&r[..end]);
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']").unwrap_or(r.len());
            out.push_str(&format!("[{}]", &r[..end]));
            rest = r.get(end + 2..).unwrap_or("");
        } else {
            out.push_str(rest);
            break;
        }
    }
    out
}

fn check(
    here: &str,
    path: Option<&str>,
    rule: &Rule,
    this: &Cel,
    errors: &mut Vec<FieldError>,
    unchecked: &mut Vec<Unchecked>,
) {
    let skip = |reason: String, unchecked: &mut Vec<Unchecked>| {
        unchecked.push(Unchecked {
            field: here.to_string(),
            rule: rule.rule.clone(),
            reason,
        })
    };
    if rule.rule.contains("oldSelf") {
        // A transition rule: on create the API server runs it only with optionalOldSelf.
        if rule.optional_old_self == Some(true) {
            skip(
                "a transition rule with optionalOldSelf (run on create with no old value)".into(),
                unchecked,
            );
        }
        return;
    }
    let program = match cel::Program::compile(&rule.rule) {
        Ok(program) => program,
        Err(e) => return skip(format!("does not compile here: {e}"), unchecked),
    };
    let mut context = cel::Context::default();
    kubernetes_library(&mut context);
    context.add_variable_from_value("self", this.clone());
    match program.execute(&context) {
        Ok(Cel::Bool(true)) => {}
        Ok(Cel::Bool(false)) => {
            let message = failed_rule_message(
                &rule.rule,
                &rule.message,
                &rule.message_expression,
                &context,
            );
            let field = if rule.field_path.is_empty() {
                here.to_string()
            } else {
                child(path, &normalized_field_path(&rule.field_path))
            };
            let type_ = match rule.reason.as_str() {
                "FieldValueForbidden" => ErrorType::Forbidden,
                "FieldValueRequired" => ErrorType::Required,
                "FieldValueDuplicate" => ErrorType::Duplicate,
                _ => ErrorType::Invalid,
            };
            // `field.Duplicate` carries no detail; the others carry the rule's message.
            let message = if type_ == ErrorType::Duplicate {
                String::new()
            } else {
                message
            };
            errors.push(FieldError {
                field,
                type_,
                message,
            });
        }
        Ok(other) => skip(format!("answered {other:?}, not a bool"), unchecked),
        Err(cel::ExecutionError::UndeclaredReference(name)) => skip(
            format!("uses `{name}`, which CEL's standard library here lacks"),
            unchecked,
        ),
        Err(cel::ExecutionError::FunctionError { function, message })
            if message.contains("not found") =>
        {
            skip(format!("`{function}`: {message}"), unchecked)
        }
        Err(e) => errors.push(FieldError {
            field: here.to_string(),
            type_: ErrorType::Invalid,
            message: format!(
                "{} evaluating rule: {}",
                go_words(&e),
                rule_error_string(rule)
            ),
        }),
    }
}

/// `ruleErrorString`: the rule's message, or without one its expression, trimmed.
fn rule_error_string(rule: &Rule) -> &str {
    if rule.message.is_empty() {
        rule.rule.trim()
    } else {
        rule.message.trim()
    }
}

/// An evaluation error in cel-go's words where they are known (cel-go's `common/types/err.go`
/// and `interpreter/attributes.go`: a missing field, `no such key: <name>`, division and
/// modulus by zero, integer overflows, `index out of bounds: <index>`), else as the CEL crate
/// words it.
pub(super) fn go_words(error: &cel::ExecutionError) -> String {
    use cel::objects::Value;
    match error {
        cel::ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        cel::ExecutionError::DivisionByZero(_) => "division by zero".into(),
        cel::ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
        // Without its chrono feature the CEL crate has no timestamps nor durations: the
        // overflows are of integers.
        cel::ExecutionError::Overflow(_, left, right) => {
            if matches!(left, Value::UInt(_)) || matches!(right, Value::UInt(_)) {
                "unsigned integer overflow".into()
            } else {
                "integer overflow".into()
            }
        }
        // cel-go indexes a list through its attribute qualifiers (`refQualify`), whose error
        // is `missingIndex`, the index printed with `%v`.
        cel::ExecutionError::IndexOutOfBounds(Value::Int(index)) => {
            format!("index out of bounds: {index}")
        }
        cel::ExecutionError::IndexOutOfBounds(Value::UInt(index)) => {
            format!("index out of bounds: {index}")
        }
        other => other.to_string(),
    }
}
