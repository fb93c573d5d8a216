//! OAuth 2.1 over the real binary, as a remote MCP client walks it: the 401 that names the
//! metadata, both metadata documents, dynamic registration, the authorization request checked
//! before anything is sent back, the owner's sign-in and consent (read-only, one folder), the
//! code's exchange with PKCE, tools called with the access token inside the grant, refresh
//! rotation (a replayed refresh token revokes the client), an expired access token refused
//! with the right `WWW-Authenticate`, revocation, the audit trail naming the client, and no
//! token, code or secret anywhere in the data directory; and `server.owner_loopback_only`
//! keeping the owner's key and web sign-in on this machine. The official TypeScript SDK's and
//! mcp-remote's own OAuth clients walk the same flow in `scripts/mcp-ts-sdk.sh`.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::{KEY, Reply, Server, TempVault, http_call};
use crate::web::{browser, sign_in};

/// Where the codes go: a loopback listener, registered without a port's say.
const REDIRECT: &str = "http://127.0.0.1:33418/oauth/callback";
/// A PKCE verifier (43 characters).
const VERIFIER: &str = "the-verifier-of-this-test-0123456789abcdefghijkl";

fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

struct Flow {
    vault: TempVault,
    server: Server,
}

fn flow(access_seconds: &str) -> Flow {
    let vault = TempVault::empty();
    vault.write("Inbox/a.md", "# A\n\nzebracode in the inbox.\n");
    vault.write("Private/p.md", "# P\n\nzebracode private.\n");
    let server = Server::start(
        &[format!("main={}", vault.root().display())],
        &[
            ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
            ("MDVAULT_SERVER__OAUTH_ACCESS_SECONDS", access_seconds),
        ],
    );
    Flow { vault, server }
}

impl Flow {
    fn get(&self, path: &str) -> Reply {
        http_call(&self.server.base, "GET", path, None, &[], None)
    }

    fn post_form(&self, path: &str, body: &str) -> Reply {
        http_call(
            &self.server.base,
            "POST",
            path,
            None,
            &[("Content-Type", "application/x-www-form-urlencoded")],
            Some(body.as_bytes()),
        )
    }

