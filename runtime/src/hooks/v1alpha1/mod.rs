//! `hooks.runtime.cluster.x-k8s.io/v1alpha1`: the 17 hooks of Cluster API 1.14, field by field.
//!
//! Every type follows CAPI's Go types (`sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1`):
//! the same JSON names, the same optional fields (omitted when empty), the same enums.
//! Decoding is lenient: unknown fields are ignored and absent optional fields take their
//! default. Responses are built through constructors that set `status`, so a response
//! without a status cannot be sent.
//!
//! ```
//! use capi_ext::hooks::v1alpha1::*;
//!
//! let response = BeforeClusterCreateResponse::success()
//!     .retry_after(30)
//!     .with_message("waiting for the network to be ready");
//! let json = serde_json::to_value(&response).unwrap();
//! assert_eq!(json["status"], "Success");
//! assert_eq!(json["retryAfterSeconds"], 30);
//! ```

pub(crate) mod common;
mod discovery;
mod inplace;
mod lazy_value;
mod lifecycle;
mod markers;
mod patch;
pub(crate) use patch::push_escaped_token;
mod topology;
mod upgrade_plan;
pub mod validation;
mod variables;

pub use common::*;
pub use discovery::*;
pub use inplace::*;
pub use lazy_value::{LazyValue, TemplateObject};
pub use lifecycle::*;
pub use markers::*;
pub use patch::*;
pub use topology::*;
pub use upgrade_plan::*;
pub use variables::*;

pub use capi_ext_codegen::catalog::API_VERSION;
