//! The scope of one search, decided once: the query (an empty one is refused), which vaults
//! (a named one must be configured), the folder prefix (trimmed of spaces and slashes; empty
//! is none) and `k` (0 or none is the scope's default; a surface's search is clamped to
//! 1..=[`MAX_K`]).
//!
//! The front door (`service::search_request`) resolves a [`ScopedSearch`] from a tool's
//! arguments; a measuring caller (the eval, the benchmark, tests) hands the engine a
//! [`SearchRequest`] as written, which is resolved once on the way in by the same rule with
//! `k` as asked. Either way the engine and the searcher take the scope as given and decide
//! none of it again.

use std::borrow::Cow;

use super::{Mode, SearchRequest};
use crate::config::SearchSettings;
use crate::error::{Error, ErrorCode, Result};
use crate::vault::{VaultScope, Vaults};

/// The most passages a search hands a caller on any surface: REST (`/search/simple/` asks for
/// exactly this many), MCP's `vault_search` (its schema says "1 to 20"), the web page and
/// `mdvault search`. A caller that asks for more gets this many, and the front door says so.
pub const MAX_K: usize = 20;

/// How `k` is bounded above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A surface's search: at most [`MAX_K`].
    Surface,
    /// A measurement: the k asked for (the eval's recall@100 ranks a hundred passages, and the
    /// eval bounds its own `--k`).
    AsAsked,
}

/// What one search covers, resolved: build it with [`SearchScope::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchScope {
    query: String,
    vaults: VaultScope,
    prefix: Option<String>,
    k: usize,
}

impl SearchScope {
    /// The one home of the scope rules. `asked` is what the caller said: its vault scope was
    /// chosen by [`Vaults::scope`] (the `all` rule), or written by a measuring caller, so a
    /// named vault is checked against `vaults` here.
    pub(crate) fn resolve(
        vaults: &Vaults,
        settings: &SearchSettings,
        asked: &SearchRequest,
        limit: Limit,
    ) -> Result<SearchScope> {
        let query = asked.query.trim();
        if query.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "the query is empty; pass some words, a question or an exact token",
            ));
        }
        let vaults = match &asked.scope {
            VaultScope::Every => VaultScope::Every,
            VaultScope::One(name) => VaultScope::One(vaults.get(Some(name))?.name().to_string()),
            VaultScope::Several(names) => {
                let named: Vec<&str> =
                    names.iter().map(|n| Ok(vaults.get(Some(n))?.name())).collect::<Result<_>>()?;
                // Configured order, each once, so the answer does not depend on how the
                // caller listed them.
                let ordered = vaults.names().into_iter().filter(|n| named.contains(n));
                VaultScope::Several(ordered.map(str::to_string).collect())
            }
        };
        let prefix = asked
            .prefix
            .as_deref()
            .map(|p| p.trim().trim_matches('/').to_string())
            .filter(|p| !p.is_empty());
        // A search of one vault takes that vault's own default when it has one.
        let k = match asked.k {
            None | Some(0) => vaults.name().and_then(|v| settings.vault_k.get(v)).copied(),
            Some(k) => Some(k),
        }
        .unwrap_or(settings.default_k);
        let k = match limit {
            Limit::Surface => k.clamp(1, MAX_K),
            Limit::AsAsked => k.max(1),
        };
        Ok(SearchScope { query: query.to_string(), vaults, prefix, k })
    }

    /// The query, trimmed and not empty.
    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    /// Every vault, one configured vault, or several.
    pub(crate) fn vaults(&self) -> &VaultScope {
        &self.vaults
    }

    /// The names of the vaults searched, in configured order.
    pub(crate) fn vault_names<'a>(&'a self, vaults: &'a Vaults) -> Vec<&'a str> {
        match self.vaults.names() {
            Some(names) => names.iter().map(String::as_str).collect(),
            None => vaults.names(),
        }
    }

    /// The folder (root-relative, no leading or trailing `/`), or none.
    pub(crate) fn prefix(&self) -> Option<&str> {
        self.prefix.as_deref()
    }

    /// How many passages, at least 1.
    pub(crate) fn k(&self) -> usize {
        self.k
    }
}

