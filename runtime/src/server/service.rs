//! An [`Extension`] as a service of the caller's own HTTP server: tower's `Service` (axum,
//! tonic, tower middleware) and hyper's. It answers as the built-in server does (routing by
//! path after the prefix, `?timeout=`, POST only, the body limit, JSON errors with CAPI's
//! shape); TLS, connection hygiene, metrics, probes and the memory budget are then the caller's
//! server's.

use super::json_response;
use crate::Extension;
use crate::error::RequestError;
use http::{Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The service of an extension; see the [module](self). Cheap to clone.
///
/// ```
/// use capi_ext::hooks::v1alpha1::*;
/// use capi_ext::{Extension, Registration};
/// use capi_ext::server::tower_service::Service as _;
/// use http_body_util::{BodyExt, Full};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let extension = Extension::builder()
///     .handler(Registration::new(BeforeClusterCreate, "create", |_: BeforeClusterCreateRequest| async {
///         BeforeClusterCreateResponse::success()
///     }))
///     .build()
///     .unwrap();
/// let mut service = extension.service();
/// let request = http::Request::post("/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/create")
///     .body(Full::new(hyper::body::Bytes::from_static(b"{}")))
///     .unwrap();
/// let response = service.call(request).await.unwrap();
/// assert_eq!(response.status(), 200);
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// assert!(body.starts_with(br#"{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1""#));
/// # }
/// ```
#[derive(Clone)]
pub struct ExtensionService {
    extension: Extension,
    max_request_body_bytes: usize,
    path_prefix: String,
}

impl std::fmt::Debug for ExtensionService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionService")
            .field("handlers", &self.extension.handlers().len())
            .field("max_request_body_bytes", &self.max_request_body_bytes)
            .field("path_prefix", &self.path_prefix)
            .finish()
    }
}

impl Extension {
    /// The extension as a tower and hyper service, for a server of your own; see
    /// [`ExtensionService`].
    pub fn service(&self) -> ExtensionService {
        ExtensionService {
            extension: self.clone(),
            max_request_body_bytes: super::options::DEFAULT_MAX_REQUEST_BODY_BYTES,
            path_prefix: String::new(),
        }
    }
}

impl ExtensionService {
    /// The largest body accepted (default: the server's, 20 MiB): larger ones get HTTP 413.
    pub fn max_request_body_bytes(mut self, bytes: usize) -> Self {
        self.max_request_body_bytes = bytes;
        self
    }

    /// A path prefix stripped before routing (the ExtensionConfig's `service.path`).
    pub fn path_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.path_prefix = prefix.into().trim_end_matches('/').to_string();
        self
    }

    /// Answers one request.
    pub async fn answer<B>(&self, request: Request<B>) -> Response<Full<Bytes>>
    where
        B: hyper::body::Body,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let raw = request.uri().path();
        let path = raw
            .strip_prefix(self.path_prefix.as_str())
            .filter(|p| p.starts_with('/'))
            .unwrap_or(raw)
            .to_string();
        let query = request.uri().query().map(str::to_string);
        if request.method() != http::Method::POST {
            let err = RequestError::MethodNotAllowed {
                method: request.method().to_string(),
            };
            return json_response(err.status_code(), err.body(None));
        }
        let limit = self.max_request_body_bytes;
        let body = match Limited::new(request.into_body(), limit).collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) => {
                let err = if e
                    .downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    RequestError::PayloadTooLarge { limit }
                } else {
                    RequestError::BadRequest {
                        kind: "request",
                        message: format!("cannot read the body: {e}"),
                    }
                };
                return json_response(err.status_code(), err.body(None));
            }
        };
        let reply = self
            .extension
            .dispatch(&path, query.as_deref(), &body)
            .await;
        json_response(reply.status, reply.body)
    }
}

type Answer = Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send>>;

impl ExtensionService {
    /// [`ExtensionService::answer`] as both services' future.
    fn boxed<B>(&self, request: Request<B>) -> Answer
    where
        B: hyper::body::Body + Send + 'static,
        B::Data: Send,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let service = self.clone();
        Box::pin(async move { Ok(service.answer(request).await) })
    }
}

impl<B> tower_service::Service<Request<B>> for ExtensionService
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Answer {
        self.boxed(request)
    }
}

impl<B> hyper::service::Service<Request<B>> for ExtensionService
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, request: Request<B>) -> Answer {
        self.boxed(request)
    }
}
