//! The REST surface: routes shaped like the Obsidian Local REST API, plus health and search.
//!
//! Every vault verb builds the argument struct of `crate::service` and calls the same function MCP
//! calls; this module only translates HTTP (path, query flags, `Accept`, `If-Match`, the PATCH
//! headers, raw bodies) and renders the outcome as text or JSON. Every refusal is
//! `{"code","error"}` with the code's status; a 404 means a missing note, vault or route and
//! nothing else.
//!
//! Routes (also `/v/<name>/...` for a named vault, see `guard.rs`):
//! `/vault/<path>` (GET, PUT, POST, PATCH, DELETE, and MOVE and COPY with `Destination`),
//! `/folder/<path>` (GET, PUT, DELETE), `/move/<path>` (POST), `/search` (GET, POST),
//! `/reindex` (POST), `/status`, the upkeep routes (`/frontmatter`, `/expiries`, `/callouts`,
//! `/maintenance`, `/maintenance/checks`), `/healthz`, `/readyz`, `/openapi.yaml`, the periodic
//! notes (`/periodic/`, `periodic.rs`, which hands each request back to `/vault/`), and MCP at
//! `/mcp` and `/mcp/only/<scope>`.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Extension, FromRequest, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tower::ServiceExt;

use super::accept::NoteForm;
use super::common::{
    bad, blocking, body_bytes, body_text, change_response, files_only, flag, header_str, if_match,
    json_body, pairs, param, tail, text, too_large, wants_confirmation, wants_json, with_etag,
    write_response,
};
use super::compat;
use super::limits::Searches;
use super::mcp::VaultMcp;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use crate::wire;

/// The OpenAPI document, served at `/openapi.yaml` and checked against this router by tests.
pub const OPENAPI: &str = include_str!("../../openapi.yaml");

/// Where the plugin serves its certificate, and so does mdvault under `server.tls`.
pub const CERTIFICATE_PATH: &str = "/obsidian-local-rest-api.crt";

/// Every documented route and its methods, as `openapi.yaml` spells the path. The router
/// below registers exactly these (plus `HEAD` beside `GET`, the Local REST API's `MOVE` and `COPY` verbs
/// on `/vault/{path}`); the contract test holds the document,
/// this table and the live server to each other. A named vault answers every route under
/// `/v/{vault}` as well.
pub const ROUTES: &[(&str, &[&str])] = &[
    ("/", &["get"]),
    ("/tags/", &["get"]),
    ("/periodic/{period}/", &["get", "put", "post", "patch", "delete"]),
    ("/periodic/{period}/{year}/{month}/{day}/", &["get", "put", "post", "patch", "delete"]),
    ("/search/simple/", &["post"]),
    ("/search/", &["post"]),
    ("/healthz", &["get"]),
    ("/readyz", &["get"]),
    ("/openapi.yaml", &["get"]),
    ("/obsidian-local-rest-api.crt", &["get"]),
    ("/active/", &["get", "put", "post", "patch", "delete"]),
    ("/commands/", &["get"]),
    ("/commands/{commandId}/", &["post"]),
    ("/open/{path}", &["post"]),
    ("/vault/", &["get"]),
    ("/vault/{path}", &["get", "put", "post", "patch", "delete"]),
    ("/folder/{path}", &["get", "put", "delete"]),
    ("/move/{path}", &["post"]),
    ("/search", &["get", "post"]),
    ("/reindex", &["post"]),
    ("/frontmatter", &["get"]),
    ("/expiries", &["get"]),
    ("/status", &["get"]),
    ("/callouts", &["get", "post"]),
    ("/maintenance", &["get", "post"]),
    ("/maintenance/checks", &["get"]),
    ("/grep", &["get"]),
    ("/links/{path}", &["get"]),
    ("/mcp", &["post"]),
    ("/mcp/", &["post"]),
    ("/mcp/only/{scope}", &["post"]),
];

type Mcp = StreamableHttpService<VaultMcp, NeverSessionManager>;

/// Shared by every handler.
#[derive(Clone)]
pub struct App {
    engine: Arc<Engine>,
    mcp: Mcp,
    /// The search queue, shared with every MCP request's `VaultMcp`.
    searches: Searches,
    started: Instant,
    /// The public certificate served under `server.tls`, PEM (`None` over plain HTTP).
    certificate: Option<Arc<str>>,
}

pub use super::guard::refusal;

/// The methods [`ROUTES`] documents for a concrete path, as an `Allow` value.
fn allowed_for(path: &str) -> String {
    let matches = |template: &str| match template.split_once('{') {
        Some((prefix, _)) => path.starts_with(prefix) && path.len() > prefix.len(),
        None => path == template,
    };
    let mut methods: Vec<String> = ROUTES
        .iter()
        .filter(|(template, _)| matches(template))
        .flat_map(|(_, m)| m.iter().map(|m| m.to_ascii_uppercase()))
        .collect();
    if methods.iter().any(|m| m == "GET") {
        methods.push("HEAD".into());
    }
    methods.dedup();
    methods.join(", ")
}

