//! Go duration strings (`10s`, `1m30s`, `500ms`): as CAPI writes them in `?timeout=`, and as
//! Go reads and writes a `metav1.Duration` (`time.ParseDuration`, `time.Duration.String`).

use std::time::Duration;

/// Parses a Go `time.Duration` string. Returns `None` for anything else (including
/// negative durations).
///
/// ```
/// use std::time::Duration;
/// use capi_ext::duration::parse_go_duration;
/// assert_eq!(parse_go_duration("10s"), Some(Duration::from_secs(10)));
/// assert_eq!(parse_go_duration("1m30.5s"), Some(Duration::from_millis(90_500)));
/// assert_eq!(parse_go_duration("soon"), None);
/// ```
pub fn parse_go_duration(text: &str) -> Option<Duration> {
    parse_go_nanos(text)
        .and_then(|nanos| u64::try_from(nanos).ok())
        .map(Duration::from_nanos)
}

/// Formats a duration the short way Go does for whole values (`10s`, `1m0s` is written `60s`).
pub fn format_seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{}s", secs as u64)
    } else {
        format!("{secs}s")
    }
}

/// Go's `time.ParseDuration`, in nanoseconds: `None` where Go returns an error (negative
/// durations are Go's too).
///
/// ```
/// use capi_ext::duration::parse_go_nanos;
/// assert_eq!(parse_go_nanos("1m30s"), Some(90_000_000_000));
/// assert_eq!(parse_go_nanos("-1.5h"), Some(-5_400_000_000_000));
/// assert_eq!(parse_go_nanos("90"), None);
/// ```
pub fn parse_go_nanos(orig: &str) -> Option<i64> {
    let mut s = orig;
    let mut neg = false;
    if let Some(rest) = s.strip_prefix('-') {
        neg = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while !s.is_empty() {
        let b = s.as_bytes();
        if !(b[0] == b'.' || b[0].is_ascii_digit()) {
            return None;
        }
        // The integer part.
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut v: u64 = 0;
        for c in &b[..digits] {
            if v > LIMIT / 10 {
                return None;
            }
            v = v * 10 + u64::from(c - b'0');
            if v > LIMIT {
                return None;
            }
        }
        s = &s[digits..];
        let pre = digits > 0;
        // The fraction.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let b = rest.as_bytes();
            let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
            let mut overflow = false;
            for c in &b[..n] {
                if overflow {
                    continue;
                }
                if f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(c - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            post = n > 0;
            s = &rest[n..];
        }
        if !pre && !post {
            return None;
        }
        let i = s
            .bytes()
            .position(|c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if i == 0 {
            return None;
        }
        let unit: u64 = match &s[..i] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        s = &s[i..];
        if v > LIMIT / unit {
            return None;
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return None;
            }
        }
        d += v;
        if d > LIMIT {
            return None;
        }
    }
    if neg {
        return Some((d as i64).wrapping_neg());
    }
    if d > LIMIT - 1 {
        return None;
    }
    Some(d as i64)
}

/// Go's `time.Duration.String` of `d` nanoseconds: how Go writes a duration back, e.g. a
/// `metav1.Duration` it decoded (`90s` is written `1m30s`).
///
/// ```
/// use capi_ext::duration::format_go;
/// assert_eq!(format_go(90_000_000_000), "1m30s");
/// assert_eq!(format_go(1_500_000), "1.5ms");
/// assert_eq!(format_go(0), "0s");
/// ```
pub fn format_go(d: i64) -> String {
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    let frac = |u: u64, prec: u32| -> (String, u64) {
        let mut digits = String::new();
        let mut v = u;
        let mut print = false;
        for _ in 0..prec {
            let digit = v % 10;
            print = print || digit != 0;
            if print {
                digits.insert(0, char::from(b'0' + digit as u8));
            }
            v /= 10;
        }
        if print {
            digits.insert(0, '.');
        }
        (digits, v)
    };
    let mut out;
    if u < 1_000_000_000 {
        if u == 0 {
            return "0s".into();
        }
        let (unit, prec) = if u < 1_000 {
            ("ns", 0)
        } else if u < 1_000_000 {
            ("µs", 3)
        } else {
            ("ms", 6)
        };
        let (f, whole) = frac(u, prec);
        out = format!("{whole}{f}{unit}");
    } else {
        let (f, whole) = frac(u, 9);
        u = whole;
        out = format!("{}{f}s", u % 60);
        u /= 60;
        if u > 0 {
            out = format!("{}m{out}", u % 60);
            u /= 60;
            if u > 0 {
                out = format!("{u}h{out}");
            }
        }
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_spellings() {
        assert_eq!(parse_go_duration("0"), Some(Duration::ZERO));
        assert_eq!(parse_go_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_go_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_go_duration("2us"), Some(Duration::from_micros(2)));
        for bad in ["", "-1s", "10", "s", "1x", "1.2.3s"] {
            assert_eq!(parse_go_duration(bad), None, "{bad}");
        }
        assert_eq!(format_seconds(Duration::from_secs(10)), "10s");
    }
}
