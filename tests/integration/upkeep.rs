//! Vault upkeep end to end: the generated index.md (written only when the configuration asks
//! for it; then kept by the watcher for every kind of writer, untouched when nothing it shows
//! changed, kept while the embedder is down), the
//! maintenance run over built-in checks and the fixture check scripts, callouts, expiries and
//! the frontmatter query, over REST, MCP and the CLI.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Server, TempVault, copy_tree, mdvault, mdvault_with, stderr, stdout};
use crate::serve::tool;

const FAST: &[(&str, &str)] =
    &[("MDVAULT_EMBEDDING__BACKEND", "hashing"), ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2")];

/// [`FAST`], with the generated index.md asked for (it is off by default).
const FAST_INDEX_MD: &[(&str, &str)] = &[
    ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
    ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2"),
    ("MDVAULT_INDEX__INDEX_MD", "true"),
];

fn spec(v: &TempVault) -> String {
    format!("fixture={}", v.root().display())
}

/// Polls `cond` for up to ten seconds.
#[track_caller]
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn index_md(v: &TempVault) -> String {
    std::fs::read_to_string(v.root().join("index.md")).unwrap_or_default()
}

#[test]
fn index_md_follows_every_writer_and_is_left_alone_otherwise() {
    let v = TempVault::fixture();
    let s = Server::start(&[spec(&v)], FAST_INDEX_MD);
    let first = index_md(&v);
    assert!(first.starts_with("---\ngenerator: mdvault\ntimestamp: "), "{first}");
    assert!(
        first.contains("\n## Home\n\n- [Appliances](Home/Appliances.md) - "),
        "folders become headings: {first}"
    );
    assert!(first.contains("\n### Utilities\n\n- [Utilities](Home/Utilities/Utilities.md)"));
    let ready = s.call("GET", "/readyz", &[], None).json();
    assert_eq!(ready["index_md"]["vaults"][0]["ok"], true, "{ready}");
    assert_eq!(ready["index_md"]["vaults"][0]["entries"], 30, "{ready}");

    // A REST write, an MCP write and an edit behind the server's back all reach it.
    let r = s.call(
        "PUT",
        "/vault/Inbox/Rest%20note.md",
        &[],
        Some(b"---\ndescription: Written over REST.\n---\n# Rest note\n"),
    );
    assert_eq!(r.status, 204, "{}", r.body);
    eventually("the REST note", || {
        index_md(&v).contains("- [Rest note](Inbox/Rest%20note.md) - Written over REST.\n")
    });
    let (err, text) = tool(
        &s,
        "/mcp",
        "vault_write",
        json!({"path": "Inbox/Agent note.md", "content": "---\ntitle: From an agent\n---\nHello there. More.\n"}),
    );
    assert!(!err, "{text}");
    eventually("the MCP note", || {
        index_md(&v).contains("- [From an agent](Inbox/Agent%20note.md) - Hello there.\n")
    });
    v.write("Inbox/Typed.md", "# Typed in an editor\n\nSaved by hand.\n");
    eventually("the hand-made note", || {
        index_md(&v).contains("- [Typed in an editor](Inbox/Typed.md) - Saved by hand.\n")
    });

    // A body-only edit leaves index.md byte for byte as it was: a REST write refreshes it
    // before it answers. A hand edit's events are handled in order, so once a note saved after
    // them is listed, they have been handled too.
    let before = index_md(&v);
    let r = s.call("POST", "/vault/Inbox/Rest%20note.md", &[], Some(b"\nMore body text.\n"));
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(index_md(&v), before, "a body-only write rewrote index.md");
    v.write("Inbox/Typed.md", "# Typed in an editor\n\nSaved by hand.\n\nA second paragraph.\n");
    v.write("Inbox/Marker.md", "# Marker\n");
    eventually("the marker note", || index_md(&v).contains("(Inbox/Marker.md)"));
    // The marker's own rewrite moves the timestamp; every other line must be as it was.
    let lines = |text: &str| -> String {
        text.split_inclusive('\n')
            .filter(|l| !l.contains("(Inbox/Marker.md)") && !l.starts_with("timestamp:"))
            .collect()
    };
    assert_eq!(lines(&index_md(&v)), lines(&before));
    let before = std::fs::read(v.root().join("index.md")).unwrap();

    // No writer may touch it, on either surface; a hand edit is put back.
    let r = s.call("PUT", "/vault/index.md", &[], Some(b"# mine\n"));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);
    let (err, text) = tool(&s, "/mcp", "vault_append", json!({"path": "index.md", "content": "x"}));
    assert!(err && text.contains("index.md"), "{text}");
    let hand = format!("{}\n- [Fake](Fake.md)\n", String::from_utf8_lossy(&before));
    std::fs::write(v.root().join("index.md"), &hand).unwrap();
    eventually("the hand edit to be undone", || !index_md(&v).contains("Fake"));

    // A deleted note leaves it, and a moved one moves in it.
    assert_eq!(s.call("DELETE", "/vault/Inbox/Typed.md", &[], None).status, 204);
    eventually("the deletion", || !index_md(&v).contains("Inbox/Typed.md"));
    let r = s.call(
        "POST",
        "/move/Inbox/Agent%20note.md",
        &[("Content-Type", "application/json")],
        Some(br#"{"destination": "Work/Agent note.md"}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    eventually("the move", || index_md(&v).contains("(Work/Agent%20note.md)"));
    assert!(!index_md(&v).contains("Inbox/Agent"));
}

#[test]
fn index_md_and_the_upkeep_routes_work_while_the_embedder_is_down() {
    let v = TempVault::fixture();
    let dead = crate::common::DeadEmbedder::at_a_closed_port();
    let mut env = dead.env();
    env.push(("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2"));
    env.push(("MDVAULT_INDEX__INDEX_MD", "true"));
    let s = Server::spawn(&[spec(&v)], &env);
    s.wait_index_md();
    // Search answers by words once they are committed and `not_ready` before: never more.
    let status = s.call("GET", "/search?q=boiler", &[], None).status;
    assert!(status == 200 || status == 503, "search answered {status}");
    assert!(index_md(&v).contains("- [Boiler](Home/Boiler.md)"));
    v.write("Inbox/While down.md", "---\ndescription: Still listed.\n---\n");
    eventually("the new note", || {
        index_md(&v).contains("- [While down](Inbox/While%20down.md) - Still listed.")
    });
    for path in [
        "/callouts",
        "/expiries",
        "/maintenance/checks",
        "/maintenance",
        "/frontmatter?key=type&value=asset",
    ] {
        let r = s.call("GET", path, &[], None);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
    }
}

#[test]
fn serving_a_vault_with_the_default_configuration_writes_no_file_into_it() {
    let v = TempVault::fixture();
    let before = v.snapshot();
    // `serve` with no configuration at all but the vault: the first build runs to its end.
    let s = Server::start(&[spec(&v)], &[("MDVAULT_EMBEDDING__BACKEND", "hashing")]);
    let ready = s.call("GET", "/readyz", &[], None).json();
    assert_eq!(ready["status"], "ready", "{ready}");
    assert_eq!(ready["index_md"], json!({"enabled": false, "vaults": []}));
    assert_eq!(v.snapshot(), before, "the vault's files and bytes are as they were");
    // Asked by hand, the page is written once, and the command says nothing will keep it.
    let out = mdvault(&["index-md", &format!("--vault={}", v.root().display())], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("index.index_md is off"), "{}", stderr(&out));
    assert!(index_md(&v).starts_with("---\ngenerator: mdvault\n"));
}

#[test]
fn stdio_mcp_with_the_default_configuration_writes_no_file_into_the_vault() {
    let v = TempVault::fixture();
    let before = v.snapshot();
    let (home, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mdvault"));
    cmd.args(["mcp", "--vault", &spec(&v), "--data-dir", data.path().to_str().unwrap()])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("MDVAULT_EMBEDDING__BACKEND", "hashing")
        .stderr(std::process::Stdio::null());
    let mut m = crate::multivault::StdioMcp::over(cmd);
    // Search answers with a notice until the first build has ended; then it is done.
    eventually("the first build to end", || {
        !m.search(json!({"query": "boiler"})).contains("still being built")
    });
    assert_eq!(v.snapshot(), before, "the vault's files and bytes are as they were");
}

#[test]
fn a_hand_written_index_md_is_never_overwritten() {
    let v = TempVault::fixture();
    v.write("index.md", "# My own start page\n");
    let s = Server::start(&[spec(&v)], FAST_INDEX_MD);
    assert_eq!(v.read("index.md"), "# My own start page\n");
    let ready = s.call("GET", "/readyz", &[], None).json();
    assert_eq!(ready["status"], "degraded", "{ready}");
    let why = ready["index_md"]["vaults"][0]["error"].as_str().unwrap();
    assert!(why.contains("did not generate") && why.contains("index.index_md"), "{why}");
    // The CLI says the same, with the refusal's code.
    let out = mdvault_with(
        &["index-md", &format!("--vault={}", v.root().display())],
        &[("MDVAULT_INDEX__INDEX_MD", "true")],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("error[already_exists]"), "{}", stderr(&out));
    assert_eq!(v.read("index.md"), "# My own start page\n");
}

/// A copy of the fixture vault with the fixture check scripts in `.scripts/`, and an empty
/// note for `check_tidy.py` to report as an error.
fn vault_with_scripts() -> TempVault {
    let v = TempVault::fixture();
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checks");
    copy_tree(&scripts, &v.root().join(".scripts"));
    v.write("Inbox/Empty.md", "");
    v
}

#[test]
fn maintenance_runs_built_in_checks_and_the_vaults_scripts_under_the_contract() {
    let v = vault_with_scripts();
    let env = [FAST, &[("MDVAULT_MAINTENANCE__TIMEOUT_SECONDS", "3")]].concat();
    let s = Server::start(&[spec(&v)], &env);

    let checks = s.call("GET", "/maintenance/checks", &[], None).json();
    let listed: Vec<(String, String)> = checks["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["check"].as_str().unwrap().into(), c["source"].as_str().unwrap().into()))
        .collect();
    let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "links",
            "tidy",
            "crash",
            "headings",
            "frontmatter",
            "slow",
            "documents",
            "sloppy",
            "expiries",
            "check_legacy"
        ],
        "{checks}"
    );
    assert!(listed.iter().filter(|(_, s)| s == "builtin").count() == 5);
    assert_eq!(checks["checks"][9]["legacy"], true);

    let run = s.call("GET", "/maintenance", &[], None);
    assert_eq!(run.status, 200, "{}", run.body);
    let run = run.json();
    let by: std::collections::HashMap<&str, &Value> = run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["check"].as_str().unwrap(), c))
        .collect();
    let status = |name: &str| by[name]["status"].as_str().unwrap().to_string();
    assert_eq!(status("tidy"), "failed");
    assert!(by["tidy"]["findings"].as_array().unwrap().iter().any(|f| f["code"] == "empty_note"
        && f["path"] == "Inbox/Empty.md"
        && f["severity"] == "error"));
    assert_eq!(status("crash"), "could_not_run");
    assert!(by["crash"]["output"].as_str().unwrap().contains("Traceback"), "{}", by["crash"]);
    assert_eq!(status("slow"), "could_not_run");
    assert!(by["slow"]["error"].as_str().unwrap().contains("took longer"), "{}", by["slow"]);
    assert_eq!(status("sloppy"), "invalid");
    assert!(!by["sloppy"]["problems"].as_array().unwrap().is_empty());
    assert_eq!(status("check_legacy"), "legacy");
    assert!(!by["check_legacy"]["output"].as_str().unwrap().is_empty());
    assert_eq!(status("headings"), "failed", "Inbox/Scratch.md repeats a heading");
    assert_eq!(status("frontmatter"), "failed", "the fixture has one broken YAML block");
    assert_eq!(status("links"), "passed");
    // Every link in the fixture resolves, the one to Broadband's filed contract PDF included,
    // and that PDF is linked and readable.
    assert_eq!(by["links"]["findings"], json!([]), "{}", by["links"]);
    assert_eq!(status("documents"), "passed");
    assert_eq!(by["documents"]["findings"], json!([]), "{}", by["documents"]);
    assert_eq!(run["exit_code"], 2, "a check that could not run wins");
    assert_eq!(run["summary"]["could_not_run"], 2);
    let md = run["markdown"].as_str().unwrap();
    for title in by.values().map(|c| c["title"].as_str().unwrap()) {
        assert!(md.contains(title), "the Markdown omits {title}");
    }
    // POST is the same run.
    assert_eq!(s.call("POST", "/maintenance", &[], None).json()["summary"], run["summary"]);
    // MCP renders the same findings as Markdown, and can list without running.
    let (err, text) = tool(&s, "/mcp", "vault_maintenance", json!({}));
    assert!(!err && text.contains("empty_note"), "{text}");
    let (err, text) = tool(&s, "/mcp", "vault_maintenance", json!({"list_only": true}));
    assert!(!err && text.contains("`sloppy`") && !text.contains("empty_note"), "{text}");
}

