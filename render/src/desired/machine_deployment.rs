//! The MachineDeployment object of a MachineDeployment topology, as `computeMachineDeployment`
//! builds it: replicas, rollout strategy, deletion and remediation settings, the machine
//! template (version, references, failure domain, deletion timeouts, readiness gates, taints,
//! minReadySeconds), labels, annotations and selector. Each field the Cluster's topology sets
//! wins over the ClusterClass's.

use super::control_plane::typed_list;
use super::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, TOPOLOGY_OWNED_LABEL, input};
use crate::error::RenderError;
use crate::go_template::metav1_time_utc;
use crate::object::{get, map_value, string};
use capi_ext::CapiVersion;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// What the MachineDeployment is made of: the Cluster, its topology entry and the class entry
/// it names, its name, merged metadata and desired templates.
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

/// The MachineDeployment CAPI creates (or updates) for one topology entry.
pub(super) fn object(parts: &Parts<'_>, capi_version: CapiVersion) -> Result<Value, RenderError> {
    let Parts {
        cluster,
        topology,
        class,
        ..
    } = parts;
    let cluster_name = string(cluster, &["metadata", "name"]);
    let topology_name = string(topology, &["name"]);
    // Cluster API 1.12 has neither taints nor the rollout date in its MachineDeployment topology.
    let since_1_13 = capi_version >= CapiVersion::new(1, 13);
    let cluster_or_class = |path: &[&str]| {
        get(topology, path)
            .filter(|v| !v.is_null())
            .or_else(|| get(class, path).filter(|v| !v.is_null()))
            .cloned()
    };

    let strategy = |from: &Value| {
        json!({
            "type": get(from, &["rollout", "strategy", "type"]),
            "rollingUpdate": {
                "maxUnavailable": get(from, &["rollout", "strategy", "rollingUpdate", "maxUnavailable"]),
                "maxSurge": get(from, &["rollout", "strategy", "rollingUpdate", "maxSurge"]),
            },
        })
    };
    // The class's strategy, unless the topology sets any rollout field: then the topology's
    // (its date too), even where it leaves the class's strategy fields unset.
    let mut rollout = Value::Null;
    if !is_zero(get(class, &["rollout"])) {
        rollout = json!({"strategy": strategy(class)});
    }
    let topology_rollout = get(topology, &["rollout"]).cloned().map(|mut r| {
        if !since_1_13 && let Some(r) = r.as_object_mut() {
            r.remove("after");
        }
        r
    });
    if !is_zero(topology_rollout.as_ref()) {
        let after = match get(topology, &["rollout", "after"]).and_then(Value::as_str) {
            Some(after) if since_1_13 && !after.is_empty() => {
                Some(metav1_time_utc(after).map_err(|err| {
                    input(format!(
                        "Cluster spec.topology.workers.machineDeployments[name={topology_name}].rollout.after: {err} (write an RFC 3339 time, such as 2026-01-02T15:04:05Z)"
                    ))
                })?)
            }
            _ => None,
        };
        rollout = json!({"after": after, "strategy": strategy(topology)});
    }

    let mut seconds = Map::new();
    for field in [
        "nodeDrainTimeoutSeconds",
        "nodeVolumeDetachTimeoutSeconds",
        "nodeDeletionTimeoutSeconds",
    ] {
        if let Some(value) = cluster_or_class(&["deletion", field]) {
            seconds.insert(field.into(), value);
        }
    }
    let list = |field: &str, keys: &[&str]| {
        // The topology's list when it has one (an empty one included), else the class's.
        get(topology, &[field])
            .filter(|v| !v.is_null())
            .or_else(|| get(class, &[field]))
            .filter(|v| !v.is_null())
            .map(|list| typed_list(list, keys))
    };
    let taints = if since_1_13 {
        list("taints", &["key", "value", "effect", "propagation"])
    } else {
        None
    };
    let reference = |template: &Value| {
        let group = string(template, &["apiVersion"])
            .rsplit_once('/')
            .map_or("", |(group, _)| group);
        json!({"apiGroup": group, "kind": template["kind"], "name": template["metadata"]["name"]})
    };
    let labels = map_value(parts.labels);
    let annotations = map_value(parts.annotations);
    let selector = BTreeMap::from([
        (CLUSTER_NAME_LABEL.to_string(), cluster_name.to_string()),
        (TOPOLOGY_OWNED_LABEL.to_string(), String::new()),
        (DEPLOYMENT_NAME_LABEL.to_string(), topology_name.to_string()),
    ]);
    let mut object = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineDeployment",
        "metadata": {
            "name": parts.name,
            "namespace": string(cluster, &["metadata", "namespace"]),
            "labels": labels,
            "annotations": annotations,
        },
        "spec": {
            "clusterName": cluster_name,
            "replicas": get(topology, &["replicas"]),
            "rollout": rollout,
            "deletion": {"order": cluster_or_class(&["deletion", "order"])},
            "remediation": {"maxInFlight": cluster_or_class(&["healthCheck", "remediation", "maxInFlight"])},
            "selector": {"matchLabels": map_value(&selector)},
            "template": {
                "metadata": {"labels": labels, "annotations": annotations},
                "spec": {
                    "clusterName": cluster_name,
                    "version": parts.version,
                    "bootstrap": {"configRef": reference(parts.bootstrap)},
                    "infrastructureRef": reference(parts.infrastructure),
                    "failureDomain": cluster_or_class(&["failureDomain"]),
                    "deletion": Value::Object(seconds),
                    "readinessGates": list("readinessGates", &["conditionType", "polarity"]),
                    "taints": taints,
                    "minReadySeconds": cluster_or_class(&["minReadySeconds"]),
                },
            },
        },
    });
    omit_empty(&mut object);
    Ok(object)
}

