//! GenerateUpgradePlan: the extension chooses the intermediate versions of an upgrade (CAPI ≥ 1.12).

use super::common::{request_type, response_type};
use crate::objects::Cluster;
use serde::{Deserialize, Serialize};

request_type! {
    /// Asks for the control plane and workers upgrade steps.
    GenerateUpgradePlanRequest [subject = |r| Some(r.cluster.key())] {
        /// The Cluster.
        #[serde(default)]
        pub cluster: Cluster,
        /// Current control plane version.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        pub from_control_plane_kubernetes_version: String,
        /// Lowest worker version (absent without workers).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        pub from_workers_kubernetes_version: String,
        /// Target version.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        pub to_kubernetes_version: String,
    }
}

/// One step of an upgrade plan.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UpgradeStep {
    /// Kubernetes version of the step.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

response_type! {
    /// The plan. CAPI checks it: increasing versions, at most one minor per control plane step, ending at the target.
    GenerateUpgradePlanResponse {
        /// Control plane steps.
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub control_plane_upgrades: Vec<UpgradeStep>,
        /// Workers steps (empty: CAPI computes the minimum).
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub workers_upgrades: Vec<UpgradeStep>,
    }
}
