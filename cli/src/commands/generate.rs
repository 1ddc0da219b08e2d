//! `capi-ext generate`: the files capi-ext owns, from the sources, statically.

use crate::ops::generate::{self, Scope};
use crate::ops::{files, project, release, types};
use std::path::PathBuf;
use std::process::ExitCode;

/// What to generate.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// The ExtensionConfig, the ClusterClass patch stanza, docs/variables.md and docs/openapi.json.
    Manifests(Args),
    /// Only docs/variables.md and docs/openapi.json.
    Docs(Args),
    /// A Helm chart in chart/ (the Deployment, Service, certificate and ExtensionConfig of
    /// config/default, with values for image, replicas, resources, certificates, the
    /// ExtensionConfig's namespaceSelector and settings, and labels). Once written,
    /// `generate manifests` keeps it in step and `--check`s it.
    Helm(Args),
    /// What clusterctl expects of a runtime extension provider: components.yaml (the objects of
    /// `kustomize build config/default`, the image set to --image) and metadata.yaml, in
    /// OUTPUT/runtime-extension-<name>/<version>/ (a clusterctl local repository; the same two
    /// files are a release's assets). Prints the clusterctl configuration that uses it.
    Release(ReleaseArgs),
    /// Rust types for CRD kinds (your providers' templates), written into the project as a
    /// module capi-ext owns: docs from the descriptions, `Option` for optional fields, enums
    /// for enums, maps, int-or-string, and in every struct the fields the type does not know,
    /// kept and written back unchanged. Patch them with `NamedPatch::typed`.
    Types(TypesArgs),
}

/// Flags of `generate types`.
#[derive(Debug, clap::Args)]
pub struct TypesArgs {
    /// CRD files or directories (repeatable), e.g. the project's crds/.
    #[arg(long, required = true, value_name = "FILE|DIR")]
    crd: Vec<PathBuf>,
    /// Only this kind (repeatable; default: every CRD given).
    #[arg(long, value_name = "KIND")]
    kind: Vec<String>,
    /// The CRDs' version to use (default: each one's storage version).
    #[arg(long, value_name = "VERSION")]
    version: Option<String>,
    /// The module to write, relative to the project.
    #[arg(long, default_value = "src/types.rs")]
    out: PathBuf,
    /// Write nothing; exit 1 with a unified diff when the module is stale (for CI).
    #[arg(long)]
    check: bool,
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The project (default: the current directory or its nearest parent with capi-ext.toml;
    /// any folder, for a crate of types of its own).
    #[arg(long, default_value = ".", hide_default_value = true)]
    project: PathBuf,
}

/// Flags of `generate release`.
#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// The release's version, vMAJOR.MINOR.PATCH.
    #[arg(long)]
    version: String,
    /// The release's image, REGISTRY/REPOSITORY:TAG (clusterctl refuses names that are not
    /// canonical, like the development image `<name>:dev` of config/manager).
    #[arg(long)]
    image: String,
    /// The directory of the local repository, relative to the project.
    #[arg(long, default_value = "release")]
    output: PathBuf,
    /// The kustomize command.
    #[arg(long, default_value = "kustomize")]
    kustomize: PathBuf,
    /// Print what would be written, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The project (default: the current directory or its nearest parent with capi-ext.toml).
    #[arg(long, default_value = ".", hide_default_value = true)]
    project: PathBuf,
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
    #[arg(long, default_value = ".", hide_default_value = true)]
    project: PathBuf,
}

/// Runs the command.
pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    let (args, scope) = match cmd {
        Command::Release(a) => return run_release(a),
        Command::Types(a) => return run_types(a),
        Command::Manifests(a) => (a, Scope::All),
        Command::Docs(a) => (a, Scope::Docs),
        Command::Helm(a) => (a, Scope::Helm),
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

fn run_types(args: TypesArgs) -> anyhow::Result<ExitCode> {
    // A capi-ext project, or any folder (a crate of types of its own).
    let root = project::find_root(&args.project).unwrap_or_else(|_| args.project.clone());
    let change = types::file(
        &root,
        &types::Request {
            crds: args.crd,
            kinds: args.kind,
            version: args.version,
            out: args.out,
        },
    )?;
    if args.check {
        let stale = generate::stale(&root, std::slice::from_ref(&change));
        if let Some((path, diff)) = stale.first() {
            print!("{diff}");
            eprintln!("error: {path} is stale; run the command in its header");
            return Ok(ExitCode::FAILURE);
        }
        eprintln!(
            "{}",
            files::status_line(
                "Checked",
                &format!("{} is up to date", change.path.display())
            )
        );
        return Ok(ExitCode::SUCCESS);
    }
    super::report(&files::apply(&root, &[change], args.dry_run, false)?);
    Ok(ExitCode::SUCCESS)
}

fn run_release(args: ReleaseArgs) -> anyhow::Result<ExitCode> {
    let root = project::find_root(&args.project)?;
    let meta = project::Metadata::read(&root)?;
    let spec = release::Release {
        version: args.version,
        image: args.image,
        kustomize: args.kustomize,
        output: args.output,
    };
    let changes = release::files(&root, &meta, &spec)?;
    super::report(&files::apply(&root, &changes, args.dry_run, false)?);
    print!("{}", release::clusterctl_config(&root, &meta, &spec));
    Ok(ExitCode::SUCCESS)
}
