//! An extension: its registered handlers, its Discovery answer, and the dispatch of a
//! request body to the right handler (the part of the server that needs no socket).

mod builder;
mod registration;
mod state;

pub use builder::{ExtensionBuilder, RegistrationError};
pub(crate) use registration::decode_request;
pub use registration::{HookHandler, Registration};
pub use state::{FromRef, State};

use crate::duration::{format_seconds, parse_go_duration};
use crate::error::RequestError;
use crate::hooks::v1alpha1::{DiscoveryResponse, ExtensionHandler, Hook, ResponseStatus};
use capi_ext_codegen::catalog::{self, HookInfo};
use capi_ext_codegen::version::CapiVersion;
use registration::ErasedHandler;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// CAPI's timeout when a handler does not advertise one.
pub const DEFAULT_TIMEOUT_SECONDS: i32 = 10;

pub(super) struct Route {
    hook: &'static HookInfo,
    name: String,
    timeout: Duration,
    handler: Arc<dyn ErasedHandler>,
}

pub(super) struct Inner {
    routes: HashMap<String, Route>,
    handlers: Vec<ExtensionHandler>,
    skipped: Vec<String>,
    discovery_body: Vec<u8>,
    target: CapiVersion,
}

/// A set of validated handlers, ready to serve. Cheap to clone.
#[derive(Clone)]
pub struct Extension {
    inner: Arc<Inner>,
}

/// The answer to one request, with what metrics and logs need to know about it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: http::StatusCode,
    /// JSON body.
    pub body: Vec<u8>,
    /// The hook name (`unknown` when the path matched none).
    pub hook: &'static str,
    /// The handler name (empty for Discovery and unknown paths).
    pub handler: String,
    /// The response status, when a hook response was produced.
    pub outcome: Option<ResponseStatus>,
    /// `namespace/name` of the object the call was about.
    pub subject: Option<String>,
}

impl Reply {
    pub(crate) fn error(err: RequestError, hook: Option<&'static HookInfo>, handler: &str) -> Self {
        Reply {
            status: err.status_code(),
            body: err.body(hook.map(|h| h.response_kind)),
            hook: hook.map_or("unknown", |h| h.name),
            handler: handler.to_string(),
            outcome: None,
            subject: None,
        }
    }
}

impl Extension {
    /// Starts a builder.
    pub fn builder() -> ExtensionBuilder {
        ExtensionBuilder {
            registrations: Vec::new(),
            target: CapiVersion::DEFAULT,
            state: (),
        }
    }

    /// The handlers advertised in Discovery, in registration order.
    pub fn handlers(&self) -> &[ExtensionHandler] {
        &self.inner.handlers
    }

    /// Registrations left out because the target CAPI version does not know their hook.
    pub fn skipped(&self) -> &[String] {
        &self.inner.skipped
    }

    /// The targeted Cluster API version.
    pub fn target(&self) -> CapiVersion {
        self.inner.target
    }

    /// The Discovery response body, as served.
    pub fn discovery_body(&self) -> &[u8] {
        &self.inner.discovery_body
    }

