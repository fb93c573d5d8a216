//! Filed documents end to end: PDF uploads over REST and the CLI, their extraction verdicts,
//! every filing refusal (with the vault unchanged), opacity to note verbs, moves that keep every
//! byte and repoint links, search over text found only in a PDF, and the extraction cache.
//!
//! The PDFs are `tests/fixtures/documents/*.pdf` (made by its `make_pdfs.py`). OCR needs
//! `tesseract` and `pdftoppm` on PATH; the test script installs them, and these tests fail
//! rather than skip without them.

use std::path::PathBuf;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::{Server, TempVault, mdvault, model_dir, stderr, stdout};
use crate::serve::tool;

fn pdf(name: &str) -> Vec<u8> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn enc(path: &str) -> String {
    path.replace(' ', "%20")
}

fn put(s: &Server, path: &str, bytes: &[u8], query: &str) -> (u16, Value) {
    // A misleading Content-Type on purpose: the suffix decides.
    let r = s.call(
        "PUT",
        &format!("/vault/{}{query}", enc(path)),
        &[("Content-Type", "text/markdown")],
        Some(bytes),
    );
    let v =
        serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {} {}", r.status, r.body));
    (r.status, v)
}

fn search(s: &Server, q: &str) -> Vec<Value> {
    let body = json!({"q": q, "k": 6}).to_string();
    let r =
        s.call("POST", "/search", &[("Content-Type", "application/json")], Some(body.as_bytes()));
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["results"].as_array().unwrap().clone()
}

const CONTRACT: &str = "Home/Utilities/Files/2026-10-12 Larkspire - Supply Agreement.pdf";

/// The one PDF the fixture vault files itself, linked from `Home/Utilities/Broadband.md`.
const NORDLICHT: &str = "Home/Utilities/Files/2026-05-02 Nordlicht - Contract.pdf";

