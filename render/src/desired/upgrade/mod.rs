//! Upgrade sequencing: the Kubernetes version CAPI gives the control plane, each
//! MachineDeployment and each MachinePool of a Cluster whose objects already exist, and the
//! hooks it records as pending on the Cluster on the way (`computeControlPlaneVersion`,
//! `computeMachineDeploymentVersion`, `computeMachinePoolVersion`, the upgrade tracker and the
//! lifecycle hooks' bookkeeping of `exp/topology/desiredstate`).
//!
//! The control plane goes first, one step of the [`plan`] at a time, once it is provisioned and
//! stable; the workers follow once it is, as many at once as the Cluster's upgrade-concurrency
//! annotation allows, in the topology's order, unless deferred. What render cannot know, it
//! says in a warning: the answers of lifecycle hooks (render does not call them and goes on as
//! if none blocked, which is what CAPI does when no extension serves them, unless the input
//! names them blocking: then it holds the upgrade there as CAPI does) and whether a
//! MachinePool's Nodes are upgrading (CAPI reads them from the workload cluster).

mod plan;
mod semver;

pub(crate) use plan::Answer;

use super::{CLUSTER_NAME_LABEL, DEFER_UPGRADE, HOLD_UPGRADE_SEQUENCE, TOPOLOGY_OWNED_LABEL};
use crate::UpgradeHook;
use crate::error::RenderError;
use crate::object::{get, map_value, set, string, string_map};
use capi_ext::CapiVersion;
use serde_json::Value;
use std::collections::BTreeSet;

/// `runtime.cluster.x-k8s.io/pending-hooks`: the hooks CAPI still has to call.
pub(super) const PENDING_HOOKS: &str = "runtime.cluster.x-k8s.io/pending-hooks";
/// The prefix of the Cluster annotations that hold an upgrade as BeforeClusterUpgrade would.
const BEFORE_UPGRADE_HOOK_PREFIX: &str = "before-upgrade.hook.cluster.cluster.x-k8s.io";
/// How many MachineDeployments (and, apart, MachinePools) may upgrade at once (default 1).
const UPGRADE_CONCURRENCY: &str = "topology.cluster.x-k8s.io/upgrade-concurrency";

/// The workers' kind, for the tracker each has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum WorkerKind {
    MachineDeployment,
    MachinePool,
}

impl WorkerKind {
    /// The Cluster's `spec.topology.workers` list of this kind.
    fn list(self) -> &'static str {
        match self {
            WorkerKind::MachineDeployment => "machineDeployments",
            WorkerKind::MachinePool => "machinePools",
        }
    }
}

/// The upgrade tracker of one kind of workers (`WorkerUpgradeTracker`).
#[derive(Default)]
struct Workers {
    plan: Vec<String>,
    upgrading: BTreeSet<String>,
    max_upgrading: usize,
}

/// What the control plane is doing (`ControlPlaneUpgradeTracker`).
#[derive(Default)]
struct ControlPlane {
    provisioning: bool,
    upgrading: bool,
    starting_upgrade: bool,
    pending_upgrade: bool,
    waiting_for_workers: bool,
    plan: Vec<String>,
}

impl ControlPlane {
    /// `IsControlPlaneStable`.
    fn stable(&self) -> bool {
        !self.provisioning && !self.upgrading && !self.starting_upgrade && !self.pending_upgrade
    }

    fn stable_or_waiting_for_workers(&self) -> bool {
        !self.provisioning
            && !self.upgrading
            && !self.starting_upgrade
            && (!self.pending_upgrade || self.waiting_for_workers)
    }
}

/// The upgrade tracker of one reconcile.
pub(super) struct Sequencing {
    topology_version: String,
    capi_version: CapiVersion,
    control_plane: ControlPlane,
    machine_deployments: Workers,
    machine_pools: Workers,
    min_workers_version: String,
    /// The hooks the input says answer with `retryAfterSeconds`.
    blocking: BTreeSet<UpgradeHook>,
    /// Those of them that CAPI called in this reconcile (`HookResponseTracker.IsBlocking`).
    blocked: BTreeSet<UpgradeHook>,
    /// What render could not know and assumed.
    pub warnings: Vec<String>,
}

