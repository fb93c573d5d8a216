//! The vault: Markdown notes and filed documents on disk, and every operation on them.
//!
//! [`Vault`] is one named root folder. Its operations (in `ops/`) are the only way mdvault
//! reads or changes a vault: REST, MCP and the CLI all call them, so the path gate, the heading
//! resolver, frontmatter surgery, timestamp bumps, conflict checks and atomic writes apply the
//! same way however a caller arrives. [`Vaults`] holds the configured vaults, the default first.
//!
//! The submodules are pure text functions (`frontmatter`, `headings`, `edit`, `links`, `text`)
//! plus those that touch the disk: `path` (the gate), `fs` (atomic writes), `journal` (the
//! durable plan of a move, settled after a crash) and `sweep` (temporaries a dead process left).
//! Opening the configured vaults ([`Vaults::open`], which every process passes through before
//! it can write) settles interrupted moves and sweeps, in that order. This module knows nothing
//! of indexing, search or any transport.

pub(crate) mod aliases;
pub(crate) mod attachment;
pub(crate) mod canvas;
pub(crate) mod census;
pub(crate) mod diff;
pub mod edit;
pub(crate) mod embed;
mod exact;
mod filing;
mod find;
pub mod frontmatter;
pub(crate) mod fs;
pub(crate) mod grant;
pub mod headings;
mod journal;
mod known_hashes;
pub mod links;
pub(crate) mod literal;
mod lock;
mod move_plan;
mod ops;
pub mod patch;
pub mod path;
pub(crate) mod periodic;
pub(crate) mod sweep;
pub(crate) mod tag_rename;
pub(crate) mod tags;
pub mod text;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use filing::{Filed, FilingStatus};
pub use ops::{Change, DocumentText, content_hash};
pub(crate) use ops::{
    EntryKind, FileStat, HeadingEntry, Indexed, Listing, NoteMap, NoteRead, TagRenamed,
    now_timestamp, without_nearest,
};
pub use patch::PatchRequest;

use crate::config::{Config, VaultSettings};
use crate::error::{Error, ErrorCode, Result};
use journal::Journal;
use path::Suffixes;
use sweep::Sweep;

/// One vault: a name and a root folder.
#[derive(Debug)]
pub struct Vault {
    name: String,
    root: PathBuf,
    /// The root as configured, when absolute and not the canonical form (a symlinked folder):
    /// an absolute path an agent sends more likely starts with this one.
    configured_root: Option<PathBuf>,
    suffixes: Suffixes,
    files_dir: String,
    /// The largest accepted document upload; 0 means no limit.
    doc_max_bytes: u64,
    /// The frontmatter key writes stamp (`vault.timestamp_key`); empty: no stamping.
    timestamp_key: String,
    /// Serialises every process's writes to the vault (see `lock.rs`), so a read-modify-write
    /// (and a move with its link rewrites) is never interleaved with another one, from a
    /// concurrent request or from another mdvault process.
    write_lock: lock::WriteLock,
    /// Where a move records its plan before committing. Every vault opened through
    /// [`Vaults::open`] has one (in the data directory); a vault opened alone has none until
    /// [`Vault::with_journal`], and its moves are then all-or-nothing against failures but
    /// not against a crash.
    journal: Option<Arc<Journal>>,
    /// The notes' aliases as last read (`aliases::AliasCache`), for [`Vault::link_paths`].
    aliases: aliases::AliasCache,
    /// The attachments' hashes as last read (`known_hashes::KnownHashes`), so an unchanged
    /// file's tag is not read through again.
    hashes: known_hashes::KnownHashes,
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
        let root_lock_path = canonical.clone();
        let configured_root =
            Some(root.to_path_buf()).filter(|r| r.is_absolute() && *r != canonical);
        Ok(Vault {
            name: name.to_string(),
            root: canonical,
            configured_root,
            suffixes: Suffixes { documents: settings.doc_suffixes.clone() },
            files_dir: settings.doc_files_dir.clone(),
            doc_max_bytes: settings.doc_max_bytes,
            timestamp_key: settings.timestamp_key.clone(),
            write_lock: lock::WriteLock::new(&root_lock_path),
            journal: None,
            aliases: aliases::AliasCache::default(),
            hashes: known_hashes::KnownHashes::default(),
        })
    }

    /// The same vault, its moves journaled in `data_dir` (see `vault/journal.rs`). It does not
    /// settle earlier records; [`Vaults::open`] does that for the vaults it opens.
    #[cfg(test)]
    pub(crate) fn with_journal(mut self, data_dir: &Path) -> Vault {
        self.journal = Some(Arc::new(Journal::new(data_dir)));
        self
    }

    /// The vault's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The canonical root folder.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The frontmatter key a write stamps with the time (empty: no stamping), so a surface can
    /// say so before the save.
    pub(crate) fn timestamp_key(&self) -> &str {
        &self.timestamp_key
    }

    /// Where an absolute path may place this vault's folder (`path::unroot` reads it), with
    /// the home folder `~` stands for.
    fn roots<'a>(&'a self, home: Option<&'a Path>) -> path::Roots<'a> {
        path::Roots { canonical: &self.root, configured: self.configured_root.as_deref(), home }
    }

    /// The vault-relative path an absolute path names when it lies in this vault's folder.
    fn holds(&self, raw: &str) -> Option<String> {
        let home = home_for(raw);
        let roots = self.roots(home.as_deref());
        path::inside(&roots, &path::absolute(&roots, raw)?)
    }

    /// True when `rel` names an allowlisted document (by suffix).
    pub(crate) fn is_document(&self, rel: &str) -> bool {
        self.suffixes.is_document(rel)
    }

    /// The folder name documents are filed in.
    pub(crate) fn files_dir(&self) -> &str {
        &self.files_dir
    }
}

