//! The API server's schema validator for custom resources (kube-openapi's `validate` package, as
//! apiextensions-apiserver runs it): every validator of a schema node runs on the value, errors
//! with the same text are reported once, `anyOf`/`oneOf` keep the failures of the alternative
//! that matched most, and each error becomes the field error the API server answers
//! (`kubeOpenAPIResultToFieldErrors`): junctor failures and range checks land on the root
//! (`<nil>`), type and format failures are `FieldValueTypeInvalid`.

use super::formats;
use super::schema::{Additional, Schema};
use super::{ErrorType, FieldError, NIL_PATH};
use serde_json::Value;

/// kube-openapi's error codes that the API server tells apart.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Code {
    InvalidType,
    Required,
    TooLong,
    Enum,
    MaxItems,
    TooManyProperties,
    /// Any other `errors.Validation` (bounds, lengths, pattern, unique, properties…).
    Other,
    /// Not an `errors.Validation` (junctors, range checks): reported at the root.
    Composite,
}

#[derive(Debug, Clone)]
struct Error {
    code: Code,
    name: String,
    /// go-openapi's message (errors with the same one are reported once).
    text: String,
    /// The detail the API server's field error carries instead, when it is not `text`
    /// (apiextensions' `kubeOpenAPIResultToFieldErrors`).
    detail: Option<String>,
}

#[derive(Debug, Default)]
struct Res {
    errors: Vec<Error>,
    matches: usize,
}

impl Res {
    fn err(code: Code, name: &str, text: String) -> Res {
        Res::err_detail(code, name, text, None)
    }

    fn err_detail(code: Code, name: &str, text: String, detail: Option<String>) -> Res {
        Res {
            errors: vec![Error {
                code,
                name: name.to_string(),
                text,
                detail,
            }],
            matches: 0,
        }
    }

    fn add(&mut self, error: Error) {
        if !self.errors.iter().any(|e| e.text == error.text) {
            self.errors.push(error);
        }
    }

    fn merge(&mut self, other: Option<Res>) {
        if let Some(other) = other {
            for e in other.errors {
                self.add(e);
            }
            self.matches += other.matches;
        }
    }

