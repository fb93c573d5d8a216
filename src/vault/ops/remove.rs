//! Deletes: a note or document into the vault's `.trash` (or for good), and folders.

use crate::error::{Error, ErrorCode, Result};
use crate::vault::path::Access;
use crate::vault::{Vault, fs};

use super::Change;

/// Obsidian's vault-local trash folder (its "move to .trash" setting): hidden, so the gate
/// never lets a caller write there and the index never reads it.
pub(crate) const TRASH_DIR: &str = ".trash";

/// How many same-named files the trash keeps apart before a delete gives up.
const MAX_TRASH_TWINS: u32 = 10_000;

impl Vault {
    /// Deletes a note or a document.
    pub fn delete(&self, raw: &str, expected: Option<&str>) -> Result<Change> {
        self.remove(raw, expected, true)
    }

    /// Deletes a note or document, moving it into the vault's `.trash` folder (where Obsidian
    /// keeps deleted files, so it can be restored) unless `permanent`. A name already in the
    /// trash is kept: the newcomer gets ` 1`, ` 2`, ... before its suffix.
    pub(crate) fn remove(
        &self,
        raw: &str,
        expected: Option<&str>,
        permanent: bool,
    ) -> Result<Change> {
        let target = self.gate(raw, Access::WriteFile)?;
        let _guard = self.lock();
        if self.current(&target, expected)?.is_none() {
            return Err(Error::new(ErrorCode::NotFound, format!("{} does not exist", target.rel)));
        }
        if permanent {
            fs::remove_file(&target.abs).map_err(|e| Error::write_io(&target.rel, &e))?;
            return Ok(self.change_at(&target, format!("deleted {}", target.rel)));
        }
        let name = target.rel.rsplit('/').next().unwrap_or(&target.rel);
        let (stem, suffix) = match name.rfind('.') {
            Some(i) if i > 0 => (&name[..i], &name[i..]),
            _ => (name, ""),
        };
        let trash = self.root.join(TRASH_DIR);
        let mut n = 0;
        loop {
            let candidate = if n == 0 { name.to_string() } else { format!("{stem} {n}{suffix}") };
            let to = trash.join(&candidate);
            match fs::move_file_new(&target.abs, &to) {
                Ok(()) => {
                    return Ok(self.change_at(
                        &target,
                        format!(
                            "moved {} to the vault's trash as {TRASH_DIR}/{candidate}; delete \
                             with permanent to remove it for good",
                            target.rel
                        ),
                    ));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < MAX_TRASH_TWINS => {
                    n += 1;
                }
                Err(e) => return Err(Error::write_io(&target.rel, &e)),
            }
        }
    }

    /// Deletes a folder; a non-empty one only when `recursive`.
    pub fn delete_folder(&self, raw: &str, recursive: bool) -> Result<Change> {
        let target = self.gate(raw, Access::Folder)?;
        let _guard = self.lock();
        let meta =
            std::fs::symlink_metadata(&target.abs).map_err(|e| Error::read_io(&target.rel, &e))?;
        if !meta.is_dir() {
            return Err(Error::new(
                ErrorCode::NotADirectory,
                format!("{} is a file; delete it as a note or document instead", target.rel),
            ));
        }
        let mut names: Vec<String> = std::fs::read_dir(&target.abs)
            .map_err(|e| Error::read_io(&target.rel, &e))?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        if names.is_empty() {
            fs::remove_dir(&target.abs).map_err(|e| Error::write_io(&target.rel, &e))?;
            return Ok(self.change_at(&target, format!("deleted the empty folder {}", target.rel)));
        }
        if !recursive {
            let shown: Vec<&str> = names.iter().take(20).map(String::as_str).collect();
            let more = if names.len() > 20 {
                format!(" and {} more", names.len() - 20)
            } else {
                String::new()
            };
            return Err(Error::new(
                ErrorCode::NotEmpty,
                format!(
                    "{} is not empty (it holds {}{more}); pass recursive to delete it with its contents",
                    target.rel,
                    shown.join(", ")
                ),
            ));
        }
        // Scan everything first: a hidden entry (a .git folder, Obsidian settings) or a symlink
        // inside means the folder holds more than notes, and nothing is removed.
        let (mut files, mut documents) = (0usize, 0usize);
        for entry in walkdir::WalkDir::new(&target.abs).follow_links(false).min_depth(1) {
            let entry = entry.map_err(|e| {
                Error::new(ErrorCode::Unreadable, format!("cannot scan {}: {e}", target.rel))
            })?;
            let name = entry.file_name().to_string_lossy();
            let rel = entry
                .path()
                .strip_prefix(&self.root)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if crate::vault::census::hidden(&name) {
                return Err(Error::new(
                    ErrorCode::InvalidPath,
                    format!(
                        "{} holds the hidden entry {rel}; nothing was deleted. Remove it outside mdvault first",
                        target.rel
                    ),
                ));
            }
            if entry.path_is_symlink() {
                return Err(Error::new(
                    ErrorCode::InvalidPath,
                    format!(
                        "{} holds the symbolic link {rel}; nothing was deleted. Remove it outside mdvault first",
                        target.rel
                    ),
                ));
            }
            if entry.file_type().is_file() {
                files += 1;
                if self.suffixes.is_document(&name) {
                    documents += 1;
                }
            }
        }
        // One rename takes the folder out of view; unlinking its contents is many steps, and a
        // crash among them would leave half a folder. A crash after the rename leaves only a
        // hidden temporary, which the next start sweeps, so no journal record is needed.
        let aside = fs::set_aside(&target.abs).map_err(|e| Error::write_io(&target.rel, &e))?;
        if let Err(e) = fs::remove_dir_all(&aside) {
            tracing::warn!(
                "vault {}: {} is deleted, but removing its contents under {} failed ({e}); the \
                 next start removes them",
                self.name,
                target.rel,
                aside.display()
            );
        }
        Ok(self.change_at(
            &target,
            format!("deleted {} with {files} file(s), {documents} of them document(s)", target.rel),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::ops::tests::{settings, snapshot};

    #[test]
    fn a_recursive_folder_delete_is_one_rename_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("Old/Deep")).unwrap();
        std::fs::write(root.join("Old/a.md"), "a").unwrap();
        std::fs::write(root.join("Old/Deep/b.md"), "b").unwrap();
        std::fs::write(root.join("keep.md"), "k").unwrap();
        let vault = Vault::open("t", root, &settings()).unwrap();
        let change = vault.delete_folder("Old", true).unwrap();
        assert!(change.message.contains("2 file(s)"), "{}", change.message);
        let names: Vec<_> = snapshot(root).into_iter().map(|(r, _)| r).collect();
        assert_eq!(names, vec!["keep.md".to_string()]);
    }
}
