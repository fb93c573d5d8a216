//! Clients, grants and static tokens over the real binary: tokens made, listed and revoked
//! with `mdvault token`, and a running server letting each client do exactly what its grant
//! says over REST and MCP: read-only, folder-limited (`Inbox/` allowed, `Private/` and
//! `Inbox/Secret/` denied), vault-limited and tool-limited. A refused call leaves both vaults
//! byte-identical; a denied path is never named by a read, a listing, a search, grep or links.

use serde_json::{Value, json};

use crate::common::{Reply, Server, TempVault, http_call, mdvault_with, stderr, stdout};

/// The model-free embedder, and the generated `index.md` on (it lists every note).
const SERVER_ENV: &[(&str, &str)] =
    &[("MDVAULT_EMBEDDING__BACKEND", "hashing"), ("MDVAULT_INDEX__INDEX_MD", "true")];

/// The word every note holds, so every search and grep could find every note.
const WORD: &str = "zebracode";

struct Setup {
    home: TempVault,
    work: TempVault,
    server: Server,
}

fn setup() -> Setup {
    let home = TempVault::empty();
    home.write("Inbox/a.md", &format!("# A\n\n{WORD} in the inbox.\n"));
    home.write("Inbox/Secret/s.md", &format!("# S\n\n{WORD} secret inside the inbox.\n"));
    home.write("Private/p.md", &format!("# P\n\n{WORD} private, links [[a]].\n"));
    home.write("Notes/n.md", &format!("# N\n\n{WORD} note, links [[a]].\n"));
    // Many hidden matches and few visible ones: a search's `k` must still be filled from the
    // visible ones, so the grant's filter has to come before ranking.
    for i in 0..40 {
        home.write(&format!("Private/many{i}.md"), &format!("# M{i}\n\n{WORD} {WORD} {WORD}.\n"));
    }
    for i in 0..3 {
        home.write(&format!("Inbox/more{i}.md"), &format!("# More {i}\n\n{WORD} too.\n"));
    }
    let work = TempVault::empty();
    work.write("w.md", &format!("# W\n\n{WORD} at work.\n"));
    let vaults =
        [format!("home={}", home.root().display()), format!("work={}", work.root().display())];
    let server = Server::start(&vaults, SERVER_ENV);
    Setup { home, work, server }
}

impl Setup {
    /// `mdvault token ARGS` on the server's data directory and vaults, with its key.
    fn token(&self, args: &[&str]) -> std::process::Output {
        let data = self.server.data.path().to_str().unwrap().to_string();
        let vaults =
            format!("home={},work={}", self.home.root().display(), self.work.root().display());
        let mut all = vec!["token"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--data-dir", &data]);
        mdvault_with(
            &all,
            &[("MDVAULT_API_KEY", crate::common::KEY), ("MDVAULT_VAULTS", &vaults)],
            None,
        )
    }

    /// Makes a client and returns its token.
    fn create(&self, args: &[&str]) -> String {
        let mut all = vec!["create"];
        all.extend_from_slice(args);
        all.push("--json");
        let o = self.token(&all);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["token"].as_str().unwrap().to_string()
    }

    fn call(&self, token: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
        http_call(&self.server.base, method, path, Some(token), &[], body.map(str::as_bytes))
    }

    /// Every file of both vaults.
    fn snapshot(&self) -> Value {
        let both = [&self.home, &self.work].map(|v| {
            v.snapshot().into_iter().map(|(k, b)| (k, json!(b))).collect::<serde_json::Map<_, _>>()
        });
        json!(both)
    }

    /// A refused call: its status and code, and nothing changed on disk.
    fn refused(
        &self,
        token: &str,
        method: &str,
        path: &str,
        body: Option<&str>,
        want: (u16, &str),
    ) {
        let before = self.snapshot();
        let r = self.call(token, method, path, body);
        assert_eq!((r.status, r.code().as_str()), want, "{method} {path}: {}", r.body);
        assert_eq!(self.snapshot(), before, "{method} {path} changed a vault");
    }

    fn mcp(&self, token: &str, path: &str, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let r = http_call(
            &self.server.base,
            "POST",
            path,
            Some(token),
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            Some(body.to_string().as_bytes()),
        );
        assert_eq!(r.status, 200, "{path} {method}: {}", r.body);
        let text = r
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| d.contains("\"id\""))
            .map_or_else(|| r.body.clone(), str::to_string);
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {}", r.body));
        v.get("result").cloned().unwrap_or(v)
    }

