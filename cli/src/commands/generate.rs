//! `capi-ext generate`: the files capi-ext owns, from the sources, statically.

use crate::ops::generate::{self, Scope};
use crate::ops::{files, project};
use std::path::PathBuf;
use std::process::ExitCode;

/// What to generate.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// The ExtensionConfig, the ClusterClass patch stanza, docs/variables.md and docs/openapi.json.
    Manifests(Args),
    /// Only docs/variables.md and docs/openapi.json.
    Docs(Args),
}

/// Flags of `generate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write nothing; exit 1 with a unified diff when a generated file is stale (for CI).
    #[arg(long)]
    check: bool,
    /// Print a unified diff of what changes.
    #[arg(long)]
    diff: bool,
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The project (default: the current directory or its nearest parent with capi-ext.toml).
    #[arg(long, default_value = ".")]
    project: PathBuf,
}

/// Runs the command.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    let (args, scope) = match cmd {
        Command::Manifests(a) => (a, Scope::All),
        Command::Docs(a) => (a, Scope::Docs),
    };
    let root = project::find_root(&args.project)?;
    let meta = project::Metadata::read(&root)?;
    let changes = generate::files(&root, &meta, scope)?;
    if args.check || args.diff {
        let stale = generate::stale(&root, &changes);
        for (_, diff) in &stale {
            print!("{diff}");
        }
        if args.check {
            if stale.is_empty() {
                eprintln!(
                    "{}",
                    files::status_line(
                        "Checked",
                        &format!("{} generated files are up to date", changes.len())
                    )
                );
                return Ok(ExitCode::SUCCESS);
            }
            eprintln!(
                "error: {} generated file(s) are stale: {}; run `capi-ext generate manifests`",
                stale.len(),
                stale
                    .iter()
                    .map(|(p, _)| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    super::report(&files::apply(&root, &changes, args.dry_run, false)?);
    Ok(ExitCode::SUCCESS)
}
