//! The versions of the Go extension: `github.com/blang/semver/v4` (`Parse`, `ParseTolerant`,
//! `String`, `Compare`) and Cluster API's `util/version.Compare` with build tags, as far as the
//! handlers use them.

use std::cmp::Ordering;
use std::fmt;

/// A semantic version as blang/semver parses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
    /// Pre-release identifiers.
    pub pre: Vec<Identifier>,
    /// Build metadata.
    pub build: Vec<String>,
}

/// A pre-release identifier: numeric or alphanumeric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identifier {
    /// Digits only.
    Numeric(u64),
    /// Anything else of `[0-9A-Za-z-]`.
    Alphanumeric(String),
}

fn only(s: &str, set: impl Fn(char) -> bool) -> bool {
    s.chars().all(set)
}

fn alphanumeric(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

fn leading_zeroes(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

fn number(s: &str, what: &str) -> Result<u64, String> {
    if !only(s, |c| c.is_ascii_digit()) {
        return Err(format!("Invalid character(s) found in {what} number {s:?}"));
    }
    if leading_zeroes(s) {
        return Err(format!(
            "{what} number must not contain leading zeroes {s:?}"
        ));
    }
    s.parse()
        .map_err(|e| format!("strconv.ParseUint: parsing {s:?}: {e}"))
}

impl Version {
    /// blang's `Parse`: `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, strictly.
    pub fn parse(s: &str) -> Result<Version, String> {
        if s.is_empty() {
            return Err("Version string empty".into());
        }
        let parts: Vec<&str> = s.splitn(3, '.').collect();
        let [major, minor, rest] = parts[..] else {
            return Err("No Major.Minor.Patch elements found".into());
        };
        let (rest, build) = match rest.split_once('+') {
            Some((rest, build)) => (rest, build.split('.').map(str::to_string).collect()),
            None => (rest, Vec::new()),
        };
        let (patch, pre) = match rest.split_once('-') {
            Some((patch, pre)) => (patch, pre.split('.').collect()),
            None => (rest, Vec::new()),
        };
        let version = Version {
            major: number(major, "major")?,
            minor: number(minor, "minor")?,
            patch: number(patch, "patch")?,
            pre: pre
                .into_iter()
                .map(|p| {
                    if p.is_empty() {
                        Err("Prerelease is empty".to_string())
                    } else if only(p, |c| c.is_ascii_digit()) {
                        if leading_zeroes(p) {
                            return Err(format!(
                                "Numeric PreRelease version must not contain leading zeroes {p:?}"
                            ));
                        }
                        p.parse()
                            .map(Identifier::Numeric)
                            .map_err(|e| e.to_string())
                    } else if only(p, alphanumeric) {
                        Ok(Identifier::Alphanumeric(p.to_string()))
                    } else {
                        Err(format!("Invalid character(s) found in prerelease {p:?}"))
                    }
                })
                .collect::<Result<_, _>>()?,
            build,
        };
        for b in &version.build {
            if b.is_empty() {
                return Err("Build meta data is empty".into());
            }
            if !only(b, alphanumeric) {
                return Err(format!(
                    "Invalid character(s) found in build meta data {b:?}"
                ));
            }
        }
        Ok(version)
    }

    /// blang's `ParseTolerant`: spaces and a `v` prefix trimmed, leading zeroes removed, a
    /// missing minor or patch read as 0.
    pub fn parse_tolerant(s: &str) -> Result<Version, String> {
        let s = s.trim();
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts: Vec<String> = s
            .splitn(3, '.')
            .map(|p| {
                if p.len() <= 1 {
                    return p.to_string();
                }
                let trimmed = p.trim_start_matches('0');
                if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                    format!("0{trimmed}")
                } else {
                    trimmed.to_string()
                }
            })
            .collect();
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("Short version cannot contain PreRelease/Build meta data".into());
            }
            parts.resize(3, "0".into());
        }
        Version::parse(&parts.join("."))
    }

    /// blang's `Compare`: build metadata ignored.
    pub fn compare(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let order = match (a, b) {
                            (Identifier::Numeric(a), Identifier::Numeric(b)) => a.cmp(b),
                            (Identifier::Numeric(_), _) => Ordering::Less,
                            (_, Identifier::Numeric(_)) => Ordering::Greater,
                            (Identifier::Alphanumeric(a), Identifier::Alphanumeric(b)) => a.cmp(b),
                        };
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }

    /// Cluster API's `version.Compare(a, b, version.WithBuildTags())`: equal versions are
    /// ordered by their build identifiers (numbers before strings; two different strings are
    /// 2, "not comparable").
    pub fn compare_with_build_tags(&self, other: &Version) -> i32 {
        let order = self.compare(other);
        if order != Ordering::Equal {
            return order as i32;
        }
        let numeric =
            |s: &str| only(s, |c| c.is_ascii_digit()).then(|| s.parse::<u64>().unwrap_or(0));
        for (a, b) in self.build.iter().zip(&other.build) {
            let order = match (numeric(a), numeric(b)) {
                (Some(a), Some(b)) => a.cmp(&b) as i32,
                (Some(_), None) => -1,
                (None, Some(_)) => 1,
                (None, None) if a == b => 0,
                (None, None) => 2,
            };
            if order != 0 {
                return order;
            }
        }
        self.build.len().cmp(&other.build.len()) as i32
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, p) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match p {
                Identifier::Numeric(n) => write!(f, "{n}")?,
                Identifier::Alphanumeric(s) => f.write_str(s)?,
            }
        }
        if !self.build.is_empty() {
            write!(f, "+{}", self.build.join("."))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_blang_does() {
        let v = Version::parse_tolerant(" v1.31.0-rc.1+build.7 ").unwrap();
        assert_eq!(v.to_string(), "1.31.0-rc.1+build.7");
        assert_eq!(
            Version::parse_tolerant("v1.31").unwrap().to_string(),
            "1.31.0"
        );
        assert_eq!(
            Version::parse_tolerant("01.02.03").unwrap().to_string(),
            "1.2.3"
        );
        assert!(Version::parse_tolerant("v1.31-rc.1").is_err());
        assert!(Version::parse("1.31").is_err());
        assert!(Version::parse("1.031.0").is_err());
        assert!(Version::parse("1.31.0-01").is_err());
    }

    #[test]
    fn orders_pre_releases_and_build_tags_as_go_does() {
        let v = |s| Version::parse(s).unwrap();
        assert_eq!(v("1.31.0").compare(&v("1.31.0-rc.1")), Ordering::Greater);
        assert_eq!(v("1.31.0-rc.2").compare(&v("1.31.0-rc.10")), Ordering::Less);
        assert_eq!(v("1.31.0-1").compare(&v("1.31.0-alpha")), Ordering::Less);
        assert_eq!(v("1.31.0+a").compare(&v("1.31.0+b")), Ordering::Equal);
        assert_eq!(v("1.31.0+1").compare_with_build_tags(&v("1.31.0+2")), -1);
        assert_eq!(v("1.31.0+a").compare_with_build_tags(&v("1.31.0+b")), 2);
        assert_eq!(v("1.31.0+1").compare_with_build_tags(&v("1.31.0+1.x")), -1);
        assert_eq!(v("1.32.0").compare_with_build_tags(&v("1.31.9+z")), 1);
    }
}
