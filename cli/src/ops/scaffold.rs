//! `capi-ext init` and `capi-ext create hook`: the files of a new project, and the edits that
//! add a handler to an existing one.

use super::files::{FileChange, Owner};
use super::generate;
use super::markers::{MODULES_MARKER, REGISTER_MARKER, insert_before, insert_module};
use super::patches;
use super::project::{self, HandlerEntry, Metadata, VARIABLES_HANDLER};
use super::versions;
use anyhow::{Context, anyhow, bail};
use capi_ext_codegen::naming;
use capi_ext_codegen::version::CapiVersion;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The project files `init` renders from a template of its own, which `upgrade` merges with
/// newer templates: `(path in the project, template)`.
pub const PROJECT_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", "project/Cargo.toml.hbs"),
    ("README.md", "project/README.md.hbs"),
    (".gitignore", "project/gitignore.hbs"),
    ("rustfmt.toml", "project/rustfmt.toml.hbs"),
    (".dockerignore", "project/dockerignore.hbs"),
    ("Dockerfile", "project/Dockerfile.hbs"),
    ("Makefile", "project/Makefile.hbs"),
    (".github/workflows/ci.yaml", "project/ci.yaml.hbs"),
    (
        "config/default/kustomization.yaml",
        "project/config/default/kustomization.yaml.hbs",
    ),
    (
        "config/default/namespace.yaml",
        "project/config/default/namespace.yaml.hbs",
    ),
    (
        "config/manager/kustomization.yaml",
        "project/config/manager/kustomization.yaml.hbs",
    ),
    (
        "config/manager/deployment.yaml",
        "project/config/manager/deployment.yaml.hbs",
    ),
    (
        "config/manager/service.yaml",
        "project/config/manager/service.yaml.hbs",
    ),
    (
        "config/manager/poddisruptionbudget.yaml",
        "project/config/manager/poddisruptionbudget.yaml.hbs",
    ),
    (
        "config/manager/networkpolicy.yaml",
        "project/config/manager/networkpolicy.yaml.hbs",
    ),
    (
        "config/certmanager/kustomization.yaml",
        "project/config/certmanager/kustomization.yaml.hbs",
    ),
    (
        "config/certmanager/issuer.yaml",
        "project/config/certmanager/issuer.yaml.hbs",
    ),
    (
        "config/certmanager/certificate.yaml",
        "project/config/certmanager/certificate.yaml.hbs",
    ),
    (
        "config/extension/kustomization.yaml",
        "project/config/extension/kustomization.yaml.hbs",
    ),
    (
        "config/tracing/kustomization.yaml",
        "project/config/tracing/kustomization.yaml.hbs",
    ),
    (
        "config/prometheus/kustomization.yaml",
        "project/config/prometheus/kustomization.yaml.hbs",
    ),
    (
        "config/prometheus/podmonitor.yaml",
        "project/config/prometheus/podmonitor.yaml.hbs",
    ),
    (
        "config/prometheus/prometheusrule.yaml",
        "project/config/prometheus/prometheusrule.yaml.hbs",
    ),
];

/// The values the project templates are rendered with, for a project as `meta` describes it,
/// its crates from `source`, scaffolded by CLI `cli_version`.
pub fn project_context(
    meta: &Metadata,
    source: &super::source::CrateSource,
    cli_version: &str,
) -> serde_json::Value {
    json!({
        "name": meta.name,
        "crate_name": project::module_name(&meta.name),
        "namespace": meta.namespace,
        "capi_version": meta.capi_version,
        "cli_version": cli_version,
        "capi_ext_dependency": if meta.kube {
            source.sibling_dependency("runtime", &["kube"])
        } else {
            source.capi_ext_dependency()
        },
        "kube": meta.kube,
        "capi_ext_render_dependency": source.render_dependency(),
        "cli_install": source.cli_install(),
        "from_checkout": matches!(source, super::source::CrateSource::Checkout(_)),
        "has_patches": has_patches(meta),
        "handlers": meta.handlers,
        "has_variables": meta.has_variables(),
        "variables_handler": VARIABLES_HANDLER,
    })
}

/// A handler to add.
#[derive(Debug, Clone, Default)]
pub struct HookRequest {
    /// Hook name as the user typed it.
    pub hook: String,
    /// Handler name (default: the hook in kebab-case).
    pub name: Option<String>,
    /// Timeout in seconds.
    pub timeout: Option<i64>,
    /// `Fail` or `Ignore`.
    pub failure_policy: Option<String>,
    /// The GeneratePatches handler this one is the next version of (see [`versions`]).
    pub next_version_of: Option<String>,
}

