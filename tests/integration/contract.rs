//! The REST contract: `openapi.yaml`, the router's route table and the error-code enum agree.
//!
//! Three ways of agreement are held here, so that none of the three can drift alone:
//!
//! - the document's paths and methods are exactly `mdvault::api::rest::ROUTES`;
//! - the document's `Error.code` enum is exactly `ErrorCode::ALL`, and every error response
//!   the document describes names only codes whose `http_status()` is that response's
//!   status (a documented 404 can only carry `not_found`, a documented 400 only 400 codes);
//! - a live server routes every documented path and method (real fixture paths filled in),
//!   answers 405 `method_not_allowed` with an honest `Allow` to every other method on those
//!   paths, refuses everything but `/healthz` with 401 `unauthorized` without the key, and
//!   serves the file itself at `/openapi.yaml`.
//!
//! The schemas of the bodies are exercised by `scripts/fuzz-api.sh` (schemathesis), which
//! needs Python and minutes; these tests need neither.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use mdvault::ErrorCode;
use mdvault::api::guard::Access;
use mdvault::api::rest::{OPENAPI, PUBLIC as PUBLIC_ROUTES, ROUTES};
use serde_json::{Value, json};

use crate::common::{Reply, Server, TempVault, http_call};

/// The methods an OpenAPI 3.1 path item can hold.
const OPENAPI_METHODS: &[&str] =
    &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Methods probed on every documented path; those a path does not document must be 405.
/// `HEAD` is left out: it is answered wherever `GET` is, and the document says so.
const PROBED_METHODS: &[&str] = &["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS", "TRACE"];

/// Codes no REST route answers: they are met over MCP only (`out_of_scope`, from
/// `/mcp/only/<scope>` tool calls).
/// A new code must either be documented on some operation or be added here, deliberately.
const NOT_ANSWERED_BY_REST: &[&str] = &["out_of_scope"];

fn openapi_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openapi.yaml")
}

fn document() -> Value {
    let text = std::fs::read_to_string(openapi_path()).unwrap();
    serde_saphyr::from_str::<Value>(&text).unwrap_or_else(|e| panic!("openapi.yaml: {e}"))
}

/// Follows `$ref` (local JSON pointers only) until the value is not a reference.
fn resolve<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(r) = v.get("$ref").and_then(Value::as_str) else { return v };
        let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("non-local $ref {r}"));
        v = doc.pointer(pointer).unwrap_or_else(|| panic!("dangling $ref {r}"));
    }
    panic!("a $ref cycle at {v}");
}

fn all_codes() -> BTreeSet<String> {
    ErrorCode::ALL.iter().map(|c| c.as_str().to_string()).collect()
}

fn status_of(code: &str) -> u16 {
    ErrorCode::ALL
        .iter()
        .find(|c| c.as_str() == code)
        .unwrap_or_else(|| panic!("the document names the code {code}, which src/error.rs has not"))
        .http_status()
}

/// Every documented operation: (path, method, operation object).
fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let item = resolve(doc, item);
        for (key, op) in item.as_object().unwrap() {
            if OPENAPI_METHODS.contains(&key.as_str()) {
                out.push((path.clone(), key.clone(), op));
            }
        }
    }
    out
}

/// True for the MCP routes, whose protocol refusals are the MCP library's, not `Error`.
fn is_mcp(path: &str) -> bool {
    path == "/mcp" || path.starts_with("/mcp/")
}

