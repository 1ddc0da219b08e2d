//! What CAPI's reconcile loop needs from an extension's answers: the same answer to the same
//! request, GeneratePatches patches that do not depend on the order of the items (CAPI builds
//! them from maps), and messages without times or random parts (since v1.14 they land in the
//! Cluster's conditions, and a message that changes on every call rewrites them on every
//! reconcile). `render`, `diff` and `verify` check all three with these functions.
//!
//! ```
//! use capi_ext_render::determinism::{first_difference, volatile_part};
//! use serde_json::json;
//!
//! let d = first_difference(&json!({"message": "a", "n": 1}), &json!({"message": "a", "n": 2})).unwrap();
//! assert_eq!((d.field.as_str(), d.first.as_str(), d.second.as_str()), ("/n", "1", "2"));
//! assert_eq!(volatile_part("held since 2026-11-30T10:00:00Z").unwrap().0, "a timestamp");
//! assert!(volatile_part("waiting for annotation approved").is_none());
//! ```

use capi_ext::hooks::v1alpha1::{GeneratePatchesRequest, GeneratePatchesResponse, Patch};
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Where two answers differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// A JSON pointer into the answer (`/items/0/patch`), or `the patch of item <uid>`.
    pub field: String,
    /// The first answer there.
    pub first: String,
    /// The second.
    pub second: String,
}

/// The first place two JSON values differ.
pub fn first_difference(a: &Value, b: &Value) -> Option<Difference> {
    difference_at(a, b, "")
}

fn difference_at(a: &Value, b: &Value, at: &str) -> Option<Difference> {
    match (a, b) {
        _ if a == b => None,
        (Value::Object(x), Value::Object(y)) => x
            .keys()
            .chain(y.keys().filter(|k| !x.contains_key(*k)))
            .find_map(|k| {
                let null = Value::Null;
                difference_at(
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    &format!("{at}/{}", capi_ext::hooks::v1alpha1::escape_token(k)),
                )
            }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| difference_at(p, q, &format!("{at}/{i}"))),
        _ => Some(Difference {
            field: if at.is_empty() { "/".into() } else { at.into() },
            first: a.to_string(),
            second: b.to_string(),
        }),
    }
}

/// The request with its items in reverse order (`None` when fewer than two: nothing to reorder).
pub fn reversed(request: &GeneratePatchesRequest) -> Option<GeneratePatchesRequest> {
    if request.items.len() < 2 {
        return None;
    }
    let mut reversed = request.clone();
    reversed.items.reverse();
    Some(reversed)
}

/// The first item whose patch differs between two answers to the same items (in any order).
pub fn item_patch_difference(
    first: &GeneratePatchesResponse,
    second: &GeneratePatchesResponse,
) -> Option<Difference> {
    let by_uid = |r: &GeneratePatchesResponse| -> BTreeMap<String, Value> {
        r.items
            .iter()
            .map(|i| {
                (
                    i.uid.clone(),
                    serde_json::to_value(&i.patch).unwrap_or_default(),
                )
            })
            .collect()
    };
    let (a, b) = (by_uid(first), by_uid(second));
    let null = Value::Null;
    let decode = |v: &Value| {
        serde_json::from_value::<Patch>(v.clone())
            .map(|p| String::from_utf8_lossy(&p.document()).into_owned())
            .unwrap_or_else(|_| "no patch".into())
    };
    a.keys().chain(b.keys()).find_map(|uid| {
        let (p, q) = (a.get(uid).unwrap_or(&null), b.get(uid).unwrap_or(&null));
        (p != q).then(|| Difference {
            field: format!("the patch of item {uid}"),
            first: decode(p),
            second: decode(q),
        })
    })
}

/// A part of a message that changes from call to call, and what it looks like: a timestamp, a
/// time of day, a UUID (CAPI gives GeneratePatches items new random uids on every reconcile),
/// a Unix time, an elapsed time.
pub fn volatile_part(message: &str) -> Option<(&'static str, &str)> {
    static PATTERNS: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            ("a timestamp", r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"),
            ("a time of day", r"\b\d{1,2}:\d{2}:\d{2}\b"),
            (
                "a UUID",
                r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            ),
            ("a Unix time", r"\b1[5-9]\d{8}(\d{3})?\b"),
            (
                "an elapsed time",
                r"\b\d+(\.\d+)?(ns|µs|us|ms)\b|\b\d+\.\d+s\b",
            ),
        ]
        .into_iter()
        .map(|(what, pattern)| (what, Regex::new(pattern).expect("valid pattern")))
        .collect()
    });
    patterns
        .iter()
        .find_map(|(what, regex)| regex.find(message).map(|m| (*what, m.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn volatile_parts_are_found_and_ordinary_messages_pass() {
        for (message, what, part) in [
            (
                "retry at 2026-11-30 10:00",
                "a timestamp",
                "2026-11-30 10:00",
            ),
            ("held (checked 10:04:05)", "a time of day", "10:04:05"),
            (
                "item 3F2504E0-4F89-11D3-9A0C-0305E82C3301 is wrong",
                "a UUID",
                "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
            ),
            ("since 1796060269", "a Unix time", "1796060269"),
            ("lookup took 12ms", "an elapsed time", "12ms"),
            ("lookup took 1.52s", "an elapsed time", "1.52s"),
        ] {
            assert_eq!(volatile_part(message), Some((what, part)), "{message}");
        }
        for message in [
            "waiting for annotation quickstart.capi-ext.io/approved",
            "replicas must be at most 100, got 1000000",
            "Kubernetes v1.34.0 is not supported; use v1.35.0",
            "retry in 10s",
            "",
        ] {
            assert_eq!(volatile_part(message), None, "{message}");
        }
    }

    #[test]
    fn differences_name_the_pointer() {
        let d = first_difference(&json!({"a/b": [1, 2]}), &json!({"a/b": [1, 3]})).unwrap();
        assert_eq!(d.field, "/a~1b/1");
        let d = first_difference(&json!(1), &json!(2)).unwrap();
        assert_eq!(d.field, "/");
        assert!(first_difference(&json!({"a": 1}), &json!({"a": 1})).is_none());
    }
}
