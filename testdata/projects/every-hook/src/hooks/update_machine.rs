//! The `update-machine` handler: UpdateMachine.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// While the Machine carries this annotation, CAPI is asked to call again in 10 seconds
/// (one annotation per handler: holding creation does not hold deletion).
pub const HOLD_ANNOTATION: &str = "every-hook.example.com/hold-update-machine";

/// Answers UpdateMachine for every-hook.
#[hook(UpdateMachine, name = "update-machine")]
pub async fn update_machine(req: UpdateMachineRequest) -> UpdateMachineResponse {
    // An example condition: replace it with what this hook waits for.
    if req.desired.machine.metadata.annotations.contains_key(HOLD_ANNOTATION) {
        let message = format!("held by the annotation {HOLD_ANNOTATION} on Machine {}", req.desired.machine.key());
        return UpdateMachineResponse::success().retry_after(10).with_message(message);
    }
    UpdateMachineResponse::success()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "update-machine";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<update_machine>().build().unwrap()
    }

    #[tokio::test]
    async fn holds_while_annotated_then_releases() {
        let mut request = UpdateMachineRequest::new();
        request.desired.machine.metadata.annotations.insert(HOLD_ANNOTATION.into(), "true".into());
        let held = extension().call(UpdateMachine, NAME, &request).await.unwrap();
        assert_eq!((held.status, held.retry_after_seconds), (ResponseStatus::Success, 10));

        request.desired.machine.metadata.annotations.remove(HOLD_ANNOTATION);
        let released = extension().call(UpdateMachine, NAME, &request).await.unwrap();
        assert_eq!((released.status, released.retry_after_seconds), (ResponseStatus::Success, 0));
    }
}
