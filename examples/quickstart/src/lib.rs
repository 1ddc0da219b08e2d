//! An example Cluster API Runtime Extension built with capi-ext: its handlers, its variables
//! and their registration (the binary in `main.rs` serves them).
//!
//! - `BeforeClusterCreate` (`hold-until-approved`): two gates run together — `approval` holds
//!   the creation of a Cluster until it carries the annotation
//!   `quickstart.capi-ext.io/approved: "true"`, `namespace` refuses Clusters in `kube-system`;
//! - `AfterControlPlaneInitialized` (`control-plane-ready`): logs the event;
//! - `BeforeClusterDelete` (`hold-delete`): holds deletion until the Cluster carries
//!   `quickstart.capi-ext.io/delete-approved: "true"`;
//! - `DiscoverVariables` (`variables`): declares [`QuickstartVariables`];
//! - `GeneratePatches` (`patches`): a [`PatchSet`] of three patches — `image-repository` on
//!   control plane templates, `extension-settings` (the settings it received) on the
//!   infrastructure cluster template, `class-label` on MachineDeployment infrastructure templates;
//! - `ValidateTopology` (`validate`): rejects topologies pulling images from docker.io.
//!
//! The setting `retryAfterSeconds` (from the ExtensionConfig) sets how often CAPI asks again
//! while a Cluster is held (default 10).

use capi_ext::gates::Gates;
use capi_ext::hooks::v1alpha1::*;
use capi_ext::patches::{NamedPatch, PatchContext, PatchError, PatchSet, Selector, Template};
use capi_ext::{ExtensionBuilder, Registration, Variables, hook};
use capi_ext_types::kubeadm::v1beta2::KubeadmControlPlaneTemplate;
use serde::Deserialize;

/// The annotation that releases a Cluster held before creation.
pub const APPROVED: &str = "quickstart.capi-ext.io/approved";
/// The annotation that releases a Cluster held before deletion.
pub const DELETE_APPROVED: &str = "quickstart.capi-ext.io/delete-approved";
/// The setting that says how often CAPI asks again while a Cluster is held.
pub const RETRY_SETTING: &str = "retryAfterSeconds";
/// The label `class-label` sets on MachineDeployment machines.
pub const CLASS_LABEL: &str = "quickstart.capi-ext.io/class";
/// The variable this extension declares and reads.
pub const IMAGE_REPOSITORY: &str = "imageRepository";

/// The ClusterClass variables this extension declares (DiscoverVariables) and reads
/// (GeneratePatches, ValidateTopology).
#[derive(Debug, Deserialize, Variables)]
#[serde(rename_all = "camelCase")]
pub struct QuickstartVariables {
    /// Registry the control plane images are pulled from.
    // The rule in kube-rs's spelling; `#[schema(validation(rule = .., message = ..))]` is the same.
    #[schema(default = "registry.k8s.io")]
    #[x_kube(validation = Rule::new("!self.endsWith('/')")
        .message("imageRepository must not end with '/'")
        .reason(Reason::FieldValueInvalid))]
    pub image_repository: Option<String>,
}

