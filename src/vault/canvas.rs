//! Obsidian canvases: `.canvas` files in JSON Canvas 1.0, the one model every surface reads
//! them by.
//!
//! A canvas is a JSON object with `nodes` (each with `id`, `type`, `x`, `y`, `width`, `height`;
//! a `text` node has Markdown `text`, a `file` node a vault path `file` and an optional
//! `subpath` such as `#Heading`, a `link` node a `url`, a `group` node an optional `label`) and
//! `edges` between them. [`Canvas::parse`] reads one, tolerating unknown fields and missing
//! optional ones, and [`Canvas::reading_text`] is what a canvas says as Markdown: read, listed
//! and indexed as a document's text is.
//!
//! [`rewrite_inbound`] repoints a canvas after a note or attachment moves, as
//! `links::rewrite_inbound` repoints a note: its file nodes' `file` and the links inside its
//! text nodes. It edits only the spans of those JSON strings and leaves every other byte as
//! it was (Obsidian's own layout, key order and spacing), never serialising the document again.

use std::ops::Range;

use serde::Deserialize;

use super::links::{self, PathSet};

/// The suffix of a canvas file (matched case-insensitively).
pub(crate) const SUFFIX: &str = ".canvas";

/// True for a `.canvas` name (case-insensitive).
pub(crate) fn is_canvas(name: &str) -> bool {
    name.len() > SUFFIX.len()
        && name.is_char_boundary(name.len() - SUFFIX.len())
        && name[name.len() - SUFFIX.len()..].eq_ignore_ascii_case(SUFFIX)
        && !name[..name.len() - SUFFIX.len()].ends_with('/')
}

/// A canvas's file as it is: its JSON, byte for byte, and its hash (REST serves a canvas so,
/// as the Local REST API plugin serves every file that is not a note).
#[derive(Debug, Clone)]
pub(crate) struct CanvasSource {
    /// The file's text.
    pub(crate) json: String,
    /// The hash of its bytes.
    pub(crate) etag: String,
}

/// A canvas as read: its nodes in file order. Edges carry no text a reader needs beyond
/// their labels, which are kept.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct Canvas {
    #[serde(default)]
    pub(crate) nodes: Vec<Node>,
    #[serde(default)]
    pub(crate) edges: Vec<Edge>,
}

/// One node. Every field but `type` is optional here: a canvas written by another tool may
/// leave out what Obsidian always writes, and a reader should still see its text.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct Node {
    #[serde(default)]
    pub(crate) id: String,
    /// `text`, `file`, `link`, `group`, or a type a later version adds (then shown as nothing).
    #[serde(rename = "type", default)]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) x: f64,
    #[serde(default)]
    pub(crate) y: f64,
    #[serde(default)]
    pub(crate) width: f64,
    #[serde(default)]
    pub(crate) height: f64,
    /// A text node's Markdown.
    pub(crate) text: Option<String>,
    /// A file node's vault path.
    pub(crate) file: Option<String>,
    /// A file node's heading or block (`#Heading`, `#^block`).
    pub(crate) subpath: Option<String>,
    /// A link node's URL.
    pub(crate) url: Option<String>,
    /// A group node's label.
    pub(crate) label: Option<String>,
}

/// One edge between two nodes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct Edge {
    #[serde(default)]
    pub(crate) id: String,
    #[serde(rename = "fromNode", default)]
    pub(crate) from_node: String,
    #[serde(rename = "toNode", default)]
    pub(crate) to_node: String,
    pub(crate) label: Option<String>,
}

impl Canvas {
    /// Reads a canvas's JSON; the error says what is wrong with it.
    pub(crate) fn parse(json: &str) -> Result<Canvas, String> {
        serde_json::from_str(json).map_err(|e| format!("not a JSON Canvas file: {e}"))
    }

