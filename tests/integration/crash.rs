//! Crash hardening with the real binary: refusals that must come before any folder is made,
//! and a move or tag-rename record left by a killed process, settled when the next process
//! opens the vault.
//!
//! The records here are planted by hand, in the format `src/vault/journal.rs` writes, as a
//! process killed between two renames of a move would leave them. `scripts/crash-test.sh`
//! kills a real server instead.

use std::path::Path;

use mdvault::vault::content_hash;
use serde_json::json;

use crate::common::{Server, TempVault, mdvault_with};

const HASHING: &[(&str, &str)] = &[("MDVAULT_EMBEDDING__BACKEND", "hashing")];

/// A process id no process has: above every Linux `pid_max` (2^22), so the temporaries named
/// after it belong to a dead writer.
const DEAD_PID: u32 = 4_194_305;

#[test]
fn a_name_longer_than_the_filesystem_takes_is_refused_before_any_folder_is_made() {
    let v = TempVault::fixture();
    let s = Server::spawn(&[format!("fixture={}", v.root().display())], HASHING);
    s.wait_index_md();
    let before = v.snapshot();
    let long = "n".repeat(300);

    let r = s.call("PUT", &format!("/vault/New/Deeper/{long}.md"), &[], Some(b"# x\n"));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("at most 255 bytes"), "{}", r.body);

    let body = json!({ "destination": format!("Elsewhere/{long}.md") }).to_string();
    let r = s.call("POST", "/move/Home/Boiler.md", &[], Some(body.as_bytes()));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);

    // Every name fits, the whole does not.
    let deep = format!("{}/x.md", vec!["f".repeat(200); 21].join("/"));
    let r = s.call("PUT", &format!("/vault/{deep}"), &[], Some(b"# x\n"));
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("4096-byte"), "{}", r.body);

    let r = s.call("PUT", &format!("/folder/{long}"), &[], None);
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_path"), "{}", r.body);

    assert_eq!(v.snapshot(), before, "a refused write left something behind");
}

/// The texts of a move of `Target.md` to `Sub/Renamed.md` with three linking notes.
struct Plan {
    target_old: String,
    target_new: String,
    links_old: Vec<String>,
    links_new: Vec<String>,
}

fn plan() -> Plan {
    Plan {
        target_old: "# Target\n".into(),
        target_new: "# Target\n".into(),
        links_old: (0..3).map(|n| format!("see [[Target]] {n}\n")).collect(),
        links_new: (0..3).map(|n| format!("see [[Renamed]] {n}\n")).collect(),
    }
}

fn temp(n: usize) -> String {
    format!(".mdvault-{DEAD_PID}-tmp{n:03}.tmp")
}

fn hash(s: &str) -> String {
    content_hash(s.as_bytes())
}

/// Lays out what a server killed after committing the destination and the first linking note
/// leaves: those two done (the first note's original kept aside), the other two notes still
/// old with their new text staged, the source still there (kept aside too), and the record.
fn plant_interrupted_move(root: &Path, data: &Path) {
    let p = plan();
    let w = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w("Target.md", &p.target_old);
    w(&temp(0), &p.target_old); // the source's kept original
    w("Sub/Renamed.md", &p.target_new);
    w("L0.md", &p.links_new[0]);
    w(&temp(1), &p.links_old[0]); // L0's kept original
    for n in 1..3 {
        w(&format!("L{n}.md"), &p.links_old[n]);
        w(&temp(10 + n), &p.links_new[n]); // staged
        w(&temp(20 + n), &p.links_old[n]); // kept
    }
    let mut steps = vec![json!({
        "path": "Sub/Renamed.md", "old": null, "new": hash(&p.target_new),
        "staged": temp(30), "kept": null
    })];
    steps.push(json!({
        "path": "L0.md", "old": hash(&p.links_old[0]), "new": hash(&p.links_new[0]),
        "staged": temp(10), "kept": temp(1)
    }));
    for n in 1..3 {
        steps.push(json!({
            "path": format!("L{n}.md"), "old": hash(&p.links_old[n]), "new": hash(&p.links_new[n]),
            "staged": temp(10 + n), "kept": temp(20 + n)
        }));
    }
    steps.push(json!({
        "path": "Target.md", "old": hash(&p.target_old), "new": null,
        "staged": null, "kept": temp(0)
    }));
    let record = json!({
        "version": 1, "vault": "fixture", "root": root.canonicalize().unwrap(),
        "pid": DEAD_PID, "from": "Target.md", "to": "Sub/Renamed.md",
        "made": ["Sub"], "steps": steps
    });
    std::fs::create_dir_all(data.join("journal")).unwrap();
    std::fs::write(data.join("journal/move-1-1-0.json"), record.to_string()).unwrap();
}

fn temporaries(root: &Path) -> Vec<String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".mdvault-"))
        .collect()
}

