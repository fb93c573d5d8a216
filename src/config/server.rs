//! The HTTP server's settings (`server:`): where it listens, which Hosts and Origins it
//! accepts, TLS, the public address the OAuth metadata names, OAuth's lifetimes and whether the
//! owner's key is kept to this machine. Read from the file's `server:` block and
//! `MDVAULT_LISTEN`, validated here once.

use super::raw::{RawServer, StringList};
use super::{ConfigError, Env, err};

/// HTTP server settings (`server.*`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerSettings {
    /// The address `serve` binds (`MDVAULT_LISTEN` and `--listen` override it).
    pub(crate) listen: String,
    /// Extra `Host` values accepted besides the loopback forms (`localhost`, `127.0.0.1`,
    /// `[::1]`, any port); `*` accepts any host.
    pub(crate) allowed_hosts: Vec<String>,
    /// Extra browser origins accepted besides loopback ones (`http://localhost:*` and the like);
    /// `*` accepts any origin. A request without `Origin` is never refused for it.
    pub(crate) allowed_origins: Vec<String>,
    /// The largest request body accepted, in bytes.
    pub(crate) max_body_bytes: u64,
    /// Serve HTTPS with a self-signed certificate kept in the data directory (made on the
    /// first start), as the Local REST API plugin does; off by default.
    pub(crate) tls: bool,
    /// Refuse `Target-Type`/`Target` headers sent without `Markdown-Patch-Version` with the
    /// plugin 5.1's 40083/40084, instead of reading them as the 1.x format as the predecessor
    /// and the plugin's most-used clients expect; off by default.
    pub(crate) strict_patch_version: bool,
    /// The address the server is reached at from outside (`https://notes.example.org`), no
    /// trailing slash: what the OAuth metadata names, and a Host that is allowed. `None`: the
    /// metadata names the request's own (allowed) Host.
    pub(crate) public_url: Option<String>,
    /// Whether remote MCP clients may sign in with OAuth 2.1 (`src/api/oauth/`); on by default.
    pub(crate) oauth: bool,
    /// How long an OAuth access token lets its client in, in seconds (its refresh token lasts
    /// 30 days, renewed at each use).
    pub(crate) oauth_access_seconds: u64,
    /// Accept the owner's key (bearer and web sign-in) only on requests made on this machine
    /// (`api::guard::made_here`); off by default.
    pub(crate) owner_loopback_only: bool,
}

/// `server.public_url` as kept: an absolute `http` or `https` URL with no query or fragment,
/// its trailing slashes gone, so `<public_url>/mcp` is the MCP endpoint's address.
fn public_url(raw: Option<String>) -> Result<Option<String>, ConfigError> {
    let Some(raw) = raw.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let bad = |why: &str| {
        err(format!(
            "server.public_url '{raw}' {why}; give the address clients reach the server at, \
             such as https://notes.example.org"
        ))
    };
    let url = url::Url::parse(&raw).map_err(|e| bad(&format!("is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad("is not an http or https address"));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(bad("has a query, a fragment or a user name"));
    }
    Ok(Some(url.as_str().trim_end_matches('/').to_string()))
}

/// `server:`; `MDVAULT_LISTEN` beats the file's `listen`.
pub(super) fn server_settings(sv: RawServer, env: &dyn Env) -> Result<ServerSettings, ConfigError> {
    let listen = env
        .var("MDVAULT_LISTEN")
        .filter(|s| !s.trim().is_empty())
        .or(sv.listen)
        .unwrap_or_else(|| "127.0.0.1:8080".to_string())
        .trim()
        .to_string();
    Ok(ServerSettings {
        listen,
        allowed_hosts: sv.allowed_hosts.map(StringList::into_vec).unwrap_or_default(),
        allowed_origins: sv.allowed_origins.map(StringList::into_vec).unwrap_or_default(),
        max_body_bytes: sv.max_body_bytes.unwrap_or(64 * 1024 * 1024).max(1024),
        tls: sv.tls.unwrap_or(false),
        strict_patch_version: sv.strict_patch_version.unwrap_or(false),
        public_url: public_url(sv.public_url)?,
        oauth: sv.oauth.unwrap_or(true),
        owner_loopback_only: sv.owner_loopback_only.unwrap_or(false),
        oauth_access_seconds: match sv.oauth_access_seconds.unwrap_or(3600) {
            0 => return Err(err("server.oauth_access_seconds must be at least 1")),
            n => n,
        },
    })
}