#[test]
fn check_exits_as_the_contract_says() {
    let arg = |v: &TempVault| format!("--vault={}", v.root().display());
    // A clean vault.
    let clean = TempVault::empty();
    clean.write("A.md", "---\ntitle: A\n---\n# A\n\nSee [[B]].\n");
    clean.write("B.md", "# B\n");
    let out = mdvault(&["check", &arg(&clean)], None);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("5 checks: 0 error(s), 0 warning(s)"), "{}", stdout(&out));
    // Warnings alone still exit 0; an error finding exits 1.
    clean.write("C.md", "[[Nowhere]]\n");
    assert_eq!(mdvault(&["check", &arg(&clean)], None).status.code(), Some(0));
    clean.write("D.md", "## Twice\n## Twice\n");
    let out = mdvault(&["check", &arg(&clean), "--json"], None);
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["summary"]["errors"], 1);
    assert_eq!(j["summary"]["warnings"], 1);
    // A script that cannot run exits 2.
    let v = vault_with_scripts();
    let quick = [("MDVAULT_MAINTENANCE__TIMEOUT_SECONDS", "3")];
    let out = mdvault_with(&["check", &arg(&v)], &quick, None);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("could not run") && text.contains("broke the findings contract"));
    assert!(!text.contains("\x1b["), "no colour when stdout is not a terminal");
    let out = mdvault(&["check", "--list", &arg(&v)], None);
    assert!(out.status.success() && stdout(&out).contains("check_legacy"), "{}", stdout(&out));
}

