//! One module per subcommand: its clap `Args` and a thin `run` over `ops`.

pub mod certs;
pub mod completions;
pub mod create;
pub mod generate;
pub mod init;

use std::process::ExitCode;

/// Scaffold, generate and run Cluster API Runtime Extensions written in Rust.
#[derive(Debug, clap::Parser)]
#[command(name = "capi-ext", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Start a new extension project.
    Init(init::Args),
    /// Add something to the project.
    #[command(subcommand)]
    Create(create::Command),
    /// Write the files capi-ext owns from the project's sources.
    #[command(subcommand)]
    Generate(generate::Command),
    /// Write a development CA and serving certificate for local runs.
    Certs(certs::Args),
    /// Print shell completions.
    Completions(completions::Args),
}

/// Runs the chosen subcommand; the exit code says whether it succeeded.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Init(args) => init::run(args),
        Command::Create(cmd) => create::run(cmd),
        Command::Generate(cmd) => generate::run(cmd),
        Command::Certs(args) => certs::run(args).map(|()| ExitCode::SUCCESS),
        Command::Completions(args) => completions::run(args).map(|()| ExitCode::SUCCESS),
    }
}

/// Prints status lines on stderr.
pub(crate) fn report(lines: &[String]) {
    for line in lines {
        eprintln!("{line}");
    }
}
