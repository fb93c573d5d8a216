//! JSON shapes of engine results, shared by every surface that answers in JSON.
//!
//! Engine types stay free of serde so that renaming a field inside the engine can never change
//! what a client receives by accident; the wire names live here, once, and REST, MCP structured
//! output and `--json` on the CLI all use them.

use serde_json::{Value, json};

use crate::docs::Verdict;
use crate::error::Error;
use crate::vault::{Change, EntryKind, Filed, Listing, NoteMap, NoteRead};

mod bench;
pub(crate) use bench::*;

/// The Local REST API plugin's number for a missing or wrong key.
const PLUGIN_AUTH_NUMBER: u32 = 40101;

/// The plugin's `errorCode` for a refusal: the number the REST layer attached, else the
/// status times 100, which is how the plugin numbers every refusal it has no name for.
pub(crate) fn error_number(e: &Error) -> u32 {
    match e.compat() {
        Some(n) => n,
        None if e.code() == crate::error::ErrorCode::Unauthorized => PLUGIN_AUTH_NUMBER,
        None => u32::from(e.code().http_status()) * 100,
    }
}

/// A refusal: `{"code", "error", "errorCode", "message"}`.
pub(crate) fn error(e: &Error) -> Value {
    // `errorCode` and `message` are the Local REST API plugin's names, which its clients read.
    json!({
        "code": e.code().as_str(),
        "error": e.message(),
        "errorCode": error_number(e),
        "message": e.message(),
    })
}

/// A note read (whole or one section).
pub(crate) fn note(r: &NoteRead) -> Value {
    let mut v = json!({
        "vault": r.vault,
        "path": r.path,
        "content": r.content,
        "body": r.body,
        "frontmatter": r.frontmatter,
        "etag": r.etag,
    });
    if let Some(s) = &r.section {
        v["section"] = json!(s);
    }
    if let Some(e) = &r.extraction {
        v["extraction"] = verdict(e);
    }
    v
}

/// A document's extraction verdict.
pub(crate) fn verdict(v: &Verdict) -> Value {
    json!({
        "status": v.status.as_str(),
        "pages": v.pages,
        "has_text_layer": v.has_text_layer,
        "extracted_chars": v.extracted_chars,
        "detail": v.detail,
    })
}

/// An upload: what filing did and what extraction made of the bytes.
pub(crate) fn upload(f: &Filed, v: &Verdict) -> Value {
    json!({
        "vault": f.vault,
        "path": f.path,
        "sha256": f.sha256,
        "size": f.size,
        "status": f.status.as_str(),
        "extraction": v.status.as_str(),
        "pages": v.pages,
        "has_text_layer": v.has_text_layer,
        "extracted_chars": v.extracted_chars,
        "detail": v.detail,
    })
}

/// A note's map.
pub(crate) fn map(m: &NoteMap) -> Value {
    let mut v = json!({
        "vault": m.vault,
        "path": m.path,
        "document": m.extraction.is_some(),
        "frontmatter": m.frontmatter,
        "headings": m.headings.iter().map(|h| json!({
            "depth": h.depth, "text": h.text, "line": h.line, "path": h.path,
        })).collect::<Vec<_>>(),
        "etag": m.etag,
    });
    if let Some(e) = &m.extraction {
        v["extraction"] = verdict(e);
    }
    v
}

/// A folder listing.
pub(crate) fn listing(l: &Listing) -> Value {
    json!({
        "vault": l.vault,
        "path": l.path,
        "entries": l.entries.iter().map(|e| {
            let kind = match e.kind {
                EntryKind::Folder => "folder",
                EntryKind::Note => "note",
                EntryKind::Document => "document",
                EntryKind::Other => "other",
            };
            let mut v = json!({ "name": e.name, "path": e.path, "kind": kind });
            if let Some(size) = e.size { v["size"] = json!(size); }
            if let Some(m) = &e.modified { v["modified"] = json!(m); }
            v
        }).collect::<Vec<_>>(),
    })
}

