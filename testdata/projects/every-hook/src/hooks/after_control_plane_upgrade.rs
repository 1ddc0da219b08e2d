//! The `after-control-plane-upgrade` handler: AfterControlPlaneUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// While the Cluster carries this annotation, CAPI is asked to call again in 10 seconds
/// (one annotation per handler: holding creation does not hold deletion).
pub const HOLD_ANNOTATION: &str = "every-hook.example.com/hold-after-control-plane-upgrade";

/// Answers AfterControlPlaneUpgrade for every-hook.
#[hook(AfterControlPlaneUpgrade, name = "after-control-plane-upgrade")]
pub async fn after_control_plane_upgrade(req: AfterControlPlaneUpgradeRequest) -> AfterControlPlaneUpgradeResponse {
    // An example condition: replace it with what this hook waits for.
    if req.cluster.metadata.annotations.contains_key(HOLD_ANNOTATION) {
        let message = format!("held by the annotation {HOLD_ANNOTATION} on Cluster {}", req.cluster.key());
        return AfterControlPlaneUpgradeResponse::success().retry_after(10).with_message(message);
    }
    AfterControlPlaneUpgradeResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "after-control-plane-upgrade";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<after_control_plane_upgrade>().build().unwrap()
    }

    #[tokio::test]
    async fn holds_while_annotated_then_releases() {
        let mut request = AfterControlPlaneUpgradeRequest::new();
        request.cluster.metadata.annotations.insert(HOLD_ANNOTATION.into(), "true".into());
        let held = extension().call(AfterControlPlaneUpgrade, NAME, &request).await.unwrap();
        assert_eq!((held.status, held.retry_after_seconds), (ResponseStatus::Success, 10));

        request.cluster.metadata.annotations.remove(HOLD_ANNOTATION);
        let released = extension().call(AfterControlPlaneUpgrade, NAME, &request).await.unwrap();
        assert_eq!((released.status, released.retry_after_seconds), (ResponseStatus::Success, 0));
    }
}
