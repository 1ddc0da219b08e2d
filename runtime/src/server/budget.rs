//! The memory budget of requests in flight: each request is charged [`CHARGE_FACTOR`] times its
//! body (the bytes, the decoded request, the response) before its body is read, and keeps the
//! charge until its answer is built. A request that does not fit waits (up to the body read
//! timeout) for others to finish; one that could never fit is refused at once. The default
//! budget is half the container's memory limit (its cgroup), so a burst of large GeneratePatches
//! requests cannot take the process past the limit of its Deployment (with the large ones
//! served on one thread, [`super::lane`], so that freed memory is reused rather than kept by
//! each worker's allocator arena).

use super::metrics::{Held, Metrics};
use crate::error::RequestError;
use prometheus_client::metrics::gauge::Gauge;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many times its body a request is charged: the bytes received, the decoded request
/// (serde_json values of templates weigh about as much as their text), and the response.
pub const CHARGE_FACTOR: usize = 3;

/// The budget when the process has no cgroup memory limit.
pub const UNLIMITED_DEFAULT: usize = 512 << 20;

const KIB: usize = 1024;

/// The budget, shared by every connection.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    semaphore: Arc<Semaphore>,
    bytes: usize,
    /// Bytes charged now (`capi_ext_request_body_budget_used_bytes`).
    used: Gauge,
    /// Requests waiting for room (`capi_ext_request_body_budget_waiting`).
    waiting: Gauge,
}

/// A request's share of the budget, returned when dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    _permit: OwnedSemaphorePermit,
    used: Gauge,
    bytes: i64,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.used.dec_by(self.bytes);
    }
}

impl Budget {
    /// A budget of `bytes`, reported in `metrics`.
    pub(crate) fn new(bytes: usize, metrics: &Metrics) -> Self {
        let kib = (bytes / KIB).clamp(1, u32::MAX as usize);
        metrics
            .budget_bytes
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
        Budget {
            semaphore: Arc::new(Semaphore::new(kib)),
            bytes,
            used: metrics.budget_used_bytes.clone(),
            waiting: metrics.budget_waiting.clone(),
        }
    }

    /// Charges a request whose body has `body_bytes`, waiting up to `wait` for room.
    pub(crate) async fn charge(
        &self,
        body_bytes: usize,
        wait: Duration,
    ) -> Result<Charge, RequestError> {
        let needed = body_bytes.saturating_mul(CHARGE_FACTOR);
        if needed > self.bytes {
            return Err(RequestError::OverBudget {
                needed,
                budget: self.bytes,
            });
        }
        let kib = needed.div_ceil(KIB).max(1).min(u32::MAX as usize) as u32;
        let acquired = match self.semaphore.clone().try_acquire_many_owned(kib) {
            Ok(permit) => Ok(Ok(permit)),
            Err(_) => {
                let _waiting = Held::new(&self.waiting);
                let acquire = self.semaphore.clone().acquire_many_owned(kib);
                tokio::time::timeout(wait, acquire).await
            }
        };
        match acquired {
            Ok(Ok(permit)) => {
                let bytes = i64::from(kib) * KIB as i64;
                self.used.inc_by(bytes);
                Ok(Charge {
                    _permit: permit,
                    used: self.used.clone(),
                    bytes,
                })
            }
            Ok(Err(_)) => Err(RequestError::Internal("the memory budget is closed".into())),
            Err(_) => Err(RequestError::Busy {
                budget: self.bytes,
                seconds: wait.as_secs(),
            }),
        }
    }
}

/// The memory limit of this process's cgroup (v2 `memory.max`, or v1
/// `memory.limit_in_bytes`), `None` when there is none.
pub fn cgroup_memory_limit() -> Option<u64> {
    cgroup_limit_under(Path::new("/sys/fs/cgroup"), Path::new("/proc/self/cgroup"))
}

fn read_limit(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let limit: u64 = text.trim().parse().ok()?;
    // cgroup v1 reports "no limit" as a huge page-aligned number.
    (limit < 1 << 60).then_some(limit)
}

