//! Errors that reach the wire, each knowing its HTTP shape.
//!
//! Application-level outcomes (a handler's error, a panic, a missed deadline) are not
//! errors here: they become HTTP 200 with `status: Failure`, which CAPI never ignores.
//! These errors are for requests that cannot be served at all.

use crate::hooks::v1alpha1::API_VERSION;
use http::StatusCode;

/// A request that could not be served, with the HTTP status a client expects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// No handler at this path.
    #[error(
        "no handler is registered at {path}: expected /hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook>/<handler> (known: {known})"
    )]
    NotFound {
        /// The request path.
        path: String,
        /// The registered paths, comma-separated.
        known: String,
    },
    /// Only POST is served.
    #[error("method {method} is not allowed: Runtime SDK hooks are called with POST")]
    MethodNotAllowed {
        /// The request method.
        method: String,
    },
    /// The body is not a valid request of the hook.
    #[error("error unmarshalling {kind}: {message}")]
    BadRequest {
        /// The expected request kind.
        kind: &'static str,
        /// What was wrong, with line and column when the JSON is malformed.
        message: String,
    },
    /// The body is larger than the configured limit.
    #[error(
        "request body is larger than the limit of {limit} bytes (raise it with --max-request-body-bytes)"
    )]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The client did not send the body in time.
    #[error("request body was not received within {seconds}s")]
    Timeout {
        /// The read timeout.
        seconds: u64,
    },
    /// The request alone needs more of the memory budget than there is.
    #[error(
        "this request needs {} MiB of the server's memory budget of {} MiB (a request is charged three times its body); raise --max-in-flight-body-bytes or the container's memory limit",
        .needed >> 20, .budget >> 20
    )]
    OverBudget {
        /// What the request is charged, in bytes.
        needed: usize,
        /// The whole budget, in bytes.
        budget: usize,
    },
    /// The memory budget stayed full while the request waited.
    #[error(
        "the server's memory budget for requests in flight ({} MiB) stayed full for {seconds}s; CAPI calls again",
        .budget >> 20
    )]
    Busy {
        /// The whole budget, in bytes.
        budget: usize,
        /// How long the request waited.
        seconds: u64,
    },
    /// The handler's response could not be encoded.
    #[error("unable to marshal response: {0}")]
    Internal(String),
}

impl RequestError {
    /// The HTTP status of this error.
    pub fn status_code(&self) -> StatusCode {
        match self {
            RequestError::NotFound { .. } => StatusCode::NOT_FOUND,
            RequestError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            RequestError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            RequestError::PayloadTooLarge { .. } | RequestError::OverBudget { .. } => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            RequestError::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
            RequestError::Timeout { .. } => StatusCode::REQUEST_TIMEOUT,
            RequestError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The JSON body sent with this error: a `Failure` response carrying the message, so
    /// both a human and CAPI's decoder learn what went wrong.
    pub fn body(&self, response_kind: Option<&str>) -> Vec<u8> {
        let mut body = serde_json::json!({
            "apiVersion": API_VERSION,
            "status": "Failure",
            "message": self.to_string(),
        });
        if let Some(kind) = response_kind {
            body["kind"] = kind.into();
        }
        serde_json::to_vec(&body).expect("a JSON value always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let err = RequestError::PayloadTooLarge { limit: 10 };
        assert_eq!(err.status_code(), 413);
        let body: serde_json::Value =
            serde_json::from_slice(&err.body(Some("GeneratePatchesResponse"))).unwrap();
        assert_eq!(body["status"], "Failure");
        assert_eq!(body["kind"], "GeneratePatchesResponse");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("--max-request-body-bytes")
        );
        assert_eq!(
            RequestError::NotFound {
                path: "/x".into(),
                known: String::new()
            }
            .status_code(),
            404
        );
        assert_eq!(
            RequestError::BadRequest {
                kind: "K",
                message: "m".into()
            }
            .status_code(),
            400
        );
    }
}
