//! The HTTPS server: serves an [`Extension`] exactly as CAPI calls it.
//!
//! - TLS 1.2+ (rustls, ring), ALPN `h2` and `http/1.1`, certificate reloaded on change,
//!   optional client certificate verification;
//! - routing by path only (the `?timeout=` query becomes the handler's deadline), an
//!   optional path prefix, no `Content-Type` required;
//! - body limit (413), handshake, header and body timeouts, 404 for unknown paths, 400 for
//!   undecodable bodies;
//! - connection hygiene (`connection.rs`): a cap on open connections, idle connections closed,
//!   HTTP/2 keep-alive pings, a maximum connection age with jitter and a graceful GOAWAY;
//! - metrics and probes on separate plain-HTTP listeners; SIGTERM drains in-flight requests;
//! - OpenTelemetry traces over OTLP/HTTP when the standard `OTEL_*` variables name an
//!   endpoint (`otel/`): a span per hook call, continuing the caller's W3C trace context.

mod admin;
mod budget;
mod connection;
mod lane;
mod logging;
mod metrics;
mod options;
mod otel;
mod record;
mod service;
mod table;
mod tls;
mod watch;
mod x509;

pub use logging::init as init_logging;
pub use metrics::Metrics;
pub use options::{
    BindAddress, DEFAULT_MAX_REQUEST_BODY_BYTES, LogFormat, ServerOptions, TlsVersion,
};
pub use service::ExtensionService;
pub use tls::{ReloadingCert, TlsError, server_config};
pub use tower_service;

