//! The two versions `diff` compares (a git revision built in a worktree, the working tree, or
//! a running extension), started and rendered over the cases.

use crate::ops::call::Target;
use crate::ops::local::{LocalExtension, target_directory};
use crate::ops::render::Extensions;
use crate::ops::worktree::Worktree;
use anyhow::bail;
use capi_ext_render::{Caller, Definition, Input, RenderError, Rendered};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A version of the extension.
#[derive(Debug, Clone, PartialEq)]
pub enum Version {
    /// The project as it is on disk.
    Tree,
    /// A git revision of the project (a branch, tag or commit).
    Revision(String),
    /// A running extension.
    Url {
        /// Its URL.
        url: String,
        /// The CA that signed its serving certificate.
        ca: PathBuf,
        /// The client certificate and key to present, when it requires one.
        identity: Option<(PathBuf, PathBuf)>,
    },
}

impl Version {
    /// The client certificate and key a running extension is called with (`--cert`, `--key`);
    /// nothing for a revision or the working tree, which diff starts itself.
    pub fn with_identity(self, identity: Option<(PathBuf, PathBuf)>) -> Self {
        match self {
            Version::Url { url, ca, .. } => Version::Url { url, ca, identity },
            other => other,
        }
    }

    /// `--base`/`--head`: an `https://` URL (with its CA) or a git revision; `None` is `default`.
    pub fn parse(
        flag: &str,
        value: Option<&str>,
        ca: Option<PathBuf>,
        default: Version,
    ) -> anyhow::Result<Self> {
        match (value, ca) {
            (Some(url), Some(ca)) if url.starts_with("https://") => Ok(Version::Url {
                url: url.to_string(),
                ca,
                identity: None,
            }),
            (Some(url), None) if url.starts_with("https://") => bail!(
                "--{flag} {url} is a running extension: say which CA signed its certificate with --{flag}-ca FILE"
            ),
            (Some(url), _) if url.starts_with("http://") => {
                bail!("--{flag} {url}: CAPI only calls extensions over https")
            }
            (_, Some(_)) => bail!("--{flag}-ca goes with --{flag} https://…"),
            (Some(revision), None) => Ok(Version::Revision(revision.to_string())),
            (None, None) => Ok(default),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Version::Tree => f.write_str("the working tree"),
            Version::Revision(revision) => write!(f, "{revision}"),
            Version::Url { url, .. } => f.write_str(url),
        }
    }
}

/// A version made ready: its worktree checked out (for a revision), nothing built yet.
pub struct Side {
    version: Version,
    /// `base` or `head`: each revision is built in a target directory of its own.
    side: &'static str,
    /// The version, as the user named it (a revision with its commit).
    pub name: String,
    worktree: Option<Worktree>,
}

impl Side {
    /// Checks out `version` of the project (a revision into a temporary worktree).
    pub fn prepare(version: &Version, side: &'static str, project: &Path) -> anyhow::Result<Self> {
        let (name, worktree) = match version {
            Version::Url { url, .. } => (url.clone(), None),
            Version::Tree => ("the working tree".to_string(), None),
            Version::Revision(revision) => {
                let worktree = Worktree::add(project, revision)?;
                (
                    format!("{revision} ({})", &worktree.commit[..12]),
                    Some(worktree),
                )
            }
        };
        Ok(Side {
            version: version.clone(),
            side,
            name,
            worktree,
        })
    }

    /// Where this version keeps `cases` (a folder of the project, or any folder): for a
    /// revision, the same folder in its worktree when it is part of the project; `None` when
    /// the revision does not have it.
    pub fn cases_dir(&self, project: &Path, cases: &Path) -> Option<PathBuf> {
        let Some(worktree) = &self.worktree else {
            return Some(cases.to_path_buf());
        };
        let (Ok(project), Ok(cases_abs)) = (project.canonicalize(), cases.canonicalize()) else {
            return Some(cases.to_path_buf());
        };
        match cases_abs.strip_prefix(&project) {
            Ok(relative) => {
                let dir = worktree.project.join(relative);
                dir.is_dir().then_some(dir)
            }
            Err(_) => Some(cases.to_path_buf()),
        }
    }

