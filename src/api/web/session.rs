//! The web page's session cookie: made at sign-in, checked on every page, cleared at sign-out.
//!
//! The value is `<expiry>.<mac>`: the Unix second the session ends and HMAC-SHA256 over it,
//! keyed by a secret derived from the API key. So nothing is stored server-side, a cookie
//! cannot be forged or stretched without the key, and changing `MDVAULT_API_KEY` ends every
//! session at once. The cookie is `HttpOnly` (no script reads it), `SameSite=Strict` (no other
//! site's page sends it), scoped to `/ui`, and `Secure` when the page was reached over TLS.
//!
//! It does not decide which routes need a session; `web/mod.rs` does.

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The cookie's name.
pub const COOKIE: &str = "mdvault_ui";

/// How long a sign-in lasts: a working day, so a page left open overnight asks again.
pub const LIFETIME_SECONDS: u64 = 12 * 60 * 60;

/// What signs and checks session cookies.
#[derive(Clone)]
pub struct Sessions {
    secret: [u8; 32],
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

impl Sessions {
    /// Sessions for this API key. The signing secret is derived (HMAC of a fixed label under
    /// the key) rather than the key itself, so the key never signs anything a browser holds.
    pub fn new(api_key: &str) -> Sessions {
        let mut mac = HmacSha256::new_from_slice(api_key.trim().as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"mdvault web session v1");
        let mut secret = [0u8; 32];
        secret.copy_from_slice(&mac.finalize().into_bytes());
        Sessions { secret }
    }

    fn mac(&self, expiry: u64) -> HmacSha256 {
        let mut mac =
            HmacSha256::new_from_slice(&self.secret).expect("HMAC takes a key of any length");
        mac.update(expiry.to_string().as_bytes());
        mac
    }

    /// A new session's cookie value, valid for [`LIFETIME_SECONDS`] from now.
    pub fn issue(&self) -> String {
        self.issue_at(now())
    }

    fn issue_at(&self, at: u64) -> String {
        let expiry = at + LIFETIME_SECONDS;
        format!("{expiry}.{}", hex(&self.mac(expiry).finalize().into_bytes()))
    }

    /// Whether a cookie value is one this server signed and has not expired.
    pub fn valid(&self, value: &str) -> bool {
        self.valid_at(value, now())
    }

    fn valid_at(&self, value: &str, at: u64) -> bool {
        let Some((expiry, mac)) = value.split_once('.') else { return false };
        let (Ok(expiry), Some(mac)) = (expiry.parse::<u64>(), unhex(mac)) else { return false };
        // `verify_slice` compares in constant time.
        expiry > at && self.mac(expiry).verify_slice(&mac).is_ok()
    }
}

/// The session cookie's value among a request's `Cookie` headers, if any.
pub fn from_headers(headers: &http::HeaderMap) -> Option<String> {
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
pub fn set_cookie(value: &str, secure: bool) -> String {
    format!(
        "{COOKIE}={value}; Path=/ui; Max-Age={LIFETIME_SECONDS}; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that ends one (sign-out).
pub fn clear_cookie(secure: bool) -> String {
    format!(
        "{COOKIE}=; Path=/ui; Max-Age=0; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_signed_here_is_valid_until_it_expires() {
        let s = Sessions::new("key-one");
        let c = s.issue_at(1_000);
        assert!(s.valid_at(&c, 1_000));
        assert!(s.valid_at(&c, 1_000 + LIFETIME_SECONDS - 1));
        assert!(!s.valid_at(&c, 1_000 + LIFETIME_SECONDS));
    }

    #[test]
    fn a_forged_stretched_or_foreign_cookie_is_refused() {
        let s = Sessions::new("key-one");
        let c = s.issue_at(1_000);
        let (expiry, mac) = c.split_once('.').unwrap();
        let stretched = format!("{}.{mac}", expiry.parse::<u64>().unwrap() + 3_600);
        assert!(!s.valid_at(&stretched, 1_000));
        assert!(!Sessions::new("key-two").valid_at(&c, 1_000));
        for junk in ["", ".", "1.", "x.y", "99999999999.00", &format!("{expiry}.{}", &mac[2..])] {
            assert!(!s.valid_at(junk, 1_000), "{junk}");
        }
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
