//! A note's Markdown as safe HTML, in Obsidian's reading view: for the web page and for a
//! REST `Accept: text/html` (`api::compat::html`), one pipeline for both.
//!
//! pulldown-cmark parses (tables, task lists, strikethrough, footnotes, `[[wikilinks]]`), but
//! where each link points is read from the vault's own link model (`vault::links`), matched
//! to pulldown's link by its first byte, so the page and the link checker cannot disagree
//! (a table's `[[Note\|alias]]` included). Before parsing, `%%comments%%` are removed by the
//! index's own rule (`index::chunker::strip_comments`). Headings get ids from their text
//! ([`Anchors`]), the paragraph or list item a `^id` closes gets the id `^id`, and a link's
//! `#Heading`, `#Heading#Sub` or `#^id` becomes that id as a URL fragment, the heading part
//! followed with the one heading resolver (`vault::headings::resolve`). `==text==` becomes
//! `<mark>`. Obsidian callouts (`> [!kind] Title`) get a class. Then ammonia cleans the whole
//! result, so whatever HTML a note carries (`<script>`, `onerror=`, `javascript:` URLs)
//! arrives inert. The sanitiser runs last, over everything, so nothing this module adds can
//! open a hole either.
//!
//! It does not read files or know routes beyond the URLs its caller hands in. It sits below
//! `compat` and `web`, which both show notes as HTML.

use std::collections::{HashMap, HashSet};

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, TextMergeWithOffset};

use crate::vault::headings::{self, Heading};
use crate::vault::links::{self, Link, LinkKind};

/// The Markdown features a vault note uses.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
        | Options::ENABLE_FOOTNOTES
}

/// A link target as the vault resolves it: the path without `#fragment`, and whether it was
/// written as a wikilink.
pub(crate) type LinkKey = (String, bool);

/// The text a reader is shown, decided once by what the text is: an Obsidian note loses its
/// `%%comments%%` (newlines kept, so lines stay the file's); a document's extracted text is
/// not Obsidian-authored, so a `%%` in it is literal, as the index reads it.
pub(crate) struct Shown(String);

impl Shown {
    /// A note's body (frontmatter already left out).
    pub(crate) fn note(body: &str) -> Shown {
        Shown(crate::index::chunker::strip_comments(body))
    }

    /// A filed document's extracted text.
    pub(crate) fn document(text: &str) -> Shown {
        Shown(text.to_string())
    }
}

/// The ids a note's parts are given, and the resolver of a link fragment to one of them.
/// Built from the whole file (heading lines are file lines).
pub(crate) struct Anchors {
    headings: Vec<Heading>,
    /// `ids[i]` is the id of `headings[i]`.
    ids: Vec<String>,
}

impl Anchors {
    /// A note's anchors, from its whole text.
    pub(crate) fn of(text: &str) -> Anchors {
        let headings = headings::headings(text);
        let mut seen = HashSet::new();
        let ids = headings
            .iter()
            .map(|h| {
                let base = slug(&h.text);
                let base = if base.is_empty() { format!("L{}", h.line) } else { base };
                // A repeated heading text gets `-1`, `-2`, ... in order, so every id is unique.
                let mut id = base.clone();
                let mut n = 0;
                while !seen.insert(id.clone()) {
                    n += 1;
                    id = format!("{base}-{n}");
                }
                id
            })
            .collect();
        Anchors { headings, ids }
    }

    /// The id of the heading on file line `line`, if the outline has one there.
    fn heading_id(&self, line: usize) -> Option<&str> {
        let i = self.headings.iter().position(|h| h.line == line)?;
        Some(&self.ids[i])
    }

    /// The id of the heading on file line `line`: its own, or `L<line>` for a heading the
    /// outline does not hold (a Setext or quoted one).
    pub(crate) fn id_at(&self, line: usize) -> String {
        self.heading_id(line).map_or_else(|| format!("L{line}"), str::to_string)
    }
}

