//! The web page at `/ui/`: search, read, edit and the vault's health in a browser.
//!
//! One more surface over `crate::service`, like REST and MCP: every route builds the same
//! argument structs and calls the same functions, so the page can show things differently
//! but never act differently (the etag check, the write scope, link rewriting on a move and
//! the re-index after a write all live below). It renders HTML with maud (`pages`,
//! `health`), a note's Markdown through `api::render` (pulldown-cmark, then the sanitiser),
//! and keeps its sign-ins as sessions in the data directory's credentials file, one cookie
//! each (`session`). The stylesheet and the one small script are compiled into the binary;
//! the page works offline and loads nothing from elsewhere.
//!
//! The rules in front of every route (`gate`): the guard's Host and Origin checks (the same
//! function REST runs), then a live session (looked up in the credentials file on every
//! request, so a revoked one is refused at once) for everything but the sign-in form, the
//! static files and `/favicon.ico`; a write (any method but GET and HEAD) must also carry an
//! `Origin` naming this very server, because the cookie rides along on any same-site request
//! and only the Origin says which page sent it. Every answer carries a Content-Security-Policy that allows
//! no inline script, no inline style and nothing from another origin.
//!
//! It is not part of the REST contract: `openapi.yaml` does not list these routes.

pub(crate) mod audit;
pub(crate) mod bundle;
pub(crate) mod clients;
pub(crate) mod consent;
pub(crate) mod editor;
pub(crate) mod fitted;
pub(crate) mod health;
pub(crate) mod pages;
pub(crate) mod results;
pub(crate) mod session;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Extension, Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::Markup;

use super::render;

use super::guard::Policy;
use super::limits::{Images, Searches};
use super::tls::OverTls;
use crate::auth::Credentials;
use crate::auth::sessions::Revoke;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use editor::{edit, edit_form};
use session::{Current, Sessions};

/// Everything from this server, nothing inline, nothing from elsewhere. `img-src data:` is
/// absent on purpose (a sanitised note keeps no images that could beacon out anyway);
/// `media-src 'self'` plays an embedded recording from the attachment route;
/// `frame-ancestors 'none'` stops another site from framing the page to steal clicks.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self'; media-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; \
    frame-ancestors 'none'";

/// The policy of a filed document's bytes (see `file`).
const FILE_CSP: &str = "frame-ancestors 'none'";

/// How long a wrong key holds its answer back: sign-in guesses cost time, a person's typo
/// barely notices.
const FAILED_SIGN_IN_PAUSE: std::time::Duration = std::time::Duration::from_millis(400);

/// How many passages the page asks a search for: the service's own upper limit, since a
/// person scans a longer list than an agent is given.
const PAGE_K: usize = tools::MAX_K;

/// Shared by every route of the page.
#[derive(Clone)]
pub(crate) struct Web {
    engine: Arc<Engine>,
    policy: Arc<Policy>,
    sessions: Sessions,
    searches: Searches,
    /// The server's queue in front of decoding images (fitting them, `fitted.rs`).
    images: Images,
    /// The credentials file (the clients page lists and revokes clients there).
    credentials: Arc<Credentials>,
    /// OAuth's door, for the consent page; `None` when OAuth is off.
    door: Option<crate::api::oauth::Door>,
}

/// URLs of the page's routes, percent-encoded once here.
pub(crate) mod url {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

    /// Everything but unreserved characters and `/` is encoded in a query value.
    const QUERY: &AsciiSet =
        &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~').remove(b'/');

    /// A query value, encoded.
    pub(crate) fn enc(s: &str) -> String {
        utf8_percent_encode(s, QUERY).to_string()
    }

    /// A note's page.
    pub(crate) fn note(vault: &str, path: &str) -> String {
        format!("/ui/note?vault={}&path={}", enc(vault), enc(path))
    }

    /// A filed document's bytes, for the browser's own viewer.
    pub(crate) fn file(vault: &str, path: &str) -> String {
        format!("/ui/file?vault={}&path={}", enc(vault), enc(path))
    }

    /// An attachment's bytes (an image a note embeds), through the path gate.
    pub(crate) fn attachment(vault: &str, path: &str) -> String {
        format!("/ui/attachment?vault={}&path={}", enc(vault), enc(path))
    }