    /// Registers an application; its client_id.
    fn register(&self, name: &str) -> String {
        let body = json!({"client_name": name, "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "logo_uri": "ignored"});
        let r = http_call(
            &self.server.base,
            "POST",
            "/oauth/register",
            None,
            &[("Content-Type", "application/json")],
            Some(body.to_string().as_bytes()),
        );
        assert_eq!(r.status, 201, "{}", r.body);
        let v = r.json();
        assert_eq!(v["token_endpoint_auth_method"], "none");
        assert!(v.get("client_secret").is_none());
        v["client_id"].as_str().unwrap().to_string()
    }

    /// The authorization request's query.
    fn query(&self, client_id: &str, redirect: &str) -> String {
        format!(
            "response_type=code&client_id={}&redirect_uri={}&code_challenge={}&\
             code_challenge_method=S256&state=st%3D1&resource={}&scope=claudeai",
            enc(client_id),
            enc(redirect),
            challenge(VERIFIER),
            enc(&format!("{}/mcp", self.server.base)),
        )
    }

    /// Walks authorize, sign-in and consent with `choices`; the code.
    fn consent(&self, client_id: &str, choices: &str) -> String {
        let q = self.query(client_id, "http://127.0.0.1:40001/oauth/callback");
        let r = self.get(&format!("/oauth/authorize?{q}"));
        assert_eq!(r.status, 303, "{}", r.body);
        let consent = r.header("location").unwrap().to_string();
        assert!(consent.starts_with("/ui/oauth/consent?"), "{consent}");
        // No session: to the sign-in first, coming back to the consent.
        let r = browser(&self.server, "GET", &consent, &[], "");
        assert_eq!(r.status, 303);
        assert!(r.header("location").unwrap().starts_with("/ui/login?next=/ui/oauth/consent%3F"));
        let cookie = sign_in(&self.server);
        let page = browser(&self.server, "GET", &consent, &[("Cookie", &cookie)], "");
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(
            page.body.contains("Test agent") && page.body.contains("a program on this computer")
        );
        let csp = page.header("content-security-policy").unwrap();
        assert!(csp.contains("form-action 'self' http://127.0.0.1:40001"), "{csp}");
        let carried = consent.split_once('?').unwrap().1;
        let o = self.server.base.clone();
        let r = browser(
            &self.server,
            "POST",
            "/ui/oauth/consent",
            &[("Cookie", &cookie), ("Origin", &o)],
            &format!("{carried}&{choices}&decision=allow"),
        );
        assert_eq!(r.status, 303, "{}", r.body);
        let to = url::Url::parse(r.header("location").unwrap()).unwrap();
        assert_eq!(to.as_str().split('?').next(), Some("http://127.0.0.1:40001/oauth/callback"));
        let q: std::collections::HashMap<_, _> = to.query_pairs().into_owned().collect();
        assert_eq!(q["state"], "st=1");
        q["code"].clone()
    }

    fn exchange(&self, client_id: &str, code: &str) -> Reply {
        self.post_form(
            "/oauth/token",
            &format!(
                "grant_type=authorization_code&code={code}&code_verifier={VERIFIER}&client_id={}&\
                 redirect_uri={}&resource={}",
                enc(client_id),
                enc("http://127.0.0.1:40001/oauth/callback"),
                enc(&format!("{}/mcp/", self.server.base)),
            ),
        )
    }

    fn refresh(&self, client_id: &str, refresh: &str) -> Reply {
        self.post_form(
            "/oauth/token",
            &format!(
                "grant_type=refresh_token&refresh_token={refresh}&client_id={}",
                enc(client_id)
            ),
        )
    }

    /// An MCP request with this bearer token (none when empty).
    fn mcp(&self, token: &str, method: &str, params: Value) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        http_call(
            &self.server.base,
            "POST",
            "/mcp",
            (!token.is_empty()).then_some(token),
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            Some(body.to_string().as_bytes()),
        )
    }

    /// A tool call's (is_error, text).
    fn tool(&self, token: &str, name: &str, args: Value) -> (bool, String) {
        let r = self.mcp(token, "tools/call", json!({"name": name, "arguments": args}));
        assert_eq!(r.status, 200, "{}", r.body);
        let data =
            r.body.lines().filter_map(|l| l.strip_prefix("data:")).next_back().unwrap_or(&r.body);
        let v: Value = serde_json::from_str(data.trim()).unwrap();
        let text = v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
        (v["result"]["isError"].as_bool().unwrap_or(false), text)
    }
}

fn tokens(r: &Reply) -> (String, String) {
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let v = r.json();
    assert!(v["token_type"].as_str().unwrap().eq_ignore_ascii_case("bearer"));
    assert!(v["expires_in"].as_u64().unwrap() >= 1);
    (v["access_token"].as_str().unwrap().into(), v["refresh_token"].as_str().unwrap().into())
}

#[test]
fn a_remote_client_discovers_registers_signs_in_with_consent_and_gets_only_its_grant() {
    let f = flow("3600");
    let base = f.server.base.clone();
    // The 401 says where to sign in; REST's says nothing new.
    let r = f.mcp("", "initialize", json!({}));
    assert_eq!(r.status, 401);
    let www = r.header("www-authenticate").unwrap();
    assert!(
        www.contains(&format!(
            "resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
        )),
        "{www}"
    );
    assert!(!www.contains("invalid_token"), "no token was sent: {www}");
    let r = f.mcp("0".repeat(64).as_str(), "initialize", json!({}));
    assert!(r.header("www-authenticate").unwrap().contains("error=\"invalid_token\""));
    let r = http_call(&base, "GET", "/search?q=x", None, &[], None);
    assert_eq!(r.header("www-authenticate"), Some("Bearer realm=\"mdvault\""));

    let prm = f.get("/.well-known/oauth-protected-resource/mcp").json();
    assert_eq!(prm["resource"], format!("{base}/mcp"));
    assert_eq!(prm["authorization_servers"], json!([base]));
    assert_eq!(
        f.get("/.well-known/oauth-protected-resource").json()["resource"],
        format!("{base}/mcp")
    );
    let asm = f.get("/.well-known/oauth-authorization-server").json();
    assert_eq!(asm["issuer"], base);
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(asm["token_endpoint"], format!("{base}/oauth/token"));
    assert_eq!(f.get("/.well-known/openid-configuration").json(), asm);
    // A browser-based client's preflight is answered.
    let pre = http_call(
        &base,
        "OPTIONS",
        "/oauth/token",
        None,
        &[("Origin", "https://inspector.example"), ("Access-Control-Request-Method", "POST")],
        None,
    );
    assert_eq!(pre.header("access-control-allow-origin"), Some("*"), "{:?}", pre.headers);

    assert_eq!(asm["client_id_metadata_document_supported"], true);
    // A client ID metadata document is fetched from public addresses only: one on this
    // machine is refused on the page, and nothing is fetched.
    let doc = "https://127.0.0.1/oauth/client.json";
    let r = f.get(&format!("/oauth/authorize?{}", f.query(doc, REDIRECT)));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.body.contains("not a public address") && r.header("location").is_none(),
        "{}",
        r.body
    );

