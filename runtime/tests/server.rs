//! The server over real TLS sockets: protocols, mTLS, certificate rotation under load,
//! graceful shutdown, and every kind of bad input.

mod support;

use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, Registration};
use serde_json::json;
use std::time::Duration;
use support::{Client, Proto, TestServer, http_get};

const BASE: &str = "/hooks.runtime.cluster.x-k8s.io/v1alpha1";

async fn create(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    match req.settings.get("sleepMillis").and_then(|s| s.parse().ok()) {
        Some(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            BeforeClusterCreateResponse::success().with_message("slept")
        }
        None if req.cluster.metadata.labels.contains_key("hold") => {
            BeforeClusterCreateResponse::success()
                .retry_after(20)
                .with_message("held")
        }
        None => BeforeClusterCreateResponse::success(),
    }
}

async fn delete(req: BeforeClusterDeleteRequest) -> Result<BeforeClusterDeleteResponse, String> {
    if req.settings.contains_key("panic") {
        panic!("boom in {}", req.cluster.metadata.name);
    }
    Err(format!("backup of {} failed", req.cluster.key()))
}

fn extension() -> Extension {
    Extension::builder()
        .handler(
            Registration::new(BeforeClusterCreate, "before-cluster-create", create)
                .timeout_seconds(5),
        )
        .handler(
            Registration::new(BeforeClusterDelete, "before-cluster-delete", delete)
                .failure_policy(FailurePolicy::Ignore),
        )
        .build()
        .unwrap()
}

fn create_body(settings: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": API_VERSION, "kind": "BeforeClusterCreateRequest", "settings": settings,
        "cluster": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                    "metadata": {"name": "c1", "namespace": "ns", "creationTimestamp": null, "labels": {"hold": "yes"}}}
    }))
    .unwrap()
}

