//! Forgiving lookups: what a pasted path probably means, and the nearest paths when it means
//! nothing.
//!
//! Agents paste paths the way links spell them: percent-encoded (`Vantor%20T60.md`), without
//! `.md`, or in the wrong case, and name notes the way wikilinks do (`Boiler` for
//! `Home/Boiler.md`, or an alias). This module proposes candidate spellings of a path that
//! does not exist as given, finds what a note name means (by the vault's own link resolution,
//! `links::resolve`, aliases included), and ranks existing paths for a refusal. It never decides
//! that a path is safe: every candidate goes through the gate (`path::gate`) like any other
//! caller's path, so a candidate cannot reach what the original could not. The operations
//! (`ops/`) use it for reads and edits of existing files, never to pick the name of a file
//! being created.

use std::path::Path;

use super::links::{self, LinkKind, PathSet};
use percent_encoding::percent_decode_str;

/// A path written the way a link is: the note it names, and the part of it the link's
/// fragment picks, as a read's `section` takes it (`A::B` for `#A#B`, `^id` for `#^id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkPath {
    /// The link's target: a path or a note name.
    pub(crate) target: String,
    /// The heading path or block the fragment names, if it names one.
    pub(crate) section: Option<String>,
    /// Written in brackets (`[[...]]`), so a link beyond doubt; a bare `Name#part` may be a
    /// file name holding a `#`.
    pub(crate) bracketed: bool,
}

/// What a path means when it is written as a wikilink (`[[Boiler#Service|the boiler]]`,
/// `![[Boiler]]`) or carries a link's fragment (`Boiler#Service`, `Home/Boiler.md#^ab12`), as
/// agents copy them out of notes; read by the vault's own link parser (`links::links`), so a
/// path means what the same link in a note means. `None` when it is written as neither.
pub(crate) fn as_link(raw: &str) -> Option<LinkPath> {
    let raw = raw.trim();
    let unembedded = raw.strip_prefix('!').unwrap_or(raw);
    let bracketed = unembedded.starts_with("[[") && unembedded.ends_with("]]");
    // Unbracketed, a `#` is a fragment only when what follows it is no file name: `C# notes.md`
    // names a note that is not there, not a heading of `C`.
    let fragment_names_a_file = raw.split_once('#').is_some_and(|(_, after)| {
        after.rsplit_once('.').is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("md"))
    });
    if !bracketed && (!raw.contains('#') || fragment_names_a_file) {
        return None;
    }
    let text = if bracketed { unembedded.to_string() } else { format!("[[{raw}]]") };
    let found = links::links(&text);
    let [link] = found.as_slice() else { return None };
    let target = link.target.trim();
    if link.kind != LinkKind::Wiki || link.span != (0..text.len()) || target.is_empty() {
        return None;
    }
    let section = link.fragment.as_deref().map(|f| {
        f.split('#').map(str::trim).filter(|part| !part.is_empty()).collect::<Vec<_>>().join("::")
    });
    let section = section.filter(|s| !s.is_empty());
    Some(LinkPath { target: target.to_string(), section, bracketed })
}

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

/// How a name found its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum By {
    /// Its file name, or the end of its path, as a wikilink finds it.
    Name,
    /// A name in the note's `aliases` frontmatter.
    Alias,
}

/// What a note name or partial path names in the vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Named {
    /// No file.
    Nothing,
    /// Exactly one file.
    One(String, By),
    /// Several files, which an edit must not choose between.
    Several(Vec<String>),
}