    let client_id = f.register("Test agent");
    // A redirect the application did not register is refused on the page, sent nowhere.
    let r = f.get(&format!("/oauth/authorize?{}", f.query(&client_id, "https://evil.example/cb")));
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.header("location").is_none() && r.body.contains("evil.example"));
    // Without PKCE the application is told so, at its redirect, with its state.
    let r = f.get(&format!(
        "/oauth/authorize?response_type=code&client_id={}&redirect_uri={}&state=s1",
        enc(&client_id),
        enc(REDIRECT)
    ));
    assert_eq!(r.status, 302);
    let to = r.header("location").unwrap();
    assert!(
        to.starts_with(REDIRECT) && to.contains("error=invalid_request") && to.contains("state=s1"),
        "{to}"
    );

    let code = f.consent(&client_id, "access=read&vault=main&allow=Inbox&name=phone-agent");
    let bad = f.post_form(
        "/oauth/token",
        &format!(
            "grant_type=authorization_code&code={code}&code_verifier={}&client_id={}",
            "x".repeat(43),
            enc(&client_id)
        ),
    );
    assert_eq!((bad.status, bad.json()["error"].as_str()), (400, Some("invalid_grant")));
    let (access, refresh) = tokens(&f.exchange(&client_id, &code));

    // Inside the grant: the inbox reads; the private folder is invisible; nothing is written.
    let (err, text) = f.tool(&access, "vault_read", json!({"path": "Inbox/a.md"}));
    assert!(!err && text.contains("zebracode in the inbox"), "{text}");
    let (err, _) = f.tool(&access, "vault_read", json!({"path": "Private/p.md"}));
    assert!(err);
    let before = f.vault.snapshot();
    let (err, text) =
        f.tool(&access, "vault_write", json!({"path": "Inbox/new.md", "content": "x"}));
    assert!(err && text.contains("not granted"), "{text}");
    assert_eq!(f.vault.snapshot(), before);
    let (_, found) = f.tool(&access, "vault_grep", json!({"pattern": "zebracode"}));
    assert!(found.contains("Inbox/a.md") && !found.contains("Private"), "{found}");

    // Rotation: a new pair; the old refresh token, replayed, revokes the client.
    let (access2, refresh2) = tokens(&f.refresh(&client_id, &refresh));
    assert_ne!(refresh2, refresh);
    assert!(!f.tool(&access2, "vault_read", json!({"path": "Inbox/a.md"})).0);
    let replay = f.refresh(&client_id, &refresh);
    assert_eq!((replay.status, replay.json()["error"].as_str()), (400, Some("invalid_grant")));
    let r = f.mcp(&access2, "initialize", json!({}));
    assert_eq!(r.status, 401, "a replayed refresh token revokes its client");
    assert!(r.header("www-authenticate").unwrap().contains("invalid_token"));
    assert_eq!(f.refresh(&client_id, &refresh2).status, 400);

    // The clients page lists it, revoked; the secrets are nowhere on disk.
    let cookie = sign_in(&f.server);
    let page = browser(&f.server, "GET", "/ui/clients", &[("Cookie", &cookie)], "");
    assert!(page.body.contains("phone-agent") && page.body.contains("revoked"), "{}", page.body);
    for secret in [&code, &access, &refresh, &access2, &refresh2] {
        assert_no_file_holds(f.server.data.path(), secret);
    }
}

/// Fails if any file under `dir` holds `secret`.
fn assert_no_file_holds(dir: &std::path::Path, secret: &str) {
    for entry in walkdir::WalkDir::new(dir).into_iter().filter_map(Result::ok) {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds a secret",
                entry.path().display()
            );
        }
    }
}

