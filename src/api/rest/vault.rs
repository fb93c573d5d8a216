//! The note routes: every verb on `/vault/<path>` (GET and HEAD reads in each form `accept.rs`
//! names, PUT, POST, PATCH, DELETE, and the Local REST API's MOVE and COPY with
//! `Destination`), `POST /move/<path>`, and `/periodic/`, which `periodic.rs` resolves to a
//! note and hands back to the `/vault/` route.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::{App, finish, method_not_allowed, refusal};
use crate::api::accept::NoteForm;
use crate::api::common::{
    bad, blocking, body_bytes, body_text, change_response, files_only, flag, header_str, if_match,
    json_body, pairs, param, tail, text, wants_confirmation, wants_json, with_etag, write_response,
};
use crate::api::compat;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use crate::wire;

/// `/vault/<path>`: every note verb.
pub(super) async fn vault_route(
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
        "PUT" | "POST" if crate::api::patch::targets_part(&path, &headers) => {
            let op = if method == Method::PUT { "replace" } else { "append" };
            crate::api::patch::route(engine, target, path, &headers, body, Some(op)).await
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
        "PATCH" if crate::api::patch::is_mdvault_kind(&headers) => {
            patch_route(engine, target, path, &headers, body).await
        }
        "PATCH" => crate::api::patch::route(engine, target, path, &headers, body, None).await,
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
pub(super) async fn periodic_route(
    State(app): State<App>,
    Extension(target): Extension<Target>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: std::result::Result<Bytes, BytesRejection>,
) -> Response {
    use crate::api::periodic;
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
    // An attachment is its bytes, whatever the Accept: it has no note forms.
    if crate::vault::attachment::kind_of(&path).is_some() {
        return attachment(engine, target, path, headers).await;
    }
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    if flag(q, "map") {
        let a = tools::MapArgs { vault: None, path };
        let m = blocking(move || tools::map(&engine, &target, a)).await?;
        return Ok(with_etag(json_body(wire::map(&m)), Some(&m.etag)));
    }
    let form = crate::api::accept::note_form(headers);
    // A canvas is its JSON, as the plugin serves every file that is not a note and as its
    // clients parse it; its reading text is the JSON and HTML forms' `content`.
    if crate::vault::canvas::is_canvas(&path)
        && form == NoteForm::Markdown
        && !q.iter().any(|(k, _)| k == "section")
    {
        let c = blocking(move || tools::read_canvas_source(&engine, &target, None, &path)).await?;
        let resp = ([(header::CONTENT_TYPE, "application/json")], c.json).into_response();
        return Ok(with_etag(resp, Some(&c.etag)));
    }
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
            json_body(wire::VaultListing {
                listing: wire::listing(&l),
                files: compat::listing_files(&l),
            })
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
            map["version"] = serde_json::Value::from(r.etag.as_str());
        }
        let mut resp = json_body(map);
        if v1 {
            resp.headers_mut()
                .insert("deprecation", HeaderValue::from_static(compat::DEPRECATED_1X));
        }
        return Ok(with_etag(resp, Some(&r.etag)));
    }
    if let Some(resp) =
        crate::api::patch::read(engine.clone(), target.clone(), &path, headers).await?
    {
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
            let (e3, t3, p3) = (engine.clone(), target.clone(), r.path.clone());
            let page = blocking(move || {
                let body = crate::vault::frontmatter::split(&r.content).1;
                let shown = crate::api::render::Shown::note(body);
                let find = |keys: &[_]| tools::embeds(&e3, &t3, None, &p3, keys);
                let gathered = crate::api::render::gather(&shown, &find)?;
                Ok(compat::html(&r.content, &gathered.found))
            })
            .await?;
            let resp = (
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                    (header::CONTENT_SECURITY_POLICY, crate::api::sanitize::HTML_CSP),
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

/// An attachment's bytes, whole or the range a player asks for (`api::ranges`).
async fn attachment(
    engine: Arc<Engine>,
    target: Target,
    path: String,
    headers: &HeaderMap,
) -> Result<Response> {
    let asked = crate::api::ranges::Asked::from_headers(headers);
    let read = blocking(move || {
        tools::read_attachment_span(&engine, &target, None, &path, |e| asked.span(e))
    })
    .await?;
    Ok(crate::api::ranges::answer(read, headers, crate::api::guard::refusal))
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

/// `POST /move/<path>` with `{"destination", "update_links"}` (or the same as query fields).
pub(super) async fn move_route(
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
