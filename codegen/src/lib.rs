//! Rules about Cluster API Runtime Extension hooks and variables that every part of capi-ext
//! shares, so the runtime, the derive macros and the CLI cannot drift apart.
//!
//! - [`catalog`]: the 17 hooks of `hooks.runtime.cluster.x-k8s.io/v1alpha1`, with the CAPI
//!   version that introduced each one.
//! - [`naming`]: DNS-1123 label checks, handler timeouts, did-you-mean suggestions.
//! - [`version`]: CAPI `major.minor` versions, parsed and compared.
//! - [`schema`]: how Rust types become ClusterClass variable schemas.
//! - [`crd_types`]: Rust types from CRD schemas (`capi-ext generate types`).
//! - `model` (feature `syn`): `#[hook]`, `#[derive(Variables)]` and `#[derive(Schema)]` items
//!   parsed into a model and rendered to tokens (macros) or JSON (CLI).
//!
//! ```
//! use capi_ext_codegen::catalog;
//!
//! let hook = catalog::find("BeforeClusterCreate").unwrap();
//! assert_eq!(hook.path_segment, "beforeclustercreate");
//! assert!(hook.blocking);
//! ```

pub mod catalog;
pub mod crd_types;
pub mod json_schema;
#[cfg(feature = "syn")]
pub mod model;
pub mod naming;
pub mod schema;
pub mod version;
