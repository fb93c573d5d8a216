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

pub mod catalog;
pub mod chunker;
pub mod coverage;
pub mod dense;
pub mod lexical;
mod progress;
pub mod store;
pub mod tokenize;
pub mod vectors;
pub mod watch;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::docs::{ExtractSettings, Extraction, Extractor};
use crate::embed::{EmbedError, Embedder};
use crate::error::{Error, ErrorCode, Result};
use crate::vault::{FileStat, Vault};
use catalog::{Catalog, FileMeta, Slot};
use chunker::ChunkConfig;
use dense::{Dense, RowKey};
use lexical::LexicalIndex;
pub use progress::{Both, PassProgress, Progress, ProgressClock, Silent, human_seconds};
use store::{Batch, ChunkInfo, FileKind, FileStatus, FileUpdate, NewChunk, Store, TextHash};

/// Files per store transaction during a sync: small enough that a crash loses little and
/// lexical search sees progress, large enough that commits do not dominate.
const FILES_PER_BATCH: usize = 64;
/// Distinct texts per embedding call during a sync.
const TEXTS_PER_EMBED: usize = 64;
/// Chunks read from the store per page of an embedding pass: a few megabytes of text, so a
/// first build of a million chunks holds one page, not gigabytes, and the page queries stay
/// few next to the embedding.
const EMBED_PAGE_CHUNKS: usize = 4096;
/// Rows an embedding pass may add to the in-memory overlay (192 MiB of 384-float vectors)
/// before it moves them into the vectors file: the overlay would otherwise hold every vector
/// of a first build until its end, 1.5 GB at a million chunks.
const OVERLAY_ROWS_MAX: usize = 131_072;
/// The vectors file is rewritten once the rows out of step with it (held in memory beside it,
/// or in it but no longer used) exceed this many or [`VECTORS_REWRITE_FRACTION`]: below, the
/// memory they take is small and a rewrite (seconds at a million rows) is not worth it; a
/// single edit never triggers one.
const VECTORS_REWRITE_ROWS: usize = 2048;
/// ... or one in this many of the rows.
const VECTORS_REWRITE_FRACTION: usize = 20;

/// A chunk's key in the dense rows.
fn row_key(id: i64, slot: &Slot) -> RowKey {
    RowKey { chunk_id: id, vault: slot.file.vault_index, path: slot.file.path.clone() }
}

/// The first eight bytes of a text hash: what a vectors file row keeps to show which text its
/// vector is of.
fn hash_prefix(hash: &TextHash) -> u64 {
    u64::from_le_bytes(hash[..8].try_into().unwrap_or([0; 8]))
}

/// What a sync or update did (also what the index's owner answers another process with, so
/// it crosses the owner's socket as JSON).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SyncReport {
    /// Files looked at.
    pub files_seen: usize,
    /// Files (re-)chunked.
    pub files_chunked: usize,
    /// Files whose bytes were unchanged (only the mtime moved, or nothing at all).
    pub files_unchanged: usize,
    /// Files removed from the index.
    pub files_removed: usize,
    /// Files that could not be indexed, with why.
    pub failed: Vec<(String, String)>,
    /// Chunks written.
    pub chunks_written: usize,
    /// Texts embedded (distinct embed texts that had no vector, or every text of the vault
    /// for [`Pass::ReEmbed`]).
    pub texts_embedded: usize,
    /// Distinct embed texts of the chunks written that kept the vector already stored for
    /// them (a `--full` pass over unchanged notes embeds nothing). Defaults to 0 when an older
    /// owner answers without it.
    #[serde(default)]
    pub texts_reused: usize,
    /// Seconds taken.
    pub seconds: f64,
}

/// How much of a vault a pass redoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pass {
    /// Files whose size, mtime or chunker fingerprint changed (and, of those, whose bytes did).
    Changed,
    /// Every file is re-read and re-chunked and the lexical entries rewritten; vectors are
    /// keyed by their text's hash, so only texts with no stored vector are embedded and an
    /// interrupted full pass keeps every vector it made.
    Full,
    /// A full pass that also embeds every text of the vault again, replacing stored vectors:
    /// for a model that changed in a way its identity does not show (weights swapped in place
    /// under the same folder and size). Interrupted, it leaves old and new vectors mixed until
    /// it is run again.
    ReEmbed,
    /// A [`Pass::Changed`] that stops before embedding: changed files are chunked and their
    /// lexical entries committed, nothing is embedded. A first build runs it over every vault
    /// before embedding anything, so every vault is searchable by words within seconds.
    Words,
}

impl Pass {
    /// `Full` when `full`, else `Changed`.
    pub fn from_full(full: bool) -> Pass {
        if full { Pass::Full } else { Pass::Changed }
    }

    /// Whether every file is re-read and re-chunked.
    pub fn is_full(self) -> bool {
        matches!(self, Pass::Full | Pass::ReEmbed)
    }
}

/// The settings the index needs, taken from the configuration once.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// Chunk sizes.
    pub chunking: ChunkConfig,
    /// Root-relative folders never indexed.
    pub exclude_dirs: Vec<String>,
    /// Prefix of every embed text.
    pub document_prefix: String,
    /// Document suffixes (lowercase, with the dot) whose extracted text is indexed.
    pub doc_suffixes: Vec<String>,
    /// The folder name documents are filed in (a document's description is its owner).
    pub files_dir: String,
    /// How documents are extracted.
    pub extract: ExtractSettings,
}

impl IndexSettings {
    /// The index settings of a configuration.
    pub fn from_config(config: &Config) -> IndexSettings {
        IndexSettings {
            chunking: ChunkConfig {
                target_tokens: config.chunking.target_tokens,
                overlap_tokens: config.chunking.overlap_tokens,
                min_tokens: config.chunking.min_tokens,
            },
            exclude_dirs: config.search.exclude_dirs.clone(),
            document_prefix: config.embedding.document_prefix.clone(),
            doc_suffixes: config.vault.doc_suffixes.clone(),
            files_dir: config.vault.doc_files_dir.clone(),
            extract: ExtractSettings { ocr: config.vault.doc_ocr, ..ExtractSettings::default() },
        }
    }

