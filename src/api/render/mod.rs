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
//! `<mark>`. Obsidian callouts (`> [!kind] Title`) get a title element of their own and fold
//! (`<details>`); images and notes a note embeds show, as the caller found them
//! ([`Embeds`], `vault::embed`); math is MathML (`math`); a Mermaid block is labelled. Then
//! ammonia cleans the whole result, so whatever HTML a note carries (`<script>`, `onerror=`, `javascript:` URLs)
//! arrives inert. The sanitiser runs last, over everything, so nothing this module adds can
//! open a hole either.
//!
//! It does not read files or know routes beyond the URLs its caller hands in. It sits below
//! `compat` and `web`, which both show notes as HTML.

mod math;

use std::collections::{HashMap, HashSet};

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, TextMergeWithOffset};

use crate::vault::attachment::{self, AttachmentKind};
use crate::vault::embed::{Found, Size};
use crate::vault::headings::{self, Heading};
use crate::vault::links::{self, Link, LinkKind};

/// The Markdown features a vault note uses.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_MATH
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
        /// The URL that serves an attachment (an image, audio, video) by vault path.
        file_url: &'a dyn Fn(&str) -> String,
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
            (
                Dest::Vault(key, f),
                Links::Resolved { paths, anchors, note_url, file_url, new_url },
            ) => {
                match paths.get(&key).cloned().flatten() {
                    Some(path) if attachment::kind_of(&path).is_some() => {
                        CowStr::from(file_url(&path))
                    }
                    Some(path) => with_fragment(note_url(&path), anchors.get(&path), f.as_deref()),
                    // A missing attachment is no note to create: its link stays as written.
                    None if attachment::kind_of(&key.0).is_some() => url,
                    None => CowStr::from(new_url(&key.0)),
                }
            }
        }
    }
}

/// An embed's key: its link target and its fragment (`![[Note#Heading]]`).
pub(crate) type EmbedKey = (LinkKey, Option<String>);

/// What the note's embeds show, as the caller found them (`vault::embed::found`): the
/// renderer reads no files.
pub(crate) struct Embeds<'a> {
    /// By key; an embed not here is shown as a link.
    pub(crate) found: &'a HashMap<EmbedKey, Found>,
    /// The URL that serves an attachment by vault path, through the path gate.
    pub(crate) file_url: &'a dyn Fn(&str) -> String,
    /// The URL of a raster image fitted to the width it is shown at (`None` when no width is
    /// given), or `None` to show the original; the image then links to the original. A
    /// surface without fitted images gives no function.
    pub(crate) fitted_url: Option<&'a FittedUrl<'a>>,
}

/// The URL of an image by vault path fitted to the CSS width it is shown at, if any.
pub(crate) type FittedUrl<'a> = dyn Fn(&str, Option<u32>) -> Option<String> + 'a;

/// The embeds of the shown text, once each, in order.
pub(crate) fn embed_keys(shown: &Shown) -> Vec<EmbedKey> {
    let model = model(shown);
    let mut seen = HashSet::new();
    Parser::new_ext(&shown.0, options())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Image { link_type, dest_url, .. }) => {
                match dest_of(&model, range.start, link_type, &dest_url) {
                    Dest::Vault(key, fragment) => Some((key, fragment)),
                    _ => None,
                }
            }
            _ => None,
        })
        .filter(|k| seen.insert(k.clone()))
        .collect()
}

/// A note's embeds as found, and every link target the page shows (the note's own and those
/// of the parts it embeds), for one batched resolution.
pub(crate) struct Gathered {
    pub(crate) found: HashMap<EmbedKey, Found>,
    pub(crate) targets: Vec<LinkKey>,
}

/// Finds what the shown note's embeds show with the caller's `find` (`service::embeds`),
/// then the embeds of the embedded parts (their images show; their notes are links, one level
/// deep). An embedded part's links are resolved from the embedding note: Obsidian's links name
/// files by unique name, so only a relative path could land elsewhere.
pub(crate) fn gather(
    shown: &Shown,
    find: &dyn Fn(&[EmbedKey]) -> crate::Result<Vec<Found>>,
) -> crate::Result<Gathered> {
    let keys = embed_keys(shown);
    let mut found: HashMap<EmbedKey, Found> = if keys.is_empty() {
        HashMap::new()
    } else {
        keys.iter().cloned().zip(find(&keys)?).collect()
    };
    let mut targets = link_targets(shown);
    let mut inner = Vec::new();
    for f in found.values() {
        if let Found::Note { part, .. } = f {
            let part = Shown::note(&part.text);
            targets.extend(link_targets(&part));
            inner.extend(embed_keys(&part).into_iter().filter(|k| !found.contains_key(k)));
        }
    }
    let mut seen = HashSet::new();
    targets.retain(|k| seen.insert(k.clone()));
    let mut seen = HashSet::new();
    inner.retain(|k| seen.insert(k.clone()));
    if !inner.is_empty() {
        found.extend(inner.iter().cloned().zip(find(&inner)?));
    }
    Ok(Gathered { found, targets })
}