/// A write's confirmation.
pub(crate) fn change(c: &Change) -> Value {
    let mut v = json!({
        "vault": c.vault,
        "path": c.path,
        "message": c.message,
        "timestamp_bumped": c.timestamp_bumped,
    });
    if let Some(e) = &c.etag {
        v["etag"] = json!(e);
    }
    if let Some(n) = c.links_rewritten {
        v["links_rewritten"] = json!(n);
    }
    if !c.folders_created.is_empty() {
        v["folders_created"] = json!(c.folders_created);
    }
    if let Some(i) = c.indexed {
        v["indexed"] = json!(i.as_str());
    }
    if let Some(d) = c.diff.as_deref().filter(|d| !d.is_empty()) {
        v["diff"] = json!(d);
    }
    if let Some(r) = &c.replaced {
        v["replaced"] = json!(r);
    }
    if !c.warnings.is_empty() {
        v["warnings"] = warnings(&c.warnings);
    }
    v
}

/// An edit's warnings as `[{"code", "message"}]`, the shape the Local REST API plugin's
/// `Markdown-Patch-Warnings` header carries too.
pub(crate) fn warnings(ws: &[crate::vault::edit::Warning]) -> Value {
    Value::Array(ws.iter().map(|w| json!({"code": w.code, "message": w.message})).collect())
}

/// A search answer; `explain` adds the per-result evidence and the constants.
pub(crate) fn search(resp: &crate::search::SearchResponse, explain: bool) -> Value {
    let results: Vec<Value> = resp
        .results
        .iter()
        .map(|h| {
            let mut v = json!({
                "vault": h.vault,
                "path": h.path,
                "heading": h.heading,
                "line": h.line,
                "excerpt": h.excerpt,
                "matched": h.matched.as_str(),
                "pinned": h.pinned,
                "document": h.document,
                "score": h.explain.score,
            });
            if explain {
                let e = &h.explain;
                v["explain"] = json!({
                    "dense_rank": e.dense_rank,
                    "lexical_rank": e.lexical_rank,
                    "rerank_rank": e.rerank_rank,
                    "dense_score": e.dense_score,
                    "lexical_score": e.lexical_score,
                    "dense_part": e.dense_part,
                    "lexical_part": e.lexical_part,
                    "fused": e.fused,
                    "weight": e.weight,
                    "relevance": e.relevance,
                    "score": e.score,
                });
            }
            v
        })
        .collect();
    let mut v = json!({ "results": results, "k": resp.k });
    if !resp.notices.is_empty() {
        v["notices"] = json!(resp.notices);
    }
    if explain {
        let e = &resp.explain;
        v["explain"] = json!({
            "mode": match e.mode {
                crate::search::Mode::Hybrid => "hybrid",
                crate::search::Mode::Lexical => "lexical",
                crate::search::Mode::Dense => "dense",
            },
            "fusion": e.fusion.name(),
            "rrf_k": e.rrf_k,
            "sparse_weight": e.lexical_weight,
            "candidates": e.candidates,
            "document_weight": e.document_weight,
            "mmr_lambda": e.mmr_lambda,
            "per_note_cap": e.cap,
            "tokens": e.tokens,
            "rarest_df": e.rarest,
            "lookup_fired": e.lookup_fired,
            "rerank": e.rerank.to_string(),
        });
    }
    v
}

/// `/frontmatter` matches, in the predecessor's shape: `[{"filename"}]`.
pub(crate) fn frontmatter_matches(paths: &[String]) -> Value {
    Value::Array(paths.iter().map(|p| json!({ "filename": p })).collect())
}

/// `/status`: per vault, what is searchable, what is not and why.
pub(crate) fn status(report: &crate::index::coverage::Report) -> Value {
    json!(report)
}

