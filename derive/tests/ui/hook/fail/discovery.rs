use capi_ext::hooks::v1alpha1::*;
use capi_ext::hook;

#[hook(Discovery)]
async fn discovery(_req: DiscoveryRequest) -> DiscoveryResponse {
    DiscoveryResponse::success()
}

fn main() {}