/// The codes an `Error`-shaped schema admits: `None` when the schema is not `Error`-based.
/// `Error` itself admits every code; `allOf: [Error, {properties: {code: {enum}}}]` admits the
/// enum; `anyOf`/`oneOf` admit the union of their `Error`-based branches.
fn error_codes(doc: &Value, schema: &Value) -> Option<BTreeSet<String>> {
    let is_error_ref =
        |s: &Value| s.get("$ref").and_then(Value::as_str) == Some("#/components/schemas/Error");
    if is_error_ref(schema) {
        return Some(all_codes());
    }
    let schema = resolve(doc, schema);
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array)
        && parts.iter().any(is_error_ref)
    {
        let mut codes = all_codes();
        for part in parts.iter().filter(|p| !is_error_ref(p)) {
            let part = resolve(doc, part);
            if let Some(list) = part.pointer("/properties/code/enum").and_then(Value::as_array) {
                let listed: BTreeSet<String> = list
                    .iter()
                    .map(|c| c.as_str().expect("a code is a string").to_string())
                    .collect();
                codes = codes.intersection(&listed).cloned().collect();
                for c in &listed {
                    assert!(all_codes().contains(c), "the document narrows to {c}, not a code");
                }
            }
        }
        return Some(codes);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let found: Vec<BTreeSet<String>> =
                branches.iter().filter_map(|b| error_codes(doc, b)).collect();
            if !found.is_empty() {
                return Some(found.into_iter().flatten().collect());
            }
        }
    }
    None
}

#[test]
fn the_documented_routes_are_the_route_table() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, method, _) in operations(&doc) {
        documented.entry(path).or_default().insert(method);
    }
    let mut table: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, methods) in ROUTES {
        let set = table.entry(path.to_string()).or_default();
        for m in *methods {
            assert!(set.insert(m.to_string()), "ROUTES names {m} {path} twice");
        }
    }
    assert_eq!(table.len(), ROUTES.len(), "ROUTES names a path twice");
    assert_eq!(documented, table, "openapi.yaml (left) and ROUTES (right) disagree");

    // Every operation is named, and uniquely.
    let mut ids = BTreeSet::new();
    for (path, method, op) in operations(&doc) {
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(ids.insert(id.to_string()), "operationId {id} is used twice");
    }

    assert!(
        !documented.values().flatten().any(|m| m == "head"),
        "HEAD is implicit, not documented"
    );
}

/// The paths the router serves without the key for GET and HEAD (with one, `/` says so): its
/// public list's `Access::Read` routes.
fn public_reads() -> Vec<&'static str> {
    PUBLIC_ROUTES.iter().filter(|(_, a)| *a == Access::Read).map(|(p, _)| *p).collect()
}

/// The router's probes: any method, no key (`/healthz`).
fn probes() -> Vec<&'static str> {
    PUBLIC_ROUTES.iter().filter(|(_, a)| *a == Access::Probe).map(|(p, _)| *p).collect()
}

/// Operations only a server with `server.tls` answers with success; this plain-HTTP server
/// answers them 404 `not_found` (as documented), and `tls.rs` drives them over HTTPS.
/// The plugin's routes that need the Obsidian app: documented, and always refused (501).
const APP_ONLY: &[&str] = &["/active/", "/commands/", "/commands/{commandId}/", "/open/{path}"];

const TLS_ONLY: &[&str] = &["/obsidian-local-rest-api.crt"];

#[test]
fn the_servers_and_security_are_as_served() {
    let doc = document();
    let urls: Vec<&str> =
        doc["servers"].as_array().unwrap().iter().map(|s| s["url"].as_str().unwrap()).collect();
    assert_eq!(urls, ["/", "/v/{vault}"]);
    assert!(doc.pointer("/servers/1/variables/vault/default").is_some());
    assert_eq!(doc["security"], json!([{"bearerAuth": []}]));
    let scheme = &doc["components"]["securitySchemes"]["bearerAuth"];
    assert_eq!(
        (scheme["type"].as_str(), scheme["scheme"].as_str()),
        (Some("http"), Some("bearer"))
    );
    let (probes, public) = (probes(), public_reads());
    assert_eq!(probes, ["/healthz"], "the router's probes");
    for (path, method, op) in operations(&doc) {
        let open = probes.contains(&path.as_str());
        assert_eq!(
            op.get("security") == Some(&json!([])),
            open,
            "{method} {path}: only {probes:?} are documented as needing no auth"
        );
        // The Local REST API's status object and this document take the key but do not need it.
        let public = public.contains(&path.as_str()) && method == "get";
        assert_eq!(
            op.get("security") == Some(&json!([{}, {"bearerAuth": []}])),
            public,
            "{method} {path}: only GET {public:?} are documented as public with an optional key"
        );
    }
}

