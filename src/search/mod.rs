//! Search: a query in, the best passages out, diverse and explained.
//!
//! The pipeline (details in `fusion.rs` and `select.rs`): the lexical arm takes the BM25 top
//! candidates from tantivy and the dense arm the exact cosine top candidates from the matrix,
//! both already narrowed to the requested vault and folder prefix; a fusion of their scores
//! (or ranks) merges them, filed documents are down-weighted, an optional reranker reorders the
//! head, an identifier lookup may pin exact matches first, and a diversity pass caps how many
//! results one note may take. Every result says which arm found it and whether it was pinned;
//! `explain` adds the ranks, scores and constants, and never changes the ranking.
//!
//! Search performs no writes and reaches the network only through the embedder and reranker.

pub(crate) mod eval;
pub(crate) mod feedback;
pub(crate) mod fusion;
pub(crate) mod rerank;
pub(crate) mod scope;
pub(crate) mod select;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::config::SearchSettings;
use crate::error::{Error, ErrorCode, Result};
use crate::index::store::FileKind;
use crate::index::{ChunkMeta, Index, chunker, lexical, tokenize, under};
use crate::vault::VaultScope;
use feedback::Feedback;
pub use fusion::{Candidate, Matched};
use rerank::Reranker;

/// At most this many indexed words stand in for one query word no passage holds.
const STAND_INS: usize = 3;
/// Stand-ins are searched only for a query of at most this many words (after analysis: stop
/// words dropped), the length of what people type into a search box.
const TYPO_QUERY_WORDS: usize = 3;
pub use scope::{Limit, MAX_K, Request, ScopedSearch, SearchScope};

/// Which arms take part; the eval command compares them side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Both arms, fused (the default).
    Hybrid,
    /// BM25 only.
    Lexical,
    /// Vectors only.
    Dense,
}

/// A search as its caller wrote it; nothing in it is decided yet. The front door resolves it
/// into a [`ScopedSearch`] (see [`scope`]), which is what the searcher takes.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// The query text.
    pub(crate) query: String,
    /// How many results; `None` or 0 means the configured default.
    pub k: Option<usize>,
    /// Which vaults: every one, or one by name (decided by `Vaults::scope`).
    pub scope: VaultScope,
    /// Only this folder (root-relative, case-insensitive, whole segments; slashes and spaces
    /// around it are dropped).
    pub prefix: Option<String>,
    /// Rerank more candidates and order purely by the reranker.
    pub thorough: bool,
    /// Use the reranker when one is configured.
    pub rerank: bool,
    /// Which arms.
    pub mode: Mode,
    /// A query vector computed beforehand (the benchmark times embedding separately);
    /// `None` embeds the query text.
    pub(crate) query_vector: Option<Vec<f32>>,
    /// Candidates per arm instead of `search.candidates` (the eval's R@100 needs 100).
    pub(crate) candidates: Option<usize>,
}

