//! An extension: its registered handlers, its Discovery answer, and the dispatch of a
//! request body to the right handler (the part of the server that needs no socket).

use crate::duration::{format_seconds, parse_go_duration};
use crate::error::RequestError;
use crate::hooks::v1alpha1::{
    API_VERSION, DiscoveryResponse, ExtensionHandler, FailurePolicy, GroupVersionHook, Hook,
    HookRequest, HookResponse, IntoHookResponse, ResponseStatus,
};
use capi_ext_codegen::catalog::{self, HookInfo};
use capi_ext_codegen::naming;
use capi_ext_codegen::version::CapiVersion;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// CAPI's timeout when a handler does not advertise one.
pub const DEFAULT_TIMEOUT_SECONDS: i32 = 10;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The encoded answer of a handler and its status.
type Encoded = Result<(Vec<u8>, ResponseStatus), String>;

/// A decoded request, ready to run.
struct Prepared {
    subject: Option<String>,
    run: BoxFuture<Encoded>,
    failure: fn(String) -> Encoded,
}

trait ErasedHandler: Send + Sync {
    fn prepare(&self, body: &[u8]) -> Result<Prepared, RequestError>;
}

struct TypedHandler<H, F> {
    hook: H,
    func: F,
    /// The size of this handler's last answer: the next one is written into a buffer of about
    /// that size, so encoding does not grow it step by step.
    last_size: Arc<AtomicUsize>,
}

/// The smallest buffer an answer is written into.
const MIN_RESPONSE_BUFFER: usize = 256;
/// The largest buffer reserved up front, whatever the last answer was.
const MAX_RESPONSE_BUFFER: usize = 4 << 20;

/// Encodes `response` into a buffer sized after the handler's previous answer (`last_size`).
///
/// Growing the buffer as it fills costs a reallocation per doubling, and each of those, right
/// after the request's thousands of small allocations were freed, makes the allocator
/// consolidate them: about 6% of a GeneratePatches call's CPU, found by profiling the server.
fn encode<R: HookResponse>(response: R, last_size: &AtomicUsize) -> Encoded {
    let status = response.status();
    let hint = last_size
        .load(Ordering::Relaxed)
        .clamp(MIN_RESPONSE_BUFFER, MAX_RESPONSE_BUFFER);
    let mut body = Vec::with_capacity(hint + hint / 8);
    serde_json::to_writer(&mut body, &response).map_err(|e| e.to_string())?;
    last_size.store(body.len(), Ordering::Relaxed);
    Ok((body, status))
}

/// Decodes a request body into a hook's request type, checking `apiVersion` and `kind`.
pub(crate) fn decode_request<H: Hook>(body: &[u8]) -> Result<H::Request, RequestError> {
    let info = H::info();
    let bad = |message: String| RequestError::BadRequest {
        kind: info.request_kind,
        message,
    };
    // One UTF-8 check of the whole body, then a parser that checks no string again: serde_json's
    // byte-slice reader validates every string it meets, about 5% of a large request's decoding.
    let text = std::str::from_utf8(body).map_err(|e| {
        bad(format!(
            "the body is not UTF-8 (invalid bytes at offset {}); CAPI sends JSON in UTF-8",
            e.valid_up_to()
        ))
    })?;
    let request: H::Request = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if !request.api_version().is_empty() && request.api_version() != API_VERSION {
        return Err(bad(format!(
            "apiVersion is `{}`, expected `{API_VERSION}`",
            request.api_version()
        )));
    }
    if !request.kind().is_empty() && request.kind() != info.request_kind {
        return Err(bad(format!(
            "kind is `{}`, expected `{}` (is the request sent to the right path?)",
            request.kind(),
            info.request_kind
        )));
    }
    Ok(request)
}

impl<H, F, Fut, R> ErasedHandler for TypedHandler<H, F>
where
    H: Hook,
    F: Fn(H::Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoHookResponse<H::Response> + 'static,
{
    fn prepare(&self, body: &[u8]) -> Result<Prepared, RequestError> {
        let _ = self.hook;
        let request = decode_request::<H>(body)?;
        let subject = request.subject();
        let fut = (self.func)(request);
        let last_size = self.last_size.clone();
        Ok(Prepared {
            subject,
            run: Box::pin(async move { encode(fut.await.into_hook_response(), &last_size) }),
            failure: |message| encode(H::Response::failure(message), &AtomicUsize::new(0)),
        })
    }
}

/// One handler to register: the hook it implements, its name, and how CAPI should call it.
///
/// ```
/// use capi_ext::hooks::v1alpha1::*;
/// use capi_ext::{Extension, Registration};
///
/// async fn before_create(_req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
///     BeforeClusterCreateResponse::success()
/// }
///
/// let extension = Extension::builder()
///     .handler(Registration::new(BeforeClusterCreate, "before-cluster-create", before_create).timeout_seconds(5))
///     .build()
///     .unwrap();
/// assert_eq!(extension.handlers().len(), 1);
/// ```
pub struct Registration {
    hook: &'static HookInfo,
    name: String,
    timeout_seconds: Option<i64>,
    failure_policy: FailurePolicy,
    handler: Arc<dyn ErasedHandler>,
}

impl Registration {
    /// A handler `func` for `hook`, named `name` (a DNS-1123 label). `func` is an async
    /// function taking the hook's request and returning its response, or a `Result` whose
    /// error becomes a `Failure` response.
    pub fn new<H, F, Fut, R>(hook: H, name: impl Into<String>, func: F) -> Self
    where
        H: Hook,
        F: Fn(H::Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoHookResponse<H::Response> + 'static,
    {
        Registration {
            hook: H::info(),
            name: name.into(),
            timeout_seconds: None,
            failure_policy: FailurePolicy::Fail,
            handler: Arc::new(TypedHandler {
                hook,
                func,
                last_size: Arc::default(),
            }),
        }
    }

    /// How long CAPI waits for this handler (0..=30 seconds; default 10).
    pub fn timeout_seconds(mut self, seconds: i64) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }

    /// What CAPI does when calling this handler fails at the transport level (default `Fail`).
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }
}

