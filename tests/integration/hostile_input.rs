//! Input written to hurt, on the real binary: a note's HTML over REST is as inert as on the
//! web page, and a JsonLogic query's patterns are refused when they are invalid, oversized or
//! too many, instead of being silently false for every note.

use serde_json::json;

use crate::common::{Server, TempVault};

const HASHING: &[(&str, &str)] =
    &[("MDVAULT_EMBEDDING__BACKEND", "hashing"), ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2")];

fn server() -> (TempVault, Server) {
    let v = TempVault::fixture();
    let s = Server::start(&[format!("fixture={}", v.root().display())], HASHING);
    (v, s)
}

#[test]
fn a_notes_html_over_rest_is_sanitised_and_served_with_a_policy() {
    let (v, s) = server();
    let note = "# Trap\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
                <iframe src=\"javascript:alert(3)\"></iframe>\n\n\
                <form action=\"https://evil.example/steal\"><input name=q></form>\n\n\
                [click](javascript:alert(4))\n";
    v.write("Inbox/Trap.md", note);
    let r = s.call("GET", "/vault/Inbox/Trap.md", &[("Accept", "text/html")], None);
    assert_eq!(r.status, 200, "{}", r.body);
    for bad in ["<script", "onerror", "javascript:", "<iframe", "<form", "evil.example"] {
        assert!(!r.body.contains(bad), "{bad} in {}", r.body);
    }
    assert!(r.body.contains("<h1 id=\"trap\">Trap</h1>"), "{}", r.body);
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    let csp = r.header("content-security-policy").expect("a policy");
    assert!(csp.contains("default-src 'none'") && csp.contains("form-action 'none'"), "{csp}");
}

#[test]
fn jsonlogic_patterns_that_cannot_run_are_refused_naming_them() {
    let (_v, s) = server();
    let post = |rule: serde_json::Value| {
        s.call(
            "POST",
            "/search/",
            &[("Content-Type", "application/vnd.olrapi.jsonlogic+json")],
            Some(rule.to_string().as_bytes()),
        )
    };
    let r = post(json!({"regexp": ["(unclosed", {"var": "content"}]}));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"), "{}", r.body);
    assert!(r.body.contains("(unclosed"), "{}", r.body);
    let r = post(json!({"glob": ["x".repeat(5000), {"var": "path"}]}));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"), "{}", r.body);
    let many: Vec<_> =
        (0..300).map(|i| json!({"regexp": [format!("zz{i}q"), {"var": "content"}]})).collect();
    let r = post(json!({"or": many}));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"), "{}", r.body);
    assert!(r.body.contains("distinct patterns"), "{}", r.body);
    // Two hundred valid patterns are compiled once each and answer promptly.
    let fine: Vec<_> =
        (0..200).map(|i| json!({"regexp": [format!("zz{i}q"), {"var": "content"}]})).collect();
    let started = std::time::Instant::now();
    let r = post(json!({"or": [{"regexp": ["Boiler", {"var": "path"}]}, {"or": fine}]}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("Home/Boiler.md"), "{}", r.body);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn frontmatter_numbers_a_float_cannot_hold_read_back_as_their_text_everywhere() {
    let (v, s) = server();
    let note = "---\ntitle: Exact\nid: 123456789012345678901234567890\nmode: 0777\n\
                huge: 1e400\ncount: 12\nratio: 0.25\n---\n# Exact\n";
    v.write("Inbox/Exact.md", note);
    let fm = s.call("GET", "/vault/Inbox/Exact.md", &[("Accept", "application/json")], None).json()
        ["frontmatter"]
        .clone();
    assert_eq!(fm["id"], json!("123456789012345678901234567890"), "{fm}");
    assert_eq!(fm["mode"], json!("0777"), "{fm}");
    // One odd value does not empty the rest.
    assert_eq!(fm["huge"], json!("1e400"), "{fm}");
    assert_eq!((fm["title"].clone(), fm["count"].clone()), (json!("Exact"), json!(12)));
    assert_eq!(fm["ratio"], json!(0.25));
    let map = s.call("GET", "/vault/Inbox/Exact.md?map", &[], None).json();
    assert_eq!(map["frontmatter"]["id"], json!("123456789012345678901234567890"));
    let rule = json!({"==": [{"var": "frontmatter.mode"}, "0777"]});
    let r = s.call(
        "POST",
        "/search/",
        &[("Content-Type", "application/vnd.olrapi.jsonlogic+json")],
        Some(rule.to_string().as_bytes()),
    );
    assert!(r.body.contains("Inbox/Exact.md"), "{}", r.body);
    // The note's bytes were never touched by reading.
    assert_eq!(v.read("Inbox/Exact.md"), note);
}

/// A vault whose every note makes a regex work: long runs of words with no match at the end.
fn heavy_vault() -> TempVault {
    let v = TempVault::empty();
    let para: String = (0..3000).map(|i| format!("word{} ", i % 97)).collect();
    for n in 0..500 {
        v.write(&format!("Heavy/Note {n}.md"), &format!("# Note {n}\n\n{para}\n"));
    }
    v
}

fn heavy_rule() -> serde_json::Value {
    let ops: Vec<_> = (0..200)
        .map(|i| json!({"regexp": [format!("(\\w+\\s+){{12}}zq{i}x"), {"var": "content"}]}))
        .collect();
    json!({"or": ops})
}

#[test]
fn sigterm_ends_the_server_within_seconds_while_a_long_request_runs() {
    let v = heavy_vault();
    let mut s = Server::start(&[format!("heavy={}", v.root().display())], HASHING);
    let base = s.base.clone();
    let body = heavy_rule().to_string();
    let request = std::thread::spawn(move || {
        crate::common::http_call(
            &base,
            "POST",
            "/search/",
            Some(crate::common::KEY),
            &[("Content-Type", "application/vnd.olrapi.jsonlogic+json")],
            Some(body.as_bytes()),
        )
    });
    // Terminate once the request is surely running (it takes far longer than this).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let took = s.terminate();
    // The deadline is 4 s; before it, the request held the server for its whole 10 s budget.
    assert!(took < std::time::Duration::from_secs(7), "SIGTERM took {took:?}");
    let _ = request.join();
}

#[test]
fn the_owner_socket_refuses_a_request_without_the_owners_token() {
    use std::io::{BufRead, BufReader, Write};
    let (_v, s) = server();
    let socket = s.data.path().join("indexer.sock");
    let ask = |line: &str| -> serde_json::Value {
        let mut conn = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        conn.write_all(format!("{line}\n").as_bytes()).unwrap();
        let mut reply = String::new();
        BufReader::new(conn).read_line(&mut reply).unwrap();
        serde_json::from_str(&reply).unwrap()
    };
    let full = json!({"job": "sync", "vault": "fixture", "full": true, "re_embed": true});
    // The bare request, and one with a guessed token, are refused before any pass starts.
    let bare = ask(&full.to_string());
    assert!(bare["error"]["code"].is_string(), "{bare}");
    assert!(bare.get("report").is_none(), "{bare}");
    let guessed = ask(&json!({"token": "0".repeat(64), "request": full}).to_string());
    assert_eq!(guessed["error"]["code"], "unauthorized", "{guessed}");
    // With the token from the private data directory, the owner answers.
    let token = std::fs::read_to_string(s.data.path().join("owner.token")).unwrap();
    let hello = ask(&json!({"token": token.trim(), "request": {"job": "hello"}}).to_string());
    assert!(hello["owner"]["pid"].is_number(), "{hello}");
}

#[test]
fn two_unicode_spellings_make_one_note_and_a_bidi_control_is_refused() {
    let (v, s) = server();
    // Decomposed (NFD) then composed (NFC) spellings of Inbox/café.md, percent-encoded.
    let nfd = "/vault/Inbox/cafe%CC%81.md";
    let nfc = "/vault/Inbox/caf%C3%A9.md";
    assert_eq!(s.call("PUT", nfd, &[], Some(b"first\n")).status, 204);
    assert_eq!(s.call("POST", nfc, &[], Some(b"second\n")).status, 204);
    let names: Vec<String> = std::fs::read_dir(v.root().join("Inbox"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("caf"))
        .collect();
    assert_eq!(names, ["caf\u{e9}.md"], "one note, composed");
    assert_eq!(v.read("Inbox/caf\u{e9}.md"), "first\n\nsecond\n");
    let before = v.snapshot();
    let r = s.call("PUT", "/vault/Inbox/invoice%E2%80%AEfdp.md", &[], Some(b"x"));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);
    assert_eq!(v.snapshot(), before);
}

/// The server's log so far.
fn log_text(log: &std::path::Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// Waits (up to a minute) for a log line containing `needle`, and returns it.
fn log_line(log: &std::path::Path, needle: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(line) = log_text(log).lines().find(|l| l.contains(needle)) {
            return line.to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no log line with {needle:?} within a minute:\n{}",
            log_text(log)
        );
        // Often: a request left once running must still be running when it is left.
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Sends `head` and `body` on a new connection to `s`, waits until the server logs `started`
/// (the request is running), leaves without reading the answer, and returns how the server
/// logged the request's end: `(notes done, of notes, seconds)`, from "stopped after N of M
/// notes and S s: its client went away".
fn leave_once_running(
    s: &Server,
    log: &std::path::Path,
    head: &str,
    body: &str,
    started: &str,
    what: &str,
) -> (usize, usize, f64) {
    use std::io::Write;
    let authority = s.base.trim_start_matches("http://");
    let mut client = std::net::TcpStream::connect(authority).unwrap();
    write!(
        client,
        "{head}\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        crate::common::KEY,
        body.len()
    )
    .unwrap();
    log_line(log, started);
    let left = std::time::Instant::now();
    drop(client);
    let stopped = log_line(log, &format!("{what} stopped after"));
    eprintln!("{:?} after the client left: {stopped}", left.elapsed());
    let tail = stopped.split(" stopped after ").nth(1).unwrap();
    let words: Vec<&str> = tail.split_whitespace().collect();
    (words[0].parse().unwrap(), words[2].parse().unwrap(), words[5].parse().unwrap())
}

#[test]
fn a_search_whose_client_left_stops_long_before_it_would_have_finished() {
    let v = heavy_vault();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("server.log");
    let launch = crate::common::Launch { log: Some(&log), ..Default::default() };
    let env = [HASHING, &[("MDVAULT_LOG", "warn,mdvault::api=debug")]].concat();
    let s = Server::launch(&[format!("heavy={}", v.root().display())], &env, &launch);
    s.wait_ready();

    // A JsonLogic query that would run to its 10 s budget.
    let (done, total, seconds) = leave_once_running(
        &s,
        &log,
        "POST /search/ HTTP/1.1\r\nContent-Type: application/vnd.olrapi.jsonlogic+json",
        &heavy_rule().to_string(),
        "a JsonLogic search started over 500 notes",
        "a JsonLogic search",
    );
    assert!(done < total, "{done} of {total}");
    assert!(seconds < 8.0, "the evaluation ran {seconds} s of its 10 s budget");

    // A simple search whose every note holds hundreds of matches (`word5`, `word50`, ...).
    let (done, total, _) = leave_once_running(
        &s,
        &log,
        "POST /search/simple/?query=word5 HTTP/1.1",
        "",
        "a simple search started over 500 notes",
        "a simple search",
    );
    assert!(done < total, "{done} of {total}");
    // Each left its core (and the search its turn in the queue) to the next request.
    assert_eq!(s.call("GET", "/search?q=word5&k=3", &[], None).status, 200);
}
