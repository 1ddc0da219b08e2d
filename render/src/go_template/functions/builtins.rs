//! text/template's own functions (sprig's `slice` replaces the builtin one).

use super::super::format::{go_quote, sprint, sprintf, sprintln};
use super::super::value::{MapElem, UintType, Value, go_bytes, go_string};
use super::{Out, Table, Ty, boolean, sig, string};

pub(super) const TABLE: Table = &[
    sig("and", &[Ty::Reflect], Some(Ty::Reflect)),
    sig("or", &[Ty::Reflect], Some(Ty::Reflect)),
    sig("not", &[Ty::Reflect], None),
    sig("call", &[Ty::Reflect], Some(Ty::Reflect)),
    sig("html", &[], Some(Ty::Any)),
    sig("js", &[], Some(Ty::Any)),
    sig("urlquery", &[], Some(Ty::Any)),
    sig("index", &[Ty::Reflect], Some(Ty::Reflect)),
    sig("slice", &[Ty::Reflect], Some(Ty::Reflect)),
    sig("len", &[Ty::Reflect], None),
    sig("print", &[], Some(Ty::Any)),
    sig("printf", &[Ty::Str], Some(Ty::Any)),
    sig("println", &[], Some(Ty::Any)),
    sig("eq", &[Ty::Reflect], Some(Ty::Reflect)),
    sig("ne", &[Ty::Reflect, Ty::Reflect], None),
    sig("lt", &[Ty::Reflect, Ty::Reflect], None),
    sig("le", &[Ty::Reflect, Ty::Reflect], None),
    sig("gt", &[Ty::Reflect, Ty::Reflect], None),
    sig("ge", &[Ty::Reflect, Ty::Reflect], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "not" => boolean(!args[0].truth()),
        "call" => match &args[0] {
            Value::Missing | Value::Nil => Err("call of nil".into()),
            other => Err(format!("non-function of type {}", other.type_name())),
        },
        "html" => string(html_escape(&eval_args(&args))),
        "js" => string(js_escape(&eval_args(&args))),
        "urlquery" => string(query_escape(&eval_args(&args))),
        "index" => index(&args[0], &args[1..]),
        "slice" => slice(&args[0], &args[1..]),
        "len" => match &args[0] {
            Value::Str(s) => Ok(Value::Int(go_bytes(s).len() as i64)),
            Value::Slice(s) => Ok(Value::Int(s.items.len() as i64)),
            Value::Map(m) => Ok(Value::Int(m.entries.borrow().len() as i64)),
            Value::Missing | Value::Nil => Err("len of nil pointer".into()),
            Value::Version(_, true) => Err("len of type semver.Version".into()),
            other => Err(format!("len of type {}", other.type_name())),
        },
        "print" => string(sprint(&args)),
        "println" => string(sprintln(&args)),
        "printf" => string(sprintf(args[0].as_str().unwrap_or_default(), &args[1..])),
        "eq" => eq(&args[0], &args[1..]).map(Value::Bool),
        "ne" => eq(&args[0], &args[1..]).map(|b| Value::Bool(!b)),
        "lt" => lt(&args[0], &args[1]).map(Value::Bool),
        "le" => Ok(Value::Bool(
            lt(&args[0], &args[1])? || eq(&args[0], &args[1..])?,
        )),
        "gt" => Ok(Value::Bool(
            !(lt(&args[0], &args[1])? || eq(&args[0], &args[1..])?),
        )),
        "ge" => lt(&args[0], &args[1]).map(|b| Value::Bool(!b)),
        _ => unreachable!("{name} is in the table"),
    }
}

/// text/template's `evalArgs`: one string as it is, anything else through `fmt.Sprint`.
fn eval_args(args: &[Value]) -> String {
    match args {
        [Value::Str(s)] => s.to_string(),
        // `printableValue` of a nil argument is "<no value>", a string to `fmt.Sprint`.
        _ => sprint(
            &args
                .iter()
                .map(|a| {
                    if a.is_nil_interface() {
                        Value::str("<no value>")
                    } else {
                        a.clone()
                    }
                })
                .collect::<Vec<_>>(),
        ),
    }
}

