//! A read-only client of a management cluster, from a kubeconfig: what `render --kubeconfig`
//! reads of a live Cluster (the Cluster, its ClusterClass and templates, its current
//! ControlPlane, MachineDeployments and MachinePools, the ExtensionConfig's settings).

use crate::ops::call::{Target, send_async};
use anyhow::{Context, anyhow, bail};
use base64::Engine as _;
use capi_ext_render::Input;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

const CLUSTER_V: &str = "cluster.x-k8s.io/v1beta2";
const RUNTIME_V: &str = "runtime.cluster.x-k8s.io/v1beta2";
const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// A connection to the API server of a kubeconfig's context.
#[derive(Debug)]
pub struct Kube {
    target: Target,
    token: Option<String>,
    /// Where the kubeconfig's inline certificates were written (removed when dropped).
    _certificates: Scratch,
    /// `apiVersion/kind` → (resource, namespaced), from API discovery.
    resources: Mutex<BTreeMap<String, (String, bool)>>,
}

/// A folder only this user can read, for a kubeconfig's inline certificates and key; removed
/// when dropped, so an error while reading the kubeconfig leaves nothing behind either.
#[derive(Debug)]
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Self> {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "capi-ext-kube-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn named<'a>(
    list: &'a Value,
    kind: &str,
    name: &str,
    kubeconfig: &Path,
) -> anyhow::Result<&'a Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .find(|entry| entry["name"].as_str() == Some(name))
        .map(|entry| &entry[kind])
        .ok_or_else(|| anyhow!("{}: no {kind} named `{name}`", kubeconfig.display()))
}

