//! ClusterClass inline patches (`spec.patches[].definitions`), generated as CAPI's
//! `jsonPatchGenerator` does: selectors by apiVersion, kind and `matchResources`, `enabledIf`,
//! values from `value`, `valueFrom.variable` or `valueFrom.template` (Go templates, see
//! [`go_template`](super::go_template)).

use crate::go_template::{self, Options};
use crate::object::{get, string};
use capi_ext::hooks::v1alpha1::{
    GeneratePatchesRequest, GeneratePatchesResponse, Patch, PatchType,
};
use capi_ext::patches::Selector;
use capi_ext::topology::merge_variables;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The value of a variable path such as `builtin.cluster.name` or `zones[0].name`
/// (`GetVariableValue`).
fn variable_value(variables: &Map<String, Value>, path: &str) -> Result<Value, String> {
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or_default();
    let mut current: Option<&Value> = None;
    for (i, segment) in std::iter::once(first).chain(segments).enumerate() {
        let (name, index) = match segment.split_once('[') {
            Some((name, rest)) => {
                let index = rest
                    .strip_suffix(']')
                    .and_then(|i| i.parse::<usize>().ok())
                    .ok_or_else(|| {
                        format!("variable {path:?} has invalid syntax at {segment:?}")
                    })?;
                (name, Some(index))
            }
            None => (segment, None),
        };
        let next = if i == 0 {
            variables.get(name)
        } else {
            current.and_then(|c| c.get(name))
        };
        let next = next.ok_or_else(|| {
            if i == 0 {
                format!("variable {name:?} does not exist")
            } else {
                format!("variable {path:?} does not exist: failed to lookup segment {name:?}")
            }
        })?;
        current = Some(match index {
            Some(index) => next
                .as_array()
                .ok_or_else(|| format!("variable {path:?} is invalid: {name:?} is not an array"))?
                .get(index)
                .ok_or_else(|| {
                    format!("variable {path:?} is invalid: array does not have index {index}")
                })?,
            None => next,
        });
    }
    current
        .cloned()
        .ok_or_else(|| format!("variable {path:?} is empty"))
}

/// A Go template rendered and read as YAML (`renderValueTemplate`).
fn template_value(
    template: &str,
    variables: &Map<String, Value>,
    options: Options,
) -> Result<Value, String> {
    let text = go_template::render_with(template, &Value::Object(variables.clone()), options)
        .map_err(|e| format!("failed to render template {template:?}: {e}"))?;
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    crate::yaml11::from_str(&text)
        .map_err(|e| format!("failed to unmarshal rendered template {text:?}: {e}"))
}

fn as_map(variables: &[capi_ext::hooks::v1alpha1::Variable]) -> Map<String, Value> {
    variables
        .iter()
        .map(|v| (v.name.clone(), v.value.value().clone()))
        .collect()
}

fn json_patches(
    operations: &[Value],
    variables: &Map<String, Value>,
    options: Options,
) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for operation in operations {
        let op = string(operation, &["op"]);
        let mut patch = serde_json::json!({"op": op, "path": string(operation, &["path"])});
        if op == "add" || op == "replace" {
            let value = operation.get("value");
            let from = operation.get("valueFrom");
            let value = match (value, from) {
                (Some(v), None) => v.clone(),
                (None, Some(from)) => match (string(from, &["variable"]), string(from, &["template"])) {
                    (variable, "") if !variable.is_empty() => variable_value(variables, variable)?,
                    ("", template) if !template.is_empty() => template_value(template, variables, options)?,
                    ("", "") => return Err("failed to calculate value: .valueFrom is set, but neither .valueFrom.variable nor .valueFrom.template are set".into()),
                    _ => return Err("failed to calculate value: .valueFrom is set, but both .valueFrom.variable and .valueFrom.template are set".into()),
                },
                (None, None) => return Err("failed to calculate value: neither .value nor .valueFrom are set".into()),
                (Some(_), Some(_)) => return Err("failed to calculate value: both .value and .valueFrom are set".into()),
            };
            patch["value"] = value;
        }
        out.push(patch);
    }
    Ok(out)
}

/// The response CAPI's inline generator computes for `patch` (one ClusterClass `spec.patches`
/// entry with `definitions`).
pub(crate) fn generate(
    patch: &Value,
    request: &GeneratePatchesRequest,
    options: Options,
) -> Result<GeneratePatchesResponse, String> {
    let definitions = patch
        .get("definitions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let enabled_if = string(patch, &["enabledIf"]);
    let mut response = GeneratePatchesResponse::success();
    for item in &request.items {
        let kind = string(&item.object, &["kind"]);
        let item_variables = as_map(&item.variables);
        let builtin = item_variables.get("builtin");
        let class = |key: &str| {
            builtin
                .and_then(|b| get(b, &[key, "class"]))
                .and_then(Value::as_str)
        };
        let mut matching = Vec::new();
        for (index, definition) in definitions.iter().enumerate() {
            let selector =
                Selector::deserialize(definition.get("selector").unwrap_or(&Value::Null))
                    .map_err(|e| format!("definitions[{index}].selector: {e}"))?;
            if selector.matches(
                &item.object,
                &item.holder_reference,
                class("machineDeployment"),
                class("machinePool"),
            ) {
                matching.push(definition);
            }
        }
        if matching.is_empty() {
            continue;
        }
        let variables = as_map(&merge_variables(&request.variables, &item.variables));
        if !enabled_if.is_empty() {
            let enabled = template_value(enabled_if, &variables, options)
                .map_err(|e| format!("failed to calculate if patch is enabled for {kind:?}: failed to calculate value for enabledIf: {e}"))?;
            if enabled != Value::Bool(true) {
                continue;
            }
        }
        for definition in matching {
            let operations = definition
                .get("jsonPatches")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let document = json_patches(&operations, &variables, options)
                .map_err(|e| format!("failed to generate JSON patches for {kind:?}: {e}"))?;
            let bytes = serde_json::to_vec(&document).expect("JSON values serialize");
            let patch = Patch::from_document(PatchType::JsonPatch, &bytes)
                .map_err(|e| format!("failed to generate JSON patches for {kind:?}: {e}"))?;
            response = response.patch(item.uid.clone(), patch);
        }
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variable_paths_follow_capi() {
        let vars = json!({"builtin": {"cluster": {"name": "c1"}}, "zones": [{"name": "a"}]});
        let vars = vars.as_object().unwrap();
        assert_eq!(variable_value(vars, "builtin.cluster.name").unwrap(), "c1");
        assert_eq!(variable_value(vars, "zones[0].name").unwrap(), "a");
        assert_eq!(
            variable_value(vars, "nope").unwrap_err(),
            "variable \"nope\" does not exist"
        );
        assert!(
            variable_value(vars, "zones[3]")
                .unwrap_err()
                .contains("array does not have index 3")
        );
        assert!(
            variable_value(vars, "builtin.cluster.uid")
                .unwrap_err()
                .contains("failed to lookup segment \"uid\"")
        );
    }

    #[test]
    fn templates_render_as_yaml_values() {
        let vars = json!({"n": 3, "name": "c1"});
        let vars = vars.as_object().unwrap();
        assert_eq!(
            template_value("{{ .n }}", vars, Options::INLINE_PATCH).unwrap(),
            json!(3)
        );
        assert_eq!(
            template_value("{{ .name }}-lb", vars, Options::INLINE_PATCH).unwrap(),
            json!("c1-lb")
        );
        assert_eq!(
            template_value("- {{ .name }}\n- b", vars, Options::INLINE_PATCH).unwrap(),
            json!(["c1", "b"])
        );
    }
}