#[tokio::test]
async fn serves_discovery_and_hooks_over_h2_and_http1_without_content_type() {
    let server = TestServer::start(extension(), |_| {}).await;
    let client = server.client();
    for proto in [Proto::H2, Proto::H1] {
        let discovery = client.post(proto, &format!("{BASE}/discovery"), r#"{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}"#).await.unwrap();
        assert_eq!(
            discovery.alpn.as_deref(),
            Some(if proto == Proto::H2 {
                &b"h2"[..]
            } else {
                &b"http/1.1"[..]
            })
        );
        assert_eq!(discovery.status, 200);
        assert_eq!(discovery.content_type.as_deref(), Some("application/json"));
        assert_eq!(
            discovery.body["handlers"],
            json!([
                {"name": "before-cluster-create", "requestHook": {"apiVersion": API_VERSION, "hook": "BeforeClusterCreate"}, "timeoutSeconds": 5, "failurePolicy": "Fail"},
                {"name": "before-cluster-delete", "requestHook": {"apiVersion": API_VERSION, "hook": "BeforeClusterDelete"}, "timeoutSeconds": 10, "failurePolicy": "Ignore"}
            ])
        );
        let answer = client
            .post(
                proto,
                &format!("{BASE}/beforeclustercreate/before-cluster-create?timeout=10s"),
                create_body(json!({})),
            )
            .await
            .unwrap();
        assert_eq!(answer.status, 200);
        assert_eq!(answer.body["status"], "Success");
        assert_eq!(answer.body["retryAfterSeconds"], 20);
        assert_eq!(answer.body["message"], "held");
    }
}

#[tokio::test]
async fn handler_errors_and_panics_answer_failure_and_the_server_keeps_serving() {
    let server = TestServer::start(extension(), |_| {}).await;
    let client = server.client();
    let path = format!("{BASE}/beforeclusterdelete/before-cluster-delete");
    let body = |settings| {
        serde_json::to_vec(&json!({"kind": "BeforeClusterDeleteRequest", "settings": settings, "cluster": {"metadata": {"name": "c1", "namespace": "ns"}}})).unwrap()
    };
    let err = client
        .post(Proto::H2, &path, body(json!({})))
        .await
        .unwrap();
    assert_eq!(
        (
            err.status,
            err.body["status"].as_str(),
            err.body["message"].as_str()
        ),
        (200, Some("Failure"), Some("backup of ns/c1 failed"))
    );
    assert_eq!(err.body["retryAfterSeconds"], 0);
    let panic = client
        .post(Proto::H2, &path, body(json!({"panic": "1"})))
        .await
        .unwrap();
    assert_eq!(panic.status, 200);
    assert_eq!(panic.body["status"], "Failure");
    assert_eq!(
        panic.body["message"],
        "handler before-cluster-delete panicked: boom in c1"
    );
    let after = client
        .post(Proto::H1, &format!("{BASE}/discovery"), "{}")
        .await
        .unwrap();
    assert_eq!(after.status, 200, "server still serves after a panic");
}

#[tokio::test]
async fn bad_inputs_get_clear_answers() {
    let server = TestServer::start(extension(), |o| {
        o.max_request_body_bytes = 1024;
        o.body_read_timeout = Duration::from_millis(300);
    })
    .await;
    let client = server.client();
    let hook = format!("{BASE}/beforeclustercreate/before-cluster-create");

    let malformed = client.post(Proto::H2, &hook, "{not json").await.unwrap();
    assert_eq!(malformed.status, 400);
    let message = malformed.body["message"].as_str().unwrap();
    assert!(message.starts_with("error unmarshalling BeforeClusterCreateRequest: key must be a string at line 1 column 2"), "{message}");

    let wrong_kind = client
        .post(Proto::H2, &hook, r#"{"kind":"BeforeClusterDeleteRequest"}"#)
        .await
        .unwrap();
    assert_eq!(wrong_kind.status, 400);
    assert!(
        wrong_kind.body["message"].as_str().unwrap().contains(
            "kind is `BeforeClusterDeleteRequest`, expected `BeforeClusterCreateRequest`"
        )
    );

    let wrong_version = client
        .post(
            Proto::H2,
            &hook,
            r#"{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha2"}"#,
        )
        .await
        .unwrap();
    assert_eq!(wrong_version.status, 400);
    assert!(
        wrong_version.body["message"]
            .as_str()
            .unwrap()
            .contains("apiVersion is `hooks.runtime.cluster.x-k8s.io/v1alpha2`")
    );

    let unknown = client
        .post(Proto::H1, &format!("{BASE}/beforeclustercreate/nope"), "{}")
        .await
        .unwrap();
    assert_eq!(unknown.status, 404);
    assert!(
        unknown.body["message"]
            .as_str()
            .unwrap()
            .contains("known: /hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery, ")
    );

    let big = client
        .post(Proto::H2, &hook, vec![b' '; 4096])
        .await
        .unwrap();
    assert_eq!(big.status, 413);
    assert!(
        big.body["message"]
            .as_str()
            .unwrap()
            .contains("limit of 1024 bytes")
    );

    let get_like = client
        .post(Proto::H1, &format!("{BASE}/discovery"), "")
        .await
        .unwrap();
    assert_eq!(get_like.status, 200, "an empty Discovery body is accepted");

    let ok = client
        .post(Proto::H2, &hook, create_body(json!({})))
        .await
        .unwrap();
    assert_eq!(ok.status, 200, "server still serves after bad input");
}

#[tokio::test]
async fn deadline_from_timeout_query_answers_failure() {
    let server = TestServer::start(extension(), |_| {}).await;
    let answer = server
        .client()
        .post(
            Proto::H2,
            &format!("{BASE}/beforeclustercreate/before-cluster-create?timeout=200ms"),
            create_body(json!({"sleepMillis": "3000"})),
        )
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body["status"], "Failure");
    assert_eq!(
        answer.body["message"],
        "handler before-cluster-create did not answer within 0.2s"
    );
}

#[tokio::test]
async fn path_prefix_is_honoured() {
    let server = TestServer::start(extension(), |o| o.path_prefix = "/ext/".into()).await;
    let answer = server
        .client()
        .post(Proto::H2, &format!("/ext{BASE}/discovery"), "{}")
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body["status"], "Success");
}

