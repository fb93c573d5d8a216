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
//!
//! This file holds what every operation shares: the forgiving lookup of a caller's path
//! (`Reach`), the expected-hash check, the write path (`write_note`, `finish`) and `Change`.
//! The operations themselves live by concept in `read`, `write`, `patch`, `remove`, `moves`
//! and `retag`.

mod moves;
mod patch;
mod read;
mod remove;
mod retag;
mod write;

pub use read::DocumentText;
pub(crate) use read::{EntryKind, FileStat, HeadingEntry, Listing, NoteMap, NoteRead};
pub(crate) use retag::TagRenamed;

use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorCode, Result};
use crate::vault::edit::{self};
use crate::vault::find::Named;
use crate::vault::path::{self, Access, Reading, Rooting, Target, gate};
use crate::vault::{Vault, canvas, diff, find, frontmatter, fs};

/// Appended to a confirmation when the note has no frontmatter to carry a timestamp.
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

/// The words both suggestions of nearest paths begin with ([`Vault::not_found`],
/// [`Vault::with_nearest`]), so that [`without_nearest`] can take them off again.
const NEAREST: &str = "; the nearest existing paths are: ";

/// A refusal without its nearest-path suggestions, for a caller that may not see every path
/// (a client's grant): they could name one it may not see.
pub(crate) fn without_nearest(e: Error) -> Error {
    match e.message().split_once(NEAREST) {
        Some((head, _)) => {
            Error::new(e.code(), format!("{head}; list the folder to see what is there"))
        }
        None => e,
    }
}

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

/// The confirmation of a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The vault written to.
    pub(crate) vault: String,
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
    pub(crate) indexed: Option<Indexed>,
    /// For an edit of a note: a short unified diff of what it changed (the timestamp bump
    /// included), so the caller need not read the note back.
    pub(crate) diff: Option<String>,
    /// For a section replace: the text it replaced.
    pub(crate) replaced: Option<String>,
    /// What the edit did that the caller may not have meant (a heading pushed past level 6).
    pub(crate) warnings: Vec<edit::Warning>,
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
    pub(crate) fn as_str(self) -> &'static str {
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

