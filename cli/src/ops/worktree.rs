//! A git revision of a project checked out in a temporary worktree (`git worktree add --detach`),
//! removed when dropped, for commands that build an older version of the extension (`diff`).

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The checked-out revision.
#[derive(Debug)]
pub struct Worktree {
    repository: PathBuf,
    dir: PathBuf,
    /// The commit it holds (full hash).
    pub commit: String,
    /// The project inside it (same place relative to the repository as the original).
    pub project: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Worktree {
    /// Checks out `revision` of the git repository holding `project` into a temporary directory.
    /// Errors say when `project` is not in a repository, `revision` is not a commit there, or the
    /// project did not exist at that revision.
    pub fn add(project: &Path, revision: &str) -> anyhow::Result<Self> {
        let repository = PathBuf::from(git(project, &["rev-parse", "--show-toplevel"]).map_err(
            |e| anyhow::anyhow!("{} is not in a git repository, so it has no revision `{revision}` ({e}); compare against a running extension with --base https://… instead", project.display()),
        )?);
        let commit = git(
            &repository,
            &["rev-parse", "--verify", "--quiet", &format!("{revision}^{{commit}}")],
        )
        .map_err(|_| {
            anyhow::anyhow!(
                "`{revision}` is not a commit of {} (a branch, tag or hash: `git log` lists them; in CI fetch it first)",
                repository.display()
            )
        })?;
        let relative = project
            .canonicalize()?
            .strip_prefix(repository.canonicalize()?)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!(
            "capi-ext-worktree-{}-{}",
            std::process::id(),
            &commit[..12.min(commit.len())]
        ));
        let _ = std::fs::remove_dir_all(&dir);
        git(
            &repository,
            &[
                "worktree",
                "add",
                "--detach",
                "--quiet",
                dir.to_str().context("temporary directory is not UTF-8")?,
                &commit,
            ],
        )?;
        let worktree = Worktree {
            repository,
            project: dir.join(&relative),
            dir,
            commit,
        };
        if !worktree.project.join("Cargo.toml").is_file() {
            bail!(
                "the project was not at {} in `{revision}` (commit {})",
                if relative.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    &relative
                }
                .display(),
                worktree.commit
            );
        }
        Ok(worktree)
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let removed = self
            .dir
            .to_str()
            .map(|dir| git(&self.repository, &["worktree", "remove", "--force", dir]));
        if !matches!(removed, Some(Ok(_))) {
            let _ = std::fs::remove_dir_all(&self.dir);
            let _ = git(&self.repository, &["worktree", "prune"]);
        }
    }
}
