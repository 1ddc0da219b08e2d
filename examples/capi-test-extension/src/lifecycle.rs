//! The lifecycle hooks of CAPI's test extension (Go: `extension/handlers/lifecycle`).
//!
//! Each hook answers with the response preloaded in the ConfigMap
//! `<cluster>-<extensionConfigName>-test-extension-hookresponses` of the Cluster's namespace,
//! under `<hook>[-<attributes>]-preloadedResponse` (YAML, keys in any case:
//! `{"Status": "Success", "RetryAfterSeconds": 5}`), and records what it answered under
//! `<hook>[-<attributes>]-actualResponseStatus`. The attributes are the versions the call is
//! about (`BeforeClusterUpgrade-v1.34.0-v1.35.0`; `+` written `_`). The ConfigMap is created
//! empty when missing; a hook without a preloaded answer succeeds, held 5 seconds when the
//! setting `defaultAllHandlersToBlocking` is `"true"`. The setting `extensionConfigName` names
//! the ExtensionConfig (CAPI's e2e sets it).
//!
//! RBAC: the ConfigMaps of the Clusters' namespaces.
// +capi-ext:rbac:groups="",resources=configmaps,verbs=get;create;patch

use capi_ext::clusters::Clusters;
use capi_ext::clusters::k8s_openapi::api::core::v1::ConfigMap;
use capi_ext::clusters::kube::Api;
use capi_ext::clusters::kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use capi_ext::hooks::v1alpha1::*;
use capi_ext::objects::Cluster;
use capi_ext::{ExtensionBuilder, FromRef, State, hook};
use serde_json::{Map, Value, json};

/// The setting that names the ExtensionConfig (part of the ConfigMap's name).
pub const EXTENSION_CONFIG_NAME_KEY: &str = "extensionConfigName";
/// The setting that makes hooks without a preloaded answer hold (`"true"`).
pub const DEFAULT_BLOCKING_KEY: &str = "defaultAllHandlersToBlocking";

/// The ConfigMap of a Cluster's answers.
pub fn configmap_name(cluster: &str, extension_config: &str) -> String {
    format!("{cluster}-{extension_config}-test-extension-hookresponses")
}

/// The hook's name in the ConfigMap's keys: the hook and the call's attributes, joined by `-`,
/// `+` written `_` (a key allows letters, digits, `-`, `_` and `.`).
pub fn hook_name(hook: &str, attributes: &[&str]) -> String {
    std::iter::once(hook)
        .chain(attributes.iter().copied())
        .collect::<Vec<_>>()
        .join("-")
        .replace('+', "_")
}

