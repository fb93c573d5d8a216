//! The chunk catalog: what the index keeps in memory for every chunk, and nothing more.
//!
//! At a million chunks, holding each chunk's strings (vault, path, title, description, heading
//! path) took most of a warm start to read from the store and hundreds of megabytes to hold.
//! The catalog keeps per chunk only its file, shared by all of the file's chunks, and the
//! first eight bytes of its embed text's hash (what the vectors file checks its rows against).
//! What a result shows of the chunk itself (its heading path and line) is read from the store
//! for the few chunks a search looks at (`Store::chunk_infos`).
//!
//! This module knows nothing of SQLite or search; the index fills it and reads it.

use std::collections::HashSet;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::store::FileKind;

/// A file's part of every one of its chunks' metadata.
#[derive(Debug, PartialEq)]
pub(crate) struct FileMeta {
    /// The vault name.
    pub(crate) vault: String,
    /// The vault's position in the index's vault list (`u32::MAX` when it is not configured).
    pub(crate) vault_index: u32,
    /// Vault-relative path (shared with the dense rows' keys).
    pub(crate) path: Arc<str>,
    /// Note or document.
    pub(crate) kind: FileKind,
}

/// One chunk's entry.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    /// Its file.
    pub(crate) file: Arc<FileMeta>,
    /// The first eight bytes of its embed text's hash.
    pub(crate) hash: u64,
}

/// Every chunk of the store, by chunk id.
#[derive(Debug, Default, Clone)]
pub(crate) struct Catalog {
    chunks: FxHashMap<i64, Slot>,
}

impl Catalog {
    /// An empty catalog with room for `n` chunks.
    pub(crate) fn with_capacity(n: usize) -> Catalog {
        Catalog { chunks: FxHashMap::with_capacity_and_hasher(n, Default::default()) }
    }

    /// Adds or replaces a chunk.
    pub(crate) fn insert(&mut self, id: i64, slot: Slot) {
        self.chunks.insert(id, slot);
    }

    /// Removes a chunk, if present.
    pub(crate) fn remove(&mut self, id: i64) {
        self.chunks.remove(&id);
    }

    /// A chunk's entry.
    pub(crate) fn get(&self, id: i64) -> Option<&Slot> {
        self.chunks.get(&id)
    }

    /// A chunk's entry, to change its hash.
    pub(crate) fn get_mut(&mut self, id: i64) -> Option<&mut Slot> {
        self.chunks.get_mut(&id)
    }

    /// Whether a chunk is here.
    pub(crate) fn contains(&self, id: i64) -> bool {
        self.chunks.contains_key(&id)
    }

    /// How many chunks.
    pub(crate) fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Every chunk id, in no order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.chunks.keys().copied()
    }

    /// Every file that has a chunk here, once each.
    pub(crate) fn files(&self) -> Vec<Arc<FileMeta>> {
        let mut seen: HashSet<*const FileMeta> = HashSet::new();
        let mut out = Vec::new();
        for slot in self.chunks.values() {
            if seen.insert(Arc::as_ptr(&slot.file)) {
                out.push(slot.file.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            vault: "v".into(),
            vault_index: 0,
            path: Arc::from(path),
            kind: FileKind::Note,
        })
    }

    #[test]
    fn the_chunks_of_one_file_share_its_entry_and_list_it_once() {
        let (a, b) = (file("a.md"), file("b.md"));
        let mut c = Catalog::with_capacity(3);
        c.insert(1, Slot { file: a.clone(), hash: 10 });
        c.insert(2, Slot { file: a.clone(), hash: 11 });
        c.insert(3, Slot { file: b.clone(), hash: 12 });
        assert_eq!(c.len(), 3);
        assert!(Arc::ptr_eq(&c.get(1).unwrap().file, &c.get(2).unwrap().file));
        let mut paths: Vec<String> = c.files().iter().map(|f| f.path.to_string()).collect();
        paths.sort();
        assert_eq!(paths, ["a.md", "b.md"]);
        c.remove(3);
        assert!(!c.contains(3));
        assert_eq!(c.files().len(), 1);
        c.get_mut(1).unwrap().hash = 99;
        assert_eq!(c.get(1).unwrap().hash, 99);
    }
}
