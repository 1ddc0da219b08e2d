//! Lifecycle gates: several named checks answering one blocking hook (BeforeClusterCreate,
//! BeforeClusterUpgrade, BeforeClusterDelete…), run concurrently, their answers merged the way
//! CAPI reads one answer:
//!
//! - any `Failure` fails the call; the message names each failed gate;
//! - otherwise the smallest non-zero `retryAfterSeconds` wins (CAPI calls again at the first
//!   moment any gate may let go), with the messages of the holding gates;
//! - when every gate lets go, `Success` with `retryAfterSeconds: 0`.
//!
//! A gate has the shape of a handler (`async fn(Request) -> Response`), so a gate written
//! alone can be registered alone, and tested alone.
//!
//! ```
//! use capi_ext::gates::Gates;
//! use capi_ext::hooks::v1alpha1::*;
//!
//! async fn quota(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
//!     BeforeClusterCreateResponse::success()
//! }
//!
//! async fn approval(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
//!     if req.cluster.metadata.annotations.contains_key("example.com/approved") {
//!         return BeforeClusterCreateResponse::success();
//!     }
//!     BeforeClusterCreateResponse::success().retry_after(30).with_message("waiting for approval")
//! }
//!
//! async fn before_create(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
//!     Gates::new().gate("quota", quota).gate("approval", approval).run(req).await
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let answer = before_create(BeforeClusterCreateRequest::new()).await;
//! assert_eq!((answer.retry_after_seconds, answer.message.as_str()), (30, "approval: waiting for approval"));
//! # }
//! ```

use crate::hooks::v1alpha1::{ResponseStatus, RetryResponse};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

type BoxedGate<Req, R> = Arc<dyn Fn(Req) -> Pin<Box<dyn Future<Output = R> + Send>> + Send + Sync>;

/// Named gates for one blocking hook; see the [module](self).
pub struct Gates<Req, R> {
    gates: Vec<(String, BoxedGate<Req, R>)>,
}

impl<Req, R> Clone for Gates<Req, R> {
    fn clone(&self) -> Self {
        Gates {
            gates: self.gates.clone(),
        }
    }
}

impl<Req, R> Default for Gates<Req, R> {
    fn default() -> Self {
        Gates { gates: Vec::new() }
    }
}

impl<Req, R> std::fmt::Debug for Gates<Req, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.gates.iter().map(|(name, _)| name))
            .finish()
    }
}

impl<Req: Clone + Send + 'static, R: RetryResponse> Gates<Req, R> {
    /// No gates (an empty set answers `Success`).
    pub fn new() -> Self {
        Gates::default()
    }

    /// Adds a gate; `name` prefixes its message in the merged answer.
    ///
    /// # Panics
    /// When the name is empty or taken (a mistake in the code, found by the first test).
    pub fn gate<F, Fut>(mut self, name: impl Into<String>, gate: F) -> Self
    where
        F: Fn(Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let name = name.into();
        assert!(!name.is_empty(), "a gate needs a name");
        assert!(
            !self.gates.iter().any(|(n, _)| *n == name),
            "gate `{name}` is added twice; gate names are unique"
        );
        self.gates
            .push((name, Arc::new(move |req| Box::pin(gate(req)))));
        self
    }

    /// The gates' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.gates.iter().map(|(n, _)| n.as_str())
    }

    /// Runs every gate concurrently on a copy of the request and merges the answers.
    pub async fn run(&self, request: Req) -> R {
        let futures: Vec<_> = self
            .gates
            .iter()
            .map(|(_, gate)| gate(request.clone()))
            .collect();
        let answers = join_all(futures).await;
        merge(self.names().zip(answers))
    }
}

