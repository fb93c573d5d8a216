//! Disk writes under a vault: the only code that creates, replaces or removes vault files.
//!
//! Every file write is atomic: the bytes go to a hidden temporary file in the target's own
//! folder, are flushed to disk, get the old file's permissions (or 0644), and are renamed over
//! the target; then the folder itself is flushed so the rename survives a crash. A reader (or
//! Obsidian) therefore sees the old note or the new one, never a torn one. A write that fails
//! takes away the parent folders it created for itself (only those, and only while empty), so
//! "nothing was changed" stays true.
//!
//! [`Staged`] splits a write in two so that a multi-file change (a move with its link
//! rewrites) can prepare every file before committing any of them; the by-path primitives
//! below ([`rename_over`], [`link_new`], [`set_aside`]) are what the move journal
//! (`vault::journal`) commits and undoes with, in a live move and in recovery alike. The
//! journal's own record files are written here too ([`create_locked`]), so that this stays the
//! one module that writes.
//!
//! Every temporary is named `.mdvault-<pid>-<random>.tmp` ([`is_temp_name`]): hidden, so walks,
//! listings and the watcher skip it, and carrying the writer's process id, so the start-up
//! sweep (`vault::sweep`) can tell a live writer's temporary from a dead one's. A move's
//! temporaries (its staged bytes and kept originals, which a journal record names) are
//! `.mdvault-<pid>-j<journal>-<random>.tmp` instead, naming the journal (the data directory)
//! whose recovery settles them: only a process of that journal may sweep them.
//!
//! Paths here have already passed the gate in `vault::path`; this module does not re-check them.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;

use tempfile::TempPath;

/// Temporary files start with a dot so that walks, listings and the watcher skip them.
const TEMP_PREFIX: &str = ".mdvault-";
/// And end in `.tmp`, so no suffix rule (notes, documents) ever matches one.
const TEMP_SUFFIX: &str = ".tmp";

/// What marks a temporary that a move's journal record names (after the process id, before
/// the journal's tag).
const JOURNALED_MARK: char = 'j';

/// The prefix of this process's temporaries: `.mdvault-<pid>-`.
fn temp_prefix() -> String {
    format!("{TEMP_PREFIX}{}-", std::process::id())
}

/// The prefix of this process's temporaries for a move recorded in the journal tagged `tag`
/// (`.mdvault-<pid>-j<tag>-`), or plain ones when the vault keeps no journal.
fn journaled_prefix(tag: Option<&str>) -> String {
    match tag {
        Some(tag) => format!("{}{JOURNALED_MARK}{tag}-", temp_prefix()),
        None => temp_prefix(),
    }
}

/// What a temporary's name says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TempName {
    /// The process that made it; `None` for the names of versions before the id was added.
    pub(crate) pid: Option<u32>,
    /// For a move's temporary, the tag of the journal whose record names it. Such a temporary
    /// may be the only copy of a dead move's staged bytes or kept original, and a process on
    /// another data directory cannot see the record that needs it, so only a process of that
    /// journal, after its recovery, may sweep it.
    pub(crate) journal: Option<String>,
}

fn temp_builder(prefix: &str) -> tempfile::Builder<'_, 'static> {
    let mut b = tempfile::Builder::new();
    b.prefix(prefix).suffix(TEMP_SUFFIX);
    b
}

/// What a file name says about a temporary of ours: `None` when it is not one.
pub(crate) fn is_temp_name(name: &str) -> Option<TempName> {
    let inner = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    if inner.is_empty() {
        return None;
    }
    match inner.split_once('-') {
        Some((pid, rest)) if !rest.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => {
            // tempfile's random part is alphanumeric, so a plain name has no second '-'.
            let journal = rest
                .strip_prefix(JOURNALED_MARK)
                .and_then(|r| r.split_once('-'))
                .filter(|(tag, random)| {
                    !tag.is_empty()
                        && tag.bytes().all(|b| b.is_ascii_hexdigit())
                        && !random.is_empty()
                })
                .map(|(tag, _)| tag.to_string());
            Some(TempName { pid: pid.parse().ok(), journal })
        }
        // The older, id-less names were tempfile's six random alphanumerics.
        _ if inner.len() == 6 && inner.bytes().all(|b| b.is_ascii_alphanumeric()) => {
            Some(TempName { pid: None, journal: None })
        }
        _ => None,
    }
}

