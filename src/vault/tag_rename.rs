//! A tag's rename (or merge) in one note's text: every inline `#tag` and every frontmatter
//! `tags:` (or `tag:`) entry that is the tag or nests under it gets the new name, and nothing
//! else changes, byte for byte.
//!
//! The inline tags are found by the scanner the tag listing uses (`tags::inline_spans`), so a
//! rename reaches exactly the tags the listing counts. The frontmatter is read as it is written,
//! not parsed and rendered again, so its formatting, quoting and comments stay: a block list
//! (`- a`), a flow list (`[a, "b"]`), or one string of tags split at commas and spaces, `#`
//! optional, as `tags::note_tags` reads the parsed value. A quoted entry with escapes
//! (`"caf\u00e9"`, `'it''s'`) is read as YAML reads it and, when renamed, written again whole,
//! double-quoted; in one string of tags it is left alone. A merge (renaming onto a tag the note
//! already lists) keeps one frontmatter entry of it.
//!
//! Pure text: the notes are handed in; the walk and the writes are `ops/retag.rs`'s.

use std::collections::HashSet;
use std::ops::Range;

use super::frontmatter;
use super::tags::{self, is_tag};
use crate::error::{Error, ErrorCode, Result};

/// A rename asked for: the tag to rename and its new name, both tags by Obsidian's rules and
/// not the same text. A change of case alone (`Project` to `project`) is a rename: it rewrites
/// every spelling to the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Retag {
    from: String,
    to: String,
}

impl Retag {
    /// The rename of `from_raw` to `to_raw` (each `#` optional), or the refusal of either.
    pub(crate) fn new(from_raw: &str, to_raw: &str) -> Result<Retag> {
        let read = |raw: &str, role: &str| {
            tags::asked(raw).map(str::to_string).ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidTag,
                    format!(
                        "the {role} tag {raw:?} is not a tag: Obsidian's tags are letters, \
                         digits, `_`, `-` and `/` (for nesting), with no spaces and at least one \
                         non-digit; write it like \"project/alpha\""
                    ),
                )
            })
        };
        let (from, to) = (read(from_raw, "old")?, read(to_raw, "new")?);
        if from == to {
            return Err(Error::new(
                ErrorCode::SameTag,
                format!(
                    "#{from} would be renamed to itself; name a different new tag (a change of \
                     case alone, such as #{} to #{}, is a rename)",
                    from,
                    from.to_uppercase()
                ),
            ));
        }
        Ok(Retag { from, to })
    }

    /// The tag renamed, as asked (without `#`).
    pub(crate) fn from(&self) -> &str {
        &self.from
    }

    /// Its new name (without `#`).
    pub(crate) fn to(&self) -> &str {
        &self.to
    }

    /// `tag`'s new name when it is the renamed tag or nests under it (compared without case,
    /// level by level): `Old/child` becomes `new/child`.
    pub(crate) fn renamed(&self, tag: &str) -> Option<String> {
        let mut levels = tag.split('/');
        for want in self.from.split('/') {
            if levels.next()?.to_lowercase() != want.to_lowercase() {
                return None;
            }
        }
        let rest: Vec<&str> = levels.collect();
        Some(if rest.is_empty() {
            self.to.clone()
        } else {
            format!("{}/{}", self.to, rest.join("/"))
        })
    }
}

/// One frontmatter entry as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The entry's bytes: a list item's scalar (quotes included), or one token of a string.
    raw: Range<usize>,
    /// The tag's bytes (no `#`, no quotes); `None` when the entry is no tag, or is one only
    /// once its escapes are read (see `escaped`).
    pub(crate) tag: Option<Range<usize>>,
    /// A quoted entry with escapes (`"caf\u00e9"`), whose bytes are not its text: the tag it
    /// reads as (no `#`), and whether a `#` led it. A rename writes the whole entry again.
    escaped: Option<(String, bool)>,
    /// The entry is a whole plain (unquoted) scalar: a new name YAML would read as another
    /// type (`true`, `1e5`) must be quoted.
    plain: bool,
    /// A block list item's whole line, which goes when the entry is dropped.
    line: Option<Range<usize>>,
}

