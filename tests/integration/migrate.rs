//! Coming from the predecessors: each one's documented setup, carried over by `mdvault
//! migrate --write`, then mdvault started on the result with the same vaults, exclusions and
//! endpoints in effect; and the old names refused at start.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{
    KEY, TempVault, fake_embedding_endpoint, free_port, http_call, mdvault_with, stderr, stdout,
};

/// Runs `mdvault` with `HOME` at `home` (so the default config file is under it).
fn run_in(home: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let home_s = home.display().to_string();
    let mut all: Vec<(&str, &str)> = vec![("HOME", home_s.as_str())];
    all.extend_from_slice(env);
    mdvault_with(args, &all, None)
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn the_vault_mcp_servers_setup_migrates_and_serves_the_same_vault_exclusions_and_hosts() {
    let vault = TempVault::fixture();
    let home = tempfile::tempdir().unwrap();
    let old = tempfile::tempdir().unwrap();
    let port = free_port();
    let embed = fake_embedding_endpoint(8);
    let ollama = embed.trim_end_matches("/embeddings");
    // Its README's shape: the vault, the bind address, the embedder; the rest at its defaults
    // (Workflows and Reports out of search, `vault-mcp:8080` an allowed host).
    let file = old.path().join("config.yaml");
    std::fs::write(
        &file,
        format!(
            "vault:\n  path: {}\nserver:\n  host: 127.0.0.1\n  port: {port}\nembedding:\n  \
             ollama_url: {ollama}/\n  dims: 8\n",
            vault.root().display()
        ),
    )
    .unwrap();
    let file_s = file.display().to_string();
    let env = [("VAULT_MCP_CONFIG", file_s.as_str()), ("VAULT_MCP_API_KEY", KEY)];

    // Without --write it only prints.
    let o = run_in(home.path(), &["migrate"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Nothing written"), "{text}");
    for expected in
        ["server.listen", "not carried", "export MDVAULT_API_KEY=\"$VAULT_MCP_API_KEY\""]
    {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    assert!(!text.contains(KEY), "the key is never printed");
    let config = home.path().join(".config/mdvault/config.yaml");
    assert!(!config.exists());

    let o = run_in(home.path(), &["migrate", "--write"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read(&config).unwrap();
    // Idempotent: a second run leaves the file byte for byte.
    let o = run_in(home.path(), &["migrate", "--write"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("nothing changed"), "{}", stdout(&o));
    assert_eq!(std::fs::read(&config).unwrap(), written);

    // The old names, still set, now lose to the migrated file, except the key, which the
    // printed line carries over.
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdvault"))
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("MDVAULT_DATA_DIR", data.path())
        .env("VAULT_MCP_CONFIG", &file)
        .env("VAULT_MCP_API_KEY", KEY)
        .env("MDVAULT_API_KEY", KEY)
        .env("MDVAULT_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let ready = loop {
        // The port is not bound at once; http_call wants a listener.
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            let r = http_call(&base, "GET", "/readyz", Some(KEY), &[], None);
            if r.status == 200 {
                break Some(r);
            }
        }
        if std::time::Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let outcome = std::panic::catch_unwind(|| {
        let ready = ready.expect("the migrated server became ready on the old port");
        let body = ready.json();
        assert!(body.to_string().contains("\"vault\""), "the vault named after its folder: {body}");
        // The old server always kept index.md, so the migrated setup asks for it.
        assert_eq!(body["index_md"]["enabled"], true, "{body}");
        // The old allowed host still reaches it.
        let r = http_call(&base, "GET", "/readyz", Some(KEY), &[("host", "vault-mcp:8080")], None);
        assert_eq!(r.status, 200, "{}", r.body);
        // Search: the decoy in Workflows stays out, as before.
        let r = http_call(
            &base,
            "GET",
            "/search?q=Tallowmere%20Quillon%20routing&k=8",
            Some(KEY),
            &[],
            None,
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let results = r.json()["results"].as_array().unwrap().clone();
        assert!(!results.is_empty());
        for hit in &results {
            let path = hit["path"].as_str().unwrap();
            assert!(!path.starts_with("Workflows/") && !path.starts_with("Reports/"), "{path}");
        }
    });
    let _ = child.kill();
    let _ = child.wait();
    outcome.unwrap();
}

#[test]
fn vault_searchs_setup_migrates_with_its_endpoint_prompts_and_default_k() {
    let vault = TempVault::fixture();
    let home = tempfile::tempdir().unwrap();
    let old = tempfile::tempdir().unwrap();
    let embed = fake_embedding_endpoint(768);
    let file = old.path().join("vaults.json");
    std::fs::write(&file, format!("{{\"notes\": \"{}\"}}", vault.root().display())).unwrap();
    let file_s = file.display().to_string();
    let data = tempfile::tempdir().unwrap();
    let data_s = data.path().display().to_string();
    let env = [
        ("VAULT_SEARCH_CONFIG", file_s.as_str()),
        ("VAULT_EMBED_URL", embed.as_str()),
        ("VAULT_RERANK_URL", ""),
        ("MDVAULT_DATA_DIR", data_s.as_str()),
    ];
    let o = run_in(home.path(), &["migrate", "--write"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("\"args\":[\"mcp\"]"), "stdio MCP is `mdvault mcp`: {text}");
    assert!(text.contains("VAULT_SEARCH_DB"), "{text}");
    let config = std::fs::read_to_string(home.path().join(".config/mdvault/config.yaml")).unwrap();
    assert!(config.contains("document_prefix: \"title: {title} | text: {text}\""), "{config}");

    let o = run_in(home.path(), &["index"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("VAULT_EMBED_URL"), "the old name is named: {}", stderr(&o));
    let o = run_in(home.path(), &["status", "--json"], &env);
    let s = json(&o);
    assert_eq!(s["vaults"][0]["vault"], "notes", "{s:#}");
    assert!(s["model"]["index"].as_str().unwrap_or("").ends_with("@768"), "{s:#}");
    let o = run_in(home.path(), &["search", "boiler", "--json"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["k"], 8, "vault-search's default k: {r:#}");
}

#[test]
fn a_reranker_is_migrated_and_mentioned_only_when_the_user_had_one() {
    let vault = TempVault::fixture();
    let embed = fake_embedding_endpoint(768);
    let old = tempfile::tempdir().unwrap();
    let file = old.path().join("vaults.json");
    std::fs::write(&file, format!("{{\"notes\": \"{}\"}}", vault.root().display())).unwrap();
    let file_s = file.display().to_string();
    // The search afterwards: a word every run finds, and what it says about a reranker.
    let search = |home: &Path, data: &str| {
        let env = [("VAULT_EMBED_URL", embed.as_str()), ("MDVAULT_DATA_DIR", data)];
        let o = run_in(home, &["index"], &env);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = run_in(home, &["search", "boiler", "--json", "--explain"], &env);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        json(&o)
    };

    // Never set: vault-search's default port is not carried, and search says nothing of it.
    let (home, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let env = [("VAULT_SEARCH_CONFIG", file_s.as_str()), ("VAULT_EMBED_URL", embed.as_str())];
    let o = run_in(home.path(), &["migrate", "--write"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let config = std::fs::read_to_string(home.path().join(".config/mdvault/config.yaml")).unwrap();
    assert!(!config.contains("rerank"), "{config}");
    let r = search(home.path(), data.path().to_str().unwrap());
    assert!(r.get("notices").is_none(), "no notice at all: {r:#}");
    assert_eq!(r["explain"]["rerank"], "not configured", "{r:#}");

    // Set (here to a port nothing listens on): carried, and its failure is said.
    let (home, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dead = format!("http://127.0.0.1:{}/v1/rerank", free_port());
    let named = [env[0], env[1], ("VAULT_RERANK_URL", dead.as_str())];
    let o = run_in(home.path(), &["migrate", "--write"], &named);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let config = std::fs::read_to_string(home.path().join(".config/mdvault/config.yaml")).unwrap();
    assert!(config.contains(&dead), "{config}");
    let r = search(home.path(), data.path().to_str().unwrap());
    assert!(r["notices"].to_string().contains("the reranker is unavailable"), "{r:#}");
}

#[test]
fn an_old_variable_alone_stops_every_command_naming_its_replacement() {
    let home = tempfile::tempdir().unwrap();
    let o = run_in(home.path(), &["status"], &[("VAULT_PATH", "/srv/vault")]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("VAULT_PATH") && e.contains("MDVAULT_VAULTS"), "{e}");
    assert!(e.contains("mdvault migrate"), "{e}");
    // Migrate itself still runs: it is how to get out of this.
    let o = run_in(home.path(), &["migrate"], &[("VAULT_PATH", "/srv/vault")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("vaults.vault"), "{}", stdout(&o));
}

#[test]
fn a_config_that_sets_a_key_differently_is_refused_untouched() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("mine.yaml");
    std::fs::write(&config, "# my settings\nsearch:\n  default_k: 4\n").unwrap();
    let old = home.path().join("vaults.json");
    std::fs::write(&old, "{\"notes\": \"/srv/notes\"}").unwrap();
    let (c, o) = (config.display().to_string(), old.display().to_string());
    let out = run_in(home.path(), &["migrate", "--from", &o, "--config", &c, "--write"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("search.default_k is 4 there"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "# my settings\nsearch:\n  default_k: 4\n"
    );

    // The predecessor's own file is never the one written.
    let theirs = home.path().join("config.yaml");
    std::fs::write(&theirs, "vault:\n  path: /srv/v\n").unwrap();
    let t = theirs.display().to_string();
    let out = run_in(home.path(), &["migrate", "--from", &t, "--config", &t, "--write"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("never writes"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "vault:\n  path: /srv/v\n");
}

#[test]
fn results_carry_the_fused_score_everywhere_and_a_vault_its_own_default_k() {
    let (a, b) = (TempVault::fixture(), TempVault::fixture());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "vaults:\n  a:\n    path: {}\n    default_k: 2\n  b: {}\n",
            a.root().display(),
            b.root().display()
        ),
    )
    .unwrap();
    let c = config.display().to_string();
    let s = crate::common::Server::start(
        &[],
        &[("MDVAULT_CONFIG", c.as_str()), ("MDVAULT_EMBEDDING__BACKEND", "hashing")],
    );

    // Vault a alone: its own k, and every hit has a score in (0, 1], best first.
    let r = s.call("GET", "/v/a/search?q=boiler%20service", &[], None).json();
    assert_eq!(r["k"], 2, "{r:#}");
    let scores: Vec<f64> =
        r["results"].as_array().unwrap().iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert_eq!(scores.len(), 2, "{r:#}");
    assert!(scores.iter().all(|s| *s > 0.0 && *s <= 1.0), "{scores:?}");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // An explicit k wins; a search of every vault takes search.default_k.
    assert_eq!(s.call("GET", "/v/a/search?q=boiler&k=3", &[], None).json()["k"], 3);
    assert_eq!(s.call("GET", "/search?q=boiler", &[], None).json()["k"], 6);
    assert_eq!(s.call("GET", "/v/b/search?q=boiler", &[], None).json()["k"], 6);

    // MCP says it too.
    let (error, text) = crate::serve::tool(
        &s,
        "/mcp",
        "vault_search",
        serde_json::json!({"query": "boiler service", "vault": "a"}),
    );
    assert!(!error, "{text}");
    assert!(text.contains("2 results") && text.contains(" - score 0."), "{text}");

    // And the CLI, beside the server, on the same index.
    let data = s.data.path().display().to_string();
    let o = mdvault_with(
        &["search", "boiler service", "--vault", "a", "--data-dir", &data],
        &[("MDVAULT_CONFIG", c.as_str()), ("MDVAULT_EMBEDDING__BACKEND", "hashing")],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains(", score 0."), "{}", stdout(&o));
}
