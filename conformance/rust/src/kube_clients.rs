//! `capi-ext-conformance kube-clients --kubeconfig FILE --workload-kubeconfig FILE`: the
//! runtime's Kubernetes clients (`capi_ext::clusters`, feature `kube`) against a real
//! kube-apiserver, through handlers served by an [`Extension`] with [`Clusters`] as its state.
//!
//! - the management client comes from `--kubeconfig` (the e2e's, whose credentials come from an
//!   exec plugin);
//! - `from-configmap` (BeforeClusterCreate) answers with the `retryAfterSeconds` of the
//!   ConfigMap `<cluster>-answers` in the Cluster's namespace (CAPI's test extension keeps its
//!   answers the same way), read at every call;
//! - `workload-marker` (AfterControlPlaneInitialized) reaches the workload cluster through the
//!   Cluster's `<cluster>-kubeconfig` Secret (its `value`: `--workload-kubeconfig`, which points
//!   at the same API server) and answers with the ConfigMap `kube-public/<cluster>-marker` it
//!   reads there;
//! - the Secret is rotated (to a kubeconfig of a closed port, then back), emptied and deleted:
//!   each change is seen at the next call.
//!
//! Prints one line per check; exits 1 on the first that fails.

use capi_ext::clusters::k8s_openapi::ByteString;
use capi_ext::clusters::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use capi_ext::clusters::kube::Api;
use capi_ext::clusters::kube::api::{DeleteParams, ObjectMeta, PostParams};
use capi_ext::clusters::{ClusterError, Clusters};
use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, State, hook};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Holds creation for the `retryAfterSeconds` the Cluster's ConfigMap `<name>-answers` says.
#[hook(BeforeClusterCreate, name = "from-configmap")]
async fn from_configmap(
    State(clusters): State<Clusters>,
    req: BeforeClusterCreateRequest,
) -> Result<BeforeClusterCreateResponse, String> {
    let cluster = &req.cluster.metadata;
    let client = clusters.management().await.map_err(|e| e.to_string())?;
    let configmaps: Api<ConfigMap> = Api::namespaced(client, &cluster.namespace);
    let answers = configmaps
        .get_opt(&format!("{}-answers", cluster.name))
        .await
        .map_err(|e| e.to_string())?;
    let retry = answers
        .and_then(|c| c.data)
        .and_then(|d| d.get("retryAfterSeconds").cloned())
        .map(|v| {
            v.parse::<i32>()
                .map_err(|e| format!("retryAfterSeconds `{v}`: {e}"))
        })
        .transpose()?
        .unwrap_or(0);
    Ok(BeforeClusterCreateResponse::success().retry_after(retry))
}

/// Reads `kube-public/<cluster>-marker` in the workload cluster, answering with its `value`.
#[hook(AfterControlPlaneInitialized, name = "workload-marker")]
async fn workload_marker(
    State(clusters): State<Clusters>,
    req: AfterControlPlaneInitializedRequest,
) -> Result<AfterControlPlaneInitializedResponse, ClusterError> {
    let workload = clusters.workload(&req.cluster).await?;
    let configmaps: Api<ConfigMap> = Api::namespaced(workload, "kube-public");
    let marker = configmaps
        .get(&format!("{}-marker", req.cluster.metadata.name))
        .await
        .map_err(|source| ClusterError::Api {
            what: "reading the marker in the workload cluster".into(),
            source,
        })?;
    let value = marker
        .data
        .and_then(|d| d.get("value").cloned())
        .unwrap_or_default();
    Ok(AfterControlPlaneInitializedResponse::success().with_message(value))
}

struct Run {
    extension: Extension,
    clusters: Clusters,
    namespace: String,
    failures: usize,
}

impl Run {
    fn check(&mut self, what: &str, ok: bool, detail: impl std::fmt::Display) {
        if ok {
            println!("  ok   {what}");
        } else {
            println!("  FAIL {what}: {detail}");
            self.failures += 1;
        }
    }

    fn request<R: Default + HasCluster>(&self) -> R {
        let mut request = R::default();
        let cluster = request.cluster_mut();
        cluster.metadata.name = "c1".into();
        cluster.metadata.namespace = self.namespace.clone();
        request
    }

    async fn create(&self) -> BeforeClusterCreateResponse {
        self.extension
            .call(BeforeClusterCreate, "from-configmap", &self.request())
            .await
            .expect("answered")
    }