/// The frontmatter's tag entries, in order, as written: `tags:` if the block has it, else
/// `tag:` (the key `tags::note_tags` reads).
pub(crate) fn frontmatter_entries(text: &str) -> Vec<Entry> {
    let Some(span) =
        frontmatter::value_span(text, "tags").or_else(|| frontmatter::value_span(text, "tag"))
    else {
        return Vec::new();
    };
    let value = &text[span.clone()];
    let head_len = value.find('\n').map_or(value.len(), |n| n + 1);
    let head = value[..head_len].trim_start_matches([' ', '\t']);
    let at = span.start + head_len - head.len();
    if plain_end(head, false) == 0 && !head.starts_with(['"', '\'', '[']) {
        // Nothing after the colon: a block list on the lines below.
        block_entries(text, span.start + head_len..span.end)
    } else if head.starts_with('[') {
        flow_entries(text, at + 1, span.end)
    } else {
        string_entries(text, at, span.end)
    }
}

/// The items of a block list (`- a` lines); other lines hold no tag.
fn block_entries(text: &str, lines: Range<usize>) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut start = lines.start;
    for line in text[lines].split_inclusive('\n') {
        let whole = start..start + line.len();
        start = whole.end;
        let trimmed = line.trim_start_matches([' ', '\t']);
        let Some(item) = trimmed.strip_prefix('-').filter(|r| r.starts_with([' ', '\t'])) else {
            continue;
        };
        let item = item.trim_start_matches([' ', '\t']);
        let at = whole.end - item.len();
        if let Some((raw, content, plain)) = scalar(text, at, whole.end, false) {
            let (tag, escaped) = (tag_in(text, content.clone()), escaped_tag(text, &raw, &content));
            out.push(Entry { raw, tag, escaped, plain, line: Some(whole) });
        }
    }
    out
}

/// The items of a flow list, from just after its `[` to its `]`.
fn flow_entries(text: &str, mut at: usize, end: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    loop {
        let rest = &text[at..end];
        let skipped = rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n', ',']).len();
        at += skipped;
        if at >= end || text[at..].starts_with(']') {
            return out;
        }
        match scalar(text, at, end, true) {
            Some((raw, content, plain)) => {
                at = raw.end.max(at + 1);
                let (tag, escaped) =
                    (tag_in(text, content.clone()), escaped_tag(text, &raw, &content));
                out.push(Entry { raw, tag, escaped, plain, line: None });
            }
            None => return out,
        }
    }
}

/// The tokens of one string of tags, split at commas and spaces as `tags::note_tags` splits it.
fn string_entries(text: &str, at: usize, end: usize) -> Vec<Entry> {
    let Some((_, content, plain)) = scalar(text, at, end, false) else { return Vec::new() };
    let Some(content) = content else { return Vec::new() };
    let mut out = Vec::new();
    let mut start = content.start;
    let whole = content.clone();
    for token in text[content].split([',', ' ']) {
        let raw = start..start + token.len();
        start = raw.end + 1;
        if token.trim().is_empty() {
            continue;
        }
        let tag = tag_in(text, Some(raw.clone()));
        out.push(Entry { plain: plain && raw == whole, raw, tag, escaped: None, line: None });
    }
    out
}

/// The tag in `content` (an entry's text): trimmed, `#`s dropped, when it is a tag.
fn tag_in(text: &str, content: Option<Range<usize>>) -> Option<Range<usize>> {
    let content = content?;
    let s = &text[content.clone()];
    let lead = s.len() - s.trim_start().len();
    let t = s.trim();
    let t2 = t.trim_start_matches('#');
    let start = content.start + lead + (t.len() - t2.len());
    is_tag(t2).then_some(start..start + t2.len())
}

/// The tag a quoted scalar with escapes reads as (`content` is `None` for one), by the same
/// YAML reader the parsed frontmatter uses, and whether a `#` led it.
fn escaped_tag(
    text: &str,
    raw: &Range<usize>,
    content: &Option<Range<usize>>,
) -> Option<(String, bool)> {
    if content.is_some() {
        return None;
    }
    let read: String = serde_saphyr::from_str(&text[raw.clone()]).ok()?;
    let t = read.trim();
    let bare = t.trim_start_matches('#');
    is_tag(bare).then(|| (bare.to_string(), bare.len() != t.len()))
}

impl Entry {
    /// The tag the entry reads as, whether written plainly or with escapes.
    fn tag_text<'t>(&'t self, text: &'t str) -> Option<&'t str> {
        match (&self.tag, &self.escaped) {
            (Some(at), _) => Some(&text[at.clone()]),
            (None, Some((tag, _))) => Some(tag),
            (None, None) => None,
        }
    }
}

