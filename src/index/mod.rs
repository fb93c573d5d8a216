//! The index: everything derived from the vaults that search needs, kept up to date.
//!
//! [`Index`] owns the SQLite store (the record), the tantivy lexical index and the in-memory
//! dense matrix (both rebuilt from the store whenever they disagree with it), a catalog of chunk
//! metadata, and the embedder. [`Index::sync`] brings one vault up to date in two phases: files
//! are walked, compared by size, mtime and hash, and re-chunked only when changed (committed in
//! small transactions, so lexical search sees them at once); then every chunk whose embed text
//! has no vector yet is embedded, again committed as it goes. A crash at any point loses at most
//! the batch in flight, and the next start carries on from the store.
//!
//! How to use: open once per process, call `sync` per vault (the CLI's `index`, the server's
//! background build), `update_paths` for watcher events, and hand `&Index` to `search`.
//!
//! This file opens and loads the index and answers for what it holds; the passes that change
//! it are in `sync` (files into chunks) and `embed` (chunks into vectors, and the query
//! vectors), its settings in `settings`.

pub(crate) mod catalog;
pub mod chunker;
pub mod coverage;
pub(crate) mod dense;
mod embed;
pub(crate) mod lexical;
pub(crate) mod nibbles;
mod progress;
mod settings;
pub(crate) mod signs;
pub mod store;
mod sync;
pub(crate) mod tokenize;
pub(crate) mod vectors;
pub(crate) mod watch;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::docs::{Extraction, Extractor};
use crate::embed::Embedder;
use crate::error::{Error, ErrorCode, Result};
/// Kept here for the callers that named it before it moved to the vault's census.
pub(crate) use crate::vault::census::under;
use catalog::{Catalog, FileMeta, Slot};
use dense::{Dense, RowKey};
use embed::QueryVectors;
use lexical::LexicalIndex;
pub use progress::{Both, PassProgress, Progress, ProgressClock, Silent, human_seconds};
pub use settings::IndexSettings;
use settings::suffix_of;
use store::{ChunkInfo, FileKind, Store, TextHash};
pub(crate) use sync::Reached;
pub use sync::{Pass, SyncReport};

/// A chunk's key in the dense rows.
fn row_key(id: i64, slot: &Slot) -> RowKey {
    RowKey { chunk_id: id, vault: slot.file.vault_index, path: slot.file.path.clone() }
}

/// The first eight bytes of a text hash: what a vectors file row keeps to show which text its
/// vector is of.
fn hash_prefix(hash: &TextHash) -> u64 {
    u64::from_le_bytes(hash[..8].try_into().unwrap_or([0; 8]))
}

/// sha256 of a text.
pub(crate) fn text_hash(text: &str) -> TextHash {
    Sha256::digest(text.as_bytes()).into()
}

/// The chunk metadata search shows, shared between the catalog and results.
pub(crate) type ChunkMeta = Arc<ChunkInfo>;

/// Document extraction with its results remembered in the store by the sha256 of the bytes,
/// so a restart, a rename or a second read never extracts (or OCRs) the same bytes twice.
/// Usable without an [`Index`] (the CLI reads documents without loading a model).
#[derive(Debug)]
pub(crate) struct Extractions {
    extractor: Extractor,
    suffixes: Vec<String>,
    /// Content hashes being extracted right now. A second caller for the same bytes (the
    /// watcher noticing an upload that is still being OCR'd) waits for the first instead of
    /// doing the same seconds of work again.
    in_flight: Mutex<HashSet<String>>,
    done: std::sync::Condvar,
}

impl Extractions {
    /// Extraction as the settings say, with the system tools found now.
    pub(crate) fn new(settings: &IndexSettings) -> Extractions {
        Extractions {
            extractor: Extractor::new(settings.extract.clone()),
            suffixes: settings.doc_suffixes.clone(),
            in_flight: Mutex::new(HashSet::new()),
            done: std::sync::Condvar::new(),
        }
    }

