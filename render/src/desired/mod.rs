//! The desired state CAPI's topology controller computes before it patches: the ClusterClass's
//! templates looked up, and the objects they become (names, labels, annotations), as in
//! `exp/topology/desiredstate`.
//!
//! [`blueprint`] resolves the class (CAPI's `blueprint.go`), [`names`] names the objects
//! (`internal/topology/names`), [`templates`] turns templates into objects
//! (`templateToObject`, `templateToTemplate`), [`workers`] computes MachineDeployments and
//! MachinePools (`computeMachineDeployment`, `computeMachinePool`), [`control_plane`] copies the
//! topology's machine fields into the control plane; this module computes the rest
//! (`computeInfrastructureCluster`, `computeControlPlane`).

mod blueprint;
mod control_plane;
mod health_check;
mod machine_deployment;
mod machine_pool;
mod machine_template;
mod names;
mod templates;
mod upgrade;
mod workers;

pub(crate) use upgrade::{Answer as PlanAnswer, PlanQuestion};

pub(crate) use blueprint::Blueprint;
pub(crate) use templates::{builtin_annotations, clean_template};

use crate::UpgradeHook;
use crate::change::Role;
use crate::error::RenderError;
use crate::object::{get, map_value, merge_maps, set, string, string_map};
use capi_ext::CapiVersion;
use machine_template::reference;
use names::{simple_name, template_name};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use templates::{template_to_object, template_to_template};

pub(crate) const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub(crate) const TOPOLOGY_OWNED_LABEL: &str = "topology.cluster.x-k8s.io/owned";
pub(crate) const DEPLOYMENT_NAME_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";
pub(crate) const POOL_NAME_LABEL: &str = "topology.cluster.x-k8s.io/pool-name";
pub(crate) const CLONED_FROM_NAME: &str = "cluster.x-k8s.io/cloned-from-name";
pub(crate) const CLONED_FROM_GROUP_KIND: &str = "cluster.x-k8s.io/cloned-from-groupkind";
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
pub(crate) const CONVERSION_DATA: &str = "cluster.x-k8s.io/conversion-data";
pub(super) const HOLD_UPGRADE_SEQUENCE: &str = "topology.cluster.x-k8s.io/hold-upgrade-sequence";
pub(super) const DEFER_UPGRADE: &str = "topology.cluster.x-k8s.io/defer-upgrade";

/// One MachineDeployment or MachinePool of the topology and what it becomes.
pub(crate) struct Worker {
    pub topology: Value,
    pub class: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub bootstrap: Value,
    pub infrastructure: Value,
    /// The MachineDeployment or MachinePool itself.
    pub object: Value,
    /// The MachineDeployment's MachineHealthCheck, when the class or the topology defines one.
    pub health_check: Option<Value>,
}

/// The desired objects, before patches.
pub(crate) struct Desired {
    /// The Cluster as `computeCluster` makes it: the input with the topology's labels and the
    /// upgrade-step annotation (its references are set by [`Desired::cluster_fields`]).
    pub cluster: Value,
    pub infrastructure_cluster: Value,
    pub control_plane: Value,
    pub control_plane_machine: Option<Value>,
    /// The control plane's MachineHealthCheck, when the class or the topology defines one.
    pub control_plane_health_check: Option<Value>,
    pub machine_deployments: Vec<Worker>,
    pub machine_pools: Vec<Worker>,
    /// What render could not know of the upgrade sequence and assumed.
    pub warnings: Vec<String>,
}

pub(super) fn input(message: String) -> RenderError {
    RenderError::Input(message)
}

pub(super) fn key(object: &Value) -> String {
    format!(
        "{} {}/{}",
        string(object, &["kind"]),
        string(object, &["metadata", "namespace"]),
        string(object, &["metadata", "name"])
    )
}

/// Whether the ControlPlane uses the v1beta1 contract (its API version says so).
pub(crate) fn v1beta1_control_plane(control_plane: &Value) -> bool {
    string(control_plane, &["apiVersion"]).ends_with("/v1beta1")
}

/// The holder field path of the control plane's machine template.
pub(crate) fn control_plane_machine_field(control_plane: &Value) -> &'static str {
    if v1beta1_control_plane(control_plane) {
        "spec.machineTemplate.infrastructureRef"
    } else {
        "spec.machineTemplate.spec.infrastructureRef"
    }
}

