//! What Cluster API's own defaulting webhooks do to an object render prints, on create: the
//! API server calls them after decoding (CRD defaults filled in), before it stores the object.
//! Played where render plays the API server (with CRDs at hand).

use serde_json::{Map, Value, json};

/// The label naming the Cluster.
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// The label CAPI's webhook selects a MachineDeployment's Machines by when it has no selector.
const DEPLOYMENT_NAME_LABEL: &str = "cluster.x-k8s.io/deployment-name";
/// The cluster autoscaler's bounds, read for the default replicas.
const AUTOSCALER_MIN: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size";
const AUTOSCALER_MAX: &str = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size";
/// What the MachinePool webhook gives a Machine's node deletion timeout when none is set.
const DEFAULT_NODE_DELETION_TIMEOUT_SECONDS: i32 = 10;

/// Applies the defaulting webhook of the object's kind, if Cluster API has one render plays;
/// an error says what the webhook would refuse.
pub(crate) fn default(object: &mut Value) -> Result<(), String> {
    let is_core = object["apiVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("cluster.x-k8s.io/"));
    match (is_core, object["kind"].as_str()) {
        (true, Some("MachineDeployment")) => machine_deployment(object),
        (true, Some("MachinePool")) => machine_pool(object),
        (false, Some("KubeadmControlPlane"))
            if object["apiVersion"] == "controlplane.cluster.x-k8s.io/v1beta2" =>
        {
            kubeadm_control_plane(object);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `KubeadmControlPlane.Default` of KCP's webhooks (the same from v1.12 to v1.14), for a
/// v1beta2 KubeadmControlPlane: one replica when none is set, the version's `v`, and the
/// RollingUpdate strategy enforced with a surge of one when none is set. (A v1beta1 object
/// reaches the webhook converted to v1beta2 and comes back converted again; render leaves it
/// as the CRD stores it.)
fn kubeadm_control_plane(kcp: &mut Value) {
    let spec = object_at(kcp, &["spec"]);
    if spec.get("replicas").is_none_or(Value::is_null) {
        spec.insert("replicas".into(), json!(1));
    }
    // Go's strings.HasPrefix on the field's value ("" when absent) as the webhook reads it.
    let version = spec.get("version").and_then(Value::as_str).unwrap_or("");
    if !version.starts_with('v') {
        let prefixed = format!("v{version}");
        spec.insert("version".into(), json!(prefixed));
    }
    let strategy = object_at(kcp, &["spec", "rollout", "strategy"]);
    strategy.insert("type".into(), json!("RollingUpdate"));
    object_at(kcp, &["spec", "rollout", "strategy", "rollingUpdate"])
        .entry("maxSurge")
        .and_modify(|surge| {
            if surge.is_null() {
                *surge = json!(1);
            }
        })
        .or_insert(json!(1));
}

/// `MachineDeployment.Default` of CAPI's core webhooks, for a new MachineDeployment.
fn machine_deployment(md: &mut Value) -> Result<(), String> {
    let cluster = md["spec"]["clusterName"].as_str().unwrap_or("").to_string();
    let name = md["metadata"]["name"].as_str().unwrap_or("").to_string();
    object_at(md, &["metadata", "labels"]).insert(CLUSTER_NAME_LABEL.into(), json!(cluster));
    default_replicas(md, "MachineDeployment", &name)?;
    let strategy = object_at(md, &["spec", "rollout", "strategy"]);
    if strategy
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        strategy.insert("type".into(), json!("RollingUpdate"));
    }
    if strategy["type"] == "RollingUpdate" {
        let rolling = object_at(md, &["spec", "rollout", "strategy", "rollingUpdate"]);
        rolling.entry("maxSurge").or_insert(json!(1));
        rolling.entry("maxUnavailable").or_insert(json!(0));
    }
    let selector_empty = md["spec"]["selector"]["matchLabels"]
        .as_object()
        .is_none_or(Map::is_empty)
        && md["spec"]["selector"]["matchExpressions"]
            .as_array()
            .is_none_or(Vec::is_empty);
    for path in [
        &["spec", "selector", "matchLabels"][..],
        &["spec", "template", "metadata", "labels"][..],
    ] {
        let labels = object_at(md, path);
        if selector_empty {
            labels.insert(DEPLOYMENT_NAME_LABEL.into(), json!(name));
        }
        labels.insert(CLUSTER_NAME_LABEL.into(), json!(cluster));
    }
    v_prefix(md);
    Ok(())
}

/// `MachinePool.Default` of CAPI's core webhooks, for a new MachinePool.
fn machine_pool(mp: &mut Value) -> Result<(), String> {
    let cluster = mp["spec"]["clusterName"].as_str().unwrap_or("").to_string();
    let name = mp["metadata"]["name"].as_str().unwrap_or("").to_string();
    object_at(mp, &["metadata", "labels"]).insert(CLUSTER_NAME_LABEL.into(), json!(cluster));
    default_replicas(mp, "MachinePool", &name)?;
    object_at(mp, &["spec", "template", "spec", "deletion"])
        .entry("nodeDeletionTimeoutSeconds")
        .or_insert(json!(DEFAULT_NODE_DELETION_TIMEOUT_SECONDS));
    v_prefix(mp);
    Ok(())
}

/// The replicas of a new MachineDeployment or MachinePool without any: the autoscaler's min
/// size when both its annotations are set (parsed as Go's `strconv.ParseInt(_, 10, 32)`), else 1.
fn default_replicas(object: &mut Value, kind: &str, name: &str) -> Result<(), String> {
    if !object["spec"]["replicas"].is_null() {
        return Ok(());
    }
    let annotations = &object["metadata"]["annotations"];
    let replicas = match (
        annotations[AUTOSCALER_MIN].as_str(),
        annotations[AUTOSCALER_MAX].as_str(),
    ) {
        (Some(min), Some(max)) => {
            let parse = |value: &str, key: &str| {
                value.parse::<i32>().map_err(|err| {
                    format!(
                        "{kind} {name}: could not parse the value of the {key:?} annotation: {err}"
                    )
                })
            };
            parse(max, AUTOSCALER_MAX)?;
            parse(min, AUTOSCALER_MIN)?
        }
        _ => 1,
    };
    object_at(object, &["spec"]).insert("replicas".into(), json!(replicas));
    Ok(())
}

/// Version strings without a `v` prefix get one.
fn v_prefix(object: &mut Value) {
    if let Some(version) = object["spec"]["template"]["spec"]["version"].as_str()
        && !version.is_empty()
        && !version.starts_with('v')
    {
        object["spec"]["template"]["spec"]["version"] = json!(format!("v{version}"));
    }
}

/// The object at `path`, made (and made an object) where missing.
fn object_at<'a>(value: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut at = value;
    for key in path {
        if !at.is_object() {
            *at = json!({});
        }
        at = at
            .as_object_mut()
            .expect("made an object above")
            .entry(*key)
            .or_insert_with(|| json!({}));
    }
    if !at.is_object() {
        *at = json!({});
    }
    at.as_object_mut().expect("made an object above")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topology_machine_deployment_gets_capis_rollout_defaults() {
        let mut md = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "c1-md-0-abcde", "labels": {"a": "b"}},
            "spec": {"clusterName": "c1", "replicas": 2,
                     "selector": {"matchLabels": {"topology.cluster.x-k8s.io/deployment-name": "md-0"}},
                     "template": {"metadata": {}, "spec": {"version": "1.34.0"}}},
        });
        default(&mut md).unwrap();
        assert_eq!(
            md["spec"]["rollout"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
        );
        assert_eq!(md["spec"]["replicas"], 2);
        assert_eq!(md["metadata"]["labels"][CLUSTER_NAME_LABEL], "c1");
        assert_eq!(
            md["spec"]["template"]["metadata"]["labels"],
            json!({CLUSTER_NAME_LABEL: "c1"})
        );
        assert!(
            md["spec"]["selector"]["matchLabels"]
                .get(DEPLOYMENT_NAME_LABEL)
                .is_none()
        );
        assert_eq!(md["spec"]["template"]["spec"]["version"], "v1.34.0");
    }

    #[test]
    fn a_kubeadm_control_plane_gets_kcps_defaults() {
        let kcp = |spec: Value| {
            let mut kcp = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
                "kind": "KubeadmControlPlane", "metadata": {"name": "cp"}, "spec": spec});
            default(&mut kcp).unwrap();
            kcp["spec"].clone()
        };
        assert_eq!(
            kcp(json!({"version": "1.34.0"})),
            json!({"version": "v1.34.0", "replicas": 1,
                   "rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}})
        );
        // The type is enforced; replicas and a surge given are kept (an int-or-string).
        assert_eq!(
            kcp(json!({"version": "v1.34.0", "replicas": 3,
                       "rollout": {"after": "2026-01-01T00:00:00Z", "strategy": {"rollingUpdate": {"maxSurge": "50%"}}}})),
            json!({"version": "v1.34.0", "replicas": 3,
                   "rollout": {"after": "2026-01-01T00:00:00Z",
                               "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%"}}}})
        );
        // Another API group's kind of the same name is not KCP's.
        let mut other =
            json!({"apiVersion": "example.com/v1", "kind": "KubeadmControlPlane", "spec": {}});
        default(&mut other).unwrap();
        assert_eq!(other["spec"], json!({}));
    }

    #[test]
    fn on_delete_keeps_no_rolling_update_and_replicas_follow_the_autoscaler() {
        let mut md = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "md", "annotations": {AUTOSCALER_MIN: "3", AUTOSCALER_MAX: "5"}},
            "spec": {"clusterName": "c1", "rollout": {"strategy": {"type": "OnDelete"}}},
        });
        default(&mut md).unwrap();
        assert_eq!(
            md["spec"]["rollout"]["strategy"],
            json!({"type": "OnDelete"})
        );
        assert_eq!(md["spec"]["replicas"], 3);
        assert_eq!(
            md["spec"]["selector"]["matchLabels"][DEPLOYMENT_NAME_LABEL],
            "md"
        );

        md["metadata"]["annotations"][AUTOSCALER_MAX] = json!("five");
        md["spec"]["replicas"] = Value::Null;
        assert!(default(&mut md).unwrap_err().contains("max-size"));
    }

    #[test]
    fn a_machine_pool_gets_its_cluster_label_one_replica_and_a_node_deletion_timeout() {
        let mut mp = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
            "metadata": {"name": "mp"},
            "spec": {"clusterName": "c1", "template": {"spec": {"version": "1.34.0", "deletion": {"nodeDrainTimeoutSeconds": 5}}}},
        });
        default(&mut mp).unwrap();
        assert_eq!(mp["metadata"]["labels"][CLUSTER_NAME_LABEL], "c1");
        assert_eq!(mp["spec"]["replicas"], 1);
        assert_eq!(
            mp["spec"]["template"]["spec"]["deletion"],
            json!({"nodeDrainTimeoutSeconds": 5, "nodeDeletionTimeoutSeconds": 10})
        );
        assert_eq!(mp["spec"]["template"]["spec"]["version"], "v1.34.0");
        // Not a MachineDeployment: no rollout strategy, no selector.
        assert!(mp["spec"].get("rollout").is_none());
        assert!(mp["spec"].get("selector").is_none());
    }
}
