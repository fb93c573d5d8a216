//! The Markdown line model: every line of a note, classified once, the same way for everyone.
//!
//! [`lines`] walks a text and yields one [`Line`] per line: its 0-based number, its byte range,
//! its raw text, its [`Class`] (frontmatter, fence opener or closer, fenced or indented code,
//! blank, ATX heading, or text) and the blockquote markers it carries. Headings, links, the
//! chunker, callouts, index.md and the checks all read lines through it, so they cannot disagree
//! on what is code. This module also owns the frontmatter block rule ([`frontmatter_block`]),
//! because the first thing a line needs to know is whether it is YAML.
//!
//! The rules are CommonMark's block structure, restricted to what a line's class needs:
//! blockquotes and list items are tracked as containers (a fence opened inside a `>` quote or a
//! list item ends with it; text indented under a list item is that item's content, not indented
//! code), paragraphs are tracked so an indented line cannot interrupt one, and lazy
//! continuation lines keep their paragraph open. Setext headings are not headings here: their
//! underline is text that ends the paragraph, and no caller addresses a setext section.
//!
//! Of the inline structure, only code spans are here ([`code_spans`]), because links and the
//! chunker's `%%` comments must agree on what a code span hides.
//!
//! Deliberately not done: HTML blocks (a `# line` inside `<div>` is still a heading), link
//! reference definitions and tables (both read as text), and the rest of inline structure
//! (emphasis, links: `vault::links` reads those within a line). Nothing here allocates per line:
//! lines, info strings and heading texts are borrowed from the input. It knows nothing of
//! vaults, YAML values or the index.

use std::collections::HashMap;
use std::ops::Range;

/// The UTF-8 byte-order mark, which may precede the first line and is not part of it.
const BOM: char = '\u{feff}';

/// Columns of indentation that make a line indented code, and one more than a block marker
/// (`#`, a fence, `>`, a list marker) may have before it.
const CODE_INDENT: usize = 4;

/// A tab advances to the next multiple of this column, as CommonMark specifies.
const TAB_STOP: usize = 4;

/// The shortest run of backticks or tildes that opens a fence.
const FENCE_MIN: usize = 3;

/// The deepest ATX heading level; a line with more `#` markers is a paragraph.
pub(crate) const HEADING_MAX: usize = 6;

/// An ordered list marker has at most this many digits (longer numbers are text).
const ORDERED_MAX_DIGITS: usize = 9;

/// The most containers (blockquotes and list items together) a line can be inside. Real notes
/// nest a handful deep. A `>` or list marker past this depth is paragraph text: every line
/// walks the containers open above it, so without a cap a note nested thousands deep (a line
/// of `- - - …`, then thousands of lines under it) costs its depth for every line, and its
/// scans take minutes instead of milliseconds. Also the most blockquote markers a line
/// carries (see [`Line::after_quotes`]).
pub(crate) const MAX_NESTING: usize = 32;

// ---------------------------------------------------------------------------------------------
// Frontmatter

/// Where the frontmatter block sits in a note's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontmatterBlock {
    /// Byte offset of the opening fence (3 after a UTF-8 BOM, else 0).
    pub(crate) start: usize,
    /// Byte offset of the first YAML byte (the line after the opening fence).
    pub(crate) yaml_start: usize,
    /// Byte offset of the closing fence line.
    pub(crate) yaml_end: usize,
    /// Byte offset just past the closing fence line (and its newline, if any).
    pub(crate) end: usize,
    /// 0-based line index of the closing fence.
    pub close_line: usize,
}

/// True for a frontmatter fence line: `---` with only spaces or tabs after it (a line ending,
/// if present, is ignored).
pub(crate) fn is_frontmatter_fence(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']) == "---"
}

