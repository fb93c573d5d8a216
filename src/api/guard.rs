//! The gate in front of every HTTP route: one Host and at most one Origin, their allowlists,
//! bearer auth, and the `/v/<name>/` vault prefix.
//!
//! It runs before routing, so an unknown route is still authenticated (an attacker learns
//! nothing from a 404 they could not have had). Which routes go without the key is not decided
//! here: the router's list (`rest::PUBLIC`) arrives in the [`Policy`], each route by exact path
//! with its [`Access`]; a probe (`/healthz`) is exempt from the key and from the Host allowlist
//! (not from the one-Host rule or the Origin check).
//! The Host check defeats DNS rebinding (a web page whose name resolves to 127.0.0.1 sends its
//! own name as Host); the Origin check stops a browser page on another site from driving the
//! server. Requests without an Origin (scripts, agents, curl) are never refused for it. Both
//! checks first insist that the head is unambiguous (hyper passes duplicates and a missing
//! Host through as sent): exactly one Host, agreeing with an absolute-form request target, and
//! at most one Origin, else 400 `invalid_request`.
//!
//! The bearer credential is the API key (the owner's client, every right) or a client's token
//! (`mdvault token create`), looked up in the data directory's `auth.db` on every request (no
//! cache, so a revocation by another process holds at the next request); the client's grant
//! rides in the [`Target`]. A token whose grant does not reach the `/v/<name>/` vault is
//! refused here, 403 `not_granted`.
//!
//! It does not know routes or vault operations; after it, the request carries a [`Target`]
//! naming the addressed vault and the client's grant, and its path no longer has the prefix.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, Method, Request, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::auth::{Credentials, Pepper};
use crate::error::{Error, ErrorCode};
use crate::service::Target;
use crate::vault::grant::Grant;

/// Whether a request on a public path (`GET /`) carried the right key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Authenticated(pub bool);

/// How a public route is served without the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Any method, without the key and from any Host: a probe that reads no state and answers
    /// a constant, so a rebinding page learns nothing from it.
    Probe,
    /// GET and HEAD without the key (any other method needs it); the route is told, as
    /// [`Authenticated`], whether the key it carried was right.
    Read,
}

/// What the gate checks against, fixed at startup.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    /// The whole expected `Authorization` header value, `Bearer <key>`.
    pub(crate) authorization: Vec<u8>,
    /// Host names (or `host:port`) accepted besides the loopback forms; `*` accepts any.
    pub(crate) allowed_hosts: Vec<String>,
    /// Origins accepted besides loopback ones; `*` accepts any.
    pub(crate) allowed_origins: Vec<String>,
    /// The configured vault names, to answer an unknown `/v/<name>/` with the list.
    pub(crate) vaults: Vec<String>,
    /// The routes served without the key, by exact path: the router's `rest::PUBLIC`.
    pub(crate) public: &'static [(&'static str, Access)],
    /// Where clients' tokens are checked; `None` admits the key alone.
    pub(crate) tokens: Option<Tokens>,
    /// How a 401 on the MCP endpoint names the OAuth metadata; `None` when OAuth is off.
    pub(crate) oauth: Option<OAuthHint>,
    /// `server.owner_loopback_only`: the key (bearer or web sign-in) only from this machine.
    pub(crate) owner_loopback_only: bool,
}

/// Headers a proxy or tunnel adds: a request carrying one came from elsewhere, whatever its
/// peer address says (a tunnel's daemon connects from loopback).
const FORWARDED: &[&str] = &["forwarded", "x-forwarded-for", "x-real-ip", "cf-connecting-ip"];

/// Whether a request was made on this machine: its peer is a loopback address, its Host a
/// loopback name, and no proxy says it forwarded it. Decided here once, for the bearer key and
/// the web page's sign-in alike (`server.owner_loopback_only`).
pub(crate) fn made_here(req: &Request<Body>) -> bool {
    let peer = req
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .is_some_and(|c| c.0.ip().is_loopback());
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).map(host_part);
    peer && host.is_some_and(is_loopback)
        && !FORWARDED.iter().any(|h| req.headers().contains_key(*h))
}

