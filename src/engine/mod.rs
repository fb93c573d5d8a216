//! The engine façade: the configured vaults, their index and the search settings in one value.
//!
//! Surfaces (the CLI, REST and MCP) build one [`Engine`] from a [`Config`] and call it;
//! nothing below this knows which surface asked. Opening it loads the embedder (a local model
//! folder or an HTTP endpoint) and the index store; it never downloads anything.
//!
//! An engine is either the **owner** of its data directory's index, with the one
//! [`indexer`] thread that writes it and a socket that other processes reach it on
//! ([`owner`]), or a **reader** beside another process that owns it: it searches the index
//! read-only, following the owner's commits, and sends its index work to the owner. Which one
//! is decided when it opens; a reader that serves (`start_background`) takes over when the
//! owner ends.

pub mod indexer;
pub mod light;
pub mod owner;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::config::{Config, EmbeddingBackend};
use crate::embed::hashing::HashingEmbedder;
use crate::embed::{Embedder, http::HttpConfig, http::HttpEmbedder, local::LocalEmbedder};
use crate::error::{Error, ErrorCode, Result};
use crate::index::coverage::{self, Coverage};
use crate::index::watch::{self, Watcher};
use crate::index::{Index, IndexSettings, Pass, Progress, SyncReport};
use crate::search::rerank::Reranker;
use crate::search::{SearchRequest, SearchResponse, Searcher};
use crate::upkeep::{self, indexmd};
use crate::vault::{Indexed, VaultScope, Vaults};
use indexer::{Indexer, IndexerThread};
use owner::{Endpoint, OwnerClient, OwnerInfo, Ownership, VaultRoot};

pub use light::LightEngine;

/// The index.md generator of each vault, by name (empty when `index.index_md` is off).
type IndexMds = Arc<std::collections::HashMap<String, Arc<indexmd::IndexMd>>>;

/// How long a write's re-index may hold its reply, after the bytes are safely on disk. An
/// ordinary note (a few chunks) is chunked, committed and embedded in well under a second on
/// the 2-core reference machine even with searches running, so within this bound a search
/// right after the reply finds it by words and meaning. A large note (a 256 KiB note is ~200
/// chunks, seconds of embedding) or a write queued behind a pass answers at the bound instead
/// of holding the client (and, through it, a connection) for as long as the embedding takes;
/// its re-index goes on in the background and says how far it got in the reply. Shorter
/// would make ordinary writes under load answer before their vectors; longer only delays
/// clients without making anything more searchable.
pub(crate) const WRITE_INDEX_WAIT: Duration = Duration::from_millis(1500);
/// How long a reader keeps trying to open an index that its owner is still creating.
const READER_OPEN_PATIENCE: Duration = Duration::from_secs(10);

/// Vaults, index and settings, ready to serve.
pub struct Engine {
    config: Config,
    vaults: Vaults,
    embedder: Arc<crate::embed::Embedder>,
    /// Replaced once, when a reader takes over as owner and reopens the index for writing.
    index: RwLock<Arc<Index>>,
    role: Mutex<Role>,
    reranker: Option<Reranker>,
    readiness: Arc<Readiness>,
    index_md: IndexMds,
    /// One maintenance run at a time: each runs every script of the vault, and a burst of
    /// requests must not start a burst of interpreters.
    maintenance_runs: std::sync::Mutex<()>,
    /// The store held a finished build of every vault, with every chunk's vector, when this
    /// engine became the owner: its first pass is catching up, and search serves meanwhile.
    warm: AtomicBool,
    /// The first build has committed every vault's words (its `Pass::Words` ended): from then
    /// on a search during the build misses no note's words.
    words_done: AtomicBool,
}

/// Whether this engine writes its data directory's index, or reads beside the process that does.
enum Role {
    /// This engine owns the index. Field order is drop order: stop taking requests from other
    /// processes, then stop the indexer.
    Owner { _endpoint: Option<Endpoint>, indexer: Indexer, _thread: IndexerThread },
    /// Another process owns it.
    Reader { client: OwnerClient },
}

/// Where the background build stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No background build was started (the CLI syncs in the foreground instead).
    Idle,
    /// The first build is running; search answers from what is indexed so far, and says so.
    Building,
    /// The index has been built at least once.
    Ready,
    /// Every build attempt failed.
    Failed,
}

impl Phase {
    /// `idle`, `building`, `ready` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Building => "building",
            Phase::Ready => "ready",
            Phase::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone)]
struct ReadyState {
    phase: Phase,
    since: std::time::Instant,
    attempts: u32,
    built_at: Option<String>,
    build_seconds: Option<f64>,
    error: Option<String>,
    watching: bool,
}

/// The background build's progress, shared by the build thread and whoever reports health.
#[derive(Debug)]
pub struct Readiness {
    state: std::sync::Mutex<ReadyState>,
}