impl SearchRequest {
    /// A hybrid request with defaults.
    pub fn new(query: &str) -> SearchRequest {
        SearchRequest {
            query: query.to_string(),
            k: None,
            scope: VaultScope::Every,
            prefix: None,
            thorough: false,
            rerank: true,
            mode: Mode::Hybrid,
            query_vector: None,
            candidates: None,
        }
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The chunk id.
    pub(crate) chunk_id: i64,
    /// The vault.
    pub(crate) vault: String,
    /// Vault-relative path.
    pub path: String,
    /// The file's title.
    pub(crate) title: String,
    /// Heading path, `A::B`, as vault_read's `section` and vault_patch's `target` take it.
    pub(crate) heading: String,
    /// 1-based line where the chunk starts.
    pub(crate) line: usize,
    /// A passage of the chunk around the query.
    pub(crate) excerpt: String,
    /// The whole chunk text.
    pub text: String,
    /// Which arm found it.
    pub matched: Matched,
    /// Pinned by the identifier lookup.
    pub pinned: bool,
    /// A filed document rather than a note.
    pub(crate) document: bool,
    /// Evidence: ranks in each arm and from the reranker, the fused score, the weight and the
    /// score the selection used.
    pub explain: Candidate,
}

/// Constants and decisions of one search, for `explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct Explain {
    /// Arms used.
    pub(crate) mode: Mode,
    /// How the arms were fused.
    pub(crate) fusion: fusion::Fusion,
    /// The RRF constant.
    pub(crate) rrf_k: f64,
    /// The lexical weight (dense is 1).
    pub(crate) lexical_weight: f64,
    /// Candidates per arm.
    pub(crate) candidates: usize,
    /// The document weight.
    pub(crate) document_weight: f64,
    /// MMR lambda.
    pub(crate) mmr_lambda: f64,
    /// The per-note cap.
    pub(crate) cap: usize,
    /// Query tokens after analysis.
    pub(crate) tokens: Vec<String>,
    /// Smallest document frequency among query tokens found in the index (0: none found).
    pub(crate) rarest: u64,
    /// Whether the identifier lookup pinned results.
    pub(crate) lookup_fired: bool,
    /// What the reranker did.
    pub rerank: RerankState,
    /// The query words no passage holds, each with the words searched in its place.
    pub(crate) stand_ins: Vec<StandIn>,
}

/// A query word no passage holds and the indexed words searched in its place (`search.typos`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StandIn {
    /// The word as analysed (folded, stemmed).
    pub(crate) word: String,
    /// The indexed words searched instead, the commonest first.
    pub(crate) searched: Vec<String>,
}

impl StandIn {
    /// The sentence a search's notices carry for it: a corrected search never passes for an
    /// exact one.
    fn notice(&self) -> String {
        let shown: Vec<String> =
            self.searched.iter().map(|w| format!("\u{201c}{w}\u{201d}")).collect();
        format!(
            "no passage has the word \u{201c}{}\u{201d}; passages with {} were searched instead",
            self.word,
            shown.join(" or ")
        )
    }
}

/// What the reranker did for one search: a closed set, so a surface can branch on it and the
/// wire names live in one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RerankState {
    /// It reordered the head of the fused list.
    Used,
    /// One is configured, and this search asked for no reranking (or is not hybrid).
    Off,
    /// None is configured.
    NotConfigured,
    /// It failed; the fused order stands. The reason is kept for `explain`.
    FellBack(String),
}

/// The wire text: `used`, `off`, `not configured`, or `fell back to fused order: <why>`.
impl std::fmt::Display for RerankState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RerankState::Used => f.write_str("used"),
            RerankState::Off => f.write_str("off"),
            RerankState::NotConfigured => f.write_str("not configured"),
            RerankState::FellBack(why) => write!(f, "fell back to fused order: {why}"),
        }
    }
}

/// The answer to a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResponse {
    /// The results, in selection order.
    pub results: Vec<Hit>,
    /// The k that was used.
    pub(crate) k: usize,
    /// What the search did.
    pub explain: Explain,
    /// Things the caller should know (an arm that was unavailable, a reranker fallback, the
    /// words searched in place of a misspelt one).
    pub notices: Vec<String>,
}

impl SearchResponse {
    /// The notices that say the search fell short of what was asked (an arm unavailable, a
    /// reranker fallback, an index still building), leaving out those that only say what it
    /// did in place of a word no passage holds.
    pub(crate) fn shortfalls(&self) -> impl Iterator<Item = &String> {
        let said: Vec<String> = self.explain.stand_ins.iter().map(StandIn::notice).collect();
        self.notices.iter().filter(move |n| !said.contains(n))
    }
}

/// Everything search needs besides the index.
pub(crate) struct Searcher<'a> {
    /// The index to search.
    pub(crate) index: &'a Index,
    /// Ranking constants.
    pub(crate) settings: &'a SearchSettings,
    /// Prepended to the query before embedding.
    pub(crate) query_prefix: &'a str,
    /// The optional reranker.
    pub(crate) reranker: Option<&'a Reranker>,
}

