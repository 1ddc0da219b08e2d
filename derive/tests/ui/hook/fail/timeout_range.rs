use capi_ext::hooks::v1alpha1::*;
use capi_ext::hook;

#[hook(ValidateTopology, timeout = 45)]
async fn validate(_req: ValidateTopologyRequest) -> ValidateTopologyResponse {
    ValidateTopologyResponse::success()
}

fn main() {}
