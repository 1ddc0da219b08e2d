//! The `before-control-plane-upgrade` handler: BeforeControlPlaneUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers BeforeControlPlaneUpgrade for every-hook.
#[hook(BeforeControlPlaneUpgrade, name = "before-control-plane-upgrade")]
pub async fn before_control_plane_upgrade(req: BeforeControlPlaneUpgradeRequest) -> BeforeControlPlaneUpgradeResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    BeforeControlPlaneUpgradeResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "before-control-plane-upgrade";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<before_control_plane_upgrade>().build().unwrap();
        let request = BeforeControlPlaneUpgradeRequest::new();
        let response = extension.call(BeforeControlPlaneUpgrade, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
