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
//! Not yet: the in-place update handlers (`can-update-machine`, `can-update-machineset`,
//! `update-machine`).

pub mod kind;
pub mod lifecycle;
pub mod patches;
pub mod semver;
pub mod topology;
pub mod upgrade_plan;

use capi_ext::ExtensionBuilder;
use capi_ext::clusters::Clusters;

/// The extension, its handlers taking `clusters` as their state.
pub fn extension(clusters: Clusters) -> ExtensionBuilder<Clusters> {
    let builder = capi_ext::Extension::builder().state(clusters);
    upgrade_plan::register(lifecycle::register(topology::register(builder)))
}
