//! The API server's rules for custom resources, applied offline: what a real cluster does to
//! an object CAPI writes, given the CRD of its kind. In the API server's order (as
//! apiextensions-apiserver 1.36 does on a create):
//!
//! 1. pruning: fields the schema does not declare are dropped (and named: the API server warns
//!    `unknown field "spec.x"`, or refuses them under strict field validation);
//! 2. nulls of fields that are neither nullable nor defaulted are dropped on a create
//!    ([`Write::Create`]); a server-side apply ([`Write::Apply`], how Cluster API writes every
//!    object it computes) keeps them, and validation refuses them (`must be of type string:
//!    "null"`);
//! 3. CRD defaults are filled in;
//! 4. `status` is dropped when the CRD has a status subresource;
//! 5. validation: the OpenAPI schema (types, formats, enums, patterns, bounds, required,
//!    int-or-string, junctors), list sets and maps, then the `x-kubernetes-validations` CEL
//!    rules unless an earlier error blocks them, each error with the API server's field path
//!    and type.
//!
//! ```
//! use capi_ext_render::apiserver::{Crds, ErrorType};
//! let mut crds = Crds::default();
//! crds.add_documents(capi_ext_render::documents(r#"
//! apiVersion: apiextensions.k8s.io/v1
//! kind: CustomResourceDefinition
//! metadata: {name: widgets.example.com}
//! spec:
//!   group: example.com
//!   names: {kind: Widget, plural: widgets}
//!   scope: Namespaced
//!   versions:
//!   - name: v1
//!     served: true
//!     storage: true
//!     schema:
//!       openAPIV3Schema:
//!         type: object
//!         properties:
//!           spec:
//!             type: object
//!             properties:
//!               replicas: {type: integer, minimum: 1, default: 1}
//! "#).unwrap(), "widgets.yaml").unwrap();
//! let object = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
//!     "metadata": {"name": "w"}, "spec": {"replicaz": 3}});
//! let admitted = crds.admit(&object).unwrap().unwrap();
//! assert_eq!(admitted.pruned, ["spec.replicaz"]);
//! assert_eq!(admitted.object["spec"]["replicas"], 1);
//! let invalid = serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
//!     "metadata": {"name": "w"}, "spec": {"replicas": 0}});
//! let admitted = crds.admit(&invalid).unwrap().unwrap();
//! assert_eq!(admitted.errors[0].field, "spec.replicas");
//! assert_eq!(admitted.errors[0].type_, ErrorType::Invalid);
//! ```

mod builtin;
pub(crate) mod cel;
mod formats;
mod lists;
mod openapi;
mod prune;
pub mod schema;

pub use builtin::CAPI_VERSION as BUILT_IN_CAPI_VERSION;
pub use cel::Unchecked;
use schema::Schema;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// The path the API server gives an error that belongs to no field (Go's nil `field.Path`).
pub const NIL_PATH: &str = "<nil>";

/// The API server's field error types (`metav1.CauseType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorType {
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueNotSupported` (not one of an enum's values).
    NotSupported,
    /// `FieldValueTooLong`.
    TooLong,
    /// `FieldValueTooMany`.
    TooMany,
    /// `FieldValueTypeInvalid` (a wrong type, or a string not of its format).
    TypeInvalid,
    /// `FieldValueDuplicate`.
    Duplicate,
    /// `FieldValueForbidden`.
    Forbidden,
}

impl ErrorType {
    /// The name the API server's Status carries.
    pub fn cause(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Forbidden => "FieldValueForbidden",
        }
    }

    /// The words the API server writes for it (`field.ErrorType.String`).
    pub fn text(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Forbidden => "Forbidden",
        }
    }

    /// Whether the API server skips the CEL rules when an error of this type is present.
    fn blocks_rules(self) -> bool {
        matches!(
            self,
            ErrorType::NotSupported
                | ErrorType::Required
                | ErrorType::TooLong
                | ErrorType::TooMany
                | ErrorType::TypeInvalid
        )
    }
}

/// One reason the API server rejects an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field path the API server reports (`spec.replicas`, `spec.items[0].name`,
    /// [`NIL_PATH`] for errors of the whole object).
    pub field: String,
    /// The error's type.
    pub type_: ErrorType,
    /// What is wrong: the detail of the API server's field error, word for word (empty for a
    /// bare `Required value`); its cause's message is the type's words, the bad value, then
    /// this.
    pub message: String,
}

/// As the API server writes a field error, less the bad value: `spec.mode: Unsupported value:
/// supported values: "a", "b"`.
impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.type_.text())?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

