//! Go's `net/url` as sprig's `urlParse` and `urlJoin` use it: `url.Parse` (scheme, opaque
//! data, userinfo, host and port checks, path and fragment unescaping with their raw hints),
//! `URL.Hostname`, `Userinfo.String` and `URL.String`, byte for byte as Go 1.26 does them
//! (strict colons in http and https hosts, IPv6 literals checked as `netip.ParseAddr` checks
//! them). Strings are Go's: bytes, not necessarily UTF-8.

thread_local! {
    static STRICT_COLONS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Go's `urlstrictcolons` for the templates rendered on this thread while it lives (the
/// functions see no execution state; the engine sets it from its options).
pub(super) struct StrictColons(bool);

impl StrictColons {
    /// Sets it until the value is dropped.
    pub(super) fn set(strict: bool) -> StrictColons {
        StrictColons(STRICT_COLONS.with(|c| c.replace(strict)))
    }
}

impl Drop for StrictColons {
    fn drop(&mut self) {
        STRICT_COLONS.with(|c| c.set(self.0));
    }
}

/// What part of a URL is escaped or unescaped (Go's `encoding` modes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// Go's `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    // Host sub-delims, `:` of the port, `[` `]` of IPv6 literals, and `<` `>` `"`.
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => return true,
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    if mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

fn unhex(c: u8) -> u8 {
    9 * (c >> 6) + (c & 15)
}

/// Go's `unescape`; the error is Go's text.
fn unescape(s: &[u8], mode: Mode) -> Result<Vec<u8>, String> {
    let escape_error = |s: &[u8]| {
        format!(
            "invalid URL escape {}",
            super::format::go_quote(&super::value::go_string(s), false)
        )
    };
    let mut n = 0;
    let mut has_plus = false;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                n += 1;
                if i + 2 >= s.len()
                    || !s[i + 1].is_ascii_hexdigit()
                    || !s[i + 2].is_ascii_hexdigit()
                {
                    let rest = &s[i..];
                    return Err(escape_error(&rest[..rest.len().min(3)]));
                }
                if mode == Mode::Host && unhex(s[i + 1]) < 8 && &s[i..i + 3] != b"%25" {
                    return Err(escape_error(&s[i..i + 3]));
                }
                if mode == Mode::Zone {
                    let v = (unhex(s[i + 1]) << 4) | unhex(s[i + 2]);
                    if &s[i..i + 3] != b"%25" && v != b' ' && should_escape(v, Mode::Host) {
                        return Err(escape_error(&s[i..i + 3]));
                    }
                }
                i += 3;
            }
            b'+' => {
                has_plus = mode == Mode::QueryComponent;
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        super::format::go_quote(&super::value::go_string(&s[i..i + 1]), false)
                    ));
                }
                i += 1;
            }
        }
    }
    if n == 0 && !has_plus {
        return Ok(s.to_vec());
    }
    let plus = if mode == Mode::QueryComponent {
        b' '
    } else {
        b'+'
    };
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                out.push((unhex(s[i + 1]) << 4) | unhex(s[i + 2]));
                i += 2;
            }
            b'+' => out.push(plus),
            c => out.push(c),
        }
        i += 1;
    }
    Ok(out)
}

/// Go's `escape`.
fn escape(s: &[u8], mode: Mode) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &c in s {
        if c == b' ' && mode == Mode::QueryComponent {
            out.push(b'+');
        } else if should_escape(c, mode) {
            out.push(b'%');
            out.push(b"0123456789ABCDEF"[usize::from(c >> 4)]);
            out.push(b"0123456789ABCDEF"[usize::from(c & 15)]);
        } else {
            out.push(c);
        }
    }
    out
}

/// A user name and, if one was given, a password (Go's `*Userinfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Userinfo {
    username: Vec<u8>,
    password: Option<Vec<u8>>,
}

impl Userinfo {
    /// `Userinfo.String()`.
    pub fn to_go(&self) -> Vec<u8> {
        let mut s = escape(&self.username, Mode::UserPassword);
        if let Some(password) = &self.password {
            s.push(b':');
            s.extend(escape(password, Mode::UserPassword));
        }
        s
    }
}