/// The YAML scalar starting at `at` (before `end`): its bytes, its content's bytes (`None`
/// for a quoted one with escapes, whose bytes are not its text), and whether it is plain.
/// In a flow list a plain scalar also ends at `,` and `]`.
fn scalar(
    text: &str,
    at: usize,
    end: usize,
    flow: bool,
) -> Option<(Range<usize>, Option<Range<usize>>, bool)> {
    let s = &text[at..end];
    let quote = s.chars().next()?;
    if quote == '"' || quote == '\'' {
        let bytes = s.as_bytes();
        let mut i = 1;
        let mut escaped = false;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if quote == '"' => {
                    escaped = true;
                    i += 2;
                }
                b'\'' if quote == '\'' && bytes.get(i + 1) == Some(&b'\'') => {
                    escaped = true;
                    i += 2;
                }
                b if b == quote as u8 => {
                    let content = (!escaped).then_some(at + 1..at + i);
                    return Some((at..at + i + 1, content, false));
                }
                _ => i += 1,
            }
        }
        return None;
    }
    let len = plain_end(s, flow);
    (len > 0).then_some((at..at + len, Some(at..at + len), true))
}

/// How long the plain scalar at the start of `s` is: to the end of the line or a comment
/// (`#` after whitespace; one that starts the scalar makes it empty), and in a flow list to a
/// `,` or `]`; trailing whitespace excluded.
fn plain_end(s: &str, flow: bool) -> usize {
    if s.starts_with('#') {
        return 0;
    }
    let mut end = s.len();
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        if c == '\n' || c == '\r' || (c == '#' && prev.is_whitespace() && i > 0) {
            end = i;
            break;
        }
        if flow && (c == ',' || c == ']') {
            end = i;
            break;
        }
        prev = c;
    }
    s[..end].trim_end_matches([' ', '\t']).len()
}

/// `text` with `r` applied: its new text and how many tags it renamed (each inline occurrence
/// and each frontmatter entry, one kept out of a merge included); `None` when it carries none.
pub(crate) fn rename(text: &str, r: &Retag) -> Option<(String, usize)> {
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut count = 0;
    for at in tags::inline_spans(text) {
        if let Some(new) = r.renamed(&text[at.clone()]) {
            count += 1;
            if text[at.clone()] != *new {
                edits.push((at, new));
            }
        }
    }
    count += frontmatter_edits(text, r, &mut edits);
    if count == 0 {
        return None;
    }
    edits.sort_by_key(|(at, _)| at.start);
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (at, new) in edits {
        out.push_str(&text[done..at.start]);
        out.push_str(&new);
        done = at.end;
    }
    out.push_str(&text[done..]);
    Some((out, count))
}

