//! Optional TLS (`server.tls`), as the Local REST API plugin serves HTTPS: a self-signed
//! certificate made on the first start and kept in the data directory, and the rustls
//! acceptor the accept loop in `api/mod.rs` wraps each connection in.
//!
//! The certificate (`<data>/tls/cert.pem`) and its private key (`<data>/tls/key.pem`, owner
//! read and write only) are made with rcgen (ECDSA P-256) for `localhost`, `127.0.0.1`, `::1`,
//! the address the server binds and the names on `server.allowed_hosts`, and reused on every
//! later start, so a client trusts it once. A certificate older than [`RENEW_AFTER_DAYS`] is
//! replaced at start, before it expires. The public part is what `GET
//! /obsidian-local-rest-api.crt` answers. This module decides nothing about requests; it
//! only marks those that came over TLS ([`OverTls`]) for the page's `Secure` cookie.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A request extension: the request arrived over TLS (set by the accept loop).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OverTls;

/// Where the certificate and key live, inside the data directory.
const TLS_DIR: &str = "tls";
const CERT_FILE: &str = "cert.pem";
const KEY_FILE: &str = "key.pem";

/// How long a made certificate is valid. Apple's platforms refuse a server certificate valid
/// for more than 825 days even when the user trusts it, so a year, as the plugin makes.
const VALID_DAYS: i64 = 365;
/// A kept certificate this old is replaced at start, a month before it would expire, so a
/// server that restarts now and then never serves an expired one.
pub(crate) const RENEW_AFTER_DAYS: u64 = 335;

/// The certificate the server presents, ready to serve.
pub(crate) struct Tls {
    /// The public certificate, PEM.
    pub(crate) pem: String,
    /// The acceptor for the accept loop.
    pub(crate) acceptor: TlsAcceptor,
    /// Where the certificate is kept.
    pub(crate) cert_path: PathBuf,
    /// Whether this start made it (false: an earlier one did, and it was reused).
    pub(crate) made: bool,
}

/// The names a new certificate covers: loopback, the bound address, and `allowed_hosts`
/// (ports and a `*` left out).
fn names(listen: &str, allowed_hosts: &[String]) -> Vec<String> {
    let mut out: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if let Ok(addr) = listen.parse::<std::net::SocketAddr>()
        && !addr.ip().is_unspecified()
    {
        out.push(addr.ip().to_string());
    }
    for h in allowed_hosts {
        let h = h.trim();
        let host = match h.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(v6),
            None if h.matches(':').count() == 1 => h.split(':').next().unwrap_or(h),
            None => h,
        };
        if !host.is_empty() && !host.contains('*') {
            out.push(host.to_string());
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|n| seen.insert(n.clone()));
    out
}

