//! Crash hardening with the real binary: refusals that must come before any folder is made,
//! and a move record left by a killed process, settled when the next process opens the vault.
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
