//! The BM25 arm: a tantivy index of chunk bodies, searched with our own analyzer.
//!
//! Owns the on-disk index folder, its schema, the single writer and the reader, plus the rule
//! that an index of another schema or tokenizer version is wiped and recreated on open. The
//! versions live in tantivy's commit payload (a small JSON object wrapping the caller's own
//! payload), so they change atomically with the data they describe. It does not tokenize
//! queries (callers pass [`tokenize`](crate::index::tokenize::tokenize) output), fuse, pin or
//! know which chunks should exist: the store decides that and rebuilds from its own records.
//!
//! The owner also sweeps the folder of tantivy's stale temporaries on open
//! ([`sweep_stale_temporaries`]): tantivy writes `meta.json` and `.managed.json` through a
//! temporary, and a process killed in between leaves it behind for good.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::directory::error::LockError;
use tantivy::merge_policy::LogMergePolicy;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, Occur, Query, TermQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, TantivyError, Term};
use unicode_normalization::UnicodeNormalization;

use crate::index::tokenize::{TOKENIZER_VERSION, tokens_with_offsets};
use crate::{Error, ErrorCode, Result};

/// Bump when the fields below change in a way an old index cannot serve.
const SCHEMA_VERSION: u32 = 2;
/// The name our analyzer is registered under in tantivy.
const ANALYZER: &str = "mdvault";
const WRITER_HEAP_BYTES: usize = 50_000_000;
/// What a stand-in word weighs beside a query word (see [`LexicalIndex::search_with`]).
const STAND_IN_WEIGHT: f32 = 0.5;
/// The shortest query word that [`LexicalIndex::near_terms`] finds stand-ins for.
const NEAR_MIN_CHARS: usize = 4;
/// Endings the stemmer drops from a word, longest first: a misspelt word keeps its ending,
/// since the stemmer does not recognise the word.
const STEM_ENDINGS: &[&str] = &[
    "ation", "ness", "ment", "ings", "able", "ible", "ing", "ers", "ion", "ful", "ous", "ive",
    "ist", "ism", "ise", "ize", "ed", "er", "es", "ly", "al", "s",
];

/// A filter applied before the top `limit` is taken; `None` (or an empty prefix) means no filter.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Filter<'a> {
    /// Only chunks of this vault (exact name).
    pub(crate) vault: Option<&'a str>,
    /// Only chunks of these vaults (empty: any): the configured ones, or the several a
    /// client's grant reaches. The store can outlive a vault's place in the configuration;
    /// filtering here keeps such chunks from taking candidate places.
    pub(crate) vaults: &'a [String],
    /// Only chunks under this folder: case-insensitive, whole path segments.
    pub(crate) prefix: Option<&'a str>,
    /// Only chunks under one of these folders (empty: any), as a client's grant allows.
    pub(crate) allow: &'a [String],
    /// No chunk under any of these folders, as a client's grant denies.
    pub(crate) deny: &'a [String],
}

/// One lexical match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The store's id of the chunk.
    pub(crate) chunk_id: u64,
    /// The BM25 score, always > 0.
    pub(crate) score: f32,
}

/// What one chunk gives the index: `body` is everything searched
/// ([`lexical_text`](crate::index::chunker::lexical_text)), `heading` the part of it that names
/// the chunk ([`heading_text`](crate::index::chunker::heading_text)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text {
    pub(crate) heading: String,
    pub(crate) body: String,
}

impl Text {
    /// A chunk's two texts, each from its one rule in the chunker.
    pub(crate) fn of(title: &str, aliases: &str, breadcrumb: &str, text: &str) -> Text {
        use crate::index::chunker::{heading_text, lexical_text};
        Text {
            heading: heading_text(title, aliases, breadcrumb),
            body: lexical_text(title, aliases, breadcrumb, text),
        }
    }
}

/// A test's chunk: all body, no heading.
#[cfg(test)]
impl From<&str> for Text {
    fn from(body: &str) -> Text {
        Text { heading: String::new(), body: body.to_string() }
    }
}

#[cfg(test)]
impl From<&String> for Text {
    fn from(body: &String) -> Text {
        Text::from(body.as_str())
    }
}

#[cfg(test)]
impl From<&&str> for Text {
    fn from(body: &&str) -> Text {
        Text::from(*body)
    }
}

/// What a search adds to each query word's BM25 in the body, each as a share of it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Boosts {
    /// A word's match in the chunk's heading field (title, aliases, heading path).
    pub(crate) heading: f32,
}

/// The lexical index of one data folder: one writer, many concurrent searchers.
pub(crate) struct LexicalIndex {
    dir: PathBuf,
    fields: Fields,
    index: Index,
    /// Opened on the first write, so a process that only searches (the CLI beside a running
    /// server) never takes the folder's writer lock.
    writer: Mutex<Option<IndexWriter>>,
    reader: IndexReader,
    payload: RwLock<Option<String>>,
    was_reset: bool,
    /// Opened with [`LexicalIndex::open_reader`]: never takes the writer.
    read_only: bool,
}

#[derive(Clone, Copy)]
struct Fields {
    chunk_id: Field,
    vault: Field,
    folders: Field,
    body: Field,
    /// The chunk's [heading text](crate::index::chunker::heading_text), also in `body`.
    heading: Field,
}

/// An index ready to serve, with the caller's payload from its last commit.
struct Opened {
    index: Index,
    payload: Option<String>,
}

/// What we store in tantivy's commit payload.
#[derive(Serialize, Deserialize)]
struct Stamp {
    schema: u32,
    tokenizer: u32,
    payload: Option<String>,
}

impl LexicalIndex {
    /// Opens the index in `dir`, creating it if absent and recreating it if it cannot serve.
    pub(crate) fn open(dir: &Path) -> Result<LexicalIndex> {
        let (schema, fields) = build_schema();
        fs::create_dir_all(dir).map_err(|err| Error::write_io(&describe(dir), &err))?;
        sweep_stale_temporaries(dir, crate::vault::sweep::process_start());
        let existing =
            if dir.join("meta.json").exists() { open_existing(dir, &schema)? } else { None };
        let mut was_reset = false;
        let opened = match existing {
            Some(opened) => opened,
            None => {
                // Anything left here is an index we cannot use, or the debris of a crash
                // before the first commit; an empty folder is simply a first start.
                let has_files = fs::read_dir(dir)
                    .map_err(|err| Error::read_io(&describe(dir), &err))?
                    .next()
                    .is_some();
                if has_files {
                    wipe(dir)?;
                    was_reset = true;
                }
                create(dir, &schema)?
            }
        };
        LexicalIndex::serve(dir, fields, opened, was_reset, false)
    }

