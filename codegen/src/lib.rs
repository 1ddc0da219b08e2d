//! Rules about Cluster API Runtime Extension hooks that every part of capi-ext shares.
//!
//! This crate has no dependencies and no proc-macro machinery, so the runtime, the
//! derive macros and the CLI can all read the same table and cannot drift apart.
//!
//! - [`catalog`]: the 17 hooks of `hooks.runtime.cluster.x-k8s.io/v1alpha1`, with the
//!   CAPI version that introduced each one.
//! - [`naming`]: DNS-1123 label checks, handler timeouts, did-you-mean suggestions.
//! - [`version`]: CAPI `major.minor` versions, parsed and compared.
//!
//! ```
//! use capi_ext_codegen::catalog;
//!
//! let hook = catalog::find("BeforeClusterCreate").unwrap();
//! assert_eq!(hook.path_segment, "beforeclustercreate");
//! assert!(hook.blocking);
//! ```

pub mod catalog;
pub mod naming;
pub mod version;
