//! The logic behind the commands, testable without the command line.

pub mod certs;
pub mod files;
pub mod generate;
pub mod project;
pub mod scaffold;
