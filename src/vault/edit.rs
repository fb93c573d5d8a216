//! Edits of a note's text: section patches, appends and body replacement (literal replaces are
//! `literal.rs`).
//!
//! Every function here is pure: it takes the current text and returns the new text, or refuses
//! without changing anything. An edit rewrites only the lines it changes: every other line
//! keeps its bytes (its line ending, trailing whitespace, a missing final newline), a BOM
//! stays, and what the edit adds is the caller's text normalised and then written with the
//! note's line ending (`text::Style`). Sections are found with the heading resolver, so an
//! edit lands on exactly one heading or not at all. Reading and writing files, timestamp bumps
//! and frontmatter values belong to other modules; the frontmatter block is carried through
//! untouched.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use super::frontmatter;
use super::headings::{self, Scope};
use super::text::{self, BOM, Style};
use crate::error::{Error, ErrorCode};
use crate::markdown;

/// What a section patch does with the new content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// The new content takes the place of the region.
    Replace,
    /// The new content goes before the region, separated by a blank line (none when it
    /// continues a list or table the region starts: see [`joins_tightly`]).
    Prepend,
    /// The new content goes after the region, separated by a blank line (none when it
    /// continues a list or table the region ends: see [`joins_tightly`]).
    Append,
}

impl Operation {
    /// The wire name, e.g. `append`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Replace => "replace",
            Operation::Prepend => "prepend",
            Operation::Append => "append",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Operation> {
        [Operation::Replace, Operation::Prepend, Operation::Append]
            .into_iter()
            .find(|op| op.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidRequest,
                    format!("unknown operation `{s}`; use one of replace, prepend, append"),
                )
            })
    }
}

/// [`crate::markdown::HEADING_MAX`] in the signed arithmetic of level shifts.
const MAX_HEADING_LEVEL: i32 = crate::markdown::HEADING_MAX as i32;

/// Something an edit did that the caller may not have meant, though it did what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Warning {
    /// A stable kebab-case name (the Local REST API plugin's names, so its clients match on
    /// them): `heading-depth-overflow`.
    pub(crate) code: &'static str,
    /// One sentence naming the text involved.
    pub(crate) message: String,
}

/// New text with its headings moved `delta` levels (deeper when positive), for content whose
/// levels are relative to where it lands: `# X` put under a level-2 heading's content becomes
/// `### X` with `delta` 2. Only the `#` run of a heading line changes (fenced, indented and
/// quoted `#` lines are not headings, so they stay); a level is never made shallower than 1.
/// A level pushed past 6 is still written, since the caller asked for it, but it no longer
/// reads as a heading, so it comes back as a `heading-depth-overflow` warning.
pub(crate) fn relevel(content: &str, delta: i32) -> (String, Vec<Warning>) {
    let mut warnings = Vec::new();
    if delta == 0 {
        return (content.to_string(), warnings);
    }
    let mut out = String::with_capacity(content.len() + 16);
    let mut copied = 0;
    for line in markdown::lines(content) {
        let markdown::Class::Heading { level, text } = line.class else { continue };
        let Some(hashes) = line.raw.find('#') else { continue };
        if line.quote_depth > 0 {
            continue;
        }
        let at = line.start + hashes;
        let new = (i32::from(level) + delta).max(1);
        if new > MAX_HEADING_LEVEL {
            warnings.push(Warning {
                code: "heading-depth-overflow",
                message: format!(
                    "the heading {text:?} lands at level {new}, deeper than Markdown's 6, so it \
                     is written as a paragraph; send it {} level(s) shallower to keep it a heading",
                    new - MAX_HEADING_LEVEL
                ),
            });
        }
        out.push_str(&content[copied..at]);
        out.push_str(&"#".repeat(new as usize));
        copied = at + usize::from(level);
    }
    out.push_str(&content[copied..]);
    (out, warnings)
}

/// How many levels content written into `target` with `scope` is moved when its heading
/// levels are relative (see [`relevel`]): a section's content (and a body block of it,
/// `within`) sits one level under its heading, so `#` becomes a direct child; a
/// markerAndContent edit takes the heading's own place, so `#` becomes its level. A marker
/// line, a block target, and a target that does not resolve (the patch itself refuses that)
/// move nothing.
pub(crate) fn level_offset(
    text: &str,
    note: &str,
    target: &str,
    scope: Scope,
    within: bool,
) -> i32 {
    let all = headings::headings(text);
    let blocks = headings::blocks(text);
    let Ok(headings::Anchor::Heading(h)) = headings::locate(&all, &blocks, target, note) else {
        return 0;
    };
    match scope {
        _ if within => i32::from(h.depth),
        Scope::Content => i32::from(h.depth),
        Scope::MarkerAndContent => i32::from(h.depth) - 1,
        Scope::Marker => 0,
    }
}

/// A section patch's outcome: the new text, and what it says back to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Patched {
    /// The note's new text (before the timestamp bump).
    pub(crate) text: String,
    /// The resolved heading's display path (`A::B`).
    pub(crate) path: String,
    /// For a replace, the lines it replaced (blank edge lines left out), so a mistaken
    /// replace can be undone from the reply alone.
    pub(crate) replaced: Option<String>,
}

/// Patches one section and says what it replaced. An empty replace empties the section (or
/// deletes the heading line); whether the caller may ask for that is the patch's rule
/// (`patch::Edit::refuse_empty`), applied before this runs.
pub(crate) fn patch(
    text: &str,
    note: &str,
    target: &str,
    op: Operation,
    scope: Scope,
    content: &str,
) -> crate::Result<Patched> {
    let replaced = match op {
        Operation::Replace => Some(region_text(text, note, target, scope)?),
        _ => None,
    };
    let (new, path) = patch_section(text, note, target, op, scope, content)?;
    Ok(Patched { text: new, path, replaced })
}

/// The lines a patch of `target` with `scope` addresses, blank edge lines left out, with LF
/// endings and a final newline (empty when the region is).
fn region_text(text: &str, note: &str, target: &str, scope: Scope) -> crate::Result<String> {
    let all = headings::headings(text);
    let blocks = headings::blocks(text);
    let anchor = headings::locate(&all, &blocks, target, note)?;
    let lines = text::raw_lines(text);
    let range = headings::anchor_lines(lines.len(), &all, anchor, scope);
    let region: String = lines[range].concat();
    let region = text::normalize(&region);
    let region = text::strip_blank_edges(&region);
    Ok(if region.is_empty() { String::new() } else { format!("{region}\n") })
}

/// The heading line a marker replace writes. A line that is an ATX heading is taken as it is
/// (its level may change); a line with no leading `#` is the new heading text at the old
/// heading's level, so `Renamed` renames `## Old` to `## Renamed`. Anything else is refused:
/// several lines, or a `#` line that is not a heading, would turn the heading into a
/// paragraph and drop it from the outline.
fn marker_line(heading: &headings::Heading, note: &str, content: &str) -> crate::Result<String> {
    let line = content.trim();
    if line.contains('\n') {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "target_scope marker replaces only the heading line `{}` in `{note}`, and the \
                 content has several lines; pass one heading line such as `## New name`, or use \
                 target_scope markerAndContent to replace the heading and its section",
                headings::display_path(heading)
            ),
        ));
    }
    if let Some(first) = markdown::lines(line).next()
        && matches!(first.class, markdown::Class::Heading { .. })
        && first.quote_depth == 0
    {
        return Ok(line.to_string());
    }
    if line.starts_with('#') {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "`{line}` is not a heading line (one to six `#`, then a space, then the text); \
                 with target_scope marker the content must be a heading line such as `{} {}`, \
                 or the bare text to keep the level",
                "#".repeat(usize::from(heading.depth)),
                heading.text
            ),
        ));
    }
    Ok(format!("{} {line}", "#".repeat(usize::from(heading.depth))))
}

