//! Render a ClusterClass topology the way CAPI's topology controller does, without a cluster:
//! discover the extension's variables, check the Cluster's values against them (defaults, OpenAPI
//! rules, CEL), build the GeneratePatches request from the ClusterClass's templates (holder
//! references, builtin variables, only the variables each patch declared), apply the returned
//! patches patch by patch, ask ValidateTopology, and return the objects CAPI would create.
//!
//! The extension is anything that implements [`Caller`]: an in-process [`Extension`](capi_ext::Extension)
//! in unit tests, or the `capi-ext render` command's HTTPS client.
//!
//! ```
//! # #[cfg(feature = "server")] {
//! use capi_ext::Extension;
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext_render::{Input, render};
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

mod apply;
pub mod change;
mod cluster_variables;
mod desired;
pub mod determinism;
pub mod go_template;
mod inline;
mod object;
mod request;
pub mod testing;
pub mod values;
pub mod yaml11;

use apply::{apply_response, update_desired};
use capi_ext::hooks::v1alpha1::{
    ClusterClassVariable, DiscoverVariables, DiscoverVariablesRequest, DiscoverVariablesResponse,
    GeneratePatches, GeneratePatchesRequest, GeneratePatchesResponse, Hook, HookResponse,
    ResponseStatus, Settings, ValidateTopology, ValidateTopologyRequest,
    ValidateTopologyRequestItem, ValidateTopologyResponse,
};
use cluster_variables::{check_definitions, default_and_validate};
use desired::{Blueprint, Desired};
use object::{get, string, string_map};
use request::{add_variables, build_request};
use serde_json::Value;
use std::future::Future;

/// Sends one hook request to the extension.
pub trait Caller {
    /// Posts `body` to `path` (e.g. `/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/patches`)
    /// and returns the response body, or why no usable answer came.
    fn call(&self, path: &str, body: Vec<u8>) -> impl Future<Output = Result<Vec<u8>, String>>;
}