/// The answer of a hook without a preloaded one.
fn default_answer(hook: &str, settings: &Settings) -> String {
    let retry = if settings.get(DEFAULT_BLOCKING_KEY).map(String::as_str) == Some("true") {
        5
    } else {
        0
    };
    if hook == "AfterControlPlaneInitialized" {
        r#"{"Status": "Success"}"#.to_string()
    } else {
        format!(r#"{{"Status": "Success", "RetryAfterSeconds": {retry}}}"#)
    }
}

/// `data` (YAML) as a response of type `R`, its keys matched to the response's fields without
/// regard to case, as Go's JSON decoding matches them; fields it does not give keep their values.
fn decode<R: HookResponse>(hook: &str, data: &str) -> Result<R, String> {
    let wrong =
        |e: String| format!("failed to read {hook:?} response information from ConfigMap: {e}");
    let given: Value = serde_saphyr::from_str(data).map_err(|e| wrong(e.to_string()))?;
    let Value::Object(given) = given else {
        return Err(wrong("not an object".into()));
    };
    let Value::Object(mut response) =
        serde_json::to_value(R::success()).map_err(|e| wrong(e.to_string()))?
    else {
        return Err(wrong("the response is not an object".into()));
    };
    // Every field a response can carry (an empty message is not written).
    let fields: Vec<String> = match serde_json::to_value(R::failure("-")) {
        Ok(Value::Object(all)) => all.keys().cloned().collect(),
        _ => response.keys().cloned().collect(),
    };
    for (key, value) in given {
        if let Some(field) = fields.iter().find(|f| f.eq_ignore_ascii_case(&key)) {
            response.insert(field.clone(), value);
        }
    }
    serde_json::from_value(Value::Object(response)).map_err(|e| wrong(e.to_string()))
}

/// What a call records: `Status: <s>, RetryAfterSeconds: <n>` for blocking hooks, else the status.
fn recorded(response: &Map<String, Value>) -> String {
    let status = response
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match response.get("retryAfterSeconds") {
        Some(retry) => format!("Status: {status}, RetryAfterSeconds: {retry}"),
        None => status.to_string(),
    }
}

struct ConfigMaps {
    api: Api<ConfigMap>,
    namespace: String,
    name: String,
}

impl ConfigMaps {
    async fn of(
        clusters: &Clusters,
        cluster: &Cluster,
        settings: &Settings,
        missing: &str,
    ) -> Result<Self, String> {
        let extension_config = settings
            .get(EXTENSION_CONFIG_NAME_KEY)
            .ok_or_else(|| format!("{EXTENSION_CONFIG_NAME_KEY} {missing}"))?;
        let client = clusters.management().await.map_err(|e| e.to_string())?;
        let namespace = cluster.metadata.namespace.clone();
        Ok(ConfigMaps {
            api: Api::namespaced(client, &namespace),
            name: configmap_name(&cluster.metadata.name, extension_config),
            namespace,
        })
    }

    fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The preloaded answer (Go: `readResponseFromConfigMap`).
async fn read<R: HookResponse>(
    clusters: &Clusters,
    cluster: &Cluster,
    hook: &str,
    name: &str,
    settings: &Settings,
) -> Result<R, String> {
    let maps = ConfigMaps::of(clusters, cluster, settings, "mest be set in settings").await?;
    let config_map = match maps.api.get_opt(&maps.name).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            let empty = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(maps.name.clone()),
                    namespace: Some(maps.namespace.clone()),
                    ..ObjectMeta::default()
                },
                ..ConfigMap::default()
            };
            let created = maps
                .api
                .create(&PostParams::default(), &empty)
                .await
                .map_err(|e| format!("failed to create the ConfigMap {}: {e}", maps.key()))?;
            tracing::info!("Created ConfigMap {}", maps.name);
            created
        }
        Err(e) => return Err(format!("failed to read the ConfigMap {}: {e}", maps.key())),
    };
    let data = config_map
        .data
        .and_then(|d| d.get(&format!("{name}-preloadedResponse")).cloned())
        .unwrap_or_else(|| default_answer(hook, settings));
    decode(hook, &data)
}

/// Records the answer (Go: `recordCallInConfigMap`).
async fn record(
    clusters: &Clusters,
    cluster: &Cluster,
    name: &str,
    settings: &Settings,
    response: &Map<String, Value>,
) -> Result<(), String> {
    let maps = ConfigMaps::of(
        clusters,
        cluster,
        settings,
        "must be set in runtime extension settings",
    )
    .await?;
    maps.api
        .get(&maps.name)
        .await
        .map_err(|e| format!("failed to read the ConfigMap {}: {e}", maps.key()))?;
    let patch = json!({"data": {format!("{name}-actualResponseStatus"): recorded(response)}});
    maps.api
        .patch(&maps.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| format!("failed to update the ConfigMap {}: {e}", maps.key()))?;
    Ok(())
}

/// A lifecycle hook's answer: the preloaded one, recorded; a problem reading or recording it
/// is a Failure with its message.
async fn answer<R: HookResponse>(
    clusters: &Clusters,
    hook: &'static str,
    cluster: &Cluster,
    attributes: &[&str],
    settings: &Settings,
) -> R {
    tracing::info!(cluster = %cluster.key(), "{hook} is called");
    let name = hook_name(hook, attributes);
    let response: R = match read(clusters, cluster, hook, &name, settings).await {
        Ok(response) => response,
        Err(message) => return R::failure(message),
    };
    let Ok(Value::Object(mut fields)) = serde_json::to_value(&response) else {
        return response;
    };
    tracing::info!("{name} response is {}", recorded(&fields));
    match record(clusters, cluster, &name, settings, &fields).await {
        Ok(()) => response,
        Err(message) => {
            // As Go does: the answer read, its status Failure and the message the error.
            fields.insert("status".into(), json!("Failure"));
            fields.insert("message".into(), json!(message));
            serde_json::from_value(Value::Object(fields)).unwrap_or_else(|_| R::failure(""))
        }
    }
}

