//! Cluster API release versions (`major.minor`), as an extension targets them.

use std::fmt;
use std::str::FromStr;

/// A Cluster API `major.minor` release, e.g. `1.14`.
///
/// ```
/// use capi_ext_codegen::version::CapiVersion;
///
/// let v: CapiVersion = "v1.12.3".parse().unwrap();
/// assert_eq!(v, CapiVersion::new(1, 12));
/// assert!(v < CapiVersion::DEFAULT);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CapiVersion {
    /// Major version (always 1 so far).
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl CapiVersion {
    /// The version capi-ext targets when the extension does not say: Cluster API 1.14.
    pub const DEFAULT: CapiVersion = CapiVersion::new(1, 14);
    /// The oldest version with a Runtime SDK (ExtensionConfig and the first hooks).
    pub const OLDEST: CapiVersion = CapiVersion::new(1, 2);
    /// The oldest release the conformance suite runs the real CAPI manager of
    /// (`conformance/versions.env`); older targets are accepted but unproven.
    pub const OLDEST_PROVEN: CapiVersion = CapiVersion::new(1, 12);

    /// Whether the real Cluster API of this minor is proven to work with capi-ext.
    ///
    /// ```
    /// use capi_ext_codegen::version::CapiVersion;
    /// assert!(CapiVersion::new(1, 14).is_proven());
    /// assert!(!CapiVersion::new(1, 10).is_proven());
    /// ```
    pub fn is_proven(self) -> bool {
        self >= Self::OLDEST_PROVEN && self <= Self::DEFAULT
    }

    /// A warning for targets the conformance suite does not prove, if this is one.
    pub fn unproven_warning(self) -> Option<String> {
        (!self.is_proven()).then(|| {
            format!(
                "Cluster API {self} is outside the releases capi-ext proves against the real Cluster API ({} to {}): the hooks it advertises follow CAPI's catalog, but nothing here has run it",
                Self::OLDEST_PROVEN,
                Self::DEFAULT
            )
        })
    }

    /// A version from its parts.
    pub const fn new(major: u16, minor: u16) -> Self {
        CapiVersion { major, minor }
    }
}

impl Default for CapiVersion {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for CapiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Why a text is not a Cluster API version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseVersionError(String);

impl fmt::Display for ParseVersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a Cluster API version: expected `MAJOR.MINOR` such as `1.14` (a leading `v` and a patch part are accepted)",
            self.0
        )
    }
}

impl std::error::Error for ParseVersionError {}

impl FromStr for CapiVersion {
    type Err = ParseVersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseVersionError(s.to_string());
        let trimmed = s.trim().strip_prefix('v').unwrap_or(s.trim());
        let mut parts = trimmed.split('.');
        let major = parts.next().and_then(|p| p.parse().ok()).ok_or_else(err)?;
        let minor = parts.next().and_then(|p| p.parse().ok()).ok_or_else(err)?;
        match parts.next() {
            None => {}
            Some(patch) if patch.parse::<u32>().is_ok() && parts.next().is_none() => {}
            Some(_) => return Err(err()),
        }
        if major != 1 || CapiVersion::new(major, minor) < CapiVersion::OLDEST {
            return Err(err());
        }
        Ok(CapiVersion::new(major, minor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The releases the conformance suite runs (`CAPI_MATRIX` of conformance/versions.env),
    /// newest first.
    fn proven_releases() -> Vec<CapiVersion> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../conformance/versions.env");
        let text = std::fs::read_to_string(path).expect("conformance/versions.env");
        let matrix = text
            .lines()
            .find_map(|l| l.strip_prefix("CAPI_MATRIX="))
            .expect("CAPI_MATRIX in conformance/versions.env");
        matrix
            .trim_matches('"')
            .split_whitespace()
            .map(|entry| entry.split(':').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn the_proven_range_is_the_conformance_matrix() {
        let releases = proven_releases();
        assert_eq!(
            (releases.first().copied(), releases.last().copied()),
            (Some(CapiVersion::DEFAULT), Some(CapiVersion::OLDEST_PROVEN)),
            "conformance/versions.env's CAPI_MATRIX runs {releases:?}: move CapiVersion::DEFAULT to its newest entry and OLDEST_PROVEN to its oldest"
        );
    }

    #[test]
    fn parses_common_spellings() {
        for (text, want) in [
            ("1.14", (1, 14)),
            ("v1.12", (1, 12)),
            ("1.13.4", (1, 13)),
            (" v1.2.0 ", (1, 2)),
        ] {
            assert_eq!(
                text.parse::<CapiVersion>().unwrap(),
                CapiVersion::new(want.0, want.1),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_garbage_and_pre_runtime_sdk_versions() {
        for text in ["", "1", "1.x", "2.0", "1.1", "1.14.3.1", "latest"] {
            let err = text.parse::<CapiVersion>().unwrap_err();
            assert!(err.to_string().contains("MAJOR.MINOR"), "{text}: {err}");
        }
    }

    #[test]
    fn orders_by_minor() {
        assert!(CapiVersion::new(1, 9) < CapiVersion::new(1, 12));
        assert_eq!(CapiVersion::default().to_string(), "1.14");
    }
}
