//! The API server's rules for the objects render reads, by the schemas of the CRDs of the
//! Cluster API release (`render/crds/`, regenerated from the Go module proxy by
//! `scripts/update-crd-schemas.sh`): a field the schema does not know is refused by strict field
//! validation (kubectl's default since Kubernetes 1.27) and pruned otherwise, so CAPI never sees
//! it. render refuses it too, with the field's path and the nearest known name.

use serde_json::Value;
use std::sync::OnceLock;

/// A field the schema does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// Its path, e.g. `spec.topolgy` or `spec.topology.workers.machineDeployments[0].clas`.
    pub path: String,
    /// The known field of the same object nearest to it (a typo's likely intent).
    pub did_you_mean: Option<String>,
}

impl std::fmt::Display for UnknownField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown field \"{}\"", self.path)?;
        if let Some(name) = &self.did_you_mean {
            write!(f, " (did you mean \"{name}\"?)")?;
        }
        Ok(())
    }
}

fn schema(cell: &'static OnceLock<Value>, text: &'static str) -> &'static Value {
    cell.get_or_init(|| {
        let document: Value = serde_json::from_str(text).expect("render/crds holds JSON");
        document["openAPIV3Schema"].clone()
    })
}

/// The `openAPIV3Schema` of the CRD of `kind` (in `cluster.x-k8s.io/v1beta2`), when render
/// carries it.
pub fn crd_schema(kind: &str) -> Option<&'static Value> {
    static CLUSTER: OnceLock<Value> = OnceLock::new();
    static CLUSTER_CLASS: OnceLock<Value> = OnceLock::new();
    match kind {
        "Cluster" => Some(schema(
            &CLUSTER,
            include_str!("../crds/cluster-v1beta2.json"),
        )),
        "ClusterClass" => Some(schema(
            &CLUSTER_CLASS,
            include_str!("../crds/clusterclass-v1beta2.json"),
        )),
        _ => None,
    }
}

/// The fields of `object` its schema does not know (the object's `metadata`, the API server's
/// ObjectMeta, and its `status` are not checked).
///
/// ```
/// use capi_ext_render::structural::{crd_schema, unknown_fields};
/// let cluster = serde_json::json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
///     "metadata": {"name": "c"}, "spec": {"topolgy": {}}});
/// let unknown = unknown_fields(crd_schema("Cluster").unwrap(), &cluster);
/// assert_eq!(unknown[0].to_string(), r#"unknown field "spec.topolgy" (did you mean "spec.topology"?)"#);
/// ```
pub fn unknown_fields(schema: &Value, object: &Value) -> Vec<UnknownField> {
    let mut out = Vec::new();
    if let Some(fields) = object.as_object() {
        for (key, value) in fields {
            // The API server's ObjectMeta, and the status the controllers write (dropped from
            // what a user applies).
            if key == "metadata" || key == "status" {
                continue;
            }
            field(schema, key, value, "", &mut out);
        }
    }
    out
}

fn field(parent: &Value, key: &str, value: &Value, at: &str, out: &mut Vec<UnknownField>) {
    let path = if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    };
    let properties = parent.get("properties").and_then(Value::as_object);
    let embedded = parent
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true)
        && matches!(key, "apiVersion" | "kind" | "metadata");
    match (
        properties.and_then(|p| p.get(key)),
        parent.get("additionalProperties"),
    ) {
        (Some(schema), _) => walk(schema, value, &path, out),
        (None, Some(Value::Bool(true))) => {}
        (None, Some(schema @ Value::Object(_))) => walk(schema, value, &path, out),
        _ if embedded || preserves(parent) => {}
        _ => out.push(UnknownField {
            did_you_mean: properties.and_then(|p| {
                capi_ext_codegen::naming::did_you_mean(key, p.keys().map(String::as_str)).map(
                    |name| {
                        if at.is_empty() {
                            name.to_string()
                        } else {
                            format!("{at}.{name}")
                        }
                    },
                )
            }),
            path,
        }),
    }
}

fn preserves(schema: &Value) -> bool {
    schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
}

fn walk(schema: &Value, value: &Value, path: &str, out: &mut Vec<UnknownField>) {
    match value {
        Value::Object(fields) => {
            let known =
                schema.get("properties").is_some() || schema.get("additionalProperties").is_some();
            if !known {
                // An object the schema leaves open (`type: object` alone, or preserved).
                return;
            }
            for (key, value) in fields {
                field(schema, key, value, path, out);
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, value) in items.iter().enumerate() {
                    walk(item, value, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_of_a_cluster_are_named_with_the_nearest_known_one() {
        let cluster = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c", "anything": 1},
            "spec": {"topology": {
                "classRef": {"name": "k"}, "version": "v1.34.0",
                "controlPlane": {"replicas": 3, "metadata": {"labels": {"a": "b"}}},
                "workers": {"machineDeployments": [{"class": "w", "name": "md-0", "replica": 2}]},
                "variables": [{"name": "v", "value": {"free": {"form": true}}}]
            }}
        });
        let unknown = unknown_fields(crd_schema("Cluster").unwrap(), &cluster);
        let shown: Vec<String> = unknown.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                r#"unknown field "spec.topology.workers.machineDeployments[0].replica" (did you mean "spec.topology.workers.machineDeployments[0].replicas"?)"#
            ]
        );
        let class = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
            "spec": {"infrastructure": {"templateRef": {"name": "x", "kind": "K", "apiVersion": "v"}},
                     "variables": [{"name": "v", "required": false, "schema": {"openAPIV3Schema": {
                         "type": "string", "description": "a variable's doc is a field of its schema"}}}],
                     "pachtes": []},
            "status": {"variables": [{"name": "v", "definitions": [{"from": "inline", "required": false,
                "schema": {"openAPIV3Schema": {"type": "string", "description": "d"}}}]}],
                       "anything": "the controllers' to write"}});
        let unknown = unknown_fields(crd_schema("ClusterClass").unwrap(), &class);
        assert_eq!(unknown.len(), 1, "{unknown:?}");
        assert_eq!(unknown[0].path, "spec.pachtes");
        assert_eq!(unknown[0].did_you_mean.as_deref(), Some("spec.patches"));
    }

    #[test]
    fn a_misspelled_topology_is_named_before_anything_is_called() {
        let input = crate::Input::from_documents(vec![
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                   "metadata": {"name": "c1", "namespace": "default"},
                   "spec": {"topolgy": {"classRef": {"name": "k"}, "version": "v1.34.0"}}}),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
                   "metadata": {"name": "k", "namespace": "default"}, "spec": {}}),
        ])
        .unwrap();
        let err = input.check().unwrap_err().to_string();
        assert!(
            err.starts_with(r#"Cluster c1: unknown field "spec.topolgy" (did you mean "spec.topology"?); the API server refuses"#),
            "{err}"
        );
    }
}