    /// The sha256 of `bytes` and their extraction: from `store` when these bytes were
    /// extracted before by an extractor like this one, else extracted now and remembered.
    /// `rel` picks the extractor by suffix.
    pub(crate) fn get(
        &self,
        store: &Store,
        rel: &str,
        bytes: &[u8],
    ) -> Result<(String, Extraction)> {
        let sha256 = crate::vault::content_hash(bytes);
        let suffix = suffix_of(&self.suffixes, rel).unwrap_or("");
        let signature = format!("{suffix}:{}", self.extractor.signature());
        let key = format!("{sha256}/{signature}");
        {
            let mut busy = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            while busy.contains(&key) {
                busy = self.done.wait(busy).unwrap_or_else(|p| p.into_inner());
            }
            if let Some(cached) = store.extraction(&sha256, &signature)? {
                return Ok((sha256, cached));
            }
            busy.insert(key.clone());
        }
        // Whatever happens below, the key is released and waiters are woken.
        struct Release<'a>(&'a Extractions, String);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.in_flight.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.1);
                self.0.done.notify_all();
            }
        }
        let _release = Release(self, key);
        let started = Instant::now();
        let extraction = self.extractor.extract(suffix, bytes);
        tracing::info!(
            "extracted {rel}: {} ({} pages, {} chars) in {:.2} s",
            extraction.verdict.status.as_str(),
            extraction.verdict.pages,
            extraction.verdict.extracted_chars,
            started.elapsed().as_secs_f64()
        );
        store.put_extraction(&sha256, &signature, &extraction)?;
        Ok((sha256, extraction))
    }
}

/// A store and an extractor together: what reading a document needs when no [`Index`] is open.
pub(crate) struct StoreDocuments<'a> {
    /// The store holding the cache.
    pub(crate) store: &'a Store,
    /// The extraction.
    pub(crate) extractions: &'a Extractions,
}

impl crate::vault::DocumentText for StoreDocuments<'_> {
    fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)> {
        self.extractions.get(self.store, rel, bytes)
    }
}

impl crate::vault::DocumentText for Index {
    fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)> {
        Index::extraction(self, rel, bytes)
    }
}

/// The engine hands out its current index as an `Arc` (a reader swaps it on takeover).
impl crate::vault::DocumentText for Arc<Index> {
    fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)> {
        Index::extraction(self, rel, bytes)
    }
}

/// The derived state of every configured vault.
pub struct Index {
    store: Store,
    lexical: LexicalIndex,
    embedder: Arc<Embedder>,
    dense: RwLock<Dense>,
    catalog: RwLock<Catalog>,
    vault_names: Vec<String>,
    settings: IndexSettings,
    /// Reads filed documents; results are cached in the store by content hash.
    extractions: Extractions,
    /// Opened beside an owner: never writes, follows the owner's commits instead.
    read_only: bool,
    /// The vectors file (`vectors.bin` in the data directory), derived from the store.
    vectors_path: std::path::PathBuf,
    /// The store's `data_version` when the in-memory state was last loaded (readers only).
    seen_version: Mutex<i64>,
    /// Query vectors by query text (see [`QueryVectors`]).
    query_vectors: Mutex<QueryVectors>,
    /// Which chunks may have an embed text with no vector (see [`embed::Unembedded`]): only
    /// the indexer thread changes it, and no job looks for such texts while it says none.
    unembedded: Mutex<embed::Unembedded>,
}

/// The model identity stored with the vectors.
fn model_key(embedder: &Embedder) -> String {
    format!("{}#{}", embedder.model_id(), embedder.dims())
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").field("store", &self.store).finish()
    }
}

impl Index {
    /// Opens the store in `data_dir` for writing, reconciles it with the embedder and chunker in
    /// use, and loads the lexical index, the catalog and the dense matrix. Only the data
    /// directory's owner opens it this way (see `engine::owner`).
    pub(crate) fn open(
        data_dir: &Path,
        vault_names: Vec<String>,
        settings: IndexSettings,
        embedder: Arc<Embedder>,
    ) -> Result<Index> {
        let store = Store::open(data_dir)?;
        // A model change makes every vector meaningless; chunks stay (they are model-free).
        let model = model_key(&embedder);
        if store.meta("model")?.as_deref() != Some(model.as_str()) {
            if store.meta("model")?.is_some() {
                tracing::info!("embedding model changed; dropping stored vectors");
            }
            store.drop_vectors()?;
            store.set_meta("model", &model)?;
        }
        let lexical = LexicalIndex::open(&crate::config::DataDir::new(data_dir).lexical())?;
        let index = Index::assemble(store, lexical, vault_names, settings, embedder, false);
        let index =
            Index { vectors_path: crate::config::DataDir::new(data_dir).vectors(), ..index };
        index.load()?;
        Ok(index)
    }

