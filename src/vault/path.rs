//! The path gate: the one place a caller-supplied path becomes a location inside a vault.
//!
//! Every operation passes its paths through [`gate`] before touching the disk. The gate refuses
//! NUL bytes, backslashes, traversal out of the root (also percent-encoded), dotted components,
//! any symlink component (checked on the unresolved path, so a link cannot be used to step out
//! or to alias another note), folder components named like files, the vault root where a file
//! is needed, the generated root `index.md` for writers, suffixes the verb does not take,
//! any write of an attachment (`vault::attachment`: images, audio and video are read-only), and
//! names or paths longer than the filesystem takes (so such a write is refused before any
//! folder is made for it, rather than failing halfway).
//!
//! Before the gate, [`unroot`] decides what a path that looks absolute means: an absolute
//! filesystem path inside the vault folder is read relative to it (and the reply says so),
//! one that is clearly elsewhere on the machine is refused, and a leading `/` before a folder
//! of the vault keeps meaning "from the vault root". Neither ever makes folders from a path
//! outside the vault.
//!
//! The gate does not check existence: callers decide whether absence is `not_found` or fine
//! (a create). It never reads file contents.

use std::path::{Path, PathBuf};

use percent_encoding::percent_decode_str;

use crate::error::{Error, ErrorCode, Result};
use crate::vault::{attachment, canvas};

/// The longest name, in bytes, one path component may have: `NAME_MAX` on Linux's common
/// filesystems (ext4, XFS, Btrfs, tmpfs) and on macOS's APFS. A filesystem with a shorter limit
/// (eCryptfs) still refuses at write time, and that write takes away the folders it made.
pub(crate) const MAX_NAME_BYTES: usize = 255;

/// The longest absolute path, in bytes, the kernel takes in one call: Linux's `PATH_MAX` of
/// 4096 counts the terminating NUL.
const MAX_ABSOLUTE_PATH_BYTES: usize = 4095;

/// Room kept for the staged temporary beside a target (`.mdvault-<pid>-XXXXXX.tmp`, at most
/// 9 + 10 + 1 + 6 + 4 bytes), which lives in the target's folder and may be longer than the
/// target's own name: a path is only writable if its temporary's path fits too.
const TEMP_NAME_ROOM: usize = 32;

/// The longest vault-relative path a vault at `root` takes for writing: what is left of the
/// kernel's limit after the root's own path, the separator and the temporary's room.
#[cfg(test)]
pub(crate) fn max_rel_path_bytes(root: &Path) -> usize {
    max_rel_bytes(root, true)
}

/// Readers need no room for a temporary: a file the filesystem holds is never refused.
fn max_rel_bytes(root: &Path, writes: bool) -> usize {
    let room = if writes { TEMP_NAME_ROOM } else { 0 };
    MAX_ABSOLUTE_PATH_BYTES.saturating_sub(root.as_os_str().len() + 1 + room)
}

/// What the caller is about to do with the path; decides which paths are acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read a note, document or canvas.
    Read,
    /// Read an attachment (an image, audio or video a note embeds; `vault::attachment`) as
    /// its bytes. Attachments are read-only: every write access refuses one.
    ReadAttachment,
    /// List a folder; the vault root is allowed.
    List,
    /// Create or change a note (`.md` only, never the generated root `index.md`).
    WriteNote,
    /// Delete or move a file that may be a note, an allowlisted document or a canvas.
    WriteFile,
    /// Move a file: what `WriteFile` takes, and attachments too. A move changes no byte of
    /// the file it moves, so it is the one write an attachment takes (its links follow it).
    Move,
    /// Store an uploaded document (allowlisted suffix only).
    WriteDocument,
    /// Create or delete a folder; no component may look like a file.
    Folder,
}

impl Access {
    fn writes(self) -> bool {
        !matches!(self, Access::Read | Access::ReadAttachment | Access::List)
    }
}

/// A path that passed the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Vault-relative, `/`-separated, normalised; empty for the vault root.
    pub rel: String,
    /// Absolute path on disk (under the canonical vault root).
    pub abs: PathBuf,
    /// How the caller's path came to name it, when the caller did not write `rel`.
    pub(crate) reading: Reading,
}

/// How a caller's path came to name its target when the caller did not write the target's
/// vault path: said in the reply, so the caller learns the path to use next time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Reading {
    /// As written, or another spelling of the same place (percent-decoded, `.md` added,
    /// another case), which the reply's path shows well enough.
    #[default]
    AsWritten,
    /// An absolute filesystem path (`written`) inside the vault folder, read relative to it.
    Unrooted {
        /// The path as the caller wrote it.
        written: String,
    },
    /// A note name or partial path (`written`) found where Obsidian resolves a wikilink.
    ByName {
        /// The name as the caller wrote it.
        written: String,
    },
    /// A name (`written`) found in a note's `aliases` frontmatter.
    ByAlias {
        /// The name as the caller wrote it.
        written: String,
    },
    /// A path with Windows' separator (`written`: `Home\Boiler.md`), read with `/`.
    Slashed {
        /// The path as the caller wrote it.
        written: String,
    },
    /// A path written as a link (`written`: `[[Boiler#Service]]`, `Boiler#Service`), read as
    /// its note, and the part its fragment picks (`find::as_link`), which a read then reads.
    ByLink {
        /// The path as the caller wrote it.
        written: String,
        /// The heading path or `^block` its fragment names.
        section: Option<String>,
    },
}

