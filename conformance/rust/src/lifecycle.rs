//! The lifecycle extension of the end-to-end run (`capi-ext-conformance lifecycle-extension`):
//! the six upgrade hooks and GenerateUpgradePlan. Each call is logged as one JSON line (message
//! `upgrade hook called`, field `call`: the hook, the versions and upgrade steps CAPI sent, and
//! whether the call was held), so the harness can check CAPI's order and requests. A hook holds
//! (Success with retryAfterSeconds) while the Cluster's annotation [`HOLD`] names it, as `Hook`
//! or `Hook@version` (the version the call is about), so each hold is released by the harness.

use capi_ext::hooks::v1alpha1::*;
use capi_ext::objects::Cluster;
use capi_ext::{Extension, ExtensionBuilder, Registration};
use serde_json::{Value, json};

/// The Cluster annotation that holds hooks: a comma-separated list of `Hook` or `Hook@version`.
pub const HOLD: &str = "e2e.capi-ext.io/hold";

fn steps(steps: &[UpgradeStepInfo]) -> Vec<&str> {
    steps.iter().map(|s| s.version.as_str()).collect()
}

/// Logs the call and answers: held while [`HOLD`] names `hook` (or `hook@version`).
fn answer<R: RetryResponse>(hook: &str, cluster: &Cluster, version: &str, mut call: Value) -> R {
    let held = cluster
        .metadata
        .annotations
        .get(HOLD)
        .into_iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|h| h == hook || h == format!("{hook}@{version}"));
    call["hook"] = json!(hook);
    call["held"] = json!(held);
    tracing::info!(call = %call, "upgrade hook called");
    if held {
        R::success()
            .retry_after(1)
            .with_message(format!("{hook} to {version} held by annotation {HOLD}"))
    } else {
        R::success()
    }
}

async fn before_cluster_upgrade(r: BeforeClusterUpgradeRequest) -> BeforeClusterUpgradeResponse {
    let call = json!({"from": r.from_kubernetes_version, "to": r.to_kubernetes_version,
        "controlPlaneUpgrades": steps(&r.control_plane_upgrades), "workersUpgrades": steps(&r.workers_upgrades)});
    answer(
        "BeforeClusterUpgrade",
        &r.cluster,
        &r.to_kubernetes_version,
        call,
    )
}

async fn before_control_plane_upgrade(
    r: BeforeControlPlaneUpgradeRequest,
) -> BeforeControlPlaneUpgradeResponse {
    let call = json!({"from": r.from_kubernetes_version, "to": r.to_kubernetes_version,
        "controlPlaneUpgrades": steps(&r.control_plane_upgrades), "workersUpgrades": steps(&r.workers_upgrades)});
    answer(
        "BeforeControlPlaneUpgrade",
        &r.cluster,
        &r.to_kubernetes_version,
        call,
    )
}

async fn after_control_plane_upgrade(
    r: AfterControlPlaneUpgradeRequest,
) -> AfterControlPlaneUpgradeResponse {
    let call = json!({"to": r.kubernetes_version,
        "controlPlaneUpgrades": steps(&r.control_plane_upgrades), "workersUpgrades": steps(&r.workers_upgrades)});
    answer(
        "AfterControlPlaneUpgrade",
        &r.cluster,
        &r.kubernetes_version,
        call,
    )
}

async fn before_workers_upgrade(r: BeforeWorkersUpgradeRequest) -> BeforeWorkersUpgradeResponse {
    let call = json!({"from": r.from_kubernetes_version, "to": r.to_kubernetes_version,
        "controlPlaneUpgrades": steps(&r.control_plane_upgrades), "workersUpgrades": steps(&r.workers_upgrades)});
    answer(
        "BeforeWorkersUpgrade",
        &r.cluster,
        &r.to_kubernetes_version,
        call,
    )
}

async fn after_workers_upgrade(r: AfterWorkersUpgradeRequest) -> AfterWorkersUpgradeResponse {
    let call = json!({"to": r.kubernetes_version,
        "controlPlaneUpgrades": steps(&r.control_plane_upgrades), "workersUpgrades": steps(&r.workers_upgrades)});
    answer(
        "AfterWorkersUpgrade",
        &r.cluster,
        &r.kubernetes_version,
        call,
    )
}

async fn after_cluster_upgrade(r: AfterClusterUpgradeRequest) -> AfterClusterUpgradeResponse {
    let call = json!({"to": r.kubernetes_version});
    answer(
        "AfterClusterUpgrade",
        &r.cluster,
        &r.kubernetes_version,
        call,
    )
}

