//! Headings and blocks: the outline of a note and the targets that address its parts.
//!
//! This module takes the ATX headings the line model (`markdown`) finds outside frontmatter,
//! code and blockquotes, builds each heading's ancestor path, and resolves a target such as
//! `Recipe::Mash::Method` to exactly one heading or refuses with a message that lists the paths
//! to retry with. The same resolver ([`locate`]) takes block references: a target `^id` names
//! the paragraph, list item or table whose last line ends in `^id`, as Obsidian's block links
//! do, so every surface that takes a heading target takes a block target too. Matching compares normalised forms of both sides; the stored heading text is
//! never rewritten. It does not edit text (see `edit`), decides nothing about what a heading or a
//! fence is, and knows nothing of Setext headings, which the vault does not use.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use unicode_normalization::UnicodeNormalization;

use crate::error::{Error, ErrorCode};
use crate::markdown::{self, Class};

/// One ATX heading of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// The number of `#` markers, 1 to 6.
    pub(crate) depth: u8,
    /// The text as written, without the markers, the closing `#` run or edge whitespace.
    pub text: String,
    /// 1-based line number over the whole file, frontmatter lines included.
    pub line: usize,
    /// The texts of the enclosing headings, outermost first, then this heading's own text.
    pub path: Vec<String>,
}

/// Which lines of a section an edit addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The lines after the heading line, up to the end of the section.
    #[default]
    Content,
    /// The heading line alone.
    Marker,
    /// The heading line and its content.
    MarkerAndContent,
}

impl Scope {
    /// The wire name, e.g. `markerAndContent`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Content => "content",
            Scope::Marker => "marker",
            Scope::MarkerAndContent => "markerAndContent",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = Error;

    fn from_str(s: &str) -> crate::Result<Scope> {
        [Scope::Content, Scope::Marker, Scope::MarkerAndContent]
            .into_iter()
            .find(|scope| scope.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidRequest,
                    format!("unknown scope `{s}`; use one of content, marker, markerAndContent"),
                )
            })
    }
}

/// Every ATX heading of `text`, in order, ignoring frontmatter and code. Headings inside a
/// blockquote (`> # x`) belong to the quote, not to the note's outline, so they are left out.
pub fn headings(text: &str) -> Vec<Heading> {
    let mut stack: Vec<(u8, String)> = Vec::new();
    let mut out = Vec::new();
    for line in markdown::lines(text) {
        let Class::Heading { level: depth, text } = line.class else { continue };
        if line.quote_depth > 0 {
            continue;
        }
        while stack.last().is_some_and(|(d, _)| *d >= depth) {
            stack.pop();
        }
        stack.push((depth, text.to_string()));
        let path = stack.iter().map(|(_, t)| t.clone()).collect();
        out.push(Heading { depth, text: text.to_string(), line: line.number + 1, path });
    }
    out
}

/// The matching form of a heading text or target segment; used for comparison only.
pub fn normalize(s: &str) -> String {
    let s: String = s.nfkc().collect();
    let mut s = s.trim();
    let unmarked = s.trim_start_matches('#');
    if s.len() - unmarked.len() <= 6 {
        s = unmarked.trim_start();
    }
    let unclosed = s.trim_end_matches('#');
    if unclosed.len() < s.len() && unclosed.ends_with(char::is_whitespace) {
        s = unclosed;
    }
    let s = unwrap_links(&unwrap_wikilinks(s));
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '*' | '_' | '`' | '\u{ad}' => {}
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{2043}' | '\u{ff0d}' => out.push('-'),
            c => out.push(c),
        }
    }
    let collapsed = out.split_whitespace().collect::<Vec<_>>().join(" ");
    // `to_lowercase` plus the two common folds it lacks, so `Straße` matches `STRASSE`.
    collapsed.to_lowercase().replace('ß', "ss").replace('ς', "σ")
}

/// `[[target|alias]]` becomes `alias`, `[[target]]` becomes `target`.
fn unwrap_wikilinks(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find("[[") {
        let inner_start = open + 2;
        let Some(close) = rest[inner_start..].find("]]") else { break };
        let inner = &rest[inner_start..inner_start + close];
        out.push_str(&rest[..open]);
        out.push_str(inner.rsplit_once('|').map_or(inner, |(_, alias)| alias));
        rest = &rest[inner_start + close + 2..];
    }
    out.push_str(rest);
    out
}

