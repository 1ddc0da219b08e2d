//! The `worker-labels` patch.

use capi_ext::hooks::v1alpha1::pointer;
use capi_ext::patches::{NamedPatch, PatchContext, PatchError, Selector, Template};

use crate::variables::Variables;

/// The patch: its name (in errors), the templates it selects, what it does.
pub fn patch() -> NamedPatch<Variables> {
    NamedPatch::new("worker-labels", Selector::machine_deployments(["*"]).infrastructure(), apply)
}

/// An example change: a label on the objects made from the template. Replace it with what this
/// patch does; `ctx` has the variables, the builtins and the holder.
fn apply(template: &mut Template, _ctx: &PatchContext<Variables>) -> Result<(), PatchError> {
    template.set(&pointer(["spec", "template", "metadata", "labels", LABEL]), "true")?;
    Ok(())
}

/// The label the example sets.
const LABEL: &str = "with-variables.example.com/worker-labels";

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext::patches::PatchSet;
    use capi_ext_render::testing::TemplateCase;
    use serde_json::json;

    fn template() -> serde_json::Value {
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
            "kind": "GenericInfrastructureMachineTemplate",
            "spec": {"template": {"spec": {}}}
        })
    }

    #[test]
    fn patches_the_template() {
        let set = PatchSet::new().patch(patch());
        let case = TemplateCase::machine_deployment_infrastructure("default-worker", template());
        let patched = case.run_set(&set).unwrap();
        patched.assert_value(&pointer(["spec", "template", "metadata", "labels", LABEL]), "true");
        patched.assert_changed_only(&["/spec/template/metadata"]);
    }
}