/// `/expiries`: live dates oldest first, dismissals, untracked notes and malformed entries.
pub(crate) fn expiries(r: &crate::upkeep::expiries::Report, within: Option<i64>) -> Value {
    let mut untracked = json!({ "count": r.untracked_count });
    if let Some(list) = &r.untracked {
        untracked["notes"] = json!(list);
    }
    json!({
        "today": r.today.to_string(),
        "within": within,
        "notes_scanned": r.notes_scanned,
        "lapsed": r.lapsed,
        "entries": r.entries.iter().map(|e| json!({
            "note": e.note,
            "date": e.date.to_string(),
            "what": e.what,
            "days": e.days,
            "lapsed": e.days < 0,
        })).collect::<Vec<_>>(),
        "dismissed": r.dismissed.iter().map(|d| json!({ "note": d.note, "reason": d.reason }))
            .collect::<Vec<_>>(),
        "untracked": untracked,
        "malformed": r.malformed.iter().map(|m| json!({ "note": m.note, "problem": m.problem }))
            .collect::<Vec<_>>(),
    })
}

/// `/callouts`: the open callouts, most urgent first, with counts.
pub(crate) fn callouts(
    vault: &str,
    open_types: &[String],
    r: &crate::upkeep::callouts::Report,
    duration_ms: u64,
) -> Value {
    json!({
        "vault": vault,
        "generated": crate::vault::now_timestamp(),
        "open_types": open_types,
        "counts": {
            "callouts": r.callouts.len(),
            "notes_with_callouts": r.notes_with_callouts,
            "notes_scanned": r.notes_scanned,
            "all_types": r.total,
            "by_type": r.by_type,
        },
        "callouts": r.callouts.iter().map(|c| json!({
            "note": c.note,
            "line": c.line,
            "type": c.kind,
            "written_type": c.written,
            "severity": c.severity.as_str(),
            "title": c.title,
            "body": c.body,
            "fold": c.fold.as_str(),
            "depth": c.depth,
        })).collect::<Vec<_>>(),
        "duration_ms": duration_ms,
        "source": r.script.as_deref().unwrap_or("builtin"),
    })
}

/// `mdvault tags --json`: the tags in tree order (each with its nesting `depth`) and, for a tag
/// asked for, the notes under it with their tags there.
pub(crate) fn tags(vault: &str, r: &crate::vault::tags::TagReport) -> Value {
    json!({
        "vault": vault,
        "tag": r.tag,
        "notes_scanned": r.notes_scanned,
        "tags": r.tags.iter().map(|t| json!({"name": t.name, "count": t.count, "depth": t.depth()}))
            .collect::<Vec<_>>(),
        "notes": r.notes.iter().map(|(path, tags)| json!({"path": path, "tags": tags}))
            .collect::<Vec<_>>(),
    })
}

/// A tag's rename: what was renamed, and every changed note with its count of replaced tags.
pub(crate) fn tag_renamed(r: &crate::vault::TagRenamed) -> Value {
    json!({
        "vault": r.vault,
        "from": r.from,
        "to": r.to,
        "dry_run": r.dry_run,
        "notes_scanned": r.notes_scanned,
        "replaced": r.replaced(),
        "notes": r.notes.iter().map(|(path, n)| json!({"path": path, "replaced": n}))
            .collect::<Vec<_>>(),
        "message": r.render().lines().next().unwrap_or_default(),
    })
}

/// `/maintenance`: the run (the findings contract's own JSON), its summary, the exit status
/// the contract gives it, and the Markdown rendering of the same findings.
pub(crate) fn maintenance(run: &crate::upkeep::findings::Run) -> Value {
    let mut v = serde_json::to_value(run).unwrap_or_else(|_| json!({}));
    v["summary"] = serde_json::to_value(run.summary()).unwrap_or_default();
    v["exit_code"] = json!(run.exit_code());
    v["markdown"] = json!(run.markdown());
    v
}

