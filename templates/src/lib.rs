//! The templates of `capi-ext init` and `capi-ext create hook`, embedded in the binary and
//! rendered by handlebars in strict mode (a missing value is an error, never an empty string).
//!
//! ```
//! let out = capi_ext_templates::render("project/gitignore.hbs", &serde_json::json!({})).unwrap();
//! assert_eq!(out, "/target\n");
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
    "project/config/extension/extensionconfig.yaml.hbs",
    "project/config/extension/patch-entry.yaml.hbs",
    "project/config/extension/clusterclass-patch.yaml.hbs",
    "project/render/clusterclass.yaml.hbs",
    "project/render/cluster.yaml.hbs",
    "project/render/templates.yaml.hbs",
    "project/docs/variables.md.hbs",
    "project/chart/Chart.yaml.hbs",
    "project/chart/values.yaml.hbs",
    "project/chart/templates/_helpers.tpl.hbs",
    "project/chart/templates/deployment.yaml.hbs",
    "project/chart/templates/service.yaml.hbs",
    "project/chart/templates/poddisruptionbudget.yaml.hbs",
    "project/chart/templates/networkpolicy.yaml.hbs",
    "project/chart/templates/certmanager.yaml.hbs",
    "project/chart/templates/extensionconfig.yaml.hbs",
    "project/chart/templates/NOTES.txt.hbs",
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

fn registry() -> &'static Handlebars<'static> {
    static REGISTRY: OnceLock<Handlebars<'static>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut hb = Handlebars::new();
        hb.set_strict_mode(true);
        hb.register_escape_fn(handlebars::no_escape);
        for (name, text) in TEMPLATES {
            hb.register_template_string(name, *text)
                .unwrap_or_else(|e| panic!("template {name} does not parse: {e}"));
        }
        hb
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
    }

    #[test]
    fn strict_mode_rejects_missing_values() {
        let err = render("project/Dockerfile.hbs", &serde_json::json!({})).unwrap_err();
        assert!(err.to_string().contains("project/Dockerfile.hbs"), "{err}");
    }
}
