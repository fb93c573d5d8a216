//! Obsidian canvases and attachment moves end to end on the real binary, over the `canvas-*`
//! files of `tests/fixtures/obsidian/`: a canvas listed as a document, read over REST as its
//! JSON (as the Local REST API serves it) and as its text in REST's JSON forms and over MCP,
//! without a byte of it changing, refused to the note verbs, found by search over
//! REST and MCP naming its path, and repointed on a note's move with only the moved note's
//! JSON strings changed; an attachment's move carrying every link and embed to it along, in
//! notes and the canvas; the web page showing a canvas read-only, its editor refused; upkeep
//! counting a canvas's links as backlinks and its missing files as broken links.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{Server, TempVault};
use crate::serve::mcp;

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

const CANVAS: &str = "canvas-plan.canvas";
const PIXEL: &str = "canvas-img/canvas-pixel.png";

/// A vault of this slice's fixture files (`canvas-*`), and nothing else of the shared folder.
fn canvas_vault() -> TempVault {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/obsidian");
    let v = TempVault::empty();
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("canvas-") {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            crate::common::copy_tree(&entry.path(), &v.root().join(&name));
        } else {
            std::fs::copy(entry.path(), v.root().join(&name)).unwrap();
        }
    }
    v
}

fn served() -> (TempVault, Server) {
    let v = canvas_vault();
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);
    (v, s)
}