/// `/maintenance/checks`: every check's declaration and origin.
pub(crate) fn checks(checks: &[crate::upkeep::CheckInfo]) -> Value {
    let list: Vec<Value> = checks
        .iter()
        .map(|c| {
            let d = &c.declaration;
            let mut v = json!({
                "check": d.check,
                "title": d.title,
                "description": d.description,
                "order": d.order,
                "schema": d.schema,
                "legacy": c.legacy,
            });
            match &c.source {
                crate::upkeep::findings::Source::Builtin => v["source"] = json!("builtin"),
                crate::upkeep::findings::Source::Script { script } => {
                    v["source"] = json!("script");
                    v["script"] = json!(script);
                }
            }
            if c.replaces_builtin {
                v["replaces_builtin"] = json!(true);
            }
            if let Some(p) = &c.problem {
                v["problem"] = json!(p);
            }
            v
        })
        .collect();
    json!({ "checks": list })
}

/// `/grep`: one page of matching lines and the count of all.
pub(crate) fn grep(r: &crate::upkeep::survey::GrepReport) -> Value {
    json!({
        "pattern": r.pattern,
        "regex": r.regex,
        "total": r.total,
        "files": r.files,
        "offset": r.offset,
        "hits": r.hits.iter().map(|h| json!({
            "path": h.path,
            "line": h.line,
            "text": h.text,
            "document": h.document,
        })).collect::<Vec<_>>(),
    })
}

/// `/links/{path}`: outgoing links (resolved or broken) and backlinks.
pub(crate) fn links(r: &crate::upkeep::survey::LinkReport) -> Value {
    json!({
        "path": r.path,
        "outgoing": r.outgoing.iter().map(|l| json!({
            "line": l.line,
            "target": l.target,
            "fragment": l.fragment,
            "resolved": l.resolved,
            "external": l.external,
        })).collect::<Vec<_>>(),
        "backlinks": r.backlinks.iter().map(|b| json!({
            "from": b.from,
            "line": b.line,
            "written": b.written,
        })).collect::<Vec<_>>(),
    })
}

/// `mdvault sessions list --json`: the web page's live sessions, each by its short id (a
/// prefix of the stored hash; the secret is never stored, so never shown).
pub(crate) fn sessions(list: &[crate::auth::sessions::Session]) -> Value {
    let list: Vec<Value> = list
        .iter()
        .map(|s| {
            json!({
                "id": s.id(),
                "created": crate::auth::utc(s.created),
                "last_seen": crate::auth::utc(s.last_seen),
                "expires": crate::auth::utc(s.expires),
                "remote": s.remote,
                "user_agent": s.user_agent,
            })
        })
        .collect();
    json!({ "sessions": list })
}

/// `mdvault token list --json`: the clients and their grants, never a token.
pub(crate) fn clients(list: &[crate::auth::clients::Client]) -> Value {
    let list: Vec<Value> = list
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "kind": c.kind,
                "app": c.app,
                "created": crate::auth::utc(c.created),
                "revoked": c.revoked.map(crate::auth::utc),
                "grant": c.grant,
            })
        })
        .collect();
    json!({ "clients": list })
}

/// The audit trail's rows, newest first (`mdvault audit --json`, `GET /audit`): each
/// `{"at", "client", "vault", "path", "to", "kind"}`, `at` in UTC and `to` null but for a move.
pub(crate) fn audit(rows: &[crate::auth::audit::Entry]) -> Value {
    let list: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "at": crate::auth::utc(r.at),
                "client": r.client,
                "vault": r.vault,
                "path": r.path,
                "to": r.to,
                "kind": r.kind,
            })
        })
        .collect();
    json!({ "entries": list })
}

/// `mdvault token create --json`: the client made and its token, shown this once.
pub(crate) fn token_made(client: &crate::auth::clients::Client, token: &str) -> Value {
    json!({ "name": client.name, "token": token, "grant": client.grant })
}

