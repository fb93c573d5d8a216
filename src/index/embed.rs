//! Chunks into vectors, and the vectors kept for search: an embedding pass pages through the
//! chunks whose text has no vector (or, for a re-embed, every chunk of a vault), embeds each
//! distinct text once and commits as it goes; the dense rows are loaded from the vectors file
//! and the store, and the file is rewritten when too much of it is out of step. Query vectors
//! of recent search texts are kept here too (`embed_query`).
//!
//! What this module does not decide: which chunks exist (`sync` does).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::catalog::Catalog;
use super::dense::{Dense, RowKey};
use super::store::{Batch, ChunkInfo, TextHash};
use super::{Index, Progress, chunker, model_key, row_key, vectors};
use crate::embed::EmbedError;
use crate::error::{Error, ErrorCode, Result};

/// Distinct texts per embedding call during a sync.
pub(super) const TEXTS_PER_EMBED: usize = 64;
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
pub(super) const VECTORS_REWRITE_ROWS: usize = 2048;
/// ... or one in this many of the rows. Every search reads a row beside the file in f32 (1,536
/// bytes at 384 dimensions) where a row of the file costs its int8 code (392 bytes), so one
/// in 80 keeps the extra reading near 5% of the scan. (One in 20 let a million-row index carry
/// 50,000 such rows: a `perf` profile of REST searches on the bench's 1M index, 25,152 of
/// them, put 9% of the time in their dot products and filter.)
const VECTORS_REWRITE_FRACTION: usize = 80;
/// Chunks outside the vectors file, older than its newest row, that a load looks up one by
/// one (each a point query that finds the chunk's vector or none); past this many, one join
/// lists those that have vectors. (The newer ones are read as one range of ids.)
const OVERLAY_LOOKUPS_MAX: usize = 20_000;

/// Query texts whose vectors are kept: an agent repeats itself (the same question after each
/// edit, the same title looked up by several tools), and embedding a query is most of a
/// search's CPU time. 1024 vectors of 384 floats are 1.5 MiB.
const QUERY_VECTORS_KEPT: usize = 1024;

/// The most recently used query vectors, by the exact text embedded. It lives in the
/// [`Index`], whose embedder never changes, so a cached vector is always the one the embedder
/// would return now.
#[derive(Default)]
pub(super) struct QueryVectors {
    by_text: HashMap<String, (Arc<Vec<f32>>, u64)>,
    clock: u64,
}

impl QueryVectors {
    pub(super) fn get(&mut self, text: &str) -> Option<Arc<Vec<f32>>> {
        self.clock += 1;
        let clock = self.clock;
        self.by_text.get_mut(text).map(|(v, used)| {
            *used = clock;
            v.clone()
        })
    }

    pub(super) fn put(&mut self, text: &str, vector: Arc<Vec<f32>>) {
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

/// What is known of the chunks whose embed text has no vector yet. It is decided where chunks
/// are committed and where an embedding pass ends or gives way, and every job that would
/// otherwise look reads it: finding them is a read of every chunk row (3.2 s at a million
/// chunks), and during a first build each burst of writes made the pass give way and look
/// again, so with a save every two seconds a million-chunk build stood still.
///
/// It can trust a chunk id as a place because chunk ids are never reused (`AUTOINCREMENT`),
/// a chunk's text never changes under its id (a changed file's chunks are new rows), and a
/// vector is removed only when no chunk refers to it, or all of them at open when the model
/// changed (before any place is kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unembedded {
    /// Every chunk's text has a vector.
    None,
    /// Only chunks with ids above this one can lack a vector: chunks came in when none did
    /// (0, anywhere: at open, when nothing is known). A pass counts those and pages from here.
    Above(i64),
    /// An embedding pass gave way here; the next one goes on from it.
    From(Place),
}

impl Unembedded {
    /// After a commit that added chunks (`first` the lowest new id): with none waiting
    /// before, only those can be; otherwise what was known stays true, as new ids are higher.
    pub(super) fn with_added(self, first: i64) -> Unembedded {
        match self {
            Unembedded::None => Unembedded::Above(first - 1),
            known => known,
        }
    }
}

/// Where an embedding pass over the texts without vectors stands: every chunk with an id up
/// to `after` has a vector, and it has embedded `done` of the `total` it counted when it
/// began (later writes may bring more; progress shows the larger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Place {
    pub(super) after: i64,
    pub(super) done: usize,
    pub(super) total: usize,
}

