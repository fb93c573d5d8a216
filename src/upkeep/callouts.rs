//! Obsidian callouts read out of note text: `> [!type]` blockquotes, their aliases, how urgent
//! each type is, and the vault-wide report of the ones still open.
//!
//! A callout is a blockquote whose first line is `> [!type]`, with an optional fold marker
//! (`+` or `-`) straight after the `]` and an optional title after that. Callouts nested in
//! other blockquotes (`> > [!type]`) are reported on their own, with their nesting depth.
//! Lines are read through the shared line model (`markdown`), which decides what is
//! frontmatter, code and a blockquote marker: a `> [!x]` in frontmatter or code (fenced, also
//! inside a blockquote or list item, or indented) is not a callout.
//!
//! Deliberately not done: lazy continuation lines (text without a `>` that Obsidian still
//! renders inside the quote) end the callout here, and so does a blank line; blockquotes nested
//! deeper than [`MAX_DEPTH`] are not searched. The body is returned as raw Markdown, never
//! rendered. Nothing here reads files or decides which types count as open by default beyond
//! `config::DEFAULT_OPEN_CALLOUTS`; the caller passes the configured list.

use std::collections::{BTreeMap, HashSet};

use crate::markdown::{self, Class};

/// The deepest blockquote nesting searched for callouts: the line model's nesting cap, past
/// which a `>` is text. Real notes never come close.
pub(crate) const MAX_DEPTH: usize = markdown::MAX_NESTING;

/// How urgent a callout type is, most urgent first, so sorting ascending puts the worst on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Severity {
    /// Something is broken or dangerous: danger, bug, failure.
    Critical,
    /// A warning.
    Warning,
    /// Something to do or answer: todo, question.
    Action,
    /// Everything else, unknown types included.
    Info,
}

impl Severity {
    /// The lowercase name used in reports: "critical", "warning", "action" or "info".
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Action => "action",
            Severity::Info => "info",
        }
    }
}

/// Whether the callout is foldable, and how it starts out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Fold {
    /// No marker: always expanded.
    None,
    /// `+`: foldable, expanded at first.
    Open,
    /// `-`: foldable, collapsed at first.
    Closed,
}

impl Fold {
    /// The lowercase name used in reports: "none", "open" or "closed".
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Fold::None => "none",
            Fold::Open => "open",
            Fold::Closed => "closed",
        }
    }
}

/// One callout found in a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callout {
    /// The note's vault-relative path, as given to [`parse`].
    pub(crate) note: String,
    /// 1-based line of the `[!type]` line, counted over the whole file.
    pub line: usize,
    /// The canonical type (aliases resolved, lowercase).
    pub kind: String,
    /// The type as written, lowercased.
    pub(crate) written: String,
    /// How urgent the canonical type is.
    pub(crate) severity: Severity,
    /// The title after the type, or the canonical type capitalised when none was written.
    pub(crate) title: String,
    /// The following lines of the blockquote with one `>` level removed, blank edge lines
    /// trimmed. Nested callouts stay in here as written.
    pub body: String,
    /// The fold marker.
    pub(crate) fold: Fold,
    /// Blockquote nesting depth: 1 at top level, 2 inside one other blockquote, and so on.
    pub(crate) depth: usize,
}

/// The canonical name of a callout type: Obsidian's aliases resolved, everything lowercased.
/// An unknown type comes back as written, lowercased and trimmed.
pub(crate) fn canonical_type(written: &str) -> String {
    let lower = written.trim().to_lowercase();
    let canonical = match lower.as_str() {
        "summary" | "tldr" => "abstract",
        "hint" | "important" => "tip",
        "check" | "done" => "success",
        "help" | "faq" => "question",
        "caution" | "attention" => "warning",
        "fail" | "missing" => "failure",
        "error" => "danger",
        "cite" => "quote",
        _ => return lower,
    };
    canonical.to_string()
}

/// How urgent a type is. Meant for canonical names, but aliases are resolved first anyway so a
/// caller passing `error` still gets `Critical`.
pub(crate) fn severity_of(canonical: &str) -> Severity {
    match canonical_type(canonical).as_str() {
        "danger" | "bug" | "failure" => Severity::Critical,
        "warning" => Severity::Warning,
        "todo" | "question" => Severity::Action,
        _ => Severity::Info,
    }
}

