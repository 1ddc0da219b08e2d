//! Typed patches: a patch function that edits a template as a Rust type (generated from the
//! kind's CRD by `capi-ext generate types`, or built in) instead of JSON pointers. A misspelled
//! field is a compile error; the template is decoded into the type, edited, and the difference
//! between the typed value before and after is replayed onto the template CAPI sent, so the
//! answer is minimal and the fields the type does not know stay as they were.
//!
//! What that costs is kept low for the usual case, a template no patch has edited yet: it is
//! decoded into the type straight from the text CAPI sent (no `Value` tree first), and when the
//! type's encoding is that text (compared byte for byte, whitespace between tokens and the
//! spelling of escapes aside, else as values), the typed value after the edit becomes the
//! template, with nothing replayed. A type that finds its own difference ([`Difference`], as
//! the generated types do) is not encoded to a tree at all: its encoding is written once, for
//! that comparison, and the answer is the difference of the two typed values, kept as the
//! template's changes until something reads the template.

use super::set::{NamedPatch, PatchContext, PatchError};
use super::{Difference, Differences, Selector, Template, diff};
use crate::hooks::v1alpha1::JsonPatchOp;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A Kubernetes kind with a Rust type, for typed patches: the selector's kind and apiVersion
/// come from here. Generated types implement it.
pub trait TypedTemplate: Serialize + DeserializeOwned {
    /// The apiVersion, e.g. `controlplane.cluster.x-k8s.io/v1beta2`.
    const API_VERSION: &'static str;
    /// The kind, e.g. `KubeadmControlPlaneTemplate`.
    const KIND: &'static str;

    /// How a typed patch finds the difference of its edit: `None` (the default) from the
    /// type's encodings before and after the edit; [`TypedDifference::of`] for a type that
    /// finds it on its values ([`Difference`]), without encoding them whole. The types
    /// `capi-ext generate types` writes give the latter.
    fn typed_difference() -> Option<TypedDifference<Self>> {
        None
    }
}

/// The difference of a typed patch's edit found on the typed values ([`Difference`]): a copy
/// of the value before the edit, compared with the value after it.
pub struct TypedDifference<T> {
    copy: fn(&T) -> T,
    difference: for<'a> fn(&'a T, &'a T, &mut Differences<'a>),
}

impl<T: Clone + Difference> TypedDifference<T> {
    /// `T`'s own `Clone` and [`Difference`].
    ///
    /// ```
    /// # use capi_ext::patches::{Difference, Differences, TypedDifference, TypedTemplate};
    /// # #[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
    /// # struct Widget { size: i64 }
    /// # impl Difference for Widget {
    /// #     fn difference<'a>(&'a self, after: &'a Self, out: &mut Differences<'a>) {
    /// #         out.member("size", &self.size, true, &after.size, true);
    /// #     }
    /// # }
    /// impl TypedTemplate for Widget {
    ///     const API_VERSION: &'static str = "example.com/v1";
    ///     const KIND: &'static str = "Widget";
    ///     fn typed_difference() -> Option<TypedDifference<Self>> {
    ///         Some(TypedDifference::of())
    ///     }
    /// }
    /// ```
    pub fn of() -> Self {
        TypedDifference {
            copy: T::clone,
            difference: T::difference,
        }
    }
}

/// One operation of [`diff`] (add or replace an object member, remove, replace a list) on the
/// template.
fn apply_op(template: &mut Template, op: &JsonPatchOp) -> Result<(), PatchError> {
    match op {
        JsonPatchOp::Add { path, value } | JsonPatchOp::Replace { path, value } => {
            template.set(path, value.clone()).map_err(PatchError::from)
        }
        JsonPatchOp::Remove { path } => {
            template.remove(path);
            Ok(())
        }
        other => Err(PatchError::from(format!("unexpected operation {other:?}"))),
    }
}

