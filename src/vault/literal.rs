//! Literal find/replace in a note's body (`replace_text`): exact text, counted, optionally inside
//! one section, never in the frontmatter. Pure, as `edit` is: text in, new text or a refusal
//! out.

use std::ops::Range;

use super::edit::line_starts;
use super::frontmatter;
use super::headings::{self, Scope};
use super::text::{self, Style};
use crate::error::{Error, ErrorCode};

/// Literal find/replace, optionally inside one section (resolved like a patch target, heading
/// line included); `count` is the expected number of non-overlapping occurrences. Returns
/// the new text and the number replaced.
///
/// Only the body is searched: the frontmatter block is never touched, so a replace cannot
/// corrupt the YAML (edit frontmatter values with the frontmatter operations instead). A
/// refusal changes nothing. Only the matched bytes change. A line break in `find` matches
/// either line ending, so text copied from a CRLF note matches with LF breaks and the other
/// way round; line breaks in `replace` are written with the note's line ending.
pub(crate) fn replace_text(
    text: &str,
    note: &str,
    find: &str,
    replace: &str,
    section: Option<&str>,
    count: usize,
) -> crate::Result<(String, usize)> {
    if find.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!("`find` is empty for `{note}`; pass the exact text to replace"),
        ));
    }
    if count == 0 {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "`count` is 0 for `{note}`; pass the number of times the text occurs \
                 (1 for a single occurrence)"
            ),
        ));
    }
    let find = find.replace("\r\n", "\n");
    let style = Style::of(text.as_bytes());
    let replace = style.endings(&replace.replace("\r\n", "\n")).into_owned();
    let bom = text::split_bom(text).0.len();
    let body_start = frontmatter::locate(text).map_or(bom, |block| block.end);
    let (range, place) = match section {
        Some(target) => {
            let all = headings::headings(text);
            let blocks = headings::blocks(text);
            let anchor = headings::locate(&all, &blocks, target, note)?;
            let starts = line_starts(text);
            let lines = headings::anchor_lines(starts.len(), &all, anchor, Scope::MarkerAndContent);
            let end = starts.get(lines.end).copied().unwrap_or(text.len());
            let place = format!("section `{}` of `{note}`", anchor.display());
            (starts[lines.start].max(bom)..end, place)
        }
        None => (body_start..text.len(), format!("the body of `{note}`")),
    };
    let found = occurrences(&text[range.clone()], &find);
    if found.is_empty() {
        let shown: String = find.chars().take(80).collect();
        let more = if shown.len() < find.len() { "…" } else { "" };
        return Err(Error::new(
            ErrorCode::NoSuchText,
            format!(
                "`{shown}{more}` does not occur in {place} (frontmatter is not searched); read \
                 the note and copy the text exactly, including spaces and line breaks"
            ),
        ));
    }
    if found.len() != count {
        let n = found.len();
        return Err(Error::new(
            ErrorCode::AmbiguousText,
            format!(
                "the text occurs {n} {} in {place} but `count` is {count}; pass count \
                 {n} to replace every occurrence, or narrow the search with `section` or a \
                 longer `find`",
                if n == 1 { "time" } else { "times" }
            ),
        ));
    }
    let mut out = String::with_capacity(text.len() + found.len() * replace.len());
    let mut copied = 0;
    for hit in &found {
        out.push_str(&text[copied..range.start + hit.start]);
        out.push_str(&replace);
        copied = range.start + hit.end;
    }
    out.push_str(&text[copied..]);
    Ok((out, found.len()))
}