fn method_not_allowed(method: &Method, allowed: &str) -> Response {
    let mut resp = refusal(&Error::new(
        ErrorCode::MethodNotAllowed,
        format!("{method} is not supported here; use one of {allowed}"),
    ));
    if let Ok(v) = HeaderValue::from_str(allowed) {
        resp.headers_mut().insert(header::ALLOW, v);
    }
    resp
}

fn finish(r: Result<Response>) -> Response {
    r.unwrap_or_else(|e| refusal(&e))
}

/// `/vault/<path>`: every note verb.
async fn vault_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    let path = match tail(&uri, "/vault") {
        Ok(p) => p,
        Err(e) => return refusal(&e),
    };
    // A folder (the root too) is a listing only: there is nothing to write, patch, move or
    // delete there through a file verb.
    if (path.is_empty() || path.ends_with('/')) && !matches!(method.as_str(), "GET" | "HEAD") {
        return files_only(&method);
    }
    let engine = app.engine.clone();
    let is_document =
        engine.vaults().get(target.vault.as_deref()).is_ok_and(|v| v.is_document(&path));
    finish(match method.as_str() {
        "GET" | "HEAD" => read_route(engine, target, path, &q, &headers).await,
        // A section target in the URL (or a deprecated Target-Type header) makes PUT a
        // replace and POST an append of that section, as the plugin does.
        "PUT" | "POST" if super::patch::targets_part(&path, &headers) => {
            let op = if method == Method::PUT { "replace" } else { "append" };
            super::patch::route(engine, target, path, &headers, body, Some(op)).await
        }
        // The suffix decides, never Content-Type: a `.pdf` path is an upload, a `.md` a note.
        "PUT" if is_document => {
            async {
                let bytes = body_bytes(body)?;
                let overwrite = flag(&q, "overwrite");
                let (filed, verdict) = blocking(move || {
                    tools::file_document(&engine, &target, None, &path, &bytes, overwrite)
                })
                .await?;
                let status = if filed.status == crate::vault::FilingStatus::Filed {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                };
                let mut resp = json_body(wire::upload(&filed, &verdict));
                *resp.status_mut() = status;
                Ok(with_etag(resp, Some(&filed.sha256)))
            }
            .await
        }
        "PUT" => {
            async {
                let content = body_text(&engine, body)?;
                let expected = if_match(&headers)?;
                let a = tools::WriteArgs { vault: None, path, content, overwrite: true };
                let c = blocking(move || tools::write(&engine, &target, a, expected.as_deref()))
                    .await?;
                Ok(write_response(&headers, c))
            }
            .await
        }
        "POST" => {
            async {
                // A JSON body is a structured request, not text to append: refuse rather than
                // write the JSON into the note.
                let declared = header_str(&headers, "content-type")?.unwrap_or("");
                if declared.contains("json") {
                    return Err(bad(format!(
                        "POST to a note appends text; send it as text/markdown, not {declared}"
                    ))
                    .with_compat(compat::ERR_TEXT_REQUIRED));
                }
                let content = body_text(&engine, body)?;
                let expected = if_match(&headers)?;
                let a = tools::AppendArgs { vault: None, path, content, create_if_missing: true };
                let c = blocking(move || tools::append(&engine, &target, a, expected.as_deref()))
                    .await?;
                Ok(write_response(&headers, c))
            }
            .await
        }
        "PATCH" if super::patch::is_mdvault_kind(&headers) => {
            patch_route(engine, target, path, &headers, body).await
        }
        "PATCH" => super::patch::route(engine, target, path, &headers, body, None).await,
        // A section target in the URL (or a deprecated Target-Type header) makes PUT a
        // replace and POST an append of that section, as the plugin does.
        "DELETE" => {
            async {
                let expected = if_match(&headers)?;
                let a = tools::DeleteArgs { vault: None, path, permanent: flag(&q, "permanent") };
                let c = blocking(move || tools::delete(&engine, &target, a, expected.as_deref()))
                    .await?;
                Ok(write_response(&headers, c))
            }
            .await
        }
        "MOVE" => move_verb(engine, target, path, &q, &headers).await,
        "COPY" => copy_verb(engine, target, path, &headers).await,
        _ => return method_not_allowed(&method, "GET, PUT, POST, PATCH, DELETE, MOVE, COPY"),
    })
}

