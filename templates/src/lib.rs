//! The templates of `capi-ext init` and `capi-ext create hook`, embedded in the binary and
//! rendered by handlebars in strict mode (a missing value is an error, never an empty string).
//!
//! ```
//! let out = capi_ext_templates::render("project/gitignore.hbs", &serde_json::json!({})).unwrap();
//! assert!(out.starts_with("/target\n"));
//! ```

use handlebars::Handlebars;
use serde::Serialize;
use std::sync::OnceLock;

macro_rules! templates {
    ($($path:literal),* $(,)?) => {
        /// Every template, by its path under `templates/`.
        pub const TEMPLATES: &[(&str, &str)] = &[$(($path, include_str!(concat!("../", $path)))),*];
    };
}

templates!(
    "project/Cargo.toml.hbs",
    "project/capi-ext.toml.hbs",
    "project/gitignore.hbs",
    "project/rustfmt.toml.hbs",
    "project/dockerignore.hbs",
    "project/Dockerfile.hbs",
    "project/Makefile.hbs",
    "project/ci.yaml.hbs",
    "project/README.md.hbs",
    "project/src/main.rs.hbs",
    "project/src/hooks/mod.rs.hbs",
    "project/src/hooks/handler.rs.hbs",
    "project/src/patches/mod.rs.hbs",
    "project/src/patches/patch.rs.hbs",
    "project/src/variables.rs.hbs",
    "project/config/default/kustomization.yaml.hbs",
    "project/config/default/namespace.yaml.hbs",
    "project/config/manager/kustomization.yaml.hbs",
    "project/config/manager/deployment.yaml.hbs",
    "project/config/manager/service.yaml.hbs",
    "project/config/manager/poddisruptionbudget.yaml.hbs",
    "project/config/manager/networkpolicy.yaml.hbs",
    "project/config/certmanager/kustomization.yaml.hbs",
    "project/config/certmanager/issuer.yaml.hbs",
    "project/config/certmanager/certificate.yaml.hbs",
    "project/config/extension/kustomization.yaml.hbs",
    "project/config/tracing/kustomization.yaml.hbs",
    "project/config/rbac/kustomization.yaml.hbs",
    "project/config/rbac/role.yaml.hbs",
    "project/config/prometheus/kustomization.yaml.hbs",
    "project/config/prometheus/podmonitor.yaml.hbs",
    "project/config/prometheus/prometheusrule.yaml.hbs",
    "project/config/prometheus/groups.yaml.hbs",
    "project/config/extension/extensionconfig.yaml.hbs",
    "project/config/extension/patch-entry.yaml.hbs",
    "project/config/extension/clusterclass-patch.yaml.hbs",
    "project/render/clusterclass.yaml.hbs",
    "project/render/cluster.yaml.hbs",
    "project/render/templates.yaml.hbs",
    "project/crds/README.md.hbs",
    "project/docs/variables.md.hbs",
    "project/chart/Chart.yaml.hbs",
    "project/chart/values.yaml.hbs",
    "project/chart/templates/_helpers.tpl.hbs",
    "project/chart/templates/deployment.yaml.hbs",
    "project/chart/templates/service.yaml.hbs",
    "project/chart/templates/poddisruptionbudget.yaml.hbs",
    "project/chart/templates/networkpolicy.yaml.hbs",
    "project/chart/templates/rbac.yaml.hbs",
    "project/chart/templates/certmanager.yaml.hbs",
    "project/chart/templates/extensionconfig.yaml.hbs",
    "project/chart/templates/monitoring.yaml.hbs",
    "project/chart/templates/NOTES.txt.hbs",
);

macro_rules! frozen {
    ($($version:literal => [$($path:literal),* $(,)?]),* $(,)?) => {
        /// The project templates each released CLI version scaffolded with, kept unchanged under
        /// `frozen/<version>/` (the merge base of `capi-ext upgrade`), by version, then by path
        /// as in [`TEMPLATES`]. When a version is released, its templates are frozen here.
        pub const FROZEN: &[(&str, &[(&str, &str)])] = &[$(($version, &[
            $(($path, include_str!(concat!("../frozen/", $version, "/", $path)))),*
        ])),*];
    };
}

