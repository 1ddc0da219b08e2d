//! The `generate-patches` handler: GeneratePatches.

use capi_ext::hook;
use capi_ext::hooks::v1alpha1::*;

use crate::variables::Variables;

/// Answers GeneratePatches for every-hook.
#[hook(GeneratePatches, name = "generate-patches")]
pub async fn generate_patches(req: GeneratePatchesRequest) -> Result<GeneratePatchesResponse, String> {
    let vars: Variables = req.variables().map_err(|e| e.to_string())?;
    let mut response = GeneratePatchesResponse::success();
    if let Some(repository) = vars.image_repository {
        for item in req.items_held_by("Cluster", "spec.controlPlaneRef") {
            let patch = Patch::json().add("/spec/template/spec/imageRepository", repository.clone());
            response = response.patch(item.uid.clone(), patch);
        }
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "generate-patches";

    #[tokio::test]
    async fn answers_success() {
        let extension = capi_ext::Extension::builder().register::<generate_patches>().build().unwrap();
        let request = GeneratePatchesRequest::new();
        let response = extension.call(GeneratePatches, NAME, &request).await.unwrap();
        assert_eq!(response.status, ResponseStatus::Success);
    }
}
