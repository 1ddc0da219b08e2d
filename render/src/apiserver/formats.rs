//! The string formats the API server checks (kube-openapi's `strfmt.Default` registry, the
//! validators it registers: govalidator's, Go's `net` and `time` parsers, Kubernetes' names).

use regex::Regex;
use std::sync::OnceLock;

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| crate::go_regex::compile(pattern).expect("a valid pattern"))
}

/// Whether `s` is valid for the (normalized) format; formats the registry does not hold pass.
pub fn valid(format: &str, s: &str) -> bool {
    static BASE64: OnceLock<Regex> = OnceLock::new();
    static DATE_TIME: OnceLock<Regex> = OnceLock::new();
    static HOSTNAME: OnceLock<Regex> = OnceLock::new();
    static UUID: OnceLock<Regex> = OnceLock::new();
    static UUID3: OnceLock<Regex> = OnceLock::new();
    static UUID4: OnceLock<Regex> = OnceLock::new();
    static UUID5: OnceLock<Regex> = OnceLock::new();
    static SHORT_NAME: OnceLock<Regex> = OnceLock::new();
    static LONG_NAME: OnceLock<Regex> = OnceLock::new();
    static HEX_COLOR: OnceLock<Regex> = OnceLock::new();
    static RGB_COLOR: OnceLock<Regex> = OnceLock::new();
    static SSN: OnceLock<Regex> = OnceLock::new();
    static BSON: OnceLock<Regex> = OnceLock::new();
    const SHORT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    match format {
        "byte" => re(
            &BASE64,
            r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$",
        )
        .is_match(s),
        "password" => true,
        "date" => is_date(s),
        "datetime" => {
            if s.len() < 4 {
                return false;
            }
            let lower = s.to_lowercase();
            let parts: Vec<&str> = lower.split('t').collect();
            if parts.len() < 2 || !is_date(parts[0]) {
                return false;
            }
            let Some(m) = re(
                &DATE_TIME,
                r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$",
            )
            .captures(parts[1]) else {
                return false;
            };
            &m[1] <= "23" && &m[2] <= "59" && &m[3] <= "59"
        }
        "duration" => crate::go_template::functions::parse_duration(s).is_some() || scala_duration(s),
        "hostname" => {
            re(
                &HOSTNAME,
                r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
            )
            .is_match(s)
                && s.len() <= 255
                && s.split('.').all(|p| p.len() <= 63)
        }
        "ipv4" => parse_ip_sloppy(s).is_some() && s.contains('.'),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok() || (parse_ip_sloppy(s).is_some() && s.contains(':')),
        "cidr" => s.split_once('/').is_some_and(|(ip, bits)| {
            let Some(v6) = parse_ip_sloppy(ip).map(|a| a.is_ipv6()) else {
                return false;
            };
            !bits.is_empty()
                && bits.len() <= 3
                && bits.bytes().all(|b| b.is_ascii_digit())
                && !(bits.len() > 1 && bits.starts_with('0'))
                && bits.parse::<u32>().is_ok_and(|n| n <= if v6 { 128 } else { 32 })
        }),
        "mac" => is_mac(s),
        "uuid" => re(&UUID, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$").is_match(s),
        "uuid3" => re(&UUID3, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$").is_match(s),
        "uuid4" => re(&UUID4, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").is_match(s),
        "uuid5" => re(&UUID5, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$").is_match(s),
        "k8s-short-name" => s.len() <= 63 && re(&SHORT_NAME, &format!("^{SHORT}$")).is_match(s),
        "k8s-long-name" => {
            s.len() <= 253 && re(&LONG_NAME, &format!("^{SHORT}(\\.{SHORT})*$")).is_match(s)
        }
        "hexcolor" => re(&HEX_COLOR, "^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").is_match(s),
        "rgbcolor" => re(
            &RGB_COLOR,
            r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
        )
        .is_match(s),
        "ssn" => s.len() == 11 && re(&SSN, r"^\d{3}[- ]?\d{2}[- ]?\d{4}$").is_match(s),
        "bsonobjectid" => re(&BSON, "^[0-9a-fA-F]{24}$").is_match(s),
        "uri" => is_request_uri(s),
        "email" => is_email(s),
        "isbn" => is_isbn10(s) || is_isbn13(s),
        "isbn10" => is_isbn10(s),
        "isbn13" => is_isbn13(s),
        "creditcard" => is_credit_card(s),
        _ => true,
    }
}

/// Go's `time.Parse("2006-01-02", s)`: fixed-width fields, a day that exists in its month.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r.clone()]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| s[r].parse().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's Scala-style durations: any `<digits><space><unit>` in the text.
fn scala_duration(s: &str) -> bool {
    static MATCHER: OnceLock<Regex> = OnceLock::new();
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    for m in re(&MATCHER, r"((\d+)\s*([A-Za-zµ]+))").captures_iter(s) {
        if m[2].parse::<i64>().is_err() {
            return false;
        }
        let unit = m[3].to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || variant.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Kubernetes' `ParseIPSloppy`: Go's `net.ParseIP` before 1.17, which accepts leading zeros in
/// IPv4 octets (read as decimal).
fn parse_ip_sloppy(s: &str) -> Option<std::net::IpAddr> {
    if s.contains(':') {
        // IPv6, possibly with an embedded IPv4 tail in sloppy form.
        if let Ok(v6) = s.parse::<std::net::Ipv6Addr>() {
            return Some(v6.into());
        }
        let (head, tail) = s.rsplit_once(':')?;
        let v4 = sloppy_v4(tail)?;
        let rebuilt = format!("{head}:{v4}");
        return rebuilt.parse::<std::net::Ipv6Addr>().ok().map(Into::into);
    }
    sloppy_v4(s).map(Into::into)
}

fn sloppy_v4(s: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        octets[i] = p.parse::<u16>().ok().filter(|n| *n <= 255)? as u8;
    }
    Some(octets.into())
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets, in `:`/`-` pairs or `.` quads.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    if s.len() < 14 {
        return false;
    }
    let b = s.as_bytes();
    if b[2] == b':' || b[2] == b'-' {
        let sep = b[2] as char;
        let parts: Vec<&str> = s.split(sep).collect();
        matches!(parts.len(), 6 | 8 | 20) && parts.iter().all(|p| hex(p, 2))
    } else if b[4] == b'.' {
        let parts: Vec<&str> = s.split('.').collect();
        matches!(parts.len() * 2, 6 | 8 | 20) && parts.iter().all(|p| hex(p, 4))
    } else {
        false
    }
}

/// govalidator's `IsRequestURI`: Go's `url.ParseRequestURI` succeeds, an absolute URI or an
/// absolute path.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f || b == b' ') {
        return false;
    }
    let (s, _) = s.split_once('#').unwrap_or((s, ""));
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return false;
    }
    // An opaque URI (`mailto:x`) parses when the rest does not start with `/` too.
    if let Some(authority) = rest.strip_prefix("//") {
        let host = authority.split(['/', '?']).next().unwrap_or_default();
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        if let Some(port) = host
            .strip_prefix('[')
            .and_then(|h| h.split_once(']'))
            .map(|(_, p)| p)
        {
            return port.is_empty()
                || port
                    .strip_prefix(':')
                    .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
        }
        if let Some((_, port)) = host.rsplit_once(':') {
            return port.bytes().all(|b| b.is_ascii_digit());
        }
    }
    true
}

/// Go's `mail.ParseAddress` for the common forms: `local@domain` or `Name <local@domain>`.
fn is_email(s: &str) -> bool {
    let address = match (s.find('<'), s.rfind('>')) {
        (Some(open), Some(close)) if close == s.len() - 1 && open < close => &s[open + 1..close],
        (None, None) => s.trim(),
        _ => return false,
    };
    let Some((local, domain)) = address.rsplit_once('@') else {
        return false;
    };
    let atext =
        |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii();
    let dot_atom =
        |t: &str| !t.is_empty() && t.split('.').all(|p| !p.is_empty() && p.chars().all(atext));
    dot_atom(local) && dot_atom(domain)
}

fn is_isbn10(s: &str) -> bool {
    let d: Vec<char> = s.chars().filter(|c| *c != '-' && *c != ' ').collect();
    if d.len() != 10
        || !d[..9].iter().all(char::is_ascii_digit)
        || !(d[9].is_ascii_digit() || d[9] == 'X')
    {
        return false;
    }
    let sum: u32 = d
        .iter()
        .enumerate()
        .map(|(i, c)| (i as u32 + 1) * c.to_digit(10).unwrap_or(10))
        .sum();
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d: Vec<u32> = s
        .chars()
        .filter(|c| *c != '-' && *c != ' ')
        .map(|c| c.to_digit(10).unwrap_or(99))
        .collect();
    if d.len() != 13 || d.iter().any(|x| *x > 9) {
        return false;
    }
    let sum: u32 = d[..12]
        .iter()
        .enumerate()
        .map(|(i, x)| if i % 2 == 0 { *x } else { 3 * x })
        .sum();
    (10 - sum % 10) % 10 == d[12]
}

fn is_credit_card(s: &str) -> bool {
    static CARD: OnceLock<Regex> = OnceLock::new();
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !re(
        &CARD,
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$",
    )
    .is_match(&digits)
    {
        return false;
    }
    let mut sum = 0;
    for (i, c) in digits.chars().rev().enumerate() {
        let mut d = c.to_digit(10).unwrap_or_default();
        if i % 2 == 1 {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
    }
    sum.is_multiple_of(10)
}
