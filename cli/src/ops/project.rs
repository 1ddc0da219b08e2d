//! A scaffolded project: its metadata file (`capi-ext.toml`), its handlers, and the values
//! the templates are rendered with.

use anyhow::{Context, anyhow, bail};
use capi_ext_codegen::catalog::{self, HookInfo};
use capi_ext_codegen::naming;
use capi_ext_codegen::version::CapiVersion;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The metadata file at the root of every project.
pub const METADATA_FILE: &str = "capi-ext.toml";
/// The handler name of DiscoverVariables, answered from `src/variables.rs`.
pub const VARIABLES_HANDLER: &str = "discover-variables";
/// The version of this CLI, recorded in new projects.
pub const CLI_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A handler of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HandlerEntry {
    /// Handler name (DNS-1123 label).
    pub name: String,
    /// Hook name.
    pub hook: String,
    /// Module under `src/hooks/` (snake case of the name).
    pub module: String,
}

/// What `capi-ext.toml` records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// Extension name: the binary, the ExtensionConfig and the resources' prefix.
    pub name: String,
    /// Namespace the extension is deployed to.
    pub namespace: String,
    /// Targeted Cluster API version.
    pub capi_version: String,
    /// CLI version that scaffolded the project.
    pub cli_version: String,
    /// The handlers, in creation order.
    pub handlers: Vec<HandlerEntry>,
    /// Whether the extension talks to clusters (`init --kube`): the runtime's `kube` feature,
    /// a `Clusters` state, and RBAC from the `// +capi-ext:rbac:` markers.
    pub kube: bool,
}

impl Metadata {
    /// The targeted version, parsed.
    pub fn capi(&self) -> anyhow::Result<CapiVersion> {
        self.capi_version
            .parse()
            .map_err(|e| anyhow!("{METADATA_FILE}: capi-version: {e}"))
    }

    /// Reads `capi-ext.toml` from the project root.
    pub fn read(root: &Path) -> anyhow::Result<Metadata> {
        let path = root.join(METADATA_FILE);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{} not found: run this inside a project made by `capi-ext init`",
                path.display()
            )
        })?;
        let doc: toml_edit::DocumentMut = text
            .parse()
            .with_context(|| format!("{} is not valid TOML", path.display()))?;
        let project = doc
            .get("project")
            .and_then(|p| p.as_table())
            .ok_or_else(|| anyhow!("{}: no [project] table", path.display()))?;
        let field = |key: &str| -> anyhow::Result<String> {
            project
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_string)
                .ok_or_else(|| anyhow!("{}: [project] has no `{key}` string", path.display()))
        };
        let mut handlers = Vec::new();
        if let Some(list) = doc.get("handlers").and_then(|h| h.as_array_of_tables()) {
            for (i, t) in list.iter().enumerate() {
                let get = |key: &str| {
                    t.get(key)
                        .and_then(|v| v.as_str())
                        .map(str::to_string)
                        .ok_or_else(|| {
                            anyhow!("{}: handler #{} has no `{key}`", path.display(), i + 1)
                        })
                };
                let name = get("name")?;
                handlers.push(HandlerEntry {
                    module: module_name(&name),
                    name,
                    hook: get("hook")?,
                });
            }
        }
        Ok(Metadata {
            name: field("name")?,
            namespace: field("namespace")?,
            capi_version: field("capi-version")?,
            cli_version: field("cli-version")?,
            handlers,
            kube: project
                .get("kube")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
        })
    }

    /// The file's content.
    pub fn render(&self) -> anyhow::Result<String> {
        Ok(capi_ext_templates::render(
            "project/capi-ext.toml.hbs",
            self,
        )?)
    }

    /// Whether the project answers DiscoverVariables from `src/variables.rs`.
    pub fn has_variables(&self) -> bool {
        self.handlers.iter().any(|h| h.hook == "DiscoverVariables")
    }
}

/// The module (and function) name of a handler: `before-create` → `before_create`.
pub fn module_name(handler: &str) -> String {
    handler.replace('-', "_")
}

