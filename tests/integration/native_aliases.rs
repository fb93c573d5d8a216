//! Aliases end to end: a note's `aliases:` frontmatter resolves `[[Alias]]` links on the REST
//! and MCP link surfaces, a bare name read by MCP, a move (the alias link stays), a search
//! (the alias is indexed with the title) and the link check (not broken); a link to a missing
//! attachment is its own finding. Over the `aliases-*.md` notes of `tests/fixtures/obsidian/`,
//! and over obsidian-help's own aliases when the evaluation vaults are present.

use serde_json::{Value, json};

use crate::common::Server;
use crate::common::TempVault;
use crate::eval_data::{EVAL_VAULTS, find};
use crate::serve::tool;

const FAST: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// A vault holding only this module's fixture notes (others share the folder).
fn alias_vault() -> TempVault {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/obsidian");
    let v = TempVault::empty();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("aliases-") && name.ends_with(".md") {
            v.write(&name, &std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    assert!(v.root().join("aliases-log.md").exists(), "the alias fixtures are missing");
    v
}

/// The `links` check's findings as (code, path, line, target).
fn link_findings(s: &Server) -> Vec<(String, String, u64, String)> {
    let run = s.call("GET", "/maintenance", &[], None).json();
    let links = run["checks"].as_array().unwrap().iter().find(|c| c["check"] == "links").unwrap();
    let mut out: Vec<_> = links["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let message = f["message"].as_str().unwrap();
            // The link as written, which every links finding's message starts with.
            let target = message.split("]]").next().unwrap_or("").trim_start_matches("![[");
            let target = target.trim_start_matches("[[").to_string();
            let path = f["path"].as_str().unwrap().to_string();
            (f["code"].as_str().unwrap().to_string(), path, f["line"].as_u64().unwrap(), target)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn alias_links_resolve_on_every_surface_and_a_missing_attachment_is_its_own_finding() {
    let v = alias_vault();
    let s = Server::start(&[format!("a={}", v.root().display())], FAST);

    // REST: the log's links by alias lead to the notes listing them.
    let r = s.call("GET", "/links/aliases-log.md", &[], None);
    assert_eq!(r.status, 200, "{}", r.body);
    let j = r.json();
    let resolved: Vec<(String, Value)> = j["outgoing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["target"].as_str().unwrap().to_string(), l["resolved"].clone()))
        .collect();
    for (target, want) in [
        ("Boiler", json!("aliases-heating.md")),
        ("boiler", json!("aliases-heating.md")),
        ("Calorifier", json!("aliases-heating.md")),
        ("Pump house", json!("aliases-pump.md")),
        ("aliases-heating", json!("aliases-heating.md")),
        ("Shared name", json!("aliases-shared-one.md")),
        ("aliases-valve.png", Value::Null),
        ("Boiler manual", Value::Null),
    ] {
        assert!(resolved.contains(&(target.to_string(), want.clone())), "{target}: {j}");
    }

    // MCP: the heating note's backlinks count the links by alias.
    let (err, text) = tool(&s, "/mcp", "vault_links", json!({"path": "aliases-heating.md"}));
    assert!(!err, "{text}");
    assert!(text.contains("## Backlinks (4)"), "{text}");

    // A bare name an agent writes reads the note by its alias, and says so.
    let (err, text) = tool(&s, "/mcp", "vault_read", json!({"path": "calorifier"}));
    assert!(!err, "{text}");
    assert!(text.contains("# Heating") && text.contains("alias"), "{text}");

    // Search finds the note by a word only its alias holds.
    let (err, text) = tool(&s, "/mcp", "vault_search", json!({"query": "thermostore"}));
    assert!(!err, "{text}");
    assert!(text.contains("aliases-heating.md"), "{text}");

    // The link check: nothing by alias is broken; the shared alias is ambiguous, the missing
    // image a missing attachment (not a note to create), the unwritten note broken.
    let log = "aliases-log.md".to_string();
    assert_eq!(
        link_findings(&s),
        [
            ("ambiguous_link".to_string(), log.clone(), 7, "Shared name".to_string()),
            ("broken_link".to_string(), log.clone(), 9, "Boiler manual".to_string()),
            ("missing_attachment".to_string(), log.clone(), 8, "aliases-valve.png".to_string()),
        ]
    );

    // A move leaves the links by alias as they are (the alias moved with its note) and
    // repoints the one by file name.
    let before = v.read("aliases-log.md");
    let (err, text) = tool(
        &s,
        "/mcp",
        "vault_move",
        json!({"source": "aliases-heating.md", "destination": "Archive/Warmth.md"}),
    );
    assert!(!err, "{text}");
    let after = v.read("aliases-log.md");
    assert_eq!(after, before.replace("[[aliases-heating]]", "[[Warmth]]"));
    let r = s.call("GET", "/links/Archive/Warmth.md", &[], None).json();
    assert_eq!(r["backlinks"].as_array().unwrap().len(), 4, "{r}");
}

/// Direct text of a filed document (none here): the vault API asks for one.
struct NoDocuments(mdvault::docs::Extractor);

impl mdvault::vault::DocumentText for NoDocuments {
    fn extraction(
        &self,
        _rel: &str,
        bytes: &[u8],
    ) -> mdvault::Result<(String, mdvault::docs::Extraction)> {
        Ok((mdvault::vault::content_hash(bytes), self.0.extract(".pdf", bytes)))
    }
}

#[test]
fn obsidian_help_is_read_by_the_old_paths_its_aliases_keep() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    let help = TempVault::copy_of(&vaults.join("obsidian-help"));
    let vault = help.open();
    let docs =
        NoDocuments(mdvault::docs::Extractor::new(mdvault::docs::ExtractSettings::default()));
    // `Aliases.md` keeps its old path `How to/Add aliases to note` as an alias, as Publish
    // redirects do; `Ribbon.md` keeps `User interface/Workspace/Ribbon`.
    for (name, path) in [
        ("How to/Add aliases to note", "Linking notes and files/Aliases.md"),
        ("user interface/workspace/ribbon", "User interface/Ribbon.md"),
    ] {
        let read = vault.read(name, None, &docs).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(read.path, path, "{name}");
    }
}
