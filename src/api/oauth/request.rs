//! An authorization request, decided once: `/oauth/authorize` and the consent page (both its
//! form and its answer) read the same parameters through [`read`], so the application, its
//! redirect URI, PKCE and the resource are checked by one rule wherever they arrive.
//!
//! Which failures go back to the application and which stay on the page follows RFC 6749
//! (section 4.1.2.1): while the application or its redirect URI is in doubt nothing is sent
//! there (an open redirector would hand a code, or an error, to anyone); once both are known,
//! every other fault is the application's to hear, at its redirect URI, with its `state`.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Door;
use crate::api::common::trimmed_param as param;
use crate::api::tls::OverTls;
use crate::auth::oauth::App;
use crate::error::{Error, ErrorCode};

/// The longest `state` carried back: generous for any client's, bounded for the page.
const STATE_CHARS: usize = 1024;

/// A checked authorization request.
#[derive(Debug, Clone)]
pub(crate) struct AuthRequest {
    /// The registered application.
    pub(crate) app: App,
    /// Where the code goes: one of the application's registered URIs.
    pub(crate) redirect_uri: String,
    /// The application's `state`, carried back untouched.
    pub(crate) state: Option<String>,
    /// The PKCE challenge (S256).
    pub(crate) challenge: String,
    /// The resource the tokens are for, normalised ([`resource`]).
    pub(crate) resource: String,
}

/// Why a request is not taken.
#[derive(Debug)]
pub(crate) enum Bad {
    /// The application or its redirect URI is in doubt: said on the page, nothing sent back.
    Page(Error),
    /// The application is told, at its redirect URI.
    Back { redirect_uri: String, state: Option<String>, error: &'static str, description: String },
}

impl Bad {
    /// The answer: the page's refusal, or the redirect that tells the application.
    pub(crate) fn answer(self) -> Response {
        match self {
            Bad::Page(e) => super::page_refusal(&e),
            Bad::Back { redirect_uri, state, error, description } => {
                let mut pairs =
                    vec![("error", error.to_string()), ("error_description", description)];
                if let Some(s) = state {
                    pairs.push(("state", s));
                }
                redirect(&with_query(&redirect_uri, &pairs))
            }
        }
    }
}

/// A 302 to `to` (what OAuth clients expect of an authorization answer).
pub(crate) fn redirect(to: &str) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
}

/// `uri` with `pairs` added to its query, encoded.
pub(crate) fn with_query(uri: &str, pairs: &[(&str, String)]) -> String {
    match url::Url::parse(uri) {
        Ok(mut u) => {
            u.query_pairs_mut().extend_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
            u.to_string()
        }
        Err(_) => uri.to_string(),
    }
}

/// Whether a redirect URI is one the server may send codes to: `https`, `http` on a loopback
/// host (a native client's local listener), or a native app's own scheme; never a fragment,
/// and never a scheme a browser would run (`javascript:`, `data:`, `file:`).
pub(crate) fn acceptable_redirect(uri: &str) -> Result<(), String> {
    let u = url::Url::parse(uri).map_err(|e| format!("'{uri}' is not a URI ({e})"))?;
    if u.fragment().is_some() {
        return Err(format!("'{uri}' has a fragment, which a redirect URI may not have"));
    }
    match u.scheme() {
        "https" => Ok(()),
        "http" if loopback_http(&u) => Ok(()),
        "http" => Err(format!(
            "'{uri}' is plain http to another machine; use https, or a loopback address"
        )),
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" => {
            Err(format!("'{uri}' is not a redirect a browser may follow safely"))
        }
        _ => Ok(()),
    }
}

/// Whether a URL is plain `http` to this machine (the guard's loopback rule on its host).
pub(crate) fn loopback_http(u: &url::Url) -> bool {
    u.scheme() == "http" && u.host_str().is_some_and(crate::api::guard::is_loopback)
}