impl Reading {
    /// What the reply says about it, for the target at `rel`; `None` when there is nothing
    /// to say.
    pub(crate) fn sentence(&self, rel: &str) -> Option<String> {
        match self {
            Reading::AsWritten => None,
            Reading::Unrooted { written } => Some(format!(
                "the absolute path {written} is inside the vault and was read as {rel}; paths \
                 are relative to the vault folder, so pass {rel} next time"
            )),
            Reading::ByName { written } => Some(format!("'{written}' was found by name: {rel}")),
            Reading::ByAlias { written } => {
                Some(format!("'{written}' was found as an alias of {rel}"))
            }
            Reading::Slashed { written } => Some(format!(
                "'{written}' was read as {rel}; separate folders with '/', so pass {rel} next time"
            )),
            Reading::ByLink { written, section: None } => {
                Some(format!("the link '{written}' was read as {rel}; pass {rel} next time"))
            }
            Reading::ByLink { written, section: Some(section) } => Some(format!(
                "the link '{written}' was read as {rel}, section {section}; pass the path {rel} \
                 and the section {section} next time"
            )),
        }
    }

    /// The part of the note a link's fragment named, if the path was written as such a link.
    pub(crate) fn section(&self) -> Option<&str> {
        match self {
            Reading::ByLink { section, .. } => section.as_deref(),
            _ => None,
        }
    }

    /// `message` with the sentence, if any, added in parentheses.
    pub(crate) fn told(&self, rel: &str, message: String) -> String {
        match self.sentence(rel) {
            Some(s) => format!("{message} ({s})"),
            None => message,
        }
    }
}

/// The places a vault folder may be named by in an absolute path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Roots<'a> {
    /// The canonical root (symlinks resolved), which the gate builds every target under.
    pub(crate) canonical: &'a Path,
    /// The root as configured, when it differs: the form an agent more likely saw.
    pub(crate) configured: Option<&'a Path>,
    /// The home folder a leading `~` stands for, when known.
    pub(crate) home: Option<&'a Path>,
}

/// What [`unroot`] made of a caller's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rooting {
    /// A vault-relative path, to be gated as written (a leading `/` included: the
    /// predecessor's "from the vault root").
    Relative,
    /// An absolute filesystem path inside the vault folder; the vault-relative path it names.
    Inside(String),
}

/// The top folders of the usual Unix, Linux and macOS filesystems. A leading-slash path that
/// starts with one the vault does not have is an absolute path outside the vault, even when
/// this machine has no such folder: the caller may run on another one.
const SYSTEM_TOPS: &[&str] = &[
    "home", "Users", "tmp", "root", "etc", "var", "usr", "opt", "mnt", "media", "srv", "private",
    "Volumes", "proc", "sys", "dev", "run",
];

/// Decides what a path that looks absolute means, before the gate reads it (every surface's
/// paths arrive here through the vault's operations, so the rule is the same everywhere):
///
/// - one that starts with the vault folder (canonical or as configured; `~` is the home
///   folder) names the place inside it: [`Rooting::Inside`];
/// - one whose first part the vault has (by its exact name: `/Home/...`, even `c:/...`), or a
///   leading `/` before no folder of this machine nor a usual system one, is vault-relative,
///   as the predecessor wrote "from the vault root";
/// - anything else that starts with `/`, `~` or a drive letter (`C:\`, `C:/`) is an absolute
///   path outside the vault, refused with `invalid_path`: taking it as vault-relative would
///   make `home/me/...` folders inside the vault.
pub(crate) fn unroot(roots: &Roots<'_>, raw: &str) -> Result<Rooting> {
    let t = raw.trim();
    let bytes = t.as_bytes();
    let drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'/' | b'\\');
    // A vault folder named like a drive (`c:`) is the vault's, as a leading `/` before a
    // folder the vault has is.
    if drive && !has_entry(roots.canonical, &t[..2]) {
        return Err(outside(roots, raw, &[]));
    }
    let tilde = t == "~" || t.starts_with("~/");
    if tilde && has_entry(roots.canonical, "~") {
        return Ok(Rooting::Relative);
    }
    let Some(absolute) = absolute(roots, t) else {
        return if tilde { Err(outside(roots, raw, &[])) } else { Ok(Rooting::Relative) };
    };
    if let Some(rel) = inside(roots, &absolute) {
        return Ok(Rooting::Inside(rel));
    }
    let first = match (tilde, t.split('/').find(|p| !p.is_empty())) {
        // `~/...` that is not under the vault folder.
        (true, _) => return Err(outside(roots, raw, &parts_of(&absolute))),
        // `/` alone: the vault root, as it always was.
        (false, None) => return Ok(Rooting::Relative),
        (false, Some(first)) => first,
    };
    if has_entry(roots.canonical, first) {
        return Ok(Rooting::Relative);
    }
    // A folder at this machine's own root (`/data`, `/workspace`) is as clear as a usual one.
    let on_machine = !first.starts_with('.')
        && !first.contains('\0')
        && std::fs::symlink_metadata(Path::new("/").join(first)).is_ok();
    if SYSTEM_TOPS.contains(&first) || on_machine {
        return Err(outside(roots, raw, &parts_of(&absolute)));
    }
    Ok(Rooting::Relative)
}

