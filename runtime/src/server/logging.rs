//! Structured logs (text or JSON) through `tracing`.

use super::options::LogFormat;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `RUST_LOG`, when set, wins over `verbose`.
/// Calling it twice is harmless (the second call is ignored).
pub fn init(format: LogFormat, verbose: u8) {
    let default = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
    };
}
