//! Request and response types of Cluster API's Runtime SDK hooks.
//!
//! Only one hook API version exists today: [`v1alpha1`] (`hooks.runtime.cluster.x-k8s.io/v1alpha1`).

pub mod v1alpha1;
