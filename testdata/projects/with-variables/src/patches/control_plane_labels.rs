//! The `control-plane-labels` patch.

use capi_ext::patches::{NamedPatch, PatchContext, PatchError, Selector};
use capi_ext_types::kubeadm::v1beta2::KubeadmControlPlaneTemplate;

use crate::variables::Variables;

/// The patch: its name (in errors), the templates it selects, what it does. It edits the
/// KubeadmControlPlaneTemplate as a Rust type (a misspelled field does not compile); for a kind without a
/// type, `NamedPatch::new` edits the template by JSON pointers.
pub fn patch() -> NamedPatch<Variables> {
    NamedPatch::typed("control-plane-labels", Selector::control_plane().control_plane_template(), apply)
}

/// An example change: a label on the objects made from the template. Replace it with what this
/// patch does; `ctx` has the variables, the builtins and the holder.
fn apply(template: &mut KubeadmControlPlaneTemplate, _ctx: &PatchContext<Variables>) -> Result<(), PatchError> {
    let labels =
        template.spec.get_or_insert_default().template.metadata.get_or_insert_default().labels.get_or_insert_default();
    labels.insert(LABEL.into(), "true".into());
    Ok(())
}

/// The label the example sets.
const LABEL: &str = "with-variables.example.com/control-plane-labels";

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext::patches::PatchSet;
    use capi_ext_render::testing::TemplateCase;
    use serde_json::json;

    fn template() -> serde_json::Value {
        json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
            "kind": "KubeadmControlPlaneTemplate",
            "spec": {"template": {"spec": {"kubeadmConfigSpec": {"format": "cloud-config"}}}}
        })
    }

    #[test]
    fn patches_the_template() {
        let set = PatchSet::new().patch(patch());
        let case = TemplateCase::control_plane(template());
        let patched = case.run_set(&set).unwrap();
        let typed: KubeadmControlPlaneTemplate = patched.typed();
        let labels = typed.spec.unwrap().template.metadata.unwrap().labels.unwrap();
        assert_eq!(labels[LABEL], "true");
        patched.assert_changed_only(&["/spec/template/metadata"]);
        // A real API server keeps every field the patch set (Cluster API's CRDs are built in).
        patched.assert_kept_by_api_server(&capi_ext_render::testing::crds());
    }
}
