//! The lane of large requests: a request whose body declares at least [`LARGE_BODY`] bytes is
//! read, decoded, handled and encoded on one thread of its own rather than on whichever worker
//! thread picked it up.
//!
//! Why: glibc's allocator keeps an arena per thread, and memory freed in one arena stays
//! resident for that thread's next allocations. A large GeneratePatches request (tens of MiB of
//! body and as much again decoded) served on each worker in turn leaves each worker's arena
//! holding its peak: measured on 2 worker threads with 40 concurrent 19 MiB requests and a
//! 64 MiB budget, the peak RSS was 101–139 MiB with the requests spread over the workers, and
//! 58 MiB with one arena. On one thread each large request reuses the memory of the one before,
//! so the memory budget ([`super::budget`]) bounds what the process holds. Large requests are
//! bound by memory rather than by the CPU, and the budget already lets only a few run at once in
//! a small container; small requests (CAPI's usual ones) stay on the workers.

use std::future::Future;
use std::sync::OnceLock;

/// Requests whose body declares at least this many bytes take the lane.
pub(crate) const LARGE_BODY: u64 = 1 << 20;

/// The lane's runtime, started on the first large request: one worker thread (a runtime of the
/// multi-threaded kind, so that handlers may still use `tokio::task::block_in_place`).
fn runtime() -> &'static tokio::runtime::Runtime {
    static LANE: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    LANE.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .thread_name("capi-ext-large-requests")
            .build()
            .expect("the large-request runtime starts")
    })
}

/// Runs `work` on the lane when `declared` (the body's Content-Length) is large, else here;
/// `lost` answers if the lane's task ends without a result (it panicked).
pub(crate) async fn run<T, F>(declared: Option<u64>, work: F, lost: impl FnOnce() -> T) -> T
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    if declared.is_some_and(|len| len >= LARGE_BODY) {
        runtime().spawn(work).await.unwrap_or_else(|_| lost())
    } else {
        work.await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn large_requests_run_on_the_lane_thread_and_small_ones_here() {
        let name = || std::thread::current().name().map(str::to_owned);
        let here = name();
        let large = run(Some(LARGE_BODY), async move { name() }, || None).await;
        assert_eq!(large.as_deref(), Some("capi-ext-large-requests"));
        let small = run(Some(LARGE_BODY - 1), async move { name() }, || None).await;
        assert_eq!(small, here);
        assert_eq!(run(None, async move { name() }, || None).await, here);
        // A task that panics on the lane is answered by `lost`, and the lane keeps serving.
        let panics = async {
            if LARGE_BODY > 0 {
                panic!("handler panicked");
            }
            "answered"
        };
        let lost = run(Some(LARGE_BODY), panics, || "lost").await;
        assert_eq!(lost, "lost");
        assert_eq!(
            run(Some(LARGE_BODY), async move { name() }, || None)
                .await
                .as_deref(),
            Some("capi-ext-large-requests")
        );
    }
}
