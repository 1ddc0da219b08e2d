use capi_ext::hooks::v1alpha1::*;
use capi_ext::hook;

#[hook(ValidateTopology)]
async fn validate(_req: GeneratePatchesRequest) -> GeneratePatchesResponse {
    GeneratePatchesResponse::success()
}

fn main() {}
