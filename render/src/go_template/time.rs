//! Go's `time.Time` as sprig's hermetic date functions make and read it: `time.ParseInLocation`
//! (every element of Go's layouts, its range checks and its error text), the instant and its
//! location, and the three ways a template prints one (`String`, `GoString` for `%#v`,
//! `MarshalJSON` for `toJson`).
//!
//! The local time zone is the one Cluster API's manager runs in: its image sets no `TZ` and has
//! no `/etc/localtime`, so Go's `time.Local` is UTC with no zone table. That decides what a zone
//! name in the input means (`MST` becomes a fabricated zone of offset 0, as Go does) and which
//! parsed times share a location (Go's `==`, which `eq` uses, compares location pointers).

use std::rc::Rc;

/// Where a time is shown: Go's `*time.Location`, with Go's pointer identity.
#[derive(Clone, Debug)]
pub enum Loc {
    /// `time.UTC` (or a nil location: the zero `Time`).
    Utc,
    /// `time.Local`: UTC without a zone table.
    Local,
    /// `time.FixedZone("", offset)` for a whole hour in [-12, +14]: Go keeps one per hour.
    UnnamedHour(i32),
    /// Any other `time.FixedZone`: a new location at each parse.
    Fixed(Rc<Zone>),
}

/// A fixed zone: its name (may be empty) and offset east of UTC in seconds.
#[derive(Debug, PartialEq, Eq)]
pub struct Zone {
    /// The abbreviation (`MST`), or empty.
    pub name: String,
    /// Seconds east of UTC.
    pub offset: i32,
}

impl Loc {
    fn fixed(name: &[u8], offset: i32) -> Loc {
        let hour = offset / 3600;
        if name.is_empty() && (-12..=14).contains(&hour) && hour * 3600 == offset {
            return Loc::UnnamedHour(offset);
        }
        Loc::Fixed(Rc::new(Zone {
            name: String::from_utf8_lossy(name).into_owned(),
            offset,
        }))
    }

    /// The zone's abbreviation and offset (`Location.lookup`).
    fn zone(&self) -> (&str, i32) {
        match self {
            Loc::Utc | Loc::Local => ("UTC", 0),
            Loc::UnnamedHour(offset) => ("", *offset),
            Loc::Fixed(zone) => (&zone.name, zone.offset),
        }
    }

