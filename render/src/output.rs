//! What a render returns: the objects CAPI would create, the variable definitions, and every
//! exchange with the extension.

use crate::change;
use crate::object::string;
use capi_ext::hooks::v1alpha1::ClusterClassVariable;
use serde_json::Value;

/// One request sent to the extension and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// `DiscoverVariables`, `GeneratePatches`, `ValidateTopology` or `GenerateUpgradePlan`.
    pub hook: &'static str,
    /// The ClusterClass patch it was for ("" for GenerateUpgradePlan, which serves the class's
    /// upgrades).
    pub patch: String,
    /// The handler's name (the part of the ClusterClass's extension name before the first `.`).
    pub handler: String,
    /// The request, as sent.
    pub request: Value,
    /// The response, as received.
    pub response: Value,
}

impl Exchange {
    /// What the call served, for messages: `patch <name>`, or the ClusterClass field that names
    /// the GenerateUpgradePlan extension.
    ///
    /// ```
    /// use capi_ext_render::Exchange;
    /// let exchange = |hook, patch: &str| Exchange {
    ///     hook,
    ///     patch: patch.into(),
    ///     handler: "h".into(),
    ///     request: Default::default(),
    ///     response: Default::default(),
    /// };
    /// assert_eq!(exchange("GeneratePatches", "p").served(), "patch p");
    /// assert_eq!(
    ///     exchange("GenerateUpgradePlan", "").served(),
    ///     "ClusterClass spec.upgrade.external.generateUpgradePlanExtension"
    /// );
    /// ```
    pub fn served(&self) -> String {
        crate::error::served(&self.patch)
    }
}

/// A variable definition and where it came from (`inline` or the patch's name), as in the
/// ClusterClass's `status.variables`.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// `inline` or the name of the patch whose DiscoverVariables declared it.
    pub from: String,
    /// The definition.
    pub variable: ClusterClassVariable,
}

/// The result of a render.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    /// The objects CAPI would write, patched: InfrastructureCluster, ControlPlane, the control
    /// plane's machine template and MachineHealthCheck, then per MachineDeployment its
    /// bootstrap and infrastructure templates, the MachineDeployment and its
    /// MachineHealthCheck, per MachinePool its bootstrap config, infrastructure machine pool and
    /// the MachinePool; last, the Cluster's topology-managed fields (labels, annotations,
    /// `spec.infrastructureRef`, `spec.controlPlaneRef`).
    pub objects: Vec<Value>,
    /// The same objects before any patch (for diffs).
    pub unpatched: Vec<Value>,
    /// What each object is (the infrastructure cluster, a MachineDeployment's bootstrap
    /// template…), in the order of `objects`: what CAPI does when one changes depends on it.
    pub roles: Vec<change::Role>,
    /// The Cluster as the webhook would store it (variables defaulted).
    pub cluster: Value,
    /// Every variable definition, inline and discovered, by name (as in the ClusterClass's
    /// `status.variables`).
    pub definitions: Vec<Definition>,
    /// Every request sent and response received, in order.
    pub exchanges: Vec<Exchange>,
    /// What the user should know although CAPI accepts it: metadata the patches set on a
    /// template that the targeted Cluster API release drops (before 1.14).
    pub warnings: Vec<String>,
}

impl Rendered {
    /// The first rendered object of `kind`.
    pub fn object(&self, kind: &str) -> Option<&Value> {
        self.objects.iter().find(|o| string(o, &["kind"]) == kind)
    }
}
