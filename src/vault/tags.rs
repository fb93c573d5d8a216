//! Obsidian tags, once for every surface: which `#tags` a note's text carries (outside code,
//! heading markers and URLs), its frontmatter `tags:` (or `tag:`), how tags compare (case
//! folded, as Obsidian treats `#Tag` and `#tag` as one) and nest (`#project/alpha` counts for
//! `project/alpha` and for `project`, as Obsidian's tag pane shows it), and a vault's tally.
//!
//! Pure text: the notes are handed in; the walk that reads them is the caller's.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;

use serde_json::{Map, Value};

use crate::markdown::{self, Class};

/// Whether `c` may stand in a tag: anything but whitespace, ASCII punctuation other than `_`,
/// `-` and `/`, and Unicode's general and supplemental punctuation blocks. This is Obsidian's
/// own character class, so letters of any script, digits and emoji are tag characters.
fn is_tag_char(c: char) -> bool {
    if c.is_whitespace() {
        return false;
    }
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/');
    }
    !matches!(c, '\u{2000}'..='\u{206F}' | '\u{2E00}'..='\u{2E7F}')
}

/// A tag as Obsidian reads it, without its `#`: tag characters only, at least one of them not
/// a digit (`#1984` is not a tag, `#y1984` is), and no empty level (`a//b`, `/a`).
pub(crate) fn is_tag(t: &str) -> bool {
    !t.is_empty()
        && t.chars().all(is_tag_char)
        && !t.chars().all(|c| c.is_ascii_digit())
        && t.split('/').all(|level| !level.is_empty())
}

/// The inline `#tags` of a note's text, outside frontmatter, code blocks and inline code spans,
/// in order of first appearance, without the `#`. A `#` starts a tag only at the start of a
/// line or after whitespace, so a URL's fragment (`/page#part`), a link's heading
/// (`[[Note#Part]]`), an escaped `\#` and an HTML entity (`&#35;`) are not tags.
pub(crate) fn inline_tags(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Seen tags are looked up, not searched for: a note of 200,000 distinct tags would cost
    // their number squared.
    let mut seen: HashSet<&str> = HashSet::new();
    for at in inline_spans(text) {
        let tag = &text[at];
        if seen.insert(tag) {
            out.push(tag.to_string());
        }
    }
    out
}

/// Where each inline `#tag` of a note's text is, as the byte range of the tag without its `#`
/// (every occurrence, in order). The one scanner behind [`inline_tags`] and a tag's rename
/// (`vault/tag_rename.rs`), so finding a tag and renaming it cannot disagree. Besides what
/// [`inline_tags`] says, a `#` inside an Obsidian `%%comment%%` (which may span lines) or
/// inside a wikilink's brackets (`[[Note #x]]`) starts no tag.
pub(crate) fn inline_spans(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut in_comment = false;
    for line in markdown::lines(text) {
        // A heading's own markers are not tags.
        let body = match line.class {
            Class::Heading { text, .. } => text,
            Class::Text => line.raw,
            _ => continue,
        };
        // `body` is a slice of the line: its place in the text.
        let base = line.start + (body.as_ptr() as usize - line.raw.as_ptr() as usize);
        let spans = markdown::code_spans(body);
        // The spans are in order and so are the `#`s: one walk over both keeps a line of
        // many spans and many `#`s linear.
        let mut span = spans.iter().peekable();
        let bytes = body.as_bytes();
        let mut prev = ' ';
        let mut in_link = false;
        let mut skip = 0;
        for (at, c) in body.char_indices() {
            let was = std::mem::replace(&mut prev, c);
            if at < skip {
                continue;
            }
            while span.next_if(|s| s.end <= at).is_some() {}
            if span.peek().is_some_and(|s| s.contains(&at)) {
                continue;
            }
            let pair = |b: u8| c as u32 == u32::from(b) && bytes.get(at + 1) == Some(&b);
            if pair(b'%') {
                in_comment = !in_comment;
                skip = at + 2;
                continue;
            }
            if !in_comment && pair(b'[') {
                in_link = true;
            } else if pair(b']') {
                in_link = false;
            }
            if c != '#' || !was.is_whitespace() || in_comment || in_link {
                continue;
            }
            let rest = &body[at + 1..];
            let end = rest.find(|c: char| !is_tag_char(c)).unwrap_or(rest.len());
            let tag = rest[..end].trim_end_matches('/');
            if is_tag(tag) {
                let start = base + at + 1;
                out.push(start..start + tag.len());
            }
        }
    }
    out
}