    /// Opens an existing index for searching only: no writer is ever taken, nothing is created
    /// or wiped. For a process beside the owner, which keeps the index; refuses when there is
    /// no usable index (the owner is creating or rebuilding it).
    pub(crate) fn open_reader(dir: &Path) -> Result<LexicalIndex> {
        let (schema, fields) = build_schema();
        let opened =
            if dir.join("meta.json").exists() { open_existing(dir, &schema)? } else { None };
        let Some(opened) = opened else {
            return Err(Error::new(
                ErrorCode::NotReady,
                format!(
                    "the lexical index in {} is missing or being rebuilt by the process that \
                     owns it; retry in a moment",
                    describe(dir)
                ),
            ));
        };
        LexicalIndex::serve(dir, fields, opened, false, true)
    }

    /// An opened index with its reader, ready to search (and, unless `read_only`, to write on
    /// the first change).
    fn serve(
        dir: &Path,
        fields: Fields,
        opened: Opened,
        was_reset: bool,
        read_only: bool,
    ) -> Result<LexicalIndex> {
        // Commits made by another process (the owner writing while a reader searches) become
        // visible shortly after they land; our own commits reload explicitly.
        let reader = opened
            .index
            .reader_builder()
            .reload_policy(ReloadPolicy::OnCommitWithDelay)
            .try_into()
            .map_err(|err| internal(dir, "open a reader on", &err))?;
        Ok(LexicalIndex {
            dir: dir.to_path_buf(),
            fields,
            index: opened.index,
            writer: Mutex::new(None),
            reader,
            payload: RwLock::new(opened.payload),
            was_reset,
            read_only,
        })
    }

    /// Makes the owner's latest commit visible now (a reader that knows the owner wrote).
    pub(crate) fn reload(&self) -> Result<()> {
        self.reader.reload().map_err(|err| internal(&self.dir, "reload", &err))
    }

    /// Whether `open` had to wipe an unusable or outdated index (the caller must re-add everything).
    pub(crate) fn was_reset(&self) -> bool {
        self.was_reset
    }

    /// The payload recorded with the last commit, `None` if nothing was committed yet.
    pub(crate) fn payload(&self) -> Option<String> {
        self.payload.read().unwrap_or_else(|poison| poison.into_inner()).clone()
    }

    /// Stages one chunk; it is searchable after the next [`commit`](Self::commit).
    ///
    /// Adding an id that is already indexed duplicates it; replace by deleting first.
    pub(crate) fn add(
        &self,
        chunk_id: u64,
        vault: &str,
        path: &str,
        text: impl Into<Text>,
    ) -> Result<()> {
        let text = text.into();
        let mut doc = TantivyDocument::new();
        doc.add_u64(self.fields.chunk_id, chunk_id);
        doc.add_text(self.fields.vault, vault);
        for folder in ancestor_folders(path) {
            doc.add_text(self.fields.folders, folder);
        }
        doc.add_text(self.fields.body, &text.body);
        doc.add_text(self.fields.heading, &text.heading);
        self.with_writer(|w| {
            w.add_document(doc)
                .map(|_| ())
                .map_err(|err| internal(&self.dir, "add a chunk to", &err))
        })
    }

    /// Stages the deletion of one chunk (a no-op if it is not indexed).
    pub(crate) fn delete(&self, chunk_id: u64) -> Result<()> {
        let term = Term::from_field_u64(self.fields.chunk_id, chunk_id);
        self.with_writer(|w| {
            w.delete_term(term);
            Ok(())
        })
    }

    /// Stages the deletion of every chunk, including ones added before this call.
    pub(crate) fn delete_all(&self) -> Result<()> {
        // A delete query is ordered with the adds around it; tantivy's delete_all_documents
        // drops segments directly and could miss documents still being indexed.
        self.with_writer(|w| {
            w.delete_query(Box::new(AllQuery))
                .map(|_| ())
                .map_err(|err| internal(&self.dir, "clear", &err))
        })
    }

    /// Commits staged changes with `payload`, then makes them visible to searches.
    pub(crate) fn commit(&self, payload: &str) -> Result<()> {
        let stamp = Stamp {
            schema: SCHEMA_VERSION,
            tokenizer: TOKENIZER_VERSION,
            payload: Some(payload.to_string()),
        };
        self.with_writer(|w| {
            commit_stamp(w, &stamp).map_err(|err| internal(&self.dir, "commit to", &err))
        })?;
        // The payload is updated before the reader so that a caller never sees new results
        // next to an old generation number.
        *self.payload.write().unwrap_or_else(|poison| poison.into_inner()) =
            Some(payload.to_string());
        self.reader.reload().map_err(|err| internal(&self.dir, "reload", &err))
    }

    /// Whether every chunk in the index (deleted ones still in a segment included) belongs
    /// to one of `vaults`: a chunk has exactly one vault, so that is when the vaults' document
    /// counts add up to each segment's size. A dictionary lookup per vault and segment.
    fn every_chunk_in(&self, searcher: &tantivy::Searcher, vaults: &[&str]) -> bool {
        searcher.segment_readers().iter().all(|segment| {
            let Ok(inverted) = segment.inverted_index(self.fields.vault) else {
                return false;
            };
            let mut held = 0u64;
            for vault in vaults {
                let term = Term::from_field_text(self.fields.vault, vault);
                match inverted.doc_freq(&term) {
                    Ok(n) => held += u64::from(n),
                    Err(_) => return false,
                }
            }
            held == u64::from(segment.max_doc())
        })
    }

    /// BM25 top `limit` chunks matching any of `tokens`, within `filter`, scores > 0 only.
    #[cfg(test)]
    pub(crate) fn search(
        &self,
        tokens: &[String],
        limit: usize,
        filter: &Filter,
    ) -> Result<Vec<Hit>> {
        self.search_with(tokens, &[], Boosts::default(), limit, filter)
    }