/// A fully written temporary file waiting to be renamed over its target.
#[derive(Debug)]
pub(crate) struct Staged {
    temp: Option<TempPath>,
    target: PathBuf,
    /// The parent folders this write created, outermost first; taken away again if the write
    /// does not happen.
    made: Vec<PathBuf>,
}

impl Staged {
    /// Writes `bytes` next to `target` (creating missing parent folders) without touching
    /// `target` itself.
    pub(crate) fn new(target: &Path, bytes: &[u8]) -> io::Result<Staged> {
        Staged::with_prefix(target, bytes, &temp_prefix())
    }

    /// Stages `bytes` for a move, which commits them by path through the journal tagged
    /// `tag`: the temporary's name says so ([`TempName::journal`]), and it is handed over at
    /// once.
    pub(crate) fn for_journal(
        target: &Path,
        bytes: &[u8],
        tag: Option<&str>,
    ) -> io::Result<TempPath> {
        Staged::with_prefix(target, bytes, &journaled_prefix(tag)).map(Staged::into_temp_path)
    }

    fn with_prefix(target: &Path, bytes: &[u8], prefix: &str) -> io::Result<Staged> {
        let parent = target.parent().ok_or_else(|| io::Error::other("target has no parent"))?;
        let made = create_parents(target)?;
        let mut staged = Staged { temp: None, target: target.to_path_buf(), made };
        // On any error below, dropping `staged` removes the folders it made.
        let mut file = temp_builder(prefix).tempfile_in(parent)?;
        file.write_all(bytes)?;
        file.as_file().set_permissions(mode_for(target))?;
        file.as_file().sync_all()?;
        staged.temp = Some(file.into_temp_path());
        Ok(staged)
    }

    /// Renames the staged file over its target, replacing any existing file.
    pub(crate) fn commit(mut self) -> io::Result<()> {
        let temp = self.temp.take().expect("a staged file commits once");
        // A failed rename hands the temporary back; dropping it removes it, then `self`'s drop
        // removes the folders this write made.
        temp.persist(&self.target).map_err(|e| e.error)?;
        self.made.clear();
        sync_dir(&self.target)
    }

    /// Moves the staged file into place only if the target does not exist yet.
    pub(crate) fn commit_new(mut self) -> io::Result<()> {
        let temp = self.temp.take().expect("a staged file commits once");
        // A hard link fails with AlreadyExists instead of replacing, which closes the window
        // between "checked it is absent" and "renamed over it".
        fs::hard_link(&temp, &self.target)?;
        self.made.clear();
        drop(temp);
        sync_dir(&self.target)
    }

    /// Hands the temporary over to the caller; it is still removed when dropped, until the
    /// caller keeps it.
    fn into_temp_path(mut self) -> TempPath {
        self.made.clear();
        self.temp.take().expect("a staged file is handed over once")
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // Not committed: the temporary goes first, so the folders it sat in can be empty.
        drop(self.temp.take());
        remove_created_dirs(&self.made);
    }
}

fn mode_for(target: &Path) -> Permissions {
    match fs::metadata(target) {
        Ok(meta) => meta.permissions(),
        Err(_) => new_file_permissions(),
    }
}

#[cfg(unix)]
fn new_file_permissions() -> Permissions {
    Permissions::from_mode(0o644)
}

#[cfg(not(unix))]
fn new_file_permissions() -> Permissions {
    File::open(".").and_then(|f| f.metadata()).map(|m| m.permissions()).expect("cwd metadata")
}

/// Flushes the folder holding `path`, so a rename or unlink in it is durable.
pub(crate) fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(parent) = path.parent() {
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}

/// Atomically replaces (or creates) `target` with `bytes`.
pub(crate) fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    Staged::new(target, bytes)?.commit()
}

/// Atomically creates `target` with `bytes`; fails with `AlreadyExists` if it is there.
pub(crate) fn create_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    Staged::new(target, bytes)?.commit_new()
}

