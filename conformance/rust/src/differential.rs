//! The extension of the differential test (`capi-ext-conformance differential-extension`):
//! CAPI's own desired-state generator and `capi-ext render` both call it for the same generated
//! topologies (see `conformance/differential`), so it answers in a way that makes every input
//! the two engines send visible in the objects they compute:
//!
//! - `variables` (DiscoverVariables): three variables named after the `prefix` setting, with
//!   defaults at several depths, so the definitions, their source and the defaulting show.
//! - `echo` (GeneratePatches): writes into each item, under the `key` setting, the global and
//!   item variables, the holder reference, the settings and the template as received (which
//!   holds what the patches before this one did). With `patchType: merge` it sends a JSON merge
//!   patch that also labels the template.
//! - `validate` (ValidateTopology): `Failure` when a region variable is `forbidden`; it opens
//!   two spans of its own (`check-regions`, `compare` inside it) for the traces' check.
//! - `plan` (GenerateUpgradePlan): the control plane one minor at a time, or what the Cluster's
//!   `differential.capi-ext/upgrade-plan` annotation asks: `direct` (straight to the target,
//!   which CAPI refuses past one minor), `workers` (the workers straight to the target) or
//!   `refuse` (`Failure`).
//! - `hold-<hook>` (BeforeClusterUpgrade, BeforeControlPlaneUpgrade, AfterControlPlaneUpgrade,
//!   BeforeWorkersUpgrade, AfterWorkersUpgrade): blocks (`retryAfterSeconds: 30`) when the
//!   Cluster's `differential.capi-ext/blocking` annotation lists the hook (comma-separated);
//!   render is given the same list with `--blocking-hook`.
//!
//! Nothing here depends on time, order of calls or randomness: the two engines must get the
//! same answer for the same request.

use capi_ext::hooks::v1alpha1::*;
use capi_ext::objects::Cluster;
use capi_ext::{ExtensionBuilder, Registration};
use serde_json::{Value, json};

/// The variable-name prefix a patch's settings choose (`prefix`, default `ext`).
fn prefix(settings: &Settings) -> &str {
    settings.get("prefix").map_or("ext", String::as_str)
}

async fn discover_variables(req: DiscoverVariablesRequest) -> DiscoverVariablesResponse {
    let p = prefix(&req.settings);
    let definitions = json!([
        {"name": format!("{p}Region"), "required": false, "schema": {"openAPIV3Schema": {
            "type": "string", "default": "eu-1", "maxLength": 20}}},
        {"name": format!("{p}Replicas"), "required": false, "schema": {"openAPIV3Schema": {
            "type": "integer", "minimum": 1, "maximum": 9, "default": 3}}},
        {"name": format!("{p}Proxy"), "required": false, "schema": {"openAPIV3Schema": {
            "type": "object", "default": {},
            "properties": {
                "http": {"type": "string", "default": "http://proxy:3128"},
                "noProxy": {"type": "array", "items": {"type": "string"}},
                "enabled": {"type": "boolean", "default": true}
            }}}}
    ]);
    let variables: Vec<ClusterClassVariable> =
        serde_json::from_value(definitions).expect("the definitions are ClusterClassVariables");
    variables
        .into_iter()
        .fold(DiscoverVariablesResponse::success(), |r, v| r.variable(v))
}

async fn echo(req: GeneratePatchesRequest) -> GeneratePatchesResponse {
    let key = req.settings.get("key").map_or("echo", String::as_str);
    let merge = req.settings.get("patchType").is_some_and(|t| t == "merge");
    let mut response = GeneratePatchesResponse::success();
    for item in &req.items {
        let echo = json!({
            "global": req.variables,
            "item": item.variables,
            "holder": {
                "apiVersion": item.holder_reference.api_version,
                "kind": item.holder_reference.kind,
                "namespace": item.holder_reference.namespace,
                "name": item.holder_reference.name,
                "fieldPath": item.holder_reference.field_path,
            },
            "settings": req.settings,
            "received": item.object["spec"]["template"],
        });
        let patch = if merge {
            let label = format!("{}-{}", item.holder_reference.kind, key).to_lowercase();
            Patch::merge(json!({"spec": {"template": {
                "metadata": {"labels": {format!("echo.capi-ext.io/{key}"): label}},
                "spec": {key: echo},
            }}}))
        } else {
            Patch::json().add(format!("/spec/template/spec/{key}"), echo)
        };
        response = response.patch(item.uid.clone(), patch);
    }
    response
}

async fn validate(req: ValidateTopologyRequest) -> ValidateTopologyResponse {
    // Spans of the handler's own, exported as children of the call's span when it is traced
    // (`make otel` checks them).
    let span = tracing::info_span!(
        "check-regions",
        variables = req.variables.len(),
        forbidden = tracing::field::Empty
    );
    let _entered = span.enter();
    let forbidden = {
        let _compare = tracing::info_span!("compare").entered();
        req.variables
            .iter()
            .find(|v| v.name.ends_with("Region") && v.value == Value::String("forbidden".into()))
    };
    if let Some(v) = forbidden {
        span.record("forbidden", v.name.as_str());
    }
    match forbidden {
        Some(v) => ValidateTopologyResponse::failure(format!("{} is forbidden", v.name)),
        None => ValidateTopologyResponse::success(),
    }
}

