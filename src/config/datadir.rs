//! The data directory's layout: every file and folder mdvault keeps there, named once.
//!
//! The data directory holds what mdvault derives from the vaults and what its processes share
//! (never a note): the index store, the credentials file, the lexical index, the move journal, the index owner's lock,
//! socket and token, the TLS certificate and the installed models. Each module that keeps one
//! of these asks [`DataDir`] for its path instead of spelling the name itself, so a name is
//! decided here and nowhere else, and a look at this file shows the whole layout.

use std::path::{Path, PathBuf};

/// A data directory (it need not exist yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// The data directory at `root`.
    pub(crate) fn new(root: &Path) -> DataDir {
        DataDir { root: root.to_path_buf() }
    }

    /// The SQLite index store (files, chunks, vectors, settings): `index.db`.
    pub(crate) fn store(&self) -> PathBuf {
        self.root.join("index.db")
    }

    /// The credentials file (web sessions; 0600): `auth.db`.
    pub(crate) fn auth(&self) -> PathBuf {
        self.root.join("auth.db")
    }

    /// The lexical (BM25) index's folder: `lexical/`.
    pub(crate) fn lexical(&self) -> PathBuf {
        self.root.join("lexical")
    }

    /// The move journal's folder: `journal/` (see `vault::journal`).
    pub(crate) fn journal(&self) -> PathBuf {
        self.root.join("journal")
    }

    /// The lock file whose exclusive lock is ownership of the index: `owner.lock`.
    pub(crate) fn owner_lock(&self) -> PathBuf {
        self.root.join("owner.lock")
    }

    /// The index owner's socket: `indexer.sock`.
    pub(crate) fn owner_socket(&self) -> PathBuf {
        self.root.join("indexer.sock")
    }

    /// The index owner's token (0600): `owner.token`.
    pub(crate) fn owner_token(&self) -> PathBuf {
        self.root.join("owner.token")
    }

    /// The dense vectors' file: `vectors.bin`.
    pub(crate) fn vectors(&self) -> PathBuf {
        self.root.join("vectors.bin")
    }

    /// The folder of installed local models: `models/`.
    pub(crate) fn models(&self) -> PathBuf {
        self.root.join("models")
    }

    /// The TLS certificate's folder: `tls/` (`cert.pem`, `key.pem`).
    #[cfg(test)]
    pub(crate) fn tls(&self) -> PathBuf {
        self.root.join("tls")
    }

    /// Whether an index was built here: the store and the lexical index's metadata are both
    /// there.
    pub(crate) fn has_index(&self) -> bool {
        self.store().is_file() && self.lexical().join("meta.json").is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_inside_the_data_directory_and_distinct() {
        let d = DataDir::new(Path::new("/data"));
        let all = [
            d.store(),
            d.auth(),
            d.lexical(),
            d.journal(),
            d.owner_lock(),
            d.owner_socket(),
            d.owner_token(),
            d.tls(),
            d.vectors(),
            d.models(),
        ];
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), all.len());
        assert!(all.iter().all(|p| p.parent() == Some(Path::new("/data"))));
    }

    #[test]
    fn an_index_is_there_only_with_both_its_store_and_its_lexical_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let d = DataDir::new(dir.path());
        assert!(!d.has_index());
        std::fs::write(d.store(), b"").unwrap();
        assert!(!d.has_index());
        std::fs::create_dir(d.lexical()).unwrap();
        std::fs::write(d.lexical().join("meta.json"), b"{}").unwrap();
        assert!(d.has_index());
    }
}