#[tokio::test]
async fn record_requests_dir_is_made_at_the_start_or_the_start_fails_naming_it() {
    let parent = support::temp_dir("record-new");
    let dir = parent.join("not/yet");
    let server =
        TestServer::start(extension(), |o| o.record_requests_dir = Some(dir.clone())).await;
    let path = format!("{BASE}/beforeclustercreate/before-cluster-create");
    let body = create_body(json!({"n": "1"}));
    let answer = server.client().post(Proto::H2, &path, body.clone()).await;
    assert_eq!(answer.unwrap().status, 200);
    assert_eq!(
        std::fs::read(dir.join("BeforeClusterCreate-before-cluster-create.json")).unwrap(),
        body
    );
    // Under a file, no directory can be made: the server does not start.
    let file = parent.join("a-file");
    std::fs::write(&file, "").unwrap();
    let certs = capi_ext::dev_certs::DevCerts::generate(&[]).unwrap();
    let cert_dir = support::temp_dir("record-certs");
    std::fs::write(cert_dir.join("tls.crt"), &certs.cert_pem).unwrap();
    std::fs::write(cert_dir.join("tls.key"), &certs.key_pem).unwrap();
    let mut options = capi_ext::ServerOptions::local(&cert_dir);
    options.record_requests_dir = Some(file.join("requests"));
    let err = match capi_ext::Server::bind(extension(), options).await {
        Ok(_) => panic!("the server started with a record directory under a file"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.starts_with("cannot create --record-requests-dir ") && err.contains("a-file/requests"),
        "{err}"
    );
    std::fs::remove_dir_all(&parent).ok();
    std::fs::remove_dir_all(&cert_dir).ok();
}

#[tokio::test]
async fn record_requests_dir_keeps_each_handlers_last_request_byte_for_byte() {
    let dir = support::temp_dir("record");
    let server =
        TestServer::start(extension(), |o| o.record_requests_dir = Some(dir.clone())).await;
    let client = server.client();
    let first = create_body(json!({"n": "1"}));
    // Not re-encoded: key order and spacing as the caller sent them.
    let second = b"{ \"kind\":\"BeforeClusterCreateRequest\", \"apiVersion\":\"hooks.runtime.cluster.x-k8s.io/v1alpha1\",\"cluster\":{\"metadata\":{\"name\":\"c2\"}} }".to_vec();
    for body in [first, second.clone()] {
        let path = format!("{BASE}/beforeclustercreate/before-cluster-create");
        assert_eq!(
            client.post(Proto::H2, &path, body).await.unwrap().status,
            200
        );
    }
    client
        .post(Proto::H1, &format!("{BASE}/discovery"), "{}")
        .await
        .unwrap();
    client
        .post(Proto::H2, &format!("{BASE}/nothing/here"), "{}")
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(dir.join("BeforeClusterCreate-before-cluster-create.json")).unwrap(),
        second
    );
    assert_eq!(std::fs::read(dir.join("Discovery.json")).unwrap(), b"{}");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "BeforeClusterCreate-before-cluster-create.json",
            "Discovery.json"
        ]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn stalled_clients_are_cut_off() {
    use tokio::io::AsyncWriteExt;
    let server = TestServer::start(extension(), |o| {
        o.tls_handshake_timeout = Duration::from_millis(300);
    })
    .await;
    // A client that connects and never starts the TLS handshake is disconnected.
    let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read(&mut tcp, &mut buf),
    )
    .await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "connection should be closed after the handshake timeout: {read:?}"
    );
    tcp.shutdown().await.ok();
    // And the server still serves.
    assert_eq!(
        server
            .client()
            .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
            .await
            .unwrap()
            .status,
        200
    );
}

/// A request body fed by a channel, to play a client that stalls mid-body.
struct ChannelBody(tokio::sync::mpsc::Receiver<hyper::body::Bytes>);

impl hyper::body::Body for ChannelBody {
    type Data = hyper::body::Bytes;
    type Error = std::convert::Infallible;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(hyper::body::Frame::data(b))))
    }
}

#[tokio::test]
async fn slow_request_body_times_out_with_408() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let server = TestServer::start(extension(), |o| {
        o.body_read_timeout = Duration::from_millis(300)
    })
    .await;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::pem::PemObject::pem_slice_iter(server.certs.ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(
            rustls_pki_types::ServerName::try_from("localhost").unwrap(),
            tcp,
        )
        .await
        .unwrap();
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .unwrap();
    tokio::spawn(conn);
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(hyper::body::Bytes::from_static(b"{\"kind\":"))
        .await
        .unwrap();
    let request = hyper::Request::post(format!(
        "https://localhost{BASE}/beforeclustercreate/before-cluster-create"
    ))
    .body(ChannelBody(rx))
    .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(5), send.send_request(request))
        .await
        .expect("answered")
        .unwrap();
    assert_eq!(response.status(), 408);
    drop(tx);
}

