//! Optional evaluation data: where a test finds it, and what it does when it is not there.
//!
//! Some tests run over data that is not ours to commit (the real vaults of the evaluation
//! set). A clone must pass without it, and CI must never skip those tests silently, so the
//! rule is:
//!
//! - the data's own variable (`MDVAULT_EVAL_VAULTS=<folder>`) names where it is: the tests
//!   run over it, and a folder without the data fails them (a typo is not a skip);
//! - `MDVAULT_REQUIRE_EVAL_DATA=1`, which `.ci/run` sets, makes the data required: at the
//!   variable's folder if set, else at CI's place beside the clone (`../shared/eval/...`);
//! - with neither, the test is skipped with a line on stderr saying why and how to run it.
//!   Nothing outside the repository is looked at, not even CI's default place.
//!
//! Relative folders are taken from the repository root. This module does not know what the
//! tests do with the data; each kind of data is one [`EvalData`] constant.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Set to `1` to make every kind of optional evaluation data required (CI does).
pub const REQUIRE_VAR: &str = "MDVAULT_REQUIRE_EVAL_DATA";

/// One kind of optional evaluation data.
pub struct EvalData {
    /// What it is, as a sentence's subject: "the evaluation vaults".
    pub what: &'static str,
    /// The variable naming its folder.
    pub var: &'static str,
    /// Where CI keeps it, relative to the repository root; read only when it is required.
    pub ci_place: &'static str,
    /// A path inside the folder that must exist for the data to count as present, so that
    /// an empty or wrong folder is told apart from the real one.
    pub probe: &'static str,
}

/// The real vaults the frontmatter and upkeep checks run over.
pub const EVAL_VAULTS: EvalData = EvalData {
    what: "the evaluation vaults",
    var: "MDVAULT_EVAL_VAULTS",
    ci_place: "../shared/eval/vaults",
    probe: "obsidian-help",
};

/// What a test does about one kind of data.
#[derive(Debug, PartialEq)]
enum Decision {
    Run(PathBuf),
    Skip(String),
    Fail(String),
}

/// The rule of the module header, with the environment passed in so it can be tested.
fn decide(data: &EvalData, env: impl Fn(&str) -> Option<OsString>, repo: &Path) -> Decision {
    let set = |var: &str| env(var).filter(|v| !v.is_empty());
    let required = match set(REQUIRE_VAR) {
        None => false,
        Some(v) if v == "1" => true,
        Some(v) if v == "0" => false,
        Some(v) => {
            return Decision::Fail(format!(
                "{REQUIRE_VAR} is {v:?}; set it to 1 to require the evaluation data, or leave \
                 it unset"
            ));
        }
    };
    let (folder, asked) = match set(data.var) {
        Some(dir) => (repo.join(dir), format!("{} names it", data.var)),
        None if required => (repo.join(data.ci_place), format!("{REQUIRE_VAR}=1 requires it")),
        None => {
            return Decision::Skip(format!(
                "{} are optional and {} is not set; set {}=<folder> to run this test (CI's copy \
                 is {} beside the clone), or {REQUIRE_VAR}=1 to make their absence a failure",
                data.what, data.var, data.var, data.ci_place
            ));
        }
    };
    if folder.join(data.probe).exists() {
        Decision::Run(folder)
    } else {
        Decision::Fail(format!(
            "{} are not in {} (no {}), and {asked}; point {} at their folder",
            data.what,
            folder.display(),
            data.probe,
            data.var
        ))
    }
}

/// The folder of `data` if the calling test should run over it. `None` means skip: the
/// reason is already on stderr. Panics when the data was asked for and is missing.
pub fn find(data: &EvalData) -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    match decide(data, |var| std::env::var_os(var), repo) {
        Decision::Run(folder) => Some(folder),
        Decision::Fail(reason) => panic!("{reason}"),
        Decision::Skip(reason) => {
            // The test harness captures `eprintln!` and shows it only for failures; a skip
            // must show on a passing run, so this writes to the process's stderr directly.
            let thread = std::thread::current();
            let test = thread.name().unwrap_or("an optional test");
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {reason}");
            None
        }
    }
}