/// What `init` makes.
#[derive(Debug, Clone)]
pub struct InitRequest {
    /// Extension name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// Targeted CAPI version.
    pub capi_version: CapiVersion,
    /// The hooks to start with.
    pub hooks: Vec<String>,
    /// Where the crates and the CLI come from.
    pub source: super::source::CrateSource,
    /// The extension talks to clusters (the runtime's `kube` feature, RBAC from markers).
    pub kube: bool,
}

struct Added {
    entry: HandlerEntry,
    file: Option<FileChange>,
}

fn validate_handler(
    meta: &Metadata,
    request: &HookRequest,
    patches_exist: bool,
) -> anyhow::Result<Added> {
    let hook = project::hook_for(&request.hook, meta.capi()?)?;
    let name = match &request.name {
        Some(n) => n.clone(),
        None if hook.name == "DiscoverVariables" => VARIABLES_HANDLER.to_string(),
        None => naming::to_dns_label(hook.name),
    };
    naming::validate_dns_label(&name).map_err(|e| anyhow!("--name: {e}"))?;
    if let Some(existing) = meta.handlers.iter().find(|h| h.name == name) {
        bail!(
            "a handler named `{name}` already exists ({}); choose another with --name",
            existing.hook
        );
    }
    if hook.name == "DiscoverVariables" && meta.has_variables() {
        bail!("the project already answers DiscoverVariables from src/variables.rs");
    }
    let timeout = request
        .timeout
        .map(|t| naming::validate_timeout(t).map_err(|e| anyhow!("--timeout: {e}")))
        .transpose()?;
    if let Some(p) = &request.failure_policy
        && p != "Fail"
        && p != "Ignore"
    {
        bail!("--failure-policy must be Fail or Ignore, not `{p}`");
    }
    let entry = HandlerEntry {
        module: project::module_name(&name),
        name: name.clone(),
        hook: hook.name.to_string(),
    };
    let file = if hook.name == "DiscoverVariables" {
        None
    } else {
        let context = project::handler_context(
            &meta.name,
            &name,
            hook,
            timeout,
            request.failure_policy.clone(),
            hook.name == "GeneratePatches" && !patches_exist,
        );
        Some(FileChange {
            path: PathBuf::from(format!("src/hooks/{}.rs", entry.module)),
            content: capi_ext_templates::render("project/src/hooks/handler.rs.hbs", &context)?,
            owner: Owner::User,
        })
    };
    Ok(Added { entry, file })
}

fn has_patches(meta: &Metadata) -> bool {
    meta.handlers.iter().any(|h| h.hook == "GeneratePatches")
}

fn needs_variables(meta: &Metadata) -> bool {
    meta.handlers.iter().any(|h| {
        matches!(
            h.hook.as_str(),
            "GeneratePatches" | "ValidateTopology" | "DiscoverVariables"
        )
    })
}

/// The Cluster and templates `make render` starts from (the ClusterClass is generated), and the
/// folder for the CRDs of the templates' kinds.
fn render_inputs(ctx: &serde_json::Value) -> anyhow::Result<Vec<FileChange>> {
    [
        "render/cluster.yaml",
        "render/templates.yaml",
        "crds/README.md",
    ]
    .into_iter()
    .map(|path| {
        Ok(FileChange {
            path: path.into(),
            content: capi_ext_templates::render(&format!("project/{path}.hbs"), ctx)?,
            owner: Owner::User,
        })
    })
    .collect()
}

/// The line `src/main.rs` registers a handler with: a GeneratePatches handler's file gives
/// its registration (the patch set, built once); the others, and GeneratePatches handlers
/// copied from a project scaffolded before that, are `#[hook]` functions.
fn registration(entry: &HandlerEntry, file: Option<&str>) -> String {
    if entry.hook == "GeneratePatches" && !file.is_some_and(|text| text.contains("#[hook(")) {
        format!(
            "        .handler(hooks::{}::{}())",
            entry.module, entry.module
        )
    } else {
        format!(
            "        .register::<hooks::{}::{}>()",
            entry.module, entry.module
        )
    }
}

