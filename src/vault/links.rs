//! Links between vault files: finding them in a note, resolving them as Obsidian does, and
//! repointing them after a move in the author's own style. Pure text functions over a [`PathSet`]:
//! no disk access. Not recognised: reference-style links, HTML links.
//!
//! Resolving a target written in note `N`: (1) an empty target is `N`; (2) no extension gets `.md`,
//! a `.md` one is used as is, another extension is tried as is, then with `.md`; (3) relative to
//! `N`'s folder, then from the root (a leading `/` means root only, `./` or `../` relative only),
//! exact before case-insensitive, and `..` out of the vault names nothing; (4) a target without
//! `/` then matches by file name: `N`'s folder first, else the shortest path, ties lexical;
//! (5) one with `/` then matches the shortest path ending in `/<target>`; (6) a wikilink that
//! names no file is looked up among the notes' `aliases` (`vault::aliases`, carried by the
//! [`PathSet`]), ignoring case, `N`'s folder first, else the shortest path. Obsidian writes
//! `[[Note|Alias]]` when an alias is picked; a hand-written `[[Alias]]` resolves here too.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use unicode_normalization::UnicodeNormalization;

use super::aliases::Aliases;
use crate::markdown;

/// Which syntax a link uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// `[[target#fragment|alias]]`.
    Wiki,
    /// `[text](target#fragment)`.
    Markdown,
}

/// One link found in a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The syntax used.
    pub kind: LinkKind,
    /// True for `![[...]]` and `![...](...)`.
    pub(crate) embed: bool,
    /// The link path as written (decoded for markdown links), without fragment or alias.
    pub target: String,
    /// The text after the first `#`, without the `#`.
    pub(crate) fragment: Option<String>,
    /// The wikilink alias (after `|` or a table's `\|`).
    pub(crate) alias: Option<String>,
    /// Byte range of the whole link, `!` included.
    pub(crate) span: Range<usize>,
    /// 1-based line of the link's first byte.
    pub(crate) line: usize,
}

impl Link {
    /// True for a markdown link to a URL (`scheme:...` or `//host`), which never names a vault file.
    pub fn is_external(&self) -> bool {
        self.kind == LinkKind::Markdown && is_external(&self.target)
    }
}

/// Every link in the text (frontmatter included), in order, skipping the lines the line model
/// calls code (fenced blocks, also inside `>` quotes and list items, and indented blocks) and
/// inline code spans (matched within one line). Includes external URLs.
pub fn links(text: &str) -> Vec<Link> {
    scan(text).into_iter().map(|found| found.link).collect()
}

/// The vault's files (notes and documents), as '/'-separated vault-relative paths, and the
/// aliases of its notes.
#[derive(Debug, Clone, Default)]
pub struct PathSet {
    exact: HashSet<String>,
    /// Folded path -> paths, shortest first.
    folded: HashMap<String, Vec<String>>,
    /// Folded file name -> paths, shortest first.
    by_name: HashMap<String, Vec<String>>,
    /// (path, folded path), shortest first, ties in lexical order.
    ordered: Vec<(String, String)>,
    /// The notes' aliases (empty unless given by [`PathSet::with_aliases`]).
    aliases: Aliases,
}

impl PathSet {
    /// Indexes the given vault-relative paths (duplicates are ignored).
    pub fn new<I: IntoIterator<Item = String>>(paths: I) -> PathSet {
        let mut list: Vec<String> = paths.into_iter().collect();
        list.sort_by(|a, b| shortest_first(a, b));
        list.dedup();
        let mut set = PathSet::default();
        for path in list {
            let folded = fold(&path);
            set.folded.entry(folded.clone()).or_default().push(path.clone());
            set.by_name.entry(fold(file_name(&path))).or_default().push(path.clone());
            set.exact.insert(path.clone());
            set.ordered.push((path, folded));
        }
        set
    }

    /// The same paths, with the notes' aliases to resolve by (`vault::aliases::path_set`
    /// builds a whole vault's).
    pub(crate) fn with_aliases(mut self, aliases: Aliases) -> PathSet {
        self.aliases = aliases;
        self
    }

    /// The vault after file `from` moved to `to`: its aliases go with it.
    pub(crate) fn moved(&self, from: &str, to: &str) -> PathSet {
        let paths = self.iter().filter(|p| *p != from).map(str::to_string);
        PathSet::new(paths.chain(std::iter::once(to.to_string())))
            .with_aliases(self.aliases.moved(from, to))
    }

    /// The notes' aliases.
    pub(crate) fn aliases(&self) -> &Aliases {
        &self.aliases
    }

    /// Every path, shortest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.ordered.iter().map(|(path, _)| path.as_str())
    }

    fn lookup(&self, path: &str, exact: bool) -> Option<&str> {
        if exact {
            self.exact.get(path).map(String::as_str)
        } else {
            self.folded.get(&fold(path)).and_then(|v| v.first()).map(String::as_str)
        }
    }

    fn named(&self, name: &str, exact: bool) -> Vec<&str> {
        self.by_name
            .get(&fold(name))
            .into_iter()
            .flatten()
            .filter(|p| !exact || file_name(p) == name)
            .map(String::as_str)
            .collect()
    }

    fn with_suffix(&self, suffix: &str, exact: bool) -> impl Iterator<Item = &str> {
        let whole = if exact { suffix.to_string() } else { fold(suffix) };
        let tail = format!("/{whole}");
        self.ordered
            .iter()
            .filter(move |(path, folded)| {
                let p = if exact { path } else { folded };
                *p == whole || p.ends_with(&tail)
            })
            .map(|(path, _)| path.as_str())
    }
}

/// Resolves a link target (a [`Link::target`], already decoded) written in `from_note`, as
/// Obsidian would; `None` when it names nothing in `paths` or is an external URL.
pub fn resolve(target: &str, kind: LinkKind, from_note: &str, paths: &PathSet) -> Option<String> {
    resolve_detail(target, kind, from_note, paths).map(|r| r.path)
}

/// Whether `target` reaches its file through a note's `aliases` rather than a path or a file
/// name.
pub(crate) fn by_an_alias(target: &str, kind: LinkKind, from_note: &str, paths: &PathSet) -> bool {
    resolve_detail(target, kind, from_note, paths).is_some_and(|r| r.via == Via::Alias)
}

/// When `target` resolves only by file name (or by a path suffix) and several files fit, every
/// file that fits, the one chosen first. `None` when the link is unambiguous or names nothing.
/// A by-name match in the note's own folder is not ambiguous: it always wins.
pub(crate) fn alternatives(
    target: &str,
    kind: LinkKind,
    from_note: &str,
    paths: &PathSet,
) -> Option<Vec<String>> {
    let res = resolve_detail(target, kind, from_note, paths)?;
    let fits: Vec<&str> = match res.via {
        Via::Name if folder(&res.path) != folder(from_note) => {
            paths.named(file_name(&res.path), false)
        }
        Via::Alias => {
            // Unlike file names, two notes of one folder can share an alias: the note's own
            // folder settles it only when it holds just one of them.
            let holders = alias_holders(target, paths);
            let here = holders.iter().filter(|p| folder(p) == folder(from_note)).count();
            if here == 1 {
                return None;
            }
            holders.iter().map(String::as_str).collect()
        }
        Via::Suffix => {
            let written = target.trim().trim_matches('/').split('/').count();
            let parts: Vec<&str> = res.path.split('/').collect();
            let suffix = parts[parts.len().saturating_sub(written)..].join("/");
            paths.with_suffix(&suffix, false).collect()
        }
        _ => return None,
    };
    if fits.len() < 2 {
        return None;
    }
    let mut out = vec![res.path.clone()];
    out.extend(fits.into_iter().filter(|p| *p != res.path).map(str::to_string));
    Some(out)
}

/// Rewrites the links in `text` (the note at `note_path`) that resolve to `from` under `before`
/// so they resolve to `to` under `after`, keeping the author's style. Returns (text, links changed).
/// A link that still reaches `to` as written is left alone. For the moved note's own text use
/// [`rewrite_outbound`] instead.
pub(crate) fn rewrite_inbound(
    text: &str,
    note_path: &str,
    from: &str,
    to: &str,
    before: &PathSet,
    after: &PathSet,
) -> (String, usize) {
    if from == to {
        return (text.to_string(), 0);
    }
    let edits = plan(text, |link| {
        let res = resolve_detail(&link.target, link.kind, note_path, before)?;
        (res.path == from).then(|| (res, to.to_string()))
    });
    apply(text, note_path, &edits, after)
}

