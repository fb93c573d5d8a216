//! The audit trail over the real binary: writes through REST, MCP, the CLI and the web page,
//! by the owner and by two static-token clients, each recorded once with its client, kind and
//! path; a refused write recorded nowhere; `mdvault audit`'s and `GET /audit`'s filters; a
//! client's token shown only its own rows, and `/ui/audit` listing them for the owner.

use serde_json::{Value, json};

use crate::common::{KEY, Reply, Server, TempVault, http_call, mdvault_with, stderr, stdout};
use crate::web::{browser, sign_in};

const SERVER_ENV: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

struct Setup {
    vault: TempVault,
    server: Server,
}

fn setup() -> Setup {
    let vault = TempVault::empty();
    vault.write("Inbox/a.md", "# A\n\nfirst\n");
    vault.write("Notes/n.md", "---\ntags: [old]\n---\n# N\n\nsecond\n");
    let server = Server::start(&[format!("main={}", vault.root().display())], SERVER_ENV);
    Setup { vault, server }
}

impl Setup {
    /// `mdvault ARGS` on the server's data directory and vault, with its key.
    fn cli(&self, args: &[&str]) -> std::process::Output {
        let data = self.server.data.path().to_str().unwrap().to_string();
        let vaults = format!("main={}", self.vault.root().display());
        let mut all = args.to_vec();
        all.extend_from_slice(&["--data-dir", &data]);
        let o = mdvault_with(&all, &[("MDVAULT_API_KEY", KEY), ("MDVAULT_VAULTS", &vaults)], None);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    }

    /// Makes a client and returns its token.
    fn token(&self, args: &[&str]) -> String {
        let mut all = vec!["token", "create"];
        all.extend_from_slice(args);
        all.push("--json");
        let v: Value = serde_json::from_str(&stdout(&self.cli(&all))).unwrap();
        v["token"].as_str().unwrap().to_string()
    }

    fn call(&self, token: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
        http_call(&self.server.base, method, path, Some(token), &[], body.map(str::as_bytes))
    }

    /// A REST write that must succeed.
    fn rest(&self, token: &str, method: &str, path: &str, body: &str) {
        let r = self.call(token, method, path, Some(body));
        assert!(r.status < 300, "{method} {path}: {} {}", r.status, r.body);
    }

    /// One MCP tool call: its refusal's text, `None` when it succeeded.
    fn tool(&self, token: &str, name: &str, args: Value) -> Option<String> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": name, "arguments": args}});
        let r = http_call(
            &self.server.base,
            "POST",
            "/mcp",
            Some(token),
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            Some(body.to_string().as_bytes()),
        );
        assert_eq!(r.status, 200, "{name}: {}", r.body);
        let v: Value = serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body));
        let refused = v["result"]["isError"].as_bool().unwrap_or(false);
        refused.then(|| v["result"]["content"].to_string())
    }

    /// `GET /audit?QUERY` with a token: its rows as (client, kind, path, to).
    fn audit(&self, token: &str, query: &str) -> Vec<(String, String, String, Option<String>)> {
        let r = self.call(token, "GET", &format!("/audit?{query}"), None);
        assert_eq!(r.status, 200, "{}", r.body);
        rows(&serde_json::from_str(&r.body).unwrap())
    }

    /// `mdvault audit ARGS --json`: its rows.
    fn audit_cli(&self, args: &[&str]) -> Vec<(String, String, String, Option<String>)> {
        let mut all = vec!["audit", "--json"];
        all.extend_from_slice(args);
        rows(&serde_json::from_str(&stdout(&self.cli(&all))).unwrap())
    }
}

fn rows(v: &Value) -> Vec<(String, String, String, Option<String>)> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap().to_string();
            assert!(e["at"].as_str().unwrap().ends_with('Z'), "{e}");
            assert_eq!(e["vault"], "main");
            (s("client"), s("kind"), s("path"), e["to"].as_str().map(String::from))
        })
        .collect()
}

fn row(
    client: &str,
    kind: &str,
    path: &str,
    to: Option<&str>,
) -> (String, String, String, Option<String>) {
    (client.into(), kind.into(), path.into(), to.map(String::from))
}

