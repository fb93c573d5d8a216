//! `mdvault serve` end to end: the real binary on a free port, driven over raw HTTP.
//!
//! Every REST route, every refusal the REST surface can produce (each followed by a check that
//! the vault is byte-identical), auth, hostile paths, a forged Host, the body limit, MCP over
//! streamable HTTP with vault prefixes and scoped writes, and the readiness shape while the
//! index cannot be built. The embedder here is the hashing one: these tests are about the
//! surfaces, and search quality has its own tests.

use serde_json::{Value, json};

use crate::common::{KEY, Reply, Server, TempVault, http_call};

const HASHING: &[(&str, &str)] =
    &[("MDVAULT_EMBEDDING__BACKEND", "hashing"), ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2")];

fn spec(name: &str, v: &TempVault) -> String {
    format!("{name}={}", v.root().display())
}

/// Asserts a refusal's status and code, and that the vault did not change.
#[track_caller]
fn refused(
    s: &Server,
    v: &TempVault,
    method: &str,
    path: &str,
    h: &[(&str, &str)],
    body: Option<&[u8]>,
    (status, code): (u16, &str),
) -> Reply {
    let before = v.snapshot();
    let r = s.call(method, path, h, body);
    assert_eq!((r.status, r.code().as_str()), (status, code), "{method} {path}: {}", r.body);
    assert!(!r.json()["error"].as_str().unwrap_or("").is_empty());
    assert_eq!(v.snapshot(), before, "{method} {path} changed the vault");
    r
}

/// One JSON-RPC request to an MCP endpoint; the `result` (or the whole reply on error).
pub fn mcp(s: &Server, path: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let r = s.call(
        "POST",
        path,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        Some(body.as_bytes()),
    );
    assert_eq!(r.status, 200, "{path} {method}: {}", r.body);
    let text = if r.header("content-type").is_some_and(|c| c.starts_with("text/event-stream")) {
        r.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| d.contains("\"id\""))
            .unwrap_or("")
            .to_string()
    } else {
        r.body.clone()
    };
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {}", r.body));
    v.get("result").cloned().unwrap_or(v)
}

/// Calls one tool; returns (is_error, text).
pub fn tool(s: &Server, path: &str, name: &str, args: Value) -> (bool, String) {
    let r = mcp(s, path, "tools/call", json!({"name": name, "arguments": args}));
    let text = r["content"]
        .as_array()
        .map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_else(|| panic!("no content: {r}"));
    (r["isError"].as_bool().unwrap_or(false), text)
}

