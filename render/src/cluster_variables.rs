//! The Cluster's variables checked as CAPI's webhook checks them: every value against its
//! definition (defaulted first), required variables present, no undefined or conflicting ones.

use crate::error::RenderError;
use crate::object::string;
use crate::output::Definition;
use crate::values;
use serde_json::Value;

pub(super) fn check_definitions(definitions: &[Definition]) -> Result<(), RenderError> {
    for (i, a) in definitions.iter().enumerate() {
        if a.variable.name == "builtin" {
            return Err(RenderError::Definitions(format!(
                "variable `builtin` (from {}) is reserved for CAPI's builtin variables",
                a.from
            )));
        }
        if let Some(b) = definitions[..i]
            .iter()
            .find(|b| b.variable.name == a.variable.name)
        {
            return Err(RenderError::Definitions(format!(
                "variable `{}` is defined by both {} and {}; CAPI marks the ClusterClass VariablesReady=False for conflicting definitions",
                a.variable.name, b.from, a.from
            )));
        }
    }
    Ok(())
}

/// Defaults and validates every variable value of the Cluster as CAPI's webhook does.
pub(super) fn default_and_validate(
    cluster: &mut Value,
    definitions: &[Definition],
) -> Result<(), RenderError> {
    let mut errors = Vec::new();
    let check =
        |list: &mut Value, path: &str, top_level: bool, errors: &mut Vec<values::FieldError>| {
            if list.is_null() {
                *list = Value::Array(Vec::new());
            }
            let Some(entries) = list.as_array_mut() else {
                errors.push(values::FieldError {
                    path: path.into(),
                    message: "must be a list".into(),
                });
                return;
            };
            for entry in entries.iter_mut() {
                let name = string(entry, &["name"]).to_string();
                let entry_path = format!("{path}[{name}]");
                let Some(definition) = definitions.iter().find(|d| d.variable.name == name) else {
                    let known: Vec<&str> = definitions
                        .iter()
                        .map(|d| d.variable.name.as_str())
                        .collect();
                    let hint = capi_ext_codegen::naming::did_you_mean(&name, known.iter().copied())
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    errors.push(values::raw_invalid(
                        &entry_path,
                        entry.get("value").unwrap_or(&Value::Null),
                        &format!(
                            "variable is not defined ({hint}defined: {})",
                            known.join(", ")
                        ),
                    ));
                    continue;
                };
                let schema = &definition.variable.schema.open_api_v3_schema;
                let value = entry.get_mut("value");
                match value {
                    Some(value) => {
                        values::apply_defaults(schema, value);
                        values::validate(schema, value, &format!("{entry_path}.value"), errors);
                        values::unknown_fields(errors, &entry_path, &name, value);
                    }
                    None => errors.push(values::FieldError {
                        path: format!("{entry_path}.value"),
                        message: "Required value".into(),
                    }),
                }
            }
            if top_level {
                for definition in definitions {
                    let name = &definition.variable.name;
                    if entries.iter().any(|e| string(e, &["name"]) == name) {
                        continue;
                    }
                    let schema = &definition.variable.schema.open_api_v3_schema;
                    if let Some(default) = &schema.default {
                        let mut value = default.clone();
                        values::apply_defaults(schema, &mut value);
                        entries.push(serde_json::json!({"name": name, "value": value}));
                    } else if definition.variable.required == Some(true) {
                        errors.push(values::FieldError {
                            path: path.into(),
                            message: format!(
                                "Required value: required variable \"{name}\" must be set"
                            ),
                        });
                    }
                }
            }
        };
    let topology = cluster
        .get_mut("spec")
        .and_then(|s| s.get_mut("topology"))
        .expect("checked by check_kinds");
    if topology.get("variables").is_some() || !definitions.is_empty() {
        let list = topology
            .as_object_mut()
            .expect("an object")
            .entry("variables")
            .or_insert(Value::Null);
        check(list, "spec.topology.variables", true, &mut errors);
    }
    if let Some(overrides) = topology.pointer_mut("/controlPlane/variables/overrides") {
        check(
            overrides,
            "spec.topology.controlPlane.variables.overrides",
            false,
            &mut errors,
        );
    }
    for list in ["machineDeployments", "machinePools"] {
        if let Some(workers) = topology
            .pointer_mut(&format!("/workers/{list}"))
            .and_then(Value::as_array_mut)
        {
            for worker in workers {
                let name = string(worker, &["name"]).to_string();
                if let Some(overrides) = worker.pointer_mut("/variables/overrides") {
                    check(
                        overrides,
                        &format!("spec.topology.workers.{list}[{name}].variables.overrides"),
                        false,
                        &mut errors,
                    );
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(RenderError::Variables(errors))
    }
}
