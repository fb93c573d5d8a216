//! Two vaults and several processes on one data directory, on the real binary.
//!
//! One regression test per way the index once lost or hid data with two vaults (a full
//! re-index of one vault emptying the other, `index` beside a server on another port, `search`
//! beside a server, `--vault NAME` meaning a folder, stdio MCP reaching only the default
//! vault, search over a vault never indexed), and a concurrency test: a server, the CLI's
//! `index` and `search` and a stdio `mcp` on the same data directory while notes change on
//! disk, with every embedded text counted. The embedder is a loopback HTTP endpoint that
//! records what it is sent: these tests are about who writes the index, not about relevance.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Embedded, Server, TempVault, counting_embedding_endpoint, stderr, stdout};
use crate::serve::tool;

/// A token only the journal vault contains.
const JOURNAL_WORD: &str = "zebrafinch";
/// A token only the notes vault contains (the fixture's boiler serial).
const NOTES_WORD: &str = "NB-7726041";

/// Two vaults (`notes`, a copy of the fixture vault, and a small `journal`), a data directory
/// and an embedding endpoint that counts.
struct Two {
    notes: TempVault,
    journal: TempVault,
    data: tempfile::TempDir,
    home: tempfile::TempDir,
    url: String,
    embedded: Embedded,
}

impl Two {
    fn new() -> Two {
        let journal = TempVault::empty();
        journal.write(
            "Daily/2026-01-02.md",
            &format!("# Second of January\n\nSaw a {JOURNAL_WORD} at the feeder this morning.\n"),
        );
        journal.write("Ideas.md", "# Ideas\n\nA greenhouse for the winter tomatoes.\n");
        let (url, embedded) = counting_embedding_endpoint(24);
        Two {
            notes: TempVault::fixture(),
            journal,
            data: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            url,
            embedded,
        }
    }

    fn specs(&self) -> Vec<String> {
        vec![
            format!("notes={}", self.notes.root().display()),
            format!("journal={}", self.journal.root().display()),
        ]
    }

    /// The environment every process gets: both vaults configured, the counting embedder.
    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("MDVAULT_VAULTS".into(), self.specs().join(",")),
            ("MDVAULT_DATA_DIR".into(), self.data.path().display().to_string()),
            ("MDVAULT_EMBEDDING__BACKEND".into(), "http".into()),
            ("MDVAULT_EMBEDDING__URL".into(), self.url.clone()),
            ("MDVAULT_EMBEDDING__MODEL".into(), "toy".into()),
            ("MDVAULT_EMBEDDING__DIMS".into(), "24".into()),
            ("MDVAULT_WATCH__DEBOUNCE_SECONDS".into(), "0.2".into()),
            ("MDVAULT_LOG".into(), "warn".into()),
        ]
    }

    fn command(&self, args: &[&str], cwd: Option<&Path>) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mdvault"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .envs(self.env())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args, None).output().unwrap()
    }

    /// A server over the same data directory, on a port of its own (never the default).
    fn server(&self) -> Server {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Server::start_in(&self.specs(), &env, self.data.path())
    }

    /// Document texts the endpoint was asked to embed more than once (queries are left out:
    /// an embed text always has the blank line after its header, a query does not).
    fn embedded_twice(&self) -> Vec<String> {
        let seen = self.embedded.lock().unwrap();
        let mut count = std::collections::HashMap::<&str, usize>::new();
        for t in seen.iter().filter(|t| t.contains("\n\n")) {
            *count.entry(t.as_str()).or_default() += 1;
        }
        count.into_iter().filter(|(_, n)| *n > 1).map(|(t, _)| t.to_string()).collect()
    }
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// The paths a `search --json` answered with.
fn hits(o: &Output) -> Vec<String> {
    let v: Value = serde_json::from_str(&ok(o)).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| format!("{}:{}", h["vault"].as_str().unwrap(), h["path"].as_str().unwrap()))
        .collect()
}

