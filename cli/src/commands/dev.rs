//! `capi-ext dev`: the project's extension called by a real Cluster API on this machine, without
//! docker or kind.

use crate::ops::dev::{self, DevRequest};
use crate::ops::files::status_line;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run the project's extension under a real Cluster API on 127.0.0.1: etcd, kube-apiserver and
/// Cluster API's manager of the project's release (built once from the Go module proxy, cached by
/// version), the extension built with cargo, served with development certificates, registered
/// with an ExtensionConfig; render/'s ClusterClass and templates applied (and KubeadmControlPlane's
/// manager run when they use it). Prints each call;
/// rebuilds and restarts the extension when its sources change; Ctrl-C stops everything.
/// Needs Go.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// The project (a folder in it).
    #[arg(long, default_value = ".", global = true)]
    project: PathBuf,
    /// The run's folder: logs, certificates, etcd's data, the kubeconfig (default:
    /// capi-ext-dev in cargo's target folder). Each run starts a new cluster there.
    #[arg(long, global = true)]
    state_dir: Option<PathBuf>,
    /// The Cluster API release (v1.14.2) or minor (1.14) to run (default: the project's
    /// target).
    #[arg(long)]
    capi_version: Option<String>,
    /// The extension's port on 127.0.0.1.
    #[arg(long, default_value_t = 9443)]
    port: u16,
    /// A folder holding etcd, kube-apiserver and capi-manager (and kcp-manager when
    /// KubeadmControlPlane's manager runs) to run instead of building them.
    #[arg(long, value_name = "DIR")]
    binaries: Option<PathBuf>,
    /// Also create the Cluster of render/cluster.yaml once CAPI runs.
    #[arg(long)]
    cluster: bool,
    /// Do not rebuild the extension when its sources change.
    #[arg(long)]
    no_watch: bool,
    /// Also run KubeadmControlPlane's manager (it runs anyway when render/ holds a
    /// KubeadmControlPlaneTemplate or a KubeadmControlPlane).
    #[arg(long)]
    kcp: bool,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Stop the run of this project (or of --state-dir) and everything it started.
    Down,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(Action::Down) = args.action {
        let (root, _) = crate::ops::local::project(&args.project)?;
        let state = dev::state_path(&root, args.state_dir.as_deref())?;
        let stopped = dev::down(&state)?;
        eprintln!(
            "{}",
            if stopped {
                status_line("Stopped", &format!("the run in {}", state.display()))
            } else {
                status_line("Nothing", &format!("runs in {}", state.display()))
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    let status = dev::up(&DevRequest {
        project: args.project,
        capi_version: args.capi_version,
        port: args.port,
        state_dir: args.state_dir,
        binaries: args.binaries,
        cluster: args.cluster,
        watch: !args.no_watch,
        kcp: args.kcp,
    })?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