    /// [`search`](Self::search), with `stand_ins` (words searched in place of query words no
    /// chunk holds) weighing [`STAND_IN_WEIGHT`] of a query word: a word absent from the vault
    /// is as often a real word as a typo ("fund" near "find"), so its stand-ins may break ties
    /// and lift a chunk a little, never outweigh the words the query has.
    ///
    /// `boosts` add to the BM25 of the body: see [`Boosts`].
    pub(crate) fn search_with(
        &self,
        tokens: &[String],
        stand_ins: &[String],
        boosts: Boosts,
        limit: usize,
        filter: &Filter,
    ) -> Result<Vec<Hit>> {
        let mut seen = HashSet::new();
        let weighed =
            tokens.iter().map(|t| (t, 1.0)).chain(stand_ins.iter().map(|t| (t, STAND_IN_WEIGHT)));
        let term_query = |field: Field, token: &str, weight: f32| -> (Occur, Box<dyn Query>) {
            let term = Term::from_field_text(field, token);
            let query: Box<dyn Query> =
                Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
            let query: Box<dyn Query> = match weight {
                1.0 => query,
                w => Box::new(BoostQuery::new(query, w)),
            };
            (Occur::Should, query)
        };
        let mut terms: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (token, weight) in weighed {
            if token.is_empty() || !seen.insert(token.as_str()) {
                continue;
            }
            terms.push(term_query(self.fields.body, token, weight));
            if boosts.heading > 0.0 {
                terms.push(term_query(self.fields.heading, token, weight * boosts.heading));
            }
        }
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Must, Box::new(BooleanQuery::new(terms)))];
        // Filters restrict the candidates but add nothing to the score, so a filtered hit
        // scores exactly as it would unfiltered. A vault filter every chunk passes (one vault
        // configured, the usual case) is left out: intersected with the words' union it made
        // the search score every chunk holding any query word, where the union alone lets
        // the top-k collector skip blocks that cannot reach the top (at 1M chunks, ~20% of
        // a hybrid search's time went to that intersection).
        let vault_names: Vec<&str> = match filter.vault {
            Some(vault) => vec![vault],
            None => filter.vaults.iter().map(String::as_str).collect(),
        };
        let by_vault = !vault_names.is_empty() && !self.every_chunk_in(&searcher, &vault_names);
        match filter.vault {
            _ if !by_vault => {}
            Some(vault) => {
                clauses.push(zero_score_term(Term::from_field_text(self.fields.vault, vault)));
            }
            None => {
                let any: Vec<(Occur, Box<dyn Query>)> = filter
                    .vaults
                    .iter()
                    .map(|v| {
                        let term = Term::from_field_text(self.fields.vault, v);
                        let q: Box<dyn Query> =
                            Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                        (Occur::Should, q)
                    })
                    .collect();
                let inner = Box::new(BooleanQuery::new(any));
                clauses.push((Occur::Must, Box::new(ConstScoreQuery::new(inner, 0.0))));
            }
        }
        if let Some(prefix) = filter.prefix.map(normalise_folder).filter(|p| !p.is_empty()) {
            clauses.push(zero_score_term(Term::from_field_text(self.fields.folders, &prefix)));
        }
        // A grant's folders, as filters too: before the top `limit`, so they cost no places.
        let folder_terms = |folders: &[String]| -> Box<dyn Query> {
            let any: Vec<(Occur, Box<dyn Query>)> = folders
                .iter()
                .map(|f| {
                    let term = Term::from_field_text(self.fields.folders, &normalise_folder(f));
                    let q: Box<dyn Query> =
                        Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                    (Occur::Should, q)
                })
                .collect();
            Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(any)), 0.0))
        };
        if !filter.allow.is_empty() {
            clauses.push((Occur::Must, folder_terms(filter.allow)));
        }
        if !filter.deny.is_empty() {
            clauses.push((Occur::MustNot, folder_terms(filter.deny)));
        }
        // The words' union alone, when nothing filters, so the collector may prune by it.
        let query: Box<dyn Query> = if clauses.len() == 1 {
            clauses.remove(0).1
        } else {
            Box::new(BooleanQuery::new(clauses))
        };
        let top = searcher
            .search(&query, &TopDocs::with_limit(limit).order_by_score())
            .map_err(|err| internal(&self.dir, "search", &err))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            if score <= 0.0 {
                continue;
            }
            let segment = searcher.segment_reader(address.segment_ord);
            let column = segment
                .fast_fields()
                .u64("chunk_id")
                .map_err(|err| internal(&self.dir, "read chunk ids from", &err))?;
            if let Some(chunk_id) = column.first(address.doc_id) {
                hits.push(Hit { chunk_id, score });
            }
        }
        Ok(hits)
    }

    /// The indexed words that stand in for `token`, a word no chunk holds: those one edit
    /// from it (a transposition counts as one) or from it without a stem's ending, else those
    /// it begins, the commonest first, at most `limit`. Only for a word of letters of
    /// [`NEAR_MIN_CHARS`] or more, since one edit from a shorter word is another word as often
    /// as a typo of it. Deleted chunks may still count until a merge; a stand-in that only
    /// they held finds nothing and costs nothing.
    pub(crate) fn near_terms(&self, token: &str, limit: usize) -> Vec<String> {
        // A number or a code one edit from another is another thing, not a typo of it.
        let word = token.chars().all(char::is_alphabetic);
        if !word || token.chars().count() < NEAR_MIN_CHARS || limit == 0 {
            return Vec::new();
        }
        // The index holds stems, and a misspelt word is not stemmed as the word is
        // ("dishwsher" stays whole; "dishwasher" is "dishwash"), so the word without an ending
        // a stem drops is tried too. Only a real ending: "teeth" without its "h" is one edit
        // from "test", which is no typo of it.
        let heads = std::iter::once(token).chain(
            STEM_ENDINGS
                .iter()
                .filter_map(|ending| token.strip_suffix(ending))
                .filter(|head| head.chars().count() >= NEAR_MIN_CHARS),
        );
        let mut queries: Vec<FuzzyTermQuery> = heads
            .map(|head| FuzzyTermQuery::new(Term::from_field_text(self.fields.body, head), 1, true))
            .collect();
        let whole = Term::from_field_text(self.fields.body, token);
        queries.push(FuzzyTermQuery::new_prefix(whole, 0, true));
        for query in queries {
            let mut found = self.terms_matching(&query);
            found.remove(token);
            if !found.is_empty() {
                let mut found: Vec<(String, u64)> = found.into_iter().collect();
                found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                return found.into_iter().take(limit).map(|(t, _)| t).collect();
            }
        }
        Vec::new()
    }

    /// The body field's words `query`'s automaton accepts, with their chunk counts.
    fn terms_matching(&self, query: &FuzzyTermQuery) -> std::collections::HashMap<String, u64> {
        let mut found = std::collections::HashMap::new();
        let Ok(automaton) = query.automaton() else { return found };
        let searcher = self.reader.searcher();
        for segment in searcher.segment_readers() {
            let Ok(inverted) = segment.inverted_index(self.fields.body) else { continue };
            let Ok(mut stream) = inverted.terms().search(&automaton).into_stream() else {
                continue;
            };
            while stream.advance() {
                if let Ok(word) = std::str::from_utf8(stream.key()) {
                    *found.entry(word.to_string()).or_default() +=
                        u64::from(stream.value().doc_freq);
                }
            }
        }
        found
    }

    /// In how many live chunks of the whole index `token` occurs (filters do not apply).
    pub(crate) fn doc_freq(&self, token: &str) -> u64 {
        let term = Term::from_field_text(self.fields.body, token);
        let searcher = self.reader.searcher();
        let mut total = 0u64;
        for segment in searcher.segment_readers() {
            let Ok(inverted) = segment.inverted_index(self.fields.body) else { continue };
            // tantivy's own count includes deleted chunks until a merge; the lookup override
            // only cares about small counts, and for those walking the postings is cheap.
            let count = match segment.alive_bitset() {
                None => inverted.doc_freq(&term).unwrap_or(0),
                Some(alive) => match inverted.read_postings(&term, IndexRecordOption::Basic) {
                    Ok(Some(postings)) => postings.doc_freq_given_deletes(alive),
                    _ => 0,
                },
            };
            total += u64::from(count);
        }
        total
    }

    /// How many chunks are searchable (committed and not deleted).
    #[cfg(test)]
    pub(crate) fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    fn with_writer<T>(&self, f: impl FnOnce(&mut IndexWriter) -> Result<T>) -> Result<T> {
        // A panic while holding the lock leaves tantivy's writer consistent (its own state is
        // behind its own locks), so a poisoned mutex is still usable.
        if self.read_only {
            return Err(Error::new(
                ErrorCode::InternalError,
                format!(
                    "the lexical index in {} was opened read-only and cannot be written; this \
                     is a bug, please report it",
                    describe(&self.dir)
                ),
            ));
        }
        let mut guard = self.writer.lock().unwrap_or_else(|poison| poison.into_inner());
        let writer = match guard.as_mut() {
            Some(writer) => writer,
            None => guard.insert(open_writer(&self.index, &self.dir)?),
        };
        f(writer)
    }
}

