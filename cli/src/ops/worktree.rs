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
        // One folder per worktree of this process: `diff` checks out the base and the head
        // before it builds either, and they may be the same commit.
        static WORKTREES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "capi-ext-worktree-{}-{}-{}",
            std::process::id(),
            WORKTREES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_commit_checks_out_twice_and_each_is_removed_when_dropped() {
        let repo =
            std::env::temp_dir().join(format!("capi-ext-worktree-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&repo);
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        let run = |args: &[&str]| git(&repo, args).unwrap();
        run(&["init", "--quiet"]);
        run(&["add", "-A"]);
        run(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "--quiet",
            "-m",
            "x",
        ]);
        let base = Worktree::add(&repo, "HEAD").unwrap();
        let head = Worktree::add(&repo, "HEAD").unwrap();
        assert_ne!(base.project, head.project);
        assert!(
            base.project.join("Cargo.toml").is_file() && head.project.join("Cargo.toml").is_file()
        );
        let dirs = (base.project.clone(), head.project.clone());
        drop(base);
        drop(head);
        assert!(!dirs.0.exists() && !dirs.1.exists());
        std::fs::remove_dir_all(repo).unwrap();
    }
}
