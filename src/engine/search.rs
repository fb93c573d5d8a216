//! The engine's search entry: a search whose scope is resolved (see [`crate::search::scope`]),
//! answered from what the index holds now, with what the build's state means for the answer
//! said in notices or, when an answer would mislead, `not_ready`.

use std::sync::atomic::Ordering;

use super::{Engine, Phase};
use crate::error::{Error, ErrorCode, Result};
use crate::index::coverage;
use crate::search::{Request, SearchResponse, Searcher};

/// What the build's state means for one search, looked at once before it runs.
struct Moment {
    /// Seconds a warm restart's catching-up pass has run.
    catching_up: Option<f64>,
    /// Seconds the first build has run.
    building: Option<f64>,
    /// Why every build attempt failed, when the words are in anyway.
    failed: Option<String>,
    /// The last build attempt's failure.
    last_error: Option<String>,
    /// The first build has committed every vault's words.
    words_done: bool,
}

impl Engine {
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
    ///
    /// `req` is a search the front door scoped (`service::search_request`), taken as given, or
    /// a request as a measuring caller wrote it, resolved once here by the same rule.
    pub fn search<'r>(&self, req: impl Into<Request<'r>>) -> Result<SearchResponse> {
        let req = req.into().scoped(&self.vaults, &self.config.search)?;
        let index = self.index();
        // A reader first catches up with what the owner has committed.
        index.follow_owner()?;
        let moment = self.moment()?;
        // Until every vault's words are committed an answer could silently miss notes. Said
        // before the store is asked which vaults were ever indexed: clients poll during the
        // words pass, and each look (a count over every chunk so far) took the store's lock
        // from the pass they were waiting for.
        if let Some(seconds) = moment.building
            && !moment.words_done
        {
            return Err(self.still_building(seconds));
        }
        let scope = req.scope.vault_names(&self.vaults);
        let unbuilt: Vec<&str> =
            scope.iter().copied().filter(|v| !ever_indexed(index.store(), v)).collect();
        let all_unbuilt = !unbuilt.is_empty() && unbuilt.len() == scope.len();
        if let Some(seconds) = moment.building
            && all_unbuilt
        {
            return Err(self.still_building(seconds));
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
        .search(&req)?;
        self.add_notices(&mut resp, &unbuilt, moment, index.counts());
        Ok(resp)
    }

    /// The refusal while the first build has not taken in every note's words.
    fn still_building(&self, seconds: f64) -> Error {
        Error::new(
            ErrorCode::NotReady,
            format!(
                "the search index is still being built ({seconds:.0} s so far{}) and has not \
                 taken in every note's words yet; retry in a few seconds, or use list and read \
                 meanwhile",
                self.progress_note()
            ),
        )
    }

    /// One look at the build's state (`status()` would also query a store the pass is
    /// writing); `not_ready` when every build attempt failed before the words were in.
    fn moment(&self) -> Result<Moment> {
        let (phase, since, last_error) = {
            let s = self.readiness.state.lock().unwrap_or_else(|p| p.into_inner());
            (s.phase, s.since, s.error.clone())
        };
        let words_done = self.words_done.load(Ordering::SeqCst);
        let mut moment =
            Moment { catching_up: None, building: None, failed: None, last_error, words_done };
        match phase {
            Phase::Building if self.warm.load(Ordering::SeqCst) => {
                moment.catching_up = Some(since.elapsed().as_secs_f64());
            }
            Phase::Building => moment.building = Some(since.elapsed().as_secs_f64()),
            // The words are in, so an answer by words is honest; the notice says what is not.
            Phase::Failed if words_done => {
                moment.failed =
                    Some(moment.last_error.clone().unwrap_or_else(|| "unknown error".into()));
            }
            Phase::Failed => {
                return Err(Error::new(
                    ErrorCode::NotReady,
                    format!(
                        "the search index failed to build: {}; fix the cause and restart, \
                         or use list and read meanwhile",
                        moment.last_error.as_deref().unwrap_or("unknown error")
                    ),
                ));
            }
            Phase::Idle | Phase::Ready => {}
        }
        Ok(moment)
    }

    /// What the answer misses, said: vaults never indexed, a catching-up or running build
    /// (with how many passages have their meaning), a build that failed. `counts` is the
    /// index's (chunks, vectors).
    fn add_notices(
        &self,
        resp: &mut SearchResponse,
        unbuilt: &[&str],
        moment: Moment,
        (chunks, vectors): (usize, usize),
    ) {
        if !unbuilt.is_empty() {
            resp.notices.push(format!(
                "vault {} has not been indexed yet, so its notes are missing from these results",
                unbuilt.join(", ")
            ));
        }
        if let Some(seconds) = moment.catching_up {
            resp.notices.push(format!(
                "the index is catching up with changes made while the server was stopped \
                 ({seconds:.0} s so far); a note edited in that time may be missing or stale \
                 for a moment"
            ));
        }
        if let Some(seconds) = moment.building {
            // A retrying build says what went wrong, so "still being built" is not read as
            // "wait" when the cause (the embedder down) needs a person.
            let retrying = moment
                .last_error
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
        if let Some(error) = moment.failed {
            resp.notices.push(format!(
                "the search index failed to build its vectors ({error}): these results match \
                 the words of every note, but the meaning of only {vectors} of {chunks} \
                 passages; fix the cause and restart for the full answer"
            ));
        }
    }
}

/// Whether a vault has ever been indexed into this store: a finished pass was recorded, or
/// (a store from before passes were recorded) it has chunks.
fn ever_indexed(store: &crate::index::store::Store, vault: &str) -> bool {
    store.meta(&coverage::LastBuild::key(vault)).ok().flatten().is_some()
        || store.vault_has_chunks(vault).is_ok_and(|any| any)
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use crate::error::ErrorCode;
    use crate::index::Silent;
    use crate::search::{Limit, MAX_K, ScopedSearch, SearchRequest};
    use crate::vault::VaultScope;

    /// Vault `a` holds `n` notes that all mention the boiler; vault `b` holds one.
    fn boilers(n: usize) -> fixture::Vaults {
        let notes: Vec<(String, String)> = (0..n)
            .map(|i| {
                (
                    format!("Log/{i:02}.md"),
                    format!("# Visit {i}\n\nThe boiler was serviced, visit {i}.\n"),
                )
            })
            .collect();
        let a: Vec<(&str, &str)> = notes.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        fixture::Vaults::new(&[
            ("a", &a),
            ("b", &[("Home.md", "# Home\n\nThe boiler lives in the loft of home b.\n")]),
        ])
    }

    #[test]
    fn a_vault_never_indexed_is_not_ready_and_named_until_a_pass_indexes_it() {
        let f = boilers(2);
        let engine = f.engine();
        let err = engine.search(&SearchRequest::new("boiler")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotReady);
        assert!(err.message().contains("a, b"), "{}", err.message());

        engine.sync(Some("b"), false, &Silent).unwrap();
        // Every vault was asked for and one is indexed: an answer, with a notice naming `a`.
        let resp = engine.search(&SearchRequest::new("boiler")).unwrap();
        assert!(resp.results.iter().all(|h| h.vault == "b"), "{:?}", resp.results);
        assert!(resp.notices.iter().any(|n| n.contains("vault a has not been indexed")));
        let mut only_a = SearchRequest::new("boiler");
        only_a.scope = VaultScope::One("a".into());
        assert_eq!(engine.search(&only_a).unwrap_err().code(), ErrorCode::NotReady);
    }

    #[test]
    fn a_search_of_one_vault_reaches_no_other_and_an_unknown_vault_is_not_found() {
        let f = boilers(3);
        let engine = f.engine();
        engine.sync(None, false, &Silent).unwrap();
        let mut req = SearchRequest::new("boiler");
        req.scope = VaultScope::One("b".into());
        let resp = engine.search(&req).unwrap();
        assert_eq!(resp.results.len(), 1);
        assert_eq!(resp.results[0].vault, "b");
        req.scope = VaultScope::Every;
        let vaults: std::collections::HashSet<String> =
            engine.search(&req).unwrap().results.into_iter().map(|h| h.vault).collect();
        assert_eq!(vaults.len(), 2, "{vaults:?}");
        req.scope = VaultScope::One("c".into());
        assert_eq!(engine.search(&req).unwrap_err().code(), ErrorCode::NotFound);
    }

    #[test]
    fn a_search_of_several_vaults_reaches_each_of_them_and_no_other_in_both_arms() {
        let f = fixture::Vaults::new(&[
            ("a", &[("A.md", "# A\n\nThe boiler of vault a.\n")]),
            ("b", &[("B.md", "# B\n\nThe boiler of vault b.\n")]),
            ("c", &[("C.md", "# C\n\nThe boiler of vault c.\n")]),
        ]);
        let engine = f.engine();
        engine.sync(None, false, &Silent).unwrap();
        for mode in [crate::search::Mode::Lexical, crate::search::Mode::Dense] {
            let mut req = SearchRequest::new("boiler");
            req.mode = mode;
            req.scope = VaultScope::Several(vec!["c".into(), "a".into()]);
            let mut found: Vec<String> =
                engine.search(&req).unwrap().results.into_iter().map(|h| h.vault).collect();
            found.sort();
            assert_eq!(found, ["a", "c"], "{mode:?}");
        }
    }

    #[test]
    fn the_engine_keeps_the_front_doors_k_and_gives_a_measurement_the_k_it_asked_for() {
        let f = boilers(MAX_K + 4);
        let engine = f.engine();
        engine.sync(None, false, &Silent).unwrap();
        let mut req = SearchRequest::new("boiler serviced visit");
        req.k = Some(MAX_K + 4);
        req.scope = VaultScope::One("a".into());
        let measured = engine.search(&req).unwrap();
        assert_eq!(measured.k, MAX_K + 4);
        assert_eq!(measured.results.len(), MAX_K + 4);

        let scoped =
            ScopedSearch::resolve(engine.vaults(), &engine.config().search, &req, Limit::Surface)
                .unwrap();
        let surfaced = engine.search(&scoped).unwrap();
        assert_eq!(surfaced.k, MAX_K);
        assert_eq!(surfaced.results.len(), MAX_K);
    }

    #[test]
    fn a_prefix_is_searched_as_resolved_and_one_nothing_lies_under_is_not_found() {
        let f = boilers(3);
        let engine = f.engine();
        engine.sync(None, false, &Silent).unwrap();
        let mut req = SearchRequest::new("boiler");
        req.prefix = Some(" /log/ ".into());
        let resp = engine.search(&req).unwrap();
        assert!(!resp.results.is_empty());
        assert!(resp.results.iter().all(|h| h.path.starts_with("Log/")), "{:?}", resp.results);
        req.prefix = Some("Garden".into());
        assert_eq!(engine.search(&req).unwrap_err().code(), ErrorCode::NotFound);
    }
}