    /// A digest of everything that changes chunk output: when it differs from a file's, the
    /// file is re-chunked even if its bytes did not change.
    pub fn fingerprint(&self) -> String {
        let c = &self.chunking;
        let text = format!(
            "chunker={} target={} overlap={} min={} prefix={:?} files={:?}",
            chunker::CHUNKER_VERSION,
            c.target_tokens,
            c.overlap_tokens,
            c.min_tokens,
            self.document_prefix,
            self.files_dir
        );
        hex(&Sha256::digest(text.as_bytes()))[..16].to_string()
    }

    /// The document suffix `rel` ends with, if any.
    pub fn document_suffix(&self, rel: &str) -> Option<&str> {
        suffix_of(&self.doc_suffixes, rel)
    }

    /// True for a vault path that is indexed: a note or an allowlisted document outside
    /// hidden, excluded and generated places.
    pub fn is_indexed(&self, rel: &str) -> bool {
        self.skip_reason(rel).is_none()
    }

    /// Why the indexer leaves `rel` out, in words (one phrase per rule, so `status` can group
    /// files by it); `None` when it is indexed.
    pub fn skip_reason(&self, rel: &str) -> Option<String> {
        let note = rel.to_ascii_lowercase().ends_with(".md");
        if !note && self.document_suffix(rel).is_none() {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
            return Some(match ext.filter(|e| !e.is_empty()) {
                Some(e) => format!(
                    "neither a note (.md) nor a document suffix in vault.doc_suffixes (.{e})"
                ),
                None => "neither a note (.md) nor a document (no suffix)".to_string(),
            });
        }
        if rel.eq_ignore_ascii_case("index.md") {
            return Some("the generated index.md at the root".to_string());
        }
        let parts: Vec<&str> = rel.split('/').collect();
        if parts.iter().any(|p| p.starts_with('.')) {
            return Some("inside a hidden folder".to_string());
        }
        if parts.iter().any(|p| p.eq_ignore_ascii_case("node_modules")) {
            return Some("inside node_modules".to_string());
        }
        self.exclude_dirs
            .iter()
            .find(|d| under(rel, d))
            .map(|d| format!("in {d}/, listed in search.exclude_dirs"))
    }
}

/// The suffix of `suffixes` (lowercase, with the dot) that `rel` ends with, if any.
fn suffix_of<'a>(suffixes: &'a [String], rel: &str) -> Option<&'a str> {
    let lower = rel.to_ascii_lowercase();
    suffixes.iter().find(|s| lower.ends_with(s.as_str())).map(String::as_str)
}

