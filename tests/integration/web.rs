//! The web page's rules, over HTTP against the real binary: every page needs the session,
//! the session cookie's flags, sessions kept on the server (ended by sign-out, listed and
//! revoked on the page and by `mdvault sessions` from another process, surviving a restart),
//! the Content-Security-Policy on every answer, the Origin check on writes, and a note shown
//! as Obsidian's reading view (links that land, on the fixture and on obsidian-help), search
//! results as one card per note, and the page's own files (a public favicon; brotli and gzip, strong
//! ETags and 304 for the stylesheet and script). What a person sees is tested in a real browser by
//! `scripts/browser-test.sh`; these are the rules that must hold whatever the browser does.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    KEY, Reply, Server, TempVault, http_call, mdvault_with, model_dir, stderr, stdout,
};

fn server() -> (TempVault, Server) {
    let vault = TempVault::fixture();
    let server = Server::spawn(&[format!("main={}", vault.root().display())], &[]);
    (vault, server)
}

/// A request as a browser sends it: no bearer key.
pub(crate) fn browser(
    s: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
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
pub(crate) fn sign_in(s: &Server) -> String {
    sign_in_as(s, "")
}

/// Signs in with this `User-Agent` (none when empty); the `name=value` of the cookie.
fn sign_in_as(s: &Server, agent: &str) -> String {
    let o = origin(s);
    let mut headers = vec![("Origin", o.as_str())];
    if !agent.is_empty() {
        headers.push(("User-Agent", agent));
    }
    let r = browser(s, "POST", "/ui/login", &headers, &format!("key={KEY}"));
    assert_eq!(r.status, 303, "{}", r.body);
    let cookie = r.header("set-cookie").expect("a session cookie");
    cookie.split(';').next().unwrap().to_string()
}

/// Whether a cookie opens a page (200) rather than being sent to sign-in (303).
fn opens(s: &Server, cookie: &str) -> bool {
    let r = browser(s, "GET", "/ui/health", &[("Cookie", cookie)], "");
    match r.status {
        200 => true,
        303 => {
            assert!(r.header("location").unwrap().starts_with("/ui/login"), "{:?}", r.headers);
            false
        }
        other => panic!("/ui/health answered {other}: {}", r.body),
    }
}

/// `mdvault sessions ...` over a data directory, as another process beside the server.
fn sessions_cli(data: &Path, args: &[&str]) -> std::process::Output {
    let data = data.to_str().unwrap();
    let mut all = vec!["sessions"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--data-dir", data]);
    mdvault_with(&all, &[], None)
}

/// The sessions `mdvault sessions list --json` shows: (id, user agent).
fn listed(data: &Path) -> Vec<(String, String)> {
    let out = sessions_cli(data, &["list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (s["id"].as_str().unwrap().to_string(), s["user_agent"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The id the listing shows for the session signed in with this user agent.
fn id_of(data: &Path, agent: &str) -> String {
    let all = listed(data);
    all.iter()
        .find(|(_, ua)| ua == agent)
        .unwrap_or_else(|| panic!("no session from {agent}: {all:?}"))
        .0
        .clone()
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
    // The same secret with its first digit changed, cut short, or lengthened; and the old
    // signed format, which no longer means anything.
    let first = if value.starts_with('0') { '1' } else { '0' };
    let flipped = format!("{first}{}", &value[1..]);
    for forged in [
        format!("{name}={flipped}"),
        format!("{name}={}", &value[..63]),
        format!("{name}={value}0"),
        format!("{name}=1"),
        format!("{name}=9999999999.{}", "ab".repeat(32)),
    ] {
        let r = browser(&s, "GET", "/ui/", &[("Cookie", &forged)], "");
        assert_eq!(r.status, 303, "{forged}");
    }
    assert!(opens(&s, &session));
}

#[test]
fn signing_out_ends_the_session_on_the_server_so_a_kept_cookie_opens_nothing() {
    let (_v, s) = server();
    let o = origin(&s);
    let kept = sign_in(&s);
    let other = sign_in(&s);
    assert!(opens(&s, &kept));
    let out = browser(&s, "POST", "/ui/logout", &[("Cookie", &kept), ("Origin", &o)], "");
    assert_eq!(out.status, 303);
    // The browser was told to forget the cookie; one that kept it anyway is refused.
    assert!(!opens(&s, &kept), "the cookie still opens pages after sign-out");
    let write = browser(
        &s,
        "POST",
        "/ui/new",
        &[("Cookie", &kept), ("Origin", &o)],
        "path=Inbox/After.md&text=x",
    );
    assert_eq!(write.status, 401, "{}", write.body);
    assert!(opens(&s, &other), "signing out one browser ended another's session");
}

#[test]
fn the_page_lists_the_sessions_marks_its_own_and_revokes_any() {
    let (_v, s) = server();
    let o = origin(&s);
    let mine = sign_in_as(&s, "Mine/1.0");
    // A bidirectional override in the header (sent as UTF-8) is cleaned out of the listing.
    let theirs = sign_in_as(&s, "Theirs/2.0 \u{202e}evil");
    let page = browser(&s, "GET", "/ui/health", &[("Cookie", &mine)], "");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Signed-in sessions"), "{}", page.body);
    assert_eq!(page.body.matches("id=\"current-session\"").count(), 1);
    assert!(page.body.contains("Mine/1.0") && page.body.contains("Theirs/2.0 evil"));
    assert!(page.body.contains("127.0.0.1"));
    let secret = theirs.split_once('=').unwrap().1;
    assert!(!page.body.contains(secret), "a session's secret is on the page");
    let their_id = id_of(s.data.path(), "Theirs/2.0 evil");
    assert!(page.body.contains(&format!("value=\"{their_id}\"")), "no revoke button for it");

    // Revoking is a form post like the others: without the page's Origin it is refused.
    let body = format!("id={their_id}");
    let r = browser(&s, "POST", "/ui/sessions/revoke", &[("Cookie", &mine)], &body);
    assert_eq!(r.status, 403);
    assert!(opens(&s, &theirs));
    let r = browser(&s, "POST", "/ui/sessions/revoke", &[("Cookie", &mine), ("Origin", &o)], &body);
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.header("location"), Some("/ui/health#sessions"));
    assert!(!opens(&s, &theirs), "a revoked session still opens pages");
    assert!(opens(&s, &mine));

    // Revoking one's own session signs out.
    let body = format!("id={}", id_of(s.data.path(), "Mine/1.0"));
    let r = browser(&s, "POST", "/ui/sessions/revoke", &[("Cookie", &mine), ("Origin", &o)], &body);
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/ui/login"));
    assert!(r.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert!(!opens(&s, &mine));
    assert!(listed(s.data.path()).is_empty());
}

#[test]
fn a_session_revoked_from_the_command_line_is_refused_at_its_next_request() {
    let (_v, s) = server();
    let laptop = sign_in_as(&s, "Laptop/1.0");
    let phone = sign_in_as(&s, "Phone/1.0");
    let tablet = sign_in_as(&s, "Tablet/1.0");
    assert!(opens(&s, &laptop) && opens(&s, &phone) && opens(&s, &tablet));
    let data = s.data.path();
    assert_eq!(listed(data).len(), 3);
    let out = sessions_cli(data, &["list"]);
    let text = stdout(&out);
    assert!(text.starts_with("ID") && text.contains("Phone/1.0"), "{text}");
    for cookie in [&laptop, &phone, &tablet] {
        assert!(!text.contains(cookie.split_once('=').unwrap().1), "a secret is listed");
    }

    // A prefix that names one session is enough.
    let phone_id = id_of(data, "Phone/1.0");
    let out = sessions_cli(data, &["revoke", &phone_id[..8]]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&phone_id), "{}", stdout(&out));
    assert!(!opens(&s, &phone), "the server still admits a session the CLI revoked");
    assert!(opens(&s, &laptop) && opens(&s, &tablet));

    // An id that names nothing is refused, and nothing else ends.
    let out = sessions_cli(data, &["revoke", &phone_id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("error[not_found]"), "{}", stderr(&out));
    let out = sessions_cli(data, &["revoke"]);
    assert_eq!(out.status.code(), Some(2), "revoke with neither an id nor --all");
    assert!(opens(&s, &laptop));

    let out = sessions_cli(data, &["revoke", "--all"]);
    assert!(stdout(&out).starts_with("revoked 2 sessions"), "{}", stdout(&out));
    assert!(!opens(&s, &laptop) && !opens(&s, &tablet));
}

#[test]
fn a_session_outlives_a_restart_of_the_server() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let vaults = [format!("main={}", vault.root().display())];
    let mut first = Server::start_in(&vaults, &[], data.path());
    let cookie = sign_in(&first);
    first.terminate();
    let second = Server::start_in(&vaults, &[], data.path());
    assert!(opens(&second, &cookie), "the restart signed the browser out");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.path().join("auth.db")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the session store is readable by others");
    }
}

/// Runs `mdvault serve` over `data` and waits (up to a minute) for it to exit; its exit code
/// and standard error, or `None` if it was still serving and had to be killed.
fn serve_until_it_exits(vault: &Path, data: &Path) -> Option<(Option<i32>, String)> {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdvault"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .arg("--vault")
        .arg(vault)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("MDVAULT_API_KEY", KEY)
        .env("MDVAULT_EMBEDDING__MODEL_DIR", model_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return Some((out.status.code(), stderr(&out)));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn a_session_store_that_cannot_be_opened_is_named_and_nothing_starts() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    // A folder where the file should be: no database can be opened there.
    std::fs::create_dir(data.path().join("auth.db")).unwrap();
    let out = sessions_cli(data.path(), &["list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("error[internal_error]: the session store"), "{err}");
    assert!(err.contains("auth.db") && !err.contains("panicked"), "{err}");

    let (code, err) =
        serve_until_it_exits(vault.root(), data.path()).expect("serve ran without its store");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the session store") && err.contains("auth.db"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
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

/// A server that indexes with the hashing embedder: these tests read pages, not rankings.
const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// Every `(href, text)` of the `<a>` elements in a page, text as the HTML writes it.
fn anchors(html: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for piece in html.split("<a href=\"").skip(1) {
        let Some((href, rest)) = piece.split_once('"') else { continue };
        let Some((_, rest)) = rest.split_once('>') else { continue };
        let text = rest.split("</a>").next().unwrap_or_default();
        out.push((href.replace("&amp;", "&"), text.to_string()));
    }
    out
}

#[test]
fn a_note_renders_as_obsidian_s_reading_view_on_the_page_and_over_rest() {
    let v = TempVault::fixture();
    v.write(
        "Home/Reading.md",
        "---\ntags: [x]\n---\n# Reading\n\n## Service plan\n\nA ==bright== idea %%not for readers%%.\n\n\
         Last step. ^step\n\n| Link | Why |\n| --- | --- |\n| [[Boiler\\|the boiler]] | x |\n\n\
         [[#Service plan]] [[Reading#^step]] [[Boiler#Settings|settings]]\n\n%%\nA [[Hidden]] block.\n%%\n",
    );
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);
    let session = sign_in(&s);
    let r = browser(&s, "GET", "/ui/note?path=Home/Reading.md", &[("Cookie", &session)], "");
    assert_eq!(r.status, 200, "{}", r.body);
    let page = &r.body;
    assert!(page.contains("<h2 id=\"service-plan\">Service plan</h2>"), "{page}");
    assert!(page.contains("<p id=\"^step\">Last step.</p>"), "{page}");
    assert!(page.contains("A <mark>bright</mark> idea"), "{page}");
    assert!(!page.contains("not for readers") && !page.contains("Hidden"), "{page}");
    let links = anchors(page);
    let to = |text: &str| links.iter().find(|(_, t)| t == text).map(|(h, _)| h.as_str());
    assert_eq!(to("the boiler"), Some("/ui/note?vault=main&path=Home/Boiler.md"), "{links:?}");
    assert_eq!(to("Service plan"), Some("#service-plan"), "{links:?}");
    assert_eq!(to("Reading#^step"), Some("/ui/note?vault=main&path=Home/Reading.md#^step"));
    assert_eq!(to("settings"), Some("/ui/note?vault=main&path=Home/Boiler.md#settings"));
    // The heading the link lands on carries that id on the linked note's page.
    let boiler = browser(&s, "GET", "/ui/note?path=Home/Boiler.md", &[("Cookie", &session)], "");
    assert!(boiler.body.contains("id=\"settings\""), "{}", boiler.body);
    // The outline links to the same ids.
    assert!(page.contains("href=\"#service-plan\""), "{page}");

    let r = s.call("GET", "/vault/Home/Reading.md", &[("Accept", "text/html")], None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("<h2 id=\"service-plan\">") && r.body.contains("<mark>bright</mark>"));
    assert!(!r.body.contains("not for readers"), "{}", r.body);
    let links = anchors(&r.body);
    assert!(links.contains(&("Boiler".into(), "the boiler".into())), "{links:?}");
}

#[test]
fn every_escaped_pipe_link_in_an_obsidian_help_table_renders_as_a_link_to_its_note() {
    let Some(vaults) = crate::eval_data::find(&crate::eval_data::EVAL_VAULTS) else { return };
    let v = TempVault::copy_of(&vaults.join("obsidian-help"));
    // Each note with a table row holding `[[target\|alias]]`, with the aliases it shows.
    let link = regex::Regex::new(r"(?:^|[^!])\[\[([^\]|]+)\\\|([^\]]+)\]\]").unwrap();
    let mut notes: Vec<(String, Vec<String>)> = Vec::new();
    for entry in walkdir::WalkDir::new(v.root()).into_iter().filter_map(Result::ok) {
        let rel = entry.path().strip_prefix(v.root()).unwrap().to_string_lossy().into_owned();
        if !rel.ends_with(".md") || rel.starts_with('.') {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let aliases: Vec<String> = text
            .lines()
            .filter(|l| l.trim_start().starts_with('|'))
            .flat_map(|l| link.captures_iter(l).map(|c| c[2].to_string()).collect::<Vec<_>>())
            .collect();
        if !aliases.is_empty() {
            notes.push((rel, aliases));
        }
    }
    assert!(notes.len() >= 2, "obsidian-help has tables with `\\|` links: {notes:?}");
    let s = Server::start(&[format!("help={}", v.root().display())], HASHING);
    let session = sign_in(&s);
    for (note, aliases) in &notes {
        let enc = note.replace(' ', "%20");
        let r = browser(&s, "GET", &format!("/ui/note?path={enc}"), &[("Cookie", &session)], "");
        assert_eq!(r.status, 200, "{note}: {}", r.body);
        let links = anchors(&r.body);
        for alias in aliases {
            let shown = alias.replace('&', "&amp;");
            let hrefs: Vec<&str> =
                links.iter().filter(|(_, t)| *t == shown).map(|(h, _)| h.as_str()).collect();
            // (The outline may also show the text, as a `#heading` link.)
            assert!(
                hrefs.iter().any(|h| h.starts_with("/ui/note?"))
                    && !hrefs.iter().any(|h| h.starts_with("/ui/new")),
                "{note}: `{alias}` links to {hrefs:?}, not to an existing note"
            );
        }
        let r = s.call("GET", &format!("/vault/{enc}"), &[("Accept", "text/html")], None);
        assert_eq!(r.status, 200, "{note}: {}", r.body);
        let links = anchors(&r.body);
        for alias in aliases {
            let shown = alias.replace('&', "&amp;");
            assert!(
                links.iter().any(|(h, t)| *t == shown && !h.contains("%5C")),
                "{note}: `{alias}` over REST: {links:?}"
            );
        }
    }
}

#[test]
fn the_favicon_is_public_and_the_page_names_its_icon() {
    let (_v, s) = server();
    let r = browser(&s, "GET", "/favicon.ico", &[], "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("content-type"), Some("image/x-icon"));
    let r = browser(&s, "GET", "/ui/static/icon.svg", &[], "");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("image/svg+xml"));
    let login = browser(&s, "GET", "/ui/login", &[], "");
    assert!(login.body.contains("rel=\"icon\" href=\"/ui/static/icon.svg\""), "{}", login.body);
}

#[test]
fn assets_are_brotli_or_gzip_as_accepted_and_answer_304_to_their_strong_etag() {
    let (_v, s) = server();
    for path in ["/ui/static/app.css", "/ui/static/app.js"] {
        let plain = browser(&s, "GET", path, &[], "");
        assert_eq!(plain.status, 200, "{path}");
        assert_eq!(plain.header("content-encoding"), None, "{path}: compressed unasked");
        let gz = browser(&s, "GET", path, &[("Accept-Encoding", "gzip, deflate")], "");
        assert_eq!(gz.header("content-encoding"), Some("gzip"), "{path}");
        assert_eq!(gz.header("vary"), Some("accept-encoding"), "{path}");
        let br = browser(&s, "GET", path, &[("Accept-Encoding", "gzip, deflate, br")], "");
        assert_eq!(br.header("content-encoding"), Some("br"), "{path}");
        let refused = browser(&s, "GET", path, &[("Accept-Encoding", "br;q=0, gzip")], "");
        assert_eq!(refused.header("content-encoding"), Some("gzip"), "{path}: br at q=0 sent");
        let size = |r: &Reply| r.header("content-length").unwrap().parse::<usize>().unwrap();
        assert!(size(&br) < size(&gz) && size(&gz) < size(&plain), "{path}: not smaller");
        // Strong tags, one per representation.
        let tags =
            [plain.header("etag").unwrap(), gz.header("etag").unwrap(), br.header("etag").unwrap()];
        assert!(tags.iter().all(|t| t.starts_with('"')), "{tags:?}");
        assert!(tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2], "{tags:?}");
        for (accept, tag) in [("gzip", tags[1]), ("gzip, br", tags[2])] {
            let again = browser(
                &s,
                "GET",
                path,
                &[("Accept-Encoding", accept), ("If-None-Match", tag)],
                "",
            );
            assert_eq!(again.status, 304, "{path} {accept}");
            assert!(again.body.is_empty());
            assert_eq!(again.header("etag"), Some(tag));
        }
        let stale = browser(&s, "GET", path, &[("If-None-Match", "\"stale\"")], "");
        assert_eq!(stale.status, 200, "{path}");
    }
}

#[test]
fn search_results_are_one_card_per_note_with_a_count_and_plain_passages() {
    let v = TempVault::fixture();
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);
    let session = sign_in(&s);
    let r =
        browser(&s, "GET", "/ui/search?q=boiler+service&fragment=1", &[("Cookie", &session)], "");
    assert_eq!(r.status, 200, "{}", r.body);
    let titles: Vec<&str> = r
        .body
        .split("class=\"note-title\" href=\"")
        .skip(1)
        .map(|p| p.split(['#', '"']).next().unwrap())
        .collect();
    assert!(titles.len() >= 2, "{}", r.body);
    let mut unique = titles.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), titles.len(), "a note has two cards: {titles:?}");
    assert!(r.body.contains(&format!("id=\"result-count\">{} notes<", titles.len())), "{}", r.body);
    for engine_word in [">both<", ">dense<", ">lexical<", ">pinned<", "vault_grep"] {
        assert!(!r.body.contains(engine_word), "{engine_word} in {}", r.body);
    }
}

#[test]
fn a_section_save_merges_a_change_elsewhere_and_asks_before_keeping_yours_over_theirs() {
    let (v, s) = server();
    let session = sign_in(&s);
    let o = origin(&s);
    let h = [("Cookie", session.as_str()), ("Origin", o.as_str())];
    let enc = |t: &str| {
        percent_encoding::utf8_percent_encode(t, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    let settings = |note: &str| note[note.find("## Settings").unwrap()..].to_string();
    // A stale etag throughout: the file changed since the editor opened.
    let form = |text: &str, base: &str, extra: &str| {
        format!(
            "path=Home/Boiler.md&section=Boiler%3A%3ASettings&etag={}&base={}&text={}{extra}",
            "0".repeat(64),
            enc(base),
            enc(text)
        )
    };
    let note = v.read("Home/Boiler.md");
    let base = settings(&note);
    v.write("Home/Boiler.md", &note.replace("## Details\n", "## Details\n\nTheirs elsewhere.\n"));
    let r = browser(&s, "POST", "/ui/edit", &h, &form(&format!("{base}Mine.\n"), &base, ""));
    assert_eq!(r.status, 303, "another section's change is a conflict: {}", r.body);
    let now = v.read("Home/Boiler.md");
    assert!(now.contains("Theirs elsewhere.") && now.contains("Mine."), "{now}");

    let base = settings(&now);
    v.write("Home/Boiler.md", &now.replace("## Settings\n", "## Settings\n\nTheirs here.\n"));
    let mine = format!("{base}Mine again.\n");
    let r = browser(&s, "POST", "/ui/edit", &h, &form(&mine, &base, ""));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.body.contains("id=\"other-change\"") && r.body.contains("+Theirs here."),
        "{}",
        r.body
    );
    let on_disk = settings(&v.read("Home/Boiler.md"));
    let r = browser(&s, "POST", "/ui/edit", &h, &form(&mine, &on_disk, "&resolve=mine"));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains("id=\"lost-lines\"") && r.body.contains("Theirs here."), "{}", r.body);
    assert!(!v.read("Home/Boiler.md").contains("Mine again."), "kept yours without asking");
    let r = browser(&s, "POST", "/ui/edit", &h, &form(&mine, &on_disk, "&resolve=both"));
    assert_eq!(r.status, 303, "{}", r.body);
    let now = v.read("Home/Boiler.md");
    assert!(now.contains("Theirs here.") && now.contains("Mine again."), "{now}");
}