/// A temporary beside `beside` (in its folder) holding the bytes of the existing file
/// `source`: a hard link where the filesystem has them (no copy, the old inode simply gets a
/// second name), else a flushed copy with the same mode. The move journal keeps a note's old
/// bytes this way before replacing it, and stages a moved document in its new folder, so the
/// name is one of the journal tagged `tag` ([`TempName::journal`]). Removed when dropped,
/// until kept.
pub(crate) fn link_aside(source: &Path, beside: &Path, tag: Option<&str>) -> io::Result<TempPath> {
    let parent = beside.parent().ok_or_else(|| io::Error::other("target has no parent"))?;
    let prefix = journaled_prefix(tag);
    match temp_builder(&prefix).make_in(parent, |p| fs::hard_link(source, p)) {
        Ok(named) => Ok(named.into_temp_path()),
        // Filesystems without hard links (some FUSE and network mounts): copy.
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            let bytes = read(source)?;
            let mut file = temp_builder(&prefix).tempfile_in(parent)?;
            file.write_all(&bytes)?;
            file.as_file().set_permissions(fs::metadata(source)?.permissions())?;
            file.as_file().sync_all()?;
            Ok(file.into_temp_path())
        }
        Err(e) => Err(e),
    }
}

/// Renames the file at `from` over `to` (a staged temporary into place, or a kept original
/// back), then flushes the folder.
pub(crate) fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)?;
    sync_dir(to)
}

/// Gives the file at `from` the name `to` only if `to` does not exist, then drops the name
/// `from`: a no-clobber rename.
pub(crate) fn link_new(from: &Path, to: &Path) -> io::Result<()> {
    fs::hard_link(from, to)?;
    fs::remove_file(from)?;
    sync_dir(to)?;
    sync_dir(from)
}

/// Moves a file without ever replacing an existing one, keeping every byte and its mode.
pub(crate) fn move_file_new(from: &Path, to: &Path) -> io::Result<()> {
    let made = create_parents(to)?;
    let linked = match fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        // Filesystems without hard links (some FUSE and network mounts): copy, then rename.
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => fs::read(from)
            .and_then(|bytes| create_atomic(to, &bytes))
            .and_then(|()| fs::set_permissions(to, fs::metadata(from)?.permissions())),
        Err(e) => Err(e),
    };
    if let Err(e) = linked {
        remove_created_dirs(&made);
        return Err(e);
    }
    fs::remove_file(from)?;
    sync_dir(to)?;
    sync_dir(from)
}

