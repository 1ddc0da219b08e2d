//! What Cluster API does when the objects of a Cluster's topology change, so that two renders of
//! the same Cluster (by two versions of an extension) say which objects change and whether
//! Machines are replaced.
//!
//! The rules are CAPI's (v1.14; the same since v1.12), each cited where it is applied:
//! - the topology controller (`core/reconcilers/topology/cluster/reconcile_state.go`) patches the
//!   InfrastructureCluster, the ControlPlane and a MachinePool's bootstrap config and
//!   infrastructure machine pool in place (`reconcileReferencedObject`, server-side apply of the
//!   desired object);
//! - it rotates a template whose `spec` changes (`reconcileReferencedTemplate`: a new template
//!   under a new name, the reference moved to it) and patches it in place when only its metadata
//!   changes ("This avoids recreating machines"): the control plane's machine template and each
//!   MachineDeployment's bootstrap and infrastructure templates;
//! - a MachineDeployment whose `spec.template.spec` references another template is not up to date
//!   (`core/reconcilers/machinedeployment/mdutil/util.go`, `MachineTemplateUpToDate`): a new
//!   MachineSet replaces its Machines (with the `InPlaceUpdates` feature gate, an extension that
//!   accepts the change may update them in place instead);
//! - KubeadmControlPlane (`controlplane/kubeadm/pkg/filters.go`, `UpToDate`) replaces a Machine
//!   whose version, KubeadmConfig (its `spec.kubeadmConfigSpec`, except the fields
//!   `PrepareKubeadmConfigsForDiff` clears) or infrastructure template differs, or once
//!   `spec.rollout.after`/`before` passes; the rest of `spec.machineTemplate` is propagated to
//!   the Machines in place. Other control plane providers decide for themselves.
//!
//! ```
//! use capi_ext_render::Rendered;
//! use capi_ext_render::change::{Effect, Role, Rollout, compare};
//! use serde_json::json;
//!
//! let template = |arch: &str| json!({
//!     "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
//!     "kind": "GenericInfrastructureMachineTemplate",
//!     "metadata": {"name": "demo-md-0-abcde"},
//!     "spec": {"template": {"spec": {"arch": arch}}}});
//! let render = |arch: &str| Rendered {
//!     objects: vec![template(arch)],
//!     roles: vec![Role::MachineDeploymentInfrastructureTemplate("md-0".into())],
//!     ..Rendered::default()
//! };
//! let changes = compare(&render("amd64"), &render("arm64"));
//! assert_eq!(changes[0].effect, Effect::TemplateRotated);
//! assert_eq!(changes[0].rollout(), Rollout::Yes);
//! assert_eq!(changes[0].fields[0].path, "spec.template.spec.arch");
//! assert_eq!(changes[0].rolls_out().as_deref(), Some("MachineDeployment md-0"));
//! ```

use crate::object::string;
use crate::output::Rendered;
use serde_json::Value;
use std::fmt;

