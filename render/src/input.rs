//! What a render reads: the Cluster, its ClusterClass and the templates, from YAML or values,
//! and the checks of their kinds and references before anything is called.

use crate::error::RenderError;
use crate::object::{get, string};
use capi_ext::hooks::v1alpha1::Settings;
use serde_json::Value;

/// What to render: the Cluster, its ClusterClass and the templates the class references.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// A `cluster.x-k8s.io/v1beta2` Cluster with `spec.topology`.
    pub cluster: Value,
    /// The `cluster.x-k8s.io/v1beta2` ClusterClass it names.
    pub cluster_class: Value,
    /// Every template the class references (infrastructure cluster, control plane, machine,
    /// bootstrap templates), and existing objects whose names CAPI keeps: the Cluster's
    /// MachineDeployments and MachinePools (found by their topology labels) and its ControlPlane.
    pub templates: Vec<Value>,
    /// The `spec.settings` of the ExtensionConfigs not in [`extension_settings`](Self::extension_settings):
    /// what every hook gets when the class calls one ExtensionConfig and its name does not
    /// matter (a ClusterClass patch's `external.settings` are laid over them, as CAPI does).
    pub settings: Settings,
    /// The `spec.settings` of each ExtensionConfig by name. CAPI's runtime client sends a hook
    /// registered as `<handler>.<ExtensionConfig>` the settings of that ExtensionConfig (with a
    /// ClusterClass patch's `external.settings` laid over them); a name not here gets
    /// [`settings`](Self::settings).
    pub extension_settings: std::collections::BTreeMap<String, Settings>,
    /// The Cluster API release whose topology engine to play (`None`: the newest modelled,
    /// 1.14). Before 1.14 CAPI sends the templates without the labels and annotations of the
    /// objects made from them, and drops the metadata patches set on templates.
    pub capi_version: Option<capi_ext::CapiVersion>,
    /// CRDs of the templates' and objects' kinds: when given, render applies the API server's
    /// rules (a field a patch sets that the CRD lacks is an error naming the patch; each
    /// rendered object is what the API server stores, defaults included, or an error with its
    /// causes), and warns for kinds without a CRD here.
    pub crds: Option<std::sync::Arc<crate::apiserver::Crds>>,
    /// The lifecycle hooks that answer with `retryAfterSeconds` (render does not call them):
    /// where CAPI would call one of these, render holds the upgrade as CAPI does, so the output
    /// is the Cluster mid-upgrade. Empty: none blocks.
    pub blocking_hooks: std::collections::BTreeSet<crate::UpgradeHook>,
}

/// The Kubernetes objects in a multi-document YAML (or JSON) text; empty documents are skipped,
/// a document without `kind` is an error naming its position.
pub fn documents(text: &str) -> Result<Vec<Value>, String> {
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| format!("not valid YAML: {e}"))?;
    let documents: Vec<Value> = documents.into_iter().filter(|d| !d.is_null()).collect();
    for (i, document) in documents.iter().enumerate() {
        if string(document, &["kind"]).is_empty() {
            return Err(format!(
                "document {} has no `kind`; render reads Kubernetes objects",
                i + 1
            ));
        }
    }
    Ok(documents)
}

impl Input {
    /// Whether the ClusterClass calls an extension (a patch with `external`): a class of inline
    /// patches only renders without one.
    ///
    /// ```
    /// let mut input = capi_ext_render::Input::default();
    /// input.cluster_class = serde_json::json!({"spec": {"patches": [{"name": "p", "definitions": []}]}});
    /// assert!(!input.calls_extension());
    /// input.cluster_class["spec"]["patches"][0]["external"] = serde_json::json!({"generatePatchesExtension": "g.e"});
    /// assert!(input.calls_extension());
    /// ```
    pub fn calls_extension(&self) -> bool {
        get(&self.cluster_class, &["spec", "patches"])
            .and_then(Value::as_array)
            .is_some_and(|patches| {
                patches
                    .iter()
                    .any(|p| p.get("external").is_some_and(|e| !e.is_null()))
            })
    }

    /// The settings CAPI's runtime client sends with a call to a handler of the ExtensionConfig
    /// `extension_config` before a ClusterClass patch's settings are laid over them: its entry
    /// of [`extension_settings`](Self::extension_settings), else [`settings`](Self::settings).
    ///
    /// ```
    /// let mut input = capi_ext_render::Input::default();
    /// input.settings.insert("k".into(), "any".into());
    /// input.extension_settings.insert("lifecycle".into(), [("k".to_string(), "own".to_string())].into());
    /// assert_eq!(input.registration_settings("lifecycle")["k"], "own");
    /// assert_eq!(input.registration_settings("patches")["k"], "any");
    /// ```
    pub fn registration_settings(&self, extension_config: &str) -> &Settings {
        self.extension_settings
            .get(extension_config)
            .unwrap_or(&self.settings)
    }