    /// The same query on another route (`/ui/note?...` as `/ui/edit?...`).
    pub(crate) fn with(u: &str, from: &str, to: &str) -> String {
        match u.strip_prefix(from) {
            Some(rest) => format!("{to}{rest}"),
            None => u.to_string(),
        }
    }
}

/// The page's router, mounted in front of REST by `api::serve` (its routes all start `/ui`,
/// but for `/favicon.ico`).
/// `searches` is the server's one search queue, shared with REST and MCP, and `images` its queue
/// for decoding images, shared with MCP; `credentials` is the
/// data directory's credentials file, where the sessions are kept.
pub(crate) fn router(
    engine: Arc<Engine>,
    policy: Policy,
    api_key: &str,
    searches: Searches,
    images: Images,
    credentials: Arc<Credentials>,
    door: Option<crate::api::oauth::Door>,
) -> Router {
    let sessions = Sessions::new(credentials.clone(), api_key);
    let policy = Arc::new(policy);
    let web = Web { engine, policy, sessions, searches, images, credentials, door };
    Router::new()
        .route("/ui", get(|| async { redirect("/ui/") }))
        .route("/ui/", get(home))
        .route("/ui/static/app.css", get(|h: HeaderMap| async move { bundle::CSS.answer(&h) }))
        .route("/ui/static/app.js", get(|h: HeaderMap| async move { bundle::JS.answer(&h) }))
        .route(
            "/ui/static/icon.svg",
            get(|h: HeaderMap| async move { bundle::ICON_SVG.answer(&h) }),
        )
        .route("/favicon.ico", get(|h: HeaderMap| async move { bundle::FAVICON.answer(&h) }))
        .route("/ui/login", get(login_form).post(login))
        .route("/ui/logout", post(logout))
        .route("/ui/sessions/revoke", post(revoke))
        .route("/ui/search", get(search))
        .route("/ui/note", get(note))
        .route("/ui/file", get(file))
        .route("/ui/attachment", get(attachment))
        .route("/ui/edit", get(edit_form).post(edit))
        .route("/ui/new", get(new_form).post(create))
        .route("/ui/rename", get(rename_form).post(rename))
        .route("/ui/delete", get(delete_form).post(delete))
        .route("/ui/health", get(health::overview))
        .route("/ui/audit", get(audit::trail))
        .route("/ui/clients", get(clients::list))
        .route("/ui/clients/revoke", post(clients::revoke))
        .route(consent::PATH, get(consent::form).post(consent::answer))
        .route("/ui/health/progress", get(health::progress))
        .route("/ui/health/maintenance", get(health::maintenance))
        .route("/ui/health/callouts", get(health::callouts))
        .route("/ui/health/expiries", get(health::expiries))
        .route("/ui/{*rest}", get(|| async { not_found() }).post(|| async { not_found() }))
        .layer(axum::middleware::from_fn_with_state(web.clone(), gate))
        .with_state(web)
}

/// Whether the page was reached over TLS (directly, under `server.tls`, or through a proxy
/// that says so), which decides the cookie's `Secure` flag.
fn over_tls(headers: &HeaderMap, direct: Option<Extension<OverTls>>) -> bool {
    super::guard::over_tls(headers, direct.is_some())
}

/// Whether a write came from a page of this very server: its `Origin` is `http(s)://<Host>`.
/// Stricter than REST's check (which lets requests without an Origin through and accepts
/// any loopback origin), because the browser attaches the cookie to any same-site request,
/// and a page on another port of localhost is same-site.
fn same_origin(headers: &HeaderMap) -> bool {
    let (Some(origin), Some(host)) = (
        headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
        headers.get(header::HOST).and_then(|v| v.to_str().ok()),
    ) else {
        return false;
    };
    let origin = origin.trim();
    ["http://", "https://"].iter().any(|scheme| {
        origin.strip_prefix(scheme).is_some_and(|a| a.eq_ignore_ascii_case(host.trim()))
    })
}

/// The live session the request's cookie opens, if any.
async fn signed_in(web: &Web, headers: &HeaderMap) -> Result<Option<Current>> {
    match session::from_headers(headers) {
        Some(value) => Ok(web.sessions.check(value).await?.map(Current)),
        None => Ok(None),
    }
}

