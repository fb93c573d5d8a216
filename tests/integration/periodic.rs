//! The Local REST API's periodic note routes over `mdvault serve`: the note found by the
//! vault's own Obsidian settings (`.obsidian/daily-notes.json`, the Periodic Notes plugin's
//! `data.json`), created from its template on a write, and the refusals for periods the vault
//! does not have.

use crate::common::{Server, TempVault};

/// Surface tests: the hashing embedder, and stamping off so a note reads back byte for byte.
const ENV: &[(&str, &str)] =
    &[("MDVAULT_EMBEDDING__BACKEND", "hashing"), ("MDVAULT_VAULT__TIMESTAMP_KEY", "")];

/// The vault's files, less what the server or the test writes on the side (the generated
/// `index.md`, Obsidian's settings).
fn notes(v: &TempVault) -> std::collections::BTreeMap<String, Option<Vec<u8>>> {
    let mut all = v.snapshot();
    all.retain(|k, _| k != "index.md" && !k.starts_with(".obsidian"));
    all
}

fn serve(v: &TempVault) -> Server {
    Server::start(&[format!("notes={}", v.root().display())], ENV)
}

const DAILY_SETTINGS: &str = r#"{"folder": "Journal", "format": "YYYY/MM/YYYY-MM-DD",
    "template": "Templates/Daily"}"#;
const DAILY_TEMPLATE: &str = "# {{title}}\n\nWritten on a {{date:dddd}}.\n\n## Log\n";

#[test]
fn a_dated_daily_note_put_is_read_back_and_a_new_one_starts_from_its_template() {
    let v = TempVault::empty();
    v.write("Home.md", "# Home\n");
    v.write(".obsidian/daily-notes.json", DAILY_SETTINGS);
    v.write("Templates/Daily.md", DAILY_TEMPLATE);
    let s = serve(&v);

    // Before it exists: 404 with the plugin's number, naming where it would be.
    let r = s.call("GET", "/periodic/daily/2026/1/2/", &[], None);
    assert_eq!((r.status, r.json()["errorCode"].as_u64()), (404, Some(40461)), "{}", r.body);
    assert!(r.body.contains("Journal/2026/01/2026-01-02.md"), "{}", r.body);

    // A dated PUT, then a GET of the same date: the bytes sent, at the path the format makes.
    let text = "# Friday\n\nPlans for the day.\n";
    let r = s.call("PUT", "/periodic/daily/2026/1/2/", &[], Some(text.as_bytes()));
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.header("content-location"), Some("Journal/2026/01/2026-01-02.md"));
    assert_eq!(v.read("Journal/2026/01/2026-01-02.md"), text);
    let r = s.call("GET", "/periodic/daily/2026/01/02/", &[], None);
    assert_eq!((r.status, r.body.as_str()), (200, text));
    assert_eq!(r.header("content-location"), Some("Journal/2026/01/2026-01-02.md"));
    // The plugin's note JSON works through the same route.
    let r = s.call(
        "GET",
        "/periodic/daily/2026/1/2/",
        &[("Accept", "application/vnd.olrapi.note+json")],
        None,
    );
    assert_eq!(r.json()["content"], text, "{}", r.body);

    // An append to a missing note creates it from the template, placeholders filled in.
    let r = s.call("POST", "/periodic/daily/2026/1/3/", &[], Some(b"- coffee\n"));
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(
        v.read("Journal/2026/01/2026-01-03.md"),
        "# 2026-01-03\n\nWritten on a Saturday.\n\n## Log\n\n- coffee\n"
    );

    // A URL target reaches a heading the template made (raw-content PATCH, as in the plugin).
    let r = s.call(
        "PATCH",
        "/periodic/daily/2026/1/5/heading/Log",
        &[("Operation", "append"), ("Content-Type", "text/markdown")],
        Some(b"- standup"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        v.read("Journal/2026/01/2026-01-05.md"),
        "# 2026-01-05\n\nWritten on a Monday.\n\n## Log\n\n- standup\n"
    );

    // A refused write leaves no note behind, template or not.
    let before = notes(&v);
    let r = s.call(
        "POST",
        "/periodic/daily/2026/1/6/",
        &[("Content-Type", "application/json")],
        Some(b"{\"a\": 1}"),
    );
    assert_eq!((r.status, r.json()["errorCode"].as_u64()), (400, Some(40010)), "{}", r.body);
    let r = s.call(
        "PATCH",
        "/periodic/daily/2026/1/6/heading/Nowhere",
        &[("Operation", "append"), ("Content-Type", "text/markdown")],
        Some(b"x"),
    );
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(notes(&v), before, "a refused write changed the vault");

    // DELETE moves the note to the trash; then it is missing again.
    let r = s.call("DELETE", "/periodic/daily/2026/1/2/", &[], None);
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(trash_holds(&v, "2026-01-02"), "the deleted note is not in .trash");
    let r = s.call("GET", "/periodic/daily/2026/1/2/", &[], None);
    assert_eq!(r.status, 404, "{}", r.body);
    let r = s.call("DELETE", "/periodic/daily/2026/1/2/", &[], None);
    assert_eq!((r.status, r.json()["errorCode"].as_u64()), (404, Some(40461)), "{}", r.body);

    // Today's note: the route without a date is the note for the server's local date.
    let today = chrono::Local::now().date_naive().format("Journal/%Y/%m/%Y-%m-%d.md").to_string();
    let r = s.call("PUT", "/periodic/daily/", &[], Some(b"today\n"));
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(v.read(&today), "today\n");
    let r = s.call("GET", "/periodic/daily/", &[], None);
    assert_eq!((r.status, r.body.as_str()), (200, "today\n"));
}

