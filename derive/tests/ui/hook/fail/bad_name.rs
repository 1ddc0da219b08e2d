use capi_ext::hooks::v1alpha1::*;
use capi_ext::hook;

#[hook(BeforeClusterDelete, name = "Hold.Delete")]
async fn hold(_req: BeforeClusterDeleteRequest) -> BeforeClusterDeleteResponse {
    BeforeClusterDeleteResponse::success()
}

fn main() {}
