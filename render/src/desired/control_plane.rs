//! What `computeControlPlane` copies into the control plane from the Cluster's topology and the
//! ClusterClass, besides names, metadata and references: the rollout date, the machines'
//! readiness gates and taints, and their deletion timeouts, each at the path of the control
//! plane's contract (v1beta1 or v1beta2), and only in the releases that copy it.

use super::input;
use crate::error::RenderError;
use crate::go_template::metav1_time_utc;
use crate::object::{get, set};
use capi_ext::CapiVersion;
use serde_json::{Map, Value, json};

/// The deletion timeouts: the v1beta2 field (seconds, under `machineTemplate.spec.deletion`)
/// and the v1beta1 one (a duration, under `machineTemplate`).
const DELETION_TIMEOUTS: [(&str, &str); 3] = [
    ("nodeDrainTimeoutSeconds", "nodeDrainTimeout"),
    ("nodeVolumeDetachTimeoutSeconds", "nodeVolumeDetachTimeout"),
    ("nodeDeletionTimeoutSeconds", "nodeDeletionTimeout"),
];

/// Sets the fields on `control_plane`. `topology` is the Cluster's `spec.topology.controlPlane`,
/// `class` the ClusterClass's `spec.controlPlane`, `v1beta1` whether the control plane uses
/// that contract.
pub(super) fn copy_machine_fields(
    control_plane: &mut Value,
    topology: &Value,
    class: &Value,
    v1beta1: bool,
    capi_version: CapiVersion,
) -> Result<(), RenderError> {
    // Cluster API 1.12 has neither the rollout date nor taints in its topology API.
    let since_1_13 = capi_version >= CapiVersion::new(1, 13);
    if since_1_13 {
        let after = get(topology, &["rollout", "after"]).and_then(Value::as_str);
        if let Some(after) = after.filter(|after| !after.is_empty()) {
            let after = metav1_time_utc(after).map_err(|err| {
                input(format!(
                    "Cluster spec.topology.controlPlane.rollout.after: {err} (write an RFC 3339 time, such as 2026-01-02T15:04:05Z)"
                ))
            })?;
            set(control_plane, &["spec", "rollout", "after"], json!(after));
        }
    }
    let machine_template: &[&str] = if v1beta1 {
        &["spec", "machineTemplate"]
    } else {
        &["spec", "machineTemplate", "spec"]
    };
    let at = |field: &'static str| -> Vec<&str> {
        let mut path = machine_template.to_vec();
        path.push(field);
        path
    };
    // A field the Cluster's topology sets wins over the class's (CAPI's precedence).
    let cluster_or_class = |path: &[&str]| {
        get(topology, path)
            .filter(|v| !v.is_null())
            .or_else(|| get(class, path).filter(|v| !v.is_null()))
    };
    let mut lists = vec![("readinessGates", &["conditionType", "polarity"][..])];
    if since_1_13 {
        lists.push(("taints", &["key", "value", "effect", "propagation"][..]));
    }
    for (field, keys) in lists {
        // The Cluster's list if it has one, else the class's; neither: the template's stays.
        if let Some(list) = cluster_or_class(&[field]) {
            set(control_plane, &at(field), typed_list(list, keys));
        }
    }
    for (seconds_field, duration_field) in DELETION_TIMEOUTS {
        let Some(seconds) = cluster_or_class(&["deletion", seconds_field]) else {
            continue;
        };
        let Some(seconds) = seconds.as_i64().and_then(|s| i32::try_from(s).ok()) else {
            return Err(input(format!(
                "spec.controlPlane.deletion.{seconds_field}: {seconds} is not a 32-bit integer number of seconds"
            )));
        };
        if v1beta1 {
            set(
                control_plane,
                &at(duration_field),
                json!(seconds_duration(seconds)),
            );
        } else {
            set(control_plane, &at("deletion"), {
                let mut deletion = get(control_plane, &at("deletion"))
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                deletion.insert(seconds_field.into(), json!(seconds));
                Value::Object(deletion)
            });
        }
    }
    Ok(())
}

/// A list as Go writes it back from CAPI's types (`MachineReadinessGate`, `MachineTaint`):
/// only the type's fields, empty strings left out (each is `omitempty`).
pub(super) fn typed_list(list: &Value, keys: &[&str]) -> Value {
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    Value::Array(
        items
            .iter()
            .map(|item| {
                let mut out = Map::new();
                for key in keys {
                    match item.get(*key) {
                        None | Some(Value::Null) => {}
                        Some(Value::String(s)) if s.is_empty() => {}
                        Some(value) => {
                            out.insert((*key).into(), value.clone());
                        }
                    }
                }
                Value::Object(out)
            })
            .collect(),
    )
}

