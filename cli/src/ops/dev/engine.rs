//! The engine of `capi-ext dev`: the Go program of `cli/devenv` (shared with the conformance
//! suite's e2e harness), embedded in the CLI and built with the user's Go into the cache, once per
//! version of its sources.

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The engine's sources, as `cli/devenv` holds them (path in the module, text).
pub const SOURCES: &[(&str, &str)] = &[
    ("go.mod", include_str!("../../../devenv/go.mod")),
    ("go.sum", include_str!("../../../devenv/go.sum")),
    ("doc.go", include_str!("../../../devenv/doc.go")),
    ("build.go", include_str!("../../../devenv/build.go")),
    (
        "controlplane.go",
        include_str!("../../../devenv/controlplane.go"),
    ),
    ("kube.go", include_str!("../../../devenv/kube.go")),
    (
        "projectcrds.go",
        include_str!("../../../devenv/projectcrds.go"),
    ),
    ("kubeadm.go", include_str!("../../../devenv/kubeadm.go")),
    (
        "machinepools.go",
        include_str!("../../../devenv/machinepools.go"),
    ),
    ("pki.go", include_str!("../../../devenv/pki.go")),
    ("procs.go", include_str!("../../../devenv/procs.go")),
    ("providers.go", include_str!("../../../devenv/providers.go")),
    ("versions.go", include_str!("../../../devenv/versions.go")),
    (
        "cmd/capi-ext-dev/main.go",
        include_str!("../../../devenv/cmd/capi-ext-dev/main.go"),
    ),
];

/// The cache of programs built from the Go module proxy: `$CAPI_EXT_CACHE`, else
/// `~/.cache/capi-ext` (the conformance suite's, so both share the builds).
pub fn cache_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CAPI_EXT_CACHE").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("neither CAPI_EXT_CACHE nor HOME is set: set CAPI_EXT_CACHE to a folder for the programs capi-ext dev builds")?;
    Ok(PathBuf::from(home).join(".cache").join("capi-ext"))
}

/// FNV-1a of the sources: the engine's cache key (stable across builds of the CLI).
fn fingerprint() -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (path, text) in SOURCES {
        for byte in path.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// Says whether Go is on PATH, with what to do when it is not.
pub fn require_go() -> anyhow::Result<()> {
    match Command::new("go").arg("version").output() {
        Ok(out) if out.status.success() => Ok(()),
        _ => bail!(
            "capi-ext dev needs Go 1.26 or newer on PATH: it builds etcd, kube-apiserver and Cluster \
             API's manager from the Go module proxy (once per version, cached). Install Go \
             (https://go.dev/dl), or pass --binaries with a folder holding etcd, kube-apiserver and \
             capi-manager (Go is still needed once, for the engine)"
        ),
    }
}

/// The engine's program, built into `cache/dev/` if this version of its sources was not built
/// before. The sources are written to a folder of their own and the program through a temporary
/// name, so an interrupted build leaves nothing that looks finished.
pub fn build(cache: &Path) -> anyhow::Result<PathBuf> {
    let key = fingerprint();
    let dev = cache.join("dev");
    let program = dev.join(format!("capi-ext-dev-{key}"));
    if program.is_file() {
        return Ok(program);
    }
    require_go()?;
    let src = dev.join(format!("engine-{key}"));
    for (path, text) in SOURCES {
        crate::ops::files::write_atomic(&src.join(path), text)?;
    }
    eprintln!(
        "{}",
        crate::ops::files::status_line("Building", "the capi-ext dev engine (Go, once)")
    );
    let partial = dev.join(format!("capi-ext-dev-{key}.tmp"));
    let status = Command::new("go")
        .args(["build", "-trimpath", "-o"])
        .arg(&partial)
        .arg("./cmd/capi-ext-dev")
        .current_dir(&src)
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=mod")
        .status()
        .context("running go build")?;
    if !status.success() {
        bail!(
            "building the capi-ext dev engine in {} failed (go's errors above)",
            src.display()
        );
    }
    std::fs::rename(&partial, &program)
        .with_context(|| format!("moving {} into place", program.display()))?;
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of the Go module (but its tests) is embedded: a file added to `cli/devenv`
    /// and not to SOURCES would be missing from the engine a user's CLI builds.
    #[test]
    fn every_file_of_the_engine_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("devenv");
        let mut on_disk: Vec<String> = walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                e.path()
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|p| !p.ends_with("_test.go"))
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = SOURCES.iter().map(|(p, _)| p.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
    }
}