/// The frontmatter block: the first line (after an optional BOM) is a fence ending in a newline
/// and a later line is a fence. Such a leading block is always frontmatter, even if the author
/// meant horizontal rules; without a closing fence there is none.
pub(crate) fn frontmatter_block(text: &str) -> Option<FrontmatterBlock> {
    let start = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
    let mut lines = text[start..].split_inclusive('\n');
    let first = lines.next()?;
    if !is_frontmatter_fence(first) || !first.ends_with('\n') {
        return None;
    }
    let yaml_start = start + first.len();
    let mut offset = yaml_start;
    for (idx, line) in lines.enumerate() {
        if is_frontmatter_fence(line) {
            return Some(FrontmatterBlock {
                start,
                yaml_start,
                yaml_end: offset,
                end: offset + line.len(),
                close_line: idx + 1,
            });
        }
        offset += line.len();
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Lines

/// What a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class<'a> {
    /// Part of the frontmatter block, its two `---` fences included.
    Frontmatter,
    /// Opens a fenced code block: `marker` (a backtick or a tilde) repeated `len` times, then
    /// the info string, trimmed.
    FenceOpen { marker: char, len: usize, info: &'a str },
    /// Closes the fenced code block opened above it.
    FenceClose,
    /// Inside a fenced code block.
    FencedCode,
    /// An indented code block line (four columns in from its container, not continuing a
    /// paragraph).
    IndentedCode,
    /// Nothing but spaces and tabs after the container markers. A blank line inside a fence is
    /// `FencedCode`; one between indented code lines is `Blank`.
    Blank,
    /// An ATX heading: `level` `#`s, then `text` without the closing run or edge whitespace.
    Heading { level: u8, text: &'a str },
    /// Anything else: paragraph text, list items, table rows, rules, setext underlines.
    Text,
}

impl Class<'_> {
    /// True for the lines of a code block, fences included: no heading, link, callout or
    /// comment is read in them.
    pub(crate) fn is_code(&self) -> bool {
        matches!(
            self,
            Class::FenceOpen { .. } | Class::FenceClose | Class::FencedCode | Class::IndentedCode
        )
    }
}

/// One classified line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 0-based line number; lines end at `\n` only, as `str::lines` counts them.
    pub(crate) number: usize,
    /// Byte offset of the line's first byte in the text (after the BOM on line 0).
    pub(crate) start: usize,
    /// Byte offset just past the line's content: its `\n` (or `\r\n`) is excluded.
    pub(crate) end: usize,
    /// `text[start..end]`.
    pub(crate) raw: &'a str,
    /// What the line is.
    pub(crate) class: Class<'a>,
    /// How many blockquote markers (`>`) the line carries that open or continue a quote. A lazy
    /// continuation line (quoted paragraph text going on without its `>`) carries none. At
    /// most [`MAX_NESTING`]: markers past it are text.
    pub(crate) quote_depth: usize,
    /// Offsets in `raw` just past each marker (and the one optional space after it).
    quote_ends: [u32; MAX_NESTING],
    /// The line belongs to a list item: it opens one, or continues one (indented under it,
    /// or lazily).
    pub(crate) in_item: bool,
    /// The line opens a list item (`- x`, `1. x`).
    pub(crate) opens_item: bool,
}

impl<'a> Line<'a> {
    /// The line after its blockquote markers: the whole line when it has none.
    pub(crate) fn quoted(&self) -> &'a str {
        self.after_quotes(self.quote_depth).unwrap_or(self.raw)
    }

    /// The line after its first `k` blockquote markers (and the optional space after each);
    /// `None` when it has fewer.
    pub(crate) fn after_quotes(&self, k: usize) -> Option<&'a str> {
        match k {
            0 => Some(self.raw),
            _ if k > self.quote_depth => None,
            _ => Some(&self.raw[self.quote_ends[k - 1] as usize..]),
        }
    }
}

/// Every line of `text`, classified. A leading BOM belongs to no line.
pub(crate) fn lines(text: &str) -> Lines<'_> {
    let pos = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
    let frontmatter_last = frontmatter_block(text).map(|block| block.close_line);
    Lines { text, pos, number: 0, frontmatter_last, classifier: Classifier::new() }
}

/// The iterator [`lines`] returns.
pub(crate) struct Lines<'a> {
    text: &'a str,
    pos: usize,
    number: usize,
    /// The number of the closing frontmatter fence, when the text has frontmatter.
    frontmatter_last: Option<usize>,
    classifier: Classifier,
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        if self.pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.pos..];
        let (content, advance) = match rest.find('\n') {
            Some(at) => (rest[..at].strip_suffix('\r').unwrap_or(&rest[..at]), at + 1),
            None => (rest, rest.len()),
        };
        let mut line = if self.frontmatter_last.is_some_and(|last| self.number <= last) {
            Line {
                number: 0,
                start: 0,
                end: 0,
                raw: content,
                class: Class::Frontmatter,
                quote_depth: 0,
                quote_ends: [0; MAX_NESTING],
                in_item: false,
                opens_item: false,
            }
        } else {
            self.classifier.classify(content)
        };
        line.number = self.number;
        line.start = self.pos;
        line.end = self.pos + content.len();
        self.number += 1;
        self.pos += advance;
        Some(line)
    }
}

// ---------------------------------------------------------------------------------------------
// The classifier

/// A block that holds other blocks and is continued line by line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Container {
    /// A `>` blockquote.
    Quote,
    /// A list item whose content starts `content` columns in from its parent's content;
    /// `empty` until a line with content joins it (an empty item ends at a blank line).
    Item { content: usize, empty: bool },
}

/// The open leaf block of the innermost container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    None,
    Paragraph,
    Fence { marker: u8, len: usize },
    Indented,
}

/// The line-at-a-time state machine behind [`lines`], for callers that feed lines themselves
/// (the chunker skips lines hidden in `%%` comments). It knows nothing of frontmatter: start it
/// on the body.
pub(crate) struct Classifier {
    containers: Vec<Container>,
    leaf: Leaf,
}

impl Classifier {
    /// A classifier at the start of a document: no container or block open.
    pub(crate) fn new() -> Classifier {
        Classifier { containers: Vec::new(), leaf: Leaf::None }
    }