/// The Cluster annotation that chooses `plan`'s answer.
const PLAN_ANNOTATION: &str = "differential.capi-ext/upgrade-plan";

async fn plan(req: GenerateUpgradePlanRequest) -> GenerateUpgradePlanResponse {
    let (from, to) = (
        &req.from_control_plane_kubernetes_version,
        &req.to_kubernetes_version,
    );
    let how = req
        .cluster
        .metadata
        .annotations
        .get(PLAN_ANNOTATION)
        .map_or("", String::as_str);
    let steps = |versions: Vec<String>| {
        versions
            .into_iter()
            .map(|version| UpgradeStep { version })
            .collect()
    };
    let minor = |v: &str| -> Option<(u64, u64)> {
        let mut parts = v.trim_start_matches('v').split('.');
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    };
    let (Some((major, from_minor)), Some((_, to_minor))) = (minor(from), minor(to)) else {
        return GenerateUpgradePlanResponse::failure(format!(
            "cannot read the versions {from} and {to}"
        ));
    };
    let mut response = GenerateUpgradePlanResponse::success();
    match how {
        "refuse" => {
            return GenerateUpgradePlanResponse::failure(format!("no upgrade from {from} to {to}"));
        }
        "direct" => response.control_plane_upgrades = steps(vec![to.clone()]),
        _ => {
            let versions = (from_minor + 1..=to_minor)
                .map(|m| {
                    if m == to_minor {
                        to.clone()
                    } else {
                        format!("v{major}.{m}.0")
                    }
                })
                .collect();
            response.control_plane_upgrades = steps(versions);
        }
    }
    if how == "workers" && !req.from_workers_kubernetes_version.is_empty() {
        response.workers_upgrades = steps(vec![to.clone()]);
    }
    response
}

/// The Cluster annotation that lists the lifecycle hooks `hold` blocks.
const BLOCKING_ANNOTATION: &str = "differential.capi-ext/blocking";

/// How long a blocking answer asks CAPI to wait.
const RETRY_AFTER_SECONDS: i32 = 30;

/// Whether the Cluster's blocking annotation lists `hook`.
fn blocks(cluster: &Cluster, hook: &str) -> bool {
    cluster
        .metadata
        .annotations
        .get(BLOCKING_ANNOTATION)
        .is_some_and(|list| list.split(',').any(|h| h.trim() == hook))
}

/// A lifecycle handler that blocks where the Cluster's annotation asks.
macro_rules! hold {
    ($name:ident, $hook:ident, $request:ident, $response:ident) => {
        async fn $name(req: $request) -> $response {
            let seconds = if blocks(&req.cluster, stringify!($hook)) {
                RETRY_AFTER_SECONDS
            } else {
                0
            };
            $response::success().retry_after(seconds)
        }
    };
}

hold!(
    hold_before_cluster_upgrade,
    BeforeClusterUpgrade,
    BeforeClusterUpgradeRequest,
    BeforeClusterUpgradeResponse
);
hold!(
    hold_before_control_plane_upgrade,
    BeforeControlPlaneUpgrade,
    BeforeControlPlaneUpgradeRequest,
    BeforeControlPlaneUpgradeResponse
);
hold!(
    hold_after_control_plane_upgrade,
    AfterControlPlaneUpgrade,
    AfterControlPlaneUpgradeRequest,
    AfterControlPlaneUpgradeResponse
);
hold!(
    hold_before_workers_upgrade,
    BeforeWorkersUpgrade,
    BeforeWorkersUpgradeRequest,
    BeforeWorkersUpgradeResponse
);
hold!(
    hold_after_workers_upgrade,
    AfterWorkersUpgrade,
    AfterWorkersUpgradeRequest,
    AfterWorkersUpgradeResponse
);