/// `/periodic/<period>/[<year>/<month>/<day>/][<target>]`: the periodic note found (and, for
/// a write, started from its template) by `periodic.rs`, then served by the `/vault/` route
/// for its path, so every verb and answer is `/vault/`'s.
async fn periodic_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    use super::periodic;
    if !periodic::VERBS.contains(&method) {
        return method_not_allowed(&method, periodic::ALLOWED);
    }
    let engine = app.engine.clone();
    let prepared = match periodic::prepare(engine.clone(), &target, &method, &uri, &headers).await {
        Ok(p) => p,
        Err(e) => return refusal(&e),
    };
    let note_uri = prepared.uri.clone();
    let resp = vault_route(
        State(app),
        Extension(target.clone()),
        method,
        note_uri,
        headers,
        RawQuery(query),
        body,
    )
    .await;
    periodic::settle(engine, target, prepared, resp).await
}

/// The `Destination` of a MOVE or COPY as a vault path: `/vault/` and percent-encoding taken
/// off, and a folder (ending in `/`) completed with the source's file name.
fn destination(headers: &HeaderMap, source: &str) -> Result<String> {
    let dest = header_str(headers, "destination")?
        .filter(|d| !d.is_empty())
        .ok_or_else(|| bad("the Destination header is required: it names the new path"))?;
    let dest = dest.strip_prefix("/vault/").unwrap_or(dest);
    let mut destination = percent_encoding::percent_decode_str(dest)
        .decode_utf8()
        .map_err(|_| bad("the Destination header is not valid UTF-8 once decoded"))?
        .into_owned();
    if destination.ends_with('/') {
        destination.push_str(source.rsplit('/').next().unwrap_or(source));
    }
    Ok(destination)
}

/// `Allow-Overwrite: true`.
fn allow_overwrite(headers: &HeaderMap) -> Result<bool> {
    Ok(header_str(headers, "allow-overwrite")?
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("t")))
}

/// A taken destination, as the plugin's clients expect it: 409.
fn destination_taken(e: Error) -> Error {
    if e.code() == ErrorCode::AlreadyExists {
        Error::new(
            ErrorCode::Conflict,
            format!("{}; send Allow-Overwrite: true to replace it", e.message()),
        )
    } else {
        e
    }
}

/// `COPY /vault/<note>` with `Destination` (as for MOVE) and `Allow-Overwrite: true` to
/// replace an existing note: the note's text written at the new path (stamped like any
/// write). 204 with `Content-Location`, or the confirmation when asked for.
async fn copy_verb(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    headers: &HeaderMap,
) -> Result<Response> {
    let destination = destination(headers, &path)?;
    let overwrite = allow_overwrite(headers)?;
    let location = destination.clone();
    let c = blocking(move || {
        if destination.trim_matches('/') == path.trim_matches('/') {
            return Err(bad("COPY needs a Destination other than the note itself"));
        }
        let read = tools::ReadArgs { vault: None, path, section: None };
        let note = tools::read(&engine, &target, read)?;
        if note.extraction.is_some() {
            return Err(Error::new(
                ErrorCode::IsDocument,
                format!("{} is a filed document; COPY copies notes", note.path),
            ));
        }
        let a =
            tools::WriteArgs { vault: None, path: destination, content: note.content, overwrite };
        tools::write(&engine, &target, a, None).map_err(destination_taken)
    })
    .await?;
    Ok(with_location(write_response(headers, c), &location))
}

/// Names where a `COPY` or `MOVE` left the file (`Content-Location`), as the plugin answers.
fn with_location(mut resp: Response, location: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(header::CONTENT_LOCATION, v);
    }
    resp
}

/// `MOVE /vault/<path>` with `Destination` (a path, or a folder ending in `/` that keeps the
/// name) and `Allow-Overwrite: true` to replace an existing destination, which then goes to the
/// vault's trash first. Answered 204 with `Content-Location` naming the new path.
async fn move_verb(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    q: &[(String, String)],
    headers: &HeaderMap,
) -> Result<Response> {
    let destination = destination(headers, &path)?;
    let overwrite = allow_overwrite(headers)?;
    let expected = if_match(headers)?;
    let update_links = param(q, "update_links").is_none() || flag(q, "update_links");
    let location = destination.clone();
    let confirm = wants_confirmation(headers);
    let c = blocking(move || {
        if destination.trim_matches('/') == path.trim_matches('/') {
            // Moving a file onto itself changes nothing, once it is known to be there.
            tools::file_times(&engine, &target, &path)?;
            return Ok(None);
        }
        if overwrite && tools::file_times(&engine, &target, &destination).is_ok() {
            let a = tools::DeleteArgs { vault: None, path: destination.clone(), permanent: false };
            tools::delete(&engine, &target, a, None)?;
        }
        let a = tools::MoveArgs { vault: None, source: path, destination, update_links };
        tools::move_file(&engine, &target, a, expected.as_deref())
            .map(Some)
            .map_err(destination_taken)
    })
    .await?;
    let resp = match c {
        Some(c) if confirm => change_response(headers, c),
        Some(c) => with_etag(StatusCode::NO_CONTENT.into_response(), c.etag.as_deref()),
        None => StatusCode::NO_CONTENT.into_response(),
    };
    Ok(with_location(resp, &location))
}

