//! The in-place update hooks of CAPI's test extension (Go: `extension/handlers/inplaceupdate`).
//!
//! `can-update-machine` and `can-update-machineset` declare which of the changes between the
//! current and the desired objects the extension can make in place, as JSON patches to the
//! current objects: the Machine's (or the MachineSet's machine template's) `failureDomain` and
//! `version`; a KubeadmConfig's (or KubeadmConfigTemplate's) etcd image tag and files; a
//! DevMachine's (or DevMachineTemplate's) docker bootstrap timeout. Any other change is left
//! out of the patches, so Cluster API rolls the Machine out instead. `update-machine` pretends
//! to update: it answers "in progress" (retry in 5 s) until 15 to 19 seconds have passed since
//! its first call for the Machine.
//!
//! The infrastructure and bootstrap objects are read as the Go extension's decoder reads them:
//! kinds of `infrastructure.cluster.x-k8s.io/v1beta2` (the test module's Dev and Docker kinds),
//! `bootstrap.cluster.x-k8s.io/v1beta2` and `controlplane.cluster.x-k8s.io/v1beta2` (kubeadm);
//! anything else is a `Failure` naming what could not be read.
//!
//! With the setting `disableInPlaceUpdates: "true"` the extension offers no in-place change,
//! and a call to `update-machine` fails (Cluster API should not have made it).

use capi_ext::hooks::v1alpha1::*;
use capi_ext::objects::MachineSpec;
use capi_ext::patches::diff;
use capi_ext::{ExtensionBuilder, FromRef, State, hook};
use capi_ext_types::docker::v1beta2::DevMachineTemplateSpecTemplateSpec as DevMachineSpec;
use capi_ext_types::kubeadm::v1beta2::Spec as KubeadmConfigSpec;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The setting that turns the in-place updates off (`"true"`).
pub const DISABLE_KEY: &str = "disableInPlaceUpdates";

/// The kind of an object CAPI sent, if the in-place handlers' scheme (v1beta2 only) has it;
/// `what` names the object in the error.
fn known_kind<'a>(object: &'a Value, what: &str) -> Result<&'a str, String> {
    let field = |name: &str| object.get(name).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if kind.is_empty() {
        return Err(format!("{what}: Object 'Kind' is missing"));
    }
    if api_version.ends_with("/v1beta2") && crate::scheme::knows(api_version, kind) {
        Ok(kind)
    } else {
        Err(format!(
            "{what}: no kind {kind:?} is registered for version {api_version:?} (the extension reads the Dev, Docker and kubeadm kinds of v1beta2)"
        ))
    }
}

/// Reads the part of `current` and `desired` at `pointer` as a `T` (absent: `T::default()`),
/// lets `update` copy into the current part what can change in place, and writes it back
/// when it changed.
fn update_part<T>(
    current: &mut Value,
    desired: &Value,
    pointer: &str,
    update: impl FnOnce(&mut T, &T),
) -> Result<(), String>
where
    T: Serialize + DeserializeOwned + Default + PartialEq + Clone,
{
    let read = |object: &Value, which: &str| -> Result<T, String> {
        match object.pointer(pointer) {
            None | Some(Value::Null) => Ok(T::default()),
            Some(part) => serde_json::from_value(part.clone())
                .map_err(|e| format!("the {which} {pointer}: {e}")),
        }
    };
    let mut part = read(current, "current")?;
    let wanted = read(desired, "desired")?;
    let before = part.clone();
    update(&mut part, &wanted);
    if part != before {
        let value = serde_json::to_value(&part).map_err(|e| e.to_string())?;
        set(current, pointer, value);
    }
    Ok(())
}

/// Sets the value at `pointer`, making the objects on the way (the pointers here name object
/// members only).
fn set(object: &mut Value, pointer: &str, value: Value) {
    let mut at = object;
    for token in pointer.split('/').skip(1) {
        if !at.is_object() {
            *at = Value::Object(Default::default());
        }
        at = at
            .as_object_mut()
            .expect("made an object above")
            .entry(unescape_token(token))
            .or_insert(Value::Null);
    }
    *at = value;
}

