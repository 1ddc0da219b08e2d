//! Structured logs (text or JSON) through `tracing`.
//!
//! Filtering uses `RUST_LOG` in the `target=level,level` form when set (e.g.
//! `RUST_LOG=capi_ext=debug,info`), else the `-v` count. (tracing-subscriber's `EnvFilter` would
//! add regex span matching and two regex crates, about a fifth of a fresh extension's build.)

use super::options::LogFormat;
use std::io::IsTerminal;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

/// The filter: `RUST_LOG` when it parses, else info / debug (-v) / trace (-vv).
fn filter(verbose: u8) -> Targets {
    let default = match verbose {
        0 => LevelFilter::INFO,
        1 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    match std::env::var("RUST_LOG")
        .ok()
        .filter(|s| !s.trim().is_empty())
    {
        Some(spec) => spec.parse().unwrap_or_else(|e| {
            eprintln!(
                "RUST_LOG={spec:?} is not a `target=level,level` list ({e}); using {default}"
            );
            Targets::new().with_default(default)
        }),
        None => Targets::new().with_default(default),
    }
}

/// Installs the global subscriber. Calling it twice is harmless (the second call is ignored).
pub fn init(format: LogFormat, verbose: u8) {
    let filter = filter(verbose);
    let layer = match format {
        LogFormat::Text => fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    };
    // A handler's spans (INFO and above) inside a traced hook call, for OpenTelemetry; none
    // while no tracer exports them.
    let handler_spans =
        super::otel::HandlerSpans.with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            super::otel::exporting() && *meta.level() <= tracing::Level::INFO
        }));
    let _ = tracing_subscriber::registry()
        .with(layer)
        .with(handler_spans)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_sets_the_default_level() {
        // RUST_LOG is not set in the test environment unless the developer sets it.
        if std::env::var_os("RUST_LOG").is_none() {
            assert_eq!(filter(0).default_level(), Some(LevelFilter::INFO));
            assert_eq!(filter(2).default_level(), Some(LevelFilter::TRACE));
        }
        let parsed: Targets = "capi_ext=debug,warn".parse().unwrap();
        assert_eq!(parsed.default_level(), Some(LevelFilter::WARN));
    }
}
