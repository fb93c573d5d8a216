//! Client ID metadata documents: a client whose `client_id` is an `https` URL (Claude's way
//! when a server offers it) is not registered beforehand; its metadata is the JSON document at
//! that URL, fetched when an authorization names it and kept as a registered application for a
//! day, so the token endpoint knows it as a public client.
//!
//! The fetch is the one place the server reaches out on a caller's say-so, so it is held
//! tight: `https` only, a host that resolves to no loopback, private, link-local or otherwise
//! internal address (a client must not make the server probe its own network), no redirects, a
//! timeout and a small body. The document must name itself (`client_id` equal to its URL) and
//! its redirect URIs, which are held to registration's rule, and may not ask for a secret.

use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

use serde::Deserialize;

use super::request::acceptable_redirect;

/// The largest document read.
const MAX_BYTES: u64 = 5 * 1024;

/// How long a fetch may take, all told.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Whether a `client_id` is a metadata document's URL: `https` with a path past the root.
pub(crate) fn is_document_url(client_id: &str) -> bool {
    url::Url::parse(client_id)
        .is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some() && u.path() != "/")
}

/// What a document says, as read.
#[derive(Debug, Deserialize)]
struct Document {
    client_id: String,
    client_name: Option<String>,
    #[serde(default)]
    redirect_uris: Vec<String>,
    token_endpoint_auth_method: Option<String>,
}

/// A document's name and redirect URIs, checked against the URL it came from.
pub(crate) fn read_document(url: &str, body: &[u8]) -> Result<(String, Vec<String>), String> {
    let doc: Document = serde_json::from_slice(body).map_err(|e| {
        format!("the client's metadata document at {url} is not valid JSON metadata: {e}")
    })?;
    if doc.client_id != url {
        return Err(format!(
            "the client's metadata document at {url} names another client_id ('{}')",
            doc.client_id
        ));
    }
    if doc.redirect_uris.is_empty() {
        return Err(format!("the client's metadata document at {url} lists no redirect_uris"));
    }
    for uri in &doc.redirect_uris {
        acceptable_redirect(uri)?;
    }
    if doc.token_endpoint_auth_method.as_deref().is_some_and(|m| m != "none") {
        return Err(format!(
            "the client's metadata document at {url} asks for a client secret, which a \
             document cannot hold; it must use token_endpoint_auth_method none"
        ));
    }
    let host = url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string));
    let name = doc
        .client_name
        .map(|n| n.trim().chars().filter(|c| !c.is_control()).take(100).collect::<String>())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| host.unwrap_or_default());
    Ok((name, doc.redirect_uris))
}

/// Whether an address is one a fetch on a caller's say-so must not reach.
fn internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.octets()[0] == 100 && (64..128).contains(&v4.octets()[1]) // shared (CGNAT)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xfe00) == 0xfc00 // unique local
                || (v6.segments()[0] & 0xffc0) == 0xfe80 // link local
                || v6.to_ipv4_mapped().is_some_and(|v4| internal(IpAddr::V4(v4)))
        }
    }
}

/// Fetches the document at `url` (blocking; run it off the async workers).
pub(crate) fn fetch(url: &str) -> Result<(String, Vec<String>), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("'{url}' is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default().to_string();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addrs: Vec<IpAddr> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| format!("the client's host {host} does not resolve: {e}"))?
        .map(|a| a.ip())
        .collect();
    if addrs.is_empty() || addrs.iter().any(|ip| internal(*ip)) {
        return Err(format!(
            "the client's metadata document is on {host}, which is not a public address; \
             nothing was fetched"
        ));
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .https_only(true)
        .max_redirects(0)
        .timeout_global(Some(TIMEOUT))
        .build()
        .into();
    let mut resp = agent.get(url).header("Accept", "application/json").call().map_err(|e| {
        format!("the client's metadata document at {url} could not be fetched: {e}")
    })?;
    let body =
        resp.body_mut().with_config().limit(MAX_BYTES).read_to_vec().map_err(|e| {
            format!("the client's metadata document at {url} could not be read: {e}")
        })?;
    read_document(url, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://claude.ai/oauth/mcp-oauth-client-metadata";

    #[test]
    fn a_document_url_is_https_with_a_path() {
        assert!(is_document_url(URL));
        for no in ["mdv-0123", "https://claude.ai/", "http://claude.ai/x", "https:///x"] {
            assert!(!is_document_url(no), "{no}");
        }
    }

    #[test]
    fn a_document_must_name_itself_and_safe_redirects_and_no_secret() {
        let good = format!(
            r#"{{"client_id": "{URL}", "client_name": "Claude", "redirect_uris":
            ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "none",
            "logo_uri": "https://claude.ai/logo.png"}}"#
        );
        let (name, uris) = read_document(URL, good.as_bytes()).unwrap();
        assert_eq!((name.as_str(), uris.len()), ("Claude", 1));
        let other = good.replace(URL, "https://evil.example/doc");
        assert!(read_document(URL, other.as_bytes()).unwrap_err().contains("another client_id"));
        let unsafe_redirect = good.replace("https://claude.ai/api", "http://evil.example/api");
        assert!(read_document(URL, unsafe_redirect.as_bytes()).is_err());
        let secret = good.replace("\"none\"", "\"client_secret_basic\"");
        assert!(read_document(URL, secret.as_bytes()).unwrap_err().contains("secret"));
        assert!(read_document(URL, b"<html>").is_err());
        let nameless =
            format!(r#"{{"client_id": "{URL}", "redirect_uris": ["https://claude.ai/cb"]}}"#);
        assert_eq!(read_document(URL, nameless.as_bytes()).unwrap().0, "claude.ai");
    }

    #[test]
    fn internal_addresses_are_never_fetched() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.1.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "0.0.0.0",
        ] {
            assert!(internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["1.1.1.1", "2606:4700::1111"] {
            assert!(!internal(ip.parse().unwrap()), "{ip}");
        }
        assert!(fetch("https://127.0.0.1/doc").unwrap_err().contains("not a public address"));
        assert!(fetch("https://localhost/doc").unwrap_err().contains("not a public address"));
    }
}