fn html_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{fffd}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn js_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u00{:02X}", c as u32)),
            c if (c as u32) < 0x80 => out.push(c),
            c if super::super::format::is_print(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub(super) fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn index(item: &Value, indexes: &[Value]) -> Out {
    let mut item = match item {
        Value::Missing | Value::Nil => return Err("index of untyped nil".into()),
        v => v.clone(),
    };
    for index in indexes {
        let index = match index {
            Value::Nil => Value::Missing,
            v => v.clone(),
        };
        item = match &item {
            Value::Nil => return Err("index of nil pointer".into()),
            Value::Slice(s) => s.items[position(&index, s.items.len(), false)?].clone(),
            Value::Str(s) => Value::Uint(
                u64::from(go_bytes(s)[position(&index, go_bytes(s).len(), false)?]),
                UintType::U8,
            ),
            Value::Map(m) => match &index {
                Value::Str(k) => m
                    .entries
                    .borrow()
                    .get(&**k)
                    .cloned()
                    .unwrap_or(match m.elem {
                        MapElem::Any => Value::Nil,
                        MapElem::Str => Value::str(""),
                    }),
                Value::Missing => return Err("value is nil; should be of type string".into()),
                other => {
                    return Err(format!(
                        "value has type {}; should be string",
                        other.type_name()
                    ));
                }
            },
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

/// text/template's own `slice` (sprig's replaces it where sprig's functions are given).
fn slice(item: &Value, indexes: &[Value]) -> Out {
    if item.is_nil_interface() {
        return Err("slice of untyped nil".into());
    }
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let (len, cap) = match item {
        Value::Str(s) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            (go_bytes(s).len(), go_bytes(s).len())
        }
        Value::Slice(s) => (s.items.len(), s.cap),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0, len, cap];
    for (i, index) in indexes.iter().enumerate() {
        idx[i] = position(index, cap, true)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match item {
        Value::Str(s) => Value::str(go_string(&go_bytes(s)[idx[0]..idx[1]])),
        Value::Slice(s) => {
            let items = (idx[0]..idx[1])
                .map(|i| s.items.get(i).cloned().unwrap_or_else(|| s.elem.zero()))
                .collect();
            let new_cap = if indexes.len() == 3 { idx[2] } else { cap } - idx[0];
            Value::slice_with_cap(s.elem, items, new_cap)
        }
        _ => unreachable!("checked above"),
    })
}

/// text/template's `indexArg`: an integer index within `cap` (`slice` allows `cap` itself).
fn position(index: &Value, len: usize, inclusive: bool) -> Result<usize, String> {
    let x: i128 = match index {
        Value::Int(i) | Value::Int64(i) => *i as i128,
        Value::Uint(u, _) => *u as i64 as i128,
        Value::Missing | Value::Nil => return Err("cannot index slice/array with nil".into()),
        other => {
            return Err(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            ));
        }
    };
    if x < 0 || x > len as i128 || (!inclusive && x == len as i128) {
        return Err(format!("index out of range: {x}"));
    }
    Ok(x as usize)
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Basic {
    Invalid,
    Bool,
    Int,
    Uint,
    Float,
    Str,
}

fn basic(v: &Value) -> Basic {
    match v {
        Value::Bool(_) => Basic::Bool,
        Value::Int(_) | Value::Int64(_) => Basic::Int,
        Value::Uint(_, _) => Basic::Uint,
        Value::Float(_) => Basic::Float,
        Value::Str(_) => Basic::Str,
        _ => Basic::Invalid,
    }
}

fn valid(v: &Value) -> bool {
    !matches!(v, Value::Missing | Value::Nil)
}

/// text/template's `eq`.
fn eq(a: &Value, others: &[Value]) -> Result<bool, String> {
    if others.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = basic(a);
    for b in others {
        let k2 = basic(b);
        let truth = if k1 != k2 {
            match (a, b) {
                (Value::Int(x) | Value::Int64(x), Value::Uint(y, _)) => *x >= 0 && *x as u64 == *y,
                (Value::Uint(x, _), Value::Int(y) | Value::Int64(y)) => *y >= 0 && *x == *y as u64,
                _ if valid(a) && valid(b) => {
                    return Err(format!(
                        "incompatible types for comparison: {} and {}",
                        a.type_name(),
                        b.type_name()
                    ));
                }
                _ => false,
            }
        } else {
            match (a, b) {
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Float(x), Value::Float(y)) => x == y,
                (Value::Int(x) | Value::Int64(x), Value::Int(y) | Value::Int64(y)) => x == y,
                (Value::Str(x), Value::Str(y)) => x == y,
                (Value::Uint(x, _), Value::Uint(y, _)) => x == y,
                _ => {
                    let same_kind = a.kind_name() == b.kind_name() || !valid(a) || !valid(b);
                    if !same_kind {
                        return Err(format!(
                            "non-comparable types {}: {}, {}: {}",
                            super::super::format::print(a),
                            a.type_name(),
                            b.type_name(),
                            super::super::format::print(b)
                        ));
                    }
                    let is_nil = |v: &Value| v.is_go_nil();
                    if is_nil(a) || is_nil(b) {
                        is_nil(a) == is_nil(b)
                    } else {
                        match (a, b) {
                            (Value::Version(x, true), Value::Version(y, true)) => {
                                std::rc::Rc::ptr_eq(x, y)
                            }
                            (Value::Version(x, false), Value::Version(y, false)) => x == y,
                            (Value::Time(x), Value::Time(y)) => x.same(y),
                            _ => {
                                return Err(format!(
                                    "non-comparable type {}: {}",
                                    super::super::format::print(b),
                                    b.type_name()
                                ));
                            }
                        }
                    }
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

/// text/template's `lt`.
fn lt(a: &Value, b: &Value) -> Result<bool, String> {
    let (k1, k2) = (basic(a), basic(b));
    if k1 == Basic::Invalid || k2 == Basic::Invalid {
        return Err("invalid type for comparison".into());
    }
    if k1 != k2 {
        return match (a, b) {
            (Value::Int(x) | Value::Int64(x), Value::Uint(y, _)) => Ok(*x < 0 || (*x as u64) < *y),
            (Value::Uint(x, _), Value::Int(y) | Value::Int64(y)) => Ok(*y >= 0 && *x < *y as u64),
            _ => Err(format!(
                "incompatible types for comparison: {} and {}",
                a.type_name(),
                b.type_name()
            )),
        };
    }
    Ok(match (a, b) {
        (Value::Bool(_), _) => return Err("invalid type for comparison".into()),
        (Value::Float(x), Value::Float(y)) => x < y,
        (Value::Int(x) | Value::Int64(x), Value::Int(y) | Value::Int64(y)) => x < y,
        (Value::Uint(x, _), Value::Uint(y, _)) => x < y,
        (Value::Str(x), Value::Str(y)) => x < y,
        _ => false,
    })
}

/// `%q` of a string, for callers outside this family.
#[allow(dead_code)]
pub(super) fn quoted(s: &str) -> String {
    go_quote(s, false)
}
