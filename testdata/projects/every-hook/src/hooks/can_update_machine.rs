//! The `can-update-machine` handler: CanUpdateMachine.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers CanUpdateMachine for every-hook.
#[hook(CanUpdateMachine, name = "can-update-machine")]
pub async fn can_update_machine(req: CanUpdateMachineRequest) -> CanUpdateMachineResponse {
    let _ = &req;
    CanUpdateMachineResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "can-update-machine";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<can_update_machine>().build().unwrap()
    }

    #[tokio::test]
    async fn answers_success() {
        let request = CanUpdateMachineRequest::new();
        let response = extension().call(CanUpdateMachine, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
