//! The upgrade plan (`ComputeUpgradePlan` and `DefaultAndValidateUpgradePlans` of CAPI's
//! `exp/topology/desiredstate/upgrade_plan.go`): the versions the control plane and then the
//! workers go through on their way to the Cluster's version.

use super::semver::Version;
use std::collections::{BTreeMap, BTreeSet};

/// Where the control plane's plan comes from: one minor at a time (CAPI's default), the
/// ClusterClass's `spec.kubernetesVersions`, or its GenerateUpgradePlan extension (named, with
/// its answer when render called it).
pub(crate) enum Source<'a> {
    OneMinor,
    ClassVersions(&'a [String]),
    Extension(&'a str, Option<&'a Answer>),
}

/// What a GenerateUpgradePlan extension answered: the control plane's steps and the workers'
/// (empty: CAPI computes the fewest).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Answer {
    /// `controlPlaneUpgrades[].version`.
    pub control_plane: Vec<String>,
    /// `workersUpgrades[].version`.
    pub workers: Vec<String>,
}

/// The plans: the control plane's steps, the workers' steps, and the version of the workers
/// furthest behind (`UpgradeTracker.MinWorkersVersion`, "" without workers).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Plans {
    pub control_plane: Vec<String>,
    pub workers: Vec<String>,
    pub min_workers_version: String,
}

fn parse(version: &str, what: &str) -> Result<Version, String> {
    Version::parse_tolerant(version).map_err(|e| format!("failed to parse {what} {version}: {e}"))
}

/// The first half of `ComputeUpgradePlan`: the version of the workers furthest behind ("" without
/// workers), and whether an upgrade is due (the control plane or a worker is not at `desired`),
/// which is when CAPI asks for a plan.
pub(crate) fn min_workers(
    desired: &str,
    control_plane: &str,
    workers: &[(String, String)],
) -> Result<(String, bool), String> {
    let desired_v = parse(desired, "Cluster version")?;
    let control_plane_v = parse(control_plane, "ControlPlane version")?;
    let mut min_workers: Option<Version> = None;
    for (name, version) in workers {
        let v = Version::parse_tolerant(version)
            .map_err(|e| format!("failed to parse version {version} of {name}: {e}"))?;
        if min_workers
            .as_ref()
            .is_none_or(|min| lower_than_min(&v, min, &control_plane_v))
        {
            min_workers = Some(v);
        }
    }
    let due = control_plane_v.to_string() != desired_v.to_string()
        || min_workers
            .as_ref()
            .is_some_and(|v| v.to_string() != desired_v.to_string());
    let min_workers_version = min_workers
        .as_ref()
        .map(|v| format!("v{v}"))
        .unwrap_or_default();
    Ok((min_workers_version, due))
}

/// `ComputeUpgradePlan` for a control plane at `control_plane` and workers at `workers` (name,
/// version; those without a version left out), going to `desired`.
pub(crate) fn compute(
    desired: &str,
    control_plane: &str,
    workers: &[(String, String)],
    source: Source<'_>,
) -> Result<Plans, String> {
    let (min_workers_version, due) = min_workers(desired, control_plane, workers)?;
    let mut plans = Plans {
        min_workers_version: min_workers_version.clone(),
        ..Plans::default()
    };
    if !due {
        return Ok(plans);
    }
    let (control_plane_plan, workers_plan) = match source {
        Source::OneMinor => (one_minor(desired, control_plane)?, Vec::new()),
        Source::ClassVersions(versions) => (
            class_versions(versions, desired, control_plane)?,
            Vec::new(),
        ),
        Source::Extension(_, Some(answer)) => {
            (answer.control_plane.clone(), answer.workers.clone())
        }
        Source::Extension(extension, None) => {
            return Err(format!(
                "the ClusterClass takes its upgrade plans from the GenerateUpgradePlan extension `{extension}` (spec.upgrade.external.generateUpgradePlanExtension), and render was given no answer of it: CAPI asks it now for a plan from control plane {control_plane}{} to {desired}",
                if min_workers_version.is_empty() {
                    String::new()
                } else {
                    format!(" and workers {min_workers_version}")
                }
            ));
        }
    };
    plans.workers = default_and_validate(
        desired,
        control_plane,
        &min_workers_version,
        &control_plane_plan,
        workers_plan,
    )?;
    plans.control_plane = control_plane_plan;
    Ok(plans)
}

/// `isLowerThanMinVersion`: lower, or equal but for build tags and not the control plane's.
fn lower_than_min(v: &Version, min: &Version, control_plane: &Version) -> bool {
    match v.compare(min) {
        -1 => true,
        2 => v.to_string() != control_plane.to_string(),
        _ => false,
    }
}

/// `GetUpgradePlanOneMinor`: straight to the desired version, at most one minor ahead.
fn one_minor(desired: &str, control_plane: &str) -> Result<Vec<String>, String> {
    let desired_v = parse(desired, "desired version")?;
    let control_plane_v = parse(control_plane, "current ControlPlane version")?;
    if control_plane_v.to_string() == desired_v.to_string() {
        return Ok(Vec::new());
    }
    if desired_v.minor > control_plane_v.minor + 1 {
        return Err(format!(
            "cannot compute an upgrade plan from {control_plane} to {desired}"
        ));
    }
    Ok(vec![desired.to_string()])
}

