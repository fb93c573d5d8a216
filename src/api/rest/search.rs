//! The search routes and the index they read: mdvault's ranked `/search`, the Local REST API's
//! `/search/simple/` and JsonLogic `/search/`, and `/reindex`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, RawQuery, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use serde_json::Value;

use super::{App, finish, refusal};
use crate::api::common::{bad, blocking, body_text, flag, header_str, json_body, pairs, param};
use crate::api::compat;
use crate::engine::Engine;
use crate::error::Result;
use crate::service::{self as tools, Target};
use crate::wire;

/// The JSON body of `POST /search`: typed and strict, like every other JSON body.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchBody {
    #[serde(alias = "query")]
    q: Option<String>,
    k: Option<usize>,
    prefix: Option<String>,
    vault: Option<String>,
    explain: Option<bool>,
    thorough: Option<bool>,
}

/// `/search`: `q`, `k`, `prefix`, `vault`, `explain`, `thorough` as query fields, or (POST)
/// the same as a JSON object, whose fields win over the query's.
pub(super) async fn search_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    method: Method,
    RawQuery(query): RawQuery,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    finish(
        async {
            let q = pairs(&query)?;
            let b: SearchBody = if method == Method::POST {
                let raw = body_text(&app.engine, body)?;
                if raw.trim().is_empty() {
                    SearchBody::default()
                } else {
                    serde_json::from_str(&raw).map_err(|e| {
                        bad(format!(
                            "the search body must be a JSON object with q (text), k (a whole \
                             number), prefix, vault (text), explain and thorough (true or \
                             false): {e}"
                        ))
                    })?
                }
            } else {
                SearchBody::default()
            };
            let text = |name: &str| param(&q, name).map(str::to_string);
            let query_text =
                b.q.or_else(|| text("q"))
                    .or_else(|| text("query"))
                    .filter(|t| !t.trim().is_empty())
                    .ok_or_else(|| bad("search needs q, the query text"))?;
            let k = match b.k {
                Some(k) => Some(k),
                None => match text("k").filter(|s| !s.trim().is_empty()) {
                    None => None,
                    Some(s) => Some(s.trim().parse::<usize>().map_err(|_| {
                        bad(format!(
                            "k must be a whole number, not {s}; 0 means the default, and more \
                             than {} counts as {}",
                            tools::MAX_K,
                            tools::MAX_K
                        ))
                    })?),
                },
            };
            let explain = b.explain.unwrap_or_else(|| flag(&q, "explain"));
            let a = tools::SearchArgs {
                query: query_text,
                k,
                prefix: b.prefix.or_else(|| text("prefix")),
                vault: b.vault.or_else(|| text("vault")),
                thorough: b.thorough.unwrap_or_else(|| flag(&q, "thorough")),
            };
            let engine = app.engine.clone();
            let turn = app.searches.enter().await?;
            // The turn moves into the blocking task: the core is in use until the search ends,
            // even if this client hangs up first.
            let r = blocking(move || {
                let _turn = turn;
                tools::search(&engine, &target, a)
            })
            .await?;
            Ok(json_body(wire::search(&r, explain)))
        }
        .await,
    )
}

/// `POST /search/simple/?query=&contextLength=`: every note that holds the query (the whole
/// query, else each of its words; ignoring case) or whose path holds it, as the plugin answers,
/// with each match in context. Ordered by mdvault's ranking: the notes the hybrid search ranks
/// among its best passages first, in that order, then the rest by how often the query occurs.
/// A client that leaves stops the scan at the next note.
pub(super) async fn simple_search_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    finish(
        async {
            let q = pairs(&query)?;
            let text = param(&q, "query").filter(|t| !t.trim().is_empty()).ok_or_else(|| {
                bad("the simple search needs query, the text to find: /search/simple/?query=...")
                    .with_compat(compat::ERR_QUERY_MISSING)
            })?;
            let context = match param(&q, "contextLength") {
                None => compat::DEFAULT_CONTEXT,
                Some(s) => s.trim().parse::<usize>().map_err(|_| {
                    bad(format!(
                        "contextLength must be a whole number of characters, not {s:?}; leave it out for {}",
                        compat::DEFAULT_CONTEXT
                    ))
                })?,
            };
            let a = tools::SearchArgs {
                query: text.to_string(),
                k: Some(tools::MAX_K),
                prefix: None,
                vault: None,
                thorough: false,
            };
            let (engine, query_text) = (app.engine.clone(), text.to_string());
            let turn = app.searches.enter().await?;
            // Dropped with this future, so a client that leaves stops the scan (and frees its
            // turn) at the next note rather than after every note of a large vault.
            let cancel = crate::api::logic::Cancel::default();
            let _stop_when_gone = cancel.on_drop();
            let found = blocking(move || {
                let _turn = turn;
                // The ranking is an order, not a filter: while the index cannot answer (a
                // first build), every matching note is still found, in occurrence order.
                let ranked: Vec<String> = match tools::search(&engine, &target, a) {
                    Ok(r) => r.results.into_iter().map(|hit| hit.path).collect(),
                    Err(_) => Vec::new(),
                };
                let notes = tools::all_notes(&engine, &target)?;
                let started = std::time::Instant::now();
                tracing::debug!("a simple search started over {} notes", notes.len());
                let mut hits: Vec<compat::SimpleHit> = Vec::new();
                for (done, (path, text)) in notes.iter().enumerate() {
                    if cancel.client_left("a simple search", done, notes.len(), started) {
                        return Ok(Vec::new());
                    }
                    hits.extend(compat::simple_matches(path, text, &query_text, context));
                }
                let rank = |path: &str| ranked.iter().position(|p| p == path).unwrap_or(usize::MAX);
                hits.sort_by(|a, b| {
                    rank(&a.filename)
                        .cmp(&rank(&b.filename))
                        .then(b.matches.len().cmp(&a.matches.len()))
                        .then(a.filename.cmp(&b.filename))
                });
                let n = hits.len();
                // Highest first, as the plugin's clients sort: the order above as a score.
                Ok(hits
                    .into_iter()
                    .enumerate()
                    .map(|(i, hit)| hit.into_json((n - i) as f64 / n as f64))
                    .collect::<Vec<_>>())
            })
            .await?;
            Ok(json_body(Value::Array(found)))
        }
        .await,
    )
}