/// Go's `url.URL`.
#[derive(Clone, Debug, Default)]
pub struct Url {
    /// `Scheme`.
    pub scheme: Vec<u8>,
    /// `Opaque`.
    pub opaque: Vec<u8>,
    /// `User`.
    pub user: Option<Userinfo>,
    /// `Host`.
    pub host: Vec<u8>,
    /// `Path`.
    pub path: Vec<u8>,
    raw_path: Vec<u8>,
    /// `Fragment`.
    pub fragment: Vec<u8>,
    raw_fragment: Vec<u8>,
    /// `RawQuery`.
    pub raw_query: Vec<u8>,
    force_query: bool,
    omit_host: bool,
}

/// `url.Parse`, with Go's error text (`parse "x": ...`).
pub fn parse(raw: &[u8]) -> Result<Url, String> {
    let quoted = |s: &[u8]| super::format::go_quote(&super::value::go_string(s), false);
    let (u, frag) = match raw.iter().position(|&c| c == b'#') {
        Some(i) => (&raw[..i], &raw[i + 1..]),
        None => (raw, &[][..]),
    };
    let mut url = parse_without_fragment(u).map_err(|e| format!("parse {}: {e}", quoted(u)))?;
    if frag.is_empty() {
        return Ok(url);
    }
    url.fragment =
        unescape(frag, Mode::Fragment).map_err(|e| format!("parse {}: {e}", quoted(raw)))?;
    url.raw_fragment = if escape(&url.fragment, Mode::Fragment) == frag {
        Vec::new()
    } else {
        frag.to_vec()
    };
    Ok(url)
}

fn cut(s: &[u8], sep: u8) -> (&[u8], Option<&[u8]>) {
    match s.iter().position(|&c| c == sep) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

fn parse_without_fragment(raw: &[u8]) -> Result<Url, String> {
    if raw.iter().any(|&b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = Url::default();
    if raw == b"*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, mut rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.last() == Some(&b'?') && rest.iter().filter(|&&c| c == b'?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else {
        let (before, query) = cut(rest, b'?');
        rest = before;
        url.raw_query = query.unwrap_or_default().to_vec();
    }
    if !rest.starts_with(b"/") {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_vec();
            return Ok(url);
        }
        if cut(rest, b'/').0.contains(&b':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with(b"///")) && rest.starts_with(b"//") {
        let authority = &rest[2..];
        let (authority, path) = match authority.iter().position(|&c| c == b'/') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, &[][..]),
        };
        rest = path;
        let (user, host) = parse_authority(&url.scheme, authority)?;
        url.user = user;
        url.host = host;
    } else if !url.scheme.is_empty() && rest.starts_with(b"/") {
        url.omit_host = true;
    }
    url.path = unescape(rest, Mode::Path)?;
    url.raw_path = if escape(&url.path, Mode::Path) == rest {
        Vec::new()
    } else {
        rest.to_vec()
    };
    Ok(url)
}

/// Go's `getScheme`.
fn scheme(raw: &[u8]) -> Result<(&[u8], &[u8]), String> {
    for (i, &c) in raw.iter().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                if i == 0 {
                    return Ok((&[], raw));
                }
            }
            b':' => {
                if i == 0 {
                    return Err("missing protocol scheme".into());
                }
                return Ok((&raw[..i], &raw[i + 1..]));
            }
            _ => return Ok((&[], raw)),
        }
    }
    Ok((&[], raw))
}

fn valid_userinfo(s: &[u8]) -> bool {
    // Go ranges over runes: a byte that is not ASCII is never allowed.
    s.iter()
        .all(|&c| c.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&c))
}

fn parse_authority(scheme: &[u8], authority: &[u8]) -> Result<(Option<Userinfo>, Vec<u8>), String> {
    let at = authority.iter().rposition(|&c| c == b'@');
    let host = parse_host(
        scheme,
        match at {
            Some(i) => &authority[i + 1..],
            None => authority,
        },
    )?;
    let Some(i) = at else {
        return Ok((None, host));
    };
    let userinfo = &authority[..i];
    if !valid_userinfo(userinfo) {
        return Err("net/url: invalid userinfo".into());
    }
    let user = match cut(userinfo, b':') {
        (name, None) => Userinfo {
            username: unescape(name, Mode::UserPassword)?,
            password: None,
        },
        (name, Some(password)) => Userinfo {
            username: unescape(name, Mode::UserPassword)?,
            password: Some(unescape(password, Mode::UserPassword)?),
        },
    };
    Ok((Some(user), host))
}

