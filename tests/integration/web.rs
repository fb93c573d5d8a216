//! The web page's rules, over HTTP against the real binary: every page needs the session,
//! the session cookie's flags, the Content-Security-Policy on every answer, and the Origin
//! check on writes. What a person sees is tested in a real browser by
//! `scripts/browser-test.sh`; these are the rules that must hold whatever the browser does.

use crate::common::{KEY, Reply, Server, TempVault, http_call};

fn server() -> (TempVault, Server) {
    let vault = TempVault::fixture();
    let server = Server::spawn(&[format!("main={}", vault.root().display())], &[]);
    (vault, server)
}

/// A request as a browser sends it: no bearer key.
fn browser(s: &Server, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let body = (!body.is_empty()).then_some(body.as_bytes());
    let mut all = headers.to_vec();
    if body.is_some() {
        all.push(("Content-Type", "application/x-www-form-urlencoded"));
    }
    http_call(&s.base, method, path, None, &all, body)
}

fn origin(s: &Server) -> String {
    s.base.clone()
}

/// Signs in and returns the `name=value` of the session cookie.
fn sign_in(s: &Server) -> String {
    let r = browser(s, "POST", "/ui/login", &[("Origin", &origin(s))], &format!("key={KEY}"));
    assert_eq!(r.status, 303, "{}", r.body);
    let cookie = r.header("set-cookie").expect("a session cookie");
    cookie.split(';').next().unwrap().to_string()
}

#[test]
fn every_page_but_sign_in_needs_the_session_and_the_bearer_key_is_not_one() {
    let (_v, s) = server();
    for path in ["/ui/", "/ui/search?q=boiler", "/ui/note?path=Home/Boiler.md", "/ui/health"] {
        let r = browser(&s, "GET", path, &[], "");
        assert_eq!(r.status, 303, "{path}");
        assert!(r.header("location").unwrap().starts_with("/ui/login?next="), "{path}");
        // The API key as a bearer header is for REST and MCP; the page asks for its session.
        let r = s.call("GET", path, &[], None);
        assert_eq!(r.status, 303, "{path} with the bearer key");
    }
    let r = browser(&s, "GET", "/ui/login", &[], "");
    assert_eq!(r.status, 200);
    assert_eq!(browser(&s, "GET", "/ui/static/app.js", &[], "").status, 200);
    let o = origin(&s);
    let write = browser(&s, "POST", "/ui/edit", &[("Origin", &o)], "path=Home/Boiler.md&text=x");
    assert_eq!(write.status, 401);
}

#[test]
fn sign_in_sets_a_strict_http_only_expiring_cookie_and_sign_out_clears_it() {
    let (_v, s) = server();
    let o = origin(&s);
    let wrong = browser(&s, "POST", "/ui/login", &[("Origin", &o)], "key=guess");
    assert_eq!(wrong.status, 401);
    assert!(wrong.header("set-cookie").is_none());

    let r = browser(&s, "POST", "/ui/login", &[("Origin", &o)], &format!("key={KEY}"));
    let cookie = r.header("set-cookie").unwrap();
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/ui", "Max-Age="] {
        assert!(cookie.contains(flag), "{flag} missing: {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP cannot keep a Secure cookie: {cookie}");
    let tls = browser(
        &s,
        "POST",
        "/ui/login",
        &[("Origin", &o), ("X-Forwarded-Proto", "https")],
        &format!("key={KEY}"),
    );
    assert!(tls.header("set-cookie").unwrap().contains("; Secure"));

    let session = sign_in(&s);
    let page = browser(&s, "GET", "/ui/health", &[("Cookie", &session)], "");
    assert_eq!(page.status, 200, "{}", page.body);
    let out = browser(&s, "POST", "/ui/logout", &[("Cookie", &session), ("Origin", &o)], "");
    assert_eq!(out.status, 303);
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
}