/// The differential test's extension.
pub fn extension() -> ExtensionBuilder {
    capi_ext::Extension::builder()
        .handler(Registration::new(
            DiscoverVariables,
            "variables",
            discover_variables,
        ))
        .handler(Registration::new(GeneratePatches, "echo", echo))
        .handler(Registration::new(ValidateTopology, "validate", validate))
        .handler(Registration::new(GenerateUpgradePlan, "plan", plan))
        .handler(Registration::new(
            BeforeClusterUpgrade,
            "hold-before-cluster-upgrade",
            hold_before_cluster_upgrade,
        ))
        .handler(Registration::new(
            BeforeControlPlaneUpgrade,
            "hold-before-control-plane-upgrade",
            hold_before_control_plane_upgrade,
        ))
        .handler(Registration::new(
            AfterControlPlaneUpgrade,
            "hold-after-control-plane-upgrade",
            hold_after_control_plane_upgrade,
        ))
        .handler(Registration::new(
            BeforeWorkersUpgrade,
            "hold-before-workers-upgrade",
            hold_before_workers_upgrade,
        ))
        .handler(Registration::new(
            AfterWorkersUpgrade,
            "hold-after-workers-upgrade",
            hold_after_workers_upgrade,
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn echoes_what_it_received_under_the_key_of_its_settings() {
        let extension = extension().build().unwrap();
        let request: GeneratePatchesRequest = serde_json::from_value(json!({
            "settings": {"key": "e1"},
            "variables": [{"name": "extRegion", "value": "eu-1"}],
            "items": [{"uid": "u1", "holderReference": {"kind": "Cluster", "fieldPath": "spec.infrastructureRef"},
                       "object": {"spec": {"template": {"spec": {"a": 1}}}}}]
        }))
        .unwrap();
        let response = extension
            .call(GeneratePatches, "echo", &request)
            .await
            .unwrap();
        let patch = String::from_utf8(response.items[0].patch.document()).unwrap();
        assert!(patch.contains("/spec/template/spec/e1"), "{patch}");
        assert!(patch.contains(r#""received":{"spec":{"a":1}}"#), "{patch}");
    }

    #[tokio::test]
    async fn validate_refuses_a_forbidden_region() {
        let extension = extension().build().unwrap();
        let request: ValidateTopologyRequest = serde_json::from_value(
            json!({"variables": [{"name": "p1Region", "value": "forbidden"}], "items": []}),
        )
        .unwrap();
        let response = extension
            .call(ValidateTopology, "validate", &request)
            .await
            .unwrap();
        assert_eq!(response.status, ResponseStatus::Failure);
    }

    #[tokio::test]
    async fn plan_goes_a_minor_at_a_time_unless_the_cluster_asks_otherwise() {
        let extension = extension().build().unwrap();
        let ask = |how: &str| {
            serde_json::from_value::<GenerateUpgradePlanRequest>(json!({
                "cluster": {"metadata": {"name": "c", "annotations": {PLAN_ANNOTATION: how}}},
                "fromControlPlaneKubernetesVersion": "v1.33.0",
                "fromWorkersKubernetesVersion": "v1.33.0",
                "toKubernetesVersion": "v1.35.2"
            }))
            .unwrap()
        };
        let versions = |steps: &[UpgradeStep]| -> Vec<String> {
            steps.iter().map(|s| s.version.clone()).collect()
        };
        let answer = extension
            .call(GenerateUpgradePlan, "plan", &ask(""))
            .await
            .unwrap();
        assert_eq!(
            versions(&answer.control_plane_upgrades),
            ["v1.34.0", "v1.35.2"]
        );
        assert!(answer.workers_upgrades.is_empty());
        let answer = extension
            .call(GenerateUpgradePlan, "plan", &ask("workers"))
            .await
            .unwrap();
        assert_eq!(versions(&answer.workers_upgrades), ["v1.35.2"]);
        let answer = extension
            .call(GenerateUpgradePlan, "plan", &ask("direct"))
            .await
            .unwrap();
        assert_eq!(versions(&answer.control_plane_upgrades), ["v1.35.2"]);
        let answer = extension
            .call(GenerateUpgradePlan, "plan", &ask("refuse"))
            .await
            .unwrap();
        assert_eq!(answer.status, ResponseStatus::Failure);
    }

    #[tokio::test]
    async fn hold_blocks_the_hooks_the_cluster_lists() {
        let extension = extension().build().unwrap();
        let cluster = |blocking: &str| json!({"metadata": {"name": "c", "annotations": {BLOCKING_ANNOTATION: blocking}}});
        let before = |blocking: &str| {
            serde_json::from_value::<BeforeClusterUpgradeRequest>(json!({
                "cluster": cluster(blocking),
                "fromKubernetesVersion": "v1.33.0",
                "toKubernetesVersion": "v1.34.0"
            }))
            .unwrap()
        };
        let after = |blocking: &str| {
            serde_json::from_value::<AfterControlPlaneUpgradeRequest>(json!({
                "cluster": cluster(blocking),
                "kubernetesVersion": "v1.34.0"
            }))
            .unwrap()
        };
        let answer = extension
            .call(
                BeforeClusterUpgrade,
                "hold-before-cluster-upgrade",
                &before("BeforeClusterUpgrade"),
            )
            .await
            .unwrap();
        assert_eq!(answer.retry_after_seconds, RETRY_AFTER_SECONDS);
        let answer = extension
            .call(
                BeforeClusterUpgrade,
                "hold-before-cluster-upgrade",
                &before("AfterControlPlaneUpgrade"),
            )
            .await
            .unwrap();
        assert_eq!(answer.retry_after_seconds, 0);
        let answer = extension
            .call(
                AfterControlPlaneUpgrade,
                "hold-after-control-plane-upgrade",
                &after("BeforeClusterUpgrade, AfterControlPlaneUpgrade"),
            )
            .await
            .unwrap();
        assert_eq!(answer.retry_after_seconds, RETRY_AFTER_SECONDS);
        assert_eq!(answer.status, ResponseStatus::Success);
    }
}