    /// What the canvas says, as Markdown, in reading order: top to bottom, then left to
    /// right (Obsidian has no other order; file order is only the order nodes were made). A
    /// group's label is a heading, a text node its text, a file node a wikilink to its file
    /// (and subpath), a link node its URL; edge labels close it as a list.
    pub(crate) fn reading_text(&self) -> String {
        let mut nodes: Vec<&Node> = self.nodes.iter().collect();
        // Stable: nodes at one place keep their file order.
        nodes.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
        let mut parts: Vec<String> = Vec::new();
        for node in nodes {
            let part = match node.kind.as_str() {
                "text" => node.text.clone().unwrap_or_default(),
                "group" => node.label.as_deref().map(|l| format!("## {l}")).unwrap_or_default(),
                "file" => node.file.as_deref().map_or_else(String::new, |f| {
                    format!("[[{f}{}]]", node.subpath.as_deref().unwrap_or(""))
                }),
                "link" => node.url.as_deref().map(|u| format!("<{u}>")).unwrap_or_default(),
                _ => String::new(),
            };
            if !part.trim().is_empty() {
                parts.push(part.trim_end().to_string());
            }
        }
        let labels: Vec<String> = self
            .edges
            .iter()
            .filter_map(|e| e.label.as_deref())
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("- {l}"))
            .collect();
        if !labels.is_empty() {
            parts.push(labels.join("\n"));
        }
        let mut out = parts.join("\n\n");
        if !out.is_empty() {
            out.push('\n');
        }
        out
    }
}

/// Repoints the canvas `json` (the file at `canvas_path`) after `from` moved to `to`: file
/// nodes naming `from`, and links in text nodes that resolve to it under `before` (read as a
/// note at `canvas_path` would read them). Returns (the new JSON, spans changed); a canvas
/// that is not valid JSON Canvas is left alone.
pub(crate) fn rewrite_inbound(
    json: &str,
    canvas_path: &str,
    from: &str,
    to: &str,
    before: &PathSet,
    after: &PathSet,
) -> (String, usize) {
    let Some(nodes) = movable_nodes(json, from, to) else { return (json.to_string(), 0) };
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for node in nodes {
        // A file node holds the vault path itself, not a link to resolve: Obsidian writes the
        // file's whole path and follows it as written.
        if let Some((span, file)) = node.file
            && file == from
        {
            edits.push((span, quoted(to)));
        }
        if let Some((span, text)) = node.text {
            let (new, n) = links::rewrite_inbound(&text, canvas_path, from, to, before, after);
            if n > 0 {
                edits.push((span, quoted(&new)));
            }
        }
    }
    applied(json, edits)
}

/// Repoints the links in the text nodes of a canvas that moved from `from` to `to`, as a moved
/// note's own links are (`links::rewrite_outbound`): a relative link (`[n](../B/n.md)`) is
/// written again so that it still leads where it led. File nodes hold vault paths, which a
/// move of the canvas leaves right. Returns (the new JSON, text nodes changed); a canvas that
/// is not valid JSON Canvas is left alone.
pub(crate) fn rewrite_outbound(
    json: &str,
    from: &str,
    to: &str,
    before: &PathSet,
    after: &PathSet,
) -> (String, usize) {
    let Some(nodes) = movable_nodes(json, from, to) else { return (json.to_string(), 0) };
    let edits = nodes
        .into_iter()
        .filter_map(|node| {
            let (span, text) = node.text?;
            let (new, n) = links::rewrite_outbound(&text, from, to, before, after);
            (n > 0).then(|| (span, quoted(&new)))
        })
        .collect();
    applied(json, edits)
}

/// The node strings a move from `from` to `to` may edit; `None` when nothing moved, or when
/// the canvas is not valid JSON Canvas, which a move leaves alone.
fn movable_nodes(json: &str, from: &str, to: &str) -> Option<Vec<NodeStrings>> {
    if from == to || Canvas::parse(json).is_err() {
        return None;
    }
    node_strings(json)
}

/// `json` with each span replaced by its new literal; (the new JSON, how many spans).
fn applied(json: &str, mut edits: Vec<(Range<usize>, String)>) -> (String, usize) {
    let changed = edits.len();
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = json.to_string();
    for (span, new) in edits {
        out.replace_range(span, &new);
    }
    (out, changed)
}

/// A string as a JSON string literal, escaped as `JSON.stringify` (Obsidian's writer) escapes
/// it: quotes, backslashes and control characters; other characters as they are.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// A JSON string as found in a canvas: the byte span of its literal (quotes included) and
/// its value.
type Spanned = (Range<usize>, String);

/// The string spans a move may edit in one node.
#[derive(Debug, Default)]
struct NodeStrings {
    file: Option<Spanned>,
    text: Option<Spanned>,
}

