//! Files into chunks: [`Index::sync`] walks one vault and brings its rows up to date, and
//! [`Index::update_paths`] does the same for the paths a write or the watcher names. A file is
//! re-chunked only when its size, mtime or chunker fingerprint moved and its bytes then hash
//! differently from its row; changed files are committed in small transactions (the store,
//! then the lexical index, the catalog and the dense rows), and the pass ends by embedding
//! what has no vector yet (`embed`).
//!
//! Which files are indexed is the vault's census (`IndexSettings::class`); this module only
//! compares them with the store.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::embed::Unembedded;
use super::store::{self, Batch, FileKind, FileStatus, FileUpdate, NewChunk};
use super::{
    Index, Silent, Slot, TextHash, chunker, coverage, hash_prefix, lexical, row_key, text_hash,
};
use super::{Progress, under};
use crate::error::{Error, ErrorCode, Result};
use crate::vault::canvas::Canvas;
use crate::vault::census::FileClass;
use crate::vault::{FileStat, Vault};

/// Files per store transaction during a sync: small enough that a crash loses little and
/// lexical search sees progress, large enough that commits do not dominate.
const FILES_PER_BATCH: usize = 64;

/// What a sync or update did (also what the index's owner answers another process with, so
/// it crosses the owner's socket as JSON).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SyncReport {
    /// Files looked at.
    pub(crate) files_seen: usize,
    /// Files (re-)chunked.
    pub files_chunked: usize,
    /// Files whose bytes were unchanged (only the mtime moved, or nothing at all).
    pub(crate) files_unchanged: usize,
    /// Files removed from the index.
    pub(crate) files_removed: usize,
    /// Files that could not be indexed, with why.
    pub(crate) failed: Vec<(String, String)>,
    /// Chunks written.
    pub(crate) chunks_written: usize,
    /// Texts embedded (distinct embed texts that had no vector, or every text of the vault
    /// for [`Pass::ReEmbed`]).
    pub texts_embedded: usize,
    /// Distinct embed texts of the chunks written that kept the vector already stored for
    /// them (a `--full` pass over unchanged notes embeds nothing). Defaults to 0 when an older
    /// owner answers without it.
    #[serde(default)]
    pub texts_reused: usize,
    /// Seconds taken.
    pub(crate) seconds: f64,
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
    pub(crate) fn from_full(full: bool) -> Pass {
        if full { Pass::Full } else { Pass::Changed }
    }

    /// Whether every file is re-read and re-chunked.
    pub(crate) fn is_full(self) -> bool {
        matches!(self, Pass::Full | Pass::ReEmbed)
    }
}

/// How far a write's re-index has got, as [`Index::update_paths`] tells its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reached {
    /// The paths' chunks and lexical entries are committed: a search finds their words.
    Words,
    /// Their texts have vectors too, so every search mode finds them, and the job goes on to
    /// embed texts other jobs left without one (a first build's, for minutes). Not heard when
    /// none waits: the job's end, which comes at once, says as much.
    Vectors,
}

