//! A project's extension built and started on 127.0.0.1 with fresh development certificates, for
//! commands that need a running extension (`render --project`); stopped when dropped.

use crate::ops::call::Target;
use crate::ops::project::{Metadata, find_root};
use anyhow::{Context, anyhow, bail};
use capi_ext::dev_certs::DevCerts;
use std::io::{BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The running extension.
#[derive(Debug)]
pub struct LocalExtension {
    child: Child,
    dir: PathBuf,
    /// How to call it.
    pub target: Target,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Where cargo builds the project at `root` (`CARGO_TARGET_DIR`, a workspace's `target/`…).
pub fn target_directory(root: &Path) -> anyhow::Result<PathBuf> {
    let out = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed in {} (errors above)", root.display());
    }
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("cargo metadata gave no target_directory"))
}

/// Builds the project's binary with cargo (diagnostics on stderr) into `target_dir` (cargo's
/// choice when `None`) and returns its path.
pub(crate) fn build(root: &Path, name: &str, target_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let mut command = cargo();
    if let Some(dir) = target_dir {
        command.env("CARGO_TARGET_DIR", dir);
    }
    let mut child = command
        .args([
            "build",
            "--quiet",
            "--bin",
            name,
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .context("running cargo build")?;
    let mut executable = None;
    for line in std::io::BufReader::new(child.stdout.take().expect("piped")).lines() {
        let message: serde_json::Value = serde_json::from_str(&line?).unwrap_or_default();
        if message["reason"] == "compiler-artifact"
            && message["target"]["name"] == name
            && let Some(path) = message["executable"].as_str()
        {
            executable = Some(PathBuf::from(path));
        }
    }
    if !child.wait()?.success() {
        bail!("cargo build of {} failed (errors above)", root.display());
    }
    executable.ok_or_else(|| anyhow!("cargo built no binary named `{name}` in {}", root.display()))
}

/// The project at or above `start` and its extension's binary: a capi-ext project's (its
/// `capi-ext.toml` names it), else the one binary of the nearest Cargo package.
pub fn project(start: &Path) -> anyhow::Result<(PathBuf, String)> {
    if let Ok(root) = find_root(start) {
        let name = Metadata::read(&root)?.name;
        return Ok((root, name));
    }
    let start = start
        .canonicalize()
        .with_context(|| format!("{} does not exist", start.display()))?;
    let Some(root) = start.ancestors().find(|d| {
        std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.contains("[package]"))
    }) else {
        bail!(
            "no capi-ext project or Cargo package in {} or its parents",
            start.display()
        );
    };
    let out = cargo()
        .args(["read-manifest"])
        .current_dir(root)
        .output()
        .context("running cargo read-manifest")?;
    let manifest: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let binaries: Vec<&str> = manifest["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .filter_map(|t| t["name"].as_str())
        .collect();
    match binaries.as_slice() {
        [name] => Ok((root.to_path_buf(), name.to_string())),
        _ => bail!(
            "{}: the package has {} binaries ({}); capi-ext runs a project with one (or a capi-ext.toml naming it)",
            root.join("Cargo.toml").display(),
            binaries.len(),
            binaries.join(", ")
        ),
    }
}

fn ready(probes: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", probes)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut answer = String::new();
    stream
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .and_then(|()| stream.read_to_string(&mut answer))
        .is_ok_and(|_| answer.starts_with("HTTP/1.1 200"))
}

impl LocalExtension {
    /// Builds the project found at or above `start`, writes development certificates into a
    /// temporary directory, starts the binary on free loopback ports and waits until it is ready.
    pub fn start(start: &Path, timeout: Duration) -> anyhow::Result<Self> {
        Self::start_building_in(start, timeout, None)
    }

    /// [`start`](Self::start), building into `target_dir`: another checkout of the same project
    /// (a git worktree) reuses the dependencies already built there.
    pub fn start_building_in(
        start: &Path,
        timeout: Duration,
        target_dir: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let (root, name) = project(start)?;
        let binary = build(&root, &name, target_dir)?;
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "capi-ext-local-{}-{}-{}",
            name,
            std::process::id(),
            STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        let certs = DevCerts::generate(&[]).map_err(|e| anyhow!("generating certificates: {e}"))?;
        for (file, pem) in [
            ("ca.crt", &certs.ca_pem),
            ("tls.crt", &certs.cert_pem),
            ("tls.key", &certs.key_pem),
        ] {
            std::fs::write(dir.join(file), pem)?;
        }
        let (port, probes) = (free_port()?, free_port()?);
        let log = std::fs::File::create(dir.join("extension.log"))?;
        let child = Command::new(&binary)
            .args([
                "--webhook-host",
                "127.0.0.1",
                "--webhook-port",
                &port.to_string(),
                "--metrics-bind-address",
                "0",
            ])
            .arg("--health-probe-bind-address")
            .arg(format!("127.0.0.1:{probes}"))
            .arg("--webhook-cert-dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut local = LocalExtension {
            child,
            target: Target {
                url: format!("https://127.0.0.1:{port}"),
                ca: dir.join("ca.crt"),
                identity: None,
                timeout,
            },
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !ready(probes) {
            if let Some(status) = local.child.try_wait()? {
                bail!(
                    "{} exited ({status}) before it was ready:\n{}",
                    binary.display(),
                    local.log()
                );
            }
            if Instant::now() > deadline {
                bail!(
                    "{} was not ready within 30s:\n{}",
                    binary.display(),
                    local.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(local)
    }

    /// What the extension logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("extension.log")).unwrap_or_default()
    }
}

impl Drop for LocalExtension {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
