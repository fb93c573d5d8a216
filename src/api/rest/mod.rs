//! The REST surface: routes shaped like the Obsidian Local REST API, plus health and search.
//! This file is the router: every route is registered here, beside [`ROUTES`] (the documented
//! table) and [`PUBLIC`] (the routes served without the key); the handlers live by concept in
//! `vault.rs` (notes, `/move/`, `/periodic/`), `folder.rs`, `search.rs` (with `/reindex`),
//! `upkeep.rs` and `health.rs`.
//!
//! Every vault verb builds the argument struct of `crate::service` and calls the same function MCP
//! calls; these modules only translate HTTP (path, query flags, `Accept`, `If-Match`, the PATCH
//! headers, raw bodies) and render the outcome as text or JSON. Every refusal is
//! `{"code","error"}` with the code's status; a 404 means something missing: a note, folder,
//! vault or route, the part of a note a PATCH targets, or the certificate over plain HTTP.
//!
//! Routes (also `/v/<name>/...` for a named vault, see `guard.rs`):
//! `/vault/<path>` (GET, PUT, POST, PATCH, DELETE, and MOVE and COPY with `Destination`),
//! `/folder/<path>` (GET, PUT, DELETE), `/move/<path>` (POST), `/search` (GET, POST),
//! `/reindex` (POST), `/status`, the upkeep routes (`/frontmatter`, `/expiries`, `/callouts`,
//! `/maintenance`, `/maintenance/checks`), `/healthz`, `/readyz`, `/openapi.yaml`, the periodic
//! notes (`/periodic/`, `periodic.rs`, which hands each request back to `/vault/`), and MCP at
//! `/mcp` and `/mcp/only/<scope>`.

mod folder;
mod health;
mod search;
mod upkeep;
mod vault;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Extension, FromRequest, State};
use axum::http::{HeaderValue, Method, Request, Uri, header};
use axum::response::Response;
use axum::routing::{any, get, post};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower::ServiceExt;

use super::common::{body_bytes, too_large};
use super::guard::Access;
use super::limits::{Images, Searches};
use super::mcp::VaultMcp;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::Target;

/// The OpenAPI document, served at `/openapi.yaml` and checked against this router by tests.
pub const OPENAPI: &str = include_str!("../../../openapi.yaml");

/// Where the plugin serves its certificate, and so does mdvault under `server.tls`.
pub(crate) const CERTIFICATE_PATH: &str = "/obsidian-local-rest-api.crt";

/// Every documented route and its methods, as `openapi.yaml` spells the path. The router
/// below registers exactly these (plus `HEAD` beside `GET`, the Local REST API's `MOVE` and `COPY` verbs
/// on `/vault/{path}`); the contract test holds the document,
/// this table and the live server to each other. A named vault answers every route under
/// `/v/{vault}` as well.
pub const ROUTES: &[(&str, &[&str])] = &[
    ("/", &["get"]),
    ("/tags/", &["get"]),
    ("/tags/rename", &["post"]),
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
    ("/audit", &["get"]),
    ("/callouts", &["get", "post"]),
    ("/maintenance", &["get", "post"]),
    ("/maintenance/checks", &["get"]),
    ("/grep", &["get"]),
    ("/links/{path}", &["get"]),
    ("/mcp", &["post"]),
    ("/mcp/", &["post"]),
    ("/mcp/only/{scope}", &["post"]),
];

/// The routes served without the key, by exact path, and how; every other route (and every
/// path not listed, a route or not) needs it. Decided here once: the guard is handed this list
/// in its `Policy`, the contract test holds `openapi.yaml`'s `security` to it, and a tidy test
/// holds the prose that lists them.
pub const PUBLIC: &[(&str, Access)] = &[
    // A probe: a constant that reads no state, so a container's health check needs no key and
    // no allowlist entry.
    ("/healthz", Access::Probe),
    // The Local REST API's status object, the API document and the TLS certificate are public,
    // as in the plugin; they name no note. The status says whether the key was right.
    ("/", Access::Read),
    ("/openapi.yaml", Access::Read),
    (CERTIFICATE_PATH, Access::Read),
];

type Mcp = StreamableHttpService<VaultMcp, NeverSessionManager>;

/// Shared by every handler.
#[derive(Clone)]
pub(crate) struct App {
    engine: Arc<Engine>,
    mcp: Mcp,
    /// The search queue, shared with every MCP request's `VaultMcp`.
    searches: Searches,
    started: Instant,
    /// The public certificate served under `server.tls`, PEM (`None` over plain HTTP).
    certificate: Option<Arc<str>>,
}

pub(crate) use super::guard::refusal;

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
pub(crate) fn router(
    engine: Arc<Engine>,
    policy: super::guard::Policy,
    searches: Searches,
    images: Images,
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
        move || Ok(VaultMcp::new(factory_engine.clone(), factory_searches.clone(), images.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let certificate = certificate.map(Arc::from);
    let app = App { engine, mcp, searches, started: Instant::now(), certificate };
    let routes = Router::new()
        .route("/", get(health::root_route))
        .route("/tags/", get(upkeep::tags_route))
        .route("/tags/rename", post(upkeep::tag_rename_route))
        .route("/periodic/{*rest}", any(vault::periodic_route))
        .route("/search/simple/", post(search::simple_search_route))
        .route("/search/", post(search::logic_search_route))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/openapi.yaml", get(health::openapi))
        .route(CERTIFICATE_PATH, get(health::certificate_route))
        .route("/active/", any(app_only_route))
        .route("/commands/", get(app_only_route))
        .route("/commands/{*id}", post(app_only_route))
        .route("/open/{*path}", post(app_only_route))
        .route("/vault", any(vault::vault_route))
        .route("/vault/", any(vault::vault_route))
        .route("/vault/{*path}", any(vault::vault_route))
        .route("/folder/{*path}", any(folder::folder_route))
        .route("/move/{*path}", post(vault::move_route))
        .route("/search", get(search::search_route).post(search::search_route))
        .route("/reindex", post(search::reindex_route))
        .route("/frontmatter", get(upkeep::frontmatter_route))
        .route("/expiries", get(upkeep::expiries_route))
        .route("/status", get(health::status_route))
        .route("/audit", get(upkeep::audit_route))
        .route("/callouts", get(upkeep::callouts_route).post(upkeep::callouts_route))
        .route("/maintenance", get(upkeep::maintenance_route).post(upkeep::maintenance_route))
        .route("/maintenance/checks", get(upkeep::checks_route))
        .route("/grep", get(upkeep::grep_route))
        .route("/links/{*path}", get(upkeep::links_route))
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
}