#[test]
fn uploads_are_filed_extracted_searchable_and_refused_by_rule() {
    let v = TempVault::fixture();
    let spec = format!("main={}", v.root().display());
    let s = Server::start(
        &[spec],
        &[("MDVAULT_VAULT__DOC_MAX_BYTES", "20000"), ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2")],
    );

    // Filed: stored byte for byte, extracted, reported.
    let contract = pdf("contract.pdf");
    let (status, r) = put(&s, CONTRACT, &contract, "");
    assert_eq!(status, 201, "{r}");
    assert_eq!(r["status"], "filed");
    assert_eq!(r["extraction"], "extracted");
    assert_eq!((r["pages"].as_u64(), r["has_text_layer"].as_bool()), (Some(1), Some(true)));
    assert_eq!(r["sha256"], sha(&contract));
    assert_eq!(r["size"], contract.len());
    assert!(r["extracted_chars"].as_u64().unwrap() > 300, "{r}");
    assert_eq!(std::fs::read(v.root().join(CONTRACT)).unwrap(), contract);

    // The same bytes again: unchanged. Different bytes: refused, then replaced on request.
    let (status, r) = put(&s, CONTRACT, &contract, "");
    assert_eq!((status, r["status"].as_str()), (200, Some("unchanged")));
    let before = v.snapshot();
    let (status, r) = put(&s, CONTRACT, &pdf("two-pages.pdf"), "");
    assert_eq!((status, r["code"].as_str()), (400, Some("already_exists")), "{r}");
    assert_eq!(v.snapshot(), before);
    let (status, r) = put(&s, CONTRACT, &pdf("two-pages.pdf"), "?overwrite=true");
    assert_eq!(
        (status, r["status"].as_str(), r["pages"].as_u64()),
        (200, Some("replaced"), Some(2))
    );
    let (status, _) = put(&s, CONTRACT, &contract, "?overwrite=true");
    assert_eq!(status, 200);

    // Refusals, each leaving the vault as it was.
    let before = v.snapshot();
    let refusals: [(&str, Vec<u8>, &str); 7] = [
        ("Home/Files/empty.pdf", Vec::new(), "empty_document"),
        ("Home/Utilities/contract.pdf", contract.clone(), "wrong_parent_folder"),
        ("contract.pdf", contract.clone(), "wrong_parent_folder"),
        ("Home/Files/Old/contract.pdf", contract.clone(), "wrong_parent_folder"),
        ("Home/files/contract.pdf", contract.clone(), "wrong_parent_folder"),
        (
            "Home/Files/big.pdf",
            [b"%PDF-1.4\n".as_slice(), &[b'x'; 30_000]].concat(),
            "document_too_large",
        ),
        ("Home/Files/../../../etc/x.pdf", contract.clone(), "invalid_path"),
    ];
    for (path, bytes, code) in &refusals {
        let (status, r) = put(&s, path, bytes, "");
        assert_eq!((status, r["code"].as_str()), (400, Some(*code)), "{path}: {r}");
        assert!(!r["error"].as_str().unwrap().is_empty());
    }
    let (_, r) = put(&s, "Home/Utilities/contract.pdf", &contract, "");
    assert!(r["error"].as_str().unwrap().contains("`Home/Utilities/Files/contract.pdf`"), "{r}");
    assert_eq!(v.snapshot(), before, "a refused upload changed the vault");

    // Every verdict.
    let verdicts = [
        ("Home/Files/handbook.pdf", "handbook.pdf", "extracted", 3, true),
        ("Home/Files/scan.pdf", "scan.pdf", "ocr", 1, false),
        ("Home/Files/blank.pdf", "blank.pdf", "no_text", 1, false),
        ("Home/Files/encrypted.pdf", "encrypted.pdf", "failed", 0, false),
        ("Home/Files/corrupt.pdf", "corrupt.pdf", "failed", 0, false),
    ];
    for (path, file, extraction, pages, layer) in verdicts {
        let (status, r) = put(&s, path, &pdf(file), "");
        assert_eq!(status, 201, "{path}: {r}");
        assert_eq!(r["extraction"], extraction, "{path}: {r}");
        assert_eq!(r["pages"], pages, "{path}: {r}");
        assert_eq!(r["has_text_layer"], layer, "{path}: {r}");
        if extraction != "extracted" {
            assert!(!r["detail"].as_str().unwrap().is_empty(), "{path}: {r}");
        }
        if extraction == "no_text" || extraction == "failed" {
            assert_eq!(r["extracted_chars"], 0, "{path}: {r}");
        }
    }
    let (_, r) = put(&s, "Home/Files/encrypted.pdf", &pdf("encrypted.pdf"), "");
    assert!(r["detail"].as_str().unwrap().contains("password"), "{r}");

    // Reading: the extracted Markdown, its verdict, its map.
    let r = s.call("GET", &format!("/vault/{}", enc(CONTRACT)), &[], None);
    assert_eq!(r.status, 200);
    assert!(r.body.starts_with("## Page 1\n"), "{}", r.body);
    assert!(r.body.contains("LK-5093-7261"));
    let j = s
        .call("GET", &format!("/vault/{}", enc(CONTRACT)), &[("Accept", "application/json")], None)
        .json();
    assert_eq!(j["extraction"]["status"], "extracted");
    assert_eq!(j["frontmatter"], json!({}));
    let m = s.call("GET", "/vault/Home/Files/handbook.pdf?map", &[], None).json();
    assert_eq!(m["document"], true);
    assert_eq!(m["extraction"]["pages"], 3);
    assert!(
        m["headings"].as_array().unwrap().iter().any(|h| h["text"] == "Emergency contacts"),
        "{m}"
    );
    let r = s.call("GET", "/vault/Home/Files/blank.pdf", &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "extraction_failed"), "{}", r.body);
    let r = s.call("GET", "/vault/Home/Files/handbook.pdf?section=Emergency%20contacts", &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "is_document"));

    // MCP reads and maps documents too, and its note verbs refuse them.
    let (err, text) = tool(&s, "/mcp", "vault_read", json!({"path": "Home/Files/scan.pdf"}));
    assert!(!err && text.contains("QZ-58213"), "{text}");
    let (err, text) = tool(&s, "/mcp", "vault_map", json!({"path": "Home/Files/encrypted.pdf"}));
    assert!(!err && text.contains("status: failed") && text.contains("password"), "{text}");
    let (err, text) = tool(
        &s,
        "/mcp",
        "vault_write",
        json!({"path": "Home/Files/scan.pdf", "content": "x", "overwrite": true}),
    );
    assert!(err && text.contains("document"), "{text}");

    // Opacity over REST: every note verb refused, the bytes untouched.
    let before = v.snapshot();
    let doc = format!("/vault/{}", enc(CONTRACT));
    type Attempt<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [u8]);
    let attempts: [Attempt; 4] = [
        ("POST", &[], b"more"),
        (
            "PATCH",
            &[
                ("Target-Type", "heading"),
                ("Target", "Page 1"),
                ("Operation", "append"),
                ("Markdown-Patch-Version", "1"),
            ],
            b"x",
        ),
        (
            "PATCH",
            &[
                ("Target-Type", "frontmatter"),
                ("Target", "status"),
                ("Operation", "replace"),
                ("Markdown-Patch-Version", "1"),
            ],
            b"\"x\"",
        ),
        ("PATCH", &[("Target-Type", "body"), ("Operation", "replace")], b"x"),
    ];
    for (method, headers, body) in attempts {
        let r = s.call(method, &doc, headers, Some(body));
        assert_eq!(
            (r.status, r.code().as_str()),
            (400, "is_document"),
            "{method} {headers:?}: {}",
            r.body
        );
    }
    assert_eq!(v.snapshot(), before);

    // Search finds facts that are only in the PDFs, cited by page or heading: in the one the
    // fixture vault already holds (indexed at start-up) and in the uploaded ones.
    let hits = search(&s, "NLF-ONT-60417Q");
    assert_eq!(hits[0]["path"], NORDLICHT, "{hits:?}");
    assert_eq!(hits[0]["document"], true);
    let hits = search(&s, "LK-5093-7261");
    assert_eq!(hits[0]["path"], CONTRACT, "{hits:?}");
    assert_eq!(hits[0]["document"], true);
    let hits = search(&s, "QZ-58213 parking permit");
    assert_eq!(hits[0]["path"], "Home/Files/scan.pdf", "{hits:?}");
    let hits = search(&s, "Garnet Pipeworks");
    let handbook = hits
        .iter()
        .find(|h| h["path"] == "Home/Files/handbook.pdf")
        .unwrap_or_else(|| panic!("{hits:#?}"));
    assert!(
        handbook["heading"].as_str().unwrap_or("").contains("Emergency contacts"),
        "{handbook}"
    );

    // The fixture's own PDF is already filed: its bytes again are `unchanged`. A move keeps
    // every byte and repoints the link in Broadband.md; kind changes are refused.
    let nordlicht = std::fs::read(crate::common::fixture_root().join(NORDLICHT)).unwrap();
    let (status, r) = put(&s, NORDLICHT, &nordlicht, "");
    assert_eq!((status, r["status"].as_str()), (200, Some("unchanged")), "{r}");
    let dest = "Home/Files/2026-05-02 Nordlicht - Contract.pdf";
    let r = s.call(
        "POST",
        &format!("/move/{}", enc(NORDLICHT)),
        &[("Content-Type", "application/json")],
        Some(json!({"destination": dest}).to_string().as_bytes()),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(std::fs::read(v.root().join(dest)).unwrap(), nordlicht);
    assert!(!v.root().join(NORDLICHT).exists());
    let note = v.read("Home/Utilities/Broadband.md");
    assert!(note.contains("(/Home/Files/2026-05-02%20Nordlicht%20-%20Contract.pdf)"), "{note}");
    for (from, to) in
        [(dest, "Home/Files/contract.md"), ("Home/Boiler.md", "Home/Files/Boiler.pdf")]
    {
        let r = s.call(
            "POST",
            &format!("/move/{}", enc(from)),
            &[("Content-Type", "application/json")],
            Some(json!({"destination": to}).to_string().as_bytes()),
        );
        assert_eq!((r.status, r.code().as_str()), (400, "kind_change"), "{from}: {}", r.body);
    }

    // Deleting a document removes it from search.
    let r = s.call("DELETE", &format!("/vault/{}", enc(CONTRACT)), &[], None);
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(search(&s, "LK-5093-7261").iter().all(|h| h["path"] != CONTRACT));
}