    fn valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Validates `data` (the whole object, after pruning and defaulting) against the root schema.
pub fn validate(schema: &Schema, data: &Value) -> Vec<FieldError> {
    let result = node(schema, "", data);
    result
        .errors
        .into_iter()
        .map(|e| {
            let field = if e.code == Code::Composite || e.name.is_empty() || e.name == "." {
                NIL_PATH.to_string()
            } else {
                e.name.trim_start_matches('.').to_string()
            };
            let type_ = match e.code {
                Code::Required => ErrorType::Required,
                Code::Enum => ErrorType::NotSupported,
                Code::TooLong => ErrorType::TooLong,
                Code::MaxItems | Code::TooManyProperties => ErrorType::TooMany,
                Code::InvalidType => ErrorType::TypeInvalid,
                Code::Other | Code::Composite => ErrorType::Invalid,
            };
            FieldError {
                field,
                type_,
                message: e.detail.unwrap_or(e.text),
            }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Bool,
    String,
    Int,
    Float,
    Slice,
    Map,
}

fn kind_of(data: &Value) -> Option<Kind> {
    Some(match data {
        Value::Null => return None,
        Value::Bool(_) => Kind::Bool,
        Value::String(_) => Kind::String,
        Value::Number(n) if n.is_i64() => Kind::Int,
        Value::Number(_) => Kind::Float,
        Value::Array(_) => Kind::Slice,
        Value::Object(_) => Kind::Map,
    })
}

fn float_of(data: &Value) -> f64 {
    data.as_f64().unwrap_or_default()
}

/// One `SchemaValidator.Validate`.
fn node(schema: &Schema, path: &str, data: &Value) -> Res {
    let mut result = Res::default();
    let types = schema.types();
    let format = schema.checked_format();
    let type_applies = !types.is_empty() || format.is_some();
    let Some(kind) = kind_of(data) else {
        if type_applies {
            result.merge(type_check(schema, &types, format.as_deref(), path, data));
        }
        result.merge(enum_check(schema, path, data));
        return result;
    };
    if type_applies {
        result.merge(type_check(schema, &types, format.as_deref(), path, data));
        result.matches += 1;
    }
    result.merge(Some(junctors(schema, path, data)));
    result.matches += 1;
    if kind == Kind::String {
        result.merge(string_check(schema, path, data));
        result.matches += 1;
        if let Some(format) = &format
            && !matches!(format.as_str(), "int32" | "int64" | "float" | "double")
        {
            if !formats::valid(format, data.as_str().unwrap_or_default()) {
                result.merge(Some(Res::err(
                    Code::InvalidType,
                    path,
                    // The format as the schema writes it (`date-time`), not as it is checked.
                    format!(
                        "{path} in body must be of type {}: {}",
                        schema.format,
                        quote(data.as_str().unwrap_or_default())
                    ),
                )));
            }
            result.matches += 1;
        }
    }
    if matches!(kind, Kind::Int | Kind::Float) {
        result.merge(Some(number_check(schema, &types, path, data, kind)));
        result.matches += 1;
    }
    if let (Kind::Slice, Value::Array(items)) = (kind, data) {
        result.merge(Some(slice_check(schema, path, items)));
        result.matches += 1;
    }
    result.merge(enum_check(schema, path, data));
    result.matches += 1;
    if let (Kind::Map, Value::Object(map)) = (kind, data) {
        result.merge(Some(object_check(schema, path, map)));
        result.matches += 1;
    }
    result.matches += 1;
    result
}

/// Go's `%q` of a string, enough for error texts (they are compared, not shown to Go).
/// `field.TooLong`'s detail.
fn too_long(max: i64) -> String {
    format!(
        "may not be more than {max} {}",
        if max == 1 { "byte" } else { "bytes" }
    )
}

/// `field.TooMany`'s detail.
fn too_many(max: i64) -> String {
    format!(
        "must have at most {max} {}",
        if max == 1 { "item" } else { "items" }
    )
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

fn type_name(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Bool => ("boolean", ""),
        Kind::String => ("string", ""),
        Kind::Int => ("integer", "int64"),
        Kind::Float => ("number", "float64"),
        Kind::Slice => ("array", ""),
        Kind::Map => ("object", ""),
    }
}

/// swag's `IsFloat64AJSONInteger`.
pub(crate) fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f.fract() == 0.0 {
        return true;
    }
    let g = f.trunc();
    if f < 0.0 || g == 0.0 {
        return false;
    }
    (f - g).abs() / (f.abs() + g.abs()) < 1e-9
}

fn type_check(
    schema: &Schema,
    types: &[&str],
    format: Option<&str>,
    path: &str,
    data: &Value,
) -> Option<Res> {
    let joined = types.join(",");
    let Some(kind) = kind_of(data) else {
        if !types.is_empty() && !types.contains(&"null") && !schema.nullable {
            return Some(Res::err(
                Code::InvalidType,
                path,
                format!("{path} in body must be of type {joined}: \"null\""),
            ));
        }
        return Some(Res::default());
    };
    let (sch_type, sch_format) = type_name(kind);
    let has = |t: &str| types.contains(&t);
    let is_float_int = sch_type == "number" && is_json_integer(float_of(data)) && has("integer");
    let is_int_float = sch_type == "integer" && has("number");
    if let Some(format) = format
        && kind != Kind::String
        && kind != Kind::Slice
        && !(has(sch_type) || sch_format == format || is_float_int || is_int_float)
    {
        return Some(Res::err(
            Code::InvalidType,
            path,
            format!(
                "{path} in body must be of type {}: {}",
                schema.format,
                quote(sch_format)
            ),
        ));
    }
    if !(has("number") || has("integer"))
        && format.is_some()
        && matches!(kind, Kind::String | Kind::Slice)
    {
        return Some(Res {
            errors: Vec::new(),
            matches: 1,
        });
    }
    if !(has(sch_type) || is_float_int || is_int_float) {
        return Some(Res::err(
            Code::InvalidType,
            path,
            format!(
                "{path} in body must be of type {joined}: {}",
                quote(sch_type)
            ),
        ));
    }
    Some(Res {
        errors: Vec::new(),
        matches: 1,
    })
}

fn junctors(schema: &Schema, path: &str, data: &Value) -> Res {
    let mut main = Res::default();
    if !schema.any_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        let mut succeeded = false;
        for alternative in &schema.any_of {
            let result = node(alternative, path, data);
            if result.valid() {
                best = None;
                succeeded = true;
                first_success.get_or_insert(result);
                break;
            }
            if best.as_ref().is_none_or(|b| result.matches > b.matches) {
                best = Some(result);
            }
        }
        if !succeeded {
            main.add(Error {
                code: Code::Composite,
                name: path.into(),
                text: format!("{} must validate at least one schema (anyOf)", quote(path)),
                detail: None,
            });
        }
        if best.is_some() {
            main.merge(best);
        } else {
            main.merge(first_success);
        }
    }
    if !schema.one_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        let mut validated = 0;
        for alternative in &schema.one_of {
            let result = node(alternative, path, data);
            if result.valid() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(result);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| result.matches > b.matches) {
                best = Some(result);
            }
        }
        if validated != 1 {
            let more = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.add(Error {
                code: Code::Composite,
                name: path.into(),
                text: format!(
                    "{} must validate one and only one schema (oneOf). {more}",
                    quote(path)
                ),
                detail: None,
            });
            main.merge(best);
        } else {
            main.merge(first_success);
        }
    }
    if !schema.all_of.is_empty() {
        let mut validated = 0;
        for part in &schema.all_of {
            let result = node(part, path, data);
            if result.valid() {
                validated += 1;
            }
            main.merge(Some(result));
        }
        if validated != schema.all_of.len() {
            let more = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(Error {
                code: Code::Composite,
                name: path.into(),
                text: format!(
                    "{} must validate all the schemas (allOf){more}",
                    quote(path)
                ),
                detail: None,
            });
        }
    }
    if let Some(not) = &schema.not
        && node(not, path, data).valid()
    {
        main.add(Error {
            code: Code::Composite,
            name: path.into(),
            text: format!("{} must not validate the schema (not)", quote(path)),
            detail: None,
        });
    }
    main.matches += 1;
    main
}