    /// Answers a request: `path` without any prefix or query, `query` as received (only
    /// `timeout=` is read), `body` the raw request body. Never fails: every problem has an
    /// HTTP shape. Must run inside a Tokio runtime (handlers run on their own task so that
    /// a panic or a missed deadline answers `Failure` without harming the server).
    pub async fn dispatch(&self, path: &str, query: Option<&str>, body: &[u8]) -> Reply {
        let discovery = catalog::find("Discovery").expect("Discovery is in the catalog");
        if path == discovery.path("") {
            if let Err(err) =
                decode_request::<crate::hooks::v1alpha1::Discovery>(if body.is_empty() {
                    b"{}"
                } else {
                    body
                })
            {
                return Reply::error(err, Some(discovery), "");
            }
            return Reply {
                status: http::StatusCode::OK,
                body: self.inner.discovery_body.clone(),
                hook: discovery.name,
                handler: String::new(),
                outcome: Some(ResponseStatus::Success),
                subject: None,
            };
        }
        let Some(route) = self.inner.routes.get(path) else {
            return Reply::error(self.not_found(path), None, "");
        };
        let prepared = match route.handler.prepare(body) {
            Ok(p) => p,
            Err(err) => return Reply::error(err, Some(route.hook), &route.name),
        };
        let deadline = query.and_then(timeout_param).unwrap_or(route.timeout);
        // In the caller's span: the handler's own spans are its children (and, traced, the
        // hook call's in OpenTelemetry).
        let task = tokio::spawn(tracing::Instrument::in_current_span(prepared.run));
        let abort = task.abort_handle();
        let encoded = match tokio::time::timeout(deadline, task).await {
            Ok(Ok(encoded)) => encoded,
            Ok(Err(join)) => {
                let panic = join
                    .try_into_panic()
                    .ok()
                    .map(|p| panic_message(&*p))
                    .unwrap_or_else(|| "cancelled".into());
                tracing::error!(hook = route.hook.name, handler = %route.name, panic = %panic, "handler panicked");
                (prepared.failure)(format!("handler {} panicked: {panic}", route.name))
            }
            Err(_) => {
                abort.abort();
                tracing::warn!(hook = route.hook.name, handler = %route.name, "handler missed its deadline");
                (prepared.failure)(format!(
                    "handler {} did not answer within {}",
                    route.name,
                    format_seconds(deadline)
                ))
            }
        };
        match encoded {
            Ok((body, outcome)) => Reply {
                status: http::StatusCode::OK,
                body,
                hook: route.hook.name,
                handler: route.name.clone(),
                outcome: Some(outcome),
                subject: prepared.subject,
            },
            Err(e) => Reply::error(RequestError::Internal(e), Some(route.hook), &route.name),
        }
    }

    fn not_found(&self, path: &str) -> RequestError {
        let mut known: Vec<&str> = self.inner.routes.keys().map(String::as_str).collect();
        known.sort_unstable();
        let discovery = catalog::find("Discovery")
            .expect("Discovery is in the catalog")
            .path("");
        known.insert(0, &discovery);
        RequestError::NotFound {
            path: path.to_string(),
            known: known.join(", "),
        }
    }

    /// Calls a handler in-process through the same decode → handle → encode path the server
    /// uses, for unit tests.
    ///
    /// ```
    /// use capi_ext::hooks::v1alpha1::*;
    /// use capi_ext::{Extension, Registration};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let extension = Extension::builder()
    ///     .handler(Registration::new(BeforeClusterDelete, "hold", |_req: BeforeClusterDeleteRequest| async {
    ///         BeforeClusterDeleteResponse::success().retry_after(10)
    ///     }))
    ///     .build()
    ///     .unwrap();
    /// let response = extension.call(BeforeClusterDelete, "hold", &BeforeClusterDeleteRequest::new()).await.unwrap();
    /// assert_eq!(response.retry_after_seconds, 10);
    /// # }
    /// ```
    pub async fn call<H: Hook>(
        &self,
        hook: H,
        handler: &str,
        request: &H::Request,
    ) -> Result<H::Response, CallError> {
        let _ = hook;
        let body = serde_json::to_vec(request).map_err(|e| CallError::Encode(e.to_string()))?;
        let reply = self.dispatch(&H::info().path(handler), None, &body).await;
        if reply.status != http::StatusCode::OK {
            return Err(CallError::Status(
                reply.status.as_u16(),
                String::from_utf8_lossy(&reply.body).into_owned(),
            ));
        }
        serde_json::from_slice(&reply.body).map_err(|e| CallError::Decode(e.to_string()))
    }

    /// The Discovery response, decoded, as CAPI would receive it.
    pub async fn discover(&self) -> DiscoveryResponse {
        serde_json::from_slice(&self.inner.discovery_body)
            .expect("the discovery body is a DiscoveryResponse")
    }
}

/// Why an in-process [`Extension::call`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The request could not be encoded.
    #[error("cannot encode the request: {0}")]
    Encode(String),
    /// The server answered with a non-200 status.
    #[error("the extension answered HTTP {0}: {1}")]
    Status(u16, String),
    /// The response is not a valid response of the hook.
    #[error("cannot decode the response: {0}")]
    Decode(String),
}