    /// Classifies the next line (without its line ending). The result's `number`, `start` and
    /// `end` are those of a one-line text; [`lines`] fills in the real ones.
    pub(crate) fn classify<'a>(&mut self, raw: &'a str) -> Line<'a> {
        let mut cur = Cursor::new(raw);
        let mut quotes = Quotes { depth: 0, ends: [0; MAX_NESTING] };

        let mut matched = self.continued(&mut cur, &mut quotes);
        let all_matched = matched == self.containers.len();

        // Inside a fence, nothing starts: the line closes the fence or is code.
        if let (true, Leaf::Fence { marker, len }) = (all_matched, self.leaf) {
            let class = if cur.closes_fence(marker, len) {
                self.leaf = Leaf::None;
                Class::FenceClose
            } else {
                Class::FencedCode
            };
            return self.finish(raw, class, quotes, cur.is_blank(), false);
        }

        // Block starts; the first one closes the containers this line did not continue.
        let paragraph_open = self.leaf == Leaf::Paragraph;
        // Whether this line opened a container, and whether one of them was a list item.
        let mut opened = false;
        let mut item_opened = false;
        let class = loop {
            if cur.is_blank() {
                break None;
            }
            let indent = cur.indent();
            if indent >= CODE_INDENT {
                // An indented line cannot interrupt a paragraph, not even lazily.
                if paragraph_open && !opened {
                    break None;
                }
                self.close_unmatched(&mut matched);
                self.leaf = Leaf::Indented;
                break Some(Class::IndentedCode);
            }
            let first = cur.peek_after_indent();
            // Past the nesting cap a marker opens nothing; it is read as text below.
            let room = matched < MAX_NESTING;
            if room && first == Some(b'>') {
                self.close_unmatched(&mut matched);
                cur.quote_marker(&mut quotes);
                self.containers.push(Container::Quote);
                matched += 1;
                self.leaf = Leaf::None;
                opened = true;
                continue;
            }
            let body = &raw[cur.pos_after_indent()..];
            if let Some((marker, len, info)) = fence_opener(body) {
                self.close_unmatched(&mut matched);
                self.leaf = Leaf::Fence { marker, len };
                break Some(Class::FenceOpen { marker: char::from(marker), len, info });
            }
            if let Some((level, text)) = atx_heading(body) {
                self.close_unmatched(&mut matched);
                self.leaf = Leaf::None;
                break Some(Class::Heading { level, text });
            }
            // A setext underline ends the paragraph it underlines (only one in this very
            // container: an underline cannot be lazy); a thematic break ends any paragraph.
            let underline = paragraph_open && all_matched && !opened && is_setext_underline(body);
            if underline || is_thematic_break(body) {
                self.close_unmatched(&mut matched);
                self.leaf = Leaf::None;
                break Some(Class::Text);
            }
            let interrupts = paragraph_open && all_matched && !opened;
            if room && let Some(item) = cur.list_item(interrupts) {
                self.close_unmatched(&mut matched);
                self.containers.push(item);
                matched += 1;
                self.leaf = Leaf::None;
                opened = true;
                item_opened = true;
                continue;
            }
            break None;
        };
        let blank = cur.is_blank();
        let class = match class {
            Some(class) => class,
            // An empty list item (`-` alone) is a marker, not a blank line.
            None if item_opened && blank => Class::Text,
            None if blank => {
                // A blank line ends quotes it does not carry, and any paragraph.
                self.close_unmatched(&mut matched);
                self.leaf = Leaf::None;
                Class::Blank
            }
            None => {
                // Paragraph text: a lazy continuation keeps every container open.
                let lazy = paragraph_open && !all_matched && !opened;
                if !lazy {
                    self.close_unmatched(&mut matched);
                    self.leaf = Leaf::Paragraph;
                }
                Class::Text
            }
        };
        self.finish(raw, class, quotes, blank, item_opened)
    }

    /// Which open containers this line continues: how many, from the outermost, with their
    /// markers and indentation consumed from `cur`.
    fn continued(&self, cur: &mut Cursor, quotes: &mut Quotes) -> usize {
        let mut matched = 0;
        for container in &self.containers {
            match *container {
                Container::Quote => {
                    if cur.indent() >= CODE_INDENT || cur.peek_after_indent() != Some(b'>') {
                        break;
                    }
                    cur.quote_marker(quotes);
                }
                Container::Item { content, empty } => {
                    if cur.is_blank() {
                        if empty {
                            break;
                        }
                    } else if cur.indent() >= content {
                        cur.advance_columns(content);
                    } else {
                        break;
                    }
                }
            }
            matched += 1;
        }
        matched
    }

    /// Closes the containers this line did not continue (and with them the open leaf block).
    fn close_unmatched(&mut self, matched: &mut usize) {
        if *matched < self.containers.len() {
            self.containers.truncate(*matched);
            self.leaf = Leaf::None;
        }
        *matched = self.containers.len();
    }

    fn finish<'a>(
        &mut self,
        raw: &'a str,
        class: Class<'a>,
        quotes: Quotes,
        blank: bool,
        opens_item: bool,
    ) -> Line<'a> {
        if !blank {
            for container in &mut self.containers {
                if let Container::Item { empty, .. } = container {
                    *empty = false;
                }
            }
        }
        Line {
            number: 0,
            start: 0,
            end: raw.len(),
            raw,
            class,
            quote_depth: quotes.depth,
            quote_ends: quotes.ends,
            in_item: !blank && self.containers.iter().any(|c| matches!(c, Container::Item { .. })),
            opens_item,
        }
    }
}

/// The blockquote markers consumed on one line.
struct Quotes {
    depth: usize,
    ends: [u32; MAX_NESTING],
}

