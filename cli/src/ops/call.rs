//! Calling a running extension exactly as Cluster API does, and judging the answer by CAPI's
//! rules: POST, no Content-Type, `?timeout=`, HTTP/2 when the server offers it, TLS 1.2+ with
//! the CA of the ExtensionConfig, an optional client certificate, no redirects.

use anyhow::{Context, anyhow, bail};
use capi_ext::CapiVersion;
use capi_ext::hooks::v1alpha1::{self as hooks, HookResponse, validation};
use capi_ext_codegen::catalog::HookInfo;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where and how to reach the extension.
#[derive(Debug, Clone)]
pub struct Target {
    /// Base URL, e.g. `https://127.0.0.1:9443` (a path is a prefix, as in the ExtensionConfig).
    pub url: String,
    /// CA bundle that signed the serving certificate (the ExtensionConfig's caBundle).
    pub ca: PathBuf,
    /// Client certificate and key, when the extension requires one.
    pub identity: Option<(PathBuf, PathBuf)>,
    /// The deadline, sent as `?timeout=` too.
    pub timeout: Duration,
}

/// How to reach a running extension (the flags of `call`, `verify` and `render`). Inside a
/// project both flags may be left out: `make run`'s extension is the default (127.0.0.1 on the
/// port of `CAPI_EXT_WEBHOOK_PORT`, else 9443, with the project's `.certs/ca.crt`).
#[derive(Debug, clap::Args)]
pub struct Connection {
    /// The extension's URL, e.g. https://127.0.0.1:9443 (a path is a prefix). Inside a
    /// project: `make run`'s, when not given.
    #[arg(long, visible_alias = "extension")]
    url: Option<String>,
    /// CA bundle that signed the serving certificate (the ExtensionConfig's caBundle). Inside
    /// a project: its .certs/ca.crt, when not given.
    #[arg(long)]
    ca: Option<PathBuf>,
    /// Client certificate, when the extension requires one.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// Client key.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
}

impl Connection {
    /// The target, with a deadline; what is not given comes from the project around the
    /// current directory (as `make run` serves it).
    pub fn target(self, timeout: Duration) -> anyhow::Result<Target> {
        let root = std::env::current_dir()
            .ok()
            .and_then(|dir| crate::ops::project::find_root(&dir).ok());
        self.target_in(timeout, root.as_deref())
    }

    fn target_in(self, timeout: Duration, project: Option<&Path>) -> anyhow::Result<Target> {
        let url = match (self.url, project) {
            (Some(url), _) => url,
            (None, Some(_)) => format!(
                "https://127.0.0.1:{}",
                std::env::var("CAPI_EXT_WEBHOOK_PORT").unwrap_or_else(|_| "9443".into())
            ),
            (None, None) => bail!(
                "say where the extension is: --url URL --ca CA (inside a project made by `capi-ext init`, `make run`'s extension is the default)"
            ),
        };
        let ca = match (self.ca, project) {
            (Some(ca), _) => ca,
            (None, Some(root)) => {
                let ca = root.join(".certs/ca.crt");
                if !ca.is_file() {
                    bail!(
                        "{}: not there; `make run` writes it (start the extension with `make run`), or give --ca FILE",
                        ca.display()
                    );
                }
                ca
            }
            (None, None) => {
                bail!("--url {url} needs --ca FILE: the CA that signed its certificate")
            }
        };
        Ok(Target {
            url,
            ca,
            identity: self.cert.zip(self.key),
            timeout,
        })
    }
}

/// The handler `call` calls for `hook`: the one given, checked against the project's
/// `capi-ext.toml` when there is a project (a wrong name gets a did-you-mean), or, when none is
/// given, the project's only handler of the hook.
pub fn handler_for(
    hook: &HookInfo,
    given: Option<&str>,
    project: Option<&Path>,
) -> anyhow::Result<String> {
    if hook.singleton {
        return Ok(String::new());
    }
    let known: Vec<String> = match project {
        Some(root) => crate::ops::project::Metadata::read(root)?
            .handlers
            .into_iter()
            .filter(|h| h.hook == hook.name)
            .map(|h| h.name)
            .collect(),
        None => Vec::new(),
    };
    match (given, known.as_slice()) {
        (Some(name), _) if project.is_none() || known.iter().any(|k| k == name) => {
            Ok(name.to_string())
        }
        (Some(name), []) => bail!(
            "the project has no {} handler (capi-ext.toml), so `{name}` is not one of its; add one with `capi-ext create hook {}`",
            hook.name,
            hook.name
        ),
        (Some(name), known) => {
            let hint =
                capi_ext_codegen::naming::did_you_mean(name, known.iter().map(String::as_str))
                    .map(|s| format!("did you mean `{s}`? "))
                    .unwrap_or_default();
            bail!(
                "the project has no {} handler `{name}`; {hint}its {} handlers: {}",
                hook.name,
                hook.name,
                known.join(", ")
            )
        }
        (None, [only]) => Ok(only.clone()),
        (None, []) => bail!(
            "--handler is required for {} (the name advertised in Discovery)",
            hook.name
        ),
        (None, known) => bail!(
            "the project has {} {} handlers ({}): say which with --handler",
            known.len(),
            hook.name,
            known.join(", ")
        ),
    }
}