/// `GetUpgradePlanFromClusterClassVersions`: the class's versions between the control plane's
/// and the desired one, the last of each minor.
fn class_versions(
    versions: &[String],
    desired: &str,
    control_plane: &str,
) -> Result<Vec<String>, String> {
    let desired_v = parse(desired, "desired version")?;
    let control_plane_v = parse(control_plane, "current ControlPlane version")?;
    if control_plane_v.to_string() == desired_v.to_string() {
        return Ok(Vec::new());
    }
    let mut plan = Vec::new();
    for version in versions {
        let v = Version::parse_tolerant(version)
            .map_err(|e| format!("failed to parse version {version}: {e}"))?;
        if v.compare_release_i8(&control_plane_v) <= 0 {
            continue;
        }
        if v.compare(&desired_v) == 1 {
            break;
        }
        plan.push((version.clone(), v.minor));
        if v.to_string() == desired_v.to_string() {
            break;
        }
    }
    if plan.is_empty() {
        return Ok(Vec::new());
    }
    let mut simplified: Vec<String> = Vec::new();
    let mut current_minor = control_plane_v.minor;
    if current_minor == desired_v.minor {
        simplified.push(plan[0].0.clone());
    }
    for (version, minor) in plan {
        if minor > current_minor {
            simplified.push(version.clone());
        }
        if minor == current_minor && !simplified.is_empty() {
            let last = simplified.len() - 1;
            simplified[last] = version;
        }
        current_minor = minor;
    }
    Ok(simplified)
}

