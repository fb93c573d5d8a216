//! Filing documents: storing an uploaded PDF (or other allowlisted document) in the vault.
//!
//! The rules, checked in this order so the caller hears about the most basic problem first:
//! an empty body is `empty_document`; the path passes the gate for documents (a suffix outside
//! the allowlist is `unsupported_suffix`); the file must sit directly inside a folder named
//! exactly like `vault.doc_files_dir` (`wrong_parent_folder`, with a corrected path to retry
//! with); and it may not exceed `vault.doc_max_bytes` (`document_too_large`). Then identical
//! bytes are `unchanged` (nothing written), different bytes need `overwrite`
//! (`already_exists` otherwise), and the bytes are written verbatim and atomically, the
//! `Files` folder created on demand.
//!
//! Extraction is not done here: the vault stores bytes; `docs` reads them.

use super::path::Access;
use super::{Vault, content_hash, fs};
use crate::error::{Error, ErrorCode, Result};

/// What an upload did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FilingStatus {
    /// A new document was stored.
    Filed,
    /// The same bytes were already there; nothing was written.
    Unchanged,
    /// Different bytes were replaced (the caller passed `overwrite`).
    Replaced,
}

impl FilingStatus {
    /// `filed`, `unchanged` or `replaced`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FilingStatus::Filed => "filed",
            FilingStatus::Unchanged => "unchanged",
            FilingStatus::Replaced => "replaced",
        }
    }
}

/// A stored document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filed {
    /// The vault it is in.
    pub(crate) vault: String,
    /// Vault-relative path.
    pub(crate) path: String,
    /// sha256 of its bytes (hex).
    pub(crate) sha256: String,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// What the upload did.
    pub(crate) status: FilingStatus,
}

