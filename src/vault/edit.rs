//! Edits of a note's text: section patches, appends, body replacement and literal replaces.
//!
//! Every function here is pure: it takes the current text and returns the new text, already
//! passed through `text::normalize`, or refuses without changing anything. Sections are found
//! with the heading resolver, so an edit lands on exactly one heading or not at all. Reading
//! and writing files, timestamp bumps and frontmatter values belong to other modules; the
//! frontmatter block is carried through untouched.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use super::frontmatter;
use super::headings::{self, Scope};
use super::text::{self, BOM};
use crate::error::{Error, ErrorCode};

/// What a section patch does with the new content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// The new content takes the place of the region.
    Replace,
    /// The new content goes before the region, separated by a blank line.
    Prepend,
    /// The new content goes after the region, separated by a blank line.
    Append,
}

impl Operation {
    /// The wire name, e.g. `append`.
    pub fn as_str(self) -> &'static str {
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

/// Patches one section. Returns the new text and the resolved display path (`A::B`).
pub fn patch_section(
    text: &str,
    note: &str,
    target: &str,
    op: Operation,
    scope: Scope,
    content: &str,
) -> crate::Result<(String, String)> {
    let text = text::normalize(text);
    let all = headings::headings(&text);
    let heading = headings::resolve(&all, target, note)?;
    let lines: Vec<&str> = text.lines().collect();
    let range = headings::section_lines(lines.len(), &all, heading, scope);
    let new_content = text::normalize(content);
    let new: Vec<&str> = text::strip_blank_edges(&new_content).lines().collect();
    let region = &lines[range.clone()];
    let replacement = match scope {
        Scope::Content => {
            let joined = region.join("\n");
            let old: Vec<&str> = text::strip_blank_edges(&joined).lines().collect();
            let merged = merge(op, &old, &new);
            let more_follows = range.end < lines.len();
            // The region is rebuilt with exactly one blank line on each side, which is what
            // keeps repeated appends from widening the gaps around a section.
            let mut out = Vec::with_capacity(merged.len() + 2);
            if !merged.is_empty() || more_follows {
                out.push("");
            }
            if !merged.is_empty() {
                out.extend(merged);
                if more_follows {
                    out.push("");
                }
            }
            splice(&lines, range, &out)
        }
        Scope::Marker | Scope::MarkerAndContent => splice(&lines, range, &merge(op, region, &new)),
    };
    Ok((replacement, headings::display_path(heading)))
}

/// Combines the old and new lines; empty new content leaves `old` alone when adding to it.
fn merge<'a>(op: Operation, old: &[&'a str], new: &[&'a str]) -> Vec<&'a str> {
    let (first, second) = match op {
        Operation::Replace => return new.to_vec(),
        Operation::Append => (old, new),
        Operation::Prepend => (new, old),
    };
    if first.is_empty() || second.is_empty() {
        return [first, second].concat();
    }
    [first, &[""], second].concat()
}

fn splice(lines: &[&str], range: Range<usize>, with: &[&str]) -> String {
    let all = [&lines[..range.start], with, &lines[range.end..]].concat();
    text::normalize(&all.join("\n"))
}

/// Reads one section: its heading line through the end of the section, right-trimmed, plus
/// a newline. The note's bytes are returned as they are, not normalised.
pub fn section_text(text: &str, note: &str, target: &str) -> crate::Result<String> {
    let all = headings::headings(text);
    let heading = headings::resolve(&all, target, note)?;
    let starts = line_starts(text);
    let lines = headings::section_lines(starts.len(), &all, heading, Scope::MarkerAndContent);
    let bom = if text.starts_with(BOM) { BOM.len_utf8() } else { 0 };
    let start = starts[lines.start].max(bom);
    let end = starts.get(lines.end).copied().unwrap_or(text.len());
    Ok(format!("{}\n", text[start..end].trim_end()))
}

/// Byte offset of the start of every line, counted the way `str::lines` counts them.
fn line_starts(text: &str) -> Vec<usize> {
    let mut offset = 0;
    text.split_inclusive('\n')
        .map(|line| {
            let start = offset;
            offset += line.len();
            start
        })
        .collect()
}

/// Appends `addition` to the note: both are stripped of blank edge lines and joined with one
/// blank line. An empty addition leaves the note as it was (normalised).
pub fn append(text: &str, addition: &str) -> String {
    let addition = text::normalize(addition);
    let addition = text::strip_blank_edges(&addition);
    if addition.is_empty() {
        return text::normalize(text);
    }
    let note = text::normalize(text);
    let note = text::strip_blank_edges(&note);
    if note.is_empty() {
        return text::normalize(addition);
    }
    text::normalize(&format!("{note}\n\n{addition}"))
}

/// Replaces the body, keeping the head (frontmatter block and the blank lines after it)
/// byte-for-byte. Without frontmatter the result is just the normalised body.
pub fn set_body(text: &str, body: &str) -> String {
    let body = text::normalize(body);
    let Some(block) = frontmatter::locate(text) else { return body };
    if body.is_empty() {
        // Blank lines after the block would be trailing blank lines of the file.
        let block = &text[..block.end];
        return if block.ends_with('\n') { block.to_string() } else { format!("{block}\n") };
    }
    let (head, _) = frontmatter::split(text);
    let separator = if head.ends_with('\n') { "" } else { "\n" };
    format!("{head}{separator}{body}")
}

/// Literal find/replace, optionally inside one section (resolved like a patch target, heading
/// line included); `count` is the expected number of non-overlapping occurrences. Returns
/// the new text and the number replaced.
///
/// Only the body is searched: the frontmatter block is never touched, so a replace cannot
/// corrupt the YAML (edit frontmatter values with the frontmatter operations instead). A
/// refusal changes nothing. Line endings in `find` and `replace` are normalised to LF, as the
/// note's are.
pub fn replace_text(
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
    let text = text::normalize(text);
    let find = find.replace("\r\n", "\n");
    let replace = replace.replace("\r\n", "\n");
    let body_start = frontmatter::locate(&text).map_or(0, |block| block.end);
    let (range, place) = match section {
        Some(target) => {
            let all = headings::headings(&text);
            let heading = headings::resolve(&all, target, note)?;
            let starts = line_starts(&text);
            let lines =
                headings::section_lines(starts.len(), &all, heading, Scope::MarkerAndContent);
            let end = starts.get(lines.end).copied().unwrap_or(text.len());
            let place = format!("section `{}` of `{note}`", headings::display_path(heading));
            (starts[lines.start]..end, place)
        }
        None => (body_start..text.len(), format!("the body of `{note}`")),
    };
    let region = &text[range.clone()];
    let found = region.matches(find.as_str()).count();
    if found == 0 {
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
    if found != count {
        return Err(Error::new(
            ErrorCode::AmbiguousText,
            format!(
                "the text occurs {found} {} in {place} but `count` is {count}; pass count \
                 {found} to replace every occurrence, or narrow the search with `section` or a \
                 longer `find`",
                if found == 1 { "time" } else { "times" }
            ),
        ));
    }
    let replaced = region.replace(find.as_str(), &replace);
    let out = format!("{}{replaced}{}", &text[..range.start], &text[range.end..]);
    Ok((text::normalize(&out), found))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "# Example\n\nIntro.\n\n## New\n\nBody.\n## Other\n\nMore.\n"
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
        assert!(err.message().contains("    Recipe::Mince::Method\n    Recipe::Mash::Method\n"));
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
        assert_eq!(append("Text\r\n\r\n", "\n \n"), "Text\n");
        assert_eq!(append("", "More"), "More\n");
        assert_eq!(append("---\na: 1\n---\n", "More"), "---\na: 1\n---\n\nMore\n");
    }

    #[test]
    fn set_body_keeps_the_head_bytes() {
        let text = "---\r\ntitle: [broken\r\n---\r\n\r\nOld body\r\n";
        assert_eq!(
            set_body(text, "New\r\nbody"),
            "---\r\ntitle: [broken\r\n---\r\n\r\nNew\nbody\n"
        );
        assert_eq!(set_body("Old\n", "New"), "New\n");
        assert_eq!(set_body("\u{feff}Old\n", "New\n\n"), "New\n");
        assert_eq!(set_body("---\na: 1\n---", "New"), "---\na: 1\n---\nNew\n");
        assert_eq!(set_body("---\na: 1\n---\n\n\nOld\n", ""), "---\na: 1\n---\n");
    }

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
        assert_eq!((out.as_str(), n), ("c\n", 1));
    }
}
