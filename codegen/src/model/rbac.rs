//! RBAC markers, as kubebuilder writes them: a comment
//! `// +capi-ext:rbac:groups="",resources=configmaps,verbs=get;list;watch` next to the code
//! that reads or writes a cluster's objects. `capi-ext generate` turns them into the
//! extension's ClusterRole; what the code needs is written where the code is.

use super::static_schema::LocatedError;
use crate::naming;

/// The marker's prefix.
pub const MARKER: &str = "// +capi-ext:rbac:";

/// The verbs Kubernetes' RBAC knows.
pub const VERBS: [&str; 9] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "*",
];

/// One rule of the ClusterRole.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Rule {
    /// API groups (`""` for the core group).
    #[serde(rename = "apiGroups")]
    pub groups: Vec<String>,
    /// Resources (`configmaps`, `clusters`, `clusters/status`).
    pub resources: Vec<String>,
    /// Names, when the rule is for some objects only.
    #[serde(rename = "resourceNames", skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// Verbs.
    pub verbs: Vec<String>,
}

fn list(value: &str) -> Vec<String> {
    value
        .split(';')
        .map(|v| v.trim().trim_matches('"').to_string())
        .collect()
}

/// Parses the text after [`MARKER`].
pub fn parse(text: &str) -> Result<Rule, String> {
    let mut rule = Rule {
        groups: Vec::new(),
        resources: Vec::new(),
        resource_names: Vec::new(),
        verbs: Vec::new(),
    };
    let mut seen = (false, false, false);
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!(
                "`{part}` is not `key=value` (e.g. `groups=\"\",resources=configmaps,verbs=get;list`)"
            ));
        };
        match key.trim() {
            "groups" => {
                rule.groups = list(value);
                seen.0 = true;
            }
            "resources" => {
                rule.resources = list(value).into_iter().filter(|r| !r.is_empty()).collect();
                seen.1 = true;
            }
            "verbs" => {
                rule.verbs = list(value);
                seen.2 = true;
            }
            "resourceNames" => rule.resource_names = list(value),
            other => {
                let hint =
                    naming::did_you_mean(other, ["groups", "resources", "verbs", "resourceNames"])
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                return Err(format!(
                    "unknown key `{other}`{hint} (an RBAC marker takes groups, resources, verbs and resourceNames)"
                ));
            }
        }
    }
    let missing: Vec<&str> = [
        ("groups", seen.0),
        ("resources", seen.1 && !rule.resources.is_empty()),
        ("verbs", seen.2),
    ]
    .into_iter()
    .filter(|(_, there)| !there)
    .map(|(key, _)| key)
    .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the marker needs {} (e.g. `groups=\"\",resources=configmaps,verbs=get;list`; `groups=\"\"` is the core group)",
            missing.join(" and ")
        ));
    }
    if let Some(verb) = rule.verbs.iter().find(|v| !VERBS.contains(&v.as_str())) {
        let hint = naming::did_you_mean(verb, VERBS)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        return Err(format!(
            "unknown verb `{verb}`{hint} (verbs: {})",
            VERBS.join(", ")
        ));
    }
    Ok(rule)
}

/// Every marker of the sources, in file and line order; errors name the file and line.
pub fn read(sources: &[(String, String)]) -> (Vec<Rule>, Vec<LocatedError>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for (file, text) in sources {
        for (number, line) in text.lines().enumerate() {
            let Some(at) = line.find(MARKER) else {
                continue;
            };
            match parse(&line[at + MARKER.len()..]) {
                Ok(rule) => rules.push(rule),
                Err(message) => errors.push(LocatedError {
                    file: file.clone(),
                    line: number + 1,
                    column: at + 1,
                    message: format!("RBAC marker: {message}"),
                }),
            }
        }
    }
    (rules, errors)
}

/// The rules of a ClusterRole: the same groups and resources merged (verbs and names joined),
/// sorted, as controller-gen does.
pub fn merge(rules: &[Rule]) -> Vec<Rule> {
    let mut merged: Vec<Rule> = Vec::new();
    for rule in rules {
        let mut rule = rule.clone();
        for field in [
            &mut rule.groups,
            &mut rule.resources,
            &mut rule.resource_names,
            &mut rule.verbs,
        ] {
            field.sort();
            field.dedup();
        }
        match merged.iter_mut().find(|m| {
            m.groups == rule.groups
                && m.resources == rule.resources
                && m.resource_names == rule.resource_names
        }) {
            Some(m) => {
                m.verbs.extend(rule.verbs);
                m.verbs.sort();
                m.verbs.dedup();
            }
            None => merged.push(rule),
        }
    }
    merged.sort();
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_markers_and_merges_them() {
        let source = r#"
            // +capi-ext:rbac:groups="",resources=configmaps,verbs=get;list
            fn a() {}
            // +capi-ext:rbac:groups="",resources=configmaps,verbs=watch;get
            // +capi-ext:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get
        "#;
        let (rules, errors) = read(&[("src/main.rs".into(), source.into())]);
        assert!(errors.is_empty(), "{errors:?}");
        let merged = merge(&rules);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].groups, [""]);
        assert_eq!(merged[0].verbs, ["get", "list", "watch"]);
        assert_eq!(merged[1].resources, ["clusters", "clusters/status"]);
    }

    #[test]
    fn says_what_is_wrong_and_where() {
        let source = "\n  // +capi-ext:rbac:groups=\"\",resource=configmaps,verbs=get\n// +capi-ext:rbac:groups=\"\",resources=secrets,verbs=gte\n// +capi-ext:rbac:groups=\"\"\n";
        let (_, errors) = read(&[("src/hooks/a.rs".into(), source.into())]);
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(
            text[0].starts_with(
                "src/hooks/a.rs:2:3: RBAC marker: unknown key `resource`; did you mean `resources`?"
            ),
            "{}",
            text[0]
        );
        assert!(
            text[1].contains("unknown verb `gte`; did you mean `get`?"),
            "{}",
            text[1]
        );
        assert!(
            text[2].contains("the marker needs resources and verbs"),
            "{}",
            text[2]
        );
    }
}
