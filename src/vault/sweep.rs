//! The start-up sweep: mdvault's own temporaries that a process which died left behind.
//!
//! A killed process leaves its staged writes (`.mdvault-<pid>-<random>.tmp`, see `vault::fs`),
//! the kept originals of a move, and folders a recursive delete had set aside but not yet
//! removed. [`sweep_vault`] removes them, under four conditions that must all hold:
//!
//! - the name is one mdvault makes ([`fs::is_temp_name`]); nothing else is ever removed;
//! - a move's temporary belongs to this process's journal (its name carries the journal's tag:
//!   the record that needs it may sit in another data directory, which this process cannot
//!   see, so only a process of that data directory, after its recovery, may judge it);
//! - it was made before this process first looked at its vaults ([`process_start`]);
//! - the process named in it is not alive (a running writer's temporary is its work in
//!   progress; an id-less name from an older version must instead be [`LEGACY_TEMP_AGE`] old);
//! - no record of a move still running names it (the journal is settled first, and returns
//!   what running moves still need).
//!
//! Hidden folders (`.git`, `.obsidian`) are not entered and symlinks are not followed.
//! Processes that share a vault must share a process-id namespace (one machine, or one
//! container), or a live writer's id could look dead here.
//!
//! This module does not settle moves (`vault::journal` does) and knows nothing of the index's
//! files (the lexical index sweeps its own folder, `index/lexical.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use super::fs;

/// How old a temporary without a process id (made by versions before the id was added) must
/// be to be swept: no write holds a temporary for this long, so one this old has no writer.
pub(crate) const LEGACY_TEMP_AGE: Duration = Duration::from_secs(10 * 60);

/// When this process first opened its vaults (the first call of this function). Everything a
/// dead process wrote is older; a file made after it may be a live writer's. Taking the first
/// look rather than the exec time loses nothing: between the two this process wrote nothing,
/// and any other process that did is either alive (its files are spared by id) or was dead
/// already (its files are debris either way).
pub(crate) fn process_start() -> SystemTime {
    static START: OnceLock<SystemTime> = OnceLock::new();
    *START.get_or_init(SystemTime::now)
}

/// Whether the process `pid` exists (on this machine's process-id namespace).
pub(crate) fn pid_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else { return true };
        if pid <= 0 {
            return true;
        }
        // Signal 0 checks existence and permission without sending anything; EPERM means it
        // exists under another user.
        // SAFETY: kill with signal 0 has no effect on the target process.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        // No cheap probe: treat every writer as alive and leave its temporaries.
        true
    }
}

/// What a sweep may remove: see the module header.
pub(crate) struct Sweep<'a> {
    /// Only what is older than this.
    pub(crate) started: SystemTime,
    /// Never these (temporaries of moves still running).
    pub(crate) protected: &'a BTreeSet<PathBuf>,
    /// Whether the writer named in a temporary still runs.
    pub(crate) alive: &'a dyn Fn(u32) -> bool,
    /// The tag of this process's journal, whose recovery has run: a move's temporary of any
    /// other journal is never removed.
    pub(crate) journal: Option<&'a str>,
}

impl Sweep<'_> {
    fn removable(&self, path: &Path, name: &str) -> bool {
        let Some(temp) = fs::is_temp_name(name) else { return false };
        if temp.journal.as_deref().is_some_and(|tag| Some(tag) != self.journal)
            || self.protected.contains(path)
        {
            return false;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else { return false };
        if meta.file_type().is_symlink() {
            return false;
        }
        let made = made_at(&meta);
        if made >= self.started {
            return false;
        }
        match temp.pid {
            Some(pid) => !(self.alive)(pid),
            None => self.started.duration_since(made).is_ok_and(|age| age >= LEGACY_TEMP_AGE),
        }
    }
}

/// When a name was made: the later of the content's and the inode's change times. A kept
/// original is a hard link to an old note, so its content time is the note's; giving it the
/// new name changed the inode, which is when the temporary began.
fn made_at(meta: &std::fs::Metadata) -> SystemTime {
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let changed = SystemTime::UNIX_EPOCH
            + Duration::new(
                meta.ctime().max(0) as u64,
                meta.ctime_nsec().clamp(0, 999_999_999) as u32,
            );
        modified.max(changed)
    }
    #[cfg(not(unix))]
    {
        modified
    }
}