/// Patches one section. Returns the new text and the resolved display path (`A::B`).
///
/// Only the addressed lines are rebuilt. For the content scope those are the section's lines
/// under its heading, rebuilt with exactly one blank line on each side of the content (none
/// after it at the end of the note); the marker scopes splice the new lines in as they are.
pub(crate) fn patch_section(
    text: &str,
    note: &str,
    target: &str,
    op: Operation,
    scope: Scope,
    content: &str,
) -> crate::Result<(String, String)> {
    let all = headings::headings(text);
    let blocks = headings::blocks(text);
    let anchor = headings::locate(&all, &blocks, target, note)?;
    let lines = text::raw_lines(text);
    let range = headings::anchor_lines(lines.len(), &all, anchor, scope);
    let new_content = match (anchor, op, scope) {
        (headings::Anchor::Heading(heading), Operation::Replace, Scope::Marker)
            if !content.trim().is_empty() =>
        {
            text::normalize(&marker_line(heading, note, content)?)
        }
        // A replaced block keeps its id, so links to it and later patches still land; a
        // table replaced by bare rows keeps its header.
        (headings::Anchor::Block(b), Operation::Replace, _) if !content.trim().is_empty() => {
            let body = text::normalize(content);
            let body = text::strip_blank_edges(&body);
            let region = &lines[range.clone()];
            check_table_rows(region, body, note, b)?;
            let body = match table_header(region) {
                Some(head)
                    if body.lines().all(|l| table_cells(l).is_some() && !is_delimiter_row(l)) =>
                {
                    format!("{}{body}", head.iter().map(|l| text::normalize(l)).collect::<String>())
                }
                _ => body.to_string(),
            };
            if headings::blocks(&body).iter().any(|nb| nb.id == b.id) {
                body
            } else {
                format!("{body} ^{}", b.id)
            }
        }
        (headings::Anchor::Block(b), _, _) => {
            let body = text::normalize(content);
            check_table_rows(&lines[range.clone()], text::strip_blank_edges(&body), note, b)?;
            body
        }
        _ => text::normalize(content),
    };
    let new: Vec<Piece> = text::strip_blank_edges(&new_content).lines().map(Piece::New).collect();
    let region = &lines[range.clone()];
    let stripped = text::strip_blank_edges(&new_content);
    // Where the old and new lines meet, for the join rule.
    let tight = match op {
        Operation::Replace => false,
        Operation::Append => region
            .iter()
            .rposition(|l| !text::is_blank(l))
            .is_some_and(|i| joins_tightly(text, range.start + i, stripped, 0)),
        Operation::Prepend => region.iter().position(|l| !text::is_blank(l)).is_some_and(|i| {
            let last = stripped.lines().count().saturating_sub(1);
            joins_tightly(stripped, last, text, range.start + i)
        }),
    };
    // A block is spliced as it stands, like a heading's marker scopes: it has no heading line
    // whose surrounding blank lines need rebuilding.
    let block = matches!(anchor, headings::Anchor::Block(_));
    let replacement = match scope {
        Scope::Content if !block => {
            let old: Vec<Piece> = match region.iter().position(|l| !text::is_blank(l)) {
                Some(first) => {
                    let last = region.iter().rposition(|l| !text::is_blank(l)).unwrap_or(first);
                    region[first..=last].iter().copied().map(Piece::Old).collect()
                }
                None => Vec::new(),
            };
            let merged = merge(op, old, new, tight);
            let more_follows = range.end < lines.len();
            // The region is rebuilt with exactly one blank line on each side, which is what
            // keeps repeated appends from widening the gaps around a section. A blank line
            // already at an edge is reused, so a well-spaced section changes only by its
            // new lines.
            let lead = match region.first() {
                Some(line) if text::is_blank(line) => Piece::Old(line),
                _ => Piece::New(""),
            };
            let trail = match region.last() {
                Some(line) if region.len() > 1 && text::is_blank(line) => Piece::Old(line),
                _ => Piece::New(""),
            };
            let mut out = Vec::with_capacity(merged.len() + 2);
            if !merged.is_empty() || more_follows {
                out.push(lead);
            }
            if !merged.is_empty() {
                out.extend(merged);
                if more_follows {
                    out.push(trail);
                }
            }
            out
        }
        // A whole section keeps the blank lines that end it (the gap before the next
        // heading): they belong to the layout, not to the section's text, so a section
        // replaced with what was read from it comes back byte for byte.
        Scope::MarkerAndContent if !block => {
            let kept = region.iter().rposition(|l| !text::is_blank(l)).map_or(0, |i| i + 1);
            let old: Vec<Piece> = region[..kept].iter().copied().map(Piece::Old).collect();
            let mut out = merge(op, old, new, tight);
            if !out.is_empty() {
                out.extend(region[kept..].iter().copied().map(Piece::Old));
            }
            out
        }
        _ => merge(op, region.iter().copied().map(Piece::Old).collect(), new, tight),
    };
    let style = Style::of(text.as_bytes());
    Ok((splice(text, &lines, range, &replacement, style), anchor.display()))
}

/// The number of cells of a table row (`| a | b |` is 2), a trailing block id left out;
/// `None` for a line that is not a row.
fn table_cells(line: &str) -> Option<usize> {
    let mut t = line.trim();
    if let Some((head, id)) = t.rsplit_once(char::is_whitespace)
        && id.starts_with('^')
    {
        t = head.trim_end();
    }
    let inner = t.strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    Some(inner.split('|').count())
}

fn is_delimiter_row(line: &str) -> bool {
    let t = line.trim();
    t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// The header and delimiter lines of a table block, when the block is a table.
fn table_header<'a>(region: &[&'a str]) -> Option<[&'a str; 2]> {
    match region {
        [head, delim, ..] if table_cells(head).is_some() && is_delimiter_row(delim) => {
            Some([head, delim])
        }
        _ => None,
    }
}

/// Rows added to a table block must have the table's number of cells: a short or long row
/// would render as a broken table.
fn check_table_rows(
    region: &[&str],
    new: &str,
    note: &str,
    b: &headings::Block,
) -> crate::Result<()> {
    let Some([head, _]) = table_header(region) else { return Ok(()) };
    let want = table_cells(head).unwrap_or(0);
    for row in new.lines().filter(|l| !is_delimiter_row(l)) {
        if let Some(got) = table_cells(row)
            && got != want
        {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "the table `^{}` in `{note}` has {want} columns and the row `{row}` has {got}; \
                     send rows of {want} cells",
                    b.id
                ),
            ));
        }
    }
    Ok(())
}

/// One line of an edit's output.
#[derive(Debug, Clone, Copy)]
enum Piece<'a> {
    /// A line of the note, with its own line ending (the note's last line may have none).
    Old(&'a str),
    /// A new line, without a line ending: it gets the note's.
    New(&'a str),
}

/// Combines the old and new lines; empty new content leaves `old` alone when adding to it.
/// `tight` joins them with no blank line between (a list or table continued).
fn merge<'a>(
    op: Operation,
    old: Vec<Piece<'a>>,
    new: Vec<Piece<'a>>,
    tight: bool,
) -> Vec<Piece<'a>> {
    let (first, second) = match op {
        Operation::Replace => return new,
        Operation::Append => (old, new),
        Operation::Prepend => (new, old),
    };
    if first.is_empty() || second.is_empty() || tight {
        return [first, second].concat();
    }
    [first, vec![Piece::New("")], second].concat()
}

/// The join rule every append and prepend follows: line `a` of `above` (the last line before
/// the join) and line `b` of `below` (the first after it), each classified in its own text by
/// the line model, meet with no blank line when `below` continues the list or table `above`
/// ends ([`markdown::continues_block`]); otherwise with exactly one blank line, as paragraphs.
/// Why: a blank line before a new list item splits the list in two (or makes it loose), and
/// one before a table row ends the table, so the row shows as a stray line of pipes.
pub(crate) fn joins_tightly(above: &str, a: usize, below: &str, b: usize) -> bool {
    let (Some(upper), Some(lower)) = (markdown::lines(above).nth(a), markdown::lines(below).nth(b))
    else {
        return false;
    };
    markdown::continues_block(&upper, &lower)
}

