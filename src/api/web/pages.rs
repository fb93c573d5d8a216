//! The web page's HTML: maud templates (Rust checked at compile time, every interpolation
//! escaped), one function per page or fragment.
//!
//! They take the service layer's results and render them; they fetch nothing and decide
//! nothing a rule depends on. The only HTML not escaped here is a note's body, which
//! `render::note_html` has already passed through the sanitiser. No inline script and no
//! `style` attribute appears (the Content-Security-Policy forbids both); charts are inline SVG
//! coloured by classes from `app.css`.

use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;

use super::url;

/// The frame of every page: navigation, sign-out, the stylesheet and the script.
pub(crate) fn layout(title: &str, signed_in: bool, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) " · mdvault" }
                link rel="icon" href="/ui/static/icon.svg" type="image/svg+xml";
                link rel="stylesheet" href="/ui/static/app.css";
                script src="/ui/static/app.js" defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/ui/" { "mdvault" }
                    @if signed_in {
                        nav {
                            a href="/ui/" accesskey="s" { "Search" }
                            a href="/ui/new" accesskey="n" { "New note" }
                            a href="/ui/health" accesskey="h" { "Health" }
                            a href="/ui/audit" { "Audit" }
                            a href="/ui/clients" { "Clients" }
                            // A link-style button: signing out is rare and should not be the
                            // loudest thing on every page.
                            form.inline method="post" action="/ui/logout" {
                                button.quiet type="submit" id="sign-out" { "Sign out" }
                            }
                        }
                    }
                }
                main #main tabindex="-1" { (body) }
            }
        }
    }
}

/// A refusal shown as a page: the code, the message (which says what to do next).
pub(crate) fn error(code: &str, message: &str) -> Markup {
    html! {
        section.error role="alert" {
            h1 { "That did not work" }
            p { code { (code) } }
            p.message { (message) }
            p { a href="/ui/" { "Back to search" } }
        }
    }
}

/// The sign-in form.
pub(crate) fn login(next: &str, failed: bool) -> Markup {
    html! {
        section.login {
            h1 { "Sign in" }
            p { "Enter the server's API key (the value of " code { "MDVAULT_API_KEY" } ")." }
            @if failed {
                p.error role="alert" id="login-error" { "That is not the key this server runs with; try again." }
            }
            form method="post" action="/ui/login" {
                input type="hidden" name="next" value=(next);
                label for="key" { "API key" }
                input #key type="password" name="key" autocomplete="current-password" required autofocus;
                button type="submit" { "Sign in" }
            }
        }
    }
}

/// The search page: the form (which works without script as a plain GET) and the results.
pub(crate) fn search(
    vaults: &[String],
    q: &str,
    vault: &str,
    folder: &str,
    results: Option<Markup>,
) -> Markup {
    html! {
        h1.visually-hidden { "Search" }
        form #search-form role="search" method="get" action="/ui/search" {
            label.visually-hidden for="q" { "Search the vault" }
            // Focused on an empty page only: on a page of results, focusing the box would
            // scroll away from where Back returns the reader.
            input #q type="search" name="q" value=(q) placeholder="Search notes and documents" autocomplete="off" autofocus[q.is_empty()];
            div.filters {
                label for="vault" { "Vault" }
                select #vault name="vault" {
                    option value="" selected[vault.is_empty()] { "all vaults" }
                    @for v in vaults {
                        option value=(v) selected[v == vault] { (v) }
                    }
                }
                label for="folder" { "Folder" }
                input #folder type="text" name="folder" value=(folder) placeholder="e.g. Home/Utilities";
                button type="submit" { "Search" }
            }
        }
        div #results aria-live="polite" {
            @if let Some(r) = results { (r) }
        }
    }
}

