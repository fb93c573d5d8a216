//! Forgiving lookups: what a pasted path probably means, and the nearest paths when it means
//! nothing.
//!
//! Agents paste paths the way links spell them: percent-encoded (`Vantor%20T60.md`), without
//! `.md`, or in the wrong case. This module only proposes candidate spellings of a path that
//! does not exist as given, and ranks existing paths for a `not_found` answer. It never decides
//! that a path is safe: every candidate goes through the gate (`path::gate`) like any other
//! caller's path, so a candidate cannot reach what the original could not. The operations
//! (`ops.rs`) use it for reads and edits of existing files, never to pick the name of a file
//! being created.

use std::path::Path;

use percent_encoding::percent_decode_str;

/// How many paths a `not_found` answer suggests.
pub(crate) const SUGGESTIONS: usize = 3;

/// The spellings to try, in order, for a path that is not there as written: percent-decoded
/// (once), and each with `.md` added when it has no `.md` suffix. The path as written is not
/// among them.
pub(crate) fn candidates(raw: &str) -> Vec<String> {
    let raw = raw.trim();
    let mut forms = vec![raw.to_string()];
    if raw.contains('%')
        && let Ok(decoded) = percent_decode_str(raw).decode_utf8()
        && decoded != raw
    {
        forms.push(decoded.into_owned());
    }
    let mut out = Vec::new();
    for form in forms {
        if !form.to_ascii_lowercase().ends_with(".md") {
            out.push(format!("{}.md", form.trim_end_matches('/')));
        }
        out.push(form);
    }
    out.retain(|c| c != raw);
    out.dedup();
    out
}

/// `rel` with each component replaced by the one entry of its folder that equals it ignoring
/// case, when there is exactly one; `None` when a component has no such entry or several.
/// Hidden entries and symlinks are never offered (the gate would refuse them anyway).
pub(crate) fn case_insensitive(root: &Path, rel: &str) -> Option<String> {
    let mut dir = root.to_path_buf();
    let mut out: Vec<String> = Vec::new();
    for part in rel.trim().trim_matches('/').split('/').filter(|p| !p.is_empty() && *p != ".") {
        let want = part.to_lowercase();
        let mut found = None;
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // Links are not followed, so the walk never lists a folder outside the vault.
            let link = entry.file_type().map_or(true, |t| t.is_symlink());
            if link || name.starts_with('.') || name.to_lowercase() != want {
                continue;
            }
            if found.is_some() {
                return None;
            }
            found = Some(name);
        }
        let name = found?;
        dir.push(&name);
        out.push(name);
    }
    (!out.is_empty()).then(|| out.join("/"))
}

/// Up to [`SUGGESTIONS`] of `paths` nearest to `raw`: first those with the same file name
/// (ignoring case and `.md`), then by edit distance over the whole path, ignoring case. Paths
/// further than half the length of `raw` (at least 4 edits) are not suggested: a list of
/// unrelated notes teaches nothing.
pub(crate) fn nearest<'a>(raw: &str, paths: impl Iterator<Item = &'a str>) -> Vec<String> {
    let decoded = percent_decode_str(raw.trim()).decode_utf8_lossy();
    let want = decoded.trim_matches('/').to_lowercase();
    let want = want.strip_suffix(".md").unwrap_or(&want).to_string();
    let want_name = want.rsplit('/').next().unwrap_or(&want).to_string();
    let limit = (want.chars().count() / 2).max(4);
    let mut ranked: Vec<(bool, usize, String)> = paths
        .filter_map(|p| {
            let lower = p.to_lowercase();
            let lower = lower.strip_suffix(".md").unwrap_or(&lower);
            let name = lower.rsplit('/').next().unwrap_or(lower);
            let same_name = name == want_name;
            let distance = levenshtein(&want, lower);
            (same_name || distance <= limit).then(|| (!same_name, distance, p.to_string()))
        })
        .collect();
    ranked.sort();
    ranked.into_iter().take(SUGGESTIONS).map(|(_, _, p)| p).collect()
}

/// The number of single-character insertions, deletions and substitutions from `a` to `b`.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let above = row[j + 1];
            row[j + 1] = if ca == b[j] { diagonal } else { 1 + diagonal.min(above).min(row[j]) };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_decode_once_and_add_the_note_suffix() {
        assert_eq!(
            candidates("/Personal/Vehicles/Vantor%20T60.md"),
            ["/Personal/Vehicles/Vantor T60.md"]
        );
        assert_eq!(candidates("Home/Boiler"), ["Home/Boiler.md"]);
        assert_eq!(candidates("A%20B"), ["A%20B.md", "A B.md", "A B"]);
        assert!(candidates("Home/Boiler.md").is_empty());
    }

    #[test]
    fn case_is_forgiven_only_when_one_entry_matches() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("Home")).unwrap();
        std::fs::write(dir.path().join("Home/Boiler.md"), "x").unwrap();
        assert_eq!(
            case_insensitive(dir.path(), "home/BOILER.md").as_deref(),
            Some("Home/Boiler.md")
        );
        assert_eq!(case_insensitive(dir.path(), "home/missing.md"), None);
        std::fs::write(dir.path().join("Home/boiler.md"), "y").unwrap();
        if std::fs::read_dir(dir.path().join("Home")).unwrap().count() == 2 {
            assert_eq!(case_insensitive(dir.path(), "home/BOILER.md"), None, "two would match");
        }
    }

    #[test]
    fn the_nearest_paths_share_the_file_name_or_are_a_few_edits_away() {
        let paths = ["Home/Boiler.md", "Archive/Boiler.md", "Home/Boilers.md", "Travel/Rome.md"];
        assert_eq!(
            nearest("Boiler.md", paths.iter().copied()),
            ["Home/Boiler.md", "Archive/Boiler.md"]
        );
        assert_eq!(nearest("Home/Bolier", paths.iter().copied())[0], "Home/Boiler.md");
        assert!(nearest("Completely/Unrelated/Thing.md", paths.iter().copied()).is_empty());
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
