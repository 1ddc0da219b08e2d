//! The values a template works on, typed as Go types them: CAPI hands the template the
//! variables decoded from JSON into `interface{}` (so `map[string]interface {}`,
//! `[]interface {}`, `float64`, `string`, `bool`, nil), constants in the template are Go's `int`,
//! `float64` and `string`, and sprig's functions return their own types (`int64`, `[]string`,
//! `map[string]string`, `*semver.Version`, ...). The type decides what a function accepts, how
//! `printf` prints and how `eq` compares, so it is kept.

use super::semver::Version;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A Go value.
#[derive(Clone, Debug)]
pub enum Value {
    /// reflect's zero `Value`: a missing map key, printed `<no value>`.
    Missing,
    /// A nil `interface{}` (JSON null, a function's nil result).
    Nil,
    /// `bool`.
    Bool(bool),
    /// `int`.
    Int(i64),
    /// `int64`.
    Int64(i64),
    /// `uint64`.
    Uint64(u64),
    /// `float64`.
    Float(f64),
    /// `string`.
    Str(Rc<str>),
    /// A slice.
    Slice(Rc<Slice>),
    /// A map with string keys (maps are references in Go: `set` changes every holder).
    Map(Rc<Map>),
    /// `*semver.Version` (`pointer`) or `semver.Version`.
    Version(Rc<Version>, bool),
}

/// The element type of a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `[]interface {}`
    Any,
    /// `[]string`
    Str,
    /// `[]int`
    Int,
    /// `[][]interface {}`
    Slices,
}

/// A Go slice (immutable here: no function of the hermetic map changes a slice in place).
#[derive(Debug)]
pub struct Slice {
    /// Its element type.
    pub elem: Elem,
    /// Its elements.
    pub items: Vec<Value>,
    /// A nil slice (`toJson` writes `null`).
    pub nil: bool,
}

/// The element type of a map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapElem {
    /// `map[string]interface {}`
    Any,
    /// `map[string]string`
    Str,
}

/// A Go map with string keys; keys iterate sorted, as `range` and `fmt` visit them.
#[derive(Debug)]
pub struct Map {
    /// Its element type.
    pub elem: MapElem,
    /// Its entries.
    pub entries: RefCell<BTreeMap<String, Value>>,
    /// A nil map (reading works, writing panics).
    pub nil: bool,
}

impl Value {
    /// A string.
    pub fn str(s: impl Into<Rc<str>>) -> Value {
        Value::Str(s.into())
    }

    /// A slice of `elem`.
    pub fn slice(elem: Elem, items: Vec<Value>) -> Value {
        Value::Slice(Rc::new(Slice {
            elem,
            items,
            nil: false,
        }))
    }

    /// A nil slice of `elem`.
    pub fn nil_slice(elem: Elem) -> Value {
        Value::Slice(Rc::new(Slice {
            elem,
            items: Vec::new(),
            nil: true,
        }))
    }

    /// A `[]string`.
    pub fn strings(items: impl IntoIterator<Item = String>) -> Value {
        Value::slice(Elem::Str, items.into_iter().map(Value::str).collect())
    }

    /// A map of `elem`.
    pub fn map(elem: MapElem, entries: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(Map {
            elem,
            entries: RefCell::new(entries),
            nil: false,
        }))
    }

    /// A nil map of `elem`.
    pub fn nil_map(elem: MapElem) -> Value {
        Value::Map(Rc::new(Map {
            elem,
            entries: RefCell::new(BTreeMap::new()),
            nil: true,
        }))
    }

    /// JSON as CAPI hands it to the template: numbers are float64.
    pub fn from_json(json: &Json) -> Value {
        match json {
            Json::Null => Value::Nil,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Float(n.as_f64().unwrap_or_default()),
            Json::String(s) => Value::str(s.as_str()),
            Json::Array(items) => {
                Value::slice(Elem::Any, items.iter().map(Value::from_json).collect())
            }
            Json::Object(map) => Value::map(
                MapElem::Any,
                map.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Go's name of the value's type, as `%T` prints it.
    pub fn type_name(&self) -> String {
        match self {
            Value::Missing | Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Int64(_) => "int64".into(),
            Value::Uint64(_) => "uint64".into(),
            Value::Float(_) => "float64".into(),
            Value::Str(_) => "string".into(),
            Value::Slice(s) => match s.elem {
                Elem::Any => "[]interface {}",
                Elem::Str => "[]string",
                Elem::Int => "[]int",
                Elem::Slices => "[][]interface {}",
            }
            .into(),
            Value::Map(m) => match m.elem {
                MapElem::Any => "map[string]interface {}",
                MapElem::Str => "map[string]string",
            }
            .into(),
            Value::Version(_, true) => "*semver.Version".into(),
            Value::Version(_, false) => "semver.Version".into(),
        }
    }

    /// Go's `reflect.Kind` name.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Missing | Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint64(_) => "uint64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::Slice(_) => "slice",
            Value::Map(_) => "map",
            Value::Version(_, true) => "ptr",
            Value::Version(_, false) => "struct",
        }
    }

    /// A nil interface or no value at all.
    pub fn is_nil_interface(&self) -> bool {
        matches!(self, Value::Missing | Value::Nil)
    }

    /// text/template's truth (`isTrue`): `None` when Go cannot decide (never, for these types).
    pub fn truth(&self) -> bool {
        match self {
            Value::Missing | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint64(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Slice(s) => !s.items.is_empty(),
            Value::Map(m) => !m.entries.borrow().is_empty(),
            Value::Version(..) => true,
        }
    }

    /// sprig's `empty`.
    pub fn is_empty(&self) -> bool {
        match self {
            Value::Version(_, false) => false,
            other => !other.truth(),
        }
    }

    /// The value of a `string`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// As JSON, for `toJson` (Go's `encoding/json` rules are applied by the encoder).
    pub fn is_go_nil(&self) -> bool {
        match self {
            Value::Missing | Value::Nil => true,
            Value::Slice(s) => s.nil,
            Value::Map(m) => m.nil,
            _ => false,
        }
    }
}

/// Go's `reflect.DeepEqual` on two `interface{}` values.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Missing | Value::Nil, Value::Missing | Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
        (Value::Uint64(x), Value::Uint64(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Slice(x), Value::Slice(y)) => {
            x.elem == y.elem
                && x.nil == y.nil
                && x.items.len() == y.items.len()
                && x.items.iter().zip(&y.items).all(|(a, b)| deep_equal(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            if Rc::ptr_eq(x, y) {
                return true;
            }
            let (xe, ye) = (x.entries.borrow(), y.entries.borrow());
            x.elem == y.elem
                && x.nil == y.nil
                && xe.len() == ye.len()
                && xe
                    .iter()
                    .all(|(k, v)| ye.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::Version(x, p), Value::Version(y, q)) => p == q && (Rc::ptr_eq(x, y) || **x == **y),
        _ => false,
    }
}
