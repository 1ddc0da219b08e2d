//! sprig's `semver` and `semverCompare`, and the methods of `*semver.Version` a template may
//! call (`.Major`, `.LessThan`, `.IncMinor`, ...).

use super::super::semver::{Version, satisfies};
use super::super::value::{UintType, Value};
use super::{Func, Out, Table, Ty, boolean, sig, string, text};
use std::cmp::Ordering;
use std::rc::Rc;

pub(super) const TABLE: Table = &[
    sig("semver", &[Ty::Str], None),
    sig("semverCompare", &[Ty::Str, Ty::Str], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "semver" => Ok(Value::Version(
            Rc::new(Version::parse(text(&args[0]))?),
            true,
        )),
        "semverCompare" => {
            let version = Version::parse(text(&args[1]));
            // The constraint is read first: its error wins.
            let check = |v: &Version| satisfies(text(&args[0]), v);
            match version {
                Ok(v) => boolean(check(&v)?),
                Err(e) => {
                    check(&Version::parse("0.0.0").expect("valid"))?;
                    Err(e)
                }
            }
        }
        _ => unreachable!("{name} is in the table"),
    }
}

const VALUE_METHODS: Table = &[
    sig("String", &[], None),
    sig("Major", &[], None),
    sig("Minor", &[], None),
    sig("Patch", &[], None),
    sig("Prerelease", &[], None),
    sig("Metadata", &[], None),
    sig("IncMajor", &[], None),
    sig("IncMinor", &[], None),
    sig("IncPatch", &[], None),
    sig("SetPrerelease", &[Ty::Str], None),
    sig("SetMetadata", &[Ty::Str], None),
];

const POINTER_METHODS: Table = &[
    sig("Original", &[], None),
    sig("LessThan", &[Ty::VersionPtr], None),
    sig("LessThanEqual", &[Ty::VersionPtr], None),
    sig("GreaterThan", &[Ty::VersionPtr], None),
    sig("GreaterThanEqual", &[Ty::VersionPtr], None),
    sig("Equal", &[Ty::VersionPtr], None),
    sig("Compare", &[Ty::VersionPtr], None),
];

/// The method `name` of a `*semver.Version` (`pointer`) or a `semver.Version`.
pub(in super::super) fn semver_method(name: &str, pointer: bool) -> Option<Func> {
    let found = VALUE_METHODS
        .iter()
        .chain(if pointer { POINTER_METHODS } else { &[] })
        .find(|(n, ..)| *n == name)?;
    Some(Func {
        name: found.0,
        params: found.1,
        variadic: None,
        family: method,
        unsupported: None,
    })
}

fn method(name: &str, args: Vec<Value>) -> Out {
    let Value::Version(v, _) = &args[0] else {
        unreachable!("a method has its receiver")
    };
    let other = || match args.get(1) {
        Some(Value::Version(o, _)) => Ok((**o).clone()),
        _ => Err("runtime error: invalid memory address or nil pointer dereference".to_string()),
    };
    let version = |v: Version| Ok(Value::Version(Rc::new(v), false));
    match name {
        "String" => string(v.to_string()),
        "Original" => string(v.original.as_str()),
        "Major" => Ok(Value::Uint(v.major, UintType::U64)),
        "Minor" => Ok(Value::Uint(v.minor, UintType::U64)),
        "Patch" => Ok(Value::Uint(v.patch, UintType::U64)),
        "Prerelease" => string(v.pre.as_str()),
        "Metadata" => string(v.metadata.as_str()),
        "IncMajor" => version(v.increment("major")),
        "IncMinor" => version(v.increment("minor")),
        "IncPatch" => version(v.increment("patch")),
        "SetPrerelease" => version(v.with(true, text(&args[1]))?),
        "SetMetadata" => version(v.with(false, text(&args[1]))?),
        "LessThan" => boolean(v.compare(&other()?) == Ordering::Less),
        "LessThanEqual" => boolean(v.compare(&other()?) != Ordering::Greater),
        "GreaterThan" => boolean(v.compare(&other()?) == Ordering::Greater),
        "GreaterThanEqual" => boolean(v.compare(&other()?) != Ordering::Less),
        "Equal" => {
            if let Some(Value::Nil) = args.get(1) {
                return boolean(false);
            }
            boolean(v.compare(&other()?) == Ordering::Equal)
        }
        "Compare" => Ok(Value::Int(match v.compare(&other()?) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        })),
        _ => unreachable!("{name} is in a method table"),
    }
}
