//! An example Cluster API Runtime Extension built with capi-ext: its handlers, its variables
//! and their registration (the binary in `main.rs` serves them).
//!
//! - `BeforeClusterCreate` (`hold-until-approved`): holds the creation of a Cluster until it
//!   carries the annotation `quickstart.capi-ext.io/approved: "true"`;
//! - `AfterControlPlaneInitialized` (`control-plane-ready`): logs the event;
//! - `BeforeClusterDelete` (`hold-delete`): holds deletion until the Cluster carries
//!   `quickstart.capi-ext.io/delete-approved: "true"`;
//! - `DiscoverVariables` (`variables`): declares [`QuickstartVariables`];
//! - `GeneratePatches` (`patches`): sets the image repository on control plane templates,
//!   labels MachineDeployment infrastructure templates with their class, and records the
//!   settings it received on the infrastructure cluster template;
//! - `ValidateTopology` (`validate`): rejects topologies pulling images from docker.io.
//!
//! The setting `retryAfterSeconds` (from the ExtensionConfig) sets how often CAPI asks again
//! while a Cluster is held (default 10).

use capi_ext::hooks::v1alpha1::*;
use capi_ext::topology::TemplateItem;
use capi_ext::{ExtensionBuilder, Variables, hook};
use serde::Deserialize;
use serde_json::json;

/// The annotation that releases a Cluster held before creation.
pub const APPROVED: &str = "quickstart.capi-ext.io/approved";
/// The annotation that releases a Cluster held before deletion.
pub const DELETE_APPROVED: &str = "quickstart.capi-ext.io/delete-approved";
/// The setting that says how often CAPI asks again while a Cluster is held.
pub const RETRY_SETTING: &str = "retryAfterSeconds";
/// The variable this extension declares and reads.
pub const IMAGE_REPOSITORY: &str = "imageRepository";

/// The ClusterClass variables this extension declares (DiscoverVariables) and reads
/// (GeneratePatches, ValidateTopology).
#[derive(Debug, Deserialize, Variables)]
#[serde(rename_all = "camelCase")]
pub struct QuickstartVariables {
    /// Registry the control plane images are pulled from.
    #[schema(
        default = "registry.k8s.io",
        validation(
            rule = "!self.endsWith('/')",
            message = "imageRepository must not end with '/'"
        )
    )]
    pub image_repository: Option<String>,
}

/// The example's handlers, ready for [`capi_ext::Server::run`].
pub fn extension() -> ExtensionBuilder {
    capi_ext::Extension::builder()
        .register::<hold_until_approved>()
        .register::<control_plane_ready>()
        .register::<hold_delete>()
        .variables::<QuickstartVariables>("variables")
        .register::<patches>()
        .register::<validate>()
}

/// Success once `annotation` is `"true"` on the Cluster; until then a blocking answer that
/// asks CAPI to call again after the `retryAfterSeconds` setting (default 10).
fn hold_until<R: RetryResponse>(
    cluster: &capi_ext::objects::Cluster,
    settings: &Settings,
    annotation: &str,
) -> R {
    if cluster
        .metadata
        .annotations
        .get(annotation)
        .map(String::as_str)
        == Some("true")
    {
        return R::success();
    }
    let retry = settings
        .get(RETRY_SETTING)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    R::success().retry_after(retry).with_message(format!(
        "waiting for annotation {annotation}=true on Cluster {}",
        cluster.key()
    ))
}

/// Holds creation until the Cluster is approved.
#[hook(BeforeClusterCreate, timeout = 5)]
pub async fn hold_until_approved(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    hold_until(&req.cluster, &req.settings, APPROVED)
}

/// Notes that a Cluster's control plane is up.
#[hook(AfterControlPlaneInitialized, name = "control-plane-ready")]
pub async fn control_plane_ready(
    req: AfterControlPlaneInitializedRequest,
) -> AfterControlPlaneInitializedResponse {
    tracing::info!(cluster = %req.cluster.key(), "control plane initialized");
    AfterControlPlaneInitializedResponse::success()
}

/// Holds deletion until the Cluster is approved for deletion.
#[hook(BeforeClusterDelete, timeout = 5)]
pub async fn hold_delete(req: BeforeClusterDeleteRequest) -> BeforeClusterDeleteResponse {
    hold_until(&req.cluster, &req.settings, DELETE_APPROVED)
}

/// Patches the templates: the image repository on control plane templates, the class label
/// on MachineDeployment infrastructure templates, and the settings the extension received
/// (ExtensionConfig settings overlaid by the ClusterClass patch's) on the infrastructure
/// cluster template.
#[hook(GeneratePatches)]
pub async fn patches(req: GeneratePatchesRequest) -> Result<GeneratePatchesResponse, String> {
    let vars: QuickstartVariables = req.variables().map_err(|e| e.to_string())?;
    let repository = vars
        .image_repository
        .unwrap_or_else(|| "registry.k8s.io".into());
    let mut response = GeneratePatchesResponse::success();
    for item in &req.items {
        let patch = if item.kind() == "KubeadmControlPlaneTemplate" {
            Patch::json().add(
                "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository",
                repository.clone(),
            )
        } else if item.held_by("Cluster", "spec.controlPlaneRef") {
            Patch::json().add("/spec/template/spec/imageRepository", repository.clone())
        } else if item.held_by("Cluster", "spec.infrastructureRef") {
            Patch::merge(
                json!({"spec": {"template": {"spec": {"extensionSettings": req.settings}}}}),
            )
        } else if item.held_by("MachineDeployment", "spec.template.spec.infrastructureRef") {
            let builtins = item.builtins(&req.variables).map_err(|e| e.to_string())?;
            let class = builtins
                .machine_deployment
                .map(|md| md.class)
                .unwrap_or_default();
            Patch::merge(
                json!({"spec": {"template": {"metadata": {"labels": {"quickstart.capi-ext.io/class": class}}}}}),
            )
        } else {
            continue;
        };
        response = response.patch(item.uid.clone(), patch);
    }
    Ok(response)
}

