//! Render a ClusterClass topology the way CAPI's topology controller does, without a cluster:
//! discover the extension's variables, check the Cluster's values against them (defaults, OpenAPI
//! rules, CEL), build the GeneratePatches request from the ClusterClass's templates (holder
//! references, builtin variables, only the variables each patch declared), apply the returned
//! patches patch by patch, ask ValidateTopology, and return the objects CAPI would create.
//!
//! The extension is anything that implements [`Caller`]: an in-process [`Extension`](capi_ext::Extension)
//! in unit tests, or the `capi-ext render` command's HTTPS client.
//!
//! ```
//! # #[cfg(feature = "server")] {
//! use capi_ext::Extension;
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext_render::{Input, render};
//! use serde_json::json;
//!
//! let extension = Extension::builder()
//!     .handler(capi_ext::Registration::new(GeneratePatches, "patches", |req: GeneratePatchesRequest| async move {
//!         let mut response = GeneratePatchesResponse::success();
//!         for item in req.items_of_kind("GenericControlPlaneTemplate") {
//!             response = response.patch(&item.uid, Patch::json().add("/spec/template/spec/replicated", true));
//!         }
//!         response
//!     }))
//!     .build()
//!     .unwrap();
//! let input = Input::from_documents(vec![
//!     json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
//!            "metadata": {"name": "c1", "namespace": "default"},
//!            "spec": {"topology": {"classRef": {"name": "quick"}, "version": "v1.34.0"}}}),
//!     json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
//!            "metadata": {"name": "quick", "namespace": "default"},
//!            "spec": {
//!              "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureClusterTemplate", "name": "infra"}},
//!              "controlPlane": {"templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlaneTemplate", "name": "cp"}},
//!              "patches": [{"name": "p", "external": {"generatePatchesExtension": "patches.my-extension"}}]}}),
//!     json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureClusterTemplate",
//!            "metadata": {"name": "infra", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
//!     json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlaneTemplate",
//!            "metadata": {"name": "cp", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
//! ]).unwrap();
//! # tokio_test_block_on(async {
//! let rendered = render(&input, &extension).await.unwrap();
//! let control_plane = rendered.object("GenericControlPlane").unwrap();
//! assert_eq!(control_plane["spec"]["replicated"], true);
//! assert_eq!(control_plane["spec"]["version"], "v1.34.0");
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! # }
//! ```

pub mod apiserver;
mod apply;
mod blocking;
mod caller;
mod capi_webhooks;
pub mod change;
mod cluster_variables;
mod desired;
pub mod determinism;
mod error;
mod go_regex;
pub mod go_template;
mod inline;
mod input;
mod object;
mod output;
mod pipeline;
mod request;
mod stored;
pub mod structural;
pub mod testing;
pub mod values;
pub mod yaml11;

pub use blocking::UpgradeHook;
pub use caller::{CallError, Caller, NoExtension};
pub use error::{Nondeterminism, RenderError, Step};
pub use input::{Input, documents};
pub use output::{Definition, Exchange, Rendered};
pub use pipeline::{definitions, render};
