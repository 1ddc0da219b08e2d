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
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// UID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Labels.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
    /// Every other metadata field.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `cluster.x-k8s.io/v1beta2` Cluster (status is never sent to hooks).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// `cluster.x-k8s.io/v1beta2` (v1beta1 before CAPI 1.13).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `Cluster`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: ClusterSpec,
    /// Every other top-level field (e.g. a `status` sent by an older CAPI).
    #[serde(flatten)]
    pub extra: Extra,
}

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
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Whether reconciliation is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// The managed topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// Every other spec field (clusterNetwork, controlPlaneRef, infrastructureRef, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.topology` of a Cluster.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The ClusterClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_ref: Option<ClusterClassRef>,
    /// Desired Kubernetes version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Cluster variables.
    #[serde(
        default,
        deserialize_with = "crate::decode::null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variables: Vec<ClusterVariable>,
    /// Every other topology field (controlPlane, workers, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

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
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Machine {
    /// `cluster.x-k8s.io/v1beta2`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `Machine`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: MachineSpec,
    /// Every other top-level field.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Machine {
    /// `namespace/name`, as used in logs.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }
}

/// Machine spec.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// Owning Cluster.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// Kubernetes version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Failure domain.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub failure_domain: String,
    /// Every other spec field (bootstrap, infrastructureRef, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `cluster.x-k8s.io/v1beta2` MachineSet.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSet {
    /// `cluster.x-k8s.io/v1beta2`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `MachineSet`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(default)]
    pub spec: MachineSetSpec,
    /// Every other top-level field.
    #[serde(flatten)]
    pub extra: Extra,
}

impl MachineSet {
    /// `namespace/name`, as used in logs.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }
}

/// MachineSet spec.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSetSpec {
    /// Owning Cluster.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster_name: String,
    /// Replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Every other spec field (selector, template, ...).
    #[serde(flatten)]
    pub extra: Extra,
}
