//! `capi-ext render`: a ClusterClass topology rendered through a running extension, as CAPI's
//! topology controller would, without a cluster.

use crate::ops::call::Connection;
use crate::ops::files::{status_line, unified_diff, write_atomic};
use crate::ops::kube::{self, Kube};
use crate::ops::local::LocalExtension;
use crate::ops::render::{self, Extensions};
use capi_ext_render::RenderError;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Render a Cluster's topology through the extension as CAPI would: DiscoverVariables, the
/// Cluster's variables checked against the schemas (with CEL), GeneratePatches per ClusterClass
/// patch, the patches applied, ValidateTopology. Prints the objects CAPI would create.
/// Exit 0: rendered; 1: the extension or the Cluster's variables rejected it, or (`--check`) the
/// output differs from the file; 2: bad input or no usable answer.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Cluster (cluster.x-k8s.io/v1beta2, with spec.topology): a file, or NAMESPACE/NAME
    /// with --kubeconfig. With --project: the project's render/cluster.yaml when not given.
    #[arg(long, value_name = "FILE|NS/NAME", required_unless_present = "project")]
    cluster: Option<String>,
    /// The ClusterClass the Cluster names. With --project: its render/clusterclass.yaml when
    /// not given.
    #[arg(
        long,
        required_unless_present_any = ["kubeconfig", "project"],
        conflicts_with = "kubeconfig"
    )]
    clusterclass: Option<PathBuf>,
    /// The templates the ClusterClass references (any number of files, multi-document YAML);
    /// existing MachineDeployments, MachinePools and the ControlPlane here keep their names.
    /// With --project: its render/templates.yaml when not given.
    #[arg(long, num_args = 1.., required_unless_present_any = ["kubeconfig", "project"], conflicts_with = "kubeconfig")]
    templates: Vec<PathBuf>,
    /// The ExtensionConfigs the ClusterClass calls (repeatable; a file may hold several), for
    /// the settings CAPI sends with each call: a hook registered as `<handler>.NAME` gets the
    /// settings of the ExtensionConfig NAME, with the ClusterClass patch's laid over them.
    #[arg(long, value_name = "FILE", conflicts_with = "kubeconfig")]
    extension_config: Vec<PathBuf>,
    /// Read the Cluster NS/NAME, its ClusterClass and templates, its current ControlPlane,
    /// MachineDeployments and MachinePools and the settings of the ExtensionConfigs it calls from the
    /// management cluster of this kubeconfig (read only).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, requires = "kubeconfig")]
    context: Option<String>,
    /// With --kubeconfig: also write the objects read into DIR/NAMESPACE-NAME.yaml, a case
    /// for `capi-ext diff --cases` or a file input of render.
    #[arg(long, value_name = "DIR", requires = "kubeconfig")]
    write_inputs: Option<PathBuf>,
    /// A running extension (or `--project` to build and start one).
    #[command(flatten)]
    connection: Option<Connection>,
    /// Build the project at DIR (or above it) and render against it, started on 127.0.0.1 with
    /// fresh development certificates and stopped afterwards.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["url", "ca"])]
    project: Option<PathBuf>,
    /// Print a diff of what the patches changed instead of the objects.
    #[arg(long)]
    diff: bool,
    /// Print JSON (a `v1` List) instead of YAML; when render fails, a JSON error on stdout
    /// (`{"kind": "RenderError", "step": ..., "message": ...}`: the step of CAPI's reconcile
    /// that would stop, `variable definitions`, `variable values`, `ValidateTopology`,
    /// `patches`, `API server` or `input`).
    #[arg(long, conflicts_with = "diff")]
    json: bool,
    /// Write the output to FILE (atomically) instead of stdout: the expected render kept in the
    /// repository.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// With --output: compare instead of writing; print a diff and exit 1 when the render no
    /// longer matches the file (what CI runs, like `generate manifests --check`).
    #[arg(long, requires = "output")]
    check: bool,
    /// Write every request and response into this directory (replay one with `capi-ext call -f`).
    #[arg(long, value_name = "DIR")]
    write_requests: Option<PathBuf>,
    /// The Cluster API release whose topology engine to play (before 1.14 CAPI drops the
    /// metadata patches set on templates). Default: the project's target with --project, else
    /// the newest.
    #[arg(long, value_name = "VERSION")]
    capi_version: Option<capi_ext::CapiVersion>,
    /// CRDs of the templates' kinds (files or directories, repeatable): render then applies
    /// the API server's rules. A field a patch sets that the CRD does not declare is an error
    /// naming the patch (the API server refuses CAPI's server-side apply of it), the objects printed are what
    /// the API server stores (CRD defaults filled in), and one it would refuse is an error with
    /// its causes. With --project, the project's crds/ folder is read too. Cluster API's own
    /// CRDs (core, KubeadmControlPlane, Kubeadm bootstrap) are built in and used for the kinds
    /// not given.
    #[arg(long, value_name = "FILE|DIR")]
    crds: Vec<PathBuf>,
    /// Apply the API server's rules with Cluster API's own CRDs only (built in, of the
    /// release render models), as --crds does.
    #[arg(long)]
    capi_crds: bool,
    /// Another ExtensionConfig the ClusterClass calls, served at URL (repeatable): hooks it
    /// names as `<handler>.NAME` go there, with the same --cert and --key (a ClusterClass
    /// may take its patches from one extension and its upgrade plan from another; its CA with
    /// --extension-ca). Every other hook goes to --url.
    #[arg(long, value_name = "NAME=URL")]
    extension_url: Vec<String>,
    /// The CA bundle of an ExtensionConfig given with --extension-url (repeatable; default:
    /// --ca's).
    #[arg(long, value_name = "NAME=FILE")]
    extension_ca: Vec<String>,
    /// A lifecycle hook of an upgrade that answers with retryAfterSeconds (repeatable:
    /// BeforeClusterUpgrade, BeforeControlPlaneUpgrade, AfterControlPlaneUpgrade,
    /// BeforeWorkersUpgrade, AfterWorkersUpgrade). render never calls lifecycle hooks; without
    /// this it goes on as if none blocked. With it, render holds the upgrade where CAPI would
    /// call the hook and prints the Cluster as CAPI keeps it there.
    #[arg(long, value_name = "HOOK")]
    blocking_hook: Vec<capi_ext_render::UpgradeHook>,
    /// Seconds to wait for each call (sent as ?timeout=).
    #[arg(long, default_value_t = 10)]
    timeout: u64,
}

