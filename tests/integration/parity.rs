//! Parity: every MCP tool and its REST counterpart leave the same bytes on disk.
//!
//! One server holds two copies of the fixture vault: `m` is driven over MCP (`/v/m/mcp`),
//! `r` over REST (`/v/r/...`). The cases run in order on both, and after each one the two
//! vaults must be byte-identical, apart from the frontmatter `timestamp` value (the clock may
//! tick between the two calls). Read-only tools must also agree on what they answer.
//! A tool that `tools/list` offers without a case here fails the test.
//!
//! Documented asymmetries (`docs/serving.md`, "REST and MCP do the same thing"):
//! `PUT /vault/<path>` always overwrites (MCP's `vault_write` needs `overwrite`), and
//! `POST /vault/<path>` always creates a missing note (MCP's `vault_append` needs
//! `create_if_missing`); the cases pass those flags on MCP.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::common::{Server, TempVault};
use crate::serve::{mcp, tool};

type Snapshot = BTreeMap<String, Option<Vec<u8>>>;

/// The snapshot with every `timestamp:` line's value blanked.
fn normalised(v: &TempVault) -> Snapshot {
    v.snapshot()
        .into_iter()
        .map(|(k, bytes)| {
            let bytes = bytes.map(|b| {
                String::from_utf8_lossy(&b)
                    .lines()
                    .map(|l| if l.starts_with("timestamp: ") { "timestamp: T" } else { l })
                    .collect::<Vec<_>>()
                    .join("\n")
                    .into_bytes()
            });
            (k, bytes)
        })
        .collect()
}

