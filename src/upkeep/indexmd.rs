//! The generated root `index.md`: one line per note (title, link, description) under headings
//! that mirror the folder tree.
//!
//! Nothing in that page is a judgement call, so it is derived from the notes rather than kept
//! by hand: the title is the note's `title` key, else its first H1, else its file name; the
//! description is its `description` key, else the first sentence of its first prose line. A
//! fix to a wrong line is a fix to the note, which is why every vault writer refuses `index.md`
//! and only [`IndexMd`] writes it.
//!
//! [`IndexMd`] keeps one entry per note in memory: a full scan builds them, a changed path
//! re-reads one note, and the page is re-rendered only when an entry changed and written only
//! when the rendered body differs from the file's (its own timestamp is not compared), so an
//! edit that changes nothing shown leaves `index.md` alone. It never touches the search index
//! or the embedder, so it keeps working while either is down. A file called `index.md` that
//! mdvault did not generate is never overwritten.
//!
//! What this module does not do: watch files or schedule passes (the engine calls `refresh`
//! from the watcher and `rebuild` from its reconcile timer).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::fmquery;
use crate::error::{Error, ErrorCode, Result};
use crate::markdown::{self, Class};
use crate::vault::census::{self, Counting, FileClass};
use crate::vault::path::Suffixes;
use crate::vault::{Vault, frontmatter, fs, headings, now_timestamp};

/// The generated file, at the vault root.
pub(crate) const INDEX_MD: &str = census::ROOT_INDEX;

/// The frontmatter key and value that mark an `index.md` as ours.
const MARKER_KEY: &str = "generator";
const MARKER: &str = "mdvault";

/// The page's first line; with an `okf_version` key it also marks the predecessor's page, so
/// a vault moving from it keeps its index.
const TITLE_LINE: &str = "# Vault Index";

/// A description longer than this is cut at a word boundary.
const DESCRIPTION_MAX: usize = 240;

/// Characters left bare in a link target: letters, digits, `-._~`, `/` and `'`.
const LINK_UNSAFE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/')
    .remove(b'\'');

/// One note's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Vault-relative path.
    pub(crate) path: String,
    /// The title shown.
    pub title: String,
    /// The description shown; empty for none.
    pub description: String,
}

impl Entry {
    /// Reads a note's entry from its text.
    pub fn from_text(path: &str, text: &str) -> Entry {
        let title = fmquery::scalar(text, "title")
            .or_else(|| first_h1(text))
            .unwrap_or_else(|| stem(path).to_string());
        let description = fmquery::scalar(text, "description")
            .or_else(|| first_sentence(text))
            .unwrap_or_default();
        Entry { path: path.to_string(), title, description }
    }
}

fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

fn first_h1(text: &str) -> Option<String> {
    headings::headings(text)
        .into_iter()
        .find(|h| h.depth == 1)
        .map(|h| h.text)
        .filter(|t| !t.is_empty())
}

/// The first sentence of the first prose line after the frontmatter: not blank, not a heading,
/// quote, list item, table row, rule or code. Long sentences are cut at the last space before
/// the limit.
fn first_sentence(text: &str) -> Option<String> {
    for line in markdown::lines(text) {
        if line.class != Class::Text {
            continue;
        }
        let line = line.raw.trim();
        if line.is_empty() || line.starts_with(['#', '>', '-', '*', '|']) {
            continue;
        }
        let sentence = sentence_of(line);
        return Some(cut(sentence)).filter(|s| !s.is_empty());
    }
    None
}

/// Up to and including the first `.`, `!` or `?` that whitespace follows.
fn sentence_of(line: &str) -> &str {
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|(_, n)| n.is_whitespace()) {
            return &line[..i + c.len_utf8()];
        }
    }
    line
}

fn cut(s: &str) -> String {
    if s.chars().count() <= DESCRIPTION_MAX {
        return s.to_string();
    }
    let limit = s.char_indices().nth(DESCRIPTION_MAX).map_or(s.len(), |(i, _)| i);
    let head = &s[..limit];
    let at = head.rfind(' ').filter(|&i| i > 0).unwrap_or(limit);
    format!("{}...", head[..at].trim_end())
}

/// True for a note the page lists: a note the vault's census counts with the `exclude`
/// folders (the series) left out, so never one in a hidden folder, `node_modules` or the root
/// `index.md` itself.
pub(crate) fn listed(path: &str, exclude: &[String]) -> bool {
    lists(path, &Counting::new(&[], exclude))
}