    /// Go's `==` on `*time.Location`.
    fn same(&self, other: &Loc) -> bool {
        match (self, other) {
            (Loc::Utc, Loc::Utc) | (Loc::Local, Loc::Local) => true,
            (Loc::UnnamedHour(a), Loc::UnnamedHour(b)) => a == b,
            (Loc::Fixed(a), Loc::Fixed(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// `reflect.DeepEqual` on `*time.Location`: fixed zones by their contents.
    fn deep_same(&self, other: &Loc) -> bool {
        match (self, other) {
            (Loc::Utc, Loc::Utc) | (Loc::Local, Loc::Local) => true,
            (Loc::UnnamedHour(_) | Loc::Fixed(_), Loc::UnnamedHour(_) | Loc::Fixed(_)) => {
                self.zone() == other.zone()
            }
            _ => false,
        }
    }
}

/// A `time.Time` without a monotonic reading (none of these functions makes one).
#[derive(Clone, Debug)]
pub struct Time {
    /// Seconds since 1970-01-01 UTC.
    unix: i64,
    /// Nanoseconds within the second, [0, 1e9).
    nsec: u32,
    /// The location.
    loc: Loc,
}

/// Seconds from 0001-01-01 to 1970-01-01 (the zero `Time` is 0001-01-01 00:00:00 UTC).
const ZERO_UNIX: i64 = -62_135_596_800;

impl Time {
    /// Go's zero `Time`.
    pub fn zero() -> Time {
        Time {
            unix: ZERO_UNIX,
            nsec: 0,
            loc: Loc::Utc,
        }
    }

    /// Go's `==`: the same instant, nanosecond and location pointer.
    pub fn same(&self, other: &Time) -> bool {
        self.unix == other.unix && self.nsec == other.nsec && self.loc.same(&other.loc)
    }

    /// `reflect.DeepEqual`.
    pub fn deep_same(&self, other: &Time) -> bool {
        self.unix == other.unix && self.nsec == other.nsec && self.loc.deep_same(&other.loc)
    }

    /// `t.Add(d)` (`d` in nanoseconds).
    pub fn add(&self, d: i64) -> Time {
        let mut sec = d / 1_000_000_000;
        let mut nsec = i64::from(self.nsec) + d % 1_000_000_000;
        if nsec >= 1_000_000_000 {
            sec += 1;
            nsec -= 1_000_000_000;
        } else if nsec < 0 {
            sec -= 1;
            nsec += 1_000_000_000;
        }
        Time {
            unix: self.unix.saturating_add(sec),
            nsec: nsec as u32,
            loc: self.loc.clone(),
        }
    }

    /// The civil date and clock in the time's zone: (year, month, day, hour, minute, second).
    fn civil(&self) -> (i64, u32, u32, u32, u32, u32) {
        let local = self.unix + i64::from(self.loc.zone().1);
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400) as u32;
        let (y, m, d) = civil_from_days(days);
        (y, m, d, secs / 3600, secs / 60 % 60, secs % 60)
    }

    /// `t.String()`: `2006-01-02 15:04:05.999999999 -0700 MST`.
    pub fn go_string(&self) -> String {
        let (y, mo, d, h, mi, s) = self.civil();
        let (name, offset) = self.loc.zone();
        let mut out = String::new();
        push_int(&mut out, y, 4);
        out.push_str(&format!("-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}"));
        push_nanos(&mut out, self.nsec);
        out.push(' ');
        push_offset(&mut out, offset, false);
        out.push(' ');
        if name.is_empty() {
            push_offset(&mut out, offset, false);
        } else {
            out.push_str(name);
        }
        out
    }

    /// `t.GoString()`, what `%#v` prints.
    pub fn go_syntax(&self) -> String {
        let (y, mo, d, h, mi, s) = self.civil();
        let loc = match &self.loc {
            Loc::Utc => "time.UTC".to_string(),
            Loc::Local => "time.Local".to_string(),
            Loc::UnnamedHour(_) => "time.Location(\"\")".to_string(),
            Loc::Fixed(zone) => format!("time.Location({})", quote(zone.name.as_bytes())),
        };
        format!(
            "time.Date({y}, time.{}, {d}, {h}, {mi}, {s}, {}, {loc})",
            LONG_MONTHS[mo as usize - 1],
            self.nsec
        )
    }

    /// `t.MarshalJSON()`'s text without the quotes (RFC 3339 with nanoseconds), or its error.
    pub fn rfc3339(&self) -> Result<String, String> {
        let (y, mo, d, h, mi, s) = self.civil();
        let offset = self.loc.zone().1;
        let mut out = String::new();
        push_int(&mut out, y, 4);
        let year_width = out.len();
        out.push_str(&format!("-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}"));
        push_nanos(&mut out, self.nsec);
        if offset == 0 {
            out.push('Z');
        } else {
            push_offset(&mut out, offset, true);
        }
        if year_width != 4 {
            return Err("Time.MarshalJSON: year outside of range [0,9999]".into());
        }
        if offset != 0 && (offset / 60).abs() / 60 >= 24 {
            return Err("Time.MarshalJSON: timezone hour outside of range [0,23]".into());
        }
        Ok(out)
    }

    /// `t.Unix()`.
    pub fn unix(&self) -> i64 {
        self.unix
    }
}

/// Go's `appendInt(b, x, width)`: zero-padded to `width`, a minus sign before.
fn push_int(out: &mut String, x: i64, width: usize) {
    if x < 0 {
        out.push('-');
    }
    out.push_str(&format!("{:0width$}", x.unsigned_abs()));
}

/// `.999999999`: the nanoseconds without trailing zeros, nothing when zero.
fn push_nanos(out: &mut String, nsec: u32) {
    if nsec == 0 {
        return;
    }
    let digits = format!(".{nsec:09}");
    out.push_str(digits.trim_end_matches('0'));
}

/// `-0700` (or `-07:00` with `colon`), minutes truncated toward zero as Go does.
fn push_offset(out: &mut String, offset: i32, colon: bool) {
    let mut zone = offset / 60;
    if zone < 0 {
        out.push('-');
        zone = -zone;
    } else {
        out.push('+');
    }
    out.push_str(&format!("{:02}", zone / 60));
    if colon {
        out.push(':');
    }
    out.push_str(&format!("{:02}", zone % 60));
}

/// Days since 1970-01-01 → proleptic Gregorian (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Proleptic Gregorian (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days before the first of `month` in a non-leap year (Go's `daysBefore`).
fn days_before(month: i64) -> i64 {
    (1..month).map(|m| days_in(m, 1)).sum()
}

const SHORT_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const SHORT_MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A layout element (Go's `std*` constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    TZ,
    ISO8601TZ,
    ISO8601SecondsTZ,
    ISO8601ShortTZ,
    ISO8601ColonTZ,
    ISO8601ColonSecondsTZ,
    NumTZ,
    NumSecondsTz,
    NumShortTZ,
    NumColonTZ,
    NumColonSecondsTZ,
    /// `.000`: exactly this many digits.
    FracSecond0(usize),
    /// `.999`: any number of digits, or none.
    FracSecond9,
}

/// The zone elements of a layout, in the order Go tries them.
const ZONES: [(&str, Std); 10] = [
    ("-070000", Std::NumSecondsTz),
    ("-07:00:00", Std::NumColonSecondsTZ),
    ("-0700", Std::NumTZ),
    ("-07:00", Std::NumColonTZ),
    ("-07", Std::NumShortTZ),
    ("Z070000", Std::ISO8601SecondsTZ),
    ("Z07:00:00", Std::ISO8601ColonSecondsTZ),
    ("Z0700", Std::ISO8601TZ),
    ("Z07:00", Std::ISO8601ColonTZ),
    ("Z07", Std::ISO8601ShortTZ),
];

fn is_digit(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// Go's `nextStdChunk`: the text before the first element, the element, the text after.
fn next_std_chunk(layout: &[u8]) -> (&[u8], Option<Std>, &[u8]) {
    let has = |i: usize, s: &str| layout[i..].starts_with(s.as_bytes());
    let lower_at = |i: usize| layout.get(i).is_some_and(u8::is_ascii_lowercase);
    for i in 0..layout.len() {
        let found = |std: Std, len: usize| (&layout[..i], Some(std), &layout[i + len..]);
        match layout[i] {
            b'J' if has(i, "Jan") => {
                if has(i, "January") {
                    return found(Std::LongMonth, 7);
                }
                if !lower_at(i + 3) {
                    return found(Std::Month, 3);
                }
            }
            b'M' if layout.len() >= i + 3 => {
                if has(i, "Mon") {
                    if has(i, "Monday") {
                        return found(Std::LongWeekDay, 6);
                    }
                    if !lower_at(i + 3) {
                        return found(Std::WeekDay, 3);
                    }
                }
                if has(i, "MST") {
                    return found(Std::TZ, 3);
                }
            }
            b'0' => {
                if let Some(c @ b'1'..=b'6') = layout.get(i + 1) {
                    let std = [
                        Std::ZeroMonth,
                        Std::ZeroDay,
                        Std::ZeroHour12,
                        Std::ZeroMinute,
                        Std::ZeroSecond,
                        Std::Year,
                    ][usize::from(c - b'1')];
                    return found(std, 2);
                }
                if has(i, "002") {
                    return found(Std::ZeroYearDay, 3);
                }
            }
            b'1' => {
                if layout.get(i + 1) == Some(&b'5') {
                    return found(Std::Hour, 2);
                }
                return found(Std::NumMonth, 1);
            }
            b'2' => {
                if has(i, "2006") {
                    return found(Std::LongYear, 4);
                }
                return found(Std::Day, 1);
            }
            b'_' => {
                if layout.get(i + 1) == Some(&b'2') {
                    if has(i + 1, "2006") {
                        // `_2006` is a literal `_` and a year.
                        return (&layout[..i + 1], Some(Std::LongYear), &layout[i + 5..]);
                    }
                    return found(Std::UnderDay, 2);
                }
                if has(i, "__2") {
                    return found(Std::UnderYearDay, 3);
                }
            }
            b'3' => return found(Std::Hour12, 1),
            b'4' => return found(Std::Minute, 1),
            b'5' => return found(Std::Second, 1),
            b'P' if layout.get(i + 1) == Some(&b'M') => return found(Std::PM, 2),
            b'p' if layout.get(i + 1) == Some(&b'm') => return found(Std::Pm, 2),
            b'-' | b'Z' => {
                // Longest first: `-0700` before `-07`.
                for (text, std) in ZONES {
                    if has(i, text) {
                        return found(std, text.len());
                    }
                }
            }
            b'.' | b',' => {
                if let Some(&ch @ (b'0' | b'9')) = layout.get(i + 1) {
                    let mut j = i + 1;
                    while j < layout.len() && layout[j] == ch {
                        j += 1;
                    }
                    // Only a fraction that is all digits.
                    if !is_digit(layout, j) {
                        let std = if ch == b'9' {
                            Std::FracSecond9
                        } else {
                            Std::FracSecond0(j - (i + 1))
                        };
                        return (&layout[..i], Some(std), &layout[j..]);
                    }
                }
            }
            _ => {}
        }
    }
    (layout, None, &[])
}

/// Go's `match`: equal ignoring ASCII case.
fn matches(s1: &[u8], s2: &[u8]) -> bool {
    s1.iter().zip(s2).all(|(&a, &b)| {
        a == b || {
            let (a, b) = (a | 0x20, b | 0x20);
            a == b && a.is_ascii_lowercase()
        }
    })
}

fn lookup<'a>(table: &[&str], value: &'a [u8]) -> Option<(usize, &'a [u8])> {
    table.iter().enumerate().find_map(|(i, name)| {
        (value.len() >= name.len() && matches(&value[..name.len()], name.as_bytes()))
            .then(|| (i, &value[name.len()..]))
    })
}

/// Go's `getnum`: one or two digits (`fixed`: exactly two).
fn getnum(s: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    if !is_digit(s, 0) {
        return None;
    }
    if !is_digit(s, 1) {
        if fixed {
            return None;
        }
        return Some((i64::from(s[0] - b'0'), &s[1..]));
    }
    Some((
        i64::from(s[0] - b'0') * 10 + i64::from(s[1] - b'0'),
        &s[2..],
    ))
}

/// An hour, minute or second: `getnum`, and `what` as the range error unless it is below
/// `limit`.
fn clock(
    value: &mut &[u8],
    fixed: bool,
    limit: i64,
    what: &'static str,
    range_err: &mut Option<&'static str>,
) -> Option<i64> {
    let (n, rest) = getnum(value, fixed)?;
    *value = rest;
    if !(0..limit).contains(&n) {
        *range_err = Some(what);
    }
    Some(n)
}

/// Go's `getnum3`: one to three digits (`fixed`: exactly three).
fn getnum3(s: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let mut n = 0;
    let mut i = 0;
    while i < 3 && is_digit(s, i) {
        n = n * 10 + i64::from(s[i] - b'0');
        i += 1;
    }
    if i == 0 || fixed && i != 3 {
        return None;
    }
    Some((n, &s[i..]))
}

/// Go's `leadingInt`: the leading digits, `None` on overflow.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if x > (1 << 63) / 10 {
            return None;
        }
        x = x * 10 + u64::from(s[i] - b'0');
        if x > 1 << 63 {
            return None;
        }
        i += 1;
    }
    Some((x, &s[i..]))
}