/// A REST request: method, path under `/v/r`, headers, body.
struct Rest(&'static str, &'static str, Vec<(&'static str, &'static str)>, Option<&'static str>);

struct Case {
    tool: &'static str,
    args: Value,
    rest: Rest,
    /// For read-only tools: how the MCP text and the REST body must agree.
    agree: Option<fn(&str, &str)>,
}

/// Waits until both vaults' indexes match their disks: nothing stale, every chunk embedded.
fn settled(s: &Server) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let caught_up = ["m", "r"].iter().all(|v| {
            let (status, body) = s.get(&format!("/v/{v}/status"));
            let j: Value = serde_json::from_str(&body).unwrap_or_default();
            let c = &j["vaults"][0];
            status == 200
                && c["stale"].as_array().is_some_and(Vec::is_empty)
                && c["chunks_without_vectors"] == 0
        });
        if caught_up {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the indexes did not catch up in 120 s");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn cases() -> Vec<Case> {
    let note = "---\ntitle: Parity\ntimestamp: 2020-01-01T00:00:00Z\n---\n# Parity\n\n## Alpha\n\ntext one\n\n## Beta\n\nsecond\n";
    vec![
        Case {
            tool: "vault_write",
            args: json!({"path": "Inbox/Parity.md", "content": note, "overwrite": true}),
            rest: Rest("PUT", "/vault/Inbox/Parity.md", vec![], Some(note)),
            agree: None,
        },
        Case {
            tool: "vault_append",
            args: json!({"path": "Inbox/Parity.md", "content": "appended", "create_if_missing": true}),
            rest: Rest("POST", "/vault/Inbox/Parity.md", vec![], Some("appended")),
            agree: None,
        },
        Case {
            tool: "vault_patch",
            args: json!({"path": "Inbox/Parity.md", "target": "Alpha", "operation": "prepend", "content": "first"}),
            rest: Rest(
                "PATCH",
                "/vault/Inbox/Parity.md",
                vec![
                    ("Target-Type", "heading"),
                    ("Target", "Alpha"),
                    ("Operation", "prepend"),
                    ("Markdown-Patch-Version", "1"),
                ],
                Some("first"),
            ),
            agree: None,
        },
        Case {
            tool: "vault_replace_text",
            args: json!({"path": "Inbox/Parity.md", "find": "text one", "replace": "text 1", "section": "Alpha"}),
            rest: Rest(
                "PATCH",
                "/vault/Inbox/Parity.md",
                vec![("Target-Type", "text")],
                Some(r#"{"find": "text one", "replace": "text 1", "section": "Alpha"}"#),
            ),
            agree: None,
        },
        Case {
            tool: "vault_set_frontmatter",
            args: json!({"path": "Inbox/Parity.md", "key": "tags", "value": ["a", "b"]}),
            rest: Rest(
                "PATCH",
                "/vault/Inbox/Parity.md",
                vec![
                    ("Target-Type", "frontmatter"),
                    ("Target", "tags"),
                    ("Operation", "replace"),
                    ("Markdown-Patch-Version", "1"),
                ],
                Some(r#"["a", "b"]"#),
            ),
            agree: None,
        },
        Case {
            tool: "vault_patch",
            args: json!({"path": "Inbox/Parity.md", "target": "Alpha", "operation": "append",
                "content": "# Sub\n\nunder alpha", "relative_levels": true}),
            rest: Rest(
                "PATCH",
                "/vault/Inbox/Parity.md",
                vec![("Content-Type", "application/json")],
                Some(
                    r##"{"targetType": "heading", "target": ["Parity", "Alpha"], "operation": "append", "content": "# Sub\n\nunder alpha"}"##,
                ),
            ),
            agree: None,
        },
        Case {
            tool: "vault_patch",
            args: json!({"path": "Inbox/Parity.md", "target": "Beta", "operation": "replace",
                "destination": {"parent": "Alpha", "place": "first"}}),
            rest: Rest(
                "PATCH",
                "/vault/Inbox/Parity.md",
                vec![("Content-Type", "application/json")],
                Some(
                    r#"{"targetType": "heading", "target": ["Parity", "Beta"], "operation": "replace", "scope": "parent", "destination": {"parent": ["Parity", "Alpha"], "place": "first"}}"#,
                ),
            ),
            agree: None,
        },
        Case {
            tool: "vault_set_frontmatter",
            args: json!({"path": "Inbox/Parity.md", "key": "tags", "rename_to": "labels"}),
            rest: Rest(
                "PATCH",
                "/vault/Inbox/Parity.md",
                vec![("Content-Type", "application/json")],
                Some(
                    r#"{"targetType": "frontmatter", "target": "tags", "operation": "replace", "scope": "marker", "content": "labels"}"#,
                ),
            ),
            agree: None,
        },
        Case {
            tool: "vault_set_body",
            args: json!({"path": "Inbox/Parity.md", "content": "# Parity\n\nA new body.\n"}),
            rest: Rest(
                "PATCH",
                "/vault/Inbox/Parity.md",
                vec![("Target-Type", "body")],
                Some("# Parity\n\nA new body.\n"),
            ),
            agree: None,
        },
        Case {
            tool: "vault_create_folder",
            args: json!({"path": "Archive/2026"}),
            rest: Rest("PUT", "/folder/Archive/2026", vec![], None),
            agree: None,
        },
        Case {
            tool: "vault_move",
            args: json!({"source": "Home/Boiler.md", "destination": "Archive/2026/Boiler.md"}),
            rest: Rest(
                "POST",
                "/move/Home/Boiler.md",
                vec![],
                Some(r#"{"destination": "Archive/2026/Boiler.md"}"#),
            ),
            agree: None,
        },
        Case {
            tool: "vault_delete",
            args: json!({"path": "Inbox/Parity.md"}),
            rest: Rest("DELETE", "/vault/Inbox/Parity.md", vec![], None),
            agree: None,
        },
        Case {
            tool: "vault_delete_folder",
            args: json!({"path": "Archive", "recursive": true}),
            rest: Rest("DELETE", "/folder/Archive?recursive=true", vec![], None),
            agree: None,
        },
        Case {
            tool: "vault_read",
            args: json!({"path": "Home/Utilities/Gas.md", "section": "Gas"}),
            rest: Rest("GET", "/vault/Home/Utilities/Gas.md?section=Gas", vec![], None),
            agree: Some(|m, r| assert_eq!(m, r)),
        },
        Case {
            tool: "vault_list",
            args: json!({"path": "Home"}),
            rest: Rest("GET", "/vault/Home/", vec![], None),
            agree: Some(|m, r| assert_eq!(m, r)),
        },
        Case {
            tool: "vault_map",
            args: json!({"path": "Tech/Home Assistant.md"}),
            rest: Rest("GET", "/vault/Tech/Home%20Assistant.md?map", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                for h in j["headings"].as_array().unwrap() {
                    let line = format!("- {} (line {}", h["path"].as_str().unwrap(), h["line"]);
                    assert!(m.contains(&line), "{m}");
                }
            }),
        },
        Case {
            tool: "vault_search",
            args: json!({"query": "MPRN 7340981226", "k": 3, "vault": "m"}),
            rest: Rest("GET", "/search?q=MPRN%207340981226&k=3&vault=r", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                let first = j["results"][0]["path"].as_str().unwrap();
                assert_eq!(first, "Home/Utilities/Gas.md");
                assert!(m.contains(&format!("### 1. {first}")), "{m}");
            }),
        },
        Case {
            tool: "vault_status",
            args: json!({}),
            rest: Rest("GET", "/status", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                let v = &j["vaults"][0];
                let line = format!("indexed   {} notes", v["notes"]);
                assert!(m.contains(&line), "{line} missing from {m}");
                assert!(m.contains(&format!("{} chunks", v["chunks"])), "{m}");
            }),
        },
        Case {
            tool: "vault_expiries",
            args: json!({"within": 400}),
            rest: Rest("GET", "/expiries?within=400", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                let entries = j["entries"].as_array().unwrap();
                assert!(!entries.is_empty());
                for e in entries {
                    let line = format!("- {}", e["date"].as_str().unwrap());
                    assert!(m.contains(&line) && m.contains(e["what"].as_str().unwrap()), "{m}");
                }
            }),
        },
        Case {
            tool: "vault_grep",
            args: json!({"pattern": "combi boiler", "ignore_case": true}),
            rest: Rest("GET", "/grep?pattern=combi%20boiler&ignore_case", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                let hits = j["hits"].as_array().unwrap();
                assert!(!hits.is_empty(), "{r}");
                assert!(m.starts_with(&format!("{} line(s) in ", j["total"])), "{m}");
                for h in hits {
                    let line = format!("{}:{}", h["path"].as_str().unwrap(), h["line"]);
                    assert!(m.contains(&line), "{line} missing from {m}");
                }
            }),
        },
        Case {
            tool: "vault_links",
            // The boiler note was moved and its folder deleted above: links to it are broken.
            args: json!({"path": "home/utilities/gas"}),
            rest: Rest("GET", "/links/Home/Utilities/Gas.md", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                let out = j["outgoing"].as_array().unwrap();
                let broken: Vec<&Value> = out.iter().filter(|l| l["resolved"].is_null()).collect();
                assert_eq!(broken.len(), 2, "{r}");
                for l in out {
                    let line = format!("- line {}: {}", l["line"], l["target"].as_str().unwrap());
                    assert!(m.contains(&line), "{line} missing from {m}");
                }
                assert!(m.contains("-> BROKEN: no such note"), "{m}");
                let back = j["backlinks"].as_array().unwrap();
                assert!(m.contains(&format!("## Backlinks ({})", back.len())), "{m}");
            }),
        },
        Case {
            tool: "vault_callouts",
            args: json!({}),
            rest: Rest("GET", "/callouts", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                for c in j["callouts"].as_array().unwrap() {
                    let at = format!("{}:{}", c["note"].as_str().unwrap(), c["line"]);
                    assert!(m.contains(&at), "{at} missing from {m}");
                }
            }),
        },
        Case {
            tool: "vault_tag_rename",
            args: json!({"from": "utilities", "to": "Utility"}),
            rest: Rest(
                "POST",
                "/tags/rename",
                vec![],
                Some(r#"{"from": "utilities", "to": "Utility"}"#),
            ),
            // The same notes and counts: MCP's lines, REST's JSON.
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                assert_eq!(m.lines().next(), j["message"].as_str(), "{m}");
                assert!(!j["notes"].as_array().unwrap().is_empty(), "{r}");
                for n in j["notes"].as_array().unwrap() {
                    let line = format!("- {} ({})\n", n["path"].as_str().unwrap(), n["replaced"]);
                    assert!(m.contains(&line), "{line} missing from {m}");
                }
            }),
        },
        Case {
            tool: "vault_tags",
            args: json!({}),
            rest: Rest("GET", "/tags/", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                assert!(!j["tags"].as_array().unwrap().is_empty(), "{r}");
                for t in j["tags"].as_array().unwrap() {
                    let leaf = t["name"].as_str().unwrap().rsplit('/').next().unwrap();
                    let line = format!("- #{leaf} ({})\n", t["count"]);
                    assert!(m.contains(&line), "{line} missing from {m}");
                }
            }),
        },
        Case {
            tool: "vault_maintenance",
            args: json!({}),
            rest: Rest("GET", "/maintenance", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                // The same renderer over the same findings (timings aside).
                let strip = |s: &str| {
                    s.lines().filter(|l| !l.contains(" ms")).collect::<Vec<_>>().join("\n")
                };
                assert_eq!(strip(m), strip(j["markdown"].as_str().unwrap()));
            }),
        },
        Case {
            tool: "vault_frontmatter_query",
            args: json!({"key": "type", "value": "account"}),
            rest: Rest("GET", "/frontmatter?key=type&value=account", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                assert!(!j.as_array().unwrap().is_empty());
                for f in j.as_array().unwrap() {
                    assert!(m.contains(&format!("- {}\n", f["filename"].as_str().unwrap())), "{m}");
                }
            }),
        },
        Case {
            tool: "vault_reindex",
            args: json!({"full": false}),
            rest: Rest("POST", "/reindex", vec![], None),
            agree: Some(|m, r| {
                let j: Value = serde_json::from_str(r).unwrap();
                assert_eq!(j["vaults"][0]["vault"], "r");
                assert!(m.starts_with("re-indexed m:"), "{m}");
            }),
        },
    ]
}

