//! [`PatchSet`]: one GeneratePatches handler made of many small, named patch functions.

use super::{Selector, Template};
use crate::hooks::v1alpha1::{
    Builtins, GeneratePatchesRequest, GeneratePatchesRequestItem, GeneratePatchesResponse,
    HolderReference, Patch, Settings, Variable,
};
use crate::topology::{BUILTIN, TemplateItem, builtins, merge_variables, variables_as};
use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::sync::{Arc, OnceLock};

/// What a patch function sees besides the template: the typed variables (global values
/// overridden by the item's, as CAPI merges them), the builtins of this template, its holder
/// and the settings.
#[derive(Debug)]
#[non_exhaustive]
pub struct PatchContext<'a, V> {
    /// The user variables, typed.
    pub variables: &'a V,
    /// The builtins (`cluster`, and `controlPlane`, `machineDeployment` or `machinePool`).
    pub builtins: &'a Builtins,
    /// Where the template is used.
    pub holder: &'a HolderReference,
    /// ExtensionConfig settings overlaid with the ClusterClass patch's.
    pub settings: &'a Settings,
    /// The request's global variables and the item's, merged on first use of
    /// [`raw_variables`](Self::raw_variables).
    global: &'a [Variable],
    item: &'a [Variable],
    merged: OnceLock<Vec<Variable>>,
}

impl<V> PatchContext<'_, V> {
    /// All variables of this item, untyped: the global ones overridden by the item's, the
    /// `builtin` variable deep-merged (as CAPI merges them). Merged on first use.
    pub fn raw_variables(&self) -> &[Variable] {
        self.merged
            .get_or_init(|| merge_variables(self.global, self.item))
    }
}

/// The request's global variables, decoded once for all its items: most items carry only
/// their own `builtin` (their scope's: `controlPlane`, `machineDeployment`, `machinePool`)
/// and share every user variable and `builtin.cluster` with the request.
struct Globals<'r, V> {
    variables: &'r [Variable],
    builtins: OnceLock<Result<Builtins, String>>,
    typed: OnceLock<Result<V, String>>,
}

impl<'r, V: DeserializeOwned> Globals<'r, V> {
    fn new(variables: &'r [Variable]) -> Self {
        Globals {
            variables,
            builtins: OnceLock::new(),
            typed: OnceLock::new(),
        }
    }

    fn builtins(&self) -> Result<&Builtins, String> {
        self.builtins
            .get_or_init(|| builtins(self.variables).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn typed(&self) -> Result<&V, String> {
        self.typed
            .get_or_init(|| variables_as(self.variables).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The item's builtins: the global ones when the item has none; the global ones beside
    /// the item's when their keys do not overlap (CAPI's case; the deep merge is then a
    /// union, made on the typed values); else the merged variables decoded.
    fn item_builtins(&self, item: &[Variable]) -> Result<MaybeOwned<'_, Builtins>, String> {
        let mut own = item.iter().filter(|v| v.name == BUILTIN);
        let first = match (own.next(), own.next()) {
            (None, _) => return self.builtins().map(MaybeOwned::Borrowed),
            (Some(first), None) => first,
            _ => return self.merged_builtins(item),
        };
        // The item's keys read from its text: its value is decoded straight into the type.
        let mut global = self.variables.iter().filter(|v| v.name == BUILTIN);
        let disjoint = match (global.next(), global.next(), first.value.keys()) {
            (None, _, Some(_)) => true,
            (Some(g), None, Some(own)) => g
                .value
                .as_object()
                .is_some_and(|g| own.iter().all(|k| !g.contains_key(k.as_ref()))),
            _ => false,
        };
        if disjoint
            && let (Ok(own), Ok(global)) = (first.value.decode::<Builtins>(), self.builtins())
        {
            return Ok(MaybeOwned::Owned(own.or(global)));
        }
        self.merged_builtins(item)
    }

    fn merged_builtins(&self, item: &[Variable]) -> Result<MaybeOwned<'_, Builtins>, String> {
        builtins(&merge_variables(self.variables, item))
            .map(MaybeOwned::Owned)
            .map_err(|e| e.to_string())
    }

    /// The item's typed variables: the global ones when the item overrides none.
    fn item_typed(&self, item: &[Variable]) -> Result<MaybeOwned<'_, V>, String> {
        if item.iter().all(|v| v.name == BUILTIN) {
            return self.typed().map(MaybeOwned::Borrowed);
        }
        // `builtin` is not among them: left out of the merge, it is not decoded for it.
        let user = |variables: &[Variable]| -> Vec<Variable> {
            variables
                .iter()
                .filter(|v| v.name != BUILTIN)
                .cloned()
                .collect()
        };
        variables_as(&merge_variables(&user(self.variables), &user(item)))
            .map(MaybeOwned::Owned)
            .map_err(|e| e.to_string())
    }
}

/// A value shared by the request's items, or the item's own.
enum MaybeOwned<'a, T> {
    Borrowed(&'a T),
    Owned(T),
}

impl<T> std::ops::Deref for MaybeOwned<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            MaybeOwned::Borrowed(t) => t,
            MaybeOwned::Owned(t) => t,
        }
    }
}

