//! `capi-ext call` and `verify` against a real TLS server (capi-ext's own, in this process):
//! what CAPI accepts, what it rejects, and clear errors for TLS and transport problems.

mod support;

use capi_ext::dev_certs::DevCerts;
use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, Registration};
use std::path::Path;
use std::process::Output;
use support::{cli, setup, text};

async fn create(_: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    BeforeClusterCreateResponse::success()
        .retry_after(5)
        .with_message("waiting")
}

async fn bad_patches(_: GeneratePatchesRequest) -> GeneratePatchesResponse {
    GeneratePatchesResponse::success().patch("not-a-request-uid", Patch::json())
}

async fn reject(_: ValidateTopologyRequest) -> ValidateTopologyResponse {
    ValidateTopologyResponse::failure("topology rejected")
}

async fn bad_variables(_: DiscoverVariablesRequest) -> DiscoverVariablesResponse {
    DiscoverVariablesResponse::success().variable(ClusterClassVariable::new(
        "builtin",
        true,
        JSONSchemaProps::string(),
    ))
}

/// Serves the test handlers on a free port with the given certificate; returns its URL.
fn serve(dir: &Path, cert: (&str, &str)) -> String {
    let extension = Extension::builder()
        .handler(Registration::new(BeforeClusterCreate, "create", create))
        .handler(Registration::new(GeneratePatches, "patches", bad_patches))
        .handler(Registration::new(ValidateTopology, "validate", reject))
        .handler(Registration::new(
            DiscoverVariables,
            "variables",
            bad_variables,
        ))
        .build()
        .unwrap();
    support::serve(dir, cert, extension)
}

/// `capi-ext call BeforeClusterCreate --handler create` against `url`, trusting `ca`.
fn call_create(url: &str, ca: &str) -> Output {
    cli(&[
        "call",
        "BeforeClusterCreate",
        "--handler",
        "create",
        "--url",
        url,
        "--ca",
        ca,
    ])
}

