//! The checks CAPI applies to Discovery and DiscoverVariables answers, so an extension (or a
//! test) can run them before CAPI does.
//!
//! ```
//! use capi_ext::hooks::v1alpha1::*;
//! use capi_ext::CapiVersion;
//!
//! let bad = DiscoverVariablesResponse::success()
//!     .variable(ClusterClassVariable::new("builtin", true, JSONSchemaProps::string()));
//! let problems = validation::discover_variables(&bad).unwrap_err();
//! assert!(problems[0].contains("reserved"));
//! ```

use super::{
    API_VERSION, DiscoverVariablesResponse, DiscoveryResponse, JSONSchemaProps, ResponseStatus,
};
use capi_ext_codegen::version::CapiVersion;
use capi_ext_codegen::{catalog, naming, schema};
use std::collections::HashSet;

/// An answer that is not `Success` cannot be accepted, whatever else it says.
fn status_problems(status: ResponseStatus, message: &str) -> Vec<String> {
    match status {
        ResponseStatus::Success => Vec::new(),
        other => vec![format!(
            "status is {}, not Success: {message}",
            other.as_str()
        )],
    }
}

/// Checks a Discovery answer the way CAPI's runtime client does for `target`: status,
/// unique DNS-1123 handler names, timeouts in 0..=30, failure policies, hooks that release knows.
/// Returns every problem.
pub fn discovery(response: &DiscoveryResponse, target: CapiVersion) -> Result<(), Vec<String>> {
    let mut problems = status_problems(response.status, &response.message);
    let mut seen = HashSet::new();
    for h in &response.handlers {
        if !seen.insert(h.name.as_str()) {
            problems.push(format!("handler `{}`: duplicate name", h.name));
        }
        if let Err(e) = naming::validate_dns_label(&h.name) {
            problems.push(e.to_string());
        }
        if let Some(Err(e)) = h
            .timeout_seconds
            .map(|t| naming::validate_timeout(i64::from(t)))
        {
            problems.push(format!("handler `{}`: {e}", h.name));
        }
        if h.request_hook.api_version != API_VERSION {
            problems.push(format!(
                "handler `{}`: requestHook.apiVersion `{}` is not `{API_VERSION}`",
                h.name, h.request_hook.api_version
            ));
        }
        match catalog::find(&h.request_hook.hook) {
            Some(hook) if hook.singleton => problems.push(format!("handler `{}`: Discovery cannot be a handler", h.name)),
            Some(hook) if !hook.known_by(target) => problems.push(format!(
                "handler `{}`: {} was introduced in Cluster API {}; Cluster API {target} fails the whole discovery",
                h.name, hook.name, hook.since
            )),
            Some(_) => {}
            None => problems.push(format!("handler `{}`: unknown hook `{}`", h.name, h.request_hook.hook)),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn schema_problems(path: &str, s: &JSONSchemaProps, problems: &mut Vec<String>) {
    const TYPES: [&str; 7] = [
        "", "object", "array", "string", "integer", "number", "boolean",
    ];
    if !TYPES.contains(&s.type_.as_str()) {
        problems.push(format!(
            "{path}: type `{}` is not one of object, array, string, integer, number, boolean",
            s.type_
        ));
    }
    if !s.properties.is_empty() && s.additional_properties.is_some() {
        problems.push(format!(
            "{path}: properties and additionalProperties are mutually exclusive"
        ));
    }
    for r in &s.x_validations {
        if r.rule.is_empty() {
            problems.push(format!(
                "{path}: a x-kubernetes-validations entry has no rule"
            ));
        }
        if r.message.contains('\n') {
            problems.push(format!(
                "{path}: validation messages must not contain line breaks"
            ));
        }
    }
    for (name, p) in &s.properties {
        schema_problems(&format!("{path}.properties[{name}]"), p, problems);
    }
    for (what, child) in [
        ("items", &s.items),
        ("additionalProperties", &s.additional_properties),
        ("not", &s.not),
    ] {
        if let Some(c) = child {
            schema_problems(&format!("{path}.{what}"), c, problems);
        }
    }
}

/// Checks a DiscoverVariables answer against CAPI's rules that need no CEL environment:
/// names (not `builtin`, no `.`, unique), `required` set, a non-empty schema of a known type.
pub fn discover_variables(response: &DiscoverVariablesResponse) -> Result<(), Vec<String>> {
    let mut problems = status_problems(response.status, &response.message);
    let mut seen = HashSet::new();
    for v in &response.variables {
        if let Err(e) = schema::validate_variable_name(&v.name) {
            problems.push(e);
        }
        if !seen.insert(v.name.as_str()) {
            problems.push(format!("variable `{}`: duplicate name", v.name));
        }
        if v.required.is_none() {
            problems.push(format!(
                "variable `{}`: `required` is not set (the ClusterClass status requires it)",
                v.name
            ));
        }
        let s = &v.schema.open_api_v3_schema;
        if *s == JSONSchemaProps::default() {
            problems.push(format!("variable `{}`: openAPIV3Schema is empty", v.name));
        }
        schema_problems(&format!("variable `{}`", v.name), s, &mut problems);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    #[test]
    fn discovery_rules() {
        let mut resp = DiscoveryResponse::success();
        let handler = |name: &str, hook: &str, timeout| ExtensionHandler {
            name: name.into(),
            request_hook: GroupVersionHook {
                api_version: API_VERSION.into(),
                hook: hook.into(),
            },
            timeout_seconds: Some(timeout),
            failure_policy: None,
        };
        resp.handlers = vec![
            handler("a", "BeforeClusterCreate", 10),
            handler("a", "UpdateMachine", 31),
            handler("B.c", "Nope", 1),
        ];
        let problems = discovery(&resp, CapiVersion::new(1, 11)).unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:#?}");
        resp.handlers.truncate(1);
        assert!(discovery(&resp, CapiVersion::DEFAULT).is_ok());
    }

    #[test]
    fn variable_rules() {
        let mut v = ClusterClassVariable::new("ok", true, JSONSchemaProps::string());
        assert!(
            discover_variables(&DiscoverVariablesResponse::success().variable(v.clone())).is_ok()
        );
        v.required = None;
        v.schema.open_api_v3_schema = JSONSchemaProps::default();
        let problems = discover_variables(
            &DiscoverVariablesResponse::success()
                .variable(v.clone())
                .variable(v),
        )
        .unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:#?}");
    }
}
