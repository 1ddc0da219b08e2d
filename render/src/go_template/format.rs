//! Go's formatting: `%v` of floats, `strconv.Quote`, the type names and verbs of `fmt.Sprintf`.

use super::exec::{Val, print};
use serde_json::Value;

/// Go's `%v` of a float64: the shortest digits that read back the same, in `%e` form when
/// the exponent is below -4 or at least 6 (`1e+06`, `1.5e-05`), plain otherwise (`123456`, `0.5`).
///
/// ```
/// use capi_ext_render::go_template::go_float;
/// assert_eq!(go_float(1000000.0), "1e+06");
/// assert_eq!(go_float(123456.0), "123456");
/// assert_eq!(go_float(0.00001), "1e-05");
/// ```
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let scientific = format!("{:e}", f.abs());
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..6).contains(&exponent) {
        let (e_sign, e_abs) = if exponent < 0 {
            ('-', -exponent)
        } else {
            ('+', exponent)
        };
        return format!("{sign}{mantissa}e{e_sign}{e_abs:02}");
    }
    let point = exponent + 1;
    let plain = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    };
    format!("{sign}{plain}")
}

/// Go's type name of a value, as `fmt` prints it in `%!d(float64=2)`.
pub(super) fn go_type(value: &Val) -> &'static str {
    match value {
        None | Some(Value::Null) => "<nil>",
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(n)) if n.is_f64() => "float64",
        Some(Value::Number(_)) => "int",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "[]interface {}",
        Some(Value::Object(_)) => "map[string]interface {}",
    }
}

/// Go's `strconv.Quote` (what `%q` and sprig's `quote` print).
pub(super) fn go_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One `printf` verb applied as Go's `fmt` applies it; a combination render cannot reproduce
/// exactly is an error.
pub(super) fn printf_verb(verb: char, value: &Val) -> Result<String, String> {
    let bad = || format!("%!{verb}({}={})", go_type(value), print(value));
    Ok(match (verb, value) {
        ('v', _) => print(value),
        ('s', Some(Value::String(s))) => s.clone(),
        ('q', Some(Value::String(s))) => go_quote(s),
        ('d', Some(Value::Number(n))) if !n.is_f64() => n.to_string(),
        ('s' | 'q' | 'd', Some(Value::Number(_) | Value::Bool(_)))
        | ('d', Some(Value::String(_))) => {
            if verb == 'q' && matches!(value, Some(Value::Number(n)) if !n.is_f64()) {
                return Err(
                    "printf %q of an integer (a Go character literal) is not supported by render"
                        .into(),
                );
            }
            bad()
        }
        (_, None | Some(Value::Null)) => format!("%!{verb}(<nil>)"),
        _ => {
            return Err(format!(
                "printf %{verb} of a {} is not supported by render",
                go_type(value)
            ));
        }
    })
}
