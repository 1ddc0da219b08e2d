use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, FromRef, State, hook};
use std::sync::Arc;

#[derive(Clone)]
struct App {
    settings: Settings,
    calls: Arc<std::sync::atomic::AtomicUsize>,
}

#[derive(Clone)]
struct Settings {
    retry: i32,
}

impl FromRef<App> for Settings {
    fn from_ref(app: &App) -> Self {
        app.settings.clone()
    }
}

// The whole state.
#[hook(BeforeClusterCreate)]
async fn count(State(app): State<App>, _req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    app.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    BeforeClusterCreateResponse::success()
}

// A part of it.
#[hook(BeforeClusterDelete)]
async fn hold(State(settings): State<Settings>, _req: BeforeClusterDeleteRequest) -> BeforeClusterDeleteResponse {
    BeforeClusterDeleteResponse::success().retry_after(settings.retry)
}

// None: fits any state, registered before or after it is given.
#[hook(AfterControlPlaneInitialized)]
async fn plain(_req: AfterControlPlaneInitializedRequest) -> AfterControlPlaneInitializedResponse {
    AfterControlPlaneInitializedResponse::success()
}

#[hook(BeforeClusterUpgrade)]
async fn plain_too(_req: BeforeClusterUpgradeRequest) -> BeforeClusterUpgradeResponse {
    BeforeClusterUpgradeResponse::success()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ext = Extension::builder()
        .register::<plain>()
        .state(App { settings: Settings { retry: 7 }, calls: calls.clone() })
        .register::<count>()
        .register::<hold>()
        .register::<plain_too>()
        .build()
        .unwrap();
    assert_eq!(ext.handlers().len(), 4);
    ext.call(BeforeClusterCreate, "count", &BeforeClusterCreateRequest::new()).await.unwrap();
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    let held = ext.call(BeforeClusterDelete, "hold", &BeforeClusterDeleteRequest::new()).await.unwrap();
    assert_eq!(held.retry_after_seconds, 7);
}
