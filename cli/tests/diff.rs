//! `capi-ext diff` between two running extensions (served over TLS in this process), over the
//! quickstart's render/ Cluster: what changes, what CAPI does with it, and the exit codes. The
//! git-revision side (a worktree built with cargo) runs in scripts/first-run.sh.

mod support;

use capi_ext::Extension;
use capi_ext::hooks::v1alpha1::*;
use capi_ext_example_quickstart::QuickstartVariables;
use std::path::Path;
use support::{Scratch, cli, setup, text};

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
    /// The name of the GeneratePatches handler.
    patches: &'static str,
    /// A variable `tier` beside the quickstart's: `Some(required)`.
    tier: Option<bool>,
}

const V1: Version = Version {
    arch: "amd64",
    region: "eu-west-1",
    refuse: false,
    label: false,
    patches: "patches",
    tier: None,
};

/// The quickstart's variables (and `tier`, when the version has it), as DiscoverVariables
/// answers them.
fn variables(v: Version) -> capi_ext::Registration {
    capi_ext::Registration::new(
        DiscoverVariables,
        "variables",
        move |_: DiscoverVariablesRequest| async move {
            let mut definitions = <QuickstartVariables as capi_ext::Variables>::definitions_json();
            if let Some(required) = v.tier {
                definitions.push(serde_json::json!({
                    "name": "tier", "required": required,
                    "schema": {"openAPIV3Schema": {"type": "string"}},
                }));
            }
            let mut response = DiscoverVariablesResponse::success();
            for definition in definitions {
                response
                    .variables
                    .push(serde_json::from_value(definition).unwrap());
            }
            response
        },
    )
}

