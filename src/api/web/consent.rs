//! The OAuth consent page, `/ui/oauth/consent`: where the signed-in owner sees which
//! application asks to connect and where it will be sent back, and picks what it gets: read
//! only or read and write, which vaults, which folders it may see and which it may never see,
//! and the name it goes by in the client list and the audit trail.
//!
//! `/oauth/authorize` (`api::oauth::request`) checks a request and sends the browser here with
//! the same parameters; the page's gate asks for a sign-in first when there is no session.
//! Both the form and its answer read the parameters again through `request::read`, so what
//! the owner allowed is exactly what was checked. Allowing makes the client and a code
//! (`Credentials::consent`) and redirects to the application; denying tells it `access_denied`.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::html;

use super::{CSP, Web, blocking, error_response, page};
use crate::api::oauth::request::{self, AuthRequest, Bad};
use crate::api::tls::OverTls;
use crate::auth::oauth::Authorization;
use crate::error::{Error, ErrorCode, Result};
use crate::vault::grant::{Grant, folder};

/// The page's path.
pub(crate) const PATH: &str = crate::api::oauth::CONSENT;

/// The authorization request's parameters, carried through the form unchanged.
const CARRIED: &[&str] = &[
    "client_id",
    "redirect_uri",
    "response_type",
    "code_challenge",
    "code_challenge_method",
    "state",
    "resource",
    "scope",
];

/// Where the redirect URI's answer goes, as CSP's `form-action` names it: the page's form is
/// answered with a redirect there, and browsers hold a form's redirects to that directive.
fn form_target(redirect_uri: &str) -> String {
    match url::Url::parse(redirect_uri) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => u.origin().ascii_serialization(),
        Ok(u) => format!("{}:", u.scheme()),
        Err(_) => String::new(),
    }
}

/// Who the code goes to, in people's words: the host, or "a program on this computer".
fn destination(redirect_uri: &str) -> String {
    match url::Url::parse(redirect_uri) {
        Ok(u) if request::loopback_http(&u) => "a program on this computer".into(),
        Ok(u) => u
            .host_str()
            .map_or_else(|| format!("the application ({}:)", u.scheme()), str::to_string),
        Err(_) => redirect_uri.to_string(),
    }
}

/// A client name offered for the application: its name's letters and digits, then a short
/// random tail so two connections of one application are told apart.
fn suggested_name(app_name: &str) -> String {
    let mut slug: String = app_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    while slug.contains("--") {
        slug = slug.replace("--", "-");
    }
    let slug: String = slug.trim_matches('-').chars().take(40).collect();
    let mut tail = [0u8; 2];
    let _ = getrandom::fill(&mut tail);
    let base = if slug.is_empty() { "app".to_string() } else { slug };
    format!("{base}-{:02x}{:02x}", tail[0], tail[1])
}

/// The vault a resource of the form `…/v/<name>/mcp` names, if any.
fn resource_vault(resource: &str, vaults: &[String]) -> Option<String> {
    let (_, rest) = resource.split_once("/v/")?;
    let name = percent_encoding::percent_decode_str(rest.split('/').next()?).decode_utf8().ok()?;
    vaults.iter().find(|v| **v == name).cloned()
}

/// `GET /ui/oauth/consent?<the authorization request>`.
pub(crate) async fn form(
    State(web): State<Web>,
    headers: HeaderMap,
    tls: Option<axum::Extension<OverTls>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(door) = web.door.clone() else { return super::not_found() };
    let base = door.base(&headers, tls.is_some());
    let asked = match request::read(&door, &q, &base).await {
        Ok(a) => a,
        Err(bad) => return bad.answer(),
    };
    let checked = resource_vault(&asked.resource, &door.vaults)
        .unwrap_or_else(|| door.vaults.first().cloned().unwrap_or_default());
    let body = html! {
        section.consent {
            h1 { "Allow " (asked.app.name) " to use your notes?" }
            p {
                "An application calling itself " strong { (asked.app.name) } " asks to connect to this mdvault. "
                "If you allow it, it is sent back to " strong { (destination(&asked.redirect_uri)) } "."
            }
            p.hint { "Redirect: " code { (asked.redirect_uri) } " · registered as " code { (asked.app.client_id) } }
            form #consent method="post" action=(PATH) {
                @for name in CARRIED {
                    @if let Some(v) = q.get(*name) {
                        input type="hidden" name=(name) value=(v);
                    }
                }
                fieldset {
                    legend { "What it may do" }
                    label { input type="radio" name="access" value="read" checked; " Read only: search and read notes" }
                    label { input type="radio" name="access" value="write"; " Read and write: also create, edit, move and delete notes" }
                }
                @if door.vaults.len() > 1 {
                    fieldset {
                        legend { "Which vaults" }
                        @for v in &door.vaults {
                            label { input type="checkbox" name="vault" value=(v) checked[*v == checked]; " " (v) }
                        }
                    }
                } @else {
                    input type="hidden" name="vault" value=(checked);
                }
                label for="consent-allow" { "Only these folders, one per line (empty: the whole vault)" }
                textarea #consent-allow name="allow" rows="2" placeholder="Inbox" {}
                label for="consent-deny" { "Never these folders, one per line (it cannot even see them)" }
                textarea #consent-deny name="deny" rows="2" placeholder="Private" {}
                label for="consent-name" { "Its name in the client list and the audit trail" }
                input #consent-name type="text" name="name" value=(suggested_name(&asked.app.name)) required maxlength="64";
                div.actions {
                    button #consent-allow-button type="submit" name="decision" value="allow" { "Allow" }
                    button.quiet #consent-deny-button type="submit" name="decision" value="deny" { "Deny" }
                }
            }
        }
    };
    let mut resp = page("Allow an application", body);
    let csp = CSP.replace(
        "form-action 'self'",
        &format!("form-action 'self' {}", form_target(&asked.redirect_uri)),
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        resp.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    resp
}