/// A position in one line, in bytes and in columns (tabs expanded). `col` may sit inside a tab
/// that a container consumed only part of; the rest of that tab still counts as indentation.
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
    col: usize,
    /// The run of spaces and tabs last measured: where it starts, and the byte offset and
    /// column of the first other character after it. Every container asks how far in the line
    /// is, and a line of ten thousand spaces must not be walked once per container.
    run: std::cell::Cell<Option<(usize, usize, usize)>>,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Cursor<'a> {
        Cursor { s, pos: 0, col: 0, run: std::cell::Cell::new(None) }
    }

    /// The byte offset and column of the first character from here that is not a space or
    /// tab. The column is the same from anywhere in the run (tab stops are columns of the
    /// line), so one measurement serves every position inside it.
    fn run_end(&self) -> (usize, usize) {
        if let Some((start, end, end_col)) = self.run.get()
            && (start..=end).contains(&self.pos)
        {
            return (end, end_col);
        }
        let mut col = self.col;
        let mut end = self.pos;
        for b in self.s[self.pos..].bytes() {
            match b {
                b' ' => col += 1,
                b'\t' => col += TAB_STOP - col % TAB_STOP,
                _ => break,
            }
            end += 1;
        }
        self.run.set(Some((self.pos, end, col)));
        (end, col)
    }

    /// Columns of spaces and tabs from here to the first other character.
    fn indent(&self) -> usize {
        self.run_end().1 - self.col
    }

    /// Byte offset of the first character that is not a space or tab.
    fn pos_after_indent(&self) -> usize {
        self.run_end().0
    }

    fn peek_after_indent(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos_after_indent()).copied()
    }

    fn is_blank(&self) -> bool {
        self.pos_after_indent() == self.s.len()
    }

    /// Moves `n` columns through spaces and tabs, stopping inside a tab when it is wider than
    /// what is left.
    fn advance_columns(&mut self, mut n: usize) {
        let bytes = self.s.as_bytes();
        while n > 0 && self.pos < bytes.len() {
            match bytes[self.pos] {
                b' ' => {
                    self.pos += 1;
                    self.col += 1;
                    n -= 1;
                }
                b'\t' => {
                    let width = TAB_STOP - self.col % TAB_STOP;
                    if width <= n {
                        self.pos += 1;
                        self.col += width;
                        n -= width;
                    } else {
                        self.col += n;
                        n = 0;
                    }
                }
                _ => break,
            }
        }
    }

    /// Consumes a `>` (after at most three columns of indentation) and the one optional space
    /// or tab column after it, recording where the quoted content starts.
    fn quote_marker(&mut self, quotes: &mut Quotes) {
        self.advance_columns(self.indent());
        self.pos += 1;
        self.col += 1;
        if matches!(self.s.as_bytes().get(self.pos), Some(b' ' | b'\t')) {
            self.advance_columns(1);
        }
        if quotes.depth < MAX_NESTING {
            // A line longer than 4 GiB is not a note; saturate rather than wrap.
            quotes.ends[quotes.depth] = u32::try_from(self.pos).unwrap_or(u32::MAX);
        }
        quotes.depth += 1;
    }

    /// A fence closer here: at most three columns in, the marker at least `len` times, then
    /// only spaces and tabs.
    fn closes_fence(&self, marker: u8, len: usize) -> bool {
        if self.indent() >= CODE_INDENT {
            return false;
        }
        let body = &self.s.as_bytes()[self.pos_after_indent()..];
        let run = body.iter().take_while(|&&b| b == marker).count();
        run >= len && body[run..].iter().all(|&b| b == b' ' || b == b'\t')
    }

    /// A list item marker here (the caller checked the indentation): consumes the marker and
    /// the spaces that belong to it and returns the item. `interrupts` is true when the line
    /// would otherwise continue a paragraph: then the item may not be empty, and an ordered
    /// item must start at 1, so a sentence that wraps onto `2019. was a year` stays a sentence.
    fn list_item(&mut self, interrupts: bool) -> Option<Container> {
        let offset = self.indent();
        let at = self.pos_after_indent();
        let bytes = self.s.as_bytes();
        let digits = bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        let width = match bytes.get(at + digits) {
            Some(b'-' | b'+' | b'*') if digits == 0 => 1,
            Some(b'.' | b')') if (1..=ORDERED_MAX_DIGITS).contains(&digits) => {
                if interrupts && &self.s[at..at + digits] != "1" {
                    return None;
                }
                digits + 1
            }
            _ => return None,
        };
        let after = at + width;
        if !matches!(bytes.get(after), None | Some(b' ' | b'\t')) {
            return None;
        }
        let rest_blank = bytes[after..].iter().all(|&b| b == b' ' || b == b'\t');
        if interrupts && rest_blank {
            return None;
        }
        self.advance_columns(offset);
        self.pos = after;
        self.col += width;
        let spaces = self.indent();
        // Content starts after the spaces, unless there are none to speak of (an empty first
        // line) or so many that the content is an indented code block: then one space.
        let padding = if rest_blank || spaces > CODE_INDENT { 1 } else { spaces };
        if !rest_blank {
            self.advance_columns(padding);
        }
        Some(Container::Item { content: offset + width + padding, empty: rest_blank })
    }
}

