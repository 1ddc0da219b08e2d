//! Masterminds/semver v3.4.0 (what sprig's `semver` and `semverCompare` use in Cluster API's
//! build: sprig asks for v3.3.0, Cluster API's module graph selects v3.4.0): lenient
//! versions (`v1`, `1.2`), precedence, and constraints (`>= 1.2 < 2`, `~1.2`, `^1`, `1.x`,
//! ranges `1 - 2`, `||`).

use regex::Regex;
use std::cmp::Ordering;
use std::sync::LazyLock;

const CV: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";
const S: &str = r"[\t\n\f\r ]";

static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$").expect("valid")
});
static CONSTRAINT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"^{S}*({OPS}){S}*({CV}){S}*$")).expect("valid"));
static RANGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"{S}*({CV}){S}+-{S}+({CV}){S}*")).expect("valid"));
static FIND: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"({OPS}){S}*({CV})")).expect("valid"));
static VALID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^({S}*({OPS}){S}*({CV}){S}*)((?:{S}+|,{S}*)({OPS}){S}*({CV}){S}*)*$"
    ))
    .expect("valid")
});

/// A version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
    /// Prerelease, without `-`.
    pub pre: String,
    /// Build metadata, without `+`.
    pub metadata: String,
    /// The text it was read from.
    pub original: String,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

fn valid_identifiers(s: &str, prerelease: bool) -> Result<(), String> {
    for part in s.split('.') {
        if !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(if prerelease {
                "Invalid Prerelease string"
            } else {
                "Invalid Metadata string"
            }
            .into());
        }
        if prerelease
            && part.len() > 1
            && part.bytes().all(|b| b.is_ascii_digit())
            && part.starts_with('0')
        {
            return Err("Version segment starts with 0".into());
        }
    }
    Ok(())
}

impl Version {
    /// `semver.NewVersion`.
    pub fn parse(v: &str) -> Result<Version, String> {
        let m = VERSION.captures(v).ok_or("invalid semantic version")?;
        let segment = |i: usize| -> Result<u64, String> {
            match m.get(i) {
                None => Ok(0),
                Some(s) => s
                    .as_str()
                    .trim_start_matches('.')
                    .parse()
                    .map_err(|_| format!("Error parsing version segment: strconv.ParseUint: parsing {:?}: value out of range", s.as_str().trim_start_matches('.'))),
            }
        };
        let version = Version {
            major: segment(1)?,
            minor: segment(2)?,
            patch: segment(3)?,
            pre: m.get(5).map_or("", |s| s.as_str()).to_string(),
            metadata: m.get(8).map_or("", |s| s.as_str()).to_string(),
            original: v.to_string(),
        };
        if !version.pre.is_empty() {
            valid_identifiers(&version.pre, true)?;
        }
        if !version.metadata.is_empty() {
            valid_identifiers(&version.metadata, false)?;
        }
        Ok(version)
    }

    /// `Version.Compare`.
    pub fn compare(&self, o: &Version) -> Ordering {
        self.major
            .cmp(&o.major)
            .then(self.minor.cmp(&o.minor))
            .then(self.patch.cmp(&o.patch))
            .then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &o.pre),
            })
    }

    fn v_prefix(&self) -> &str {
        if self.original.starts_with('v') {
            "v"
        } else {
            ""
        }
    }

    /// `IncMajor`, `IncMinor`, `IncPatch`.
    pub fn increment(&self, part: &str) -> Version {
        let mut next = self.clone();
        next.metadata.clear();
        match part {
            "major" => {
                next.pre.clear();
                next.major += 1;
                next.minor = 0;
                next.patch = 0;
            }
            "minor" => {
                next.pre.clear();
                next.minor += 1;
                next.patch = 0;
            }
            _ => {
                if self.pre.is_empty() {
                    next.patch += 1;
                }
                next.pre.clear();
            }
        }
        next.original = format!("{}{next}", self.v_prefix());
        next
    }

    /// `SetPrerelease`, `SetMetadata`.
    pub fn with(&self, prerelease: bool, value: &str) -> Result<Version, String> {
        if !value.is_empty() {
            valid_identifiers(value, prerelease)?;
        }
        let mut next = self.clone();
        if prerelease {
            next.pre = value.to_string();
        } else {
            next.metadata = value.to_string();
        }
        next.original = format!("{}{next}", self.v_prefix());
        Ok(next)
    }
}

fn compare_prerelease(v: &str, o: &str) -> Ordering {
    let (s, t): (Vec<&str>, Vec<&str>) = (v.split('.').collect(), o.split('.').collect());
    for i in 0..s.len().max(t.len()) {
        let d = compare_part(
            s.get(i).copied().unwrap_or(""),
            t.get(i).copied().unwrap_or(""),
        );
        if d != Ordering::Equal {
            return d;
        }
    }
    Ordering::Equal
}