#[test]
fn the_cli_files_reads_and_maps_documents_and_never_extracts_twice() {
    let v = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let local = tempfile::tempdir().unwrap();
    let scan = local.path().join("scan.pdf");
    std::fs::write(&scan, pdf("scan.pdf")).unwrap();
    let vault = format!("main={}", v.root().display());
    let data_dir = data.path().display().to_string();
    let common = ["--vault", vault.as_str(), "--data-dir", data_dir.as_str()];
    let run = |args: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(&common);
        mdvault(&all, None)
    };
    // `index` and `search` load the model; the log says when a document is extracted.
    let with_model = |args: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(&common);
        let home = tempfile::tempdir().unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_mdvault"))
            .args(&all)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("MDVAULT_EMBEDDING__MODEL_DIR", model_dir())
            .env("MDVAULT_LOG", "info")
            .output()
            .unwrap();
        assert!(o.status.success(), "{all:?}: {}", stderr(&o));
        o
    };

    let o = run(&[
        "file",
        scan.to_str().unwrap(),
        "Personal/Vehicles/Files/2026-07-01 Parking - Permit.pdf",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("filed Personal/Vehicles/Files/2026-07-01 Parking - Permit.pdf"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("ocr, 1 page(s)"), "{}", stdout(&o));
    let o = run(&[
        "file",
        scan.to_str().unwrap(),
        "Personal/Vehicles/Files/2026-07-01 Parking - Permit.pdf",
        "--json",
    ]);
    let j: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((j["status"].as_str(), j["extraction"].as_str()), (Some("unchanged"), Some("ocr")));

    let before = v.snapshot();
    let o = run(&["file", scan.to_str().unwrap(), "Personal/Vehicles/permit.pdf"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("wrong_parent_folder") || stderr(&o).contains("Files"),
        "{}",
        stderr(&o)
    );
    assert_eq!(v.snapshot(), before);

    let o = run(&["read", "Personal/Vehicles/Files/2026-07-01 Parking - Permit.pdf"]);
    assert!(o.status.success() && stdout(&o).contains("QZ-58213"), "{}", stderr(&o));
    let o = run(&["map", "Personal/Vehicles/Files/2026-07-01 Parking - Permit.pdf"]);
    assert!(stdout(&o).contains("status: ocr"), "{}", stdout(&o));

    // Indexing reuses the extraction the CLI cached; so does a later pass over renamed bytes.
    let log = stderr(&with_model(&["index"]));
    assert!(!log.contains("extracted Personal/Vehicles"), "re-extracted a cached document:\n{log}");
    std::fs::rename(
        v.root().join("Personal/Vehicles/Files/2026-07-01 Parking - Permit.pdf"),
        v.root().join("Personal/Vehicles/Files/permit.pdf"),
    )
    .unwrap();
    let log = stderr(&with_model(&["index"]));
    assert!(!log.contains("extracted Personal/Vehicles"), "re-extracted renamed bytes:\n{log}");
    let o = with_model(&["search", "QZ-58213", "--json"]);
    let j: Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert_eq!(j["results"][0]["path"], "Personal/Vehicles/Files/permit.pdf", "{j}");
    assert_eq!(j["results"][0]["document"], true);
}