/// A snapshot of [`Readiness`], with the index's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The build phase.
    pub phase: Phase,
    /// Seconds since the phase began.
    pub phase_seconds: f64,
    /// Build attempts made so far.
    pub attempts: u32,
    /// When the last successful build finished (UTC, ISO seconds with `Z`).
    pub built_at: Option<String>,
    /// How long the last successful build took.
    pub build_seconds: Option<f64>,
    /// Why the last attempt failed.
    pub error: Option<String>,
    /// Whether file watching is running.
    pub watching: bool,
    /// Files in the store.
    pub files: u64,
    /// Chunks in the store.
    pub chunks: u64,
    /// Distinct vectors in the store.
    pub vectors: u64,
    /// Whether the store answered.
    pub store_ok: bool,
    /// Whether this process owns (writes) the index; a reader follows another process's.
    pub owner: bool,
    /// How far the pass this process's indexer runs now is (the first build's, say).
    pub progress: Option<crate::index::PassProgress>,
    /// Why the index is behind the vault: the last index job's failure (a full or read-only
    /// data directory, say), until one succeeds.
    pub behind: Option<String>,
}

impl Readiness {
    fn new() -> Readiness {
        Readiness {
            state: std::sync::Mutex::new(ReadyState {
                phase: Phase::Idle,
                since: std::time::Instant::now(),
                attempts: 0,
                built_at: None,
                build_seconds: None,
                error: None,
                watching: false,
            }),
        }
    }

    fn update(&self, f: impl FnOnce(&mut ReadyState)) {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
    }

    fn set_phase(&self, phase: Phase) {
        self.update(|s| {
            s.phase = phase;
            s.since = std::time::Instant::now();
        });
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("vaults", &self.vaults.names()).finish()
    }
}

fn coverage_of(
    config: &Config,
    vaults: &Vaults,
    store: &crate::index::store::Store,
    vault: Option<&str>,
    configured_model: std::result::Result<String, String>,
) -> Result<coverage::Report> {
    if let Some(name) = vault {
        vaults.get(Some(name))?;
    }
    let settings = IndexSettings::from_config(config);
    let vaults = vaults
        .iter()
        .filter(|v| vault.is_none_or(|n| n == v.name()))
        .map(|v| coverage::coverage(store, &settings, v))
        .collect::<Result<Vec<Coverage>>>()?;
    let stored = store.meta("model")?;
    Ok(coverage::Report {
        model: coverage::ModelState::new(stored.as_deref(), configured_model),
        vaults,
        pass: None,
    })
}

/// The id the configured embedding model would have, without loading it (a local model's
/// weights are hashed, nothing more; an endpoint is not contacted).
pub fn configured_model_id(config: &Config) -> std::result::Result<String, String> {
    match &config.embedding.backend {
        EmbeddingBackend::Local { model_dir } => {
            LocalEmbedder::identify(model_dir).map_err(|e| e.to_string())
        }
        _ => load_embedder(config).map(|e| e.model_id().to_string()).map_err(|e| e.to_string()),
    }
}

/// Loads the configured embedder.
pub fn load_embedder(config: &Config) -> Result<Embedder> {
    let e = &config.embedding;
    match &e.backend {
        EmbeddingBackend::Local { model_dir } => LocalEmbedder::load(model_dir)
            .map(Embedder::Local)
            .map_err(|err| Error::new(ErrorCode::NotReady, err.to_string())),
        EmbeddingBackend::Http { url, model, dims } => {
            Ok(Embedder::Http(HttpEmbedder::new(HttpConfig {
                url: url.clone(),
                model: model.clone(),
                dims: *dims,
                batch_size: e.batch_size,
                max_attempts: e.max_attempts,
                backoff_seconds: e.backoff_seconds,
                backoff_max_seconds: e.backoff_max_seconds,
                timeout_seconds: 120.0,
                api_key: std::env::var("MDVAULT_EMBEDDING_API_KEY").ok().filter(|k| !k.is_empty()),
            })))
        }
        EmbeddingBackend::Hashing { dims } => Ok(Embedder::Hashing(HashingEmbedder::new(*dims))),
    }
}

impl Engine {
    /// Opens the vaults, the embedder and the index store.
    pub fn open(config: Config) -> Result<Engine> {
        let embedder = load_embedder(&config)?;
        Engine::with_embedder(config, embedder)
    }