/// For the moved note itself (its text, moved from `from` to `to`): rewrites every link that would
/// no longer reach its target from the new place (relative links, self-links, by-name links whose
/// same-folder preference changed). Returns (text, links changed).
pub(crate) fn rewrite_outbound(
    text: &str,
    from: &str,
    to: &str,
    before: &PathSet,
    after: &PathSet,
) -> (String, usize) {
    if from == to {
        return (text.to_string(), 0);
    }
    let edits = plan(text, |link| {
        let res = resolve_detail(&link.target, link.kind, from, before)?;
        let dest = if res.path == from { to.to_string() } else { res.path.clone() };
        Some((res, dest))
    });
    apply(text, to, &edits, after)
}

// ---------------------------------------------------------------------------------------------
// Scanning

/// A link plus what rewriting needs to know about how it was written.
struct Found {
    link: Link,
    /// Bytes of the target as written: inside any `<>`, before any `#`, trimmed.
    raw: Range<usize>,
    angle: bool,
}

fn scan(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    // Frontmatter lines are scanned too: a `related: "[[Note]]"` value is a link to keep.
    for line in markdown::lines(text).filter(|line| !line.class.is_code()) {
        // Every link opens with `[`; most lines have none and need no index.
        if !line.raw.contains('[') {
            continue;
        }
        let index = LineIndex::new(text, line.start..line.end);
        scan_range(text, line.start..line.end, &index, line.number + 1, &mut out);
    }
    out.sort_by_key(|found| found.link.span.start);
    out
}

/// What scanning one line needs, found in one pass over it, so that no link on the line costs
/// a walk to the line's end: a line of 400 KB of `[[a|` (or of unmatched brackets, backticks or
/// parentheses) is scanned in linear time, not in its length squared.
struct LineIndex {
    start: usize,
    /// Inline code spans, in order.
    code: Vec<Range<usize>>,
    /// Per byte of the line: the matching `]` of a `[` (code skipped, escapes honoured), or
    /// [`UNMATCHED`], or [`NOT_VISITED`] for a byte the walk never stood on (escaped or in code).
    bracket: Vec<u32>,
    /// The same for `(` and `)`, code not skipped (a destination may hold backticks).
    paren: Vec<u32>,
    /// Where `]]` starts, in order.
    double_close: Vec<usize>,
    /// Where a `[` is, in order.
    opens: Vec<usize>,
}

const UNMATCHED: u32 = u32::MAX;
const NOT_VISITED: u32 = u32::MAX - 1;

