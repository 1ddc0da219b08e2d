//! TLS: rustls with the ring provider, ALPN h2 + http/1.1, optional client certificate
//! verification, and a certificate resolver reloaded from disk when the files change.
//!
//! Reloading polls the file contents (Kubernetes swaps secret volumes by symlink, which
//! defeats file watches). Established connections keep their session; new handshakes use
//! the new certificate.

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::metrics::Metrics;
use super::options::{ServerOptions, TlsVersion};

/// A TLS setup problem, naming the file and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct TlsError {
    /// The file concerned.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn tls_error(path: &Path, message: impl Into<String>) -> TlsError {
    TlsError {
        path: path.display().to_string(),
        message: message.into(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|e| {
        tls_error(
            path,
            format!("cannot read: {e} (is --webhook-cert-dir right?)"),
        )
    })
}

/// The crypto provider of every TLS configuration of the runtime: *ring*, chosen for its build
/// (no C toolchain beyond a C compiler, no cmake). rustls 0.23.48 deprecated it for lacking
/// post-quantum key exchange (X25519MLKEM768, which Go's clients offer first); with *ring* the
/// handshake settles on X25519, as CAPI's client accepts. The allowance keeps a new project's
/// build, which resolves the newest rustls, free of warnings.
#[allow(deprecated)]
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Parses a PEM certificate chain and key into a signing key.
fn certified_key(
    cert_path: &Path,
    cert_pem: &[u8],
    key_path: &Path,
    key_pem: &[u8],
) -> Result<CertifiedKey, TlsError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| tls_error(cert_path, format!("not a PEM certificate chain: {e}")))?;
    if certs.is_empty() {
        return Err(tls_error(cert_path, "contains no CERTIFICATE block"));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
        tls_error(
            key_path,
            format!("not a PEM private key (PKCS#8, PKCS#1 or SEC1): {e}"),
        )
    })?;
    let signing = provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| tls_error(key_path, format!("unsupported private key: {e}")))?;
    let ck = CertifiedKey::new(certs, signing);
    ck.keys_match().map_err(|e| {
        tls_error(
            key_path,
            format!(
                "does not match the certificate in {}: {e}",
                cert_path.display()
            ),
        )
    })?;
    Ok(ck)
}

/// The serving certificate, swapped in place when the files on disk change.
pub struct ReloadingCert {
    cert_path: PathBuf,
    key_path: PathBuf,
    state: RwLock<(Arc<CertifiedKey>, Vec<u8>)>,
}

impl fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("cert_path", &self.cert_path)
            .finish()
    }
}

impl ReloadingCert {
    /// Loads the certificate and key once; fails with the file and the reason.
    pub fn load(cert_path: PathBuf, key_path: PathBuf) -> Result<Self, TlsError> {
        let (cert_pem, key_pem) = (read(&cert_path)?, read(&key_path)?);
        let key = certified_key(&cert_path, &cert_pem, &key_path, &key_pem)?;
        let fingerprint = [cert_pem, key_pem].concat();
        Ok(ReloadingCert {
            cert_path,
            key_path,
            state: RwLock::new((Arc::new(key), fingerprint)),
        })
    }

    /// Re-reads the files; swaps the certificate if they changed and are valid.
    /// Returns `Ok(true)` when a new certificate is in use.
    pub fn reload(&self) -> Result<bool, TlsError> {
        let (cert_pem, key_pem) = (read(&self.cert_path)?, read(&self.key_path)?);
        let fingerprint = [cert_pem.as_slice(), key_pem.as_slice()].concat();
        if self.state.read().expect("lock").1 == fingerprint {
            return Ok(false);
        }
        let key = certified_key(&self.cert_path, &cert_pem, &self.key_path, &key_pem)?;
        *self.state.write().expect("lock") = (Arc::new(key), fingerprint);
        Ok(true)
    }

    /// When the certificate in use stops being valid (its leaf's `notAfter`, Unix seconds);
    /// `None` when it cannot be read from the certificate.
    pub fn not_after(&self) -> Option<i64> {
        let state = self.state.read().expect("lock");
        super::x509::not_after(state.0.end_entity_cert().ok()?)
    }