impl Policy {
    /// Refuses the owner's key on a request not made on this machine, when the setting asks.
    pub(crate) fn check_owner_here(&self, req: &Request<Body>) -> Result<(), Error> {
        if !self.owner_loopback_only || made_here(req) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::Forbidden,
            "the owner's key is accepted only on this machine (server.owner_loopback_only); use \
             it there, or a client's token (`mdvault token create`) from elsewhere",
        ))
    }
}

/// What a 401 on the MCP endpoint needs to name where the OAuth metadata is
/// (`api::oauth::challenge`).
#[derive(Debug, Clone)]
pub(crate) struct OAuthHint {
    /// `server.public_url`, if set.
    pub(crate) public_url: Option<String>,
    /// Whether the server serves HTTPS itself.
    pub(crate) tls: bool,
}

/// The clients' tokens: the credentials file and the pepper derived from the API key.
#[derive(Clone)]
pub(crate) struct Tokens {
    store: std::sync::Arc<Credentials>,
    pepper: Pepper,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens").field("store", &self.store).finish()
    }
}

impl Tokens {
    /// Tokens kept in `store`, hashed under the pepper derived from `api_key`.
    pub(crate) fn new(store: std::sync::Arc<Credentials>, api_key: &str) -> Tokens {
        Tokens { store, pepper: Pepper::for_tokens(api_key) }
    }
}

/// Who presented the request's bearer credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Presented {
    /// The API key: the owner.
    Key,
    /// A live client's token, with its grant.
    Client(Grant),
    /// Nothing that lets anyone in.
    Nobody,
}

impl Presented {
    fn admitted(&self) -> bool {
        !matches!(self, Presented::Nobody)
    }
}

/// Compares without an early exit, so response time says nothing about how much matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0xff);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

/// Whether a host (a name, or an address with or without IPv6 brackets) is this machine.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Splits `host[:port]` (IPv6 in brackets) into the host part.
fn host_part(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match a.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => a,
    }
}

/// A malformed request head: one the server cannot tell which site it is for.
fn malformed(message: String) -> Error {
    Error::new(ErrorCode::InvalidRequest, message)
}

/// The value of a header that may be sent at most once, as text. Two values are refused
/// rather than one picked: the guard and whatever else reads the header could pick
/// differently, and a check passed by one copy would vouch for the other.
/// `label` is the name as messages spell it (`Host`; the map keeps names in lower case).
fn at_most_one<'a>(
    headers: &'a HeaderMap,
    name: &HeaderName,
    label: &str,
) -> Result<Option<&'a str>, Error> {
    let mut values = headers.get_all(name).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return match headers.get_all(name).iter().count() {
            0 => Ok(None),
            n => Err(malformed(format!("the {label} header is given {n} times; send it once"))),
        };
    };
    // Invalid text is refused here rather than skipped, so that it cannot slip past a check.
    value
        .to_str()
        .map(|v| Some(v.trim()))
        .map_err(|_| malformed(format!("the {label} header is not readable text")))
}

/// Splits an authority into its host (brackets kept for IPv6) and port, if any.
fn host_and_port(authority: &str) -> (&str, Option<&str>) {
    let a = authority.trim();
    let port_at = if a.starts_with('[') { a.find("]:").map(|i| i + 1) } else { a.rfind(':') };
    match port_at {
        Some(i) => (&a[..i], Some(&a[i + 1..])),
        None => (a, None),
    }
}

/// Whether an absolute-form request target's authority names the same server as `Host`;
/// a port left out on one side is the scheme's default.
fn same_server(target: &Uri, host: &str) -> bool {
    let Some(authority) = target.authority() else { return true };
    let default = if target.scheme_str() == Some("https") { "443" } else { "80" };
    let (th, tp) = host_and_port(authority.as_str());
    let (hh, hp) = host_and_port(host);
    th.eq_ignore_ascii_case(hh) && tp.unwrap_or(default) == hp.unwrap_or(default)
}