/// A heading's id from its text: its matching form (`headings::normalize`: lower case, links
/// unwrapped, emphasis marks dropped), keeping letters, digits, `-` and `_`, a space as `-`.
fn slug(text: &str) -> String {
    headings::normalize(text)
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// The element id a link fragment lands on in a note: `^id` is the block's own id; a heading
/// path (`Heading#Sub`) is resolved among the note's headings when they are known, and
/// otherwise (or when it names no single heading) is the slug of its last part.
fn fragment_id(anchors: Option<&Anchors>, fragment: &str, note: &str) -> String {
    let fragment = fragment.trim();
    if fragment.starts_with('^') {
        return fragment.to_string();
    }
    let parts: Vec<&str> = fragment.split('#').map(str::trim).filter(|p| !p.is_empty()).collect();
    if let Some(a) = anchors
        && let Ok(h) = headings::resolve(&a.headings, &parts.join("::"), note)
        && let Some(id) = a.heading_id(h.line)
    {
        return id.to_string();
    }
    parts.last().map(|p| slug(p)).unwrap_or_default()
}

/// Whether a URL names another site or scheme (left for the sanitiser to judge).
fn is_external(url: &str) -> bool {
    url.starts_with('#')
        || url.starts_with("//")
        || url.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
}

fn is_wiki(t: LinkType) -> bool {
    matches!(t, LinkType::WikiLink { .. })
}

/// Where one rendered link points.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dest {
    /// Left as written: an external URL, or a bare `#` fragment of a link the vault model
    /// does not read.
    AsWritten,
    /// A part of this note (`[[#Heading]]`, `[x](#^id)`), by its fragment.
    Here(String),
    /// A vault file by its key, with the fragment if any.
    Vault(LinkKey, Option<String>),
}

/// The vault's links of the shown text, by their first byte (an embed's `!` included, as
/// pulldown's image starts there too).
fn model(shown: &Shown) -> HashMap<usize, Link> {
    links::links(&shown.0).into_iter().map(|l| (l.span.start, l)).collect()
}

/// Where the link pulldown found at `start` points: the vault model's reading when it has the
/// link (always, for a wikilink); otherwise, for a link it does not read (reference style),
/// pulldown's destination split at `#` and percent-decoded as `Link::target` is.
fn dest_of(model: &HashMap<usize, Link>, start: usize, link_type: LinkType, url: &str) -> Dest {
    let wiki = is_wiki(link_type);
    if let Some(link) = model.get(&start).filter(|l| (l.kind == LinkKind::Wiki) == wiki) {
        if link.is_external() {
            return Dest::AsWritten;
        }
        let fragment = link.fragment.as_deref().map(|f| match link.kind {
            LinkKind::Wiki => f.to_string(),
            LinkKind::Markdown => {
                percent_encoding::percent_decode_str(f).decode_utf8_lossy().into_owned()
            }
        });
        let target = link.target.trim();
        return match fragment {
            Some(f) if target.is_empty() => Dest::Here(f),
            _ if target.is_empty() => Dest::AsWritten,
            f => Dest::Vault((target.to_string(), wiki), f),
        };
    }
    if is_external(url) {
        return Dest::AsWritten;
    }
    let (path, fragment) = match url.split_once('#') {
        Some((p, f)) => (p, Some(f.to_string())),
        None => (url, None),
    };
    let path = if wiki {
        path.to_string()
    } else {
        percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned()
    };
    if path.trim().is_empty() {
        return Dest::AsWritten;
    }
    Dest::Vault((path, wiki), fragment)
}

/// Every link of the shown text with where it points, in order.
fn dests(shown: &Shown) -> Vec<Dest> {
    let model = model(shown);
    Parser::new_ext(&shown.0, options())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(
                Tag::Link { link_type, dest_url, .. } | Tag::Image { link_type, dest_url, .. },
            ) => Some(dest_of(&model, range.start, link_type, &dest_url)),
            _ => None,
        })
        .collect()
}

/// Every vault-internal link target of a note, once each, for one batched resolution.
pub(crate) fn link_targets(shown: &Shown) -> Vec<LinkKey> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for dest in dests(shown) {
        if let Dest::Vault(key, _) = dest
            && seen.insert(key.clone())
        {
            out.push(key);
        }
    }
    out
}

