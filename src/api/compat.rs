//! The Obsidian Local REST API's own shapes (its release 5.1 contract), built from what
//! mdvault's operations return: the status object of `GET /`, the plugin's note JSON (tags,
//! `stat`, links), its document map (the 2.x tree and the 1.x `::` list), notes rendered as
//! HTML, `/tags/`, the match lists of `/search/simple/`, and the plugin's five-digit error
//! numbers. The JsonLogic `/search/` is `logic.rs`.
//!
//! It owns shapes and pure text scans only: every vault access goes through `crate::service`
//! from `rest.rs`, and nothing here writes. The map from each plugin route to these functions,
//! and what mdvault refuses on purpose, is `docs/local-rest-api.md`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::render;
use crate::error::{Error, ErrorCode, Result};
use crate::markdown::{self, Class};
use crate::vault::embed::Found;
use crate::vault::tags::{self, TagCount, note_tags};
use crate::vault::{NoteRead, frontmatter, headings};

/// What `GET /` calls the service, as the plugin's clients check it.
pub(crate) const SERVICE_NAME: &str = "Obsidian Local REST API";
/// The plugin release whose contract this surface follows.
pub(crate) const PLUGIN_VERSION: &str = "5.1.0";
/// The version field of the 2.x document map.
const MAP_VERSION: &str = "2.0";
/// The plugin's `Deprecation` value for a 1.x answer.
pub(crate) const DEPRECATED_1X: &str = "true; sunset-version=\"6.0\"";

/// The plugin's error numbers that its clients and suite route on (the rest are the HTTP
/// status times 100, as the plugin's own default is).
pub(crate) const ERR_FRONTMATTER_YAML: u32 = 40005;
/// A text body was needed and something else was declared.
pub(crate) const ERR_TEXT_REQUIRED: u32 = 40010;
/// A body was sent without any `Content-Type`.
pub(crate) const ERR_CONTENT_TYPE_MISSING: u32 = 40011;
/// A `Content-Type` this route does not take.
pub(crate) const ERR_CONTENT_TYPE_INVALID: u32 = 40012;
/// A required query parameter is missing.
pub(crate) const ERR_QUERY_MISSING: u32 = 40090;
/// A file verb sent to a folder.
pub(crate) const ERR_FILES_ONLY: u32 = 40510;
/// The body of `GET /`, with or without a key.
pub(crate) fn status(authenticated: bool) -> Value {
    json!({
        "status": "OK",
        "service": SERVICE_NAME,
        "authenticated": authenticated,
        // The plugin reports the Obsidian app's version here; there is no app, so the
        // field names the server that answers instead.
        "versions": { "obsidian": format!("mdvault {}", env!("CARGO_PKG_VERSION")), "self": PLUGIN_VERSION },
        "mdvault": { "version": env!("CARGO_PKG_VERSION") },
    })
}

/// A file's times in milliseconds since the epoch and its size, as the plugin's `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) ctime: i64,
    pub(crate) mtime: i64,
    pub(crate) size: u64,
}

impl Stat {
    fn json(self) -> Value {
        json!({ "ctime": self.ctime, "mtime": self.mtime, "size": self.size })
    }
}

/// The plugin's note JSON beside mdvault's own fields (`wire::note`): `tags`, `stat`,
/// `links` (the vault paths the note's links resolve to) and `unresolvedLinks`.
pub(crate) fn note(r: &NoteRead, stat: Stat, links: &[String], unresolved: &[String]) -> Value {
    let mut v = crate::wire::note(r);
    v["tags"] = json!(note_tags(&r.frontmatter, &r.content));
    v["stat"] = stat.json();
    v["links"] = json!(links);
    v["unresolvedLinks"] = json!(unresolved);
    v
}

/// A note as sanitised HTML in Obsidian's reading view (the web page's pipeline,
/// `api::render`), its frontmatter left out as the reading view does. Links keep their targets
/// as written: this answer is read outside the vault, so nothing is resolved against it. Its
/// embeds (`found`, from `render::gather`) show: an image from `/vault/<path>`, the route that
/// serves it through the path gate, and an embedded note's part inline.
pub(crate) fn html(text: &str, found: &HashMap<render::EmbedKey, Found>) -> String {
    let (_, body) = frontmatter::split(text);
    // The body's first line in the file, so heading ids come from the file's own outline.
    let first_line = text[..text.len() - body.len()].matches('\n').count() + 1;
    let file_url = |p: &str| format!("/vault/{}", vault_url_path(p));
    render::note_html(
        &render::Shown::note(body),
        first_line,
        &render::Anchors::of(text),
        &render::Links::AsWritten,
        &render::Embeds { found, file_url: &file_url, fitted_url: None },
    )
}

