//! The readiness report `/readyz` answers: one body shape for 200 and 503, built from the
//! engine's status (the index phase, whether the index keeps up, the watcher, index.md and the
//! store).

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::guard::refusal;
use crate::engine::{Engine, Phase};
use crate::error::{Error, ErrorCode};
use crate::wire;

/// `GET /readyz`: 200 when ready, else 503, with the same body.
pub(super) async fn answer(engine: Arc<Engine>, uptime_seconds: f64) -> Response {
    // The store query can wait on a sync's transaction: off the async workers.
    let Ok((ready, body)) =
        tokio::task::spawn_blocking(move || readiness(&engine, uptime_seconds)).await
    else {
        return refusal(&Error::new(ErrorCode::InternalError, "the readiness check failed"));
    };
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, axum::Json(body)).into_response()
}

/// The readiness report: one body shape for 200 and 503.
pub(crate) fn readiness(engine: &Engine, uptime_seconds: f64) -> (bool, wire::Readiness) {
    let s = engine.status();
    let ready = s.phase == Phase::Ready && s.store_ok;
    // A failing index.md (a hand-written one in the way, say) degrades the server but does
    // not make it unready: search and the note verbs are unaffected.
    let index_md = engine.index_md_status();
    let watching = s.watching || !s.owner;
    // An index that cannot take changes (a full data directory) still answers searches, from
    // what it had: degraded, not unready.
    let keeping_up = s.behind.is_none();
    let status = match (ready, watching && keeping_up && index_md.iter().all(|(_, st)| st.ok)) {
        (true, true) => "ready",
        (true, false) => "degraded",
        _ => s.phase.as_str(),
    };
    let round = |x: f64, p: f64| (x * p).round() / p;
    let body = wire::Readiness {
        status,
        version: env!("CARGO_PKG_VERSION"),
        revision: option_env!("MDVAULT_REVISION").unwrap_or("unknown"),
        uptime_seconds: round(uptime_seconds, 10.0),
        vaults: engine
            .vaults()
            .iter()
            .map(|v| wire::ReadyVault {
                name: v.name().to_string(),
                root: v.root().display().to_string(),
            })
            .collect(),
        index: wire::ReadyIndex {
            ok: s.phase == Phase::Ready,
            phase: s.phase.as_str(),
            building: s.phase == Phase::Building,
            attempts: s.attempts,
            error: s.error,
            files: s.files,
            chunks: s.chunks,
            vectors: s.vectors,
            built_at: s.built_at,
            build_seconds: s.build_seconds.map(|x| round(x, 100.0)),
            model: engine.index().embedder().model_id().to_string(),
            progress: s.progress,
            behind: s.behind.is_some(),
            behind_error: s.behind,
        },
        watcher: wire::ReadyWatcher { ok: s.watching },
        // A reader searches the index another mdvault process keeps (and watches for).
        indexer: wire::ReadyIndexer { owner: s.owner },
        index_md: wire::ReadyIndexMd {
            enabled: engine.config().index.index_md,
            vaults: index_md
                .into_iter()
                .map(|(vault, st)| wire::ReadyIndexMdVault {
                    vault,
                    ok: st.ok,
                    scanned: st.scanned,
                    entries: st.entries,
                    error: st.error,
                })
                .collect(),
        },
        store: wire::ReadyStore {
            ok: s.store_ok,
            path: engine.index().store().path().display().to_string(),
        },
    };
    (ready, body)
}