#[track_caller]
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_full_reindex_of_one_vault_from_the_cli_leaves_the_other_vault_searchable() {
    let t = Two::new();
    ok(&t.run(&["index"]));
    let texts = |t: &Two| t.embedded.lock().unwrap().iter().filter(|x| x.contains("\n\n")).count();
    let before = texts(&t);
    let full = ok(&t.run(&["index", "--full", "--vault", "notes"]));
    assert!(full.contains("notes:") && !full.contains("journal:"), "{full}");
    assert!(
        hits(&t.run(&["search", JOURNAL_WORD, "--vault", "journal", "--json"]))
            .contains(&"journal:Daily/2026-01-02.md".to_string())
    );
    assert!(!hits(&t.run(&["search", NOTES_WORD, "--json"])).is_empty());
    // The full pass re-chunked the notes, and embedded nothing: every text had its vector.
    let after = texts(&t);
    assert_eq!(after, before, "a full pass re-embedded texts that already had vectors");
}

#[test]
fn a_full_reindex_over_rest_and_mcp_leaves_the_other_vault_searchable() {
    let t = Two::new();
    let s = t.server();
    let journal_found = |s: &Server| {
        let r = s.call("GET", &format!("/search?q={JOURNAL_WORD}&vault=journal"), &[], None);
        assert_eq!(r.status, 200, "{}", r.body);
        r.body.contains("Daily/2026-01-02.md")
    };
    assert!(journal_found(&s));
    let r = s.call("POST", "/v/notes/reindex?full=1", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(journal_found(&s), "a full REST re-index of notes emptied journal");
    let (err, text) = tool(&s, "/mcp", "vault_reindex", json!({"full": true}));
    assert!(!err, "{text}");
    assert!(journal_found(&s), "a full MCP re-index of every vault emptied journal");
    let (err, text) = tool(&s, "/mcp", "vault_reindex", json!({"vault": "journal"}));
    assert!(!err && text.contains("journal"), "{text}");
    // "all" means every vault on REST and MCP, as on the CLI.
    let r = s.call("GET", &format!("/search?q={JOURNAL_WORD}&vault=all"), &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    let (err, text) =
        tool(&s, "/mcp", "vault_search", json!({"query": JOURNAL_WORD, "vault": "all"}));
    assert!(!err && text.contains("journal:Daily/2026-01-02.md"), "{text}");
    assert!(t.embedded_twice().is_empty(), "texts embedded twice: {:?}", t.embedded_twice());
}

#[test]
fn post_reindex_takes_its_vault_from_the_query_or_a_json_body_and_refuses_an_unknown_one() {
    let t = Two::new();
    let s = t.server();
    // The vaults a /reindex answer re-indexed, in order.
    let reindexed = |path: &str, body: Option<&str>| -> Vec<String> {
        let r = s.call("POST", path, &[], body.map(str::as_bytes));
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let j = r.json();
        j["vaults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["vault"].as_str().unwrap().into())
            .collect()
    };
    let both = ["notes", "journal"];
    assert_eq!(reindexed("/reindex", None), both);
    assert_eq!(reindexed("/reindex?vault=all", None), both);
    assert_eq!(reindexed("/reindex?vault=journal", None), ["journal"]);
    assert_eq!(reindexed("/reindex", Some(r#"{"vault": "journal"}"#)), ["journal"]);
    assert_eq!(reindexed("/reindex", Some(r#"{"vault": "all"}"#)), both);
    assert_eq!(reindexed("/v/journal/reindex", None), ["journal"]);
    // `full` from the body re-chunks every file of that vault.
    let r = s.call("POST", "/reindex", &[], Some(br#"{"vault": "journal", "full": true}"#));
    let pass = &r.json()["vaults"][0];
    assert_eq!((pass["files_seen"].as_u64(), pass["files_chunked"].as_u64()), (Some(2), Some(2)));

    // A vault that is not configured is 404 naming the ones that are, and nothing runs.
    for (path, body) in [("/reindex?vault=nope", None), ("/reindex", Some(r#"{"vault": "nope"}"#))]
    {
        let r = s.call("POST", path, &[], body.map(str::as_bytes));
        assert_eq!((r.status, r.code().as_str()), (404, "not_found"), "{}", r.body);
        assert!(r.body.contains("notes, journal"), "{}", r.body);
    }
    // The body wins over the query string, as on POST /search; a field it does not take is
    // refused, naming the two it does.
    assert_eq!(reindexed("/reindex?vault=notes", Some(r#"{"vault": "journal"}"#)), ["journal"]);
    let r = s.call("POST", "/reindex", &[], Some(br#"{"valt": "journal"}"#));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_request"), "{}", r.body);

    // MCP takes "all" too, and refuses an unknown vault the same way.
    let (err, text) = tool(&s, "/mcp", "vault_reindex", json!({"vault": "all"}));
    assert!(
        !err && text.contains("re-indexed notes") && text.contains("re-indexed journal"),
        "{text}"
    );
    let (err, text) = tool(&s, "/mcp", "vault_reindex", json!({"vault": "nope"}));
    assert!(err && text.contains("not_found"), "{text}");
}

#[test]
fn a_vault_named_all_is_searched_and_reindexed_alone_by_its_name() {
    let (all, other) = (TempVault::empty(), TempVault::empty());
    for v in [&all, &other] {
        v.write("Birds.md", "# Birds\n\nA kingfisher on the river wall.\n");
    }
    let specs =
        [format!("all={}", all.root().display()), format!("other={}", other.root().display())];
    let s = Server::start(&specs, &[("MDVAULT_EMBEDDING__BACKEND", "hashing")]);
    let vaults_of = |r: &Value| -> Vec<String> {
        let list = r["results"].as_array().unwrap_or_else(|| panic!("{r}"));
        list.iter().map(|h| h["vault"].as_str().unwrap().to_string()).collect()
    };
    // Named, the vault called `all` is searched alone; unnamed, every vault is.
    let r = s.call("GET", "/search?q=kingfisher&vault=all", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(vaults_of(&r.json()), ["all"]);
    let r = s.call("GET", "/search?q=kingfisher", &[], None);
    let mut every = vaults_of(&r.json());
    every.sort();
    assert_eq!(every, ["all", "other"]);
    let (err, text) =
        tool(&s, "/mcp", "vault_search", json!({"query": "kingfisher", "vault": "all"}));
    assert!(!err && !text.contains("other:"), "{text}");
    let r = s.call("POST", "/reindex?vault=all", &[], None);
    assert_eq!(r.json()["vaults"].as_array().map(Vec::len), Some(1), "{}", r.body);

    // The command line beside it: `--vault all` is that vault too.
    let o = crate::common::mdvault_with(
        &["search", "kingfisher", "--json", "--data-dir", s.data.path().to_str().unwrap()],
        &[("MDVAULT_VAULTS", &specs.join(",")), ("MDVAULT_EMBEDDING__BACKEND", "hashing")],
        None,
    );
    assert_eq!(hits(&o).len(), 2, "both vaults without --vault");
    let o = crate::common::mdvault_with(
        &[
            "search",
            "kingfisher",
            "--json",
            "--vault",
            "all",
            "--data-dir",
            s.data.path().to_str().unwrap(),
        ],
        &[("MDVAULT_VAULTS", &specs.join(",")), ("MDVAULT_EMBEDDING__BACKEND", "hashing")],
        None,
    );
    assert_eq!(hits(&o), ["all:Birds.md"]);
}

#[test]
fn index_beside_a_server_on_another_port_asks_the_server_and_search_reads_beside_it() {
    let t = Two::new();
    let s = t.server();
    t.notes.write("Inbox/Quokka.md", "# Quokka\n\nThe quokkafern cuttings arrived today.\n");
    // No API key and no port: the server is found through the data directory.
    let o = t.run(&["index"]);
    let out = ok(&o);
    assert!(stderr(&o).contains("owns this index; asking it"), "{}", stderr(&o));
    assert!(out.contains("notes:") && out.contains("journal:"), "{out}");
    let r = s.call("GET", "/search?q=quokkafern", &[], None);
    assert!(
        r.body.contains("Inbox/Quokka.md"),
        "the server does not find the new note: {}",
        r.body
    );
    // Nothing is stale afterwards.
    let st = s.call("GET", "/status", &[], None).json();
    for v in st["vaults"].as_array().unwrap() {
        assert_eq!(v["stale"].as_array().map_or(0, Vec::len), 0, "{v}");
    }
    // The CLI's search reads the server's index instead of failing on its lock.
    let found = hits(&t.run(&["search", "quokkafern", "--json"]));
    assert!(found.contains(&"notes:Inbox/Quokka.md".to_string()), "{found:?}");
    // A plain pass asked of the server for a vault it does not serve is refused, clearly.
    let other = TempVault::empty();
    let o = t
        .command(&["index", "--vault", &format!("other={}", other.root().display())], None)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("owns the index"), "{}", stderr(&o));
    assert!(t.embedded_twice().is_empty(), "texts embedded twice: {:?}", t.embedded_twice());
}

#[test]
fn a_note_written_with_the_cli_beside_a_server_is_found_by_the_next_search() {
    let t = Two::new();
    // A watcher this slow would not see the write within the test: only the CLI handing the
    // written path to the server (through the front door) makes the next search find it.
    let mut env = t.env();
    env.retain(|(k, _)| k != "MDVAULT_WATCH__DEBOUNCE_SECONDS");
    env.push(("MDVAULT_WATCH__DEBOUNCE_SECONDS".into(), "120".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = Server::start_in(&t.specs(), &env, t.data.path());
    let o = t.run(&[
        "write",
        "journal:Inbox/Heron.md",
        "--content",
        "# Heron\n\nA heronplume feather.\n",
    ]);
    ok(&o);
    let r = s.call("GET", "/search?q=heronplume&vault=journal", &[], None);
    assert!(
        r.body.contains("Inbox/Heron.md"),
        "the server does not find the CLI's note: {}",
        r.body
    );
    // The same for a move: the old path is gone from the index, the new one is there.
    ok(&t.run(&["mv", "journal:Inbox/Heron.md", "Birds/Heron.md"]));
    let r = s.call("GET", "/search?q=heronplume&vault=journal", &[], None).json();
    let paths: Vec<&str> =
        r["results"].as_array().unwrap().iter().filter_map(|h| h["path"].as_str()).collect();
    assert!(paths.contains(&"Birds/Heron.md") && !paths.contains(&"Inbox/Heron.md"), "{paths:?}");
}

#[test]
fn a_configured_vault_name_beats_a_folder_of_the_same_name_in_the_working_directory() {
    let t = Two::new();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.path().join("notes")).unwrap();
    std::fs::write(cwd.path().join("notes/Stray.md"), "# Stray\n\nNot the vault.\n").unwrap();
    let o = t.command(&["index", "--vault", "notes"], Some(cwd.path())).output().unwrap();
    let out = ok(&o);
    assert!(stderr(&o).contains("configured vault 'notes'"), "{}", stderr(&o));
    let files: usize = out
        .strip_prefix("notes: ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(files > 20, "the folder was indexed instead of the vault: {out}");
    assert!(out.contains(" 0 removed"), "{out}");
    // A bare word that is neither is refused, naming the configured vaults.
    let o = t.command(&["search", "x", "--vault", "nope"], Some(cwd.path())).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("notes, journal"), "{}", stderr(&o));
    // The configured vault was not touched by the folder's pass: its notes are all there.
    assert!(!hits(&t.run(&["search", NOTES_WORD, "--vault", "notes", "--json"])).is_empty());
}

#[test]
fn search_over_a_vault_never_indexed_says_so_instead_of_finding_nothing() {
    let t = Two::new();
    ok(&t.run(&["index", "--vault", "notes"]));
    let o = t.run(&["search", JOURNAL_WORD, "--vault", "journal"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).contains("error[not_ready]"), "{}", stderr(&o));
    assert!(stderr(&o).contains("journal has not been indexed"), "{}", stderr(&o));
    // Across both vaults the results come with a notice naming the missing one.
    let v: Value = serde_json::from_str(&ok(&t.run(&["search", NOTES_WORD, "--json"]))).unwrap();
    let notices = v["notices"].to_string();
    assert!(notices.contains("journal has not been indexed"), "{v}");
}

/// A stdio MCP session: `mdvault mcp` with newline-delimited JSON-RPC.
pub struct StdioMcp {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl StdioMcp {
    fn start(t: &Two) -> StdioMcp {
        StdioMcp::over(t.command(&["mcp"], None))
    }

    /// A session with the `mdvault mcp` that `cmd` runs, initialised.
    pub fn over(mut cmd: Command) -> StdioMcp {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut s = StdioMcp { child, input, output, next: 1 };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "multivault-test", "version": "1"}}),
        );
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, msg: Value) {
        writeln!(self.input, "{msg}").unwrap();
        self.input.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the stdio server ended");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v.get("result").cloned().unwrap_or(v);
            }
        }
    }

    /// Calls a tool; (is_error, text).
    pub fn tool(&mut self, name: &str, args: Value) -> (bool, String) {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        let text = r["content"]
            .as_array()
            .map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_else(|| panic!("no content: {r}"));
        (r["isError"].as_bool().unwrap_or(false), text)
    }

    /// Searches until the index answers (the session's first build may still run).
    pub fn search(&mut self, args: Value) -> String {
        let mut last = String::new();
        wait_until("the stdio session's search", || {
            let (err, text) = self.tool("vault_search", args.clone());
            last = text;
            !err
        });
        last
    }
}

impl Drop for StdioMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn stdio_mcp_reaches_every_vault_by_prefix_and_by_argument() {
    let t = Two::new();
    let mut m = StdioMcp::start(&t);
    let (err, text) = m.tool("vault_read", json!({"path": "journal:Daily/2026-01-02.md"}));
    assert!(!err && text.contains(JOURNAL_WORD), "{text}");
    let (err, text) =
        m.tool("vault_read", json!({"path": "Daily/2026-01-02.md", "vault": "journal"}));
    assert!(!err && text.contains(JOURNAL_WORD), "{text}");
    let (err, text) = m.tool("vault_list", json!({"path": "", "vault": "journal"}));
    assert!(!err && text.contains("Daily"), "{text}");
    // Search results outside the default vault carry the prefix the follow-up read takes.
    let text = m.search(json!({"query": JOURNAL_WORD}));
    assert!(text.contains("journal:Daily/2026-01-02.md"), "{text}");
    let (err, text) = m.tool("vault_read", json!({"path": "journal:Daily/2026-01-02.md"}));
    assert!(!err, "{text}");
    let (err, text) = m.tool("vault_reindex", json!({"vault": "journal"}));
    assert!(!err && text.contains("journal"), "{text}");
    let (err, text) = m.tool("vault_search", json!({"query": JOURNAL_WORD, "vault": "all"}));
    assert!(!err, "{text}");
    // A write through a prefix lands in that vault.
    let (err, text) = m.tool(
        "vault_append",
        json!({"path": "journal:Ideas.md", "content": "- a cold frame too\n"}),
    );
    assert!(!err, "{text}");
    assert!(t.journal.read("Ideas.md").contains("cold frame"));
    assert!(!t.notes.root().join("Ideas.md").exists());
}

#[test]
fn a_server_cli_index_cli_search_and_stdio_mcp_share_one_data_directory_without_double_work() {
    let t = Two::new();
    let s = t.server();
    let mut m = StdioMcp::start(&t);
    // Notes change on disk while every process works.
    for n in 0..6 {
        let word = format!("churnword{n}x");
        let (vault, rel) = if n % 2 == 0 {
            (&t.notes, format!("Churn/Note {n}.md"))
        } else {
            (&t.journal, format!("Churn/Entry {n}.md"))
        };
        vault.write(&rel, &format!("# Churn {n}\n\nThis one mentions {word}.\n"));
        if n == 2 {
            // A write through the stdio session, which does not own the index.
            let (err, text) = m.tool(
                "vault_write",
                json!({"path": "journal:Churn/From MCP.md",
                       "content": "# From MCP\n\nWritten via stdio: mcpchurnword.\n"}),
            );
            assert!(!err, "{text}");
        }
        if n == 3 {
            ok(&t.run(&["index"]));
        }
        let o = t.run(&["search", "churnword0x", "--mode", "lexical", "--json"]);
        assert!(o.status.success(), "search beside the server failed: {}", stderr(&o));
        std::thread::sleep(Duration::from_millis(150));
    }
    // Every vault's search follows the disk, from each process.
    for n in 0..6 {
        let word = format!("churnword{n}x");
        let vault = if n % 2 == 0 { "notes" } else { "journal" };
        wait_until(&format!("the server to find {word}"), || {
            let r = s.call("GET", &format!("/search?q={word}&vault={vault}"), &[], None);
            r.status == 200 && r.body.contains("Churn/")
        });
        let found = hits(&t.run(&["search", &word, "--vault", vault, "--json"]));
        assert!(
            found.iter().any(|h| h.starts_with(&format!("{vault}:Churn/"))),
            "{word}: {found:?}"
        );
    }
    let text = m.search(json!({"query": "mcpchurnword", "vault": "journal"}));
    assert!(text.contains("Churn/From MCP.md"), "{text}");
    let r = s.call("GET", "/search?q=mcpchurnword&vault=journal", &[], None);
    assert!(r.body.contains("From MCP.md"), "{}", r.body);
    // Only the owner embedded, and each text once.
    assert!(t.embedded_twice().is_empty(), "texts embedded twice: {:?}", t.embedded_twice());
    let ready = s.call("GET", "/readyz", &[], None).json();
    assert_eq!(ready["indexer"]["owner"], true, "{ready}");
    drop(m);
}