/// The non-overlapping occurrences of `find` (line breaks as LF) in `hay`, left to right, where
/// each line break of `find` matches `\n` or `\r\n`.
fn occurrences(hay: &str, find: &str) -> Vec<Range<usize>> {
    let parts: Vec<&str> = find.split('\n').collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < hay.len() {
        let start = match hay[at..].find(parts[0]) {
            Some(offset) => at + offset,
            None => break,
        };
        match match_at(hay, start, &parts) {
            Some(end) => {
                out.push(start..end);
                at = end;
            }
            None => at = start + hay[start..].chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// Where a match of `parts` (the lines of `find`) starting at `start` ends, if there is one.
fn match_at(hay: &str, start: usize, parts: &[&str]) -> Option<usize> {
    let mut pos = start + parts[0].len();
    for part in &parts[1..] {
        let rest = &hay[pos..];
        pos += if rest.starts_with("\r\n") {
            2
        } else if rest.starts_with('\n') {
            1
        } else {
            return None;
        };
        if !hay[pos..].starts_with(part) {
            return None;
        }
        pos += part.len();
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_text_counts_exactly() {
        let text = "one two one\n";
        assert_eq!(
            replace_text(text, "n.md", "one", "1", None, 2).unwrap(),
            ("1 two 1\n".into(), 2)
        );
        let err = replace_text(text, "n.md", "one", "1", None, 1).unwrap_err();
        assert_eq!(err.code(), ErrorCode::AmbiguousText);
        assert_eq!(
            err.message(),
            "the text occurs 2 times in the body of `n.md` but `count` is 1; pass count 2 to \
             replace every occurrence, or narrow the search with `section` or a longer `find`"
        );
        let err = replace_text(text, "n.md", "three", "3", None, 1).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchText);
        assert_eq!(
            err.message(),
            "`three` does not occur in the body of `n.md` (frontmatter is not searched); read \
             the note and copy the text exactly, including spaces and line breaks"
        );
        let long = "x".repeat(100);
        let err = replace_text(text, "n.md", &long, "", None, 1).unwrap_err();
        assert!(err.message().starts_with(&format!("`{}…` does not occur", "x".repeat(80))));
    }

    #[test]
    fn replace_text_rejects_bad_requests() {
        for (find, count) in [("", 1), ("one", 0)] {
            let err = replace_text("one\n", "n.md", find, "x", None, count).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidRequest);
        }
        let err = replace_text("# A\none\n", "n.md", "one", "x", Some("B"), 1).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
    }

    #[test]
    fn replace_text_stays_inside_its_section() {
        let text = "# T\n## A\nsame\n### A1\nsame\n## B\nsame\n";
        let (out, n) = replace_text(text, "n.md", "same", "new", Some("A"), 2).unwrap();
        assert_eq!((out.as_str(), n), ("# T\n## A\nnew\n### A1\nnew\n## B\nsame\n", 2));
        let (out, _) = replace_text(text, "n.md", "## B", "## C", Some("B"), 1).unwrap();
        assert_eq!(out, "# T\n## A\nsame\n### A1\nsame\n## C\nsame\n");
        let err = replace_text(text, "n.md", "same", "new", Some("B"), 3).unwrap_err();
        assert!(err.message().contains("1 time in section `T::B` of `n.md`"));
    }

    #[test]
    fn replace_text_never_touches_frontmatter() {
        let text = "---\nstatus: draft\n---\nstatus: draft\n";
        let (out, n) = replace_text(text, "n.md", "draft", "done", None, 1).unwrap();
        assert_eq!((out.as_str(), n), ("---\nstatus: draft\n---\nstatus: done\n", 1));
        let err = replace_text("---\nonly: here\n---\nbody\n", "n.md", "here", "x", None, 1);
        assert_eq!(err.unwrap_err().code(), ErrorCode::NoSuchText);
    }

    #[test]
    fn overlapping_occurrences_count_once_each() {
        assert_eq!(replace_text("aaaa\n", "n.md", "aa", "b", None, 2).unwrap(), ("bb\n".into(), 2));
        assert_eq!(replace_text("aaa\n", "n.md", "aa", "b", None, 1).unwrap(), ("ba\n".into(), 1));
    }

    #[test]
    fn replace_text_matches_crlf_input() {
        let (out, n) = replace_text("a\r\nb\r\n", "n.md", "a\r\nb", "c", None, 1).unwrap();
        assert_eq!((out.as_str(), n), ("c\r\n", 1));
        // A line break in `find` matches either ending; one in `replace` takes the note's.
        let (out, n) = replace_text("a\r\nb\r\na\nb\r\n", "n.md", "a\nb", "x\ny", None, 2).unwrap();
        assert_eq!((out.as_str(), n), ("x\r\ny\r\nx\r\ny\r\n", 2));
        let err = replace_text("a\r\n\r\nb\r\n", "n.md", "a\nb", "c", None, 1).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchText);
    }
}