fn string_check(schema: &Schema, path: &str, data: &Value) -> Option<Res> {
    let s = data.as_str()?;
    let chars = s.chars().count() as i64;
    if let Some(max) = schema.max_length
        && chars > max
    {
        return Some(Res::err_detail(
            Code::TooLong,
            path,
            format!("{path} in body should be at most {max} chars long"),
            Some(too_long(max)),
        ));
    }
    if let Some(min) = schema.min_length
        && chars < min
    {
        return Some(Res::err(
            Code::Other,
            path,
            format!("{path} in body should be at least {min} chars long"),
        ));
    }
    match schema.pattern_regex() {
        Some(Ok(re)) if !re.is_match(s) => Some(Res::err(
            Code::Other,
            path,
            format!(
                "{path} in body should match '{}'",
                schema.pattern.as_deref().unwrap_or_default()
            ),
        )),
        Some(Err(e)) => Some(Res::err(
            Code::Other,
            path,
            format!(
                "{path} in body should match '{}, but pattern is invalid: {e}'",
                schema.pattern.as_deref().unwrap_or_default()
            ),
        )),
        _ => None,
    }
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 64)` for the range checks: whether the decimal text
/// of the value parses as the wanted integer or float width.
fn in_range(value: &Value, type_name: &str, format: &str) -> bool {
    let as_int = |bits: u32| -> bool {
        match value {
            Value::Number(n) if n.is_i64() => {
                let i = n.as_i64().expect("checked");
                bits == 64 || i32::try_from(i).is_ok()
            }
            _ => {
                let f = float_of(value);
                // The decimal text has a fraction, or is out of range: ParseInt fails.
                if f.fract() != 0.0 || !f.is_finite() {
                    return false;
                }
                if bits == 32 {
                    (i32::MIN as f64..=i32::MAX as f64).contains(&f)
                } else {
                    (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f)
                }
            }
        }
    };
    match type_name {
        "integer" => as_int(if format == "int32" { 32 } else { 64 }),
        _ => {
            if format == "float" {
                float_of(value).abs() <= f32::MAX as f64
            } else {
                true
            }
        }
    }
}

fn number_check(schema: &Schema, types: &[&str], path: &str, data: &Value, kind: Kind) -> Res {
    let mut res = Res::default();
    let (type_name, format) = match types {
        ["integer"] => (
            "integer",
            schema
                .checked_format()
                .filter(|f| f == "int32" || f == "int64")
                .unwrap_or_default(),
        ),
        ["number"] => (
            "number",
            schema
                .checked_format()
                .filter(|f| f == "float" || f == "double")
                .unwrap_or_default(),
        ),
        _ => ("", String::new()),
    };
    let range_error = |prefix: &str| {
        let text = if format.is_empty() {
            format!("{prefix} value must be of type {type_name} (default format) in {path}")
        } else {
            format!("{prefix} value must be of type {type_name} with format {format} in {path}")
        };
        Error {
            code: Code::Composite,
            name: String::new(),
            text,
            detail: None,
        }
    };
    if !in_range(data, type_name, &format) {
        res.add(range_error("Checked"));
    }
    let int = (kind == Kind::Int).then(|| data.as_i64().expect("an int"));
    let f = float_of(data);
    let mut multiple = Res::default();
    if let Some(factor) = schema.multiple_of {
        let bound = Value::from(factor);
        if !in_range(&bound, type_name, &format) {
            multiple.add(range_error("MultipleOf"));
        }
        let fails = if multiple.valid()
            && let Some(i) = int
        {
            let factor_int = factor as i64;
            if factor_int <= 0 {
                Some(format!(
                    "factor MultipleOf declared for {path} must be positive: {factor_int}"
                ))
            } else {
                (i.wrapping_div(factor_int).wrapping_mul(factor_int) != i)
                    .then(|| format!("{path} in body should be a multiple of {factor_int}"))
            }
        } else if factor <= 0.0 {
            Some(format!(
                "factor MultipleOf declared for {path} must be positive: {factor}"
            ))
        } else {
            let m = if factor < 1.0 {
                1.0 / factor * f
            } else {
                f / factor
            };
            (!is_json_integer(m))
                .then(|| format!("{path} in body should be a multiple of {factor}"))
        };
        if let Some(text) = fails {
            multiple.add(Error {
                code: Code::Other,
                name: path.into(),
                text,
                detail: None,
            });
        }
    }
    let mut minimum = Res::default();
    if let Some(min) = schema.minimum {
        let exclusive = schema.exclusive_minimum;
        if !in_range(&Value::from(min), type_name, &format) {
            minimum.add(range_error("Minimum boundary"));
        }
        let fails = match int {
            Some(i) if minimum.valid() => {
                let m = min as i64;
                (!exclusive && i < m) || (exclusive && i <= m)
            }
            _ => (!exclusive && f < min) || (exclusive && f <= min),
        };
        if fails {
            let op = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            minimum.add(Error {
                code: Code::Other,
                name: path.into(),
                text: format!("{path} in body should be {op} {min}"),
                detail: None,
            });
        }
    }
    let mut maximum = Res::default();
    if let Some(max) = schema.maximum {
        let exclusive = schema.exclusive_maximum;
        if !in_range(&Value::from(max), type_name, &format) {
            maximum.add(range_error("Maximum boundary"));
        }
        let fails = match int {
            Some(i) if maximum.valid() => {
                let m = max as i64;
                (!exclusive && i > m) || (exclusive && i >= m)
            }
            _ => (!exclusive && f > max) || (exclusive && f >= max),
        };
        if fails {
            let op = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            maximum.add(Error {
                code: Code::Other,
                name: path.into(),
                text: format!("{path} in body should be {op} {max}"),
                detail: None,
            });
        }
    }
    res.merge(Some(multiple));
    res.merge(Some(minimum));
    res.merge(Some(maximum));
    res.matches += 1;
    res
}

fn slice_check(schema: &Schema, path: &str, items: &[Value]) -> Res {
    let mut result = Res::default();
    if let Some(item_schema) = &schema.items {
        for (i, item) in items.iter().enumerate() {
            result.merge(Some(node(item_schema, &format!("{path}[{i}]"), item)));
        }
    }
    let size = items.len() as i64;
    if let Some(min) = schema.min_items
        && size < min
    {
        result.add(Error {
            code: Code::Other,
            name: path.into(),
            text: format!("{path} in body should have at least {min} items"),
            detail: None,
        });
    }
    if let Some(max) = schema.max_items
        && size > max
    {
        result.add(Error {
            code: Code::MaxItems,
            name: path.into(),
            text: format!("{path} in body should have at most {max} items"),
            detail: Some(too_many(max)),
        });
    }
    if schema.unique_items {
        let duplicate = items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| go_deep_equal(a, b)));
        if duplicate {
            result.add(Error {
                code: Code::Other,
                name: path.into(),
                text: format!("{path} in body shouldn't contain duplicates"),
                detail: None,
            });
        }
    }
    result.matches += 1;
    result
}

/// `reflect.DeepEqual` on decoded JSON: an `int64` never equals a `float64`.
fn go_deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_i64() != y.is_i64() {
                return false;
            }
            match (x.as_i64(), y.as_i64()) {
                (Some(p), Some(q)) => p == q,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| go_deep_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| go_deep_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The enum check, with reflect's conversions: an integer converts to a float enum value and
/// to a string one (as a rune), a float to an integer one (truncated).
fn enum_check(schema: &Schema, path: &str, data: &Value) -> Option<Res> {
    let values = schema.enum_.as_ref().filter(|v| !v.is_empty())?;
    if !data.is_null() {
        for allowed in values {
            if enum_matches(data, allowed) {
                return None;
            }
        }
    }
    let listed: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let supported: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => quote(s),
            other => quote(&other.to_string()),
        })
        .collect();
    Some(Res::err_detail(
        Code::Enum,
        path,
        format!("{path} in body should be one of [{}]", listed.join(" ")),
        Some(if supported.is_empty() {
            String::new()
        } else {
            format!("supported values: {}", supported.join(", "))
        }),
    ))
}

fn enum_matches(data: &Value, allowed: &Value) -> bool {
    match (data, allowed) {
        (Value::Number(d), Value::Number(a)) => match (d.as_i64(), a.as_i64()) {
            (Some(x), Some(y)) => x == y,
            // int64 → float64
            (Some(x), None) => Some(x as f64) == a.as_f64(),
            // float64 → int64 (truncated, saturating as on amd64 for the values that matter)
            (None, Some(y)) => d.as_f64().is_some_and(|f| f as i64 == y),
            (None, None) => d.as_f64() == a.as_f64(),
        },
        (Value::Number(d), Value::String(s)) => d.as_i64().is_some_and(|i| {
            let rune = u32::try_from(i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            *s == rune.to_string()
        }),
        _ => go_deep_equal(data, allowed),
    }
}

fn object_check(schema: &Schema, path: &str, map: &serde_json::Map<String, Value>) -> Res {
    let mut res = Res::default();
    let keys = map.len() as i64;
    if let Some(min) = schema.min_properties
        && keys < min
    {
        res.add(Error {
            code: Code::Other,
            name: path.into(),
            text: format!("{path} in body should have at least {min} properties"),
            detail: None,
        });
    }
    if let Some(max) = schema.max_properties
        && keys > max
    {
        res.add(Error {
            code: Code::TooManyProperties,
            name: path.into(),
            text: format!("{path} in body should have at most {max} properties"),
            detail: Some(too_many(max)),
        });
    }
    match &schema.additional_properties {
        Some(Additional::Allows(false)) => {
            for key in map.keys() {
                if !schema.properties.contains_key(key) {
                    res.add(Error {
                        code: Code::Other,
                        name: path.into(),
                        text: format!("{path}.{key} in body is a forbidden property"),
                        detail: None,
                    });
                }
            }
        }
        Some(Additional::Schema(additional)) => {
            for (key, value) in map {
                if !schema.properties.contains_key(key) {
                    res.merge(Some(node(additional, &format!("{path}.{key}"), value)));
                }
            }
        }
        _ => {}
    }
    for (name, property) in &schema.properties {
        if let Some(value) = map.get(name) {
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            res.merge(Some(node(property, &child, value)));
        }
    }
    for required in &schema.required {
        if !map.contains_key(required) {
            let name = format!("{path}.{required}");
            res.add(Error {
                code: Code::Required,
                text: format!("{name} in body is required"),
                detail: Some(String::new()),
                name,
            });
        }
    }
    res
}
