//! `capi-ext render`: reading the Cluster, ClusterClass and templates from YAML, calling the
//! extension over HTTPS as CAPI does, and presenting what `capi_ext_render` computed.

use crate::ops::call::{Target, post_async};
use crate::ops::files::{unified_diff, write_atomic};
use anyhow::{Context, bail};
use capi_ext::hooks::v1alpha1::Settings;
use capi_ext_render::{CallError, Caller, Exchange, Input, Rendered};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The files a render reads.
#[derive(Debug, Clone)]
pub struct Files {
    /// Holds exactly one Cluster.
    pub cluster: PathBuf,
    /// Holds exactly one ClusterClass.
    pub cluster_class: PathBuf,
    /// Hold the templates the ClusterClass references.
    pub templates: Vec<PathBuf>,
    /// Hold the ExtensionConfigs the ClusterClass calls, whose `spec.settings` CAPI sends with
    /// each call to their own handlers.
    pub extension_configs: Vec<PathBuf>,
}

impl Files {
    /// The files given, the ones not given taken from the project's `render/` (when `project`
    /// is given): `cluster.yaml`, `clusterclass.yaml`, `templates.yaml`, as `init` writes them.
    pub fn with_project_defaults(
        cluster: Option<PathBuf>,
        cluster_class: Option<PathBuf>,
        templates: Vec<PathBuf>,
        extension_configs: Vec<PathBuf>,
        project: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let render = match project {
            Some(dir) if cluster.is_none() || cluster_class.is_none() || templates.is_empty() => {
                Some(crate::ops::project::find_root(dir)?.join("render"))
            }
            _ => None,
        };
        let default = |given: Option<PathBuf>, file: &str, flag: &str| match (given, &render) {
            (Some(path), _) => Ok(path),
            (None, Some(render)) => {
                let path = render.join(file);
                if path.is_file() {
                    Ok(path)
                } else {
                    bail!(
                        "{}: not there, and --{flag} was not given; give it, or write the project's render/ (a topology project gets it from `capi-ext init` with GeneratePatches)",
                        path.display()
                    )
                }
            }
            (None, None) => bail!("--{flag} FILE is required"),
        };
        Ok(Files {
            cluster: default(cluster, "cluster.yaml", "cluster")?,
            cluster_class: default(cluster_class, "clusterclass.yaml", "clusterclass")?,
            templates: if templates.is_empty() {
                vec![default(None, "templates.yaml", "templates")?]
            } else {
                templates
            },
            extension_configs,
        })
    }
}

