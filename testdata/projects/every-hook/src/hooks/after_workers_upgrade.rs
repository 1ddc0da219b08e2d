//! The `after-workers-upgrade` handler: AfterWorkersUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers AfterWorkersUpgrade for every-hook.
#[hook(AfterWorkersUpgrade, name = "after-workers-upgrade")]
pub async fn after_workers_upgrade(req: AfterWorkersUpgradeRequest) -> AfterWorkersUpgradeResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    AfterWorkersUpgradeResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "after-workers-upgrade";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<after_workers_upgrade>().build().unwrap();
        let request = AfterWorkersUpgradeRequest::new();
        let response = extension.call(AfterWorkersUpgrade, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
