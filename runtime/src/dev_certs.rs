//! Development certificates: a throw-away CA and a serving certificate signed by it, for
//! local runs and tests. Production deployments get their certificates from cert-manager.
//!
//! ```
//! use capi_ext::dev_certs::DevCerts;
//!
//! let certs = DevCerts::generate(&["my-ext.my-ns.svc"]).unwrap();
//! assert!(certs.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
//! assert!(certs.key_pem.contains("PRIVATE KEY"));
//! ```

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use std::net::IpAddr;
use std::path::Path;

/// A CA, a serving certificate and its key, all PEM.
#[derive(Debug, Clone)]
pub struct DevCerts {
    /// The CA certificate (put it in the ExtensionConfig's `caBundle`).
    pub ca_pem: String,
    /// The CA's private key (to sign more certificates, e.g. a client certificate).
    pub ca_key_pem: String,
    /// The serving certificate.
    pub cert_pem: String,
    /// The serving certificate's private key.
    pub key_pem: String,
    /// The CA's common name (unique per generated CA).
    pub ca_name: String,
}

/// Why certificates could not be generated or written.
#[derive(Debug, thiserror::Error)]
pub enum DevCertsError {
    /// rcgen failed.
    #[error("cannot generate certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// A file could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
}

fn ca_params(common_name: &str) -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

impl DevCerts {
    /// A new CA and a serving certificate for `localhost`, `127.0.0.1`, `::1` and the extra
    /// names (DNS names or IP addresses, e.g. `<svc>.<ns>.svc`).
    pub fn generate(extra_names: &[&str]) -> Result<Self, DevCertsError> {
        let ca_key = KeyPair::generate()?;
        // A name of its own: verifiers pick the issuer by name, and two development CAs with
        // one name make a wrong CA look like a bad signature instead of an unknown issuer.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let ca_name = format!(
            "capi-ext development CA {:x}",
            nanos ^ u128::from(std::process::id())
        );
        let ca_params = ca_params(&ca_name)?;
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let mut names = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ];
        names.extend(extra_names.iter().map(|s| s.to_string()));
        let (cert_pem, key_pem) =
            Self::sign(&ca_params, &ca_key, "capi-ext serving certificate", &names)?;
        Ok(DevCerts {
            ca_pem: ca_cert.pem(),
            ca_key_pem: ca_key.serialize_pem(),
            cert_pem,
            key_pem,
            ca_name,
        })
    }

    /// Signs a new leaf certificate with this CA (e.g. a client certificate for mTLS, or a
    /// rotated serving certificate). Returns `(cert_pem, key_pem)`.
    pub fn sign_leaf(
        &self,
        common_name: &str,
        names: &[&str],
    ) -> Result<(String, String), DevCertsError> {
        let ca_key = KeyPair::from_pem(&self.ca_key_pem)?;
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        Self::sign(&ca_params(&self.ca_name)?, &ca_key, common_name, &names)
    }

    fn sign(
        ca_params: &CertificateParams,
        ca_key: &KeyPair,
        cn: &str,
        names: &[String],
    ) -> Result<(String, String), DevCertsError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, cn);
        params.subject_alt_names = names
            .iter()
            .map(|n| match n.parse::<IpAddr>() {
                Ok(ip) => Ok(SanType::IpAddress(ip)),
                Err(_) => n.clone().try_into().map(SanType::DnsName),
            })
            .collect::<Result<_, _>>()?;
        let issuer = Issuer::from_params(ca_params, ca_key);
        let cert = params.signed_by(&key, &issuer)?;
        Ok((cert.pem(), key.serialize_pem()))
    }

    /// Writes `ca.crt`, `tls.crt` and `tls.key` into `dir` (created if needed); each file is
    /// written to a temporary name first and renamed, so readers never see half a file. On Unix
    /// `tls.key` is readable by its owner only (mode 0600).
    pub fn write_to(&self, dir: &Path) -> Result<(), DevCertsError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| DevCertsError::Write { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        for (name, content, private) in [
            ("ca.crt", &self.ca_pem, false),
            ("tls.crt", &self.cert_pem, false),
            ("tls.key", &self.key_pem, true),
        ] {
            let path = dir.join(name);
            crate::fs::write_file_atomic(&path, content.as_bytes(), private).map_err(io(&path))?;
        }
        Ok(())
    }
}

pub use crate::fs::write_atomic;
