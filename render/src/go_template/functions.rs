//! The functions templates call: Go's builtins and sprig's, by name.

use super::exec::{Val, number, print, truthy};
use super::format::{go_quote, go_type, printf_verb};
use serde_json::Value;

/// The functions render knows; a template using another one is rejected with this list.
pub const FUNCTIONS: &[&str] = &[
    "and",
    "or",
    "not",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "len",
    "index",
    "print",
    "printf",
    "default",
    "empty",
    "quote",
    "squote",
    "upper",
    "lower",
    "trim",
    "trimPrefix",
    "trimSuffix",
    "replace",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "join",
    "toString",
    "ternary",
    "add1",
    "add",
    "sub",
    "mul",
    "div",
    "mod",
    "max",
    "min",
];

/// sprig's integer arithmetic reads its arguments with `cast.ToInt64`: floats are truncated,
/// strings parsed (0 when they are not integers), booleans are 0 or 1, nil is 0.
pub(super) fn to_int64(value: &Val) -> i64 {
    match value {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or_default(),
        Some(Value::String(s)) => s.trim().parse().unwrap_or_default(),
        Some(Value::Bool(b)) => i64::from(*b),
        _ => 0,
    }
}

pub(super) fn call(name: &str, args: Vec<Val>) -> Result<Val, String> {
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("{name} takes {n} arguments, got {}", args.len()))
        }
    };
    let text = |i: usize| print(&args[i]);
    let bool_value = |b: bool| Ok(Some(Value::Bool(b)));
    let string_value = |s: String| Ok(Some(Value::String(s)));
    // text/template compares numbers of one kind only: an int written in the template and a
    // float64 from the data are "incompatible types for comparison" (write `1.0`).
    let comparable = |a: &Val, b: &Val| match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) if x.is_f64() != y.is_f64() => {
            Err(format!(
                "error calling {name}: incompatible types for comparison: {} and {}",
                go_type(a),
                go_type(b)
            ))
        }
        _ => Ok(()),
    };
    let equal = |a: &Val, b: &Val| match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        _ => a == b,
    };
    match name {
        "not" => {
            arity(1)?;
            bool_value(!truthy(&args[0]))
        }
        "and" => Ok(args
            .iter()
            .find(|a| !truthy(a))
            .or(args.last())
            .cloned()
            .flatten()),
        "or" => Ok(args
            .iter()
            .find(|a| truthy(a))
            .or(args.last())
            .cloned()
            .flatten()),
        "eq" => {
            if args.len() < 2 {
                return Err("eq takes at least 2 arguments".into());
            }
            for b in &args[1..] {
                comparable(&args[0], b)?;
            }
            bool_value(args[1..].iter().any(|b| equal(&args[0], b)))
        }
        "ne" => {
            arity(2)?;
            comparable(&args[0], &args[1])?;
            bool_value(!equal(&args[0], &args[1]))
        }
        "lt" | "le" | "gt" | "ge" => {
            arity(2)?;
            comparable(&args[0], &args[1])?;
            let ordering = match (&args[0], &args[1]) {
                (Some(Value::String(a)), Some(Value::String(b))) => a.cmp(b),
                _ => number(&args[0])?
                    .partial_cmp(&number(&args[1])?)
                    .ok_or("not comparable")?,
            };
            bool_value(match name {
                "lt" => ordering.is_lt(),
                "le" => ordering.is_le(),
                "gt" => ordering.is_gt(),
                _ => ordering.is_ge(),
            })
        }
        "len" => {
            arity(1)?;
            let n = match &args[0] {
                Some(Value::String(s)) => s.len(),
                Some(Value::Array(a)) => a.len(),
                Some(Value::Object(o)) => o.len(),
                other => return Err(format!("len of {}", print(other))),
            };
            Ok(Some(Value::from(n)))
        }
        "index" => {
            let mut current = args.first().cloned().flatten();
            for key in &args[1..] {
                current = match (current, key) {
                    (Some(Value::Array(_)), Some(Value::Number(n))) if n.is_f64() => {
                        return Err(
                            "error calling index: cannot index slice/array with type float64"
                                .into(),
                        );
                    }
                    (Some(Value::Array(items)), Some(Value::Number(n))) => Some(
                        items
                            .get(n.as_u64().unwrap_or(u64::MAX) as usize)
                            .cloned()
                            .ok_or("index out of range")?,
                    ),
                    (Some(Value::Object(map)), Some(Value::String(k))) => map.get(k).cloned(),
                    (other, _) => return Err(format!("can't index {}", print(&other))),
                };
            }
            Ok(current)
        }
        // fmt.Sprint: a space between operands when neither is a string.
        "print" => {
            let mut out = String::new();
            for (i, arg) in args.iter().enumerate() {
                let is_string = |v: &Val| matches!(v, Some(Value::String(_)));
                if i > 0 && !is_string(arg) && !is_string(&args[i - 1]) {
                    out.push(' ');
                }
                out.push_str(&print(arg));
            }
            string_value(out)
        }
        "toString" => {
            arity(1)?;
            string_value(text(0))
        }
        "printf" => {
            let format = args.first().map(print).ok_or("printf needs a format")?;
            let mut out = String::new();
            let mut values = args[1..].iter();
            let mut chars = format.chars();
            while let Some(c) = chars.next() {
                if c != '%' {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('%') => out.push('%'),
                    Some(verb @ ('s' | 'd' | 'v' | 'q')) => match values.next() {
                        Some(value) => out.push_str(&printf_verb(verb, value)?),
                        None => out.push_str(&format!("%!{verb}(MISSING)")),
                    },
                    other => {
                        return Err(format!(
                            "printf verb %{} is not supported by render",
                            other.unwrap_or(' ')
                        ));
                    }
                }
            }
            string_value(out)
        }
        "default" => {
            arity(2)?;
            Ok(if truthy(&args[1]) {
                args[1].clone()
            } else {
                args[0].clone()
            })
        }
        "empty" => {
            arity(1)?;
            bool_value(!truthy(&args[0]))
        }
        "ternary" => {
            arity(3)?;
            Ok(if truthy(&args[2]) {
                args[0].clone()
            } else {
                args[1].clone()
            })
        }
        // sprig: nil arguments are left out.
        "quote" => string_value(
            args.iter()
                .filter(|a| !matches!(a, None | Some(Value::Null)))
                .map(|a| go_quote(&print(a)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "squote" => string_value(
            args.iter()
                .filter(|a| !matches!(a, None | Some(Value::Null)))
                .map(|a| format!("'{}'", print(a)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "upper" => {
            arity(1)?;
            string_value(text(0).to_uppercase())
        }
        "lower" => {
            arity(1)?;
            string_value(text(0).to_lowercase())
        }
        "trim" => {
            arity(1)?;
            string_value(text(0).trim().to_string())
        }
        "trimPrefix" => {
            arity(2)?;
            string_value(
                text(1)
                    .strip_prefix(&text(0))
                    .map(String::from)
                    .unwrap_or_else(|| text(1)),
            )
        }
        "trimSuffix" => {
            arity(2)?;
            string_value(
                text(1)
                    .strip_suffix(&text(0))
                    .map(String::from)
                    .unwrap_or_else(|| text(1)),
            )
        }
        "replace" => {
            arity(3)?;
            string_value(text(2).replace(&text(0), &text(1)))
        }
        "contains" => {
            arity(2)?;
            bool_value(text(1).contains(&text(0)))
        }
        "hasPrefix" => {
            arity(2)?;
            bool_value(text(1).starts_with(&text(0)))
        }
        "hasSuffix" => {
            arity(2)?;
            bool_value(text(1).ends_with(&text(0)))
        }
        "join" => {
            arity(2)?;
            let items = match &args[1] {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| print(&Some(v.clone())))
                    .collect::<Vec<_>>(),
                other => vec![print(other)],
            };
            string_value(items.join(&text(0)))
        }
        "add1" => {
            arity(1)?;
            Ok(Some(Value::from(to_int64(&args[0]).wrapping_add(1))))
        }
        "add" | "mul" | "max" | "min" if !args.is_empty() => {
            let mut values = args.iter().map(to_int64);
            let first = values.next().unwrap_or_default();
            Ok(Some(Value::from(values.fold(first, |a, b| match name {
                "add" => a.wrapping_add(b),
                "mul" => a.wrapping_mul(b),
                "max" => a.max(b),
                _ => a.min(b),
            }))))
        }
        "sub" | "div" | "mod" => {
            arity(2)?;
            let (a, b) = (to_int64(&args[0]), to_int64(&args[1]));
            if b == 0 && name != "sub" {
                return Err(format!(
                    "error calling {name}: runtime error: integer divide by zero"
                ));
            }
            Ok(Some(Value::from(match name {
                "sub" => a.wrapping_sub(b),
                "div" => a.wrapping_div(b),
                _ => a.wrapping_rem(b),
            })))
        }
        _ => Err(format!("function `{name}` is not supported by render")),
    }
}