use crate::error::RequestError;
use crate::{Extension, Reply};
use admin::{AdminState, bytes_body::full};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tracing::Instrument;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A listener could not bind.
    #[error(
        "cannot listen on {addr} ({what}): {source}{}",
        bind_hint(source, flag)
    )]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Which listener.
        what: &'static str,
        /// The flag that sets its address (its environment variable is named beside it).
        flag: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The certificate, key or client CA is unusable.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The directory of `--record-requests-dir` cannot be made.
    #[error(
        "cannot create --record-requests-dir {} (CAPI_EXT_RECORD_REQUESTS_DIR): {source}; name a directory the extension can write, or leave the flag out",
        dir.display()
    )]
    RecordDir {
        /// The directory.
        dir: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// How often a full connection table is looked at again for a connection to close.
const MAKE_ROOM_EVERY: Duration = Duration::from_millis(20);

/// The most an HTTP/1.1 connection buffers of what it reads (its request line and headers must
/// fit). hyper's default, about 400 KiB, lets the read buffer of every keep-alive connection grow
/// to the size of a large body and stay so: 50 connections sending a 215 KiB GeneratePatches
/// request peaked at 45–47 MiB, and at 38–40 MiB with 64 KiB, at the same requests per
/// CPU-second within the noise (alternating runs of the bench server; 8 KiB, hyper's least,
/// cost about 10% of them).
const H1_MAX_BUF: usize = 64 << 10;

/// HTTP/2 streams open at once on one connection (Go's client, CAPI's, opens another connection
/// past it).
const H2_MAX_STREAMS: u32 = 64;
/// HTTP/2 flow-control window of each stream.
const H2_STREAM_WINDOW: u32 = 512 << 10;
/// HTTP/2 flow-control window of a connection: room for every stream's window at once. A request
/// waiting for the memory budget does not read its body, so its stream holds up to its window
/// of unread data; were the connection's window smaller than all of them, the waiting streams
/// would take all of it and starve the one request the budget lets in (every stream of the
/// connection stuck until the body read timeout). This is also the most a connection's waiting
/// requests hold outside the budget.
const H2_CONNECTION_WINDOW: u32 = H2_MAX_STREAMS * H2_STREAM_WINDOW;

struct Shared {
    extension: Extension,
    options: ServerOptions,
    metrics: Arc<Metrics>,
    budget: budget::Budget,
    tracer: Option<otel::Tracer>,
}

/// A server whose listeners are bound; call [`BoundServer::serve`] to start answering.
pub struct BoundServer {
    shared: Arc<Shared>,
    listener: TcpListener,
    acceptor: Option<TlsAcceptor>,
    cert: Option<Arc<ReloadingCert>>,
    admin: Vec<(TcpListener, bool, bool)>,
    admin_state: Arc<AdminState>,
}

/// Entry points of the server.
pub struct Server;

impl Server {
    /// Loads the certificate and binds every listener, so that configuration errors surface
    /// before serving starts.
    pub async fn bind(
        extension: Extension,
        options: ServerOptions,
    ) -> Result<BoundServer, ServeError> {
        Self::bind_with(extension, options, None).await
    }

    /// Like [`Server::bind`], serving hooks on a listener the caller bound (a port the OS chose,
    /// a socket handed over by systemd): `--webhook-host` and `--webhook-port` are not used.
    /// Serve with [`BoundServer::serve`], which stops gracefully when its future resolves.
    ///
    /// ```no_run
    /// # async fn run(extension: capi_ext::Extension, options: capi_ext::ServerOptions) {
    /// let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let server = capi_ext::Server::bind_listener(listener, extension, options).await.unwrap();
    /// println!("serving on {}", server.local_addr());
    /// server.serve(capi_ext::server::shutdown_signal()).await;
    /// # }
    /// ```
    pub async fn bind_listener(
        listener: std::net::TcpListener,
        extension: Extension,
        options: ServerOptions,
    ) -> Result<BoundServer, ServeError> {
        let addr = listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::new(options.webhook_host, options.webhook_port));
        let listener = listener
            .set_nonblocking(true)
            .and_then(|()| TcpListener::from_std(listener))
            .map_err(|source| ServeError::Bind {
                addr,
                what: "hook server",
                flag: "webhook-port",
                source,
            })?;
        Self::bind_with(extension, options, Some(listener)).await
    }

    async fn bind_with(
        extension: Extension,
        options: ServerOptions,
        listener: Option<TcpListener>,
    ) -> Result<BoundServer, ServeError> {
        let metrics = Arc::new(Metrics::default());
        // Made at the start, so that every request is recorded or the server says why at once
        // (a missing directory would otherwise fail each recording with a warning).
        if let Some(dir) = &options.record_requests_dir {
            std::fs::create_dir_all(dir).map_err(|source| ServeError::RecordDir {
                dir: dir.clone(),
                source,
            })?;
        }
        let (acceptor, cert) = if options.insecure_plaintext {
            tracing::warn!(
                "serving PLAINTEXT HTTP (--insecure-serve-plaintext-for-development): CAPI will not call this server"
            );
            (None, None)
        } else {
            let cert = Arc::new(ReloadingCert::load(
                options.webhook_cert_dir.join(&options.webhook_cert_name),
                options.webhook_cert_dir.join(&options.webhook_key_name),
            )?);
            let config = server_config(&options, cert.clone())?;
            (Some(TlsAcceptor::from(Arc::new(config))), Some(cert))
        };
        let listener = match listener {
            Some(listener) => listener,
            None => {
                let addr = SocketAddr::new(options.webhook_host, options.webhook_port);
                bind(addr, "hook server", "webhook-port").await?
            }
        };
        let mut admin = Vec::new();
        match (
            options.metrics_bind_address.0,
            options.health_probe_bind_address.0,
        ) {
            (Some(m), Some(h)) if m == h && m.port() != 0 => admin.push((
                bind(m, "metrics and probes", "metrics-bind-address").await?,
                true,
                true,
            )),
            (m, h) => {
                if let Some(m) = m {
                    admin.push((
                        bind(m, "metrics", "metrics-bind-address").await?,
                        true,
                        false,
                    ));
                }
                if let Some(h) = h {
                    admin.push((
                        bind(h, "health probes", "health-probe-bind-address").await?,
                        false,
                        true,
                    ));
                }
            }
        }
        let (budget_bytes, why) = budget::choose(
            options.max_in_flight_body_bytes,
            budget::cgroup_memory_limit(),
        );
        tracing::info!(
            budget_mib = budget_bytes >> 20,
            source = %why,
            "memory budget of requests in flight"
        );
        let largest = options
            .max_request_body_bytes
            .saturating_mul(budget::CHARGE_FACTOR);
        if largest > budget_bytes {
            tracing::warn!(
                budget_mib = budget_bytes >> 20,
                largest_request_mib = largest >> 20,
                "the memory budget is smaller than one request of --max-request-body-bytes (charged three times its body): such requests are refused; lower --max-request-body-bytes or raise the memory limit"
            );
        }
        let admin_state = Arc::new(AdminState {
            metrics: metrics.clone(),
            ready: false.into(),
        });
        // Telemetry never stops the extension from serving: a configuration it cannot use is
        // logged and tracing stays off.
        let tracer = match otel::Config::from_env(|name| std::env::var(name).ok()) {
            Ok(config) => config.map(otel::Tracer::start),
            Err(e) => {
                tracing::warn!(error = %e, "OpenTelemetry tracing stays off");
                None
            }
        };
        let budget = budget::Budget::new(budget_bytes, &metrics);
        Ok(BoundServer {
            shared: Arc::new(Shared {
                extension,
                options,
                metrics,
                budget,
                tracer,
            }),
            listener,
            acceptor,
            cert,
            admin,
            admin_state,
        })
    }

    /// Parses flags and environment, sets up logging, and serves `extension` until SIGTERM
    /// or Ctrl-C. The one-line `main` of an extension:
    ///
    /// ```no_run
    /// use capi_ext::hooks::v1alpha1::*;
    /// use capi_ext::{Extension, Registration, Server};
    ///
    /// async fn before_create(_: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    ///     BeforeClusterCreateResponse::success()
    /// }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     let extension = Extension::builder()
    ///         .handler(Registration::new(BeforeClusterCreate, "before-cluster-create", before_create));
    ///     Server::run(extension)
    /// }
    /// ```
    pub fn run<S: Send + Sync + 'static>(
        extension: crate::ExtensionBuilder<S>,
    ) -> std::process::ExitCode {
        Self::run_with(extension, parse_options())
    }

    /// Like [`Server::run`], with options the caller already parsed.
    pub fn run_with<S: Send + Sync + 'static>(
        extension: crate::ExtensionBuilder<S>,
        options: ServerOptions,
    ) -> std::process::ExitCode {
        // Only the build is generic; the server is compiled once, in this crate, not again in
        // every extension that calls this (an edited handler rebuilds only the handlers).
        run_built(extension.build(), options)
    }

    /// [`Server::run`] inside a Tokio runtime of the caller's, for an extension whose state is
    /// made asynchronously (a Kubernetes client, a connection pool):
    ///
    /// ```no_run
    /// use capi_ext::hooks::v1alpha1::*;
    /// use capi_ext::{Extension, Server, State, hook};
    ///
    /// #[derive(Clone)]
    /// struct Quota(u32);
    ///
    /// #[hook(BeforeClusterCreate)]
    /// async fn quota(State(q): State<Quota>, _req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    ///     let _ = q.0;
    ///     BeforeClusterCreateResponse::success()
    /// }
    ///
    /// #[capi_ext::tokio::main(crate = "capi_ext::tokio")]
    /// async fn main() -> std::process::ExitCode {
    ///     let quota = Quota(10); // e.g. read from the management cluster
    ///     Server::run_async(Extension::builder().state(quota).register::<quota>()).await
    /// }
    /// ```
    pub async fn run_async<S: Send + Sync + 'static>(
        extension: crate::ExtensionBuilder<S>,
    ) -> std::process::ExitCode {
        Self::run_async_with(extension, parse_options()).await
    }

    /// Like [`Server::run_async`], with options the caller already parsed.
    pub async fn run_async_with<S: Send + Sync + 'static>(
        extension: crate::ExtensionBuilder<S>,
        options: ServerOptions,
    ) -> std::process::ExitCode {
        serve_built(extension.build(), options).await
    }
}