/// Creates the missing folders above `path`, one at a time; returns those this call created,
/// outermost first, so that a change that is then abandoned can take exactly them away again
/// with [`remove_created_dirs`]. A folder someone else creates meanwhile is not counted.
pub(crate) fn create_parents(path: &Path) -> io::Result<Vec<PathBuf>> {
    let Some(parent) = path.parent() else { return Ok(Vec::new()) };
    let mut missing = Vec::new();
    let mut probe = parent;
    while fs::symlink_metadata(probe).is_err() {
        missing.push(probe.to_path_buf());
        match probe.parent() {
            Some(p) => probe = p,
            None => break,
        }
    }
    let mut made = Vec::new();
    for dir in missing.into_iter().rev() {
        match fs::create_dir(&dir) {
            Ok(()) => made.push(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => {
                remove_created_dirs(&made);
                return Err(e);
            }
        }
    }
    if let Some(outermost) = made.first() {
        // The new folder's own entry in its parent must survive a crash like the file will.
        let _ = sync_dir(outermost);
    }
    Ok(made)
}

/// Takes away folders [`create_parents`] made, innermost first, each only while it is empty
/// (someone may have written into it meanwhile; then it and those above it stay).
pub(crate) fn remove_created_dirs(made: &[PathBuf]) {
    for dir in made.iter().rev() {
        if fs::remove_dir(dir).is_err() {
            break;
        }
        let _ = sync_dir(dir);
    }
}

/// Removes one file.
pub(crate) fn remove_file(path: &Path) -> io::Result<()> {
    fs::remove_file(path)?;
    sync_dir(path)
}

/// Removes one file if it is there; absence is success.
pub(crate) fn remove_if_present(path: &Path) -> io::Result<()> {
    match remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Creates `path` and its missing parents below `root`; returns the folders actually created,
/// outermost first, as paths relative to `root`.
pub(crate) fn create_dirs(root: &Path, rel_parts: &[String]) -> io::Result<Vec<String>> {
    let mut created = Vec::new();
    let mut abs = root.to_path_buf();
    let mut rel = Vec::new();
    for part in rel_parts {
        abs.push(part);
        rel.push(part.as_str());
        match fs::create_dir(&abs) {
            Ok(()) => created.push(rel.join("/")),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && abs.is_dir() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(created)
}

/// Removes an empty folder.
pub(crate) fn remove_dir(path: &Path) -> io::Result<()> {
    fs::remove_dir(path)?;
    sync_dir(path)
}

/// Removes a folder and everything below it. The caller has already checked that nothing
/// inside is hidden or a symlink.
pub(crate) fn remove_dir_all(path: &Path) -> io::Result<()> {
    fs::remove_dir_all(path)?;
    sync_dir(path)
}

/// Takes a folder out of the vault in one step: renames it to a hidden temporary name beside
/// it and flushes the parent. Unlinking a tree is many steps, and a crash among them would
/// leave half a folder in view; after this rename the caller removes the hidden tree at
/// leisure, and a crash before that leaves only a temporary for the start-up sweep.
pub(crate) fn set_aside(dir: &Path) -> io::Result<PathBuf> {
    let parent = dir.parent().ok_or_else(|| io::Error::other("the folder has no parent"))?;
    let prefix = temp_prefix();
    // `make_in` retries with another random name when the name is taken. A rename onto an
    // existing *empty* folder would succeed on Linux, so the closure refuses a taken name.
    let named = temp_builder(&prefix).make_in(parent, |p| {
        if fs::symlink_metadata(p).is_ok() {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        fs::rename(dir, p)
    })?;
    let aside = named.path().to_path_buf();
    // The temporary is a folder now; its handle would try (and fail) to unlink it as a file.
    let _ = named.into_temp_path().keep();
    sync_dir(dir)?;
    Ok(aside)
}

/// Creates a private folder (0700) with its parents, for the journal beside the index.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Writes `bytes` as `dir/name` so that the name appears only complete, flushed and already
/// locked (an exclusive advisory lock on the returned file, released when it is dropped or the
/// process ends): the move journal's record, which another process must never see half
/// written or unlocked while its writer lives. Fails with `AlreadyExists` if `name` is taken.
pub(crate) fn create_locked(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<File> {
    let prefix = temp_prefix();
    let mut file = temp_builder(&prefix).tempfile_in(dir)?;
    file.as_file().lock()?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    let target = dir.join(name);
    let file = file.persist_noclobber(&target).map_err(|e| e.error)?;
    sync_dir(&target)?;
    Ok(file)
}

/// Opens a file for reading without following a final symlink (the gate already refused
/// symlink components; this closes the race where one is swapped in afterwards).
pub(crate) fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = opts.open(path)?;
    let mut buf = Vec::new();
    io::Read::read_to_end(&mut file, &mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_creates_parents_keeps_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/n.md");
        write_atomic(&target, b"one").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"one");
        #[cfg(unix)]
        {
            assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o644);
            fs::set_permissions(&target, Permissions::from_mode(0o600)).unwrap();
            write_atomic(&target, b"two").unwrap();
            assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let names: Vec<_> = fs::read_dir(dir.path().join("a/b")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_write_that_fails_takes_away_only_the_empty_folders_it_made() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("kept")).unwrap();
        // The name is too long for the filesystem: the folders get made, the rename fails.
        let long = format!("kept/new/deeper/{}.md", "n".repeat(300));
        let err = write_atomic(&dir.path().join(&long), b"x").unwrap_err();
        assert_ne!(err.kind(), io::ErrorKind::NotFound, "{err}");
        let left: Vec<_> = walk(dir.path());
        assert_eq!(left, vec!["kept".to_string()], "a made folder or a temporary is left");
        // A folder too long to make at all: the ones made above it go too.
        let long = format!("kept/new/{}/n.md", "f".repeat(300));
        assert!(create_atomic(&dir.path().join(&long), b"x").is_err());
        assert_eq!(walk(dir.path()), vec!["kept".to_string()]);
    }

    #[test]
    fn taking_away_made_folders_spares_one_someone_wrote_into() {
        let dir = tempfile::tempdir().unwrap();
        let made = create_parents(&dir.path().join("a/b/n.md")).unwrap();
        assert_eq!(made, vec![dir.path().join("a"), dir.path().join("a/b")]);
        fs::write(dir.path().join("a/other.md"), b"x").unwrap();
        remove_created_dirs(&made);
        assert_eq!(walk(dir.path()), vec!["a".to_string(), "a/other.md".to_string()]);
    }

    fn walk(root: &Path) -> Vec<String> {
        let mut out: Vec<String> = walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .flatten()
            .map(|e| e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn temporaries_carry_the_writers_id_and_nothing_else_looks_like_one() {
        let dir = tempfile::tempdir().unwrap();
        let plain = Staged::new(&dir.path().join("n.md"), b"x").unwrap().into_temp_path();
        let journaled = Staged::for_journal(&dir.path().join("n.md"), b"x", Some("0a1b")).unwrap();
        let kept = link_aside(&plain, &dir.path().join("n.md"), Some("0a1b")).unwrap();
        let untagged = link_aside(&plain, &dir.path().join("n.md"), None).unwrap();
        let me = Some(std::process::id());
        let name = |p: &TempPath| p.file_name().unwrap().to_string_lossy().into_owned();
        for p in [&plain, &untagged] {
            assert_eq!(is_temp_name(&name(p)), Some(TempName { pid: me, journal: None }));
        }
        for p in [&journaled, &kept] {
            let journal = Some("0a1b".to_string());
            assert_eq!(is_temp_name(&name(p)), Some(TempName { pid: me, journal }));
        }
        let legacy = TempName { pid: None, journal: None };
        assert_eq!(is_temp_name(".mdvault-a1B2c3.tmp"), Some(legacy));
        // A 'j' that starts the random part of a plain name is not a journal's mark.
        let plain_j = is_temp_name(".mdvault-12-jAbc12.tmp");
        assert_eq!(plain_j, Some(TempName { pid: Some(12), journal: None }));
        for other in [".mdvault-.tmp", ".mdvault-notes.tmp", ".mdvault-12-.tmp", "x.tmp", ".tmpab"]
        {
            assert_eq!(is_temp_name(other), None, "{other}");
        }
    }

    #[test]
    #[cfg(unix)]
    fn a_record_is_visible_only_whole_and_locked() {
        let dir = tempfile::tempdir().unwrap();
        let held = create_locked(dir.path(), "r.json", b"{}").unwrap();
        let other = File::open(dir.path().join("r.json")).unwrap();
        assert!(matches!(other.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "a temporary is left");
        drop(held);
        assert!(other.try_lock().is_ok());
        let err = create_locked(dir.path(), "r.json", b"{}").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    }

    #[test]
    fn create_atomic_never_clobbers() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("n.md");
        create_atomic(&target, b"first").unwrap();
        let err = create_atomic(&target, b"second").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&target).unwrap(), b"first");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn dropping_a_staged_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let staged = Staged::new(&dir.path().join("n.md"), b"x").unwrap();
        drop(staged);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn move_keeps_bytes_and_refuses_to_clobber() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.pdf");
        let b = dir.path().join("sub/b.pdf");
        fs::write(&a, b"%PDF-1.4 bytes").unwrap();
        move_file_new(&a, &b).unwrap();
        assert!(!a.exists());
        assert_eq!(fs::read(&b).unwrap(), b"%PDF-1.4 bytes");
        fs::write(&a, b"other").unwrap();
        assert_eq!(move_file_new(&a, &b).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&b).unwrap(), b"%PDF-1.4 bytes");
    }

    #[test]
    #[cfg(unix)]
    fn read_refuses_a_final_symlink() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("real.md"), b"x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.md"), dir.path().join("l.md")).unwrap();
        assert!(read(&dir.path().join("l.md")).is_err());
        assert_eq!(read(&dir.path().join("real.md")).unwrap(), b"x");
    }
}
