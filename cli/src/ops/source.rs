//! Where a project gets capi-ext's crates and CLI: a checkout (by default the one this CLI was
//! built from, when it is still there) or crates.io. The same choice feeds Cargo.toml, the
//! Makefile's `make cli` and the CI workflow, so all three agree.

use std::path::{Path, PathBuf};

/// The source of capi-ext's crates (`capi-ext`, `capi-ext-render`) and of the `capi-ext` CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrateSource {
    /// crates.io, at this version.
    Registry(String),
    /// A checkout of the capi-ext repository: the path of its `runtime/` crate as written in
    /// Cargo.toml (relative to the project, or absolute).
    Checkout(String),
}

/// The checkout this binary was built from, if it still holds the crates.
fn own_checkout() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    ["runtime", "render", "cli"]
        .iter()
        .all(|c| root.join(c).join("Cargo.toml").is_file())
        .then(|| root.to_path_buf())
}

fn sibling(runtime: &str, name: &str) -> String {
    Path::new(runtime)
        .with_file_name(name)
        .display()
        .to_string()
}

impl CrateSource {
    /// The source from the flags: `--capi-ext-path` (a checkout's `runtime/`),
    /// `--capi-ext-version` (crates.io), else this CLI's own checkout if it still exists, else
    /// crates.io at this CLI's version.
    pub fn choose(path: Option<String>, version: Option<String>) -> Self {
        match (path, version) {
            (Some(path), _) => CrateSource::Checkout(path),
            (None, Some(version)) => CrateSource::Registry(version),
            (None, None) => match own_checkout() {
                Some(root) => CrateSource::Checkout(root.join("runtime").display().to_string()),
                None => CrateSource::Registry(env!("CARGO_PKG_VERSION").to_string()),
            },
        }
    }

    /// The value of `capi-ext = ...` in Cargo.toml.
    pub fn capi_ext_dependency(&self) -> String {
        match self {
            CrateSource::Registry(v) => format!("\"{v}\""),
            CrateSource::Checkout(p) => format!("{{ path = {p:?} }}"),
        }
    }

    /// The value of `capi-ext-render = ...` (a dev-dependency), from the same source.
    pub fn render_dependency(&self) -> String {
        self.sibling_dependency("render", &[])
    }

    /// The value of `capi-ext-<folder> = ...` for another crate of the repository (its folder:
    /// `render`, `types`), with features, from the same source.
    pub fn sibling_dependency(&self, folder: &str, features: &[&str]) -> String {
        let features = if features.is_empty() {
            String::new()
        } else {
            format!(", features = {features:?}")
        };
        match self {
            CrateSource::Registry(v) if features.is_empty() => format!("\"{v}\""),
            CrateSource::Registry(v) => format!("{{ version = \"{v}\"{features} }}"),
            CrateSource::Checkout(p) => {
                format!("{{ path = {:?}{features} }}", sibling(p, folder))
            }
        }
    }

    /// The command that installs the matching CLI (`make cli`, the CI workflow).
    pub fn cli_install(&self) -> String {
        match self {
            CrateSource::Registry(v) => {
                format!("cargo install capi-ext-cli --version {v} --locked")
            }
            CrateSource::Checkout(p) => {
                format!("cargo install --locked --path {}", sibling(p, "cli"))
            }
        }
    }

    /// One line for the user: where the crates come from and how to choose otherwise.
    pub fn describe(&self) -> String {
        match self {
            CrateSource::Registry(v) => format!(
                "capi-ext crates from crates.io, version {v} (--capi-ext-path PATH for a checkout's runtime/)"
            ),
            CrateSource::Checkout(p) => format!(
                "capi-ext crates from the checkout at {} (--capi-ext-version VERSION for crates.io)",
                Path::new(p).parent().unwrap_or(Path::new(p)).display()
            ),
        }
    }
}

impl CrateSource {
    /// Where a project's `Cargo.toml` takes `capi-ext` from: `capi-ext = "V"` or
    /// `{ version = "V" }` is crates.io, `{ path = "P" }` a checkout.
    pub fn from_manifest(text: &str) -> anyhow::Result<Self> {
        let doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|e| anyhow::anyhow!("Cargo.toml is not valid TOML: {e}"))?;
        let dep = doc
            .get("dependencies")
            .and_then(|d| d.get("capi-ext"))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "Cargo.toml has no `capi-ext` in [dependencies]: it says where capi-ext's crates come from"
                )
            })?;
        if let Some(version) = dep.as_str() {
            return Ok(CrateSource::Registry(version.to_string()));
        }
        let field = |key: &str| dep.get(key).and_then(|v| v.as_str()).map(str::to_string);
        match (field("path"), field("version")) {
            (Some(path), _) => Ok(CrateSource::Checkout(path)),
            (None, Some(version)) => Ok(CrateSource::Registry(version)),
            _ => anyhow::bail!(
                "Cargo.toml: the `capi-ext` dependency has neither a version nor a path"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_source_back_from_cargo_toml() {
        for source in [
            CrateSource::Checkout("../capi-ext/runtime".into()),
            CrateSource::Registry("0.2.0".into()),
        ] {
            let manifest = format!(
                "[dependencies]\ncapi-ext = {}\n",
                source.capi_ext_dependency()
            );
            assert_eq!(CrateSource::from_manifest(&manifest).unwrap(), source);
        }
        assert_eq!(
            CrateSource::from_manifest(
                "[dependencies]\ncapi-ext = { version = \"0.1.0\", features = [\"x\"] }"
            )
            .unwrap(),
            CrateSource::Registry("0.1.0".into())
        );
        let e = CrateSource::from_manifest("[dependencies]\nserde = \"1\"").unwrap_err();
        assert!(e.to_string().contains("no `capi-ext`"), "{e}");
    }

    #[test]
    fn one_choice_for_crates_and_cli() {
        let checkout = CrateSource::Checkout("../capi-ext/runtime".into());
        assert_eq!(
            checkout.capi_ext_dependency(),
            r#"{ path = "../capi-ext/runtime" }"#
        );
        assert_eq!(
            checkout.render_dependency(),
            r#"{ path = "../capi-ext/render" }"#
        );
        assert_eq!(
            checkout.cli_install(),
            "cargo install --locked --path ../capi-ext/cli"
        );
        let registry = CrateSource::choose(None, Some("0.2.0".into()));
        assert_eq!(registry.capi_ext_dependency(), r#""0.2.0""#);
        assert_eq!(
            registry.cli_install(),
            "cargo install capi-ext-cli --version 0.2.0 --locked"
        );
    }

    #[test]
    fn defaults_to_the_checkout_this_cli_was_built_from() {
        // Tests run from the workspace, so the checkout is there.
        let CrateSource::Checkout(path) = CrateSource::choose(None, None) else {
            panic!("expected the checkout");
        };
        assert!(Path::new(&path).join("Cargo.toml").is_file(), "{path}");
        assert!(path.ends_with("runtime"), "{path}");
    }
}
