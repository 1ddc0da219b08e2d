//! Render a ClusterClass topology the way CAPI's topology controller does, without a cluster:
//! discover the extension's variables, check the Cluster's values against them (defaults, OpenAPI
//! rules, CEL), build the GeneratePatches request from the ClusterClass's templates (holder
//! references, builtin variables, only the variables each patch declared), apply the returned
//! patches patch by patch, ask ValidateTopology, and return the objects CAPI would create.
//!
//! The extension is anything that implements [`Caller`]: an in-process [`Extension`](crate::Extension)
//! in unit tests, or the `capi-ext render` command's HTTPS client.
//!
//! ```
//! # #[cfg(feature = "server")] {
//! use capi_ext::Extension;
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext::render::{Input, render};
//! use serde_json::json;
//!
//! let extension = Extension::builder()
//!     .handler(capi_ext::Registration::new(GeneratePatches, "patches", |req: GeneratePatchesRequest| async move {
//!         let mut response = GeneratePatchesResponse::success();
//!         for item in req.items_of_kind("GenericControlPlaneTemplate") {
//!             response = response.patch(&item.uid, Patch::json().add("/spec/template/spec/replicated", true));
//!         }
//!         response
//!     }))
//!     .build()
//!     .unwrap();
//! let input = Input::from_documents(vec![
//!     json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
//!            "metadata": {"name": "c1", "namespace": "default"},
//!            "spec": {"topology": {"classRef": {"name": "quick"}, "version": "v1.34.0"}}}),
//!     json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
//!            "metadata": {"name": "quick", "namespace": "default"},
//!            "spec": {
//!              "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureClusterTemplate", "name": "infra"}},
//!              "controlPlane": {"templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlaneTemplate", "name": "cp"}},
//!              "patches": [{"name": "p", "external": {"generatePatchesExtension": "patches.my-extension"}}]}}),
//!     json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureClusterTemplate",
//!            "metadata": {"name": "infra", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
//!     json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlaneTemplate",
//!            "metadata": {"name": "cp", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
//! ]).unwrap();
//! # tokio_test_block_on(async {
//! let rendered = render(&input, &extension).await.unwrap();
//! let control_plane = rendered.object("GenericControlPlane").unwrap();
//! assert_eq!(control_plane["spec"]["replicated"], true);
//! assert_eq!(control_plane["spec"]["version"], "v1.34.0");
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! # }
//! ```

mod desired;
pub mod go_template;
mod inline;
mod object;
pub mod values;

use crate::hooks::v1alpha1::{
    Builtins, ClusterBuiltins, ClusterClassRefBuiltins, ClusterNetworkBuiltins,
    ClusterTopologyBuiltins, ControlPlaneBuiltins, ControlPlaneMachineTemplateBuiltins,
    MachineBootstrapBuiltins, NameBuiltin, ObjectMeta,
};
use crate::hooks::v1alpha1::{
    ClusterClassVariable, DiscoverVariables, DiscoverVariablesRequest, DiscoverVariablesResponse,
    GeneratePatches, GeneratePatchesRequest, GeneratePatchesRequestItem, GeneratePatchesResponse,
    HolderReference, Hook, HookResponse, MachineDeploymentBuiltins, ResponseStatus, Settings,
    ValidateTopology, ValidateTopologyRequest, ValidateTopologyRequestItem,
    ValidateTopologyResponse, Variable,
};
use desired::{Blueprint, Desired, Worker};
use object::{FieldCopy, copy_fields, get, string, string_map};
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;

/// Sends one hook request to the extension.
pub trait Caller {
    /// Posts `body` to `path` (e.g. `/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/patches`)
    /// and returns the response body, or why no usable answer came.
    fn call(&self, path: &str, body: Vec<u8>) -> impl Future<Output = Result<Vec<u8>, String>>;
}

#[cfg(feature = "server")]
impl Caller for crate::Extension {
    async fn call(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>, String> {
        let reply = self.dispatch(path, None, &body).await;
        if reply.status == http::StatusCode::OK {
            Ok(reply.body)
        } else {
            Err(format!(
                "HTTP {}: {}",
                reply.status.as_u16(),
                String::from_utf8_lossy(&reply.body)
            ))
        }
    }
}

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
    /// The ExtensionConfig's `spec.settings` (the ClusterClass patch's settings are laid over them).
    pub settings: Settings,
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
    /// Reads the objects of YAML files (the Cluster, its ClusterClass, the templates; in any
    /// files, in any order), as `capi-ext render` reads them.
    ///
    /// ```no_run
    /// let input = capi_ext::render::Input::from_yaml_files(["render/cluster.yaml", "render/clusterclass.yaml", "render/templates.yaml"]).unwrap();
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

/// One request sent to the extension and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// `DiscoverVariables`, `GeneratePatches` or `ValidateTopology`.
    pub hook: &'static str,
    /// The ClusterClass patch it was for.
    pub patch: String,
    /// The handler's name (the part of the ClusterClass's extension name before the first `.`).
    pub handler: String,
    /// The request, as sent.
    pub request: Value,
    /// The response, as received.
    pub response: Value,
}