    /// Opens the engine with an embedder chosen by the caller (tests, benchmarks).
    pub fn with_embedder(config: Config, embedder: Embedder) -> Result<Engine> {
        let vaults = Vaults::open(&config)?;
        let embedder = Arc::new(embedder);
        let names: Vec<String> = vaults.names().iter().map(|s| s.to_string()).collect();
        let settings = IndexSettings::from_config(&config);
        let (index, role) = match owner::try_own(&config.data_dir)? {
            Some(ownership) => {
                let index =
                    Arc::new(Index::open(&config.data_dir, names, settings, embedder.clone())?);
                let role = Engine::owner_role(&config, &vaults, &index, ownership)?;
                (index, role)
            }
            None => {
                let index = Arc::new(open_reader(&config, names, settings, &embedder)?);
                (index, Role::Reader { client: OwnerClient::new(&config.data_dir) })
            }
        };
        let warm = is_warm(&vaults, &index);
        let reranker = Reranker::new(&config.rerank);
        let index_md = if config.index.index_md {
            vaults
                .iter()
                .map(|v| {
                    (
                        v.name().to_string(),
                        Arc::new(indexmd::IndexMd::new(&config.index.exclude_dirs)),
                    )
                })
                .collect()
        } else {
            Default::default()
        };
        Ok(Engine {
            config,
            vaults,
            embedder,
            index: RwLock::new(index),
            role: Mutex::new(role),
            reranker,
            readiness: Arc::new(Readiness::new()),
            index_md: Arc::new(index_md),
            maintenance_runs: std::sync::Mutex::new(()),
            warm: AtomicBool::new(warm),
            words_done: AtomicBool::new(false),
        })
    }