/// What `written` names in `paths` (the vault's link model, `Vault::link_paths`) when it does not name a
/// file as a path from the root: what a wikilink `[[written]]` at the vault root resolves to
/// (`links::resolve`: a file name anywhere in the vault, `.md` optional, or the unique path
/// ending in a partial path such as `Sub/Deep`, else a name in the notes' `aliases`, ignoring
/// case). Where Obsidian would pick the shortest of several paths, this answers all of them:
/// a caller's path must not be guessed. A leading `/` keeps meaning the vault root only.
pub(crate) fn by_name(paths: &PathSet, written: &str) -> Named {
    let written = written.trim();
    if written.is_empty() {
        return Named::Nothing;
    }
    let mut forms = vec![written.to_string()];
    if let Ok(decoded) = percent_decode_str(written).decode_utf8()
        && decoded != written
    {
        forms.push(decoded.into_owned());
    }
    for form in &forms {
        if let Some(found) = links::resolve(form, LinkKind::Wiki, "", paths) {
            let by = if links::by_an_alias(form, LinkKind::Wiki, "", paths) {
                By::Alias
            } else {
                By::Name
            };
            return match links::alternatives(form, LinkKind::Wiki, "", paths) {
                Some(all) => Named::Several(all),
                None => Named::One(found, by),
            };
        }
    }
    Named::Nothing
}