/// A fence opener (indentation already removed): three or more backticks or tildes, then the
/// info string, which for backticks may not contain a backtick (that is inline code).
fn fence_opener(body: &str) -> Option<(u8, usize, &str)> {
    let marker = *body.as_bytes().first().filter(|b| matches!(b, b'`' | b'~'))?;
    let len = body.bytes().take_while(|&b| b == marker).count();
    let info = &body[len..];
    (len >= FENCE_MIN && !(marker == b'`' && info.contains('`')))
        .then(|| (marker, len, info.trim()))
}

/// An ATX heading (indentation already removed): one to six `#`, then a space, a tab or the
/// end of the line. The closing run counts only when whitespace separates it from the text,
/// so `# C#` keeps its `#`.
fn atx_heading(body: &str) -> Option<(u8, &str)> {
    let after = body.trim_start_matches('#');
    let level = body.len() - after.len();
    if !(1..=HEADING_MAX).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t']))
    {
        return None;
    }
    let mut text = after.trim_end_matches([' ', '\t']);
    let unclosed = text.trim_end_matches('#');
    // `after` starts with whitespace, so `## ##` is an empty heading.
    if unclosed.len() < text.len() && (unclosed.is_empty() || unclosed.ends_with([' ', '\t'])) {
        text = unclosed;
    }
    Some((level as u8, text.trim_matches([' ', '\t'])))
}

/// `===` or `---` alone (indentation already removed; trailing spaces and tabs allowed).
fn is_setext_underline(body: &str) -> bool {
    let run = body.trim_end_matches([' ', '\t']);
    !run.is_empty() && (run.bytes().all(|b| b == b'=') || run.bytes().all(|b| b == b'-'))
}

/// Three or more `-`, `*` or `_` of one kind, with only spaces and tabs between (indentation
/// already removed).
fn is_thematic_break(body: &str) -> bool {
    let Some(&first) = body.as_bytes().first().filter(|b| matches!(b, b'-' | b'*' | b'_')) else {
        return false;
    };
    let mut count = 0;
    for b in body.bytes() {
        match b {
            b' ' | b'\t' => {}
            b if b == first => count += 1,
            _ => return false,
        }
    }
    count >= 3
}

// ---------------------------------------------------------------------------------------------
// Code spans

/// Every maximal run of backticks of one line, by length: what finding a code span's closer
/// needs. A closer is always a maximal run, so a run's closer is found by a binary search among
/// the runs of its length, and a line of a thousand distinct runs is not searched to its end
/// once per run.
pub(crate) struct BacktickRuns {
    by_len: HashMap<usize, Vec<usize>>,
}

impl BacktickRuns {
    pub(crate) fn new(line: &str) -> BacktickRuns {
        let bytes = line.as_bytes();
        let mut by_len: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut j = 0;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let run = run_length(bytes, j);
                by_len.entry(run).or_default().push(j);
                j += run;
            } else {
                j += 1;
            }
        }
        BacktickRuns { by_len }
    }

    /// Where the first maximal run of exactly `len` backticks at or after `from` starts.
    pub(crate) fn closer(&self, len: usize, from: usize) -> Option<usize> {
        let list = self.by_len.get(&len)?;
        list.get(list.partition_point(|&p| p < from)).copied()
    }
}

/// The number of backticks from `at` on.
pub(crate) fn run_length(bytes: &[u8], at: usize) -> usize {
    bytes[at..].iter().take_while(|&&b| b == b'`').count()
}

/// The inline code spans of one line, as byte ranges of `line`, backticks included: a run of
/// backticks up to the next run of exactly the same length (a backslash escapes the byte after
/// it outside a span). Linear in the line's length, however its backticks fall.
pub(crate) fn code_spans(line: &str) -> Vec<Range<usize>> {
    let bytes = line.as_bytes();
    if !bytes.contains(&b'`') {
        return Vec::new();
    }
    let runs = BacktickRuns::new(line);
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => {
                let run = run_length(bytes, i);
                match runs.closer(run, i + run) {
                    Some(at) => {
                        spans.push(i..at + run);
                        i = at + run;
                    }
                    None => i += run,
                }
            }
            _ => i += 1,
        }
    }
    spans
}

// ---------------------------------------------------------------------------------------------
// Joins

/// A table row as far as joining goes: text whose first character after its quote markers and
/// indentation is `|`. Tables are otherwise text to this module (see the header); a row without
/// a leading pipe is not recognised, so such a table is joined like a paragraph.
pub(crate) fn is_table_row(line: &Line<'_>) -> bool {
    line.class == Class::Text && line.quoted().trim_start().starts_with('|')
}

