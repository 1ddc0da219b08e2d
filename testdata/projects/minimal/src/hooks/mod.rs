//! The extension's handlers, one module each.

pub mod before_cluster_create;
// capi-ext:modules (`capi-ext create hook` adds modules above this line)
