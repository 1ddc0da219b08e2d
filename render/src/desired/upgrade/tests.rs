//! The upgrade sequence, on the situations of CAPI's `desired_state_test.go`
//! (`TestComputeControlPlaneVersion`, `TestComputeMachineDeploymentVersion`).

use super::*;
use serde_json::json;

const V1_14: CapiVersion = CapiVersion::new(1, 14);

fn cluster(version: &str, annotations: Value, workers: Value) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "default", "annotations": annotations},
        "spec": {"topology": {"version": version, "workers": {"machineDeployments": workers}}},
    })
}

fn control_plane(spec: &str, status: Option<&str>) -> Value {
    let mut cp =
        json!({"kind": "ControlPlane", "metadata": {"name": "cp"}, "spec": {"version": spec}});
    if let Some(status) = status {
        cp["status"] = json!({"version": status});
    }
    cp
}

fn deployment(name: &str, version: &str) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
        "metadata": {"name": name, "namespace": "default", "labels": {
            CLUSTER_NAME_LABEL: "c1", TOPOLOGY_OWNED_LABEL: "",
            "topology.cluster.x-k8s.io/deployment-name": name}},
        "spec": {"selector": {"matchLabels": {"md": name}}, "template": {"spec": {"version": version}}},
    })
}

fn machine(name: &str, deployment: &str, version: &str) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": name, "namespace": "default", "labels": {"md": deployment}},
        "spec": {"version": version},
    })
}

fn topology_entry(name: &str) -> Value {
    json!({"name": name, "class": "default-worker"})
}

/// Runs the sequence: the control plane's version, the workers' in the topology's order, and
/// the Cluster's pending hooks after.
fn run(
    cluster: Value,
    cp: Option<Value>,
    current: Vec<Value>,
    capi: CapiVersion,
) -> Result<(String, Vec<String>, String, Vec<String>), RenderError> {
    run_blocking(cluster, cp, current, capi, &[])
}

/// [`run`] with the lifecycle hooks `blocking` answering with `retryAfterSeconds`.
fn run_blocking(
    mut cluster: Value,
    cp: Option<Value>,
    current: Vec<Value>,
    capi: CapiVersion,
    blocking: &[UpgradeHook],
) -> Result<(String, Vec<String>, String, Vec<String>), RenderError> {
    let mut all = current.clone();
    all.extend(cp.clone());
    let blocking = blocking.iter().copied().collect();
    let mut sequencing = Sequencing::new(
        &cluster,
        &json!({}),
        cp.as_ref(),
        &all,
        capi,
        None,
        &blocking,
    )?;
    let cp_version = sequencing.control_plane_version(cp.as_ref(), &mut cluster)?;
    let topology = cluster["spec"]["topology"].clone();
    let mut versions = Vec::new();
    for entry in topology["workers"]["machineDeployments"]
        .as_array()
        .unwrap()
    {
        let existing = current
            .iter()
            .find(|o| o["kind"] == "MachineDeployment" && o["metadata"]["name"] == entry["name"]);
        versions.push(sequencing.worker_version(
            WorkerKind::MachineDeployment,
            &topology,
            entry,
            existing,
        )?);
    }
    let pending = string(&cluster, &["metadata", "annotations", PENDING_HOOKS]).to_string();
    Ok((cp_version, versions, pending, sequencing.warnings))
}

#[test]
fn a_new_control_plane_and_new_workers_get_the_topology_version() {
    let (cp, mds, pending, _) = run(
        cluster("v1.34.0", json!({}), json!([topology_entry("md1")])),
        None,
        vec![],
        V1_14,
    )
    .unwrap();
    assert_eq!(
        (cp.as_str(), mds, pending.as_str()),
        ("v1.34.0", vec!["v1.34.0".to_string()], "")
    );
}