    /// One tool call: (is_error, text).
    fn tool(&self, token: &str, name: &str, args: Value) -> (bool, String) {
        self.tool_at(token, "/mcp", name, args)
    }

    /// One tool call at an MCP endpoint (`/mcp/only/...`, `/v/<name>/mcp`): (is_error, text).
    fn tool_at(&self, token: &str, at: &str, name: &str, args: Value) -> (bool, String) {
        let r = self.mcp(token, at, "tools/call", json!({"name": name, "arguments": args}));
        let text = r["content"]
            .as_array()
            .map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_else(|| panic!("no content: {r}"));
        (r["isError"].as_bool().unwrap_or(false), text)
    }

    /// A tool call that must be refused with `code` and change nothing.
    fn tool_refused(&self, token: &str, name: &str, args: Value, code: &str) {
        let before = self.snapshot();
        let (err, text) = self.tool(token, name, args);
        assert!(err && text.contains(&format!("({code})")), "{name}: {text}");
        assert_eq!(self.snapshot(), before, "{name} changed a vault");
    }
}

#[test]
fn a_read_only_client_reads_and_searches_and_every_write_is_refused_naming_the_right() {
    let s = setup();
    let ro = s.create(&["ro", "--read-only"]);
    assert_eq!(s.call(&ro, "GET", "/vault/Inbox/a.md", None).status, 200);
    assert_eq!(s.call(&ro, "GET", &format!("/search?q={WORD}"), None).status, 200);
    let (err, _) = s.tool(&ro, "vault_read", json!({"path": "Private/p.md"}));
    assert!(!err);
    let r = s.call(&ro, "PUT", "/vault/Inbox/new.md", Some("x"));
    assert_eq!((r.status, r.code().as_str()), (403, "not_granted"), "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("read-only"), "{}", r.body);
    s.refused(&ro, "POST", "/vault/Inbox/a.md", Some("more"), (403, "not_granted"));
    s.refused(&ro, "DELETE", "/vault/Notes/n.md", None, (403, "not_granted"));
    s.refused(&ro, "PUT", "/folder/New", None, (403, "not_granted"));
    s.refused(&ro, "DELETE", "/folder/Notes", None, (403, "not_granted"));
    let r = s.call(&ro, "POST", "/reindex", None);
    assert_eq!((r.status, r.code().as_str()), (403, "not_granted"), "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("a re-index"), "{}", r.body);
    for (name, args) in [
        ("vault_write", json!({"path": "x.md", "content": "x"})),
        ("vault_append", json!({"path": "Inbox/a.md", "content": "x"})),
        ("vault_delete", json!({"path": "Inbox/a.md"})),
        ("vault_move", json!({"source": "Inbox/a.md", "destination": "b.md"})),
        ("vault_tag_rename", json!({"from": "a", "to": "b"})),
        ("vault_reindex", json!({})),
    ] {
        s.tool_refused(&ro, name, args, "not_granted");
    }
}

#[test]
fn a_folder_limited_client_sees_and_writes_only_its_folders_and_denied_paths_are_not_there() {
    let s = setup();
    let inbox =
        s.create(&["inbox", "--allow", "Inbox/", "--deny", "Private/", "--deny", "Inbox/Secret"]);
    assert_eq!(s.call(&inbox, "GET", "/vault/Inbox/a.md", None).status, 200);
    for path in [
        "Private/p.md",
        "Inbox/Secret/s.md",
        "Notes/n.md",
        "private/P.md",
        "./Private/../Private/p.md",
    ] {
        s.refused(&inbox, "GET", &format!("/vault/{path}"), None, (404, "not_found"));
        s.refused(&inbox, "PUT", &format!("/vault/{path}"), Some("x"), (404, "not_found"));
        s.refused(&inbox, "DELETE", &format!("/vault/{path}"), None, (404, "not_found"));
    }
    // A note's name does not lead into a denied folder either.
    let (err, text) = s.tool(&inbox, "vault_read", json!({"path": "p"}));
    assert!(err && text.contains("(not_found)") && !text.contains("Private"), "{text}");
    // Nor does a missing path's refusal suggest one as the nearest.
    for (missing, code) in [("Inbox/p.md", "not_found"), ("Inbox/P", "unsupported_suffix")] {
        let (err, text) = s.tool(&inbox, "vault_read", json!({"path": missing}));
        assert!(err && text.contains(code) && !text.contains("Private"), "{text}");
    }
    s.tool_refused(&inbox, "vault_append", json!({"path": "p", "content": "x"}), "not_found");
    // The URL's write scope narrows a grant further and never widens it.
    let before = s.snapshot();
    let (err, text) = s.tool_at(
        &inbox,
        "/mcp/only/Notes",
        "vault_write",
        json!({"path": "Notes/x.md", "content": "x"}),
    );
    assert!(err && text.contains("(not_found)"), "{text}");
    let (err, text) = s.tool_at(
        &inbox,
        "/mcp/only/Inbox/a.md",
        "vault_write",
        json!({"path": "Inbox/b.md", "content": "x"}),
    );
    assert!(err && text.contains("(out_of_scope)"), "{text}");
    assert_eq!(s.snapshot(), before);
    s.tool_refused(
        &inbox,
        "vault_delete_folder",
        json!({"path": "Inbox", "recursive": true}),
        "not_granted",
    );
    s.tool_refused(
        &inbox,
        "vault_move",
        json!({"source": "Inbox/a.md", "destination": "Private/a.md", "update_links": false}),
        "not_found",
    );

    let listing = s.call(&inbox, "GET", "/vault/", None).body;
    assert!(
        listing.contains("Inbox/") && !listing.contains("Private") && !listing.contains("Notes"),
        "{listing}"
    );
    let (_, listed) = s.tool(&inbox, "vault_list", json!({"path": "Inbox"}));
    assert!(listed.contains("a.md") && !listed.contains("Secret"), "{listed}");
    let hits = s.call(&inbox, "GET", &format!("/search?q={WORD}&k=20"), None);
    assert_eq!(hits.status, 200, "{}", hits.body);
    let paths: Vec<String> = hits.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p.starts_with("Inbox/") && !p.contains("Secret")),
        "{paths:?}"
    );
    // Forty hidden notes match more strongly than the four visible ones; k is still filled
    // from the visible ones, since the grant filters both arms before ranking.
    // A pass over the owner's key first: `/readyz` is ready before the first build ends.
    let pass = s.call(crate::common::KEY, "POST", "/reindex?vault=home", None);
    assert_eq!(pass.status, 200, "{}", pass.body);
    let hits = s.call(&inbox, "GET", &format!("/search?q={WORD}&k=4"), None);
    let results = hits.json()["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 4, "{}", hits.body);
    // The generated index.md lists every note: only a client that sees them all reads it.
    assert_eq!(s.call(crate::common::KEY, "GET", "/vault/index.md", None).status, 200);
    s.refused(&inbox, "GET", "/vault/index.md", None, (404, "not_found"));
    let deny_only = s.create(&["no-private", "--deny", "Private"]);
    assert_eq!(s.call(&deny_only, "GET", "/vault/Notes/n.md", None).status, 200);
    s.refused(&deny_only, "GET", "/vault/index.md", None, (404, "not_found"));
    let root = s.call(&deny_only, "GET", "/vault/", None).body;
    assert!(
        root.contains("Notes/") && !root.contains("index.md") && !root.contains("Private"),
        "{root}"
    );
    for (name, args) in [
        ("vault_search", json!({"query": WORD, "k": 20})),
        ("vault_grep", json!({"pattern": WORD})),
        ("vault_links", json!({"path": "Inbox/a.md"})),
        ("vault_tags", json!({})),
    ] {
        let (err, text) = s.tool(&inbox, name, args);
        assert!(!err, "{name}: {text}");
        for hidden in ["Private", "Secret", "Notes/n.md", "p.md", "s.md"] {
            assert!(!text.contains(hidden), "{name} named {hidden}: {text}");
        }
    }
    let grep = s.call(&inbox, "GET", &format!("/grep?pattern={WORD}"), None).body;
    assert!(
        grep.contains("Inbox/a.md") && !grep.contains("Private") && !grep.contains("Secret"),
        "{grep}"
    );
    let resources = s.mcp(&inbox, "/mcp", "resources/list", json!({})).to_string();
    assert!(
        resources.contains("Inbox/a.md")
            && !resources.contains("Private")
            && !resources.contains("Secret"),
        "{resources}"
    );
    // Last, since index.md follows a write: a write where it may write.
    let r = s.call(&inbox, "PUT", "/vault/Inbox/new.md", Some("new"));
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(s.home.root().join("Inbox/new.md").exists());
}

#[test]
fn a_vault_limited_client_reaches_only_its_vault_which_is_its_default() {
    let s = setup();
    let w = s.create(&["w", "--vault", "work"]);
    assert_eq!(s.call(&w, "GET", "/vault/w.md", None).status, 200);
    s.refused(&w, "GET", "/v/home/vault/Inbox/a.md", None, (403, "not_granted"));
    s.refused(&w, "PUT", "/v/home/vault/Inbox/x.md", Some("x"), (403, "not_granted"));
    s.refused(&w, "GET", "/vault/home:Inbox/a.md", None, (403, "not_granted"));
    let (err, text) = s.tool(&w, "vault_read", json!({"path": "Inbox/a.md", "vault": "home"}));
    assert!(err && text.contains("(not_granted)") && text.contains("'home'"), "{text}");
    let (err, text) = s.tool(&w, "vault_search", json!({"query": WORD}));
    assert!(!err && text.contains("w.md") && !text.contains("Inbox"), "{text}");
    let r = s.call(&w, "PUT", "/vault/w2.md", Some("new"));
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(s.work.root().join("w2.md").exists());
}

#[test]
fn a_tool_limited_client_is_shown_and_may_call_only_its_tools() {
    let s = setup();
    let t = s.create(&["reader", "--tool", "vault_read"]);
    let listed = s.mcp(&t, "/mcp", "tools/list", json!({}));
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["vault_read"]);
    let (err, _) = s.tool(&t, "vault_read", json!({"path": "Inbox/a.md"}));
    assert!(!err);
    s.tool_refused(&t, "vault_search", json!({"query": WORD}), "not_granted");
    s.tool_refused(&t, "vault_write", json!({"path": "x.md", "content": "x"}), "not_granted");
}