/// The absolute filesystem path `raw` spells, if it spells one: `/...`, or `~/...` when the
/// home folder is known.
pub(crate) fn absolute(roots: &Roots<'_>, raw: &str) -> Option<PathBuf> {
    let t = raw.trim();
    if t == "~" || t.starts_with("~/") {
        return roots.home.map(|home| home.join(t[1..].trim_start_matches('/')));
    }
    t.starts_with('/').then(|| PathBuf::from(t))
}

/// The vault-relative path an absolute path names when it lies in the vault folder (as either
/// root names it); `None` when it lies elsewhere. `..` is left for the gate to refuse.
pub(crate) fn inside(roots: &Roots<'_>, absolute: &Path) -> Option<String> {
    [Some(roots.canonical), roots.configured].into_iter().flatten().find_map(|root| {
        let rest = absolute.strip_prefix(root).ok()?;
        let parts: Vec<&str> = rest.iter().filter_map(|p| p.to_str()).collect();
        Some(parts.join("/"))
    })
}

/// The normal components of an absolute path, as strings.
fn parts_of(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// True when the vault folder has an entry named exactly `name` (hidden entries and symlinks
/// included: the gate refuses those with its own words). Exactly: a vault's `Home` folder
/// must not turn `/home/me/...` into a vault path, and a case-insensitive filesystem would
/// say `home` is there.
fn has_entry(root: &Path, name: &str) -> bool {
    std::fs::read_dir(root)
        .map(|dir| dir.flatten().any(|e| e.file_name().to_str() == Some(name)))
        .unwrap_or(false)
}

/// The refusal of an absolute path outside the vault: it names the vault folder and the
/// relative form to use, the longest tail of the path whose folder the vault has (so
/// `/home/me/notes/Home/Boiler.md` suggests `Home/Boiler.md`), else the file name.
fn outside(roots: &Roots<'_>, raw: &str, parts: &[String]) -> Error {
    let root = roots.configured.unwrap_or(roots.canonical);
    let tail = (1..parts.len()).find_map(|i| {
        let folder = &parts[i..parts.len() - 1];
        let visible = folder.iter().all(|p| !p.starts_with('.'));
        (!folder.is_empty() && visible && roots.canonical.join(folder.join("/")).is_dir())
            .then(|| parts[i..].join("/"))
    });
    let suggestion = tail.or_else(|| {
        let name = raw.trim().rsplit(['/', '\\']).find(|p| !p.is_empty())?;
        Some(name.to_string())
    });
    let retry = match suggestion {
        Some(s) => format!("retry with '{s}', or another path relative to that folder"),
        None => "retry with a path relative to that folder".to_string(),
    };
    Error::new(
        ErrorCode::InvalidPath,
        format!(
            "'{raw}' is an absolute path outside the vault, which is the folder {}; nothing \
             was read or written there. Paths are relative to the vault folder: {retry}",
            root.display()
        ),
    )
}

/// The file kinds the gate needs to tell apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suffixes {
    /// Allowlisted document suffixes, lowercase with a leading dot (`.pdf`).
    pub documents: Vec<String>,
}

impl Suffixes {
    /// True for a `.md` name (case-insensitive).
    pub(crate) fn is_note(name: &str) -> bool {
        has_suffix(name, ".md")
    }

    /// True for a name with an allowlisted document suffix.
    pub(crate) fn is_document(&self, name: &str) -> bool {
        self.documents.iter().any(|s| has_suffix(name, s))
    }

    /// True for a note, a document or a canvas: the files the file verbs take.
    fn counts_as_file(&self, name: &str) -> bool {
        Self::is_note(name) || self.is_document(name) || canvas::is_canvas(name)
    }

    fn looks_like_file(&self, name: &str) -> bool {
        Self::is_note(name) || self.is_document(name)
    }
}