/// Renders a note body as the reader sees it. `first_line` is the file line of the body's
/// first line and `own` the note's anchors (from its whole file), so each heading gets the id
/// the outline and every link to it use ([`Anchors::id_at`]).
pub(crate) fn note_html(
    shown: &Shown,
    first_line: usize,
    own: &Anchors,
    links: &Links,
    embeds: &Embeds,
) -> String {
    clean(&Walk::new(shown, first_line, own, links, embeds, false).html())
}

/// How a callout folds: Obsidian's `-` (collapsed), `+` (expanded), or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    No,
    Collapsed,
    Expanded,
}

/// An open blockquote: where its start event is, and whether it turned out a callout (and
/// then whether it folds, which decides its title's and its own closing tags).
struct Quote {
    at: usize,
    callout: Option<bool>,
}

/// An image being read: where it points and the alt text gathered so far.
struct Image<'s> {
    dest: Dest,
    start: usize,
    link_type: LinkType,
    dest_url: CowStr<'s>,
    title: CowStr<'s>,
    id: CowStr<'s>,
    alt: String,
    depth: usize,
}

/// One pass over the note's events, rewriting them into the reading view's.
struct Walk<'s, 'r> {
    text: &'s str,
    line_starts: Vec<usize>,
    first_line: usize,
    own: &'r Anchors,
    links: &'r Links<'r>,
    embeds: &'r Embeds<'r>,
    /// Inside an embedded part: a note embed here is a link (one level deep).
    nested: bool,
    model: HashMap<usize, Link>,
    events: Vec<Event<'s>>,
    /// Indices (in `events`) of the open paragraphs and list items, and the block id each got.
    open: Vec<usize>,
    block_ids: Vec<(usize, String)>,
    /// Inside code, text is literal; inside code, headings and tables no `^id` closes a block.
    code: usize,
    not_block: usize,
    quotes: Vec<Quote>,
    /// The open callout title: the index its content starts at, and its default text.
    title: Option<(usize, String)>,
    image: Option<Image<'s>>,
    mermaid: bool,
}

impl<'s, 'r> Walk<'s, 'r> {
    fn new(
        shown: &'s Shown,
        first_line: usize,
        own: &'r Anchors,
        links: &'r Links<'r>,
        embeds: &'r Embeds<'r>,
        nested: bool,
    ) -> Self {
        let text = shown.0.as_str();
        Walk {
            text,
            line_starts: std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
            first_line,
            own,
            links,
            embeds,
            nested,
            model: model(shown),
            events: Vec::new(),
            open: Vec::new(),
            block_ids: Vec::new(),
            code: 0,
            not_block: 0,
            quotes: Vec::new(),
            title: None,
            image: None,
            mermaid: false,
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset) + self.first_line - 1
    }

    fn ends_line(&self, at: usize) -> bool {
        self.text[at..].trim_start_matches([' ', '\t']).starts_with(['\n', '\r'])
            || self.text[at..].trim().is_empty()
    }

    /// The rendered HTML, not yet sanitised.
    fn html(mut self) -> String {
        let parsed = Parser::new_ext(self.text, options()).into_offset_iter();
        for (event, range) in TextMergeWithOffset::new(parsed) {
            if self.image.is_some() {
                self.in_image(event);
            } else {
                self.event(event, range);
            }
        }
        for (at, id) in std::mem::take(&mut self.block_ids) {
            let tag = if matches!(self.events[at], Event::Start(Tag::Item)) { "li" } else { "p" };
            self.events[at] = Event::Html(CowStr::from(format!("\n<{tag} id=\"^{id}\">")));
        }
        let mut html = String::new();
        pulldown_cmark::html::push_html(&mut html, self.events.into_iter());
        html
    }