/// What a rendered object is to its Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The InfrastructureCluster.
    InfrastructureCluster,
    /// The ControlPlane.
    ControlPlane,
    /// The control plane's infrastructure machine template.
    ControlPlaneMachineTemplate,
    /// The bootstrap template of the MachineDeployment with this topology name.
    MachineDeploymentBootstrapTemplate(String),
    /// The infrastructure machine template of the MachineDeployment with this topology name.
    MachineDeploymentInfrastructureTemplate(String),
    /// The MachineDeployment with this topology name.
    MachineDeployment(String),
    /// The bootstrap config of the MachinePool with this topology name.
    MachinePoolBootstrapConfig(String),
    /// The infrastructure machine pool of the MachinePool with this topology name.
    MachinePoolInfrastructure(String),
    /// The MachinePool with this topology name.
    MachinePool(String),
    /// The control plane's MachineHealthCheck.
    ControlPlaneMachineHealthCheck,
    /// The MachineHealthCheck of the MachineDeployment with this topology name.
    MachineDeploymentMachineHealthCheck(String),
    /// The fields of the Cluster its topology controller owns: labels, annotations and the
    /// references to the infrastructure cluster and the control plane.
    Cluster,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::InfrastructureCluster => f.write_str("the infrastructure cluster"),
            Role::ControlPlane => f.write_str("the control plane"),
            Role::ControlPlaneMachineTemplate => {
                f.write_str("the control plane's infrastructure machine template")
            }
            Role::MachineDeploymentBootstrapTemplate(md) => {
                write!(f, "MachineDeployment {md}'s bootstrap template")
            }
            Role::MachineDeploymentInfrastructureTemplate(md) => {
                write!(f, "MachineDeployment {md}'s infrastructure template")
            }
            Role::MachineDeployment(md) => write!(f, "MachineDeployment {md}"),
            Role::MachinePoolBootstrapConfig(mp) => {
                write!(f, "MachinePool {mp}'s bootstrap config")
            }
            Role::MachinePool(mp) => write!(f, "MachinePool {mp}"),
            Role::ControlPlaneMachineHealthCheck => {
                write!(f, "the control plane's MachineHealthCheck")
            }
            Role::MachineDeploymentMachineHealthCheck(md) => {
                write!(f, "MachineDeployment {md}'s MachineHealthCheck")
            }
            Role::MachinePoolInfrastructure(mp) => {
                write!(f, "MachinePool {mp}'s infrastructure machine pool")
            }
            Role::Cluster => f.write_str("the Cluster"),
        }
    }
}

/// What CAPI does with a change, from the mildest to the strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// A new object (an input change added it: a MachineDeployment topology, a health check):
    /// CAPI creates it; Machines a new MachineDeployment or MachinePool makes replace none.
    Created,
    /// An object no longer computed (an input change removed it): CAPI deletes it, with the
    /// Machines of a MachineDeployment or MachinePool (deleted, not replaced).
    Deleted,
    /// Only labels or annotations changed: CAPI patches the object in place.
    MetadataInPlace,
    /// Patched in place, no Machine replaced: an infrastructure cluster, or control plane fields
    /// KubeadmControlPlane propagates to its Machines in place.
    InPlace,
    /// Patched in place; whether Machines are replaced is up to the provider (a control plane
    /// other than KubeadmControlPlane, a MachinePool's bootstrap config or infrastructure).
    ProviderDecides,
    /// The template's spec changed: CAPI rotates it and what references it (the control plane, a
    /// MachineDeployment) replaces its Machines.
    TemplateRotated,
    /// KubeadmControlPlane replaces its Machines: the field decides whether a Machine is up to date.
    ControlPlaneRollout,
    /// The MachineDeployment's machine template changed where a new MachineSet replaces its
    /// Machines (version, bootstrap, infrastructure reference, failure domain).
    MachineDeploymentRollout,
}

impl Effect {
    /// Whether Machines are replaced.
    pub fn rollout(self) -> Rollout {
        match self {
            Effect::Created | Effect::Deleted | Effect::MetadataInPlace | Effect::InPlace => {
                Rollout::No
            }
            Effect::ProviderDecides => Rollout::ProviderDecides,
            Effect::TemplateRotated
            | Effect::ControlPlaneRollout
            | Effect::MachineDeploymentRollout => Rollout::Yes,
        }
    }

    /// A short stable name (`template-rotated`), for `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Effect::Created => "created",
            Effect::Deleted => "deleted",
            Effect::MetadataInPlace => "metadata-in-place",
            Effect::InPlace => "in-place",
            Effect::ProviderDecides => "provider-decides",
            Effect::TemplateRotated => "template-rotated",
            Effect::ControlPlaneRollout => "control-plane-rollout",
            Effect::MachineDeploymentRollout => "machine-deployment-rollout",
        }
    }
}

/// Whether a change replaces Machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rollout {
    /// No Machine is replaced.
    No,
    /// The provider decides (CAPI does not say).
    ProviderDecides,
    /// Machines are replaced.
    Yes,
}

