//! A TLS test client that speaks HTTP/2 or HTTP/1.1 the way CAPI does (POST, no
//! Content-Type), and a server started on loopback with fresh certificates.

#![allow(dead_code)]

use capi_ext::dev_certs::DevCerts;
use capi_ext::{Extension, ServerOptions};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// A running server and what a test needs to reach it.
pub struct TestServer {
    pub addr: SocketAddr,
    pub admin: Vec<SocketAddr>,
    pub certs: DevCerts,
    pub dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    pub done: tokio::task::JoinHandle<()>,
}

pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "capi-ext-test-{tag}-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

impl TestServer {
    pub async fn start(extension: Extension, tweak: impl FnOnce(&mut ServerOptions)) -> TestServer {
        let dir = temp_dir("server");
        let certs = DevCerts::generate(&[]).unwrap();
        certs.write_to(&dir).unwrap();
        let mut options = ServerOptions::local(&dir);
        tweak(&mut options);
        let bound = capi_ext::Server::bind(extension, options).await.unwrap();
        let addr = bound.local_addr();
        let admin = bound.admin_addrs();
        let (tx, rx) = oneshot::channel();
        let done = tokio::spawn(bound.serve(async {
            let _ = rx.await;
        }));
        TestServer {
            addr,
            admin,
            certs,
            dir,
            stop: Some(tx),
            done,
        }
    }

    pub fn client(&self) -> Client {
        Client::new(self.addr, &self.certs.ca_pem, None)
    }

    /// Begins a graceful shutdown (what SIGTERM does).
    pub fn shutdown(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    H2,
    H1,
}

pub struct Answer {
    pub status: u16,
    pub body: serde_json::Value,
    pub content_type: Option<String>,
    pub alpn: Option<Vec<u8>>,
    pub peer_cert: Vec<u8>,
}

#[derive(Clone)]
pub struct Client {
    addr: SocketAddr,
    config_h2: Arc<rustls::ClientConfig>,
    config_h1: Arc<rustls::ClientConfig>,
}

impl Client {
    pub fn new(addr: SocketAddr, ca_pem: &str, identity: Option<(&str, &str)>) -> Client {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
        let make = |alpn: &[u8]| {
            let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots.clone());
            let mut config = match identity {
                Some((cert, key)) => builder
                    .with_client_auth_cert(
                        CertificateDer::pem_slice_iter(cert.as_bytes())
                            .map(Result::unwrap)
                            .collect(),
                        PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
                    )
                    .unwrap(),
                None => builder.with_no_client_auth(),
            };
            config.alpn_protocols = vec![alpn.to_vec()];
            // Like Go's default client (no ClientSessionCache): every connection does a full
            // handshake, so it sees the certificate currently served.
            config.resumption = rustls::client::Resumption::disabled();
            Arc::new(config)
        };
        Client {
            addr,
            config_h2: make(b"h2"),
            config_h1: make(b"http/1.1"),
        }
    }

    /// A TLS connection offering only `proto` in ALPN.
    async fn tls(
        &self,
        proto: Proto,
    ) -> Result<tokio_rustls::client::TlsStream<TcpStream>, String> {
        let config = if proto == Proto::H2 {
            &self.config_h2
        } else {
            &self.config_h1
        };
        let connector = tokio_rustls::TlsConnector::from(config.clone());
        let tcp = TcpStream::connect(self.addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        connector
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .map_err(|e| format!("tls: {e}"))
    }

    /// A connection kept open, as CAPI's client keeps one per extension host.
    pub async fn connect(&self, proto: Proto) -> Result<Connection, String> {
        let tls = self.tls(proto).await?;
        let io = TokioIo::new(tls);
        Ok(match proto {
            Proto::H2 => {
                let (send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                    .await
                    .map_err(|e| format!("h2: {e}"))?;
                Connection {
                    send: Sender::H2(send),
                    closed: tokio::spawn(async move {
                        let _ = conn.await;
                    }),
                }
            }
            Proto::H1 => {
                let (send, conn) = hyper::client::conn::http1::handshake(io)
                    .await
                    .map_err(|e| format!("h1: {e}"))?;
                Connection {
                    send: Sender::H1(send),
                    closed: tokio::spawn(async move {
                        let _ = conn.await;
                    }),
                }
            }
        })
    }

    /// One request on a fresh connection.
    pub async fn post(
        &self,
        proto: Proto,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<Answer, String> {
        let tls = self.tls(proto).await?;
        let (_, session) = tls.get_ref();
        let alpn = session.alpn_protocol().map(|p| p.to_vec());
        let peer_cert = session
            .peer_certificates()
            .map(|c| c[0].to_vec())
            .unwrap_or_default();
        let io = TokioIo::new(tls);
        let request = hyper::Request::post(format!("https://localhost{path}"))
            .body(Full::new(body.into()))
            .unwrap();
        let response = match proto {
            Proto::H2 => {
                let (mut send, conn) =
                    hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                        .await
                        .map_err(|e| format!("h2: {e}"))?;
                tokio::spawn(conn);
                send.send_request(request)
                    .await
                    .map_err(|e| format!("request: {e}"))?
            }
            Proto::H1 => {
                let (mut send, conn) = hyper::client::conn::http1::handshake(io)
                    .await
                    .map_err(|e| format!("h1: {e}"))?;
                tokio::spawn(conn);
                send.send_request(request)
                    .await
                    .map_err(|e| format!("request: {e}"))?
            }
        };
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string());
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&bytes).into()));
        Ok(Answer {
            status,
            body,
            content_type,
            alpn,
            peer_cert,
        })
    }
}