/// The files of a new project (user files and generated files).
pub fn init(request: &InitRequest) -> anyhow::Result<Vec<FileChange>> {
    project::validate_resource_name("--name", &request.name)?;
    project::validate_resource_name("--namespace", &request.namespace)?;
    let mut meta = Metadata {
        name: request.name.clone(),
        namespace: request.namespace.clone(),
        capi_version: request.capi_version.to_string(),
        cli_version: project::CLI_VERSION.to_string(),
        handlers: Vec::new(),
        kube: request.kube,
    };
    let mut files = Vec::new();
    for hook in &request.hooks {
        let has_patches = has_patches(&meta);
        let added = validate_handler(
            &meta,
            &HookRequest {
                hook: hook.trim().to_string(),
                ..Default::default()
            },
            has_patches,
        )?;
        files.extend(added.file);
        meta.handlers.push(added.entry);
    }
    let has_patches = has_patches(&meta);
    if has_patches {
        files.extend(patches::example(&meta.name)?);
    }
    if needs_variables(&meta) && !meta.has_variables() {
        meta.handlers.push(HandlerEntry {
            name: VARIABLES_HANDLER.into(),
            hook: "DiscoverVariables".into(),
            module: project::module_name(VARIABLES_HANDLER),
        });
    }
    let has_variables = meta.has_variables();
    let registrations: Vec<String> = meta
        .handlers
        .iter()
        .filter(|h| h.hook != "DiscoverVariables")
        .map(|h| registration(h, None))
        .collect();
    let mut modules: Vec<String> = meta
        .handlers
        .iter()
        .filter(|h| h.hook != "DiscoverVariables")
        .map(|h| format!("pub mod {};", h.module))
        .collect();
    modules.sort();
    let ctx = project_context(&meta, &request.source, &meta.cli_version);
    let user = |path: &str, template: &str| -> anyhow::Result<FileChange> {
        Ok(FileChange {
            path: path.into(),
            content: capi_ext_templates::render(template, &ctx)?,
            owner: Owner::User,
        })
    };
    let mut out = PROJECT_FILES
        .iter()
        .map(|(path, template)| user(path, template))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let main = capi_ext_templates::render("project/src/main.rs.hbs", &ctx)?;
    out.push(FileChange {
        path: "src/main.rs".into(),
        content: insert_before(&main, REGISTER_MARKER, &registrations)?,
        owner: Owner::User,
    });
    let hooks_mod = capi_ext_templates::render("project/src/hooks/mod.rs.hbs", &ctx)?;
    out.push(FileChange {
        path: "src/hooks/mod.rs".into(),
        content: insert_before(&hooks_mod, MODULES_MARKER, &modules)?,
        owner: Owner::User,
    });
    if has_variables {
        out.push(user("src/variables.rs", "project/src/variables.rs.hbs")?);
        out.extend(render_inputs(&ctx)?);
    }
    out.extend(files);
    out.push(FileChange {
        path: project::METADATA_FILE.into(),
        content: meta.render()?,
        owner: Owner::Generated,
    });
    out.extend(generated_from(&out, &meta)?);
    Ok(out)
}

/// The generated files, computed from the planned sources (nothing needs to be on disk).
fn generated_from(planned: &[FileChange], meta: &Metadata) -> anyhow::Result<Vec<FileChange>> {
    let sources: Vec<(String, String)> = planned
        .iter()
        .filter(|f| f.path.starts_with("src") && f.path.extension().is_some_and(|e| e == "rs"))
        .map(|f| (f.path.display().to_string(), f.content.clone()))
        .collect();
    generate::from_sources(meta, &sources)
}

fn read_user_file(root: &Path, rel: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(root.join(rel)).with_context(|| format!("reading {rel}"))
}

fn edit(root: &Path, rel: &str, marker: &str, lines: &[String]) -> anyhow::Result<FileChange> {
    let text = read_user_file(root, rel)?;
    let content = insert_before(&text, marker, lines).map_err(|_| {
        anyhow!("{rel}: the marker comment `{marker}` is missing; put it back inside the Extension::builder() chain, where handlers are registered")
    })?;
    Ok(FileChange {
        path: rel.into(),
        content,
        owner: Owner::Edited,
    })
}