    fn event(&mut self, event: Event<'s>, range: std::ops::Range<usize>) {
        match event {
            Event::Start(Tag::Heading { level, classes, attrs, .. }) => {
                self.not_block += 1;
                let id = self.own.id_at(self.line_of(range.start));
                self.events.push(Event::Start(Tag::Heading {
                    level,
                    id: Some(CowStr::from(id)),
                    classes,
                    attrs,
                }));
            }
            Event::Start(Tag::CodeBlock(pulldown_cmark::CodeBlockKind::Fenced(ref lang)))
                if lang.trim().eq_ignore_ascii_case("mermaid") =>
            {
                // No diagram is drawn (that needs a script the page does not load): the
                // source is shown, labelled as what it is.
                self.mermaid = true;
                self.events.push(Event::Html(CowStr::Borrowed(
                    "<figure class=\"mermaid\"><figcaption>Mermaid diagram</figcaption>\n",
                )));
                self.code += 1;
                self.not_block += 1;
                self.events.push(event);
            }
            Event::Start(ref tag @ (Tag::CodeBlock(_) | Tag::Table(_))) => {
                self.code += usize::from(matches!(tag, Tag::CodeBlock(_)));
                self.not_block += 1;
                self.events.push(event);
            }
            Event::End(ref end @ (TagEnd::CodeBlock | TagEnd::Table | TagEnd::Heading(_))) => {
                let code = matches!(end, TagEnd::CodeBlock);
                self.code -= usize::from(code);
                self.not_block -= 1;
                self.events.push(event);
                if code && std::mem::take(&mut self.mermaid) {
                    self.events.push(Event::Html(CowStr::Borrowed("</figure>\n")));
                }
            }
            Event::Start(Tag::BlockQuote(_)) => {
                self.quotes.push(Quote { at: self.events.len(), callout: None });
                self.events.push(event);
            }
            Event::End(TagEnd::BlockQuote(_)) => match self.quotes.pop() {
                Some(Quote { callout: Some(folds), .. }) => {
                    let close = if folds { "</div></details>\n" } else { "</div></div>\n" };
                    self.events.push(Event::Html(CowStr::Borrowed(close)))
                }
                _ => self.events.push(event),
            },
            Event::Start(Tag::Paragraph | Tag::Item) => {
                self.open.push(self.events.len());
                self.events.push(event);
            }
            Event::End(TagEnd::Paragraph) if self.title.is_some() => {
                // The callout's first paragraph was its title alone: nothing of it stays open.
                self.end_title(false);
            }
            Event::SoftBreak | Event::HardBreak if self.title.is_some() => self.end_title(true),
            Event::End(TagEnd::Paragraph | TagEnd::Item) => {
                self.open.pop();
                self.events.push(event);
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                let dest = dest_of(&self.model, range.start, link_type, &dest_url);
                self.image = Some(Image {
                    dest,
                    start: range.start,
                    link_type,
                    dest_url,
                    title,
                    id,
                    alt: String::new(),
                    depth: 0,
                });
            }
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let dest = dest_of(&self.model, range.start, link_type, &dest_url);
                let dest_url = self.links.href(dest, self.own, dest_url);
                self.events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
            }
            Event::Text(t) if self.code == 0 => self.text_event(t, range),
            // A task's checkbox is named by its state: a control without a name reads as a
            // bare "checkbox" to a screen reader (and fails axe's `label` rule).
            Event::TaskListMarker(done) => {
                self.events.push(Event::InlineHtml(CowStr::Borrowed(if done {
                    "<input disabled=\"\" type=\"checkbox\" checked=\"\" aria-label=\"done\"/>\n"
                } else {
                    "<input disabled=\"\" type=\"checkbox\" aria-label=\"to do\"/>\n"
                })))
            }
            Event::InlineMath(tex) => {
                self.events.push(Event::InlineHtml(CowStr::from(math::html(&tex, false))))
            }
            Event::DisplayMath(tex) => {
                self.events.push(Event::InlineHtml(CowStr::from(math::html(&tex, true))))
            }
            // Raw HTML is passed on; ammonia below keeps only what is harmless.
            other => self.events.push(other),
        }
    }

    fn text_event(&mut self, mut t: CowStr<'s>, range: std::ops::Range<usize>) {
        if self.title.is_none()
            && let Some(q) = self.quotes.last()
            && q.callout.is_none()
            && q.at + 2 == self.events.len()
            && matches!(self.events.last(), Some(Event::Start(Tag::Paragraph)))
            && let Some((kind, fold, rest)) = callout_head(&t)
        {
            self.open_callout(&kind, fold);
            let rest = rest.trim_start();
            if !rest.is_empty() {
                push_highlighted(CowStr::from(rest.to_string()), &mut self.events);
            }
            return;
        }
        // A `^id` ending a block's last line is the block's id, hidden as Obsidian hides it
        // (`headings::block_id` is the rule the resolver uses).
        if self.not_block == 0
            && self.ends_line(range.end)
            && let Some(&at) = self.open.last()
            && let Some(id) = headings::block_id(&t)
        {
            let id = id.to_string();
            let kept = t.trim_end();
            t = CowStr::from(kept[..kept.len() - id.len() - 1].trim_end().to_string());
            if !self.block_ids.iter().any(|(i, _)| *i == at) {
                self.block_ids.push((at, id));
            }
        }
        push_highlighted(t, &mut self.events);
    }

    /// The quote just opened is a callout: its start becomes the callout's, with a title
    /// element of its own; a folding one is a `<details>` the reader opens and closes.
    fn open_callout(&mut self, kind: &str, fold: Fold) {
        let q = self.quotes.last_mut().expect("a quote is open");
        // The paragraph the title was read from is not the body's.
        self.events.pop();
        self.open.pop();
        let class = format!("callout callout-{kind}");
        let open = match fold {
            Fold::No => format!("<div class=\"{class}\"><div class=\"callout-title\">"),
            Fold::Collapsed => {
                format!("<details class=\"{class}\"><summary class=\"callout-title\">")
            }
            Fold::Expanded => {
                format!("<details class=\"{class}\" open><summary class=\"callout-title\">")
            }
        };
        self.events[q.at] = Event::Html(CowStr::from(open));
        q.callout = Some(fold != Fold::No);
        // Obsidian's default title: the kind, capitalised.
        let mut default: Vec<char> = kind.chars().collect();
        if let Some(c) = default.first_mut() {
            *c = c.to_ascii_uppercase();
        }
        self.title = Some((self.events.len(), default.into_iter().collect()));
    }

    /// The callout title ends (at its line's end); `more` when its paragraph goes on, then as
    /// the body's first paragraph.
    fn end_title(&mut self, more: bool) {
        let Some((start, default)) = self.title.take() else { return };
        if self.events.len() == start {
            self.events.push(Event::Text(CowStr::from(default)));
        }
        let folds = self.quotes.last().and_then(|q| q.callout).unwrap_or(false);
        let end = if folds { "</summary>" } else { "</div>" };
        self.events
            .push(Event::Html(CowStr::from(format!("{end}\n<div class=\"callout-content\">\n"))));
        if more {
            self.open.push(self.events.len());
            self.events.push(Event::Start(Tag::Paragraph));
        }
    }

    /// An image's inner events are its alt text; its end shows the embed.
    fn in_image(&mut self, event: Event<'s>) {
        let img = self.image.as_mut().expect("an image is open");
        match event {
            Event::Start(Tag::Image { .. }) => img.depth += 1,
            Event::End(TagEnd::Image) if img.depth > 0 => img.depth -= 1,
            Event::End(TagEnd::Image) => {
                let img = self.image.take().expect("an image is open");
                self.end_image(img);
            }
            Event::Text(t) | Event::Code(t) => img.alt.push_str(&t),
            _ => {}
        }
    }

    fn end_image(&mut self, img: Image<'s>) {
        let wiki = is_wiki(img.link_type);
        // A wikilink's alias is the model's (a table's `\|` included); a Markdown image's
        // size follows a `|` in its alt text, as Obsidian writes `![alt|300](a.png)`.
        let written = match self.model.get(&img.start).filter(|l| l.embed && wiki) {
            Some(l) => l.alias.clone().unwrap_or_default(),
            None if wiki => img.alt.clone(),
            None => img.alt.rsplit_once('|').map(|(_, s)| s.to_string()).unwrap_or_default(),
        };
        let size = Size::parse(&written);
        let alt = match (&size, wiki) {
            (Some(_), true) => String::new(),
            (Some(_), false) => {
                img.alt.rsplit_once('|').map(|(a, _)| a.to_string()).unwrap_or_default()
            }
            (None, true) => written,
            (None, false) => img.alt.clone(),
        };
        if let Dest::Vault(key, fragment) = &img.dest
            && let Some(found) = self.embeds.found.get(&(key.clone(), fragment.clone()))
        {
            let html = self.embed_html(found, key, fragment.as_deref(), alt, size);
            self.events.push(Event::InlineHtml(CowStr::from(html)));
            return;
        }
        // Not found by the caller (an external image, or no embeds looked up): a link, so a
        // note cannot make the browser fetch anything from elsewhere.
        let dest_url = self.links.href(img.dest, self.own, img.dest_url);
        let (link_type, title, id) = (img.link_type, img.title, img.id);
        self.events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
        self.events.push(Event::Text(CowStr::from(img.alt)));
        self.events.push(Event::End(TagEnd::Link));
    }

    /// The HTML of one found embed.
    fn embed_html(
        &self,
        found: &Found,
        key: &LinkKey,
        fragment: Option<&str>,
        alt: String,
        size: Option<Size>,
    ) -> String {
        let shown_name = match fragment {
            Some(f) => format!("{}#{f}", key.0),
            None => key.0.clone(),
        };
        let href = || {
            let dest = Dest::Vault(key.clone(), fragment.map(str::to_string));
            esc(&self.links.href(dest, self.own, CowStr::from(key.0.clone())))
        };
        match found {
            // The file is what is missing, whatever part of it was asked for.
            Found::Missing => {
                format!("<span class=\"embed-missing\">{} (not in the vault)</span>", esc(&key.0))
            }
            Found::Attachment { path, kind } => {
                let src = esc(&(self.embeds.file_url)(path));
                match kind.kind {
                    AttachmentKind::Image | AttachmentKind::Vector => {
                        let mut attrs = String::new();
                        if let Some(s) = size {
                            attrs.push_str(&format!(" width=\"{}\"", s.width));
                            if let Some(h) = s.height {
                                attrs.push_str(&format!(" height=\"{h}\""));
                            }
                        }
                        let fitted = (kind.kind == AttachmentKind::Image)
                            .then_some(self.embeds.fitted_url)
                            .flatten()
                            .and_then(|f| f(path, size.map(|s| s.width)));
                        let img = |src: &str| {
                            format!(
                                "<img class=\"embed-image\" src=\"{src}\" alt=\"{}\"{attrs}>",
                                esc(&alt)
                            )
                        };
                        match fitted {
                            // A tap on the fitted copy opens the original, to zoom into. The
                            // title names the link when the image has no alt text to.
                            Some(small) => format!(
                                "<a class=\"embed-image-link\" href=\"{src}\" title=\"Open {} at full size\">{}</a>",
                                esc(path.rsplit('/').next().unwrap_or(path)),
                                img(&esc(&small))
                            ),
                            None => img(&src),
                        }
                    }
                    // Obsidian plays an embedded recording in place; the source is the
                    // same gated route an image's is.
                    AttachmentKind::Audio => {
                        format!("<audio class=\"embed-audio\" controls src=\"{src}\"></audio>")
                    }
                    AttachmentKind::Video => {
                        format!("<video class=\"embed-video\" controls src=\"{src}\"></video>")
                    }
                }
            }
            Found::Note { .. } if self.nested => {
                format!("<a class=\"embed-link\" href=\"{}\">{}</a>", href(), esc(&shown_name))
            }
            Found::Note { part, .. } => {
                let shown = Shown::note(&part.text);
                let anchors = Anchors::of(&part.text);
                let inner = Walk::new(&shown, 1, &anchors, self.links, self.embeds, true).html();
                format!(
                    "<div class=\"embed\"><div class=\"embed-title\"><a href=\"{}\">{}</a></div>\n{inner}</div>",
                    href(),
                    esc(&shown_name)
                )
            }
            Found::Refused { why, .. } => format!(
                "<a class=\"embed-link\" href=\"{}\">{}</a> <em class=\"embed-refused\">(not embedded: {})</em>",
                href(),
                esc(&shown_name),
                esc(why)
            ),
        }
    }
}

