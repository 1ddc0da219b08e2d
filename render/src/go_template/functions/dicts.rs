//! sprig's dictionary functions. Go iterates maps in a random order; where sprig's result
//! depends on it (`keys`, `values`), render gives the sorted order.

use super::super::value::{Elem, MapElem, Value};
use super::{Out, Table, Ty, boolean, sig, strval, text};
use std::collections::BTreeMap;

pub(super) const TABLE: Table = &[
    sig("dict", &[], Some(Ty::Any)),
    sig("get", &[Ty::Map, Ty::Str], None),
    sig("set", &[Ty::Map, Ty::Str, Ty::Any], None),
    sig("unset", &[Ty::Map, Ty::Str], None),
    sig("hasKey", &[Ty::Map, Ty::Str], None),
    sig("pluck", &[Ty::Str], Some(Ty::Map)),
    sig("keys", &[], Some(Ty::Map)),
    sig("pick", &[Ty::Map], Some(Ty::Str)),
    sig("omit", &[Ty::Map], Some(Ty::Str)),
    sig("values", &[Ty::Map], None),
    sig("dig", &[], Some(Ty::Any)),
    sig("deepCopy", &[Ty::Any], None),
    sig("mustDeepCopy", &[Ty::Any], None),
];

fn entries(v: &Value) -> BTreeMap<String, Value> {
    match v {
        Value::Map(m) => m.entries.borrow().clone(),
        _ => BTreeMap::new(),
    }
}

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "dict" => {
            let mut map = BTreeMap::new();
            for pair in args.chunks(2) {
                let key = strval(&pair[0]);
                map.insert(key, pair.get(1).cloned().unwrap_or(Value::str("")));
            }
            Ok(Value::map(MapElem::Any, map))
        }
        "get" => Ok(entries(&args[0])
            .remove(text(&args[1]))
            .unwrap_or(Value::str(""))),
        "set" | "unset" => {
            let Value::Map(m) = &args[0] else {
                unreachable!("typed")
            };
            if m.nil && name == "set" {
                return Err("assignment to entry in nil map".into());
            }
            if name == "set" {
                m.entries
                    .borrow_mut()
                    .insert(text(&args[1]).to_string(), args[2].clone());
            } else {
                m.entries.borrow_mut().remove(text(&args[1]));
            }
            Ok(args[0].clone())
        }
        "hasKey" => boolean(entries(&args[0]).contains_key(text(&args[1]))),
        "pluck" => Ok(Value::appended(
            Elem::Any,
            args[1..]
                .iter()
                .filter_map(|d| entries(d).remove(text(&args[0])))
                .collect(),
        )),
        "keys" => Ok(Value::appended(
            Elem::Str,
            args.iter()
                .flat_map(|d| entries(d).into_keys())
                .map(Value::str)
                .collect(),
        )),
        "pick" => {
            let all = entries(&args[0]);
            Ok(Value::map(
                MapElem::Any,
                args[1..]
                    .iter()
                    .filter_map(|k| all.get(text(k)).map(|v| (text(k).to_string(), v.clone())))
                    .collect(),
            ))
        }
        "omit" => {
            let mut all = entries(&args[0]);
            for k in &args[1..] {
                all.remove(text(k));
            }
            Ok(Value::map(MapElem::Any, all))
        }
        "values" => Ok(Value::appended(
            Elem::Any,
            entries(&args[0]).into_values().collect(),
        )),
        "dig" => {
            if args.len() < 3 {
                return Err("dig needs at least three arguments".into());
            }
            let default = args[args.len() - 2].clone();
            let mut keys = Vec::new();
            for k in &args[..args.len() - 2] {
                match k {
                    Value::Str(s) => keys.push(s.to_string()),
                    other => {
                        return Err(format!(
                            "interface conversion: interface {{}} is {}, not string",
                            other.type_name()
                        ));
                    }
                }
            }
            let mut current = args[args.len() - 1].clone();
            for (i, key) in keys.iter().enumerate() {
                let map = match &current {
                    Value::Map(m) if m.elem == MapElem::Any => m.clone(),
                    other => {
                        return Err(format!(
                            "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                            if other.is_nil_interface() {
                                "nil".to_string()
                            } else {
                                other.type_name()
                            }
                        ));
                    }
                };
                let step = map.entries.borrow().get(key).cloned();
                match step {
                    None => return Ok(default),
                    Some(step) if i + 1 == keys.len() => return Ok(step),
                    Some(step) => current = step,
                }
            }
            Ok(default)
        }
        "deepCopy" | "mustDeepCopy" => match &args[0] {
            Value::Missing | Value::Nil => {
                Err("reflect: call of reflect.Value.Type on zero Value".into())
            }
            v => Ok(deep_copy(v)),
        },
        _ => unreachable!("{name} is in the table"),
    }
}

fn deep_copy(v: &Value) -> Value {
    match v {
        // copystructure copies exported fields only: a Version has none.
        Value::Version(_, pointer) => Value::Version(
            std::rc::Rc::new(super::super::semver::Version {
                major: 0,
                minor: 0,
                patch: 0,
                pre: String::new(),
                metadata: String::new(),
                original: String::new(),
            }),
            *pointer,
        ),
        Value::Slice(s) if !s.nil => Value::slice(s.elem, s.items.iter().map(deep_copy).collect()),
        Value::Map(m) if !m.nil => Value::map(
            m.elem,
            m.entries
                .borrow()
                .iter()
                .map(|(k, v)| (k.clone(), deep_copy(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}