/// The rules in front of every route; see the module header.
async fn gate(
    State(web): State<Web>,
    mut req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    let mut resp = match admit(&web, &mut req).await {
        None => next.run(req).await,
        Some(refused) => refused,
    };
    let h = resp.headers_mut();
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` on
    // the page's own form posts, and the write check needs the real origin. Other sites still
    // learn nothing (no note path leaves in a Referer).
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    resp
}

/// `None` admits the request (a signed-in one carries its [`Current`] session); `Some` is the
/// answer instead (a refusal or the sign-in redirect).
async fn admit(web: &Web, req: &mut Request<Body>) -> Option<Response> {
    if let Err(e) = web.policy.site_checks(req) {
        return Some(error_response(&e, false));
    }
    let write = !matches!(*req.method(), Method::GET | Method::HEAD);
    if write && !same_origin(req.headers()) {
        return Some(error_response(
            &Error::new(
                ErrorCode::Forbidden,
                "a change made through the web page must come from the page itself (its Origin \
                 header names this server); reload the page and submit again",
            ),
            false,
        ));
    }
    let path = req.uri().path();
    // `/favicon.ico` is asked for by the browser on its own, before any sign-in (and was a
    // 401 from REST's fallback).
    let public = path == "/ui"
        || path == "/ui/login"
        || path == "/favicon.ico"
        || path.starts_with("/ui/static/");
    // Every session is the owner's: under `server.owner_loopback_only` the page signs in and
    // serves only requests made on this machine (the form itself still shows, to say so).
    let signing_in = path == "/ui/login" && write;
    if (signing_in || !public)
        && let Err(e) = web.policy.check_owner_here(req)
    {
        return Some(error_response(&e, false));
    }
    if public {
        return None;
    }
    match signed_in(web, req.headers()).await {
        Ok(Some(current)) => {
            req.extensions_mut().insert(current);
            return None;
        }
        Ok(None) => {}
        // The credentials file failed: say so, by name, rather than ask for a sign-in that
        // would fail the same way.
        Err(e) => return Some(error_response(&e, false)),
    }
    if write {
        return Some(error_response(
            &Error::new(ErrorCode::Unauthorized, "the session has ended; sign in again"),
            false,
        ));
    }
    let next = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/ui/");
    Some(redirect(&format!("/ui/login?next={}", url::enc(next))))
}

fn redirect(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_string())]).into_response()
}

fn html(status: StatusCode, title: &str, signed_in: bool, body: Markup) -> Response {
    let page = pages::layout(title, signed_in, body);
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], page.into_string())
        .into_response()
}

/// A signed-in page.
fn page(title: &str, body: Markup) -> Response {
    html(StatusCode::OK, title, true, body)
}

/// A refusal as a page, with the code's status.
fn error_response(e: &Error, signed_in: bool) -> Response {
    if e.code() == ErrorCode::InternalError {
        tracing::error!("the web page answered 500 internal_error: {}", e.message());
    }
    let status =
        StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    html(status, "Error", signed_in, pages::error(e.code().as_str(), e.message()))
}

fn not_found() -> Response {
    error_response(
        &Error::new(ErrorCode::NotFound, "there is no such page; start again from the search"),
        true,
    )
}

/// Runs a blocking service call off the async workers.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(Error::new(ErrorCode::InternalError, format!("the request failed unexpectedly: {e}")))
    })
}

type Params = Query<HashMap<String, String>>;

use super::common::trimmed_param as param;

fn required<'a>(q: &'a HashMap<String, String>, name: &str) -> Result<&'a str> {
    param(q, name).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidRequest,
            format!("the page needs '{name}'; open it from a link"),
        )
    })
}

fn vault_names(web: &Web) -> Vec<String> {
    web.engine.vaults().names().iter().map(|s| s.to_string()).collect()
}

async fn home(State(web): State<Web>) -> Response {
    page("Search", pages::search(&vault_names(&web), "", "", "", None))
}

async fn login_form(Query(q): Params) -> Response {
    let next = param(&q, "next").unwrap_or("/ui/");
    html(StatusCode::OK, "Sign in", false, pages::login(next, false))
}

/// Where to go after sign-in: a page of this UI only (never another site).
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with("/ui/") && !n.starts_with("//") && !n.contains('\\') => n.into(),
        _ => "/ui/".into(),
    }
}

async fn login(
    State(web): State<Web>,
    headers: HeaderMap,
    direct_tls: Option<Extension<OverTls>>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    let next = safe_next(param(&f, "next"));
    if !web.policy.is_key(f.get("key").map(String::as_str).unwrap_or_default()) {
        tokio::time::sleep(FAILED_SIGN_IN_PAUSE).await;
        return html(StatusCode::UNAUTHORIZED, "Sign in", false, pages::login(&next, true));
    }
    let client = session::client(&headers, peer.map(|Extension(ConnectInfo(p))| p));
    let value = match web.sessions.issue(client).await {
        Ok(v) => v,
        Err(e) => return error_response(&e, false),
    };
    let mut resp = redirect(&next);
    set_cookie(&mut resp, &session::set_cookie(&value, over_tls(&headers, direct_tls)));
    resp
}

fn set_cookie(resp: &mut Response, cookie: &str) {
    if let Ok(v) = HeaderValue::from_str(cookie) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
}

/// `POST /ui/logout`: ends the session in the credentials file, so the cookie opens nothing
/// even if the browser keeps it, and clears the cookie.
async fn logout(
    State(web): State<Web>,
    headers: HeaderMap,
    direct_tls: Option<Extension<OverTls>>,
) -> Response {
    let ended = match session::from_headers(&headers) {
        Some(value) => web.sessions.end(value).await,
        None => Ok(()),
    };
    let mut resp = match ended {
        Ok(()) => redirect("/ui/login"),
        Err(e) => error_response(&e, false),
    };
    set_cookie(&mut resp, &session::clear_cookie(over_tls(&headers, direct_tls)));
    resp
}

/// `POST /ui/sessions/revoke` with `id` (a session's short id, as the health page lists it):
/// ends that session. Ending one's own is a sign-out.
async fn revoke(
    State(web): State<Web>,
    headers: HeaderMap,
    direct_tls: Option<Extension<OverTls>>,
    current: Option<Extension<Current>>,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    let id = match required(&f, "id") {
        Ok(id) => id.to_string(),
        Err(e) => return error_response(&e, true),
    };
    let ended = match web.sessions.revoke(Revoke::Prefix(id)).await {
        Ok(ended) => ended,
        Err(e) => return error_response(&e, true),
    };
    let mine = current.is_some_and(|Extension(Current(h))| ended.iter().any(|s| s.hash == h));
    if mine {
        let mut resp = redirect("/ui/login");
        set_cookie(&mut resp, &session::clear_cookie(over_tls(&headers, direct_tls)));
        return resp;
    }
    redirect("/ui/health#sessions")
}

/// `GET /ui/search?q=&vault=&folder=[&fragment=1]`: the whole page, or (for the script) the
/// hits alone.
async fn search(State(web): State<Web>, Query(q): Params) -> Response {
    let query = param(&q, "q").unwrap_or_default().to_string();
    let vault = param(&q, "vault").unwrap_or_default().to_string();
    let folder = param(&q, "folder").unwrap_or_default().to_string();
    let fragment = param(&q, "fragment").is_some();
    let results = if query.is_empty() {
        None
    } else {
        let outcome = match web.searches.enter().await {
            Ok(turn) => {
                let engine = web.engine.clone();
                let args = tools::SearchArgs {
                    query: query.clone(),
                    k: Some(PAGE_K),
                    prefix: (!folder.is_empty()).then(|| folder.clone()),
                    vault: (!vault.is_empty()).then(|| vault.clone()),
                    thorough: false,
                };
                let r = blocking(move || tools::search(&engine, &Target::default(), args)).await;
                drop(turn);
                r
            }
            Err(e) => Err(e),
        };
        Some(match outcome {
            Ok(resp) => results::cards(&resp, &query),
            Err(e) => pages::error(e.code().as_str(), e.message()),
        })
    };
    if fragment {
        let body = results.map(|m| m.into_string()).unwrap_or_default();
        return ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    }
    page("Search", pages::search(&vault_names(&web), &query, &vault, &folder, results))
}

/// The vault and path a note route names, with the vault resolved to its name.
fn vault_and_path(q: &HashMap<String, String>) -> Result<(Option<String>, String)> {
    Ok((param(q, "vault").map(str::to_string), required(q, "path")?.to_string()))
}

/// `GET /ui/note?vault=&path=[&line=][&at=&q=]`: the note rendered, or a filed document's
/// verdict and text.
async fn note(State(web): State<Web>, Query(q): Params) -> Response {
    let (vault, path) = match vault_and_path(&q) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let saved = param(&q, "saved").is_some();
    // A finding's line (`&line=N`): shown at the top with a link to its section.
    let focus_line = param(&q, "line").and_then(|n| n.parse::<usize>().ok());
    // Opened from a search result: the passage's line and the query (`results::landing`).
    let at = param(&q, "at").and_then(|n| n.parse::<usize>().ok());
    let query = param(&q, "q").unwrap_or_default().to_string();
    let engine = web.engine.clone();
    let built = blocking(move || {
        let t = Target::default();
        let read = tools::read(
            &*engine,
            &t,
            tools::ReadArgs { vault: vault.clone(), path: path.clone(), section: None },
        )?;
        let map = tools::map(
            &*engine,
            &t,
            tools::MapArgs { vault: Some(read.vault.clone()), path: read.path.clone() },
        )?;
        let backlinks = if read.extraction.is_none() {
            tools::links(
                &*engine,
                &t,
                tools::LinksArgs { vault: Some(read.vault.clone()), path: read.path.clone() },
            )?
            .backlinks
        } else {
            Vec::new()
        };
        // A document or a canvas is shown read-only, its text as it reads (the note verbs
        // refuse to write either, so the page offers no editor, outline edits or anchors).
        let is_note = read.editable;
        let shown = if is_note {
            render::Shown::note(&read.body)
        } else {
            render::Shown::document(&read.body)
        };
        let find = |keys: &[_]| tools::embeds(&*engine, &t, Some(&read.vault), &read.path, keys);
        let gathered = render::gather(&shown, &find)?;
        let targets = gathered.targets;
        let resolved = tools::resolve_links(&*engine, &t, Some(&read.vault), &read.path, &targets)?;
        let resolved: HashMap<_, _> = targets.into_iter().zip(resolved).collect();
        // The notes a `[[Note#Heading]]` points into are read for their headings, so the
        // fragment is the id the heading is given there.
        let mut anchors = HashMap::new();
        for key in render::heading_link_targets(&shown) {
            let Some(Some(target)) = resolved.get(&key) else { continue };
            if anchors.contains_key(target) || !target.to_ascii_lowercase().ends_with(".md") {
                continue;
            }
            let args = tools::ReadArgs {
                vault: Some(read.vault.clone()),
                path: target.clone(),
                section: None,
            };
            if let Ok(linked) = tools::read(&*engine, &t, args) {
                anchors.insert(target.clone(), render::Anchors::of(&linked.content));
            }
        }
        // The body's first line in the file: the heading ids are file lines, like the outline's.
        let first_line = if is_note && read.content.ends_with(&read.body) {
            read.content[..read.content.len() - read.body.len()].matches('\n').count() + 1
        } else {
            1
        };
        let own = render::Anchors::of(if is_note { &read.content } else { "" });
        let v = read.vault.clone();
        let new_url =
            |target: &str| format!("/ui/new?vault={}&path={}", url::enc(&v), url::enc(target));
        let links = render::Links::Resolved {
            paths: &resolved,
            anchors: &anchors,
            note_url: &|p| url::note(&v, p),
            file_url: &|p| url::attachment(&v, p),
            new_url: &new_url,
        };
        let fitted_url = |p: &str, shown: Option<u32>| {
            fitted::rung(shown).map(|w| format!("{}&fit={w}", url::attachment(&v, p)))
        };
        let embeds = render::Embeds {
            found: &gathered.found,
            file_url: &|p| url::attachment(&v, p),
            fitted_url: Some(&fitted_url),
        };
        let body_html = render::note_html(&shown, first_line, &own, &links, &embeds);
        let obsidian_vault = engine
            .vaults()
            .get(Some(&read.vault))
            .ok()
            .and_then(|v| v.root().file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| read.vault.clone());
        let headings = if is_note { map.headings } else { Vec::new() };
        let focus = focus_line.filter(|_| is_note).and_then(|n| {
            let text = read.content.lines().nth(n.checked_sub(1)?)?.to_string();
            let section = headings.iter().rev().find(|h| h.line <= n).map(|h| h.line);
            Some((n, text, section))
        });
        Ok(pages::note(&pages::NotePage {
            vault: &read.vault,
            path: &read.path,
            obsidian_vault: &obsidian_vault,
            frontmatter: &read.frontmatter,
            headings: &headings,
            anchors: &own,
            body_html,
            backlinks: &backlinks,
            verdict: read.extraction.as_ref(),
            editable: is_note,
            title: &note_title(&read.frontmatter, &headings, &read.path),
            saved,
            focus,
            landing: at.map(|n| (results::landing(&headings, &own, n), query.as_str())),
        })
        .into_string())
    })
    .await;
    match built {
        Ok(body) => page("Note", maud::PreEscaped(body)),
        Err(e) => error_response(&e, true),
    }
}

