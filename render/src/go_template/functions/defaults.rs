//! sprig's defaults: `default`, `empty`, `coalesce`, `all`, `any`, `ternary`.

use super::super::value::Value;
use super::{Out, Table, Ty, boolean, sig};

pub(super) const TABLE: Table = &[
    sig("default", &[Ty::Any], Some(Ty::Any)),
    sig("empty", &[Ty::Any], None),
    sig("coalesce", &[], Some(Ty::Any)),
    sig("all", &[], Some(Ty::Any)),
    sig("any", &[], Some(Ty::Any)),
    sig("ternary", &[Ty::Any, Ty::Any, Ty::Bool], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "default" => Ok(match args.get(1) {
            Some(given) if !given.is_empty() => given.clone(),
            _ => args[0].clone(),
        }),
        "empty" => boolean(args[0].is_empty()),
        "coalesce" => Ok(args
            .iter()
            .find(|v| !v.is_empty())
            .cloned()
            .unwrap_or(Value::Nil)),
        "all" => boolean(args.iter().all(|v| !v.is_empty())),
        "any" => boolean(args.iter().any(|v| !v.is_empty())),
        "ternary" => Ok(if matches!(args[2], Value::Bool(true)) {
            args[0].clone()
        } else {
            args[1].clone()
        }),
        _ => unreachable!("{name} is in the table"),
    }
}