/// The `file` and `text` strings of every node of `nodes`, with their spans; `None` when the
/// JSON is not shaped as a canvas.
fn node_strings(json: &str) -> Option<Vec<NodeStrings>> {
    let mut scan = Scanner { text: json, at: 0, depth: 0 };
    let top = scan.value()?;
    let Json::Object(members) = top else { return None };
    let Some((_, Json::Array(nodes))) = members.into_iter().find(|(k, _)| k == "nodes") else {
        return Some(Vec::new());
    };
    Some(
        nodes
            .into_iter()
            .filter_map(|node| match node {
                Json::Object(members) => {
                    let mut found = NodeStrings::default();
                    for (key, value) in members {
                        if let Json::String(span, s) = value {
                            match key.as_str() {
                                "file" => found.file = Some((span, s)),
                                "text" => found.text = Some((span, s)),
                                _ => {}
                            }
                        }
                    }
                    Some(found)
                }
                _ => None,
            })
            .collect(),
    )
}

/// A JSON value with the spans of its strings: just enough of JSON to find a string's bytes.
#[derive(Debug)]
enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    String(Range<usize>, String),
    Scalar,
}

/// How deep a canvas may nest: Obsidian's are three levels deep; this bounds the recursion
/// on a hostile file (serde's parse, which comes first, has its own limit).
const MAX_DEPTH: usize = 64;