/// A frontmatter value as text: strings bare, lists joined, anything else as JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What the note page shows.
pub(crate) struct NotePage<'a> {
    pub(crate) vault: &'a str,
    pub(crate) path: &'a str,
    pub(crate) obsidian_vault: &'a str,
    pub(crate) frontmatter: &'a serde_json::Map<String, Value>,
    pub(crate) headings: &'a [crate::vault::HeadingEntry],
    /// The ids the rendered headings carry, which the outline links to.
    pub(crate) anchors: &'a crate::api::render::Anchors,
    pub(crate) body_html: String,
    pub(crate) backlinks: &'a [crate::upkeep::survey::Backlink],
    pub(crate) verdict: Option<&'a crate::docs::Verdict>,
    /// A note: offer the editor. A document or a canvas is shown read-only.
    pub(crate) editable: bool,
    /// The heading: the frontmatter's `title`, else the first H1, else the file name.
    pub(crate) title: &'a str,
    /// Just saved: say so.
    pub(crate) saved: bool,
    /// A line a finding points at: its number, its text, and the heading line of the section
    /// it is in (the nearest anchor).
    pub(crate) focus: Option<(usize, String, Option<usize>)>,
    /// Opened from a search result: the id the page lands on (the heading the passage is
    /// under, else the text's start) and the query whose words the script marks.
    pub(crate) landing: Option<(String, &'a str)>,
}

