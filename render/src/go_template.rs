//! The part of Go's `text/template` (with sprig's common functions) that ClusterClass inline
//! patches use in `enabledIf` and `valueFrom.template`: text, `{{ .path }}`, pipelines,
//! `if`/`else if`/`else`, `range`, `with`, and the functions listed in [`FUNCTIONS`]. Anything
//! else is an error that names it, never a silent guess.

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
fn to_int64(value: &Val) -> i64 {
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

#[derive(Debug, Clone)]
enum Arg {
    Field(Vec<String>),
    Literal(Value),
    Function(String),
    Pipeline(Vec<Vec<Arg>>),
}

type Pipeline = Vec<Vec<Arg>>;

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Print(Pipeline),
    If(Pipeline, Vec<Node>, Vec<Node>),
    Range(Pipeline, Vec<Node>, Vec<Node>),
    With(Pipeline, Vec<Node>, Vec<Node>),
}

/// Renders `template` with `data` as `.`.
///
/// ```
/// use capi_ext_render::go_template::render;
/// let data = serde_json::json!({"builtin": {"cluster": {"name": "c1"}}, "ha": true});
/// assert_eq!(render("{{ .builtin.cluster.name }}-lb", &data).unwrap(), "c1-lb");
/// assert_eq!(render("{{ if .ha }}3{{ else }}1{{ end }}", &data).unwrap(), "3");
/// assert!(render("{{ toYaml . }}", &data).unwrap_err().contains("`toYaml`"));
/// ```
pub fn render(template: &str, data: &Value) -> Result<String, String> {
    let mut pieces = split(template)?;
    pieces.reverse();
    let (nodes, end) = parse_nodes(&mut pieces, 0)?;
    if let Some(end) = end {
        return Err(format!("unexpected {{{{{end}}}}}"));
    }
    let mut out = String::new();
    exec(&nodes, Some(&as_go_data(data)), &mut out)?;
    Ok(out)
}

