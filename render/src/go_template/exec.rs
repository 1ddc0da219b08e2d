//! Executing the parsed tree: fields looked up on the data, pipelines evaluated, blocks run,
//! values printed as Go's `fmt` prints them.

use super::format::go_float;
use super::functions::call;
use super::parse::{Arg, Node, Pipeline};
use serde_json::Value;

pub(super) fn exec(nodes: &[Node], dot: Option<&Value>, out: &mut String) -> Result<(), String> {
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
pub(super) type Val = Option<Value>;

pub(super) fn eval_pipeline(pipeline: &Pipeline, dot: Option<&Value>) -> Result<Val, String> {
    let mut piped: Option<Val> = None;
    for command in pipeline {
        piped = Some(eval_command(command, dot, piped)?);
    }
    Ok(piped.flatten())
}

pub(super) fn eval_arg(arg: &Arg, dot: Option<&Value>) -> Result<Val, String> {
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

pub(super) fn eval_command(
    command: &[Arg],
    dot: Option<&Value>,
    piped: Option<Val>,
) -> Result<Val, String> {
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

pub(super) fn truthy(value: &Val) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

pub(super) fn print(value: &Val) -> String {
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

pub(super) fn number(value: &Val) -> Result<f64, String> {
    value
        .as_ref()
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("expected a number, got {}", print(value)))
}