#[tokio::test]
async fn mtls_accepts_trusted_clients_and_rejects_others() {
    let dir = support::temp_dir("mtls-ca");
    let client_ca = capi_ext::dev_certs::DevCerts::generate(&[]).unwrap();
    let server = TestServer::start(extension(), |o| {
        std::fs::write(o.webhook_cert_dir.join("client-ca.crt"), &client_ca.ca_pem).unwrap();
        o.webhook_client_ca_name = Some("client-ca.crt".into());
    })
    .await;
    let (cert, key) = client_ca
        .sign_leaf("capi-controller-manager", &["capi"])
        .unwrap();
    let trusted = Client::new(server.addr, &server.certs.ca_pem, Some((&cert, &key)));
    assert_eq!(
        trusted
            .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
            .await
            .unwrap()
            .status,
        200
    );

    let anonymous = server.client();
    assert!(
        anonymous
            .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
            .await
            .is_err(),
        "a client without a certificate is rejected"
    );

    let stranger_ca = capi_ext::dev_certs::DevCerts::generate(&[]).unwrap();
    let (cert, key) = stranger_ca.sign_leaf("stranger", &["stranger"]).unwrap();
    let stranger = Client::new(server.addr, &server.certs.ca_pem, Some((&cert, &key)));
    assert!(
        stranger
            .post(Proto::H1, &format!("{BASE}/discovery"), "{}")
            .await
            .is_err(),
        "a certificate from another CA is rejected"
    );
    support::wait_metric(
        server.admin[0],
        r#"capi_ext_tls_handshake_failures_total{reason="error"}"#,
        |n| n == 2.0,
    )
    .await;
    std::fs::remove_dir_all(dir).ok();
}

