//! Content negotiation for a note read (`GET /vault/<note>`): which of a note's forms an
//! `Accept` header asks for. The one place the rule is decided; `rest.rs` renders the form.
//!
//! The rule (also in `docs/local-rest-api.md#accept`):
//! - the plugin's vendor types keep their meaning: `application/vnd.olrapi.note+json` is the
//!   plugin's note object, `application/vnd.olrapi.document-map+json` the document map;
//! - otherwise each form gets the quality of the most specific media range that matches it
//!   (Markdown: `text/markdown`, `text/x-markdown`, `text/plain`, `text/*`, `*/*`; HTML:
//!   `text/html`, `text/*`, `*/*`; the predecessor's note object: `application/json`,
//!   `application/*`, `*/*`), and the highest quality wins;
//! - a tie goes to Markdown, then HTML, then JSON, so a list in which Markdown (or `*/*`) is
//!   as acceptable as anything else gets Markdown, as the plugin sends it. axios's default
//!   `application/json, text/plain, */*` is such a list; a lone `application/json` keeps the
//!   predecessor's `{path, content, body, frontmatter}`;
//! - no `Accept`, or one that accepts none of the forms, gets Markdown.

use axum::http::{HeaderMap, header};

/// What a note read answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoteForm {
    /// The note's text, `text/markdown`.
    Markdown,
    /// The note rendered and sanitised, `text/html`.
    Html,
    /// The predecessor's `{path, content, body, frontmatter}`.
    Json,
    /// The plugin's note object (`application/vnd.olrapi.note+json`).
    PluginNote,
    /// The plugin's document map (`application/vnd.olrapi.document-map+json`).
    DocumentMap,
}

const PLUGIN_NOTE: &str = "application/vnd.olrapi.note+json";
const DOCUMENT_MAP: &str = "application/vnd.olrapi.document-map+json";

/// One media range of an `Accept` header: type, subtype and quality.
struct Range {
    kind: String,
    sub: String,
    q: f32,
}

fn ranges(accept: &str) -> Vec<Range> {
    accept
        .split(',')
        .filter_map(|part| {
            let mut fields = part.split(';');
            let media = fields.next()?.trim().to_ascii_lowercase();
            let (kind, sub) = media.split_once('/')?;
            let q = fields
                .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
                .find_map(|v| v.trim().parse::<f32>().ok())
                .unwrap_or(1.0)
                .clamp(0.0, 1.0);
            Some(Range { kind: kind.trim().to_string(), sub: sub.trim().to_string(), q })
        })
        .collect()
}

/// The quality `ranges` give one form, whose media types are `types` (most specific wins:
/// an exact type, then `type/*`, then `*/*`); `None` when no range matches.
fn quality(ranges: &[Range], types: &[&str]) -> Option<f32> {
    let mut best: Option<(u8, f32)> = None;
    for r in ranges {
        for t in types {
            let (kind, sub) = t.split_once('/').unwrap_or((t, ""));
            let specificity = if r.kind == kind && r.sub == sub {
                3
            } else if r.kind == kind && r.sub == "*" {
                2
            } else if r.kind == "*" && r.sub == "*" {
                1
            } else {
                continue;
            };
            let better = match best {
                None => true,
                Some((s, q)) => specificity > s || (specificity == s && r.q > q),
            };
            if better {
                best = Some((specificity, r.q));
            }
        }
    }
    best.map(|(_, q)| q)
}

/// The form an `Accept` header asks of a note; see the module header for the rule.
pub(crate) fn note_form(headers: &HeaderMap) -> NoteForm {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    let ranges = ranges(accept);
    let named = |t: &str| ranges.iter().any(|r| format!("{}/{}", r.kind, r.sub) == t && r.q > 0.0);
    if named(PLUGIN_NOTE) {
        return NoteForm::PluginNote;
    }
    if named(DOCUMENT_MAP) {
        return NoteForm::DocumentMap;
    }
    // Listed in the order a tie is broken in.
    let forms = [
        (NoteForm::Markdown, &["text/markdown", "text/x-markdown", "text/plain"][..]),
        (NoteForm::Html, &["text/html"][..]),
        (NoteForm::Json, &["application/json"][..]),
    ];
    let mut chosen = (NoteForm::Markdown, 0.0_f32);
    for (form, types) in forms {
        if let Some(q) = quality(&ranges, types)
            && q > chosen.1
        {
            chosen = (form, q);
        }
    }
    chosen.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn form(accept: Option<&str>) -> NoteForm {
        let mut h = HeaderMap::new();
        if let Some(a) = accept {
            h.insert(header::ACCEPT, HeaderValue::from_str(a).unwrap());
        }
        note_form(&h)
    }

    #[test]
    fn a_lone_json_keeps_the_predecessors_note_object() {
        assert_eq!(form(Some("application/json")), NoteForm::Json);
        assert_eq!(form(Some("application/json; charset=utf-8")), NoteForm::Json);
    }

    #[test]
    fn a_list_where_markdown_is_as_acceptable_gets_markdown() {
        // axios's default, and fetch's and curl's.
        assert_eq!(form(Some("application/json, text/plain, */*")), NoteForm::Markdown);
        assert_eq!(form(Some("*/*")), NoteForm::Markdown);
        assert_eq!(form(Some("application/json, text/markdown")), NoteForm::Markdown);
        assert_eq!(form(None), NoteForm::Markdown);
        assert_eq!(form(Some("")), NoteForm::Markdown);
    }

    #[test]
    fn qualities_are_honoured_over_the_tie_break() {
        assert_eq!(form(Some("application/json, */*;q=0.1")), NoteForm::Json);
        assert_eq!(form(Some("text/markdown;q=0.2, application/json")), NoteForm::Json);
        assert_eq!(form(Some("application/json;q=0, */*")), NoteForm::Markdown);
    }

    #[test]
    fn a_browser_gets_html_and_a_lone_html_too() {
        let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert_eq!(form(Some(browser)), NoteForm::Html);
        assert_eq!(form(Some("text/html")), NoteForm::Html);
    }

    #[test]
    fn the_plugins_vendor_types_keep_their_meaning() {
        assert_eq!(form(Some("application/vnd.olrapi.note+json")), NoteForm::PluginNote);
        assert_eq!(
            form(Some("application/vnd.olrapi.document-map+json, */*")),
            NoteForm::DocumentMap
        );
    }

    #[test]
    fn a_header_that_accepts_none_of_the_forms_gets_markdown() {
        assert_eq!(form(Some("image/png")), NoteForm::Markdown);
        assert_eq!(form(Some("garbage")), NoteForm::Markdown);
    }
}
