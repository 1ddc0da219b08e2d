//! ClusterClass templates given inline (`template: {apiVersion, kind}` in place of
//! `templateRef`, Cluster API 1.15): refused when render plays an older release, and otherwise
//! sent to the extension as an object of that kind with nothing else, which the patches fill.
//! Unproven against a real Cluster API 1.15 until the module proxy serves it
//! (conformance/README.md).

use capi_ext::hooks::v1alpha1::*;
use capi_ext::{CapiVersion, Extension, Registration};
use capi_ext_render::{Input, RenderError, render};
use serde_json::{Value, json};

const INFRA: &str = "infrastructure.cluster.x-k8s.io/v1beta2";

fn input(worker_infrastructure: Value, capi_version: CapiVersion) -> Input {
    let mut input = Input::from_documents(vec![
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
               "metadata": {"name": "c1", "namespace": "default"},
               "spec": {"topology": {"classRef": {"name": "quick"}, "version": "v1.34.0",
                        "workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 1}]}}}}),
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
               "metadata": {"name": "quick", "namespace": "default"},
               "spec": {
                 "infrastructure": {"template": {"apiVersion": INFRA, "kind": "GenericInfrastructureClusterTemplate"}},
                 "controlPlane": {"templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlaneTemplate", "name": "cp"}},
                 "workers": {"machineDeployments": [{"class": "default-worker",
                   "bootstrap": {"templateRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "GenericBootstrapConfigTemplate", "name": "boot"}},
                   "infrastructure": worker_infrastructure}]},
                 "patches": [{"name": "p", "external": {"generatePatchesExtension": "patches.my-extension"}}]}}),
        json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "GenericControlPlaneTemplate",
               "metadata": {"name": "cp", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
        json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "GenericBootstrapConfigTemplate",
               "metadata": {"name": "boot", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
        json!({"apiVersion": INFRA, "kind": "GenericInfrastructureMachineTemplate",
               "metadata": {"name": "machine", "namespace": "default"}, "spec": {"template": {"spec": {}}}}),
    ])
    .unwrap();
    input.capi_version = Some(capi_version);
    input
}

fn inline_machine() -> Value {
    json!({"template": {"apiVersion": INFRA, "kind": "GenericInfrastructureMachineTemplate"}})
}

/// Fills every template that has no `spec.template.spec` (the inline ones) the way a 1.15
/// extension must: a JSON patch cannot add below a path that does not exist, so it adds the
/// part that is missing.
fn extension() -> Extension {
    Extension::builder()
        .handler(Registration::new(
            GeneratePatches,
            "patches",
            |req: GeneratePatchesRequest| async move {
                let mut response = GeneratePatchesResponse::success();
                for item in &req.items {
                    let kind = item.object["kind"].as_str().unwrap_or_default().to_string();
                    let patch = match item.object.pointer("/spec/template") {
                        Some(template) if template.get("spec").is_some() => continue,
                        Some(_) => {
                            Patch::json().add("/spec/template/spec", json!({"filledFrom": kind}))
                        }
                        None => Patch::json()
                            .add("/spec", json!({"template": {"spec": {"filledFrom": kind}}})),
                    };
                    response = response.patch(&item.uid, patch);
                }
                response
            },
        ))
        .build()
        .unwrap()
}

#[tokio::test]
async fn inline_templates_reach_the_extension_without_spec_and_come_back_filled() {
    let rendered = render(
        &input(inline_machine(), CapiVersion::new(1, 15)),
        &extension(),
    )
    .await
    .unwrap();

    let request = &rendered
        .exchanges
        .iter()
        .find(|e| e.hook == "GeneratePatches")
        .expect("GeneratePatches was called")
        .request;
    let bare: Vec<&Value> = request["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| &item["object"])
        .filter(|object| object.pointer("/spec/template/spec").is_none())
        .collect();
    let kinds: Vec<&str> = bare.iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "GenericInfrastructureClusterTemplate",
            "GenericInfrastructureMachineTemplate"
        ]
    );
    // As CAPI's getTemplate makes them (apiVersion and kind, no name, no namespace), plus the
    // labels CAPI's engine syncs into every template before it sends it.
    for object in &bare {
        assert!(object.pointer("/metadata/name").is_none(), "{object}");
        assert!(object.pointer("/metadata/namespace").is_none(), "{object}");
    }
    assert_eq!(
        bare[0]["spec"]["template"]["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
        "c1"
    );
    assert_eq!(
        bare[1]["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"],
        "md-0"
    );

    let cluster = rendered.object("GenericInfrastructureCluster").unwrap();
    assert_eq!(
        cluster["spec"]["filledFrom"],
        "GenericInfrastructureClusterTemplate"
    );
    let machine = rendered
        .objects
        .iter()
        .find(|o| o["kind"] == "GenericInfrastructureMachineTemplate")
        .unwrap();
    assert_eq!(
        machine["spec"]["template"]["spec"]["filledFrom"],
        "GenericInfrastructureMachineTemplate"
    );
    assert_eq!(
        machine["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"],
        "md-0"
    );
    for object in [cluster, machine] {
        let annotations = object["metadata"]["annotations"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(
            !annotations.contains_key("cluster.x-k8s.io/cloned-from-name"),
            "nothing stored was cloned: {object}"
        );
    }
    // The referenced templates still say where they came from.
    let bootstrap = rendered
        .objects
        .iter()
        .find(|o| o["kind"] == "GenericBootstrapConfigTemplate")
        .unwrap();
    assert_eq!(
        bootstrap["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"],
        "boot"
    );
}

#[tokio::test]
async fn inline_templates_are_refused_before_cluster_api_1_15() {
    let err = render(
        &input(inline_machine(), CapiVersion::new(1, 14)),
        &extension(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, RenderError::Input(_)), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("ClusterClass default/quick: spec.infrastructure.template gives the template inline, which Cluster API 1.15 introduced; this render plays Cluster API 1.14"),
        "{message}"
    );
    assert!(message.contains("--capi-version 1.15"), "{message}");
}

#[tokio::test]
async fn a_class_field_with_both_or_neither_is_named() {
    let both = json!({"templateRef": {"apiVersion": INFRA, "kind": "GenericInfrastructureMachineTemplate", "name": "machine"},
                      "template": {"apiVersion": INFRA, "kind": "GenericInfrastructureMachineTemplate"}});
    let message = render(&input(both, CapiVersion::new(1, 15)), &extension())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("both spec.workers.machineDeployments.0.infrastructure.templateRef and spec.workers.machineDeployments.0.infrastructure.template are set"),
        "{message}"
    );

    let message = render(&input(json!({}), CapiVersion::new(1, 15)), &extension())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("spec.workers.machineDeployments.0.infrastructure.templateRef is missing (or, inline, spec.workers.machineDeployments.0.infrastructure.template)"),
        "{message}"
    );

    let message = render(
        &input(
            json!({"template": {"kind": "GenericInfrastructureMachineTemplate"}}),
            CapiVersion::new(1, 15),
        ),
        &extension(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("needs both apiVersion and kind"),
        "{message}"
    );
}

#[tokio::test]
async fn a_patch_below_a_missing_path_of_an_inline_template_fails_as_in_cluster_api() {
    let ext = Extension::builder()
        .handler(Registration::new(
            GeneratePatches,
            "patches",
            |req: GeneratePatchesRequest| async move {
                let mut response = GeneratePatchesResponse::success();
                for item in req.items_of_kind("GenericInfrastructureMachineTemplate") {
                    response = response.patch(
                        &item.uid,
                        Patch::json().add("/spec/template/spec/image", "img"),
                    );
                }
                response
            },
        ))
        .build()
        .unwrap();
    let input = input(inline_machine(), CapiVersion::new(1, 15));
    let message = render(&input, &ext).await.unwrap_err().to_string();
    assert!(message.contains("/spec/template/spec/image"), "{message}");
}
