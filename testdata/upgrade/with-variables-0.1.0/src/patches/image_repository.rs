//! The `image-repository` patch: the control plane pulls its images from the `imageRepository` variable.

use capi_ext::patches::{NamedPatch, PatchContext, PatchError, Selector, Template};

use crate::variables::Variables;

/// The patch: its name (in errors), the templates it selects, what it does.
pub fn patch() -> NamedPatch<Variables> {
    NamedPatch::new("image-repository", Selector::control_plane().control_plane_template(), apply)
}

/// Sets `spec.template.spec.imageRepository` when the variable is set.
fn apply(template: &mut Template, ctx: &PatchContext<Variables>) -> Result<(), PatchError> {
    if let Some(repository) = &ctx.variables.image_repository {
        template.set("/spec/template/spec/imageRepository", repository.as_str())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext::patches::PatchSet;
    use capi_ext_render::testing::TemplateCase;
    use serde_json::json;

    fn template() -> serde_json::Value {
        json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
            "kind": "GenericControlPlaneTemplate",
            "spec": {"template": {"spec": {}}}
        })
    }

    #[test]
    fn sets_the_image_repository() {
        let set = PatchSet::new().patch(patch());
        let case = TemplateCase::control_plane(template()).variable("imageRepository", "registry.example.com");
        let patched = case.run_set(&set).unwrap();
        patched.assert_value("/spec/template/spec/imageRepository", "registry.example.com");
        patched.assert_changed_only(&["/spec/template/spec/imageRepository"]);
    }

    #[test]
    fn changes_nothing_without_the_variable() {
        let set = PatchSet::new().patch(patch());
        let patched = TemplateCase::control_plane(template()).run_set(&set).unwrap();
        patched.assert_unchanged();
    }
}
