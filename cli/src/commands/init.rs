//! `capi-ext init`: a new extension project that builds, tests and deploys as it is.

use crate::ops::source::CrateSource;
use crate::ops::{files, project, scaffold, vcs};
use anyhow::{Context, bail};
use capi_ext::CapiVersion;
use std::path::PathBuf;
use std::process::ExitCode;

/// Start a new extension project: Cargo project, handlers with tests, Dockerfile, Makefile, CI
/// workflow, kustomize manifests (Deployment, Service, PodDisruptionBudget, NetworkPolicy,
/// cert-manager certificate, ExtensionConfig, a component turning OpenTelemetry traces on) and
/// docs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory to create the project in (default: the current directory).
    dir: Option<PathBuf>,
    /// Extension name: binary, ExtensionConfig and resource prefix (a DNS-1123 label; default:
    /// the directory's name).
    #[arg(long)]
    name: Option<String>,
    /// Namespace the extension is deployed to (default: <name>-system).
    #[arg(long)]
    namespace: Option<String>,
    /// Cluster API version the extension targets: only hooks it knows are allowed.
    #[arg(long, default_value = "1.14")]
    capi_version: CapiVersion,
    /// Hooks to start with, comma-separated (DiscoverVariables is added for topology hooks).
    #[arg(long, value_delimiter = ',', default_value = "BeforeClusterCreate")]
    hooks: Vec<String>,
    /// The extension talks to clusters: handlers get kube-rs clients of the management cluster
    /// and of workload clusters (`capi_ext::clusters`, the runtime's `kube` feature), and
    /// `// +capi-ext:rbac:` markers in the sources become the extension's ClusterRole.
    #[arg(long)]
    kube: bool,
    /// Take capi-ext's crates and CLI from a checkout: the path of its runtime/ crate, relative
    /// to the project or absolute (default: the checkout this CLI was built from, if it still
    /// exists).
    #[arg(long, value_name = "PATH", conflicts_with = "capi_ext_version")]
    capi_ext_path: Option<String>,
    /// Take capi-ext's crates and CLI from crates.io, at this version.
    #[arg(long, value_name = "VERSION")]
    capi_ext_version: Option<String>,
    /// Version control: `git` (a repository, unless the directory is inside one already:
    /// `diff` and the scaffolded CI compare revisions) or `none`.
    #[arg(long, value_enum, default_value_t = vcs::Vcs::Git, hide_possible_values = true)]
    vcs: vcs::Vcs,
    /// Write into a non-empty directory, replacing files the scaffold creates.
    #[arg(long)]
    force: bool,
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    let non_empty = std::fs::read_dir(&dir)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if non_empty && !args.force {
        bail!(
            "{} is not empty; pass --force to scaffold into it anyway (files the scaffold creates are replaced)",
            dir.display()
        );
    }
    let name = match args.name {
        Some(name) => name,
        None => project::name_from_dir(&dir)?,
    };
    let source = CrateSource::choose(args.capi_ext_path.clone(), args.capi_ext_version.clone());
    if let Some(warning) = args.capi_version.unproven_warning() {
        eprintln!("warning: {warning}");
    }
    let changes = scaffold::init(&scaffold::InitRequest {
        namespace: args
            .namespace
            .clone()
            .unwrap_or_else(|| format!("{name}-system")),
        name: name.clone(),
        capi_version: args.capi_version,
        hooks: args.hooks,
        source: source.clone(),
        kube: args.kube,
    })?;
    let lines = files::apply(&dir, &changes, args.dry_run, args.force)
        .with_context(|| format!("writing {}", dir.display()))?;
    super::report(&lines);
    eprintln!("{:>12} {}", "Using", source.describe());
    if !args.dry_run {
        match vcs::init(&dir, args.vcs)? {
            vcs::Outcome::Initialized => eprintln!(
                "{}",
                files::status_line("Initialized", "a git repository (--vcs none skips it)")
            ),
            vcs::Outcome::Inside(_) | vcs::Outcome::Skipped => {}
        }
        let cd = match dir.as_os_str().to_str() {
            Some(".") | Some("") => String::new(),
            _ => format!("  cd {}\n", dir.display()),
        };
        let render = if changes
            .iter()
            .any(|c| c.path == std::path::Path::new("render/cluster.yaml"))
        {
            "  make render                     # render/rendered.yaml: what CAPI would create; commit it, `make check` keeps it in step\n"
        } else {
            ""
        };
        eprintln!(
            "\nNext:\n{cd}  cargo test                      # the handlers' tests\n{render}  make run                        # serve on 127.0.0.1:9443 with development certificates\n  capi-ext verify                 # in another shell: check it as CAPI would (it finds `make run`'s extension)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