/// Every note of the addressed vault with its text and times, off the async workers.
async fn notes_with_times(
    engine: Arc<Engine>,
    target: Target,
) -> Result<Vec<(String, String, compat::Stat)>> {
    blocking(move || {
        let notes = tools::all_notes(&engine, &target)?;
        Ok(notes
            .into_iter()
            .map(|(path, text)| {
                let stat = tools::file_times(&engine, &target, &path)
                    .map(|t| compat::Stat { ctime: t.ctime_ms, mtime: t.mtime_ms, size: t.size })
                    .unwrap_or(compat::Stat { ctime: 0, mtime: 0, size: text.len() as u64 });
                (path, text, stat)
            })
            .collect())
    })
    .await
}

/// `POST /search/` with a JsonLogic query (`application/vnd.olrapi.jsonlogic+json`) run over
/// every note's path, content, frontmatter, tags and stat.
pub(super) async fn logic_search_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    headers: HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    finish(
        async {
            let declared = header_str(&headers, "content-type")?.ok_or_else(|| {
                bad("send the query with Content-Type application/vnd.olrapi.jsonlogic+json")
                    .with_compat(compat::ERR_CONTENT_TYPE_MISSING)
            })?;
            let media = declared.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            if media != "application/vnd.olrapi.jsonlogic+json" {
                return Err(bad(format!(
                    "/search/ takes JsonLogic (Content-Type application/vnd.olrapi.jsonlogic+json), not {media}; Dataview queries need the Obsidian app, and /search?q= is the ranked text search"
                ))
                .with_compat(compat::ERR_CONTENT_TYPE_INVALID));
            }
            let raw = body_text(&app.engine, body)?;
            let rule: Value = serde_json::from_str(&raw).map_err(|e| {
                bad(format!("the JsonLogic query is not JSON: {e}"))
                    .with_compat(compat::ERR_CONTENT_TYPE_INVALID)
            })?;
            let notes = notes_with_times(app.engine.clone(), target).await?;
            // Dropped with this future, so a client that leaves stops the evaluation too.
            let cancel = crate::api::logic::Cancel::default();
            let _stop_when_gone = cancel.on_drop();
            blocking(move || {
                let data: Vec<(String, Value)> = notes
                    .iter()
                    .map(|(p, text, stat)| (p.clone(), compat::logic_data(p, text, *stat)))
                    .collect();
                crate::api::logic::search(&rule, &data, crate::api::logic::BUDGET, &cancel)
            })
            .await
            .map(|hits| json_body(Value::Array(hits)))
        }
        .await,
    )
}

/// `POST /reindex[?vault=NAME|all][&full]`: the two may come in the query string or as a JSON
/// body `{"vault": "...", "full": true}` (a script's HTTP node sends either).
pub(super) async fn reindex_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    let args = match reindex_args(&app.engine, &query, body) {
        Ok(a) => a,
        Err(e) => return refusal(&e),
    };
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::reindex(&engine, &target, args))
            .await
            .map(|reports| json_body(wire::reindexed(&reports))),
    )
}

/// `vault` and `full` from the query string and a JSON body, either or both; a field in the
/// body wins over the same field in the query, as on `POST /search`.
fn reindex_args(
    engine: &Engine,
    query: &Option<String>,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<tools::ReindexArgs> {
    let q = pairs(query)?;
    let (vault, full) = reindex_body(&body_text(engine, body)?)?;
    Ok(tools::ReindexArgs {
        vault: vault.or_else(|| param(&q, "vault").map(str::to_string)),
        full: full.unwrap_or_else(|| flag(&q, "full")),
    })
}

/// `vault` and `full` of a `/reindex` JSON body; an empty body gives neither. `full` may be a
/// boolean or a flag's text (`"true"`, `"1"`), as in the query string.
fn reindex_body(text: &str) -> Result<(Option<String>, Option<bool>)> {
    if text.trim().is_empty() {
        return Ok((None, None));
    }
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(text) else {
        return Err(bad(
            "the /reindex body must be a JSON object such as {\"vault\": \"notes\", \"full\": \
             true}, or empty, with ?vault= and ?full in the query string",
        ));
    };
    let (mut vault, mut full) = (None, None);
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("vault" | "full", Value::Null) => {}
            ("vault", Value::String(v)) => vault = Some(v),
            ("full", Value::Bool(b)) => full = Some(b),
            ("full", Value::String(v)) => full = Some(flag(&[(key, v)], "full")),
            ("vault" | "full", other) => {
                return Err(bad(format!(
                    "{key} in the /reindex body is {other}; send vault as a name and full as \
                     true or false"
                )));
            }
            (other, _) => {
                return Err(bad(format!(
                    "/reindex takes vault and full, not {other:?}; send {{\"vault\": \"notes\", \
                     \"full\": true}}"
                )));
            }
        }
    }
    Ok((vault, full))
}