/// The home folder a leading `~` in `raw` stands for; `None` for any other path, whose reading
/// never needs it (the indexer gates every file, so the environment is not read for those).
fn home_for(raw: &str) -> Option<PathBuf> {
    if !raw.trim_start().starts_with('~') {
        return None;
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The word that means every vault where a search or a pass may cover several. A configured
/// vault of that name still wins: names always beat keywords (see [`Vaults::scope`]).
pub(crate) const ALL_VAULTS: &str = "all";

/// Which vaults a request covers where it may cover several: a search, a re-index pass.
/// Decided once from the caller's words by [`Vaults::scope`], then carried as this value, so
/// nothing below reads `all` again.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum VaultScope {
    /// Every configured vault.
    #[default]
    Every,
    /// The configured vault of this name.
    One(String),
    /// These configured vaults, two or more but not all, in configured order: what a
    /// client's grant reaches when it asks for every vault.
    Several(Vec<String>),
}

impl VaultScope {
    /// The one vault's name; `None` for every vault or several.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            VaultScope::One(name) => Some(name),
            VaultScope::Every | VaultScope::Several(_) => None,
        }
    }

    /// The vaults' names; `None` for every vault.
    pub(crate) fn names(&self) -> Option<&[String]> {
        match self {
            VaultScope::Every => None,
            VaultScope::One(name) => Some(std::slice::from_ref(name)),
            VaultScope::Several(names) => Some(names),
        }
    }
}

/// The configured vaults; the first is the default.
#[derive(Debug, Clone)]
pub struct Vaults {
    list: Vec<Arc<Vault>>,
}

impl Vaults {
    /// Opens every vault of the configuration, with the journal in the data directory; then
    /// settles the moves a process that died left in it and sweeps stale temporaries.
    pub fn open(config: &Config) -> Result<Vaults> {
        let started = sweep::process_start();
        let journal = Arc::new(Journal::new(&config.data_dir));
        let mut list = Vec::new();
        for entry in &config.vaults {
            let mut vault = Vault::open(&entry.name, &entry.root, &config.vault)?;
            vault.journal = Some(journal.clone());
            list.push(Arc::new(vault));
        }
        if list.is_empty() {
            return Err(Error::new(
                ErrorCode::NotFound,
                "no vault is configured; pass --vault PATH, set MDVAULT_VAULTS, or add vaults: to the config file",
            ));
        }
        settle_and_sweep(&list, &journal, started);
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
    /// an absolute path inside a configured vault's folder picks that vault (the deepest, when
    /// folders nest), whose gate then reads it relative to its folder; anything else is a path
    /// in `default` (a vault name, or the default vault when `None`).
    /// A colon that names no vault stays part of the path, which the gate then judges.
    pub(crate) fn locate<'a>(
        &self,
        default: Option<&str>,
        raw: &'a str,
    ) -> Result<(&Arc<Vault>, &'a str)> {
        if let Some((name, rest)) = raw.split_once(':')
            && let Some(v) = self.list.iter().find(|v| v.name == name)
        {
            return Ok((v, rest));
        }
        let holder = self
            .list
            .iter()
            .filter_map(|v| v.holds(raw).map(|rel| (rel.len(), v)))
            .min_by_key(|(len, _)| *len);
        if let Some((_, v)) = holder {
            return Ok((v, raw));
        }
        Ok((self.get(default)?, raw))
    }

