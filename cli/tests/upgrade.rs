//! `capi-ext upgrade` on a project made by capi-ext 0.1.0 (its templates frozen in
//! `templates/frozen/0.1.0/`), with user edits on top (`testdata/upgrade/with-variables-0.1.0`:
//! a target added to the Makefile, a section to the README, replicas changed, the namespace's
//! Pod Security level changed where the new template changes it too).
//!
//! The upgraded files are compared with `testdata/upgrade/with-variables-0.1.0.expected/`, which
//! holds every file the upgrade changes (`BLESS=1` rewrites it); every other file must be left
//! exactly as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/upgrade/with-variables-0.1.0")
}

fn tree(root: &Path) -> BTreeMap<String, String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap();
            (
                rel.to_string_lossy().replace('\\', "/"),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect()
}

/// A copy of the fixture at the same depth under the target directory, so that its path
/// dependencies (`../../../runtime`) still resolve to this checkout.
fn copy(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/upgrade-tests")
        .join(name)
        .join("with-variables-0.1.0");
    let _ = std::fs::remove_dir_all(&dir);
    for (rel, text) in tree(&fixture()) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn upgrade(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_capi-ext"))
        .arg("upgrade")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn upgrades_a_0_1_0_project_keeping_the_edits() {
    // The copy sits three levels below target/, as the fixture sits below the checkout.
    let dir = copy("merge");
    let before = tree(&dir);
    let (ok, err) = upgrade(&dir, &[]);
    assert!(!ok, "a conflict must fail the command:\n{err}");
    assert!(
        err.contains("config/default/namespace.yaml: CONFLICT: 1 place(s)"),
        "{err}"
    );
    assert!(err.contains("Makefile: merged with your edits"), "{err}");
    assert!(err.contains("README.md: merged with your edits"), "{err}");
    assert!(err.contains("1 conflict(s)"), "{err}");

    let after = tree(&dir);
    let changed: BTreeMap<String, String> = after
        .iter()
        .filter(|(path, text)| before.get(*path) != Some(*text))
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect();
    assert!(
        before.keys().all(|p| after.contains_key(p)),
        "the upgrade deleted files"
    );

    // What the merge must have kept and brought, whatever the goldens say.
    let makefile = &after["Makefile"];
    assert!(makefile.contains("lint:\n\tcargo clippy"), "{makefile}");
    assert!(
        makefile.contains("upgrade:\n\t$(CAPI_EXT) upgrade"),
        "{makefile}"
    );
    assert!(after["README.md"].contains("## Team notes"));
    assert!(after["README.md"].contains("scaffolded by capi-ext 0.2.0"));
    assert!(after["config/manager/deployment.yaml"].contains("replicas: 3"));
    let ns = &after["config/default/namespace.yaml"];
    assert!(
        ns.contains("<<<<<<< yours\n    pod-security.kubernetes.io/enforce: baseline\n"),
        "{ns}"
    );
    assert!(ns.contains(">>>>>>> capi-ext 0.2.0\n"), "{ns}");
    assert!(after["capi-ext.toml"].contains("cli-version = \"0.2.0\""));

    let expected_dir = fixture().with_file_name("with-variables-0.1.0.expected");
    if std::env::var_os("BLESS").is_some() {
        let _ = std::fs::remove_dir_all(&expected_dir);
        for (rel, text) in &changed {
            let path = expected_dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }
    let expected = tree(&expected_dir);
    for (path, text) in &expected {
        assert_eq!(
            changed.get(path),
            Some(text),
            "{path} differs from the golden (BLESS=1 regenerates it)"
        );
    }
    for path in changed.keys() {
        assert!(
            expected.contains_key(path),
            "{path} changed but the golden expects it untouched (BLESS=1 regenerates it)"
        );
    }

    // Resolved by the user (theirs kept), a second upgrade has nothing left to do.
    std::fs::write(
        dir.join("config/default/namespace.yaml"),
        before["config/default/namespace.yaml"].clone(),
    )
    .unwrap();
    let settled = tree(&dir);
    let (ok, err) = upgrade(&dir, &[]);
    assert!(ok, "{err}");
    assert_eq!(tree(&dir), settled, "a second upgrade changed files");
}

#[test]
fn a_clean_upgrade_succeeds_and_dry_run_writes_nothing() {
    let dir = copy("clean");
    // Without the namespace edit, nothing overlaps.
    let original = std::fs::read_to_string(dir.join("config/default/namespace.yaml"))
        .unwrap()
        .replace("enforce: baseline", "enforce: restricted");
    std::fs::write(dir.join("config/default/namespace.yaml"), original).unwrap();
    let before = tree(&dir);
    let (ok, err) = upgrade(&dir, &["--dry-run"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("config/default/namespace.yaml: updated (you had not edited it)"),
        "{err}"
    );
    assert!(err.contains("Would update Makefile"), "{err}");
    assert_eq!(tree(&dir), before, "--dry-run wrote files");
    let (ok, err) = upgrade(&dir, &[]);
    assert!(ok, "{err}");
    let ns = std::fs::read_to_string(dir.join("config/default/namespace.yaml")).unwrap();
    assert!(
        ns.contains("pod-security.kubernetes.io/warn: restricted"),
        "{ns}"
    );
}

#[test]
fn refuses_a_version_whose_templates_it_does_not_know() {
    let dir = copy("unknown");
    let meta = dir.join("capi-ext.toml");
    let text = std::fs::read_to_string(&meta)
        .unwrap()
        .replace("cli-version = \"0.1.0\"", "cli-version = \"0.0.7\"");
    std::fs::write(&meta, text).unwrap();
    let (ok, err) = upgrade(&dir, &[]);
    assert!(!ok);
    assert!(
        err.contains("cli-version 0.0.7: this capi-ext (0.2.0) knows the templates of 0.1.0 only"),
        "{err}"
    );
}
