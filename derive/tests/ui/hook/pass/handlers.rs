use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, hook};

#[hook(BeforeClusterCreate)]
async fn before_create(_req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    BeforeClusterCreateResponse::success()
}

#[hook(GeneratePatches, name = "patches", timeout = 2, failure_policy = Ignore)]
async fn generate(req: capi_ext::hooks::v1alpha1::GeneratePatchesRequest) -> Result<GeneratePatchesResponse, String> {
    Ok(req.items.iter().fold(GeneratePatchesResponse::success(), |r, i| r.patch(i.uid.clone(), Patch::json())))
}

#[hook(UpdateMachine, timeout = 0)]
pub async fn update_machine(_req: UpdateMachineRequest) -> UpdateMachineResponse {
    UpdateMachineResponse::success().retry_after(5)
}

fn main() {
    let ext = Extension::builder()
        .register::<before_create>()
        .register::<generate>()
        .register::<update_machine>()
        .build()
        .unwrap();
    let names: Vec<_> = ext.handlers().iter().map(|h| (h.name.as_str(), h.timeout_seconds)).collect();
    assert_eq!(names, [("before-create", Some(10)), ("patches", Some(2)), ("update-machine", Some(0))]);
    // The function is still a function.
    let _ = before_create(BeforeClusterCreateRequest::new());
}
