//! Parsing: the template split into text and actions, actions into pipelines, blocks into a
//! tree of nodes.

use super::functions::FUNCTIONS;
use serde_json::Value;

#[derive(Debug, Clone)]
pub(super) enum Arg {
    Field(Vec<String>),
    Literal(Value),
    Function(String),
    Pipeline(Vec<Vec<Arg>>),
}

pub(super) type Pipeline = Vec<Vec<Arg>>;

#[derive(Debug, Clone)]
pub(super) enum Node {
    Text(String),
    Print(Pipeline),
    If(Pipeline, Vec<Node>, Vec<Node>),
    Range(Pipeline, Vec<Node>, Vec<Node>),
    With(Pipeline, Vec<Node>, Vec<Node>),
}

pub(super) enum Piece {
    Text(String),
    Action(String),
}

pub(super) fn split(template: &str) -> Result<Vec<Piece>, String> {
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
pub(super) const MAX_DEPTH: usize = 100;

pub(super) fn deeper(depth: usize) -> Result<usize, String> {
    if depth >= MAX_DEPTH {
        return Err(format!(
            "the template nests more than {MAX_DEPTH} levels deep (parentheses, `if`, `range`, `with`, `else if`): render does not parse deeper"
        ));
    }
    Ok(depth + 1)
}

/// Parses until `end`/`else`; returns the nodes and the keyword that stopped it.
pub(super) fn parse_nodes(
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

pub(super) fn parse_block(
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

pub(super) fn parse_pipeline(text: &str) -> Result<Pipeline, String> {
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

pub(super) fn pipeline_from(
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

pub(super) fn tokenize(text: &str) -> Result<Vec<String>, String> {
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
