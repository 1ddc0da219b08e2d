//! One module per subcommand: its clap `Args` and a thin `run` over `ops`.

pub mod certs;

/// Tools for Cluster API Runtime Extensions written in Rust.
#[derive(Debug, clap::Parser)]
#[command(name = "capi-ext", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Write a development CA and serving certificate for local runs.
    Certs(certs::Args),
}

/// Runs the chosen subcommand.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Certs(args) => certs::run(args),
    }
}
