//! The engine façade: the configured vaults, their index and the search settings in one value.
//!
//! Surfaces (the CLI now, REST and MCP next) build one [`Engine`] from a [`Config`] and call it;
//! nothing below this knows which surface asked. Opening it loads the embedder (a local model
//! folder or an HTTP endpoint) and the index store; it never downloads anything.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, EmbeddingBackend};
use crate::embed::hashing::HashingEmbedder;
use crate::embed::{Embedder, http::HttpConfig, http::HttpEmbedder, local::LocalEmbedder};
use crate::error::{Error, ErrorCode, Result};
use crate::index::watch::{self, Watcher};
use crate::index::{Index, IndexSettings, Progress, SyncReport};
use crate::search::rerank::Reranker;
use crate::search::{SearchRequest, SearchResponse, Searcher};
use crate::vault::Vaults;

/// Vaults, index and settings, ready to serve.
pub struct Engine {
    config: Config,
    vaults: Vaults,
    index: Arc<Index>,
    reranker: Option<Reranker>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("vaults", &self.vaults.names()).finish()
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
        let names = vaults.names().iter().map(|s| s.to_string()).collect();
        let index = Index::open(
            &config.data_dir,
            names,
            IndexSettings::from_config(&config),
            Arc::new(embedder),
        )?;
        let reranker = Reranker::new(&config.rerank);
        Ok(Engine { config, vaults, index: Arc::new(index), reranker })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The vaults.
    pub fn vaults(&self) -> &Vaults {
        &self.vaults
    }

    /// The index.
    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// Brings one vault (or, with `None`, every vault) up to date.
    pub fn sync(
        &self,
        vault: Option<&str>,
        full: bool,
        progress: &dyn Progress,
    ) -> Result<Vec<(String, SyncReport)>> {
        if full {
            self.index.clear()?;
        }
        let mut out = Vec::new();
        for v in self.vaults.iter() {
            if vault.is_some_and(|n| n != v.name()) {
                continue;
            }
            out.push((v.name().to_string(), self.index.sync(v, full, progress)?));
        }
        if let Some(name) = vault
            && out.is_empty()
        {
            self.vaults.get(Some(name))?;
        }
        Ok(out)
    }

    /// Runs a search.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResponse> {
        Searcher {
            index: &self.index,
            settings: &self.config.search,
            query_prefix: &self.config.embedding.query_prefix,
            reranker: self.reranker.as_ref(),
        }
        .search(req)
    }

    /// Starts the periodic reconcile pass: every `index.reconcile_seconds` each vault is synced
    /// (a stat walk; only changed files are read), catching whatever the watcher missed
    /// (events dropped by the OS, edits while the process was suspended). Stops when the
    /// returned handle is dropped. `None` when the interval is 0.
    pub fn reconcile(&self) -> Option<Reconciler> {
        let seconds = self.config.index.reconcile_seconds;
        if seconds <= 0.0 {
            return None;
        }
        let interval = Duration::from_secs_f64(seconds);
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let index = self.index.clone();
        let vaults = self.vaults.clone();
        let thread = std::thread::Builder::new()
            .name("mdvault-reconcile".into())
            .spawn(move || {
                // A message or a closed channel both mean stop; a timeout means work.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    wait.recv_timeout(interval)
                {
                    for vault in vaults.iter() {
                        match index.sync(vault, false, &crate::index::Silent) {
                            Ok(r) if r.files_chunked + r.files_removed > 0 => tracing::info!(
                                "reconcile: {} changed and {} removed in {}",
                                r.files_chunked,
                                r.files_removed,
                                vault.name()
                            ),
                            Ok(_) => {}
                            Err(e) => tracing::warn!("reconcile of {} failed: {e}", vault.name()),
                        }
                    }
                }
            })
            .ok()?;
        Some(Reconciler { stop: Some(stop), thread: Some(thread) })
    }

    /// Watches every vault and re-indexes changed paths as they settle.
    pub fn watch(&self) -> Result<Watcher> {
        let roots: Vec<(String, std::path::PathBuf)> =
            self.vaults.iter().map(|v| (v.name().to_string(), v.root().to_path_buf())).collect();
        let index = self.index.clone();
        let vaults = self.vaults.clone();
        let debounce = Duration::from_secs_f64(self.config.watch_debounce_seconds.max(0.05));
        watch::watch(&roots, debounce, move |name, paths| {
            let Ok(vault) = vaults.get(Some(name)) else { return };
            match index.update_paths(vault, &paths) {
                Ok(r) => tracing::info!(
                    "re-indexed {} path(s) in {name}: {} chunked, {} removed, {} embedded in {:.0} ms",
                    paths.len(),
                    r.files_chunked,
                    r.files_removed,
                    r.texts_embedded,
                    r.seconds * 1000.0
                ),
                Err(e) => tracing::warn!("re-indexing {name} failed: {e}"),
            }
        })
    }
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
