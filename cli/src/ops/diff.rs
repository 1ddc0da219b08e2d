//! `capi-ext diff`: two versions of an extension (git revisions of the project, or running
//! extensions) rendered over the same Clusters, and what CAPI would do with every difference.

use crate::ops::call::Target;
use crate::ops::local::{LocalExtension, target_directory};
use crate::ops::render::{Https, read_documents, settings};
use crate::ops::worktree::Worktree;
use anyhow::{Context, bail};
use capi_ext_render::change::{ObjectChange, Rollout, compare};
use capi_ext_render::{Caller, Input, RenderError, Rendered};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file the render output is kept in (`render --output`); not an input.
const RENDERED_FILE: &str = "rendered.yaml";

/// One Cluster to render, with its ClusterClass, templates and settings.
#[derive(Debug, Clone)]
pub struct Case {
    /// `namespace/name`.
    pub cluster: String,
    /// The file the Cluster is in.
    pub file: PathBuf,
    /// What render needs.
    pub input: Input,
}

fn is_input(path: &Path) -> bool {
    path.is_file()
        && path.file_name().and_then(|n| n.to_str()) != Some(RENDERED_FILE)
        && matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        )
}

/// `path` relative to the current directory when it is below it, for messages.
fn relative(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
}

/// The Clusters under `dir`: every directory (`dir` and those below it) is read as one set of
/// objects (all its `.yaml`, `.yml` and `.json` files but `rendered.yaml`, the render output),
/// and each Cluster in it is a case, rendered with the ClusterClass it names, the other objects
/// of its directory as templates and current objects, and its ExtensionConfig's settings.
pub fn read_cases(dir: &Path) -> anyhow::Result<Vec<Case>> {
    if !dir.is_dir() {
        bail!(
            "{}: no such directory; give the Clusters to compare with --cases DIR (a folder of Clusters with their ClusterClass and templates, like the project's render/)",
            dir.display()
        );
    }
    let mut directories: BTreeMap<PathBuf, Vec<(PathBuf, Value)>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let path = entry.path();
        if !is_input(path) {
            continue;
        }
        let parent = path.parent().unwrap_or(dir).to_path_buf();
        for document in read_documents(path)? {
            directories
                .entry(parent.clone())
                .or_default()
                .push((path.to_path_buf(), document));
        }
    }
    let mut cases = Vec::new();
    for (directory, documents) in directories {
        let kind = |d: &Value| d["kind"].as_str().unwrap_or_default().to_string();
        let namespace = |d: &Value| {
            d.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_string()
        };
        let name = |d: &Value| {
            d.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let templates: Vec<Value> = documents
            .iter()
            .filter(|(_, d)| !matches!(kind(d).as_str(), "Cluster" | "ClusterClass"))
            .filter(|(_, d)| kind(d) != "ExtensionConfig")
            .map(|(_, d)| d.clone())
            .collect();
        let extension_settings = documents
            .iter()
            .find(|(_, d)| kind(d) == "ExtensionConfig")
            .map(|(_, d)| settings(d))
            .unwrap_or_default();
        let classes: Vec<&Value> = documents
            .iter()
            .filter(|(_, d)| kind(d) == "ClusterClass")
            .map(|(_, d)| d)
            .collect();
        for (file, cluster) in documents.iter().filter(|(_, d)| kind(d) == "Cluster") {
            let label = format!("{}/{}", namespace(cluster), name(cluster));
            let class_name = cluster
                .pointer("/spec/topology/classRef/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let class_namespace = cluster
                .pointer("/spec/topology/classRef/namespace")
                .and_then(Value::as_str)
                .map_or_else(|| namespace(cluster), str::to_string);
            let Some(class) = classes
                .iter()
                .find(|c| name(c) == class_name && namespace(c) == class_namespace)
            else {
                let known: Vec<String> = classes
                    .iter()
                    .map(|c| format!("{}/{}", namespace(c), name(c)))
                    .collect();
                bail!(
                    "{}: Cluster {label} names ClusterClass {class_namespace}/{class_name}, which is not in {} (ClusterClasses there: {}); put it next to the Cluster",
                    file.display(),
                    directory.display(),
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                );
            };
            cases.push(Case {
                cluster: label,
                file: relative(file),
                input: Input {
                    cluster: cluster.clone(),
                    cluster_class: (*class).clone(),
                    templates: templates.clone(),
                    settings: extension_settings.clone(),
                    capi_version: None,
                },
            });
        }
    }
    if cases.is_empty() {
        bail!(
            "{}: no Cluster in any YAML file there; diff renders each Cluster (with spec.topology) it finds, next to its ClusterClass and templates",
            dir.display()
        );
    }
    Ok(cases)
}

/// A version of the extension.
#[derive(Debug, Clone, PartialEq)]
pub enum Version {
    /// The project as it is on disk.
    Tree,
    /// A git revision of the project (a branch, tag or commit).
    Revision(String),
    /// A running extension.
    Url {
        /// Its URL.
        url: String,
        /// The CA that signed its serving certificate.
        ca: PathBuf,
    },
}

impl Version {
    /// `--base`/`--head`: an `https://` URL (with its CA) or a git revision; `None` is `default`.
    pub fn parse(
        flag: &str,
        value: Option<&str>,
        ca: Option<PathBuf>,
        default: Version,
    ) -> anyhow::Result<Self> {
        match (value, ca) {
            (Some(url), Some(ca)) if url.starts_with("https://") => Ok(Version::Url {
                url: url.to_string(),
                ca,
            }),
            (Some(url), None) if url.starts_with("https://") => bail!(
                "--{flag} {url} is a running extension: say which CA signed its certificate with --{flag}-ca FILE"
            ),
            (Some(url), _) if url.starts_with("http://") => {
                bail!("--{flag} {url}: CAPI only calls extensions over https")
            }
            (_, Some(_)) => bail!("--{flag}-ca goes with --{flag} https://…"),
            (Some(revision), None) => Ok(Version::Revision(revision.to_string())),
            (None, None) => Ok(default),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Version::Tree => f.write_str("the working tree"),
            Version::Revision(revision) => write!(f, "{revision}"),
            Version::Url { url, .. } => f.write_str(url),
        }
    }
}

/// Every case rendered by one version.
#[derive(Debug)]
pub struct Renders {
    /// The version, as the user named it (a revision with its commit).
    pub version: String,
    /// One result per case, in order.
    pub results: Vec<Result<Rendered, RenderError>>,
}

/// Where the extension of a version runs while the cases render; stopped (and its worktree
/// removed) when dropped.
struct Running {
    target: Target,
    // Field order: the extension stops before its worktree goes.
    _local: Option<LocalExtension>,
    _worktree: Option<Worktree>,
}

fn start(
    version: &Version,
    side: &str,
    project: &Path,
    timeout: Duration,
    status: &dyn Fn(&str, &str),
) -> anyhow::Result<(Running, String)> {
    match version {
        Version::Url { url, ca } => Ok((
            Running {
                target: Target {
                    url: url.clone(),
                    ca: ca.clone(),
                    identity: None,
                    timeout,
                },
                _local: None,
                _worktree: None,
            },
            url.clone(),
        )),
        Version::Tree => {
            status(
                "Building",
                &format!("the working tree ({})", project.display()),
            );
            let local = LocalExtension::start(project, timeout)?;
            Ok((
                Running {
                    target: local.target.clone(),
                    _local: Some(local),
                    _worktree: None,
                },
                "the working tree".into(),
            ))
        }
        Version::Revision(revision) => {
            let worktree = Worktree::add(project, revision)?;
            let name = format!("{revision} ({})", &worktree.commit[..12]);
            status("Building", &name);
            // A target directory per side next to the project's, kept between runs: cargo gives
            // the same project in another checkout the same artifact names, so sharing one
            // would mix the builds of two checkouts; dependencies are built there once.
            let target_dir = target_directory(project)?.join("capi-ext-diff").join(side);
            let local =
                LocalExtension::start_building_in(&worktree.project, timeout, Some(&target_dir))?;
            Ok((
                Running {
                    target: local.target.clone(),
                    _local: Some(local),
                    _worktree: Some(worktree),
                },
                name,
            ))
        }
    }
}

/// Builds or reaches `version` of the extension (`side`: `base` or `head`, each revision built
/// in a target directory of its own) and renders every case through it. Errors (a failed
/// build, an unreachable extension) mean there is nothing to compare.
pub fn render_version(
    version: &Version,
    side: &str,
    project: &Path,
    cases: &[Case],
    timeout: Duration,
    status: &dyn Fn(&str, &str),
) -> anyhow::Result<Renders> {
    let (running, name) = start(version, side, project, timeout, status)?;
    let caller = Https(running.target.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(caller.call(
            "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery",
            b"{}".to_vec(),
        ))
        .map_err(|e| anyhow::anyhow!("{name}: Discovery failed: {e}"))?;
    let results = cases
        .iter()
        .map(|case| runtime.block_on(capi_ext_render::render(&case.input, &caller)))
        .collect();
    status("Rendered", &format!("{} Clusters with {name}", cases.len()));
    Ok(Renders {
        version: name,
        results,
    })
}

/// What a new version does to one Cluster.
#[derive(Debug)]
pub enum Outcome {
    /// The same objects.
    Unchanged,
    /// These objects change.
    Changed(Vec<ObjectChange>),
    /// It rendered with the base and does not with the head: CAPI's reconcile of the Cluster
    /// would fail (or the Cluster would be rejected).
    Breaks(String),
    /// It did not render with the base and does with the head.
    Fixed(String),
    /// The base does not serve a handler its ClusterClass calls (HTTP 404), the head does: a
    /// new handler (a new version of one), which no running Cluster calls yet.
    New(String),
    /// It renders with neither: the case itself is wrong.
    Fails(String),
}

/// One Cluster's result.
#[derive(Debug)]
pub struct ClusterDiff {
    /// `namespace/name`.
    pub cluster: String,
    /// Where it is.
    pub file: PathBuf,
    /// What happens to it.
    pub outcome: Outcome,
    /// What the head's render warns about (metadata the targeted CAPI drops).
    pub warnings: Vec<String>,
}

impl ClusterDiff {
    /// The strongest rollout of its changes.
    pub fn rollout(&self) -> Rollout {
        match &self.outcome {
            Outcome::Changed(changes) => changes
                .iter()
                .map(ObjectChange::rollout)
                .max()
                .unwrap_or(Rollout::No),
            _ => Rollout::No,
        }
    }

    /// What replaces Machines, each once (`MachineDeployment md-0`, `the control plane`).
    pub fn rolls_out(&self) -> Vec<String> {
        let mut out: Vec<String> = match &self.outcome {
            Outcome::Changed(changes) => changes.iter().filter_map(|c| c.rolls_out()).collect(),
            _ => Vec::new(),
        };
        out.dedup();
        out
    }
}

/// The whole comparison.
#[derive(Debug)]
pub struct Report {
    /// The base version's name.
    pub base: String,
    /// The head version's name.
    pub head: String,
    /// One entry per case.
    pub clusters: Vec<ClusterDiff>,
}

impl Report {
    /// Compares the renders of each case.
    pub fn new(cases: &[Case], base: Renders, head: Renders) -> Self {
        let clusters = cases
            .iter()
            .zip(base.results)
            .zip(head.results)
            .map(|((case, before), after)| ClusterDiff {
                cluster: case.cluster.clone(),
                file: case.file.clone(),
                warnings: after
                    .as_ref()
                    .map(|r| r.warnings.clone())
                    .unwrap_or_default(),
                outcome: match (before, after) {
                    (Ok(before), Ok(after)) => {
                        let changes = compare(&before, &after);
                        if changes.is_empty() {
                            Outcome::Unchanged
                        } else {
                            Outcome::Changed(changes)
                        }
                    }
                    (Ok(_), Err(e)) => Outcome::Breaks(e.to_string()),
                    (Err(e @ RenderError::Call { .. }), Ok(_))
                        if e.to_string().contains("HTTP 404") =>
                    {
                        Outcome::New(e.to_string())
                    }
                    (Err(e), Ok(_)) => Outcome::Fixed(e.to_string()),
                    (Err(_), Err(e)) => Outcome::Fails(e.to_string()),
                },
            })
            .collect();
        Report {
            base: base.version,
            head: head.version,
            clusters,
        }
    }

    /// 2 when a case renders with neither version; 1 when a Cluster breaks or Machines would
    /// (or may) be replaced and that was not allowed; else 0.
    pub fn exit_code(&self, allow_rollout: bool) -> u8 {
        let any = |f: &dyn Fn(&ClusterDiff) -> bool| self.clusters.iter().any(f);
        if any(&|c| matches!(c.outcome, Outcome::Fails(_))) {
            2
        } else if any(&|c| matches!(c.outcome, Outcome::Breaks(_)))
            || (!allow_rollout && any(&|c| c.rollout() != Rollout::No))
        {
            1
        } else {
            0
        }
    }

    /// The report for people: per Cluster what changes, why and what CAPI does, then a summary.
    pub fn human(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Comparing {} (base) with {} (head)",
            self.base, self.head
        );
        for cluster in &self.clusters {
            let at = format!("Cluster {} ({})", cluster.cluster, cluster.file.display());
            for warning in &cluster.warnings {
                let _ = writeln!(out, "\nwarning: Cluster {}: {warning}", cluster.cluster);
            }
            match &cluster.outcome {
                Outcome::Unchanged => {
                    let _ = writeln!(out, "\n{at}: unchanged");
                }
                Outcome::Breaks(e) => {
                    let _ = writeln!(
                        out,
                        "\n{at}: BREAKS: rendered with the base, fails with the head (CAPI's reconcile of it would fail):\n  {e}"
                    );
                }
                Outcome::Fixed(e) => {
                    let _ = writeln!(
                        out,
                        "\n{at}: fixed: failed with the base, renders with the head (it failed with: {e})"
                    );
                }
                Outcome::Fails(e) => {
                    let _ = writeln!(out, "\n{at}: renders with neither version:\n  {e}");
                }
                Outcome::New(e) => {
                    let _ = writeln!(
                        out,
                        "\n{at}: new: its ClusterClass calls a handler only the head serves, so no Cluster runs it yet (the base answered: {e})"
                    );
                }
                Outcome::Changed(changes) => {
                    let rolls = cluster.rolls_out();
                    let _ = writeln!(
                        out,
                        "\n{at}: {}; {}",
                        if changes.len() == 1 {
                            "1 object changes".to_string()
                        } else {
                            format!("{} objects change", changes.len())
                        },
                        match cluster.rollout() {
                            Rollout::No => "no Machine is replaced".to_string(),
                            Rollout::Yes => format!("Machines roll out: {}", rolls.join(", ")),
                            Rollout::ProviderDecides =>
                                format!("Machines may roll out: {}", rolls.join(", ")),
                        }
                    );
                    for change in changes {
                        let _ = writeln!(
                            out,
                            "  {} {} ({})\n    {}",
                            change.kind,
                            change.name,
                            change.role,
                            change.consequence()
                        );
                        for field in &change.fields {
                            out.push_str(&field_lines(
                                &field.path,
                                field.before.as_ref(),
                                field.after.as_ref(),
                            ));
                        }
                    }
                }
            }
        }
        let count =
            |f: &dyn Fn(&ClusterDiff) -> bool| self.clusters.iter().filter(|c| f(c)).count();
        let changed = count(&|c| matches!(c.outcome, Outcome::Changed(_)));
        let breaks = count(&|c| matches!(c.outcome, Outcome::Breaks(_)));
        let rolling: Vec<String> = self
            .clusters
            .iter()
            .filter(|c| c.rollout() != Rollout::No)
            .map(|c| format!("{} ({})", c.cluster, c.rolls_out().join(", ")))
            .collect();
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let may = self
            .clusters
            .iter()
            .any(|c| c.rollout() == Rollout::ProviderDecides);
        let _ = writeln!(
            out,
            "\nSummary: {}: {changed} changed, {breaks} broken; Machines {} in {}{}",
            plural(self.clusters.len(), "Cluster"),
            if may {
                "replaced (or maybe)"
            } else {
                "replaced"
            },
            plural(rolling.len(), "Cluster"),
            if rolling.is_empty() {
                String::new()
            } else {
                format!(": {}", rolling.join("; "))
            }
        );
        out
    }

    /// The report as JSON, for tools.
    pub fn json(&self) -> Value {
        let clusters: Vec<Value> = self
            .clusters
            .iter()
            .map(|cluster| {
                let (outcome, error, objects) = match &cluster.outcome {
                    Outcome::Unchanged => ("unchanged", None, Vec::new()),
                    Outcome::Changed(changes) => (
                        "changed",
                        None,
                        changes
                            .iter()
                            .map(|c| {
                                json!({
                                    "kind": c.kind,
                                    "name": c.name,
                                    "role": c.role.to_string(),
                                    "effect": c.effect.name(),
                                    "rollout": c.rollout().name(),
                                    "rollsOut": c.rolls_out(),
                                    "consequence": c.consequence(),
                                    "fields": c.fields.iter().map(|f| json!({
                                        "path": f.path,
                                        "before": f.before,
                                        "after": f.after,
                                        "effect": f.effect.name(),
                                    })).collect::<Vec<_>>(),
                                })
                            })
                            .collect(),
                    ),
                    Outcome::Breaks(e) => ("breaks", Some(e), Vec::new()),
                    Outcome::Fixed(e) => ("fixed", Some(e), Vec::new()),
                    Outcome::New(e) => ("new", Some(e), Vec::new()),
                    Outcome::Fails(e) => ("fails", Some(e), Vec::new()),
                };
                json!({
                    "cluster": cluster.cluster,
                    "file": cluster.file,
                    "outcome": outcome,
                    "rollout": cluster.rollout().name(),
                    "rollsOut": cluster.rolls_out(),
                    "error": error,
                    "warnings": cluster.warnings,
                    "objects": objects,
                })
            })
            .collect();
        json!({"base": self.base, "head": self.head, "clusters": clusters})
    }
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "(absent)".into(),
        Some(value) => {
            let text = value.to_string();
            if text.chars().count() > 100 {
                format!("{}…", text.chars().take(100).collect::<String>())
            } else {
                text
            }
        }
    }
}

