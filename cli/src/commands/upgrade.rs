//! `capi-ext upgrade`: the project's scaffolded files merged with this capi-ext's templates.

use crate::ops::{files, project, upgrade};
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `upgrade`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print what would happen to each file, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The project (default: the current directory or its nearest parent with capi-ext.toml).
    #[arg(long, default_value = ".", hide_default_value = true)]
    project: PathBuf,
}

/// Runs the command: exit 1 when a merge left conflict markers.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = project::find_root(&args.project)?;
    let plan = upgrade::plan(&root)?;
    eprintln!(
        "{}",
        files::status_line(
            if args.dry_run {
                "Would upgrade"
            } else {
                "Upgrading"
            },
            &format!("from capi-ext {} to {}", plan.from, plan.to)
        )
    );
    for (path, outcome) in &plan.outcomes {
        if *outcome != upgrade::Outcome::Unchanged {
            eprintln!("{:>12} {path}: {outcome}", "");
        }
    }
    super::report(&files::apply(&root, &plan.changes, args.dry_run, true)?);
    let conflicts = plan.conflicts();
    if conflicts > 0 {
        eprintln!(
            "error: {conflicts} conflict(s): edit the files marked CONFLICT above (between <<<<<<< yours and >>>>>>> capi-ext {}), then build and test",
            plan.to
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
