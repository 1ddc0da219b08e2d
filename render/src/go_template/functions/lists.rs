//! sprig's list functions (the `must` variants return Go's error where the plain ones panic;
//! text/template turns both into an error).

use super::super::value::{Elem, Value, deep_equal, grown_cap};
use super::math::f64_to_i64;
use super::{Out, Table, Ty, boolean, int, list_items, sig};

pub(super) const TABLE: Table = &[
    sig("list", &[], Some(Ty::Any)),
    sig("tuple", &[], Some(Ty::Any)),
    sig("append", &[Ty::Any, Ty::Any], None),
    sig("push", &[Ty::Any, Ty::Any], None),
    sig("mustAppend", &[Ty::Any, Ty::Any], None),
    sig("mustPush", &[Ty::Any, Ty::Any], None),
    sig("prepend", &[Ty::Any, Ty::Any], None),
    sig("mustPrepend", &[Ty::Any, Ty::Any], None),
    sig("first", &[Ty::Any], None),
    sig("mustFirst", &[Ty::Any], None),
    sig("rest", &[Ty::Any], None),
    sig("mustRest", &[Ty::Any], None),
    sig("last", &[Ty::Any], None),
    sig("mustLast", &[Ty::Any], None),
    sig("initial", &[Ty::Any], None),
    sig("mustInitial", &[Ty::Any], None),
    sig("reverse", &[Ty::Any], None),
    sig("mustReverse", &[Ty::Any], None),
    sig("uniq", &[Ty::Any], None),
    sig("mustUniq", &[Ty::Any], None),
    sig("without", &[Ty::Any], Some(Ty::Any)),
    sig("mustWithout", &[Ty::Any], Some(Ty::Any)),
    sig("has", &[Ty::Any, Ty::Any], None),
    sig("mustHas", &[Ty::Any, Ty::Any], None),
    sig("slice", &[Ty::Any], Some(Ty::Any)),
    sig("mustSlice", &[Ty::Any], Some(Ty::Any)),
    sig("concat", &[], Some(Ty::Any)),
    sig("chunk", &[Ty::Int, Ty::Any], None),
    sig("mustChunk", &[Ty::Int, Ty::Any], None),
    sig("compact", &[Ty::Any], None),
    sig("mustCompact", &[Ty::Any], None),
];