/// Merges named answers: any Failure fails, else the smallest non-zero retry wins; the
/// messages of the gates that decided the answer are joined with `; `, each as `name: message`.
pub fn merge<'a, R: RetryResponse>(answers: impl IntoIterator<Item = (&'a str, R)>) -> R {
    let answers: Vec<(&str, R)> = answers.into_iter().collect();
    let joined = |keep: &dyn Fn(&R) -> bool| {
        answers
            .iter()
            .filter(|(_, r)| keep(r) && !r.message().is_empty())
            .map(|(name, r)| format!("{name}: {}", r.message()))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if answers
        .iter()
        .any(|(_, r)| r.status() == ResponseStatus::Failure)
    {
        return R::failure(joined(&|r| r.status() == ResponseStatus::Failure));
    }
    let retry = answers
        .iter()
        .map(|(_, r)| r.retry_after_seconds())
        .filter(|s| *s > 0)
        .min()
        .unwrap_or(0);
    let message = if retry > 0 {
        joined(&|r| r.retry_after_seconds() > 0)
    } else {
        joined(&|_| true)
    };
    R::success().retry_after(retry).with_message(message)
}

/// Polls every future on the calling task until all are done (no executor needed).
async fn join_all<T>(mut futures: Vec<Pin<Box<dyn Future<Output = T> + Send>>>) -> Vec<T> {
    let mut done: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, slot) in futures.iter_mut().zip(done.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *slot = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    done.into_iter()
        .map(|v| v.expect("every future completed"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::v1alpha1::{
        BeforeClusterUpgradeRequest as Req, BeforeClusterUpgradeResponse as Resp,
    };

    fn answer(status: ResponseStatus, retry: i32, message: &str) -> Resp {
        let r = if status == ResponseStatus::Failure {
            Resp::failure(message)
        } else {
            Resp::success().with_message(message)
        };
        r.retry_after(retry)
    }

    #[test]
    fn failure_wins_then_the_smallest_retry() {
        let ok = || answer(ResponseStatus::Success, 0, "fine");
        let merged = merge([
            ("a", answer(ResponseStatus::Success, 30, "slow")),
            ("b", answer(ResponseStatus::Failure, 0, "broken")),
            ("c", ok()),
        ]);
        assert_eq!(
            (merged.status, merged.message.as_str()),
            (ResponseStatus::Failure, "b: broken")
        );
        let merged = merge([
            ("a", answer(ResponseStatus::Success, 30, "slow")),
            ("b", answer(ResponseStatus::Success, 5, "soon")),
            ("c", ok()),
        ]);
        assert_eq!(merged.status, ResponseStatus::Success);
        assert_eq!(
            (merged.retry_after_seconds, merged.message.as_str()),
            (5, "a: slow; b: soon")
        );
        let merged = merge([("a", ok()), ("b", answer(ResponseStatus::Success, 0, ""))]);
        assert_eq!(
            (merged.retry_after_seconds, merged.message.as_str()),
            (0, "a: fine")
        );
        let empty: Resp = merge(std::iter::empty());
        assert_eq!(
            (empty.status, empty.retry_after_seconds),
            (ResponseStatus::Success, 0)
        );
    }

    #[tokio::test]
    async fn gates_run_concurrently() {
        // Each gate waits for the other: run one after the other, they would never finish.
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let gate = |barrier: Arc<tokio::sync::Barrier>, retry: i32| {
            move |_req: Req| {
                let barrier = barrier.clone();
                async move {
                    barrier.wait().await;
                    Resp::success().retry_after(retry).with_message("held")
                }
            }
        };
        let gates = Gates::new()
            .gate("one", gate(barrier.clone(), 20))
            .gate("two", gate(barrier, 10));
        let answer = tokio::time::timeout(std::time::Duration::from_secs(5), gates.run(Req::new()))
            .await
            .expect("the gates ran concurrently");
        assert_eq!(
            (answer.retry_after_seconds, answer.message.as_str()),
            (10, "one: held; two: held")
        );
    }

    #[test]
    #[should_panic(expected = "gate `a` is added twice")]
    fn duplicate_gates_fail_early() {
        async fn g(_: Req) -> Resp {
            Resp::success()
        }
        let _ = Gates::new().gate("a", g).gate("a", g);
    }
}