    /// Starts the indexer (which holds `ownership` from now on) and the socket that other
    /// processes reach it on.
    fn owner_role(
        config: &Config,
        vaults: &Vaults,
        index: &Arc<Index>,
        ownership: Ownership,
    ) -> Result<Role> {
        let (indexer, thread) = indexer::start(index.clone(), vaults.clone(), ownership)?;
        let info = OwnerInfo {
            pid: std::process::id(),
            command: std::env::args().nth(1).unwrap_or_else(|| "mdvault".into()),
            vaults: vaults
                .iter()
                .map(|v| VaultRoot { name: v.name().to_string(), root: v.root().to_path_buf() })
                .collect(),
            progress: None,
        };
        // Without the socket this process still indexes its own vaults; only other processes
        // lose their way to it (they say so when they try).
        let endpoint = match Endpoint::bind(&config.data_dir, info, indexer.clone()) {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::warn!("other mdvault processes cannot reach this one's indexer: {e}");
                None
            }
        };
        Ok(Role::Owner { _endpoint: endpoint, indexer, _thread: thread })
    }

    /// Whether this engine owns (writes) its data directory's index.
    pub fn is_owner(&self) -> bool {
        matches!(*self.role.lock().unwrap_or_else(|p| p.into_inner()), Role::Owner { .. })
    }

    /// The owner's indexer, when this engine is the owner.
    fn indexer(&self) -> Option<Indexer> {
        match &*self.role.lock().unwrap_or_else(|p| p.into_inner()) {
            Role::Owner { indexer, .. } => Some(indexer.clone()),
            Role::Reader { .. } => None,
        }
    }

    /// Becomes the owner after the previous one ended: reopens the index for writing (which
    /// reconciles it with this process's model and settings) and starts the indexer.
    fn take_over(&self, ownership: Ownership) -> Result<()> {
        let names: Vec<String> = self.vaults.names().iter().map(|s| s.to_string()).collect();
        let index = Arc::new(Index::open(
            &self.config.data_dir,
            names,
            IndexSettings::from_config(&self.config),
            self.embedder.clone(),
        )?);
        let role = Engine::owner_role(&self.config, &self.vaults, &index, ownership)?;
        self.warm.store(is_warm(&self.vaults, &index), Ordering::SeqCst);
        *self.index.write().unwrap_or_else(|p| p.into_inner()) = index;
        *self.role.lock().unwrap_or_else(|p| p.into_inner()) = role;
        tracing::info!("this process now owns the index in {}", self.config.data_dir.display());
        Ok(())
    }

    /// Asks the owning process who it is, and its name for the root of our vault `v` (`None`
    /// when it does not index that root: names may differ between processes, roots do not).
    fn owner_name(
        &self,
        client: &OwnerClient,
        v: &crate::vault::Vault,
    ) -> Result<(OwnerInfo, Option<String>)> {
        client.name_for(v.root())
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The vaults.
    pub fn vaults(&self) -> &Vaults {
        &self.vaults
    }

    /// The index (the owner's, or this reader's read-only view of it).
    pub fn index(&self) -> Arc<Index> {
        self.index.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Brings one vault (or, with `None`, every vault) up to date: `full` re-reads and
    /// re-chunks every file of those vaults and of no other, reusing the vectors of unchanged
    /// texts. An owner runs the passes on its indexer; a reader asks the owning process to
    /// run them, and refuses for a vault the owner does not index.
    pub fn sync(
        &self,
        vault: Option<&str>,
        full: bool,
        progress: &dyn Progress,
    ) -> Result<Vec<(String, SyncReport)>> {
        self.pass(vault, Pass::from_full(full), progress)
    }

    /// [`Engine::sync`] with the depth spelled out: [`Pass::ReEmbed`] also replaces every
    /// stored vector of those vaults.
    pub fn pass(
        &self,
        vault: Option<&str>,
        pass: Pass,
        progress: &dyn Progress,
    ) -> Result<Vec<(String, SyncReport)>> {
        if let Some(name) = vault {
            self.vaults.get(Some(name))?;
        }
        let wanted: Vec<&Arc<crate::vault::Vault>> =
            self.vaults.iter().filter(|v| vault.is_none_or(|n| n == v.name())).collect();
        let mut out = Vec::new();
        if let Some(indexer) = self.indexer() {
            for v in wanted {
                out.push((v.name().to_string(), indexer.sync(v.name(), pass, progress)?));
            }
            return Ok(out);
        }
        let client = OwnerClient::new(&self.config.data_dir);
        for v in wanted {
            let (info, theirs) = self.owner_name(&client, v)?;
            let Some(name) = theirs else {
                return Err(Error::new(
                    ErrorCode::NotReady,
                    format!(
                        "mdvault `{}` (pid {}) owns the index in {} and does not index {} ({}); \
                         stop it, add this vault to its configuration, or use another --data-dir",
                        info.command,
                        info.pid,
                        self.config.data_dir.display(),
                        v.name(),
                        v.root().display()
                    ),
                ));
            };
            out.push((v.name().to_string(), client.sync(&name, pass)?));
        }
        Ok(out)
    }

    /// Re-indexes `paths` of `vault` now and waits for the report, however long a pass queued
    /// before it takes (the benchmark's edit-to-searchable; surfaces use [`Engine::refresh`]).
    pub fn update(&self, vault: &str, paths: &[String]) -> Result<SyncReport> {
        let v = self.vaults.get(Some(vault))?;
        if let Some(indexer) = self.indexer() {
            return indexer.update(v.name(), paths.to_vec()).unwrap_or_else(|| {
                Err(Error::new(ErrorCode::NotReady, "the index queue is full"))
            });
        }
        let client = OwnerClient::new(&self.config.data_dir);
        match self.owner_name(&client, v)?.1 {
            Some(name) => client.update(&name, paths, Duration::from_secs(3600)),
            None => Err(Error::new(
                ErrorCode::NotReady,
                format!("the process that owns the index does not index {vault}"),
            )),
        }
    }

    /// Who owns the index when this engine is a reader (`None` for the owner itself).
    pub fn owner_info(&self) -> Option<OwnerInfo> {
        if self.is_owner() {
            return None;
        }
        OwnerClient::new(&self.config.data_dir).hello().ok()
    }

    /// Runs a search. While the first background build runs, search answers from what is in
    /// the index so far (the build commits every vault's words before it embeds anything, so
    /// the lexical arm is complete within seconds and the dense arm grows as texts are
    /// embedded) and says how far the build is; only before the first words are committed is
    /// it `not_ready`, since an empty answer then would read as "nothing matches". A restart
    /// over a finished index says it is catching up instead. A build attempt that failed (the
    /// embedder down, say) is named in the notice while the build retries; once every attempt
    /// has failed search still answers from the committed words, saying why the meaning is
    /// missing, and is `not_ready` only when not even the words were committed. A vault that
    /// has never been indexed is `not_ready` too when it is all that was asked for, and a
    /// notice when it is one of several.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        let index = self.index();
        // A reader first catches up with what the owner has committed.
        index.follow_owner()?;
        let mut catching_up = None;
        let mut building = None;
        // One look at the state: `status()` would also query a store the pass is writing.
        let (phase, since, last_error) = {
            let s = self.readiness.state.lock().unwrap_or_else(|p| p.into_inner());
            (s.phase, s.since, s.error.clone())
        };
        let words_done = self.words_done.load(Ordering::SeqCst);
        let mut failed = None;
        match phase {
            Phase::Building if self.warm.load(Ordering::SeqCst) => {
                catching_up = Some(since.elapsed().as_secs_f64());
            }
            Phase::Building => building = Some(since.elapsed().as_secs_f64()),
            // The words are in, so an answer by words is honest; the notice says what is not.
            Phase::Failed if words_done => {
                failed = Some(last_error.clone().unwrap_or_else(|| "unknown error".into()));
            }
            Phase::Failed => {
                return Err(Error::new(
                    ErrorCode::NotReady,
                    format!(
                        "the search index failed to build: {}; fix the cause and restart, \
                         or use list and read meanwhile",
                        last_error.as_deref().unwrap_or("unknown error")
                    ),
                ));
            }
            Phase::Idle | Phase::Ready => {}
        }
        let scope: Vec<&str> = match &req.scope {
            VaultScope::One(name) => vec![self.vaults.get(Some(name))?.name()],
            VaultScope::Every => self.vaults.names(),
        };
        let unbuilt: Vec<&str> =
            scope.iter().copied().filter(|v| !ever_indexed(index.store(), v)).collect();
        // Until every vault's words are committed an answer could silently miss notes.
        let all_unbuilt = !unbuilt.is_empty() && unbuilt.len() == scope.len();
        if let Some(seconds) = building
            && (all_unbuilt || !words_done)
        {
            return Err(Error::new(
                ErrorCode::NotReady,
                format!(
                    "the search index is still being built ({seconds:.0} s so far{}) and \
                     has not taken in every note's words yet; retry in a few seconds, or use \
                     list and read meanwhile",
                    self.progress_note()
                ),
            ));
        }
        if all_unbuilt {
            let list = unbuilt.join(", ");
            return Err(Error::new(
                ErrorCode::NotReady,
                format!(
                    "vault {list} has not been indexed yet, so there is nothing to search; run \
                     `mdvault index --vault {}` (a running server indexes it by itself: retry \
                     in a little while)",
                    unbuilt[0]
                ),
            ));
        }
        let mut resp = Searcher {
            index: &index,
            settings: &self.config.search,
            query_prefix: &self.config.embedding.query_prefix,
            reranker: self.reranker.as_ref(),
        }
        .search(req)?;
        if !unbuilt.is_empty() {
            resp.notices.push(format!(
                "vault {} has not been indexed yet, so its notes are missing from these results",
                unbuilt.join(", ")
            ));
        }
        if let Some(seconds) = catching_up {
            resp.notices.push(format!(
                "the index is catching up with changes made while the server was stopped \
                 ({seconds:.0} s so far); a note edited in that time may be missing or stale \
                 for a moment"
            ));
        }
        if let Some(seconds) = building {
            let (chunks, vectors) = index.counts();
            // A retrying build says what went wrong, so "still being built" is not read as
            // "wait" when the cause (the embedder down) needs a person.
            let retrying = last_error
                .map(|e| format!("; the last attempt failed ({e}) and the build is retrying"))
                .unwrap_or_default();
            resp.notices.push(format!(
                "the search index is still being built ({seconds:.0} s so far{}{retrying}): \
                 these results match the words of every note indexed so far, but the meaning \
                 of only {vectors} of {chunks} passages; search again when the build ends for \
                 the full answer",
                self.progress_note()
            ));
        }
        if let Some(error) = failed {
            let (chunks, vectors) = index.counts();
            resp.notices.push(format!(
                "the search index failed to build its vectors ({error}): these results match \
                 the words of every note, but the meaning of only {vectors} of {chunks} \
                 passages; fix the cause and restart for the full answer"
            ));
        }
        Ok(resp)
    }

    /// `; <vault>: 1200/19500 texts embedded, about 6 min left`, or nothing between passes.
    fn progress_note(&self) -> String {
        self.indexer()
            .and_then(|i| i.progress())
            .map(|p| format!("; {}", p.describe()))
            .unwrap_or_default()
    }

    /// The build phase alone (cheap: no store query).
    pub fn phase(&self) -> Phase {
        self.readiness.state.lock().unwrap_or_else(|p| p.into_inner()).phase
    }

    /// What of each vault (or of one) is searchable, what is not and why: see
    /// [`crate::index::coverage`].
    pub fn coverage(&self, vault: Option<&str>) -> Result<coverage::Report> {
        // The model in use is the one loaded at start; a config edited since (`mdvault model
        // use`) takes effect at the next start, and `mdvault status` reports it as pending.
        let index = self.index();
        let loaded = Ok(index.embedder().model_id().to_string());
        let mut report = coverage_of(&self.config, &self.vaults, index.store(), vault, loaded)?;
        report.pass = match self.indexer() {
            Some(indexer) => indexer.progress(),
            None => OwnerClient::new(&self.config.data_dir).hello().ok().and_then(|o| o.progress),
        };
        Ok(report)
    }

    /// [`Engine::coverage`] without opening the engine (no model, no lexical index): for
    /// `mdvault status`, which must work while a server holds the index or the model is
    /// missing. Refuses when there is no index in the data directory yet.
    pub fn coverage_offline(
        config: &Config,
        vaults: &Vaults,
        vault: Option<&str>,
    ) -> Result<coverage::Report> {
        if !crate::config::DataDir::new(&config.data_dir).store().is_file() {
            return Err(Error::new(
                ErrorCode::NotReady,
                format!(
                    "there is no index in {} yet; run `mdvault index` (or start the server) to build one",
                    config.data_dir.display()
                ),
            ));
        }
        let store = crate::index::store::Store::open(&config.data_dir)?;
        let mut report = coverage_of(config, vaults, &store, vault, configured_model_id(config))?;
        // A running owner says how far its pass is (nothing when none runs).
        report.pass = OwnerClient::new(&config.data_dir).hello().ok().and_then(|o| o.progress);
        Ok(report)
    }

    /// The build phase, the index's counts and whether watching runs.
    pub fn status(&self) -> Status {
        // Copy the state out first: the store query may wait on a sync's transaction.
        let s = { self.readiness.state.lock().unwrap_or_else(|p| p.into_inner()).clone() };
        let counts = self.index().store().counts();
        let (files, chunks, vectors) = counts.as_ref().copied().unwrap_or((0, 0, 0));
        Status {
            phase: s.phase,
            phase_seconds: s.since.elapsed().as_secs_f64(),
            attempts: s.attempts,
            built_at: s.built_at,
            build_seconds: s.build_seconds,
            error: s.error,
            watching: s.watching,
            files,
            chunks,
            vectors,
            store_ok: counts.is_ok(),
            owner: self.is_owner(),
            progress: self.indexer().and_then(|i| i.progress()),
            behind: self.indexer().and_then(|i| i.failing()),
        }
    }

    /// Starts serving in the background. An owner starts at once: watching every vault (so
    /// nothing changed during the build is missed), the first build with retries, then the
    /// periodic reconcile pass and the index.md passes. A reader searches what the owner keeps
    /// and waits on a thread of its own to take over when the owner ends, then starts the same.
    /// Search answers from the first build's words (and the vectors made so far) while it
    /// runs, with a notice. Dropping the handle stops the watcher and
    /// the passes; the build thread finishes its current attempt.
    pub fn start_background(self: &Arc<Self>) -> Background {
        let work = Arc::new(Mutex::new(None));
        let cancelled = Arc::new(AtomicBool::new(false));
        if self.is_owner() {
            *work.lock().unwrap_or_else(|p| p.into_inner()) = Some(self.owner_work());
            return Background { work, cancelled, _successor: None };
        }
        self.readiness.set_phase(Phase::Ready);
        let (engine, slot, stop) = (self.clone(), work.clone(), cancelled.clone());
        let data_dir = self.config.data_dir.clone();
        match OwnerClient::new(&data_dir).hello() {
            Ok(o) => tracing::info!(
                "mdvault `{}` (pid {}) owns the index in {}; searching beside it, and taking \
                 over when it ends",
                o.command,
                o.pid,
                data_dir.display()
            ),
            Err(e) => tracing::warn!("{e}"),
        }
        let successor = std::thread::Builder::new()
            .name("mdvault-successor".into())
            .spawn(move || {
                let ownership = match owner::own_when_free(&data_dir) {
                    Ok(o) => o,
                    Err(e) => return tracing::warn!("cannot wait to own the index: {e}"),
                };
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Err(e) = engine.take_over(ownership) {
                    engine.readiness.update(|s| s.error = Some(e.to_string()));
                    engine.readiness.set_phase(Phase::Failed);
                    return tracing::error!("taking over the index failed: {e}");
                }
                let started = engine.owner_work();
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(started);
            })
            .map_err(|e| tracing::error!("cannot start the successor thread: {e}"))
            .ok();
        Background { work, cancelled, _successor: successor }
    }

    /// An owner's background work: watcher, first build, reconcile, index.md passes.
    fn owner_work(self: &Arc<Self>) -> OwnerWork {
        let watcher = match self.watch() {
            Ok(w) => {
                self.readiness.update(|s| s.watching = true);
                Some(w)
            }
            Err(e) => {
                tracing::warn!("file watching is off: {e}");
                None
            }
        };
        self.readiness.set_phase(Phase::Building);
        let engine = self.clone();
        let (tx, rx) = std::sync::mpsc::channel::<Reconciler>();
        let builder = std::thread::Builder::new()
            .name("mdvault-build".into())
            .spawn(move || {
                if engine.build_with_retries()
                    && let Some(r) = engine.reconcile()
                {
                    let _ = tx.send(r);
                }
            })
            .map_err(|e| tracing::error!("cannot start the index build: {e}"))
            .ok();
        let index_md = self.index_md_passes();
        OwnerWork { _watcher: watcher, _reconciler: rx, _builder: builder, _index_md: index_md }
    }

    /// Starts the index.md passes on a thread of their own, apart from the index build (so
    /// the page is kept while the embedder is down): a full scan now, then one every
    /// `index.reconcile_seconds` to catch what the watcher missed. `None` when generation is
    /// off.
    fn index_md_passes(&self) -> Option<Reconciler> {
        if self.index_md.is_empty() {
            return None;
        }
        let seconds = self.config.index.reconcile_seconds;
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let (vaults, generators) = (self.vaults.clone(), self.index_md.clone());
        let thread = std::thread::Builder::new()
            .name("mdvault-index-md".into())
            .spawn(move || {
                loop {
                    for vault in vaults.iter() {
                        if let Some(g) = generators.get(vault.name())
                            && let Err(e) = g.rebuild(vault)
                        {
                            tracing::warn!("index.md of {}: {e}", vault.name());
                        }
                    }
                    let pause = if seconds > 0.0 {
                        Duration::from_secs_f64(seconds)
                    } else {
                        Duration::MAX
                    };
                    match wait.recv_timeout(pause) {
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                        _ => break,
                    }
                }
            })
            .map_err(|e| tracing::error!("cannot start the index.md passes: {e}"))
            .ok()?;
        Some(Reconciler { stop: Some(stop), thread: Some(thread) })
    }

    /// The first build: every vault synced, retried with doubling waits.
    fn build_with_retries(&self) -> bool {
        let attempts = self.config.index.build_max_attempts.max(1);
        let mut wait = self.config.index.build_retry_seconds.max(0.0);
        for attempt in 1..=attempts {
            self.readiness.update(|s| s.attempts = attempt);
            let started = std::time::Instant::now();
            // Every vault's words first (seconds), then the vectors (minutes): search answers
            // by words for every vault while the embedding runs. A warm restart skips it, as
            // its pass only catches up with a few changed files.
            let words = if self.warm.load(Ordering::SeqCst) {
                Ok(Vec::new())
            } else {
                self.pass(None, Pass::Words, &crate::index::Silent)
            };
            if words.is_ok() {
                self.words_done.store(true, Ordering::SeqCst);
            }
            match words.and_then(|_| self.sync(None, false, &crate::index::Silent)) {
                Ok(reports) => {
                    let seconds = started.elapsed().as_secs_f64();
                    for (name, r) in &reports {
                        tracing::info!(
                            "indexed {name}: {} files seen, {} chunked, {} embedded in {:.1} s",
                            r.files_seen,
                            r.files_chunked,
                            r.texts_embedded,
                            r.seconds
                        );
                    }
                    self.readiness.update(|s| {
                        s.phase = Phase::Ready;
                        s.since = std::time::Instant::now();
                        s.built_at = Some(crate::vault::now_timestamp());
                        s.build_seconds = Some(seconds);
                        s.error = None;
                    });
                    return true;
                }
                Err(e) => {
                    tracing::warn!("index build attempt {attempt} of {attempts} failed: {e}");
                    self.readiness.update(|s| s.error = Some(e.to_string()));
                    if attempt < attempts {
                        std::thread::sleep(Duration::from_secs_f64(wait));
                        wait = (wait * 2.0).min(300.0);
                    }
                }
            }
        }
        self.readiness.set_phase(Phase::Failed);
        false
    }

    /// Re-indexes paths a surface just wrote, so a search right after the write sees it (the
    /// watcher would, but only after its debounce). Failures are logged, never returned: the
    /// write itself succeeded, and the watcher and reconcile pass will try again. The job is
    /// queued behind any pass already running; the write waits for it at most
    /// [`WRITE_INDEX_WAIT`] and the answer says how far it got. A reader asks the owning
    /// process to do it, which can only say `Full` (confirmed in time) or `Queued`.
    pub fn refresh(&self, vault: &str, paths: &[String]) -> Option<Indexed> {
        let v = self.vaults.get(Some(vault)).ok()?;
        let role = {
            let role = self.role.lock().unwrap_or_else(|p| p.into_inner());
            match &*role {
                Role::Owner { indexer, .. } => Ok(indexer.clone()),
                Role::Reader { client } => Err(client.clone()),
            }
        };
        match role {
            Ok(indexer) => {
                refresh_index_md(&self.vaults, &self.index_md, vault, paths);
                match indexer.update_within(v.name(), paths.to_vec(), WRITE_INDEX_WAIT) {
                    Err(e) => {
                        tracing::warn!(
                            "re-indexing {paths:?} in {vault} after a write failed: {e}"
                        );
                        Some(Indexed::Behind)
                    }
                    // Not reached in time while the index is failing: it will not be.
                    Ok(Indexed::Queued) if indexer.failing().is_some() => Some(Indexed::Behind),
                    Ok(reached) => {
                        if reached != Indexed::Full {
                            tracing::debug!(
                                "{paths:?} in {vault}: {} after {WRITE_INDEX_WAIT:?}, the rest \
                                 follows in the background",
                                reached.as_str()
                            );
                        }
                        Some(reached)
                    }
                }
            }
            // The owner's watcher keeps index.md; it is asked only for the index. A vault it
            // does not index waits for this process to take over.
            Err(client) => Some(match client.refresh(v.root(), vault, paths, WRITE_INDEX_WAIT) {
                owner::Asked::Indexed => Indexed::Full,
                owner::Asked::Unconfirmed | owner::Asked::NotTheirs => Indexed::Queued,
            }),
        }
    }

    /// Starts the periodic reconcile pass: every `index.reconcile_seconds` each vault gets a
    /// pass on the indexer (a stat walk; only changed files are read), catching whatever the
    /// watcher missed (events dropped by the OS, edits while the process was suspended). Stops
    /// when the returned handle is dropped. `None` when the interval is 0 or this engine is not
    /// the owner.
    pub fn reconcile(&self) -> Option<Reconciler> {
        let seconds = self.config.index.reconcile_seconds;
        let indexer = self.indexer()?;
        if seconds <= 0.0 {
            return None;
        }
        let interval = Duration::from_secs_f64(seconds);
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let names: Vec<String> = self.vaults.names().iter().map(|s| s.to_string()).collect();
        let thread = std::thread::Builder::new()
            .name("mdvault-reconcile".into())
            .spawn(move || {
                // A message or a closed channel both mean stop; a timeout means work.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    wait.recv_timeout(interval)
                {
                    for name in &names {
                        indexer.sync_later(name);
                    }
                }
            })
            .ok()?;
        Some(Reconciler { stop: Some(stop), thread: Some(thread) })
    }

    /// The upkeep settings drawn from the configuration.
    pub fn upkeep_settings(&self) -> upkeep::Settings {
        upkeep::Settings::from_config(&self.config)
    }

    /// Serialises maintenance runs: a second caller waits for the run in progress.
    pub(crate) fn maintenance_runs(&self) -> &std::sync::Mutex<()> {
        &self.maintenance_runs
    }

    /// How each vault's index.md generator stands; empty when generation is off.
    pub fn index_md_status(&self) -> Vec<(String, indexmd::Status)> {
        self.vaults
            .iter()
            .filter_map(|v| self.index_md.get(v.name()).map(|g| (v.name().to_string(), g.status())))
            .collect()
    }

    /// Watches every vault and queues changed paths on the indexer as they settle (owner
    /// only).
    pub fn watch(&self) -> Result<Watcher> {
        let Some(indexer) = self.indexer() else {
            return Err(Error::new(
                ErrorCode::InternalError,
                "only the process that owns the index watches the vaults",
            ));
        };
        let roots: Vec<(String, std::path::PathBuf)> =
            self.vaults.iter().map(|v| (v.name().to_string(), v.root().to_path_buf())).collect();
        let vaults = self.vaults.clone();
        let generators = self.index_md.clone();
        let debounce = Duration::from_secs_f64(self.config.watch_debounce_seconds.max(0.05));
        watch::watch(&roots, debounce, move |name, paths| {
            // index.md first: it is cheap, and it must not wait for (or fail with) the
            // embedder.
            refresh_index_md(&vaults, &generators, name, &paths);
            indexer.notify(name, paths);
        })
    }
}