impl Kube {
    /// Reads the kubeconfig's `context` (its current context when `None`): the server, its CA
    /// and the user's client certificate or token. Paths in it are relative to its directory.
    pub fn from_kubeconfig(
        path: &Path,
        context: Option<&str>,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let config: Value = serde_saphyr::from_str(&text)
            .map_err(|e| anyhow!("{}: not a kubeconfig: {e}", path.display()))?;
        let context_name = match context {
            Some(c) => c.to_string(),
            None => config["current-context"]
                .as_str()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| {
                    anyhow!(
                        "{}: no current-context; name one with --context",
                        path.display()
                    )
                })?
                .to_string(),
        };
        let ctx = named(&config["contexts"], "context", &context_name, path)?;
        let cluster = named(
            &config["clusters"],
            "cluster",
            ctx["cluster"].as_str().unwrap_or_default(),
            path,
        )?;
        let user = named(
            &config["users"],
            "user",
            ctx["user"].as_str().unwrap_or_default(),
            path,
        )?;
        let server = cluster["server"]
            .as_str()
            .filter(|s| s.starts_with("https://"))
            .ok_or_else(|| {
                anyhow!(
                    "{}: cluster of context `{context_name}`: server must be an https:// URL",
                    path.display()
                )
            })?;
        let dir = Scratch::new().context("creating a folder for the kubeconfig's certificates")?;
        let base = path.parent().unwrap_or(Path::new("."));
        // A PEM from `<field>-data` (base64) or the file `<field>` names.
        let pem = |object: &Value, field: &str, file: &str| -> anyhow::Result<Option<PathBuf>> {
            if let Some(data) = object[format!("{field}-data")].as_str() {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .map_err(|e| anyhow!("{}: {field}-data is not base64: {e}", path.display()))?;
                let written = dir.0.join(file);
                std::fs::write(&written, bytes)?;
                return Ok(Some(written));
            }
            Ok(object[field].as_str().map(|f| base.join(f)))
        };
        let ca = pem(cluster, "certificate-authority", "ca.crt")?.ok_or_else(|| {
            anyhow!("{}: the cluster of context `{context_name}` has no certificate-authority(-data); render trusts only the cluster's own CA", path.display())
        })?;
        let identity = match (
            pem(user, "client-certificate", "tls.crt")?,
            pem(user, "client-key", "tls.key")?,
        ) {
            (Some(cert), Some(key)) => Some((cert, key)),
            _ => None,
        };
        let token = match (user["token"].as_str(), user["tokenFile"].as_str()) {
            (Some(token), _) => Some(token.to_string()),
            (None, Some(file)) => {
                Some(std::fs::read_to_string(base.join(file))?.trim().to_string())
            }
            _ => None,
        };
        if identity.is_none() && token.is_none() {
            bail!(
                "{}: the user of context `{context_name}` has neither a client certificate nor a token (exec and auth-provider plugins are not supported)",
                path.display()
            );
        }
        Ok(Kube {
            target: Target {
                url: server.trim_end_matches('/').to_string(),
                ca,
                identity,
                timeout,
            },
            token,
            _certificates: dir,
            resources: Mutex::new(BTreeMap::new()),
        })
    }

    async fn get_json(&self, path: &str) -> anyhow::Result<Option<Value>> {
        let answer = send_async(
            &self.target,
            hyper::Method::GET,
            path,
            Vec::new(),
            self.token.as_deref(),
        )
        .await
        .with_context(|| format!("GET {}{path}", self.target.url))?;
        match answer.status {
            200 => Ok(Some(serde_json::from_slice(&answer.body)?)),
            404 => Ok(None),
            status => bail!(
                "GET {}{path}: HTTP {status}: {}",
                self.target.url,
                String::from_utf8_lossy(&answer.body).trim()
            ),
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

    /// Every object of `kind`, in `namespace` or (`None`) in all namespaces.
    pub async fn list_all(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> anyhow::Result<Vec<Value>> {
        let path = match namespace {
            Some(namespace) => self.path(api_version, kind, namespace).await?,
            None => {
                let (resource, _) = self.resource(api_version, kind).await?;
                format!("/apis/{api_version}/{resource}")
            }
        };
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
/// `namespace`, or in all), sorted.
pub async fn topology_clusters(
    kube: &Kube,
    namespace: Option<&str>,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = kube
        .list_all(CLUSTER_V, "Cluster", namespace)
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
    // The current objects, whose names CAPI keeps.
    let control_plane = &cluster["spec"]["controlPlaneRef"];
    if let (Some(group), Some(kind), Some(cp)) = (
        control_plane["apiGroup"].as_str(),
        control_plane["kind"].as_str(),
        control_plane["name"].as_str(),
    ) {
        let version = kube.preferred(group).await?;
        templates.push(tidy(kube.get(&version, kind, namespace, cp).await?));
    }
    for kind in ["MachineDeployment", "MachinePool"] {
        for object in kube
            .list(CLUSTER_V, kind, namespace, CLUSTER_NAME_LABEL, name)
            .await?
        {
            templates.push(tidy(object));
        }
    }
    // The settings of the ExtensionConfig the first external patch calls.
    let mut objects = vec![cluster.clone(), class.clone()];
    let mut settings = Default::default();
    let extension = class["spec"]["patches"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|p| p["external"]["generatePatchesExtension"].as_str())
        .and_then(|e| e.split_once('.'))
        .map(|(_, config)| config.to_string());
    if let Some(config) = extension {
        let extension_config = tidy(kube.get(RUNTIME_V, "ExtensionConfig", "", &config).await?);
        settings = crate::ops::render::settings(&extension_config);
        objects.push(extension_config);
    }
    objects.extend(templates.iter().cloned());
    Ok((
        Input {
            cluster,
            cluster_class: class,
            templates,
            settings,
            capi_version: None,
            crds: None,
        },
        objects,
    ))
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
        let config = "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443', certificate-authority-data: 'LS0t'}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";
        let err = Kube::from_kubeconfig(&write(config), None, timeout).unwrap_err();
        assert!(
            err.to_string()
                .contains("neither a client certificate nor a token"),
            "{err}"
        );
        let leftovers = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(&format!("capi-ext-kube-{}-", std::process::id()))
            })
            .count();
        assert_eq!(
            leftovers, 0,
            "a kubeconfig refused leaves no certificate behind"
        );
        let err = Kube::from_kubeconfig(&write(config), Some("y"), timeout).unwrap_err();
        assert!(err.to_string().ends_with("no context named `y`"), "{err}");
        let kube = Kube::from_kubeconfig(
            &write(&config.replace("user: {}", "user: {token: abc}")),
            None,
            timeout,
        )
        .unwrap();
        assert_eq!(kube.target.url, "https://127.0.0.1:6443");
        assert_eq!(std::fs::read(&kube.target.ca).unwrap(), b"---");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let scratch = kube.target.ca.parent().unwrap().to_path_buf();
            let mode = std::fs::metadata(&scratch).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "only this user reads the inline key");
            drop(kube);
            assert!(!scratch.exists(), "removed with the client");
        }
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
