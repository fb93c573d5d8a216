//! The journal of multi-file changes: the durable plan of a change to several files, so that a
//! crash while it commits is finished or undone on the next start, never left half done. Two
//! operations write records (their [`Kind`]): a move with its link rewrites (`ops/moves.rs`),
//! and a tag's rename across notes (`ops/retag.rs`); "a move" below stands for either.
//!
//! A move with link rewrites changes many files, and no filesystem renames several files in
//! one step. So before its first rename a move writes a [`Record`] of its plan: every file in
//! commit order (a [`Step`]) with the sha256 of its content before and after (`None` for
//! absent), the staged temporary holding its new bytes, and a kept original (a hidden second
//! name of the old file) to put back. The temporaries and their folders are flushed, then the
//! record; the record is removed when the move is done. While its writer lives the record is
//! held under an exclusive advisory lock, which the kernel drops when the process ends however
//! it ends, so no other process mistakes a running move for a dead one.
//!
//! [`Journal::recover`] runs whenever vaults are opened (`Vaults::open`, which every mdvault
//! process passes through before it can write). An unlocked record is a move whose process
//! died. It is **rolled forward** when every file is either done or untouched with its staged
//! bytes intact, which is what a crash leaves (it can only stop the commit between two
//! renames); otherwise (a temporary deleted, a file changed by hand since) it is **rolled
//! back** with the kept originals. A file that is neither as before nor as planned was changed
//! by someone else after the crash: it is left as found, and the log says so. Then the
//! record's temporaries go, and the record.
//!
//! **Invariant:** after recovery a move is wholly done or wholly undone: the source with every
//! link as it was, or the destination with every link repointed.
//!
//! Where records live: in the data directory (`<data>/journal/`), not in the vault. A vault is
//! often synced (Obsidian Sync, Syncthing, git), and a record synced to another machine would
//! make that machine "recover" a move it never made; the data directory is private to this
//! machine and already holds what mdvault derives from the vaults. The cost: a process opened
//! over the same vault with *another* data directory does not see the record. Serve a vault
//! from one data directory.
//!
//! This module does not plan a change (`ops/moves.rs` and `ops/retag.rs` compute the new texts)
//! and writes nothing itself:
//! every rename, link and unlink goes through `vault::fs`.

use std::collections::BTreeSet;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::ops::content_hash;
use super::{Vault, fs};

/// Bumped when a record's meaning changes; a process never acts on a version it does not know.
const RECORD_VERSION: u32 = 1;
/// Records are `<kind>-<pid>-<n>.json` (`move-`, `retag-`); anything else in the folder is
/// not a record.
const RECORD_PREFIXES: [&str; 2] = ["move-", "retag-"];
const RECORD_SUFFIX: &str = ".json";

/// The journal of one data directory.
#[derive(Debug)]
pub(crate) struct Journal {
    dir: PathBuf,
}

/// Which operation a record is of: what its `from` and `to` name, and what the log calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A note or document moved, with the links to it rewritten (records written before
    /// kinds existed are moves).
    #[default]
    Move,
    /// A tag renamed across notes.
    Retag,
}

impl Kind {
    /// The record's file name prefix (one of [`RECORD_PREFIXES`]).
    fn prefix(self) -> &'static str {
        match self {
            Kind::Move => RECORD_PREFIXES[0],
            Kind::Retag => RECORD_PREFIXES[1],
        }
    }
}

/// The plan of one multi-file change, as written before its first rename.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// [`RECORD_VERSION`] when written.
    pub(crate) version: u32,
    /// What the change is.
    #[serde(default)]
    pub(crate) kind: Kind,
    /// The vault's name, for the log.
    pub(crate) vault: String,
    /// The vault's canonical root: how recovery finds the vault, whatever it is called now.
    pub(crate) root: PathBuf,
    /// The process that wrote it, for the log.
    pub(crate) pid: u32,
    /// A move's old vault-relative path; a retag's old tag.
    pub(crate) from: String,
    /// A move's new path; a retag's new tag.
    pub(crate) to: String,
    /// Folders the move created for the destination, outermost first (vault-relative);
    /// removed again, while empty, when the move is undone.
    pub(crate) made: Vec<String>,
    /// Every file it changes, in commit order.
    pub(crate) steps: Vec<Step>,
}