    /// Polls for changes forever (run it on its own task), keeping `metrics` told of the
    /// certificate in use and of each reload. A failed reload is retried at every tick but
    /// counted once per change of the files.
    pub async fn watch(self: Arc<Self>, interval: Duration, metrics: Arc<Metrics>) {
        self.in_use(&metrics);
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        ticker.tick().await;
        // Changes in the certificate's directory (a Secret volume swaps its `..data` link; a
        // file written in place) wake the loop at once; the ticker is the fallback.
        let dirs: Vec<&Path> = [&self.cert_path, &self.key_path]
            .iter()
            .filter_map(|p| p.parent())
            .collect();
        let mut watch = super::watch::DirectoryWatch::new(&dirs);
        let mut failed: Option<String> = None;
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                () = watch.changed() => {
                    // Let a writer finish the other file of the pair.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            match self.reload() {
                Ok(true) => {
                    failed = None;
                    metrics.certificate_reloaded("success");
                    tracing::info!(cert = %self.cert_path.display(), "serving certificate reloaded");
                    self.in_use(&metrics);
                }
                Ok(false) => failed = None,
                Err(e) => {
                    let message = e.to_string();
                    if failed.as_ref() != Some(&message) {
                        metrics.certificate_reloaded("error");
                        tracing::error!(error = %e, "serving certificate not reloaded; keeping the previous one");
                        failed = Some(message);
                    }
                }
            }
        }
    }
}

impl ReloadingCert {
    /// Tells the metrics of the certificate now in use, and the log when it has expired or
    /// expires within a week (CAPI refuses an expired certificate: every hook call fails).
    fn in_use(&self, metrics: &Metrics) {
        let not_after = self.not_after();
        metrics.certificate_in_use(not_after);
        let Some(not_after) = not_after else { return };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let cert = self.cert_path.display();
        if not_after <= now {
            tracing::error!(%cert, expired_seconds_ago = now - not_after, "the serving certificate has expired: callers refuse it; renew it (cert-manager: check the Certificate's status)");
        } else if not_after - now < 7 * 86_400 {
            tracing::warn!(%cert, expires_in_hours = (not_after - now) / 3600, "the serving certificate expires within a week");
        }
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.state.read().expect("lock").0.clone())
    }
}

/// Builds the rustls server configuration from the options.
pub fn server_config(
    options: &ServerOptions,
    cert: Arc<ReloadingCert>,
) -> Result<ServerConfig, TlsError> {
    let versions: &[&'static rustls::SupportedProtocolVersion] = match options.tls_min_version {
        TlsVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::Tls13 => &[&rustls::version::TLS13],
    };
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|e| tls_error(&options.webhook_cert_dir, e.to_string()))?;
    let builder = match &options.webhook_client_ca_name {
        Some(name) => {
            let path = options.webhook_cert_dir.join(name);
            let pem = read(&path)?;
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert =
                    cert.map_err(|e| tls_error(&path, format!("not a PEM CA bundle: {e}")))?;
                roots
                    .add(cert)
                    .map_err(|e| tls_error(&path, format!("unusable CA certificate: {e}")))?;
            }
            if roots.is_empty() {
                return Err(tls_error(&path, "contains no CERTIFICATE block"));
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| tls_error(&path, e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(cert);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_name_the_path() {
        let err = ReloadingCert::load("/nonexistent/tls.crt".into(), "/nonexistent/tls.key".into())
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/tls.crt: cannot read"),
            "{err}"
        );
    }

    #[test]
    fn garbage_is_rejected() {
        let dir = std::env::temp_dir().join(format!("capi-ext-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tls.crt"), "hello").unwrap();
        std::fs::write(dir.join("tls.key"), "world").unwrap();
        let err = ReloadingCert::load(dir.join("tls.crt"), dir.join("tls.key")).unwrap_err();
        assert!(err.to_string().contains("no CERTIFICATE block"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
