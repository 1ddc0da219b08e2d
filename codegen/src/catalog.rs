//! The catalog of Runtime SDK hooks: one row per hook of
//! `hooks.runtime.cluster.x-k8s.io/v1alpha1`, as registered by Cluster API's
//! `api/runtime/hooks/v1alpha1` package.

use crate::naming;
use crate::version::CapiVersion;

/// API group of every hook.
pub const GROUP: &str = "hooks.runtime.cluster.x-k8s.io";
/// API version of every hook.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of hook requests and responses.
pub const API_VERSION: &str = "hooks.runtime.cluster.x-k8s.io/v1alpha1";

/// What part of a cluster's life a hook belongs to (CAPI's hook "tags").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tag {
    /// Discovery, called by the ExtensionConfig controller.
    Discovery,
    /// Lifecycle hooks, called by the topology controller around create, upgrade and delete.
    Lifecycle,
    /// GeneratePatches, ValidateTopology, DiscoverVariables.
    TopologyMutation,
    /// CanUpdateMachine, CanUpdateMachineSet, UpdateMachine.
    InPlaceUpdate,
    /// GenerateUpgradePlan.
    ChainedUpgrade,
}

impl Tag {
    /// The tag as CAPI's documentation spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Tag::Discovery => "Discovery",
            Tag::Lifecycle => "Lifecycle Hooks",
            Tag::TopologyMutation => "Topology Mutation Hook",
            Tag::InPlaceUpdate => "In-Place Update Hooks",
            Tag::ChainedUpgrade => "Chained Upgrade Hook",
        }
    }
}

/// One hook of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookInfo {
    /// CamelCase hook name, exactly as in `requestHook.hook`, e.g. `BeforeClusterCreate`.
    pub name: &'static str,
    /// Lower-cased name used in URL paths, e.g. `beforeclustercreate`.
    pub path_segment: &'static str,
    /// Request kind, e.g. `BeforeClusterCreateRequest`.
    pub request_kind: &'static str,
    /// Response kind, e.g. `BeforeClusterCreateResponse`.
    pub response_kind: &'static str,
    /// Whether the response carries `retryAfterSeconds` (the hook can block).
    pub blocking: bool,
    /// The hook's family.
    pub tag: Tag,
    /// The first Cluster API release that knows this hook.
    pub since: CapiVersion,
    /// Whether the extension serves it itself without a handler name (only Discovery).
    pub singleton: bool,
}

impl HookInfo {
    /// URL path of a handler of this hook (without any prefix), e.g.
    /// `/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/my-handler`.
    ///
    /// ```
    /// let hook = capi_ext_codegen::catalog::find("GeneratePatches").unwrap();
    /// assert_eq!(hook.path("patch"), "/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/patch");
    /// let discovery = capi_ext_codegen::catalog::find("Discovery").unwrap();
    /// assert_eq!(discovery.path(""), "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery");
    /// ```
    pub fn path(&self, handler: &str) -> String {
        if handler.is_empty() {
            format!("/{GROUP}/{VERSION}/{}", self.path_segment)
        } else {
            format!(
                "/{GROUP}/{VERSION}/{}/{}",
                self.path_segment,
                handler.to_lowercase()
            )
        }
    }

    /// Whether a Cluster API release knows this hook (and would accept it in Discovery).
    pub fn known_by(&self, capi: CapiVersion) -> bool {
        capi >= self.since
    }
}

macro_rules! hooks {
    ($( $name:ident, $segment:literal, $blocking:literal, $tag:ident, $minor:literal, $singleton:literal; )*) => {
        /// Every hook, in CAPI's documentation order.
        pub const HOOKS: &[HookInfo] = &[
            $( HookInfo {
                name: stringify!($name),
                path_segment: $segment,
                request_kind: concat!(stringify!($name), "Request"),
                response_kind: concat!(stringify!($name), "Response"),
                blocking: $blocking,
                tag: Tag::$tag,
                since: CapiVersion::new(1, $minor),
                singleton: $singleton,
            }, )*
        ];
    };
}

