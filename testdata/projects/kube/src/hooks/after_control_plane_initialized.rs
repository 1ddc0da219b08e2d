//! The `after-control-plane-initialized` handler: AfterControlPlaneInitialized.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers AfterControlPlaneInitialized for kube.
#[hook(AfterControlPlaneInitialized, name = "after-control-plane-initialized")]
pub async fn after_control_plane_initialized(
    req: AfterControlPlaneInitializedRequest,
) -> AfterControlPlaneInitializedResponse {
    let _ = &req;
    AfterControlPlaneInitializedResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "after-control-plane-initialized";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<after_control_plane_initialized>().build().unwrap()
    }

    #[tokio::test]
    async fn answers_success() {
        let request = AfterControlPlaneInitializedRequest::new();
        let response = extension().call(AfterControlPlaneInitialized, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
