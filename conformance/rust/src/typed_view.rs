//! The typed fields of the objects embedded in a request, each under the JSON path CAPI gives
//! it, written here by hand (not derived from the serde names of the runtime's types). The round
//! trip compares each with the value at that path in CAPI's JSON: a typed field whose serde name
//! is wrong reads as empty here while CAPI's JSON has the value, even though the `extra` map
//! carries the misnamed key through the round trip unchanged.

use capi_ext::objects::{Cluster, Machine, MachineSet, ObjectMeta};
use serde_json::{Map, Value, json};

fn meta(view: &mut Map<String, Value>, at: &str, m: &ObjectMeta) {
    view.insert(format!("{at}.metadata.name"), json!(m.name));
    view.insert(format!("{at}.metadata.namespace"), json!(m.namespace));
    view.insert(format!("{at}.metadata.uid"), json!(m.uid));
    view.insert(format!("{at}.metadata.labels"), json!(m.labels));
    view.insert(format!("{at}.metadata.annotations"), json!(m.annotations));
}

fn cluster(view: &mut Map<String, Value>, at: &str, c: &Cluster) {
    view.insert(format!("{at}.apiVersion"), json!(c.api_version));
    view.insert(format!("{at}.kind"), json!(c.kind));
    meta(view, at, &c.metadata);
    view.insert(format!("{at}.spec.paused"), json!(c.spec.paused));
    if let Some(t) = &c.spec.topology {
        view.insert(format!("{at}.spec.topology.version"), json!(t.version));
        if let Some(r) = &t.class_ref {
            view.insert(format!("{at}.spec.topology.classRef.name"), json!(r.name));
            view.insert(
                format!("{at}.spec.topology.classRef.namespace"),
                json!(r.namespace),
            );
        }
        let variables: Vec<Value> = t
            .variables
            .iter()
            .map(|v| json!({"name": v.name, "value": v.value}))
            .collect();
        view.insert(format!("{at}.spec.topology.variables"), json!(variables));
    }
}

fn machine(view: &mut Map<String, Value>, at: &str, m: &Machine) {
    view.insert(format!("{at}.apiVersion"), json!(m.api_version));
    view.insert(format!("{at}.kind"), json!(m.kind));
    meta(view, at, &m.metadata);
    view.insert(format!("{at}.spec.clusterName"), json!(m.spec.cluster_name));
    view.insert(format!("{at}.spec.version"), json!(m.spec.version));
    view.insert(
        format!("{at}.spec.failureDomain"),
        json!(m.spec.failure_domain),
    );
}

fn machine_set(view: &mut Map<String, Value>, at: &str, m: &MachineSet) {
    view.insert(format!("{at}.apiVersion"), json!(m.api_version));
    view.insert(format!("{at}.kind"), json!(m.kind));
    meta(view, at, &m.metadata);
    view.insert(format!("{at}.spec.clusterName"), json!(m.spec.cluster_name));
    view.insert(format!("{at}.spec.replicas"), json!(m.spec.replicas));
}

fn at<'a>(body: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(body, |v, key| v.get(key))
}

/// The typed view of the embedded objects of a request `body`, or why one did not decode.
pub fn of_request(body: &str) -> Result<Map<String, Value>, String> {
    let body: Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
    let mut view = Map::new();
    let decode = |path: &str| -> Result<Option<Value>, String> {
        Ok(at(&body, path).filter(|v| !v.is_null()).cloned())
    };
    if let Some(v) = decode("cluster")? {
        let typed: Cluster = serde_json::from_value(v).map_err(|e| format!("cluster: {e}"))?;
        cluster(&mut view, "cluster", &typed);
    }
    for side in ["current", "desired"] {
        if let Some(v) = decode(&format!("{side}.machine"))? {
            let typed: Machine =
                serde_json::from_value(v).map_err(|e| format!("{side}.machine: {e}"))?;
            machine(&mut view, &format!("{side}.machine"), &typed);
        }
        if let Some(v) = decode(&format!("{side}.machineSet"))? {
            let typed: MachineSet =
                serde_json::from_value(v).map_err(|e| format!("{side}.machineSet: {e}"))?;
            machine_set(&mut view, &format!("{side}.machineSet"), &typed);
        }
    }
    Ok(view)
}
