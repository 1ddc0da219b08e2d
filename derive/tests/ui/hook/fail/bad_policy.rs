use capi_ext::hooks::v1alpha1::*;
use capi_ext::hook;

#[hook(BeforeClusterUpgrade, failure_policy = Ignor)]
async fn upgrade(_req: BeforeClusterUpgradeRequest) -> BeforeClusterUpgradeResponse {
    BeforeClusterUpgradeResponse::success()
}

fn main() {}
