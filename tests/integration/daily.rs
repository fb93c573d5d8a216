//! Daily use from the shell: `mdvault status` (index coverage, without the model) and
//! `mdvault doctor` on a healthy setup and on broken ones.

use serde_json::Value;

use crate::common::{TempVault, mdvault_with, model_dir, stderr, stdout};

fn json(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

#[test]
fn status_reports_coverage_problems_skipped_files_and_stale_entries() {
    let vault = TempVault::fixture();
    vault.write("Inbox/Binary.md", "\u{0}");
    std::fs::write(vault.root().join("Inbox/Garbled.md"), b"\xff\xfe\x00 not text").unwrap();
    std::fs::write(vault.root().join("Home/photo.jpg"), b"jpeg").unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = vault.root().to_str().unwrap().to_string();
    let d = data.path().to_str().unwrap().to_string();
    let env = [
        ("MDVAULT_EMBEDDING__BACKEND", "hashing"),
        ("MDVAULT_SEARCH__EXCLUDE_DIRS", "Workflows,Reports"),
    ];
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--vault", &root, "--data-dir", &d]);
        mdvault_with(&all, &env, None)
    };

    // No index yet: say so, and how to build one.
    let o = run(&["status"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stderr(&o).contains("run `mdvault index`"), "{}", stderr(&o));

    let o = run(&["index"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["status", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = json(&o);
    let v = &s["vaults"][0];
    assert_eq!(v["notes"], 30, "28 fixture notes and the two added: {v:#}");
    assert_eq!(v["documents"], 1);
    assert_eq!(v["chunks_without_vectors"], 0);
    let problems: Vec<(&str, &str)> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    assert_eq!(problems, [("Inbox/Garbled.md", "failed")], "{v:#}");
    let reasons: Vec<&str> =
        v["skipped"].as_array().unwrap().iter().map(|s| s["reason"].as_str().unwrap()).collect();
    assert!(reasons.iter().any(|r| r.contains("(.jpg)")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.starts_with("in Workflows/")), "{reasons:?}");
    assert_eq!(v["stale"], Value::Array(vec![]));
    assert_eq!(v["last_build"]["files_seen"], 31, "{v:#}");
    assert_eq!(v["last_build"]["failed"], 1);

    // Behind the index's back: an edit, a new note and a deletion are all stale now.
    std::thread::sleep(std::time::Duration::from_millis(20));
    vault.write("Home/Boiler.md", "# Boiler\n\nReplaced in 2027.\n");
    vault.write("Inbox/New.md", "# New\n");
    std::fs::remove_file(vault.root().join("Tech/NAS.md")).unwrap();
    let o = run(&["status"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(text.contains("stale     3 entries"), "{text}");
    assert!(text.contains("Home/Boiler.md: changed on disk since it was indexed"), "{text}");
    assert!(text.contains("Inbox/New.md: on disk but not indexed yet"), "{text}");
    assert!(text.contains("Tech/NAS.md: deleted or moved on disk"), "{text}");
    assert!(text.contains("Inbox/Garbled.md [failed]: not valid UTF-8 text"), "{text}");
}

#[test]
fn doctor_passes_a_working_setup_and_names_the_fix_for_each_broken_part() {
    let vault = TempVault::fixture();
    let data = tempfile::tempdir().unwrap();
    let root = vault.root().to_str().unwrap().to_string();
    let model = model_dir();
    let good = [
        ("MDVAULT_API_KEY", "a-long-enough-test-key-1234"),
        ("MDVAULT_EMBEDDING__MODEL_DIR", model.to_str().unwrap()),
    ];
    let d = data.path().to_str().unwrap().to_string();
    let o = mdvault_with(&["doctor", "--vault", &root, "--data-dir", &d], &good, None);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    for area in ["config", "api key", "vault", "model", "store", "watcher"] {
        assert!(text.contains(&format!("ok    {area}")), "{area}: {text}");
    }
    assert!(text.contains("(384 dimensions)"), "{text}");

    // No key, no model, and a data directory that cannot be created (its parent is a file:
    // tests run as root in CI, and root may write anywhere else).
    let blocker = data.path().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let store = blocker.join("data");
    let o = mdvault_with(
        &["doctor", "--json", "--vault", &root, "--data-dir", store.to_str().unwrap()],
        &[],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let report = json(&o);
    assert_eq!(report["ok"], false);
    let failed: Vec<(&str, &str)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["level"] == "fail")
        .map(|c| (c["area"].as_str().unwrap(), c["fix"].as_str().unwrap()))
        .collect();
    let areas: Vec<&str> = failed.iter().map(|(a, _)| *a).collect();
    assert_eq!(areas, ["api key", "model", "store"], "{report:#}");
    assert!(failed[0].1.contains("export MDVAULT_API_KEY="), "{report:#}");
    assert!(failed[1].1.contains("scripts/fetch-model.sh"), "{report:#}");
    assert!(failed[2].1.contains("--data-dir"), "{report:#}");

    // A damaged store, and a configuration that does not load.
    std::fs::write(data.path().join("index.db"), b"this is not a database, only text").unwrap();
    let o = mdvault_with(&["doctor", "--vault", &root, "--data-dir", &d], &good, None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  store"), "{}", stdout(&o));
    assert!(stdout(&o).contains("move it aside"), "{}", stdout(&o));
    let mut bad = good.to_vec();
    bad.push(("MDVAULT_SEARCH__DEFAULT_K", "many"));
    let o = mdvault_with(&["doctor", "--vault", &root], &bad, None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("FAIL  config"), "{}", stdout(&o));
    assert!(stdout(&o).contains("search.default_k"), "{}", stdout(&o));
}
