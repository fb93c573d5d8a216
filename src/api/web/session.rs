//! The web page's session cookie: made at sign-in, checked on every page, ended at sign-out.
//!
//! The cookie's value is a session's secret: 32 random bytes as hex, of which the server keeps
//! only a hash, in the data directory's credentials file (`crate::auth`). So a sign-out or a
//! revocation (from the page, or `mdvault sessions revoke` in another process) refuses the old
//! cookie on its next request, sessions survive a restart, and every mdvault process serving
//! the same data directory knows the same sessions. The hash is peppered with a secret derived
//! from the API key, so changing `MDVAULT_API_KEY` still ends every session at once. The cookie
//! is `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page sends it),
//! scoped to `/ui`, and `Secure` when the page was reached over TLS.
//!
//! It does not decide which routes need a session; `web/mod.rs` does.

use std::net::SocketAddr;
use std::sync::Arc;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::blocking;
use crate::auth::sessions::{Client, Revoke, Session};
use crate::auth::{Credentials, Hash, Pepper};
use crate::error::Result;

type HmacSha256 = Hmac<Sha256>;

/// The cookie's name.
pub(crate) const COOKIE: &str = "mdvault_ui";

/// How long a sign-in lasts: a working day, so a page left open overnight asks again.
pub(crate) const LIFETIME_SECONDS: i64 = 12 * 60 * 60;

/// The session a request was admitted with, put in its extensions by the gate (so a page can
/// mark it, and sign-out and revocation know it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Current(pub Hash);

/// Makes, checks and ends sessions in the credentials file.
#[derive(Clone)]
pub(crate) struct Sessions {
    store: Arc<Credentials>,
    pepper: Pepper,
}

impl Sessions {
    /// Sessions kept in `store`, hashed under a pepper derived from this API key (an HMAC of a
    /// fixed label under the key, so the key itself hashes nothing a browser holds).
    pub(crate) fn new(store: Arc<Credentials>, api_key: &str) -> Sessions {
        let mut mac = HmacSha256::new_from_slice(api_key.trim().as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"mdvault web session v2");
        Sessions { store, pepper: Pepper::new(mac.finalize().into_bytes().into()) }
    }

    /// Starts a session for this client; the cookie value (its secret).
    pub(crate) async fn issue(&self, client: Client) -> Result<String> {
        let (store, pepper) = (self.store.clone(), self.pepper.clone());
        blocking(move || {
            let (secret, _) = store.start_session(&pepper, &client, LIFETIME_SECONDS)?;
            Ok(secret.expose())
        })
        .await
    }

    /// The live session a cookie value opens, if any.
    pub(crate) async fn check(&self, value: String) -> Result<Option<Hash>> {
        let (store, pepper) = (self.store.clone(), self.pepper.clone());
        blocking(move || store.check_session(&pepper, &value)).await
    }

    /// Ends the session a cookie value opens (sign-out).
    pub(crate) async fn end(&self, value: String) -> Result<()> {
        let (store, pepper) = (self.store.clone(), self.pepper.clone());
        blocking(move || store.end_session(&pepper, &value).map(drop)).await
    }

    /// Every live session, the most recently seen first.
    pub(crate) async fn list(&self) -> Result<Vec<Session>> {
        let store = self.store.clone();
        blocking(move || store.sessions()).await
    }

    /// Ends the sessions `which` names; those it ended.
    pub(crate) async fn revoke(&self, which: Revoke) -> Result<Vec<Session>> {
        let store = self.store.clone();
        blocking(move || store.revoke(&which)).await
    }
}

/// The client a sign-in is recorded as: its `User-Agent` and the connection's peer address
/// (a proxy in front shows as itself; its forwarding headers are anyone's to write).
pub(crate) fn client(headers: &http::HeaderMap, peer: Option<SocketAddr>) -> Client {
    Client {
        user_agent: headers
            .get(http::header::USER_AGENT)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default(),
        remote: peer.map(|p| p.ip().to_string()).unwrap_or_default(),
    }
}

/// The session cookie's value among a request's `Cookie` headers, if any.
pub(crate) fn from_headers(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_string())
}

/// The `Set-Cookie` value that starts a session.
pub(crate) fn set_cookie(value: &str, secure: bool) -> String {
    format!(
        "{COOKIE}={value}; Path=/ui; Max-Age={LIFETIME_SECONDS}; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that ends one (sign-out).
pub(crate) fn clear_cookie(secure: bool) -> String {
    format!(
        "{COOKIE}=; Path=/ui; Max-Age=0; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions(dir: &std::path::Path, key: &str) -> Sessions {
        Sessions::new(Arc::new(Credentials::open(dir).unwrap()), key)
    }

    #[tokio::test]
    async fn a_cookie_opens_its_session_until_sign_out_and_never_under_another_key() {
        let dir = tempfile::tempdir().unwrap();
        let s = sessions(dir.path(), "key-one");
        let cookie = s.issue(Client::default()).await.unwrap();
        assert_eq!(cookie.len(), 64, "{cookie}");
        assert!(s.check(cookie.clone()).await.unwrap().is_some());
        // The same file, a server started with another key: not a session there.
        assert!(sessions(dir.path(), "key-two").check(cookie.clone()).await.unwrap().is_none());
        s.end(cookie.clone()).await.unwrap();
        assert!(s.check(cookie).await.unwrap().is_none());
    }

    #[test]
    fn the_client_is_its_user_agent_and_peer_address() {
        let mut h = http::HeaderMap::new();
        h.insert(http::header::USER_AGENT, "Firefox/140".parse().unwrap());
        let c = client(&h, Some("[::1]:5000".parse().unwrap()));
        assert_eq!((c.user_agent.as_str(), c.remote.as_str()), ("Firefox/140", "::1"));
        assert_eq!(client(&http::HeaderMap::new(), None).remote, "");
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut h = http::HeaderMap::new();
        h.append(http::header::COOKIE, "a=1; mdvault_ui=5.ab".parse().unwrap());
        assert_eq!(from_headers(&h).as_deref(), Some("5.ab"));
        assert_eq!(from_headers(&http::HeaderMap::new()), None);
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_over_tls() {
        let plain = set_cookie("v", false);
        assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Strict"));
        assert!(!plain.contains("Secure"));
        assert!(set_cookie("v", true).ends_with("; Secure"));
        assert!(clear_cookie(false).contains("Max-Age=0"));
    }
}