fn upgrade_error(message: String) -> RenderError {
    RenderError::Upgrade(message)
}

/// The topology-owned objects of `kind` (in `cluster.x-k8s.io`) of the Cluster among `current`.
fn owned<'a>(current: &'a [Value], cluster: &Value, kind: &str) -> Vec<&'a Value> {
    let name = string(cluster, &["metadata", "name"]);
    current
        .iter()
        .filter(|o| {
            string(o, &["kind"]) == kind
                && string(o, &["apiVersion"]).starts_with("cluster.x-k8s.io/")
                && string(o, &["metadata", "labels", CLUSTER_NAME_LABEL]) == name
                && get(o, &["metadata", "labels", TOPOLOGY_OWNED_LABEL]).is_some()
        })
        .collect()
}

fn worker_version(object: &Value) -> &str {
    string(object, &["spec", "template", "spec", "version"])
}

/// The existing workers with a version (kind and name, version), as `ComputeUpgradePlan` reads
/// them.
fn worker_versions(deployments: &[&Value], pools: &[&Value]) -> Vec<(String, String)> {
    deployments
        .iter()
        .chain(pools)
        .filter(|o| !worker_version(o).is_empty())
        .map(|o| {
            (
                format!(
                    "{} {}",
                    string(o, &["kind"]),
                    string(o, &["metadata", "name"])
                ),
                worker_version(o).to_string(),
            )
        })
        .collect()
}

/// The existing control plane's `spec.version`; CAPI cannot plan without it.
fn control_plane_version(control_plane: &Value) -> Result<&str, RenderError> {
    match string(control_plane, &["spec", "version"]) {
        "" => Err(upgrade_error(format!(
            "failed to get the version from control plane spec: {} {} has no spec.version",
            string(control_plane, &["kind"]),
            string(control_plane, &["metadata", "name"])
        ))),
        version => Ok(version),
    }
}

/// The ClusterClass's `spec.upgrade.external.generateUpgradePlanExtension` ("" if none).
fn plan_extension(class: &Value) -> &str {
    string(
        class,
        &[
            "spec",
            "upgrade",
            "external",
            "generateUpgradePlanExtension",
        ],
    )
}

/// What CAPI asks a ClusterClass's GenerateUpgradePlan extension in this reconcile.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanQuestion {
    /// The extension, `<handler>.<ExtensionConfig>`.
    pub extension: String,
    /// `fromControlPlaneKubernetesVersion`.
    pub from_control_plane: String,
    /// `fromWorkersKubernetesVersion` ("" without workers).
    pub from_workers: String,
    /// `toKubernetesVersion`.
    pub to: String,
}

/// The question CAPI puts to the ClusterClass's GenerateUpgradePlan extension before it computes
/// the desired state (`GetUpgradePlanFromExtension`), if it asks one: the class names an
/// extension, the control plane exists, and it or a worker is not at the Cluster's version.
pub(crate) fn plan_question(
    cluster: &Value,
    class: &Value,
    current_control_plane: Option<&Value>,
    current: &[Value],
) -> Result<Option<PlanQuestion>, RenderError> {
    let extension = plan_extension(class);
    let Some(control_plane) = current_control_plane.filter(|_| !extension.is_empty()) else {
        return Ok(None);
    };
    let from_control_plane = control_plane_version(control_plane)?;
    let deployments = owned(current, cluster, "MachineDeployment");
    let pools = owned(current, cluster, "MachinePool");
    let to = string(cluster, &["spec", "topology", "version"]);
    let (from_workers, due) = plan::min_workers(
        to,
        from_control_plane,
        &worker_versions(&deployments, &pools),
    )
    .map_err(upgrade_error)?;
    Ok(due.then(|| PlanQuestion {
        extension: extension.to_string(),
        from_control_plane: from_control_plane.to_string(),
        from_workers,
        to: to.to_string(),
    }))
}