impl Rollout {
    /// `no`, `provider-decides` or `yes`, for `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Rollout::No => "no",
            Rollout::ProviderDecides => "provider-decides",
            Rollout::Yes => "yes",
        }
    }
}

/// One field that differs between two renders of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// Where: `spec.template.spec.files[0].content`, `metadata.labels["app.kubernetes.io/name"]`.
    pub path: String,
    /// The value before (`None`: absent).
    pub before: Option<Value>,
    /// The value after (`None`: removed; CAPI's server-side apply drops a field it no longer sets).
    pub after: Option<Value>,
    /// What CAPI does because of this field.
    pub effect: Effect,
}

/// A rendered object that differs between two renders.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectChange {
    /// What the object is.
    pub role: Role,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// The fields that differ, in path order.
    pub fields: Vec<FieldChange>,
    /// The strongest effect of its fields.
    pub effect: Effect,
    /// The object before.
    pub before: Value,
    /// The object after.
    pub after: Value,
}

impl ObjectChange {
    /// Whether Machines are replaced.
    pub fn rollout(&self) -> Rollout {
        self.effect.rollout()
    }

    /// What replaces its Machines (`the control plane`, `MachineDeployment md-0`,
    /// `MachinePool mp-0`) when this change rolls out or may.
    pub fn rolls_out(&self) -> Option<String> {
        if self.rollout() == Rollout::No {
            return None;
        }
        Some(match &self.role {
            Role::Cluster => "the Cluster".into(),
            Role::InfrastructureCluster => "the infrastructure cluster".into(),
            Role::ControlPlane
            | Role::ControlPlaneMachineTemplate
            | Role::ControlPlaneMachineHealthCheck => "the control plane".into(),
            Role::MachineDeploymentBootstrapTemplate(md)
            | Role::MachineDeploymentInfrastructureTemplate(md)
            | Role::MachineDeployment(md)
            | Role::MachineDeploymentMachineHealthCheck(md) => {
                format!("MachineDeployment {md}")
            }
            Role::MachinePoolBootstrapConfig(mp)
            | Role::MachinePoolInfrastructure(mp)
            | Role::MachinePool(mp) => {
                format!("MachinePool {mp}")
            }
        })
    }

    /// What CAPI does, in a sentence.
    pub fn consequence(&self) -> String {
        let decided_by = self
            .fields
            .iter()
            .find(|f| f.effect == self.effect)
            .map_or("", |f| f.path.as_str());
        match (self.effect, &self.role) {
            (Effect::Created, _) => "CAPI creates it".into(),
            (Effect::Deleted, Role::MachineDeployment(_) | Role::MachinePool(_)) => {
                "CAPI deletes it and its Machines (deleted, not replaced)".into()
            }
            (Effect::Deleted, _) => "CAPI deletes it".into(),
            (Effect::MetadataInPlace, _) => {
                "labels/annotations only: CAPI patches it in place, no Machine is replaced".into()
            }
            (Effect::InPlace, Role::ControlPlane) => format!(
                "CAPI patches it in place and {} propagates these fields to its Machines in place",
                self.kind
            ),
            (Effect::InPlace, _) => "CAPI patches it in place, no Machine is replaced".into(),
            (Effect::ProviderDecides, Role::ControlPlane) => format!(
                "CAPI patches it in place ({decided_by}); whether {} replaces its Machines is up to its provider",
                self.kind
            ),
            (Effect::ProviderDecides, _) => format!(
                "CAPI patches it in place ({decided_by}); whether {} replaces its Machines is up to its providers",
                self.rolls_out().unwrap_or_default()
            ),
            (Effect::TemplateRotated, Role::ControlPlaneMachineTemplate) => format!(
                "its spec changed ({decided_by}): CAPI rotates the template and the control plane replaces its Machines"
            ),
            (Effect::TemplateRotated, _) => format!(
                "its spec changed ({decided_by}): CAPI rotates the template and {} rolls out (a new MachineSet replaces its Machines)",
                self.rolls_out().unwrap_or_default()
            ),
            (Effect::MachineDeploymentRollout, _) => format!(
                "a new MachineSet replaces its Machines: {decided_by} decides whether a Machine is up to date"
            ),
            (Effect::ControlPlaneRollout, _) => format!(
                "{} replaces its Machines: {decided_by} decides whether a Machine is up to date",
                self.kind
            ),
        }
    }
}