/// The note with `lines[range]` replaced by `with`. Old lines keep their bytes; a line that
/// had no ending (the note's last) gets the note's ending when something now follows it.
fn splice(text: &str, lines: &[&str], range: Range<usize>, with: &[Piece], style: Style) -> String {
    let (bom, _) = text::split_bom(text);
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(bom);
    let before = lines[..range.start].iter().copied().map(Piece::Old);
    let after = lines[range.end..].iter().copied().map(Piece::Old);
    for piece in before.chain(with.iter().copied()).chain(after) {
        if out.len() > bom.len() && !out.ends_with('\n') {
            out.push_str(style.eol());
        }
        match piece {
            Piece::Old(line) => out.push_str(line),
            Piece::New(line) => {
                out.push_str(line);
                out.push_str(style.eol());
            }
        }
    }
    out
}

/// Edits one body block of a heading's section, by position: `index` counts the blank-line
/// separated blocks of the section's own body (before its first subheading) from 0, or from
/// the end when negative. With the content scope the new text is spliced literally onto the
/// block (an append continues its last line, a prepend starts its first, so the caller owns
/// the joint), a replace takes its place, and an empty replace removes it (whether the caller
/// may ask for that is the patch's rule, `patch::Edit::refuse_empty`); with markerAndContent
/// an append or prepend adds a sibling block beside it. `target` names a heading (a patch
/// refuses `within` on a block target when it is built).
pub(crate) fn patch_within(
    text: &str,
    note: &str,
    target: &str,
    index: i64,
    op: Operation,
    scope: Scope,
    content: &str,
) -> crate::Result<(String, String)> {
    let all = headings::headings(text);
    let heading = headings::resolve(&all, target, note)?;
    let lines = text::raw_lines(text);
    let section = headings::section_lines(lines.len(), &all, heading, Scope::Content);
    let own_end = all
        .iter()
        .find(|h| h.line > section.start && h.line - 1 < section.end)
        .map_or(section.end, |h| h.line - 1);
    // Blocks end at blank lines as the line model sees them: a blank line inside a fence is
    // code and one behind `>` belongs to its callout, so neither cuts a block in two (a cut
    // there would let an edit leave a fence open or split a callout).
    let between: Vec<bool> = markdown::lines(text)
        .map(|l| l.class == markdown::Class::Blank && l.quote_depth == 0)
        .collect();
    let mut runs: Vec<Range<usize>> = Vec::new();
    for (i, &gap) in between.iter().enumerate().take(own_end).skip(section.start) {
        if gap {
            continue;
        }
        match runs.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    let count = runs.len() as i64;
    let at = if index < 0 { count + index } else { index };
    if at < 0 || at >= count {
        return Err(Error::new(
            ErrorCode::NoSuchHeading,
            format!(
                "block index {index} is out of range: section `{}` of `{note}` has {count} body blocks (0 to {}, or -1 for the last)",
                headings::display_path(heading),
                count - 1
            ),
        ));
    }
    let run = runs[at as usize].clone();
    let style = Style::of(text.as_bytes());
    let added = text::normalize(content);
    let added_lines: Vec<&str> = added.strip_suffix('\n').unwrap_or(&added).split('\n').collect();
    let eol = |l: &str| l.len() - l.trim_end_matches(['\r', '\n']).len();
    let mut out: Vec<String> = Vec::new();
    let sibling = scope == Scope::MarkerAndContent;
    match op {
        Operation::Replace if super::patch::is_empty(content) => {
            // The block goes, and the blank line after it (or before it, at the end).
            let mut cut = run.clone();
            if cut.end < lines.len() && between[cut.end] {
                cut.end += 1;
            } else if cut.start > section.start && between[cut.start - 1] {
                cut.start -= 1;
            }
            return Ok((splice(text, &lines, cut, &[], style), headings::display_path(heading)));
        }
        Operation::Replace => out.extend(added_lines.iter().map(|l| l.to_string())),
        Operation::Append if sibling => {
            out.extend(lines[run.clone()].iter().map(|l| l[..l.len() - eol(l)].to_string()));
            out.push(String::new());
            out.extend(added_lines.iter().map(|l| l.to_string()));
        }
        Operation::Prepend if sibling => {
            out.extend(added_lines.iter().map(|l| l.to_string()));
            out.push(String::new());
            out.extend(lines[run.clone()].iter().map(|l| l[..l.len() - eol(l)].to_string()));
        }
        Operation::Append => {
            out.extend(lines[run.clone()].iter().map(|l| l[..l.len() - eol(l)].to_string()));
            let last = out.pop().unwrap_or_default();
            // The addition goes before a block id that ends the line, so the id still ends it.
            let (head, id) = match headings::block_id(&last) {
                Some(id) => {
                    let cut = last.trim_end().len() - id.len() - 1;
                    (last[..cut].trim_end().to_string(), format!(" ^{id}"))
                }
                None => (last.clone(), String::new()),
            };
            let joined = format!("{head}{}{id}", added.strip_suffix('\n').unwrap_or(&added));
            out.extend(joined.split('\n').map(str::to_string));
        }
        Operation::Prepend => {
            out.extend(lines[run.clone()].iter().map(|l| l[..l.len() - eol(l)].to_string()));
            let first = if out.is_empty() { String::new() } else { out.remove(0) };
            let joined = format!("{}{first}", added.strip_suffix('\n').unwrap_or(&added));
            let mut head: Vec<String> = joined.split('\n').map(str::to_string).collect();
            head.append(&mut out);
            out = head;
        }
    }
    let pieces: Vec<Piece> = out.iter().map(|l| Piece::New(l.as_str())).collect();
    Ok((splice(text, &lines, run, &pieces, style), headings::display_path(heading)))
}

/// Where a moved section lands among its new parent's child sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Before the parent's first child section (after the parent's own body).
    First,
    /// After the parent's last child section: the end of the parent's section.
    Last,
    /// Just before this heading, which must be a direct child of the parent.
    Before(String),
    /// Just after this heading's section; it must be a direct child of the parent.
    After(String),
}

/// Moves the section of the heading `target` (its heading line and subtree) under the
/// heading `parent` (`None`: the top level of the note) at `slot`, re-levelling it so its
/// heading sits one level under the parent and its subheadings keep their nesting. Every
/// other line keeps its bytes; one blank line is added where the moved section would
/// otherwise touch text. `target` names a heading (a patch refuses a move of a block target
/// when it is built: a block has no subtree to carry). Refused: a parent or sibling inside the
/// moved section (it would move into itself), and a sibling that is not a direct child of the
/// parent. A level pushed past 6 is written and warned about, as
/// [`relevel`] does.
pub(crate) fn move_section(
    text: &str,
    note: &str,
    target: &str,
    parent: Option<&str>,
    slot: &Slot,
) -> crate::Result<Moved> {
    let all = headings::headings(text);
    let h = headings::resolve(&all, target, note)?;
    let lines = text::raw_lines(text);
    let len = lines.len();
    let moved = headings::section_lines(len, &all, h, Scope::MarkerAndContent);
    let inside = |line: usize| moved.contains(&(line - 1));
    let into_itself = |what: &str| {
        Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "`{what}` is inside the section `{}` being moved, so the section cannot move \
                 there; name a heading outside it",
                headings::display_path(h)
            ),
        )
    };
    let parent = match parent.map(str::trim).filter(|p| !p.is_empty()) {
        None => None,
        Some(p) => {
            let ph = headings::resolve(&all, p, note)?;
            if inside(ph.line) {
                return Err(into_itself(p));
            }
            Some(ph)
        }
    };
    // The parent's span: its section, or the whole note at the top level.
    let (span, depth) = match parent {
        Some(ph) => {
            (headings::section_lines(len, &all, ph, Scope::MarkerAndContent), i32::from(ph.depth))
        }
        None => (0..len, 0),
    };
    let is_child = |c: &headings::Heading| {
        let enclosing = all.iter().rev().find(|o| o.line < c.line && o.depth < c.depth);
        span.contains(&(c.line - 1)) && enclosing.map(|e| e.line) == parent.map(|p| p.line)
    };
    let sibling = |name: &str| -> crate::Result<&headings::Heading> {
        let s = headings::resolve(&all, name, note)?;
        if inside(s.line) {
            return Err(into_itself(name));
        }
        if !is_child(s) {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`{name}` is not directly under {} in `{note}`, so the section cannot go \
                     before or after it there; name one of that parent's own subheadings",
                    parent.map_or("the top level".to_string(), |p| format!("`{}`", p.text))
                ),
            ));
        }
        Ok(s)
    };
    let at = match slot {
        Slot::Last => span.end,
        Slot::First => {
            all.iter().find(|c| is_child(c) && !inside(c.line)).map_or(span.end, |c| c.line - 1)
        }
        Slot::Before(name) => sibling(name)?.line - 1,
        Slot::After(name) => {
            headings::section_lines(len, &all, sibling(name)?, Scope::MarkerAndContent).end
        }
    };
    // The moved lines, without the blank lines that trailed them (they go with the section,
    // so its old place closes up), re-levelled under the new parent.
    let last = lines[moved.clone()].iter().rposition(|l| !text::is_blank(l)).unwrap_or(0);
    let body: String = lines[moved.start..moved.start + last + 1].concat();
    let (body, warnings) = relevel(&body, depth + 1 - i32::from(h.depth));
    let mut out: Vec<Piece> = Vec::with_capacity(len + 4);
    // Set once the section is placed: the next kept line needs a blank line above it.
    let mut gap_owed = false;
    for (i, line) in lines.iter().enumerate() {
        if i == at {
            place(&mut out, &body);
            gap_owed = true;
        }
        if moved.contains(&i) {
            continue;
        }
        if gap_owed && !text::is_blank(line) {
            out.push(Piece::New(""));
        }
        gap_owed = false;
        out.push(Piece::Old(line));
    }
    if at >= len {
        place(&mut out, &body);
    }
    let style = Style::of(text.as_bytes());
    Ok(Moved {
        text: splice(text, &lines, 0..len, &out, style),
        from: headings::display_path(h),
        under: parent.map(headings::display_path),
        warnings,
    })
}

