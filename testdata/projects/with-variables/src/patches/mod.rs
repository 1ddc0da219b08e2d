//! The patches of the GeneratePatches handlers, one module each with its tests; a handler's
//! `patches()` lists the ones it applies, in order.

pub mod control_plane_labels;
pub mod image_repository;
pub mod worker_labels;
// capi-ext:modules (`capi-ext create patch` adds modules above this line)