/// The data as Go's template sees it: CAPI decodes the variables from JSON into `interface{}`,
/// so every number is a float64 (numbers written in the template itself stay Go ints).
fn as_go_data(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| value.clone(), Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(as_go_data).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), as_go_data(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

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
fn go_type(value: &Val) -> &'static str {
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
fn go_quote(text: &str) -> String {
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
fn printf_verb(verb: char, value: &Val) -> Result<String, String> {
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

enum Piece {
    Text(String),
    Action(String),
}

fn split(template: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let mut text = &rest[..start];
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or("unclosed action: `{{` without `}}`")?;
        let mut action = &after[..end];
        if let Some(trimmed) = action.strip_prefix('-') {
            text = text.trim_end();
            action = trimmed;
        }
        let mut next = &after[end + 2..];
        if let Some(trimmed) = action.strip_suffix('-') {
            action = trimmed;
            next = next.trim_start();
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text.to_string()));
        }
        let action = action.trim();
        if !action.starts_with("/*") {
            pieces.push(Piece::Action(action.to_string()));
        }
        rest = next;
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    Ok(pieces)
}

/// How deep parentheses and `if`/`range`/`with` blocks (an `else if` counting as one more) may
/// nest. Go's parser stops at 10,000; render parses recursively and stops far earlier, before the
/// stack of a worker thread would (found by fuzzing: a few thousand `(` overflowed it).
const MAX_DEPTH: usize = 100;

fn deeper(depth: usize) -> Result<usize, String> {
    if depth >= MAX_DEPTH {
        return Err(format!(
            "the template nests more than {MAX_DEPTH} levels deep (parentheses, `if`, `range`, `with`, `else if`): render does not parse deeper"
        ));
    }
    Ok(depth + 1)
}

/// Parses until `end`/`else`; returns the nodes and the keyword that stopped it.
fn parse_nodes(
    pieces: &mut Vec<Piece>,
    depth: usize,
) -> Result<(Vec<Node>, Option<String>), String> {
    let mut nodes = Vec::new();
    while let Some(piece) = pieces.pop() {
        let action = match piece {
            Piece::Text(text) => {
                nodes.push(Node::Text(text));
                continue;
            }
            Piece::Action(action) => action,
        };
        let (keyword, rest) = action
            .split_once(char::is_whitespace)
            .unwrap_or((&action, ""));
        match keyword {
            "end" => return Ok((nodes, Some("end".into()))),
            "else" => return Ok((nodes, Some(action.clone()))),
            "if" | "range" | "with" => {
                let pipeline = parse_pipeline(rest)?;
                nodes.push(parse_block(keyword, pipeline, pieces, deeper(depth)?)?);
            }
            "define" | "template" | "block" | "break" | "continue" => {
                return Err(format!("`{keyword}` actions are not supported by render"));
            }
            _ => nodes.push(Node::Print(parse_pipeline(&action)?)),
        }
    }
    Ok((nodes, None))
}

fn parse_block(
    keyword: &str,
    pipeline: Pipeline,
    pieces: &mut Vec<Piece>,
    depth: usize,
) -> Result<Node, String> {
    let (body, stop) = parse_nodes(pieces, depth)?;
    let else_nodes = match stop.as_deref() {
        Some("end") => Vec::new(),
        Some("else") => {
            let (nodes, stop) = parse_nodes(pieces, depth)?;
            if stop.as_deref() != Some("end") {
                return Err(format!("`{keyword}` without `end`"));
            }
            nodes
        }
        Some(other) if other.starts_with("else if ") && keyword == "if" => {
            let nested = parse_pipeline(&other["else if ".len()..])?;
            vec![parse_block("if", nested, pieces, deeper(depth)?)?]
        }
        _ => return Err(format!("`{keyword}` without `end`")),
    };
    Ok(match keyword {
        "if" => Node::If(pipeline, body, else_nodes),
        "range" => Node::Range(pipeline, body, else_nodes),
        _ => Node::With(pipeline, body, else_nodes),
    })
}

fn parse_pipeline(text: &str) -> Result<Pipeline, String> {
    let tokens = tokenize(text)?;
    let mut position = 0;
    let pipeline = pipeline_from(&tokens, &mut position, 0)?;
    if position != tokens.len() {
        return Err(format!("unexpected `{}` in `{text}`", tokens[position]));
    }
    if pipeline.is_empty() || pipeline.iter().any(Vec::is_empty) {
        return Err(format!("empty command in `{text}`"));
    }
    Ok(pipeline)
}

fn pipeline_from(
    tokens: &[String],
    position: &mut usize,
    depth: usize,
) -> Result<Pipeline, String> {
    let mut pipeline = vec![Vec::new()];
    while *position < tokens.len() {
        let token = &tokens[*position];
        *position += 1;
        let arg = match token.as_str() {
            "|" => {
                pipeline.push(Vec::new());
                continue;
            }
            ")" => {
                *position -= 1;
                break;
            }
            "(" => {
                let inner = pipeline_from(tokens, position, deeper(depth)?)?;
                if tokens.get(*position).map(String::as_str) != Some(")") {
                    return Err("unclosed `(`".into());
                }
                // Found by fuzzing: `()` and `(.a |)` reached evaluation empty.
                if inner.iter().any(Vec::is_empty) {
                    return Err("missing value for parenthesized pipeline".into());
                }
                *position += 1;
                Arg::Pipeline(inner)
            }
            t if t.starts_with('.') => Arg::Field(
                t.split('.')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            ),
            t if t.starts_with('"') => Arg::Literal(Value::String(
                serde_json::from_str(t).map_err(|e| format!("bad string {t}: {e}"))?,
            )),
            t if t.starts_with('`') => Arg::Literal(Value::String(t[1..t.len() - 1].to_string())),
            "true" => Arg::Literal(Value::Bool(true)),
            "false" => Arg::Literal(Value::Bool(false)),
            "nil" => Arg::Literal(Value::Null),
            t if t.starts_with(|c: char| c.is_ascii_digit() || c == '-') => {
                Arg::Literal(serde_json::from_str(t).map_err(|_| format!("bad number `{t}`"))?)
            }
            t if t.starts_with('$') => {
                return Err(format!(
                    "template variables (`{t}`) are not supported by render"
                ));
            }
            t => {
                if !FUNCTIONS.contains(&t) {
                    return Err(format!(
                        "function `{t}` is not supported by render (it knows {})",
                        FUNCTIONS.join(", ")
                    ));
                }
                Arg::Function(t.to_string())
            }
        };
        pipeline.last_mut().expect("never empty").push(arg);
    }
    Ok(pipeline)
}

fn tokenize(text: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if matches!(c, '(' | ')' | '|') {
            tokens.push(c.to_string());
            i += 1;
        } else if c == '"' || c == '`' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += if c == '"' && chars[j] == '\\' { 2 } else { 1 };
            }
            if j >= chars.len() {
                return Err(format!("unterminated string in `{text}`"));
            }
            tokens.push(chars[i..=j].iter().collect());
            i = j + 1;
        } else {
            let mut j = i;
            while j < chars.len()
                && !chars[j].is_whitespace()
                && !matches!(chars[j], '(' | ')' | '|')
            {
                j += 1;
            }
            tokens.push(chars[i..j].iter().collect());
            i = j;
        }
    }
    Ok(tokens)
}

