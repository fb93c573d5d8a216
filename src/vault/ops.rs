//! The vault operations: read, map, list, and every write.
//!
//! Each operation gates its paths, takes the vault's write lock for the whole
//! read-modify-write (a move plans its link rewrites before it and confirms them under it:
//! `move_plan`), checks the caller's expected content hash (if any), computes the new text
//! with the pure functions of the sibling modules, bumps the frontmatter `timestamp`, and
//! writes atomically. A refusal happens before anything is written.
//!
//! The confirmations are plain sentences shared by every surface; the structured fields beside
//! them let REST and the CLI answer in JSON without parsing prose.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::edit::{self, Operation};
use super::find::Named;
use super::headings::{self, Scope};
use super::journal::{self, Record, Step};
use super::move_plan::Plan;
use super::path::{self, Access, Reading, Rooting, Suffixes, Target, gate};
use super::{Vault, diff, find, frontmatter, fs, text};
use crate::docs::{Extraction, Verdict};
use crate::error::{Error, ErrorCode, Result};

/// Appended to a confirmation when the note has no frontmatter to carry a timestamp.
/// Obsidian's vault-local trash folder (its "move to .trash" setting): hidden, so the gate
/// never lets a caller write there and the index never reads it.
pub const TRASH_DIR: &str = ".trash";

/// How many same-named files the trash keeps apart before a delete gives up.
const MAX_TRASH_TWINS: u32 = 10_000;

const NO_BUMP: &str = " (no frontmatter, so timestamp not bumped)";

/// How far a lookup of an existing file may look beyond the place the caller's path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Other spellings of the same place only (percent-decoded, `.md` added, another case).
    Spelling,
    /// Those, then a note name or partial path anywhere in the vault, as Obsidian resolves a
    /// wikilink, and a name in a note's `aliases`.
    Name,
}

/// What a forgiving lookup found.
enum Lookup {
    /// The existing file the caller means.
    Found(Target),
    /// Nothing; the vault path the caller's path was read as (for the nearest paths).
    Missing(String),
}

/// The gate's refusals of a path that may be a note's name (`Deep`, `Sub` beside a folder
/// `Sub`), after which a forgiving lookup looks on; every other refusal stands.
const NAME_SHAPED: [ErrorCode; 2] = [ErrorCode::UnsupportedSuffix, ErrorCode::IsDirectory];

/// How many paths an `ambiguous_path` refusal lists before it only counts.
const AMBIGUOUS_SHOWN: usize = 10;

/// The refusal of a name that several files answer to: Obsidian would pick one, but an edit
/// must not guess which.
fn ambiguous(raw: &str, paths: &[String]) -> Error {
    let shown: Vec<&str> = paths.iter().take(AMBIGUOUS_SHOWN).map(String::as_str).collect();
    let more = paths.len().saturating_sub(AMBIGUOUS_SHOWN);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    Error::new(
        ErrorCode::AmbiguousPath,
        format!(
            "'{}' could mean {} files: {}{more}; pass one of these paths instead",
            raw.trim(),
            paths.len(),
            shown.join(", ")
        ),
    )
}

/// A note as read: whole, or one section of it.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteRead {
    /// The vault it came from.
    pub vault: String,
    /// Vault-relative path.
    pub path: String,
    /// The file's text, or the requested section's.
    pub content: String,
    /// The resolved `A::B` path when a section was asked for.
    pub section: Option<String>,
    /// The whole note's frontmatter (lenient: `{}` when absent or malformed).
    pub frontmatter: Map<String, Value>,
    /// The content without the frontmatter block (for a section, the section itself).
    pub body: String,
    /// sha256 of the file's bytes; pass it back as the expected hash of a later write.
    pub etag: String,
    /// For a filed document, its extraction verdict (the content is the extracted Markdown).
    pub extraction: Option<Verdict>,
    /// How the caller's path came to name this file, when the caller did not write its path.
    pub reading: Reading,
}

/// Where read and map get a filed document's text: the index's cache in production, a plain
/// extractor in tests. The vault itself never parses documents.
pub trait DocumentText {
    /// The sha256 of `bytes` and their extraction; `rel` is the document's path.
    fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, Extraction)>;
}

/// One heading of a note's map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadingEntry {
    /// 1 to 6.
    pub depth: u8,
    /// The heading text as written.
    pub text: String,
    /// 1-based line in the file.
    pub line: usize,
    /// The full `A::B::C` path, usable as a patch target.
    pub path: String,
}

/// A note's frontmatter and heading outline, without its content.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteMap {
    /// The vault it came from.
    pub vault: String,
    /// Vault-relative path.
    pub path: String,
    /// Parsed frontmatter (lenient).
    pub frontmatter: Map<String, Value>,
    /// Headings in document order (for a document, those of its extracted Markdown).
    pub headings: Vec<HeadingEntry>,
    /// sha256 of the file's bytes.
    pub etag: String,
    /// For a filed document, its extraction verdict.
    pub extraction: Option<Verdict>,
    /// How the caller's path came to name this file, when the caller did not write its path.
    pub reading: Reading,
}

impl NoteMap {
    /// The map as Markdown a model can read and paste targets from.
    pub fn render(&self) -> String {
        if let Some(v) = &self.extraction {
            return self.render_document(v);
        }
        let mut out = format!("# {}\n\n{}## Frontmatter\n", self.path, self.reading_line());
        if self.frontmatter.is_empty() {
            out.push_str("- (none)\n");
        }
        for (k, v) in &self.frontmatter {
            out.push_str(&format!("- {k}: {v}\n"));
        }
        out.push_str(
            "\n## Headings\n\nUse a path below as a patch target (`A::B`, or `A > B`). A unique \
             last segment is\nenough; when it is not unique, prepend ancestors with `::`, or \
             add `@line`.\n\n",
        );
        if self.headings.is_empty() {
            out.push_str("- (none)\n");
        }
        // Counted once, not per heading: 50,000 headings would otherwise cost their number
        // squared.
        let mut twins: HashMap<&str, usize> = HashMap::new();
        for h in &self.headings {
            *twins.entry(h.path.as_str()).or_default() += 1;
        }
        for h in &self.headings {
            // Two headings with one path cannot be told apart by name: say so, and give the
            // `@line` target that reaches each.
            if twins[h.path.as_str()] > 1 {
                out.push_str(&format!(
                    "- {} (line {}; duplicate path, target `{}@{}`)\n",
                    h.path, h.line, h.path, h.line
                ));
            } else {
                out.push_str(&format!("- {} (line {})\n", h.path, h.line));
            }
        }
        out
    }

    /// How the path was read, as a paragraph under the title; empty when as written.
    fn reading_line(&self) -> String {
        self.reading.sentence(&self.path).map(|s| format!("({s})\n\n")).unwrap_or_default()
    }

    fn render_document(&self, v: &Verdict) -> String {
        let mut out = format!(
            "# {}\n\n{}A filed document: it can be read (as the Markdown extracted from it), \
             moved, deleted and searched, but not edited.\n\n## Extraction\n\n- status: {}\n\
             - pages: {}\n- text layer: {}\n- extracted characters: {}\n",
            self.path,
            self.reading_line(),
            v.status.as_str(),
            v.pages,
            if v.has_text_layer { "yes" } else { "no" },
            v.extracted_chars
        );
        if !v.detail.is_empty() {
            out.push_str(&format!("- detail: {}\n", v.detail));
        }
        out.push_str("\n## Headings (of the extracted text)\n\n");
        if self.headings.is_empty() {
            out.push_str("- (none)\n");
        }
        for h in &self.headings {
            out.push_str(&format!("- {}\n", h.path));
        }
        out
    }
}

/// What a listing entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A folder.
    Folder,
    /// A `.md` note.
    Note,
    /// An allowlisted document.
    Document,
    /// Any other file (shown, but no operation takes it).
    Other,
}

/// One entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file or folder name.
    pub name: String,
    /// Vault-relative path.
    pub path: String,
    /// What it is.
    pub kind: EntryKind,
    /// Size in bytes (files only).
    pub size: Option<u64>,
    /// Modification time, UTC `YYYY-MM-DDTHH:MM:SSZ` (files only).
    pub modified: Option<String>,
}

/// A folder's contents: folders first, then files, each by case-folded name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The vault it came from.
    pub vault: String,
    /// Vault-relative folder path; empty for the root.
    pub path: String,
    /// The entries, hidden ones and symlinks left out.
    pub entries: Vec<Entry>,
}

impl Listing {
    /// The listing as prose.
    pub fn render(&self) -> String {
        let shown = if self.path.is_empty() { "/" } else { self.path.as_str() };
        if self.entries.is_empty() {
            return format!("{shown} is empty.\n");
        }
        let n = self.entries.len();
        let mut out = format!("{n} {} in {shown}:\n", if n == 1 { "entry" } else { "entries" });
        for e in &self.entries {
            match e.kind {
                EntryKind::Folder => out.push_str(&format!("  {}/\n", e.name)),
                _ => out.push_str(&format!(
                    "  {}  ({} B, {})\n",
                    e.name,
                    e.size.unwrap_or(0),
                    e.modified.as_deref().unwrap_or("?")
                )),
            }
        }
        out
    }
}