/// `DefaultAndValidateUpgradePlans`: checks the control plane's plan and makes or checks the
/// workers' (a step at most every three minors, on versions of the control plane's plan).
pub(crate) fn default_and_validate(
    desired: &str,
    control_plane: &str,
    min_workers: &str,
    control_plane_plan: &[String],
    mut workers_plan: Vec<String>,
) -> Result<Vec<String>, String> {
    let desired_v = parse(desired, "Cluster version")?;
    let control_plane_v = parse(control_plane, "ControlPlane version")?;
    let min_workers_v = if min_workers.is_empty() {
        None
    } else {
        Some(parse(min_workers, "min workers version")?)
    };
    let mut minors = BTreeMap::from([(control_plane_v.minor, control_plane.to_string())]);
    let mut order = BTreeMap::from([(control_plane.to_string(), -1i64)]);
    if control_plane_v.compare(&desired_v) != 0 {
        let mut current = control_plane_v.clone();
        for (i, target) in control_plane_plan.iter().enumerate() {
            order.insert(target.clone(), i as i64);
            let target_v = Version::parse_tolerant(target).map_err(|e| {
                format!("invalid ControlPlane upgrade plan: item {i}; failed to parse version {target}: {e}")
            })?;
            if target_v.compare(&current) <= 0 {
                return Err(format!(
                    "invalid ControlPlane upgrade plan: item {i}; version {target} must be greater than v{current}"
                ));
            }
            if current.minor != target_v.minor && current.minor + 1 != target_v.minor {
                return Err(format!(
                    "invalid ControlPlane upgrade plan: item {i}; expecting a version with minor {} or {}, found version {target}",
                    current.minor,
                    current.minor + 1
                ));
            }
            minors.insert(target_v.minor, target.clone());
            current = target_v;
        }
        if current.compare(&desired_v) != 0 {
            return Err(format!(
                "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version {desired}, ends with v{current} instead"
            ));
        }
    } else if !control_plane_plan.is_empty() {
        return Err(
            "invalid ControlPlane upgrade plan: control plane is already at the desired version"
                .into(),
        );
    }

    match min_workers_v {
        Some(min) if min.compare(&desired_v) != 0 => {
            if !control_plane_plan.is_empty() {
                let known: BTreeSet<&str> = control_plane_plan
                    .iter()
                    .map(String::as_str)
                    .chain([control_plane])
                    .collect();
                let unknown: BTreeSet<&str> = workers_plan
                    .iter()
                    .map(String::as_str)
                    .filter(|v| !known.contains(v))
                    .collect();
                if !unknown.is_empty() {
                    return Err(format!(
                        "invalid workers upgrade plan: versions {} doesn't match any versions in the control plane upgrade plan nor the control plane version",
                        unknown.into_iter().collect::<Vec<_>>().join(",")
                    ));
                }
            }
            if workers_plan.is_empty() {
                for i in 0..desired_v.minor.saturating_sub(min.minor) {
                    if i > 0 && i % 3 == 0 {
                        match minors.get(&(min.minor + i)) {
                            Some(version) => workers_plan.push(version.clone()),
                            // CAPI wraps a nil error here, which is no error: no plan at all.
                            None => return Ok(Vec::new()),
                        }
                    }
                }
                if workers_plan.last().map(String::as_str) != Some(desired) {
                    workers_plan.push(desired.to_string());
                }
            }
            let mut current = min;
            for (i, target) in workers_plan.iter().enumerate() {
                let target_v = Version::parse_tolerant(target).map_err(|e| {
                    format!("invalid workers upgrade plan, item {i}; failed to parse version {target}: {e}")
                })?;
                match target_v.compare(&current) {
                    c if c <= 0 => {
                        return Err(format!(
                            "invalid workers upgrade plan, item {i}; version {target} must be greater than v{current}"
                        ));
                    }
                    2 => {
                        let target_order = order.get(target).ok_or_else(|| {
                            format!("invalid workers upgrade plan, item {i}; failer to determine version {target} order")
                        })?;
                        let current_order = order.get(&format!("v{current}")).ok_or_else(|| {
                            format!("failer to determine version v{current} order")
                        })?;
                        if target_order < current_order {
                            return Err(format!(
                                "invalid workers upgrade plan, item {i}; version {target} must be before v{current}"
                            ));
                        }
                    }
                    _ => {}
                }
                if target_v.minor.wrapping_sub(current.minor) > 3 {
                    return Err(format!(
                        "invalid workers upgrade plan, item {i}; workers cannot go from minor {} (v{current}) to minor {} ({target}), an intermediate step is required to comply with Kubernetes version skew rules",
                        current.minor, target_v.minor
                    ));
                }
                current = target_v;
            }
            if current.compare(&desired_v) != 0 {
                return Err(format!(
                    "invalid workers upgrade plan; workers upgrade plan must end with version {desired}, ends with v{current} instead"
                ));
            }
        }
        _ if !workers_plan.is_empty() => {
            return Err("invalid worker upgrade plan; there are no workers or workers already at the desired version".into());
        }
        _ => {}
    }
    Ok(workers_plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workers(versions: &[&str]) -> Vec<(String, String)> {
        versions
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("md-{i}"), v.to_string()))
            .collect()
    }

    // Cases of CAPI's upgrade_plan_test.go.
    #[test]
    fn one_minor_plans_as_capi() {
        let p = compute(
            "v1.34.0",
            "v1.33.0",
            &workers(&["v1.33.0"]),
            Source::OneMinor,
        )
        .unwrap();
        assert_eq!(p.control_plane, ["v1.34.0"]);
        assert_eq!(p.workers, ["v1.34.0"]);
        assert_eq!(p.min_workers_version, "v1.33.0");
        // Already there: no plan.
        let p = compute(
            "v1.34.0",
            "v1.34.0",
            &workers(&["v1.34.0"]),
            Source::OneMinor,
        )
        .unwrap();
        assert!(p.control_plane.is_empty() && p.workers.is_empty());
        // The control plane there, workers behind: workers only.
        let p = compute(
            "v1.34.0",
            "v1.34.0",
            &workers(&["v1.33.0"]),
            Source::OneMinor,
        )
        .unwrap();
        assert!(p.control_plane.is_empty());
        assert_eq!(p.workers, ["v1.34.0"]);
        // Two minors at once: no plan can be computed.
        let err = compute("v1.35.0", "v1.33.0", &[], Source::OneMinor).unwrap_err();
        assert_eq!(
            err,
            "cannot compute an upgrade plan from v1.33.0 to v1.35.0"
        );
    }

    #[test]
    fn class_versions_plan_the_last_patch_of_each_minor() {
        let versions: Vec<String> = [
            "v1.30.0", "v1.30.1", "v1.31.0", "v1.31.2", "v1.32.0", "v1.33.0",
        ]
        .map(String::from)
        .into();
        let plan = class_versions(&versions, "v1.33.0", "v1.30.0").unwrap();
        assert_eq!(plan, ["v1.31.2", "v1.32.0", "v1.33.0"]);
        let plan = class_versions(&versions, "v1.30.1", "v1.30.0").unwrap();
        assert_eq!(plan, ["v1.30.1"]);
        // Workers more than three minors behind step on the control plane's versions.
        let p = compute(
            "v1.33.0",
            "v1.29.0",
            &workers(&["v1.29.0"]),
            Source::ClassVersions(&["v1.30.0", "v1.31.0", "v1.32.0", "v1.33.0"].map(String::from)),
        )
        .unwrap();
        assert_eq!(
            p.control_plane,
            ["v1.30.0", "v1.31.0", "v1.32.0", "v1.33.0"]
        );
        assert_eq!(p.workers, ["v1.32.0", "v1.33.0"]);
    }

    #[test]
    fn plans_are_validated_as_capi_validates_them() {
        let err = default_and_validate("v1.34.0", "v1.32.0", "", &["v1.34.0".into()], Vec::new())
            .unwrap_err();
        assert!(
            err.contains("expecting a version with minor 32 or 33"),
            "{err}"
        );
        let err = default_and_validate("v1.34.0", "v1.34.0", "", &["v1.34.0".into()], Vec::new())
            .unwrap_err();
        assert!(err.contains("already at the desired version"), "{err}");
        let err =
            default_and_validate("v1.34.0", "v1.34.0", "v1.34.0", &[], vec!["v1.34.0".into()])
                .unwrap_err();
        assert!(err.contains("no workers or workers already"), "{err}");
    }
}
