//! Reading a vault: a note or one section of it (`read`), an attachment's bytes
//! (`read_attachment_span`: all of them, or the part a byte range asks for), a note's map, a folder's listing, and the
//! file table the indexer walks (`scan`, `stat`, `probe`, `read_bytes`, `all_files`).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::docs::{Extraction, Verdict};
use crate::error::{Error, ErrorCode, Result};
use crate::vault::attachment::{self, Extent, Opened, Span, SpanRead};
use crate::vault::canvas::{self, Canvas};
use crate::vault::edit::{self};
use crate::vault::headings::{self};
use crate::vault::known_hashes::Stamp;
use crate::vault::path::{Access, Reading, Suffixes, Target};
use crate::vault::{Vault, frontmatter};

use super::{Reach, content_hash, content_hash_of, rel_string};

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
    pub(crate) extraction: Option<Verdict>,
    /// True for a note; false for a filed document or a canvas, which the note verbs refuse
    /// to write (`is_document`), so a surface offers no editing of them.
    pub(crate) editable: bool,
    /// How the caller's path came to name this file, when the caller did not write its path.
    pub(crate) reading: Reading,
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
    pub(crate) depth: u8,
    /// The heading text as written.
    pub(crate) text: String,
    /// 1-based line in the file.
    pub line: usize,
    /// The full `A::B::C` path, usable as a patch target.
    pub path: String,
}

/// A note's frontmatter and heading outline, without its content.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteMap {
    /// The vault it came from.
    pub(crate) vault: String,
    /// Vault-relative path.
    pub(crate) path: String,
    /// Parsed frontmatter (lenient).
    pub(crate) frontmatter: Map<String, Value>,
    /// Headings in document order (for a document, those of its extracted Markdown).
    pub headings: Vec<HeadingEntry>,
    /// sha256 of the file's bytes.
    pub(crate) etag: String,
    /// For a filed document, its extraction verdict.
    pub extraction: Option<Verdict>,
    /// How the caller's path came to name this file, when the caller did not write its path.
    pub(crate) reading: Reading,
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
    pub(crate) path: String,
    /// What it is.
    pub(crate) kind: EntryKind,
    /// Size in bytes (files only).
    pub(crate) size: Option<u64>,
    /// Modification time, UTC `YYYY-MM-DDTHH:MM:SSZ` (files only).
    pub(crate) modified: Option<String>,
}

/// A folder's contents: folders first, then files, each by case-folded name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The vault it came from.
    pub(crate) vault: String,
    /// Vault-relative folder path; empty for the root.
    pub(crate) path: String,
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

/// A file's size and modification time, as the indexer compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    /// Vault-relative path.
    pub(crate) path: String,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Modification time in nanoseconds since the epoch.
    pub(crate) mtime_ns: i64,
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

/// A file whose length changed between reading its length and reading its bytes: its tag
/// would name bytes that were never sent together.
fn changed_while_read(path: &str) -> Error {
    Error::new(
        ErrorCode::Unreadable,
        format!("{path} changed while it was read; ask for it again once it is written"),
    )
}

