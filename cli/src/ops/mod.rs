//! The logic behind the commands, testable without the command line.

pub mod certs;
