//! The predecessor's REST calls replayed: one request per call `seed-spec.md` §2 documents
//! (the vault MCP server's routes, headers and refusals), each checked against its documented
//! answer on the real binary.
//!
//! Where mdvault answers differently on purpose, the case names the difference, and that
//! phrase must be a line of `docs/migrating.md`'s "REST answers that changed" list: the test
//! ties each deliberate difference to the one line that tells the predecessor's users.

use serde_json::Value;

use crate::common::{Reply, Server, TempVault, http_call};

const ENV: &[(&str, &str)] = &[
    ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
    ("MDVAULT_WATCH__DEBOUNCE_SECONDS", "0.2"),
    // The predecessor's stamp: every note write bumps `timestamp`.
    ("MDVAULT_VAULT__TIMESTAMP_KEY", "timestamp"),
];

/// One documented call and what the predecessor's users may rely on in its answer.
struct Case {
    what: &'static str,
    method: &'static str,
    path: &'static str,
    headers: &'static [(&'static str, &'static str)],
    body: Option<&'static str>,
    status: u16,
    /// Checks the answer (and the vault) beyond the status.
    check: fn(&Reply, &TempVault),
    /// The line of docs/migrating.md that names how mdvault's answer differs, if it does.
    difference: Option<&'static str>,
}

fn none(_: &Reply, _: &TempVault) {}

