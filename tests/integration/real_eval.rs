//! The real-vault query sets (`tests/eval/real/`): judged queries written from the notes of the
//! evaluation vaults, graded, split into a train and a test half. Their shape is checked
//! always; the obsidian-help set runs against its committed baseline when the vaults are there
//! (required in CI, see `eval_data.rs`). The obsidian-hub set is run by hand (docs/search.md):
//! embedding its 6,571 notes with the local model takes far longer than the suite may.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{mdvault_with, model_dir, stderr, stdout};
use crate::eval_data::{EVAL_VAULTS, find};

fn real_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/eval/real")
}

fn read(name: &str) -> Value {
    let text = std::fs::read_to_string(real_dir().join(name)).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn each_real_set_is_graded_and_split_evenly_per_arm() {
    let mut total = 0;
    for name in ["obsidian-help.json", "obsidian-hub.json"] {
        let queries = read(name)["queries"].as_array().unwrap().clone();
        total += queries.len();
        // Per arm: how many in train, how many in test.
        let mut halves: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for q in &queries {
            let text = q["q"].as_str().unwrap();
            let gains = q["expect"].as_object().unwrap_or_else(|| panic!("{text}: not graded"));
            assert!(gains.values().any(|g| g.as_f64() == Some(2.0)), "{text}: no answer graded 2");
            let half = halves.entry(q["arm"].as_str().unwrap().to_string()).or_default();
            match q["split"].as_str() {
                Some("train") => half.0 += 1,
                Some("test") => half.1 += 1,
                other => panic!("{text}: split {other:?}"),
            }
        }
        assert_eq!(halves.len(), 3, "{name}: lexical, dense and either: {halves:?}");
        for (arm, (train, test)) in &halves {
            assert!(train.abs_diff(*test) <= 1, "{name}: {arm} splits {train}/{test}");
        }
    }
    assert!(total >= 100, "the issue asks for at least 100 graded queries, there are {total}");
    // The gate below names its baseline by the arithmetic `auto` runs, which is any of these.
    for encoder in ["amx", "int8", "int8-f32-attention", "bf16", "f32"] {
        let file = format!("obsidian-help.{encoder}.baseline.json");
        assert_eq!(read(&file)["queries"], "obsidian-help.json", "{file}");
    }
}

#[test]
fn the_obsidian_help_set_holds_its_baseline_without_a_never_leak() {
    let Some(vaults) = find(&EVAL_VAULTS) else { return };
    let data = tempfile::tempdir().unwrap();
    // One baseline per arithmetic: int8, which `auto` runs on AVX-512 CPUs without AMX, moves
    // a few ranks against bf16, and again with attention in f32 where the CPU lacks AVX-512
    // BF16 (amx and f32 hold bf16's, and keep copies of it).
    let (queries, baseline) = (
        real_dir().join("obsidian-help.json"),
        real_dir().join("obsidian-help.{encoder}.baseline.json"),
    );
    let vault = vaults.join("obsidian-help");
    let model = model_dir();
    // Default settings: no config file, only the model's folder.
    let o = mdvault_with(
        &[
            "eval",
            queries.to_str().unwrap(),
            "--vault",
            vault.to_str().unwrap(),
            "--data-dir",
            data.path().to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
            "--json",
        ],
        &[("MDVAULT_EMBEDDING__MODEL_DIR", model.to_str().unwrap())],
        None,
    );
    let report: Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(o.status.code(), Some(0), "{report:#}\n{}", stderr(&o));
    assert_eq!(report["count"], 60, "{report:#}");
    assert_eq!(report["leaks"], 0, "{report:#}");
    assert!(report["encoder"].is_string(), "the local model's arithmetic is reported: {report:#}");
    assert_eq!(report["baseline"]["regressions"], Value::Array(vec![]), "{report:#}");
    let modes: Vec<&str> =
        report["modes"].as_array().unwrap().iter().map(|m| m["mode"].as_str().unwrap()).collect();
    assert_eq!(modes, ["lexical", "dense", "hybrid"], "{report:#}");
}
