//! sprig's paths: Go's `path` (and `path/filepath`, the same on Linux where CAPI runs).

use super::super::value::Value;
use super::{Out, Table, Ty, boolean, sig, string, text};

pub(super) const TABLE: Table = &[
    sig("base", &[Ty::Str], None),
    sig("dir", &[Ty::Str], None),
    sig("clean", &[Ty::Str], None),
    sig("ext", &[Ty::Str], None),
    sig("isAbs", &[Ty::Str], None),
    sig("osBase", &[Ty::Str], None),
    sig("osClean", &[Ty::Str], None),
    sig("osDir", &[Ty::Str], None),
    sig("osExt", &[Ty::Str], None),
    sig("osIsAbs", &[Ty::Str], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    let p = text(&args[0]);
    match name.trim_start_matches("os").to_ascii_lowercase().as_str() {
        "base" => string(base(p)),
        "dir" => string(clean(&p[..p.rfind('/').map_or(0, |i| i + 1)])),
        "clean" => string(clean(p)),
        "ext" => string(
            p.rfind(['.', '/'])
                .filter(|&i| p.as_bytes()[i] == b'.')
                .map_or("", |i| &p[i..]),
        ),
        "isabs" => boolean(p.starts_with('/')),
        _ => unreachable!("{name} is in the table"),
    }
}

/// Go's `path.Base`.
fn base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Go's `path.Clean`.
fn clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}
