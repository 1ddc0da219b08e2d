//! `generate-patches` (Go: `extension/handlers/topologymutation`, `GeneratePatches`): typed
//! patches of the Dev templates of Cluster API's test module and of the kubeadm templates, in
//! v1beta2 and v1beta1, as the Go extension makes them with `topologymutation.WalkTemplates`.
//!
//! Like Go's walker, a patch picks its templates by type alone ([`Selector::any_template`]),
//! whoever holds them, and a template of a kind the extension has no type for fails the
//! answer (Go's `FailForUnknownTypes`). Unlike Go's, the answer changes only what the
//! patches changed: Go's patch is the difference to the whole template as its types marshal
//! it, so a field its types do not know is removed; here such a field is kept.

use crate::kind;
use crate::semver::Version;
use capi_ext::patches::{NamedPatch, PatchContext, PatchError, PatchSet, Selector, Template};
use capi_ext::schema::IntOrString;
use capi_ext_types::docker::v1beta2 as dev;
use capi_ext_types::kubeadm::{v1beta1, v1beta2};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The variables the patches read (declared by `discover-variables`, see
/// [`variables`](crate::topology::variables)).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Variables {
    /// `kubeadmControlPlaneMaxSurge`: KubeadmControlPlane's rollout `maxSurge` (an integer or
    /// a percentage, as text; empty: unchanged).
    pub kubeadm_control_plane_max_surge: Option<String>,
    /// `files`: files added to the kubeadm config of control plane and worker machines.
    pub files: Vec<FileVariable>,
    /// `preKubeadmCommands`: commands added to the kubeadm config.
    pub pre_kubeadm_commands: Vec<String>,
    /// `kubeadmConfigTemplateAnnotations`: annotations of the KubeadmConfigTemplates.
    pub kubeadm_config_template_annotations: BTreeMap<String, String>,
    /// `imageRepository`: the DevCluster's load balancer image repository.
    pub image_repository: Option<String>,
}

/// One item of the `files` variable.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FileVariable {
    /// The file's path on the machine.
    pub path: String,
    /// Its content.
    pub content: String,
    /// `Raw` or `Template` (empty: unset).
    pub content_format: String,
}

/// The label every patched template gets.
pub const LABEL: (&str, &str) = ("top-level-label-1", "top-level-label-value-1");
/// The annotation every patched template gets.
pub const ANNOTATION: (&str, &str) = ("top-level-annotation-1", "top-level-annotation-value-1");

/// The patches, in the order they run on a template (each type's patch selects only its
/// kind and apiVersion, so at most one edits a template).
pub fn patch_set() -> PatchSet<Variables> {
    PatchSet::new()
        .patch(NamedPatch::new(
            "known-types",
            Selector::any_template(),
            known_type,
        ))
        .patch(NamedPatch::typed(
            "dev-cluster",
            Selector::any_template(),
            dev_cluster,
        ))
        .patch(NamedPatch::typed(
            "kubeadm-control-plane",
            Selector::any_template(),
            kubeadm_control_plane,
        ))
        .patch(NamedPatch::typed(
            "kubeadm-control-plane-v1beta1",
            Selector::any_template(),
            kubeadm_control_plane_v1beta1,
        ))
        .patch(NamedPatch::typed(
            "kubeadm-config",
            Selector::any_template(),
            kubeadm_config,
        ))
        .patch(NamedPatch::typed(
            "kubeadm-config-v1beta1",
            Selector::any_template(),
            kubeadm_config_v1beta1,
        ))
        .patch(NamedPatch::typed(
            "dev-machine",
            Selector::any_template(),
            dev_machine,
        ))
        .patch(NamedPatch::typed(
            "dev-machine-pool",
            Selector::any_template(),
            dev_machine_pool,
        ))
        .patch(NamedPatch::new(
            "as-go-encodes",
            Selector::any_template(),
            as_go_encodes,
        ))
}