#[test]
fn token_refusals_name_the_fix_and_a_revoked_token_is_refused_by_the_running_server() {
    let s = setup();
    let token = s.create(&["phone", "--read-only"]);
    let again = s.token(&["create", "phone"]);
    assert!(
        stderr(&again).contains("error[already_exists]")
            && stderr(&again).contains("token revoke phone")
    );
    let unknown = s.token(&["create", "x", "--vault", "nope"]);
    assert!(
        stderr(&unknown).contains("error[not_found]") && stderr(&unknown).contains("home, work")
    );
    let tool = s.token(&["create", "x", "--tool", "vault_nope"]);
    assert!(
        stderr(&tool).contains("error[invalid_request]") && stderr(&tool).contains("vault_read")
    );
    let gone = s.token(&["revoke", "laptop"]);
    assert!(stderr(&gone).contains("error[not_found]") && stderr(&gone).contains("phone"));
    let list = stdout(&s.token(&["list"]));
    assert!(
        list.contains("phone") && list.contains("read-only") && !list.contains(&token),
        "{list}"
    );

    assert_eq!(s.call(&token, "GET", "/vault/Inbox/a.md", None).status, 200);
    assert!(s.token(&["revoke", "phone"]).status.success());
    let r = s.call(&token, "GET", "/vault/Inbox/a.md", None);
    assert_eq!((r.status, r.code().as_str()), (401, "unauthorized"), "{}", r.body);
    assert_eq!(s.call(crate::common::KEY, "GET", "/vault/Inbox/a.md", None).status, 200);

    // Only the token's hash was ever written.
    let mut found = Vec::new();
    for entry in walkdir(s.server.data.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        if bytes.windows(token.len()).any(|w| w == token.as_bytes()) {
            found.push(entry);
        }
    }
    assert!(found.is_empty(), "the token is written in {found:?}");
}

