//! One marker type per hook, tying the hook's catalog entry to its request and response types.

use super::*;
use capi_ext_codegen::catalog::{self, HookInfo};

/// A Runtime SDK hook: its catalog entry and its request and response types.
///
/// Implemented by the marker types ([`BeforeClusterCreate`], [`GeneratePatches`], ...), which
/// are passed to [`Registration::new`](crate::Registration::new) to say which hook a handler implements.
pub trait Hook: Copy + Send + Sync + 'static {
    /// The request type.
    type Request: HookRequest;
    /// The response type.
    type Response: HookResponse;
    /// The hook's row in the catalog.
    fn info() -> &'static HookInfo;
}

macro_rules! markers {
    ($( $(#[$meta:meta])* $name:ident ($req:ident, $resp:ident); )*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
            pub struct $name;

            impl Hook for $name {
                type Request = $req;
                type Response = $resp;
                fn info() -> &'static HookInfo {
                    catalog::find(stringify!($name)).expect("every marker is in the catalog")
                }
            }
        )*

        #[cfg(test)]
        pub(crate) const MARKER_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

markers! {
    /// Discovery (served by the runtime itself from the registrations).
    Discovery(DiscoveryRequest, DiscoveryResponse);
    /// BeforeClusterCreate (blocking).
    BeforeClusterCreate(BeforeClusterCreateRequest, BeforeClusterCreateResponse);
    /// AfterControlPlaneInitialized.
    AfterControlPlaneInitialized(AfterControlPlaneInitializedRequest, AfterControlPlaneInitializedResponse);
    /// BeforeClusterUpgrade (blocking).
    BeforeClusterUpgrade(BeforeClusterUpgradeRequest, BeforeClusterUpgradeResponse);
    /// BeforeControlPlaneUpgrade (blocking, CAPI ≥ 1.12).
    BeforeControlPlaneUpgrade(BeforeControlPlaneUpgradeRequest, BeforeControlPlaneUpgradeResponse);
    /// AfterControlPlaneUpgrade (blocking).
    AfterControlPlaneUpgrade(AfterControlPlaneUpgradeRequest, AfterControlPlaneUpgradeResponse);
    /// BeforeWorkersUpgrade (blocking, CAPI ≥ 1.12).
    BeforeWorkersUpgrade(BeforeWorkersUpgradeRequest, BeforeWorkersUpgradeResponse);
    /// AfterWorkersUpgrade (blocking, CAPI ≥ 1.12).
    AfterWorkersUpgrade(AfterWorkersUpgradeRequest, AfterWorkersUpgradeResponse);
    /// AfterClusterUpgrade (blocking since CAPI 1.12).
    AfterClusterUpgrade(AfterClusterUpgradeRequest, AfterClusterUpgradeResponse);
    /// BeforeClusterDelete (blocking).
    BeforeClusterDelete(BeforeClusterDeleteRequest, BeforeClusterDeleteResponse);
    /// GeneratePatches.
    GeneratePatches(GeneratePatchesRequest, GeneratePatchesResponse);
    /// ValidateTopology.
    ValidateTopology(ValidateTopologyRequest, ValidateTopologyResponse);
    /// DiscoverVariables (CAPI ≥ 1.4).
    DiscoverVariables(DiscoverVariablesRequest, DiscoverVariablesResponse);
    /// CanUpdateMachine (CAPI ≥ 1.12).
    CanUpdateMachine(CanUpdateMachineRequest, CanUpdateMachineResponse);
    /// CanUpdateMachineSet (CAPI ≥ 1.12).
    CanUpdateMachineSet(CanUpdateMachineSetRequest, CanUpdateMachineSetResponse);
    /// UpdateMachine (blocking, CAPI ≥ 1.12).
    UpdateMachine(UpdateMachineRequest, UpdateMachineResponse);
    /// GenerateUpgradePlan (CAPI ≥ 1.12).
    GenerateUpgradePlan(GenerateUpgradePlanRequest, GenerateUpgradePlanResponse);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_marker_per_catalog_hook_with_matching_kinds() {
        let catalog_names: Vec<_> = catalog::HOOKS.iter().map(|h| h.name).collect();
        assert_eq!(MARKER_NAMES, catalog_names.as_slice());
        assert_eq!(
            BeforeClusterCreate::info().request_kind,
            "BeforeClusterCreateRequest"
        );
        assert_eq!(
            BeforeClusterCreateRequest::new().kind,
            "BeforeClusterCreateRequest"
        );
        assert_eq!(
            BeforeClusterCreateResponse::success().kind,
            "BeforeClusterCreateResponse"
        );
    }
}
