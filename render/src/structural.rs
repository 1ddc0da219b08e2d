//! Fields of the Cluster and ClusterClass render reads that their CRDs (built in, of the Cluster
//! API release render models: [`Crds::capi`]) do not declare: strict field validation
//! (kubectl's default since Kubernetes 1.27) refuses them, and they are pruned otherwise, so
//! CAPI never sees them. render refuses them too, with the field's path and the nearest known
//! name.

use crate::apiserver::{Crds, did_you_mean};
use serde_json::Value;

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

/// The fields of `object` that the built-in CRD of its kind and version does not know (the
/// object's `metadata`, the API server's ObjectMeta, and its `status` are not checked); `None`
/// when render carries no CRD for it.
///
/// ```
/// use capi_ext_render::structural::unknown_fields;
/// let cluster = serde_json::json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
///     "metadata": {"name": "c"}, "spec": {"topolgy": {}}});
/// let unknown = unknown_fields(&cluster).unwrap();
/// assert_eq!(unknown[0].to_string(), r#"unknown field "spec.topolgy" (did you mean "spec.topology"?)"#);
/// ```
pub fn unknown_fields(object: &Value) -> Option<Vec<UnknownField>> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let crd = Crds::capi().get(api_version, kind)?;
    let version_name = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
    let version = crd.versions.iter().find(|v| v.name == version_name)?;
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("status");
    }
    let pruned = crate::apiserver::pruned_fields(&version.schema, &copy);
    Some(
        pruned
            .into_iter()
            .map(|path| UnknownField {
                did_you_mean: did_you_mean(&version.schema, &path),
                path,
            })
            .collect(),
    )
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
        let unknown = unknown_fields(&cluster).unwrap();
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
        let unknown = unknown_fields(&class).unwrap();
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
