//! The MCP protocol revisions the server negotiates, over streamable HTTP and over stdio.
//!
//! rmcp 3.11 knows five revisions. The four with an `initialize` handshake (2024-11-05 to
//! 2025-11-25) are echoed back when a client asks for them; 2026-07-28 has no handshake (its
//! requests carry their lifecycle in `_meta`), so an `initialize` asking for it, or for a
//! revision the server does not know, gets the newest one that has a handshake. Over HTTP the
//! 2026-07-28 requests also work stateless, without any `initialize`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{Server, TempVault};

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// The newest revision with an `initialize` handshake: the answer to any other request.
const NEWEST_WITH_HANDSHAKE: &str = "2025-11-25";

/// Each revision a client may ask `initialize` for, and the one the server answers with.
const NEGOTIATED: &[(&str, &str)] = &[
    ("2024-11-05", "2024-11-05"),
    ("2025-03-26", "2025-03-26"),
    ("2025-06-18", "2025-06-18"),
    ("2025-11-25", "2025-11-25"),
    ("2026-07-28", NEWEST_WITH_HANDSHAKE),
    ("2024-01-01", NEWEST_WITH_HANDSHAKE),
    ("2099-12-31", NEWEST_WITH_HANDSHAKE),
];

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "mcp-versions-test", "version": "1"}}})
}

/// One JSON-RPC request POSTed to `/mcp` with these extra headers; its JSON answer (200).
fn post(s: &Server, headers: &[(&str, &str)], body: &Value) -> Value {
    let (status, answer) = post_answer(s, headers, body);
    assert_eq!(status, 200, "{body}: {answer}");
    answer
}

fn post_answer(s: &Server, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    let r = s.call("POST", "/mcp", &all, Some(body.to_string().as_bytes()));
    (r.status, r.json())
}

fn tool_names(list: &Value) -> Vec<String> {
    let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("no tools: {list}"));
    tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn every_revision_an_http_client_asks_for_is_echoed_or_answered_with_the_newest_handshake_one() {
    let v = TempVault::fixture();
    let s = Server::start(&[format!("fixture={}", v.root().display())], HASHING);
    for &(asked, answered) in NEGOTIATED {
        let init = post(&s, &[], &initialize(asked));
        assert_eq!(init["result"]["protocolVersion"], answered, "asked {asked}: {init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "mdvault", "{init}");
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        let list = post(&s, &[("MCP-Protocol-Version", answered)], &list);
        assert!(tool_names(&list).iter().any(|n| n == "vault_search"), "asked {asked}: {list}");
    }
}

#[test]
fn a_stateless_2026_07_28_client_lists_tools_without_initialize_and_discovers_every_revision() {
    let v = TempVault::fixture();
    let s = Server::start(&[format!("fixture={}", v.root().display())], HASHING);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-versions-test", "version": "1"}});
    let request = |id: u64, method: &str| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta}});
    let headers = |method| [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)];

    let list = post(&s, &headers("tools/list"), &request(1, "tools/list"));
    assert!(tool_names(&list).iter().any(|n| n == "vault_search"), "{list}");
    let found = post(&s, &headers("server/discover"), &request(2, "server/discover"));
    assert_eq!(
        found["result"]["supportedVersions"],
        json!(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]),
        "{found}"
    );
    // A request that declares 2026-07-28 must carry that revision's lifecycle in `_meta`.
    let bare = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                      "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let (status, refused) = post_answer(&s, &headers("tools/list"), &bare);
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["error"]["message"].as_str().unwrap_or("").contains("clientCapabilities"),
        "{refused}"
    );
}

#[test]
fn every_revision_a_stdio_client_asks_for_is_echoed_or_answered_with_the_newest_handshake_one() {
    let v = TempVault::fixture();
    let (data, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for &(asked, answered) in NEGOTIATED {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mdvault"))
            .args(["mcp", "--vault", &format!("fixture={}", v.root().display())])
            .arg("--data-dir")
            .arg(data.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("MDVAULT_CONFIG", "")
            .envs(HASHING.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let mut ask = |msg: Value| -> Value {
            writeln!(input, "{msg}").unwrap();
            input.flush().unwrap();
            if msg.get("id").is_none() {
                return Value::Null; // a notification: nothing comes back
            }
            loop {
                let mut line = String::new();
                assert!(output.read_line(&mut line).unwrap() > 0, "the stdio server ended");
                let answer: Value = serde_json::from_str(&line).unwrap();
                if answer["id"] == msg["id"] {
                    return answer;
                }
            }
        };
        let init = ask(initialize(asked));
        assert_eq!(init["result"]["protocolVersion"], answered, "asked {asked}: {init}");
        ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let list = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}));
        assert!(tool_names(&list).iter().any(|n| n == "vault_search"), "asked {asked}: {list}");
        drop(input);
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