/// The link targets whose links carry a heading fragment: the notes whose headings the
/// caller reads ([`Anchors::of`]) so the fragment lands on the heading it names.
pub(crate) fn heading_link_targets(shown: &Shown) -> HashSet<LinkKey> {
    dests(shown)
        .into_iter()
        .filter_map(|d| match d {
            Dest::Vault(key, Some(f)) if !f.trim().is_empty() && !f.trim().starts_with('^') => {
                Some(key)
            }
            _ => None,
        })
        .collect()
}

/// How a surface points a note's links.
pub(crate) enum Links<'a> {
    /// The web page: targets resolved by the vault and pointed at the page's routes.
    Resolved {
        /// Link targets to vault paths (absent or `None`: broken).
        paths: &'a HashMap<LinkKey, Option<String>>,
        /// The anchors of linked notes, by vault path, that a heading fragment resolves in.
        anchors: &'a HashMap<String, Anchors>,
        /// The page URL of a vault path.
        note_url: &'a dyn Fn(&str) -> String,
        /// The URL that offers to create a missing note.
        new_url: &'a dyn Fn(&str) -> String,
    },
    /// A REST HTML answer: a link to another file keeps its target as written (as Obsidian's
    /// own renderer writes `href`), with its fragment as the id it names.
    AsWritten,
}

impl Links<'_> {
    /// The `href` of a link that points at `dest`, written `url` in the note.
    fn href<'u>(&self, dest: Dest, own: &Anchors, url: CowStr<'u>) -> CowStr<'u> {
        let with_fragment = |mut base: String, anchors: Option<&Anchors>, f: Option<&str>| {
            let id = f.map(|f| fragment_id(anchors, f, "")).unwrap_or_default();
            if !id.is_empty() {
                base.push('#');
                base.push_str(&id);
            }
            CowStr::from(base)
        };
        match (dest, self) {
            (Dest::AsWritten, _) => url,
            (Dest::Here(f), _) => with_fragment(String::new(), Some(own), Some(&f)),
            (Dest::Vault((target, _), f), Links::AsWritten) => {
                with_fragment(target, None, f.as_deref())
            }
            (Dest::Vault(key, f), Links::Resolved { paths, anchors, note_url, new_url }) => {
                match paths.get(&key).cloned().flatten() {
                    Some(path) => with_fragment(note_url(&path), anchors.get(&path), f.as_deref()),
                    None => CowStr::from(new_url(&key.0)),
                }
            }
        }
    }
}