    /// Opens the index of `data_dir` without writing anything: for a process beside the
    /// owner, which keeps the index up to date. Refuses when there is no index yet, or when it
    /// was built with another model (its vectors would not match this process's queries).
    pub(crate) fn open_reader(
        data_dir: &Path,
        vault_names: Vec<String>,
        settings: IndexSettings,
        embedder: Arc<Embedder>,
    ) -> Result<Index> {
        if !crate::config::DataDir::new(data_dir).store().is_file() {
            return Err(Error::new(
                ErrorCode::NotReady,
                format!(
                    "there is no index in {} yet; the process that owns it is still creating it, \
                     retry in a moment",
                    data_dir.display()
                ),
            ));
        }
        let store = Store::open(data_dir)?;
        let model = model_key(&embedder);
        if let Some(stored) = store.meta("model")?
            && stored != model
        {
            return Err(Error::new(
                ErrorCode::NotReady,
                format!(
                    "the index in {} holds vectors of {stored}, and this process embeds queries \
                     with {model}; use the same embedding settings as the process that owns \
                     the index, or another --data-dir",
                    data_dir.display()
                ),
            ));
        }
        let lexical = LexicalIndex::open_reader(&crate::config::DataDir::new(data_dir).lexical())?;
        let index = Index::assemble(store, lexical, vault_names, settings, embedder, true);
        let index =
            Index { vectors_path: crate::config::DataDir::new(data_dir).vectors(), ..index };
        index.load()?;
        Ok(index)
    }

    fn assemble(
        store: Store,
        lexical: LexicalIndex,
        vault_names: Vec<String>,
        settings: IndexSettings,
        embedder: Arc<Embedder>,
        read_only: bool,
    ) -> Index {
        let seen = store.data_version().unwrap_or(0);
        Index {
            dense: RwLock::new(Dense::new(embedder.dims())),
            catalog: RwLock::new(Catalog::default()),
            store,
            lexical,
            embedder,
            vault_names,
            extractions: Extractions::new(&settings),
            settings,
            read_only,
            vectors_path: std::path::PathBuf::new(),
            seen_version: Mutex::new(seen),
            query_vectors: Mutex::new(QueryVectors::default()),
            unembedded: Mutex::new(embed::Unembedded::Above(0)),
        }
    }

    /// For a read-only index: when the owner has committed since the last look, reloads the
    /// catalog and the dense matrix from the store and the lexical reader from disk, so search
    /// follows the owner. A no-op for the owner's own index, which it changes itself.
    pub(crate) fn follow_owner(&self) -> Result<()> {
        if !self.read_only {
            return Ok(());
        }
        let now = self.store.data_version()?;
        let mut seen = self.seen_version.lock().unwrap_or_else(|p| p.into_inner());
        if *seen == now {
            return Ok(());
        }
        self.lexical.reload()?;
        self.load()?;
        *seen = now;
        Ok(())
    }

    /// Rebuilds the in-memory state (and, if it disagrees with the store and this index may
    /// write, the lexical index).
    fn load(&self) -> Result<()> {
        let generation = self.store.generation()?.to_string();
        if !self.read_only
            && (self.lexical.was_reset()
                || self.lexical.payload().as_deref() != Some(generation.as_str()))
        {
            tracing::info!("rebuilding the lexical index from the store");
            let infos = self.store.all_chunk_infos()?;
            self.lexical.delete_all()?;
            for part in infos.chunks(2048) {
                let ids: Vec<i64> = part.iter().map(|i| i.id).collect();
                let texts = self.store.chunk_texts(&ids)?;
                for info in part {
                    if let Some(text) = texts.get(&info.id) {
                        let lex =
                            lexical::Text::of(&info.title, &info.aliases, &info.breadcrumb, text);
                        self.lexical.add(info.id as u64, &info.vault, &info.path, lex)?;
                    }
                }
            }
            self.lexical.commit(&generation)?;
        }
        let catalog = self.load_catalog()?;
        let dense = self.load_dense(&catalog)?;
        *self.dense.write().unwrap_or_else(|p| p.into_inner()) = dense;
        *self.catalog.write().unwrap_or_else(|p| p.into_inner()) = catalog;
        Ok(())
    }