/// A plain-HTTP GET (metrics and probes).
pub async fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let response = send
        .send_request(
            hyper::Request::get(path)
                .header("host", "x")
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// The value of one series (`name{labels}` exactly as exposed) on the metrics listener.
pub async fn metric(addr: SocketAddr, series: &str) -> Option<f64> {
    let (_, text) = http_get(addr, "/metrics").await;
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|value| value.trim().parse().unwrap())
}

/// Polls `series` until `wanted` holds of its value (up to 5 s); returns the value.
pub async fn wait_metric(addr: SocketAddr, series: &str, wanted: impl Fn(f64) -> bool) -> f64 {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let value = metric(addr, series).await;
        if let Some(v) = value.filter(|v| wanted(*v)) {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{series} is {value:?} after 5 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

enum Sender {
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
}

/// What became of a request on a kept connection.
#[derive(Debug)]
pub enum Outcome {
    /// Answered with this status.
    Answered(u16),
    /// Never sent, or sent above the last stream a graceful GOAWAY let through (so never
    /// processed): safe to retry elsewhere, as Go's HTTP/2 client retries.
    NotSent,
    /// Sent, then failed: a lost request.
    Failed(String),
}

/// Whether the server's graceful GOAWAY (NO_ERROR) named a last stream below this one: the
/// server never processed it (RFC 9113 §6.8), and Go's HTTP/2 client, CAPI's, retries it on a new
/// connection. A stream the server accepted and then dropped is an error of another kind.
fn unprocessed_by_go_away(e: &hyper::Error) -> bool {
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<h2::Error>())
        .is_some_and(|h2| {
            h2.is_go_away() && h2.is_remote() && h2.reason() == Some(h2::Reason::NO_ERROR)
        })
}

/// A kept connection; `closed` ends when the connection does.
pub struct Connection {
    send: Sender,
    pub closed: tokio::task::JoinHandle<()>,
}

impl Connection {
    /// Posts on this connection.
    pub async fn post(&mut self, path: &str, body: impl Into<Bytes>) -> Outcome {
        let request = hyper::Request::post(format!("https://localhost{path}"))
            .body(Full::new(body.into()))
            .unwrap();
        let result = match &mut self.send {
            Sender::H2(send) => {
                if send.ready().await.is_err() {
                    return Outcome::NotSent;
                }
                send.try_send_request(request).await
            }
            Sender::H1(send) => {
                if send.ready().await.is_err() {
                    return Outcome::NotSent;
                }
                send.try_send_request(request).await
            }
        };
        match result {
            Ok(response) => {
                let status = response.status().as_u16();
                match response.into_body().collect().await {
                    Ok(_) => Outcome::Answered(status),
                    Err(e) => Outcome::Failed(format!("body: {e}")),
                }
            }
            Err(mut e) => match e.take_message() {
                Some(_) => Outcome::NotSent,
                None => {
                    let e = e.into_error();
                    if unprocessed_by_go_away(&e) {
                        Outcome::NotSent
                    } else {
                        Outcome::Failed(format!("{e} ({:?})", std::error::Error::source(&e)))
                    }
                }
            },
        }
    }

    /// Whether the connection is still usable.
    pub fn is_open(&self) -> bool {
        !self.closed.is_finished()
    }
}