/// [`Server::run_with`] past the extension's build: a runtime, and [`serve_built`] on it.
/// Not generic, so its code is generated here once.
fn run_built(
    extension: Result<Extension, crate::RegistrationError>,
    options: ServerOptions,
) -> std::process::ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    runtime.block_on(serve_built(extension, options))
}

/// Logging, then the built extension served until SIGTERM or Ctrl-C: exit 2 when it did not
/// build, 1 when it could not bind. A boxed future made here: what it runs is generated in this
/// crate, not in the crate that awaits it.
fn serve_built(
    extension: Result<Extension, crate::RegistrationError>,
    options: ServerOptions,
) -> std::pin::Pin<Box<dyn Future<Output = std::process::ExitCode> + Send>> {
    Box::pin(async move {
        init_logging(options.log_format, options.verbose);
        let extension = match extension {
            Ok(e) => e,
            Err(e) => {
                tracing::error!("{e}");
                return std::process::ExitCode::from(2);
            }
        };
        match Server::bind(extension, options).await {
            Ok(server) => {
                server.serve(shutdown_signal()).await;
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                tracing::error!("{e}");
                std::process::ExitCode::FAILURE
            }
        }
    })
}

/// The server's flags and environment variables, parsed from the command line.
fn parse_options() -> ServerOptions {
    use clap::Parser;
    #[derive(Parser)]
    #[command(about = "A Cluster API Runtime Extension")]
    struct Cli {
        #[command(flatten)]
        server: ServerOptions,
    }
    Cli::parse().server
}

