//! Tests that show what a patch does: build one template as CAPI sends it (holder, builtins,
//! variables), run a GeneratePatches handler or a [`PatchSet`] on it, get the patched object
//! back (applied as CAPI applies it: RFC 6902 strictly, only `spec`, labels and annotations
//! kept), and assert on it with JSON pointers or a snapshot file. A failing assertion prints
//! the object's diff.
//!
//! ```
//! use capi_ext::hooks::v1alpha1::GeneratePatches;
//! use capi_ext::patches::{NamedPatch, PatchContext, PatchError, PatchSet, Selector, Template};
//! use capi_ext_render::testing::TemplateCase;
//! use serde_json::json;
//!
//! fn version_label(t: &mut Template, ctx: &PatchContext<serde_json::Value>) -> Result<(), PatchError> {
//!     let version = &ctx.builtins.control_plane.as_ref().ok_or("no controlPlane builtin")?.version;
//!     t.set("/spec/template/metadata/labels/version", version.as_str())?;
//!     Ok(())
//! }
//!
//! let set = PatchSet::new().patch(NamedPatch::new("version-label", Selector::control_plane(), version_label));
//! let patched = TemplateCase::control_plane(json!({
//!     "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate",
//!     "metadata": {"name": "cp"}, "spec": {"template": {}}
//! }))
//! .builtin("/controlPlane/version", "v1.35.0")
//! .run_set(&set)
//! .unwrap();
//! patched.assert_value("/spec/template/metadata/labels/version", "v1.35.0");
//! patched.assert_changed_only(&["/spec/template/metadata"]);
//! ```

use crate::apiserver::{Crds, Write};
use crate::apply::patch_object;
use crate::caller::Caller;
use capi_ext::hooks::v1alpha1::{
    GeneratePatches, GeneratePatchesRequest, GeneratePatchesRequestItem, GeneratePatchesResponse,
    HolderReference, Hook, JsonPatchOp, ResponseStatus, Settings, Variable,
};
use capi_ext::patches::{PatchSet, diff};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::path::Path;

/// The environment variable that makes [`Patched::assert_snapshot`] (re)write snapshot files.
pub const UPDATE_SNAPSHOTS: &str = "CAPI_EXT_UPDATE_SNAPSHOTS";

/// The Cluster the builtins describe by default.
pub const CLUSTER: &str = "test-cluster";
/// The Kubernetes version of the builtins by default.
pub const VERSION: &str = "v1.34.0";
const UID: &str = "template";

/// One template as CAPI sends it in a GeneratePatches request.
#[derive(Debug, Clone)]
pub struct TemplateCase {
    object: Value,
    holder: HolderReference,
    variables: Vec<Variable>,
    cluster: Value,
    own: Value,
    settings: Settings,
}

fn holder(kind: &str, name: &str, field_path: &str) -> HolderReference {
    HolderReference {
        api_version: if kind.ends_with("ControlPlane") {
            "controlplane.cluster.x-k8s.io/v1beta2".into()
        } else {
            "cluster.x-k8s.io/v1beta2".into()
        },
        kind: kind.into(),
        namespace: "default".into(),
        name: name.into(),
        field_path: field_path.into(),
    }
}

fn worker_builtin(class: &str) -> Value {
    json!({"class": class, "name": format!("{CLUSTER}-md-0"), "topologyName": "md-0", "version": VERSION, "replicas": 1})
}

impl TemplateCase {
    fn new(object: Value, holder: HolderReference, own: Value) -> Self {
        TemplateCase {
            object,
            holder,
            variables: Vec::new(),
            cluster: json!({
                "name": CLUSTER, "namespace": "default",
                "topology": {"version": VERSION, "class": "test-class",
                             "classRef": {"name": "test-class", "namespace": "default"}}
            }),
            own,
            settings: Settings::new(),
        }
    }

    fn control_plane_builtin() -> Value {
        json!({"controlPlane": {"version": VERSION, "name": format!("{CLUSTER}-cp"), "replicas": 3}})
    }

    /// The control plane template (held by the Cluster at `spec.controlPlaneRef`).
    pub fn control_plane(object: Value) -> Self {
        Self::new(
            object,
            holder("Cluster", CLUSTER, "spec.controlPlaneRef"),
            Self::control_plane_builtin(),
        )
    }

