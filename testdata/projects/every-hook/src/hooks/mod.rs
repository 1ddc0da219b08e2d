//! The extension's handlers, one module each.

pub mod after_cluster_upgrade;
pub mod after_control_plane_initialized;
pub mod after_control_plane_upgrade;
pub mod after_workers_upgrade;
pub mod before_cluster_create;
pub mod before_cluster_delete;
pub mod before_cluster_upgrade;
pub mod before_control_plane_upgrade;
pub mod before_workers_upgrade;
pub mod can_update_machine;
pub mod can_update_machine_set;
pub mod generate_patches;
pub mod generate_upgrade_plan;
pub mod update_machine;
pub mod validate_topology;
// capi-ext:modules (`capi-ext create hook` adds modules above this line)
