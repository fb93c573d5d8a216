//! Frontmatter values read by scanning the block's lines, never by parsing the YAML.
//!
//! `/frontmatter?key=&value=` and the titles and descriptions in the generated `index.md` must
//! keep working on notes whose YAML is broken, so these functions look only at the lines of
//! the key they are asked about. They understand the shapes people actually write: `key: v`,
//! `key: [a, "b"]`, `key:` followed by indented `- item` lines, and folded scalars spread over
//! indented lines.
//!
//! Deliberately not done (the documented limits): a column-0 `- item` list under a key is not
//! read as items; a trailing ` # comment` stays part of the value; escapes inside quotes are
//! not decoded (only one pair of outer quotes is removed); anchors, aliases, tags and nested
//! mappings are not interpreted; when a key appears twice only its first occurrence is read.

use crate::vault::frontmatter::locate;

/// Every value of `key` as strings, or None when the note has no block or no such key.
///
/// `key: v` gives `[v]`, `key: [a, b]` gives each item, and a bare `key:` gives the indented
/// `- item` lines below it (none: an empty list). A block-scalar value (`key: >-` and indented
/// lines) gives one value, folded as [`scalar`] folds it.
pub(crate) fn values(text: &str, key: &str) -> Option<Vec<String>> {
    let (inline, rest) = find(text, key)?;
    if is_block_header(inline) {
        return Some(vec![fold(&rest)]);
    }
    if inline.is_empty() {
        return Some(block_items(&rest));
    }
    if let Some(inner) = inline.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        return Some(flow_items(inner));
    }
    Some(vec![unquote(inline).to_string()])
}

/// True when one of `key`'s values equals `value` exactly (after the quote stripping below).
///
/// The comparison is exact: case-sensitive and whole-value, so `proj` does not match
/// `project`.
pub(crate) fn matches(text: &str, key: &str, value: &str) -> bool {
    values(text, key).is_some_and(|found| found.iter().any(|v| v == value))
}

/// One folded scalar for display (title, description); None when absent or empty.
///
/// The value on the key's line and every indented line after it are joined with single
/// spaces; a block-scalar header (`>`, `|-`, `>2`, ...) is dropped, and one pair of matching
/// outer quotes is removed from the result.
pub(crate) fn scalar(text: &str, key: &str) -> Option<String> {
    let (inline, rest) = find(text, key)?;
    let folded = if is_block_header(inline) {
        fold(&rest)
    } else {
        let tail = fold(&rest);
        match (inline.is_empty(), tail.is_empty()) {
            (_, true) => inline.to_string(),
            (true, false) => tail,
            (false, false) => format!("{inline} {tail}"),
        }
    };
    let out = unquote(&folded).trim();
    (!out.is_empty()).then(|| out.to_string())
}

/// The key's line: the trimmed text after its colon, and the block lines after it.
fn find<'a>(text: &'a str, key: &str) -> Option<(&'a str, Vec<&'a str>)> {
    // An empty key would match a stray `: x` line; no caller means that.
    if key.trim().is_empty() {
        return None;
    }
    let block = locate(text)?;
    let lines: Vec<&str> = text[block.yaml_start..block.yaml_end].lines().collect();
    let at = lines.iter().position(|line| after_key(line, key).is_some())?;
    let inline = after_key(lines[at], key)?.trim();
    Some((inline, lines[at + 1..].to_vec()))
}

/// For a column-0 `key:` line, what follows the colon. Spaces before the colon are tolerated;
/// after it a space, a tab or the end of the line is required, as YAML requires (`a:b` is a
/// plain string, not a key).
fn after_key<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(key)?.trim_start_matches([' ', '\t']).strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some(rest)
}

/// The lines that continue a key: everything up to the next non-blank column-0 line.
fn continuation<'a>(rest: &[&'a str]) -> impl Iterator<Item = &'a str> {
    rest.iter().take_while(|line| line.trim().is_empty() || line.starts_with([' ', '\t'])).copied()
}

/// The indented `- item` lines under a bare `key:`. Items must share the first item's
/// indentation, so the lines of a nested list or of an item's own fields are not mistaken for
/// items; blank lines between items are allowed, as in YAML.
fn block_items(rest: &[&str]) -> Vec<String> {
    let mut indent = None;
    let mut items = Vec::new();
    for line in continuation(rest) {
        let body = line.trim_start_matches([' ', '\t']);
        let depth = line.len() - body.len();
        let Some(item) = list_item(body) else { continue };
        if *indent.get_or_insert(depth) == depth {
            items.push(unquote(item.trim()).to_string());
        }
    }
    items
}

/// The text of a `- item` line (indentation already removed), if it is one.
fn list_item(body: &str) -> Option<&str> {
    if body == "-" {
        return Some("");
    }
    let item = body.strip_prefix('-')?;
    item.starts_with([' ', '\t']).then_some(item)
}