fn timeout_param(query: &str) -> Option<Duration> {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("timeout="))
        .and_then(|v| parse_go_duration(&v.replace("%C2%B5", "µ")))
        .filter(|d| !d.is_zero())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::v1alpha1::*;

    async fn ok(_: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
        BeforeClusterCreateResponse::success()
    }

    #[test]
    fn reports_every_registration_problem_at_once() {
        let err = Extension::builder()
            .handler(Registration::new(BeforeClusterCreate, "Bad_Name", ok))
            .handler(Registration::new(BeforeClusterCreate, "dup", ok))
            .handler(Registration::new(BeforeClusterCreate, "dup", ok))
            .handler(Registration::new(BeforeClusterCreate, "slow", ok).timeout_seconds(31))
            .build()
            .err()
            .unwrap();
        assert_eq!(err.problems.len(), 3, "{err}");
        let text = err.to_string();
        assert!(text.contains("handler `Bad_Name` (BeforeClusterCreate): handler name `Bad_Name` is not a DNS-1123 label"), "{text}");
        assert!(
            text.contains("handler `dup` (BeforeClusterCreate): the name is already used"),
            "{text}"
        );
        assert!(
            text.contains("handler `slow` (BeforeClusterCreate): timeout of 31 seconds"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_body_that_is_not_utf8_is_a_bad_request_naming_the_offset() {
        let ext = Extension::builder()
            .handler(Registration::new(BeforeClusterCreate, "create", ok))
            .build()
            .unwrap();
        let path = BeforeClusterCreate::info().path("create");
        let reply = ext
            .dispatch(
                &path,
                None,
                b"{\"kind\":\"BeforeClusterCreateRequest\",\"x\":\"\xff\"}",
            )
            .await;
        assert_eq!(reply.status, 400);
        let body = String::from_utf8(reply.body).unwrap();
        assert!(
            body.contains("the body is not UTF-8 (invalid bytes at offset 42)"),
            "{body}"
        );
    }

    #[tokio::test]
    async fn answers_are_the_same_whatever_the_size_of_the_previous_one() {
        async fn echo(req: GeneratePatchesRequest) -> GeneratePatchesResponse {
            req.items
                .iter()
                .fold(GeneratePatchesResponse::success(), |r, item| {
                    r.patch(item.uid.clone(), Patch::json().add("/spec/x", "y"))
                })
        }
        let ext = Extension::builder()
            .handler(Registration::new(GeneratePatches, "p", echo))
            .build()
            .unwrap();
        let path = GeneratePatches::info().path("p");
        let body = |n: usize| {
            let items: Vec<_> = (0..n)
                .map(|i| serde_json::json!({"uid": format!("u{i}"), "object": {}}))
                .collect();
            serde_json::to_vec(&serde_json::json!({"items": items})).unwrap()
        };
        // A large answer, then a small one, then a large one again: the buffer hint follows
        // the last answer, and every answer is whole.
        let mut answers = Vec::new();
        for n in [200, 1, 200] {
            let reply = ext.dispatch(&path, None, &body(n)).await;
            assert_eq!(reply.status, 200);
            let answer: GeneratePatchesResponse = serde_json::from_slice(&reply.body).unwrap();
            assert_eq!(answer.items.len(), n);
            answers.push(reply.body);
        }
        assert_eq!(answers[0], answers[2]);
    }

    #[test]
    fn discovery_is_not_registrable() {
        let err = Extension::builder()
            .handler(Registration::new(
                Discovery,
                "d",
                |_: DiscoveryRequest| async { DiscoveryResponse::success() },
            ))
            .build()
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .contains("Discovery is answered by the runtime")
        );
    }

    #[tokio::test]
    async fn target_version_limits_advertised_hooks() {
        let ext = Extension::builder()
            .target(CapiVersion::new(1, 11))
            .handler(Registration::new(BeforeClusterCreate, "create", ok))
            .handler(Registration::new(
                UpdateMachine,
                "update",
                |_: UpdateMachineRequest| async { UpdateMachineResponse::success() },
            ))
            .build()
            .unwrap();
        let discovery = ext.discover().await;
        assert_eq!(discovery.handlers.len(), 1);
        assert_eq!(discovery.handlers[0].name, "create");
        assert!(
            ext.skipped()[0].contains("introduced in Cluster API 1.12"),
            "{:?}",
            ext.skipped()
        );
        let reply = ext
            .dispatch(
                "/hooks.runtime.cluster.x-k8s.io/v1alpha1/updatemachine/update",
                None,
                b"{}",
            )
            .await;
        assert_eq!(reply.status, 404);
    }

    #[test]
    fn timeout_query() {
        assert_eq!(timeout_param("timeout=10s"), Some(Duration::from_secs(10)));
        assert_eq!(
            timeout_param("a=b&timeout=1m"),
            Some(Duration::from_secs(60))
        );
        assert_eq!(timeout_param("timeout=0s"), None);
        assert_eq!(timeout_param("timeout=bogus"), None);
    }
}
