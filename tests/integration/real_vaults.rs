//! Frontmatter edits on real vaults (copied to a temporary folder): every line other than the
//! edited key and the timestamp stays byte-identical, including in notes whose YAML does not
//! parse. The vaults live in `../shared/eval/vaults` beside the repository (evaluation data that
//! is not ours to commit); set `MDVAULT_EVAL_VAULTS` to point elsewhere.

use std::path::PathBuf;

use mdvault::ErrorCode;
use mdvault::vault::{frontmatter, text};
use serde_json::json;

use crate::common::TempVault;

fn eval_vaults() -> PathBuf {
    let dir = std::env::var_os("MDVAULT_EVAL_VAULTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/eval/vaults"));
    assert!(
        dir.join("obsidian-help").is_dir(),
        "the evaluation vaults are missing at {}; set MDVAULT_EVAL_VAULTS to their folder",
        dir.display()
    );
    dir
}

/// The lines of `text` without the span of `key` in the frontmatter block.
fn without_key(text: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let close = frontmatter::locate(text).map(|b| b.close_line).unwrap_or(0);
    let mut in_span = false;
    for (i, line) in text.lines().enumerate() {
        if i > 0 && i < close {
            let starts_key = line.strip_prefix(key).is_some_and(|r| r.starts_with(':'));
            let continues =
                line.starts_with([' ', '\t']) || line.starts_with("- ") || line.is_empty();
            if starts_key {
                in_span = true;
                continue;
            }
            if in_span && continues {
                continue;
            }
            in_span = false;
        }
        out.push(line.to_string());
    }
    out
}

#[test]
fn frontmatter_edits_through_the_vault_touch_only_their_own_lines() {
    let copy = TempVault::copy_of(&eval_vaults().join("obsidian-help"));
    let vault = copy.open();
    let (mut edited, mut no_block, mut broken_yaml) = (0, 0, 0);
    for rel in vault.all_files().into_iter().filter(|p| p.ends_with(".md")) {
        let original = text::normalize(&copy.read(&rel));
        if frontmatter::parse_strict(&original).is_err() {
            broken_yaml += 1;
        }
        match vault.set_frontmatter(&rel, "mdvault_probe", Some(&json!("probe value")), None) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::NoFrontmatter, "{rel}: {}", e.message());
                assert_eq!(text::normalize(&copy.read(&rel)), original);
                no_block += 1;
                continue;
            }
        }
        let after = copy.read(&rel);
        assert!(after.contains("\nmdvault_probe: probe value\n"), "{rel}");
        let expected = without_key(&original, "timestamp").join("\n");
        let without_probe = without_key(&after, "mdvault_probe").join("\n");
        assert_eq!(without_key(&without_probe, "timestamp").join("\n"), expected, "{rel}");

        vault.set_frontmatter(&rel, "mdvault_probe", None, None).unwrap();
        assert_eq!(without_key(&copy.read(&rel), "timestamp").join("\n"), expected, "{rel}");
        edited += 1;
    }
    assert!(edited > 150, "only {edited} notes edited");
    eprintln!(
        "obsidian-help: {edited} edited, {no_block} without a block, {broken_yaml} with YAML that does not parse"
    );
}