    /// The control plane's machine infrastructure template (held by a KubeadmControlPlane at
    /// `spec.machineTemplate.spec.infrastructureRef`).
    pub fn control_plane_machines(object: Value) -> Self {
        Self::new(
            object,
            holder(
                "KubeadmControlPlane",
                &format!("{CLUSTER}-cp"),
                "spec.machineTemplate.spec.infrastructureRef",
            ),
            Self::control_plane_builtin(),
        )
    }

    /// The infrastructure cluster template (held by the Cluster at `spec.infrastructureRef`).
    pub fn infrastructure_cluster(object: Value) -> Self {
        Self::new(
            object,
            holder("Cluster", CLUSTER, "spec.infrastructureRef"),
            json!({}),
        )
    }

    fn worker(object: Value, kind: &str, key: &str, class: &str, field: &str) -> Self {
        Self::new(
            object,
            holder(kind, &format!("{CLUSTER}-md-0"), field),
            json!({ key: worker_builtin(class) }),
        )
    }

    /// The infrastructure template of a MachineDeployment of class `class`.
    pub fn machine_deployment_infrastructure(class: &str, object: Value) -> Self {
        Self::worker(
            object,
            "MachineDeployment",
            "machineDeployment",
            class,
            "spec.template.spec.infrastructureRef",
        )
    }

    /// The bootstrap config template of a MachineDeployment of class `class`.
    pub fn machine_deployment_bootstrap(class: &str, object: Value) -> Self {
        Self::worker(
            object,
            "MachineDeployment",
            "machineDeployment",
            class,
            "spec.template.spec.bootstrap.configRef",
        )
    }

    /// The infrastructure template of a MachinePool of class `class`.
    pub fn machine_pool_infrastructure(class: &str, object: Value) -> Self {
        Self::worker(
            object,
            "MachinePool",
            "machinePool",
            class,
            "spec.template.spec.infrastructureRef",
        )
    }

    /// The bootstrap config template of a MachinePool of class `class`.
    pub fn machine_pool_bootstrap(class: &str, object: Value) -> Self {
        Self::worker(
            object,
            "MachinePool",
            "machinePool",
            class,
            "spec.template.spec.bootstrap.configRef",
        )
    }