async fn read_route(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    q: &[(String, String)],
    headers: &HeaderMap,
) -> Result<Response> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    if flag(q, "map") {
        let a = tools::MapArgs { vault: None, path };
        let m = blocking(move || tools::map(&engine, &target, a)).await?;
        return Ok(with_etag(json_body(wire::map(&m)), Some(&m.etag)));
    }
    let form = super::accept::note_form(headers);
    let json = wants_json(headers);
    // A listing is JSON (the plugin's `files` beside mdvault's entries) unless plain text is
    // asked for.
    let as_text = accept.contains("text/plain") && !json;
    let list = |engine: Arc<Engine>, target: Target, path: String| async move {
        let a = tools::ListArgs { vault: None, path };
        let l = blocking(move || tools::list(&engine, &target, a)).await?;
        Ok::<Response, Error>(if as_text {
            text(l.render())
        } else {
            let mut v = wire::listing(&l);
            v["files"] = json!(compat::listing_files(&l));
            json_body(v)
        })
    };
    if form == NoteForm::DocumentMap && !(path.is_empty() || path.ends_with('/')) {
        let v1 = header_str(headers, "markdown-patch-version")? == Some("1");
        let a = tools::ReadArgs { vault: None, path: path.clone(), section: None };
        // Mapped on a blocking thread like the read: a hostile note's outline is work.
        let (r, mut map) = blocking(move || {
            let r = tools::read(&engine, &target, a)?;
            let map = compat::document_map(&r.path, &r.content, v1)?;
            Ok((r, map))
        })
        .await?;
        // The 2.x map's `version` is the token a PATCH sends back as `If-Match`/`ifMatch`:
        // mdvault's etag, so the version check is the etag check.
        if !v1 {
            map["version"] = json!(r.etag);
        }
        let mut resp = json_body(map);
        if v1 {
            resp.headers_mut()
                .insert("deprecation", HeaderValue::from_static(compat::DEPRECATED_1X));
        }
        return Ok(with_etag(resp, Some(&r.etag)));
    }
    if let Some(resp) = super::patch::read(engine.clone(), target.clone(), &path, headers).await? {
        return Ok(resp);
    }
    if path.is_empty() || path.ends_with('/') {
        return list(engine, target, path).await;
    }
    let section = param(q, "section").map(str::to_string);
    let a = tools::ReadArgs { vault: None, path: path.clone(), section };
    let (e2, t2) = (engine.clone(), target.clone());
    match blocking(move || tools::read(&e2, &t2, a)).await {
        Ok(r) if form == NoteForm::PluginNote && r.extraction.is_none() => {
            let (e3, t3, p3, text3) =
                (engine.clone(), target.clone(), path.clone(), r.content.clone());
            let etag = r.etag.clone();
            let note = blocking(move || {
                let times = tools::file_times(&e3, &t3, &p3)?;
                let (links, unresolved) = tools::note_links(&e3, &t3, &p3, &text3)?;
                let stat =
                    compat::Stat { ctime: times.ctime_ms, mtime: times.mtime_ms, size: times.size };
                Ok(compat::note(&r, stat, &links, &unresolved))
            })
            .await?;
            Ok(with_etag(json_body(note), Some(&etag)))
        }
        Ok(r) if form == NoteForm::Html => {
            let etag = r.etag.clone();
            // Rendering and sanitising are CPU work: never on the server's async threads.
            let page = blocking(move || Ok(compat::html(&r.content))).await?;
            let resp = (
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                    (header::CONTENT_SECURITY_POLICY, super::sanitize::HTML_CSP),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                ],
                page,
            )
                .into_response();
            Ok(with_etag(resp, Some(&etag)))
        }
        Ok(r) => {
            // A filed document has no plugin note object: its JSON form is the note object.
            let resp = if matches!(form, NoteForm::Json | NoteForm::PluginNote) {
                json_body(wire::note(&r))
            } else {
                ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], r.content.clone())
                    .into_response()
            };
            Ok(with_etag(resp, Some(&r.etag)))
        }
        Err(e) if e.code() == ErrorCode::IsDirectory => list(engine, target, path).await,
        Err(e) => Err(e),
    }
}

