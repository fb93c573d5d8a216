//! Frontmatter surgery over the odd shapes real vaults hold, and the checks themselves.
//!
//! `tests/fixtures/frontmatter-shapes` holds notes written for this project, each with one
//! shape the evaluation vaults showed: YAML that does not parse, block scalars, CRLF, a BOM,
//! comments, empty and unclosed blocks, tabs, duplicate keys, nested maps, flow lists. The
//! checks here (every line other than the edited key and the timestamp keeps its bytes) run
//! over that fixture on every test run, and over the evaluation vaults in `real_vaults.rs`
//! when those are present. What a key's value becomes is the unit tests' business
//! (`vault::frontmatter`), not this module's.

use std::path::{Path, PathBuf};

use mdvault::ErrorCode;
use mdvault::vault::{frontmatter, text};
use serde_json::json;

use crate::common::TempVault;

/// The key the checks set and delete; no note uses it.
const PROBE: &str = "mdvault_probe";

/// What a pass of the checks found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Notes with a block, edited and checked.
    pub edited: usize,
    /// Notes without a block (their edits are refused and leave them alone).
    pub no_block: usize,
    /// Notes whose block is there but whose YAML does not parse (counted among `edited`).
    pub broken_yaml: usize,
}

/// The lines of `text`, each with its line ending, without the span of `key` in the
/// frontmatter block.
pub fn without_key(text: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let close = frontmatter::locate(text).map(|b| b.close_line).unwrap_or(0);
    let mut in_span = false;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches('\n').trim_end_matches('\r');
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
        out.push(raw.to_string());
    }
    out
}

/// Sets and deletes a key in every note of `copy` through the vault (which bumps the
/// timestamp), checking that nothing but those two keys' lines changes a byte, and that the
/// lines it writes take the note's line ending.
pub fn edit_every_note_through_the_vault(copy: &TempVault) -> Tally {
    let vault = copy.open();
    let mut tally = Tally::default();
    for rel in vault.all_files().into_iter().filter(|p| p.ends_with(".md")) {
        let original = copy.read(&rel);
        if frontmatter::parse_strict(&original).is_err() {
            tally.broken_yaml += 1;
        }
        match vault.set_frontmatter(&rel, PROBE, Some(&json!("probe value")), None) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::NoFrontmatter, "{rel}: {}", e.message());
                assert_eq!(copy.read(&rel), original);
                tally.no_block += 1;
                continue;
            }
        }
        let after = copy.read(&rel);
        let eol = text::Style::of(original.as_bytes()).eol();
        assert!(after.contains(&format!("\n{PROBE}: probe value{eol}")), "{rel}");
        let expected = without_key(&original, "timestamp").concat();
        let without_probe = without_key(&after, PROBE).concat();
        assert_eq!(without_key(&without_probe, "timestamp").concat(), expected, "{rel}");

        vault.set_frontmatter(&rel, PROBE, None, None).unwrap();
        assert_eq!(without_key(&copy.read(&rel), "timestamp").concat(), expected, "{rel}");
        tally.edited += 1;
    }
    tally
}

/// The surgery functions on one note's text: setting a key moves no other line, deleting it
/// again gives the text back byte for byte, and a timestamp bump touches only the timestamp.
/// False when the note has no block (nothing to check).
pub fn round_trips(label: &str, original: &str) -> bool {
    if frontmatter::locate(original).is_none() {
        return false;
    }
    let with = frontmatter::set(original, PROBE, &json!("x")).unwrap();
    assert_eq!(without_key(&with, PROBE), without_key(original, PROBE), "{label}");
    let back = frontmatter::delete(&with, PROBE).unwrap();
    assert_eq!(back, original, "{label}");
    let bumped = frontmatter::bump_timestamp(original, "2026-12-02T10:00:00Z").unwrap();
    assert_eq!(without_key(&bumped, "timestamp"), without_key(original, "timestamp"), "{label}");
    true
}

/// [`round_trips`] over every note under `root`, as stored.
pub fn round_trip_every_note(root: &Path) -> Tally {
    let mut tally = Tally::default();
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() || entry.path().extension().is_none_or(|e| e != "md") {
            continue;
        }
        let original = std::fs::read_to_string(entry.path()).unwrap();
        if !round_trips(&entry.path().display().to_string(), &original) {
            tally.no_block += 1;
            continue;
        }
        if frontmatter::parse_strict(&original).is_err() {
            tally.broken_yaml += 1;
        }
        tally.edited += 1;
    }
    tally
}