pub(super) fn metadata_maps(value: &Value) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    (
        string_map(value, &["labels"]),
        string_map(value, &["annotations"]),
    )
}

impl Desired {
    /// The objects, in the order `render` prints them: the infrastructure cluster, the control
    /// plane and what it holds, the workers, then the Cluster's own fields (last, so that the
    /// objects before it keep the places they had before render printed it).
    pub(crate) fn objects(&self) -> Vec<Value> {
        let mut objects = vec![
            self.infrastructure_cluster.clone(),
            self.control_plane.clone(),
        ];
        objects.extend(self.control_plane_machine.clone());
        objects.extend(self.control_plane_health_check.clone());
        for worker in self.machine_deployments.iter().chain(&self.machine_pools) {
            objects.push(worker.bootstrap.clone());
            objects.push(worker.infrastructure.clone());
            objects.push(worker.object.clone());
            objects.extend(worker.health_check.clone());
        }
        objects.push(self.cluster_fields());
        objects
    }

    /// What each object of [`objects`](Self::objects) is, in the same order.
    pub(crate) fn roles(&self) -> Vec<Role> {
        let mut roles = vec![Role::InfrastructureCluster, Role::ControlPlane];
        if self.control_plane_machine.is_some() {
            roles.push(Role::ControlPlaneMachineTemplate);
        }
        if self.control_plane_health_check.is_some() {
            roles.push(Role::ControlPlaneMachineHealthCheck);
        }
        let name = |worker: &Worker| string(&worker.topology, &["name"]).to_string();
        for worker in &self.machine_deployments {
            roles.push(Role::MachineDeploymentBootstrapTemplate(name(worker)));
            roles.push(Role::MachineDeploymentInfrastructureTemplate(name(worker)));
            roles.push(Role::MachineDeployment(name(worker)));
            if worker.health_check.is_some() {
                roles.push(Role::MachineDeploymentMachineHealthCheck(name(worker)));
            }
        }
        for worker in &self.machine_pools {
            roles.push(Role::MachinePoolBootstrapConfig(name(worker)));
            roles.push(Role::MachinePoolInfrastructure(name(worker)));
            roles.push(Role::MachinePool(name(worker)));
        }
        roles.push(Role::Cluster);
        roles
    }

    /// The fields of the Cluster its topology controller owns, as `reconcileCluster` patches
    /// them (`computeCluster`): its labels (with the cluster-name and topology-owned labels), its
    /// annotations (the upgrade step while an upgrade is under way) and the references to the
    /// infrastructure cluster and the control plane. The rest of the Cluster is the user's.
    pub(crate) fn cluster_fields(&self) -> Value {
        let mut metadata = serde_json::Map::new();
        metadata.insert("name".into(), self.cluster["metadata"]["name"].clone());
        metadata.insert(
            "namespace".into(),
            self.cluster["metadata"]["namespace"].clone(),
        );
        let (labels, annotations) = metadata_maps(&self.cluster["metadata"]);
        if !labels.is_empty() {
            metadata.insert("labels".into(), map_value(&labels));
        }
        if !annotations.is_empty() {
            metadata.insert("annotations".into(), map_value(&annotations));
        }
        json!({
            "apiVersion": self.cluster["apiVersion"],
            "kind": "Cluster",
            "metadata": metadata,
            "spec": {
                "infrastructureRef": reference(&self.infrastructure_cluster),
                "controlPlaneRef": reference(&self.control_plane),
            },
        })
    }

    /// What CAPI asks the ClusterClass's GenerateUpgradePlan extension before it computes the
    /// desired state of a Cluster whose objects are `current`, if it asks anything; its answer
    /// goes to [`Desired::compute`].
    pub(crate) fn plan_question(
        blueprint: &Blueprint,
        cluster: &Value,
        current: &[Value],
    ) -> Result<Option<PlanQuestion>, RenderError> {
        upgrade::plan_question(
            cluster,
            &blueprint.class,
            current_control_plane(blueprint, cluster, current),
            current,
        )
    }