/// What [`move_section`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Moved {
    /// The note's new text.
    pub(crate) text: String,
    /// The moved heading's display path before the move (`A::B`).
    pub(crate) from: String,
    /// The new parent's display path; `None` for the top level.
    pub(crate) under: Option<String>,
    /// Headings the move pushed past level 6.
    pub(crate) warnings: Vec<Warning>,
}

/// Adds a moved section's lines to `out`, after one blank line when the line above is text.
fn place<'a>(out: &mut Vec<Piece<'a>>, body: &'a str) {
    if matches!(out.last(), Some(Piece::Old(l) | Piece::New(l)) if !text::is_blank(l)) {
        out.push(Piece::New(""));
    }
    out.extend(body.split_inclusive('\n').map(Piece::Old));
}

/// The note with the heading `target` (a `::` path) added when it names no heading yet, for
/// a patch that may create its target: the missing part of the path goes at the end of the deepest heading of it that
/// exists (one level deeper each), or at the end of the note from level 1. Only a target that
/// names no heading is created; an ambiguous one, or a block id, is refused as the resolver
/// refuses it, since no text says where or what the new part would be.
pub(crate) fn with_target(text: &str, note: &str, target: &str) -> crate::Result<String> {
    let all = headings::headings(text);
    let blocks = headings::blocks(text);
    match headings::locate(&all, &blocks, target, note) {
        Ok(_) => return Ok(text.to_string()),
        Err(e)
            if e.code() == ErrorCode::NoSuchHeading && headings::block_target(target).is_none() => {
        }
        Err(e) => return Err(e),
    }
    let parts: Vec<&str> = target.split("::").map(str::trim).filter(|p| !p.is_empty()).collect();
    let mut parent = None;
    for k in (1..parts.len()).rev() {
        match headings::resolve(&all, &parts[..k].join("::"), note) {
            Ok(h) => {
                parent = Some((k, h));
                break;
            }
            Err(e) if e.code() == ErrorCode::NoSuchHeading => {}
            Err(e) => return Err(e),
        }
    }
    let (have, depth) = parent.map_or((0, 0), |(k, h)| (k, usize::from(h.depth)));
    let missing = &parts[have..];
    if missing.is_empty() || depth + missing.len() > 6 {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "cannot create heading `{target}` in `{note}`: it would be deeper than level 6; \
                 name a shallower path"
            ),
        ));
    }
    let block: String = missing
        .iter()
        .enumerate()
        .map(|(n, p)| format!("{} {p}\n", "#".repeat(depth + n + 1)))
        .collect::<Vec<_>>()
        .join("\n");
    let Some((_, h)) = parent else { return Ok(append(text, &block)) };
    let lines = text::raw_lines(text);
    let range = headings::section_lines(lines.len(), &all, h, Scope::MarkerAndContent);
    if range.end == lines.len() {
        return Ok(append(text, &block));
    }
    let style = Style::of(text.as_bytes());
    let new: Vec<&str> = block.lines().collect();
    let region = &lines[range.clone()];
    let last =
        region.iter().rposition(|l| !text::is_blank(l)).map_or(range.start, |i| range.start + i);
    // The section's trailing blank lines become exactly one on each side of the new heading.
    let mut pieces = vec![Piece::New("")];
    pieces.extend(new.iter().copied().map(Piece::New));
    pieces.push(Piece::New(""));
    Ok(splice(text, &lines, last + 1..range.end, &pieces, style))
}

/// Reads one section: its heading line through the end of the section, right-trimmed, plus
/// a newline. The note's bytes are returned as they are, not normalised.
pub(crate) fn section_text(text: &str, note: &str, target: &str) -> crate::Result<String> {
    let all = headings::headings(text);
    let blocks = headings::blocks(text);
    let anchor = headings::locate(&all, &blocks, target, note)?;
    let starts = line_starts(text);
    let lines = headings::anchor_lines(starts.len(), &all, anchor, Scope::MarkerAndContent);
    let bom = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
    let start = starts[lines.start].max(bom);
    let end = starts.get(lines.end).copied().unwrap_or(text.len());
    Ok(format!("{}\n", text[start..end].trim_end()))
}

/// Byte offset of the start of every line, counted the way `str::lines` counts them.
pub(super) fn line_starts(text: &str) -> Vec<usize> {
    let mut offset = 0;
    text.split_inclusive('\n')
        .map(|line| {
            let start = offset;
            offset += line.len();
            start
        })
        .collect()
}

/// Appends `addition` to the note. The addition is stripped of blank edge lines and joined to
/// the note's last non-blank line with exactly one blank line, or none when it continues the
/// list or table the note ends with ([`joins_tightly`]): the note's trailing blank lines are
/// that gap, and are all the note loses. Everything up to and including its last non-blank
/// line keeps its bytes. An empty addition leaves the note byte for byte as it was.
pub(crate) fn append(text: &str, addition: &str) -> String {
    let addition = text::normalize(addition);
    let addition = text::strip_blank_edges(&addition);
    if addition.is_empty() {
        return text.to_string();
    }
    let style = Style::of(text.as_bytes());
    let (bom, rest) = text::split_bom(text);
    let lines = text::raw_lines(text);
    let Some(last) = lines.iter().rposition(|l| !text::is_blank(l)) else {
        return format!("{bom}{}{}", style.endings(addition), style.eol());
    };
    let kept: usize = lines[..=last].iter().map(|l| l.len()).sum();
    let mut out = format!("{bom}{}", &rest[..kept]);
    if !out.ends_with('\n') {
        out.push_str(style.eol());
    }
    if !joins_tightly(text, last, addition, 0) {
        out.push_str(style.eol());
    }
    out.push_str(&style.endings(addition));
    out.push_str(style.eol());
    out
}

