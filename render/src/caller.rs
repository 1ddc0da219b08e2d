//! The seam between render and the extension: [`Caller`] posts one hook request, and
//! [`CallError`] says, as a value, why no usable answer came.

use std::future::Future;

/// Sends one hook request to the extension.
pub trait Caller {
    /// Posts `body` to `path` (e.g. `/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/patches`)
    /// and returns the response body, or why no usable answer came.
    fn call(&self, path: &str, body: Vec<u8>) -> impl Future<Output = Result<Vec<u8>, CallError>>;

    /// Posts `body` to `path` of the ExtensionConfig `extension_config`: the name after the dot
    /// in the ClusterClass's `<handler>.<ExtensionConfig>` (empty when there is none). A
    /// ClusterClass may take its patches from one extension and its upgrade plan from another;
    /// render calls every hook through this. By default every ExtensionConfig is this caller
    /// ([`Caller::call`]); a caller that reaches several extensions routes by the name.
    fn call_extension(
        &self,
        extension_config: &str,
        path: &str,
        body: Vec<u8>,
    ) -> impl Future<Output = Result<Vec<u8>, CallError>> {
        let _ = extension_config;
        self.call(path, body)
    }
}

/// Why a call brought no answer CAPI could use. Callers decide by the variant (a handler that
/// is not served is [`CallError::Status`] with 404), never by the text.
///
/// ```
/// use capi_ext_render::CallError;
/// let missing = CallError::Status { status: 404, body: "no handler `patches`".into() };
/// assert!(missing.is_not_served());
/// assert_eq!(missing.to_string(), "HTTP 404 (CAPI only reads 200 answers): no handler `patches`");
/// assert!(!CallError::Transport("connection refused".into()).is_not_served());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The extension answered with a status other than 200, which CAPI treats as a failed call.
    #[error("HTTP {status} (CAPI only reads 200 answers): {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The answer's body, as text.
        body: String,
    },
    /// No answer came: the connection, TLS or the deadline failed.
    #[error("{0}")]
    Transport(String),
    /// An answer came that CAPI cannot read as the hook's response (or the request could not be
    /// encoded).
    #[error("{0}")]
    Unreadable(String),
}

impl CallError {
    /// The extension does not serve the path: the handler (or hook) is unknown to it.
    pub fn is_not_served(&self) -> bool {
        matches!(self, CallError::Status { status: 404, .. })
    }
}

/// The caller of a ClusterClass that calls no extension (inline patches only, as CAPI's
/// quick-start): any call is a transport error that says so.
///
/// ```
/// use capi_ext_render::{Caller, NoExtension};
/// let err = futures_lite_block_on(NoExtension.call("/x", Vec::new())).unwrap_err();
/// assert!(err.to_string().contains("no extension"));
/// # fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExtension;

impl Caller for NoExtension {
    async fn call(&self, path: &str, _body: Vec<u8>) -> Result<Vec<u8>, CallError> {
        Err(CallError::Transport(format!(
            "no extension was given, and the render needed {path}: give --url and --ca, or --project"
        )))
    }
}

#[cfg(feature = "server")]
impl Caller for capi_ext::Extension {
    async fn call(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>, CallError> {
        let reply = self.dispatch(path, None, &body).await;
        if reply.status == http::StatusCode::OK {
            Ok(reply.body)
        } else {
            Err(CallError::Status {
                status: reply.status.as_u16(),
                body: String::from_utf8_lossy(&reply.body).trim().to_string(),
            })
        }
    }
}