/// Rejects docker.io (a policy the extension owns, so it can change without touching the
/// ClusterClass; the variable's schema only checks the syntax).
#[hook(ValidateTopology, failure_policy = Fail)]
pub async fn validate(req: ValidateTopologyRequest) -> ValidateTopologyResponse {
    match req.variables::<QuickstartVariables>() {
        Ok(QuickstartVariables {
            image_repository: Some(repo),
        }) if repo.starts_with("docker.io") => ValidateTopologyResponse::failure(format!(
            "{IMAGE_REPOSITORY} {repo} is on docker.io, which is rate limited"
        )),
        Ok(_) => ValidateTopologyResponse::success(),
        Err(e) => ValidateTopologyResponse::failure(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext::Extension;

    fn ext() -> Extension {
        extension().build().unwrap()
    }

    fn fixture<T: serde::de::DeserializeOwned>(hook: &str) -> T {
        let path = format!(
            "{}/../../testdata/hooks/{hook}/request.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[tokio::test]
    async fn holds_until_approved() {
        let mut req: BeforeClusterCreateRequest = fixture("beforeclustercreate");
        let held = ext()
            .call(BeforeClusterCreate, "hold-until-approved", &req)
            .await
            .unwrap();
        assert_eq!(held.retry_after_seconds, 10);
        assert_eq!(
            held.message,
            "waiting for annotation quickstart.capi-ext.io/approved=true on Cluster team-a/prod-1"
        );
        req.cluster
            .metadata
            .annotations
            .insert(APPROVED.into(), "true".into());
        let released = ext()
            .call(BeforeClusterCreate, "hold-until-approved", &req)
            .await
            .unwrap();
        assert_eq!(
            (released.status, released.retry_after_seconds),
            (ResponseStatus::Success, 0)
        );
    }

    #[tokio::test]
    async fn holds_deletion_with_the_configured_retry() {
        let mut req: BeforeClusterDeleteRequest = fixture("beforeclusterdelete");
        req.settings.insert(RETRY_SETTING.into(), "2".into());
        let held = ext()
            .call(BeforeClusterDelete, "hold-delete", &req)
            .await
            .unwrap();
        assert_eq!(held.retry_after_seconds, 2);
        req.cluster
            .metadata
            .annotations
            .insert(DELETE_APPROVED.into(), "true".into());
        assert_eq!(
            ext()
                .call(BeforeClusterDelete, "hold-delete", &req)
                .await
                .unwrap()
                .retry_after_seconds,
            0
        );
    }

    #[tokio::test]
    async fn patches_control_plane_and_workers() {
        let req: GeneratePatchesRequest = fixture("generatepatches");
        let resp = ext().call(GeneratePatches, "patches", &req).await.unwrap();
        assert_eq!(resp.items.len(), 2);
        assert_eq!(
            resp.items[0].patch,
            Patch::json().add(
                "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository",
                "registry.example.com"
            )
        );
        assert_eq!(
            resp.items[1].patch,
            Patch::merge(
                json!({"spec": {"template": {"metadata": {"labels": {"quickstart.capi-ext.io/class": "default-worker"}}}}})
            )
        );
    }

    #[tokio::test]
    async fn rejects_docker_io() {
        let mut req: ValidateTopologyRequest = fixture("validatetopology");
        assert_eq!(
            ext()
                .call(ValidateTopology, "validate", &req)
                .await
                .unwrap()
                .status,
            ResponseStatus::Success
        );
        req.variables[0].value = json!("docker.io/library");
        let resp = ext()
            .call(ValidateTopology, "validate", &req)
            .await
            .unwrap();
        assert_eq!(resp.status, ResponseStatus::Failure);
        assert_eq!(
            resp.message,
            "imageRepository docker.io/library is on docker.io, which is rate limited"
        );
    }

    #[tokio::test]
    async fn declares_its_variable_and_handlers() {
        let vars = ext()
            .call(
                DiscoverVariables,
                "variables",
                &DiscoverVariablesRequest::new(),
            )
            .await
            .unwrap();
        assert_eq!(vars.variables[0].name, IMAGE_REPOSITORY);
        assert_eq!(vars.variables[0].required, Some(false));
        let names: Vec<_> = ext()
            .discover()
            .await
            .handlers
            .into_iter()
            .map(|h| h.name)
            .collect();
        assert_eq!(
            names,
            [
                "hold-until-approved",
                "control-plane-ready",
                "hold-delete",
                "variables",
                "patches",
                "validate"
            ]
        );
    }
}
