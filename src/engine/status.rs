//! Where the engine stands: the background build's phase ([`Readiness`], shared with the
//! build thread), the [`Status`] `/readyz` and `vault_status` report, and what of each vault
//! is searchable ([`Engine::coverage`], also without opening the engine).

use super::owner::OwnerClient;
use super::{Engine, configured_model_id};
use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::index::IndexSettings;
use crate::index::coverage::{self, Coverage};
use crate::vault::Vaults;

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
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Building => "building",
            Phase::Ready => "ready",
            Phase::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct ReadyState {
    pub(super) phase: Phase,
    pub(super) since: std::time::Instant,
    pub(super) attempts: u32,
    pub(super) built_at: Option<String>,
    pub(super) build_seconds: Option<f64>,
    pub(super) error: Option<String>,
    pub(super) watching: bool,
}

/// The background build's progress, shared by the build thread and whoever reports health.
#[derive(Debug)]
pub struct Readiness {
    pub(super) state: std::sync::Mutex<ReadyState>,
}

/// A snapshot of [`Readiness`], with the index's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// The build phase.
    pub(crate) phase: Phase,
    /// Seconds since the phase began.
    pub(crate) phase_seconds: f64,
    /// Build attempts made so far.
    pub(crate) attempts: u32,
    /// When the last successful build finished (UTC, ISO seconds with `Z`).
    pub(crate) built_at: Option<String>,
    /// How long the last successful build took.
    pub(crate) build_seconds: Option<f64>,
    /// Why the last attempt failed.
    pub(crate) error: Option<String>,
    /// Whether file watching is running.
    pub(crate) watching: bool,
    /// Files in the store.
    pub(crate) files: u64,
    /// Chunks in the store.
    pub(crate) chunks: u64,
    /// Distinct vectors in the store.
    pub(crate) vectors: u64,
    /// Whether the store answered.
    pub(crate) store_ok: bool,
    /// Whether this process owns (writes) the index; a reader follows another process's.
    pub(crate) owner: bool,
    /// How far the pass this process's indexer runs now is (the first build's, say).
    pub progress: Option<crate::index::PassProgress>,
    /// Why the index is behind the vault: the last index job's failure (a full or read-only
    /// data directory, say), until one succeeds.
    pub(crate) behind: Option<String>,
}

impl Readiness {
    pub(super) fn new() -> Readiness {
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

    pub(super) fn update(&self, f: impl FnOnce(&mut ReadyState)) {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
    }

    pub(super) fn set_phase(&self, phase: Phase) {
        self.update(|s| {
            s.phase = phase;
            s.since = std::time::Instant::now();
        });
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

impl Engine {
    /// `; <vault>: 1200/19500 texts embedded, about 6 min left`, or nothing between passes.
    pub(super) fn progress_note(&self) -> String {
        self.indexer()
            .and_then(|i| i.progress())
            .map(|p| format!("; {}", p.describe()))
            .unwrap_or_default()
    }

    /// The running pass's progress in this process, `None` between passes or in a reader
    /// (cheap: one lock; what MCP logging polls).
    pub(crate) fn pass_progress(&self) -> Option<crate::index::PassProgress> {
        self.indexer().and_then(|i| i.progress())
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
    pub(crate) fn coverage_offline(
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
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use super::*;
    use crate::index::Silent;
    use crate::search::SearchRequest;

    #[test]
    fn status_reports_the_owner_the_phase_and_what_the_store_holds() {
        let f = fixture::Vaults::new(&[(
            "v",
            &[("A.md", "# A\n\nThe boiler.\n"), ("B.md", "# B\n\nThe loft ladder.\n")],
        )]);
        let engine = f.engine();
        let before = engine.status();
        assert!(before.owner && before.store_ok);
        assert_eq!(before.phase, Phase::Idle);
        assert_eq!((before.files, before.chunks), (0, 0));
        assert_eq!(before.behind, None);

        engine.sync(None, false, &Silent).unwrap();
        let after = engine.status();
        assert_eq!(after.files, 2);
        assert!(after.chunks >= 2 && after.vectors >= 1, "{after:?}");
        assert_eq!(after.progress, None, "no pass runs now");
        assert_eq!(engine.phase(), Phase::Idle, "no background build was started");
    }

    #[test]
    fn a_second_engine_on_the_data_directory_reads_beside_the_owner() {
        let f = fixture::Vaults::new(&[("v", &[("A.md", "# A\n\nThe boiler.\n")])]);
        let owner = f.engine();
        owner.sync(None, false, &Silent).unwrap();
        let reader = f.engine();
        assert!(owner.is_owner() && !reader.is_owner());
        assert!(!reader.status().owner);
        assert_eq!(reader.owner_info().map(|o| o.pid), Some(std::process::id()));
        let found = reader.search(&SearchRequest::new("boiler")).unwrap();
        assert_eq!(found.results.first().map(|h| h.path.as_str()), Some("A.md"));
    }

    #[test]
    fn coverage_names_each_vault_and_refuses_one_not_configured() {
        let f = fixture::Vaults::new(&[
            ("a", &[("A.md", "# A\n\nAlpha.\n")]),
            ("b", &[("B.md", "# B\n\nBeta.\n")]),
        ]);
        let engine = f.engine();
        engine.sync(None, false, &Silent).unwrap();
        let every = engine.coverage(None).unwrap();
        assert_eq!(every.vaults.len(), 2);
        assert_eq!(engine.coverage(Some("b")).unwrap().vaults.len(), 1);
        assert_eq!(engine.coverage(Some("z")).unwrap_err().code(), ErrorCode::NotFound);
        // Offline, from the store alone, while the engine still holds the index.
        let offline = Engine::coverage_offline(&f.config, engine.vaults(), None).unwrap();
        assert_eq!(offline.vaults.len(), 2);
    }
}
