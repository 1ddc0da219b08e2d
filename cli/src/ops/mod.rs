//! The logic behind the commands, testable without the command line.

pub mod call;
pub mod certs;
pub mod dev;
pub mod diff;
pub mod examples;
pub mod files;
pub mod generate;
pub mod kube;
pub mod local;
pub mod markers;
pub mod patches;
pub mod project;
pub mod release;
pub mod render;
pub mod scaffold;
pub mod source;
pub mod types;
pub mod upgrade;
pub mod vcs;
pub mod versions;
pub mod worktree;
