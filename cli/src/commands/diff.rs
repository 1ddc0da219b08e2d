//! `capi-ext diff`: what a new version of the extension does to every Cluster, before it ships.

use crate::ops::diff::{self, Report, Version};
use crate::ops::files::status_line;
use crate::ops::local;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Judge a new version of the extension by what it does to the Clusters that exist (the base's
/// cases, as the base deployed them): render each with both versions and say what CAPI would do
/// with the difference: nothing, metadata patched in place, a template rotated and a
/// MachineDeployment or the control plane rolled out, a control plane field propagated in place,
/// an infrastructure cluster updated; a handler the head no longer serves, or a variable change
/// that makes a Cluster invalid, breaks it. Cases the head edits or adds are reported apart,
/// rendered with the head alone. Exit 0: no Machine would be replaced (or --allow-rollout); 1:
/// Machines would (or may) be replaced, a Cluster that rendered no longer does, or a case the
/// head edits does not render with it; 2: bad input, a failed build or an unreachable extension.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The version deployed today: a git revision of the project (built in a temporary
    /// worktree) or the https:// URL of a running extension (with --base-ca).
    #[arg(long, value_name = "REV|URL", default_value = "HEAD")]
    base: String,
    /// The CA of a running base extension.
    #[arg(long, value_name = "FILE")]
    base_ca: Option<PathBuf>,
    /// The new version: a git revision or an https:// URL (with --head-ca); the project as it
    /// is on disk when not given.
    #[arg(long, value_name = "REV|URL")]
    head: Option<String>,
    /// The CA of a running head extension.
    #[arg(long, value_name = "FILE")]
    head_ca: Option<PathBuf>,
    /// Client certificate for running extensions that require one (mTLS, as CAPI's manager
    /// presents its own).
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,
    /// Client key, with --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,
    /// The project (or a folder in it).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// The Clusters to render: every Cluster in the YAML files of DIR and its subfolders, each
    /// with the ClusterClass, templates and ExtensionConfig of its folder (`rendered.yaml`, the
    /// render output, is skipped). Default: the project's render/.
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
    /// The Clusters that exist today, when they are not the base revision's copy of --cases
    /// (with --base URL they are --cases itself): e.g. a folder `render --kubeconfig
    /// --write-inputs` wrote from the management cluster. --cases then holds the head's own
    /// inputs, reported apart.
    #[arg(long, value_name = "DIR")]
    base_cases: Option<PathBuf>,
    /// Judge the head by the Clusters of this management cluster instead (read only): every
    /// Cluster with a topology, each with its ClusterClass, templates, current objects and
    /// its ExtensionConfig's settings, as `render --kubeconfig` reads them.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cases", "base_cases"])]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, requires = "kubeconfig")]
    context: Option<String>,
    /// With --kubeconfig: the Clusters of this namespace only (default: all namespaces).
    #[arg(long, requires = "kubeconfig")]
    namespace: Option<String>,
    /// With --kubeconfig: the Clusters whose labels match this label selector only, as kubectl's
    /// `-l` (`team=a`, `tier in (prod)`, `!canary`).
    #[arg(long, short = 'l', requires = "kubeconfig")]
    selector: Option<String>,
    /// Print JSON instead of the report.
    #[arg(long)]
    json: bool,
    /// Exit 0 even when Machines would be replaced (the rollout is intended).
    #[arg(long)]
    allow_rollout: bool,
    /// The Cluster API release whose topology engine to play (before 1.14 CAPI drops the
    /// metadata patches set on templates). Default: the project's target, else the newest.
    #[arg(long, value_name = "VERSION")]
    capi_version: Option<capi_ext::CapiVersion>,
    /// CRDs of the templates' kinds (files or directories, repeatable; the project's crds/
    /// folder is read too): both versions render with the API server's rules (a pruned field
    /// or an object the API server refuses is a failed render), and objects are compared as
    /// the API server stores them, CRD defaults filled in. Cluster API's own CRDs are built in.
    #[arg(long, value_name = "FILE|DIR")]
    crds: Vec<PathBuf>,
    /// Apply the API server's rules with Cluster API's built-in CRDs only, as --crds does.
    #[arg(long)]
    capi_crds: bool,
    /// Another ExtensionConfig the ClusterClasses call, served at URL (repeatable): hooks named
    /// `<handler>.NAME` go there for both versions (an extension the project does not build,
    /// such as an upgrade plan served by another team), with --cert and --key, and its CA
    /// from --extension-ca.
    #[arg(long, value_name = "NAME=URL")]
    extension_url: Vec<String>,
    /// The CA bundle of an ExtensionConfig given with --extension-url (repeatable; required for
    /// each: the versions' own CAs did not sign it).
    #[arg(long, value_name = "NAME=FILE")]
    extension_ca: Vec<String>,
    /// Seconds to wait for each call.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match compare(&args) {
        Ok(report) => {
            if args.json {
                println!("{}", serde_json::to_string_pretty(&report.json())?);
            } else {
                print!("{}", report.human());
            }
            let code = report.exit_code(args.allow_rollout);
            if code == 1 {
                eprintln!(
                    "error: the head version would replace Machines or break Clusters (report above); if a rollout is intended, say so with --allow-rollout"
                );
            }
            Ok(ExitCode::from(code))
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(ExitCode::from(2))
        }
    }
}

fn compare(args: &Args) -> anyhow::Result<Report> {
    let identity = args.cert.clone().zip(args.key.clone());
    let timeout = Duration::from_secs(args.timeout);
    let mut other_extensions = std::collections::BTreeMap::new();
    for (name, other) in
        crate::ops::render::other_extensions(&args.extension_url, &args.extension_ca)?
    {
        let Some(ca) = other.ca else {
            anyhow::bail!(
                "--extension-url {name}={}: give its CA with --extension-ca {name}=FILE (the versions diff builds have CAs of their own)",
                other.url
            );
        };
        let target = crate::ops::call::Target {
            url: other.url,
            ca,
            identity: identity.clone(),
            timeout,
        };
        other_extensions.insert(name, target);
    }
    let base = Version::parse(
        "base",
        Some(&args.base),
        args.base_ca.clone(),
        Version::Tree,
    )?
    .with_identity(identity.clone());
    let head = Version::parse(
        "head",
        args.head.as_deref(),
        args.head_ca.clone(),
        Version::Tree,
    )?
    .with_identity(identity);
    let needs_project = !matches!((&base, &head), (Version::Url { .. }, Version::Url { .. }));
    let project = if needs_project || (args.cases.is_none() && args.kubeconfig.is_none()) {
        local::project(&args.project)?.0
    } else {
        args.project.clone()
    };
    let cases = args.cases.clone().unwrap_or_else(|| project.join("render"));
    let status = |verb: &str, what: &str| eprintln!("{}", status_line(verb, what));
    let kube = args
        .kubeconfig
        .as_deref()
        .map(|k| crate::ops::kube::Kube::from_kubeconfig(k, args.context.as_deref(), timeout))
        .transpose()?;
    diff::compare(
        &diff::Request {
            base: &base,
            head: &head,
            project: &project,
            cases: &cases,
            base_cases: args.base_cases.as_deref(),
            live: kube.as_ref().map(|kube| diff::Live {
                kube,
                namespace: args.namespace.as_deref(),
                selector: args.selector.as_deref(),
            }),
            capi_version: args
                .capi_version
                .or_else(|| crate::ops::project::target(&project)),
            crds: crate::ops::render::load_crds(&args.crds, Some(&project), args.capi_crds)?,
            other_extensions: &other_extensions,
            timeout,
        },
        &status,
    )
}