fn has_suffix(name: &str, suffix: &str) -> bool {
    name.len() > suffix.len()
        && name.is_char_boundary(name.len() - suffix.len())
        && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// Lexically normalises a caller-supplied path into vault-relative components.
///
/// Leading and trailing whitespace and slashes are ignored (a leading slash means "from the
/// vault root"). `.` segments vanish and `..` pops, so `Notes/../Todo.md` is `Todo.md`; popping
/// past the root is an escape.
pub(crate) fn normalize(raw: &str) -> Result<Vec<String>> {
    if raw.contains('\0') {
        return Err(invalid(raw, "contains a NUL byte"));
    }
    if raw.contains('\\') {
        return Err(invalid(raw, "contains a backslash; separate folders with '/'"));
    }
    let mut parts: Vec<String> = Vec::new();
    for seg in raw.trim().trim_matches('/').split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(invalid(raw, "escapes the vault"));
                }
            }
            _ => {
                if encodes_traversal(seg) {
                    return Err(invalid(
                        raw,
                        "escapes the vault through a percent-encoded '.', '/' or '\\'",
                    ));
                }
                if seg.starts_with('.') {
                    return Err(invalid(
                        raw,
                        "has a component starting with '.'; hidden folders and files are off limits",
                    ));
                }
                parts.push(seg.to_string());
            }
        }
    }
    Ok(parts)
}

/// True when a segment, decoded once or more, becomes `.`, `..` or hides a separator or NUL.
/// Callers that already decoded a URL once would otherwise let `%2E%2E` through a second layer.
fn encodes_traversal(seg: &str) -> bool {
    let mut current = seg.to_string();
    for _ in 0..3 {
        if !current.contains('%') {
            return false;
        }
        let decoded = percent_decode_str(&current).decode_utf8_lossy().into_owned();
        if decoded == current {
            return false;
        }
        if decoded.split(['/', '\\']).any(|p| p == ".." || p == ".")
            || decoded.contains(['/', '\\', '\0'])
        {
            return true;
        }
        current = decoded;
    }
    false
}

/// Refuses a component longer than [`MAX_NAME_BYTES`] or a path longer than
/// [`max_rel_path_bytes`]: the kernel would refuse it only after the write had made folders.
fn check_lengths(root: &Path, raw: &str, parts: &[String], access: Access) -> Result<()> {
    if let Some(long) = parts.iter().find(|p| p.len() > MAX_NAME_BYTES) {
        return Err(Error::new(
            ErrorCode::InvalidPath,
            format!(
                "'{}' has a name of {} bytes; a file or folder name may be at most \
                 {MAX_NAME_BYTES} bytes, choose a shorter name",
                shorten(raw),
                long.len()
            ),
        ));
    }
    let rel_len = parts.iter().map(String::len).sum::<usize>() + parts.len().saturating_sub(1);
    let max = max_rel_bytes(root, access.writes());
    if rel_len > max {
        return Err(Error::new(
            ErrorCode::InvalidPath,
            format!(
                "'{}' is {rel_len} bytes long; paths in this vault may be at most {max} bytes \
                 (the system's 4096-byte path limit less the vault folder's own path), use a \
                 shorter path or fewer folders",
                shorten(raw)
            ),
        ));
    }
    Ok(())
}

/// The start of an over-long path, for a message that should not itself be kilobytes long.
fn shorten(raw: &str) -> String {
    const SHOWN_CHARS: usize = 60;
    if raw.chars().count() <= SHOWN_CHARS {
        return raw.to_string();
    }
    let head: String = raw.chars().take(SHOWN_CHARS).collect();
    format!("{head}...")
}

fn invalid(raw: &str, why: &str) -> Error {
    Error::new(ErrorCode::InvalidPath, format!("'{raw}' {why}; use a path inside the vault"))
}

