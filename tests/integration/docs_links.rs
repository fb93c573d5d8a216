//! The documentation's links: every relative Markdown link in `README.md`, `ARCHITECTURE.md`
//! and `docs/*.md` reaches a file in the repository, and every `#anchor` names a heading of its
//! target, slugged the way GitHub slugs headings.
//!
//! Links to other sites (`http:`, `https:`, `mailto:`, `obsidian:`) are not followed, and
//! nothing inside fenced code blocks or inline code is a link. Only ATX headings (`# ...`)
//! make anchors. Needs no model and no network.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What a link's path leads to.
enum Target {
    Missing,
    Folder,
    /// A file, with its text when it is Markdown (empty otherwise).
    File(String),
}

/// Schemes whose links point outside the repository and are not checked.
const EXTERNAL: &[&str] = &["http://", "https://", "mailto:", "obsidian://"];

/// The text with every fenced code block blanked out, line breaks kept so line numbers hold.
fn without_fences(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fence: Option<(char, usize)> = None;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |c| trimmed.chars().take_while(|x| *x == c).count());
        let blank = match (fence, marker) {
            (None, Some(c)) if run >= 3 => {
                fence = Some((c, run));
                true
            }
            (Some((c, n)), Some(m))
                if m == c && run >= n && trimmed[run * c.len_utf8()..].trim().is_empty() =>
            {
                fence = None;
                true
            }
            (Some(_), _) => true,
            (None, _) => false,
        };
        if blank {
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The text with every inline code span (backticks included) blanked out. A span may cross a
/// line break but not a blank line; an unmatched run of backticks is literal text.
fn without_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = chars.clone();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '\n'
                && chars[j + 1..].iter().take_while(|c| **c != '\n').all(|c| c.is_whitespace())
            {
                break;
            }
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    close = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                for c in &mut out[i..end] {
                    if *c != '\n' {
                        *c = ' ';
                    }
                }
                i = end;
            }
            None => i += n,
        }
    }
    out.into_iter().collect()
}

/// Every link destination outside code, with its line: inline links and images
/// (`[text](dest "title")`) and reference definitions (`[label]: dest`).
fn links(markdown: &str) -> Vec<(usize, String)> {
    let text = without_code_spans(&without_fences(markdown));
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (at, _) in text.match_indices("](") {
        let rest = &text[at + 2..];
        let dest = if let Some(inner) = rest.strip_prefix('<') {
            inner.split('>').next().unwrap_or("").to_string()
        } else {
            let mut depth = 0usize;
            let end = rest
                .char_indices()
                .find(|&(_, c)| match c {
                    '(' => {
                        depth += 1;
                        false
                    }
                    ')' if depth == 0 => true,
                    ')' => {
                        depth -= 1;
                        false
                    }
                    c => c.is_whitespace(),
                })
                .map_or(rest.len(), |(i, _)| i);
            rest[..end].to_string()
        };
        found.push((at, dest));
    }
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some((label, def)) = trimmed.strip_prefix('[').and_then(|t| t.split_once("]:"))
            && !label.is_empty()
            && !label.contains(']')
        {
            let dest = def.split_whitespace().next().unwrap_or("");
            found.push((start, dest.trim_start_matches('<').trim_end_matches('>').to_string()));
        }
        start += line.len();
    }
    found.sort();
    found.into_iter().map(|(at, dest)| (line_of(at), dest)).collect()
}