/// Go's `atoi`: an optional sign and digits, nothing else.
fn atoi(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (q, rem) = leading_int(digits)?;
    if !rem.is_empty() {
        return None;
    }
    let x = q as i64;
    Some(if neg { x.wrapping_neg() } else { x })
}

/// Go's `skip`: the layout's literal text, runs of spaces matching runs of spaces.
fn skip<'a>(mut value: &'a [u8], mut prefix: &[u8]) -> Option<&'a [u8]> {
    let cut = |s: &'a [u8]| {
        let n = s.iter().take_while(|&&c| c == b' ').count();
        &s[n..]
    };
    while let Some(&p) = prefix.first() {
        if p == b' ' {
            if value.first().is_some_and(|&c| c != b' ') {
                return None;
            }
            let n = prefix.iter().take_while(|&&c| c == b' ').count();
            prefix = &prefix[n..];
            value = cut(value);
            continue;
        }
        if value.first() != Some(&p) {
            return None;
        }
        prefix = &prefix[1..];
        value = &value[1..];
    }
    Some(value)
}

/// Go's `parseNanoseconds`: a separator and digits (at most nine read) → nanoseconds.
fn parse_nanoseconds(value: &[u8], nbytes: usize) -> Result<i64, Option<&'static str>> {
    if !matches!(value[0], b'.' | b',') {
        return Err(None);
    }
    let nbytes = nbytes.min(10);
    let mut ns = atoi(&value[1..nbytes]).ok_or(None)?;
    if ns < 0 {
        return Err(Some("fractional second"));
    }
    for _ in 0..10 - nbytes {
        ns *= 10;
    }
    Ok(ns)
}