/// One file of a [`Record`]. Paths are vault-relative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Step {
    /// The file.
    pub(crate) path: String,
    /// sha256 of its content before the change; `None` when it did not exist.
    pub(crate) old: Option<String>,
    /// sha256 of its content after the change; `None` when the change removes it.
    pub(crate) new: Option<String>,
    /// The temporary holding the new content (when there is new content).
    pub(crate) staged: Option<String>,
    /// The temporary holding the old content (when there was old content).
    pub(crate) kept: Option<String>,
}

/// Which way a record was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Finished: the new state.
    Forward,
    /// Undone: the old state.
    Back,
}

impl Direction {
    fn as_str(self) -> &'static str {
        match self {
            Direction::Forward => "rolled forward (it is finished)",
            Direction::Back => "rolled back (it is undone)",
        }
    }
}

/// What settling a record did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settled {
    /// Which way.
    pub(crate) direction: Direction,
    /// Files left as found, each with the reason.
    pub(crate) left: Vec<String>,
}

/// A record on disk, locked by this process until [`Open::finish`] (or the process ends).
#[derive(Debug)]
pub(crate) struct Open {
    path: PathBuf,
    /// Holds the lock; never read.
    _file: std::fs::File,
}

impl Open {
    /// The move is settled: the record goes (flushed), then the lock.
    pub(crate) fn finish(self) -> io::Result<()> {
        fs::remove_file(&self.path)
    }
}

impl Record {
    /// The record of a move in `vault` (at its canonical `root`) by this process.
    pub(crate) fn new(
        vault: &str,
        root: &Path,
        from: &str,
        to: &str,
        made: Vec<String>,
        steps: Vec<Step>,
    ) -> Record {
        Record {
            version: RECORD_VERSION,
            kind: Kind::Move,
            vault: vault.to_string(),
            root: root.to_path_buf(),
            pid: std::process::id(),
            from: from.to_string(),
            to: to.to_string(),
            made,
            steps,
        }
    }

    /// The record of a tag's rename from `from` to `to` in `vault` by this process: only notes
    /// rewritten in place, no folder made.
    pub(crate) fn retag(
        vault: &str,
        root: &Path,
        from: &str,
        to: &str,
        steps: Vec<Step>,
    ) -> Record {
        Record { kind: Kind::Retag, ..Record::new(vault, root, from, to, Vec::new(), steps) }
    }

    /// What the change was, for the log.
    fn describe(&self) -> String {
        match self.kind {
            Kind::Move => format!("the move of {} to {}", self.from, self.to),
            Kind::Retag => format!("the rename of the tag #{} to #{}", self.from, self.to),
        }
    }
}

impl Journal {
    /// The journal of the data directory `data_dir` (nothing is created until a move).
    pub(crate) fn new(data_dir: &Path) -> Journal {
        Journal { dir: crate::config::DataDir::new(data_dir).journal() }
    }

    /// Writes `record` durably and locked; the move may rename once this returns.
    pub(crate) fn begin(&self, record: &Record) -> io::Result<Open> {
        /// Two moves of one process never share a name, even within a clock tick.
        static SEQUENCE: AtomicU64 = AtomicU64::new(0);
        fs::create_private_dir(&self.dir)?;
        let bytes = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let name = format!("{}{}-{nanos}-{n}{RECORD_SUFFIX}", record.kind.prefix(), record.pid);
        let file = fs::create_locked(&self.dir, &name, &bytes)?;
        Ok(Open { path: self.dir.join(name), _file: file })
    }