/// PATCH with mdvault's own whole-note kinds, `Target-Type` body or text; the plugin's
/// heading, block and frontmatter formats are `patch.rs`.
async fn patch_route(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    headers: &HeaderMap,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Result<Response> {
    let kind = header_str(headers, "target-type")?.unwrap_or("body").to_ascii_lowercase();
    let operation = header_str(headers, "operation")?.unwrap_or("replace").to_ascii_lowercase();
    let expected = if_match(headers)?;
    let c = match kind.as_str() {
        "body" => {
            if operation != "replace" {
                return Err(bad(format!(
                    "Target-Type body only supports Operation replace; to add to the end, \
                     POST to /vault/{path} instead (operation was {operation})"
                )));
            }
            let a = tools::SetBodyArgs { vault: None, path, content: body_text(&engine, body)? };
            blocking(move || tools::set_body(&engine, &target, a, expected.as_deref())).await?
        }
        "text" => {
            #[derive(serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            struct TextEdit {
                find: String,
                replace: String,
                #[serde(default)]
                section: Option<String>,
                #[serde(default)]
                count: Option<usize>,
            }
            let raw = body_text(&engine, body)?;
            let edit: TextEdit = serde_json::from_str(&raw).map_err(|e| {
                bad(format!(
                    "Target-Type text takes a JSON body {{\"find\", \"replace\", \"section\", \
                     \"count\"}}: {e}"
                ))
            })?;
            let a = tools::ReplaceTextArgs {
                vault: None,
                path,
                find: edit.find,
                replace: edit.replace,
                section: edit.section,
                count: edit.count.unwrap_or(1),
            };
            blocking(move || tools::replace_text(&engine, &target, a, expected.as_deref())).await?
        }
        other => {
            return Err(bad(format!("unknown Target-Type {other}; use body or text")));
        }
    };
    Ok(change_response(headers, c))
}

/// `/folder/<path>`: GET lists, PUT creates (with parents), DELETE removes.
async fn folder_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    let path = match tail(&uri, "/folder") {
        Ok(p) => p,
        Err(e) => return refusal(&e),
    };
    let engine = app.engine.clone();
    finish(match method.as_str() {
        "GET" | "HEAD" => {
            async {
                let a = tools::ListArgs { vault: None, path };
                let l = blocking(move || tools::list(&engine, &target, a)).await?;
                Ok(if wants_json(&headers) {
                    json_body(wire::listing(&l))
                } else {
                    text(l.render())
                })
            }
            .await
        }
        "PUT" => {
            async {
                let a = tools::CreateFolderArgs { vault: None, path };
                Ok(change_response(
                    &headers,
                    blocking(move || tools::create_folder(&engine, &target, a)).await?,
                ))
            }
            .await
        }
        "DELETE" => {
            async {
                let a =
                    tools::DeleteFolderArgs { vault: None, path, recursive: flag(&q, "recursive") };
                Ok(change_response(
                    &headers,
                    blocking(move || tools::delete_folder(&engine, &target, a)).await?,
                ))
            }
            .await
        }
        _ => return method_not_allowed(&method, "GET, PUT, DELETE"),
    })
}