/// Whether `asked` is the registered redirect URI `registered`: the same string, or both the
/// same loopback `http` address in any port (RFC 8252, section 7.3: a native client's
/// listener takes whatever port is free).
pub(crate) fn redirect_matches(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    let (Ok(r), Ok(a)) = (url::Url::parse(registered), url::Url::parse(asked)) else {
        return false;
    };
    loopback_http(&r)
        && a.scheme() == "http"
        && r.host() == a.host()
        && r.path() == a.path()
        && r.query() == a.query()
}

/// The resource a request names (RFC 8707), normalised: scheme and host in lower case, no
/// trailing slash; absent, the MCP endpoint. It must be an address of this server (`base`);
/// clients differ in case and a trailing slash, which is why the normal form is what is kept
/// and compared.
pub(crate) fn resource(asked: Option<&str>, base: &str) -> Result<String, String> {
    let Some(asked) = asked.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(format!("{base}/mcp"));
    };
    let normal = |s: &str| -> Option<String> {
        let u = url::Url::parse(s).ok()?;
        Some(u.as_str().trim_end_matches('/').to_string())
    };
    let (Some(r), Some(b)) = (normal(asked), normal(base)) else {
        return Err(format!("the resource '{asked}' is not a URL"));
    };
    let inside = r == b || r.strip_prefix(&b).is_some_and(|rest| rest.starts_with('/'));
    if !inside {
        return Err(format!("the resource '{asked}' is not on this server ({base})"));
    }
    Ok(r)
}

/// The application `client_id` names: a registered one, or a client ID metadata document
/// (`cimd.rs`) fetched when it is not kept or was kept more than a day ago.
async fn application(door: &Door, client_id: &str) -> Result<App, Bad> {
    let (store, id) = (door.store.clone(), client_id.to_string());
    let found = crate::api::common::blocking(move || {
        let kept = store.app(&id)?;
        let document = super::cimd::is_document_url(&id);
        let fresh =
            |a: &App| a.created > crate::auth::now() - crate::auth::oauth::UNUSED_APP_SECONDS;
        match kept {
            Some(app) if !document || fresh(&app) => Ok(Some(app)),
            _ if document => match super::cimd::fetch(&id) {
                Ok((name, uris)) => store.remember_document(&id, &name, &uris).map(Some),
                Err(why) => Err(Error::new(ErrorCode::InvalidRequest, why)),
            },
            _ => Ok(None),
        }
    })
    .await
    .map_err(Bad::Page)?;
    found.ok_or_else(|| Bad::Page(crate::auth::oauth::unknown_app(client_id)))
}

/// Reads and checks an authorization request's parameters (see the module header for which
/// failure goes where).
pub(crate) async fn read(
    door: &Door,
    q: &HashMap<String, String>,
    base: &str,
) -> Result<AuthRequest, Bad> {
    let page = |m: String| Bad::Page(Error::new(ErrorCode::InvalidRequest, m));
    let client_id = param(q, "client_id")
        .ok_or_else(|| {
            page("the request names no client_id; start again from the application".into())
        })?
        .to_string();
    let app = application(door, &client_id).await?;
    let redirect_uri = match param(q, "redirect_uri") {
        Some(r) => r.to_string(),
        // OAuth 2.1 requires it; an application with one URI could mean only that one.
        None if app.redirect_uris.len() == 1 => app.redirect_uris[0].clone(),
        None => {
            return Err(page(
                "the request names no redirect_uri; start again from the application".into(),
            ));
        }
    };
    if !app.redirect_uris.iter().any(|r| redirect_matches(r, &redirect_uri)) {
        return Err(page(format!(
            "'{redirect_uri}' is not a redirect URI '{}' registered; nothing was sent there",
            app.name
        )));
    }
    let state = param(q, "state").map(|s| s.chars().take(STATE_CHARS).collect::<String>());
    let back = |error: &'static str, description: String| Bad::Back {
        redirect_uri: redirect_uri.clone(),
        state: state.clone(),
        error,
        description,
    };
    if param(q, "response_type") != Some("code") {
        return Err(back(
            "unsupported_response_type",
            "only response_type=code is supported".into(),
        ));
    }
    let challenge = param(q, "code_challenge")
        .ok_or_else(|| {
            back("invalid_request", "PKCE is required: send a code_challenge (S256)".into())
        })?
        .to_string();
    // S256 only: `plain` would put the verifier itself on the front channel.
    if param(q, "code_challenge_method") != Some("S256") {
        return Err(back("invalid_request", "only code_challenge_method=S256 is supported".into()));
    }
    if challenge.len() != 43 {
        return Err(back("invalid_request", "the code_challenge is not an S256 challenge".into()));
    }
    let resource = resource(param(q, "resource"), base).map_err(|m| back("invalid_target", m))?;
    Ok(AuthRequest { app, redirect_uri, state, challenge, resource })
}