impl Vault {
    /// Stores `bytes` as the document at `raw`.
    pub(crate) fn file_document(&self, raw: &str, bytes: &[u8], overwrite: bool) -> Result<Filed> {
        if bytes.is_empty() {
            return Err(Error::new(
                ErrorCode::EmptyDocument,
                format!("the upload for {raw} has no bytes; send the document's contents"),
            ));
        }
        let target = self.gate(raw, Access::WriteDocument)?;
        let (parent, name) = match target.rel.rsplit_once('/') {
            Some((parent, name)) => (parent, name),
            None => ("", target.rel.as_str()),
        };
        let parent_name = parent.rsplit('/').next().unwrap_or("");
        if parent_name != self.files_dir {
            let suggestion = if parent.is_empty() {
                format!("<folder>/{}/{name}", self.files_dir)
            } else {
                format!("{parent}/{}/{name}", self.files_dir)
            };
            return Err(Error::new(
                ErrorCode::WrongParentFolder,
                format!(
                    "documents are filed directly inside a folder named `{files}` (for example \
                     `Home/Utilities/{files}/2026-09-17 Issuer - Contract.pdf`), and {rel} is not; \
                     retry as `{suggestion}`",
                    files = self.files_dir,
                    rel = target.rel,
                ),
            ));
        }
        if self.doc_max_bytes > 0 && bytes.len() as u64 > self.doc_max_bytes {
            return Err(Error::new(
                ErrorCode::DocumentTooLarge,
                format!(
                    "{} is {} bytes, over the {}-byte limit (vault.doc_max_bytes); compress the \
                     document or raise the limit",
                    target.rel,
                    bytes.len(),
                    self.doc_max_bytes
                ),
            ));
        }
        let sha256 = content_hash(bytes);
        let _guard = self.lock();
        let status = match self.load_bytes(&target) {
            Ok(old) if content_hash(&old) == sha256 => FilingStatus::Unchanged,
            Ok(_) if !overwrite => {
                return Err(Error::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "{} already exists with different contents; pass overwrite=true to \
                         replace it, or file the new version under another name",
                        target.rel
                    ),
                ));
            }
            Ok(_) => FilingStatus::Replaced,
            Err(e) if e.code() == ErrorCode::NotFound => FilingStatus::Filed,
            Err(e) => return Err(e),
        };
        if status != FilingStatus::Unchanged {
            fs::write_atomic(&target.abs, bytes).map_err(|e| Error::write_io(&target.rel, &e))?;
        }
        Ok(Filed {
            vault: self.name().to_string(),
            path: target.rel,
            sha256,
            size: bytes.len() as u64,
            status,
        })
    }

    /// The bytes of the document at `raw` (which must have a document suffix), with its
    /// vault-relative path.
    pub(crate) fn document_bytes(&self, raw: &str) -> Result<(String, Vec<u8>)> {
        let target = self.gate(raw, Access::Read)?;
        if !self.is_document(&target.rel) {
            return Err(Error::new(
                ErrorCode::UnsupportedSuffix,
                format!("{} is not a filed document", target.rel),
            ));
        }
        let bytes = self.load_bytes(&target)?;
        Ok((target.rel, bytes))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::VaultSettings;
    use crate::error::ErrorCode;
    use crate::vault::{FilingStatus, Vault};

    fn vault(max: u64) -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("Home")).unwrap();
        std::fs::write(dir.path().join("Home/Note.md"), "# Note\n").unwrap();
        let settings = VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: max,
            timestamp_key: "timestamp".into(),
        };
        let v = Vault::open("v", dir.path(), &settings).unwrap();
        (dir, v)
    }

    fn files(dir: &std::path::Path) -> Vec<String> {
        let mut out: Vec<String> = walkdir::WalkDir::new(dir)
            .into_iter()
            .flatten()
            .map(|e| e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn refusals_come_in_order_and_leave_the_vault_alone() {
        let (dir, v) = vault(10);
        let before = files(dir.path());
        let code = |raw: &str, bytes: &[u8]| v.file_document(raw, bytes, false).unwrap_err().code();
        assert_eq!(code("Home/x.exe", b""), ErrorCode::EmptyDocument);
        assert_eq!(code("../x.pdf", b"%PDF"), ErrorCode::InvalidPath);
        assert_eq!(code("Home/Files/x.exe", b"%PDF"), ErrorCode::UnsupportedSuffix);
        for wrong in
            ["x.pdf", "Home/x.pdf", "Home/Filesx/x.pdf", "Home/files/x.pdf", "Home/Files/Sub/x.pdf"]
        {
            assert_eq!(code(wrong, b"%PDF"), ErrorCode::WrongParentFolder, "{wrong}");
        }
        assert_eq!(code("Home/Files/x.pdf", b"%PDF-1.4 too long"), ErrorCode::DocumentTooLarge);
        let msg = v.file_document("Home/x.pdf", b"%PDF", false).unwrap_err().message().to_string();
        assert!(msg.contains("`Home/Files/x.pdf`"), "{msg}");
        assert_eq!(files(dir.path()), before);
    }

    #[test]
    fn filing_is_verbatim_idempotent_and_guarded_against_silent_replacement() {
        let (dir, v) = vault(0);
        let bytes = b"%PDF-1.4\r\n\x00\xff binary\n".to_vec();
        let first = v.file_document("Home/Files/a.pdf", &bytes, false).unwrap();
        assert_eq!(first.status, FilingStatus::Filed);
        assert_eq!(first.size, bytes.len() as u64);
        assert_eq!(std::fs::read(dir.path().join("Home/Files/a.pdf")).unwrap(), bytes);
        let again = v.file_document("Home/Files/a.pdf", &bytes, false).unwrap();
        assert_eq!((again.status, again.sha256.clone()), (FilingStatus::Unchanged, first.sha256));
        let other = b"%PDF-1.7 other".to_vec();
        let err = v.file_document("Home/Files/a.pdf", &other, false).unwrap_err();
        assert_eq!(err.code(), ErrorCode::AlreadyExists);
        assert_eq!(std::fs::read(dir.path().join("Home/Files/a.pdf")).unwrap(), bytes);
        let replaced = v.file_document("Home/Files/a.pdf", &other, true).unwrap();
        assert_eq!(replaced.status, FilingStatus::Replaced);
        assert_eq!(std::fs::read(dir.path().join("Home/Files/a.pdf")).unwrap(), other);
        // A Files folder at the root is a folder named Files too.
        assert!(v.file_document("Files/b.pdf", &bytes, false).is_ok());
        let (rel, read) = v.document_bytes("Home/Files/a.pdf").unwrap();
        assert_eq!((rel.as_str(), read), ("Home/Files/a.pdf", other));
        assert_eq!(
            v.document_bytes("Home/Note.md").unwrap_err().code(),
            ErrorCode::UnsupportedSuffix
        );
    }
}