fn exec(nodes: &[Node], dot: Option<&Value>, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Print(pipeline) => out.push_str(&print(&eval_pipeline(pipeline, dot)?)),
            Node::If(pipeline, then, otherwise) => {
                let value = eval_pipeline(pipeline, dot)?;
                exec(if truthy(&value) { then } else { otherwise }, dot, out)?;
            }
            Node::With(pipeline, body, otherwise) => {
                let value = eval_pipeline(pipeline, dot)?;
                if truthy(&value) {
                    exec(body, value.as_ref(), out)?;
                } else {
                    exec(otherwise, dot, out)?;
                }
            }
            Node::Range(pipeline, body, otherwise) => {
                let value = eval_pipeline(pipeline, dot)?;
                let items: Vec<Value> = match &value {
                    Some(Value::Array(items)) => items.clone(),
                    Some(Value::Object(map)) => map.values().cloned().collect(),
                    None | Some(Value::Null) => Vec::new(),
                    Some(other) => return Err(format!("range can't iterate over {other}")),
                };
                if items.is_empty() {
                    exec(otherwise, dot, out)?;
                }
                for item in &items {
                    exec(body, Some(item), out)?;
                }
            }
        }
    }
    Ok(())
}

/// `None` is Go's "no value" (a missing map key).
type Val = Option<Value>;

fn eval_pipeline(pipeline: &Pipeline, dot: Option<&Value>) -> Result<Val, String> {
    let mut piped: Option<Val> = None;
    for command in pipeline {
        piped = Some(eval_command(command, dot, piped)?);
    }
    Ok(piped.flatten())
}

fn eval_arg(arg: &Arg, dot: Option<&Value>) -> Result<Val, String> {
    Ok(match arg {
        Arg::Literal(v) => Some(v.clone()),
        Arg::Field(path) => {
            let mut current = dot.cloned();
            for segment in path {
                current = match current {
                    Some(Value::Object(map)) => map.get(segment).cloned(),
                    None | Some(Value::Null) => None,
                    Some(other) => {
                        return Err(format!(
                            "can't evaluate field {segment} in {}",
                            print(&Some(other))
                        ));
                    }
                };
            }
            current
        }
        Arg::Pipeline(p) => eval_pipeline(p, dot)?,
        Arg::Function(name) => call(name, Vec::new())?,
    })
}

fn eval_command(command: &[Arg], dot: Option<&Value>, piped: Option<Val>) -> Result<Val, String> {
    let Some(first) = command.first() else {
        return Err("empty command".into());
    };
    match first {
        Arg::Function(name) => {
            let mut args = command[1..]
                .iter()
                .map(|a| eval_arg(a, dot))
                .collect::<Result<Vec<_>, _>>()?;
            args.extend(piped);
            call(name, args)
        }
        single if command.len() == 1 && piped.is_none() => eval_arg(single, dot),
        _ => Err("a value can't take arguments or a piped value".into()),
    }
}

fn truthy(value: &Val) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

fn print(value: &Val) -> String {
    match value {
        None => "<no value>".into(),
        Some(Value::Null) => "<nil>".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.is_f64() => go_float(n.as_f64().unwrap_or_default()),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Array(items)) => {
            format!(
                "[{}]",
                items
                    .iter()
                    .map(|v| print(&Some(v.clone())))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
        Some(Value::Object(map)) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}:{}", print(&Some(map[*k].clone()))))
                .collect();
            format!("map[{}]", fields.join(" "))
        }
    }
}

fn number(value: &Val) -> Result<f64, String> {
    value
        .as_ref()
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("expected a number, got {}", print(value)))
}

