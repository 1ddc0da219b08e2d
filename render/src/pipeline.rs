//! The pipeline CAPI's topology controller runs for one Cluster: DiscoverVariables, the
//! variables defaulted and validated, the desired objects, GeneratePatches patch by patch
//! (inline or external), ValidateTopology, the patched objects.

use crate::apiserver::Write;
use crate::apply::{self, apply_response, update_desired};
use crate::caller::{CallError, Caller};
use crate::cluster_variables::{check_definitions, default_and_validate};
use crate::desired::{Blueprint, CONVERSION_DATA, Desired, LAST_APPLIED, PlanAnswer, PlanQuestion};
use crate::determinism;
use crate::error::{Nondeterminism, RenderError};
use crate::inline;
use crate::input::{Input, check_fields, check_kinds};
use crate::object::{self, get, string, string_map};
use crate::output::{Definition, Exchange, Rendered};
use crate::request::{add_variables, build_request};
use crate::stored;
use capi_ext::hooks::v1alpha1::{
    ClusterClassVariable, DiscoverVariables, DiscoverVariablesRequest, DiscoverVariablesResponse,
    GeneratePatches, GeneratePatchesRequest, GeneratePatchesResponse, GenerateUpgradePlan,
    GenerateUpgradePlanRequest, GenerateUpgradePlanResponse, Hook, HookResponse, ResponseStatus,
    Settings, UpgradeStep, ValidateTopology, ValidateTopologyRequest, ValidateTopologyRequestItem,
    ValidateTopologyResponse,
};
use serde_json::Value;
use std::collections::BTreeMap;

const INLINE: &str = "inline";

struct Patch {
    name: String,
    index: usize,
    generate: String,
    validate: String,
    discover: String,
    /// The ClusterClass patch's `external.settings`, laid over the ExtensionConfig's.
    settings: Settings,
    /// No `external`: its variables are the ClusterClass's inline ones.
    external: bool,
    /// The ClusterClass `spec.patches` entry.
    definition: Value,
}

