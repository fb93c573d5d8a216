//! Paths as agents write them, on the real binary: an absolute path (read relative to the
//! vault folder inside it, refused outside it without making a folder), a bare note name, an
//! alias, a path copied from a wikilink (`[[Plan#Risks]]`: its note and section) or written
//! with Windows' separators, a note named like its folder, a name several notes answer to, a
//! name that misses, and a tool call without a required argument, over stdio MCP
//! (`mdvault mcp`); and an absolute path over REST. The rules themselves have unit tests beside `vault::path`,
//! `vault::find` and `vault::ops`; these check that every surface reaches them.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::{Server, TempVault};
use crate::multivault::StdioMcp;

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// A vault with notes in subfolders, a note named like its folder, a note known by an alias,
/// and two notes of one name.
fn vault() -> TempVault {
    let v = TempVault::empty();
    v.write("Projects/Alpha/Plan.md", "# Plan\n\n## Risks\n\n- weather\n");
    v.write("Sub/Sub.md", "# Sub\n\nThe folder's own note.\n");
    v.write("Home/Heating.md", "---\naliases:\n  - Boiler\n---\n# Heating\n\nSerial NB-7726041.\n");
    v.write("A/Twin.md", "# Twin A\n");
    v.write("B/Twin.md", "# Twin B\n");
    v
}

/// The vault's visible files and folders with their bytes, without the generated `index.md`
/// (and its hidden temporary) that a background pass may write at any moment.
fn files(v: &TempVault) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut all = v.snapshot();
    all.retain(|path, _| path != "index.md" && !path.split('/').any(|p| p.starts_with('.')));
    all
}

/// `mdvault mcp` over one vault (the stdio session of `multivault.rs`), with the home and data
/// folders it runs in.
struct Session {
    mcp: StdioMcp,
    _home: tempfile::TempDir,
    _data: tempfile::TempDir,
}