    /// `current` holds existing objects (MachineDeployments, MachinePools, the ControlPlane) whose
    /// names and references CAPI keeps; without them new names are made. `plan_answer` is the
    /// GenerateUpgradePlan extension's answer to [`Desired::plan_question`];
    /// `blocking_hooks` the lifecycle hooks that hold the upgrade where CAPI calls them.
    pub(crate) fn compute(
        blueprint: &Blueprint,
        cluster: &Value,
        current: &[Value],
        capi_version: CapiVersion,
        plan_answer: Option<&upgrade::Answer>,
        blocking_hooks: &BTreeSet<UpgradeHook>,
    ) -> Result<Self, RenderError> {
        let cluster_name = string(cluster, &["metadata", "name"]).to_string();
        let class = &blueprint.class;
        let topology = get(cluster, &["spec", "topology"])
            .cloned()
            .unwrap_or(Value::Null);

        let mut desired_cluster = cluster.clone();
        let mut labels = string_map(cluster, &["metadata", "labels"]);
        labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.clone());
        labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
        set(
            &mut desired_cluster,
            &["metadata", "labels"],
            map_value(&labels),
        );

        // The name the Cluster already references, or one from the class's naming template.
        let name_of = |reference: &str, class_field: &str| match string(
            cluster,
            &["spec", reference, "name"],
        ) {
            "" => {
                let template = match string(class, &["spec", class_field, "naming", "template"]) {
                    "" => "{{ .cluster.name }}-{{ .random }}",
                    template => template,
                };
                template_name(
                    template,
                    &[(".cluster.name", cluster_name.as_str())],
                    &format!("spec.{class_field}.naming.template"),
                    "",
                )
            }
            current => Ok(current.to_string()),
        };
        let infra_name = name_of("infrastructureRef", "infrastructure")?;
        let infrastructure_cluster = template_to_object(
            &blueprint.infrastructure_cluster,
            cluster,
            infra_name,
            BTreeMap::new(),
            BTreeMap::new(),
            false,
        );

        let current_control_plane = current_control_plane(blueprint, cluster, current);
        let control_plane_machine = blueprint.control_plane_machine.as_ref().map(|template| {
            let current_name = current_control_plane.map_or("", |cp| {
                match get(
                    cp,
                    &[
                        "spec",
                        "machineTemplate",
                        "spec",
                        "infrastructureRef",
                        "name",
                    ],
                ) {
                    Some(name) => name.as_str().unwrap_or_default(),
                    None => string(
                        cp,
                        &["spec", "machineTemplate", "infrastructureRef", "name"],
                    ),
                }
            });
            let name = if current_name.is_empty() {
                simple_name(&format!("{cluster_name}-"), "control-plane-machine")
            } else {
                current_name.to_string()
            };
            template_to_template(template, cluster, name, None)
        });