impl LineIndex {
    fn new(text: &str, range: Range<usize>) -> LineIndex {
        let bytes = text.as_bytes();
        let code = markdown::code_spans(&text[range.clone()])
            .into_iter()
            .map(|span| range.start + span.start..range.start + span.end)
            .collect::<Vec<_>>();
        let len = range.end - range.start;
        let matches = |skip_code: bool, open: u8, close: u8| {
            let mut table = vec![NOT_VISITED; len];
            let mut stack: Vec<usize> = Vec::new();
            let mut spans = code.iter().peekable();
            let mut i = range.start;
            while i < range.end {
                if skip_code {
                    while spans.peek().is_some_and(|s| s.end <= i) {
                        spans.next();
                    }
                    if let Some(s) = spans.peek()
                        && s.start == i
                    {
                        i = s.end;
                        continue;
                    }
                }
                table[i - range.start] = UNMATCHED;
                match bytes[i] {
                    b'\\' => i += 1,
                    b if b == open => stack.push(i),
                    b if b == close => {
                        if let Some(o) = stack.pop() {
                            table[o - range.start] = (i - range.start) as u32;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            table
        };
        let bracket = matches(true, b'[', b']');
        let paren = matches(false, b'(', b')');
        let line = &text[range.clone()];
        let double_close = line.match_indices("]]").map(|(at, _)| range.start + at).collect();
        let opens = line.match_indices('[').map(|(at, _)| range.start + at).collect();
        LineIndex { start: range.start, code, bracket, paren, double_close, opens }
    }

    /// The end of the code span starting at `i`, if one does.
    fn code_at(&self, i: usize) -> Option<usize> {
        let k = self.code.partition_point(|s| s.start < i);
        self.code.get(k).filter(|s| s.start == i).map(|s| s.end)
    }

    /// The first `]]` at or after `from` that ends by `end`.
    fn double_close(&self, from: usize, end: usize) -> Option<usize> {
        let k = self.double_close.partition_point(|&p| p < from);
        self.double_close.get(k).copied().filter(|&p| p + 2 <= end)
    }

    /// Whether a `[` stands in `from..to`.
    fn opens_within(&self, from: usize, to: usize) -> bool {
        let k = self.opens.partition_point(|&p| p < from);
        self.opens.get(k).is_some_and(|&p| p < to)
    }

    /// The matching close of the opener at `i` in `table`: `Some(Some(at))`, `Some(None)` when
    /// it has none, `None` when the one-pass walk never stood on `i` (ask the direct scan).
    fn matching(&self, table: &[u32], i: usize) -> Option<Option<usize>> {
        match table.get(i - self.start).copied()? {
            NOT_VISITED => None,
            UNMATCHED => Some(None),
            at => Some(Some(self.start + at as usize)),
        }
    }
}

fn scan_range(
    text: &str,
    range: Range<usize>,
    index: &LineIndex,
    line: usize,
    out: &mut Vec<Found>,
) {
    let bytes = text.as_bytes();
    let mut i = range.start;
    while i < range.end {
        if let Some(stop) = index.code_at(i) {
            i = stop;
            continue;
        }
        match bytes[i] {
            b'\\' => i += 2,
            b'[' => {
                let embed = i > range.start && bytes[i - 1] == b'!';
                if bytes.get(i + 1) == Some(&b'[')
                    && let Some((found, next)) = parse_wiki(text, i, range.end, index, embed, line)
                {
                    out.push(found);
                    i = next;
                    continue;
                }
                if let Some((found, label, next)) =
                    parse_markdown(text, i, range.end, index, embed, line)
                {
                    out.push(found);
                    // The label may hold links of its own, e.g. an image inside a link.
                    scan_range(text, label, index, line, out);
                    i = next;
                    continue;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

fn parse_wiki(
    text: &str,
    open: usize,
    end: usize,
    index: &LineIndex,
    embed: bool,
    line: usize,
) -> Option<(Found, usize)> {
    let inner_start = open + 2;
    let close = index.double_close(inner_start, end)?;
    if index.opens_within(inner_start, close) {
        return None;
    }
    let inner = &text[inner_start..close];
    if inner.trim().is_empty() {
        return None;
    }
    let (head_len, alias) = match inner.find('|') {
        // Inside a table the pipe is written `\|`; the backslash belongs to neither side.
        Some(bar) if bar > 0 && inner.as_bytes()[bar - 1] == b'\\' => {
            (bar - 1, Some(inner[bar + 1..].to_string()))
        }
        Some(bar) => (bar, Some(inner[bar + 1..].to_string())),
        None => (inner.len(), None),
    };
    let head = &inner[..head_len];
    let (path, fragment) = match head.find('#') {
        Some(hash) => (&head[..hash], Some(head[hash + 1..].to_string())),
        None => (head, None),
    };
    let lead = path.len() - path.trim_start().len();
    let target = path.trim();
    let raw_start = inner_start + lead;
    let link = Link {
        kind: LinkKind::Wiki,
        embed,
        target: target.to_string(),
        fragment,
        alias,
        span: if embed { open - 1 } else { open }..close + 2,
        line,
    };
    Some((Found { link, raw: raw_start..raw_start + target.len(), angle: false }, close + 2))
}

/// The `]` closing the label that opens at `open`, by the direct walk (code skipped, escapes
/// honoured); only for an opener the line index's one walk did not stand on.
fn label_end_direct(text: &str, open: usize, end: usize, index: &LineIndex) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < end {
        if let Some(stop) = index.code_at(i) {
            i = stop;
            continue;
        }
        match bytes[i] {
            b'\\' => i += 1,
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `)` closing a destination whose `(` is at `open`, by the direct walk.
fn paren_close_direct(text: &str, from: usize, end: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 1usize;
    let mut m = from;
    while m < end {
        match bytes[m] {
            b'\\' => m += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(m);
                }
            }
            _ => {}
        }
        m += 1;
    }
    None
}

/// Parses `[label](destination)` at `open`; returns the link, the label's range and the end.
fn parse_markdown(
    text: &str,
    open: usize,
    end: usize,
    index: &LineIndex,
    embed: bool,
    line: usize,
) -> Option<(Found, Range<usize>, usize)> {
    let bytes = text.as_bytes();
    let label_end = match index.matching(&index.bracket, open) {
        Some(found) => found.filter(|&at| at < end),
        None => label_end_direct(text, open, end, index),
    }?;
    if label_end + 1 >= end || bytes[label_end + 1] != b'(' {
        return None;
    }
    let mut k = label_end + 2;
    while k < end && (bytes[k] == b' ' || bytes[k] == b'\t') {
        k += 1;
    }
    let (dest, angle, close) = if k < end && bytes[k] == b'<' {
        let gt = k + 1 + text[k + 1..end].find(['>', '<'])?;
        if bytes[gt] != b'>' {
            return None;
        }
        (k + 1..gt, true, after_title(text, gt + 1, end)?)
    } else {
        let close = match index.matching(&index.paren, label_end + 1) {
            Some(found) => found.filter(|&at| at < end),
            None => paren_close_direct(text, k, end),
        }?;
        let written = strip_title(&text[k..close]);
        (k..k + written.len(), false, close)
    };
    let whole = &text[dest.clone()];
    let (path, fragment) = match whole.find('#') {
        Some(hash) => (&whole[..hash], Some(decode(&whole[hash + 1..]))),
        None => (whole, None),
    };
    let link = Link {
        kind: LinkKind::Markdown,
        embed,
        target: decode(path),
        fragment,
        alias: None,
        span: if embed { open - 1 } else { open }..close + 1,
        line,
    };
    let found = Found { link, raw: dest.start..dest.start + path.len(), angle };
    Some((found, open + 1..label_end, close + 1))
}

/// After an `<...>` destination: optional whitespace and title, then `)`. Returns the `)`.
fn after_title(text: &str, from: usize, end: usize) -> Option<usize> {
    let rest = &text[from..end];
    let trimmed = rest.trim_start();
    let mut at = from + rest.len() - trimmed.len();
    if let Some(quote) = trimmed.chars().next().filter(|c| *c == '"' || *c == '\'') {
        at += 1 + trimmed[1..].find(quote)? + 1;
        at += text[at..end].len() - text[at..end].trim_start().len();
    }
    (text.as_bytes().get(at) == Some(&b')') && at < end).then_some(at)
}

/// Drops a trailing `"title"` or `'title'` (preceded by whitespace) from a raw destination.
fn strip_title(dest: &str) -> &str {
    let dest = dest.trim_end();
    for quote in ['"', '\''] {
        if dest.len() >= 2
            && dest.ends_with(quote)
            && let Some(open) = dest[..dest.len() - 1].rfind(quote)
            && dest[..open].ends_with([' ', '\t'])
        {
            return dest[..open].trim_end();
        }
    }
    dest
}

/// Undoes backslash escapes, then percent-encoding.
fn decode(raw: &str) -> String {
    let mut plain = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && next.is_ascii_punctuation()
        {
            plain.push(next);
            chars.next();
        } else {
            plain.push(c);
        }
    }
    percent_decode_str(&plain).decode_utf8_lossy().into_owned()
}

fn is_external(target: &str) -> bool {
    if target.starts_with("//") {
        return true;
    }
    let scheme_len = target
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        .count();
    scheme_len > 0
        && target.as_bytes()[0].is_ascii_alphabetic()
        && target.as_bytes().get(scheme_len) == Some(&b':')
}

// ---------------------------------------------------------------------------------------------
// Resolving

/// How a target reached its file; rewriting keeps the same shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Relative,
    Absolute,
    Name,
    Suffix,
    /// A note's `aliases` name it (never together with a file name).
    Alias,
}

#[derive(Debug, Clone)]
struct Resolved {
    path: String,
    via: Via,
    /// True when `.md` was added to the written target to find the file.
    appended: bool,
}

fn resolve_detail(
    target: &str,
    kind: LinkKind,
    from_note: &str,
    paths: &PathSet,
) -> Option<Resolved> {
    let target = target.trim();
    if target.is_empty() {
        return Some(Resolved { path: from_note.to_string(), via: Via::Relative, appended: false });
    }
    if kind == LinkKind::Markdown && is_external(target) {
        return None;
    }
    let rooted = target.starts_with('/');
    let body = if rooted { &target[1..] } else { target };
    let dotted = !rooted && is_dot_relative(body);
    let variants = ext_variants(body);
    let mut candidates = Vec::new();
    if !rooted {
        for (variant, appended) in &variants {
            let path = normalize(&join(folder(from_note), variant))?;
            candidates.push((path, Via::Relative, *appended));
        }
    }
    if !dotted {
        for (variant, appended) in &variants {
            if let Some(path) = normalize(variant) {
                candidates.push((path, Via::Absolute, *appended));
            }
        }
    }
    for exact in [true, false] {
        for (path, via, appended) in &candidates {
            if let Some(hit) = paths.lookup(path, exact) {
                return Some(Resolved { path: hit.to_string(), via: *via, appended: *appended });
            }
        }
    }
    if rooted || dotted {
        return None;
    }
    by_file_name(body, &variants, from_note, paths)
        .or_else(|| (kind == LinkKind::Wiki).then(|| by_alias(body, from_note, paths)).flatten())
}

/// Steps (4) and (5): a target without `/` by file name, else one with `/` by path suffix.
fn by_file_name(
    body: &str,
    variants: &[(String, bool)],
    from_note: &str,
    paths: &PathSet,
) -> Option<Resolved> {
    if !body.contains('/') {
        let dir = folder(from_note);
        for exact in [true, false] {
            for (name, appended) in variants {
                let hits = paths.named(name, exact);
                let Some(&first) = hits.first() else { continue };
                let hit = hits.into_iter().find(|p| folder(p) == dir).unwrap_or(first);
                return Some(Resolved {
                    path: hit.to_string(),
                    via: Via::Name,
                    appended: *appended,
                });
            }
        }
        return None;
    }
    for exact in [true, false] {
        for (variant, appended) in variants {
            let Some(suffix) = normalize(variant) else { continue };
            if let Some(hit) = paths.with_suffix(&suffix, exact).next() {
                return Some(Resolved {
                    path: hit.to_string(),
                    via: Via::Suffix,
                    appended: *appended,
                });
            }
        }
    }
    None
}

/// Step (6): the note whose aliases include the written target, the linking note's folder
/// first, else the shortest path.
fn by_alias(body: &str, from_note: &str, paths: &PathSet) -> Option<Resolved> {
    let hits = alias_holders(body, paths);
    let first = hits.first()?;
    let dir = folder(from_note);
    let hit = hits.iter().find(|p| folder(p) == dir).unwrap_or(first);
    Some(Resolved { path: hit.clone(), via: Via::Alias, appended: false })
}

/// The notes an alias link's target names: as written, else without a `.md` the writer added.
fn alias_holders<'p>(target: &str, paths: &'p PathSet) -> &'p [String] {
    let body = target.trim();
    let hits = paths.aliases.holders(body);
    match body.len().checked_sub(3).filter(|&at| body.is_char_boundary(at)) {
        Some(at) if hits.is_empty() && body[at..].eq_ignore_ascii_case(".md") => {
            paths.aliases.holders(&body[..at])
        }
        _ => hits,
    }
}

/// The paths a written target may name, in the order to try them, each with "was `.md` added".
fn ext_variants(body: &str) -> Vec<(String, bool)> {
    let name = file_name(body);
    let with_md = (format!("{body}.md"), true);
    if name.to_lowercase().ends_with(".md") {
        vec![(body.to_string(), false)]
    } else if name.rfind('.').is_some_and(|dot| dot > 0 && dot + 1 < name.len()) {
        vec![(body.to_string(), false), with_md]
    } else {
        vec![with_md]
    }
}

fn is_dot_relative(body: &str) -> bool {
    body == "." || body == ".." || body.starts_with("./") || body.starts_with("../")
}

/// Collapses `.`, `..` and empty segments; `None` when `..` climbs out of the vault.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() { rest.to_string() } else { format!("{dir}/{rest}") }
}

fn folder(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn file_name(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

/// Case- and normalisation-insensitive key: macOS may hand us decomposed file names.
pub(super) fn fold(text: &str) -> String {
    text.nfc().collect::<String>().to_lowercase()
}

pub(super) fn shortest_first(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The path from folder `dir` to `path`, climbing with `..` as needed.
fn relative_path(dir: &str, path: &str) -> String {
    let here: Vec<&str> = if dir.is_empty() { Vec::new() } else { dir.split('/').collect() };
    let there: Vec<&str> = path.split('/').collect();
    let shared = here.iter().zip(&there[..there.len() - 1]).take_while(|(a, b)| a == b).count();
    let mut parts = vec![".."; here.len() - shared];
    parts.extend(&there[shared..]);
    parts.join("/")
}

// ---------------------------------------------------------------------------------------------
// Rewriting

/// One link to repoint: how it resolved before the move and where it must lead after it.
struct Edit {
    found: Found,
    res: Resolved,
    dest: String,
}

/// The links of `text` that `pick` maps to (resolution before the move, destination after it).
fn plan(text: &str, mut pick: impl FnMut(&Link) -> Option<(Resolved, String)>) -> Vec<Edit> {
    let mut edits: Vec<Edit> = scan(text)
        .into_iter()
        .filter(|found| !found.link.target.trim().is_empty() && !found.link.is_external())
        .filter_map(|found| pick(&found.link).map(|(res, dest)| Edit { found, res, dest }))
        .collect();
    // An image inside a link label has its target before the enclosing link's target.
    edits.sort_by_key(|edit| edit.found.raw.start);
    edits
}

/// Rewrites the planned targets that, read from `note`, no longer reach their destination.
fn apply(text: &str, note: &str, edits: &[Edit], after: &PathSet) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut count = 0;
    for Edit { found, res, dest } in edits {
        let link = &found.link;
        // A link that still reaches its destination as written is the author's; leave it.
        if resolve(&link.target, link.kind, note, after).as_deref() == Some(dest.as_str()) {
            continue;
        }
        let written = new_target(link, res, note, dest, after);
        let replacement = match link.kind {
            LinkKind::Wiki => written,
            LinkKind::Markdown => encode_markdown(&written, &text[found.raw.clone()], found.angle),
        };
        out.push_str(&text[copied..found.raw.start]);
        out.push_str(&replacement);
        copied = found.raw.end;
        count += 1;
    }
    out.push_str(&text[copied..]);
    (out, count)
}

/// The decoded target to write so `link` (resolved as `res`) names `dest` from `note` under `after`.
fn new_target(link: &Link, res: &Resolved, note: &str, dest: &str, after: &PathSet) -> String {
    let written = link.target.trim();
    let rooted = written.starts_with('/');
    let body = if rooted { &written[1..] } else { written };
    let dotted = !rooted && is_dot_relative(body);
    let dir = folder(note);
    let relative = || {
        let rel = relative_path(dir, dest);
        if body.starts_with("./") && !rel.starts_with("../") { format!("./{rel}") } else { rel }
    };
    // (form, must be unique in `after`: by name, by suffix, or not at all)
    let mut forms: Vec<(String, Unique)> = Vec::new();
    if rooted {
        // Only the rooted form, pushed below for every shape, keeps a leading `/`.
    } else if dotted {
        forms.push((relative(), Unique::No));
        forms.push((dest.to_string(), Unique::No));
    } else if link.kind == LinkKind::Markdown {
        // A root note's relative and vault-absolute forms are the same text.
        match res.via {
            Via::Relative if !dir.is_empty() => forms.push((relative(), Unique::No)),
            Via::Name => forms.push((file_name(dest).to_string(), Unique::ByName)),
            _ => {}
        }
        forms.push((dest.to_string(), Unique::No));
    } else if body.contains('/') {
        forms.push((dest.to_string(), Unique::No));
    } else {
        forms.push((file_name(dest).to_string(), Unique::ByName));
        let segments: Vec<&str> = dest.split('/').collect();
        for keep in 2..segments.len() {
            forms.push((segments[segments.len() - keep..].join("/"), Unique::BySuffix));
        }
        forms.push((dest.to_string(), Unique::No));
    }
    let rooted_form = format!("/{dest}");
    forms.push((rooted_form.clone(), Unique::No));
    let shape = |form: &str| match form.strip_suffix(".md") {
        Some(stem) if res.appended => stem.to_string(),
        _ => form.to_string(),
    };
    let fallback = shape(&rooted_form);
    forms
        .iter()
        .map(|(form, unique)| (shape(form), unique))
        .find(|(form, unique)| {
            let single = match unique {
                Unique::No => true,
                Unique::ByName => count_named(after, form) == 1,
                Unique::BySuffix => count_suffixed(after, form) == 1,
            };
            single && resolve(form, link.kind, note, after).as_deref() == Some(dest)
        })
        .map_or(fallback, |(form, _)| form)
}

enum Unique {
    No,
    ByName,
    BySuffix,
}

fn count_named(paths: &PathSet, name: &str) -> usize {
    let mut hits: HashSet<&str> = HashSet::new();
    for (variant, _) in ext_variants(name) {
        hits.extend(paths.named(&variant, false));
    }
    hits.len()
}

fn count_suffixed(paths: &PathSet, suffix: &str) -> usize {
    let mut hits: HashSet<&str> = HashSet::new();
    for (variant, _) in ext_variants(suffix) {
        hits.extend(paths.with_suffix(&variant, false));
    }
    hits.len()
}

/// Characters left bare when percent-encoding a path: `/`, ASCII letters and digits, `-._~`.
const PATH_UNSAFE: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'/').remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Writes a decoded markdown target in the style of the target it replaces (`old`, as written).
fn encode_markdown(path: &str, old: &str, angle: bool) -> String {
    let full = || utf8_percent_encode(path, PATH_UNSAFE).to_string();
    if angle {
        // Raw inside `<>`, except what the parser would read differently.
        let mut out = String::with_capacity(path.len());
        for c in path.chars() {
            match c {
                '%' => out.push_str("%25"),
                '#' => out.push_str("%23"),
                '<' => out.push_str("%3C"),
                '>' => out.push_str("%3E"),
                '\\' => out.push_str("%5C"),
                '\n' => out.push_str("%0A"),
                '\r' => out.push_str("%0D"),
                _ => out.push(c),
            }
        }
        return out;
    }
    let was_encoded = old
        .as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit());
    if was_encoded {
        return full();
    }
    // Raw only where the author wrote raw and the parser would read the same path back: no
    // escapes, no title-like quote at the end, spaces only if the author used raw spaces.
    let spaces_ok = old.contains(' ');
    let raw_ok = path.trim() == path
        && !path.ends_with('\'')
        && path.chars().all(|c| {
            !c.is_control()
                && !"%#()<>\\\"".contains(c)
                && (c != ' ' || spaces_ok)
                && (!c.is_whitespace() || c == ' ')
        });
    if raw_ok { path.to_string() } else { full() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&str]) -> PathSet {
        PathSet::new(paths.iter().map(|p| p.to_string()))
    }

    fn expect(
        target: &str,
        fragment: Option<&str>,
        alias: Option<&str>,
    ) -> (String, Option<String>, Option<String>) {
        (target.to_string(), fragment.map(str::to_string), alias.map(str::to_string))
    }

    fn parts(link: &Link) -> (String, Option<String>, Option<String>) {
        (link.target.clone(), link.fragment.clone(), link.alias.clone())
    }

    /// A vault of notes with their text, as the link model sees it: its paths and aliases.
    fn with_aliases(notes: &[(&str, &str)]) -> PathSet {
        let table = Aliases::from_notes(notes.iter().copied());
        set(&notes.iter().map(|(p, _)| *p).collect::<Vec<_>>()).with_aliases(table)
    }

    #[test]
    fn a_wikilink_resolves_by_alias_after_every_path_and_file_name() {
        let paths = with_aliases(&[
            ("Home/Heating.md", "---\naliases: [Boiler, Hot water, How to/Old name]\n---\n"),
            ("Home/Furnace.md", "---\naliases: [Heater]\n---\n"),
            ("Other/Stove.md", "---\naliases: Furnace\n---\n"),
            ("A/One.md", "---\naliases: [Shared]\n---\n"),
            ("B/Two.md", "---\nalias: shared\n---\n"),
            ("Boiler.png", ""),
        ]);
        let wiki = |t: &str, from: &str| resolve(t, LinkKind::Wiki, from, &paths);
        let table: &[(&str, &str, Option<&str>)] = &[
            ("Boiler", "X.md", Some("Home/Heating.md")),
            ("boiler", "X.md", Some("Home/Heating.md")),
            ("HOT WATER", "X.md", Some("Home/Heating.md")),
            ("Hot water.md", "X.md", Some("Home/Heating.md")),
            // An alias may be written like a path (obsidian-help keeps old paths so).
            ("How to/Old name", "X.md", Some("Home/Heating.md")),
            // A real file name wins over another note's alias.
            ("Furnace", "X.md", Some("Home/Furnace.md")),
            ("Boiler.png", "X.md", Some("Boiler.png")),
            // A shared alias: the linking note's folder first, else the shortest path.
            ("Shared", "B/Note.md", Some("B/Two.md")),
            ("Shared", "X.md", Some("A/One.md")),
            // Rooted and dotted targets are paths only.
            ("/Boiler", "X.md", None),
            ("./Boiler", "X.md", None),
            ("Nothing", "X.md", None),
        ];
        for (target, from, want) in table {
            assert_eq!(wiki(target, from).as_deref(), *want, "{target} from {from}");
        }
        // A Markdown link's target is a path, never an alias.
        assert_eq!(resolve("Boiler", LinkKind::Markdown, "X.md", &paths), None);
        // Without the table (a bare `PathSet::new`), no alias is known.
        assert_eq!(resolve("Boiler", LinkKind::Wiki, "X.md", &set(&["Home/Heating.md"])), None);
        assert!(by_an_alias("Boiler", LinkKind::Wiki, "X.md", &paths));
        assert!(!by_an_alias("Furnace", LinkKind::Wiki, "X.md", &paths));
    }

    #[test]
    fn a_shared_alias_is_ambiguous_as_a_shared_file_name_is() {
        let paths = with_aliases(&[
            ("A/One.md", "---\naliases: [Shared]\n---\n"),
            ("B/Two.md", "---\naliases: [shared]\n---\n"),
            ("C/Three.md", "---\naliases: [Mine]\n---\n"),
        ]);
        let alts = |t: &str, from: &str| alternatives(t, LinkKind::Wiki, from, &paths);
        assert_eq!(alts("Shared", "X.md"), Some(vec!["A/One.md".into(), "B/Two.md".into()]));
        assert_eq!(alts("Shared", "B/Note.md"), None, "the note's own folder wins");
        assert_eq!(alts("Mine", "X.md"), None);
        let twins = with_aliases(&[
            ("Home/One.md", "---\naliases: [Twin]\n---\n"),
            ("Home/Two.md", "---\naliases: [Twin]\n---\n"),
        ]);
        let both = Some(vec!["Home/One.md".to_string(), "Home/Two.md".to_string()]);
        assert_eq!(alternatives("Twin", LinkKind::Wiki, "Home/Log.md", &twins), both);
    }

    #[test]
    fn a_move_leaves_alias_links_as_they_are_since_the_alias_moves_with_the_note() {
        let before =
            with_aliases(&[("Home/Heating.md", "---\naliases: [Boiler]\n---\n"), ("Log.md", "")]);
        let after = before.moved("Home/Heating.md", "Archive/Warmth.md");
        let text = "[[Boiler]] [[Boiler#Service|svc]] ![[boiler]] [[Heating]]\n";
        let (new, n) = rewrite_inbound(
            text,
            "Log.md",
            "Home/Heating.md",
            "Archive/Warmth.md",
            &before,
            &after,
        );
        assert_eq!(new, "[[Boiler]] [[Boiler#Service|svc]] ![[boiler]] [[Warmth]]\n");
        assert_eq!(n, 1);
        assert_eq!(
            resolve("Boiler", LinkKind::Wiki, "Log.md", &after).as_deref(),
            Some("Archive/Warmth.md")
        );
        // The moved note's own alias links to others stay too.
        let (own, n) = rewrite_outbound(
            "[[Boiler]]\n",
            "Home/Heating.md",
            "Archive/Warmth.md",
            &before,
            &after,
        );
        assert_eq!((own.as_str(), n), ("[[Boiler]]\n", 0));
    }

    #[test]
    fn a_move_onto_a_name_another_note_uses_as_an_alias_takes_that_name_as_a_file_would() {
        let before = with_aliases(&[
            ("Home/Heating.md", "---\naliases: [Boiler]\n---\n"),
            ("Old.md", ""),
            ("Log.md", ""),
        ]);
        // A file named `Boiler` now wins over the alias, as a file name wins over any alias.
        let after = before.moved("Old.md", "Boiler.md");
        assert_eq!(
            resolve("Boiler", LinkKind::Wiki, "Log.md", &after).as_deref(),
            Some("Boiler.md")
        );
        let (new, n) =
            rewrite_inbound("[[Old]]\n", "Log.md", "Old.md", "Boiler.md", &before, &after);
        assert_eq!((new.as_str(), n), ("[[Boiler]]\n", 1));
    }

    #[test]
    fn parses_every_wikilink_form() {
        let text = "[[Note]] [[Folder/Note]] [[Note#Heading]] [[Note#^block]]\n\
                    [[Note|alias]] [[Note#Heading|alias]] ![[Note]] ![[file.pdf]] [[#Heading]]\n";
        let found = links(text);
        let got: Vec<_> = found.iter().map(parts).collect();
        assert_eq!(
            got,
            vec![
                expect("Note", None, None),
                expect("Folder/Note", None, None),
                expect("Note", Some("Heading"), None),
                expect("Note", Some("^block"), None),
                expect("Note", None, Some("alias")),
                expect("Note", Some("Heading"), Some("alias")),
                expect("Note", None, None),
                expect("file.pdf", None, None),
                expect("", Some("Heading"), None),
            ]
        );
        let embeds: Vec<bool> = found.iter().map(|l| l.embed).collect();
        assert_eq!(embeds, [false, false, false, false, false, false, true, true, false]);
        assert!(found.iter().all(|l| l.kind == LinkKind::Wiki));
        let lines: Vec<usize> = found.iter().map(|l| l.line).collect();
        assert_eq!(lines, [1, 1, 1, 1, 2, 2, 2, 2, 2]);
        assert_eq!(&text[found[6].span.clone()], "![[Note]]");
        assert_eq!(&text[found[1].span.clone()], "[[Folder/Note]]");
    }

    #[test]
    fn parses_an_escaped_pipe_in_a_table_row() {
        let text = "| a | b |\n|---|---|\n| [[Note\\|shown]] | ![[pic.png\\|100]] |\n";
        let found = links(text);
        assert_eq!(found.len(), 2);
        assert_eq!(parts(&found[0]), expect("Note", None, Some("shown")));
        assert_eq!(parts(&found[1]), expect("pic.png", None, Some("100")));
        assert_eq!(&text[found[0].span.clone()], "[[Note\\|shown]]");
        assert_eq!(found[0].line, 3);
        assert!(found[1].embed);
    }

    #[test]
    fn parses_markdown_link_forms() {
        let text = "[a](My%20Note.md) ![img](pics/cat.png) [b](<My Note.md#Part Two>)\n\
                    [c](My Note.md) [d](x.md#frag \"Title\") [e](../Other/x.md) [f](/Home/x)\n\
                    [g](https://example.com/a_(b)) [h](#local) [i](a\\(1\\).md)\n";
        let found = links(text);
        let got: Vec<_> = found.iter().map(parts).collect();
        let md = |t: &str, f: Option<&str>| expect(t, f, None);
        assert_eq!(
            got,
            vec![
                md("My Note.md", None),
                md("pics/cat.png", None),
                md("My Note.md", Some("Part Two")),
                md("My Note.md", None),
                md("x.md", Some("frag")),
                md("../Other/x.md", None),
                md("/Home/x", None),
                md("https://example.com/a_(b)", None),
                md("", Some("local")),
                md("a(1).md", None),
            ]
        );
        assert!(found.iter().all(|l| l.kind == LinkKind::Markdown));
        assert!(found[1].embed && !found[0].embed);
        assert_eq!(&text[found[1].span.clone()], "![img](pics/cat.png)");
        assert_eq!(&text[found[4].span.clone()], "[d](x.md#frag \"Title\")");
        assert!(found[7].is_external() && !found[6].is_external());
        assert_eq!(
            found.iter().map(|l| l.line).collect::<Vec<_>>(),
            [1, 1, 1, 2, 2, 2, 2, 3, 3, 3]
        );
    }

    #[test]
    fn finds_an_image_inside_a_link_label() {
        let found = links("[![badge](b.png)](Target.md)\n");
        let got: Vec<_> = found.iter().map(|l| (l.target.as_str(), l.embed)).collect();
        assert_eq!(got, [("Target.md", false), ("b.png", true)]);
    }

    #[test]
    fn skips_code_fences_and_inline_code() {
        let text = "[[A]]\n```md\n[[B]] [x](B.md)\n```\n`[[C]]` and ``[[D]] ` `` [[E]]\n\
                    > ~~~~\n> [[F]]\n> ~~~~\n[[G]] `unclosed [[H]]\n";
        let got: Vec<(String, usize)> =
            links(text).into_iter().map(|l| (l.target, l.line)).collect();
        assert_eq!(
            got,
            [
                ("A".to_string(), 1),
                ("E".to_string(), 5),
                ("G".to_string(), 9),
                ("H".to_string(), 9)
            ]
        );
    }

    #[test]
    fn code_is_what_the_line_model_says_it_is() {
        // A fence four columns in after a paragraph opens nothing, so its "contents" are text;
        // indented code and a fence inside a list item are code; frontmatter is scanned.
        let text = "---\nup: \"[[Up]]\"\n---\nPara\n    ```\n[[Lazy]]\n    ```\n\n    [[Indented]]\n\n\
                    - step\n\n    ```\n    [[InItem]]\n    ```\n- [[Item]]\n";
        let got: Vec<(String, usize)> =
            links(text).into_iter().map(|l| (l.target, l.line)).collect();
        assert_eq!(got, [("Up".to_string(), 2), ("Lazy".to_string(), 6), ("Item".to_string(), 16)]);
    }

    #[test]
    fn resolves_relative_absolute_and_by_name() {
        let paths = set(&[
            "Home/x.md",
            "Other/x.md",
            "x.md",
            "Home/Sub/y.md",
            "Deep/Folder/Note.md",
            "Files/report.pdf",
            "Projects/Three laws.md",
        ]);
        let r = |t: &str, k: LinkKind, n: &str| resolve(t, k, n, &paths);
        use LinkKind::{Markdown, Wiki};
        // Same folder wins for a bare name, then the root, then the shortest path.
        assert_eq!(r("x", Wiki, "Home/n.md").as_deref(), Some("Home/x.md"));
        assert_eq!(r("x", Wiki, "Elsewhere/n.md").as_deref(), Some("x.md"));
        assert_eq!(r("y", Wiki, "Other/n.md").as_deref(), Some("Home/Sub/y.md"));
        // Relative before vault-absolute; `/` forces the root.
        assert_eq!(r("Sub/y.md", Markdown, "Home/n.md").as_deref(), Some("Home/Sub/y.md"));
        assert_eq!(r("Home/x.md", Markdown, "Other/n.md").as_deref(), Some("Home/x.md"));
        assert_eq!(r("/x.md", Markdown, "Home/n.md").as_deref(), Some("x.md"));
        assert_eq!(r("../Other/x.md", Markdown, "Home/n.md").as_deref(), Some("Other/x.md"));
        assert_eq!(r("./x", Wiki, "Other/n.md").as_deref(), Some("Other/x.md"));
        assert_eq!(r("./y", Wiki, "Other/n.md"), None);
        // Climbing out of the vault names nothing.
        assert_eq!(r("../x.md", Markdown, "n.md"), None);
        assert_eq!(r("../../x.md", Markdown, "Home/n.md"), None);
        // Case-insensitive fallback, extensionless markdown, documents, path suffixes.
        assert_eq!(r("home/X", Wiki, "n.md").as_deref(), Some("Home/x.md"));
        assert_eq!(
            r("projects/three LAWS", Wiki, "n.md").as_deref(),
            Some("Projects/Three laws.md")
        );
        assert_eq!(
            r("Projects/Three laws", Markdown, "n.md").as_deref(),
            Some("Projects/Three laws.md")
        );
        assert_eq!(r("report.pdf", Wiki, "n.md").as_deref(), Some("Files/report.pdf"));
        assert_eq!(r("report", Wiki, "n.md"), None);
        assert_eq!(r("Folder/Note", Wiki, "n.md").as_deref(), Some("Deep/Folder/Note.md"));
        assert_eq!(r("older/Note", Wiki, "n.md"), None);
        // Empty targets are the note itself; URLs are nothing.
        assert_eq!(r("", Wiki, "Home/n.md").as_deref(), Some("Home/n.md"));
        assert_eq!(r("https://x.org/a.md", Markdown, "n.md"), None);
        assert_eq!(r("mailto:a@b.c", Markdown, "n.md"), None);
    }

    #[test]
    fn exact_case_beats_folded_case_and_dotted_names_try_md() {
        let paths = set(&["a/note.md", "b/Note.md", "v1.2.md"]);
        assert_eq!(resolve("Note", LinkKind::Wiki, "c/n.md", &paths).as_deref(), Some("b/Note.md"));
        assert_eq!(resolve("NOTE", LinkKind::Wiki, "c/n.md", &paths).as_deref(), Some("a/note.md"));
        assert_eq!(resolve("v1.2", LinkKind::Wiki, "n.md", &paths).as_deref(), Some("v1.2.md"));
    }

    fn moved(before: &[&str], from: &str, to: &str) -> (PathSet, PathSet) {
        let after: Vec<String> = before
            .iter()
            .filter(|p| **p != from)
            .map(|p| p.to_string())
            .chain([to.into()])
            .collect();
        (set(before), PathSet::new(after))
    }

    #[test]
    fn bare_wikilinks_stay_bare_while_unique() {
        let (before, after) = moved(&["Home/Old.md", "n.md"], "Home/Old.md", "Archive/New.md");
        let text = "See [[Old]], [[Old#Heading|alias]], ![[Old]] and [[Old.md]] | [[Old\\|x]]\n";
        let (out, n) =
            rewrite_inbound(text, "n.md", "Home/Old.md", "Archive/New.md", &before, &after);
        assert_eq!(
            out,
            "See [[New]], [[New#Heading|alias]], ![[New]] and [[New.md]] | [[New\\|x]]\n"
        );
        assert_eq!(n, 5);
    }

    #[test]
    fn bare_wikilink_gains_a_path_when_the_name_collides() {
        let before = ["Home/Old.md", "Work/Plan.md", "n.md"];
        let (before, after) = moved(&before, "Home/Old.md", "Archive/Plan.md");
        let text = "[[Old]] and [[Plan]]\n";
        let (out, n) =
            rewrite_inbound(text, "n.md", "Home/Old.md", "Archive/Plan.md", &before, &after);
        assert_eq!(out, "[[Archive/Plan]] and [[Plan]]\n");
        assert_eq!(n, 1);
        // Deeper collisions need the shortest unique suffix.
        let before = ["Home/Old.md", "X/Arc/Plan.md", "n.md"];
        let (before, after) = moved(&before, "Home/Old.md", "Y/Arc/Plan.md");
        let (out, _) =
            rewrite_inbound("[[Old]]", "n.md", "Home/Old.md", "Y/Arc/Plan.md", &before, &after);
        assert_eq!(out, "[[Y/Arc/Plan]]");
    }

    #[test]
    fn path_wikilinks_get_the_new_full_path() {
        let (before, after) =
            moved(&["Home/Old.md", "Home/n.md"], "Home/Old.md", "Archive/2024/Old.md");
        let text = "[[Home/Old|x]] [[/Home/Old]] [[./Old#h]]\n";
        let (out, n) = rewrite_inbound(
            text,
            "Home/n.md",
            "Home/Old.md",
            "Archive/2024/Old.md",
            &before,
            &after,
        );
        assert_eq!(out, "[[Archive/2024/Old|x]] [[/Archive/2024/Old]] [[../Archive/2024/Old#h]]\n");
        assert_eq!(n, 3);
    }

    #[test]
    fn markdown_links_keep_encoding_and_shape() {
        let from = "Home/My Note.md";
        let to = "Archive/My Note.md";
        let (before, after) = moved(&[from, "Other/n.md", "Home/x.md"], from, to);
        let text = "[a](/Home/My%20Note.md#part) [b](Home/My%20Note) [c](../Home/My%20Note.md)\n\
                    [d](<../Home/My Note.md>) [e](../Home/My Note.md \"t\") ![f](/Home/My%20Note.md)\n";
        let (out, n) = rewrite_inbound(text, "Other/n.md", from, to, &before, &after);
        assert_eq!(
            out,
            "[a](/Archive/My%20Note.md#part) [b](Archive/My%20Note) [c](../Archive/My%20Note.md)\n\
             [d](<../Archive/My Note.md>) [e](../Archive/My Note.md \"t\") ![f](/Archive/My%20Note.md)\n"
        );
        assert_eq!(n, 6);
    }

    #[test]
    fn markdown_relative_and_bare_links() {
        let (before, after) = moved(
            &["Home/x.md", "Other/n.md", "Home/m.md", "Deep/y.md"],
            "Home/x.md",
            "A/B/x y.md",
        );
        let (out, n) = rewrite_inbound(
            "[r](../Home/x.md)",
            "Other/n.md",
            "Home/x.md",
            "A/B/x y.md",
            &before,
            &after,
        );
        assert_eq!((out.as_str(), n), ("[r](../A/B/x%20y.md)", 1));
        // A sibling written bare becomes relative; a by-name bare link stays bare when unique.
        let (out, _) =
            rewrite_inbound("[s](x.md)", "Home/m.md", "Home/x.md", "A/B/x y.md", &before, &after);
        assert_eq!(out, "[s](../A/B/x%20y.md)");
        let (before, after) =
            moved(&["Home/x.md", "Other/n.md", "Deep/y.md"], "Deep/y.md", "Deep/z.md");
        let (out, _) =
            rewrite_inbound("[t](y.md)", "Other/n.md", "Deep/y.md", "Deep/z.md", &before, &after);
        assert_eq!(out, "[t](z.md)");
    }

    #[test]
    fn rewrites_an_image_inside_a_link_and_root_bare_links() {
        let paths = ["Old.md", "pic.png", "Home/n.md", "Other/Old.md"];
        let (before, after) = moved(&paths, "Old.md", "Archive/Old.md");
        let text = "[![p](../pic.png)](../Old.md) [r](Old.md)\n";
        let (out, n) =
            rewrite_inbound(text, "Home/n.md", "Old.md", "Archive/Old.md", &before, &after);
        // `Old.md` from Home/ reached the root file by the vault-absolute step, so it stays
        // vault-absolute (by name it would now reach Other/Old.md).
        assert_eq!(out, "[![p](../pic.png)](../Archive/Old.md) [r](Archive/Old.md)\n");
        assert_eq!(n, 2);
        let (before, after) = moved(&paths, "pic.png", "img/pic 2.png");
        let (out, n) =
            rewrite_inbound(text, "Home/n.md", "pic.png", "img/pic 2.png", &before, &after);
        assert_eq!(out, "[![p](../img/pic%202.png)](../Old.md) [r](Old.md)\n");
        assert_eq!(n, 1);
    }

    #[test]
    fn leaves_other_notes_code_and_urls_alone() {
        let paths = ["Home/Old.md", "Work/Old.md", "Work/n.md"];
        let (before, after) = moved(&paths, "Home/Old.md", "Archive/Old.md");
        // `[[Old]]` from Work/ resolves to Work/Old.md: not the moved note.
        let text = "[[Old]] [[Home/Old]] `[[Home/Old]]`\n```\n[[Home/Old]]\n```\n[u](https://h/Home/Old.md)\n";
        let (out, n) =
            rewrite_inbound(text, "Work/n.md", "Home/Old.md", "Archive/Old.md", &before, &after);
        assert_eq!(
            out,
            "[[Old]] [[Archive/Old]] `[[Home/Old]]`\n```\n[[Home/Old]]\n```\n[u](https://h/Home/Old.md)\n"
        );
        assert_eq!(n, 1);
    }

    #[test]
    fn rewrites_frontmatter_links_and_documents() {
        let (before, after) = moved(&["Files/a.pdf", "n.md"], "Files/a.pdf", "Files/b.pdf");
        let text = "---\nrelated: \"[[a.pdf]]\"\n---\n![[a.pdf#page=2]] [doc](Files/a.pdf)\n";
        let (out, n) = rewrite_inbound(text, "n.md", "Files/a.pdf", "Files/b.pdf", &before, &after);
        assert_eq!(out, "---\nrelated: \"[[b.pdf]]\"\n---\n![[b.pdf#page=2]] [doc](Files/b.pdf)\n");
        assert_eq!(n, 3);
    }

    #[test]
    fn unchanged_when_still_reaching_the_destination() {
        let (before, after) = moved(&["A/Old.md", "n.md"], "A/Old.md", "B/Old.md");
        let text = "[[Old]] [[old]]\n";
        let (out, n) = rewrite_inbound(text, "n.md", "A/Old.md", "B/Old.md", &before, &after);
        assert_eq!((out.as_str(), n), (text, 0));
    }

    #[test]
    fn outbound_fixes_relative_and_self_links() {
        let paths = ["Home/n.md", "Home/x.md", "x.md", "Other/y.md", "z.md"];
        let (before, after) = moved(&paths, "Home/n.md", "Archive/Deep/n.md");
        let text = "[a](x.md) [b](../Other/y.md) [[./x]] [[n#Top]] [[#Top]] [c](/z.md) [[y]]\n";
        let (out, n) = rewrite_outbound(text, "Home/n.md", "Archive/Deep/n.md", &before, &after);
        assert_eq!(
            out,
            "[a](../../Home/x.md) [b](../../Other/y.md) [[../../Home/x]] [[n#Top]] [[#Top]] [c](/z.md) [[y]]\n"
        );
        assert_eq!(n, 3);
    }

    #[test]
    fn outbound_renames_self_links() {
        let (before, after) = moved(&["Old.md"], "Old.md", "New.md");
        let (out, n) =
            rewrite_outbound("[[Old#h]] [s](Old.md)", "Old.md", "New.md", &before, &after);
        assert_eq!((out.as_str(), n), ("[[New#h]] [s](New.md)", 2));
    }

    #[test]
    fn encodes_markdown_targets_by_style() {
        assert_eq!(encode_markdown("A/b c.md", "x.md", false), "A/b%20c.md");
        assert_eq!(encode_markdown("A/b c.md", "x y.md", false), "A/b c.md");
        assert_eq!(encode_markdown("A/b c.md", "x%20y.md", false), "A/b%20c.md");
        assert_eq!(encode_markdown("A/b c.md", "x y.md", true), "A/b c.md");
        assert_eq!(encode_markdown("A/Café (1).md", "x y.md", false), "A/Caf%C3%A9%20%281%29.md");
        assert_eq!(encode_markdown("A/Café.md", "x.md", false), "A/Café.md");
        assert_eq!(encode_markdown("A/50%#.md", "x.md", true), "A/50%25%23.md");
    }

    /// The scanner as it was before `LineIndex`: quadratic on hostile lines, and the oracle the
    /// linear one must agree with on every line.
    pub(super) mod oracle {
        use super::super::*;

        pub(super) fn scan(text: &str) -> Vec<Found> {
            let mut out = Vec::new();
            // Frontmatter lines are scanned too: a `related: "[[Note]]"` value is a link to keep.
            for line in markdown::lines(text).filter(|line| !line.class.is_code()) {
                let code = code_spans(text, line.start, line.end);
                scan_range(text, line.start..line.end, &code, line.number + 1, &mut out);
            }
            out.sort_by_key(|found| found.link.span.start);
            out
        }

        /// Inline code spans of one line: a backtick run up to the next run of the same length.
        fn code_spans(text: &str, start: usize, end: usize) -> Vec<Range<usize>> {
            let bytes = text.as_bytes();
            let run_at = |i: usize| bytes[i..end].iter().take_while(|&&b| b == b'`').count();
            let mut spans = Vec::new();
            let mut i = start;
            while i < end {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'`' => {
                        let run = run_at(i);
                        let mut j = i + run;
                        let mut close = None;
                        while j < end {
                            if bytes[j] == b'`' {
                                let other = run_at(j);
                                if other == run {
                                    close = Some(j + other);
                                    break;
                                }
                                j += other;
                            } else {
                                j += 1;
                            }
                        }
                        match close {
                            Some(stop) => {
                                spans.push(i..stop);
                                i = stop;
                            }
                            None => i += run,
                        }
                    }
                    _ => i += 1,
                }
            }
            spans
        }

        fn code_at(code: &[Range<usize>], i: usize) -> Option<usize> {
            code.iter().find(|span| span.start == i).map(|span| span.end)
        }

        fn scan_range(
            text: &str,
            range: Range<usize>,
            code: &[Range<usize>],
            line: usize,
            out: &mut Vec<Found>,
        ) {
            let bytes = text.as_bytes();
            let mut i = range.start;
            while i < range.end {
                if let Some(stop) = code_at(code, i) {
                    i = stop;
                    continue;
                }
                match bytes[i] {
                    b'\\' => i += 2,
                    b'[' => {
                        let embed = i > range.start && bytes[i - 1] == b'!';
                        if bytes.get(i + 1) == Some(&b'[')
                            && let Some((found, next)) = parse_wiki(text, i, range.end, embed, line)
                        {
                            out.push(found);
                            i = next;
                            continue;
                        }
                        if let Some((found, label, next)) =
                            parse_markdown(text, i, range.end, code, embed, line)
                        {
                            out.push(found);
                            // The label may hold links of its own, e.g. an image inside a link.
                            scan_range(text, label, code, line, out);
                            i = next;
                            continue;
                        }
                        i += 1;
                    }
                    _ => i += 1,
                }
            }
        }

        fn parse_wiki(
            text: &str,
            open: usize,
            end: usize,
            embed: bool,
            line: usize,
        ) -> Option<(Found, usize)> {
            let inner_start = open + 2;
            let close = inner_start + text[inner_start..end].find("]]")?;
            let inner = &text[inner_start..close];
            if inner.trim().is_empty() || inner.contains('[') {
                return None;
            }
            let (head_len, alias) = match inner.find('|') {
                // Inside a table the pipe is written `\|`; the backslash belongs to neither side.
                Some(bar) if bar > 0 && inner.as_bytes()[bar - 1] == b'\\' => {
                    (bar - 1, Some(inner[bar + 1..].to_string()))
                }
                Some(bar) => (bar, Some(inner[bar + 1..].to_string())),
                None => (inner.len(), None),
            };
            let head = &inner[..head_len];
            let (path, fragment) = match head.find('#') {
                Some(hash) => (&head[..hash], Some(head[hash + 1..].to_string())),
                None => (head, None),
            };
            let lead = path.len() - path.trim_start().len();
            let target = path.trim();
            let raw_start = inner_start + lead;
            let link = Link {
                kind: LinkKind::Wiki,
                embed,
                target: target.to_string(),
                fragment,
                alias,
                span: if embed { open - 1 } else { open }..close + 2,
                line,
            };
            Some((
                Found { link, raw: raw_start..raw_start + target.len(), angle: false },
                close + 2,
            ))
        }

        /// Parses `[label](destination)` at `open`; returns the link, the label's range and the end.
        fn parse_markdown(
            text: &str,
            open: usize,
            end: usize,
            code: &[Range<usize>],
            embed: bool,
            line: usize,
        ) -> Option<(Found, Range<usize>, usize)> {
            let bytes = text.as_bytes();
            let mut depth = 0usize;
            let mut i = open;
            let mut label_end = None;
            while i < end {
                if let Some(stop) = code_at(code, i) {
                    i = stop;
                    continue;
                }
                match bytes[i] {
                    b'\\' => i += 1,
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            label_end = Some(i);
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            let label_end = label_end?;
            if label_end + 1 >= end || bytes[label_end + 1] != b'(' {
                return None;
            }
            let mut k = label_end + 2;
            while k < end && (bytes[k] == b' ' || bytes[k] == b'\t') {
                k += 1;
            }
            let (dest, angle, close) = if k < end && bytes[k] == b'<' {
                let gt = k + 1 + text[k + 1..end].find(['>', '<'])?;
                if bytes[gt] != b'>' {
                    return None;
                }
                (k + 1..gt, true, after_title(text, gt + 1, end)?)
            } else {
                let mut depth = 1usize;
                let mut m = k;
                let mut close = None;
                while m < end {
                    match bytes[m] {
                        b'\\' => m += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                close = Some(m);
                                break;
                            }
                        }
                        _ => {}
                    }
                    m += 1;
                }
                let close = close?;
                let written = strip_title(&text[k..close]);
                (k..k + written.len(), false, close)
            };
            let whole = &text[dest.clone()];
            let (path, fragment) = match whole.find('#') {
                Some(hash) => (&whole[..hash], Some(decode(&whole[hash + 1..]))),
                None => (whole, None),
            };
            let link = Link {
                kind: LinkKind::Markdown,
                embed,
                target: decode(path),
                fragment,
                alias: None,
                span: if embed { open - 1 } else { open }..close + 1,
                line,
            };
            let found = Found { link, raw: dest.start..dest.start + path.len(), angle };
            Some((found, open + 1..label_end, close + 1))
        }
    }

    mod linear {
        use super::super::*;
        use proptest::prelude::*;

        fn same(text: &str) -> std::result::Result<(), TestCaseError> {
            let fast: Vec<_> = scan(text).into_iter().map(|f| (f.link, f.raw, f.angle)).collect();
            let slow: Vec<_> =
                super::oracle::scan(text).into_iter().map(|f| (f.link, f.raw, f.angle)).collect();
            prop_assert_eq!(fast, slow, "{:?}", text);
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4000))]
            #[test]
            fn the_linear_scan_finds_what_the_direct_one_found(
                text in "[\\[\\]()`\\\\!|#<> a.\n]{0,60}"
            ) {
                same(&text)?;
            }
        }