/// The changes that add a handler to the project at `root`.
pub fn create_hook(root: &Path, request: &HookRequest) -> anyhow::Result<Vec<FileChange>> {
    let mut meta = Metadata::read(root)?;
    let patches_exist = root.join(patches::DIR).join("mod.rs").exists();
    let mut previous = None;
    let mut request = request.clone();
    if let Some(of) = &request.next_version_of {
        if project::hook_for(&request.hook, meta.capi()?)?.name != "GeneratePatches" {
            bail!(
                "--next-version-of makes a new version of a GeneratePatches handler; the hook must be GeneratePatches"
            );
        }
        let (entry, name) = versions::next_name(&meta, of)?;
        request.name.get_or_insert(name);
        previous = Some(entry.clone());
    }
    let request = &request;
    let mut added = validate_handler(&meta, request, patches_exist)?;
    let mut kept_render = Vec::new();
    if let (Some(previous), Some(file)) = (&previous, added.file.as_mut()) {
        let path = format!("src/hooks/{}.rs", previous.module);
        file.content =
            versions::copy_handler(&read_user_file(root, &path)?, previous, &added.entry.name);
        kept_render = versions::keep_render_case(root, &previous.name)?;
    }
    let new_patches = added.entry.hook == "GeneratePatches" && !patches_exist;
    let mut out = Vec::new();
    if let Some(file) = &added.file
        && root.join(&file.path).exists()
    {
        bail!(
            "{} already exists; choose another name with --name",
            file.path.display()
        );
    }
    let had_variables = meta.has_variables();
    meta.handlers.push(added.entry.clone());
    let mut main_lines = Vec::new();
    if added.entry.hook != "DiscoverVariables" {
        main_lines.push(registration(
            &added.entry,
            added.file.as_ref().map(|f| f.content.as_str()),
        ));
        let text = read_user_file(root, "src/hooks/mod.rs")?;
        let content = insert_module(&text, MODULES_MARKER, &format!("pub mod {};", added.entry.module))
            .map_err(|_| anyhow!("src/hooks/mod.rs: the marker comment `{MODULES_MARKER}` is missing; put it back below the module declarations"))?;
        out.push(FileChange {
            path: "src/hooks/mod.rs".into(),
            content,
            owner: Owner::Edited,
        });
    }
    if needs_variables(&meta) && !had_variables {
        if added.entry.hook != "DiscoverVariables" {
            meta.handlers.push(HandlerEntry {
                name: VARIABLES_HANDLER.into(),
                hook: "DiscoverVariables".into(),
                module: project::module_name(VARIABLES_HANDLER),
            });
        }
        let variables_name = meta
            .handlers
            .iter()
            .find(|h| h.hook == "DiscoverVariables")
            .map(|h| h.name.clone())
            .unwrap_or_default();
        main_lines.push(format!(
            "        .variables::<variables::Variables>(\"{variables_name}\")"
        ));
        if root.join("src/variables.rs").exists() {
            bail!(
                "src/variables.rs exists but the project does not answer DiscoverVariables; register it in src/main.rs by hand"
            );
        }
        let ctx = json!({"name": meta.name});
        out.push(FileChange {
            path: "src/variables.rs".into(),
            content: capi_ext_templates::render("project/src/variables.rs.hbs", &ctx)?,
            owner: Owner::User,
        });
        out.extend(
            render_inputs(&ctx)?
                .into_iter()
                .filter(|f| !root.join(&f.path).exists()),
        );
    }
    let mut main = edit(root, "src/main.rs", REGISTER_MARKER, &main_lines)?;
    if needs_variables(&meta) && !had_variables && !main.content.contains("mod variables;") {
        main.content = main
            .content
            .replacen("mod hooks;\n", "mod hooks;\nmod variables;\n", 1);
    }
    if new_patches {
        main.content = main
            .content
            .replacen("mod hooks;\n", "mod hooks;\nmod patches;\n", 1);
        out.extend(
            patches::example(&meta.name)?
                .into_iter()
                .filter(|f| !root.join(&f.path).exists()),
        );
        out.extend(patches::add_render_dev_dependency(root)?);
    }
    out.push(main);
    out.extend(added.file);
    out.extend(kept_render);
    out.push(FileChange {
        path: project::METADATA_FILE.into(),
        content: meta.render()?,
        owner: Owner::Generated,
    });
    // The generated files, from the sources as they will be after this change.
    let mut sources = generate::sources(root)?;
    for f in &out {
        let rel = f.path.display().to_string();
        if rel.ends_with(".rs") {
            sources.retain(|(p, _)| *p != rel);
            sources.push((rel, f.content.clone()));
        }
    }
    out.extend(generate::for_project(root, &meta, &sources)?);
    Ok(out)
}