/// `:` followed by digits, or nothing.
fn valid_optional_port(port: &[u8]) -> bool {
    port.is_empty() || port[0] == b':' && port[1..].iter().all(u8::is_ascii_digit)
}

fn invalid_port(port: &[u8]) -> String {
    format!(
        "invalid port {} after host",
        super::format::go_quote(&super::value::go_string(port), false)
    )
}

fn parse_host(scheme: &[u8], host: &[u8]) -> Result<Vec<u8>, String> {
    match host.iter().rposition(|&c| c == b'[') {
        Some(i) if i > 0 => return Err("invalid IP-literal".into()),
        Some(_) => {
            let Some(close) = host.iter().rposition(|&c| c == b']') else {
                return Err("missing ']' in host".into());
            };
            let colon_port = &host[close + 1..];
            if !valid_optional_port(colon_port) {
                return Err(invalid_port(colon_port));
            }
            let port = unescape(colon_port, Mode::Host)?;
            let hostname = &host[1..close.max(1)];
            let unescaped = match find(hostname, b"%25") {
                Some(zone) => {
                    let mut h = unescape(&hostname[..zone], Mode::Host)?;
                    h.extend(unescape(&hostname[zone..], Mode::Zone)?);
                    h
                }
                None => unescape(hostname, Mode::Host)?,
            };
            match parse_addr(&unescaped) {
                Err(e) => return Err(format!("invalid host: {e}")),
                Ok(true) => return Err("invalid IP-literal".into()),
                Ok(false) => {}
            }
            let mut out = b"[".to_vec();
            out.extend(unescaped);
            out.push(b']');
            out.extend(port);
            return Ok(out);
        }
        None => {}
    }
    if let Some(first) = host.iter().position(|&c| c == b':') {
        let last = host.iter().rposition(|&c| c == b':').expect("a colon");
        // Go 1.26 keeps the first colon for http and https (a second colon is then an invalid
        // port), the last for other schemes; Go 1.25 the last always.
        let strict = STRICT_COLONS.with(std::cell::Cell::get);
        let i = if strict && (scheme == b"http" || scheme == b"https") {
            first
        } else {
            last
        };
        if !valid_optional_port(&host[i..]) {
            return Err(invalid_port(&host[i..]));
        }
    }
    unescape(host, Mode::Host)
}

fn find(s: &[u8], needle: &[u8]) -> Option<usize> {
    s.windows(needle.len()).position(|w| w == needle)
}

/// `netip.ParseAddr`: `Ok(true)` for an IPv4 address, `Ok(false)` for IPv6 (a zone allowed),
/// or the error's text.
fn parse_addr(s: &[u8]) -> Result<bool, String> {
    let text = super::format::go_quote(&super::value::go_string(s), false);
    for &c in s {
        match c {
            b'.' => {
                return parse_ipv4(s)
                    .map(|_| true)
                    .map_err(|e| ipv4_error(&text, e));
            }
            b':' => return parse_ipv6(s).map(|_| false),
            b'%' => return Err(format!("ParseAddr({text}): missing IPv6 address")),
            _ => {}
        }
    }
    Err(format!("ParseAddr({text}): unable to parse IP"))
}

fn ipv4_error(text: &str, e: String) -> String {
    format!("ParseAddr({text}): {e}")
}