/// Whether Go's `reflect.DeepEqual` would find the decoded struct zero: absent, null, empty
/// strings and objects with only such fields (a number, even 0, is a set pointer).
fn is_zero(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Object(map)) => map.values().all(|v| is_zero(Some(v))),
        Some(Value::Array(_) | Value::Number(_) | Value::Bool(_)) => false,
    }
}

/// Drops what Go's JSON encoding of CAPI's types leaves out (`omitempty`, `omitzero`): nulls,
/// empty strings, empty lists and maps, and objects left empty; the values of label,
/// annotation and selector maps stay.
fn omit_empty(value: &mut Value) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_object(topology: Value, class: Value, capi: CapiVersion) -> Value {
        let cluster = json!({"metadata": {"name": "c1", "namespace": "ns"}});
        let labels = BTreeMap::from([("a".to_string(), "b".to_string())]);
        let bootstrap = json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate", "metadata": {"name": "c1-md-0-abcde"}});
        let infrastructure = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "metadata": {"name": "c1-md-0-fghjk"}});
        object(
            &Parts {
                cluster: &cluster,
                topology: &topology,
                class: &class,
                name: "c1-md-0-xyzvw",
                labels: &labels,
                annotations: &BTreeMap::new(),
                bootstrap: &bootstrap,
                infrastructure: &infrastructure,
                version: "v1.35.0",
            },
            capi,
        )
        .unwrap()
    }

    #[test]
    fn the_topology_wins_over_the_class_field_by_field_and_the_rollout_as_a_whole() {
        let class = json!({
            "class": "default-worker",
            "rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}},
            "deletion": {"order": "Oldest", "nodeDrainTimeoutSeconds": 10},
            "failureDomain": "fd1",
            "minReadySeconds": 5,
        });
        let topology = json!({
            "name": "md-0", "class": "default-worker", "replicas": 0,
            "rollout": {"strategy": {"rollingUpdate": {"maxUnavailable": "10%"}}},
            "deletion": {"nodeDrainTimeoutSeconds": 20},
            "readinessGates": [{"conditionType": "Ready", "polarity": ""}],
        });
        let md = parts_object(topology, class, CapiVersion::new(1, 14));
        let spec = &md["spec"];
        assert_eq!(spec["replicas"], 0);
        assert_eq!(
            spec["rollout"],
            json!({"strategy": {"rollingUpdate": {"maxUnavailable": "10%"}}})
        );
        assert_eq!(spec["deletion"], json!({"order": "Oldest"}));
        assert!(spec.get("remediation").is_none());
        let machine = &spec["template"]["spec"];
        assert_eq!(machine["deletion"], json!({"nodeDrainTimeoutSeconds": 20}));
        assert_eq!(machine["failureDomain"], "fd1");
        assert_eq!(machine["minReadySeconds"], 5);
        assert_eq!(
            machine["readinessGates"],
            json!([{"conditionType": "Ready"}])
        );
        assert_eq!(
            machine["bootstrap"]["configRef"],
            json!({"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "c1-md-0-abcde"})
        );
        assert_eq!(
            spec["selector"]["matchLabels"][TOPOLOGY_OWNED_LABEL],
            json!("")
        );
        assert!(md["metadata"].get("annotations").is_none());
    }

    #[test]
    fn cluster_api_1_12_copies_neither_taints_nor_the_rollout_date() {
        let topology = json!({
            "name": "md-0",
            "rollout": {"after": "2026-01-02T15:04:05Z"},
            "taints": [{"key": "k", "effect": "NoSchedule"}],
        });
        let md = parts_object(topology.clone(), json!({}), CapiVersion::new(1, 12));
        assert!(md["spec"].get("rollout").is_none());
        assert!(md["spec"]["template"]["spec"].get("taints").is_none());
        let md = parts_object(topology, json!({}), CapiVersion::new(1, 13));
        assert_eq!(md["spec"]["rollout"]["after"], "2026-01-02T15:04:05Z");
        assert_eq!(md["spec"]["template"]["spec"]["taints"][0]["key"], "k");
    }
}