/// One version of a CRD.
#[derive(Debug)]
pub struct Version {
    /// Its name (`v1beta2`).
    pub name: String,
    /// Whether the API server serves it.
    pub served: bool,
    /// Whether objects are stored in it.
    pub storage: bool,
    /// Its schema.
    pub schema: Schema,
    /// Whether it has the status subresource (a create then drops `status`).
    pub status_subresource: bool,
    /// The scale subresource's paths (`.spec.replicas`, `.status.replicas`, the label
    /// selector's), when it has one: the API server checks the replicas are int32 integers.
    pub scale: Option<[Option<String>; 3]>,
    /// Whether any node of the schema has `x-kubernetes-validations` (the API server then has
    /// a CEL validator, and says when an earlier error kept it from running).
    pub has_rules: bool,
}

/// A CustomResourceDefinition, as far as the rules need it.
#[derive(Debug)]
pub struct Crd {
    /// `metadata.name`.
    pub name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Its versions.
    pub versions: Vec<Version>,
    /// Where it was read from.
    pub source: String,
}

impl Crd {
    /// The version objects are stored in.
    pub fn storage_version(&self) -> Option<&Version> {
        self.versions.iter().find(|v| v.storage)
    }
}

/// What the API server would store for an object, and what it would refuse.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The object after pruning, defaulting and dropping `status` (what a create stores, less
    /// the server's own metadata), valid or not.
    pub object: Value,
    /// The fields pruned (the API server's `unknown field` warnings).
    pub pruned: Vec<String>,
    /// Why the API server refuses the object (none: it is stored).
    pub errors: Vec<FieldError>,
    /// CEL rules that could not be checked here.
    pub unchecked: Vec<Unchecked>,
}

/// A set of CRDs, by group and kind.
#[derive(Debug, Default)]
pub struct Crds {
    kinds: BTreeMap<(String, String), std::sync::Arc<Crd>>,
}

fn text<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(value, |v, k| v.get(k))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Crds {
    /// Adds the CustomResourceDefinitions among `documents` (other kinds are skipped); returns
    /// how many were added. A CRD without a schema or with one that cannot be read is an error
    /// naming it and `source`.
    pub fn add_documents(&mut self, documents: Vec<Value>, source: &str) -> Result<usize, String> {
        let mut added = 0;
        for document in documents {
            if text(&document, &["kind"]) != "CustomResourceDefinition" {
                continue;
            }
            let name = text(&document, &["metadata", "name"]).to_string();
            let mut versions = Vec::new();
            for version in document
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let version_name = text(version, &["name"]).to_string();
                let schema = match version.pointer("/schema/openAPIV3Schema") {
                    Some(schema) => Schema::from_value(schema)
                        .map_err(|e| format!("{source}: CRD {name} version {version_name}: {e}"))?,
                    None => {
                        return Err(format!(
                            "{source}: CRD {name} version {version_name} has no schema.openAPIV3Schema (apiextensions.k8s.io/v1 requires one)"
                        ));
                    }
                };
                let has_rules = schema.has_rules();
                let scale = version.pointer("/subresources/scale").map(|scale| {
                    [
                        "specReplicasPath",
                        "statusReplicasPath",
                        "labelSelectorPath",
                    ]
                    .map(|key| scale.get(key).and_then(Value::as_str).map(str::to_string))
                });
                versions.push(Version {
                    scale,
                    has_rules,
                    name: version_name,
                    served: version
                        .get("served")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    storage: version
                        .get("storage")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    schema,
                    status_subresource: version.pointer("/subresources/status").is_some(),
                });
            }
            let crd = Crd {
                group: text(&document, &["spec", "group"]).to_string(),
                kind: text(&document, &["spec", "names", "kind"]).to_string(),
                plural: text(&document, &["spec", "names", "plural"]).to_string(),
                namespaced: text(&document, &["spec", "scope"]) != "Cluster",
                versions,
                source: source.to_string(),
                name,
            };
            self.kinds.insert(
                (crd.group.clone(), crd.kind.clone()),
                std::sync::Arc::new(crd),
            );
            added += 1;
        }
        Ok(added)
    }

    /// Reads CRDs from a YAML or JSON file, or from every `.yaml`/`.yml`/`.json` file of a
    /// directory (recursively, in name order); returns how many were added.
    pub fn add_path(&mut self, path: &std::path::Path) -> Result<usize, String> {
        let mut added = 0;
        for (file, documents) in documents_at(path)? {
            added += self.add_documents(documents, &file)?;
        }
        Ok(added)
    }

    /// The CRDs of Cluster API [`BUILT_IN_CAPI_VERSION`] carried built in: core (Cluster,
    /// ClusterClass, MachineDeployment…), KubeadmControlPlane(Template) and
    /// KubeadmConfig(Template).
    pub fn capi() -> &'static Crds {
        builtin::capi()
    }

    /// Adds the CRDs of `other` whose kinds this set does not have.
    pub fn fill_from(&mut self, other: &Crds) {
        for crd in other.kinds.values() {
            let key = (crd.group.clone(), crd.kind.clone());
            self.kinds.entry(key).or_insert_with(|| crd.clone());
        }
    }

    /// Every CRD of the set.
    pub fn iter(&self) -> impl Iterator<Item = &Crd> {
        self.kinds.values().map(|crd| &**crd)
    }

    /// Whether the set holds no CRD.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The CRD of an object's `apiVersion` and `kind`, if the set has it.
    pub fn get(&self, api_version: &str, kind: &str) -> Option<&Crd> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        self.kinds
            .get(&(group.to_string(), kind.to_string()))
            .map(|crd| &**crd)
    }

    /// What the API server does to `object` on a create: `None` when the set has no CRD for
    /// its kind; an error when its version is not served.
    pub fn admit(&self, object: &Value) -> Option<Result<Admitted, String>> {
        self.admit_as(object, Write::Create)
    }

    /// What the API server does to `object` written the way `write` says: `None` when the set
    /// has no CRD for its kind; an error when its version is not served.
    ///
    /// ```
    /// use capi_ext_render::apiserver::{Crds, Write};
    /// let md = serde_json::json!({"apiVersion": "cluster.x-k8s.io/v1beta2",
    ///     "kind": "MachineDeployment", "metadata": {"name": "md"},
    ///     "spec": {"clusterName": "c", "selector": {}, "template": {"spec": {"clusterName": "c", "version": null,
    ///         "bootstrap": {"dataSecretName": "s"},
    ///         "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
    ///             "kind": "DevMachine", "name": "m"}}}}});
    /// let crds = Crds::capi();
    /// let created = crds.admit_as(&md, Write::Create).unwrap().unwrap();
    /// assert!(created.errors.is_empty(), "{:?}", created.errors);
    /// let applied = crds.admit_as(&md, Write::Apply).unwrap().unwrap();
    /// assert_eq!(applied.errors[0].field, "spec.template.spec.version");
    /// assert!(applied.errors[0].message.ends_with(r#"must be of type string: "null""#));
    /// ```
    pub fn admit_as(&self, object: &Value, write: Write) -> Option<Result<Admitted, String>> {
        let api_version = text(object, &["apiVersion"]);
        let kind = text(object, &["kind"]);
        let crd = self.get(api_version, kind)?;
        let version_name = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
        let Some(version) = crd
            .versions
            .iter()
            .find(|v| v.name == version_name && v.served)
        else {
            let served: Vec<&str> = crd
                .versions
                .iter()
                .filter(|v| v.served)
                .map(|v| v.name.as_str())
                .collect();
            return Some(Err(format!(
                "{kind} {api_version}: the CRD {} serves {} only",
                crd.name,
                served.join(", ")
            )));
        };
        Some(Ok(admit(version, object, write)))
    }
}