/// `canUpdateMachineSpec`: the failure domain and the version.
fn machine_spec(current: &mut MachineSpec, desired: &MachineSpec) {
    if current.failure_domain != desired.failure_domain {
        current.failure_domain = desired.failure_domain.clone();
    }
    if current.version != desired.version {
        current.version = desired.version.clone();
    }
}

/// `canUpdateKubeadmConfigSpec`: etcd's image tag and the files.
fn kubeadm_config_spec(current: &mut KubeadmConfigSpec, desired: &KubeadmConfigSpec) {
    let image_tag = |spec: &KubeadmConfigSpec| {
        spec.cluster_configuration
            .as_ref()
            .and_then(|c| c.etcd.as_ref())
            .and_then(|e| e.local.as_ref())
            .and_then(|l| l.image_tag.clone())
    };
    let wanted = image_tag(desired);
    if image_tag(current) != wanted {
        current
            .cluster_configuration
            .get_or_insert_with(Default::default)
            .etcd
            .get_or_insert_with(Default::default)
            .local
            .get_or_insert_with(Default::default)
            .image_tag = wanted;
        // Go's structs are `omitzero`: one the removed tag leaves empty is not written.
        if let Some(cluster) = &mut current.cluster_configuration {
            if let Some(etcd) = &mut cluster.etcd {
                none_if_empty(&mut etcd.local);
            }
            none_if_empty(&mut cluster.etcd);
        }
        none_if_empty(&mut current.cluster_configuration);
    }
    if current.files != desired.files {
        current.files = desired.files.clone();
    }
}

/// `None` for a part left empty, as Go does not write an empty `omitzero` struct.
fn none_if_empty<T: Default + PartialEq>(part: &mut Option<T>) {
    if part.as_ref().is_some_and(|p| *p == T::default()) {
        *part = None;
    }
}

/// The durations of a Dev or Docker machine's spec, as pointers below it: Go decodes each into
/// a `metav1.Duration` and writes it back its own way (`90s` as `1m30s`).
const MACHINE_DURATIONS: &[&str] = &[
    "/backend/docker/bootstrapTimeout",
    "/backend/inMemory/vm/provisioning/startupDuration",
    "/backend/inMemory/node/provisioning/startupDuration",
    "/backend/inMemory/apiServer/provisioning/startupDuration",
    "/backend/inMemory/etcd/provisioning/startupDuration",
    "/bootstrapTimeout",
];

/// Writes the durations of the machine spec at `spec` as Go writes them back after decoding
/// the object: Go's answer is the difference between what CAPI sent and its own encoding of
/// the object, so a duration Go spells otherwise is changed in its patch even when the
/// extension changed nothing. A duration Go cannot read fails, as Go's decoding does.
fn durations_as_go_writes(object: &mut Value, spec: &str) -> Result<(), String> {
    for field in MACHINE_DURATIONS {
        let pointer = format!("{spec}{field}");
        if let Some(Value::String(text)) = object.pointer_mut(&pointer) {
            let nanos = capi_ext::duration::parse_go_nanos(text)
                .ok_or_else(|| format!("{pointer}: time: invalid duration {text:?}"))?;
            *text = capi_ext::duration::format_go(nanos);
        }
    }
    Ok(())
}

/// `canUpdateDevMachineSpec`: the docker backend's bootstrap timeout.
fn dev_machine_spec(current: &mut DevMachineSpec, desired: &DevMachineSpec) {
    if let (Some(current), Some(desired)) = (&mut current.backend.docker, &desired.backend.docker)
        && current.bootstrap_timeout != desired.bootstrap_timeout
    {
        current.bootstrap_timeout = desired.bootstrap_timeout.clone();
    }
}

