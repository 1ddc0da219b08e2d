//! What a head whose DiscoverVariables differs does to the Clusters that exist: variables new,
//! removed or with another schema, judged against the values those Clusters hold.

use capi_ext_render::Definition;
use serde_json::Value;
use std::fmt::Write as _;

/// One variable whose definition differs between the base and the head.
#[derive(Debug, Clone, PartialEq)]
pub struct VariableChange {
    /// The ClusterClass (`namespace/name`) whose patches define it.
    pub class: String,
    /// The variable.
    pub variable: String,
    /// `added`, `removed` or `changed`.
    pub kind: &'static str,
    /// What it means for the Clusters of the class, in a sentence.
    pub meaning: String,
    /// The Clusters (`namespace/name`) it touches: those it makes invalid, or those that get a
    /// new default.
    pub clusters: Vec<String>,
}

/// Whether the Cluster (as stored) sets `name`, at the top level or in an override.
fn sets(cluster: &Value, name: &str) -> bool {
    let named = |list: Option<&Value>| {
        list.and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|v| v["name"].as_str() == Some(name)))
    };
    let topology = &cluster["spec"]["topology"];
    named(topology.get("variables"))
        || named(topology.pointer("/controlPlane/variables/overrides"))
        || ["machineDeployments", "machinePools"].iter().any(|list| {
            topology
                .pointer(&format!("/workers/{list}"))
                .and_then(Value::as_array)
                .is_some_and(|workers| {
                    workers
                        .iter()
                        .any(|w| named(w.pointer("/variables/overrides")))
                })
        })
}

/// Where two JSON values differ, as `path: before → after` lines (paths below `at`).
fn differences(at: &str, before: &Value, after: &Value, out: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let path = format!("{at}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => differences(&path, x, y, out),
                    (x, y) => out.push(format!("{path}: {} → {}", shown(x), shown(y))),
                }
            }
        }
        (a, b) if a != b => out.push(format!("{at}: {a} → {b}")),
        _ => {}
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_string(), Value::to_string)
}

fn default_of(definition: &Definition) -> Option<Value> {
    definition
        .variable
        .schema
        .open_api_v3_schema
        .default
        .clone()
}

