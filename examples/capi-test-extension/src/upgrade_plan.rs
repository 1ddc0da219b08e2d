//! `generate-upgrade-plan` (Go: `extension/handlers/upgradeplan`): the plan is made of the
//! Kubernetes versions the kind mapper knows, plus one `v1.N.0` for each minor up to the
//! target that the mapper does not know yet, chosen as Cluster API's
//! `desiredstate.GetUpgradePlanFromClusterClassVersions` chooses among a ClusterClass's
//! versions.

use crate::kind;
use crate::semver::Version;
use capi_ext::ExtensionBuilder;
use capi_ext::hooks::v1alpha1::*;

/// `GetUpgradePlanFromClusterClassVersions(versions)(desired, currentControlPlane)`: the
/// control plane steps from the current version (excluded) to the desired one, the last
/// version of each minor; no worker steps (Cluster API computes them).
pub fn control_plane_plan(
    versions: &[String],
    desired: &str,
    current_control_plane: &str,
) -> Result<Vec<String>, String> {
    let desired_version = Version::parse_tolerant(desired)
        .map_err(|e| format!("failed to parse desired version: {e}"))?;
    let current = Version::parse_tolerant(current_control_plane)
        .map_err(|e| format!("failed to parse current ControlPlane version: {e}"))?;
    if current.to_string() == desired_version.to_string() {
        return Ok(Vec::new());
    }
    let parse = |v: &String| {
        Version::parse_tolerant(v).map_err(|e| format!("failed to parse version {v}: {e}"))
    };
    let mut plan: Vec<&String> = Vec::new();
    for v in versions {
        let version = parse(v)?;
        if version.compare(&current).is_le() {
            continue;
        }
        if version.compare_with_build_tags(&desired_version) == 1 {
            break;
        }
        plan.push(v);
        if version.to_string() == desired_version.to_string() {
            break;
        }
    }
    let Some(first) = plan.first() else {
        return Ok(Vec::new());
    };
    let mut simplified: Vec<String> = Vec::new();
    let mut current_minor = current.minor;
    if current_minor == desired_version.minor {
        simplified.push((*first).clone());
    }
    for v in plan {
        let version = parse(v)?;
        if version.minor > current_minor {
            simplified.push(v.clone());
        }
        if version.minor == current_minor
            && let Some(last) = simplified.last_mut()
        {
            *last = v.clone();
        }
        current_minor = version.minor;
    }
    Ok(simplified)
}

/// The versions the plan is chosen from: the kind mapper's, then `v1.N.0` for every minor
/// after the newest it knows, and the target itself for the target's minor.
pub fn candidate_versions(target: &str) -> Result<Vec<String>, String> {
    let mut versions = kind::kubernetes_versions();
    let last_known_minor = versions
        .iter()
        .filter_map(|v| Version::parse(v.trim_start_matches('v')).ok())
        .map(|v| v.minor)
        .max()
        .unwrap_or(0);
    let target_minor = Version::parse(target.strip_prefix('v').unwrap_or(target))
        .map_err(|e| format!("the target version {target:?} is not a semantic version: {e}"))?
        .minor;
    for minor in last_known_minor + 1..=target_minor {
        if minor == target_minor {
            versions.push(target.to_string());
            break;
        }
        versions.push(format!("v1.{minor}.0"));
    }
    Ok(versions)
}

async fn generate_upgrade_plan(req: GenerateUpgradePlanRequest) -> GenerateUpgradePlanResponse {
    tracing::info!(cluster = %req.cluster.key(), "GenerateUpgradePlan is called");
    let plan = candidate_versions(&req.to_kubernetes_version).and_then(|versions| {
        control_plane_plan(
            &versions,
            &req.to_kubernetes_version,
            &req.from_control_plane_kubernetes_version,
        )
    });
    match plan {
        Ok(steps) => steps.into_iter().fold(
            GenerateUpgradePlanResponse::success(),
            |mut response, version| {
                response
                    .control_plane_upgrades
                    .push(UpgradeStep { version });
                response
            },
        ),
        Err(message) => GenerateUpgradePlanResponse::failure(message),
    }
}

