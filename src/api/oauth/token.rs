//! `POST /oauth/token` (the authorization-code and refresh-token grants, RFC 6749 section 4.1.3
//! and 6, with PKCE) and `POST /oauth/revoke` (RFC 7009).
//!
//! A request's body is read as a form, as the RFCs say, or as a JSON object, which a few
//! clients send; the client authenticates by `client_id` alone (a public client, as every MCP
//! client registers today), or with its secret in the body or in `Authorization: Basic`. The
//! answer's shapes are the oauth2 crate's types; the checks are `crate::auth::oauth`'s.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use oauth2::basic::BasicTokenType;
use oauth2::{AccessToken, EmptyExtraTokenFields, RefreshToken, Scope, StandardTokenResponse};

use super::{Door, SCOPE, json, oauth_error, request::resource};
use crate::api::tls::OverTls;
use crate::auth::oauth::{Exchange, Issued, Refusal};

/// A request's parameters, from a form or a JSON object of strings.
fn parameters(headers: &HeaderMap, body: &[u8]) -> HashMap<String, String> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"));
    if json {
        let map: HashMap<String, serde_json::Value> =
            serde_json::from_slice(body).unwrap_or_default();
        return map
            .into_iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_string())))
            .collect();
    }
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// The client's id and secret from `Authorization: Basic` (RFC 6749, section 2.3.1: each
/// form-encoded before the colon joins them).
fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (id, secret) = text.split_once(':')?;
    let dec = |s: &str| {
        url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.into_owned())
    };
    Some((dec(id)?, dec(secret)?))
}

/// The client a request authenticates as: `Some(id)` when its secret (if it has one) was
/// right, else the refusal to answer.
async fn client(
    door: &Door,
    headers: &HeaderMap,
    p: &HashMap<String, String>,
) -> Result<Option<String>, Response> {
    let from_basic = basic(headers);
    let id = from_basic.as_ref().map(|(i, _)| i.clone()).or_else(|| p.get("client_id").cloned());
    let Some(id) = id.filter(|i| !i.is_empty()) else { return Ok(None) };
    let secret = from_basic.map(|(_, s)| s).or_else(|| p.get("client_secret").cloned());
    let (store, pepper, checked) = (door.store.clone(), door.pepper.clone(), id.clone());
    let ok = crate::api::common::blocking(move || {
        store.app_secret_ok(&pepper, &checked, secret.as_deref())
    })
    .await
    .map_err(|e| crate::api::guard::refusal(&e))?;
    if !ok {
        let mut resp = oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "the client is not registered here, or its secret is wrong; register again",
        );
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"mdvault\""));
        return Err(resp);
    }
    Ok(Some(id))
}

/// The token answer (RFC 6749, section 5.1), in the oauth2 crate's shape.
fn tokens(issued: Issued) -> Response {
    let mut answer = StandardTokenResponse::new(
        AccessToken::new(issued.access.expose()),
        BasicTokenType::Bearer,
        EmptyExtraTokenFields {},
    );
    answer
        .set_expires_in(Some(&Duration::from_secs(u64::try_from(issued.expires_in).unwrap_or(0))));
    answer.set_refresh_token(Some(RefreshToken::new(issued.refresh.expose())));
    answer.set_scopes(Some(vec![Scope::new(SCOPE.to_string())]));
    tracing::info!("oauth: tokens issued to client '{}'", issued.client);
    let mut resp = json(&answer);
    resp.headers_mut().insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    resp
}

fn refused(r: Refusal) -> Response {
    match r {
        Refusal::InvalidGrant(m) => oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", &m),
        Refusal::InvalidClient(m) => oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", &m),
    }
}

fn missing(name: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_request", &format!("the request has no {name}"))
}

/// `POST /oauth/token`.
pub(crate) async fn token(
    State(door): State<Door>,
    headers: HeaderMap,
    tls: Option<axum::Extension<OverTls>>,
    body: Bytes,
) -> Response {
    let p = parameters(&headers, &body);
    let app = match client(&door, &headers, &p).await {
        Ok(a) => a,
        Err(resp) => return resp,
    };
    let (store, pepper, seconds) = (door.store.clone(), door.pepper.clone(), door.access_seconds);
    let outcome = match p.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let (Some(code), Some(verifier)) =
                (p.get("code").cloned(), p.get("code_verifier").cloned())
            else {
                return missing(if p.contains_key("code") {
                    "code_verifier (PKCE is required)"
                } else {
                    "code"
                });
            };
            let Some(app) = app else { return missing("client_id") };
            let base = door.base(&headers, tls.is_some());
            let resource = match resource(p.get("resource").map(String::as_str), &base) {
                Ok(r) => r,
                Err(m) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_target", &m),
            };
            let x = Exchange {
                code,
                app,
                redirect_uri: p.get("redirect_uri").cloned(),
                verifier,
                resource,
            };
            crate::api::common::blocking(move || store.redeem_code(&pepper, &x, seconds)).await
        }
        Some("refresh_token") => {
            let Some(refresh) = p.get("refresh_token").cloned() else {
                return missing("refresh_token");
            };
            crate::api::common::blocking(move || {
                store.refresh(&pepper, &refresh, app.as_deref(), seconds)
            })
            .await
        }
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!(
                    "grant_type '{other}' is not supported; use authorization_code or refresh_token"
                ),
            );
        }
        None => return missing("grant_type"),
    };
    match outcome {
        Ok(Ok(issued)) => tokens(issued),
        Ok(Err(r)) => {
            tracing::info!("oauth: token request refused: {r:?}");
            refused(r)
        }
        Err(e) => crate::api::guard::refusal(&e),
    }
}

/// `POST /oauth/revoke`: revokes the client the token belongs to (its every token), and
/// answers 200 whatever the token was, as RFC 7009 asks (an unknown token is no news).
pub(crate) async fn revoke(State(door): State<Door>, headers: HeaderMap, body: Bytes) -> Response {
    let p = parameters(&headers, &body);
    if let Err(resp) = client(&door, &headers, &p).await {
        return resp;
    }
    let Some(token) = p.get("token").cloned() else { return missing("token") };
    let (store, pepper) = (door.store.clone(), door.pepper.clone());
    match crate::api::common::blocking(move || store.revoke_token(&pepper, &token)).await {
        Ok(Some(name)) => tracing::info!("oauth: client '{name}' revoked by its application"),
        Ok(None) => {}
        Err(e) => return crate::api::guard::refusal(&e),
    }
    (StatusCode::OK, [(header::CACHE_CONTROL, "no-store")]).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_decoded_and_form_decoded() {
        let mut h = HeaderMap::new();
        let enc = base64::engine::general_purpose::STANDARD.encode("mdv-1%3Ax:s%2Bt");
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(&format!("Basic {enc}")).unwrap());
        assert_eq!(basic(&h), Some(("mdv-1:x".into(), "s+t".into())));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer abc"));
        assert_eq!(basic(&h), None);
    }

    #[test]
    fn parameters_come_from_a_form_or_a_json_object() {
        let mut h = HeaderMap::new();
        let p = parameters(&h, b"grant_type=refresh_token&refresh_token=a%2Bb");
        assert_eq!(p["refresh_token"], "a+b");
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let p = parameters(&h, br#"{"grant_type": "authorization_code", "n": 1}"#);
        assert_eq!(p["grant_type"], "authorization_code");
        assert!(!p.contains_key("n"));
    }
}
