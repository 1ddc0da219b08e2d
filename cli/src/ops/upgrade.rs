//! `capi-ext upgrade`: brings a project scaffolded by an older capi-ext to today's templates.
//!
//! Each file `init` rendered from a template of its own ([`scaffold::PROJECT_FILES`]) is merged
//! three ways, as git merges: the base is what the CLI recorded in `capi-ext.toml`
//! (`cli-version`) rendered for this project (its templates are frozen in the binary,
//! `capi_ext_templates::FROZEN`), "yours" is the file on disk, the new version is today's
//! template. A file you did not touch takes the new version; a file whose template did not
//! change stays yours; otherwise the merge keeps both, and where both changed the same lines it
//! writes git-style conflict markers (and the command fails). Nothing of yours is dropped.
//! Then `cli-version` moves to this CLI's, a crates.io dependency to this CLI's version, and the
//! generated files are regenerated.

use super::files::{FileChange, Owner};
use super::generate::{self, Scope};
use super::project::{self, Metadata};
use super::scaffold;
use super::source::CrateSource;
use anyhow::{Context, bail};
use std::fmt;
use std::path::Path;

/// What the upgrade does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Already what today's template makes, or the template did not change: left as it is.
    Unchanged,
    /// You had not edited it: replaced by today's version.
    Updated,
    /// Your edits and the template's changes merged without overlap.
    Merged,
    /// Your edits and the template's changes overlap: written with this many conflict markers.
    Conflict(usize),
    /// A file today's templates add: created.
    Created,
    /// You deleted it: left deleted (today's template changed it, and is not applied).
    KeptDeleted,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Unchanged => write!(f, "unchanged"),
            Outcome::Updated => write!(f, "updated (you had not edited it)"),
            Outcome::Merged => write!(f, "merged with your edits"),
            Outcome::Conflict(n) => write!(
                f,
                "CONFLICT: {n} place(s) where your edits and the template's changes overlap; resolve the markers"
            ),
            Outcome::Created => write!(f, "created (new in this version)"),
            Outcome::KeptDeleted => write!(f, "deleted by you, left deleted"),
        }
    }
}

/// The upgrade of a project: per file, what happens, and the files to write.
#[derive(Debug)]
pub struct Plan {
    /// The CLI version the project was scaffolded with.
    pub from: String,
    /// This CLI's version.
    pub to: String,
    /// `(path, outcome)` for every project file, in [`scaffold::PROJECT_FILES`] order.
    pub outcomes: Vec<(String, Outcome)>,
    /// The files to write: merged project files, `capi-ext.toml`, generated files.
    pub changes: Vec<FileChange>,
}

impl Plan {
    /// How many conflict markers the merge left.
    pub fn conflicts(&self) -> usize {
        self.outcomes
            .iter()
            .map(|(_, o)| match o {
                Outcome::Conflict(n) => *n,
                _ => 0,
            })
            .sum()
    }
}

/// Merges `yours` (the project's file) and `new` (today's template) from their common `base`:
/// `Ok` when clean, `Err` with conflict markers (and their count) when both changed the same
/// lines. The markers name the sides: `<<<<<<< yours`, `||||||| capi-ext FROM`,
/// `=======`, `>>>>>>> capi-ext TO`.
pub fn merge(
    base: &str,
    yours: &str,
    new: &str,
    from: &str,
    to: &str,
) -> Result<String, (String, usize)> {
    match diffy::merge(base, yours, new) {
        Ok(merged) => Ok(merged),
        Err(conflicted) => {
            let mut count = 0;
            let mut out = String::with_capacity(conflicted.len());
            for line in conflicted.split_inclusive('\n') {
                let (body, end) = match line.strip_suffix('\n') {
                    Some(body) => (body, "\n"),
                    None => (line, ""),
                };
                match body {
                    "<<<<<<< ours" => {
                        count += 1;
                        out.push_str("<<<<<<< yours");
                    }
                    "||||||| original" => out.push_str(&format!("||||||| capi-ext {from}")),
                    ">>>>>>> theirs" => out.push_str(&format!(">>>>>>> capi-ext {to}")),
                    other => out.push_str(other),
                }
                out.push_str(end);
            }
            Err((out, count))
        }
    }
}