/// The variables of `class` that differ between `base` and `head`, judged against
/// `clusters`: each Cluster of the class as CAPI stored it (`namespace/name`, the Cluster with
/// the values the base's webhook defaulted).
pub fn changes(
    class: &str,
    base: &[Definition],
    head: &[Definition],
    clusters: &[(String, &Value)],
) -> Vec<VariableChange> {
    let mut out = Vec::new();
    let setting = |name: &str| -> Vec<String> {
        clusters
            .iter()
            .filter(|(_, c)| sets(c, name))
            .map(|(label, _)| label.clone())
            .collect()
    };
    let not_setting = |name: &str| -> Vec<String> {
        clusters
            .iter()
            .filter(|(_, c)| !sets(c, name))
            .map(|(label, _)| label.clone())
            .collect()
    };
    for old in base {
        let name = &old.variable.name;
        if head.iter().any(|d| &d.variable.name == name) {
            continue;
        }
        let clusters = setting(name);
        out.push(VariableChange {
            class: class.into(),
            variable: name.clone(),
            kind: "removed",
            meaning: if clusters.is_empty() {
                format!("removed by the head (it came from {}); no Cluster sets it", old.from)
            } else {
                format!(
                    "removed by the head (it came from {}): the Clusters that set it are invalid (CAPI refuses a value of a variable the ClusterClass does not define)",
                    old.from
                )
            },
            clusters,
        });
    }
    for new in head {
        let name = &new.variable.name;
        let Some(old) = base.iter().find(|d| &d.variable.name == name) else {
            let required = new.variable.required == Some(true);
            let (meaning, clusters) = match (default_of(new), required) {
                (Some(default), _) => (
                    format!(
                        "new in the head (from {}), default {default}: the Clusters that do not set it get that value on their next reconcile",
                        new.from
                    ),
                    not_setting(name),
                ),
                (None, true) => (
                    format!(
                        "new in the head (from {}), required and without a default: the Clusters that do not set it are invalid; give it a default, or make it optional",
                        new.from
                    ),
                    not_setting(name),
                ),
                (None, false) => (
                    format!("new in the head (from {}), optional", new.from),
                    Vec::new(),
                ),
            };
            out.push(VariableChange {
                class: class.into(),
                variable: name.clone(),
                kind: "added",
                meaning,
                clusters,
            });
            continue;
        };
        let (Ok(before), Ok(after)) = (
            serde_json::to_value(&old.variable),
            serde_json::to_value(&new.variable),
        ) else {
            continue;
        };
        if before == after {
            continue;
        }
        let mut lines = Vec::new();
        differences(name, &before, &after, &mut lines);
        let mut meaning = String::from("changed by the head: ");
        meaning.push_str(&lines.join("; "));
        if default_of(old) != default_of(new) {
            let _ = write!(
                meaning,
                ". The Clusters that exist keep the value CAPI stored when they were created ({}); Clusters created from now on get {}",
                shown(default_of(old).as_ref()),
                shown(default_of(new).as_ref())
            );
        }
        meaning.push_str(". Each Cluster's value is checked against the new definition (above)");
        out.push(VariableChange {
            class: class.into(),
            variable: name.clone(),
            kind: "changed",
            meaning,
            clusters: setting(name),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(value: Value) -> Definition {
        Definition {
            from: "patches".into(),
            variable: serde_json::from_value(value).unwrap(),
        }
    }

    #[test]
    fn added_removed_and_changed_variables_name_the_clusters_they_touch() {
        let base = vec![
            definition(json!({"name": "region", "required": false,
                "schema": {"openAPIV3Schema": {"type": "string", "default": "eu"}}})),
            definition(json!({"name": "legacy", "required": false,
                "schema": {"openAPIV3Schema": {"type": "string"}}})),
        ];
        let head = vec![
            definition(json!({"name": "region", "required": false,
                "schema": {"openAPIV3Schema": {"type": "string", "default": "us", "enum": ["us"]}}})),
            definition(json!({"name": "tier", "required": true,
                "schema": {"openAPIV3Schema": {"type": "string"}}})),
            definition(json!({"name": "size", "required": false,
                "schema": {"openAPIV3Schema": {"type": "integer", "default": 3}}})),
        ];
        let a = json!({"spec": {"topology": {"variables": [
            {"name": "region", "value": "eu"}, {"name": "legacy", "value": "x"}]}}});
        let b = json!({"spec": {"topology": {"variables": [{"name": "tier", "value": "gold"}],
            "workers": {"machineDeployments": [{"variables": {"overrides": [{"name": "region", "value": "eu"}]}}]}}}});
        let clusters = vec![("ns/a".to_string(), &a), ("ns/b".to_string(), &b)];
        let changes = changes("ns/k", &base, &head, &clusters);
        let by = |name: &str| changes.iter().find(|c| c.variable == name).unwrap();
        assert_eq!(by("legacy").kind, "removed");
        assert_eq!(by("legacy").clusters, ["ns/a"]);
        assert!(by("legacy").meaning.contains("are invalid"));
        assert_eq!(by("tier").kind, "added");
        assert_eq!(by("tier").clusters, ["ns/a"]);
        assert!(
            by("tier")
                .meaning
                .contains("required and without a default")
        );
        assert_eq!(by("size").clusters, ["ns/a", "ns/b"]);
        assert!(
            by("size").meaning.contains("default 3"),
            "{}",
            by("size").meaning
        );
        let region = by("region");
        assert_eq!(region.kind, "changed");
        assert_eq!(region.clusters, ["ns/a", "ns/b"]);
        assert!(
            region
                .meaning
                .contains("region.schema.openAPIV3Schema.default: \"eu\" → \"us\"")
                && region
                    .meaning
                    .contains("region.schema.openAPIV3Schema.enum: (absent) → [\"us\"]")
                && region.meaning.contains("keep the value CAPI stored"),
            "{}",
            region.meaning
        );
        assert!(super::changes("ns/k", &base, &base, &clusters).is_empty());
    }
}