/// The objects that differ between two renders of the same Cluster, each with the fields that
/// differ and what CAPI does about them. Objects are paired by role (the infrastructure
/// cluster, MachineDeployment md-0's bootstrap template...): the same Cluster and ClusterClass
/// render the same roles; where the inputs changed, an object of a role only `after` has is
/// [`Effect::Created`], one only `before` has [`Effect::Deleted`] (listed last).
pub fn compare(before: &Rendered, after: &Rendered) -> Vec<ObjectChange> {
    let mut changes = Vec::new();
    let in_before = |role: &Role| {
        before
            .roles
            .iter()
            .position(|r| r == role)
            .and_then(|i| before.objects.get(i))
    };
    for (new, role) in after.objects.iter().zip(&after.roles) {
        let Some(old) = in_before(role) else {
            changes.push(whole(role, Effect::Created, Value::Null, new.clone()));
            continue;
        };
        if old == new {
            continue;
        }
        let mut fields = Vec::new();
        differences(Some(old), Some(new), &mut Vec::new(), &mut fields);
        let kind = string(new, &["kind"]).to_string();
        let api_version = string(new, &["apiVersion"]).to_string();
        let fields: Vec<FieldChange> = fields
            .into_iter()
            .map(|(segments, before, after)| FieldChange {
                effect: effect(role, &kind, &api_version, &segments, &before, &after),
                path: path_string(&segments),
                before,
                after,
            })
            .collect();
        let Some(effect) = fields.iter().map(|f| f.effect).max() else {
            continue;
        };
        changes.push(ObjectChange {
            role: role.clone(),
            kind,
            name: string(new, &["metadata", "name"]).to_string(),
            fields,
            effect,
            before: old.clone(),
            after: new.clone(),
        });
    }
    for (old, role) in before.objects.iter().zip(&before.roles) {
        if !after.roles.contains(role) {
            changes.push(whole(role, Effect::Deleted, old.clone(), Value::Null));
        }
    }
    changes
}

/// An object created or deleted as a whole (no fields listed).
fn whole(role: &Role, effect: Effect, before: Value, after: Value) -> ObjectChange {
    let object = if after.is_null() { &before } else { &after };
    ObjectChange {
        role: role.clone(),
        kind: string(object, &["kind"]).to_string(),
        name: string(object, &["metadata", "name"]).to_string(),
        fields: Vec::new(),
        effect,
        before,
        after,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

type Difference = (Vec<Segment>, Option<Value>, Option<Value>);

/// The leaves where two values differ; arrays of different lengths differ as a whole.
fn differences(
    a: Option<&Value>,
    b: Option<&Value>,
    at: &mut Vec<Segment>,
    out: &mut Vec<Difference>,
) {
    match (a, b) {
        _ if a == b => {}
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                at.push(Segment::Key(key.clone()));
                differences(x.get(key), y.get(key), at, out);
                at.pop();
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                at.push(Segment::Index(i));
                differences(Some(p), Some(q), at, out);
                at.pop();
            }
        }
        _ => out.push((at.clone(), a.cloned(), b.cloned())),
    }
}

fn path_string(segments: &[Segment]) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Key(key)
                if !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Key(key) => out.push_str(&format!("[{}]", Value::String(key.clone()))),
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn keys(segments: &[Segment]) -> Vec<&str> {
    segments
        .iter()
        .map(|s| match s {
            Segment::Key(k) => k.as_str(),
            Segment::Index(_) => "[]",
        })
        .collect()
}