    /// Builds (or reaches) the extension of this version. Errors (a failed build, an
    /// unreachable extension) mean there is nothing to compare.
    pub fn start(
        self,
        project: &Path,
        timeout: Duration,
        others: &BTreeMap<String, Target>,
        status: &dyn Fn(&str, &str),
    ) -> anyhow::Result<Running> {
        let local = match &self.version {
            Version::Url { url, ca, identity } => {
                let target = Target {
                    url: url.clone(),
                    ca: ca.clone(),
                    identity: identity.clone(),
                    timeout,
                };
                return Running::reached(target, others, None, None, self.name);
            }
            Version::Tree => {
                status(
                    "Building",
                    &format!("the working tree ({})", project.display()),
                );
                LocalExtension::start(project, timeout)?
            }
            Version::Revision(_) => {
                let worktree = self.worktree.as_ref().expect("prepared with its worktree");
                status("Building", &self.name);
                // A target directory per side next to the project's, kept between runs: cargo
                // gives the same project in another checkout the same artifact names, so
                // sharing one would mix the builds of two checkouts; dependencies are built
                // there once.
                let target_dir = target_directory(project)?
                    .join("capi-ext-diff")
                    .join(self.side);
                LocalExtension::start_building_in(&worktree.project, timeout, Some(&target_dir))?
            }
        };
        Running::reached(
            local.target.clone(),
            others,
            Some(local),
            self.worktree,
            self.name,
        )
    }
}

/// A version's extension, running while the cases render; stopped (and its worktree removed)
/// when dropped.
pub struct Running {
    caller: Extensions,
    runtime: tokio::runtime::Runtime,
    /// The version's name.
    pub name: String,
    // Field order: the extension stops before its worktree goes.
    _local: Option<LocalExtension>,
    _worktree: Option<Worktree>,
}

impl Running {
    fn reached(
        target: Target,
        others: &BTreeMap<String, Target>,
        local: Option<LocalExtension>,
        worktree: Option<Worktree>,
        name: String,
    ) -> anyhow::Result<Self> {
        let running = Running {
            caller: Extensions::new(target, others),
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
            name,
            _local: local,
            _worktree: worktree,
        };
        running
            .runtime
            .block_on(running.caller.call(
                "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery",
                b"{}".to_vec(),
            ))
            .map_err(|e| anyhow::anyhow!("{}: Discovery failed: {e}", running.name))?;
        Ok(running)
    }

    /// The ClusterClass's variable definitions as this version's DiscoverVariables gives them.
    pub fn definitions(&self, input: &Input) -> Result<Vec<Definition>, RenderError> {
        self.runtime
            .block_on(capi_ext_render::definitions(input, &self.caller))
    }

    /// Renders each input through this version.
    pub fn render<'a>(
        &self,
        inputs: impl IntoIterator<Item = &'a Input>,
    ) -> Vec<Result<Rendered, RenderError>> {
        inputs
            .into_iter()
            .map(|input| {
                self.runtime
                    .block_on(capi_ext_render::render(input, &self.caller))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_revisions_or_https_urls_with_a_ca() {
        let parse = |value: Option<&str>, ca: Option<&str>| {
            Version::parse("base", value, ca.map(PathBuf::from), Version::Tree)
        };
        assert_eq!(parse(None, None).unwrap(), Version::Tree);
        assert_eq!(
            parse(Some("origin/main"), None).unwrap(),
            Version::Revision("origin/main".into())
        );
        assert!(matches!(
            parse(Some("https://127.0.0.1:9443"), Some("ca.crt")).unwrap(),
            Version::Url { .. }
        ));
        let err = parse(Some("https://x"), None).unwrap_err().to_string();
        assert!(err.contains("--base-ca FILE"), "{err}");
        let err = parse(Some("http://x"), None).unwrap_err().to_string();
        assert!(err.contains("only calls extensions over https"), "{err}");
        let err = parse(Some("main"), Some("ca.crt")).unwrap_err().to_string();
        assert!(err.contains("--base-ca goes with --base https://"), "{err}");
    }
}
