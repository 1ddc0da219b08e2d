use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, State, hook};

#[derive(Clone)]
struct App;

#[derive(Clone)]
struct Other;

#[hook(BeforeClusterCreate)]
async fn needs_app(State(_app): State<App>, _req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    BeforeClusterCreateResponse::success()
}

#[hook(BeforeClusterDelete)]
async fn not_state(_app: App, _req: BeforeClusterDeleteRequest) -> BeforeClusterDeleteResponse {
    BeforeClusterDeleteResponse::success()
}

fn main() {
    // No state given.
    let _ = Extension::builder().register::<needs_app>();
    // Another state.
    let _ = Extension::builder().state(Other).register::<needs_app>();
}
