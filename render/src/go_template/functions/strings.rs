//! sprig's string functions (and `strslice`, which several families share).

use super::super::format::{go_quote, print};
use super::super::unicode::{is_letter, to_lower, to_title, to_upper};
use super::super::value::{Elem, MapElem, Value, go_bytes, go_string};
use super::{Out, Table, Ty, boolean, int, sig, string, strval, text};
use std::collections::BTreeMap;

pub(super) const TABLE: Table = &[
    sig("hello", &[], None),
    sig("trim", &[Ty::Str], None),
    sig("upper", &[Ty::Str], None),
    sig("lower", &[Ty::Str], None),
    sig("title", &[Ty::Str], None),
    sig("untitle", &[Ty::Str], None),
    sig("substr", &[Ty::Int, Ty::Int, Ty::Str], None),
    sig("repeat", &[Ty::Int, Ty::Str], None),
    sig("trimall", &[Ty::Str, Ty::Str], None),
    sig("trimAll", &[Ty::Str, Ty::Str], None),
    sig("trimSuffix", &[Ty::Str, Ty::Str], None),
    sig("trimPrefix", &[Ty::Str, Ty::Str], None),
    sig("nospace", &[Ty::Str], None),
    sig("contains", &[Ty::Str, Ty::Str], None),
    sig("hasPrefix", &[Ty::Str, Ty::Str], None),
    sig("hasSuffix", &[Ty::Str, Ty::Str], None),
    sig("quote", &[], Some(Ty::Any)),
    sig("squote", &[], Some(Ty::Any)),
    sig("cat", &[], Some(Ty::Any)),
    sig("indent", &[Ty::Int, Ty::Str], None),
    sig("nindent", &[Ty::Int, Ty::Str], None),
    sig("replace", &[Ty::Str, Ty::Str, Ty::Str], None),
    sig("plural", &[Ty::Str, Ty::Str, Ty::Int], None),
    sig("toString", &[Ty::Any], None),
    sig("trunc", &[Ty::Int, Ty::Str], None),
    sig("split", &[Ty::Str, Ty::Str], None),
    sig("splitList", &[Ty::Str, Ty::Str], None),
    sig("splitn", &[Ty::Str, Ty::Int, Ty::Str], None),
    sig("toStrings", &[Ty::Any], None),
    sig("join", &[Ty::Str, Ty::Any], None),
    sig("sortAlpha", &[Ty::Any], None),
    sig("fail", &[Ty::Str], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    let s = |i: usize| text(&args[i]);
    match name {
        "hello" => string("Hello!"),
        "trim" => string(s(0).trim_matches(is_go_space)),
        "upper" => string(s(0).chars().map(to_upper).collect::<String>()),
        "lower" => string(s(0).chars().map(to_lower).collect::<String>()),
        "title" => string(title(s(0))),
        "untitle" => string(untitle(s(0))),
        "substr" => substring(int(&args[0]), int(&args[1]), s(2)),
        "repeat" => {
            let n = int(&args[0]);
            if n < 0 {
                return Err("strings: negative Repeat count".into());
            }
            if n as u128 * s(1).len() as u128 > 1 << 26 {
                return Err("render refuses a repeat longer than 64 MiB".into());
            }
            string(s(1).repeat(n as usize))
        }
        "trimall" | "trimAll" => string(s(1).trim_matches(|c| s(0).contains(c))),
        "trimSuffix" => string(s(1).strip_suffix(s(0)).unwrap_or(s(1))),
        "trimPrefix" => string(s(1).strip_prefix(s(0)).unwrap_or(s(1))),
        // goutils reads the text byte by byte, each byte as the character of that code point.
        // (a text without white space comes back as it is).
        "nospace" => {
            let kept: String = go_bytes(s(0))
                .iter()
                .copied()
                .map(char::from)
                .filter(|c| !is_go_space(*c))
                .collect();
            if kept.chars().count() == s(0).len() {
                return string(s(0));
            }
            string(kept)
        }
        "contains" => boolean(s(1).contains(s(0))),
        "hasPrefix" => boolean(s(1).starts_with(s(0))),
        "hasSuffix" => boolean(s(1).ends_with(s(0))),
        "quote" => string(
            args.iter()
                .filter(|a| !a.is_nil_interface())
                .map(|a| go_quote(&strval(a), false))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "squote" => string(
            args.iter()
                .filter(|a| !a.is_nil_interface())
                .map(|a| format!("'{}'", print(a)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "cat" => string(
            args.iter()
                .filter(|a| !a.is_nil_interface())
                .map(print)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "indent" | "nindent" if int(&args[0]) < 0 => Err("strings: negative Repeat count".into()),
        "indent" | "nindent"
            if int(&args[0]) as u128 * (s(1).matches('\n').count() as u128 + 1) > 1 << 26 =>
        {
            Err("render refuses an indented text longer than 64 MiB".into())
        }
        "indent" => string(indent(int(&args[0]), s(1))),
        "nindent" => string(format!("\n{}", indent(int(&args[0]), s(1)))),
        "replace" => string(s(2).replace(s(0), s(1))),
        "plural" => string(if int(&args[2]) == 1 { s(0) } else { s(1) }),
        "toString" => string(strval(&args[0])),
        "trunc" => {
            let (c, t) = (int(&args[0]), go_bytes(s(1)));
            let len = t.len() as i64;
            // Go's int arithmetic wraps.
            let cut = if c < 0 && len.wrapping_add(c) > 0 {
                &t[(len + c) as usize..]
            } else if c >= 0 && len > c {
                &t[..c as usize]
            } else {
                &t[..]
            };
            string(go_string(cut))
        }
        "split" => Ok(indexed(split(s(1), s(0), -1))),
        "splitList" => Ok(Value::strings(split(s(1), s(0), -1))),
        "splitn" => Ok(indexed(split(s(2), s(0), int(&args[1])))),
        "toStrings" => Ok(strslice_value(&args[0], false)),
        "join" => string(strslice(&args[1]).join(s(0))),
        "sortAlpha" => match &args[0] {
            Value::Slice(_) => Ok(strslice_value(&args[0], true)),
            other => Ok(Value::strings([strval(other)])),
        },
        "fail" => Err(s(0).to_string()),
        _ => unreachable!("{name} is in the table"),
    }
}

/// Go's `unicode.IsSpace`.
pub(super) fn is_go_space(c: char) -> bool {
    c.is_whitespace()
}

/// Go's (deprecated) `strings.Title`.
fn title(s: &str) -> String {
    let separator = |r: char| {
        if (r as u32) <= 0x7f {
            !(r.is_ascii_alphanumeric() || r == '_')
        } else if is_letter(r) || r.is_numeric() {
            false
        } else {
            r.is_whitespace()
        }
    };
    let mut prev = ' ';
    s.chars()
        .map(|r| {
            let out = if separator(prev) { to_title(r) } else { r };
            prev = r;
            out
        })
        .collect()
}

/// goutils' `Uncapitalize`: the first letter of each space-separated word lowered.
fn untitle(s: &str) -> String {
    let mut next = true;
    s.chars()
        .map(|c| {
            if is_go_space(c) {
                next = true;
                c
            } else if next {
                next = false;
                to_lower(c)
            } else {
                c
            }
        })
        .collect()
}

fn substring(start: i64, end: i64, s: &str) -> Out {
    let b = go_bytes(s);
    let len = b.len() as i64;
    let range = |from: i64, to: i64| -> Result<&[u8], String> {
        if from < 0 || to > len || from > to {
            return Err(format!(
                "runtime error: slice bounds out of range [{from}:{to}]"
            ));
        }
        Ok(&b[from as usize..to as usize])
    };
    let cut = if start < 0 {
        range(0, end)?
    } else if end < 0 || end > len {
        range(start, len)?
    } else {
        range(start, end)?
    };
    string(go_string(cut))
}

fn indent(spaces: i64, v: &str) -> String {
    let pad = " ".repeat(spaces.max(0) as usize);
    format!("{pad}{}", v.replace('\n', &format!("\n{pad}")))
}

/// Go's `strings.SplitN` (`n < 0`: all).
pub(super) fn split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let limit = if n < 0 || n as usize > chars.len() {
            chars.len()
        } else {
            n as usize
        };
        let mut out: Vec<String> = chars[..limit.saturating_sub(1)]
            .iter()
            .map(|c| c.to_string())
            .collect();
        if limit > 0 {
            out.push(chars[limit - 1..].iter().collect());
        }
        return out;
    }
    if n < 0 {
        return s.split(sep).map(String::from).collect();
    }
    s.splitn(n as usize, sep).map(String::from).collect()
}

fn indexed(parts: Vec<String>) -> Value {
    let map: BTreeMap<String, Value> = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| (format!("_{i}"), Value::str(p)))
        .collect();
    Value::map(MapElem::Str, map)
}

/// sprig's `strslice` as a `[]string` value, with the capacity Go's gives it (a `[]string` is
/// returned as it is; other slices are copied into one of their length), sorted if asked.
fn strslice_value(v: &Value, sorted: bool) -> Value {
    let mut items = strslice(v);
    if sorted {
        items.sort();
    }
    let cap = match v {
        Value::Slice(s) if s.elem == Elem::Str => s.cap,
        Value::Slice(s) => s.items.len(),
        Value::Missing | Value::Nil => 0,
        _ => 1,
    };
    Value::strings_with_cap(items, cap)
}

/// sprig's `strslice`: a list's non-nil elements as strings, one value as a one-element list.
pub(super) fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::Slice(s) => s
            .items
            .iter()
            .filter(|i| s.elem == Elem::Str || !i.is_nil_interface())
            .map(strval)
            .collect(),
        Value::Missing | Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}