/// The frontmatter `tags` (or `tag`): a list, or one string of tags split at commas and
/// spaces; `#` optional.
fn frontmatter_tags(fm: &Map<String, Value>) -> Vec<&str> {
    match fm.get("tags").or_else(|| fm.get("tag")) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(s)) => s.split([',', ' ']).collect(),
        _ => Vec::new(),
    }
}

/// A note's tags: the frontmatter ones, then the inline ones, each once as written.
pub(crate) fn note_tags(fm: &Map<String, Value>, text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut add = |t: &str| {
        let t = t.trim().trim_start_matches('#');
        if is_tag(t) && seen.insert(t.to_string()) {
            out.push(t.to_string());
        }
    };
    frontmatter_tags(fm).into_iter().for_each(&mut add);
    for t in inline_tags(text) {
        add(&t);
    }
    out
}

/// What two spellings of one tag share: Obsidian compares tags without case.
fn key(tag: &str) -> String {
    tag.to_lowercase()
}

/// How many of a tag's parents count for it: a hostile tag of a million levels would otherwise
/// count for a million parents, each as long as itself.
pub(crate) const MAX_PARENTS: usize = 32;

/// A tag and the tags it nests under, outermost first: `a/b/c` gives `a`, `a/b`, `a/b/c`. Only
/// the outermost [`MAX_PARENTS`] parents are given.
pub(crate) fn lineage(tag: &str) -> impl Iterator<Item = &str> {
    let parents = tag.match_indices('/').take(MAX_PARENTS).map(|(i, _)| &tag[..i]);
    parents.chain(std::iter::once(tag))
}

/// Whether `tag` is `wanted` or nests under it, without case: `project` takes `Project` and
/// `project/alpha`, not `projects`.
pub(crate) fn falls_under(tag: &str, wanted: &str) -> bool {
    let (tag, wanted) = (key(tag), key(wanted));
    tag == wanted || tag.strip_prefix(&wanted).is_some_and(|rest| rest.starts_with('/'))
}

/// A tag's reading as a caller asks for it: `#` optional, the rules of [`is_tag`].
pub(crate) fn asked(raw: &str) -> Option<&str> {
    let t = raw.trim().trim_start_matches('#').trim_end_matches('/');
    is_tag(t).then_some(t)
}

/// One tag of a vault and how many notes carry it or a tag nested under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagCount {
    /// As first written (in path order): Obsidian's tag pane shows the first casing.
    pub(crate) name: String,
    /// Notes carrying the tag itself or one nested under it, each note once.
    pub(crate) count: usize,
}

impl TagCount {
    /// How deep the tag nests: 0 for `project`, 1 for `project/alpha`.
    pub(crate) fn depth(&self) -> usize {
        self.name.matches('/').count()
    }

    /// The last level of the name: `alpha` for `project/alpha`.
    pub(crate) fn leaf(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }
}

/// Every tag of the notes (each note's tags as [`note_tags`] reads them) with its count, parents
/// included, in tree order: each tag right before the tags nested under it, siblings by name
/// without case.
pub(crate) fn tally(per_note: impl IntoIterator<Item = Vec<String>>) -> Vec<TagCount> {
    // Keyed by the case-folded levels, so a parent sorts right before its children (`a/b` is
    // not separated from `a` by `a-b`, as plain string order would do).
    let mut counts: BTreeMap<Vec<String>, TagCount> = BTreeMap::new();
    for tags in per_note {
        let mut counted: HashSet<String> = HashSet::new();
        for tag in &tags {
            for name in lineage(tag) {
                if !counted.insert(key(name)) {
                    continue;
                }
                let levels = key(name).split('/').map(str::to_string).collect();
                counts
                    .entry(levels)
                    .or_insert_with(|| TagCount { name: name.to_string(), count: 0 })
                    .count += 1;
            }
        }
    }
    counts.into_values().collect()
}

/// A vault's tags and, when one tag is asked for, the notes under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagReport {
    /// The tag asked for, if one was.
    pub(crate) tag: Option<String>,
    /// Every tag in tree order (see [`tally`]); with a tag asked for, it and the tags nested
    /// under it.
    pub(crate) tags: Vec<TagCount>,
    /// With a tag asked for: the notes carrying it or a tag nested under it, in path order,
    /// each with those of its tags. Empty otherwise.
    pub(crate) notes: Vec<(String, Vec<String>)>,
    /// How many notes were read.
    pub(crate) notes_scanned: usize,
}

