//! What the API server keeps of what render makes, when the CRDs of the kinds are at hand
//! ([`Input::crds`](crate::Input::crds)), written the way Cluster API writes it (server-side
//! apply, [`Write::Apply`]): a field a patch sets that the template's CRD does not declare is an
//! error naming the patch, the template and the pointer (the apply is refused); each rendered
//! object is replaced by what the API server stores (defaults filled in), or is an error with
//! the API server's causes when it would refuse it (a null where the schema allows none
//! included).

use crate::apiserver::{Admitted, Crds, Write};
use crate::error::RenderError;
use crate::object::string;
use capi_ext::hooks::v1alpha1::GeneratePatchesRequestItem;
use serde_json::Value;
use std::collections::BTreeMap;

/// The fields the API server would prune from each item's template, by uid.
pub(crate) fn pruned_by_item(
    crds: &Crds,
    items: &[GeneratePatchesRequestItem],
) -> BTreeMap<String, Vec<String>> {
    items
        .iter()
        .filter_map(|item| {
            let admitted = crds.admit_as(&item.object, Write::Apply)?.ok()?;
            Some((item.uid.clone(), admitted.pruned))
        })
        .collect()
}

/// A JSON pointer for a pruned field's path (`spec.a[0].b` → `/spec/a/0/b`).
fn pointer(path: &str) -> String {
    let mut out = String::new();
    for part in path.split('.') {
        let (key, indexes) = part
            .split_once('[')
            .map_or((part, ""), |(k, rest)| (k, rest));
        out.push('/');
        out.push_str(&capi_ext::hooks::v1alpha1::escape_token(key));
        for index in indexes.split(['[', ']']).filter(|s| !s.is_empty()) {
            out.push('/');
            out.push_str(index);
        }
    }
    out
}

/// A pruned field as the error shows it: its pointer, and the nearest known name.
fn shown(crds: &Crds, object: &Value, path: &str) -> String {
    match crate::apiserver::did_you_mean_in(crds, object, path) {
        Some(name) => format!("{} (did you mean {}?)", pointer(path), pointer(&name)),
        None => pointer(path),
    }
}

/// Fails when the patch made fields the API server would prune: those not pruned before it.
pub(crate) fn check_patch(
    crds: &Crds,
    before: &BTreeMap<String, Vec<String>>,
    items: &[GeneratePatchesRequestItem],
    patch: Option<&str>,
) -> Result<(), RenderError> {
    for (uid, pruned) in pruned_by_item(crds, items) {
        let earlier = before.get(&uid);
        let item = items
            .iter()
            .find(|i| i.uid == uid)
            .expect("the uid is an item's");
        let new: Vec<String> = pruned
            .iter()
            .filter(|p| earlier.is_none_or(|e| !e.contains(p)))
            .map(|p| shown(crds, &item.object, p))
            .collect();
        if new.is_empty() {
            continue;
        }
        return Err(RenderError::Pruned {
            patch: patch.map(str::to_string),
            kind: string(&item.object, &["kind"]).to_string(),
            name: string(&item.object, &["metadata", "name"]).to_string(),
            pointers: new,
        });
    }
    Ok(())
}