#[test]
fn mcp_and_rest_do_the_same_thing() {
    let (m, r) = (TempVault::fixture(), TempVault::fixture());
    let s = Server::start(
        &[format!("m={}", m.root().display()), format!("r={}", r.root().display())],
        &[("MDVAULT_EMBEDDING__BACKEND", "hashing")],
    );
    let offered: Vec<String> = mcp(&s, "/mcp", "tools/list", json!({}))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let cases = cases();
    for name in &offered {
        assert!(cases.iter().any(|c| c.tool == name), "the tool {name} has no parity case");
    }
    assert_eq!(normalised(&m), normalised(&r));
    for case in cases {
        if case.tool == "vault_status" {
            // A write answers before its re-index when that runs long (a loaded machine), so
            // the two vaults' counts agree only once both have caught up with their disks.
            settled(&s);
        }
        let (err, text) = tool(&s, "/v/m/mcp", case.tool, case.args.clone());
        assert!(!err, "{}: {text}", case.tool);
        let Rest(method, path, headers, body) = &case.rest;
        // A confirmation is asked for: without one a whole-note write is a bare 204.
        let mut headers = headers.clone();
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("accept")) {
            headers.push(("Accept", "text/plain"));
        }
        let reply = s.call(method, &format!("/v/r{path}"), &headers, body.map(str::as_bytes));
        assert_eq!(reply.status, 200, "{} {path}: {}", case.tool, reply.body);
        assert_eq!(normalised(&m), normalised(&r), "{} left different bytes", case.tool);
        match case.agree {
            Some(check) => check(&text, &reply.body),
            // A write's confirmation is the same sentence on both surfaces; MCP goes on with
            // the new etag and what changed.
            None => {
                let first = text.lines().next().unwrap_or_default();
                assert_eq!(format!("{first}\n"), reply.body, "{}", case.tool);
                if !case.tool.contains("folder") && case.tool != "vault_delete" {
                    assert!(text.contains("\netag: "), "{}: {text}", case.tool);
                }
            }
        }
    }
    // The move repointed inbound links on both sides alike.
    assert!(m.read("Home/Utilities/Gas.md").contains("Archive/2026/Boiler.md"));
}
