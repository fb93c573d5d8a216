//! The chunker: one note (or one filed document's extracted Markdown) into retrievable chunks.
//!
//! It owns sectioning at H1-H3, the flat-list rule (a list of substantial top-level bullets
//! becomes one chunk per item), folding of undersized sections into a neighbour, splitting of
//! oversized ones at paragraph breaks with an overlap, and the two derived texts the index
//! stores (`embed_text`, `lexical_text`). Sizes are estimated from character counts, never a
//! tokenizer. It reads no files, does not embed or index anything, and never fails: any text,
//! however odd, yields some (possibly empty) list of chunks.

use serde_json::Value;

use crate::markdown::{self, Class, Classifier};
use crate::vault::{frontmatter, headings};

/// Bump whenever chunk output changes for the same input: the index store keys cached chunks
/// on it. 2: code is what the shared line model says (fences inside quotes and list items,
/// indented code; a fence indented four columns is not one), for comments and list blocks.
/// 3: containers nest at most `markdown::MAX_NESTING` deep; a deeper marker is text.
/// 4: a note's `aliases` are kept with its title (re-reading every note fills them in).
pub(crate) const CHUNKER_VERSION: u32 = 4;

/// Estimated characters per model token; rough on purpose, the targets are soft.
const CHARS_PER_TOKEN: f64 = 3.6;
/// Deeper headings stay inside their section's text: an H4 is too small to stand alone.
const SECTION_MAX_DEPTH: u8 = 3;
/// A list shorter than this is a fact block, better kept whole with its heading.
const FLAT_MIN_ITEMS: usize = 7;
/// Share of root blocks that must be items, and share of items that may not be bare links.
const FLAT_RATIO: f64 = 0.7;
/// Items whose median is shorter than this are names in a register, not subjects.
const FLAT_MIN_MEDIAN_TOKENS: f64 = 8.0;
/// What an item may be made of, besides links and markers, and still count as a bare link.
const BARE_LINK_RESIDUE: &[char] =
    &[' ', '\t', '\r', '\n', '-', '\u{2013}', '\u{2014}', ':', ';', ',', '.', '|'];

/// Chunk sizes, in estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    /// A section estimated above this is split.
    pub(crate) target_tokens: usize,
    /// How much of one split piece is repeated at the start of the next.
    pub(crate) overlap_tokens: usize,
    /// A section estimated below this is folded into a neighbour.
    pub(crate) min_tokens: usize,
}

impl ChunkConfig {
    /// The sizes the retrieval constants were tuned with.
    pub const DEFAULT: ChunkConfig =
        ChunkConfig { target_tokens: 400, overlap_tokens: 60, min_tokens: 120 };
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig::DEFAULT
    }
}

/// Converts a token budget to characters the same way the estimate does, truncating.
fn chars_for(tokens: usize) -> usize {
    (tokens as f64 * CHARS_PER_TOKEN) as usize
}

/// One retrievable span of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The H1-H3 heading path joined by ` > `; empty for text before the first heading.
    pub breadcrumb: String,
    /// The chunk's Markdown; a piece after a split starts with the overlap carried over.
    pub text: String,
    /// 1-based line in the file (frontmatter counted) where the chunk's text starts. For a piece
    /// after a split it is the line of its first new paragraph: the carried overlap repeats
    /// text cited by the piece before, so it does not move the citation.
    pub(crate) line: usize,
}

/// A note's chunks plus the labels embedded with each of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteChunks {
    /// Frontmatter `title`, else the file stem.
    pub(crate) title: String,
    /// Frontmatter `description` with whitespace collapsed, else empty.
    pub(crate) description: String,
    /// The note's aliases (`vault::aliases::of`), one a line; lexical only, never embedded.
    pub(crate) aliases: String,
    /// The chunks in document order.
    pub chunks: Vec<Chunk>,
}

/// A note: `rel_path` is its vault path (for the title fallback), `text` the whole file.
pub fn chunk_note(rel_path: &str, text: &str, cfg: &ChunkConfig) -> NoteChunks {
    let text = clean_endings(text);
    // Malformed YAML parses to an empty map, so both labels fall back together.
    let meta = frontmatter::parse(&text);
    let title = meta
        .get("title")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map_or_else(|| file_stem(rel_path).to_string(), str::to_string);
    let description = meta
        .get("description")
        .and_then(Value::as_str)
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    // The frontmatter stays byte-for-byte so its lines still count and headings() still finds
    // the block; only the body loses its comments.
    let body_at = frontmatter::locate(&text).map_or(0, |block| block.end);
    let work = format!("{}{}", &text[..body_at], strip_comments(&text[body_at..]));
    let aliases = crate::vault::aliases::of(&text).join("\n");
    NoteChunks { title, description, aliases, chunks: chunk_markdown(&work, cfg) }
}

/// A filed document's extracted Markdown: title = file stem; description = the name of the
/// folder that owns the `files_dir` folder (grandparent) when the parent is `files_dir` and not
/// at the root, else the parent folder's name (empty at the root). No text => no chunks.
pub(crate) fn chunk_document(
    rel_path: &str,
    markdown: &str,
    files_dir: &str,
    cfg: &ChunkConfig,
) -> NoteChunks {
    let folders: Vec<&str> = rel_path.split('/').filter(|s| !s.is_empty() && *s != ".").collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    let description = match folders {
        [.., owner, parent] if *parent == files_dir => owner,
        [parent] if *parent == files_dir => "",
        [.., parent] => parent,
        [] => "",
    };
    // Extracted text is not Obsidian-authored: a `%%` in it is literal, so comments are kept.
    let chunks = chunk_markdown(&clean_endings(markdown), cfg);
    NoteChunks {
        title: file_stem(rel_path).to_string(),
        description: description.to_string(),
        aliases: String::new(),
        chunks,
    }
}

/// The text that is embedded: line 1 = prefix + (`title - description` | title |
/// description), right-trimmed; line 2 = breadcrumb if non-empty; a blank line; the chunk text.
/// `prefix` is the configured document prefix (often empty; e.g. "search_document: " for nomic
/// models).
///
/// A prefix holding `{text}` is a template instead, filled and sent as it stands, since some
/// asymmetric models document one exact document format (EmbeddingGemma's `title: {title} |
/// text: {text}`) that mdvault's own layout would break: `{title}` is the note's title (`none`
/// when it has none, that model's convention), `{description}` its description, `{heading}` the
/// chunk's heading path and `{text}` the chunk text.
pub(crate) fn embed_text(
    prefix: &str,
    title: &str,
    description: &str,
    breadcrumb: &str,
    text: &str,
) -> String {
    if prefix.contains(TEMPLATE_TEXT) {
        let title = if title.trim().is_empty() { "none" } else { title.trim() };
        return fill(
            prefix,
            &[
                ("title", title),
                ("description", description),
                ("heading", breadcrumb),
                ("text", text),
            ],
        );
    }
    let label = match (title.is_empty(), description.is_empty()) {
        (_, true) => title.to_string(),
        (true, false) => description.to_string(),
        (false, false) => format!("{title} - {description}"),
    };
    let mut out = format!("{prefix}{label}").trim_end().to_string();
    if !breadcrumb.is_empty() {
        out.push('\n');
        out.push_str(breadcrumb);
    }
    out.push_str("\n\n");
    out.push_str(text);
    out
}