/// Go's walker makes its patch from the template as Go's types encode it (`json.Marshal` of
/// the decoded object), not from the template as CAPI sent it: every list of the v1beta2
/// types is `omitempty`, so an empty list CAPI sent is removed by Go's patch, edited or not.
/// The port removes them too, so CAPI stores the same objects with either extension (the
/// differential against the Go extension found it: `preLoadImages: []` in the Dev templates
/// of CAPI's runtimesdk quick-start). v1beta1 types keep some empty lists and write others
/// as `null`; the port does not imitate them.
fn as_go_encodes(template: &mut Template, _: &PatchContext<Variables>) -> Result<(), PatchError> {
    if template.api_version().ends_with("/v1beta2") {
        template.remove_empty_lists();
    }
    Ok(())
}

/// Go's `FailForUnknownTypes`: a template its decoder cannot decode fails the answer.
fn known_type(template: &mut Template, _: &PatchContext<Variables>) -> Result<(), PatchError> {
    let (api_version, kind) = (template.api_version(), template.kind());
    if crate::scheme::knows(api_version, kind) {
        return Ok(());
    }
    Err(format!(
        "no kind {kind:?} is registered for version {api_version:?} in the extension's scheme"
    )
    .into())
}

/// Appends `items` to a list, creating it only when there is something to append (as Go's
/// `append` of nothing to a nil slice leaves it nil).
fn append<T>(list: &mut Option<Vec<T>>, items: Vec<T>) {
    if !items.is_empty() {
        list.get_or_insert_default().extend(items);
    }
}

fn add(map: &mut Option<BTreeMap<String, String>>, (key, value): (&str, &str)) {
    map.get_or_insert_default().insert(key.into(), value.into());
}

/// `labels.AddLabels`/`annotations.AddAnnotations` on the object's own metadata (which
/// Cluster API does not copy from a patched template; the Go extension sets it all the same).
fn add_to_object(metadata: &mut Option<Map<String, Value>>, field: &str, entries: &[(&str, &str)]) {
    let map = metadata
        .get_or_insert_default()
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if !map.is_object() {
        *map = Value::Object(Map::new());
    }
    if let Value::Object(map) = map {
        for (key, value) in entries {
            map.insert((*key).into(), Value::String((*value).into()));
        }
    }
}

fn mark_object(metadata: &mut Option<Map<String, Value>>) {
    add_to_object(metadata, "labels", &[LABEL]);
    add_to_object(metadata, "annotations", &[ANNOTATION]);
}

fn control_plane_version<'a>(ctx: &PatchContext<'a, Variables>) -> Option<&'a str> {
    ctx.builtins
        .control_plane
        .as_ref()
        .map(|c| c.version.as_str())
}

/// `kubernetesVersion=<version>`, `+` replaced (node labels refuse it).
fn node_labels(version: &str) -> String {
    format!("kubernetesVersion={}", version.replace('+', "_"))
}

/// `intstr.Parse`: an integer when the text is one (truncated to 32 bits, as Go's
/// `FromInt32(int32(i))`), else the text.
fn int_or_string(text: &str) -> IntOrString {
    match text.parse::<i64>() {
        Ok(i) => IntOrString::Int(i64::from(i as i32)),
        Err(_) => IntOrString::String(text.to_string()),
    }
}

fn kind_image(version: &str, what: &str) -> Result<String, PatchError> {
    let version = Version::parse_tolerant(version)
        .map_err(|e| format!("could not parse {what} version: {e}"))?;
    let image = kind::image(&version);
    tracing::info!("Setting {what} custom image to {image:?}");
    Ok(image)
}

/// DevClusterTemplate: the load balancer's image repository from `imageRepository` (nothing
/// at all without it).
fn dev_cluster(
    t: &mut dev::DevClusterTemplate,
    ctx: &PatchContext<Variables>,
) -> Result<(), PatchError> {
    let Some(repository) = &ctx.variables.image_repository else {
        return Ok(());
    };
    let template = &mut t.spec.get_or_insert_default().template;
    let metadata = template.metadata.get_or_insert_default();
    add(&mut metadata.labels, LABEL);
    add(&mut metadata.annotations, ANNOTATION);
    if let Some(docker) = template.spec.backend.docker.as_mut() {
        docker
            .load_balancer
            .get_or_insert_default()
            .image_repository = (!repository.is_empty()).then(|| repository.clone());
    }
    Ok(())
}