/// The project root: `start` or the nearest parent holding `capi-ext.toml`.
pub fn find_root(start: &Path) -> anyhow::Result<PathBuf> {
    let start = start
        .canonicalize()
        .with_context(|| format!("{} does not exist", start.display()))?;
    start
        .ancestors()
        .find(|d| d.join(METADATA_FILE).is_file())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            anyhow!(
                "no {METADATA_FILE} in {} or its parents: run `capi-ext init` first",
                start.display()
            )
        })
}

/// Looks a hook up by name for `target`, with a did-you-mean, the list, and the version that
/// introduced a hook the target does not know.
pub fn hook_for(name: &str, target: CapiVersion) -> anyhow::Result<&'static HookInfo> {
    let known = || {
        catalog::HOOKS
            .iter()
            .filter(|h| !h.singleton)
            .map(|h| h.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let hook = match catalog::find(name) {
        Some(h) => h,
        None => {
            let hint = catalog::suggest(name)
                .map(|s| format!(" Did you mean `{s}`?"))
                .unwrap_or_default();
            bail!("unknown hook `{name}`.{hint} Known hooks: {}", known());
        }
    };
    if hook.singleton {
        bail!(
            "Discovery is answered by the runtime from the registered handlers; choose one of: {}",
            known()
        );
    }
    if !hook.known_by(target) {
        bail!(
            "{} was introduced in Cluster API {}; Cluster API {target} (the target) would fail the whole discovery on it. Raise the target (--capi-version, or capi-version in {METADATA_FILE}) if your clusters run {} or later",
            hook.name,
            hook.since,
            hook.since
        );
    }
    Ok(hook)
}

/// Everything a handler template needs.
#[derive(Debug, Clone, Serialize)]
pub struct HandlerContext {
    /// Handler name.
    pub name: String,
    /// Hook name.
    pub hook: String,
    /// Function name.
    pub fn_name: String,
    /// Module name.
    pub module: String,
    /// Whether the response carries retryAfterSeconds.
    pub blocking: bool,
    /// Advertised timeout, when not the default.
    pub timeout: Option<i32>,
    /// `Fail` or `Ignore`, when not the default.
    pub failure_policy: Option<String>,
    /// `topology` for hooks reading variables, `plain` otherwise.
    pub shape: &'static str,
    /// The project's name.
    pub project_name: String,
    /// Whether the signature is too long for one line (rustfmt would wrap it; so does the template).
    pub wrap_signature: bool,
    /// The object a blocking handler's example condition reads, in the handler (`req.cluster`).
    pub subject: String,
    /// The same object in the test (`request.cluster`).
    pub subject_field: String,
    /// Its kind (`Cluster` or `Machine`).
    pub subject_kind: &'static str,
    /// Whether a GeneratePatches handler starts with the example patch (`src/patches/image_repository.rs`).
    pub example_patch: bool,
    /// The options chained on a GeneratePatches handler's `Registration::patches(..)`
    /// (`timeout_seconds(5)`), and whether rustfmt puts each on a line of its own.
    pub registration_options: Vec<String>,
    /// See `registration_options`.
    pub wrap_registration: bool,
}

/// The scaffolded projects' rustfmt `max_width`.
const MAX_WIDTH: usize = 120;

/// The template values of one handler.
pub fn handler_context(
    project: &str,
    name: &str,
    hook: &HookInfo,
    timeout: Option<i32>,
    failure_policy: Option<String>,
    example_patch: bool,
) -> HandlerContext {
    let subject = if hook.name == "UpdateMachine" {
        "desired.machine"
    } else {
        "cluster"
    };
    let registration_options: Vec<String> = timeout
        .map(|t| format!("timeout_seconds({t})"))
        .into_iter()
        .chain(
            failure_policy
                .as_ref()
                .map(|p| format!("failure_policy(FailurePolicy::{p})")),
        )
        .collect();
    // rustfmt keeps a chain of one call on the line when it fits, and breaks one of more.
    let one_line = format!(
        "    Registration::patches(\"{name}\", patches()).{}",
        registration_options.join(".")
    );
    let wrap_registration = registration_options.len() > 1 || one_line.len() > MAX_WIDTH;
    HandlerContext {
        name: name.to_string(),
        hook: hook.name.to_string(),
        fn_name: module_name(name),
        module: module_name(name),
        blocking: hook.blocking,
        timeout,
        failure_policy,
        shape: if matches!(hook.name, "GeneratePatches" | "ValidateTopology") {
            "topology"
        } else {
            "plain"
        },
        project_name: project.to_string(),
        subject: format!("req.{subject}"),
        subject_field: format!("request.{subject}"),
        subject_kind: if hook.name == "UpdateMachine" {
            "Machine"
        } else {
            "Cluster"
        },
        example_patch,
        registration_options,
        wrap_registration,
        wrap_signature: {
            let ret = hook.response_kind;
            format!(
                "pub async fn {}(req: {}) -> {ret} {{",
                module_name(name),
                hook.request_kind
            )
            .len()
                > MAX_WIDTH
        },
    }
}

/// Checks a name that becomes a Kubernetes resource name (extension, namespace).
pub fn validate_resource_name(what: &str, name: &str) -> anyhow::Result<()> {
    naming::validate_dns_label(name)
        .map_err(|e| anyhow!("{what}: {}", e.to_string().replace("handler name", "name")))
}

/// The project name a directory gives, when `--name` is absent: its last component, which must
/// already be a DNS-1123 label (the name ends up in Kubernetes object names).
pub fn name_from_dir(dir: &std::path::Path) -> anyhow::Result<String> {
    let absolute =
        std::path::absolute(dir).map_err(|e| anyhow!("reading {}: {e}", dir.display()))?;
    let folder = absolute
        .components()
        .next_back()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    if capi_ext_codegen::naming::validate_dns_label(&folder).is_ok() {
        return Ok(folder);
    }
    let suggestion = capi_ext_codegen::naming::to_dns_label(&folder);
    let hint = if suggestion.is_empty() {
        "pass --name NAME".to_string()
    } else {
        format!("pass --name {suggestion}")
    };
    anyhow::bail!(
        "the directory name `{folder}` is not a DNS-1123 label (lowercase letters, digits and '-', at most 63 characters), and it would name the extension's Kubernetes objects; {hint}"
    )
}

/// The Cluster API release the capi-ext project holding `dir` targets (its capi-ext.toml), if
/// `dir` is in one.
pub fn target(dir: &Path) -> Option<CapiVersion> {
    let root = find_root(dir).ok()?;
    Metadata::read(&root).ok()?.capi().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_names_the_project_when_it_is_a_dns_label() {
        assert_eq!(
            name_from_dir(std::path::Path::new("work/my-ext")).unwrap(),
            "my-ext"
        );
        let err = name_from_dir(std::path::Path::new("work/My_Ext"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`My_Ext` is not a DNS-1123 label") && err.contains("--name my-ext"),
            "{err}"
        );
    }

    #[test]
    fn hook_lookup_explains() {
        let v = CapiVersion::new(1, 11);
        assert!(
            hook_for("BeforeClusterCreat", v)
                .unwrap_err()
                .to_string()
                .contains("Did you mean `BeforeClusterCreate`?")
        );
        let err = hook_for("UpdateMachine", v).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "UpdateMachine was introduced in Cluster API 1.12; Cluster API 1.11 (the target)"
            ),
            "{err}"
        );
        assert!(hook_for("Discovery", v).is_err());
        assert_eq!(
            hook_for("GeneratePatches", v).unwrap().name,
            "GeneratePatches"
        );
    }

    #[test]
    fn metadata_round_trips() {
        let m = Metadata {
            name: "ext".into(),
            namespace: "ext-system".into(),
            capi_version: "1.14".into(),
            cli_version: "0.1.0".into(),
            handlers: vec![HandlerEntry {
                name: "before-create".into(),
                hook: "BeforeClusterCreate".into(),
                module: "before_create".into(),
            }],
            kube: true,
        };
        let dir = std::env::temp_dir().join(format!("capi-ext-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(METADATA_FILE), m.render().unwrap()).unwrap();
        assert_eq!(Metadata::read(&dir).unwrap(), m);
        std::fs::write(dir.join(METADATA_FILE), "[project]\nname = 1\n").unwrap();
        assert!(
            Metadata::read(&dir)
                .unwrap_err()
                .to_string()
                .contains("[project] has no `name` string")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