        let (topology_labels, topology_annotations) =
            metadata_maps(get(&topology, &["controlPlane", "metadata"]).unwrap_or(&Value::Null));
        let (class_labels, class_annotations) = metadata_maps(
            get(class, &["spec", "controlPlane", "metadata"]).unwrap_or(&Value::Null),
        );
        let mut cp_labels = merge_maps(&[topology_labels, class_labels]);
        cp_labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.clone());
        cp_labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
        let cp_annotations = merge_maps(&[topology_annotations, class_annotations]);
        let cp_name = name_of("controlPlaneRef", "controlPlane")?;
        let mut control_plane = template_to_object(
            &blueprint.control_plane,
            cluster,
            cp_name,
            cp_labels.clone(),
            cp_annotations.clone(),
            false,
        );
        if let Some(machine) = &control_plane_machine {
            let reference_path: &[&str] = if v1beta1_control_plane(&control_plane) {
                &["spec", "machineTemplate", "infrastructureRef"]
            } else {
                &["spec", "machineTemplate", "spec", "infrastructureRef"]
            };
            let reference = if v1beta1_control_plane(&control_plane) {
                json!({"apiVersion": machine["apiVersion"], "kind": machine["kind"], "name": machine["metadata"]["name"], "namespace": machine["metadata"]["namespace"]})
            } else {
                reference(machine)
            };
            set(&mut control_plane, reference_path, reference);
            let metadata = get(&control_plane, &["spec", "machineTemplate", "metadata"])
                .cloned()
                .unwrap_or(Value::Null);
            let (labels, annotations) = metadata_maps(&metadata);
            let mut machine_metadata = serde_json::Map::new();
            let labels = merge_maps(&[cp_labels.clone(), labels]);
            let annotations = merge_maps(&[cp_annotations.clone(), annotations]);
            if !labels.is_empty() {
                machine_metadata.insert("labels".into(), map_value(&labels));
            }
            if !annotations.is_empty() {
                machine_metadata.insert("annotations".into(), map_value(&annotations));
            }
            set(
                &mut control_plane,
                &["spec", "machineTemplate", "metadata"],
                Value::Object(machine_metadata),
            );
        }
        if let Some(replicas) = get(&topology, &["controlPlane", "replicas"]) {
            set(&mut control_plane, &["spec", "replicas"], replicas.clone());
        }
        let v1beta1 = v1beta1_control_plane(&control_plane);
        control_plane::copy_machine_fields(
            &mut control_plane,
            get(&topology, &["controlPlane"]).unwrap_or(&Value::Null),
            get(class, &["spec", "controlPlane"]).unwrap_or(&Value::Null),
            v1beta1,
            capi_version,
        )?;
        // The Kubernetes versions: the topology's at creation; past it, the step of the upgrade
        // sequence the objects are at.
        let mut sequencing = upgrade::Sequencing::new(
            cluster,
            class,
            current_control_plane,
            current,
            capi_version,
            plan_answer,
            blocking_hooks,
        )?;
        let control_plane_version =
            sequencing.control_plane_version(current_control_plane, &mut desired_cluster)?;
        set(
            &mut control_plane,
            &["spec", "version"],
            json!(control_plane_version),
        );
        set_upgrade_step(&mut desired_cluster, &control_plane_version, capi_version);

        let machine_deployments = workers::compute(
            &mut sequencing,
            current,
            blueprint,
            cluster,
            &topology,
            "machineDeployments",
            &blueprint.machine_deployments,
            DEPLOYMENT_NAME_LABEL,
            ".machineDeployment.topologyName",
            capi_version,
        )?;
        let machine_pools = workers::compute(
            &mut sequencing,
            current,
            blueprint,
            cluster,
            &topology,
            "machinePools",
            &blueprint.machine_pools,
            POOL_NAME_LABEL,
            ".machinePool.topologyName",
            capi_version,
        )?;

        let control_plane_health_check = health_check::control_plane(
            cluster,
            get(class, &["spec", "controlPlane"]).unwrap_or(&Value::Null),
            get(&topology, &["controlPlane"]).unwrap_or(&Value::Null),
            &control_plane,
            control_plane_machine.is_some(),
        );
        Ok(Desired {
            cluster: desired_cluster,
            infrastructure_cluster,
            control_plane,
            control_plane_machine,
            control_plane_health_check,
            machine_deployments,
            machine_pools,
            warnings: sequencing.warnings,
        })
    }
}

/// The Cluster's upgrade-step annotation as `computeCluster` sets it: the control plane's version
/// while an upgrade is under way (AfterClusterUpgrade pending), else removed, or before Cluster
/// API 1.14 set to "" (it could not always be removed with server-side apply). The patches see
/// it in `builtin.cluster.metadata.annotations`.
fn set_upgrade_step(cluster: &mut Value, control_plane_version: &str, capi_version: CapiVersion) {
    let mut annotations = string_map(cluster, &["metadata", "annotations"]);
    if upgrade::pending(cluster, "AfterClusterUpgrade") {
        annotations.insert(UPGRADE_STEP.into(), control_plane_version.into());
    } else if capi_version < CapiVersion::new(1, 14) {
        annotations.insert(UPGRADE_STEP.into(), String::new());
    } else if annotations.remove(UPGRADE_STEP).is_none() {
        return;
    }
    set(
        cluster,
        &["metadata", "annotations"],
        map_value(&annotations),
    );
}

/// `clusterv1.ClusterTopologyUpgradeStepAnnotation`.
const UPGRADE_STEP: &str = "topology.internal.cluster.x-k8s.io/upgrade-step";

