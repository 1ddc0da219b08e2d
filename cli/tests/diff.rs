//! `capi-ext diff` between two running extensions (served over TLS in this process), over the
//! quickstart's render/ Cluster: what changes, what CAPI does with it, and the exit codes. The
//! git-revision side (a worktree built with cargo) runs in scripts/first-run.sh.

mod support;

use capi_ext::Extension;
use capi_ext::hooks::v1alpha1::*;
use capi_ext_example_quickstart::QuickstartVariables;
use support::{cli, setup, text};

const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/quickstart/render");

/// A version of an extension serving the quickstart ClusterClass's handlers: the architecture
/// of MachineDeployment machines, the region of the infrastructure cluster, and whether
/// ValidateTopology refuses.
#[derive(Clone, Copy)]
struct Version {
    arch: &'static str,
    region: &'static str,
    refuse: bool,
    /// A label on the MachineDeployment's infrastructure template itself.
    label: bool,
}

const V1: Version = Version {
    arch: "amd64",
    region: "eu-west-1",
    refuse: false,
    label: false,
};

fn extension(v: Version) -> Extension {
    Extension::builder()
        .variables::<QuickstartVariables>("variables")
        .handler(capi_ext::Registration::new(
            GeneratePatches,
            "patches",
            move |req: GeneratePatchesRequest| async move {
                let mut response = GeneratePatchesResponse::success();
                for item in &req.items {
                    let patch = match item.object.get("kind").and_then(|k| k.as_str()) {
                        Some("GenericInfrastructureMachineTemplate")
                            if item.holder_reference.kind == "MachineDeployment" =>
                        {
                            let patch = Patch::json().add("/spec/template/spec/arch", v.arch);
                            if v.label {
                                patch.add("/metadata/labels", serde_json::json!({"tier": "gold"}))
                            } else {
                                patch
                            }
                        }
                        Some("GenericInfrastructureClusterTemplate") => {
                            Patch::json().add("/spec/template/spec/region", v.region)
                        }
                        _ => continue,
                    };
                    response = response.patch(&item.uid, patch);
                }
                response
            },
        ))
        .handler(capi_ext::Registration::new(
            ValidateTopology,
            "validate",
            move |_: ValidateTopologyRequest| async move {
                if v.refuse {
                    ValidateTopologyResponse::failure("workers must not run on arm64")
                } else {
                    ValidateTopologyResponse::success()
                }
            },
        ))
        .build()
        .unwrap()
}

fn diff(base: Version, head: Version, extra: &[&str]) -> std::process::Output {
    // A folder per call: tests run in parallel, and two sharing one would overwrite each
    // other's certificates (a test then saw a CA that did not sign its server).
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let (dir, certs) = setup(&format!("diff-call-{call}"));
    let cert = (certs.cert_pem.as_str(), certs.key_pem.as_str());
    let base_dir = dir.join("base");
    let head_dir = dir.join("head");
    std::fs::create_dir_all(&base_dir).unwrap();
    std::fs::create_dir_all(&head_dir).unwrap();
    let base_url = support::serve(&base_dir, cert, extension(base));
    let head_url = support::serve(&head_dir, cert, extension(head));
    let ca = dir.join("ca.crt");
    let ca = ca.to_str().unwrap();
    let mut args = vec![
        "diff",
        "--base",
        &base_url,
        "--base-ca",
        ca,
        "--head",
        &head_url,
        "--head-ca",
        ca,
        "--cases",
        CASES,
    ];
    args.extend_from_slice(extra);
    cli(&args)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_same_answers_change_nothing() {
    let out = diff(V1, V1, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    assert!(report.contains("Cluster default/demo ("), "{report}");
    assert!(report.contains("): unchanged"), "{report}");
    assert!(
        report.contains("Summary: 1 Cluster: 0 changed, 0 broken; Machines replaced in 0 Clusters"),
        "{report}"
    );
}

#[test]
fn a_machine_template_change_rolls_out_its_machine_deployment() {
    let arm = Version {
        arch: "arm64",
        ..V1
    };
    let out = diff(V1, arm, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = stdout(&out);
    for expected in [
        "1 object changes; Machines roll out: MachineDeployment md-0",
        "(MachineDeployment md-0's infrastructure template)",
        "its spec changed (spec.template.spec.arch): CAPI rotates the template and MachineDeployment md-0 rolls out",
        r#"    spec.template.spec.arch: "amd64" → "arm64""#,
        "Machines replaced in 1 Cluster: default/demo (MachineDeployment md-0)",
    ] {
        assert!(report.contains(expected), "{expected}\n{report}");
    }
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("say so with --allow-rollout"),
        "{}",
        text(&out)
    );
    let out = diff(V1, arm, &["--allow-rollout", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cluster = &json["clusters"][0];
    assert_eq!(cluster["outcome"], "changed");
    assert_eq!(cluster["rollout"], "yes");
    assert_eq!(cluster["rollsOut"][0], "MachineDeployment md-0");
    let object = &cluster["objects"][0];
    assert_eq!(object["kind"], "GenericInfrastructureMachineTemplate");
    assert_eq!(object["effect"], "template-rotated");
    assert_eq!(object["fields"][0]["path"], "spec.template.spec.arch");
    assert_eq!(object["fields"][0]["before"], "amd64");
    assert_eq!(object["fields"][0]["after"], "arm64");
}

#[test]
fn an_infrastructure_cluster_change_is_in_place() {
    let out = diff(
        V1,
        Version {
            region: "us-east-1",
            ..V1
        },
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("1 object changes; no Machine is replaced")
            && report.contains(
                "(the infrastructure cluster)\n    CAPI patches it in place, no Machine is replaced"
            )
            && report.contains(r#"spec.region: "eu-west-1" → "us-east-1""#),
        "{report}"
    );
}

#[test]
fn a_cluster_the_head_refuses_breaks() {
    let out = diff(V1, Version { refuse: true, ..V1 }, &["--allow-rollout"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("BREAKS: rendered with the base, fails with the head")
            && report.contains("answered Failure: workers must not run on arm64"),
        "{report}"
    );
}

#[test]
fn bad_input_exits_2_and_says_what_to_do() {
    let out = cli(&["diff", "--base", "https://127.0.0.1:1", "--cases", CASES]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--base-ca FILE"), "{}", text(&out));

    let (dir, _certs) = setup("diff-unreachable");
    let ca = dir.join("ca.crt");
    let ca = ca.to_str().unwrap();
    let out = cli(&[
        "diff",
        "--base",
        "https://127.0.0.1:1",
        "--base-ca",
        ca,
        "--head",
        "https://127.0.0.1:1",
        "--head-ca",
        ca,
        "--cases",
        CASES,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("https://127.0.0.1:1: Discovery failed"),
        "{}",
        text(&out)
    );

    let out = cli(&["diff", "--project", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("no capi-ext project or Cargo package"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_template_label_is_in_place_on_1_14_and_dropped_with_a_warning_before() {
    let labelled = Version { label: true, ..V1 };
    let out = diff(V1, labelled, &["--capi-version", "1.14"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report
            .contains("labels/annotations only: CAPI patches it in place, no Machine is replaced")
            && report.contains(r#"metadata.labels.tier: (absent) → "gold""#),
        "{report}"
    );
    let out = diff(V1, labelled, &["--capi-version", "1.13"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains("): unchanged")
            && report.contains("warning: Cluster default/demo: the patches set metadata.labels of GenericInfrastructureMachineTemplate")
            && report.contains("Cluster API 1.13 copies only spec.template.spec"),
        "{report}"
    );
}
