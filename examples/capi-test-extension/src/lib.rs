//! Cluster API's own test extension (module `sigs.k8s.io/cluster-api/test`, `extension/`),
//! written with capi-ext: the extension Cluster API's end-to-end tests deploy. The handlers
//! have the names and answers of the Go extension at the release capi-ext targets.
//!
//! Ported so far:
//! - [`lifecycle`]: the nine lifecycle hooks, whose answers come from a ConfigMap per Cluster
//!   and ExtensionConfig, and which record each answer in it (the protocol of CAPI's runtimesdk
//!   e2e spec), through the management cluster's client ([`Clusters`]).
//!
//! - [`topology`]: `generate-patches` ([`patches`]: typed patches of the Dev and kubeadm
//!   templates, the kind images of [`kind`]), the Go extension's variables
//!   (`discover-variables`: five, schemas as written) and `validate-topology`.
//! - [`upgrade_plan`]: `generate-upgrade-plan`, from the Kubernetes versions the kind mapper
//!   knows.
//!
//! - [`inplace`]: `can-update-machine`, `can-update-machineset` (the changes the extension
//!   makes in place, as patches) and `update-machine` (a pretended update of 15 to 19 s).

pub mod inplace;
pub mod kind;
pub mod lifecycle;
pub mod patches;
pub mod scheme;
pub mod semver;
pub mod topology;
pub mod upgrade_plan;

use capi_ext::clusters::Clusters;
use capi_ext::{ExtensionBuilder, FromRef};

/// What the handlers share: the management cluster's client (the lifecycle hooks' ConfigMaps)
/// and the in-place updates under way.
#[derive(Clone)]
pub struct Shared {
    /// The clusters' clients.
    pub clusters: Clusters,
    /// The in-place updates under way.
    pub updates: inplace::Updates,
}

impl FromRef<Shared> for Clusters {
    fn from_ref(shared: &Shared) -> Self {
        shared.clusters.clone()
    }
}

impl FromRef<Shared> for inplace::Updates {
    fn from_ref(shared: &Shared) -> Self {
        shared.updates.clone()
    }
}

/// The extension, in the Go extension's order of handlers: topology mutation, lifecycle,
/// in-place update, upgrade plan.
pub fn extension(clusters: Clusters) -> ExtensionBuilder<Shared> {
    let builder = capi_ext::Extension::builder().state(Shared {
        clusters,
        updates: inplace::Updates::default(),
    });
    let builder = lifecycle::register(topology::register(builder));
    upgrade_plan::register(inplace::register(builder))
}