/// Where a search looks: the vaults' names and their positions in the index (none: every
/// vault), and the folder prefix, from the resolved scope.
struct Filter<'s> {
    vault_names: Option<&'s [String]>,
    vault_idx: Option<Vec<u32>>,
    prefix: Option<&'s str>,
    /// The client's grant: what it cannot see is no candidate.
    grant: &'s crate::vault::grant::Grant,
}

/// A chunk id with its arm's raw score (BM25 or cosine).
type Scored = (i64, f32);

/// What the dense arm found, with the query vector it searched by.
struct DenseArm {
    query: Arc<Vec<f32>>,
    found: Vec<Scored>,
}

/// What the two arms found (ids with raw scores, best first), and which of them took part.
struct Arms {
    tokens: Vec<String>,
    stand_ins: Vec<StandIn>,
    lexical: Vec<Scored>,
    dense: Vec<Scored>,
    /// The embedded query, so a fusion by score can ask the cosine of a chunk the dense arm
    /// did not list.
    query_vector: Option<Arc<Vec<f32>>>,
    use_lexical: bool,
    use_dense: bool,
}

impl Arms {
    fn lexical_ids(&self) -> Vec<i64> {
        self.lexical.iter().map(|(id, _)| *id).collect()
    }
}

/// The identifier lookup's outcome: the rarest query token's document frequency and the pins.
struct Lookup {
    rarest: u64,
    pins: Vec<i64>,
}

