//! The patch modules of a project (`src/patches/`): the example a GeneratePatches handler starts
//! with, and `capi-ext create patch`, which adds a patch with its test and lists it in a
//! handler's `patches()`.

use super::files::{FileChange, Owner};
use super::markers::{MODULES_MARKER, PATCHES_MARKER, insert_before, insert_module};
use super::project::{self, Metadata};
use super::source::CrateSource;
use anyhow::{Context, anyhow, bail};
use capi_ext_codegen::naming;
use serde_json::json;
use std::path::Path;

/// The folder of the patch modules.
pub const DIR: &str = "src/patches";

/// The templates a new patch selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// The control plane template.
    ControlPlane,
    /// The infrastructure cluster template.
    InfrastructureCluster,
    /// The infrastructure templates of every MachineDeployment class.
    MachineDeployments,
    /// The infrastructure templates of every MachinePool class.
    MachinePools,
    /// The bootstrap config templates of every MachineDeployment class (kubeadm's files,
    /// commands, kubelet flags).
    MachineDeploymentBootstrap,
    /// The bootstrap config templates of every MachinePool class.
    MachinePoolBootstrap,
}

impl Target {
    /// The `Selector` expression, the `TemplateCase` that plays it in the test, and the
    /// kind and apiVersion of the test's template.
    fn parts(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Target::ControlPlane => (
                "Selector::control_plane().control_plane_template()",
                "TemplateCase::control_plane(template())",
                "GenericControlPlaneTemplate",
                "controlplane.cluster.x-k8s.io/v1beta2",
            ),
            Target::InfrastructureCluster => (
                "Selector::infrastructure_cluster()",
                "TemplateCase::infrastructure_cluster(template())",
                "GenericInfrastructureClusterTemplate",
                "infrastructure.cluster.x-k8s.io/v1beta2",
            ),
            Target::MachineDeployments => (
                "Selector::machine_deployments([\"*\"]).infrastructure()",
                "TemplateCase::machine_deployment_infrastructure(\"default-worker\", template())",
                "GenericInfrastructureMachineTemplate",
                "infrastructure.cluster.x-k8s.io/v1beta2",
            ),
            Target::MachinePools => (
                "Selector::machine_pools([\"*\"]).infrastructure()",
                "TemplateCase::machine_pool_infrastructure(\"default-pool\", template())",
                "GenericInfrastructureMachinePoolTemplate",
                "infrastructure.cluster.x-k8s.io/v1beta2",
            ),
            Target::MachineDeploymentBootstrap => (
                "Selector::machine_deployments([\"*\"]).bootstrap()",
                "TemplateCase::machine_deployment_bootstrap(\"default-worker\", template())",
                "GenericBootstrapConfigTemplate",
                "bootstrap.cluster.x-k8s.io/v1beta2",
            ),
            Target::MachinePoolBootstrap => (
                "Selector::machine_pools([\"*\"]).bootstrap()",
                "TemplateCase::machine_pool_bootstrap(\"default-pool\", template())",
                "GenericBootstrapConfigTemplate",
                "bootstrap.cluster.x-k8s.io/v1beta2",
            ),
        }
    }
}

impl Target {
    /// The typed template kind a new patch of this target edits, from capi-ext-types (module,
    /// type, apiVersion): KubeadmControlPlaneTemplate for the control plane,
    /// KubeadmConfigTemplate for a MachineDeployment's bootstrap; `None`: a JSON pointer patch.
    fn typed(self) -> Option<(&'static str, &'static str, &'static str)> {
        match self {
            Target::ControlPlane => Some((
                "capi_ext_types::kubeadm::v1beta2",
                "KubeadmControlPlaneTemplate",
                "controlplane.cluster.x-k8s.io/v1beta2",
            )),
            Target::MachineDeploymentBootstrap => Some((
                "capi_ext_types::kubeadm::v1beta2",
                "KubeadmConfigTemplate",
                "bootstrap.cluster.x-k8s.io/v1beta2",
            )),
            _ => None,
        }
    }
}

