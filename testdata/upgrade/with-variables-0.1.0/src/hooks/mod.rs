//! The extension's handlers, one module each.

pub mod before_cluster_delete;
pub mod cp_ready;
pub mod generate_patches;
pub mod generate_patches_v2;
pub mod validate_topology;
// capi-ext:modules (`capi-ext create hook` adds modules above this line)