impl Sequencing {
    /// The tracker as `Generate` starts it: the upgrade plan (`ComputeUpgradePlan`) from the
    /// current control plane and workers, and the MachineDeployments whose Machines are not all
    /// at their version marked upgrading.
    pub(super) fn new(
        cluster: &Value,
        class: &Value,
        current_control_plane: Option<&Value>,
        current: &[Value],
        capi_version: CapiVersion,
        answer: Option<&Answer>,
        blocking: &BTreeSet<UpgradeHook>,
    ) -> Result<Self, RenderError> {
        let concurrency = string_map(cluster, &["metadata", "annotations"])
            .get(UPGRADE_CONCURRENCY)
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1);
        let mut sequencing = Sequencing {
            topology_version: string(cluster, &["spec", "topology", "version"]).to_string(),
            capi_version,
            control_plane: ControlPlane::default(),
            machine_deployments: Workers {
                max_upgrading: concurrency,
                ..Workers::default()
            },
            machine_pools: Workers {
                max_upgrading: concurrency,
                ..Workers::default()
            },
            min_workers_version: String::new(),
            blocking: blocking.clone(),
            blocked: BTreeSet::new(),
            warnings: Vec::new(),
        };
        let deployments = owned(current, cluster, "MachineDeployment");
        let pools = owned(current, cluster, "MachinePool");
        if let Some(control_plane) = current_control_plane {
            let control_plane_version = control_plane_version(control_plane)?;
            let workers = worker_versions(&deployments, &pools);
            let versions: Vec<String> = get(class, &["spec", "kubernetesVersions"])
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let extension = plan_extension(class);
            let source = if !extension.is_empty() {
                plan::Source::Extension(extension, answer)
            } else if !versions.is_empty() {
                plan::Source::ClassVersions(&versions)
            } else {
                plan::Source::OneMinor
            };
            let plans = plan::compute(
                &sequencing.topology_version,
                control_plane_version,
                &workers,
                source,
            )
            .map_err(upgrade_error)?;
            sequencing.min_workers_version = plans.min_workers_version;
            sequencing.control_plane.plan = plans.control_plane;
            if !deployments.is_empty() {
                sequencing.machine_deployments.plan = plans.workers.clone();
            }
            if !pools.is_empty() {
                sequencing.machine_pools.plan = plans.workers;
            }
        }
        for deployment in &deployments {
            if machine_deployment_upgrading(deployment, current)? {
                sequencing
                    .machine_deployments
                    .upgrading
                    .insert(string(deployment, &["metadata", "name"]).to_string());
            }
        }
        let with_nodes: Vec<&str> = pools
            .iter()
            .filter(|p| {
                get(p, &["status", "nodeRefs"])
                    .and_then(Value::as_array)
                    .is_some_and(|refs| !refs.is_empty())
            })
            .map(|p| string(p, &["metadata", "name"]))
            .collect();
        if !with_nodes.is_empty() {
            sequencing.warnings.push(format!(
                "MachinePools {with_nodes:?} have Nodes: CAPI reads their kubelet versions from the workload cluster to tell whether they are upgrading; render cannot, and assumed they are not"
            ));
        }
        Ok(sequencing)
    }

    /// Where CAPI calls `hook`: whether it lets the upgrade go on (`callXHook`'s `hookCompleted`).
    /// A hook the input names blocking holds it, and the reconcile remembers it blocked.
    fn lifecycle_hook(&mut self, hook: UpgradeHook, when: String) -> bool {
        if self.blocking.contains(&hook) {
            self.warnings.push(format!(
                "CAPI calls the {hook} hook here ({when}); as asked, it blocks: CAPI holds the upgrade here until it answers without retryAfterSeconds"
            ));
            self.blocked.insert(hook);
            return false;
        }
        self.warnings.push(format!(
            "CAPI calls the {hook} hook here ({when}); render does not call lifecycle hooks and went on as if no extension blocked it"
        ));
        true
    }

    /// The control plane's version (`computeControlPlaneVersion`); `cluster` is the Cluster as
    /// the reconcile holds it, whose pending hooks CAPI updates on the way.
    pub(super) fn control_plane_version(
        &mut self,
        current_control_plane: Option<&Value>,
        cluster: &mut Value,
    ) -> Result<String, RenderError> {
        let topology_version = self.topology_version.clone();
        let Some(current) = current_control_plane else {
            return Ok(topology_version);
        };
        let current_version = string(current, &["spec", "version"]).to_string();
        self.control_plane.pending_upgrade = current_version != topology_version;
        let since_1_13 = self.capi_version >= CapiVersion::new(1, 13);
        let status_versions = self.capi_version >= CapiVersion::new(1, 14);

        if provisioning(current, status_versions) {
            self.control_plane.provisioning = true;
            return Ok(current_version);
        }
        if upgrading(current, status_versions).map_err(upgrade_error)? {
            self.control_plane.upgrading = true;
            // CAPI's recovery when the hooks of a started upgrade step were not recorded.
            if since_1_13 && !pending(cluster, "AfterControlPlaneUpgrade") {
                let hooks = self.hooks_to_mark_pending(&current_version);
                mark_pending(cluster, &hooks);
            }
            return Ok(current_version);
        }
        if pending(cluster, "AfterControlPlaneUpgrade") {
            if !self.lifecycle_hook(
                UpgradeHook::AfterControlPlaneUpgrade,
                format!("the control plane is at {current_version}"),
            ) {
                return Ok(current_version);
            }
            mark_done(cluster, "AfterControlPlaneUpgrade");
        }
        if pending(cluster, "BeforeWorkersUpgrade") {
            let from = self.min_workers_version.clone();
            if !self.lifecycle_hook(
                UpgradeHook::BeforeWorkersUpgrade,
                format!("workers from {from} to {current_version}"),
            ) {
                return Ok(current_version);
            }
            mark_done(cluster, "BeforeWorkersUpgrade");
        }
        let waits_for = |workers: &Workers| workers.plan.first() == Some(&current_version);
        if waits_for(&self.machine_deployments) || waits_for(&self.machine_pools) {
            self.control_plane.waiting_for_workers = true;
            return Ok(current_version);
        }
        if !self.machine_deployments.upgrading.is_empty()
            || !self.machine_pools.upgrading.is_empty()
        {
            return Ok(current_version);
        }
        if pending(cluster, "AfterWorkersUpgrade") {
            if !self.lifecycle_hook(
                UpgradeHook::AfterWorkersUpgrade,
                format!("the workers are at {current_version}"),
            ) {
                return Ok(current_version);
            }
            mark_done(cluster, "AfterWorkersUpgrade");
        }
        if !self.control_plane.pending_upgrade {
            return Ok(current_version);
        }
        if !pending(cluster, "AfterClusterUpgrade") {
            let holds: BTreeSet<String> = string_map(cluster, &["metadata", "annotations"])
                .into_keys()
                .filter(|k| k.starts_with(BEFORE_UPGRADE_HOOK_PREFIX))
                .collect();
            if !holds.is_empty() {
                // Held as a blocking BeforeClusterUpgrade would hold it.
                return Ok(current_version);
            }
            if !self.lifecycle_hook(
                UpgradeHook::BeforeClusterUpgrade,
                format!("from {current_version} to {topology_version}"),
            ) {
                return Ok(current_version);
            }
        }
        mark_pending(cluster, &["AfterClusterUpgrade"]);
        let Some(next) = self.control_plane.plan.first().cloned() else {
            return Err(upgrade_error("cannot compute the control plane version if the control plane is pending upgrade and the upgrade plan is not set".into()));
        };
        if !self.lifecycle_hook(
            UpgradeHook::BeforeControlPlaneUpgrade,
            format!("from {current_version} to {next}"),
        ) {
            return Ok(current_version);
        }
        if !since_1_13 {
            // Before 1.13 the hooks of the step are recorded at once; later, once the control
            // plane's new version is written (after the desired state).
            let hooks = self.hooks_to_mark_pending(&next);
            mark_pending(cluster, &hooks);
        }
        self.control_plane.starting_upgrade = true;
        self.control_plane.pending_upgrade = false;
        Ok(next)
    }

    /// `getHooksToMarkPending`: AfterControlPlaneUpgrade, and the workers' hooks when they
    /// upgrade to that version next.
    fn hooks_to_mark_pending(&self, next: &str) -> Vec<&'static str> {
        let mut hooks = vec!["AfterControlPlaneUpgrade"];
        let next_for = |w: &Workers| w.plan.first().is_some_and(|v| v == next);
        if next_for(&self.machine_deployments) || next_for(&self.machine_pools) {
            hooks.extend(["BeforeWorkersUpgrade", "AfterWorkersUpgrade"]);
        }
        hooks
    }

    /// Whether a hook between the control plane's step and the workers' blocked in this
    /// reconcile (AfterControlPlaneUpgrade or BeforeWorkersUpgrade): the workers wait.
    fn workers_held_by_a_hook(&self) -> bool {
        self.blocked
            .contains(&UpgradeHook::AfterControlPlaneUpgrade)
            || self.blocked.contains(&UpgradeHook::BeforeWorkersUpgrade)
    }

    /// A MachineDeployment's or MachinePool's version (`computeMachineDeploymentVersion`,
    /// `computeMachinePoolVersion`): `entry` is its topology, `existing` the object if it exists.
    pub(super) fn worker_version(
        &mut self,
        kind: WorkerKind,
        topology: &Value,
        entry: &Value,
        existing: Option<&Value>,
    ) -> Result<String, RenderError> {
        let Some(existing) = existing else {
            // `MarkPendingCreate`: computed, but the reconcile does not create it yet.
            if !self.control_plane.stable() || self.workers_held_by_a_hook() {
                let what = match kind {
                    WorkerKind::MachineDeployment => "MachineDeployment",
                    WorkerKind::MachinePool => "MachinePool",
                };
                self.warnings.push(format!(
                    "{what} topology {} is new: CAPI creates it only once the control plane is stable and no hook between the control plane's upgrade and the workers' blocks; until then it is computed (printed here) but not created",
                    string(entry, &["name"])
                ));
            }
            return Ok(self.topology_version.clone());
        };
        let current_version = worker_version(existing).to_string();
        if current_version == self.topology_version {
            return Ok(current_version);
        }
        if deferred(topology, kind, entry) {
            return Ok(current_version);
        }
        if self.workers_held_by_a_hook() {
            return Ok(current_version);
        }
        let control_plane_ready = self.control_plane.stable_or_waiting_for_workers();
        let workers = match kind {
            WorkerKind::MachineDeployment => &mut self.machine_deployments,
            WorkerKind::MachinePool => &mut self.machine_pools,
        };
        if workers.upgrading.len() >= workers.max_upgrading || !control_plane_ready {
            return Ok(current_version);
        }
        let Some(next) = workers.plan.first().cloned() else {
            let what = match kind {
                WorkerKind::MachineDeployment => "machine deployment",
                WorkerKind::MachinePool => "machine pool",
            };
            return Err(upgrade_error(format!(
                "cannot compute the {what} version if the {what} is pending upgrade and the upgrade plan is not set"
            )));
        };
        if next == current_version {
            return Ok(current_version);
        }
        workers
            .upgrading
            .insert(string(existing, &["metadata", "name"]).to_string());
        Ok(next)
    }
}