/// Checks `raw` for `access` against a vault whose canonical root is `root`.
pub fn gate(root: &Path, suffixes: &Suffixes, raw: &str, access: Access) -> Result<Target> {
    let mut parts = normalize(raw)?;
    one_spelling(root, raw, &mut parts)?;
    // Readers too: a name the filesystem cannot hold cannot exist, and the answer should say
    // why rather than report it missing.
    check_lengths(root, raw, &parts, access)?;
    let rel = parts.join("/");
    if parts.is_empty() && access != Access::List {
        return Err(Error::new(
            ErrorCode::InvalidPath,
            format!("'{raw}' is the vault root; name a note, document or folder inside it"),
        ));
    }

    // A folder named like a file (`Notes/Ideas.md/x.md`) would make a path that reads as a
    // note but is a directory; refusing it keeps every `.md` path a file.
    // A listing of a file answers "not a directory" later, which is the more useful refusal.
    let folder_parts = match access {
        Access::Folder => &parts[..],
        _ => &parts[..parts.len().saturating_sub(1)],
    };
    if let Some(bad) = folder_parts.iter().find(|p| suffixes.looks_like_file(p)) {
        return Err(Error::new(
            ErrorCode::UnsupportedSuffix,
            format!(
                "'{raw}' has a folder named '{bad}', which looks like a file; \
                 folder names may not end in .md or a document suffix"
            ),
        ));
    }

    if access.writes() && rel.eq_ignore_ascii_case("index.md") {
        return Err(Error::new(
            ErrorCode::InvalidPath,
            "index.md at the vault root is generated and protected; \
             change a note's title or description instead",
        ));
    }

    let name = parts.last().map(String::as_str).unwrap_or("");
    let wants_file = matches!(
        access,
        Access::Read
            | Access::ReadAttachment
            | Access::WriteNote
            | Access::WriteFile
            | Access::Move
    );
    if wants_file && !suffixes.counts_as_file(name) {
        // A folder given to a file verb deserves the folder advice, not a suffix lecture.
        let abs = reject_symlinks(root, &parts, raw)?;
        if abs.is_dir() {
            return Err(Error::new(
                ErrorCode::IsDirectory,
                format!("'{raw}' is a folder; list it, or use the folder operations"),
            ));
        }
    }
    let attachment = attachment::kind_of(name).is_some();
    match access {
        // Before the suffix rules, so a write of an image says why, not that it is no note.
        // A move is not among these: it keeps the bytes (`Access::Move`).
        Access::WriteNote | Access::WriteFile | Access::WriteDocument if attachment => {
            return Err(Error::new(
                ErrorCode::AttachmentReadOnly,
                format!(
                    "'{raw}' is an attachment (an image, audio or video file), which mdvault \
                     serves read-only: it cannot be written, patched or deleted here, only \
                     moved; change it in Obsidian or on disk"
                ),
            ));
        }
        Access::ReadAttachment if !attachment => {
            return Err(Error::new(
                ErrorCode::UnsupportedSuffix,
                format!(
                    "'{raw}' is not an attachment; attachments end in {}",
                    attachment::suffix_list()
                ),
            ));
        }
        // Obsidian owns a canvas's layout: a note's verbs would write Markdown into JSON, and a
        // whole-file put is Obsidian's job, so mdvault reads, moves and deletes canvases only.
        Access::WriteNote if canvas::is_canvas(name) => {
            return Err(Error::new(
                ErrorCode::UnsupportedSuffix,
                format!(
                    "'{raw}' is a canvas, which mdvault reads, searches, moves and deletes but \
                     does not write; change it in Obsidian"
                ),
            ));
        }
        Access::WriteNote if !Suffixes::is_note(name) => {
            return Err(Error::new(
                ErrorCode::UnsupportedSuffix,
                format!("'{raw}' is not a note; notes end in .md"),
            ));
        }
        Access::Move if attachment => {}
        Access::WriteFile | Access::Read | Access::Move if !suffixes.counts_as_file(name) => {
            return Err(Error::new(
                ErrorCode::UnsupportedSuffix,
                format!(
                    "'{raw}' is neither a note (.md), a canvas (.canvas) nor a document ({}); \
                     only those can be used here",
                    suffixes.documents.join(", ")
                ),
            ));
        }
        Access::WriteDocument if !suffixes.is_document(name) => {
            return Err(Error::new(
                ErrorCode::UnsupportedSuffix,
                format!(
                    "'{raw}' does not have a document suffix; allowed: {}",
                    suffixes.documents.join(", ")
                ),
            ));
        }
        _ => {}
    }

    let abs = reject_symlinks(root, &parts, raw)?;
    Ok(Target { rel, abs, reading: Reading::AsWritten })
}

/// Characters that reorder how a name is displayed (bidirectional controls): a name holding
/// one can show as a different name than it is (`invoice\u{202E}fdp.md` reads as
/// `invoicedm.pdf`), so no path may contain them.
const BIDI_CONTROLS: &[char] = &[
    '\u{061C}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}',
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// One name, one note: each component is compared in Unicode NFC, so `café.md` typed
/// decomposed (NFD, as macOS spells it) and composed (NFC) are the same note. A component
/// that exists as written is kept; else an entry of its folder whose NFC form is the same is
/// taken as written on disk; else (a new name) its NFC form is used. Refuses bidirectional
/// controls.
fn one_spelling(root: &Path, raw: &str, parts: &mut [String]) -> Result<()> {
    use unicode_normalization::{UnicodeNormalization, is_nfc};
    if parts.iter().any(|p| p.contains(BIDI_CONTROLS)) {
        return Err(invalid(
            raw,
            "contains a bidirectional control character (U+202E and the like), which makes a \
             name display as another; remove it",
        ));
    }
    let mut dir = root.to_path_buf();
    let mut on_disk = true;
    for part in parts.iter_mut() {
        if on_disk && dir.join(&*part).symlink_metadata().is_ok() {
            dir.push(&*part);
            continue;
        }
        let composed: String = part.nfc().collect();
        let found = on_disk
            .then(|| std::fs::read_dir(&dir).ok())
            .flatten()
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|name| !is_nfc(name) && name.nfc().eq(composed.chars()) || *name == composed);
        match found {
            Some(name) => *part = name,
            None => {
                *part = composed;
                on_disk = false;
            }
        }
        dir.push(&*part);
    }
    Ok(())
}