    /// Sets a user variable (the last value of a name wins).
    ///
    /// # Panics
    /// When the value does not serialize to JSON.
    pub fn variable(mut self, name: &str, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).expect("the variable's value serializes to JSON");
        self.variables.retain(|v| v.name != name);
        self.variables.push(Variable {
            name: name.into(),
            value: value.into(),
        });
        self
    }

    /// Sets a builtin at a JSON pointer into `builtin`, e.g. `/cluster/topology/version` or
    /// `/machineDeployment/replicas`; missing objects on the way are created.
    ///
    /// # Panics
    /// When the pointer is not under `/cluster`, `/controlPlane`, `/machineDeployment` or
    /// `/machinePool`.
    pub fn builtin(mut self, pointer: &str, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).expect("the builtin's value serializes to JSON");
        let (target, rest) = match pointer.strip_prefix("/cluster") {
            Some(rest) => (&mut self.cluster, rest),
            None if ["/controlPlane", "/machineDeployment", "/machinePool"]
                .iter()
                .any(|p| pointer.starts_with(p)) =>
            {
                (&mut self.own, pointer)
            }
            None => panic!(
                "builtin `{pointer}`: builtins live under /cluster, /controlPlane, /machineDeployment or /machinePool"
            ),
        };
        let mut template = capi_ext::patches::Template::new(std::mem::take(target));
        if rest.is_empty() {
            *template.object_mut() = value;
        } else if let Err(e) = template.set(rest, value) {
            panic!("builtin `{pointer}`: {e}");
        }
        *target = template.into_object();
        self
    }

    /// Sets a setting (ExtensionConfig settings overlaid with the ClusterClass patch's).
    pub fn setting(mut self, name: &str, value: &str) -> Self {
        self.settings.insert(name.into(), value.into());
        self
    }

    /// The request CAPI would send for this template: user variables and `builtin.cluster`
    /// global, the template's own builtin on the item, as CAPI splits them.
    pub fn request(&self) -> GeneratePatchesRequest {
        let mut request = GeneratePatchesRequest::new();
        request.settings = self.settings.clone();
        request.variables = self.variables.clone();
        request.variables.push(Variable {
            name: "builtin".into(),
            value: json!({"cluster": self.cluster}).into(),
        });
        let own = self.own.as_object().filter(|o| !o.is_empty());
        request.items.push(GeneratePatchesRequestItem {
            uid: UID.into(),
            holder_reference: self.holder.clone(),
            object: self.object.clone().into(),
            variables: own
                .map(|o| {
                    vec![Variable {
                        name: "builtin".into(),
                        value: Value::Object(o.clone()).into(),
                    }]
                })
                .unwrap_or_default(),
        });
        request
    }

    fn patched(&self, response: GeneratePatchesResponse) -> Result<Patched, String> {
        if response.status == ResponseStatus::Failure {
            return Err(response.message);
        }
        let mut after = self.object.clone();
        for item in &response.items {
            if item.uid != UID {
                return Err(format!(
                    "the answer patches uid `{}`, which the request did not carry (CAPI: unable to find corresponding request item)",
                    item.uid
                ));
            }
            after = patch_object(&after, &item.patch)?;
        }
        Ok(Patched {
            before: self.object.clone(),
            after,
        })
    }

    /// Runs the handler `handler` of an extension (e.g. a `capi_ext::Extension`, in-process)
    /// on this template; `Err` carries a Failure's message or why the answer is unusable.
    pub async fn run<C: Caller>(&self, caller: &C, handler: &str) -> Result<Patched, String> {
        let body = serde_json::to_vec(&self.request()).map_err(|e| e.to_string())?;
        let answer = caller
            .call(&GeneratePatches::info().path(handler), body)
            .await
            .map_err(|e| e.to_string())?;
        let response: GeneratePatchesResponse = serde_json::from_slice(&answer)
            .map_err(|e| format!("the answer is not a GeneratePatchesResponse: {e}"))?;
        self.patched(response)
    }

    /// Runs a patch set (or one patch of it, with [`PatchSet::only`]) on this template.
    pub fn run_set<V: DeserializeOwned>(&self, set: &PatchSet<V>) -> Result<Patched, String> {
        self.patched(set.generate(&self.request()))
    }
}

/// Cluster API's own CRDs (built in) and those of the package's `crds/` folder, when it has one:
/// what [`Patched::assert_kept_by_api_server`] checks a template against. Reads the folder
/// where `cargo test` runs (the package's); a file that is not a CRD there fails.
pub fn crds() -> Crds {
    let mut crds = Crds::default();
    let folder = Path::new("crds");
    if folder.is_dir() {
        crds.add_path(folder).unwrap_or_else(|e| panic!("{e}"));
    }
    crds.fill_from(Crds::capi());
    crds
}

/// A template before and after the patches, as CAPI would use it.
#[derive(Debug, Clone, PartialEq)]
pub struct Patched {
    /// The template as sent.
    pub before: Value,
    /// The template patched.
    pub after: Value,
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values serialize");
    text.push('\n');
    text
}

fn unified(old: &str, new: &str, from: &str, to: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(from, to)
        .to_string()
}

impl Patched {
    /// The patched object.
    pub fn object(&self) -> &Value {
        &self.after
    }

    /// The patched template decoded as `T` (a type of `capi-ext-types` or one `capi-ext
    /// generate types` wrote), to assert on typed fields; panics, naming the field, when it
    /// does not decode.
    #[track_caller]
    pub fn typed<T: DeserializeOwned>(&self) -> T {
        match serde_path_to_error::deserialize(&self.after) {
            Ok(typed) => typed,
            Err(e) => self.fail(format!(
                "the patched template does not decode as {} at `{}`: {}",
                std::any::type_name::<T>(),
                e.path(),
                e.inner()
            )),
        }
    }