/// Replaces each object by what the API server stores of it, written as `write` says (the
/// inputs a user created, the objects Cluster API applies); returns a warning per kind whose
/// CRD is not at hand (its fields were not checked).
pub(crate) fn store(
    crds: &Crds,
    objects: &mut [Value],
    write: Write,
) -> Result<Vec<String>, RenderError> {
    let mut warnings = Vec::new();
    for object in objects.iter_mut() {
        let kind = string(object, &["kind"]).to_string();
        let name = string(object, &["metadata", "name"]).to_string();
        match crds.admit_as(object, write) {
            None => {
                let warning = format!(
                    "no CRD of {kind} ({}) at hand: its fields were not checked against the API server's rules (give its CRD with --crds)",
                    string(object, &["apiVersion"])
                );
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
            }
            Some(Err(message)) => return Err(RenderError::Input(message)),
            Some(Ok(Admitted {
                object: stored,
                pruned,
                errors,
                ..
            })) => {
                if !pruned.is_empty() {
                    return Err(RenderError::Pruned {
                        patch: None,
                        kind,
                        name,
                        pointers: pruned.iter().map(|p| shown(crds, object, p)).collect(),
                    });
                }
                if !errors.is_empty() {
                    return Err(RenderError::Rejected { kind, name, errors });
                }
                *object = stored;
                // Cluster API's own mutating webhook, after decoding as the API server runs it.
                crate::capi_webhooks::default(object).map_err(RenderError::Input)?;
            }
        }
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::pointer;
    use crate::{Input, NoExtension, RenderError, apiserver::Crds, render};
    use serde_json::json;
    use std::sync::Arc;

    fn input(path: &str) -> Input {
        let mut input = Input::from_documents(vec![
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                   "metadata": {"name": "c1", "namespace": "default"},
                   "spec": {"topology": {"classRef": {"name": "k"}, "version": "v1.34.0",
                            "controlPlane": {"replicas": 1}}}}),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
                   "metadata": {"name": "k", "namespace": "default"},
                   "spec": {
                     "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureClusterTemplate", "name": "infra"}},
                     "controlPlane": {"templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate", "name": "cp"},
                                      "machineInfrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureMachineTemplate", "name": "cp-machine"}}},
                     "patches": [{"name": "registry", "definitions": [{
                       "selector": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate", "matchResources": {"controlPlane": true}},
                       "jsonPatches": [{"op": "add", "path": path, "value": "registry.example.com"}]}]}]}}),
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureClusterTemplate",
                   "metadata": {"name": "infra", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
            json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureMachineTemplate",
                   "metadata": {"name": "cp-machine", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
            json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate",
                   "metadata": {"name": "cp", "namespace": "default"},
                   "spec": {"template": {"spec": {"kubeadmConfigSpec": {"clusterConfiguration": {"imageRepository": "registry.k8s.io"}}}}}}),
        ])
        .unwrap();
        input.crds = Some(Arc::new({
            let mut crds = Crds::default();
            crds.fill_from(Crds::capi());
            crds
        }));
        input
    }

    fn run(input: &Input) -> Result<crate::Rendered, RenderError> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(render(input, &NoExtension))
    }

    #[test]
    fn a_misspelled_field_of_a_patch_is_an_error_naming_the_patch() {
        let at = "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepositry";
        let err = run(&input(at)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "patch registry: KubeadmControlPlaneTemplate cp gets the field {at} (did you mean /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository?) that its CRD does not declare: the API server refuses Cluster API's server-side apply of it (`field not declared in schema`) and the Cluster stops reconciling (for a schema server-side apply cannot type, it drops it without an error); check the name against the CRD"
            )
        );
        let rendered = run(&input(
            "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository",
        ))
        .unwrap();
        assert_eq!(
            rendered.warnings,
            [
                "no CRD of GenericInfrastructureCluster (infrastructure.cluster.x-k8s.io/v1beta2) at hand: its fields were not checked against the API server's rules (give its CRD with --crds)",
                "no CRD of GenericInfrastructureMachineTemplate (infrastructure.cluster.x-k8s.io/v1beta2) at hand: its fields were not checked against the API server's rules (give its CRD with --crds)"
            ]
        );
        let control_plane = rendered.object("KubeadmControlPlane").unwrap();
        assert_eq!(
            control_plane["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["imageRepository"],
            "registry.example.com"
        );
    }

    #[test]
    fn pointers_of_pruned_paths() {
        assert_eq!(pointer("spec.a[0].b"), "/spec/a/0/b");
        assert_eq!(
            pointer("spec.template.spec.x/y"),
            "/spec/template/spec/x~1y"
        );
    }
}