/// The Cluster's control plane among `current`: the kind of the class's template, the name the
/// Cluster references.
fn current_control_plane<'a>(
    blueprint: &Blueprint,
    cluster: &Value,
    current: &'a [Value],
) -> Option<&'a Value> {
    let template_kind = string(&blueprint.control_plane.object, &["kind"]);
    current.iter().find(|o| {
        Some(string(o, &["kind"])) == template_kind.strip_suffix("Template")
            && string(o, &["metadata", "name"])
                == string(cluster, &["spec", "controlPlaneRef", "name"])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_capi_templates_and_are_repeatable() {
        let name = template_name(
            "{{ .cluster.name }}-{{ .random }}",
            &[(".cluster.name", "c1")],
            "f",
            "",
        )
        .unwrap();
        assert_eq!(name.len(), "c1-".len() + 5);
        assert!(name.starts_with("c1-"));
        assert_eq!(
            name,
            template_name(
                "{{.cluster.name}}-{{.random}}",
                &[(".cluster.name", "c1")],
                "f",
                ""
            )
            .unwrap()
        );
        let err = template_name(
            "{{ .cluster.uid }}",
            &[(".cluster.name", "c1")],
            "spec.x",
            "",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("map has no entry for key \"uid\""),
            "{err}"
        );
        // Go's whole language, without sprig: as CAPI's name generator.
        let name = template_name(
            "{{ printf \"%.3s\" .cluster.name }}-{{ if eq .cluster.name \"c1\" }}one{{ end }}",
            &[(".cluster.name", "c1")],
            "f",
            "",
        )
        .unwrap();
        assert_eq!(name, "c1-one");
        assert!(
            template_name(
                "{{ upper .cluster.name }}",
                &[(".cluster.name", "c1")],
                "f",
                ""
            )
            .is_err()
        );
        assert_eq!(
            template_name(&"a".repeat(70), &[], "f", "").unwrap().len(),
            63
        );
    }

    #[test]
    fn the_upgrade_step_annotation_is_set_as_each_release_sets_it() {
        let step = |annotations: Value, capi: CapiVersion| {
            let mut cluster = json!({"metadata": {"annotations": annotations}});
            set_upgrade_step(&mut cluster, "v1.33.0", capi);
            cluster["metadata"]["annotations"]
                .get(UPGRADE_STEP)
                .cloned()
        };
        let (v1_13, v1_14) = (CapiVersion::new(1, 13), CapiVersion::new(1, 14));
        // Not upgrading: removed from 1.14, "" before.
        assert_eq!(step(json!({}), v1_14), None);
        assert_eq!(step(json!({UPGRADE_STEP: "v1.32.0"}), v1_14), None);
        assert_eq!(step(json!({}), v1_13), Some(json!("")));
        // Upgrading (AfterClusterUpgrade pending): the control plane's version.
        let pending =
            json!({upgrade::PENDING_HOOKS: "AfterControlPlaneUpgrade,AfterClusterUpgrade"});
        assert_eq!(step(pending.clone(), v1_14), Some(json!("v1.33.0")));
        assert_eq!(step(pending, v1_13), Some(json!("v1.33.0")));
    }

    #[test]
    fn objects_that_share_a_name_prefix_get_different_names() {
        // CAPI's suffixes are random, so two objects almost surely get different names; render's
        // must be different too, even where the cut at 58 bytes or a naming template without
        // the topology name leaves the same prefix.
        let long = "a-cluster-with-a-rather-long-name-for-testing-s3333-012";
        let md1 = simple_name(&format!("{long}-md-1-"), "bootstrap");
        let md2 = simple_name(&format!("{long}-md-2-"), "bootstrap");
        assert_eq!(md1.len(), 63);
        assert_eq!(md1[..58], md2[..58]);
        assert_ne!(md1, md2);
        let template = "{{ .cluster.name }}-{{ .random }}";
        let values = [(".cluster.name", "c1")];
        let (a, b) = (
            template_name(template, &values, "f", "md-1").unwrap(),
            template_name(template, &values, "f", "md-2").unwrap(),
        );
        assert!(a.starts_with("c1-") && b.starts_with("c1-"));
        assert_ne!(a, b);
    }
}