async fn bind(
    addr: SocketAddr,
    what: &'static str,
    flag: &'static str,
) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr,
            what,
            flag,
            source,
        })
}

/// What to do when a port is taken: the flag and the environment variable that move it.
fn bind_hint(source: &std::io::Error, flag: &str) -> String {
    if source.kind() != std::io::ErrorKind::AddrInUse {
        return String::new();
    }
    let env = format!("CAPI_EXT_{}", flag.to_uppercase().replace('-', "_"));
    format!(
        "; another process listens there (another copy of this extension?): stop it, or choose another address with --{flag} (or {env})"
    )
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

impl BoundServer {
    /// Address of the hook listener.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Addresses of the admin listeners (metrics first when both exist).
    pub fn admin_addrs(&self) -> Vec<SocketAddr> {
        self.admin
            .iter()
            .map(|(l, _, _)| l.local_addr().expect("bound"))
            .collect()
    }

    /// The metrics (also served on the metrics listener).
    pub fn metrics(&self) -> Arc<Metrics> {
        self.shared.metrics.clone()
    }

    /// Serves until `shutdown` resolves, then stops accepting, reports not-ready, and waits
    /// for in-flight requests up to the grace period.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let BoundServer {
            shared,
            listener,
            acceptor,
            cert,
            admin,
            admin_state,
        } = self;
        // The cap is in the metrics before the metrics listener answers.
        let cap = shared.options.max_connections.clamp(
            1,
            tokio::sync::Semaphore::MAX_PERMITS.min(u32::MAX as usize),
        );
        shared
            .metrics
            .connections_max
            .set(i64::try_from(cap).unwrap_or(i64::MAX));
        let mut background = Vec::new();
        for (listener, m, p) in admin {
            background.push(tokio::spawn(admin::serve(
                listener,
                admin_state.clone(),
                m,
                p,
            )));
        }
        if let Some(cert) = cert {
            background.push(tokio::spawn(
                cert.watch(shared.options.cert_reload_interval, shared.metrics.clone()),
            ));
        }
        let addr = listener
            .local_addr()
            .map_or_else(|_| "unknown".to_string(), |a| a.to_string());
        tracing::info!(
            address = %addr,
            tls = acceptor.is_some(),
            handlers = shared.extension.handlers().len(),
            target = %shared.extension.target(),
            "serving Runtime Extension"
        );
        if let Some(warning) = shared.extension.target().unproven_warning() {
            tracing::warn!("{warning}");
        }
        admin_state.ready.store(true, Ordering::SeqCst);
        let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(shared.options.header_read_timeout);
        builder.http1().max_buf_size(H1_MAX_BUF);
        let keepalive = shared.options.http2_keepalive_interval;
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(H2_MAX_STREAMS)
            .initial_connection_window_size(H2_CONNECTION_WINDOW)
            .initial_stream_window_size(H2_STREAM_WINDOW)
            .keep_alive_interval((!keepalive.is_zero()).then_some(keepalive))
            .keep_alive_timeout(keepalive);
        let builder = Arc::new(builder);
        let limits = connection::Limits {
            idle_timeout: shared.options.idle_timeout,
            max_age: shared.options.max_connection_age,
        };
        let permits = Arc::new(tokio::sync::Semaphore::new(cap));
        let (closing_tx, closing) = tokio::sync::watch::channel(false);
        let mut seed = u64::from(std::process::id()) << 32;
        let table = Arc::new(table::Table::default());
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(a) => a,
                    Err(e) => { tracing::warn!(error = %e, "accept failed"); continue; }
                },
                _ = &mut shutdown => break,
            };
            // At the cap, make room for the connection just accepted: one in its handshake or
            // idle is closed (and, while every connection has a request in flight, the table is
            // looked at again as they end).
            let mut waited = false;
            let permit = loop {
                if let Ok(permit) = permits.clone().try_acquire_owned() {
                    break Some(permit);
                }
                match table.make_room() {
                    table::Room::Evicted(eviction, age) => {
                        shared.metrics.evicted(eviction.reason());
                        tracing::info!(
                            max_connections = cap,
                            reason = eviction.reason(),
                            age = ?age,
                            "connection cap reached: closing a connection without a request in flight to make room"
                        );
                    }
                    table::Room::Closing => {}
                    table::Room::Full if !waited => {
                        waited = true;
                        shared.metrics.connection_cap_reached.inc();
                        tracing::warn!(
                            max_connections = cap,
                            "connection cap reached with a request in flight on every connection: new connections wait until one ends"
                        );
                    }
                    table::Room::Full => {}
                }
                tokio::select! {
                    permit = permits.clone().acquire_owned() => break Some(permit.expect("the semaphore is never closed")),
                    _ = tokio::time::sleep(MAKE_ROOM_EVERY) => {}
                    _ = &mut shutdown => break None,
                }
            };
            let Some(permit) = permit else { break };
            let _ = stream.set_nodelay(true);
            let shared = shared.clone();
            let acceptor = acceptor.clone();
            let builder = builder.clone();
            let closing = closing.clone();
            seed = seed.wrapping_add(1);
            let conn_seed = seed;
            let open = metrics::Held::new(&shared.metrics.connections_open);
            let place = table.enter();
            tokio::spawn(async move {
                let _permit = permit;
                let _open = open;
                let handshake_timeout = shared.options.tls_handshake_timeout;
                let mut client: Option<Arc<str>> = None;
                let io: Box<dyn connection::Io> = match acceptor {
                    Some(acceptor) => {
                        let handshake = tokio::select! {
                            done = tokio::time::timeout(handshake_timeout, acceptor.accept(stream)) => done,
                            _ = place.evict.notified() => {
                                return tracing::debug!(%peer, "connection cap reached: closed a connection still in its TLS handshake to make room");
                            }
                        };
                        match handshake {
                            Ok(Ok(tls)) => {
                                client = tls
                                    .get_ref()
                                    .1
                                    .peer_certificates()
                                    .and_then(|chain| chain.first())
                                    .and_then(|leaf| x509::subject_common_name(leaf))
                                    .map(Arc::from);
                                Box::new(tls)
                            }
                            Ok(Err(e)) => {
                                shared.metrics.handshake_failed("error");
                                return tracing::debug!(%peer, error = %e, "TLS handshake failed");
                            }
                            Err(_) => {
                                shared.metrics.handshake_failed("timeout");
                                return tracing::debug!(%peer, "TLS handshake timed out");
                            }
                        }
                    }
                    None => Box::new(stream),
                };
                let activity = connection::Activity::new();
                place.serving(activity.clone());
                let evict = place.evict.clone();
                let handler = move |req| handle(shared.clone(), client.clone(), req);
                connection::serve(
                    io, builder, handler, limits, conn_seed, closing, activity, evict,
                )
                .await;
            });
        }
        admin_state.ready.store(false, Ordering::SeqCst);
        drop(listener);
        let grace = shared.options.shutdown_grace_period;
        tracing::info!(grace = ?grace, "shutting down: draining in-flight requests");
        let _ = closing_tx.send(true);
        // Every connection holds a permit until it is closed.
        if tokio::time::timeout(grace, permits.acquire_many(cap as u32))
            .await
            .is_err()
        {
            tracing::warn!("grace period over with requests still in flight");
        }
        for task in background {
            task.abort();
        }
        if let Some(tracer) = &shared.tracer {
            tracer.shutdown(Duration::from_secs(5)).await;
        }
        tracing::info!("stopped");
    }
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(full(body))
        .expect("valid response")
}