#[test]
fn the_error_codes_and_their_statuses_match_error_rs() {
    let doc = document();
    let error = &doc["components"]["schemas"]["Error"];
    assert_eq!(error["required"], json!(["code", "error", "errorCode", "message"]));
    let listed: Vec<&str> = error["properties"]["code"]["enum"]
        .as_array()
        .expect("Error.code has an enum")
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let unique: BTreeSet<String> = listed.iter().map(|c| c.to_string()).collect();
    assert_eq!(unique.len(), listed.len(), "Error.code lists a code twice");
    assert_eq!(unique, all_codes(), "Error.code (left) and ErrorCode::ALL (right) disagree");

    let mut answered: BTreeSet<String> = BTreeSet::new();
    for (path, method, op) in operations(&doc) {
        let responses =
            op["responses"].as_object().unwrap_or_else(|| panic!("{method} {path}: no responses"));
        for (status, response) in responses {
            let response = resolve(&doc, response);
            let Ok(status) = status.parse::<u16>() else {
                panic!(
                    "{method} {path}: response {status} is not a single status; name each status"
                )
            };
            let mut shapes = 0;
            for (media, body) in
                response.get("content").and_then(Value::as_object).into_iter().flatten()
            {
                let Some(schema) = body.get("schema") else { continue };
                let Some(codes) = error_codes(&doc, schema) else { continue };
                shapes += 1;
                assert!(
                    !codes.is_empty(),
                    "{method} {path} {status} {media}: an Error with no code"
                );
                for code in &codes {
                    assert_eq!(
                        status_of(code),
                        status,
                        "{method} {path}: the {status} response names {code}, which answers {}",
                        status_of(code)
                    );
                }
                answered.extend(codes);
            }
            // Every REST refusal is an Error (the readiness report is the one 503 that is not;
            // the MCP library answers its own protocol refusals).
            let refusal = status >= 400;
            let own_shape = is_mcp(&path) || (path == "/readyz" && status == 503);
            if refusal && !own_shape {
                assert_eq!(shapes, 1, "{method} {path} {status}: a refusal must be one Error body");
            }
        }

        // The gate's and router's refusals can meet every authenticated route; a malformed
        // head (400) and a refused Host or Origin (403) meet every route, healthz included.
        let has = |s: &str| responses.contains_key(s);
        if path == "/healthz" {
            assert!(
                has("400") && has("403") && has("405"),
                "{method} {path}: the Host/Origin checks and 405 apply"
            );
        } else {
            for s in ["400", "401", "403", "404", "405", "413"] {
                assert!(has(s), "{method} {path} does not document {s}");
            }
        }
    }

    let unanswered: BTreeSet<String> = all_codes().difference(&answered).cloned().collect();
    let expected: BTreeSet<String> = NOT_ANSWERED_BY_REST.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        unanswered, expected,
        "codes no documented operation answers (left) are not the codes REST never answers \
         (right): document the new code on the operations that produce it, or list it in \
         NOT_ANSWERED_BY_REST"
    );
}

/// One request for a documented operation, with what it needs to succeed on the fixture.
struct Call {
    path: String,
    method: &'static str,
    /// The operation's path as documented, to find it in the document.
    template: &'static str,
    headers: Vec<(&'static str, &'static str)>,
    body: Option<String>,
}