#[test]
fn rest_routes_answer_like_the_local_rest_api() {
    let v = TempVault::fixture();
    let s = Server::start(&[spec("fixture", &v)], HASHING);

    // Health: no auth for /healthz; /readyz is ready with counts.
    let h = http_call(&s.base, "GET", "/healthz", None, &[], None);
    assert_eq!((h.status, h.body.as_str()), (200, "ok\n"));
    let ready = s.call("GET", "/readyz", &[], None);
    assert_eq!(ready.status, 200);
    let rj = ready.json();
    assert_eq!(rj["status"], "ready");
    assert!(rj["index"]["files"].as_u64().unwrap() >= 28, "{rj}");
    assert!(rj["index"]["chunks"].as_u64().unwrap() > 28);
    assert_eq!(rj["watcher"]["ok"], true);

    // Read: Markdown by default, JSON on request, a section, a map, an ETag.
    let r = s.call("GET", "/vault/Home/Boiler.md", &[], None);
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/markdown"));
    assert_eq!(r.body, v.read("Home/Boiler.md"));
    let etag = r.header("etag").unwrap().trim_matches('"').to_string();
    let j = s
        .call(
            "GET",
            "/vault/Home/Boiler.md",
            &[("Accept", "application/vnd.olrapi.note+json")],
            None,
        )
        .json();
    assert_eq!(j["path"], "Home/Boiler.md");
    assert_eq!(j["etag"], etag.as_str());
    assert!(j["frontmatter"].is_object() && j["body"].is_string());
    let sec = s.call("GET", "/vault/Home/Boiler.md?section=Settings", &[], None);
    assert!(
        sec.body.contains("1.3 bar") && !sec.body.contains("Varmond Thermia 28C\n# "),
        "{}",
        sec.body
    );
    let map = s.call("GET", "/vault/Tech/Homelab/Proxmox%20Host.md?map", &[], None).json();
    let paths: Vec<&str> =
        map["headings"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert!(paths.iter().any(|p| p.ends_with("Containers::Backups")), "{paths:?}");

    // Listings: the root, a folder with and without the trailing slash, text and JSON.
    let root = s.call("GET", "/vault/", &[("Accept", "text/plain")], None);
    assert!(root.body.contains("Home/") && root.body.contains("entries in /"), "{}", root.body);
    // Without a text Accept it is JSON, with the Local REST API's `files` (folders end in /).
    let root = s.call("GET", "/vault/", &[], None).json();
    assert!(root["files"].as_array().unwrap().contains(&json!("Home/")), "{root}");
    assert!(root["entries"].is_array());
    let home = s.call("GET", "/vault/Home/", &[("Accept", "application/json")], None).json();
    assert!(home["entries"].as_array().unwrap().iter().any(|e| e["name"] == "Boiler.md"));
    let home2 = s.call("GET", "/vault/Home", &[("Accept", "application/json")], None).json();
    assert_eq!(home, home2);

    // PUT creates (and overwrites), POST appends, both bump the timestamp.
    let note =
        "---\ntitle: Shed\ntimestamp: 2020-01-01T00:00:00Z\n---\n# Shed\n\n## Tools\n\nA rake.\n";
    // A write asked for no confirmation is answered 204, as the Local REST API does; Accept
    // text/plain (or JSON) keeps the confirmation.
    let plain = [("Accept", "text/plain")];
    let r = s.call("PUT", "/vault/Home/Shed.md", &plain, Some(note.as_bytes()));
    assert_eq!((r.status, r.body.as_str()), (200, "created Home/Shed.md\n"));
    assert!(!v.read("Home/Shed.md").contains("2020-01-01"));
    let r = s.call("PUT", "/vault/Home/Shed.md", &[], Some(note.as_bytes()));
    assert_eq!((r.status, r.body.as_str()), (204, ""));
    assert!(r.header("etag").is_some());
    let r = s.call("POST", "/vault/Home/Shed.md", &plain, Some(b"Appended line."));
    assert_eq!(r.body, "appended to Home/Shed.md\n");
    assert!(v.read("Home/Shed.md").trim_end().ends_with("Appended line."));
    let r = s.call("POST", "/vault/Inbox/New.md", &plain, Some(b"Fresh."));
    assert_eq!(
        r.body,
        "created Inbox/New.md with the supplied content (no frontmatter, so timestamp not bumped)\n"
    );

    // PATCH: heading (with a Local REST API style encoded target and delimiter), frontmatter,
    // body and text.
    let r = s.call(
        "PATCH",
        "/vault/Home/Shed.md",
        &[
            ("Operation", "append"),
            ("Target-Type", "heading"),
            ("Target", "Shed%7CTools"),
            ("Target-Delimiter", "|"),
            ("Markdown-Patch-Version", "1"),
            ("Accept", "text/plain"),
        ],
        Some(b"A spade."),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.starts_with("appended to 'Shed::Tools' in Home/Shed.md"), "{}", r.body);
    assert!(
        v.read("Home/Shed.md").contains("Appended line.\n\nA spade."),
        "{}",
        v.read("Home/Shed.md")
    );
    let r = s.call(
        "PATCH",
        "/vault/Home/Shed.md",
        &[
            ("Target-Type", "frontmatter"),
            ("Target", "status"),
            ("Operation", "replace"),
            ("Content-Type", "application/json"),
            ("Markdown-Patch-Version", "1"),
            ("Accept", "text/plain"),
        ],
        Some(b"\"approved\""),
    );
    assert_eq!(r.body, "set 'status' in Home/Shed.md\n");
    assert!(v.read("Home/Shed.md").contains("status: approved\n"));
    let r = s.call(
        "PATCH",
        "/vault/Home/Shed.md",
        &[
            ("Target-Type", "frontmatter"),
            ("Target", "status"),
            ("Operation", "delete"),
            ("Markdown-Patch-Version", "1"),
            ("Accept", "text/plain"),
        ],
        None,
    );
    assert_eq!(r.body, "removed 'status' in Home/Shed.md\n");
    let r = s.call(
        "PATCH",
        "/vault/Home/Shed.md",
        &[("Target-Type", "text"), ("Accept", "application/json")],
        Some(br#"{"find": "rake", "replace": "hoe"}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["path"], "Home/Shed.md");
    assert!(v.read("Home/Shed.md").contains("A hoe."));
    let r = s.call(
        "PATCH",
        "/vault/Home/Shed.md",
        &[("Target-Type", "body")],
        Some(b"# Shed\n\nEmpty now.\n"),
    );
    assert_eq!(r.body, "replaced the body of Home/Shed.md\n");
    assert!(v.read("Home/Shed.md").starts_with("---\ntitle: Shed\n"));

    // A write is searchable at once (no watcher debounce in between).
    let hits = s.call("GET", "/search?q=Empty%20now&k=3", &[], None).json();
    assert_eq!(hits["results"][0]["path"], "Home/Shed.md", "{hits}");
    // POST search with a JSON body and explain.
    let hits = s
        .call(
            "POST",
            "/search",
            &[("Content-Type", "application/json")],
            Some(br#"{"q": "NB-7726041", "k": 2, "explain": true}"#),
        )
        .json();
    assert_eq!(hits["results"][0]["path"], "Home/Utilities/Broadband.md", "{hits}");
    assert_eq!(hits["results"][0]["pinned"], true);
    assert!(hits["explain"]["rrf_k"].is_number() && hits["results"][0]["explain"].is_object());
    let hits = s.call("GET", "/search?q=boiler&prefix=Tech", &[], None).json();
    assert!(
        hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"].as_str().unwrap().starts_with("Tech/"))
    );

    // Folders, moves (both spellings), delete, reindex.
    let r = s.call("PUT", "/folder/Garden/Beds", &[("Accept", "application/json")], None).json();
    assert_eq!(r["folders_created"], json!(["Garden", "Garden/Beds"]));
    let r =
        s.call("POST", "/move/Home/Shed.md", &[], Some(br#"{"destination": "Garden/Shed.md"}"#));
    assert!(r.body.starts_with("moved Home/Shed.md to Garden/Shed.md"), "{}", r.body);
    let r = s.call(
        "MOVE",
        "/vault/Garden/Shed.md",
        &[("Destination", "/vault/Garden/Beds/Shed.md")],
        None,
    );
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(r.header("content-location"), Some("Garden/Beds/Shed.md"));
    assert!(v.root().join("Garden/Beds/Shed.md").is_file());
    // COPY writes the note again elsewhere; a taken destination is 409 unless overwritten.
    let dest = [("Destination", "Garden/Copy.md")];
    let r = s.call("COPY", "/vault/Garden/Beds/Shed.md", &dest, None);
    assert_eq!((r.status, r.header("content-location")), (204, Some("Garden/Copy.md")));
    let unstamped = |t: String| {
        t.lines().filter(|l| !l.starts_with("timestamp:")).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(unstamped(v.read("Garden/Copy.md")), unstamped(v.read("Garden/Beds/Shed.md")));
    let r = s.call("COPY", "/vault/Garden/Beds/Shed.md", &dest, None);
    assert_eq!((r.status, r.code().as_str()), (409, "conflict"), "{}", r.body);
    let over = [("Destination", "Garden/Copy.md"), ("Allow-Overwrite", "true")];
    assert_eq!(s.call("COPY", "/vault/Garden/Beds/Shed.md", &over, None).status, 204);
    let r = s.call("DELETE", "/vault/Garden/Copy.md?permanent=true", &[], None);
    assert_eq!(r.status, 204, "{}", r.body);
    // A delete moves the note to the vault's trash, as Obsidian does; permanent removes it.
    let r = s.call("DELETE", "/vault/Garden/Beds/Shed.md", &plain, None);
    assert!(r.body.starts_with("moved Garden/Beds/Shed.md to the vault's trash"), "{}", r.body);
    assert!(v.root().join(".trash/Shed.md").is_file());
    let r = s.call("PUT", "/vault/Garden/Gone.md", &[], Some(b"x"));
    assert_eq!(r.status, 204, "{}", r.body);
    let r = s.call("DELETE", "/vault/Garden/Gone.md?permanent=true", &[], None);
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(!v.root().join("Garden/Gone.md").exists() && !v.root().join(".trash/Gone.md").exists());
    let r = s.call("DELETE", "/folder/Garden?recursive", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!v.root().join("Garden").exists());
    let r = s.call("POST", "/reindex", &[], None).json();
    assert_eq!(r["vaults"][0]["vault"], "fixture");
    assert!(r["vaults"][0]["files_seen"].as_u64().unwrap() >= 28);

    // The document is served.
    let doc = s.call("GET", "/openapi.yaml", &[], None);
    assert!(doc.body.contains("openapi: 3.1"));
}

#[test]
fn every_refusal_has_its_code_and_leaves_the_vault_alone() {
    let v = TempVault::fixture();
    std::fs::create_dir_all(v.root().join("Home/Files")).unwrap();
    std::fs::write(v.root().join("Home/Files/Manual.pdf"), b"%PDF-1.4 not really").unwrap();
    std::fs::write(v.root().join("Inbox/Latin1.md"), b"caf\xe9\n").unwrap();
    let s = Server::start(
        &[spec("fixture", &v)],
        &[HASHING, &[("MDVAULT_SERVER__MAX_BODY_BYTES", "4096")]].concat(),
    );
    let boiler = "/vault/Home/Boiler.md";

    refused(&s, &v, "GET", "/vault/Home/Nope.md", &[], None, (404, "not_found"));
    refused(&s, &v, "GET", "/nope", &[], None, (404, "not_found"));
    refused(&s, &v, "GET", "/v/other/vault/Home/Boiler.md", &[], None, (404, "not_found"));
    refused(&s, &v, "PUT", "/folder/Home/Boiler.md/x", &[], None, (400, "unsupported_suffix"));
    refused(
        &s,
        &v,
        "POST",
        "/move/Home/Boiler.md",
        &[],
        Some(br#"{"destination": "Home/Appliances.md"}"#),
        (400, "already_exists"),
    );
    refused(&s, &v, "DELETE", "/folder/Home", &[], None, (400, "not_empty"));
    // Hostile paths, however they are spelled.
    for p in [
        "/vault/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "/vault/..%2Fsecret.md",
        "/vault/Home/%2e%2e/%2e%2e/x.md",
        "/vault/.obsidian/app.json",
        "/vault/Home/%00.md",
    ] {
        refused(&s, &v, "GET", p, &[], None, (400, "invalid_path"));
        refused(&s, &v, "PUT", p, &[], Some(b"x"), (400, "invalid_path"));
    }
    refused(&s, &v, "PUT", "/vault/Home/notes.txt", &[], Some(b"x"), (400, "unsupported_suffix"));
    refused(&s, &v, "DELETE", "/vault/Home", &[], None, (400, "is_directory"));
    refused(&s, &v, "GET", "/folder/Home/Boiler.md", &[], None, (400, "not_a_directory"));
    refused(&s, &v, "POST", "/vault/Home/Files/Manual.pdf", &[], Some(b"x"), (400, "is_document"));
    refused(
        &s,
        &v,
        "POST",
        "/move/Home/Boiler.md",
        &[],
        Some(br#"{"destination": "Home/Files/Boiler.pdf"}"#),
        (400, "kind_change"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[
            ("Target-Type", "heading"),
            ("Target", "Nowhere"),
            ("Operation", "append"),
            ("Markdown-Patch-Version", "1"),
        ],
        Some(b"x"),
        (400, "no_such_heading"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        "/vault/Tech/Homelab/Proxmox%20Host.md",
        &[
            ("Target-Type", "heading"),
            ("Target", "Backups"),
            ("Operation", "append"),
            ("Markdown-Patch-Version", "1"),
        ],
        Some(b"x"),
        (400, "ambiguous_heading"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[("Target-Type", "text")],
        Some(br#"{"find": "zzzz-not-there", "replace": "y"}"#),
        (400, "no_such_text"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[("Target-Type", "text")],
        Some(br#"{"find": "e", "replace": "y"}"#),
        (400, "ambiguous_text"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        "/vault/Inbox/Scratch.md",
        &[
            ("Target-Type", "frontmatter"),
            ("Target", "a"),
            ("Operation", "replace"),
            ("Markdown-Patch-Version", "1"),
        ],
        Some(b"1"),
        (400, "no_frontmatter"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[
            ("Target-Type", "frontmatter"),
            ("Target", "a"),
            ("Operation", "replace"),
            ("Markdown-Patch-Version", "1"),
        ],
        Some(b"null"),
        (400, "invalid_value"),
    );
    refused(&s, &v, "GET", "/vault/Inbox/Latin1.md", &[], None, (400, "unreadable"));
    refused(&s, &v, "PUT", boiler, &[("If-Match", "\"0000\"")], Some(b"x"), (409, "conflict"));
    // Request shape problems.
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[("Target-Type", "block")],
        Some(b"x"),
        (400, "invalid_request"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[("Target-Type", "heading")],
        Some(b"x"),
        (400, "invalid_request"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[("Target-Type", "frontmatter"), ("Target", "a"), ("Operation", "merge")],
        Some(b"approved"),
        (400, "invalid_request"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[("Target-Type", "body"), ("Operation", "append")],
        Some(b"x"),
        (400, "invalid_request"),
    );
    refused(
        &s,
        &v,
        "PATCH",
        boiler,
        &[("Target", "Settings"), ("Operation", "merge")],
        Some(b"x"),
        (400, "invalid_request"),
    );
    refused(&s, &v, "PUT", boiler, &[], Some(b"\xff\xfe"), (400, "invalid_request"));
    refused(&s, &v, "GET", "/search?q=boiler&k=many", &[], None, (400, "invalid_request"));
    refused(&s, &v, "GET", "/search", &[], None, (400, "invalid_request"));
    for body in [
        r#"{"q": "boiler", "limit": 3}"#,
        r#"{"q": "boiler", "thorough": "AAA"}"#,
        r#"{"q": 12}"#,
        "[1]",
    ] {
        refused(&s, &v, "POST", "/search", &[], Some(body.as_bytes()), (400, "invalid_request"));
    }
    refused(&s, &v, "TRACE", boiler, &[], None, (405, "method_not_allowed"));
    refused(&s, &v, "DELETE", "/search", &[], None, (405, "method_not_allowed"));
    let big = vec![b'a'; 10_000];
    refused(&s, &v, "PUT", "/vault/Inbox/Big.md", &[], Some(&big), (413, "payload_too_large"));

    // Auth: missing, wrong scheme, wrong key; only exactly /healthz is open.
    let before = v.snapshot();
    for (key, path) in [
        (None, "/vault/Home/Boiler.md"),
        (Some("wrong"), "/readyz"),
        (None, "/healthz/"),
        (None, "/nope"),
    ] {
        let r = http_call(&s.base, "GET", path, key, &[], None);
        assert_eq!((r.status, r.code().as_str()), (401, "unauthorized"), "{path}");
        assert_eq!(r.header("www-authenticate"), Some("Bearer realm=\"mdvault\""));
    }
    let r = http_call(
        &s.base,
        "PUT",
        "/vault/Home/Boiler.md",
        None,
        &[("Authorization", &format!("bearer {KEY}"))],
        Some(b"x"),
    );
    assert_eq!(r.status, 401);
    // DNS rebinding: a page at evil.example resolving to 127.0.0.1, even with the key.
    let r = http_call(
        &s.base,
        "PUT",
        "/vault/Home/Boiler.md",
        Some(KEY),
        &[("Host", "evil.example:8080")],
        Some(b"x"),
    );
    assert_eq!((r.status, r.code().as_str()), (403, "forbidden"));
    let r = http_call(
        &s.base,
        "POST",
        "/mcp",
        Some(KEY),
        &[("Origin", "https://evil.example"), ("Content-Type", "application/json")],
        Some(b"{}"),
    );
    assert_eq!((r.status, r.code().as_str()), (403, "forbidden"));
    assert_eq!(v.snapshot(), before);
}

#[test]
fn search_waits_politely_while_the_index_cannot_be_built() {
    let v = TempVault::fixture();
    let dead = crate::common::DeadEmbedder::at_a_closed_port();
    let s = Server::spawn(&[spec("fixture", &v)], &dead.env());
    s.wait_index_md();
    let r = s.call("GET", "/readyz", &[], None);
    assert_eq!(r.status, 503);
    let j = r.json();
    assert_eq!(j["status"], "building");
    for key in ["index", "watcher", "store", "revision", "uptime_seconds", "vaults"] {
        assert!(j.get(key).is_some(), "{key} missing from {j}");
    }
    // Until the words are committed search refuses and says to retry; once they are, it
    // answers by words, saying meaning is not searchable yet, and from the first failed
    // embedding attempt on it names the failing embedder, so nobody waits for a build that
    // cannot end. Which of these a call meets depends on timing, so each is read in turn.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let answer = loop {
        let before = v.snapshot();
        let r = s.call("GET", "/search?q=boiler", &[], None);
        assert_eq!(v.snapshot(), before);
        if r.status == 200 {
            let answer = r.json();
            assert_eq!(answer["results"][0]["path"], "Home/Boiler.md", "{answer}");
            let notices = answer["notices"].to_string();
            assert!(notices.contains("meaning"), "{notices}");
            if notices.contains("Connection refused") {
                break answer;
            }
        } else {
            assert_eq!((r.status, r.code().as_str()), (503, "not_ready"), "{}", r.body);
            assert!(r.json()["error"].as_str().unwrap().contains("retry"), "{}", r.body);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "search never named the failing embedder: {}",
            r.body
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(answer["results"].as_array().is_some_and(|r| !r.is_empty()), "{answer}");
    // MCP answers the same, with the notice in its text; reads still work.
    let (err, text) = tool(&s, "/mcp", "vault_search", json!({"query": "boiler"}));
    assert!(!err && text.contains("Boiler") && text.contains("Connection refused"), "{text}");
    let (err, text) = tool(&s, "/mcp", "vault_read", json!({"path": "Home/Boiler.md"}));
    assert!(!err && text.contains("Varmond"), "{text}");
}

#[test]
fn after_every_build_attempt_failed_search_still_answers_by_words_and_says_why() {
    let v = TempVault::fixture();
    let dead = crate::common::DeadEmbedder::at_a_closed_port();
    let mut env = dead.env();
    env.push(("MDVAULT_INDEX__BUILD_MAX_ATTEMPTS", "1"));
    let s = Server::spawn(&[spec("fixture", &v)], &env);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (status, body) = s.get("/readyz");
        if body.contains("\"failed\"") {
            assert_eq!(status, 503, "{body}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the build never failed: {body}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let before = v.snapshot();
    let r = s.call("GET", "/search?q=boiler", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    let j = r.json();
    assert_eq!(j["results"][0]["path"], "Home/Boiler.md", "{j}");
    let notices = j["notices"].to_string();
    assert!(notices.contains("failed to build its vectors") && notices.contains("restart"), "{j}");
    assert_eq!(v.snapshot(), before);
}

#[test]
fn mcp_over_http_serves_every_tool_with_vault_prefixes_and_scopes() {
    let (a, b) = (TempVault::fixture(), TempVault::fixture());
    let s = Server::start(&[spec("main", &a), spec("work", &b)], HASHING);

    let init = mcp(
        &s,
        "/mcp",
        "initialize",
        json!({
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}
        }),
    );
    assert_eq!(init["serverInfo"]["name"], "mdvault");
    assert!(init["instructions"].as_str().unwrap().contains("vault_map"));
    let list = mcp(&s, "/mcp", "tools/list", json!({}));
    let mut names: Vec<&str> =
        list["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "vault_append",
            "vault_callouts",
            "vault_create_folder",
            "vault_delete",
            "vault_delete_folder",
            "vault_expiries",
            "vault_frontmatter_query",
            "vault_grep",
            "vault_links",
            "vault_list",
            "vault_maintenance",
            "vault_map",
            "vault_move",
            "vault_patch",
            "vault_read",
            "vault_reindex",
            "vault_replace_text",
            "vault_search",
            "vault_set_body",
            "vault_set_frontmatter",
            "vault_status",
            "vault_tag_rename",
            "vault_tags",
            "vault_write",
        ]
    );
    for t in list["tools"].as_array().unwrap() {
        assert!(t["description"].as_str().unwrap().len() > 40, "{t}");
        assert!(t["annotations"]["readOnlyHint"].is_boolean(), "{t}");
    }
    let search =
        list["tools"].as_array().unwrap().iter().find(|t| t["name"] == "vault_search").unwrap();
    for p in ["query", "k", "prefix", "vault", "thorough"] {
        assert!(search["inputSchema"]["properties"].get(p).is_some(), "{p}");
    }

    // The vault prefix picks the vault; search spans both unless narrowed.
    let (err, text) = tool(
        &s,
        "/v/work/mcp",
        "vault_write",
        json!({"path": "Inbox/Only work.md", "content": "quokka sighting\n"}),
    );
    assert!(!err, "{text}");
    assert!(
        b.root().join("Inbox/Only work.md").is_file()
            && !a.root().join("Inbox/Only work.md").exists()
    );
    let (_, text) = tool(&s, "/mcp", "vault_search", json!({"query": "quokka sighting", "k": 3}));
    assert!(text.contains("Inbox/Only work.md"), "{text}");
    let (_, text) =
        tool(&s, "/mcp", "vault_search", json!({"query": "quokka sighting", "vault": "main"}));
    assert!(!text.contains("Only work.md"), "{text}");
    let (err, text) = tool(&s, "/mcp", "vault_map", json!({"path": "Tech/Home Assistant.md"}));
    assert!(!err && text.contains("- Integrations::Notes"), "{text}");

    // Scoped writes: one note, or one folder; reads stay open; moves are refused.
    let before = a.snapshot();
    let scoped = "/mcp/only/Home/Boiler.md";
    let (err, text) =
        tool(&s, scoped, "vault_append", json!({"path": "Home/Appliances.md", "content": "x"}));
    assert!(err && text.contains("out_of_scope"), "{text}");
    let (err, _) = tool(&s, scoped, "vault_read", json!({"path": "Home/Appliances.md"}));
    assert!(!err);
    let (err, text) = tool(
        &s,
        scoped,
        "vault_move",
        json!({"source": "Home/Boiler.md", "destination": "Home/B.md"}),
    );
    assert!(err && text.contains("out_of_scope"), "{text}");
    let (err, text) =
        tool(&s, "/mcp/only/Home", "vault_write", json!({"path": "Homework.md", "content": "x"}));
    assert!(err && text.contains("out_of_scope"), "{text}");
    let (err, text) = tool(
        &s,
        "/mcp/only/Home",
        "vault_delete_folder",
        json!({"path": "Home", "recursive": true}),
    );
    assert!(err && text.contains("out_of_scope"), "{text}");
    // A hostile path is refused as such, not as out of scope.
    let (err, text) = tool(&s, scoped, "vault_write", json!({"path": "../x.md", "content": "x"}));
    assert!(err && text.contains("invalid_path"), "{text}");
    assert_eq!(a.snapshot(), before);
    let (err, text) =
        tool(&s, scoped, "vault_append", json!({"path": "Home/Boiler.md", "content": "Checked."}));
    assert!(!err, "{text}");
    let (err, text) = tool(
        &s,
        "/v/main/mcp/only/Home%2FUtilities",
        "vault_write",
        json!({"path": "Home/Utilities/Heat pump.md", "content": "x"}),
    );
    assert!(!err, "{text}");
    // The scope never leaks into a later request.
    let (err, text) =
        tool(&s, "/mcp", "vault_write", json!({"path": "Inbox/Free.md", "content": "x"}));
    assert!(!err, "{text}");

    // Unknown tools and bad arguments are protocol errors, not crashes.
    let r = mcp(&s, "/mcp", "tools/call", json!({"name": "vault_nope", "arguments": {}}));
    assert!(r.get("error").is_some() || r["isError"] == true, "{r}");
    let r = mcp(&s, "/mcp", "tools/call", json!({"name": "vault_read", "arguments": {"pth": "x"}}));
    assert!(r.get("error").is_some() || r["isError"] == true, "{r}");
}

/// The fixture served with an embedder that takes 8 s over every request holding `TORTOISE`:
/// far beyond a write's bounded wait, however fast the machine.
fn served_with_a_slow_embedder() -> (TempVault, Server) {
    let url = crate::common::fake_embedding_endpoint_slow(
        16,
        "TORTOISE",
        std::time::Duration::from_secs(8),
    );
    let v = TempVault::fixture();
    let s = Server::start(&[spec("fixture", &v)], &toy_embedder_env(&url));
    (v, s)
}

/// The environment that points a server at a fake embedding endpoint of 16 dimensions.
fn toy_embedder_env(url: &str) -> [(&'static str, &str); 4] {
    [
        ("MDVAULT_EMBEDDING__BACKEND", "http"),
        ("MDVAULT_EMBEDDING__URL", url),
        ("MDVAULT_EMBEDDING__MODEL", "toy"),
        ("MDVAULT_EMBEDDING__DIMS", "16"),
    ]
}

#[test]
fn a_small_notes_write_answers_lexical_while_its_vectors_wait_and_search_finds_its_words_at_once() {
    // The large note's test below may answer `queued` on a slow machine; this one cannot: one
    // section is chunked well within the wait, while its vectors take the embedder's 8 s.
    let (_v, s) = served_with_a_slow_embedder();
    let r = s.call(
        "PUT",
        "/vault/Inbox/Slip.md",
        &[("Content-Type", "text/markdown"), ("Accept", "application/json")],
        Some(b"# Slip\n\nTORTOISE the gravelwort slip.\n"),
    );
    assert_eq!(r.json()["indexed"], "lexical", "{}", r.body);
    let hits = s.call("GET", "/search?q=gravelwort&k=3", &[], None).json();
    let paths: Vec<&str> =
        hits["results"].as_array().unwrap().iter().filter_map(|h| h["path"].as_str()).collect();
    assert!(paths.contains(&"Inbox/Slip.md"), "the answer said lexical, but search missed it");
}

/// A note written while the first build embeds a large vault is searchable by its words within
/// a batch of the embedding, not when the build ends: the build gives way to the write's
/// re-index at its next batch and goes on after it.
#[test]
fn a_note_written_during_a_first_build_is_embedded_ahead_of_it_and_found_by_its_words_at_once() {
    // 520 notes, eight batches of 64 texts, each batch held 1.5 s by the embedder: a build of
    // about 12 s, and the words committed within a second.
    let (url, embedded) = crate::common::recording_embedding_endpoint_slow(
        16,
        "SNAIL",
        std::time::Duration::from_millis(1500),
    );
    let v = TempVault::fixture();
    for i in 0..520 {
        v.write(&format!("Bulk/Item {i}.md"), &format!("# Item {i}\n\nSNAIL bulk item {i}.\n"));
    }
    let s = Server::spawn(&[spec("fixture", &v)], &toy_embedder_env(&url));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while s.call("GET", "/search?q=boiler&k=1", &[], None).status != 200 {
        assert!(std::time::Instant::now() < deadline, "never searchable by words");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let r = s.call(
        "PUT",
        "/vault/Inbox/Written.md",
        &[("Content-Type", "text/markdown"), ("Accept", "application/json")],
        Some(b"# Written\n\nThe zorblaxian ledger, written during the build.\n"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    // How far it got within the write's bounded wait depends on where the build's batch was.
    let indexed = r.json()["indexed"].as_str().unwrap_or_default().to_string();
    assert!(["full", "lexical", "queued"].contains(&indexed.as_str()), "{indexed}: {}", r.body);
    let found = |s: &Server| {
        let hits = s.call("GET", "/search?q=zorblaxian&k=3", &[], None).json();
        hits["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|h| h["path"].as_str() == Some("Inbox/Written.md")))
    };
    while !found(&s) {
        assert!(std::time::Instant::now() < deadline, "the written note was never found");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let ready = s.call("GET", "/readyz", &[], None).json();
    assert_eq!(ready["status"], "building", "found only once the build ended: {ready}");
    // Its text went to the embedder ahead of most of the build's, not after them all (the
    // searches' query, "zorblaxian" alone, goes there too).
    let sent_before = || -> Option<usize> {
        let seen = embedded.lock().unwrap();
        let at = seen.iter().position(|t| t.contains("zorblaxian ledger"))?;
        Some(seen[..at].iter().filter(|t| t.contains("SNAIL")).count())
    };
    let before = loop {
        if let Some(n) = sent_before() {
            break n;
        }
        assert!(std::time::Instant::now() < deadline, "the note's text was never embedded");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(before <= 3 * 64, "embedded after {before} of the build's 520 texts");
    // The build went on where it stopped and ended with every text embedded, the written
    // note's included.
    let ready = loop {
        let ready = s.call("GET", "/readyz", &[], None).json();
        if ready["status"] == "ready" {
            break ready;
        }
        assert!(std::time::Instant::now() < deadline, "the build never ended: {ready}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(ready["index"]["vectors"], ready["index"]["chunks"], "{ready}");
    let written =
        embedded.lock().unwrap().iter().filter(|t| t.contains("zorblaxian ledger")).count();
    assert_eq!(written, 1, "the note's text was embedded once");
}

/// A write answers once its bytes are on disk and its re-index has had at most the bounded
/// wait (1.5 s): a large note whose vectors take longer answers early, saying how far its
/// re-index got, is found by its words at once and by its meaning once the embedding ends.
#[test]
fn a_large_notes_write_answers_before_its_vectors_and_search_finds_it_after() {
    let (v, s) = served_with_a_slow_embedder();

    // About 256 KiB in 160 sections, like the note that once held its PUT for 8.9 s.
    let mut note = String::from("# Quillfeather ledger\n");
    for i in 0..160 {
        let words: Vec<&str> =
            (0..260).map(|w| ["alpha", "bravo", "cobalt", "delta", "ember"][(i + w) % 5]).collect();
        note.push_str(&format!(
            "\n## Entry {i}\n\nTORTOISE entry {i} of the quillfeather ledger. {}\n",
            words.join(" ")
        ));
    }
    assert!(note.len() > 200 * 1024, "{}", note.len());
    let started = std::time::Instant::now();
    let r = s.call(
        "PUT",
        "/vault/Big/Ledger.md",
        &[("Content-Type", "text/markdown"), ("Accept", "application/json")],
        Some(note.as_bytes()),
    );
    let took = started.elapsed();
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(took < std::time::Duration::from_secs(6), "the write held its answer for {took:?}");
    let indexed = r.json()["indexed"].as_str().unwrap_or_default().to_string();
    assert!(indexed == "lexical" || indexed == "queued", "{indexed}: {}", r.body);
    assert!(v.read("Big/Ledger.md") == note, "the bytes were not on disk when it answered");

    // Found by its words: at once when the answer said `lexical`, within the catch-up if not.
    let found = || {
        let hits = s.call("GET", "/search?q=quillfeather%20ledger&k=3", &[], None).json();
        hits["results"].as_array().is_some_and(|l| l.iter().any(|h| h["path"] == "Big/Ledger.md"))
    };
    if indexed == "lexical" {
        assert!(found(), "the answer said lexical, but a search right after missed the note");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !found() {
        assert!(std::time::Instant::now() < deadline, "the note never became searchable");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // And the vectors catch up in the background: every chunk gets one.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let status = s.call("GET", "/status", &[], None).json();
        let vault = &status["vaults"][0];
        if vault["chunks"].as_u64().is_some_and(|c| c > 160)
            && vault["chunks_without_vectors"].as_u64() == Some(0)
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "vectors never caught up: {status}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

#[test]
fn the_plugin_patch_formats_and_url_targets_reach_the_same_lines() {
    let v = TempVault::fixture();
    let s = Server::start(&[spec("fixture", &v)], HASHING);
    let note = "/vault/Inbox/Blocks.md";
    let text = "# A\n\nFirst. ^first\n\n# T\n\n| a | b |\n|---|---|\n| 1 | 2 | ^tbl\n";
    assert_eq!(s.call("PUT", note, &[], Some(text.as_bytes())).status, 204);

    // The 2.x instruction answers with the whole note.
    let r = s.call(
        "PATCH",
        note,
        &[("Content-Type", "application/json")],
        Some(br#"{"targetType": "block", "target": "tbl", "operation": "append", "value": [["3", "4"]]}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("| 1 | 2 | ^tbl\n| 3 | 4 |\n"), "{}", r.body);

    // Raw-content mode: the target in the URL, the body the payload.
    let r = s.call(
        "PATCH",
        &format!("{note}/heading/A"),
        &[("Operation", "append"), ("Content-Type", "text/markdown")],
        Some(b"Second."),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(v.read("Inbox/Blocks.md").contains("First. ^first\n\nSecond.\n"));
    let r = s.call("GET", &format!("{note}/block/first"), &[], None);
    assert_eq!((r.status, r.body.as_str()), (200, "First. ^first\n"));

    // Refusals: a target named twice, a stale version. (Target headers without a version are
    // the 1.x format: `callers.rs`.)
    let before = v.read("Inbox/Blocks.md");
    let r =
        s.call("PATCH", &format!("{note}/heading/A"), &[("Target-Type", "heading")], Some(b"x"));
    assert_eq!((r.status, r.code().as_str()), (422, "conflicting_target"), "{}", r.body);
    let r = s.call(
        "PATCH",
        &format!("{note}/heading/A"),
        &[("Operation", "append"), ("If-Match", "\"0000\"")],
        Some(b"x"),
    );
    assert_eq!((r.status, r.code().as_str()), (412, "version_mismatch"), "{}", r.body);
    assert_eq!(v.read("Inbox/Blocks.md"), before);
}

#[test]
fn plugin_patches_rebase_levels_warn_move_sections_and_rename_keys() {
    let v = TempVault::fixture();
    // No stamping: the test compares bytes before and after a write-back, and a `timestamp`
    // bump that crossed a second would differ by more than the edit.
    let env = [HASHING, &[("MDVAULT_VAULT__TIMESTAMP_KEY", "")]].concat();
    let s = Server::start(&[spec("fixture", &v)], &env);
    let note = "/vault/Inbox/Tree.md";
    let text =
        "---\ntitle: T\ntags: [a]\n---\n# A\n\nA text.\n\n## Sub\n\nSub text.\n\n# B\n\nB text.\n";
    assert_eq!(s.call("PUT", note, &[], Some(text.as_bytes())).status, 204);
    let patch = |body: &str| {
        s.call("PATCH", note, &[("Content-Type", "application/json")], Some(body.as_bytes()))
    };
    let append_to_b = |content: &str| {
        serde_json::json!({"targetType": "heading", "target": ["B"], "operation": "append",
            "content": content})
        .to_string()
    };

    // A 2.x `#` under a level-1 heading's content is its child; one pushed past 6 warns.
    let r = patch(&append_to_b("# Child"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("markdown-patch-warnings").is_none());
    assert!(v.read("Inbox/Tree.md").ends_with("B text.\n\n## Child\n"), "{}", r.body);
    let r = patch(&append_to_b("###### Deep"));
    let warned = r.header("markdown-patch-warnings").expect("a warnings header");
    let decoded = percent_encoding::percent_decode_str(warned).decode_utf8_lossy().into_owned();
    let warnings: serde_json::Value = serde_json::from_str(&decoded).unwrap();
    assert_eq!(warnings[0]["code"], "heading-depth-overflow", "{decoded}");
    assert!(v.read("Inbox/Tree.md").contains("####### Deep\n"));

    // A subtree read at its parent's baseline writes back unchanged.
    let before = v.read("Inbox/Tree.md");
    let r = s.call(
        "GET",
        &format!("{note}/heading/A/Sub"),
        &[("Target-Scope", "markerAndContent")],
        None,
    );
    assert_eq!((r.status, r.body.as_str()), (200, "# Sub\n\nSub text.\n"));
    let body = serde_json::json!({"targetType": "heading", "target": ["A", "Sub"],
        "operation": "replace", "scope": "markerAndContent", "content": r.body});
    assert_eq!(patch(&body.to_string()).status, 200);
    assert_eq!(v.read("Inbox/Tree.md"), before);

    // A move through the Destination header lands under the new parent, one level down.
    let dest = "%7B%22parent%22%3A%5B%22B%22%5D%2C%22place%22%3A%22first%22%7D";
    let r = s.call(
        "PATCH",
        &format!("{note}/heading/A/Sub"),
        &[("Operation", "replace"), ("Target-Scope", "parent"), ("Destination", dest)],
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        v.read("Inbox/Tree.md")
            .contains("# A\n\nA text.\n\n# B\n\nB text.\n\n## Sub\n\nSub text.\n\n## Child\n"),
        "{}",
        v.read("Inbox/Tree.md")
    );

    // Frontmatter: a rename keeps the value; a taken name or key is 409 key_exists.
    let r = patch(
        r#"{"targetType":"frontmatter","target":"tags","operation":"replace","scope":"marker","content":"labels"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(v.read("Inbox/Tree.md").starts_with("---\ntitle: T\nlabels: [a]\n"));
    let before = v.read("Inbox/Tree.md");
    let r = patch(
        r#"{"targetType":"frontmatter","target":"title","operation":"replace","scope":"marker","content":"labels"}"#,
    );
    assert_eq!((r.status, r.code().as_str()), (409, "key_exists"), "{}", r.body);
    let r = patch(
        r#"{"targetType":"frontmatter","target":"title","operation":"append","scope":"markerAndContent","value":{"labels":["x"]}}"#,
    );
    assert_eq!((r.status, r.code().as_str()), (409, "key_exists"), "{}", r.body);
    assert_eq!(v.read("Inbox/Tree.md"), before);
    let r = patch(
        r#"{"targetType":"frontmatter","target":"title","operation":"append","scope":"markerAndContent","value":{"status":"open"}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(v.read("Inbox/Tree.md").starts_with("---\ntitle: T\nstatus: open\nlabels: [a]\n"));
}

#[test]
fn vault_patch_within_keeps_a_fence_whole_and_refuses_an_empty_replace_unless_allowed() {
    let v = TempVault::empty();
    v.write("Setup.md", "# Steps\n\n```sh\nmake\n\nmake install\n```\n\nDone.\n");
    let s = Server::start(&[spec("notes", &v)], HASHING);
    // A replace of the section's first body block with no content, allowed or not.
    let delete_first_block = |allow_empty: bool| {
        let args = json!({"path": "Setup.md", "target": "Steps", "operation": "replace",
            "within": 0, "content": "", "allow_empty": allow_empty});
        tool(&s, "/mcp", "vault_patch", args)
    };

    // It would delete the block, so it is refused as any empty replace is.
    let before = v.snapshot();
    let (error, text) = delete_first_block(false);
    assert!(error && text.contains("empty_content") && text.contains("allow_empty"), "{text}");
    assert_eq!(v.snapshot(), before);

    // Allowed, it takes the whole fence, blank line and all, and leaves no fence open.
    let (error, text) = delete_first_block(true);
    assert!(!error, "{text}");
    assert_eq!(v.read("Setup.md"), "# Steps\n\nDone.\n");
}

#[test]
fn the_patch_rules_refuse_alike_over_rest_and_mcp_in_each_one_s_own_words() {
    let v = TempVault::empty();
    v.write("Plan.md", "# A\n\nFirst.\n\nSecond. ^b\n\n# B\n\nMore.\n");
    let s = Server::start(&[spec("notes", &v)], HASHING);
    let before = v.snapshot();
    let rest = |body: Value| {
        let body = body.to_string();
        let r = s.call(
            "PATCH",
            "/vault/Plan.md",
            &[("Content-Type", "application/json")],
            Some(body.as_bytes()),
        );
        assert_eq!((r.status, r.json()["errorCode"].as_u64()), (400, Some(40081)), "{}", r.body);
        r.json()["message"].as_str().unwrap().to_string()
    };
    let mcp = |args: Value| {
        let (error, text) = tool(&s, "/mcp", "vault_patch", args);
        assert!(error && text.contains("invalid_request"), "{text}");
        text
    };

    // `within` addresses a body block: no marker scope, no creation, no block target.
    let said = rest(json!({"targetType": "heading", "target": ["A"], "operation": "replace",
        "scope": "marker", "within": 0, "content": "x"}));
    assert!(said.contains("within-refined target has no marker"), "{said}");
    let said = mcp(json!({"path": "Plan.md", "target": "A", "operation": "replace",
        "target_scope": "marker", "within": 0, "content": "x"}));
    assert!(said.contains("within-refined target has no marker"), "{said}");
    let said = rest(json!({"targetType": "heading", "target": ["A"], "operation": "append",
        "within": 0, "content": "x", "createTargetIfMissing": true}));
    assert!(said.contains("within and createTargetIfMissing cannot be combined"), "{said}");
    let said = rest(json!({"targetType": "block", "target": "b", "operation": "append",
        "within": 0, "content": "x"}));
    assert!(said.contains("`^b` is a block"), "{said}");

    // A move carries a heading's section and nothing else.
    let said = rest(json!({"targetType": "block", "target": "b", "operation": "replace",
        "scope": "parent", "destination": {"parent": ["B"], "place": "last"}}));
    assert!(said.contains("`^b` is a block"), "{said}");
    let said = mcp(json!({"path": "Plan.md", "target": "^b", "operation": "replace",
        "destination": {"parent": "B"}}));
    assert!(said.contains("`^b` is a block"), "{said}");
    let said = rest(json!({"targetType": "heading", "target": ["A"], "operation": "delete",
        "scope": "parent", "destination": {"parent": ["B"], "place": "last"}}));
    assert!(said.contains("drop operation delete"), "{said}");
    let said = mcp(json!({"path": "Plan.md", "target": "A", "operation": "replace",
        "within": 0, "destination": {"parent": "B"}}));
    assert!(said.contains("drop within"), "{said}");
    assert_eq!(v.snapshot(), before);

    // An agent's habitual create_target_if_missing beside within is let pass on the tools, as it
    // always was: the heading exists, so the block is edited.
    let (error, text) = tool(
        &s,
        "/mcp",
        "vault_patch",
        json!({"path": "Plan.md", "target": "A",
        "operation": "append", "within": 0, "content": "Added.", "create_target_if_missing": true}),
    );
    assert!(!error, "{text}");
    assert!(v.read("Plan.md").contains("Added."), "{}", v.read("Plan.md"));
}
