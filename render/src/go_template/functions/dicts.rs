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
    sig("merge", &[Ty::Map], Some(Ty::Map)),
    sig("mustMerge", &[Ty::Map], Some(Ty::Map)),
    sig("mergeOverwrite", &[Ty::Map], Some(Ty::Map)),
    sig("mustMergeOverwrite", &[Ty::Map], Some(Ty::Map)),
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
        "merge" | "mustMerge" | "mergeOverwrite" | "mustMergeOverwrite" => {
            let overwrite = name.ends_with("Overwrite");
            let mut dst = args[0].clone();
            for src in &args[1..] {
                dst = merge_top(dst, src, overwrite)?;
            }
            Ok(dst)
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

/// mergo's `Merge(&dst, src)` (`WithOverwrite`) for `map[string]interface{}`: a nil `dst`
/// becomes a new map, the result is `dst` (changed in place, as Go's maps are).
fn merge_top(dst: Value, src: &Value, overwrite: bool) -> Result<Value, String> {
    let (Value::Map(d), Value::Map(s)) = (&dst, src) else {
        unreachable!("typed")
    };
    let dst = if d.nil && !s.nil {
        Value::map(MapElem::Any, BTreeMap::new())
    } else {
        dst
    };
    if let Value::Map(d) = &dst {
        merge_maps(d, s, overwrite, 0)?;
    }
    Ok(dst)
}

/// mergo's `isEmptyValue` of an `interface{}` map element (dereferenced).
fn mergo_empty(v: Option<&Value>) -> bool {
    match v {
        None => true,
        Some(v) => v.is_empty(),
    }
}

/// mergo's `deepMerge` of two maps (the branches it takes for `interface{}` elements).
fn merge_maps(
    dst: &std::rc::Rc<super::super::value::Map>,
    src: &std::rc::Rc<super::super::value::Map>,
    overwrite: bool,
    depth: usize,
) -> Result<(), String> {
    if depth > 100 {
        return Err("the maps nest more than 100 levels deep: render stops there".into());
    }
    if dst.nil {
        // A nil map inside: mergo cannot set it and leaves it.
        return Ok(());
    }
    let dst_was_empty = dst.entries.borrow().is_empty();
    let src_entries: Vec<(String, Value)> = src
        .entries
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let src_empty = src_entries.is_empty();
    for (key, src_elem) in src_entries {
        let dst_elem = dst.entries.borrow().get(&key).cloned();
        if src_elem.is_nil_interface() {
            if overwrite {
                dst.entries.borrow_mut().insert(key, Value::Nil);
            }
            continue;
        }
        match &src_elem {
            Value::Map(s) => {
                if let Some(Value::Map(d)) = &dst_elem
                    && d.elem == MapElem::Any
                {
                    merge_maps(d, s, overwrite, depth + 1)?;
                }
            }
            Value::Slice(_) => {
                let dst_value = match &dst_elem {
                    None | Some(Value::Nil | Value::Missing) => match &src_elem {
                        Value::Slice(s) => Value::slice(s.elem, Vec::new()),
                        _ => unreachable!("a slice"),
                    },
                    Some(v) => v.clone(),
                };
                let take_src = !src_empty && (overwrite || dst_was_empty);
                let value = if take_src {
                    src_elem.clone()
                } else {
                    dst_value
                };
                dst.entries.borrow_mut().insert(key.clone(), value);
            }
            _ => {}
        }
        if dst_elem.is_some() && !mergo_empty(dst_elem.as_ref()) {
            if matches!(src_elem, Value::Slice(_)) {
                continue;
            }
            if matches!(src_elem, Value::Map(_)) && matches!(dst_elem, Some(Value::Map(_))) {
                continue;
            }
        }
        if overwrite || dst_elem.is_none() || mergo_empty(dst_elem.as_ref()) {
            dst.entries.borrow_mut().insert(key, src_elem);
        }
    }
    Ok(())
}

fn deep_copy(v: &Value) -> Value {
    deep_copy_at(v, 0)
}

fn deep_copy_at(v: &Value, depth: usize) -> Value {
    if depth > super::super::format::MAX_DEPTH {
        return v.clone();
    }
    let deep_copy = |v: &Value| deep_copy_at(v, depth + 1);
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