/// The request's one `Host`. HTTP/1.1 requires exactly one (RFC 9112, section 3.2): without
/// it the allowlist has nothing to check, and with two the allowlist and a later reader could
/// disagree about which server was asked for. A request target in absolute form
/// (`GET http://host/path`) names the server too, and must name the same one, for the same
/// reason.
fn the_host(req: &Request<Body>) -> Result<&str, Error> {
    let host = at_most_one(req.headers(), &header::HOST, "Host")?
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            malformed(
                "the request has no Host header; send one naming the server as you reached it, \
                 such as Host: 127.0.0.1:8080"
                    .into(),
            )
        })?;
    if !same_server(req.uri(), host) {
        let target = req.uri().authority().map(|a| a.as_str()).unwrap_or_default();
        return Err(malformed(format!(
            "the request target names the server '{target}' but the Host header says '{host}'; \
             send the path alone (GET /path) or make the two agree"
        )));
    }
    Ok(host)
}

impl Policy {
    /// How `path` is served without the key, if it is public.
    fn access(&self, path: &str) -> Option<Access> {
        self.public.iter().find(|(p, _)| *p == path).map(|(_, a)| *a)
    }

    fn host_allowed(&self, authority: &str) -> bool {
        let host = host_part(authority);
        is_loopback(host)
            || self.allowed_hosts.iter().any(|h| {
                h == "*" || h.eq_ignore_ascii_case(authority.trim()) || h.eq_ignore_ascii_case(host)
            })
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim();
        if self.allowed_origins.iter().any(|o| o == "*" || o.eq_ignore_ascii_case(origin)) {
            return true;
        }
        // scheme://authority, nothing after; loopback origins are the user's own pages.
        match origin.split_once("://") {
            Some((scheme, authority))
                if (scheme == "http" || scheme == "https") && !authority.contains('/') =>
            {
                is_loopback(host_part(authority))
            }
            _ => false,
        }
    }

    fn authorized(&self, headers: &HeaderMap) -> bool {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        match (values.next(), values.next()) {
            (Some(v), None) => constant_time_eq(v.as_bytes(), &self.authorization),
            _ => false,
        }
    }

    /// The checks that say which site a request is for and from, without the key: one Host on
    /// the allowlist (skipped for a probe, `/healthz`) and at most one Origin, an allowed one. The web
    /// page (`api/web`) runs these too, then asks for its session instead of the bearer key.
    pub(crate) fn site_checks(&self, req: &Request<Body>) -> Result<(), Error> {
        self.host_check(req)?;
        if let Some(o) = at_most_one(req.headers(), &header::ORIGIN, "Origin")?
            && !self.origin_allowed(o)
        {
            return Err(Error::new(
                ErrorCode::Forbidden,
                format!(
                    "requests from the web origin '{o}' are not allowed; add it to \
                     server.allowed_origins to permit that page"
                ),
            ));
        }
        Ok(())
    }

    /// The Host half of [`Policy::site_checks`]: exactly one Host, on the allowlist unless the
    /// route is a probe. OAuth's endpoints run this alone: they carry no ambient credential,
    /// so a page of any origin may call them (`api::oauth`).
    pub(crate) fn host_check(&self, req: &Request<Body>) -> Result<(), Error> {
        let host = the_host(req)?;
        // A probe (`/healthz`) reads no state and answers a constant, so a container's probe
        // by IP address or a peer reaching the server by its service name gets it without an
        // allowlist entry; a rebinding page learns nothing from it. Every other route keeps
        // the Host check.
        let probe = self.access(req.uri().path()) == Some(Access::Probe);
        if !probe && !self.host_allowed(host) {
            return Err(Error::new(
                ErrorCode::Forbidden,
                format!(
                    "the Host header '{host}' is not allowed; add it to server.allowed_hosts if \
                     this is how you reach the server"
                ),
            ));
        }
        Ok(())
    }

    /// Whether `key` is the server's API key (the web page's sign-in form sends it bare).
    pub(crate) fn is_key(&self, key: &str) -> bool {
        constant_time_eq(format!("Bearer {}", key.trim()).as_bytes(), &self.authorization)
    }

