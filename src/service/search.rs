//! Search and re-index through the front door: the scope a request reaches, `k`, and the
//! index passes a caller asks for.

use super::*;

/// Searches; `k` of 0 or none is the vault's own `default_k` (a one-vault search), else
/// `search.default_k`, then clamped to 1..=[`MAX_K`] (by
/// [`crate::search::SearchScope::resolve`]).
pub(crate) fn search(engine: &Engine, t: &Target, a: SearchArgs) -> Result<SearchResponse> {
    let asked = a.k;
    let mut resp = engine.search(&search_request(engine, t, a)?)?;
    if let Some(k) = asked.filter(|&k| k > MAX_K) {
        // Said out loud, so a caller that asked for more does not take 20 for all there is.
        resp.notices.push(format!(
            "k {k} is above the limit of {MAX_K}, so at most {MAX_K} passages are returned; \
             narrow the query or use `prefix` to see others"
        ));
    }
    Ok(resp)
}

/// The search a request means on every surface, resolved once here: the connection's vault
/// rule with `all` ([`scope`]), then [`crate::search::SearchScope::resolve`] (the empty-query
/// refusal, the default and the clamp of `k`, the prefix). A surface with options of its own
/// (the CLI's `--mode`) sets them on the result; the engine takes the scope as given.
pub(crate) fn search_request(engine: &Engine, t: &Target, a: SearchArgs) -> Result<ScopedSearch> {
    let mut req = SearchRequest::new(&a.query);
    req.k = a.k;
    req.scope = scope(engine, t, a.vault.as_deref())?;
    req.prefix = a.prefix;
    req.thorough = a.thorough;
    let mut scoped =
        ScopedSearch::resolve(engine.vaults(), &engine.config().search, &req, Limit::Surface)?;
    scoped.grant = t.grant.clone();
    Ok(scoped)
}

/// Where the words of a search's query occur in `text` (a hit's excerpt): the byte ranges of
/// the words whose analysed form (the index's own analyzer: folding, stemming) is one of
/// `tokens`, the query tokens a [`SearchResponse`]'s explanation lists. A surface marks them.
pub(crate) fn query_matches(text: &str, tokens: &[String]) -> Vec<std::ops::Range<usize>> {
    crate::index::tokenize::tokens_with_offsets(text)
        .into_iter()
        .filter(|(token, _)| tokens.contains(token))
        .map(|(_, range)| range)
        .collect()
}

/// Brings the index of the vaults [`scope`] names up to date (or re-chunks them with `full`).
pub(crate) fn reindex(
    engine: &Engine,
    t: &Target,
    a: ReindexArgs,
) -> Result<Vec<(String, SyncReport)>> {
    t.grant.check_reindex()?;
    match scope(engine, t, a.vault.as_deref())?.names() {
        None => engine.sync(None, a.full, &crate::index::Silent),
        Some(names) => {
            let mut reports = Vec::with_capacity(names.len());
            for name in names {
                reports.extend(engine.sync(Some(name), a.full, &crate::index::Silent)?);
            }
            Ok(reports)
        }
    }
}