/// `parseIPv4`: four decimal fields in [0, 255], no leading zeros.
fn parse_ipv4(s: &[u8]) -> Result<[u8; 4], String> {
    let mut fields = [0u8; 4];
    let mut val: u32 = 0;
    let mut pos = 0;
    let mut digits = 0;
    for (i, &c) in s.iter().enumerate() {
        if c.is_ascii_digit() {
            if digits == 1 && val == 0 {
                return Err("IPv4 field has octet with leading zero".into());
            }
            val = val * 10 + u32::from(c - b'0');
            digits += 1;
            if val > 255 {
                return Err("IPv4 field has value >255".into());
            }
        } else if c == b'.' {
            if i == 0 || i == s.len() - 1 || s[i - 1] == b'.' {
                return Err(format!(
                    "IPv4 field must have at least one digit (at {})",
                    super::format::go_quote(&super::value::go_string(&s[i..]), false)
                ));
            }
            if pos == 3 {
                return Err("IPv4 address too long".into());
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            digits = 0;
        } else {
            return Err(format!(
                "unexpected character (at {})",
                super::format::go_quote(&super::value::go_string(&s[i..]), false)
            ));
        }
    }
    if pos < 3 {
        return Err("IPv4 address too short".into());
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// `parseIPv6`: whether it is one (the error text is the caller's).
fn parse_ipv6(input: &[u8]) -> Result<(), String> {
    let text = super::format::go_quote(&super::value::go_string(input), false);
    let fail = |why: &str| Err(format!("ParseAddr({text}): {why}"));
    let mut s = input;
    // A zone: after '%', not empty.
    if let Some(i) = s.iter().position(|&c| c == b'%') {
        if i == s.len() - 1 {
            return fail("zone must be a non-empty string");
        }
        s = &s[..i];
    }
    let mut groups = 0usize;
    let mut ellipsis: Option<usize> = None;
    if s.len() >= 2 && s[0] == b':' && s[1] == b':' {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok(());
        }
    }
    while groups < 16 {
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < s.len() {
            let c = s[off];
            if c.is_ascii_hexdigit() {
                acc = (acc << 4) + u32::from(unhex(c));
            } else {
                break;
            }
            off += 1;
            if off > 4 {
                return fail("each colon-separated field must have at most 4 hex digits");
            }
            if acc > 0xffff {
                return fail("IPv6 field has value >=2^16");
            }
        }
        if off == 0 {
            return fail("each colon-separated field must have at least one digit");
        }
        // An IPv4 tail.
        if off < s.len() && s[off] == b'.' {
            if ellipsis.is_none() && groups != 12 {
                return fail(
                    "embedded IPv4 address must replace the final 2 fields of the address",
                );
            }
            if groups + 4 > 16 {
                return fail(
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                );
            }
            parse_ipv4(s).map_err(|e| format!("ParseAddr({text}): {e}"))?;
            s = &[];
            groups += 4;
            break;
        }
        groups += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' {
            return fail("unexpected character, want colon");
        } else if s.len() == 1 {
            return fail("colon must be followed by more characters");
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return fail("multiple :: in address");
            }
            ellipsis = Some(groups);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return fail("trailing garbage after address");
    }
    if groups < 16 {
        if ellipsis.is_none() {
            return fail("address string too short");
        }
    } else if ellipsis.is_some() {
        return fail("the :: must expand to at least one field of zeros");
    }
    Ok(())
}

impl Url {
    /// `URL.Hostname()`.
    pub fn hostname(&self) -> Vec<u8> {
        let mut host = &self.host[..];
        if let Some(colon) = host.iter().rposition(|&c| c == b':')
            && valid_optional_port(&host[colon..])
        {
            host = &host[..colon];
        }
        if host.len() >= 2 && host[0] == b'[' && host[host.len() - 1] == b']' {
            host = &host[1..host.len() - 1];
        }
        host.to_vec()
    }

    /// `URL.EscapedPath()`.
    fn escaped_path(&self) -> Vec<u8> {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path, Mode::Path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == b"*" {
            return b"*".to_vec();
        }
        escape(&self.path, Mode::Path)
    }

    /// `URL.EscapedFragment()`.
    fn escaped_fragment(&self) -> Vec<u8> {
        if !self.raw_fragment.is_empty()
            && valid_encoded(&self.raw_fragment, Mode::Fragment)
            && unescape(&self.raw_fragment, Mode::Fragment).is_ok_and(|f| f == self.fragment)
        {
            return self.raw_fragment.clone();
        }
        escape(&self.fragment, Mode::Fragment)
    }

    /// `URL.String()`.
    pub fn to_go(&self) -> Vec<u8> {
        let mut buf = Vec::new();
        if !self.scheme.is_empty() {
            buf.extend(&self.scheme);
            buf.push(b':');
        }
        if !self.opaque.is_empty() {
            buf.extend(&self.opaque);
        } else {
            let no_authority = self.host.is_empty() && self.user.is_none();
            // Go omits the authority when it has none, and when the input had `scheme:/path`.
            if !(no_authority && (self.scheme.is_empty() || self.omit_host)) {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    buf.extend(b"//");
                }
                if let Some(user) = &self.user {
                    buf.extend(user.to_go());
                    buf.push(b'@');
                }
                if !self.host.is_empty() {
                    buf.extend(escape(&self.host, Mode::Host));
                }
            }
            let path = self.escaped_path();
            if !path.is_empty() && path[0] != b'/' && !self.host.is_empty() {
                buf.push(b'/');
            }
            if buf.is_empty() && cut(&path, b'/').0.contains(&b':') {
                buf.extend(b"./");
            }
            buf.extend(path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            buf.push(b'?');
            buf.extend(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            buf.push(b'#');
            buf.extend(self.escaped_fragment());
        }
        buf
    }

    /// A URL of these parts (what `urlJoin` builds): the raw hints empty.
    pub fn of_parts(
        scheme: Vec<u8>,
        host: Vec<u8>,
        path: Vec<u8>,
        raw_query: Vec<u8>,
        opaque: Vec<u8>,
        fragment: Vec<u8>,
        user: Option<Userinfo>,
    ) -> Url {
        Url {
            scheme,
            opaque,
            user,
            host,
            path,
            fragment,
            raw_query,
            ..Url::default()
        }
    }
}

/// Go's `validEncoded`.
fn valid_encoded(s: &[u8], mode: Mode) -> bool {
    // Sub-delims, `:` `@` (pchar), `[` `]` (left alone by browsers) and `%` (escapes).
    s.iter()
        .all(|&c| b"!$&'()*+,;=:@[]%".contains(&c) || !should_escape(c, mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(raw: &str) -> String {
        match parse(raw.as_bytes()) {
            Ok(u) => format!(
                "{}|{}|{}|{}|{}|{}|{}|{}",
                String::from_utf8_lossy(&u.scheme),
                String::from_utf8_lossy(&u.host),
                String::from_utf8_lossy(&u.hostname()),
                String::from_utf8_lossy(&u.path),
                String::from_utf8_lossy(&u.raw_query),
                String::from_utf8_lossy(&u.opaque),
                String::from_utf8_lossy(&u.fragment),
                u.user
                    .as_ref()
                    .map(|u| String::from_utf8_lossy(&u.to_go()).into_owned())
                    .unwrap_or_default(),
            ),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn parses_as_go() {
        // Expected values as Go 1.26's net/url gives them.
        assert_eq!(
            show("https://user:p%40ss@example.com:8443/a%2Fb/c?x=1&y=2#frag%20x"),
            "https|example.com:8443|example.com|/a/b/c|x=1&y=2||frag x|user:p%40ss"
        );
        assert_eq!(
            show("mailto:someone@example.com"),
            "mailto|||||someone@example.com||"
        );
        assert_eq!(
            show("http://[fe80::1%25en0]:80/"),
            "http|[fe80::1%en0]:80|fe80::1%en0|/||||"
        );
        assert_eq!(
            show("http://a:1:2/"),
            "error: parse \"http://a:1:2/\": invalid port \":1:2\" after host"
        );
        assert_eq!(
            show("postgres://a:1,b:2/db"),
            "postgres|a:1,b:2|a:1,b|/db||||"
        );
        assert_eq!(
            show("1http:x"),
            "error: parse \"1http:x\": first path segment in URL cannot contain colon"
        );
        assert_eq!(
            show("http://[1.2.3.4]/"),
            "error: parse \"http://[1.2.3.4]/\": invalid IP-literal"
        );
    }

    #[test]
    fn prints_as_go() {
        let u = parse(b"http://h/a b?q#f g").unwrap();
        assert_eq!(u.to_go(), b"http://h/a%20b?q#f%20g");
        let joined = Url::of_parts(
            b"https".to_vec(),
            b"h\xc3\xa9".to_vec(),
            b"p:q".to_vec(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            None,
        );
        assert_eq!(joined.to_go(), b"https://h%C3%A9/p:q");
    }
}