    /// The folder the records are in.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// This journal's name in its moves' temporaries (`vault::fs`): eight hex digits of a
    /// hash of the data directory's real path, so every process on one data directory, however
    /// it spells the path, agrees, and a process on another one leaves them to it.
    pub(crate) fn tag(&self) -> String {
        use sha2::Digest;
        let data = self.dir.parent().unwrap_or(&self.dir);
        let real = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
        let digest = sha2::Sha256::digest(real.as_os_str().as_encoded_bytes());
        digest[..4].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Settles every record left by a process that died, for the vaults given, and logs what
    /// it did. Returns the temporaries that moves still running in other processes need, which
    /// the start-up sweep must leave alone.
    pub(crate) fn recover(&self, vaults: &[Arc<Vault>]) -> BTreeSet<PathBuf> {
        let mut protected = BTreeSet::new();
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return protected };
        let mut records: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    RECORD_PREFIXES.iter().any(|p| n.starts_with(p)) && n.ends_with(RECORD_SUFFIX)
                })
            })
            .collect();
        records.sort();
        for path in records {
            self.recover_one(&path, vaults, &mut protected);
        }
        protected
    }

    fn recover_one(&self, path: &Path, vaults: &[Arc<Vault>], protected: &mut BTreeSet<PathBuf>) {
        // Gone already: its move finished between the listing and now.
        let Ok(file) = std::fs::File::open(path) else { return };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                // A move in progress in a live process: its temporaries are not debris.
                if let Ok(record) = read_record(&file) {
                    for step in &record.steps {
                        for rel in [&step.staged, &step.kept].into_iter().flatten() {
                            protected.insert(record.root.join(rel));
                        }
                    }
                }
                return;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::warn!(
                    "cannot lock the journal record {}: {e}; left in place",
                    path.display()
                );
                return;
            }
        }
        // The writer removes its record before it lets go of the lock, so a record that is no
        // longer at its name was finished while we waited; only one still there is orphaned.
        if !same_file(&file, path) {
            return;
        }
        let record = match read_record(&file).and_then(|r| validate(&r).map(|()| r)) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(
                    "the journal record {} cannot be used ({e}); it is left in place: check the \
                     vault, then delete the record",
                    path.display()
                );
                return;
            }
        };
        let Some(vault) = vaults.iter().find(|v| v.root() == record.root) else {
            tracing::info!(
                "the journal record {} is for the vault at {}, which this process does not open; \
                 a process that opens it will settle it",
                path.display(),
                record.root.display()
            );
            return;
        };
        let settled = settle(vault.root(), &record);
        let files: Vec<&str> = record.steps.iter().map(|s| s.path.as_str()).collect();
        tracing::warn!(
            "vault {}: {} (process {}) was interrupted and has been {}; files: {}",
            vault.name(),
            record.describe(),
            record.pid,
            settled.direction.as_str(),
            files.join(", ")
        );
        for left in &settled.left {
            tracing::warn!("vault {}: {left}", vault.name());
        }
        if let Err(e) = fs::remove_file(path) {
            tracing::warn!("cannot remove the settled journal record {}: {e}", path.display());
        }
    }
}

fn read_record(mut file: &std::fs::File) -> io::Result<Record> {
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    serde_json::from_str(&text).map_err(io::Error::other)
}

/// Whether the open `file` is still the one named `path`.
fn same_file(file: &std::fs::File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}

/// Refuses a record this version does not understand, or one whose paths would reach outside
/// its vault or name temporaries that are not ours (recovery renames and unlinks what a record
/// names, so a record is trusted no further than this).
fn validate(record: &Record) -> io::Result<()> {
    if record.version != RECORD_VERSION {
        return Err(io::Error::other(format!(
            "version {} is not {RECORD_VERSION}; an mdvault of that version must settle it",
            record.version
        )));
    }
    let inside = |rel: &str| {
        !rel.is_empty()
            && !rel.contains(['\\', '\0'])
            && rel.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
    };
    let temp =
        |rel: &str| inside(rel) && rel.rsplit('/').next().and_then(fs::is_temp_name).is_some();
    for step in &record.steps {
        let ok = inside(&step.path)
            && step.staged.as_deref().is_none_or(temp)
            && step.kept.as_deref().is_none_or(temp)
            && (step.new.is_none() || step.staged.is_some());
        if !ok {
            return Err(io::Error::other(format!("the step for '{}' is malformed", step.path)));
        }
    }
    if !record.made.iter().all(|m| inside(m)) {
        return Err(io::Error::other("a created folder lies outside the vault"));
    }
    Ok(())
}