#[test]
fn a_forged_cookie_is_no_session() {
    let (_v, s) = server();
    let session = sign_in(&s);
    let (name, value) = session.split_once('=').unwrap();
    let (expiry, mac) = value.split_once('.').unwrap();
    let later = expiry.parse::<u64>().unwrap() + 86_400;
    // The same MAC with its first digit changed.
    let first = if mac.starts_with('0') { '1' } else { '0' };
    let flipped = format!("{first}{}", &mac[1..]);
    for forged in
        [format!("{name}={later}.{mac}"), format!("{name}={expiry}.{flipped}"), format!("{name}=1")]
    {
        let r = browser(&s, "GET", "/ui/", &[("Cookie", &forged)], "");
        assert_eq!(r.status, 303, "{forged}");
    }
}

#[test]
fn every_answer_carries_a_csp_without_inline_script_and_pages_keep_to_it() {
    let (_v, s) = server();
    let session = sign_in(&s);
    for path in
        ["/ui/login", "/ui/", "/ui/note?path=Home/Boiler.md", "/ui/health/expiries", "/ui/nope"]
    {
        let r = browser(&s, "GET", path, &[("Cookie", &session)], "");
        let csp = r.header("content-security-policy").unwrap_or_else(|| panic!("{path}: no CSP"));
        assert!(csp.contains("script-src 'self'") && csp.contains("default-src 'none'"), "{csp}");
        assert!(!csp.contains("unsafe"), "{path}: {csp}");
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{path}");
        // The page keeps to its own policy: scripts by src only, no inline style or handlers.
        let html = r.body.to_lowercase();
        assert!(
            !html.contains("<script>") && !html.contains(" style=") && !html.contains(" onclick"),
            "{path}"
        );
    }
    // A filed PDF's bytes: its own type, never sniffed, and a policy that only forbids
    // framing (the browser's PDF viewer would not run under the page's).
    let pdf = "/ui/file?path=Home/Utilities/Files/2026-05-02%20Nordlicht%20-%20Contract.pdf";
    let r = browser(&s, "GET", pdf, &[("Cookie", &session)], "");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/pdf"));
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("content-security-policy"), Some("frame-ancestors 'none'"));
    let note = "/ui/file?path=Home/Boiler.md";
    assert_eq!(
        browser(&s, "GET", note, &[("Cookie", &session)], "").status,
        400,
        "a note is no file"
    );
    // A refusal before the session (a foreign Host) is a page too, under the same policy.
    let r = browser(&s, "GET", "/ui/", &[("Host", "evil.example")], "");
    assert_eq!(r.status, 403);
    assert!(r.header("content-security-policy").is_some());
}

#[test]
fn a_write_must_come_from_this_server_s_own_page() {
    let (v, s) = server();
    let session = sign_in(&s);
    let before = v.read("Home/Boiler.md");
    let body = "path=Home/Boiler.md&text=overwritten";
    let port = s.base.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    let other_port = format!("http://127.0.0.1:{}", port.wrapping_add(1));
    for (label, headers) in [
        ("no Origin", vec![("Cookie", session.as_str())]),
        (
            "another port of localhost",
            vec![("Cookie", session.as_str()), ("Origin", other_port.as_str())],
        ),
        ("another site", vec![("Cookie", session.as_str()), ("Origin", "https://evil.example")]),
    ] {
        let r = browser(&s, "POST", "/ui/edit", &headers, body);
        assert_eq!(r.status, 403, "{label}: {}", r.body);
    }
    assert_eq!(v.read("Home/Boiler.md"), before, "a refused write changed the note");
    // The UI is no part of the REST contract.
    assert!(!mdvault::api::rest::OPENAPI.contains("/ui"));
}

#[test]
fn a_save_with_a_stale_etag_shows_both_versions_and_keeps_the_file() {
    let (v, s) = server();
    let session = sign_in(&s);
    let o = origin(&s);
    let stale = "0".repeat(64);
    let body = format!("path=Home/Boiler.md&etag={stale}&text=Mine+only");
    let r = browser(&s, "POST", "/ui/edit", &[("Cookie", &session), ("Origin", &o)], &body);
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("id=\"conflict\"") && r.body.contains("Mine only"), "{}", r.body);
    assert!(v.read("Home/Boiler.md").contains("Varmond"), "the note was overwritten");
}