/// The confirmation of a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The vault written to.
    pub vault: String,
    /// The path written (for a move, the destination).
    pub path: String,
    /// One sentence saying what happened.
    pub message: String,
    /// The new content hash of the written file, when one remains.
    pub etag: Option<String>,
    /// Whether the frontmatter `timestamp` was bumped.
    pub timestamp_bumped: bool,
    /// For a move: how many other notes had links repointed (None when not asked to).
    pub links_rewritten: Option<usize>,
    /// For a folder creation: every folder actually created, outermost first.
    pub folders_created: Vec<String>,
    /// How far the index got with this change before the answer went out. The vault never
    /// sets it (it knows nothing of indexing); the front door fills it in after handing the
    /// paths to the index. `None`: no index was told (no owner runs).
    pub indexed: Option<Indexed>,
    /// For an edit of a note: a short unified diff of what it changed (the timestamp bump
    /// included), so the caller need not read the note back.
    pub diff: Option<String>,
    /// For a section replace: the text it replaced.
    pub replaced: Option<String>,
    /// What the edit did that the caller may not have meant (a heading pushed past level 6).
    pub warnings: Vec<edit::Warning>,
}

/// How far a write's re-index got within the bounded wait after the write (the bytes are on
/// disk in every case; this says only what a search finds right now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indexed {
    /// Chunks, lexical entries and vectors are committed: every search mode finds the change.
    Full,
    /// Chunks and lexical entries are committed (a search finds the new words); the vectors
    /// are still being embedded and follow within seconds.
    Lexical,
    /// The re-index is queued behind other index work and was not reached in time; the index
    /// catches up in the background.
    Queued,
    /// The index cannot take the change now (its data directory is full or read-only, say):
    /// the note is written, but search misses the change until the index recovers (`/readyz`
    /// says why; the next pass after that catches up).
    Behind,
}

impl Indexed {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Indexed::Full => "full",
            Indexed::Lexical => "lexical",
            Indexed::Queued => "queued",
            Indexed::Behind => "behind",
        }
    }
}

/// What writing a note did.
struct Written {
    bumped: bool,
    etag: String,
    diff: String,
}

/// A section patch, as every surface spells it.
#[derive(Debug, Clone)]
pub struct PatchRequest<'a> {
    /// The `A::B` heading target.
    pub target: &'a str,
    /// Replace, prepend or append.
    pub operation: Operation,
    /// Which part of the section the operation applies to.
    pub scope: Scope,
    /// The new Markdown.
    pub content: &'a str,
    /// A replace with empty content is refused (`empty_content`) unless this is set.
    pub allow_empty: bool,
    /// A heading target that names no heading is created first (`edit::with_target`).
    pub create_missing: bool,
    /// An append or prepend whose content is already in the target is refused
    /// (`already_exists`), so a retried request does not add it twice.
    pub reject_if_present: bool,
    /// One body block of the section, by position (`edit::patch_within`), instead of the
    /// whole section.
    pub within: Option<i64>,
    /// The content's heading levels are relative to where it lands (`edit::relevel`): `#`
    /// under a content target becomes its direct child. Off, the levels are written as sent.
    pub relative_levels: bool,
    /// Move the target heading's section here instead of editing it (`edit::move_section`):
    /// the new parent heading (`None`: the top level) and the place among its subsections.
    pub move_to: Option<(Option<&'a str>, edit::Slot)>,
}

/// A file's size and modification time, as the indexer compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    /// Vault-relative path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i64,
}

