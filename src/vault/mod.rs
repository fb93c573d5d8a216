//! The vault: Markdown notes and filed documents on disk, and every operation on them.
//!
//! [`Vault`] is one named root folder. Its operations (in `ops.rs`) are the only way mdvault
//! reads or changes a vault: REST, MCP and the CLI all call them, so the path gate, the heading
//! resolver, frontmatter surgery, timestamp bumps, conflict checks and atomic writes apply the
//! same way however a caller arrives. [`Vaults`] holds the configured vaults, the default first.
//!
//! The submodules are pure text functions (`frontmatter`, `headings`, `edit`, `links`, `text`)
//! plus the two that touch the disk: `path` (the gate) and `fs` (atomic writes). This module
//! knows nothing of indexing, search or any transport.

pub mod edit;
mod filing;
pub mod frontmatter;
pub mod fs;
pub mod headings;
pub mod links;
mod ops;
pub mod path;
pub mod text;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use filing::{Filed, FilingStatus};
pub use ops::{
    Change, DocumentText, Entry, EntryKind, FileStat, HeadingEntry, Listing, NoteMap, NoteRead,
    PatchRequest, content_hash, now_timestamp,
};

use crate::config::{Config, VaultSettings};
use crate::error::{Error, ErrorCode, Result};
use path::Suffixes;

/// One vault: a name and a root folder.
#[derive(Debug)]
pub struct Vault {
    name: String,
    root: PathBuf,
    suffixes: Suffixes,
    files_dir: String,
    /// The largest accepted document upload; 0 means no limit.
    doc_max_bytes: u64,
    /// Serialises this process's writes to the vault, so a read-modify-write (and a move with
    /// its link rewrites) is never interleaved with another one from a concurrent request.
    write_lock: Mutex<()>,
}

impl Vault {
    /// Opens the vault at `root`; the folder must exist.
    pub fn open(name: &str, root: &Path, settings: &VaultSettings) -> Result<Vault> {
        let canonical = root.canonicalize().map_err(|e| {
            Error::new(
                ErrorCode::NotFound,
                format!(
                    "the vault folder {} cannot be opened ({e}); check the path",
                    root.display()
                ),
            )
        })?;
        if !canonical.is_dir() {
            return Err(Error::new(
                ErrorCode::NotADirectory,
                format!("the vault path {} is not a folder", root.display()),
            ));
        }
        Ok(Vault {
            name: name.to_string(),
            root: canonical,
            suffixes: Suffixes { documents: settings.doc_suffixes.clone() },
            files_dir: settings.doc_files_dir.clone(),
            doc_max_bytes: settings.doc_max_bytes,
            write_lock: Mutex::new(()),
        })
    }

    /// The vault's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when `rel` names an allowlisted document (by suffix).
    pub fn is_document(&self, rel: &str) -> bool {
        self.suffixes.is_document(rel)
    }

    /// The folder name documents are filed in.
    pub fn files_dir(&self) -> &str {
        &self.files_dir
    }
}

/// The word that means every vault where a search or a pass may cover several. A configured
/// vault of that name still wins: names always beat keywords.
pub const ALL_VAULTS: &str = "all";

/// The configured vaults; the first is the default.
#[derive(Debug, Clone)]
pub struct Vaults {
    list: Vec<Arc<Vault>>,
}

impl Vaults {
    /// Opens every vault of the configuration.
    pub fn open(config: &Config) -> Result<Vaults> {
        let mut list = Vec::new();
        for entry in &config.vaults {
            list.push(Arc::new(Vault::open(&entry.name, &entry.root, &config.vault)?));
        }
        if list.is_empty() {
            return Err(Error::new(
                ErrorCode::NotFound,
                "no vault is configured; pass --vault PATH, set MDVAULT_VAULTS, or add vaults: to the config file",
            ));
        }
        Ok(Vaults { list })
    }

    /// The vault called `name`, or the default vault when `name` is `None` or empty.
    pub fn get(&self, name: Option<&str>) -> Result<&Arc<Vault>> {
        match name.map(str::trim).filter(|n| !n.is_empty()) {
            None => Ok(&self.list[0]),
            Some(n) => self.list.iter().find(|v| v.name == n).ok_or_else(|| {
                Error::new(
                    ErrorCode::NotFound,
                    format!(
                        "there is no vault named '{n}'; the vaults are: {}",
                        self.names().join(", ")
                    ),
                )
            }),
        }
    }

    /// The vault and vault-relative path that a caller's `[NAME:]path` means, the one rule every
    /// surface uses: a prefix that names a configured vault picks it (the rest is the path);
    /// anything else is a path in `default` (a vault name, or the default vault when `None`).
    /// A colon that names no vault stays part of the path, which the gate then judges.
    pub fn locate<'a>(
        &self,
        default: Option<&str>,
        raw: &'a str,
    ) -> Result<(&Arc<Vault>, &'a str)> {
        if let Some((name, rest)) = raw.split_once(':')
            && let Some(v) = self.list.iter().find(|v| v.name == name)
        {
            return Ok((v, rest));
        }
        Ok((self.get(default)?, raw))
    }

    /// Every vault, the default first.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Vault>> {
        self.list.iter()
    }

    /// The vault names, the default first.
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|v| v.name.as_str()).collect()
    }
}
