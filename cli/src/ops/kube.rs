//! A read-only client of a management cluster, from a kubeconfig: what `render --kubeconfig`
//! reads of a live Cluster (the Cluster, its ClusterClass and templates, its current
//! ControlPlane, MachineDeployments and MachinePools, the ExtensionConfig's settings).

use anyhow::{Context, anyhow};
use capi_ext_render::Input;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

const CLUSTER_V: &str = "cluster.x-k8s.io/v1beta2";
const RUNTIME_V: &str = "runtime.cluster.x-k8s.io/v1beta2";
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// A connection to the API server of a kubeconfig's context, through kube-rs: client
/// certificates, tokens and token files, exec credential plugins (EKS, GKE, AKS) and proxies
/// work as they do in kubectl.
pub struct Kube {
    client: kube::Client,
    server: String,
    /// `apiVersion/kind` → (resource, namespaced), from API discovery.
    resources: Mutex<BTreeMap<String, (String, bool)>>,
    /// The client's connections and exec plugin run here; its callers may run on runtimes of
    /// their own, one after another.
    _runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Kube {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kube")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Kube {
    /// Reads the kubeconfig's `context` (its current context when `None`). Paths in it are
    /// relative to its directory.
    pub fn from_kubeconfig(
        path: &Path,
        context: Option<&str>,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let kubeconfig = Kubeconfig::read_from(path)
            .map_err(|e| anyhow!("{}: not a kubeconfig: {e}", path.display()))?;
        let context_name = match context {
            Some(c) => c.to_string(),
            None => kubeconfig
                .current_context
                .clone()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| {
                    anyhow!(
                        "{}: no current-context; name one with --context",
                        path.display()
                    )
                })?,
        };
        if !kubeconfig.contexts.iter().any(|c| c.name == context_name) {
            let known: Vec<&str> = kubeconfig
                .contexts
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            return Err(anyhow!(
                "{}: no context named `{context_name}` (it has {})",
                path.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        }
        let options = KubeConfigOptions {
            context: Some(context_name.clone()),
            ..KubeConfigOptions::default()
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("starting the Kubernetes client's runtime")?;
        let client = runtime.block_on(async {
            let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| anyhow!("{}: context `{context_name}`: {e}", path.display()))?;
            config.connect_timeout = Some(timeout);
            config.read_timeout = Some(timeout);
            let server = config.cluster_url.to_string();
            let client = kube::Client::try_from(config)
                .map_err(|e| anyhow!("{}: context `{context_name}`: {e}", path.display()))?;
            anyhow::Ok((client, server))
        })?;
        Ok(Kube {
            server: client.1,
            client: client.0,
            resources: Mutex::new(BTreeMap::new()),
            _runtime: runtime,
        })
    }

    async fn get_json(&self, path: &str) -> anyhow::Result<Option<Value>> {
        let request = http::Request::get(path)
            .body(Vec::new())
            .with_context(|| format!("GET {path}"))?;
        match self.client.request::<Value>(request).await {
            Ok(value) => Ok(Some(value)),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(e) => Err(anyhow!(
                "GET {}{path}: {e}",
                self.server.trim_end_matches('/')
            )),
        }
    }

    /// The resource of `kind` in `api_version` and whether it is namespaced (API discovery).
    async fn resource(&self, api_version: &str, kind: &str) -> anyhow::Result<(String, bool)> {
        let key = format!("{api_version}/{kind}");
        if let Some(found) = self.resources.lock().expect("lock").get(&key) {
            return Ok(found.clone());
        }
        let base = if api_version.contains('/') {
            format!("/apis/{api_version}")
        } else {
            format!("/api/{api_version}")
        };
        let list = self.get_json(&base).await?.ok_or_else(|| {
            anyhow!("the API server does not serve {api_version} (is the CRD installed?)")
        })?;
        let found = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| {
                r["kind"].as_str() == Some(kind) && !r["name"].as_str().unwrap_or("/").contains('/')
            })
            .map(|r| {
                (
                    r["name"].as_str().unwrap_or_default().to_string(),
                    r["namespaced"].as_bool().unwrap_or(true),
                )
            })
            .ok_or_else(|| anyhow!("the API server serves no {kind} in {api_version}"))?;
        self.resources
            .lock()
            .expect("lock")
            .insert(key, found.clone());
        Ok(found)
    }

    async fn path(&self, api_version: &str, kind: &str, namespace: &str) -> anyhow::Result<String> {
        let (resource, namespaced) = self.resource(api_version, kind).await?;
        let base = if api_version.contains('/') {
            format!("/apis/{api_version}")
        } else {
            format!("/api/{api_version}")
        };
        Ok(if namespaced {
            format!("{base}/namespaces/{namespace}/{resource}")
        } else {
            format!("{base}/{resource}")
        })
    }

    /// One object; an error names it when it does not exist.
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> anyhow::Result<Value> {
        let path = format!("{}/{name}", self.path(api_version, kind, namespace).await?);
        self.get_json(&path)
            .await?
            .ok_or_else(|| anyhow!("{kind} {namespace}/{name} ({api_version}) not found"))
    }

    /// The objects of `kind` in `namespace` with the label `key=value`.
    pub async fn list(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        key: &str,
        value: &str,
    ) -> anyhow::Result<Vec<Value>> {
        let path = format!(
            "{}?labelSelector={key}%3D{value}",
            self.path(api_version, kind, namespace).await?
        );
        Ok(items(self.get_json(&path).await?, api_version, kind))
    }

    /// Every object of `kind`, in `namespace` or (`None`) in all namespaces, matching the label
    /// `selector` when there is one.
    pub async fn list_all(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> anyhow::Result<Vec<Value>> {
        let mut path = match namespace {
            Some(namespace) => self.path(api_version, kind, namespace).await?,
            None => {
                let (resource, _) = self.resource(api_version, kind).await?;
                format!("/apis/{api_version}/{resource}")
            }
        };
        if let Some(selector) = selector {
            path = format!("{path}?labelSelector={}", query_escape(selector));
        }
        Ok(items(self.get_json(&path).await?, api_version, kind))
    }

    /// The version the API server prefers for a group (`controlplane.cluster.x-k8s.io/v1beta2`).
    async fn preferred(&self, group: &str) -> anyhow::Result<String> {
        let found = self
            .get_json(&format!("/apis/{group}"))
            .await?
            .ok_or_else(|| anyhow!("the API server does not serve the group {group}"))?;
        found["preferredVersion"]["groupVersion"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("the API server gives no preferred version for {group}"))
    }
}

/// `text` for a URL's query: everything but unreserved characters percent-encoded.
fn query_escape(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The items of a list the API server answered (none when it answered 404), each with the
/// `apiVersion` and `kind` lists leave out.
fn items(list: Option<Value>, api_version: &str, kind: &str) -> Vec<Value> {
    list.unwrap_or_default()["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut item| {
            item["apiVersion"] = Value::from(api_version);
            item["kind"] = Value::from(kind);
            item
        })
        .collect()
}

/// Every `templateRef` (`apiVersion`, `kind`, `name`) in a ClusterClass.
fn template_refs(value: &Value, out: &mut Vec<(String, String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "templateRef" {
                    let s = |f: &str| child[f].as_str().unwrap_or_default().to_string();
                    out.push((s("apiVersion"), s("kind"), s("name")));
                } else {
                    template_refs(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| template_refs(i, out)),
        _ => {}
    }
}

/// Drops what the API server adds and render does not read, for files people look at.
fn tidy(mut object: Value) -> Value {
    if let Some(metadata) = object["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    object
}

/// `namespace/name` of every Cluster with a topology in the management cluster (in
/// `namespace`, or in all; matching `selector`, if any), sorted.
pub async fn topology_clusters(
    kube: &Kube,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = kube
        .list_all(CLUSTER_V, "Cluster", namespace, selector)
        .await?
        .iter()
        .filter(|c| c["spec"]["topology"].is_object())
        .map(|c| {
            let s = |f: &str| c["metadata"][f].as_str().unwrap_or_default().to_string();
            (s("namespace"), s("name"))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// What render needs to render the Cluster `namespace/name` as it is in the management
/// cluster, and every object read (to keep as files: `--write-inputs`).
pub async fn render_input(
    kube: &Kube,
    namespace: &str,
    name: &str,
) -> anyhow::Result<(Input, Vec<Value>)> {
    let cluster = tidy(kube.get(CLUSTER_V, "Cluster", namespace, name).await?);
    let class_ref = &cluster["spec"]["topology"]["classRef"];
    let class_name = class_ref["name"]
        .as_str()
        .ok_or_else(|| anyhow!("Cluster {namespace}/{name} has no spec.topology.classRef: only a Cluster with a topology uses a ClusterClass"))?;
    let class_namespace = class_ref["namespace"].as_str().unwrap_or(namespace);
    let class = tidy(
        kube.get(CLUSTER_V, "ClusterClass", class_namespace, class_name)
            .await?,
    );
    let mut refs = Vec::new();
    template_refs(&class["spec"], &mut refs);
    refs.sort();
    refs.dedup();
    let mut templates = Vec::new();
    for (api_version, kind, template) in refs {
        templates.push(tidy(
            kube.get(&api_version, &kind, class_namespace, &template)
                .await
                .with_context(|| {
                    format!("ClusterClass {class_namespace}/{class_name} references it")
                })?,
        ));
    }
    // The current objects, whose names CAPI keeps and whose versions and status the upgrade
    // sequence reads.
    let control_plane = &cluster["spec"]["controlPlaneRef"];
    if let (Some(group), Some(kind), Some(cp)) = (
        control_plane["apiGroup"].as_str(),
        control_plane["kind"].as_str(),
        control_plane["name"].as_str(),
    ) {
        let version = kube.preferred(group).await?;
        templates.push(tidy(kube.get(&version, kind, namespace, cp).await?));
    }
    // Their Machines too: a MachineDeployment with one at another version is upgrading, which
    // holds the upgrade sequence.
    for kind in ["MachineDeployment", "MachinePool", "Machine"] {
        for object in kube
            .list(CLUSTER_V, kind, namespace, CLUSTER_NAME_LABEL, name)
            .await?
        {
            templates.push(tidy(object));
        }
    }
    // The settings of every ExtensionConfig the class calls: CAPI sends each its own handlers.
    let mut objects = vec![cluster.clone(), class.clone()];
    let mut input = Input {
        cluster,
        cluster_class: class,
        ..Input::default()
    };
    for config in input.extension_configs() {
        let extension_config = tidy(
            kube.get(RUNTIME_V, "ExtensionConfig", "", &config)
                .await
                .with_context(|| {
                    format!("reading ExtensionConfig {config}, which the ClusterClass calls")
                })?,
        );
        input
            .extension_settings
            .insert(config, crate::ops::render::settings(&extension_config));
        objects.push(extension_config);
    }
    objects.extend(templates.iter().cloned());
    input.templates = templates;
    Ok((input, objects))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_errors_say_what_is_missing() {
        let dir = std::env::temp_dir().join(format!("capi-ext-kubeconfig-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |text: &str| {
            let path = dir.join("config");
            std::fs::write(&path, text).unwrap();
            path
        };
        let timeout = Duration::from_secs(1);
        let err = Kube::from_kubeconfig(&write("apiVersion: v1\nkind: Config\n"), None, timeout)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no current-context; name one with --context"),
            "{err}"
        );
        let config = "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443', certificate-authority-data: 'LS0t'}}]\nusers: [{name: u, user: {token: abc}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";
        let err = Kube::from_kubeconfig(&write(config), Some("y"), timeout).unwrap_err();
        assert!(
            err.to_string().ends_with("no context named `y` (it has x)"),
            "{err}"
        );
        let err = Kube::from_kubeconfig(&write("{"), None, timeout).unwrap_err();
        assert!(err.to_string().contains("not a kubeconfig"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn template_refs_are_found_anywhere_in_the_class() {
        let class = serde_json::json!({"infrastructure": {"templateRef": {"apiVersion": "a/v1", "kind": "K", "name": "n"}},
            "workers": {"machineDeployments": [{"bootstrap": {"templateRef": {"apiVersion": "b/v1", "kind": "B", "name": "m"}}}]}});
        let mut refs = Vec::new();
        template_refs(&class, &mut refs);
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[1], ("b/v1".into(), "B".into(), "m".into()));
    }
}
