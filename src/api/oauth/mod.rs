//! OAuth 2.1 for MCP over HTTP, with mdvault as its own authorization server: how Claude on
//! the web and on phones, ChatGPT's connectors and `mcp-remote` sign in, as the MCP
//! authorization spec describes.
//!
//! The flow, as a client walks it: `/mcp` answers 401 with `WWW-Authenticate: Bearer
//! resource_metadata="…"` ([`challenge`], which the guard calls); the client reads the
//! protected-resource metadata (RFC 9728) and the authorization-server metadata (RFC 8414,
//! also at the OpenID path some clients try first); registers itself (RFC 7591,
//! `register.rs`) or names its client ID metadata document (`cimd.rs`); sends the person's browser to `/oauth/authorize` with a PKCE challenge
//! (S256 only), which checks the application and its redirect URI (`request.rs`) and hands over
//! to the consent page in `/ui/` (`api::web::consent`), where the owner signs in and picks
//! the vaults, folders and rights the client gets; and exchanges the code, then refresh
//! tokens, at `/oauth/token` (`token.rs`), which also serves revocation (RFC 7009).
//!
//! What is decided here: the server's own address ([`Door::base`]: `server.public_url`, else
//! the Host a request came to, which the guard has already allowed), and the rules in front
//! of these routes: the Host allowlist but no Origin check and no key (they carry no ambient
//! credential: a browser-based client's page may call them from anywhere, so they also answer
//! CORS preflights), except `/oauth/authorize`, which is a page a person's browser opens.
//! Storage is `crate::auth::oauth`; no token is a JWT, every one is an opaque random secret
//! whose hash is kept, so a revocation holds at the next request.
//!
//! It is not part of the REST contract: `openapi.yaml` does not list these routes.

pub(crate) mod cimd;
pub(crate) mod register;
pub(crate) mod request;
pub(crate) mod token;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

use super::guard::{Policy, base_of};
use super::tls::OverTls;
use crate::auth::{Credentials, Pepper};
use crate::error::Error;

/// Where OAuth's routes live.
pub(crate) const AUTHORIZE: &str = "/oauth/authorize";
/// The consent page `/oauth/authorize` hands over to (served by `api::web::consent`).
pub(crate) const CONSENT: &str = "/ui/oauth/consent";
const TOKEN: &str = "/oauth/token";
const REGISTER: &str = "/oauth/register";
const REVOKE: &str = "/oauth/revoke";
use super::guard::RESOURCE_METADATA;
const SERVER_METADATA: &str = "/.well-known/oauth-authorization-server";
const OPENID_METADATA: &str = "/.well-known/openid-configuration";

/// The one scope advertised. Rights are what the owner picks at consent, not what a client
/// asks for, so any scope asked for (`claudeai`, none at all) is accepted and changes nothing.
const SCOPE: &str = "mdvault";

/// What OAuth's routes share: the credentials file, the pepper its hashes are made under, and
/// how the server is reached.
#[derive(Clone)]
pub(crate) struct Door {
    pub(crate) store: Arc<Credentials>,
    pub(crate) pepper: Pepper,
    policy: Arc<Policy>,
    /// `server.public_url`, if set.
    public_url: Option<String>,
    /// Whether the server itself serves HTTPS (`server.tls`).
    tls: bool,
    /// An access token's life, in seconds.
    pub(crate) access_seconds: i64,
    /// The configured vault names, the default first (for the consent page).
    pub(crate) vaults: Vec<String>,
}

impl std::fmt::Debug for Door {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Door").field("public_url", &self.public_url).finish()
    }
}

impl Door {
    /// The door for this configuration; `pepper` is the clients' tokens' pepper.
    pub(crate) fn new(
        store: Arc<Credentials>,
        pepper: Pepper,
        policy: Arc<Policy>,
        server: &crate::config::ServerSettings,
        vaults: Vec<String>,
    ) -> Door {
        Door {
            store,
            pepper,
            policy,
            public_url: server.public_url.clone(),
            tls: server.tls,
            access_seconds: i64::try_from(server.oauth_access_seconds).unwrap_or(i64::MAX),
            vaults,
        }
    }

    /// This server's address, as [`base_of`] decides it.
    pub(crate) fn base(&self, headers: &HeaderMap, direct_tls: bool) -> String {
        base_of(self.public_url.as_deref(), self.tls || direct_tls, headers)
    }

    /// The default resource: the MCP endpoint.
    pub(crate) fn default_resource(&self, base: &str) -> String {
        format!("{base}/mcp")
    }
}

/// RFC 9728's document.
#[derive(Serialize)]
struct ResourceMetadata {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<&'static str>,
    bearer_methods_supported: Vec<&'static str>,
    resource_name: &'static str,
}

