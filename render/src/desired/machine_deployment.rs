//! The MachineDeployment object of a MachineDeployment topology, as `computeMachineDeployment`
//! builds it: replicas, rollout strategy, deletion and remediation settings, the machine
//! template (version, references, failure domain, deletion timeouts, readiness gates, taints,
//! minReadySeconds), labels, annotations and selector. Each field the Cluster's topology sets
//! wins over the ClusterClass's.

use super::machine_template::{Parts, cluster_or_class, is_zero, topology_list, worker_object};
use super::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, TOPOLOGY_OWNED_LABEL, input};
use crate::error::RenderError;
use crate::go_template::metav1_time_utc;
use crate::object::{get, map_value, string};
use capi_ext::CapiVersion;
use serde_json::{Value, json};
use std::collections::BTreeMap;

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
    // Cluster API 1.12 has no rollout date in its MachineDeployment topology.
    let since_1_13 = capi_version >= CapiVersion::new(1, 13);
    let cluster_or_class = |path: &[&str]| cluster_or_class(topology, class, path);

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

    let selector = BTreeMap::from([
        (CLUSTER_NAME_LABEL.to_string(), cluster_name.to_string()),
        (TOPOLOGY_OWNED_LABEL.to_string(), String::new()),
        (DEPLOYMENT_NAME_LABEL.to_string(), topology_name.to_string()),
    ]);
    let object = worker_object(
        parts,
        "MachineDeployment",
        json!({
            "rollout": rollout,
            "deletion": {"order": cluster_or_class(&["deletion", "order"])},
            "remediation": {"maxInFlight": cluster_or_class(&["healthCheck", "remediation", "maxInFlight"])},
            "selector": {"matchLabels": map_value(&selector)},
        }),
        json!({
            "failureDomain": cluster_or_class(&["failureDomain"]),
            "readinessGates": topology_list(topology, class, "readinessGates", &["conditionType", "polarity"]),
        }),
        capi_version,
    );
    Ok(object)
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
