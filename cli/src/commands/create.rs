//! `capi-ext create hook` (a typed handler stub with its test, registered at the marker) and
//! `capi-ext create patch` (a patch function with its test, listed in a GeneratePatches handler).

use crate::ops::{files, patches, project, scaffold};
use std::path::PathBuf;
use std::process::ExitCode;

/// What to create.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Add a handler: src/hooks/<name>.rs with a compiling stub and a test, registered in src/main.rs.
    Hook(HookArgs),
    /// Add a patch: src/patches/<name>.rs with a patch function and its test, listed at the end
    /// of a GeneratePatches handler's patches().
    Patch(PatchArgs),
}

/// Flags of `create patch`.
#[derive(Debug, clap::Args)]
pub struct PatchArgs {
    /// Patch name, a DNS-1123 label (it names the patch in errors and the module).
    name: String,
    /// The GeneratePatches handler that applies it (needed when the project has several).
    #[arg(long)]
    handler: Option<String>,
    /// The templates the patch selects (change the Selector in the code for anything finer).
    #[arg(long, value_enum, default_value = "control-plane")]
    target: patches::Target,
    /// The project (default: the current directory or its nearest parent with capi-ext.toml).
    #[arg(long, default_value = ".", hide_default_value = true)]
    project: PathBuf,
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Flags of `create hook`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The hook, e.g. BeforeClusterUpgrade.
    hook: String,
    /// Handler name, a DNS-1123 label (default: the hook in kebab-case).
    #[arg(long)]
    name: Option<String>,
    /// Seconds CAPI waits for the handler (0..=30; default 10).
    #[arg(long)]
    timeout: Option<i64>,
    /// What CAPI does when the call fails at the transport level.
    #[arg(long, value_parser = ["Fail", "Ignore"])]
    failure_policy: Option<String>,
    /// Make a new version of this GeneratePatches handler (NAME-vN, a copy of it) that new
    /// ClusterClasses call, leaving it unchanged for the ClusterClasses that call it today; its
    /// render case is kept in render/NAME/ for `capi-ext diff`.
    #[arg(long, value_name = "NAME")]
    next_version_of: Option<String>,
    /// The project (default: the current directory or its nearest parent with capi-ext.toml).
    #[arg(long, default_value = ".", hide_default_value = true)]
    project: PathBuf,
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Runs the command.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    let args = match cmd {
        Command::Hook(args) => args,
        Command::Patch(args) => return run_patch(args),
    };
    let root = project::find_root(&args.project)?;
    let changes = scaffold::create_hook(
        &root,
        &scaffold::HookRequest {
            hook: args.hook,
            name: args.name,
            timeout: args.timeout,
            failure_policy: args.failure_policy,
            next_version_of: args.next_version_of,
        },
    )?;
    super::report(&files::apply(&root, &changes, args.dry_run, false)?);
    Ok(ExitCode::SUCCESS)
}

fn run_patch(args: PatchArgs) -> anyhow::Result<ExitCode> {
    let root = project::find_root(&args.project)?;
    let changes = patches::create(
        &root,
        &patches::PatchRequest {
            name: args.name,
            handler: args.handler,
            target: args.target,
        },
    )?;
    super::report(&files::apply(&root, &changes, args.dry_run, false)?);
    Ok(ExitCode::SUCCESS)
}