/// Opens an index that has a meta.json. `Ok(None)` means it must be wiped; `Err` means it must
/// be left alone (another process is using it).
fn open_existing(dir: &Path, schema: &Schema) -> Result<Option<Opened>> {
    let Ok(mut index) = Index::open_in_dir(dir) else { return Ok(None) };
    if index.schema() != *schema {
        return Ok(None);
    }
    register_analyzer(&mut index);
    let Ok(meta) = index.load_metas() else { return Ok(None) };
    let stamp = meta.payload.as_deref().and_then(|raw| serde_json::from_str::<Stamp>(raw).ok());
    match stamp {
        Some(stamp) if stamp.schema == SCHEMA_VERSION && stamp.tokenizer == TOKENIZER_VERSION => {
            // A reader proves the segment files are there and readable before we trust them.
            if index.reader().is_err() {
                return Ok(None);
            }
            Ok(Some(Opened { index, payload: stamp.payload }))
        }
        _ => Ok(None),
    }
}

/// Creates a fresh index and commits an empty stamp, so a later open can tell our versions.
fn create(dir: &Path, schema: &Schema) -> Result<Opened> {
    let mut index =
        Index::create_in_dir(dir, schema.clone()).map_err(|err| internal(dir, "create", &err))?;
    register_analyzer(&mut index);
    let mut writer = index
        .writer_with_num_threads(1, WRITER_HEAP_BYTES)
        .map_err(|err| internal(dir, "open a writer on", &err))?;
    let stamp = Stamp { schema: SCHEMA_VERSION, tokenizer: TOKENIZER_VERSION, payload: None };
    commit_stamp(&mut writer, &stamp).map_err(|err| internal(dir, "initialise", &err))?;
    Ok(Opened { index, payload: None })
}

/// How long a busy writer lock is waited for before the refusal. An owner that is ending (a
/// server restarted by its service manager, an index dropped in this process whose writer's
/// threads are still finishing) releases it within moments; another live server never does.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The share of a segment's chunks that may be deleted before it is merged (alone if need
/// be) to drop them. Why: BM25 counts a deleted chunk (in the document count, the average
/// length and its words' document frequencies) until its segment is merged, and tantivy's
/// default policy never merges a large segment for its deletions alone, so the first build's
/// segment of a vault whose notes are edited week after week scored with more and more of
/// their old text. Lucene's tiered policy allows 20-33%; a merge runs on tantivy's own thread.
const MAX_DELETED_SHARE: f32 = 0.2;

/// Takes the folder's writer lock; another process holding it is a clear refusal.
fn open_writer(index: &Index, dir: &Path) -> Result<IndexWriter> {
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    let err = loop {
        match index.writer_with_num_threads(1, WRITER_HEAP_BYTES) {
            Ok(writer) => {
                let mut policy = LogMergePolicy::default();
                policy.set_del_docs_ratio_before_merge(MAX_DELETED_SHARE);
                writer.set_merge_policy(Box::new(policy));
                return Ok(writer);
            }
            Err(TantivyError::LockFailure(LockError::LockBusy, _))
                if std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(err) => break err,
        }
    };
    match err {
        TantivyError::LockFailure(LockError::LockBusy, _) => Err(Error::new(
            ErrorCode::InternalError,
            format!(
                "{} is in use by another process; stop the other mdvault server using this \
                 data folder and try again, or let it do the indexing (with MDVAULT_API_KEY \
                 set, `mdvault index` asks a running server to)",
                describe(dir)
            ),
        )),
        err => Err(internal(dir, "open a writer on", &err)),
    }
}

fn commit_stamp(writer: &mut IndexWriter, stamp: &Stamp) -> tantivy::Result<()> {
    let raw = serde_json::to_string(stamp).expect("a struct of numbers and strings serialises");
    let mut prepared = writer.prepare_commit()?;
    prepared.set_payload(&raw);
    prepared.commit().map(|_| ())
}

/// tantivy's temporaries: `tempfile`'s default name, `.tmp` and six random alphanumerics. No
/// file tantivy keeps (`meta.json`, `.managed.json`, `.tantivy-*.lock`, `<uuid>.<ext>`
/// segment files) looks like that.
fn is_tantivy_temp(name: &str) -> bool {
    name.strip_prefix(".tmp")
        .is_some_and(|rest| rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Removes tantivy's temporaries older than `started` from the index folder. Only the
/// owner calls this, before it writes (it holds the data directory's `owner.lock`, so no
/// other process writes here, and this process has not started to); conservative all the
/// same: regular files only, that one name shape only, nothing younger than this process.
fn sweep_stale_temporaries(dir: &Path, started: std::time::SystemTime) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta.modified().is_ok_and(|m| m < started);
        if is_tantivy_temp(&name) && meta.is_file() && old && fs::remove_file(entry.path()).is_ok()
        {
            removed.push(name);
        }
    }
    if !removed.is_empty() {
        tracing::info!(
            "removed {} stale temporary file(s) from {}: {}",
            removed.len(),
            describe(dir),
            removed.join(", ")
        );
    }
}

fn wipe(dir: &Path) -> Result<()> {
    tracing::warn!(dir = %dir.display(), "lexical index is unusable or outdated; rebuilding it");
    fs::remove_dir_all(dir).map_err(|err| Error::write_io(&describe(dir), &err))?;
    fs::create_dir_all(dir).map_err(|err| Error::write_io(&describe(dir), &err))
}

fn build_schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let chunk_id = builder.add_u64_field("chunk_id", INDEXED | FAST | STORED);
    let vault = builder.add_text_field("vault", STRING);
    let folders = builder.add_text_field("folders", STRING);
    let indexing = |with: IndexRecordOption| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default().set_tokenizer(ANALYZER).set_index_option(with),
        )
    };
    let body = builder.add_text_field("body", indexing(IndexRecordOption::WithFreqs));
    let heading = builder.add_text_field("heading", indexing(IndexRecordOption::WithFreqs));
    (builder.build(), Fields { chunk_id, vault, folders, body, heading })
}