    async fn marker(&self) -> AfterControlPlaneInitializedResponse {
        self.extension
            .call(
                AfterControlPlaneInitialized,
                "workload-marker",
                &self.request(),
            )
            .await
            .expect("answered")
    }
}

/// Requests that carry a Cluster.
trait HasCluster {
    fn cluster_mut(&mut self) -> &mut capi_ext::objects::Cluster;
}

impl HasCluster for BeforeClusterCreateRequest {
    fn cluster_mut(&mut self) -> &mut capi_ext::objects::Cluster {
        &mut self.cluster
    }
}

impl HasCluster for AfterControlPlaneInitializedRequest {
    fn cluster_mut(&mut self) -> &mut capi_ext::objects::Cluster {
        &mut self.cluster
    }
}

fn configmap(namespace: &str, name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..ConfigMap::default()
    }
}

fn kubeconfig_secret(namespace: &str, data: Option<&str>) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some("c1-kubeconfig".into()),
            namespace: Some(namespace.into()),
            labels: Some(BTreeMap::from([(
                "cluster.x-k8s.io/cluster-name".to_string(),
                "c1".to_string(),
            )])),
            ..ObjectMeta::default()
        },
        type_: Some("cluster.x-k8s.io/secret".into()),
        data: data.map(|d| {
            BTreeMap::from([(
                capi_ext::clusters::KUBECONFIG_KEY.to_string(),
                ByteString(d.as_bytes().to_vec()),
            )])
        }),
        ..Secret::default()
    }
}

/// Gives the Cluster's kubeconfig Secret other data, as a rotation does.
async fn rewrite(
    secrets: &Api<Secret>,
    data: Option<BTreeMap<String, ByteString>>,
) -> Result<(), capi_ext::clusters::kube::Error> {
    let mut secret = secrets.get("c1-kubeconfig").await?;
    secret.data = data;
    secrets
        .replace("c1-kubeconfig", &PostParams::default(), &secret)
        .await
        .map(|_| ())
}

