//! MCP resources and completions over HTTP on the real binary: a 10,000-note vault listed
//! through `resources/list` in bounded pages whose cursor reaches every note exactly once;
//! reads refused as `vault_read` refuses them (resource-not-found for a missing note, the
//! house's codes for the rest); a connection bound to one vault lists and reads only that one;
//! completion's bound and `hasMore`.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::{Server, TempVault};
use crate::serve::mcp;

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// `resources/list`'s page size (`api/mcp/resources.rs`'s `PAGE`).
const PAGE: usize = 200;

/// Every page of `resources/list` on `path`, following the cursor to the end.
fn every_page(s: &Server, path: &str) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = mcp(s, path, "resources/list", params);
        let listed = r["resources"].as_array().unwrap_or_else(|| panic!("{r}"));
        pages.push(listed.iter().map(|l| l["uri"].as_str().unwrap().to_string()).collect());
        match r["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return pages,
        }
    }
}

#[test]
fn resources_list_pages_a_ten_thousand_note_vault_reaching_every_note_once() {
    let v = TempVault::empty();
    let mut expected = BTreeSet::new();
    for folder in 0..100 {
        let dir = format!("Folder {folder:02}");
        std::fs::create_dir_all(v.root().join(&dir)).unwrap();
        for note in 0..100 {
            let rel = format!("{dir}/Note {note:03}.md");
            std::fs::write(v.root().join(&rel), format!("# Note {note}\n")).unwrap();
            expected.insert(format!("mdvault://big/Folder%20{folder:02}/Note%20{note:03}.md"));
        }
    }
    // Listing needs no index: the server is not waited on to be ready.
    let s = Server::spawn(&[format!("big={}", v.root().display())], HASHING);
    let pages = every_page(&s, "/mcp");
    assert!(pages.iter().all(|p| p.len() <= PAGE), "a page over {PAGE}");
    assert!(pages.len() >= 10_000 / PAGE, "{} pages", pages.len());
    let listed: Vec<&String> = pages.iter().flatten().collect();
    let unique: BTreeSet<&String> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "a note was listed twice");
    // The generated root index.md may appear while the walk runs; every note is there once.
    let notes: BTreeSet<String> =
        unique.into_iter().filter(|u| !u.ends_with("/index.md")).cloned().collect();
    assert_eq!(notes, expected);

    // A completion is cut at the protocol's 100 and says how many matched.
    let c = mcp(
        &s,
        "/mcp",
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "mdvault://{vault}/{+path}"},
               "argument": {"name": "path", "value": "folder 07/"}}),
    );
    let completion = &c["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100, "{c}");
    assert_eq!(
        (completion["total"].as_u64(), completion["hasMore"].as_bool()),
        (Some(100), Some(false))
    );
    let c = mcp(
        &s,
        "/mcp",
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "mdvault://{vault}/{+path}"},
               "argument": {"name": "path", "value": "note 00"}}),
    );
    let completion = &c["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100, "{c}");
    assert!(completion["total"].as_u64().unwrap() > 100, "{c}");
    assert_eq!(completion["hasMore"], true, "{c}");
    assert_eq!(completion["values"][0], "Folder 00/Note 000.md", "{c}");
}

/// A `resources/read` answer's error: its code and message.
fn refusal(r: &Value) -> (i64, String) {
    let e = &r["error"];
    (
        e["code"].as_i64().unwrap_or_else(|| panic!("not an error: {r}")),
        e["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn resource_reads_are_refused_as_the_tools_refuse_them_and_stay_in_the_connections_vault() {
    let (a, b) = (TempVault::fixture(), TempVault::fixture());
    b.write("Inbox/Only work.md", "work only\n");
    let s = Server::spawn(
        &[format!("main={}", a.root().display()), format!("work={}", b.root().display())],
        HASHING,
    );
    let read = |path: &str, uri: &str| mcp(&s, path, "resources/read", json!({"uri": uri}));

    let r = read("/mcp", "mdvault://main/Home/Boilr.md");
    let (code, message) = refusal(&r);
    assert_eq!(code, -32002, "{r}");
    assert!(
        message.starts_with("Refused (not_found): ") && message.contains("Home/Boiler.md"),
        "{r}"
    );
    assert!(message.contains("completion/complete"), "{r}");
    let r = read("/mcp", "mdvault://nowhere/Home/Boiler.md");
    assert_eq!(refusal(&r).0, -32002, "{r}");

    for (uri, code) in [
        ("mdvault://main/Home/../../etc/passwd", "invalid_path"),
        ("mdvault://main/.obsidian/x.md", "invalid_path"),
        ("mdvault://main/Home/%2E%2E/%2E%2E/x.md", "invalid_path"),
        ("file:///etc/passwd", "invalid_request"),
    ] {
        let r = read("/mcp", uri);
        let (rpc, message) = refusal(&r);
        assert_eq!(rpc, -32602, "{uri}: {r}");
        assert!(message.starts_with(&format!("Refused ({code})")), "{uri}: {r}");
    }

    // Bound to `work` by its URL: lists only work, reads only work.
    let r = read("/v/work/mcp", "mdvault://main/Home/Boiler.md");
    assert!(refusal(&r).1.contains("out_of_scope"), "{r}");
    let r = read("/v/work/mcp", "mdvault://work/Inbox/Only%20work.md");
    assert_eq!(r["contents"][0]["text"], "work only\n", "{r}");
    let listed: Vec<String> = every_page(&s, "/v/work/mcp").into_iter().flatten().collect();
    assert!(listed.iter().all(|u| u.starts_with("mdvault://work/")), "{listed:?}");
    assert!(listed.contains(&"mdvault://work/Inbox/Only%20work.md".to_string()));
    let everything: Vec<String> = every_page(&s, "/mcp").into_iter().flatten().collect();
    assert!(everything.iter().any(|u| u.starts_with("mdvault://main/")));
    assert!(everything.iter().any(|u| u.starts_with("mdvault://work/")));
    let c = mcp(
        &s,
        "/v/work/mcp",
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "mdvault://{vault}/{+path}"},
               "argument": {"name": "vault", "value": ""}}),
    );
    assert_eq!(c["completion"]["values"], json!(["work"]), "{c}");

    // A prompt's `section` argument completes to the heading paths of the note its `path`
    // argument names (the hook prompts plug into; the prompt's name decides nothing yet).
    let c = mcp(
        &s,
        "/mcp",
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "any"},
               "argument": {"name": "section", "value": "sett"},
               "context": {"arguments": {"path": "Home/Boiler.md"}}}),
    );
    assert_eq!(c["completion"]["values"], json!(["Boiler::Settings"]), "{c}");

    // A cursor this server did not give is refused, not read as the start.
    let r = mcp(&s, "/mcp", "resources/list", json!({"cursor": "bm90IGEgY3Vyc29y"}));
    assert!(refusal(&r).1.contains("start again without a cursor"), "{r}");
}