fn patches(class: &Value) -> Vec<Patch> {
    get(class, &["spec", "patches"])
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .enumerate()
                .map(|(index, p)| Patch {
                    name: string(p, &["name"]).to_string(),
                    index,
                    generate: string(p, &["external", "generatePatchesExtension"]).to_string(),
                    validate: string(p, &["external", "validateTopologyExtension"]).to_string(),
                    discover: string(p, &["external", "discoverVariablesExtension"]).to_string(),
                    settings: string_map(p, &["external", "settings"]),
                    external: p.get("external").is_some_and(|e| !e.is_null()),
                    definition: p.clone(),
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
        .call_extension(
            config_of(&patch.generate),
            &GeneratePatches::info().path(&handler),
            body,
        )
        .await
        .map_err(|error| RenderError::Call {
            hook: "GeneratePatches",
            handler: handler.clone(),
            patch: patch.name.clone(),
            error,
        })?;
    let second: GeneratePatchesResponse =
        serde_json::from_slice(&answer).map_err(|e| RenderError::Call {
            hook: "GeneratePatches",
            handler: handler.clone(),
            patch: patch.name.clone(),
            error: CallError::Unreadable(format!(
                "the response is not a GeneratePatchesResponse CAPI can read: {e}"
            )),
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

/// The ExtensionConfig's name in `<handler>.<extension config>` ("" when there is none).
fn config_of(registered: &str) -> &str {
    registered.split_once('.').map_or("", |(_, c)| c)
}

/// The settings of a call to `registered` (`<handler>.<ExtensionConfig>`) for a ClusterClass
/// patch with `patch_settings`: the ExtensionConfig's, the patch's laid over them, as CAPI's
/// runtime client merges them (`cloneAndAddSettings`).
fn call_settings(input: &Input, registered: &str, patch_settings: &Settings) -> Settings {
    let mut settings = input.registration_settings(config_of(registered)).clone();
    settings.extend(patch_settings.iter().map(|(k, v)| (k.clone(), v.clone())));
    settings
}

/// Calls `registered` (`<handler>.<ExtensionConfig>`) with `request` twice (the answer must not
/// change) and logs the exchange; `patch` is the ClusterClass patch the call serves ("" for
/// GenerateUpgradePlan).
async fn exchange<H: Hook, C: Caller>(
    caller: &C,
    patch: &str,
    registered: &str,
    request: &H::Request,
    log: &mut Vec<Exchange>,
) -> Result<H::Response, RenderError> {
    let info = H::info();
    let handler = handler_of(registered).to_string();
    let call_error = |error: CallError| RenderError::Call {
        hook: info.name,
        handler: handler.clone(),
        patch: patch.to_string(),
        error,
    };
    let body = serde_json::to_vec(request)
        .map_err(|e| call_error(CallError::Unreadable(e.to_string())))?;
    let config = config_of(registered);
    let answer = caller
        .call_extension(config, &info.path(&handler), body.clone())
        .await
        .map_err(call_error)?;
    // CAPI sends the same request on every reconcile: the answer must not change.
    let again = caller
        .call_extension(config, &info.path(&handler), body)
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
            patch: patch.to_string(),
            what: "the same request",
            field: difference.field,
            first: difference.first,
            second: difference.second,
        })));
    }
    let response: H::Response = serde_json::from_slice(&answer).map_err(|e| {
        call_error(CallError::Unreadable(format!(
            "the response is not a {}Response CAPI can read: {e}",
            info.name
        )))
    })?;
    log.push(Exchange {
        hook: info.name,
        patch: patch.to_string(),
        handler: handler.clone(),
        request: serde_json::to_value(request).unwrap_or_default(),
        response: serde_json::from_slice(&answer).unwrap_or_default(),
    });
    if let Some((what, part)) = determinism::volatile_part(response.message()) {
        return Err(RenderError::VolatileMessage {
            hook: info.name,
            handler,
            patch: patch.to_string(),
            what,
            part: part.to_string(),
        });
    }
    if response.status() == ResponseStatus::Failure {
        return Err(RenderError::Failure {
            hook: info.name,
            handler,
            patch: patch.to_string(),
            message: response.message().to_string(),
        });
    }
    Ok(response)
}

impl Input {
    /// Checks the input as far as it can be checked without the extension: kinds and
    /// references, the templates the ClusterClass names, and fields the CRDs do not define.
    /// [`render`] starts with the same checks; a caller that must start the extension first
    /// (`capi-ext render --project` builds it) checks before.
    pub fn check(&self) -> Result<(), RenderError> {
        prepared(self).map(|_| ())
    }
}

/// The input with what CAPI's webhooks fill in before anything runs: the ClusterClass in the
/// Cluster's namespace when it names none. Checks it first ([`Input::check`]).
fn prepared(input: &Input) -> Result<Input, RenderError> {
    check_kinds(input)?;
    let mut input = input.clone();
    let namespace = string(&input.cluster, &["metadata", "namespace"]).to_string();
    if string(&input.cluster_class, &["metadata", "namespace"]).is_empty() {
        object::set(
            &mut input.cluster_class,
            &["metadata", "namespace"],
            namespace.into(),
        );
    }
    let capi_version = input.capi_version.unwrap_or(capi_ext::CapiVersion::DEFAULT);
    // Its own errors (a template that is missing, inline before 1.15) say more than an
    // unknown field would.
    Blueprint::resolve(&input.cluster_class, &input.templates, capi_version)?;
    check_fields(&input)?;
    Ok(input)
}

/// The variable definitions of the ClusterClass as CAPI's ClusterClass reconciler writes them
/// into its `status.variables`: the inline ones and what each patch's DiscoverVariables
/// returns, checked for conflicts, by name. The first step of [`render`], on its own for
/// callers that compare two versions of an extension's variables.
pub async fn definitions<C: Caller>(
    input: &Input,
    caller: &C,
) -> Result<Vec<Definition>, RenderError> {
    let input = prepared(input)?;
    let patches = patches(&input.cluster_class);
    discover(&input, &patches, caller, &mut Vec::new()).await
}

