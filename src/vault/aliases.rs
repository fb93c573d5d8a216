//! A note's other names: Obsidian's `aliases:` frontmatter (and its older `alias:`), read once
//! into one table that every resolver of a link or a name asks.
//!
//! [`of`] reads one note's aliases in every form Obsidian writes them (a block list, a flow
//! list `[A, B]`, or a single string). [`Aliases`] is the vault's table, folded the way link
//! targets are (case and Unicode normalisation ignored), built from texts a caller already
//! holds ([`Aliases::from_notes`]) or from the notes' frontmatter on disk ([`Aliases::read`],
//! which reads only each note's head when its block closes there). The link model
//! (`links::PathSet`) carries the table, so `links::resolve` and everything built on it (link
//! checks, backlinks, the web page, moves, bare names) resolve aliases the same way: after
//! every path and file name, so a real file always wins, and a shared alias is ambiguous as a
//! shared file name is. Nothing here writes.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::Vault;
use super::frontmatter;
use super::links::{PathSet, fold, shortest_first};
use super::path::Suffixes;

/// How much of a note is read first for its frontmatter; the rest only when its block does
/// not close within it.
const HEAD_BYTES: usize = 8 * 1024;

/// A note's aliases, as written (trimmed, empties dropped): the frontmatter `aliases`, else
/// `alias`, as a list (block or flow) or a single string. Numbers count as their text
/// (`aliases: [2024]`), as YAML reads them; nested values do not.
pub(crate) fn of(text: &str) -> Vec<String> {
    // Most notes name no alias: skip their YAML (the key is written out in the block).
    if !frontmatter::split(text).0.contains("alias") {
        return Vec::new();
    }
    let meta = frontmatter::parse(text);
    let value = meta.get("aliases").or_else(|| meta.get("alias"));
    let one = |v: &Value| match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let all: Vec<String> = match value {
        Some(Value::Array(items)) => items.iter().filter_map(one).collect(),
        Some(other) => one(other).into_iter().collect(),
        None => Vec::new(),
    };
    all.into_iter().filter(|a| !a.is_empty()).collect()
}

/// The vault's aliases: folded alias -> the notes that list it, shortest path first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Aliases {
    by_alias: HashMap<String, Vec<String>>,
}

impl Aliases {
    /// The table of these notes (vault path, whole text).
    pub(crate) fn from_notes<'a>(notes: impl IntoIterator<Item = (&'a str, &'a str)>) -> Aliases {
        let mut table = Aliases::default();
        for (path, text) in notes {
            for alias in of(text) {
                table.add(&alias, path);
            }
        }
        table.sorted()
    }

    /// The table of the notes among `files` (vault paths under `root`, as the vault walks
    /// them), each read only as far as its frontmatter. A note that cannot be read has none.
    pub(crate) fn read(root: &Path, files: &[String]) -> Aliases {
        let mut table = Aliases::default();
        for path in files.iter().filter(|f| Suffixes::is_note(f)) {
            let Some(head) = frontmatter_of(&root.join(path)) else { continue };
            for alias in of(&head) {
                table.add(&alias, path);
            }
        }
        table.sorted()
    }

    /// The notes whose aliases include `name` (ignoring case), shortest path first.
    pub(crate) fn holders(&self, name: &str) -> &[String] {
        self.by_alias.get(&fold(name.trim())).map_or(&[], Vec::as_slice)
    }

    /// The table after note `from` moved to `to`: its aliases go with it.
    pub(crate) fn moved(&self, from: &str, to: &str) -> Aliases {
        let mut by_alias = self.by_alias.clone();
        for paths in by_alias.values_mut() {
            for p in paths.iter_mut().filter(|p| *p == from) {
                *p = to.to_string();
            }
        }
        Aliases { by_alias }.sorted()
    }

    fn add(&mut self, alias: &str, path: &str) {
        let paths = self.by_alias.entry(fold(alias)).or_default();
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }

    fn sorted(mut self) -> Aliases {
        for paths in self.by_alias.values_mut() {
            paths.sort_by(|a, b| shortest_first(a, b));
        }
        self
    }
}

/// The vault's link model: its files (as `Vault::all_files` lists them, under `root`) and
/// the aliases of its notes. What every caller that resolves links over the whole vault
/// builds, so none of them forgets the aliases.
pub(crate) fn path_set(root: &Path, files: &[String]) -> PathSet {
    PathSet::new(files.iter().cloned()).with_aliases(Aliases::read(root, files))
}

