//! `capi-ext generate types`: Rust types for CRD kinds, written into the project as a module
//! capi-ext owns (rewritten on every run, `--check`ed in CI).

use crate::ops::files::{FileChange, Owner};
use anyhow::{Context, bail};
use capi_ext_codegen::crd_types::{HEADER, Options, generate};
use std::path::{Path, PathBuf};

/// What to generate.
#[derive(Debug, Clone)]
pub struct Request {
    /// CRD files or directories.
    pub crds: Vec<PathBuf>,
    /// Only these kinds (empty: every CRD).
    pub kinds: Vec<String>,
    /// The CRDs' version to use (default: each one's storage version).
    pub version: Option<String>,
    /// The module to write, relative to the project.
    pub out: PathBuf,
}

/// The generated module, as a file change; refuses to replace a file it did not write.
pub fn file(root: &Path, request: &Request) -> anyhow::Result<FileChange> {
    let mut documents = Vec::new();
    for path in &request.crds {
        let read = capi_ext_render::apiserver::documents_at(path).map_err(anyhow::Error::msg)?;
        documents.extend(read.into_iter().flat_map(|(_, docs)| docs));
    }
    let shown: Vec<String> = request
        .crds
        .iter()
        .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
        .collect();
    let mut command = format!("capi-ext generate types --crd {}", shown.join(" --crd "));
    for kind in &request.kinds {
        command.push_str(&format!(" --kind {kind}"));
    }
    if let Some(version) = &request.version {
        command.push_str(&format!(" --version {version}"));
    }
    command.push_str(&format!(" --out {}", request.out.display()));
    let source = generate(
        &documents,
        &Options {
            kinds: request.kinds.clone(),
            version: request.version.clone(),
            source: format!("Regenerate with: {command}"),
        },
    )
    .map_err(anyhow::Error::msg)
    .with_context(|| format!("generating types from {}", shown.join(", ")))?;
    let source = rustfmt(&source)?;
    let target = root.join(&request.out);
    if let Ok(existing) = std::fs::read_to_string(&target)
        && !existing.starts_with(HEADER)
    {
        bail!(
            "{}: exists and was not written by `capi-ext generate types`; choose another --out or move it",
            request.out.display()
        );
    }
    Ok(FileChange {
        path: request.out.clone(),
        content: source,
        owner: Owner::Generated,
    })
}

/// The source as rustfmt formats it (edition 2024, default style), so the module passes the
/// project's `cargo fmt --check`.
fn rustfmt(source: &str) -> anyhow::Result<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running rustfmt (rustup component add rustfmt) to format the generated types")?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(source.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!(
            "rustfmt refused the generated types (a bug of capi-ext; please report it): {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8(output.stdout)?)
}