fn call(name: &str, args: Vec<Val>) -> Result<Val, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(template: &str) -> Result<String, String> {
        render(
            template,
            &json!({"builtin": {"cluster": {"name": "c1"}, "controlPlane": {"replicas": 3}}, "zones": ["a", "b"], "flag": false, "empty": ""}),
        )
    }

    #[test]
    fn fields_conditions_loops_and_functions() {
        assert_eq!(r("{{ .builtin.cluster.name }}").unwrap(), "c1");
        assert_eq!(r("{{ .missing }}").unwrap(), "<no value>");
        assert_eq!(r("{{ .builtin.controlPlane.replicas }}").unwrap(), "3");
        assert_eq!(
            r("{{ if gt .builtin.controlPlane.replicas 1.0 }}ha{{ end }}").unwrap(),
            "ha"
        );
        assert_eq!(
            r("{{ if .flag }}a{{ else if .empty }}b{{ else }}c{{ end }}").unwrap(),
            "c"
        );
        assert_eq!(
            r("{{- range .zones }}\n- {{ . }}{{ end }}").unwrap(),
            "\n- a\n- b"
        );
        assert_eq!(
            r("{{ with .builtin.cluster }}{{ .name }}{{ end }}").unwrap(),
            "c1"
        );
        assert_eq!(
            r("{{ .builtin.cluster.name | upper | quote }}").unwrap(),
            "\"C1\""
        );
        assert_eq!(
            r("{{ printf \"%s-%d\" .builtin.cluster.name 7 }}").unwrap(),
            "c1-7"
        );
        assert_eq!(r("{{ default \"x\" .missing }} {{ not .flag }} {{ eq .builtin.cluster.name \"c0\" \"c1\" }}").unwrap(), "x true true");
        assert_eq!(
            r("{{ join \",\" .zones }} {{ len .zones }} {{ index .zones 1 }}").unwrap(),
            "a,b 2 b"
        );
        assert_eq!(
            r("{{ .zones }} {{ .builtin.cluster }}").unwrap(),
            "[a b] map[name:c1]"
        );
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/go_template.rs`): these panicked.
    #[test]
    fn empty_parenthesized_pipelines_are_errors() {
        let data = json!({"a": "x"});
        for template in [
            "{{ join() }}",
            "{{ () }}",
            "{{ (.a |) }}",
            "{{ upper (| .a) }}",
        ] {
            let err = render(template, &data).unwrap_err();
            assert!(
                err.contains("missing value") || err.contains("empty command"),
                "{template}: {err}"
            );
        }
        assert_eq!(render("{{ (.a) }}", &data).unwrap(), "x");
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/go_template.rs`): thousands of `(` or of nested
    /// blocks overflowed the stack. The inputs AFL++ saved are replayed as they are, on a thread
    /// with a worker's 2 MiB stack.
    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let data = json!({"a": "x", "net": {"mtu": 1500.0}});
                let deep = [
                    format!("{{{{ if gt{} }}}}", "(".repeat(5000)),
                    format!("{{{{ {}.a{} }}}}", "(".repeat(101), ")".repeat(101)),
                    "{{ with .net }}".repeat(5000),
                    format!(
                        "{{{{ if .a }}}}{}{{{{ end }}}}",
                        "{{ else if .a }}".repeat(200)
                    ),
                ];
                for template in &deep {
                    let err = render(template, &data).unwrap_err();
                    assert!(err.contains("nests more than 100 levels"), "{err}");
                }
                for crash in [
                    &include_bytes!("go_template_crashes/stack-overflow-0.txt")[..],
                    include_bytes!("go_template_crashes/stack-overflow-1.txt"),
                    include_bytes!("go_template_crashes/stack-overflow-2.txt"),
                ] {
                    let _ = render(&String::from_utf8_lossy(crash), &data);
                }
                // Within the limit, nesting still works.
                let ok = format!("{{{{ {}.a{} }}}}", "(".repeat(99), ")".repeat(99));
                assert_eq!(render(&ok, &data).unwrap(), "x");
                let chain = format!(
                    "{{{{ if not .a }}}}{}{{{{ else }}}}y{{{{ end }}}}",
                    "{{ else if not .a }}".repeat(50)
                );
                assert_eq!(render(&chain, &data).unwrap(), "y");
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn sprig_integer_arithmetic_truncates_floats_like_cast_to_int64() {
        let data = json!({"cpu": 2.0, "half": 2.5, "text": "7", "word": "x"});
        let r = |t: &str| render(t, &data);
        assert_eq!(r("{{ add1 .cpu }}").unwrap(), "3");
        assert_eq!(r("{{ add .half 1 .text }}").unwrap(), "10");
        assert_eq!(
            r("{{ sub .cpu 5 }} {{ mul .half 3 }} {{ div 7 .cpu }} {{ mod 7 .cpu }}").unwrap(),
            "-3 6 3 1"
        );
        assert_eq!(
            r("{{ max 1 .text .cpu }} {{ min .word 4 }}").unwrap(),
            "7 0"
        );
        assert!(r("{{ div 1 0 }}").unwrap_err().contains("divide by zero"));
    }

    /// Each expectation is what Go's text/template printed for the same template and data
    /// (the data decoded from JSON, as CAPI decodes variables, so every number is a float64).
    #[test]
    fn numbers_and_printf_as_go_prints_them() {
        let data = json!({"x": 1000000, "a": 123456, "b": 1234567, "h": 0.5, "t": 0.0001, "u": 0.00001,
            "big": 1e21, "c": 100, "n": -2.5, "two": 2, "tiny": 1.5e-7, "long": 123456789012u64,
            "s": "a\"b\\c\nd\te\u{e9}\u{1}", "zones": ["a", "b"]});
        for (template, go) in [
            ("{{ .x }}", "1e+06"),
            ("{{ .a }}", "123456"),
            ("{{ .b }}", "1.234567e+06"),
            ("{{ .h }}", "0.5"),
            ("{{ .t }}", "0.0001"),
            ("{{ .u }}", "1e-05"),
            ("{{ .big }}", "1e+21"),
            ("{{ .c }}", "100"),
            ("{{ .n }}", "-2.5"),
            ("{{ .tiny }}", "1.5e-07"),
            ("{{ .long }}", "1.23456789012e+11"),
            ("{{ printf \"%d\" .two }}", "%!d(float64=2)"),
            ("{{ printf \"%s\" .two }}", "%!s(float64=2)"),
            ("{{ printf \"%v\" .x }}", "1e+06"),
            (
                "{{ printf \"%q\" .s }}",
                "\"a\\\"b\\\\c\\nd\\te\u{e9}\\x01\"",
            ),
            ("{{ printf \"%d\" 7 }}", "7"),
            ("{{ printf \"%s\" 7 }}", "%!s(int=7)"),
            (
                "{{ printf \"%d\" .s }}",
                "%!d(string=a\"b\\c\nd\te\u{e9}\u{1})",
            ),
            ("{{ printf \"%d-%s\" }}", "%!d(MISSING)-%!s(MISSING)"),
            ("{{ print 1 2 }}", "1 2"),
            ("{{ print \"a\" 1 }}", "a1"),
            ("{{ print .two .c }}", "2 100"),
            ("{{ len .zones }}", "2"),
            ("{{ eq .two 2.0 }}", "true"),
            ("{{ index .zones 1 }}", "b"),
            ("{{ printf \"%v\" .zones }}", "[a b]"),
            ("{{ .zones }}", "[a b]"),
        ] {
            assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
        }
        for (template, go_error) in [
            (
                "{{ eq .two 2 }}",
                "error calling eq: incompatible types for comparison: float64 and int",
            ),
            (
                "{{ lt .two 3 }}",
                "error calling lt: incompatible types for comparison: float64 and int",
            ),
        ] {
            let err = render(template, &data).unwrap_err();
            assert!(err.contains(go_error), "{template}: {err}");
        }
    }

    #[test]
    fn go_float_matches_strconv_shortest_g() {
        for (f, go) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (999999.0, "999999"),
            (1e6, "1e+06"),
            (1e100, "1e+100"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1.25e-5, "1.25e-05"),
        ] {
            assert_eq!(go_float(f), go, "{f}");
        }
    }

    #[test]
    fn unsupported_constructs_are_named() {
        assert!(
            r("{{ b64enc .x }}")
                .unwrap_err()
                .contains("function `b64enc` is not supported")
        );
        assert!(
            r("{{ $x := 1 }}")
                .unwrap_err()
                .contains("template variables")
        );
        assert!(r("{{ if .flag }}a").unwrap_err().contains("without `end`"));
        assert!(r("{{ .x ").unwrap_err().contains("unclosed action"));
    }
}
