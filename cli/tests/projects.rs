//! Golden projects: scripted `capi-ext init` and `create hook` runs must produce exactly the
//! trees under testdata/projects/<case>/ (`BLESS=1` rewrites them; `scripts/bless.sh` does it
//! for every golden). `scripts/check-goldens.sh` builds and tests those projects in CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEP: &str = "../../../runtime";

/// Each case: its name and the commands that make it (run inside the project directory).
fn cases() -> Vec<(&'static str, Vec<Vec<&'static str>>)> {
    vec![
        (
            "minimal",
            vec![vec![
                "init",
                ".",
                "--name",
                "minimal",
                "--capi-ext-path",
                DEP,
            ]],
        ),
        (
            "every-hook",
            vec![vec![
                "init",
                ".",
                "--name",
                "every-hook",
                "--namespace",
                "capi-hooks",
                "--capi-ext-path",
                DEP,
                "--hooks",
                "BeforeClusterCreate,AfterControlPlaneInitialized,BeforeClusterUpgrade,BeforeControlPlaneUpgrade,\
                 AfterControlPlaneUpgrade,BeforeWorkersUpgrade,AfterWorkersUpgrade,AfterClusterUpgrade,BeforeClusterDelete,\
                 GeneratePatches,ValidateTopology,DiscoverVariables,CanUpdateMachine,CanUpdateMachineSet,UpdateMachine,\
                 GenerateUpgradePlan",
            ]],
        ),
        (
            // An extension that talks to clusters: kube-rs clients, RBAC from markers.
            "kube",
            vec![
                vec![
                    "init",
                    ".",
                    "--name",
                    "kube",
                    "--kube",
                    "--capi-ext-path",
                    DEP,
                    "--hooks",
                    "AfterControlPlaneInitialized",
                ],
                vec!["generate", "helm"],
            ],
        ),
        (
            "with-variables",
            vec![
                vec![
                    "init",
                    ".",
                    "--name",
                    "with-variables",
                    "--capi-version",
                    "1.13",
                    "--capi-ext-path",
                    DEP,
                    "--hooks",
                    "GeneratePatches,ValidateTopology",
                ],
                // Before the hooks below: `create hook` keeps the chart in step.
                vec!["generate", "helm"],
                vec![
                    "create",
                    "hook",
                    "BeforeClusterDelete",
                    "--timeout",
                    "5",
                    "--failure-policy",
                    "Ignore",
                ],
                vec![
                    "create",
                    "hook",
                    "AfterControlPlaneInitialized",
                    "--name",
                    "cp-ready",
                ],
                vec![
                    "create",
                    "patch",
                    "worker-labels",
                    "--target",
                    "machine-deployments",
                ],
                // A typed patch: capi-ext-types joins Cargo.toml.
                vec![
                    "create",
                    "patch",
                    "control-plane-labels",
                    "--target",
                    "control-plane",
                ],
                vec![
                    "create",
                    "hook",
                    "GeneratePatches",
                    "--next-version-of",
                    "generate-patches",
                ],
            ],
        ),
    ]
}

fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            // Made by building and running the project (check-goldens.sh checks them).
            // `.git`: init makes the project a repository (its contents are git's).
            if rel == "target"
                || rel == "Cargo.lock"
                || rel == "render/rendered.yaml"
                || rel == ".git"
            {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

/// Runs the CLI in `dir` (builds of projects go to the golden projects' target directory).
fn capi_ext(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_capi-ext"))
        .args(args)
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/golden"),
        )
        .output()
        .unwrap()
}

