//! The `after-cluster-upgrade` handler: AfterClusterUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers AfterClusterUpgrade for every-hook.
#[hook(AfterClusterUpgrade, name = "after-cluster-upgrade")]
pub async fn after_cluster_upgrade(req: AfterClusterUpgradeRequest) -> AfterClusterUpgradeResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    AfterClusterUpgradeResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "after-cluster-upgrade";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<after_cluster_upgrade>().build().unwrap();
        let request = AfterClusterUpgradeRequest::new();
        let response = extension.call(AfterClusterUpgrade, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