hooks! {
    Discovery, "discovery", false, Discovery, 2, true;
    BeforeClusterCreate, "beforeclustercreate", true, Lifecycle, 2, false;
    AfterControlPlaneInitialized, "aftercontrolplaneinitialized", false, Lifecycle, 2, false;
    BeforeClusterUpgrade, "beforeclusterupgrade", true, Lifecycle, 2, false;
    BeforeControlPlaneUpgrade, "beforecontrolplaneupgrade", true, Lifecycle, 12, false;
    AfterControlPlaneUpgrade, "aftercontrolplaneupgrade", true, Lifecycle, 2, false;
    BeforeWorkersUpgrade, "beforeworkersupgrade", true, Lifecycle, 12, false;
    AfterWorkersUpgrade, "afterworkersupgrade", true, Lifecycle, 12, false;
    AfterClusterUpgrade, "afterclusterupgrade", true, Lifecycle, 2, false;
    BeforeClusterDelete, "beforeclusterdelete", true, Lifecycle, 2, false;
    GeneratePatches, "generatepatches", false, TopologyMutation, 2, false;
    ValidateTopology, "validatetopology", false, TopologyMutation, 2, false;
    DiscoverVariables, "discovervariables", false, TopologyMutation, 4, false;
    CanUpdateMachine, "canupdatemachine", false, InPlaceUpdate, 12, false;
    CanUpdateMachineSet, "canupdatemachineset", false, InPlaceUpdate, 12, false;
    UpdateMachine, "updatemachine", true, InPlaceUpdate, 12, false;
    GenerateUpgradePlan, "generateupgradeplan", false, ChainedUpgrade, 12, false;
}

/// The hook with this exact CamelCase name.
pub fn find(name: &str) -> Option<&'static HookInfo> {
    HOOKS.iter().find(|h| h.name == name)
}

/// The hook whose lower-cased path segment is `segment` (e.g. `beforeclustercreate`).
pub fn find_by_segment(segment: &str) -> Option<&'static HookInfo> {
    HOOKS.iter().find(|h| h.path_segment == segment)
}

/// The closest hook name to a misspelled one, for "did you mean" hints.
///
/// ```
/// assert_eq!(capi_ext_codegen::catalog::suggest("BeforeClusterCreat"), Some("BeforeClusterCreate"));
/// assert_eq!(capi_ext_codegen::catalog::suggest("beforeclustercreate"), Some("BeforeClusterCreate"));
/// assert_eq!(capi_ext_codegen::catalog::suggest("Completely"), None);
/// ```
pub fn suggest(name: &str) -> Option<&'static str> {
    naming::did_you_mean(name, HOOKS.iter().map(|h| h.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_all_seventeen_hooks_with_consistent_segments() {
        assert_eq!(HOOKS.len(), 17);
        for hook in HOOKS {
            assert_eq!(hook.path_segment, hook.name.to_lowercase());
            assert_eq!(find(hook.name), Some(hook));
            assert_eq!(find_by_segment(hook.path_segment), Some(hook));
        }
    }

    #[test]
    fn blocking_hooks_are_the_retry_hooks() {
        let blocking: Vec<_> = HOOKS
            .iter()
            .filter(|h| h.blocking)
            .map(|h| h.name)
            .collect();
        assert_eq!(
            blocking,
            [
                "BeforeClusterCreate",
                "BeforeClusterUpgrade",
                "BeforeControlPlaneUpgrade",
                "AfterControlPlaneUpgrade",
                "BeforeWorkersUpgrade",
                "AfterWorkersUpgrade",
                "AfterClusterUpgrade",
                "BeforeClusterDelete",
                "UpdateMachine"
            ]
        );
    }

    #[test]
    fn version_gates() {
        let v1_11 = CapiVersion::new(1, 11);
        assert_eq!(HOOKS.iter().filter(|h| h.known_by(v1_11)).count(), 10);
        assert!(HOOKS.iter().all(|h| h.known_by(CapiVersion::DEFAULT)));
        assert!(
            !find("DiscoverVariables")
                .unwrap()
                .known_by(CapiVersion::new(1, 3))
        );
    }
}