/// What a note's page is headed with: the frontmatter's `title`, else its first H1, else its
/// file name without the suffix (as Obsidian shows it).
fn note_title(
    frontmatter: &serde_json::Map<String, serde_json::Value>,
    headings: &[crate::vault::HeadingEntry],
    path: &str,
) -> String {
    if let Some(t) = frontmatter.get("title").and_then(|v| v.as_str()).map(str::trim)
        && !t.is_empty()
    {
        return t.to_string();
    }
    if let Some(h) = headings.iter().find(|h| h.depth == 1 && !h.text.trim().is_empty()) {
        return h.text.trim().to_string();
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".md").unwrap_or(name).to_string()
}

/// `GET /ui/file?vault=&path=`: a filed document's bytes, for the browser's PDF viewer.
async fn file(State(web): State<Web>, Query(q): Params) -> Response {
    let (vault, path) = match vault_and_path(&q) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let engine = web.engine.clone();
    match blocking(move || {
        tools::document_bytes(&*engine, &Target::default(), vault.as_deref(), &path)
    })
    .await
    {
        Ok((rel, bytes)) => {
            let content_type = if rel.to_ascii_lowercase().ends_with(".pdf") {
                "application/pdf"
            } else {
                "application/octet-stream"
            };
            let mut resp = ([(header::CONTENT_TYPE, content_type)], bytes).into_response();
            let h = resp.headers_mut();
            h.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("inline"));
            // The browser shows a PDF with its own viewer, which the page's `default-src
            // 'none'` would block. The bytes are never HTML (the suffix decides the type and
            // `nosniff` holds the browser to it), so this answer only forbids framing.
            h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(FILE_CSP));
            resp
        }
        Err(e) => error_response(&e, true),
    }
}