/// Renders a note body as the reader sees it. `first_line` is the file line of the body's
/// first line and `own` the note's anchors (from its whole file), so each heading gets the id
/// the outline and every link to it use ([`Anchors::id_at`]).
pub(crate) fn note_html(shown: &Shown, first_line: usize, own: &Anchors, links: &Links) -> String {
    let text = shown.0.as_str();
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_of = |offset: usize| line_starts.partition_point(|&s| s <= offset) + first_line - 1;
    let ends_line = |at: usize| {
        text[at..].trim_start_matches([' ', '\t']).starts_with(['\n', '\r'])
            || text[at..].trim().is_empty()
    };
    let model = model(shown);
    let mut events: Vec<Event> = Vec::new();
    // Indices (in `events`) of the open paragraphs and list items, and the block id each got.
    let mut open: Vec<usize> = Vec::new();
    let mut block_ids: Vec<(usize, String)> = Vec::new();
    // Inside code, text is literal; inside code, headings and tables no `^id` closes a block.
    let (mut code, mut not_block) = (0usize, 0usize);
    let parsed = Parser::new_ext(text, options()).into_offset_iter();
    for (event, range) in TextMergeWithOffset::new(parsed) {
        match event {
            Event::Start(Tag::Heading { level, classes, attrs, .. }) => {
                not_block += 1;
                let id = own.id_at(line_of(range.start));
                events.push(Event::Start(Tag::Heading {
                    level,
                    id: Some(CowStr::from(id)),
                    classes,
                    attrs,
                }));
            }
            Event::Start(ref tag @ (Tag::CodeBlock(_) | Tag::Table(_))) => {
                code += usize::from(matches!(tag, Tag::CodeBlock(_)));
                not_block += 1;
                events.push(event);
            }
            Event::End(ref end @ (TagEnd::CodeBlock | TagEnd::Table | TagEnd::Heading(_))) => {
                code -= usize::from(matches!(end, TagEnd::CodeBlock));
                not_block -= 1;
                events.push(event);
            }
            Event::Start(Tag::Paragraph | Tag::Item) => {
                open.push(events.len());
                events.push(event);
            }
            Event::End(TagEnd::Paragraph | TagEnd::Item) => {
                open.pop();
                events.push(event);
            }
            // Images become links: embeds of notes and documents open their own page, and a
            // note cannot make the browser fetch anything.
            Event::Start(Tag::Link { link_type, dest_url, title, id })
            | Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                let dest = dest_of(&model, range.start, link_type, &dest_url);
                let dest_url = links.href(dest, own, dest_url);
                events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
            }
            Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => {
                events.push(Event::End(TagEnd::Link))
            }
            Event::Text(t) if code == 0 => {
                let mut t = t;
                // A `^id` ending a block's last line is the block's id, hidden as Obsidian
                // hides it (`headings::block_id` is the rule the resolver uses).
                if not_block == 0
                    && ends_line(range.end)
                    && let Some(&at) = open.last()
                    && let Some(id) = headings::block_id(&t)
                {
                    let id = id.to_string();
                    let kept = t.trim_end();
                    t = CowStr::from(kept[..kept.len() - id.len() - 1].trim_end().to_string());
                    if !block_ids.iter().any(|(i, _)| *i == at) {
                        block_ids.push((at, id));
                    }
                }
                push_highlighted(t, &mut events);
            }
            // Raw HTML is passed on; ammonia below keeps only what is harmless.
            other => events.push(other),
        }
    }
    for (at, id) in block_ids {
        let tag = if matches!(events[at], Event::Start(Tag::Item)) { "li" } else { "p" };
        events[at] = Event::Html(CowStr::from(format!("\n<{tag} id=\"^{id}\">")));
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    clean(&mark_callouts(&html))
}

/// Pushes a run of text with each `==text==` in it as `<mark>`: the opening `==` followed and
/// the closing one preceded by a non-space, as Obsidian reads a highlight. A highlight is
/// found within one run of text: `==a **b** c==` (across emphasis) stays as written.
fn push_highlighted<'a>(t: CowStr<'a>, out: &mut Vec<Event<'a>>) {
    if !t.contains("==") {
        out.push(Event::Text(t));
        return;
    }
    let text = |s: &str| Event::Text(CowStr::from(s.to_string()));
    let mut rest: &str = &t;
    let mut plain = String::new();
    while let Some(open) = rest.find("==") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("==") else { break };
        let inner = &after[..close];
        if inner.is_empty()
            || inner.starts_with(char::is_whitespace)
            || inner.ends_with(char::is_whitespace)
        {
            plain.push_str(&rest[..open + 1]);
            rest = &rest[open + 1..];
            continue;
        }
        plain.push_str(&rest[..open]);
        if !plain.is_empty() {
            out.push(text(&plain));
            plain.clear();
        }
        out.push(Event::InlineHtml(CowStr::Borrowed("<mark>")));
        out.push(text(inner));
        out.push(Event::InlineHtml(CowStr::Borrowed("</mark>")));
        rest = &after[close + 2..];
    }
    plain.push_str(rest);
    if !plain.is_empty() {
        out.push(text(&plain));
    }
}