fn call(
    template: &'static str,
    method: &'static str,
    path: &str,
    headers: &[(&'static str, &'static str)],
    body: Option<&str>,
) -> Call {
    Call {
        path: path.to_string(),
        method,
        template,
        headers: headers.to_vec(),
        body: body.map(str::to_string),
    }
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

/// The dated periodic note route, as documented.
const DATED: &str = "/periodic/{period}/{year}/{month}/{day}/";

/// A documented path template made concrete for probing (a note, a scope, a daily note).
fn concrete(template: &str) -> String {
    template
        .replace("{path}", "Home/Boiler.md")
        .replace("{scope}", "Home")
        .replace("{period}", "daily")
        .replace("{year}/{month}/{day}", "2026/1/2")
}

/// A request for every documented operation, in an order in which each one succeeds on a copy
/// of the fixture vault: notes are made before they are patched, moved and deleted. `prefix`
/// is `""` for the default vault or `/v/<name>`; `tag` keeps the notes of two runs apart.
fn calls(prefix: &str, tag: &str) -> Vec<Call> {
    let note = format!("Inbox/Contract%20{tag}.md");
    let moved = format!("Inbox/Contract%20{tag}%20moved.md");
    let folder = format!("Contract%20{tag}/Sub");
    let mcp_body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).to_string();
    let mcp_headers = [
        JSON,
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let p = |s: &str| format!("{prefix}{s}");
    vec![
        call("/", "get", &p("/"), &[], None),
        call("/tags/", "get", &p("/tags/"), &[], None),
        call(
            "/tags/rename",
            "post",
            &p("/tags/rename"),
            &[JSON],
            Some(r#"{"from": "heating", "to": "warmth", "dry_run": true}"#),
        ),
        call("/search/simple/", "post", &p("/search/simple/?query=boiler"), &[], None),
        // The fixture has no Obsidian settings, so daily notes are Obsidian's defaults.
        call("/periodic/{period}/", "put", &p("/periodic/daily/"), &[], Some("# Today\n")),
        call("/periodic/{period}/", "get", &p("/periodic/daily/"), &[], None),
        call("/periodic/{period}/", "post", &p("/periodic/daily/"), &[], Some("more\n")),
        call(
            "/periodic/{period}/",
            "patch",
            &p("/periodic/daily/"),
            &[("Target-Type", "body")],
            Some("replaced\n"),
        ),
        call("/periodic/{period}/", "delete", &p("/periodic/daily/"), &[], None),
        call(DATED, "put", &p("/periodic/daily/2026/1/2/"), &[], Some("# Jan 2\n")),
        call(DATED, "get", &p("/periodic/daily/2026/1/2/"), &[], None),
        call(DATED, "post", &p("/periodic/daily/2026/1/2/"), &[], Some("more\n")),
        call(
            DATED,
            "patch",
            &p("/periodic/daily/2026/1/2/"),
            &[("Target-Type", "body")],
            Some("replaced\n"),
        ),
        call(DATED, "delete", &p("/periodic/daily/2026/1/2/"), &[], None),
        call(
            "/search/",
            "post",
            &p("/search/"),
            &[("Content-Type", "application/vnd.olrapi.jsonlogic+json")],
            Some(r#"{"glob": ["Home/*.md", {"var": "path"}]}"#),
        ),
        call("/healthz", "get", &p("/healthz"), &[], None),
        call("/readyz", "get", &p("/readyz"), &[], None),
        call("/openapi.yaml", "get", &p("/openapi.yaml"), &[], None),
        call("/vault/", "get", &p("/vault/"), &[], None),
        call("/vault/{path}", "get", &p("/vault/Home/Boiler.md"), &[], None),
        call(
            "/vault/{path}",
            "put",
            &p(&format!("/vault/{note}")),
            &[],
            Some("# Contract\n\nfirst\n"),
        ),
        call("/vault/{path}", "post", &p(&format!("/vault/{note}")), &[], Some("second\n")),
        call(
            "/vault/{path}",
            "patch",
            &p(&format!("/vault/{note}")),
            &[
                ("Target-Type", "heading"),
                ("Operation", "append"),
                ("Target", "Contract"),
                ("Markdown-Patch-Version", "1"),
            ],
            Some("third\n"),
        ),
        call(
            "/move/{path}",
            "post",
            &p(&format!("/move/{note}")),
            &[JSON],
            Some(&json!({"destination": format!("Inbox/Contract {tag} moved.md")}).to_string()),
        ),
        call("/vault/{path}", "delete", &p(&format!("/vault/{moved}")), &[], None),
        call("/folder/{path}", "get", &p("/folder/Home/Utilities"), &[], None),
        call("/folder/{path}", "put", &p(&format!("/folder/{folder}")), &[], None),
        call("/folder/{path}", "delete", &p(&format!("/folder/{folder}")), &[], None),
        call("/search", "get", &p("/search?q=boiler%20pressure&k=3"), &[], None),
        call(
            "/search",
            "post",
            &p("/search"),
            &[JSON],
            Some(r#"{"q": "boiler pressure", "k": 3}"#),
        ),
        call("/reindex", "post", &p("/reindex"), &[], None),
        call("/frontmatter", "get", &p("/frontmatter?key=type&value=asset&dir=Home"), &[], None),
        call("/expiries", "get", &p("/expiries?within=90&untracked=1"), &[], None),
        call("/status", "get", &p("/status"), &[], None),
        call("/audit", "get", &p("/audit?client=owner&path=Inbox&limit=5"), &[], None),
        call("/callouts", "get", &p("/callouts"), &[], None),
        call("/callouts", "post", &p("/callouts?dir=Tech"), &[], None),
        call("/maintenance", "get", &p("/maintenance"), &[], None),
        call("/maintenance", "post", &p("/maintenance"), &[], None),
        call("/maintenance/checks", "get", &p("/maintenance/checks"), &[], None),
        call("/grep", "get", &p("/grep?pattern=boiler&ignore_case&limit=5"), &[], None),
        call("/links/{path}", "get", &p("/links/Home/Boiler.md"), &[], None),
        call("/mcp", "post", &p("/mcp"), &mcp_headers, Some(&mcp_body)),
        call("/mcp/", "post", &p("/mcp/"), &mcp_headers, Some(&mcp_body)),
        call(
            "/mcp/only/{scope}",
            "post",
            &p("/mcp/only/Inbox/Scratch.md"),
            &mcp_headers,
            Some(&mcp_body),
        ),
    ]
}

fn send(s: &Server, c: &Call) -> Reply {
    s.call(
        &c.method.to_ascii_uppercase(),
        &c.path,
        &c.headers,
        c.body.as_deref().map(str::as_bytes),
    )
}

/// The router's own "no such route" answer, as opposed to a missing note.
fn is_no_route(r: &Reply) -> bool {
    r.status == 404 && r.body.contains("there is no route")
}

/// The refusal code when the body is a JSON object with a `code`.
fn code_of(r: &Reply) -> Option<String> {
    serde_json::from_str::<Value>(&r.body).ok()?.get("code")?.as_str().map(str::to_string)
}

/// The media type of a reply, without parameters.
fn media_type(r: &Reply) -> Option<String> {
    r.header("content-type").map(|c| c.split(';').next().unwrap().trim().to_ascii_lowercase())
}

/// Checks a live reply against the operation's documented statuses and media types.
fn conforms(doc: &Value, c: &Call, r: &Reply) {
    let op = &doc["paths"][c.template][c.method];
    let what = format!("{} {} -> {}: {}", c.method.to_ascii_uppercase(), c.path, r.status, r.body);
    let response = op["responses"]
        .get(r.status.to_string())
        .unwrap_or_else(|| panic!("undocumented status: {what}"));
    let response = resolve(doc, response);
    if let (Some(content), Some(media)) = (response.get("content"), media_type(r)) {
        assert!(content.get(&media).is_some(), "undocumented media type {media}: {what}");
    }
}

#[test]
fn a_live_server_routes_exactly_the_documented_operations() {
    let doc = document();
    let vault = TempVault::fixture();
    let s = Server::start(&[format!("fixture={}", vault.root().display())], &[]);

    // The document served is the file, byte for byte.
    let file = std::fs::read_to_string(openapi_path()).unwrap();
    assert_eq!(OPENAPI, file, "the binary embeds an older openapi.yaml; rebuild");
    let served = s.call("GET", "/openapi.yaml", &[], None);
    assert_eq!(served.status, 200);
    assert_eq!(served.body, file, "GET /openapi.yaml is not openapi.yaml");
    assert_eq!(media_type(&served).as_deref(), Some("application/yaml"));

    // Without the key: /healthz answers, everything else (routes or not) is 401.
    let open = http_call(&s.base, "GET", "/healthz", None, &[], None);
    assert_eq!((open.status, open.body.as_str()), (200, "ok\n"));
    let mut anonymous: Vec<(String, String)> = operations(&doc)
        .into_iter()
        .filter(|(path, _, _)| path != "/healthz" && !public_reads().contains(&path.as_str()))
        .map(|(path, method, _)| (concrete(&path), method.to_ascii_uppercase()))
        .collect();
    for public in public_reads() {
        let r = http_call(&s.base, "GET", public, None, &[], None);
        let want = if TLS_ONLY.contains(&public) { 404 } else { 200 };
        assert_eq!(r.status, want, "GET {public} without a key: {}", r.body);
        // Only GET is public: anything else still needs the key.
        let r = http_call(&s.base, "POST", public, None, &[], None);
        assert_eq!(r.status, 401, "POST {public} without a key: {}", r.body);
    }
    let status = http_call(&s.base, "GET", "/", None, &[], None).json();
    assert_eq!(status["authenticated"], false);
    assert_eq!(s.call("GET", "/", &[], None).json()["authenticated"], true);
    for path in ["/nowhere", "/v/fixture/vault/Home/Boiler.md", "/v/unknown/readyz", "/healthz/"] {
        anonymous.push((path.to_string(), "GET".to_string()));
    }
    for (path, method) in &anonymous {
        let r = http_call(&s.base, method, path, None, &[], None);
        assert_eq!(
            (r.status, r.code()),
            (401, "unauthorized".into()),
            "{method} {path} without a key: {}",
            r.body
        );
        assert!(
            r.header("www-authenticate").is_some_and(|v| v.starts_with("Bearer")),
            "{method} {path}"
        );
        let wrong = http_call(&s.base, method, path, Some("not-the-key"), &[], None);
        assert_eq!(wrong.status, 401, "{method} {path} with a wrong key: {}", wrong.body);
    }

    // Every documented operation is routed and, on the fixture, succeeds; at `/` and under
    // the vault's prefix alike.
    for (prefix, tag) in [("", "root"), ("/v/fixture", "named")] {
        let plan = calls(prefix, tag);
        let planned: BTreeSet<(String, String)> =
            plan.iter().map(|c| (c.template.to_string(), c.method.to_string())).collect();
        let documented: BTreeSet<(String, String)> = operations(&doc)
            .into_iter()
            .filter(|(p, _, _)| !TLS_ONLY.contains(&p.as_str()) && !APP_ONLY.contains(&p.as_str()))
            .map(|(p, m, _)| (p, m))
            .collect();
        assert_eq!(planned, documented, "the live plan must cover every documented operation");
        for c in &plan {
            let r = send(&s, c);
            let what =
                format!("{} {} -> {} {}", c.method.to_ascii_uppercase(), c.path, r.status, r.body);
            assert!(!is_no_route(&r) && r.status != 405, "not routed: {what}");
            assert!((200..300).contains(&r.status), "did not succeed: {what}");
            conforms(&doc, c, &r);
        }
    }

    // A few refusals the document promises, answered as documented.
    for c in [
        call("/vault/{path}", "get", "/vault/Home/Nope.md", &[], None),
        call("/vault/{path}", "get", "/vault/Home/Boiler.md?section=Nope", &[], None),
        call("/vault/{path}", "put", "/vault/..%2F..%2Fescape.md", &[], Some("x")),
        call("/vault/{path}", "delete", "/vault/Home/Boiler.md", &[("If-Match", "\"0000\"")], None),
        call("/folder/{path}", "delete", "/folder/Home", &[], None),
        call("/search", "get", "/search?q=%20", &[], None),
        call("/search", "get", "/v/unknown/search?q=boiler", &[], None),
        call("/obsidian-local-rest-api.crt", "get", "/obsidian-local-rest-api.crt", &[], None),
        call("/periodic/{period}/", "get", "/periodic/hourly/", &[], None),
        call("/periodic/{period}/", "put", "/periodic/weekly/", &[], Some("x")),
        call(DATED, "put", "/periodic/daily/2026/2/30/", &[], Some("x")),
        // The routes that need the Obsidian app never succeed: each is a documented 501.
        call("/active/", "get", "/active/", &[], None),
        call("/active/", "put", "/active/", &[], Some("x")),
        call("/active/", "post", "/active/", &[], Some("x")),
        call("/active/", "patch", "/active/", &[], Some("x")),
        call("/active/", "delete", "/active/", &[], None),
        call("/commands/", "get", "/commands/", &[], None),
        call("/commands/{commandId}/", "post", "/commands/app%3Areload/", &[], None),
        call("/open/{path}", "post", "/open/Home/Boiler.md", &[], None),
    ] {
        let r = send(&s, &c);
        assert!(r.status >= 400, "{} {} succeeded: {}", c.method, c.path, r.body);
        assert_eq!(status_of(&r.code()), r.status, "{} {}: {}", c.method, c.path, r.body);
        conforms(&doc, &c, &r);
    }

    // HEAD is answered wherever GET is, though the document leaves it implicit.
    assert_eq!(s.call("HEAD", "/readyz", &[], None).status, 200);

    // An unknown route and an unknown vault are 404 `not_found`.
    for path in ["/nowhere".to_string(), "/v/unknown/readyz".into()] {
        let r = s.call("GET", &path, &[], None);
        assert_eq!((r.status, r.code()), (404, "not_found".into()), "GET {path}: {}", r.body);
    }

    // Every other method on a documented path is 405, with an Allow that lists the path's
    // methods (HEAD beside GET, and MOVE and COPY on notes, may be added; nothing else). The MCP
    // library answers its own 405 in plain text, so only the REST routes must say
    // `method_not_allowed`.
    let mut by_path: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, method, _) in operations(&doc) {
        by_path.entry(path).or_default().insert(method.to_ascii_uppercase());
    }
    let mut failures = Vec::new();
    for (template, methods) in &by_path {
        let path = concrete(template);
        let path = if template == "/folder/{path}" { "/folder/Home".to_string() } else { path };
        for method in PROBED_METHODS.iter().filter(|m| !methods.contains(**m)) {
            let r = s.call(method, &path, &[], None);
            let allow: BTreeSet<String> = r
                .header("allow")
                .unwrap_or("")
                .split(',')
                .map(|m| m.trim().to_ascii_uppercase())
                .filter(|m| !m.is_empty())
                .collect();
            let extra: BTreeSet<String> = allow
                .difference(methods)
                .filter(|m| {
                    let head = *m == "HEAD" && methods.contains("GET");
                    let mv = matches!(m.as_str(), "MOVE" | "COPY") && template == "/vault/{path}";
                    !head && !mv
                })
                .cloned()
                .collect();
            let code_ok = is_mcp(template) || code_of(&r).as_deref() == Some("method_not_allowed");
            if r.status != 405 || !code_ok || !allow.is_superset(methods) || !extra.is_empty() {
                failures.push(format!(
                    "{method} {path}: {} allow={:?} (documented {:?}) {}",
                    r.status,
                    r.header("allow"),
                    methods,
                    r.body.chars().take(160).collect::<String>()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "undocumented methods not refused as 405:\n{}",
        failures.join("\n")
    );
}
