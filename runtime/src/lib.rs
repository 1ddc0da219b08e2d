//! # capi-ext
//!
//! Write [Cluster API](https://cluster-api.sigs.k8s.io) Runtime Extensions in Rust.
//!
//! - [`hooks::v1alpha1`]: request and response types of all 17 hooks of
//!   `hooks.runtime.cluster.x-k8s.io/v1alpha1` (CAPI 1.14), with builders that make a
//!   response without `status` impossible;
//! - [`objects`]: the Cluster, Machine and MachineSet embedded in requests, typed where
//!   authors read them and lossless for everything else;
//! - [`topology`]: typed builtin variables, user variables into serde types, item selection
//!   for GeneratePatches and ValidateTopology;
//! - [`patches`]: one GeneratePatches handler from many named patch functions with typed
//!   selectors; [`gates`]: one blocking lifecycle handler from many concurrent checks;
//! - [`Extension`] and [`Registration`]: handlers checked the way CAPI checks them, Discovery
//!   generated from them, in-process calls for unit tests;
//! - [`Server`] (feature `server`, on by default): HTTPS with rustls, certificate reload,
//!   mTLS, metrics, probes, graceful shutdown, flags named as controller-runtime names them;
//! - [`State`]: shared state handlers take, as axum's; `clusters` (feature `kube`): kube-rs
//!   clients of the management cluster and of workload clusters from their kubeconfig Secrets.
//!
//! ```no_run
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext::{Extension, Registration, Server};
//!
//! async fn before_create(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
//!     if req.cluster.metadata.labels.contains_key("hold") {
//!         return BeforeClusterCreateResponse::success().retry_after(30).with_message("held by label");
//!     }
//!     BeforeClusterCreateResponse::success()
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Server::run(Extension::builder().handler(Registration::new(BeforeClusterCreate, "before-cluster-create", before_create)))
//! }
//! ```

#[cfg(feature = "kube")]
pub mod clusters;
mod decode;
#[cfg(feature = "dev-certs")]
pub mod dev_certs;
pub mod duration;
pub mod fs;
pub mod gates;
pub mod hooks;
mod json_text;
pub mod objects;
pub mod patches;
pub mod schema;
pub mod topology;

#[cfg(feature = "server")]
pub mod error;
#[cfg(feature = "server")]
mod extension;
#[cfg(feature = "server")]
pub mod server;

pub use capi_ext_codegen::catalog;
pub use capi_ext_codegen::version::CapiVersion;
#[cfg(feature = "derive")]
pub use capi_ext_derive::{Schema, Variables, hook};
#[cfg(feature = "server")]
pub use extension::{
    CallError, DEFAULT_TIMEOUT_SECONDS, Extension, ExtensionBuilder, FromRef, HookHandler,
    Registration, RegistrationError, Reply, State,
};
pub use schema::{Schema, Variables};
#[cfg(feature = "server")]
pub use server::{BoundServer, Server, ServerOptions};

#[cfg(feature = "server")]
#[doc(hidden)]
pub use tokio;

/// What the macros' expansions refer to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::decode::{DecodeInPlace, InPlace, Key, OptionInPlace};
    pub use capi_ext_codegen::schema;
    pub use serde;
    pub use serde_json;
}

/// The guide's and the README's code blocks, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide.md")]
#[doc = include_str!("../../README.md")]
pub struct GuideDoctests;
