//! `POST /oauth/register`: dynamic client registration (RFC 7591).
//!
//! Liberal in what it takes: unknown metadata is ignored, a missing name is named for the
//! application, and any of the three client authentication methods is accepted (a secret is
//! issued to an application that asks for `client_secret_post` or `client_secret_basic`).
//! Strict where it matters: every redirect URI must be one a code may safely go to
//! (`request::acceptable_redirect`), and registering grants nothing: rights come only from the
//! owner's consent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::{Door, json, oauth_error, request::acceptable_redirect};

/// The longest application name kept (it is shown on the consent page).
const NAME_CHARS: usize = 100;

/// The most redirect URIs one application may register.
const MAX_REDIRECTS: usize = 20;

/// The metadata read; everything else a client sends is ignored.
#[derive(Debug, Default, Deserialize)]
struct Asked {
    #[serde(default)]
    redirect_uris: Vec<String>,
    client_name: Option<String>,
    token_endpoint_auth_method: Option<String>,
    scope: Option<String>,
}

/// RFC 7591's answer.
#[derive(Debug, Serialize)]
struct Registered {
    client_id: String,
    client_id_issued_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret_expires_at: Option<i64>,
    client_name: String,
    redirect_uris: Vec<String>,
    grant_types: [&'static str; 2],
    response_types: [&'static str; 1],
    token_endpoint_auth_method: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
}

fn invalid(error: &str, description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, error, description)
}

/// Registers an application.
pub(crate) async fn register(State(door): State<Door>, body: Bytes) -> Response {
    let asked: Asked = match serde_json::from_slice(&body) {
        Ok(a) => a,
        Err(e) => {
            return invalid(
                "invalid_client_metadata",
                &format!("the registration is not the JSON object RFC 7591 describes: {e}"),
            );
        }
    };
    if asked.redirect_uris.is_empty() || asked.redirect_uris.len() > MAX_REDIRECTS {
        return invalid(
            "invalid_redirect_uri",
            &format!("register 1 to {MAX_REDIRECTS} redirect_uris"),
        );
    }
    for uri in &asked.redirect_uris {
        if let Err(why) = acceptable_redirect(uri) {
            return invalid("invalid_redirect_uri", &why);
        }
    }
    let method = asked.token_endpoint_auth_method.unwrap_or_else(|| "none".into());
    let confidential = match method.as_str() {
        "none" => false,
        "client_secret_post" | "client_secret_basic" => true,
        other => {
            return invalid(
                "invalid_client_metadata",
                &format!(
                    "token_endpoint_auth_method '{other}' is not supported; use none, \
                     client_secret_post or client_secret_basic"
                ),
            );
        }
    };
    let name = asked
        .client_name
        .map(|n| n.trim().chars().filter(|c| !c.is_control()).take(NAME_CHARS).collect::<String>())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "an application that gave no name".into());
    let (store, pepper, uris, kept) =
        (door.store.clone(), door.pepper.clone(), asked.redirect_uris.clone(), name.clone());
    let made = crate::api::common::blocking(move || {
        store.register_app(&pepper, &kept, &uris, confidential)
    })
    .await;
    let (app, secret) = match made {
        Ok(m) => m,
        Err(e) => return crate::api::guard::refusal(&e),
    };
    tracing::info!("oauth: registered '{}' as {}", app.name, app.client_id);
    let mut resp = json(&Registered {
        client_id: app.client_id,
        client_id_issued_at: app.created,
        client_secret_expires_at: secret.as_ref().map(|_| 0),
        client_secret: secret.map(|s| s.expose()),
        client_name: app.name,
        redirect_uris: app.redirect_uris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: method,
        scope: asked.scope,
    });
    *resp.status_mut() = StatusCode::CREATED;
    resp
}
