//! Template output read back as CAPI reads it: `sigs.k8s.io/yaml` (go.yaml.in/yaml/v2, YAML 1.1
//! plain scalars) into JSON. So `0644` is the integer 420, `0x1F` is 31, `yes`/`on`/`y` are
//! `true`, `1_000` is 1000, `08` is the float 8, map keys become strings (`yes:` is `"true"`),
//! only the first document counts, and `.inf`/`.nan` are errors (JSON has no such numbers).
//! The rules are `resolve` of go.yaml.in/yaml/v2 and `convertToJSONableObject` of
//! sigs.k8s.io/yaml; each case is pinned in the tests by what Go printed.

use granit_parser::{Event, Parser, ScalarStyle, Tag};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// A YAML value before CAPI turns it into JSON: scalars keep their YAML 1.1 type.
#[derive(Debug, Clone)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// Reads `text` as CAPI reads a rendered template (`yaml.Unmarshal` into `apiextensionsv1.JSON`).
///
/// ```
/// use capi_ext_render::yaml11::from_str;
/// use serde_json::json;
/// assert_eq!(from_str("mode: 0644\nenabled: yes").unwrap(), json!({"mode": 420, "enabled": true}));
/// ```
pub fn from_str(text: &str) -> Result<Value, String> {
    let mut events = Vec::new();
    for event in Parser::new_from_str(text) {
        let (event, _) = event.map_err(|e| e.to_string())?;
        events.push(event);
    }
    let mut reader = Reader {
        events: events.into_iter().peekable(),
        anchors: HashMap::new(),
    };
    // Only the first document counts, as in yaml.Unmarshal.
    loop {
        match reader.events.next() {
            Some(Event::DocumentStart(..)) => break,
            Some(Event::StreamEnd) | None => return Ok(Value::Null),
            Some(_) => {}
        }
    }
    if matches!(reader.events.peek(), Some(Event::DocumentEnd)) {
        return Ok(Value::Null);
    }
    let node = reader.node()?;
    to_json(node)
}

struct Reader<'a> {
    events: std::iter::Peekable<std::vec::IntoIter<Event<'a>>>,
    anchors: HashMap<usize, Node>,
}

impl Reader<'_> {
    fn node(&mut self) -> Result<Node, String> {
        let (node, anchor) = match self.events.next() {
            Some(Event::Scalar(text, style, anchor, tag)) => {
                (scalar(&text, style, tag.as_deref())?, anchor)
            }
            Some(Event::SequenceStart(_, anchor, tag)) => {
                no_tag(tag.as_deref(), "seq")?;
                let mut items = Vec::new();
                while !matches!(self.events.peek(), Some(Event::SequenceEnd) | None) {
                    items.push(self.node()?);
                }
                self.events.next();
                (Node::Seq(items), anchor)
            }
            Some(Event::MappingStart(_, anchor, tag)) => {
                no_tag(tag.as_deref(), "map")?;
                let mut entries = Vec::new();
                while !matches!(self.events.peek(), Some(Event::MappingEnd) | None) {
                    let key = self.node()?;
                    let value = self.node()?;
                    entries.push((key, value));
                }
                self.events.next();
                (Node::Map(entries), anchor)
            }
            Some(Event::Alias(id)) => {
                return self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| format!("unknown anchor {id}"));
            }
            Some(Event::Anchor(..)) | Some(Event::UnresolvedAlias(_)) => {
                return Err("unsupported YAML alias".into());
            }
            #[allow(unreachable_patterns)]
            other => return Err(format!("unexpected YAML event {other:?}")),
        };
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        Ok(node)
    }
}