impl Session {
    fn start(v: &TempVault) -> Session {
        let home = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mdvault"));
        cmd.arg("mcp")
            .arg("--vault")
            .arg(format!("notes={}", v.root().display()))
            .arg("--data-dir")
            .arg(data.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("MDVAULT_CONFIG", "")
            .env("MDVAULT_LOG", "warn")
            .envs(HASHING.iter().copied())
            .stderr(Stdio::inherit());
        Session { mcp: StdioMcp::over(cmd), _home: home, _data: data }
    }

    /// Calls a tool; (is_error, text).
    fn tool(&mut self, name: &str, args: Value) -> (bool, String) {
        self.mcp.tool(name, args)
    }
}

#[test]
fn an_absolute_path_is_read_inside_the_vault_folder_and_refused_outside_it_over_stdio_mcp() {
    let v = vault();
    let mut m = Session::start(&v);
    let before = files(&v);
    for outside in ["/home/me/notes/x.md", "/tmp/mdvault-elsewhere/x.md", "C:\\Users\\me\\x.md"] {
        let (err, text) = m.tool("vault_write", json!({"path": outside, "content": "# X\n"}));
        assert!(err, "{outside}: {text}");
        assert!(text.starts_with("Refused (invalid_path): "), "{text}");
        assert!(text.contains(&v.root().display().to_string()), "the vault folder: {text}");
        assert!(text.contains("'x.md'"), "the relative form: {text}");
    }
    // The relative form keeps the folders the vault has.
    let (err, text) = m.tool(
        "vault_append",
        json!({"path": "/Users/me/Vault/Projects/Alpha/Plan.md", "content": "- x"}),
    );
    assert!(err && text.contains("'Projects/Alpha/Plan.md'"), "{text}");
    assert_eq!(files(&v), before, "a refused absolute path changed the vault");
    assert!(!v.root().join("home").exists() && !v.root().join("tmp").exists());

    // Inside the vault folder, the path is read relative to it, and the reply says so.
    let inside = format!("{}/Inbox/New.md", v.root().display());
    let (err, text) = m.tool("vault_write", json!({"path": inside, "content": "# New\n"}));
    assert!(!err, "{text}");
    assert!(text.starts_with("created Inbox/New.md"), "{text}");
    assert!(text.contains(&format!("the absolute path {inside} is inside the vault")), "{text}");
    assert_eq!(v.read("Inbox/New.md"), "# New\n");
    let plan = format!("{}/Projects/Alpha/Plan.md", v.root().display());
    let (err, text) = m.tool("vault_read", json!({"path": plan}));
    assert!(!err && text.contains("read as Projects/Alpha/Plan.md"), "{text}");
    assert!(text.contains("- weather"), "{text}");
    // The predecessor's leading slash still means the vault root.
    let (err, text) = m.tool("vault_read", json!({"path": "/Projects/Alpha/Plan.md"}));
    assert!(!err && text.starts_with("# Plan"), "{text}");
}

#[test]
fn a_bare_name_an_alias_and_a_note_named_like_its_folder_reach_their_notes_over_stdio_mcp() {
    let v = vault();
    let mut m = Session::start(&v);
    let (err, text) = m.tool("vault_read", json!({"path": "Plan", "section": "Risks"}));
    assert!(!err, "{text}");
    assert!(text.starts_with("('Plan' was found by name: Projects/Alpha/Plan.md)"), "{text}");
    assert!(text.contains("- weather"), "{text}");
    let (err, text) = m.tool(
        "vault_patch",
        json!({"path": "Plan.md", "target": "Risks", "operation": "append", "content": "- cost"}),
    );
    assert!(!err, "{text}");
    assert!(text.starts_with("appended to 'Plan::Risks' in Projects/Alpha/Plan.md"), "{text}");
    assert!(v.read("Projects/Alpha/Plan.md").contains("- weather\n- cost\n"));

    let (err, text) = m.tool("vault_read", json!({"path": "Boiler"}));
    assert!(!err, "{text}");
    assert!(text.contains("'Boiler' was found as an alias of Home/Heating.md"), "{text}");
    assert!(text.contains("NB-7726041"), "{text}");

    // `Sub` is a folder at the vault root and the name of the note inside it.
    let (err, text) = m.tool("vault_read", json!({"path": "Sub"}));
    assert!(!err, "{text}");
    assert!(text.contains("The folder's own note."), "{text}");
    let (err, text) = m.tool("vault_map", json!({"path": "Sub"}));
    assert!(!err && text.starts_with("# Sub/Sub.md"), "{text}");

    // A new name is a new name: vault_write never finds a note elsewhere.
    let (err, text) = m.tool("vault_write", json!({"path": "Plan.md", "content": "# Root plan\n"}));
    assert!(!err && text.starts_with("created Plan.md"), "{text}");
    assert_eq!(v.read("Plan.md"), "# Root plan\n");
    assert!(v.read("Projects/Alpha/Plan.md").starts_with("# Plan\n"));
}

#[test]
fn a_path_copied_from_a_link_reads_its_note_and_section_over_stdio_mcp_and_rest() {
    let v = vault();
    let mut m = Session::start(&v);
    for path in ["[[Plan#Risks]]", "Plan#Risks", "![[Projects/Alpha/Plan.md#Risks|risks]]"] {
        let (err, text) = m.tool("vault_read", json!({"path": path}));
        assert!(!err, "{path}: {text}");
        assert!(text.contains("- weather") && !text.contains("# Plan\n"), "{path}: {text}");
        assert!(text.contains("section Risks"), "the reply says how it read it: {text}");
    }
    let (err, text) = m.tool("vault_read", json!({"path": "[[Boiler]]"}));
    assert!(!err && text.contains("NB-7726041"), "{text}");
    // A Windows agent's separator reads the same note, and the reply says to use '/'.
    let (err, text) = m.tool("vault_read", json!({"path": "Projects\\Alpha\\Plan.md"}));
    assert!(!err && text.contains("separate folders with '/'"), "{text}");
    // An edit names its part in its own target: a part in the path is refused, saying so.
    let before = files(&v);
    let (err, text) = m.tool(
        "vault_patch",
        json!({"path": "Plan#Risks", "target": "Risks", "operation": "append", "content": "- x"}),
    );
    assert!(err && text.starts_with("Refused (invalid_request): "), "{text}");
    assert!(text.contains("pass the path Projects/Alpha/Plan.md alone"), "{text}");
    assert_eq!(files(&v), before);
    let (err, text) = m.tool("vault_append", json!({"path": "[[Plan]]", "content": "- y"}));
    assert!(!err, "{text}");
    assert!(v.read("Projects/Alpha/Plan.md").ends_with("- y\n"));

    // REST reads the same path the same way, percent-encoded as a client sends it.
    let s = Server::start(&[format!("notes={}", v.root().display())], HASHING);
    let r = s.call("GET", "/vault/%5B%5BPlan%23Risks%5D%5D", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("- weather") && !r.body.contains("# Plan"), "{}", r.body);
}

#[test]
fn an_ambiguous_or_missing_name_is_refused_with_the_paths_to_use_over_stdio_mcp() {
    let v = vault();
    let mut m = Session::start(&v);
    let before = files(&v);
    let (err, text) = m.tool("vault_set_body", json!({"path": "Twin", "content": "x"}));
    assert!(err, "{text}");
    assert!(text.starts_with("Refused (ambiguous_path): 'Twin' could mean 2 files"), "{text}");
    assert!(text.contains("A/Twin.md, B/Twin.md; pass one of these paths"), "{text}");
    // A miss names the nearest paths, whatever the refusal's code.
    let (err, text) = m.tool("vault_read", json!({"path": "Plann"}));
    assert!(err && text.starts_with("Refused (unsupported_suffix): "), "{text}");
    assert!(text.contains("the nearest existing paths are: Projects/Alpha/Plan.md"), "{text}");
    let (err, text) = m.tool("vault_read", json!({"path": "Projects/Alpha/Plann.md"}));
    assert!(err && text.starts_with("Refused (not_found): "), "{text}");
    assert!(text.contains("Projects/Alpha/Plan.md"), "{text}");
    let (err, text) = m.tool("vault_map", json!({"path": "Projects/Alpha"}));
    assert!(err && text.starts_with("Refused (is_directory): "), "{text}");
    assert!(text.contains("nearest existing paths are"), "{text}");
    assert_eq!(files(&v), before);
}

#[test]
fn a_tool_call_without_its_operation_is_refused_naming_it_and_its_values() {
    let v = vault();
    let mut m = Session::start(&v);
    let before = files(&v);
    let (err, text) = m.tool(
        "vault_patch",
        json!({"path": "Projects/Alpha/Plan.md", "target": "Risks", "content": "- x"}),
    );
    assert!(err, "{text}");
    assert_eq!(
        text,
        "Refused (invalid_request): `operation` is missing; vault_patch needs it: one of \
         replace, prepend, append"
    );
    let (err, text) = m.tool(
        "vault_patch",
        json!({"path": "Projects/Alpha/Plan.md", "target": "Risks", "operation": "insert"}),
    );
    assert!(err, "{text}");
    assert!(text.starts_with("Refused (invalid_request): `operation` is the string"), "{text}");
    let (err, text) = m.tool("vault_read", json!({"path": ["Plan"]}));
    assert!(
        err && text == "Refused (invalid_request): `path` is a list; it takes a string",
        "{text}"
    );
    assert_eq!(files(&v), before);
}

#[test]
fn an_absolute_path_over_rest_is_refused_outside_the_vault_folder_and_read_relative_inside() {
    let v = vault();
    let s = Server::start(&[format!("notes={}", v.root().display())], HASHING);
    let before = files(&v);
    let r = s.call("PUT", "/vault//home/me/notes/x.md", &[], Some(b"# X\n"));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);
    assert_eq!(files(&v), before);
    assert!(!v.root().join("home").exists());
    let inside = format!("/vault/{}/Inbox/Rest.md", v.root().display());
    let r = s.call("PUT", &inside, &[("Accept", "application/json")], Some(b"# Rest\n"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["path"], "Inbox/Rest.md", "{}", r.body);
    assert!(r.json()["message"].as_str().unwrap().contains("is inside the vault"), "{}", r.body);
    assert_eq!(v.read("Inbox/Rest.md"), "# Rest\n");
}
