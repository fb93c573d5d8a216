//! Search and re-index through the front door: the scope a request reaches, `k`, and the
//! index passes a caller asks for.

use super::*;

/// Searches; `k` of 0 or none is the vault's own `default_k` (a one-vault search), else
/// `search.default_k`, then clamped to 1..=20.
pub fn search(engine: &Engine, t: &Target, a: SearchArgs) -> Result<SearchResponse> {
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

/// The request a search means on every surface: the empty-query refusal, the default and the
/// clamp of `k`, the vault rule with `all`, an empty prefix as none. A surface with options of
/// its own (the CLI's `--mode`) sets them on the result.
pub fn search_request(engine: &Engine, t: &Target, a: SearchArgs) -> Result<SearchRequest> {
    if a.query.trim().is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "the query is empty; pass some words, a question or an exact token",
        ));
    }
    let scope = scope(engine, t, a.vault.as_deref())?;
    // A search of one vault takes that vault's own default when it has one.
    let search = &engine.config().search;
    let k = match a.k {
        None | Some(0) => scope.name().and_then(|v| search.vault_k.get(v)).copied(),
        Some(k) => Some(k),
    }
    .unwrap_or(search.default_k)
    .clamp(1, MAX_K);
    let mut req = SearchRequest::new(&a.query);
    req.k = Some(k);
    req.scope = scope;
    req.prefix = a.prefix.filter(|p| !p.trim().is_empty());
    req.thorough = a.thorough;
    Ok(req)
}

/// Where the words of a search's query occur in `text` (a hit's excerpt): the byte ranges of
/// the words whose analysed form (the index's own analyzer: folding, stemming) is one of
/// `tokens`, the query tokens a [`SearchResponse`]'s explanation lists. A surface marks them.
pub fn query_matches(text: &str, tokens: &[String]) -> Vec<std::ops::Range<usize>> {
    crate::index::tokenize::tokens_with_offsets(text)
        .into_iter()
        .filter(|(token, _)| tokens.contains(token))
        .map(|(_, range)| range)
        .collect()
}

/// Brings the index of the vaults [`scope`] names up to date (or re-chunks them with `full`).
pub fn reindex(engine: &Engine, t: &Target, a: ReindexArgs) -> Result<Vec<(String, SyncReport)>> {
    let scope = scope(engine, t, a.vault.as_deref())?;
    engine.sync(scope.name(), a.full, &crate::index::Silent)
}
