//! `capi-ext completions`: shell completion scripts on stdout.

use clap::CommandFactory;

/// Print a completion script, e.g. `capi-ext completions bash > /etc/bash_completion.d/capi-ext`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell.
    shell: clap_complete::Shell,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<()> {
    clap_complete::generate(
        args.shell,
        &mut super::Cli::command(),
        "capi-ext",
        &mut std::io::stdout(),
    );
    Ok(())
}
