//! A tag's rename and merge end to end: `mdvault tags rename`, `POST /tags/rename` and the MCP
//! tool `vault_tag_rename` over the fixtures of real tag syntax (`tests/fixtures/obsidian/
//! tags-*.md`), their refusals, the listing and the rename agreeing on which notes carry a tag,
//! and a rename over a copy of obsidian-hub that leaves every untouched byte identical (when
//! the evaluation vaults are present).

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Server, TempVault, mdvault_with, stderr};
use crate::eval_data::{EVAL_VAULTS, find};
use crate::serve::tool;

const FAST: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// A vault of the tag fixtures (only the `tags-*.md` files: other engineers' fixtures share the
/// folder).
fn fixture_vault() -> TempVault {
    let v = TempVault::empty();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/obsidian");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("tags-") && name.ends_with(".md") {
            std::fs::copy(&path, v.root().join(&name)).unwrap();
        }
    }
    v
}

/// `mdvault tags ARGS --json` over the vault at `root`, with its own data directory.
fn cli(root: &Path, data: &Path, args: &[&str]) -> Value {
    let vault = format!("--vault={}", root.display());
    let data = format!("--data-dir={}", data.display());
    let mut all = vec!["tags", vault.as_str(), data.as_str()];
    all.extend_from_slice(args);
    all.push("--json");
    let o = mdvault_with(&all, FAST, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The changed notes of a rename's JSON, with their counts.
fn changed(j: &Value) -> Vec<(String, u64)> {
    j["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["path"].as_str().unwrap().to_string(), n["replaced"].as_u64().unwrap()))
        .collect()
}

/// What renaming #garden to #plants makes of each fixture (the BOM and CRLF kept, merges
/// keeping one frontmatter entry), and how many tags it replaces in each.
const RENAMED: &[(&str, &[u8], u64)] = &[
    (
        "tags-block-list.md",
        b"---\ntitle: Block list\ntags:\n  - plants   # the main one\n  - \"plants/herbs\"\n  - other\n---\n# Block #plants\n\nInline #plants and #plants/veg, not #gardens or `#garden` or [[Note #garden]].\n%% #garden in a comment %%\n\n```\n#garden in code\n```\n",
        5,
    ),
    (
        "tags-flow-crlf.md",
        b"---\r\ntags: [\"#plants\", orchard]  # flow\r\n---\r\nCRLF text #plants/trees\r\n",
        2,
    ),
    ("tags-merge.md", b"---\ntags:\n  - plants\n---\nAlready carries #plants; merging #plants into it keeps one frontmatter entry.\n", 2),
    (
        "tags-string-bom.md",
        b"\xef\xbb\xbf---\ntag: \"#plants\"\n---\nBOM note, see https://example.org/x#garden and a#garden.\n",
        1,
    ),
];

#[test]
fn the_cli_renames_a_tag_in_every_shape_and_lists_each_note_with_its_count() {
    let v = fixture_vault();
    let data = tempfile::tempdir().unwrap();
    let before = v.snapshot();
    let want: Vec<(String, u64)> = RENAMED.iter().map(|(p, _, n)| (p.to_string(), *n)).collect();

    let dry = cli(v.root(), data.path(), &["rename", "#Garden", "plants", "--dry-run"]);
    assert_eq!((changed(&dry), dry["dry_run"].as_bool()), (want.clone(), Some(true)));
    assert_eq!(v.snapshot(), before, "a dry run wrote");

    // The listing finds exactly the notes the rename changes.
    let listed = cli(v.root(), data.path(), &["garden"]);
    let mut under: Vec<&str> =
        listed["notes"].as_array().unwrap().iter().map(|n| n["path"].as_str().unwrap()).collect();
    under.sort();
    assert_eq!(under, want.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>());

    let done = cli(v.root(), data.path(), &["rename", "garden", "plants"]);
    assert_eq!(changed(&done), want);
    assert_eq!(done["replaced"], 10);
    for (path, bytes, _) in RENAMED {
        let got = std::fs::read(v.root().join(path)).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(bytes), "{path}");
    }
    assert_eq!(v.read("tags-none.md"), "No tag here: #1984, \\#garden, #gardening.\n");
    let after = cli(v.root(), data.path(), &["garden"]);
    assert!(after["notes"].as_array().unwrap().is_empty(), "{after}");
    assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
}

#[test]
fn rest_and_mcp_rename_and_refuse_what_is_not_a_tag() {
    let v = fixture_vault();
    let s = Server::start(&[format!("t={}", v.root().display())], FAST);
    let post = |body: Value| s.call("POST", "/tags/rename", &[], Some(body.to_string().as_bytes()));

    for (body, code) in [
        (json!({"from": "garden", "to": "two words"}), "invalid_tag"),
        (json!({"from": "garden", "to": "1984"}), "invalid_tag"),
        (json!({"from": "#garden", "to": "garden"}), "same_tag"),
        (json!({"from": "garden"}), "invalid_request"),
    ] {
        let r = post(body.clone());
        assert_eq!((r.status, r.code().as_str()), (400, code), "{body}: {}", r.body);
    }
    let r = post(json!({"from": "garden", "to": "plants", "dry_run": true}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["replaced"], 10);
    let r = post(json!({"from": "garden", "to": "flora"}));
    assert_eq!((r.status, r.json()["notes"].as_array().unwrap().len()), (200, 4), "{}", r.body);
    assert!(v.read("tags-block-list.md").contains("# Block #flora\n"));

    let (error, text) = tool(&s, "/mcp", "vault_tag_rename", json!({"from": "flora", "to": "x y"}));
    assert!(error && text.contains("invalid_tag"), "{text}");
    let (error, text) =
        tool(&s, "/mcp", "vault_tag_rename", json!({"from": "flora", "to": "garden"}));
    assert!(!error, "{text}");
    assert!(text.starts_with("Renamed #flora to #garden"), "{text}");
    assert!(text.contains("- tags-block-list.md (5)\n"), "{text}");
    // Back where it started, every byte.
    let original = fixture_vault();
    for (path, _, _) in RENAMED {
        if *path != "tags-block-list.md" {
            assert_eq!(v.read(path), original.read(path), "{path}");
        }
    }
    let (error, text) = tool(&s, "/mcp", "vault_tags", json!({"tag": "garden"}));
    assert!(!error && text.contains("tags-flow-crlf.md"), "{text}");
}

/// Whether `new` is `old` with every tag span starting with `from` (without case) turned
/// into `to`, and nothing else changed; returns how many spans. `to` must not start like
/// `from`, so each span starts where the bytes first differ.
fn only_tags_replaced(old: &[u8], new: &[u8], from: &str, to: &str) -> Option<usize> {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < old.len() && j < new.len() {
        if old[i] == new[j] {
            i += 1;
            j += 1;
            continue;
        }
        let at = old.get(i..i + from.len())?;
        if !at.eq_ignore_ascii_case(from.as_bytes()) || !new[j..].starts_with(to.as_bytes()) {
            return None;
        }
        i += from.len();
        j += to.len();
        n += 1;
    }
    (i == old.len() && j == new.len()).then_some(n)
}

#[test]
fn a_rename_over_obsidian_hub_leaves_every_untouched_byte_identical() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    let hub = TempVault::copy_of(&vaults.join("obsidian-hub"));
    let data = tempfile::tempdir().unwrap();
    let before = hub.snapshot();
    let (from, to) = ("seedling", "grown-plant");
    let done = cli(hub.root(), data.path(), &["rename", from, to]);
    let notes = changed(&done);
    assert!(notes.len() > 20, "obsidian-hub should have many #seedling notes: {done}");
    let after = hub.snapshot();
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "files came or went"
    );
    let counts: std::collections::BTreeMap<&str, u64> =
        notes.iter().map(|(p, n)| (p.as_str(), *n)).collect();
    for (path, old) in &before {
        let new = &after[path];
        match counts.get(path.as_str()) {
            None => assert_eq!(old, new, "{path} changed but is not in the reply"),
            Some(n) => {
                let (old, new) = (old.as_ref().unwrap(), new.as_ref().unwrap());
                let spans = only_tags_replaced(old, new, from, to);
                assert_eq!(spans, Some(*n as usize), "{path}: more than the tags changed");
            }
        }
    }
    let listed = cli(hub.root(), data.path(), &[from]);
    assert!(listed["notes"].as_array().unwrap().is_empty(), "#{from} is left somewhere");
}