// ---------------------------------------------------------------------------------------------
// The committed fixture

/// What each fixture note's frontmatter is, as the vault reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    NoBlock,
    Parses,
    DoesNotParse,
}

/// Every note of the fixture with its shape; a note added to the folder must be listed here.
const SHAPES: &[(&str, Shape)] = &[
    ("anchors.md", Shape::Parses),
    ("blank-block.md", Shape::Parses),
    ("block-only.md", Shape::Parses),
    ("block-scalars.md", Shape::Parses),
    ("bom-crlf.md", Shape::Parses),
    ("bom.md", Shape::Parses),
    ("comments.md", Shape::Parses),
    ("crlf.md", Shape::Parses),
    ("duplicate-keys.md", Shape::DoesNotParse),
    ("empty.md", Shape::Parses),
    ("fence-whitespace.md", Shape::Parses),
    ("flow-lists.md", Shape::Parses),
    ("invalid-yaml-colon.md", Shape::DoesNotParse),
    ("invalid-yaml-unclosed.md", Shape::DoesNotParse),
    ("nested-maps.md", Shape::Parses),
    ("rule-not-fence.md", Shape::NoBlock),
    ("similar-keys.md", Shape::Parses),
    ("tabs.md", Shape::DoesNotParse),
    ("template-placeholders.md", Shape::DoesNotParse),
    ("unclosed.md", Shape::NoBlock),
];

fn shapes_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/frontmatter-shapes")
}

fn shape_of(normalised: &str) -> Shape {
    match frontmatter::parse_strict(normalised) {
        Ok(None) => Shape::NoBlock,
        Ok(Some(_)) => Shape::Parses,
        Err(_) => Shape::DoesNotParse,
    }
}

/// The tally a pass over the whole fixture must give.
fn expected_tally() -> Tally {
    let count = |shape: Shape| SHAPES.iter().filter(|(_, s)| *s == shape).count();
    Tally {
        edited: SHAPES.len() - count(Shape::NoBlock),
        no_block: count(Shape::NoBlock),
        broken_yaml: count(Shape::DoesNotParse),
    }
}

#[test]
fn every_fixture_note_is_listed_with_the_shape_it_has() {
    let mut on_disk: Vec<String> = std::fs::read_dir(shapes_root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let listed: Vec<&str> = SHAPES.iter().map(|(name, _)| *name).collect();
    assert_eq!(on_disk, listed, "list each fixture note in SHAPES, in name order");
    for (name, want) in SHAPES {
        let raw = std::fs::read_to_string(shapes_root().join(name)).unwrap();
        assert_eq!(shape_of(&text::normalize(&raw)), *want, "{name}");
    }
}

#[test]
fn the_fixture_keeps_its_crlf_and_bom_bytes() {
    // .gitattributes marks the folder `-text`; without it a checkout could rewrite these.
    let bytes = |name: &str| std::fs::read(shapes_root().join(name)).unwrap();
    let crlf = |b: &[u8]| b.windows(2).filter(|w| w == b"\r\n").count();
    let lf = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    const BOM: &[u8] = b"\xef\xbb\xbf";
    for name in ["crlf.md", "bom-crlf.md"] {
        let b = bytes(name);
        assert!(crlf(&b) > 5 && crlf(&b) == lf(&b), "{name} lost its CRLF line endings");
    }
    assert!(bytes("bom.md").starts_with(BOM), "bom.md lost its BOM");
    assert!(bytes("bom-crlf.md").starts_with(BOM), "bom-crlf.md lost its BOM");
    assert!(bytes("tabs.md").contains(&b'\t'), "tabs.md lost its tabs");
}

#[test]
fn frontmatter_edits_through_the_vault_touch_only_their_own_lines_in_every_shape() {
    let copy = TempVault::copy_of(&shapes_root());
    assert_eq!(edit_every_note_through_the_vault(&copy), expected_tally());
}

#[test]
fn set_then_delete_round_trips_every_shape_as_stored() {
    // The surgery functions work on the stored bytes: a BOM and CRLF come back unchanged.
    assert_eq!(round_trip_every_note(&shapes_root()), expected_tally());
}
