//! Every vault operation through the library: what it writes, and that each refusal leaves
//! the vault byte-identical.

use mdvault::ErrorCode;
use mdvault::config::VaultEntry;
use mdvault::vault::edit::Operation;
use mdvault::vault::headings::Scope;
use mdvault::vault::patch::{PatchSpec, Spelling};
use mdvault::vault::{PatchRequest, Vault, Vaults};
use serde_json::json;

use crate::common::TempVault;

/// Reads documents by extracting them on the spot (no store, no cache).
struct Direct(mdvault::docs::Extractor);

impl Direct {
    fn new() -> Direct {
        Direct(mdvault::docs::Extractor::new(mdvault::docs::ExtractSettings::default()))
    }
}

impl mdvault::vault::DocumentText for Direct {
    fn extraction(
        &self,
        rel: &str,
        bytes: &[u8],
    ) -> mdvault::Result<(String, mdvault::docs::Extraction)> {
        let suffix = if rel.to_ascii_lowercase().ends_with(".pdf") { ".pdf" } else { "" };
        Ok((mdvault::vault::content_hash(bytes), self.0.extract(suffix, bytes)))
    }
}

const BOILER: &str = "---\ntype: appliance\ntitle: Boiler\n# kept comment\ntags: [home, heating]\ntimestamp: 2026-01-10T09:00:00Z\n---\n\n# Boiler\n\nIntro line.\n\n## Servicing\n\nLast serviced in March.\n\n### History\n\n- 2024: annual service\n\n## Settings\n\nPressure 1.2 bar.\n";

const LOG: &str = "# Log\n\n## Notes\n\nfirst\n\n## Notes\n\nsecond\n";

fn small_vault() -> TempVault {
    let v = TempVault::empty();
    v.write("Home/Boiler.md", BOILER);
    v.write("Inbox/Log.md", LOG);
    v.write("Home/Utilities/Files/2026-01-01 Bill.pdf", "%PDF-1.4 fake bytes");
    v.write(
        "Links.md",
        "See [[Boiler]] and [the boiler](Home/Boiler.md#Settings) and [[Home/Boiler|it]].\n",
    );
    v.write("index.md", "generated\n");
    v.write("notes.txt", "plain text, not a note\n");
    std::fs::create_dir_all(v.root().join("Empty")).unwrap();
    v
}

fn patch(target: &str, op: Operation, content: &str) -> PatchRequest {
    PatchSpec::new(target, op, content).build(&Spelling::TOOL).unwrap()
}

/// Runs `f`, expects refusal `code`, and checks nothing on disk changed.
fn refused(
    v: &TempVault,
    code: ErrorCode,
    f: impl FnOnce(&Vault) -> mdvault::Result<mdvault::vault::Change>,
) {
    let vault = v.open();
    let before = v.snapshot();
    let err = f(&vault).expect_err("expected a refusal");
    assert_eq!(err.code(), code, "{}", err.message());
    assert!(!err.message().is_empty());
    assert_eq!(v.snapshot(), before, "a refusal ({code}) changed the vault");
}