/// A search whose scope is resolved, with the options a surface may still set (the CLI sets
/// its `--mode` and reranker switch on it).
#[derive(Debug, Clone)]
pub struct ScopedSearch {
    /// What the search covers.
    pub(crate) scope: SearchScope,
    /// Rerank more candidates and order purely by the reranker.
    pub(crate) thorough: bool,
    /// Use the reranker when one is configured.
    pub(crate) rerank: bool,
    /// Which arms.
    pub(crate) mode: Mode,
    /// A query vector computed beforehand; `None` embeds the query text.
    pub(crate) query_vector: Option<Vec<f32>>,
    /// Candidates per arm instead of `search.candidates`.
    pub(crate) candidates: Option<usize>,
    /// The client's grant: both arms leave out what it cannot see, before ranking, so `k`
    /// holds. The owner's (every path) unless the front door sets another.
    pub(crate) grant: crate::vault::grant::Grant,
}

impl ScopedSearch {
    /// Resolves `asked`'s scope by the one rule and keeps its options.
    pub(crate) fn resolve(
        vaults: &Vaults,
        settings: &SearchSettings,
        asked: &SearchRequest,
        limit: Limit,
    ) -> Result<ScopedSearch> {
        Ok(ScopedSearch {
            scope: SearchScope::resolve(vaults, settings, asked, limit)?,
            thorough: asked.thorough,
            rerank: asked.rerank,
            mode: asked.mode,
            query_vector: asked.query_vector.clone(),
            candidates: asked.candidates,
            grant: crate::vault::grant::Grant::owner(),
        })
    }
}