fn no_tag(tag: Option<&Tag>, kind: &str) -> Result<(), String> {
    match tag {
        None => Ok(()),
        Some(t) if t.core_suffix() == Some(kind) => Ok(()),
        Some(t) => Err(format!(
            "the YAML tag {}{} is not supported by render",
            t.handle(),
            t.suffix()
        )),
    }
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Node, String> {
    match tag.map(|t| (t.core_suffix(), t)) {
        None if style == ScalarStyle::Plain => Ok(resolve(text)),
        None => Ok(Node::Str(text.to_string())),
        Some((Some("str"), _)) => Ok(Node::Str(text.to_string())),
        Some((Some(kind @ ("int" | "float" | "bool" | "null")), _)) => {
            let node = resolve(text);
            match (kind, node) {
                ("int", n @ (Node::Int(_) | Node::Uint(_)))
                | ("bool", n @ Node::Bool(_))
                | ("null", n @ Node::Null)
                | ("float", n @ Node::Float(_)) => Ok(n),
                ("float", Node::Int(i)) => Ok(Node::Float(i as f64)),
                ("float", Node::Uint(u)) => Ok(Node::Float(u as f64)),
                _ => Err(format!("cannot decode `{text}` as a !!{kind}")),
            }
        }
        Some((_, t)) => Err(format!(
            "the YAML tag {}{} is not supported by render",
            t.handle(),
            t.suffix()
        )),
    }
}

/// go.yaml.in/yaml/v2 `resolve` for an untagged plain scalar.
fn resolve(text: &str) -> Node {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Node::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Node::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Node::Null,
        ".nan" | ".NaN" | ".NAN" => return Node::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Node::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Node::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match text.as_bytes()[0] {
        b'.' => text
            .parse::<f64>()
            .map_or_else(|_| Node::Str(text.into()), Node::Float),
        b'0'..=b'9' | b'+' | b'-' => {
            if is_timestamp(text) {
                // A timestamp decoded into interface{} stays a string in yaml.v2.
                return Node::Str(text.into());
            }
            let plain: String = text.chars().filter(|c| *c != '_').collect();
            if let Some(i) = go_parse_int(&plain) {
                return match i64::try_from(i) {
                    Ok(i) => Node::Int(i),
                    // ParseUint takes no sign.
                    Err(_) if !plain.starts_with(['+', '-']) && i <= u64::MAX as i128 => {
                        Node::Uint(i as u64)
                    }
                    Err(_) => float_or_string(&plain, text),
                };
            }
            float_or_string(&plain, text)
        }
        _ => Node::Str(text.into()),
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, then ParseFloat.
fn float_or_string(plain: &str, text: &str) -> Node {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let body = plain.strip_prefix(['+', '-']).unwrap_or(plain);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if mantissa_ok
        && exponent_ok
        && let Ok(f) = plain.parse::<f64>()
    {
        return Node::Float(f);
    }
    Node::Str(text.into())
}

/// Go's `strconv.ParseInt(s, 0, 64)` digits (base from the prefix: 0x, 0o, 0b, or a leading 0
/// for octal), as a wide integer; range is checked by the caller.
fn go_parse_int(s: &str) -> Option<i128> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    if magnitude > u64::MAX as u128 + 1 {
        return None;
    }
    let value = magnitude as i128;
    Some(if negative { -value } else { value })
}

/// yaml.v2's timestamp shape: four digits, a dash, then one of its date/time layouts.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && {
        let date: Vec<&str> = s[5..].splitn(3, '-').collect();
        date.len() == 2 && date[0].len() <= 2 && date[0].bytes().all(|c| c.is_ascii_digit()) && {
            let day_and_rest = date[1];
            let day_len = day_and_rest.bytes().take_while(u8::is_ascii_digit).count();
            (1..=2).contains(&day_len)
                && (day_len == day_and_rest.len()
                    || matches!(day_and_rest.as_bytes()[day_len], b'T' | b't' | b' '))
        }
    }
}

