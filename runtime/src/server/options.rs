//! Command-line flags and environment variables of an extension server, named as
//! controller-runtime names them so CAPI operators recognise them.

use crate::duration::parse_go_duration;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The largest request body accepted by default (CAPI sends every template in GeneratePatches).
pub const DEFAULT_MAX_REQUEST_BODY_BYTES: usize = 20 << 20;

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Minimum TLS version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TlsVersion {
    /// TLS 1.2 (and 1.3).
    #[default]
    #[value(name = "VersionTLS12", alias = "1.2")]
    Tls12,
    /// TLS 1.3 only.
    #[value(name = "VersionTLS13", alias = "1.3")]
    Tls13,
}

fn duration(text: &str) -> Result<Duration, String> {
    parse_go_duration(text)
        .ok_or_else(|| format!("`{text}` is not a duration: use Go's form, e.g. 10s, 500ms, 1m30s"))
}

/// A listener address that can be disabled (`0` on the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindAddress(pub Option<SocketAddr>);

fn bind_address(text: &str) -> Result<BindAddress, String> {
    if text == "0" {
        return Ok(BindAddress(None));
    }
    let text = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    text.parse().map(|a| BindAddress(Some(a))).map_err(|_| {
        format!("`{text}` is not a bind address: use HOST:PORT or :PORT, or 0 to disable")
    })
}

/// The server's settings. Each flag can also be set by the environment variable named in
/// `--help`.
///
/// ```
/// use capi_ext::ServerOptions;
/// use clap::Parser;
///
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     server: ServerOptions,
/// }
///
/// let cli = Cli::parse_from(["ext", "--webhook-port", "8443", "--webhook-cert-dir", "/certs"]);
/// assert_eq!(cli.server.webhook_port, 8443);
/// assert_eq!(cli.server.max_request_body_bytes, 20 << 20);
/// ```
#[derive(Debug, Clone, clap::Args)]
#[command(about = None, long_about = None)]
pub struct ServerOptions {
    /// Port of the HTTPS hook server.
    #[arg(long, env = "CAPI_EXT_WEBHOOK_PORT", default_value_t = 9443)]
    pub webhook_port: u16,

    /// Address the hook server binds to.
    #[arg(long, env = "CAPI_EXT_WEBHOOK_HOST", default_value = "0.0.0.0")]
    pub webhook_host: std::net::IpAddr,