/// The control plane version, required for the kubeadm control plane patches.
fn required_control_plane_version<'a>(
    ctx: &PatchContext<'a, Variables>,
) -> Result<&'a str, PatchError> {
    control_plane_version(ctx).ok_or_else(|| {
        "could not patch KubeadmControlPlane: could not get builtin.controlPlane.version: variable \"builtin.controlPlane.version\" not found".into()
    })
}

fn arg(name: &str, value: &str) -> v1beta2::ExtraArg {
    v1beta2::ExtraArg {
        name: name.into(),
        value: value.into(),
        ..Default::default()
    }
}

fn kubelet_arg(name: &str, value: &str) -> v1beta2::KubeletExtraArg {
    v1beta2::KubeletExtraArg {
        name: name.into(),
        value: value.into(),
        ..Default::default()
    }
}

fn files_v1beta2(files: &[FileVariable]) -> Vec<v1beta2::File> {
    files
        .iter()
        .map(|f| v1beta2::File {
            path: f.path.clone(),
            content: (!f.content.is_empty()).then(|| f.content.clone()),
            content_format: content_format(&f.content_format),
            owner: Some("root:root".into()),
            permissions: Some("0600".into()),
            ..Default::default()
        })
        .collect()
}

fn files_v1beta1(files: &[FileVariable]) -> Vec<v1beta1::File> {
    files
        .iter()
        .map(|f| v1beta1::File {
            path: f.path.clone(),
            content: (!f.content.is_empty()).then(|| f.content.clone()),
            content_format: content_format(&f.content_format),
            owner: Some("root:root".into()),
            permissions: Some("0600".into()),
            ..Default::default()
        })
        .collect()
}

/// A `contentFormat` as Go casts it: any text, empty for unset.
fn content_format<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    (!text.is_empty())
        .then(|| serde_json::from_value(Value::String(text.into())).ok())
        .flatten()
}

/// KubeadmControlPlaneTemplate v1beta2: verbosity of the control plane components and the
/// kubelet, the Kubernetes version as a node label, `maxSurge`, files and commands.
fn kubeadm_control_plane(
    kcp: &mut v1beta2::KubeadmControlPlaneTemplate,
    ctx: &PatchContext<Variables>,
) -> Result<(), PatchError> {
    let version = required_control_plane_version(ctx)?;
    let template = &mut kcp.spec.get_or_insert_default().template;
    let metadata = template.metadata.get_or_insert_default();
    add(&mut metadata.labels, LABEL);
    add(&mut metadata.annotations, ANNOTATION);
    let spec = template.spec.get_or_insert_default();
    let config = spec.kubeadm_config_spec.get_or_insert_default();
    let cluster = config.cluster_configuration.get_or_insert_default();
    for args in [
        &mut cluster.api_server.get_or_insert_default().extra_args,
        &mut cluster
            .controller_manager
            .get_or_insert_default()
            .extra_args,
        &mut cluster.scheduler.get_or_insert_default().extra_args,
    ] {
        args.get_or_insert_default().push(arg("v", "2"));
    }
    for registration in [
        config
            .init_configuration
            .get_or_insert_default()
            .node_registration
            .get_or_insert_default(),
        config
            .join_configuration
            .get_or_insert_default()
            .node_registration
            .get_or_insert_default(),
    ] {
        registration
            .kubelet_extra_args
            .get_or_insert_default()
            .extend([
                kubelet_arg("v", "2"),
                kubelet_arg("node-labels", &node_labels(version)),
            ]);
    }
    if let Some(surge) = ctx
        .variables
        .kubeadm_control_plane_max_surge
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        let surge = int_or_string(surge);
        tracing::info!("Setting KubeadmControlPlaneMaxSurge to {surge:?}");
        let strategy = spec
            .rollout
            .get_or_insert_default()
            .strategy
            .get_or_insert_default();
        strategy.type_ = v1beta2::Type::RollingUpdate;
        strategy.rolling_update.get_or_insert_default().max_surge = Some(surge);
    }
    append(&mut config.files, files_v1beta2(&ctx.variables.files));
    append(
        &mut config.pre_kubeadm_commands,
        ctx.variables.pre_kubeadm_commands.clone(),
    );
    Ok(())
}