/// `major.minor` of `v1.36.2`.
fn minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// One step per minor: `v1.<m>.0` for each minor after `from`'s, then the target. Workers
/// take every step too (more than CAPI's default, which skips what skew rules allow), so that
/// following this plan is visible in the objects.
fn plan(from: &str, to: &str) -> Result<Vec<String>, String> {
    let ((fmaj, fmin), (tmaj, tmin)) = match (minor(from), minor(to)) {
        (Some(f), Some(t)) => (f, t),
        _ => return Err(format!("cannot read the versions {from:?} and {to:?}")),
    };
    if fmaj != tmaj || tmin < fmin {
        return Err(format!("no plan from {from} to {to}"));
    }
    let mut out: Vec<String> = (fmin + 1..tmin).map(|m| format!("v{tmaj}.{m}.0")).collect();
    if from != to {
        out.push(to.to_string());
    }
    Ok(out)
}

async fn generate_upgrade_plan(
    r: GenerateUpgradePlanRequest,
) -> Result<GenerateUpgradePlanResponse, String> {
    let control_plane = plan(
        &r.from_control_plane_kubernetes_version,
        &r.to_kubernetes_version,
    )?;
    // CAPI asks again at every step; the workers' plan starts from where the workers are
    // (behind the control plane mid-upgrade), so the plan stays the same one throughout.
    let workers = if r.from_workers_kubernetes_version.is_empty() {
        Vec::new()
    } else {
        plan(&r.from_workers_kubernetes_version, &r.to_kubernetes_version)?
    };
    let call = json!({"hook": "GenerateUpgradePlan", "fromControlPlane": r.from_control_plane_kubernetes_version,
        "fromWorkers": r.from_workers_kubernetes_version, "to": r.to_kubernetes_version,
        "controlPlaneUpgrades": control_plane, "workersUpgrades": workers, "held": false});
    tracing::info!(call = %call, "upgrade hook called");
    let step = |v: &String| UpgradeStep { version: v.clone() };
    let mut response = GenerateUpgradePlanResponse::success();
    response.control_plane_upgrades = control_plane.iter().map(step).collect();
    response.workers_upgrades = workers.iter().map(step).collect();
    Ok(response)
}

/// The lifecycle extension's handlers.
pub fn extension() -> ExtensionBuilder {
    Extension::builder()
        .handler(Registration::new(
            BeforeClusterUpgrade,
            "before-cluster-upgrade",
            before_cluster_upgrade,
        ))
        .handler(Registration::new(
            BeforeControlPlaneUpgrade,
            "before-control-plane-upgrade",
            before_control_plane_upgrade,
        ))
        .handler(Registration::new(
            AfterControlPlaneUpgrade,
            "after-control-plane-upgrade",
            after_control_plane_upgrade,
        ))
        .handler(Registration::new(
            BeforeWorkersUpgrade,
            "before-workers-upgrade",
            before_workers_upgrade,
        ))
        .handler(Registration::new(
            AfterWorkersUpgrade,
            "after-workers-upgrade",
            after_workers_upgrade,
        ))
        .handler(Registration::new(
            AfterClusterUpgrade,
            "after-cluster-upgrade",
            after_cluster_upgrade,
        ))
        .handler(Registration::new(
            GenerateUpgradePlan,
            "upgrade-plan",
            generate_upgrade_plan,
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_one_step_per_minor() {
        assert_eq!(plan("v1.35.0", "v1.37.0").unwrap(), ["v1.36.0", "v1.37.0"]);
        assert_eq!(plan("v1.34.0", "v1.35.0").unwrap(), ["v1.35.0"]);
        assert!(plan("v1.35.0", "v1.35.0").unwrap().is_empty());
        assert!(plan("v1.36.0", "v1.35.0").is_err());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn holds_while_the_annotation_names_the_hook_or_the_hook_at_this_version() {
        let mut cluster = Cluster::default();
        cluster.metadata.annotations.insert(
            HOLD.into(),
            "BeforeClusterUpgrade, AfterWorkersUpgrade@v1.36.0".into(),
        );
        let held: BeforeClusterUpgradeResponse =
            answer("BeforeClusterUpgrade", &cluster, "v1.35.0", json!({}));
        assert_eq!(held.retry_after_seconds(), 1);
        let at: AfterWorkersUpgradeResponse =
            answer("AfterWorkersUpgrade", &cluster, "v1.36.0", json!({}));
        assert_eq!(at.retry_after_seconds(), 1);
        let other: AfterWorkersUpgradeResponse =
            answer("AfterWorkersUpgrade", &cluster, "v1.37.0", json!({}));
        assert_eq!(other.retry_after_seconds(), 0);
    }
}