/// `[text](url)` becomes `text`; brackets without a following `(url)` stay.
fn unwrap_links(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let link = after.find(']').and_then(|close| {
            let label = &after[..close];
            let tail = after[close + 1..].strip_prefix('(')?;
            let end = tail.find(')')?;
            (!label.contains('[')).then(|| (label, &tail[end + 1..]))
        });
        match link {
            Some((label, tail)) => {
                out.push_str(label);
                rest = tail;
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The heading's path as a paste-able target, e.g. `Recipe::Mash::Method`.
pub fn display_path(h: &Heading) -> String {
    h.path.join("::")
}

/// Target parts: split on `::` and on ` > ` (the form some tools print breadcrumbs in, so a
/// pasted `A > B` works as well as `A::B`), trimmed, empty parts dropped.
fn parts(s: &str) -> impl Iterator<Item = &str> {
    s.split("::").flat_map(|p| p.split(" > ")).map(str::trim).filter(|p| !p.is_empty())
}

/// The normalised segments a heading is matched on. A heading whose text contains `::` counts
/// as several segments, so its displayed path still works as a target; a heading with no text
/// keeps an empty segment so it never stands in for its parent.
fn key(h: &Heading) -> Vec<String> {
    let mut key = Vec::with_capacity(h.path.len());
    for segment in &h.path {
        let before = key.len();
        key.extend(parts(segment).map(normalize));
        if key.len() == before {
            key.push(String::new());
        }
    }
    key
}

fn path_list(paths: impl Iterator<Item = String>) -> String {
    let lines: Vec<String> = paths.map(|p| format!("    {p}")).collect();
    if lines.is_empty() { "    (none)".to_string() } else { lines.join("\n") }
}

/// Resolves a `::` target. `note` is the note's vault path, used only in messages.
///
/// A target may end in `@N`, a line number, which picks among the headings that match the
/// rest: the one way to address one of two headings with identical paths, and what the
/// ambiguous-heading refusal offers. A heading whose own text ends in `@N` still matches as
/// written first.
pub fn resolve<'a>(all: &'a [Heading], target: &str, note: &str) -> crate::Result<&'a Heading> {
    let first = resolve_text(all, target, note);
    let Some((head, line)) = at_line(target) else { return first };
    if first.is_ok() {
        return first;
    }
    let keys: Vec<Vec<String>> = all.iter().map(key).collect();
    let want: Vec<String> = parts(head).map(normalize).collect();
    let candidates: Vec<usize> =
        (0..all.len()).filter(|&i| want.is_empty() || keys[i].ends_with(&want)).collect();
    if let Some(&i) = candidates.iter().find(|&&i| all[i].line == line) {
        return Ok(&all[i]);
    }
    let shown = if candidates.is_empty() { (0..all.len()).collect() } else { candidates };
    Err(Error::new(
        ErrorCode::NoSuchHeading,
        format!(
            "no heading matching `{head}` is at line {line} of `{note}`; retry with one of:\n{}",
            path_list(shown.iter().map(|&i| with_line(&all[i])))
        ),
    ))
}

/// `Target@12` split into the target and the line, when it ends so.
fn at_line(target: &str) -> Option<(&str, usize)> {
    let (head, digits) = target.trim().rsplit_once('@')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((head, digits.parse().ok()?))
}

/// A heading listed in a refusal: its path, its line, and a target that reaches exactly it.
fn with_line(h: &Heading) -> String {
    format!("{}  (line {}; target `{}@{}`)", display_path(h), h.line, display_path(h), h.line)
}

fn resolve_text<'a>(all: &'a [Heading], target: &str, note: &str) -> crate::Result<&'a Heading> {
    let want: Vec<String> = parts(target).map(normalize).collect();
    if want.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "empty heading target `{target}` for `{note}`; name a heading such as \
                 `Section` or `Parent::Section`"
            ),
        ));
    }
    let keys: Vec<Vec<String>> = all.iter().map(key).collect();
    let matches: Vec<usize> = (0..all.len()).filter(|&i| keys[i].ends_with(&want)).collect();
    let colliding = match matches.as_slice() {
        [] => {
            return Err(Error::new(
                ErrorCode::NoSuchHeading,
                format!(
                    "no heading matches `{target}` in `{note}`; retry with one of its headings \
                     (full paths):\n{}",
                    path_list(all.iter().map(display_path))
                ),
            ));
        }
        [only] => return Ok(&all[*only]),
        _ => {
            // A heading whose whole path is the target beats deeper headings that merely end
            // with it, so a top-level `Notes` wins over `Integrations::Notes`.
            let exact: Vec<usize> =
                matches.iter().copied().filter(|&i| keys[i].len() == want.len()).collect();
            match exact.as_slice() {
                [only] => return Ok(&all[*only]),
                [] => matches,
                _ => exact,
            }
        }
    };
    let twins = colliding
        .iter()
        .enumerate()
        .any(|(n, &i)| colliding[n + 1..].iter().any(|&j| keys[i] == keys[j]));
    let twins_note = if twins {
        "\nSome of these have identical paths; only the `@line` form tells them apart."
    } else {
        ""
    };
    Err(Error::new(
        ErrorCode::AmbiguousHeading,
        format!(
            "heading target `{target}` is ambiguous in `{note}`: {} headings match:\n{}{twins_note}\n\
             Retry with one of the targets above.",
            colliding.len(),
            path_list(colliding.iter().map(|&i| with_line(&all[i])))
        ),
    ))
}

