use capi_ext::hooks::v1alpha1::*;
use capi_ext::hook;

#[hook(BeforeClusterCreat)]
async fn before_create(_req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    BeforeClusterCreateResponse::success()
}

fn main() {
    let _ = capi_ext::Extension::builder().register::<before_create>();
}