/// Every callout in `text`, in document order (a parent before the callouts nested in it).
/// `note` is copied into each result and not otherwise used.
///
/// One pass over the lines, keeping per nesting depth the blockquote open there and the
/// callout it started: a blockquote at depth `d` is a run of consecutive lines that carry at
/// least `d` markers. A line inside code carries only the markers of the container the code is
/// in, so code never starts or continues a deeper quote. No line is held beyond its own turn,
/// so a note of millions of lines costs no more memory than the callouts it holds.
pub fn parse(note: &str, text: &str) -> Vec<Callout> {
    // `open[d - 1]`: the quote open at depth `d`, with its callout when its first line was a
    // callout header; as many as the previous line had markers.
    let mut open: Vec<Option<Building>> = Vec::new();
    let mut out = Vec::new();
    // Frontmatter lines are YAML, not Markdown: a `> [!x]` in a block scalar is no callout.
    for line in markdown::lines(text).filter(|line| line.class != Class::Frontmatter) {
        let depth = line.quote_depth.min(MAX_DEPTH);
        while open.len() > depth {
            out.extend(open.pop().flatten().map(Building::finish));
        }
        for (k, building) in open.iter_mut().enumerate() {
            if let Some(building) = building {
                building.push(line.after_quotes(k + 1).unwrap_or(""));
            }
        }
        while open.len() < depth {
            let k = open.len() + 1;
            // The header is the quote's own first line: text with exactly this many markers.
            let header =
                (k == depth && line.class == Class::Text).then(|| header(line.quoted())).flatten();
            open.push(header.map(|h| Building::new(note, line.number + 1, h, k)));
        }
    }
    out.extend(open.into_iter().rev().flatten().map(Building::finish));
    out.sort_by_key(|c| (c.line, c.depth));
    out
}

/// A callout whose blockquote is still open: its body so far, blank edge lines left out.
struct Building {
    callout: Callout,
    /// Blank lines after the last line with text: kept only if more text follows.
    blanks: String,
}

impl Building {
    fn new(note: &str, line: usize, header: Header<'_>, depth: usize) -> Building {
        let kind = canonical_type(header.written);
        let title =
            if header.title.is_empty() { capitalise(&kind) } else { header.title.to_string() };
        let callout = Callout {
            note: note.to_string(),
            line,
            severity: severity_of(&kind),
            written: header.written.to_lowercase(),
            kind,
            title,
            body: String::new(),
            fold: header.fold,
            depth,
        };
        Building { callout, blanks: String::new() }
    }

    /// Adds a body line (one marker level removed).
    fn push(&mut self, line: &str) {
        let body = &mut self.callout.body;
        if line.trim().is_empty() {
            if !body.is_empty() {
                self.blanks.push('\n');
                self.blanks.push_str(line);
            }
            return;
        }
        if !body.is_empty() {
            body.push_str(&self.blanks);
            body.push('\n');
        }
        self.blanks.clear();
        body.push_str(line);
    }

    fn finish(self) -> Callout {
        self.callout
    }
}

/// What the `[!type]` line says.
struct Header<'a> {
    written: &'a str,
    fold: Fold,
    title: &'a str,
}

/// Parses the first line of a blockquote (markers already removed, and known to be text, not
/// indented code) as a callout header.
fn header(line: &str) -> Option<Header<'_>> {
    let rest = line.trim_start_matches([' ', '\t']).strip_prefix("[!")?;
    let close = rest.find(']')?;
    let written = &rest[..close];
    // `[!some words]` or `[![x]` is prose or a link, not a type.
    if written.is_empty() || written.contains(|c: char| c.is_whitespace() || c == '[') {
        return None;
    }
    let after = &rest[close + 1..];
    let (fold, after) = if let Some(a) = after.strip_prefix('+') {
        (Fold::Open, a)
    } else if let Some(a) = after.strip_prefix('-') {
        (Fold::Closed, a)
    } else {
        (Fold::None, after)
    };
    Some(Header { written, fold, title: after.trim() })
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The open callouts across a set of notes, with counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Callouts of an open type, by severity, then note path, then line.
    pub(crate) callouts: Vec<Callout>,
    /// How many notes were read.
    pub(crate) notes_scanned: usize,
    /// How many notes hold at least one open callout.
    pub(crate) notes_with_callouts: usize,
    /// Callouts of any type, open or not.
    pub(crate) total: usize,
    /// Open callouts per canonical type.
    pub(crate) by_type: BTreeMap<String, usize>,
    /// The vault script that produced this report (`.scripts/extract_callouts.py`), or `None`
    /// for the built-in parser.
    pub(crate) script: Option<String>,
}