/// Every file under `dir`.
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() { stack.push(p) } else { out.push(p) }
        }
    }
    out
}

#[test]
fn a_clients_token_opens_no_web_page_and_its_sign_in_with_it_is_refused() {
    let s = setup();
    let token = s.create(&["writer"]);
    let before = s.snapshot();
    let o = s.server.base.clone();
    // The page signs in with the owner's key only: a client's token is a wrong key there.
    let r = crate::web::browser(
        &s.server,
        "POST",
        "/ui/login",
        &[("Origin", &o)],
        &format!("key={token}"),
    );
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(r.header("set-cookie").is_none());
    // Presented as a bearer, it opens no page and no page action: each asks for a sign-in.
    for (method, path) in [
        ("GET", "/ui/"),
        ("GET", "/ui/clients"),
        ("GET", "/ui/audit"),
        ("GET", "/ui/edit?vault=home&path=Inbox/a.md"),
    ] {
        let r = s.call(&token, method, path, None);
        assert_eq!(r.status, 303, "{method} {path}: {}", r.body);
        assert!(r.header("location").unwrap().starts_with("/ui/login"), "{method} {path}");
    }
    let r = http_call(
        &s.server.base,
        "POST",
        "/ui/clients/revoke",
        Some(&token),
        &[("Origin", &o), ("Content-Type", "application/x-www-form-urlencoded")],
        Some(b"name=writer"),
    );
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(s.snapshot(), before);
    // And it still works where it is meant to: the revoke above did nothing.
    assert_eq!(s.call(&token, "GET", "/vault/Inbox/a.md", None).status, 200);
}

