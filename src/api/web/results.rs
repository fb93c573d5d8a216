//! The search page's results: the engine's passages grouped into one card per note (the title,
//! then the folder, its best passages as plain text with the query's words marked), a count,
//! the ranking in plain words behind a toggle, and an honest word when nothing is close.
//!
//! The grouping is the page's own, made from the passages the engine returned and in their
//! order: a note ranks where its best passage did. The engine's ranking and the REST and MCP
//! answers stay as they are.

use maud::{Markup, PreEscaped, html};

use super::url;
use crate::search::{Hit, Matched, SearchResponse};

/// The most passages a card shows: the best few say what the note holds, and the note itself
/// is one click away.
const PASSAGES_PER_NOTE: usize = 3;

/// About how many characters of a passage a card shows: two or three lines on a wide screen.
const PASSAGE_CHARS: usize = 240;

/// The passages of one note, best first, as the engine ranked them.
type Card<'a> = Vec<&'a Hit>;

/// One card per note, in the order of each note's best passage.
fn group(results: &[Hit]) -> Vec<Card<'_>> {
    let mut cards: Vec<Card<'_>> = Vec::new();
    for hit in results {
        match cards.iter_mut().find(|c| c[0].vault == hit.vault && c[0].path == hit.path) {
            Some(card) => card.push(hit),
            None => cards.push(vec![hit]),
        }
    }
    cards
}

/// Where a passage leads: its note, told the line the passage starts (`at`, which the note
/// page turns into the id of the heading it is under) and the query (`q`, whose words it
/// marks).
fn hit_url(hit: &Hit, query: &str) -> String {
    format!("{}&at={}&q={}", url::note(&hit.vault, &hit.path), hit.line, url::enc(query))
}

/// The id a note opened at file line `line` lands on: the heading the line is under, else the
/// start of the text (`note-body`). Both exist on the page: the heading ids are the ones the
/// note is rendered with.
pub(crate) fn landing(
    headings: &[crate::vault::HeadingEntry],
    anchors: &crate::api::render::Anchors,
    line: usize,
) -> String {
    match headings.iter().rev().find(|h| h.line <= line) {
        Some(h) => anchors.id_at(h.line),
        None => "note-body".to_string(),
    }
}

/// The words of `text` that the query's words match by the lexical index's own analyzer
/// (folded, stemmed: `servicing` and `services` for `service`, never `serviette`), lower case,
/// each once, longest first. The note page marks these in the note's text, so a word is marked
/// where the search would find it. `text` may be the rendered HTML: a word of its markup
/// matches the query as well as the same word in the text would, and the script marks only
/// the text.
pub(crate) fn marked_words(text: &str, query: &str) -> Vec<String> {
    let tokens = crate::index::tokenize::tokenize(query);
    let mut words: Vec<String> = crate::service::query_matches(text, &tokens)
        .into_iter()
        .map(|r| text[r].to_lowercase())
        .collect();
    words.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    words.dedup();
    words
}

/// The folder a note is in, as a person reads it: the path without the file name.
fn folder(path: &str) -> &str {
    path.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("")
}

/// Text with the given byte ranges marked.
fn marked(text: &str, ranges: &[std::ops::Range<usize>]) -> Markup {
    let mut out = String::new();
    let mut at = 0;
    for r in ranges {
        if r.start >= at && text.is_char_boundary(r.start) && text.is_char_boundary(r.end) {
            out.push_str(
                &html! { (text[at..r.start]) mark { (text[r.start..r.end]) } }.into_string(),
            );
            at = r.end;
        }
    }
    out.push_str(&html! { (text[at..]) }.into_string());
    PreEscaped(out)
}

