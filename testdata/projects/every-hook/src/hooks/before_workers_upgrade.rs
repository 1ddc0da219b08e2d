//! The `before-workers-upgrade` handler: BeforeWorkersUpgrade.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers BeforeWorkersUpgrade for every-hook.
#[hook(BeforeWorkersUpgrade, name = "before-workers-upgrade")]
pub async fn before_workers_upgrade(req: BeforeWorkersUpgradeRequest) -> BeforeWorkersUpgradeResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    BeforeWorkersUpgradeResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "before-workers-upgrade";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<before_workers_upgrade>().build().unwrap();
        let request = BeforeWorkersUpgradeRequest::new();
        let response = extension.call(BeforeWorkersUpgrade, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