/// The example's handlers, ready for [`capi_ext::Server::run`]. The gates and the patch set
/// are built (and checked) once, here, and shared by every call.
pub fn extension() -> ExtensionBuilder {
    capi_ext::Extension::builder()
        .handler(
            Registration::gates(BeforeClusterCreate, "hold-until-approved", creation_gates())
                .timeout_seconds(5),
        )
        .register::<control_plane_ready>()
        .register::<hold_delete>()
        .variables::<QuickstartVariables>("variables")
        .patches("patches", patch_set())
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

/// `hold-until-approved`: holds creation until the Cluster is approved, and refuses Clusters
/// in `kube-system`.
pub fn creation_gates() -> Gates<BeforeClusterCreateRequest, BeforeClusterCreateResponse> {
    Gates::new()
        .gate("approval", approval)
        .gate("namespace", namespace)
}

/// The `approval` gate: waits for the annotation [`APPROVED`].
pub async fn approval(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    hold_until(&req.cluster, &req.settings, APPROVED)
}

/// The `namespace` gate: Clusters do not belong in `kube-system`.
pub async fn namespace(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    if req.cluster.metadata.namespace == "kube-system" {
        return BeforeClusterCreateResponse::failure(
            "Clusters are not created in kube-system; use a namespace of their own",
        );
    }
    BeforeClusterCreateResponse::success()
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

/// `patches`: the patches, in the order they apply to each template they select.
pub fn patch_set() -> PatchSet<QuickstartVariables> {
    PatchSet::new()
        .patch(NamedPatch::typed(
            "image-repository-kubeadm",
            Selector::control_plane().control_plane_template(),
            kubeadm_image_repository,
        ))
        .patch(NamedPatch::new(
            "image-repository",
            Selector::control_plane().control_plane_template(),
            image_repository,
        ))
        .patch(NamedPatch::new(
            "extension-settings",
            Selector::infrastructure_cluster(),
            extension_settings,
        ))
        .patch(NamedPatch::new(
            "class-label",
            Selector::machine_deployments(["*"]).infrastructure(),
            class_label,
        ))
}

/// The registry of the control plane images (`imageRepository`, default `registry.k8s.io`).
fn repository<'a>(ctx: &PatchContext<'a, QuickstartVariables>) -> &'a str {
    ctx.variables
        .image_repository
        .as_deref()
        .unwrap_or("registry.k8s.io")
}

/// A KubeadmControlPlaneTemplate keeps the registry in the kubeadm cluster configuration: a
/// typed patch (a misspelled field does not compile; fields the type does not know are left
/// as they are).
fn kubeadm_image_repository(
    kcp: &mut KubeadmControlPlaneTemplate,
    ctx: &PatchContext<QuickstartVariables>,
) -> Result<(), PatchError> {
    let spec = kcp
        .spec
        .get_or_insert_default()
        .template
        .spec
        .get_or_insert_default();
    let cluster = spec
        .kubeadm_config_spec
        .get_or_insert_default()
        .cluster_configuration
        .get_or_insert_default();
    cluster.image_repository = Some(repository(ctx).to_string());
    Ok(())
}

/// Other control planes keep it in `spec.imageRepository`: a JSON pointer patch, for kinds
/// without a Rust type.
fn image_repository(
    template: &mut Template,
    ctx: &PatchContext<QuickstartVariables>,
) -> Result<(), PatchError> {
    if template.kind() == "KubeadmControlPlaneTemplate" {
        return Ok(());
    }
    template.set("/spec/template/spec/imageRepository", repository(ctx))?;
    Ok(())
}

/// The settings the extension received (ExtensionConfig settings overlaid by the ClusterClass
/// patch's), recorded on the infrastructure cluster template.
fn extension_settings(
    template: &mut Template,
    ctx: &PatchContext<QuickstartVariables>,
) -> Result<(), PatchError> {
    template.set(
        "/spec/template/spec/extensionSettings",
        serde_json::to_value(ctx.settings)?,
    )?;
    Ok(())
}