/// A request read by `call -f`: JSON, or the YAML `capi-ext example --format yaml` writes,
/// returned as JSON bytes.
pub fn request_body(text: &[u8]) -> anyhow::Result<Vec<u8>> {
    if serde_json::from_slice::<Value>(text).is_ok() {
        return Ok(text.to_vec());
    }
    let text = std::str::from_utf8(text).context("the request is neither JSON nor YAML text")?;
    let value: Value = serde_saphyr::from_str(text)
        .map_err(|e| anyhow!("the request is neither JSON nor YAML: {e}"))?;
    Ok(serde_json::to_vec(&value)?)
}

/// What came back.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// `HTTP/2` or `HTTP/1.1`.
    pub protocol: &'static str,
    /// The body.
    pub body: Vec<u8>,
    /// Round-trip time.
    pub elapsed: Duration,
}

fn tls_config(target: &Target) -> anyhow::Result<rustls::ClientConfig> {
    let pem = std::fs::read(&target.ca)
        .with_context(|| format!("reading --ca {}", target.ca.display()))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        roots
            .add(cert.with_context(|| format!("{}: not a PEM CA bundle", target.ca.display()))?)?;
    }
    if roots.is_empty() {
        bail!("{}: no CERTIFICATE in the CA bundle", target.ca.display());
    }
    // *ring*, as the runtime's server (deprecated by rustls 0.23.48 for lacking post-quantum key
    // exchange; the extensions called here negotiate X25519).
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots);
    let mut config = match &target.identity {
        Some((cert, key)) => {
            let certs = CertificateDer::pem_file_iter(cert)
                .with_context(|| format!("reading --cert {}", cert.display()))?
                .collect::<Result<Vec<_>, _>>()
                .with_context(|| format!("{}: not a PEM certificate", cert.display()))?;
            let key = PrivateKeyDer::from_pem_file(key)
                .with_context(|| format!("{}: not a PEM private key", key.display()))?;
            builder.with_client_auth_cert(certs, key)?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

fn explain_tls(e: &std::io::Error, host: &str) -> String {
    let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
    match inner {
        Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)) => {
            "the server's certificate is not signed by the CA given with --ca (CAPI would use the ExtensionConfig's caBundle and fail the same way)".into()
        }
        Some(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
        | Some(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext { .. })) => format!(
            "the server's certificate is not valid for `{host}`: CAPI checks the SAN against the URL's host (for a service: <service>.<namespace>.svc)"
        ),
        Some(rustls::Error::InvalidCertificate(rustls::CertificateError::Expired | rustls::CertificateError::ExpiredContext { .. })) => {
            "the server's certificate has expired".into()
        }
        Some(rustls::Error::AlertReceived(alert)) => format!("the server refused the handshake ({alert:?}); does it require a client certificate (--cert/--key)?"),
        Some(other) => other.to_string(),
        None => e.to_string(),
    }
}

/// Posts `body` to `path` (below the target's URL) and returns the answer.
pub fn post(target: &Target, path: &str, body: Vec<u8>) -> anyhow::Result<Answer> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(post_async(target, path, body))
}

/// [`post`] inside a running Tokio runtime.
pub async fn post_async(target: &Target, path: &str, body: Vec<u8>) -> anyhow::Result<Answer> {
    let path = format!("{path}?timeout={}s", target.timeout.as_secs());
    send_async(target, hyper::Method::POST, &path, body, None).await
}

