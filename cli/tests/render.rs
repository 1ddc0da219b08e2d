//! `capi-ext render` against the quickstart extension served over TLS in this process, with the
//! quickstart's render/ files: the objects and the diff are goldens (`BLESS=1` rewrites them),
//! the requests it writes replay with `capi-ext call`, and bad input fails clearly. Then
//! `render --project` against a scaffolded project, built and started by the command itself.

mod support;

use std::path::Path;
use support::{cli, setup, text};

const RENDER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/quickstart/render");

fn render_args<'a>(url: &'a str, ca: &'a str, cluster: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "render",
        "--extension",
        url,
        "--ca",
        ca,
        "--cluster",
        cluster,
        "--clusterclass",
        &format!("{RENDER}/clusterclass.yaml"),
        "--templates",
        &format!("{RENDER}/templates.yaml"),
        "--extension-config",
        &format!("{RENDER}/extensionconfig.yaml"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String]) -> std::process::Output {
    cli(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(RENDER).join(name);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual,
        expected,
        "{} differs (BLESS=1 to accept)",
        path.display()
    );
}

#[test]
fn renders_the_quickstart_as_capi_would() {
    let (dir, certs) = setup("render");
    let extension = capi_ext_example_quickstart::extension().build().unwrap();
    let url = support::serve(&dir, (&certs.cert_pem, &certs.key_pem), extension);
    let ca = dir.join("ca.crt");
    let ca = ca.to_str().unwrap();
    let cluster = format!("{RENDER}/cluster.yaml");
    let requests = dir.join("requests");

    let out = run(&render_args(
        &url,
        ca,
        &cluster,
        &["--write-requests", requests.to_str().unwrap()],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    golden("rendered.yaml", &String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Called GeneratePatches `patches` for patch quickstart"),
        "{stderr}"
    );
    assert!(stderr.contains("Rendered 7 objects"), "{stderr}");

    // --output writes the same text; --check compares it and shows a difference as a diff.
    let kept = dir.join("kept/rendered.yaml");
    let kept_arg = kept.to_str().unwrap();
    let check = || {
        run(&render_args(
            &url,
            ca,
            &cluster,
            &["--output", kept_arg, "--check"],
        ))
    };
    let out = check();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("write it first without --check"),
        "{}",
        text(&out)
    );
    let out = run(&render_args(&url, ca, &cluster, &["--output", kept_arg]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(out.stdout.is_empty());
    golden("rendered.yaml", &std::fs::read_to_string(&kept).unwrap());
    let out = check();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let edited = std::fs::read_to_string(&kept)
        .unwrap()
        .replace("registry.example.com/k8s", "registry.example.com/old");
    std::fs::write(&kept, edited).unwrap();
    let out = check();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("-  imageRepository: registry.example.com/old")
            && diff.contains("+  imageRepository: registry.example.com/k8s"),
        "{diff}"
    );
    assert!(
        text(&out).contains("the render differs from"),
        "{}",
        text(&out)
    );

    let diff = run(&render_args(&url, ca, &cluster, &["--diff"]));
    assert_eq!(diff.status.code(), Some(0), "{}", text(&diff));
    golden("rendered.diff", &String::from_utf8_lossy(&diff.stdout));

    // What render sent is exactly a request CAPI would send: replay it.
    let request = requests.join("02-GeneratePatches-quickstart.request.json");
    let replay = cli(&[
        "call",
        "GeneratePatches",
        "--handler",
        "patches",
        "--url",
        &url,
        "--ca",
        ca,
        "-f",
        request.to_str().unwrap(),
    ]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay));
    assert_eq!(std::fs::read_dir(&requests).unwrap().count(), 6);

    // The Cluster's variables break the schema's CEL rule: the webhook's verdict, exit 1.
    let bad_cluster = dir.join("cluster.yaml");
    let original = std::fs::read_to_string(&cluster).unwrap();
    std::fs::write(
        &bad_cluster,
        original.replace("registry.example.com/k8s", "registry.example.com/"),
    )
    .unwrap();
    let out = run(&render_args(&url, ca, bad_cluster.to_str().unwrap(), &[]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains(r#"spec.topology.variables[imageRepository].value: Invalid value: "\"registry.example.com/\"": imageRepository must not end with '/'"#), "{}", text(&out));
    assert!(out.stdout.is_empty());

    // ValidateTopology rejects: exit 1 with the extension's message.
    std::fs::write(
        &bad_cluster,
        original.replace("registry.example.com/k8s", "docker.io/library"),
    )
    .unwrap();
    let out = run(&render_args(&url, ca, bad_cluster.to_str().unwrap(), &[]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("ValidateTopology `validate` (patch quickstart) answered Failure: imageRepository docker.io/library is on docker.io"), "{}", text(&out));

    // The wrong kind in a file, and an extension that is not there: exit 2, said plainly.
    let out = run(&render_args(
        &url,
        ca,
        &format!("{RENDER}/clusterclass.yaml"),
        &[],
    ));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("clusterclass.yaml: expected one Cluster, found ClusterClass"),
        "{}",
        text(&out)
    );
    let out = run(&render_args("https://127.0.0.1:1", ca, &cluster, &[]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out)
            .contains("DiscoverVariables `variables` (patch quickstart): cannot reach 127.0.0.1:1"),
        "{}",
        text(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn builds_and_starts_a_project_to_render_against() {
    // The project's own scaffolded render/ inputs.
    let project = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/projects/with-variables"
    );
    let dir = format!("{project}/render");
    // The golden projects' build directory, which scripts/check-goldens.sh shares.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("golden");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_capi-ext"))
        .env("CARGO_TARGET_DIR", &target)
        .args(["render", "--project", project, "--json"])
        .args([
            "--cluster",
            &format!("{dir}/cluster.yaml"),
            "--clusterclass",
            &format!("{dir}/clusterclass.yaml"),
        ])
        .args(["--templates", &format!("{dir}/templates.yaml")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let objects: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(objects["kind"], "List");
    assert_eq!(objects["items"][1]["kind"], "GenericControlPlane");
    assert_eq!(
        objects["items"][1]["spec"]["imageRepository"],
        "registry.example.com"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Started https://127.0.0.1:"), "{stderr}");
    assert!(
        stderr.contains("Called ValidateTopology `validate-topology` for patch with-variables"),
        "{stderr}"
    );
}

/// A ClusterClass of inline patches only (as CAPI's quick-start) renders without an extension;
/// one that calls an extension says it needs one.
#[test]
fn renders_a_class_of_inline_patches_without_an_extension() {
    let (dir, _certs) = setup("render-inline");
    let class = std::fs::read_to_string(format!("{RENDER}/clusterclass.yaml")).unwrap();
    let inline = class
        .split("  - name: quickstart\n    external:")
        .next()
        .unwrap();
    std::fs::write(dir.join("clusterclass.yaml"), inline).unwrap();
    let cluster = std::fs::read_to_string(format!("{RENDER}/cluster.yaml")).unwrap();
    let cluster = cluster.replace(
        "    - name: imageRepository\n      value: registry.example.com/k8s\n",
        "",
    );
    std::fs::write(dir.join("cluster.yaml"), cluster).unwrap();
    let templates = format!("{RENDER}/templates.yaml");
    let args = |class: &str| {
        vec![
            "render".to_string(),
            "--cluster".into(),
            dir.join("cluster.yaml").display().to_string(),
            "--clusterclass".into(),
            class.to_string(),
            "--templates".into(),
            templates.clone(),
        ]
    };
    let output = run(&args(&dir.join("clusterclass.yaml").display().to_string()));
    assert!(output.status.success(), "{}", text(&output));
    let objects = String::from_utf8_lossy(&output.stdout);
    assert!(objects.contains("name: demo-lb"), "{objects}");
    assert!(objects.contains("size: large"), "{objects}");

    let output = run(&args(&format!("{RENDER}/clusterclass.yaml")));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("the ClusterClass calls an extension: say where it is"),
        "{}",
        text(&output)
    );
}

/// A CRD of the quickstart's control plane template: `spec.template.spec` declares `etcd`, a
/// defaulted `defaulted`, and `imageRepository` only when asked.
fn control_plane_crd(with_image_repository: bool) -> String {
    let image_repository = if with_image_repository {
        "\n                      imageRepository: {type: string}"
    } else {
        ""
    };
    let object = |kind: &str, plural: &str, inner: &str| {
        format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {plural}.controlplane.cluster.x-k8s.io}}
spec:
  group: controlplane.cluster.x-k8s.io
  names: {{kind: {kind}, plural: {plural}}}
  scope: Namespaced
  versions:
  - name: v1beta2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
{inner}
"#
        )
    };
    let template = object(
        "GenericControlPlaneTemplate",
        "genericcontrolplanetemplates",
        &format!(
            r#"            properties:
              template:
                type: object
                properties:
                  metadata: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
                  spec:
                    type: object
                    properties:
                      etcd: {{type: string}}
                      defaulted: {{type: string, default: by-the-crd}}{image_repository}"#
        ),
    );
    let control_plane = object("GenericControlPlane", "genericcontrolplanes", "");
    format!("{template}---\n{control_plane}")
}

#[test]
fn applies_the_api_servers_rules_given_crds() {
    let (dir, certs) = setup("render-crds");
    let extension = capi_ext_example_quickstart::extension().build().unwrap();
    let url = support::serve(&dir, (&certs.cert_pem, &certs.key_pem), extension);
    let ca = dir.join("ca.crt");
    let cluster = format!("{RENDER}/cluster.yaml");
    let crds = dir.join("crds");
    std::fs::create_dir_all(&crds).unwrap();

    // The patch sets a field the CRD does not declare: a real API server prunes it silently.
    std::fs::write(crds.join("controlplane.yaml"), control_plane_crd(false)).unwrap();
    let out = run(&render_args(
        &url,
        ca.to_str().unwrap(),
        &cluster,
        &["--crds", crds.to_str().unwrap()],
    ));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("patch quickstart: GenericControlPlaneTemplate quickstart-control-plane gets the field /spec/template/spec/imageRepository that its CRD does not declare"),
        "{stderr}"
    );

    // Declared: the template as the API server stores it (its default) reaches the control
    // plane; kinds without a CRD are named.
    std::fs::write(crds.join("controlplane.yaml"), control_plane_crd(true)).unwrap();
    let out = run(&render_args(
        &url,
        ca.to_str().unwrap(),
        &cluster,
        &["--crds", crds.to_str().unwrap()],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let control_plane = stdout
        .split("---")
        .find(|d| d.contains("kind: GenericControlPlane\n"))
        .expect("a control plane");
    assert!(
        control_plane.contains("defaulted: by-the-crd"),
        "{control_plane}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no CRD of GenericInfrastructureCluster (infrastructure.cluster.x-k8s.io/v1beta2) at hand"),
        "{stderr}"
    );

    // A folder without CRDs is an error that says so.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(&render_args(
        &url,
        ca.to_str().unwrap(),
        &cluster,
        &["--crds", empty.to_str().unwrap()],
    ));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no CustomResourceDefinition in it"),
        "{}",
        text(&out)
    );
}

#[test]
fn sends_the_hooks_of_another_extension_config_where_extension_url_says() {
    use capi_ext::Registration;
    use capi_ext::hooks::v1alpha1::{BeforeClusterCreate, BeforeClusterCreateResponse};
    let (dir, certs) = setup("render-routes");
    // --url serves nothing the class calls; the quickstart extension is elsewhere.
    let unrelated = capi_ext::Extension::builder()
        .handler(Registration::new(BeforeClusterCreate, "hold", |_| async {
            BeforeClusterCreateResponse::success()
        }))
        .build()
        .unwrap();
    let url = support::serve(&dir, (&certs.cert_pem, &certs.key_pem), unrelated);
    let elsewhere_dir = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere_dir).unwrap();
    let quickstart = capi_ext_example_quickstart::extension().build().unwrap();
    let elsewhere = support::serve(
        &elsewhere_dir,
        (&certs.cert_pem, &certs.key_pem),
        quickstart,
    );
    // The quickstart's class, also naming an upgrade plan of another ExtensionConfig (not
    // called: no upgrade is due at creation).
    let class = std::fs::read_to_string(format!("{RENDER}/clusterclass.yaml")).unwrap();
    let class = class.replacen(
        "spec:\n",
        "spec:\n  upgrade:\n    external:\n      generateUpgradePlanExtension: plan.lifecycle\n",
        1,
    );
    let class_file = dir.join("clusterclass.yaml");
    std::fs::write(&class_file, class).unwrap();
    let ca = dir.join("ca.crt");
    let args = |extra: &[&str]| {
        let mut args = vec![
            "render".to_string(),
            "--extension".into(),
            url.clone(),
            "--ca".into(),
            ca.to_str().unwrap().into(),
            "--cluster".into(),
            format!("{RENDER}/cluster.yaml"),
            "--clusterclass".into(),
            class_file.to_str().unwrap().into(),
            "--templates".into(),
            format!("{RENDER}/templates.yaml"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };

    // Everything went to --url: not served there, and the hint names the ExtensionConfigs.
    let out = run(&args(&[]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("hint: the ClusterClass calls the ExtensionConfigs lifecycle, quickstart; the hooks of lifecycle, quickstart went to --url"),
        "{}",
        text(&out)
    );
    // Routed: the quickstart's hooks reach it, and the objects are the quickstart's.
    let routed = format!("quickstart={elsewhere}");
    let out = run(&args(&["--extension-url", &routed]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("registry.example.com/k8s"),
        "{}",
        text(&out)
    );
    // A bad entry is refused before anything is called.
    let out = run(&args(&["--extension-url", "quickstart"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("give NAME=URL"), "{}", text(&out));
}
