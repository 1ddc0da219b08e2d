//! Files written whole or not at all: every file capi-ext writes (certificates, generated
//! files, snapshots) goes through [`write_atomic`].

use std::io::Write;
use std::path::Path;

/// Writes a file through a temporary hidden sibling (`.<name>.tmp<pid>`) and a rename, so a
/// reader never sees half of it and a failed write leaves the old file as it was.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("capi-ext-doc-atomic-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// capi_ext::fs::write_atomic(&dir.join("ca.crt"), b"pem")?;
/// assert_eq!(std::fs::read(dir.join("ca.crt"))?, b"pem");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    write_file_atomic(path, content, false)
}

/// [`write_atomic`], readable by its owner only when `private` (a key).
pub(crate) fn write_file_atomic(path: &Path, content: &[u8], private: bool) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let written = options.open(&tmp).and_then(|mut file| {
        file.write_all(content)?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