// ---- REST answers as typed shapes --------------------------------------------------------
// The REST routes' own answers, as `#[derive(Serialize)]` structs rather than `json!`: a
// field's place in its struct is its key's place in the body, and an `Option` without
// `skip_serializing_if` is `null` when absent, so each reads as the body it writes.

/// A folder listing read at `/vault/<folder>/`: [`listing`]'s object with the Local REST API
/// plugin's `files` (its names, a folder's ending in `/`) after mdvault's entries.
#[derive(serde::Serialize)]
pub(crate) struct VaultListing {
    #[serde(flatten)]
    pub(crate) listing: Value,
    pub(crate) files: Vec<String>,
}

/// `POST /reindex`: what each vault's pass did.
#[derive(serde::Serialize)]
pub(crate) struct Reindexed<'a> {
    pub(crate) vaults: Vec<ReindexedVault<'a>>,
}

/// One vault's pass in [`Reindexed`].
#[derive(serde::Serialize)]
pub(crate) struct ReindexedVault<'a> {
    pub(crate) vault: &'a str,
    pub(crate) files_seen: usize,
    pub(crate) files_chunked: usize,
    pub(crate) files_removed: usize,
    pub(crate) chunks_written: usize,
    pub(crate) texts_embedded: usize,
    pub(crate) texts_reused: usize,
    pub(crate) failed: Vec<FailedFile<'a>>,
    /// Rounded to hundredths.
    pub(crate) seconds: f64,
}

/// A file a pass could not index, and why.
#[derive(serde::Serialize)]
pub(crate) struct FailedFile<'a> {
    pub(crate) path: &'a str,
    pub(crate) error: &'a str,
}

/// `POST /reindex`'s answer for the passes run, one per vault.
pub(crate) fn reindexed(reports: &[(String, crate::index::SyncReport)]) -> Reindexed<'_> {
    let vaults = reports
        .iter()
        .map(|(name, r)| ReindexedVault {
            vault: name,
            files_seen: r.files_seen,
            files_chunked: r.files_chunked,
            files_removed: r.files_removed,
            chunks_written: r.chunks_written,
            texts_embedded: r.texts_embedded,
            texts_reused: r.texts_reused,
            failed: r.failed.iter().map(|(path, error)| FailedFile { path, error }).collect(),
            seconds: (r.seconds * 100.0).round() / 100.0,
        })
        .collect();
    Reindexed { vaults }
}

/// `GET /readyz`: one body for 200 (ready) and 503 (not yet, or failed).
#[derive(serde::Serialize)]
pub(crate) struct Readiness {
    /// `ready`, `degraded`, or the index phase while not ready.
    pub(crate) status: &'static str,
    pub(crate) version: &'static str,
    pub(crate) revision: &'static str,
    pub(crate) uptime_seconds: f64,
    pub(crate) vaults: Vec<ReadyVault>,
    pub(crate) index: ReadyIndex,
    pub(crate) watcher: ReadyWatcher,
    /// A reader searches the index another mdvault process keeps (and watches for).
    pub(crate) indexer: ReadyIndexer,
    pub(crate) index_md: ReadyIndexMd,
    pub(crate) store: ReadyStore,
}

/// A configured vault in [`Readiness`].
#[derive(serde::Serialize)]
pub(crate) struct ReadyVault {
    pub(crate) name: String,
    pub(crate) root: String,
}

/// The index in [`Readiness`].
#[derive(serde::Serialize)]
pub(crate) struct ReadyIndex {
    pub(crate) ok: bool,
    pub(crate) phase: &'static str,
    pub(crate) building: bool,
    pub(crate) attempts: u32,
    pub(crate) error: Option<String>,
    pub(crate) files: u64,
    pub(crate) chunks: u64,
    pub(crate) vectors: u64,
    pub(crate) built_at: Option<String>,
    pub(crate) build_seconds: Option<f64>,
    pub(crate) model: String,
    pub(crate) progress: Option<crate::index::PassProgress>,
    pub(crate) behind: bool,
    pub(crate) behind_error: Option<String>,
}

