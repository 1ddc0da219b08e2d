//! Discovery: the extension lists its handlers.

use super::common::response_type;
use super::{FailurePolicy, HookRequest, Settings};
use serde::{Deserialize, Serialize};

/// The Discovery request: only `apiVersion` and `kind` (no settings).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryRequest {
    /// `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `DiscoveryRequest`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
}

impl DiscoveryRequest {
    /// The request exactly as CAPI sends it.
    pub fn new() -> Self {
        DiscoveryRequest {
            api_version: super::API_VERSION.to_string(),
            kind: "DiscoveryRequest".to_string(),
        }
    }
}

static NO_SETTINGS: Settings = Settings::new();

impl HookRequest for DiscoveryRequest {
    fn api_version(&self) -> &str {
        &self.api_version
    }
    fn kind(&self) -> &str {
        &self.kind
    }
    fn settings(&self) -> &Settings {
        &NO_SETTINGS
    }
    fn subject(&self) -> Option<String> {
        None
    }
}

response_type! {
    /// The Discovery response: one entry per handler the extension serves.
    DiscoveryResponse {
        /// The handlers (unique DNS-1123 names).
        #[serde(default, deserialize_with = "crate::decode::null_default", skip_serializing_if = "Vec::is_empty")]
        pub handlers: Vec<ExtensionHandler>,
    }
}

/// One handler advertised in Discovery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionHandler {
    /// Handler name (DNS-1123 label); CAPI registers it as `<name>.<extensionconfig>`.
    #[serde(default)]
    pub name: String,
    /// The hook the handler implements.
    #[serde(default)]
    pub request_hook: GroupVersionHook,
    /// Per-call timeout (0..=30; CAPI defaults to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// What CAPI does when the call fails at the transport level (default `Fail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
}

/// A hook with its API version.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupVersionHook {
    /// E.g. `hooks.runtime.cluster.x-k8s.io/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// CamelCase hook name, e.g. `BeforeClusterCreate`.
    #[serde(default)]
    pub hook: String,
}