impl Vault {
    /// The vault's link model now: its files and its notes' aliases ([`path_set`]).
    pub(crate) fn link_paths(&self) -> PathSet {
        path_set(&self.root, &self.all_files())
    }
}

/// The start of the note at `abs` holding its whole frontmatter block (the whole note when
/// the block runs past [`HEAD_BYTES`]), or `None` when it has no block or cannot be read.
/// Read lossily, as the checks read notes.
fn frontmatter_of(abs: &Path) -> Option<String> {
    let mut file = std::fs::File::open(abs).ok()?;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    (&mut file).take(HEAD_BYTES as u64).read_to_end(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head);
    let first = text.trim_start_matches('\u{feff}').lines().next().unwrap_or("");
    if !crate::markdown::is_frontmatter_fence(first) {
        return None;
    }
    if frontmatter::locate(&text).is_some() || head.len() < HEAD_BYTES {
        return Some(text.into_owned());
    }
    // The block runs past the head (a long list of aliases or tags): read the rest.
    file.read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_read_in_every_form_obsidian_writes() {
        let table: &[(&str, &[&str])] = &[
            ("---\naliases:\n  - Boiler\n  - Furnace\n---\n", &["Boiler", "Furnace"]),
            ("---\naliases:\n- Boiler\n---\n", &["Boiler"]),
            ("---\naliases: [Boiler, \"Hot water\"]\n---\n", &["Boiler", "Hot water"]),
            ("---\naliases: Boiler\n---\n", &["Boiler"]),
            ("---\nalias: Boiler\n---\n", &["Boiler"]),
            ("---\naliases: [Boiler]\nalias: Ignored\n---\n", &["Boiler"]),
            ("---\naliases: [2024, '  Spaced  ']\n---\n", &["2024", "Spaced"]),
            // obsidian-hub's template leaves an empty item; a nested value is no name.
            ("---\naliases:\n- \ntags:\n- x\n---\n", &[]),
            ("---\naliases: [[a, b], c]\n---\n", &["c"]),
            ("---\naliases:\n---\n", &[]),
            ("aliases: [Boiler]\n", &[]),
            ("---\naliases: [unclosed\n---\n", &[]),
            ("\u{feff}---\naliases: [Boiler]\n---\n", &["Boiler"]),
        ];
        for (text, want) in table {
            assert_eq!(of(text), *want, "{text:?}");
        }
    }

    #[test]
    fn the_table_folds_case_and_lists_shared_aliases_shortest_path_first() {
        let table = Aliases::from_notes([
            ("Deep/Folder/One.md", "---\naliases: [Shared, Ünïcode]\n---\n"),
            ("Two.md", "---\naliases: [shared]\n---\n"),
        ]);
        assert_eq!(table.holders("SHARED"), ["Two.md", "Deep/Folder/One.md"]);
        assert_eq!(table.holders(" ünïcode "), ["Deep/Folder/One.md"]);
        assert!(table.holders("Nothing").is_empty());
        let moved = table.moved("Two.md", "Archive/Old/Notes/Two.md");
        assert_eq!(moved.holders("shared"), ["Deep/Folder/One.md", "Archive/Old/Notes/Two.md"]);
    }

    #[test]
    fn reading_from_disk_takes_the_whole_block_even_past_the_head() {
        let dir = tempfile::tempdir().unwrap();
        let long: String = (0..2000).map(|n| format!("  - tag{n}\n")).collect();
        let files = [
            ("Long.md", format!("---\ntags:\n{long}aliases: [Far down]\n---\nbody\n")),
            ("Short.md", "---\naliases: Near\n---\nbody\n".to_string()),
            ("Plain.md", "no block\n".to_string()),
            ("Image.png", "---\naliases: [Not a note]\n---\n".to_string()),
        ];
        for (path, text) in &files {
            std::fs::write(dir.path().join(path), text).unwrap();
        }
        assert!(files[0].1.len() > HEAD_BYTES);
        let list: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
        let table = Aliases::read(dir.path(), &list);
        assert_eq!(table.holders("far down"), ["Long.md"]);
        assert_eq!(table.holders("near"), ["Short.md"]);
        assert!(table.holders("not a note").is_empty());
        let texts: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let from_texts =
            Aliases::from_notes(texts.iter().filter(|(p, _)| p.ends_with(".md")).copied());
        assert_eq!(table, from_texts, "one table whichever way it is built");
    }
}