/// Runs the checks; the exit code says whether all passed.
pub fn run(args: &[String]) -> std::process::ExitCode {
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
    };
    let (Some(kubeconfig), Some(workload)) = (flag("--kubeconfig"), flag("--workload-kubeconfig"))
    else {
        eprintln!(
            "usage: capi-ext-conformance kube-clients --kubeconfig FILE --workload-kubeconfig FILE"
        );
        return std::process::ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    match runtime.block_on(checks(&kubeconfig, &workload)) {
        Ok(0) => std::process::ExitCode::SUCCESS,
        Ok(n) => {
            eprintln!("{n} kube-clients checks failed");
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("kube-clients: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn checks(
    kubeconfig: &std::path::Path,
    workload: &std::path::Path,
) -> Result<usize, Box<dyn std::error::Error>> {
    let workload_kubeconfig = std::fs::read_to_string(workload)?;
    let clusters = Clusters::from_kubeconfig(kubeconfig, None).await?;
    let management = clusters.management().await?;
    let namespace = format!("kube-clients-{}", std::process::id());
    let namespaces: Api<Namespace> = Api::all(management.clone());
    namespaces
        .create(
            &PostParams::default(),
            &Namespace {
                metadata: ObjectMeta {
                    name: Some(namespace.clone()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            },
        )
        .await?;
    let extension = Extension::builder()
        .state(clusters.clone())
        .register::<from_configmap>()
        .register::<workload_marker>()
        .build()?;
    let mut run = Run {
        extension,
        clusters,
        namespace: namespace.clone(),
        failures: 0,
    };
    let configmaps: Api<ConfigMap> = Api::namespaced(management.clone(), &namespace);
    let secrets: Api<Secret> = Api::namespaced(management.clone(), &namespace);
    let public: Api<ConfigMap> = Api::namespaced(management.clone(), "kube-public");

    println!("== a handler reads a ConfigMap of the management cluster (exec-plugin credentials)");
    let answer = run.create().await;
    run.check(
        "no ConfigMap: not held",
        answer.status == ResponseStatus::Success && answer.retry_after_seconds == 0,
        format!("{answer:?}"),
    );
    configmaps
        .create(
            &PostParams::default(),
            &configmap(&namespace, "c1-answers", &[("retryAfterSeconds", "7")]),
        )
        .await?;
    let answer = run.create().await;
    run.check(
        "ConfigMap says 7: held for 7 seconds",
        answer.retry_after_seconds == 7,
        format!("{answer:?}"),
    );
    configmaps
        .replace(
            "c1-answers",
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta {
                    resource_version: configmaps
                        .get("c1-answers")
                        .await?
                        .metadata
                        .resource_version,
                    ..configmap(&namespace, "c1-answers", &[]).metadata
                },
                data: Some(BTreeMap::from([("retryAfterSeconds".into(), "3".into())])),
                ..ConfigMap::default()
            },
        )
        .await?;
    let answer = run.create().await;
    run.check(
        "ConfigMap changed to 3: read again at the next call",
        answer.retry_after_seconds == 3,
        format!("{answer:?}"),
    );

    println!("== a handler reaches the workload cluster through the Cluster's kubeconfig Secret");
    let answer = run.marker().await;
    run.check(
        "no Secret: a Failure naming the Secret",
        answer.status == ResponseStatus::Failure
            && answer
                .message
                .contains(&format!("Secret {namespace}/c1-kubeconfig does not exist")),
        &answer.message,
    );
    let marker = format!("marker-{}", std::process::id());
    public
        .create(
            &PostParams::default(),
            &configmap("kube-public", "c1-marker", &[("value", &marker)]),
        )
        .await?;
    secrets
        .create(
            &PostParams::default(),
            &kubeconfig_secret(&namespace, Some(&workload_kubeconfig)),
        )
        .await?;
    let answer = run.marker().await;
    run.check(
        "Secret written: the marker read in the workload cluster",
        answer.status == ResponseStatus::Success && answer.message == marker,
        format!("{answer:?}"),
    );
    let made = run.clusters.clients_made();
    let answer = run.marker().await;
    run.check(
        "called again: the cached client is used (no new client)",
        answer.message == marker
            && run.clusters.clients_made() == made
            && run.clusters.cached() == 1,
        format!(
            "{} clients made, {} cached",
            run.clusters.clients_made(),
            run.clusters.cached()
        ),
    );
    // Rotated to a kubeconfig of a port nothing listens on: the next call must use it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut dead = capi_ext::clusters::kube::config::Kubeconfig::from_yaml(&workload_kubeconfig)?;
    for cluster in &mut dead.clusters {
        if let Some(c) = cluster.cluster.as_mut() {
            c.server = Some(format!("https://127.0.0.1:{closed}"));
        }
    }
    // JSON is YAML.
    let rotated = serde_json::to_string(&dead)?;
    rewrite(&secrets, kubeconfig_secret(&namespace, Some(&rotated)).data).await?;
    let answer = run.marker().await;
    run.check(
        "Secret rotated to a dead server: the new kubeconfig is used at once",
        answer.status == ResponseStatus::Failure && run.clusters.clients_made() == made + 1,
        format!("{answer:?}, {} clients made", run.clusters.clients_made()),
    );
    rewrite(
        &secrets,
        kubeconfig_secret(&namespace, Some(&workload_kubeconfig)).data,
    )
    .await?;
    let answer = run.marker().await;
    run.check(
        "Secret rotated back: reachable again",
        answer.message == marker && run.clusters.clients_made() == made + 2,
        format!("{answer:?}"),
    );
    rewrite(
        &secrets,
        Some(BTreeMap::from([(
            "other".into(),
            ByteString(b"x".to_vec()),
        )])),
    )
    .await?;
    let answer = run.marker().await;
    run.check(
        "Secret without `value`: a Failure saying where CAPI keeps the kubeconfig",
        answer.status == ResponseStatus::Failure
            && answer.message.contains("it has no key `value`"),
        &answer.message,
    );
    secrets
        .delete("c1-kubeconfig", &DeleteParams::default())
        .await?;
    let answer = run.marker().await;
    run.check(
        "Secret deleted: the cached client is dropped",
        answer.status == ResponseStatus::Failure && run.clusters.cached() == 0,
        format!("{answer:?}, {} cached", run.clusters.cached()),
    );
    public.delete("c1-marker", &DeleteParams::default()).await?;
    namespaces
        .delete(&namespace, &DeleteParams::default())
        .await?;
    Ok(run.failures)
}