fn patch_file(
    project: &str,
    name: &str,
    target: Target,
    example: bool,
) -> anyhow::Result<FileChange> {
    let (selector, case_call, kind, api_version) = target.parts();
    // The init-time example stays a pointer patch: its render/ templates are generic kinds.
    let typed = target.typed().filter(|_| !example);
    let (kind, api_version) = match typed {
        Some((_, kind, api_version)) => (kind, api_version),
        None => (kind, api_version),
    };
    // The test's template: one the API server accepts (kubeadm's need a non-empty spec).
    let template_spec = match typed.map(|t| t.1) {
        Some("KubeadmControlPlaneTemplate") => {
            r#"{"kubeadmConfigSpec": {"format": "cloud-config"}}"#
        }
        Some(_) => r#"{"format": "cloud-config"}"#,
        None => "{}",
    };
    let ctx = json!({
        "template_spec": template_spec,
        "typed": typed.is_some(),
        "typed_module": typed.map(|t| t.0),
        "name": name,
        "project_name": project,
        "example": example,
        "selector": selector,
        "case_call": case_call,
        "template_kind": kind,
        "template_api_version": api_version,
    });
    Ok(FileChange {
        path: format!("{DIR}/{}.rs", project::module_name(name)).into(),
        content: capi_ext_templates::render("project/src/patches/patch.rs.hbs", &ctx)?,
        owner: Owner::User,
    })
}

/// `src/patches/mod.rs` and the example patch (`image-repository`), for a project's first
/// GeneratePatches handler.
pub fn example(project: &str) -> anyhow::Result<Vec<FileChange>> {
    let module = capi_ext_templates::render("project/src/patches/mod.rs.hbs", &json!({}))?;
    Ok(vec![
        FileChange {
            path: format!("{DIR}/mod.rs").into(),
            content: insert_module(&module, MODULES_MARKER, "pub mod image_repository;")?,
            owner: Owner::User,
        },
        patch_file(project, "image-repository", Target::ControlPlane, true)?,
    ])
}

/// Adds `capi-ext-render` to `[dev-dependencies]` of a project's Cargo.toml when it is missing
/// (GeneratePatches tests use its testing module); `None` when nothing changes.
pub fn add_render_dev_dependency(root: &Path) -> anyhow::Result<Option<FileChange>> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).context("reading Cargo.toml")?;
    add_sibling(&text, "dev-dependencies", "render", &[])
}

/// Adds `capi-ext-<folder>` (with `features`) to `section` of the Cargo.toml `text`, from the
/// source its `capi-ext` dependency names (a checkout or crates.io); `None` when the crate is
/// there already (its features are the user's then).
fn add_sibling(
    text: &str,
    section: &str,
    folder: &str,
    features: &[&str],
) -> anyhow::Result<Option<FileChange>> {
    let mut doc: toml_edit::DocumentMut = text.parse().context("Cargo.toml is not valid TOML")?;
    let name = format!("capi-ext-{folder}");
    let table = doc
        .entry(section)
        .or_insert_with(toml_edit::table)
        .as_table_mut()
        .ok_or_else(|| anyhow!("Cargo.toml: [{section}] is not a table"))?;
    if table.contains_key(&name) {
        return Ok(None);
    }
    let capi_ext = doc
        .get("dependencies")
        .and_then(|d| d.get("capi-ext"))
        .ok_or_else(|| anyhow!("Cargo.toml: no `capi-ext` in [dependencies]"))?;
    let source = match capi_ext.get("path").and_then(|p| p.as_str()) {
        Some(path) => CrateSource::Checkout(path.to_string()),
        None => CrateSource::Registry(
            capi_ext
                .as_str()
                .or_else(|| capi_ext.get("version").and_then(|v| v.as_str()))
                .unwrap_or(env!("CARGO_PKG_VERSION"))
                .to_string(),
        ),
    };
    let line = format!("{name} = {}", source.sibling_dependency(folder, features));
    let item: toml_edit::DocumentMut = line.parse().expect("a dependency line is valid TOML");
    let (key, value) = item.iter().next().expect("one key");
    let table = doc[section].as_table_mut().expect("made a table above");
    table.insert(key, value.clone());
    Ok(Some(FileChange {
        path: "Cargo.toml".into(),
        content: doc.to_string(),
        owner: Owner::Edited,
    }))
}