/// A passage as a card shows it: the chunk's text as plain words, about [`PASSAGE_CHARS`] of
/// them from a little before the first query word (a cut marked `…`), and whether it was cut
/// at the start (then its heading is shown before it).
fn passage(chunk: &str, tokens: &[String]) -> (String, bool) {
    let text = plain(chunk);
    let first = crate::service::query_matches(&text, tokens).first().map_or(0, |r| r.start);
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    if chars.len() <= PASSAGE_CHARS {
        return (text, false);
    }
    let at = chars.partition_point(|&(b, _)| b < first);
    let mut start = at.saturating_sub(PASSAGE_CHARS / 4).min(chars.len() - PASSAGE_CHARS);
    while start > 0 && chars[start - 1].1 != ' ' {
        start -= 1;
    }
    let mut end = (start + PASSAGE_CHARS).min(chars.len());
    while end < chars.len() && end > start + PASSAGE_CHARS / 2 && chars[end].1 != ' ' {
        end -= 1;
    }
    let byte = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(text[byte(start)..byte(end)].trim());
    if end < chars.len() {
        out.push('…');
    }
    (out, start > 0)
}

/// A passage of Markdown as the words a reader sees: heading marks, quote and list markers,
/// callout headers, emphasis, code ticks, table rules and link syntax dropped (a wikilink
/// shows its alias, else its target), the lines joined; a heading is set off from the text
/// after it by a dash, so "Parts — The valve is stiff." does not read as one sentence.
pub(crate) fn plain(md: &str) -> String {
    let mut out = String::new();
    let mut after_heading = false;
    for line in md.lines() {
        let heading = is_heading(line.trim_start_matches(['>', ' ']));
        let text = plain_line(line);
        if !text.is_empty() {
            if after_heading {
                out.push_str(" —");
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&text);
            after_heading = heading;
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a line is an ATX heading (`#` to `######`, then a space).
fn is_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && line[hashes..].starts_with(' ')
}

/// One line of [`plain`]: its block markers first, then its inline syntax.
fn plain_line(line: &str) -> String {
    let mut l = line.trim();
    if l.starts_with("```") || l.starts_with("~~~") || l == "---" || l == "$$" {
        return String::new();
    }
    while let Some(rest) = l.strip_prefix('>') {
        l = rest.trim_start();
    }
    // A callout's header: `[!tip]- Title` reads as its title.
    if let Some(rest) = l.strip_prefix("[!")
        && let Some(end) = rest.find(']')
    {
        l = rest[end + 1..].trim_start_matches(['-', '+']).trim_start();
    }
    if is_heading(l) {
        // An ATX heading may close with hashes too (`## Readings ##`).
        l = l.trim_start_matches('#').trim().trim_end_matches('#').trim_end();
    }
    // A block id (`^yearly`) at the end of a line is an address, not words.
    if let Some((before, id)) = l.rsplit_once(" ^")
        && !id.is_empty()
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        l = before;
    }
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = l.strip_prefix(marker) {
            l = rest;
            break;
        }
    }
    let digits = l.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && (l[digits..].starts_with(". ") || l[digits..].starts_with(") ")) {
        l = &l[digits + 2..];
    }
    for task in ["[ ] ", "[x] ", "[X] "] {
        if let Some(rest) = l.strip_prefix(task) {
            l = rest;
            break;
        }
    }
    if l.starts_with('|') {
        // A table's rule row says nothing; a row reads as its cells.
        if l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) {
            return String::new();
        }
        // An escaped pipe (`[[a\|b]]`) is inside a cell, not between two.
        let cells: Vec<String> = l
            .replace("\\|", "\u{1}")
            .split('|')
            .map(|c| inline(c.trim().replace('\u{1}', "\\|").as_str()))
            .filter(|c| !c.is_empty())
            .collect();
        return cells.join(" · ");
    }
    inline(l)
}