#[test]
fn judges_answers_by_capis_rules() {
    let (dir, certs) = setup("judge");
    let url = serve(&dir, (&certs.cert_pem, &certs.key_pem));
    let ca = dir.join("ca.crt");
    let ca = ca.to_str().unwrap();

    let ok = call_create(&url, ca);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok));
    assert!(
        text(&ok).contains(r#""retryAfterSeconds":5"#) && text(&ok).contains("over HTTP/2"),
        "{}",
        text(&ok)
    );

    let failure = cli(&[
        "call",
        "ValidateTopology",
        "--handler",
        "validate",
        "--url",
        &url,
        "--ca",
        ca,
    ]);
    assert_eq!(failure.status.code(), Some(1), "{}", text(&failure));
    assert!(
        text(&failure)
            .contains("CAPI accepts the answer and fails the reconcile: topology rejected")
    );

    let bad = cli(&[
        "call",
        "GeneratePatches",
        "--handler",
        "patches",
        "--url",
        &url,
        "--ca",
        ca,
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        text(&bad).contains("patch for uid `not-a-request-uid`, which is not in the request"),
        "{}",
        text(&bad)
    );

    let missing = cli(&[
        "call",
        "GeneratePatches",
        "--handler",
        "nope",
        "--url",
        &url,
        "--ca",
        ca,
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing).contains("rejected: HTTP 404"),
        "{}",
        text(&missing)
    );

    let verify = cli(&["verify", "--url", &url, "--ca", ca]);
    assert_eq!(verify.status.code(), Some(2), "{}", text(&verify));
    let out = text(&verify);
    assert!(
        out.contains("Discovery: accepted (4 handlers, HTTP/2)"),
        "{out}"
    );
    assert!(
        out.contains("create (BeforeClusterCreate): accepted, Success: waiting"),
        "{out}"
    );
    assert!(
        out.contains("variables (DiscoverVariables): rejected: `builtin` is reserved"),
        "{out}"
    );

    let wrong_kind = dir.join("req.json");
    std::fs::write(&wrong_kind, r#"{"kind":"ValidateTopologyRequest"}"#).unwrap();
    let wrong = cli(&[
        "call",
        "GeneratePatches",
        "--handler",
        "patches",
        "--url",
        &url,
        "--ca",
        ca,
        "-f",
        wrong_kind.to_str().unwrap(),
    ]);
    assert!(
        text(&wrong)
            .contains("the request is a ValidateTopologyRequest, not a GeneratePatchesRequest"),
        "{}",
        text(&wrong)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn explains_tls_and_transport_failures() {
    let (dir, certs) = setup("tls");
    let (cert, key) = certs
        .sign_leaf("elsewhere", &["elsewhere.example"])
        .unwrap();
    let url = serve(&dir, (&cert, &key));
    let ca = dir.join("ca.crt");
    let wrong_san = call_create(&url, ca.to_str().unwrap());
    assert_eq!(wrong_san.status.code(), Some(2));
    assert!(
        text(&wrong_san)
            .contains("is not valid for `127.0.0.1`: CAPI checks the SAN against the URL's host"),
        "{}",
        text(&wrong_san)
    );
    let other = DevCerts::generate(&[]).unwrap();
    std::fs::write(dir.join("other-ca.crt"), &other.ca_pem).unwrap();
    let wrong_ca = call_create(&url, dir.join("other-ca.crt").to_str().unwrap());
    assert_eq!(wrong_ca.status.code(), Some(2));
    assert!(
        text(&wrong_ca).contains("not signed by the CA given with --ca"),
        "{}",
        text(&wrong_ca)
    );

    let closed = call_create("https://127.0.0.1:1", ca.to_str().unwrap());
    assert!(
        text(&closed).contains("cannot reach 127.0.0.1:1"),
        "{}",
        text(&closed)
    );
    let http = call_create("http://127.0.0.1:1", ca.to_str().unwrap());
    assert!(
        text(&http).contains("--url must start with https://"),
        "{}",
        text(&http)
    );
    let no_handler = cli(&[
        "call",
        "BeforeClusterCreate",
        "--url",
        &url,
        "--ca",
        ca.to_str().unwrap(),
    ]);
    assert!(
        text(&no_handler).contains("--handler is required for BeforeClusterCreate"),
        "{}",
        text(&no_handler)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

static ATTEMPTS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

#[test]
fn verify_names_what_would_make_capi_churn() {
    let (dir, certs) = setup("verify-churn");
    let extension = Extension::builder()
        .handler(Registration::new(
            BeforeClusterCreate,
            "counting",
            |_: BeforeClusterCreateRequest| async {
                let n = ATTEMPTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                BeforeClusterCreateResponse::success()
                    .retry_after(5)
                    .with_message(format!("attempt {n}"))
            },
        ))
        .handler(Registration::new(
            BeforeClusterDelete,
            "stamped",
            |_: BeforeClusterDeleteRequest| async {
                BeforeClusterDeleteResponse::success()
                    .retry_after(5)
                    .with_message("held since 2026-11-30T10:00:00Z")
            },
        ))
        .handler(Registration::new(
            GeneratePatches,
            "first-only",
            |req: GeneratePatchesRequest| async move {
                let first = req.items[0].uid.clone();
                GeneratePatchesResponse::success()
                    .patch(first, Patch::json().add("/spec/template/spec/first", true))
            },
        ))
        .handler(Registration::new(
            ValidateTopology,
            "steady",
            |_: ValidateTopologyRequest| async { ValidateTopologyResponse::success() },
        ))
        .build()
        .unwrap();
    let url = support::serve(&dir, (&certs.cert_pem, &certs.key_pem), extension);
    let ca = dir.join("ca.crt");
    let verify = cli(&["verify", "--url", &url, "--ca", ca.to_str().unwrap()]);
    assert_eq!(verify.status.code(), Some(2), "{}", text(&verify));
    let out = text(&verify);
    for expected in [
        "counting (BeforeClusterCreate): accepted, but CAPI would churn: not deterministic: the same request changed /message from \"attempt 0\" to \"attempt 1\"",
        "stamped (BeforeClusterDelete): accepted, but CAPI would churn: the message holds a timestamp (`2026-11-30T10:00`)",
        "first-only (GeneratePatches): accepted, but CAPI would churn: not deterministic: with the items in reverse order the patch of item",
        "steady (ValidateTopology): accepted, Success",
    ] {
        assert!(out.contains(expected), "{expected}\n{out}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