/// Lowercase hex sha256 of some bytes: the etag of a note.
pub fn content_hash(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// [`content_hash`] of what a reader holds, read through a small buffer rather than into
/// memory (an attachment may be a video of gigabytes), with the number of bytes read.
pub(crate) fn content_hash_of(mut r: impl std::io::Read) -> std::io::Result<(String, u64)> {
    let (mut hasher, mut buf, mut read) = (Sha256::new(), vec![0; 64 * 1024], 0u64);
    loop {
        match r.read(&mut buf) {
            Ok(0) => return Ok((hex(&hasher.finalize()), read)),
            Ok(n) => {
                hasher.update(&buf[..n]);
                read += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn hex(digest: &[u8]) -> String {
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
    pub(crate) fn vault_path(&self, raw: &str) -> Result<String> {
        Ok(path::normalize(&self.unrooted(raw)?.0)?.join("/"))
    }

    /// The existing file a caller's path means, forgiving how agents write paths: when the
    /// path is not there as written, its percent-decoded form, the form with `.md` added and
    /// a unique case-insensitive match are tried, and with [`Reach::Name`] a note name or
    /// partial path anywhere in the vault (Obsidian's wikilink resolution, then `aliases`),
    /// each through the gate. The gate's refusal of the path as written stands when none of
    /// them exists, except a missing suffix or a folder, which are what a name looks like:
    /// those refusals name the nearest existing paths.
    ///
    /// With [`Reach::Name`], a path that names nothing as written is read two ways more:
    /// with Windows' separator (`Home\Boiler.md`) as `/`, since the gate lets no path hold a
    /// backslash, so no file's name can; and written as a link (`[[Boiler]]`,
    /// `Boiler#Service`: `find::as_link`), as that link's note. Only a read takes the part a
    /// fragment names; an edit of one is refused, naming the path and the part to pass instead,
    /// since an edit names its part in its own target.
    fn forgiving(&self, raw: &str, access: Access, reach: Reach) -> Result<Lookup> {
        let literal = self.forgiving_path(raw, access, reach);
        if reach != Reach::Name || matches!(literal, Ok(Lookup::Found(_))) {
            return literal;
        }
        let slashed = raw.replace('\\', "/");
        let link = find::as_link(&slashed);
        let path = match &link {
            Some(link) => link.target.as_str(),
            None if slashed != raw => slashed.as_str(),
            None => return literal,
        };
        let written = raw.trim().to_string();
        match self.forgiving_path(path, access, reach) {
            Ok(Lookup::Found(mut t)) => {
                let Some(link) = link else {
                    t.reading = Reading::Slashed { written };
                    return Ok(Lookup::Found(t));
                };
                if let Some(section) = &link.section
                    && access != Access::Read
                {
                    return Err(Error::new(
                        ErrorCode::InvalidRequest,
                        format!(
                            "'{}' names the part {section} of {}; pass the path {} alone, and \
                             name {section} as the edit's target",
                            raw.trim(),
                            t.rel,
                            t.rel
                        ),
                    ));
                }
                t.reading = Reading::ByLink { written, section: link.section };
                Ok(Lookup::Found(t))
            }
            // A link in brackets that names nothing is answered as the link it is: its target
            // is what missed, and the nearest paths are the target's.
            Ok(missing) if link.as_ref().is_some_and(|l| l.bracketed) => Ok(missing),
            Err(e) if link.as_ref().is_some_and(|l| l.bracketed) => Err(Error::new(
                e.code(),
                format!("the link '{written}' names no file: {}", e.message()),
            )),
            // Otherwise the caller hears about the path as written.
            _ => literal,
        }
    }

    /// [`Vault::forgiving`] for a path, before any reading of its separators or as a link.
    fn forgiving_path(&self, raw: &str, access: Access, reach: Reach) -> Result<Lookup> {
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
            match find::by_name(&self.link_paths_of(&files), &path) {
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
    pub(crate) fn existing(&self, raw: &str) -> Result<String> {
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
                "{shown} does not exist{NEAREST}{}. Retry with one of them, or list the folder",
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
                "{}{NEAREST}{}. Retry with one of them",
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
        // The note verbs would write Markdown into a canvas's JSON (see the gate's refusal).
        if canvas::is_canvas(&target.rel) {
            return Err(Error::new(
                ErrorCode::IsDocument,
                format!(
                    "{} is a canvas; canvases can be read, searched, moved and deleted, but \
                     not {verb}; change it in Obsidian",
                    target.rel
                ),
            ));
        }
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
    pub(crate) fn check_scope(&self, raw: &str, folder: bool, scope: &str) -> Result<()> {
        // The widest file access (a move of an attachment is scoped too); the operation's own
        // gate still refuses what its verb does not take.
        let target = self.gate(raw, if folder { Access::Folder } else { Access::Move })?;
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

    fn existing_text(&self, target: &Target, expected: Option<&str>) -> Result<String> {
        match self.current(target, expected)? {
            Some(bytes) => utf8(target, bytes),
            None => Err(Error::new(ErrorCode::NotFound, format!("{} does not exist", target.rel))),
        }
    }
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
    use crate::docs::Extraction;
    use crate::vault::edit::Operation;
    use serde_json::Value;

    pub(super) fn snapshot(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
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

    pub(super) fn settings() -> VaultSettings {
        VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 0,
            timestamp_key: "timestamp".into(),
        }
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

    fn append(content: &str) -> crate::vault::PatchRequest {
        use crate::vault::patch::{PatchSpec, Spelling};
        PatchSpec::new("Log", Operation::Append, content).build(&Spelling::TOOL).unwrap()
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
    fn a_path_written_as_a_link_reads_its_note_and_the_part_it_names_and_an_edit_says_how() {
        let (dir, vault) = named_vault();
        let read = vault.read("[[Deep]]", None, &NoDocuments).unwrap();
        assert_eq!((read.path.as_str(), read.section.as_deref()), ("Sub/Deep.md", None));
        let said = read.reading.sentence(&read.path).unwrap();
        assert!(said.contains("the link '[[Deep]]' was read as Sub/Deep.md"), "{said}");
        for raw in ["Deep#Log", "[[Deep#Log|the log]]", "![[Sub/Deep.md#Log]]", "deep.md#log"] {
            let read = vault.read(raw, None, &NoDocuments).unwrap();
            assert_eq!(read.path, "Sub/Deep.md", "{raw}");
            assert_eq!(
                (read.section.as_deref(), read.content.as_str()),
                (Some("Deep::Log"), "## Log\n\nold\n"),
                "{raw}"
            );
        }
        // An alias is a link's target too, and the same section asked twice is one.
        assert_eq!(vault.read("[[Boiler]]", None, &NoDocuments).unwrap().path, "Home/Heating.md");
        assert!(vault.read("Deep#Log", Some("Log"), &NoDocuments).is_ok());
        let err = vault.read("Deep#Log", Some("Deep"), &NoDocuments).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidRequest);
        let err = vault.read("Deep#Nowhere", None, &NoDocuments).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
        // A link to nothing is refused as a link, with the paths nearest its target.
        let err = vault.read("[[Deap]]", None, &NoDocuments).unwrap_err();
        assert_eq!(err.code(), ErrorCode::UnsupportedSuffix);
        assert!(
            err.message().starts_with("the link '[[Deap]]' names no file"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("Sub/Deep.md"), "{}", err.message());
        let err = vault.read("[[Sub/Nothing.md]]", None, &NoDocuments).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound);
        assert!(
            err.message().starts_with("[[Sub/Nothing.md]] does not exist"),
            "{}",
            err.message()
        );

        // An edit takes the link's note, but not a part named in the path: it says what to pass.
        let before = snapshot(dir.path());
        let err = vault.patch("Deep#Log", &append("- new"), None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidRequest);
        assert!(err.message().contains("pass the path Sub/Deep.md alone"), "{}", err.message());
        assert_eq!(snapshot(dir.path()), before);
        let change = vault.patch("[[Deep]]", &append("- new"), None).unwrap();
        assert_eq!(change.path, "Sub/Deep.md");
    }

    #[test]
    fn windows_separators_read_and_edit_an_existing_note_but_never_name_a_new_one() {
        let (dir, vault) = named_vault();
        let read = vault.read("Sub\\Deep.md", None, &NoDocuments).unwrap();
        assert_eq!(read.path, "Sub/Deep.md");
        assert_eq!(read.reading, Reading::Slashed { written: "Sub\\Deep.md".into() });
        let read = vault.read("Sub\\Deep#Log", None, &NoDocuments).unwrap();
        assert_eq!(
            (read.path.as_str(), read.section.as_deref()),
            ("Sub/Deep.md", Some("Deep::Log"))
        );
        let change = vault.patch("sub\\deep", &append("- new"), None).unwrap();
        assert!(change.message.contains("separate folders with '/'"), "{}", change.message);
        // A new note is named as written, and a backslash is no name.
        let before = snapshot(dir.path());
        let err = vault.write("Sub\\New.md", "# New\n", false, None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidPath);
        // Nor does it open a way out of the vault.
        let err = vault.read("..\\..\\etc\\passwd.md", None, &NoDocuments).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidPath);
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn a_file_whose_name_holds_a_hash_is_read_as_written_before_any_link_reading() {
        let (dir, vault) = named_vault();
        std::fs::write(dir.path().join("C# notes.md"), "# C sharp\n").unwrap();
        let read = vault.read("C# notes.md", None, &NoDocuments).unwrap();
        assert_eq!((read.path.as_str(), &read.reading), ("C# notes.md", &Reading::AsWritten));
        assert_eq!(read.section, None);
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
    fn a_refusal_without_its_nearest_paths_keeps_its_code_and_names_none() {
        let (_dir, v) = named_vault();
        for raw in ["Deap", "Deap.md"] {
            let e = v.read(raw, None, &NoDocuments).unwrap_err();
            assert!(e.message().contains(NEAREST), "{}", e.message());
            let plain = without_nearest(e.clone());
            assert_eq!(plain.code(), e.code());
            assert!(!plain.message().contains(NEAREST), "{}", plain.message());
            assert!(plain.message().ends_with("list the folder to see what is there"), "{plain}");
        }
        let other = Error::new(ErrorCode::Conflict, "changed; read it again");
        assert_eq!(without_nearest(other.clone()), other);
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

    #[test]
    fn an_attachment_opens_at_the_span_chosen_from_its_length_with_the_whole_files_hash() {
        use crate::vault::attachment::{Span, SpanRead};
        use std::io::Read;
        let (dir, vault) = named_vault();
        let clip: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("Sub/clip.mp4"), &clip).unwrap();
        let sent = |mut body: crate::vault::attachment::Opened| {
            let mut out = Vec::new();
            (&mut body.file).take(body.len).read_to_end(&mut out).unwrap();
            out
        };

        let SpanRead::Whole { path, etag, body, extent, .. } = vault
            .read_attachment_span("Sub/clip.mp4", |e| {
                assert_eq!(e.total, 100_000, "the choice is made against the file's length");
                Span::Whole
            })
            .unwrap()
        else {
            panic!("a whole read")
        };
        assert_eq!(
            (path.as_str(), etag, extent.total),
            ("Sub/clip.mp4", content_hash(&clip), 100_000)
        );
        assert_eq!(sent(body), clip, "the hash pass left the file at its start");

        let part = vault.read_attachment_span("Sub/clip.mp4", |_| Span::Bytes(70_000..=70_009));
        let SpanRead::Part { start, body, .. } = part.unwrap() else { panic!("a part") };
        assert_eq!((start, sent(body)), (70_000, clip[70_000..=70_009].to_vec()));

        // A range held by its tag is kept while the file hashes to it, else all of it is sent.
        let held =
            |etag: &str| Span::IfTagged { etag: etag.into(), then: Box::new(Span::Bytes(5..=9)) };
        let r = vault.read_attachment_span("Sub/clip.mp4", |_| held(&content_hash(&clip)));
        let SpanRead::Part { start, body, .. } = r.unwrap() else { panic!("a part") };
        assert_eq!((start, sent(body)), (5, clip[5..=9].to_vec()));
        let r = vault.read_attachment_span("Sub/clip.mp4", |_| held("stale")).unwrap();
        let SpanRead::Whole { etag, body, .. } = r else { panic!("the whole file") };
        assert_eq!((etag, sent(body)), (content_hash(&clip), clip.clone()));

        // A span the caller chose past the end opens nothing, whatever it checked.
        for span in [Span::Beyond, Span::Bytes(99_990..=100_000)] {
            let r = vault.read_attachment_span("Sub/clip.mp4", |_| span.clone()).unwrap();
            assert!(matches!(r, SpanRead::Beyond { .. }), "{r:?}");
        }
        // Read whole into memory (as MCP does), the same bytes.
        let whole = vault.read_attachment_span("Sub/clip.mp4", |_| Span::Whole).unwrap();
        let SpanRead::Whole { body, .. } = whole else { panic!("a whole read") };
        assert_eq!(body.into_bytes().unwrap(), clip);
    }

    #[test]
    #[cfg(unix)]
    fn an_attachments_hash_is_reused_for_the_same_file_and_read_again_once_it_changes() {
        use crate::vault::attachment::{Span, SpanRead};
        use crate::vault::known_hashes::{KnownHashes, Stamp};
        let (dir, mut vault) = named_vault();
        vault.hashes = KnownHashes::with_settle(std::time::Duration::ZERO);
        let abs = dir.path().join("Sub/clip.mp4");
        std::fs::write(&abs, vec![7u8; 4096]).unwrap();
        let tag = |vault: &Vault| match vault.read_attachment_span("Sub/clip.mp4", |_| Span::Whole)
        {
            Ok(SpanRead::Whole { etag, .. }) => etag,
            other => panic!("a whole read: {other:?}"),
        };
        assert_eq!(tag(&vault), content_hash(&[7u8; 4096]));

        // What is remembered for this very file is what a read answers, unread.
        let stamp = Stamp::of(&std::fs::metadata(&abs).unwrap());
        let now = std::time::SystemTime::now();
        vault.hashes.remember("Sub/clip.mp4", &stamp, &stamp, now, "remembered");
        assert_eq!(tag(&vault), "remembered");

        // Rewritten in place at the same length: read again (once the file system's clock has
        // moved, so the change time differs).
        use std::os::unix::fs::MetadataExt;
        let ctime = |p: &std::path::Path| {
            let m = std::fs::metadata(p).unwrap();
            (m.ctime(), m.ctime_nsec())
        };
        let probe = dir.path().join("probe");
        while {
            std::fs::write(&probe, b"").unwrap();
            ctime(&probe) <= ctime(&abs)
        } {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::fs::write(&abs, vec![8u8; 4096]).unwrap();
        assert_eq!(tag(&vault), content_hash(&[8u8; 4096]));
    }
}
