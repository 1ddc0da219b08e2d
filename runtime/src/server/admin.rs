//! The plain-HTTP listeners for operators: `/metrics`, `/healthz` and `/readyz`.

use super::metrics::Metrics;
use bytes_body::full;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::net::TcpListener;

pub(crate) mod bytes_body {
    use http_body_util::Full;
    use hyper::body::Bytes;

    /// A complete response body.
    pub fn full(data: impl Into<Bytes>) -> Full<Bytes> {
        Full::new(data.into())
    }
}

/// What the admin endpoints report.
pub struct AdminState {
    /// Metrics to expose.
    pub metrics: Arc<Metrics>,
    /// True once the hook listener serves and until shutdown begins.
    pub ready: AtomicBool,
}

fn answer(
    state: &AdminState,
    path: &str,
    serve_metrics: bool,
    serve_probes: bool,
) -> Response<http_body_util::Full<hyper::body::Bytes>> {
    let (code, body, content_type) = match path {
        "/metrics" if serve_metrics => (
            StatusCode::OK,
            state.metrics.encode(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        ),
        "/healthz" if serve_probes => (StatusCode::OK, "ok".to_string(), "text/plain"),
        "/readyz" if serve_probes => {
            if state.ready.load(Ordering::SeqCst) {
                (StatusCode::OK, "ok".to_string(), "text/plain")
            } else {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not ready: starting or shutting down".to_string(),
                    "text/plain",
                )
            }
        }
        _ => (
            StatusCode::NOT_FOUND,
            format!("no endpoint at {path}"),
            "text/plain",
        ),
    };
    Response::builder()
        .status(code)
        .header("content-type", content_type)
        .body(full(body))
        .expect("valid response")
}

/// Serves the admin endpoints on `listener` until the task is dropped.
pub async fn serve(
    listener: TcpListener,
    state: Arc<AdminState>,
    serve_metrics: bool,
    serve_probes: bool,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let response = answer(&state, req.uri().path(), serve_metrics, serve_probes);
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