fn tool(s: &Server, name: &str, arguments: Value) -> String {
    let r = mcp(s, "/mcp", "tools/call", json!({"name": name, "arguments": arguments}));
    assert_ne!(r["isError"], true, "{name}: {r}");
    r["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect()
}

fn search_paths(s: &Server, q: &str) -> Vec<String> {
    let body = json!({"q": q, "k": 6}).to_string();
    let r =
        s.call("POST", "/search", &[("Content-Type", "application/json")], Some(body.as_bytes()));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
}

fn post_move(s: &Server, from: &str, to: &str) -> Value {
    let r = s.call(
        "POST",
        &format!("/move/{from}"),
        &[("Content-Type", "application/json"), ("Accept", "application/json")],
        Some(json!({"destination": to}).to_string().as_bytes()),
    );
    assert_eq!(r.status, 200, "{from} -> {to}: {}", r.body);
    r.json()
}

#[test]
fn a_canvas_is_listed_read_and_searched_as_a_document_and_never_changed_by_it() {
    let v = canvas_vault();
    // A second copy in a folder, which the folder route lists (the root is `/vault/`'s).
    std::fs::create_dir(v.root().join("Boards")).unwrap();
    std::fs::copy(v.root().join(CANVAS), v.root().join("Boards").join(CANVAS)).unwrap();
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);
    let before = v.snapshot();

    let r = s.call("GET", "/folder/Boards", &[("Accept", "application/json")], None);
    assert_eq!(r.status, 200, "{}", r.body);
    let listed = r.json()["entries"].as_array().unwrap().clone();
    let entry = listed.iter().find(|e| e["name"] == CANVAS).unwrap_or_else(|| panic!("{}", r.body));
    assert_eq!(entry["kind"], "document");

    // Read over REST: the file's own JSON, byte for byte, as the Local REST API serves a file
    // that is not a note and its clients parse it.
    let r = s.call("GET", &format!("/vault/{CANVAS}"), &[("Accept", "text/markdown")], None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body.as_bytes(), std::fs::read(v.root().join(CANVAS)).unwrap());
    assert_eq!(r.header("content-type"), Some("application/json"));
    // Its text in reading order (the group, the two top nodes left to right, the file nodes,
    // the link) is the JSON forms' `content`, with the file's own etag.
    let r = s.call("GET", &format!("/vault/{CANVAS}"), &[("Accept", "application/json")], None);
    assert_eq!(r.status, 200, "{}", r.body);
    let text = r.json()["content"].as_str().unwrap().to_string();
    let order =
        ["## Renovation plan", "quillfeather", "\"oak\" boards", "[[canvas-target.md#Budget]]"];
    let at: Vec<usize> =
        order.iter().map(|p| text.find(p).unwrap_or_else(|| panic!("{p}: {text}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "not in reading order: {text}");
    assert!(
        text.contains("[[canvas-img/canvas-pixel.png]]")
            && text.contains("<https://jsoncanvas.org/spec/1.0/>")
    );
    let r = s.call("GET", &format!("/vault/{CANVAS}"), &[("Accept", "application/json")], None);
    let bytes = std::fs::read(v.root().join(CANVAS)).unwrap();
    assert_eq!(r.json()["etag"], mdvault::vault::content_hash(&bytes), "{}", r.body);
    let read = tool(&s, "vault_read", json!({"path": CANVAS}));
    assert!(read.contains("quillfeather") && read.contains("## Renovation plan"), "{read}");

    // Search finds its text nodes and group label, naming the canvas.
    let hits = search_paths(&s, "quillfeather skirting");
    assert!(hits[..2].iter().all(|p| p.ends_with(CANVAS)), "{hits:?}");
    assert!(search_paths(&s, "Renovation plan").iter().any(|p| p == CANVAS));
    let found = tool(&s, "vault_search", json!({"query": "quillfeather", "k": 3}));
    assert!(found.contains(CANVAS), "{found}");

    // The note verbs refuse it; a section read is refused too.
    for (method, path, code) in [
        ("PUT", format!("/vault/{CANVAS}"), "is_document"),
        ("POST", format!("/vault/{CANVAS}"), "is_document"),
        ("PUT", "/vault/new.canvas".to_string(), "is_document"),
    ] {
        let r = s.call(method, &path, &[("Content-Type", "text/markdown")], Some(b"# not json"));
        assert_eq!((r.status, r.code().as_str()), (400, code), "{method} {path}: {}", r.body);
    }
    let r = s.call("GET", &format!("/vault/{CANVAS}?section=Renovation%20plan"), &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "is_document"), "{}", r.body);
    assert_eq!(v.snapshot(), before, "reads and refusals changed the vault");
}

#[test]
fn a_note_move_repoints_the_canvas_changing_only_the_strings_that_named_it() {
    let (v, s) = served();
    let before = v.read(CANVAS);
    let r = post_move(&s, "canvas-target.md", "Moved/canvas-renamed.md");
    assert!(r["message"].as_str().unwrap().contains("1 canvas(es)"), "{r}");
    let after = v.read(CANVAS);
    let want = before
        .replace(
            "See [[canvas-target]] and [the budget](canvas-target.md#Budget)",
            "See [[canvas-renamed]] and [the budget](Moved/canvas-renamed.md#Budget)",
        )
        .replace("\"file\": \"canvas-target.md\"", "\"file\": \"Moved/canvas-renamed.md\"");
    assert_ne!(want, before, "the fixture names the moved note");
    assert_eq!(after, want, "only the two strings changed");
    // Still a canvas Obsidian reads, and search reads it anew.
    let read = s.call("GET", &format!("/vault/{CANVAS}"), &[("Accept", "application/json")], None);
    assert!(
        read.json()["content"].as_str().unwrap().contains("[[Moved/canvas-renamed.md#Budget]]"),
        "{}",
        read.body
    );
}

#[test]
fn an_attachment_moves_with_every_link_and_embed_to_it_in_notes_and_the_canvas() {
    let (v, s) = served();
    let png = std::fs::read(v.root().join(PIXEL)).unwrap();
    let note = v.read("canvas-note.md");
    let canvas = v.read(CANVAS);
    let dest = "canvas-assets/canvas-pixel.png";
    // The plugin's MOVE, as a client of the Local REST API sends it.
    let r = s.call(
        "MOVE",
        &format!("/vault/{PIXEL}"),
        &[("Destination", &format!("/vault/{dest}"))],
        None,
    );
    assert!(r.status < 300, "{}", r.body);
    assert!(!v.root().join(PIXEL).exists());
    assert_eq!(std::fs::read(v.root().join(dest)).unwrap(), png, "its bytes as they were");
    // A bare `![[canvas-pixel.png]]` still finds the only file of that name; paths follow.
    assert_eq!(v.read("canvas-note.md"), note.replace(PIXEL, dest));
    assert_eq!(v.read(CANVAS), canvas.replace(PIXEL, dest));
    assert!(
        canvas.contains("![[canvas-pixel.png]]")
            && v.read(CANVAS).contains("![[canvas-pixel.png]]")
    );
    // Its bytes are still not writable.
    let r = s.call("PUT", &format!("/vault/{dest}"), &[], Some(b"x"));
    assert_eq!((r.status, r.code().as_str()), (400, "attachment_read_only"), "{}", r.body);
    // And a moved note repoints its own relative link to it.
    post_move(&s, "canvas-note.md", "Deep/er/canvas-note.md");
    let moved = v.read("Deep/er/canvas-note.md");
    // Written from the root, the link still reaches the image from the new folder (Obsidian
    // falls back to the root), so it may stay as it was; it never points at the old place.
    assert!(moved.contains("canvas-assets/canvas-pixel.png)") && !moved.contains(PIXEL), "{moved}");
}

#[test]
fn the_web_page_shows_a_canvas_read_only_and_its_editor_and_save_are_refused() {
    use crate::web::{browser, sign_in};
    let (v, s) = served();
    let before = v.read(CANVAS);
    let session = sign_in(&s);
    let page = browser(&s, "GET", &format!("/ui/note?path={CANVAS}"), &[("Cookie", &session)], "");
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("quillfeather"), "the canvas's text is shown: {}", page.body);
    assert!(page.body.contains("canvas-target"), "its file node is shown: {}", page.body);
    for edit in ["id=\"edit-note\"", "/ui/edit", "class=\"edit-section\""] {
        assert!(!page.body.contains(edit), "an edit affordance {edit}: {}", page.body);
    }
    // A note still offers its editor (the page tells the two apart).
    let note = browser(&s, "GET", "/ui/note?path=canvas-note.md", &[("Cookie", &session)], "");
    assert!(note.body.contains("id=\"edit-note\""), "{}", note.body);

    let form = browser(&s, "GET", &format!("/ui/edit?path={CANVAS}"), &[("Cookie", &session)], "");
    assert_eq!(form.status, 400, "{}", form.body);
    assert!(form.body.contains("is_document") && !form.body.contains("<textarea"), "{}", form.body);
    let o = s.base.clone();
    let body = format!("path={CANVAS}&text=Overwritten");
    let save = browser(&s, "POST", "/ui/edit", &[("Cookie", &session), ("Origin", &o)], &body);
    assert_eq!(save.status, 400, "{}", save.body);
    assert_eq!(v.read(CANVAS), before, "the canvas's JSON is as it was");
}

#[test]
fn upkeep_reads_a_canvases_links_as_backlinks_and_its_missing_files_as_broken_links() {
    let v = canvas_vault();
    v.write(
        "canvas-broken.canvas",
        r#"{"nodes":[
            {"id":"a","type":"file","file":"canvas-gone.md","x":0,"y":0,"width":10,"height":10},
            {"id":"b","type":"text","text":"See [[canvas-missing]].","x":0,"y":50,"width":10,"height":10}
        ]}"#,
    );
    let s = Server::start(&[format!("main={}", v.root().display())], HASHING);

    // The target note is linked only from the plan's canvas: by its text node's wikilink and
    // Markdown link, and by its file node.
    let r = s.call("GET", "/links/canvas-target.md", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    let backlinks: Vec<String> = r.json()["backlinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| format!("{} {}", b["from"].as_str().unwrap(), b["written"].as_str().unwrap()))
        .collect();
    assert_eq!(
        backlinks,
        [
            "canvas-plan.canvas [[canvas-target]]",
            "canvas-plan.canvas [the budget](canvas-target.md#Budget)",
            "canvas-plan.canvas [[canvas-target.md#Budget]]",
        ],
        "{}",
        r.body
    );

    let run = s.call("GET", "/maintenance", &[], None).json();
    let links = run["checks"].as_array().unwrap().iter().find(|c| c["check"] == "links").unwrap();
    let mut found: Vec<(String, String, String)> = links["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let message = f["message"].as_str().unwrap();
            let written = message.split(" leads nowhere").next().unwrap().to_string();
            (f["code"].as_str().unwrap().into(), f["path"].as_str().unwrap().into(), written)
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("broken_link".into(), "canvas-broken.canvas".into(), "[[canvas-gone.md]]".into()),
            ("broken_link".into(), "canvas-broken.canvas".into(), "[[canvas-missing]]".into()),
        ],
        "the plan's links all resolve; the broken canvas's two do not: {links}"
    );
}
