//! The YAML reader of `render` and `diff` (multi-document YAML, YAML 1.1 scalars), the sorting
//! of objects into a Cluster, a ClusterClass and templates, and then the whole render of what
//! was read (templates resolved, inline templates on 1.15, variables defaulted and checked,
//! inline patches, the GeneratePatches request built and the answer applied) against an
//! extension that declares the variables the Cluster sets and patches every item.

use capi_ext::CapiVersion;
use capi_ext::hooks::v1alpha1::{
    ClusterClassVariable, DiscoverVariablesResponse, GeneratePatchesRequest,
    GeneratePatchesResponse, Patch, ValidateTopologyResponse,
};
use serde_json::{Value, json};

/// Answers render's calls without a server: DiscoverVariables with a definition for each of
/// the Cluster's variables the ClusterClass does not define (typed after its value),
/// GeneratePatches with a field added to every item, ValidateTopology with Success.
struct Extension {
    variables: Vec<(String, Value)>,
}

/// A schema the value satisfies.
fn schema_of(value: &Value) -> Value {
    match value {
        Value::String(_) => json!({"type": "string"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"type": "integer"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::Array(_) => {
            json!({"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true}})
        }
        _ => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    }
}

fn unreadable(e: serde_json::Error) -> capi_ext_render::CallError {
    capi_ext_render::CallError::Unreadable(e.to_string())
}

impl capi_ext_render::Caller for Extension {
    async fn call(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>, capi_ext_render::CallError> {
        let answer = if path.contains("/discovervariables/") {
            let mut response = DiscoverVariablesResponse::success();
            for (name, value) in &self.variables {
                let variable: ClusterClassVariable = serde_json::from_value(json!({
                    "name": name, "required": false,
                    "schema": {"openAPIV3Schema": schema_of(value)},
                }))
                .map_err(unreadable)?;
                response.variables.push(variable);
            }
            serde_json::to_vec(&response)
        } else if path.contains("/generatepatches/") {
            let request: GeneratePatchesRequest =
                serde_json::from_slice(&body).map_err(unreadable)?;
            let response =
                request
                    .items
                    .iter()
                    .fold(GeneratePatchesResponse::success(), |response, item| {
                        let patch = if item.object.pointer("/spec/template/spec").is_some() {
                            Patch::json().add("/spec/template/spec/fuzzed", "yes")
                        } else {
                            Patch::json()
                                .add("/spec", json!({"template": {"spec": {"fuzzed": "yes"}}}))
                        };
                        response.patch(&item.uid, patch)
                    });
            serde_json::to_vec(&response)
        } else {
            serde_json::to_vec(&ValidateTopologyResponse::success())
        };
        answer.map_err(unreadable)
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let runtime = std::panic::AssertUnwindSafe(runtime);
    afl::fuzz!(|data: &[u8]| {
        let (Ok(text), Some(&last)) = (std::str::from_utf8(data), data.last()) else {
            return;
        };
        let _ = capi_ext_render::yaml11::from_str(text);
        let Ok(documents) = capi_ext_render::documents(text) else {
            return;
        };
        let Ok(mut input) = capi_ext_render::Input::from_documents(documents) else {
            return;
        };
        let variables: Vec<(String, Value)> = input
            .cluster
            .pointer("/spec/topology/variables")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|v| {
                        Some((
                            v.get("name")?.as_str()?.to_string(),
                            v.get("value")?.clone(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        // Those the ClusterClass defines itself are not the extension's to declare.
        let inline: Vec<&str> = input
            .cluster_class
            .pointer("/spec/variables")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|v| v.get("name")?.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let variables = variables
            .into_iter()
            .filter(|(name, _)| !inline.contains(&name.as_str()))
            .collect();
        let extension = Extension { variables };
        // The last byte picks the release played: 1.15 reads inline templates, 1.13 drops
        // template metadata, 1.14 is the default.
        input.capi_version = Some(CapiVersion::new(1, 13 + u16::from(last % 3)));
        let r = runtime.block_on(capi_ext_render::render(&input, &extension));
        if std::env::var_os("FUZZ_DEBUG").is_some() {
            eprintln!("{:?}", r.map(|r| r.objects.len()));
        }
    });
}