/// Lowercase hex sha256 of some bytes: the etag of a note.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The current time as the frontmatter `timestamp` convention writes it.
pub fn now_timestamp() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Modification time in nanoseconds since the epoch (0 when the filesystem has none).
/// A walked file's vault-relative path with `/` separators. Only Windows separates with `\`;
/// elsewhere a backslash is part of a name, kept so the gate can refuse it by name instead of
/// the file turning into a path that does not exist.
fn rel_string(rel: &std::path::Path) -> String {
    let s = rel.to_string_lossy();
    if cfg!(windows) { s.replace('\\', "/") } else { s.into_owned() }
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

fn rfc3339_seconds(t: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

impl Vault {
    /// The caller's path as the gate reads it: an absolute path inside the vault folder made
    /// relative, one outside it refused (`path::unroot`, the one place that decides), with
    /// how it was read.
    fn unrooted(&self, raw: &str) -> Result<(String, Reading)> {
        let home = super::home_for(raw);
        match path::unroot(&self.roots(home.as_deref()), raw)? {
            Rooting::Relative => Ok((raw.to_string(), Reading::AsWritten)),
            Rooting::Inside(rel) => {
                Ok((rel, Reading::Unrooted { written: raw.trim().to_string() }))
            }
        }
    }

    /// Gates a caller's path for `access`, as [`Vault::unrooted`] reads it.
    pub(super) fn gate(&self, raw: &str, access: Access) -> Result<Target> {
        let (path, reading) = self.unrooted(raw)?;
        let mut target = gate(&self.root, &self.suffixes, &path, access)?;
        target.reading = reading;
        Ok(target)
    }

    /// The vault path a caller's path names, without the gate's other checks: for a caller
    /// that must name what an operation touched (the source of a move, to drop it from the
    /// index).
    pub fn vault_path(&self, raw: &str) -> Result<String> {
        Ok(path::normalize(&self.unrooted(raw)?.0)?.join("/"))
    }

    /// The existing file a caller's path means, forgiving how agents write paths: when the
    /// path is not there as written, its percent-decoded form, the form with `.md` added and
    /// a unique case-insensitive match are tried, and with [`Reach::Name`] a note name or
    /// partial path anywhere in the vault (Obsidian's wikilink resolution, then `aliases`),
    /// each through the gate. The gate's refusal of the path as written stands when none of
    /// them exists, except a missing suffix or a folder, which are what a name looks like:
    /// those refusals name the nearest existing paths.
    fn forgiving(&self, raw: &str, access: Access, reach: Reach) -> Result<Lookup> {
        let (path, reading) = self.unrooted(raw)?;
        let gate = |p: &str| {
            gate(&self.root, &self.suffixes, p, access).map(|mut t| {
                t.reading = reading.clone();
                t
            })
        };
        let gated = gate(&path);
        match &gated {
            Ok(t) if t.abs.exists() => return gated.map(Lookup::Found),
            Ok(_) => {}
            // A missing suffix or a folder is how a note's name looks to the gate: look on.
            Err(e) if NAME_SHAPED.contains(&e.code()) => {}
            Err(_) => return gated.map(Lookup::Found),
        }
        let mut tries = vec![path.clone()];
        tries.extend(find::candidates(&path));
        for (i, cand) in tries.iter().enumerate() {
            let cased = find::case_insensitive(&self.root, cand);
            let forms = [(i > 0).then(|| cand.clone()), cased];
            for form in forms.into_iter().flatten() {
                if let Ok(t) = gate(&form)
                    && t.abs.is_file()
                {
                    return Ok(Lookup::Found(t));
                }
            }
        }
        if reach == Reach::Name {
            let files = self.all_files();
            match find::by_name(&self.root, &files, &path) {
                Named::Nothing => {}
                Named::One(rel, by) => {
                    if let Ok(mut t) = gate(&rel)
                        && t.abs.is_file()
                    {
                        let written = raw.trim().to_string();
                        t.reading = match by {
                            find::By::Name => Reading::ByName { written },
                            find::By::Alias => Reading::ByAlias { written },
                        };
                        return Ok(Lookup::Found(t));
                    }
                }
                Named::Several(paths) => return Err(ambiguous(raw, &paths)),
            }
        }
        match gated {
            Ok(_) => Ok(Lookup::Missing(path)),
            Err(e) => Err(self.with_nearest(e, &path)),
        }
    }

    /// Like [`Vault::forgiving`], but absence is `not_found`, naming the nearest paths.
    fn existing_target(&self, raw: &str, access: Access, reach: Reach) -> Result<Target> {
        match self.forgiving(raw, access, reach)? {
            Lookup::Found(t) => Ok(t),
            Lookup::Missing(path) => Err(self.not_found(raw, &path)),
        }
    }

    /// The vault path of the existing note or document a caller's path means: gated, with the
    /// forgiving readings of [`Vault::forgiving`]; `not_found` names the nearest paths.
    pub fn existing(&self, raw: &str) -> Result<String> {
        Ok(self.existing_target(raw, Access::Read, Reach::Name)?.rel)
    }

    /// `not_found` for a path (`path`, as the caller's `raw` was read), with the nearest
    /// existing paths as suggestions.
    fn not_found(&self, raw: &str, path: &str) -> Error {
        let files = self.scan();
        let near = find::nearest(path, files.iter().map(|f| f.path.as_str()));
        let shown = raw.trim();
        if near.is_empty() {
            return Error::new(
                ErrorCode::NotFound,
                format!("{shown} does not exist; list the folder to see what is there"),
            );
        }
        Error::new(
            ErrorCode::NotFound,
            format!(
                "{shown} does not exist; the nearest existing paths are: {}. Retry with one of \
                 them, or list the folder",
                near.join(", ")
            ),
        )
    }

    /// A refusal of a path that names nothing usable, with the nearest existing paths added
    /// (when there are any), whatever its code: a name that missed deserves the same help as
    /// a path that missed.
    fn with_nearest(&self, e: Error, path: &str) -> Error {
        let files = self.scan();
        let near = find::nearest(path, files.iter().map(|f| f.path.as_str()));
        if near.is_empty() {
            return e;
        }
        Error::new(
            e.code(),
            format!(
                "{}; the nearest existing paths are: {}. Retry with one of them",
                e.message().trim_end_matches('.'),
                near.join(", ")
            ),
        )
    }

    /// [`Vault::note_target`] for a note that must exist, with forgiving resolution: an edit
    /// of an existing note finds it by name like a read does.
    fn existing_note(&self, raw: &str, verb: &str) -> Result<Target> {
        let target = self.existing_target(raw, Access::WriteFile, Reach::Name)?;
        self.refuse_document(target, verb)
    }

    fn refuse_document(&self, target: Target, verb: &str) -> Result<Target> {
        if self.suffixes.is_document(&target.rel) {
            return Err(Error::new(
                ErrorCode::IsDocument,
                format!(
                    "{} is a filed document; documents can be read, moved and deleted, \
                     but not {verb}",
                    target.rel
                ),
            ));
        }
        Ok(target)
    }

    /// Gates a path for a verb that edits notes: a document is refused with `is_document`.
    fn note_target(&self, raw: &str, verb: &str) -> Result<Target> {
        let target = self.gate(raw, Access::WriteFile)?;
        self.refuse_document(target, verb)
    }

    pub(super) fn change(&self, path: &str, message: String) -> Change {
        Change {
            vault: self.name.clone(),
            path: path.to_string(),
            message,
            etag: None,
            timestamp_bumped: false,
            links_rewritten: None,
            folders_created: Vec::new(),
            indexed: None,
            diff: None,
            replaced: None,
            warnings: Vec::new(),
        }
    }

    /// [`Vault::change`] for a target, saying how the caller's path was read when it was not
    /// as written.
    fn change_at(&self, target: &Target, message: String) -> Change {
        self.change(&target.rel, target.reading.told(&target.rel, message))
    }

    pub(super) fn lock(&self) -> super::lock::WriteGuard<'_> {
        self.write_lock.acquire()
    }

    /// Reads a file that must exist, as bytes.
    pub(super) fn load_bytes(&self, target: &Target) -> Result<Vec<u8>> {
        if target.abs.is_dir() {
            return Err(Error::new(
                ErrorCode::IsDirectory,
                format!("{} is a folder; list it, or use the folder operations", target.rel),
            ));
        }
        fs::read(&target.abs).map_err(|e| Error::read_io(&target.rel, &e))
    }

    /// Reads a note that must exist, as text.
    fn load_text(&self, target: &Target) -> Result<String> {
        utf8(target, self.load_bytes(target)?)
    }

    /// Reads the current bytes (None when absent) and checks the caller's expected hash.
    fn current(&self, target: &Target, expected: Option<&str>) -> Result<Option<Vec<u8>>> {
        let bytes = match self.load_bytes(target) {
            Ok(b) => Some(b),
            Err(e) if e.code() == ErrorCode::NotFound => None,
            Err(e) => return Err(e),
        };
        check_expected(&target.rel, bytes.as_deref(), expected)?;
        Ok(bytes)
    }

    /// Bumps the timestamp of `new_text` (already in its final shape: see `text`) when asked
    /// and possible, and writes it. Returns whether it bumped, and the new etag.
    /// `old` is the note's text before the edit (empty for a new note), for the diff.
    fn write_note(
        &self,
        target: &Target,
        old: &str,
        new_text: &str,
        bump: bool,
    ) -> Result<Written> {
        let mut out = new_text.to_string();
        let mut bumped = false;
        if bump
            && let Some(with_stamp) =
                frontmatter::bump_key(&out, &self.timestamp_key, &now_timestamp())
        {
            out = with_stamp;
            bumped = true;
        }
        fs::write_atomic(&target.abs, out.as_bytes())
            .map_err(|e| Error::write_io(&target.rel, &e))?;
        Ok(Written { bumped, etag: content_hash(out.as_bytes()), diff: diff::unified(old, &out) })
    }

    fn finish(&self, target: &Target, message: String, w: Written) -> Change {
        // With stamping off there is nothing to explain.
        let suffix = if w.bumped || self.timestamp_key.is_empty() { "" } else { NO_BUMP };
        let mut change = self.change_at(target, format!("{message}{suffix}"));
        change.timestamp_bumped = w.bumped;
        change.etag = Some(w.etag);
        change.diff = Some(w.diff);
        change
    }

    /// Refuses a write outside `scope` (a request confined to one note or one folder).
    ///
    /// The path is gated first, so a hostile or protected path gets its own refusal rather
    /// than `out_of_scope`. A scope ending in `.md` admits exactly that note; any other scope
    /// is a folder and admits paths strictly beneath it (`Sub` does not admit `Subterfuge.md`).
    pub fn check_scope(&self, raw: &str, folder: bool, scope: &str) -> Result<()> {
        let target = self.gate(raw, if folder { Access::Folder } else { Access::WriteFile })?;
        let scope = scope.trim().trim_matches('/');
        let admitted = if scope.to_ascii_lowercase().ends_with(".md") {
            target.rel == scope
        } else {
            target.rel.starts_with(&format!("{scope}/"))
        };
        if admitted {
            return Ok(());
        }
        let what = if scope.to_ascii_lowercase().ends_with(".md") {
            format!("the note {scope}")
        } else {
            format!("the folder {scope}/")
        };
        Err(Error::new(
            ErrorCode::OutOfScope,
            format!(
                "this connection may only write to {what}, and {} is outside it; \
                 do not retry at another path, ask the user to widen the scope",
                target.rel
            ),
        ))
    }

    /// Reads a note, or one section of it (`section` is a `::` heading target). A filed
    /// document reads as its extracted Markdown, whole.
    pub fn read(
        &self,
        raw: &str,
        section: Option<&str>,
        docs: &dyn DocumentText,
    ) -> Result<NoteRead> {
        let target = self.existing_target(raw, Access::Read, Reach::Name)?;
        if self.suffixes.is_document(&target.rel) {
            if section.is_some_and(|s| !s.trim().is_empty()) {
                return Err(Error::new(
                    ErrorCode::IsDocument,
                    format!(
                        "{} is a filed document, which has no sections to read; read it whole",
                        target.rel
                    ),
                ));
            }
            let bytes = self.load_bytes(&target)?;
            let (etag, extraction) = docs.extraction(&target.rel, &bytes)?;
            if extraction.markdown.trim().is_empty() {
                let v = &extraction.verdict;
                return Err(Error::new(
                    ErrorCode::ExtractionFailed,
                    format!(
                        "no text could be extracted from {} ({}: {}); its map shows the full \
                         verdict",
                        target.rel,
                        v.status.as_str(),
                        v.detail
                    ),
                ));
            }
            return Ok(NoteRead {
                vault: self.name.clone(),
                path: target.rel,
                body: extraction.markdown.clone(),
                content: extraction.markdown,
                section: None,
                frontmatter: Map::new(),
                etag,
                extraction: Some(extraction.verdict),
                reading: target.reading,
            });
        }
        let content = self.load_text(&target)?;
        let etag = content_hash(content.as_bytes());
        let fm = frontmatter::parse(&content);
        let section = section.map(str::trim).filter(|s| !s.is_empty());
        match section {
            None => {
                let body = frontmatter::split(&content).1.to_string();
                Ok(NoteRead {
                    vault: self.name.clone(),
                    path: target.rel,
                    content,
                    section: None,
                    frontmatter: fm,
                    body,
                    etag,
                    extraction: None,
                    reading: target.reading,
                })
            }
            Some(wanted) => {
                let all = headings::headings(&content);
                let blocks = headings::blocks(&content);
                let resolved = headings::locate(&all, &blocks, wanted, &target.rel)?.display();
                let text = edit::section_text(&content, &target.rel, wanted)?;
                Ok(NoteRead {
                    vault: self.name.clone(),
                    path: target.rel,
                    body: text.clone(),
                    content: text,
                    section: Some(resolved),
                    frontmatter: fm,
                    etag,
                    extraction: None,
                    reading: target.reading,
                })
            }
        }
    }

    /// The note's frontmatter and heading outline; for a filed document, its extraction
    /// verdict and the outline of its extracted Markdown.
    pub fn map(&self, raw: &str, docs: &dyn DocumentText) -> Result<NoteMap> {
        let target = self.existing_target(raw, Access::Read, Reach::Name)?;
        let (content, frontmatter, etag, extraction) = if self.suffixes.is_document(&target.rel) {
            let bytes = self.load_bytes(&target)?;
            let (etag, extraction) = docs.extraction(&target.rel, &bytes)?;
            (extraction.markdown, Map::new(), etag, Some(extraction.verdict))
        } else {
            // The note the lookup found, not the caller's path gated again: that path may be
            // a name, or another spelling, that names nothing as written.
            let content = self.load_text(&target)?;
            let etag = content_hash(content.as_bytes());
            (content.clone(), frontmatter::parse(&content), etag, None)
        };
        let headings = headings::headings(&content)
            .iter()
            .map(|h| HeadingEntry {
                depth: h.depth,
                text: h.text.clone(),
                line: h.line,
                path: headings::display_path(h),
            })
            .collect();
        Ok(NoteMap {
            vault: self.name.clone(),
            path: target.rel,
            frontmatter,
            headings,
            etag,
            extraction,
            reading: target.reading,
        })
    }

    /// Lists a folder (`""` is the vault root).
    pub fn list(&self, raw: &str) -> Result<Listing> {
        let target = self.gate(raw, Access::List)?;
        let meta = std::fs::metadata(&target.abs).map_err(|e| Error::read_io(&target.rel, &e))?;
        if !meta.is_dir() {
            return Err(Error::new(
                ErrorCode::NotADirectory,
                format!("{} is a file; read it instead of listing it", target.rel),
            ));
        }
        let mut folders = Vec::new();
        let mut files = Vec::new();
        let dir = std::fs::read_dir(&target.abs).map_err(|e| Error::read_io(&target.rel, &e))?;
        for item in dir {
            let item = item.map_err(|e| Error::read_io(&target.rel, &e))?;
            let name = item.file_name().to_string_lossy().into_owned();
            let Ok(ft) = item.file_type() else { continue };
            if name.starts_with('.') || ft.is_symlink() {
                continue;
            }
            let path =
                if target.rel.is_empty() { name.clone() } else { format!("{}/{name}", target.rel) };
            if ft.is_dir() {
                folders.push(Entry {
                    name,
                    path,
                    kind: EntryKind::Folder,
                    size: None,
                    modified: None,
                });
            } else if ft.is_file() {
                let meta = item.metadata().ok();
                let kind = if Suffixes::is_note(&name) {
                    EntryKind::Note
                } else if self.suffixes.is_document(&name) {
                    EntryKind::Document
                } else {
                    EntryKind::Other
                };
                files.push(Entry {
                    name,
                    path,
                    kind,
                    size: meta.as_ref().map(|m| m.len()),
                    modified: meta.and_then(|m| m.modified().ok()).map(rfc3339_seconds),
                });
            }
        }
        let key = |e: &Entry| (e.name.to_lowercase(), e.name.clone());
        folders.sort_by_key(key);
        files.sort_by_key(key);
        folders.extend(files);
        Ok(Listing { vault: self.name.clone(), path: target.rel, entries: folders })
    }

    /// Creates a note, or replaces it when `overwrite` is set.
    pub fn write(
        &self,
        raw: &str,
        content: &str,
        overwrite: bool,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.note_target(raw, "written as a note")?;
        let _guard = self.lock();
        let existing = self.current(&target, expected)?;
        if existing.is_some() && !overwrite {
            return Err(Error::new(
                ErrorCode::AlreadyExists,
                format!(
                    "{} already exists; pass overwrite to replace it, or patch or append to it",
                    target.rel
                ),
            ));
        }
        // An overwrite is new content, normalised like a new note's, but the file keeps its
        // convention: a CRLF note stays CRLF and a BOM stays.
        let style = existing.as_deref().map_or(text::Style::NEW, text::Style::of);
        let old = existing.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        let w = self.write_note(&target, &old, &style.note(content), true)?;
        let verb = if existing.is_some() { "overwrote" } else { "created" };
        Ok(self.finish(&target, format!("{verb} {}", target.rel), w))
    }

    /// Appends to a note; creates it when missing and `create_if_missing` is set.
    pub fn append(
        &self,
        raw: &str,
        content: &str,
        create_if_missing: bool,
        expected: Option<&str>,
    ) -> Result<Change> {
        // An append that may create names a place: another spelling of that place is still
        // the caller's note, but a note of that name elsewhere is not (a new name is a new
        // name), so only an append to an existing note finds it by name.
        let target = if create_if_missing {
            match self.forgiving(raw, Access::WriteFile, Reach::Spelling) {
                Ok(Lookup::Found(found)) => self.refuse_document(found, "appended to")?,
                _ => self.note_target(raw, "appended to")?,
            }
        } else {
            self.existing_note(raw, "appended to").map_err(|e| match e.code() {
                ErrorCode::NotFound => Error::new(
                    ErrorCode::NotFound,
                    format!("{}; or pass create_if_missing to create it", e.message()),
                ),
                _ => e,
            })?
        };
        let _guard = self.lock();
        match self.current(&target, expected)? {
            Some(bytes) => {
                let old = utf8(&target, bytes)?;
                let new = edit::append(&old, content);
                let w = self.write_note(&target, &old, &new, true)?;
                Ok(self.finish(&target, format!("appended to {}", target.rel), w))
            }
            None if create_if_missing => {
                let w = self.write_note(&target, "", &text::normalize(content), true)?;
                Ok(self.finish(
                    &target,
                    format!("created {} with the supplied content", target.rel),
                    w,
                ))
            }
            None => Err(Error::new(
                ErrorCode::NotFound,
                format!("{} does not exist; pass create_if_missing to create it", target.rel),
            )),
        }
    }

    /// Replaces, prepends or appends to one heading's section.
    pub fn patch(
        &self,
        raw: &str,
        req: &PatchRequest<'_>,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "patched")?;
        if let Some((parent, slot)) = &req.move_to {
            return self.move_section(&target, req, *parent, slot, expected);
        }
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let base = if req.create_missing {
            edit::with_target(&old, &target.rel, req.target)?
        } else {
            old.clone()
        };
        let (content, warnings) = if req.relative_levels {
            let offset =
                edit::level_offset(&base, &target.rel, req.target, req.scope, req.within.is_some());
            edit::relevel(req.content, offset)
        } else {
            (req.content.to_string(), Vec::new())
        };
        let wanted = text::normalize(&content);
        let wanted = text::strip_blank_edges(&wanted);
        if req.reject_if_present && req.operation != Operation::Replace && !wanted.is_empty() {
            let region = text::normalize(&edit::section_text(&base, &target.rel, req.target)?);
            if region.contains(wanted) {
                return Err(Error::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "`{}` in {} already holds that content, and the request asked to refuse \
                         rather than add it twice; nothing was changed",
                        req.target, target.rel
                    ),
                ));
            }
        }
        let patched = if let Some(index) = req.within {
            let (text, path) = edit::patch_within(
                &base,
                &target.rel,
                req.target,
                index,
                req.operation,
                req.scope,
                &content,
                req.allow_empty,
            )?;
            edit::Patched { text, path, replaced: None }
        } else {
            edit::patch(
                &base,
                &target.rel,
                req.target,
                req.operation,
                req.scope,
                &content,
                req.allow_empty,
            )?
        };
        let w = self.write_note(&target, &old, &patched.text, true)?;
        let resolved = patched.path;
        let verb = match req.operation {
            Operation::Replace => "replaced",
            Operation::Prepend => "prepended to",
            Operation::Append => "appended to",
        };
        let mut change = self.finish(&target, format!("{verb} '{resolved}' in {}", target.rel), w);
        change.replaced = patched.replaced;
        change.warnings = warnings;
        Ok(change)
    }

    /// Moves a heading's section under another heading (a patch with `move_to`). Only a plain
    /// replace with no content asks for a move: anything else would mean two edits at once,
    /// and it is refused before the note is read.
    fn move_section(
        &self,
        target: &Target,
        req: &PatchRequest<'_>,
        parent: Option<&str>,
        slot: &edit::Slot,
        expected: Option<&str>,
    ) -> Result<Change> {
        let mixed = if req.operation != Operation::Replace {
            Some(format!("operation {}", req.operation))
        } else if !req.content.trim().is_empty() {
            Some("content".to_string())
        } else if req.within.is_some() {
            Some("within".to_string())
        } else if req.create_missing {
            Some("create_target_if_missing".to_string())
        } else {
            None
        };
        if let Some(what) = mixed {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "a move (destination) carries the section as it is, so it takes operation \
                     replace and nothing else; drop {what}, or edit the section in a second \
                     request"
                ),
            ));
        }
        let _guard = self.lock();
        let old = self.existing_text(target, expected)?;
        let moved = edit::move_section(&old, &target.rel, req.target, parent, slot)?;
        let w = self.write_note(target, &old, &moved.text, true)?;
        let under = moved.under.map_or("the top level".to_string(), |p| format!("'{p}'"));
        let message = format!("moved '{}' under {under} in {}", moved.from, target.rel);
        let mut change = self.finish(target, message, w);
        change.warnings = moved.warnings;
        Ok(change)
    }

    /// Replaces the body, keeping the frontmatter block byte for byte.
    pub fn set_body(&self, raw: &str, content: &str, expected: Option<&str>) -> Result<Change> {
        let target = self.existing_note(raw, "given a new body")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let new = edit::set_body(&old, content);
        let w = self.write_note(&target, &old, &new, true)?;
        Ok(self.finish(&target, format!("replaced the body of {}", target.rel), w))
    }

    /// Sets a frontmatter key (`value`), or removes it (`value` None).
    pub fn set_frontmatter(
        &self,
        raw: &str,
        key: &str,
        value: Option<&Value>,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let new = match value {
            Some(v) => frontmatter::set(&old, key, v)?,
            None => frontmatter::delete(&old, key)?,
        };
        if value.is_none() && new == old {
            let mut change = self.change_at(
                &target,
                format!("'{key}' is not set in {}; nothing changed", target.rel),
            );
            change.etag = Some(content_hash(old.as_bytes()));
            return Ok(change);
        }
        // Setting `timestamp` itself must not be overwritten by the automatic bump.
        let bump = key != self.timestamp_key;
        let mut w = self.write_note(&target, &old, &new, bump)?;
        w.bumped = w.bumped || !bump;
        let message = match value {
            Some(_) => format!("set '{key}' in {}", target.rel),
            None => format!("removed '{key}' in {}", target.rel),
        };
        let mut change = self.finish(&target, message, w);
        if !bump {
            change.message = change.message.replace(NO_BUMP, "");
        }
        Ok(change)
    }

    /// Renames a frontmatter key, keeping its value lines byte for byte
    /// (`frontmatter::rename`); a name the block already has is refused with `key_exists`.
    pub fn rename_frontmatter_key(
        &self,
        raw: &str,
        key: &str,
        new: &str,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let text = frontmatter::rename(&old, key, new.trim())?;
        let bump = key != self.timestamp_key && new.trim() != self.timestamp_key;
        let w = self.write_note(&target, &old, &text, bump)?;
        let message = format!("renamed '{key}' to '{}' in {}", new.trim(), target.rel);
        Ok(self.finish(&target, message, w))
    }

    /// Puts new frontmatter entries before, after or in place of the existing key `anchor`
    /// (`frontmatter::insert`); a key the block already has is refused with `key_exists`.
    pub fn frontmatter_entries(
        &self,
        raw: &str,
        anchor: &str,
        place: frontmatter::Place,
        entries: &[(String, Value)],
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let text = frontmatter::insert(&old, anchor, place, entries)?;
        // Writing the timestamp key itself must not be overwritten by the automatic bump.
        let bump = !entries.iter().any(|(k, _)| *k == self.timestamp_key);
        let w = self.write_note(&target, &old, &text, bump)?;
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        let verb = match place {
            frontmatter::Place::Before => "before",
            frontmatter::Place::After => "after",
            frontmatter::Place::Instead => "in place of",
        };
        let message = format!("set '{}' {verb} '{anchor}' in {}", keys.join("', '"), target.rel);
        Ok(self.finish(&target, message, w))
    }

    /// Adds items to, and removes items from, a frontmatter list (`tags`), keeping the other
    /// items and their order. A missing key starts empty and a plain value counts as a list of
    /// one; an item already there is not added twice. Nothing changes (and nothing is written)
    /// when every item to add is there and none to remove is.
    pub fn edit_list(
        &self,
        raw: &str,
        key: &str,
        add: &[Value],
        remove: &[Value],
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "given frontmatter")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let mut items: Vec<Value> = match frontmatter::parse(&old).get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.clone(),
            Some(other) => vec![other.clone()],
        };
        let before = items.clone();
        items.retain(|item| !remove.contains(item));
        for item in add {
            if !items.contains(item) {
                items.push(item.clone());
            }
        }
        let shown = |vs: &[Value]| {
            vs.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), |s| format!("'{s}'")))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if items == before {
            let mut change = self.change_at(
                &target,
                format!("'{key}' in {} already reads {}; nothing changed", target.rel, {
                    if items.is_empty() { "empty".to_string() } else { shown(&items) }
                }),
            );
            change.etag = Some(content_hash(old.as_bytes()));
            return Ok(change);
        }
        let new = frontmatter::set(&old, key, &Value::Array(items.clone()))?;
        let w = self.write_note(&target, &old, &new, key != "timestamp")?;
        let message = format!("'{key}' in {} is now [{}]", target.rel, shown(&items));
        Ok(self.finish(&target, message, w))
    }

    /// Replaces literal text; `count` is the number of occurrences the caller expects.
    pub fn replace_text(
        &self,
        raw: &str,
        find: &str,
        replace: &str,
        section: Option<&str>,
        count: usize,
        expected: Option<&str>,
    ) -> Result<Change> {
        let target = self.existing_note(raw, "edited as text")?;
        let _guard = self.lock();
        let old = self.existing_text(&target, expected)?;
        let section = section.map(str::trim).filter(|s| !s.is_empty());
        let (new, n) = edit::replace_text(&old, &target.rel, find, replace, section, count)?;
        let w = self.write_note(&target, &old, &new, true)?;
        let noun = if n == 1 { "occurrence" } else { "occurrences" };
        Ok(self.finish(&target, format!("replaced {n} {noun} of the text in {}", target.rel), w))
    }

    /// Deletes a note or a document.
    pub fn delete(&self, raw: &str, expected: Option<&str>) -> Result<Change> {
        self.remove(raw, expected, true)
    }

    /// Deletes a note or document, moving it into the vault's `.trash` folder (where Obsidian
    /// keeps deleted files, so it can be restored) unless `permanent`. A name already in the
    /// trash is kept: the newcomer gets ` 1`, ` 2`, ... before its suffix.
    pub fn remove(&self, raw: &str, expected: Option<&str>, permanent: bool) -> Result<Change> {
        let target = self.gate(raw, Access::WriteFile)?;
        let _guard = self.lock();
        if self.current(&target, expected)?.is_none() {
            return Err(Error::new(ErrorCode::NotFound, format!("{} does not exist", target.rel)));
        }
        if permanent {
            fs::remove_file(&target.abs).map_err(|e| Error::write_io(&target.rel, &e))?;
            return Ok(self.change_at(&target, format!("deleted {}", target.rel)));
        }
        let name = target.rel.rsplit('/').next().unwrap_or(&target.rel);
        let (stem, suffix) = match name.rfind('.') {
            Some(i) if i > 0 => (&name[..i], &name[i..]),
            _ => (name, ""),
        };
        let trash = self.root.join(TRASH_DIR);
        let mut n = 0;
        loop {
            let candidate = if n == 0 { name.to_string() } else { format!("{stem} {n}{suffix}") };
            let to = trash.join(&candidate);
            match fs::move_file_new(&target.abs, &to) {
                Ok(()) => {
                    return Ok(self.change_at(
                        &target,
                        format!(
                            "moved {} to the vault's trash as {TRASH_DIR}/{candidate}; delete \
                             with permanent to remove it for good",
                            target.rel
                        ),
                    ));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < MAX_TRASH_TWINS => {
                    n += 1;
                }
                Err(e) => return Err(Error::write_io(&target.rel, &e)),
            }
        }
    }

    /// Creates a folder and any missing parents.
    pub fn create_folder(&self, raw: &str) -> Result<Change> {
        let target = self.gate(raw, Access::Folder)?;
        let _guard = self.lock();
        if target.abs.exists() && !target.abs.is_dir() {
            return Err(Error::new(
                ErrorCode::AlreadyExists,
                format!("{} exists and is a file; choose another folder name", target.rel),
            ));
        }
        let parts: Vec<String> = target.rel.split('/').map(String::from).collect();
        let created = fs::create_dirs(&self.root, &parts).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotADirectory => Error::new(
                ErrorCode::AlreadyExists,
                format!(
                    "a file stands where a folder of {} should be; rename it first",
                    target.rel
                ),
            ),
            _ => Error::write_io(&target.rel, &e),
        })?;
        let message = if created.is_empty() {
            format!("{} already exists; nothing was created", target.rel)
        } else {
            format!("created folder(s): {}", created.join(", "))
        };
        let mut change = self.change_at(&target, message);
        change.folders_created = created;
        Ok(change)
    }

    /// Deletes a folder; a non-empty one only when `recursive`.
    pub fn delete_folder(&self, raw: &str, recursive: bool) -> Result<Change> {
        let target = self.gate(raw, Access::Folder)?;
        let _guard = self.lock();
        let meta =
            std::fs::symlink_metadata(&target.abs).map_err(|e| Error::read_io(&target.rel, &e))?;
        if !meta.is_dir() {
            return Err(Error::new(
                ErrorCode::NotADirectory,
                format!("{} is a file; delete it as a note or document instead", target.rel),
            ));
        }
        let mut names: Vec<String> = std::fs::read_dir(&target.abs)
            .map_err(|e| Error::read_io(&target.rel, &e))?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        if names.is_empty() {
            fs::remove_dir(&target.abs).map_err(|e| Error::write_io(&target.rel, &e))?;
            return Ok(self.change_at(&target, format!("deleted the empty folder {}", target.rel)));
        }
        if !recursive {
            let shown: Vec<&str> = names.iter().take(20).map(String::as_str).collect();
            let more = if names.len() > 20 {
                format!(" and {} more", names.len() - 20)
            } else {
                String::new()
            };
            return Err(Error::new(
                ErrorCode::NotEmpty,
                format!(
                    "{} is not empty (it holds {}{more}); pass recursive to delete it with its contents",
                    target.rel,
                    shown.join(", ")
                ),
            ));
        }
        // Scan everything first: a hidden entry (a .git folder, Obsidian settings) or a symlink
        // inside means the folder holds more than notes, and nothing is removed.
        let (mut files, mut documents) = (0usize, 0usize);
        for entry in walkdir::WalkDir::new(&target.abs).follow_links(false).min_depth(1) {
            let entry = entry.map_err(|e| {
                Error::new(ErrorCode::Unreadable, format!("cannot scan {}: {e}", target.rel))
            })?;
            let name = entry.file_name().to_string_lossy();
            let rel = entry
                .path()
                .strip_prefix(&self.root)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.starts_with('.') {
                return Err(Error::new(
                    ErrorCode::InvalidPath,
                    format!(
                        "{} holds the hidden entry {rel}; nothing was deleted. Remove it outside mdvault first",
                        target.rel
                    ),
                ));
            }
            if entry.path_is_symlink() {
                return Err(Error::new(
                    ErrorCode::InvalidPath,
                    format!(
                        "{} holds the symbolic link {rel}; nothing was deleted. Remove it outside mdvault first",
                        target.rel
                    ),
                ));
            }
            if entry.file_type().is_file() {
                files += 1;
                if self.suffixes.is_document(&name) {
                    documents += 1;
                }
            }
        }
        // One rename takes the folder out of view; unlinking its contents is many steps, and a
        // crash among them would leave half a folder. A crash after the rename leaves only a
        // hidden temporary, which the next start sweeps, so no journal record is needed.
        let aside = fs::set_aside(&target.abs).map_err(|e| Error::write_io(&target.rel, &e))?;
        if let Err(e) = fs::remove_dir_all(&aside) {
            tracing::warn!(
                "vault {}: {} is deleted, but removing its contents under {} failed ({e}); the \
                 next start removes them",
                self.name,
                target.rel,
                aside.display()
            );
        }
        Ok(self.change_at(
            &target,
            format!("deleted {} with {files} file(s), {documents} of them document(s)", target.rel),
        ))
    }

    /// Moves a note or a document, rewriting inbound links when `update_links` is set.
    ///
    /// All or nothing: every new file is written to a staged temporary first; only when all of
    /// them are ready are they renamed into place, and a failure while committing restores
    /// what was already committed.
    pub fn move_file(
        &self,
        from_raw: &str,
        to_raw: &str,
        update_links: bool,
        expected: Option<&str>,
    ) -> Result<Change> {
        let from = self.gate(from_raw, Access::WriteFile)?;
        let to = self.gate(to_raw, Access::WriteFile)?;
        let from_doc = self.suffixes.is_document(&from.rel);
        if from_doc != self.suffixes.is_document(&to.rel) {
            return Err(Error::new(
                ErrorCode::KindChange,
                format!(
                    "moving {} to {} would turn a {} into a {}; keep the kind of file",
                    from.rel,
                    to.rel,
                    if from_doc { "document" } else { "note" },
                    if from_doc { "note" } else { "document" }
                ),
            ));
        }
        if from.rel == to.rel {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("{} is already at that path; name a different destination", from.rel),
            ));
        }
        // Planned before the lock and confirmed under it: scanning every note is the long
        // part of a move, and other writes to the vault must not wait for it.
        let planned = update_links.then(|| Plan::make(self, &from.rel, &to.rel));
        let _guard = self.lock();
        let Some(source_bytes) = self.current(&from, expected)? else {
            return Err(Error::new(ErrorCode::NotFound, format!("{} does not exist", from.rel)));
        };
        if std::fs::symlink_metadata(&to.abs).is_ok() {
            return Err(Error::new(
                ErrorCode::AlreadyExists,
                format!("{} already exists; choose another destination or delete it first", to.rel),
            ));
        }
        let plan = planned.map(|plan| plan.confirm(self));

        let mut bumped = false;
        let moved_text = if from_doc {
            None
        } else {
            // The moved note keeps its bytes: only link targets and the timestamp change.
            let mut new = utf8(&from, source_bytes.clone())?;
            if let Some(plan) = &plan {
                new = plan.moved_text(&new);
            }
            if let Some(stamped) =
                frontmatter::bump_key(&new, &self.timestamp_key, &now_timestamp())
            {
                new = stamped;
                bumped = true;
            }
            Some(new)
        };
        let links_changed = plan.as_ref().map_or(0, Plan::notes_changed);
        let rewrites = plan.map(|plan| plan.into_rewrites(self)).unwrap_or_default();

        // Folders made for the destination are taken away again (while empty) if the move
        // does not finish.
        let made = fs::create_parents(&to.abs).map_err(|e| Error::write_io(&to.rel, &e))?;
        let result =
            self.commit_move(&from, &to, &source_bytes, moved_text.as_deref(), &rewrites, &made);
        if result.is_err() {
            fs::remove_created_dirs(&made);
        }
        result?;

        let mut message = format!("moved {} to {}", from.rel, to.rel);
        if !from_doc && !bumped {
            message.push_str(NO_BUMP);
        }
        if update_links {
            message.push_str(&format!("; repointed links in {links_changed} note(s)"));
        } else {
            message.push_str("; links NOT updated");
        }
        let message = from.reading.told(&from.rel, message);
        let mut change = self.change_at(&to, message);
        change.timestamp_bumped = bumped;
        change.links_rewritten = update_links.then_some(links_changed);
        change.etag = match &moved_text {
            Some(t) => Some(content_hash(t.as_bytes())),
            None => Some(content_hash(&source_bytes)),
        };
        Ok(change)
    }

    /// The second half of a move. Stage: the destination's bytes, every rewritten note's new
    /// text, and a kept original of every file the move replaces or removes, all as hidden
    /// temporaries, flushed with their folders. Record: the plan in the journal, flushed.
    /// Commit: destination first (never clobbering), then the rewritten notes, then the source
    /// goes. A failure undoes the committed steps from the kept originals, with the same code
    /// that settles a move whose process died (`journal::settle`).
    fn commit_move(
        &self,
        from: &Target,
        to: &Target,
        source_bytes: &[u8],
        moved_text: Option<&str>,
        rewrites: &[(Target, Vec<u8>, String)],
        made: &[std::path::PathBuf],
    ) -> Result<()> {
        // Every temporary is removed if we return before the record is written. Their names
        // carry the journal's tag, so that only a process of this data directory sweeps them.
        let tag = self.journal.as_ref().map(|j| j.tag());
        let tag = tag.as_deref();
        let mut temps: Vec<tempfile::TempPath> = Vec::new();
        let mut steps = Vec::new();
        let dest = match moved_text {
            Some(t) => fs::Staged::for_journal(&to.abs, t.as_bytes(), tag),
            // A document keeps its bytes: its staged copy is a second name of the source.
            None => fs::link_aside(&from.abs, &to.abs, tag),
        }
        .map_err(|e| Error::write_io(&to.rel, &e))?;
        let new_hash = content_hash(moved_text.map_or(source_bytes, str::as_bytes));
        steps.push(Step {
            path: to.rel.clone(),
            old: None,
            new: Some(new_hash),
            staged: Some(self.rel_of(&dest)),
            kept: None,
        });
        temps.push(dest);
        for (target, original, new) in rewrites {
            let staged = fs::Staged::for_journal(&target.abs, new.as_bytes(), tag)
                .map_err(|e| Error::write_io(&target.rel, &e))?;
            let kept = fs::link_aside(&target.abs, &target.abs, tag)
                .map_err(|e| Error::write_io(&target.rel, &e))?;
            steps.push(Step {
                path: target.rel.clone(),
                old: Some(content_hash(original)),
                new: Some(content_hash(new.as_bytes())),
                staged: Some(self.rel_of(&staged)),
                kept: Some(self.rel_of(&kept)),
            });
            temps.extend([staged, kept]);
        }
        let kept_source = fs::link_aside(&from.abs, &from.abs, tag)
            .map_err(|e| Error::write_io(&from.rel, &e))?;
        steps.push(Step {
            path: from.rel.clone(),
            old: Some(content_hash(source_bytes)),
            new: None,
            staged: None,
            kept: Some(self.rel_of(&kept_source)),
        });
        temps.push(kept_source);

        // The temporaries' names must be on disk before a record that names them is.
        let mut flushed = BTreeSet::new();
        for temp in &temps {
            if flushed.insert(temp.parent().map(std::path::Path::to_path_buf)) {
                fs::sync_dir(temp).map_err(|e| Error::write_io(&to.rel, &e))?;
            }
        }
        let made = made.iter().map(|m| self.rel_of(m)).collect();
        let record = Record::new(&self.name, &self.root, &from.rel, &to.rel, made, steps);
        if crashes_at(0) {
            // As if killed: the temporaries stay behind, with no record naming them.
            temps.into_iter().for_each(|t| drop(t.keep()));
            return Err(simulated_crash());
        }
        let open = match &self.journal {
            Some(journal) => Some(
                journal
                    .begin(&record)
                    .map_err(|e| Error::write_io("the journal record of this move", &e))?,
            ),
            None => None,
        };
        // From here on the record names every temporary; they are removed by path.
        temps.into_iter().for_each(|t| drop(t.keep()));

        for (i, step) in record.steps.iter().enumerate() {
            if crashes_at(1 + i) {
                return Err(simulated_crash());
            }
            let result = if injected_failure(i) {
                Err(std::io::Error::other("injected failure"))
            } else {
                journal::forward(&self.root, step)
            };
            if let Err(e) = result {
                let left = journal::roll_back(&self.root, &record);
                journal::clean_up(&self.root, &record);
                for file in &left {
                    tracing::warn!("vault {}: undoing a failed move: {file}", self.name);
                }
                self.finish_record(open);
                return Err(self.step_failed(&record, i, &e));
            }
        }
        if crashes_at(1 + record.steps.len()) {
            return Err(simulated_crash());
        }
        self.finish_record(open);
        if crashes_at(2 + record.steps.len()) {
            return Err(simulated_crash());
        }
        journal::clean_up(&self.root, &record);
        Ok(())
    }

    /// A temporary's vault-relative path (temporaries always sit beside their target).
    fn rel_of(&self, abs: &std::path::Path) -> String {
        rel_string(abs.strip_prefix(&self.root).unwrap_or(abs))
    }

    /// Removes a settled move's record. Left behind, it would only be settled again (to the
    /// state it is already in) on the next start.
    fn finish_record(&self, open: Option<journal::Open>) {
        if let Some(Err(e)) = open.map(journal::Open::finish) {
            tracing::warn!("vault {}: cannot remove a settled move record: {e}", self.name);
        }
    }

    /// The refusal for a move whose step `i` failed and was undone.
    fn step_failed(&self, record: &Record, i: usize, e: &std::io::Error) -> Error {
        let step = &record.steps[i];
        if i == 0 {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                return Error::new(
                    ErrorCode::AlreadyExists,
                    format!("{} appeared while moving; nothing changed", step.path),
                );
            }
            return Error::write_io(&step.path, e);
        }
        if i + 1 == record.steps.len() {
            return Error::write_io(&step.path, e);
        }
        Error::new(
            ErrorCode::Conflict,
            format!(
                "could not update the links in {} ({e}); the move was undone, nothing changed. Try again",
                step.path
            ),
        )
    }

    /// Every visible file of the vault with its size and modification time, sorted by path.
    pub fn scan(&self) -> Vec<FileStat> {
        let mut out = Vec::new();
        let walker = walkdir::WalkDir::new(&self.root)
            .follow_links(false)
            .min_depth(1)
            .into_iter()
            .filter_entry(|e| !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walker.flatten() {
            if !entry.file_type().is_file() {
                continue;
            }
            let (Ok(rel), Ok(meta)) = (entry.path().strip_prefix(&self.root), entry.metadata())
            else {
                continue;
            };
            let mtime_ns = mtime_ns(&meta);
            out.push(FileStat { path: rel_string(rel), size: meta.len(), mtime_ns });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// The size and modification time of one file, if it is a visible regular file.
    pub fn stat(&self, rel: &str) -> Option<FileStat> {
        let target = self.gate(rel, Access::Read).ok()?;
        let meta = std::fs::symlink_metadata(&target.abs).ok()?;
        if !meta.is_file() {
            return None;
        }
        let mtime_ns = mtime_ns(&meta);
        Some(FileStat { path: target.rel, size: meta.len(), mtime_ns })
    }

    /// Whether the indexer could read a listed file: the gate accepts its name and it opens.
    /// Reads nothing (for `mdvault status`).
    pub fn probe(&self, rel: &str) -> Result<()> {
        let target = self.gate(rel, Access::Read)?;
        std::fs::File::open(&target.abs).map(drop).map_err(|e| Error::read_io(&target.rel, &e))
    }

    /// The bytes of a file, through the gate (for the indexer).
    pub fn read_bytes(&self, rel: &str) -> Result<Vec<u8>> {
        let target = self.gate(rel, Access::Read)?;
        self.load_bytes(&target)
    }

    /// Checks that `raw` names an existing folder (`""` is the root) and returns its
    /// vault-relative form, for operations that walk part of the vault.
    pub fn folder(&self, raw: &str) -> Result<String> {
        let target = self.gate(raw, Access::List)?;
        match std::fs::metadata(&target.abs) {
            Ok(meta) if meta.is_dir() => Ok(target.rel),
            Ok(_) => Err(Error::new(
                ErrorCode::NotADirectory,
                format!("{} is a file, not a folder; pass a folder, or leave dir out", target.rel),
            )),
            Err(e) => Err(Error::read_io(&target.rel, &e)),
        }
    }

    /// Every visible file of the vault (no hidden parts, no symlinks), sorted.
    pub fn all_files(&self) -> Vec<String> {
        let mut out = Vec::new();
        let walker = walkdir::WalkDir::new(&self.root)
            .follow_links(false)
            .min_depth(1)
            .into_iter()
            .filter_entry(|e| !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walker.flatten() {
            if entry.file_type().is_file()
                && let Ok(rel) = entry.path().strip_prefix(&self.root)
            {
                out.push(rel_string(rel));
            }
        }
        out.sort();
        out
    }

    fn existing_text(&self, target: &Target, expected: Option<&str>) -> Result<String> {
        match self.current(target, expected)? {
            Some(bytes) => utf8(target, bytes),
            None => Err(Error::new(ErrorCode::NotFound, format!("{} does not exist", target.rel))),
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Test hook: fail step n of a move's commit (0 the destination, then the rewritten notes,
    /// last the source's removal), as a full disk or a lost permission would.
    static FAIL_STEP_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    /// Test hook: stop a move dead at point n, as SIGKILL would: 0 after staging, 1 + k after
    /// the record and k committed steps, then after the record's removal.
    static CRASH_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

fn injected_failure(i: usize) -> bool {
    #[cfg(test)]
    {
        FAIL_STEP_AT.with(|f| f.get() == Some(i))
    }
    #[cfg(not(test))]
    {
        let _ = i;
        false
    }
}

fn crashes_at(point: usize) -> bool {
    #[cfg(test)]
    {
        CRASH_AT.with(|f| f.get() == Some(point))
    }
    #[cfg(not(test))]
    {
        let _ = point;
        false
    }
}

fn simulated_crash() -> Error {
    Error::new(ErrorCode::InternalError, "simulated crash (a test hook)")
}

fn utf8(target: &Target, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|_| {
        Error::new(
            ErrorCode::Unreadable,
            format!("{} is not valid UTF-8 text; fix its encoding in an editor", target.rel),
        )
    })
}

fn check_expected(rel: &str, current: Option<&[u8]>, expected: Option<&str>) -> Result<()> {
    let Some(expected) = expected.map(str::trim).filter(|e| !e.is_empty()) else {
        return Ok(());
    };
    let expected = expected.trim_matches('"').to_ascii_lowercase();
    match current {
        None => Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "{rel} no longer exists, but a version of it was expected; read the folder again"
            ),
        )),
        Some(bytes) => {
            let now = content_hash(bytes);
            if now == expected {
                Ok(())
            } else {
                Err(Error::new(
                    ErrorCode::Conflict,
                    format!(
                        "{rel} changed since it was read (expected {expected}, found {now}); \
                         read it again and reapply the edit"
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::VaultSettings;

    fn snapshot(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .flatten()
            .map(|e| {
                let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
                let bytes =
                    if e.file_type().is_file() { std::fs::read(e.path()).unwrap() } else { vec![] };
                (rel, bytes)
            })
            .collect();
        out.sort();
        out
    }

    fn settings() -> VaultSettings {
        VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 0,
            timestamp_key: "timestamp".into(),
        }
    }

    /// A target note and four notes linking to it (each in two syntaxes).
    fn linked_vault(root: &std::path::Path, target: &str) {
        std::fs::write(root.join("Target.md"), target).unwrap();
        for n in 0..4 {
            std::fs::write(
                root.join(format!("L{n}.md")),
                format!("[[Target]] and [t](Target.md) {n}\n"),
            )
            .unwrap();
        }
    }

    fn has_temporaries(root: &std::path::Path) -> bool {
        snapshot(root).iter().any(|(rel, _)| rel.contains(".mdvault-"))
    }

    #[test]
    fn a_move_that_fails_while_committing_leaves_nothing_changed() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = dir.path();
        linked_vault(root, "---\ntimestamp: 2020-01-01T00:00:00Z\n---\nbody\n");
        let vault = Vault::open("t", root, &settings()).unwrap().with_journal(data.path());
        let before = snapshot(root);
        // Step 0 is the destination, 1 to 4 the linking notes, 5 the source's removal.
        for at in 0..6 {
            FAIL_STEP_AT.with(|f| f.set(Some(at)));
            let err = vault.move_file("Target.md", "Sub/Renamed.md", true, None).unwrap_err();
            if (1..5).contains(&at) {
                assert_eq!(err.code(), ErrorCode::Conflict);
                assert!(err.message().contains("undone"));
            } else {
                assert_eq!(err.code(), ErrorCode::InternalError, "{}", err.message());
            }
            assert_eq!(snapshot(root), before, "failure at step {at} left changes");
            assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
        }
        FAIL_STEP_AT.with(|f| f.set(None));
        let change = vault.move_file("Target.md", "Sub/Renamed.md", true, None).unwrap();
        assert_eq!(change.links_rewritten, Some(4));
        assert_eq!(
            std::fs::read_to_string(root.join("L0.md")).unwrap(),
            "[[Renamed]] and [t](Sub/Renamed.md) 0\n"
        );
        assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
        assert!(!has_temporaries(root));
    }

    #[test]
    fn a_move_killed_at_any_point_is_settled_on_the_next_start_to_all_old_or_all_new() {
        // No frontmatter, so no timestamp: the finished state is the same byte for byte
        // whenever it is reached.
        let target = "# Target\n\nsee [a](L0.md)\n";
        let expected = tempfile::tempdir().unwrap();
        linked_vault(expected.path(), target);
        let plain = Vault::open("t", expected.path(), &settings()).unwrap();
        let before_all = snapshot(expected.path());
        plain.move_file("Target.md", "Sub/Renamed.md", true, None).unwrap();
        let after_all = snapshot(expected.path());
        let notes = |snap: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
            snap.iter().filter(|(r, _)| r.ends_with(".md")).cloned().collect()
        };
        let (before, after) = (notes(&before_all), notes(&after_all));

        let mut finished = BTreeSet::new();
        for point in 0.. {
            let dir = tempfile::tempdir().unwrap();
            let data = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            linked_vault(&root, target);
            let vault = std::sync::Arc::new(
                Vault::open("t", &root, &settings()).unwrap().with_journal(data.path()),
            );
            CRASH_AT.with(|f| f.set(Some(point)));
            let result = vault.move_file("Target.md", "Sub/Renamed.md", true, None);
            CRASH_AT.with(|f| f.set(None));
            if result.is_ok() {
                // The hook did not fire: every point of the move has been visited.
                // Staging, before each of the 6 steps, before and after the record's removal.
                assert_eq!(point, 9, "the move stopped offering crash points at {point}");
                break;
            }
            assert!(has_temporaries(&root), "a crash at {point} left no temporaries to sweep");

            // The next start: settle the journal, then sweep, with the crashed writer (this
            // very process) counted as dead and everything older than the new start.
            let journal = journal::Journal::new(data.path());
            let protected = journal.recover(std::slice::from_ref(&vault));
            let dead = |_: u32| false;
            let started = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
            let tag = journal.tag();
            let sweep = super::super::sweep::Sweep {
                started,
                protected: &protected,
                alive: &dead,
                journal: Some(&tag),
            };
            super::super::sweep::sweep_vault(&root, &sweep);

            let full = snapshot(&root);
            let now = notes(&full);
            assert!(
                now == before || now == after,
                "a crash at point {point} left a mix: {:?}",
                full.iter().map(|(r, _)| r).collect::<Vec<_>>()
            );
            assert!(!has_temporaries(&root), "temporaries left after a crash at {point}");
            if point > 0 {
                // With a record, even the destination's new folder goes when undone. Without
                // one (killed while staging) an empty new folder may stay.
                assert!(full == before_all || full == after_all, "folders differ at {point}");
            }
            let records = std::fs::read_dir(journal.dir()).map_or(0, Iterator::count);
            assert_eq!(records, 0, "a record is left after a crash at {point}");
            finished.insert(now == after);
        }
        assert_eq!(finished.len(), 2, "crashes should end both undone and finished");
    }

    #[test]
    fn a_move_whose_staged_copy_vanished_before_the_restart_is_undone_whole() {
        let dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        linked_vault(&root, "# Target\n");
        let before = snapshot(&root);
        let vault = std::sync::Arc::new(
            Vault::open("t", &root, &settings()).unwrap().with_journal(data.path()),
        );
        // Killed after the destination and two linking notes were committed.
        CRASH_AT.with(|f| f.set(Some(4)));
        assert!(vault.move_file("Target.md", "Sub/Renamed.md", true, None).is_err());
        CRASH_AT.with(|f| f.set(None));
        // Someone cleans up hidden files by hand before the restart: the staged text of a
        // note not yet committed is gone, so the move cannot be finished.
        let record = std::fs::read_dir(data.path().join("journal")).unwrap().next().unwrap();
        let record: journal::Record =
            serde_json::from_slice(&std::fs::read(record.unwrap().path()).unwrap()).unwrap();
        let pending = &record.steps[3];
        std::fs::remove_file(root.join(pending.staged.as_ref().unwrap())).unwrap();

        let journal = journal::Journal::new(data.path());
        journal.recover(std::slice::from_ref(&vault));
        journal::clean_up(&root, &record);
        assert_eq!(snapshot(&root), before, "the move was not undone whole");
    }

    #[test]
    fn a_recursive_folder_delete_is_one_rename_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("Old/Deep")).unwrap();
        std::fs::write(root.join("Old/a.md"), "a").unwrap();
        std::fs::write(root.join("Old/Deep/b.md"), "b").unwrap();
        std::fs::write(root.join("keep.md"), "k").unwrap();
        let vault = Vault::open("t", root, &settings()).unwrap();
        let change = vault.delete_folder("Old", true).unwrap();
        assert!(change.message.contains("2 file(s)"), "{}", change.message);
        let names: Vec<_> = snapshot(root).into_iter().map(|(r, _)| r).collect();
        assert_eq!(names, vec!["keep.md".to_string()]);
    }

    /// Notes are all these tests read: a document read would be a bug.
    struct NoDocuments;

    impl DocumentText for NoDocuments {
        fn extraction(&self, rel: &str, _: &[u8]) -> Result<(String, Extraction)> {
            panic!("{rel} is a document; these tests read notes only")
        }
    }

    /// Notes in subfolders, a note named like its folder, two notes of one name, and a note
    /// known by an alias.
    fn named_vault() -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in [
            ("Sub/Deep.md", "---\ntimestamp: x\n---\n# Deep\n\n## Log\n\nold\n"),
            ("Sub/Sub.md", "# Sub\n"),
            ("A/Twin.md", "# A\n"),
            ("B/Twin.md", "# B\n"),
            ("Home/Heating.md", "---\naliases:\n  - Boiler\n---\n# Heating\n"),
        ] {
            let at = dir.path().join(path);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
        let vault = Vault::open("t", dir.path(), &settings()).unwrap();
        (dir, vault)
    }

    fn append(content: &str) -> PatchRequest<'_> {
        PatchRequest {
            target: "Log",
            operation: Operation::Append,
            scope: Scope::Content,
            content,
            allow_empty: false,
            create_missing: false,
            reject_if_present: false,
            within: None,
            relative_levels: false,
            move_to: None,
        }
    }

    #[test]
    fn a_bare_name_reads_and_edits_the_note_it_names_anywhere_and_says_so() {
        let (_dir, vault) = named_vault();
        let read = vault.read("Deep", None, &NoDocuments).unwrap();
        assert_eq!(read.path, "Sub/Deep.md");
        assert_eq!(read.reading, Reading::ByName { written: "Deep".into() });
        // A note named like its folder is the note, not the folder.
        assert_eq!(vault.read("Sub", None, &NoDocuments).unwrap().path, "Sub/Sub.md");
        assert_eq!(vault.map("Deep.md", &NoDocuments).unwrap().path, "Sub/Deep.md");
        assert!(vault.map("Deep", &NoDocuments).unwrap().render().contains("found by name"));
        let change = vault.patch("deep", &append("- new"), None).unwrap();
        assert_eq!(change.path, "Sub/Deep.md");
        assert!(
            change.message.contains("'deep' was found by name: Sub/Deep.md"),
            "{}",
            change.message
        );
        let by_alias = vault.set_frontmatter("Boiler", "status", Some(&Value::from("ok")), None);
        let by_alias = by_alias.unwrap();
        assert_eq!(by_alias.path, "Home/Heating.md");
        assert!(by_alias.message.contains("alias of Home/Heating.md"), "{}", by_alias.message);
        // A path as written says nothing more than the path.
        let plain = vault.read("Sub/Deep.md", None, &NoDocuments).unwrap();
        assert_eq!(plain.reading, Reading::AsWritten);
    }

    #[test]
    fn a_name_several_notes_answer_to_is_refused_listing_them_and_nothing_changes() {
        let (dir, vault) = named_vault();
        let before = snapshot(dir.path());
        let err = vault.read("Twin", None, &NoDocuments).unwrap_err();
        assert_eq!(err.code(), ErrorCode::AmbiguousPath);
        assert!(err.message().contains("A/Twin.md, B/Twin.md"), "{}", err.message());
        assert!(err.message().contains("pass one of these paths"), "{}", err.message());
        let err = vault.append("Twin.md", "x", false, None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::AmbiguousPath);
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn a_name_that_misses_names_the_nearest_paths_whatever_the_refusal_code() {
        let (dir, vault) = named_vault();
        std::fs::create_dir(dir.path().join("Sup")).unwrap();
        for (raw, code) in [
            ("Deap", ErrorCode::UnsupportedSuffix),
            ("Deap.md", ErrorCode::NotFound),
            ("Sup", ErrorCode::IsDirectory),
        ] {
            let err = vault.read(raw, None, &NoDocuments).unwrap_err();
            assert_eq!(err.code(), code, "{raw}: {}", err.message());
            assert!(
                err.message().contains("the nearest existing paths are: Sub/"),
                "{raw}: {}",
                err.message()
            );
            let err = vault.set_body(raw, "x", None).unwrap_err();
            assert_eq!(err.code(), code, "{raw}: {}", err.message());
            assert!(err.message().contains("Sub/"), "{raw}: {}", err.message());
        }
    }

    #[test]
    fn a_new_name_is_created_where_it_is_written_and_never_finds_a_note_elsewhere() {
        let (dir, vault) = named_vault();
        let deep = std::fs::read(dir.path().join("Sub/Deep.md")).unwrap();
        assert_eq!(vault.write("Deep.md", "# Root\n", false, None).unwrap().path, "Deep.md");
        let created = vault.append("Twin.md", "x", true, None).unwrap();
        assert_eq!(created.path, "Twin.md");
        assert!(created.message.starts_with("created Twin.md"), "{}", created.message);
        let err = vault.write("Boiler", "x", false, None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::UnsupportedSuffix);
        assert_eq!(std::fs::read(dir.path().join("Sub/Deep.md")).unwrap(), deep);
        // Without create_if_missing an append is an edit, and finds by name.
        assert_eq!(vault.append("Boiler", "more", false, None).unwrap().path, "Home/Heating.md");
    }

    #[test]
    fn an_absolute_path_inside_the_vault_is_read_relative_to_it_and_one_outside_makes_nothing() {
        let (dir, vault) = named_vault();
        let root = vault.root().to_path_buf();
        let abs = format!("{}/Notes/x.md", root.display());
        let change = vault.write(&abs, "# X\n", false, None).unwrap();
        assert_eq!(change.path, "Notes/x.md");
        assert!(change.message.contains(&format!("the absolute path {abs} is inside the vault")));
        assert!(root.join("Notes/x.md").is_file());
        let read = vault.read(&format!("{}/Sub/Deep", root.display()), None, &NoDocuments);
        assert_eq!(read.unwrap().path, "Sub/Deep.md");
        // The predecessor's root-relative form still works.
        assert_eq!(vault.read("/Sub/Deep.md", None, &NoDocuments).unwrap().path, "Sub/Deep.md");
        let before = snapshot(dir.path());
        for outside in ["/home/me/notes/y.md", "/tmp/elsewhere/y.md", "C:/Users/me/y.md"] {
            let err = vault.write(outside, "x", false, None).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidPath, "{outside}");
            assert!(err.message().contains(&root.display().to_string()), "{}", err.message());
            assert_eq!(vault.create_folder(outside).unwrap_err().code(), ErrorCode::InvalidPath);
            assert_eq!(
                vault.append(outside, "x", true, None).unwrap_err().code(),
                ErrorCode::InvalidPath
            );
        }
        assert_eq!(snapshot(dir.path()), before, "a refused absolute path made something");
        // A vault opened through a symlink knows that path too.
        #[cfg(unix)]
        {
            let elsewhere = tempfile::tempdir().unwrap();
            let link = elsewhere.path().join("vault");
            std::os::unix::fs::symlink(&root, &link).unwrap();
            let linked = Vault::open("t", &link, &settings()).unwrap();
            let via = format!("{}/Sub/Sub.md", link.display());
            assert_eq!(linked.read(&via, None, &NoDocuments).unwrap().path, "Sub/Sub.md");
        }
    }
}