#[test]
fn a_read_write_client_is_named_in_the_audit_trail_and_revocation_holds_at_once() {
    let f = flow("3600");
    let client_id = f.register("Test agent");
    let code = f.consent(&client_id, "access=write&vault=main&name=writer");
    let (access, refresh) = tokens(&f.exchange(&client_id, &code));
    let (err, text) =
        f.tool(&access, "vault_write", json!({"path": "Inbox/by-agent.md", "content": "hi"}));
    assert!(!err, "{text}");
    let audit = http_call(&f.server.base, "GET", "/audit?client=writer", Some(KEY), &[], None);
    assert_eq!(audit.json()["entries"][0]["path"], "Inbox/by-agent.md", "{}", audit.body);
    let r = f.post_form("/oauth/revoke", &format!("token={access}&token_type_hint=access_token"));
    assert_eq!(r.status, 200);
    assert_eq!(f.mcp(&access, "initialize", json!({})).status, 401);
    assert_eq!(f.refresh(&client_id, &refresh).status, 400);
    // An unknown token is no news.
    assert_eq!(f.post_form("/oauth/revoke", "token=nothing").status, 200);
}

#[test]
fn an_expired_access_token_is_refused_with_the_challenge_and_its_refresh_token_renews_it() {
    let f = flow("2");
    let client_id = f.register("Test agent");
    let code = f.consent(&client_id, "access=read&vault=main&name=short-lived");
    let (access, refresh) = tokens(&f.exchange(&client_id, &code));
    // Waits for the expiry (a state, not a guess): then the token is refused with the
    // challenge that sends the client to refresh or sign in again.
    let deadline = Instant::now() + Duration::from_secs(30);
    let refused = loop {
        let r = f.mcp(&access, "initialize", json!({}));
        if r.status == 401 {
            break r;
        }
        assert!(Instant::now() < deadline, "an access token of two seconds still works");
        std::thread::sleep(Duration::from_millis(200));
    };
    let www = refused.header("www-authenticate").unwrap();
    assert!(www.contains("error=\"invalid_token\"") && www.contains("resource_metadata="), "{www}");
    let (fresh, _) = tokens(&f.refresh(&client_id, &refresh));
    assert_ne!(fresh, access);
}

#[test]
fn under_owner_loopback_only_the_key_works_only_from_this_machine_and_tokens_from_anywhere() {
    let vault = TempVault::empty();
    vault.write("Inbox/a.md", "# A\n");
    let server = Server::start(
        &[format!("main={}", vault.root().display())],
        &[
            ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
            ("MDVAULT_SERVER__OWNER_LOOPBACK_ONLY", "true"),
            ("MDVAULT_SERVER__PUBLIC_URL", "https://notes.example.org"),
        ],
    );
    let base = server.base.clone();
    let data = server.data.path().to_str().unwrap().to_string();
    let vaults = format!("main={}", vault.root().display());
    let made = crate::common::mdvault_with(
        &["token", "create", "phone", "--json", "--data-dir", &data],
        &[("MDVAULT_API_KEY", KEY), ("MDVAULT_VAULTS", &vaults)],
        None,
    );
    let token: Value = serde_json::from_str(&crate::common::stdout(&made)).unwrap();
    let token = token["token"].as_str().unwrap().to_string();
    let public = [("Host", "notes.example.org")];
    let forwarded = [("X-Forwarded-For", "203.0.113.9")];
    // Here: the key works.
    assert_eq!(http_call(&base, "GET", "/vault/Inbox/a.md", Some(KEY), &[], None).status, 200);
    // Through the public address, or forwarded by a proxy: the key is refused, naming why.
    for headers in [&public[..], &forwarded[..]] {
        let r = http_call(&base, "GET", "/vault/Inbox/a.md", Some(KEY), headers, None);
        assert_eq!((r.status, r.code().as_str()), (403, "forbidden"), "{}", r.body);
        assert!(r.json()["error"].as_str().unwrap().contains("owner_loopback_only"));
        // A client's token works from anywhere.
        assert_eq!(
            http_call(&base, "GET", "/vault/Inbox/a.md", Some(&token), headers, None).status,
            200
        );
    }
    // The web page's sign-in from the public address is refused too; here it works.
    let r = http_call(
        &base,
        "POST",
        "/ui/login",
        None,
        &[
            ("Host", "notes.example.org"),
            ("Origin", "https://notes.example.org"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        Some(format!("key={KEY}").as_bytes()),
    );
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.header("set-cookie").is_none());
    let cookie = sign_in(&server);
    let r = http_call(&base, "GET", "/ui/clients", None, &[("Cookie", &cookie), public[0]], None);
    assert_eq!(r.status, 403, "a session made here is not served through the public address");
}