/// [`listed`], with the counting already made.
fn lists(path: &str, counting: &Counting) -> bool {
    census::classify(path, counting) == FileClass::Note
}

/// The page body (everything after the frontmatter) for these entries. `series` are the
/// excluded folders that exist: each gets a note in its parent's section instead of lines.
pub(crate) fn render(entries: &BTreeMap<String, Entry>, series: &[String]) -> String {
    let mut out = format!(
        "{TITLE_LINE}\n\nThis page is generated by mdvault from the vault's folders and each \
         note's `title` and `description`; edits to it are overwritten. To change a line, \
         change that note.\n\n"
    );
    // Folder (as segments) -> its notes; the root is the empty folder.
    let mut folders: BTreeMap<Vec<String>, Vec<&Entry>> = BTreeMap::new();
    for e in entries.values() {
        let segments: Vec<String> = e.path.split('/').map(str::to_string).collect();
        let folder = &segments[..segments.len() - 1];
        for depth in 0..=folder.len() {
            folders.entry(folder[..depth].to_vec()).or_default();
        }
        folders.entry(folder.to_vec()).or_default().push(e);
    }
    let mut notes_by_parent: BTreeMap<Vec<String>, Vec<&str>> = BTreeMap::new();
    for s in series {
        let segments: Vec<String> = s.split('/').map(str::to_string).collect();
        let parent = segments[..segments.len() - 1].to_vec();
        for depth in 0..=parent.len() {
            folders.entry(parent[..depth].to_vec()).or_default();
        }
        notes_by_parent.entry(parent).or_default().push(s);
    }
    let fold = |segs: &[String]| segs.iter().map(|s| s.to_lowercase()).collect::<Vec<_>>();
    let mut order: Vec<(&Vec<String>, &mut Vec<&Entry>)> = folders.iter_mut().collect();
    order.sort_by(|a, b| fold(a.0).cmp(&fold(b.0)).then_with(|| a.0.cmp(b.0)));
    for (folder, notes) in order {
        if let Some(name) = folder.last() {
            let level = (folder.len() + 1).min(6);
            out.push_str(&format!("{} {name}\n\n", "#".repeat(level)));
        }
        let name = folder.last().map(String::as_str);
        notes.sort_by(|a, b| {
            let a_own = name.is_some_and(|n| stem(&a.path) == n);
            let b_own = name.is_some_and(|n| stem(&b.path) == n);
            b_own
                .cmp(&a_own)
                .then_with(|| a.title.to_lowercase().cmp(&b.title.to_lowercase()))
                .then_with(|| a.path.cmp(&b.path))
        });
        for e in notes.iter() {
            out.push_str(&line(e));
        }
        if !notes.is_empty() {
            out.push('\n');
        }
        for s in notes_by_parent.get(folder).into_iter().flatten() {
            out.push_str(&format!(
                "> [!NOTE] {s}\n> This folder holds a generated series, so its notes are not \
                 listed one by one.\n> Browse the folder itself to see them.\n\n"
            ));
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn line(e: &Entry) -> String {
    let title = e.title.replace('[', "\\[").replace(']', "\\]");
    let link = utf8_percent_encode(&e.path, LINK_UNSAFE);
    if e.description.is_empty() {
        format!("- [{title}]({link})\n")
    } else {
        format!("- [{title}]({link}) - {}\n", e.description)
    }
}

/// The whole file: our frontmatter, then the body.
fn document(body: &str, timestamp: &str) -> String {
    format!("---\n{MARKER_KEY}: {MARKER}\ntimestamp: {timestamp}\n---\n\n{body}")
}

/// What a pass did to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The body changed and the file was written.
    Written,
    /// The file already said this.
    Unchanged,
}

/// How the generator stands, for `/readyz`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    /// The last pass did not fail (true before the first pass too).
    pub(crate) ok: bool,
    /// A full scan has completed.
    pub(crate) scanned: bool,
    /// Notes listed.
    pub(crate) entries: usize,
    /// Why the last pass failed.
    pub(crate) error: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    /// `None` until a full scan succeeds; per-path updates wait for one, because applying
    /// them to a partial list would publish a truncated page.
    entries: Option<BTreeMap<String, Entry>>,
    error: Option<String>,
    /// Full scans in progress. They read the notes without holding the lock (a large vault
    /// takes a second), so paths refreshed meanwhile are noted and re-read once the scan lands.
    scanning: usize,
    touched: BTreeSet<String>,
}

/// The generator for one vault.
#[derive(Debug)]
pub(crate) struct IndexMd {
    /// Notes only, the excluded series left out.
    counting: Counting,
    state: Mutex<State>,
}

impl IndexMd {
    /// A generator leaving out the `exclude` folders (root-relative, case-insensitive).
    pub(crate) fn new(exclude: &[String]) -> IndexMd {
        IndexMd { counting: Counting::new(&[], exclude), state: Mutex::new(State::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Scans every note from disk and writes the page if its body changed. The scan runs
    /// without the lock, so status reports and per-note refreshes never wait for it.
    pub(crate) fn rebuild(&self, vault: &Vault) -> Result<Outcome> {
        self.lock().scanning += 1;
        let scanned = self.scan(vault);
        let mut state = self.lock();
        state.scanning -= 1;
        let touched: Vec<String> = if state.scanning == 0 {
            std::mem::take(&mut state.touched).into_iter().collect()
        } else {
            state.touched.iter().cloned().collect()
        };
        let result = scanned.and_then(|mut entries| {
            for path in &touched {
                self.apply(vault, &mut entries, path);
            }
            let outcome = self.publish(vault, &entries);
            state.entries = Some(entries);
            outcome
        });
        state.error = result.as_ref().err().map(|e| e.to_string());
        result
    }

    /// Re-reads the notes at `paths` and writes the page if what it shows changed. A folder
    /// path re-reads the notes beneath it (or drops them, when it is gone). Before the first
    /// successful scan this is a full rebuild.
    pub(crate) fn refresh(&self, vault: &Vault, paths: &[String]) -> Result<Outcome> {
        let mut state = self.lock();
        if state.scanning > 0 {
            state.touched.extend(paths.iter().cloned());
        }
        // A page whose last write failed is written again at the next chance.
        let mut changed = state.error.is_some();
        let Some(entries) = state.entries.as_mut() else {
            if state.scanning > 0 {
                return Ok(Outcome::Unchanged);
            }
            drop(state);
            return self.rebuild(vault);
        };
        for path in paths {
            changed |= self.apply(vault, entries, path);
        }
        if !changed {
            return Ok(Outcome::Unchanged);
        }
        let entries = state.entries.take().unwrap_or_default();
        let result = self.publish(vault, &entries);
        state.entries = Some(entries);
        state.error = result.as_ref().err().map(|e| e.to_string());
        result
    }

    /// Brings `entries` in line with `path` on disk; true when what the page shows may change.
    fn apply(&self, vault: &Vault, entries: &mut BTreeMap<String, Entry>, path: &str) -> bool {
        if path.eq_ignore_ascii_case(INDEX_MD) {
            // Someone edited the page itself: compare it with what it should say.
            return true;
        }
        let series = self.counting.excluded().iter().any(|d| d.eq_ignore_ascii_case(path));
        if Suffixes::is_note(path) && !vault.root().join(path).is_dir() {
            let now = self.read_entry(vault, path);
            if now.as_ref() == entries.get(path) {
                return false;
            }
            match now {
                Some(e) => entries.insert(path.to_string(), e),
                None => entries.remove(path),
            };
            return true;
        }
        // A folder (or a file that is not a note): drop what was listed beneath it, then
        // re-read what is there now. A removed or renamed folder's notes send no events.
        let prefix = format!("{path}/");
        let before: Vec<String> = entries
            .range(prefix.clone()..)
            .map(|(k, _)| k.clone())
            .take_while(|k| k.starts_with(&prefix))
            .collect();
        let mut changed = series;
        let abs = vault.root().join(path);
        let now = if abs.is_dir() {
            // Best effort: the next full pass reports what cannot be read.
            self.read_tree(vault, &abs, false).unwrap_or_default()
        } else {
            BTreeMap::new()
        };
        for key in before {
            if !now.contains_key(&key) {
                entries.remove(&key);
                changed = true;
            }
        }
        for (key, e) in now {
            if entries.get(&key) != Some(&e) {
                entries.insert(key, e);
                changed = true;
            }
        }
        changed
    }

    /// Whether the generator is healthy and how many notes it lists.
    pub(crate) fn status(&self) -> Status {
        let state = self.lock();
        Status {
            ok: state.error.is_none(),
            scanned: state.entries.is_some(),
            entries: state.entries.as_ref().map_or(0, BTreeMap::len),
            error: state.error.clone(),
        }
    }

    /// Every listed note. Any error while walking fails the scan: a page missing a folder's
    /// notes would be published as if they were gone (stale beats truncated).
    fn scan(&self, vault: &Vault) -> Result<BTreeMap<String, Entry>> {
        let root = vault.root();
        let failed = |e: &dyn std::fmt::Display| {
            Error::new(
                ErrorCode::InternalError,
                format!("the vault could not be read ({e}); index.md was left as it is"),
            )
        };
        if !root.is_dir() {
            return Err(failed(&"the vault folder is missing"));
        }
        self.read_tree(vault, root, true).map_err(|e| failed(&e))
    }

    /// The entries of the listed notes under `dir` (hidden folders and `node_modules` pruned).
    /// `strict` stops at the first unreadable folder; otherwise such folders are skipped.
    fn read_tree(
        &self,
        vault: &Vault,
        dir: &std::path::Path,
        strict: bool,
    ) -> std::result::Result<BTreeMap<String, Entry>, walkdir::Error> {
        let walker = walkdir::WalkDir::new(dir)
            .follow_links(false)
            .min_depth(1)
            .into_iter()
            .filter_entry(|e| !census::barren(&e.file_name().to_string_lossy()));
        let mut entries = BTreeMap::new();
        for item in walker {
            let item = match item {
                Ok(item) => item,
                Err(e) if strict => return Err(e),
                Err(_) => continue,
            };
            if !item.file_type().is_file() {
                continue;
            }
            let Ok(rel) = item.path().strip_prefix(vault.root()) else { continue };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if let Some(e) = self.read_entry(vault, &rel) {
                entries.insert(rel, e);
            }
        }
        Ok(entries)
    }

    /// The entry for `path`, or `None` when it is not a listed note (or no longer exists).
    /// A note that cannot be read still gets a line, titled by its file name: leaving it out
    /// would drop it from the page over a transient error.
    fn read_entry(&self, vault: &Vault, path: &str) -> Option<Entry> {
        if !lists(path, &self.counting) {
            return None;
        }
        let abs = vault.root().join(path);
        let meta = std::fs::symlink_metadata(&abs).ok()?;
        if !meta.is_file() {
            return None;
        }
        match fs::read(&abs) {
            Ok(bytes) => Some(Entry::from_text(path, &String::from_utf8_lossy(&bytes))),
            Err(e) => {
                tracing::warn!("index.md: cannot read {path}: {e}");
                Some(Entry {
                    path: path.to_string(),
                    title: stem(path).into(),
                    description: String::new(),
                })
            }
        }
    }

    /// The excluded folders that exist, as written in the configuration.
    fn series(&self, vault: &Vault) -> Vec<String> {
        let mut out: BTreeSet<String> = BTreeSet::new();
        for d in self.counting.excluded() {
            if !d.is_empty() && vault.root().join(d).is_dir() {
                out.insert(d.clone());
            }
        }
        out.into_iter().collect()
    }

    fn publish(&self, vault: &Vault, entries: &BTreeMap<String, Entry>) -> Result<Outcome> {
        let body = render(entries, &self.series(vault));
        let abs = vault.root().join(INDEX_MD);
        match std::fs::symlink_metadata(&abs) {
            Ok(meta) if !meta.is_file() => {
                return Err(Error::new(
                    ErrorCode::InvalidPath,
                    "the vault's index.md is not a regular file, so it was not generated; \
                     remove it, or set index.index_md: false",
                ));
            }
            Ok(_) => {
                let current = fs::read(&abs).map_err(|e| {
                    Error::new(ErrorCode::InternalError, format!("cannot read index.md: {e}"))
                })?;
                let current = String::from_utf8_lossy(&current);
                if !generated(&current) {
                    return Err(Error::new(
                        ErrorCode::AlreadyExists,
                        "the vault has an index.md that mdvault did not generate, so it was \
                         left alone; rename it to keep it, or set index.index_md: false",
                    ));
                }
                if frontmatter::split(&current).1 == body {
                    return Ok(Outcome::Unchanged);
                }
                if entries.is_empty() && current.contains("\n- [") {
                    return Err(Error::new(
                        ErrorCode::InternalError,
                        "the vault shows no notes at all while index.md lists some (an unmounted \
                         folder?), so index.md was left as it is; if the vault was emptied on \
                         purpose, delete index.md",
                    ));
                }
            }
            Err(_) => {}
        }
        fs::write_atomic(&abs, document(&body, &now_timestamp()).as_bytes()).map_err(|e| {
            Error::new(ErrorCode::InternalError, format!("cannot write index.md: {e}"))
        })?;
        tracing::info!("index.md: wrote {} entries", entries.len());
        Ok(Outcome::Written)
    }
}

/// True for an `index.md` this generator wrote (its `generator: mdvault` marker), or its
/// predecessor did (an `okf_version` key and the same title line).
pub(crate) fn generated(text: &str) -> bool {
    fmquery::values(text, MARKER_KEY).is_some_and(|v| v.iter().any(|s| s == MARKER))
        || (fmquery::values(text, "okf_version").is_some()
            && frontmatter::split(text)
                .1
                .lines()
                .next()
                .is_some_and(|l| l.trim_end() == TITLE_LINE))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, text: &str) -> Entry {
        Entry::from_text(path, text)
    }

    #[test]
    fn titles_fall_back_from_frontmatter_to_h1_to_file_name() {
        assert_eq!(entry("a/B.md", "---\ntitle: \"Quoted\"\n---\n# H\n").title, "Quoted");
        assert_eq!(entry("a/B.md", "---\ntitle:\n---\n# The H1\n").title, "The H1");
        assert_eq!(entry("a/B.md", "---\ntags: [x]\n---\nplain\n").title, "B");
        assert_eq!(entry("B.md", "## Only H2\n").title, "B");
        // A `#` line inside a code fence is not a heading.
        assert_eq!(entry("B.md", "```\n# code\n```\n").title, "B");
        // A folded title.
        assert_eq!(entry("B.md", "---\ntitle: >-\n  Two\n  lines\n---\n").title, "Two lines");
    }

    #[test]
    fn descriptions_fall_back_to_the_first_sentence_of_the_first_prose_line() {
        let text = "---\ntitle: T\n---\n# T\n\n> quote\n- item\n| a |\n---\n```\ncode line\n```\n\
                    First one. Second one.\n";
        assert_eq!(entry("T.md", text).description, "First one.");
        assert_eq!(entry("T.md", "---\ndescription: Set\n---\nProse.\n").description, "Set");
        assert_eq!(entry("T.md", "Is it? Yes.\n").description, "Is it?");
        assert_eq!(entry("T.md", "v1.2 is out\n").description, "v1.2 is out");
        assert_eq!(entry("T.md", "# Only a heading\n").description, "");
        // 240 falls inside a word; the cut goes back to the space before it.
        let long = format!("{} end.", "abcdefghij ".repeat(30));
        let d = entry("T.md", &long).description;
        assert!(d.ends_with(" abcdefghij...") && d.len() <= DESCRIPTION_MAX + 3, "{d}");
        assert_eq!(d.len(), 21 * 11 - 1 + 3, "{d}");
    }

    #[test]
    fn listing_leaves_out_the_index_hidden_folders_and_series() {
        let ex = vec!["Reports/Daily".to_string()];
        assert!(listed("a.md", &ex));
        assert!(listed("Reports/Weekly/x.md", &ex));
        assert!(!listed("index.md", &ex));
        assert!(listed("sub/index.md", &ex));
        assert!(!listed("reports/daily/x.md", &ex));
        assert!(listed("Reports/Daily Notes/x.md", &ex));
        assert!(!listed(".obsidian/x.md", &ex));
        assert!(!listed("a/node_modules/x.md", &ex));
        assert!(!listed("Files/x.pdf", &ex));
    }

    fn map(list: &[(&str, &str)]) -> BTreeMap<String, Entry> {
        list.iter().map(|(p, t)| (p.to_string(), entry(p, t))).collect()
    }

    #[test]
    fn the_page_mirrors_the_folder_tree() {
        let entries = map(&[
            ("Root.md", "---\ndescription: At the top\n---\n"),
            ("Home/Utilities/Water.md", "# Water\n\nThe water bill.\n"),
            ("Home/Utilities/Utilities.md", "---\ntitle: Zed utilities\n---\n"),
            ("Home/Utilities/electricity.md", ""),
            ("Home/Boiler.md", "Boiler [notes].\n"),
            ("alpha/A b.md", ""),
            ("Deep/1/2/3/4/5/6/N.md", ""),
        ]);
        let body = render(&entries, &["Reports/Daily".to_string()]);
        let expected = "# Vault Index\n\n\
            This page is generated by mdvault from the vault's folders and each note's `title` \
            and `description`; edits to it are overwritten. To change a line, change that \
            note.\n\n\
            - [Root](Root.md) - At the top\n\n\
            ## alpha\n\n- [A b](alpha/A%20b.md)\n\n\
            ## Deep\n\n### 1\n\n#### 2\n\n##### 3\n\n###### 4\n\n###### 5\n\n###### 6\n\n\
            - [N](Deep/1/2/3/4/5/6/N.md)\n\n\
            ## Home\n\n- [Boiler](Home/Boiler.md) - Boiler [notes].\n\n\
            ### Utilities\n\n\
            - [Zed utilities](Home/Utilities/Utilities.md)\n\
            - [electricity](Home/Utilities/electricity.md)\n\
            - [Water](Home/Utilities/Water.md) - The water bill.\n\n\
            ## Reports\n\n\
            > [!NOTE] Reports/Daily\n\
            > This folder holds a generated series, so its notes are not listed one by one.\n\
            > Browse the folder itself to see them.\n";
        assert_eq!(body, expected);
    }

    #[test]
    fn titles_with_brackets_and_paths_with_odd_characters_stay_links() {
        let entries = map(&[("Q&A/it's [1].md", "---\ntitle: A [b] c\n---\n")]);
        let body = render(&entries, &[]);
        assert!(body.contains("- [A \\[b\\] c](Q%26A/it's%20%5B1%5D.md)\n"), "{body}");
    }

    #[test]
    fn an_index_counts_as_generated_by_marker_or_title() {
        assert!(generated(&document("# Vault Index\n", "t")));
        assert!(generated("---\nokf_version: \"0.1\"\n---\n\n# Vault Index\n\nx"));
        assert!(!generated("# Vault Index\n\nMy own, by coincidence.\n"));
        assert!(!generated("# My own index\n"));
        assert!(!generated("---\ntitle: Index\n---\nHand written.\n"));
    }

    fn vault(dir: &std::path::Path) -> Vault {
        let settings = crate::config::VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 0,
            timestamp_key: "timestamp".into(),
        };
        Vault::open("v", dir, &settings).unwrap()
    }

    #[test]
    fn a_second_pass_and_a_body_only_edit_leave_the_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("A")).unwrap();
        std::fs::write(root.join("A/n.md"), "---\ndescription: D\n---\n# N\n\nBody.\n").unwrap();
        let v = vault(root);
        let generator = IndexMd::new(&[]);
        assert_eq!(generator.rebuild(&v).unwrap(), Outcome::Written);
        let first = std::fs::read(root.join("index.md")).unwrap();
        assert!(String::from_utf8_lossy(&first).contains("- [N](A/n.md) - D\n"));
        assert_eq!(generator.rebuild(&v).unwrap(), Outcome::Unchanged);
        // A body edit that changes nothing shown.
        std::fs::write(root.join("A/n.md"), "---\ndescription: D\n---\n# N\n\nOther.\n").unwrap();
        assert_eq!(generator.refresh(&v, &["A/n.md".into()]).unwrap(), Outcome::Unchanged);
        assert_eq!(std::fs::read(root.join("index.md")).unwrap(), first);
        // A description edit does.
        std::fs::write(root.join("A/n.md"), "---\ndescription: E\n---\n# N\n").unwrap();
        assert_eq!(generator.refresh(&v, &["A/n.md".into()]).unwrap(), Outcome::Written);
        let text = std::fs::read_to_string(root.join("index.md")).unwrap();
        assert!(text.contains("- [N](A/n.md) - E\n"), "{text}");
        // A removal and an edit of the page itself.
        std::fs::remove_file(root.join("A/n.md")).unwrap();
        std::fs::write(root.join("B.md"), "").unwrap();
        assert_eq!(
            generator.refresh(&v, &["A/n.md".into(), "B.md".into()]).unwrap(),
            Outcome::Written
        );
        let text = std::fs::read_to_string(root.join("index.md")).unwrap();
        assert!(!text.contains("A/n.md") && text.contains("- [B](B.md)"), "{text}");
        std::fs::write(root.join("index.md"), document("# Vault Index\n\nhand edit\n", "t"))
            .unwrap();
        assert_eq!(generator.refresh(&v, &["index.md".into()]).unwrap(), Outcome::Written);
        assert!(std::fs::read_to_string(root.join("index.md")).unwrap().contains("- [B](B.md)"));
        assert_eq!(generator.status(), Status { ok: true, scanned: true, entries: 1, error: None });
    }

    #[test]
    fn folders_renamed_or_removed_take_their_notes_along() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("Old/Deep")).unwrap();
        std::fs::write(root.join("Old/a.md"), "").unwrap();
        std::fs::write(root.join("Old/Deep/b.md"), "").unwrap();
        std::fs::write(root.join("Keep.md"), "").unwrap();
        let v = vault(root);
        let generator = IndexMd::new(&[]);
        generator.rebuild(&v).unwrap();
        std::fs::rename(root.join("Old"), root.join("New")).unwrap();
        // The watcher reports the two folder paths (and the new files, which are optional).
        let paths = ["Old".to_string(), "New".to_string()];
        assert_eq!(generator.refresh(&v, &paths).unwrap(), Outcome::Written);
        let text = std::fs::read_to_string(root.join("index.md")).unwrap();
        assert!(text.contains("(New/a.md)") && text.contains("(New/Deep/b.md)"), "{text}");
        assert!(!text.contains("Old/"), "{text}");
        std::fs::remove_dir_all(root.join("New")).unwrap();
        assert_eq!(generator.refresh(&v, &["New".into()]).unwrap(), Outcome::Written);
        assert_eq!(generator.status().entries, 1);
        // A document or attachment changing is no reason to write.
        std::fs::write(root.join("photo.png"), "x").unwrap();
        assert_eq!(generator.refresh(&v, &["photo.png".into()]).unwrap(), Outcome::Unchanged);
    }

    #[test]
    fn an_emptied_vault_does_not_empty_a_listing_page() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("n.md"), "").unwrap();
        let v = vault(root);
        let generator = IndexMd::new(&[]);
        generator.rebuild(&v).unwrap();
        let before = std::fs::read(root.join("index.md")).unwrap();
        std::fs::remove_file(root.join("n.md")).unwrap();
        let err = generator.rebuild(&v).unwrap_err();
        assert!(err.message().contains("unmounted"), "{err}");
        assert_eq!(std::fs::read(root.join("index.md")).unwrap(), before);
        assert!(!generator.status().ok);
    }

    #[test]
    fn a_hand_written_index_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("index.md"), "# Mine\n").unwrap();
        std::fs::write(root.join("n.md"), "").unwrap();
        let v = vault(root);
        let generator = IndexMd::new(&[]);
        let err = generator.rebuild(&v).unwrap_err();
        assert_eq!(err.code(), ErrorCode::AlreadyExists);
        assert_eq!(std::fs::read_to_string(root.join("index.md")).unwrap(), "# Mine\n");
        let status = generator.status();
        assert!(!status.ok && status.error.unwrap().contains("did not generate"));
    }

    #[test]
    fn series_folders_get_one_note_in_their_parent_only_when_they_exist() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("Reports/Daily")).unwrap();
        std::fs::write(root.join("Reports/Daily/2026-01-01.md"), "").unwrap();
        std::fs::write(root.join("Reports/Summary.md"), "").unwrap();
        let v = vault(root);
        let generator = IndexMd::new(&["Reports/Daily".into(), "Reports/Weekly".into()]);
        generator.rebuild(&v).unwrap();
        let text = std::fs::read_to_string(root.join("index.md")).unwrap();
        assert!(text.contains("> [!NOTE] Reports/Daily\n"), "{text}");
        assert!(!text.contains("Weekly") && !text.contains("2026-01-01"), "{text}");
        // A series folder appearing is a folder event.
        std::fs::create_dir_all(root.join("Reports/Weekly")).unwrap();
        assert_eq!(generator.refresh(&v, &["Reports/Weekly".into()]).unwrap(), Outcome::Written);
        let text = std::fs::read_to_string(root.join("index.md")).unwrap();
        assert!(text.contains("> [!NOTE] Reports/Weekly\n"), "{text}");
    }
}
