//! What the integration tests of render share.

use capi_ext_render::Input;
use serde_json::{Value, json};

/// The quickstart example's render inputs (Cluster, ClusterClass, templates).
pub fn quickstart_input() -> Input {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/quickstart/render");
    Input::from_yaml_files(
        ["cluster.yaml", "clusterclass.yaml", "templates.yaml"].map(|f| format!("{dir}/{f}")),
    )
    .unwrap()
}

/// The quickstart without its inline variables and the inline patches that use them.
#[allow(dead_code)]
pub fn external_only() -> Input {
    let mut input = quickstart_input();
    let patches = input.cluster_class["spec"]["patches"].as_array().unwrap();
    let external: Vec<Value> = patches
        .iter()
        .filter(|p| p.get("external").is_some())
        .cloned()
        .collect();
    input.cluster_class["spec"]["patches"] = json!(external);
    input.cluster_class["spec"]["variables"] = Value::Null;
    input.cluster["spec"]["topology"]["variables"] = json!([]);
    input
}

/// `builder` with the quickstart's `patches` (GeneratePatches) and `validate`
/// (ValidateTopology) handlers, which change nothing and accept everything.
#[allow(dead_code)]
pub fn accepting(builder: capi_ext::ExtensionBuilder) -> capi_ext::Extension {
    use capi_ext::Registration;
    use capi_ext::hooks::v1alpha1::*;
    builder
        .handler(Registration::new(
            GeneratePatches,
            "patches",
            |_: GeneratePatchesRequest| async { GeneratePatchesResponse::success() },
        ))
        .handler(Registration::new(
            ValidateTopology,
            "validate",
            |_: ValidateTopologyRequest| async { ValidateTopologyResponse::success() },
        ))
        .build()
        .unwrap()
}