/// The sha256 of a file's content, `None` when it is absent.
fn hash_of(path: &Path) -> io::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(content_hash(&bytes))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Commits one step: the staged bytes replace (or create) the file, or the file goes. A file
/// that is neither as the plan found it nor already done is not touched: it changed meanwhile.
pub(crate) fn forward(root: &Path, step: &Step) -> io::Result<()> {
    let path = root.join(&step.path);
    let now = hash_of(&path)?;
    if now == step.new {
        return Ok(());
    }
    if now != step.old {
        return Err(io::Error::other(format!("{} changed while moving", step.path)));
    }
    match (&step.new, &step.staged) {
        (None, _) => fs::remove_file(&path),
        (Some(_), Some(staged)) if step.old.is_none() => fs::link_new(&root.join(staged), &path),
        (Some(_), Some(staged)) => fs::rename_over(&root.join(staged), &path),
        (Some(_), None) => Err(io::Error::other("no staged content for a new file")),
    }
}

/// Undoes one step from its kept original; a file that is neither as planned nor as before
/// is left alone (the `Err` says why, for the log).
fn back(root: &Path, step: &Step) -> Result<(), String> {
    let path = root.join(&step.path);
    let now = hash_of(&path).map_err(|e| format!("{} could not be read ({e})", step.path))?;
    if now == step.old {
        return Ok(());
    }
    if now != step.new {
        return Err(format!("{} changed since the move; left as found", step.path));
    }
    let undone = match (&step.old, &step.kept) {
        (None, _) => fs::remove_file(&path),
        (Some(old), Some(kept)) => {
            let kept = root.join(kept);
            if hash_of(&kept).ok().flatten().as_ref() != Some(old) {
                return Err(format!(
                    "{} could not be put back: its kept original is missing; left as the move made it",
                    step.path
                ));
            }
            if now.is_none() { fs::link_new(&kept, &path) } else { fs::rename_over(&kept, &path) }
        }
        (Some(_), None) => {
            return Err(format!("{} has no kept original; left as the move made it", step.path));
        }
    };
    undone.map_err(|e| format!("{} could not be put back ({e})", step.path))
}

/// Whether every step is done, or untouched with its new bytes (if any) staged and intact.
fn can_finish(root: &Path, record: &Record) -> bool {
    record.steps.iter().all(|step| {
        let Ok(now) = hash_of(&root.join(&step.path)) else { return false };
        if now == step.new {
            return true;
        }
        now == step.old
            && match &step.staged {
                None => step.new.is_none(),
                Some(staged) => hash_of(&root.join(staged)).ok().flatten() == step.new,
            }
    })
}

/// Undoes every step, last first, and takes away the folders the move made (while empty).
/// Returns the files left as found.
pub(crate) fn roll_back(root: &Path, record: &Record) -> Vec<String> {
    let left: Vec<String> = record.steps.iter().rev().filter_map(|s| back(root, s).err()).collect();
    let made: Vec<PathBuf> = record.made.iter().map(|m| root.join(m)).collect();
    fs::remove_created_dirs(&made);
    left
}

/// Removes whatever temporaries of the record are still there.
pub(crate) fn clean_up(root: &Path, record: &Record) {
    for step in &record.steps {
        for rel in [&step.staged, &step.kept].into_iter().flatten() {
            if let Err(e) = fs::remove_if_present(&root.join(rel)) {
                tracing::warn!("cannot remove the temporary {rel}: {e}");
            }
        }
    }
}