/// KubeadmControlPlaneTemplate v1beta1: the same, in v1beta1's shapes (maps of arguments,
/// `rolloutStrategy`).
fn kubeadm_control_plane_v1beta1(
    kcp: &mut v1beta1::KubeadmControlPlaneTemplate,
    ctx: &PatchContext<Variables>,
) -> Result<(), PatchError> {
    let version = required_control_plane_version(ctx)?;
    let template = &mut kcp.spec.get_or_insert_default().template;
    let metadata = template.metadata.get_or_insert_default();
    add(&mut metadata.labels, LABEL);
    add(&mut metadata.annotations, ANNOTATION);
    let spec = &mut template.spec;
    let config = &mut spec.kubeadm_config_spec;
    let cluster = config.cluster_configuration.get_or_insert_default();
    for args in [
        &mut cluster.api_server.get_or_insert_default().extra_args,
        &mut cluster
            .controller_manager
            .get_or_insert_default()
            .extra_args,
        &mut cluster.scheduler.get_or_insert_default().extra_args,
    ] {
        add(args, ("v", "2"));
    }
    for registration in [
        config
            .init_configuration
            .get_or_insert_default()
            .node_registration
            .get_or_insert_default(),
        config
            .join_configuration
            .get_or_insert_default()
            .node_registration
            .get_or_insert_default(),
    ] {
        add(&mut registration.kubelet_extra_args, ("v", "2"));
        add(
            &mut registration.kubelet_extra_args,
            ("node-labels", &node_labels(version)),
        );
    }
    if let Some(surge) = ctx
        .variables
        .kubeadm_control_plane_max_surge
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        let strategy = spec.rollout_strategy.get_or_insert_default();
        strategy.rolling_update.get_or_insert_default().max_surge = Some(int_or_string(surge));
    }
    append(&mut config.files, files_v1beta1(&ctx.variables.files));
    append(
        &mut config.pre_kubeadm_commands,
        ctx.variables.pre_kubeadm_commands.clone(),
    );
    Ok(())
}

fn kubeadm_config_annotations(
    metadata: &mut Option<Map<String, Value>>,
    ctx: &PatchContext<Variables>,
) {
    let entries: Vec<(&str, &str)> = ctx
        .variables
        .kubeadm_config_template_annotations
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if !entries.is_empty() {
        add_to_object(metadata, "annotations", &entries);
    }
}

/// KubeadmConfigTemplate v1beta2: the kubelet's verbosity, files, commands, annotations.
fn kubeadm_config(
    t: &mut v1beta2::KubeadmConfigTemplate,
    ctx: &PatchContext<Variables>,
) -> Result<(), PatchError> {
    mark_object(&mut t.metadata);
    let spec = t
        .spec
        .get_or_insert_default()
        .template
        .spec
        .get_or_insert_default();
    spec.join_configuration
        .get_or_insert_default()
        .node_registration
        .get_or_insert_default()
        .kubelet_extra_args
        .get_or_insert_default()
        .push(kubelet_arg("v", "2"));
    append(&mut spec.files, files_v1beta2(&ctx.variables.files));
    append(
        &mut spec.pre_kubeadm_commands,
        ctx.variables.pre_kubeadm_commands.clone(),
    );
    kubeadm_config_annotations(&mut t.metadata, ctx);
    Ok(())
}

/// KubeadmConfigTemplate v1beta1: the same in v1beta1's shapes.
fn kubeadm_config_v1beta1(
    t: &mut v1beta1::KubeadmConfigTemplate,
    ctx: &PatchContext<Variables>,
) -> Result<(), PatchError> {
    mark_object(&mut t.metadata);
    let spec = t
        .spec
        .get_or_insert_default()
        .template
        .spec
        .get_or_insert_default();
    let registration = spec
        .join_configuration
        .get_or_insert_default()
        .node_registration
        .get_or_insert_default();
    add(&mut registration.kubelet_extra_args, ("v", "2"));
    append(&mut spec.files, files_v1beta1(&ctx.variables.files));
    append(
        &mut spec.pre_kubeadm_commands,
        ctx.variables.pre_kubeadm_commands.clone(),
    );
    kubeadm_config_annotations(&mut t.metadata, ctx);
    Ok(())
}