#[test]
fn every_surfaces_write_is_recorded_once_with_its_client_kind_and_path_and_a_refused_one_not_at_all()
 {
    let s = setup();
    let phone = s.token(&["phone", "--allow", "Inbox/"]);
    let bot = s.token(&["bot"]);
    let reader = s.token(&["reader", "--read-only"]);

    // The owner: REST, MCP, the CLI and the web page.
    s.rest(KEY, "PUT", "/vault/Notes/rest.md", "# Rest\n");
    assert_eq!(
        s.tool(KEY, "vault_append", json!({"path": "Notes/rest.md", "content": "more"})),
        None
    );
    s.cli(&["write", "Notes/cli.md", "--content", "# CLI"]);
    s.cli(&["mkdir", "Projects"]);
    let cookie = sign_in(&s.server);
    let form = "vault=main&path=Notes%2Fweb.md&text=%23+Web";
    let origin = s.server.base.clone();
    let r =
        browser(&s.server, "POST", "/ui/new", &[("Cookie", &cookie), ("Origin", &origin)], form);
    assert_eq!(r.status, 303, "{}", r.body);
    // Two clients: REST and MCP each, a move and a tag rename among them (a client that sees
    // one folder moves without rewriting links, which could touch any note).
    s.rest(&phone, "POST", "/vault/Inbox/a.md", "\nfrom the phone\n");
    assert_eq!(
        s.tool(
            &phone,
            "vault_move",
            json!({"source": "Inbox/a.md", "destination": "Inbox/b.md", "update_links": false})
        ),
        None
    );
    s.rest(&bot, "POST", "/tags/rename", r#"{"from": "old", "to": "new"}"#);
    assert_eq!(
        s.tool(
            &bot,
            "vault_set_frontmatter",
            json!({"path": "Notes/n.md", "key": "k", "value": 1})
        ),
        None
    );
    s.rest(&bot, "DELETE", "/vault/Notes/web.md", "");

    // Refused writes (read-only; a folder the phone cannot see) record nothing.
    let before = s.audit_cli(&["--limit", "1000"]);
    assert_eq!(s.call(&reader, "PUT", "/vault/Notes/no.md", Some("x")).status, 403);
    assert!(
        s.tool(&reader, "vault_write", json!({"path": "Notes/no.md", "content": "x"})).is_some()
    );
    assert!(
        s.tool(&phone, "vault_write", json!({"path": "Notes/no.md", "content": "x"})).is_some()
    );
    assert_eq!(s.audit_cli(&["--limit", "1000"]), before);

    let want = [
        row("bot", "delete", "Notes/web.md", None),
        row("bot", "frontmatter", "Notes/n.md", None),
        row("bot", "tag_rename", "Notes/n.md", None),
        row("phone", "move", "Inbox/a.md", Some("Inbox/b.md")),
        row("phone", "append", "Inbox/a.md", None),
        row("owner", "write", "Notes/web.md", None),
        row("owner", "create_folder", "Projects", None),
        row("owner", "write", "Notes/cli.md", None),
        row("owner", "append", "Notes/rest.md", None),
        row("owner", "write", "Notes/rest.md", None),
    ];
    assert_eq!(before, want);
    assert_eq!(s.audit(KEY, "limit=1000"), want);
}

#[test]
fn filters_narrow_the_trail_and_a_client_is_shown_only_its_own_writes() {
    let s = setup();
    let phone = s.token(&["phone", "--allow", "Inbox/"]);
    let bot = s.token(&["bot"]);
    s.rest(&phone, "PUT", "/vault/Inbox/p.md", "# P\n");
    s.rest(&bot, "PUT", "/vault/Notes/b.md", "# B\n");
    s.rest(&bot, "PUT", "/vault/Inboxes/c.md", "# C\n");
    s.rest(KEY, "PUT", "/vault/Inbox/o.md", "# O\n");

    // By client, by folder (whole segments), by time, and a limit; CLI and REST alike.
    let bots = [row("bot", "write", "Inboxes/c.md", None), row("bot", "write", "Notes/b.md", None)];
    assert_eq!(s.audit_cli(&["--client", "bot"]), bots);
    assert_eq!(s.audit(KEY, "client=bot"), bots);
    let inbox =
        [row("owner", "write", "Inbox/o.md", None), row("phone", "write", "Inbox/p.md", None)];
    assert_eq!(s.audit_cli(&["--path", "Inbox/"]), inbox);
    assert_eq!(s.audit(KEY, "path=Inbox"), inbox);
    assert_eq!(s.audit_cli(&["--limit", "1"]), [row("owner", "write", "Inbox/o.md", None)]);
    assert!(s.audit_cli(&["--since", "2999-01-01"]).is_empty());
    assert_eq!(s.audit(KEY, "since=2000-01-01").len(), 4);
    let plain = stdout(&s.cli(&["audit", "--client", "phone"]));
    assert!(plain.contains("phone") && plain.contains("main:Inbox/p.md"), "{plain}");

    // A client sees its own rows, asked or not, and is refused another's.
    let own = [row("phone", "write", "Inbox/p.md", None)];
    assert_eq!(s.audit(&phone, ""), own);
    assert_eq!(s.audit(&phone, "client=phone"), own);
    let r = s.call(&phone, "GET", "/audit?client=bot", None);
    assert_eq!((r.status, r.code().as_str()), (403, "not_granted"), "{}", r.body);
    assert_eq!(s.audit(&bot, "path=Inbox").len(), 0);
    assert_eq!(s.audit(&bot, "").len(), 2);
    let r = s.call(KEY, "GET", "/audit?since=yesterday", None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"), "{}", r.body);

    // The web page lists them for the signed-in owner, filtered by a plain GET form.
    let cookie = sign_in(&s.server);
    let r =
        browser(&s.server, "GET", "/ui/audit?client=bot&path=Notes", &[("Cookie", &cookie)], "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("<th scope=\"col\">Client</th>") && r.body.contains("Notes/b.md"));
    assert!(!r.body.contains("Inboxes/c.md") && !r.body.contains("Inbox/p.md"), "{}", r.body);
    assert!(r.body.contains("<label for=\"audit-client\">"), "{}", r.body);
    let r = browser(&s.server, "GET", "/ui/audit", &[], "");
    assert_eq!(r.status, 303, "the page is signed-in only");
}