/// A variable definition and where it came from (`inline` or the patch's name), as in the
/// ClusterClass's `status.variables`.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// `inline` or the name of the patch whose DiscoverVariables declared it.
    pub from: String,
    /// The definition.
    pub variable: ClusterClassVariable,
}

/// The result of a render.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    /// The objects CAPI would create, patched: InfrastructureCluster, ControlPlane, the control
    /// plane's machine template, then per MachineDeployment its bootstrap and infrastructure
    /// templates, per MachinePool its bootstrap config and infrastructure machine pool.
    pub objects: Vec<Value>,
    /// The same objects before any patch (for diffs).
    pub unpatched: Vec<Value>,
    /// The Cluster as the webhook would store it (variables defaulted).
    pub cluster: Value,
    /// Every variable definition, inline and discovered.
    pub definitions: Vec<Definition>,
    /// Every request sent and response received, in order.
    pub exchanges: Vec<Exchange>,
}

impl Rendered {
    /// The first rendered object of `kind`.
    pub fn object(&self, kind: &str) -> Option<&Value> {
        self.objects.iter().find(|o| string(o, &["kind"]) == kind)
    }
}

/// Why a render stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The Cluster, ClusterClass or templates are not what render needs.
    #[error("{0}")]
    Input(String),
    /// The Cluster's variable values break their definitions (what the Cluster webhook rejects).
    #[error("the Cluster's variables are invalid (CAPI's webhook would reject the Cluster):\n  {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
    Variables(Vec<values::FieldError>),
    /// The extension could not be called or answered something CAPI cannot use.
    #[error("{hook} `{handler}` (patch {patch}): {message}")]
    Call {
        /// The hook.
        hook: &'static str,
        /// The handler.
        handler: String,
        /// The ClusterClass patch.
        patch: String,
        /// What went wrong.
        message: String,
    },
    /// The extension answered `Failure` (for ValidateTopology: the topology is rejected).
    #[error("{hook} `{handler}` (patch {patch}) answered Failure: {message}")]
    Failure {
        /// The hook.
        hook: &'static str,
        /// The handler.
        handler: String,
        /// The ClusterClass patch.
        patch: String,
        /// The extension's message.
        message: String,
    },
    /// An inline patch of the ClusterClass cannot be generated (CAPI fails the reconcile).
    #[error("ClusterClass spec.patches[{index}] ({patch}): {message}")]
    Inline {
        /// The patch's name.
        patch: String,
        /// Its index in `spec.patches`.
        index: usize,
        /// What went wrong.
        message: String,
    },
    /// A returned patch cannot be applied (CAPI fails the reconcile the same way).
    #[error("patch {patch}: cannot apply the patch for item {uid} ({kind}): {message}")]
    Patch {
        /// The ClusterClass patch.
        patch: String,
        /// The item's uid.
        uid: String,
        /// The item's kind.
        kind: String,
        /// What went wrong.
        message: String,
    },
}

const INLINE: &str = "inline";

struct Patch {
    name: String,
    index: usize,
    generate: String,
    validate: String,
    discover: String,
    settings: Settings,
    /// No `external`: its variables are the ClusterClass's inline ones.
    external: bool,
    /// The ClusterClass `spec.patches` entry.
    definition: Value,
}