/// BeforeClusterCreate.
#[hook(BeforeClusterCreate, name = "before-cluster-create")]
pub async fn before_cluster_create(
    State(clusters): State<Clusters>,
    req: BeforeClusterCreateRequest,
) -> BeforeClusterCreateResponse {
    answer(
        &clusters,
        "BeforeClusterCreate",
        &req.cluster,
        &[],
        &req.settings,
    )
    .await
}

/// AfterControlPlaneInitialized.
#[hook(AfterControlPlaneInitialized, name = "after-control-plane-initialized")]
pub async fn after_control_plane_initialized(
    State(clusters): State<Clusters>,
    req: AfterControlPlaneInitializedRequest,
) -> AfterControlPlaneInitializedResponse {
    answer(
        &clusters,
        "AfterControlPlaneInitialized",
        &req.cluster,
        &[],
        &req.settings,
    )
    .await
}

/// BeforeClusterUpgrade, keyed by the versions from and to.
#[hook(BeforeClusterUpgrade, name = "before-cluster-upgrade")]
pub async fn before_cluster_upgrade(
    State(clusters): State<Clusters>,
    req: BeforeClusterUpgradeRequest,
) -> BeforeClusterUpgradeResponse {
    let versions = [
        req.from_kubernetes_version.as_str(),
        req.to_kubernetes_version.as_str(),
    ];
    answer(
        &clusters,
        "BeforeClusterUpgrade",
        &req.cluster,
        &versions,
        &req.settings,
    )
    .await
}

/// BeforeControlPlaneUpgrade, keyed by the versions from and to.
#[hook(BeforeControlPlaneUpgrade, name = "before-control-plane-upgrade")]
pub async fn before_control_plane_upgrade(
    State(clusters): State<Clusters>,
    req: BeforeControlPlaneUpgradeRequest,
) -> BeforeControlPlaneUpgradeResponse {
    let versions = [
        req.from_kubernetes_version.as_str(),
        req.to_kubernetes_version.as_str(),
    ];
    answer(
        &clusters,
        "BeforeControlPlaneUpgrade",
        &req.cluster,
        &versions,
        &req.settings,
    )
    .await
}

/// AfterControlPlaneUpgrade, keyed by the version.
#[hook(AfterControlPlaneUpgrade, name = "after-control-plane-upgrade")]
pub async fn after_control_plane_upgrade(
    State(clusters): State<Clusters>,
    req: AfterControlPlaneUpgradeRequest,
) -> AfterControlPlaneUpgradeResponse {
    let version = [req.kubernetes_version.as_str()];
    answer(
        &clusters,
        "AfterControlPlaneUpgrade",
        &req.cluster,
        &version,
        &req.settings,
    )
    .await
}

/// BeforeWorkersUpgrade, keyed by the versions from and to.
#[hook(BeforeWorkersUpgrade, name = "before-workers-upgrade")]
pub async fn before_workers_upgrade(
    State(clusters): State<Clusters>,
    req: BeforeWorkersUpgradeRequest,
) -> BeforeWorkersUpgradeResponse {
    let versions = [
        req.from_kubernetes_version.as_str(),
        req.to_kubernetes_version.as_str(),
    ];
    answer(
        &clusters,
        "BeforeWorkersUpgrade",
        &req.cluster,
        &versions,
        &req.settings,
    )
    .await
}

