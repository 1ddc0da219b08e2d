//! `--record-requests-dir`: the last request body each handler received, kept as a file, so a
//! real caller's request (CAPI's, byte for byte) can be replayed with `capi-ext call -f` or
//! compared in tests. Files are written whole (a temporary file renamed into place), so a
//! reader never sees half a request.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The file that holds the last request of `hook`/`handler`: `<Hook>-<handler>.json`, or
/// `<Hook>.json` for handler-less hooks (Discovery).
pub fn file_name(hook: &str, handler: &str) -> String {
    if handler.is_empty() {
        format!("{hook}.json")
    } else {
        format!("{hook}-{handler}.json")
    }
}

/// Writes `body` as the last request of `hook`/`handler` under `dir`.
pub async fn record(
    dir: &Path,
    hook: &str,
    handler: &str,
    body: &[u8],
) -> std::io::Result<PathBuf> {
    let target = dir.join(file_name(hook, handler));
    let temp = dir.join(format!(
        ".{}.{}.{}.tmp",
        file_name(hook, handler),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    tokio::fs::write(&temp, body).await?;
    if let Err(e) = tokio::fs::rename(&temp, &target).await {
        let _ = tokio::fs::remove_file(&temp).await;
        return Err(e);
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_hook_and_handler() {
        assert_eq!(
            file_name("GeneratePatches", "patches"),
            "GeneratePatches-patches.json"
        );
        assert_eq!(file_name("Discovery", ""), "Discovery.json");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_last_request_wins_and_no_temporary_file_stays() {
        let dir = std::env::temp_dir().join(format!("capi-ext-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        record(&dir, "BeforeClusterCreate", "hold", b"{\"a\":1}")
            .await
            .unwrap();
        let path = record(&dir, "BeforeClusterCreate", "hold", b"{\"a\":2}")
            .await
            .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":2}");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["BeforeClusterCreate-hold.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