/// Whether file watching runs, in [`Readiness`].
#[derive(serde::Serialize)]
pub(crate) struct ReadyWatcher {
    pub(crate) ok: bool,
}

/// Whether this process writes the index, in [`Readiness`].
#[derive(serde::Serialize)]
pub(crate) struct ReadyIndexer {
    pub(crate) owner: bool,
}

/// The generated `index.md` pages in [`Readiness`].
#[derive(serde::Serialize)]
pub(crate) struct ReadyIndexMd {
    pub(crate) enabled: bool,
    pub(crate) vaults: Vec<ReadyIndexMdVault>,
}

/// One vault's `index.md` in [`ReadyIndexMd`].
#[derive(serde::Serialize)]
pub(crate) struct ReadyIndexMdVault {
    pub(crate) vault: String,
    pub(crate) ok: bool,
    pub(crate) scanned: bool,
    pub(crate) entries: usize,
    pub(crate) error: Option<String>,
}

/// The store in [`Readiness`].
#[derive(serde::Serialize)]
pub(crate) struct ReadyStore {
    pub(crate) ok: bool,
    pub(crate) path: String,
}

// ---------------------------------------------------------------------------------------------
// The CLI's own `--json` reports (doctor, model list, eval, bench, bench --load) and the MCP
// client entries `migrate` prints. Typed, so a report's keys, nesting and nulls are read here
// rather than scattered through the commands that fill them. Field order is key order.
// ---------------------------------------------------------------------------------------------

use serde::Serialize;

