//! The shape of the text mdvault writes: which bytes an edit keeps, and what it adds.
//!
//! An edit keeps the note it edits. Its byte-order mark, its line endings and the bytes of
//! every line the edit does not change (trailing whitespace, trailing blank lines, a missing
//! final newline) are written back as they were. What an edit adds is the caller's text put
//! into the note's convention ([`Style`]): its line breaks become the note's line ending, so a
//! Windows-written note stays CRLF.
//!
//! Only text that is new as a whole is normalised ([`normalize`]: no BOM, LF, exactly one
//! trailing newline): a new note, and the content a caller supplies (a section's new lines, an
//! addition, a new body, an overwrite), before it is put into the note's style. An overwrite
//! is new content in an old file: it is normalised, then written with the replaced note's BOM
//! and line endings. Reads never normalise: a caller sees the bytes on disk.
//!
//! This module decides no edit's placement (that is `edit`'s and `frontmatter`'s) and treats a
//! lone CR as an ordinary character, as the line model does: only `\n` ends a line.

use std::borrow::Cow;

/// The UTF-8 byte-order mark.
pub(crate) const BOM: char = '\u{feff}';

/// The BOM as it sits in a file.
const BOM_BYTES: &[u8] = "\u{feff}".as_bytes();

/// A note's writing convention: whether it starts with a BOM, and which line ending it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// The note starts with a UTF-8 byte-order mark.
    pub(crate) bom: bool,
    /// Lines end in CRLF rather than LF.
    pub(crate) crlf: bool,
}

impl Style {
    /// The convention of a new note: no BOM, LF.
    pub(crate) const NEW: Style = Style { bom: false, crlf: false };

    /// The convention of an existing note's bytes (which need not be UTF-8).
    ///
    /// A mixed file takes the line ending most of its lines use, and a tie goes to the first
    /// line's. The majority, not simply the first line, because mixed files usually come from
    /// a tool that inserted a few lines of its own (a template's frontmatter, a script's log
    /// line) into a note written elsewhere: inserted lines then join what most of the note
    /// already is, and the note drifts towards one convention rather than away from it.
    pub fn of(bytes: &[u8]) -> Style {
        let bom = bytes.starts_with(BOM_BYTES);
        let (mut crlf, mut lf, mut first_crlf) = (0usize, 0usize, None);
        for (i, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b'\n') {
            let is_crlf = i > 0 && bytes[i - 1] == b'\r';
            if is_crlf {
                crlf += 1;
            } else {
                lf += 1;
            }
            first_crlf.get_or_insert(is_crlf);
        }
        Style { bom, crlf: crlf > lf || (crlf == lf && first_crlf == Some(true)) }
    }

    /// The line ending this style writes.
    pub fn eol(self) -> &'static str {
        if self.crlf { "\r\n" } else { "\n" }
    }

    /// `text`, whose line breaks are all LF (normalised text), with this style's line endings.
    /// No BOM is added: the text goes inside a note.
    pub(crate) fn endings(self, text: &str) -> Cow<'_, str> {
        if self.crlf { Cow::Owned(text.replace('\n', "\r\n")) } else { Cow::Borrowed(text) }
    }

    /// A whole note: `content` normalised, then written in this style, BOM included. Empty
    /// content stays empty: a BOM alone marks no text.
    pub(crate) fn note(self, content: &str) -> String {
        let text = normalize(content);
        if text.is_empty() {
            return text;
        }
        let bom = if self.bom { BOM.to_string() } else { String::new() };
        format!("{bom}{}", self.endings(&text))
    }
}

/// Removes a BOM, turns CRLF and lone CR into LF, and collapses trailing newlines to one.
/// Empty (or all-newline) text stays empty.
pub fn normalize(text: &str) -> String {
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let mut out = String::with_capacity(text.len() + 1);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    let trimmed = out.trim_end_matches('\n').len();
    out.truncate(trimmed);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Splits a leading BOM off `text`: (the BOM or "", the rest).
pub(crate) fn split_bom(text: &str) -> (&str, &str) {
    let bom = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
    text.split_at(bom)
}

/// The lines of `text` (after any BOM), each with its own line ending; the last may have
/// none. Numbered as `str::lines` and the line model number them.
pub(crate) fn raw_lines(text: &str) -> Vec<&str> {
    split_bom(text).1.split_inclusive('\n').collect()
}

/// True for a line of only spaces, tabs and its line ending.
pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Strips blank lines (lines of only whitespace) from both ends of `text`, keeping inner ones.
pub(crate) fn strip_blank_edges(text: &str) -> &str {
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        if is_blank(line) {
            start += line.len();
        } else {
            break;
        }
    }
    let rest = &text[start..];
    let mut end = rest.len();
    while end > 0 {
        let line_start = rest[..end].trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
        let line_end = rest[..end].trim_end_matches('\n').len();
        if rest[line_start..line_end].trim().is_empty() {
            end = line_start;
        } else {
            end = line_end;
            break;
        }
    }
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_endings_bom_and_trailing_newlines() {
        assert_eq!(normalize("\u{feff}a\r\nb\rc\n\n\n"), "a\nb\nc\n");
        assert_eq!(normalize("a"), "a\n");
        assert_eq!(normalize(""), "");
        assert_eq!(normalize("\n\n"), "");
    }

    #[test]
    fn strips_only_blank_edge_lines() {
        assert_eq!(strip_blank_edges("\n  \nx\n\ny\n \n\n"), "x\n\ny");
        assert_eq!(strip_blank_edges("  x"), "  x");
        assert_eq!(strip_blank_edges("\n\n"), "");
        assert_eq!(strip_blank_edges(""), "");
    }

    #[test]
    fn a_style_is_the_bom_and_the_majority_line_ending() {
        let style = |s: &str| Style::of(s.as_bytes());
        assert_eq!(style("a\nb\n"), Style { bom: false, crlf: false });
        assert_eq!(style("\u{feff}a\r\nb\r\n"), Style { bom: true, crlf: true });
        assert_eq!(style("a\nb\r\nc\r\n"), Style { bom: false, crlf: true }, "majority");
        assert_eq!(style("a\r\nb\n"), Style { bom: false, crlf: true }, "a tie goes to the first");
        assert_eq!(style("a\nb\r\n"), Style { bom: false, crlf: false }, "a tie goes to the first");
        assert_eq!(style("no line ending"), Style::NEW);
        assert_eq!(style("lone\rcarriage\rreturns\n"), Style::NEW);
        assert_eq!(Style::of(b"\xff\r\nnot utf-8\r\n"), Style { bom: false, crlf: true });
    }

    #[test]
    fn a_whole_note_is_normalised_into_its_style() {
        let windows = Style { bom: true, crlf: true };
        assert_eq!(windows.note("a\nb\r\n\n\n"), "\u{feff}a\r\nb\r\n");
        assert_eq!(windows.note("\u{feff}a"), "\u{feff}a\r\n");
        assert_eq!(windows.note("\n\n"), "");
        assert_eq!(Style::NEW.note("a\r\nb"), "a\nb\n");
        assert_eq!(windows.endings("a\n\nb"), "a\r\n\r\nb");
    }

    #[test]
    fn raw_lines_keep_their_endings_and_leave_the_bom_out() {
        assert_eq!(raw_lines("\u{feff}a\r\n\r\nb"), ["a\r\n", "\r\n", "b"]);
        assert_eq!(raw_lines("a\n"), ["a\n"]);
        assert!(raw_lines("").is_empty());
        assert_eq!(split_bom("\u{feff}x"), ("\u{feff}", "x"));
        assert!(is_blank(" \t\r\n") && !is_blank("x\n"));
    }
}