/// `<blockquote><p>[!kind]...` (an Obsidian callout as pulldown-cmark renders it) becomes a
/// classed block with its kind shown. Runs before the sanitiser, which keeps the class.
fn mark_callouts(html: &str) -> String {
    const OPEN: &str = "<blockquote>\n<p>[!";
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let kind: String =
            after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        match after[kind.len()..].strip_prefix(']') {
            Some(tail) if !kind.is_empty() => {
                let kind = kind.to_ascii_lowercase();
                let tail = tail.strip_prefix(['+', '-']).unwrap_or(tail);
                out.push_str(&format!(
                    "<blockquote class=\"callout callout-{kind}\">\n<p><strong class=\"callout-kind\">{kind}</strong>"
                ));
                rest = tail;
            }
            _ => {
                out.push_str(OPEN);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The one sanitiser every surface uses (`api::sanitize`).
fn clean(html: &str) -> String {
    super::sanitize::clean(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(md: &str, resolved: &[(&str, bool, Option<&str>)]) -> String {
        render_with(md, resolved, &HashMap::new())
    }

    fn render_with(
        md: &str,
        resolved: &[(&str, bool, Option<&str>)],
        anchors: &HashMap<String, Anchors>,
    ) -> String {
        let map = resolved
            .iter()
            .map(|(t, w, p)| ((t.to_string(), *w), p.map(str::to_string)))
            .collect::<HashMap<_, _>>();
        let links = Links::Resolved {
            paths: &map,
            anchors,
            note_url: &|p| format!("/ui/note?path={p}"),
            new_url: &|t| format!("/ui/new?path={t}"),
        };
        note_html(&Shown::note(md), 1, &Anchors::of(md), &links)
    }

    #[test]
    fn script_event_handlers_and_javascript_urls_render_inert() {
        let md = "<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
                  [click](javascript:alert(3)) <a href=\"javascript:alert(4)\">a</a>\n\n\
                  <iframe src=\"https://evil.example\"></iframe>";
        let html = render(md, &[]);
        for bad in ["<script", "onerror", "javascript:", "<iframe", "alert(1)"] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
    }

    #[test]
    fn wikilinks_resolve_to_note_pages_and_broken_ones_offer_creation() {
        let md = "See [[Boiler]] and [[Boiler#Service|the service]], [[Nowhere]], [x](Gas.md).";
        assert_eq!(
            link_targets(&Shown::note(md)),
            vec![
                ("Boiler".to_string(), true),
                ("Nowhere".to_string(), true),
                ("Gas.md".to_string(), false)
            ]
        );
        let html = render(
            md,
            &[
                ("Boiler", true, Some("Home/Boiler.md")),
                ("Nowhere", true, None),
                ("Gas.md", false, Some("Home/Utilities/Gas.md")),
            ],
        );
        assert!(html.contains("href=\"/ui/note?path=Home/Boiler.md\""), "{html}");
        assert!(html.contains("href=\"/ui/note?path=Home/Boiler.md#service\""), "{html}");
        assert!(html.contains(">the service</a>"), "{html}");
        assert!(html.contains("href=\"/ui/new?path=Nowhere\""), "{html}");
        assert!(html.contains("href=\"/ui/note?path=Home/Utilities/Gas.md\""), "{html}");
    }

    #[test]
    fn a_tables_escaped_pipe_separates_the_alias_as_the_link_checker_reads_it() {
        let md = "| Link | Note |\n| --- | --- |\n\
                  | [[Basic formatting syntax\\|Markdown syntax]] | x |\n\
                  | [[Gone\\|alias]] | ![[Basic formatting syntax\\|embedded]] |\n";
        let shown = Shown::note(md);
        assert_eq!(
            link_targets(&shown),
            vec![("Basic formatting syntax".to_string(), true), ("Gone".to_string(), true)]
        );
        // The renderer and the link checker read the same targets.
        let checker: Vec<String> = links::links(md).into_iter().map(|l| l.target).collect();
        assert_eq!(checker, ["Basic formatting syntax", "Gone", "Basic formatting syntax"]);
        let html = render(
            md,
            &[
                ("Basic formatting syntax", true, Some("Basic formatting syntax.md")),
                ("Gone", true, None),
            ],
        );
        assert!(
            html.contains("<a href=\"/ui/note?path=Basic%20formatting%20syntax.md\" rel=\"noopener noreferrer\">Markdown syntax</a>"),
            "{html}"
        );
        assert!(html.contains("href=\"/ui/new?path=Gone\""), "{html}");
        assert!(!html.contains('\\'), "{html}");
    }

    #[test]
    fn headings_get_slug_ids_and_heading_and_block_links_land_on_them() {
        let md = "# Top\n\n## Set *up*\n\nText.\n\n### Gas\n\n## Set up\n\n### Gas\n\n\
                  A line. ^para-1\n\n- item one ^item1\n- item two\n\n\
                  [[#Set up]] [[#Set up#Gas]] [[#^para-1]] [[#^item1]] [x](#Gas)\n";
        let html = render(md, &[]);
        for id in ["top", "set-up", "gas", "set-up-1", "gas-1"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "{id} in {html}");
        }
        assert!(html.contains("<p id=\"^para-1\">A line.</p>"), "{html}");
        assert!(html.contains("<li id=\"^item1\">item one</li>"), "{html}");
        // `Set up#Gas` is resolved by the heading resolver: the first `Gas` under `Set up`.
        for href in ["#set-up", "#gas", "#^para-1", "#^item1"] {
            assert!(html.contains(&format!("href=\"{href}\"")), "{href} in {html}");
        }
        let linked = "# Boiler\n\n## Service\n\n# Other\n\n## Service\n";
        let anchors = HashMap::from([("B.md".to_string(), Anchors::of(linked))]);
        let html = render_with(
            "[[Boiler#Other#Service]] [[Boiler#Nowhere]]",
            &[("Boiler", true, Some("B.md"))],
            &anchors,
        );
        assert!(html.contains("href=\"/ui/note?path=B.md#service-1\""), "{html}");
        assert!(html.contains("href=\"/ui/note?path=B.md#nowhere\""), "{html}");
    }

    #[test]
    fn comments_are_hidden_inline_and_across_lines_but_not_in_code() {
        let md = "Seen %%hidden%% too.\n\n%%\nblock [[Secret]]\n%%\n\n`%%code%%`\n";
        let html = render(md, &[]);
        assert!(html.contains("Seen  too."), "{html}");
        assert!(!html.contains("hidden") && !html.contains("Secret"), "{html}");
        assert!(html.contains("<code>%%code%%</code>"), "{html}");
        assert!(link_targets(&Shown::note(md)).is_empty());
        // A document's extracted text is not Obsidian-authored: its `%%` is literal.
        let doc = Shown::document("50%% off %%really%%");
        let html = note_html(&doc, 1, &Anchors::of(""), &Links::AsWritten);
        assert!(html.contains("50%% off %%really%%"), "{html}");
    }

    #[test]
    fn highlights_render_as_mark_and_stray_equals_stay() {
        let html = render("A ==bright== idea, a == b, ==not ==, `==code==`.", &[]);
        assert!(html.contains("A <mark>bright</mark> idea, a == b, ==not ==, "), "{html}");
        assert!(html.contains("<code>==code==</code>"), "{html}");
    }

    #[test]
    fn callouts_get_their_kind_and_headings_their_id() {
        let html = render("# Top\n\n> [!warning]- Mind the gas\n> Valve is stiff.\n", &[]);
        assert!(html.contains("<h1 id=\"top\">Top</h1>"), "{html}");
        assert!(html.contains("class=\"callout callout-warning\""), "{html}");
        assert!(html.contains("Mind the gas"), "{html}");
        let plain = render("> just a quote\n", &[]);
        assert!(plain.contains("<blockquote>") && !plain.contains("callout"), "{plain}");
    }

    #[test]
    fn external_links_stay_and_embeds_become_links() {
        let html =
            render("![[Boiler]] [w](https://example.org)", &[("Boiler", true, Some("B.md"))]);
        assert!(html.contains("href=\"/ui/note?path=B.md\""), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("href=\"https://example.org\""), "{html}");
    }

    #[test]
    fn links_as_written_keep_their_target_with_the_fragment_as_an_id() {
        let md = "[[Basic formatting syntax#Bold text|bold]] [[Note]] [x](Other.md#^b1)";
        let html = note_html(&Shown::note(md), 1, &Anchors::of(md), &Links::AsWritten);
        assert!(html.contains("href=\"Basic%20formatting%20syntax#bold-text\""), "{html}");
        assert!(html.contains("href=\"Note\""), "{html}");
        assert!(html.contains("href=\"Other.md#^b1\""), "{html}");
    }
}
