//! mdvault's own checks, so a vault without a `.scripts/` folder still gets a useful
//! maintenance run. They report through the same findings contract as the vault's scripts
//! (declared once here, stable ids, severities that decide the exit code) and are listed
//! beside them.
//!
//! Severity follows the contract's meaning: `error` when something is broken or lost to the
//! tools (a section that cannot be patched, frontmatter nothing can read, a document no note
//! reaches, a date that silently stops being tracked), `warning` for drift that loses nothing
//! (a link to a missing note, a link that could mean two notes).
//!
//! What this does not do: fix anything, or read documents itself (extraction verdicts come
//! from a [`DocumentText`], normally the index's cache).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use super::expiries;
use super::findings::{CheckRun, Declaration, Finding, SCHEMA, Severity, Source};
use crate::docs::Status as Extracted;
use crate::markdown;
use crate::vault::aliases::Aliases;
use crate::vault::attachment;
use crate::vault::links::{self, PathSet};
use crate::vault::{DocumentText, Vault, frontmatter, headings};

/// The built-in checks, in run order.
const CHECKS: &[(&str, &str, &str, i64)] = &[
    (
        "links",
        "Links that lead somewhere",
        "Wikilinks and Markdown links whose target is missing (a note, or an attachment), \
         or whose bare name fits several files.",
        10,
    ),
    (
        "headings",
        "Patchable sections",
        "Headings whose whole path occurs twice in a note, so an A::B target cannot pick one.",
        20,
    ),
    (
        "frontmatter",
        "Readable frontmatter",
        "Frontmatter blocks that are not valid YAML, or that never close.",
        30,
    ),
    (
        "documents",
        "Reachable, readable documents",
        "Filed documents that no note links to, and documents that extracted to no text.",
        40,
    ),
    (
        "expiries",
        "Well-formed expiry dates",
        "expires blocks whose dates cannot be tracked as written.",
        50,
    ),
];

/// The declarations of the built-in checks.
pub(crate) fn declarations() -> Vec<Declaration> {
    CHECKS
        .iter()
        .map(|(check, title, description, order)| Declaration {
            schema: SCHEMA,
            check: check.to_string(),
            title: title.to_string(),
            description: description.to_string(),
            order: *order,
        })
        .collect()
}

/// Runs every built-in check over `notes` (path and text, as from [`super::notes`]), except
/// those named in `replaced` (a vault script of the same name runs instead). The links of
/// `canvases` (as from [`super::canvases`]) are checked and count as links like a note's; the
/// other checks are about note text and leave canvases alone.
pub(crate) fn run_all(
    vault: &Vault,
    notes: &[(String, String)],
    canvases: &[(String, String)],
    docs: &dyn DocumentText,
    replaced: &[String],
) -> Vec<CheckRun> {
    // The notes are in hand, so their aliases are read from them rather than again.
    let paths = PathSet::new(vault.all_files())
        .with_aliases(Aliases::from_notes(notes.iter().map(|(p, t)| (p.as_str(), t.as_str()))));
    let linking: Vec<&(String, String)> = notes.iter().chain(canvases).collect();
    declarations()
        .into_iter()
        .filter(|decl| !replaced.contains(&decl.check))
        .map(|decl| {
            let started = Instant::now();
            let findings = match decl.check.as_str() {
                "links" => check_links(&linking, &paths),
                "headings" => check_headings(notes),
                "frontmatter" => check_frontmatter(notes),
                "documents" => check_documents(vault, &linking, &paths, docs),
                _ => check_expiries(notes),
            };
            let ms = started.elapsed().as_millis() as u64;
            CheckRun::from_findings(decl, Source::Builtin, findings, ms)
        })
        .collect()
}