fn cgroup_limit_under(root: &Path, self_cgroup: &Path) -> Option<u64> {
    // cgroup v2: this process's own group first (outside a container namespace), then the root.
    let own = std::fs::read_to_string(self_cgroup).ok().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(|p| p.trim_start_matches('/').to_string())
    });
    own.and_then(|p| read_limit(&root.join(p).join("memory.max")))
        .or_else(|| read_limit(&root.join("memory.max")))
        .or_else(|| read_limit(&root.join("memory").join("memory.limit_in_bytes")))
}

/// The budget to use, and why: the flag when given, else half the cgroup limit, else
/// [`UNLIMITED_DEFAULT`].
pub fn choose(flag: Option<usize>, cgroup_limit: Option<u64>) -> (usize, String) {
    match (flag, cgroup_limit) {
        (Some(bytes), _) => (bytes, "--max-in-flight-body-bytes".into()),
        (None, Some(limit)) => (
            (limit / 2) as usize,
            format!("half the cgroup memory limit of {} MiB", limit >> 20),
        ),
        (None, None) => (
            UNLIMITED_DEFAULT,
            "no cgroup memory limit found; set --max-in-flight-body-bytes to change it".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_follows_the_cgroup_limit() {
        assert_eq!(choose(Some(10), Some(1 << 30)).0, 10);
        let (bytes, why) = choose(None, Some(128 << 20));
        assert_eq!(bytes, 64 << 20);
        assert_eq!(why, "half the cgroup memory limit of 128 MiB");
        assert_eq!(choose(None, None).0, UNLIMITED_DEFAULT);
    }

    #[test]
    fn cgroup_files_are_read_v2_own_group_first_then_v1() {
        let root = std::env::temp_dir().join(format!("capi-ext-cgroup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("kubepods/pod1")).unwrap();
        std::fs::create_dir_all(root.join("memory")).unwrap();
        let own = root.join("self-cgroup");
        std::fs::write(&own, "0::/kubepods/pod1\n").unwrap();
        std::fs::write(root.join("kubepods/pod1/memory.max"), "134217728\n").unwrap();
        std::fs::write(root.join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_limit_under(&root, &own), Some(128 << 20));
        std::fs::write(root.join("kubepods/pod1/memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_limit_under(&root, &own), None);
        std::fs::remove_file(root.join("memory.max")).unwrap();
        std::fs::write(
            root.join("memory/memory.limit_in_bytes"),
            "9223372036854771712\n",
        )
        .unwrap();
        assert_eq!(cgroup_limit_under(&root, &own), None);
        std::fs::write(root.join("memory/memory.limit_in_bytes"), "268435456\n").unwrap();
        assert_eq!(cgroup_limit_under(&root, &own), Some(256 << 20));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[tokio::test]
    async fn requests_wait_for_room_and_oversized_ones_are_refused() {
        let metrics = Metrics::default();
        let budget = Budget::new(30 * KIB, &metrics);
        let first = budget
            .charge(8 * KIB, Duration::from_secs(1))
            .await
            .unwrap();
        assert_eq!(metrics.budget_used_bytes.get(), 24 * KIB as i64);
        // 24 KiB charged; another 8 KiB body (24 KiB) must wait until the first is done.
        let waiter = budget.charge(8 * KIB, Duration::from_millis(200));
        tokio::pin!(waiter);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), &mut waiter)
                .await
                .is_err()
        );
        assert_eq!(metrics.budget_waiting.get(), 1, "counted while it waits");
        let waited = waiter.await;
        assert!(
            matches!(waited, Err(RequestError::Busy { .. })),
            "{waited:?}"
        );
        assert_eq!(metrics.budget_waiting.get(), 0);
        drop(first);
        assert_eq!(
            metrics.budget_used_bytes.get(),
            0,
            "returned with the charge"
        );
        assert!(
            metrics
                .encode()
                .contains("capi_ext_request_body_budget_bytes 30720")
        );
        let second = budget.charge(8 * KIB, Duration::from_millis(50)).await;
        assert!(second.is_ok());
        let too_big = budget.charge(11 * KIB, Duration::from_secs(1)).await;
        assert!(
            matches!(too_big, Err(RequestError::OverBudget { needed, .. }) if needed == 33 * KIB),
            "{too_big:?}"
        );
    }
}
