//! Index work the engine asks for: passes over one vault or every vault (an owner runs them on
//! its indexer, a reader asks the owning process), a write's re-index within a bounded wait,
//! and the watcher that queues what changed on disk.

use std::sync::Arc;
use std::time::Duration;

use super::owner::{self, OwnerClient, OwnerInfo};
use super::{Engine, IndexMds, Role, WRITE_INDEX_WAIT};
use crate::error::{Error, ErrorCode, Result};
use crate::index::watch::{self, Watcher};
use crate::index::{Pass, Progress, SyncReport};
use crate::vault::{Indexed, Vaults};

impl Engine {
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
    pub(crate) fn update(&self, vault: &str, paths: &[String]) -> Result<SyncReport> {
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
    pub(crate) fn owner_info(&self) -> Option<OwnerInfo> {
        if self.is_owner() {
            return None;
        }
        OwnerClient::new(&self.config.data_dir).hello().ok()
    }

    /// Re-indexes paths a surface just wrote, so a search right after the write sees it (the
    /// watcher would, but only after its debounce). Failures are logged, never returned: the
    /// write itself succeeded, and the watcher and reconcile pass will try again. The job is
    /// queued behind any pass already running; the write waits for it at most
    /// [`WRITE_INDEX_WAIT`] and the answer says how far it got. A reader asks the owning
    /// process to do it, which can only say `Full` (confirmed in time) or `Queued`.
    pub(crate) fn refresh(&self, vault: &str, paths: &[String]) -> Option<Indexed> {
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

/// Re-reads changed notes into a vault's index.md, logging (never returning) failures: the
/// change itself already happened, and the next pass retries.
fn refresh_index_md(vaults: &Vaults, generators: &IndexMds, name: &str, paths: &[String]) {
    let (Ok(vault), Some(g)) = (vaults.get(Some(name)), generators.get(name)) else { return };
    if let Err(e) = g.refresh(vault, paths) {
        tracing::warn!("index.md of {name}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use crate::index::Silent;
    use crate::search::SearchRequest;
    use crate::vault::Indexed;

    fn paths_for(engine: &super::Engine, word: &str) -> Vec<String> {
        engine
            .search(&SearchRequest::new(word))
            .unwrap()
            .results
            .into_iter()
            .map(|h| h.path)
            .collect()
    }

    #[test]
    fn a_write_refreshed_by_the_owner_is_searchable_without_a_pass() {
        let f =
            fixture::Vaults::new(&[("v", &[("Old.md", "# Old\n\nThe boiler is in the loft.\n")])]);
        let engine = f.engine();
        engine.sync(None, false, &Silent).unwrap();
        assert!(!paths_for(&engine, "zeppelin").contains(&"New.md".to_string()));

        std::fs::write(f.roots[0].path().join("New.md"), "# New\n\nA zeppelin drifts over.\n")
            .unwrap();
        let reached = engine.refresh("v", &["New.md".to_string()]);
        assert!(
            matches!(reached, Some(Indexed::Full | Indexed::Lexical | Indexed::Queued)),
            "{reached:?}"
        );
        // An update of nothing is queued behind the refresh on the one indexer thread, so when
        // it answers the refresh is done; it indexes nothing itself.
        engine.update("v", &[]).unwrap();
        assert_eq!(paths_for(&engine, "zeppelin").first().map(String::as_str), Some("New.md"));
    }

    #[test]
    fn a_refresh_of_a_vault_that_is_not_configured_tells_no_index() {
        let f = fixture::Vaults::new(&[("v", &[("Old.md", "# Old\n\nText.\n")])]);
        let engine = f.engine();
        assert_eq!(engine.refresh("elsewhere", &["Old.md".to_string()]), None);
    }

    #[test]
    fn a_pass_covers_the_vault_it_names_and_refuses_one_not_configured() {
        let f = fixture::Vaults::new(&[
            ("a", &[("A.md", "# A\n\nAlpha words.\n")]),
            ("b", &[("B.md", "# B\n\nBeta words.\n"), ("C.md", "# C\n\nGamma words.\n")]),
        ]);
        let engine = f.engine();
        let reports = engine.sync(Some("b"), false, &Silent).unwrap();
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].0, "b");
        assert_eq!(reports[0].1.files_seen, 2);
        assert!(engine.sync(Some("z"), false, &Silent).is_err());
    }
}