/// What the engine's search takes: a search the front door scoped, or a request as a measuring
/// caller wrote it, resolved on the way in with `k` as asked.
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    /// Scoped already; taken as given.
    Scoped(&'a ScopedSearch),
    /// As written by the eval, the benchmark or a test.
    Asked(&'a SearchRequest),
}

impl<'a> From<&'a ScopedSearch> for Request<'a> {
    fn from(s: &'a ScopedSearch) -> Request<'a> {
        Request::Scoped(s)
    }
}

impl<'a> From<&'a SearchRequest> for Request<'a> {
    fn from(r: &'a SearchRequest) -> Request<'a> {
        Request::Asked(r)
    }
}

impl<'a> Request<'a> {
    /// The scoped search: as given, or resolved now.
    pub(crate) fn scoped(
        self,
        vaults: &Vaults,
        settings: &SearchSettings,
    ) -> Result<Cow<'a, ScopedSearch>> {
        match self {
            Request::Scoped(s) => Ok(Cow::Borrowed(s)),
            Request::Asked(r) => {
                ScopedSearch::resolve(vaults, settings, r, Limit::AsAsked).map(Cow::Owned)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// Two vaults, `notes` (with its own default k of 8) and `all`, each a temporary folder.
    fn two_vaults() -> (Vaults, SearchSettings, Vec<tempfile::TempDir>) {
        let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let home = dirs[2].path().to_str().unwrap().to_string();
        let overrides = crate::config::Overrides {
            vaults: vec![
                format!("notes={}", dirs[0].path().display()),
                format!("all={}", dirs[1].path().display()),
            ],
            data_dir: Some(dirs[2].path().join("data")),
            config_file: Some(std::path::PathBuf::new()),
        };
        let mut config: Config =
            crate::config::load(&overrides, &[("HOME", home.as_str())]).unwrap();
        config.search.vault_k.insert("notes".into(), 8);
        let vaults = Vaults::open(&config).unwrap();
        (vaults, config.search, dirs)
    }

    fn asked(
        query: &str,
        k: Option<usize>,
        scope: VaultScope,
        prefix: Option<&str>,
    ) -> SearchRequest {
        let mut r = SearchRequest::new(query);
        r.k = k;
        r.scope = scope;
        r.prefix = prefix.map(str::to_string);
        r
    }

    #[test]
    fn an_empty_or_blank_query_is_refused_before_anything_is_searched() {
        let (vaults, settings, _d) = two_vaults();
        for q in ["", "   \n\t"] {
            let err = SearchScope::resolve(
                &vaults,
                &settings,
                &asked(q, None, VaultScope::Every, None),
                Limit::Surface,
            )
            .unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidRequest, "{q:?}");
        }
        let s = SearchScope::resolve(
            &vaults,
            &settings,
            &asked("  boiler  ", None, VaultScope::Every, None),
            Limit::Surface,
        )
        .unwrap();
        assert_eq!(s.query(), "boiler");
    }

    #[test]
    fn a_surface_k_is_clamped_to_one_through_the_maximum_and_zero_means_the_default() {
        let (vaults, settings, _d) = two_vaults();
        let k = |asked_k, scope: VaultScope| {
            SearchScope::resolve(
                &vaults,
                &settings,
                &asked("q", asked_k, scope, None),
                Limit::Surface,
            )
            .unwrap()
            .k()
        };
        assert_eq!(k(None, VaultScope::Every), settings.default_k);
        assert_eq!(k(Some(0), VaultScope::Every), settings.default_k);
        assert_eq!(k(Some(3), VaultScope::Every), 3);
        assert_eq!(k(Some(MAX_K + 1), VaultScope::Every), MAX_K);
        assert_eq!(k(Some(1000), VaultScope::One("notes".into())), MAX_K);
        // One vault takes its own default; every vault takes the global one.
        assert_eq!(k(None, VaultScope::One("notes".into())), 8);
        assert_eq!(k(Some(0), VaultScope::One("all".into())), settings.default_k);
    }

    #[test]
    fn a_measurement_gets_the_k_it_asked_for_past_the_surface_maximum() {
        let (vaults, settings, _d) = two_vaults();
        let s = SearchScope::resolve(
            &vaults,
            &settings,
            &asked("q", Some(100), VaultScope::Every, None),
            Limit::AsAsked,
        )
        .unwrap();
        assert_eq!(s.k(), 100);
        let raw = asked("q", None, VaultScope::Every, None);
        let none = Request::from(&raw).scoped(&vaults, &settings).unwrap();
        assert_eq!(none.scope.k(), settings.default_k);
    }

    #[test]
    fn a_named_vault_must_be_configured_and_every_vault_lists_them_in_order() {
        let (vaults, settings, _d) = two_vaults();
        let resolve = |scope| {
            SearchScope::resolve(&vaults, &settings, &asked("q", None, scope, None), Limit::Surface)
        };
        let err = resolve(VaultScope::One("nope".into())).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound);
        // A vault configured as `all` is that vault alone, not every vault.
        let all = resolve(VaultScope::One("all".into())).unwrap();
        assert_eq!(all.vault_names(&vaults), vec!["all"]);
        assert_eq!(resolve(VaultScope::Every).unwrap().vault_names(&vaults), vec!["notes", "all"]);
    }

    #[test]
    fn several_vaults_are_each_checked_and_kept_in_configured_order() {
        let (vaults, settings, _d) = two_vaults();
        let resolve = |names: &[&str]| {
            let several = VaultScope::Several(names.iter().map(|n| n.to_string()).collect());
            SearchScope::resolve(
                &vaults,
                &settings,
                &asked("q", None, several, None),
                Limit::Surface,
            )
        };
        let s = resolve(&["all", "notes", "all"]).unwrap();
        assert_eq!(s.vault_names(&vaults), vec!["notes", "all"]);
        assert_eq!(s.vaults().name(), None);
        assert_eq!(resolve(&["notes", "nope"]).unwrap_err().code(), ErrorCode::NotFound);
    }

    #[test]
    fn a_prefix_loses_its_spaces_and_slashes_and_an_empty_one_is_none() {
        let (vaults, settings, _d) = two_vaults();
        let prefix = |p| {
            SearchScope::resolve(
                &vaults,
                &settings,
                &asked("q", None, VaultScope::Every, Some(p)),
                Limit::Surface,
            )
            .unwrap()
            .prefix()
            .map(str::to_string)
        };
        assert_eq!(prefix(" /Home/Utilities/ "), Some("Home/Utilities".to_string()));
        assert_eq!(prefix("Projects"), Some("Projects".to_string()));
        assert_eq!(prefix("/"), None);
        assert_eq!(prefix("   "), None);
    }

    #[test]
    fn a_scoped_search_is_taken_as_given_and_keeps_its_options() {
        let (vaults, settings, _d) = two_vaults();
        let mut r = asked("q", Some(50), VaultScope::Every, None);
        r.thorough = true;
        r.mode = Mode::Lexical;
        let scoped = ScopedSearch::resolve(&vaults, &settings, &r, Limit::Surface).unwrap();
        assert_eq!(scoped.scope.k(), MAX_K);
        assert!(scoped.thorough);
        assert_eq!(scoped.mode, Mode::Lexical);
        // Handed to the engine, the front door's clamp stands (a raw request would get 50).
        let again = Request::from(&scoped).scoped(&vaults, &settings).unwrap();
        assert!(matches!(again, Cow::Borrowed(_)));
        assert_eq!(again.scope.k(), MAX_K);
    }
}
