//! Go duration strings (`10s`, `1m30s`, `500ms`), as CAPI writes them in `?timeout=`.

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
    if text == "0" {
        return Some(Duration::ZERO);
    }
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        if num_len == 0 {
            return None;
        }
        let value: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).ok()
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
