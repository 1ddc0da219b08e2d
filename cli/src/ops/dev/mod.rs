//! `capi-ext dev`: the project's extension under a real Cluster API on 127.0.0.1, without
//! containers. The CLI builds the extension and watches its sources; the engine (Go, see
//! [`engine`]) runs etcd, kube-apiserver and Cluster API's manager, registers the extension and
//! prints each call.

pub mod engine;
pub mod watch;

use crate::ops::files::status_line;
use crate::ops::local;
use crate::ops::project::Metadata;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What `capi-ext dev` runs.
#[derive(Debug, Clone)]
pub struct DevRequest {
    /// A folder in the project (or the project's root).
    pub project: PathBuf,
    /// The Cluster API release or minor; the project's target when `None`.
    pub capi_version: Option<String>,
    /// The extension's port on 127.0.0.1.
    pub port: u16,
    /// The run's folder; `<target>/capi-ext-dev` when `None`.
    pub state_dir: Option<PathBuf>,
    /// A folder of etcd, kube-apiserver and capi-manager (and kcp-manager with KCP) to run
    /// instead of building them.
    pub binaries: Option<PathBuf>,
    /// Also create the Cluster of `render/cluster.yaml`.
    pub cluster: bool,
    /// Rebuild and restart the extension when its sources change.
    pub watch: bool,
    /// Run KubeadmControlPlane's manager even when render/ holds no KubeadmControlPlane or
    /// template (it runs anyway when it does).
    pub kcp: bool,
}

/// The file that marks a folder as a state folder of `capi-ext dev`: a run removes what an
/// earlier run left there, so it only uses a new or empty folder or one that has this file.
pub const STATE_MARKER: &str = ".capi-ext-dev";

/// The state folder of a project: `--state-dir`, else `capi-ext-dev` in cargo's target folder.
/// A folder that holds files and is not a state folder is refused (a run would remove its
/// `logs/`, `pki/`, `etcd/`…).
pub fn state_dir(project: &Path, given: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = state_path(project, given)?;
    claim(&dir)?;
    dir.canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))
}

/// Where the state folder of a project is (nothing is created).
pub fn state_path(project: &Path, given: Option<&Path>) -> anyhow::Result<PathBuf> {
    Ok(match given {
        Some(dir) => dir.to_path_buf(),
        None => local::target_directory(project)?.join("capi-ext-dev"),
    })
}

