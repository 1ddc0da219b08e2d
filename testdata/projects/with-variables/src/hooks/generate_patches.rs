//! The `generate-patches` handler: GeneratePatches.

use capi_ext::Registration;
use capi_ext::patches::PatchSet;

use crate::patches;
use crate::variables::Variables;

/// Answers GeneratePatches for with-variables with [`patches`], built and checked once, when the
/// extension is built (`src/main.rs` registers it).
pub fn generate_patches<S: Send + Sync + 'static>() -> Registration<S> {
    Registration::patches("generate-patches", patches())
}

/// The patches of `generate-patches`, applied in this order to each template they select; each one
/// lives in `src/patches/` with its tests (`capi-ext create patch NAME` adds one).
pub fn patches() -> PatchSet<Variables> {
    PatchSet::from_iter([
        patches::image_repository::patch(),
        patches::worker_labels::patch(),
        patches::control_plane_labels::patch(),
        // capi-ext:patches (`capi-ext create patch` adds patches above this line)
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext_render::testing::TemplateCase;
    use serde_json::json;

    const NAME: &str = "generate-patches";

    fn extension() -> capi_ext::Extension {
        capi_ext::Extension::builder().handler(generate_patches()).build().unwrap()
    }

    #[tokio::test]
    async fn patches_the_control_plane_template() {
        let template = json!({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
            "kind": "GenericControlPlaneTemplate",
            "spec": {"template": {"spec": {}}}
        });
        let patched = TemplateCase::control_plane(template)
            .variable("imageRepository", "registry.example.com")
            .run(&extension(), NAME)
            .await
            .unwrap();
        patched.assert_value("/spec/template/spec/imageRepository", "registry.example.com");
        patched.assert_changed_only(&["/spec/template/spec/imageRepository"]);
    }
}