    /// The vaults a caller's vault word covers where it may cover several: none (or an empty
    /// one) means every vault; the name of a configured vault means that vault, even when the
    /// name is `all` (names beat keywords, so such a vault can be searched alone); otherwise
    /// `all` means every vault; any other word is `not_found`, naming the vaults.
    pub(crate) fn scope(&self, asked: Option<&str>) -> Result<VaultScope> {
        match asked.map(str::trim).filter(|n| !n.is_empty()) {
            None => Ok(VaultScope::Every),
            Some(n) if n == ALL_VAULTS && self.get(Some(n)).is_err() => Ok(VaultScope::Every),
            Some(n) => Ok(VaultScope::One(self.get(Some(n))?.name.clone())),
        }
    }

    /// Every vault, the default first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<Vault>> {
        self.list.iter()
    }

    /// The vault names, the default first.
    pub(crate) fn names(&self) -> Vec<&str> {
        self.list.iter().map(|v| v.name.as_str()).collect()
    }
}

/// How many removed temporaries the start-up log line names before it only counts.
const SWEEP_NAMES_LOGGED: usize = 10;

/// Settles interrupted moves, then sweeps: in that order, so the sweep never takes a
/// temporary that an interrupted move still needs to finish or undo. Failures here are logged,
/// never fatal: a process that cannot write the vault (a read-only mount) still reads it.
fn settle_and_sweep(list: &[Arc<Vault>], journal: &Journal, started: std::time::SystemTime) {
    let protected = journal.recover(list);
    let tag = journal.tag();
    let sweep =
        Sweep { started, protected: &protected, alive: &sweep::pid_alive, journal: Some(&tag) };
    let mut removed = sweep::sweep_folder(journal.dir(), &sweep);
    for v in list {
        removed.extend(sweep::sweep_vault(v.root(), &sweep));
    }
    if removed.is_empty() {
        return;
    }
    let shown: Vec<String> =
        removed.iter().take(SWEEP_NAMES_LOGGED).map(|p| p.display().to_string()).collect();
    let more = removed.len().saturating_sub(SWEEP_NAMES_LOGGED);
    tracing::info!(
        "removed {} temporary file(s) left by mdvault processes that ended: {}{}",
        removed.len(),
        shown.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vaults(names: &[&str]) -> (Vec<tempfile::TempDir>, Vaults) {
        let settings = VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 0,
            timestamp_key: String::new(),
        };
        let dirs: Vec<tempfile::TempDir> =
            names.iter().map(|_| tempfile::tempdir().unwrap()).collect();
        let list = names
            .iter()
            .zip(&dirs)
            .map(|(n, d)| Arc::new(Vault::open(n, d.path(), &settings).unwrap()))
            .collect();
        (dirs, Vaults { list })
    }

    #[test]
    fn all_means_every_vault_unless_a_vault_is_named_all() {
        let (_dirs, plain) = vaults(&["notes", "journal"]);
        for asked in [None, Some(""), Some(" "), Some("all"), Some(" all ")] {
            assert_eq!(plain.scope(asked).unwrap(), VaultScope::Every, "{asked:?}");
        }
        assert_eq!(plain.scope(Some("journal")).unwrap(), VaultScope::One("journal".into()));
        let e = plain.scope(Some("nope")).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert!(e.message().contains("notes, journal"), "{e}");

        let (_dirs, named) = vaults(&["notes", "all"]);
        assert_eq!(named.scope(Some("all")).unwrap(), VaultScope::One("all".into()));
        assert_eq!(named.scope(None).unwrap(), VaultScope::Every);
        assert_eq!(VaultScope::One("all".into()).name(), Some("all"));
        assert_eq!(VaultScope::Every.name(), None);
    }
}