frozen!(
    "0.1.0" => [
        "project/Cargo.toml.hbs",
        "project/README.md.hbs",
        "project/gitignore.hbs",
        "project/rustfmt.toml.hbs",
        "project/dockerignore.hbs",
        "project/Dockerfile.hbs",
        "project/Makefile.hbs",
        "project/ci.yaml.hbs",
        "project/config/default/kustomization.yaml.hbs",
        "project/config/default/namespace.yaml.hbs",
        "project/config/manager/kustomization.yaml.hbs",
        "project/config/manager/deployment.yaml.hbs",
        "project/config/manager/service.yaml.hbs",
        "project/config/manager/poddisruptionbudget.yaml.hbs",
        "project/config/manager/networkpolicy.yaml.hbs",
        "project/config/certmanager/kustomization.yaml.hbs",
        "project/config/certmanager/issuer.yaml.hbs",
        "project/config/certmanager/certificate.yaml.hbs",
        "project/config/extension/kustomization.yaml.hbs",
    ],
);

/// A template that could not be rendered.
#[derive(Debug, thiserror::Error)]
#[error("template {name}: {message}")]
pub struct TemplateError {
    /// The template.
    pub name: String,
    /// What went wrong.
    pub message: String,
}

fn registry_of(templates: &[(&str, &str)]) -> Handlebars<'static> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    for (name, text) in templates {
        hb.register_template_string(name, *text)
            .unwrap_or_else(|e| panic!("template {name} does not parse: {e}"));
    }
    hb
}

fn registry() -> &'static Handlebars<'static> {
    static REGISTRY: OnceLock<Handlebars<'static>> = OnceLock::new();
    REGISTRY.get_or_init(|| registry_of(TEMPLATES))
}

fn frozen_registries() -> &'static [(&'static str, Handlebars<'static>)] {
    static REGISTRIES: OnceLock<Vec<(&str, Handlebars<'static>)>> = OnceLock::new();
    REGISTRIES.get_or_init(|| {
        FROZEN
            .iter()
            .map(|(version, templates)| (*version, registry_of(templates)))
            .collect()
    })
}

/// The versions whose templates are frozen in [`FROZEN`].
pub fn released_versions() -> Vec<&'static str> {
    FROZEN.iter().map(|(v, _)| *v).collect()
}

/// Renders template `name` as CLI `version` did: `None` when that version had no such template
/// or its templates are not frozen here (see [`released_versions`]).
///
/// ```
/// let ctx = serde_json::json!({"namespace": "ext-system"});
/// let old = capi_ext_templates::render_released("0.1.0", "project/config/default/namespace.yaml.hbs", &ctx)
///     .unwrap()
///     .unwrap();
/// assert!(!old.contains("pod-security.kubernetes.io/warn"));
/// ```
pub fn render_released(
    version: &str,
    name: &str,
    context: &impl Serialize,
) -> Result<Option<String>, TemplateError> {
    let Some((_, hb)) = frozen_registries().iter().find(|(v, _)| *v == version) else {
        return Ok(None);
    };
    if hb.get_template(name).is_none() {
        return Ok(None);
    }
    hb.render(name, context)
        .map(Some)
        .map_err(|e| TemplateError {
            name: format!("{name} (as of {version})"),
            message: e.to_string(),
        })
}

/// Renders template `name` with `context`.
pub fn render(name: &str, context: &impl Serialize) -> Result<String, TemplateError> {
    registry().render(name, context).map_err(|e| TemplateError {
        name: name.to_string(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        assert!(registry().get_templates().len() == TEMPLATES.len());
        for ((version, templates), (_, hb)) in FROZEN.iter().zip(frozen_registries()) {
            assert_eq!(hb.get_templates().len(), templates.len(), "{version}");
        }
    }

    #[test]
    fn frozen_templates_are_still_templates_of_today() {
        // A frozen template whose current counterpart disappeared would make `upgrade` delete
        // nothing and merge nothing: keep the paths in step.
        for (version, templates) in FROZEN {
            for (name, _) in *templates {
                assert!(
                    TEMPLATES.iter().any(|(n, _)| n == name),
                    "{version}: {name} is frozen but no longer a template"
                );
            }
        }
    }

    #[test]
    fn strict_mode_rejects_missing_values() {
        let err = render("project/Dockerfile.hbs", &serde_json::json!({})).unwrap_err();
        assert!(err.to_string().contains("project/Dockerfile.hbs"), "{err}");
    }
}
