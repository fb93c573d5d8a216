//! One writer per vault across processes: the write lock every vault operation takes before it
//! reads what it will change, honoured by every mdvault process alike (a server, the CLI, a
//! stdio `mcp`, a second server).
//!
//! It is two locks in one guard: a mutex for this process's threads, then an exclusive
//! `flock` on the vault's root folder itself. The folder is the one thing every process that
//! writes the vault agrees on, whatever its data directory or configuration, and locking it
//! creates no file anywhere (nothing appears in a vault unasked). The kernel drops an `flock`
//! when its holder dies, so a crashed writer never leaves the vault locked. Where the folder
//! cannot be opened or locked (a filesystem without `flock`), writes fall back to the mutex
//! alone, which is what they had before, and say so once in the log.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

/// The write lock of one vault.
#[derive(Debug)]
pub(crate) struct WriteLock {
    root: PathBuf,
    /// The root folder, opened on the first write and kept open (the `flock` belongs to this
    /// open file); `None` until then, or when it cannot be opened.
    folder: Mutex<Option<File>>,
    warned: Once,
}

/// Held while a write runs; releases the folder lock, then the mutex, when dropped.
pub(crate) struct WriteGuard<'a> {
    folder: MutexGuard<'a, Option<File>>,
    locked: bool,
}

impl WriteLock {
    pub(crate) fn new(root: &Path) -> WriteLock {
        WriteLock { root: root.to_path_buf(), folder: Mutex::new(None), warned: Once::new() }
    }

    /// Waits until no other thread or process writes this vault, and holds it for the caller.
    pub(crate) fn acquire(&self) -> WriteGuard<'_> {
        // A panic while holding the lock cannot leave a half-written file (writes are atomic),
        // so a poisoned lock is safe to reuse.
        let mut folder = self.folder.lock().unwrap_or_else(|p| p.into_inner());
        if folder.is_none() {
            match File::open(&self.root) {
                Ok(f) => *folder = Some(f),
                Err(e) => self.warn(&e),
            }
        }
        let locked = match folder.as_ref() {
            Some(f) => match flock(f, libc::LOCK_EX) {
                Ok(()) => true,
                Err(e) => {
                    self.warn(&e);
                    false
                }
            },
            None => false,
        };
        WriteGuard { folder, locked }
    }

    fn warn(&self, e: &std::io::Error) {
        self.warned.call_once(|| {
            tracing::warn!(
                "cannot lock the vault folder {} ({e}); writes are serialised within this \
                 process only, so do not write it from two mdvault processes at once",
                self.root.display()
            );
        });
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        if self.locked
            && let Some(f) = self.folder.as_ref()
        {
            // Closing would release it too, but the file stays open for the next write.
            let _ = flock(f, libc::LOCK_UN);
        }
    }
}

/// `flock(2)` on `file`, retried when a signal interrupts the wait.
fn flock(file: &File, operation: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: the descriptor is valid for as long as `file` is borrowed, and flock only
        // reads it.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_open_of_the_folder_cannot_lock_it_while_a_write_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let lock = WriteLock::new(dir.path());
        // Another open file of the same folder stands for another process: only the flock
        // can keep the two apart.
        let other = File::open(dir.path()).unwrap();
        let held = lock.acquire();
        assert!(held.locked, "flock works on a folder here");
        let e = flock(&other, libc::LOCK_EX | libc::LOCK_NB).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "{e}");
        drop(held);
        flock(&other, libc::LOCK_EX | libc::LOCK_NB).expect("free once the write is done");
        flock(&other, libc::LOCK_UN).unwrap();
        // And a write after that takes it again.
        assert!(lock.acquire().locked);
    }

    #[test]
    fn a_folder_that_cannot_be_opened_falls_back_to_the_mutex() {
        let lock = WriteLock::new(Path::new("/nonexistent/mdvault-lock-test"));
        let g = lock.acquire();
        assert!(!g.locked);
    }
}
