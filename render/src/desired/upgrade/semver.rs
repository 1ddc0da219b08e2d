//! Kubernetes versions as CAPI's upgrade code reads them: `semver.ParseTolerant` of
//! github.com/blang/semver/v4 and `version.Compare(a, b, version.WithBuildTags())` of CAPI's
//! `util/version`.

use std::cmp::Ordering;

/// A parsed version (blang's `semver.Version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pre: Vec<Identifier>,
    build: Vec<String>,
}

/// A pre-release identifier: numeric ones sort before alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identifier {
    Number(u64),
    Text(String),
}

impl Identifier {
    fn compare(&self, other: &Identifier) -> Ordering {
        match (self, other) {
            (Identifier::Number(a), Identifier::Number(b)) => a.cmp(b),
            (Identifier::Number(_), Identifier::Text(_)) => Ordering::Less,
            (Identifier::Text(_), Identifier::Number(_)) => Ordering::Greater,
            (Identifier::Text(a), Identifier::Text(b)) => a.cmp(b),
        }
    }
}

fn digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn alphanumeric(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn number(s: &str, what: &str) -> Result<u64, String> {
    if !digits(s) {
        return Err(format!("Invalid character(s) found in {what} number {s:?}"));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!(
            "{what} number must not contain leading zeroes {s:?}"
        ));
    }
    s.parse()
        .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: invalid syntax"))
}

impl Version {
    /// `semver.ParseTolerant`: a leading `v`, spaces, leading zeros and missing minor or patch
    /// numbers are accepted.
    pub(crate) fn parse_tolerant(s: &str) -> Result<Version, String> {
        let s = s.trim();
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts: Vec<String> = s
            .splitn(3, '.')
            .map(|p| {
                if p.len() > 1 {
                    let trimmed = p.trim_start_matches('0');
                    if trimmed.is_empty() || !trimmed.as_bytes()[0].is_ascii_digit() {
                        return format!("0{trimmed}");
                    }
                    return trimmed.to_string();
                }
                p.to_string()
            })
            .collect();
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("Short version cannot contain PreRelease/Build meta data".into());
            }
            while parts.len() < 3 {
                parts.push("0".into());
            }
        }
        Version::parse(&parts.join("."))
    }

    /// `semver.Parse`.
    fn parse(s: &str) -> Result<Version, String> {
        if s.is_empty() {
            return Err("Version string empty".into());
        }
        let parts: Vec<&str> = s.splitn(3, '.').collect();
        if parts.len() != 3 {
            return Err("No Major.Minor.Patch elements found".into());
        }
        let major = number(parts[0], "Major")?;
        let minor = number(parts[1], "Minor")?;
        let mut patch = parts[2];
        let mut build = Vec::new();
        if let Some((rest, meta)) = patch.split_once('+') {
            build = meta.split('.').map(str::to_string).collect();
            patch = rest;
        }
        let mut pre = Vec::new();
        if let Some((rest, release)) = patch.split_once('-') {
            for identifier in release.split('.') {
                pre.push(pre_release(identifier)?);
            }
            patch = rest;
        }
        let patch = number(patch, "Patch")?;
        for identifier in &build {
            if identifier.is_empty() {
                return Err("Build meta data is empty".into());
            }
            if !alphanumeric(identifier) {
                return Err(format!(
                    "Invalid character(s) found in build meta data {identifier:?}"
                ));
            }
        }
        Ok(Version {
            major,
            minor,
            patch,
            pre,
            build,
        })
    }

    /// blang's `Version.Compare`: numbers, then pre-releases (none sorts last); build metadata
    /// is ignored.
    fn compare_release(&self, other: &Version) -> Ordering {
        let numbers =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if numbers != Ordering::Equal {
            return numbers;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (a, b) in self.pre.iter().zip(&other.pre) {
            let order = a.compare(b);
            if order != Ordering::Equal {
                return order;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }

    /// CAPI's `version.Compare(a, b)`: -1, 0 or 1, build metadata ignored.
    pub(crate) fn compare_release_i8(&self, other: &Version) -> i8 {
        match self.compare_release(other) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }

    /// CAPI's `version.Compare(a, b, version.WithBuildTags())`: -1, 0 or 1 as the versions
    /// order, and 2 when they differ only by build identifiers that cannot be ordered (two
    /// different texts).
    pub(crate) fn compare(&self, other: &Version) -> i8 {
        match self.compare_release(other) {
            Ordering::Less => return -1,
            Ordering::Greater => return 1,
            Ordering::Equal => {}
        }
        let build = |v: &Version| -> Vec<Identifier> {
            v.build
                .iter()
                .map(|s| match s.parse::<u64>() {
                    Ok(n) if digits(s) => Identifier::Number(n),
                    _ if digits(s) => Identifier::Number(0),
                    _ => Identifier::Text(s.clone()),
                })
                .collect()
        };
        let (a, b) = (build(self), build(other));
        for (x, y) in a.iter().zip(&b) {
            match (x, y) {
                (Identifier::Text(s), Identifier::Text(t)) if s != t => return 2,
                _ => match x.compare(y) {
                    Ordering::Less => return -1,
                    Ordering::Greater => return 1,
                    Ordering::Equal => {}
                },
            }
        }
        match a.len().cmp(&b.len()) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }
}

fn pre_release(s: &str) -> Result<Identifier, String> {
    if s.is_empty() {
        return Err("Prerelease is empty".into());
    }
    if digits(s) {
        if s.len() > 1 && s.starts_with('0') {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {s:?}"
            ));
        }
        return s
            .parse()
            .map(Identifier::Number)
            .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: value out of range"));
    }
    if alphanumeric(s) {
        return Ok(Identifier::Text(s.to_string()));
    }
    Err(format!("Invalid character(s) found in prerelease {s:?}"))
}