/// Every YAML (or JSON) document of a file, `---`-separated; empty documents are skipped.
pub fn read_documents(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    capi_ext_render::documents(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

fn kinds(documents: &[Value]) -> String {
    let kinds: Vec<&str> = documents
        .iter()
        .map(|d| d["kind"].as_str().unwrap_or_default())
        .collect();
    if kinds.is_empty() {
        "nothing".into()
    } else {
        kinds.join(", ")
    }
}

fn only(path: &Path, kind: &str) -> anyhow::Result<Value> {
    let mut documents = read_documents(path)?;
    let count = documents
        .iter()
        .filter(|d| d["kind"].as_str() == Some(kind))
        .count();
    if count != 1 || documents.len() != 1 {
        bail!(
            "{}: expected one {kind}, found {}",
            path.display(),
            kinds(&documents)
        );
    }
    Ok(documents.remove(0))
}

/// The CRDs of `paths` (files or directories) and, with a project, of its `crds/` folder when
/// it has one, Cluster API's built-in CRDs for the kinds they do not cover; `None` when none
/// were asked for (no paths, no `crds/` folder, not `capi`).
pub fn load_crds(
    paths: &[PathBuf],
    project: Option<&Path>,
    capi: bool,
) -> anyhow::Result<Option<std::sync::Arc<capi_ext_render::apiserver::Crds>>> {
    let mut crds = capi_ext_render::apiserver::Crds::default();
    for path in paths {
        let added = crds.add_path(path).map_err(anyhow::Error::msg)?;
        if added == 0 {
            bail!(
                "{}: no CustomResourceDefinition in it (--crds reads the CRDs of the templates' kinds)",
                path.display()
            );
        }
    }
    // The project's crds/ folder counts once it holds a CRD (a new project's has a README).
    if let Some(root) = project.and_then(|dir| crate::ops::project::find_root(dir).ok()) {
        let folder = root.join("crds");
        if folder.is_dir() {
            crds.add_path(&folder).map_err(anyhow::Error::msg)?;
        }
    }
    if crds.is_empty() && !capi {
        return Ok(None);
    }
    crds.fill_from(capi_ext_render::apiserver::Crds::capi());
    Ok(Some(std::sync::Arc::new(crds)))
}

/// Reads the files into a render input; each file must hold what its flag says.
pub fn load(files: &Files) -> anyhow::Result<Input> {
    let mut input = Input {
        cluster: only(&files.cluster, "Cluster")?,
        cluster_class: only(&files.cluster_class, "ClusterClass")?,
        ..Input::default()
    };
    for path in &files.templates {
        for document in read_documents(path)? {
            let kind = document["kind"].as_str().unwrap_or_default();
            if matches!(kind, "Cluster" | "ClusterClass") {
                bail!(
                    "{}: a {kind} among the templates; pass it with --{}",
                    path.display(),
                    kind.to_lowercase()
                );
            }
            input.templates.push(document);
        }
    }
    let mut configs = Vec::new();
    for path in &files.extension_configs {
        let documents = read_documents(path)?;
        if documents.iter().any(|d| d["kind"] != "ExtensionConfig") {
            bail!(
                "{}: expected ExtensionConfigs, found {}",
                path.display(),
                kinds(&documents)
            );
        }
        configs.extend(documents.into_iter().map(|d| (path.clone(), d)));
    }
    input.extension_settings = extension_settings(&configs)?;
    Ok(input)
}

/// The `spec.settings` of ExtensionConfigs by name, each with the file it came from (for
/// errors): CAPI sends each its own handlers. A nameless or repeated ExtensionConfig is an error.
pub fn extension_settings(
    configs: &[(PathBuf, Value)],
) -> anyhow::Result<BTreeMap<String, Settings>> {
    let mut by_name = BTreeMap::new();
    for (path, config) in configs {
        let name = config["metadata"]["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            bail!(
                "{}: an ExtensionConfig without metadata.name; CAPI sends its settings to the handlers named `<handler>.<metadata.name>`",
                path.display()
            );
        }
        if by_name.insert(name.to_string(), settings(config)).is_some() {
            bail!(
                "{}: ExtensionConfig {name} given twice; give each ExtensionConfig once",
                path.display()
            );
        }
    }
    Ok(by_name)
}

/// An ExtensionConfig's `spec.settings`, which CAPI sends with each call.
pub fn settings(extension_config: &Value) -> Settings {
    extension_config
        .pointer("/spec/settings")
        .and_then(Value::as_object)
        .map(|settings| {
            settings
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Calls a running extension over HTTPS, as CAPI does.
#[derive(Debug, Clone)]
pub struct Https(pub Target);

impl Caller for Https {
    async fn call(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>, CallError> {
        let answer = post_async(&self.0, path, body)
            .await
            .map_err(|e| CallError::Transport(format!("{e:#}")))?;
        if answer.status != 200 {
            return Err(CallError::Status {
                status: answer.status,
                body: String::from_utf8_lossy(&answer.body).trim().to_string(),
            });
        }
        Ok(answer.body)
    }
}

/// Several running extensions, as a ClusterClass may call them: the hooks of each
/// ExtensionConfig named in `others` (`<handler>.NAME`) go to its own URL, every other hook to
/// `default`.
#[derive(Debug, Clone)]
pub struct Extensions {
    /// Where the hooks of ExtensionConfigs not in `others` go.
    pub default: Https,
    /// The ExtensionConfigs served elsewhere, by name.
    pub others: BTreeMap<String, Https>,
}

impl Extensions {
    /// `default`, and the ExtensionConfigs of `others` at their own targets.
    pub fn new(default: Target, others: &BTreeMap<String, Target>) -> Self {
        Extensions {
            default: Https(default),
            others: others
                .iter()
                .map(|(name, target)| (name.clone(), Https(target.clone())))
                .collect(),
        }
    }
}

/// Where an ExtensionConfig other than the default one is served (`--extension-url`,
/// `--extension-ca`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherExtension {
    /// Its https:// URL.
    pub url: String,
    /// The CA that signed its serving certificate (its ExtensionConfig's caBundle); `None`:
    /// not given.
    pub ca: Option<PathBuf>,
}

impl OtherExtension {
    /// How to reach it: its URL, its CA (else `default`'s: `render` takes `--ca`'s), the
    /// default extension's client certificate and deadline.
    pub fn target(&self, default: &Target) -> Target {
        Target {
            url: self.url.clone(),
            ca: self.ca.clone().unwrap_or_else(|| default.ca.clone()),
            ..default.clone()
        }
    }
}

/// The `NAME=URL` entries of `--extension-url` and `NAME=FILE` entries of `--extension-ca`, by
/// ExtensionConfig name. An entry without `=`, a URL that is not https://, a name given twice,
/// or a CA for a name no URL is given for is an error saying what to give.
pub fn other_extensions(
    urls: &[String],
    cas: &[String],
) -> anyhow::Result<BTreeMap<String, OtherExtension>> {
    let mut others = BTreeMap::new();
    for entry in urls {
        let Some((name, url)) = entry.split_once('=') else {
            bail!(
                "--extension-url {entry}: give NAME=URL, NAME being the ExtensionConfig the ClusterClass names after the dot of `<handler>.NAME`"
            );
        };
        if name.is_empty() || !url.starts_with("https://") {
            bail!(
                "--extension-url {entry}: give NAME=URL with an https:// URL (CAPI calls extensions over HTTPS only)"
            );
        }
        let other = OtherExtension {
            url: url.to_string(),
            ca: None,
        };
        if others.insert(name.to_string(), other).is_some() {
            bail!("--extension-url: the ExtensionConfig {name} is given twice");
        }
    }
    for entry in cas {
        let Some((name, file)) = entry.split_once('=') else {
            bail!("--extension-ca {entry}: give NAME=FILE, the CA bundle of ExtensionConfig NAME");
        };
        let Some(other) = others.get_mut(name) else {
            bail!(
                "--extension-ca {entry}: no --extension-url {name}=URL says where ExtensionConfig {name} is served"
            );
        };
        if other.ca.replace(PathBuf::from(file)).is_some() {
            bail!("--extension-ca: the ExtensionConfig {name} is given twice");
        }
    }
    Ok(others)
}

impl Caller for Extensions {
    async fn call(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>, CallError> {
        self.default.call(path, body).await
    }

    async fn call_extension(
        &self,
        extension_config: &str,
        path: &str,
        body: Vec<u8>,
    ) -> Result<Vec<u8>, CallError> {
        match self.others.get(extension_config) {
            Some(other) => other.call(path, body).await,
            None => self.default.call(path, body).await,
        }
    }
}

/// Objects as one YAML stream, `---`-separated.
pub fn yaml_stream(objects: &[Value]) -> anyhow::Result<String> {
    let mut out = String::new();
    for object in objects {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(object)?);
    }
    Ok(out)
}

fn object_label(object: &Value) -> String {
    format!(
        "{}/{}",
        object["kind"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// What the patches changed: a unified diff per object (empty when nothing changed).
pub fn diff(rendered: &Rendered) -> anyhow::Result<String> {
    let mut out = String::new();
    for (before, after) in rendered.unpatched.iter().zip(&rendered.objects) {
        if before == after {
            continue;
        }
        out.push_str(&unified_diff(
            &object_label(after),
            &serde_saphyr::to_string(before)?,
            &serde_saphyr::to_string(after)?,
        ));
    }
    Ok(out)
}

/// Writes every request and response as `NN-<hook>-<patch>.{request,response}.json` (no
/// `-<patch>` for GenerateUpgradePlan) into `dir`,
/// ready for `capi-ext call -f`. Returns the files written.
pub fn write_exchanges(dir: &Path, exchanges: &[Exchange]) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for (i, exchange) in exchanges.iter().enumerate() {
        for (part, value) in [
            ("request", &exchange.request),
            ("response", &exchange.response),
        ] {
            // GenerateUpgradePlan serves no patch.
            let path = match exchange.patch.as_str() {
                "" => dir.join(format!("{:02}-{}.{part}.json", i + 1, exchange.hook)),
                patch => dir.join(format!(
                    "{:02}-{}-{patch}.{part}.json",
                    i + 1,
                    exchange.hook
                )),
            };
            write_atomic(&path, &(serde_json::to_string_pretty(value)? + "\n"))?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_extensions_are_name_equals_https_url_each_name_once_with_an_optional_ca() {
        let strings = |entries: &[&str]| entries.iter().map(|e| e.to_string()).collect::<Vec<_>>();
        let others = other_extensions(
            &strings(&[
                "lifecycle=https://127.0.0.1:9444/x",
                "plan=https://127.0.0.1:9445",
            ]),
            &strings(&["plan=plan-ca.crt"]),
        )
        .unwrap();
        assert_eq!(others["lifecycle"].url, "https://127.0.0.1:9444/x");
        assert_eq!(others["lifecycle"].ca, None);
        assert_eq!(others["plan"].ca, Some(PathBuf::from("plan-ca.crt")));
        let error = |urls: &[&str], cas: &[&str]| {
            other_extensions(&strings(urls), &strings(cas))
                .unwrap_err()
                .to_string()
        };
        assert!(error(&["https://127.0.0.1:9444"], &[]).contains("give NAME=URL"));
        assert!(error(&["lifecycle=http://127.0.0.1:9444"], &[]).contains("https:// URL"));
        assert!(error(&["=https://127.0.0.1:9444"], &[]).contains("https:// URL"));
        assert!(
            error(&["a=https://127.0.0.1:1", "a=https://127.0.0.1:2"], &[])
                .contains("the ExtensionConfig a is given twice")
        );
        assert!(
            error(&["a=https://127.0.0.1:1"], &["b=ca.crt"])
                .contains("no --extension-url b=URL says where ExtensionConfig b is served")
        );
        assert!(error(&["a=https://127.0.0.1:1"], &["a"]).contains("give NAME=FILE"));
    }

    #[test]
    fn other_extension_configs_reach_their_url_with_the_default_credentials() {
        let default = Target {
            url: "https://127.0.0.1:9443".into(),
            ca: "ca.crt".into(),
            identity: Some(("c.crt".into(), "c.key".into())),
            timeout: std::time::Duration::from_secs(3),
        };
        let others = other_extensions(
            &[
                "lifecycle=https://127.0.0.1:9444".to_string(),
                "plan=https://127.0.0.1:9445".to_string(),
            ],
            &["plan=plan-ca.crt".to_string()],
        )
        .unwrap();
        let targets = others
            .iter()
            .map(|(name, other)| (name.clone(), other.target(&default)))
            .collect();
        let extensions = Extensions::new(default, &targets);
        let lifecycle = &extensions.others["lifecycle"].0;
        assert_eq!(lifecycle.url, "https://127.0.0.1:9444");
        assert_eq!(lifecycle.ca, PathBuf::from("ca.crt"));
        assert_eq!(lifecycle.identity, extensions.default.0.identity);
        assert_eq!(extensions.others["plan"].0.ca, PathBuf::from("plan-ca.crt"));
        assert_eq!(extensions.default.0.url, "https://127.0.0.1:9443");
    }

    fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn exchanges_are_named_by_order_hook_and_patch() {
        let dir =
            std::env::temp_dir().join(format!("capi-ext-render-exchanges-{}", std::process::id()));
        let exchange = |hook, patch: &str| Exchange {
            hook,
            patch: patch.into(),
            handler: "h".into(),
            request: serde_json::json!({"n": 1}),
            response: serde_json::json!({"status": "Success"}),
        };
        let written = write_exchanges(
            &dir,
            &[
                exchange("GenerateUpgradePlan", ""),
                exchange("GeneratePatches", "p1"),
            ],
        )
        .unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "01-GenerateUpgradePlan.request.json",
                "01-GenerateUpgradePlan.response.json",
                "02-GeneratePatches-p1.request.json",
                "02-GeneratePatches-p1.response.json"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_file_must_hold_its_kind() {
        let dir = std::env::temp_dir().join(format!("capi-ext-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cluster = file(
            &dir,
            "cluster.yaml",
            "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: c1}\n",
        );
        let class = file(
            &dir,
            "class.yaml",
            "kind: ClusterClass\nmetadata: {name: k}\n---\n",
        );
        let files = Files {
            cluster: class.clone(),
            cluster_class: cluster.clone(),
            templates: vec![],
            extension_configs: Vec::new(),
        };
        let err = load(&files).unwrap_err().to_string();
        assert!(
            err.ends_with("class.yaml: expected one Cluster, found ClusterClass"),
            "{err}"
        );
        let files = Files {
            cluster: cluster.clone(),
            cluster_class: class.clone(),
            templates: vec![cluster.clone()],
            extension_configs: Vec::new(),
        };
        let err = load(&files).unwrap_err().to_string();
        assert!(
            err.contains("a Cluster among the templates; pass it with --cluster"),
            "{err}"
        );
        let broken = file(&dir, "broken.yaml", "kind: [\n");
        let err = read_documents(&broken).unwrap_err().to_string();
        assert!(err.contains("broken.yaml: not valid YAML"), "{err}");
        let kindless = file(&dir, "kindless.yaml", "a: 1\n");
        let err = read_documents(&kindless).unwrap_err().to_string();
        assert!(
            err.contains("kindless.yaml: document 1 has no `kind`"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_extension_config_s_settings_go_to_its_own_handlers() {
        let dir = std::env::temp_dir().join(format!("capi-ext-render-ec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cluster = file(
            &dir,
            "cluster.yaml",
            "kind: Cluster\nmetadata: {name: c1}\n",
        );
        let class = file(
            &dir,
            "class.yaml",
            "kind: ClusterClass\nmetadata: {name: k}\nspec:\n  patches: [{name: p, external: {generatePatchesExtension: patches.topology}}]\n  upgrade: {external: {generateUpgradePlanExtension: plan.lifecycle}}\n",
        );
        let config = |name: &str, value: &str| {
            format!(
                "kind: ExtensionConfig\nmetadata: {{name: {name}}}\nspec: {{settings: {{owner: {value}}}}}\n"
            )
        };
        let files = |configs: &[&str]| Files {
            cluster: cluster.clone(),
            cluster_class: class.clone(),
            templates: vec![],
            extension_configs: configs.iter().map(|c| dir.join(c)).collect(),
        };
        file(
            &dir,
            "both.yaml",
            &format!(
                "{}---\n{}",
                config("topology", "t"),
                config("lifecycle", "l")
            ),
        );
        let input = load(&files(&["both.yaml"])).unwrap();
        assert_eq!(input.registration_settings("topology")["owner"], "t");
        assert_eq!(input.registration_settings("lifecycle")["owner"], "l");
        assert!(input.settings.is_empty());

        file(&dir, "other.yaml", &config("other", "o"));
        // One the class does not call is read; render warns that its settings go nowhere.
        let input = load(&files(&["both.yaml", "other.yaml"])).unwrap();
        assert!(
            input.uncalled_extension_configs()[0]
                .starts_with("ExtensionConfig other: the ClusterClass calls no handler of it (it calls lifecycle, topology)")
        );
        let err = load(&files(&["both.yaml", "both.yaml"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ExtensionConfig topology given twice"),
            "{err}"
        );
        file(
            &dir,
            "nameless.yaml",
            "kind: ExtensionConfig\nspec: {settings: {a: b}}\n",
        );
        let err = load(&files(&["nameless.yaml"])).unwrap_err().to_string();
        assert!(
            err.contains("nameless.yaml: an ExtensionConfig without metadata.name"),
            "{err}"
        );
        let err = load(&files(&["class.yaml"])).unwrap_err().to_string();
        assert!(
            err.contains("class.yaml: expected ExtensionConfigs, found ClusterClass"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
