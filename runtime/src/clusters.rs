//! Kubernetes clients for handlers (feature `kube`, on kube-rs): one of the management cluster,
//! and one per workload cluster, made from the Cluster's `<name>-kubeconfig` Secret the way
//! Cluster API reads it (key `value`, the kubeconfig's current context), cached per Cluster and
//! made anew when the Secret changes.
//!
//! ```no_run
//! use capi_ext::clusters::Clusters;
//! use capi_ext::clusters::k8s_openapi::api::core::v1::ConfigMap;
//! use capi_ext::clusters::kube::Api;
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext::{Extension, Server, State, hook};
//!
//! /// Holds creation while the Cluster's ConfigMap `<name>-hold` exists.
//! #[hook(BeforeClusterCreate)]
//! async fn hold(State(clusters): State<Clusters>, req: BeforeClusterCreateRequest) -> Result<BeforeClusterCreateResponse, String> {
//!     let client = clusters.management().await.map_err(|e| e.to_string())?;
//!     let configmaps: Api<ConfigMap> = Api::namespaced(client, &req.cluster.metadata.namespace);
//!     let held = configmaps.get_opt(&format!("{}-hold", req.cluster.metadata.name)).await.map_err(|e| e.to_string())?;
//!     Ok(match held {
//!         Some(_) => BeforeClusterCreateResponse::success().retry_after(10).with_message("held by ConfigMap"),
//!         None => BeforeClusterCreateResponse::success(),
//!     })
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Server::run(Extension::builder().state(Clusters::infer()).register::<hold>())
//! }
//! ```
//!
//! What the extension reads needs RBAC: `get` on `secrets` for workload clusters, and whatever
//! its handlers read with [`Clusters::management`].

pub use k8s_openapi;
pub use kube;

use crate::objects::Cluster;
use k8s_openapi::api::core::v1::Secret;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The key of the kubeconfig in a `<cluster>-kubeconfig` Secret (CAPI's `secret.KubeconfigDataName`).
pub const KUBECONFIG_KEY: &str = "value";

/// Why a client could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No client of the management cluster: neither in-cluster nor from a kubeconfig.
    #[error("no client of the management cluster: {0}")]
    Config(String),
    /// The Cluster's kubeconfig Secret does not exist (yet: CAPI's control plane writes it).
    #[error(
        "Secret {namespace}/{name} does not exist: the workload cluster of Cluster {namespace}/{cluster} has no kubeconfig yet (its control plane provider writes it once the API server is up)"
    )]
    NoSecret {
        /// The Secret's namespace (the Cluster's).
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The Cluster's name.
        cluster: String,
    },
    /// The Secret holds no usable kubeconfig.
    #[error("Secret {namespace}/{name}: {problem}")]
    BadKubeconfig {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The API server refused or could not be reached.
    #[error("{what}: {source}")]
    Api {
        /// What was being read.
        what: String,
        /// kube-rs's error.
        #[source]
        source: kube::Error,
    },
}

struct Cached {
    /// The Secret's `resourceVersion` the client was made from.
    resource_version: String,
    client: Client,
}

/// Clients of the management cluster and of its workload clusters; cheap to clone (give it to
/// [`ExtensionBuilder::state`](crate::ExtensionBuilder::state), or hold it in a state of your own).
#[derive(Clone)]
pub struct Clusters {
    /// The management cluster's client, or why there is none: made at the first use when the
    /// Clusters were inferred.
    management: Arc<tokio::sync::OnceCell<Result<Client, Arc<str>>>>,
    workloads: Arc<Mutex<HashMap<(String, String), Cached>>>,
    made: Arc<AtomicU64>,
}

impl std::fmt::Debug for Clusters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cached = self.workloads.lock().map(|w| w.len()).unwrap_or(0);
        f.debug_struct("Clusters")
            .field("workload_clients_cached", &cached)
            .finish_non_exhaustive()
    }
}

impl Clusters {
    /// Clients made with `management` as the management cluster's.
    pub fn new(management: Client) -> Self {
        Clusters {
            management: Arc::new(tokio::sync::OnceCell::new_with(Some(Ok(management)))),
            workloads: Arc::default(),
            made: Arc::default(),
        }
    }

    /// The management cluster as kube-rs finds it: `KUBECONFIG` (or `~/.kube/config`), else the
    /// Pod's service account (in-cluster). The client is made at its first use, inside the
    /// server, so `main` stays synchronous; when there is no management cluster (an extension
    /// run on a laptop for `capi-ext render`, without a kubeconfig), every use answers with the
    /// reason, logged once, and hooks that do not use it keep working.
    pub fn infer() -> Self {
        Clusters {
            management: Arc::default(),
            workloads: Arc::default(),
            made: Arc::default(),
        }
    }

    /// The management cluster as [`Clusters::infer`] finds it, made now: an error when there
    /// is none.
    pub async fn try_infer() -> Result<Self, ClusterError> {
        let clusters = Self::infer();
        clusters.management().await?;
        Ok(clusters)
    }

