//! Changes to the files of some directories, as they happen (inotify on Linux, through tokio's
//! reactor; no thread of its own). Elsewhere, or when the watch cannot be set up, nothing is
//! ever reported and the caller's poll does the work.

use std::path::Path;

/// A watch on directories; [`DirectoryWatch::changed`] resolves at each batch of changes.
pub(crate) struct DirectoryWatch {
    #[cfg(target_os = "linux")]
    inotify: Option<tokio::io::unix::AsyncFd<inotify::Inotify>>,
}

impl DirectoryWatch {
    /// Watches `dirs` (each once): files created, written, moved in or out, deleted, and links
    /// swapped (a Secret volume's `..data`).
    pub(crate) fn new(dirs: &[&Path]) -> Self {
        #[cfg(target_os = "linux")]
        {
            use inotify::{Inotify, WatchMask};
            let watch = || -> std::io::Result<tokio::io::unix::AsyncFd<Inotify>> {
                let inotify = Inotify::init()?;
                for dir in dirs {
                    let dir = if dir.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        dir
                    };
                    inotify.watches().add(
                        dir,
                        WatchMask::CLOSE_WRITE
                            | WatchMask::CREATE
                            | WatchMask::DELETE
                            | WatchMask::MOVED_TO
                            | WatchMask::MOVED_FROM
                            | WatchMask::MODIFY,
                    )?;
                }
                // `register` is the unsafe form of this (forbidden here); what it asks holds:
                // the Inotify owns its descriptor, open and the same until it is dropped.
                #[allow(deprecated)]
                tokio::io::unix::AsyncFd::new(inotify)
            };
            let inotify = watch()
                .map_err(
                    |e| tracing::debug!(error = %e, "no file watch: the certificate is polled"),
                )
                .ok();
            DirectoryWatch { inotify }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dirs;
            DirectoryWatch {}
        }
    }

    /// Resolves once something changed in the directories (never, without a watch). Events
    /// that arrive together are taken together.
    pub(crate) async fn changed(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &mut self.inotify {
            let mut buffer = [0u8; 4096];
            loop {
                let Ok(mut ready) = fd.readable_mut().await else {
                    break;
                };
                match ready.try_io(|fd| fd.get_mut().read_events(&mut buffer).map(|e| e.count())) {
                    Ok(Ok(n)) if n > 0 => return,
                    Ok(Ok(_)) | Err(_) => continue,
                    Ok(Err(e)) => {
                        tracing::debug!(error = %e, "the file watch failed: the certificate is polled");
                        break;
                    }
                }
            }
            self.inotify = None;
        }
        std::future::pending::<()>().await
    }
}