    /// The patched value at a JSON pointer.
    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.after.pointer(pointer)
    }

    /// What changed, as JSON Patch operations (objects member by member).
    pub fn changes(&self) -> Vec<JsonPatchOp> {
        diff(&self.before, &self.after)
    }

    /// The change as a unified diff of the pretty-printed object.
    pub fn diff(&self) -> String {
        unified(
            &pretty(&self.before),
            &pretty(&self.after),
            "sent",
            "patched",
        )
    }

    #[track_caller]
    fn fail(&self, what: String) -> ! {
        panic!("{what}\nthe template, sent → patched:\n{}", self.diff());
    }

    /// Asserts the value at a JSON pointer.
    #[track_caller]
    pub fn assert_value(&self, pointer: &str, expected: impl Serialize) {
        let expected = serde_json::to_value(expected).expect("the expected value serializes");
        match self.get(pointer) {
            Some(found) if *found == expected => {}
            Some(found) => self.fail(format!("at {pointer}: expected {expected}, found {found}")),
            None => self.fail(format!("at {pointer}: expected {expected}, found nothing")),
        }
    }

    /// Asserts that nothing is at a JSON pointer.
    #[track_caller]
    pub fn assert_absent(&self, pointer: &str) {
        if let Some(found) = self.get(pointer) {
            self.fail(format!("at {pointer}: expected nothing, found {found}"));
        }
    }

    /// Asserts that the patches changed nothing.
    #[track_caller]
    pub fn assert_unchanged(&self) {
        if self.before != self.after {
            self.fail("expected the template unchanged".into());
        }
    }

    /// Asserts that every change is at or under one of `pointers` (nothing else moved). Values
    /// are compared leaf by leaf, so the objects a patch creates on the way to a field it sets
    /// count as that field's change (empty objects count as absent).
    #[track_caller]
    pub fn assert_changed_only(&self, pointers: &[&str]) {
        let under = |path: &str| {
            pointers
                .iter()
                .any(|p| path == *p || path.starts_with(&format!("{p}/")))
        };
        let (before, after) = (leaves(&self.before), leaves(&self.after));
        let outside: Vec<&str> = before
            .keys()
            .chain(after.keys())
            .filter(|path| before.get(*path) != after.get(*path) && !under(path))
            .map(String::as_str)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !outside.is_empty() {
            self.fail(format!(
                "changes outside {pointers:?}: {}",
                outside.join(", ")
            ));
        }
    }

    /// Asserts that a real API server would keep the patched template as it is: every field the
    /// patches set is declared by the template's CRD in `crds` (a misspelled one would be
    /// pruned without a word), and the template is valid (types, enums, bounds, CEL rules).
    /// Use [`crds`] for Cluster API's own CRDs and the project's `crds/` folder.
    ///
    /// ```
    /// use capi_ext_render::testing::{Patched, crds};
    /// use serde_json::json;
    /// let before = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
    ///     "kind": "KubeadmControlPlaneTemplate", "metadata": {"name": "cp"},
    ///     "spec": {"template": {"spec": {"kubeadmConfigSpec": {"clusterConfiguration": {"imageRepository": "a"}}}}}});
    /// let mut after = before.clone();
    /// after["spec"]["template"]["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["imageRepository"] = json!("b");
    /// Patched { before, after }.assert_kept_by_api_server(&crds());
    /// ```
    #[track_caller]
    pub fn assert_kept_by_api_server(&self, crds: &Crds) {
        let kind = self.after["kind"].as_str().unwrap_or_default();
        let Some(answer) = crds.admit_as(&self.after, Write::Apply) else {
            panic!(
                "no CRD of {kind} ({}) among the CRDs given: put it in the project's crds/ folder",
                self.after["apiVersion"].as_str().unwrap_or_default()
            );
        };
        let admitted = answer.unwrap_or_else(|e| panic!("{e}"));
        let pruned: Vec<String> = admitted
            .pruned
            .iter()
            .map(
                |path| match crate::apiserver::did_you_mean_in(crds, &self.after, path) {
                    Some(nearest) => format!("{path} (did you mean {nearest}?)"),
                    None => path.clone(),
                },
            )
            .collect();
        if !pruned.is_empty() {
            self.fail(format!(
                "the CRD of {kind} does not declare {}: the API server would refuse Cluster API's server-side apply of it (a plain create would drop it)",
                pruned.join(", ")
            ));
        }
        if !admitted.errors.is_empty() {
            self.fail(format!(
                "the API server would refuse the {kind}:\n  {}",
                admitted
                    .errors
                    .iter()
                    .map(|e| format!("{e} ({})", e.type_.cause()))
                    .collect::<Vec<_>>()
                    .join("\n  ")
            ));
        }
    }

    /// Asserts that the patched object equals the snapshot file at `path` (pretty JSON; a
    /// relative path is taken from the package's folder, where `cargo test` runs). A missing
    /// file is written, unless `CI` is set; with `CAPI_EXT_UPDATE_SNAPSHOTS=1` every snapshot
    /// is rewritten. Files are replaced atomically.
    #[track_caller]
    pub fn assert_snapshot(&self, path: impl AsRef<Path>) {
        let path = path.as_ref();
        let actual = pretty(&self.after);
        let update = std::env::var_os(UPDATE_SNAPSHOTS).is_some_and(|v| v == "1");
        match std::fs::read_to_string(path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) if !update => panic!(
                "the patched template differs from the snapshot {} (rerun with {UPDATE_SNAPSHOTS}=1 to accept it):\n{}",
                path.display(),
                unified(&expected, &actual, "snapshot", "patched")
            ),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                panic!("reading the snapshot {}: {e}", path.display())
            }
            Err(_) if std::env::var_os("CI").is_some() && !update => panic!(
                "the snapshot {} is missing; run the test once with {UPDATE_SNAPSHOTS}=1 and commit the file",
                path.display()
            ),
            _ => {
                if let Err(e) = write_atomically(path, &actual) {
                    panic!("writing the snapshot {}: {e}", path.display());
                }
                eprintln!("wrote snapshot {}", path.display());
            }
        }
    }
}

