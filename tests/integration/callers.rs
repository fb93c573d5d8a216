//! The callers that exist: what the predecessor's scripts and the Local REST API's most-used
//! clients send, served in the one meaning it has (issue 29's REST half).
//!
//! The real binary over raw HTTP: version-less `Target-Type` headers read as the 1.x format
//! (and refused only under `server.strict_patch_version`), `Accept` lists as axios and
//! browsers send them, the app-only routes, and `/search/simple/` finding every note that holds
//! the query (against `grep -ril` on obsidian-help when the evaluation vaults are present).

use std::collections::BTreeSet;
use std::process::Command;

use crate::common::{Server, TempVault};
use crate::eval_data::{EVAL_VAULTS, find};

const HASHING: &[(&str, &str)] = &[
    ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
    ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2"),
    // No generated index.md: grep would find it, and a user of the plugin has none.
    ("MDVAULT_INDEX__INDEX_MD", "false"),
];

fn spec(name: &str, v: &TempVault) -> String {
    format!("{name}={}", v.root().display())
}

const BOILER: &str = "/vault/Home/Boiler.md";

#[test]
fn version_less_target_headers_are_the_1x_format_with_the_predecessors_defaults() {
    let v = TempVault::fixture();
    let s = Server::start(&[spec("fixture", &v)], HASHING);

    // A heading append, as mcp-obsidian sends it: no version, the target percent-encoded.
    let r = s.call(
        "PATCH",
        BOILER,
        &[
            ("Operation", "append"),
            ("Target-Type", "heading"),
            ("Target", "Boiler%3A%3ASettings"),
            ("Content-Type", "text/markdown"),
        ],
        Some(b"- Flow temperature lowered to 60."),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("deprecation").is_some(), "a 1.x answer is marked deprecated");
    let text = v.read("Home/Boiler.md");
    assert!(text.trim_end().ends_with("- Flow temperature lowered to 60."), "{text}");

    // A frontmatter key without Operation is replaced (the predecessor's default), and a plain
    // text body is a string.
    let r = s.call(
        "PATCH",
        BOILER,
        &[("Target-Type", "frontmatter"), ("Target", "type")],
        Some(b"appliance"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(v.read("Home/Boiler.md").contains("\ntype: appliance\n"));

    // Operation delete removes a key; nothing else in the block changes.
    let before = v.read("Home/Boiler.md");
    let r = s.call(
        "PATCH",
        BOILER,
        &[("Target-Type", "frontmatter"), ("Target", "description"), ("Operation", "delete")],
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let after = v.read("Home/Boiler.md");
    assert!(!after.contains("description:"), "{after}");
    // The write bumps `timestamp:` (the vault's setting), which may cross a second boundary
    // between the two reads; every other line stays.
    let unstamped = |text: &str| -> Vec<String> {
        text.lines().filter(|l| !l.starts_with("timestamp:")).map(str::to_string).collect()
    };
    let kept: Vec<String> =
        unstamped(&before).into_iter().filter(|l| !l.starts_with("description:")).collect();
    assert_eq!(unstamped(&after), kept);
    assert!(after.contains("\ntimestamp: "), "{after}");

    // A Target alone targets a heading; a JSON array Target (as 2.x clients write one) is its
    // segments; Operation defaults to replace.
    let r = s.call(
        "PATCH",
        BOILER,
        &[("Target", "%5B%22Boiler%22%2C%22Faults%20and%20fixes%22%5D")],
        Some(b"No faults since the last service."),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let text = v.read("Home/Boiler.md");
    assert!(
        text.contains("## Faults and fixes\n\nNo faults since the last service.\n\n## Settings")
    );

    // A targeted read and a targeted PUT, no version.
    let r =
        s.call("GET", BOILER, &[("Target-Type", "heading"), ("Target", "Faults and fixes")], None);
    assert_eq!((r.status, r.body.as_str()), (200, "No faults since the last service.\n"));
    assert!(r.header("deprecation").is_some());
    let r = s.call(
        "PUT",
        BOILER,
        &[("Target-Type", "heading"), ("Target", "Faults and fixes")],
        Some(b"Replaced."),
    );
    assert!(r.status == 200 || r.status == 204, "{} {}", r.status, r.body);
    assert!(v.read("Home/Boiler.md").contains("## Faults and fixes\n\nReplaced.\n"));

    // A filed document is still not a note.
    let before = v.snapshot();
    let r = s.call(
        "PATCH",
        "/vault/Home/Utilities/Files/2026-05-02%20Nordlicht%20-%20Contract.pdf",
        &[("Target-Type", "heading"), ("Target", "Page 1"), ("Operation", "append")],
        Some(b"x"),
    );
    assert_eq!((r.status, r.code().as_str()), (400, "is_document"), "{}", r.body);
    assert_eq!(v.snapshot(), before);
}

#[test]
fn the_strict_setting_restores_the_plugins_refusals_and_changes_nothing() {
    let v = TempVault::fixture();
    let env = [HASHING, &[("MDVAULT_SERVER__STRICT_PATCH_VERSION", "true")]].concat();
    let s = Server::start(&[spec("fixture", &v)], &env);
    let before = v.snapshot();
    let target = [("Target-Type", "heading"), ("Target", "Settings")];
    let append = [target[0], target[1], ("Operation", "append")];
    for (method, headers, number) in [
        ("PATCH", &append[..], 40084),
        ("PUT", &target[..], 40083),
        ("POST", &target[..], 40083),
        ("GET", &target[..], 40083),
    ] {
        let r = s.call(method, BOILER, headers, Some(b"x"));
        assert_eq!(
            (r.status, r.json()["errorCode"].as_u64()),
            (400, Some(number)),
            "{method}: {}",
            r.body
        );
    }
    // The explicit versions still work.
    let v1 = [append[0], append[1], append[2], ("Markdown-Patch-Version", "1")];
    assert_eq!(s.call("PATCH", BOILER, &v1, Some(b"- v1")).status, 200);
    assert_ne!(v.snapshot(), before);
}

#[test]
fn accept_lists_get_markdown_and_a_lone_json_keeps_the_predecessors_object() {
    let v = TempVault::fixture();
    let s = Server::start(&[spec("fixture", &v)], HASHING);
    let disk = v.read("Home/Boiler.md");
    for accept in ["application/json, text/plain, */*", "*/*", "text/markdown", ""] {
        let r = s.call("GET", BOILER, &[("Accept", accept)], None);
        assert_eq!(r.status, 200);
        assert_eq!(r.body, disk, "Accept {accept:?}");
        assert!(r.header("content-type").unwrap().starts_with("text/markdown"), "{accept:?}");
    }
    let r = s.call("GET", BOILER, &[("Accept", "application/json")], None);
    let keys: BTreeSet<String> = r.json().as_object().unwrap().keys().cloned().collect();
    // The predecessor's four keys (mdvault adds its vault and etag beside them).
    for key in ["body", "content", "frontmatter", "path"] {
        assert!(keys.contains(key), "{key} missing: {keys:?}");
    }
    let r = s.call("GET", BOILER, &[("Accept", "application/vnd.olrapi.note+json")], None);
    assert!(r.json()["stat"].is_object(), "{}", r.body);
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let r = s.call("GET", BOILER, &[("Accept", browser)], None);
    assert!(r.header("content-type").unwrap().starts_with("text/html"), "{}", r.body);
}

#[test]
fn routes_that_need_the_obsidian_app_say_so_and_an_unknown_periodic_tail_is_not_found() {
    let v = TempVault::fixture();
    let s = Server::start(&[spec("fixture", &v)], HASHING);
    let before = v.snapshot();
    for (method, path) in [
        ("GET", "/active/"),
        ("PUT", "/active/"),
        ("POST", "/active/"),
        ("PATCH", "/active/"),
        ("DELETE", "/active/"),
        ("GET", "/commands/"),
        ("POST", "/commands/editor%3Asave-file/"),
        ("POST", "/open/Home/Boiler.md"),
    ] {
        let r = s.call(method, path, &[], Some(b"x"));
        assert_eq!((r.status, r.code().as_str()), (501, "needs_obsidian"), "{method} {path}");
        assert_eq!(r.json()["errorCode"], 50100);
        assert!(r.code() == "needs_obsidian" && r.body.contains("/vault/"), "{}", r.body);
    }
    for path in ["/periodic/daily/recent?limit=3", "/periodic/daily/2026/1/2/extra"] {
        let r = s.call("GET", path, &[], None);
        assert_eq!((r.status, r.code().as_str()), (404, "not_found"), "{path}: {}", r.body);
    }
    assert_eq!(v.snapshot(), before);
}

/// The notes of `root` holding `word` in their text, by the real `grep -ril`.
fn grep_notes(root: &std::path::Path, word: &str) -> BTreeSet<String> {
    let out = Command::new("grep")
        .args(["-ril", "--include=*.md", "--", word, "."])
        .current_dir(root)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("grep runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        // Hidden folders (`.obsidian`, `.trash`) hold no notes.
        .filter(|p| !p.split('/').any(|c| c.starts_with('.')))
        .collect()
}

/// The simple search's notes for `word`: those matched in their text, and those matched only
/// by their path.
fn simple_notes(s: &Server, word: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let r = s.call("POST", &format!("/search/simple/?query={word}&contextLength=20"), &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    let (mut text, mut name) = (BTreeSet::new(), BTreeSet::new());
    for hit in r.json().as_array().unwrap() {
        let file = hit["filename"].as_str().unwrap().to_string();
        let sources: Vec<&str> = hit["matches"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["match"]["source"].as_str())
            .collect();
        for m in hit["matches"].as_array().unwrap() {
            let context = m["context"].as_str().unwrap();
            assert!(context.to_lowercase().contains(word), "{file}: {context:?}");
        }
        if sources.contains(&"content") {
            text.insert(file);
        } else {
            name.insert(file);
        }
    }
    (text, name)
}

#[test]
fn simple_search_finds_every_note_that_holds_the_query_not_only_the_ranked_ones() {
    let v = TempVault::fixture();
    let s = Server::start(&[spec("fixture", &v)], HASHING);
    for word in ["2026", "the", "boiler"] {
        let (text, name) = simple_notes(&s, word);
        let grep = grep_notes(v.root(), word);
        assert_eq!(text, grep, "{word}");
        assert!(name.iter().all(|p| p.to_lowercase().contains(word)), "{word}: {name:?}");
    }
    let r = s.call("POST", "/search/simple/?query=boiler&contextLength=", &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"), "{}", r.body);
    // An empty within= is a blank field, no limit (the contract says so); a word is refused.
    assert_eq!(s.call("GET", "/expiries?within=", &[], None).status, 200);
    let r = s.call("GET", "/expiries?within=soon", &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"), "{}", r.body);
}

#[test]
fn simple_search_agrees_with_grep_on_obsidian_help_for_ten_queries() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    let v = TempVault::copy_of(&vaults.join("obsidian-help"));
    let s = Server::start(&[spec("help", &v)], HASHING);
    let words = [
        "vault",
        "plugin",
        "canvas",
        "embed",
        "alias",
        "frontmatter",
        "callout",
        "sync",
        "hotkey",
        "template",
    ];
    for word in words {
        let (text, name) = simple_notes(&s, word);
        let grep = grep_notes(v.root(), word);
        assert!(grep.len() >= 5, "{word} is too rare to tell anything: {}", grep.len());
        assert_eq!(text, grep, "{word}: /search/simple/ (left) and grep -ril (right) disagree");
        assert!(name.iter().all(|p| p.to_lowercase().contains(word)), "{word}: {name:?}");
    }
}