/// How an object reaches the API server: the two differ on a null.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// A create or update: a null of a field that is neither nullable nor defaulted is dropped.
    Create,
    /// A server-side apply, as Cluster API writes every object it computes: a field the schema
    /// does not declare is refused (`field not declared in schema`) instead of dropped, and a
    /// null is kept, so a field that is not nullable refuses it.
    Apply,
}

/// The Kubernetes objects of a YAML or JSON file, or of every `.yaml`/`.yml`/`.json` file of a
/// directory (recursively, in name order), per file (named as given).
pub fn documents_at(path: &std::path::Path) -> Result<Vec<(String, Vec<Value>)>, String> {
    let mut files = Vec::new();
    collect_files(path, &mut files)?;
    files
        .into_iter()
        .map(|file| {
            let text =
                std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let documents =
                crate::documents(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            Ok((file.display().to_string(), documents))
        })
        .collect()
}

fn collect_files(path: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect_files(&entry, out)?;
        } else if entry
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(entry);
        }
    }
    Ok(())
}

/// The scale subresource's checks: the replicas paths hold integers from 0 to 2^31-1 (absent
/// reads as 0), the label selector path a string.
fn scale_errors(version: &Version, object: &Value) -> Vec<FieldError> {
    let Some([spec, status, selector]) = &version.scale else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    for path in [spec, status].into_iter().flatten() {
        let invalid = |message: String| FieldError {
            field: path.clone(),
            type_: ErrorType::Invalid,
            message,
        };
        match nested(object, path, "int64", |v| v.is_i64()) {
            Err(message) => errors.push(invalid(message)),
            Ok(None) => {}
            Ok(Some(value)) => {
                let replicas = value.as_i64().expect("checked");
                if replicas < 0 {
                    errors.push(invalid("should be a non-negative integer".into()));
                } else if replicas > i64::from(i32::MAX) {
                    errors.push(invalid(format!(
                        "should be less than or equal to {}",
                        i32::MAX
                    )));
                }
            }
        }
    }
    if let Some(path) = selector
        && let Err(message) = nested(object, path, "string", Value::is_string)
    {
        errors.push(FieldError {
            field: path.clone(),
            type_: ErrorType::Invalid,
            message,
        });
    }
    errors
}

