//! sprig's JSON functions, with Go's `encoding/json` output: sorted keys, HTML characters
//! escaped (except `toRawJson`), floats as Go writes them, nil slices and maps as `null`.

use super::super::format::format_float;
use super::super::value::{Value, raw_byte_of};
use super::{Out, Table, Ty, sig, string, text};

pub(super) const TABLE: Table = &[
    sig("fromJson", &[Ty::Str], None),
    sig("mustFromJson", &[Ty::Str], None),
    sig("toJson", &[Ty::Any], None),
    sig("mustToJson", &[Ty::Any], None),
    sig("toPrettyJson", &[Ty::Any], None),
    sig("mustToPrettyJson", &[Ty::Any], None),
    sig("toRawJson", &[Ty::Any], None),
    sig("mustToRawJson", &[Ty::Any], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "fromJson" | "mustFromJson" => {
            match serde_json::from_str::<serde_json::Value>(text(&args[0])) {
                Ok(json) => Ok(Value::from_json(&json)),
                Err(e) if name == "mustFromJson" => Err(e.to_string()),
                Err(_) => Ok(Value::Nil),
            }
        }
        _ => {
            let html = !name.contains("Raw");
            let indent = name.contains("Pretty");
            let mut out = String::new();
            match encode(&args[0], html, indent, 0, &mut out) {
                Ok(()) => string(out),
                Err(e) if name.starts_with("must") || name == "toRawJson" => Err(e),
                Err(_) => string(""),
            }
        }
    }
}

fn encode_string(s: &str, html: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if html => out.push_str(&format!("\\u00{:02x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            // A byte that is not UTF-8: encoding/json writes U+FFFD in its place.
            c if raw_byte_of(c).is_some() => out.push_str("\\ufffd"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u00{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `encoding/json` float encoding.
fn encode_float(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!(
            "json: unsupported value: {}",
            super::super::format::print(&Value::Float(f))
        ));
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut s = format_float(f, 'e', -1);
        let n = s.len();
        if n >= 4 && &s[n - 4..n - 2] == "e-" && &s[n - 2..n - 1] == "0" {
            s.remove(n - 2);
        }
        return Ok(s);
    }
    Ok(format_float(f, 'f', -1))
}

fn newline(out: &mut String, indent: bool, depth: usize) {
    if indent {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    }
}

fn encode(
    v: &Value,
    html: bool,
    indent: bool,
    depth: usize,
    out: &mut String,
) -> Result<(), String> {
    if depth > super::super::format::MAX_DEPTH {
        return Err(format!(
            "json: unsupported value: encountered a cycle via {}",
            v.type_name()
        ));
    }
    match v {
        Value::Missing | Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint(u, _) => out.push_str(&u.to_string()),
        Value::Float(f) => out.push_str(&encode_float(*f)?),
        Value::Str(s) => encode_string(s, html, out),
        Value::Version(version, _) => encode_string(&version.to_string(), html, out),
        Value::Time(time) => {
            let text = time
                .rfc3339()
                .map_err(|e| format!("json: error calling MarshalJSON for type time.Time: {e}"))?;
            encode_string(&text, html, out)
        }
        Value::Slice(s) if s.nil => out.push_str("null"),
        Value::Slice(s) => {
            out.push('[');
            for (i, item) in s.items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                encode(item, html, indent, depth + 1, out)?;
            }
            if !s.items.is_empty() {
                newline(out, indent, depth);
            }
            out.push(']');
        }
        Value::Map(m) if m.nil => out.push_str("null"),
        Value::Map(m) => {
            out.push('{');
            let entries = m.entries.borrow();
            for (i, (k, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                encode_string(k, html, out);
                out.push(':');
                if indent {
                    out.push(' ');
                }
                encode(item, html, indent, depth + 1, out)?;
            }
            if !entries.is_empty() {
                newline(out, indent, depth);
            }
            out.push('}');
        }
    }
    Ok(())
}