/// Makes `dir` a state folder, or checks that it is one.
fn claim(dir: &Path) -> anyhow::Result<()> {
    let marker = dir.join(STATE_MARKER);
    if marker.is_file() {
        return Ok(());
    }
    let has_files = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
    if has_files {
        bail!(
            "{} holds files and is not a state folder of capi-ext dev (it has no {STATE_MARKER}); \
             a run would remove what it finds there: give --state-dir a new or empty folder",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    crate::ops::files::write_atomic(
        &marker,
        "A state folder of `capi-ext dev`: each run replaces what it holds.\n",
    )
}

/// Runs the project under a real Cluster API until Ctrl-C (or `capi-ext dev down`); returns the
/// engine's exit status.
pub fn up(req: &DevRequest) -> anyhow::Result<ExitStatus> {
    let (root, name) = local::project(&req.project)?;
    let capi_version = match &req.capi_version {
        Some(v) => v.clone(),
        None => Metadata::read(&root)
            .map(|m| m.capi_version)
            .unwrap_or_else(|_| "1.14".into()),
    };
    let state = state_dir(&root, req.state_dir.as_deref())?;
    let cache = engine::cache_dir()?;
    let engine = engine::build(&cache)?;
    eprintln!("{}", status_line("Building", &format!("{name} (cargo)")));
    let extension = local::build(&root, &name, None)?;
    let mut apply = Vec::new();
    for file in ["templates.yaml", "clusterclass.yaml"]
        .into_iter()
        .chain(req.cluster.then_some("cluster.yaml"))
    {
        let path = root.join("render").join(file);
        if path.is_file() {
            apply.push(path);
        } else if file == "cluster.yaml" {
            bail!(
                "--cluster creates render/cluster.yaml's Cluster, and {} does not exist (`capi-ext generate manifests` writes render/)",
                path.display()
            );
        }
    }
    let interrupted = Arc::new(AtomicBool::new(false));
    listen_for_interrupt(interrupted.clone());
    let mut command = Command::new(&engine);
    command
        .arg(format!("-state-dir={}", state.display()))
        .arg(format!("-capi-version={capi_version}"))
        .arg(format!("-cache={}", cache.display()))
        .arg(format!("-extension={}", extension.display()))
        .arg(format!("-name={name}"))
        .arg(format!("-port={}", req.port));
    if let Some(dir) = &req.binaries {
        command.arg(format!("-binaries={}", dir.display()));
    }
    if req.kcp {
        command.arg("-kcp");
    }
    if let Some(crds) = project_crds(&root) {
        command.arg(format!("-crds={}", crds.display()));
    }
    for file in &apply {
        command.arg(format!("-apply={}", file.display()));
    }
    let mut child = command
        .spawn()
        .context("starting the capi-ext dev engine")?;
    let pid = child.id().to_string();
    let mut sources = watch::snapshot(&root);
    let mut forwarded = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if interrupted.load(Ordering::SeqCst) && !forwarded {
            // The engine shares the terminal's process group and had Ctrl-C too; a SIGINT sent
            // to the CLI alone is passed on.
            forwarded = true;
            signal(&pid, "TERM");
        }
        std::thread::sleep(Duration::from_millis(300));
        if !req.watch || forwarded || !state.join("ready").exists() {
            continue;
        }
        let now = watch::snapshot(&root);
        if now == sources {
            continue;
        }
        sources = now;
        let started = Instant::now();
        eprintln!(
            "{}",
            status_line("Rebuilding", &format!("{name}: its sources changed"))
        );
        match local::build(&root, &name, None) {
            Ok(_) => {
                eprintln!(
                    "{}",
                    status_line(
                        "Built",
                        &format!("in {:.1} s; restarting it", started.elapsed().as_secs_f64())
                    )
                );
                signal(&pid, "HUP");
            }
            Err(e) => eprintln!(
                "{}",
                status_line(
                    "Failed",
                    &format!("{e:#}; the running extension is kept until the next change")
                )
            ),
        }
    }
}

/// The project's `crds/` folder when it holds a CRD file (`*.yaml` or `*.yml`; the scaffold puts
/// only a README there).
fn project_crds(root: &Path) -> Option<PathBuf> {
    let dir = root.join("crds");
    let holds_crd = std::fs::read_dir(&dir).ok()?.flatten().any(|e| {
        let path = e.path();
        path.is_file()
            && matches!(
                path.extension().and_then(|x| x.to_str()),
                Some("yaml" | "yml")
            )
    });
    holds_crd.then_some(dir)
}

/// Sends a signal to a process with `kill(1)` (the crate forbids `unsafe`, so no libc).
fn signal(pid: &str, name: &str) -> bool {
    Command::new("kill")
        .args([format!("-{name}").as_str(), pid])
        .status()
        .is_ok_and(|s| s.success())
}

/// Keeps the CLI alive on Ctrl-C (the engine stops the cluster and exits; the CLI then exits
/// with it) and records that it came.
fn listen_for_interrupt(flag: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(async {
            while tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        });
    });
}

/// Stops the run using `state`: SIGTERM to its engine, which stops every process it started;
/// waits until it has. Returns false when no run uses the folder.
pub fn down(state: &Path) -> anyhow::Result<bool> {
    let pid_file = state.join("engine.pid");
    let Ok(text) = std::fs::read_to_string(&pid_file) else {
        return Ok(false);
    };
    let pid = text.trim().to_string();
    if pid.parse::<u32>().is_err() {
        bail!("{}: not a process id: {pid:?}", pid_file.display());
    }
    if !signal(&pid, "TERM") {
        // The engine is gone (killed without cleaning up): its file is stale.
        std::fs::remove_file(&pid_file).ok();
        return Ok(false);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while pid_file.exists() {
        if Instant::now() > deadline {
            bail!(
                "the capi-ext dev engine (pid {pid}) did not stop within 60 s; its logs are in {}",
                state.join("logs").display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crds_is_passed_on_only_when_it_holds_a_crd_file() {
        let root = std::env::temp_dir().join(format!("capi-ext-dev-crds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(project_crds(&root), None, "no crds/");
        std::fs::create_dir_all(root.join("crds")).unwrap();
        std::fs::write(root.join("crds/README.md"), "put CRDs here").unwrap();
        assert_eq!(project_crds(&root), None, "the scaffold's README only");
        std::fs::write(
            root.join("crds/docker.yml"),
            "kind: CustomResourceDefinition",
        )
        .unwrap();
        assert_eq!(project_crds(&root), Some(root.join("crds")));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_folder_with_files_of_its_own_is_not_taken_as_a_state_folder() {
        let dir = std::env::temp_dir().join(format!("capi-ext-dev-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // New: made a state folder; again: still one.
        claim(&dir).unwrap();
        assert!(dir.join(STATE_MARKER).is_file());
        claim(&dir).unwrap();
        // A folder of the user's: refused, nothing written.
        let theirs = dir.join("theirs");
        std::fs::create_dir_all(theirs.join("logs")).unwrap();
        let err = claim(&theirs).unwrap_err().to_string();
        assert!(
            err.contains("is not a state folder of capi-ext dev"),
            "{err}"
        );
        assert!(!theirs.join(STATE_MARKER).exists());
        // An empty one: taken.
        let empty = dir.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        claim(&empty).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