/// A line's inline Markdown as text: links as their words, emphasis and code marks dropped.
fn inline(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let embed = rest.strip_prefix('!').unwrap_or(rest);
        if let Some(inner) = embed.strip_prefix("[[") {
            let (body, after) = inner.split_once("]]").unwrap_or((inner, ""));
            out.push_str(&wikilink_text(body));
            rest = after;
        } else if let Some(inner) = embed.strip_prefix('[')
            && let Some((text, tail)) = inner.split_once("](")
            && let Some((_, after)) = tail.split_once(')')
            && !text.contains(']')
        {
            out.push_str(text);
            rest = after;
        } else if let Some(after) =
            ["**", "__", "~~", "=="].iter().find_map(|m| rest.strip_prefix(m))
        {
            rest = after;
        } else if c == '\\' && rest.len() > 1 {
            let next = rest[1..].chars().next().unwrap_or(' ');
            out.push(next);
            rest = &rest[1 + next.len_utf8()..];
        } else {
            if !matches!(c, '`' | '*') {
                out.push(c);
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// What a wikilink shows: its alias, else its target with a heading as `Note › Heading`.
fn wikilink_text(body: &str) -> String {
    // In a table the alias's pipe is escaped (`[[a\|b]]`).
    let body = body.replace("\\|", "|");
    match body.split_once('|') {
        Some((_, alias)) => alias.trim().to_string(),
        None => {
            let mut parts = body.split('#').map(str::trim).filter(|p| !p.is_empty());
            let first = parts.next().unwrap_or_default().to_string();
            parts.filter(|p| !p.starts_with('^')).fold(first, |acc, p| format!("{acc} › {p}"))
        }
    }
}

/// Why a note is listed, in plain words, from its best passage.
fn why(card: &Card<'_>, place: usize) -> Markup {
    let best = card[0];
    let found = if best.pinned {
        "Its name, or an exact identifier in it, matches what you typed."
    } else {
        match best.matched {
            Matched::Both => "It uses your words and is close in meaning.",
            Matched::Lexical => "It uses your words.",
            Matched::Dense => "It is close in meaning, though it does not use your words.",
        }
    };
    html! {
        details.why {
            summary { "Why this note" }
            ul {
                li { (found) }
                li {
                    "Its best passage"
                    @if !best.heading.is_empty() { " (under “" (best.heading.replace("::", " › ")) "”)" }
                    " puts it " (ordinal(place)) " of the notes found."
                }
                @if card.len() > 1 { li { (card.len()) " of the passages found are in it." } }
                @if best.document { li { "It is a filed document: the passages are its extracted text." } }
            }
        }
    }
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// One note's card.
fn card(card: &Card<'_>, place: usize, tokens: &[String], query: &str) -> Markup {
    let best = card[0];
    let dir = folder(&best.path);
    html! {
        li.note-card {
            div.card-head {
                a.note-title href=(hit_url(best, query)) { (best.title) }
                @if best.document { " " span.label.label-doc { "document" } }
            }
            div.note-folder {
                @if dir.is_empty() { "top folder" } @else { (dir) }
                " · " span.vault { (best.vault) }
            }
            ul.passages {
                @for hit in card.iter().take(PASSAGES_PER_NOTE) {
                    @let (text, cut) = passage(&hit.text, tokens);
                    li {
                        a.passage href=(hit_url(hit, query)) {
                            // A passage cut after its heading line says which section it is in.
                            @if cut && !hit.heading.is_empty() {
                                span.passage-heading { (hit.heading.rsplit("::").next().unwrap_or_default()) } " "
                            }
                            (marked(&text, &crate::service::query_matches(&text, tokens)))
                        }
                    }
                }
            }
            (why(card, place))
        }
    }
}

/// The results as the search page shows them and the script swaps in.
pub(crate) fn cards(resp: &SearchResponse, query: &str) -> Markup {
    let tokens = &resp.explain.tokens;
    let cards = group(&resp.results);
    // Close means a passage holds one of the words (or an identifier pinned it); otherwise the
    // list is only the nearest meanings, which for a typo or gibberish is noise.
    let close = resp.results.iter().any(|h| h.pinned || h.explain.lexical_rank.is_some());
    let count = match cards.len() {
        1 => "1 note".to_string(),
        n => format!("{n} notes"),
    };
    let list = html! {
        ol.notes {
            @for (i, c) in cards.iter().enumerate() { (card(c, i + 1, tokens, query)) }
        }
    };
    html! {
        // The engine's notices are written for agents and name their tools; the page says the
        // same things in its own words below, and keeps the rest.
        @for n in resp.notices.iter().filter(|n| !n.contains("vault_")) { p.notice { (n) } }
        @if cards.is_empty() {
            p.empty #no-match { "No notes found for “" (query) "”. Check the spelling, try other words, or clear the folder filter." }
        } @else if !close {
            p.empty #no-match { "No close match for “" (query) "”: no note uses these words. Check the spelling or try other words." }
            details.loose {
                summary { "Show " (count) " loosely related by meaning" }
                (list)
            }
        } @else {
            p.result-count #result-count { (count) }
            (list)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_syntax_reads_as_plain_text() {
        assert_eq!(plain("### Service **history**"), "Service history");
        assert_eq!(
            plain("> [!tip]- Before winter\n> Bleed the radiators."),
            "Before winter Bleed the radiators."
        );
        assert_eq!(
            plain("See [[Home/Boiler|the boiler]] and [[Gas#Tariff]]."),
            "See the boiler and Gas › Tariff."
        );
        assert_eq!(
            plain("- [x] call `Nordlicht` about [the bill](https://x.example/a)"),
            "call Nordlicht about the bill"
        );
        assert_eq!(
            plain("| Date | Amount |\n|---|---|\n| 2026 | [[a\\|b]] |"),
            "Date · Amount 2026 · b"
        );
        assert_eq!(
            plain("==marked== and ~~gone~~ and ![[pic.png]]"),
            "marked and gone and pic.png"
        );
        assert_eq!(plain("1. first\n2) second"), "first second");
        assert_eq!(plain("## Readings ##\nOnce a year. ^yearly"), "Readings — Once a year.");
        assert_eq!(plain("# Boiler\n\n## Parts\n\nThe valve."), "Boiler — Parts — The valve.");
    }

    #[test]
    fn a_cut_off_link_still_reads_as_words() {
        assert_eq!(plain("ends in [[Boil"), "ends in Boil");
        assert_eq!(plain("a [b] c"), "a [b] c");
    }

    #[test]
    fn a_long_passage_is_cut_around_the_first_query_word() {
        let chunk = format!(
            "## Settings\n\n{} the **pressure** is low. {}",
            "word ".repeat(80),
            "tail ".repeat(80)
        );
        let (text, cut) = passage(&chunk, &["pressur".to_string()]);
        assert!(cut && text.starts_with('…') && text.ends_with('…'), "{text}");
        assert!(text.contains("the pressure is low."), "{text}");
        assert!(text.chars().count() <= PASSAGE_CHARS + 2, "{text}");
        let (short, cut) = passage("## Settings\n\nShort.", &[]);
        assert_eq!((short.as_str(), cut), ("Settings — Short.", false));
    }

    #[test]
    fn a_hit_lands_on_the_heading_it_is_under_else_the_texts_start() {
        let text = "Intro.\n# Boiler\n\nA line.\n## Settings\nPressure.\n";
        let anchors = crate::api::render::Anchors::of(text);
        let heading = |depth, text: &str, line, path: &str| crate::vault::HeadingEntry {
            depth,
            text: text.into(),
            line,
            path: path.into(),
        };
        let heads =
            [heading(1, "Boiler", 2, "Boiler"), heading(2, "Settings", 5, "Boiler::Settings")];
        assert_eq!(landing(&heads, &anchors, 1), "note-body");
        assert_eq!(landing(&heads, &anchors, 4), "boiler");
        assert_eq!(landing(&heads, &anchors, 5), "settings");
        assert_eq!(landing(&heads, &anchors, 6), "settings");
    }

    #[test]
    fn the_words_marked_are_the_ones_the_analyzer_matches() {
        let text = "<p>Servicing the boiler: services due, a serviette and a <b>Service</b>.</p>";
        assert_eq!(marked_words(text, "the service"), ["servicing", "services", "service"]);
        assert_eq!(marked_words("Café au lait", "cafe"), ["café"]);
        assert!(marked_words(text, "the and").is_empty(), "stop words mark nothing");
    }

    #[test]
    fn a_folder_is_the_path_without_the_file() {
        assert_eq!(folder("Home/Utilities/Gas.md"), "Home/Utilities");
        assert_eq!(folder("Gas.md"), "");
    }

    #[test]
    fn places_read_as_ordinals() {
        let words: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal).into();
        assert_eq!(
            words,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
        );
    }
}
