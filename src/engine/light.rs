//! The engine without the model: what a short-lived note or upkeep command needs.
//!
//! `mdvault read`, `write`, `mv`, `check` and their kin go through the same front door as REST
//! and MCP ([`crate::service`]), but loading the embedding model and opening the index for
//! them would cost seconds for a millisecond's work. A [`LightEngine`] holds the vaults, opens
//! the store's extraction cache only when a PDF is read, and hands what a write touched to the
//! index owner when one runs (a server, `mcp`, or a long `index`), so a search right after a
//! CLI write finds it.
//!
//! It deliberately never indexes by itself and never becomes the owner: without a running
//! owner, the next `mdvault index` or server start brings the index up to date from the disk.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::owner::{Asked, OwnerClient};
use crate::config::Config;
use crate::docs::Extraction;
use crate::error::Result;
use crate::index::store::Store;
use crate::index::{Extractions, IndexSettings, StoreDocuments};
use crate::vault::{DocumentText, Indexed, Vaults};

/// How long a CLI write waits for the owner to confirm the re-index of what it wrote: the
/// same bound a server's own write has, so `write` then `search` behaves alike everywhere.
const OWNER_WAIT: Duration = super::WRITE_INDEX_WAIT;

/// The vaults, a lazily opened extraction cache and the way to the index owner.
pub(crate) struct LightEngine {
    config: Config,
    vaults: Vaults,
    documents: LazyDocuments,
    owner: OwnerClient,
    maintenance_runs: Mutex<()>,
    trail: crate::auth::audit::Trail,
}

impl LightEngine {
    /// Opens the configured vaults; nothing else is opened until it is needed.
    pub(crate) fn open(config: Config) -> Result<LightEngine> {
        let vaults = Vaults::open(&config)?;
        Ok(LightEngine {
            trail: crate::auth::audit::Trail::new(config.data_dir.clone()),
            documents: LazyDocuments::new(&config),
            owner: OwnerClient::new(&config.data_dir),
            config,
            vaults,
            maintenance_runs: Mutex::new(()),
        })
    }

    /// The configuration.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The vaults.
    pub(crate) fn vaults(&self) -> &Vaults {
        &self.vaults
    }

    /// The extraction cache, for reading documents.
    pub(crate) fn documents(&self) -> &LazyDocuments {
        &self.documents
    }

    /// Serialises maintenance runs within this process, as the engine does.
    pub(crate) fn maintenance_runs(&self) -> &Mutex<()> {
        &self.maintenance_runs
    }

    /// The audit trail of this process's writes.
    pub(crate) fn trail(&self) -> &crate::auth::audit::Trail {
        &self.trail
    }

    /// Tells the running index owner, if there is one, that `paths` of `vault` changed, and
    /// waits a bounded time for it to re-index them. Failing that, the owner's watcher or the
    /// next index pass reaches them; a write never fails because its re-index did.
    ///
    /// Says how far the re-index got: `None` when no owner runs (nothing was asked).
    pub(crate) fn refresh(&self, vault: &str, paths: &[String]) -> Option<Indexed> {
        let v = self.vaults.get(Some(vault)).ok()?;
        if !self.owner.answers() {
            tracing::debug!("no index owner runs; the next index pass reaches {paths:?}");
            return None;
        }
        match self.owner.refresh(v.root(), vault, paths, OWNER_WAIT) {
            Asked::Indexed => Some(Indexed::Full),
            Asked::Unconfirmed => Some(Indexed::Queued),
            // Nothing was asked of an index that does not hold the vault.
            Asked::NotTheirs => None,
        }
    }
}

/// The store's extraction cache, opened the first time a document is read (a note command
/// that reads only Markdown never touches the data directory).
pub(crate) struct LazyDocuments {
    data_dir: std::path::PathBuf,
    settings: IndexSettings,
    opened: OnceLock<(Store, Extractions)>,
}

impl LazyDocuments {
    /// Opens nothing until a document is read.
    pub(crate) fn new(config: &Config) -> LazyDocuments {
        LazyDocuments {
            data_dir: config.data_dir.clone(),
            settings: IndexSettings::from_config(config),
            opened: OnceLock::new(),
        }
    }
}

impl DocumentText for LazyDocuments {
    fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)> {
        if self.opened.get().is_none() {
            let store = Store::open(&self.data_dir)?;
            let extractions = Extractions::new(&self.settings);
            let _ = self.opened.set((store, extractions));
        }
        let (store, extractions) = self.opened.get().expect("set above");
        StoreDocuments { store, extractions }.extraction(rel, bytes)
    }
}
