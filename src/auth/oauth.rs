//! OAuth 2.1's state as rows of `auth.db`: the applications that registered (RFC 7591), the
//! authorization codes a consent hands out, and the refresh tokens that keep a client signed
//! in. It knows no HTTP: `api::oauth` parses the requests and renders the answers.
//!
//! The grant is decided at consent, by the owner, not by the application: a consent makes a
//! client (a `clients` row of kind `oauth`, its `app` the application's client_id) with the
//! [`Grant`] the owner picked, and every token issued under it lets that client in with that
//! grant, through the same `Credentials::client_of` a static token uses. So an access token is
//! an ordinary `tokens` row with an expiry, and the guard needs nothing new to check one.
//!
//! Every code and token follows the file's rule: 32 random bytes handed out once, only the
//! peppered hash kept. A code is good once, for [`CODE_SECONDS`]; a refresh token once, for
//! [`REFRESH_SECONDS`], each use handing out a new pair (rotation). A second use of either is a
//! replay (someone else holds a copy), and revokes the whole client, as OAuth 2.1 advises: the
//! owner's application signs in again, the thief's copy is worth nothing.

use oauth2::{PkceCodeChallenge, PkceCodeVerifier};
use rusqlite::{OptionalExtension, params};

use super::{Credentials, Pepper, Secret, failed, now};
use crate::error::{Error, ErrorCode, Result};
use crate::vault::grant::Grant;

/// How long an authorization code is good for: the redirect back to the application and its
/// exchange take seconds; two minutes allow for a slow machine.
pub(crate) const CODE_SECONDS: i64 = 120;

/// How long a refresh token is good for; each use hands out a new one for as long again.
pub(crate) const REFRESH_SECONDS: i64 = 30 * 24 * 60 * 60;

/// How long a registered application that never reached a consent is kept: clients such as
/// Claude's register again on every connection attempt, and most registrations go nowhere.
/// Also how long a client ID metadata document is trusted before it is fetched again.
pub(crate) const UNUSED_APP_SECONDS: i64 = 24 * 60 * 60;

/// The most applications kept unused at once; past it the oldest unused ones go first, so a
/// flood of registrations cannot grow the file without bound.
const UNUSED_APPS_KEPT: i64 = 1000;

/// A registered application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct App {
    /// Its client_id, as issued at registration.
    pub(crate) client_id: String,
    /// The name it gave itself (`client_name`), shown on the consent page.
    pub(crate) name: String,
    /// The redirect URIs it registered, matched exactly (a loopback one in any port).
    pub(crate) redirect_uris: Vec<String>,
    /// Whether it was given a client secret, which the token endpoint then requires.
    pub(crate) confidential: bool,
    /// Unix seconds of its registration.
    pub(crate) created: i64,
}

/// What a consent binds a code to: the token request must repeat all of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authorization {
    /// The application's client_id.
    pub(crate) app: String,
    /// The redirect URI the code was sent to.
    pub(crate) redirect_uri: String,
    /// The PKCE challenge (S256).
    pub(crate) challenge: String,
    /// The resource (the MCP endpoint's URL) the tokens are for, as the server normalised it.
    pub(crate) resource: String,
}

/// A token request's refusal, in OAuth's words (RFC 6749, section 5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The code or refresh token is unknown, used, expired, or not this application's.
    InvalidGrant(String),
    /// The application is unknown, or its secret is wrong or missing.
    InvalidClient(String),
}

/// A token request's outcome: the file's failure, a refusal, or the tokens.
pub(crate) type Outcome = Result<std::result::Result<Issued, Refusal>>;

/// A code's exchange, as the token request states it.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    /// The code.
    pub(crate) code: String,
    /// The application's client_id.
    pub(crate) app: String,
    /// The redirect URI, when the request names one.
    pub(crate) redirect_uri: Option<String>,
    /// The PKCE verifier.
    pub(crate) verifier: String,
    /// The resource, normalised as at the authorization.
    pub(crate) resource: String,
}

/// A code as stored.
struct CodeRow {
    app: String,
    client: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
    expires: i64,
    used: Option<i64>,
}