/// The owner's choices as a grant for the client `name`.
fn grant_of(fields: &[(String, String)], vaults: &[String]) -> Result<Grant> {
    let one =
        |k: &str| fields.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.trim()).unwrap_or("");
    let folders = |k: &str| -> Result<Vec<String>> {
        one(k).lines().map(str::trim).filter(|l| !l.is_empty()).map(folder).collect()
    };
    let chosen: Vec<String> = fields
        .iter()
        .filter(|(n, _)| n == "vault")
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| vaults.contains(v))
        .collect();
    if chosen.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "choose at least one vault it may use; go back and tick one",
        ));
    }
    Ok(Grant {
        client: one("name").to_string(),
        vaults: chosen,
        allow: folders("allow")?,
        deny: folders("deny")?,
        read_only: one("access") != "write",
        tools: Vec::new(),
    })
}

/// `POST /ui/oauth/consent`: the owner's answer.
pub(crate) async fn answer(
    State(web): State<Web>,
    headers: HeaderMap,
    tls: Option<axum::Extension<OverTls>>,
    body: Bytes,
) -> Response {
    let Some(door) = web.door.clone() else { return super::not_found() };
    let fields: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let q: HashMap<String, String> =
        fields.iter().filter(|(k, _)| CARRIED.contains(&k.as_str())).cloned().collect();
    let base = door.base(&headers, tls.is_some());
    let asked: AuthRequest = match request::read(&door, &q, &base).await {
        Ok(a) => a,
        Err(bad) => return bad.answer(),
    };
    let allowed = fields.iter().any(|(k, v)| k == "decision" && v == "allow");
    if !allowed {
        tracing::info!("oauth: the owner denied '{}'", asked.app.name);
        return Bad::Back {
            redirect_uri: asked.redirect_uri,
            state: asked.state,
            error: "access_denied",
            description: "the owner did not allow the connection".into(),
        }
        .answer();
    }
    let grant = match grant_of(&fields, &door.vaults) {
        Ok(g) => g,
        Err(e) => return error_response(&e, true),
    };
    let auth = Authorization {
        app: asked.app.client_id.clone(),
        redirect_uri: asked.redirect_uri.clone(),
        challenge: asked.challenge.clone(),
        resource: asked.resource.clone(),
    };
    let (store, pepper, g) = (door.store.clone(), door.pepper.clone(), grant.clone());
    let code = match blocking(move || store.consent(&pepper, &g, &auth)).await {
        Ok(c) => c,
        Err(e) => return error_response(&e, true),
    };
    tracing::info!("oauth: the owner allowed '{}' as client '{}'", asked.app.name, grant.client);
    let mut pairs = vec![("code", code.expose())];
    if let Some(s) = asked.state {
        pairs.push(("state", s));
    }
    let mut resp = request::redirect(&request::with_query(&asked.redirect_uri, &pairs));
    // The browser is told to leave the page's form; a 303 makes it a GET whatever it was.
    *resp.status_mut() = StatusCode::SEE_OTHER;
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_owners_choices_become_a_grant_read_only_unless_write_was_picked() {
        let vaults = vec!["main".to_string(), "work".to_string()];
        let g = grant_of(
            &f(&[
                ("name", "claude-1a2b"),
                ("vault", "work"),
                ("allow", "Inbox/\n\n Projects "),
                ("deny", "Private"),
            ]),
            &vaults,
        )
        .unwrap();
        assert_eq!(g.client, "claude-1a2b");
        assert_eq!(g.vaults, ["work"]);
        assert_eq!(g.allow, ["Inbox", "Projects"]);
        assert_eq!(g.deny, ["Private"]);
        assert!(g.read_only);
        let g = grant_of(&f(&[("name", "x"), ("vault", "main"), ("access", "write")]), &vaults)
            .unwrap();
        assert!(!g.read_only && g.allow.is_empty());
    }

    #[test]
    fn a_consent_without_a_known_vault_or_with_a_bad_folder_is_refused() {
        let vaults = vec!["main".to_string()];
        assert!(grant_of(&f(&[("name", "x"), ("vault", "other")]), &vaults).is_err());
        assert!(
            grant_of(&f(&[("name", "x"), ("vault", "main"), ("allow", "../up")]), &vaults).is_err()
        );
    }

    #[test]
    fn the_form_may_answer_to_the_redirects_origin_or_scheme() {
        assert_eq!(form_target("https://claude.ai/api/mcp/auth_callback"), "https://claude.ai");
        assert_eq!(form_target("http://127.0.0.1:5173/cb"), "http://127.0.0.1:5173");
        assert_eq!(form_target("cursor://anysphere.cursor-retrieval/oauth"), "cursor:");
        assert_eq!(destination("http://localhost:9/cb"), "a program on this computer");
        assert_eq!(destination("https://chatgpt.com/connector"), "chatgpt.com");
    }

    #[test]
    fn a_suggested_name_is_a_valid_client_name_with_a_tail() {
        let n = suggested_name("Claude (web) — Work!");
        assert!(n.starts_with("claude-web-work-"), "{n}");
        assert!(n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        assert_eq!(
            resource_vault("http://h/v/work/mcp", &["main".into(), "work".into()]).as_deref(),
            Some("work")
        );
    }
}