/// Whether any file in the vault's `.trash` has `stem` in its name.
fn trash_holds(v: &TempVault, stem: &str) -> bool {
    walkdir::WalkDir::new(v.root().join(".trash"))
        .into_iter()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().contains(stem))
}

#[test]
fn periods_the_vault_does_not_enable_and_unknown_ones_are_refused_with_their_codes() {
    let v = TempVault::empty();
    v.write("Home.md", "# Home\n");
    let s = serve(&v);
    let before = notes(&v);
    let refused = |method: &str, path: &str, status: u16, code: &str| {
        let r = s.call(method, path, &[], Some(b"x"));
        assert_eq!((r.status, r.code().as_str()), (status, code), "{method} {path}: {}", r.body);
        r
    };

    let r = refused("GET", "/periodic/hourly/", 404, "not_found");
    assert_eq!(r.json()["errorCode"], 40460);
    assert!(r.body.contains("daily, weekly, monthly, quarterly, yearly"), "{}", r.body);
    // Without the Periodic Notes plugin, only daily notes exist.
    let r = refused("PUT", "/periodic/weekly/", 400, "period_disabled");
    assert!(r.body.contains("Periodic Notes"), "{}", r.body);
    refused("PUT", "/periodic/daily/2026/2/30/", 400, "invalid_request");
    refused("PUT", "/periodic/daily/2026/2/", 400, "invalid_request");
    let r = s.call("OPTIONS", "/periodic/daily/", &[], None);
    assert_eq!((r.status, r.code().as_str()), (405, "method_not_allowed"), "{}", r.body);
    assert_eq!(r.header("allow"), Some("GET, HEAD, PUT, POST, PATCH, DELETE"));
    refused("DELETE", "/periodic/daily/heading/Log", 404, "not_found");
    assert_eq!(notes(&v), before, "a refusal changed the vault");

    // Without any settings, daily notes are Obsidian's defaults: the vault root, YYYY-MM-DD,
    // no template, so an append to a missing note makes a note of just the text.
    let r = s.call("POST", "/periodic/daily/2026/3/1/", &[], Some(b"first line\n"));
    assert_eq!(
        (r.status, r.header("content-location")),
        (204, Some("2026-03-01.md")),
        "{}",
        r.body
    );
    assert_eq!(v.read("2026-03-01.md"), "first line\n");
    let before = notes(&v);

    // Obsidian's daily notes switched off: daily is disabled too.
    v.write(".obsidian/core-plugins.json", r#"{"daily-notes": false}"#);
    refused("POST", "/periodic/daily/", 400, "period_disabled");

    // The Periodic Notes plugin enables weekly notes, with a template that is not there.
    v.write(
        ".obsidian/plugins/periodic-notes/data.json",
        r#"{"weekly": {"enabled": true, "folder": "Weeks", "format": "gggg-[W]ww",
            "template": "Templates/Week"}, "monthly": {"enabled": false}}"#,
    );
    let r = refused("POST", "/periodic/weekly/2026/12/31/", 404, "not_found");
    assert!(r.body.contains("Templates/Week"), "{}", r.body);
    refused("GET", "/periodic/monthly/", 400, "period_disabled");
    // A format that would write into a hidden folder meets the gate.
    v.write(
        ".obsidian/plugins/periodic-notes/data.json",
        r#"{"yearly": {"enabled": true,
        "format": "[.hidden/]YYYY"}}"#,
    );
    refused("PUT", "/periodic/yearly/", 400, "invalid_path");
    assert_eq!(notes(&v), before, "a refusal changed the vault");

    // With the template in place, the week holding 2026-12-31 is the en locale's 2027-W01.
    v.write(
        ".obsidian/plugins/periodic-notes/data.json",
        r#"{"weekly": {"enabled": true, "folder": "Weeks", "format": "gggg-[W]ww",
            "template": "Templates/Week"}}"#,
    );
    v.write("Templates/Week.md", "# Week {{date}}\n");
    let r = s.call("POST", "/periodic/weekly/2026/12/31/", &[], Some(b"- review\n"));
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.header("content-location"), Some("Weeks/2027-W01.md"));
    assert_eq!(v.read("Weeks/2027-W01.md"), "# Week 2027-W01\n\n- review\n");
}
