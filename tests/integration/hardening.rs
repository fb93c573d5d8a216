//! The HTTP server under clients that misbehave: the real binary, driven over raw TCP.
//!
//! A request that does not name exactly one server (no Host, two Hosts or Origins, an
//! absolute-form target naming another host) is refused before anything else. Raw bytes,
//! because an HTTP client library would tidy these requests up before sending them.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::common::{KEY, Reply, Server, TempVault, parse_response};

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// How long an answer may take: far beyond what a refusal needs.
const BOUND: Duration = Duration::from_secs(60);

fn server() -> (TempVault, Server) {
    let v = TempVault::fixture();
    let s = Server::start(&[format!("fixture={}", v.root().display())], HASHING);
    (v, s)
}

fn authority(s: &Server) -> &str {
    s.base.trim_start_matches("http://")
}

fn connect(s: &Server) -> TcpStream {
    TcpStream::connect(authority(s)).unwrap()
}

/// Reads until the server closes the connection; panics if the server still holds it after
/// [`BOUND`].
fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    stream.set_read_timeout(Some(BOUND)).unwrap();
    let mut raw = Vec::new();
    match stream.read_to_end(&mut raw) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the server still held the connection after {BOUND:?}: {e}"),
    }
    raw
}

/// Sends `head` (and nothing more) on a fresh connection; the whole answer.
fn raw_request(s: &Server, head: &str) -> Reply {
    let mut stream = connect(s);
    stream.write_all(head.as_bytes()).unwrap();
    parse_response(&until_closed(&mut stream))
}

#[test]
fn a_request_that_does_not_name_exactly_one_server_is_refused() {
    let (_v, s) = server();
    let host = format!("Host: {}\r\n", authority(&s));
    let auth = format!("Authorization: Bearer {KEY}\r\n");
    let refused = |head: String, (status, code): (u16, &str)| {
        let r = raw_request(&s, &head);
        assert_eq!((r.status, r.code().as_str()), (status, code), "{head:?}: {}", r.body);
        assert!(!r.json()["error"].as_str().unwrap_or("").is_empty());
    };
    let close = "Connection: close\r\n";

    // No Host, on HTTP/1.1 and 1.0 alike, with or without the key.
    refused(format!("GET /healthz HTTP/1.1\r\n{close}\r\n"), (400, "invalid_request"));
    refused(format!("GET /readyz HTTP/1.1\r\n{auth}{close}\r\n"), (400, "invalid_request"));
    refused("GET /healthz HTTP/1.0\r\n\r\n".into(), (400, "invalid_request"));
    // Two Hosts: a rebinding page's and ours, either way round, or ours twice.
    let evil = "Host: evil.example\r\n";
    for hosts in [format!("{host}{evil}"), format!("{evil}{host}"), format!("{host}{host}")] {
        refused(format!("GET /healthz HTTP/1.1\r\n{hosts}{close}\r\n"), (400, "invalid_request"));
        refused(
            format!("GET /readyz HTTP/1.1\r\n{hosts}{auth}{close}\r\n"),
            (400, "invalid_request"),
        );
    }
    // Two Origins, even two allowed ones.
    let origin = "Origin: http://localhost:3000\r\n";
    refused(
        format!("GET /healthz HTTP/1.1\r\n{host}{origin}{origin}{close}\r\n"),
        (400, "invalid_request"),
    );
    refused(
        format!(
            "GET /healthz HTTP/1.1\r\n{host}{origin}Origin: https://evil.example\r\n{close}\r\n"
        ),
        (400, "invalid_request"),
    );
    // An absolute-form target naming another server than Host, with or without the key.
    refused(
        format!("GET http://evil.example/healthz HTTP/1.1\r\n{host}{close}\r\n"),
        (400, "invalid_request"),
    );
    refused(
        format!("GET http://evil.example/readyz HTTP/1.1\r\n{host}{auth}{close}\r\n"),
        (400, "invalid_request"),
    );
    // ... or agreeing with a Host that is not allowed: the rebinding refusal.
    refused(
        format!("GET http://evil.example/healthz HTTP/1.1\r\n{evil}{close}\r\n"),
        (403, "forbidden"),
    );

    // Well-formed requests are answered as before, absolute form included.
    let ok = raw_request(&s, &format!("GET /healthz HTTP/1.1\r\n{host}{origin}{close}\r\n"));
    assert_eq!((ok.status, ok.body.as_str()), (200, "ok\n"));
    let absolute = format!("GET {}/readyz HTTP/1.1\r\n{host}{auth}{close}\r\n", s.base);
    assert_eq!(raw_request(&s, &absolute).status, 200);
}
