//! Lifecycle hooks: called by the topology controller around create, upgrade and delete.

use super::common::{request_type, response_type};
use crate::objects::Cluster;
use serde::{Deserialize, Serialize};

/// One step of an upgrade plan, as sent in lifecycle requests.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UpgradeStepInfo {
    /// Kubernetes version of the step, e.g. `v1.33.0`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

request_type! {
    /// Sent before the topology of a new Cluster is created.
    BeforeClusterCreateRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster (managedFields, status and some annotations removed).
        #[serde(default)]
        pub cluster: Cluster,
    }
}

response_type! {
    /// Answer to [`BeforeClusterCreateRequest`]; `retryAfterSeconds > 0` holds the creation.
    BeforeClusterCreateResponse retry {}
}

request_type! {
    /// Sent once the control plane of a Cluster is initialized.
    AfterControlPlaneInitializedRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
    }
}

response_type! {
    /// Answer to [`AfterControlPlaneInitializedRequest`] (not blocking).
    AfterControlPlaneInitializedResponse {}
}

request_type! {
    /// Sent before a Cluster upgrade starts.
    BeforeClusterUpgradeRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
        /// The current Kubernetes version.
        #[serde(default)]
        pub from_kubernetes_version: String,
        /// The target Kubernetes version (`spec.topology.version`).
        #[serde(default)]
        pub to_kubernetes_version: String,
        /// The control plane upgrade plan (CAPI ≥ 1.12).
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub control_plane_upgrades: Vec<UpgradeStepInfo>,
        /// The workers upgrade plan (CAPI ≥ 1.12).
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub workers_upgrades: Vec<UpgradeStepInfo>,
    }
}

response_type! {
    /// Answer to [`BeforeClusterUpgradeRequest`]; `retryAfterSeconds > 0` holds the upgrade.
    BeforeClusterUpgradeResponse retry {}
}

request_type! {
    /// Sent before each control plane upgrade step (CAPI ≥ 1.12).
    BeforeControlPlaneUpgradeRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
        /// The control plane version before this step.
        #[serde(default)]
        pub from_kubernetes_version: String,
        /// The control plane version after this step.
        #[serde(default)]
        pub to_kubernetes_version: String,
        /// Remaining control plane steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub control_plane_upgrades: Vec<UpgradeStepInfo>,
        /// Remaining workers steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub workers_upgrades: Vec<UpgradeStepInfo>,
    }
}

response_type! {
    /// Answer to [`BeforeControlPlaneUpgradeRequest`].
    BeforeControlPlaneUpgradeResponse retry {}
}

request_type! {
    /// Sent after each control plane upgrade step.
    AfterControlPlaneUpgradeRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
        /// The control plane version after the step.
        #[serde(default)]
        pub kubernetes_version: String,
        /// Remaining control plane steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub control_plane_upgrades: Vec<UpgradeStepInfo>,
        /// Remaining workers steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub workers_upgrades: Vec<UpgradeStepInfo>,
    }
}

response_type! {
    /// Answer to [`AfterControlPlaneUpgradeRequest`].
    AfterControlPlaneUpgradeResponse retry {}
}

request_type! {
    /// Sent before each workers upgrade step (CAPI ≥ 1.12).
    BeforeWorkersUpgradeRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
        /// The workers version before this step.
        #[serde(default)]
        pub from_kubernetes_version: String,
        /// The workers version after this step.
        #[serde(default)]
        pub to_kubernetes_version: String,
        /// Remaining control plane steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub control_plane_upgrades: Vec<UpgradeStepInfo>,
        /// Remaining workers steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub workers_upgrades: Vec<UpgradeStepInfo>,
    }
}

response_type! {
    /// Answer to [`BeforeWorkersUpgradeRequest`].
    BeforeWorkersUpgradeResponse retry {}
}

request_type! {
    /// Sent after each workers upgrade step (CAPI ≥ 1.12).
    AfterWorkersUpgradeRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
        /// The workers version after the step.
        #[serde(default)]
        pub kubernetes_version: String,
        /// Remaining control plane steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub control_plane_upgrades: Vec<UpgradeStepInfo>,
        /// Remaining workers steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub workers_upgrades: Vec<UpgradeStepInfo>,
    }
}

response_type! {
    /// Answer to [`AfterWorkersUpgradeRequest`].
    AfterWorkersUpgradeResponse retry {}
}

request_type! {
    /// Sent once the whole Cluster runs the target version.
    AfterClusterUpgradeRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
        /// The version the Cluster now runs.
        #[serde(default)]
        pub kubernetes_version: String,
    }
}

response_type! {
    /// Answer to [`AfterClusterUpgradeRequest`]; blocking since CAPI 1.12 (holds the next upgrade).
    AfterClusterUpgradeResponse retry {}
}

request_type! {
    /// Sent before a Cluster with a topology is deleted.
    BeforeClusterDeleteRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
    }
}

response_type! {
    /// Answer to [`BeforeClusterDeleteRequest`]; `retryAfterSeconds > 0` holds the deletion.
    BeforeClusterDeleteResponse retry {}
}