/// `isMachineDeploymentDeferred`, `isMachinePoolDeferred`: its topology has the defer-upgrade or
/// hold-upgrade-sequence annotation, or one before it in the list holds the sequence.
fn deferred(topology: &Value, kind: WorkerKind, entry: &Value) -> bool {
    let annotations = |e: &Value| string_map(e, &["metadata", "annotations"]);
    let own = annotations(entry);
    if own.contains_key(DEFER_UPGRADE) || own.contains_key(HOLD_UPGRADE_SEQUENCE) {
        return true;
    }
    let name = string(entry, &["name"]);
    for other in get(topology, &["workers", kind.list()])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if annotations(other).contains_key(HOLD_UPGRADE_SEQUENCE) {
            return true;
        }
        if string(other, &["name"]) == name {
            return false;
        }
    }
    false
}

/// The control plane's status version: `status.versions[0]` (from 1.14) or `status.version`.
fn status_version(control_plane: &Value, status_versions: bool) -> Option<&str> {
    if status_versions
        && let Some(first) = get(control_plane, &["status", "versions"])
            .and_then(Value::as_array)
            .and_then(|v| v.first())
    {
        return Some(string(first, &["version"]));
    }
    get(control_plane, &["status", "version"]).and_then(Value::as_str)
}

/// `IsProvisioning`: no status version yet.
fn provisioning(control_plane: &Value, status_versions: bool) -> bool {
    status_version(control_plane, status_versions).is_none_or(str::is_empty)
}