/// The report over these notes (path and text): all tags, or with `wanted` the notes under it.
pub(crate) fn report(notes: &[(String, String)], wanted: Option<&str>) -> TagReport {
    let per_note: Vec<(&String, Vec<String>)> = notes
        .iter()
        .map(|(path, text)| (path, note_tags(&crate::vault::frontmatter::parse(text), text)))
        .collect();
    let mut tags = tally(per_note.iter().map(|(_, t)| t.clone()));
    let mut tagged = Vec::new();
    if let Some(wanted) = wanted {
        tags.retain(|t| falls_under(&t.name, wanted));
        for (path, carried) in per_note {
            let hits: Vec<String> =
                carried.into_iter().filter(|t| falls_under(t, wanted)).collect();
            if !hits.is_empty() {
                tagged.push((path.clone(), hits));
            }
        }
    }
    TagReport { tag: wanted.map(str::to_string), tags, notes: tagged, notes_scanned: notes.len() }
}

impl TagReport {
    /// The report as text: the tag tree indented by level with counts, then, for a tag asked
    /// for, the notes with their tags under it. The terminal and MCP both show this.
    pub(crate) fn render(&self) -> String {
        let scanned = self.notes_scanned;
        let mut out = match &self.tag {
            None if self.tags.is_empty() => return format!("No tags in {scanned} note(s).\n"),
            Some(tag) if self.notes.is_empty() => {
                return format!("No note of {scanned} carries #{tag} or a tag nested under it.\n");
            }
            None => {
                let top = self.tags.iter().filter(|t| t.depth() == 0).count();
                format!(
                    "# {} tag(s), {top} at the top level, in {scanned} note(s)\n\n",
                    self.tags.len()
                )
            }
            Some(tag) => format!("# {} note(s) tagged #{tag}\n\n", self.notes.len()),
        };
        // Indented from the shallowest tag shown, so a subtree starts at the margin.
        let base = self.tags.iter().map(TagCount::depth).min().unwrap_or(0);
        for t in &self.tags {
            let indent = "  ".repeat(t.depth() - base);
            let name = if t.depth() == base { t.name.as_str() } else { t.leaf() };
            out.push_str(&format!("{indent}- #{name} ({})\n", t.count));
        }
        if !self.notes.is_empty() {
            out.push_str("\n## Notes\n\n");
        }
        for (path, tags) in &self.notes {
            let tags: Vec<String> = tags.iter().map(|t| format!("#{t}")).collect();
            out.push_str(&format!("- {path} ({})\n", tags.join(", ")));
        }
        out
    }
}