/// The upgrade of the project at `root` to this CLI's templates.
pub fn plan(root: &Path) -> anyhow::Result<Plan> {
    let meta = Metadata::read(root)?;
    let from = meta.cli_version.clone();
    let to = project::CLI_VERSION.to_string();
    let released = capi_ext_templates::released_versions();
    if from != to && !released.contains(&from.as_str()) {
        bail!(
            "{}: cli-version {from}: this capi-ext ({to}) knows the templates of {} only; upgrade with a capi-ext that knows {from}'s first",
            project::METADATA_FILE,
            released.join(", ")
        );
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))
        .context("Cargo.toml: upgrade reads where capi-ext's crates come from")?;
    let source = CrateSource::from_manifest(&manifest)?;
    // A crates.io project moves to this CLI's crates; a checkout stays where it is.
    let new_source = match &source {
        CrateSource::Registry(_) => CrateSource::Registry(to.clone()),
        checkout => checkout.clone(),
    };
    let base_ctx = scaffold::project_context(&meta, &source, &from);
    let new_ctx = scaffold::project_context(&meta, &new_source, &to);
    let mut outcomes = Vec::new();
    let mut changes = Vec::new();
    for (path, template) in scaffold::PROJECT_FILES {
        let new = capi_ext_templates::render(template, &new_ctx)?;
        let base = if from == to {
            Some(new.clone())
        } else {
            capi_ext_templates::render_released(&from, template, &base_ctx)?
        };
        let yours = match std::fs::read_to_string(root.join(path)) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {path}")),
        };
        let (outcome, content) = match (&base, &yours) {
            (_, Some(yours)) if *yours == new => (Outcome::Unchanged, None),
            (Some(base), Some(_)) if *base == new => (Outcome::Unchanged, None),
            (None, None) => (Outcome::Created, Some(new)),
            (Some(base), None) if *base == new => (Outcome::Unchanged, None),
            (Some(_), None) => (Outcome::KeptDeleted, None),
            (Some(base), Some(yours)) if base == yours => (Outcome::Updated, Some(new)),
            (base, Some(yours)) => {
                match merge(base.as_deref().unwrap_or(""), yours, &new, &from, &to) {
                    Ok(merged) => (Outcome::Merged, Some(merged)),
                    Err((marked, n)) => (Outcome::Conflict(n), Some(marked)),
                }
            }
        };
        if let Some(content) = content {
            changes.push(FileChange {
                path: path.into(),
                content,
                owner: Owner::User,
            });
        }
        outcomes.push((path.to_string(), outcome));
    }
    let upgraded = Metadata {
        cli_version: to.clone(),
        ..meta.clone()
    };
    changes.push(FileChange {
        path: project::METADATA_FILE.into(),
        content: upgraded.render()?,
        owner: Owner::Generated,
    });
    changes.extend(generate::files(root, &upgraded, Scope::All)?);
    Ok(Plan {
        from,
        to,
        outcomes,
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_like_git_and_names_the_sides() {
        let base = "a\nb\nc\nd\ne\n";
        // Yours edits the first line, the template the last: both kept.
        assert_eq!(
            merge(base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "0.1.0", "0.2.0").unwrap(),
            "A\nb\nc\nd\nE\n"
        );
        // Both edit the same line: markers, yours first, nothing lost.
        let (marked, n) = merge(
            base,
            "a\nb\nyours\nd\ne\n",
            "a\nb\nnew\nd\ne\n",
            "0.1.0",
            "0.2.0",
        )
        .unwrap_err();
        assert_eq!(n, 1);
        assert!(
            marked.contains(
                "<<<<<<< yours\nyours\n||||||| capi-ext 0.1.0\nc\n=======\nnew\n>>>>>>> capi-ext 0.2.0\n"
            ),
            "{marked}"
        );
    }
}