/// Removes the sweepable temporaries under `root` (every visible folder, not just the top);
/// returns them.
pub(crate) fn sweep_vault(root: &Path, sweep: &Sweep<'_>) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(dir) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if sweep.removable(&path, &name) {
                let gone =
                    if kind.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
                match gone {
                    Ok(()) => removed.push(path),
                    Err(e) => {
                        tracing::warn!("cannot remove the stale temporary {}: {e}", path.display())
                    }
                }
            } else if kind.is_dir() && !name.starts_with('.') {
                folders.push(path);
            }
        }
    }
    removed.sort();
    removed
}

/// Sweeps one folder, not its subfolders (the journal's folder).
pub(crate) fn sweep_folder(dir: &Path, sweep: &Sweep<'_>) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return removed };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_file())
            && sweep.removable(&path, &name)
            && fs::remove_file(&path).is_ok()
        {
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(5)
    }

    #[test]
    fn only_our_names_of_dead_writers_are_swept_and_hidden_folders_are_not_entered() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"x").unwrap();
        };
        write("Notes/.mdvault-111-abcdef.tmp"); // dead writer: swept
        write(".mdvault-222-abcdef.tmp"); // live writer: kept
        write("Notes/.mdvault-333-abcdef.tmp"); // protected by a running move: kept
        write("Notes/.mdvault-111-jfeed-abcdef.tmp"); // a dead move's, another journal's: kept
        write("Notes/.mdvault-111-jbeef-abcdef.tmp"); // a dead move's, ours, recovered: swept
        write("Notes/.mdvault-abcdef.tmp"); // legacy name, too young: kept
        write("Notes/.mdvault-111-abcdef.md"); // not our suffix: kept
        write("Notes/mdvault-111-abcdef.tmp"); // not hidden, not ours: kept
        write(".git/.mdvault-111-abcdef.tmp"); // inside a hidden folder: not looked at
        write("Notes/.mdvault-111-qqqqqq.tmp/inner.md"); // a set-aside folder: swept whole
        let protected: BTreeSet<PathBuf> =
            [root.join("Notes/.mdvault-333-abcdef.tmp")].into_iter().collect();
        let alive = |pid: u32| pid == 222;
        let sweep =
            Sweep { started: later(), protected: &protected, alive: &alive, journal: Some("beef") };
        let removed = sweep_vault(root, &sweep);
        assert_eq!(
            removed,
            vec![
                root.join("Notes/.mdvault-111-abcdef.tmp"),
                root.join("Notes/.mdvault-111-jbeef-abcdef.tmp"),
                root.join("Notes/.mdvault-111-qqqqqq.tmp")
            ]
        );
        for kept in [
            ".mdvault-222-abcdef.tmp",
            "Notes/.mdvault-333-abcdef.tmp",
            "Notes/.mdvault-abcdef.tmp",
            "Notes/.mdvault-111-abcdef.md",
            "Notes/mdvault-111-abcdef.tmp",
            ".git/.mdvault-111-abcdef.tmp",
        ] {
            assert!(root.join(kept).exists(), "{kept} was removed");
        }
    }

    #[test]
    fn nothing_made_after_the_process_started_is_swept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".mdvault-111-abcdef.tmp"), b"x").unwrap();
        let protected = BTreeSet::new();
        let dead = |_: u32| false;
        let earlier = SystemTime::now() - Duration::from_secs(60);
        let sweep = Sweep { started: earlier, protected: &protected, alive: &dead, journal: None };
        assert!(sweep_vault(dir.path(), &sweep).is_empty());
        let sweep = Sweep { started: later(), protected: &protected, alive: &dead, journal: None };
        assert_eq!(sweep_vault(dir.path(), &sweep).len(), 1);
    }

    #[test]
    fn this_process_and_init_count_as_alive() {
        assert!(pid_alive(std::process::id()));
        assert!(pid_alive(1));
    }
}
