//! `server.tls`: the real binary serving HTTPS with the self-signed certificate it made on its
//! first start, talked to by a real HTTPS client (ureq over rustls) that trusts only the
//! certificate the server hands out; the certificate kept across restarts, and the page's
//! session cookie marked `Secure`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ureq::tls::{Certificate, RootCerts, TlsConfig};

use crate::common::{KEY, TempVault, free_port, model_dir};

/// A TLS server on a free port over `data`; killed when dropped.
struct TlsServer {
    child: Child,
    base: String,
    port: u16,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `mdvault serve` with `server.tls` on, and waits until its port accepts connections.
fn serve_tls(vault: &Path, data: &Path, home: &Path) -> TlsServer {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_mdvault"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(data)
        .arg("--vault")
        .arg(format!("notes={}", vault.display()))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("MDVAULT_API_KEY", KEY)
        .env("MDVAULT_EMBEDDING__MODEL_DIR", model_dir())
        .env("MDVAULT_EMBEDDING__BACKEND", "hashing")
        .env("MDVAULT_SERVER__TLS", "true")
        .env("MDVAULT_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the TLS server did not open its port within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    TlsServer { child, base: format!("https://127.0.0.1:{port}"), port }
}

/// An HTTPS client that trusts exactly `pem`, follows no redirects and hands back every status.
fn trusting(pem: &str) -> ureq::Agent {
    let cert = Certificate::from_pem(pem.as_bytes()).unwrap().to_owned();
    ureq::Agent::config_builder()
        .tls_config(
            TlsConfig::builder().root_certs(RootCerts::Specific(Arc::new(vec![cert]))).build(),
        )
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .build()
        .into()
}

fn kept_certificate(data: &Path) -> String {
    std::fs::read_to_string(data.join("tls/cert.pem")).unwrap()
}

#[test]
fn an_https_client_that_trusts_the_served_certificate_reads_and_writes_notes() {
    let vault = TempVault::fixture();
    let (data, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = serve_tls(vault.root(), data.path(), home.path());
    let pem = kept_certificate(data.path());
    let agent = trusting(&pem);

    // The certificate is public, as in the plugin, and is the one kept in the data directory.
    let mut r = agent.get(format!("{}/obsidian-local-rest-api.crt", s.base)).call().unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.body_mut().read_to_string().unwrap(), pem);

    // The REST surface over HTTPS: the key still required, a note read and written.
    let r = agent.get(format!("{}/vault/Home/Boiler.md", s.base)).call().unwrap();
    assert_eq!(r.status(), 401);
    let auth = format!("Bearer {KEY}");
    let mut r = agent
        .get(format!("{}/vault/Home/Boiler.md", s.base))
        .header("Authorization", &auth)
        .call()
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.body_mut().read_to_string().unwrap().contains("Boiler"));
    let r = agent
        .put(format!("{}/vault/Inbox/Over%20TLS.md", s.base))
        .header("Authorization", &auth)
        .send("# Over TLS\n")
        .unwrap();
    assert_eq!(r.status(), 204);
    assert!(vault.read("Inbox/Over TLS.md").contains("# Over TLS"));

    // The page's session cookie is Secure behind TLS.
    let r = agent
        .post(format!("{}/ui/login", s.base))
        .header("Origin", &s.base)
        .send_form([("key", KEY), ("next", "/ui/")])
        .unwrap();
    assert_eq!(r.status(), 303, "{:?}", r.headers());
    let cookie = r.headers().get("set-cookie").unwrap().to_str().unwrap().to_string();
    assert!(cookie.contains("; Secure"), "{cookie}");

    // A client with the usual public roots refuses the self-signed certificate, and plain
    // HTTP gets no answer: this port speaks only TLS.
    let public = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
    assert!(public.get(format!("{}/", s.base)).call().is_err());
    assert!(ureq::get(format!("http://127.0.0.1:{}/healthz", s.port)).call().is_err());
}

#[test]
fn the_certificate_made_on_the_first_start_is_served_again_after_a_restart() {
    let vault = TempVault::fixture();
    let (data, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = serve_tls(vault.root(), data.path(), home.path());
    let pem = kept_certificate(data.path());
    let agent = trusting(&pem);
    assert_eq!(agent.get(format!("{}/", first.base)).call().unwrap().status(), 200);
    drop(first);

    let second = serve_tls(vault.root(), data.path(), home.path());
    assert_eq!(kept_certificate(data.path()), pem, "a restart made a new certificate");
    // The client that trusted the first start's certificate still connects.
    let mut r = agent.get(format!("{}/obsidian-local-rest-api.crt", second.base)).call().unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.body_mut().read_to_string().unwrap(), pem);
}
