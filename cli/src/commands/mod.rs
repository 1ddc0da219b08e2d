//! One module per subcommand: its clap `Args` and a thin `run` over `ops`.

pub mod call;
pub mod certs;
pub mod completions;
pub mod create;
pub mod dev;
pub mod diff;
pub mod example;
pub mod generate;
pub mod init;
pub mod render;
pub mod upgrade;
pub mod verify;

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
    /// Bring the project's scaffolded files to this capi-ext's templates (a three-way merge that
    /// keeps your edits) and regenerate the generated files.
    Upgrade(upgrade::Args),
    /// Add something to the project.
    #[command(subcommand)]
    Create(create::Command),
    /// Write the files capi-ext owns from the project's sources.
    #[command(subcommand)]
    Generate(generate::Command),
    /// Print a realistic request for a hook.
    Example(example::Args),
    /// Call a running extension as CAPI does and judge the answer.
    Call(call::Args),
    /// Render a Cluster's topology through a running extension, as CAPI would.
    Render(render::Args),
    /// Check a running extension the way CAPI does.
    Verify(verify::Args),
    /// Say what a new version of the extension does to every Cluster: the fields that change and
    /// whether Machines roll out.
    Diff(diff::Args),
    /// Run the extension under a real Cluster API on this machine (no containers).
    Dev(dev::Args),
    /// Write a development CA and serving certificate for local runs.
    Certs(certs::Args),
    /// Print shell completions.
    Completions(completions::Args),
}

/// Runs the chosen subcommand; the exit code says whether it succeeded.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Init(args) => init::run(args),
        Command::Upgrade(args) => upgrade::run(args),
        Command::Create(cmd) => create::run(cmd),
        Command::Generate(cmd) => generate::run(cmd),
        Command::Example(args) => example::run(args),
        Command::Call(args) => call::run(args),
        Command::Render(args) => render::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Dev(args) => dev::run(args),
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