/// `POST /move/<path>` with `{"destination", "update_links"}` (or the same as query fields).
async fn move_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct MoveBody {
        destination: String,
        #[serde(default)]
        update_links: Option<bool>,
    }
    finish(
        async {
            let source = tail(&uri, "/move")?;
            let q = pairs(&query)?;
            let raw = body_text(&app.engine, body)?;
            let b = if raw.trim().is_empty() {
                MoveBody {
                    destination: param(&q, "destination")
                        .ok_or_else(|| {
                            bad("name the new path: a JSON body {\"destination\": \"...\"}")
                        })?
                        .to_string(),
                    update_links: param(&q, "update_links").map(|_| flag(&q, "update_links")),
                }
            } else {
                serde_json::from_str(&raw).map_err(|e| {
                    bad(format!("the body must be JSON {{\"destination\", \"update_links\"}}: {e}"))
                })?
            };
            let expected = if_match(&headers)?;
            let a = tools::MoveArgs {
                vault: None,
                source,
                destination: b.destination,
                update_links: b.update_links.unwrap_or(true),
            };
            let engine = app.engine.clone();
            let c = blocking(move || tools::move_file(&engine, &target, a, expected.as_deref()))
                .await?;
            Ok(change_response(&headers, c))
        }
        .await,
    )
}

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
async fn search_route(
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

/// `GET /`: the Local REST API's status object, answered with or without a key (the guard
/// lets exactly this path through and says whether the key was right).
async fn root_route(auth: Option<Extension<super::guard::Authenticated>>) -> Response {
    // The guard marks only the public path; anywhere else (`/v/<name>/`) it checked the key.
    let authenticated = auth.is_none_or(|Extension(a)| a.0);
    json_body(compat::status(authenticated))
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

/// `GET /tags/`: every tag (frontmatter and inline) with how many notes carry it.
async fn tags_route(State(app): State<App>, Extension(target): Extension<Target>) -> Response {
    let engine = app.engine.clone();
    let counted = blocking(move || {
        let notes = tools::all_notes(&engine, &target)?;
        Ok(compat::tag_counts(
            notes
                .iter()
                .map(|(_, text)| compat::note_tags(&crate::vault::frontmatter::parse(text), text)),
        ))
    });
    finish(counted.await.map(json_body))
}

/// `POST /search/simple/?query=&contextLength=`: every note that holds the query (the whole
/// query, else each of its words; ignoring case) or whose path holds it, as the plugin answers,
/// with each match in context. Ordered by mdvault's ranking: the notes the hybrid search ranks
/// among its best passages first, in that order, then the rest by how often the query occurs.
/// A client that leaves stops the scan at the next note.
async fn simple_search_route(
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
            let cancel = super::logic::Cancel::default();
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

/// `POST /search/` with a JsonLogic query (`application/vnd.olrapi.jsonlogic+json`) run over
/// every note's path, content, frontmatter, tags and stat.
async fn logic_search_route(
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
            let cancel = super::logic::Cancel::default();
            let _stop_when_gone = cancel.on_drop();
            blocking(move || {
                let data: Vec<(String, Value)> = notes
                    .iter()
                    .map(|(p, text, stat)| (p.clone(), compat::logic_data(p, text, *stat)))
                    .collect();
                super::logic::search(&rule, &data, super::logic::BUDGET, &cancel)
            })
            .await
            .map(|hits| json_body(Value::Array(hits)))
        }
        .await,
    )
}

/// `POST /reindex[?vault=NAME|all][&full]`: the two may come in the query string or as a JSON
/// body `{"vault": "...", "full": true}` (a script's HTTP node sends either).
async fn reindex_route(
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
            .map(|reports| {
                json_body(json!({
                    "vaults": reports.iter().map(|(name, r)| json!({
                        "vault": name,
                        "files_seen": r.files_seen,
                        "files_chunked": r.files_chunked,
                        "files_removed": r.files_removed,
                        "chunks_written": r.chunks_written,
                        "texts_embedded": r.texts_embedded,
                        "texts_reused": r.texts_reused,
                        "failed": r.failed.iter().map(|(p, why)| json!({"path": p, "error": why})).collect::<Vec<_>>(),
                        "seconds": (r.seconds * 100.0).round() / 100.0,
                    })).collect::<Vec<_>>()
                }))
            }),
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

async fn readyz(State(app): State<App>) -> Response {
    super::readiness::answer(app.engine.clone(), app.started.elapsed().as_secs_f64()).await
}

async fn healthz() -> Response {
    text("ok\n")
}

/// `GET /obsidian-local-rest-api.crt`: the certificate this server presents, so a client can
/// trust it (public, as in the plugin). Over plain HTTP there is none: 404 saying how to turn
/// TLS on.
async fn certificate_route(State(app): State<App>) -> Response {
    match &app.certificate {
        Some(pem) => (
            [
                (header::CONTENT_TYPE, "application/x-pem-file"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"obsidian-local-rest-api.crt\"",
                ),
            ],
            pem.to_string(),
        )
            .into_response(),
        None => refusal(&Error::new(
            ErrorCode::NotFound,
            "this server speaks plain HTTP, so it has no certificate; set server.tls: true \
             (MDVAULT_SERVER__TLS=true) to serve HTTPS with a self-signed one",
        )),
    }
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/yaml; charset=utf-8")], OPENAPI).into_response()
}

/// `GET /frontmatter?key=&value=[&dir=]`: `[{"filename"}]`, sorted by path.
async fn frontmatter_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    let (Some(key), Some(value)) = (param(&q, "key"), param(&q, "value")) else {
        return refusal(&bad(
            "the frontmatter query needs key and value, e.g. /frontmatter?key=status&value=active \
             (value may be empty: value=)",
        ));
    };
    let a = tools::FrontmatterQueryArgs {
        vault: None,
        key: key.to_string(),
        value: value.to_string(),
        dir: param(&q, "dir").map(str::to_string),
    };
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::frontmatter_query(&engine, &target, a))
            .await
            .map(|paths| json_body(wire::frontmatter_matches(&paths))),
    )
}

/// `GET /grep?pattern=...[&regex][&ignore_case][&dir=][&limit=N][&offset=N]`.
async fn grep_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    finish(
        async {
            let q = pairs(&query)?;
            let number = |name: &str| -> Result<Option<usize>> {
                match param(&q, name).map(str::trim).filter(|s| !s.is_empty()) {
                    None => Ok(None),
                    Some(s) => s
                        .parse()
                        .map(Some)
                        .map_err(|_| bad(format!("{name} must be a whole number, not {s}"))),
                }
            };
            let a = tools::GrepArgs {
                vault: None,
                pattern: param(&q, "pattern")
                    .ok_or_else(|| bad("name the text to find: ?pattern=..."))?
                    .to_string(),
                regex: flag(&q, "regex"),
                ignore_case: flag(&q, "ignore_case"),
                dir: param(&q, "dir").map(str::to_string),
                limit: number("limit")?,
                offset: number("offset")?.unwrap_or(0),
            };
            let engine = app.engine.clone();
            blocking(move || tools::grep(&engine, &target, a))
                .await
                .map(|r| json_body(wire::grep(&r)))
        }
        .await,
    )
}