/// The fields a typed value holds that its type does not know (kept in its structs'
/// `unknown` maps): what a newer CRD has that the type was not generated from. Generated types
/// implement it.
pub trait UnknownFields {
    /// Adds the paths of the unknown fields below `at` (`spec.template.spec.x`).
    fn collect_unknown_fields(&self, at: &str, out: &mut Vec<String>);

    /// The paths of the unknown fields, from the object's root (`spec.x`, `spec.items[0].y`).
    fn unknown_fields(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_unknown_fields("", &mut out);
        for path in &mut out {
            if let Some(rest) = path.strip_prefix('.') {
                *path = rest.to_string();
            }
        }
        out
    }
}

impl<V: 'static> NamedPatch<V> {
    /// A patch whose function edits the template as `T`: it gets only templates of `T`'s kind
    /// and apiVersion (added to `selector`; a selector naming another kind or apiVersion is
    /// refused when the set is built), decoded into `T` (a template that does not decode fails
    /// the answer, naming the patch, the template and the field), and answers the difference
    /// between `T` before and after, applied to the template as sent.
    ///
    /// ```
    /// use capi_ext::hooks::v1alpha1::*;
    /// use capi_ext::patches::{NamedPatch, PatchSet, Selector, TypedTemplate};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize)]
    /// struct WidgetTemplate {
    ///     #[serde(rename = "apiVersion")] api_version: String,
    ///     kind: String,
    ///     spec: WidgetSpec,
    ///     #[serde(flatten)] unknown: serde_json::Map<String, serde_json::Value>,
    /// }
    /// #[derive(Serialize, Deserialize)]
    /// struct WidgetSpec {
    ///     #[serde(default, skip_serializing_if = "Option::is_none")] size: Option<i64>,
    ///     #[serde(flatten)] unknown: serde_json::Map<String, serde_json::Value>,
    /// }
    /// impl TypedTemplate for WidgetTemplate {
    ///     const API_VERSION: &'static str = "example.com/v1";
    ///     const KIND: &'static str = "WidgetTemplate";
    /// }
    ///
    /// let patches: PatchSet<serde_json::Value> = PatchSet::new().patch(NamedPatch::typed(
    ///     "size", Selector::control_plane(), |w: &mut WidgetTemplate, _| {
    ///         w.spec.size = Some(3);
    ///         Ok(())
    ///     }));
    /// let request: GeneratePatchesRequest = serde_json::from_value(serde_json::json!({
    ///     "items": [{"uid": "1", "holderReference": {"kind": "Cluster", "fieldPath": "spec.controlPlaneRef"},
    ///                "object": {"apiVersion": "example.com/v1", "kind": "WidgetTemplate",
    ///                           "spec": {"color": "blue"}}}]})).unwrap();
    /// let response = patches.generate(&request);
    /// // Only the change; `color`, unknown to the type, is untouched.
    /// assert_eq!(response.items[0].patch, Patch::json().add("/spec/size", 3));
    /// ```
    pub fn typed<T: TypedTemplate + 'static>(
        name: impl Into<String>,
        selector: Selector,
        apply: impl Fn(&mut T, &PatchContext<'_, V>) -> Result<(), PatchError> + Send + Sync + 'static,
    ) -> Self {
        let name = name.into();
        let (kind, api_version) = selector.named_kind();
        let conflict = match (kind, api_version) {
            (Some(k), _) if k != T::KIND => Some(format!("kind {k}")),
            (_, Some(a)) if a != T::API_VERSION => Some(format!("apiVersion {a}")),
            _ => None,
        };
        let selector = selector.kind(T::KIND).api_version(T::API_VERSION);
        let patch_name = name.clone();
        let mut patch = NamedPatch::new(name, selector, move |template: &mut Template, ctx| {
            // Decoded once, without tracking the path; only a template that does not decode is
            // decoded again, with `serde_path_to_error`, to say where.
            let decode = || -> Result<T, PatchError> {
                if let Ok(typed) = T::deserialize(template.object()) {
                    return Ok(typed);
                }
                serde_path_to_error::deserialize(template.object()).map_err(|e| {
                    PatchError::from(format!(
                        "typed patch `{patch_name}`: the {} {} does not decode as {} at `{}`: {}",
                        T::KIND,
                        template
                            .object()
                            .pointer("/metadata/name")
                            .and_then(serde_json::Value::as_str)
                            .unwrap_or("(unnamed)"),
                        std::any::type_name::<T>(),
                        e.path(),
                        e.inner()
                    ))
                })
            };
            // An unedited template is decoded straight from the text CAPI sent; when the
            // type gives that text back (the usual case), the typed value after the edit is
            // the template now, and nothing is decoded or replayed on the side.
            let from_text = template
                .unedited_text()
                .and_then(|text| serde_json::from_str::<T>(text).ok());
            let decoded_from_text = from_text.is_some();
            let mut typed = match from_text {
                Some(typed) => typed,
                None => decode()?,
            };
            // A type that finds its own difference, on a template it gives back as sent:
            // the answer is that difference, and neither value is encoded whole.
            if decoded_from_text
                && let Some(found) = T::typed_difference()
                && template.encodes_as_sent(&typed)
            {
                let before = (found.copy)(&typed);
                apply(&mut typed, ctx)?;
                let mut differences = Differences::new();
                (found.difference)(&before, &typed, &mut differences);
                let ops = differences.finish().map_err(PatchError::from)?;
                template.set_changes(ops);
                return Ok(());
            }
            let before = serde_json::to_value(&typed).map_err(PatchError::from)?;
            let as_sent = decoded_from_text && template.is_sent(&before);
            apply(&mut typed, ctx)?;
            let after = serde_json::to_value(&typed).map_err(PatchError::from)?;
            if as_sent {
                template.set_edited(before, after);
                return Ok(());
            }
            for op in diff(&before, &after) {
                apply_op(template, &op)?;
            }
            Ok(())
        });
        patch.conflict = conflict.map(|c| {
            format!(
                "the selector names {c}, but the patch edits {} {}",
                T::API_VERSION,
                T::KIND
            )
        });
        patch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::v1alpha1::{GeneratePatchesRequest, GeneratePatchesResponse};
    use crate::patches::PatchSet;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize)]
    struct Widget {
        spec: WidgetSpec,
        #[serde(flatten)]
        unknown: serde_json::Map<String, serde_json::Value>,
    }

    #[derive(Serialize, Deserialize)]
    struct WidgetSpec {
        sizes: Vec<i64>,
        #[serde(flatten)]
        unknown: serde_json::Map<String, serde_json::Value>,
    }

    impl TypedTemplate for Widget {
        const API_VERSION: &'static str = "example.com/v1";
        const KIND: &'static str = "Widget";
    }

    fn grow(w: &mut Widget, _: &PatchContext<'_, serde_json::Value>) -> Result<(), PatchError> {
        w.spec.sizes.push(4);
        Ok(())
    }

    fn answer(object: serde_json::Value) -> GeneratePatchesResponse {
        let set: PatchSet<serde_json::Value> =
            PatchSet::new().patch(NamedPatch::typed("grow", Selector::control_plane(), grow));
        let request: GeneratePatchesRequest = serde_json::from_value(serde_json::json!({
            "items": [{"uid": "1", "holderReference": {"kind": "Cluster", "fieldPath": "spec.controlPlaneRef"},
                       "object": object}]}))
        .unwrap();
        set.generate(&request)
    }

    #[test]
    fn a_template_that_does_not_decode_names_the_field() {
        let response = answer(
            serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"sizes": [1, "two"]}}),
        );
        let message = response.message;
        assert!(
            message.contains("typed patch `grow`: the Widget w does not decode as")
                && message.contains("at `spec.sizes[1]`"),
            "{message}"
        );
    }

    /// A type that does not give the template back as sent (it drops an empty list): the
    /// answer is still only the edit, replayed onto the template as sent.
    #[derive(Serialize, Deserialize)]
    struct Lossy {
        spec: LossySpec,
        #[serde(flatten)]
        unknown: serde_json::Map<String, serde_json::Value>,
    }

    #[derive(Serialize, Deserialize)]
    struct LossySpec {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        sizes: Vec<i64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tags: Vec<String>,
    }

    impl TypedTemplate for Lossy {
        const API_VERSION: &'static str = "example.com/v1";
        const KIND: &'static str = "Widget";
    }

    fn lossy_set() -> PatchSet<serde_json::Value> {
        PatchSet::new().patch(NamedPatch::typed(
            "grow",
            Selector::control_plane(),
            |w: &mut Lossy, _| {
                w.spec.sizes.push(4);
                Ok(())
            },
        ))
    }

    fn lossy_answer(object: &str) -> GeneratePatchesResponse {
        let set = lossy_set();
        let request: GeneratePatchesRequest = serde_json::from_str(&format!(
            r#"{{"items": [{{"uid": "1", "holderReference": {{"kind": "Cluster", "fieldPath": "spec.controlPlaneRef"}}, "object": {object}}}]}}"#
        ))
        .unwrap();
        set.generate(&request)
    }

    #[test]
    fn the_answer_is_the_edit_whether_or_not_the_type_gives_the_template_back() {
        use crate::hooks::v1alpha1::Patch;
        // Given back (in another spacing, and with an escape serde_json does not write):
        // the typed value after the edit is the template.
        for object in [
            r#"{"apiVersion":"example.com/v1","kind":"Widget","spec":{"sizes":[1]}}"#,
            r#"{ "apiVersion": "example.com/v1", "kind": "Widget", "spec": { "sizes": [ 1 ] } }"#,
            r#"{"apiVersion":"example.com/v1","kind":"Widget","note":"\u003c","spec":{"sizes":[1]}}"#,
        ] {
            let response = lossy_answer(object);
            assert_eq!(response.items.len(), 1, "{object}: {}", response.message);
            assert_eq!(
                response.items[0].patch,
                Patch::json().replace("/spec/sizes", serde_json::json!([1, 4])),
                "{object}"
            );
        }
        // Not given back (`tags: []` is dropped by the type): the empty list stays, for the
        // answer and for the patches after this one.
        let object =
            r#"{"apiVersion":"example.com/v1","kind":"Widget","spec":{"sizes":[1],"tags":[]}}"#;
        let response = lossy_answer(object);
        assert_eq!(
            response.items[0].patch,
            Patch::json().replace("/spec/sizes", serde_json::json!([1, 4]))
        );
        let set = lossy_set();
        let item: crate::hooks::v1alpha1::GeneratePatchesRequestItem = serde_json::from_str(&format!(
            r#"{{"uid": "1", "holderReference": {{"kind": "Cluster", "fieldPath": "spec.controlPlaneRef"}}, "object": {object}}}"#
        ))
        .unwrap();
        let template = set
            .apply_to_item(&item, &[], &Default::default())
            .unwrap()
            .unwrap();
        assert_eq!(
            template.object()["spec"],
            serde_json::json!({"sizes": [1, 4], "tags": []})
        );
    }

    #[test]
    fn other_kinds_are_not_selected() {
        let response = answer(
            serde_json::json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "spec": {"sizes": "not a list"}}),
        );
        assert!(response.items.is_empty() && response.message.is_empty());
    }

    #[test]
    #[should_panic(
        expected = "patch `grow`: the selector names kind Gadget, but the patch edits example.com/v1 Widget"
    )]
    fn a_selector_naming_another_kind_is_refused() {
        let _: PatchSet<serde_json::Value> = PatchSet::new().patch(NamedPatch::typed(
            "grow",
            Selector::control_plane().kind("Gadget"),
            grow,
        ));
    }
}
