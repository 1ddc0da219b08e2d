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

/// Builds the project's binary with cargo (diagnostics on stderr) and returns its path.
fn build(root: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let mut child = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
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
        let root = find_root(start)?;
        let name = Metadata::read(&root)?.name;
        let binary = build(&root, &name)?;
        let dir =
            std::env::temp_dir().join(format!("capi-ext-local-{}-{}", name, std::process::id()));
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