impl std::fmt::Display for Version {
    /// blang's `Version.String()`: without the `v`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            let pre: Vec<String> = self
                .pre
                .iter()
                .map(|p| match p {
                    Identifier::Number(n) => n.to_string(),
                    Identifier::Text(s) => s.clone(),
                })
                .collect();
            write!(f, "-{}", pre.join("."))?;
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

    fn v(s: &str) -> Version {
        Version::parse_tolerant(s).unwrap()
    }

    #[test]
    fn parses_as_blang_parse_tolerant() {
        assert_eq!(v("v1.33.0").to_string(), "1.33.0");
        assert_eq!(v(" v1.33 ").to_string(), "1.33.0");
        assert_eq!(v("v01.033.00").to_string(), "1.33.0");
        assert_eq!(
            v("v1.33.0-rc.1+kubeadm.2").to_string(),
            "1.33.0-rc.1+kubeadm.2"
        );
        assert!(Version::parse_tolerant("v1.33-rc.1").is_err());
        assert!(Version::parse_tolerant("banana").is_err());
        assert!(Version::parse_tolerant("").is_err());
        assert!(Version::parse_tolerant("v1.33.0-").is_err());
    }

    #[test]
    fn compares_as_capi_with_build_tags() {
        assert_eq!(v("v1.33.0").compare(&v("v1.34.0")), -1);
        assert_eq!(v("v1.34.1").compare(&v("v1.34.0")), 1);
        assert_eq!(v("v1.34.0").compare(&v("v1.34.0")), 0);
        assert_eq!(v("v1.34.0-rc.1").compare(&v("v1.34.0")), -1);
        assert_eq!(v("v1.34.0-rc.2").compare(&v("v1.34.0-rc.10")), -1);
        assert_eq!(v("v1.34.0-alpha").compare(&v("v1.34.0-1")), 1);
        assert_eq!(v("v1.34.0+a").compare(&v("v1.34.0+b")), 2);
        assert_eq!(v("v1.34.0+1").compare(&v("v1.34.0+2")), -1);
        assert_eq!(v("v1.34.0").compare(&v("v1.34.0+1")), -1);
        assert_eq!(v("v1.34.0+x.1").compare(&v("v1.34.0+x")), 1);
    }
}