/// One changed field: `path: before → after`, or a line diff for multi-line strings.
fn field_lines(path: &str, before: Option<&Value>, after: Option<&Value>) -> String {
    if let (Some(Value::String(a)), Some(Value::String(b))) = (before, after)
        && (a.contains('\n') || b.contains('\n'))
    {
        let mut out = format!("    {path}:\n");
        for change in similar::TextDiff::from_lines(a, b).iter_all_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Equal => continue,
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
            };
            let _ = writeln!(
                out,
                "      {sign} {}",
                change.value().trim_end_matches('\n')
            );
        }
        return out;
    }
    format!("    {path}: {} → {}\n", shown(before), shown(after))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("capi-ext-diff-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const CLASS: &str = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: ClusterClass\nmetadata: {name: k, namespace: ns}\n";

    fn cluster(name: &str, class: &str) -> String {
        format!(
            "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {{name: {name}, namespace: ns}}\nspec: {{topology: {{classRef: {{name: {class}}}, version: v1.34.0}}}}\n"
        )
    }

    #[test]
    fn cases_are_the_clusters_of_each_directory() {
        let root = dir("cases");
        std::fs::write(root.join("class.yaml"), CLASS).unwrap();
        std::fs::write(
            root.join("clusters.yaml"),
            format!("{}---\n{}", cluster("a", "k"), cluster("b", "k")),
        )
        .unwrap();
        std::fs::write(
            root.join("rendered.yaml"),
            "kind: Cluster\nmetadata: {name: ignored}\n",
        )
        .unwrap();
        std::fs::create_dir(root.join("fleet")).unwrap();
        std::fs::write(
            root.join("fleet/all.yaml"),
            format!(
                "{CLASS}---\n{}---\nkind: ExtensionConfig\nspec: {{settings: {{s: v}}}}\n---\nkind: T\nmetadata: {{name: t}}\n",
                cluster("c", "k")
            ),
        )
        .unwrap();
        let cases = read_cases(&root).unwrap();
        let names: Vec<&str> = cases.iter().map(|c| c.cluster.as_str()).collect();
        assert_eq!(names, ["ns/a", "ns/b", "ns/c"]);
        assert_eq!(cases[2].input.settings["s"], "v");
        assert_eq!(cases[2].input.templates.len(), 1);
        assert!(cases[0].input.templates.is_empty());

        std::fs::write(root.join("fleet/other.yaml"), cluster("d", "missing")).unwrap();
        let err = read_cases(&root).unwrap_err().to_string();
        assert!(
            err.contains("other.yaml: Cluster ns/d names ClusterClass ns/missing, which is not in")
                && err.contains("(ClusterClasses there: ns/k)"),
            "{err}"
        );
        let empty = dir("empty");
        let err = read_cases(&empty).unwrap_err().to_string();
        assert!(err.contains("no Cluster in any YAML file there"), "{err}");
        let err = read_cases(&empty.join("nope")).unwrap_err().to_string();
        assert!(err.contains("no such directory"), "{err}");
        std::fs::remove_dir_all(root).unwrap();
        std::fs::remove_dir_all(empty).unwrap();
    }

    #[test]
    fn versions_are_revisions_or_https_urls_with_a_ca() {
        let parse = |value: Option<&str>, ca: Option<&str>| {
            Version::parse("base", value, ca.map(PathBuf::from), Version::Tree)
        };
        assert_eq!(parse(None, None).unwrap(), Version::Tree);
        assert_eq!(
            parse(Some("origin/main"), None).unwrap(),
            Version::Revision("origin/main".into())
        );
        assert!(matches!(
            parse(Some("https://127.0.0.1:9443"), Some("ca.crt")).unwrap(),
            Version::Url { .. }
        ));
        let err = parse(Some("https://x"), None).unwrap_err().to_string();
        assert!(err.contains("--base-ca FILE"), "{err}");
        let err = parse(Some("http://x"), None).unwrap_err().to_string();
        assert!(err.contains("only calls extensions over https"), "{err}");
        let err = parse(Some("main"), Some("ca.crt")).unwrap_err().to_string();
        assert!(err.contains("--base-ca goes with --base https://"), "{err}");
    }

    #[test]
    fn multi_line_strings_show_as_line_diffs() {
        let lines = field_lines(
            "spec.files[0].content",
            Some(&json!("a\nb\n")),
            Some(&json!("a\nc\n")),
        );
        assert_eq!(lines, "    spec.files[0].content:\n      - b\n      + c\n");
        assert_eq!(
            field_lines("spec.x", None, Some(&json!(1))),
            "    spec.x: (absent) → 1\n"
        );
    }
}