/// A heading's anchor as GitHub makes it: the rendered text (code marks, emphasis and link
/// syntax gone), lowercased, spaces turned into `-`, and every other character that is not a
/// letter, a digit, `-` or `_` dropped.
fn slug(heading: &str) -> String {
    let mut rendered = String::new();
    let mut rest = heading;
    // A link renders as its text: `[text](url)` -> `text`.
    while let Some(open) = rest.find('[') {
        rendered.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find("](")
            .and_then(|close| after[close + 2..].find(')').map(|end| (close, close + 2 + end + 1)))
        {
            Some((close, next)) => {
                rendered.push_str(&after[..close]);
                rest = &after[next..];
            }
            None => {
                rendered.push('[');
                rest = after;
            }
        }
    }
    rendered.push_str(rest);
    rendered
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every heading anchor of a Markdown text; a repeated heading gets `-1`, `-2`, ... as on
/// GitHub.
fn anchors(markdown: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for line in without_fences(markdown).lines() {
        let trimmed = line.trim_start();
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&level) {
            continue;
        }
        let text = &trimmed[level..];
        if !(text.is_empty() || text.starts_with(' ') || text.starts_with('\t')) {
            continue;
        }
        let text = text.trim().trim_end_matches('#').trim_end();
        let base = slug(text);
        let count = seen.entry(base.clone()).or_insert(0);
        out.push(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
        *count += 1;
    }
    out
}

/// `%XX` escapes decoded (a link to `My%20Note.md` means `My Note.md`).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The repository-relative path a link in `source` points at, or `None` when it climbs out of
/// the repository. A leading `/` means the repository root, as on GitHub.
fn resolve(source: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    if !path.starts_with('/') {
        parts.extend(source.split('/').collect::<Vec<_>>().split_last().map_or(&[][..], |s| s.1));
    }
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// Every broken link of one Markdown file, as `source:line: link: why`. `source` is the file's
/// repository-relative path; `lookup` says what a repository-relative path leads to.
fn broken_links(source: &str, markdown: &str, lookup: &dyn Fn(&str) -> Target) -> Vec<String> {
    let mut broken = Vec::new();
    for (line, dest) in links(markdown) {
        if EXTERNAL.iter().any(|scheme| dest.to_ascii_lowercase().starts_with(scheme)) {
            continue;
        }
        let (path, anchor) = match dest.split_once('#') {
            Some((p, a)) => (p, Some(percent_decoded(a))),
            None => (dest.as_str(), None),
        };
        let path = path.split('?').next().unwrap_or("");
        let mut report = |why: String| broken.push(format!("{source}:{line}: ({dest}): {why}"));
        let (target, text) = if path.is_empty() {
            (source.to_string(), markdown.to_string())
        } else {
            let Some(target) = resolve(source, &percent_decoded(path)) else {
                report("leaves the repository".into());
                continue;
            };
            match lookup(&target) {
                Target::Missing => {
                    report(format!("no file {target}"));
                    continue;
                }
                Target::Folder if anchor.is_some() => {
                    report(format!("{target} is a folder and has no headings"));
                    continue;
                }
                Target::Folder => continue,
                Target::File(text) => (target, text),
            }
        };
        let Some(anchor) = anchor else { continue };
        if target.ends_with(".md") {
            if !anchors(&text).contains(&anchor) {
                report(format!("{target} has no heading #{anchor}"));
            }
        } else if !is_line_anchor(&anchor) {
            report(format!("{target} is not Markdown, so #{anchor} names no heading"));
        }
    }
    broken
}

/// GitHub's line anchors on a source file: `L12` or `L12-L20`.
fn is_line_anchor(anchor: &str) -> bool {
    let line = |s: &str| s.strip_prefix('L').is_some_and(|n| n.parse::<u32>().is_ok());
    match anchor.split_once('-') {
        Some((a, b)) => line(a) && line(b),
        None => line(anchor),
    }
}

/// The repository's documentation: README.md, ARCHITECTURE.md and every `docs/*.md`.
fn documentation(root: &Path) -> Vec<String> {
    let mut files = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    let mut pages: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("a docs/ folder")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

#[test]
fn every_relative_link_in_the_docs_reaches_a_file_and_heading() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lookup = |rel: &str| {
        let path = root.join(rel);
        if path.is_dir() {
            Target::Folder
        } else if path.is_file() {
            let markdown = rel.ends_with(".md");
            Target::File(if markdown {
                std::fs::read_to_string(&path).unwrap()
            } else {
                String::new()
            })
        } else {
            Target::Missing
        }
    };
    let mut broken = Vec::new();
    let mut checked = BTreeMap::new();
    for source in documentation(root) {
        let text = std::fs::read_to_string(root.join(&source)).unwrap();
        checked.insert(source.clone(), links(&text).len());
        broken.extend(broken_links(&source, &text, &lookup));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // The README and every reference page link onward; finding none means the parser broke.
    let silent: Vec<_> =
        checked.iter().filter(|(f, n)| **n == 0 && *f != "ARCHITECTURE.md").collect();
    assert!(silent.is_empty(), "no links found in {silent:?}");
    assert!(checked.len() >= 3, "the docs/ pages were not found: {checked:?}");
}

#[test]
fn the_checker_reports_a_missing_file_a_missing_heading_and_nothing_in_code() {
    let files: HashMap<&str, &str> = HashMap::from([
        ("docs/guide.md", "# Guide\n\n## Exit codes, colour and JSON\n\n## Notes\n## Notes\n"),
        ("docs/img.png", ""),
        ("src/main.rs", "fn main() {}\n"),
    ]);
    let lookup = |rel: &str| match files.get(rel) {
        Some(text) => Target::File(text.to_string()),
        None if rel == "docs" || rel == "src" => Target::Folder,
        None => Target::Missing,
    };
    let sample = "\
# Sample

Good: [guide](docs/guide.md), [a heading](docs/guide.md#exit-codes-colour-and-json),
[the second Notes](docs/guide.md#notes-1), ![an image](docs/img.png), [here](#sample),
[source](src/main.rs#L1), [a folder](src/) and <https://example.org>.
Elsewhere: [site](https://example.org/x), [mail](mailto:a@b.c), [note](obsidian://open?x=1).

Broken: [gone](docs/missing.md), [no heading](docs/guide.md#nowhere), [no self](#nope),
[out](../../outside.md), [dir anchor](src#x).

`[in code](docs/missing-in-code.md)` and ``a `[nested](docs/x.md)` span``.

```md
[in a fence](docs/missing-in-fence.md)
```

[ref]: docs/also-missing.md
";
    let broken = broken_links("README.md", sample, &lookup);
    let reasons: Vec<&str> =
        broken.iter().map(|b| b.split_once(": (").unwrap().1.split_once(')').unwrap().0).collect();
    assert_eq!(
        reasons,
        [
            "docs/missing.md",
            "docs/guide.md#nowhere",
            "#nope",
            "../../outside.md",
            "src#x",
            "docs/also-missing.md"
        ],
        "{broken:#?}"
    );
    assert!(broken[0].starts_with("README.md:8: "), "{broken:#?}");
}

#[test]
fn headings_are_slugged_the_way_github_slugs_them() {
    assert_eq!(slug("The generated `index.md`"), "the-generated-indexmd");
    assert_eq!(slug("Checking the setup: `mdvault doctor`"), "checking-the-setup-mdvault-doctor");
    assert_eq!(
        slug("`mdvault index` beside a running server"),
        "mdvault-index-beside-a-running-server"
    );
    assert_eq!(slug("Serving: REST and MCP"), "serving-rest-and-mcp");
    assert_eq!(
        slug("Support via [Nordlicht help](https://x.example/a)"),
        "support-via-nordlicht-help"
    );
    assert_eq!(slug("snake_case and **bold** -- dashes"), "snake_case-and-bold----dashes");
    assert_eq!(
        anchors("# A\n## A\n```\n# not a heading\n```\n#nospace\n## A ##\n"),
        ["a", "a-1", "a-2"]
    );
}
