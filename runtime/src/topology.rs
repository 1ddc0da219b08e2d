//! Helpers for topology hooks (GeneratePatches, ValidateTopology): typed builtin variables,
//! user variables read into serde types, and selection of request items by template kind
//! and holder field path.
//!
//! ```
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext::topology::TemplateItem;
//! use serde_json::json;
//!
//! let request: GeneratePatchesRequest = serde_json::from_value(json!({
//!     "variables": [
//!         {"name": "imageRepository", "value": "registry.example.com"},
//!         {"name": "builtin", "value": {"cluster": {"name": "c1", "namespace": "default",
//!             "topology": {"version": "v1.33.0", "classRef": {"name": "quick-start", "namespace": "default"}}}}}
//!     ],
//!     "items": [{
//!         "uid": "1", "object": {"kind": "KubeadmControlPlaneTemplate", "spec": {}},
//!         "holderReference": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
//!             "namespace": "default", "name": "c1", "fieldPath": "spec.controlPlaneRef"},
//!         "variables": [{"name": "builtin", "value": {"controlPlane": {"version": "v1.33.0", "replicas": 3}}}]
//!     }]
//! })).unwrap();
//!
//! let repo: String = request.variable("imageRepository").unwrap().unwrap();
//! assert_eq!(repo, "registry.example.com");
//! let item = request.items_of_kind("KubeadmControlPlaneTemplate").next().unwrap();
//! let builtins = item.builtins(&request.variables).unwrap();
//! assert_eq!(builtins.cluster.unwrap().topology.unwrap().version, "v1.33.0");
//! assert_eq!(builtins.control_plane.unwrap().replicas, Some(3));
//! ```

use crate::hooks::v1alpha1::{
    Builtins, GeneratePatchesRequest, GeneratePatchesRequestItem, HolderReference, LazyValue,
    ValidateTopologyRequest, ValidateTopologyRequestItem, Variable,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The name of the builtin variable.
pub const BUILTIN: &str = "builtin";

/// A variable whose value does not fit the requested type: which variable, where in its value,
/// and why.
#[derive(Debug, thiserror::Error)]
#[error("{}", describe(name, path, source))]
pub struct VariableError {
    /// The variable's name (empty when the variables as a whole did not fit, e.g. a required
    /// variable is missing: the message names it).
    pub name: String,
    /// Where decoding failed, from the variable's name down (`machine.zones[0].name`); empty
    /// when it failed at the top.
    pub path: String,
    /// Why decoding failed.
    #[source]
    pub source: serde_json::Error,
}

fn describe(name: &str, path: &str, source: &serde_json::Error) -> String {
    match (name, path) {
        ("", _) => format!("the variables do not have the expected shape: {source}"),
        (name, path) if path.is_empty() || path == name => {
            format!("variable `{name}` does not have the expected shape: {source}")
        }
        (name, path) => {
            format!("variable `{name}` does not have the expected shape at `{path}`: {source}")
        }
    }
}

/// Decodes a variable's value into `T` (from the text CAPI sent while it has not been read
/// as a `Value`), keeping the path where it failed as [`decode`] does.
fn decode_lazy<T: DeserializeOwned>(value: &LazyValue) -> Result<T, (String, serde_json::Error)> {
    match value.decode() {
        Ok(decoded) => Ok(decoded),
        Err(_) => decode(value.value()),
    }
}

/// Decodes `value` into `T`, keeping the path where it failed (`a.b[0].c`): decoded once
/// without tracking the path (what every request pays), and again with it only when that fails.
fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, (String, serde_json::Error)> {
    if let Ok(decoded) = T::deserialize(value) {
        return Ok(decoded);
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        (path, e.into_inner())
    })
}

/// Reads variable `name` from a list into `T`; `Ok(None)` when the variable is absent.
pub fn variable<T: DeserializeOwned>(
    variables: &[Variable],
    name: &str,
) -> Result<Option<T>, VariableError> {
    variables
        .iter()
        .rev()
        .find(|v| v.name == name)
        .map(|v| {
            decode_lazy(&v.value).map_err(|(path, source)| VariableError {
                name: name.to_string(),
                path: if path.is_empty() {
                    String::new()
                } else if path.starts_with('[') {
                    format!("{name}{path}")
                } else {
                    format!("{name}.{path}")
                },
                source,
            })
        })
        .transpose()
}

