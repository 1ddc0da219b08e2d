//! The `generate-upgrade-plan` handler: GenerateUpgradePlan.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

/// Answers GenerateUpgradePlan for every-hook.
#[hook(GenerateUpgradePlan, name = "generate-upgrade-plan")]
pub async fn generate_upgrade_plan(req: GenerateUpgradePlanRequest) -> GenerateUpgradePlanResponse {
    // One step straight to the target; CAPI accepts it for upgrades of one minor version.
    let step = UpgradeStep { version: req.to_kubernetes_version.clone() };
    GenerateUpgradePlanResponse { control_plane_upgrades: vec![step], ..GenerateUpgradePlanResponse::success() }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "generate-upgrade-plan";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().register::<generate_upgrade_plan>().build().unwrap()
    }

    #[tokio::test]
    async fn answers_success() {
        let request = GenerateUpgradePlanRequest::new();
        let response = extension().call(GenerateUpgradePlan, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