/// Settles an interrupted record: finishes it when it can, else undoes it; then removes its
/// temporaries. A step that fails while finishing turns the whole into an undo.
pub(crate) fn settle(root: &Path, record: &Record) -> Settled {
    let mut settled = Settled { direction: Direction::Back, left: Vec::new() };
    if can_finish(root, record) {
        match record.steps.iter().try_for_each(|s| forward(root, s)) {
            Ok(()) => settled.direction = Direction::Forward,
            Err(e) => {
                tracing::warn!("finishing {} failed ({e}); undoing it", record.describe());
                settled.left = roll_back(root, record);
            }
        }
    } else {
        settled.left = roll_back(root, record);
    }
    clean_up(root, record);
    settled
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(path: &str, old: Option<&str>, new: Option<&str>) -> Step {
        Step {
            path: path.into(),
            old: old.map(|t| content_hash(t.as_bytes())),
            new: new.map(|t| content_hash(t.as_bytes())),
            staged: None,
            kept: None,
        }
    }

    fn record(steps: Vec<Step>) -> Record {
        Record {
            version: RECORD_VERSION,
            kind: Kind::Move,
            vault: "v".into(),
            root: PathBuf::from("/v"),
            pid: 1,
            from: "a.md".into(),
            to: "b.md".into(),
            made: Vec::new(),
            steps,
        }
    }

    #[test]
    fn a_record_reaching_outside_its_vault_or_naming_foreign_temporaries_is_refused() {
        let mut s = step("n.md", Some("a"), Some("b"));
        s.staged = Some(".mdvault-12-abcdef.tmp".into());
        assert!(validate(&record(vec![s.clone()])).is_ok());
        let mut escape = s.clone();
        escape.path = "../etc/passwd".into();
        assert!(validate(&record(vec![escape])).is_err());
        let mut foreign = s.clone();
        foreign.staged = Some("Notes/keep.md".into());
        assert!(validate(&record(vec![foreign])).is_err());
        let mut unstaged = s.clone();
        unstaged.staged = None;
        assert!(validate(&record(vec![unstaged])).is_err());
        let mut future = record(vec![s]);
        future.version = RECORD_VERSION + 1;
        assert!(validate(&future).is_err());
    }

    #[test]
    fn a_record_with_a_lost_temporary_is_undone_from_the_kept_originals() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // Step 0 committed (its kept original is the old text), step 1 not, and its staged
        // bytes are gone: it cannot be finished, so it is undone.
        std::fs::write(root.join("a.md"), b"new a").unwrap();
        std::fs::write(root.join(".mdvault-9-aaaaaa.tmp"), b"old a").unwrap();
        std::fs::write(root.join("b.md"), b"old b").unwrap();
        let mut s0 = step("a.md", Some("old a"), Some("new a"));
        s0.staged = Some(".mdvault-9-zzzzzz.tmp".into());
        s0.kept = Some(".mdvault-9-aaaaaa.tmp".into());
        let mut s1 = step("b.md", Some("old b"), Some("new b"));
        s1.staged = Some(".mdvault-9-bbbbbb.tmp".into());
        let settled = settle(root, &record(vec![s0, s1]));
        assert_eq!(settled.direction, Direction::Back);
        assert!(settled.left.is_empty(), "{:?}", settled.left);
        assert_eq!(std::fs::read(root.join("a.md")).unwrap(), b"old a");
        assert_eq!(std::fs::read(root.join("b.md")).unwrap(), b"old b");
        assert_eq!(std::fs::read_dir(root).unwrap().count(), 2, "a temporary is left");
    }

    #[test]
    fn a_file_changed_by_hand_since_the_crash_is_left_as_found_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.md"), b"edited by hand").unwrap();
        let mut s = step("a.md", Some("old a"), Some("new a"));
        s.staged = Some(".mdvault-9-bbbbbb.tmp".into());
        let settled = settle(root, &record(vec![s]));
        assert_eq!(settled.direction, Direction::Back);
        assert_eq!(settled.left.len(), 1);
        assert!(settled.left[0].contains("a.md changed since the move"), "{:?}", settled.left);
        assert_eq!(std::fs::read(root.join("a.md")).unwrap(), b"edited by hand");
    }
}
