//! The MachineHealthChecks of a topology, as `computeMachineHealthCheck` builds them: one for
//! the control plane (when its class has machine infrastructure) and one per MachineDeployment,
//! each named as its target, when the ClusterClass or the Cluster's topology defines a health
//! check and the topology does not disable it. The Cluster's health check, when defined, wins
//! over the class's as a whole.

use super::machine_template::{is_zero, omit_empty};
use super::templates::cluster_owner;
use super::{CLUSTER_NAME_LABEL, DEPLOYMENT_NAME_LABEL, TOPOLOGY_OWNED_LABEL};
use crate::object::{get, string};
use serde_json::{Value, json};

/// The label of control plane Machines.
const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
/// What CAPI's MachineHealthCheck webhook gives `checks.nodeStartupTimeoutSeconds` when unset
/// (`clusterv1.DefaultNodeStartupTimeoutSeconds`).
const DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS: i32 = 600;

/// The control plane's MachineHealthCheck, if CAPI makes one: `class` is the ClusterClass's
/// `spec.controlPlane`, `topology` the Cluster's `spec.topology.controlPlane`; `has_machines`
/// whether the class gives the control plane machine infrastructure.
pub(super) fn control_plane(
    cluster: &Value,
    class: &Value,
    topology: &Value,
    control_plane: &Value,
    has_machines: bool,
) -> Option<Value> {
    let selector = json!({TOPOLOGY_OWNED_LABEL: "", CONTROL_PLANE_LABEL: ""});
    has_machines
        .then(|| health_check(cluster, class, topology, control_plane, selector))
        .flatten()
}

/// A MachineDeployment's MachineHealthCheck, if CAPI makes one: `class` is its class entry of
/// the ClusterClass, `topology` its entry of the Cluster's topology.
pub(super) fn machine_deployment(
    cluster: &Value,
    class: &Value,
    topology: &Value,
    machine_deployment: &Value,
) -> Option<Value> {
    let selector = json!({
        TOPOLOGY_OWNED_LABEL: "",
        DEPLOYMENT_NAME_LABEL: string(topology, &["name"]),
    });
    health_check(cluster, class, topology, machine_deployment, selector)
}

/// `IsControlPlaneMachineHealthCheckEnabled` / `IsMachineDeploymentMachineHealthCheckEnabled`,
/// then `computeMachineHealthCheck` with the checks and remediation of the topology's health
/// check if defined, else the class's; defaulted as CAPI's webhook defaults it.
fn health_check(
    cluster: &Value,
    class: &Value,
    topology: &Value,
    target: &Value,
    match_labels: Value,
) -> Option<Value> {
    let class_check = get(class, &["healthCheck"]);
    let topology_check = get(topology, &["healthCheck"]);
    if !defined(class_check) && !defined(topology_check) {
        return None;
    }
    if get(topology, &["healthCheck", "enabled"]).and_then(Value::as_bool) == Some(false) {
        return None;
    }
    let from = if defined(topology_check) {
        topology_check
    } else {
        class_check
    }?;
    let conditions = |field: &str| {
        get(from, &["checks", field]).filter(|v| !v.is_null()).map(|list| {
            Value::Array(
                list.as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .map(|c| {
                        json!({"type": c.get("type"), "status": c.get("status"), "timeoutSeconds": c.get("timeoutSeconds")})
                    })
                    .collect(),
            )
        })
    };
    let cluster_name = string(cluster, &["metadata", "name"]);
    let mut object = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineHealthCheck",
        "metadata": {
            "name": string(target, &["metadata", "name"]),
            "namespace": string(target, &["metadata", "namespace"]),
            "labels": {TOPOLOGY_OWNED_LABEL: "", CLUSTER_NAME_LABEL: cluster_name},
            "ownerReferences": cluster_owner(cluster),
        },
        "spec": {
            "clusterName": cluster_name,
            "selector": {"matchLabels": match_labels},
            "checks": {
                "nodeStartupTimeoutSeconds": get(from, &["checks", "nodeStartupTimeoutSeconds"])
                    .filter(|v| !v.is_null())
                    .cloned()
                    .unwrap_or(json!(DEFAULT_NODE_STARTUP_TIMEOUT_SECONDS)),
                "unhealthyNodeConditions": conditions("unhealthyNodeConditions"),
                "unhealthyMachineConditions": conditions("unhealthyMachineConditions"),
            },
            "remediation": {
                "triggerIf": {
                    "unhealthyLessThanOrEqualTo": get(from, &["remediation", "triggerIf", "unhealthyLessThanOrEqualTo"]),
                    "unhealthyInRange": get(from, &["remediation", "triggerIf", "unhealthyInRange"]),
                },
                "templateRef": {
                    "kind": get(from, &["remediation", "templateRef", "kind"]),
                    "name": get(from, &["remediation", "templateRef", "name"]),
                    "apiVersion": get(from, &["remediation", "templateRef", "apiVersion"]),
                },
            },
        },
    });
    omit_empty(&mut object);
    Some(object)
}