/// The fraction of the first `n` bytes of `value` (its separator included), taken off it: its
/// nanoseconds, or 0 with the range error named.
fn fraction(value: &mut &[u8], n: usize, range_err: &mut Option<&'static str>) -> Option<i64> {
    let parsed = parse_nanoseconds(value, n);
    *value = &value[n..];
    match parsed {
        Ok(ns) => Some(ns),
        Err(Some(what)) => {
            *range_err = Some(what);
            Some(0)
        }
        Err(None) => None,
    }
}

/// Go's `parseTimeZone`: the length of a zone abbreviation at the start of `value`.
fn parse_time_zone(value: &[u8]) -> Option<usize> {
    if value.len() < 3 {
        return None;
    }
    if value.starts_with(b"ChST") || value.starts_with(b"MeST") {
        return Some(4);
    }
    if value.starts_with(b"GMT") {
        let rest = &value[3..];
        return Some(if rest.is_empty() {
            3
        } else {
            3 + parse_signed_offset(rest)
        });
    }
    if matches!(value[0], b'+' | b'-') {
        let n = parse_signed_offset(value);
        return (n > 0).then_some(n);
    }
    let upper = value
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    match upper {
        5 if value[4] == b'T' => Some(5),
        4 if value[3] == b'T' || value.starts_with(b"WITA") => Some(4),
        3 => Some(3),
        _ => None,
    }
}

