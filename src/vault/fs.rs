//! Disk writes under a vault: the only code that creates, replaces or removes vault files.
//!
//! Every file write is atomic: the bytes go to a hidden temporary file in the target's own
//! folder, are flushed to disk, get the old file's permissions (or 0644), and are renamed over
//! the target; then the folder itself is flushed so the rename survives a crash. A reader (or
//! Obsidian) therefore sees the old note or the new one, never a torn one.
//!
//! [`Staged`] splits a write in two so that a multi-file change (a move with its link
//! rewrites) can prepare every file before committing any of them.
//!
//! Paths here have already passed the gate in `vault::path`; this module does not re-check them.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;

/// Temporary files start with a dot so that walks, listings and the watcher skip them.
const TEMP_PREFIX: &str = ".mdvault-";

/// A fully written temporary file waiting to be renamed over its target.
#[derive(Debug)]
pub struct Staged {
    temp: Option<tempfile::TempPath>,
    target: PathBuf,
}

impl Staged {
    /// Writes `bytes` next to `target` (creating missing parent folders) without touching
    /// `target` itself.
    pub fn new(target: &Path, bytes: &[u8]) -> io::Result<Staged> {
        let parent = target.parent().ok_or_else(|| io::Error::other("target has no parent"))?;
        fs::create_dir_all(parent)?;
        let mut file =
            tempfile::Builder::new().prefix(TEMP_PREFIX).suffix(".tmp").tempfile_in(parent)?;
        file.write_all(bytes)?;
        file.as_file().set_permissions(mode_for(target))?;
        file.as_file().sync_all()?;
        Ok(Staged { temp: Some(file.into_temp_path()), target: target.to_path_buf() })
    }

    /// Renames the staged file over its target, replacing any existing file.
    pub fn commit(mut self) -> io::Result<()> {
        let temp = self.temp.take().expect("a staged file commits once");
        temp.persist(&self.target).map_err(|e| e.error)?;
        sync_dir(&self.target)
    }

    /// Moves the staged file into place only if the target does not exist yet.
    pub fn commit_new(mut self) -> io::Result<()> {
        let temp = self.temp.take().expect("a staged file commits once");
        // A hard link fails with AlreadyExists instead of replacing, which closes the window
        // between "checked it is absent" and "renamed over it".
        fs::hard_link(&temp, &self.target)?;
        drop(temp);
        sync_dir(&self.target)
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
fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(parent) = path.parent() {
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}

/// Atomically replaces (or creates) `target` with `bytes`.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    Staged::new(target, bytes)?.commit()
}

/// Atomically creates `target` with `bytes`; fails with `AlreadyExists` if it is there.
pub fn create_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    Staged::new(target, bytes)?.commit_new()
}

/// Moves a file without ever replacing an existing one, keeping every byte and its mode.
pub fn move_file_new(from: &Path, to: &Path) -> io::Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    match fs::hard_link(from, to) {
        Ok(()) => {}
        // Filesystems without hard links (some FUSE and network mounts): copy, then rename.
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
            let bytes = fs::read(from)?;
            create_atomic(to, &bytes)?;
            fs::set_permissions(to, fs::metadata(from)?.permissions())?;
        }
        Err(e) => return Err(e),
    }
    fs::remove_file(from)?;
    sync_dir(to)?;
    sync_dir(from)
}

/// Creates the missing folders above `path`; returns the outermost one it created, so that a
/// failed multi-file change can take it away again with [`remove_created_dir`].
pub fn create_parents(path: &Path) -> io::Result<Option<PathBuf>> {
    let Some(parent) = path.parent() else { return Ok(None) };
    let mut outermost = None;
    let mut probe = parent;
    while !probe.exists() {
        outermost = Some(probe.to_path_buf());
        match probe.parent() {
            Some(p) => probe = p,
            None => break,
        }
    }
    fs::create_dir_all(parent)?;
    Ok(outermost)
}

/// Removes a folder that [`create_parents`] created for a change that was then abandoned.
pub fn remove_created_dir(path: &Path) -> io::Result<()> {
    fs::remove_dir_all(path)
}

/// Removes one file.
pub fn remove_file(path: &Path) -> io::Result<()> {
    fs::remove_file(path)?;
    sync_dir(path)
}

/// Creates `path` and its missing parents below `root`; returns the folders actually created,
/// outermost first, as paths relative to `root`.
pub fn create_dirs(root: &Path, rel_parts: &[String]) -> io::Result<Vec<String>> {
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
pub fn remove_dir(path: &Path) -> io::Result<()> {
    fs::remove_dir(path)?;
    sync_dir(path)
}

/// Removes a folder and everything below it. The caller has already checked that nothing
/// inside is hidden or a symlink.
pub fn remove_dir_all(path: &Path) -> io::Result<()> {
    fs::remove_dir_all(path)?;
    sync_dir(path)
}

/// Opens a file for reading without following a final symlink (the gate already refused
/// symlink components; this closes the race where one is swapped in afterwards).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
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
