//! The `generate-upgrade-plan` handler: GenerateUpgradePlan.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers GenerateUpgradePlan for every-hook.
#[hook(GenerateUpgradePlan, name = "generate-upgrade-plan")]
pub async fn generate_upgrade_plan(req: GenerateUpgradePlanRequest) -> GenerateUpgradePlanResponse {
    // One step straight to the target, which CAPI accepts for an upgrade of one minor version.
    // CAPI asks again once the control plane is there (while the workers upgrade) and then
    // refuses any control plane step. The workers' steps are left to CAPI.
    let mut response = GenerateUpgradePlanResponse::success();
    let version = |v: &str| v.trim_start_matches('v').to_owned();
    if version(&req.from_control_plane_kubernetes_version) != version(&req.to_kubernetes_version) {
        response.control_plane_upgrades.push(UpgradeStep { version: req.to_kubernetes_version.clone() });
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "generate-upgrade-plan";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<generate_upgrade_plan>().build().unwrap()
    }

    #[tokio::test]
    async fn plans_one_step_then_nothing_once_the_control_plane_is_there() {
        let mut request = GenerateUpgradePlanRequest::new();
        request.from_control_plane_kubernetes_version = "v1.34.0".into();
        request.from_workers_kubernetes_version = "v1.34.0".into();
        request.to_kubernetes_version = "v1.35.0".into();
        let response = extension().call(GenerateUpgradePlan, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
        assert_eq!(response.control_plane_upgrades, [UpgradeStep { version: "v1.35.0".into() }]);

        request.from_control_plane_kubernetes_version = "v1.35.0".into();
        let response = extension().call(GenerateUpgradePlan, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
        assert!(response.control_plane_upgrades.is_empty(), "{:?}", response.control_plane_upgrades);
    }
}