/// Replaces the body, keeping the head (frontmatter block and the blank lines after it) byte
/// for byte. The new body is normalised and written with the note's line ending; without
/// frontmatter the note keeps its BOM.
pub(crate) fn set_body(text: &str, body: &str) -> String {
    let style = Style::of(text.as_bytes());
    let Some(block) = frontmatter::locate(text) else { return style.note(body) };
    let body = text::normalize(body);
    if body.is_empty() {
        // Blank lines after the block would be trailing blank lines of the file.
        let block = &text[..block.end];
        return if block.ends_with('\n') {
            block.to_string()
        } else {
            format!("{block}{}", style.eol())
        };
    }
    let (head, _) = frontmatter::split(text);
    let separator = if head.ends_with('\n') { "" } else { style.eol() };
    format!("{head}{separator}{}", style.endings(&body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::literal::replace_text;

    const BLOCKS: &str = "# A\n\nOne para. ^p\n\nSecond para.\n\n## Sub\n\nsub text\n\n# T\n\n| a | b |\n|---|---|\n| 1 | 2 | ^tbl\n";

    #[test]
    fn block_targets_patch_the_block_and_keep_its_id() {
        let (out, path) =
            patch_section(BLOCKS, "n.md", "^p", Operation::Replace, Scope::Content, "New para.")
                .unwrap();
        assert_eq!(path, "^p");
        assert!(out.contains("# A\n\nNew para. ^p\n\nSecond para."), "{out}");
        let (out, _) =
            patch_section(BLOCKS, "n.md", "^tbl", Operation::Append, Scope::Content, "| 3 | 4 |")
                .unwrap();
        assert!(out.ends_with("| 1 | 2 | ^tbl\n| 3 | 4 |\n"), "{out}");
        let (out, _) =
            patch_section(BLOCKS, "n.md", "^tbl", Operation::Replace, Scope::Content, "| 9 | 9 |")
                .unwrap();
        assert!(out.ends_with("# T\n\n| a | b |\n|---|---|\n| 9 | 9 | ^tbl\n"), "{out}");
        let err = patch_section(BLOCKS, "n.md", "^tbl", Operation::Append, Scope::Content, "| 3 |")
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidRequest);
        assert!(err.message().contains("2 columns"), "{err}");
    }

    #[test]
    fn within_edits_one_body_block_of_the_section_only() {
        let at = |i, op, scope, c| patch_within(BLOCKS, "n.md", "A", i, op, scope, c);
        let (out, _) = at(0, Operation::Append, Scope::Content, " more").unwrap();
        assert!(out.contains("One para. more ^p\n"), "{out}");
        let (out, _) = at(-1, Operation::Append, Scope::MarkerAndContent, "Third.").unwrap();
        assert!(out.contains("Second para.\n\nThird.\n\n## Sub"), "{out}");
        let (out, _) = at(0, Operation::Replace, Scope::Content, "").unwrap();
        assert!(out.starts_with("# A\n\nSecond para.\n\n## Sub"), "{out}");
        let err = at(2, Operation::Append, Scope::Content, "x").unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
        assert!(err.message().contains("out of range"), "{err}");
    }

    #[test]
    fn within_appending_nothing_leaves_the_note_as_it_was() {
        let (out, _) =
            patch_within(BLOCKS, "n.md", "A", 0, Operation::Append, Scope::Content, "").unwrap();
        assert_eq!(out, BLOCKS);
    }

    /// The body blocks `within` sees in the section `A` of `text`, one string each, by
    /// replacing each block in turn with a marker and reading back what it took.
    fn within_blocks(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for i in 0.. {
            let Ok((new, _)) =
                patch_within(text, "n.md", "A", i, Operation::Replace, Scope::Content, "@@")
            else {
                break;
            };
            let at = new.find("@@\n").unwrap();
            let taken = text.len() + 3 - new.len();
            out.push(text[at..at + taken].to_string());
        }
        out
    }

    #[test]
    fn within_blocks_hold_a_fence_whole_whatever_blank_lines_it_holds() {
        let backticks = "# A\n\n```sh\necho one\n\necho two\n```\n\nAfter.\n";
        assert_eq!(within_blocks(backticks), ["```sh\necho one\n\necho two\n```\n", "After.\n"]);
        let tildes = "# A\n\nBefore.\n\n~~~\n# not a heading\n\n\n~~~\n";
        assert_eq!(within_blocks(tildes), ["Before.\n", "~~~\n# not a heading\n\n\n~~~\n"]);
        // A fence inside a list item, with a blank line in the code, stays in its item's block.
        let listed = "# A\n\n- step\n  ```\n  a\n\n  b\n  ```\n\nEnd.\n";
        assert_eq!(within_blocks(listed), ["- step\n  ```\n  a\n\n  b\n  ```\n", "End.\n"]);
        // A callout with a fence and a `>` spacer line is one block.
        let callout = "# A\n\n> [!note]\n> ```\n> x\n>\n> y\n> ```\n\nEnd.\n";
        assert_eq!(within_blocks(callout), ["> [!note]\n> ```\n> x\n>\n> y\n> ```\n", "End.\n"]);
        // Deleting the fence block leaves no fence open: the rest of the note is as it was.
        let (out, _) =
            patch_within(backticks, "n.md", "A", 0, Operation::Replace, Scope::Content, "")
                .unwrap();
        assert_eq!(out, "# A\n\nAfter.\n");
    }

    #[test]
    fn a_missing_heading_target_is_created_under_its_deepest_parent() {
        let out = with_target(BLOCKS, "n.md", "A::New").unwrap();
        assert!(out.contains("sub text\n\n## New\n\n# T"), "{out}");
        let out = with_target(BLOCKS, "n.md", "Fresh").unwrap();
        assert!(out.ends_with("| 1 | 2 | ^tbl\n\n# Fresh\n"), "{out}");
        assert_eq!(with_target(BLOCKS, "n.md", "A::Sub").unwrap(), BLOCKS);
        let err = with_target(BLOCKS, "n.md", "^nope").unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
    }

    const NOTE: &str = "# Example\n\nIntro.\n\n## Section\n\nFirst line.\n\n## Other\n\nMore.\n";

    fn patch(text: &str, target: &str, op: Operation, scope: Scope, content: &str) -> String {
        patch_section(text, "n.md", target, op, scope, content).unwrap().0
    }

    #[test]
    fn content_patches_give_exact_outputs() {
        let (out, path) = patch_section(
            NOTE,
            "n.md",
            "Section",
            Operation::Replace,
            Scope::Content,
            "\nNew.\n\n",
        )
        .unwrap();
        assert_eq!(path, "Example::Section");
        assert_eq!(out, "# Example\n\nIntro.\n\n## Section\n\nNew.\n\n## Other\n\nMore.\n");
        assert_eq!(
            patch(NOTE, "section", Operation::Append, Scope::Content, "New."),
            "# Example\n\nIntro.\n\n## Section\n\nFirst line.\n\nNew.\n\n## Other\n\nMore.\n"
        );
        assert_eq!(
            patch(NOTE, "Example::Section", Operation::Prepend, Scope::Content, "New."),
            "# Example\n\nIntro.\n\n## Section\n\nNew.\n\nFirst line.\n\n## Other\n\nMore.\n"
        );
        assert_eq!(
            patch(NOTE, "Other", Operation::Append, Scope::Content, "Last.\r\n"),
            "# Example\n\nIntro.\n\n## Section\n\nFirst line.\n\n## Other\n\nMore.\n\nLast.\n"
        );
    }

    #[test]
    fn appending_a_list_item_to_a_list_continues_the_list() {
        let note = "# Log\n\n- 2025-03-01 serviced\n- 2025-09-02 checked\n";
        assert_eq!(
            append(note, "- 2026-05-01 booked\n"),
            "# Log\n\n- 2025-03-01 serviced\n- 2025-09-02 checked\n- 2026-05-01 booked\n"
        );
        assert_eq!(append("1. one\n2. two\n\n\n", "3. three"), "1. one\n2. two\n3. three\n");
        // An item with text indented under it is still the list the new item continues.
        assert_eq!(append("- a\n  more\n", "- b"), "- a\n  more\n- b\n");
        // In a callout, a quoted item continues the quoted list.
        assert_eq!(append("> - a\n", "> - b"), "> - a\n> - b\n");
        // A paragraph after a list, or an item after a paragraph, stays a paragraph apart.
        assert_eq!(append("- a\n", "Done."), "- a\n\nDone.\n");
        assert_eq!(append("Text.\n", "- a"), "Text.\n\n- a\n");
        // A list item after code inside an item is not joined to an open fence.
        assert_eq!(append("- a\n  ```\n  code\n", "- b"), "- a\n  ```\n  code\n\n- b\n");
        let s = "# T\n## Log\n\n- a\n- b\n\n## Next\nx\n";
        assert_eq!(
            patch(s, "Log", Operation::Append, Scope::Content, "- c"),
            "# T\n## Log\n\n- a\n- b\n- c\n\n## Next\nx\n"
        );
        assert_eq!(
            patch(s, "Log", Operation::Prepend, Scope::Content, "- first\n"),
            "# T\n## Log\n\n- first\n- a\n- b\n\n## Next\nx\n"
        );
        assert_eq!(
            patch(s, "Log", Operation::Append, Scope::Content, "After."),
            "# T\n## Log\n\n- a\n- b\n\nAfter.\n\n## Next\nx\n"
        );
    }

    #[test]
    fn appending_a_table_row_under_a_table_keeps_it_in_the_table() {
        let note = "## Contacts\n\n| Who | Phone |\n| --- | --- |\n| Gas | 0100 |\n\n## End\n";
        assert_eq!(
            patch(note, "Contacts", Operation::Append, Scope::Content, "| Water | 0200 |"),
            "## Contacts\n\n| Who | Phone |\n| --- | --- |\n| Gas | 0100 |\n| Water | 0200 |\n\n\
             ## End\n"
        );
        assert_eq!(
            append("| a | b |\n|---|---|\n| 1 | 2 |\r\n", "| 3 | 4 |"),
            "| a | b |\n|---|---|\n| 1 | 2 |\r\n| 3 | 4 |\n"
        );
        assert_eq!(append("| a |\n", "Text"), "| a |\n\nText\n");
    }

    #[test]
    fn a_replace_reports_what_it_replaced() {
        let done =
            super::patch(NOTE, "n.md", "Section", Operation::Replace, Scope::Content, "").unwrap();
        assert_eq!(done.text, "# Example\n\nIntro.\n\n## Section\n\n## Other\n\nMore.\n");
        assert_eq!(done.replaced.as_deref(), Some("First line.\n"));
        let done =
            super::patch(NOTE, "n.md", "Section", Operation::Replace, Scope::Content, "New.")
                .unwrap();
        assert_eq!(done.replaced.as_deref(), Some("First line.\n"));
        let added =
            super::patch(NOTE, "n.md", "Section", Operation::Append, Scope::Content, "").unwrap();
        assert_eq!((added.text.as_str(), added.replaced), (NOTE, None), "nothing to add");
    }

    #[test]
    fn a_marker_replace_keeps_the_heading_a_heading() {
        assert_eq!(
            patch(NOTE, "Section", Operation::Replace, Scope::Marker, "Renamed"),
            "# Example\n\nIntro.\n\n## Renamed\n\nFirst line.\n\n## Other\n\nMore.\n",
            "bare text keeps the level"
        );
        assert_eq!(
            patch(NOTE, "Section", Operation::Replace, Scope::Marker, "### Deeper"),
            "# Example\n\nIntro.\n\n### Deeper\n\nFirst line.\n\n## Other\n\nMore.\n"
        );
        for bad in ["#NoSpace", "####### seven", "## A\nbody"] {
            let err =
                patch_section(NOTE, "n.md", "Section", Operation::Replace, Scope::Marker, bad)
                    .unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidRequest, "{bad}");
        }
        let (out, _) =
            patch_section(NOTE, "n.md", "Section", Operation::Replace, Scope::Marker, "Renamed")
                .unwrap();
        assert_eq!(headings::headings(&out).len(), headings::headings(NOTE).len());
    }

    #[test]
    fn content_gaps_are_normalised_to_one_blank_line() {
        let cramped = "# T\n## A\nold\n## B\n";
        assert_eq!(
            patch(cramped, "A", Operation::Append, Scope::Content, "new"),
            "# T\n## A\n\nold\n\nnew\n\n## B\n"
        );
        let empty = "# T\n## A\n## B\n";
        assert_eq!(
            patch(empty, "A", Operation::Append, Scope::Content, "new"),
            "# T\n## A\n\nnew\n\n## B\n"
        );
        assert_eq!(
            patch(empty, "B", Operation::Prepend, Scope::Content, "new"),
            "# T\n## A\n## B\n\nnew\n"
        );
        assert_eq!(
            patch(NOTE, "Section", Operation::Replace, Scope::Content, ""),
            "# Example\n\nIntro.\n\n## Section\n\n## Other\n\nMore.\n"
        );
        assert_eq!(patch(NOTE, "Section", Operation::Append, Scope::Content, "\n\n"), NOTE);
    }

    #[test]
    fn repeated_appends_never_widen_gaps() {
        let mut text = NOTE.to_string();
        for n in 0..4 {
            text =
                patch(&text, "Section", Operation::Append, Scope::Content, &format!("\n{n}\n\n"));
            assert!(!text.contains("\n\n\n"), "{text:?}");
        }
        assert_eq!(
            text,
            "# Example\n\nIntro.\n\n## Section\n\nFirst line.\n\n0\n\n1\n\n2\n\n3\n\n## Other\n\nMore.\n"
        );
    }

    #[test]
    fn replacing_a_section_removes_its_subsections() {
        let text = "# T\n\n## A\n\na\n\n### B\n\nb\n\n## C\n\nc\n";
        assert_eq!(
            patch(text, "A", Operation::Replace, Scope::Content, "x"),
            "# T\n\n## A\n\nx\n\n## C\n\nc\n"
        );
    }

    #[test]
    fn a_section_replaced_with_its_own_text_comes_back_byte_for_byte() {
        let read = section_text(NOTE, "n.md", "Section").unwrap();
        assert_eq!(
            patch(NOTE, "Section", Operation::Replace, Scope::MarkerAndContent, &read),
            NOTE
        );
        // Deleting the section closes the gap rather than doubling it.
        assert_eq!(
            patch_section(NOTE, "n.md", "Section", Operation::Replace, Scope::MarkerAndContent, "")
                .unwrap()
                .0,
            "# Example\n\nIntro.\n\n## Other\n\nMore.\n"
        );
    }

    #[test]
    fn relevel_moves_only_heading_markers_and_warns_past_six() {
        let text =
            "# Child\n\n```\n# not a heading\n```\n> # quoted\n\n## Grandchild ##\ntext # x\n";
        let (out, warnings) = relevel(text, 2);
        assert_eq!(
            out,
            "### Child\n\n```\n# not a heading\n```\n> # quoted\n\n#### Grandchild ##\ntext # x\n"
        );
        assert!(warnings.is_empty());
        let (out, warnings) = relevel("###### deep\n", 1);
        assert_eq!(out, "####### deep\n");
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].code, "heading-depth-overflow");
        assert!(warnings[0].message.contains("\"deep\""), "{}", warnings[0].message);
        // Shallower never goes below level 1, and zero changes nothing.
        assert_eq!(relevel("## A\n#### B\n", -3).0, "# A\n# B\n");
        assert_eq!(relevel("## A\r\n", 0).0, "## A\r\n");
    }

    #[test]
    fn level_offsets_follow_the_scope() {
        let text = "# A\n## B\nx\n";
        let at = |scope, within| level_offset(text, "n.md", "A::B", scope, within);
        assert_eq!(at(Scope::Content, false), 2);
        assert_eq!(at(Scope::MarkerAndContent, false), 1);
        assert_eq!(at(Scope::Marker, false), 0);
        assert_eq!(at(Scope::MarkerAndContent, true), 2);
        assert_eq!(level_offset(text, "n.md", "Nope", Scope::Content, false), 0);
    }

    const TREE: &str = "# Alpha\n\nA text.\n\n## Sub\n\nSub text.\n\n### Deep\n\nDeep text.\n\n# Beta\n\nB text.\n\n## One\n\n1\n\n## Two\n\n2\n";

    fn moved(target: &str, parent: Option<&str>, slot: Slot) -> crate::Result<String> {
        move_section(TREE, "n.md", target, parent, &slot).map(|m| m.text)
    }

    #[test]
    fn a_moved_section_is_relevelled_under_its_new_parent() {
        assert_eq!(
            moved("Alpha::Sub", Some("Beta"), Slot::Last).unwrap(),
            "# Alpha\n\nA text.\n\n# Beta\n\nB text.\n\n## One\n\n1\n\n## Two\n\n2\n\n## Sub\n\nSub text.\n\n### Deep\n\nDeep text.\n"
        );
        assert_eq!(
            moved("Alpha::Sub", Some("Beta"), Slot::First).unwrap(),
            "# Alpha\n\nA text.\n\n# Beta\n\nB text.\n\n## Sub\n\nSub text.\n\n### Deep\n\nDeep text.\n\n## One\n\n1\n\n## Two\n\n2\n"
        );
        assert_eq!(
            moved("Sub", Some("Beta"), Slot::After("Beta::One".into())).unwrap(),
            "# Alpha\n\nA text.\n\n# Beta\n\nB text.\n\n## One\n\n1\n\n## Sub\n\nSub text.\n\n### Deep\n\nDeep text.\n\n## Two\n\n2\n"
        );
        // To the top level: the subtree rises one level and keeps its nesting.
        assert_eq!(
            moved("Sub", None, Slot::Before("Beta".into())).unwrap(),
            "# Alpha\n\nA text.\n\n# Sub\n\nSub text.\n\n## Deep\n\nDeep text.\n\n# Beta\n\nB text.\n\n## One\n\n1\n\n## Two\n\n2\n"
        );
    }

    /// The lines of a note as a sorted list, heading markers dropped: what a move must keep.
    fn kept_lines(text: &str) -> Vec<String> {
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.trim_start_matches('#').trim().to_string())
            .collect();
        lines.sort();
        lines
    }

    proptest::proptest! {
        #[test]
        fn a_move_loses_and_adds_no_line(
            blocks in proptest::collection::vec((0..4usize, 0..3usize), 1..14),
            pick in 0..14usize,
            under in 0..15usize,
        ) {
            // Numbered headings (levels 1 to 3) and paragraphs, so every line is unique.
            let text: String = blocks
                .iter()
                .enumerate()
                .map(|(n, &(kind, depth))| match kind {
                    0 => format!("{} H{n}\n\n", "#".repeat(depth + 1)),
                    _ => format!("text {n}\n\n"),
                })
                .collect();
            let all = headings::headings(&text);
            if all.is_empty() {
                return Ok(());
            }
            let h = &all[pick % all.len()];
            let parent = all.get(under).map(|p| p.text.clone());
            match move_section(&text, "n.md", &h.text, parent.as_deref(), &Slot::Last) {
                Ok(moved) => {
                    proptest::prop_assert_eq!(kept_lines(&moved.text), kept_lines(&text));
                    let after = headings::headings(&moved.text);
                    let landed = after.iter().find(|a| a.text == h.text).unwrap();
                    let parent_depth = parent
                        .as_deref()
                        .and_then(|p| after.iter().find(|a| a.text == p))
                        .map_or(0, |p| p.depth);
                    if moved.warnings.is_empty() {
                        proptest::prop_assert_eq!(landed.depth, parent_depth + 1);
                    }
                }
                Err(e) => proptest::prop_assert_eq!(e.code(), ErrorCode::InvalidRequest),
            }
        }
    }

    #[test]
    fn a_move_into_itself_or_beside_a_stranger_is_refused() {
        let code = |r: crate::Result<String>| r.unwrap_err().code();
        assert_eq!(code(moved("Alpha", Some("Deep"), Slot::Last)), ErrorCode::InvalidRequest);
        assert_eq!(
            code(moved("Sub", Some("Beta"), Slot::Before("Alpha".into()))),
            ErrorCode::InvalidRequest
        );
        assert_eq!(code(moved("Sub", Some("Nowhere"), Slot::Last)), ErrorCode::NoSuchHeading);
    }

    #[test]
    fn marker_scopes_use_raw_lines() {
        assert_eq!(
            patch(NOTE, "Section", Operation::Replace, Scope::Marker, "## Renamed"),
            "# Example\n\nIntro.\n\n## Renamed\n\nFirst line.\n\n## Other\n\nMore.\n"
        );
        assert_eq!(
            patch(NOTE, "Section", Operation::Append, Scope::Marker, "Under."),
            "# Example\n\nIntro.\n\n## Section\n\nUnder.\n\nFirst line.\n\n## Other\n\nMore.\n"
        );
        assert_eq!(
            patch(NOTE, "Section", Operation::Prepend, Scope::Marker, "Above."),
            "# Example\n\nIntro.\n\nAbove.\n\n## Section\n\nFirst line.\n\n## Other\n\nMore.\n"
        );
        assert_eq!(
            patch(
                NOTE,
                "Section",
                Operation::Replace,
                Scope::MarkerAndContent,
                "## New\n\nBody.\n"
            ),
            "# Example\n\nIntro.\n\n## New\n\nBody.\n\n## Other\n\nMore.\n"
        );
        assert_eq!(
            patch(NOTE, "Other", Operation::Append, Scope::MarkerAndContent, "Tail."),
            "# Example\n\nIntro.\n\n## Section\n\nFirst line.\n\n## Other\n\nMore.\n\nTail.\n"
        );
        assert_eq!(
            patch(NOTE, "Other", Operation::Prepend, Scope::MarkerAndContent, "Lead."),
            "# Example\n\nIntro.\n\n## Section\n\nFirst line.\n\nLead.\n\n## Other\n\nMore.\n"
        );
    }

    #[test]
    fn patch_refusals_carry_resolver_codes() {
        let text = "# Recipe\n## Mince\n### Method\n## Mash\n### Method\n";
        let err = patch_section(text, "r.md", "Method", Operation::Append, Scope::Content, "x")
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::AmbiguousHeading);
        assert!(err.message().contains("2 headings match"));
        assert!(
            err.message().contains(
                "    Recipe::Mince::Method  (line 3; target `Recipe::Mince::Method@3`)\n"
            )
        );
        let (out, path) =
            patch_section(text, "r.md", "Mince::Method", Operation::Append, Scope::Content, "x")
                .unwrap();
        assert_eq!(path, "Recipe::Mince::Method");
        assert_eq!(out, "# Recipe\n## Mince\n### Method\n\nx\n\n## Mash\n### Method\n");
        let err = patch_section(text, "r.md", "Nope", Operation::Append, Scope::Content, "x")
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
    }

    #[test]
    fn patches_keep_frontmatter_and_count_its_lines() {
        let text = "---\ntitle: x\n# not a heading\n---\n# H\nbody\n";
        assert_eq!(
            patch(text, "H", Operation::Replace, Scope::Content, "new"),
            "---\ntitle: x\n# not a heading\n---\n# H\n\nnew\n"
        );
        let err =
            patch_section(text, "n.md", "not a heading", Operation::Replace, Scope::Content, "")
                .unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
    }

    #[test]
    fn operations_parse_case_insensitively() {
        assert_eq!("APPEND".parse::<Operation>().unwrap(), Operation::Append);
        assert_eq!("Prepend".parse::<Operation>().unwrap(), Operation::Prepend);
        let err = "insert".parse::<Operation>().unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidRequest);
        assert_eq!(
            err.message(),
            "unknown operation `insert`; use one of replace, prepend, append"
        );
    }

    #[test]
    fn reads_a_section_with_its_subsections() {
        let text = "# T\r\n## A\r\na\r\n### B\r\nb\r\n\r\n## C\r\nc";
        assert_eq!(section_text(text, "n.md", "A").unwrap(), "## A\r\na\r\n### B\r\nb\n");
        assert_eq!(section_text(text, "n.md", "C").unwrap(), "## C\r\nc\n");
        assert_eq!(section_text("\u{feff}# T\nx\n", "n.md", "T").unwrap(), "# T\nx\n");
        assert_eq!(section_text(text, "n.md", "Z").unwrap_err().code(), ErrorCode::NoSuchHeading);
    }

    #[test]
    fn appends_join_with_one_blank_line() {
        assert_eq!(append("Text\n\n\n", "\n\nMore\n\n"), "Text\n\nMore\n");
        assert_eq!(append("Text", "More"), "Text\n\nMore\n");
        assert_eq!(
            append("Text\r\n\r\n", "\n \n"),
            "Text\r\n\r\n",
            "nothing to add, nothing changes"
        );
        assert_eq!(append("", "More"), "More\n");
        assert_eq!(append("---\na: 1\n---\n", "More"), "---\na: 1\n---\n\nMore\n");
    }

    #[test]
    fn set_body_keeps_the_head_bytes() {
        let text = "---\r\ntitle: [broken\r\n---\r\n\r\nOld body\r\n";
        assert_eq!(
            set_body(text, "New\r\nbody"),
            "---\r\ntitle: [broken\r\n---\r\n\r\nNew\r\nbody\r\n"
        );
        assert_eq!(set_body("Old\n", "New"), "New\n");
        assert_eq!(set_body("\u{feff}Old\n", "New\n\n"), "\u{feff}New\n");
        assert_eq!(set_body("\u{feff}Old\r\n", ""), "");
        assert_eq!(set_body("---\na: 1\n---", "New"), "---\na: 1\n---\nNew\n");
        assert_eq!(set_body("---\na: 1\n---\n\n\nOld\n", ""), "---\na: 1\n---\n");
    }

    /// A Windows note: BOM, CRLF, trailing whitespace, a section with trailing blank lines.
    const WINDOWS: &str = "\u{feff}---\r\ntitle: T  \r\n---\r\n# T\r\n\r\n## A\r\n\r\nold a\t\r\n\r\n\
                           ## B\r\n\r\nold b  \r\n\r\n\r\n";

    #[test]
    fn every_edit_keeps_a_crlf_note_crlf_and_its_untouched_bytes_identical() {
        let (head, a_to_b, b) = (
            "\u{feff}---\r\ntitle: T  \r\n---\r\n# T\r\n\r\n",
            "## A\r\n\r\nold a\t\r\n\r\n",
            "## B\r\n\r\nold b  \r\n\r\n\r\n",
        );
        assert_eq!(WINDOWS, format!("{head}{a_to_b}{b}"));
        let patched = |target, op, scope, content| {
            patch_section(WINDOWS, "n.md", target, op, scope, content).unwrap().0
        };
        let cases: Vec<(&str, String, String)> = vec![
            (
                "append to a section",
                patched("A", Operation::Append, Scope::Content, "new\nlines\n"),
                format!("{head}## A\r\n\r\nold a\t\r\n\r\nnew\r\nlines\r\n\r\n{b}"),
            ),
            (
                "prepend to a section",
                patched("A", Operation::Prepend, Scope::Content, "new"),
                format!("{head}## A\r\n\r\nnew\r\n\r\nold a\t\r\n\r\n{b}"),
            ),
            (
                "replace a section",
                patched("A", Operation::Replace, Scope::Content, "new\r\n"),
                format!("{head}## A\r\n\r\nnew\r\n\r\n{b}"),
            ),
            (
                "rename a heading",
                patched("A", Operation::Replace, Scope::Marker, "## A2"),
                format!("{head}## A2\r\n\r\nold a\t\r\n\r\n{b}"),
            ),
            (
                "append to the last section, whose trailing blank lines are its own",
                patched("B", Operation::Append, Scope::Content, "new"),
                format!("{head}{a_to_b}## B\r\n\r\nold b  \r\n\r\nnew\r\n"),
            ),
            (
                "append to the note",
                append(WINDOWS, "more\n"),
                format!("{head}{a_to_b}## B\r\n\r\nold b  \r\n\r\nmore\r\n"),
            ),
            (
                "set the body",
                set_body(WINDOWS, "new\nbody\n"),
                "\u{feff}---\r\ntitle: T  \r\n---\r\nnew\r\nbody\r\n".to_string(),
            ),
            (
                "replace text",
                replace_text(WINDOWS, "n.md", "old a", "new a", None, 1).unwrap().0,
                format!("{head}## A\r\n\r\nnew a\t\r\n\r\n{b}"),
            ),
            (
                "set a frontmatter key",
                frontmatter::set(WINDOWS, "status", &serde_json::json!("draft")).unwrap(),
                WINDOWS.replacen("T  \r\n---", "T  \r\nstatus: draft\r\n---", 1),
            ),
            (
                "set a frontmatter key to a list",
                frontmatter::set(WINDOWS, "title", &serde_json::json!(["a", "b"])).unwrap(),
                WINDOWS.replacen("title: T  \r\n", "title:\r\n  - a\r\n  - b\r\n", 1),
            ),
            (
                "delete a frontmatter key",
                frontmatter::delete(WINDOWS, "title").unwrap(),
                WINDOWS.replacen("title: T  \r\n", "", 1),
            ),
        ];
        for (what, out, expected) in cases {
            assert_eq!(out, expected, "{what}");
            let bare_lf = out.match_indices('\n').filter(|(i, _)| !out[..*i].ends_with('\r'));
            assert_eq!(bare_lf.count(), 0, "{what} wrote an LF line ending into a CRLF note");
            assert!(out.starts_with(BOM), "{what} dropped the BOM");
        }
    }

    #[test]
    fn edits_away_from_the_end_keep_trailing_blank_lines_and_a_missing_final_newline() {
        for (label, note) in [
            ("no final newline", "---\na: 1\n---\n# T\n## A\nx\n## B\nlast"),
            ("trailing blank lines", "---\na: 1\n---\n# T\n## A\nx\n## B\nlast \n\n \n\n"),
        ] {
            let tail = &note[note.find("## B").unwrap()..];
            let outputs = [
                patch_section(note, "n.md", "A", Operation::Append, Scope::Content, "y").unwrap().0,
                patch_section(note, "n.md", "A", Operation::Replace, Scope::Marker, "## Z")
                    .unwrap()
                    .0,
                replace_text(note, "n.md", "x", "y", None, 1).unwrap().0,
                frontmatter::set(note, "b", &serde_json::json!(2)).unwrap(),
                frontmatter::delete(note, "a").unwrap(),
                frontmatter::bump_timestamp(note, "2026-01-01T00:00:00Z").unwrap(),
            ];
            for out in outputs {
                assert!(out.ends_with(tail), "{label}: {out:?}");
            }
        }
        // Prepending to the last section leaves its last line, and the missing newline, alone.
        let note = "# T\n## B\nlast";
        let out = patch_section(note, "n.md", "B", Operation::Prepend, Scope::Content, "new");
        assert_eq!(out.unwrap().0, "# T\n## B\n\nnew\n\nlast");
        let out = patch_section(note, "n.md", "B", Operation::Append, Scope::Content, "new");
        assert_eq!(out.unwrap().0, "# T\n## B\n\nlast\n\nnew\n");
    }

    #[test]
    fn a_bom_survives_every_edit_of_a_note_without_frontmatter() {
        let note = "\u{feff}# T\nx  \n";
        let outputs = [
            patch_section(note, "n.md", "T", Operation::Append, Scope::Content, "y").unwrap().0,
            patch_section(note, "n.md", "T", Operation::Replace, Scope::Marker, "# U").unwrap().0,
            append(note, "y"),
            set_body(note, "y"),
            replace_text(note, "n.md", "x", "y", None, 1).unwrap().0,
        ];
        assert_eq!(
            outputs,
            [
                "\u{feff}# T\n\nx  \n\ny\n",
                "\u{feff}# U\nx  \n",
                "\u{feff}# T\nx  \n\ny\n",
                "\u{feff}y\n",
                "\u{feff}# T\ny  \n",
            ]
        );
        let err = replace_text(note, "n.md", "\u{feff}", "", None, 1).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchText, "the BOM is not text to replace");
    }

    #[test]
    fn leading_blank_lines_and_inner_spacing_outside_the_section_are_kept() {
        let note = "\n\n# T\n\n\n\nkeep   \n## A\nx\n";
        assert_eq!(append(note, "y"), "\n\n# T\n\n\n\nkeep   \n## A\nx\n\ny\n");
        assert_eq!(
            patch_section(note, "n.md", "A", Operation::Append, Scope::Content, "y").unwrap().0,
            "\n\n# T\n\n\n\nkeep   \n## A\n\nx\n\ny\n"
        );
    }
}
