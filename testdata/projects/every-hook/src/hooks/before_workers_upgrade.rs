//! The `before-workers-upgrade` handler: BeforeWorkersUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// While the Cluster carries this annotation, CAPI is asked to call again in 10 seconds
/// (one annotation per handler: holding creation does not hold deletion).
pub const HOLD_ANNOTATION: &str = "every-hook.example.com/hold-before-workers-upgrade";

/// Answers BeforeWorkersUpgrade for every-hook.
#[hook(BeforeWorkersUpgrade, name = "before-workers-upgrade")]
pub async fn before_workers_upgrade(req: BeforeWorkersUpgradeRequest) -> BeforeWorkersUpgradeResponse {
    // An example condition: replace it with what this hook waits for.
    if req.cluster.metadata.annotations.contains_key(HOLD_ANNOTATION) {
        let message = format!("held by the annotation {HOLD_ANNOTATION} on Cluster {}", req.cluster.key());
        return BeforeWorkersUpgradeResponse::success().retry_after(10).with_message(message);
    }
    BeforeWorkersUpgradeResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "before-workers-upgrade";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<before_workers_upgrade>().build().unwrap()
    }

    #[tokio::test]
    async fn holds_while_annotated_then_releases() {
        let mut request = BeforeWorkersUpgradeRequest::new();
        request.cluster.metadata.annotations.insert(HOLD_ANNOTATION.into(), "true".into());
        let held = extension().call(BeforeWorkersUpgrade, NAME, &request).await.unwrap();
        assert_eq!((held.status, held.retry_after_seconds), (ResponseStatus::Success, 10));

        request.cluster.metadata.annotations.remove(HOLD_ANNOTATION);
        let released = extension().call(BeforeWorkersUpgrade, NAME, &request).await.unwrap();
        assert_eq!((released.status, released.retry_after_seconds), (ResponseStatus::Success, 0));
    }
}
