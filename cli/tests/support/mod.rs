//! Helpers shared by the CLI's integration tests: a real TLS server in this process, a fresh
//! directory with a development CA, and running the built `capi-ext`.

#![allow(dead_code)]

use capi_ext::dev_certs::DevCerts;
use capi_ext::{Extension, Server, ServerOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Serves `extension` on a free port with the given certificate; returns its URL.
pub fn serve(dir: &Path, cert: (&str, &str), extension: Extension) -> String {
    std::fs::write(dir.join("tls.crt"), cert.0).unwrap();
    std::fs::write(dir.join("tls.key"), cert.1).unwrap();
    let mut options = ServerOptions::local(dir);
    options.metrics_bind_address = capi_ext::server::BindAddress(None);
    options.health_probe_bind_address = capi_ext::server::BindAddress(None);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let bound = Server::bind(extension, options).await.unwrap();
            tx.send(bound.local_addr()).unwrap();
            bound.serve(std::future::pending()).await;
        });
    });
    format!("https://{}", rx.recv().unwrap())
}

/// A test's own folder, removed when dropped (a test that fails leaves nothing in the
/// temporary folder either).
pub struct Scratch(PathBuf);

impl Scratch {
    /// A new empty folder `capi-ext-cli-<tag>-<pid>` in the temporary folder.
    pub fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("capi-ext-cli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh directory holding `ca.crt` of new development certificates.
pub fn setup(tag: &str) -> (Scratch, DevCerts) {
    let dir = Scratch::new(tag);
    let certs = DevCerts::generate(&[]).unwrap();
    std::fs::write(dir.join("ca.crt"), &certs.ca_pem).unwrap();
    (dir, certs)
}

/// Runs the built `capi-ext`.
pub fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capi-ext"))
        .args(args)
        .output()
        .unwrap()
}

/// Stdout and stderr together.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