/// The frontmatter's edits for `r`, pushed onto `edits`; returns how many entries it renamed.
/// A renamed entry that would repeat a tag the list already carries (a merge) is dropped:
/// its line in a block list, else it and one separator beside it.
fn frontmatter_edits(text: &str, r: &Retag, edits: &mut Vec<(Range<usize>, String)>) -> usize {
    let entries = frontmatter_entries(text);
    let new: Vec<Option<String>> =
        entries.iter().map(|e| e.tag_text(text).and_then(|t| r.renamed(t))).collect();
    // The tags the list keeps as they are: a renamed entry repeating one of them goes.
    let mut seen: HashSet<String> = entries
        .iter()
        .zip(&new)
        .filter(|(_, n)| n.is_none())
        .filter_map(|(e, _)| e.tag_text(text).map(str::to_lowercase))
        .collect();
    let mut dropped = vec![false; entries.len()];
    let mut count = 0;
    for (i, (entry, new)) in entries.iter().zip(&new).enumerate() {
        let (Some(old), Some(new)) = (entry.tag_text(text), new) else { continue };
        count += 1;
        if !seen.insert(new.to_lowercase()) {
            dropped[i] = true;
        } else if old != new.as_str() {
            match (&entry.tag, &entry.escaped) {
                (Some(tag), _) => {
                    let quoted = entry.plain && frontmatter::needs_quotes(new);
                    let written = if quoted { format!("\"{new}\"") } else { new.clone() };
                    edits.push((tag.clone(), written));
                }
                // Written again whole, double-quoted as JSON quotes it, which YAML reads.
                (None, Some((_, hash))) => {
                    let text = if *hash { format!("#{new}") } else { new.clone() };
                    let quoted =
                        serde_json::to_string(&text).unwrap_or_else(|_| format!("\"{text}\""));
                    edits.push((entry.raw.clone(), quoted));
                }
                (None, None) => {}
            }
        }
    }
    let mut i = 0;
    while i < entries.len() {
        if !dropped[i] {
            i += 1;
            continue;
        }
        if let Some(line) = &entries[i].line {
            edits.push((line.clone(), String::new()));
            i += 1;
            continue;
        }
        // A run of dropped entries goes with the separators up to the next entry, or, at the
        // end, from the entry before it.
        let mut j = i;
        while j + 1 < entries.len() && dropped[j + 1] {
            j += 1;
        }
        let gone = match (entries.get(j + 1), i.checked_sub(1)) {
            (Some(next), _) => entries[i].raw.start..next.raw.start,
            (None, Some(before)) => entries[before].raw.end..entries[j].raw.end,
            (None, None) => entries[i].raw.start..entries[j].raw.end,
        };
        edits.push((gone, String::new()));
        i = j + 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retag(from: &str, to: &str) -> Retag {
        Retag::new(from, to).unwrap()
    }

    #[test]
    fn a_new_tag_must_be_a_tag_and_differ_from_the_old_one() {
        let table: &[(&str, &str, Option<ErrorCode>)] = &[
            ("old", "new", None),
            ("#old", "#new/child", None),
            ("Project", "project", None),
            ("old", "two words", Some(ErrorCode::InvalidTag)),
            ("old", "1984", Some(ErrorCode::InvalidTag)),
            ("old", "a//b", Some(ErrorCode::InvalidTag)),
            ("old", "semi;colon", Some(ErrorCode::InvalidTag)),
            ("", "new", Some(ErrorCode::InvalidTag)),
            ("old", "#old", Some(ErrorCode::SameTag)),
        ];
        for (from, to, want) in table {
            let got = Retag::new(from, to).err().map(|e| e.code());
            assert_eq!(got, *want, "{from} -> {to}");
        }
    }

    #[test]
    fn a_tag_and_the_tags_nested_under_it_are_renamed_without_case() {
        let r = retag("Old", "new");
        assert_eq!(r.renamed("old").as_deref(), Some("new"));
        assert_eq!(r.renamed("OLD/Child/x").as_deref(), Some("new/Child/x"));
        assert_eq!(r.renamed("older"), None);
        assert_eq!(r.renamed("x/old"), None);
        assert_eq!(retag("a/b", "c").renamed("A/B/d").as_deref(), Some("c/d"));
        assert_eq!(retag("a/b", "c").renamed("a"), None);
    }

    #[test]
    fn inline_tags_are_renamed_where_the_listing_finds_them_and_nowhere_else() {
        // (a note, what renaming #old to #new makes of it, how many tags changed)
        let table: &[(&str, &str, usize)] = &[
            ("#old and #Old/child.\n", "#new and #new/child.\n", 2),
            ("# Title #old\n", "# Title #new\n", 1),
            ("#older #x/old #old_b\n", "#older #x/old #old_b\n", 0),
            ("`#old` ``a #old`` #old\n", "`#old` ``a #old`` #new\n", 1),
            ("```\n#old\n```\n    #old\n", "```\n#old\n```\n    #old\n", 0),
            ("%% #old %% #old\n%% open\n#old\n%%\n", "%% #old %% #new\n%% open\n#old\n%%\n", 1),
            ("[[Note #old]] see https://x.org/#old a#old \\#old\n", "", 0),
            ("> quote #old\r\n- [ ] task #old\r\n", "> quote #new\r\n- [ ] task #new\r\n", 2),
            ("\u{feff}#old\n", "\u{feff}#new\n", 1),
            ("#old/ trailing\n", "#new/ trailing\n", 1),
        ];
        let r = retag("old", "new");
        for (text, want, n) in table {
            match rename(text, &r) {
                Some((got, count)) => assert_eq!((got.as_str(), count), (*want, *n), "in {text:?}"),
                None => assert_eq!(*n, 0, "in {text:?}"),
            }
        }
    }

    #[test]
    fn frontmatter_tags_are_renamed_in_every_shape_keeping_every_other_byte() {
        // (a note, what renaming #old to #new makes of it)
        let table: &[(&str, &str)] = &[
            ("---\ntags:\n  - old\n  - other\n---\n", "---\ntags:\n  - new\n  - other\n---\n"),
            ("---\ntags:\n- 'old'\n- \"Old/x\"\n---\n", "---\ntags:\n- 'new'\n- \"new/x\"\n---\n"),
            (
                "---\ntags: [old, \"#old/x\", b]  # c\n---\n",
                "---\ntags: [new, \"#new/x\", b]  # c\n---\n",
            ),
            ("---\ntags: old, b\n---\n", "---\ntags: new, b\n---\n"),
            ("---\ntags: \"#old #b\"\n---\n", "---\ntags: \"#new #b\"\n---\n"),
            ("---\ntag: old\n---\n#old\n", "---\ntag: new\n---\n#new\n"),
            (
                "---\r\ntitle: x\r\ntags:\r\n  - old # why\r\n---\r\n",
                "---\r\ntitle: x\r\ntags:\r\n  - new # why\r\n---\r\n",
            ),
            ("---\ntags: [\n  old,\n  b\n]\n---\n", "---\ntags: [\n  new,\n  b\n]\n---\n"),
            ("---\nold: old\naliases: [old]\n---\n", "---\nold: old\naliases: [old]\n---\n"),
            ("---\ntags: [\"o\\x6cd\"]\n---\n", "---\ntags: [\"new\"]\n---\n"),
        ];
        let r = retag("old", "new");
        for (text, want) in table {
            let got = rename(text, &r).map_or_else(|| text.to_string(), |(t, _)| t);
            assert_eq!(got, *want, "in {text:?}");
        }
    }

    #[test]
    fn a_merge_keeps_one_frontmatter_entry_of_the_tag() {
        let table: &[(&str, &str)] = &[
            ("---\ntags:\n  - old\n  - new\n---\n", "---\ntags:\n  - new\n---\n"),
            ("---\ntags:\n  - New\n  - old\n---\n", "---\ntags:\n  - New\n---\n"),
            ("---\ntags: [new, old]\n---\n", "---\ntags: [new]\n---\n"),
            ("---\ntags: [old, new, b]\n---\n", "---\ntags: [new, b]\n---\n"),
            ("---\ntags: [old, OLD]\n---\n", "---\ntags: [new]\n---\n"),
            ("---\ntags: [b, new, old, Old]\n---\n", "---\ntags: [b, new]\n---\n"),
            ("---\ntags: new old\n---\n", "---\ntags: new\n---\n"),
        ];
        let r = retag("old", "new");
        for (text, want) in table {
            let got = rename(text, &r).map(|(t, _)| t);
            assert_eq!(got.as_deref(), Some(*want), "in {text:?}");
        }
    }

    #[test]
    fn a_new_name_yaml_would_read_as_another_type_is_quoted_in_a_plain_entry() {
        let r = retag("old", "true");
        assert_eq!(
            rename("---\ntags: [old]\n---\n", &r).unwrap().0,
            "---\ntags: [\"true\"]\n---\n"
        );
        assert_eq!(rename("---\ntags: 'old'\n---\n", &r).unwrap().0, "---\ntags: 'true'\n---\n");
    }

    #[test]
    fn a_quoted_entry_with_escapes_is_read_as_yaml_reads_it_and_written_again_whole() {
        let r = retag("café", "cafe/paris");
        let text = "---\ntags:\n  - \"caf\\u00e9\"\n  - b\n---\n";
        assert_eq!(
            rename(text, &r).unwrap(),
            ("---\ntags:\n  - \"cafe/paris\"\n  - b\n---\n".into(), 1)
        );
        let r = retag("old", "new");
        let text = "---\ntags: [\"#o\\x6cd\", b]\n---\n";
        assert_eq!(rename(text, &r).unwrap().0, "---\ntags: [\"#new\", b]\n---\n");
        // Onto a tag the list has, it goes, as a plain entry would.
        let text = "---\ntags:\n  - new\n  - \"o\\x6cd\"\n---\n";
        assert_eq!(rename(text, &r).unwrap().0, "---\ntags:\n  - new\n---\n");
        // Inside one string of tags, escapes leave the string as it is.
        assert_eq!(rename("---\ntags: \"o\\x6cd b\"\n---\n", &r), None);
    }

    #[test]
    fn the_entries_read_as_written_are_the_tags_the_parsed_frontmatter_gives() {
        let notes = [
            "---\ntags:\n  - a\n  - \"#b\"\n  - 'c/d'\n  - #comment\n  - two words\n---\n",
            "---\ntags:\n  - \"caf\\u00e9\"\n  - 'it''s'\n  - \"#o\\x6cd\"\n---\n",
            "---\ntags: [a, \"#b\", 'c']  # x\n---\n",
            "---\ntags: a, #b c\n---\n",
            "---\ntags: \"a, #b c\"\n---\n",
            "---\ntag: single\n---\n",
            "---\ntags:\n---\n",
            "---\ntitle: none\n---\n",
        ];
        for text in notes {
            let entries = frontmatter_entries(text);
            let written: Vec<&str> = entries.iter().filter_map(|e| e.tag_text(text)).collect();
            let parsed = tags::note_tags(&frontmatter::parse(text), "");
            assert_eq!(written, parsed, "in {text:?}");
        }
    }
}
