//! The version control of a new project, as `cargo new` does it: a git repository unless the
//! project is already inside one (`diff` and the scaffolded CI compare revisions).

use anyhow::Context;
use std::path::Path;
use std::process::Command;

/// What `init` does about version control (`--vcs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Vcs {
    /// A git repository, unless the directory is inside one already.
    Git,
    /// None.
    None,
}

/// What happened to version control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A repository was made in the project.
    Initialized,
    /// The project is in a repository already (its top level).
    Inside(String),
    /// `--vcs none`.
    Skipped,
}

/// Makes `dir` a git repository unless it is inside one (or `vcs` is [`Vcs::None`]).
pub fn init(dir: &Path, vcs: Vcs) -> anyhow::Result<Outcome> {
    if vcs == Vcs::None {
        return Ok(Outcome::Skipped);
    }
    let inside = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .context(
            "running git to make the project a repository (install git, or pass --vcs none)",
        )?;
    if inside.status.success() {
        return Ok(Outcome::Inside(
            String::from_utf8_lossy(&inside.stdout).trim().to_string(),
        ));
    }
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["init", "--quiet"])
        .output()
        .context("running git init (install git, or pass --vcs none)")?;
    if !out.status.success() {
        anyhow::bail!(
            "git init in {} failed: {} (pass --vcs none to skip the repository)",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(Outcome::Initialized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_is_made_once_and_none_skips_it() {
        let dir = std::env::temp_dir().join(format!("capi-ext-vcs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("inner")).unwrap();
        assert_eq!(init(&dir, Vcs::None).unwrap(), Outcome::Skipped);
        assert!(!dir.join(".git").exists());
        assert_eq!(init(&dir, Vcs::Git).unwrap(), Outcome::Initialized);
        assert!(dir.join(".git").is_dir());
        assert!(matches!(
            init(&dir.join("inner"), Vcs::Git).unwrap(),
            Outcome::Inside(_)
        ));
        assert!(!dir.join("inner/.git").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