/// A block reference: the lines of the paragraph, list item or table that a `^id` closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// The id, without the caret.
    pub(crate) id: String,
    /// 0-based half-open line range of the block over the whole file, the id's line included.
    pub(crate) lines: Range<usize>,
}

/// The id a line ends with (`text ^id`, or `^id` alone), if any: letters, digits and `-`,
/// which is what Obsidian writes.
pub(crate) fn block_id(raw: &str) -> Option<&str> {
    let t = raw.trim_end();
    let token = t.rsplit(char::is_whitespace).next()?;
    let id = token.strip_prefix('^')?;
    (!id.is_empty() && id.chars().all(|c| c.is_alphanumeric() || c == '-')).then_some(id)
}

/// Every block reference of `text`, in order, ignoring frontmatter, code and heading lines.
/// A line that is only `^id` names the block just above it (Obsidian's form after a table or
/// a list); otherwise the block is the line's list item, or the run of non-blank lines it
/// ends.
pub(crate) fn blocks(text: &str) -> Vec<Block> {
    // One pass, remembering only the run of plain lines that ends just above (and the one
    // above a single blank line): walking back from each `^id` line instead would make a
    // paragraph of thousands of `x ^id` lines cost its length squared.
    let mut run: Option<Run> = None;
    let mut above_blank: Option<Run> = None;
    let mut out = Vec::new();
    for line in markdown::lines(text) {
        let i = line.number;
        match line.class {
            Class::Text => {}
            Class::Blank => {
                above_blank = run.take();
                continue;
            }
            _ => {
                (run, above_blank) = (None, None);
                continue;
            }
        }
        if let Some(id) = block_id(line.raw) {
            let alone = line.raw.trim() == format!("^{id}");
            let start = match (&run, &above_blank) {
                // `^id` alone after a blank line still names the block above the blank.
                (None, Some(before)) if alone => before.start,
                // A list item is its own block: stop at the item the line belongs to.
                (Some(before), _) if alone => before.start,
                (Some(before), _) if !line.opens_item => before.last_item.unwrap_or(before.start),
                _ => i,
            };
            out.push(Block { id: id.to_string(), lines: start..i + 1 });
        }
        let last_item = line.opens_item.then_some(i);
        run = Some(match run {
            Some(r) => Run { start: r.start, last_item: last_item.or(r.last_item) },
            None => Run { start: i, last_item },
        });
        above_blank = None;
    }
    out
}

/// A run of consecutive plain text lines: its first line, and the last line in it that opens
/// a list item.
struct Run {
    start: usize,
    last_item: Option<usize>,
}

