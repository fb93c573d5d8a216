//! The agent-task suite: common vault tasks replayed as scripted MCP tool calls through the
//! official Python SDK, each in the fewest calls the tools allow, then the disk checked byte
//! for byte.
//!
//! Every task declares its minimum number of calls, and the script is exactly that long: a
//! task that needed a read-back, a repair or a retry would not fit. After the run every file
//! the tasks touched is compared with the fixture's bytes edited by hand here (the
//! `timestamp` value, which every write sets to now, is compared as "changed"), and every other
//! file must be as the fixture has it: lists and tables intact, nothing else rewritten.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{KEY, Server, TempVault, fixture_root};

/// One task: what a person asks, the calls that do it, and what each answer must say.
struct Task {
    ask: &'static str,
    /// The fewest calls that do it; the script below is exactly this long.
    minimum: usize,
    calls: Vec<(Value, bool, &'static str)>,
}

fn call(tool: &str, args: Value, error: bool, says: &'static str) -> (Value, bool, &'static str) {
    (json!({"tool": tool, "args": args}), error, says)
}

fn tasks() -> Vec<Task> {
    vec![
        Task {
            ask: "When was the boiler last serviced? Log that the next one is booked.",
            minimum: 2,
            calls: vec![
                call(
                    "vault_grep",
                    json!({"pattern": "boiler service", "ignore_case": true}),
                    false,
                    "Home/House Log.md:22: - 2025-09-03: Yearly boiler service",
                ),
                // The list continues: no blank line before the new item.
                call(
                    "vault_append",
                    json!({"path": "/Home/House%20Log",
                     "content": "- 2026-09-08: Boiler service booked with Pellow Heating."}),
                    false,
                    "+- 2026-09-08: Boiler service booked",
                ),
            ],
        },
        Task {
            ask: "What falls due in the next 90 days?",
            minimum: 1,
            calls: vec![call("vault_expiries", json!({"within": 90}), false, "# Expiry dates")],
        },
        Task {
            ask: "Prove the old broadband number is gone from the vault.",
            minimum: 1,
            calls: vec![call(
                "vault_grep",
                json!({"pattern": "0808 157 9999"}),
                false,
                "No line in ",
            )],
        },
        Task {
            ask: "Change the broadband support number.",
            minimum: 1,
            calls: vec![call(
                "vault_replace_text",
                json!({"path": "home/utilities/broadband",
                             "find": "0808 157 0630", "replace": "0808 157 0631"}),
                false,
                "+Phone support is 0808 157 0631",
            )],
        },
        Task {
            ask: "Tag every car note with car.",
            minimum: 3,
            calls: vec![
                call(
                    "vault_frontmatter_query",
                    json!({"key": "tags", "value": "vehicles"}),
                    false,
                    "- Home/Insurance/Car Insurance.md",
                ),
                call(
                    "vault_set_frontmatter",
                    json!({"path": "Home/Insurance/Car Insurance.md",
                     "key": "tags", "add": "car"}),
                    false,
                    "is now ['vehicles', 'insurance', 'car']",
                ),
                call(
                    "vault_set_frontmatter",
                    json!({"path": "Personal/Vehicles/Ardent Solace.md",
                     "key": "tags", "add": "car"}),
                    false,
                    "nothing changed",
                ),
            ],
        },
        Task {
            ask: "Note under the second 'Notes' of the scratch note that the allotment was chased.",
            minimum: 2,
            calls: vec![
                call(
                    "vault_map",
                    json!({"path": "Inbox/Scratch.md"}),
                    false,
                    "- Notes (line 13; duplicate path, target `Notes@13`)",
                ),
                call(
                    "vault_patch",
                    json!({"path": "Inbox/Scratch.md", "target": "{{0:target `(Notes@13)`}}",
                     "operation": "append", "content": "Allotment: asked again on 2026-12-04."}),
                    false,
                    "+Allotment: asked again",
                ),
            ],
        },
        Task {
            ask: "Add light bulbs to the shopping list.",
            minimum: 1,
            calls: vec![call(
                "vault_patch",
                json!({"path": "Inbox/Scratch", "target": "To buy",
                             "operation": "append", "content": "- light bulbs"}),
                false,
                " - kettle descaler\n+- light bulbs",
            )],
        },
        Task {
            ask: "Rename 'To buy' to 'Shopping', keeping it a heading.",
            minimum: 1,
            calls: vec![call(
                "vault_patch",
                json!({"path": "Inbox/Scratch.md", "target": "To buy",
                             "operation": "replace", "target_scope": "marker", "content": "Shopping"}),
                false,
                "+## Shopping",
            )],
        },
        Task {
            ask: "(A slip) replace the shopping list with nothing: refused, nothing lost.",
            minimum: 1,
            calls: vec![call(
                "vault_patch",
                json!({"path": "Inbox/Scratch.md", "target": "Shopping",
                             "operation": "replace", "content": ""}),
                true,
                "Refused (empty_content)",
            )],
        },
        Task {
            ask: "Where do the notes mention a frozen condensate pipe? Read the section the hit names.",
            minimum: 2,
            calls: vec![
                call(
                    "vault_search",
                    json!({"query": "frozen condensate pipe", "k": 3}),
                    false,
                    "Home/Boiler.md, section Boiler::",
                ),
                call(
                    "vault_read",
                    json!({"path": "Home/Boiler.md",
                     "section": "{{0:Home/Boiler\\.md, section (Boiler::[^\\n]+)}}"}),
                    false,
                    "## ",
                ),
            ],
        },
        Task {
            ask: "Move the scratch note to the archive, checking first what links to it.",
            minimum: 2,
            calls: vec![
                call("vault_links", json!({"path": "Inbox/Scratch.md"}), false, "## Backlinks (0)"),
                call(
                    "vault_move",
                    json!({"source": "Inbox/Scratch.md",
                     "destination": "Archive/Scratch.md"}),
                    false,
                    "Archive/Scratch.md",
                ),
            ],
        },
    ]
}

/// The `timestamp:` value replaced, so a bumped stamp compares equal to any other.
fn unstamped(text: &str) -> String {
    text.lines()
        .map(|l| if l.starts_with("timestamp: ") { "timestamp: <now>" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
        + if text.ends_with('\n') { "\n" } else { "" }
}

#[test]
fn common_tasks_take_their_minimum_calls_and_leave_exact_bytes() {
    let v = TempVault::fixture();
    let s = Server::start(
        &[format!("fixture={}", v.root().display())],
        &[("MDVAULT_EMBEDDING__BACKEND", "hashing")],
    );
    let tasks = tasks();
    let mut steps = Vec::new();
    for t in &tasks {
        assert_eq!(t.calls.len(), t.minimum, "{}: the script is not the minimum", t.ask);
        steps.extend(t.calls.iter().map(|(c, _, _)| c.clone()));
    }
    assert!(tasks.len() >= 10);
    // `{{N:...}}` in a script counts from the task's first call; make it absolute.
    let mut at = 0;
    let mut absolute = Vec::new();
    for t in &tasks {
        for (c, _, _) in &t.calls {
            let text = c.to_string();
            let text = regex_lite_shift(&text, at);
            absolute.push(serde_json::from_str::<Value>(&text).unwrap());
        }
        at += t.calls.len();
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_string(&absolute).unwrap()).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agent_tasks.py");
    let out = Command::new(crate::mcp_sdk::python())
        .arg(script)
        .args([format!("{}/mcp", s.base), KEY.to_string(), file.path().display().to_string()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let answers: Vec<Value> = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answers.len(), steps.len(), "one answer per call");
    let mut i = 0;
    for t in &tasks {
        for (_, error, says) in &t.calls {
            let a = &answers[i];
            let text = a["text"].as_str().unwrap();
            assert_eq!(a["error"], *error, "{} (call {i}, {}): {text}", t.ask, a["tool"]);
            assert!(text.contains(says), "{} (call {i}): `{says}` missing from:\n{text}", t.ask);
            i += 1;
        }
    }

    // The disk: each touched file as the fixture's bytes edited by hand, everything else as is.
    let fixture = TempVault::copy_of(&fixture_root());
    let orig = |p: &str| fixture.read(p);
    let mut expected: BTreeMap<&str, Option<String>> = BTreeMap::new();
    expected.insert(
        "Home/House Log.md",
        Some(orig("Home/House Log.md").replacen(
            "security at renewal.\n",
            "security at renewal.\n- 2026-09-08: Boiler service booked with Pellow Heating.\n",
            1,
        )),
    );
    expected.insert(
        "Home/Utilities/Broadband.md",
        Some(orig("Home/Utilities/Broadband.md").replacen("0808 157 0630", "0808 157 0631", 1)),
    );
    expected.insert(
        "Home/Insurance/Car Insurance.md",
        Some(orig("Home/Insurance/Car Insurance.md").replacen(
            "tags: [vehicles, insurance]\n",
            "tags: [vehicles, insurance, car]\n",
            1,
        )),
    );
    let scratch = orig("Inbox/Scratch.md")
        .replacen("- kettle descaler\n", "- kettle descaler\n- light bulbs\n", 1)
        .replacen("## To buy\n", "## Shopping\n", 1)
        + "\nAllotment: asked again on 2026-12-04.\n";
    expected.insert("Inbox/Scratch.md", None);
    expected.insert("Archive/Scratch.md", Some(scratch));
    for (path, want) in &expected {
        let got = std::fs::read_to_string(v.root().join(path)).ok();
        match want {
            None => assert!(got.is_none(), "{path} should be gone"),
            Some(want) => {
                let got = got.unwrap_or_else(|| panic!("{path} is missing"));
                assert_eq!(unstamped(&got), unstamped(want), "{path}");
                if want.contains("\ntimestamp: ") {
                    assert_ne!(got, *want, "{path}: the timestamp was not bumped");
                }
            }
        }
    }
    let (before, after) = (fixture.snapshot(), v.snapshot());
    for (path, bytes) in &before {
        if expected.contains_key(path.as_str()) || path == "index.md" {
            continue;
        }
        assert_eq!(after.get(path), Some(bytes), "{path} changed, and no task asked for that");
    }
    for path in after.keys() {
        let known = before.contains_key(path) || expected.contains_key(path.as_str());
        assert!(known || path == "Archive" || path == "index.md", "{path} appeared");
    }
}

/// Shifts every `{{N:` step reference in `text` by `by`.
fn regex_lite_shift(text: &str, by: usize) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(':') {
            let n: usize = rest[..digits].parse().unwrap();
            out.push_str(&(n + by).to_string());
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}