fn scaffold(case: &str, commands: &[Vec<&str>]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("capi-ext-golden-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for args in commands {
        let out = capi_ext(&dir, args);
        assert!(
            out.status.success(),
            "{case}: capi-ext {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dir
}

#[test]
fn scaffolds_match_the_golden_projects() {
    let goldens = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/projects");
    let mut problems = Vec::new();
    for (case, commands) in cases() {
        let made = scaffold(case, &commands);
        let golden = goldens.join(case);
        if std::env::var_os("BLESS").is_some() {
            // What only building the project makes is kept (check-goldens.sh checks it).
            let kept: Vec<(&str, Option<Vec<u8>>)> = ["Cargo.lock", "render/rendered.yaml"]
                .into_iter()
                .map(|rel| (rel, std::fs::read(golden.join(rel)).ok()))
                .collect();
            let _ = std::fs::remove_dir_all(&golden);
            std::fs::create_dir_all(&golden).unwrap();
            for (rel, content) in tree(&made) {
                let path = golden.join(&rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, content).unwrap();
            }
            for (rel, content) in kept {
                if let Some(content) = content {
                    std::fs::write(golden.join(rel), content).unwrap();
                }
            }
        }
        let (got, want) = (tree(&made), tree(&golden));
        for path in got
            .keys()
            .chain(want.keys())
            .collect::<std::collections::BTreeSet<_>>()
        {
            match (got.get(path), want.get(path)) {
                (Some(a), Some(b)) if a == b => {}
                (Some(_), Some(_)) => problems.push(format!("{case}/{path}: content differs")),
                (Some(_), None) => {
                    problems.push(format!("{case}/{path}: produced but not in the golden"))
                }
                (None, _) => {
                    problems.push(format!("{case}/{path}: in the golden but not produced"))
                }
            }
        }
        std::fs::remove_dir_all(made).unwrap();
    }
    assert!(
        problems.is_empty(),
        "golden projects differ (BLESS=1 to accept):\n{}",
        problems.join("\n")
    );
}

#[test]
fn refuses_non_empty_directories_and_bad_input() {
    let dir = std::env::temp_dir().join(format!("capi-ext-refuse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let run = |args: &[&str]| capi_ext(&dir, args);
    let out = run(&["init", ".", "--name", "x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not empty; pass --force"));
    let out = run(&["init", ".", "--name", "Bad_Name", "--force"]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--name: name `Bad_Name` is not a DNS-1123 label"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&[
        "init",
        ".",
        "--name",
        "x",
        "--force",
        "--capi-version",
        "1.11",
        "--hooks",
        "UpdateMachine",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("UpdateMachine was introduced in Cluster API 1.12")
    );
    let out = run(&["init", ".", "--name", "x", "--force", "--dry-run"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Would create src/main.rs"));
    assert!(!dir.join("src").exists(), "--dry-run writes nothing");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn check_reports_stale_files_with_a_diff_and_errors_name_file_and_line() {
    let dir = scaffold(
        "check",
        &[vec!["init", ".", "--name", "check", "--capi-ext-path", DEP]],
    );
    let run = |args: &[&str]| capi_ext(&dir, args);
    assert!(run(&["generate", "manifests", "--check"]).status.success());
    let hook = dir.join("src/hooks/before_cluster_create.rs");
    let text = std::fs::read_to_string(&hook).unwrap();
    std::fs::write(
        &hook,
        text.replace(
            "name = \"before-cluster-create\"",
            "name = \"hold\", timeout = 3",
        ),
    )
    .unwrap();
    let out = run(&["generate", "manifests", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("+#   hold.check: BeforeClusterCreate, timeout 3s, failurePolicy Fail"),
        "{diff}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("stale: config/extension/extensionconfig.yaml, docs/openapi.json")
    );
    std::fs::write(
        &hook,
        text.replace("#[hook(BeforeClusterCreate,", "#[hook(BeforeClusterCreat,"),
    )
    .unwrap();
    let out = run(&["generate", "manifests"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("src/hooks/before_cluster_create.rs:11:8: unknown hook `BeforeClusterCreat`; did you mean `BeforeClusterCreate`?"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_first_topology_hook_brings_render_inputs_without_clobbering() {
    let dir = std::env::temp_dir().join(format!("capi-ext-render-inputs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        let out = capi_ext(&dir, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "init",
        ".",
        "--name",
        "late",
        "--hooks",
        "BeforeClusterCreate",
    ]);
    assert!(
        !dir.join("render").exists(),
        "no topology hook, no render inputs"
    );
    std::fs::create_dir_all(dir.join("render")).unwrap();
    std::fs::write(dir.join("render/cluster.yaml"), "mine\n").unwrap();
    run(&["create", "hook", "GeneratePatches"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("render/cluster.yaml")).unwrap(),
        "mine\n"
    );
    let templates = std::fs::read_to_string(dir.join("render/templates.yaml")).unwrap();
    assert!(templates.contains("kind: GenericControlPlaneTemplate"));
    let class = std::fs::read_to_string(dir.join("render/clusterclass.yaml")).unwrap();
    assert!(
        class.contains("generatePatchesExtension: generate-patches.late"),
        "{class}"
    );
    run(&["create", "hook", "ValidateTopology"]);
    let class = std::fs::read_to_string(dir.join("render/clusterclass.yaml")).unwrap();
    assert!(
        class.contains("validateTopologyExtension: validate-topology.late"),
        "{class}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn create_patch_says_what_is_wrong() {
    let dir = scaffold(
        "patch-errors",
        &[vec!["init", ".", "--name", "p", "--capi-ext-path", DEP]],
    );
    let run = |args: &[&str]| {
        let out = capi_ext(&dir, args);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, err) = run(&["create", "patch", "labels"]);
    assert!(
        !ok && err.contains(
            "no GeneratePatches handler; add one with `capi-ext create hook GeneratePatches`"
        ),
        "{err}"
    );
    let (ok, err) = run(&["create", "hook", "GeneratePatches"]);
    assert!(ok, "{err}");
    assert!(
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap()
            .contains("capi-ext-render = { path = ")
    );
    assert!(
        std::fs::read_to_string(dir.join("src/main.rs"))
            .unwrap()
            .contains("mod hooks;\nmod patches;\nmod variables;\n")
    );
    let (ok, err) = run(&["create", "patch", "Labels"]);
    assert!(!ok && err.contains("NAME:"), "{err}");
    let (ok, err) = run(&["create", "patch", "image-repository"]);
    assert!(
        !ok && err.contains("src/patches/image_repository.rs already exists"),
        "{err}"
    );
    // Versions of the handler: only of a GeneratePatches handler that exists.
    let (ok, err) = run(&[
        "create",
        "hook",
        "ValidateTopology",
        "--next-version-of",
        "generate-patches",
    ]);
    assert!(
        !ok && err.contains("the hook must be GeneratePatches"),
        "{err}"
    );
    let (ok, err) = run(&[
        "create",
        "hook",
        "GeneratePatches",
        "--next-version-of",
        "nope",
    ]);
    assert!(
        !ok && err.contains("--next-version-of nope: no GeneratePatches handler of that name (the project has generate-patches)"),
        "{err}"
    );
    let (ok, err) = run(&[
        "create",
        "hook",
        "GeneratePatches",
        "--next-version-of",
        "generate-patches",
        "--dry-run",
    ]);
    assert!(
        ok && err.contains("src/hooks/generate_patches_v2.rs")
            && err.contains("render/generate-patches/clusterclass.yaml"),
        "{err}"
    );
    let (ok, err) = run(&["create", "patch", "labels", "--handler", "nope"]);
    assert!(!ok && err.contains("--handler nope: no GeneratePatches handler has this name; the project has generate-patches"), "{err}");
    let (ok, err) = run(&[
        "create",
        "patch",
        "labels",
        "--target",
        "infrastructure-cluster",
    ]);
    assert!(ok, "{err}");
    let handler = std::fs::read_to_string(dir.join("src/hooks/generate_patches.rs")).unwrap();
    assert!(handler.contains("patches::image_repository::patch(),\n        patches::labels::patch(),\n        // capi-ext:patches"), "{handler}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn schemars_variables_are_read_from_the_built_extension() {
    let dir = scaffold(
        "schemars",
        &[vec![
            "init",
            ".",
            "--name",
            "sch",
            "--capi-ext-path",
            DEP,
            "--hooks",
            "ValidateTopology",
        ]],
    );
    let cargo = std::fs::read_to_string(dir.join("Cargo.toml"))
        .unwrap()
        .replace(
            r#"capi-ext = { path = "../../../runtime" }"#,
            &format!(
                "capi-ext = {{ path = {:?}, features = [\"schemars\"] }}\nschemars = \"1\"",
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../runtime")
                    .display()
                    .to_string()
            ),
        );
    std::fs::write(dir.join("Cargo.toml"), cargo).unwrap();
    let variables = std::fs::read_to_string(dir.join("src/variables.rs")).unwrap().replace(
        "    pub image_repository: Option<String>,\n}",
        "    pub image_repository: Option<String>,\n    /// Taints of the workers.\n    #[schema(schemars)]\n    pub taints: Option<Vec<Taint>>,\n}\n\n/// A taint.\n#[derive(Debug, Deserialize, schemars::JsonSchema)]\npub struct Taint {\n    /// The key.\n    pub key: String,\n    pub seconds: Option<u32>,\n}",
    );
    assert!(
        variables.contains("schemars"),
        "the scaffolded variables changed: {variables}"
    );
    std::fs::write(dir.join("src/variables.rs"), variables).unwrap();
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/golden");
    let run = |args: &[&str]| capi_ext(&dir, args);
    let out = run(&["generate", "manifests"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("Building the extension to read the schemas of Variables.taints"),
        "{err}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("docs/openapi.json")).unwrap())
            .unwrap();
    let taints = &doc["components"]["schemas"]["variables.taints"];
    assert_eq!(taints["description"], "Taints of the workers.");
    assert_eq!(taints["items"]["required"], serde_json::json!(["key"]));
    assert_eq!(
        taints["items"]["properties"]["seconds"],
        serde_json::json!({"type": "integer", "minimum": 0})
    );
    assert!(run(&["generate", "manifests", "--check"]).status.success());
    // The scaffolded test compares docs/openapi.json with what the compiled code serves.
    let test = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["test", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(
        test.status.success(),
        "{}",
        String::from_utf8_lossy(&test.stderr)
    );
    std::fs::remove_dir_all(dir).unwrap();
}