/// AfterWorkersUpgrade, keyed by the version.
#[hook(AfterWorkersUpgrade, name = "after-workers-upgrade")]
pub async fn after_workers_upgrade(
    State(clusters): State<Clusters>,
    req: AfterWorkersUpgradeRequest,
) -> AfterWorkersUpgradeResponse {
    let version = [req.kubernetes_version.as_str()];
    answer(
        &clusters,
        "AfterWorkersUpgrade",
        &req.cluster,
        &version,
        &req.settings,
    )
    .await
}

/// AfterClusterUpgrade, keyed by the version.
#[hook(AfterClusterUpgrade, name = "after-cluster-upgrade")]
pub async fn after_cluster_upgrade(
    State(clusters): State<Clusters>,
    req: AfterClusterUpgradeRequest,
) -> AfterClusterUpgradeResponse {
    let version = [req.kubernetes_version.as_str()];
    answer(
        &clusters,
        "AfterClusterUpgrade",
        &req.cluster,
        &version,
        &req.settings,
    )
    .await
}

/// BeforeClusterDelete.
#[hook(BeforeClusterDelete, name = "before-cluster-delete")]
pub async fn before_cluster_delete(
    State(clusters): State<Clusters>,
    req: BeforeClusterDeleteRequest,
) -> BeforeClusterDeleteResponse {
    answer(
        &clusters,
        "BeforeClusterDelete",
        &req.cluster,
        &[],
        &req.settings,
    )
    .await
}

/// Registers the nine lifecycle handlers, in the Go extension's order.
pub fn register<S>(builder: ExtensionBuilder<S>) -> ExtensionBuilder<S>
where
    S: Send + Sync + 'static,
    Clusters: FromRef<S>,
{
    builder
        .register::<before_cluster_create>()
        .register::<after_control_plane_initialized>()
        .register::<before_cluster_upgrade>()
        .register::<before_control_plane_upgrade>()
        .register::<after_control_plane_upgrade>()
        .register::<before_workers_upgrade>()
        .register::<after_workers_upgrade>()
        .register::<after_cluster_upgrade>()
        .register::<before_cluster_delete>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_go_makes_them() {
        assert_eq!(
            configmap_name("c1", "ext"),
            "c1-ext-test-extension-hookresponses"
        );
        assert_eq!(
            hook_name("BeforeClusterUpgrade", &["v1.34.0", "v1.35.0+k3s1"]),
            "BeforeClusterUpgrade-v1.34.0-v1.35.0_k3s1"
        );
        assert_eq!(hook_name("BeforeClusterCreate", &[]), "BeforeClusterCreate");
    }

    #[test]
    fn preloaded_answers_are_read_as_go_reads_them() {
        let r: BeforeClusterCreateResponse = decode(
            "BeforeClusterCreate",
            r#"{"Status": "Success", "RetryAfterSeconds": 5}"#,
        )
        .unwrap();
        assert_eq!(
            (r.status, r.retry_after_seconds),
            (ResponseStatus::Success, 5)
        );
        let r: BeforeClusterDeleteResponse = decode(
            "BeforeClusterDelete",
            "status: Failure\nmessage: held\nretryafterseconds: 0\nother: 1\n",
        )
        .unwrap();
        assert_eq!(
            (r.status, r.message.as_str()),
            (ResponseStatus::Failure, "held")
        );
        let blocking = Settings::from([(DEFAULT_BLOCKING_KEY.to_string(), "true".to_string())]);
        assert!(
            default_answer("BeforeClusterCreate", &blocking).contains("\"RetryAfterSeconds\": 5")
        );
        assert_eq!(
            default_answer("AfterControlPlaneInitialized", &blocking),
            r#"{"Status": "Success"}"#
        );
        assert!(decode::<BeforeClusterCreateResponse>("BeforeClusterCreate", "[1]").is_err());
    }

    #[test]
    fn what_is_recorded() {
        let r =
            serde_json::to_value(BeforeClusterCreateResponse::success().retry_after(5)).unwrap();
        assert_eq!(
            recorded(r.as_object().unwrap()),
            "Status: Success, RetryAfterSeconds: 5"
        );
        let r = serde_json::to_value(AfterControlPlaneInitializedResponse::success()).unwrap();
        assert_eq!(recorded(r.as_object().unwrap()), "Success");
    }
}