/// Registers `generate-upgrade-plan` (the Go extension's name).
pub fn register<S: Clone + Send + Sync + 'static>(
    builder: ExtensionBuilder<S>,
) -> ExtensionBuilder<S> {
    builder.handler(capi_ext::Registration::new(
        GenerateUpgradePlan,
        "generate-upgrade-plan",
        generate_upgrade_plan,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    // Every case of Cluster API's TestGetUpgradePlanFromClusterClassVersions
    // (exp/topology/desiredstate/upgrade_plan_test.go): name, the ClusterClass's versions, the
    // desired and the current control plane version, the control plane plan it expects.
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static str,
        &'static str,
        &'static [&'static str],
    );
    const CAPI_CASES: &[Case] = &[
        (
            "return empty plans if everything is up to date",
            &["v1.31.0"],
            "v1.31.0",
            "v1.31.0",
            &[],
        ),
        (
            "return control plane upgrade plan for one minor",
            &["v1.31.0", "v1.32.0", "v1.32.1"],
            "v1.32.0",
            "v1.31.0",
            &["v1.32.0"],
        ),
        (
            "upgrade between patch version",
            &["v1.35.1", "v1.35.2"],
            "v1.35.2",
            "v1.35.1",
            &["v1.35.2"],
        ),
        (
            "upgrade between patch version",
            &["v1.35.1", "v1.35.2", "v1.35.3"],
            "v1.35.3",
            "v1.35.1",
            &["v1.35.3"],
        ),
        (
            "upgrade between patch version",
            &["v1.35.1", "v1.35.2", "v1.35.3"],
            "v1.35.2",
            "v1.35.1",
            &["v1.35.2"],
        ),
        (
            "return control plane upgrade plan for more than one minor",
            &["v1.31.0", "v1.32.0", "v1.33.0"],
            "v1.33.0",
            "v1.31.0",
            &["v1.32.0", "v1.33.0"],
        ),
        (
            "pick latest for every minor",
            &[
                "v1.31.0", "v1.31.1", "v1.32.0", "v1.32.2", "v1.32.3", "v1.33.0", "v1.33.1",
            ],
            "v1.33.1",
            "v1.31.0",
            &["v1.32.3", "v1.33.1"],
        ),
        (
            "pick latest for every minor with pro-release",
            &[
                "v1.31.0",
                "v1.31.1",
                "v1.32.0-alpha.0",
                "v1.32.0-alpha.1",
                "v1.32.0-alpha.2",
                "v1.33.0",
                "v1.33.1",
            ],
            "v1.33.1",
            "v1.31.0",
            &["v1.32.0-alpha.2", "v1.33.1"],
        ),
        (
            "pick latest for every minor with build tags",
            &[
                "v1.31.0",
                "v1.31.1",
                "v1.32.0+foo.1-bar.1",
                "v1.32.0+foo.2-bar.1",
                "v1.32.0+foo.2-bar.2",
                "v1.33.0",
                "v1.33.1",
            ],
            "v1.33.1",
            "v1.31.0",
            &["v1.32.0+foo.2-bar.2", "v1.33.1"],
        ),
        (
            "version with not sortable build tags",
            &[
                "v1.31.0+a",
                "v1.31.0+b",
                "v1.31.0+c",
                "v1.31.1+a",
                "v1.32.0+a",
                "v1.32.0+b",
                "v1.32.0+c",
                "v1.33.0+b",
                "v1.33.1+a",
                "v1.33.1+b",
                "v1.33.1+c",
            ],
            "v1.33.1+b",
            "v1.31.0+b",
            &["v1.32.0+c", "v1.33.1+b"],
        ),
        (
            "best effort control plane upgrade plan if current version is not on the list of Kubernetes versions (happy path, case 1)",
            &["v1.31.1", "v1.32.0", "v1.33.0"],
            "v1.33.0",
            "v1.31.0",
            &["v1.32.0", "v1.33.0"],
        ),
        (
            "best effort control plane upgrade plan if current version is not on the list of Kubernetes versions (happy path, case 2)",
            &["v1.31.0", "v1.32.0", "v1.33.0"],
            "v1.33.0",
            "v1.31.2",
            &["v1.32.0", "v1.33.0"],
        ),
        (
            "best effort control plane upgrade plan if current version is not on the list of Kubernetes versions (not happy path)",
            &["v1.32.0", "v1.33.0"],
            "v1.33.0",
            "v1.30.2",
            &["v1.32.0", "v1.33.0"],
        ),
    ];

    #[test]
    fn chooses_as_cluster_api_chooses() {
        for (name, versions, desired, current, want) in CAPI_CASES {
            let plan = control_plane_plan(&strings(versions), desired, current);
            assert_eq!(plan.as_deref(), Ok(&strings(want)[..]), "{name}");
        }
        assert!(control_plane_plan(&strings(&["v1.31.0"]), "nope", "v1.31.0").is_err());
    }

    #[test]
    fn minors_the_kind_mapper_does_not_know_yet_are_added() {
        let versions = candidate_versions("v1.99.3").unwrap();
        let known = kind::kubernetes_versions();
        let newest = Version::parse_tolerant(known.last().unwrap()).unwrap();
        assert_eq!(versions[known.len()], format!("v1.{}.0", newest.minor + 1));
        assert_eq!(versions.last().unwrap(), "v1.99.3");
    }

    #[tokio::test]
    async fn answers_the_steps_to_the_target() {
        let known = kind::kubernetes_versions();
        let from = &known[0];
        let to = known.last().unwrap();
        let mut req = GenerateUpgradePlanRequest::new();
        req.from_control_plane_kubernetes_version = from.clone();
        req.to_kubernetes_version = to.clone();
        let answer = generate_upgrade_plan(req).await;
        assert_eq!(answer.status, ResponseStatus::Success, "{}", answer.message);
        assert_eq!(&answer.control_plane_upgrades.last().unwrap().version, to);
        assert!(answer.workers_upgrades.is_empty());
    }
}