/// `GET /links/{path}`: a note's outgoing links and its backlinks.
async fn links_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    uri: Uri,
) -> Response {
    finish(
        async {
            let path = tail(&uri, "/links")?;
            let a = tools::LinksArgs { vault: None, path };
            let engine = app.engine.clone();
            blocking(move || tools::links(&engine, &target, a))
                .await
                .map(|r| json_body(wire::links(&r)))
        }
        .await,
    )
}

/// `GET /status`: index coverage of every vault (of one under `/v/{vault}`).
async fn status_route(State(app): State<App>, Extension(target): Extension<Target>) -> Response {
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::status(&engine, &target, tools::StatusArgs { vault: None }))
            .await
            .map(|c| json_body(wire::status(&c))),
    )
}

/// `GET /expiries[?within=N][&untracked=1][&dir=]`.
async fn expiries_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    // An empty `within=` (a flow whose field was left blank) means no limit, as it always has;
    // the contract documents it.
    let within = match param(&q, "within").map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => match s.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                return refusal(&bad(format!(
                    "within must be a whole number of days, not {s:?}; leave it out for every \
                     date (lapsed dates are always included)"
                )));
            }
        },
    };
    let a = tools::ExpiriesArgs {
        vault: None,
        within,
        untracked: flag(&q, "untracked"),
        dir: param(&q, "dir").map(str::to_string),
    };
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::expiries(&engine, &target, a))
            .await
            .map(|r| json_body(wire::expiries(&r, within))),
    )
}

/// `GET|POST /callouts[?dir=]`.
async fn callouts_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = match pairs(&query) {
        Ok(q) => q,
        Err(e) => return refusal(&e),
    };
    let a = tools::CalloutsArgs { vault: None, dir: param(&q, "dir").map(str::to_string) };
    let engine = app.engine.clone();
    let started = Instant::now();
    finish(
        blocking(move || {
            let name = engine.vaults().get(target.vault.as_deref())?.name().to_string();
            let open = engine.config().callouts.open_types.clone();
            tools::callouts(&engine, &target, a).map(|r| (name, open, r))
        })
        .await
        .map(|(name, open, r)| {
            json_body(wire::callouts(&name, &open, &r, started.elapsed().as_millis() as u64))
        }),
    )
}

/// `GET|POST /maintenance`: every check's findings and one Markdown rendering of them. 200
/// whatever the findings say; only a run that itself breaks is a 500.
async fn maintenance_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
) -> Response {
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::maintenance(&engine, &target, None))
            .await
            .map(|run| json_body(wire::maintenance(&run))),
    )
}

/// `GET /maintenance/checks`: the declarations, nothing run.
async fn checks_route(State(app): State<App>, Extension(target): Extension<Target>) -> Response {
    let engine = app.engine.clone();
    finish(
        blocking(move || tools::checks(&engine, &target, None))
            .await
            .map(|checks| json_body(wire::checks(&checks))),
    )
}

/// `/mcp` and `/mcp/only/<scope>`: the scope joins the target, then rmcp takes the request.
async fn mcp_route(
    State(app): State<App>,
    Extension(mut target): Extension<Target>,
    mut req: Request<Body>,
) -> Response {
    let path = req.uri().path().to_string();
    if let Some(rest) = path.strip_prefix("/mcp/only") {
        let scope = match percent_encoding::percent_decode_str(rest).decode_utf8() {
            Ok(s) => s.trim().trim_matches('/').to_string(),
            Err(_) => {
                return refusal(&Error::new(
                    ErrorCode::InvalidPath,
                    "the scope is not valid UTF-8 once percent-decoded",
                ));
            }
        };
        target.scope = (!scope.is_empty()).then_some(scope);
    }
    req.extensions_mut().insert(target);
    // The body is read here rather than by rmcp, so that one that stalls is answered 408
    // `request_timeout` as on every REST route (rmcp would call it a 500 of its own).
    let (parts, body) = req.into_parts();
    let read = Bytes::from_request(Request::from_parts(parts.clone(), body), &()).await;
    let bytes = match body_bytes(read) {
        Ok(b) if b.len() as u64 > app.engine.config().server.max_body_bytes => {
            return refusal(&too_large());
        }
        Ok(b) => b,
        Err(e) => return refusal(&e),
    };
    let req = Request::from_parts(parts, Body::from(bytes));
    match app.mcp.clone().oneshot(req).await {
        Ok(resp) => resp.map(Body::new),
        Err(never) => match never {},
    }
}

/// The plugin's routes that act on the Obsidian app (its active file, its commands, a window
/// to open a file in): 501 rather than the 404 of an unknown route, which the plugin's clients
/// would report as a missing note.
async fn app_only_route(method: Method, uri: Uri) -> Response {
    if !matches!(method.as_str(), "GET" | "HEAD" | "PUT" | "POST" | "PATCH" | "DELETE") {
        return method_not_allowed(&method, &allowed_for(uri.path()));
    }
    refusal(&Error::new(
        ErrorCode::NeedsObsidian,
        format!(
            "{} needs the Obsidian app, and mdvault serves the vault without it; read and write the file under /vault/<path> instead",
            uri.path()
        ),
    ))
}