impl Index {
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
        let mut pending: Vec<(FileUpdate, Vec<lexical::Text>)> = Vec::new();
        // The distinct embed texts of the chunks this pass writes, to count those that keep
        // their stored vector.
        let mut written: HashSet<TextHash> = HashSet::new();
        // A words pass is the first build's, which search refuses until it ends: its lexical
        // changes are committed once, at its end, rather than with every batch. Each commit
        // waited for tantivy to index and write the batch's segment while nothing else ran
        // (then merged the small segments in the background), and without them the next
        // batch is read and chunked while tantivy indexes this one.
        let hold = pass == Pass::Words;
        // The generation whose lexical changes are all staged and not yet committed.
        let mut held: Option<u64> = None;
        let mut walk = || -> Result<()> {
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
                    held = self.commit_files(&mut batch, &mut pending, hold)?.or(held);
                }
            }
            held = self.commit_files(&mut batch, &mut pending, hold)?.or(held);
            Ok(())
        };
        let walked = walk();
        // Committed even when a batch failed: the batches before it are in the store, and a
        // search after the failed pass (it answers from the words) should find them. A batch
        // that failed half-staged leaves the store a generation ahead of this commit, which
        // the next open repairs by rebuilding the lexical index.
        let committed = match held {
            Some(generation) => self.lexical.commit(&generation.to_string()),
            None => Ok(()),
        };
        walked.and(committed)?;
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
        }
        self.embed_and_record(vault, pass, report, started, progress)
    }

    /// Goes on with a [`Pass::Changed`] that gave way while embedding (`report` is what it
    /// said then): only its embedding and the build's record are left. Its files are not walked
    /// again: it committed them before it embedded anything, and the writes it gave way to
    /// were re-indexed by their own jobs; a walk of 200k files took a second at each burst of
    /// writes during a first build.
    pub(crate) fn resume_sync(
        &self,
        vault: &Vault,
        report: SyncReport,
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        self.writable()?;
        self.embed_and_record(vault, Pass::Changed, report, Instant::now(), progress)
    }

    /// The end of a pass whose files are in: every text still without a vector embedded
    /// (added to `report`'s), the vectors file refreshed and the build recorded. `started` is
    /// when this run of the pass began (a resumed pass adds its time to what `report` has).
    fn embed_and_record(
        &self,
        vault: &Vault,
        pass: Pass,
        mut report: SyncReport,
        started: Instant,
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        // None can be waiting when the last embedding pass finished and no chunk came since
        // (this pass wrote none): the count and the first page read every chunk row, 3.2 s of
        // a 4.2 s pass that found nothing changed at a million chunks, which each reconcile
        // pass paid.
        if pass != Pass::ReEmbed && self.unembedded() != Unembedded::None {
            report.texts_embedded += self.embed_pending(progress)?;
            if let Unembedded::From(_) = self.unembedded() {
                // It gave way to a write, and its caller will resume it: the vectors file and
                // the build's record wait for its end. Rewriting the file here took a second
                // or more at each write during a million-chunk build, and held that write.
                report.seconds += started.elapsed().as_secs_f64();
                return Ok(report);
            }
        }
        if pass.is_full() {
            self.store.prune_vectors()?;
            self.store.prune_extractions()?;
        }
        // The file is derived: failing to rewrite it costs memory, not correctness.
        if let Err(e) = self.refresh_vectors_file(report.texts_embedded) {
            tracing::warn!("{e}");
        }
        report.seconds += started.elapsed().as_secs_f64();
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
    /// re-chunked, vanished ones removed, new vectors embedded. `reached` hears
    /// [`Reached::Words`] once the files' chunks and lexical entries are committed (a search
    /// finds their words from then on), before their texts are embedded, which for a large
    /// note takes seconds; then [`Reached::Vectors`] once those texts have theirs, if texts
    /// other jobs left without one are to be embedded after them. Only the indexer thread
    /// calls this.
    pub(crate) fn update_paths(
        &self,
        vault: &Vault,
        paths: &[String],
        reached: &mut dyn FnMut(Reached, &SyncReport),
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        self.writable()?;
        self.update_paths_locked(vault, paths, reached, progress)
    }

    /// Refuses a write on a read-only index: a reader's jobs go to the owner.
    pub(super) fn writable(&self) -> Result<()> {
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
        reached: &mut dyn FnMut(Reached, &SyncReport),
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
        // Whether texts other jobs left without a vector wait (a first build's, one that gave
        // way): read before this job's chunks set it.
        let others_pending = self.unembedded() != Unembedded::None;
        self.commit_files(&mut batch, &mut pending, false)?;
        let written: Vec<TextHash> = written.into_iter().collect();
        let present = self.store.present_vectors(&written)?;
        report.texts_reused = present.len();
        reached(Reached::Words, &report);
        // These paths' own texts first: during a first build thousands of texts wait, and in
        // id order a note just written would come last, so its writer would hear only that
        // its words are in, and a search by meaning would miss it until the build ended.
        let own: Vec<TextHash> = written.into_iter().filter(|h| !present.contains(h)).collect();
        let (embedded, finished) = self.embed_texts(&own, progress)?;
        report.texts_embedded = embedded;
        // Then every other text still without a vector: during a first build this job may be
        // the one that embeds most of the vault, so it reports its progress too. When none
        // can be left (none was before this job, whose own are now in), it does not look:
        // counting them reads every chunk row, and at a million chunks each write paid
        // seconds for it (its writer waited the whole bounded wait).
        if finished && others_pending {
            report.seconds = started.elapsed().as_secs_f64();
            reached(Reached::Vectors, &report);
            report.texts_embedded += self.embed_pending(progress)?;
        } else if finished {
            self.set_unembedded(Unembedded::None);
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
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
    ) -> Result<Option<(FileUpdate, Vec<lexical::Text>)>> {
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
            aliases: String::new(),
            status: FileStatus::Indexed,
            detail: String::new(),
            fingerprint: fingerprint.to_string(),
            chunks: Vec::new(),
        };
        let class = self.settings.class(&stat.path);
        let note = if class == FileClass::Document {
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
            if class == FileClass::Canvas {
                // A canvas is searched by what it says (`vault::canvas`), as a note is: its
                // text nodes are the author's own writing, so no document weight applies.
                match Canvas::parse(&text) {
                    Ok(canvas) => chunker::chunk_note(
                        &stat.path,
                        &canvas.reading_text(),
                        &self.settings.chunking,
                    ),
                    Err(why) => {
                        update.status = FileStatus::Failed;
                        update.detail = why;
                        return Ok(Some((update, Vec::new())));
                    }
                }
            } else {
                chunker::chunk_note(&stat.path, &text, &self.settings.chunking)
            }
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
            lexical.push(lexical::Text::of(&note.title, &note.aliases, &c.breadcrumb, &c.text));
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
        update.aliases = note.aliases;
        Ok(Some((update, lexical)))
    }

    /// Commits the pending file changes in one transaction and applies them to the lexical
    /// index, the catalog and the dense matrix. With `hold`, the lexical changes are staged
    /// and not committed, and the store generation they bring the lexical index up to is
    /// returned for the caller to commit with.
    fn commit_files(
        &self,
        batch: &mut Batch,
        pending: &mut Vec<(FileUpdate, Vec<lexical::Text>)>,
        hold: bool,
    ) -> Result<Option<u64>> {
        if pending.is_empty() && batch.deletes.is_empty() && batch.touches.is_empty() {
            return Ok(None);
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
        if let Some(first) = applied.added.iter().min() {
            // New chunks may bring texts with no vector; the next embedding pass looks (from
            // them on, when none lacked one before).
            self.set_unembedded(self.unembedded().with_added(*first));
        }
        if upserts.is_empty() && applied.removed.is_empty() {
            // Only mtimes moved (the watcher seeing a write the indexer already took in): no
            // chunk changed, so there is no lexical commit to pay for (an fsync per event).
            return Ok(None);
        }

        // Deletions are staged before additions, so a reused id could never delete its new chunk.
        for id in &applied.removed {
            self.lexical.delete(*id as u64)?;
        }
        // Map the new chunk ids back to their files, in insertion order.
        let mut ids = applied.added.iter();
        let mut new_slots: Vec<(i64, Slot)> = Vec::new();
        for (update, lexical) in upserts.iter().zip(lexical_texts) {
            let file = self.file_meta(update.vault.clone(), &update.path, update.kind);
            for (chunk, lex) in update.chunks.iter().zip(lexical) {
                let Some(&id) = ids.next() else { break };
                self.lexical.add(id as u64, &update.vault, &update.path, lex)?;
                new_slots
                    .push((id, Slot { file: file.clone(), hash: hash_prefix(&chunk.embed_hash) }));
            }
        }
        let held = if hold {
            Some(applied.generation)
        } else {
            self.lexical.commit(&applied.generation.to_string())?;
            None
        };

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
        Ok(held)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::embed::Embedder;
    use crate::embed::hashing::HashingEmbedder;
    use crate::index::IndexSettings;
    use crate::index::embed::{TEXTS_PER_EMBED, VECTORS_REWRITE_ROWS};
    use crate::index::progress::WaitedAfter;

    /// Every progress event of a job, in order.
    #[derive(Default)]
    struct Events(Mutex<Vec<String>>);

    impl Progress for Events {
        fn files(&self, done: usize, total: usize) {
            self.0.lock().unwrap().push(format!("files {done}/{total}"));
        }
        fn embedded(&self, done: usize, total: usize) {
            self.0.lock().unwrap().push(format!("embedded {done}/{total}"));
        }
    }

    impl Events {
        fn embedding(&self) -> Vec<String> {
            let all = self.0.lock().unwrap();
            all.iter().filter(|e| e.starts_with("embedded")).cloned().collect()
        }
    }

    /// `count` notes `n0000.md`... of one short line each: one text apiece.
    fn one_line_notes(root: &std::path::Path, count: usize) {
        for i in 0..count {
            let text = format!("# N{i}\n\nText {i}.\n");
            std::fs::write(root.join(format!("n{i:04}.md")), text).unwrap();
        }
    }

    fn vault(root: &std::path::Path) -> Vault {
        let vs = crate::config::VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 1 << 20,
            timestamp_key: "timestamp".into(),
        };
        Vault::open("v", root, &vs).unwrap()
    }

    fn index(data: &std::path::Path) -> Index {
        let embedder = Arc::new(Embedder::Hashing(HashingEmbedder::new(32)));
        Index::open(data, vec!["v".into()], IndexSettings::for_tests(&[]), embedder).unwrap()
    }

    #[test]
    fn a_chunks_file_from_memory_agrees_with_its_row_in_the_store_and_a_removed_chunk_has_none() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        std::fs::create_dir_all(root.path().join("Area")).unwrap();
        for (path, text) in
            [("a.md", "# A\n\nOne.\n\n## Two\n\nTwo.\n"), ("Area/b.md", "# B\n\nThree.\n")]
        {
            std::fs::write(root.path().join(path), text).unwrap();
        }
        index.sync(&vault, Pass::Changed, &Silent).unwrap();
        let infos = index.store().all_chunk_infos().unwrap();
        assert!(infos.len() >= 2);
        let mut ids: Vec<i64> = infos.iter().map(|i| i.id).collect();
        ids.push(i64::MAX);
        let files = index.chunk_files(&ids);
        assert_eq!(files.len(), infos.len(), "every chunk and no unknown id");
        for info in &infos {
            let file = &files[&info.id];
            assert_eq!(
                (file.vault.as_str(), &*file.path),
                (info.vault.as_str(), info.path.as_str())
            );
            assert_eq!(file.kind, info.kind);
        }

        std::fs::remove_file(root.path().join("Area/b.md")).unwrap();
        index.sync(&vault, Pass::Changed, &Silent).unwrap();
        let gone: Vec<i64> = infos.iter().filter(|i| i.path == "Area/b.md").map(|i| i.id).collect();
        assert!(!gone.is_empty() && index.chunk_files(&gone).is_empty());
    }

    #[test]
    fn the_watchers_echo_of_a_write_already_indexed_reads_and_hashes_the_file_and_does_nothing_else()
     {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        for i in 0..5 {
            std::fs::write(root.path().join(format!("n{i}.md")), format!("# N{i}\n\nText {i}.\n"))
                .unwrap();
        }
        index.sync(&vault, Pass::Changed, &Silent).unwrap();

        // The write's own refresh indexes and embeds the note.
        vault.write("new.md", "# New\n\nThe heron waits by the weir.\n", false, None).unwrap();
        let paths = vec!["new.md".to_string()];
        let first = Events::default();
        let report = index.update_paths(&vault, &paths, &mut |_, _| {}, &first).unwrap();
        assert_eq!((report.files_chunked, report.texts_embedded), (1, 1));
        assert!(!first.embedding().is_empty(), "the refresh embedded: {:?}", first.0);
        let generation = index.store().generation().unwrap();
        let row = index.store().files_at("v", &paths).unwrap();

        // Then the watcher reports the same path.
        let echo = Events::default();
        let mut heard = Vec::new();
        let report =
            index.update_paths(&vault, &paths, &mut |at, _| heard.push(at), &echo).unwrap();
        assert_eq!(heard, [Reached::Words], "the waiting writer still hears it");
        assert_eq!(report.files_unchanged, 1);
        assert_eq!(report.files_chunked + report.chunks_written + report.texts_embedded, 0);
        assert_eq!(echo.embedding(), Vec::<String>::new(), "no embedding pass, not even a count");
        assert_eq!(index.store().generation().unwrap(), generation, "no chunk rewritten");
        let again = index.store().files_at("v", &paths).unwrap();
        assert_eq!(
            again.iter().map(|r| (r.id, r.mtime_ns, &r.sha256)).collect::<Vec<_>>(),
            row.iter().map(|r| (r.id, r.mtime_ns, &r.sha256)).collect::<Vec<_>>(),
            "the row is as the refresh left it"
        );
    }

    #[test]
    fn a_words_pass_committing_once_finds_what_a_pass_committing_every_batch_finds() {
        let root = tempfile::tempdir().unwrap();
        let words = ["boiler", "invoice", "garden", "running", "tax", "piano", "river", "the"];
        for i in 0..FILES_PER_BATCH * 3 + 5 {
            let (a, b) = (words[i % words.len()], words[(i / 3) % words.len()]);
            let body =
                format!("# Note {i} {a}\n\nThe {a} and {b} {i}.\n\n## More\n\n{b} {b} runs.\n");
            std::fs::write(root.path().join(format!("n{i:03}.md")), body).unwrap();
        }
        let vault = vault(root.path());
        let (once, every) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (once, every) = (index(once.path()), index(every.path()));
        let report = once.sync(&vault, Pass::Words, &Silent).unwrap();
        assert_eq!(report.files_chunked, FILES_PER_BATCH * 3 + 5);
        every.sync(&vault, Pass::Changed, &Silent).unwrap();
        // The one commit names the store's generation, so the next open keeps the index.
        let generation = once.store().generation().unwrap().to_string();
        assert_eq!(once.lexical().payload(), Some(generation));
        assert_eq!(once.lexical().num_docs(), every.lexical().num_docs());
        let filter = lexical::Filter::default();
        for query in words.iter().chain(&["note", "more", "7", "absent"]) {
            let tokens = crate::index::tokenize::tokenize(query);
            let a = once.lexical().search(&tokens, 1000, &filter).unwrap();
            let b = every.lexical().search(&tokens, 1000, &filter).unwrap();
            // Every match (the limit is above the chunk count), by id: ties may list in
            // another order when the segments differ.
            let by_id = |mut hits: Vec<lexical::Hit>| {
                hits.sort_by_key(|h| h.chunk_id);
                hits
            };
            let (a, b) = (by_id(a), by_id(b));
            assert_eq!(a.len(), b.len(), "{query}");
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.chunk_id, y.chunk_id, "{query}");
                assert!((x.score - y.score).abs() < 1e-4, "{query}: {} vs {}", x.score, y.score);
            }
        }
    }

    #[test]
    fn a_job_that_writes_nothing_still_embeds_what_a_words_pass_left_without_vectors() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        for i in 0..3 {
            std::fs::write(root.path().join(format!("n{i}.md")), format!("# N{i}\n\nText {i}.\n"))
                .unwrap();
        }
        index.sync(&vault, Pass::Words, &Silent).unwrap();
        assert_eq!(index.counts(), (3, 0));
        let paths = vec!["n0.md".to_string()];
        let report = index.update_paths(&vault, &paths, &mut |_, _| {}, &Silent).unwrap();
        assert_eq!((report.files_chunked, report.texts_embedded), (0, 3));
        assert_eq!(index.counts(), (3, 3));
    }

    #[test]
    fn a_writes_own_texts_are_embedded_and_heard_of_before_the_texts_a_build_left_waiting() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        one_line_notes(root.path(), 150);
        // A first build's words are in and its texts wait for their vectors.
        index.sync(&vault, Pass::Words, &Silent).unwrap();
        assert_eq!(index.counts(), (150, 0));

        // The note comes last in id order, yet its writer hears of its vectors while the
        // build's are still to be embedded.
        vault.write("new.md", "# New\n\nThe heron waits by the weir.\n", false, None).unwrap();
        let paths = vec!["new.md".to_string()];
        let mut heard = Vec::new();
        let report = index
            .update_paths(
                &vault,
                &paths,
                &mut |at, report| heard.push((at, report.texts_embedded, index.counts())),
                &Silent,
            )
            .unwrap();
        assert_eq!(
            heard,
            [(Reached::Words, 0, (151, 0)), (Reached::Vectors, 1, (151, 1))],
            "words, then the note's own vector, before any of the build's"
        );
        assert_eq!(report.texts_embedded, 151);
        assert_eq!(index.counts(), (151, 151));

        // With nothing else waiting, the job's end is its answer: no second word, no count.
        vault.write("new.md", "# New\n\nThe heron flies off.\n", true, None).unwrap();
        let events = Events::default();
        let mut heard = Vec::new();
        let report =
            index.update_paths(&vault, &paths, &mut |at, _| heard.push(at), &events).unwrap();
        assert_eq!(heard, [Reached::Words]);
        assert_eq!(report.texts_embedded, 1);
        assert_eq!(events.embedding(), ["embedded 0/1", "embedded 1/1"], "its own text alone");
        assert_eq!(index.counts(), (151, 151));
    }

    #[test]
    fn a_writes_first_batch_of_texts_never_gives_way_and_a_large_notes_later_batches_do() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        one_line_notes(root.path(), 20);
        index.sync(&vault, Pass::Words, &Silent).unwrap();

        // Another write waits: this one still embeds its own text, then leaves the build's.
        vault.write("new.md", "# New\n\nThe heron waits by the weir.\n", false, None).unwrap();
        let mut heard = Vec::new();
        let paths = vec!["new.md".to_string()];
        let report = index
            .update_paths(&vault, &paths, &mut |at, _| heard.push(at), &WaitedAfter::new(0))
            .unwrap();
        assert_eq!(heard, [Reached::Words, Reached::Vectors]);
        assert_eq!((report.texts_embedded, index.counts()), (1, (21, 1)));

        // A note of more texts than a batch gives way after its first.
        let sections = TEXTS_PER_EMBED + 10;
        let big: String = (0..sections)
            .map(|i| {
                format!("## Part {i}\n\nThe heron's ledger, page {i}. {}\n\n", "Reeds. ".repeat(60))
            })
            .collect();
        vault.write("big.md", &format!("# Big\n\n{big}"), false, None).unwrap();
        let mut heard = Vec::new();
        let paths = vec!["big.md".to_string()];
        let report = index
            .update_paths(&vault, &paths, &mut |at, _| heard.push(at), &WaitedAfter::new(0))
            .unwrap();
        assert!(report.chunks_written > TEXTS_PER_EMBED, "{report:?}");
        assert_eq!(heard, [Reached::Words], "its writer has not heard of its vectors");
        assert_eq!(report.texts_embedded, TEXTS_PER_EMBED);
    }

    #[test]
    fn an_embedding_pass_keeps_its_place_and_count_across_the_writes_it_gives_way_to() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        let notes = TEXTS_PER_EMBED * 2 + 5;
        one_line_notes(root.path(), notes);
        index.sync(&vault, Pass::Words, &Silent).unwrap();
        assert_eq!(index.unembedded(), Unembedded::Above(0), "nothing known at open");

        // A write comes after one batch of the build's texts.
        let first = index.embed_pending(&WaitedAfter::new(1)).unwrap();
        assert_eq!(first, TEXTS_PER_EMBED);
        let Unembedded::From(place) = index.unembedded() else { panic!("it gave way") };
        assert_eq!((place.done, place.total), (TEXTS_PER_EMBED, notes));

        // The write embeds its own text, then gives way again at once: the place stands.
        vault.write("new.md", "# New\n\nThe heron waits by the weir.\n", false, None).unwrap();
        let paths = vec!["new.md".to_string()];
        index.update_paths(&vault, &paths, &mut |_, _| {}, &WaitedAfter::new(0)).unwrap();
        assert_eq!(index.unembedded(), Unembedded::From(place), "a new chunk comes above it");

        // The pass goes on with its count, and ends with nothing left to look for.
        let events = Events::default();
        let rest = index.embed_pending(&events).unwrap();
        assert_eq!(rest, notes - TEXTS_PER_EMBED);
        let said = events.embedding();
        assert_eq!(said.first().unwrap(), &format!("embedded {TEXTS_PER_EMBED}/{notes}"));
        assert_eq!(said.last().unwrap(), &format!("embedded {notes}/{notes}"));
        assert_eq!(index.unembedded(), Unembedded::None);
        assert_eq!(index.counts(), (notes + 1, notes + 1));
        assert_eq!(index.embed_pending(&events).unwrap(), 0, "none to look for");

        // Chunks that come in when none lacked a vector: only they are counted.
        std::fs::write(root.path().join("later.md"), "# Later\n\nOtters.\n").unwrap();
        index.sync(&vault, Pass::Words, &Silent).unwrap();
        let Unembedded::Above(after) = index.unembedded() else { panic!("only the new") };
        assert_eq!(index.store().texts_missing_vectors(after).unwrap(), 1);
        let events = Events::default();
        assert_eq!(index.embed_pending(&events).unwrap(), 1);
        assert_eq!(events.embedding(), ["embedded 0/1", "embedded 1/1"]);
        assert_eq!(index.unembedded(), Unembedded::None);
    }

    #[test]
    fn a_pass_that_gave_way_leaves_the_vectors_file_and_the_builds_record_to_its_end() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        let notes = VECTORS_REWRITE_ROWS + 100;
        one_line_notes(root.path(), notes);
        // It gives way after embedding more texts than a finished pass rewrites the file for.
        let batches = VECTORS_REWRITE_ROWS / TEXTS_PER_EMBED + 1;
        let first = index.sync(&vault, Pass::Changed, &WaitedAfter::new(batches));
        let first = first.unwrap();
        assert_eq!(first.texts_embedded, batches * TEXTS_PER_EMBED);
        assert_eq!(index.dense().overlay_len(), first.texts_embedded, "the file is as it was");
        let key = coverage::LastBuild::key("v");
        assert_eq!(index.store().meta(&key).unwrap(), None, "no build recorded yet");

        let report = index.resume_sync(&vault, first, &Silent).unwrap();
        assert_eq!(report.texts_embedded, notes);
        assert_eq!(index.dense().overlay_len(), 0, "every vector moved into the file");
        assert_eq!(index.dense().base_rows(), notes);
        assert!(index.store().meta(&key).unwrap().is_some());
    }

    #[test]
    fn a_pass_that_gave_way_goes_on_embedding_without_walking_its_files_again() {
        let (root, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (vault, index) = (vault(root.path()), index(data.path()));
        let notes = TEXTS_PER_EMBED * 2 + 5;
        one_line_notes(root.path(), notes);
        // A write waits from the start: the pass commits its files, then gives way at once.
        let first = index.sync(&vault, Pass::Changed, &WaitedAfter::new(0)).unwrap();
        assert_eq!((first.files_chunked, first.texts_embedded), (notes, 0));
        assert_eq!(index.counts(), (notes, 0));

        let events = Events::default();
        let report = index.resume_sync(&vault, first, &events).unwrap();
        assert_eq!((report.files_seen, report.files_chunked), (notes, notes), "what it walked");
        assert_eq!(report.texts_embedded, notes);
        assert_eq!(index.counts(), (notes, notes));
        let walked: Vec<String> =
            events.0.lock().unwrap().iter().filter(|e| e.starts_with("files")).cloned().collect();
        assert_eq!(walked, Vec::<String>::new(), "no file walked again");
        let last = index.store().meta(&coverage::LastBuild::key("v")).unwrap().unwrap();
        let last: coverage::LastBuild = serde_json::from_str(&last).unwrap();
        assert_eq!((last.files_chunked, last.texts_embedded), (notes, notes));
    }
}