/// A handler made by `#[hook(...)]`: the generated type of the function's name implements it.
pub trait HookHandler {
    /// The handler's registration.
    fn registration() -> Registration;
}

/// Every problem found in a set of registrations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistrationError {
    /// One line per problem, naming the handler and hook.
    pub problems: Vec<String>,
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid handler registrations:")?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistrationError {}

/// Collects registrations; [`ExtensionBuilder::build`] checks them all at once.
pub struct ExtensionBuilder {
    registrations: Vec<Registration>,
    target: CapiVersion,
}

impl ExtensionBuilder {
    /// Adds a handler.
    pub fn handler(mut self, registration: Registration) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Adds a handler declared with `#[hook(...)]`: `.register::<before_create>()`.
    pub fn register<H: HookHandler>(self) -> Self {
        self.handler(H::registration())
    }

    /// Answers DiscoverVariables with handler `name` from a `#[derive(Variables)]` type.
    pub fn variables<V: crate::schema::Variables>(self, name: &str) -> Self {
        let definitions = V::definitions();
        self.handler(Registration::new(
            crate::hooks::v1alpha1::DiscoverVariables,
            name,
            move |_req| {
                let variables = definitions.clone();
                async move {
                    crate::hooks::v1alpha1::DiscoverVariablesResponse {
                        variables,
                        ..crate::hooks::v1alpha1::DiscoverVariablesResponse::success()
                    }
                }
            },
        ))
    }

    /// The Cluster API version the extension targets (default 1.14): handlers of hooks that
    /// version does not know are neither advertised nor served, because one unknown hook
    /// fails the Discovery of the whole extension.
    pub fn target(mut self, version: CapiVersion) -> Self {
        self.target = version;
        self
    }

    /// Checks the registrations (DNS-1123 names, unique names, timeouts in 0..=30, no
    /// Discovery handler) and builds the extension. All problems are reported together.
    pub fn build(self) -> Result<Extension, RegistrationError> {
        let mut problems = Vec::new();
        let mut routes = HashMap::new();
        let mut handlers = Vec::new();
        let mut skipped = Vec::new();
        let mut seen = HashMap::<String, &'static str>::new();
        for reg in self.registrations {
            let what = format!("handler `{}` ({})", reg.name, reg.hook.name);
            if reg.hook.singleton {
                problems.push(format!("{what}: Discovery is answered by the runtime from the registrations; do not register it"));
                continue;
            }
            if let Err(e) = naming::validate_dns_label(&reg.name) {
                problems.push(format!("{what}: {e}"));
            }
            if let Some(previous) = seen.insert(reg.name.clone(), reg.hook.name) {
                problems.push(format!(
                    "{what}: the name is already used by a {previous} handler; handler names must be unique within an extension"
                ));
            }
            let timeout = match reg
                .timeout_seconds
                .map(naming::validate_timeout)
                .transpose()
            {
                Ok(t) => t.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
                Err(e) => {
                    problems.push(format!("{what}: {e}"));
                    continue;
                }
            };
            if !reg.hook.known_by(self.target) {
                skipped.push(format!(
                    "{what}: {} was introduced in Cluster API {}, the extension targets {}; not advertised",
                    reg.hook.name, reg.hook.since, self.target
                ));
                continue;
            }
            handlers.push(ExtensionHandler {
                name: reg.name.clone(),
                request_hook: GroupVersionHook {
                    api_version: API_VERSION.to_string(),
                    hook: reg.hook.name.to_string(),
                },
                timeout_seconds: Some(timeout),
                failure_policy: Some(reg.failure_policy),
            });
            let effective_timeout = if timeout == 0 {
                DEFAULT_TIMEOUT_SECONDS
            } else {
                timeout
            };
            routes.insert(
                reg.hook.path(&reg.name),
                Route {
                    hook: reg.hook,
                    name: reg.name,
                    timeout: Duration::from_secs(effective_timeout as u64),
                    handler: reg.handler,
                },
            );
        }
        if !problems.is_empty() {
            return Err(RegistrationError { problems });
        }
        for s in &skipped {
            tracing::warn!("{s}");
        }
        let discovery = DiscoveryResponse {
            handlers: handlers.clone(),
            ..DiscoveryResponse::success()
        };
        let discovery_body = serde_json::to_vec(&discovery).expect("discovery always serializes");
        Ok(Extension {
            inner: Arc::new(Inner {
                routes,
                handlers,
                skipped,
                discovery_body,
                target: self.target,
            }),
        })
    }
}

struct Route {
    hook: &'static HookInfo,
    name: String,
    timeout: Duration,
    handler: Arc<dyn ErasedHandler>,
}

struct Inner {
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
        let task = tokio::spawn(prepared.run);
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