/// A note (or a filed document's extracted text) rendered, with its outline, frontmatter,
/// backlinks and the actions on it.
pub(crate) fn note(p: &NotePage) -> Markup {
    let obsidian = format!(
        "obsidian://open?vault={}&file={}",
        url::enc(p.obsidian_vault),
        url::enc(p.path.strip_suffix(".md").unwrap_or(p.path))
    );
    html! {
        article.note data-land=[p.landing.as_ref().map(|l| &l.0)] data-marks=[p.landing.as_ref().map(|l| super::results::marked_words(&p.body_html, l.1).join(" "))] {
            @if p.saved { p.done role="status" #saved { "Saved." } }
            @if let Some((line, text, section)) = &p.focus {
                p.focus #focus-line {
                    "Line " (line) ": " code { (text) }
                    @if let Some(h) = section { " · " a href=(format!("#{}", p.anchors.id_at(*h))) { "go to its section" } }
                }
            }
            header.note-head {
                h1 { (p.title) }
                p.note-meta { span.note-path #note-path { (p.path) } " · vault " span.vault { (p.vault) } }
                nav.actions aria-label="note actions" {
                    @if p.editable {
                        a href=(url::with(&url::note(p.vault, p.path), "/ui/note", "/ui/edit")) id="edit-note" { "Edit" }
                    }
                    a href=(url::with(&url::note(p.vault, p.path), "/ui/note", "/ui/rename")) { "Rename" }
                    a href=(url::with(&url::note(p.vault, p.path), "/ui/note", "/ui/delete")) { "Delete" }
                    a href=(obsidian) { "Open in Obsidian" }
                    @if p.verdict.is_some() {
                        a href=(url::file(p.vault, p.path)) id="open-pdf" target="_blank" rel="noopener" { "Open the PDF" }
                    }
                }
            }
            @if let Some(v) = p.verdict {
                section.verdict {
                    h2 { "Extraction" }
                    table {
                        tr { th { "verdict" } td #verdict class=(format!("verdict-{}", v.status.as_str())) { (v.status.as_str()) } }
                        tr { th { "pages" } td { (v.pages) } }
                        tr { th { "text layer" } td { (if v.has_text_layer { "yes" } else { "no" }) } }
                        tr { th { "characters extracted" } td { (v.extracted_chars) } }
                        @if !v.detail.is_empty() { tr { th { "why" } td { (v.detail) } } }
                    }
                }
            }
            // The text first: on a phone the outline, properties and backlinks follow it (on a
            // wide screen the stylesheet puts them in a column to its left), and the keyboard
            // reaches the text before the outline's many links.
            div.note-grid {
                div.body #note-body { (PreEscaped(&p.body_html)) }
                aside.side {
                    // Closed until asked for, on every screen: each heading brings three keyboard
                    // stops (its link, copy and edit), so a long note's outline was a wall of
                    // stops (146 for Obsidian's own Properties.md) on the way to the rest.
                    @if !p.headings.is_empty() {
                        details.outline #outline {
                            summary { h2 { "Outline" } " " span.outline-count { (p.headings.len()) @if p.headings.len() == 1 { " heading" } @else { " headings" } } }
                            ol {
                                @for h in p.headings {
                                    li class=(format!("depth-{}", h.depth)) {
                                        a href=(format!("#{}", p.anchors.id_at(h.line))) { (h.text) }
                                        " "
                                        button.copy type="button" data-copy=(h.path) title="copy the heading path for an agent" { "copy " code { (h.path) } }
                                        @if p.editable {
                                            " "
                                            a.edit-section href=(format!("{}&section={}", url::with(&url::note(p.vault, p.path), "/ui/note", "/ui/edit"), url::enc(&h.path))) { "edit" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    @if !p.frontmatter.is_empty() {
                        section.frontmatter {
                            h2 { "Properties" }
                            table {
                                @for (k, v) in p.frontmatter {
                                    tr { th { (k) } td { (value_text(v)) } }
                                }
                            }
                        }
                    }
                    section.backlinks {
                        h2 { "Backlinks" }
                        @if p.backlinks.is_empty() { p.empty { "No note links here." } }
                        ul {
                            @for b in p.backlinks {
                                li { a href=(url::note(p.vault, &b.from)) { (b.from) } " line " (b.line) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The editor: the text, the etag it was read at, the text it was shown (`base`, which a save
/// is compared against), and (after a conflict) what the file holds now beside what was sent.
pub(crate) struct EditPage<'a> {
    pub(crate) vault: &'a str,
    pub(crate) path: &'a str,
    pub(crate) section: Option<&'a str>,
    pub(crate) text: &'a str,
    pub(crate) base: &'a str,
    pub(crate) etag: &'a str,
    /// On a conflict: the current text of the note or section, and what the other change was.
    pub(crate) conflict: Option<Conflict<'a>>,
    /// Keeping yours would delete these lines now on disk: asked before it is done.
    pub(crate) lost: Option<&'a [String]>,
    /// The frontmatter key a save stamps with the time, when it will.
    pub(crate) stamp: Option<&'a str>,
}

/// A save refused because the note changed.
pub(crate) struct Conflict<'a> {
    pub(crate) theirs: &'a str,
    /// The unified diff from the text the editor was shown to the version on disk.
    pub(crate) other: &'a str,
}

/// A unified diff, its lines coloured by kind.
fn diff_lines(id: &str, diff: &str) -> Markup {
    html! {
        pre.diff id=(id) tabindex="0" {
            @for line in diff.lines() {
                @let class = if line.starts_with('+') { "add" } else if line.starts_with('-') { "del" } else if line.starts_with('@') { "hunk" } else { "same" };
                span class=(class) { (line) } "\n"
            }
        }
    }
}

/// The three ways on from a conflict (the confirmation names its own first button).
fn ways_on(mine: Markup) -> Markup {
    html! {
        div.buttons.ways {
            button type="submit" name="resolve" value="both" #keep-both { "Keep both" }
            button type="submit" name="resolve" value="theirs" #take-theirs formnovalidate { "Take theirs" }
            (mine)
        }
        ul.ways-help {
            li { b { "Keep both" } ": the version on disk, then the lines of yours it does not have." }
            li { b { "Take theirs" } ": leave the version on disk as it is; your text is dropped." }
            li { b { "Keep mine" } ": save the text in the editor (merge it there first if you like)." }
        }
    }
}

/// The editor page.
pub(crate) fn edit(p: &EditPage) -> Markup {
    let unsaved = p.conflict.is_some() || p.lost.is_some();
    html! {
        h1 { "Edit " (p.path) @if let Some(s) = p.section { " · " code { (s) } } }
        @if let Some(c) = &p.conflict {
            section.conflict role="alert" #conflict {
                h2 { "The note changed since you opened it" }
                p { "Nothing was overwritten. What the other change was, both versions in full, \
                     and three ways on are below; your text is still in the editor." }
                h3 { "What the other change was" }
                @if c.other.is_empty() { p #other-change { "It changed elsewhere in the note; this part reads as before." } }
                @else { (diff_lines("other-change", c.other)) }
                @let diff = crate::vault::diff::unified(c.theirs, p.text);
                h3 { "What yours changes against the version on disk" }
                @if diff.is_empty() { p { "Nothing: the two are the same text." } }
                @else { (diff_lines("diff", &diff)) }
                div.versions {
                    // Each pane may scroll sideways, so each takes a keyboard stop (a region
                    // that scrolls must be reachable without a mouse).
                    div { h3 { "On disk now" } pre #theirs tabindex="0" aria-label="the version on disk now" { (c.theirs) } }
                    div { h3 { "Yours" } pre #yours tabindex="0" aria-label="your version" { (p.text) } }
                }
            }
        }
        @if let Some(lost) = p.lost {
            section.conflict role="alert" #confirm-lost {
                h2 { "Keeping yours deletes lines that are on disk now" }
                p { "These " (lost.len()) " lines are in the version on disk and not in yours:" }
                ul #lost-lines { @for l in lost { li { code { (l) } } } }
                p { "Delete them, or keep both versions' lines instead." }
            }
        }
        form.editor method="post" action="/ui/edit" data-unsaved=[unsaved.then_some("1")] {
            input type="hidden" name="vault" value=(p.vault);
            input type="hidden" name="path" value=(p.path);
            input type="hidden" name="etag" value=(p.etag);
            input type="hidden" name="base" value=(p.base);
            @if let Some(s) = p.section { input type="hidden" name="section" value=(s); }
            label for="text" { @if p.section.is_some() { "Section (heading line included)" } @else { "Note" } }
            textarea #text name="text" rows="24" spellcheck="true" autofocus[!unsaved] aria-describedby="editor-help" { (p.text) }
            p.hint #editor-help {
                "Ctrl+S (⌘S) saves, Esc cancels."
                @if let Some(key) = p.stamp { " Saving also sets " code #stamp-key { (key) ":" } " in the note's properties to the time of the save." }
            }
            @if p.lost.is_some() {
                input type="hidden" name="confirm" value="1";
                (ways_on(html! { button.danger type="submit" name="resolve" value="mine" #keep-mine { "Delete them and keep mine" } }))
            } @else if p.conflict.is_some() {
                (ways_on(html! { button type="submit" name="resolve" value="mine" #keep-mine { "Keep mine" } }))
            } @else {
                div.buttons {
                    button type="submit" #save { "Save" }
                    a href=(url::note(p.vault, p.path)) #cancel { "Cancel" }
                }
            }
        }
    }
}

/// The form that creates a note.
pub(crate) fn new_note(vaults: &[String], vault: &str, path: &str) -> Markup {
    html! {
        h1 { "New note" }
        form.editor method="post" action="/ui/new" {
            label for="vault" { "Vault" }
            select #vault name="vault" {
                @for v in vaults { option value=(v) selected[v == vault] { (v) } }
            }
            label for="path" { "Path" }
            input #path type="text" name="path" value=(path) required placeholder="Folder/Note.md";
            label for="text" { "Text" }
            textarea #text name="text" rows="16" {}
            div.buttons { button type="submit" { "Create" } }
        }
    }
}

/// The confirmation of a rename.
pub(crate) fn rename(vault: &str, path: &str) -> Markup {
    html! {
        h1 { "Rename " (path) }
        form.editor method="post" action="/ui/rename" {
            input type="hidden" name="vault" value=(vault);
            input type="hidden" name="path" value=(path);
            label for="destination" { "New path" }
            input #destination type="text" name="destination" value=(path) required;
            p { "Links to it in other notes are rewritten to the new path." }
            div.buttons { button type="submit" { "Rename" } a href=(url::note(vault, path)) { "Cancel" } }
        }
    }
}

/// The confirmation of a delete.
pub(crate) fn delete(vault: &str, path: &str) -> Markup {
    html! {
        h1 { "Delete " (path) "?" }
        form.editor method="post" action="/ui/delete" {
            input type="hidden" name="vault" value=(vault);
            input type="hidden" name="path" value=(path);
            p { "It moves to the vault's " code { ".trash" } " folder, where Obsidian can restore it." }
            div.buttons { button.danger type="submit" #confirm-delete { "Delete" } a href=(url::note(vault, path)) { "Cancel" } }
        }
    }
}

/// What a write did, with where to go next.
pub(crate) fn done(message: &str, vault: &str, path: Option<&str>, links: Option<usize>) -> Markup {
    html! {
        section.done role="status" {
            h1 { "Done" }
            p #done-message { (message) }
            @if let Some(n) = links { p #links-rewritten { (n) " other notes had their links rewritten." } }
            @if let Some(p) = path { p { a href=(url::note(vault, p)) { "Open " (p) } } }
            p { a href="/ui/" { "Back to search" } }
        }
    }
}
