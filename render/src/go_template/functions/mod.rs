//! The functions a ClusterClass template can call: text/template's builtins and
//! `sprig.HermeticTxtFuncMap()` of the sprig version Cluster API pins (v3.3.0), one file per
//! family, each with Go's parameter types (they decide which arguments Go accepts).
//!
//! Every name of the hermetic map parses; the few render does not evaluate (random output,
//! key and certificate generation, random AES, building a certificate) are listed in [`UNSUPPORTED`] with the reason, and a
//! template that calls one fails with that reason instead of a guess.

mod builtins;
mod crypto;
mod dates;
mod defaults;
mod dicts;
mod encoding;
mod json;
mod lists;
mod math;
mod paths;
mod reflection;
mod regex;
mod strings;
mod urls;
mod versions;
mod words;

pub(crate) use math::parse_duration;

use super::value::Value;

pub(super) use versions::semver_method;

/// The Go type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    /// `interface{}`
    Any,
    /// `string`
    Str,
    /// `int`
    Int,
    /// `float64`
    Float,
    /// `bool`
    Bool,
    /// `map[string]interface{}`
    Map,
    /// `*semver.Version`
    VersionPtr,
    /// `reflect.Value` (the comparison builtins)
    Reflect,
    /// `time.Time`
    Time,
    /// `uint32` (`derivePassword`'s counter: only an unsigned constant converts to it)
    Uint32,
}

impl Ty {
    /// Go's name of the type.
    pub fn go_name(self) -> &'static str {
        match self {
            Ty::Any => "interface {}",
            Ty::Str => "string",
            Ty::Int => "int",
            Ty::Float => "float64",
            Ty::Bool => "bool",
            Ty::Map => "map[string]interface {}",
            Ty::VersionPtr => "*semver.Version",
            Ty::Reflect => "reflect.Value",
            Ty::Time => "time.Time",
            Ty::Uint32 => "uint32",
        }
    }
}

/// The result of a function: a value, or Go's error (or recovered panic) text.
pub(super) type Out = Result<Value, String>;

/// A function: its parameters, its variadic parameter, and the family that runs it.
#[derive(Clone, Copy)]
pub(super) struct Func {
    pub name: &'static str,
    pub params: &'static [Ty],
    pub variadic: Option<Ty>,
    pub family: fn(&str, Vec<Value>) -> Out,
    pub unsupported: Option<&'static str>,
}

impl Func {
    /// Runs the function on arguments already converted to its parameter types.
    pub fn call(&self, args: Vec<Value>) -> Out {
        (self.family)(self.name, args)
    }
}

/// A signature in a family's table.
pub(super) const fn sig(
    name: &'static str,
    params: &'static [Ty],
    variadic: Option<Ty>,
) -> (&'static str, &'static [Ty], Option<Ty>) {
    (name, params, variadic)
}

type Table = &'static [(&'static str, &'static [Ty], Option<Ty>)];

/// A family's runner.
type Family = fn(&str, Vec<Value>) -> Out;

/// text/template's own functions.
const BUILTINS: (Table, Family) = (builtins::TABLE, builtins::call);

/// sprig's families (they take precedence over a builtin of the same name: sprig's `slice`).
const FAMILIES: &[(Table, Family)] = &[
    (strings::TABLE, strings::call),
    (defaults::TABLE, defaults::call),
    (lists::TABLE, lists::call),
    (dicts::TABLE, dicts::call),
    (math::TABLE, math::call),
    (json::TABLE, json::call),
    (encoding::TABLE, encoding::call),
    (regex::TABLE, regex::call),
    (versions::TABLE, versions::call),
    (dates::TABLE, dates::call),
    (urls::TABLE, urls::call),
    (crypto::TABLE, crypto::call),
    (reflection::TABLE, reflection::call),
    (paths::TABLE, paths::call),
    (words::TABLE, words::call),
];

/// The names of the hermetic map render does not evaluate, and why.
pub const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "randInt",
        "its result is random: CAPI computes a new value at every reconcile",
    ),
    (
        "shuffle",
        "its result is random: CAPI computes a new value at every reconcile",
    ),
    (
        "bcrypt",
        "its result is salted at random: CAPI computes a new value at every reconcile",
    ),
    (
        "htpasswd",
        "its result is salted at random: CAPI computes a new value at every reconcile",
    ),
    ("genPrivateKey", "it generates a new key at every reconcile"),
    ("genCA", "it generates a new certificate at every reconcile"),
    (
        "genCAWithKey",
        "it generates a new certificate at every reconcile",
    ),
    (
        "genSelfSignedCert",
        "it generates a new certificate at every reconcile",
    ),
    (
        "genSelfSignedCertWithKey",
        "it generates a new certificate at every reconcile",
    ),
    (
        "genSignedCert",
        "it generates a new certificate at every reconcile",
    ),
    (
        "genSignedCertWithKey",
        "it generates a new certificate at every reconcile",
    ),
    (
        "buildCustomCert",
        "its verdict is that of Go's x509.ParseCertificate and private key parsers (PKCS #8, PKCS #1 with Go's RSA key checks, SEC 1, DSA) on any bytes, not ported to render",
    ),
    (
        "encryptAES",
        "its result uses a random IV: CAPI computes a new value at every reconcile",
    ),
    ("ago", "its result depends on the time of the reconcile"),
];

fn unsupported(_: &str, _: Vec<Value>) -> Out {
    Err("not supported by render".into())
}

/// The function named `name`, if text/template has one or (`sprig`) the hermetic sprig map.
pub(super) fn lookup(name: &str, sprig: bool) -> Option<Func> {
    let families: Vec<(Table, Family)> = if sprig {
        FAMILIES.iter().copied().chain([BUILTINS]).collect()
    } else {
        vec![BUILTINS]
    };
    for (table, family) in families {
        if let Some((n, params, variadic)) = table.iter().find(|(n, ..)| *n == name) {
            return Some(Func {
                name: n,
                params,
                variadic: *variadic,
                family,
                unsupported: None,
            });
        }
    }
    UNSUPPORTED
        .iter()
        .filter(|_| sprig)
        .find(|(n, _)| *n == name)
        .map(|(n, reason)| Func {
            name: n,
            params: &[],
            variadic: Some(Ty::Any),
            family: unsupported,
            unsupported: Some(reason),
        })
}

/// Whether a template may name `name` (Go's parser refuses unknown functions).
pub(super) fn exists(name: &str, sprig: bool) -> bool {
    lookup(name, sprig).is_some()
}

/// Every function render evaluates with sprig's map, builtins first.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for (table, _) in [BUILTINS].iter().chain(FAMILIES) {
        for (n, ..) in table.iter() {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    names
}

/// The text of a `string` argument (already checked to be one).
pub(super) fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The value of an `int` argument (already checked to be one).
pub(super) fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        _ => 0,
    }
}

/// sprig's `strval`: strings as they are, Stringers through `String()`, the rest `%v`.
pub(super) fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => super::format::print(other),
    }
}

/// A string result.
pub(super) fn string(s: impl Into<std::rc::Rc<str>>) -> Out {
    Ok(Value::Str(s.into()))
}

/// A bool result.
pub(super) fn boolean(b: bool) -> Out {
    Ok(Value::Bool(b))
}

/// The elements of a slice argument, or Go's panic for another kind.
pub(super) fn list_items<'a>(v: &'a Value, what: &str) -> Result<&'a [Value], String> {
    match v {
        Value::Slice(s) => Ok(&s.items),
        Value::Missing | Value::Nil => {
            Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        other => Err(format!("Cannot {what} type {}", other.kind_name())),
    }
}
