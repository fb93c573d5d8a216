//! The hashes of attachments already read, remembered by the identity of the file they were
//! read from, so that a whole read, a `304` or an `If-Range` of an unchanged file does not
//! read all of its bytes again.
//!
//! Why: an attachment's tag is the sha256 of every byte, and a phone asking again for a video
//! it holds (`If-None-Match`), or a page shown again with its photos, read the whole file each
//! time before answering: 0.38 s for 500 MB from the page cache, far more from a disk.
//!
//! The rule (decided here, once): a hash is reused only for the same path naming the same file
//! (device and inode) with the same length, modification time and change time as when it was
//! hashed. The change time cannot be set by a program, so restoring an mtime after an edit
//! (`touch -r`, an archive tool) still misses. Where the system has no inode or change time
//! (not Unix), the path, length and modification time decide. A clock tick can hold two writes, so a file is remembered only
//! when both its times were already `settle` old when the hash began, and only when the
//! file's times and length are unchanged once its bytes are read; this is the rule git uses
//! for its "racily clean" entries.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Files remembered at most; the least recently used goes first. An entry is about 120
/// bytes, so this is half a megabyte at most.
const KEPT: usize = 4096;

/// How old a file's times must be when its hash begins for the hash to be remembered.
const SETTLE: Duration = Duration::from_secs(2);

/// What identifies one version of one file, as `fstat` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    #[cfg(unix)]
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        let since = |t: std::io::Result<SystemTime>| {
            t.ok().and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()).map_or((0, 0), |d| {
                (i64::try_from(d.as_secs()).unwrap_or(i64::MAX), i64::from(d.subsec_nanos()))
            })
        };
        let mtime = since(meta.modified());
        Stamp { dev: 0, ino: 0, len: meta.len(), mtime, ctime: mtime }
    }

    /// The later of the two times, as a `SystemTime` (the epoch for a time before it).
    fn latest(&self) -> SystemTime {
        let at = |(s, ns): (i64, i64)| {
            u64::try_from(s).ok().map_or(SystemTime::UNIX_EPOCH, |s| {
                SystemTime::UNIX_EPOCH
                    + Duration::from_secs(s)
                    + Duration::from_nanos(u64::try_from(ns).unwrap_or(0))
            })
        };
        at(self.mtime).max(at(self.ctime))
    }
}

/// The remembered hashes of one vault's attachments.
#[derive(Debug)]
pub(crate) struct KnownHashes {
    settle: Duration,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    by_file: HashMap<String, (Stamp, String, u64)>,
    clock: u64,
}

impl Default for KnownHashes {
    fn default() -> KnownHashes {
        KnownHashes::with_settle(SETTLE)
    }
}

impl KnownHashes {
    pub(crate) fn with_settle(settle: Duration) -> KnownHashes {
        KnownHashes { settle, seen: Mutex::default() }
    }

    /// The hash remembered for exactly this version of the file at `path`, if any.
    pub(crate) fn get(&self, path: &str, stamp: &Stamp) -> Option<String> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.clock += 1;
        let clock = seen.clock;
        match seen.by_file.get_mut(path) {
            Some((known, hash, used)) if known == stamp => {
                *used = clock;
                Some(hash.clone())
            }
            _ => None,
        }
    }

    /// Remembers `hash` for the file at `path` stamped `before` when its bytes were read
    /// (begun at `began`), if it was already settled then and is unchanged `after`; else
    /// forgets any older hash of it.
    pub(crate) fn remember(
        &self,
        path: &str,
        before: &Stamp,
        after: &Stamp,
        began: SystemTime,
        hash: &str,
    ) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let settled = before.latest() + self.settle <= began;
        if before != after || !settled {
            seen.by_file.remove(path);
            return;
        }
        if seen.by_file.len() >= KEPT
            && !seen.by_file.contains_key(path)
            && let Some(oldest) =
                seen.by_file.iter().min_by_key(|(_, e)| e.2).map(|(k, _)| k.clone())
        {
            // A linear scan when full: microseconds, against a file read through.
            seen.by_file.remove(&oldest);
        }
        seen.clock += 1;
        let clock = seen.clock;
        seen.by_file.insert(path.to_string(), (*before, hash.to_string(), clock));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn stamp(path: &std::path::Path) -> Stamp {
        Stamp::of(&std::fs::metadata(path).unwrap())
    }

    #[test]
    #[cfg(unix)]
    fn a_settled_unchanged_file_is_remembered_and_any_change_to_it_is_missed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clip.mp4");
        std::fs::write(&path, b"0123456789").unwrap();
        let known = KnownHashes::with_settle(Duration::ZERO);
        let first = stamp(&path);
        known.remember("clip.mp4", &first, &first, SystemTime::now(), "h1");
        assert_eq!(known.get("clip.mp4", &first).as_deref(), Some("h1"));
        assert_eq!(known.get("moved.mp4", &first), None, "another path is another file");

        // Same length, the old mtime put back: the change time still tells them apart, once
        // the file system's clock (coarser than its nanoseconds) has moved on.
        let probe = dir.path().join("probe");
        while {
            std::fs::write(&probe, b"").unwrap();
            stamp(&probe).ctime <= first.ctime
        } {
            std::thread::sleep(Duration::from_millis(1));
        }
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all(b"abcdefghij").unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        let second = stamp(&path);
        assert_eq!((second.len, second.mtime), (first.len, first.mtime));
        assert_eq!(known.get("clip.mp4", &second), None);
    }

    #[test]
    fn a_file_written_within_the_settling_time_or_during_the_read_is_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("photo.jpg");
        std::fs::write(&path, b"fresh").unwrap();
        let now = stamp(&path);
        let known = KnownHashes::with_settle(Duration::from_secs(3600));
        known.remember("photo.jpg", &now, &now, SystemTime::now(), "h");
        assert_eq!(known.get("photo.jpg", &now), None, "written within the hour");

        let known = KnownHashes::with_settle(Duration::ZERO);
        known.remember("photo.jpg", &now, &now, SystemTime::now(), "h");
        std::fs::write(&path, b"fresher!").unwrap();
        let after = stamp(&path);
        known.remember("photo.jpg", &now, &after, SystemTime::now(), "h2");
        let forgotten = known.get("photo.jpg", &now);
        assert_eq!(forgotten, None, "changed while read: the old hash is forgotten too");
        assert_eq!(known.get("photo.jpg", &after), None);
    }

    #[test]
    fn the_least_recently_used_file_is_forgotten_first_when_full() {
        let known = KnownHashes::with_settle(Duration::ZERO);
        let at = |ino: u64| Stamp { dev: 1, ino, len: 1, mtime: (1, 0), ctime: (1, 0) };
        let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        let name = |ino: u64| format!("{ino}.png");
        for ino in 0..KEPT as u64 {
            known.remember(&name(ino), &at(ino), &at(ino), long_ago, &ino.to_string());
        }
        assert_eq!(known.get(&name(0), &at(0)).as_deref(), Some("0"));
        let last = KEPT as u64;
        known.remember(&name(last), &at(last), &at(last), long_ago, "new");
        assert_eq!(known.get(&name(0), &at(0)).as_deref(), Some("0"), "used last, kept");
        assert_eq!(known.get(&name(1), &at(1)), None, "used least, forgotten");
        assert_eq!(known.get(&name(last), &at(last)).as_deref(), Some("new"));
    }
}
