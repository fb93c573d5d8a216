//! The evaluation vaults (real vaults, not ours to commit): frontmatter edits on copies of them
//! touch only their own lines, including in notes whose YAML does not parse, and `mdvault
//! check`, `/callouts` and `index-md` run over them. The vaults are optional: these tests run
//! when `MDVAULT_EVAL_VAULTS` names their folder or `MDVAULT_REQUIRE_EVAL_DATA=1` (CI) requires
//! them, and say on stderr that they were skipped otherwise (see `eval_data.rs`). The surgery
//! checks are `frontmatter_shapes.rs`'s, which also runs them over a committed fixture.

use crate::common::TempVault;
use crate::eval_data::{EVAL_VAULTS, find};
use crate::frontmatter_shapes::{edit_every_note_through_the_vault, round_trip_every_note};

#[test]
fn frontmatter_edits_through_the_vault_touch_only_their_own_lines() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    let copy = TempVault::copy_of(&vaults.join("obsidian-help"));
    let tally = edit_every_note_through_the_vault(&copy);
    assert!(tally.edited > 150, "only {} notes edited", tally.edited);
    eprintln!(
        "obsidian-help: {} edited, {} without a block, {} with YAML that does not parse",
        tally.edited, tally.no_block, tally.broken_yaml
    );
}

#[test]
fn set_then_delete_round_trips_every_note_of_the_large_vault() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    let tally = round_trip_every_note(&vaults.join("obsidian-hub"));
    assert!(tally.edited > 6000, "only {} notes checked", tally.edited);
    eprintln!(
        "obsidian-hub: {} round trips, {} with YAML that does not parse",
        tally.edited, tally.broken_yaml
    );
}

#[test]
fn the_real_vaults_run_through_check_callouts_and_index_md() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    for name in ["obsidian-help", "obsidian-hub", "foam-docs"] {
        let dir = vaults.join(name);
        let vault = format!("--vault={}", dir.display());
        // No check may fail to run; findings are the vault's business (exit 0 or 1).
        let out = crate::common::mdvault(&["check", "--json", &vault], None);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{name}: {}",
            crate::common::stderr(&out)
        );
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(run["summary"]["could_not_run"], 0, "{name}");
        assert_eq!(run["summary"]["invalid"], 0, "{name}");
        assert!(run["summary"]["checks"].as_u64().unwrap() >= 5, "{name}");

        // The server answers /callouts on the vault itself (nothing is written: index.md off).
        let s = crate::common::Server::spawn(
            &[format!("real={}", dir.display())],
            &[("MDVAULT_EMBEDDING__BACKEND", "hashing"), ("MDVAULT_INDEX__INDEX_MD", "false")],
        );
        let r = s.call("GET", "/callouts", &[], None);
        assert_eq!(r.status, 200, "{name}: {}", r.body);
        let c = r.json();
        assert!(c["counts"]["notes_scanned"].as_u64().unwrap() > 80, "{name}: {}", c["counts"]);
        // foam-docs has no open callouts; the Obsidian vaults do.
        let open = c["callouts"].as_array().unwrap().len();
        assert_eq!(open > 0, name != "foam-docs", "{name}: {open} open callouts");
        // foam-docs keeps a hand-written index.md: a note like any other, never replaced.
        if name == "foam-docs" {
            let ready = s.call("GET", "/readyz", &[], None).json();
            assert_eq!(ready["index_md"]["enabled"], false, "{ready}");
        }
    }
    // Asked for by hand (`index-md`), foam-docs' own index.md is left alone and still checked.
    let foam = TempVault::copy_of(&vaults.join("foam-docs"));
    let before = foam.read("index.md");
    let vault = format!("--vault={}", foam.root().display());
    let out = crate::common::mdvault(&["index-md", &vault], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(crate::common::stderr(&out).contains("did not generate"), "{out:?}");
    assert_eq!(foam.read("index.md"), before);
    let out = crate::common::mdvault(&["check", "--json", &vault], None);
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let links = run["checks"].as_array().unwrap().iter().find(|c| c["check"] == "links").unwrap();
    assert!(
        links["findings"].as_array().unwrap().iter().any(|f| f["path"] == "index.md"),
        "a hand-written index.md is a note, so its links are checked: {links}"
    );
    // index.md over a copy of the smaller vault: written once, then left alone.
    let copy = TempVault::copy_of(&vaults.join("obsidian-help"));
    let vault = format!("--vault={}", copy.root().display());
    let out = crate::common::mdvault(&["index-md", &vault], None);
    assert!(crate::common::stdout(&out).contains("index.md written"), "{out:?}");
    let first = copy.read("index.md");
    let out = crate::common::mdvault(&["index-md", &vault], None);
    assert!(crate::common::stdout(&out).contains("already up to date"), "{out:?}");
    assert_eq!(copy.read("index.md"), first);
}
