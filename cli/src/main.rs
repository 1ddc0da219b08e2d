//! `capi-ext`: scaffold, generate and run Cluster API Runtime Extensions written in Rust.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = capi_ext_cli::commands::Cli::parse();
    match capi_ext_cli::commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
