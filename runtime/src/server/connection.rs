//! One connection's life: served by hyper (HTTP/2 or HTTP/1.1), closed gracefully when it has
//! been idle too long, when it reaches its maximum age (with jitter, so a fleet of clients does
//! not reconnect at once), or when the server shuts down. Graceful means HTTP/2 GOAWAY or
//! HTTP/1.1 `Connection: close`: requests in flight finish, new ones go to a new connection.

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;

/// What a connection can be: a TLS stream or, for local experiments, plain TCP.
pub(super) trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

/// Requests in flight on a connection and when the last one ended.
pub(super) struct Activity {
    opened: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds after `opened` when the connection last had a request end (or opened).
    last_ms: AtomicU64,
}

impl Activity {
    /// A connection's activity from now, with no request yet.
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Activity {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
        })
    }

    /// How long it has had no request in flight (`None`: one is in flight).
    pub(super) fn idle_for(&self) -> Option<Duration> {
        (self.in_flight.load(Ordering::SeqCst) == 0).then(|| {
            self.opened
                .elapsed()
                .saturating_sub(Duration::from_millis(self.last_ms.load(Ordering::SeqCst)))
        })
    }
}

/// Ends a request's activity when dropped (also when the handler panics or the client leaves).
pub(super) struct InFlight(Arc<Activity>);

impl InFlight {
    pub(super) fn begin(activity: &Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let ms = self.0.opened.elapsed().as_millis() as u64;
        self.0.last_ms.store(ms, Ordering::SeqCst);
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// When a connection is closed even though it works.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Closed after this long without a request in flight (zero: never).
    pub idle_timeout: Duration,
    /// Closed after about this long (zero: never).
    pub max_age: Duration,
}

/// `max_age` ±10%, spread by a value unique to the connection.
fn jittered(max_age: Duration, seed: u64) -> Duration {
    // A small mix (splitmix64) of the seed: no randomness crate for one number.
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let fraction = (z % 2001) as f64 / 10_000.0 - 0.1; // -0.1 ..= +0.1
    max_age.mul_f64(1.0 + fraction)
}

/// How long a connection told to close (at the cap, to make room) may take to close gracefully
/// before it is dropped.
const EVICTION_GRACE: Duration = Duration::from_secs(1);

/// Serves one connection until it closes, then returns; `activity` is kept up to date with its
/// requests, and a notification on `evict` closes it gracefully (the connection table makes
/// room).
#[allow(clippy::too_many_arguments)]
pub(super) async fn serve<H, F>(
    io: Box<dyn Io>,
    builder: Arc<Builder<TokioExecutor>>,
    handle: H,
    limits: Limits,
    seed: u64,
    mut shutdown: watch::Receiver<bool>,
    activity: Arc<Activity>,
    evict: Arc<tokio::sync::Notify>,
) where
    H: Fn(http::Request<Incoming>) -> F + Send + Sync + 'static,
    F: Future<
            Output = Result<
                http::Response<http_body_util::Full<hyper::body::Bytes>>,
                std::convert::Infallible,
            >,
        > + Send
        + 'static,
{
    let tracked = activity.clone();
    let handle = Arc::new(handle);
    let service = hyper::service::service_fn(move |req| {
        let guard = InFlight::begin(&tracked);
        let answer = handle(req);
        async move {
            let answer = answer.await;
            drop(guard);
            answer
        }
    });
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let age = (!limits.max_age.is_zero()).then(|| jittered(limits.max_age, seed));
    let age_deadline = tokio::time::sleep(age.unwrap_or(Duration::MAX / 4));
    tokio::pin!(age_deadline);
    let check_every = if limits.idle_timeout.is_zero() {
        Duration::MAX / 4
    } else {
        (limits.idle_timeout / 4).max(Duration::from_millis(10))
    };
    let mut closing = false;
    let evicted_deadline = tokio::time::sleep(Duration::MAX / 4);
    tokio::pin!(evicted_deadline);
    let mut evicted = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            _ = evict.notified(), if !evicted => {
                tracing::debug!("connection cap reached: closing this idle connection to make room");
                conn.as_mut().graceful_shutdown();
                closing = true;
                evicted = true;
                evicted_deadline
                    .as_mut()
                    .reset(tokio::time::Instant::now() + EVICTION_GRACE);
            }
            _ = &mut evicted_deadline, if evicted => return,
            changed = shutdown.changed(), if !closing => {
                if changed.is_err() || *shutdown.borrow() {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
            _ = &mut age_deadline, if !closing && age.is_some() => {
                tracing::debug!(age = ?activity.opened.elapsed(), "maximum connection age reached: closing gracefully");
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            _ = tokio::time::sleep(check_every), if !closing && !limits.idle_timeout.is_zero() => {
                if activity.idle_for().is_some_and(|idle| idle >= limits.idle_timeout) {
                    tracing::debug!(idle = ?limits.idle_timeout, "idle connection closed");
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_ten_percent_and_spreads() {
        let base = Duration::from_secs(100);
        let ages: Vec<Duration> = (0..1000).map(|i| jittered(base, i)).collect();
        assert!(
            ages.iter()
                .all(|a| *a >= Duration::from_secs(90) && *a <= Duration::from_secs(110))
        );
        let distinct: std::collections::BTreeSet<_> = ages.iter().map(|a| a.as_millis()).collect();
        assert!(distinct.len() > 500, "{} distinct ages", distinct.len());
    }
}