/// Serializes `(key, value)` pairs as an object in their order (a label-keyed map whose order
/// is the order things were measured in).
pub(crate) fn pairs_as_object<S: serde::Serializer, T: Serialize>(
    pairs: &[(String, T)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// `mdvault doctor --json`.
#[derive(Debug, Serialize)]
pub(crate) struct DoctorReport {
    /// No check failed (warnings allowed).
    pub(crate) ok: bool,
    pub(crate) checks: Vec<DoctorCheck>,
}

/// One doctor check; `fix` is null when there is nothing to do.
#[derive(Debug, Serialize)]
pub(crate) struct DoctorCheck {
    /// `ok`, `warn` or `fail`.
    pub(crate) level: String,
    pub(crate) area: &'static str,
    pub(crate) what: String,
    pub(crate) fix: Option<String>,
}

/// `mdvault model list --json`.
#[derive(Debug, Serialize)]
pub(crate) struct ModelList {
    pub(crate) models: Vec<ModelRow>,
    /// The model the index's vectors were made with; null without an index.
    pub(crate) index_model: Option<String>,
}

/// One embedding model `model list` knows of; `dims` is null when a folder does not say.
#[derive(Debug, Serialize)]
pub(crate) struct ModelRow {
    pub(crate) name: String,
    pub(crate) backend: &'static str,
    /// A folder, a URL, or a description of the built-in embedder.
    pub(crate) location: String,
    pub(crate) dims: Option<usize>,
    pub(crate) state: String,
    pub(crate) active: bool,
}

/// `mdvault eval --json`.
#[derive(Debug, Serialize)]
pub(crate) struct EvalReport {
    /// The query set's name.
    pub(crate) queries: String,
    pub(crate) count: usize,
    pub(crate) k: usize,
    pub(crate) embedder: String,
    /// The local model's arithmetic (`amx`, `int8`, `bf16`, `f32`); absent for other embedders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) encoder: Option<&'static str>,
    pub(crate) vaults: Vec<String>,
    pub(crate) modes: Vec<EvalMode>,
    pub(crate) leaks: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) baseline: Option<EvalBaseline>,
}

/// One mode's figures in `eval --json`.
#[derive(Debug, Serialize)]
pub(crate) struct EvalMode {
    pub(crate) mode: &'static str,
    pub(crate) summary: EvalSummary,
    pub(crate) latency_ms: Latency,
    pub(crate) queries: Vec<EvalQuery>,
}

/// p50 and p95 in milliseconds.
#[derive(Debug, Serialize)]
pub(crate) struct Latency {
    pub(crate) p50: f64,
    pub(crate) p95: f64,
}

/// A mode's means: [`crate::search::eval::Summary`], with `recall100` null when no query is
/// graded (R@100 means nothing for substring judgments).
#[derive(Debug, Serialize)]
pub(crate) struct EvalSummary {
    pub(crate) scored: usize,
    pub(crate) hit1: f64,
    pub(crate) hit5: f64,
    pub(crate) hit10: f64,
    pub(crate) recall: f64,
    pub(crate) mrr10: f64,
    pub(crate) ndcg10: f64,
    pub(crate) recall100: Option<f64>,
    pub(crate) mean_max_per_note: f64,
    pub(crate) worst_max_per_note: usize,
    pub(crate) leaks: usize,
}

impl EvalSummary {
    pub(crate) fn new(s: &crate::search::eval::Summary, graded: bool) -> EvalSummary {
        EvalSummary {
            scored: s.scored,
            hit1: s.hit1,
            hit5: s.hit5,
            hit10: s.hit10,
            recall: s.recall,
            mrr10: s.mrr10,
            ndcg10: s.ndcg10,
            recall100: graded.then_some(s.recall100),
            mean_max_per_note: s.mean_max_per_note,
            worst_max_per_note: s.worst_max_per_note,
            leaks: s.leaks,
        }
    }
}

/// One query's outcome in one mode; `rank` is null for a miss, `recall100` when ungraded.
#[derive(Debug, Serialize)]
pub(crate) struct EvalQuery {
    pub(crate) id: String,
    pub(crate) arm: &'static str,
    pub(crate) scored: bool,
    pub(crate) rank: Option<usize>,
    pub(crate) mrr10: f64,
    pub(crate) ndcg10: f64,
    pub(crate) recall: f64,
    pub(crate) recall100: Option<f64>,
    pub(crate) max_per_note: usize,
    pub(crate) leaks: Vec<String>,
    /// The first three distinct notes returned.
    pub(crate) top: Vec<String>,
}

/// What `eval --json` says of a baseline: the comparison with it, or where this run was
/// recorded as the new one.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum EvalBaseline {
    Compared {
        #[serde(flatten)]
        comparison: crate::search::eval::Comparison,
        /// Set when the baseline is the vault MCP server's (read-only, informs and never fails).
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        foreign: Option<ForeignOrigin>,
    },
    Recorded {
        recorded: std::path::PathBuf,
    },
}

/// Where a foreign baseline came from, and what it was recorded with (null where it says not).
#[derive(Debug, Serialize)]
pub(crate) struct ForeignOrigin {
    pub(crate) source: &'static str,
    pub(crate) recorded_k: Option<usize>,
    pub(crate) recorded_embedder: Option<String>,
}

/// An MCP client's configuration for mdvault: `{"mcpServers": {"mdvault": ...}}`.
#[derive(Debug, Serialize)]
pub(crate) struct McpClientConfig {
    #[serde(rename = "mcpServers")]
    pub(crate) mcp_servers: McpServers,
}

#[derive(Debug, Serialize)]
pub(crate) struct McpServers {
    pub(crate) mdvault: McpServer,
}

/// How a client reaches the server: it starts `command` (stdio), or connects to `url`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum McpServer {
    Stdio { command: &'static str, args: Vec<String> },
    Http { url: String, headers: McpHeaders },
}

#[derive(Debug, Serialize)]
pub(crate) struct McpHeaders {
    #[serde(rename = "Authorization")]
    pub(crate) authorization: &'static str,
}