/// The tally most used first, ties by name: the Local REST API's `/tags/` order.
pub(crate) fn by_count(tags: &[TagCount]) -> Vec<&TagCount> {
    let mut list: Vec<&TagCount> = tags.iter().collect();
    list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn inline_tags_follow_obsidians_rules_line_by_line() {
        // (a line of a note, the tags Obsidian reads in it)
        let table: &[(&str, &[&str])] = &[
            ("#meeting", &["meeting"]),
            ("Text #one and #two/sub.", &["one", "two/sub"]),
            ("#1984 is not a tag, #y1984 is", &["y1984"]),
            (
                "#camelCase #PascalCase #snake_case #kebab-case",
                &["camelCase", "PascalCase", "snake_case", "kebab-case"],
            ),
            ("#inbox/to-read, #inbox/processing.", &["inbox/to-read", "inbox/processing"]),
            ("#tag and #TAG", &["tag", "TAG"]),
            ("# Title #top", &["top"]),
            ("## Heading only", &[]),
            ("#heading-less-tag-line", &["heading-less-tag-line"]),
            ("not a#b, nor \\#escaped, nor &#35;", &[]),
            ("see https://example.com/page#part and [[Note#Part]] or [x](#anchor)", &[]),
            ("`#code` and ``x #code2 y`` but #after", &["after"]),
            ("emoji #🚀launch and #café and #日本語", &["🚀launch", "café", "日本語"]),
            ("#trailing/ #a//b #/lead", &["trailing"]),
            ("punctuation ends it: #done! #why? (#paren) #x:y", &["done", "why", "x"]),
            ("> #quoted in a quote", &["quoted"]),
            ("- [ ] task #todo", &["todo"]),
            ("#x—dash", &["x"]),
        ];
        for (line, want) in table {
            assert_eq!(inline_tags(line), *want, "in {line:?}");
        }
    }

    #[test]
    fn a_line_of_many_code_spans_and_hashes_is_read_in_one_walk() {
        let line = "`#c` #t ".repeat(20_000);
        assert_eq!(inline_tags(&line), ["t"]);
    }

    #[test]
    fn code_blocks_and_frontmatter_hold_no_inline_tags() {
        let text = "---\ntags: [a]\n---\n#real\n\n```\n#fenced\n```\n\n    #indented\n\n~~~\n#tilde\n~~~\n#real #again\n";
        assert_eq!(inline_tags(text), ["real", "again"]);
    }

    #[test]
    fn frontmatter_tags_are_a_list_or_a_string_with_or_without_hashes() {
        let table: &[(&str, &[&str])] = &[
            (r##"{"tags": ["recipe", "#cooking"]}"##, &["recipe", "cooking"]),
            (r##"{"tags": "a, #b c"}"##, &["a", "b", "c"]),
            (r##"{"tag": "single"}"##, &["single"]),
            (r##"{"tags": ["nested/one", "two words", "1984", 7]}"##, &["nested/one"]),
            (r##"{"tags": null}"##, &[]),
            (r##"{"title": "no tags"}"##, &[]),
        ];
        for (json, want) in table {
            assert_eq!(note_tags(&fm(json), ""), *want, "in {json}");
        }
    }

    #[test]
    fn note_tags_take_the_frontmatter_first_then_the_inline_ones_once() {
        assert_eq!(note_tags(&fm(r##"{"tags": ["a", "#b"]}"##), "x #c #a\n"), ["a", "b", "c"]);
    }

    #[test]
    fn a_nested_tag_falls_under_each_of_its_parents_without_case() {
        assert_eq!(lineage("a/b/c").collect::<Vec<_>>(), ["a", "a/b", "a/b/c"]);
        assert_eq!(lineage("a").collect::<Vec<_>>(), ["a"]);
        let deep = vec!["x"; 1000].join("/");
        assert_eq!(lineage(&deep).count(), MAX_PARENTS + 1);
        assert_eq!(lineage(&deep).last(), Some(deep.as_str()));
        assert!(falls_under("project/alpha", "project"));
        assert!(falls_under("Project", "project"));
        assert!(falls_under("project/alpha/x", "PROJECT/alpha"));
        assert!(!falls_under("projects", "project"));
        assert!(!falls_under("project", "project/alpha"));
    }

    #[test]
    fn a_tag_asked_for_may_carry_its_hash_and_must_be_a_tag() {
        assert_eq!(asked("#project/"), Some("project"));
        assert_eq!(asked(" inbox/to-read "), Some("inbox/to-read"));
        assert_eq!(asked("1984"), None);
        assert_eq!(asked("two words"), None);
        assert_eq!(asked(""), None);
    }

    #[test]
    fn the_tally_counts_each_note_once_per_tag_and_parent_in_tree_order() {
        let notes = vec![
            vec!["project/alpha".to_string(), "project/beta".to_string()],
            vec!["Project".to_string(), "project-x".to_string()],
            vec!["PROJECT/ALPHA/deep".to_string()],
        ];
        let got: Vec<(String, usize)> =
            tally(notes).into_iter().map(|t| (t.name, t.count)).collect();
        let want = [
            ("project", 3),
            ("project/alpha", 2),
            ("PROJECT/ALPHA/deep", 1),
            ("project/beta", 1),
            ("project-x", 1),
        ];
        assert_eq!(got, want.map(|(n, c)| (n.to_string(), c)));
    }

    #[test]
    fn a_report_lists_the_tree_or_the_notes_under_a_tag() {
        let notes = vec![
            ("a.md".to_string(), "---\ntags: [project/alpha]\n---\nText\n".to_string()),
            ("b.md".to_string(), "About #project and #other\n".to_string()),
            ("c.md".to_string(), "Just #projects\n".to_string()),
        ];
        let all = report(&notes, None);
        assert_eq!(
            all.render(),
            "# 4 tag(s), 3 at the top level, in 3 note(s)\n\n- #other (1)\n- #project (2)\n  \
             - #alpha (1)\n- #projects (1)\n"
        );
        let tagged = report(&notes, Some("Project"));
        assert_eq!(
            tagged.notes,
            [
                ("a.md".to_string(), vec!["project/alpha".to_string()]),
                ("b.md".into(), vec!["project".into()])
            ]
        );
        assert_eq!(
            tagged.render(),
            "# 2 note(s) tagged #Project\n\n- #project (2)\n  - #alpha (1)\n\n## Notes\n\n\
             - a.md (#project/alpha)\n- b.md (#project)\n"
        );
        let sub = report(&notes, Some("project/alpha")).render();
        assert!(sub.contains("\n- #project/alpha (1)\n"), "{sub}");
        assert!(report(&notes, Some("none")).render().starts_with("No note of 3 carries #none"));
    }

    #[test]
    fn by_count_puts_the_most_used_first_then_names() {
        let tags = tally(vec![vec!["b".into()], vec!["b".into(), "a".into()], vec!["c".into()]]);
        let names: Vec<&str> = by_count(&tags).iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["b", "a", "c"]);
    }
}