/// All user variables of a list (not `builtin`) read into one serde type, each variable a field;
/// an error names the variable and the path in it that did not fit.
pub fn variables_as<T: DeserializeOwned>(variables: &[Variable]) -> Result<T, VariableError> {
    let object: serde_json::Map<String, Value> = variables
        .iter()
        .filter(|v| v.name != BUILTIN)
        .map(|v| (v.name.clone(), v.value.value().clone()))
        .collect();
    decode(&Value::Object(object)).map_err(|(path, source)| VariableError {
        name: path
            .split(['.', '['])
            .next()
            .unwrap_or_default()
            .to_string(),
        path,
        source,
    })
}

/// The typed `builtin` variable of a list (empty when absent).
pub fn builtins(variables: &[Variable]) -> Result<Builtins, VariableError> {
    Ok(variable(variables, BUILTIN)?.unwrap_or_default())
}

/// `namespace/name` of the Cluster named by the `builtin` variable, if any.
pub fn cluster_key(variables: &[Variable]) -> Option<String> {
    crate::hooks::v1alpha1::builtin_cluster_key(variables)
}

/// Deep-merges JSON objects: keys of `overlay` win, nested objects are merged.
fn deep_merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                deep_merge(base.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

/// Global variables merged with an item's variables, the way CAPI's `MergeVariableMaps` does:
/// item values win, `builtin` is deep-merged.
pub fn merge_variables(global: &[Variable], item: &[Variable]) -> Vec<Variable> {
    let mut merged: Vec<Variable> = global.to_vec();
    for var in item {
        match merged.iter_mut().find(|v| v.name == var.name) {
            Some(existing) if var.name == BUILTIN => deep_merge(&mut existing.value, &var.value),
            Some(existing) => existing.value = var.value.clone(),
            None => merged.push(var.clone()),
        }
    }
    merged
}

/// What topology request items have in common.
pub trait TemplateItem {
    /// The template object.
    fn object(&self) -> &Value;
    /// Where the template is used.
    fn holder(&self) -> &HolderReference;
    /// The item's own variables.
    fn item_variables(&self) -> &[Variable];

    /// The template's `kind`.
    fn kind(&self) -> &str {
        self.object()
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The template's `apiVersion`.
    fn api_version(&self) -> &str {
        self.object()
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Whether the template is used by a holder of this kind at this field path,
    /// e.g. `("MachineDeployment", "spec.template.spec.infrastructureRef")`.
    fn held_by(&self, holder_kind: &str, field_path: &str) -> bool {
        self.holder().kind == holder_kind && self.holder().field_path == field_path
    }

    /// The template decoded into a typed struct.
    fn object_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(self.object())
    }

    /// Global and item variables merged (item wins, `builtin` deep-merged).
    fn variables(&self, global: &[Variable]) -> Vec<Variable> {
        merge_variables(global, self.item_variables())
    }

    /// The merged, typed builtins for this item.
    fn builtins(&self, global: &[Variable]) -> Result<Builtins, VariableError> {
        builtins(&self.variables(global))
    }

    /// A variable for this item (item overrides win) read into `T`.
    fn variable<T: DeserializeOwned>(
        &self,
        global: &[Variable],
        name: &str,
    ) -> Result<Option<T>, VariableError> {
        match variable(self.item_variables(), name)? {
            Some(v) if name != BUILTIN => Ok(Some(v)),
            _ => variable(&self.variables(global), name),
        }
    }
}

macro_rules! template_items {
    ($($item:ty => $req:ty),*) => {$(
        impl TemplateItem for $item {
            fn object(&self) -> &Value {
                &self.object
            }
            fn holder(&self) -> &HolderReference {
                &self.holder_reference
            }
            fn item_variables(&self) -> &[Variable] {
                &self.variables
            }
        }

        impl $req {
            /// A global variable read into `T` (`Ok(None)` when absent).
            pub fn variable<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, VariableError> {
                variable(&self.variables, name)
            }

            /// The user variables read into a `#[derive(Variables)]` type (or any serde type
            /// whose fields are variable names); `builtin` is left out.
            pub fn variables<T: DeserializeOwned>(&self) -> Result<T, VariableError> {
                variables_as(&self.variables)
            }

            /// The global typed builtins (only `cluster` is set at this level).
            pub fn builtins(&self) -> Result<Builtins, VariableError> {
                builtins(&self.variables)
            }

            /// Items whose template has this `kind`.
            pub fn items_of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a $item> + 'a {
                self.items.iter().filter(move |i| i.kind() == kind)
            }

            /// Items used by a holder of this kind at this field path.
            pub fn items_held_by<'a>(&'a self, holder_kind: &'a str, field_path: &'a str) -> impl Iterator<Item = &'a $item> + 'a {
                self.items.iter().filter(move |i| i.held_by(holder_kind, field_path))
            }
        }
    )*};
}