/// sigs.k8s.io/yaml's conversion to JSON, then Go's encoding of it.
fn to_json(node: Node) -> Result<Value, String> {
    Ok(match node {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(b),
        Node::Int(i) => Value::from(i),
        Node::Uint(u) => Value::from(u),
        Node::Float(f) if !f.is_finite() => {
            return Err(format!(
                "error converting YAML to JSON: json: unsupported value: {}",
                crate::go_template::go_float(f)
            ));
        }
        // encoding/json writes an integral float64 without a fraction (1e+06 becomes 1000000).
        Node::Float(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
            Value::from(f as i64)
        }
        Node::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        Node::Str(s) => Value::String(s),
        Node::Seq(items) => Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?),
        Node::Map(entries) => {
            let mut map = Map::new();
            for (key, value) in entries {
                map.insert(key_string(key)?, to_json(value)?);
            }
            Value::Object(map)
        }
    })
}

/// How sigs.k8s.io/yaml names a non-string key (floats with 32-bit precision, as it does).
fn key_string(key: Node) -> Result<String, String> {
    Ok(match key {
        Node::Str(s) => s,
        Node::Int(i) => i.to_string(),
        Node::Uint(u) => u.to_string(),
        Node::Bool(b) => b.to_string(),
        Node::Float(f) if f.is_nan() => ".nan".into(),
        Node::Float(f) if f.is_infinite() => if f > 0.0 { ".inf" } else { "-.inf" }.into(),
        Node::Float(f) => crate::go_template::go_float((f as f32) as f64),
        other => return Err(format!("unsupported map key: {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each expectation is what `sigs.k8s.io/yaml.Unmarshal` into a `json.RawMessage` gave in Go.
    #[test]
    fn reads_yaml_as_capi_does() {
        for (yaml, go) in [
            ("0644", "420"),
            ("0x1F", "31"),
            ("0o17", "15"),
            ("0b101", "5"),
            ("-0b11", "-3"),
            ("+12", "12"),
            ("1_000", "1000"),
            ("08", "8"),
            ("1e+06", "1000000"),
            ("1e6", "1000000"),
            ("1.5", "1.5"),
            (".5", "0.5"),
            ("5.", "5"),
            ("yes", "true"),
            ("No", "false"),
            ("on", "true"),
            ("OFF", "false"),
            ("y", "true"),
            ("n", "false"),
            ("True", "true"),
            ("~", "null"),
            ("null", "null"),
            ("2001-12-14", "\"2001-12-14\""),
            (
                "2001-12-14T21:59:43.10-05:00",
                "\"2001-12-14T21:59:43.10-05:00\"",
            ),
            ("18446744073709551615", "18446744073709551615"),
            ("9223372036854775808", "9223372036854775808"),
            ("'0644'", "\"0644\""),
            ("\"yes\"", "\"yes\""),
            ("abc", "\"abc\""),
            ("1.0", "1"),
            ("0.0000001", "1e-7"),
            ("+.5", "0.5"),
            ("-0", "0"),
            ("0.1e2", "10"),
            ("1_0.5", "10.5"),
            ("0x_1F", "31"),
            ("- a\n- 0644\n- yes", "[\"a\",420,true]"),
            (
                "a: 1\nyes: 2\n1.5: x\n3: y",
                "{\"1.5\":\"x\",\"3\":true,\"a\":1,\"true\":2}",
            ),
            ("x: &a 1\ny: *a", "{\"true\":1,\"x\":1}"),
            ("!!str 0644", "\"0644\""),
            ("|\n  0644\n", "\"0644\\n\""),
            ("---\n1\n---\n2", "1"),
        ] {
            let want: Value = serde_json::from_str(go).unwrap();
            assert_eq!(from_str(yaml), Ok(want), "{yaml:?}");
        }
        for (yaml, go) in [
            ("-.inf", "unsupported value: -Inf"),
            (".nan", "unsupported value: NaN"),
            (".inf", "unsupported value: +Inf"),
        ] {
            assert!(from_str(yaml).unwrap_err().contains(go), "{yaml}");
        }
    }
}
