//! `capi-ext generate manifests` on a project with 100 handlers and 50 variable structs
//! (goal: ≤ 50 ms for the whole command). Measures the static read + render in-process, and
//! the command end to end (`--check`, so the tree is not rewritten between runs).
//!
//! Run with `make bench` or `cargo bench -p capi-ext-cli --bench generate`.

use capi_ext_cli::ops::{generate, project};
use criterion::{Criterion, criterion_main};
use std::path::Path;
use std::process::Command;

const HOOKS: [&str; 8] = [
    "BeforeClusterCreate",
    "AfterControlPlaneInitialized",
    "BeforeClusterUpgrade",
    "AfterControlPlaneUpgrade",
    "AfterClusterUpgrade",
    "BeforeClusterDelete",
    "GeneratePatches",
    "ValidateTopology",
];

/// Writes a project: 100 handlers over 10 files, 50 Schema structs and a Variables type using them.
fn write_project(root: &Path) {
    std::fs::create_dir_all(root.join("src/hooks")).unwrap();
    std::fs::write(
        root.join(project::METADATA_FILE),
        "[project]\nname = \"big\"\nnamespace = \"big-system\"\ncapi-version = \"1.14\"\ncli-version = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() { let _ = capi_ext::Extension::builder().variables::<V>(\"vars\"); }\n",
    )
    .unwrap();
    for file in 0..10 {
        let mut text = String::from("use capi_ext::hooks::v1alpha1::*;\n");
        for i in 0..10 {
            let n = file * 10 + i;
            let hook = HOOKS[n % HOOKS.len()];
            text.push_str(&format!(
                "/// Handler {n}.\n#[capi_ext::hook({hook}, name = \"h-{n}\", timeout = {t})]\npub async fn h_{n}(req: {hook}Request) -> {hook}Response {{\n    let _ = req;\n    {hook}Response::success()\n}}\n\n",
                t = n % 30
            ));
        }
        std::fs::write(root.join(format!("src/hooks/h{file}.rs")), text).unwrap();
    }
    let mut vars =
        String::from("#[derive(serde::Deserialize, capi_ext::Variables)]\npub struct V {\n");
    let mut structs = String::new();
    for s in 0..50 {
        vars.push_str(&format!(
            "    /// Variable {s}.\n    pub var_{s}: Option<S{s}>,\n"
        ));
        structs.push_str(&format!(
            "/// Struct {s}.\n#[derive(serde::Deserialize, capi_ext::Schema)]\n#[serde(rename_all = \"camelCase\")]\npub struct S{s} {{\n    /// Name.\n    #[schema(min_length = 1, pattern = \"^[a-z]+$\")]\n    pub name: String,\n    #[schema(minimum = 0, maximum = 10)]\n    pub replicas: u32,\n    pub labels: std::collections::BTreeMap<String, String>,\n    #[schema(validation(rule = \"self.size() <= 5\", message = \"too many\"))]\n    pub zones: Vec<String>,\n}}\n\n"
        ));
    }
    vars.push_str("}\n\n");
    std::fs::write(root.join("src/variables.rs"), vars + &structs).unwrap();
}

fn bench(c: &mut Criterion) {
    let root = std::env::temp_dir().join(format!("capi-ext-bench-generate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    write_project(&root);
    let meta = project::Metadata::read(&root).unwrap();
    let files = generate::files(&root, &meta, generate::Scope::All).unwrap();
    capi_ext_cli::ops::files::apply(&root, &files, false, false).unwrap();
    c.bench_function(
        "generate/static_read_and_render_100_handlers_50_structs",
        |b| b.iter(|| generate::files(&root, &meta, generate::Scope::All).unwrap()),
    );
    let cli = env!("CARGO_BIN_EXE_capi-ext");
    c.bench_function("generate/command_check_100_handlers_50_structs", |b| {
        b.iter(|| {
            let out = Command::new(cli)
                .args(["generate", "manifests", "--check"])
                .current_dir(&root)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        })
    });
    std::fs::remove_dir_all(&root).unwrap();
}

#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
