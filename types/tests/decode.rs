//! The generated types decode as `capi-ext generate types` promises: every known field typed,
//! every other one kept where it was, a kind's `apiVersion` and `kind` required, and a value
//! of the wrong type named by its path.

#![cfg(feature = "kubeadm")]

use capi_ext::hooks::v1alpha1::GeneratePatchesRequest;
use capi_ext::patches::{NamedPatch, PatchSet, Selector};
use capi_ext_types::kubeadm::v1beta2::KubeadmControlPlaneTemplate;
use serde_json::{Value, json};

fn template() -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlaneTemplate",
        "metadata": {"name": "cp", "namespace": "default"},
        "futureTopLevel": 1,
        "spec": {"template": {"spec": {
            "kubeadmConfigSpec": {"files": [{"path": "/etc/a", "content": "x", "futureFileField": true}],
                                  "clusterConfiguration": {"apiServer": {"extraArgs": [{"name": "v", "value": "2"}]}}},
            "rollout": {"strategy": {"type": "RollingUpdate"}},
            "futureSpecField": {"nested": [1, 2]}}}}
    })
}

#[test]
fn a_template_decodes_typed_and_encodes_back_as_it_came() {
    for decoded in [
        serde_json::from_value::<KubeadmControlPlaneTemplate>(template()).unwrap(),
        serde_json::from_slice::<KubeadmControlPlaneTemplate>(
            &serde_json::to_vec(&template()).unwrap(),
        )
        .unwrap(),
    ] {
        let spec = decoded
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap();
        let files = spec
            .kubeadm_config_spec
            .as_ref()
            .unwrap()
            .files
            .as_ref()
            .unwrap();
        assert_eq!(files[0].path, "/etc/a");
        assert_eq!(files[0].unknown["futureFileField"], true);
        assert_eq!(spec.unknown["futureSpecField"], json!({"nested": [1, 2]}));
        assert_eq!(decoded.unknown["futureTopLevel"], 1);
        assert_eq!(serde_json::to_value(&decoded).unwrap(), template());
    }
}

/// Structs are decoded where they stay (`in_place`, `option_in_place`): `null` is `None`, as
/// `Option`'s own decoding reads it, and a value of the wrong type names the struct.
#[test]
fn a_nested_struct_is_none_for_null_and_named_when_it_is_not_an_object() {
    let mut object = template();
    object["spec"]["template"]["spec"]["kubeadmConfigSpec"] = Value::Null;
    let decoded: KubeadmControlPlaneTemplate = serde_json::from_value(object.clone()).unwrap();
    let spec = decoded.spec.unwrap().template.spec.unwrap();
    assert!(spec.kubeadm_config_spec.is_none());
    assert!(spec.rollout.is_some());
    object["spec"]["template"]["spec"]["kubeadmConfigSpec"] = json!("text");
    let err = serde_json::from_str::<KubeadmControlPlaneTemplate>(&object.to_string()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid type: string \"text\", expected struct KubeadmConfigSpec"),
        "{err}"
    );
}

#[test]
fn a_kind_without_apiversion_or_given_a_field_twice_does_not_decode() {
    let mut missing = template();
    missing.as_object_mut().unwrap().remove("apiVersion");
    let err = serde_json::from_value::<KubeadmControlPlaneTemplate>(missing).unwrap_err();
    assert_eq!(err.to_string(), "missing field `apiVersion`");
    let twice = r#"{"apiVersion":"a","kind":"k","kind":"k"}"#;
    let err = serde_json::from_str::<KubeadmControlPlaneTemplate>(twice).unwrap_err();
    assert!(
        err.to_string().starts_with("duplicate field `kind`"),
        "{err}"
    );
}

#[test]
fn a_typed_patch_names_the_path_of_a_value_of_the_wrong_type() {
    let mut object = template();
    object["spec"]["template"]["spec"]["kubeadmConfigSpec"]["files"][0]["path"] = json!(7);
    let set: PatchSet<Value> = PatchSet::new().patch(NamedPatch::typed(
        "touch",
        Selector::control_plane(),
        |_: &mut KubeadmControlPlaneTemplate, _| Ok(()),
    ));
    let request: GeneratePatchesRequest = serde_json::from_value(json!({"items": [{"uid": "1",
        "holderReference": {"kind": "Cluster", "fieldPath": "spec.controlPlaneRef"}, "object": object}]}))
    .unwrap();
    let message = set.generate(&request).message;
    assert!(
        message.contains("at `spec.template.spec.kubeadmConfigSpec.files[0].path`: invalid type: integer `7`, expected a string"),
        "{message}"
    );
}
