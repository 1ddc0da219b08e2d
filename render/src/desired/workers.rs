//! The MachineDeployments and MachinePools of a topology (`computeMachineDeployment`,
//! `computeMachinePool`).

use super::blueprint::{Blueprint, Template, WorkerClass};
use super::machine_template::Parts;
use super::names::{simple_name, template_name};
use super::templates::{template_to_object, template_to_template};
use super::upgrade::{Sequencing, WorkerKind};
use super::{
    CLUSTER_NAME_LABEL, DEFER_UPGRADE, HOLD_UPGRADE_SEQUENCE, TOPOLOGY_OWNED_LABEL, Worker, input,
    metadata_maps,
};
use super::{health_check, machine_deployment, machine_pool};
use crate::error::RenderError;
use crate::object::{get, map_value, merge_maps, set, string, string_map};
use capi_ext::CapiVersion;
use serde_json::Value;
use std::collections::BTreeMap;

#[allow(clippy::too_many_arguments)]
pub(super) fn compute(
    sequencing: &mut Sequencing,
    current: &[Value],
    blueprint: &Blueprint,
    cluster: &Value,
    topology: &Value,
    list: &str,
    classes: &BTreeMap<String, WorkerClass>,
    name_label: &str,
    topology_name_key: &str,
    capi_version: CapiVersion,
) -> Result<Vec<Worker>, RenderError> {
    let cluster_name = string(cluster, &["metadata", "name"]);
    let mut out = Vec::new();
    let entries = get(topology, &["workers", list])
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, entry) in entries.into_iter().enumerate() {
        let class_name = string(&entry, &["class"]).to_string();
        let topology_name = string(&entry, &["name"]).to_string();
        let worker_class = classes.get(&class_name).ok_or_else(|| {
            let known: Vec<&String> = classes.keys().collect();
            input(format!(
                "Cluster {}: spec.topology.workers.{list}[{i}].class `{class_name}` is not a class of ClusterClass {} (it has {known:?})",
                cluster_name,
                string(&blueprint.class, &["metadata", "name"])
            ))
        })?;
        let (topology_labels, mut topology_annotations) =
            metadata_maps(entry.get("metadata").unwrap_or(&Value::Null));
        let (class_labels, class_annotations) = metadata_maps(&worker_class.metadata);
        topology_annotations.remove(HOLD_UPGRADE_SEQUENCE);
        topology_annotations.remove(DEFER_UPGRADE);
        let mut annotations = merge_maps(&[topology_annotations, class_annotations]);
        annotations.remove(HOLD_UPGRADE_SEQUENCE);
        annotations.remove(DEFER_UPGRADE);
        let mut labels = merge_maps(&[topology_labels, class_labels]);
        labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.into());
        labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
        labels.insert(name_label.into(), topology_name.clone());
        let naming = if worker_class.naming.is_empty() {
            format!("{{{{ .cluster.name }}}}-{{{{ {topology_name_key} }}}}-{{{{ .random }}}}")
        } else {
            worker_class.naming.clone()
        };
        // An existing MachineDeployment/MachinePool keeps its name and its templates' names.
        let existing = current.iter().find(|o| {
            string(o, &["apiVersion"]).starts_with("cluster.x-k8s.io/")
                && list.starts_with(&lower_first(string(o, &["kind"])))
                && string(o, &["metadata", "labels", CLUSTER_NAME_LABEL]) == cluster_name
                && string(o, &["metadata", "labels", name_label]) == topology_name
        });
        let name = match existing {
            Some(object) => string(object, &["metadata", "name"]).to_string(),
            None => template_name(
                &naming,
                &[
                    (".cluster.name", cluster_name),
                    (topology_name_key, &topology_name),
                ],
                &format!("ClusterClass spec.workers.{list}[class={class_name}].naming.template"),
                &topology_name,
            )?,
        };
        let prefix = format!("{cluster_name}-{topology_name}-");
        let simple_name = |prefix: &str, role: &str| {
            let path: &[&str] = if role == "bootstrap" {
                &["spec", "template", "spec", "bootstrap", "configRef", "name"]
            } else {
                &["spec", "template", "spec", "infrastructureRef", "name"]
            };
            match existing.map(|o| string(o, path)) {
                Some(name) if !name.is_empty() => name.to_string(),
                _ => simple_name(prefix, role),
            }
        };
        let label = Some((name_label, topology_name.as_str()));
        let (bootstrap, infrastructure) = if list == "machineDeployments" {
            (
                template_to_template(
                    &worker_class.bootstrap,
                    cluster,
                    simple_name(&prefix, "bootstrap"),
                    label,
                ),
                template_to_template(
                    &worker_class.infrastructure,
                    cluster,
                    simple_name(&prefix, "infrastructure"),
                    label,
                ),
            )
        } else {
            let with_label = |template: &Template, role: &str| {
                let mut object = template_to_object(
                    template,
                    cluster,
                    simple_name(&prefix, role),
                    BTreeMap::new(),
                    BTreeMap::new(),
                    true,
                );
                let mut labels = string_map(&object, &["metadata", "labels"]);
                labels.insert(name_label.into(), topology_name.clone());
                set(&mut object, &["metadata", "labels"], map_value(&labels));
                object
            };
            (
                with_label(&worker_class.bootstrap, "bootstrap"),
                with_label(&worker_class.infrastructure, "infrastructure"),
            )
        };
        // The MachineDeployment or MachinePool itself, at the version of its upgrade step.
        let kind = if list == "machineDeployments" {
            WorkerKind::MachineDeployment
        } else {
            WorkerKind::MachinePool
        };
        let version = sequencing.worker_version(kind, topology, &entry, existing)?;
        let parts = Parts {
            cluster,
            topology: &entry,
            class: &worker_class.entry,
            name: &name,
            labels: &labels,
            annotations: &annotations,
            bootstrap: &bootstrap,
            infrastructure: &infrastructure,
            version: &version,
        };
        let (object, health_check) = if list == "machineDeployments" {
            let object = machine_deployment::object(&parts, capi_version)?;
            let check =
                health_check::machine_deployment(cluster, &worker_class.entry, &entry, &object);
            (object, check)
        } else {
            (machine_pool::object(&parts, capi_version), None)
        };
        out.push(Worker {
            topology: entry,
            class: class_name,
            name,
            labels,
            annotations,
            bootstrap,
            infrastructure,
            object,
            health_check,
        });
    }
    Ok(out)
}

pub(super) fn lower_first(kind: &str) -> String {
    let mut chars = kind.chars();
    chars
        .next()
        .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}
