//! The `after-cluster-upgrade` handler: AfterClusterUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// While the Cluster carries this annotation, CAPI is asked to call again in 10 seconds
/// (one annotation per handler: holding creation does not hold deletion).
pub const HOLD_ANNOTATION: &str = "every-hook.example.com/hold-after-cluster-upgrade";

/// Answers AfterClusterUpgrade for every-hook.
#[hook(AfterClusterUpgrade, name = "after-cluster-upgrade")]
pub async fn after_cluster_upgrade(req: AfterClusterUpgradeRequest) -> AfterClusterUpgradeResponse {
    // An example condition: replace it with what this hook waits for.
    if req.cluster.metadata.annotations.contains_key(HOLD_ANNOTATION) {
        let message = format!("held by the annotation {HOLD_ANNOTATION} on Cluster {}", req.cluster.key());
        return AfterClusterUpgradeResponse::success().retry_after(10).with_message(message);
    }
    AfterClusterUpgradeResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "after-cluster-upgrade";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<after_cluster_upgrade>().build().unwrap()
    }

    #[tokio::test]
    async fn holds_while_annotated_then_releases() {
        let mut request = AfterClusterUpgradeRequest::new();
        request.cluster.metadata.annotations.insert(HOLD_ANNOTATION.into(), "true".into());
        let held = extension().call(AfterClusterUpgrade, NAME, &request).await.unwrap();
        assert_eq!((held.status, held.retry_after_seconds), (ResponseStatus::Success, 10));

        request.cluster.metadata.annotations.remove(HOLD_ANNOTATION);
        let released = extension().call(AfterClusterUpgrade, NAME, &request).await.unwrap();
        assert_eq!((released.status, released.retry_after_seconds), (ResponseStatus::Success, 0));
    }
}
