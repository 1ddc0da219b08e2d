//! The `before-cluster-upgrade` handler: BeforeClusterUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers BeforeClusterUpgrade for every-hook.
#[hook(BeforeClusterUpgrade, name = "before-cluster-upgrade")]
pub async fn before_cluster_upgrade(req: BeforeClusterUpgradeRequest) -> BeforeClusterUpgradeResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    BeforeClusterUpgradeResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "before-cluster-upgrade";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<before_cluster_upgrade>().build().unwrap();
        let request = BeforeClusterUpgradeRequest::new();
        let response = extension.call(BeforeClusterUpgrade, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