/// True when `rel` lies under folder `dir` (case-insensitive, whole segments).
pub fn under(rel: &str, dir: &str) -> bool {
    let dir = dir.trim_matches('/');
    if dir.is_empty() {
        return true;
    }
    rel.len() > dir.len()
        && rel.is_char_boundary(dir.len())
        && rel[..dir.len()].eq_ignore_ascii_case(dir)
        && rel.as_bytes()[dir.len()] == b'/'
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// sha256 of a text.
pub fn text_hash(text: &str) -> TextHash {
    Sha256::digest(text.as_bytes()).into()
}

/// The chunk metadata search shows, shared between the catalog and results.
pub type ChunkMeta = Arc<ChunkInfo>;

/// Document extraction with its results remembered in the store by the sha256 of the bytes,
/// so a restart, a rename or a second read never extracts (or OCRs) the same bytes twice.
/// Usable without an [`Index`] (the CLI reads documents without loading a model).
#[derive(Debug)]
pub struct Extractions {
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
    pub fn new(settings: &IndexSettings) -> Extractions {
        Extractions {
            extractor: Extractor::new(settings.extract.clone()),
            suffixes: settings.doc_suffixes.clone(),
            in_flight: Mutex::new(HashSet::new()),
            done: std::sync::Condvar::new(),
        }
    }

    /// The extractor in use.
    pub fn extractor(&self) -> &Extractor {
        &self.extractor
    }

    /// The sha256 of `bytes` and their extraction: from `store` when these bytes were
    /// extracted before by an extractor like this one, else extracted now and remembered.
    /// `rel` picks the extractor by suffix.
    pub fn get(&self, store: &Store, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)> {
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
pub struct StoreDocuments<'a> {
    /// The store holding the cache.
    pub store: &'a Store,
    /// The extraction.
    pub extractions: &'a Extractions,
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
}

/// Query texts whose vectors are kept: an agent repeats itself (the same question after each
/// edit, the same title looked up by several tools), and embedding a query is most of a
/// search's CPU time. 1024 vectors of 384 floats are 1.5 MiB.
const QUERY_VECTORS_KEPT: usize = 1024;

/// The most recently used query vectors, by the exact text embedded. It lives in the
/// [`Index`], whose embedder never changes, so a cached vector is always the one the embedder
/// would return now.
#[derive(Default)]
struct QueryVectors {
    by_text: HashMap<String, (Arc<Vec<f32>>, u64)>,
    clock: u64,
}

impl QueryVectors {
    fn get(&mut self, text: &str) -> Option<Arc<Vec<f32>>> {
        self.clock += 1;
        let clock = self.clock;
        self.by_text.get_mut(text).map(|(v, used)| {
            *used = clock;
            v.clone()
        })
    }

    fn put(&mut self, text: &str, vector: Arc<Vec<f32>>) {
        if self.by_text.len() >= QUERY_VECTORS_KEPT
            && let Some(oldest) =
                self.by_text.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone())
        {
            // A linear scan per miss on a full cache: microseconds next to the embedding.
            self.by_text.remove(&oldest);
        }
        self.clock += 1;
        self.by_text.insert(text.to_string(), (vector, self.clock));
    }
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
    pub fn open(
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
    pub fn open_reader(
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
        }
    }

    /// Whether this index was opened read-only ([`Index::open_reader`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// For a read-only index: when the owner has committed since the last look, reloads the
    /// catalog and the dense matrix from the store and the lexical reader from disk, so search
    /// follows the owner. A no-op for the owner's own index, which it changes itself.
    pub fn follow_owner(&self) -> Result<()> {
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
                        let lex = chunker::lexical_text(&info.title, &info.breadcrumb, text);
                        self.lexical.add(info.id as u64, &info.vault, &info.path, &lex)?;
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
        let files: HashMap<i64, Arc<FileMeta>> = self
            .store
            .catalog_files()?
            .into_iter()
            .map(|(id, vault, path, kind)| (id, self.file_meta(vault, &path, kind)))
            .collect();
        let mut catalog = Catalog::with_capacity(files.len() * 4);
        self.store.for_each_chunk_file(|id, file| {
            if let Some(file) = files.get(&file) {
                catalog.insert(id, Slot { file: file.clone(), hash: 0 });
            }
        })?;
        self.store.for_each_chunk_hash(|id, hash| {
            if let Some(slot) = catalog.get_mut(id) {
                slot.hash = hash_prefix(&hash);
            }
        })?;
        Ok(catalog)
    }

    /// A file's catalog entry.
    fn file_meta(&self, vault: String, path: &str, kind: FileKind) -> Arc<FileMeta> {
        let vault_index =
            self.vault_names.iter().position(|v| *v == vault).unwrap_or(u32::MAX as usize) as u32;
        Arc::new(FileMeta { vault, vault_index, path: Arc::from(path), kind })
    }

    /// The dense rows for `catalog`: the vectors file's rows whose chunk still has the same
    /// text, plus, from the store, the vectors the file lacks. The owner rewrites the file
    /// from the store first when it is missing or unusable, and after when too much of it was
    /// out of step; a reader never writes it (it reads the store instead).
    fn load_dense(&self, catalog: &Catalog) -> Result<Dense> {
        let dims = self.embedder.dims();
        let model = model_key(&self.embedder);
        let file = match vectors::VectorFile::open(&self.vectors_path, dims, &model) {
            Ok(f) => Some(f),
            Err(why) if !self.read_only => {
                tracing::info!("rebuilding {} from the store: {why}", self.vectors_path.display());
                match self.write_vectors_file(catalog) {
                    Ok(()) => vectors::VectorFile::open(&self.vectors_path, dims, &model).ok(),
                    Err(e) => {
                        tracing::warn!("{e}");
                        None
                    }
                }
            }
            Err(_) => None,
        };
        let Some(file) = file else {
            let mut dense = Dense::new(dims);
            self.store.for_each_chunk_vector(|id, v| {
                if let Some(slot) = catalog.get(id) {
                    dense.insert(row_key(id, slot), &v);
                }
            })?;
            return Ok(dense);
        };
        let with_vectors: HashSet<i64> = self.store.chunk_ids_with_vectors()?.into_iter().collect();
        let keys: Vec<Option<RowKey>> = (0..file.rows())
            .map(|r| {
                let (id, hash) = file.key(r);
                let slot = catalog.get(id)?;
                (with_vectors.contains(&id) && slot.hash == hash).then(|| row_key(id, slot))
            })
            .collect();
        let mut dense = Dense::with_base(dims, Arc::new(file), keys);
        let missing: Vec<i64> =
            with_vectors.iter().copied().filter(|id| !dense.contains(*id)).collect();
        for (id, v) in self.store.chunk_vectors(&missing)? {
            if let Some(slot) = catalog.get(id) {
                dense.insert(row_key(id, slot), &v);
            }
        }
        if !self.read_only && self.vectors_file_is_stale(&dense) {
            match self.write_vectors_file(catalog) {
                Ok(()) => return self.load_dense(catalog),
                Err(e) => tracing::warn!("{e}"),
            }
        }
        Ok(dense)
    }

    /// Whether the file misses (or holds unused) enough rows to be worth rewriting.
    fn vectors_file_is_stale(&self, dense: &Dense) -> bool {
        let unused = dense.base_rows() - (dense.len() - dense.overlay_len());
        let drift = dense.overlay_len() + unused;
        drift > VECTORS_REWRITE_ROWS.max(dense.len() / VECTORS_REWRITE_FRACTION)
    }

    /// Writes the vectors file from the store: every chunk that has a vector, in id order.
    fn write_vectors_file(&self, catalog: &Catalog) -> Result<()> {
        let count = self.store.chunk_ids_with_vectors()?.len();
        let mut writer = vectors::Writer::create(
            &self.vectors_path,
            self.embedder.dims(),
            &model_key(&self.embedder),
            count,
        )?;
        let mut failed = None;
        self.store.for_each_chunk_vector(|id, v| {
            let hash = catalog.get(id).map_or(0, |slot| slot.hash);
            if failed.is_none()
                && let Err(e) = writer.push(id, hash, &v)
            {
                failed = Some(e);
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        writer.finish()
    }

    /// After a pass: rewrites the vectors file when the rows kept in memory beside it (or the
    /// rows of it no longer used) have grown past the rewrite rule, so the next start maps it
    /// whole and this process's memory drops back to the file's pages.
    fn refresh_vectors_file(&self) -> Result<()> {
        if self.read_only || !self.vectors_file_is_stale(&self.dense()) {
            return Ok(());
        }
        self.move_overlay_to_file()
    }

    /// The store (read access for search and status).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The lexical index.
    pub fn lexical(&self) -> &LexicalIndex {
        &self.lexical
    }

    /// The embedder.
    pub fn embedder(&self) -> &Embedder {
        &self.embedder
    }

    /// The vector of a query text (already prefixed), from the recently used ones or
    /// embedded now. The lock is not held while embedding: two searches for the same new text
    /// may both embed it, which costs less than making one wait for the other.
    pub fn embed_query(&self, text: &str) -> std::result::Result<Arc<Vec<f32>>, EmbedError> {
        let cached = self.query_vectors.lock().unwrap_or_else(|p| p.into_inner()).get(text);
        if let Some(v) = cached {
            return Ok(v);
        }
        let mut rows = self.embedder.embed(&[text])?;
        if rows.is_empty() {
            return Err(EmbedError::Other("the embedder returned no vector".to_string()));
        }
        let v = Arc::new(rows.swap_remove(0));
        self.query_vectors.lock().unwrap_or_else(|p| p.into_inner()).put(text, v.clone());
        Ok(v)
    }

    /// The dense matrix (read-locked for a query).
    pub fn dense(&self) -> std::sync::RwLockReadGuard<'_, Dense> {
        self.dense.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Chunk metadata by id, for the chunks of `ids` in the catalog (read from the store:
    /// the catalog keeps only what every chunk needs).
    pub fn chunks(&self, ids: &[i64]) -> Result<HashMap<i64, ChunkMeta>> {
        let known: Vec<i64> = {
            let catalog = self.catalog.read().unwrap_or_else(|p| p.into_inner());
            ids.iter().copied().filter(|id| catalog.contains(*id)).collect()
        };
        Ok(self.store.chunk_infos(&known)?.into_iter().map(|i| (i.id, Arc::new(i))).collect())
    }

    /// The configured vault names, in order (dense rows refer to vaults by this position).
    pub fn vault_names(&self) -> &[String] {
        &self.vault_names
    }

    /// The index settings.
    pub fn settings(&self) -> &IndexSettings {
        &self.settings
    }

    /// Every indexed folder of a vault (each ancestor folder of an indexed file), sorted.
    pub fn folders(&self, vault: Option<&str>) -> Vec<String> {
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

    /// Brings one vault up to date. A full pass re-reads and re-chunks every file of this vault
    /// (and of no other); vectors are keyed by their text, so unchanged texts keep theirs and
    /// only new texts are embedded, unless the pass is [`Pass::ReEmbed`]. Only the indexer
    /// thread calls this.
    pub(crate) fn sync(
        &self,
        vault: &Vault,
        pass: Pass,
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        self.writable()?;
        let full = pass.is_full();
        let started = Instant::now();
        let mut report = SyncReport::default();
        let files: Vec<FileStat> =
            vault.scan().into_iter().filter(|f| self.settings.is_indexed(&f.path)).collect();
        report.files_seen = files.len();
        let known: HashMap<String, store::FileRow> =
            self.store.files(vault.name())?.into_iter().map(|r| (r.path.clone(), r)).collect();
        let seen: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let fingerprint = self.settings.fingerprint();

        let mut batch = Batch::default();
        for (path, _) in known.iter().filter(|(p, _)| !seen.contains(p.as_str())) {
            batch.deletes.push((vault.name().to_string(), path.clone()));
            report.files_removed += 1;
        }
        let mut pending: Vec<(FileUpdate, Vec<String>)> = Vec::new();
        // The distinct embed texts of the chunks this pass writes, to count those that keep
        // their stored vector.
        let mut written: HashSet<TextHash> = HashSet::new();
        for (n, stat) in files.iter().enumerate() {
            progress.files(n, files.len());
            let row = known.get(&stat.path);
            let same_fingerprint = row.is_some_and(|r| r.fingerprint == fingerprint);
            if !full
                && same_fingerprint
                && row.is_some_and(|r| r.size == stat.size && r.mtime_ns == stat.mtime_ns)
            {
                report.files_unchanged += 1;
                continue;
            }
            let stored = row.filter(|_| !full && same_fingerprint).map(|r| r.sha256.as_str());
            match self.prepare(vault, stat, &fingerprint, stored) {
                Ok(None) => {
                    if let Some(r) = row {
                        batch.touches.push((r.id, stat.mtime_ns));
                    }
                    report.files_unchanged += 1;
                }
                Ok(Some((update, lexical))) => {
                    if update.status == FileStatus::Failed {
                        report.failed.push((update.path.clone(), update.detail.clone()));
                    }
                    report.files_chunked += 1;
                    report.chunks_written += update.chunks.len();
                    written.extend(update.chunks.iter().map(|c| c.embed_hash));
                    pending.push((update, lexical));
                }
                Err(e) => {
                    // The file vanished or became unreadable between the walk and the read.
                    report.failed.push((stat.path.clone(), e.message().to_string()));
                }
            }
            if pending.len() >= FILES_PER_BATCH {
                self.commit_files(&mut batch, &mut pending)?;
            }
        }
        self.commit_files(&mut batch, &mut pending)?;
        progress.files(files.len(), files.len());

        if pass == Pass::Words {
            // Not a build: the embedding pass that follows records the last build.
            report.seconds = started.elapsed().as_secs_f64();
            return Ok(report);
        }
        if pass == Pass::ReEmbed {
            report.texts_embedded = self.re_embed(vault.name(), progress)?;
            // Texts another vault's chunks still lack (not this pass's concern, but cheap).
            self.embed_pending(&Silent)?;
        } else {
            let written: Vec<TextHash> = written.into_iter().collect();
            report.texts_reused = self.store.present_vectors(&written)?.len();
            report.texts_embedded = self.embed_pending(progress)?;
        }
        if full {
            self.store.prune_vectors()?;
            self.store.prune_extractions()?;
        }
        // The file is derived: failing to rewrite it costs memory, not correctness.
        if let Err(e) = self.refresh_vectors_file() {
            tracing::warn!("{e}");
        }
        report.seconds = started.elapsed().as_secs_f64();
        let last = coverage::LastBuild {
            at: crate::vault::now_timestamp(),
            seconds: report.seconds,
            files_seen: report.files_seen,
            files_chunked: report.files_chunked,
            files_removed: report.files_removed,
            failed: report.failed.len(),
            texts_embedded: report.texts_embedded,
        };
        if let Ok(json) = serde_json::to_string(&last) {
            self.store.set_meta(&coverage::LastBuild::key(vault.name()), &json)?;
        }
        Ok(report)
    }

    /// Re-indexes some paths of a vault (a write, watcher events): changed files are
    /// re-chunked, vanished ones removed, new vectors embedded. `searchable` is called once the
    /// files' chunks and lexical entries are committed (a search finds their words from then
    /// on) and before their texts are embedded, which for a large note takes seconds. Only the
    /// indexer thread calls this.
    pub(crate) fn update_paths(
        &self,
        vault: &Vault,
        paths: &[String],
        searchable: &mut dyn FnMut(&SyncReport),
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        self.writable()?;
        self.update_paths_locked(vault, paths, searchable, progress)
    }

    /// Refuses a write on a read-only index: a reader's jobs go to the owner.
    fn writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::new(
                ErrorCode::InternalError,
                "this process opened the index read-only beside its owner and cannot write it; \
                 this is a bug, please report it",
            ));
        }
        Ok(())
    }

    fn update_paths_locked(
        &self,
        vault: &Vault,
        paths: &[String],
        searchable: &mut dyn FnMut(&SyncReport),
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        let started = Instant::now();
        let mut report = SyncReport::default();
        // Only these paths' rows (and a folder's files): a write's re-index must not read
        // the vault's whole table.
        let known: HashMap<String, store::FileRow> = self
            .store
            .files_at(vault.name(), paths)?
            .into_iter()
            .map(|r| (r.path.clone(), r))
            .collect();
        let fingerprint = self.settings.fingerprint();
        let mut batch = Batch::default();
        let mut pending = Vec::new();
        let mut written: HashSet<TextHash> = HashSet::new();
        for path in paths {
            report.files_seen += 1;
            let stat = vault.stat(path).filter(|s| self.settings.is_indexed(&s.path));
            let Some(stat) = stat else {
                // Gone, or a folder (whose files, if renamed away, are gone with it).
                for gone in known.keys().filter(|k| *k == path || under(k, path)) {
                    if !vault.stat(gone).is_some_and(|s| self.settings.is_indexed(&s.path))
                        && !batch.deletes.iter().any(|(_, p)| p == gone)
                    {
                        batch.deletes.push((vault.name().to_string(), gone.clone()));
                        report.files_removed += 1;
                    }
                }
                continue;
            };
            let row = known.get(&stat.path);
            let stored = row.filter(|r| r.fingerprint == fingerprint).map(|r| r.sha256.as_str());
            match self.prepare(vault, &stat, &fingerprint, stored) {
                Ok(None) => {
                    if let Some(r) = row
                        && r.mtime_ns != stat.mtime_ns
                    {
                        batch.touches.push((r.id, stat.mtime_ns));
                    }
                    report.files_unchanged += 1;
                }
                Ok(Some((update, lexical))) => {
                    report.files_chunked += 1;
                    report.chunks_written += update.chunks.len();
                    written.extend(update.chunks.iter().map(|c| c.embed_hash));
                    pending.push((update, lexical));
                }
                Err(e) => report.failed.push((stat.path.clone(), e.message().to_string())),
            }
        }
        self.commit_files(&mut batch, &mut pending)?;
        let written: Vec<TextHash> = written.into_iter().collect();
        report.texts_reused = self.store.present_vectors(&written)?.len();
        searchable(&report);
        // Every text still without a vector, not only these paths': during a first build this
        // job may be the one that embeds most of the vault, so it reports its progress too.
        report.texts_embedded = self.embed_pending(progress)?;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// The extractor documents are read with.
    pub fn extractor(&self) -> &Extractor {
        self.extractions.extractor()
    }

    /// A document's extraction, cached in the store (see [`Extractions::get`]).
    pub fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)> {
        self.extractions.get(&self.store, rel, bytes)
    }

    /// Reads and chunks one file. Returns the update and each chunk's lexical text, or `None`
    /// when its bytes still hash to `stored` (the sha256 its row has, under this chunker's
    /// fingerprint): a file a write's refresh already indexed, seen again by the watcher, is
    /// then read and hashed but not chunked a second time.
    fn prepare(
        &self,
        vault: &Vault,
        stat: &FileStat,
        fingerprint: &str,
        stored: Option<&str>,
    ) -> Result<Option<(FileUpdate, Vec<String>)>> {
        let bytes = vault.read_bytes(&stat.path)?;
        if stored.is_some_and(|sha| sha == crate::vault::content_hash(&bytes)) {
            return Ok(None);
        }
        let mut update = FileUpdate {
            vault: vault.name().to_string(),
            path: stat.path.clone(),
            kind: FileKind::Note,
            size: stat.size,
            mtime_ns: stat.mtime_ns,
            sha256: String::new(),
            title: String::new(),
            description: String::new(),
            status: FileStatus::Indexed,
            detail: String::new(),
            fingerprint: fingerprint.to_string(),
            chunks: Vec::new(),
        };
        let note = if self.settings.document_suffix(&stat.path).is_some() {
            let (sha256, extraction) = self.extraction(&stat.path, &bytes)?;
            update.sha256 = sha256;
            update.kind = FileKind::Document;
            update.status = FileStatus::of_document(extraction.verdict.status);
            update.detail = extraction.verdict.detail.clone();
            chunker::chunk_document(
                &stat.path,
                &extraction.markdown,
                &self.settings.files_dir,
                &self.settings.chunking,
            )
        } else {
            update.sha256 = crate::vault::content_hash(&bytes);
            let Ok(text) = String::from_utf8(bytes) else {
                update.status = FileStatus::Failed;
                update.detail = "not valid UTF-8 text".to_string();
                return Ok(Some((update, Vec::new())));
            };
            chunker::chunk_note(&stat.path, &text, &self.settings.chunking)
        };
        let mut lexical = Vec::with_capacity(note.chunks.len());
        for c in &note.chunks {
            let embed = chunker::embed_text(
                &self.settings.document_prefix,
                &note.title,
                &note.description,
                &c.breadcrumb,
                &c.text,
            );
            lexical.push(chunker::lexical_text(&note.title, &c.breadcrumb, &c.text));
            update.chunks.push(NewChunk {
                breadcrumb: c.breadcrumb.clone(),
                line: c.line,
                text: c.text.clone(),
                embed_hash: text_hash(&embed),
            });
        }
        if update.chunks.is_empty() && update.kind == FileKind::Note {
            update.status = FileStatus::Skipped;
            update.detail = "no text to index".to_string();
        }
        update.title = note.title;
        update.description = note.description;
        Ok(Some((update, lexical)))
    }

    /// Commits the pending file changes in one transaction and applies them to the lexical
    /// index, the catalog and the dense matrix.
    fn commit_files(
        &self,
        batch: &mut Batch,
        pending: &mut Vec<(FileUpdate, Vec<String>)>,
    ) -> Result<()> {
        if pending.is_empty() && batch.deletes.is_empty() && batch.touches.is_empty() {
            return Ok(());
        }
        let mut b = std::mem::take(batch);
        let work = std::mem::take(pending);
        let mut lexical_texts = Vec::new();
        for (update, lexical) in work {
            lexical_texts.push(lexical);
            b.upserts.push(update);
        }
        let upserts = b.upserts.clone();
        let applied = self.store.apply(b)?;
        if upserts.is_empty() && applied.removed.is_empty() {
            // Only mtimes moved (the watcher seeing a write the indexer already took in): no
            // chunk changed, so there is no lexical commit to pay for (an fsync per event).
            return Ok(());
        }

        // Deletions are staged before additions, so a reused id could never delete its new chunk.
        for id in &applied.removed {
            self.lexical.delete(*id as u64)?;
        }
        // Map the new chunk ids back to their files, in insertion order.
        let mut ids = applied.added.iter();
        let mut new_slots: Vec<(i64, Slot)> = Vec::new();
        for (update, lexical) in upserts.iter().zip(&lexical_texts) {
            let file = self.file_meta(update.vault.clone(), &update.path, update.kind);
            for (chunk, lex) in update.chunks.iter().zip(lexical) {
                let Some(&id) = ids.next() else { break };
                self.lexical.add(id as u64, &update.vault, &update.path, lex)?;
                new_slots
                    .push((id, Slot { file: file.clone(), hash: hash_prefix(&chunk.embed_hash) }));
            }
        }
        self.lexical.commit(&applied.generation.to_string())?;

        let vectors = self.store.chunk_vectors(&applied.added)?;
        {
            let mut catalog = self.catalog.write().unwrap_or_else(|p| p.into_inner());
            for id in &applied.removed {
                catalog.remove(*id);
            }
            for (id, slot) in &new_slots {
                catalog.insert(*id, slot.clone());
            }
        }
        let mut dense = self.dense.write().unwrap_or_else(|p| p.into_inner());
        for id in &applied.removed {
            dense.remove(*id);
        }
        let by_id: HashMap<i64, &Slot> = new_slots.iter().map(|(id, s)| (*id, s)).collect();
        for (id, v) in vectors {
            if let Some(slot) = by_id.get(&id) {
                dense.insert(row_key(id, slot), &v);
            }
        }
        Ok(())
    }

    /// Embeds every chunk whose embed text has no vector yet; returns how many texts.
    pub(crate) fn embed_pending(&self, progress: &dyn Progress) -> Result<usize> {
        self.writable()?;
        let total = self.store.texts_missing_vectors()?;
        self.embed_pages(total, false, progress, |after| {
            self.store.chunks_missing_vectors(after, EMBED_PAGE_CHUNKS)
        })
    }

    /// Embeds every text of one vault again, replacing the stored vectors; returns how many.
    fn re_embed(&self, vault: &str, progress: &dyn Progress) -> Result<usize> {
        let total = self.store.vault_texts(vault)?;
        self.embed_pages(total, true, progress, |after| {
            self.store.vault_chunk_texts(vault, after, EMBED_PAGE_CHUNKS)
        })
    }

    /// Embeds the distinct embed texts of the chunks `page` yields (a page of chunks with ids
    /// above the argument, in id order, empty at the end), committing as it goes; with
    /// `replace`, the new vectors overwrite stored ones. `total` is the distinct texts expected,
    /// for progress. Returns how many texts.
    ///
    /// Memory stays bounded at any vault size: one page of texts is held at a time, and the
    /// vectors added to the in-memory overlay are moved into the vectors file whenever they
    /// pass [`Index::overlay_is_full`].
    fn embed_pages(
        &self,
        total: usize,
        replace: bool,
        progress: &dyn Progress,
        page: impl Fn(i64) -> Result<Vec<(ChunkInfo, String)>>,
    ) -> Result<usize> {
        let mut done = 0;
        let mut after = 0;
        // A re-embed pages through every chunk, so a text shared by chunks on two pages would
        // be embedded twice; the texts already replaced are skipped.
        let mut replaced: HashSet<TextHash> = HashSet::new();
        progress.embedded(0, total);
        loop {
            let chunks = page(after)?;
            let Some(last) = chunks.last() else { break };
            after = last.0.id;
            // One embedding per distinct text, however many chunks share it.
            let mut texts: Vec<(TextHash, String)> = Vec::new();
            let mut seen: HashSet<TextHash> = HashSet::new();
            for (info, text) in chunks {
                if replaced.contains(&info.embed_hash) || !seen.insert(info.embed_hash) {
                    continue;
                }
                let embed = chunker::embed_text(
                    &self.settings.document_prefix,
                    &info.title,
                    &info.description,
                    &info.breadcrumb,
                    &text,
                );
                texts.push((info.embed_hash, embed));
            }
            for part in texts.chunks(TEXTS_PER_EMBED) {
                self.embed_part(part, replace, done, total.max(done + part.len()))?;
                done += part.len();
                progress.embedded(done, total.max(done));
            }
            if replace {
                replaced.extend(texts.iter().map(|(h, _)| *h));
            }
            if self.overlay_is_full()
                && let Err(e) = self.move_overlay_to_file()
            {
                // The file is derived: failing to write it costs memory, not correctness.
                tracing::warn!("{e}");
            }
        }
        Ok(done)
    }

    /// Embeds and stores one batch of texts, and gives every chunk of those texts still in
    /// the catalog its row (a chunk on a later page sharing a text embedded now included).
    fn embed_part(
        &self,
        part: &[(TextHash, String)],
        replace: bool,
        done: usize,
        total: usize,
    ) -> Result<()> {
        let inputs: Vec<&str> = part.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = self.embedder.embed(&inputs).map_err(|e| {
            Error::new(
                ErrorCode::InternalError,
                format!("embedding failed: {e}; {done} of {total} texts were embedded and kept"),
            )
        })?;
        let mut batch = Batch { replace_vectors: replace, ..Batch::default() };
        for ((hash, _), v) in part.iter().zip(vectors) {
            batch.vectors.push((*hash, v));
        }
        let hashes: Vec<TextHash> = part.iter().map(|(h, _)| *h).collect();
        let rows: HashMap<TextHash, Vec<f32>> = batch.vectors.iter().cloned().collect();
        self.store.apply(batch)?;
        let owners = self.store.chunks_of_texts(&hashes)?;
        // Only chunks still in the catalog get a row: a file may have changed meanwhile.
        let catalog = self.catalog.read().unwrap_or_else(|p| p.into_inner());
        let mut dense = self.dense.write().unwrap_or_else(|p| p.into_inner());
        for (hash, id) in owners {
            if let (Some(slot), Some(v)) = (catalog.get(id), rows.get(&hash)) {
                dense.insert(row_key(id, slot), v);
            }
        }
        Ok(())
    }

    /// Whether the vectors held in memory beside the file have grown past what a pass may
    /// keep there: [`OVERLAY_ROWS_MAX`], or a quarter of all rows once that is more (so the
    /// rewrites of a growing index stay a geometric series, a few times its final size).
    fn overlay_is_full(&self) -> bool {
        let dense = self.dense();
        dense.overlay_len() > OVERLAY_ROWS_MAX.max(dense.len() / 4)
    }

    /// Rewrites the vectors file from the store and maps it in place of the overlay.
    fn move_overlay_to_file(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        let catalog = self.catalog.read().unwrap_or_else(|p| p.into_inner()).clone();
        self.write_vectors_file(&catalog)?;
        let dense = self.load_dense(&catalog)?;
        *self.dense.write().unwrap_or_else(|p| p.into_inner()) = dense;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(exclude: &[&str]) -> IndexSettings {
        IndexSettings {
            chunking: ChunkConfig::DEFAULT,
            exclude_dirs: exclude.iter().map(|s| s.to_string()).collect(),
            document_prefix: String::new(),
            doc_suffixes: vec![".pdf".into()],
            files_dir: "Files".into(),
            extract: ExtractSettings::default(),
        }
    }

    #[test]
    fn exclusions_are_root_relative_whole_segments() {
        let s = settings(&["Workflows", "Reports/Daily"]);
        assert!(s.is_indexed("Home/Boiler.md"));
        assert!(!s.is_indexed("Workflows/x.md"));
        assert!(!s.is_indexed("workflows/Sub/x.md"));
        assert!(s.is_indexed("Workflows Archive/x.md"));
        assert!(s.is_indexed("Reports/Weekly/x.md"));
        assert!(!s.is_indexed("Reports/Daily/x.md"));
        assert!(!s.is_indexed("index.md"));
        assert!(s.is_indexed("Sub/index.md"));
        assert!(!s.is_indexed("a/node_modules/x.md"));
        assert!(!s.is_indexed(".trash/x.md"));
        assert!(s.is_indexed("Home/Files/scan.PDF"));
        assert!(!s.is_indexed("Workflows/Files/scan.pdf"));
        assert!(!s.is_indexed("Home/photo.png"));
        assert_eq!(s.document_suffix("a/B.Pdf"), Some(".pdf"));
    }

    #[test]
    fn the_query_cache_keeps_the_most_recently_used_vectors() {
        let mut q = QueryVectors::default();
        for i in 0..QUERY_VECTORS_KEPT {
            q.put(&format!("q{i}"), Arc::new(vec![i as f32]));
        }
        // Using q0 makes q1 the least recently used, so the next new text evicts q1.
        assert_eq!(q.get("q0").map(|v| v[0]), Some(0.0));
        q.put("new", Arc::new(vec![-1.0]));
        assert_eq!(q.by_text.len(), QUERY_VECTORS_KEPT);
        assert!(q.get("q1").is_none());
        assert!(q.get("q0").is_some() && q.get("new").is_some() && q.get("q2").is_some());
    }

    #[test]
    fn the_fingerprint_follows_chunk_settings() {
        let a = settings(&[]);
        let mut b = settings(&[]);
        assert_eq!(a.fingerprint(), b.fingerprint());
        b.chunking.target_tokens = 300;
        assert_ne!(a.fingerprint(), b.fingerprint());
        let mut c = settings(&[]);
        c.document_prefix = "search_document: ".into();
        assert_ne!(a.fingerprint(), c.fingerprint());
    }

    /// A vault of `n` one-chunk notes, indexed with the hashing embedder.
    fn indexed(root: &Path, data: &Path, n: usize) -> (Index, Vault) {
        for i in 0..n {
            let text =
                format!("# Note {i}\n\nThe {i} walrus keeps item {} in tray {}.\n", i * 7, i % 13);
            std::fs::write(root.join(format!("n{i}.md")), text).unwrap();
        }
        let vs = crate::config::VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 1 << 20,
            timestamp_key: "timestamp".into(),
        };
        let vault = Vault::open("v", root, &vs).unwrap();
        (open_at(data), vault)
    }

    fn open_at(data: &Path) -> Index {
        let embedder = Arc::new(Embedder::Hashing(crate::embed::hashing::HashingEmbedder::new(32)));
        Index::open(data, vec!["v".into()], settings(&[]), embedder).unwrap()
    }

    /// Chunks per page in the paging tests: small enough that the copies of one text land on
    /// pages after the page that holds the original (the real page is 4096 chunks).
    const TEST_PAGE: usize = 2;

    /// A vault of nine notes plus `z1/n3.md` and `z2/n3.md`, copies of `n3.md` (one embed text,
    /// as the title is the file name, for three chunks), indexed for words only, so no chunk
    /// has a vector yet.
    fn with_copies_across_pages(root: &Path, data: &Path) -> (Index, Vault) {
        let (index, vault) = indexed(root, data, 9);
        let same = std::fs::read_to_string(root.join("n3.md")).unwrap();
        for copy in ["z1/n3.md", "z2/n3.md"] {
            std::fs::create_dir_all(root.join(copy).parent().unwrap()).unwrap();
            std::fs::write(root.join(copy), &same).unwrap();
        }
        index.sync(&vault, Pass::Words, &Silent).unwrap();
        assert_eq!(index.counts(), (11, 0));
        (index, vault)
    }

    /// Which page (counted from 0) each path's chunk is on when `page` is walked to its end.
    fn pages_of(page: impl Fn(i64) -> Result<Vec<(ChunkInfo, String)>>) -> HashMap<String, usize> {
        let (mut out, mut after, mut n) = (HashMap::new(), 0, 0);
        loop {
            let chunks = page(after).unwrap();
            let Some(last) = chunks.last() else { break };
            after = last.0.id;
            for (info, _) in &chunks {
                out.insert(info.path.clone(), n);
            }
            n += 1;
        }
        out
    }

    /// The dense scores of the three copies of n3's text for a query, by path.
    fn copy_scores(index: &Index) -> Vec<f32> {
        let query = index.embed_query("walrus tray 3").unwrap();
        let top = index.dense().top(&query, 20, &|_| true);
        assert_eq!(top.len(), 11, "every chunk has a row");
        let ids: Vec<i64> = top.iter().map(|t| t.0).collect();
        let infos = index.chunks(&ids).unwrap();
        let copies: Vec<f32> = top
            .iter()
            .filter(|(id, _)| ["n3.md", "z1/n3.md", "z2/n3.md"].contains(&infos[id].path.as_str()))
            .map(|t| t.1)
            .collect();
        assert_eq!(copies.len(), 3);
        copies
    }

    #[test]
    fn an_embedding_pass_in_pages_embeds_a_text_shared_across_pages_once_and_gives_each_chunk_its_row()
     {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (index, _vault) = with_copies_across_pages(root.path(), data.path());
        let page = |after| index.store().chunks_missing_vectors(after, TEST_PAGE);
        let on = pages_of(page);
        assert!(on["z1/n3.md"] > on["n3.md"] && on["z2/n3.md"] > on["n3.md"], "{on:?}");
        let total = index.store().texts_missing_vectors().unwrap();
        assert_eq!(total, 9, "the copies share one text");

        let embedded = index.embed_pages(total, false, &Silent, page).unwrap();
        // The copies' pages no longer list them once n3's page has embedded their text, so
        // their rows come from the page that embedded it.
        assert_eq!(embedded, 9, "each text embedded once");
        assert_eq!(index.counts(), (11, 11), "every chunk has its row");
        assert_eq!(index.store().texts_missing_vectors().unwrap(), 0);
        let copies = copy_scores(&index);
        assert!(copies.iter().all(|s| *s == copies[0]), "the same text, the same vector");
    }

    #[test]
    fn a_re_embed_in_pages_embeds_a_text_shared_across_pages_once_and_keeps_each_chunk_its_row() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (index, _vault) = with_copies_across_pages(root.path(), data.path());
        index.embed_pending(&Silent).unwrap();
        assert_eq!(index.counts(), (11, 11));

        // A re-embed lists every chunk, vector or not, so the copies' pages do list their text
        // again after n3's page replaced its vector.
        let page = |after| index.store().vault_chunk_texts("v", after, TEST_PAGE);
        let on = pages_of(page);
        assert!(on["z1/n3.md"] > on["n3.md"] && on["z2/n3.md"] > on["n3.md"], "{on:?}");
        let total = index.store().vault_texts("v").unwrap();
        assert_eq!(total, 9);
        let again = index.embed_pages(total, true, &Silent, page).unwrap();
        assert_eq!(again, 9, "each text embedded once, not once per page it is on");
        assert_eq!(index.counts(), (11, 11));
        let copies = copy_scores(&index);
        assert!(copies.iter().all(|s| *s == copies[0]), "the same text, the same vector");
    }

    #[test]
    fn the_vectors_file_is_rebuilt_from_the_store_after_deletion_or_truncation() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let n = VECTORS_REWRITE_ROWS + 100;
        let (index, vault) = indexed(root.path(), data.path(), n);
        index.sync(&vault, Pass::Changed, &Silent).unwrap();
        let file = crate::config::DataDir::new(data.path()).vectors();
        let (rows, overlay) = (index.dense().base_rows(), index.dense().overlay_len());
        assert_eq!((rows, overlay), (n, 0), "a pass that embedded this much rewrote the file");
        let query = index.embed_query("walrus tray 7").unwrap();
        let before = index.dense().top(&query, 50, &|_| true);
        assert_eq!(before.len(), 50);
        drop(index);

        let damage: [&dyn Fn(&Path); 3] = [
            &|p| std::fs::remove_file(p).unwrap(),
            &|p| {
                let len = std::fs::metadata(p).unwrap().len();
                std::fs::OpenOptions::new().write(true).open(p).unwrap().set_len(len / 2).unwrap();
            },
            &|p| {
                // Another model's file, whole and well formed.
                let v = [0.0f32; 32];
                vectors::write(p, 32, "another#32", &[(1, 1, &v[..])]).unwrap();
            },
        ];
        for hurt in damage {
            hurt(&file);
            let index = open_at(data.path());
            assert_eq!(index.dense().base_rows(), n, "rebuilt whole");
            assert_eq!(index.dense().overlay_len(), 0);
            assert_eq!(index.dense().top(&query, 50, &|_| true), before);
        }

        // A note edited since the file was written: the file's row is no longer used, the
        // store's new vector is, and the file is left as it is (one edit is not worth a rewrite).
        std::fs::write(root.path().join("n3.md"), "# Note 3\n\nNow about otters.\n").unwrap();
        let index = open_at(data.path());
        index.update_paths(&vault, &["n3.md".into()], &mut |_| {}, &Silent).unwrap();
        assert_eq!(index.dense().len(), n);
        assert_eq!(index.dense().overlay_len(), 1);
        drop(index);
        let index = open_at(data.path());
        assert_eq!((index.dense().len(), index.dense().overlay_len()), (n, 1));
        let otter = index.embed_query("Note 3 Now about otters.").unwrap();
        let got = index.dense().top(&otter, 1, &|_| true);
        assert_eq!(index.chunks(&[got[0].0]).unwrap()[&got[0].0].path, "n3.md");
    }
}
