//! `capi-ext`: tools for Cluster API Runtime Extensions written in Rust.

use clap::Parser;

mod commands;
mod ops;

fn main() -> std::process::ExitCode {
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