impl Place {
    fn start(after: i64, total: usize) -> Place {
        Place { after, done: 0, total }
    }
}

/// How a run of [`Index::embed_pages`] ended: `done` counts from its `from.done`, and
/// `stopped` is where to go on when it gave way (`None` when it reached the end).
struct Run {
    done: usize,
    stopped: Option<Place>,
}

/// A write's own texts: their first batch never gives way. A note's few chunks take a
/// fraction of a second, while a writer whose texts gave way to the next write would wait for
/// the end of a first build (its texts, newest in id order, would come last), and in a burst of
/// writes each would give way to the next. A large note's later batches do give way.
struct FirstBatchHolds<'a> {
    inner: &'a dyn Progress,
    asked: AtomicBool,
}

impl Progress for FirstBatchHolds<'_> {
    fn files(&self, done: usize, total: usize) {
        self.inner.files(done, total);
    }
    fn embedded(&self, done: usize, total: usize) {
        self.inner.embedded(done, total);
    }
    fn interrupted(&self) -> bool {
        self.asked.swap(true, Ordering::SeqCst) && self.inner.interrupted()
    }
}

impl Index {
    /// What is known of the chunks still without a vector.
    pub(super) fn unembedded(&self) -> Unembedded {
        *self.unembedded.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn set_unembedded(&self, known: Unembedded) {
        *self.unembedded.lock().unwrap_or_else(|p| p.into_inner()) = known;
    }

    /// The dense rows for `catalog`: the vectors file's rows whose chunk still has the same
    /// text, plus, from the store, the vectors the file lacks. The owner rewrites the file
    /// from the store first when it is missing or unusable, and after when too much of it was
    /// out of step; a reader never writes it (it reads the store instead).
    pub(super) fn load_dense(&self, catalog: &Catalog) -> Result<Dense> {
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
        // A row is used when its chunk still has the text it was embedded from. Whether the
        // store still holds that text's vector does not matter: a vector is a function of the
        // model (the header's) and the text (the row's hash prefix), so the row is that vector.
        // Asking the store which chunks have vectors is a join over every chunk, half a second
        // of a warm start at a million chunks, and is done only when many chunks are not in
        // the file (a build under way), where asking chunk by chunk would cost more.
        let keys: Vec<Option<RowKey>> = (0..file.rows())
            .map(|r| {
                let (id, hash) = file.key(r);
                let slot = catalog.get(id)?;
                (slot.hash == hash).then(|| row_key(id, slot))
            })
            .collect();
        // The file lists its rows in id order, and chunk ids only grow, so the chunks made
        // since it was written (most of what it lacks: a build's last stretch, edited notes'
        // new chunks) are one range of ids, read with their vectors in one pass over that
        // range. Only the older ids it lacks (a text changed in place) are looked up.
        let newest = file.rows().checked_sub(1).map_or(0, |r| file.key(r).0);
        let mut dense = Dense::with_base(dims, Arc::new(file), keys);
        self.store.for_each_chunk_vector_after(newest, |id, v| {
            if let Some(slot) = catalog.get(id) {
                dense.insert(row_key(id, slot), &v);
            }
        })?;
        let mut missing: Vec<i64> =
            catalog.ids().filter(|id| *id <= newest && !dense.contains(*id)).collect();
        if missing.len() > OVERLAY_LOOKUPS_MAX {
            let with_vectors: HashSet<i64> =
                self.store.chunk_ids_with_vectors()?.into_iter().collect();
            missing.retain(|id| with_vectors.contains(id));
        }
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

    /// After a pass that embedded `embedded` texts: rewrites the vectors file when the rows
    /// kept in memory beside it (or the rows of it no longer used) have grown past the
    /// rewrite rule, so the next start maps it whole and this process's memory drops back to
    /// the file's pages.
    ///
    /// A pass that itself embedded more than [`VECTORS_REWRITE_ROWS`] texts rewrites it
    /// whenever rows are beside it at all: the embedding took far longer than the rewrite (a
    /// minute or more against seconds at a million rows), and otherwise a first build's last
    /// stretch (up to an eightieth of the rows) is read from the store again at every start.
    pub(super) fn refresh_vectors_file(&self, embedded: usize) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        let stale = {
            let dense = self.dense();
            self.vectors_file_is_stale(&dense)
                || (embedded > VECTORS_REWRITE_ROWS && dense.overlay_len() > 0)
        };
        if !stale {
            return Ok(());
        }
        self.move_overlay_to_file()
    }

    /// The vector of a query text (already prefixed), from the recently used ones or
    /// embedded now. The lock is not held while embedding: two searches for the same new text
    /// may both embed it, which costs less than making one wait for the other.
    pub(crate) fn embed_query(&self, text: &str) -> std::result::Result<Arc<Vec<f32>>, EmbedError> {
        let cached = self.query_vectors.lock().unwrap_or_else(|p| p.into_inner()).get(text);
        if let Some(v) = cached {
            return Ok(v);
        }
        let v = Arc::new(self.embedder.embed_query(text)?);
        self.query_vectors.lock().unwrap_or_else(|p| p.into_inner()).put(text, v.clone());
        Ok(v)
    }

    /// Embeds every chunk whose embed text has no vector yet, or those before `progress`
    /// says it is [`Progress::interrupted`]; returns how many texts. It begins where
    /// [`Unembedded`] says (a pass that gave way goes on from its place, with its count) and
    /// leaves there where it ended.
    pub(crate) fn embed_pending(&self, progress: &dyn Progress) -> Result<usize> {
        self.writable()?;
        let from = match self.unembedded() {
            Unembedded::None => return Ok(0),
            Unembedded::Above(after) => {
                Place::start(after, self.store.texts_missing_vectors(after)?)
            }
            Unembedded::From(place) => place,
        };
        let run = self.embed_pages(from, false, progress, |after| {
            self.store.chunks_missing_vectors(after, EMBED_PAGE_CHUNKS)
        })?;
        // Only the indexer thread commits chunks, and it is here: none came in meanwhile.
        self.set_unembedded(match run.stopped {
            None => Unembedded::None,
            Some(place) => Unembedded::From(place),
        });
        Ok(run.done - from.done)
    }

    /// Embeds those of `hashes` still without a vector (a write's own texts, ahead of any
    /// other text waiting for one), or, past the first batch, those before `progress` says it
    /// is [`Progress::interrupted`]; returns how many, and whether it got through them all.
    pub(super) fn embed_texts(
        &self,
        hashes: &[TextHash],
        progress: &dyn Progress,
    ) -> Result<(usize, bool)> {
        if hashes.is_empty() {
            return Ok((0, true));
        }
        let chunks = self.store.chunks_of_texts_missing_vectors(hashes)?;
        let progress = FirstBatchHolds { inner: progress, asked: AtomicBool::new(false) };
        let run = self.embed_pages(Place::start(0, chunks.len()), false, &progress, |after| {
            let page = chunks.iter().filter(|(info, _)| info.id > after);
            Ok(page.take(EMBED_PAGE_CHUNKS).cloned().collect())
        })?;
        Ok((run.done, run.stopped.is_none()))
    }

    /// Embeds every text of one vault again, replacing the stored vectors; returns how many.
    pub(super) fn re_embed(&self, vault: &str, progress: &dyn Progress) -> Result<usize> {
        let total = self.store.vault_texts(vault)?;
        // Never interrupted: a re-embed begun again would replace every vector again.
        let run = self.embed_pages(Place::start(0, total), true, progress, |after| {
            self.store.vault_chunk_texts(vault, after, EMBED_PAGE_CHUNKS)
        })?;
        Ok(run.done)
    }

    /// Embeds the distinct embed texts of the chunks `page` yields (a page of chunks with ids
    /// above the argument, in id order, empty at the end), from `from`'s place on, committing
    /// as it goes; with `replace`, the new vectors overwrite stored ones. `from`'s total is
    /// the distinct texts expected, for progress. Without `replace`, it stops before a batch
    /// once `progress` is [`Progress::interrupted`], and says where to go on.
    ///
    /// Memory stays bounded at any vault size: one page of texts is held at a time, and the
    /// vectors added to the in-memory overlay are moved into the vectors file whenever they
    /// pass [`Index::overlay_is_full`].
    fn embed_pages(
        &self,
        from: Place,
        replace: bool,
        progress: &dyn Progress,
        page: impl Fn(i64) -> Result<Vec<(ChunkInfo, String)>>,
    ) -> Result<Run> {
        let Place { mut after, mut done, total } = from;
        // A re-embed pages through every chunk, so a text shared by chunks on two pages would
        // be embedded twice; the texts already replaced are skipped.
        let mut replaced: HashSet<TextHash> = HashSet::new();
        progress.embedded(done, total.max(done));
        loop {
            let chunks = page(after)?;
            let Some(last) = chunks.last() else { break };
            // Where to go on if it gives way within this page: the page's start (the texts
            // of it already embedded are not asked for again).
            let page_start = after;
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
                if !replace && progress.interrupted() {
                    let place = Place { after: page_start, done, total };
                    return Ok(Run { done, stopped: Some(place) });
                }
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
        Ok(Run { done, stopped: None })
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
    use std::path::Path;

    use super::*;
    use crate::embed::Embedder;
    use crate::index::progress::WaitedAfter;
    use crate::index::{IndexSettings, Pass, QueryVectors, Silent};
    use crate::vault::Vault;

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
        Index::open(data, vec!["v".into()], IndexSettings::for_tests(&[]), embedder).unwrap()
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
        let total = index.store().texts_missing_vectors(0).unwrap();
        assert_eq!(total, 9, "the copies share one text");

        let embedded =
            index.embed_pages(Place::start(0, total), false, &Silent, page).unwrap().done;
        // The copies' pages no longer list them once n3's page has embedded their text, so
        // their rows come from the page that embedded it.
        assert_eq!(embedded, 9, "each text embedded once");
        assert_eq!(index.counts(), (11, 11), "every chunk has its row");
        assert_eq!(index.store().texts_missing_vectors(0).unwrap(), 0);
        let copies = copy_scores(&index);
        assert!(copies.iter().all(|s| *s == copies[0]), "the same text, the same vector");
    }

    #[test]
    fn a_pass_that_gave_way_goes_on_from_the_page_it_stopped_in_and_not_from_the_first_chunk() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (index, _vault) = with_copies_across_pages(root.path(), data.path());
        let asked = std::sync::Mutex::new(Vec::new());
        let page = |after| {
            asked.lock().unwrap().push(after);
            index.store().chunks_missing_vectors(after, TEST_PAGE)
        };
        let total = index.store().texts_missing_vectors(0).unwrap();
        // Pages of two chunks, a batch each: it gives way before its fourth batch.
        let waited = WaitedAfter::new(3);
        let first = index.embed_pages(Place::start(0, total), false, &waited, page).unwrap();
        let place = first.stopped.expect("it gave way");
        assert_eq!((first.done, place.done, place.total), (place.done, first.done, 9));
        assert!(0 < place.done && place.done < 9, "{place:?}");
        let starts = std::mem::take(&mut *asked.lock().unwrap());
        assert_eq!(place.after, starts[starts.len() - 1], "the start of the page it stopped in");
        assert!(place.after > 0);

        let rest = index.embed_pages(place, false, &Silent, page).unwrap();
        assert_eq!((rest.done, rest.stopped), (9, None));
        assert_eq!(asked.lock().unwrap()[0], place.after, "no page below its place read again");
        assert_eq!(index.counts(), (11, 11));
        assert_eq!(index.store().texts_missing_vectors(0).unwrap(), 0);
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
        let again = index.embed_pages(Place::start(0, total), true, &Silent, page).unwrap().done;
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
        index.update_paths(&vault, &["n3.md".into()], &mut |_, _| {}, &Silent).unwrap();
        assert_eq!(index.dense().len(), n);
        assert_eq!(index.dense().overlay_len(), 1);
        drop(index);
        let index = open_at(data.path());
        assert_eq!((index.dense().len(), index.dense().overlay_len()), (n, 1));
        let otter = index.embed_query("Note 3 Now about otters.").unwrap();
        let got = index.dense().top(&otter, 1, &|_| true);
        assert_eq!(index.chunks(&[got[0].0]).unwrap()[&got[0].0].path, "n3.md");
    }

    /// Rewrites the vectors file with every row of the current one except chunk `left_out`'s,
    /// as a file written while that chunk had no vector yet.
    fn file_without(data: &Path, model: &str, left_out: i64) {
        let path = crate::config::DataDir::new(data).vectors();
        let file = vectors::VectorFile::open(&path, 32, model).unwrap();
        let rows: Vec<(i64, u64, Vec<f32>)> = (0..file.rows())
            .map(|r| (file.key(r).0, file.key(r).1, file.floats(r).unwrap()))
            .filter(|row| row.0 != left_out)
            .collect();
        drop(file);
        let rows: Vec<(i64, u64, &[f32])> = rows.iter().map(|r| (r.0, r.1, &r.2[..])).collect();
        vectors::write(&path, 32, model, &rows).unwrap();
    }

    #[test]
    fn a_load_reads_the_rows_the_file_lacks_whether_their_chunks_are_newer_than_it_or_not() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (index, vault) = indexed(root.path(), data.path(), 40);
        index.sync(&vault, Pass::Changed, &Silent).unwrap();
        index.move_overlay_to_file().unwrap();
        assert_eq!((index.dense().base_rows(), index.dense().overlay_len()), (40, 0));
        let middle =
            index.dense().top(&index.embed_query("walrus tray 7").unwrap(), 40, &|_| true)[20].0;
        let model = model_key(index.embedder());
        drop(index);
        file_without(data.path(), &model, middle);

        // Three notes made after the file: their chunks' ids are above every id in it.
        for i in 40..43 {
            let text = format!("# Note {i}\n\nThe {i} walrus keeps item {i} in tray 7.\n");
            std::fs::write(root.path().join(format!("n{i}.md")), text).unwrap();
        }
        let index = open_at(data.path());
        assert_eq!((index.dense().base_rows(), index.dense().overlay_len()), (39, 1));
        index.sync(&vault, Pass::Changed, &Silent).unwrap();
        assert_eq!((index.dense().len(), index.dense().overlay_len()), (43, 4));
        let query = index.embed_query("walrus tray 7").unwrap();
        let live = index.dense().top(&query, 43, &|_| true);
        drop(index);

        let index = open_at(data.path());
        assert_eq!((index.dense().len(), index.dense().overlay_len()), (43, 4));
        assert_eq!(
            index.dense().top(&query, 43, &|_| true),
            live,
            "the same rows, the same scores"
        );
    }

    #[test]
    fn a_pass_that_embedded_many_texts_leaves_no_row_beside_the_file_and_a_small_one_does() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (index, vault) = indexed(root.path(), data.path(), 12);
        index.sync(&vault, Pass::Changed, &Silent).unwrap();
        assert_eq!(index.dense().overlay_len(), 12, "twelve rows are not worth a rewrite");
        index.refresh_vectors_file(12).unwrap();
        assert_eq!(index.dense().overlay_len(), 12);
        // The same rows after a pass that embedded more than the rewrite rule's rows: that pass
        // took far longer than the rewrite, so nothing is left to read from the store at start.
        index.refresh_vectors_file(VECTORS_REWRITE_ROWS + 1).unwrap();
        assert_eq!((index.dense().base_rows(), index.dense().overlay_len()), (12, 0));
    }
}