/// Why a patch function failed; made from any message (`?` on an error that implements
/// `Display`, or `Err("..".into())`).
#[derive(Debug)]
pub struct PatchError(String);

impl<E: Display> From<E> for PatchError {
    fn from(e: E) -> Self {
        PatchError(e.to_string())
    }
}

impl PatchError {
    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

type PatchFn<V> =
    dyn Fn(&mut Template, &PatchContext<'_, V>) -> Result<(), PatchError> + Send + Sync;
type Condition<V> = dyn Fn(&V, &Builtins) -> bool + Send + Sync;

/// One named patch: a selector, an optional condition and the function.
pub struct NamedPatch<V> {
    name: String,
    selector: Selector,
    enabled_if: Option<Arc<Condition<V>>>,
    apply: Arc<PatchFn<V>>,
    /// Why the patch cannot be added to a set (a typed patch whose selector names another
    /// kind).
    pub(super) conflict: Option<String>,
}

impl<V> Clone for NamedPatch<V> {
    fn clone(&self) -> Self {
        NamedPatch {
            name: self.name.clone(),
            selector: self.selector.clone(),
            enabled_if: self.enabled_if.clone(),
            apply: self.apply.clone(),
            conflict: self.conflict.clone(),
        }
    }
}

impl<V> std::fmt::Debug for NamedPatch<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedPatch")
            .field("name", &self.name)
            .field("selector", &self.selector)
            .field("enabled_if", &self.enabled_if.is_some())
            .finish()
    }
}

impl<V> NamedPatch<V> {
    /// A patch named `name` (used in errors and to pick it in tests) that applies `apply` to
    /// the templates `selector` selects.
    pub fn new(
        name: impl Into<String>,
        selector: Selector,
        apply: impl Fn(&mut Template, &PatchContext<'_, V>) -> Result<(), PatchError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        NamedPatch {
            name: name.into(),
            selector,
            enabled_if: None,
            apply: Arc::new(apply),
            conflict: None,
        }
    }

    /// Applies only when `condition` holds for the variables and builtins (CAPI's `enabledIf`).
    pub fn enabled_if(
        mut self,
        condition: impl Fn(&V, &Builtins) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.enabled_if = Some(Arc::new(condition));
        self
    }

    /// The patch's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The patch's selector.
    pub fn selector(&self) -> &Selector {
        &self.selector
    }
}

/// A GeneratePatches handler made of named patches, applied in order to each template they
/// select; the answer for a template is the JSON Patch from the template CAPI sent to the
/// template after every patch (like CAPI's `topologymutation.WalkTemplates`).
///
/// `V` is the extension's variables type (`#[derive(Variables)]` or any serde type whose
/// fields are variable names); it is read for each template from the global variables
/// overridden by the template's own, and only when a patch selects the template.
///
/// ```
/// use capi_ext::hooks::v1alpha1::*;
/// use capi_ext::patches::{NamedPatch, PatchContext, PatchError, PatchSet, Selector, Template};
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Vars { image_repository: Option<String> }
///
/// /// The control plane pulls its images from `imageRepository`.
/// fn image_repository(t: &mut Template, ctx: &PatchContext<Vars>) -> Result<(), PatchError> {
///     let repository = ctx.variables.image_repository.as_deref().unwrap_or("registry.k8s.io");
///     t.set("/spec/template/spec/imageRepository", repository)?;
///     Ok(())
/// }
///
/// /// Worker machines carry their class as a label.
/// fn class_label(t: &mut Template, ctx: &PatchContext<Vars>) -> Result<(), PatchError> {
///     let class = ctx.builtins.machine_deployment.as_ref().map(|md| md.class.as_str()).unwrap_or_default();
///     t.set(&pointer(["spec", "template", "metadata", "labels", "example.com/class"]), class)?;
///     Ok(())
/// }
///
/// fn patches() -> PatchSet<Vars> {
///     PatchSet::new()
///         .patch(NamedPatch::new("image-repository", Selector::control_plane().control_plane_template(), image_repository))
///         .patch(NamedPatch::new("class-label", Selector::machine_deployments(["*"]).infrastructure(), class_label)
///             .enabled_if(|vars, _| vars.image_repository.is_some()))
/// }
///
/// let request: GeneratePatchesRequest = serde_json::from_value(serde_json::json!({
///     "variables": [{"name": "imageRepository", "value": "registry.example.com"}],
///     "items": [{"uid": "1", "object": {"kind": "T", "spec": {"template": {"spec": {}}}},
///                "holderReference": {"kind": "Cluster", "fieldPath": "spec.controlPlaneRef"}}]
/// })).unwrap();
/// let response = patches().generate(&request);
/// assert_eq!(response.items[0].patch, Patch::json().add("/spec/template/spec/imageRepository", "registry.example.com"));
/// ```
pub struct PatchSet<V> {
    patches: Vec<NamedPatch<V>>,
}