#[test]
fn nothing_moves_while_the_control_plane_is_provisioning() {
    let (cp, mds, pending, warnings) = run(
        cluster("v1.34.0", json!({}), json!([topology_entry("md1")])),
        Some(control_plane("v1.33.0", None)),
        vec![deployment("md1", "v1.33.0")],
        V1_14,
    )
    .unwrap();
    assert_eq!(cp, "v1.33.0");
    assert_eq!(mds, ["v1.33.0"]);
    assert_eq!(pending, "");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_stable_control_plane_starts_the_upgrade_and_the_workers_wait() {
    for (capi, expected_pending) in [
        (V1_14, "AfterClusterUpgrade"),
        (CapiVersion::new(1, 13), "AfterClusterUpgrade"),
        // Before 1.13 the step's hooks are recorded with it.
        (
            CapiVersion::new(1, 12),
            "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade",
        ),
    ] {
        let (cp, mds, pending, warnings) = run(
            cluster("v1.34.0", json!({}), json!([topology_entry("md1")])),
            Some(control_plane("v1.33.0", Some("v1.33.0"))),
            vec![deployment("md1", "v1.33.0")],
            capi,
        )
        .unwrap();
        assert_eq!(cp, "v1.34.0");
        assert_eq!(mds, ["v1.33.0"]);
        assert_eq!(pending, expected_pending, "{capi}");
        assert!(
            warnings.iter().any(|w| w.contains("BeforeClusterUpgrade")),
            "{warnings:?}"
        );
    }
}

#[test]
fn a_before_upgrade_annotation_holds_the_upgrade() {
    let (cp, _, pending, _) = run(
        cluster(
            "v1.34.0",
            json!({"before-upgrade.hook.cluster.cluster.x-k8s.io/hold": ""}),
            json!([]),
        ),
        Some(control_plane("v1.33.0", Some("v1.33.0"))),
        vec![],
        V1_14,
    )
    .unwrap();
    assert_eq!((cp.as_str(), pending.as_str()), ("v1.33.0", ""));
}

#[test]
fn an_upgrading_control_plane_keeps_its_version_and_its_hooks_are_recovered() {
    let (cp, mds, pending, _) = run(
        cluster("v1.34.0", json!({}), json!([topology_entry("md1")])),
        Some(control_plane("v1.34.0", Some("v1.33.0"))),
        vec![deployment("md1", "v1.33.0")],
        V1_14,
    )
    .unwrap();
    assert_eq!(cp, "v1.34.0");
    assert_eq!(mds, ["v1.33.0"]);
    assert_eq!(
        pending,
        "AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade"
    );
    // 1.14 reads status.versions first.
    let mut upgraded = control_plane("v1.34.0", Some("v1.33.0"));
    upgraded["status"]["versions"] = json!([{"version": "v1.34.0", "replicas": 3}]);
    let (_, mds, _, _) = run(
        cluster("v1.34.0", json!({}), json!([topology_entry("md1")])),
        Some(upgraded),
        vec![deployment("md1", "v1.33.0")],
        V1_14,
    )
    .unwrap();
    assert_eq!(mds, ["v1.34.0"]);
}

#[test]
fn workers_follow_one_at_a_time_in_order_unless_deferred_or_held() {
    let entries = json!([
        topology_entry("md1"),
        topology_entry("md2"),
        topology_entry("md3")
    ]);
    let current = vec![
        deployment("md1", "v1.33.0"),
        deployment("md2", "v1.33.0"),
        deployment("md3", "v1.33.0"),
    ];
    let pending =
        json!({PENDING_HOOKS: "AfterClusterUpgrade,AfterControlPlaneUpgrade,BeforeWorkersUpgrade"});
    let (cp, mds, hooks, warnings) = run(
        cluster("v1.34.0", pending.clone(), entries.clone()),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        current.clone(),
        V1_14,
    )
    .unwrap();
    assert_eq!(cp, "v1.34.0");
    assert_eq!(mds, ["v1.34.0", "v1.33.0", "v1.33.0"]);
    // Called (no extension serves them, as render assumes) and done.
    assert_eq!(hooks, "AfterClusterUpgrade");
    assert_eq!(warnings.len(), 2, "{warnings:?}");

    let mut concurrent = pending.clone();
    concurrent[UPGRADE_CONCURRENCY] = json!("2");
    let (_, mds, _, _) = run(
        cluster("v1.34.0", concurrent, entries),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        current.clone(),
        V1_14,
    )
    .unwrap();
    assert_eq!(mds, ["v1.34.0", "v1.34.0", "v1.33.0"]);

    let held = json!([
        {"name": "md1", "class": "w", "metadata": {"annotations": {DEFER_UPGRADE: ""}}},
        {"name": "md2", "class": "w", "metadata": {"annotations": {HOLD_UPGRADE_SEQUENCE: ""}}},
        topology_entry("md3"),
    ]);
    let (_, mds, _, _) = run(
        cluster("v1.34.0", pending, held),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        current,
        V1_14,
    )
    .unwrap();
    assert_eq!(mds, ["v1.33.0", "v1.33.0", "v1.33.0"]);
}

#[test]
fn a_deployment_whose_machines_are_behind_is_upgrading() {
    let entries = json!([topology_entry("md1"), topology_entry("md2")]);
    let current = vec![
        deployment("md1", "v1.34.0"),
        deployment("md2", "v1.33.0"),
        machine("m1", "md1", "v1.33.0"),
    ];
    let (_, mds, _, _) = run(
        cluster("v1.34.0", json!({}), entries.clone()),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        current,
        V1_14,
    )
    .unwrap();
    // md1's rollout takes the one slot: md2 waits.
    assert_eq!(mds, ["v1.34.0", "v1.33.0"]);
    let err = run(
        cluster("v1.34.0", json!({}), entries),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        vec![deployment("md1", "v1.34.0"), machine("m1", "md1", "")],
        V1_14,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("Machine m1 has no version"),
        "{err}"
    );
}

#[test]
fn an_upgrade_no_plan_can_reach_fails() {
    let err = run(
        cluster("v1.35.0", json!({}), json!([])),
        Some(control_plane("v1.33.0", Some("v1.33.0"))),
        vec![],
        V1_14,
    )
    .unwrap_err();
    assert_eq!(err.step(), crate::Step::Upgrade);
    assert!(
        err.to_string()
            .contains("cannot compute an upgrade plan from v1.33.0 to v1.35.0"),
        "{err}"
    );
}

#[test]
fn a_blocking_before_hook_keeps_the_control_plane_where_it_is() {
    let stable = || Some(control_plane("v1.33.0", Some("v1.33.0")));
    let start = || cluster("v1.34.0", json!({}), json!([topology_entry("md1")]));
    // BeforeClusterUpgrade: the upgrade does not start, nothing is recorded.
    let (cp, mds, pending, warnings) = run_blocking(
        start(),
        stable(),
        vec![deployment("md1", "v1.33.0")],
        V1_14,
        &[UpgradeHook::BeforeClusterUpgrade],
    )
    .unwrap();
    assert_eq!((cp.as_str(), pending.as_str()), ("v1.33.0", ""));
    assert_eq!(mds, ["v1.33.0"]);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("BeforeClusterUpgrade hook here") && w.contains("it blocks")),
        "{warnings:?}"
    );
    // BeforeControlPlaneUpgrade: the upgrade has started (AfterClusterUpgrade is pending), the
    // step has not; before 1.13 the step's hooks are not recorded either.
    for capi in [V1_14, CapiVersion::new(1, 12)] {
        let (cp, _, pending, _) = run_blocking(
            start(),
            stable(),
            vec![deployment("md1", "v1.33.0")],
            capi,
            &[UpgradeHook::BeforeControlPlaneUpgrade],
        )
        .unwrap();
        assert_eq!(
            (cp.as_str(), pending.as_str()),
            ("v1.33.0", "AfterClusterUpgrade"),
            "{capi}"
        );
    }
}