/// A repository folder with CI's place beside it, holding the data when `with_data`.
fn layout(with_data: bool) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    if with_data {
        std::fs::create_dir_all(tmp.path().join("shared/eval/vaults/obsidian-help")).unwrap();
    }
    (tmp, repo)
}

fn env_of<'a>(pairs: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
    move |var| pairs.iter().find(|(k, _)| *k == var).map(|(_, v)| OsString::from(v))
}

#[test]
fn a_missing_eval_folder_is_skipped_with_its_reason() {
    let (_tmp, repo) = layout(false);
    let Decision::Skip(reason) = decide(&EVAL_VAULTS, env_of(&[]), &repo) else {
        panic!("not a skip");
    };
    assert!(reason.contains("MDVAULT_EVAL_VAULTS is not set"), "{reason}");
    assert!(reason.contains("MDVAULT_REQUIRE_EVAL_DATA=1"), "{reason}");
    assert!(reason.contains("../shared/eval/vaults"), "{reason}");
}

#[test]
fn ci_s_place_is_not_read_unless_the_data_is_required() {
    let (_tmp, repo) = layout(true);
    assert!(matches!(decide(&EVAL_VAULTS, env_of(&[]), &repo), Decision::Skip(_)));
    let empty = [(REQUIRE_VAR, ""), ("MDVAULT_EVAL_VAULTS", "")];
    assert!(matches!(decide(&EVAL_VAULTS, env_of(&empty), &repo), Decision::Skip(_)));
    let off = [(REQUIRE_VAR, "0")];
    assert!(matches!(decide(&EVAL_VAULTS, env_of(&off), &repo), Decision::Skip(_)));
}

#[test]
fn required_data_is_found_at_ci_s_place_and_fails_when_absent() {
    let (_tmp, repo) = layout(true);
    let on = [(REQUIRE_VAR, "1")];
    assert_eq!(
        decide(&EVAL_VAULTS, env_of(&on), &repo),
        Decision::Run(repo.join("../shared/eval/vaults"))
    );
    let (_tmp, repo) = layout(false);
    let Decision::Fail(reason) = decide(&EVAL_VAULTS, env_of(&on), &repo) else {
        panic!("not a failure");
    };
    assert!(reason.contains("MDVAULT_REQUIRE_EVAL_DATA=1 requires it"), "{reason}");
    assert!(reason.contains("shared/eval/vaults"), "{reason}");
}

#[test]
fn a_named_folder_runs_and_a_wrong_one_fails_required_or_not() {
    let (tmp, repo) = layout(true);
    let there = tmp.path().join("shared/eval/vaults");
    for require in ["", "1"] {
        let named = [("MDVAULT_EVAL_VAULTS", there.to_str().unwrap()), (REQUIRE_VAR, require)];
        assert_eq!(decide(&EVAL_VAULTS, env_of(&named), &repo), Decision::Run(there.clone()));
        let wrong = [("MDVAULT_EVAL_VAULTS", "no/such/folder"), (REQUIRE_VAR, require)];
        let Decision::Fail(reason) = decide(&EVAL_VAULTS, env_of(&wrong), &repo) else {
            panic!("not a failure");
        };
        assert!(reason.contains("MDVAULT_EVAL_VAULTS names it"), "{reason}");
        assert!(reason.contains(&repo.join("no/such/folder").display().to_string()));
    }
}

#[test]
fn an_unexpected_value_of_the_ci_variable_is_refused() {
    let (_tmp, repo) = layout(true);
    let odd = [(REQUIRE_VAR, "true")];
    let Decision::Fail(reason) = decide(&EVAL_VAULTS, env_of(&odd), &repo) else {
        panic!("not a failure");
    };
    assert!(reason.contains("set it to 1"), "{reason}");
}
