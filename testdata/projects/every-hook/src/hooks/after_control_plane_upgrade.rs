//! The `after-control-plane-upgrade` handler: AfterControlPlaneUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers AfterControlPlaneUpgrade for every-hook.
#[hook(AfterControlPlaneUpgrade, name = "after-control-plane-upgrade")]
pub async fn after_control_plane_upgrade(req: AfterControlPlaneUpgradeRequest) -> AfterControlPlaneUpgradeResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    AfterControlPlaneUpgradeResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "after-control-plane-upgrade";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<after_control_plane_upgrade>().build().unwrap();
        let request = AfterControlPlaneUpgradeRequest::new();
        let response = extension.call(AfterControlPlaneUpgrade, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