#[test]
fn a_blocking_hook_after_the_control_plane_step_keeps_the_workers_and_stays_pending() {
    let all_pending = json!({PENDING_HOOKS: "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade"});
    for (hook, left) in [
        (
            UpgradeHook::AfterControlPlaneUpgrade,
            "AfterClusterUpgrade,AfterControlPlaneUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade",
        ),
        (
            UpgradeHook::BeforeWorkersUpgrade,
            "AfterClusterUpgrade,AfterWorkersUpgrade,BeforeWorkersUpgrade",
        ),
    ] {
        let (cp, mds, pending, _) = run_blocking(
            cluster(
                "v1.34.0",
                all_pending.clone(),
                json!([topology_entry("md1")]),
            ),
            Some(control_plane("v1.34.0", Some("v1.34.0"))),
            vec![deployment("md1", "v1.33.0")],
            V1_14,
            &[hook],
        )
        .unwrap();
        assert_eq!(cp, "v1.34.0");
        assert_eq!(mds, ["v1.33.0"], "{hook}");
        assert_eq!(pending, left, "{hook}");
    }
    // AfterWorkersUpgrade: the workers are at the step; the next step waits for the hook, and
    // takes it when the hook does not block.
    for (blocking, next, left) in [
        (
            &[UpgradeHook::AfterWorkersUpgrade][..],
            "v1.34.0",
            "AfterClusterUpgrade,AfterWorkersUpgrade",
        ),
        (&[], "v1.35.0", "AfterClusterUpgrade"),
    ] {
        let (cp, mds, pending, _) = run_blocking(
            cluster(
                "v1.35.0",
                json!({PENDING_HOOKS: "AfterClusterUpgrade,AfterWorkersUpgrade"}),
                json!([topology_entry("md1")]),
            ),
            Some(control_plane("v1.34.0", Some("v1.34.0"))),
            vec![deployment("md1", "v1.34.0")],
            V1_14,
            blocking,
        )
        .unwrap();
        assert_eq!((cp.as_str(), mds[0].as_str()), (next, "v1.34.0"));
        assert_eq!(pending, left, "{blocking:?}");
    }
}