fn register_analyzer(index: &mut Index) {
    index.tokenizers().register(ANALYZER, TextAnalyzer::from(MdvaultTokenizer));
}

/// A query clause that must match and scores nothing.
fn zero_score_term(term: Term) -> (Occur, Box<dyn Query>) {
    let inner = Box::new(TermQuery::new(term, IndexRecordOption::Basic));
    (Occur::Must, Box::new(ConstScoreQuery::new(inner, 0.0)))
}

/// Every ancestor folder of a vault-relative path, normalised: `A/B/c.md` -> `a`, `a/b`.
fn ancestor_folders(path: &str) -> Vec<String> {
    let normalised = normalise_folder(path);
    let mut folders = Vec::new();
    let mut end = 0;
    while let Some(slash) = normalised[end..].find('/') {
        end += slash;
        folders.push(normalised[..end].to_string());
        end += 1;
    }
    folders
}

/// The comparable form of a folder or path: NFC, lowercase, no empty segments.
fn normalise_folder(path: &str) -> String {
    // NFC because macOS hands out decomposed names while people type composed ones.
    let folded: String = path.nfc().collect::<String>().to_lowercase();
    folded.split('/').filter(|segment| !segment.is_empty()).collect::<Vec<_>>().join("/")
}

fn describe(dir: &Path) -> String {
    format!("the lexical index folder {}", dir.display())
}

fn internal(dir: &Path, action: &str, err: &TantivyError) -> Error {
    Error::new(
        ErrorCode::InternalError,
        format!(
            "failed to {action} the lexical index at {}: {err}; delete {} and restart, it is \
             rebuilt from the store",
            dir.display(),
            dir.display()
        ),
    )
}

/// Our analyzer as a tantivy tokenizer.
#[derive(Clone, Copy)]
struct MdvaultTokenizer;

struct MdvaultTokenStream {
    tokens: std::vec::IntoIter<Token>,
    current: Token,
}

impl Tokenizer for MdvaultTokenizer {
    type TokenStream<'a> = MdvaultTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> MdvaultTokenStream {
        let tokens: Vec<Token> = tokens_with_offsets(text)
            .into_iter()
            .enumerate()
            .map(|(position, (text, range))| Token {
                offset_from: range.start,
                offset_to: range.end,
                position,
                text,
                position_length: 1,
            })
            .collect();
        MdvaultTokenStream { tokens: tokens.into_iter(), current: Token::default() }
    }
}

impl TokenStream for MdvaultTokenStream {
    fn advance(&mut self) -> bool {
        match self.tokens.next() {
            Some(token) => {
                self.current = token;
                true
            }
            None => false,
        }
    }

    fn token(&self) -> &Token {
        &self.current
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::index::tokenize::tokenize;

    const DISTRACTORS: &[&str] = &[
        "Paid the gas bill for the flat; the meter reading was sent in March.",
        "Car insurance renewal: the premium went up, call the broker about the excess.",
        "The router at home was restarted after the broadband outage last week.",
        "Mortgage statement shows the fixed rate ends next year; compare offers.",
        "Dentist appointment moved to Tuesday; bring the referral letter.",
        "Council tax band review requested; reference number to follow by post.",
        "Spare part ordered for the dishwasher, the pump was running noisily.",
        "Passport renewal form filled in, photos still needed from the booth.",
        "Pension contributions increased to eight percent from the next payslip.",
        "Boiler service booked; engineer needs access to the loft and the cupboard.",
        "Bank account switched; direct debits move over within seven working days.",
        "Electricity tariff changed to a fixed deal with a standing charge.",
    ];

    fn open(dir: &Path) -> LexicalIndex {
        LexicalIndex::open(dir).unwrap()
    }

    fn search(index: &LexicalIndex, query: &str, limit: usize, filter: &Filter) -> Vec<u64> {
        index.search(&tokenize(query), limit, filter).unwrap().iter().map(|h| h.chunk_id).collect()
    }

    fn no_filter() -> Filter<'static> {
        Filter::default()
    }

    /// Chunk ids 100.. are the distractors; the caller adds the interesting chunks.
    fn with_distractors(dir: &Path) -> LexicalIndex {
        let index = open(dir);
        for (i, text) in DISTRACTORS.iter().enumerate() {
            index.add(100 + i as u64, "main", &format!("Home/Misc/Note {i}.md"), text).unwrap();
        }
        index
    }