fn empty(value: &Option<Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        _ => false,
    }
}

/// What CAPI does when this field of an object with this role changes.
fn effect(
    role: &Role,
    kind: &str,
    api_version: &str,
    segments: &[Segment],
    before: &Option<Value>,
    after: &Option<Value>,
) -> Effect {
    let keys = keys(segments);
    // reconcileReferencedTemplate / reconcileReferencedObject: changes outside `spec` (labels,
    // annotations) patch the object in place, templates included (HasSpecChanges is false).
    if keys.first() != Some(&"spec") {
        return Effect::MetadataInPlace;
    }
    match role {
        // CAPI patches a MachineHealthCheck in place; it replaces no Machine by itself (only
        // the unhealthy ones it remediates, whatever changed).
        // reconcileCluster patches the Cluster's references in place (CAPI sets them once).
        Role::Cluster
        | Role::InfrastructureCluster
        | Role::ControlPlaneMachineHealthCheck
        | Role::MachineDeploymentMachineHealthCheck(_) => Effect::InPlace,
        Role::ControlPlaneMachineTemplate
        | Role::MachineDeploymentBootstrapTemplate(_)
        | Role::MachineDeploymentInfrastructureTemplate(_) => Effect::TemplateRotated,
        Role::MachinePoolBootstrapConfig(_) | Role::MachinePoolInfrastructure(_) => {
            Effect::ProviderDecides
        }
        Role::ControlPlane
            if kind == "KubeadmControlPlane"
                && api_version.starts_with("controlplane.cluster.x-k8s.io/") =>
        {
            kubeadm_control_plane(&keys[1..], before, after)
        }
        Role::ControlPlane => Effect::ProviderDecides,
        Role::MachineDeployment(_) => machine_deployment(&keys[1..]),
        Role::MachinePool(_) => machine_pool(&keys[1..]),
    }
}

/// A MachinePool, for a field under `spec`: its machine template's version and references
/// reach the infrastructure provider, which decides whether its instances are replaced (CAPI's
/// MachinePool controller replaces none itself); replicas, failure domains, labels, annotations,
/// timeouts, taints and minReadySeconds are patched in place.
fn machine_pool(spec: &[&str]) -> Effect {
    match spec {
        [
            "template",
            "spec",
            "version" | "bootstrap" | "infrastructureRef",
            ..,
        ] => Effect::ProviderDecides,
        _ => Effect::InPlace,
    }
}

/// The MachineDeployment's `MachineTemplateUpToDate` (its mdutil), for a field under `spec`:
/// the machine template's version, references and failure domain make a new MachineSet, and so
/// does a rollout date once it passes (`spec.rollout.after`, mdutil's `FindNewAndOldMachineSets`);
/// the rest (replicas, strategy, labels, annotations, deletion timeouts, readiness gates, taints,
/// minReadySeconds) is propagated in place.
fn machine_deployment(spec: &[&str]) -> Effect {
    match spec {
        [
            "template",
            "spec",
            "version" | "bootstrap" | "infrastructureRef" | "failureDomain",
            ..,
        ]
        | ["rollout", "after", ..] => Effect::MachineDeploymentRollout,
        _ => Effect::InPlace,
    }
}