#[test]
fn a_blocking_hook_that_capi_does_not_reach_changes_nothing() {
    let (cp, mds, pending, _) = run_blocking(
        cluster("v1.34.0", json!({}), json!([topology_entry("md1")])),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        vec![deployment("md1", "v1.34.0")],
        V1_14,
        &UpgradeHook::ALL,
    )
    .unwrap();
    assert_eq!(
        (cp.as_str(), mds[0].as_str(), pending.as_str()),
        ("v1.34.0", "v1.34.0", "")
    );
}

#[test]
fn a_new_worker_is_pending_create_while_the_control_plane_is_not_stable_or_a_hook_blocks() {
    let entries = json!([topology_entry("md1"), topology_entry("md-new")]);
    let pending = |warnings: &[String]| {
        warnings
            .iter()
            .filter(|w| w.contains("MachineDeployment topology md-new is new"))
            .count()
    };
    // The control plane starts its upgrade in this reconcile: md-new waits to be created.
    let (_, mds, _, warnings) = run(
        cluster("v1.34.0", json!({}), entries.clone()),
        Some(control_plane("v1.33.0", Some("v1.33.0"))),
        vec![deployment("md1", "v1.33.0")],
        V1_14,
    )
    .unwrap();
    assert_eq!(mds, ["v1.33.0", "v1.34.0"]);
    assert_eq!(pending(&warnings), 1, "{warnings:?}");
    // Stable, nothing blocking: created at once.
    let (_, _, _, warnings) = run(
        cluster("v1.34.0", json!({}), entries.clone()),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        vec![deployment("md1", "v1.34.0")],
        V1_14,
    )
    .unwrap();
    assert_eq!(pending(&warnings), 0, "{warnings:?}");
    // Stable, but AfterControlPlaneUpgrade blocks: it waits.
    let (_, _, _, warnings) = run_blocking(
        cluster(
            "v1.34.0",
            json!({PENDING_HOOKS: "AfterClusterUpgrade,AfterControlPlaneUpgrade"}),
            entries,
        ),
        Some(control_plane("v1.34.0", Some("v1.34.0"))),
        vec![deployment("md1", "v1.34.0")],
        V1_14,
        &[UpgradeHook::AfterControlPlaneUpgrade],
    )
    .unwrap();
    assert_eq!(pending(&warnings), 1, "{warnings:?}");
}