fn extension(v: Version) -> Extension {
    Extension::builder()
        .handler(variables(v))
        .handler(capi_ext::Registration::new(
            GeneratePatches,
            v.patches,
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
    diff_cases(base, head, CASES, extra)
}

/// A copy of the quickstart's render/ with `edit` applied to each file's text.
fn cases(tag: &str, edit: impl Fn(&str, String) -> String) -> Scratch {
    let dir = Scratch::new(&format!("diff-cases-{tag}"));
    for file in [
        "cluster.yaml",
        "clusterclass.yaml",
        "templates.yaml",
        "extensionconfig.yaml",
    ] {
        let text = std::fs::read_to_string(Path::new(CASES).join(file)).unwrap();
        std::fs::write(dir.join(file), edit(file, text)).unwrap();
    }
    dir
}

fn diff_cases(base: Version, head: Version, cases: &str, extra: &[&str]) -> std::process::Output {
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
        cases,
    ];
    args.extend_from_slice(extra);
    cli(&args)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts the exit code and that the report says each of `expected`.
fn says(out: &std::process::Output, code: i32, expected: &[&str]) {
    assert_eq!(out.status.code(), Some(code), "{}", text(out));
    let report = stdout(out);
    for expected in expected {
        assert!(report.contains(expected), "{expected}\n{report}");
    }
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
    says(
        &out,
        1,
        &[
            "1 object changes; Machines roll out: MachineDeployment md-0",
            "(MachineDeployment md-0's infrastructure template)",
            "its spec changed (spec.template.spec.arch): CAPI rotates the template and MachineDeployment md-0 rolls out",
            r#"    spec.template.spec.arch: "amd64" → "arm64""#,
            "Machines replaced in 1 Cluster: default/demo (MachineDeployment md-0)",
        ],
    );
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

#[test]
fn a_handler_the_head_no_longer_serves_breaks_the_clusters_whose_class_calls_it() {
    // The head renamed `patches` to `patches-v2` and pointed its own ClusterClass at it; the
    // ClusterClass deployed today still calls `patches`.
    let deployed = cases("renamed-base", |_, text| text);
    let edited = cases("renamed-head", |_, text| {
        text.replace("patches.quickstart", "patches-v2.quickstart")
    });
    let head = Version {
        patches: "patches-v2",
        ..V1
    };
    let out = diff_cases(
        V1,
        head,
        edited.to_str().unwrap(),
        &["--base-cases", deployed.to_str().unwrap()],
    );
    says(
        &out,
        1,
        &[
            "cluster.yaml): BREAKS: rendered with the base, fails with the head",
            "ClusterClass default/quickstart (patch quickstart) calls the GeneratePatches handler `patches`, which the head does not serve",
            "every Cluster of them stops reconciling once the head is deployed",
            "`capi-ext create hook GeneratePatches --next-version-of patches`",
            "cluster.yaml): changed; renders with the head",
            "Summary: 1 Cluster: 0 changed, 1 broken",
        ],
    );
    // The same two versions over the head's cases alone: the head's class calls a handler
    // only the head serves, which no Cluster runs yet.
    let out = diff_cases(V1, head, edited.to_str().unwrap(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(stdout(&out).contains("): new: its ClusterClass calls a handler only the head serves"));
}

#[test]
fn an_edited_case_does_not_hide_the_rollout_of_the_clusters_that_exist() {
    // The head rolls md-0 out and declares `tier`, which its own case now sets.
    let deployed = cases("rollout-base", |_, text| text);
    let edited = cases("rollout-head", |file, text| {
        if file == "cluster.yaml" {
            text.replace(
                "    - name: workerSize\n",
                "    - name: tier\n      value: gold\n    - name: workerSize\n",
            )
        } else {
            text
        }
    });
    assert!(
        std::fs::read_to_string(edited.join("cluster.yaml"))
            .unwrap()
            .contains("tier")
    );
    let head = Version {
        arch: "arm64",
        tier: Some(false),
        ..V1
    };
    let out = diff_cases(
        V1,
        head,
        edited.to_str().unwrap(),
        &["--base-cases", deployed.to_str().unwrap()],
    );
    says(
        &out,
        1,
        &[
            "1 object changes; Machines roll out: MachineDeployment md-0",
            "cluster.yaml): changed; renders with the head",
            "added `tier` (ClusterClass default/quickstart): new in the head (from quickstart), optional",
            "Machines replaced in 1 Cluster: default/demo (MachineDeployment md-0)",
        ],
    );
}

#[test]
fn an_edited_case_says_what_the_edit_does_by_capis_rules() {
    // The same extension; the Cluster's edit upgrades it, scales md-0 and adds md-1.
    let deployed = cases("edit-base", |_, text| text);
    let edited = cases("edit-head", |file, text| {
        if file == "cluster.yaml" {
            text.replace("version: v1.34.0", "version: v1.35.0")
                .replace(
                    "        replicas: 2\n",
                    "        replicas: 3\n      - class: default-worker\n        name: md-1\n",
                )
        } else {
            text
        }
    });
    assert!(
        std::fs::read_to_string(edited.join("cluster.yaml"))
            .unwrap()
            .contains("md-1")
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["--base-cases", deployed.to_str().unwrap()];
        args.extend_from_slice(extra);
        diff_cases(V1, V1, edited.to_str().unwrap(), &args)
    };
    let out = run(&[]);
    says(
        &out,
        1,
        &[
            "cluster.yaml): unchanged",
            "changed; renders with the head; what the edit does",
            "Machines roll out: the control plane, MachineDeployment md-0",
            "MachineDeployment demo-md-0-",
            "spec.template.spec.version: \"v1.34.0\" → \"v1.35.0\"",
            "spec.replicas: 2 → 3",
            "(MachineDeployment md-1)\n    CAPI creates it",
            "The edits of cases replace Machines (or may) in 1 Cluster: default/demo (the control plane, MachineDeployment md-0)",
        ],
    );
    let out = run(&["--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let input = &report["inputs"][0];
    assert_eq!(input["change"], "changed", "{report}");
    assert_eq!(input["rollout"], "yes");
    let effects: Vec<&str> = input["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["effect"].as_str().unwrap())
        .collect();
    assert!(
        effects.contains(&"machine-deployment-rollout"),
        "{effects:?}"
    );
    assert!(effects.contains(&"created"), "{effects:?}");
    assert_eq!(run(&["--allow-rollout"]).status.code(), Some(0));
}

#[test]
fn a_new_required_variable_breaks_the_clusters_that_do_not_set_it() {
    let head = Version {
        tier: Some(true),
        ..V1
    };
    let out = diff(V1, head, &[]);
    says(
        &out,
        1,
        &[
            "BREAKS: rendered with the base, fails with the head",
            r#"required variable "tier" must be set"#,
            "added `tier` (ClusterClass default/quickstart): new in the head (from quickstart), required and without a default",
            "    Clusters: default/demo",
        ],
    );
    let out = diff(V1, head, &["--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["variables"][0]["variable"], "tier");
    assert_eq!(json["variables"][0]["clusters"][0], "default/demo");
    assert_eq!(json["clusters"][0]["outcome"], "breaks");
}

#[test]
fn both_versions_call_an_extension_config_served_elsewhere_where_extension_url_says() {
    // The class's ValidateTopology is another ExtensionConfig's, which refuses every topology.
    let cases = cases("elsewhere", |file, text| {
        if file == "clusterclass.yaml" {
            text.replace("validate.quickstart", "validate.checks")
        } else {
            text
        }
    });
    let (dir, certs) = setup("diff-elsewhere");
    let checks = Extension::builder()
        .handler(capi_ext::Registration::new(
            ValidateTopology,
            "validate",
            |_: ValidateTopologyRequest| async {
                ValidateTopologyResponse::failure("checks refuses every topology")
            },
        ))
        .build()
        .unwrap();
    let checks_url = support::serve(&dir, (&certs.cert_pem, &certs.key_pem), checks);
    let checks_ca = dir.join("ca.crt");
    let routed = format!("checks={checks_url}");
    let routed_ca = format!("checks={}", checks_ca.display());
    let cases = cases.to_str().unwrap();

    // Without it both versions serve `validate` themselves and accept.
    let out = diff_cases(V1, V1, cases, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // With it both call the checks extension, which refuses: no version renders the Cluster.
    let out = diff_cases(
        V1,
        V1,
        cases,
        &["--extension-url", &routed, "--extension-ca", &routed_ca],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("checks refuses every topology"),
        "{}",
        text(&out)
    );
    // Its CA is required: the versions' own did not sign it.
    let out = diff_cases(V1, V1, cases, &["--extension-url", &routed]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("give its CA with --extension-ca checks=FILE"),
        "{}",
        text(&out)
    );
}