/// `IsUpgrading`: a status version (any of `status.versions`, from 1.14) below `spec.version`.
fn upgrading(control_plane: &Value, status_versions: bool) -> Result<bool, String> {
    let spec = semver::Version::parse_tolerant(string(control_plane, &["spec", "version"]))
        .map_err(|e| format!("failed to check if control plane is upgrading: failed to parse control plane spec version: {e}"))?;
    let below = |status: &str| -> Result<bool, String> {
        let status = semver::Version::parse_tolerant(status).map_err(|e| {
            format!("failed to check if control plane is upgrading: failed to parse control plane status version: {e}")
        })?;
        Ok(spec.compare(&status) >= 1)
    };
    if status_versions
        && let Some(versions) =
            get(control_plane, &["status", "versions"]).and_then(Value::as_array)
        && !versions.is_empty()
    {
        for v in versions {
            if below(string(v, &["version"]))? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    match get(control_plane, &["status", "version"]).and_then(Value::as_str) {
        None | Some("") => Ok(false),
        Some(status) => below(status),
    }
}

/// `IsMachineDeploymentUpgrading`: a Machine it selects is at another version, or its kubelet.
fn machine_deployment_upgrading(
    deployment: &Value,
    current: &[Value],
) -> Result<bool, RenderError> {
    let version = worker_version(deployment);
    if version.is_empty() {
        return Ok(false);
    }
    let name = string(deployment, &["metadata", "name"]);
    let selector = string_map(deployment, &["spec", "selector", "matchLabels"]);
    let namespace = string(deployment, &["metadata", "namespace"]);
    for machine in current.iter().filter(|o| {
        string(o, &["kind"]) == "Machine"
            && string(o, &["apiVersion"]).starts_with("cluster.x-k8s.io/")
            && string(o, &["metadata", "namespace"]) == namespace
    }) {
        let labels = string_map(machine, &["metadata", "labels"]);
        if !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
            continue;
        }
        let machine_version = string(machine, &["spec", "version"]);
        if machine_version.is_empty() {
            return Err(upgrade_error(format!(
                "failed to check if any MachineDeployment is upgrading: failed to list upgrading MachineDeployments: failed to check if MachineDeployment {name} is upgrading: Machine {} has no version",
                string(machine, &["metadata", "name"])
            )));
        }
        let kubelet = string(machine, &["status", "nodeInfo", "kubeletVersion"]);
        if machine_version != version || (!kubelet.is_empty() && kubelet != version) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn pending_list(cluster: &Value) -> BTreeSet<String> {
    string(cluster, &["metadata", "annotations", PENDING_HOOKS])
        .split(',')
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect()
}

/// `hooks.IsPending`.
pub(super) fn pending(cluster: &Value, hook: &str) -> bool {
    string(cluster, &["metadata", "annotations", PENDING_HOOKS])
        .split(',')
        .any(|h| h == hook)
}

fn set_pending(cluster: &mut Value, hooks: BTreeSet<String>) {
    let mut annotations = string_map(cluster, &["metadata", "annotations"]);
    if hooks.is_empty() {
        annotations.remove(PENDING_HOOKS);
    } else {
        annotations.insert(
            PENDING_HOOKS.into(),
            hooks.into_iter().collect::<Vec<_>>().join(","),
        );
    }
    set(
        cluster,
        &["metadata", "annotations"],
        map_value(&annotations),
    );
}

/// `hooks.MarkObjectAsPending`: the hooks added to the sorted list.
fn mark_pending(cluster: &mut Value, hooks: &[&str]) {
    let mut list = pending_list(cluster);
    list.extend(hooks.iter().map(|h| h.to_string()));
    let joined = list.iter().cloned().collect::<Vec<_>>().join(",");
    if string(cluster, &["metadata", "annotations", PENDING_HOOKS]) != joined {
        set_pending(cluster, list);
    }
}

/// `hooks.MarkAsDone` on the object: the hook removed, the annotation with it when empty.
fn mark_done(cluster: &mut Value, hook: &str) {
    let mut list = pending_list(cluster);
    list.remove(hook);
    set_pending(cluster, list);
}

#[cfg(test)]
mod tests;