fn any_list(items: Vec<Value>) -> Out {
    Ok(Value::slice(Elem::Any, items))
}

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    let name = name.strip_prefix("must").map_or(name.to_string(), |n| {
        let mut c = n.chars();
        c.next()
            .map_or_else(String::new, |f| f.to_lowercase().chain(c).collect())
    });
    match name.as_str() {
        "list" | "tuple" => any_list(args),
        "append" | "push" => {
            let mut items = list_items(&args[0], "push on")?.to_vec();
            let len = items.len();
            items.push(args[1].clone());
            // `append(make([]interface{}, len), v)`.
            Ok(Value::slice_with_cap(
                Elem::Any,
                items,
                grown_cap(len, len + 1, Elem::Any),
            ))
        }
        "prepend" => {
            let mut items = vec![args[1].clone()];
            items.extend_from_slice(list_items(&args[0], "prepend on")?);
            // `append([]interface{}{v}, list...)`.
            let cap = if items.len() > 1 {
                grown_cap(1, items.len(), Elem::Any)
            } else {
                1
            };
            Ok(Value::slice_with_cap(Elem::Any, items, cap))
        }
        "first" | "last" => {
            let items = list_items(&args[0], &format!("find {name} on"))?;
            let item = if name == "first" {
                items.first()
            } else {
                items.last()
            };
            Ok(item.cloned().unwrap_or(Value::Nil))
        }
        "rest" | "initial" => {
            let items = list_items(&args[0], &format!("find {name} on"))?;
            if items.is_empty() {
                return Ok(Value::nil_slice(Elem::Any));
            }
            any_list(if name == "rest" {
                items[1..].to_vec()
            } else {
                items[..items.len() - 1].to_vec()
            })
        }
        "reverse" => {
            let mut items = list_items(&args[0], "find reverse on")?.to_vec();
            items.reverse();
            any_list(items)
        }
        "uniq" => {
            let mut out: Vec<Value> = Vec::new();
            for item in list_items(&args[0], "find uniq on")? {
                if !out.iter().any(|o| deep_equal(item, o)) {
                    out.push(item.clone());
                }
            }
            Ok(Value::appended(Elem::Any, out))
        }
        "without" => {
            let omit = &args[1..];
            let items = list_items(&args[0], "find without on")?;
            Ok(Value::appended(
                Elem::Any,
                items
                    .iter()
                    .filter(|i| !omit.iter().any(|o| deep_equal(i, o)))
                    .cloned()
                    .collect(),
            ))
        }
        "has" => {
            if args[1].is_nil_interface() {
                return boolean(false);
            }
            let items = list_items(&args[1], "find has on")?;
            boolean(items.iter().any(|i| deep_equal(&args[0], i)))
        }
        "slice" => {
            let Value::Slice(s) = &args[0] else {
                return Err(match &args[0] {
                    Value::Missing | Value::Nil => {
                        "runtime error: invalid memory address or nil pointer dereference".into()
                    }
                    other => format!(
                        "list should be type of slice or array but {}",
                        other.kind_name()
                    ),
                });
            };
            let len = s.items.len() as i64;
            if len == 0 {
                return Ok(Value::Nil);
            }
            let start = args.get(1).map_or(0, super::math::to_int);
            let end = args.get(2).map_or(len, super::math::to_int);
            // reflect's Slice reaches up to the capacity; past the length it holds zeros.
            if start < 0 || end < start || end > s.cap as i64 {
                return Err(format!("reflect: slice index out of range [{start}:{end}]"));
            }
            let items = (start..end)
                .map(|i| {
                    s.items
                        .get(i as usize)
                        .cloned()
                        .unwrap_or_else(|| s.elem.zero())
                })
                .collect();
            Ok(Value::slice_with_cap(s.elem, items, s.cap - start as usize))
        }
        "concat" => {
            let mut out = Vec::new();
            for list in &args {
                match list {
                    Value::Slice(s) => out.extend_from_slice(&s.items),
                    Value::Missing | Value::Nil => {
                        return Err(
                            "runtime error: invalid memory address or nil pointer dereference"
                                .into(),
                        );
                    }
                    other => {
                        return Err(format!("Cannot concat type {} as list", other.kind_name()));
                    }
                }
            }
            if out.is_empty() {
                return Ok(Value::nil_slice(Elem::Any));
            }
            Ok(Value::appended(Elem::Any, out))
        }
        "chunk" => {
            // sprig's float arithmetic, as it is (a size below 1 mostly panics).
            let size = int(&args[0]);
            let items = list_items(&args[1], "chunk")?;
            let len = items.len() as i64;
            let bad = || "runtime error: makeslice: len out of range".to_string();
            let count = f64_to_i64(((len - 1) as f64 / size as f64).floor() + 1.0);
            if count < 0 {
                return Err(bad());
            }
            let mut chunks = Vec::new();
            for i in 0..count {
                let mut clen = size;
                if i == count - 1 {
                    clen = f64_to_i64((len as f64 % size as f64).floor());
                    if clen == 0 {
                        clen = size;
                    }
                }
                if clen < 0 {
                    return Err(bad());
                }
                let mut chunk = Vec::new();
                for j in 0..clen {
                    let ix = i * size + j;
                    let item = usize::try_from(ix).ok().and_then(|ix| items.get(ix));
                    chunk.push(item.cloned().ok_or_else(|| {
                        format!("reflect: slice index out of range (index {ix}, length {len})")
                    })?);
                }
                chunks.push(Value::slice(Elem::Any, chunk));
            }
            Ok(Value::slice(Elem::Slices, chunks))
        }
        "compact" => {
            let items = list_items(&args[0], "compact on")?;
            Ok(Value::appended(
                Elem::Any,
                items.iter().filter(|i| !i.is_empty()).cloned().collect(),
            ))
        }
        _ => unreachable!("{name} is in the table"),
    }
}