/// What a successful token request hands out, once.
pub(crate) struct Issued {
    /// The access token (a bearer for `/mcp`).
    pub(crate) access: Secret,
    /// Its lifetime in seconds.
    pub(crate) expires_in: i64,
    /// The refresh token that replaces this pair.
    pub(crate) refresh: Secret,
    /// The client (grant) it lets in.
    pub(crate) client: String,
}

/// Whether `verifier` is the one whose S256 challenge is `challenge` (RFC 7636, section 4.6).
pub(crate) fn pkce_matches(challenge: &str, verifier: &str) -> bool {
    // RFC 7636: 43 to 128 characters of [A-Za-z0-9-._~]; anything else never matched.
    let shaped = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    // Checked first: the oauth2 crate panics on a verifier of the wrong length.
    if !shaped {
        return false;
    }
    let computed =
        PkceCodeChallenge::from_code_verifier_sha256(&PkceCodeVerifier::new(verifier.to_string()));
    bool::from(subtle::ConstantTimeEq::ct_eq(computed.as_str().as_bytes(), challenge.as_bytes()))
}

fn app_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(App, String)> {
    let uris: String = r.get(2)?;
    let app = App {
        client_id: r.get(0)?,
        name: r.get(1)?,
        redirect_uris: Vec::new(),
        confidential: r.get::<_, Option<Vec<u8>>>(3)?.is_some(),
        created: r.get(4)?,
    };
    Ok((app, uris))
}

