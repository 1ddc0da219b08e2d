//! One handler to register ([`Registration`]): the hook, the name, how CAPI calls it, and the
//! handler behind a type-erased seam that decodes the request, runs it and encodes the answer.

use super::state::{FromRef, State};
use crate::error::RequestError;
use crate::gates::Gates;
use crate::hooks::v1alpha1::{
    API_VERSION, FailurePolicy, GeneratePatches, GeneratePatchesRequest, Hook, HookRequest,
    HookResponse, IntoHookResponse, ResponseStatus, RetryResponse,
};
use crate::patches::PatchSet;
use capi_ext_codegen::catalog::HookInfo;
use serde::de::DeserializeOwned;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The encoded answer of a handler and its status.
pub(super) type Encoded = Result<(Vec<u8>, ResponseStatus), String>;

/// A decoded request, ready to run.
pub(super) struct Prepared {
    pub(super) subject: Option<String>,
    pub(super) run: BoxFuture<Encoded>,
    pub(super) failure: fn(String) -> Encoded,
}

/// A handler with its state, behind the seam the dispatcher calls.
pub(super) trait ErasedHandler: Send + Sync {
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

fn erase<H, F, Fut, R>(hook: H, func: F) -> Arc<dyn ErasedHandler>
where
    H: Hook,
    F: Fn(H::Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoHookResponse<H::Response> + 'static,
{
    Arc::new(TypedHandler {
        hook,
        func,
        last_size: Arc::default(),
    })
}

/// Makes the handler once the extension's state is known (when the extension is built).
type Bind<S> = Box<dyn FnOnce(&S) -> Arc<dyn ErasedHandler> + Send>;

/// One handler to register: the hook it implements, its name, and how CAPI should call it.
/// `S` is the extension's state ([`ExtensionBuilder::state`](crate::ExtensionBuilder::state));
/// handlers that take none fit any.
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
pub struct Registration<S = ()> {
    pub(super) hook: &'static HookInfo,
    pub(super) name: String,
    pub(super) timeout_seconds: Option<i64>,
    pub(super) failure_policy: FailurePolicy,
    pub(super) bind: Bind<S>,
}

impl<S: 'static> Registration<S> {
    fn with_bind(hook: &'static HookInfo, name: String, bind: Bind<S>) -> Self {
        Registration {
            hook,
            name,
            timeout_seconds: None,
            failure_policy: FailurePolicy::Fail,
            bind,
        }
    }

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
        Self::with_bind(
            H::info(),
            name.into(),
            Box::new(move |_: &S| erase(hook, func)),
        )
    }

    /// A handler that also takes the extension's state, or a part of it ([`FromRef`]), as
    /// its first argument: `async fn(State<T>, Request) -> Response`. What `#[hook]` makes of
    /// a function whose first argument is a `State<T>`.
    ///
    /// ```
    /// use capi_ext::hooks::v1alpha1::*;
    /// use capi_ext::{Extension, Registration, State};
    ///
    /// async fn create(State(limit): State<usize>, req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    ///     if req.cluster.metadata.name.len() > limit {
    ///         return BeforeClusterCreateResponse::failure("name too long");
    ///     }
    ///     BeforeClusterCreateResponse::success()
    /// }
    ///
    /// let extension = Extension::builder()
    ///     .state(40_usize)
    ///     .handler(Registration::with_state(BeforeClusterCreate, "create", create))
    ///     .build()
    ///     .unwrap();
    /// # let _ = extension;
    /// ```
    pub fn with_state<H, T, F, Fut, R>(hook: H, name: impl Into<String>, func: F) -> Self
    where
        H: Hook,
        T: FromRef<S> + Clone + Send + Sync + 'static,
        F: Fn(State<T>, H::Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoHookResponse<H::Response> + 'static,
    {
        Self::with_bind(
            H::info(),
            name.into(),
            Box::new(move |state: &S| {
                let part = T::from_ref(state);
                erase(hook, move |request| func(State(part.clone()), request))
            }),
        )
    }

    /// A GeneratePatches handler answered by a [`PatchSet`], built and checked once (its
    /// checks ran as it was built) and shared by every call.
    ///
    /// ```
    /// use capi_ext::patches::{NamedPatch, PatchSet, Selector};
    /// use capi_ext::{Extension, Registration};
    ///
    /// let set: PatchSet<serde_json::Value> = PatchSet::new().patch(NamedPatch::new(
    ///     "label",
    ///     Selector::infrastructure_cluster(),
    ///     |template, _ctx| Ok(template.set("/spec/template/metadata/labels/x", "y")?),
    /// ));
    /// let extension = Extension::builder()
    ///     .handler(Registration::patches("patches", set).timeout_seconds(5))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(extension.handlers()[0].request_hook.hook, "GeneratePatches");
    /// ```
    pub fn patches<V>(name: impl Into<String>, set: PatchSet<V>) -> Self
    where
        V: DeserializeOwned + Send + Sync + 'static,
    {
        let set = Arc::new(set);
        Self::new(
            GeneratePatches,
            name,
            move |request: GeneratePatchesRequest| {
                let set = set.clone();
                async move { set.generate(&request) }
            },
        )
    }

    /// A blocking lifecycle handler answered by [`Gates`], built once and shared by every call.
    ///
    /// ```
    /// use capi_ext::gates::Gates;
    /// use capi_ext::hooks::v1alpha1::*;
    /// use capi_ext::{Extension, Registration};
    ///
    /// async fn approval(_req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    ///     BeforeClusterCreateResponse::success().retry_after(30).with_message("waiting")
    /// }
    ///
    /// let gates = Gates::new().gate("approval", approval);
    /// let extension = Extension::builder()
    ///     .handler(Registration::gates(BeforeClusterCreate, "hold", gates))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(extension.handlers()[0].name, "hold");
    /// ```
    pub fn gates<H>(hook: H, name: impl Into<String>, gates: Gates<H::Request, H::Response>) -> Self
    where
        H: Hook,
        H::Request: Clone + Send + Sync + 'static,
        H::Response: RetryResponse + IntoHookResponse<H::Response> + Send + 'static,
    {
        let gates = Arc::new(gates);
        Self::new(hook, name, move |request: H::Request| {
            let gates = gates.clone();
            async move { gates.run(request).await }
        })
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

impl Registration<()> {
    /// The same handler, for an extension whose state is `S` (a handler without state fits
    /// any).
    pub(super) fn for_state<S: 'static>(self) -> Registration<S> {
        let bind = self.bind;
        Registration {
            hook: self.hook,
            name: self.name,
            timeout_seconds: self.timeout_seconds,
            failure_policy: self.failure_policy,
            bind: Box::new(move |_: &S| bind(&())),
        }
    }
}

/// A handler made by `#[hook(...)]`: the generated type of the function's name implements it,
/// for every state `S` the handler's `State<T>` can be taken from.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be registered on an extension whose state is `{S}`",
    note = "`#[hook]` functions implement `HookHandler`; one that takes `State<T>` needs the builder's state to be `T` or to hold it (`FromRef`): `Extension::builder().state(value)`"
)]
pub trait HookHandler<S = ()> {
    /// The handler's registration.
    fn registration() -> Registration<S>;
}