/// DevMachineTemplate: the kind image of the control plane's version, or of the
/// MachineDeployment's.
fn dev_machine(
    t: &mut dev::DevMachineTemplate,
    ctx: &PatchContext<Variables>,
) -> Result<(), PatchError> {
    mark_object(&mut t.metadata);
    let image = if let Some(version) = control_plane_version(ctx) {
        kind_image(version, "control plane")?
    } else if let Some(md) = &ctx.builtins.machine_deployment {
        kind_image(&md.version, "MachineDeployment")?
    } else {
        return Err("no version variables found for DevMachineTemplate patch".into());
    };
    let backend = &mut t.spec.get_or_insert_default().template.spec.backend;
    if let Some(docker) = backend.docker.as_mut() {
        docker.custom_image = Some(image);
    }
    Ok(())
}

/// DevMachinePoolTemplate: the kind image of the MachinePool's version.
fn dev_machine_pool(
    t: &mut dev::DevMachinePoolTemplate,
    ctx: &PatchContext<Variables>,
) -> Result<(), PatchError> {
    let template = &mut t.spec.get_or_insert_default().template;
    let metadata = template.metadata.get_or_insert_default();
    add(&mut metadata.labels, LABEL);
    add(&mut metadata.annotations, ANNOTATION);
    let Some(mp) = &ctx.builtins.machine_pool else {
        return Err("no version variables found for DevMachinePoolTemplate patch".into());
    };
    let image = kind_image(&mp.version, "MachinePool")?;
    if let Some(docker) = template
        .spec
        .backend
        .as_mut()
        .and_then(|b| b.docker.as_mut())
    {
        docker.custom_image = Some(image);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext::hooks::v1alpha1::{GeneratePatchesRequest, Patch, ResponseStatus};
    use serde_json::json;

    /// The request items of Cluster API's `TestHandler_GeneratePatches` (handler_test.go), the
    /// objects as Go's types marshal them, without a holder as there.
    fn request() -> GeneratePatchesRequest {
        let cp = json!([{"name": "builtin", "value": {"controlPlane": {"version": "v1.23.0"}}},
                        {"name": "kubeadmControlPlaneMaxSurge", "value": "3"}]);
        let md = json!([{"name": "builtin", "value": {"machineDeployment": {"class": "default-worker", "version": "v1.23.0"}}}]);
        let mp = json!([{"name": "builtin", "value": {"machinePool": {"class": "default-worker", "version": "v1.23.0"}}}]);
        let repo = json!([{"name": "imageRepository", "value": "docker.io"}]);
        let kcp = json!({"kind": "KubeadmControlPlaneTemplate", "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "metadata": {}});
        let machine = json!({"kind": "DevMachineTemplate", "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "metadata": {},
                             "spec": {"template": {"spec": {"backend": {"docker": {}}}}}, "status": {}});
        let pool = json!({"kind": "DevMachinePoolTemplate", "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "metadata": {},
                          "spec": {"template": {"spec": {"backend": {"docker": {}}}}}});
        let cluster = json!({"kind": "DevClusterTemplate", "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "metadata": {},
                             "spec": {"template": {"spec": {"backend": {"docker": {"loadBalancer": {}}}}}}});
        let item = |uid: &str, object: &Value, variables: &Value| json!({"uid": uid, "object": object, "variables": variables, "holderReference": {}});
        serde_json::from_value(json!({"items": [
            item("1", &kcp, &cp), item("2", &machine, &cp), item("3", &machine, &md),
            item("4", &cluster, &repo), item("6", &pool, &mp),
        ]}))
        .unwrap()
    }

    fn ops(patch: &Patch) -> Vec<Value> {
        let Patch::Json(ops) = patch else {
            panic!("a JSON Patch, as Go's walker answers: {patch:?}");
        };
        let mut ops: Vec<Value> = ops
            .iter()
            .map(|op| serde_json::to_value(op).unwrap())
            .collect();
        ops.sort_by_key(|op| op.to_string());
        ops
    }

    #[test]
    fn all_the_templates_are_patched_as_cluster_api_expects() {
        let response = patch_set().generate(&request());
        assert_eq!(
            response.status,
            ResponseStatus::Success,
            "{}",
            response.message
        );
        let meta = json!({"annotations": {"top-level-annotation-1": "top-level-annotation-value-1"},
                          "labels": {"top-level-label-1": "top-level-label-value-1"}});
        let v2 = json!([{"name": "v", "value": "2"}]);
        let kubelet = json!([{"name": "v", "value": "2"}, {"name": "node-labels", "value": "kubernetesVersion=v1.23.0"}]);
        let image = "kindest/node:v1.23.0";
        let machine = json!([
            {"op": "add", "path": "/spec/template/spec/backend/docker/customImage", "value": image},
            {"op": "add", "path": "/metadata/annotations", "value": meta["annotations"]},
            {"op": "add", "path": "/metadata/labels", "value": meta["labels"]}]);
        // Cluster API's expected operations, item by item.
        let expected = [
            (
                "1",
                json!([{"op": "add", "path": "/spec", "value": {"template": {"metadata": meta, "spec": {
                "kubeadmConfigSpec": {
                    "clusterConfiguration": {"apiServer": {"extraArgs": v2}, "controllerManager": {"extraArgs": v2}, "scheduler": {"extraArgs": v2}},
                    "initConfiguration": {"nodeRegistration": {"kubeletExtraArgs": kubelet}},
                    "joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": kubelet}}},
                "rollout": {"strategy": {"rollingUpdate": {"maxSurge": 3}, "type": "RollingUpdate"}}}}}}]),
            ),
            ("2", machine.clone()),
            ("3", machine),
            (
                "4",
                json!([
                {"op": "add", "path": "/spec/template/spec/backend/docker/loadBalancer/imageRepository", "value": "docker.io"},
                {"op": "add", "path": "/spec/template/metadata", "value": meta}]),
            ),
            (
                "6",
                json!([
                {"op": "add", "path": "/spec/template/spec/backend/docker/customImage", "value": image},
                {"op": "add", "path": "/spec/template/metadata", "value": meta}]),
            ),
        ];
        assert_eq!(response.items.len(), expected.len());
        for (item, (uid, want)) in response.items.iter().zip(expected) {
            assert_eq!(item.uid, uid);
            let mut want = want.as_array().unwrap().clone();
            want.sort_by_key(|op| op.to_string());
            assert_eq!(ops(&item.patch), want, "item {uid}");
        }
    }

    #[test]
    fn a_template_of_a_kind_without_a_type_fails_the_answer() {
        let mut request = request();
        request.items[0].object =
            json!({"kind": "FooTemplate", "apiVersion": "example.com/v1", "metadata": {}}).into();
        let response = patch_set().generate(&request);
        assert_eq!(response.status, ResponseStatus::Failure);
        assert!(
            response.message.contains("FooTemplate"),
            "{}",
            response.message
        );
    }

    #[test]
    fn empty_lists_go_as_go_encodes_the_template() {
        let mut request = request();
        request.items.truncate(3);
        let spec = json!({"backend": {"docker": {"preLoadImages": [], "extraMounts": [{"containerPath": "/a", "hostPath": "/b"}]}}});
        request.items[2].object["spec"]["template"]["spec"] = spec;
        let response = patch_set().generate(&request);
        assert_eq!(
            response.status,
            ResponseStatus::Success,
            "{}",
            response.message
        );
        let ops = ops(&response.items[2].patch);
        assert!(
            ops.contains(
                &json!({"op": "remove", "path": "/spec/template/spec/backend/docker/preLoadImages"})
            ),
            "{ops:?}"
        );
        assert!(
            !ops.iter().any(|op| op.to_string().contains("extraMounts")),
            "{ops:?}"
        );
    }

    #[test]
    fn dev_machine_templates_need_a_version() {
        let mut request = request();
        request.items.truncate(3);
        request.items[2].variables.clear();
        let response = patch_set().generate(&request);
        assert_eq!(response.status, ResponseStatus::Failure);
        assert!(
            response.message.contains("no version variables"),
            "{}",
            response.message
        );
    }

    #[test]
    fn max_surge_reads_as_go_reads_it() {
        assert_eq!(int_or_string("3"), IntOrString::Int(3));
        assert_eq!(int_or_string("+3"), IntOrString::Int(3));
        assert_eq!(int_or_string("50%"), IntOrString::String("50%".into()));
        assert_eq!(int_or_string("4294967297"), IntOrString::Int(1));
    }
}