impl Searcher<'_> {
    /// Runs one search over a scope resolved before it got here (see [`scope`]): the query,
    /// vaults, prefix and `k` are taken as given.
    pub(crate) fn search(&self, req: &ScopedSearch) -> Result<SearchResponse> {
        let s = self.settings;
        let scope = &req.scope;
        let (query, k) = (scope.query(), scope.k());
        let filter = self.filter(req)?;
        let per_arm = req.candidates.filter(|n| *n > 0).unwrap_or(s.candidates);
        let mut notices = Vec::new();
        let arms = self.retrieve(req, &filter, per_arm, &mut notices)?;

        let weights = fusion::Weights {
            fusion: s.fusion,
            rrf_k: s.rrf_k,
            dense: if arms.use_dense { 1.0 } else { 0.0 },
            lexical: if arms.use_lexical { s.lexical_weight() } else { 0.0 },
        };
        let candidate_ids: Vec<i64> =
            arms.dense.iter().chain(&arms.lexical).map(|(id, _)| *id).collect();
        // Ranking needs each candidate's file only (from memory); the store is read for the
        // chunks a step shows or tests (the lookup's, the results).
        let files = self.index.chunk_files(&candidate_ids);
        // The arms left out the grant's folders already; this catches a path a folder term
        // cannot name (a denied note rather than a folder), still before any ranking.
        let arms = if req.grant.sees_everything() {
            arms
        } else {
            let seen =
                |(id, _): &(i64, f32)| files.get(id).is_some_and(|f| req.grant.can_read(&f.path));
            Arms {
                dense: arms.dense.into_iter().filter(seen).collect(),
                lexical: arms.lexical.into_iter().filter(seen).collect(),
                ..arms
            }
        };
        let mut candidates = {
            let dense = self.index.dense();
            let weight_of = |id: i64| {
                files
                    .get(&id)
                    .map(|f| if f.kind == FileKind::Document { s.document_weight } else { 1.0 })
            };
            let query = arms.query_vector.as_deref();
            let cosine = |id: i64| dense.score(query?, id);
            let first = fusion::fuse(&arms.dense, &arms.lexical, &weights, cosine, weight_of);
            let feedback = Feedback { passages: s.feedback_passages, weight: s.feedback_weight };
            let leaders = feedback::leaders(&first, feedback.passages);
            let moved = query.filter(|_| feedback.is_on() && arms.use_dense).and_then(|q| {
                feedback::moved_query(
                    q,
                    leaders.iter().filter_map(|id| dense.vector(*id)),
                    feedback.weight,
                )
            });
            match moved {
                Some(moved) => {
                    let cosine = |id: i64| dense.score(&moved, id);
                    let rescored = feedback::rescored(&arms.dense, cosine);
                    fusion::fuse(&rescored, &arms.lexical, &weights, cosine, weight_of)
                }
                None => first,
            }
        };

        // Chunk texts and rows are fetched only where a step needs them: the lexical candidates
        // when the lookup may fire, the reranker's head (texts), and the results; each once.
        let mut texts: HashMap<i64, String> = HashMap::new();
        let mut infos: HashMap<i64, ChunkMeta> = HashMap::new();
        let lookup = self.lookup(&arms, &mut infos, &mut texts)?;
        let rerank_state = self.rerank(req, &mut candidates, &mut texts, &mut notices)?;

        let cap = select::cap(k, s.max_per_note);
        let mut chosen = select::select(&candidates, &lookup.pins, k, cap, s.mmr_lambda(), |id| {
            files.get(&id).map(|f| note_key(&f.vault, &f.path)).unwrap_or_default()
        });
        select::follow_order(&mut chosen);
        let results = self.hits(chosen, &mut infos, &mut texts, query)?;

        Ok(SearchResponse {
            results,
            k,
            explain: Explain {
                mode: req.mode,
                fusion: s.fusion,
                rrf_k: s.rrf_k,
                lexical_weight: s.lexical_weight(),
                candidates: per_arm,
                document_weight: s.document_weight,
                mmr_lambda: s.mmr_lambda(),
                cap,
                tokens: arms.tokens,
                rarest: lookup.rarest,
                lookup_fired: !lookup.pins.is_empty(),
                rerank: rerank_state,
                stand_ins: arms.stand_ins,
            },
            notices,
        })
    }

    /// The scope in the index's terms; a prefix under which nothing is indexed is `not_found`,
    /// naming the top-level folders that are.
    fn filter<'s>(&self, req: &'s ScopedSearch) -> Result<Filter<'s>> {
        let scope = &req.scope;
        let vault_names = scope.vaults().names();
        // The index holds the configured vaults in order, so a resolved vault is always there.
        let position = |name: &String| {
            let at = self.index.vault_names().iter().position(|v| v == name);
            at.map(|i| i as u32).ok_or_else(|| {
                Error::new(
                    ErrorCode::InternalError,
                    format!("vault '{name}' is configured but not in the index"),
                )
            })
        };
        let vault_idx =
            vault_names.map(|names| names.iter().map(position).collect()).transpose()?;
        let prefix = scope.prefix();
        if let Some(p) = prefix {
            let folders = match vault_names {
                None => self.index.folders(None),
                Some(names) => names.iter().flat_map(|n| self.index.folders(Some(n))).collect(),
            };
            if !folders.iter().any(|f| f.eq_ignore_ascii_case(p)) {
                let top: Vec<&String> = folders.iter().filter(|f| !f.contains('/')).collect();
                return Err(Error::new(
                    ErrorCode::NotFound,
                    format!(
                        "nothing indexed lies under '{p}'; indexed top-level folders: {}",
                        if top.is_empty() {
                            "(none)".to_string()
                        } else {
                            top.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                        }
                    ),
                ));
            }
        }
        Ok(Filter { vault_names, vault_idx, prefix, grant: &req.grant })
    }

    /// Both arms' candidates, each already narrowed to the vault and prefix.
    fn retrieve(
        &self,
        req: &ScopedSearch,
        filter: &Filter<'_>,
        per_arm: usize,
        notices: &mut Vec<String>,
    ) -> Result<Arms> {
        let tokens = unique(tokenize::tokenize(req.scope.query()));
        let use_lexical = req.mode != Mode::Dense && !tokens.is_empty();
        let mut stand_ins = Vec::new();
        let lexical = if use_lexical {
            stand_ins = self.stand_ins(&tokens, filter.grant);
            notices.extend(stand_ins.iter().map(StandIn::notice));
            let searched: Vec<String> = stand_ins.iter().flat_map(|s| s.searched.clone()).collect();
            self.retrieve_lexical(&tokens, &searched, filter, per_arm, notices)?
        } else {
            Vec::new()
        };
        let (query_vector, dense) = if req.mode != Mode::Lexical {
            match self.retrieve_dense(req, filter, per_arm, notices)? {
                Some(arm) => (Some(arm.query), arm.found),
                None => (None, Vec::new()),
            }
        } else {
            (None, Vec::new())
        };
        let use_dense = query_vector.is_some();
        Ok(Arms { tokens, stand_ins, lexical, dense, query_vector, use_lexical, use_dense })
    }

    /// For each query word no passage holds, the indexed words that stand in for it
    /// (`LexicalIndex::near_terms`). Only the lexical arm searches them: the identifier lookup
    /// and the matched words stay the query's own.
    fn stand_ins(&self, tokens: &[String], grant: &crate::vault::grant::Grant) -> Vec<StandIn> {
        // A typo is a search box's: a few words typed fast. A question (an agent's, or a
        // person's in full) names things the vault may simply not hold, and a real word one
        // edit from another ("fund", "find") would be "corrected" into noise.
        // The lexicon is the whole index's, so a client that cannot see every folder is
        // offered none: a stand-in named in a notice could be a word only a hidden note holds.
        if !self.settings.typos || tokens.len() > TYPO_QUERY_WORDS || !grant.sees_everything() {
            return Vec::new();
        }
        let lexical = self.index.lexical();
        tokens
            .iter()
            .filter(|token| lexical.doc_freq(token) == 0)
            .map(|token| StandIn {
                word: token.clone(),
                searched: lexical.near_terms(token, STAND_INS),
            })
            .filter(|s| !s.searched.is_empty())
            .collect()
    }

    /// The lexical arm: the BM25 top candidates with their scores.
    fn retrieve_lexical(
        &self,
        tokens: &[String],
        stand_ins: &[String],
        filter: &Filter<'_>,
        per_arm: usize,
        notices: &mut Vec<String>,
    ) -> Result<Vec<Scored>> {
        let lexical_filter = lexical::Filter {
            // One vault is its own term; several are any of theirs, as every vault is.
            vault: match filter.vault_names {
                Some([one]) => Some(one.as_str()),
                _ => None,
            },
            vaults: filter.vault_names.unwrap_or(self.index.vault_names()),
            prefix: filter.prefix,
            allow: &filter.grant.allow,
            deny: &filter.grant.deny,
        };
        let boosts = lexical::Boosts { heading: self.settings.heading_weight as f32 };
        let hits = self.index.lexical().search_with(
            tokens,
            stand_ins,
            boosts,
            per_arm,
            &lexical_filter,
        )?;
        if hits.is_empty() {
            // Without this, passages found by meaning alone read as if they held the words.
            notices.push(
                "no passage contains any of the query words; the results (if any) match by \
                 meaning only. For an exact string, use vault_grep"
                    .to_string(),
            );
        }
        Ok(hits.iter().map(|h| (h.chunk_id as i64, h.score)).collect())
    }

    /// The dense arm: the query vector and the exact cosine top candidates with their scores.
    /// `None` when the query could not be embedded in a hybrid search, which then goes on
    /// lexically only and says so.
    fn retrieve_dense(
        &self,
        req: &ScopedSearch,
        filter: &Filter<'_>,
        per_arm: usize,
        notices: &mut Vec<String>,
    ) -> Result<Option<DenseArm>> {
        let text = format!("{}{}", self.query_prefix, req.scope.query());
        let embedded = match &req.query_vector {
            Some(v) => Ok(Arc::new(v.clone())),
            None => self.index.embed_query(&text),
        };
        match embedded {
            Ok(q) => {
                // The store may still hold chunks of a vault that is no longer configured
                // (the same data directory used with other `--vault`s): never results.
                let keep = |key: &crate::index::dense::RowKey| {
                    key.vault != u32::MAX
                        && filter.vault_idx.as_ref().is_none_or(|v| v.contains(&key.vault))
                        && filter.prefix.is_none_or(|p| under(&key.path, p))
                        && filter.grant.can_read(&key.path)
                };
                let found = self.index.dense().top(&q, per_arm, &keep);
                Ok(Some(DenseArm { query: q, found }))
            }
            Err(e) if req.mode == Mode::Hybrid => {
                tracing::warn!("query embedding failed, searching lexically only: {e}");
                notices.push(format!(
                    "the dense arm is unavailable ({e}); these are lexical results only"
                ));
                Ok(None)
            }
            Err(e) => Err(Error::new(
                ErrorCode::NotReady,
                format!("the embedder is unavailable: {e}; retry shortly"),
            )),
        }
    }

    /// The identifier lookup: when the rarest query token is rare enough, the lexical
    /// candidates that hold every query token are pinned first (one per note).
    fn lookup(
        &self,
        arms: &Arms,
        infos: &mut HashMap<i64, ChunkMeta>,
        texts: &mut HashMap<i64, String>,
    ) -> Result<Lookup> {
        let mut out = Lookup { rarest: 0, pins: Vec::new() };
        if !arms.use_lexical || arms.lexical.is_empty() {
            return Ok(out);
        }
        let tokens = &arms.tokens;
        out.rarest = tokens
            .iter()
            .map(|t| self.index.lexical().doc_freq(t))
            .filter(|n| *n > 0)
            .min()
            .unwrap_or(0);
        if self.settings.lookup && (1..=select::LOOKUP_MAX_MATCHES).contains(&out.rarest) {
            let lexical_ids = arms.lexical_ids();
            infos.extend(self.index.chunks(&lexical_ids)?);
            texts.extend(self.index.store().chunk_texts(&lexical_ids)?);
            let wanted: HashSet<&str> = tokens.iter().map(String::as_str).collect();
            out.pins = select::lookup_pins(&lexical_ids, |id| {
                let meta = infos.get(&id)?;
                let text = texts.get(&id)?;
                let have: HashSet<String> = tokenize::tokenize(&chunker::lexical_text(
                    &meta.title,
                    &meta.aliases,
                    &meta.breadcrumb,
                    text,
                ))
                .into_iter()
                .collect();
                let holds_all = wanted.iter().all(|t| have.contains(*t));
                Some((note_key(&meta.vault, &meta.path), holds_all))
            });
        }
        Ok(out)
    }

    /// The optional reranker over the head of the fused list; a failure keeps the fused order
    /// and says so.
    fn rerank(
        &self,
        req: &ScopedSearch,
        candidates: &mut [Candidate],
        texts: &mut HashMap<i64, String>,
        notices: &mut Vec<String>,
    ) -> Result<RerankState> {
        let r = match (self.reranker, req.rerank && req.mode == Mode::Hybrid) {
            (None, _) => return Ok(RerankState::NotConfigured),
            (Some(_), false) => return Ok(RerankState::Off),
            (Some(r), true) => r,
        };
        let n = if req.thorough { r.thorough_candidates() } else { r.candidates() };
        let head: Vec<i64> = candidates.iter().take(n).map(|c| c.id).collect();
        let missing: Vec<i64> = head.iter().filter(|id| !texts.contains_key(id)).copied().collect();
        texts.extend(self.index.store().chunk_texts(&missing)?);
        let docs: Vec<&str> =
            head.iter().map(|id| texts.get(id).map_or("", String::as_str)).collect();
        Ok(match r.rerank(req.scope.query(), &docs) {
            Ok(scores) => {
                fusion::apply_rerank(
                    candidates,
                    &scores,
                    if req.thorough { 0.0 } else { r.fusion_k() },
                );
                RerankState::Used
            }
            Err(e) => {
                tracing::warn!("reranker failed, keeping fused order: {e}");
                notices
                    .push(format!("the reranker is unavailable ({e}); results are in fused order"));
                RerankState::FellBack(e.to_string())
            }
        })
    }

    /// The chosen candidates as results, with their texts and excerpts.
    fn hits(
        &self,
        chosen: Vec<(Candidate, bool)>,
        infos: &mut HashMap<i64, ChunkMeta>,
        texts: &mut HashMap<i64, String>,
        query: &str,
    ) -> Result<Vec<Hit>> {
        let ids: Vec<i64> = chosen.iter().map(|(c, _)| c.id).collect();
        let unread: Vec<i64> = ids.iter().filter(|id| !infos.contains_key(id)).copied().collect();
        infos.extend(self.index.chunks(&unread)?);
        let missing: Vec<i64> = ids.into_iter().filter(|id| !texts.contains_key(id)).collect();
        texts.extend(self.index.store().chunk_texts(&missing)?);
        let mut results = Vec::with_capacity(chosen.len());
        for (cand, pinned) in chosen {
            let Some(meta) = infos.get(&cand.id) else { continue };
            let text = texts.get(&cand.id).cloned().unwrap_or_default();
            results.push(Hit {
                chunk_id: cand.id,
                vault: meta.vault.clone(),
                path: meta.path.clone(),
                title: meta.title.clone(),
                // The index stores the breadcrumb joined by ` > ` (it is embedded that way);
                // callers get the `::` form every heading target takes.
                heading: meta.breadcrumb.replace(" > ", "::"),
                line: meta.line,
                excerpt: excerpt(&text, query),
                text,
                matched: cand.matched(),
                pinned,
                document: meta.kind == FileKind::Document,
                explain: cand,
            });
        }
        Ok(results)
    }
}