/// A scanner over JSON already known to parse, which records where each string lies.
struct Scanner<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl Scanner<'_> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn value(&mut self) -> Option<Json> {
        self.skip_space();
        match self.peek()? {
            b'{' | b'[' if self.depth >= MAX_DEPTH => None,
            b'{' => self.container(b'}', true),
            b'[' => self.container(b']', false),
            b'"' => self.string(),
            _ => {
                let rest = &self.text[self.at..];
                let end = rest.find([',', ']', '}', ' ', '\t', '\n', '\r']).unwrap_or(rest.len());
                self.at += end;
                Some(Json::Scalar)
            }
        }
    }

    /// An object (`keyed`) or array, from its opening bracket to `close`.
    fn container(&mut self, close: u8, keyed: bool) -> Option<Json> {
        self.at += 1;
        self.depth += 1;
        let mut members = Vec::new();
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.peek()? {
                b',' => self.at += 1,
                c if c == close => {
                    self.at += 1;
                    break;
                }
                _ if keyed => {
                    let Json::String(_, key) = self.string()? else { return None };
                    self.skip_space();
                    (self.peek()? == b':').then_some(())?;
                    self.at += 1;
                    members.push((key, self.value()?));
                }
                _ => items.push(self.value()?),
            }
        }
        self.depth -= 1;
        Some(if keyed { Json::Object(members) } else { Json::Array(items) })
    }

    fn string(&mut self) -> Option<Json> {
        self.skip_space();
        let start = self.at;
        (self.peek()? == b'"').then_some(())?;
        let bytes = self.text.as_bytes();
        let mut i = start + 1;
        // A multi-byte UTF-8 sequence never holds a `"` or `\` byte, so bytes will do.
        while *bytes.get(i)? != b'"' {
            i += if bytes[i] == b'\\' { 2 } else { 1 };
        }
        self.at = i + 1;
        let value = serde_json::from_str(&self.text[start..self.at]).ok()?;
        Some(Json::String(start..self.at, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOARD: &str = r##"{
	"nodes":[
		{"id":"g1","type":"group","x":-40,"y":-60,"width":800,"height":600,"label":"Plans"},
		{"id":"t2","type":"text","text":"Second, to the right","x":300,"y":0,"width":250,"height":60},
		{"id":"t1","type":"text","text":"See [[Target]] and [t](Notes/Target.md)\n\"quoted\"","x":0,"y":0,"width":250,"height":60,"color":"1"},
		{"id":"f1","type":"file","file":"Notes/Target.md","subpath":"#Heading","x":0,"y":200,"width":400,"height":400},
		{"id":"l1","type":"link","url":"https://obsidian.md","x":0,"y":700,"width":400,"height":400},
		{"id":"z1","type":"widget","x":0,"y":900}
	],
	"edges":[
		{"id":"e1","fromNode":"t1","fromSide":"right","toNode":"t2","toSide":"left","label":"leads to"}
	]
}"##;

    #[test]
    fn canvas_names_are_told_by_suffix_in_any_case() {
        for (name, is) in [
            ("Board.canvas", true),
            ("A/Board.CANVAS", true),
            (".canvas", false),
            ("A/.canvas", false),
            ("Board.canvas.md", false),
            ("canvas", false),
        ] {
            assert_eq!(is_canvas(name), is, "{name}");
        }
    }

    #[test]
    fn a_canvas_reads_top_to_bottom_then_left_to_right_with_every_kind_of_node() {
        let canvas = Canvas::parse(BOARD).unwrap();
        assert_eq!(canvas.nodes.len(), 6);
        assert_eq!(
            canvas.reading_text(),
            "## Plans\n\nSee [[Target]] and [t](Notes/Target.md)\n\"quoted\"\n\n\
             Second, to the right\n\n[[Notes/Target.md#Heading]]\n\n<https://obsidian.md>\n\n\
             - leads to\n"
        );
    }

    #[test]
    fn missing_optional_fields_and_unknown_ones_are_tolerated_and_bad_json_is_refused() {
        let table: &[(&str, Option<&str>)] = &[
            ("{}", Some("")),
            (r#"{"nodes":[{"type":"text","text":"bare"}]}"#, Some("bare\n")),
            (r#"{"nodes":[{"type":"group"}],"extra":{"a":[1,2]}}"#, Some("")),
            (r#"{"nodes":[{"type":"file","file":"a.png"}],"edges":[{}]}"#, Some("[[a.png]]\n")),
            ("not json", None),
            (r#"{"nodes":{}}"#, None),
        ];
        for (json, want) in table {
            let got = Canvas::parse(json).ok().map(|c| c.reading_text());
            assert_eq!(got.as_deref(), *want, "{json}");
        }
    }

    fn paths(list: &[&str]) -> PathSet {
        PathSet::new(list.iter().map(|p| p.to_string()))
    }

    #[test]
    fn a_move_edits_only_the_spans_of_the_strings_that_name_the_moved_note() {
        let before = paths(&["Board.canvas", "Notes/Target.md", "Other.md"]);
        let after = paths(&["Board.canvas", "Moved/Renamed.md", "Other.md"]);
        let (new, n) = rewrite_inbound(
            BOARD,
            "Board.canvas",
            "Notes/Target.md",
            "Moved/Renamed.md",
            &before,
            &after,
        );
        assert_eq!(n, 2, "the text node and the file node");
        let want = BOARD
            .replace(
                r#""text":"See [[Target]] and [t](Notes/Target.md)\n"#,
                r#""text":"See [[Renamed]] and [t](Moved/Renamed.md)\n"#,
            )
            .replace(r#""file":"Notes/Target.md""#, r#""file":"Moved/Renamed.md""#);
        assert_eq!(new, want, "every other byte as it was");
        Canvas::parse(&new).unwrap();
    }

    #[test]
    fn a_canvas_that_names_nothing_moved_or_is_not_json_is_left_alone() {
        let before = paths(&["Board.canvas", "Notes/Target.md", "Other.md"]);
        let after = paths(&["Board.canvas", "Notes/Target.md", "Moved.md"]);
        for json in [BOARD, "{\"nodes\":[{\"type\":\"text\",\"text\":\"[[Other]]\"", "[]"] {
            let (new, n) =
                rewrite_inbound(json, "Board.canvas", "Other.md", "Moved.md", &before, &after);
            assert_eq!((new.as_str(), n), (json, 0), "{json}");
        }
    }

    #[test]
    fn a_new_path_with_characters_json_escapes_is_written_escaped() {
        let json = r#"{"nodes":[{"id":"f","type":"file","file":"a.md","x":0,"y":0}]}"#;
        let before = paths(&["a.md"]);
        let after = paths(&["say \"hi\"\\.md"]);
        let (new, n) =
            rewrite_inbound(json, "c.canvas", "a.md", "say \"hi\"\\.md", &before, &after);
        assert_eq!(n, 1);
        assert_eq!(
            new,
            r#"{"nodes":[{"id":"f","type":"file","file":"say \"hi\"\\.md","x":0,"y":0}]}"#
        );
        assert_eq!(Canvas::parse(&new).unwrap().nodes[0].file.as_deref(), Some("say \"hi\"\\.md"));
    }
}
