//! What the integration tests of render share.

use capi_ext_render::Input;

/// The quickstart example's render inputs (Cluster, ClusterClass, templates).
pub fn quickstart_input() -> Input {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/quickstart/render");
    Input::from_yaml_files(
        ["cluster.yaml", "clusterclass.yaml", "templates.yaml"].map(|f| format!("{dir}/{f}")),
    )
    .unwrap()
}