#[test]
fn a_client_granted_two_of_three_vaults_searches_both_by_a_query_alone_and_never_the_third() {
    let (home, work, play) = (TempVault::empty(), TempVault::empty(), TempVault::empty());
    home.write("h.md", &format!("# H\n\n{WORD} at home.\n"));
    work.write("w.md", &format!("# W\n\n{WORD} at work.\n"));
    play.write("p.md", &format!("# P\n\n{WORD} at play.\n"));
    let vaults: Vec<String> = [("home", &home), ("work", &work), ("play", &play)]
        .iter()
        .map(|(n, v)| format!("{n}={}", v.root().display()))
        .collect();
    let server = Server::start(&vaults, SERVER_ENV);
    let data = server.data.path().to_str().unwrap().to_string();
    let env = [("MDVAULT_API_KEY", crate::common::KEY), ("MDVAULT_VAULTS", &vaults.join(","))];
    // The order given is not the configured one; the answer keeps the configured order.
    let args =
        ["token", "create", "two", "--vault", "play", "--vault", "home", "--json", "--data-dir"];
    let o = mdvault_with(&[&args[..], &[data.as_str()]].concat(), &env, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let token =
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()["token"].as_str().unwrap().to_string();
    let s = Setup { home, work, server };

    // A connector's search names no vault: both granted vaults answer, the third never.
    let (err, text) = s.tool(&token, "vault_search", json!({"query": WORD}));
    assert!(!err && text.contains("h.md") && text.contains("p.md"), "{text}");
    assert!(!text.contains("w.md"), "{text}");
    let r = s.call(&token, "GET", &format!("/search?q={WORD}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    let hits = r.json();
    let vaults: Vec<&str> =
        hits["results"].as_array().unwrap().iter().filter_map(|h| h["vault"].as_str()).collect();
    assert!(vaults.contains(&"home") && vaults.contains(&"play"), "{vaults:?}");
    assert!(!vaults.contains(&"work"), "{vaults:?}");
    // The Local REST API's own search is one vault's, as the plugin's is: the client's first.
    let r = s.call(&token, "POST", &format!("/search/simple/?query={WORD}"), None);
    let hits = r.json();
    let files: Vec<&str> =
        hits.as_array().unwrap().iter().filter_map(|h| h["filename"].as_str()).collect();
    assert_eq!(files, ["p.md"], "{}", r.body);
    // Naming a vault still reaches that one alone, and the third is refused by name.
    let (err, text) = s.tool(&token, "vault_search", json!({"query": WORD, "vault": "play"}));
    assert!(!err && text.contains("p.md") && !text.contains("h.md"), "{text}");
    s.tool_refused(&token, "vault_search", json!({"query": WORD, "vault": "work"}), "not_granted");
    // A re-index without a vault passes over the granted vaults, in configured order.
    let (err, text) = s.tool(&token, "vault_reindex", json!({}));
    assert!(!err, "{text}");
    let (at_home, at_play) = (text.find("home").unwrap(), text.find("play").unwrap());
    assert!(at_home < at_play && !text.contains("work"), "{text}");
}
