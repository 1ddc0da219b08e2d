//! Realistic requests for every hook: the fixtures of `cli/fixtures/hooks`, which the conformance
//! suite checks against Cluster API's own types.

use capi_ext_codegen::catalog::HookInfo;

macro_rules! fixtures {
    ($($segment:literal),* $(,)?) => {
        const REQUESTS: &[(&str, &str)] = &[$(($segment, include_str!(concat!("../../fixtures/hooks/", $segment, "/request.json")))),*];
    };
}

fixtures!(
    "discovery",
    "beforeclustercreate",
    "aftercontrolplaneinitialized",
    "beforeclusterupgrade",
    "beforecontrolplaneupgrade",
    "aftercontrolplaneupgrade",
    "beforeworkersupgrade",
    "afterworkersupgrade",
    "afterclusterupgrade",
    "beforeclusterdelete",
    "generatepatches",
    "validatetopology",
    "discovervariables",
    "canupdatemachine",
    "canupdatemachineset",
    "updatemachine",
    "generateupgradeplan",
);

/// The example request of a hook, as JSON text.
pub fn request(hook: &HookInfo) -> &'static str {
    REQUESTS
        .iter()
        .find(|(s, _)| *s == hook.path_segment)
        .map(|(_, r)| *r)
        .expect("every catalog hook has a fixture")
}

/// The example request as YAML.
pub fn request_yaml(hook: &HookInfo) -> anyhow::Result<String> {
    let value: serde_json::Value = serde_json::from_str(request(hook))?;
    Ok(serde_saphyr::to_string(&value)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_ext_codegen::catalog::HOOKS;

    #[test]
    fn every_hook_has_a_request_of_its_kind() {
        for hook in HOOKS {
            let v: serde_json::Value = serde_json::from_str(request(hook)).unwrap();
            assert_eq!(v["kind"], hook.request_kind);
            let yaml = request_yaml(hook).unwrap();
            assert!(
                yaml.contains(&format!("kind: {}", hook.request_kind)),
                "{yaml}"
            );
        }
    }
}
