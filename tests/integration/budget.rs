//! The answer budget over MCP on the real binary: a 2 MB note read through `vault_read` and a
//! 10,000-note folder listed through `vault_list`, every answer under the budget the tools'
//! descriptions state (prose and structured content together), and the `offset` each part
//! names reaching the end: the note recovered exactly by joining its parts, every note listed
//! exactly once, in the prose and the structured content alike.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::{Server, TempVault};
use crate::serve::mcp;

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// The budget the tools' descriptions state (`api/mcp/budget.rs`'s `ANSWER_BUDGET`).
const BUDGET: usize = 60_000;

/// A tool call's text blocks.
fn call(s: &Server, tool: &str, args: Value) -> Vec<String> {
    let r = mcp(s, "/mcp", "tools/call", json!({"name": tool, "arguments": args}));
    assert_ne!(r["isError"], json!(true), "{tool}: {r}");
    let blocks = r["content"].as_array().unwrap_or_else(|| panic!("{r}"));
    blocks.iter().map(|b| b["text"].as_str().unwrap().to_string()).collect()
}

/// The `offset` a part's closing sentence names, if it names one.
fn next_offset(closing: &str) -> Option<usize> {
    let (_, after) = closing.rsplit_once("`offset: ")?;
    Some(after.chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap())
}