fn compare_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    match (s.parse::<u64>(), o.parse::<u64>()) {
        (Err(_), Err(_)) => {
            if s > o {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Ok(a), Ok(b)) => {
            if a > b {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
    }
}

struct Constraint {
    con: Version,
    op: String,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "*" | "X")
}

fn parse_constraint(c: &str) -> Result<Constraint, String> {
    if c.is_empty() {
        return Ok(Constraint {
            con: Version::parse("0.0.0")?,
            op: String::new(),
            minor_dirty: false,
            patch_dirty: false,
            dirty: true,
        });
    }
    let m = CONSTRAINT
        .captures(c)
        .ok_or_else(|| format!("improper constraint: {c}"))?;
    let g = |i: usize| m.get(i).map_or("", |s| s.as_str());
    let (m3, m4, m5, m6) = (g(3), g(4), g(5), g(6));
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let ver = if is_x(m3) || m3.is_empty() {
        dirty = true;
        format!("0.0.0{m6}")
    } else if is_x(m4.trim_start_matches('.')) || m4.is_empty() {
        minor_dirty = true;
        dirty = true;
        format!("{m3}.0.0{m6}")
    } else if is_x(m5.trim_start_matches('.')) || m5.is_empty() {
        dirty = true;
        patch_dirty = true;
        format!("{m3}{m4}.0{m6}")
    } else {
        g(2).to_string()
    };
    let con = Version::parse(&ver).map_err(|_| "constraint parser error".to_string())?;
    Ok(Constraint {
        con,
        op: g(1).to_string(),
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    /// `include_pre`: a constraint of the same `||` group names a prerelease.
    fn check(&self, v: &Version, include_pre: bool) -> bool {
        let c = &self.con;
        let pre_blocked = !v.pre.is_empty() && !include_pre;
        let lt = |a: &Version, b: &Version| a.compare(b) == Ordering::Less;
        let tilde = |this: &Constraint| -> bool {
            if pre_blocked || lt(v, &this.con) {
                return false;
            }
            if this.con.major == 0
                && this.con.minor == 0
                && this.con.patch == 0
                && !this.minor_dirty
                && !this.patch_dirty
            {
                return true;
            }
            if v.major != this.con.major {
                return false;
            }
            v.minor == this.con.minor || this.minor_dirty
        };
        match self.op.as_str() {
            "" | "=" => {
                if pre_blocked {
                    return false;
                }
                if self.dirty {
                    return tilde(self);
                }
                v.compare(c) == Ordering::Equal
            }
            "!=" => {
                if pre_blocked {
                    return false;
                }
                if self.dirty {
                    if c.major != v.major {
                        return true;
                    }
                    if c.minor != v.minor && !self.minor_dirty {
                        return true;
                    } else if self.minor_dirty {
                        return false;
                    } else if c.patch != v.patch && !self.patch_dirty {
                        return true;
                    } else if self.patch_dirty {
                        if !v.pre.is_empty() || !c.pre.is_empty() {
                            return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                        }
                        return false;
                    }
                }
                v.compare(c) != Ordering::Equal
            }
            ">" => {
                if pre_blocked {
                    return false;
                }
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major > c.major {
                    true
                } else if v.major < c.major || self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    v.compare(c) == Ordering::Greater
                }
            }
            "<" => !pre_blocked && v.compare(c) == Ordering::Less,
            ">=" | "=>" => !pre_blocked && v.compare(c) != Ordering::Less,
            "<=" | "=<" => {
                if pre_blocked {
                    return false;
                }
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            "~" | "~>" => tilde(self),
            _ => {
                // ^
                if pre_blocked || lt(v, c) {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if c.major == 0 && v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                if c.minor == 0 && v.minor > 0 {
                    return false;
                }
                c.patch == v.patch
            }
        }
    }
}

/// `semver.NewConstraint(c).Check(v)`.
pub fn satisfies(constraint: &str, version: &Version) -> Result<bool, String> {
    let mut rewritten = constraint.to_string();
    for caps in RANGE.captures_iter(constraint) {
        let whole = caps.get(0).map_or("", |m| m.as_str());
        let replacement = format!(">= {}, <= {} ", &caps[1], &caps[11]);
        rewritten = rewritten.replacen(whole, &replacement, 1);
    }
    let mut any = false;
    let mut groups = Vec::new();
    for part in rewritten.split("||") {
        if !VALID.is_match(part) {
            return Err(format!("improper constraint: {part}"));
        }
        let found: Vec<&str> = FIND.find_iter(part).map(|m| m.as_str()).collect();
        let pieces = if found.is_empty() { vec![part] } else { found };
        let mut group = Vec::new();
        for piece in pieces {
            group.push(parse_constraint(piece)?);
        }
        groups.push(group);
    }
    for group in &groups {
        let include_pre = group.iter().any(|c| !c.con.pre.is_empty());
        if group.iter().all(|c| c.check(version, include_pre)) {
            any = true;
            break;
        }
    }
    Ok(any)
}
