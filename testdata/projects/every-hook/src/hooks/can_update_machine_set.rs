//! The `can-update-machine-set` handler: CanUpdateMachineSet.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers CanUpdateMachineSet for every-hook.
#[hook(CanUpdateMachineSet, name = "can-update-machine-set")]
pub async fn can_update_machine_set(req: CanUpdateMachineSetRequest) -> CanUpdateMachineSetResponse {
    let _ = &req;
    CanUpdateMachineSetResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "can-update-machine-set";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<can_update_machine_set>().build().unwrap()
    }

    #[tokio::test]
    async fn answers_success() {
        let request = CanUpdateMachineSetRequest::new();
        let response = extension().call(CanUpdateMachineSet, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