/// The changes of one infrastructure or bootstrap object the extension makes in place, as a
/// patch to `current`; `spec` is where the object's machine spec is (`/spec` for a machine,
/// `/spec/template/spec` for a template).
fn object_patch(current: &Value, desired: &Value, spec: &str, what: &str) -> Result<Patch, String> {
    let kind = known_kind(current, &format!("current {what}"))?;
    let desired_kind = known_kind(desired, &format!("desired {what}"))?;
    let mut updated = current.clone();
    // Go decodes both objects (a duration it cannot read fails) and writes the current one
    // back its own way, so durations are compared and copied in Go's spelling.
    let with_durations = |object: &Value, kind: &str| -> Result<Option<Value>, String> {
        if !matches!(
            kind,
            "DevMachine" | "DevMachineTemplate" | "DockerMachine" | "DockerMachineTemplate"
        ) {
            return Ok(None);
        }
        let mut object = object.clone();
        durations_as_go_writes(&mut object, spec)?;
        Ok(Some(object))
    };
    if let Some(written) = with_durations(current, kind)? {
        updated = written;
    }
    let desired_written = with_durations(desired, desired_kind)?;
    let desired = desired_written.as_ref().unwrap_or(desired);
    let same = |k: &str| kind == k && desired_kind == k;
    if same("KubeadmConfig") || same("KubeadmConfigTemplate") {
        update_part(&mut updated, desired, spec, kubeadm_config_spec)?;
    } else if same("DevMachine") || same("DevMachineTemplate") {
        update_part(&mut updated, desired, spec, dev_machine_spec)?;
    }
    Ok(Patch::Json(diff(current, &updated)))
}

fn disabled(settings: &Settings) -> bool {
    settings.get(DISABLE_KEY).map(String::as_str) == Some("true")
}

fn machine_patches(req: &CanUpdateMachineRequest) -> Result<CanUpdateMachineResponse, String> {
    let (current, desired) = (&req.current, &req.desired);
    let current_machine = serde_json::to_value(&current.machine).map_err(|e| e.to_string())?;
    let mut machine = current_machine.clone();
    let desired_machine = serde_json::to_value(&desired.machine).map_err(|e| e.to_string())?;
    update_part(&mut machine, &desired_machine, "/spec", machine_spec)?;
    let mut response = CanUpdateMachineResponse::success();
    response.machine_patch = Some(Patch::Json(diff(&current_machine, &machine)));
    response.bootstrap_config_patch = Some(object_patch(
        &current.bootstrap_config,
        &desired.bootstrap_config,
        "/spec",
        "bootstrap config",
    )?);
    response.infrastructure_machine_patch = Some(object_patch(
        &current.infrastructure_machine,
        &desired.infrastructure_machine,
        "/spec",
        "infrastructure machine",
    )?);
    Ok(response)
}

fn machine_set_patches(
    req: &CanUpdateMachineSetRequest,
) -> Result<CanUpdateMachineSetResponse, String> {
    let (current, desired) = (&req.current, &req.desired);
    let current_set = serde_json::to_value(&current.machine_set).map_err(|e| e.to_string())?;
    let mut machine_set = current_set.clone();
    let desired_set = serde_json::to_value(&desired.machine_set).map_err(|e| e.to_string())?;
    update_part(
        &mut machine_set,
        &desired_set,
        "/spec/template/spec",
        machine_spec,
    )?;
    let mut response = CanUpdateMachineSetResponse::success();
    response.machine_set_patch = Some(Patch::Json(diff(&current_set, &machine_set)));
    response.bootstrap_config_template_patch = Some(object_patch(
        &current.bootstrap_config_template,
        &desired.bootstrap_config_template,
        "/spec/template/spec",
        "bootstrap config template",
    )?);
    response.infrastructure_machine_template_patch = Some(object_patch(
        &current.infrastructure_machine_template,
        &desired.infrastructure_machine_template,
        "/spec/template/spec",
        "infrastructure machine template",
    )?);
    Ok(response)
}