/// Go's `parseSignedOffset`: `+hh`/`-hh` in [-23, 23] → its length, else 0.
fn parse_signed_offset(value: &[u8]) -> usize {
    if !matches!(value[0], b'+' | b'-') {
        return 0;
    }
    match leading_int(&value[1..]) {
        Some((x, rem)) if rem.len() != value.len() - 1 && x <= 23 => value.len() - rem.len(),
        _ => 0,
    }
}

/// Go's `quote` in package time: `"..."`, bytes outside printable ASCII as `\xNN`.
fn quote(s: &[u8]) -> String {
    let text = String::from_utf8_lossy(s);
    let mut out = String::from("\"");
    let mut i = 0;
    for c in text.chars() {
        let width = if c == '\u{fffd}' {
            // A byte that is not UTF-8 (or a real U+FFFD, three bytes).
            if s[i..].starts_with("\u{fffd}".as_bytes()) {
                3
            } else {
                1
            }
        } else {
            c.len_utf8()
        };
        if c as u32 >= 0x80 || c < ' ' {
            for b in &s[i..i + width] {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        i += width;
    }
    out.push('"');
    out
}

/// A `metav1.Time` field as Cluster API copies it: parsed as `time.RFC3339` and written back
/// by `ToUnstructured`, in UTC to the second (`2026-01-02T15:04:05Z`); or Go's parse error.
pub fn metav1_time_utc(value: &str) -> Result<String, String> {
    let time = parse_in_local(b"2006-01-02T15:04:05Z07:00", value.as_bytes())?;
    Time {
        unix: time.unix,
        nsec: 0,
        loc: Loc::Utc,
    }
    .rfc3339()
}

/// `time.ParseInLocation(layout, value, time.Local)` (sprig's `toDate`) of Go strings (bytes),
/// with Go's error text.
pub fn parse_in_local(alayout: &[u8], avalue: &[u8]) -> Result<Time, String> {
    let error = |layout_elem: &[u8], value_elem: &[u8], message: Option<String>| match message {
        None => format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(avalue),
            quote(alayout),
            quote(value_elem),
            quote(layout_elem)
        ),
        Some(message) => format!("parsing time {}{message}", quote(avalue)),
    };
    let (mut layout, mut value) = (alayout, avalue);
    let (mut am, mut pm) = (false, false);
    let (mut year, mut month, mut day, mut yday) = (0i64, -1i64, -1i64, -1i64);
    let (mut hour, mut min, mut sec, mut nsec) = (0i64, 0i64, 0i64, 0i64);
    let mut utc = false;
    let mut zone_offset: Option<i64> = None;
    let mut zone_name: &[u8] = &[];
    loop {
        let (prefix, std, suffix) = next_std_chunk(layout);
        let std_str = &layout[prefix.len()..layout.len() - suffix.len()];
        value = skip(value, prefix).ok_or_else(|| error(prefix, value, None))?;
        let Some(std) = std else {
            if !value.is_empty() {
                return Err(error(
                    &[],
                    value,
                    Some(format!(": extra text: {}", quote(value))),
                ));
            }
            break;
        };
        layout = suffix;
        let hold = value;
        let mut range_err: Option<&str> = None;
        let ok: Option<()> = (|| {
            match std {
                Std::Year => {
                    if value.len() < 2 {
                        return None;
                    }
                    let p = &value[..2];
                    value = &value[2..];
                    year = atoi(p)?;
                    year += if year >= 69 { 1900 } else { 2000 };
                }
                Std::LongYear => {
                    if value.len() < 4 || !is_digit(value, 0) {
                        return None;
                    }
                    let p = &value[..4];
                    value = &value[4..];
                    year = atoi(p)?;
                }
                Std::Month | Std::LongMonth => {
                    let table: &[&str] = if std == Std::Month {
                        &SHORT_MONTHS
                    } else {
                        &LONG_MONTHS
                    };
                    let (m, rest) = lookup(table, value)?;
                    month = m as i64 + 1;
                    value = rest;
                }
                Std::NumMonth | Std::ZeroMonth => {
                    let (m, rest) = getnum(value, std == Std::ZeroMonth)?;
                    month = m;
                    value = rest;
                    if month <= 0 || 12 < month {
                        range_err = Some("month");
                    }
                }
                Std::WeekDay | Std::LongWeekDay => {
                    let table: &[&str] = if std == Std::WeekDay {
                        &SHORT_DAYS
                    } else {
                        &LONG_DAYS
                    };
                    value = lookup(table, value)?.1;
                }
                Std::Day | Std::UnderDay | Std::ZeroDay => {
                    if std == Std::UnderDay && value.first() == Some(&b' ') {
                        value = &value[1..];
                    }
                    let (d, rest) = getnum(value, std == Std::ZeroDay)?;
                    day = d;
                    value = rest;
                }
                Std::UnderYearDay | Std::ZeroYearDay => {
                    for _ in 0..2 {
                        if std == Std::UnderYearDay && value.first() == Some(&b' ') {
                            value = &value[1..];
                        }
                    }
                    let (d, rest) = getnum3(value, std == Std::ZeroYearDay)?;
                    yday = d;
                    value = rest;
                }
                Std::Hour => hour = clock(&mut value, false, 24, "hour", &mut range_err)?,
                Std::Hour12 | Std::ZeroHour12 => {
                    let fixed = std == Std::ZeroHour12;
                    hour = clock(&mut value, fixed, 13, "hour", &mut range_err)?;
                }
                Std::Minute | Std::ZeroMinute => {
                    let fixed = std == Std::ZeroMinute;
                    min = clock(&mut value, fixed, 60, "minute", &mut range_err)?;
                }
                Std::Second | Std::ZeroSecond => {
                    let fixed = std == Std::ZeroSecond;
                    sec = clock(&mut value, fixed, 60, "second", &mut range_err)?;
                    if range_err.is_some() {
                        return Some(());
                    }
                    // A fraction in the value that the layout does not name.
                    if value.len() >= 2 && matches!(value[0], b'.' | b',') && is_digit(value, 1) {
                        if matches!(
                            next_std_chunk(layout).1,
                            Some(Std::FracSecond0(_) | Std::FracSecond9)
                        ) {
                            return Some(());
                        }
                        let mut n = 2;
                        while n < value.len() && is_digit(value, n) {
                            n += 1;
                        }
                        nsec = fraction(&mut value, n, &mut range_err)?;
                    }
                }
                Std::PM | Std::Pm => {
                    if value.len() < 2 {
                        return None;
                    }
                    let p = &value[..2];
                    value = &value[2..];
                    let (upper, lower) = if std == Std::PM {
                        (b"PM", b"AM")
                    } else {
                        (b"pm", b"am")
                    };
                    if p == upper {
                        pm = true;
                    } else if p == lower {
                        am = true;
                    } else {
                        return None;
                    }
                }
                Std::ISO8601TZ
                | Std::ISO8601ShortTZ
                | Std::ISO8601ColonTZ
                | Std::ISO8601SecondsTZ
                | Std::ISO8601ColonSecondsTZ
                    if value.first() == Some(&b'Z') =>
                {
                    value = &value[1..];
                    utc = true;
                }
                Std::ISO8601TZ
                | Std::ISO8601ShortTZ
                | Std::ISO8601ColonTZ
                | Std::ISO8601SecondsTZ
                | Std::ISO8601ColonSecondsTZ
                | Std::NumTZ
                | Std::NumShortTZ
                | Std::NumColonTZ
                | Std::NumSecondsTz
                | Std::NumColonSecondsTZ => {
                    let (sign, hh, mm, ss): (u8, &[u8], &[u8], &[u8]);
                    match std {
                        Std::ISO8601ColonTZ | Std::NumColonTZ => {
                            if value.len() < 6 || value[3] != b':' {
                                return None;
                            }
                            (sign, hh, mm, ss) = (value[0], &value[1..3], &value[4..6], b"00");
                            value = &value[6..];
                        }
                        Std::NumShortTZ | Std::ISO8601ShortTZ => {
                            if value.len() < 3 {
                                return None;
                            }
                            (sign, hh, mm, ss) = (value[0], &value[1..3], b"00", b"00");
                            value = &value[3..];
                        }
                        Std::ISO8601ColonSecondsTZ | Std::NumColonSecondsTZ => {
                            if value.len() < 9 || value[3] != b':' || value[6] != b':' {
                                return None;
                            }
                            (sign, hh, mm, ss) =
                                (value[0], &value[1..3], &value[4..6], &value[7..9]);
                            value = &value[9..];
                        }
                        Std::ISO8601SecondsTZ | Std::NumSecondsTz => {
                            if value.len() < 7 {
                                return None;
                            }
                            (sign, hh, mm, ss) =
                                (value[0], &value[1..3], &value[3..5], &value[5..7]);
                            value = &value[7..];
                        }
                        _ => {
                            if value.len() < 5 {
                                return None;
                            }
                            (sign, hh, mm, ss) = (value[0], &value[1..3], &value[3..5], b"00");
                            value = &value[5..];
                        }
                    }
                    // Go reads the three fields, then checks their ranges (with `>`: offsets
                    // of 24 hours or 60 minutes are written), then the sign.
                    let fields = getnum(hh, true).and_then(|(h, _)| {
                        getnum(mm, true).and_then(|(m, _)| getnum(ss, true).map(|(s, _)| (h, m, s)))
                    });
                    let (h, m, s) = match fields {
                        Some(f) => f,
                        None => {
                            // The error wins over a range failure of what was read before it.
                            let h = getnum(hh, true).map_or(0, |x| x.0);
                            let m = getnum(hh, true).and(getnum(mm, true)).map_or(0, |x| x.0);
                            if h > 24 {
                                range_err = Some("time zone offset hour");
                            }
                            if m > 60 {
                                range_err = Some("time zone offset minute");
                            }
                            return None;
                        }
                    };
                    if h > 24 {
                        range_err = Some("time zone offset hour");
                    }
                    if m > 60 {
                        range_err = Some("time zone offset minute");
                    }
                    if s > 60 {
                        range_err = Some("time zone offset second");
                    }
                    let offset = (h * 60 + m) * 60 + s;
                    zone_offset = Some(match sign {
                        b'+' => offset,
                        b'-' => -offset,
                        _ => return None,
                    });
                }
                Std::TZ => {
                    if value.starts_with(b"UTC") {
                        utc = true;
                        value = &value[3..];
                        return Some(());
                    }
                    let n = parse_time_zone(value)?;
                    zone_name = &value[..n];
                    value = &value[n..];
                }
                Std::FracSecond0(digits) => {
                    let n = 1 + digits;
                    if value.len() < n {
                        return None;
                    }
                    nsec = fraction(&mut value, n, &mut range_err)?;
                }
                Std::FracSecond9 => {
                    if value.len() < 2
                        || !matches!(value[0], b'.' | b',')
                        || !value[1].is_ascii_digit()
                    {
                        return Some(());
                    }
                    let mut i = 0;
                    while i + 1 < value.len() && value[i + 1].is_ascii_digit() {
                        i += 1;
                    }
                    nsec = fraction(&mut value, 1 + i, &mut range_err)?;
                }
            }
            Some(())
        })();
        if let Some(what) = range_err {
            return Err(error(
                std_str,
                value,
                Some(format!(": {what} out of range")),
            ));
        }
        if ok.is_none() {
            return Err(error(std_str, hold, None));
        }
    }
    // A failure of the whole value (no element named).
    let message = |text: &str| error(&[], value, Some(text.into()));
    if pm && hour < 12 {
        hour += 12;
    } else if am && hour == 12 {
        hour = 0;
    }
    if yday >= 0 {
        let (mut m, mut d) = (0, 0);
        if is_leap(year) {
            if yday == 31 + 29 {
                m = 2;
                d = 29;
            } else if yday > 31 + 29 {
                yday -= 1;
            }
        }
        if !(1..=365).contains(&yday) {
            return Err(message(": day-of-year out of range"));
        }
        if m == 0 {
            m = (yday - 1) / 31 + 1;
            if days_before(m + 1) < yday {
                m += 1;
            }
            d = yday - days_before(m);
        }
        if month >= 0 && month != m {
            return Err(message(": day-of-year does not match month"));
        }
        month = m;
        if day >= 0 && day != d {
            return Err(message(": day-of-year does not match day"));
        }
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    if day < 1 || day > days_in(month, year) {
        return Err(message(": day out of range"));
    }
    // The wall clock read as UTC.
    let unix = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec;
    let at = |unix: i64, loc: Loc| Time {
        unix,
        nsec: nsec as u32,
        loc,
    };
    if utc {
        return Ok(at(unix, Loc::Utc));
    }
    if let Some(offset) = zone_offset {
        let unix = unix - offset;
        // The local zone (UTC, named "UTC") if it has this offset and name.
        if offset == 0 && (zone_name.is_empty() || zone_name == b"UTC") {
            return Ok(at(unix, Loc::Local));
        }
        return Ok(at(unix, Loc::fixed(zone_name, offset as i32)));
    }
    if !zone_name.is_empty() {
        // Local has no zone table, so no abbreviation is known: a fabricated zone, offset 0
        // (a GMT+h one gets that offset), the wall clock kept as UTC.
        let mut offset = 0;
        if zone_name.len() > 3 && zone_name.starts_with(b"GMT") {
            offset = atoi(&zone_name[3..]).unwrap_or(0) * 3600;
        }
        return Ok(at(unix, Loc::fixed(zone_name, offset as i32)));
    }
    Ok(at(unix, Loc::Local))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(layout: &str, value: &str) -> String {
        match parse_in_local(layout.as_bytes(), value.as_bytes()) {
            Ok(t) => t.go_string(),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn parses_go_layouts_as_go_prints_them() {
        // Expected outputs as Go 1.26 prints them (TZ unset, no /etc/localtime).
        assert_eq!(
            show("2006-01-02", "2017-12-31"),
            "2017-12-31 00:00:00 +0000 UTC"
        );
        assert_eq!(
            show("2006-01-02T15:04:05Z07:00", "2017-12-31T23:59:58.5+01:30"),
            "2017-12-31 23:59:58.5 +0130 +0130"
        );
        assert_eq!(
            show(
                "Mon, 02 Jan 2006 15:04:05 MST",
                "Tue, 10 Nov 2009 23:00:00 PST"
            ),
            "2009-11-10 23:00:00 +0000 PST"
        );
        assert_eq!(show("3:04PM", "3:04AM"), "0000-01-01 03:04:00 +0000 UTC");
        assert_eq!(
            show("2006-002", "2024-060"),
            "2024-02-29 00:00:00 +0000 UTC"
        );
        assert_eq!(
            show("2006-01-02", "2023-02-29"),
            "error: parsing time \"2023-02-29\": day out of range"
        );
        assert_eq!(
            show("2006-01-02", "2017-1-31"),
            "error: parsing time \"2017-1-31\" as \"2006-01-02\": cannot parse \"1-31\" as \"01\""
        );
        assert_eq!(
            show("15:04", "25:00"),
            "error: parsing time \"25:00\": hour out of range"
        );
        assert_eq!(
            show("2006", "2017x"),
            "error: parsing time \"2017x\": extra text: \"x\""
        );
    }

    #[test]
    fn json_and_go_syntax_follow_go() {
        let t = parse_in_local(
            b"2006-01-02 15:04:05.000 -0700",
            b"2017-12-31 10:00:00.120 -0700",
        )
        .unwrap();
        assert_eq!(t.rfc3339().unwrap(), "2017-12-31T10:00:00.12-07:00");
        assert_eq!(
            t.go_syntax(),
            "time.Date(2017, time.December, 31, 10, 0, 0, 120000000, time.Location(\"\"))"
        );
        assert_eq!(Time::zero().go_string(), "0001-01-01 00:00:00 +0000 UTC");
        assert_eq!(
            parse_in_local(b"2006", b"2017").unwrap().unix(),
            1_483_228_800
        );
    }

    #[test]
    fn locations_compare_as_go_pointers_do() {
        let a = parse_in_local(b"-0700", b"+0100").unwrap();
        let b = parse_in_local(b"-0700", b"+0100").unwrap();
        assert!(a.same(&b), "unnamed whole hours share a location");
        let c = parse_in_local(b"-0700", b"+0130").unwrap();
        let d = parse_in_local(b"-0700", b"+0130").unwrap();
        assert!(!c.same(&d) && c.deep_same(&d));
    }
}