fn json_keys(r: &Reply) -> Vec<String> {
    r.json().as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

/// A check that the answer is a refusal with this code.
macro_rules! refused_with {
    ($code:literal) => {
        |r: &Reply, _: &TempVault| assert_eq!(r.code(), $code, "{}", r.body)
    };
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            what: "GET /healthz is ok, text, without a key",
            method: "GET",
            path: "/healthz",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| {
                assert_eq!(r.body, "ok\n");
                assert!(r.header("content-type").unwrap().starts_with("text/plain"));
            },
            difference: None,
        },
        Case {
            what: "GET /readyz is the readiness JSON",
            method: "GET",
            path: "/readyz",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.json().is_object()),
            difference: None,
        },
        Case {
            what: "GET /vault/<note> is the Markdown",
            method: "GET",
            path: "/vault/Home/Boiler.md",
            headers: &[],
            body: None,
            status: 200,
            check: |r, v| {
                assert_eq!(r.body, v.read("Home/Boiler.md"));
                assert!(r.header("content-type").unwrap().starts_with("text/markdown"));
            },
            difference: Some("A note is served as `text/markdown`"),
        },
        Case {
            what: "GET /vault/<note>?section= narrows to the section",
            method: "GET",
            path: "/vault/Home/Boiler.md?section=Settings",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| {
                assert!(r.body.contains("## Settings"), "{}", r.body);
                assert!(!r.body.contains("## Details"), "{}", r.body);
            },
            difference: None,
        },
        Case {
            what: "GET /vault/<note> with Accept: application/json is the note object",
            method: "GET",
            path: "/vault/Home/Boiler.md",
            headers: &[("Accept", "application/json")],
            body: None,
            status: 200,
            check: |r, v| {
                let j = r.json();
                assert_eq!(j["path"], "Home/Boiler.md");
                assert_eq!(j["content"].as_str().unwrap(), v.read("Home/Boiler.md"));
                assert!(
                    j["body"].as_str().unwrap().starts_with("\n# Boiler")
                        || j["body"].as_str().unwrap().starts_with("# Boiler")
                );
                assert_eq!(j["frontmatter"]["type"], "asset");
                let keys = json_keys(r);
                assert!(keys.len() > 4, "{keys:?}");
            },
            difference: Some("The note JSON carries `vault` and `etag` beside"),
        },
        Case {
            what: "GET /vault/<folder> with Accept: text/plain is the listing as text",
            method: "GET",
            path: "/vault/Home/",
            headers: &[("Accept", "text/plain")],
            body: None,
            status: 200,
            check: |r, _| assert!(r.body.contains("Boiler.md"), "{}", r.body),
            difference: None,
        },
        Case {
            what: "GET /vault/<folder> with no Accept is the listing as JSON",
            method: "GET",
            path: "/vault/Home/",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.json()["entries"].is_array(), "{}", r.body),
            difference: Some("A folder listing is JSON unless `Accept` asks for `text/plain`"),
        },
        Case {
            what: "GET /vault/<note>?map is frontmatter and the outline",
            method: "GET",
            path: "/vault/Home/Boiler.md?map",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| {
                let j = r.json();
                assert_eq!(j["path"], "Home/Boiler.md");
                assert_eq!(j["frontmatter"]["title"], "Boiler");
                let h = &j["headings"][0];
                assert!(h["depth"].is_number() && h["text"] == "Boiler" && h["line"].is_number());
            },
            difference: None,
        },
        Case {
            what: "PUT /vault/<note> writes it, overwriting",
            method: "PUT",
            path: "/vault/Inbox/Seed.md",
            headers: &[],
            body: Some("---\ntitle: Seed\n---\n# Seed\n\nFirst.\n"),
            status: 204,
            check: |_, v| assert!(v.read("Inbox/Seed.md").contains("First.")),
            difference: Some("A whole-note write answers 204"),
        },
        Case {
            what: "PUT /vault/<note> with Accept: text/plain gives the confirmation",
            method: "PUT",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Accept", "text/plain")],
            body: Some("---\ntitle: Seed\n---\n# Seed\n\nFirst.\n"),
            status: 200,
            check: |r, v| {
                assert!(r.body.contains("Inbox/Seed.md"), "{}", r.body);
                assert!(v.read("Inbox/Seed.md").contains("\ntimestamp: "), "the write is stamped");
            },
            difference: None,
        },
        Case {
            what: "POST /vault/<note> appends",
            method: "POST",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Accept", "text/plain")],
            body: Some("Second."),
            status: 200,
            check: |_, v| assert!(v.read("Inbox/Seed.md").ends_with("First.\n\nSecond.\n")),
            difference: None,
        },
        Case {
            what: "POST /vault/<note> creates a missing note",
            method: "POST",
            path: "/vault/Inbox/Made%20by%20append.md",
            headers: &[],
            body: Some("Made.\n"),
            status: 204,
            check: |_, v| assert_eq!(v.read("Inbox/Made by append.md"), "Made.\n"),
            difference: Some("A whole-note write answers 204"),
        },
        Case {
            what: "PATCH with Target alone replaces a heading's section (Target-Type heading, Operation replace)",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target", "Seed"), ("Accept", "text/plain")],
            body: Some("Replaced."),
            status: 200,
            check: |r, v| {
                assert!(r.body.starts_with("replaced"), "{}", r.body);
                assert!(v.read("Inbox/Seed.md").ends_with("# Seed\n\nReplaced.\n"));
            },
            difference: None,
        },
        Case {
            what: "PATCH with heading headers and no Accept answers",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target-Type", "heading"), ("Target", "Seed"), ("Operation", "append")],
            body: Some("Appended."),
            status: 200,
            check: |r, v| {
                assert_eq!(r.body, v.read("Inbox/Seed.md"));
                assert!(r.header("deprecation").is_some());
            },
            difference: Some("A `PATCH` in the header format answers the whole note"),
        },
        Case {
            what: "PATCH Target-Type: body replaces the body",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target-Type", "body"), ("Accept", "text/plain")],
            body: Some("# Seed\n\nNew body.\n"),
            status: 200,
            check: |_, v| {
                let t = v.read("Inbox/Seed.md");
                assert!(
                    t.starts_with("---\ntitle: Seed\n") && t.ends_with("\n# Seed\n\nNew body.\n"),
                    "{t}"
                );
            },
            difference: None,
        },
        Case {
            what: "PATCH Target-Type: body with another operation is refused",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target-Type", "body"), ("Operation", "append")],
            body: Some("x"),
            status: 400,
            check: refused_with!("invalid_request"),
            difference: None,
        },
        Case {
            what: "PATCH Target-Type: text replaces literal text",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target-Type", "text"), ("Accept", "text/plain")],
            body: Some(r#"{"find": "New body.", "replace": "Newer body."}"#),
            status: 200,
            check: |_, v| assert!(v.read("Inbox/Seed.md").ends_with("Newer body.\n")),
            difference: None,
        },
        Case {
            what: "PATCH a frontmatter key replaces it with the JSON value",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[
                ("Target-Type", "frontmatter"),
                ("Target", "status"),
                ("Accept", "text/plain"),
            ],
            body: Some(r#""draft""#),
            status: 200,
            check: |_, v| assert!(v.read("Inbox/Seed.md").contains("\nstatus: draft\n")),
            difference: None,
        },
        Case {
            what: "PATCH a frontmatter key with Operation: delete removes it",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[
                ("Target-Type", "frontmatter"),
                ("Target", "status"),
                ("Operation", "delete"),
                ("Accept", "text/plain"),
            ],
            body: None,
            status: 200,
            check: |_, v| assert!(!v.read("Inbox/Seed.md").contains("status:")),
            difference: None,
        },
        Case {
            what: "PATCH a frontmatter key to null is refused",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target-Type", "frontmatter"), ("Target", "status")],
            body: Some("null"),
            status: 400,
            check: refused_with!("invalid_value"),
            difference: None,
        },
        Case {
            what: "PATCH a frontmatter key with text that is not JSON sets it as a string",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[
                ("Target-Type", "frontmatter"),
                ("Target", "status"),
                ("Accept", "text/plain"),
            ],
            body: Some("in review"),
            status: 200,
            check: |_, v| assert!(v.read("Inbox/Seed.md").contains("\nstatus: in review\n")),
            difference: Some("A frontmatter `PATCH` body that is not JSON is the string it spells"),
        },
        Case {
            what: "PATCH a heading without a Target is refused",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target-Type", "heading"), ("Operation", "append")],
            body: Some("x"),
            status: 400,
            check: refused_with!("invalid_request"),
            difference: None,
        },
        Case {
            what: "PATCH an unknown Target-Type is refused",
            method: "PATCH",
            path: "/vault/Inbox/Seed.md",
            headers: &[("Target-Type", "paragraph"), ("Target", "x")],
            body: Some("x"),
            status: 400,
            check: refused_with!("invalid_request"),
            difference: None,
        },
        Case {
            what: "GET /search ranks passages",
            method: "GET",
            path: "/search?q=boiler%20service&k=3",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| {
                let results = r.json()["results"].as_array().unwrap().clone();
                assert!(!results.is_empty() && results.len() <= 3, "{}", r.body);
                assert!(results.iter().all(|h| h["path"].is_string() && h["score"].is_number()));
            },
            difference: None,
        },
        Case {
            what: "POST /search takes the same fields as JSON",
            method: "POST",
            path: "/search",
            headers: &[("Content-Type", "application/json")],
            body: Some(r#"{"q": "boiler", "k": 2, "prefix": "Home", "explain": true}"#),
            status: 200,
            check: |r, _| {
                let results = r.json()["results"].as_array().unwrap().clone();
                assert!(!results.is_empty() && results.len() <= 2, "{}", r.body);
                assert!(results.iter().all(|h| h["path"].as_str().unwrap().starts_with("Home/")));
            },
            difference: None,
        },
        Case {
            what: "GET /search with a prefix that names nothing indexed is not found",
            method: "GET",
            path: "/search?q=boiler&prefix=Nowhere",
            headers: &[],
            body: None,
            status: 404,
            check: refused_with!("not_found"),
            difference: None,
        },
        Case {
            what: "PUT /folder/<path> creates it with parents",
            method: "PUT",
            path: "/folder/Inbox/Deep/Er",
            headers: &[],
            body: None,
            status: 200,
            check: |_, v| assert!(v.root().join("Inbox/Deep/Er").is_dir()),
            difference: None,
        },
        Case {
            what: "PUT /folder/<path> of a folder there already succeeds",
            method: "PUT",
            path: "/folder/Inbox/Deep/Er",
            headers: &[],
            body: None,
            status: 200,
            check: none,
            difference: None,
        },
        Case {
            what: "DELETE /folder/<path> of a folder with contents needs recursive",
            method: "DELETE",
            path: "/folder/Inbox/Deep",
            headers: &[],
            body: None,
            status: 400,
            check: refused_with!("not_empty"),
            difference: None,
        },
        Case {
            what: "DELETE /folder/<path>?recursive removes it",
            method: "DELETE",
            path: "/folder/Inbox/Deep?recursive",
            headers: &[],
            body: None,
            status: 200,
            check: |_, v| assert!(!v.root().join("Inbox/Deep").exists()),
            difference: None,
        },
        Case {
            what: "DELETE /vault/<note> removes the note",
            method: "DELETE",
            path: "/vault/Inbox/Made%20by%20append.md",
            headers: &[],
            body: None,
            status: 204,
            check: |_, v| assert!(!v.root().join("Inbox/Made by append.md").exists()),
            difference: Some("`DELETE` moves a note to the vault's `.trash`"),
        },
        Case {
            what: "GET /frontmatter?key=&value= lists the matching notes",
            method: "GET",
            path: "/frontmatter?key=type&value=asset",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| {
                let list = r.json();
                let names: Vec<&str> = list
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|e| e["filename"].as_str())
                    .collect();
                assert!(names.contains(&"Home/Boiler.md"), "{}", r.body);
            },
            difference: None,
        },
        Case {
            what: "GET /expiries lists dated commitments",
            method: "GET",
            path: "/expiries?within=3650",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.json().is_object() || r.json().is_array(), "{}", r.body),
            difference: None,
        },
        Case {
            what: "GET /callouts lists the open callouts",
            method: "GET",
            path: "/callouts",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.body.contains("Car Insurance"), "{}", r.body),
            difference: None,
        },
        Case {
            what: "POST /callouts is the same",
            method: "POST",
            path: "/callouts",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.body.contains("Car Insurance"), "{}", r.body),
            difference: None,
        },
        Case {
            what: "GET /maintenance runs the checks",
            method: "GET",
            path: "/maintenance",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.json().is_object(), "{}", r.body),
            difference: None,
        },
        Case {
            what: "POST /maintenance is the same",
            method: "POST",
            path: "/maintenance",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.json().is_object(), "{}", r.body),
            difference: None,
        },
        Case {
            what: "GET /maintenance/checks lists the checks",
            method: "GET",
            path: "/maintenance/checks",
            headers: &[],
            body: None,
            status: 200,
            check: |r, _| assert!(r.body.contains("name"), "{}", r.body),
            difference: None,
        },
        Case {
            what: "A missing note is 404 not_found as JSON",
            method: "GET",
            path: "/vault/Home/Nope.md",
            headers: &[],
            body: None,
            status: 404,
            check: |r, _| {
                assert_eq!(r.code(), "not_found");
                assert!(r.json()["error"].is_string());
                assert_eq!(r.json()["errorCode"], 40400);
            },
            difference: Some(
                "Every refusal carries `errorCode` and `message` beside `code` and `error`",
            ),
        },
        Case {
            what: "A path out of the vault is 400 invalid_path",
            method: "PUT",
            path: "/vault/..%2Fescape.md",
            headers: &[],
            body: Some("x"),
            status: 400,
            check: refused_with!("invalid_path"),
            difference: None,
        },
    ]
}

#[test]
fn every_rest_call_the_predecessor_documents_gets_its_documented_answer() {
    let v = TempVault::fixture();
    let s = Server::start(&[format!("fixture={}", v.root().display())], ENV);
    let migrating = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/migrating.md"),
    )
    .unwrap();
    for case in cases() {
        let r = s.call(case.method, case.path, case.headers, case.body.map(str::as_bytes));
        assert_eq!(r.status, case.status, "{}: {} {}", case.what, r.status, r.body);
        (case.check)(&r, &v);
        if let Some(line) = case.difference {
            assert!(
                migrating.lines().any(|l| l.starts_with("- ") && l.contains(line)),
                "{}: docs/migrating.md has no line naming the difference {line:?}",
                case.what
            );
        }
    }
    // Without the key, every route but /healthz is refused.
    let r = http_call(&s.base, "GET", "/vault/Home/Boiler.md", None, &[], None);
    assert_eq!((r.status, r.code().as_str()), (401, "unauthorized"));
    let _: Value = r.json();
}