    /// The management cluster of a kubeconfig file: its `context`, or its current context.
    /// Exec credential plugins, token files and client certificates work as in kubectl.
    pub async fn from_kubeconfig(path: &Path, context: Option<&str>) -> Result<Self, ClusterError> {
        let kubeconfig = Kubeconfig::read_from(path)
            .map_err(|e| ClusterError::Config(format!("{}: {e}", path.display())))?;
        let options = KubeConfigOptions {
            context: context.map(str::to_string),
            ..KubeConfigOptions::default()
        };
        let config = Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| ClusterError::Config(format!("{}: {e}", path.display())))?;
        Self::from_config(config)
    }

    fn from_config(config: Config) -> Result<Self, ClusterError> {
        Client::try_from(config)
            .map(Self::new)
            .map_err(|e| ClusterError::Config(e.to_string()))
    }

    /// The management cluster's client (an error when [`Clusters::infer`] finds none).
    pub async fn management(&self) -> Result<Client, ClusterError> {
        self.management
            .get_or_init(|| async {
                let made = match Config::infer().await {
                    Ok(config) => Client::try_from(config).map_err(|e| e.to_string()),
                    Err(e) => Err(format!(
                        "{e} (in a Pod, mount its service account token; elsewhere set KUBECONFIG)"
                    )),
                };
                made.map_err(|reason| {
                    tracing::warn!(
                        "no client of the management cluster: {reason}; handlers that use it fail"
                    );
                    reason.into()
                })
            })
            .await
            .clone()
            .map_err(|reason| ClusterError::Config(reason.to_string()))
    }

    /// The client of `cluster`'s workload cluster.
    pub async fn workload(&self, cluster: &Cluster) -> Result<Client, ClusterError> {
        self.workload_of(&cluster.metadata.namespace, &cluster.metadata.name)
            .await
    }

    /// The client of the workload cluster of Cluster `namespace/name`, from the Secret
    /// `<name>-kubeconfig`. Each call reads the Secret's metadata (one small request to the
    /// management cluster); the client is made again only when the Secret changed, so a
    /// rotated kubeconfig is used at once and connections are otherwise reused.
    pub async fn workload_of(&self, namespace: &str, name: &str) -> Result<Client, ClusterError> {
        let secret_name = format!("{name}-kubeconfig");
        let secrets: Api<Secret> = Api::namespaced(self.management().await?, namespace);
        let key = (namespace.to_string(), name.to_string());
        let no_secret = || ClusterError::NoSecret {
            namespace: namespace.to_string(),
            name: secret_name.clone(),
            cluster: name.to_string(),
        };
        let api = |source| ClusterError::Api {
            what: format!("reading Secret {namespace}/{secret_name}"),
            source,
        };
        let Some(meta) = secrets.get_metadata_opt(&secret_name).await.map_err(api)? else {
            self.forget(&key);
            return Err(no_secret());
        };
        let version = meta.metadata.resource_version.unwrap_or_default();
        if let Some(cached) = self.workloads.lock().expect("not poisoned").get(&key)
            && cached.resource_version == version
        {
            return Ok(cached.client.clone());
        }
        let Some(secret) = secrets.get_opt(&secret_name).await.map_err(api)? else {
            self.forget(&key);
            return Err(no_secret());
        };
        let bad = |problem: String| ClusterError::BadKubeconfig {
            namespace: namespace.to_string(),
            name: secret_name.clone(),
            problem,
        };
        let data = secret
            .data
            .as_ref()
            .and_then(|d| d.get(KUBECONFIG_KEY))
            .ok_or_else(|| {
                bad(format!(
                    "it has no key `{KUBECONFIG_KEY}`, where Cluster API keeps the kubeconfig"
                ))
            })?;
        let text = std::str::from_utf8(&data.0)
            .map_err(|_| bad(format!("its `{KUBECONFIG_KEY}` is not UTF-8 text")))?;
        let kubeconfig = Kubeconfig::from_yaml(text)
            .map_err(|e| bad(format!("its `{KUBECONFIG_KEY}` is not a kubeconfig: {e}")))?;
        let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|e| bad(format!("its kubeconfig cannot be used: {e}")))?;
        let client = Client::try_from(config)
            .map_err(|e| bad(format!("its kubeconfig cannot be used: {e}")))?;
        self.made.fetch_add(1, Ordering::Relaxed);
        let version = secret.metadata.resource_version.unwrap_or(version);
        self.workloads.lock().expect("not poisoned").insert(
            key,
            Cached {
                resource_version: version,
                client: client.clone(),
            },
        );
        Ok(client)
    }

    fn forget(&self, key: &(String, String)) {
        self.workloads.lock().expect("not poisoned").remove(key);
    }

    /// How many workload clients were made (a client is made again when its Secret changes).
    pub fn clients_made(&self) -> u64 {
        self.made.load(Ordering::Relaxed)
    }

    /// How many workload clusters have a client cached.
    pub fn cached(&self) -> usize {
        self.workloads.lock().expect("not poisoned").len()
    }
}