/// `(time.Duration(seconds) * time.Second).String()`, how the v1beta1 contract's
/// `metav1.Duration` fields are written.
fn seconds_duration(seconds: i32) -> String {
    let sign = if seconds < 0 { "-" } else { "" };
    let total = i64::from(seconds).unsigned_abs();
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    if h > 0 {
        format!("{sign}{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{sign}{m}m{s}s")
    } else {
        format!("{sign}{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copied(topology: Value, class: Value, v1beta1: bool, capi: CapiVersion) -> Value {
        let mut control_plane = json!({"spec": {"machineTemplate": {"spec": {"readinessGates": [{"conditionType": "FromTemplate"}]}}}});
        copy_machine_fields(&mut control_plane, &topology, &class, v1beta1, capi).unwrap();
        control_plane
    }

    #[test]
    fn the_cluster_wins_over_the_class_and_the_template_stays_when_neither_sets_a_field() {
        let v1_14 = CapiVersion::new(1, 14);
        let class = json!({
            "readinessGates": [{"conditionType": "Class", "polarity": ""}],
            "taints": [{"key": "k", "effect": "NoSchedule", "propagation": "Always", "extra": 1}],
            "deletion": {"nodeDrainTimeoutSeconds": 100, "nodeDeletionTimeoutSeconds": 5},
        });
        let topology = json!({
            "rollout": {"after": "2026-01-02T16:04:05.5+01:00"},
            "readinessGates": [{"conditionType": "Cluster", "polarity": "Negative"}],
            "deletion": {"nodeDrainTimeoutSeconds": 7},
        });
        let cp = copied(topology, class.clone(), false, v1_14);
        assert_eq!(cp["spec"]["rollout"]["after"], "2026-01-02T15:04:05Z");
        let spec = &cp["spec"]["machineTemplate"]["spec"];
        assert_eq!(
            spec["readinessGates"],
            json!([{"conditionType": "Cluster", "polarity": "Negative"}])
        );
        assert_eq!(
            spec["taints"],
            json!([{"key": "k", "effect": "NoSchedule", "propagation": "Always"}])
        );
        assert_eq!(
            spec["deletion"],
            json!({"nodeDrainTimeoutSeconds": 7, "nodeDeletionTimeoutSeconds": 5})
        );
        // Neither sets readiness gates: the template's stay.
        let cp = copied(json!({}), json!({}), false, v1_14);
        assert_eq!(
            cp["spec"]["machineTemplate"]["spec"]["readinessGates"],
            json!([{"conditionType": "FromTemplate"}])
        );
        // The v1beta1 contract: durations beside the machine template's references.
        let cp = copied(json!({}), class.clone(), true, v1_14);
        let template = &cp["spec"]["machineTemplate"];
        assert_eq!(template["nodeDrainTimeout"], "1m40s");
        assert_eq!(template["nodeDeletionTimeout"], "5s");
        assert_eq!(template["taints"][0]["key"], "k");
        // Cluster API 1.12 copies neither taints nor the rollout date.
        let cp = copied(
            json!({"rollout": {"after": "2026-01-02T15:04:05Z"}}),
            class,
            false,
            CapiVersion::new(1, 12),
        );
        assert!(cp["spec"].get("rollout").is_none());
        assert!(
            cp["spec"]["machineTemplate"]["spec"]
                .get("taints")
                .is_none()
        );
    }

    #[test]
    fn durations_are_printed_as_go_prints_them() {
        for (seconds, text) in [
            (0, "0s"),
            (59, "59s"),
            (60, "1m0s"),
            (3600, "1h0m0s"),
            (3661, "1h1m1s"),
            (-10, "-10s"),
        ] {
            assert_eq!(seconds_duration(seconds), text);
        }
    }

    #[test]
    fn a_rollout_date_that_is_no_rfc3339_time_is_an_input_error() {
        let mut cp = json!({});
        let err = copy_machine_fields(
            &mut cp,
            &json!({"rollout": {"after": "tomorrow"}}),
            &json!({}),
            false,
            CapiVersion::new(1, 14),
        )
        .unwrap_err();
        assert!(err.to_string().contains("rollout.after"), "{err}");
    }
}
