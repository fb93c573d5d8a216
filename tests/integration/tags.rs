//! Tags end to end: one reading of a note's tags behind REST `/tags/` (the Local REST API's
//! shape, nested tags counted for their parents), the MCP tool `vault_tags` and `mdvault tags`;
//! and Obsidian's own "Tags" help note read as Obsidian reads it, when the evaluation vaults
//! are present.

use serde_json::{Value, json};

use crate::common::{Server, TempVault, mdvault_with, stderr};
use crate::eval_data::{EVAL_VAULTS, find};
use crate::serve::tool;

const FAST: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// Three notes: nested tags in frontmatter and text, one spelled in another case, one in code.
fn tagged_vault() -> TempVault {
    let v = TempVault::empty();
    v.write("Projects/Alpha.md", "---\ntags: [project/alpha, \"#Status/open\"]\n---\n# Alpha\n");
    v.write("Projects/Beta.md", "# Beta #project/beta\n\nAbout #Project, not `#project/code`.\n");
    v.write("Notes/Other.md", "Only #projects and #status/open here, not a#b.\n");
    v
}

/// `mdvault tags ARGS --json` over the vault.
fn cli_json(v: &TempVault, args: &[&str]) -> Value {
    let root = format!("--vault={}", v.root().display());
    let mut all = vec!["tags", root.as_str(), "--json"];
    all.extend_from_slice(args);
    let o = mdvault_with(&all, FAST, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn counts(list: &Value) -> Vec<(String, u64)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["count"].as_u64().unwrap()))
        .collect()
}

fn pairs(list: &[(&str, u64)]) -> Vec<(String, u64)> {
    list.iter().map(|(n, c)| (n.to_string(), *c)).collect()
}

#[test]
fn rest_and_mcp_count_nested_tags_for_their_parents_and_find_notes_under_a_tag() {
    let v = tagged_vault();
    let s = Server::start(&[format!("t={}", v.root().display())], FAST);

    // The plugin's shape, most used first; `project` counts Alpha and Beta once each.
    let (status, body) = s.get("/tags/");
    assert_eq!(status, 200, "{body}");
    let j: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        counts(&j["tags"]),
        pairs(&[
            ("project", 2),
            ("status", 2),
            ("status/open", 2),
            ("project/alpha", 1),
            ("project/beta", 1),
            ("projects", 1),
        ])
    );

    // The tree, indented under each parent, and the notes under `project` with their tags.
    let (err, tree) = tool(&s, "/mcp", "vault_tags", json!({}));
    assert!(!err, "{tree}");
    assert!(
        tree.contains("- #project (2)\n  - #alpha (1)\n  - #beta (1)\n- #projects (1)\n"),
        "{tree}"
    );
    let (err, under) = tool(&s, "/mcp", "vault_tags", json!({"tag": "#PROJECT"}));
    assert!(!err, "{under}");
    assert!(under.starts_with("# 2 note(s) tagged #PROJECT"), "{under}");
    assert!(under.contains("- Projects/Alpha.md (#project/alpha)\n"), "{under}");
    assert!(under.contains("- Projects/Beta.md (#project/beta, #Project)\n"), "{under}");
    assert!(!under.contains("Other.md"), "{under}");

    // Not a tag, and a folder that is not there, are refusals that say what to do.
    let (err, text) = tool(&s, "/mcp", "vault_tags", json!({"tag": "1984"}));
    assert!(err && text.contains("invalid_request") && text.contains("not a tag"), "{text}");
    let (err, text) = tool(&s, "/mcp", "vault_tags", json!({"dir": "Nowhere"}));
    assert!(err && text.contains("not_found"), "{text}");

    // The tool is read-only, as its annotation says.
    let list = crate::serve::mcp(&s, "/mcp", "tools/list", json!({}));
    let t = list["tools"].as_array().unwrap().iter().find(|t| t["name"] == "vault_tags").unwrap();
    assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
}

#[test]
fn mdvault_tags_prints_the_tree_and_the_notes_under_a_tag() {
    let v = tagged_vault();
    let all = cli_json(&v, &[]);
    assert_eq!(all["tag"], Value::Null);
    assert_eq!(all["notes_scanned"], 3);
    // Tree order: each tag right before the tags nested under it.
    let names: Vec<&str> =
        all["tags"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["project", "project/alpha", "project/beta", "projects", "status", "status/open"]
    );
    assert_eq!(all["tags"][1]["depth"], 1);

    let under = cli_json(&v, &["project/alpha"]);
    assert_eq!(under["notes"], json!([{"path": "Projects/Alpha.md", "tags": ["project/alpha"]}]));
    let narrowed = cli_json(&v, &["--dir", "Notes", "status"]);
    assert_eq!(narrowed["notes"], json!([{"path": "Notes/Other.md", "tags": ["status/open"]}]));

    let root = format!("--vault={}", v.root().display());
    let o = mdvault_with(&["tags", &root], FAST, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // `#Status/open` and `#status/open` are one tag, in the casing met first (path order).
    assert!(text.contains("- #status (2)\n  - #open (2)\n"), "{text}");
    let o = mdvault_with(&["tags", &root, "two words"], FAST, None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn obsidians_tags_help_note_carries_the_tags_obsidian_reads_in_it() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    let note = std::fs::read_to_string(vaults.join("obsidian-help/Editing and formatting/Tags.md"))
        .unwrap();
    let v = TempVault::empty();
    v.write("Tags.md", &note);
    let got = counts(&cli_json(&v, &[])["tags"]);
    // `#meeting` and `#inbox/to-read` are in code spans, `#1984` is all digits, `[[#Nested
    // tags]]` is a link, and `#tag`, `#TAG` and `#Tag` are one tag in the casing met first.
    let mut want = pairs(&[
        ("camelCase", 1),
        ("kebab-case", 1),
        ("PascalCase", 1),
        ("snake_case", 1),
        ("tag", 1),
        ("y1984", 1),
    ]);
    want.sort_by_key(|(n, _)| n.to_lowercase());
    assert_eq!(got, want);
}