        #[test]
        fn hostile_lines_scan_in_linear_time() {
            for unit in ["[[a|", "[", "(", "`", "``` ` ", "[x](", "![[", "[`a`]("] {
                let line = unit.repeat(400_000 / unit.len());
                let started = std::time::Instant::now();
                let _ = scan(&line);
                let took = started.elapsed();
                // Quadratic on 400 KB is minutes; linear is milliseconds. The bound is loose
                // so a loaded machine cannot trip it.
                assert!(took < std::time::Duration::from_secs(5), "{unit:?}: {took:?}");
            }
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        const FOLDERS: &[&str] = &["", "A", "B", "A/C", "Deep/A", "B/C"];
        const NAMES: &[&str] = &["Note", "note", "My Note", "x", "Ünï", "v1.2"];

        fn path(folder: usize, name: usize, pdf: bool) -> String {
            let ext = if pdf { "pdf" } else { "md" };
            join(FOLDERS[folder % FOLDERS.len()], &format!("{}.{ext}", NAMES[name % NAMES.len()]))
        }

        /// Writes a link to `target` from `note` in one of several author styles.
        fn write_link(style: usize, target: &str, note: &str) -> String {
            let stem = target.strip_suffix(".md").unwrap_or(target);
            let enc = |s: &str| utf8_percent_encode(s, PATH_UNSAFE).to_string();
            let rel = relative_path(folder(note), target);
            match style % 13 {
                0 => format!("[[{}]]", file_name(stem)),
                1 => format!("[[{stem}#H|alias]]"),
                2 => format!("![[{}]]", file_name(target)),
                3 => format!("| [[{}\\|a]] |", file_name(stem)),
                4 => format!("[m](/{}#p)", enc(target)),
                5 => format!("[m]({})", enc(stem)),
                6 => format!("[m]({})", enc(&rel)),
                7 => format!("[m](<{rel}>)"),
                8 => format!("[m]({})", file_name(target)),
                9 => format!("[m](./{})", enc(&rel)),
                10 => format!("[[./{}]]", rel.strip_suffix(".md").unwrap_or(&rel)),
                11 => format!("[![i]({})]({})", enc(&rel), enc(stem)),
                _ => format!("`[[{stem}]]` [[{stem}#^b]]"),
            }
        }

        fn vault() -> impl Strategy<Value = (Vec<String>, usize, String, usize, Vec<(usize, usize)>)>
        {
            (
                prop::collection::vec((0..6usize, 0..6usize, prop::bool::weighted(0.15)), 2..9),
                0..9usize,
                (0..6usize, 0..6usize),
                0..9usize,
                prop::collection::vec((0..13usize, 0..12usize), 1..12),
            )
                .prop_filter_map(
                    "need distinct from/to",
                    |(files, from, (tf, tn), note, links)| {
                        let mut paths: Vec<String> =
                            files.iter().map(|(f, n, pdf)| path(*f, *n, *pdf)).collect();
                        paths.sort();
                        paths.dedup();
                        let from = from % paths.len();
                        let ext_pdf = paths[from].ends_with(".pdf");
                        let to = path(tf, tn, ext_pdf);
                        if paths.contains(&to) || paths.len() < 2 {
                            return None;
                        }
                        Some((paths, from, to, note, links))
                    },
                )
        }

        proptest! {
            #[test]
            fn inbound_rewrites_reach_the_new_path((paths, from, to, note, specs) in vault()) {
                let from = paths[from].clone();
                let others: Vec<&String> = paths.iter().filter(|p| **p != from).collect();
                let note = others[note % others.len()].clone();
                let before = PathSet::new(paths.clone());
                let after = PathSet::new(others.iter().map(|p| p.to_string()).chain([to.clone()]));
                let mut text = String::from("---\ntags: [x]\n---\n");
                for (style, target) in &specs {
                    let target = if target % 3 == 0 { from.clone() } else { paths[target % paths.len()].clone() };
                    text.push_str(&format!("- {} tail\n", write_link(*style, &target, &note)));
                }
                let (out, count) = rewrite_inbound(&text, &note, &from, &to, &before, &after);
                let old = links(&text);
                let new = links(&out);
                prop_assert_eq!(old.len(), new.len(), "{}\n=>\n{}", text, out);
                let mut changed = 0;
                for (a, b) in old.iter().zip(&new) {
                    prop_assert_eq!((a.kind, a.embed, &a.fragment, &a.alias), (b.kind, b.embed, &b.fragment, &b.alias));
                    if a.target != b.target {
                        changed += 1;
                    }
                    let was = resolve(&a.target, a.kind, &note, &before);
                    let now = resolve(&b.target, b.kind, &note, &after);
                    if was.as_deref() == Some(from.as_str()) && !a.target.is_empty() {
                        prop_assert_eq!(now.as_deref(), Some(to.as_str()), "{:?} -> {:?}\n{}", a, b, out);
                    } else {
                        prop_assert_eq!(&a.target, &b.target);
                        if now != was {
                            prop_assert_eq!(now.as_deref(), Some(to.as_str()));
                        }
                    }
                }
                prop_assert_eq!(count, changed);
            }

            #[test]
            fn outbound_rewrites_keep_every_target((paths, from, to, _note, specs) in vault()) {
                let from = paths[from].clone();
                prop_assume!(from.ends_with(".md"));
                let before = PathSet::new(paths.clone());
                let after = PathSet::new(
                    paths.iter().filter(|p| **p != from).cloned().chain([to.clone()]),
                );
                let mut text = String::new();
                for (style, target) in &specs {
                    let target = paths[target % paths.len()].clone();
                    text.push_str(&format!("{} [[#Self]]\n", write_link(*style, &target, &from)));
                }
                let (out, _) = rewrite_outbound(&text, &from, &to, &before, &after);
                let old = links(&text);
                let new = links(&out);
                prop_assert_eq!(old.len(), new.len());
                for (a, b) in old.iter().zip(&new) {
                    let Some(was) = resolve(&a.target, a.kind, &from, &before) else { continue };
                    let want = if was == from { to.clone() } else { was };
                    let now = resolve(&b.target, b.kind, &to, &after);
                    prop_assert_eq!(now.as_deref(), Some(want.as_str()), "{:?} -> {:?}", a, b);
                }
            }
        }
    }
}
