//! The `update-machine` handler: UpdateMachine.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers UpdateMachine for every-hook.
#[hook(UpdateMachine, name = "update-machine")]
pub async fn update_machine(req: UpdateMachineRequest) -> UpdateMachineResponse {
    let _ = &req;
    // Return `.retry_after(seconds)` with a message to make CAPI wait and call again.
    UpdateMachineResponse::success().retry_after(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "update-machine";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<update_machine>().build().unwrap();
        let request = UpdateMachineRequest::new();
        let response = extension.call(UpdateMachine, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