impl Credentials {
    /// Registers an application; with `confidential` it is given a client secret (returned
    /// once, its hash kept), which the token endpoint will then ask for.
    pub(crate) fn register_app(
        &self,
        pepper: &Pepper,
        name: &str,
        redirect_uris: &[String],
        confidential: bool,
    ) -> Result<(App, Option<Secret>)> {
        let id = Secret::random()?;
        // A client_id is public; 16 bytes of it are as unguessable as a name needs to be.
        let client_id = format!("mdv-{}", &id.expose()[..32]);
        let secret = if confidential { Some(Secret::random()?) } else { None };
        let hash = secret.as_ref().map(|s| s.hash(pepper).0.to_vec());
        let uris = serde_json::to_string(redirect_uris)
            .map_err(|e| failed(&self.path, format!("redirect URIs would not write: {e}")))?;
        let created = now();
        let conn = self.lock();
        conn.execute(
            "INSERT INTO oauth_apps (client_id, name, redirect_uris, secret, created, used)
             VALUES (?1, ?2, ?3, ?4, ?5, NULL)",
            params![client_id, name, uris, hash, created],
        )
        .map_err(|e| failed(&self.path, e))?;
        // Past the ceiling, the oldest applications that never reached a consent go.
        conn.execute(
            "DELETE FROM oauth_apps WHERE used IS NULL AND client_id IN (
                 SELECT client_id FROM oauth_apps WHERE used IS NULL
                 ORDER BY created DESC LIMIT -1 OFFSET ?1)",
            [UNUSED_APPS_KEPT],
        )
        .map_err(|e| failed(&self.path, e))?;
        let app = App {
            client_id,
            name: name.to_string(),
            redirect_uris: redirect_uris.to_vec(),
            confidential,
            created,
        };
        Ok((app, secret))
    }

    /// Keeps a client ID metadata document's application (its `client_id` the document's
    /// URL; public, no secret), refreshed in place when fetched again.
    pub(crate) fn remember_document(
        &self,
        client_id: &str,
        name: &str,
        redirect_uris: &[String],
    ) -> Result<App> {
        let uris = serde_json::to_string(redirect_uris)
            .map_err(|e| failed(&self.path, format!("redirect URIs would not write: {e}")))?;
        let created = now();
        self.lock()
            .execute(
                "INSERT INTO oauth_apps (client_id, name, redirect_uris, secret, created, used)
                 VALUES (?1, ?2, ?3, NULL, ?4, NULL)
                 ON CONFLICT (client_id) DO UPDATE SET name = excluded.name,
                     redirect_uris = excluded.redirect_uris, created = excluded.created",
                params![client_id, name, uris, created],
            )
            .map_err(|e| failed(&self.path, e))?;
        Ok(App {
            client_id: client_id.to_string(),
            name: name.to_string(),
            redirect_uris: redirect_uris.to_vec(),
            confidential: false,
            created,
        })
    }

    /// The registered application `client_id`, if any.
    pub(crate) fn app(&self, client_id: &str) -> Result<Option<App>> {
        let conn = self.lock();
        let row = conn
            .query_row(
                "SELECT client_id, name, redirect_uris, secret, created FROM oauth_apps
                 WHERE client_id = ?1",
                [client_id],
                app_from_row,
            )
            .optional()
            .map_err(|e| failed(&self.path, e))?;
        let Some((mut app, uris)) = row else { return Ok(None) };
        app.redirect_uris = serde_json::from_str(&uris).map_err(|e| {
            failed(&self.path, format!("the redirect URIs of '{client_id}' do not read: {e}"))
        })?;
        Ok(Some(app))
    }

    /// Whether `presented` is the client secret of `client_id` (an application without one
    /// needs none, and any presented is ignored).
    pub(crate) fn app_secret_ok(
        &self,
        pepper: &Pepper,
        client_id: &str,
        presented: Option<&str>,
    ) -> Result<bool> {
        let conn = self.lock();
        let stored: Option<Option<Vec<u8>>> = conn
            .query_row("SELECT secret FROM oauth_apps WHERE client_id = ?1", [client_id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| failed(&self.path, e))?;
        Ok(match stored {
            None => false,
            Some(None) => true,
            Some(Some(hash)) => presented
                .and_then(|p| Secret::parse(p.trim()))
                .is_some_and(|s| s.hash(pepper).same(&hash)),
        })
    }

    /// The owner's consent: makes the client `grant.client` (kind `oauth`, for `auth.app`)
    /// and a code bound to `auth`, returned once.
    pub(crate) fn consent(
        &self,
        pepper: &Pepper,
        grant: &Grant,
        auth: &Authorization,
    ) -> Result<Secret> {
        super::clients::check_name(&grant.client)?;
        let code = Secret::random()?;
        let hash = code.hash(pepper);
        let at = now();
        let text = serde_json::to_string(grant)
            .map_err(|e| failed(&self.path, format!("a grant would not write: {e}")))?;
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| failed(&self.path, e))?;
        super::clients::make_room(&tx, &self.path, &grant.client)?;
        tx.execute(
            "INSERT INTO clients (name, kind, created, revoked, grant_json, app)
             VALUES (?1, 'oauth', ?2, NULL, ?3, ?4)",
            params![grant.client, at, text, auth.app],
        )
        .and_then(|_| {
            tx.execute(
                "INSERT INTO oauth_codes
                     (hash, app, client, redirect_uri, challenge, resource, expires, used)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL)",
                params![
                    hash.0.as_slice(),
                    auth.app,
                    grant.client,
                    auth.redirect_uri,
                    auth.challenge,
                    auth.resource,
                    at + CODE_SECONDS
                ],
            )
        })
        .and_then(|_| {
            tx.execute(
                "UPDATE oauth_apps SET used = ?2 WHERE client_id = ?1",
                params![auth.app, at],
            )
        })
        .map_err(|e| failed(&self.path, e))?;
        tx.commit().map_err(|e| failed(&self.path, e))?;
        Ok(code)
    }

    /// Exchanges a code: it must be live, unused, and bound to this application, redirect URI
    /// (when the request names one), resource, and a challenge `verifier` answers. A second
    /// use revokes the client the code made.
    pub(crate) fn redeem_code(
        &self,
        pepper: &Pepper,
        x: &Exchange,
        access_seconds: i64,
    ) -> Outcome {
        let Exchange { code, app, redirect_uri, verifier, resource } = x;
        let Some(secret) = Secret::parse(code.trim()) else {
            return Ok(Err(Refusal::InvalidGrant("the code is not one this server issued".into())));
        };
        let hash = secret.hash(pepper);
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| failed(&self.path, e))?;
        let row = tx
            .query_row(
                "SELECT app, client, redirect_uri, challenge, resource, expires, used
                 FROM oauth_codes WHERE hash = ?1",
                [hash.0.as_slice()],
                |r| {
                    Ok(CodeRow {
                        app: r.get(0)?,
                        client: r.get(1)?,
                        redirect_uri: r.get(2)?,
                        challenge: r.get(3)?,
                        resource: r.get(4)?,
                        expires: r.get(5)?,
                        used: r.get(6)?,
                    })
                },
            )
            .optional()
            .map_err(|e| failed(&self.path, e))?;
        let Some(CodeRow {
            app: bound_app,
            client,
            redirect_uri: bound_redirect,
            challenge,
            resource: bound_resource,
            expires,
            used,
        }) = row
        else {
            return Ok(Err(Refusal::InvalidGrant(
                "the code is unknown or expired; start the sign-in again".into(),
            )));
        };
        let at = now();
        if used.is_some() {
            super::clients::revoke_in(&tx, &self.path, &client, at)?;
            tx.commit().map_err(|e| failed(&self.path, e))?;
            return Ok(Err(Refusal::InvalidGrant(format!(
                "the code was used already, so it may have been copied: the client '{client}' \
                 is revoked; sign in again"
            ))));
        }
        let refusal = if expires <= at {
            Some("the code has expired; start the sign-in again")
        } else if bound_app != *app {
            Some("the code was issued to another application")
        } else if redirect_uri.as_ref().is_some_and(|r| *r != bound_redirect) {
            Some("the redirect_uri is not the one the code was sent to")
        } else if bound_resource != *resource {
            Some("the code was issued for another resource")
        } else if !pkce_matches(&challenge, verifier) {
            Some("the code_verifier does not match the code_challenge")
        } else {
            None
        };
        if let Some(why) = refusal {
            return Ok(Err(Refusal::InvalidGrant(why.into())));
        }
        tx.execute(
            "UPDATE oauth_codes SET used = ?2 WHERE hash = ?1",
            params![hash.0.as_slice(), at],
        )
        .map_err(|e| failed(&self.path, e))?;
        let issued = issue(&tx, &self.path, pepper, &client, app, resource, access_seconds)?;
        tx.commit().map_err(|e| failed(&self.path, e))?;
        Ok(Ok(issued))
    }

    /// Exchanges a refresh token for a new pair (rotation): it must be live, unused and this
    /// application's (`app`; a request that names none is taken for the application the
    /// token was issued to, if that one has no secret). A second use revokes its client.
    pub(crate) fn refresh(
        &self,
        pepper: &Pepper,
        token: &str,
        app: Option<&str>,
        access_seconds: i64,
    ) -> Outcome {
        let Some(secret) = Secret::parse(token.trim()) else {
            return Ok(Err(Refusal::InvalidGrant(
                "the refresh token is not one this server issued".into(),
            )));
        };
        let hash = secret.hash(pepper);
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| failed(&self.path, e))?;
        let row: Option<(String, String, String, i64, Option<i64>)> = tx
            .query_row(
                "SELECT r.client, r.app, r.resource, r.expires, r.used FROM refresh_tokens r
                 JOIN clients c ON c.name = r.client AND c.revoked IS NULL
                 WHERE r.hash = ?1",
                [hash.0.as_slice()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()
            .map_err(|e| failed(&self.path, e))?;
        let at = now();
        let Some((client, bound_app, resource, expires, used)) = row else {
            return Ok(Err(Refusal::InvalidGrant(
                "the refresh token is unknown, expired or revoked; sign in again".into(),
            )));
        };
        if used.is_some() {
            super::clients::revoke_in(&tx, &self.path, &client, at)?;
            tx.commit().map_err(|e| failed(&self.path, e))?;
            return Ok(Err(Refusal::InvalidGrant(format!(
                "the refresh token was used already, so it may have been copied: the client \
                 '{client}' is revoked; sign in again"
            ))));
        }
        if expires <= at {
            return Ok(Err(Refusal::InvalidGrant(
                "the refresh token has expired; sign in again".into(),
            )));
        }
        let app = match app {
            Some(a) => a.to_string(),
            None => {
                let confidential: bool = tx
                    .query_row(
                        "SELECT secret IS NOT NULL FROM oauth_apps WHERE client_id = ?1",
                        [&bound_app],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(|e| failed(&self.path, e))?
                    .unwrap_or(false);
                if confidential {
                    return Ok(Err(Refusal::InvalidClient(
                        "the application has a secret; send its client_id and client_secret".into(),
                    )));
                }
                bound_app.clone()
            }
        };
        if bound_app != app {
            return Ok(Err(Refusal::InvalidGrant(
                "the refresh token was issued to another application".into(),
            )));
        }
        tx.execute(
            "UPDATE refresh_tokens SET used = ?2 WHERE hash = ?1",
            params![hash.0.as_slice(), at],
        )
        .map_err(|e| failed(&self.path, e))?;
        let issued = issue(&tx, &self.path, pepper, &client, &app, &resource, access_seconds)?;
        tx.commit().map_err(|e| failed(&self.path, e))?;
        Ok(Ok(issued))
    }

    /// Revokes the client whose access or refresh token `token` is (RFC 7009); its name, or
    /// `None` when the token is unknown (which the endpoint answers the same way).
    pub(crate) fn revoke_token(&self, pepper: &Pepper, token: &str) -> Result<Option<String>> {
        let Some(secret) = Secret::parse(token.trim()) else { return Ok(None) };
        let hash = secret.hash(pepper);
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| failed(&self.path, e))?;
        let client: Option<String> = tx
            .query_row(
                "SELECT client FROM tokens WHERE hash = ?1
                 UNION SELECT client FROM refresh_tokens WHERE hash = ?1",
                [hash.0.as_slice()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| failed(&self.path, e))?;
        // Only an OAuth client goes this way: a static token is revoked by its owner.
        let oauth = match &client {
            Some(name) => tx
                .query_row("SELECT kind = 'oauth' FROM clients WHERE name = ?1", [name], |r| {
                    r.get::<_, bool>(0)
                })
                .optional()
                .map_err(|e| failed(&self.path, e))?
                .unwrap_or(false),
            None => false,
        };
        let Some(name) = client.filter(|_| oauth) else { return Ok(None) };
        super::clients::revoke_in(&tx, &self.path, &name, now())?;
        tx.commit().map_err(|e| failed(&self.path, e))?;
        Ok(Some(name))
    }

    /// Removes expired codes and refresh tokens, and applications that never reached a
    /// consent within a day; how many rows went.
    pub(super) fn prune_oauth(&self, now: i64) -> Result<usize> {
        let conn = self.lock();
        let mut gone = 0;
        for (sql, at) in [
            ("DELETE FROM oauth_codes WHERE expires <= ?1", now),
            ("DELETE FROM refresh_tokens WHERE expires <= ?1", now),
            (
                "DELETE FROM oauth_apps WHERE used IS NULL AND created <= ?1",
                now - UNUSED_APP_SECONDS,
            ),
        ] {
            gone += conn.execute(sql, [at]).map_err(|e| failed(&self.path, e))?;
        }
        Ok(gone)
    }
}

/// Hands out a new access and refresh token for `client`, inside the caller's transaction.
fn issue(
    tx: &rusqlite::Transaction<'_>,
    path: &std::path::Path,
    pepper: &Pepper,
    client: &str,
    app: &str,
    resource: &str,
    access_seconds: i64,
) -> Result<Issued> {
    let (access, refresh) = (Secret::random()?, Secret::random()?);
    let at = now();
    tx.execute(
        "INSERT INTO tokens (hash, client, created, expires) VALUES (?1, ?2, ?3, ?4)",
        params![access.hash(pepper).0.as_slice(), client, at, at + access_seconds],
    )
    .and_then(|_| {
        tx.execute(
            "INSERT INTO refresh_tokens (hash, client, app, resource, created, expires, used)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL)",
            params![
                refresh.hash(pepper).0.as_slice(),
                client,
                app,
                resource,
                at,
                at + REFRESH_SECONDS
            ],
        )
    })
    .map_err(|e| failed(path, e))?;
    Ok(Issued { access, expires_in: access_seconds, refresh, client: client.to_string() })
}

/// A refusal for a consent the owner cannot give: named, with what to do.
pub(crate) fn unknown_app(client_id: &str) -> Error {
    Error::new(
        ErrorCode::InvalidRequest,
        format!(
            "no application is registered as '{client_id}'; start the connection again from the \
             application, which registers itself first"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pepper() -> Pepper {
        Pepper::new([7; 32])
    }

    /// A verifier and its S256 challenge, computed apart from the crate (Python's hashlib and
    /// base64, URL-safe without padding).
    const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K27uhbUFU2p9yaMY-fR5oK4R9I";
    const CHALLENGE: &str = "j88RvNAjstVD_IljkeKYsjY1xuhRbFlSoAnf0zRDWwA";

    fn grant(name: &str) -> Grant {
        Grant {
            client: name.into(),
            vaults: vec!["main".into()],
            allow: vec!["Inbox".into()],
            deny: Vec::new(),
            read_only: true,
            tools: Vec::new(),
        }
    }

    /// A store with one registered application and a consent for it; the code.
    fn consented(dir: &std::path::Path) -> (Credentials, App, String) {
        let creds = Credentials::open(dir).unwrap();
        let uris = vec!["http://127.0.0.1:9/cb".to_string()];
        let (app, secret) = creds.register_app(&pepper(), "Test app", &uris, false).unwrap();
        assert!(secret.is_none() && !app.confidential);
        let auth = Authorization {
            app: app.client_id.clone(),
            redirect_uri: uris[0].clone(),
            challenge: CHALLENGE.into(),
            resource: "http://127.0.0.1:9/mcp".into(),
        };
        let code = creds.consent(&pepper(), &grant("app-1"), &auth).unwrap().expose();
        (creds, app, code)
    }

    fn exchange(app: &App, code: &str, verifier: &str) -> Exchange {
        Exchange {
            code: code.into(),
            app: app.client_id.clone(),
            redirect_uri: Some("http://127.0.0.1:9/cb".into()),
            verifier: verifier.into(),
            resource: "http://127.0.0.1:9/mcp".into(),
        }
    }

    #[test]
    fn pkce_takes_only_the_verifier_of_the_challenge() {
        assert!(pkce_matches(CHALLENGE, VERIFIER));
        assert!(!pkce_matches(CHALLENGE, &VERIFIER.replace('d', "e")));
        assert!(!pkce_matches(CHALLENGE, "short"));
        assert!(!pkce_matches(VERIFIER, VERIFIER), "plain is never accepted");
    }

    #[test]
    fn a_code_gives_tokens_once_that_let_the_consented_grant_in() {
        let dir = tempfile::tempdir().unwrap();
        let (creds, app, code) = consented(dir.path());
        let wrong = creds.redeem_code(&pepper(), &exchange(&app, &code, &"x".repeat(43)), 60);
        assert!(matches!(wrong.unwrap(), Err(Refusal::InvalidGrant(_))));
        let issued =
            creds.redeem_code(&pepper(), &exchange(&app, &code, VERIFIER), 60).unwrap().unwrap();
        assert_eq!(issued.client, "app-1");
        assert_eq!(
            creds.client_of(&pepper(), &issued.access.expose()).unwrap(),
            Some(grant("app-1"))
        );
        // A second use is a replay: refused, and the client revoked with its tokens.
        let again = creds.redeem_code(&pepper(), &exchange(&app, &code, VERIFIER), 60).unwrap();
        assert!(matches!(again, Err(Refusal::InvalidGrant(m)) if m.contains("revoked")));
        assert_eq!(creds.client_of(&pepper(), &issued.access.expose()).unwrap(), None);
    }

    #[test]
    fn a_code_is_bound_to_its_application_redirect_and_resource() {
        let dir = tempfile::tempdir().unwrap();
        let (creds, app, code) = consented(dir.path());
        for bad in [
            Exchange { app: "mdv-other".into(), ..exchange(&app, &code, VERIFIER) },
            Exchange {
                redirect_uri: Some("http://127.0.0.1:9/other".into()),
                ..exchange(&app, &code, VERIFIER)
            },
            Exchange {
                resource: "http://127.0.0.1:9/v/x/mcp".into(),
                ..exchange(&app, &code, VERIFIER)
            },
        ] {
            assert!(matches!(
                creds.redeem_code(&pepper(), &bad, 60).unwrap(),
                Err(Refusal::InvalidGrant(_))
            ));
        }
        // A redirect_uri left out of the token request is not held against it.
        let x = Exchange { redirect_uri: None, ..exchange(&app, &code, VERIFIER) };
        assert!(creds.redeem_code(&pepper(), &x, 60).unwrap().is_ok());
    }

    #[test]
    fn a_refresh_rotates_and_a_replayed_one_revokes_the_client() {
        let dir = tempfile::tempdir().unwrap();
        let (creds, app, code) = consented(dir.path());
        let first =
            creds.redeem_code(&pepper(), &exchange(&app, &code, VERIFIER), 60).unwrap().unwrap();
        let old = first.refresh.expose();
        let second = creds.refresh(&pepper(), &old, Some(&app.client_id), 60).unwrap().unwrap();
        assert_ne!(second.refresh.expose(), old);
        assert!(creds.client_of(&pepper(), &second.access.expose()).unwrap().is_some());
        // Without a client_id, a public application's token still refreshes.
        let third = creds.refresh(&pepper(), &second.refresh.expose(), None, 60).unwrap().unwrap();
        let replay = creds.refresh(&pepper(), &old, Some(&app.client_id), 60).unwrap();
        assert!(matches!(replay, Err(Refusal::InvalidGrant(m)) if m.contains("revoked")));
        assert_eq!(creds.client_of(&pepper(), &third.access.expose()).unwrap(), None);
        let refused = creds.refresh(&pepper(), &third.refresh.expose(), None, 60).unwrap();
        assert!(refused.is_err(), "a revoked client's refresh token is worth nothing");
    }

    #[test]
    fn revoking_any_token_revokes_its_oauth_client_and_only_that() {
        let dir = tempfile::tempdir().unwrap();
        let (creds, app, code) = consented(dir.path());
        let issued =
            creds.redeem_code(&pepper(), &exchange(&app, &code, VERIFIER), 60).unwrap().unwrap();
        assert_eq!(creds.revoke_token(&pepper(), "unknown").unwrap(), None);
        let (script, _) = creds
            .create_client(&pepper(), &grant("script"), super::super::clients::Kind::Token)
            .unwrap();
        assert_eq!(
            creds.revoke_token(&pepper(), &script.expose()).unwrap(),
            None,
            "a static token is its owner's to revoke"
        );
        assert_eq!(
            creds.revoke_token(&pepper(), &issued.refresh.expose()).unwrap().as_deref(),
            Some("app-1")
        );
        assert_eq!(creds.client_of(&pepper(), &issued.access.expose()).unwrap(), None);
        assert!(creds.client_of(&pepper(), &script.expose()).unwrap().is_some());
        let listed = creds.clients().unwrap();
        let app_row = listed.iter().find(|c| c.name == "app-1").unwrap();
        assert_eq!(
            (app_row.kind.as_str(), app_row.app.as_deref()),
            ("oauth", Some(app.client_id.as_str()))
        );
        assert!(app_row.revoked.is_some());
    }

    #[test]
    fn a_confidential_application_must_show_its_secret() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        let (app, secret) = creds
            .register_app(&pepper(), "Server app", &["https://a.example/cb".into()], true)
            .unwrap();
        let secret = secret.unwrap().expose();
        assert!(app.confidential);
        assert!(creds.app_secret_ok(&pepper(), &app.client_id, Some(&secret)).unwrap());
        assert!(!creds.app_secret_ok(&pepper(), &app.client_id, None).unwrap());
        assert!(!creds.app_secret_ok(&pepper(), &app.client_id, Some("0")).unwrap());
        assert!(!creds.app_secret_ok(&pepper(), "mdv-unknown", None).unwrap());
        assert_eq!(
            creds.app(&app.client_id).unwrap().unwrap().redirect_uris,
            ["https://a.example/cb"]
        );
    }

    #[test]
    fn applications_that_never_reached_a_consent_go_after_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let (creds, used, _) = consented(dir.path());
        let (unused, _) = creds
            .register_app(&pepper(), "Drive-by", &["https://a.example/cb".into()], false)
            .unwrap();
        creds.prune_oauth(now() + UNUSED_APP_SECONDS + 1).unwrap();
        assert!(creds.app(&unused.client_id).unwrap().is_none());
        assert!(creds.app(&used.client_id).unwrap().is_some());
    }
}