/// Text made safe inside an HTML attribute or element.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// An Obsidian callout's first line (`[!kind]`, `[!kind]-`, `[!kind]+ Title`): its kind in
/// lower case, its fold and the rest of the line (the title).
fn callout_head(t: &str) -> Option<(String, Fold, &str)> {
    let after = t.strip_prefix("[!")?;
    let kind: String =
        after.chars().take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_').collect();
    let tail = after[kind.len()..].strip_prefix(']')?;
    if kind.is_empty() {
        return None;
    }
    let (fold, rest) = match tail.as_bytes().first() {
        Some(b'-') => (Fold::Collapsed, &tail[1..]),
        Some(b'+') => (Fold::Expanded, &tail[1..]),
        _ => (Fold::No, tail),
    };
    Some((kind.to_lowercase(), fold, rest))
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

/// The one sanitiser every surface uses (`api::sanitize`), with the MathML the math writes.
fn clean(html: &str) -> String {
    super::sanitize::clean(html, math::TAGS, math::ATTRIBUTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_embeds() -> Embeds<'static> {
        static NONE: std::sync::LazyLock<HashMap<EmbedKey, Found>> =
            std::sync::LazyLock::new(HashMap::new);
        Embeds { found: &NONE, file_url: &|p| format!("/vault/{p}"), fitted_url: None }
    }

    fn render(md: &str, resolved: &[(&str, bool, Option<&str>)]) -> String {
        render_with(md, resolved, &HashMap::new())
    }

    #[test]
    fn a_task_s_checkbox_is_named_by_its_state() {
        let html = render("- [ ] buy milk\n- [x] post the letter\n", &[]);
        assert_eq!(html.matches("type=\"checkbox\"").count(), 2, "{html}");
        assert!(
            html.contains("aria-label=\"to do\"") && html.contains("aria-label=\"done\""),
            "{html}"
        );
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
            file_url: &|p| format!("/ui/attachment?path={p}"),
            new_url: &|t| format!("/ui/new?path={t}"),
        };
        note_html(&Shown::note(md), 1, &Anchors::of(md), &links, &no_embeds())
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
        let html = note_html(&doc, 1, &Anchors::of(""), &Links::AsWritten, &no_embeds());
        assert!(html.contains("50%% off %%really%%"), "{html}");
    }

    #[test]
    fn highlights_render_as_mark_and_stray_equals_stay() {
        let html = render("A ==bright== idea, a == b, ==not ==, `==code==`.", &[]);
        assert!(html.contains("A <mark>bright</mark> idea, a == b, ==not ==, "), "{html}");
        assert!(html.contains("<code>==code==</code>"), "{html}");
    }

    #[test]
    fn callouts_have_a_title_of_their_own_a_default_one_and_fold() {
        let html = render("# Top\n\n> [!warning]- Mind the gas\n> Valve is stiff.\n", &[]);
        assert!(html.contains("<h1 id=\"top\">Top</h1>"), "{html}");
        assert!(
            html.contains("<details class=\"callout callout-warning\"><summary class=\"callout-title\">Mind the gas</summary>"),
            "{html}"
        );
        assert!(html.contains("<div class=\"callout-content\">\n<p>Valve is stiff.</p>"), "{html}");
        // The kind is not repeated beside the title.
        assert_eq!(html.matches("warning").count(), 1, "{html}");
        let cases = [
            (
                "> [!tip]\n> Body.\n",
                "<div class=\"callout callout-tip\"><div class=\"callout-title\">Tip</div>",
            ),
            (
                "> [!NOTE] Read **this**\n",
                "<div class=\"callout-title\">Read <strong>this</strong></div>",
            ),
            (
                "> [!faq]+\n> Open.\n",
                "<details class=\"callout callout-faq\" open=\"\"><summary class=\"callout-title\">Faq</summary>",
            ),
            ("> [!info] ==Lit==\n> x\n", "<div class=\"callout-title\"><mark>Lit</mark></div>"),
        ];
        for (md, want) in cases {
            let html = render(md, &[]);
            assert!(html.contains(want), "{md}: {html}");
        }
        let plain = render("> just a quote\n> [!tip] not a callout\n", &[]);
        assert!(plain.contains("<blockquote>") && !plain.contains("class="), "{plain}");
    }

    #[test]
    fn nested_callouts_each_get_their_own_title_and_body() {
        let md = "> [!note] Outer\n> Outer body.\n> > [!todo]- Inner\n> > Inner body.\n\nAfter.\n";
        let html = render(md, &[]);
        let outer = html.find("callout-note").unwrap();
        let inner = html.find("<details class=\"callout callout-todo\">").unwrap();
        assert!(outer < inner, "{html}");
        assert!(html.contains("<summary class=\"callout-title\">Inner</summary>"), "{html}");
        assert!(html.contains("Inner body.</p>\n</div></details>\n</div></div>"), "{html}");
        assert!(html.ends_with("<p>After.</p>\n"), "{html}");
    }

    #[test]
    fn mermaid_is_a_labelled_code_block_and_math_is_mathml_or_marked() {
        let html =
            render("```mermaid\ngraph TD; A-->B\n```\n\nInline $e^x$ and\n\n$$\\sum_i i$$\n", &[]);
        assert!(
            html.contains("<figure class=\"mermaid\"><figcaption>Mermaid diagram</figcaption>\n<pre><code class=\"language-mermaid\">graph TD; A--&gt;B\n</code></pre>\n</figure>"),
            "{html}"
        );
        assert!(html.contains("Inline <math display=\"inline\"><semantics><mrow><msup><mi>e</mi><mi>x</mi></msup></mrow>"), "{html}");
        assert!(html.contains("<math display=\"block\">"), "{html}");
        assert!(
            html.contains("<annotation encoding=\"application/x-tex\">\\sum_i i</annotation>"),
            "{html}"
        );
        let html = render("Broken $x \\nocommand$ formula.\n", &[]);
        assert!(
            html.contains("Broken <code class=\"math\">x \\nocommand</code> formula."),
            "{html}"
        );
        // A price is no formula.
        let html = render("It costs $5 and $10.\n", &[]);
        assert!(html.contains("It costs $5 and $10.") && !html.contains("math"), "{html}");
    }

    fn render_embeds(md: &str, found: &[(&str, Option<&str>, Found)]) -> String {
        let found: HashMap<EmbedKey, Found> = found
            .iter()
            .map(|(t, f, x)| (((t.to_string(), true), f.map(str::to_string)), x.clone()))
            .collect();
        let paths: HashMap<LinkKey, Option<String>> = found
            .iter()
            .map(|((k, _), x)| {
                let path = match x {
                    Found::Attachment { path, .. }
                    | Found::Note { path, .. }
                    | Found::Refused { path, .. } => Some(path.clone()),
                    Found::Missing => None,
                };
                (k.clone(), path)
            })
            .collect();
        let links = Links::Resolved {
            paths: &paths,
            anchors: &HashMap::new(),
            note_url: &|p| format!("/ui/note?path={p}"),
            file_url: &|p| format!("/ui/attachment?path={p}"),
            new_url: &|t| format!("/ui/new?path={t}"),
        };
        let embeds = Embeds {
            found: &found,
            file_url: &|p| format!("/ui/attachment?path={p}"),
            fitted_url: None,
        };
        note_html(&Shown::note(md), 1, &Anchors::of(md), &links, &embeds)
    }

    fn png(path: &str) -> Found {
        Found::Attachment { path: path.to_string(), kind: attachment::kind_of(path).unwrap() }
    }

    #[test]
    fn embedded_audio_and_video_play_in_place_from_the_gated_route_and_never_autoplay() {
        let md = "![[clip.mp3]]\n\n![[clip.mp4]]\n\n\
                  <audio autoplay src=\"https://evil.example/a.mp3\" onplay=\"x()\"></audio>\
                  <video poster=\"https://evil.example/p.png\"><source src=\"https://evil.example/v.mp4\"></video>\n";
        let found = vec![
            ("clip.mp3", None, png("media/clip.mp3")),
            ("clip.mp4", None, png("media/clip.mp4")),
        ];
        let html = render_embeds(md, &found);
        for want in [
            "<audio class=\"embed-audio\" controls=\"\" src=\"/ui/attachment?path=media/clip.mp3\"></audio>",
            "<video class=\"embed-video\" controls=\"\" src=\"/ui/attachment?path=media/clip.mp4\"></video>",
        ] {
            assert!(html.contains(want), "{want} in {html}");
        }
        for bad in ["autoplay", "onplay", "poster", "<source"] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
    }

    #[test]
    fn embedded_images_show_at_their_size_and_a_missing_one_shows_missing() {
        let md = "![[boiler.png]] ![[boiler.png|300]] ![[boiler.png|300x200]] ![[gone.png]]\n\n\
                  ![A boiler|120](boiler.png) ![Just alt](boiler.png) [[boiler.png]] [[gone.png]]\n";
        let mut found =
            vec![("boiler.png", None, png("img/boiler.png")), ("gone.png", None, Found::Missing)];
        let html = render_embeds(md, &found);
        // The Markdown image is keyed as a Markdown link.
        assert!(
            html.contains("<a href=\"boiler.png\""),
            "unkeyed markdown image stays a link: {html}"
        );
        found.truncate(2);
        let src = "src=\"/ui/attachment?path=img/boiler.png\"";
        for want in [
            format!("<img class=\"embed-image\" {src} alt=\"\">"),
            format!("<img class=\"embed-image\" {src} alt=\"\" width=\"300\">"),
            format!("<img class=\"embed-image\" {src} alt=\"\" width=\"300\" height=\"200\">"),
            "<span class=\"embed-missing\">gone.png (not in the vault)</span>".to_string(),
            "<a href=\"/ui/attachment?path=img/boiler.png\"".to_string(),
        ] {
            assert!(html.contains(&want), "{want} in {html}");
        }
        assert!(
            !html.contains("/ui/new"),
            "a missing attachment is never a note to create: {html}"
        );
        // A Markdown image, keyed as such, takes its size after a `|` in its alt text.
        let key = (("boiler.png".to_string(), false), None);
        let map = HashMap::from([(key, png("img/boiler.png"))]);
        let embeds = Embeds { found: &map, file_url: &|p| format!("/vault/{p}"), fitted_url: None };
        let md = "![A boiler|120](boiler.png) ![Just alt](boiler.png)";
        let html = note_html(&Shown::note(md), 1, &Anchors::of(md), &Links::AsWritten, &embeds);
        assert!(
            html.contains("src=\"/vault/img/boiler.png\" alt=\"A boiler\" width=\"120\">"),
            "{html}"
        );
        assert!(html.contains("alt=\"Just alt\">"), "{html}");
    }

    fn note(path: &str, text: &str) -> Found {
        Found::Note {
            path: path.to_string(),
            part: crate::vault::embed::Part { text: text.to_string(), first_line: 1 },
        }
    }

    #[test]
    fn embedded_notes_show_their_part_one_level_deep_and_self_embeds_are_refused() {
        let md = "![[Boiler#Service]]\n\n![[Home]]\n\n![[Gone]]\n";
        let html = render_embeds(
            md,
            &[
                (
                    "Boiler",
                    Some("Service"),
                    note("B.md", "## Service\n\nOnce a year ![[Deeper]] ![[pic.png|50]]\n"),
                ),
                (
                    "Home",
                    None,
                    Found::Refused {
                        path: "Home.md".into(),
                        why: "a note cannot embed itself".into(),
                    },
                ),
                ("Gone", None, Found::Missing),
                ("Deeper", None, note("D.md", "deep text")),
                ("pic.png", None, png("pic.png")),
            ],
        );
        assert!(
            html.contains("<div class=\"embed\"><div class=\"embed-title\"><a href=\"/ui/note?path=B.md#service\" rel=\"noopener noreferrer\">Boiler#Service</a></div>"),
            "{html}"
        );
        assert!(html.contains("<h2 id=\"service\">Service</h2>"), "{html}");
        // One level deep: the embed inside the part is a link; its image still shows.
        assert!(html.contains("<a class=\"embed-link\" href=\"/ui/note?path=D.md\""), "{html}");
        assert!(!html.contains("deep text"), "{html}");
        assert!(
            html.contains("src=\"/ui/attachment?path=pic.png\" alt=\"\" width=\"50\""),
            "{html}"
        );
        assert!(html.contains("(not embedded: a note cannot embed itself)"), "{html}");
        assert!(html.contains("Gone (not in the vault)") && !html.contains("/ui/new"), "{html}");
    }

    #[test]
    fn gather_finds_the_embeds_of_the_note_and_of_its_parts_once() {
        let calls = std::cell::RefCell::new(Vec::new());
        let find = |keys: &[EmbedKey]| -> crate::Result<Vec<Found>> {
            calls.borrow_mut().push(keys.to_vec());
            Ok(keys
                .iter()
                .map(|((t, _), _)| match t.as_str() {
                    "Boiler" => note("B.md", "See [[Gas]] and ![[pic.png]] ![[Home]]"),
                    _ => Found::Missing,
                })
                .collect())
        };
        let g = gather(&Shown::note("![[Boiler]] [[Home]] ![[Boiler]]"), &find).unwrap();
        let calls = calls.into_inner();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0], [(("Boiler".to_string(), true), None)]);
        assert_eq!(
            calls[1],
            [(("pic.png".to_string(), true), None), (("Home".to_string(), true), None)]
        );
        let targets: Vec<&str> = g.targets.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(targets, ["Boiler", "Home", "Gas", "pic.png"]);
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
        let html =
            note_html(&Shown::note(md), 1, &Anchors::of(md), &Links::AsWritten, &no_embeds());
        assert!(html.contains("href=\"Basic%20formatting%20syntax#bold-text\""), "{html}");
        assert!(html.contains("href=\"Note\""), "{html}");
        assert!(html.contains("href=\"Other.md#^b1\""), "{html}");
    }
}
