use capi_ext::hooks::v1alpha1::*;
use capi_ext::hook;

#[hook(AfterControlPlaneInitialized)]
fn ready(_req: AfterControlPlaneInitializedRequest) -> AfterControlPlaneInitializedResponse {
    AfterControlPlaneInitializedResponse::success()
}

fn main() {}