/// Opens the index read-only beside its owner, waiting a moment for an owner that is still
/// creating it.
fn open_reader(
    config: &Config,
    names: Vec<String>,
    settings: IndexSettings,
    embedder: &Arc<crate::embed::Embedder>,
) -> Result<Index> {
    let started = std::time::Instant::now();
    loop {
        match Index::open_reader(
            &config.data_dir,
            names.clone(),
            settings.clone(),
            embedder.clone(),
        ) {
            // Only an index the owner has not finished creating is worth waiting for; any
            // other refusal (a model mismatch) stands.
            Err(_) if !created(&config.data_dir) && started.elapsed() < READER_OPEN_PATIENCE => {
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Whether the owner has created both halves of the index a reader opens.
fn created(data_dir: &std::path::Path) -> bool {
    crate::config::DataDir::new(data_dir).has_index()
}

/// Whether the store held a finished build of every vault, with every chunk's vector.
fn is_warm(vaults: &Vaults, index: &Index) -> bool {
    // A model change drops every vector in `Index::open`, so a switch is never warm.
    // When every chunk in memory has its vector, no vault misses one, and the per-vault count
    // (a scan of every chunk, a second at a million) is not needed.
    let (chunks, with_vectors) = index.counts();
    let all_embedded = chunks == with_vectors;
    vaults.iter().all(|v| {
        let store = index.store();
        let built = store.meta(&coverage::LastBuild::key(v.name())).ok().flatten().is_some();
        built
            && (all_embedded
                || store.vault_chunk_counts(v.name()).is_ok_and(|(_, missing)| missing == 0))
    })
}

/// Whether a vault has ever been indexed into this store: a finished pass was recorded, or
/// (a store from before passes were recorded) it has chunks.
fn ever_indexed(store: &crate::index::store::Store, vault: &str) -> bool {
    store.meta(&coverage::LastBuild::key(vault)).ok().flatten().is_some()
        || store.vault_chunk_counts(vault).is_ok_and(|(chunks, _)| chunks > 0)
}

/// Re-reads changed notes into a vault's index.md, logging (never returning) failures: the
/// change itself already happened, and the next pass retries.
fn refresh_index_md(vaults: &Vaults, generators: &IndexMds, name: &str, paths: &[String]) {
    let (Ok(vault), Some(g)) = (vaults.get(Some(name)), generators.get(name)) else { return };
    if let Err(e) = g.refresh(vault, paths) {
        tracing::warn!("index.md of {name}: {e}");
    }
}

/// What [`Engine::start_background`] started; dropping it stops watching and reconciling.
pub struct Background {
    /// The owner's work, there from the start or once a reader has taken over.
    work: Arc<Mutex<Option<OwnerWork>>>,
    /// Tells a successor still waiting for ownership not to start anything.
    cancelled: Arc<AtomicBool>,
    // Left running when dropped: it waits on a lock that cannot be interrupted, and checks
    // `cancelled` when it gets it.
    _successor: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Background {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::SeqCst);
        drop(self.work.lock().unwrap_or_else(|p| p.into_inner()).take());
    }
}

/// An owner's background threads.
struct OwnerWork {
    _watcher: Option<Watcher>,
    _index_md: Option<Reconciler>,
    // The build thread sends the reconcile handle here once the first build succeeds; it
    // lives in the channel until this value is dropped, which stops it.
    _reconciler: std::sync::mpsc::Receiver<Reconciler>,
    _builder: Option<std::thread::JoinHandle<()>>,
}

/// The running reconcile pass; dropping it stops the thread.
pub struct Reconciler {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Reconciler {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