/// RFC 8414's document (also served at OpenID's path, which some clients try first).
#[derive(Serialize)]
struct ServerMetadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: String,
    revocation_endpoint: String,
    scopes_supported: Vec<&'static str>,
    response_types_supported: Vec<&'static str>,
    response_modes_supported: Vec<&'static str>,
    grant_types_supported: Vec<&'static str>,
    code_challenge_methods_supported: Vec<&'static str>,
    token_endpoint_auth_methods_supported: Vec<&'static str>,
    revocation_endpoint_auth_methods_supported: Vec<&'static str>,
    client_id_metadata_document_supported: bool,
}

fn direct(req_tls: Option<axum::Extension<OverTls>>) -> bool {
    req_tls.is_some()
}

async fn resource_metadata(
    State(door): State<Door>,
    headers: HeaderMap,
    tls: Option<axum::Extension<OverTls>>,
    uri: axum::http::Uri,
) -> Response {
    let base = door.base(&headers, direct(tls));
    let rest = uri.path().strip_prefix(RESOURCE_METADATA).unwrap_or("").trim_end_matches('/');
    let resource =
        if rest.is_empty() { door.default_resource(&base) } else { format!("{base}{rest}") };
    json(&ResourceMetadata {
        resource,
        authorization_servers: vec![base],
        scopes_supported: vec![SCOPE],
        bearer_methods_supported: vec!["header"],
        resource_name: "mdvault",
    })
}

async fn server_metadata(
    State(door): State<Door>,
    headers: HeaderMap,
    tls: Option<axum::Extension<OverTls>>,
) -> Response {
    let base = door.base(&headers, direct(tls));
    json(&ServerMetadata {
        authorization_endpoint: format!("{base}{AUTHORIZE}"),
        token_endpoint: format!("{base}{TOKEN}"),
        registration_endpoint: format!("{base}{REGISTER}"),
        revocation_endpoint: format!("{base}{REVOKE}"),
        issuer: base,
        scopes_supported: vec![SCOPE],
        response_types_supported: vec!["code"],
        response_modes_supported: vec!["query"],
        grant_types_supported: vec!["authorization_code", "refresh_token"],
        code_challenge_methods_supported: vec!["S256"],
        token_endpoint_auth_methods_supported: vec![
            "none",
            "client_secret_post",
            "client_secret_basic",
        ],
        revocation_endpoint_auth_methods_supported: vec![
            "none",
            "client_secret_post",
            "client_secret_basic",
        ],
        client_id_metadata_document_supported: true,
    })
}

/// A JSON answer that no cache keeps (RFC 6749 asks it of token answers; metadata is cheap).
pub(crate) fn json<T: Serialize>(body: &T) -> Response {
    let mut resp = axum::Json(body).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// OAuth's routes, mounted in front of REST by `api::serve`.
pub(crate) fn router(door: Door) -> Router {
    // Any origin, no credentials: these routes take none from the browser (no cookie), so a
    // browser-based client's page may read them; the preflight allows MCP's version header.
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::Any)
        .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::HeaderName::from_static("mcp-protocol-version"),
        ]);
    let api = Router::new()
        .route(RESOURCE_METADATA, get(resource_metadata))
        .route(&format!("{RESOURCE_METADATA}/{{*rest}}"), get(resource_metadata))
        .route(SERVER_METADATA, get(server_metadata))
        .route(&format!("{SERVER_METADATA}/{{*rest}}"), get(server_metadata))
        .route(OPENID_METADATA, get(server_metadata))
        .route(&format!("{OPENID_METADATA}/{{*rest}}"), get(server_metadata))
        .route(REGISTER, post(register::register))
        .route(TOKEN, post(token::token))
        .route(REVOKE, post(token::revoke))
        .layer(cors);
    Router::new()
        .route(AUTHORIZE, get(request::authorize))
        .merge(api)
        .layer(axum::middleware::from_fn_with_state(door.clone(), gate))
        .with_state(door)
}

/// The Host allowlist, and nothing else (see the module header).
async fn gate(
    State(door): State<Door>,
    req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    if let Err(e) = door.policy.host_check(&req) {
        return super::guard::refusal(&e);
    }
    tracing::info!("oauth: {} {}", req.method(), req.uri().path());
    next.run(req).await
}

/// An OAuth error answer (RFC 6749, section 5.2) with its status.
pub(crate) fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    #[derive(Serialize)]
    struct Body<'a> {
        error: &'a str,
        error_description: &'a str,
    }
    let mut resp = json(&Body { error, error_description: description });
    *resp.status_mut() = status;
    resp
}

/// A refusal of `/oauth/authorize` before the application is known: said to the person in
/// the browser, as plain text (nothing is sent to the application; `request.rs` says why).
pub(crate) fn page_refusal(e: &Error) -> Response {
    let status = StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    let text =
        format!("mdvault could not start this sign-in ({}): {}\n", e.code().as_str(), e.message());
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}