/// Sends a request to `path_and_query` (below the target's URL), optionally with a bearer
/// token, and returns the answer; HTTP/2 when the server offers it.
pub async fn send_async(
    target: &Target,
    method: hyper::Method,
    path_and_query: &str,
    body: Vec<u8>,
    token: Option<&str>,
) -> anyhow::Result<Answer> {
    let rest = target.url.strip_prefix("https://").ok_or_else(|| {
        anyhow!(
            "--url must start with https:// (CAPI only calls https), got `{}`",
            target.url
        )
    })?;
    let (authority, prefix) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
            h.trim_matches(['[', ']']).to_string(),
            p.parse::<u16>()
                .with_context(|| format!("bad port in --url `{}`", target.url))?,
        ),
        _ => (authority.trim_matches(['[', ']']).to_string(), 443),
    };
    let config = Arc::new(tls_config(target)?);
    let full_path = format!("/{}{}", prefix.trim_matches('/'), path_and_query).replace("//", "/");
    let started = Instant::now();
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| anyhow!("cannot reach {host}:{port}: {e} (is the extension running and listening there?)"))?;
        // Without it a request's last segment waits for the server's delayed ACK (about 40 ms
        // per call: `call` showed 48-53 ms for answers the server gave in 1 ms).
        tcp.set_nodelay(true)?;
        let name = ServerName::try_from(host.clone())
            .map_err(|_| anyhow!("`{host}` is not a valid server name"))?;
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|e| {
                anyhow!(
                    "TLS handshake with {host}:{port} failed: {}",
                    explain_tls(&e, &host)
                )
            })?;
        let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(format!("https://{authority}{full_path}"));
        if let Some(token) = token {
            request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request.body(Full::new(Bytes::from(body)))?;
        let io = TokioIo::new(tls);
        let response = if h2 {
            let (mut send, conn) =
                hyper::client::conn::http2::handshake(TokioExecutor::new(), io).await?;
            tokio::spawn(conn);
            send.send_request(request).await?
        } else {
            let (mut send, conn) = hyper::client::conn::http1::handshake(io).await?;
            tokio::spawn(conn);
            send.send_request(request).await?
        };
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes().to_vec();
        Ok::<_, anyhow::Error>(Answer {
            status,
            protocol: if h2 { "HTTP/2" } else { "HTTP/1.1" },
            body,
            elapsed: started.elapsed(),
        })
    };
    match tokio::time::timeout(target.timeout, exchange).await {
        Ok(r) => r,
        Err(_) => bail!(
            "no answer within {}s (CAPI would give up too)",
            target.timeout.as_secs()
        ),
    }
}

/// CAPI's verdict on an answer.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// Why CAPI would reject the answer (empty: accepted).
    pub problems: Vec<String>,
    /// Things CAPI accepts but capi-ext's rules flag.
    pub warnings: Vec<String>,
    /// `Success` or `Failure`, when the answer has a valid status.
    pub status: Option<hooks::ResponseStatus>,
    /// The response's message.
    pub message: String,
}

impl Verdict {
    /// Prints the verdict on stderr; returns the exit code CAPI's view implies.
    pub fn report(&self) -> ExitCode {
        let v = self;
        for w in &v.warnings {
            eprintln!("warning: {w}");
        }
        for p in &v.problems {
            eprintln!("rejected: {p}");
        }
        match (v.problems.is_empty(), v.status) {
            (false, _) | (true, None) => ExitCode::from(2),
            (true, Some(hooks::ResponseStatus::Failure)) => {
                eprintln!(
                    "{}",
                    super::files::status_line(
                        "Failure",
                        &format!(
                            "CAPI accepts the answer and fails the reconcile: {}",
                            v.message
                        )
                    )
                );
                ExitCode::from(1)
            }
            (true, Some(hooks::ResponseStatus::Success)) => {
                eprintln!(
                    "{}",
                    super::files::status_line("Accepted", "CAPI accepts this answer")
                );
                ExitCode::SUCCESS
            }
        }
    }
}

fn typed<R: HookResponse>(body: &[u8], verdict: &mut Verdict) -> Option<R> {
    match serde_json::from_slice::<R>(body) {
        Ok(r) => {
            verdict.status = Some(r.status());
            verdict.message = r.message().to_string();
            Some(r)
        }
        Err(e) => {
            verdict
                .problems
                .push(format!("CAPI cannot decode the response: {e}"));
            None
        }
    }
}