/// `HealthCheck.IsDefined()`: checks or remediation not zero, as Go's `reflect.Value.IsZero`
/// finds them once decoded (a set number, even 0, and a list, even empty, count; `enabled`
/// does not).
fn defined(health_check: Option<&Value>) -> bool {
    let Some(health_check) = health_check else {
        return false;
    };
    ["checks", "remediation"]
        .iter()
        .any(|field| !is_zero(health_check.get(*field)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> Value {
        json!({"metadata": {"name": "c1", "namespace": "ns", "uid": "u"}})
    }

    #[test]
    fn the_topologys_health_check_wins_and_the_webhook_defaults_the_startup_timeout() {
        let class =
            json!({"class": "w", "healthCheck": {"checks": {"nodeStartupTimeoutSeconds": 5}}});
        let topology = json!({"name": "md-0", "healthCheck": {"remediation": {"triggerIf": {"unhealthyInRange": "[1-3]"}}}});
        let md = json!({"metadata": {"name": "c1-md-0-abcde", "namespace": "ns"}});
        let mhc = machine_deployment(&cluster(), &class, &topology, &md).unwrap();
        assert_eq!(mhc["metadata"]["name"], "c1-md-0-abcde");
        assert_eq!(
            mhc["spec"]["checks"],
            json!({"nodeStartupTimeoutSeconds": 600})
        );
        assert_eq!(
            mhc["spec"]["remediation"],
            json!({"triggerIf": {"unhealthyInRange": "[1-3]"}})
        );
        assert_eq!(
            mhc["spec"]["selector"]["matchLabels"][DEPLOYMENT_NAME_LABEL],
            "md-0"
        );
        assert_eq!(mhc["metadata"]["ownerReferences"][0]["kind"], "Cluster");
    }

    #[test]
    fn a_health_check_is_made_only_when_defined_and_not_disabled() {
        let md = json!({"metadata": {"name": "m", "namespace": "ns"}});
        let defined_class = json!({"healthCheck": {"remediation": {"maxInFlight": 1}}});
        // A class that sets only maxInFlight defines a health check, as Go's IsDefined says.
        assert!(machine_deployment(&cluster(), &defined_class, &json!({}), &md).is_some());
        assert!(machine_deployment(&cluster(), &json!({}), &json!({}), &md).is_none());
        let disabled = json!({"healthCheck": {"enabled": false}});
        assert!(machine_deployment(&cluster(), &defined_class, &disabled, &md).is_none());
        // Enabled without any checks anywhere: none.
        let enabled = json!({"healthCheck": {"enabled": true}});
        assert!(machine_deployment(&cluster(), &json!({}), &enabled, &md).is_none());
        // The control plane's needs machine infrastructure in its class.
        let cp = json!({"metadata": {"name": "cp", "namespace": "ns"}});
        let class = json!({"healthCheck": {"checks": {"nodeStartupTimeoutSeconds": 1}}});
        assert!(control_plane(&cluster(), &class, &json!({}), &cp, false).is_none());
        let mhc = control_plane(&cluster(), &class, &json!({}), &cp, true).unwrap();
        assert_eq!(
            mhc["spec"]["selector"]["matchLabels"],
            json!({TOPOLOGY_OWNED_LABEL: "", CONTROL_PLANE_LABEL: ""})
        );
        assert_eq!(mhc["spec"]["checks"]["nodeStartupTimeoutSeconds"], 1);
    }
}