#[test]
fn every_refusal_leaves_the_vault_byte_identical() {
    let v = small_vault();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(v.root().join("Home"), v.root().join("Alias")).unwrap();
        std::os::unix::fs::symlink("/tmp", v.root().join("Out")).unwrap();
        std::fs::create_dir_all(v.root().join("Full/.git")).unwrap();
    }
    use ErrorCode::*;
    refused(&v, InvalidPath, |x| x.write("../escape.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.write("Home/../../escape.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.write("%2E%2E/escape.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.write("Home/%2e%2e%2f%2e%2e%2fescape.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.write(".obsidian/x.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.write("a\0b.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.write("index.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.append("index.md", "x", true, None));
    refused(&v, InvalidPath, |x| x.write("", "x", true, None));
    refused(&v, InvalidPath, |x| x.write("/", "x", true, None));
    #[cfg(unix)]
    {
        refused(&v, InvalidPath, |x| x.write("Alias/New.md", "x", true, None));
        refused(&v, InvalidPath, |x| x.append("Alias/Boiler.md", "x", false, None));
        refused(&v, InvalidPath, |x| x.write("Out/evil.md", "x", true, None));
        refused(&v, InvalidPath, |x| x.delete("Alias/Boiler.md", None));
        refused(&v, InvalidPath, |x| x.delete_folder("Full", true));
        refused(&v, InvalidPath, |x| x.delete_folder("Alias", true));
    }
    refused(&v, UnsupportedSuffix, |x| x.write("Notes/x.txt", "x", true, None));
    refused(&v, UnsupportedSuffix, |x| x.write("Home/Boiler.md/x.md", "x", true, None));
    refused(&v, UnsupportedSuffix, |x| x.create_folder("Notes/Ideas.md"));
    refused(&v, AlreadyExists, |x| x.write("Home/Boiler.md", "x", false, None));
    refused(&v, NotFound, |x| x.append("Home/Missing.md", "x", false, None));
    refused(&v, NotFound, |x| {
        x.patch("Home/Missing.md", &patch("A", Operation::Replace, "x"), None)
    });
    refused(&v, NoSuchHeading, |x| {
        x.patch("Home/Boiler.md", &patch("Nowhere", Operation::Replace, "x"), None)
    });
    refused(&v, AmbiguousHeading, |x| {
        x.patch("Inbox/Log.md", &patch("Notes", Operation::Append, "x"), None)
    });
    refused(&v, AmbiguousHeading, |x| {
        x.patch("Inbox/Log.md", &patch("Log::Notes", Operation::Append, "x"), None)
    });
    refused(&v, NoSuchText, |x| {
        x.replace_text("Home/Boiler.md", "9.9 bar", "1 bar", None, 1, None)
    });
    refused(&v, AmbiguousText, |x| {
        x.replace_text("Inbox/Log.md", "## Notes", "## N", None, 1, None)
    });
    refused(&v, NoSuchText, |x| {
        x.replace_text("Home/Boiler.md", "Pressure", "P", Some("Servicing"), 1, None)
    });
    refused(&v, NoFrontmatter, |x| {
        x.set_frontmatter("Inbox/Log.md", "status", Some(&json!("x")), None)
    });
    refused(&v, InvalidValue, |x| {
        x.set_frontmatter("Home/Boiler.md", "status", Some(&json!(null)), None)
    });
    refused(&v, InvalidValue, |x| {
        x.set_frontmatter("Home/Boiler.md", "tags", Some(&json!(["a", null])), None)
    });
    refused(&v, NotFound, |x| x.delete("Home/Missing.md", None));
    refused(&v, IsDirectory, |x| x.delete("Home", None));
    refused(&v, IsDirectory, |x| x.move_file("Home", "Elsewhere", true, None));
    refused(&v, NotEmpty, |x| x.delete_folder("Home", false));
    refused(&v, InvalidPath, |x| x.delete_folder("", true));
    refused(&v, NotADirectory, |x| x.delete_folder("notes.txt", false));
    refused(&v, AlreadyExists, |x| x.move_file("Links.md", "Home/Boiler.md", true, None));
    refused(&v, KindChange, |x| {
        x.move_file("Links.md", "Home/Utilities/Files/Links.pdf", true, None)
    });
    refused(&v, KindChange, |x| {
        x.move_file("Home/Utilities/Files/2026-01-01 Bill.pdf", "Bill.md", true, None)
    });
    refused(&v, NotFound, |x| x.move_file("Nope.md", "Nope2.md", true, None));
    refused(&v, InvalidPath, |x| x.move_file("Links.md", "index.md", true, None));
    refused(&v, IsDocument, |x| {
        x.patch(
            "Home/Utilities/Files/2026-01-01 Bill.pdf",
            &patch("A", Operation::Replace, "x"),
            None,
        )
    });
    refused(&v, IsDocument, |x| {
        x.append("Home/Utilities/Files/2026-01-01 Bill.pdf", "x", false, None)
    });
    refused(&v, IsDocument, |x| {
        x.write("Home/Utilities/Files/2026-01-01 Bill.pdf", "x", true, None)
    });
    refused(&v, IsDocument, |x| x.set_body("Home/Utilities/Files/2026-01-01 Bill.pdf", "x", None));
    refused(&v, IsDocument, |x| {
        x.set_frontmatter("Home/Utilities/Files/2026-01-01 Bill.pdf", "a", Some(&json!("b")), None)
    });
    refused(&v, Conflict, |x| x.append("Home/Boiler.md", "x", false, Some("0000")));
    refused(&v, Conflict, |x| x.move_file("Links.md", "Moved.md", true, Some("0000")));
}

#[test]
fn reads_are_refused_with_the_right_codes_too() {
    let v = small_vault();
    let vault = v.open();
    assert_eq!(
        vault.read("Home", None, &Direct::new()).unwrap_err().code(),
        ErrorCode::IsDirectory
    );
    assert_eq!(
        vault.read("Home/Missing.md", None, &Direct::new()).unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(
        vault.read("Notes/../../x.md", None, &Direct::new()).unwrap_err().code(),
        ErrorCode::InvalidPath
    );
    assert_eq!(
        vault.read("Notes/../Missing.md", None, &Direct::new()).unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(vault.list("Links.md").unwrap_err().code(), ErrorCode::NotADirectory);
    assert_eq!(vault.list("Nowhere").unwrap_err().code(), ErrorCode::NotFound);
    assert_eq!(
        vault.read("Home/Boiler.md", Some("Nope"), &Direct::new()).unwrap_err().code(),
        ErrorCode::NoSuchHeading
    );
    // A document maps to its extraction verdict; these bytes are no PDF, so reading it says so.
    let map = vault.map("Home/Utilities/Files/2026-01-01 Bill.pdf", &Direct::new()).unwrap();
    assert_eq!(map.extraction.unwrap().status, mdvault::docs::Status::Failed);
    assert_eq!(
        vault
            .read("Home/Utilities/Files/2026-01-01 Bill.pdf", None, &Direct::new())
            .unwrap_err()
            .code(),
        ErrorCode::ExtractionFailed
    );
    // The generated index is readable even though no writer may touch it.
    assert_eq!(vault.read("index.md", None, &Direct::new()).unwrap().content, "generated\n");
}

#[test]
fn read_whole_section_and_map() {
    let v = small_vault();
    let vault = v.open();
    let note = vault.read("/Home/Boiler.md", None, &Direct::new()).unwrap();
    assert_eq!(note.content, BOILER);
    assert_eq!(note.vault, "test");
    assert_eq!(note.frontmatter["title"], json!("Boiler"));
    assert!(note.body.starts_with("# Boiler\n"));
    assert_eq!(note.etag.len(), 64);

    let section = vault.read("Home/Boiler.md", Some("servicing"), &Direct::new()).unwrap();
    assert_eq!(section.section.as_deref(), Some("Boiler::Servicing"));
    assert_eq!(
        section.content,
        "## Servicing\n\nLast serviced in March.\n\n### History\n\n- 2024: annual service\n"
    );

    let map = vault.map("Home/Boiler.md", &Direct::new()).unwrap();
    let paths: Vec<&str> = map.headings.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(
        paths,
        ["Boiler", "Boiler::Servicing", "Boiler::Servicing::History", "Boiler::Settings"]
    );
    assert_eq!(map.headings[1].line, 13);
    let rendered = map.render();
    assert!(rendered.contains("- Boiler::Servicing::History (line 17)\n"), "{rendered}");
    assert!(rendered.contains("- title: \"Boiler\"\n"));
}

#[test]
fn listing_puts_folders_first_and_hides_dotted_entries() {
    let v = small_vault();
    v.write(".hidden/x.md", "x");
    v.write("zeta.md", "z");
    let listing = v.open().list("").unwrap();
    let names: Vec<&str> = listing.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["Empty", "Home", "Inbox", "index.md", "Links.md", "notes.txt", "zeta.md"]);
    assert!(listing.render().starts_with("7 entries in /:\n  Empty/\n"));
    assert_eq!(v.open().list("Empty").unwrap().render(), "Empty is empty.\n");
}

fn timestamp_of(text: &str) -> String {
    text.lines().find_map(|l| l.strip_prefix("timestamp: ")).unwrap_or("").to_string()
}

fn assert_fresh_timestamp(text: &str) {
    let ts = timestamp_of(text);
    assert_eq!(ts.len(), 20, "timestamp {ts:?}");
    assert!(ts.ends_with('Z') && &ts[10..11] == "T");
    assert_ne!(ts, "2026-01-10T09:00:00Z");
}

#[test]
fn writes_bump_the_timestamp_or_say_why_not() {
    let v = small_vault();
    let vault = v.open();

    let c = vault
        .patch("Home/Boiler.md", &patch("Settings", Operation::Replace, "Pressure 1.4 bar."), None)
        .unwrap();
    assert_eq!(c.message, "replaced 'Boiler::Settings' in Home/Boiler.md");
    assert!(c.timestamp_bumped);
    let text = v.read("Home/Boiler.md");
    assert!(text.ends_with("## Settings\n\nPressure 1.4 bar.\n"));
    assert_fresh_timestamp(&text);
    // The bump touched only the timestamp line: the comment and key order survive.
    assert!(text.starts_with(
        "---\ntype: appliance\ntitle: Boiler\n# kept comment\ntags: [home, heating]\ntimestamp: "
    ));

    let c = vault.append("Inbox/Log.md", "third", false, None).unwrap();
    assert_eq!(c.message, "appended to Inbox/Log.md (no frontmatter, so timestamp not bumped)");
    assert!(!c.timestamp_bumped);
    assert_eq!(v.read("Inbox/Log.md"), format!("{LOG}\nthird\n"));

    let c = vault.write("New/Idea.md", "---\ntitle: Idea\n---\nBody", false, None).unwrap();
    assert_eq!(c.message, "created New/Idea.md");
    let text = v.read("New/Idea.md");
    assert!(text.starts_with("---\ntitle: Idea\ntimestamp: "));
    assert!(text.ends_with("---\nBody\n"));

    let c = vault.write("New/Idea.md", "plain\r\n\r\n\r\n", true, None).unwrap();
    assert_eq!(c.message, "overwrote New/Idea.md (no frontmatter, so timestamp not bumped)");
    assert_eq!(v.read("New/Idea.md"), "plain\n");

    let c = vault.append("New/Other.md", "# Other", true, None).unwrap();
    assert_eq!(
        c.message,
        "created New/Other.md with the supplied content (no frontmatter, so timestamp not bumped)"
    );
}

#[test]
fn set_body_frontmatter_and_replace_text() {
    let v = small_vault();
    let vault = v.open();
    let head = "---\ntype: appliance\ntitle: Boiler\n# kept comment\ntags: [home, heating]\n";

    vault.set_body("Home/Boiler.md", "# New body\n", None).unwrap();
    let text = v.read("Home/Boiler.md");
    assert!(text.starts_with(head));
    assert!(text.ends_with("---\n\n# New body\n"));

    let c =
        vault.set_frontmatter("Home/Boiler.md", "status", Some(&json!("serviced")), None).unwrap();
    assert_eq!(c.message, "set 'status' in Home/Boiler.md");
    let c = vault.set_frontmatter("Home/Boiler.md", "ref", Some(&json!("0123")), None).unwrap();
    assert!(c.timestamp_bumped);
    let text = v.read("Home/Boiler.md");
    assert!(text.contains("\nstatus: serviced\n"));
    assert!(text.contains("\nref: \"0123\"\n"));
    assert_eq!(
        vault.read("Home/Boiler.md", None, &Direct::new()).unwrap().frontmatter["ref"],
        json!("0123")
    );

    let c = vault
        .set_frontmatter("Home/Boiler.md", "timestamp", Some(&json!("2020-01-01T00:00:00Z")), None)
        .unwrap();
    assert_eq!(c.message, "set 'timestamp' in Home/Boiler.md");
    assert_eq!(timestamp_of(&v.read("Home/Boiler.md")), "2020-01-01T00:00:00Z");

    let c = vault.set_frontmatter("Home/Boiler.md", "status", None, None).unwrap();
    assert_eq!(c.message, "removed 'status' in Home/Boiler.md");
    let again = vault.set_frontmatter("Home/Boiler.md", "status", None, None).unwrap();
    assert!(again.message.contains("nothing changed"));

    vault.write("R.md", "# R\n\n## A\n\nx = 1\n\n## B\n\nx = 1\n", false, None).unwrap();
    let c = vault.replace_text("R.md", "x = 1", "x = 2", Some("B"), 1, None).unwrap();
    assert_eq!(
        c.message,
        "replaced 1 occurrence of the text in R.md (no frontmatter, so timestamp not bumped)"
    );
    assert_eq!(v.read("R.md"), "# R\n\n## A\n\nx = 1\n\n## B\n\nx = 2\n");
    vault.replace_text("R.md", "x = ", "y = ", None, 2, None).unwrap();
    assert_eq!(v.read("R.md"), "# R\n\n## A\n\ny = 1\n\n## B\n\ny = 2\n");
}

#[test]
fn etags_detect_a_change_underneath() {
    let v = small_vault();
    let vault = v.open();
    let etag = vault.read("Home/Boiler.md", None, &Direct::new()).unwrap().etag;
    let c = vault.append("Home/Boiler.md", "more", false, Some(&etag)).unwrap();
    let new_etag = c.etag.unwrap();
    assert_eq!(new_etag, vault.read("Home/Boiler.md", None, &Direct::new()).unwrap().etag);
    // The old etag is now stale.
    let err = vault.append("Home/Boiler.md", "again", false, Some(&etag)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict);
    assert!(err.message().contains("read it again"));
    vault.append("Home/Boiler.md", "again", false, Some(&new_etag.to_uppercase())).unwrap();
}

#[test]
fn folders_are_created_and_deleted_with_an_account() {
    let v = small_vault();
    let vault = v.open();
    let c = vault.create_folder("Projects/2027/Q1").unwrap();
    assert_eq!(c.folders_created, ["Projects", "Projects/2027", "Projects/2027/Q1"]);
    let c = vault.create_folder("Projects/2027").unwrap();
    assert!(c.folders_created.is_empty());
    assert!(c.message.contains("already exists"));
    assert_eq!(
        vault.delete_folder("Empty", false).unwrap().message,
        "deleted the empty folder Empty"
    );
    let c = vault.delete_folder("Home", true).unwrap();
    assert_eq!(c.message, "deleted Home with 2 file(s), 1 of them document(s)");
    assert!(!v.root().join("Home").exists());
    assert_eq!(vault.delete("Links.md", None).unwrap().message, "deleted Links.md");
}

#[test]
fn a_move_rewrites_both_link_kinds_without_bumping_the_linking_notes() {
    let v = small_vault();
    let vault = v.open();
    let c = vault.move_file("Home/Boiler.md", "Appliances/Boiler.md", true, None).unwrap();
    assert_eq!(
        c.message,
        "moved Home/Boiler.md to Appliances/Boiler.md; repointed links in 1 note(s)"
    );
    assert_eq!(c.links_rewritten, Some(1));
    assert!(!v.root().join("Home/Boiler.md").exists());
    assert_fresh_timestamp(&v.read("Appliances/Boiler.md"));
    assert_eq!(
        v.read("Links.md"),
        "See [[Boiler]] and [the boiler](Appliances/Boiler.md#Settings) and [[Appliances/Boiler|it]].\n"
    );

    let c = vault.move_file("Appliances/Boiler.md", "Archive/Old Boiler.md", false, None).unwrap();
    assert!(c.message.ends_with("; links NOT updated"));
    assert!(v.read("Links.md").contains("[[Appliances/Boiler|it]]"));
}

#[test]
fn a_document_move_keeps_every_byte_and_repoints_links() {
    let v = small_vault();
    v.write(
        "Bills.md",
        "![[2026-01-01 Bill.pdf]] and [pdf](/Home/Utilities/Files/2026-01-01%20Bill.pdf)\n",
    );
    let vault = v.open();
    let before = std::fs::read(v.root().join("Home/Utilities/Files/2026-01-01 Bill.pdf")).unwrap();
    let c = vault
        .move_file(
            "Home/Utilities/Files/2026-01-01 Bill.pdf",
            "Finance/Files/2026-01-01 Power Bill.pdf",
            true,
            None,
        )
        .unwrap();
    assert_eq!(c.links_rewritten, Some(1));
    assert_eq!(
        std::fs::read(v.root().join("Finance/Files/2026-01-01 Power Bill.pdf")).unwrap(),
        before
    );
    assert_eq!(
        v.read("Bills.md"),
        "![[2026-01-01 Power Bill.pdf]] and [pdf](/Finance/Files/2026-01-01%20Power%20Bill.pdf)\n"
    );
}

#[test]
fn vaults_are_named_and_chosen_by_name() {
    let a = small_vault();
    let b = TempVault::empty();
    b.write("Only.md", "b\n");
    let data = tempfile::tempdir().unwrap();
    let mut config = crate::common::test_config(a.root(), data.path());
    config.vaults = vec![
        VaultEntry { name: "home".into(), root: a.root().to_path_buf() },
        VaultEntry { name: "work".into(), root: b.root().to_path_buf() },
    ];
    let vaults = Vaults::open(&config).unwrap();
    assert_eq!(vaults.get(None).unwrap().name(), "home");
    let note = vaults.get(Some("work")).unwrap().read("Only.md", None, &Direct::new()).unwrap();
    assert_eq!(note.vault, "work");
    let err = vaults.get(Some("play")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(err.message().contains("home, work"));
}

#[test]
fn unknown_operation_and_scope_names_are_invalid_requests() {
    assert_eq!("upsert".parse::<Operation>().unwrap_err().code(), ErrorCode::InvalidRequest);
    assert_eq!("whole".parse::<Scope>().unwrap_err().code(), ErrorCode::InvalidRequest);
    assert_eq!("markerAndContent".parse::<Scope>().unwrap(), Scope::MarkerAndContent);
}

/// Where every link of every note points: (note, link span start) -> resolved path.
fn link_targets(
    v: &TempVault,
) -> std::collections::BTreeMap<(String, String, usize), Option<String>> {
    use mdvault::vault::links::{self, PathSet};
    let vault = v.open();
    let files = vault.all_files();
    let paths = PathSet::new(files.iter().cloned());
    let mut out = std::collections::BTreeMap::new();
    for rel in files.iter().filter(|p| p.ends_with(".md")) {
        let text = v.read(rel);
        for (i, link) in links::links(&text).iter().enumerate() {
            if link.is_external() || link.target.is_empty() {
                continue;
            }
            let to = links::resolve(&link.target, link.kind, rel, &paths);
            out.insert((rel.clone(), link.target.clone(), i), to);
        }
    }
    out
}

#[test]
fn moves_in_the_fixture_vault_keep_every_link_pointing_at_the_same_note() {
    for (from, to, expect_notes) in [
        ("Home/Utilities/Broadband.md", "Home/Utilities/Fibre Broadband.md", 3),
        ("Home/Boiler.md", "Home/Heating/Boiler.md", 1),
        ("Tech/NAS.md", "Archive/Old NAS.md", 1),
    ] {
        let v = TempVault::fixture();
        let before = link_targets(&v);
        let c = v.open().move_file(from, to, true, None).unwrap();
        assert_eq!(c.links_rewritten, Some(expect_notes), "{from}: {}", c.message);
        let after = link_targets(&v);
        // Links are keyed by their position in the note; a rewritten target changes the key's
        // text, so compare per note in order.
        let order = |m: &std::collections::BTreeMap<(String, String, usize), Option<String>>| {
            let mut per: std::collections::BTreeMap<String, Vec<(usize, Option<String>)>> =
                Default::default();
            for ((note, _, i), t) in m {
                let note = if note == from { to.to_string() } else { note.clone() };
                per.entry(note).or_default().push((*i, t.clone()));
            }
            for list in per.values_mut() {
                list.sort();
            }
            per
        };
        let (b, a) = (order(&before), order(&after));
        assert_eq!(b.keys().collect::<Vec<_>>(), a.keys().collect::<Vec<_>>());
        for (note, links_before) in &b {
            for ((_, was), (_, now)) in links_before.iter().zip(&a[note]) {
                let expected =
                    if was.as_deref() == Some(from) { Some(to.to_string()) } else { was.clone() };
                assert_eq!(now, &expected, "{note}: a link changed target after moving {from}");
            }
        }
    }
}

#[test]
fn a_pasted_path_finds_the_note_it_means_and_still_passes_the_gate() {
    let v = small_vault();
    v.write("Personal/Vehicles/Vantor T60.md", "# Vantor T60\n\n## Tyres\n\nOld.\n");
    let vault = v.open();
    let docs = Direct::new();
    for pasted in [
        "/Personal/Vehicles/Vantor%20T60.md",
        "Personal/Vehicles/Vantor T60",
        "personal/vehicles/vantor t60.MD",
        "/personal/Vehicles/Vantor%20t60",
    ] {
        let read = vault.read(pasted, None, &docs).unwrap_or_else(|e| panic!("{pasted}: {e}"));
        assert_eq!(read.path, "Personal/Vehicles/Vantor T60.md", "{pasted}");
    }
    let change = vault.patch(
        "personal/vehicles/VANTOR T60",
        &patch("Tyres", Operation::Replace, "New."),
        None,
    );
    assert_eq!(change.unwrap().path, "Personal/Vehicles/Vantor T60.md");
    assert!(v.read("Personal/Vehicles/Vantor T60.md").contains("## Tyres\n\nNew.\n"));

    // A miss names the nearest paths.
    let err = vault.read("Personal/Vantor T60.md", None, &docs).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(err.message().contains("Personal/Vehicles/Vantor T60.md"), "{}", err.message());

    // Forgiveness never gets past the gate: encoded traversal, hidden and symlinked paths.
    #[cfg(unix)]
    std::os::unix::fs::symlink(v.root().join("Home"), v.root().join("Alias")).unwrap();
    std::fs::create_dir_all(v.root().join(".hidden")).unwrap();
    std::fs::write(v.root().join(".hidden/Secret.md"), "x").unwrap();
    for hostile in ["%2e%2e/escape", "..%2fescape.md", ".hidden/secret"] {
        let err = vault.read(hostile, None, &docs).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidPath, "{hostile}: {}", err.message());
    }
    // Decoded, this names a hidden note: the gate refuses that form, so it is simply not found.
    let err = vault.read("%2Ehidden/Secret.md", None, &docs).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(!err.message().contains(".hidden"), "{}", err.message());
    #[cfg(unix)]
    {
        // No form of it is read through the link (the unsuffixed path's own refusal stands).
        assert!(vault.read("alias/boiler", None, &docs).is_err());
        let err = vault.read("Alias/Boiler.md", None, &docs).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidPath);
    }
    // Creation takes the path as written: append with create_if_missing does not redirect.
    vault.append("Personal/Vehicles/New Car.md", "x", true, None).unwrap();
    assert_eq!(v.read("Personal/Vehicles/New Car.md"), "x\n");
}

#[test]
fn list_items_are_added_and_removed_without_rewriting_the_rest() {
    let v = small_vault();
    let vault = v.open();
    let c = vault.edit_list("Home/Boiler.md", "tags", &[json!("gas"), json!("home")], &[], None);
    assert!(
        c.unwrap().message.contains("'tags' in Home/Boiler.md is now ['home', 'heating', 'gas']")
    );
    let text = v.read("Home/Boiler.md");
    assert!(text.contains("# kept comment\ntags: [home, heating, gas]\n"), "{text}");
    vault.edit_list("Home/Boiler.md", "tags", &[], &[json!("heating")], None).unwrap();
    assert!(v.read("Home/Boiler.md").contains("tags: [home, gas]\n"));
    let before = v.snapshot();
    let same = vault.edit_list("Home/Boiler.md", "tags", &[json!("gas")], &[], None).unwrap();
    assert!(same.message.contains("nothing changed"), "{}", same.message);
    assert_eq!(v.snapshot(), before);
    // A missing key starts a new list.
    vault.edit_list("Home/Boiler.md", "aliases", &[json!("combi")], &[], None).unwrap();
    assert!(v.read("Home/Boiler.md").contains("aliases:\n  - combi\n"));
}

#[test]
fn the_timestamp_key_is_configurable_and_an_empty_one_turns_stamping_off() {
    let v = small_vault();
    let note = "---\ntitle: Idea\n---\nBody\n";

    let mut off = crate::common::settings();
    off.timestamp_key = String::new();
    let vault = Vault::open("t", v.root(), &off).unwrap();
    let c = vault.write("New/Idea.md", note, false, None).unwrap();
    assert_eq!(c.message, "created New/Idea.md");
    assert!(!c.timestamp_bumped);
    // Off means the writer reads back exactly what it sent.
    assert_eq!(v.read("New/Idea.md"), note);
    vault.append("New/Idea.md", "more", false, None).unwrap();
    assert_eq!(v.read("New/Idea.md"), format!("{note}\nmore\n"));

    let mut other = crate::common::settings();
    other.timestamp_key = "updated".into();
    let vault = Vault::open("t", v.root(), &other).unwrap();
    let c = vault.write("New/Idea.md", note, true, None).unwrap();
    assert!(c.timestamp_bumped);
    let text = v.read("New/Idea.md");
    assert!(text.starts_with("---\ntitle: Idea\nupdated: "), "{text}");
    assert!(!text.contains("timestamp:"), "{text}");

    // The default key still stamps.
    v.open().write("New/Idea.md", note, true, None).unwrap();
    assert_fresh_timestamp(&v.read("New/Idea.md"));
}