/// What a target resolved to: a heading's section, or a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor<'a> {
    /// A heading, as [`resolve`] found it.
    Heading(&'a Heading),
    /// A block reference, as [`blocks`] found it.
    Block(&'a Block),
}

impl Anchor<'_> {
    /// The paste-able target that reaches exactly this anchor (`A::B`, or `^id`).
    pub(crate) fn display(&self) -> String {
        match self {
            Anchor::Heading(h) => display_path(h),
            Anchor::Block(b) => format!("^{}", b.id),
        }
    }
}

/// The block target of `target`, when it is one: `^id`, or a heading path ending in `::^id`
/// (the heading part only narrows what a person reads; ids are unique in a note).
pub(crate) fn block_target(target: &str) -> Option<&str> {
    let last = target.rsplit("::").next()?.trim();
    last.strip_prefix('^').filter(|id| !id.is_empty())
}

/// The one resolver every edit and read of a part of a note goes through: a `^id` target
/// names a block, anything else a heading ([`resolve`]).
pub(crate) fn locate<'a>(
    all: &'a [Heading],
    blocks: &'a [Block],
    target: &str,
    note: &str,
) -> crate::Result<Anchor<'a>> {
    let Some(id) = block_target(target) else {
        return resolve(all, target, note).map(Anchor::Heading);
    };
    let found: Vec<&Block> = blocks.iter().filter(|b| b.id == id).collect();
    match found.as_slice() {
        [only] => Ok(Anchor::Block(only)),
        [] => {
            let ids: Vec<String> = blocks.iter().map(|b| format!("^{}", b.id)).collect();
            Err(Error::new(
                ErrorCode::NoSuchHeading,
                format!(
                    "no block `^{id}` in `{note}`; retry with one of its block ids:\n{}",
                    path_list(ids.into_iter())
                ),
            ))
        }
        several => Err(Error::new(
            ErrorCode::AmbiguousHeading,
            format!(
                "block id `^{id}` appears {} times in `{note}`; make the ids unique (edit the \
                 note), then retry",
                several.len()
            ),
        )),
    }
}

/// 0-based half-open line range an anchor addresses for a scope. A block has no marker line
/// of its own (its id rides on its last line), so every scope addresses the whole block.
pub(crate) fn anchor_lines(
    lines_len: usize,
    all: &[Heading],
    anchor: Anchor<'_>,
    scope: Scope,
) -> Range<usize> {
    match anchor {
        Anchor::Heading(h) => section_lines(lines_len, all, h, scope),
        Anchor::Block(b) => b.lines.clone(),
    }
}