/// `GET /oauth/authorize`: checks the request, then hands the browser to the consent page
/// with the same parameters (where the owner signs in first, if need be).
pub(crate) async fn authorize(
    State(door): State<Door>,
    headers: HeaderMap,
    tls: Option<axum::Extension<OverTls>>,
    uri: axum::http::Uri,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let base = door.base(&headers, tls.is_some());
    match read(&door, &q, &base).await {
        Ok(_) => {
            let query = uri.query().unwrap_or("");
            (StatusCode::SEE_OTHER, [(header::LOCATION, format!("{}?{query}", super::CONSENT))])
                .into_response()
        }
        Err(bad) => bad.answer(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_redirect_matches_in_any_port_and_nothing_else_does() {
        let r = "http://127.0.0.1:33418/oauth/callback";
        assert!(redirect_matches(r, "http://127.0.0.1:51234/oauth/callback"));
        assert!(redirect_matches("http://localhost/cb", "http://localhost:9/cb"));
        assert!(!redirect_matches(r, "http://127.0.0.1:51234/oauth/callback2"));
        assert!(!redirect_matches(r, "http://localhost:33418/oauth/callback"));
        let c = "https://claude.ai/api/mcp/auth_callback";
        assert!(redirect_matches(c, c));
        assert!(!redirect_matches(c, "https://claude.ai/api/mcp/auth_callback/"));
        assert!(!redirect_matches("https://a.example:1/cb", "https://a.example:2/cb"));
    }

    #[test]
    fn redirects_are_https_loopback_http_or_an_apps_own_scheme() {
        for ok in [
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "http://localhost:5173/cb",
            "http://[::1]:9/cb",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
        ] {
            assert_eq!(acceptable_redirect(ok), Ok(()), "{ok}");
        }
        for bad in
            ["http://evil.example/cb", "javascript:alert(1)", "https://a.example/cb#x", "nope"]
        {
            assert!(acceptable_redirect(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_resource_is_normalised_and_must_be_on_this_server() {
        let base = "http://127.0.0.1:8080";
        assert_eq!(resource(None, base).unwrap(), "http://127.0.0.1:8080/mcp");
        assert_eq!(
            resource(Some("HTTP://127.0.0.1:8080/mcp/"), base).unwrap(),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(
            resource(Some("http://127.0.0.1:8080/v/work/mcp"), base).unwrap(),
            "http://127.0.0.1:8080/v/work/mcp"
        );
        assert_eq!(resource(Some("http://127.0.0.1:8080"), base).unwrap(), "http://127.0.0.1:8080");
        assert!(resource(Some("http://127.0.0.1:8081/mcp"), base).is_err());
        assert!(resource(Some("http://127.0.0.1:80800/mcp"), base).is_err());
        assert!(resource(Some("https://evil.example/mcp"), base).is_err());
    }

    #[test]
    fn a_query_is_added_encoded() {
        let u = with_query(
            "https://a.example/cb?x=1",
            &[("code", "c d".into()), ("state", "s&t".into())],
        );
        assert_eq!(u, "https://a.example/cb?x=1&code=c+d&state=s%26t");
    }
}
