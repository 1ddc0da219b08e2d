//! Templates into objects: `templateToObject`, `templateToTemplate`, and what CAPI cleans from a
//! template before it sends it.

use super::blueprint::Template;
use super::{
    CLONED_FROM_GROUP_KIND, CLONED_FROM_NAME, CLUSTER_NAME_LABEL, CONVERSION_DATA, LAST_APPLIED,
    TOPOLOGY_OWNED_LABEL,
};
use crate::object::{get, map_value, set, string, string_map};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub(super) fn group_kind(object: &Value) -> String {
    let api_version = string(object, &["apiVersion"]);
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = string(object, &["kind"]);
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

pub(super) fn clean_annotations(
    mut annotations: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    annotations.remove(LAST_APPLIED);
    annotations.remove(CONVERSION_DATA);
    annotations
}

/// Drops what CAPI drops from a template before it sends it: managed fields, the
/// last-applied-configuration and conversion-data annotations (`cleanupUnstructured`).
pub(crate) fn clean_template(template: &mut Value) {
    if let Some(metadata) = template.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("managedFields");
        if metadata.contains_key("annotations") {
            let annotations = clean_annotations(string_map(template, &["metadata", "annotations"]));
            let metadata = template["metadata"].as_object_mut().expect("checked above");
            if annotations.is_empty() {
                metadata.remove("annotations");
            } else {
                metadata.insert("annotations".into(), map_value(&annotations));
            }
        }
    }
}

/// Exposes the annotation clean-up for builtins (`cleanupAnnotations`).
pub(crate) fn builtin_annotations(object: &Value) -> BTreeMap<String, String> {
    clean_annotations(string_map(object, &["metadata", "annotations"]))
}

/// The owner reference CAPI gives the objects it clones for a Cluster
/// (`ownerrefs.OwnerReferenceTo(s.Current.Cluster, …)` in `exp/topology/desiredstate`). A
/// Cluster read from a file may have no uid yet (one stored by the API server always has).
pub(super) fn cluster_owner(cluster: &Value) -> Value {
    let mut owner = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "name": string(cluster, &["metadata", "name"]),
    });
    let uid = string(cluster, &["metadata", "uid"]);
    if !uid.is_empty() {
        owner["uid"] = json!(uid);
    }
    json!([owner])
}

/// The `cloned-from` annotations naming the stored template an object was made from (none for an
/// inline template: how Cluster API 1.15 annotates those is unproven here).
pub(super) fn cloned_from(template: &Template, annotations: &mut BTreeMap<String, String>) {
    if template.inline {
        return;
    }
    annotations.insert(
        CLONED_FROM_NAME.into(),
        string(&template.object, &["metadata", "name"]).into(),
    );
    annotations.insert(CLONED_FROM_GROUP_KIND.into(), group_kind(&template.object));
}

/// `external.GenerateTemplate` + `templateToObject`: an object from `spec.template`, owned by
/// the Cluster when CAPI passes it an owner (the MachinePool's objects; not the infrastructure
/// cluster or the control plane, which other controllers own).
pub(super) fn template_to_object(
    template: &Template,
    cluster: &Value,
    name: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    owned: bool,
) -> Value {
    let mut object = get(&template.object, &["spec", "template"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    let cluster_name = string(cluster, &["metadata", "name"]);
    let mut all_annotations = string_map(&object, &["metadata", "annotations"]);
    all_annotations.extend(annotations);
    cloned_from(template, &mut all_annotations);
    let mut all_labels = string_map(&object, &["metadata", "labels"]);
    all_labels.extend(labels);
    all_labels.insert(CLUSTER_NAME_LABEL.into(), cluster_name.into());
    all_labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
    set(&mut object, &["metadata", "name"], json!(name));
    set(
        &mut object,
        &["metadata", "namespace"],
        cluster["metadata"]["namespace"].clone(),
    );
    set(
        &mut object,
        &["metadata", "annotations"],
        map_value(&all_annotations),
    );
    set(&mut object, &["metadata", "labels"], map_value(&all_labels));
    if owned {
        set(
            &mut object,
            &["metadata", "ownerReferences"],
            cluster_owner(cluster),
        );
    }
    let kind = string(&template.object, &["kind"]);
    let mut ordered = serde_json::Map::new();
    ordered.insert("apiVersion".into(), template.object["apiVersion"].clone());
    ordered.insert(
        "kind".into(),
        json!(kind.strip_suffix("Template").unwrap_or(kind)),
    );
    for (k, v) in object.as_object().expect("an object").iter() {
        if k != "apiVersion" && k != "kind" {
            ordered.insert(k.clone(), v.clone());
        }
    }
    Value::Object(ordered)
}

/// `templateToTemplate`: a per-cluster copy of a template, owned by the Cluster.
pub(super) fn template_to_template(
    template: &Template,
    cluster: &Value,
    name: String,
    extra_label: Option<(&str, &str)>,
) -> Value {
    let mut copy = template.object.clone();
    if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "resourceVersion",
            "finalizers",
            "uid",
            "selfLink",
            "managedFields",
            "creationTimestamp",
            "generation",
        ] {
            metadata.remove(field);
        }
    }
    let mut labels = string_map(&copy, &["metadata", "labels"]);
    labels.insert(
        CLUSTER_NAME_LABEL.into(),
        string(cluster, &["metadata", "name"]).into(),
    );
    labels.insert(TOPOLOGY_OWNED_LABEL.into(), String::new());
    if let Some((k, v)) = extra_label {
        labels.insert(k.into(), v.into());
    }
    let mut annotations = clean_annotations(string_map(&copy, &["metadata", "annotations"]));
    cloned_from(template, &mut annotations);
    set(&mut copy, &["metadata", "labels"], map_value(&labels));
    set(
        &mut copy,
        &["metadata", "annotations"],
        map_value(&annotations),
    );
    set(&mut copy, &["metadata", "name"], json!(name));
    set(
        &mut copy,
        &["metadata", "namespace"],
        cluster["metadata"]["namespace"].clone(),
    );
    set(
        &mut copy,
        &["metadata", "ownerReferences"],
        cluster_owner(cluster),
    );
    copy
}