/// A link as written, shortened for a message.
fn written(text: &str, link: &links::Link) -> String {
    let s = text.get(link.span.clone()).unwrap_or("").replace('\n', " ");
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

fn check_links(notes: &[&(String, String)], paths: &PathSet) -> Vec<Finding> {
    let mut out = Vec::new();
    for (note, text) in notes {
        // Two identical links in one note are two findings; the occurrence keeps ids unique
        // without tying them to line numbers, which shift with every edit above.
        let mut seen: HashMap<(String, &'static str), usize> = HashMap::new();
        for link in links::links(text) {
            if link.is_external() {
                continue;
            }
            let shown = written(text, &link);
            match links::resolve(&link.target, link.kind, note, paths) {
                // An attachment is a file someone lost or misnamed, never a note to create.
                None if attachment::kind_of(&link.target).is_some() => {
                    let n = bump(&mut seen, &link.target, "attachment");
                    out.push(
                        Finding::new(
                            "links",
                            Severity::Warning,
                            "missing_attachment",
                            format!(
                                "{shown} shows nothing: the attachment `{}` is not in the vault; \
                                 put the file back or fix the link's name",
                                link.target
                            ),
                            Some(note),
                            Some(link.line as u64),
                            &[&link.target, &n.to_string()],
                        )
                        .about(&link.target),
                    );
                }
                None => {
                    let n = bump(&mut seen, &link.target, "broken");
                    out.push(
                        Finding::new(
                            "links",
                            Severity::Warning,
                            "broken_link",
                            format!(
                                "{shown} leads nowhere: nothing in the vault is called `{}`; fix \
                                 the target or create the note",
                                link.target
                            ),
                            Some(note),
                            Some(link.line as u64),
                            &[&link.target, &n.to_string()],
                        )
                        .about(&link.target),
                    );
                }
                Some(_) => {
                    let Some(fits) = links::alternatives(&link.target, link.kind, note, paths)
                    else {
                        continue;
                    };
                    let n = bump(&mut seen, &link.target, "ambiguous");
                    out.push(Finding::new(
                        "links",
                        Severity::Warning,
                        "ambiguous_link",
                        format!(
                            "{shown} could mean {}; it goes to {} (the shortest path), so write \
                             the path to say which",
                            fits.join(" or "),
                            fits[0]
                        ),
                        Some(note),
                        Some(link.line as u64),
                        &[&link.target, &n.to_string()],
                    )
                    .about(&link.target));
                }
            }
        }
    }
    out
}

fn bump(
    seen: &mut HashMap<(String, &'static str), usize>,
    target: &str,
    kind: &'static str,
) -> usize {
    let n = seen.entry((target.to_string(), kind)).or_insert(0);
    *n += 1;
    *n
}

fn check_headings(notes: &[(String, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (note, text) in notes {
        let mut groups: BTreeMap<Vec<String>, Vec<headings::Heading>> = BTreeMap::new();
        for h in headings::headings(text) {
            let key = h.path.iter().map(|s| headings::normalize(s)).collect();
            groups.entry(key).or_default().push(h);
        }
        for (key, group) in groups.into_iter().filter(|(_, g)| g.len() > 1) {
            let lines: Vec<String> = group.iter().map(|h| h.line.to_string()).collect();
            let shown = headings::display_path(&group[0]);
            out.push(
                Finding::new(
                    "headings",
                    Severity::Error,
                    "duplicate_heading",
                    format!(
                        "the heading `{shown}` occurs {} times (lines {}), so a patch or section \
                     read cannot pick one; rename all but one",
                        group.len(),
                        lines.join(", ")
                    ),
                    Some(note),
                    Some(group[1].line as u64),
                    &[&key.join("\u{1f}")],
                )
                .about(&shown),
            );
        }
    }
    out
}

fn check_frontmatter(notes: &[(String, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (note, text) in notes {
        match frontmatter::parse_strict(text) {
            Err(why) => out.push(Finding::new(
                "frontmatter",
                Severity::Error,
                "invalid_frontmatter",
                why,
                Some(note),
                Some(1),
                &[],
            )),
            Ok(None) => {
                let first = text.trim_start_matches('\u{feff}').lines().next().unwrap_or("");
                if markdown::is_frontmatter_fence(first) {
                    out.push(Finding::new(
                        "frontmatter",
                        Severity::Warning,
                        "unclosed_frontmatter",
                        "the note starts with `---` but no later line closes the block, so its \
                         frontmatter is read as body text; add the closing `---` line",
                        Some(note),
                        Some(1),
                        &[],
                    ));
                }
            }
            Ok(Some(_)) => {}
        }
    }
    out
}

fn check_documents(
    vault: &Vault,
    notes: &[&(String, String)],
    paths: &PathSet,
    docs: &dyn DocumentText,
) -> Vec<Finding> {
    let mut linked: HashSet<String> = HashSet::new();
    for (note, text) in notes {
        for link in links::links(text) {
            if let Some(p) = links::resolve(&link.target, link.kind, note, paths) {
                linked.insert(p);
            }
        }
    }
    let mut out = Vec::new();
    for path in paths.iter().filter(|p| vault.is_document(p)) {
        let filed = path.rsplit('/').nth(1).is_some_and(|parent| parent == vault.files_dir());
        if filed && !linked.contains(path) {
            out.push(Finding::new(
                "documents",
                Severity::Error,
                "unlinked_document",
                format!(
                    "no note links to this document, so nobody browsing the vault will find it; \
                     link it from the note that owns its folder, e.g. [[{path}]]"
                ),
                Some(path),
                None,
                &[],
            ));
        }
        let Ok(bytes) = vault.read_bytes(path) else { continue };
        let Ok((_, extraction)) = docs.extraction(path, &bytes) else { continue };
        let v = &extraction.verdict;
        let (severity, code, what) = match v.status {
            Extracted::Extracted | Extracted::Ocr => continue,
            Extracted::NoText => (Severity::Warning, "empty_extraction", "holds no text"),
            Extracted::NeedsOcr => {
                (Severity::Warning, "empty_extraction", "is a scan that was not OCR'd")
            }
            Extracted::Failed => (Severity::Error, "extraction_failed", "could not be read"),
        };
        out.push(Finding::new(
            "documents",
            severity,
            code,
            format!("the document {what}, so search cannot find it: {}", v.detail),
            Some(path),
            None,
            &[],
        ));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn check_expiries(notes: &[(String, String)]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (note, text) in notes {
        let read = expiries::read(text);
        for (n, problem) in read.problems.iter().enumerate() {
            out.push(Finding::new(
                "expiries",
                Severity::Error,
                "malformed_expires",
                problem.clone(),
                Some(note),
                None,
                &[&n.to_string()],
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::{Extraction, Verdict};
    use crate::error::Result;

    struct Verdicts;

    impl DocumentText for Verdicts {
        fn extraction(&self, rel: &str, _bytes: &[u8]) -> Result<(String, Extraction)> {
            let status =
                if rel.contains("scan") { Extracted::NeedsOcr } else { Extracted::Extracted };
            let verdict = Verdict {
                status,
                pages: 1,
                has_text_layer: status == Extracted::Extracted,
                extracted_chars: 10,
                detail: "no text layer".into(),
            };
            Ok((String::new(), Extraction { verdict, markdown: String::new() }))
        }
    }

    fn codes(run: &CheckRun) -> Vec<(String, Option<String>)> {
        run.findings.iter().map(|f| (f.code.clone(), f.path.clone())).collect()
    }

    #[test]
    fn each_check_reports_what_it_declares() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            (
                "A/Note.md",
                "[[Missing]] and [[Twin]] and [ok](../B/Twin.md) and [[Twin]]\n\
                           ![[Files/report.pdf]]\n[web](https://example.com)\n",
            ),
            ("B/Twin.md", "# H\n## Same\n## Same\n"),
            ("C/Twin.md", "---\ntitle: [unclosed\n---\n"),
            ("D/Open.md", "---\ntitle: x\n"),
            ("E/Dates.md", "---\nexpires:\n  - date: 2026-02-30\n    what: Bad day\n---\n"),
            ("A/Files/report.pdf", "%PDF"),
            ("A/Files/scan.pdf", "%PDF"),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        let settings = crate::config::VaultSettings {
            doc_suffixes: vec![".pdf".into()],
            doc_files_dir: "Files".into(),
            doc_ocr: false,
            doc_max_bytes: 0,
            timestamp_key: "timestamp".into(),
        };
        let vault = Vault::open("v", root, &settings).unwrap();
        let notes = super::super::notes(&vault, "");
        let runs = run_all(&vault, &notes, &[], &Verdicts, &[]);
        let by: HashMap<&str, &CheckRun> =
            runs.iter().map(|r| (r.declaration.check.as_str(), r)).collect();
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            codes(by["links"]),
            [
                ("broken_link".into(), some("A/Note.md")),
                ("ambiguous_link".into(), some("A/Note.md")),
                ("ambiguous_link".into(), some("A/Note.md")),
            ]
        );
        let ids: HashSet<&str> = by["links"].findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids.len(), 3, "two identical links still get distinct ids");
        assert!(by["links"].findings[1].message.contains("B/Twin.md or C/Twin.md"));
        // Each link finding names what it links to, for grouping by cause, but not in its JSON.
        let subjects: Vec<_> = by["links"].findings.iter().map(|f| f.subject.as_deref()).collect();
        assert_eq!(subjects, [Some("Missing"), Some("Twin"), Some("Twin")]);
        let json = serde_json::to_value(&by["links"].findings[0]).unwrap();
        assert!(json.get("subject").is_none(), "{json}");
        assert_eq!(by["headings"].findings[0].subject.as_deref(), Some("H::Same"));
        assert_eq!(codes(by["headings"]), [("duplicate_heading".into(), some("B/Twin.md"))]);
        assert_eq!(by["headings"].findings[0].line, Some(3));
        assert_eq!(
            codes(by["frontmatter"]),
            [
                ("invalid_frontmatter".into(), some("C/Twin.md")),
                ("unclosed_frontmatter".into(), some("D/Open.md")),
            ]
        );
        assert_eq!(
            codes(by["documents"]),
            [
                ("unlinked_document".into(), some("A/Files/scan.pdf")),
                ("empty_extraction".into(), some("A/Files/scan.pdf")),
            ]
        );
        assert_eq!(codes(by["expiries"]), [("malformed_expires".into(), some("E/Dates.md"))]);
        // Error findings make a check fail; warnings alone do not.
        assert_eq!(by["links"].exit_code, Some(0));
        assert_eq!(by["headings"].exit_code, Some(1));
        // Ids are stable from run to run.
        let again = run_all(&vault, &notes, &[], &Verdicts, &[]);
        assert_eq!(again[0].findings[0].id, runs[0].findings[0].id);
    }
}
