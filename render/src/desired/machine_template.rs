//! What the MachineDeployment and MachinePool objects of a topology share: their parts, the
//! machine template fields copied from the Cluster's topology or else the class (deletion
//! timeouts, taints, readiness gates), the references to their templates, and Go's encoding of
//! CAPI's types (`omitempty`).

use super::control_plane::typed_list;
use crate::object::{get, map_value, string};
use capi_ext::CapiVersion;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// What a MachineDeployment or MachinePool is made of: the Cluster, its topology entry and the
/// class entry it names, its name, merged metadata, desired bootstrap and infrastructure
/// objects and its version.
pub(super) struct Parts<'a> {
    pub cluster: &'a Value,
    pub topology: &'a Value,
    pub class: &'a Value,
    pub name: &'a str,
    pub labels: &'a BTreeMap<String, String>,
    pub annotations: &'a BTreeMap<String, String>,
    pub bootstrap: &'a Value,
    pub infrastructure: &'a Value,
    pub version: &'a str,
}

/// The MachineDeployment or MachinePool (`kind`) of these parts: metadata, replicas and the
/// machine template both have (version, references, deletion timeouts, taints,
/// minReadySeconds), with the kind's own `spec` and machine template `spec` fields added; Go's
/// empty values left out.
pub(super) fn worker_object(
    parts: &Parts<'_>,
    kind: &str,
    spec: Value,
    machine: Value,
    capi_version: CapiVersion,
) -> Value {
    let (topology, class) = (parts.topology, parts.class);
    let cluster_name = string(parts.cluster, &["metadata", "name"]);
    let labels = map_value(parts.labels);
    let annotations = map_value(parts.annotations);
    let mut object = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": kind,
        "metadata": {
            "name": parts.name,
            "namespace": string(parts.cluster, &["metadata", "namespace"]),
            "labels": labels,
            "annotations": annotations,
        },
        "spec": {
            "clusterName": cluster_name,
            "replicas": get(topology, &["replicas"]),
            "template": {
                "metadata": {"labels": labels, "annotations": annotations},
                "spec": {
                    "clusterName": cluster_name,
                    "version": parts.version,
                    "bootstrap": {"configRef": reference(parts.bootstrap)},
                    "infrastructureRef": reference(parts.infrastructure),
                    "deletion": deletion_timeouts(topology, class),
                    "taints": taints(topology, class, capi_version),
                    "minReadySeconds": cluster_or_class(topology, class, &["minReadySeconds"]),
                },
            },
        },
    });
    for (at, extra) in [
        (&["spec"][..], spec),
        (&["spec", "template", "spec"][..], machine),
    ] {
        if let (Some(Value::Object(into)), Value::Object(extra)) = (
            at.iter().try_fold(&mut object, |v, key| v.get_mut(*key)),
            extra,
        ) {
            into.extend(extra);
        }
    }
    omit_empty(&mut object);
    object
}

/// The topology's value at `path` when set, else the class's (CAPI's `if topology.X != nil`).
pub(super) fn cluster_or_class(topology: &Value, class: &Value, path: &[&str]) -> Option<Value> {
    get(topology, path)
        .filter(|v| !v.is_null())
        .or_else(|| get(class, path).filter(|v| !v.is_null()))
        .cloned()
}

/// The machine template's `deletion`: each of the three node timeouts from the topology, else
/// the class.
pub(super) fn deletion_timeouts(topology: &Value, class: &Value) -> Value {
    let mut seconds = Map::new();
    for field in [
        "nodeDrainTimeoutSeconds",
        "nodeVolumeDetachTimeoutSeconds",
        "nodeDeletionTimeoutSeconds",
    ] {
        if let Some(value) = cluster_or_class(topology, class, &["deletion", field]) {
            seconds.insert(field.into(), value);
        }
    }
    Value::Object(seconds)
}

/// The topology's list when it has one (an empty one included), else the class's, with only
/// the fields of its Go type.
pub(super) fn topology_list(
    topology: &Value,
    class: &Value,
    field: &str,
    keys: &[&str],
) -> Option<Value> {
    get(topology, &[field])
        .filter(|v| !v.is_null())
        .or_else(|| get(class, &[field]))
        .filter(|v| !v.is_null())
        .map(|list| typed_list(list, keys))
}

/// The machine template's taints (Cluster API 1.13 on; 1.12's topology has none).
pub(super) fn taints(topology: &Value, class: &Value, capi_version: CapiVersion) -> Option<Value> {
    (capi_version >= CapiVersion::new(1, 13))
        .then(|| {
            topology_list(
                topology,
                class,
                "taints",
                &["key", "value", "effect", "propagation"],
            )
        })
        .flatten()
}

/// A `ContractVersionedObjectReference` to an object: its API group, kind and name.
pub(super) fn reference(object: &Value) -> Value {
    let group = string(object, &["apiVersion"])
        .rsplit_once('/')
        .map_or("", |(group, _)| group);
    json!({"apiGroup": group, "kind": object["kind"], "name": object["metadata"]["name"]})
}

/// Drops what Go's JSON encoding of CAPI's types leaves out (`omitempty`, `omitzero`): nulls,
/// empty strings, empty lists and maps, and objects left empty; the values of label,
/// annotation and selector maps stay.
pub(super) fn omit_empty(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                // A map's values are written as they are (a label's value may be empty).
                if !matches!(key.as_str(), "labels" | "annotations" | "matchLabels") {
                    omit_empty(child);
                }
            }
            map.retain(|_, child| match child {
                Value::Null => false,
                Value::String(s) => !s.is_empty(),
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                _ => true,
            });
        }
        Value::Array(items) => items.iter_mut().for_each(omit_empty),
        _ => {}
    }
}

/// Whether Go's `reflect.Value.IsZero` finds the decoded value zero: absent, null, empty
/// strings and objects with only such fields (a number, even 0, is a set pointer; a list, even
/// empty, a non-nil slice).
pub(super) fn is_zero(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Object(map)) => map.values().all(|v| is_zero(Some(v))),
        Some(Value::Array(_) | Value::Number(_) | Value::Bool(_)) => false,
    }
}
