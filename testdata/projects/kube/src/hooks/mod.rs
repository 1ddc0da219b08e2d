//! The extension's handlers, one module each.

pub mod after_control_plane_initialized;
// capi-ext:modules (`capi-ext create hook` adds modules above this line)