#[test]
fn long_answers_come_in_parts_under_the_budget_that_reach_the_end_and_a_long_write_answer_keeps_its_totals()
 {
    let v = TempVault::empty();
    let mut note = String::new();
    let mut chapter = 0;
    while note.len() < 2_000_000 {
        chapter += 1;
        note.push_str(&format!("# Chapter {chapter}\n\n## Part A\n\n"));
        for line in 0..40 {
            note.push_str(&format!("Line {line} of chapter {chapter}: ünïcode and words.\n"));
        }
        note.push_str("\n## Part B\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n");
    }
    std::fs::write(v.root().join("Long.md"), &note).unwrap();
    std::fs::create_dir_all(v.root().join("Big")).unwrap();
    let mut expected = BTreeSet::new();
    for n in 0..10_000 {
        let name = format!("Note {n:05}.md");
        // 2,000 of them tagged: enough for a rename's answer to pass the budget.
        let text = if n < 2_000 { "x #bulk\n" } else { "x\n" };
        std::fs::write(v.root().join("Big").join(&name), text).unwrap();
        expected.insert(name);
    }
    let wide: String =
        (0..300).map(|n| format!("needle {n:03} {}\n", "wide ".repeat(80))).collect();
    std::fs::write(v.root().join("Wide.md"), wide).unwrap();
    let s = Server::spawn(&[format!("big={}", v.root().display())], HASHING);

    // The note: the first part opens with the outline; joining the parts gives it back.
    let (mut joined, mut offset, mut parts) = (String::new(), 0, 0);
    loop {
        let blocks = call(&s, "vault_read", json!({"path": "Long.md", "offset": offset}));
        let size: usize = blocks.iter().map(|b| b.chars().count()).sum();
        assert!(size <= BUDGET, "part {parts} is {size} characters");
        assert_eq!(blocks.len(), 3, "{:?}", blocks.first());
        if parts == 0 {
            assert!(blocks[0].contains("Outline (heading path: lines):"), "{}", blocks[0]);
            assert!(blocks[0].contains("\n- Chapter 1::Part A: 3-"), "{}", blocks[0]);
            assert!(blocks[0].contains("vault_map lists them all"), "{}", blocks[0]);
        }
        joined.push_str(&blocks[1]);
        parts += 1;
        match next_offset(&blocks[2]) {
            Some(next) => {
                assert!(next > offset, "{}", blocks[2]);
                offset = next;
            }
            None => {
                assert!(blocks[2].starts_with("That is the end"), "{}", blocks[2]);
                break;
            }
        }
    }
    assert!(parts >= 2_000_000 / BUDGET, "{parts} parts");
    assert!(joined == note, "the parts do not join back into the note");

    // A section reads whole when it fits, as before.
    let one = call(&s, "vault_read", json!({"path": "Long.md", "section": "Chapter 2::Part B"}));
    assert_eq!(one, vec!["## Part B\n\n| a | b |\n|---|---|\n| 1 | 2 |\n".to_string()]);

    // The folder: every note once, across parts each under the budget, its prose and its
    // structured content holding the same notes.
    let (mut listed, mut offset) = (Vec::new(), 0);
    loop {
        let args = json!({"name": "vault_list", "arguments": {"path": "Big", "offset": offset}});
        let r = mcp(&s, "/mcp", "tools/call", args);
        assert_ne!(r["isError"], json!(true), "{r}");
        let text = r["content"][0]["text"].as_str().unwrap();
        let data = &r["structuredContent"];
        let size = text.chars().count() + data.to_string().chars().count();
        assert!(size <= BUDGET, "{size} characters");
        let in_prose: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .filter_map(|l| l.split_once("  (").map(|(name, _)| name.to_string()))
            .collect();
        let in_data: Vec<String> = data["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(in_prose, in_data);
        assert_eq!(data["page"]["offset"], json!(offset), "{}", data["page"]);
        assert_eq!(data["page"]["total"], json!(10_000), "{}", data["page"]);
        listed.extend(in_data);
        match next_offset(text) {
            Some(next) => {
                assert_eq!(data["page"]["next_offset"], json!(next));
                offset = next;
            }
            None => {
                assert!(text.contains("That is the end of this answer"), "{text}");
                assert!(data["page"].get("next_offset").is_none(), "{}", data["page"]);
                break;
            }
        }
    }
    let after = json!({"name": "vault_list", "arguments": {"path": "Big", "offset": 10_000}});
    let past = mcp(&s, "/mcp", "tools/call", after);
    assert_eq!(past["isError"], json!(true), "{past}");
    assert!(past.get("structuredContent").is_none(), "{past}");
    // grep's own pages: 200 wide lines would pass the budget, so fewer come, and its own
    // offset goes on from the first left out.
    let (mut found, mut offset) = (0, 0);
    loop {
        let args = json!({"pattern": "needle", "limit": 200, "offset": offset});
        let r = mcp(&s, "/mcp", "tools/call", json!({"name": "vault_grep", "arguments": args}));
        let text = r["content"][0]["text"].as_str().unwrap();
        let size = text.chars().count() + r["structuredContent"].to_string().chars().count();
        assert!(size <= BUDGET, "{size} characters");
        let hits = r["structuredContent"]["hits"].as_array().unwrap().len();
        assert!(hits < 200, "{hits} hits");
        found += hits;
        match text.rsplit_once("call again with offset ") {
            Some((_, n)) => offset = n.trim_end_matches(".\n").parse().unwrap(),
            None => break,
        }
    }
    assert_eq!(found, 300);

    // A tag on 2,000 notes renamed: the write cannot be asked again, so its answer lists
    // the notes that fit and keeps its totals.
    for dry_run in [true, false] {
        let args = json!({"from": "bulk", "to": "mass", "dry_run": dry_run});
        let r =
            mcp(&s, "/mcp", "tools/call", json!({"name": "vault_tag_rename", "arguments": args}));
        assert_ne!(r["isError"], json!(true), "{r}");
        let text = r["content"][0]["text"].as_str().unwrap();
        let data = &r["structuredContent"];
        let size = text.chars().count() + data.to_string().chars().count();
        assert!(size <= BUDGET, "{size} characters");
        assert_eq!(data["replaced"], json!(2_000), "{}", data["message"]);
        let listed = data["listed"].as_u64().unwrap() as usize;
        assert_eq!(data["notes"].as_array().unwrap().len(), listed);
        assert!(listed < 2_000, "{listed}");
        assert!(text.contains(&format!("({} more not listed", 2_000 - listed)), "{text}");
    }
    let renamed = std::fs::read_to_string(v.root().join("Big/Note 01999.md")).unwrap();
    assert_eq!(renamed, "x #mass\n");

    let unique: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(unique.len(), listed.len(), "a note was listed twice");
    assert_eq!(unique, expected);
}
