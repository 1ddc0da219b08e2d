//! The `before-cluster-delete` handler: BeforeClusterDelete.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers BeforeClusterDelete for with-variables.
#[hook(BeforeClusterDelete, name = "before-cluster-delete", timeout = 5, failure_policy = Ignore)]
pub async fn before_cluster_delete(req: BeforeClusterDeleteRequest) -> BeforeClusterDeleteResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    BeforeClusterDeleteResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "before-cluster-delete";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<before_cluster_delete>().build().unwrap();
        let request = BeforeClusterDeleteRequest::new();
        let response = extension.call(BeforeClusterDelete, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