#[test]
fn a_server_started_after_a_killed_move_finishes_it_and_sweeps_the_temporaries() {
    let v = TempVault::empty();
    let data = tempfile::tempdir().unwrap();
    plant_interrupted_move(v.root(), data.path());
    // Debris of an unrelated write by the same dead process, and a lookalike that is not ours.
    v.write(&format!("Inbox/.mdvault-{DEAD_PID}-abcdef.tmp"), "half a note");
    v.write("Inbox/.mdvault-notes.tmp", "someone else's");

    let spec = format!("fixture={}", v.root().display());
    let s = Server::start_in(&[spec], HASHING, data.path());
    let p = plan();
    assert!(!v.root().join("Target.md").exists(), "the source is still there");
    assert_eq!(v.read("Sub/Renamed.md"), p.target_new);
    for n in 0..3 {
        assert_eq!(v.read(&format!("L{n}.md")), p.links_new[n], "L{n} was not repointed");
    }
    assert_eq!(temporaries(v.root()), vec![".mdvault-notes.tmp".to_string()]);
    assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
    drop(s);
}

#[test]
fn a_command_started_after_a_killed_move_whose_staged_text_is_gone_undoes_it_and_says_so() {
    let v = TempVault::empty();
    let data = tempfile::tempdir().unwrap();
    plant_interrupted_move(v.root(), data.path());
    // L2's staged text was removed by hand: the move cannot be finished.
    std::fs::remove_file(v.root().join(temp(12))).unwrap();

    let spec = format!("fixture={}", v.root().display());
    let out = mdvault_with(
        &["--data-dir", data.path().to_str().unwrap(), "--vault", &spec, "ls"],
        &[],
        None,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("rolled back"), "{log}");
    assert!(log.contains("Target.md") && log.contains("L2.md"), "{log}");
    let p = plan();
    assert_eq!(v.read("Target.md"), p.target_old);
    assert!(!v.root().join("Sub").exists(), "the destination's folder is still there");
    for n in 0..3 {
        assert_eq!(v.read(&format!("L{n}.md")), p.links_old[n], "L{n} was not put back");
    }
    assert!(temporaries(v.root()).is_empty(), "{:?}", temporaries(v.root()));
    assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
}

/// The notes of a rename of #old to #new: each note's text before and after.
fn retag_notes() -> Vec<(String, String, String)> {
    (0..3)
        .map(|n| {
            let path = format!("T{n}.md");
            (
                path,
                format!("---\ntags: [old]\n---\nnote #old {n}\n"),
                format!("---\ntags: [new]\n---\nnote #new {n}\n"),
            )
        })
        .collect()
}

/// Lays out what a process killed in a tag's rename after committing the first note leaves:
/// that note done (its original kept aside), the other two still old with their new text
/// staged and their originals kept, and the record.
fn plant_interrupted_retag(root: &Path, data: &Path) {
    let notes = retag_notes();
    let w = |rel: &str, text: &str| std::fs::write(root.join(rel), text).unwrap();
    let mut steps = Vec::new();
    for (n, (path, old, new)) in notes.iter().enumerate() {
        w(path, if n == 0 { new } else { old });
        w(&temp(40 + n), new); // staged
        w(&temp(50 + n), old); // kept
        steps.push(json!({
            "path": path, "old": hash(old), "new": hash(new),
            "staged": temp(40 + n), "kept": temp(50 + n)
        }));
    }
    // The first note's staged text was renamed into place.
    std::fs::remove_file(root.join(temp(40))).unwrap();
    let record = json!({
        "version": 1, "kind": "retag", "vault": "fixture", "root": root.canonicalize().unwrap(),
        "pid": DEAD_PID, "from": "old", "to": "new", "made": [], "steps": steps
    });
    std::fs::create_dir_all(data.join("journal")).unwrap();
    std::fs::write(data.join("journal/retag-1-1-0.json"), record.to_string()).unwrap();
}

#[test]
fn a_tag_rename_killed_mid_way_is_finished_or_undone_whole_by_the_next_process() {
    // (remove a staged text before the restart, what every note must then read)
    for (lose_staged, finished) in [(false, true), (true, false)] {
        let v = TempVault::empty();
        let data = tempfile::tempdir().unwrap();
        plant_interrupted_retag(v.root(), data.path());
        if lose_staged {
            std::fs::remove_file(v.root().join(temp(42))).unwrap();
        }
        let spec = format!("fixture={}", v.root().display());
        let out = mdvault_with(
            &["--data-dir", data.path().to_str().unwrap(), "--vault", &spec, "ls"],
            &[],
            None,
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(log.contains("the rename of the tag #old to #new"), "{log}");
        assert!(log.contains(if finished { "rolled forward" } else { "rolled back" }), "{log}");
        for (path, old, new) in retag_notes() {
            assert_eq!(v.read(&path), if finished { new } else { old }, "{path}: a mix");
        }
        assert!(temporaries(v.root()).is_empty(), "{:?}", temporaries(v.root()));
        assert_eq!(std::fs::read_dir(data.path().join("journal")).unwrap().count(), 0);
    }
}