#[test]
fn callouts_expiries_and_frontmatter_are_read_from_the_files() {
    let v = TempVault::fixture();
    let today = chrono::Local::now().date_naive();
    let day = |n: i64| (today + chrono::Duration::days(n)).format("%Y-%m-%d").to_string();
    v.write(
        "Upkeep/Three dates.md",
        &format!(
            "---\nexpires:\n  - date: {}\n    what: Far away\n  - date: {}\n    what: Lapsed\n  - date: {}\n    what: Soon\n---\n",
            day(400),
            day(-10),
            day(5)
        ),
    );
    v.write(
        "Upkeep/One date.md",
        &format!("---\nexpires:\n  - date: {}\n    what: Next month\n---\n", day(30)),
    );
    v.write("Upkeep/Broken.md", "---\nexpires:\n  - date: someday\n    what: Never\n---\n");
    v.write("Upkeep/Reasonless.md", "---\nexpires: none\n---\n");
    let s = Server::start(&[spec(&v)], FAST);

    // Callouts: the open ones, most urgent first; a folded note callout is not open.
    let c = s.call("GET", "/callouts", &[], None).json();
    let seen: Vec<(String, String, u64)> = c["callouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["severity"].as_str().unwrap().into(),
                c["note"].as_str().unwrap().into(),
                c["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("warning", "Home/Boiler.md", 42),
        ("warning", "Tech/NAS.md", 30),
        ("action", "Home/Insurance/Car Insurance.md", 27),
        ("action", "Work/Ledger Migration.md", 31),
    ];
    assert_eq!(
        seen,
        want.iter().map(|(a, b, n)| (a.to_string(), b.to_string(), *n)).collect::<Vec<_>>()
    );
    assert_eq!(c["counts"]["all_types"], 5, "{c}");
    assert_eq!(c["callouts"][1]["title"], "Disk 3 errors");
    let tech = s.call("POST", "/callouts?dir=Tech", &[], None).json();
    assert_eq!(tech["callouts"].as_array().unwrap().len(), 1);
    for (path, status, code) in [
        ("/callouts?dir=Nowhere", 404, "not_found"),
        ("/callouts?dir=Home/Boiler.md", 400, "not_a_directory"),
        ("/callouts?dir=../..", 400, "invalid_path"),
    ] {
        let r = s.call("GET", path, &[], None);
        assert_eq!((r.status, r.code().as_str()), (status, code), "{path}: {}", r.body);
    }

    // Expiries: one row per date, oldest first; lapsed dates survive any window.
    let e = s.call("GET", "/expiries?dir=Upkeep&within=20", &[], None).json();
    let rows: Vec<(&str, i64)> = e["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["what"].as_str().unwrap(), r["days"].as_i64().unwrap()))
        .collect();
    assert_eq!(rows, [("Lapsed", -10), ("Soon", 5)]);
    let e = s.call("GET", "/expiries?dir=Upkeep", &[], None).json();
    let whats: Vec<&str> =
        e["entries"].as_array().unwrap().iter().map(|r| r["what"].as_str().unwrap()).collect();
    assert_eq!(whats, ["Lapsed", "Soon", "Next month", "Far away"]);
    let problems: Vec<&str> =
        e["malformed"].as_array().unwrap().iter().map(|m| m["note"].as_str().unwrap()).collect();
    assert_eq!(problems, ["Upkeep/Broken.md", "Upkeep/Reasonless.md"]);
    let all = s.call("GET", "/expiries?untracked=1", &[], None).json();
    assert_eq!(all["dismissed"][0]["note"], "Home/Utilities/Water.md");
    let untracked = all["untracked"]["notes"].as_array().unwrap();
    assert_eq!(all["untracked"]["count"].as_u64().unwrap() as usize, untracked.len());
    assert!(untracked.iter().any(|n| n == "Home/Boiler.md"));
    assert!(s.call("GET", "/expiries", &[], None).json()["untracked"].get("notes").is_none());
    let r = s.call("GET", "/expiries?within=soon", &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"));
    let (err, text) = tool(&s, "/mcp", "vault_expiries", json!({"dir": "Upkeep", "within": 20}));
    assert!(!err && text.contains("lapsed 10 day(s) ago") && !text.contains("Far away"), "{text}");

    // Frontmatter: exact membership over scalars and lists, from the files.
    let f = s.call("GET", "/frontmatter?key=type&value=asset", &[], None).json();
    let files: Vec<&str> =
        f.as_array().unwrap().iter().map(|x| x["filename"].as_str().unwrap()).collect();
    assert!(files.contains(&"Home/Boiler.md") && files.windows(2).all(|w| w[0] < w[1]));
    let none = s.call("GET", "/frontmatter?key=type&value=asse", &[], None).json();
    assert_eq!(none, json!([]));
    let r = s.call("GET", "/frontmatter?key=type", &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"));
    let (err, text) = tool(
        &s,
        "/mcp",
        "vault_frontmatter_query",
        json!({"key": "type", "value": "asset", "dir": "Home"}),
    );
    assert!(!err && text.contains("Home/Boiler.md"), "{text}");
}

/// A contract check named like a built-in one: one `info` finding, so a test can tell whose
/// rules ran.
const OWN_FRONTMATTER: &str = r#"import json, sys
DECLARATION = {"schema": 2, "check": "frontmatter", "title": "Our frontmatter rules",
               "description": "The vault's own frontmatter check.", "order": 30}
if "--describe" in sys.argv:
    print(json.dumps(DECLARATION))
    sys.exit(0)
finding = {"id": "own-1", "severity": "info", "code": "ours_ran", "message": "the vault's rules ran"}
print(json.dumps(dict(DECLARATION, findings=[finding])))
"#;

#[test]
fn a_vault_check_named_like_a_built_in_replaces_it_for_that_vault() {
    let v = TempVault::fixture();
    v.write(".scripts/check_frontmatter.py", OWN_FRONTMATTER);
    let plain = TempVault::fixture();
    let args = |t: &TempVault, extra: &[&str]| {
        let mut a = vec!["check".to_string(), "--vault".into(), t.root().display().to_string()];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        mdvault_with(&a, FAST, None)
    };

    let o = run(args(&v, &["--list", "--json"]));
    let listed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let named: Vec<&Value> = listed["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "frontmatter")
        .collect();
    assert_eq!(named.len(), 1, "one frontmatter check: {listed}");
    assert_eq!(named[0]["source"], "script");
    assert_eq!(named[0]["replaces_builtin"], true);
    assert!(named[0].get("problem").is_none(), "{listed}");
    let text = stdout(&run(args(&v, &["--list"])));
    assert!(text.contains("replaces the built-in check"), "{text}");

    let o = run(args(&v, &["--json"]));
    assert_ne!(o.status.code(), Some(2), "the check ran: {}", stdout(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "frontmatter")
        .collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "passed", "{}", runs[0]);
    assert_eq!(runs[0]["findings"][0]["code"], "ours_ran");

    // A vault without the script keeps the built-in check.
    let o = run(args(&plain, &["--list", "--json"]));
    let listed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let fm = listed["checks"].as_array().unwrap().iter().find(|c| c["check"] == "frontmatter");
    assert_eq!(fm.unwrap()["source"], "builtin");
}

#[test]
fn a_vault_with_extract_callouts_py_gets_its_callouts_from_it() {
    let v = TempVault::fixture();
    let cli = |t: &TempVault| {
        let root = t.root().display().to_string();
        let o = mdvault_with(&["callouts", "--vault", &root, "--json"], FAST, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let builtin = cli(&v);
    assert_eq!(builtin["source"], "builtin");
    v.write(
        ".scripts/extract_callouts.py",
        r#"import json, sys
assert sys.argv[1:] == ["--vault-path", sys.argv[2], "--json"], sys.argv
print(json.dumps({"generated": "now", "counts": {"callouts": 2, "notes_scanned": 40},
  "callouts": [
    {"note": "Home/Boiler.md", "line": 7, "type": "DANGER", "severity": "critical", "title": "Gas", "body": "smell"},
    {"note": "Tech/NAS.md", "line": 3, "type": "idea", "severity": "someday", "title": "Raid", "body": ""}]}))
"#,
    );
    let own = cli(&v);
    assert_eq!(own["source"], ".scripts/extract_callouts.py", "{own}");
    let list = own["callouts"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{own}");
    assert_eq!(
        (list[0]["note"].as_str(), list[0]["type"].as_str()),
        (Some("Home/Boiler.md"), Some("danger"))
    );
    assert_eq!(list[1]["severity"], "info", "an unknown severity follows the type");
    assert_eq!(own["counts"]["notes_scanned"], 40);
    // `--dir` narrows the script's list too.
    let root = v.root().display().to_string();
    let o = mdvault_with(&["callouts", "--vault", &root, "--dir", "Tech", "--json"], FAST, None);
    let narrowed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(narrowed["callouts"].as_array().unwrap().len(), 1, "{narrowed}");

    // A script that fails is an error naming it, not a silent fallback.
    v.write(
        ".scripts/extract_callouts.py",
        "import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n",
    );
    let o = mdvault_with(&["callouts", "--vault", &root, "--json"], FAST, None);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("internal_error") && e.contains("extract_callouts.py exited with 3"), "{e}");
    assert!(e.contains("boom") && e.contains("built-in parser"), "{e}");
}