/// The body length a request declares (`Content-Length`).
fn declared_length(headers: &http::HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// Reads a POST body (of `declared` length, when it says) within the size limit and the read
/// timeout, once the memory budget has room for it; the charge is kept until the request is
/// answered.
async fn read_body(
    options: &ServerOptions,
    budget: &budget::Budget,
    req: Request<Incoming>,
    declared: Option<u64>,
) -> Result<(Vec<u8>, budget::Charge), RequestError> {
    if req.method() != http::Method::POST {
        return Err(RequestError::MethodNotAllowed {
            method: req.method().to_string(),
        });
    }
    let limit = options.max_request_body_bytes;
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(RequestError::PayloadTooLarge { limit });
    }
    // Without a Content-Length (rare: CAPI's client sends one) the largest body is charged.
    let charge = budget
        .charge(
            declared.map_or(limit, |len| len as usize),
            options.body_read_timeout,
        )
        .await?;
    match tokio::time::timeout(
        options.body_read_timeout,
        collect_body(req.into_body(), declared, limit),
    )
    .await
    {
        Ok(Ok(body)) => Ok((body, charge)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(RequestError::Timeout {
            seconds: options.body_read_timeout.as_secs(),
        }),
    }
}

/// Copies the body's frames, as they arrive, into one buffer of the declared length: each
/// frame is released once copied, so a request holds its body once, not its frames and then a
/// copy of them.
async fn collect_body(
    mut body: Incoming,
    declared: Option<u64>,
    limit: usize,
) -> Result<Vec<u8>, RequestError> {
    let mut bytes = Vec::with_capacity(declared.map_or(0, |len| len as usize).min(limit));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| RequestError::BadRequest {
            kind: "request",
            message: format!("cannot read the body: {e}"),
        })?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Err(RequestError::PayloadTooLarge { limit });
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// Answers one request; `client` is the common name of the caller's client certificate, when
/// it presented one (logged with the call: CAPI's manager, `capi-ext render`, ...).
async fn handle(
    shared: Arc<Shared>,
    client: Option<Arc<str>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let started = Instant::now();
    let _in_flight = shared.metrics.start();
    let options = &shared.options;
    let raw_path = req.uri().path();
    let prefix = options.path_prefix.trim_end_matches('/');
    let path = raw_path
        .strip_prefix(prefix)
        .filter(|p| p.starts_with('/'))
        .unwrap_or(raw_path)
        .to_string();
    let query = req.uri().query().map(str::to_string);
    let version = req.version();
    let trace = shared.tracer.as_ref().map(|t| t.arrived(req.headers()));
    let span = tracing::info_span!("request", hook = tracing::field::Empty, handler = tracing::field::Empty, cluster = tracing::field::Empty, client = tracing::field::Empty, %path);
    if let Some(client) = &client {
        span.record("client", &**client);
    }
    // The handler's own spans are exported as children of the call's span.
    if let (Some(tracer), Some(started)) = (&shared.tracer, &trace)
        && let Some(context) = tracer.context(started)
    {
        otel::attach(&span, context);
    }
    let declared = declared_length(req.headers());
    let work = {
        let (shared, path) = (shared.clone(), path.clone());
        async move {
            let options = &shared.options;
            match read_body(options, &shared.budget, req, declared).await {
                Ok((body, _charge)) => {
                    let reply = shared
                        .extension
                        .dispatch(&path, query.as_deref(), &body)
                        .await;
                    if let Some(dir) = &options.record_requests_dir
                        && reply.status != StatusCode::NOT_FOUND
                        && let Err(e) =
                            record::record(dir, reply.hook, &reply.handler, &body).await
                    {
                        tracing::warn!(dir = %dir.display(), error = %e, "cannot record the request");
                    }
                    reply
                }
                Err(err) => Reply::error(err, None, ""),
            }
        }
        .instrument(span.clone())
    };
    let reply = lane::run(declared, work, || {
        Reply::error(
            RequestError::Internal("the request's task ended without an answer".into()),
            None,
            "",
        )
    })
    .await;
    let Reply {
        status,
        body,
        hook,
        handler,
        outcome,
        subject,
    } = reply;
    span.record("hook", hook);
    span.record("handler", handler.as_str());
    if let Some(subject) = &subject {
        span.record("cluster", subject.as_str());
    }
    let elapsed = started.elapsed();
    let outcome_label = outcome.map_or("Error", |o| o.as_str());
    shared.metrics.observe(
        hook,
        &handler,
        outcome_label,
        status.as_u16(),
        elapsed.as_secs_f64(),
    );
    if let (Some(tracer), Some(started)) = (&shared.tracer, trace) {
        tracer.answered(
            started,
            otel::Call {
                hook,
                handler: &handler,
                cluster: subject.as_deref(),
                outcome: outcome_label,
                status: status.as_u16(),
                path: &path,
                http_version: version,
                error: (!status.is_success() || outcome_label == "Failure")
                    .then(|| error_message(&body)),
            },
        );
    }
    span.in_scope(|| {
        if status.is_success() {
            tracing::info!(status = outcome_label, code = status.as_u16(), http = ?version, elapsed_ms = elapsed.as_secs_f64() * 1e3, "hook answered");
        } else {
            tracing::warn!(code = status.as_u16(), http = ?version, message = %String::from_utf8_lossy(&body), "request rejected");
        }
    });
    Ok(json_response(status, body))
}

/// The `message` of a response body (a Failure's, or an error's), for a span's status.
fn error_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_names_the_flag_and_variable_that_move_it() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err = bind(addr, "metrics", "metrics-bind-address")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("cannot listen on {addr} (metrics): "))
                && err.ends_with(
                    "stop it, or choose another address with --metrics-bind-address (or CAPI_EXT_METRICS_BIND_ADDRESS)"
                ),
            "{err}"
        );
    }
}