/// The placeholder that makes a document prefix a template.
pub(crate) const TEMPLATE_TEXT: &str = "{text}";

/// Replaces each `{name}` of `template` by its value in one pass, so a value that itself holds
/// `{text}` (a note about templates) is left as written. Unknown `{...}` stay as they are.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let hit = after.find('}').and_then(|close| {
            values.iter().find(|(k, _)| *k == &after[..close]).map(|(_, v)| (close, *v))
        });
        match hit {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text the lexical index sees: the [heading text](heading_text), then the chunk's text
/// (no description).
pub(crate) fn lexical_text(title: &str, aliases: &str, breadcrumb: &str, text: &str) -> String {
    format!("{} {text}", heading_text(title, aliases, breadcrumb))
}

/// What names a chunk rather than says it: title + " " + breadcrumb, the note's aliases beside
/// its title (so a search for an alias finds the note). The lexical index keeps it as a field
/// of its own as well, so a match there can weigh more (`search.heading_weight`).
pub(crate) fn heading_text(title: &str, aliases: &str, breadcrumb: &str) -> String {
    if aliases.is_empty() {
        format!("{title} {breadcrumb}")
    } else {
        format!("{title} {} {breadcrumb}", aliases.replace('\n', " "))
    }
}

/// The token estimate: Unicode scalar count / 3.6, truncated.
pub(crate) fn estimate_tokens(s: &str) -> usize {
    (s.chars().count() as f64 / CHARS_PER_TOKEN) as usize
}

// ---------------------------------------------------------------------------------------------
// Input clean-up

/// Drops a BOM and turns CRLF into LF. A lone CR stays, as `str::lines` (and so the heading
/// parser) does not break on it either; line numbers then agree with the rest of mdvault.
fn clean_endings(text: &str) -> String {
    let text = text.strip_prefix(crate::vault::text::BOM).unwrap_or(text);
    text.replace("\r\n", "\n")
}

/// `Path::file_stem` on a vault path: the last segment without its last extension.
fn file_stem(rel_path: &str) -> &str {
    let name = rel_path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    match name.rfind('.') {
        Some(dot) if dot > 0 => &name[..dot],
        _ => name,
    }
}

/// Removes Obsidian `%% ... %%` comments, inline or across lines, keeping every newline so
/// line numbers survive. Code blocks and inline code spans are left alone, where `%%` is
/// literal. An unclosed `%%` hides the rest of the note, as it does in Obsidian.
pub(crate) fn strip_comments(body: &str) -> String {
    if !body.contains("%%") {
        return body.to_string();
    }
    let mut out = String::with_capacity(body.len());
    let mut in_comment = false;
    // Fed line by line rather than over the whole body: a line a comment hides is not
    // Markdown, so a fence marker inside a comment opens nothing.
    let mut classifier = Classifier::new();
    for line in body.split_inclusive('\n') {
        let (content, newline) = match line.strip_suffix('\n') {
            Some(content) => (content, "\n"),
            None => (line, ""),
        };
        if in_comment {
            if let Some(close) = content.find("%%") {
                in_comment = copy_uncommented(&content[close + 2..], &mut out);
            }
            out.push_str(newline);
            continue;
        }
        if classifier.classify(content).class.is_code() {
            out.push_str(line);
            continue;
        }
        in_comment = copy_uncommented(content, &mut out);
        out.push_str(newline);
    }
    out
}

/// Copies one line's text minus its comments; true when a comment is still open at its end.
fn copy_uncommented(s: &str, out: &mut String) -> bool {
    // Found once per line: a run's closer is looked up, not searched for to the line's end.
    let runs = markdown::BacktickRuns::new(s);
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with('`') {
            let run = markdown::run_length(s.as_bytes(), i);
            let span_end = runs.closer(run, i + run).map_or(i + run, |at| at + run);
            out.push_str(&s[i..span_end]);
            i = span_end;
        } else if let Some(inner) = rest.strip_prefix("%%") {
            match inner.find("%%") {
                Some(close) => i += 2 + close + 2,
                None => return true,
            }
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    false
}

// ---------------------------------------------------------------------------------------------
// Spans: text plus where its lines came from

/// A piece of note text with the file line of each joined part, so a chunk cut from a merged
/// section still reports the line its own text starts on.
#[derive(Debug, Clone)]
struct Span {
    breadcrumb: String,
    text: String,
    /// (byte offset in `text`, file line there), ascending; the first is at offset 0.
    anchors: Vec<(usize, usize)>,
}

impl Span {
    fn new(breadcrumb: &str, line: usize, text: String) -> Span {
        Span { breadcrumb: breadcrumb.to_string(), text, anchors: vec![(0, line)] }
    }

    fn line(&self) -> usize {
        self.anchors[0].1
    }

    /// The file line of the byte at `at`, for offsets asked in ascending order: each call
    /// counts newlines only from where the last one stopped, so a span of a million lines cut
    /// into thousands of pieces is read once, not once per piece.
    fn line_finder(&self) -> impl FnMut(usize) -> usize + '_ {
        let (mut anchor, mut counted, mut line) = (0, self.anchors[0].0, self.anchors[0].1);
        move |at| {
            while self.anchors.get(anchor + 1).is_some_and(|(offset, _)| *offset <= at) {
                anchor += 1;
                (counted, line) = self.anchors[anchor];
            }
            line += self.text[counted..at].matches('\n').count();
            counted = at;
            line
        }
    }

    /// Appends `other` after a blank line; `self` keeps its breadcrumb and first line.
    fn append(&mut self, other: &Span) {
        let base = self.text.len() + 2;
        self.text.push_str("\n\n");
        self.text.push_str(&other.text);
        self.anchors.extend(other.anchors.iter().map(|(offset, line)| (base + offset, *line)));
    }
}

/// A heading-scoped region before cutting; `heading` says its first line is that heading.
struct Section {
    span: Span,
    heading: bool,
}

/// The preamble (if any) and one section per H1-H3 heading, in order; each trimmed.
fn sections(work: &str) -> Vec<Section> {
    let lines: Vec<&str> = work.lines().collect();
    let body_start =
        frontmatter::locate(work).map_or(0, |block| block.close_line + 1).min(lines.len());
    let heads: Vec<headings::Heading> =
        headings::headings(work).into_iter().filter(|h| h.depth <= SECTION_MAX_DEPTH).collect();
    let mut out = Vec::new();

    let preamble_end = heads.first().map_or(lines.len(), |h| h.line - 1).max(body_start);
    let raw = lines[body_start..preamble_end].join("\n");
    let preamble = raw.trim();
    if !preamble.is_empty() {
        let blanks = raw[..raw.len() - raw.trim_start().len()].matches('\n').count();
        let span = Span::new("", body_start + 1 + blanks, preamble.to_string());
        out.push(Section { span, heading: false });
    }

    for (i, h) in heads.iter().enumerate() {
        let end = heads.get(i + 1).map_or(lines.len(), |next| next.line - 1);
        let body = lines[h.line - 1..end].join("\n");
        let body = body.trim();
        if !body.is_empty() {
            // The heading parser's path holds only shallower headings here, so it is exactly
            // the H1-H3 ancestry.
            let span = Span::new(&h.path.join(" > "), h.line, body.to_string());
            out.push(Section { span, heading: true });
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The flat-list rule

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Bullet,
    Ordered,
}

/// A root-level block of a section body: one list item (with its children) or one paragraph.
struct Block<'a> {
    /// Line index within the lines handed to `root_blocks`.
    offset: usize,
    lines: Vec<&'a str>,
    item: Option<Marker>,
}

/// The marker kind of a list line and the text after the marker, if it starts with one.
fn split_marker(line: &str) -> Option<(Marker, &str)> {
    if let Some(rest) = line.strip_prefix(['-', '*', '+']) {
        return Some((Marker::Bullet, rest));
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    line[digits..].strip_prefix(['.', ')']).map(|rest| (Marker::Ordered, rest))
}

/// A column-0 list item: marker, whitespace, then something. Column 0 only, because nested
/// items are indented and must not read as top-level ones.
fn list_item(line: &str) -> Option<Marker> {
    let (marker, rest) = split_marker(line)?;
    (rest.starts_with(char::is_whitespace) && !rest.trim_start().is_empty()).then_some(marker)
}

/// Cuts section lines into root blocks. Not a Markdown parser: it only has to tell how many
/// root blocks are items of one list. An indented line continues the open block, as does a
/// column-0 line straight after a non-blank one (lazy continuation); a column-0 line after a
/// blank opens a paragraph; the lines inside a fence (`in_fence`, one flag per line, from the
/// line model) join the open block whatever they look like.
fn root_blocks<'a>(lines: &[&'a str], in_fence: &[bool]) -> Vec<Block<'a>> {
    let mut blocks: Vec<Block<'a>> = Vec::new();
    let mut previous_blank = true;
    for (offset, &line) in lines.iter().enumerate() {
        if in_fence.get(offset).copied().unwrap_or(false) {
            if let Some(open) = blocks.last_mut() {
                open.lines.push(line);
            }
            continue;
        }
        if line.trim().is_empty() {
            if let Some(open) = blocks.last_mut() {
                open.lines.push(line);
            }
            previous_blank = true;
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        let item = if indented { None } else { list_item(line) };
        match blocks.last_mut() {
            Some(open) if item.is_none() && (indented || !previous_blank) => open.lines.push(line),
            _ => blocks.push(Block { offset, lines: vec![line], item }),
        }
        previous_blank = false;
    }
    blocks
}

fn blocks_text(blocks: &[Block]) -> String {
    let lines: Vec<&str> = blocks.iter().flat_map(|b| b.lines.iter().copied()).collect();
    lines.join("\n").trim().to_string()
}

/// True when nothing but markers, links and punctuation is left: a pointer, not content.
fn is_bare_link(text: &str) -> bool {
    let unmarked: Vec<&str> = text
        .lines()
        .map(|line| {
            let t = line.trim_start();
            match split_marker(t) {
                Some((_, rest)) if rest.is_empty() || rest.starts_with(char::is_whitespace) => {
                    rest.trim_start()
                }
                _ => line,
            }
        })
        .collect();
    remove_links(&unmarked.join("\n")).chars().all(|c| BARE_LINK_RESIDUE.contains(&c))
}

/// Deletes `[[wikilinks]]`, `[text](url)` and `![alt](url)`.
fn remove_links(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if let Some(len) = wikilink_len(rest).or_else(|| markdown_link_len(rest)) {
            i += len;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn wikilink_len(s: &str) -> Option<usize> {
    let inner = s.strip_prefix("[[")?;
    let close = inner.find(']')?;
    inner[close..].starts_with("]]").then_some(2 + close + 2)
}

fn markdown_link_len(s: &str) -> Option<usize> {
    let (bang, s) = s.strip_prefix('!').map_or((0, s), |rest| (1, rest));
    let label = s.strip_prefix('[')?;
    let close = label.find(']')?;
    let url = label[close + 1..].strip_prefix('(')?;
    let end = url.find(')')?;
    Some(bang + 1 + close + 2 + end + 1)
}

/// One (line, text) piece per item when the section is a flat list, with any prose before
/// or after the list as a piece of its own; `None` when any condition fails. `in_fence` holds
/// one flag per line of the whole file: a section's text is its file lines, edges trimmed.
fn flat_list_pieces(section: &Section, in_fence: &[bool]) -> Option<Vec<(usize, String)>> {
    let lines: Vec<&str> = section.span.text.lines().collect();
    let skip = usize::from(section.heading).min(lines.len());
    let first = (section.span.line() - 1 + skip).min(in_fence.len());
    let blocks = root_blocks(&lines[skip..], &in_fence[first..]);
    let positions: Vec<usize> =
        blocks.iter().enumerate().filter(|(_, b)| b.item.is_some()).map(|(i, _)| i).collect();
    let items: Vec<&Block> = positions.iter().map(|&i| &blocks[i]).collect();

    if items.len() < FLAT_MIN_ITEMS || (items.len() as f64) < FLAT_RATIO * blocks.len() as f64 {
        return None;
    }
    let (first, last) = (positions[0], positions[positions.len() - 1]);
    // Items on both sides of a paragraph are two lists, and a mix of markers is too.
    if last - first != positions.len() - 1 || items.iter().any(|b| b.item != items[0].item) {
        return None;
    }
    // A numbered list is a sequence: step four means nothing without steps one to three.
    if items[0].item == Some(Marker::Ordered) {
        return None;
    }
    let texts: Vec<String> = items.iter().map(|b| blocks_text(std::slice::from_ref(*b))).collect();
    let mut sizes: Vec<usize> = texts.iter().map(|t| estimate_tokens(t)).collect();
    sizes.sort_unstable();
    let mid = sizes.len() / 2;
    let median = if sizes.len() % 2 == 1 {
        sizes[mid] as f64
    } else {
        (sizes[mid - 1] + sizes[mid]) as f64 / 2.0
    };
    if median < FLAT_MIN_MEDIAN_TOKENS {
        return None;
    }
    let bare = texts.iter().filter(|t| is_bare_link(t)).count();
    if bare as f64 >= FLAT_RATIO * items.len() as f64 {
        return None;
    }

    let base = section.span.line() + skip;
    let mut pieces = Vec::with_capacity(blocks.len());
    let lead = &blocks[..first];
    let lead_text = blocks_text(lead);
    if !lead_text.is_empty() {
        pieces.push((base + lead[0].offset, lead_text));
    }
    for (block, text) in items.iter().zip(texts) {
        pieces.push((base + block.offset, text));
    }
    let trail = &blocks[last + 1..];
    let trail_text = blocks_text(trail);
    if !trail_text.is_empty() {
        pieces.push((base + trail[0].offset, trail_text));
    }
    Some(pieces)
}

// ---------------------------------------------------------------------------------------------
// Merging, splitting, emitting

/// Folds each section estimated under `min_tokens` into the one after it (the result keeps the
/// runt's breadcrumb and line); a runt left at the end joins the section before it.
fn merge_small(run: Vec<Span>, cfg: &ChunkConfig) -> Vec<Span> {
    let mut merged: Vec<Span> = Vec::new();
    let mut pending: Option<Span> = None;
    for span in run {
        let span = match pending.take() {
            Some(mut runt) => {
                runt.append(&span);
                runt
            }
            None => span,
        };
        if estimate_tokens(&span.text) < cfg.min_tokens {
            pending = Some(span);
        } else {
            merged.push(span);
        }
    }
    if let Some(runt) = pending {
        match merged.last_mut() {
            Some(last) => last.append(&runt),
            None => merged.push(runt),
        }
    }
    merged
}

/// Paragraphs (byte offset, text) split at runs of two or more newlines; blank ones dropped.
fn paragraphs(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'\n' {
            i += 1;
            continue;
        }
        let run_start = i;
        while i < bytes.len() && bytes[i] == b'\n' {
            i += 1;
        }
        if i - run_start >= 2 {
            out.push((start, &text[start..run_start]));
            start = i;
        }
    }
    out.push((start, &text[start..]));
    out.retain(|(_, p)| !p.trim().is_empty());
    out
}

/// The overlap carried into the next piece: the last `overlap` characters of `body`, starting
/// after their first space so the next piece does not open mid-word, then a blank line.
fn overlap_carry(body: &str, overlap: usize) -> String {
    if overlap == 0 {
        return String::new();
    }
    let mut tail = match body.char_indices().rev().nth(overlap - 1) {
        Some((at, _)) if at > 0 => &body[at..],
        _ => body,
    };
    if tail.len() < body.len()
        && let Some(space) = tail.find(' ')
    {
        tail = &tail[space + 1..];
    }
    if tail.trim().is_empty() { String::new() } else { format!("{tail}\n\n") }
}

/// Splits an oversized span at paragraph breaks into (line, text) pieces. A piece's line is
/// where its first new paragraph starts; the carried overlap in front of it is not counted.
fn split_oversized(span: &Span, cfg: &ChunkConfig) -> Vec<(usize, String)> {
    let target = chars_for(cfg.target_tokens);
    let overlap = chars_for(cfg.overlap_tokens);
    let min = chars_for(cfg.min_tokens);

    let mut out: Vec<(usize, String)> = Vec::new();
    let mut buffer: Vec<&str> = Vec::new();
    let mut buffer_line = span.line();
    let mut held = 0;
    let mut carried = String::new();
    let mut flush = |buffer: &mut Vec<&str>, line: usize, carried: &mut String| {
        let body = buffer.join("\n\n");
        out.push((line, format!("{carried}{body}")));
        *carried = overlap_carry(&body, overlap);
        buffer.clear();
    };
    let mut line_at = span.line_finder();
    for (offset, paragraph) in paragraphs(&span.text) {
        let size = paragraph.chars().count();
        // Break only once what is held can stand alone: a heading line followed by one huge
        // table would otherwise become a chunk holding just the heading.
        if !buffer.is_empty() && held + size > target && held >= min {
            flush(&mut buffer, buffer_line, &mut carried);
            held = 0;
        }
        if buffer.is_empty() {
            buffer_line = line_at(offset);
        }
        buffer.push(paragraph);
        held += size + 2;
    }
    if !buffer.is_empty() {
        flush(&mut buffer, buffer_line, &mut carried);
    }
    // A short remainder says too little alone; it belongs to the piece before it.
    if out.len() > 1 && out.last().is_some_and(|(_, text)| text.chars().count() < min) {
        let (_, tail) = out.pop().unwrap_or_default();
        if let Some((_, head)) = out.last_mut() {
            head.push_str("\n\n");
            head.push_str(&tail);
        }
    }
    out
}

/// Appends `span` as one chunk, or as several when it is estimated over the target.
fn emit(out: &mut Vec<Chunk>, span: &Span, cfg: &ChunkConfig) {
    if estimate_tokens(&span.text) > cfg.target_tokens {
        for (line, text) in split_oversized(span, cfg) {
            out.push(Chunk { breadcrumb: span.breadcrumb.clone(), text, line });
        }
    } else {
        out.push(Chunk {
            breadcrumb: span.breadcrumb.clone(),
            text: span.text.clone(),
            line: span.line(),
        });
    }
}

/// Merges and emits a run of ordinary sections. A run that is one lone runt can only follow a
/// flat list (a list is never merged, or the rule would stop applying to it); it joins the
/// chunk before it rather than stand alone as a chunk with no answer in it.
fn flush_run(out: &mut Vec<Chunk>, run: Vec<Span>, cfg: &ChunkConfig) {
    for (position, span) in merge_small(run, cfg).iter().enumerate() {
        let stranded = position == 0 && estimate_tokens(&span.text) < cfg.min_tokens;
        if stranded && let Some(previous) = out.last_mut() {
            previous.text.push_str("\n\n");
            previous.text.push_str(&span.text);
            continue;
        }
        emit(out, span, cfg);
    }
}

/// One flag per line of `work`: true inside a fence (its closer included), where the flat-list
/// rule must not see items or paragraph breaks. Classified once over the whole file, so a
/// section sees the containers and fences open where it starts (cut out alone, it would not).
fn swallowed_lines(work: &str) -> Vec<bool> {
    markdown::lines(work)
        .map(|line| matches!(line.class, Class::FencedCode | Class::FenceClose))
        .collect()
}

/// Chunks a whole file's text (frontmatter included, comments already removed).
fn chunk_markdown(work: &str, cfg: &ChunkConfig) -> Vec<Chunk> {
    let in_fence = swallowed_lines(work);
    let mut out = Vec::new();
    let mut run = Vec::new();
    for section in sections(work) {
        match flat_list_pieces(&section, &in_fence) {
            None => run.push(section.span),
            Some(pieces) => {
                flush_run(&mut out, std::mem::take(&mut run), cfg);
                for (line, text) in pieces {
                    emit(&mut out, &Span::new(&section.span.breadcrumb, line, text), cfg);
                }
            }
        }
    }
    flush_run(&mut out, run, cfg);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: ChunkConfig = ChunkConfig::DEFAULT;

    /// Chunks `body` as the body of a note whose frontmatter takes lines 1-3 and line 4 is
    /// blank, so the body's first line is file line 5.
    fn note(body: &str) -> Vec<Chunk> {
        chunk_note("T.md", &format!("---\ntitle: T\n---\n\n{body}"), &CFG).chunks
    }

    fn chunk(breadcrumb: &str, line: usize, text: &str) -> Chunk {
        Chunk { breadcrumb: breadcrumb.to_string(), text: text.to_string(), line }
    }

    fn lines_of(items: impl Iterator<Item = String>) -> String {
        items.collect::<Vec<_>>().join("\n")
    }

    /// Twelve dated entries of about twenty words each: well above the median floor.
    fn diary() -> Vec<String> {
        (1..=12)
            .map(|n| {
                format!("- Day {n}: the gardener trimmed the hedge and swept the path by the shed")
            })
            .collect()
    }

    /// Filler prose of exactly `chars` characters (ASCII), with spaces between words.
    fn prose(tag: &str, chars: usize) -> String {
        let mut s = String::new();
        while s.len() < chars {
            s.push_str(tag);
            s.push_str(" words ");
        }
        s.truncate(chars);
        s.trim_end().to_string() + &"x".repeat(chars - s.trim_end().len())
    }

    // ---- Fixture truths (seed spec §5) -----------------------------------------------------

    #[test]
    fn twelve_entry_log_is_twelve_chunks_with_consecutive_lines() {
        // Note: lines 5 `# Note`, 7 `Intro line.`, 9 `## Log`, 11-22 the entries. The runt H1
        // section before the list has nothing to merge into (a list never absorbs a runt), so it
        // stays on its own.
        let log = diary();
        let out = note(&format!("# Note\n\nIntro line.\n\n## Log\n\n{}\n", log.join("\n")));
        let mut expected = vec![chunk("Note", 5, "# Note\n\nIntro line.")];
        expected.extend(log.iter().enumerate().map(|(i, e)| chunk("Note > Log", 11 + i, e)));
        assert_eq!(out, expected);
    }

    #[test]
    fn four_line_field_block_stays_whole_with_its_heading() {
        // Note: four items are below the seven-item floor, so `## Account` is an ordinary runt;
        // as the last section it folds back into the long section before it.
        let intro = prose("intro", 500);
        let fields = lines_of((1..=4).map(|n| format!("- Field {n}: value")));
        let out = note(&format!("# Note\n\n{intro}\n\n## Account\n\n{fields}\n"));
        let text = format!("# Note\n\n{intro}\n\n## Account\n\n{fields}");
        assert_eq!(out, vec![chunk("Note", 5, &text)]);
    }

    #[test]
    fn eight_bare_links_never_form_chunks_of_their_own() {
        // Note: every item is only a link, so the list is not flat; the short section then rides
        // with its neighbour instead of being a chunk that holds no answer.
        let body = prose("body", 880);
        let links = lines_of((1..=8).map(|n| format!("- [Guide {n}](/Guides/Guide{n}.md)")));
        let out = note(&format!("# Note\n\n{body}\n\n## Related notes\n\n{links}\n"));
        let text = format!("# Note\n\n{body}\n\n## Related notes\n\n{links}");
        assert_eq!(out, vec![chunk("Note", 5, &text)]);
    }

    #[test]
    fn eight_links_with_prose_do_split() {
        // Note: each item says something beyond its link, so each one is a chunk.
        let items: Vec<String> = (1..=8)
            .map(|n| {
                format!("- [Guide {n}](/Guides/Guide{n}.md) - covers the setup and why it matters")
            })
            .collect();
        let out = note(&format!("# Note\n\nIntro.\n\n## Reading\n\n{}\n", items.join("\n")));
        let mut expected = vec![chunk("Note", 5, "# Note\n\nIntro.")];
        expected.extend(items.iter().enumerate().map(|(i, e)| chunk("Note > Reading", 11 + i, e)));
        assert_eq!(out, expected);
    }

    /// Asserts `section` (under `# Note` and `Intro.`) is not flat: the whole body is one chunk.
    fn assert_not_flat(section: &str) {
        let out = note(&format!("# Note\n\nIntro.\n\n{section}\n"));
        assert_eq!(out, vec![chunk("Note", 5, &format!("# Note\n\nIntro.\n\n{section}"))]);
    }

    #[test]
    fn two_lists_around_a_paragraph_do_not_split() {
        // Note: the items are not one contiguous run of root blocks.
        let first = lines_of((1..=5).map(|n| format!("- Alpha {n} has enough words to look real")));
        let second = lines_of((1..=5).map(|n| format!("- Beta {n} has enough words to look real")));
        assert_not_flat(&format!("## Both\n\n{first}\n\nA paragraph between.\n\n{second}"));
    }

    #[test]
    fn mixed_bullet_and_ordered_items_do_not_split() {
        // Note: ten contiguous items, but two marker kinds make two lists.
        let bullets =
            lines_of((1..=5).map(|n| format!("- Alpha {n} has enough words to look real")));
        let ordered =
            lines_of((1..=5).map(|n| format!("{n}. Gamma {n} has enough words to look real")));
        assert_not_flat(&format!("## Mixed\n\n{bullets}\n{ordered}"));
    }

    #[test]
    fn ordered_list_does_not_split() {
        // Note: a numbered list is a sequence, kept whole.
        let steps = lines_of(
            (1..=8).map(|n| format!("{n}) Step {n} of the procedure, written out at length")),
        );
        assert_not_flat(&format!("## Method\n\n{steps}"));
    }

    #[test]
    fn nineteen_two_word_titles_do_not_split() {
        // Note: the median item is about 4 estimated tokens, under the floor of 8.
        let titles = lines_of((1..=19).map(|n| format!("- Film Title {n}")));
        assert_not_flat(&format!("## Favourites\n\n{titles}"));
    }

    #[test]
    fn eleven_bold_field_lines_do_not_split() {
        // Note: `- **Field n:** value` is 20-21 characters, 5 estimated tokens.
        let fields = lines_of((1..=11).map(|n| format!("- **Field {n}:** value")));
        assert_not_flat(&format!("## Profile\n\n{fields}"));
    }

    #[test]
    fn four_terse_and_eight_long_items_split_into_eight_long_chunks() {
        // Note: the floor applies to the median, which the eight long items decide; every item,
        // terse ones included, becomes a chunk.
        let mut items = vec!["- Short one".to_string(); 4];
        items.extend(
            (1..=8).map(|d| format!("- Entry for {d} March, with enough detail to stand alone")),
        );
        let out = note(&format!("# Note\n\nIntro.\n\n## Log\n\n{}\n", items.join("\n")));
        assert_eq!(out.len(), 13);
        let long: Vec<&Chunk> = out.iter().filter(|c| c.text.starts_with("- Entry")).collect();
        assert_eq!(long.len(), 8);
        assert_eq!(long[0], &chunk("Note > Log", 15, &items[4]));
        assert!(out[1..].iter().all(|c| c.text.lines().count() == 1));
    }

    #[test]
    fn nested_tree_of_eight_parents_splits_into_eight_items_with_children() {
        // Note: indented children continue their parent's block, so there are 8 items, not 24.
        let tree = lines_of((1..=8).map(|n| format!("- Parent {n}\n  - child a\n  - child b")));
        let out = note(&format!("# Note\n\nIntro.\n\n## Tree\n\n{tree}\n"));
        assert_eq!(out.len(), 9);
        for (i, c) in out[1..].iter().enumerate() {
            let n = i + 1;
            assert_eq!(
                c,
                &chunk(
                    "Note > Tree",
                    11 + 3 * i,
                    &format!("- Parent {n}\n  - child a\n  - child b")
                )
            );
        }
    }

    #[test]
    fn twelve_dash_lines_inside_a_fence_do_not_split() {
        // Note: the fence swallows its lines, so the section is one paragraph block.
        let inside = lines_of((1..=12).map(|n| format!("- not an item {n}")));
        assert_not_flat(&format!("## Usage\n\n```bash\n{inside}\n```"));
        assert_not_flat(&format!("## Usage\n\n~~~\n{inside}\n~~~"));
    }

    #[test]
    fn lead_and_trailing_prose_become_their_own_chunks() {
        // Note: lines 9 `## Log`, 11 lead, 13-24 entries, 26 trailing prose.
        let log = diary();
        let out = note(&format!(
            "# Note\n\nIntro.\n\n## Log\n\nWhat this log is for.\n\n{}\n\nAnd a closing note.\n",
            log.join("\n")
        ));
        let mut expected = vec![
            chunk("Note", 5, "# Note\n\nIntro."),
            chunk("Note > Log", 11, "What this log is for."),
        ];
        expected.extend(log.iter().enumerate().map(|(i, e)| chunk("Note > Log", 13 + i, e)));
        expected.push(chunk("Note > Log", 26, "And a closing note."));
        assert_eq!(out, expected);
    }

    // ---- Merging ---------------------------------------------------------------------------

    #[test]
    fn runts_merge_forward_keeping_the_runts_breadcrumb_and_line() {
        // `## A` and `## B` are runts: both fold into `## C`, which reports A's breadcrumb/line.
        let long = prose("long", 500);
        let out =
            note(&format!("# T\n\n{long}\n\n## A\n\nshort.\n\n## B\n\ntiny.\n\n## C\n\n{long}\n"));
        assert_eq!(
            out,
            vec![
                chunk("T", 5, &format!("# T\n\n{long}")),
                chunk("T > A", 9, &format!("## A\n\nshort.\n\n## B\n\ntiny.\n\n## C\n\n{long}")),
            ]
        );
    }

    #[test]
    fn trailing_runt_merges_backwards() {
        let long = prose("long", 500);
        let out = note(&format!("## A\n\n{long}\n\n## B\n\nshort.\n"));
        assert_eq!(out, vec![chunk("A", 5, &format!("## A\n\n{long}\n\n## B\n\nshort."))]);
    }

    #[test]
    fn runt_after_a_flat_list_joins_the_last_item() {
        let log = diary();
        let out = note(&format!("## Log\n\n{}\n\n## See also\n\nOne line.\n", log.join("\n")));
        assert_eq!(out.len(), 12);
        assert_eq!(out[11], chunk("Log", 18, &format!("{}\n\n## See also\n\nOne line.", log[11])));
    }

    #[test]
    fn runt_alone_in_a_note_stays() {
        assert_eq!(note("Just a line.\n"), vec![chunk("", 5, "Just a line.")]);
        // Only headings: all runts, absorbed into the first one.
        assert_eq!(note("# A\n## B\n### C\n"), vec![chunk("A", 5, "# A\n\n## B\n\n### C")]);
    }

    // ---- Splitting -------------------------------------------------------------------------

    #[test]
    fn long_section_splits_at_paragraphs_with_overlap() {
        // Ten 300-character paragraphs under `## Long` (line 5), each on its own line: 7, 9, ...
        // Pieces close once the next paragraph would pass 1440 characters: heading + p1-p4,
        // p5-p8, then p9-p10 (602 characters plus the carry, over the 432 floor).
        let paras: Vec<String> = (1..=10).map(|n| prose(&format!("p{n:02}"), 300)).collect();
        let out = note(&format!("## Long\n\n{}\n", paras.join("\n\n")));
        let lines: Vec<usize> = out.iter().map(|c| c.line).collect();
        assert_eq!(lines, vec![5, 15, 23]);
        assert!(out.iter().all(|c| c.breadcrumb == "Long"));
        assert_eq!(out[0].text, format!("## Long\n\n{}", paras[..4].join("\n\n")));
        let limit = chars_for(CFG.target_tokens) + chars_for(CFG.overlap_tokens);
        for (i, (c, first_new)) in out.iter().zip([0, 4, 8]).enumerate().skip(1) {
            assert!(c.text.chars().count() <= limit, "chunk {i} is too long");
            let (carry, own) = c.text.split_once("\n\n").unwrap();
            // The carry is the end of the previous piece's own text, cut at a word start.
            assert!(out[i - 1].text.ends_with(carry) && !carry.starts_with(' '));
            assert!((200..=216).contains(&carry.len()), "carry of {} chars", carry.len());
            assert!(own.starts_with(&paras[first_new]));
        }
        assert!(out[2].text.ends_with(&paras[9]));
    }

    #[test]
    fn short_final_piece_joins_the_one_before() {
        // Heading + four 350-character paragraphs fill a piece; the 150-character p5 plus its
        // carry is under 432 characters, so it is appended (carry included) to that piece.
        let mut paras: Vec<String> = (1..=4).map(|n| prose(&format!("p{n}"), 350)).collect();
        paras.push(prose("p5", 150));
        let out = note(&format!("## Long\n\n{}\n", paras.join("\n\n")));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].line, 5);
        let head = format!("## Long\n\n{}", paras[..4].join("\n\n"));
        let rest = out[0].text.strip_prefix(&format!("{head}\n\n")).unwrap();
        let carry = rest.strip_suffix(&format!("\n\n{}", paras[4])).unwrap();
        assert!(head.ends_with(carry) && (200..=216).contains(&carry.len()));
    }

    #[test]
    fn one_oversized_paragraph_is_never_split() {
        let huge = prose("huge", 6000);
        let out = note(&format!("## Big\n{huge}\n"));
        assert_eq!(out, vec![chunk("Big", 5, &format!("## Big\n{huge}"))]);
    }

    #[test]
    fn split_of_a_merged_section_reports_each_pieces_own_line() {
        // `## A` (line 5) is a runt merged into `## B` (line 10, after two blank lines); the
        // piece that starts at B's second paragraph must report that paragraph's line, 14.
        let big = prose("big", 1400);
        let out = note(&format!("## A\n\nsmall.\n\n\n## B\n\n{big}\n\n{big}\n"));
        assert_eq!(
            out.iter().map(|c| (c.breadcrumb.as_str(), c.line)).collect::<Vec<_>>(),
            [("A", 5), ("A", 14)]
        );
    }

    // ---- Sections, frontmatter, comments ---------------------------------------------------

    #[test]
    fn frontmatter_and_comments_are_excluded_with_lines_kept() {
        let pre = prose("pre", 450);
        let real = prose("real", 450);
        let text = format!(
            "---\ntitle: X\ntags: [a]\n---\n\n{pre} %% secret %% end.\n\n\
             %% start\n## Hidden\nend %%\n\n\
             ## Real\n\n{real}\n\n```\n%% kept %%\n```\n\nA `%%` code span %% gone %%.\n"
        );
        let out = chunk_note("X.md", &text, &CFG).chunks;
        assert_eq!(
            out,
            vec![
                chunk("", 6, &format!("{pre}  end.")),
                chunk(
                    "Real",
                    12,
                    &format!("## Real\n\n{real}\n\n```\n%% kept %%\n```\n\nA `%%` code span .")
                ),
            ]
        );
    }

    #[test]
    fn unclosed_comment_hides_the_rest() {
        assert_eq!(
            note("Visible.\n%% open\n## Gone\nstill gone\n"),
            vec![chunk("", 5, "Visible.")]
        );
    }

    #[test]
    fn breadcrumbs_follow_h1_to_h3_and_deeper_headings_stay_inside() {
        let f = prose("fill", 450);
        let out = note(&format!(
            "# T\n{f}\n## A ##\n{f}\n### B\n{f}\n#### Deep\nmore\n## C#\n{f}\n\
             ```sh\n# not a heading\n```\n~~~\n## nor this\n~~~\n"
        ));
        let crumbs: Vec<(&str, usize)> =
            out.iter().map(|c| (c.breadcrumb.as_str(), c.line)).collect();
        assert_eq!(crumbs, [("T", 5), ("T > A", 7), ("T > A > B", 9), ("T > C#", 13)]);
        assert!(out[2].text.ends_with("#### Deep\nmore"));
        assert!(out[3].text.ends_with("~~~\n## nor this\n~~~"));
    }

    #[test]
    fn comments_inside_any_code_block_are_literal() {
        // Indented code and a fence inside a quote are code too, so their `%%` stays.
        let body =
            "Intro.\n\n    %% indented %%\n\n> ```\n> %% quoted %%\n> ```\n\nText %% gone %%.";
        let kept = "Intro.\n\n    %% indented %%\n\n> ```\n> %% quoted %%\n> ```\n\nText .";
        assert_eq!(note(body), vec![chunk("", 5, kept)]);
    }

    #[test]
    fn preamble_line_skips_blank_lines() {
        let out = chunk_note("n.md", "---\na: 1\n---\n\n\n\n  Hello.\n", &CFG).chunks;
        assert_eq!(out, vec![chunk("", 7, "Hello.")]);
        let out = chunk_note("n.md", "\n\nHello.\n# H\n", &CFG).chunks;
        assert_eq!(out, vec![chunk("", 3, "Hello.\n\n# H")]);
    }

    #[test]
    fn crlf_and_bom_give_the_same_chunks() {
        let lf =
            format!("---\ntitle: T\n---\n# A\n{}\n\n## B\n{}\n", prose("a", 500), prose("b", 500));
        let crlf = format!("\u{feff}{}", lf.replace('\n', "\r\n"));
        assert_eq!(chunk_note("x.md", &crlf, &CFG), chunk_note("x.md", &lf, &CFG));
        assert_eq!(chunk_note("x.md", &lf, &CFG).chunks.len(), 2);
    }

    // ---- Labels ----------------------------------------------------------------------------

    fn labels(rel: &str, text: &str) -> (String, String) {
        let n = chunk_note(rel, text, &CFG);
        (n.title, n.description)
    }

    #[test]
    fn title_and_description_come_from_frontmatter_or_fall_back() {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            labels("a/N.md", "---\ntitle: '  Spaced  '\ndescription: d\n---\nx\n"),
            s("Spaced", "d")
        );
        assert_eq!(labels("Inbox/Scratch.md", "# Scratch\n"), s("Scratch", ""));
        assert_eq!(labels("a/v1.2.md", "---\ntitle: 2024\n---\n"), s("v1.2", ""));
        assert_eq!(labels("a/N.md", "---\ntitle: ''\ndescription: [x]\n---\n"), s("N", ""));
        assert_eq!(
            labels("N.md", "---\ndescription: >\n  Two folded\n  lines.\n---\n"),
            s("N", "Two folded lines.")
        );
        // Malformed YAML: both labels fall back, and the body is still chunked.
        let broken =
            labels("Trips/Carrow.md", "---\ntitle: [unclosed\ndescription: d\n---\nBody.\n");
        assert_eq!(broken, s("Carrow", ""));
        assert_eq!(
            chunk_note("t.md", "---\ntitle: [unclosed\n---\nBody.\n", &CFG).chunks,
            vec![chunk("", 4, "Body.")]
        );
    }

    #[test]
    fn documents_take_their_labels_from_the_path() {
        let doc = |rel: &str, files: &str| {
            let n = chunk_document(rel, "Some text.", files, &CFG);
            (n.title, n.description)
        };
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(doc("Home/Utilities/Files/x.pdf", "Files"), s("x", "Utilities"));
        assert_eq!(doc("Files/x.pdf", "Files"), s("x", ""));
        assert_eq!(doc("Home/Utilities/x.pdf", "Files"), s("x", "Utilities"));
        assert_eq!(doc("Home/files/2026 Bill - Gas.pdf", "Files"), s("2026 Bill - Gas", "files"));
        assert_eq!(doc("Car/Attachments/v5c.docx", "Attachments"), s("v5c", "Car"));
        assert_eq!(doc("x.pdf", "Files"), s("x", ""));
        let n = chunk_document("Home/Files/x.pdf", "Page one.\n\n50%% off", "Files", &CFG);
        assert_eq!(n.chunks, vec![chunk("", 1, "Page one.\n\n50%% off")]);
        assert!(chunk_document("Home/Files/x.pdf", " \n\n", "Files", &CFG).chunks.is_empty());
    }

    #[test]
    fn embed_text_is_exact() {
        let p = "search_document: ";
        assert_eq!(
            embed_text(p, "T", "D", "T > A", "body"),
            "search_document: T - D\nT > A\n\nbody"
        );
        assert_eq!(embed_text(p, "T", "", "", "body"), "search_document: T\n\nbody");
        assert_eq!(embed_text(p, "", "D", "A", "body"), "search_document: D\nA\n\nbody");
        assert_eq!(embed_text(p, "", "", "", "body"), "search_document:\n\nbody");
        assert_eq!(embed_text("", "T ", "", "A", "b"), "T\nA\n\nb");
        assert_eq!(embed_text("", "", "", "", "b"), "\n\nb");
    }

    #[test]
    fn a_prefix_with_text_is_a_template_filled_as_written() {
        let t = "title: {title} | text: {text}";
        assert_eq!(
            embed_text(t, "Boiler", "Home", "Boiler > Service", "Due in May."),
            "title: Boiler | text: Due in May."
        );
        assert_eq!(embed_text(t, "", "", "", "x"), "title: none | text: x");
        assert_eq!(
            embed_text("{heading} / {description} / {text} {nope}", "T", "D", "T > A", "{title}"),
            "T > A / D / {title} {nope}"
        );
        // Without {text} it stays a plain prefix.
        assert_eq!(embed_text("{title}: ", "T", "", "", "b"), "{title}: T\n\nb");
    }

    #[test]
    fn lexical_text_and_token_estimate_are_exact() {
        assert_eq!(lexical_text("T", "", "T > A", "body"), "T T > A body");
        assert_eq!(lexical_text("T", "", "", "body"), "T  body");
        assert_eq!(lexical_text("T", "Boiler\nHot water", "", "b"), "T Boiler Hot water  b");
        assert_eq!(heading_text("T", "Boiler\nHot water", "T > A"), "T Boiler Hot water T > A");
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens(&"a".repeat(35)), 9);
        assert_eq!(estimate_tokens(&"a".repeat(36)), 10);
        assert_eq!(estimate_tokens(&"麻".repeat(36)), 10);
        assert_eq!(chars_for(400), 1440);
        assert_eq!(chars_for(60), 216);
        assert_eq!(chars_for(120), 432);
    }

    #[test]
    fn bare_link_test_sees_only_links_markers_and_punctuation() {
        assert!(is_bare_link("- [[Note]]"));
        assert!(is_bare_link("- [a](b.md), [c](d.md)."));
        assert!(is_bare_link("1. ![img](x.png) | [[N|alias]] —"));
        assert!(is_bare_link("- [[A]]\n  - [[B]]"));
        assert!(!is_bare_link("- [[Note]] with words"));
        assert!(!is_bare_link("- ![[Embed]]"));
        assert!(!is_bare_link("- [unclosed(x)"));
    }

    // ---- Robustness ------------------------------------------------------------------------

    fn assert_sane(rel: &str, text: &str) {
        let total = text.split('\n').count().max(1);
        let n = chunk_note(rel, text, &CFG);
        for c in &n.chunks {
            assert!(!c.text.trim().is_empty(), "empty chunk from {text:?}");
            assert!(c.line >= 1 && c.line <= total, "line {} of {total} in {text:?}", c.line);
        }
        assert_eq!(n, chunk_note(rel, text, &CFG), "not deterministic on {text:?}");
        let d = chunk_document(rel, text, "Files", &CFG);
        assert!(d.chunks.iter().all(|c| !c.text.trim().is_empty()));
    }

    #[test]
    fn odd_inputs_never_panic() {
        let huge = "word ".repeat(20_000);
        let cases = [
            "",
            "\u{feff}",
            "---\n",
            "---",
            "---\ntitle: x\n---",
            "---\ntitle: x\n---\n",
            "#",
            "# ",
            "######",
            "####### seven",
            "```",
            "```\n# x",
            "~~~\n- a\n",
            "%%",
            "%% x",
            "a %% b\n%%",
            "-",
            "- ",
            "1.",
            "1)",
            "+ x",
            "\r\n\r\n",
            "a\rb\r# c",
            "   ",
            "\n\n\n",
            "[[",
            "![](",
            "`%%",
            "``%%``%%",
            "# é\n## ü ##\n### 麻婆豆腐\n- 豆瓣酱",
            "\t- x\n-\tx",
            "##\n##\n",
            "---\n---\n---\n",
            "> - a\n> - b",
        ];
        for case in cases {
            assert_sane("n.md", case);
        }
        assert_sane("", &huge);
        assert_sane("a/.md", &format!("## H\n{huge}\n\n{huge}"));
        let items =
            lines_of((0..500).map(|n| format!("- entry {n} with some words so it counts as real")));
        assert_sane("x.md", &format!("## L\n{items}"));
    }

    proptest::proptest! {
        #[test]
        fn any_markdownish_text_is_chunked_sanely(
            text in "([#\\-*+ 0-9.)%`~\\[\\]()!a-zé麻|:]{0,12}[\n\r\t]?){0,60}",
            target in 1usize..60,
            overlap in 0usize..30,
            min in 0usize..40,
        ) {
            let cfg =
                ChunkConfig { target_tokens: target, overlap_tokens: overlap, min_tokens: min };
            let total = text.split('\n').count().max(1);
            let n = chunk_note("p.md", &text, &cfg);
            for c in &n.chunks {
                proptest::prop_assert!(!c.text.trim().is_empty());
                proptest::prop_assert!(c.line >= 1 && c.line <= total);
            }
            proptest::prop_assert_eq!(&n, &chunk_note("p.md", &text, &cfg));
        }
    }

    // ---- The fixture vault -----------------------------------------------------------------

    #[test]
    fn fixture_vault_chunks_as_documented() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vault");
        let mut notes = 0;
        let mut flat_sections = Vec::new();
        for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
            let entry = entry.unwrap();
            if entry.path().extension().is_none_or(|e| e != "md") {
                continue;
            }
            let rel =
                entry.path().strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let n = chunk_note(&rel, &text, &CFG);
            notes += 1;
            assert!(!n.chunks.is_empty(), "{rel} has no chunks");
            assert!(n.chunks.iter().all(|c| !c.text.trim().is_empty()), "{rel}: empty chunk");
            assert_eq!(n, chunk_note(&rel, &text, &CFG));
            let work = clean_endings(&text);
            let in_fence = swallowed_lines(&work);
            for s in sections(&work) {
                if flat_list_pieces(&s, &in_fence).is_some() {
                    flat_sections.push(format!("{rel}: {}", s.span.breadcrumb));
                }
            }
            match rel.as_str() {
                "Home/House Log.md" => {
                    let log: Vec<&Chunk> =
                        n.chunks.iter().filter(|c| c.breadcrumb == "House Log > Log").collect();
                    assert_eq!(log.len(), 12);
                    assert!(
                        log.iter()
                            .all(|c| c.text.starts_with("- 20") && c.text.lines().count() == 1)
                    );
                    assert_eq!(
                        log.iter().map(|c| c.line).collect::<Vec<_>>(),
                        (17..=28).collect::<Vec<_>>()
                    );
                    assert_eq!(n.title, "House Log");
                }
                "Finance/Subscriptions.md" => {
                    let monthly = n.chunks.iter().filter(|c| c.text.contains("- Kinoreel")).count();
                    assert_eq!(monthly, 1);
                    assert!(n.chunks.iter().all(|c| !c.text.starts_with("- ")));
                }
                "Finance/Accounts/Savings.md" => {
                    assert!(n.chunks.iter().all(|c| !c.text.contains("Tobias thinks")));
                }
                "Personal/Travel/Carrow Island 2026.md" => {
                    assert_eq!(
                        (n.title.as_str(), n.description.as_str()),
                        ("Carrow Island 2026", "")
                    );
                }
                "Personal/Ezra/School.md" => assert_eq!(n.title, "Ezra — School"),
                "Work/Ledger Migration.md" => assert_eq!(
                    n.description,
                    "Work project moving Oakhollow's freight billing reports off the old ledger \
                     database."
                ),
                "Tech/Homelab/Networking.md" => {
                    assert!(n.chunks.iter().all(|c| !c.breadcrumb.contains("->")));
                }
                "Home/Utilities/Electricity.md" => {
                    assert!(n.chunks.iter().all(|c| !c.breadcrumb.contains("##")));
                }
                _ => {}
            }
        }
        assert_eq!(notes, 30);
        assert_eq!(flat_sections, ["Home/House Log.md: House Log > Log"]);
    }
}
