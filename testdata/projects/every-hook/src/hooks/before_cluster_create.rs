//! The `before-cluster-create` handler: BeforeClusterCreate.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers BeforeClusterCreate for every-hook.
#[hook(BeforeClusterCreate, name = "before-cluster-create")]
pub async fn before_cluster_create(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    BeforeClusterCreateResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "before-cluster-create";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<before_cluster_create>().build().unwrap();
        let request = BeforeClusterCreateRequest::new();
        let response = extension.call(BeforeClusterCreate, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