/// Reads the JSON a vault's `extract_callouts.py` printed: a `callouts` list of objects with
/// `note`, `line`, `type`, `severity`, `title` and `body`, kept in the script's order (what is
/// open, and how urgent, is the script's to say). Only notes under `dir` are kept (`""`: all).
/// A severity that is not one of mdvault's four is taken from the type instead.
pub(crate) fn from_script(stdout: &str, dir: &str, script: &str) -> Result<Report, String> {
    let value: serde_json::Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("{script} did not print JSON ({e})"))?;
    let Some(list) = value.get("callouts").and_then(|c| c.as_array()) else {
        return Err(format!("{script} printed JSON without a `callouts` list"));
    };
    let prefix = if dir.is_empty() { String::new() } else { format!("{}/", dir.trim_matches('/')) };
    let text = |v: &serde_json::Value, k: &str| {
        v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string()
    };
    let mut out = Report { script: Some(script.to_string()), ..Report::default() };
    let mut notes = HashSet::new();
    for c in list {
        let note = text(c, "note");
        if !note.starts_with(&prefix) {
            continue;
        }
        let written = text(c, "type").to_lowercase();
        let kind = canonical_type(&written);
        let severity = match text(c, "severity").to_lowercase().as_str() {
            "critical" => Severity::Critical,
            "warning" => Severity::Warning,
            "action" => Severity::Action,
            "info" => Severity::Info,
            _ => severity_of(&kind),
        };
        *out.by_type.entry(kind.clone()).or_default() += 1;
        notes.insert(note.clone());
        out.callouts.push(Callout {
            line: c.get("line").and_then(|l| l.as_u64()).unwrap_or(0) as usize,
            title: text(c, "title"),
            body: text(c, "body"),
            note,
            kind,
            written,
            severity,
            fold: Fold::None,
            depth: 1,
        });
    }
    out.notes_with_callouts = notes.len();
    out.total = out.callouts.len();
    out.notes_scanned = value
        .pointer("/counts/notes_scanned")
        .and_then(|n| n.as_u64())
        .map_or(out.notes_with_callouts, |n| n as usize);
    Ok(out)
}