/// The items of a flow list's inside (`a, "b, c", 'd'`), split at commas outside quotes.
fn flow_items(inner: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in inner.char_indices() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ',' => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            None => {}
        }
    }
    items.push(&inner[start..]);
    // `[]` and a trailing comma leave empty pieces; an explicit `""` is kept.
    items
        .into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| unquote(s).to_string())
        .collect()
}

/// True for a YAML block-scalar header: `|` or `>`, then at most one chomping indicator and one
/// indentation digit in either order, optionally followed by a comment.
fn is_block_header(inline: &str) -> bool {
    let (token, after) = inline.split_once([' ', '\t']).unwrap_or((inline, ""));
    let after = after.trim();
    if !(after.is_empty() || after.starts_with('#')) {
        return false;
    }
    let Some(flags) = token.strip_prefix(['|', '>']) else { return false };
    let chomp = flags.chars().filter(|c| matches!(c, '+' | '-')).count();
    let digit = flags.chars().filter(|c| matches!(c, '1'..='9')).count();
    chomp <= 1 && digit <= 1 && flags.chars().count() == chomp + digit
}

/// The continuation lines, trimmed and joined with single spaces (blank lines dropped).
fn fold(rest: &[&str]) -> String {
    continuation(rest).map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Removes one pair of matching outer quotes (`"` or `'`), if present.
fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if s.len() >= 2
            && let Some(inner) = s.strip_prefix(q).and_then(|s| s.strip_suffix(q))
        {
            return inner;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(yaml: &str) -> String {
        format!("---\n{yaml}---\n# Body\nkey: not frontmatter\n")
    }

    fn vals(yaml: &str, key: &str) -> Option<Vec<String>> {
        values(&fm(yaml), key)
    }

    fn v(items: &[&str]) -> Option<Vec<String>> {
        Some(items.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn inline_values() {
        assert_eq!(vals("status: draft\n", "status"), v(&["draft"]));
        assert_eq!(vals("status:   spaced out  \n", "status"), v(&["spaced out"]));
        assert_eq!(vals("status: \"quoted\"\n", "status"), v(&["quoted"]));
        assert_eq!(vals("status: 'single'\n", "status"), v(&["single"]));
        assert_eq!(vals("status: \"mismatched'\n", "status"), v(&["\"mismatched'"]));
        assert_eq!(vals("status: \"\"\n", "status"), v(&[""]));
        assert_eq!(vals("status : spaced key\n", "status"), v(&["spaced key"]));
        assert_eq!(vals("status:\tx\n", "status"), v(&["x"]));
        // Comments are not stripped: the documented limit.
        assert_eq!(vals("status: done # really\n", "status"), v(&["done # really"]));
        // `status:x` is a plain string in YAML, not the key.
        assert_eq!(vals("status:x\n", "status"), None);
    }

    #[test]
    fn flow_lists_split_outside_quotes() {
        assert_eq!(vals("tags: [a, b, \"c\"]\n", "tags"), v(&["a", "b", "c"]));
        assert_eq!(
            vals("tags: [ 'x, y' , \"say \\\"hi, there\\\"\", z, ]\n", "tags"),
            v(&["x, y", "say \\\"hi, there\\\"", "z"])
        );
        assert_eq!(vals("tags: []\n", "tags"), v(&[]));
        assert_eq!(vals("tags: [\"\"]\n", "tags"), v(&[""]));
        // Unclosed: one plain value, as written.
        assert_eq!(vals("tags: [a, b\n", "tags"), v(&["[a, b"]));
    }

    #[test]
    fn indented_block_lists() {
        let yaml = "aliases:\n  - First\n  - \"Second\"\n\n  - 'Third'\n  -\nnext: 1\n";
        assert_eq!(vals(yaml, "aliases"), v(&["First", "Second", "Third", ""]));
        assert_eq!(vals("tags:\n\t- tabbed\n", "tags"), v(&["tabbed"]));
        // An item's own fields and nested lists are not items of the key.
        let yaml = "expires:\n  - date: 2026-01-01\n    what: x\n    - nested\n  - date: 2027\n";
        assert_eq!(vals(yaml, "expires"), v(&["date: 2026-01-01", "date: 2027"]));
        // `-x` is not an item marker.
        assert_eq!(vals("tags:\n  -x\n  - y\n", "tags"), v(&["y"]));
    }

    #[test]
    fn column_zero_list_is_not_recognised() {
        assert_eq!(vals("tags:\n- a\n- b\n", "tags"), v(&[]));
    }

    #[test]
    fn bare_missing_and_absent() {
        assert_eq!(vals("tags:\ntitle: t\n", "tags"), v(&[]));
        assert_eq!(vals("tags:\n", "tags"), v(&[]));
        assert_eq!(vals("title: t\n", "tags"), None);
        assert_eq!(values("# no frontmatter\ntags: [a]\n", "tags"), None);
        assert_eq!(values("---\ntags: [a]\n", "tags"), None, "unclosed block");
        assert_eq!(vals("  tags: [a]\n", "tags"), None, "indented is not a top-level key");
        assert_eq!(vals(": x\n", ""), None);
        assert_eq!(vals("# tags: [a]\n", "tags"), None);
    }

    #[test]
    fn bom_and_crlf_notes() {
        let text = "\u{feff}---\r\ntags: [a, b]\r\ntitle: \"T\"\r\n---\r\n";
        assert_eq!(values(text, "tags"), v(&["a", "b"]));
        assert_eq!(scalar(text, "title").as_deref(), Some("T"));
        assert!(matches(text, "tags", "b"));
    }

    #[test]
    fn key_prefixes_do_not_match() {
        let yaml = "tag: single\ntags_extra: [x]\ntags: [a]\n";
        assert_eq!(vals(yaml, "tag"), v(&["single"]));
        assert_eq!(vals(yaml, "tags"), v(&["a"]));
        assert_eq!(vals("tags: [a]\n", "tag"), None);
        assert_eq!(vals("tag: a\n", "tags"), None);
    }

    #[test]
    fn broken_yaml_still_answers() {
        let yaml = "title: [unclosed\ntags: [a]\n: nonsense\nstatus: ok\n";
        assert_eq!(vals(yaml, "tags"), v(&["a"]));
        assert_eq!(vals(yaml, "status"), v(&["ok"]));
        // Duplicates: the first occurrence wins.
        assert_eq!(vals("s: 1\ns: 2\n", "s"), v(&["1"]));
    }

    #[test]
    fn matches_is_exact() {
        let text = fm("tags: [project, Home]\nstatus: \"active\"\naliases:\n  - Boiler\n");
        assert!(matches(&text, "tags", "project"));
        assert!(!matches(&text, "tags", "proj"));
        assert!(!matches(&text, "tags", "projects"));
        assert!(!matches(&text, "tags", "home"));
        assert!(matches(&text, "tags", "Home"));
        assert!(matches(&text, "status", "active"));
        assert!(!matches(&text, "status", "\"active\""));
        assert!(matches(&text, "aliases", "Boiler"));
        assert!(!matches(&text, "missing", "x"));
        assert!(!matches("no block\n", "tags", "project"));
        assert!(matches(&fm("flag: \"\"\n"), "flag", ""));
        assert!(!matches(&fm("flag:\n"), "flag", ""));
    }

    #[test]
    fn scalar_folds_plain_and_quoted_values() {
        assert_eq!(scalar(&fm("title: Boiler\n"), "title").as_deref(), Some("Boiler"));
        let yaml = "description: first line\n  second line\n\n  third\ntitle: t\n";
        assert_eq!(
            scalar(&fm(yaml), "description").as_deref(),
            Some("first line second line third")
        );
        let yaml = "description: \"quoted across\n  two lines\"\n";
        assert_eq!(scalar(&fm(yaml), "description").as_deref(), Some("quoted across two lines"));
        let yaml = "description:\n  starts below\n  the key\n";
        assert_eq!(scalar(&fm(yaml), "description").as_deref(), Some("starts below the key"));
        assert_eq!(scalar(&fm("title: 'It''s'\n"), "title").as_deref(), Some("It''s"));
    }

    #[test]
    fn scalar_drops_block_headers() {
        for header in [">-", "|", ">", "|+", ">2", "|2-", ">-2", ">+1", "| # comment"] {
            let yaml = format!("description: {header}\n  Folded text\n  over lines.\nnext: x\n");
            assert_eq!(
                scalar(&fm(&yaml), "description").as_deref(),
                Some("Folded text over lines."),
                "{header}"
            );
            assert_eq!(vals(&yaml, "description"), v(&["Folded text over lines."]), "{header}");
        }
        // Not headers: kept as text.
        for value in [">>", "|+-+", ">12", "> quoted text"] {
            let yaml = format!("description: {value}\n");
            assert_eq!(scalar(&fm(&yaml), "description").as_deref(), Some(value), "{value}");
        }
    }

    #[test]
    fn scalar_empty_is_none() {
        assert_eq!(scalar(&fm("title:\n"), "title"), None);
        assert_eq!(scalar(&fm("title: \"\"\n"), "title"), None);
        assert_eq!(scalar(&fm("title: '  '\n"), "title"), None);
        assert_eq!(scalar(&fm("title: >-\n\ntags: [a]\n"), "title"), None);
        assert_eq!(scalar(&fm("tags: [a]\n"), "title"), None);
        assert_eq!(scalar("# no block\ntitle: x\n", "title"), None);
    }

    #[test]
    fn odd_input_does_not_panic() {
        for text in [
            "",
            "---",
            "---\n---",
            "---\nk\n---\n",
            "---\nk: [\"\n---\n",
            "---\nk: '\n---\n",
            "---\nk: \"\\\n---\n",
            "---\nk: é\n  ü\n---\n",
        ] {
            let _ = values(text, "k");
            let _ = scalar(text, "k");
            let _ = matches(text, "k", "x");
        }
        assert_eq!(values("---\nk: \"\n---\n", "k"), v(&["\""]));
    }
}