/// unstructured's `NestedInt64`/`NestedString` at a scale path (`.spec.replicas`): absent (or a
/// null on the way) is none; a non-object on the way or a value of another type is its
/// accessor error, word for word.
fn nested<'a>(
    object: &'a Value,
    path: &str,
    expected: &str,
    is: impl Fn(&Value) -> bool,
) -> Result<Option<&'a Value>, String> {
    let fields: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut value = object;
    for (i, key) in fields.iter().enumerate() {
        match value {
            Value::Null => return Ok(None),
            Value::Object(map) => match map.get(*key) {
                Some(v) => value = v,
                None => return Ok(None),
            },
            other => {
                return Err(format!(
                    ".{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    fields[..=i].join("."),
                    go_value(other),
                    go_type(other)
                ));
            }
        }
    }
    if is(value) {
        Ok(Some(value))
    } else {
        Err(format!(
            ".{} accessor error: {} is of the type {}, expected {expected}",
            fields.join("."),
            go_value(value),
            go_type(value)
        ))
    }
}

/// Go's `%T` of a decoded JSON value.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value.
fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_value).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by_key(|(k, _)| *k);
            format!(
                "map[{}]",
                entries
                    .iter()
                    .map(|(k, v)| format!("{k}:{}", go_value(v)))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
    }
}

/// Go's `%v` of a float64: the shortest digits, in exponent form below 1e-4 or from 1e6.
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an e");
    let exponent: i32 = exponent.parse().expect("an exponent");
    if (-4..6).contains(&exponent) {
        format!("{f}")
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// The fields the API server would prune from `object` (a whole resource) under `root`.
pub fn pruned_fields(root: &Schema, object: &Value) -> Vec<String> {
    prune::prune(&mut object.clone(), root)
}

/// The known field nearest to a pruned one (a typo's likely intent), as a path: for
/// `spec.topolgy`, `spec.topology`.
pub fn did_you_mean(root: &Schema, pruned: &str) -> Option<String> {
    let (parent_path, name) = pruned.rsplit_once('.').unwrap_or(("", pruned));
    let mut node = root;
    if !parent_path.is_empty() {
        for segment in parent_path.split('.') {
            let (key, indexes) = segment.split_once('[').unwrap_or((segment, ""));
            node = node.field(key)?;
            for _ in indexes.split('[').filter(|i| !i.is_empty()) {
                node = node.items.as_deref()?;
            }
        }
    }
    let nearest =
        capi_ext_codegen::naming::did_you_mean(name, node.properties.keys().map(String::as_str))?;
    Some(if parent_path.is_empty() {
        nearest.to_string()
    } else {
        format!("{parent_path}.{nearest}")
    })
}

/// [`did_you_mean`] for a pruned field of `object`, by the schema of its kind and version in
/// `crds`.
pub fn did_you_mean_in(crds: &Crds, object: &Value, pruned: &str) -> Option<String> {
    let api_version = text(object, &["apiVersion"]);
    let version_name = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
    let crd = crds.get(api_version, text(object, &["kind"]))?;
    let version = crd.versions.iter().find(|v| v.name == version_name)?;
    did_you_mean(&version.schema, pruned)
}

/// The rules of one version on one object, written as `write` says.
pub fn admit(version: &Version, object: &Value, write: Write) -> Admitted {
    let schema = &version.schema;
    let mut stored = object.clone();
    let pruned = prune::prune(&mut stored, schema);
    if write == Write::Create {
        prune::prune_nulls(&mut stored, Some(schema));
    }
    prune::default(&mut stored, schema);
    if version.status_subresource
        && let Some(map) = stored.as_object_mut()
    {
        map.remove("status");
    }
    let mut errors = scale_errors(version, &stored);
    errors.extend(openapi::validate(schema, &stored));
    if let Some(map) = stored.as_object() {
        errors.extend(lists::validate(schema, map));
    }
    let mut unchecked = Vec::new();
    if !version.has_rules {
    } else if errors.iter().any(|e| e.type_.blocks_rules()) {
        errors.push(FieldError {
            field: NIL_PATH.into(),
            type_: ErrorType::Invalid,
            message: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
        });
    } else {
        cel::validate(schema, &stored, &mut errors, &mut unchecked);
    }
    Admitted {
        object: stored,
        pruned,
        errors,
        unchecked,
    }
}

#[cfg(test)]
mod tests;