/// The render input: from files, or read from a management cluster.
fn read_input(args: &Args, timeout: Duration) -> anyhow::Result<capi_ext_render::Input> {
    let Some(kubeconfig) = &args.kubeconfig else {
        return render::load(&render::Files::with_project_defaults(
            args.cluster.as_deref().map(PathBuf::from),
            args.clusterclass.clone(),
            args.templates.clone(),
            args.extension_config.clone(),
            args.project.as_deref(),
        )?);
    };
    let cluster = args.cluster.as_deref().unwrap_or_default();
    let Some((namespace, name)) = cluster.split_once('/') else {
        anyhow::bail!("--cluster {cluster}: with --kubeconfig, name the Cluster as NAMESPACE/NAME");
    };
    let kube = Kube::from_kubeconfig(kubeconfig, args.context.as_deref(), timeout)?;
    let (input, objects) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(kube::render_input(&kube, namespace, name))?;
    eprintln!(
        "{}",
        status_line(
            "Read",
            &format!(
                "Cluster {namespace}/{name} and {} objects from {}",
                objects.len() - 1,
                kubeconfig.display()
            )
        )
    );
    if let Some(dir) = &args.write_inputs {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{namespace}-{name}.yaml"));
        write_atomic(&path, &render::yaml_stream(&objects)?)?;
        eprintln!("{}", status_line("Wrote", &path.display().to_string()));
    }
    Ok(input)
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let timeout = Duration::from_secs(args.timeout);
    let input = match read_input(&args, timeout) {
        Ok(mut input) => {
            input.capi_version = args.capi_version.or_else(|| {
                args.project
                    .as_deref()
                    .and_then(crate::ops::project::target)
            });
            input.blocking_hooks = args.blocking_hook.iter().copied().collect();
            match render::load_crds(&args.crds, args.project.as_deref(), args.capi_crds) {
                Ok(crds) => input.crds = crds,
                Err(e) => {
                    eprintln!("error: {e:#}");
                    return Ok(ExitCode::from(2));
                }
            }
            input
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    // What can be checked without the extension is checked before it is built and started.
    if let Err(e) = input.check() {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(2));
    }
    let other_extensions = match render::other_extensions(&args.extension_url, &args.extension_ca) {
        Ok(urls) => urls,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    // Kept alive until the render is done; dropping it stops the extension.
    let mut local = None;
    let target = match (args.connection, &args.project) {
        (Some(connection), None) => match connection.target(timeout) {
            Ok(target) => Some(target),
            Err(e) => {
                eprintln!("error: {e:#}");
                return Ok(ExitCode::from(2));
            }
        },
        (None, Some(dir)) => match LocalExtension::start(dir, timeout) {
            Ok(started) => {
                eprintln!(
                    "{}",
                    status_line(
                        "Started",
                        &format!("{} (from {})", started.target.url, dir.display())
                    )
                );
                Some(local.insert(started).target.clone())
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                return Ok(ExitCode::from(2));
            }
        },
        // A ClusterClass of inline patches only (CAPI's quick-start) needs no extension.
        (None, None) if !input.calls_extension() => None,
        _ => {
            eprintln!(
                "error: the ClusterClass calls an extension: say where it is: --url URL --ca CA (running), or --project DIR (built and started here)"
            );
            return Ok(ExitCode::from(2));
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let extensions = match target {
        Some(target) => {
            let others = other_extensions
                .iter()
                .map(|(name, other)| (name.clone(), other.target(&target)))
                .collect();
            Some(Extensions::new(target, &others))
        }
        None if !other_extensions.is_empty() => {
            eprintln!(
                "error: --extension-url names where other ExtensionConfigs are served; say where the ClusterClass's own extension is too: --url URL --ca CA, or --project DIR"
            );
            return Ok(ExitCode::from(2));
        }
        None => None,
    };
    let result = runtime.block_on(async {
        match &extensions {
            Some(extensions) => capi_ext_render::render(&input, extensions).await,
            None => capi_ext_render::render(&input, &capi_ext_render::NoExtension).await,
        }
    });
    let rendered = match result {
        Ok(rendered) => rendered,
        Err(e) => {
            eprintln!("error: {e}");
            if args.json {
                // For programs: where CAPI would stop, and why.
                let error = serde_json::json!({"kind": "RenderError", "step": e.step().as_str(), "message": e.to_string()});
                println!("{error}");
            }
            // The extension's log helps when it answered; an input error is the input's.
            let from_extension = !matches!(
                e,
                RenderError::Input(_)
                    | RenderError::Definitions(_)
                    | RenderError::Variables(_)
                    | RenderError::Inline { .. }
            );
            if let (Some(local), true) = (&local, from_extension) {
                eprintln!("extension log:\n{}", local.log());
            }
            if let Some(hint) = not_served_hint(&e, &input, &other_extensions) {
                eprintln!("hint: {hint}");
            }
            let code = match e {
                RenderError::Definitions(_)
                | RenderError::Variables(_)
                | RenderError::Pruned { .. }
                | RenderError::Rejected { .. }
                | RenderError::Failure { .. }
                | RenderError::Nondeterministic(_)
                | RenderError::VolatileMessage { .. } => 1,
                _ => 2,
            };
            return Ok(ExitCode::from(code));
        }
    };
    for warning in &rendered.warnings {
        eprintln!("warning: {warning}");
    }
    for exchange in &rendered.exchanges {
        eprintln!(
            "{}",
            status_line(
                "Called",
                &format!(
                    "{} `{}` for {}",
                    exchange.hook,
                    exchange.handler,
                    exchange.served()
                )
            )
        );
    }
    if let Some(dir) = &args.write_requests {
        let written = render::write_exchanges(dir, &rendered.exchanges)?;
        eprintln!(
            "{}",
            status_line(
                "Wrote",
                &format!("{} files to {}", written.len(), dir.display())
            )
        );
    }
    let text = if args.diff {
        render::diff(&rendered)?
    } else if args.json {
        let list =
            serde_json::json!({"apiVersion": "v1", "kind": "List", "items": rendered.objects});
        serde_json::to_string_pretty(&list)? + "\n"
    } else {
        render::yaml_stream(&rendered.objects)?
    };
    match &args.output {
        None => print!("{text}"),
        Some(path) if args.check => {
            let shown = path.display().to_string();
            match std::fs::read_to_string(path) {
                Ok(expected) if expected == text => {
                    eprintln!(
                        "{}",
                        status_line("Checked", &format!("{shown} matches the render"))
                    );
                }
                Ok(expected) => {
                    print!("{}", unified_diff(&shown, &expected, &text));
                    eprintln!(
                        "error: the render differs from {shown} (diff above): the extension or the inputs changed what CAPI would create; if that is intended, write it again without --check and commit it"
                    );
                    return Ok(ExitCode::from(1));
                }
                Err(e) => {
                    eprintln!(
                        "error: {shown}: {e}; write it first without --check (`make render`) and commit it"
                    );
                    return Ok(ExitCode::from(1));
                }
            }
        }
        Some(path) => {
            write_atomic(path, &text)?;
            eprintln!("{}", status_line("Wrote", &path.display().to_string()));
        }
    }
    eprintln!(
        "{}",
        status_line("Rendered", &format!("{} objects", rendered.objects.len()))
    );
    Ok(ExitCode::SUCCESS)
}

/// For a handler the extension does not serve, when the ClusterClass calls ExtensionConfigs that
/// no --extension-url places: they all went to --url, and one may be served elsewhere.
fn not_served_hint(
    error: &RenderError,
    input: &capi_ext_render::Input,
    others: &std::collections::BTreeMap<String, render::OtherExtension>,
) -> Option<String> {
    let RenderError::Call { error, .. } = error else {
        return None;
    };
    let configs = input.extension_configs();
    let unplaced: Vec<&String> = configs
        .iter()
        .filter(|c| !others.contains_key(*c))
        .collect();
    (error.is_not_served() && configs.len() > 1 && !unplaced.is_empty()).then(|| {
        let names: Vec<&str> = configs.iter().map(String::as_str).collect();
        format!(
            "the ClusterClass calls the ExtensionConfigs {}; the hooks of {} went to --url. If another extension serves one of them, give --extension-url NAME=URL",
            names.join(", "),
            unplaced.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
        )
    })
}