/// What would make CAPI churn although it accepts each answer: the same request answered
/// differently (asked again here), GeneratePatches patches that depend on the order of the items
/// (asked again in reverse order), a message with a time or random part in it. Each problem
/// names the field.
pub fn churn_problems(
    target: &Target,
    hook: &HookInfo,
    path: &str,
    request: &[u8],
    first: &Answer,
) -> Vec<String> {
    use capi_ext_render::determinism::{
        first_difference, item_patch_difference, reversed, volatile_part,
    };
    let mut problems = Vec::new();
    let Ok(first_json) = serde_json::from_slice::<Value>(&first.body) else {
        return problems;
    };
    if let Some((what, part)) = first_json["message"].as_str().and_then(volatile_part) {
        problems.push(format!(
            "the message holds {what} (`{part}`): CAPI writes extension messages into the Cluster's conditions, so one that changes on every call rewrites them on every reconcile; leave it out of the message (log it instead)"
        ));
    }
    match post(target, path, request.to_vec()) {
        Ok(again) => {
            let second: Value = serde_json::from_slice(&again.body).unwrap_or_default();
            if let Some(d) = first_difference(&first_json, &second) {
                problems.push(format!(
                    "not deterministic: the same request changed {} from {} to {} (CAPI calls on every reconcile)",
                    d.field, d.first, d.second
                ));
            }
        }
        Err(e) => problems.push(format!("calling again with the same request: {e:#}")),
    }
    let generate = || -> Option<(hooks::GeneratePatchesRequest, hooks::GeneratePatchesResponse)> {
        Some((
            serde_json::from_slice(request).ok()?,
            serde_json::from_slice(&first.body).ok()?,
        ))
    };
    if hook.name == "GeneratePatches"
        && let Some((request, response)) = generate()
        && let Some(reversed) = reversed(&request)
    {
        let second = post(
            target,
            path,
            serde_json::to_vec(&reversed).unwrap_or_default(),
        )
        .ok()
        .and_then(|a| serde_json::from_slice(&a.body).ok());
        if let Some(d) = second.and_then(|second| item_patch_difference(&response, &second)) {
            problems.push(format!(
                "not deterministic: with the items in reverse order {} changed from {} to {} (CAPI builds the items from maps, in no fixed order)",
                d.field, d.first, d.second
            ));
        }
    }
    problems
}

/// Judges an answer to `request` the way CAPI's runtime client would.
pub fn judge(
    hook: &HookInfo,
    request: &[u8],
    answer: &Answer,
    target_version: CapiVersion,
) -> Verdict {
    let mut v = Verdict::default();
    if answer.status != 200 {
        v.problems.push(format!(
            "HTTP {} (CAPI treats any non-200, redirects included, as a failed call): {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
                .chars()
                .take(512)
                .collect::<String>()
        ));
        return v;
    }
    let json: Value = match serde_json::from_slice(&answer.body) {
        Ok(j) => j,
        Err(e) => {
            v.problems.push(format!("the body is not JSON: {e}"));
            return v;
        }
    };
    match json.get("status").and_then(Value::as_str) {
        Some("Success") | Some("Failure") => {}
        Some(other) => v.problems.push(format!(
            "status is `{other}`: CAPI accepts exactly `Success` or `Failure`"
        )),
        None => v
            .problems
            .push("no `status`: CAPI rejects the response, whatever the failure policy".into()),
    }
    if hook.blocking {
        match json.get("retryAfterSeconds") {
            None => v.warnings.push("no retryAfterSeconds: CAPI reads 0 (not blocking); blocking hooks should always send it".into()),
            Some(n) if n.as_i64().is_none_or(|n| !(0..=i64::from(i32::MAX)).contains(&n)) => {
                v.problems.push(format!("retryAfterSeconds {n} is not an integer in 0..=2147483647"))
            }
            Some(_) => {}
        }
    }
    if !v.problems.is_empty() {
        return v;
    }
    match hook.name {
        "Discovery" => {
            if let Some(r) = typed::<hooks::DiscoveryResponse>(&answer.body, &mut v)
                && let Err(p) = validation::discovery(&r, target_version)
            {
                v.problems.extend(p);
            }
        }
        "DiscoverVariables" => {
            if let Some(r) = typed::<hooks::DiscoverVariablesResponse>(&answer.body, &mut v)
                && r.status == hooks::ResponseStatus::Success
                && let Err(p) = validation::discover_variables(&r)
            {
                v.problems.extend(p);
            }
        }
        "GeneratePatches" => {
            if let Some(r) = typed::<hooks::GeneratePatchesResponse>(&answer.body, &mut v) {
                let req: hooks::GeneratePatchesRequest =
                    serde_json::from_slice(request).unwrap_or_default();
                for item in &r.items {
                    if !req.items.iter().any(|i| i.uid == item.uid) {
                        v.problems.push(format!("patch for uid `{}`, which is not in the request (CAPI: unable to find corresponding request item)", item.uid));
                    }
                }
            }
        }
        _ => {
            // Every other response: status, message and the hook's own fields (patches are
            // checked for base64 and a valid document by the typed decode).
            decode_any(hook, &answer.body, &mut v);
        }
    }
    v
}