/// The label [`CLASS_LABEL`] with the MachineDeployment's class on its machines.
fn class_label(
    template: &mut Template,
    ctx: &PatchContext<QuickstartVariables>,
) -> Result<(), PatchError> {
    let class = ctx
        .builtins
        .machine_deployment
        .as_ref()
        .map(|md| md.class.as_str())
        .unwrap_or_default();
    template.set(
        &pointer(["spec", "template", "metadata", "labels", CLASS_LABEL]),
        class,
    )?;
    Ok(())
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
    use capi_ext_render::testing::TemplateCase;
    use serde_json::json;

    fn ext() -> Extension {
        extension().build().unwrap()
    }

    fn fixture<T: serde::de::DeserializeOwned>(hook: &str) -> T {
        let path = format!(
            "{}/../../cli/fixtures/hooks/{hook}/request.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn template(api_version: &str, kind: &str) -> serde_json::Value {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "t"}, "spec": {"template": {"spec": {}}}})
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
            "approval: waiting for annotation quickstart.capi-ext.io/approved=true on Cluster team-a/prod-1"
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
    async fn a_failing_gate_fails_the_call_even_while_another_holds() {
        let mut req: BeforeClusterCreateRequest = fixture("beforeclustercreate");
        req.cluster.metadata.namespace = "kube-system".into();
        let answer = ext()
            .call(BeforeClusterCreate, "hold-until-approved", &req)
            .await
            .unwrap();
        assert_eq!(answer.status, ResponseStatus::Failure);
        assert_eq!(
            answer.message,
            "namespace: Clusters are not created in kube-system; use a namespace of their own"
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
    async fn kubeadm_control_planes_get_the_repository_in_their_cluster_configuration() {
        let kcp = template(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlaneTemplate",
        );
        let patched = TemplateCase::control_plane(kcp)
            .variable(IMAGE_REPOSITORY, "registry.example.com")
            .run(&ext(), "patches")
            .await
            .unwrap();
        let at = "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository";
        patched.assert_value(at, "registry.example.com");
        // The same, on typed fields.
        let typed: KubeadmControlPlaneTemplate = patched.typed();
        let spec = typed.spec.unwrap().template.spec.unwrap();
        let cluster = spec
            .kubeadm_config_spec
            .unwrap()
            .cluster_configuration
            .unwrap();
        assert_eq!(
            cluster.image_repository.as_deref(),
            Some("registry.example.com")
        );
        patched.assert_changed_only(&[at]);
        // The field exists in KubeadmControlPlaneTemplate's CRD: a real API server keeps it.
        patched.assert_kept_by_api_server(&capi_ext_render::testing::crds());
    }

    #[tokio::test]
    async fn other_control_planes_get_it_in_their_spec_with_a_default() {
        let generic = template(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "GenericControlPlaneTemplate",
        );
        let patched = TemplateCase::control_plane(generic)
            .run(&ext(), "patches")
            .await
            .unwrap();
        patched.assert_value("/spec/template/spec/imageRepository", "registry.k8s.io");
        patched.assert_changed_only(&["/spec/template/spec/imageRepository"]);
    }

    #[tokio::test]
    async fn workers_are_labelled_with_their_class_and_only_that() {
        let machines = template(
            "infrastructure.cluster.x-k8s.io/v1beta2",
            "DockerMachineTemplate",
        );
        let patched = TemplateCase::machine_deployment_infrastructure("gpu-workers", machines)
            .run(&ext(), "patches")
            .await
            .unwrap();
        patched.assert_snapshot(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/snapshots/worker-machine-template.json"
        ));
        patched.assert_changed_only(&["/spec/template/metadata/labels"]);
    }

    #[tokio::test]
    async fn the_infrastructure_cluster_records_the_settings() {
        let cluster = template(
            "infrastructure.cluster.x-k8s.io/v1beta2",
            "DockerClusterTemplate",
        );
        let patched = TemplateCase::infrastructure_cluster(cluster)
            .setting("origin", "test")
            .run(&ext(), "patches")
            .await
            .unwrap();
        patched.assert_value(
            "/spec/template/spec/extensionSettings",
            json!({"origin": "test"}),
        );
    }

    #[test]
    fn each_patch_selects_only_its_templates() {
        let bootstrap = template(
            "bootstrap.cluster.x-k8s.io/v1beta2",
            "KubeadmConfigTemplate",
        );
        let class_label = patch_set().only("class-label").unwrap();
        TemplateCase::machine_deployment_bootstrap("gpu-workers", bootstrap)
            .run_set(&class_label)
            .unwrap()
            .assert_unchanged();
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
        req.variables[0].value = "docker.io/library".into();
        let resp = ext()
            .call(ValidateTopology, "validate", &req)
            .await
            .unwrap();
        assert_eq!(resp.status, ResponseStatus::Failure);
        assert_eq!(
            resp.message,
            "imageRepository docker.io/library is on docker.io, which is rate limited"
        );
        req.variables[0].value = 42.into();
        let resp = ext()
            .call(ValidateTopology, "validate", &req)
            .await
            .unwrap();
        assert_eq!(
            resp.message,
            "variable `imageRepository` does not have the expected shape: invalid type: integer `42`, expected a string"
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
