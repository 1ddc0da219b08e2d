//! The batch exporter: spans queue in a bounded channel (full: dropped and counted, never
//! waited for), a background task sends them in batches over OTLP/HTTP.

use super::otlp::{SpanData, encode_json, encode_protobuf};
use super::{Config, Protocol};
use http::{Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls_pki_types::ServerName;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Sends the spans of `rx` until every sender is gone, then sends what is left.
pub(crate) async fn run(config: Arc<Config>, mut rx: mpsc::Receiver<SpanData>) {
    let mut batch = Vec::new();
    let mut tick = tokio::time::interval(config.schedule_delay);
    tick.tick().await;
    loop {
        tokio::select! {
            span = rx.recv() => match span {
                Some(span) => {
                    batch.push(span);
                    if batch.len() >= config.max_export_batch_size {
                        flush(&config, &mut batch).await;
                    }
                }
                None => {
                    flush(&config, &mut batch).await;
                    return;
                }
            },
            _ = tick.tick() => flush(&config, &mut batch).await,
        }
    }
}

async fn flush(config: &Config, batch: &mut Vec<SpanData>) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::take(batch);
    match tokio::time::timeout(config.timeout, send(config, &spans)).await {
        Ok(Ok(())) => tracing::debug!(spans = spans.len(), "exported spans"),
        Ok(Err(e)) => {
            tracing::warn!(endpoint = %config.endpoint, spans = spans.len(), error = %e, "cannot export spans")
        }
        Err(_) => {
            tracing::warn!(endpoint = %config.endpoint, spans = spans.len(), timeout = ?config.timeout, "exporting spans timed out")
        }
    }
}

async fn send(config: &Config, spans: &[SpanData]) -> Result<(), String> {
    let (body, content_type) = match config.protocol {
        Protocol::HttpProtobuf => (
            encode_protobuf(&config.resource, spans),
            "application/x-protobuf",
        ),
        Protocol::HttpJson => (encode_json(&config.resource, spans), "application/json"),
    };
    let uri: &Uri = &config.endpoint;
    let host = uri.host().unwrap_or("localhost").to_string();
    let https = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("connecting to {host}:{port}: {e}"))?;
    let mut request = Request::post(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(
            http::header::HOST,
            uri.authority().map_or(host.as_str(), |a| a.as_str()),
        )
        .header(http::header::CONTENT_TYPE, content_type);
    for (name, value) in &config.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("building the request: {e}"))?;
    match &config.tls {
        Some(tls) if https => {
            let name = ServerName::try_from(host.clone())
                .map_err(|e| format!("{host} is not a TLS server name: {e}"))?;
            let stream = tokio_rustls::TlsConnector::from(tls.clone())
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS with {host}: {e}"))?;
            post(stream, request).await
        }
        _ => post(tcp, request).await,
    }
}

async fn post<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    stream: S,
    request: Request<Full<Bytes>>,
) -> Result<(), String> {
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake: {e}"))?;
    tokio::spawn(connection);
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("sending: {e}"))?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    Err(format!(
        "the collector answered {status}: {}",
        String::from_utf8_lossy(&body[..body.len().min(300)])
    ))
}