/// CanUpdateMachine: the changes to the Machine, its bootstrap config and its infrastructure
/// machine the extension makes in place.
#[hook(CanUpdateMachine, name = "can-update-machine")]
pub async fn can_update_machine(req: CanUpdateMachineRequest) -> CanUpdateMachineResponse {
    tracing::info!(machine = %req.desired.machine.key(), "CanUpdateMachine is called");
    if disabled(&req.settings) {
        return CanUpdateMachineResponse::success();
    }
    machine_patches(&req).unwrap_or_else(CanUpdateMachineResponse::failure)
}

/// CanUpdateMachineSet: the same for a MachineSet's machine template and its templates.
#[hook(CanUpdateMachineSet, name = "can-update-machineset")]
pub async fn can_update_machine_set(
    req: CanUpdateMachineSetRequest,
) -> CanUpdateMachineSetResponse {
    tracing::info!(machine_set = %req.desired.machine_set.key(), "CanUpdateMachineSet is called");
    if disabled(&req.settings) {
        return CanUpdateMachineSetResponse::success();
    }
    machine_set_patches(&req).unwrap_or_else(CanUpdateMachineSetResponse::failure)
}

/// When `update-machine` was first called for each Machine (`namespace/name`): the state the
/// in-place handlers share (Go: a `sync.Map` in its handlers' struct).
#[derive(Clone, Debug, Default)]
pub struct Updates(Arc<Mutex<HashMap<String, Instant>>>);

impl Updates {
    /// Whether the update of `machine` is done at `now`: the first call starts it; a call more
    /// than `took` after the first ends it (and forgets the Machine).
    pub fn done(&self, machine: &str, now: Instant, took: Duration) -> bool {
        let mut started = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match started.get(machine) {
            Some(first) if now.saturating_duration_since(*first) > took => {
                started.remove(machine);
                true
            }
            Some(_) => false,
            None => {
                started.insert(machine.to_string(), now);
                false
            }
        }
    }
}

/// How long a pretended update takes: 15 seconds and up to 4 more (Go: `15+rand.Intn(5)`).
fn update_time() -> Duration {
    let jitter = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() % 5)
        .unwrap_or(0);
    Duration::from_secs(15 + u64::from(jitter))
}

/// UpdateMachine: "updating" (retry in 5 s) until the pretended update is over, then done.
#[hook(UpdateMachine, name = "update-machine")]
pub async fn update_machine(
    State(updates): State<Updates>,
    req: UpdateMachineRequest,
) -> UpdateMachineResponse {
    let machine = req.desired.machine.key();
    tracing::info!(%machine, "UpdateMachine is called");
    if disabled(&req.settings) {
        return UpdateMachineResponse::failure(
            "Unexpected call to UpdateMachine hook after CanUpdateMachine or CanUpdateMachineSet did not return any patches",
        );
    }
    let (message, retry) = if updates.done(&machine, Instant::now(), update_time()) {
        ("Extension completed updating Machine", 0)
    } else {
        ("Extension is updating Machine", 5)
    };
    let mut response = UpdateMachineResponse::success().retry_after(retry);
    response.message = message.to_string();
    tracing::info!(%machine, status = ?response.status, message = %response.message, retry_after_seconds = response.retry_after_seconds, "UpdateMachine response");
    response
}

