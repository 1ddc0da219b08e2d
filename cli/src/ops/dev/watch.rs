//! What `capi-ext dev` watches to rebuild the extension: the project's sources.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The state of the sources: every watched file with its modification time and size. Two equal
/// snapshots mean nothing to rebuild.
#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot(Vec<(PathBuf, Option<SystemTime>, u64)>);

/// The files of `root` whose change needs a rebuild: `src/`, `build.rs`, `Cargo.toml`,
/// `Cargo.lock` (not `target/`, `render/` nor anything else cargo does not compile).
pub fn snapshot(root: &Path) -> Snapshot {
    let mut files = Vec::new();
    let tops = ["Cargo.toml", "Cargo.lock", "build.rs"].map(|f| root.join(f));
    let src = walkdir::WalkDir::new(root.join("src"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path());
    for path in tops.into_iter().chain(src) {
        if let Ok(meta) = std::fs::metadata(&path) {
            files.push((path, meta.modified().ok(), meta.len()));
        }
    }
    files.sort();
    Snapshot(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder removed when the test ends.
    struct Dir(PathBuf);
    impl Dir {
        fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn an_edit_of_a_source_changes_the_snapshot_and_target_does_not() {
        let dir = std::env::temp_dir().join(format!("capi-ext-watch-{}", std::process::id()));
        let dir = Dir(dir);
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "// one").unwrap();
        let before = snapshot(dir.path());
        std::fs::write(dir.path().join("target/out"), "built").unwrap();
        assert_eq!(before, snapshot(dir.path()));
        std::fs::write(dir.path().join("src/lib.rs"), "// two, longer").unwrap();
        assert_ne!(before, snapshot(dir.path()));
        std::fs::write(dir.path().join("src/new.rs"), "").unwrap();
        assert_ne!(snapshot(dir.path()), before);
    }
}