    /// Directory holding the serving certificate and key (reloaded when they change).
    #[arg(
        long,
        env = "CAPI_EXT_WEBHOOK_CERT_DIR",
        default_value = "/tmp/k8s-webhook-server/serving-certs"
    )]
    pub webhook_cert_dir: PathBuf,

    /// File name of the certificate chain in the cert dir.
    #[arg(long, env = "CAPI_EXT_WEBHOOK_CERT_NAME", default_value = "tls.crt")]
    pub webhook_cert_name: String,

    /// File name of the private key in the cert dir.
    #[arg(long, env = "CAPI_EXT_WEBHOOK_KEY_NAME", default_value = "tls.key")]
    pub webhook_key_name: String,

    /// File name, in the cert dir, of a CA bundle: when set, clients must present a
    /// certificate signed by it (mTLS; see CAPI's --runtime-extension-client-cert-file).
    #[arg(long, env = "CAPI_EXT_WEBHOOK_CLIENT_CA_NAME")]
    pub webhook_client_ca_name: Option<String>,

    /// Minimum TLS version.
    #[arg(long, env = "CAPI_EXT_TLS_MIN_VERSION", value_enum, default_value_t = TlsVersion::Tls12)]
    pub tls_min_version: TlsVersion,

    /// How often the certificate files are checked for changes.
    #[arg(long, env = "CAPI_EXT_CERT_RELOAD_INTERVAL", value_parser = duration, default_value = "10s")]
    pub cert_reload_interval: Duration,

    /// Path prefix, when the ExtensionConfig's service.path or URL has one.
    #[arg(long, env = "CAPI_EXT_PATH_PREFIX", default_value = "")]
    pub path_prefix: String,

    /// Largest accepted request body (CAPI sends every template in GeneratePatches).
    #[arg(long, env = "CAPI_EXT_MAX_REQUEST_BODY_BYTES", default_value_t = DEFAULT_MAX_REQUEST_BODY_BYTES)]
    pub max_request_body_bytes: usize,

    /// Memory budget of requests in flight, in bytes: each request is charged three times its
    /// body until it is answered; one that does not fit waits (up to the body read timeout).
    /// Default: half the container's memory limit (cgroup), else 512 MiB; the log says which.
    #[arg(long, env = "CAPI_EXT_MAX_IN_FLIGHT_BODY_BYTES")]
    pub max_in_flight_body_bytes: Option<usize>,

    /// Time allowed for a TLS handshake.
    #[arg(long, env = "CAPI_EXT_TLS_HANDSHAKE_TIMEOUT", value_parser = duration, default_value = "10s")]
    pub tls_handshake_timeout: Duration,

    /// Time allowed to receive request headers.
    #[arg(long, env = "CAPI_EXT_HEADER_READ_TIMEOUT", value_parser = duration, default_value = "30s")]
    pub header_read_timeout: Duration,

    /// Time allowed to receive a request body.
    #[arg(long, env = "CAPI_EXT_BODY_READ_TIMEOUT", value_parser = duration, default_value = "30s")]
    pub body_read_timeout: Duration,

    /// Open connections at most; at the cap, the connection longest in its TLS handshake, else
    /// the one idle longest, is closed to make room; accepting waits (a warning is logged) only
    /// while every connection has a request in flight.
    #[arg(long, env = "CAPI_EXT_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,

    /// A connection with no request in flight for this long is closed (HTTP/1.1 keep-alive and
    /// HTTP/2 alike); 0 keeps idle connections open.
    #[arg(long, env = "CAPI_EXT_IDLE_TIMEOUT", value_parser = duration, default_value = "120s")]
    pub idle_timeout: Duration,

    /// HTTP/2 keep-alive pings at this interval find dead peers (closed when a ping is not
    /// answered within the same time); 0 disables them.
    #[arg(long, env = "CAPI_EXT_HTTP2_KEEPALIVE_INTERVAL", value_parser = duration, default_value = "30s")]
    pub http2_keepalive_interval: Duration,

    /// Connections are closed gracefully (HTTP/2 GOAWAY; in-flight requests finish) after about
    /// this long (±10% jitter), so clients reconnect and spread over replicas behind a Service:
    /// CAPI keeps one connection per extension host. 0 keeps connections for as long as they
    /// are used.
    #[arg(long, env = "CAPI_EXT_MAX_CONNECTION_AGE", value_parser = duration, default_value = "0s")]
    pub max_connection_age: Duration,

    /// Time given to in-flight requests after SIGTERM before the server exits.
    #[arg(long, env = "CAPI_EXT_SHUTDOWN_GRACE_PERIOD", value_parser = duration, default_value = "25s")]
    pub shutdown_grace_period: Duration,

    /// Address of the Prometheus metrics endpoint (plain HTTP, /metrics); 0 disables it.
    #[arg(long, env = "CAPI_EXT_METRICS_BIND_ADDRESS", value_parser = bind_address, default_value = ":8080")]
    pub metrics_bind_address: BindAddress,

    /// Address of the health probes (plain HTTP, /healthz and /readyz); 0 disables them.
    #[arg(long, env = "CAPI_EXT_HEALTH_PROBE_BIND_ADDRESS", value_parser = bind_address, default_value = ":9440")]
    pub health_probe_bind_address: BindAddress,

    /// Log format.
    #[arg(long, env = "CAPI_EXT_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// More verbose logs (-v debug, -vv trace). RUST_LOG, when set, wins.
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Keep the last request each handler received as DIR/<Hook>-<handler>.json, to replay
    /// with `capi-ext call -f`. Requests carry cluster data: for debugging only. The directory is
    /// made at the start if it does not exist.
    #[arg(long, env = "CAPI_EXT_RECORD_REQUESTS_DIR", value_name = "DIR")]
    pub record_requests_dir: Option<PathBuf>,

    /// Serve plain HTTP instead of HTTPS. For local experiments only: CAPI only calls https URLs.
    #[arg(
        long = "insecure-serve-plaintext-for-development",
        env = "CAPI_EXT_INSECURE_SERVE_PLAINTEXT_FOR_DEVELOPMENT"
    )]
    pub insecure_plaintext: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        use clap::{FromArgMatches, Parser};
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            options: ServerOptions,
        }
        let matches = <Only as clap::CommandFactory>::command()
            .no_binary_name(true)
            .get_matches_from(Vec::<String>::new());
        Only::from_arg_matches(&matches)
            .expect("defaults always parse")
            .options
    }
}

impl ServerOptions {
    /// Options for a test or a local run: every listener on 127.0.0.1 with an OS-chosen port,
    /// certificates from `cert_dir`.
    pub fn local(cert_dir: impl Into<PathBuf>) -> Self {
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        ServerOptions {
            webhook_port: 0,
            webhook_host: loopback.ip(),
            webhook_cert_dir: cert_dir.into(),
            metrics_bind_address: BindAddress(Some(loopback)),
            health_probe_bind_address: BindAddress(Some(loopback)),
            cert_reload_interval: Duration::from_secs(1),
            ..ServerOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_docs_stay_out_of_the_extensions_help() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            server: ServerOptions,
        }
        let help = <Cli as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        assert!(!help.contains("```") && !help.contains("Parser"), "{help}");
        assert!(help.contains("--webhook-port"), "{help}");
    }

    #[test]
    fn parses_bind_addresses_and_durations() {
        assert_eq!(bind_address("0").unwrap(), BindAddress(None));
        assert_eq!(
            bind_address(":8080").unwrap(),
            BindAddress(Some("0.0.0.0:8080".parse().unwrap()))
        );
        assert!(bind_address("nope").unwrap_err().contains("HOST:PORT"));
        assert_eq!(duration("1m").unwrap(), Duration::from_secs(60));
        assert!(duration("10").unwrap_err().contains("Go's form"));
    }

    #[test]
    fn defaults_follow_controller_runtime() {
        let o = ServerOptions::default();
        assert_eq!(o.webhook_port, 9443);
        assert_eq!(o.webhook_cert_name, "tls.crt");
        assert_eq!(
            o.health_probe_bind_address,
            BindAddress(Some("0.0.0.0:9440".parse().unwrap()))
        );
        assert!(!o.insecure_plaintext);
    }
}
