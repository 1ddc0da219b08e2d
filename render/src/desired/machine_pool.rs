//! The MachinePool object of a MachinePool topology, as `computeMachinePool` builds it:
//! replicas, failure domains, the machine template (version, references, deletion timeouts,
//! taints, minReadySeconds), labels and annotations. Each field the Cluster's topology sets wins
//! over the ClusterClass's.

use super::machine_template::{Parts, cluster_or_class, worker_object};
use capi_ext::CapiVersion;
use serde_json::{Value, json};

/// The MachinePool CAPI creates (or updates) for one topology entry.
pub(super) fn object(parts: &Parts<'_>, capi_version: CapiVersion) -> Value {
    let failure_domains = cluster_or_class(parts.topology, parts.class, &["failureDomains"]);
    worker_object(
        parts,
        "MachinePool",
        json!({"failureDomains": failure_domains}),
        json!({}),
        capi_version,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_topology_wins_over_the_class_and_an_empty_list_is_the_topologys() {
        let cluster = json!({"metadata": {"name": "c1", "namespace": "ns"}});
        let labels = BTreeMap::from([("a".to_string(), "b".to_string())]);
        let bootstrap = json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfig", "metadata": {"name": "c1-mp-0-abcde"}});
        let infrastructure = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachinePool", "metadata": {"name": "c1-mp-0-fghjk"}});
        let class = json!({
            "class": "default-pool",
            "failureDomains": ["fd1"],
            "deletion": {"nodeDrainTimeoutSeconds": 10, "nodeDeletionTimeoutSeconds": 3},
            "minReadySeconds": 5,
            "taints": [{"key": "k", "effect": "NoSchedule"}],
        });
        let topology = json!({
            "name": "mp-0", "class": "default-pool", "replicas": 2,
            "failureDomains": [],
            "deletion": {"nodeDrainTimeoutSeconds": 20},
        });
        let mp = |capi| {
            object(
                &Parts {
                    cluster: &cluster,
                    topology: &topology,
                    class: &class,
                    name: "c1-mp-0-xyzvw",
                    labels: &labels,
                    annotations: &BTreeMap::new(),
                    bootstrap: &bootstrap,
                    infrastructure: &infrastructure,
                    version: "v1.35.0",
                },
                capi,
            )
        };
        let pool = mp(CapiVersion::new(1, 14));
        let spec = &pool["spec"];
        assert_eq!(spec["replicas"], 2);
        // The topology's empty list wins and is then left out, as Go's omitempty does.
        assert!(spec.get("failureDomains").is_none());
        let machine = &spec["template"]["spec"];
        assert_eq!(
            machine["deletion"],
            json!({"nodeDrainTimeoutSeconds": 20, "nodeDeletionTimeoutSeconds": 3})
        );
        assert_eq!(machine["minReadySeconds"], 5);
        assert_eq!(
            machine["taints"],
            json!([{"key": "k", "effect": "NoSchedule"}])
        );
        assert_eq!(
            machine["infrastructureRef"],
            json!({"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachinePool", "name": "c1-mp-0-fghjk"})
        );
        assert_eq!(pool["spec"]["template"]["metadata"]["labels"]["a"], "b");
        assert!(pool["metadata"].get("annotations").is_none());
        let pool = mp(CapiVersion::new(1, 12));
        assert!(pool["spec"]["template"]["spec"].get("taints").is_none());
    }
}