/// Whether `below` continues the block `above` ends, so that joining them must put no blank
/// line between: a list item added under a list (a blank line would start a new list, or make
/// it loose), or a table row under a table row (a blank line would end the table). Both lines
/// must sit at the same blockquote depth. Everything else is a new paragraph, separated by one
/// blank line. `above` is classified in the text it ends, `below` in the text it starts.
pub(crate) fn continues_block(above: &Line<'_>, below: &Line<'_>) -> bool {
    if above.quote_depth != below.quote_depth {
        return false;
    }
    let above_open = matches!(above.class, Class::FencedCode | Class::FenceOpen { .. });
    let list = above.in_item && below.opens_item && !above_open;
    list || (is_table_row(above) && is_table_row(below))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each line as `>`s for its quote depth, then a short name for its class.
    fn shapes(text: &str) -> Vec<String> {
        lines(text)
            .map(|line| {
                let class = match line.class {
                    Class::Frontmatter => "yaml".to_string(),
                    Class::FenceOpen { marker, len, info } => {
                        format!("open {}{}", marker.to_string().repeat(len), info)
                    }
                    Class::FenceClose => "close".to_string(),
                    Class::FencedCode => "fenced".to_string(),
                    Class::IndentedCode => "indented".to_string(),
                    Class::Blank => "blank".to_string(),
                    Class::Heading { level, text } => format!("h{level} {text}"),
                    Class::Text => "text".to_string(),
                };
                format!("{}{class}", ">".repeat(line.quote_depth))
            })
            .collect()
    }

    /// Asserts each `(text, shapes)` row, naming the text that failed.
    fn table(rows: &[(&str, &[&str])]) {
        for (text, want) in rows {
            assert_eq!(shapes(text), *want, "for {text:?}");
        }
    }

    #[test]
    fn fences_open_with_three_backticks_or_tildes_and_at_most_three_spaces() {
        table(&[
            ("```\n<a>\n```\n", &["open ```", "fenced", "close"]),
            ("~~~\nx\n~~~\n", &["open ~~~", "fenced", "close"]),
            ("``\nfoo\n``\n", &["text", "text", "text"]),
            ("   ```\nx\n   ```\n", &["open ```", "fenced", "close"]),
            ("````rust title\n", &["open ````rust title"]),
            ("```\n\n  \n```\n", &["open ```", "fenced", "fenced", "close"]),
        ]);
    }

    #[test]
    fn a_fence_indented_four_columns_is_indented_code_or_paragraph_text() {
        table(&[
            ("    ```\n    x\n    ```\n", &["indented", "indented", "indented"]),
            ("    ```\n[[B]]\n    ```\n", &["indented", "text", "text"]),
            ("para\n    ```\n# H\n", &["text", "text", "h1 H"]),
            ("\t```\n# H\n", &["indented", "h1 H"]),
        ]);
    }

    #[test]
    fn backtick_info_strings_may_not_contain_backticks_but_tilde_ones_may() {
        table(&[
            ("``` aa ```\nfoo\n", &["text", "text"]),
            ("```inline``` text\n", &["text"]),
            ("~~~ aa ``` ~~~\nfoo\n~~~\n", &["open ~~~aa ``` ~~~", "fenced", "close"]),
        ]);
    }

    #[test]
    fn a_fence_closes_only_with_its_marker_at_least_as_long_and_nothing_after() {
        table(&[
            ("```\naaa\n~~~\n```\n", &["open ```", "fenced", "fenced", "close"]),
            ("````\n```\n`````\n", &["open ````", "fenced", "close"]),
            ("```\n``` x\n```  \n", &["open ```", "fenced", "close"]),
            ("```\n    ```\n   ```\n", &["open ```", "fenced", "close"]),
            ("~~~~\n~~~\n~~~~\n# after\n", &["open ~~~~", "fenced", "close", "h1 after"]),
        ]);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end_of_the_document() {
        table(&[
            ("```\n# not a heading\n\nstill code", &["open ```", "fenced", "fenced", "fenced"]),
            ("`````\n```\n", &["open `````", "fenced"]),
        ]);
    }

    #[test]
    fn a_fence_and_a_heading_interrupt_a_paragraph() {
        table(&[
            ("foo\n```\nbar\n```\nbaz\n", &["text", "open ```", "fenced", "close", "text"]),
            ("foo\n# bar\nbaz\n", &["text", "h1 bar", "text"]),
        ]);
    }

    #[test]
    fn indented_code_needs_four_columns_and_cannot_interrupt_a_paragraph() {
        table(&[
            ("    a simple\n      indented\n", &["indented", "indented"]),
            ("    chunk1\n\n    chunk2\n", &["indented", "blank", "indented"]),
            ("Foo\n    bar\n", &["text", "text"]),
            ("Foo\n\n    bar\n", &["text", "blank", "indented"]),
            ("    foo\nbar\n", &["indented", "text"]),
            ("# Heading\n    foo\n", &["h1 Heading", "indented"]),
            ("text\n***\n    code\n", &["text", "text", "indented"]),
            ("   three\n", &["text"]),
        ]);
    }

    #[test]
    fn tabs_count_to_the_next_multiple_of_four_columns() {
        table(&[
            ("\tfoo\n", &["indented"]),
            ("  \tfoo\n", &["indented"]),
            (" \t# x\n", &["indented"]),
            (">\t\tfoo\n", &[">indented"]),
            ("-\tfoo\n\n\tbar\n", &["text", "blank", "text"]),
        ]);
    }

    #[test]
    fn atx_headings_need_one_to_six_hashes_then_whitespace_or_the_end() {
        table(&[
            ("# a\n## b\n###### f\n", &["h1 a", "h2 b", "h6 f"]),
            ("####### seven\n", &["text"]),
            ("#5 bolt\n#hashtag\n", &["text", "text"]),
            ("\\## escaped\n", &["text"]),
            ("   ### three\n    # four\n", &["h3 three", "indented"]),
            ("#\n## \n", &["h1 ", "h2 "]),
            ("#\tTabbed\n", &["h1 Tabbed"]),
        ]);
    }

    #[test]
    fn the_closing_hash_run_is_stripped_only_after_whitespace() {
        table(&[
            ("## foo ##\n", &["h2 foo"]),
            ("# foo ##################################\n", &["h1 foo"]),
            ("### foo ###   \n", &["h3 foo"]),
            ("### foo ### b\n", &["h3 foo ### b"]),
            ("# foo#\n# C#\n", &["h1 foo#", "h1 C#"]),
            ("### ###\n", &["h3 "]),
        ]);
    }

    #[test]
    fn setext_underlines_are_text_that_end_their_paragraph() {
        table(&[
            ("Title\n=====\n    code\n", &["text", "text", "indented"]),
            ("Title\n---\n    code\n", &["text", "text", "indented"]),
            ("> Title\n---\n", &[">text", "text"]),
            ("===\n", &["text"]),
        ]);
    }

    #[test]
    fn blockquote_markers_are_counted_and_their_contents_classified() {
        table(&[
            ("> # Foo\n> bar\n", &[">h1 Foo", ">text"]),
            ("># a\n>>b\n> > > c\n>#tag\n", &[">h1 a", ">>text", ">>>text", ">text"]),
            ("   > x\n    > y\n", &[">text", "text"]),
            ("    > code\n", &["indented"]),
            (">     code\n>\n", &[">indented", ">blank"]),
            ("> a\n\n> b\n", &[">text", "blank", ">text"]),
        ]);
        let line = lines("> > [!tip] x\n").next().unwrap();
        assert_eq!(line.quote_depth, 2);
        assert_eq!(line.quoted(), "[!tip] x");
        assert_eq!(line.after_quotes(1), Some("> [!tip] x"));
        assert_eq!(line.after_quotes(0), Some("> > [!tip] x"));
        assert_eq!(line.after_quotes(3), None);
        let plain = lines("plain\n").next().unwrap();
        assert_eq!((plain.quote_depth, plain.quoted()), (0, "plain"));
    }

    #[test]
    fn a_fence_inside_a_blockquote_ends_with_the_blockquote() {
        table(&[
            ("> ```\n> # code\n> ```\n# out\n", &[">open ```", ">fenced", ">close", "h1 out"]),
            ("> ```\n> foo\nbar\n", &[">open ```", ">fenced", "text"]),
            ("> ```\n# heading\n```\n", &[">open ```", "h1 heading", "open ```"]),
            ("> ```\n> > [!bug]\n\n> [!note]\n", &[">open ```", ">fenced", "blank", ">text"]),
            ("> ~~~~\n> [[F]]\n> ~~~~\n", &[">open ~~~~", ">fenced", ">close"]),
        ]);
    }

    #[test]
    fn lazy_continuation_lines_carry_no_markers_but_continue_the_paragraph() {
        table(&[
            ("> bar\nbaz\n> foo\n", &[">text", "text", ">text"]),
            ("> bar\n    baz\n", &[">text", "text"]),
            ("> > bar\nbaz\n", &[">>text", "text"]),
            ("> bar\n\n    code\n", &[">text", "blank", "indented"]),
            ("> bar\n- item\n", &[">text", "text"]),
            ("> bar\n```\nx\n", &[">text", "open ```", "fenced"]),
        ]);
    }

    #[test]
    fn list_item_content_is_text_not_indented_code() {
        table(&[
            ("- a\n\n    b\n", &["text", "blank", "text"]),
            ("- a\n\n      code\n", &["text", "blank", "indented"]),
            ("1. a\n\n    still a\n", &["text", "blank", "text"]),
            ("- a\n\t- b\n\n\t\tc\n", &["text", "text", "blank", "text"]),
            ("-     code\n", &["indented"]),
            ("- a\n\nb\n\n    code\n", &["text", "blank", "text", "blank", "indented"]),
            ("-\n  foo\n", &["text", "text"]),
            ("-\n\n      foo\n", &["text", "blank", "indented"]),
        ]);
    }

    #[test]
    fn a_fence_inside_a_list_item_ends_with_the_item() {
        table(&[
            (
                "1. Step\n\n    ```sh\n    # comment\n    ```\n",
                &["text", "blank", "open ```sh", "fenced", "close"],
            ),
            ("- ```\n  # x\n  ```\n", &["open ```", "fenced", "close"]),
            ("- ```\n  x\n- b\n", &["open ```", "fenced", "text"]),
            (
                "- a\n\n  ```\n  x\n\n  y\n  ```\n",
                &["text", "blank", "open ```", "fenced", "fenced", "fenced", "close"],
            ),
            ("- > ```\n  > x\n", &[">open ```", ">fenced"]),
        ]);
    }

    #[test]
    fn a_list_item_interrupts_a_paragraph_only_when_it_is_not_empty_and_starts_at_one() {
        table(&[
            (
                "The year was\n2019. A good one.\n\n    code\n",
                &["text", "text", "blank", "indented"],
            ),
            ("Steps:\n1. one\n\n    two\n", &["text", "text", "blank", "text"]),
            ("Word\n-\n    x\n", &["text", "text", "indented"]),
            ("Word\n- item\n\n    more\n", &["text", "text", "blank", "text"]),
            ("- - -\n    x\n", &["text", "indented"]),
        ]);
    }

    #[test]
    fn frontmatter_is_only_the_leading_block_with_a_closing_fence() {
        table(&[
            ("---\ntitle: x\n# yaml\n---\n# Real\n", &["yaml", "yaml", "yaml", "yaml", "h1 Real"]),
            ("\u{feff}---  \na: 1\n---\t\nx\n", &["yaml", "yaml", "yaml", "text"]),
            ("---\n# not closed\n", &["text", "h1 not closed"]),
            ("\n---\na\n---\n", &["blank", "text", "text", "text"]),
            ("---\n```\n---\n# after\n", &["yaml", "yaml", "yaml", "h1 after"]),
            ("---", &["text"]),
        ]);
        let block = frontmatter_block("\u{feff}---\na: 1\n---\nbody").unwrap();
        assert_eq!((block.start, block.yaml_start, block.yaml_end), (3, 7, 12));
        assert_eq!((block.end, block.close_line), (16, 2));
        assert_eq!(frontmatter_block("---\na: 1\n"), None);
        assert!(is_frontmatter_fence("--- \r\n"));
        assert!(!is_frontmatter_fence("----"));
    }

    #[test]
    fn lines_carry_numbers_and_byte_ranges_without_their_endings() {
        let text = "\u{feff}a\r\nb\rc\n\nlast";
        let got: Vec<(usize, usize, usize, &str)> =
            lines(text).map(|l| (l.number, l.start, l.end, l.raw)).collect();
        assert_eq!(got, [(0, 3, 4, "a"), (1, 6, 9, "b\rc"), (2, 10, 10, ""), (3, 11, 15, "last")]);
        for line in lines(text) {
            assert_eq!(&text[line.start..line.end], line.raw);
        }
        assert_eq!(lines("").count(), 0);
        assert_eq!(lines("\n").count(), 1);
    }

    #[test]
    fn code_lines_are_exactly_the_fences_and_their_contents() {
        let code: Vec<bool> =
            lines("```\nx\n```\n    y\ntext\n").map(|l| l.class.is_code()).collect();
        assert_eq!(code, [true, true, true, true, false]);
    }

    #[test]
    fn the_classifier_can_be_fed_line_by_line() {
        let mut classifier = Classifier::new();
        let got: Vec<bool> = ["```", "# x", "```", "# y"]
            .iter()
            .map(|l| classifier.classify(l).class.is_code())
            .collect();
        assert_eq!(got, [true, true, true, false]);
    }

    #[test]
    fn hostile_nesting_does_not_panic() {
        let deep = format!("{}[!bug]\n{}x\n", ">".repeat(10_000), ">".repeat(5_000));
        let all: Vec<Line> = lines(&deep).collect();
        assert_eq!((all[0].quote_depth, all[1].quote_depth), (MAX_NESTING, MAX_NESTING));
        assert_eq!(all[0].quoted(), ">".repeat(10_000 - MAX_NESTING) + "[!bug]");
        let lists = format!("{}x\n{}y\n", "- ".repeat(5_000), " ".repeat(3));
        assert_eq!(lines(&lists).count(), 2);
    }

    #[test]
    fn a_marker_past_the_nesting_cap_is_text() {
        let quotes = format!("{}# not a heading\n", "> ".repeat(MAX_NESTING + 1));
        let line = lines(&quotes).next().unwrap();
        assert_eq!((line.quote_depth, line.class), (MAX_NESTING, Class::Text));
        assert_eq!(line.quoted(), "> # not a heading");
        // At the cap itself the heading is still one.
        let quotes = format!("{}# heading\n", "> ".repeat(MAX_NESTING));
        let line = lines(&quotes).next().unwrap();
        assert_eq!(line.class, Class::Heading { level: 1, text: "heading" });
        // A list item past the cap does not open, so a fence indented under it belongs to
        // the deepest item that did, and a line back at that item's column is still code.
        let deep = format!("{}x\n", "- ".repeat(MAX_NESTING + 1));
        let under = " ".repeat(2 * (MAX_NESTING + 1));
        let item = " ".repeat(2 * MAX_NESTING);
        let text = format!("{deep}{under}```\n{item}# h\n");
        let shapes: Vec<Class> = lines(&text).map(|l| l.class).collect();
        assert_eq!(shapes[2], Class::FencedCode, "{shapes:?}");
    }

    proptest! {
        #[test]
        fn every_text_yields_the_lines_str_lines_does(
            text in "[ \t>`~#\\-*1.a\n\r]{0,80}"
        ) {
            let ours: Vec<&str> = lines(&text).map(|l| l.raw).collect();
            let std: Vec<&str> = text.lines().collect();
            prop_assert_eq!(ours.len(), std.len());
            for (line, want) in lines(&text).zip(std) {
                prop_assert_eq!(&text[line.start..line.end], line.raw);
                // `str::lines` keeps a lone `\r` at the very end; so do we.
                prop_assert_eq!(line.raw, want);
            }
        }
    }
}