#[test]
fn set_then_delete_round_trips_every_note_of_the_large_vault() {
    let root = eval_vaults().join("obsidian-hub");
    let (mut checked, mut broken) = (0, 0);
    for entry in walkdir::WalkDir::new(&root) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() || entry.path().extension().is_none_or(|e| e != "md") {
            continue;
        }
        let original = text::normalize(&std::fs::read_to_string(entry.path()).unwrap());
        if frontmatter::locate(&original).is_none() {
            continue;
        }
        if frontmatter::parse_strict(&original).is_err() {
            broken += 1;
        }
        let with = frontmatter::set(&original, "mdvault_probe", &json!("x")).unwrap();
        assert_eq!(
            without_key(&with, "mdvault_probe"),
            without_key(&original, "mdvault_probe"),
            "{:?}",
            entry.path()
        );
        let back = frontmatter::delete(&with, "mdvault_probe").unwrap();
        assert_eq!(back, original, "{:?}", entry.path());
        let bumped = frontmatter::bump_timestamp(&original, "2026-12-02T10:00:00Z").unwrap();
        assert_eq!(
            without_key(&bumped, "timestamp"),
            without_key(&original, "timestamp"),
            "{:?}",
            entry.path()
        );
        checked += 1;
    }
    assert!(checked > 6000, "only {checked} notes checked");
    eprintln!("obsidian-hub: {checked} round trips, {broken} with YAML that does not parse");
}

#[test]
fn the_real_vaults_run_through_check_callouts_and_index_md() {
    for name in ["obsidian-help", "obsidian-hub", "foam-docs"] {
        let dir = eval_vaults().join(name);
        let vault = format!("--vault={}", dir.display());
        // No check may fail to run; findings are the vault's business (exit 0 or 1).
        let out = crate::common::mdvault(&["check", "--json", &vault], None);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{name}: {}",
            crate::common::stderr(&out)
        );
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(run["summary"]["could_not_run"], 0, "{name}");
        assert_eq!(run["summary"]["invalid"], 0, "{name}");
        assert!(run["summary"]["checks"].as_u64().unwrap() >= 5, "{name}");

        // The server answers /callouts on the vault itself (nothing is written: index.md off).
        let s = crate::common::Server::spawn(
            &[format!("real={}", dir.display())],
            &[("MDVAULT_EMBEDDING__BACKEND", "hashing"), ("MDVAULT_INDEX__INDEX_MD", "false")],
        );
        let r = s.call("GET", "/callouts", &[], None);
        assert_eq!(r.status, 200, "{name}: {}", r.body);
        let c = r.json();
        assert!(c["counts"]["notes_scanned"].as_u64().unwrap() > 80, "{name}: {}", c["counts"]);
        // foam-docs has no open callouts; the Obsidian vaults do.
        let open = c["callouts"].as_array().unwrap().len();
        assert_eq!(open > 0, name != "foam-docs", "{name}: {open} open callouts");
        // foam-docs keeps a hand-written index.md: a note like any other, never replaced.
        if name == "foam-docs" {
            let ready = s.call("GET", "/readyz", &[], None).json();
            assert_eq!(ready["index_md"]["enabled"], false, "{ready}");
        }
    }
    // With index.md generation on, foam-docs' own index.md is left alone and still checked.
    let foam = TempVault::copy_of(&eval_vaults().join("foam-docs"));
    let before = foam.read("index.md");
    let vault = format!("--vault={}", foam.root().display());
    let out = crate::common::mdvault(&["index-md", &vault], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(crate::common::stderr(&out).contains("did not generate"), "{out:?}");
    assert_eq!(foam.read("index.md"), before);
    let out = crate::common::mdvault(&["check", "--json", &vault], None);
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let links = run["checks"].as_array().unwrap().iter().find(|c| c["check"] == "links").unwrap();
    assert!(
        links["findings"].as_array().unwrap().iter().any(|f| f["path"] == "index.md"),
        "a hand-written index.md is a note, so its links are checked: {links}"
    );
    // index.md over a copy of the smaller vault: written once, then left alone.
    let copy = TempVault::copy_of(&eval_vaults().join("obsidian-help"));
    let vault = format!("--vault={}", copy.root().display());
    let out = crate::common::mdvault(&["index-md", &vault], None);
    assert!(crate::common::stdout(&out).contains("index.md written"), "{out:?}");
    let first = copy.read("index.md");
    let out = crate::common::mdvault(&["index-md", &vault], None);
    assert!(crate::common::stdout(&out).contains("already up to date"), "{out:?}");
    assert_eq!(copy.read("index.md"), first);
}
