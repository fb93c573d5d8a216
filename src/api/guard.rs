//! The gate in front of every HTTP route: Host and Origin allowlists, bearer auth, and the
//! `/v/<name>/` vault prefix.
//!
//! It runs before routing, so an unknown route is still authenticated (an attacker learns
//! nothing from a 404 they could not have had) and `/healthz` is exempt by exact path only.
//! The Host check defeats DNS rebinding (a web page whose name resolves to 127.0.0.1 sends its
//! own name as Host); the Origin check stops a browser page on another site from driving the
//! server. Requests without an Origin (scripts, agents, curl) are never refused for it.
//!
//! It does not know routes or vault operations; after it, the request carries a [`Target`]
//! naming the addressed vault and its path no longer has the prefix.

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::error::{Error, ErrorCode};
use crate::service::Target;

/// What the gate checks against, fixed at startup.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The whole expected `Authorization` header value, `Bearer <key>`.
    pub authorization: Vec<u8>,
    /// Host names (or `host:port`) accepted besides the loopback forms; `*` accepts any.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted besides loopback ones; `*` accepts any.
    pub allowed_origins: Vec<String>,
    /// The configured vault names, to answer an unknown `/v/<name>/` with the list.
    pub vaults: Vec<String>,
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

fn is_loopback(host: &str) -> bool {
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

impl Policy {
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

    /// Checks one request; on success returns it with its [`Target`] and prefix stripped.
    pub fn admit(&self, mut req: Request<Body>) -> Result<Request<Body>, Error> {
        let authority = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string)
            .or_else(|| req.uri().authority().map(|a| a.to_string()));
        if let Some(a) = &authority
            && !self.host_allowed(a)
        {
            return Err(Error::new(
                ErrorCode::Forbidden,
                format!(
                    "the Host header '{a}' is not allowed; add it to server.allowed_hosts if \
                     this is how you reach the server"
                ),
            ));
        }
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            let o = origin.to_str().unwrap_or("");
            if !self.origin_allowed(o) {
                return Err(Error::new(
                    ErrorCode::Forbidden,
                    format!(
                        "requests from the web origin '{o}' are not allowed; add it to \
                         server.allowed_origins to permit that page"
                    ),
                ));
            }
        }
        if req.uri().path() == "/healthz" {
            return Ok(req);
        }
        if !self.authorized(req.headers()) {
            return Err(Error::new(
                ErrorCode::Unauthorized,
                "missing or wrong bearer token; send `Authorization: Bearer <key>` with the \
                 key in the server's MDVAULT_API_KEY",
            ));
        }

        let mut target = Target::default();
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

/// The middleware function: admit, or answer the refusal.
pub async fn gate(
    axum::extract::State(policy): axum::extract::State<std::sync::Arc<Policy>>,
    req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    match policy.admit(req) {
        Ok(req) => next.run(req).await,
        Err(e) => {
            let mut resp = refusal(&e);
            if e.code() == ErrorCode::Unauthorized {
                resp.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer realm=\"mdvault\""),
                );
            }
            resp
        }
    }
}

/// A refusal as REST answers it: the code's status and `{"code","error"}`. The gate and every
/// route answer through this one function.
pub fn refusal(e: &Error) -> Response {
    // A failure on our side is logged with its cause: the client's body is not the only trace.
    if e.code() == ErrorCode::InternalError {
        tracing::error!("answered 500 internal_error: {}", e.message());
    }
    let status =
        StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, axum::Json(crate::wire::error(e))).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy {
            authorization: b"Bearer sekrit".to_vec(),
            allowed_hosts: vec!["notes.lan".into()],
            allowed_origins: vec!["https://app.example".into()],
            vaults: vec!["main".into(), "work".into()],
        }
    }

    fn request(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
        let mut b = Request::builder().uri(path);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap()
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
        assert_eq!(
            status(p.admit(request("/healthz", &[host, ("origin", "http://evil.example")]))),
            403
        );
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
