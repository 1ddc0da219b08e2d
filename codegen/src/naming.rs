//! Naming rules CAPI enforces on what an extension advertises.

use std::fmt;

/// The range of `timeoutSeconds` CAPI accepts in Discovery (inclusive).
pub const TIMEOUT_RANGE: std::ops::RangeInclusive<i32> = 0..=30;

/// Why a handler name is not a DNS-1123 label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidName {
    /// The offending name.
    pub name: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for InvalidName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "handler name `{}` is not a DNS-1123 label: {} (use 1-63 lowercase letters, digits and '-', starting and ending with a letter or digit, e.g. `{}`)",
            self.name,
            self.reason,
            to_dns_label(&self.name)
        )
    }
}

impl std::error::Error for InvalidName {}

/// Checks a name the way Kubernetes' `IsDNS1123Label` does
/// (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters).
///
/// ```
/// use capi_ext_codegen::naming::validate_dns_label;
/// assert!(validate_dns_label("before-cluster-create").is_ok());
/// assert!(validate_dns_label("Before").is_err());
/// assert!(validate_dns_label("a.b").is_err());
/// ```
pub fn validate_dns_label(name: &str) -> Result<(), InvalidName> {
    let fail = |reason| {
        Err(InvalidName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() {
        return fail("it is empty");
    }
    if name.len() > 63 {
        return fail("it is longer than 63 characters");
    }
    if name.contains('.') {
        return fail("it contains a '.' (CAPI appends `.<extensionconfig>` to handler names)");
    }
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        return fail("it contains uppercase letters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return fail("it contains characters other than a-z, 0-9 and '-'");
    }
    if name.starts_with('-') || name.ends_with('-') {
        return fail("it starts or ends with '-'");
    }
    Ok(())
}

/// Best-effort conversion of any text to a DNS-1123 label (for hints and defaults):
/// `BeforeClusterCreate` and `before_cluster_create` both become `before-cluster-create`.
///
/// ```
/// use capi_ext_codegen::naming::to_dns_label;
/// assert_eq!(to_dns_label("BeforeClusterCreate"), "before-cluster-create");
/// assert_eq!(to_dns_label("generate_patches"), "generate-patches");
/// ```
pub fn to_dns_label(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            prev_lower = true;
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
            prev_lower = false;
        }
    }
    let trimmed = out.trim_matches('-');
    let mut label: String = trimmed.chars().take(63).collect();
    while label.ends_with('-') {
        label.pop();
    }
    if label.is_empty() {
        "handler".to_string()
    } else {
        label
    }
}

/// Why a handler timeout is not acceptable to CAPI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTimeout(pub i64);

impl fmt::Display for InvalidTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timeout of {} seconds is outside the range CAPI accepts ({}..={} seconds; 0 means CAPI's default of 10)",
            self.0,
            TIMEOUT_RANGE.start(),
            TIMEOUT_RANGE.end()
        )
    }
}

impl std::error::Error for InvalidTimeout {}

/// Checks a handler's `timeoutSeconds` against CAPI's range.
///
/// ```
/// use capi_ext_codegen::naming::validate_timeout;
/// assert_eq!(validate_timeout(10), Ok(10));
/// assert!(validate_timeout(31).is_err());
/// ```
pub fn validate_timeout(seconds: i64) -> Result<i32, InvalidTimeout> {
    match i32::try_from(seconds) {
        Ok(s) if TIMEOUT_RANGE.contains(&s) => Ok(s),
        _ => Err(InvalidTimeout(seconds)),
    }
}

/// The candidate closest to `input` (case-insensitive edit distance), if it is close enough
/// to be a plausible typo.
pub fn did_you_mean<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let needle = input.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&needle, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        for ok in ["a", "a-b", "0abc", "x".repeat(63).as_str()] {
            assert!(validate_dns_label(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("-a", "starts or ends"),
            ("a-", "starts or ends"),
            ("a_b", "characters other"),
            ("a.b", "contains a '.'"),
            ("Ab", "uppercase"),
            (&"x".repeat(64), "longer than 63"),
        ] {
            let err = validate_dns_label(bad).unwrap_err();
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn timeouts() {
        assert_eq!(validate_timeout(0), Ok(0));
        assert_eq!(validate_timeout(30), Ok(30));
        assert!(
            validate_timeout(-1)
                .unwrap_err()
                .to_string()
                .contains("0..=30")
        );
        assert!(validate_timeout(i64::MAX).is_err());
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("GeneratePatch", ["GeneratePatches", "ValidateTopology"]),
            Some("GeneratePatches")
        );
        assert_eq!(did_you_mean("xyz", ["GeneratePatches"]), None);
        assert_eq!(to_dns_label("__Weird__Name__"), "weird-name");
        assert_eq!(to_dns_label("!!!"), "handler");
    }
}