    /// Who the request's `Authorization` lets in: the key, compared in constant time, else a
    /// client's token, looked up in the credentials file (on the blocking pool: it is a read
    /// of a file).
    pub(crate) async fn presented(&self, headers: &HeaderMap) -> Result<Presented, Error> {
        if self.authorized(headers) {
            return Ok(Presented::Key);
        }
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None, Some(tokens)) = (values.next(), values.next(), &self.tokens) else {
            return Ok(Presented::Nobody);
        };
        let Some(token) = value.to_str().ok().and_then(|v| v.strip_prefix("Bearer ")) else {
            return Ok(Presented::Nobody);
        };
        let (token, tokens) = (token.to_string(), tokens.clone());
        let found =
            tokio::task::spawn_blocking(move || tokens.store.client_of(&tokens.pepper, &token))
                .await
                .unwrap_or_else(|e| {
                    Err(Error::new(
                        ErrorCode::InternalError,
                        format!("the token check failed: {e}"),
                    ))
                })?;
        Ok(found.map_or(Presented::Nobody, Presented::Client))
    }

    /// Checks one request with the key alone (no token looked up).
    #[cfg(test)]
    pub(crate) fn admit(&self, req: Request<Body>) -> Result<Request<Body>, Error> {
        let who = if self.authorized(req.headers()) { Presented::Key } else { Presented::Nobody };
        self.admit_as(req, who)
    }

    /// Checks one request, whose credential let in `who`; on success returns it with its
    /// [`Target`] (the client's grant in it) and prefix stripped.
    pub(crate) fn admit_as(
        &self,
        mut req: Request<Body>,
        who: Presented,
    ) -> Result<Request<Body>, Error> {
        self.site_checks(&req)?;
        match self.access(req.uri().path()) {
            Some(Access::Probe) => return Ok(req),
            Some(Access::Read) if matches!(*req.method(), Method::GET | Method::HEAD) => {
                let authenticated = Authenticated(who.admitted());
                req.extensions_mut().insert(authenticated);
                return Ok(req);
            }
            _ => {}
        }
        let grant = match who {
            Presented::Key => {
                self.check_owner_here(&req)?;
                Grant::owner()
            }
            Presented::Client(grant) => grant,
            Presented::Nobody => {
                return Err(Error::new(
                    ErrorCode::Unauthorized,
                    "missing or wrong bearer token; send `Authorization: Bearer <key>` with the \
                     key in the server's MDVAULT_API_KEY, or a live token from `mdvault token \
                     create`",
                ));
            }
        };

        let mut target = Target { grant, ..Target::default() };
        let path = req.uri().path().to_string();
        if let Some(rest) = path.strip_prefix("/v/") {
            let (raw_name, remainder) = match rest.split_once('/') {
                Some((n, r)) => (n, format!("/{r}")),
                None => (rest, "/".to_string()),
            };
            let name = percent_encoding::percent_decode_str(raw_name)
                .decode_utf8()
                .map(|s| s.into_owned())
                .unwrap_or_default();
            if !self.vaults.contains(&name) {
                return Err(Error::new(
                    ErrorCode::NotFound,
                    format!(
                        "there is no vault named '{name}'; the vaults are: {}",
                        self.vaults.join(", ")
                    ),
                ));
            }
            target.grant.check_vault(&name)?;
            target.vault = Some(name);
            let mut parts = req.uri().clone().into_parts();
            let pq = match req.uri().query() {
                Some(q) => format!("{remainder}?{q}"),
                None => remainder,
            };
            parts.path_and_query = pq.parse().ok();
            if let Ok(uri) = Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
        req.extensions_mut().insert(target);
        Ok(req)
    }
}

/// The protected-resource metadata's path (RFC 9728); a resource's own path follows it.
pub(crate) const RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource";