/// Registers `can-update-machine`, `can-update-machineset` and `update-machine` (the Go
/// extension's names and order).
pub fn register<S>(builder: ExtensionBuilder<S>) -> ExtensionBuilder<S>
where
    S: Send + Sync + 'static,
    Updates: FromRef<S>,
{
    builder
        .register::<can_update_machine>()
        .register::<can_update_machine_set>()
        .register::<update_machine>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn machine(version: &str, failure_domain: &str, data_secret: &str) -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": "m1", "namespace": "ns"},
            "spec": {"clusterName": "c1", "version": version, "failureDomain": failure_domain,
                     "bootstrap": {"dataSecretName": data_secret}},
        })
    }

    fn kubeadm_config(image_tag: &str, file: &str, command: &str) -> Value {
        json!({
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig",
            "metadata": {"name": "m1", "namespace": "ns"},
            "spec": {
                "clusterConfiguration": {"etcd": {"local": {"imageTag": image_tag, "dataDir": "/var/lib/etcd"}}},
                "files": [{"path": file, "content": "x"}],
                "preKubeadmCommands": [command],
            },
        })
    }

    fn dev_machine(timeout: &str, image: &str) -> Value {
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachine",
            "metadata": {"name": "m1", "namespace": "ns"},
            "spec": {"backend": {"docker": {"bootstrapTimeout": timeout, "customImage": image}}},
        })
    }

    fn request(current: [Value; 3], desired: [Value; 3]) -> CanUpdateMachineRequest {
        let objects = |[machine, bootstrap, infra]: [Value; 3]| json!({"machine": machine, "bootstrapConfig": bootstrap, "infrastructureMachine": infra});
        serde_json::from_value(json!({
            "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "kind": "CanUpdateMachineRequest",
            "current": objects(current), "desired": objects(desired),
        }))
        .unwrap()
    }

    fn ops(patch: &Option<Patch>) -> Value {
        match patch {
            Some(Patch::Json(ops)) => serde_json::to_value(ops).unwrap(),
            other => panic!("not a JSON patch: {other:?}"),
        }
    }

    #[tokio::test]
    async fn declares_only_the_changes_it_makes_in_place() {
        let req = request(
            [
                machine("v1.33.0", "fd1", "s1"),
                kubeadm_config("3.5.0", "/a", "one"),
                dev_machine("3m", "kindest/node:v1.33.0"),
            ],
            [
                machine("v1.34.0", "fd2", "s2"),
                kubeadm_config("3.6.0", "/b", "two"),
                dev_machine("5m", "kindest/node:v1.34.0"),
            ],
        );
        let response = can_update_machine(req).await;
        assert_eq!(
            response.status,
            ResponseStatus::Success,
            "{}",
            response.message
        );
        // The version and the failure domain; not the bootstrap data secret.
        assert_eq!(
            ops(&response.machine_patch),
            json!([
                {"op": "replace", "path": "/spec/failureDomain", "value": "fd2"},
                {"op": "replace", "path": "/spec/version", "value": "v1.34.0"},
            ])
        );
        // The etcd image tag and the files; not the commands.
        assert_eq!(
            ops(&response.bootstrap_config_patch),
            json!([
                {"op": "replace", "path": "/spec/clusterConfiguration/etcd/local/imageTag", "value": "3.6.0"},
                {"op": "replace", "path": "/spec/files", "value": [{"path": "/b", "content": "x"}]},
            ])
        );
        // The bootstrap timeout (as Go writes it back); not the image.
        assert_eq!(
            ops(&response.infrastructure_machine_patch),
            json!([{"op": "replace", "path": "/spec/backend/docker/bootstrapTimeout", "value": "5m0s"}])
        );
    }

    #[tokio::test]
    async fn durations_are_written_as_go_writes_them_back() {
        let m = || machine("v1.33.0", "fd1", "s1");
        let config = || kubeadm_config("3.5.0", "/a", "one");
        // Unchanged, yet Go's answer rewrites it: Go diffs CAPI's text with its own encoding.
        let response = can_update_machine(request(
            [m(), config(), dev_machine("90s", "i")],
            [m(), config(), dev_machine("90s", "i")],
        ))
        .await;
        assert_eq!(
            ops(&response.infrastructure_machine_patch),
            json!([{"op": "replace", "path": "/spec/backend/docker/bootstrapTimeout", "value": "1m30s"}])
        );
        let response = can_update_machine(request(
            [m(), config(), dev_machine("soon", "i")],
            [m(), config(), dev_machine("1m0s", "i")],
        ))
        .await;
        assert_eq!(response.status, ResponseStatus::Failure);
        assert!(
            response.message.contains("invalid duration \"soon\""),
            "{}",
            response.message
        );
    }

    #[tokio::test]
    async fn a_removed_etcd_image_tag_leaves_no_empty_parts() {
        let m = || machine("v1.33.0", "fd1", "s1");
        let mut bare = kubeadm_config("3.5.0", "/a", "one");
        bare["spec"]
            .as_object_mut()
            .unwrap()
            .remove("clusterConfiguration");
        let mut tagged = bare.clone();
        tagged["spec"]["clusterConfiguration"] = json!({"etcd": {"local": {"imageTag": "3.5.0"}}});
        let response = can_update_machine(request(
            [m(), tagged, dev_machine("1m0s", "i")],
            [m(), bare, dev_machine("1m0s", "i")],
        ))
        .await;
        assert_eq!(
            ops(&response.bootstrap_config_patch),
            json!([{"op": "remove", "path": "/spec/clusterConfiguration"}])
        );
    }

    #[tokio::test]
    async fn fields_missing_on_one_side_are_added_or_removed() {
        let mut current = machine("v1.33.0", "fd1", "s1");
        current["spec"]
            .as_object_mut()
            .unwrap()
            .remove("failureDomain");
        let mut config = kubeadm_config("3.5.0", "/a", "one");
        config["spec"]
            .as_object_mut()
            .unwrap()
            .remove("clusterConfiguration");
        let mut desired = machine("v1.33.0", "fd1", "s1");
        desired["spec"].as_object_mut().unwrap().remove("version");
        let req = request(
            [current, config, dev_machine("3m0s", "i")],
            [
                desired,
                kubeadm_config("3.6.0", "/a", "one"),
                dev_machine("3m0s", "i"),
            ],
        );
        let response = can_update_machine(req).await;
        assert_eq!(
            ops(&response.machine_patch),
            json!([
                {"op": "remove", "path": "/spec/version"},
                {"op": "add", "path": "/spec/failureDomain", "value": "fd1"},
            ])
        );
        assert_eq!(
            ops(&response.bootstrap_config_patch),
            json!([{"op": "add", "path": "/spec/clusterConfiguration",
                    "value": {"etcd": {"local": {"imageTag": "3.6.0"}}}}])
        );
        assert_eq!(ops(&response.infrastructure_machine_patch), json!([]));
    }

    #[tokio::test]
    async fn other_kinds_of_the_scheme_change_nothing_and_unknown_kinds_fail() {
        let docker = |image: &str| {
            let mut m = dev_machine("3m", image);
            m["kind"] = json!("DockerMachine");
            m["spec"] = json!({"customImage": image});
            m
        };
        let m = || machine("v1.33.0", "fd1", "s1");
        let config = || kubeadm_config("3.5.0", "/a", "one");
        let response = can_update_machine(request(
            [m(), config(), docker("a")],
            [m(), config(), docker("b")],
        ))
        .await;
        assert_eq!(response.status, ResponseStatus::Success);
        assert_eq!(ops(&response.infrastructure_machine_patch), json!([]));

        let mut foreign = dev_machine("3m", "i");
        foreign["apiVersion"] = json!("infrastructure.cluster.x-k8s.io/v1beta1");
        let response = can_update_machine(request(
            [m(), config(), foreign.clone()],
            [m(), config(), foreign],
        ))
        .await;
        assert_eq!(response.status, ResponseStatus::Failure);
        assert!(
            response.message.contains("current infrastructure machine")
                && response
                    .message
                    .contains("\"infrastructure.cluster.x-k8s.io/v1beta1\""),
            "{}",
            response.message
        );
        // A Machine without a bootstrap config: Go's decoder cannot read the empty object.
        let response = can_update_machine(request(
            [m(), Value::Null, docker("a")],
            [m(), Value::Null, docker("a")],
        ))
        .await;
        assert_eq!(response.status, ResponseStatus::Failure);
        assert!(
            response.message.contains("'Kind' is missing"),
            "{}",
            response.message
        );
    }

    #[tokio::test]
    async fn machine_sets_are_read_at_their_templates() {
        let set = |version: &str| {
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                   "metadata": {"name": "ms1", "namespace": "ns"},
                   "spec": {"clusterName": "c1", "replicas": 1,
                            "template": {"spec": {"clusterName": "c1", "version": version}}}})
        };
        let template = |kind: &str, api_version: &str, spec: Value| {
            json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "t", "namespace": "ns"},
                   "spec": {"template": {"spec": spec}}})
        };
        let bootstrap = |files: Value| {
            template(
                "KubeadmConfigTemplate",
                "bootstrap.cluster.x-k8s.io/v1beta2",
                json!({"files": files}),
            )
        };
        let infra = |timeout: &str| {
            template(
                "DevMachineTemplate",
                "infrastructure.cluster.x-k8s.io/v1beta2",
                json!({"backend": {"docker": {"bootstrapTimeout": timeout}}}),
            )
        };
        let objects = |version: &str, files: Value, timeout: &str| {
            json!({"machineSet": set(version), "bootstrapConfigTemplate": bootstrap(files),
                   "infrastructureMachineTemplate": infra(timeout)})
        };
        let req: CanUpdateMachineSetRequest = serde_json::from_value(json!({
            "current": objects("v1.33.0", json!([]), "3m"),
            "desired": objects("v1.34.0", json!([{"path": "/f", "content": ""}]), "5m"),
        }))
        .unwrap();
        let response = can_update_machine_set(req.clone()).await;
        assert_eq!(
            response.status,
            ResponseStatus::Success,
            "{}",
            response.message
        );
        assert_eq!(
            ops(&response.machine_set_patch),
            json!([{"op": "replace", "path": "/spec/template/spec/version", "value": "v1.34.0"}])
        );
        assert_eq!(
            ops(&response.bootstrap_config_template_patch),
            json!([{"op": "replace", "path": "/spec/template/spec/files", "value": [{"path": "/f", "content": ""}]}])
        );
        assert_eq!(
            ops(&response.infrastructure_machine_template_patch),
            json!([{"op": "replace", "path": "/spec/template/spec/backend/docker/bootstrapTimeout", "value": "5m0s"}])
        );

        let mut disabled = req;
        disabled.settings.insert(DISABLE_KEY.into(), "true".into());
        let response = can_update_machine_set(disabled).await;
        assert_eq!(response.status, ResponseStatus::Success);
        assert!(
            response.machine_set_patch.is_none()
                && response.bootstrap_config_template_patch.is_none()
        );
    }

    #[test]
    fn an_update_takes_its_time_then_is_forgotten() {
        let updates = Updates::default();
        let start = Instant::now();
        let took = Duration::from_secs(15);
        assert!(!updates.done("ns/m1", start, took));
        assert!(!updates.done("ns/m1", start + Duration::from_secs(10), took));
        assert!(!updates.done("ns/m2", start + Duration::from_secs(10), took));
        assert!(updates.done("ns/m1", start + Duration::from_secs(16), took));
        // Forgotten: the next call starts a new update.
        assert!(!updates.done("ns/m1", start + Duration::from_secs(17), took));
        assert!((15..20).contains(&update_time().as_secs()));
    }

    #[tokio::test]
    async fn update_machine_answers_in_progress_then_fails_when_disabled() {
        let extension = register(capi_ext::Extension::builder().state(Updates::default()))
            .build()
            .unwrap();
        let mut req: UpdateMachineRequest = serde_json::from_value(json!({
            "desired": {"machine": machine("v1.34.0", "fd1", "s1")},
        }))
        .unwrap();
        let response = extension
            .call(UpdateMachine, "update-machine", &req)
            .await
            .unwrap();
        assert_eq!(
            (
                response.status,
                response.retry_after_seconds,
                response.message.as_str()
            ),
            (ResponseStatus::Success, 5, "Extension is updating Machine")
        );
        req.settings.insert(DISABLE_KEY.into(), "true".into());
        let response = extension
            .call(UpdateMachine, "update-machine", &req)
            .await
            .unwrap();
        assert_eq!(response.status, ResponseStatus::Failure);
    }
}