/// Walks the unresolved path from the root and refuses any existing component that is a
/// symlink. Stops at the first component that does not exist (nothing below it can be a link).
fn reject_symlinks(root: &Path, parts: &[String], raw: &str) -> Result<PathBuf> {
    let mut abs = root.to_path_buf();
    let mut exists = true;
    for part in parts {
        abs.push(part);
        if !exists {
            continue;
        }
        match std::fs::symlink_metadata(&abs) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(invalid(raw, "passes through a symbolic link"));
            }
            Ok(_) => {}
            Err(_) => exists = false,
        }
    }
    Ok(abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suffixes() -> Suffixes {
        Suffixes { documents: vec![".pdf".into()] }
    }

    #[test]
    fn two_unicode_spellings_of_a_name_are_one_note() {
        let dir = tempfile::tempdir().unwrap();
        let (nfc, nfd) = ("Caf\u{e9}.md", "Cafe\u{301}.md");
        // A new name is written composed, whichever spelling the caller used.
        let t = gate(dir.path(), &suffixes(), nfd, Access::WriteNote).unwrap();
        assert_eq!(t.rel, nfc);
        // A name on disk decomposed (as macOS writes it) is found by the composed spelling,
        // and kept as it is on disk.
        std::fs::create_dir(dir.path().join("Re\u{301}sume\u{301}")).unwrap();
        let t = gate(dir.path(), &suffixes(), "R\u{e9}sum\u{e9}/x.md", Access::WriteNote).unwrap();
        assert_eq!(t.rel, "Re\u{301}sume\u{301}/x.md");
        std::fs::write(dir.path().join(nfc), "x").unwrap();
        let t = gate(dir.path(), &suffixes(), nfd, Access::Read).unwrap();
        assert_eq!(t.rel, nfc);
    }

    #[test]
    fn bidirectional_controls_in_a_name_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for raw in ["invoice\u{202E}fdp.md", "a/\u{2066}b.md", "x\u{200F}.md"] {
            let e = gate(dir.path(), &suffixes(), raw, Access::WriteNote).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidPath, "{raw:?}");
            assert!(e.message().contains("bidirectional"), "{e:?}");
        }
    }

    fn code(root: &Path, raw: &str, access: Access) -> ErrorCode {
        gate(root, &suffixes(), raw, access).unwrap_err().code()
    }

    #[test]
    fn normalises_inside_paths() {
        assert_eq!(normalize("/Notes/./a/../b.md ").unwrap(), vec!["Notes", "b.md"]);
        assert_eq!(normalize("Notes//b.md/").unwrap(), vec!["Notes", "b.md"]);
    }

    #[test]
    fn refuses_escapes_and_hidden_parts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for raw in [
            "../x.md",
            "a/../../x.md",
            "%2E%2E/x.md",
            "a/%2e%2e%2fx.md",
            "%252E%252E/x.md",
            ".git/config.md",
            "a/.obsidian/x.md",
            "a\0b.md",
            "a\\b.md",
            "",
            "/",
        ] {
            assert_eq!(code(root, raw, Access::Read), ErrorCode::InvalidPath, "{raw:?}");
            assert_eq!(code(root, raw, Access::WriteNote), ErrorCode::InvalidPath, "{raw:?}");
        }
    }

    #[test]
    fn writers_may_not_touch_the_generated_index() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(code(dir.path(), "index.md", Access::WriteNote), ErrorCode::InvalidPath);
        assert_eq!(code(dir.path(), "/INDEX.md", Access::WriteFile), ErrorCode::InvalidPath);
        assert!(gate(dir.path(), &suffixes(), "index.md", Access::Read).is_ok());
        assert!(gate(dir.path(), &suffixes(), "Sub/index.md", Access::WriteNote).is_ok());
    }

    #[test]
    fn suffix_rules_per_access() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(code(root, "a.txt", Access::WriteNote), ErrorCode::UnsupportedSuffix);
        assert_eq!(code(root, "a.pdf", Access::WriteNote), ErrorCode::UnsupportedSuffix);
        assert_eq!(code(root, "a.exe", Access::WriteFile), ErrorCode::UnsupportedSuffix);
        assert_eq!(
            code(root, "Notes/Ideas.md/x.md", Access::WriteNote),
            ErrorCode::UnsupportedSuffix
        );
        assert_eq!(code(root, "Notes/Ideas.md", Access::Folder), ErrorCode::UnsupportedSuffix);
        assert!(gate(root, &suffixes(), "A/Files/x.PDF", Access::WriteFile).is_ok());
        assert!(gate(root, &suffixes(), "A/b.MD", Access::WriteNote).is_ok());
        assert_eq!(gate(root, &suffixes(), "", Access::List).unwrap().rel, "");
    }

    #[test]
    fn a_canvas_is_read_moved_and_deleted_but_never_written_as_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for access in [Access::Read, Access::WriteFile, Access::Move] {
            assert!(gate(root, &suffixes(), "Boards/Plan.canvas", access).is_ok(), "{access:?}");
        }
        let e = gate(root, &suffixes(), "Plan.canvas", Access::WriteNote).unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnsupportedSuffix);
        assert!(e.message().contains("is a canvas"), "{}", e.message());
        assert_eq!(code(root, "Plan.canvas", Access::WriteDocument), ErrorCode::UnsupportedSuffix);
        assert_eq!(code(root, "Plan.canvas", Access::ReadAttachment), ErrorCode::UnsupportedSuffix);
    }

    #[test]
    fn a_move_is_the_one_write_an_attachment_takes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for raw in ["a.png", "Home/Plan.SVG", "a.md", "x.pdf", "b.canvas"] {
            assert!(gate(root, &suffixes(), raw, Access::Move).is_ok(), "{raw}");
        }
        assert_eq!(code(root, "a.txt", Access::Move), ErrorCode::UnsupportedSuffix);
        assert_eq!(code(root, "../a.png", Access::Move), ErrorCode::InvalidPath);
        assert_eq!(code(root, "index.md", Access::Move), ErrorCode::InvalidPath);
    }

    #[test]
    fn attachments_pass_only_the_attachment_read_and_every_write_of_one_says_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for raw in ["a.png", "Home/Plan.SVG", "x/y.mp3"] {
            assert!(gate(root, &suffixes(), raw, Access::ReadAttachment).is_ok(), "{raw}");
            for access in [Access::WriteNote, Access::WriteFile, Access::WriteDocument] {
                let e = gate(root, &suffixes(), raw, access).unwrap_err();
                assert_eq!(e.code(), ErrorCode::AttachmentReadOnly, "{raw} {access:?}");
                assert!(e.message().contains("read-only"), "{e:?}");
            }
        }
        for raw in ["a.md", "a.pdf", "a.txt"] {
            assert_eq!(code(root, raw, Access::ReadAttachment), ErrorCode::UnsupportedSuffix);
        }
        // A note read does not take one: the attachment read is its own verb.
        assert_eq!(code(root, "a.png", Access::Read), ErrorCode::UnsupportedSuffix);
        // The gate's other refusals stand for attachments too.
        for raw in ["../a.png", ".obsidian/a.png", "a/.b.png", "%2E%2E/a.png"] {
            assert_eq!(code(root, raw, Access::ReadAttachment), ErrorCode::InvalidPath, "{raw}");
        }
        std::fs::create_dir(root.join("shots.png")).unwrap();
        assert_eq!(code(root, "shots.png", Access::ReadAttachment), ErrorCode::IsDirectory);
        #[cfg(unix)]
        {
            std::fs::write(root.join("real.png"), b"x").unwrap();
            std::os::unix::fs::symlink(root.join("real.png"), root.join("alias.png")).unwrap();
            assert_eq!(code(root, "alias.png", Access::ReadAttachment), ErrorCode::InvalidPath);
        }
    }

    #[test]
    fn refuses_names_and_paths_longer_than_the_filesystem_takes_and_says_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let longest = format!("{}.md", "n".repeat(MAX_NAME_BYTES - 3));
        assert!(gate(root, &suffixes(), &longest, Access::WriteNote).is_ok());
        let too_long = format!("Sub/{}.md", "n".repeat(MAX_NAME_BYTES - 2));
        let err = gate(root, &suffixes(), &too_long, Access::WriteNote).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidPath);
        assert!(err.message().contains("at most 255 bytes"), "{}", err.message());
        assert!(err.message().len() < 300, "the message echoes the whole name");
        // A multi-byte name is measured in bytes: 128 two-byte letters are 256 bytes.
        let wide = format!("{}.md", "é".repeat(128));
        assert_eq!(code(root, &wide, Access::WriteNote), ErrorCode::InvalidPath);
        assert_eq!(code(root, &"f".repeat(256), Access::Folder), ErrorCode::InvalidPath);

        let max = max_rel_path_bytes(root);
        let deep = format!("{}/x.md", vec!["f".repeat(200); max / 201 + 1].join("/"));
        assert!(deep.len() > max);
        let err = gate(root, &suffixes(), &deep, Access::WriteNote).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidPath);
        assert!(err.message().contains(&format!("at most {max} bytes")), "{}", err.message());
        let fits = format!("{}/x.md", "f/".repeat((max - 5) / 2).trim_end_matches('/'));
        assert!(fits.len() <= max);
        assert!(gate(root, &suffixes(), &fits, Access::WriteNote).is_ok());
        // A reader needs no room for a temporary beside the file.
        let read_only = format!("{}/x.md", "f/".repeat((max + 20) / 2).trim_end_matches('/'));
        assert!(read_only.len() > max);
        assert_eq!(code(root, &read_only, Access::WriteNote), ErrorCode::InvalidPath);
        assert!(gate(root, &suffixes(), &read_only, Access::Read).is_ok());
    }

    #[test]
    #[cfg(unix)]
    fn refuses_symlink_components_even_pointing_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/n.md"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("alias")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        assert_eq!(code(root, "alias/n.md", Access::Read), ErrorCode::InvalidPath);
        assert_eq!(code(root, "out/passwd.md", Access::Read), ErrorCode::InvalidPath);
        assert_eq!(code(root, "alias/new/x.md", Access::WriteNote), ErrorCode::InvalidPath);
        let t = gate(root, &suffixes(), "real/missing/x.md", Access::WriteNote).unwrap();
        assert_eq!(t.abs, root.join("real/missing/x.md"));
    }

    fn only(root: &Path) -> Roots<'_> {
        Roots { canonical: root, configured: None, home: None }
    }

    #[test]
    fn an_absolute_path_inside_the_vault_folder_is_read_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let inside = |roots: &Roots<'_>, raw: &str| unroot(roots, raw).unwrap();
        let raw = format!("{}/Notes/x.md", root.display());
        assert_eq!(inside(&only(&root), &raw), Rooting::Inside("Notes/x.md".into()));
        assert_eq!(
            inside(&only(&root), &format!("{}/", root.display())),
            Rooting::Inside("".into())
        );
        // The root as configured (through a symlink) counts as much as the canonical one.
        let elsewhere = tempfile::tempdir().unwrap();
        let link = elsewhere.path().join("vault-link");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&root, &link).unwrap();
            let roots = Roots { canonical: &root, configured: Some(&link), home: None };
            let raw = format!("{}/Home/Boiler.md", link.display());
            assert_eq!(inside(&roots, &raw), Rooting::Inside("Home/Boiler.md".into()));
        }
        // `~` is the home folder.
        let home = root.parent().unwrap();
        let name = root.file_name().unwrap().to_str().unwrap();
        let roots = Roots { canonical: &root, configured: None, home: Some(home) };
        assert_eq!(inside(&roots, &format!("~/{name}/a.md")), Rooting::Inside("a.md".into()));
        // `..` is kept for the gate, which refuses it.
        let raw = format!("{}/../x.md", root.display());
        let Rooting::Inside(rel) = inside(&only(&root), &raw) else { panic!("not inside") };
        assert_eq!(
            gate(&root, &suffixes(), &rel, Access::WriteNote).unwrap_err().code(),
            ErrorCode::InvalidPath
        );
    }

    #[test]
    fn an_absolute_path_outside_the_vault_is_refused_naming_the_folder_and_a_relative_form() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for raw in [
            "/home/me/notes/x.md",
            "/Users/me/Notes/x.md",
            "/tmp/somewhere-else/x.md",
            "/etc/x.md",
            "C:\\Users\\me\\x.md",
            "c:/notes/x.md",
            "~/notes/x.md",
        ] {
            let err = unroot(&only(&root), raw).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidPath, "{raw}");
            let message = err.message();
            assert!(message.contains(&root.display().to_string()), "{raw}: {message}");
            assert!(message.contains("'x.md'"), "{raw}: {message}");
        }
        // The suggestion keeps the folders the vault has.
        std::fs::create_dir_all(root.join("Home/Heating")).unwrap();
        let err = unroot(&only(&root), "/home/me/notes/Home/Heating/Boiler.md").unwrap_err();
        assert!(err.message().contains("'Home/Heating/Boiler.md'"), "{}", err.message());
        // A folder at this machine's root is as clear as a usual system one.
        let top = std::fs::read_dir("/")
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| !n.starts_with('.') && !SYSTEM_TOPS.contains(&n.as_str()));
        if let Some(top) = top {
            let err = unroot(&only(&root), &format!("/{top}/x.md")).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidPath, "/{top}");
        }
    }

    #[test]
    fn a_leading_slash_before_a_folder_of_the_vault_or_an_unknown_one_stays_vault_relative() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        // A vault folder named like a system one wins: the vault has it.
        std::fs::create_dir_all(root.join("Home")).unwrap();
        for raw in [
            "/Home/Boiler.md",
            "/Zettelkasten-not-on-this-machine/x.md",
            "Notes/x.md",
            "/",
            "",
            "a/~/b.md",
        ] {
            assert_eq!(unroot(&only(&root), raw).unwrap(), Rooting::Relative, "{raw:?}");
        }
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        assert_eq!(unroot(&only(&root), "/tmp/x.md").unwrap(), Rooting::Relative);
        std::fs::create_dir_all(root.join("c:")).unwrap();
        assert_eq!(unroot(&only(&root), "c:/x.md").unwrap(), Rooting::Relative);
        // Only the exact name: `Home` is not `/home`.
        assert_eq!(unroot(&only(&root), "/home/x.md").unwrap_err().code(), ErrorCode::InvalidPath);
    }

    #[test]
    fn a_reading_is_said_in_the_reply_only_when_the_path_was_not_written_as_is() {
        assert_eq!(Reading::AsWritten.told("a.md", "created a.md".into()), "created a.md");
        let unrooted = Reading::Unrooted { written: "/v/a.md".into() };
        let told = unrooted.told("a.md", "created a.md".into());
        assert!(told.starts_with("created a.md (the absolute path /v/a.md"), "{told}");
        assert!(told.contains("pass a.md next time"), "{told}");
        let named = Reading::ByName { written: "Deep".into() }.sentence("Sub/Deep.md").unwrap();
        assert_eq!(named, "'Deep' was found by name: Sub/Deep.md");
    }
}
