//! Rust types of the templates Cluster API patches, generated from their CRDs by
//! `capi-ext generate types` (`scripts/update-types.sh`; the release is in `src/CAPI_VERSION`),
//! for typed patches ([`capi_ext::patches::NamedPatch::typed`]). Each kind group is a feature,
//! so an extension pays to build only the types it uses:
//!
//! - `kubeadm`: [`kubeadm::v1beta2`]: KubeadmControlPlaneTemplate, KubeadmConfigTemplate;
//! - `kubeadm-v1beta1`: [`kubeadm::v1beta1`], the same for projects targeting Cluster API 1.12;
//! - `docker`: [`docker::v1beta2`]: the Docker and Dev templates of Cluster API's test module.
//!
//! Every struct keeps the fields it does not know in `unknown` and writes them back, and every
//! enum keeps a value it does not list in `Other`: decoding and encoding a template loses
//! nothing, even from a newer Cluster API.
//!
//! ```
//! # #[cfg(feature = "kubeadm")] {
//! use capi_ext::patches::{NamedPatch, PatchContext, PatchError, PatchSet, Selector};
//! use capi_ext_types::kubeadm::v1beta2::KubeadmControlPlaneTemplate;
//!
//! fn image_repository(
//!     kcp: &mut KubeadmControlPlaneTemplate,
//!     _: &PatchContext<serde_json::Value>,
//! ) -> Result<(), PatchError> {
//!     let spec = kcp.spec.get_or_insert_default().template.spec.get_or_insert_default();
//!     let cluster = spec
//!         .kubeadm_config_spec
//!         .get_or_insert_default()
//!         .cluster_configuration
//!         .get_or_insert_default();
//!     cluster.image_repository = Some("registry.example.com".into());
//!     Ok(())
//! }
//!
//! let patches: PatchSet<serde_json::Value> = PatchSet::new().patch(NamedPatch::typed(
//!     "image-repository",
//!     Selector::control_plane(),
//!     image_repository,
//! ));
//! # let _ = patches;
//! # }
//! ```

#[cfg(any(feature = "kubeadm", feature = "kubeadm-v1beta1"))]
pub mod kubeadm;

#[cfg(feature = "docker")]
pub mod docker;