async fn not_found(uri: Uri) -> Response {
    refusal(&Error::new(
        ErrorCode::NotFound,
        format!(
            "there is no route {}; see /openapi.yaml for the routes (notes live under /vault/)",
            uri.path()
        ),
    ))
}

/// The whole router: routes, limits and the MCP service, behind the guard.
/// The REST and MCP router; `searches` is the search queue, shared with the web page so that
/// one-per-core holds across every surface of the server. `certificate` is the public PEM the
/// server presents under `server.tls` (`None` over plain HTTP).
pub fn router(
    engine: Arc<Engine>,
    policy: super::guard::Policy,
    searches: Searches,
    certificate: Option<String>,
) -> Router {
    let max_body = engine.config().server.max_body_bytes as usize;
    let transport_limit =
        max_body.max(engine.config().vault.doc_max_bytes.saturating_add(1) as usize);
    let factory_engine = engine.clone();
    let factory_searches = searches.clone();
    // Stateless streamable HTTP: every POST stands alone, so a scope or vault taken from one
    // request's URL can never leak into another. Host and Origin are checked by the guard for
    // every route alike, so rmcp's own (loopback-only) host check is switched off here.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(max_body)
        .disable_allowed_hosts();
    let mcp = StreamableHttpService::new(
        move || Ok(VaultMcp::new(factory_engine.clone(), factory_searches.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let certificate = certificate.map(Arc::from);
    let app = App { engine, mcp, searches, started: Instant::now(), certificate };
    let routes = Router::new()
        .route("/", get(root_route))
        .route("/tags/", get(tags_route))
        .route("/periodic/{*rest}", any(periodic_route))
        .route("/search/simple/", post(simple_search_route))
        .route("/search/", post(logic_search_route))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/openapi.yaml", get(openapi))
        .route(CERTIFICATE_PATH, get(certificate_route))
        .route("/active/", any(app_only_route))
        .route("/commands/", get(app_only_route))
        .route("/commands/{*id}", post(app_only_route))
        .route("/open/{*path}", post(app_only_route))
        .route("/vault", any(vault_route))
        .route("/vault/", any(vault_route))
        .route("/vault/{*path}", any(vault_route))
        .route("/folder/{*path}", any(folder_route))
        .route("/move/{*path}", post(move_route))
        .route("/search", get(search_route).post(search_route))
        .route("/reindex", post(reindex_route))
        .route("/frontmatter", get(frontmatter_route))
        .route("/expiries", get(expiries_route))
        .route("/status", get(status_route))
        .route("/callouts", get(callouts_route).post(callouts_route))
        .route("/maintenance", get(maintenance_route).post(maintenance_route))
        .route("/maintenance/checks", get(checks_route))
        .route("/grep", get(grep_route))
        .route("/links/{*path}", get(links_route))
        .route("/mcp", any(mcp_route))
        .route("/mcp/", any(mcp_route))
        .route("/mcp/only/{*scope}", any(mcp_route))
        .fallback(not_found)
        .method_not_allowed_fallback(|method: Method, uri: Uri| async move {
            method_not_allowed(&method, &allowed_for(uri.path()))
        })
        .layer(DefaultBodyLimit::max(transport_limit))
        .with_state(app);
    // A layer on a router runs after that router has matched a route, so the guard (which
    // strips `/v/<name>`) sits on an outer router whose only route is the inner one.
    Router::new()
        .fallback_service(routes)
        .layer(axum::middleware::from_fn_with_state(Arc::new(policy), super::guard::gate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_lists_the_documented_methods_of_a_path() {
        assert_eq!(allowed_for("/healthz"), "GET, HEAD");
        assert_eq!(allowed_for("/search"), "GET, POST, HEAD");
        assert_eq!(allowed_for("/move/a.md"), "POST");
        assert_eq!(allowed_for("/mcp/only/Projects"), "POST");
        assert_eq!(allowed_for("/nowhere"), "");
    }

    #[test]
    fn query_flags_follow_the_predecessor() {
        let q = pairs(&Some("a&b=&c=YES&d=0&e=on+&f=maybe&g=%31".into())).unwrap();
        let set: Vec<bool> =
            ["a", "b", "c", "d", "e", "f", "g", "h"].iter().map(|n| flag(&q, n)).collect();
        assert_eq!(set, [true, true, true, false, true, false, true, false]);
    }

    #[test]
    fn a_query_parameter_given_twice_is_refused_rather_than_guessed() {
        let e = pairs(&Some("q=a&k=&k=5".into())).unwrap_err();
        assert_eq!(e.code().as_str(), "invalid_request");
        assert!(e.message().contains("k is given more than once"), "{}", e.message());
        assert_eq!(pairs(&Some("q=a&k=5".into())).unwrap().len(), 2);
    }
}