impl<V> Clone for PatchSet<V> {
    fn clone(&self) -> Self {
        PatchSet {
            patches: self.patches.clone(),
        }
    }
}

impl<V> std::fmt::Debug for PatchSet<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.patches).finish()
    }
}

impl<V> Default for PatchSet<V> {
    fn default() -> Self {
        PatchSet {
            patches: Vec::new(),
        }
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

impl<V: DeserializeOwned> PatchSet<V> {
    /// An empty set.
    pub fn new() -> Self {
        PatchSet::default()
    }

    /// Adds a patch, applied after those already added.
    ///
    /// # Panics
    /// When the name is not a DNS-1123 label or is taken, the selector can never match
    /// ([`Selector::validate`]), or a typed patch's selector names another kind: a mistake in the code, found by the first test that builds
    /// the set (as axum's router panics on conflicting routes).
    pub fn patch(mut self, patch: NamedPatch<V>) -> Self {
        if !valid_name(&patch.name) {
            panic!(
                "patch `{}`: the name must be a DNS-1123 label (lowercase letters, digits and '-', at most 63), e.g. `image-repository`",
                patch.name
            );
        }
        if self.patches.iter().any(|p| p.name == patch.name) {
            panic!(
                "patch `{}` is added twice; patch names are unique in a set",
                patch.name
            );
        }
        if let Err(e) = patch.selector.validate() {
            panic!("patch `{}`: {e}", patch.name);
        }
        if let Some(conflict) = &patch.conflict {
            panic!("patch `{}`: {conflict}", patch.name);
        }
        self.patches.push(patch);
        self
    }

    /// Adds every patch of another set, after these.
    pub fn extend(self, other: PatchSet<V>) -> Self {
        other.patches.into_iter().fold(self, PatchSet::patch)
    }

    /// The patches' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.patches.iter().map(|p| p.name.as_str())
    }

    /// A set of only the patch named `name` (to test it alone), or `None`.
    pub fn only(&self, name: &str) -> Option<PatchSet<V>> {
        let patch = self.patches.iter().find(|p| p.name == name)?;
        Some(PatchSet {
            patches: vec![patch.clone()],
        })
    }

    /// The patched template of one item, or `None` when no patch selects it.
    pub fn apply_to_item(
        &self,
        item: &GeneratePatchesRequestItem,
        global: &[Variable],
        settings: &Settings,
    ) -> Result<Option<Template>, String> {
        self.apply_with(item, &Globals::new(global), settings)
    }

    fn apply_with(
        &self,
        item: &GeneratePatchesRequestItem,
        globals: &Globals<'_, V>,
        settings: &Settings,
    ) -> Result<Option<Template>, String> {
        let builtins = globals
            .item_builtins(&item.variables)
            .map_err(|e| describe(item, &e))?;
        let md_class = builtins
            .machine_deployment
            .as_ref()
            .map(|m| m.class.as_str());
        let mp_class = builtins.machine_pool.as_ref().map(|m| m.class.as_str());
        let (api_version, kind) = (item.object.api_version(), item.object.kind());
        let mut selected = self
            .patches
            .iter()
            .filter(|p| {
                p.selector.matches_named(
                    (&api_version, &kind),
                    &item.holder_reference,
                    md_class,
                    mp_class,
                )
            })
            .peekable();
        if selected.peek().is_none() {
            return Ok(None);
        }
        let variables = globals
            .item_typed(&item.variables)
            .map_err(|e| describe(item, &e))?;
        let context = PatchContext {
            variables: &*variables,
            builtins: &builtins,
            holder: &item.holder_reference,
            settings,
            global: globals.variables,
            item: &item.variables,
            merged: OnceLock::new(),
        };
        let mut template = Template::from_sent(&item.object);
        for patch in selected {
            if patch
                .enabled_if
                .as_ref()
                .is_some_and(|enabled| !enabled(&variables, &builtins))
            {
                continue;
            }
            (patch.apply)(&mut template, &context)
                .map_err(|e| describe(item, &format!("patch `{}` failed: {}", patch.name, e.0)))?;
        }
        Ok(Some(template))
    }

    /// Answers a GeneratePatches request: every item's patches applied in order, one JSON
    /// Patch per changed template; the first error fails the answer, naming the patch and
    /// the template. The global variables are decoded once for all items.
    pub fn generate(&self, request: &GeneratePatchesRequest) -> GeneratePatchesResponse {
        let mut response = GeneratePatchesResponse::success();
        let globals = Globals::new(&request.variables);
        for item in &request.items {
            match self.apply_with(item, &globals, &request.settings) {
                Ok(Some(template)) => {
                    let ops = template.into_changes();
                    if !ops.is_empty() {
                        response = response.patch(item.uid.clone(), Patch::Json(ops));
                    }
                }
                Ok(None) => {}
                Err(message) => return GeneratePatchesResponse::failure(message),
            }
        }
        response
    }
}

/// Collects patches in order, as [`PatchSet::patch`] adds them (and panics as it does).
impl<V: DeserializeOwned> FromIterator<NamedPatch<V>> for PatchSet<V> {
    fn from_iter<I: IntoIterator<Item = NamedPatch<V>>>(patches: I) -> Self {
        patches.into_iter().fold(PatchSet::new(), PatchSet::patch)
    }
}

/// `<message> (template <kind> used by <holder kind> <name> at <field path>)`.
fn describe(item: &GeneratePatchesRequestItem, message: &str) -> String {
    let holder = &item.holder_reference;
    format!(
        "{message} (template {} used by {} {} at {})",
        item.kind(),
        holder.kind,
        if holder.name.is_empty() {
            "?"
        } else {
            &holder.name
        },
        holder.field_path
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::v1alpha1::{JsonPatchOp, ResponseStatus};
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Vars {
        replicas: Option<u32>,
        #[serde(default)]
        audit: bool,
    }

    fn request() -> GeneratePatchesRequest {
        serde_json::from_value(json!({
            "variables": [{"name": "replicas", "value": 3},
                          {"name": "builtin", "value": {"cluster": {"name": "c1", "namespace": "ns"}}}],
            "items": [
                {"uid": "cp", "object": {"kind": "KCPT", "spec": {"template": {"spec": {}}}},
                 "holderReference": {"kind": "Cluster", "name": "c1", "fieldPath": "spec.controlPlaneRef"}},
                {"uid": "md", "object": {"kind": "MT", "spec": {}},
                 "holderReference": {"kind": "MachineDeployment", "name": "md-0", "fieldPath": "spec.template.spec.infrastructureRef"},
                 "variables": [{"name": "replicas", "value": 5},
                               {"name": "builtin", "value": {"machineDeployment": {"class": "gpu"}}}]}
            ]
        }))
        .unwrap()
    }

    fn set() -> PatchSet<Vars> {
        PatchSet::new()
            .patch(NamedPatch::new(
                "replicas",
                Selector::control_plane().or(Selector::machine_deployments(["*"])),
                |t, ctx: &PatchContext<'_, Vars>| {
                    t.set("/spec/replicas", ctx.variables.replicas.unwrap_or(1))?;
                    Ok(())
                },
            ))
            .patch(NamedPatch::new(
                "gpu",
                Selector::machine_deployments(["gpu"]),
                |t, ctx| {
                    t.label(
                        "class",
                        &ctx.builtins.machine_deployment.as_ref().unwrap().class,
                    )?;
                    Ok(())
                },
            ))
            .patch(
                NamedPatch::new("audit", Selector::control_plane(), |t, _| {
                    t.set("/spec/audit", true)?;
                    Ok(())
                })
                .enabled_if(|v: &Vars, _| v.audit),
            )
    }

    #[test]
    fn patches_compose_in_order_per_template() {
        let response = set().generate(&request());
        assert_eq!(
            response.status,
            ResponseStatus::Success,
            "{}",
            response.message
        );
        assert_eq!(response.items.len(), 2);
        assert_eq!(response.items[0].uid, "cp");
        assert_eq!(
            response.items[0].patch,
            Patch::json().add("/spec/replicas", 3)
        );
        // The item's own variable wins; both patches land in one JSON Patch.
        let Patch::Json(ops) = &response.items[1].patch else {
            panic!()
        };
        assert_eq!(ops.len(), 2);
        assert!(ops.contains(&JsonPatchOp::Add {
            path: "/spec/replicas".into(),
            value: json!(5)
        }));
        assert!(ops.contains(&JsonPatchOp::Add {
            path: "/metadata".into(),
            value: json!({"labels": {"class": "gpu"}})
        }));
    }

    #[test]
    fn errors_name_the_patch_and_the_template() {
        let failing = set().patch(NamedPatch::new(
            "broken",
            Selector::machine_deployments(["*"]),
            |t, _| {
                t.set("/spec/replicas/x", 1)?;
                Ok(())
            },
        ));
        let response = failing.generate(&request());
        assert_eq!(response.status, ResponseStatus::Failure);
        assert_eq!(
            response.message,
            "patch `broken` failed: /spec/replicas: is a number, not an object (template MT used by MachineDeployment md-0 at spec.template.spec.infrastructureRef)"
        );
        let mut bad = request();
        bad.variables[0].value = json!("three").into();
        let response = set().generate(&bad);
        assert!(
            response.message.contains("variable `")
                && response
                    .message
                    .contains("(template KCPT used by Cluster c1"),
            "{}",
            response.message
        );
    }

    /// An item's `builtin` is joined to the global one: side by side when their keys differ
    /// (CAPI's case), deep-merged when they overlap.
    #[test]
    fn item_builtins_are_merged_with_the_global_ones() {
        let set: PatchSet<Vars> = PatchSet::new().patch(NamedPatch::new(
            "record",
            Selector::machine_deployments(["*"]),
            |t, ctx| {
                let cluster = ctx.builtins.cluster.as_ref().unwrap();
                let md = ctx.builtins.machine_deployment.as_ref().unwrap();
                t.set(
                    "/seen",
                    format!("{}/{} {}", cluster.namespace, cluster.name, md.class),
                )?;
                Ok(())
            },
        ));
        let seen = |request: &GeneratePatchesRequest| {
            let response = set.generate(request);
            assert_eq!(
                response.status,
                ResponseStatus::Success,
                "{}",
                response.message
            );
            response.items[0].patch.clone()
        };
        let mut request = request();
        request.items.remove(0);
        assert_eq!(seen(&request), Patch::json().add("/seen", "ns/c1 gpu"));
        assert!(
            !request.items[0].variables[1].value.is_decoded(),
            "the item's own builtin is read into the type from its text"
        );
        request.items[0].variables[1].value =
            json!({"machineDeployment": {"class": "gpu"}, "cluster": {"name": "c2"}}).into();
        assert_eq!(seen(&request), Patch::json().add("/seen", "ns/c2 gpu"));
    }

    #[test]
    fn collects_in_order() {
        let set: PatchSet<Vars> = PatchSet::from_iter([
            NamedPatch::new("b", Selector::control_plane(), |_, _| Ok(())),
            NamedPatch::new("a", Selector::control_plane(), |_, _| Ok(())),
        ]);
        assert_eq!(set.names().collect::<Vec<_>>(), ["b", "a"]);
    }

    #[test]
    fn only_picks_one_patch() {
        let response = set().only("gpu").unwrap().generate(&request());
        assert_eq!(response.items.len(), 1);
        assert_eq!(
            set().names().collect::<Vec<_>>(),
            ["replicas", "gpu", "audit"]
        );
        assert!(set().only("nope").is_none());
    }

    #[test]
    #[should_panic(expected = "patch `replicas` is added twice")]
    fn duplicate_names_fail_early() {
        let _ = set().patch(NamedPatch::new(
            "replicas",
            Selector::control_plane(),
            |_, _| Ok(()),
        ));
    }

    #[test]
    #[should_panic(expected = "patch `cp-boot`: bootstrap() needs")]
    fn impossible_selectors_fail_early() {
        let _ = PatchSet::<Vars>::new().patch(NamedPatch::new(
            "cp-boot",
            Selector::control_plane().bootstrap(),
            |_, _| Ok(()),
        ));
    }
}