    #[test]
    fn a_word_no_chunk_holds_finds_the_words_one_edit_away_else_those_it_begins() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        index.commit("{}").unwrap();
        let near = |word: &str| index.near_terms(&tokenize(word)[0], 3);
        // A dropped letter, a swapped pair, a wrong letter.
        assert_eq!(near("dishwsher"), ["dishwash"]);
        assert_eq!(near("mortgaeg"), ["mortgag"]);
        assert_eq!(near("brodband"), ["broadband"]);
        // Nothing one edit away: the words it begins.
        assert_eq!(near("elect"), ["electr"]);
        // Too short to guess at, or nothing near: "teeth" without an "h" is not a typo of
        // "test".
        index.add(2, "main", "Misc/Test.md", "A test text for the meet.").unwrap();
        index.commit("{}").unwrap();
        assert!(near("teeth").is_empty(), "{:?}", near("teeth"));
        assert!(near("cat").is_empty());
        assert!(near("qwzxv").is_empty());
        // Not a word: an identifier one digit off is another identifier.
        index.add(1, "main", "Finance/Bank.md", "Savings account 7726041 opened.").unwrap();
        index.commit("{}").unwrap();
        assert!(near("7726042").is_empty());
    }

    fn scores(index: &LexicalIndex, query: &str, boosts: Boosts) -> Vec<(u64, f32)> {
        // The distractors (ids from 100) only make the words' rarity realistic.
        let hits = index.search_with(&tokenize(query), &[], boosts, 50, &no_filter()).unwrap();
        hits.iter().filter(|h| h.chunk_id < 100).map(|h| (h.chunk_id, h.score)).collect()
    }

    #[test]
    fn a_query_word_in_a_chunks_heading_weighs_more_only_when_the_heading_weight_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        let body = |heading: &str| Text {
            heading: heading.to_string(),
            body: format!("{heading} the pressure gauge reads low again"),
        };
        index.add(1, "main", "Home/A.md", body("Boiler")).unwrap();
        index.add(2, "main", "Home/B.md", body("Kitchen")).unwrap();
        index.add(3, "main", "Home/C.md", "Kitchen the boiler pressure gauge reads low").unwrap();
        index.commit("1").unwrap();
        let plain = scores(&index, "boiler", Boosts::default());
        let lifted = scores(&index, "boiler", Boosts { heading: 1.0 });
        // Unboosted, the heading is body text like any other: two chunks of one mention each.
        assert_eq!(plain.len(), 2);
        assert_eq!(lifted.len(), 2);
        assert_eq!(lifted[0].0, 1, "{lifted:?}");
        let of = |list: &[(u64, f32)], id| list.iter().find(|h| h.0 == id).unwrap().1;
        assert!(of(&lifted, 1) > of(&plain, 1));
        assert_eq!(of(&lifted, 3), of(&plain, 3), "a body-only match gains nothing");
    }

    #[test]
    fn identifiers_rank_their_chunk_first() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        index
            .add(1, "main", "Finance/Bank.md", "Savings account NB-7726041 opened in 2019.")
            .unwrap();
        index
            .add(2, "main", "Home/Network.md", "The NAS has the static address 10.0.4.12 now.")
            .unwrap();
        index
            .add(3, "main", "Car/Car.md", "Our car, reg WN70 RXE, is due its MOT in May.")
            .unwrap();
        index
            .add(4, "main", "Home/Parts.md", "Replacement filter DP-4418-K fits the hood.")
            .unwrap();
        index.commit("1").unwrap();
        assert_eq!(index.num_docs(), 16);
        assert_eq!(search(&index, "NB-7726041", 50, &no_filter()), vec![1]);
        assert_eq!(search(&index, "10.0.4.12", 50, &no_filter())[0], 2);
        assert_eq!(search(&index, "wn70 rxe", 50, &no_filter()), vec![3]);
        assert_eq!(search(&index, "what is the reg of the car WN70 RXE", 50, &no_filter())[0], 3);
        assert_eq!(search(&index, "part DP-4418-K", 50, &no_filter())[0], 4);
    }

    #[test]
    fn scores_are_positive_and_descending() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        index.commit("1").unwrap();
        let hits = index.search(&tokenize("fixed renewal the"), 50, &no_filter()).unwrap();
        let mut ids: Vec<u64> = hits.iter().map(|h| h.chunk_id).collect();
        ids.sort();
        assert_eq!(ids, vec![101, 103, 107, 111]);
        assert!(hits.iter().all(|h| h.score > 0.0));
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        assert_eq!(index.search(&tokenize("zebra"), 50, &no_filter()).unwrap(), vec![]);
        assert_eq!(index.search(&[], 50, &no_filter()).unwrap(), vec![]);
        assert_eq!(index.search(&tokenize("fixed"), 0, &no_filter()).unwrap(), vec![]);
    }

    #[test]
    fn repeated_query_tokens_count_once() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        index.commit("1").unwrap();
        let once = index.search(&tokenize("boiler"), 5, &no_filter()).unwrap();
        let twice = index.search(&tokenize("boiler boiler"), 5, &no_filter()).unwrap();
        assert_eq!(once, twice);
    }

    #[test]
    fn stemmed_and_cjk_matches() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        index.add(1, "main", "Notes/Hobby.md", "She runs every morning before work.").unwrap();
        index.add(2, "main", "Recipes/川菜.md", "今晚做麻婆豆腐和米饭。").unwrap();
        index.add(3, "main", "Recipes/和食.md", "東京タワーの近くで昼ご飯。").unwrap();
        index.commit("1").unwrap();
        assert_eq!(search(&index, "running", 50, &no_filter()), vec![1, 106]);
        assert_eq!(search(&index, "豆腐", 50, &no_filter()), vec![2]);
        assert_eq!(search(&index, "麻婆豆腐", 50, &no_filter()), vec![2]);
        assert_eq!(search(&index, "タワー", 50, &no_filter()), vec![3]);
    }

    #[test]
    fn a_vault_filter_every_chunk_passes_is_skipped_and_one_that_excludes_a_chunk_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        index.add(1, "main", "Home/Gas.md", "gas meter reading for the boiler").unwrap();
        index.commit("1").unwrap();
        let hits = |filter: &Filter| index.search(&tokenize("gas boiler"), 10, filter).unwrap();
        let main = Filter { vault: Some("main"), ..Filter::default() };
        let listed = ["main".to_string()];
        let among = Filter { vaults: &listed, ..Filter::default() };
        let searcher = index.reader.searcher();
        assert!(index.every_chunk_in(&searcher, &["main"]));
        assert!(!index.every_chunk_in(&searcher, &["work"]));
        // Skipped or not, the filter adds nothing to a score: the same hits, the same scores.
        assert_eq!(hits(&main), hits(&no_filter()));
        assert_eq!(hits(&among), hits(&no_filter()));
        assert!(hits(&Filter { vault: Some("work"), ..Filter::default() }).is_empty());

        index.add(2, "work", "Home/Gas.md", "gas contract for the boiler").unwrap();
        index.commit("2").unwrap();
        let searcher = index.reader.searcher();
        assert!(!index.every_chunk_in(&searcher, &["main"]));
        assert!(index.every_chunk_in(&searcher, &["main", "work"]));
        assert!(!hits(&main).iter().any(|h| h.chunk_id == 2), "the other vault's chunk leaked");
        assert!(!hits(&among).iter().any(|h| h.chunk_id == 2), "the other vault's chunk leaked");
        assert!(hits(&no_filter()).iter().any(|h| h.chunk_id == 2));

        // A deleted chunk still counts in its segment until a merge, so the filter stays.
        index.delete(2).unwrap();
        index.commit("3").unwrap();
        assert!(!hits(&main).iter().any(|h| h.chunk_id == 2));
    }

    #[test]
    fn vault_and_prefix_filters() {
        let tmp = tempfile::tempdir().unwrap();
        let index = open(tmp.path());
        index.add(1, "main", "Home/Utilities/Gas.md", "gas meter reading").unwrap();
        index.add(2, "main", "Home/Utility Room.md", "gas leak alarm in the utility room").unwrap();
        index.add(3, "main", "Home/Cards.md", "gas card").unwrap();
        index.add(4, "work", "Home/Utilities/Gas.md", "gas contract").unwrap();
        index.add(5, "main", "Gas.md", "gas").unwrap();
        index.commit("1").unwrap();
        let sorted = |mut ids: Vec<u64>| {
            ids.sort();
            ids
        };
        let by = |vault, prefix| {
            sorted(search(
                &index,
                "gas",
                50,
                &Filter { vault, vaults: &[], prefix, allow: &[], deny: &[] },
            ))
        };
        assert_eq!(by(None, None), vec![1, 2, 3, 4, 5]);
        assert_eq!(by(Some("main"), None), vec![1, 2, 3, 5]);
        assert_eq!(by(Some("work"), None), vec![4]);
        assert_eq!(by(Some("Main"), None), Vec::<u64>::new());
        assert_eq!(by(None, Some("home/utilities")), vec![1, 4]);
        assert_eq!(by(None, Some("/HOME/Utilities/")), vec![1, 4]);
        assert_eq!(by(Some("main"), Some("Home/Utilities")), vec![1]);
        assert_eq!(by(None, Some("Home/Util")), Vec::<u64>::new());
        assert_eq!(by(None, Some("Home/Car")), Vec::<u64>::new());
        assert_eq!(by(None, Some("home")), vec![1, 2, 3, 4]);
        assert_eq!(by(None, Some("")), vec![1, 2, 3, 4, 5]);
        assert_eq!(by(None, Some("/")), vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_grants_folders_narrow_the_candidates_by_whole_segments_in_any_case() {
        let tmp = tempfile::tempdir().unwrap();
        let index = open(tmp.path());
        index.add(1, "main", "Inbox/a.md", "gas").unwrap();
        index.add(2, "main", "Inbox/Secret/s.md", "gas gas").unwrap();
        index.add(3, "main", "Private/p.md", "gas gas gas").unwrap();
        index.add(4, "main", "Inboxes/b.md", "gas").unwrap();
        index.add(5, "main", "Gas.md", "gas").unwrap();
        index.commit("1").unwrap();
        let by = |allow: &[String], deny: &[String]| {
            let mut ids = search(
                &index,
                "gas",
                50,
                &Filter { vault: None, vaults: &[], prefix: None, allow, deny },
            );
            ids.sort();
            ids
        };
        let list = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(by(&list(&["Inbox"]), &[]), vec![1, 2]);
        assert_eq!(by(&list(&["inbox/"]), &list(&["INBOX/Secret"])), vec![1]);
        assert_eq!(by(&[], &list(&["Private"])), vec![1, 2, 4, 5]);
        assert_eq!(by(&list(&["Inbox", "Private"]), &list(&["Inbox/Secret"])), vec![1, 3]);
    }

    #[test]
    fn filtered_search_fills_the_limit_from_inside_the_filter() {
        let tmp = tempfile::tempdir().unwrap();
        let index = open(tmp.path());
        // Strong matches outside the filter, weaker ones inside it.
        for id in 0..20 {
            index.add(id, "main", "Out/Note.md", "boiler boiler boiler").unwrap();
        }
        for id in 20..30 {
            index.add(id, "main", "In/Note.md", "boiler plus many other words about it").unwrap();
        }
        index.commit("1").unwrap();
        let unfiltered = index.search(&tokenize("boiler"), 5, &no_filter()).unwrap();
        assert!(unfiltered.iter().all(|h| h.chunk_id < 20));
        let filter = Filter { vault: None, vaults: &[], prefix: Some("in"), allow: &[], deny: &[] };
        let inside = index.search(&tokenize("boiler"), 5, &filter).unwrap();
        assert_eq!(inside.len(), 5);
        assert!(inside.iter().all(|h| (20..30).contains(&h.chunk_id)));
        // Filters add nothing to the score.
        let all = index.search(&tokenize("boiler"), 50, &no_filter()).unwrap();
        let inside_all = index.search(&tokenize("boiler"), 50, &filter).unwrap();
        for hit in &inside_all {
            let same = all.iter().find(|h| h.chunk_id == hit.chunk_id).unwrap();
            assert_eq!(same.score, hit.score);
        }
    }

    #[test]
    fn delete_re_add_and_delete_all() {
        let tmp = tempfile::tempdir().unwrap();
        let index = open(tmp.path());
        index.add(1, "main", "A.md", "alpha beta").unwrap();
        index.add(2, "main", "B.md", "alpha gamma").unwrap();
        index.commit("1").unwrap();
        assert_eq!(index.doc_freq("alpha"), 2);
        index.delete(1).unwrap();
        // Staged only: nothing changes until the commit.
        assert_eq!(index.num_docs(), 2);
        index.commit("2").unwrap();
        assert_eq!(index.num_docs(), 1);
        assert_eq!(search(&index, "alpha", 50, &no_filter()), vec![2]);
        assert_eq!(index.doc_freq("alpha"), 1);
        assert_eq!(index.doc_freq("beta"), 0);
        // Delete then re-add in the same batch: the new text wins.
        index.delete(2).unwrap();
        index.add(2, "main", "B.md", "delta").unwrap();
        index.commit("3").unwrap();
        assert_eq!(search(&index, "alpha", 50, &no_filter()), Vec::<u64>::new());
        assert_eq!(search(&index, "delta", 50, &no_filter()), vec![2]);
        // delete_all covers documents added before it in the same batch, not after it.
        index.add(3, "main", "C.md", "delta").unwrap();
        index.delete_all().unwrap();
        index.add(4, "main", "D.md", "delta").unwrap();
        index.commit("4").unwrap();
        assert_eq!(index.num_docs(), 1);
        assert_eq!(search(&index, "delta", 50, &no_filter()), vec![4]);
    }

    #[test]
    fn a_segment_past_a_fifth_deleted_is_merged_so_deleted_chunks_stop_counting_in_bm25() {
        let tmp = tempfile::tempdir().unwrap();
        let index = open(tmp.path());
        for id in 0..100 {
            index
                .add(id, "main", &format!("N{id}.md"), format!("alpha note {id}").as_str())
                .unwrap();
        }
        index.commit("1").unwrap();
        for id in 0..30 {
            index.delete(id).unwrap();
        }
        index.commit("2").unwrap();
        // The merge runs on tantivy's thread: wait for it (a minute at the most).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let counted = loop {
            index.reader.reload().unwrap();
            let searcher = index.reader.searcher();
            let counted: u32 = searcher.segment_readers().iter().map(|s| s.max_doc()).sum();
            if counted == 70 || std::time::Instant::now() > deadline {
                break counted;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(counted, 70, "the 30 deleted chunks still count in the segment's statistics");
        assert_eq!(index.num_docs(), 70);
        assert_eq!(search(&index, "alpha", 200, &no_filter()).len(), 70);
    }

    #[test]
    fn doc_freq_counts_chunks_not_occurrences() {
        let tmp = tempfile::tempdir().unwrap();
        let index = with_distractors(tmp.path());
        index.add(1, "other", "X/Y.md", "KE-8842071 KE-8842071 KE-8842071").unwrap();
        index.commit("1").unwrap();
        assert_eq!(index.doc_freq("8842071"), 1);
        assert_eq!(index.doc_freq("fix"), 2);
        assert_eq!(index.doc_freq("renew"), 2);
        assert_eq!(index.doc_freq("the"), 0);
        assert_eq!(index.doc_freq("absent"), 0);
        assert_eq!(index.num_docs(), 13);
    }

    #[test]
    fn payload_survives_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("lexical");
        {
            let index = open(&dir);
            assert!(!index.was_reset());
            assert_eq!(index.payload(), None);
            index.add(1, "main", "A.md", "alpha").unwrap();
            index.commit("generation 7").unwrap();
            assert_eq!(index.payload().as_deref(), Some("generation 7"));
        }
        let index = open(&dir);
        assert!(!index.was_reset());
        assert_eq!(index.payload().as_deref(), Some("generation 7"));
        assert_eq!(index.num_docs(), 1);
    }

    #[test]
    fn uncommitted_changes_are_lost_on_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let index = open(tmp.path());
            index.add(1, "main", "A.md", "alpha").unwrap();
        }
        let index = open(tmp.path());
        assert!(!index.was_reset());
        assert_eq!((index.num_docs(), index.payload()), (0, None));
    }

    #[test]
    fn another_tokenizer_version_resets() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let index = open(tmp.path());
            index.add(1, "main", "A.md", "alpha").unwrap();
            index.commit("5").unwrap();
        }
        {
            // Rewrite the stamp as an older analyzer would have left it.
            let (schema, _) = build_schema();
            let mut index = Index::open_in_dir(tmp.path()).unwrap();
            assert_eq!(index.schema(), schema);
            register_analyzer(&mut index);
            let mut writer: IndexWriter =
                index.writer_with_num_threads(1, WRITER_HEAP_BYTES).unwrap();
            let old = Stamp {
                schema: SCHEMA_VERSION,
                tokenizer: TOKENIZER_VERSION + 1,
                payload: Some("5".into()),
            };
            commit_stamp(&mut writer, &old).unwrap();
        }
        let index = open(tmp.path());
        assert!(index.was_reset());
        assert_eq!((index.num_docs(), index.payload()), (0, None));
        drop(index);
        assert!(!open(tmp.path()).was_reset());
    }

    #[test]
    fn another_schema_resets() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let mut builder = Schema::builder();
            builder.add_text_field("body", STRING);
            let index = Index::create_in_dir(tmp.path(), builder.build()).unwrap();
            let mut writer: IndexWriter =
                index.writer_with_num_threads(1, WRITER_HEAP_BYTES).unwrap();
            writer.commit().unwrap();
        }
        let index = open(tmp.path());
        assert!(index.was_reset());
        index.add(1, "main", "A.md", "alpha").unwrap();
        index.commit("1").unwrap();
        assert_eq!(search(&index, "alpha", 5, &no_filter()), vec![1]);
    }

    #[test]
    fn garbage_folders_reset() {
        let tmp = tempfile::tempdir().unwrap();
        let corrupt_meta = tmp.path().join("a");
        fs::create_dir_all(&corrupt_meta).unwrap();
        fs::write(corrupt_meta.join("meta.json"), "{ not json").unwrap();
        fs::write(corrupt_meta.join("0123.idx"), [0u8, 159, 146, 150]).unwrap();
        let no_meta = tmp.path().join("b");
        fs::create_dir_all(no_meta.join("sub")).unwrap();
        fs::write(no_meta.join("junk.bin"), "junk").unwrap();
        for dir in [&corrupt_meta, &no_meta] {
            let index = open(dir);
            assert!(index.was_reset(), "{}", dir.display());
            index.add(1, "main", "A.md", "alpha").unwrap();
            index.commit("1").unwrap();
            assert_eq!(search(&index, "alpha", 5, &no_filter()), vec![1]);
            assert!(!dir.join("junk.bin").exists() && !dir.join("0123.idx").exists());
        }
    }

    #[test]
    fn missing_segment_files_reset() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let index = open(tmp.path());
            index.add(1, "main", "A.md", "alpha").unwrap();
            index.commit("1").unwrap();
        }
        for entry in fs::read_dir(tmp.path()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "idx") {
                fs::remove_file(path).unwrap();
            }
        }
        let index = open(tmp.path());
        assert!(index.was_reset());
        assert_eq!(index.num_docs(), 0);
    }

    #[test]
    fn a_second_process_may_search_but_not_write() {
        let tmp = tempfile::tempdir().unwrap();
        let first = open(tmp.path());
        first.add(1, "main", "A.md", "alpha").unwrap();
        first.commit("1").unwrap();
        let second = LexicalIndex::open(tmp.path()).unwrap();
        assert!(!second.was_reset());
        assert_eq!(second.search(&["alpha".into()], 5, &Filter::default()).unwrap().len(), 1);
        let err = second.add(2, "main", "B.md", "beta").err().unwrap();
        assert_eq!(err.code(), ErrorCode::InternalError);
        assert!(err.message().contains("another process"), "{}", err.message());
        assert_eq!(first.num_docs(), 1);
    }

    #[test]
    fn folders_are_whole_segment_prefixes() {
        assert_eq!(ancestor_folders("Home/Utilities/Gas.md"), vec!["home", "home/utilities"]);
        assert_eq!(ancestor_folders("Gas.md"), Vec::<String>::new());
        assert_eq!(ancestor_folders("/Ä/b//c.md"), vec!["ä", "ä/b"]);
        assert_eq!(ancestor_folders("A\u{308}/c.md"), vec!["ä"]);
        assert_eq!(normalise_folder("/Home/Utilities/"), "home/utilities");
    }

    #[test]
    fn concurrent_searches_while_committing() {
        let tmp = tempfile::tempdir().unwrap();
        let index = Arc::new(with_distractors(tmp.path()));
        index.commit("0").unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let index = Arc::clone(&index);
                let done = Arc::clone(&done);
                std::thread::spawn(move || {
                    let (mut searches, mut seen) = (0, 0);
                    while !done.load(Ordering::Relaxed) || searches == 0 {
                        let hits =
                            index.search(&tokenize("boiler loft"), 50, &no_filter()).unwrap();
                        // 109 is never touched by the writer and matches both terms.
                        assert_eq!(hits[0].chunk_id, 109);
                        // Each commit becomes visible whole and in order.
                        assert!(hits.len() >= seen);
                        seen = hits.len();
                        searches += 1;
                    }
                    searches
                })
            })
            .collect();
        for generation in 1..=20u64 {
            index.add(1000 + generation, "main", "Gen/Note.md", "boiler pressure").unwrap();
            index.commit(&generation.to_string()).unwrap();
        }
        done.store(true, Ordering::Relaxed);
        for reader in readers {
            assert!(reader.join().unwrap() > 0);
        }
        assert_eq!(index.doc_freq("boiler"), 21);
        assert_eq!(index.payload().as_deref(), Some("20"));
    }

    #[test]
    fn is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<LexicalIndex>();
    }

    #[test]
    fn only_tantivys_stale_temporaries_are_swept_from_the_index_folder() {
        let tmp = tempfile::tempdir().unwrap();
        drop(open(tmp.path()));
        let names = [".tmpA1b2C3", ".tmpabc", ".tmp-a1b2c", "tmpA1b2C3", ".tmpA1b2C3x"];
        for name in names {
            fs::write(tmp.path().join(name), b"x").unwrap();
        }
        // Nothing is older than a start in the past.
        sweep_stale_temporaries(tmp.path(), std::time::SystemTime::UNIX_EPOCH);
        assert!(tmp.path().join(".tmpA1b2C3").exists());
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        sweep_stale_temporaries(tmp.path(), later);
        assert!(!tmp.path().join(".tmpA1b2C3").exists());
        for kept in &names[1..] {
            assert!(tmp.path().join(kept).exists(), "{kept} was removed");
        }
        // The index itself is untouched and still opens.
        assert!(tmp.path().join("meta.json").exists());
        drop(open(tmp.path()));
    }
}
