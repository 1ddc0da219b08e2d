//! The Clusters `diff` renders: every Cluster of a folder of YAML files, with the ClusterClass,
//! templates and ExtensionConfig of its directory.

use crate::ops::render::{extension_settings, read_documents};
use anyhow::{Context, bail};
use capi_ext_render::Input;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file the render output is kept in (`render --output`); not an input.
const RENDERED_FILE: &str = "rendered.yaml";

/// One Cluster to render, with its ClusterClass, templates and settings.
#[derive(Debug, Clone)]
pub struct Case {
    /// `namespace/name`.
    pub cluster: String,
    /// The file the Cluster is in, as shown in messages.
    pub file: PathBuf,
    /// The file relative to the folder of cases: with the Cluster's name, what tells the same
    /// case apart in two revisions.
    pub key: PathBuf,
    /// What render needs.
    pub input: Input,
}

impl Case {
    /// Whether `other` renders the same Cluster from the same objects (the Cluster, its
    /// ClusterClass, templates and settings).
    pub fn same_inputs(&self, other: &Case) -> bool {
        let (a, b) = (&self.input, &other.input);
        a.cluster == b.cluster
            && a.cluster_class == b.cluster_class
            && a.templates == b.templates
            && a.settings == b.settings
            && a.extension_settings == b.extension_settings
    }

    /// The Cluster's ClusterClass, `namespace/name`.
    pub fn class(&self) -> String {
        let class = &self.input.cluster_class;
        format!(
            "{}/{}",
            class
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("default"),
            class
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
        )
    }
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
pub fn relative(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .map_or_else(|| path.to_path_buf(), Path::to_path_buf)
}

/// The Clusters under `dir`: every directory (`dir` and those below it) is read as one set of
/// objects (all its `.yaml`, `.yml` and `.json` files but `rendered.yaml`, the render output),
/// and each Cluster in it is a case, rendered with the ClusterClass it names, the other objects
/// of its directory as templates and current objects, and the settings of its ExtensionConfigs.
pub fn read_cases(dir: &Path) -> anyhow::Result<Vec<Case>> {
    read_cases_shown_as(dir, &relative(dir))
}

/// The Clusters with a topology of a management cluster (of a namespace and a label selector,
/// or all), each as `render --kubeconfig` reads it: its ClusterClass, templates, current
/// objects and the settings of the ExtensionConfigs its class calls. Shown as `namespace/name (live)`.
pub fn live_cases(live: super::Live) -> anyhow::Result<Vec<Case>> {
    let super::Live {
        kube,
        namespace,
        selector,
    } = live;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut cases = Vec::new();
        for (ns, name) in crate::ops::kube::topology_clusters(kube, namespace, selector).await? {
            let (input, _) = crate::ops::kube::render_input(kube, &ns, &name)
                .await
                .with_context(|| format!("reading Cluster {ns}/{name}"))?;
            let key = PathBuf::from(format!("{ns}/{name} (live)"));
            cases.push(Case {
                cluster: format!("{ns}/{name}"),
                file: key.clone(),
                key,
                input,
            });
        }
        if cases.is_empty() {
            bail!(
                "no Cluster with spec.topology {}{}: nothing that exists for diff to judge",
                namespace.map_or_else(
                    || "in any namespace".to_string(),
                    |ns| format!("in namespace {ns}")
                ),
                selector
                    .map(|s| format!(" matching `{s}`"))
                    .unwrap_or_default()
            );
        }
        Ok(cases)
    })
}

/// [`read_cases`], with the files shown below `shown` instead of `dir` (the cases of a git
/// revision, read from its temporary worktree, are shown where they are in the project).
pub fn read_cases_shown_as(dir: &Path, shown: &Path) -> anyhow::Result<Vec<Case>> {
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
        let configs: Vec<(PathBuf, Value)> = documents
            .iter()
            .filter(|(_, d)| kind(d) == "ExtensionConfig")
            .cloned()
            .collect();
        let extension_settings = extension_settings(&configs)?;
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
            let key = file.strip_prefix(dir).unwrap_or(file).to_path_buf();
            cases.push(Case {
                cluster: label,
                file: shown.join(&key),
                key,
                input: Input {
                    cluster: cluster.clone(),
                    cluster_class: (*class).clone(),
                    templates: templates.clone(),
                    extension_settings: extension_settings.clone(),
                    ..Input::default()
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
                "{CLASS}---\n{}---\nkind: ExtensionConfig\nmetadata: {{name: e}}\nspec: {{settings: {{s: v}}}}\n---\nkind: T\nmetadata: {{name: t}}\n",
                cluster("c", "k")
            ),
        )
        .unwrap();
        let cases = read_cases(&root).unwrap();
        let names: Vec<&str> = cases.iter().map(|c| c.cluster.as_str()).collect();
        assert_eq!(names, ["ns/a", "ns/b", "ns/c"]);
        assert_eq!(cases[2].input.extension_settings["e"]["s"], "v");
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
}