/// Every value that is not a non-empty object, by JSON pointer.
fn leaves(value: &Value) -> std::collections::BTreeMap<String, &Value> {
    fn walk<'a>(
        value: &'a Value,
        path: &mut String,
        out: &mut std::collections::BTreeMap<String, &'a Value>,
    ) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&capi_ext::hooks::v1alpha1::escape_token(key));
                    walk(child, path, out);
                    path.truncate(len);
                }
            }
            leaf => {
                out.insert(path.clone(), leaf);
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(value, &mut String::new(), &mut out);
    out
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    capi_ext::fs::write_atomic(path, text.as_bytes())
}

/// The first object of `kind` in a YAML (or JSON) file of Kubernetes objects, e.g. a template
/// from the project's `render/templates.yaml`.
///
/// # Panics
/// When the file cannot be read or holds no object of that kind (a test's input is wrong).
pub fn object_from_file(path: impl AsRef<Path>, kind: &str) -> Value {
    let path = path.as_ref();
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let documents = crate::documents(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let kinds: Vec<String> = documents
        .iter()
        .map(|d| d["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    documents
        .into_iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| {
            panic!(
                "{} has no {kind}; it holds {}",
                path.display(),
                kinds.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext::patches::{NamedPatch, Selector};

    type Vars = Value;

    #[test]
    #[should_panic(
        expected = "does not declare spec.template.spec.kubeadmConfigSpec.clusterConfiguration.imageRepositry (did you mean spec.template.spec.kubeadmConfigSpec.clusterConfiguration.imageRepository?)"
    )]
    fn a_field_the_crd_lacks_fails_the_api_server_assertion() {
        let before = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
            "kind": "KubeadmControlPlaneTemplate", "metadata": {"name": "cp"},
            "spec": {"template": {"spec": {}}}});
        let mut after = before.clone();
        after["spec"]["template"]["spec"] =
            json!({"kubeadmConfigSpec": {"clusterConfiguration": {"imageRepositry": "r"}}});
        Patched { before, after }.assert_kept_by_api_server(&crds());
    }

    fn set() -> PatchSet<Vars> {
        PatchSet::new()
            .patch(NamedPatch::new(
                "replicas",
                Selector::machine_deployments(["*"]),
                |t, ctx: &capi_ext::patches::PatchContext<'_, Vars>| {
                    let replicas = ctx
                        .builtins
                        .machine_deployment
                        .as_ref()
                        .and_then(|m| m.replicas);
                    t.set("/spec/template/spec/replicas", replicas)?;
                    t.set("/metadata/name", "renamed")?;
                    Ok(())
                },
            ))
            .patch(NamedPatch::new(
                "mirror",
                Selector::machine_deployments(["*"]),
                |t, ctx: &capi_ext::patches::PatchContext<'_, Vars>| {
                    let mirror = ctx
                        .variables
                        .get("mirror")
                        .and_then(Value::as_str)
                        .ok_or("variable mirror is missing")?;
                    t.push("/spec/template/spec/mirrors", mirror)?;
                    Ok(())
                },
            ))
    }

    fn object() -> Value {
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachineTemplate",
               "metadata": {"name": "md"}, "spec": {"template": {"spec": {}}}})
    }

    #[test]
    fn patches_apply_as_capi_applies_them() {
        let patched = TemplateCase::machine_deployment_infrastructure("default-worker", object())
            .variable("mirror", "mirror.example.com")
            .builtin("/machineDeployment/replicas", 4)
            .run_set(&set())
            .unwrap();
        patched.assert_value("/spec/template/spec/replicas", 4);
        patched.assert_value("/spec/template/spec/mirrors", ["mirror.example.com"]);
        // CAPI keeps only spec, labels and annotations: the rename is dropped.
        patched.assert_value("/metadata/name", "md");
        patched.assert_changed_only(&["/spec/template/spec"]);
        assert_eq!(patched.changes().len(), 2);
    }

    #[test]
    fn failures_carry_the_message() {
        let err = TemplateCase::machine_deployment_infrastructure("w", object())
            .run_set(&set())
            .unwrap_err();
        assert!(
            err.starts_with("patch `mirror` failed: variable mirror is missing"),
            "{err}"
        );
    }

    #[test]
    fn a_failing_assertion_shows_the_diff() {
        let patched = TemplateCase::machine_deployment_infrastructure("w", object())
            .variable("mirror", "m")
            .run_set(&set())
            .unwrap();
        let panic =
            std::panic::catch_unwind(|| patched.assert_value("/spec/template/spec/replicas", 2))
                .unwrap_err();
        let message = panic.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("at /spec/template/spec/replicas: expected 2, found 1"),
            "{message}"
        );
        assert!(
            message
                .lines()
                .any(|l| l.starts_with('+') && l[1..].trim() == "\"mirrors\": ["),
            "{message}"
        );
        let panic = std::panic::catch_unwind(|| {
            patched.assert_changed_only(&["/spec/template/spec/replicas"])
        })
        .unwrap_err();
        assert!(
            panic
                .downcast_ref::<String>()
                .unwrap()
                .contains("changes outside")
        );
    }

    #[test]
    fn snapshots_are_written_then_compared() {
        let dir = std::env::temp_dir().join(format!("capi-ext-snapshot-{}", std::process::id()));
        let path = dir.join("md.json");
        let case =
            TemplateCase::machine_deployment_infrastructure("w", object()).variable("mirror", "a");
        if std::env::var_os("CI").is_none() {
            case.run_set(&set()).unwrap().assert_snapshot(&path);
        } else {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, pretty(&case.run_set(&set()).unwrap().after)).unwrap();
        }
        case.run_set(&set()).unwrap().assert_snapshot(&path);
        let changed = case
            .clone()
            .variable("mirror", "b")
            .run_set(&set())
            .unwrap();
        let panic = std::panic::catch_unwind(|| changed.assert_snapshot(&path)).unwrap_err();
        let message = panic.downcast_ref::<String>().unwrap();
        assert!(
            message
                .lines()
                .any(|l| l.starts_with('-') && l[1..].trim() == "\"a\"")
                && message
                    .lines()
                    .any(|l| l.starts_with('+') && l[1..].trim() == "\"b\""),
            "{message}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn builtins_split_as_capi_splits_them() {
        let request = TemplateCase::control_plane(object())
            .builtin("/cluster/topology/version", "v1.35.0")
            .request();
        assert_eq!(request.variables[0].name, "builtin");
        assert_eq!(
            request.variables[0].value["cluster"]["topology"]["version"],
            "v1.35.0"
        );
        assert_eq!(
            request.items[0].variables[0].value["controlPlane"]["replicas"],
            3
        );
        assert!(
            TemplateCase::infrastructure_cluster(object())
                .request()
                .items[0]
                .variables
                .is_empty()
        );
    }
}
