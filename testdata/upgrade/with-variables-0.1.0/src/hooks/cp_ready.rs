//! The `cp-ready` handler: AfterControlPlaneInitialized.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers AfterControlPlaneInitialized for with-variables.
#[hook(AfterControlPlaneInitialized, name = "cp-ready")]
pub async fn cp_ready(req: AfterControlPlaneInitializedRequest) -> AfterControlPlaneInitializedResponse {
    let _ = &req;
    AfterControlPlaneInitializedResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "cp-ready";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<cp_ready>().build().unwrap()
    }

    #[tokio::test]
    async fn answers_success() {
        let request = AfterControlPlaneInitializedRequest::new();
        let response = extension().call(AfterControlPlaneInitialized, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
