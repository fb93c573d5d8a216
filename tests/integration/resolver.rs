//! The heading resolver over every fixture note: every heading is reachable by its full path
//! unless another heading has the identical path, and no repeated leaf is ever picked silently.

use mdvault::ErrorCode;
use mdvault::vault::headings::{self, Heading};

use crate::common::fixture_root;

fn fixture_notes() -> Vec<(String, String)> {
    let root = fixture_root();
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "md") {
            let rel = entry.path().strip_prefix(&root).unwrap().to_string_lossy().into_owned();
            out.push((rel, std::fs::read_to_string(entry.path()).unwrap()));
        }
    }
    assert!(out.len() >= 20, "the fixture vault is missing notes");
    out
}

fn norm_path(h: &Heading) -> Vec<String> {
    h.path.iter().map(|s| headings::normalize(s)).collect()
}

#[test]
fn every_heading_resolves_to_itself_by_full_path() {
    let (mut checked, mut twins) = (0, 0);
    for (rel, text) in fixture_notes() {
        let all = headings::headings(&text);
        for h in &all {
            if h.text.trim().is_empty() {
                continue;
            }
            let same_path = all.iter().filter(|o| norm_path(o) == norm_path(h)).count();
            let result = headings::resolve(&all, &headings::display_path(h), &rel);
            if same_path > 1 {
                let err = result.expect_err("identical full paths must be ambiguous");
                assert_eq!(err.code(), ErrorCode::AmbiguousHeading, "{rel}: {}", h.text);
                twins += 1;
            } else {
                let got = result.unwrap_or_else(|e| panic!("{rel}: {} -> {}", h.text, e.message()));
                assert_eq!(got.line, h.line, "{rel}: {}", h.text);
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} headings checked");
    assert!(twins >= 2, "the fixture must carry two identical full paths");
}

#[test]
fn a_repeated_leaf_is_refused_or_resolved_by_the_exact_path_rule() {
    let mut repeated = 0;
    for (rel, text) in fixture_notes() {
        let all = headings::headings(&text);
        for h in &all {
            let leaf = headings::normalize(&h.text);
            if leaf.is_empty() {
                continue;
            }
            let same_leaf: Vec<&Heading> =
                all.iter().filter(|o| headings::normalize(&o.text) == leaf).collect();
            let result = headings::resolve(&all, &h.text, &rel);
            if same_leaf.len() == 1 {
                assert_eq!(result.unwrap().line, h.line, "{rel}: {}", h.text);
                continue;
            }
            repeated += 1;
            let top_level: Vec<&&Heading> =
                same_leaf.iter().filter(|o| o.path.len() == 1).collect();
            match result {
                Ok(got) => {
                    assert_eq!(
                        top_level.len(),
                        1,
                        "{rel}: '{}' picked without an exact path",
                        h.text
                    );
                    assert_eq!(got.line, top_level[0].line);
                }
                Err(e) => {
                    assert_eq!(e.code(), ErrorCode::AmbiguousHeading);
                    assert_ne!(
                        top_level.len(),
                        1,
                        "{rel}: '{}' should resolve by exact path",
                        h.text
                    );
                    for o in &same_leaf {
                        assert!(
                            e.message().contains(&headings::display_path(o)),
                            "{rel}: message misses {}",
                            headings::display_path(o)
                        );
                    }
                }
            }
        }
    }
    assert!(repeated >= 4, "the fixture must carry repeated leaf headings");
}