/// `GET /ui/attachment?vault=&path=[&fit=N]`: an attachment's bytes (an image a note embeds,
/// fitted to a width with `fit` (`fitted.rs`), or the range of a clip its player asks for) with
/// its media type, read through the path gate as REST's `/vault/` reads it, under the session;
/// `api::ranges` answers for both. The gate's
/// `nosniff` holds the browser to the suffix's type, and an SVG, which can carry script, gets
/// the policy that runs and loads nothing.
async fn attachment(State(web): State<Web>, Query(q): Params, headers: HeaderMap) -> Response {
    let (vault, path) = match vault_and_path(&q) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let fit = match fitted::asked(param(&q, "fit")) {
        Ok(fit) => fit,
        Err(e) => return error_response(&e, true),
    };
    let fitted = match fit {
        Some(width) => {
            let (engine, asked) = (web.engine.clone(), headers.clone());
            fitted::answer_in_turn(&web.images, engine, vault.clone(), path.clone(), width, asked)
                .await
        }
        None => Ok(None),
    };
    let mut resp = match fitted {
        Ok(Some(resp)) => resp,
        Ok(None) => {
            let engine = web.engine.clone();
            let asked = super::ranges::Asked::from_headers(&headers);
            let read = blocking(move || {
                let (t, v) = (Target::default(), vault.as_deref());
                tools::read_attachment_span(&*engine, &t, v, &path, |e| asked.span(e))
            })
            .await;
            match read {
                Ok(r) => super::ranges::answer(r, &headers, |e| error_response(e, true)),
                Err(e) => error_response(&e, true),
            }
        }
        Err(e) => error_response(&e, true),
    };
    // Pages are `no-store`, but a phone that fetched a note's photos again at every visit
    // would pay for them each time: this browser alone may keep an attachment, fitted or not,
    // and asks before using it, which costs a 304 while the file is unchanged.
    if resp.status().is_success() || resp.status() == StatusCode::NOT_MODIFIED {
        resp.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-cache"));
    }
    resp
}

