//! W3C Trace Context (`traceparent`, `tracestate`) and new span ids.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// The caller's span, from a valid `traceparent` header.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub sampled: bool,
    pub trace_state: String,
}

fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N
        || !text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    let mut out = [0; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Parses `traceparent` (version 00, and later versions by their first four fields, as the
/// specification asks). An invalid header is ignored: the span starts a new trace.
pub(crate) fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Parent> {
    let mut parts = traceparent.trim().split('-');
    let version = parts.next()?;
    let trace_id = hex_bytes::<16>(parts.next()?)?;
    let span_id = hex_bytes::<8>(parts.next()?)?;
    let flags = hex_bytes::<1>(parts.next()?)?;
    let rest = parts.next();
    let version = hex_bytes::<1>(version)?[0];
    if version == 0xff || (version == 0 && rest.is_some()) {
        return None;
    }
    if trace_id == [0; 16] || span_id == [0; 8] {
        return None;
    }
    Some(Parent {
        trace_id,
        span_id,
        sampled: flags[0] & 1 == 1,
        trace_state: tracestate.unwrap_or_default().trim().to_string(),
    })
}

/// Random ids without a random-number crate: SipHash with a random key (std's
/// `RandomState`), over a counter. Unique and unpredictable enough for trace ids, which are
/// not secrets.
pub(crate) struct Ids {
    key: RandomState,
    counter: AtomicU64,
}

impl Ids {
    pub fn new() -> Self {
        Ids {
            key: RandomState::new(),
            counter: AtomicU64::new(0),
        }
    }

    fn next(&self) -> u64 {
        let mut h = self.key.build_hasher();
        h.write_u64(self.counter.fetch_add(1, Ordering::Relaxed));
        h.finish()
    }

    pub fn span_id(&self) -> [u8; 8] {
        loop {
            let id = self.next().to_be_bytes();
            if id != [0; 8] {
                return id;
            }
        }
    }

    pub fn trace_id(&self) -> [u8; 16] {
        let mut id = [0; 16];
        id[..8].copy_from_slice(&self.span_id());
        id[8..].copy_from_slice(&self.next().to_be_bytes());
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_valid_traceparent_and_ignores_invalid_ones() {
        let p = parse(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            Some("congo=t61rcWkgMzE"),
        )
        .unwrap();
        assert_eq!(p.trace_id[0], 0x4b);
        assert_eq!(p.span_id[7], 0xb7);
        assert!(p.sampled);
        assert_eq!(p.trace_state, "congo=t61rcWkgMzE");
        assert!(
            !parse(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
                None
            )
            .unwrap()
            .sampled
        );
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(parse(bad, None), None, "{bad}");
        }
        // A later version may add fields.
        assert!(
            parse(
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                None
            )
            .is_some()
        );
    }

    #[test]
    fn ids_differ_and_are_never_zero() {
        let ids = Ids::new();
        let a = ids.trace_id();
        let b = ids.trace_id();
        assert_ne!(a, b);
        assert_ne!(ids.span_id(), [0; 8]);
    }
}
