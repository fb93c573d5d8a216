//! A note's Markdown as safe HTML for the web page.
//!
//! pulldown-cmark parses (tables, task lists, strikethrough, Obsidian's `[[wikilinks]]`);
//! links are pointed at the page's own routes with the vault's link resolution (handed in by
//! the caller, who asks `service::resolve_links`); Obsidian callouts (`> [!kind] Title`) get a
//! class; then ammonia cleans the whole result, so whatever HTML a note carries (`<script>`,
//! `onerror=`, `javascript:` URLs) arrives inert. The sanitiser runs last, over everything,
//! so nothing this module adds can open a hole either.
//!
//! It does not read files or know routes beyond the URL shapes in `super::url`.

use std::collections::{HashMap, HashSet};

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

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

/// Whether a URL names another site or scheme (left for the sanitiser to judge).
fn is_external(url: &str) -> bool {
    url.starts_with('#')
        || url.starts_with("//")
        || url.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
}

/// Splits `target#fragment`, percent-decoding a Markdown link's path (the vault's rule for
/// `Link::target`).
fn key_of(dest: &str, wiki: bool) -> Option<LinkKey> {
    if is_external(dest) {
        return None;
    }
    let path = dest.split('#').next().unwrap_or_default();
    let path = if wiki {
        path.to_string()
    } else {
        percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned()
    };
    (!path.trim().is_empty()).then_some((path, wiki))
}

fn is_wiki(t: LinkType) -> bool {
    matches!(t, LinkType::WikiLink { .. })
}

/// Every vault-internal link target of a note, once each, for one batched resolution.
pub(crate) fn link_targets(markdown: &str) -> Vec<LinkKey> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for event in Parser::new_ext(markdown, options()) {
        if let Event::Start(
            Tag::Link { link_type, dest_url, .. } | Tag::Image { link_type, dest_url, .. },
        ) = event
            && let Some(key) = key_of(&dest_url, is_wiki(link_type))
            && seen.insert(key.clone())
        {
            out.push(key);
        }
    }
    out
}

/// Renders a note body. `resolved` maps link targets to vault paths (absent or `None`:
/// broken); `note_url` makes the page URL of a vault path, `new_url` the URL that offers to
/// create a missing note. `first_line` is the file line of the body's first line, so each
/// heading gets the id `L<line>` that the outline links to.
pub(crate) fn note_html(
    markdown: &str,
    first_line: usize,
    resolved: &HashMap<LinkKey, Option<String>>,
    note_url: &dyn Fn(&str) -> String,
    new_url: &dyn Fn(&str) -> String,
) -> String {
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(markdown.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let line_of = |offset: usize| line_starts.partition_point(|&s| s <= offset) + first_line - 1;
    // Images become links: embeds of notes and documents open their own page, and a note
    // cannot make the browser fetch anything.
    let events = Parser::new_ext(markdown, options()).into_offset_iter().map(|(event, range)| {
        match event {
            Event::Start(Tag::Heading { level, classes, attrs, .. }) => {
                let id = CowStr::from(format!("L{}", line_of(range.start)));
                Event::Start(Tag::Heading { level, id: Some(id), classes, attrs })
            }
            Event::Start(Tag::Link { link_type, dest_url, title, id })
            | Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                let wiki = is_wiki(link_type);
                let dest = match key_of(&dest_url, wiki) {
                    None => dest_url,
                    Some(key) => {
                        let fragment = dest_url.split_once('#').map(|(_, f)| f);
                        match resolved.get(&key).cloned().flatten() {
                            Some(path) => {
                                let mut url = note_url(&path);
                                if let Some(f) = fragment.filter(|f| !f.is_empty()) {
                                    url.push_str("&section=");
                                    url.push_str(&super::url::enc(f));
                                }
                                CowStr::from(url)
                            }
                            None => CowStr::from(new_url(&key.0)),
                        }
                    }
                };
                Event::Start(Tag::Link { link_type, dest_url: dest, title, id })
            }
            Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
            // Raw HTML is passed on; ammonia below keeps only what is harmless.
            other => other,
        }
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    clean(&mark_callouts(&html))
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
pub(crate) fn clean(html: &str) -> String {
    crate::api::sanitize::clean(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(md: &str, resolved: &[(&str, bool, Option<&str>)]) -> String {
        let map = resolved
            .iter()
            .map(|(t, w, p)| ((t.to_string(), *w), p.map(str::to_string)))
            .collect::<HashMap<_, _>>();
        note_html(md, 1, &map, &|p| format!("/ui/note?path={p}"), &|t| format!("/ui/new?path={t}"))
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
            link_targets(md),
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
        assert!(html.contains("/ui/note?path=Home/Boiler.md&amp;section=Service"), "{html}");
        assert!(html.contains(">the service</a>"), "{html}");
        assert!(html.contains("href=\"/ui/new?path=Nowhere\""), "{html}");
        assert!(html.contains("href=\"/ui/note?path=Home/Utilities/Gas.md\""), "{html}");
    }

    #[test]
    fn callouts_get_their_kind_and_headings_their_line() {
        let html = render("# Top\n\n> [!warning]- Mind the gas\n> Valve is stiff.\n", &[]);
        assert!(html.contains("<h1 id=\"L1\">Top</h1>"), "{html}");
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
}
