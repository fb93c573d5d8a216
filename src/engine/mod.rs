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

mod background;
pub(crate) mod indexer;
pub(crate) mod light;
pub(crate) mod owner;
mod refresh;
mod search;
mod status;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::config::{Config, EmbeddingBackend};
use crate::embed::hashing::HashingEmbedder;
use crate::embed::{Embedder, http::HttpConfig, http::HttpEmbedder, local::LocalEmbedder};
use crate::error::{Error, ErrorCode, Result};
use crate::index::coverage;
use crate::index::{Index, IndexSettings};
use crate::search::rerank::Reranker;
use crate::upkeep::indexmd;
use crate::vault::Vaults;
use indexer::{Indexer, IndexerThread};
use owner::{Endpoint, OwnerClient, OwnerInfo, Ownership, VaultRoot};

pub(crate) use light::LightEngine;
pub use status::{Phase, Readiness, Status};

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
    /// The audit trail the front door records this process's writes in.
    trail: crate::auth::audit::Trail,
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

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("vaults", &self.vaults.names()).finish()
    }
}

/// The id the configured embedding model would have, without loading it (a local model's
/// weights are hashed, nothing more; an endpoint is not contacted).
pub(crate) fn configured_model_id(config: &Config) -> std::result::Result<String, String> {
    match &config.embedding.backend {
        EmbeddingBackend::Local { model_dir } => {
            LocalEmbedder::identify(model_dir).map_err(|e| e.to_string())
        }
        _ => load_embedder(config).map(|e| e.model_id().to_string()).map_err(|e| e.to_string()),
    }
}

/// Loads the configured embedder.
pub(crate) fn load_embedder(config: &Config) -> Result<Embedder> {
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
            trail: crate::auth::audit::Trail::new(config.data_dir.clone()),
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
    pub(crate) fn is_owner(&self) -> bool {
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
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The vaults.
    pub(crate) fn vaults(&self) -> &Vaults {
        &self.vaults
    }

    /// The index (the owner's, or this reader's read-only view of it).
    pub fn index(&self) -> Arc<Index> {
        self.index.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Serialises maintenance runs: a second caller waits for the run in progress.
    pub(crate) fn maintenance_runs(&self) -> &std::sync::Mutex<()> {
        &self.maintenance_runs
    }

    /// The audit trail of this process's writes.
    pub(crate) fn trail(&self) -> &crate::auth::audit::Trail {
        &self.trail
    }

    /// How each vault's index.md generator stands; empty when generation is off.
    pub(crate) fn index_md_status(&self) -> Vec<(String, indexmd::Status)> {
        self.vaults
            .iter()
            .filter_map(|v| self.index_md.get(v.name()).map(|g| (v.name().to_string(), g.status())))
            .collect()
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

#[cfg(test)]
pub(crate) mod fixture {
    //! Engines over temporary vaults with the hashing embedder, for the engine's unit tests.

    use super::*;
    use crate::config::{Overrides, load};

    /// Temporary vaults (`name`, notes as (path, text)) and a data directory, kept alive beside
    /// the engines opened over them.
    pub(crate) struct Vaults {
        pub(crate) config: Config,
        pub(crate) roots: Vec<tempfile::TempDir>,
        _data: tempfile::TempDir,
    }

    impl Vaults {
        pub(crate) fn new(vaults: &[(&str, &[(&str, &str)])]) -> Vaults {
            let data = tempfile::tempdir().unwrap();
            let roots: Vec<tempfile::TempDir> =
                vaults.iter().map(|_| tempfile::tempdir().unwrap()).collect();
            for ((_, notes), root) in vaults.iter().zip(&roots) {
                for (path, text) in *notes {
                    let file = root.path().join(path);
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(file, text).unwrap();
                }
            }
            let overrides = Overrides {
                vaults: vaults
                    .iter()
                    .zip(&roots)
                    .map(|((name, _), root)| format!("{name}={}", root.path().display()))
                    .collect(),
                data_dir: Some(data.path().join("data")),
                config_file: Some(std::path::PathBuf::new()),
            };
            let home = data.path().to_str().unwrap().to_string();
            let mut config = load(&overrides, &[("HOME", home.as_str())]).unwrap();
            config.embedding.backend = EmbeddingBackend::Hashing { dims: 64 };
            Vaults { config, roots, _data: data }
        }

        /// An engine over these vaults: the owner when none runs, else a reader.
        pub(crate) fn engine(&self) -> Engine {
            Engine::with_embedder(self.config.clone(), Embedder::Hashing(HashingEmbedder::new(64)))
                .unwrap()
        }
    }
}