/// Collects the callouts of the types in `open` from `notes` (vault-relative path, text).
/// `open` may use aliases (`caution` means warning); an empty `open` lists nothing but still
/// counts every callout in `total`.
pub(crate) fn report<I: IntoIterator<Item = (String, String)>>(
    notes: I,
    open: &[String],
) -> Report {
    let open: HashSet<String> = open.iter().map(|t| canonical_type(t)).collect();
    let mut out = Report::default();
    for (path, text) in notes {
        out.notes_scanned += 1;
        let found = parse(&path, &text);
        out.total += found.len();
        let before = out.callouts.len();
        for c in found.into_iter().filter(|c| open.contains(&c.kind)) {
            *out.by_type.entry(c.kind.clone()).or_default() += 1;
            out.callouts.push(c);
        }
        if out.callouts.len() > before {
            out.notes_with_callouts += 1;
        }
    }
    out.callouts.sort_by(|a, b| {
        (a.severity, &a.note, a.line, a.depth).cmp(&(b.severity, &b.note, b.line, b.depth))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Callout {
        let mut all = parse("n.md", text);
        assert_eq!(all.len(), 1, "{all:#?}");
        all.remove(0)
    }

    fn kinds(text: &str) -> Vec<(String, usize, usize)> {
        parse("n.md", text).into_iter().map(|c| (c.kind, c.line, c.depth)).collect()
    }

    fn open(types: &[&str]) -> Vec<String> {
        types.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn plain_callout_with_title() {
        let c = one("# Note\n\n> [!warning] Boiler pressure low\n> Top it up to 1.5 bar.\n");
        assert_eq!(c.note, "n.md");
        assert_eq!(c.line, 3);
        assert_eq!(c.kind, "warning");
        assert_eq!(c.written, "warning");
        assert_eq!(c.severity, Severity::Warning);
        assert_eq!(c.title, "Boiler pressure low");
        assert_eq!(c.body, "Top it up to 1.5 bar.");
        assert_eq!(c.fold, Fold::None);
        assert_eq!(c.depth, 1);
    }

    #[test]
    fn missing_title_is_the_capitalised_canonical_type() {
        let c = one("> [!todo]\n> call the plumber\n");
        assert_eq!(c.title, "Todo");
        assert_eq!(c.body, "call the plumber");
        assert_eq!(one("> [!caution]   \n").title, "Warning");
        assert_eq!(one("> [!my-type]\n").title, "My-type");
    }

    #[test]
    fn fold_markers() {
        let c = one("> [!note]+ Expanded\n> x\n");
        assert_eq!((c.fold, c.title.as_str()), (Fold::Open, "Expanded"));
        let c = one("> [!note]- Collapsed\n> x\n");
        assert_eq!((c.fold, c.title.as_str()), (Fold::Closed, "Collapsed"));
        let c = one("> [!faq]-\n> x\n");
        assert_eq!((c.fold, c.title.as_str()), (Fold::Closed, "Question"));
        assert_eq!(Fold::None.as_str(), "none");
        assert_eq!(Fold::Open.as_str(), "open");
        assert_eq!(Fold::Closed.as_str(), "closed");
    }

    #[test]
    fn aliases_resolve_to_canonical_types_and_severities() {
        let c = one("> [!caution] Mind the step\n");
        assert_eq!((c.kind.as_str(), c.written.as_str()), ("warning", "caution"));
        assert_eq!(c.severity, Severity::Warning);
        let c = one("> [!error]\n");
        assert_eq!(
            (c.kind.as_str(), c.severity, c.title.as_str()),
            ("danger", Severity::Critical, "Danger")
        );
        let c = one("> [!faq]\n");
        assert_eq!((c.kind.as_str(), c.severity), ("question", Severity::Action));
        let table = [
            ("summary", "abstract"),
            ("tldr", "abstract"),
            ("hint", "tip"),
            ("important", "tip"),
            ("check", "success"),
            ("done", "success"),
            ("help", "question"),
            ("attention", "warning"),
            ("fail", "failure"),
            ("missing", "failure"),
            ("cite", "quote"),
            ("bug", "bug"),
            ("example", "example"),
            ("info", "info"),
            ("Custom-Thing", "custom-thing"),
        ];
        for (written, canonical) in table {
            assert_eq!(canonical_type(written), canonical, "{written}");
        }
    }

    #[test]
    fn severities() {
        for t in ["danger", "bug", "failure", "error", "fail"] {
            assert_eq!(severity_of(t), Severity::Critical, "{t}");
        }
        assert_eq!(severity_of("warning"), Severity::Warning);
        assert_eq!(severity_of("todo"), Severity::Action);
        assert_eq!(severity_of("question"), Severity::Action);
        for t in ["note", "tip", "success", "quote", "example", "abstract", "unknown"] {
            assert_eq!(severity_of(t), Severity::Info, "{t}");
        }
        assert!(Severity::Critical < Severity::Warning);
        assert!(Severity::Warning < Severity::Action);
        assert!(Severity::Action < Severity::Info);
        let names: Vec<&str> =
            [Severity::Critical, Severity::Warning, Severity::Action, Severity::Info]
                .iter()
                .map(|s| s.as_str())
                .collect();
        assert_eq!(names, ["critical", "warning", "action", "info"]);
    }

    #[test]
    fn types_are_case_insensitive() {
        let c = one("> [!WARNING] Loud\n");
        assert_eq!((c.kind.as_str(), c.written.as_str()), ("warning", "warning"));
        let c = one("> [!Todo]\n");
        assert_eq!((c.kind.as_str(), c.title.as_str()), ("todo", "Todo"));
        assert_eq!(one("> [!CAUTION]\n").kind, "warning");
    }

    #[test]
    fn multi_line_body_keeps_inner_blank_lines_and_trims_the_edges() {
        let text = "> [!note] T\n>\n> first\n>   indented\n>\n> second\n>  \n>\nafter\n";
        let c = one(text);
        assert_eq!(c.body, "first\n  indented\n\nsecond");
        let c = one("> [!note] T\r\n> crlf body\r\n");
        assert_eq!(c.body, "crlf body");
        assert_eq!(one("> [!note] only a title\n").body, "");
    }

    #[test]
    fn nested_callouts_are_reported_and_stay_in_the_parent_body() {
        let text = "> [!todo] Outer\n> before\n> > [!bug] Inner\n> > inner body\n> after\n";
        let all = parse("n.md", text);
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].kind.as_str(), all[0].depth, all[0].line), ("todo", 1, 1));
        assert_eq!(all[0].body, "before\n> [!bug] Inner\n> inner body\nafter");
        assert_eq!((all[1].kind.as_str(), all[1].depth, all[1].line), ("bug", 2, 3));
        assert_eq!(all[1].title, "Inner");
        assert_eq!(all[1].body, "inner body");
        // Markers written without spaces nest the same way.
        assert_eq!(
            kinds(">[!note]\n>>[!tip] x\n>>> [!bug]\n"),
            [("note".to_string(), 1, 1), ("tip".to_string(), 2, 2), ("bug".to_string(), 3, 3)]
        );
        // A callout nested in a plain blockquote is still a callout, at depth 2.
        assert_eq!(kinds("> plain quote\n>\n> > [!warning]\n"), [("warning".to_string(), 3, 2)]);
    }

    #[test]
    fn callouts_in_fenced_code_are_ignored() {
        let text = "```md\n> [!bug] not real\n```\n~~~\n> [!bug] nor this\n~~~\n> [!note] real\n";
        assert_eq!(kinds(text), [("note".to_string(), 7, 1)]);
        // A longer fence is only closed by one at least as long.
        let text = "````\n```\n> [!bug] still code\n````\n> [!tip]\n";
        assert_eq!(kinds(text), [("tip".to_string(), 5, 1)]);
        // An unclosed fence runs to the end of the note.
        assert_eq!(kinds("```\n> [!bug]\n"), []);
        // Inline code with three backticks is not a fence.
        assert_eq!(kinds("```inline``` text\n> [!tip]\n"), [("tip".to_string(), 2, 1)]);
    }

    #[test]
    fn fences_inside_blockquotes_hide_callouts_too() {
        let text = "> [!example] Syntax\n> ```\n> > [!bug] shown as code\n> ```\n> > [!tip] real\n";
        let all = parse("n.md", text);
        let got: Vec<(&str, usize)> = all.iter().map(|c| (c.kind.as_str(), c.line)).collect();
        assert_eq!(got, [("example", 1), ("tip", 5)]);
        assert!(all[0].body.contains("> [!bug] shown as code"));
        // A fence left open inside a blockquote ends with the blockquote.
        assert_eq!(kinds("> ```\n> > [!bug]\n\n> [!note]\n"), [("note".to_string(), 4, 1)]);
    }

    #[test]
    fn code_and_containers_are_the_line_model_s() {
        // A fence inside a list item hides its callout; a quote inside a list item is a quote,
        // so its callout counts; indented code inside a quote is no header.
        let text = "- step\n\n    ```\n    > [!bug] code\n    ```\n\n- > [!tip] in an item\n\n\
                    >     [!bug] indented code\n";
        assert_eq!(kinds(text), [("tip".to_string(), 7, 1)]);
    }

    #[test]
    fn frontmatter_is_skipped_but_counted_in_line_numbers() {
        let text = "---\nnote: |\n  > [!x] in yaml\n---\n> [!tip] after\n";
        assert_eq!(kinds(text), [("tip".to_string(), 5, 1)]);
        let text = "\u{feff}---\ntitle: t\n---\n> [!tip]\n";
        assert_eq!(kinds(text), [("tip".to_string(), 4, 1)]);
        // No frontmatter: a BOM in front of the first line does not hide its callout.
        assert_eq!(kinds("\u{feff}> [!tip]\n"), [("tip".to_string(), 1, 1)]);
    }

    #[test]
    fn only_the_first_line_of_a_blockquote_can_open_a_callout() {
        assert_eq!(kinds("> Just a quote\n> [!warning] not a callout\n"), []);
        assert_eq!(kinds("Text [!warning] inline\n"), []);
        assert_eq!(kinds("> [!some words] prose\n> [![img]]\n"), []);
        assert_eq!(kinds("> [!]\n> [!unclosed\n"), []);
    }

    #[test]
    fn blank_lines_separate_callouts() {
        let text = "> [!todo] One\n> a\n\n> [!todo] Two\n> b\n";
        let all = parse("n.md", text);
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].title.as_str(), all[0].body.as_str(), all[0].line), ("One", "a", 1));
        assert_eq!((all[1].title.as_str(), all[1].body.as_str(), all[1].line), ("Two", "b", 4));
        // Without the blank line the second header is body text of the first.
        let all = parse("n.md", "> [!todo] One\n> [!todo] Two\n");
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].body, "[!todo] Two");
    }

    #[test]
    fn lazy_continuation_ends_the_callout() {
        let c = one("> [!note] T\n> inside\nlazy line\n> new quote\n");
        assert_eq!(c.body, "inside");
    }

    #[test]
    fn indentation_before_the_marker() {
        assert_eq!(kinds("   > [!tip]\n"), [("tip".to_string(), 1, 1)]);
        assert_eq!(kinds(">    [!tip]\n"), [("tip".to_string(), 1, 1)]);
        assert_eq!(kinds("    > [!tip] indented code\n"), []);
        assert_eq!(kinds("\t> [!tip] indented code\n"), []);
    }

    #[test]
    fn hostile_input_does_not_panic() {
        let deep = format!("{}[!bug]\n", ">".repeat(10_000));
        assert_eq!(parse("n.md", &deep), []);
        let shallow = format!("{}[!bug]\n", ">".repeat(MAX_DEPTH));
        assert_eq!(kinds(&shallow), [("bug".to_string(), 1, MAX_DEPTH)]);
        for text in ["", ">", "> [!", "> [!]-", "> [!é]+ ü", "---\n", "---\n---", "```", "~~~~\n>"]
        {
            let _ = parse("n.md", text);
        }
        assert_eq!(one("> [!é]+ ü").kind, "é");
    }

    #[test]
    fn report_filters_sorts_and_counts() {
        let notes = vec![
            ("b.md".to_string(), "> [!note] info only\n\n> [!todo] B todo\n".to_string()),
            (
                "a.md".to_string(),
                "> [!tip] x\n\n> [!caution] A warn\n\n> [!error] A danger\n\n> [!faq] A q\n"
                    .to_string(),
            ),
            ("c.md".to_string(), "no callouts here\n".to_string()),
            ("d.md".to_string(), "> [!bug] D bug\n".to_string()),
        ];
        let r = report(notes.clone(), &open(&["Danger", "bug", "caution", "todo", "question"]));
        assert_eq!(r.notes_scanned, 4);
        assert_eq!(r.total, 7);
        assert_eq!(r.notes_with_callouts, 3);
        let got: Vec<(&str, &str, usize)> =
            r.callouts.iter().map(|c| (c.severity.as_str(), c.note.as_str(), c.line)).collect();
        assert_eq!(
            got,
            [
                ("critical", "a.md", 5),
                ("critical", "d.md", 1),
                ("warning", "a.md", 3),
                ("action", "a.md", 7),
                ("action", "b.md", 3),
            ]
        );
        let by_type: Vec<(&str, usize)> = r.by_type.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            by_type,
            [("bug", 1), ("danger", 1), ("question", 1), ("todo", 1), ("warning", 1)]
        );

        let r = report(notes.clone(), &open(&["tip"]));
        assert_eq!((r.callouts.len(), r.notes_with_callouts, r.total), (1, 1, 7));
        let r = report(notes, &[]);
        assert_eq!((r.callouts.len(), r.notes_with_callouts, r.total), (0, 0, 7));
        assert!(r.by_type.is_empty());

        let defaults: Vec<String> =
            crate::config::DEFAULT_OPEN_CALLOUTS.iter().map(|s| s.to_string()).collect();
        let r =
            report(vec![("x.md".to_string(), "> [!note]\n\n> [!done]\n".to_string())], &defaults);
        assert_eq!((r.callouts.len(), r.total, r.notes_scanned), (0, 2, 1));
    }
}
