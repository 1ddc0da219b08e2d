//! KubeadmControlPlaneTemplate and KubeadmConfigTemplate.

#[cfg(feature = "kubeadm-v1beta1")]
pub mod v1beta1;
#[cfg(feature = "kubeadm")]
pub mod v1beta2;