/// A patch to add.
#[derive(Debug, Clone)]
pub struct PatchRequest {
    /// The patch's name, a DNS-1123 label.
    pub name: String,
    /// The GeneratePatches handler that applies it (needed when there are several).
    pub handler: Option<String>,
    /// What it selects.
    pub target: Target,
}

/// The changes that add a patch: its module with a test, its `pub mod` line, its place at the
/// end of the handler's `patches()`.
pub fn create(root: &Path, request: &PatchRequest) -> anyhow::Result<Vec<FileChange>> {
    let meta = Metadata::read(root)?;
    naming::validate_dns_label(&request.name).map_err(|e| anyhow!("NAME: {e}"))?;
    let handlers: Vec<_> = meta
        .handlers
        .iter()
        .filter(|h| h.hook == "GeneratePatches")
        .collect();
    let handler = match (&request.handler, handlers.as_slice()) {
        (_, []) => bail!(
            "the project has no GeneratePatches handler; add one with `capi-ext create hook GeneratePatches`"
        ),
        (Some(name), _) => handlers.iter().find(|h| h.name == *name).ok_or_else(|| {
            anyhow!(
                "--handler {name}: no GeneratePatches handler has this name; the project has {}",
                names(&handlers)
            )
        })?,
        (None, [one]) => one,
        (None, _) => bail!(
            "the project has several GeneratePatches handlers ({}); choose one with --handler",
            names(&handlers)
        ),
    };
    let file = patch_file(&meta.name, &request.name, request.target, false)?;
    if root.join(&file.path).exists() {
        bail!(
            "{} already exists; choose another name",
            file.path.display()
        );
    }
    let module = project::module_name(&request.name);
    let mod_rs = format!("{DIR}/mod.rs");
    let text = std::fs::read_to_string(root.join(&mod_rs)).with_context(|| {
        format!("reading {mod_rs} (created with the first GeneratePatches handler)")
    })?;
    let modules = insert_module(&text, MODULES_MARKER, &format!("pub mod {module};")).map_err(|_| {
        anyhow!("{mod_rs}: the marker comment `{MODULES_MARKER}` is missing; put it back below the module declarations")
    })?;
    let handler_rs = format!("src/hooks/{}.rs", handler.module);
    let text = std::fs::read_to_string(root.join(&handler_rs))
        .with_context(|| format!("reading {handler_rs}"))?;
    let listed = insert_before(&text, PATCHES_MARKER, &[format!("        patches::{module}::patch(),")])
        .map_err(|_| {
            anyhow!("{handler_rs}: the marker comment `{PATCHES_MARKER}` is missing; put it back as the last line of the list in patches()")
        })?;
    let mut out = vec![
        file,
        FileChange {
            path: mod_rs.into(),
            content: modules,
            owner: Owner::Edited,
        },
        FileChange {
            path: handler_rs.into(),
            content: listed,
            owner: Owner::Edited,
        },
    ];
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).context("reading Cargo.toml")?;
    let render = add_sibling(&cargo, "dev-dependencies", "render", &[])?;
    let cargo = render.as_ref().map_or(cargo, |c| c.content.clone());
    let types = match request.target.typed() {
        Some(_) => add_sibling(&cargo, "dependencies", "types", &["kubeadm"])?,
        None => None,
    };
    out.extend(types.or(render));
    Ok(out)
}

fn names(handlers: &[&project::HandlerEntry]) -> String {
    handlers
        .iter()
        .map(|h| h.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