fn rfc3339_seconds(t: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

impl Vault {
    /// Opens an attachment that must exist, through the gate, at the bytes `pick` chooses once
    /// the file's length is known (all of them, or a byte range a player asks for), for a
    /// surface to send as it reads. Other spellings of the path (percent-encoding, another
    /// case) are forgiven; names are not looked up across the vault, since that lookup knows
    /// notes. The file is opened
    /// once, so the length the choice was made against is the one read. A span outside the
    /// file opens as [`SpanRead::Beyond`], whatever the caller checked.
    pub(crate) fn read_attachment_span(
        &self,
        raw: &str,
        pick: impl FnOnce(&Extent) -> Span,
    ) -> Result<SpanRead> {
        use std::io::{Seek, SeekFrom};
        let (path, kind, mut file, meta) = self.open_attachment(raw)?;
        let extent = Extent { total: meta.len(), modified: meta.modified().ok() };
        let stamp = Stamp::of(&meta);
        let io = |e: std::io::Error| Error::read_io(&path, &e);
        // The tag is the hash of every byte: the file is read through once to compute it,
        // before any byte is sent (from the page cache, the second pass costs little), unless
        // this very version of the file was hashed before.
        let hash = |file: &mut std::fs::File| -> Result<String> {
            if let Some(known) = self.hashes.get(&path, &stamp) {
                return Ok(known);
            }
            let began = std::time::SystemTime::now();
            let (etag, read) = content_hash_of(&mut *file).map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            if read != extent.total {
                return Err(changed_while_read(&path));
            }
            let after = Stamp::of(&file.metadata().map_err(io)?);
            self.hashes.remember(&path, &stamp, &after, began, &etag);
            Ok(etag)
        };
        let (span, known) = match pick(&extent) {
            Span::IfTagged { etag, then } => {
                let now = hash(&mut file)?;
                if now == etag { (*then, None) } else { (Span::Whole, Some(now)) }
            }
            span => (span, None),
        };
        match span {
            Span::Whole => {
                let etag = match known {
                    Some(etag) => etag,
                    None => hash(&mut file)?,
                };
                let body = Opened { file, len: extent.total };
                Ok(SpanRead::Whole { path, kind, extent, etag, body })
            }
            Span::Bytes(r) if r.start() <= r.end() && *r.end() < extent.total => {
                file.seek(SeekFrom::Start(*r.start())).map_err(io)?;
                let body = Opened { file, len: r.end() - r.start() + 1 };
                Ok(SpanRead::Part { kind, extent, start: *r.start(), body })
            }
            Span::Bytes(_) | Span::Beyond | Span::IfTagged { .. } => {
                Ok(SpanRead::Beyond { path, extent })
            }
        }
    }

    /// An existing attachment's file through the gate, with its path, type and what `fstat`
    /// said of it.
    fn open_attachment(
        &self,
        raw: &str,
    ) -> Result<(String, attachment::AttachmentType, std::fs::File, std::fs::Metadata)> {
        let target = self.existing_target(raw, Access::ReadAttachment, Reach::Spelling)?;
        // The gate let it through, so it has an attachment suffix.
        let kind = attachment::kind_of(&target.rel).ok_or_else(|| {
            Error::new(ErrorCode::InternalError, format!("{} is not an attachment", target.rel))
        })?;
        let io = |e: std::io::Error| Error::read_io(&target.rel, &e);
        let file = std::fs::File::open(&target.abs).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if meta.is_dir() {
            return Err(Error::new(
                ErrorCode::IsDirectory,
                format!("{} is a folder; list it, or use the folder operations", target.rel),
            ));
        }
        Ok((target.rel, kind, file, meta))
    }

    /// Reads a note, or one section of it (`section` is a `::` heading target, or the part a
    /// path written as a link names: `Boiler#Service`). A filed document reads as its
    /// extracted Markdown, whole.
    pub fn read(
        &self,
        raw: &str,
        section: Option<&str>,
        docs: &dyn DocumentText,
    ) -> Result<NoteRead> {
        let target = self.existing_target(raw, Access::Read, Reach::Name)?;
        let section = section.map(str::trim).filter(|s| !s.is_empty());
        let linked = target.reading.section().map(str::to_string);
        // A document's or a canvas's link fragment (`#page=3`) is no section of its text: only
        // an asked one is.
        let section = match (section, linked.as_deref()) {
            (Some(asked), Some(named)) if asked != named => {
                return Err(Error::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "'{}' names the section {named} and `section` names {asked}; name the \
                         section once",
                        raw.trim()
                    ),
                ));
            }
            (None, named)
                if !self.suffixes.is_document(&target.rel) && !canvas::is_canvas(&target.rel) =>
            {
                named
            }
            (asked, _) => asked,
        };
        if canvas::is_canvas(&target.rel) {
            return self.read_canvas(target, section);
        }
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
                editable: false,
                reading: target.reading,
            });
        }
        let content = self.load_text(&target)?;
        let etag = content_hash(content.as_bytes());
        let fm = frontmatter::parse(&content);
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
                    editable: true,
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
                    editable: true,
                    reading: target.reading,
                })
            }
        }
    }

    /// The note's frontmatter and heading outline; for a filed document, its extraction
    /// verdict and the outline of its extracted Markdown.
    pub fn map(&self, raw: &str, docs: &dyn DocumentText) -> Result<NoteMap> {
        let target = self.existing_target(raw, Access::Read, Reach::Name)?;
        let (content, frontmatter, etag, extraction) = if canvas::is_canvas(&target.rel) {
            let (text, etag) = self.canvas_text(&target)?;
            (text, Map::new(), etag, None)
        } else if self.suffixes.is_document(&target.rel) {
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

    /// A canvas read as what it says (`vault::canvas`), whole: its etag is its file's, so
    /// the read leaves its JSON as it is and a later move or delete can be checked against it.
    fn read_canvas(&self, target: Target, section: Option<&str>) -> Result<NoteRead> {
        if section.is_some_and(|s| !s.trim().is_empty()) {
            return Err(Error::new(
                ErrorCode::IsDocument,
                format!("{} is a canvas, which has no sections to read; read it whole", target.rel),
            ));
        }
        let (text, etag) = self.canvas_text(&target)?;
        Ok(NoteRead {
            vault: self.name.clone(),
            path: target.rel,
            body: text.clone(),
            content: text,
            section: None,
            frontmatter: Map::new(),
            etag,
            extraction: None,
            editable: false,
            reading: target.reading,
        })
    }

    /// A canvas's own JSON, byte for byte, with its hash; a path that is not a canvas is
    /// refused.
    pub(crate) fn read_canvas_source(&self, raw: &str) -> Result<canvas::CanvasSource> {
        let target = self.existing_target(raw, Access::Read, Reach::Name)?;
        if !canvas::is_canvas(&target.rel) {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!("{} is not a canvas; read it as a note", target.rel),
            ));
        }
        let json = self.load_text(&target)?;
        Ok(canvas::CanvasSource { etag: content_hash(json.as_bytes()), json })
    }

    /// A canvas's reading text and its file's hash; a file that is not JSON Canvas is
    /// refused with what is wrong with it.
    fn canvas_text(&self, target: &Target) -> Result<(String, String)> {
        let json = self.load_text(target)?;
        let canvas = Canvas::parse(&json).map_err(|why| {
            Error::new(ErrorCode::Unreadable, format!("{} cannot be read: {why}", target.rel))
        })?;
        Ok((canvas.reading_text(), content_hash(json.as_bytes())))
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
            if crate::vault::census::hidden(&name) || ft.is_symlink() {
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
                } else if self.suffixes.is_document(&name) || canvas::is_canvas(&name) {
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

    /// Every visible file of the vault with its size and modification time, sorted by path.
    pub(crate) fn scan(&self) -> Vec<FileStat> {
        let mut out = Vec::new();
        let walker = walkdir::WalkDir::new(&self.root)
            .follow_links(false)
            .min_depth(1)
            .into_iter()
            .filter_entry(|e| !crate::vault::census::hidden(&e.file_name().to_string_lossy()));
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
    pub(crate) fn stat(&self, rel: &str) -> Option<FileStat> {
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
    pub(crate) fn probe(&self, rel: &str) -> Result<()> {
        let target = self.gate(rel, Access::Read)?;
        std::fs::File::open(&target.abs).map(drop).map_err(|e| Error::read_io(&target.rel, &e))
    }

    /// The bytes of a file, through the gate (for the indexer).
    pub(crate) fn read_bytes(&self, rel: &str) -> Result<Vec<u8>> {
        let target = self.gate(rel, Access::Read)?;
        self.load_bytes(&target)
    }

    /// Checks that `raw` names an existing folder (`""` is the root) and returns its
    /// vault-relative form, for operations that walk part of the vault.
    pub(crate) fn folder(&self, raw: &str) -> Result<String> {
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
            .filter_entry(|e| !crate::vault::census::hidden(&e.file_name().to_string_lossy()));
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
}