/// The key diversity and the lookup count notes by: the vault and the path.
fn note_key(vault: &str, path: &str) -> String {
    format!("{vault}\u{0}{path}")
}

fn unique(tokens: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    tokens.into_iter().filter(|t| seen.insert(t.clone())).collect()
}

/// About 300 characters of `text`, around the first place a query word appears.
pub(crate) fn excerpt(text: &str, query: &str) -> String {
    const WIDTH: usize = 300;
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = flat.chars().collect();
    if chars.len() <= WIDTH {
        return flat;
    }
    let lower = flat.to_lowercase();
    let mut start_byte = None;
    for word in query.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 3) {
        if let Some(pos) = lower.find(&word.to_lowercase()) {
            start_byte = Some(start_byte.map_or(pos, |s: usize| s.min(pos)));
        }
    }
    // Lowercasing can change byte lengths; map back through the character index.
    let hit_char =
        start_byte.map_or(0, |b| lower[..b.min(lower.len())].chars().count()).min(chars.len());
    let mut start = hit_char.saturating_sub(60);
    if start + WIDTH > chars.len() {
        start = chars.len() - WIDTH;
    }
    while start > 0 && chars[start - 1] != ' ' {
        start -= 1;
    }
    let mut end = (start + WIDTH).min(chars.len());
    while end < chars.len() && end > start && chars[end] != ' ' {
        end -= 1;
    }
    if end <= start {
        end = (start + WIDTH).min(chars.len());
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_centre_on_the_query_and_mark_cuts() {
        let text = format!(
            "{} The boiler pressure should read 1.3 bar when cold. {}",
            "filler ".repeat(80),
            "tail ".repeat(80)
        );
        let e = excerpt(&text, "boiler pressure");
        assert!(e.starts_with('…') && e.ends_with('…'), "{e}");
        assert!(e.contains("The boiler pressure should read 1.3 bar"));
        assert!(e.chars().count() <= 302);
        assert_eq!(excerpt("short  text\n\nhere", "x"), "short text here");
    }
}
