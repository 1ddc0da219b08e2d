//! Development certificates written to a directory, never clobbering existing files.

use anyhow::{Context, bail};
use capi_ext::dev_certs::DevCerts;
use std::path::PathBuf;

/// What to write.
#[derive(Debug, Clone)]
pub struct CertsRequest {
    /// Target directory.
    pub out: PathBuf,
    /// Service name for the in-cluster SAN.
    pub service: Option<String>,
    /// Service namespace.
    pub namespace: String,
    /// Overwrite existing files.
    pub force: bool,
    /// Only report.
    pub dry_run: bool,
}

const FILES: [&str; 3] = ["ca.crt", "tls.crt", "tls.key"];

/// Writes the certificates; returns status lines (`Created ...`, `Replaced ...`, `Would create ...`).
pub fn write(request: &CertsRequest) -> anyhow::Result<Vec<String>> {
    let existing: Vec<_> = FILES
        .iter()
        .filter(|f| request.out.join(f).exists())
        .collect();
    if !existing.is_empty() && !request.force {
        bail!(
            "{} already holds {}; pass --force to replace them or choose another --out",
            request.out.display(),
            existing
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let svc = request
        .service
        .as_ref()
        .map(|s| format!("{s}.{}.svc", request.namespace));
    let names: Vec<&str> = svc.iter().map(String::as_str).collect();
    let verb = |f: &str| match (request.dry_run, request.out.join(f).exists()) {
        (true, true) => "Would replace",
        (true, false) => "Would create",
        (false, true) => "Replaced",
        (false, false) => "Created",
    };
    let lines: Vec<String> = FILES
        .iter()
        .map(|f| format!("{:>13} {}", verb(f), request.out.join(f).display()))
        .collect();
    if !request.dry_run {
        let certs = DevCerts::generate(&names).context("generating certificates")?;
        certs.write_to(&request.out)?;
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &std::path::Path) -> CertsRequest {
        CertsRequest {
            out: dir.to_path_buf(),
            service: Some("ext".into()),
            namespace: "ns".into(),
            force: false,
            dry_run: false,
        }
    }

    #[test]
    fn writes_then_refuses_to_clobber_then_replaces_with_force() {
        let dir = std::env::temp_dir().join(format!("capi-ext-certs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let dry = write(&CertsRequest {
            dry_run: true,
            ..request(&dir)
        })
        .unwrap();
        assert!(dry[0].trim_start().starts_with("Would create") && !dir.exists());
        let lines = write(&request(&dir)).unwrap();
        assert!(
            lines.iter().all(|l| l.trim_start().starts_with("Created")),
            "{lines:?}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode =
                |f: &str| std::fs::metadata(dir.join(f)).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode("tls.key"), 0o600, "the key is its owner's alone");
            assert_ne!(mode("ca.crt") & 0o044, 0, "the CA is for everyone to read");
        }
        let ca = std::fs::read_to_string(dir.join("ca.crt")).unwrap();
        let err = write(&request(&dir)).unwrap_err().to_string();
        assert!(
            err.contains("already holds ca.crt, tls.crt, tls.key; pass --force"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("ca.crt")).unwrap(),
            ca,
            "nothing was touched"
        );
        let lines = write(&CertsRequest {
            force: true,
            ..request(&dir)
        })
        .unwrap();
        assert!(lines[0].trim_start().starts_with("Replaced"));
        assert_ne!(std::fs::read_to_string(dir.join("ca.crt")).unwrap(), ca);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