/// The kept certificate, or a new one when there is none (or it is due for renewal).
/// `data_dir` is the server's private data directory.
pub(crate) fn load_or_make(
    data_dir: &Path,
    listen: &str,
    allowed_hosts: &[String],
) -> Result<Tls, String> {
    let dir = data_dir.join(TLS_DIR);
    let (cert_path, key_path) = (dir.join(CERT_FILE), dir.join(KEY_FILE));
    let age = std::fs::metadata(&cert_path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok());
    let due = age.is_some_and(|a| a > Duration::from_secs(RENEW_AFTER_DAYS * 86_400));
    let made = match (cert_path.exists(), key_path.exists()) {
        (true, true) if !due => false,
        (false, true) | (true, false) => {
            return Err(format!(
                "{} holds only one of {CERT_FILE} and {KEY_FILE}; delete the folder to have a new \
                 certificate made on the next start",
                dir.display()
            ));
        }
        _ => {
            make(&dir, &cert_path, &key_path, &names(listen, allowed_hosts))?;
            true
        }
    };
    let pem = std::fs::read_to_string(&cert_path)
        .map_err(|e| format!("cannot read {}: {e}", cert_path.display()))?;
    let key =
        std::fs::read(&key_path).map_err(|e| format!("cannot read {}: {e}", key_path.display()))?;
    let broken = |what: &Path, e: &dyn std::fmt::Display| {
        format!(
            "{} is not usable ({e}); delete {} to have a new certificate made on the next start",
            what.display(),
            dir.display()
        )
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| broken(&cert_path, &e))?;
    if certs.is_empty() {
        return Err(broken(&cert_path, &"no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_slice(&key).map_err(|e| broken(&key_path, &e))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| broken(&cert_path, &e))?;
    // The server speaks HTTP/1.1 only.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Tls { pem, acceptor: TlsAcceptor::from(Arc::new(config)), cert_path, made })
}

/// Makes a certificate and key for `names`; the key is written owner-only, each file whole or
/// not at all (written beside, then renamed).
fn make(dir: &Path, cert_path: &Path, key_path: &Path, names: &[String]) -> Result<(), String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot make a TLS certificate: {e}");
    let mut params = rcgen::CertificateParams::new(names.to_vec()).map_err(|e| failed(&e))?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(rcgen::DnType::CommonName, "mdvault");
    let today = chrono::Utc::now().date_naive();
    let until = today + chrono::Duration::days(VALID_DAYS);
    let ymd = |d: chrono::NaiveDate| {
        use chrono::Datelike;
        rcgen::date_time_ymd(d.year(), d.month() as u8, d.day() as u8)
    };
    params.not_before = ymd(today - chrono::Duration::days(1));
    params.not_after = ymd(until);
    let key = rcgen::KeyPair::generate().map_err(|e| failed(&e))?;
    let cert = params.self_signed(&key).map_err(|e| failed(&e))?;
    crate::vault::fs::create_private_dir(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    write_whole(key_path, key.serialize_pem().as_bytes(), 0o600)?;
    write_whole(cert_path, cert.pem().as_bytes(), 0o644)?;
    tracing::info!("made a TLS certificate for {} at {}", names.join(", "), cert_path.display());
    Ok(())
}

/// Writes `bytes` to a temporary beside `path` with `mode`, flushes it, and renames it over.
fn write_whole(path: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut f = opts.open(&tmp).map_err(fail)?;
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_is_made_once_and_reused_with_a_private_key() {
        let data = tempfile::tempdir().unwrap();
        let first = load_or_make(data.path(), "127.0.0.1:8080", &[]).unwrap();
        assert!(first.made);
        assert!(first.pem.starts_with("-----BEGIN CERTIFICATE-----"), "{}", first.pem);
        let second = load_or_make(data.path(), "127.0.0.1:8080", &[]).unwrap();
        assert!(!second.made);
        assert_eq!(first.pem, second.pem);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let key = data.path().join("tls/key.pem");
            let mode = std::fs::metadata(key).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "the key is readable by others: {mode:o}");
        }
    }

    #[test]
    fn half_a_pair_or_a_broken_file_is_refused_with_the_way_out() {
        let data = tempfile::tempdir().unwrap();
        load_or_make(data.path(), "127.0.0.1:0", &[]).unwrap();
        std::fs::write(data.path().join("tls/cert.pem"), "not a certificate").unwrap();
        let e = load_or_make(data.path(), "127.0.0.1:0", &[]).err().unwrap();
        assert!(e.contains("delete") && e.contains("cert.pem"), "{e}");
        std::fs::remove_file(data.path().join("tls/cert.pem")).unwrap();
        let e = load_or_make(data.path(), "127.0.0.1:0", &[]).err().unwrap();
        assert!(e.contains("only one of"), "{e}");
    }

    #[test]
    fn the_names_cover_loopback_the_bound_address_and_the_allowed_hosts() {
        let n = names(
            "192.168.1.5:27124",
            &["notes.lan".into(), "notes.lan:8080".into(), "[fe80::1]:80".into(), "*".into()],
        );
        assert_eq!(n, ["localhost", "127.0.0.1", "::1", "192.168.1.5", "notes.lan", "fe80::1"]);
        assert_eq!(names("0.0.0.0:8080", &[]), ["localhost", "127.0.0.1", "::1"]);
    }
}