async fn new_form(State(web): State<Web>, Query(q): Params) -> Response {
    let mut path = param(&q, "path").unwrap_or_default().to_string();
    if !path.is_empty() && !path.contains('.') {
        path.push_str(".md");
    }
    page(
        "New note",
        pages::new_note(&vault_names(&web), param(&q, "vault").unwrap_or_default(), &path),
    )
}

/// `POST /ui/new`: creates a note; an existing one is refused, never overwritten.
async fn create(State(web): State<Web>, Form(f): Form<HashMap<String, String>>) -> Response {
    let (vault, path) = match vault_and_path(&f) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let text = f.get("text").cloned().unwrap_or_default().replace("\r\n", "\n");
    let engine = web.engine.clone();
    let args = tools::WriteArgs { vault, path, content: text, overwrite: false };
    match blocking(move || tools::write(&*engine, &Target::default(), args, None)).await {
        Ok(c) => redirect(&url::note(&c.vault, &c.path)),
        Err(e) => error_response(&e, true),
    }
}

async fn rename_form(Query(q): Params) -> Response {
    match vault_and_path(&q) {
        Ok((vault, path)) => {
            page("Rename", pages::rename(vault.as_deref().unwrap_or_default(), &path))
        }
        Err(e) => error_response(&e, true),
    }
}

