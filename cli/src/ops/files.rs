//! Writing a set of files: atomically, with a status per file, never clobbering what the user
//! owns unless asked, and with a dry run that writes nothing.

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// Who owns a file: the user's files are created once; generated files are rewritten whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// Created by the scaffold, then the user's.
    User,
    /// Rewritten by capi-ext each time.
    Generated,
    /// The user's, edited in one place capi-ext is allowed to touch (a marker comment).
    Edited,
}

/// A file to write, relative to the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Path relative to the project root.
    pub path: PathBuf,
    /// Full content.
    pub content: String,
    /// Who owns it.
    pub owner: Owner,
}

/// What happened (or would happen) to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// New file.
    Created,
    /// Existing file, new content.
    Updated,
    /// Existing file, same content.
    Unchanged,
}

impl Status {
    /// The status verb, as cargo prints them.
    pub fn verb(self, dry_run: bool) -> &'static str {
        match (self, dry_run) {
            (Status::Created, false) => "Created",
            (Status::Updated, false) => "Updated",
            (Status::Created, true) => "Would create",
            (Status::Updated, true) => "Would update",
            (Status::Unchanged, _) => "Unchanged",
        }
    }
}

/// The status of each change against what is on disk.
pub fn plan(root: &Path, changes: &[FileChange]) -> Vec<(Status, PathBuf)> {
    changes
        .iter()
        .map(|c| {
            let status = match std::fs::read_to_string(root.join(&c.path)) {
                Ok(old) if old == c.content => Status::Unchanged,
                Ok(_) => Status::Updated,
                Err(_) => Status::Created,
            };
            (status, c.path.clone())
        })
        .collect()
}

/// Writes a file through a temporary sibling and a rename, so a reader never sees half of it.
pub fn write_atomic(path: &Path, content: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    capi_ext::fs::write_atomic(path, content.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// Applies the changes. A user-owned file that exists with other content is an error unless
/// `overwrite_user_files`; nothing is written when any file is refused or when `dry_run`.
/// Returns one status line per file (for stderr).
pub fn apply(
    root: &Path,
    changes: &[FileChange],
    dry_run: bool,
    overwrite_user_files: bool,
) -> anyhow::Result<Vec<String>> {
    let statuses = plan(root, changes);
    let refused: Vec<String> = changes
        .iter()
        .zip(&statuses)
        .filter(|(c, (s, _))| {
            c.owner == Owner::User && *s == Status::Updated && !overwrite_user_files
        })
        .map(|(c, _)| c.path.display().to_string())
        .collect();
    if !refused.is_empty() {
        bail!(
            "{} would be overwritten; these are your files. Move them away or pass --force to replace them",
            refused.join(", ")
        );
    }
    let mut lines = Vec::new();
    for (change, (status, path)) in changes.iter().zip(statuses) {
        if !dry_run && status != Status::Unchanged {
            write_atomic(&root.join(&change.path), &change.content)?;
        }
        lines.push(status_line(
            status.verb(dry_run),
            &path.display().to_string(),
        ));
    }
    Ok(lines)
}

/// A status line: the verb right-aligned in 12 columns, as cargo prints it.
pub fn status_line(verb: &str, what: &str) -> String {
    format!("{verb:>12} {what}")
}

/// A unified diff between what is on disk and what should be there.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, content: &str, owner: Owner) -> FileChange {
        FileChange {
            path: path.into(),
            content: content.into(),
            owner,
        }
    }

    #[test]
    fn statuses_dry_run_and_refusals() {
        let root = std::env::temp_dir().join(format!("capi-ext-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let changes = [
            change("a/user.rs", "x", Owner::User),
            change("gen.yaml", "y", Owner::Generated),
        ];
        let dry = apply(&root, &changes, true, false).unwrap();
        assert_eq!(dry, ["Would create a/user.rs", "Would create gen.yaml"]);
        assert!(!root.exists());
        assert_eq!(
            apply(&root, &changes, false, false).unwrap(),
            ["     Created a/user.rs", "     Created gen.yaml"]
        );
        assert_eq!(
            apply(&root, &changes, false, false).unwrap(),
            ["   Unchanged a/user.rs", "   Unchanged gen.yaml"]
        );
        let edited = [
            change("a/user.rs", "z", Owner::User),
            change("gen.yaml", "w", Owner::Generated),
        ];
        let err = apply(&root, &edited, false, false).unwrap_err().to_string();
        assert!(err.starts_with("a/user.rs would be overwritten"), "{err}");
        assert_eq!(
            std::fs::read_to_string(root.join("gen.yaml")).unwrap(),
            "y",
            "nothing written when refused"
        );
        assert_eq!(
            apply(&root, &edited, false, true).unwrap(),
            ["     Updated a/user.rs", "     Updated gen.yaml"]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn diffs_are_unified() {
        let d = unified_diff("x.yaml", "a\nb\n", "a\nc\n");
        assert!(
            d.contains("--- a/x.yaml") && d.contains("-b") && d.contains("+c"),
            "{d}"
        );
    }
}
