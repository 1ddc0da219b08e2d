//! The library behind the `capi-ext` command: `commands/` holds one module per subcommand
//! (its flags and a thin `run`), `ops/` the logic, testable without a command line.

pub mod commands;
pub mod ops;