/// Decodes any hook's response into its typed form, recording status and problems.
pub fn decode_any(hook: &HookInfo, body: &[u8], v: &mut Verdict) -> bool {
    macro_rules! by_hook {
        ($($h:ident),*) => {
            match hook.name {
                $( stringify!($h) => typed::<<hooks::$h as hooks::Hook>::Response>(body, v).is_some(), )*
                _ => false,
            }
        };
    }
    by_hook!(
        BeforeClusterCreate,
        AfterControlPlaneInitialized,
        BeforeClusterUpgrade,
        BeforeControlPlaneUpgrade,
        AfterControlPlaneUpgrade,
        BeforeWorkersUpgrade,
        AfterWorkersUpgrade,
        AfterClusterUpgrade,
        BeforeClusterDelete,
        ValidateTopology,
        CanUpdateMachine,
        CanUpdateMachineSet,
        UpdateMachine,
        GenerateUpgradePlan
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/projects/every-hook"
    );

    #[test]
    fn inside_a_project_the_handler_is_found_and_a_wrong_one_gets_a_did_you_mean() {
        let root = Path::new(PROJECT);
        let hook = |name| capi_ext_codegen::catalog::find(name).unwrap();
        let patches = hook("GeneratePatches");
        assert_eq!(
            handler_for(patches, None, Some(root)).unwrap(),
            "generate-patches"
        );
        let err = handler_for(patches, Some("generate-pathces"), Some(root))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "the project has no GeneratePatches handler `generate-pathces`; did you mean `generate-patches`? its GeneratePatches handlers: generate-patches"
        );
        assert_eq!(handler_for(patches, Some("x"), None).unwrap(), "x");
        let err = handler_for(patches, None, None).unwrap_err().to_string();
        assert!(err.contains("--handler is required"), "{err}");
        assert_eq!(
            handler_for(hook("Discovery"), None, Some(root)).unwrap(),
            ""
        );
    }

    #[test]
    fn inside_a_project_make_runs_extension_is_the_default_target() {
        let none = || Connection {
            url: None,
            ca: None,
            cert: None,
            key: None,
        };
        let err = none()
            .target_in(Duration::from_secs(1), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("say where the extension is: --url URL --ca CA"),
            "{err}"
        );
        let dir = std::env::temp_dir().join(format!("capi-ext-connection-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".certs")).unwrap();
        let err = none()
            .target_in(Duration::from_secs(1), Some(&dir))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(".certs/ca.crt: not there; `make run` writes it"),
            "{err}"
        );
        std::fs::write(dir.join(".certs/ca.crt"), "").unwrap();
        let target = none()
            .target_in(Duration::from_secs(1), Some(&dir))
            .unwrap();
        assert!(
            target.url.starts_with("https://127.0.0.1:"),
            "{}",
            target.url
        );
        assert_eq!(target.ca, dir.join(".certs/ca.crt"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_request_may_be_the_yaml_example_writes() {
        assert_eq!(request_body(b"{\"a\": 1}").unwrap(), b"{\"a\": 1}");
        let body = request_body(b"apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1\nkind: BeforeClusterCreateRequest\n").unwrap();
        let value: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["kind"], "BeforeClusterCreateRequest");
        let err = request_body(b"{not: [closed").unwrap_err().to_string();
        assert!(err.contains("neither JSON nor YAML"), "{err}");
    }

    #[test]
    fn tls_failures_say_why() {
        let wrap = |e: rustls::Error| std::io::Error::other(e);
        let san = explain_tls(
            &wrap(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName,
            )),
            "ext.ns.svc",
        );
        assert!(
            san.contains("not valid for `ext.ns.svc`: CAPI checks the SAN"),
            "{san}"
        );
        let ca = explain_tls(
            &wrap(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
            "h",
        );
        assert!(ca.contains("not signed by the CA given with --ca"), "{ca}");
    }
}