async fn discover<C: Caller>(
    input: &Input,
    patches: &[Patch],
    caller: &C,
    exchanges: &mut Vec<Exchange>,
) -> Result<Vec<Definition>, RenderError> {
    // `variables: null` is no variables, as for CAPI's decoder.
    let inline: Vec<ClusterClassVariable> = get(&input.cluster_class, &["spec", "variables"])
        .filter(|v| !v.is_null())
        .map(|v| serde_json::from_value(v.clone()))
        .transpose()
        .map_err(|e| RenderError::Input(format!("ClusterClass spec.variables: {e}")))?
        .unwrap_or_default();
    let mut definitions: Vec<Definition> = inline
        .into_iter()
        .map(|variable| Definition {
            from: INLINE.into(),
            variable,
        })
        .collect();
    for patch in patches.iter().filter(|p| !p.discover.is_empty()) {
        let mut request = DiscoverVariablesRequest::new();
        request.settings = call_settings(input, &patch.discover, &patch.settings);
        let response: DiscoverVariablesResponse = exchange::<DiscoverVariables, _>(
            caller,
            &patch.name,
            &patch.discover,
            &request,
            exchanges,
        )
        .await?;
        definitions.extend(response.variables.into_iter().map(|variable| Definition {
            from: patch.name.clone(),
            variable,
        }));
    }
    check_definitions(&definitions)?;
    // CAPI's ClusterClass status lists them by name, and the webhook appends defaulted values
    // in that order (`reconcileVariables`, `getAllVariables`).
    definitions.sort_by(|a, b| a.variable.name.cmp(&b.variable.name));
    Ok(definitions)
}

/// The Cluster, ClusterClass and templates as the API server stores them when created (defaults
/// filled in, nulls dropped); one it would refuse, or a field it would prune, is an error. An
/// existing object's `status` is kept: its controller wrote it through the status subresource,
/// and the upgrade sequence reads it.
fn store_inputs(crds: &crate::apiserver::Crds, input: &mut Input) -> Result<(), RenderError> {
    let statuses: Vec<Option<Value>> = input
        .templates
        .iter()
        .map(|o| o.get("status").cloned())
        .collect();
    stored::store(
        crds,
        std::slice::from_mut(&mut input.cluster),
        Write::Create,
    )?;
    stored::store(
        crds,
        std::slice::from_mut(&mut input.cluster_class),
        Write::Create,
    )?;
    stored::store(crds, &mut input.templates, Write::Create)?;
    for (object, status) in input.templates.iter_mut().zip(statuses) {
        if let (Some(status), Some(map)) = (status, object.as_object_mut()) {
            map.insert("status".into(), status);
        }
    }
    Ok(())
}

/// Asks the ClusterClass's GenerateUpgradePlan extension for the plan of an upgrade, as CAPI
/// does before it computes the desired state (`GetUpgradePlanFromExtension`); the Cluster goes
/// without status, managed fields and the last-applied and conversion-data annotations.
async fn upgrade_plan<C: Caller>(
    caller: &C,
    input: &Input,
    question: &PlanQuestion,
    log: &mut Vec<Exchange>,
) -> Result<PlanAnswer, RenderError> {
    let mut cluster = input.cluster.clone();
    if let Some(map) = cluster.as_object_mut() {
        map.remove("status");
    }
    if let Some(metadata) = cluster.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.remove(LAST_APPLIED);
            annotations.remove(CONVERSION_DATA);
        }
    }
    let mut request = GenerateUpgradePlanRequest::new();
    // No ClusterClass patch here: the ExtensionConfig's settings alone.
    request.settings = call_settings(input, &question.extension, &Settings::new());
    request.cluster = serde_json::from_value(cluster)
        .map_err(|e| RenderError::Input(format!("the Cluster: {e}")))?;
    request.from_control_plane_kubernetes_version = question.from_control_plane.clone();
    request.from_workers_kubernetes_version = question.from_workers.clone();
    request.to_kubernetes_version = question.to.clone();
    let response: GenerateUpgradePlanResponse =
        exchange::<GenerateUpgradePlan, _>(caller, "", &question.extension, &request, log).await?;
    let versions = |steps: Vec<UpgradeStep>| steps.into_iter().map(|s| s.version).collect();
    Ok(PlanAnswer {
        control_plane: versions(response.control_plane_upgrades),
        workers: versions(response.workers_upgrades),
    })
}