template_items!(GeneratePatchesRequestItem => GeneratePatchesRequest, ValidateTopologyRequestItem => ValidateTopologyRequest);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn var(name: &str, value: Value) -> Variable {
        Variable {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn item_values_override_and_builtin_deep_merges() {
        let global = vec![
            var("a", json!(1)),
            var("builtin", json!({"cluster": {"name": "c"}})),
        ];
        let item = vec![
            var("a", json!(2)),
            var("builtin", json!({"machineDeployment": {"class": "w"}})),
        ];
        let merged = merge_variables(&global, &item);
        assert_eq!(variable::<i32>(&merged, "a").unwrap(), Some(2));
        let b = builtins(&merged).unwrap();
        assert_eq!(b.cluster.unwrap().name, "c");
        assert_eq!(b.machine_deployment.unwrap().class, "w");
    }

    #[test]
    fn wrong_shapes_name_the_variable() {
        let vars = vec![var("replicas", json!("three"))];
        let err = variable::<i32>(&vars, "replicas").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("variable `replicas` does not have the expected shape"),
            "{err}"
        );
        assert_eq!(variable::<i32>(&vars, "missing").unwrap(), None);
    }

    #[test]
    fn errors_name_the_variable_and_the_path() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Zone {
            name: String,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct Vars {
            image_repository: Option<String>,
            zones: Vec<Zone>,
        }
        let vars = vec![
            var("imageRepository", json!("r")),
            var("zones", json!([{"name": "a"}, {"name": 1}])),
        ];
        let err = variables_as::<Vars>(&vars).unwrap_err();
        assert_eq!(
            (err.name.as_str(), err.path.as_str()),
            ("zones", "zones[1].name")
        );
        assert_eq!(
            err.to_string(),
            "variable `zones` does not have the expected shape at `zones[1].name`: invalid type: integer `1`, expected a string"
        );
        let err = variables_as::<Vars>(&[var("imageRepository", json!(42))]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "variable `imageRepository` does not have the expected shape: invalid type: integer `42`, expected a string"
        );
        let err = variables_as::<Vars>(&[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the variables do not have the expected shape: missing field `zones`"
        );
        let err = variable::<Vec<Zone>>(&vars, "zones").unwrap_err();
        assert_eq!(err.path, "zones[1].name");
    }

    #[test]
    fn cluster_key_from_builtin() {
        let vars = vec![var(
            "builtin",
            json!({"cluster": {"name": "c1", "namespace": "ns"}}),
        )];
        assert_eq!(cluster_key(&vars).as_deref(), Some("ns/c1"));
        assert_eq!(cluster_key(&[]), None);
        let sent = |text: &str| -> Vec<Variable> { serde_json::from_str(text).unwrap() };
        let vars = sent(
            r#"[{"name": "builtin", "value": {"cluster": {"topology": {"version": "v1.33.0"},
                "namespace": "ns", "name": "c\u0031", "uid": "u"}}}]"#,
        );
        assert_eq!(cluster_key(&vars).as_deref(), Some("ns/c1"));
        assert!(!vars[0].value.is_decoded(), "read from the text");
        let no_namespace = sent(r#"[{"name": "builtin", "value": {"cluster": {"name": "c1"}}}]"#);
        assert_eq!(cluster_key(&no_namespace).as_deref(), Some("/c1"));
        for text in [
            r#"[{"name": "builtin", "value": {"cluster": "c1"}}]"#,
            r#"[{"name": "builtin", "value": {"cluster": {"name": 1}}}]"#,
            r#"[{"name": "builtin", "value": {"controlPlane": {"name": "cp"}}}]"#,
            r#"[{"name": "builtin", "value": 5}]"#,
            r#"[{"name": "other", "value": {"cluster": {"name": "c1"}}}]"#,
        ] {
            assert_eq!(cluster_key(&sent(text)), None, "{text}");
        }
    }

    #[test]
    fn a_variable_read_into_a_type_is_read_from_its_text_and_errors_name_the_path() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Zone {
            name: String,
        }
        let vars: Vec<Variable> = serde_json::from_str(
            r#"[{"name": "zones", "value": [{"name": "a"}, {"name": 2}]},
                {"name": "builtin", "value": {"machineDeployment": {"class": "w", "name": "md"}}}]"#,
        )
        .unwrap();
        let builtins = builtins(&vars).unwrap();
        assert_eq!(builtins.machine_deployment.unwrap().class, "w");
        assert!(!vars[1].value.is_decoded(), "read from the text");
        let err = variable::<Vec<Zone>>(&vars, "zones").unwrap_err();
        assert_eq!(err.path, "zones[1].name");
    }
}