/// `POST /ui/rename`: moves the note and rewrites the links to it; says how many notes changed.
async fn rename(State(web): State<Web>, Form(f): Form<HashMap<String, String>>) -> Response {
    let (vault, path) = match vault_and_path(&f) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let destination = match required(&f, "destination") {
        Ok(d) => d.to_string(),
        Err(e) => return error_response(&e, true),
    };
    let engine = web.engine.clone();
    let args = tools::MoveArgs { vault, source: path, destination, update_links: true };
    match blocking(move || tools::move_file(&*engine, &Target::default(), args, None)).await {
        Ok(c) => {
            page("Renamed", pages::done(&c.message, &c.vault, Some(&c.path), c.links_rewritten))
        }
        Err(e) => error_response(&e, true),
    }
}

async fn delete_form(Query(q): Params) -> Response {
    match vault_and_path(&q) {
        Ok((vault, path)) => {
            page("Delete", pages::delete(vault.as_deref().unwrap_or_default(), &path))
        }
        Err(e) => error_response(&e, true),
    }
}

/// `POST /ui/delete`: moves the note to the vault's `.trash`.
async fn delete(State(web): State<Web>, Form(f): Form<HashMap<String, String>>) -> Response {
    let (vault, path) = match vault_and_path(&f) {
        Ok(x) => x,
        Err(e) => return error_response(&e, true),
    };
    let engine = web.engine.clone();
    let args = tools::DeleteArgs { vault, path, permanent: false };
    match blocking(move || tools::delete(&*engine, &Target::default(), args, None)).await {
        Ok(c) => page("Deleted", pages::done(&c.message, &c.vault, None, None)),
        Err(e) => error_response(&e, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn a_write_must_come_from_this_very_server() {
        let host = ("host", "127.0.0.1:8080");
        assert!(same_origin(&headers(&[host, ("origin", "http://127.0.0.1:8080")])));
        assert!(same_origin(&headers(&[host, ("origin", "https://127.0.0.1:8080")])));
        assert!(!same_origin(&headers(&[host])));
        // Loopback, same site, another port: the cookie would ride along; refused.
        assert!(!same_origin(&headers(&[host, ("origin", "http://127.0.0.1:3000")])));
        assert!(!same_origin(&headers(&[host, ("origin", "null")])));
    }

    #[test]
    fn sign_in_goes_back_only_to_a_page_of_the_ui() {
        assert_eq!(safe_next(Some("/ui/note?path=a.md")), "/ui/note?path=a.md");
        for bad in ["https://evil.example/", "//evil.example/ui/", "/vault/a.md", "/ui\\..\\x"] {
            assert_eq!(safe_next(Some(bad)), "/ui/", "{bad}");
        }
        assert_eq!(safe_next(None), "/ui/");
    }

    #[test]
    fn query_values_are_encoded_once() {
        assert_eq!(
            url::note("main", "Home/Gas & Power.md"),
            "/ui/note?vault=main&path=Home/Gas%20%26%20Power.md"
        );
        assert_eq!(url::with("/ui/note?x=1", "/ui/note", "/ui/edit"), "/ui/edit?x=1");
    }
}