/// The expiry gauge against openssl's own reading of the same certificate: `-checkend N` says
/// whether it expires within N seconds from now.
fn openssl_expires_within(cert: &std::path::Path, seconds: i64) -> bool {
    let out = std::process::Command::new("openssl")
        .args(["x509", "-noout", "-checkend", &seconds.to_string(), "-in"])
        .arg(cert)
        .output()
        .expect("openssl runs");
    !out.status.success()
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_expiry_and_reloads_are_measured() {
    let server = TestServer::start(extension(), |o| {
        o.cert_reload_interval = Duration::from_millis(50)
    })
    .await;
    let metrics = server.admin[0];
    const EXPIRY: &str = "capi_ext_certificate_expiration_timestamp_seconds";
    const RELOADED: &str = r#"capi_ext_certificate_reloads_total{result="success"}"#;
    const REFUSED: &str = r#"capi_ext_certificate_reloads_total{result="error"}"#;
    let first = support::wait_metric(metrics, EXPIRY, |v| v > 0.0).await as i64;
    let left = first - unix_now();
    let cert = server.dir.join("tls.crt");
    assert!(!openssl_expires_within(&cert, left - 5) && openssl_expires_within(&cert, left + 5));

    // Unusable files: counted once, however many times they are polled; the old one serves.
    capi_ext::dev_certs::write_atomic(&cert, b"not a certificate").unwrap();
    support::wait_metric(metrics, REFUSED, |n| n == 1.0).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(support::metric(metrics, REFUSED).await, Some(1.0));
    assert_eq!(support::metric(metrics, EXPIRY).await, Some(first as f64));
    assert_eq!(support::metric(metrics, RELOADED).await, Some(0.0));

    // A certificate openssl made, valid for 30 days: its notAfter becomes the gauge.
    let made = support::temp_dir("openssl");
    let status = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
        ])
        .args(["-subj", "/CN=localhost", "-days", "30", "-keyout"])
        .arg(made.join("tls.key"))
        .arg("-out")
        .arg(made.join("tls.crt"))
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    for name in ["tls.key", "tls.crt"] {
        let content = std::fs::read(made.join(name)).unwrap();
        capi_ext::dev_certs::write_atomic(&server.dir.join(name), &content).unwrap();
    }
    support::wait_metric(metrics, RELOADED, |n| n == 1.0).await;
    let now_in_use = support::metric(metrics, EXPIRY).await.unwrap() as i64;
    let left = now_in_use - unix_now();
    assert!((29 * 86_400..=30 * 86_400 + 60).contains(&left), "{left}");
    let cert = made.join("tls.crt");
    assert!(!openssl_expires_within(&cert, left - 5) && openssl_expires_within(&cert, left + 5));
    std::fs::remove_dir_all(made).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_certificate_is_picked_up_under_load_without_failed_requests() {
    let server = TestServer::start(extension(), |o| {
        o.cert_reload_interval = Duration::from_millis(100)
    })
    .await;
    let client = server.client();
    let first = client
        .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
        .await
        .unwrap()
        .peer_cert;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut load = Vec::new();
    for i in 0..4 {
        let (client, stop) = (client.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let (mut ok, mut certs) = (0, std::collections::HashSet::new());
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let proto = if i % 2 == 0 { Proto::H2 } else { Proto::H1 };
                let answer = client
                    .post(
                        proto,
                        &format!("{BASE}/beforeclustercreate/before-cluster-create"),
                        create_body(json!({})),
                    )
                    .await;
                let answer = answer.expect("no request fails during rotation");
                assert_eq!(answer.status, 200);
                certs.insert(answer.peer_cert);
                ok += 1;
            }
            (ok, certs)
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (cert, key) = server.certs.sign_leaf("rotated", &["localhost"]).unwrap();
    capi_ext::dev_certs::write_atomic(&server.dir.join("tls.key"), key.as_bytes()).unwrap();
    capi_ext::dev_certs::write_atomic(&server.dir.join("tls.crt"), cert.as_bytes()).unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut total = 0;
    let mut seen = std::collections::HashSet::new();
    for task in load {
        let (ok, certs) = task.await.unwrap();
        total += ok;
        seen.extend(certs);
    }
    assert!(total > 20, "load ran ({total} requests)");
    let now = client
        .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
        .await
        .unwrap()
        .peer_cert;
    assert_ne!(now, first, "new connections get the rotated certificate");
    assert!(
        seen.contains(&first) && seen.contains(&now),
        "both certificates served during the run"
    );
}

/// With the poll an hour apart, a rotated certificate is served at once: the directory is
/// watched. Both ways files change: written in place (atomically), and a Secret volume's swap of
/// its `..data` link, the way the kubelet updates mounted Secrets.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_certificate_is_served_at_once_without_waiting_for_the_poll() {
    let certs = capi_ext::dev_certs::DevCerts::generate(&[]).unwrap();
    let dir = std::env::temp_dir().join(format!("capi-ext-watch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // A Secret volume: <dir>/..v1/{tls.crt,tls.key}, <dir>/..data -> ..v1, tls.* -> ..data/tls.*.
    let version = |name: &str, cert: &str, key: &str| {
        let v = dir.join(name);
        std::fs::create_dir_all(&v).unwrap();
        std::fs::write(v.join("tls.crt"), cert).unwrap();
        std::fs::write(v.join("tls.key"), key).unwrap();
    };
    version("..v1", &certs.cert_pem, &certs.key_pem);
    std::os::unix::fs::symlink("..v1", dir.join("..data")).unwrap();
    for f in ["tls.crt", "tls.key"] {
        std::os::unix::fs::symlink(format!("..data/{f}"), dir.join(f)).unwrap();
    }
    let mut options = capi_ext::ServerOptions::local(&dir);
    options.cert_reload_interval = Duration::from_secs(3600);
    let bound = capi_ext::Server::bind(extension(), options).await.unwrap();
    let addr = bound.local_addr();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(bound.serve(async {
        let _ = rx.await;
    }));
    let client = support::Client::new(addr, &certs.ca_pem, None);
    let seen = || async {
        client
            .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
            .await
            .unwrap()
            .peer_cert
    };
    let first = seen().await;
    let within = |what: &'static str, old: Vec<u8>| {
        let seen = &seen;
        async move {
            let started = std::time::Instant::now();
            loop {
                let now = seen().await;
                if now != old {
                    return (now, started.elapsed());
                }
                assert!(
                    started.elapsed() < Duration::from_secs(3),
                    "{what}: still the old certificate after 3 s (the poll is an hour apart)"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    // The kubelet's way: a new version directory, then the `..data` link swapped atomically.
    let (cert, key) = certs.sign_leaf("rotated-1", &["localhost"]).unwrap();
    version("..v2", &cert, &key);
    std::os::unix::fs::symlink("..v2", dir.join("..data-new")).unwrap();
    std::fs::rename(dir.join("..data-new"), dir.join("..data")).unwrap();
    let (second, took) = within("a swapped ..data link", first).await;
    eprintln!("..data swap served after {took:?}");
    // Written in place, as cert-manager's csi driver or a script does.
    for f in ["tls.crt", "tls.key"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    let (cert, key) = certs.sign_leaf("rotated-2", &["localhost"]).unwrap();
    capi_ext::dev_certs::write_atomic(&dir.join("tls.key"), key.as_bytes()).unwrap();
    capi_ext::dev_certs::write_atomic(&dir.join("tls.crt"), cert.as_bytes()).unwrap();
    let (_, took) = within("files written in place", second).await;
    eprintln!("in-place write served after {took:?}");
    let _ = tx.send(());
    let _ = done.await;
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_in_flight_requests_and_stops_accepting() {
    let mut server = TestServer::start(extension(), |o| {
        o.shutdown_grace_period = Duration::from_secs(5)
    })
    .await;
    let client = server.client();
    let slow = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .post(
                    Proto::H2,
                    &format!("{BASE}/beforeclustercreate/before-cluster-create"),
                    create_body(json!({"sleepMillis": "800"})),
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.shutdown();
    let answer = slow
        .await
        .unwrap()
        .expect("the in-flight request completes");
    assert_eq!(
        (answer.status, answer.body["message"].as_str()),
        (200, Some("slept"))
    );
    tokio::time::timeout(Duration::from_secs(5), &mut server.done)
        .await
        .expect("server stops after draining")
        .unwrap();
    assert!(
        client
            .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
            .await
            .is_err(),
        "no new connections after shutdown"
    );
}

#[tokio::test]
async fn metrics_and_probes_on_plain_http() {
    let server = TestServer::start(extension(), |_| {}).await;
    server
        .client()
        .post(
            Proto::H2,
            &format!("{BASE}/beforeclustercreate/before-cluster-create"),
            create_body(json!({})),
        )
        .await
        .unwrap();
    server
        .client()
        .post(Proto::H2, &format!("{BASE}/nope"), "{}")
        .await
        .unwrap();
    let (metrics, probes) = (server.admin[0], server.admin[1]);
    let (code, text) = http_get(metrics, "/metrics").await;
    assert_eq!(code, 200);
    assert!(text.contains(r#"capi_ext_requests_total{hook="BeforeClusterCreate",handler="before-cluster-create",status="Success",code="200"} 1"#), "{text}");
    assert!(
        text.contains(
            r#"capi_ext_requests_total{hook="unknown",handler="",status="Error",code="404"} 1"#
        ),
        "{text}"
    );
    assert!(text.contains("capi_ext_request_duration_seconds_count{hook=\"BeforeClusterCreate\",handler=\"before-cluster-create\"} 1"), "{text}");
    assert!(text.contains("capi_ext_requests_in_flight 0"), "{text}");
    assert_eq!(http_get(probes, "/healthz").await, (200, "ok".into()));
    assert_eq!(http_get(probes, "/readyz").await, (200, "ok".into()));
    assert_eq!(http_get(probes, "/metrics").await.0, 404);
}

const CREATE: &str =
    "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/before-cluster-create";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_but_not_while_a_request_runs() {
    let server =
        TestServer::start(extension(), |o| o.idle_timeout = Duration::from_millis(300)).await;
    for proto in [Proto::H2, Proto::H1] {
        let mut conn = server.client().connect(proto).await.unwrap();
        // A request longer than the idle timeout keeps the connection.
        let slow = conn
            .post(CREATE, create_body(json!({"sleepMillis": "700"})))
            .await;
        assert!(matches!(slow, support::Outcome::Answered(200)), "{proto:?}");
        assert!(conn.is_open(), "{proto:?}: closed while a request ran");
        // Then, idle, it is closed.
        tokio::time::timeout(Duration::from_secs(3), &mut conn.closed)
            .await
            .unwrap_or_else(|_| panic!("{proto:?}: the idle connection stayed open"))
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_only_requests_in_flight_make_a_new_caller_wait() {
    let server = TestServer::start(extension(), |o| o.max_connections = 2).await;
    let client = server.client();
    let metrics = server.admin[0];
    assert_eq!(
        support::metric(metrics, "capi_ext_connections_max").await,
        Some(2.0)
    );
    // Two connections, each with a request in flight.
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut conn = client.connect(Proto::H2).await.unwrap();
        busy.push(tokio::spawn(async move {
            let outcome = conn
                .post(CREATE, create_body(json!({"sleepMillis": "1500"})))
                .await;
            (outcome, conn)
        }));
    }
    support::wait_metric(metrics, "capi_ext_requests_in_flight", |n| n >= 2.0).await;
    // A third connection is not served while both have a request in flight...
    let third = tokio::spawn({
        let client = client.clone();
        async move { client.post(Proto::H2, CREATE, create_body(json!({}))).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !third.is_finished(),
        "a third connection was served beyond the cap while both had a request in flight"
    );
    support::wait_metric(metrics, "capi_ext_connection_cap_reached_total", |n| {
        n >= 1.0
    })
    .await;
    // ...and is as soon as one of them is idle: the idle one is closed to make room, after its
    // request was answered.
    let answer = tokio::time::timeout(Duration::from_secs(5), third)
        .await
        .expect("the third caller still waits after the requests ended")
        .unwrap()
        .unwrap();
    assert_eq!(answer.status, 200);
    for request in busy {
        let (outcome, _) = request.await.unwrap();
        assert!(
            matches!(outcome, support::Outcome::Answered(200)),
            "{outcome:?}"
        );
    }
    assert_eq!(
        support::metric(
            metrics,
            r#"capi_ext_connections_evicted_total{reason="idle"}"#
        )
        .await,
        Some(1.0)
    );
}

/// The connection table full of keep-alive connections that made one request and of TLS
/// handshakes that never finish (each kind half the cap), with a request in flight on one more:
/// a new caller is answered at once over HTTP/2 and HTTP/1.1 (it waited for an idle timeout or a
/// handshake timeout before), and the request in flight completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_full_of_idle_and_stalled_connections_does_not_lock_a_new_caller_out() {
    const CAP: usize = 32;
    let server = TestServer::start(extension(), |o| o.max_connections = CAP).await;
    let client = server.client();
    let metrics = server.admin[0];
    let mut slow = client.connect(Proto::H2).await.unwrap();
    let in_flight = tokio::spawn(async move {
        slow.post(CREATE, create_body(json!({"sleepMillis": "2000"})))
            .await
    });
    support::wait_metric(metrics, "capi_ext_requests_in_flight", |n| n >= 1.0).await;
    let mut idle = Vec::new();
    for i in 0..CAP / 2 {
        let proto = if i % 2 == 0 { Proto::H2 } else { Proto::H1 };
        let mut conn = client.connect(proto).await.unwrap();
        assert!(matches!(
            conn.post(CREATE, create_body(json!({}))).await,
            support::Outcome::Answered(200)
        ));
        idle.push(conn);
    }
    // Connections that never send a ClientHello: their handshakes never finish.
    let mut stalled = Vec::new();
    for _ in 0..CAP / 2 {
        stalled.push(tokio::net::TcpStream::connect(server.addr).await.unwrap());
    }
    support::wait_metric(metrics, "capi_ext_connections_open", |n| n >= CAP as f64).await;
    for proto in [Proto::H2, Proto::H1] {
        let answer = tokio::time::timeout(
            Duration::from_secs(3),
            client.post(proto, CREATE, create_body(json!({}))),
        )
        .await
        .unwrap_or_else(|_| panic!("{proto:?}: a new caller was locked out by a full table"))
        .unwrap();
        assert_eq!(answer.status, 200, "{proto:?}");
    }
    let outcome = in_flight.await.unwrap();
    assert!(
        matches!(outcome, support::Outcome::Answered(200)),
        "the request in flight: {outcome:?}"
    );
    // The stalled handshakes went first, oldest first.
    let handshakes = support::metric(
        metrics,
        r#"capi_ext_connections_evicted_total{reason="handshake"}"#,
    )
    .await
    .unwrap();
    assert!(handshakes >= 2.0, "{handshakes} handshakes evicted");
    drop((idle, stalled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_under_load_cross_connection_ages_without_a_failed_request() {
    let server = TestServer::start(extension(), |o| {
        o.max_connection_age = Duration::from_millis(300)
    })
    .await;
    let client = server.client();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..4 {
        let (client, stop) = (client.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let (mut answered, mut connections) = (0, 1);
            let mut conn = client.connect(Proto::H2).await.unwrap();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                match conn
                    .post(CREATE, create_body(json!({"sleepMillis": "20"})))
                    .await
                {
                    support::Outcome::Answered(status) => {
                        assert_eq!(status, 200);
                        answered += 1;
                    }
                    // GOAWAY: the request never left; a new connection takes it.
                    support::Outcome::NotSent => {
                        conn = client.connect(Proto::H2).await.unwrap();
                        connections += 1;
                    }
                    support::Outcome::Failed(e) => panic!("a request was lost: {e}"),
                }
            }
            (answered, connections)
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for task in load {
        let (answered, connections) = task.await.unwrap();
        assert!(answered > 20, "{answered} requests answered");
        assert!(
            connections >= 4,
            "only {connections} connections in 2s with a 300ms maximum age"
        );
    }
}

/// The extension inside a server of the caller's own (here plain hyper over HTTP/1.1, no TLS):
/// the same answers as the built-in server, its errors included.
#[tokio::test]
async fn the_extension_serves_inside_a_server_of_ones_own() {
    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    let service = extension()
        .service()
        .path_prefix("/capi/")
        .max_request_body_bytes(4096);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let service = service.clone();
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
            );
        }
    });
    let call = |method: &'static str, path: String, body: Vec<u8>| async move {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .unwrap();
        tokio::spawn(connection);
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "x")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    };
    let (status, body) = call(
        "POST",
        format!("/capi{BASE}/beforeclustercreate/before-cluster-create"),
        create_body(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""retryAfterSeconds":20"#), "{body}");
    let (status, body) = call("POST", format!("/capi{BASE}/discovery"), b"{}".to_vec()).await;
    assert!(
        status == 200 && body.contains("before-cluster-delete"),
        "{body}"
    );
    let (status, _) = call("GET", format!("/capi{BASE}/discovery"), Vec::new()).await;
    assert_eq!(status, 405);
    let (status, body) = call("POST", format!("/capi{BASE}/nope/x"), b"{}".to_vec()).await;
    assert!(
        status == 404 && body.contains("no handler is registered"),
        "{body}"
    );
    let (status, _) = call("POST", format!("/capi{BASE}/discovery"), vec![b' '; 5000]).await;
    assert_eq!(status, 413);
}

/// `Server::bind_listener`: the hooks on a listener the caller bound, served until the
/// caller's shutdown future resolves.
#[tokio::test]
async fn the_server_serves_a_listener_the_caller_bound() {
    let certs = capi_ext::dev_certs::DevCerts::generate(&[]).unwrap();
    let dir = std::env::temp_dir().join(format!("capi-ext-listener-{}", std::process::id()));
    certs.write_to(&dir).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut options = capi_ext::ServerOptions::local(&dir);
    options.webhook_port = 1; // not used
    let bound = capi_ext::Server::bind_listener(listener, extension(), options)
        .await
        .unwrap();
    assert_eq!(bound.local_addr(), addr);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(bound.serve(async {
        let _ = rx.await;
    }));
    let client = Client::new(addr, &certs.ca_pem, None);
    let answer = client
        .post(Proto::H2, &format!("{BASE}/discovery"), "{}")
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    let _ = tx.send(());
    tokio::time::timeout(Duration::from_secs(10), done)
        .await
        .expect("stops when the caller's future resolves")
        .unwrap();
    std::fs::remove_dir_all(dir).ok();
}
