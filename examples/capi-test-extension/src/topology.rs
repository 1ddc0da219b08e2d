//! The topology handlers of CAPI's test extension (Go: `extension/handlers/topologymutation`):
//! `generate-patches` (the patches are in [`patches`](crate::patches)), `validate-topology`
//! and `discover-variables`.

use capi_ext::ExtensionBuilder;
use capi_ext::hooks::v1alpha1::*;
use serde_json::{Value, json};

/// The variables the Go extension declares, in its order and with its schemas (from
/// `DiscoverVariables` in `handler.go`; `deprecatedV1Beta1Metadata` as it writes it).
pub fn variables() -> Value {
    let image_metadata = json!({
        "labels": {"objects": "DevCluster"},
        "annotations": {"description": "Gets set at DevCluster.Spec.Template.Spec.Backend.Docker.LoadBalancer.ImageRepository"}
    });
    json!([
        {
            "name": "kubeadmControlPlaneMaxSurge",
            "required": false,
            "schema": {"openAPIV3Schema": {
                "type": "string",
                "default": "",
                "example": "0",
                "description": "kubeadmControlPlaneMaxSurge is the maximum number of control planes that can be scheduled above or under the desired number of control plane machines.",
                "x-kubernetes-validations": [{
                    "rule": "self == \"\" || self != \"\"",
                    "messageExpression": "'just a test expression, got %s'.format([self])"
                }]
            }}
        },
        {
            "name": "files",
            "required": false,
            "schema": {"openAPIV3Schema": {
                "type": "array",
                "items": {"type": "object", "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "contentFormat": {"type": "string"}
                }}
            }}
        },
        {
            "name": "preKubeadmCommands",
            "required": false,
            "schema": {"openAPIV3Schema": {"type": "array", "items": {"type": "string"}}}
        },
        {
            "name": "kubeadmConfigTemplateAnnotations",
            "required": false,
            "schema": {"openAPIV3Schema": {"type": "object", "additionalProperties": {"type": "string"}}}
        },
        {
            "name": "imageRepository",
            "required": true,
            "deprecatedV1Beta1Metadata": image_metadata,
            "schema": {"openAPIV3Schema": {
                "type": "string",
                "example": "kindest",
                "x-metadata": image_metadata
            }}
        }
    ])
}

async fn discover_variables(_req: DiscoverVariablesRequest) -> DiscoverVariablesResponse {
    tracing::info!("DiscoverVariables called");
    let definitions: Vec<ClusterClassVariable> = serde_json::from_value(variables())
        .expect("the Go extension's variables are ClusterClassVariables");
    definitions
        .into_iter()
        .fold(DiscoverVariablesResponse::success(), |r, v| r.variable(v))
}

async fn validate_topology(_req: ValidateTopologyRequest) -> ValidateTopologyResponse {
    tracing::info!("ValidateTopology called");
    ValidateTopologyResponse::success()
}

/// Registers `generate-patches`, `validate-topology` and `discover-variables` (the Go
/// extension's names).
pub fn register<S: Send + Sync + 'static>(builder: ExtensionBuilder<S>) -> ExtensionBuilder<S> {
    builder
        .handler(capi_ext::Registration::patches(
            "generate-patches",
            crate::patches::patch_set(),
        ))
        .handler(capi_ext::Registration::new(
            ValidateTopology,
            "validate-topology",
            validate_topology,
        ))
        .handler(capi_ext::Registration::new(
            DiscoverVariables,
            "discover-variables",
            discover_variables,
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn declares_the_go_extensions_variables_without_losing_a_field() {
        let answer = discover_variables(DiscoverVariablesRequest::new()).await;
        assert_eq!(answer.status, ResponseStatus::Success);
        let sent = serde_json::to_value(&answer.variables).unwrap();
        assert_eq!(
            sent,
            variables(),
            "every field of the definitions is sent as written"
        );
        let names: Vec<&str> = answer.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "kubeadmControlPlaneMaxSurge",
                "files",
                "preKubeadmCommands",
                "kubeadmConfigTemplateAnnotations",
                "imageRepository"
            ]
        );
    }
}
