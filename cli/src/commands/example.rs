//! `capi-ext example`: a realistic request for a hook, as a starting fixture.

use crate::ops::{examples, project};
use capi_ext::CapiVersion;
use std::process::ExitCode;

/// Print a realistic request for a hook (the fixtures checked against Cluster API's own types).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook, e.g. GeneratePatches.
    hook: String,
    /// Output format.
    #[arg(long, value_parser = ["json", "yaml"], default_value = "json")]
    format: String,
    /// Cluster API version the request must be valid for.
    #[arg(long, default_value = "1.14")]
    capi_version: CapiVersion,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let hook = match capi_ext::catalog::find(&args.hook) {
        Some(h) if h.singleton => h,
        _ => project::hook_for(&args.hook, args.capi_version)?,
    };
    if !hook.known_by(args.capi_version) {
        anyhow::bail!("{} was introduced in Cluster API {}", hook.name, hook.since);
    }
    match args.format.as_str() {
        "yaml" => print!("{}", examples::request_yaml(hook)?),
        _ => print!("{}", examples::request(hook)),
    }
    Ok(ExitCode::SUCCESS)
}