/// Up to [`SUGGESTIONS`] of `paths` nearest to `raw`: first those with the same file name
/// (ignoring case and `.md`), then by edit distance over the whole path, ignoring case. Paths
/// further than half the length of `raw` (at least 4 edits) are not suggested: a list of
/// unrelated notes teaches nothing. A bare name is also measured against file names, within
/// a third of its length (at least 1 edit).
pub(crate) fn nearest<'a>(raw: &str, paths: impl Iterator<Item = &'a str>) -> Vec<String> {
    let decoded = percent_decode_str(raw.trim()).decode_utf8_lossy();
    let want = decoded.trim_matches('/').to_lowercase();
    let want = want.strip_suffix(".md").unwrap_or(&want).to_string();
    let want_name = want.rsplit('/').next().unwrap_or(&want).to_string();
    let limit = (want.chars().count() / 2).max(4);
    let name_limit = (want.chars().count() / 3).max(1);
    let mut ranked: Vec<(bool, usize, String)> = paths
        .filter_map(|p| {
            let lower = p.to_lowercase();
            let lower = lower.strip_suffix(".md").unwrap_or(&lower);
            let name = lower.rsplit('/').next().unwrap_or(lower);
            let same_name = name == want_name;
            let whole = levenshtein(&want, lower);
            // A bare name is compared with file names too, more strictly: a short name is a
            // few edits from every short name.
            let by_name = (!want.contains('/'))
                .then(|| levenshtein(&want, name))
                .filter(|d| *d <= name_limit);
            // Among same-named paths the whole path still ranks (`Home/Boiler.md` before
            // `Archive/Boiler.md` for `Home/Boilr`).
            let distance = if same_name { whole } else { by_name.map_or(whole, |d| d.min(whole)) };
            let close = same_name || whole <= limit || by_name.is_some();
            close.then(|| (!same_name, distance, p.to_string()))
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

    #[test]
    fn a_path_written_as_a_link_names_its_note_and_the_part_its_fragment_picks() {
        let link = |raw: &str| as_link(raw).map(|l| (l.target, l.section));
        let some = |t: &str, s: Option<&str>| Some((t.to_string(), s.map(str::to_string)));
        assert_eq!(link("[[Boiler]]"), some("Boiler", None));
        assert_eq!(link(" ![[Boiler|the boiler]] "), some("Boiler", None));
        assert_eq!(link("[[Boiler#Service]]"), some("Boiler", Some("Service")));
        assert_eq!(link("Boiler#Service#Gas"), some("Boiler", Some("Service::Gas")));
        assert_eq!(link("Home/Boiler.md#^ab12"), some("Home/Boiler.md", Some("^ab12")));
        assert_eq!(link("[[Boiler#]]"), some("Boiler", None));
        // A plain path, two links, a heading of no note, and a link inside other words are
        // not links to read.
        for raw in [
            "Home/Boiler.md",
            "[[A]] and [[B]]",
            "#Service",
            "[[#Service]]",
            "see [[A]]",
            "C# notes.md",
        ] {
            assert_eq!(link(raw), None, "{raw}");
        }
    }

    use super::super::aliases;
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
            ["Home/Boiler.md", "Archive/Boiler.md", "Home/Boilers.md"]
        );
        assert_eq!(nearest("Home/Bolier", paths.iter().copied())[0], "Home/Boiler.md");
        assert!(nearest("Completely/Unrelated/Thing.md", paths.iter().copied()).is_empty());
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }

    /// A vault of `(path, text)` on disk, and its file list as the vault walks it.
    fn vault(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let at = dir.path().join(path);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
        let mut list: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
        list.sort();
        (dir, list)
    }

    #[test]
    fn a_bare_name_finds_a_unique_note_anywhere_as_a_wikilink_would() {
        let (dir, files) = vault(&[
            ("Sub/Deep.md", "x"),
            ("Sub/Sub.md", "x"),
            ("A/Twin.md", "x"),
            ("B/Twin.md", "x"),
            ("Home/Files/Contract.pdf", "x"),
        ]);
        let paths = aliases::path_set(dir.path(), &files);
        let named = |w: &str| by_name(&paths, w);
        assert_eq!(named("Deep"), Named::One("Sub/Deep.md".into(), By::Name));
        assert_eq!(named("deep.md"), Named::One("Sub/Deep.md".into(), By::Name));
        assert_eq!(named("Sub"), Named::One("Sub/Sub.md".into(), By::Name));
        assert_eq!(named("Contract.pdf"), Named::One("Home/Files/Contract.pdf".into(), By::Name));
        // A partial path is the unique path ending in it.
        assert_eq!(named("Sub/Deep"), Named::One("Sub/Deep.md".into(), By::Name));
        assert_eq!(named("Missing/Deep"), Named::Nothing);
        // Obsidian would take the shortest; a caller is told every candidate instead.
        assert_eq!(named("Twin"), Named::Several(vec!["A/Twin.md".into(), "B/Twin.md".into()]));
        // A leading slash is the vault root only.
        assert_eq!(named("/Deep"), Named::Nothing);
        assert_eq!(named("Nothing"), Named::Nothing);
        assert_eq!(named(" "), Named::Nothing);
    }

    #[test]
    fn a_bare_name_finds_a_note_by_its_aliases_in_every_list_form() {
        let (dir, files) = vault(&[
            ("Home/Heating.md", "---\naliases: [Boiler, Furnace]\n---\n# Heating\n"),
            ("Home/Pump.md", "---\naliases:\n  - Pump house\n---\n"),
            ("Home/Shed.md", "---\naliases: Garden shed\n---\n"),
            ("A/One.md", "---\naliases: [Shared]\n---\n"),
            ("B/Two.md", "---\naliases: [shared]\n---\n"),
            ("C/Boiler notes.md", "aliases: [Nope]\n"),
        ]);
        let paths = aliases::path_set(dir.path(), &files);
        let named = |w: &str| by_name(&paths, w);
        assert_eq!(named("Boiler"), Named::One("Home/Heating.md".into(), By::Alias));
        assert_eq!(named("furnace.md"), Named::One("Home/Heating.md".into(), By::Alias));
        assert_eq!(named("pump house"), Named::One("Home/Pump.md".into(), By::Alias));
        assert_eq!(named("Garden shed"), Named::One("Home/Shed.md".into(), By::Alias));
        assert_eq!(named("Shared"), Named::Several(vec!["A/One.md".into(), "B/Two.md".into()]));
        // No frontmatter block, no aliases; and a name with a folder is never an alias.
        assert_eq!(named("Nope"), Named::Nothing);
        assert_eq!(named("Home/Boiler"), Named::Nothing);
    }

    #[test]
    fn a_name_that_misses_is_compared_with_file_names_too() {
        let paths = ["Home/Heating/Boiler.md", "Travel/Rome.md"];
        assert_eq!(nearest("Boilr", paths.iter().copied()), ["Home/Heating/Boiler.md"]);
    }
}
