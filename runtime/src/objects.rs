//! The CAPI objects embedded in hook requests, typed where extension authors read them.
//!
//! Each type names the fields authors use (`cluster.spec.topology.version`,
//! `machine.spec.version`, ...) and keeps every other field in an `extra` map, so decoding
//! and re-encoding an object loses nothing, whatever fields a newer CAPI adds. The shapes
//! are `cluster.x-k8s.io/v1beta2`, which CAPI sends from 1.13 on.
//!
//! ```
//! use capi_ext::objects::Cluster;
//!
//! let cluster: Cluster = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
//!     "metadata": {"name": "c1", "namespace": "default", "creationTimestamp": null},
//!     "spec": {"topology": {"classRef": {"name": "quick-start"}, "version": "v1.33.0"},
//!              "futureField": {"kept": true}}
//! })).unwrap();
//! assert_eq!(cluster.topology_version(), Some("v1.33.0"));
//! let back = serde_json::to_value(&cluster).unwrap();
//! assert_eq!(back["spec"]["futureField"]["kept"], true);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Unknown fields of an object, kept for lossless round trips.
pub type Extra = Map<String, Value>;

/// Kubernetes object metadata: the fields extensions read; everything else (including
/// `creationTimestamp: null`) is kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Namespace.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// UID.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Labels.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Every other metadata field.
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(ObjectMeta, "struct ObjectMeta", extra, {
    name: "name",
    namespace: "namespace",
    uid: "uid",
    labels: "labels" or_null,
    annotations: "annotations" or_null,
});

/// A `cluster.x-k8s.io/v1beta2` Cluster (status is never sent to hooks).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// `cluster.x-k8s.io/v1beta2` (v1beta1 before CAPI 1.13).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `Cluster`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: ClusterSpec,
    /// Every other top-level field (e.g. a `status` sent by an older CAPI).
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(Cluster, "struct Cluster", extra, {
    api_version: "apiVersion",
    kind: "kind",
    metadata: "metadata",
    spec: "spec",
});

impl Cluster {
    /// `spec.topology.version`, when the Cluster has a topology.
    pub fn topology_version(&self) -> Option<&str> {
        self.spec
            .topology
            .as_ref()
            .map(|t| t.version.as_str())
            .filter(|v| !v.is_empty())
    }

    /// `namespace/name`, as used in logs.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }
}

/// Cluster spec.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Whether reconciliation is paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// The managed topology.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// Every other spec field (clusterNetwork, controlPlaneRef, infrastructureRef, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(ClusterSpec, "struct ClusterSpec", extra, {
    paused: "paused",
    topology: "topology",
});

/// `spec.topology` of a Cluster.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The ClusterClass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_ref: Option<ClusterClassRef>,
    /// Desired Kubernetes version.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Cluster variables.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<ClusterVariable>,
    /// Every other topology field (controlPlane, workers, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(Topology, "struct Topology", extra, {
    class_ref: "classRef",
    version: "version",
    variables: "variables" or_null,
});

/// Reference to a ClusterClass.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClusterClassRef {
    /// Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Namespace (defaults to the Cluster's).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// A variable value set on a Cluster.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClusterVariable {
    /// Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Value.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub value: Value,
}

/// A `cluster.x-k8s.io/v1beta2` Machine.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// `cluster.x-k8s.io/v1beta2`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `Machine`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: MachineSpec,
    /// Every other top-level field.
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(Machine, "struct Machine", extra, {
    api_version: "apiVersion",
    kind: "kind",
    metadata: "metadata",
    spec: "spec",
});

impl Machine {
    /// `namespace/name`, as used in logs.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }
}

/// Machine spec.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// Owning Cluster.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// Kubernetes version.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Failure domain.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub failure_domain: String,
    /// Every other spec field (bootstrap, infrastructureRef, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(MachineSpec, "struct MachineSpec", extra, {
    cluster_name: "clusterName",
    version: "version",
    failure_domain: "failureDomain",
});

/// A `cluster.x-k8s.io/v1beta2` MachineSet.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSet {
    /// `cluster.x-k8s.io/v1beta2`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MachineSet`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: MachineSetSpec,
    /// Every other top-level field.
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(MachineSet, "struct MachineSet", extra, {
    api_version: "apiVersion",
    kind: "kind",
    metadata: "metadata",
    spec: "spec",
});

impl MachineSet {
    /// `namespace/name`, as used in logs.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }
}

/// MachineSet spec.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetSpec {
    /// Owning Cluster.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// Replicas.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Every other spec field (selector, template, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

crate::__deserialize_keeping_unknown!(MachineSetSpec, "struct MachineSetSpec", extra, {
    cluster_name: "clusterName",
    replicas: "replicas",
});

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CLUSTER: &str = r#"{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","status":{"phase":"x"},
        "metadata":{"name":"c1","labels":null,"annotations":{"a":"b"},"creationTimestamp":null,"gen\u0065ration":2},
        "spec":{"paused":false,"topology":{"classRef":{"name":"qs"},"version":"v1.33.0","variables":null,
                "workers":{"machineDeployments":[]}},"clusterNetwork":{"serviceDomain":"cluster.local"}}}"#;

    #[test]
    fn named_fields_are_typed_and_every_other_one_is_kept() {
        for cluster in [
            serde_json::from_str::<Cluster>(CLUSTER).unwrap(),
            serde_json::from_slice::<Cluster>(CLUSTER.as_bytes()).unwrap(),
            serde_json::from_value::<Cluster>(serde_json::from_str(CLUSTER).unwrap()).unwrap(),
        ] {
            assert_eq!(cluster.metadata.name, "c1");
            assert!(cluster.metadata.labels.is_empty());
            assert_eq!(cluster.metadata.annotations["a"], "b");
            // An escaped key is decoded, not borrowed, and still kept.
            assert_eq!(cluster.metadata.extra["generation"], 2);
            assert_eq!(cluster.spec.paused, Some(false));
            assert_eq!(cluster.topology_version(), Some("v1.33.0"));
            assert_eq!(cluster.extra["status"], json!({"phase": "x"}));
            let back = serde_json::to_value(&cluster).unwrap();
            assert_eq!(
                back["spec"]["clusterNetwork"]["serviceDomain"],
                "cluster.local"
            );
            assert_eq!(
                back["spec"]["topology"]["workers"],
                json!({"machineDeployments": []})
            );
            assert_eq!(back["metadata"]["creationTimestamp"], Value::Null);
        }
    }

    #[test]
    fn missing_fields_are_defaults_and_wrong_ones_are_errors() {
        let machine: Machine = serde_json::from_str("{}").unwrap();
        assert_eq!(machine, Machine::default());
        let twice = serde_json::from_str::<Machine>(r#"{"kind":"Machine","kind":"Machine"}"#);
        assert!(
            twice
                .unwrap_err()
                .to_string()
                .contains("duplicate field `kind`")
        );
        let wrong = serde_json::from_str::<MachineSet>(r#"{"spec":{"replicas":"two"}}"#);
        assert!(
            wrong
                .unwrap_err()
                .to_string()
                .contains("invalid type: string \"two\", expected i32")
        );
        let not_a_map = serde_json::from_str::<Cluster>("[]");
        assert!(
            not_a_map
                .unwrap_err()
                .to_string()
                .contains("expected struct Cluster")
        );
        // `null` is a default only where Go writes nil slices and maps.
        assert!(serde_json::from_str::<Cluster>(r#"{"metadata":null}"#).is_err());
    }
}
