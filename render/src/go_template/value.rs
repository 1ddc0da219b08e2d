//! The values a template works on, typed as Go types them: CAPI hands the template the
//! variables decoded from JSON into `interface{}` (so `map[string]interface {}`,
//! `[]interface {}`, `float64`, `string`, `bool`, nil), constants in the template are Go's `int`,
//! `float64` and `string`, and sprig's functions return their own types (`int64`, `[]string`,
//! `map[string]string`, `*semver.Version`, ...). The type decides what a function accepts, how
//! `printf` prints and how `eq` compares, so it is kept.

use super::semver::Version;
use super::time::Time;
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
    /// `uint64`, or `uint8` (a byte of a string, from `index`).
    Uint(u64, UintType),
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
    /// `time.Time` (sprig's `toDate`, `mustDateModify`).
    Time(Rc<Time>),
}

/// Which unsigned type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UintType {
    /// `uint8`
    U8,
    /// `uint64`
    U64,
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
    /// Its capacity: sprig's `slice` may reach past the length up to it, as Go's reflect does.
    pub cap: usize,
}

impl Elem {
    /// The size of an element in bytes (what Go's allocator rounds).
    fn size(self) -> usize {
        match self {
            Elem::Any | Elem::Str => 16,
            Elem::Int => 8,
            Elem::Slices => 24,
        }
    }

    /// The zero value of an element (what a slice holds past its length).
    pub fn zero(self) -> Value {
        match self {
            Elem::Any => Value::Nil,
            Elem::Str => Value::str(""),
            Elem::Int => Value::Int(0),
            Elem::Slices => Value::nil_slice(Elem::Any),
        }
    }
}

/// Go's allocation size classes (runtime/sizeclasses.go), up to 32 KiB; above, whole pages.
const SIZE_CLASSES: &[usize] = &[
    8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352,
    384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048,
    2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728,
    10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672,
    32768,
];

/// The capacity Go's `append` gives a slice of capacity `old_cap` that must hold `new_len`
/// (runtime.growslice: double below 256, then grow by a quarter plus 192; rounded up to the
/// allocator's size class).
pub fn grown_cap(old_cap: usize, new_len: usize, elem: Elem) -> usize {
    let double = old_cap * 2;
    let mut cap = if new_len > double {
        new_len
    } else if old_cap < 256 {
        double
    } else {
        let mut c = old_cap;
        while c < new_len {
            c += (c + 768) / 4;
        }
        c
    };
    let size = elem.size();
    let bytes = cap * size;
    let rounded = SIZE_CLASSES
        .iter()
        .copied()
        .find(|&c| c >= bytes)
        .unwrap_or_else(|| bytes.div_ceil(8192) * 8192);
    cap = rounded / size;
    cap
}

/// The capacity of a slice built by appending `len` elements one by one to one of `start` capacity.
pub fn appended_cap(start: usize, len: usize, elem: Elem) -> usize {
    let mut cap = start;
    for n in 1..=len {
        if n > cap {
            cap = grown_cap(cap, n, elem);
        }
    }
    cap
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
        let cap = items.len();
        Value::slice_with_cap(elem, items, cap)
    }

    /// A slice of `elem` with capacity `cap` (at least its length).
    pub fn slice_with_cap(elem: Elem, items: Vec<Value>, cap: usize) -> Value {
        let cap = cap.max(items.len());
        Value::Slice(Rc::new(Slice {
            elem,
            items,
            nil: false,
            cap,
        }))
    }

    /// A slice of `elem` built by appending its elements one by one to an empty one.
    pub fn appended(elem: Elem, items: Vec<Value>) -> Value {
        let cap = appended_cap(0, items.len(), elem);
        Value::slice_with_cap(elem, items, cap)
    }

    /// A nil slice of `elem`.
    pub fn nil_slice(elem: Elem) -> Value {
        Value::Slice(Rc::new(Slice {
            elem,
            items: Vec::new(),
            nil: true,
            cap: 0,
        }))
    }

    /// A `[]string`.
    pub fn strings(items: impl IntoIterator<Item = String>) -> Value {
        Value::slice(Elem::Str, items.into_iter().map(Value::str).collect())
    }

    /// A `[]string` of capacity `cap`.
    pub fn strings_with_cap(items: impl IntoIterator<Item = String>, cap: usize) -> Value {
        Value::slice_with_cap(Elem::Str, items.into_iter().map(Value::str).collect(), cap)
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
                Value::appended(Elem::Any, items.iter().map(Value::from_json).collect())
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
            Value::Uint(_, UintType::U8) => "uint8".into(),
            Value::Uint(_, UintType::U64) => "uint64".into(),
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
            Value::Time(_) => "time.Time".into(),
        }
    }

    /// Go's `reflect.Kind` name.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Missing | Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint(_, UintType::U8) => "uint8",
            Value::Uint(_, UintType::U64) => "uint64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::Slice(_) => "slice",
            Value::Map(_) => "map",
            Value::Version(_, true) => "ptr",
            Value::Version(_, false) | Value::Time(_) => "struct",
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
            Value::Uint(u, _) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Slice(s) => !s.items.is_empty(),
            Value::Map(m) => !m.entries.borrow().is_empty(),
            Value::Version(..) | Value::Time(_) => true,
        }
    }

    /// sprig's `empty`.
    pub fn is_empty(&self) -> bool {
        match self {
            Value::Version(_, false) | Value::Time(_) => false,
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

/// The character that stands for a byte of a Go string that is not UTF-8 (from `b64dec`,
/// `b32dec`): one of the last 256 code points, private use.
pub fn raw_byte(b: u8) -> char {
    char::from_u32(0x10_ff00 + u32::from(b)).expect("a valid code point")
}

/// Go string bytes as text: a byte that is not part of UTF-8 (from `b64dec`, or a cut inside a
/// character by byte-indexed functions) is kept as its [`raw_byte`] marker; an output that still
/// holds one is refused at the end (CAPI reads the output as YAML, which refuses such bytes).
pub fn go_string(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return out;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).expect("checked"));
                let bad = e.error_len().unwrap_or(after.len());
                out.extend(after[..bad].iter().map(|b| raw_byte(*b)));
                rest = &after[bad..];
            }
        }
    }
}

/// The bytes of a Go string held as text ([`raw_byte`] markers back to their byte).
pub fn go_bytes(text: &str) -> std::borrow::Cow<'_, [u8]> {
    if !has_raw_bytes(text) {
        return std::borrow::Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match raw_byte_of(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The byte a [`raw_byte`] marker stands for.
pub fn raw_byte_of(c: char) -> Option<u8> {
    let code = c as u32;
    (0x10_ff00..=0x10_ffff)
        .contains(&code)
        .then(|| (code - 0x10_ff00) as u8)
}

/// Whether `text` holds a byte that is not UTF-8.
pub fn has_raw_bytes(text: &str) -> bool {
    text.chars()
        .any(|c| (0x10_ff00..=0x10_ffff).contains(&(c as u32)))
}

/// Go's `reflect.DeepEqual` on two `interface{}` values.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    deep_equal_at(a, b, 0)
}

fn deep_equal_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > super::format::MAX_DEPTH {
        // Values this deep hold themselves; Go's DeepEqual calls such a pair equal.
        return true;
    }
    let deep_equal = |a: &Value, b: &Value| deep_equal_at(a, b, depth + 1);
    match (a, b) {
        (Value::Missing | Value::Nil, Value::Missing | Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
        (Value::Uint(x, s), Value::Uint(y, t)) => x == y && s == t,
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
        (Value::Time(x), Value::Time(y)) => x.deep_same(y),
        _ => false,
    }
}