#[cfg(feature = "server")]
impl Caller for capi_ext::Extension {
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
    /// The Cluster API release whose topology engine to play (`None`: the newest modelled,
    /// 1.14). Before 1.14 CAPI sends the templates without the labels and annotations of the
    /// objects made from them, and drops the metadata patches set on templates.
    pub capi_version: Option<capi_ext::CapiVersion>,
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
    /// What each object is (the infrastructure cluster, a MachineDeployment's bootstrap
    /// template…), in the order of `objects`: what CAPI does when one changes depends on it.
    pub roles: Vec<change::Role>,
    /// The Cluster as the webhook would store it (variables defaulted).
    pub cluster: Value,
    /// Every variable definition, inline and discovered, by name (as in the ClusterClass's
    /// `status.variables`).
    pub definitions: Vec<Definition>,
    /// Every request sent and response received, in order.
    pub exchanges: Vec<Exchange>,
    /// What the user should know although CAPI accepts it: metadata the patches set on a
    /// template that the targeted Cluster API release drops (before 1.14).
    pub warnings: Vec<String>,
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
    /// The extension answered the same request differently: CAPI calls on every reconcile, so
    /// an answer that changes makes it churn (patches rotate templates, messages land in the
    /// Cluster's conditions).
    #[error("{} `{}` (patch {}) is not deterministic: {} changed {} from {} to {}", .0.hook, .0.handler, .0.patch, .0.what, .0.field, .0.first, .0.second)]
    Nondeterministic(Box<Nondeterminism>),
    /// The extension's message holds something that changes from call to call (a time, a
    /// UUID): CAPI writes messages into the Cluster's conditions, so it would rewrite them on
    /// every reconcile.
    #[error(
        "{hook} `{handler}` (patch {patch}) answered a message with {what} in it (`{part}`): CAPI writes extension messages into the Cluster's conditions, so one that changes on every call rewrites them on every reconcile; leave times and random parts out of messages (log them instead)"
    )]
    VolatileMessage {
        /// The hook.
        hook: &'static str,
        /// The handler.
        handler: String,
        /// The ClusterClass patch.
        patch: String,
        /// What it looks like (`a timestamp`, `a UUID`…).
        what: &'static str,
        /// The part of the message.
        part: String,
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

/// Where an extension answered the same question twice differently.
#[derive(Debug, Clone, PartialEq)]
pub struct Nondeterminism {
    /// The hook.
    pub hook: &'static str,
    /// The handler.
    pub handler: String,
    /// The ClusterClass patch.
    pub patch: String,
    /// What was sent again: `the same request` or `the items in reverse order`.
    pub what: &'static str,
    /// Where the answers differ (a JSON pointer into the response, or `the patch of item <uid>`).
    pub field: String,
    /// The first answer there.
    pub first: String,
    /// The second.
    pub second: String,
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

/// GeneratePatches must not depend on the order of the items (CAPI builds them from maps):
/// the items sent in reverse order must get the same patch per uid.
async fn check_item_order<C: Caller>(
    caller: &C,
    patch: &Patch,
    request: &GeneratePatchesRequest,
    first: &GeneratePatchesResponse,
) -> Result<(), RenderError> {
    let Some(reversed) = determinism::reversed(request) else {
        return Ok(());
    };
    if first.status == ResponseStatus::Failure {
        return Ok(());
    }
    let handler = handler_of(&patch.generate).to_string();
    let body = serde_json::to_vec(&reversed).unwrap_or_default();
    let answer = caller
        .call(&GeneratePatches::info().path(&handler), body)
        .await
        .map_err(|message| RenderError::Call {
            hook: "GeneratePatches",
            handler: handler.clone(),
            patch: patch.name.clone(),
            message,
        })?;
    let second: GeneratePatchesResponse =
        serde_json::from_slice(&answer).map_err(|e| RenderError::Call {
            hook: "GeneratePatches",
            handler: handler.clone(),
            patch: patch.name.clone(),
            message: format!("the response is not a GeneratePatchesResponse CAPI can read: {e}"),
        })?;
    match determinism::item_patch_difference(first, &second) {
        Some(difference) => Err(RenderError::Nondeterministic(Box::new(Nondeterminism {
            hook: "GeneratePatches",
            handler,
            patch: patch.name.clone(),
            what: "the items in reverse order",
            field: difference.field,
            first: difference.first,
            second: difference.second,
        }))),
        None => Ok(()),
    }
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
        .call(&info.path(&handler), body.clone())
        .await
        .map_err(call_error)?;
    // CAPI sends the same request on every reconcile: the answer must not change.
    let again = caller
        .call(&info.path(&handler), body)
        .await
        .map_err(call_error)?;
    let (first, second): (Value, Value) = (
        serde_json::from_slice(&answer).unwrap_or_default(),
        serde_json::from_slice(&again).unwrap_or_default(),
    );
    if let Some(difference) = determinism::first_difference(&first, &second) {
        return Err(RenderError::Nondeterministic(Box::new(Nondeterminism {
            hook: info.name,
            handler,
            patch: patch.name.clone(),
            what: "the same request",
            field: difference.field,
            first: difference.first,
            second: difference.second,
        })));
    }
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
    if let Some((what, part)) = determinism::volatile_part(response.message()) {
        return Err(RenderError::VolatileMessage {
            hook: info.name,
            handler,
            patch: patch.name.clone(),
            what,
            part: part.to_string(),
        });
    }
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
    match get(cluster, &["spec", "topology"]) {
        None => {
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
    // `variables: null` is no variables, as for CAPI's decoder.
    let inline: Vec<ClusterClassVariable> = get(&input.cluster_class, &["spec", "variables"])
        .filter(|v| !v.is_null())
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
    // CAPI's ClusterClass status lists them by name, and the webhook appends defaulted values
    // in that order (`reconcileVariables`, `getAllVariables`).
    rendered
        .definitions
        .sort_by(|a, b| a.variable.name.cmp(&b.variable.name));
    default_and_validate(&mut input.cluster, &rendered.definitions)?;
    rendered.cluster = input.cluster.clone();

    let capi_version = input.capi_version.unwrap_or(capi_ext::CapiVersion::DEFAULT);
    let blueprint = Blueprint::resolve(&input.cluster_class, &input.templates, capi_version)?;
    let mut desired = Desired::compute(&blueprint, &input.cluster, &input.templates)?;
    rendered.unpatched = desired.objects();
    rendered.roles = desired.roles();

    let mut request = build_request(
        &blueprint,
        &desired,
        capi_version >= capi_ext::CapiVersion::new(1, 14),
    );
    let sent = request.clone();
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
            let response = exchange::<GeneratePatches, _>(
                caller,
                patch,
                &patch.generate,
                &request,
                &mut rendered.exchanges,
            )
            .await?;
            check_item_order(caller, patch, &request, &response).await?;
            response
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

    if capi_version < capi_ext::CapiVersion::new(1, 14) {
        rendered.warnings = apply::dropped_metadata(&sent, &request, capi_version);
    }
    update_desired(&request, &mut desired, capi_version);
    rendered.objects = desired.objects();
    Ok(rendered)
}