fn patches(class: &Value, extension_settings: &Settings) -> Vec<Patch> {
    get(class, &["spec", "patches"])
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .enumerate()
                .map(|(index, p)| {
                    let mut settings = extension_settings.clone();
                    settings.extend(string_map(p, &["external", "settings"]));
                    Patch {
                        name: string(p, &["name"]).to_string(),
                        index,
                        generate: string(p, &["external", "generatePatchesExtension"]).to_string(),
                        validate: string(p, &["external", "validateTopologyExtension"]).to_string(),
                        discover: string(p, &["external", "discoverVariablesExtension"])
                            .to_string(),
                        settings,
                        external: p.get("external").is_some_and(|e| !e.is_null()),
                        definition: p.clone(),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The handler name in `<handler>.<extension config>`.
fn handler_of(registered: &str) -> &str {
    registered.split_once('.').map_or(registered, |(h, _)| h)
}

async fn exchange<H: Hook, C: Caller>(
    caller: &C,
    patch: &Patch,
    registered: &str,
    request: &H::Request,
    log: &mut Vec<Exchange>,
) -> Result<H::Response, RenderError> {
    let info = H::info();
    let handler = handler_of(registered).to_string();
    let call_error = |message: String| RenderError::Call {
        hook: info.name,
        handler: handler.clone(),
        patch: patch.name.clone(),
        message,
    };
    let body = serde_json::to_vec(request).map_err(|e| call_error(e.to_string()))?;
    let answer = caller
        .call(&info.path(&handler), body)
        .await
        .map_err(call_error)?;
    let response: H::Response = serde_json::from_slice(&answer).map_err(|e| {
        call_error(format!(
            "the response is not a {}Response CAPI can read: {e}",
            info.name
        ))
    })?;
    log.push(Exchange {
        hook: info.name,
        patch: patch.name.clone(),
        handler: handler.clone(),
        request: serde_json::to_value(request).unwrap_or_default(),
        response: serde_json::from_slice(&answer).unwrap_or_default(),
    });
    if response.status() == ResponseStatus::Failure {
        return Err(RenderError::Failure {
            hook: info.name,
            handler,
            patch: patch.name.clone(),
            message: response.message().to_string(),
        });
    }
    Ok(response)
}

fn check_kinds(input: &Input) -> Result<(), RenderError> {
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
    if get(cluster, &["spec", "topology"]).is_none() {
        return Err(RenderError::Input(format!(
            "Cluster {}: spec.topology is missing; only a Cluster with a topology uses a ClusterClass",
            string(cluster, &["metadata", "name"])
        )));
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

/// Renders `input` against the extension behind `caller`.
pub async fn render<C: Caller>(input: &Input, caller: &C) -> Result<Rendered, RenderError> {
    check_kinds(input)?;
    let mut input = input.clone();
    let namespace = string(&input.cluster, &["metadata", "namespace"]).to_string();
    if string(&input.cluster_class, &["metadata", "namespace"]).is_empty() {
        object::set(
            &mut input.cluster_class,
            &["metadata", "namespace"],
            namespace.clone().into(),
        );
    }
    let patches = patches(&input.cluster_class, &input.settings);
    let mut rendered = Rendered::default();

    // Variables: inline definitions and those each patch's DiscoverVariables returns.
    let inline: Vec<ClusterClassVariable> = get(&input.cluster_class, &["spec", "variables"])
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
        .map_err(|e| RenderError::Input(format!("ClusterClass spec.variables: {e}")))?
        .unwrap_or_default();
    rendered
        .definitions
        .extend(inline.into_iter().map(|variable| Definition {
            from: INLINE.into(),
            variable,
        }));
    for patch in patches.iter().filter(|p| !p.discover.is_empty()) {
        let mut request = DiscoverVariablesRequest::new();
        request.settings = patch.settings.clone();
        let response: DiscoverVariablesResponse = exchange::<DiscoverVariables, _>(
            caller,
            patch,
            &patch.discover,
            &request,
            &mut rendered.exchanges,
        )
        .await?;
        rendered
            .definitions
            .extend(response.variables.into_iter().map(|variable| Definition {
                from: patch.name.clone(),
                variable,
            }));
    }
    check_definitions(&rendered.definitions)?;
    default_and_validate(&mut input.cluster, &rendered.definitions)?;
    rendered.cluster = input.cluster.clone();

    let blueprint = Blueprint::resolve(&input.cluster_class, &input.templates)?;
    let mut desired = Desired::compute(&blueprint, &input.cluster, &input.templates)?;
    rendered.unpatched = desired_objects(&desired);

    let mut request = build_request(&blueprint, &desired);
    for patch in &patches {
        let declared: Vec<&str> = rendered
            .definitions
            .iter()
            .filter(|d| {
                d.from
                    == if patch.external {
                        patch.name.as_str()
                    } else {
                        INLINE
                    }
            })
            .map(|d| d.variable.name.as_str())
            .collect();
        add_variables(&mut request, &desired, &declared)?;
        let response = if patch
            .definition
            .get("definitions")
            .is_some_and(|d| d.as_array().is_some_and(|d| !d.is_empty()))
        {
            inline::generate(&patch.definition, &request).map_err(|message| {
                RenderError::Inline {
                    patch: patch.name.clone(),
                    index: patch.index,
                    message,
                }
            })?
        } else if !patch.generate.is_empty() {
            request.settings = patch.settings.clone();
            exchange::<GeneratePatches, _>(
                caller,
                patch,
                &patch.generate,
                &request,
                &mut rendered.exchanges,
            )
            .await?
        } else {
            return Err(RenderError::Input(format!(
                "ClusterClass spec.patches[{}] ({}) has neither definitions nor external.generatePatchesExtension",
                patch.index, patch.name
            )));
        };
        apply_response(&mut request, &response, &patch.name)?;
    }

    let mut validation = ValidateTopologyRequest::new();
    validation.variables = request.variables.clone();
    validation.items = request
        .items
        .iter()
        .map(|item| ValidateTopologyRequestItem {
            holder_reference: item.holder_reference.clone(),
            object: item.object.clone(),
            variables: item.variables.clone(),
        })
        .collect();
    for patch in patches.iter().filter(|p| !p.validate.is_empty()) {
        validation.settings = patch.settings.clone();
        let _: ValidateTopologyResponse = exchange::<ValidateTopology, _>(
            caller,
            patch,
            &patch.validate,
            &validation,
            &mut rendered.exchanges,
        )
        .await?;
    }

    update_desired(&request, &mut desired);
    rendered.objects = desired_objects(&desired);
    Ok(rendered)
}

fn check_definitions(definitions: &[Definition]) -> Result<(), RenderError> {
    for (i, a) in definitions.iter().enumerate() {
        if a.variable.name == "builtin" {
            return Err(RenderError::Input(format!(
                "variable `builtin` (from {}) is reserved for CAPI's builtin variables",
                a.from
            )));
        }
        if let Some(b) = definitions[..i]
            .iter()
            .find(|b| b.variable.name == a.variable.name)
        {
            return Err(RenderError::Input(format!(
                "variable `{}` is defined by both {} and {}; CAPI marks the ClusterClass VariablesReady=False for conflicting definitions",
                a.variable.name, b.from, a.from
            )));
        }
    }
    Ok(())
}

/// Defaults and validates every variable value of the Cluster as CAPI's webhook does.
fn default_and_validate(
    cluster: &mut Value,
    definitions: &[Definition],
) -> Result<(), RenderError> {
    let mut errors = Vec::new();
    let check =
        |list: &mut Value, path: &str, top_level: bool, errors: &mut Vec<values::FieldError>| {
            if list.is_null() {
                *list = Value::Array(Vec::new());
            }
            let Some(entries) = list.as_array_mut() else {
                errors.push(values::FieldError {
                    path: path.into(),
                    message: "must be a list".into(),
                });
                return;
            };
            for entry in entries.iter_mut() {
                let name = string(entry, &["name"]).to_string();
                let entry_path = format!("{path}[{name}]");
                let Some(definition) = definitions.iter().find(|d| d.variable.name == name) else {
                    let known: Vec<&str> = definitions
                        .iter()
                        .map(|d| d.variable.name.as_str())
                        .collect();
                    errors.push(values::raw_invalid(
                        &entry_path,
                        entry.get("value").unwrap_or(&Value::Null),
                        &format!("variable is not defined (defined: {})", known.join(", ")),
                    ));
                    continue;
                };
                let schema = &definition.variable.schema.open_api_v3_schema;
                let value = entry.get_mut("value");
                match value {
                    Some(value) => {
                        values::apply_defaults(schema, value);
                        values::validate(schema, value, &format!("{entry_path}.value"), errors);
                        values::unknown_fields(errors, &entry_path, &name, value);
                    }
                    None => errors.push(values::FieldError {
                        path: format!("{entry_path}.value"),
                        message: "Required value".into(),
                    }),
                }
            }
            if top_level {
                for definition in definitions {
                    let name = &definition.variable.name;
                    if entries.iter().any(|e| string(e, &["name"]) == name) {
                        continue;
                    }
                    let schema = &definition.variable.schema.open_api_v3_schema;
                    if let Some(default) = &schema.default {
                        let mut value = default.clone();
                        values::apply_defaults(schema, &mut value);
                        entries.push(serde_json::json!({"name": name, "value": value}));
                    } else if definition.variable.required == Some(true) {
                        errors.push(values::FieldError {
                            path: path.into(),
                            message: format!(
                                "Required value: required variable \"{name}\" must be set"
                            ),
                        });
                    }
                }
            }
        };
    let topology = cluster
        .get_mut("spec")
        .and_then(|s| s.get_mut("topology"))
        .expect("checked by check_kinds");
    if topology.get("variables").is_some() || !definitions.is_empty() {
        let list = topology
            .as_object_mut()
            .expect("an object")
            .entry("variables")
            .or_insert(Value::Null);
        check(list, "spec.topology.variables", true, &mut errors);
    }
    if let Some(overrides) = topology.pointer_mut("/controlPlane/variables/overrides") {
        check(
            overrides,
            "spec.topology.controlPlane.variables.overrides",
            false,
            &mut errors,
        );
    }
    for list in ["machineDeployments", "machinePools"] {
        if let Some(workers) = topology
            .pointer_mut(&format!("/workers/{list}"))
            .and_then(Value::as_array_mut)
        {
            for worker in workers {
                let name = string(worker, &["name"]).to_string();
                if let Some(overrides) = worker.pointer_mut("/variables/overrides") {
                    check(
                        overrides,
                        &format!("spec.topology.workers.{list}[{name}].variables.overrides"),
                        false,
                        &mut errors,
                    );
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(RenderError::Variables(errors))
    }
}

fn holder(
    api_version: &str,
    kind: &str,
    object: &Value,
    name: &str,
    field_path: &str,
) -> HolderReference {
    HolderReference {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: string(object, &["metadata", "namespace"]).into(),
        name: name.into(),
        field_path: field_path.into(),
    }
}

const CLUSTER_API: &str = "cluster.x-k8s.io/v1beta2";

/// A deterministic stand-in for the UUIDs CAPI gives request items.
fn uid(index: usize) -> String {
    format!("00000000-0000-4000-8000-{index:012x}")
}

/// `createRequest`: one item per template, labels and annotations of the desired object synced
/// into it, holder references to the objects that will point at it.
fn build_request(blueprint: &Blueprint, desired: &Desired) -> GeneratePatchesRequest {
    let mut request = GeneratePatchesRequest::new();
    let cluster = &desired.cluster;
    let cluster_name = string(cluster, &["metadata", "name"]);
    let mut push =
        |template: &Value, from: &Value, into_spec_template: bool, holder: HolderReference| {
            let mut object = template.clone();
            let dest: &[&str] = if into_spec_template {
                &["spec", "template", "metadata"]
            } else {
                &["metadata"]
            };
            let labels = [dest, &["labels"]].concat();
            let annotations = [dest, &["annotations"]].concat();
            copy_fields(
                &mut object,
                from,
                &[
                    (&["metadata", "labels"], &labels),
                    (&["metadata", "annotations"], &annotations),
                ],
                &[],
            );
            desired::clean_template(&mut object);
            let index = request.items.len();
            request.items.push(GeneratePatchesRequestItem {
                uid: uid(index),
                holder_reference: holder,
                object,
                variables: Vec::new(),
            });
        };
    push(
        &blueprint.infrastructure_cluster.object,
        &desired.infrastructure_cluster,
        true,
        holder(
            CLUSTER_API,
            "Cluster",
            cluster,
            cluster_name,
            "spec.infrastructureRef",
        ),
    );
    push(
        &blueprint.control_plane.object,
        &desired.control_plane,
        true,
        holder(
            CLUSTER_API,
            "Cluster",
            cluster,
            cluster_name,
            "spec.controlPlaneRef",
        ),
    );
    if let (Some(template), Some(machine)) = (
        &blueprint.control_plane_machine,
        &desired.control_plane_machine,
    ) {
        let cp = &desired.control_plane;
        push(
            &template.object,
            machine,
            false,
            holder(
                string(cp, &["apiVersion"]),
                string(cp, &["kind"]),
                cp,
                string(cp, &["metadata", "name"]),
                desired::control_plane_machine_field(cp),
            ),
        );
    }
    for md in &desired.machine_deployments {
        let class = &blueprint.machine_deployments[&md.class];
        let md_object =
            serde_json::json!({"metadata": {"namespace": cluster["metadata"]["namespace"]}});
        push(
            &class.bootstrap.object,
            &md.bootstrap,
            false,
            holder(
                CLUSTER_API,
                "MachineDeployment",
                &md_object,
                &md.name,
                "spec.template.spec.bootstrap.configRef",
            ),
        );
        push(
            &class.infrastructure.object,
            &md.infrastructure,
            false,
            holder(
                CLUSTER_API,
                "MachineDeployment",
                &md_object,
                &md.name,
                "spec.template.spec.infrastructureRef",
            ),
        );
    }
    for mp in &desired.machine_pools {
        let class = &blueprint.machine_pools[&mp.class];
        let mp_object =
            serde_json::json!({"metadata": {"namespace": cluster["metadata"]["namespace"]}});
        push(
            &class.bootstrap.object,
            &mp.bootstrap,
            true,
            holder(
                CLUSTER_API,
                "MachinePool",
                &mp_object,
                &mp.name,
                "spec.template.spec.bootstrap.configRef",
            ),
        );
        push(
            &class.infrastructure.object,
            &mp.infrastructure,
            true,
            holder(
                CLUSTER_API,
                "MachinePool",
                &mp_object,
                &mp.name,
                "spec.template.spec.infrastructureRef",
            ),
        );
    }
    request
}

fn user_variables(list: Option<&Value>, declared: &[&str]) -> Vec<Variable> {
    list.and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter(|e| {
                    let name = string(e, &["name"]);
                    name != "builtin" && declared.contains(&name)
                })
                .map(|e| Variable {
                    name: string(e, &["name"]).into(),
                    value: e["value"].clone(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn builtin(builtins: Builtins) -> Variable {
    Variable {
        name: "builtin".into(),
        value: serde_json::to_value(builtins).expect("builtins serialize"),
    }
}

fn object_meta(
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    present: bool,
) -> Option<ObjectMeta> {
    present.then_some(ObjectMeta {
        labels,
        annotations,
    })
}

/// `addVariablesForPatch`: the global variables and each item's variables for one patch.
fn add_variables(
    request: &mut GeneratePatchesRequest,
    desired: &Desired,
    declared: &[&str],
) -> Result<(), RenderError> {
    let cluster = &desired.cluster;
    let topology = &cluster["spec"]["topology"];
    let namespace = string(cluster, &["metadata", "namespace"]);
    let class_name = string(topology, &["classRef", "name"]);
    let class_namespace = match string(topology, &["classRef", "namespace"]) {
        "" => namespace,
        ns => ns,
    };
    let network = &cluster["spec"]["clusterNetwork"];
    let cidrs = |path: &[&str]| {
        get(network, path).and_then(Value::as_array).map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect::<Vec<_>>()
        })
    };
    let service_domain = string(network, &["serviceDomain"]);
    let services = cidrs(&["services", "cidrBlocks"]);
    let pods = cidrs(&["pods", "cidrBlocks"]);
    let network_builtins = (!service_domain.is_empty() || services.is_some() || pods.is_some())
        .then(|| ClusterNetworkBuiltins {
            service_domain: (!service_domain.is_empty()).then(|| service_domain.to_string()),
            services: services.unwrap_or_default(),
            pods: pods.unwrap_or_default(),
        });
    let metadata = cluster.get("metadata");
    let has_meta =
        metadata.is_some_and(|m| m.get("labels").is_some() || m.get("annotations").is_some());
    let mut global = user_variables(topology.get("variables"), declared);
    global.push(builtin(Builtins {
        cluster: Some(ClusterBuiltins {
            name: string(cluster, &["metadata", "name"]).into(),
            namespace: namespace.into(),
            uid: string(cluster, &["metadata", "uid"]).into(),
            metadata: object_meta(
                string_map(cluster, &["metadata", "labels"]),
                desired::builtin_annotations(cluster),
                has_meta,
            ),
            topology: Some(ClusterTopologyBuiltins {
                version: string(topology, &["version"]).into(),
                class: class_name.into(),
                class_namespace: class_namespace.into(),
                class_ref: ClusterClassRefBuiltins {
                    name: class_name.into(),
                    namespace: class_namespace.into(),
                },
            }),
            network: network_builtins,
        }),
        ..Default::default()
    }));
    request.variables = global;

    let cp = &desired.control_plane;
    let mut cp_variables = user_variables(
        get(topology, &["controlPlane", "variables", "overrides"]),
        declared,
    );
    let cp_meta = cp
        .get("metadata")
        .is_some_and(|m| m.get("labels").is_some() || m.get("annotations").is_some());
    cp_variables.push(builtin(Builtins {
        control_plane: Some(ControlPlaneBuiltins {
            version: string(cp, &["spec", "version"]).into(),
            metadata: object_meta(
                string_map(cp, &["metadata", "labels"]),
                desired::builtin_annotations(cp),
                cp_meta,
            ),
            name: string(cp, &["metadata", "name"]).into(),
            replicas: get(topology, &["controlPlane", "replicas"])
                .and_then(|_| get(cp, &["spec", "replicas"]))
                .and_then(Value::as_i64)
                .map(|r| r as i32),
            machine_template: desired.control_plane_machine.as_ref().map(|m| {
                ControlPlaneMachineTemplateBuiltins {
                    infrastructure_ref: NameBuiltin {
                        name: string(m, &["metadata", "name"]).into(),
                    },
                }
            }),
        }),
        ..Default::default()
    }));
    let cp_machine_field = desired::control_plane_machine_field(cp);

    let worker_builtins = |w: &Worker| -> MachineDeploymentBuiltins {
        MachineDeploymentBuiltins {
            version: string(topology, &["version"]).into(),
            metadata: Some(ObjectMeta {
                labels: w.labels.clone(),
                annotations: w.annotations.clone(),
            }),
            class: w.class.clone(),
            name: w.name.clone(),
            topology_name: string(&w.topology, &["name"]).into(),
            replicas: get(&w.topology, &["replicas"]).and_then(Value::as_i64),
            bootstrap: Some(MachineBootstrapBuiltins {
                config_ref: Some(NameBuiltin {
                    name: string(&w.bootstrap, &["metadata", "name"]).into(),
                }),
            }),
            infrastructure_ref: Some(NameBuiltin {
                name: string(&w.infrastructure, &["metadata", "name"]).into(),
            }),
        }
    };
    for item in &mut request.items {
        let holder = &item.holder_reference;
        if holder.field_path == "spec.controlPlaneRef"
            || (desired.control_plane_machine.is_some() && holder.field_path == cp_machine_field)
        {
            item.variables = cp_variables.clone();
        }
        let (workers, deployment) = match holder.kind.as_str() {
            "MachineDeployment" => (&desired.machine_deployments, true),
            "MachinePool" => (&desired.machine_pools, false),
            _ => continue,
        };
        let worker = workers
            .iter()
            .find(|w| w.name == holder.name)
            .ok_or_else(|| {
                RenderError::Input(format!(
                    "no desired state for {} {}",
                    holder.kind, holder.name
                ))
            })?;
        let mut variables =
            user_variables(get(&worker.topology, &["variables", "overrides"]), declared);
        let builtins = worker_builtins(worker);
        variables.push(builtin(if deployment {
            Builtins {
                machine_deployment: Some(builtins),
                ..Default::default()
            }
        } else {
            Builtins {
                machine_pool: Some(builtins),
                ..Default::default()
            }
        }));
        item.variables = variables;
    }
    Ok(())
}

/// `applyPatchToRequest`: applies each returned patch to its item, keeping only the changes to
/// `spec`, `metadata.labels` and `metadata.annotations`.
fn apply_response(
    request: &mut GeneratePatchesRequest,
    response: &GeneratePatchesResponse,
    patch_name: &str,
) -> Result<(), RenderError> {
    for returned in &response.items {
        let item = request.items.iter_mut().find(|i| i.uid == returned.uid).ok_or_else(|| RenderError::Patch {
            patch: patch_name.into(),
            uid: returned.uid.clone(),
            kind: "?".into(),
            message: "no request item has this uid (CAPI: unable to find corresponding request item for patch)".into(),
        })?;
        let fail = |message: String| RenderError::Patch {
            patch: patch_name.into(),
            uid: returned.uid.clone(),
            kind: string(&item.object, &["kind"]).into(),
            message,
        };
        if returned.patch.is_noop() {
            continue;
        }
        let mut patched = item.object.clone();
        match &returned.patch {
            crate::hooks::v1alpha1::Patch::Json(_) => {
                let operations: json_patch::Patch =
                    serde_json::from_slice(&returned.patch.document())
                        .map_err(|e| fail(format!("not an RFC 6902 JSON patch: {e}")))?;
                json_patch::patch(&mut patched, &operations)
                    .map_err(|e| fail(format!("error applying json patch (RFC6902): {e}")))?;
            }
            crate::hooks::v1alpha1::Patch::Merge(document) => {
                json_patch::merge(&mut patched, document)
            }
        }
        copy_fields(
            &mut item.object,
            &patched,
            &[
                (&["spec"], &["spec"]),
                (&["metadata", "labels"], &["metadata", "labels"]),
                (&["metadata", "annotations"], &["metadata", "annotations"]),
            ],
            &[],
        );
    }
    Ok(())
}

const ALWAYS_PRESERVE: [&[&str]; 6] = [
    &["metadata", "labels", desired::CLUSTER_NAME_LABEL],
    &["metadata", "labels", desired::TOPOLOGY_OWNED_LABEL],
    &["metadata", "labels", desired::DEPLOYMENT_NAME_LABEL],
    &["metadata", "labels", desired::POOL_NAME_LABEL],
    &["metadata", "annotations", desired::CLONED_FROM_NAME],
    &["metadata", "annotations", desired::CLONED_FROM_GROUP_KIND],
];

const OBJECT_FIELDS: [FieldCopy<'static>; 3] = [
    (&["spec", "template", "spec"], &["spec"]),
    (
        &["spec", "template", "metadata", "labels"],
        &["metadata", "labels"],
    ),
    (
        &["spec", "template", "metadata", "annotations"],
        &["metadata", "annotations"],
    ),
];

const TEMPLATE_FIELDS: [FieldCopy<'static>; 5] = [
    (&["metadata", "labels"], &["metadata", "labels"]),
    (&["metadata", "annotations"], &["metadata", "annotations"]),
    (&["spec", "template", "spec"], &["spec", "template", "spec"]),
    (
        &["spec", "template", "metadata", "labels"],
        &["spec", "template", "metadata", "labels"],
    ),
    (
        &["spec", "template", "metadata", "annotations"],
        &["spec", "template", "metadata", "annotations"],
    ),
];

const CONTROL_PLANE_PRESERVE: [&[&str]; 17] = [
    &["spec", "machineTemplate", "metadata"],
    &["spec", "machineTemplate", "readinessGates"],
    &["spec", "machineTemplate", "spec", "readinessGates"],
    &["spec", "machineTemplate", "taints"],
    &["spec", "machineTemplate", "spec", "taints"],
    &["spec", "machineTemplate", "infrastructureRef"],
    &["spec", "machineTemplate", "spec", "infrastructureRef"],
    &["spec", "machineTemplate", "nodeDrainTimeout"],
    &["spec", "machineTemplate", "nodeVolumeDetachTimeout"],
    &["spec", "machineTemplate", "nodeDeletionTimeout"],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeDrainTimeoutSeconds",
    ],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeVolumeDetachTimeoutSeconds",
    ],
    &[
        "spec",
        "machineTemplate",
        "spec",
        "deletion",
        "nodeDeletionTimeoutSeconds",
    ],
    &["spec", "replicas"],
    &["spec", "version"],
    &["spec", "rollout", "after"],
    &["spec", "rolloutAfter"],
];

/// `updateDesiredState`: the patched templates' specs and metadata into the desired objects.
fn update_desired(request: &GeneratePatchesRequest, desired: &mut Desired) {
    let find = |kind: &str, field: &str, name: Option<&str>| {
        request
            .items
            .iter()
            .find(|i| {
                i.holder_reference.kind == kind
                    && i.holder_reference.field_path == field
                    && name.is_none_or(|n| i.holder_reference.name == n)
            })
            .map(|i| &i.object)
    };
    if let Some(template) = find("Cluster", "spec.infrastructureRef", None) {
        copy_fields(
            &mut desired.infrastructure_cluster,
            template,
            &OBJECT_FIELDS,
            &ALWAYS_PRESERVE,
        );
    }
    if let Some(template) = find("Cluster", "spec.controlPlaneRef", None) {
        let preserve: Vec<&[&str]> = CONTROL_PLANE_PRESERVE
            .iter()
            .chain(ALWAYS_PRESERVE.iter())
            .copied()
            .collect();
        copy_fields(
            &mut desired.control_plane,
            template,
            &OBJECT_FIELDS,
            &preserve,
        );
    }
    let cp_kind = string(&desired.control_plane, &["kind"]).to_string();
    let cp_field = desired::control_plane_machine_field(&desired.control_plane);
    if let Some(machine) = desired.control_plane_machine.as_mut()
        && let Some(template) = find(&cp_kind, cp_field, None)
    {
        copy_fields(machine, template, &TEMPLATE_FIELDS, &ALWAYS_PRESERVE);
    }
    for md in &mut desired.machine_deployments {
        if let Some(t) = find(
            "MachineDeployment",
            "spec.template.spec.bootstrap.configRef",
            Some(&md.name),
        ) {
            copy_fields(&mut md.bootstrap, t, &TEMPLATE_FIELDS, &ALWAYS_PRESERVE);
        }
        if let Some(t) = find(
            "MachineDeployment",
            "spec.template.spec.infrastructureRef",
            Some(&md.name),
        ) {
            copy_fields(
                &mut md.infrastructure,
                t,
                &TEMPLATE_FIELDS,
                &ALWAYS_PRESERVE,
            );
        }
    }
    for mp in &mut desired.machine_pools {
        if let Some(t) = find(
            "MachinePool",
            "spec.template.spec.bootstrap.configRef",
            Some(&mp.name),
        ) {
            copy_fields(&mut mp.bootstrap, t, &OBJECT_FIELDS, &ALWAYS_PRESERVE);
        }
        if let Some(t) = find(
            "MachinePool",
            "spec.template.spec.infrastructureRef",
            Some(&mp.name),
        ) {
            copy_fields(&mut mp.infrastructure, t, &OBJECT_FIELDS, &ALWAYS_PRESERVE);
        }
    }
}

fn desired_objects(desired: &Desired) -> Vec<Value> {
    let mut objects = vec![
        desired.infrastructure_cluster.clone(),
        desired.control_plane.clone(),
    ];
    objects.extend(desired.control_plane_machine.clone());
    for worker in desired
        .machine_deployments
        .iter()
        .chain(&desired.machine_pools)
    {
        objects.push(worker.bootstrap.clone());
        objects.push(worker.infrastructure.clone());
    }
    objects
}