/// A vault path as a `/vault/` URL's path: each segment percent-encoded, `/` kept.
pub(crate) fn vault_url_path(path: &str) -> String {
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    const SEGMENT: &percent_encoding::AsciiSet =
        &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    path.split('/')
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// The block ids (`^id` closing a line) of a note, outside code, in order.
pub(crate) fn block_ids(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in markdown::lines(text) {
        if !matches!(line.class, Class::Text) {
            continue;
        }
        let raw = line.raw.trim_end();
        if let Some(at) = raw.rfind('^') {
            let id = &raw[at + 1..];
            let before = raw[..at].chars().last();
            if !id.is_empty()
                && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && (before.is_none() || before.is_some_and(char::is_whitespace))
            {
                out.push(id.to_string());
            }
        }
    }
    out
}

/// The plugin's document map: the 2.x heading tree (each heading an object of its
/// sub-headings) with a version, or with `v1` the deprecated list of `A::B` paths. Frontmatter
/// that is not valid YAML is refused (40005) rather than mapped as empty.
pub(crate) fn document_map(path: &str, text: &str, v1: bool) -> Result<Value> {
    let fm = frontmatter::parse_strict(text).map_err(|why| {
        Error::new(
            ErrorCode::InvalidValue,
            format!("{path}: {why}; its document map needs frontmatter that parses"),
        )
        .with_compat(ERR_FRONTMATTER_YAML)
    })?;
    let fields: Vec<String> = fm.map(|m| m.keys().cloned().collect()).unwrap_or_default();
    let all = headings::headings(text);
    let headings_value = if v1 {
        json!(all.iter().map(|h| h.path.join("::")).collect::<Vec<_>>())
    } else {
        let mut tree = Map::new();
        for h in &all {
            let mut node = &mut tree;
            for part in &h.path {
                node = node
                    .entry(part.clone())
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
                    .expect("every node of the tree is an object");
            }
        }
        Value::Object(tree)
    };
    let mut v = json!({
        "headings": headings_value,
        "blocks": block_ids(text),
        "frontmatterFields": fields,
    });
    if !v1 {
        v["version"] = json!(MAP_VERSION);
    }
    Ok(v)
}

/// How many characters of context the plugin's simple search shows each side by default.
pub(crate) const DEFAULT_CONTEXT: usize = 100;

/// Byte ranges where `needle` occurs in `hay`, ignoring case (Unicode lowercase), as ranges
/// of `hay` itself even where lowercasing changes a character's length.
fn occurrences(hay: &str, needle: &str) -> Vec<(usize, usize)> {
    let needle = needle.to_lowercase();
    if needle.is_empty() {
        return Vec::new();
    }
    // The lowercased text, and for each of its bytes the offset of the character it came from.
    let mut lower = String::with_capacity(hay.len());
    let mut origin: Vec<usize> = Vec::with_capacity(hay.len());
    for (at, c) in hay.char_indices() {
        for l in c.to_lowercase() {
            lower.push(l);
            origin.resize(lower.len(), at);
        }
    }
    let end_of = |i: usize| {
        if i >= lower.len() {
            return hay.len();
        }
        origin[i]
    };
    lower
        .match_indices(&needle)
        .map(|(at, m)| (origin[at], end_of(at + m.len())))
        .filter(|(s, e)| s < e)
        .collect()
}

/// One note of the plugin's simple search: where the query occurs in its path and text.
pub(crate) struct SimpleHit {
    pub(crate) filename: String,
    /// Each match in the plugin's shape, the path's first.
    pub(crate) matches: Vec<Value>,
}

impl SimpleHit {
    /// The plugin's entry, `{filename, score, matches}`.
    pub(crate) fn into_json(self, score: f64) -> Value {
        json!({ "filename": self.filename, "score": score, "matches": self.matches })
    }
}

/// The plugin's simple-search entry for one note: every place the query occurs in the file's
/// path and text, each with `context_length` characters each side. A note matches when it
/// holds the whole query, or else every word of it, ignoring case; `None` when it holds
/// neither and its path does not hold the query. Every occurrence is reported, as the plugin
/// does.
pub(crate) fn simple_matches(
    path: &str,
    text: &str,
    query: &str,
    context_length: usize,
) -> Option<SimpleHit> {
    let words: Vec<&str> = query.split_whitespace().collect();
    let whole = occurrences(text, query.trim());
    let spans = if !whole.is_empty() {
        whole
    } else if words.len() > 1 && words.iter().all(|w| !occurrences(text, w).is_empty()) {
        let mut all: Vec<(usize, usize)> =
            words.iter().flat_map(|w| occurrences(text, w)).collect();
        all.sort_unstable();
        all
    } else {
        Vec::new()
    };
    let in_name = occurrences(path, query.trim());
    if spans.is_empty() && in_name.is_empty() {
        return None;
    }
    let mut matches: Vec<Value> = in_name
        .iter()
        .map(|&(s, e)| json!({"match": {"start": s, "end": e, "source": "filename"}, "context": path}))
        .collect();
    for &(s, e) in &spans {
        // Context is counted in characters, as the plugin counts it.
        let from = text[..s].char_indices().rev().take(context_length).last().map_or(s, |(i, _)| i);
        let to = text[e..].char_indices().nth(context_length).map_or(text.len(), |(i, _)| e + i);
        matches.push(json!({
            "match": {"start": s, "end": e, "source": "content"},
            "context": &text[from..to],
        }));
    }
    Some(SimpleHit { filename: path.to_string(), matches })
}

/// The data a JsonLogic rule sees for one note, as the plugin gives it.
pub(crate) fn logic_data(path: &str, text: &str, stat: Stat) -> Value {
    let fm = frontmatter::parse(text);
    json!({
        "path": path,
        "content": text,
        "tags": note_tags(&fm, text),
        "frontmatter": fm,
        "stat": stat.json(),
    })
}

/// The plugin's listing: names in the folder, each folder's with a trailing `/`.
pub(crate) fn listing_files(l: &crate::vault::Listing) -> Vec<String> {
    l.entries
        .iter()
        .map(|e| match e.kind {
            crate::vault::EntryKind::Folder => format!("{}/", e.name),
            _ => e.name.clone(),
        })
        .collect()
}

/// `/tags/`: every tag with the number of notes that carry it or a tag nested under it (the
/// plugin counts a nested tag for each parent too), most used first.
pub(crate) fn tag_counts(tags: &[TagCount]) -> Value {
    let list = tags::by_count(tags);
    json!({ "tags": list.into_iter().map(|t| json!({"name": t.name, "count": t.count})).collect::<Vec<_>>() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_map_is_a_tree_in_2x_and_a_list_in_1x() {
        let text = "---\ntitle: t\n---\n# A\n## B\ntext ^blk\n# C\n";
        let v2 = document_map("n.md", text, false).unwrap();
        assert_eq!(v2["headings"], json!({"A": {"B": {}}, "C": {}}));
        assert_eq!(v2["blocks"], json!(["blk"]));
        assert_eq!(v2["frontmatterFields"], json!(["title"]));
        assert_eq!(v2["version"], json!("2.0"));
        let v1 = document_map("n.md", text, true).unwrap();
        assert_eq!(v1["headings"], json!(["A", "A::B", "C"]));
        assert!(v1.get("version").is_none());
        let e = document_map("n.md", "---\na: b: c\n---\n# H\n", false).unwrap_err();
        assert_eq!(crate::wire::error_number(&e), ERR_FRONTMATTER_YAML);
    }

    #[test]
    fn simple_matches_need_the_query_in_the_note_and_cut_the_context() {
        let text = "one two three four five";
        let v = simple_matches("n.md", text, "three", 4).unwrap().into_json(1.0);
        assert_eq!(v["matches"][0]["match"], json!({"start": 8, "end": 13, "source": "content"}));
        assert_eq!(v["matches"][0]["context"], json!("two three fou"));
        assert!(simple_matches("n.md", text, "zzz-none", 4).is_none());
    }

    #[test]
    fn simple_matches_report_every_occurrence_and_count_context_in_characters() {
        let text = format!("{}é vault ü", "Vault ".repeat(30));
        let hit = simple_matches("n.md", &text, "VAULT", 2).unwrap();
        assert_eq!(hit.matches.len(), 31);
        let last = hit.matches.last().unwrap();
        assert_eq!(last["context"], json!("é vault ü"));
    }

    #[test]
    fn case_is_ignored_where_lowercasing_changes_a_characters_length() {
        // U+0130 lowercases to two characters: the offsets still point into the text itself.
        let text = "İstanbul and ISTANBUL";
        let spans = occurrences(text, "istanbul");
        assert_eq!(spans.len(), 1);
        assert_eq!(&text[spans[0].0..spans[0].1], "ISTANBUL");
        assert_eq!(occurrences(text, "and"), [(10, 13)]);
    }

    #[test]
    fn every_word_must_occur_when_the_whole_query_does_not() {
        assert!(simple_matches("n.md", "alpha x beta", "beta alpha", 5).is_some());
        assert!(simple_matches("n.md", "alpha x", "beta alpha", 5).is_none());
        let in_name = simple_matches("Projects/alpha.md", "nothing", "alpha", 5).unwrap();
        assert_eq!(in_name.matches[0]["match"]["source"], json!("filename"));
    }

    #[test]
    fn html_leaves_the_frontmatter_out() {
        let h = html("---\ntitle: x\n---\n# Head\n\ntext\n", &HashMap::new());
        assert!(h.starts_with("<h1 id=\"head\">Head</h1>"), "{h}");
        assert!(!h.contains("title"));
    }

    #[test]
    fn html_is_the_reading_view_with_links_as_written() {
        let h = html(
            "---\ntitle: x\n---\n## Use it\n\n| a |\n| - |\n| [[Basic formatting syntax\\|Markdown]] |\n\n\
             ==hi== %%secret%% [[#Use it]]\n",
            &HashMap::new(),
        );
        assert!(h.contains("<h2 id=\"use-it\">"), "{h}");
        assert!(h.contains("href=\"Basic%20formatting%20syntax\""), "{h}");
        assert!(h.contains(">Markdown</a>"), "{h}");
        assert!(h.contains("<mark>hi</mark>") && !h.contains("secret"), "{h}");
        assert!(h.contains("href=\"#use-it\""), "{h}");
    }
}
