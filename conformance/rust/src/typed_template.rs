//! The round trip of capi-ext-types' template types: an object CAPI's Go types produced,
//! decoded into the Rust type of its kind and version and encoded again, with the paths of the
//! fields the type did not know (a field Go sends that lands there has a wrong name in Rust).

use capi_ext::patches::UnknownFields;
use capi_ext_types::{docker, kubeadm};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn through<T: Serialize + DeserializeOwned + UnknownFields>(object: &Value) -> Value {
    match serde_path_to_error::deserialize::<_, T>(object) {
        Ok(typed) => match serde_json::to_value(&typed) {
            Ok(body) => json!({"ok": true, "body": body, "unknown": typed.unknown_fields()}),
            Err(e) => json!({"ok": false, "error": format!("encode: {e}")}),
        },
        Err(e) => json!({"ok": false, "error": format!("decode at {}: {}", e.path(), e.inner())}),
    }
}

/// The answer for one object of `kind` in `version`.
pub fn roundtrip(kind: &str, version: &str, object: &Value) -> Value {
    match (kind, version) {
        ("KubeadmControlPlaneTemplate", "v1beta2") => {
            through::<kubeadm::v1beta2::KubeadmControlPlaneTemplate>(object)
        }
        ("KubeadmConfigTemplate", "v1beta2") => {
            through::<kubeadm::v1beta2::KubeadmConfigTemplate>(object)
        }
        ("KubeadmControlPlaneTemplate", "v1beta1") => {
            through::<kubeadm::v1beta1::KubeadmControlPlaneTemplate>(object)
        }
        ("KubeadmConfigTemplate", "v1beta1") => {
            through::<kubeadm::v1beta1::KubeadmConfigTemplate>(object)
        }
        ("DockerMachineTemplate", "v1beta2") => {
            through::<docker::v1beta2::DockerMachineTemplate>(object)
        }
        ("DockerClusterTemplate", "v1beta2") => {
            through::<docker::v1beta2::DockerClusterTemplate>(object)
        }
        ("DevMachineTemplate", "v1beta2") => through::<docker::v1beta2::DevMachineTemplate>(object),
        ("DevClusterTemplate", "v1beta2") => through::<docker::v1beta2::DevClusterTemplate>(object),
        _ => json!({"ok": false, "error": format!("no type for {kind} {version}")}),
    }
}