    /// A warning for each ExtensionConfig of [`extension_settings`](Self::extension_settings)
    /// the ClusterClass calls no handler of: CAPI sends its settings to no hook of this class.
    ///
    /// ```
    /// let mut input = capi_ext_render::Input::default();
    /// input.cluster_class = serde_json::json!({"spec": {"patches": [
    ///     {"name": "p", "external": {"generatePatchesExtension": "patches.topology"}}]}});
    /// input.extension_settings.insert("topology".into(), Default::default());
    /// assert!(input.uncalled_extension_configs().is_empty());
    /// input.extension_settings.insert("other".into(), Default::default());
    /// assert_eq!(input.uncalled_extension_configs().len(), 1);
    /// ```
    pub fn uncalled_extension_configs(&self) -> Vec<String> {
        let called = self.extension_configs();
        let calls = if called.is_empty() {
            "it calls none".to_string()
        } else {
            format!(
                "it calls {}",
                called.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        };
        self.extension_settings
            .keys()
            .filter(|name| !called.contains(*name))
            .map(|name| {
                format!(
                    "ExtensionConfig {name}: the ClusterClass calls no handler of it ({calls}); CAPI sends an ExtensionConfig's settings only to its own handlers (`<handler>.{name}`), so its settings were sent to no hook"
                )
            })
            .collect()
    }

    /// The ExtensionConfigs the ClusterClass calls: the names after the dot of its external
    /// patches' handlers and of its GenerateUpgradePlan handler (`<handler>.<ExtensionConfig>`).
    ///
    /// ```
    /// let mut input = capi_ext_render::Input::default();
    /// input.cluster_class = serde_json::json!({"spec": {
    ///     "patches": [{"name": "p", "external": {"generatePatchesExtension": "patches.topology"}}],
    ///     "upgrade": {"external": {"generateUpgradePlanExtension": "plan.lifecycle"}},
    /// }});
    /// assert_eq!(input.extension_configs().into_iter().collect::<Vec<_>>(), ["lifecycle", "topology"]);
    /// ```
    pub fn extension_configs(&self) -> std::collections::BTreeSet<String> {
        let patches = get(&self.cluster_class, &["spec", "patches"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|patch| patch.get("external"))
            .flat_map(|external| {
                [
                    "generatePatchesExtension",
                    "validateTopologyExtension",
                    "discoverVariablesExtension",
                ]
                .map(|field| external.get(field))
            });
        let plan = get(
            &self.cluster_class,
            &[
                "spec",
                "upgrade",
                "external",
                "generateUpgradePlanExtension",
            ],
        );
        patches
            .chain([plan])
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(|registered| registered.split_once('.'))
            .map(|(_, config)| config.to_string())
            .collect()
    }

    /// Reads the objects of YAML files (the Cluster, its ClusterClass, the templates; in any
    /// files, in any order), as `capi-ext render` reads them.
    ///
    /// ```no_run
    /// let input = capi_ext_render::Input::from_yaml_files(["render/cluster.yaml", "render/clusterclass.yaml", "render/templates.yaml"]).unwrap();
    /// ```
    pub fn from_yaml_files<P: AsRef<std::path::Path>>(
        paths: impl IntoIterator<Item = P>,
    ) -> Result<Self, RenderError> {
        let mut all = Vec::new();
        for path in paths {
            let path = path.as_ref();
            let text = std::fs::read_to_string(path)
                .map_err(|e| RenderError::Input(format!("reading {}: {e}", path.display())))?;
            all.extend(
                documents(&text)
                    .map_err(|e| RenderError::Input(format!("{}: {e}", path.display())))?,
            );
        }
        Self::from_documents(all)
    }

    /// Sorts a list of objects into the Cluster, the ClusterClass and templates; errors name what
    /// is missing or doubled.
    pub fn from_documents(documents: Vec<Value>) -> Result<Self, RenderError> {
        let mut input = Input::default();
        for document in documents {
            match string(&document, &["kind"]) {
                "Cluster" if input.cluster.is_null() => input.cluster = document,
                "ClusterClass" if input.cluster_class.is_null() => input.cluster_class = document,
                kind @ ("Cluster" | "ClusterClass") => {
                    return Err(RenderError::Input(format!(
                        "more than one {kind} given; render works on one Cluster and its ClusterClass"
                    )));
                }
                _ => input.templates.push(document),
            }
        }
        Ok(input)
    }
}

pub(crate) fn check_kinds(input: &Input) -> Result<(), RenderError> {
    for (object, kind) in [
        (&input.cluster, "Cluster"),
        (&input.cluster_class, "ClusterClass"),
    ] {
        if object.is_null() {
            return Err(RenderError::Input(format!("no {kind} given")));
        }
        if string(object, &["kind"]) != kind {
            return Err(RenderError::Input(format!(
                "expected a {kind}, got kind `{}`",
                string(object, &["kind"])
            )));
        }
        let api_version = string(object, &["apiVersion"]);
        if api_version != "cluster.x-k8s.io/v1beta2" {
            return Err(RenderError::Input(format!(
                "{kind} {}: apiVersion is `{api_version}`; render reads cluster.x-k8s.io/v1beta2 (the version CAPI 1.11+ stores)",
                string(object, &["metadata", "name"])
            )));
        }
    }
    let cluster = &input.cluster;
    match get(cluster, &["spec", "topology"]) {
        None => {
            // A misspelled `topology:` is named as such.
            check_fields(input)?;
            return Err(RenderError::Input(format!(
                "Cluster {}: spec.topology is missing; only a Cluster with a topology uses a ClusterClass",
                string(cluster, &["metadata", "name"])
            )));
        }
        Some(topology) if !topology.is_object() => {
            return Err(RenderError::Input(format!(
                "Cluster {}: spec.topology is {topology}, not an object (check the indentation of the fields below it)",
                string(cluster, &["metadata", "name"])
            )));
        }
        Some(_) => {}
    }
    let namespace = string(cluster, &["metadata", "namespace"]);
    let class_ref = string(cluster, &["spec", "topology", "classRef", "name"]);
    let class_ns = match string(cluster, &["spec", "topology", "classRef", "namespace"]) {
        "" => namespace,
        ns => ns,
    };
    let class_name = string(&input.cluster_class, &["metadata", "name"]);
    let class_actual_ns = string(&input.cluster_class, &["metadata", "namespace"]);
    if class_ref != class_name || (!class_actual_ns.is_empty() && class_actual_ns != class_ns) {
        return Err(RenderError::Input(format!(
            "Cluster {namespace}/{}: spec.topology.classRef names ClusterClass {class_ns}/{class_ref}, but the ClusterClass given is {class_actual_ns}/{class_name}",
            string(cluster, &["metadata", "name"])
        )));
    }
    Ok(())
}

/// Fields of the Cluster and the ClusterClass their CRDs do not define (`structural`).
pub(crate) fn check_fields(input: &Input) -> Result<(), RenderError> {
    // The CRDs render carries are those of Cluster API 1.14; a newer release's objects may
    // hold fields they do not know (1.15's inline templates).
    let carried = input.capi_version.unwrap_or(capi_ext::CapiVersion::DEFAULT)
        <= capi_ext::CapiVersion::new(1, 14);
    for object in [&input.cluster, &input.cluster_class]
        .into_iter()
        .filter(|_| carried)
    {
        let kind = string(object, &["kind"]);
        let Some(unknown) = crate::structural::unknown_fields(object) else {
            continue;
        };
        if !unknown.is_empty() {
            return Err(RenderError::Input(format!(
                "{kind} {}: {}; the API server refuses what its CRD does not define (strict field validation, kubectl's default) or drops it, so CAPI would never see it",
                string(object, &["metadata", "name"]),
                unknown
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_class_calls_the_extension_configs_after_the_dots_of_its_handlers() {
        let class = json!({"spec": {
            "patches": [
                {"name": "a", "external": {"generatePatchesExtension": "patches.topology",
                    "discoverVariablesExtension": "variables.topology"}},
                {"name": "b", "definitions": []},
                {"name": "c", "external": {"validateTopologyExtension": "validate.checks"}},
            ],
            "upgrade": {"external": {"generateUpgradePlanExtension": "plan.lifecycle"}},
        }});
        assert_eq!(
            Input {
                cluster_class: class,
                ..Input::default()
            }
            .extension_configs()
            .into_iter()
            .collect::<Vec<_>>(),
            ["checks", "lifecycle", "topology"]
        );
    }
}