/// KubeadmControlPlane's `UpToDate` (controlplane/kubeadm/pkg/filters.go), for a field under
/// `spec` (v1beta2 and v1beta1 spellings).
fn kubeadm_control_plane(spec: &[&str], before: &Option<Value>, after: &Option<Value>) -> Effect {
    match spec {
        // matchesMachineSpec: the version.
        ["version", ..] => Effect::ControlPlaneRollout,
        // PrepareKubeadmConfigsForDiff clears these before comparing.
        [
            "kubeadmConfigSpec",
            "clusterConfiguration",
            "dns" | "controlPlaneEndpoint",
            ..,
        ]
        | ["kubeadmConfigSpec", "joinConfiguration", "discovery", ..]
        | [
            "kubeadmConfigSpec",
            "initConfiguration" | "joinConfiguration",
            "timeouts",
            "controlPlaneComponentHealthCheckSeconds",
        ] => Effect::InPlace,
        // dropOmittableFields: an empty list or map is the same as none.
        ["kubeadmConfigSpec", ..] if empty(before) && empty(after) => Effect::InPlace,
        // matchesKubeadmConfig: the rest of the KubeadmConfig.
        ["kubeadmConfigSpec", ..] => Effect::ControlPlaneRollout,
        // matchesInfraMachine: Machines cloned from another infrastructure template.
        ["machineTemplate", "spec", "infrastructureRef", ..]
        | ["machineTemplate", "infrastructureRef", ..] => Effect::ControlPlaneRollout,
        // ShouldRolloutAfter / ShouldRolloutBefore.
        ["rollout", "after" | "before", ..] | ["rolloutAfter" | "rolloutBefore", ..] => {
            Effect::ControlPlaneRollout
        }
        // syncMachines propagates the machine template's metadata and timeouts in place;
        // replicas, remediation and naming do not replace existing Machines.
        _ => Effect::InPlace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pair(role: Role, before: Value, after: Value) -> Vec<ObjectChange> {
        let rendered = |object: Value| Rendered {
            objects: vec![object],
            roles: vec![role.clone()],
            ..Rendered::default()
        };
        compare(&rendered(before), &rendered(after))
    }

    fn kcp(spec: Value) -> Value {
        json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
               "metadata": {"name": "cp", "labels": {"a": "1"}}, "spec": spec})
    }

    #[test]
    fn unchanged_objects_are_not_reported() {
        let object = json!({"kind": "X", "spec": {"a": 1}});
        assert!(pair(Role::InfrastructureCluster, object.clone(), object).is_empty());
    }

    #[test]
    fn the_clusters_own_fields_are_patched_in_place() {
        let cluster = |name: &str, step: &str| {
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                   "metadata": {"name": "c1", "annotations": {"topology.internal.cluster.x-k8s.io/upgrade-step": step}},
                   "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerCluster", "name": name}}})
        };
        let changes = pair(Role::Cluster, cluster("a", ""), cluster("b", "v1.34.0"));
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].effect, Effect::InPlace);
        assert_eq!(changes[0].rollout(), Rollout::No);
        assert_eq!(changes[0].rolls_out(), None);
        let paths: Vec<&str> = changes[0].fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "metadata.annotations[\"topology.internal.cluster.x-k8s.io/upgrade-step\"]",
                "spec.infrastructureRef.name"
            ]
        );
    }

    #[test]
    fn metadata_only_changes_are_in_place_for_every_role() {
        for role in [
            Role::InfrastructureCluster,
            Role::ControlPlane,
            Role::ControlPlaneMachineTemplate,
            Role::MachineDeploymentBootstrapTemplate("md".into()),
            Role::MachinePoolInfrastructure("mp".into()),
        ] {
            let changes = pair(
                role.clone(),
                json!({"kind": "X", "metadata": {"labels": {"a.b/c": "1"}}, "spec": {}}),
                json!({"kind": "X", "metadata": {"labels": {"a.b/c": "2"}}, "spec": {}}),
            );
            assert_eq!(changes[0].effect, Effect::MetadataInPlace, "{role}");
            assert_eq!(changes[0].fields[0].path, r#"metadata.labels["a.b/c"]"#);
            assert_eq!(changes[0].rolls_out(), None);
        }
    }

    #[test]
    fn template_spec_changes_rotate_and_roll_out_what_references_them() {
        let changes = pair(
            Role::MachineDeploymentBootstrapTemplate("md-0".into()),
            json!({"kind": "KubeadmConfigTemplate", "spec": {"template": {"spec": {"files": [{"content": "a"}]}}}}),
            json!({"kind": "KubeadmConfigTemplate", "spec": {"template": {"spec": {"files": [{"content": "b"}]}}}}),
        );
        assert_eq!(changes[0].effect, Effect::TemplateRotated);
        assert_eq!(
            changes[0].fields[0].path,
            "spec.template.spec.files[0].content"
        );
        assert!(
            changes[0]
                .consequence()
                .contains("MachineDeployment md-0 rolls out"),
            "{}",
            changes[0].consequence()
        );
        let changes = pair(
            Role::ControlPlaneMachineTemplate,
            json!({"kind": "T", "spec": {"template": {"spec": {}}}}),
            json!({"kind": "T", "spec": {"template": {"spec": {"x": true}}}}),
        );
        assert_eq!(changes[0].rolls_out().as_deref(), Some("the control plane"));
        assert_eq!(changes[0].fields[0].before, None);
    }

    #[test]
    fn kubeadm_control_plane_rolls_out_only_for_what_up_to_date_compares() {
        let base = json!({"version": "v1.34.0", "replicas": 3,
            "kubeadmConfigSpec": {"clusterConfiguration": {"apiServer": {"extraArgs": []}, "dns": {"imageTag": "1"}}},
            "machineTemplate": {"metadata": {"labels": {"x": "1"}}, "spec": {"nodeDrainTimeoutSeconds": 10}}});
        let changed = |pointer: &str, value: Value| {
            let mut spec = base.clone();
            match spec.pointer_mut(pointer) {
                Some(slot) => *slot = value,
                None => panic!("{pointer}"),
            }
            pair(Role::ControlPlane, kcp(base.clone()), kcp(spec))[0].effect
        };
        assert_eq!(
            changed(
                "/kubeadmConfigSpec/clusterConfiguration/apiServer",
                json!({"certSANs": ["a"]})
            ),
            Effect::ControlPlaneRollout
        );
        assert_eq!(
            changed("/version", json!("v1.35.0")),
            Effect::ControlPlaneRollout
        );
        assert_eq!(
            changed(
                "/kubeadmConfigSpec/clusterConfiguration/dns",
                json!({"imageTag": "2"})
            ),
            Effect::InPlace
        );
        assert_eq!(
            changed(
                "/kubeadmConfigSpec/clusterConfiguration/apiServer/extraArgs",
                json!({})
            ),
            Effect::InPlace
        );
        assert_eq!(
            changed("/machineTemplate/metadata/labels/x", json!("2")),
            Effect::InPlace
        );
        assert_eq!(
            changed("/machineTemplate/spec/nodeDrainTimeoutSeconds", json!(20)),
            Effect::InPlace
        );
        assert_eq!(changed("/replicas", json!(5)), Effect::InPlace);
    }

    #[test]
    fn other_control_planes_and_machine_pools_leave_it_to_the_provider() {
        let changes = pair(
            Role::ControlPlane,
            json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlane", "spec": {"image": "a"}}),
            json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlane", "spec": {"image": "b"}}),
        );
        assert_eq!(changes[0].rollout(), Rollout::ProviderDecides);
        assert!(
            changes[0].consequence().contains(
                "whether GenericControlPlane replaces its Machines is up to its provider"
            )
        );
        let changes = pair(
            Role::MachinePoolBootstrapConfig("mp-0".into()),
            json!({"kind": "KubeadmConfig", "spec": {"a": 1}}),
            json!({"kind": "KubeadmConfig", "spec": {}}),
        );
        assert_eq!(changes[0].rollout(), Rollout::ProviderDecides);
        assert_eq!(changes[0].fields[0].after, None);
        assert_eq!(changes[0].rolls_out().as_deref(), Some("MachinePool mp-0"));
    }

    #[test]
    fn machine_deployments_and_machine_pools_replace_machines_only_for_their_machine_template() {
        let spec = json!({"replicas": 1, "rollout": {"after": "2026-01-01T00:00:00Z", "strategy": {"type": "RollingUpdate"}},
            "template": {"spec": {"version": "v1.34.0", "failureDomain": "a", "minReadySeconds": 0,
                "bootstrap": {"configRef": {"name": "b-1"}}, "deletion": {"nodeDrainTimeoutSeconds": 1}}}});
        let changed = |role: Role, kind: &str, pointer: &str, value: Value| {
            let mut after = spec.clone();
            match after.pointer_mut(pointer) {
                Some(slot) => *slot = value,
                None => panic!("{pointer}"),
            }
            let object = |spec: Value| json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": kind, "spec": spec});
            pair(role, object(spec.clone()), object(after))[0].effect
        };
        let md = || Role::MachineDeployment("md-0".into());
        let mp = || Role::MachinePool("mp-0".into());
        for (pointer, value) in [
            ("/template/spec/version", json!("v1.35.0")),
            ("/template/spec/failureDomain", json!("b")),
            ("/template/spec/bootstrap/configRef/name", json!("b-2")),
            ("/rollout/after", json!("2026-01-02T15:04:05Z")),
        ] {
            assert_eq!(
                changed(md(), "MachineDeployment", pointer, value),
                Effect::MachineDeploymentRollout,
                "{pointer}"
            );
        }
        for (pointer, value) in [
            ("/replicas", json!(3)),
            ("/rollout/strategy/type", json!("OnDelete")),
            ("/template/spec/minReadySeconds", json!(5)),
            ("/template/spec/deletion/nodeDrainTimeoutSeconds", json!(9)),
        ] {
            assert_eq!(
                changed(md(), "MachineDeployment", pointer, value.clone()),
                Effect::InPlace,
                "{pointer}"
            );
        }
        assert_eq!(
            changed(
                mp(),
                "MachinePool",
                "/template/spec/version",
                json!("v1.35.0")
            ),
            Effect::ProviderDecides
        );
        assert_eq!(
            changed(mp(), "MachinePool", "/replicas", json!(3)),
            Effect::InPlace
        );
    }

    #[test]
    fn objects_are_paired_by_role_and_those_of_one_side_only_are_created_or_deleted() {
        let object = |kind: &str, spec: Value| json!({"kind": kind, "metadata": {"name": kind.to_lowercase()}, "spec": spec});
        let before = Rendered {
            objects: vec![
                object("Infra", json!({"a": 1})),
                object("MachineDeployment", json!({})),
            ],
            roles: vec![
                Role::InfrastructureCluster,
                Role::MachineDeployment("md-0".into()),
            ],
            ..Rendered::default()
        };
        // md-0 removed, a health check added before the infrastructure cluster (other order).
        let after = Rendered {
            objects: vec![
                object("MachineHealthCheck", json!({})),
                object("Infra", json!({"a": 2})),
            ],
            roles: vec![
                Role::ControlPlaneMachineHealthCheck,
                Role::InfrastructureCluster,
            ],
            ..Rendered::default()
        };
        let changes = compare(&before, &after);
        let effects: Vec<(Effect, &str)> = changes
            .iter()
            .map(|c| (c.effect, c.kind.as_str()))
            .collect();
        assert_eq!(
            effects,
            [
                (Effect::Created, "MachineHealthCheck"),
                (Effect::InPlace, "Infra"),
                (Effect::Deleted, "MachineDeployment"),
            ]
        );
        assert_eq!(changes[1].fields[0].path, "spec.a");
        assert!(changes[2].consequence().contains("its Machines"));
        assert_eq!(changes[2].rollout(), Rollout::No);
    }

    #[test]
    fn an_object_takes_its_strongest_effect() {
        let changes = pair(
            Role::InfrastructureCluster,
            json!({"kind": "X", "metadata": {"labels": {"a": "1"}}, "spec": {"a": [1]}}),
            json!({"kind": "X", "metadata": {"labels": {"a": "2"}}, "spec": {"a": [1, 2]}}),
        );
        assert_eq!(changes[0].effect, Effect::InPlace);
        let paths: Vec<&str> = changes[0].fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["metadata.labels.a", "spec.a"]);
    }
}