/// Renders `input` against the extension behind `caller`.
pub async fn render<C: Caller>(input: &Input, caller: &C) -> Result<Rendered, RenderError> {
    let mut input = prepared(input)?;
    if let Some(crds) = &input.crds {
        // What CAPI reads is what the API server stored: templates with their CRD defaults.
        let crds = crds.clone();
        store_inputs(&crds, &mut input)?;
    }
    let patches = patches(&input.cluster_class);
    let mut rendered = Rendered::default();

    // Variables: inline definitions and those each patch's DiscoverVariables returns.
    rendered.definitions = discover(&input, &patches, caller, &mut rendered.exchanges).await?;
    default_and_validate(&mut input.cluster, &rendered.definitions)?;
    rendered.cluster = input.cluster.clone();

    let capi_version = input.capi_version.unwrap_or(capi_ext::CapiVersion::DEFAULT);
    let blueprint = Blueprint::resolve(&input.cluster_class, &input.templates, capi_version)?;
    let plan_answer = match Desired::plan_question(&blueprint, &input.cluster, &input.templates)? {
        Some(question) => {
            Some(upgrade_plan(caller, &input, &question, &mut rendered.exchanges).await?)
        }
        None => None,
    };
    let mut desired = Desired::compute(
        &blueprint,
        &input.cluster,
        &input.templates,
        capi_version,
        plan_answer.as_ref(),
        &input.blocking_hooks,
    )?;
    rendered.unpatched = desired.objects();
    rendered.roles = desired.roles();
    rendered.warnings = std::mem::take(&mut desired.warnings);
    rendered.warnings.extend(input.uncalled_extension_configs());

    let mut request = build_request(
        &blueprint,
        &desired,
        capi_version >= capi_ext::CapiVersion::new(1, 14),
    );
    let sent = request.clone();
    if let Some(crds) = &input.crds {
        stored::check_patch(crds, &BTreeMap::new(), &request.items, None)?;
    }
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
            inline::generate(
                &patch.definition,
                &request,
                crate::go_template::Options::inline_patch(capi_version),
            )
            .map_err(|message| RenderError::Inline {
                patch: patch.name.clone(),
                index: patch.index,
                message,
            })?
        } else if !patch.generate.is_empty() {
            request.settings = call_settings(&input, &patch.generate, &patch.settings);
            let response = exchange::<GeneratePatches, _>(
                caller,
                &patch.name,
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
        let before = input
            .crds
            .as_deref()
            .map(|crds| stored::pruned_by_item(crds, &request.items));
        apply_response(&mut request, &response, &patch.name)?;
        if let (Some(crds), Some(before)) = (&input.crds, &before) {
            stored::check_patch(crds, before, &request.items, Some(&patch.name))?;
        }
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
        validation.settings = call_settings(&input, &patch.validate, &patch.settings);
        let _: ValidateTopologyResponse = exchange::<ValidateTopology, _>(
            caller,
            &patch.name,
            &patch.validate,
            &validation,
            &mut rendered.exchanges,
        )
        .await?;
    }

    if capi_version < capi_ext::CapiVersion::new(1, 14) {
        rendered
            .warnings
            .extend(apply::dropped_metadata(&sent, &request, capi_version));
    }
    update_desired(&request, &mut desired, capi_version);
    rendered.objects = desired.objects();
    if let Some(crds) = &input.crds {
        // The Cluster itself was stored with the input; only its topology-managed fields are
        // printed, which a CRD check of the whole Cluster would refuse as incomplete.
        for (object, role) in rendered.objects.iter_mut().zip(&rendered.roles) {
            if *role == crate::change::Role::Cluster {
                continue;
            }
            for warning in stored::store(crds, std::slice::from_mut(object), Write::Apply)? {
                if !rendered.warnings.contains(&warning) {
                    rendered.warnings.push(warning);
                }
            }
        }
    }
    Ok(rendered)
}