/// The server's own address as a client should name it, without a trailing slash:
/// `public_url` when set, else the scheme and `Host` of this request.
pub(crate) fn base_of(public_url: Option<&str>, tls: bool, headers: &HeaderMap) -> String {
    if let Some(url) = public_url {
        return url.to_string();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    format!("{}://{}", if over_tls(headers, tls) { "https" } else { "http" }, host.trim())
}

/// Whether a request reached the server over TLS: directly (`tls`), or through a proxy that
/// terminated it and says so in `X-Forwarded-Proto` (the only hint there is without
/// `server.public_url`). The web page's cookie and the OAuth metadata's scheme both ask this.
pub(crate) fn over_tls(headers: &HeaderMap, tls: bool) -> bool {
    tls || headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
}

/// The `WWW-Authenticate` value of a 401 on the MCP endpoint at `path` (as requested, with
/// any `/v/<name>/` prefix): where its metadata is, and, when a token was presented, that it
/// was not good (expired, revoked or unknown).
pub(crate) fn challenge(base: &str, path: &str, token_presented: bool) -> String {
    let path = path.trim_end_matches('/');
    let mut value =
        format!("Bearer realm=\"mdvault\", resource_metadata=\"{base}{RESOURCE_METADATA}{path}\"");
    if token_presented {
        value.push_str(", error=\"invalid_token\", error_description=\"the token is expired, revoked or unknown; sign in again\"");
    }
    value
}

/// Whether `path` (after nothing was stripped) is an MCP endpoint, whose 401 names the OAuth
/// metadata: `/mcp`, `/mcp/only/<scope>` and their `/v/<name>/` forms.
pub(crate) fn is_mcp_path(path: &str) -> bool {
    let rest = match path.strip_prefix("/v/") {
        Some(r) => r.split_once('/').map_or("", |(_, r)| r),
        None => path.trim_start_matches('/'),
    };
    rest == "mcp" || rest == "mcp/" || rest.starts_with("mcp/only/")
}

/// The middleware function: admit, or answer the refusal.
pub(crate) async fn gate(
    axum::extract::State(policy): axum::extract::State<std::sync::Arc<Policy>>,
    req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    // Kept for a refusal's challenge: the request itself moves into the check.
    let (path, presented) =
        (req.uri().path().to_string(), req.headers().contains_key(header::AUTHORIZATION));
    let challenge = policy.oauth.as_ref().filter(|_| is_mcp_path(&path)).map(|o| {
        let base = base_of(o.public_url.as_deref(), o.tls, req.headers());
        challenge(&base, &path, presented)
    });
    let admitted = match policy.presented(req.headers()).await {
        Ok(who) => policy.admit_as(req, who),
        Err(e) => Err(e),
    };
    match admitted {
        Ok(req) => next.run(req).await,
        Err(e) => {
            let mut resp = refusal(&e);
            if e.code() == ErrorCode::Unauthorized {
                // On the MCP endpoint the challenge says where to sign in (RFC 9728, section
                // 5.1), which is how a remote client finds OAuth; elsewhere the plain one.
                let value = challenge
                    .and_then(|c| header::HeaderValue::from_str(&c).ok())
                    .unwrap_or(header::HeaderValue::from_static("Bearer realm=\"mdvault\""));
                resp.headers_mut().insert(header::WWW_AUTHENTICATE, value);
            }
            resp
        }
    }
}

/// A refusal as REST answers it: the code's status and `{"code","error"}`. The gate and every
/// route answer through this one function.
pub(crate) fn refusal(e: &Error) -> Response {
    // A failure on our side is logged with its cause: the client's body is not the only trace.
    if e.code() == ErrorCode::InternalError {
        tracing::error!("answered 500 internal_error: {}", e.message());
    }
    let status =
        StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = (status, axum::Json(crate::wire::error(e))).into_response();
    // `busy` is the one refusal that will go away by itself soon: say when to come back.
    if e.code() == ErrorCode::Busy {
        resp.headers_mut().insert(
            header::RETRY_AFTER,
            header::HeaderValue::from(super::limits::BUSY_RETRY_AFTER_SECONDS),
        );
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_names_the_metadata_of_the_path_asked_for() {
        assert_eq!(
            challenge("http://127.0.0.1:8080", "/mcp", false),
            "Bearer realm=\"mdvault\", resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\""
        );
        let v = challenge("https://notes.example.org", "/v/work/mcp/", true);
        assert!(v.contains("oauth-protected-resource/v/work/mcp\""), "{v}");
        assert!(v.contains("error=\"invalid_token\""), "{v}");
    }

    #[test]
    fn mcp_paths_are_the_endpoint_its_scopes_and_their_vault_forms() {
        for p in ["/mcp", "/mcp/", "/mcp/only/Inbox", "/v/work/mcp", "/v/work/mcp/only/a"] {
            assert!(is_mcp_path(p), "{p}");
        }
        for p in ["/vault/mcp", "/mcpx", "/v/mcp", "/search", "/v/work/vault/x"] {
            assert!(!is_mcp_path(p), "{p}");
        }
    }

    #[test]
    fn the_base_is_the_public_url_else_the_request_host() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, header::HeaderValue::from_static("127.0.0.1:9000"));
        assert_eq!(base_of(None, false, &h), "http://127.0.0.1:9000");
        assert_eq!(base_of(None, true, &h), "https://127.0.0.1:9000");
        assert_eq!(
            base_of(Some("https://notes.example.org"), false, &h),
            "https://notes.example.org"
        );
        h.insert("x-forwarded-proto", header::HeaderValue::from_static("https"));
        assert_eq!(base_of(None, false, &h), "https://127.0.0.1:9000");
    }

    fn policy() -> Policy {
        Policy {
            authorization: b"Bearer sekrit".to_vec(),
            allowed_hosts: vec!["notes.lan".into()],
            allowed_origins: vec!["https://app.example".into()],
            vaults: vec!["main".into(), "work".into()],
            public: crate::api::rest::PUBLIC,
            tokens: None,
            oauth: None,
            owner_loopback_only: false,
        }
    }

    /// A request exactly as given: these headers and no others.
    fn raw(target: &str, headers: &[(&str, &str)]) -> Request<Body> {
        let mut b = Request::builder().uri(target);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap()
    }

    /// A request with a loopback Host unless the headers name one.
    fn request(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
        let mut req = raw(path, headers);
        if !req.headers().contains_key(header::HOST) {
            req.headers_mut().insert(header::HOST, "127.0.0.1:8080".parse().unwrap());
        }
        req
    }

    fn code(r: Result<Request<Body>, Error>) -> (u16, &'static str) {
        match r {
            Ok(_) => (200, "ok"),
            Err(e) => (e.code().http_status(), e.code().as_str()),
        }
    }

    fn status(r: Result<Request<Body>, Error>) -> u16 {
        match r {
            Ok(_) => 200,
            Err(e) => e.code().http_status(),
        }
    }

    #[test]
    fn constant_time_comparison_is_exact() {
        assert!(constant_time_eq(b"Bearer a", b"Bearer a"));
        assert!(!constant_time_eq(b"Bearer a", b"Bearer ab"));
        assert!(!constant_time_eq(b"Bearer ab", b"Bearer a"));
        assert!(!constant_time_eq(b"bearer a", b"Bearer a"));
        assert!(!constant_time_eq(b"", b"Bearer a"));
    }

    #[test]
    fn hosts_loopback_forms_and_the_allowlist() {
        let p = policy();
        for ok in ["localhost:8080", "127.0.0.1", "[::1]:9", "127.0.0.2:1", "notes.lan:8080"] {
            assert!(p.host_allowed(ok), "{ok}");
        }
        for bad in ["evil.example", "evil.example:8080", "localhost.evil.example", "10.0.0.1"] {
            assert!(!p.host_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn origins_loopback_and_listed_only() {
        let p = policy();
        for ok in ["http://localhost:3000", "https://127.0.0.1", "https://app.example"] {
            assert!(p.origin_allowed(ok), "{ok}");
        }
        for bad in ["null", "http://evil.example", "https://app.example.evil", "file://x"] {
            assert!(!p.origin_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn the_status_object_and_the_document_are_public_for_get_only() {
        let p = policy();
        let host = ("host", "127.0.0.1:8080");
        for path in ["/", "/openapi.yaml", "/obsidian-local-rest-api.crt"] {
            let req = p.admit(request(path, &[host])).unwrap();
            assert!(!req.extensions().get::<Authenticated>().unwrap().0, "{path}");
            let auth = ("authorization", "Bearer sekrit");
            let req = p.admit(request(path, &[host, auth])).unwrap();
            assert!(req.extensions().get::<Authenticated>().unwrap().0, "{path}");
        }
        let mut post = request("/", &[host]);
        *post.method_mut() = Method::POST;
        assert_eq!(status(p.admit(post)), 401);
        assert_eq!(status(p.admit(request("/tags/", &[host]))), 401);
    }

    #[test]
    fn auth_is_required_everywhere_but_exactly_healthz() {
        let p = policy();
        let host = ("host", "127.0.0.1:8080");
        assert_eq!(status(p.admit(request("/healthz", &[host]))), 200);
        assert_eq!(status(p.admit(request("/healthz/", &[host]))), 401);
        assert_eq!(status(p.admit(request("/readyz", &[host]))), 401);
        assert_eq!(status(p.admit(request("/nope", &[host]))), 401);
        let auth = ("authorization", "Bearer sekrit");
        assert_eq!(status(p.admit(request("/readyz", &[host, auth]))), 200);
        assert_eq!(status(p.admit(request("/readyz", &[host, ("authorization", "sekrit")]))), 401);
        // A rebinding page: right token (a stolen one, say), wrong Host.
        assert_eq!(status(p.admit(request("/readyz", &[("host", "evil.example"), auth]))), 403);
        // A probe by IP address or service name: /healthz answers any Host, nothing else does.
        for foreign in ["172.17.0.2:8080", "vault-mcp:8080", "evil.example"] {
            assert_eq!(status(p.admit(request("/healthz", &[("host", foreign)]))), 200);
            assert_eq!(status(p.admit(request("/readyz", &[("host", foreign), auth]))), 403);
            assert_eq!(status(p.admit(request("/healthz/", &[("host", foreign)]))), 403);
        }
        assert_eq!(
            status(p.admit(request("/healthz", &[host, ("origin", "http://evil.example")]))),
            403
        );
    }

    #[test]
    fn the_site_checks_refuse_a_foreign_host_or_origin_without_asking_for_a_key() {
        let p = policy();
        let host = ("host", "127.0.0.1:8080");
        assert!(p.site_checks(&request("/ui/", &[host])).is_ok());
        let foreign = p.site_checks(&request("/ui/", &[("host", "evil.example")])).unwrap_err();
        assert_eq!(foreign.code(), ErrorCode::Forbidden);
        let page = ("origin", "http://evil.example");
        assert_eq!(
            p.site_checks(&request("/ui/", &[host, page])).unwrap_err().code(),
            ErrorCode::Forbidden
        );
        assert!(p.is_key("sekrit") && p.is_key(" sekrit\n"));
        assert!(!p.is_key("sekri") && !p.is_key("") && !p.is_key("Bearer sekrit"));
    }

    #[test]
    fn a_request_names_its_server_exactly_once() {
        let p = policy();
        let host = ("host", "127.0.0.1:8080");
        assert_eq!(code(p.admit(raw("/healthz", &[host]))), (200, "ok"));
        assert_eq!(code(p.admit(raw("/healthz", &[]))), (400, "invalid_request"));
        assert_eq!(code(p.admit(raw("/healthz", &[("host", "")]))), (400, "invalid_request"));
        // Two Hosts, whichever comes first, and even when both are allowed.
        for pair in
            [[host, ("host", "evil.example")], [("host", "evil.example"), host], [host, host]]
        {
            assert_eq!(code(p.admit(raw("/healthz", &pair))), (400, "invalid_request"), "{pair:?}");
        }
        let e = p.admit(raw("/healthz", &[host, host])).unwrap_err();
        assert!(e.message().contains("Host header is given 2 times"), "{}", e.message());
        // Not text: refused, not skipped.
        let mut req = raw("/healthz", &[]);
        req.headers_mut().insert(header::HOST, header::HeaderValue::from_bytes(b"\xff").unwrap());
        assert_eq!(code(p.admit(req)), (400, "invalid_request"));
    }

    #[test]
    fn an_origin_is_sent_at_most_once() {
        let p = policy();
        let ok = ("origin", "http://localhost:3000");
        assert_eq!(code(p.admit(request("/healthz", &[ok]))), (200, "ok"));
        assert_eq!(code(p.admit(request("/healthz", &[ok, ok]))), (400, "invalid_request"));
        let two = [ok, ("origin", "http://evil.example")];
        assert_eq!(code(p.admit(request("/healthz", &two))), (400, "invalid_request"));
    }

    #[test]
    fn an_absolute_form_target_must_name_the_server_host_names() {
        let p = policy();
        let host = ("host", "127.0.0.1:8080");
        let same = "http://127.0.0.1:8080/healthz";
        assert_eq!(code(p.admit(raw(same, &[host]))), (200, "ok"));
        assert_eq!(
            code(p.admit(raw("http://LOCALHOST/healthz", &[("host", "localhost:80")]))).0,
            200
        );
        for foreign in [
            "http://evil.example/healthz",
            "http://127.0.0.1:9999/healthz",
            "http://user@127.0.0.1:8080/healthz",
            "https://127.0.0.1/healthz",
        ] {
            assert_eq!(code(p.admit(raw(foreign, &[host]))), (400, "invalid_request"), "{foreign}");
        }
        // Agreeing on a server the allowlist does not have is the rebinding case (on any route
        // but /healthz, which reads nothing).
        let evil = ("host", "evil.example");
        let auth = ("authorization", "Bearer sekrit");
        assert_eq!(
            code(p.admit(raw("http://evil.example/readyz", &[evil, auth]))),
            (403, "forbidden")
        );
        assert_eq!(code(p.admit(raw("http://evil.example/healthz", &[evil]))).0, 200);
    }

    #[test]
    fn authorities_split_into_host_and_port() {
        assert_eq!(host_and_port("a.lan:80"), ("a.lan", Some("80")));
        assert_eq!(host_and_port("a.lan"), ("a.lan", None));
        assert_eq!(host_and_port("[::1]:9"), ("[::1]", Some("9")));
        assert_eq!(host_and_port("[::1]"), ("[::1]", None));
    }

    #[test]
    fn only_busy_says_when_to_come_back() {
        let busy = refusal(&Error::new(ErrorCode::Busy, "x"));
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        let after = busy.headers().get(header::RETRY_AFTER).unwrap().to_str().unwrap();
        assert_eq!(after, super::super::limits::BUSY_RETRY_AFTER_SECONDS.to_string());
        let not_ready = refusal(&Error::new(ErrorCode::NotReady, "x"));
        assert!(not_ready.headers().get(header::RETRY_AFTER).is_none());
    }

    #[test]
    fn a_vault_prefix_becomes_the_target() {
        let p = policy();
        let auth = ("authorization", "Bearer sekrit");
        let req = p.admit(request("/v/work/vault/a%20b.md?section=x", &[auth])).unwrap();
        assert_eq!(req.uri().path(), "/vault/a%20b.md");
        assert_eq!(req.uri().query(), Some("section=x"));
        assert_eq!(req.extensions().get::<Target>().unwrap().vault.as_deref(), Some("work"));
        let req = p.admit(request("/v/main/mcp", &[auth])).unwrap();
        assert_eq!(req.uri().path(), "/mcp");
        assert_eq!(status(p.admit(request("/v/other/mcp", &[auth]))), 404);
        let req = p.admit(request("/vault/x.md", &[auth])).unwrap();
        assert_eq!(req.extensions().get::<Target>(), Some(&Target::default()));
    }
}