/// 0-based half-open line range of a heading's section for a scope.
pub(crate) fn section_lines(
    lines_len: usize,
    all: &[Heading],
    h: &Heading,
    scope: Scope,
) -> Range<usize> {
    let start = h.line - 1;
    // Deeper headings belong to the section; the next heading at the same or a shallower
    // depth ends it.
    let end = all
        .iter()
        .find(|other| other.line > h.line && other.depth <= h.depth)
        .map_or(lines_len, |other| other.line - 1);
    match scope {
        Scope::Content => start + 1..end,
        Scope::Marker => start..start + 1,
        Scope::MarkerAndContent => start..end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn paths(text: &str) -> Vec<String> {
        headings(text).iter().map(display_path).collect()
    }

    fn resolved(text: &str, target: &str) -> crate::Result<String> {
        let all = headings(text);
        resolve(&all, target, "n.md").map(display_path)
    }

    #[test]
    fn parses_atx_headings_with_paths_and_lines() {
        let text = "# Top\n\n## A ##\nx\n### Deep\n## B\n   #### Indented ####\n# Next\n";
        let all = headings(text);
        let got: Vec<(u8, &str, usize, String)> =
            all.iter().map(|h| (h.depth, h.text.as_str(), h.line, display_path(h))).collect();
        assert_eq!(
            got,
            [
                (1, "Top", 1, "Top".to_string()),
                (2, "A", 3, "Top::A".to_string()),
                (3, "Deep", 5, "Top::A::Deep".to_string()),
                (2, "B", 6, "Top::B".to_string()),
                (4, "Indented", 7, "Top::B::Indented".to_string()),
                (1, "Next", 8, "Next".to_string()),
            ]
        );
    }

    #[test]
    fn rejects_lines_that_only_look_like_headings() {
        let text =
            "#tag\ntext ### Not a heading\n    # four spaces\n####### seven\n# C#\n#\n## ##\n";
        let all = headings(text);
        let got: Vec<(&str, usize)> = all.iter().map(|h| (h.text.as_str(), h.line)).collect();
        assert_eq!(got, [("C#", 5), ("", 6), ("", 7)]);
    }

    #[test]
    fn skips_fences_and_frontmatter_but_counts_their_lines() {
        let text = "---\ntitle: x\n# yaml comment\n---\n# Real\n```sh\n# not\n```\n~~~~\n## not\n\
                    ~~~\n```\n~~~~\n## After\n````\n```\n# still code\n";
        let all = headings(text);
        let got: Vec<(&str, usize)> = all.iter().map(|h| (h.text.as_str(), h.line)).collect();
        assert_eq!(got, [("Real", 5), ("After", 14)]);
    }

    #[test]
    fn code_of_every_kind_and_quotes_hide_heading_lines() {
        // A fence on a list item's marker line, one inside a quote, indented code, a quoted
        // heading: only the last line is part of the note's outline.
        let text = "- ```\n  # in an item's fence\n  ```\n> ```\n> # quoted code\n> ```\n\n\
                    \x20   # indented\n> # quoted heading\n# Real\n";
        let all = headings(text);
        let got: Vec<(&str, usize)> = all.iter().map(|h| (h.text.as_str(), h.line)).collect();
        assert_eq!(got, [("Real", 10)]);
    }

    #[test]
    fn a_fence_four_columns_in_opens_nothing() {
        // Paragraph text, then lines that merely look indented: the heading is real.
        assert_eq!(paths("Para\n    ```\n# Shown\n    ```\n"), ["Shown"]);
    }

    #[test]
    fn bom_does_not_hide_the_first_heading() {
        assert_eq!(paths("\u{feff}# Title\n## Sub\n"), ["Title", "Title::Sub"]);
    }

    #[test]
    fn normalises_for_matching_only() {
        assert_eq!(normalize("A — B"), normalize("a - b"));
        assert_eq!(normalize("A — B"), "a - b");
        assert_eq!(normalize("`code` here"), "code here");
        assert_eq!(normalize("**Bold** and _it_ __x__"), "bold and it x");
        assert_eq!(normalize("See [the docs](https://x.y/a_b) now"), "see the docs now");
        assert_eq!(normalize("[[Target|Alias]] and [[Other]]"), "alias and other");
        assert_eq!(normalize("  Lots   of\tSPACE  "), "lots of space");
        assert_eq!(normalize("## H ##"), "h");
        assert_eq!(normalize("C#"), "c#");
        assert_eq!(normalize("Stra\u{df}e"), normalize("STRASSE"));
        assert_eq!(normalize("soft\u{ad}hyphen \u{2212}1 \u{ff0d}"), "softhyphen -1 -");
        assert_eq!(normalize("\u{ff21}\u{ff22}"), "ab");
        assert_eq!(normalize("[not a link] [x]"), "[not a link] [x]");
    }

    #[test]
    fn normalised_targets_reach_headings_with_markup() {
        let text = "# Guide\n## Setup — **Linux**\n## The `C#` [API](http://a)\n";
        assert_eq!(resolved(text, "setup - linux").unwrap(), "Guide::Setup — **Linux**");
        assert_eq!(
            resolved(text, "## guide ## :: the c# api").unwrap(),
            "Guide::The `C#` [API](http://a)"
        );
        let all = headings(text);
        assert_eq!(all[1].text, "Setup — **Linux**");
    }

    #[test]
    fn ambiguity_lists_the_colliding_paths_and_full_paths_narrow() {
        let text = "# Recipe\n## Mince\n### Method\n## Mash\n### Method\n";
        let err = resolved(text, "Method").unwrap_err();
        assert_eq!(err.code(), ErrorCode::AmbiguousHeading);
        assert_eq!(
            err.message(),
            "heading target `Method` is ambiguous in `n.md`: 2 headings match:\n    \
             Recipe::Mince::Method  (line 3; target `Recipe::Mince::Method@3`)\n    \
             Recipe::Mash::Method  (line 5; target `Recipe::Mash::Method@5`)\n\
             Retry with one of the targets above."
        );
        assert_eq!(resolved(text, "Mince::Method").unwrap(), "Recipe::Mince::Method");
        assert_eq!(resolved(text, " Recipe :: Mash :: Method ").unwrap(), "Recipe::Mash::Method");
    }

    #[test]
    fn a_whole_path_match_wins_in_an_unwrapped_note() {
        let text = "## Integrations\n### Notes\n## Notes\n";
        let all = headings(text);
        assert_eq!(resolve(&all, "Notes", "n.md").unwrap().line, 3);
        assert_eq!(resolved(text, "Integrations::Notes").unwrap(), "Integrations::Notes");
    }

    #[test]
    fn identical_full_paths_are_always_ambiguous() {
        let text = "# R\n## Step\n## Step\n";
        for target in ["Step", "R::Step"] {
            let err = resolved(text, target).unwrap_err();
            assert_eq!(err.code(), ErrorCode::AmbiguousHeading);
            assert!(err.message().contains(
                "2 headings match:\n    R::Step  (line 2; target `R::Step@2`)\n    \
                 R::Step  (line 3; target `R::Step@3`)\n"
            ));
            assert!(err.message().contains("identical paths"));
            assert!(err.message().ends_with("Retry with one of the targets above."));
        }
        // The offered targets work, in either separator.
        let all = headings(text);
        assert_eq!(resolve(&all, "R::Step@3", "n.md").unwrap().line, 3);
        assert_eq!(resolve(&all, "R > Step@2", "n.md").unwrap().line, 2);
        assert_eq!(resolve(&all, "Step@3", "n.md").unwrap().line, 3);
        let err = resolve(&all, "Step@1", "n.md").unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
        assert!(err.message().contains("R::Step  (line 2; target `R::Step@2`)"), "{err}");
        // A heading whose text ends in `@N` is still found by its text.
        let dated = headings("# Meeting @2024\n");
        assert_eq!(resolve(&dated, "Meeting @2024", "n.md").unwrap().line, 1);
    }

    #[test]
    fn search_breadcrumbs_with_angle_brackets_work_as_targets() {
        let all = headings("# Boiler\n## Settings\n### Pressure\n## Log\n");
        for target in
            ["Boiler > Settings > Pressure", "Settings > Pressure", "Boiler::Settings > Pressure"]
        {
            assert_eq!(resolve(&all, target, "n.md").unwrap().line, 3, "{target}");
        }
    }

    #[test]
    fn no_such_heading_lists_every_path() {
        let err = resolved("# A\n## B\n### C\n", "Z").unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
        assert_eq!(
            err.message(),
            "no heading matches `Z` in `n.md`; retry with one of its headings (full paths):\n    \
             A\n    A::B\n    A::B::C"
        );
        let err = resolved("plain\n", "Z").unwrap_err();
        assert!(err.message().ends_with(":\n    (none)"));
    }

    #[test]
    fn empty_targets_are_invalid() {
        for target in ["", " :: ", "::"] {
            let err = resolved("# A\n", target).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidRequest);
            assert!(err.message().starts_with("empty heading target"));
        }
    }

    #[test]
    fn headings_containing_the_separator_resolve_by_display_path() {
        let text = "# A\n## B::C\n## \n";
        assert_eq!(resolved(text, "A::B::C").unwrap(), "A::B::C");
        assert_eq!(resolved(text, "A").unwrap(), "A");
    }

    #[test]
    fn sections_include_deeper_headings() {
        let text = "# T\n## A\na\n### B\nb\n## C\nc\n";
        let all = headings(text);
        let a = &all[1];
        assert_eq!(section_lines(7, &all, a, Scope::Content), 2..5);
        assert_eq!(section_lines(7, &all, a, Scope::Marker), 1..2);
        assert_eq!(section_lines(7, &all, a, Scope::MarkerAndContent), 1..5);
        assert_eq!(section_lines(7, &all, &all[3], Scope::Content), 6..7);
        assert_eq!(section_lines(7, &all, &all[0], Scope::Content), 1..7);
    }

    #[test]
    fn block_ids_name_their_paragraph_item_or_table() {
        let text = "# A\n\nOne line\ntwo lines ^para\n\n- x\n- y ^item\n\n| a |\n|---|\n| 1 |\n\n^tbl\n\n```\ncode ^no\n```\n";
        let all = headings(text);
        let bl = blocks(text);
        let got: Vec<(&str, Range<usize>)> =
            bl.iter().map(|b| (b.id.as_str(), b.lines.clone())).collect();
        assert_eq!(got, [("para", 2..4), ("item", 6..7), ("tbl", 8..13)]);
        let found = locate(&all, &bl, "^item", "n.md").unwrap();
        assert_eq!(found.display(), "^item");
        assert_eq!(locate(&all, &bl, "A::^para", "n.md").unwrap().display(), "^para");
        assert_eq!(locate(&all, &bl, "A", "n.md").unwrap().display(), "A");
        let err = locate(&all, &bl, "^nope", "n.md").unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoSuchHeading);
        assert!(err.message().contains("^para"), "{err}");
    }

    #[test]
    fn scopes_parse_case_insensitively() {
        assert_eq!("MarkerAndContent".parse::<Scope>().unwrap(), Scope::MarkerAndContent);
        assert_eq!("CONTENT".parse::<Scope>().unwrap(), Scope::Content);
        let err = "body".parse::<Scope>().unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidRequest);
        assert_eq!(
            err.message(),
            "unknown scope `body`; use one of content, marker, markerAndContent"
        );
    }

    const TEXTS: &[&str] = &[
        "Notes",
        "notes",
        "**Notes**",
        "Method",
        "`Method`",
        "A — B",
        "A - B",
        "C#",
        "Setup ##",
        "Stra\u{df}e",
        "STRASSE",
    ];
    const PARAGRAPHS: &[&str] = &[
        "Some text.",
        "#tag line",
        "text ### not a heading",
        "```\n# fenced\n```",
        "~~~\n## fenced\n~~~",
        "",
    ];

    fn document() -> impl Strategy<Value = String> {
        let block = prop_oneof![
            (1..=4usize, 0..TEXTS.len()).prop_map(|(depth, t)| format!(
                "{} {}",
                "#".repeat(depth),
                TEXTS[t]
            )),
            (0..PARAGRAPHS.len()).prop_map(|p| PARAGRAPHS[p].to_string()),
        ];
        prop::collection::vec(block, 0..24).prop_map(|blocks| blocks.join("\n") + "\n")
    }

    fn normal_path(h: &Heading) -> Vec<String> {
        h.path.iter().map(|s| normalize(s)).collect()
    }

    proptest! {
        #[test]
        fn full_paths_resolve_to_themselves_unless_duplicated(text in document()) {
            let all = headings(&text);
            for h in &all {
                let twin = all.iter().any(|o| o.line != h.line && normal_path(o) == normal_path(h));
                match resolve(&all, &display_path(h), "n.md") {
                    Ok(found) => {
                        prop_assert!(!twin);
                        prop_assert_eq!(found.line, h.line);
                    }
                    Err(err) => {
                        prop_assert!(twin);
                        prop_assert_eq!(err.code(), ErrorCode::AmbiguousHeading);
                    }
                }
            }
        }

        #[test]
        fn leaves_never_resolve_to_a_different_leaf(text in document()) {
            let all = headings(&text);
            for h in &all {
                let leaf = normalize(&h.text);
                let same_leaf = all.iter().filter(|o| normalize(&o.text) == leaf).count();
                match resolve(&all, &h.text, "n.md") {
                    Ok(found) => {
                        prop_assert_eq!(normalize(&found.text), leaf);
                        prop_assert!(same_leaf == 1 || found.path.len() == 1);
                    }
                    Err(err) => {
                        prop_assert!(same_leaf > 1);
                        prop_assert_eq!(err.code(), ErrorCode::AmbiguousHeading);
                    }
                }
            }
        }
    }
}