    /// Reads the catalog from the store: the files, then each chunk's file and text hash
    /// (two scans of small indexes, not of the chunk rows with their texts).
    fn load_catalog(&self) -> Result<Catalog> {
        let files: rustc_hash::FxHashMap<i64, Arc<FileMeta>> = self
            .store
            .catalog_files()?
            .into_iter()
            .map(|(id, vault, path, kind)| (id, self.file_meta(vault, &path, kind)))
            .collect();
        // The pairs first, so the map is made once at its size: growing it rehashed a million
        // entries several times, each into freshly zeroed pages (a fifth of a warm start).
        let mut pairs = Vec::new();
        self.store.for_each_chunk_file(|id, file| pairs.push((id, file)))?;
        let mut catalog = Catalog::with_capacity(pairs.len());
        for (id, file) in pairs {
            if let Some(file) = files.get(&file) {
                catalog.insert(id, Slot { file: file.clone(), hash: 0 });
            }
        }
        // The hashes come in hash order, so each lookup lands at random in a million-entry
        // map: done inside the store's row loop, one cache miss at a time, it was a quarter of
        // a warm start at 1M chunks; collected first, the tight loop below overlaps the misses.
        let mut hashes = Vec::with_capacity(catalog.len());
        self.store.for_each_chunk_hash(|id, hash| hashes.push((id, hash_prefix(&hash))))?;
        for (id, hash) in hashes {
            if let Some(slot) = catalog.get_mut(id) {
                slot.hash = hash;
            }
        }
        Ok(catalog)
    }

    /// A file's catalog entry.
    fn file_meta(&self, vault: String, path: &str, kind: FileKind) -> Arc<FileMeta> {
        let vault_index =
            self.vault_names.iter().position(|v| *v == vault).unwrap_or(u32::MAX as usize) as u32;
        Arc::new(FileMeta { vault, vault_index, path: Arc::from(path), kind })
    }

    /// The store (read access for search and status).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The lexical index.
    pub(crate) fn lexical(&self) -> &LexicalIndex {
        &self.lexical
    }

    /// The embedder.
    pub(crate) fn embedder(&self) -> &Embedder {
        &self.embedder
    }

    /// The dense matrix (read-locked for a query).
    pub(crate) fn dense(&self) -> std::sync::RwLockReadGuard<'_, Dense> {
        self.dense.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The file of each chunk of `ids` in the catalog, from memory: what ranking asks of a
    /// candidate (its vault, path and kind). A search ranks about a hundred candidates and
    /// shows a few; reading each candidate's row from the store made a search after a cold
    /// start wait for a hundred random reads of the chunk table.
    pub(crate) fn chunk_files(&self, ids: &[i64]) -> HashMap<i64, Arc<FileMeta>> {
        let catalog = self.catalog.read().unwrap_or_else(|p| p.into_inner());
        ids.iter().filter_map(|id| Some((*id, catalog.get(*id)?.file.clone()))).collect()
    }

    /// Chunk metadata by id, for the chunks of `ids` in the catalog (read from the store:
    /// the catalog keeps only what every chunk needs).
    pub(crate) fn chunks(&self, ids: &[i64]) -> Result<HashMap<i64, ChunkMeta>> {
        let known: Vec<i64> = {
            let catalog = self.catalog.read().unwrap_or_else(|p| p.into_inner());
            ids.iter().copied().filter(|id| catalog.contains(*id)).collect()
        };
        Ok(self.store.chunk_infos(&known)?.into_iter().map(|i| (i.id, Arc::new(i))).collect())
    }

    /// The configured vault names, in order (dense rows refer to vaults by this position).
    pub(crate) fn vault_names(&self) -> &[String] {
        &self.vault_names
    }

    /// Every indexed folder of a vault (each ancestor folder of an indexed file), sorted.
    pub(crate) fn folders(&self, vault: Option<&str>) -> Vec<String> {
        let files = self.catalog.read().unwrap_or_else(|p| p.into_inner()).files();
        let mut out: HashSet<String> = HashSet::new();
        for meta in files {
            if vault.is_some_and(|v| v != meta.vault) {
                continue;
            }
            let mut parts: Vec<&str> = meta.path.split('/').collect();
            parts.pop();
            for n in 1..=parts.len() {
                out.insert(parts[..n].join("/"));
            }
        }
        let mut out: Vec<String> = out.into_iter().collect();
        out.sort();
        out
    }

    /// Number of chunks in the catalog and number with a vector.
    pub fn counts(&self) -> (usize, usize) {
        (self.catalog.read().unwrap_or_else(|p| p.into_inner()).len(), self.dense().len())
    }

    /// A document's extraction, cached in the store (see [`Extractions::get`]).
    pub(crate) fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)> {
        self.extractions.get(&self.store, rel, bytes)
    }
}
