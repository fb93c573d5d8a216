//! The maintenance findings as a person reads them: one verdict over the run, each check headed
//! by what it found (never "passed" beside a count of warnings), and its findings grouped by
//! cause (one code about one subject, such as one missing attachment named from 31 notes), each
//! group named and given its fix in plain words, its notes behind a toggle.
//!
//! The run comes from `service::maintenance` as REST and MCP get it; this module only sorts and
//! words it. A finding's subject is the one its check named ([`Finding::subject`]) or, for a
//! vault's own script, its `target` key.

use std::collections::{BTreeSet, HashMap};

use maud::{Markup, html};

use crate::api::web::url;
use crate::upkeep::findings::{CheckRun, Finding, Run, Severity, Status};

/// Findings that share a cause: one check's code about one subject.
struct Group<'a> {
    code: &'a str,
    subject: Option<&'a str>,
    /// The worst severity among them.
    severity: Severity,
    findings: Vec<&'a Finding>,
}

impl Group<'_> {
    /// The distinct files named.
    fn files(&self) -> usize {
        self.findings.iter().filter_map(|f| f.path.as_deref()).collect::<BTreeSet<_>>().len()
    }
}

/// What a group is called and how to fix it, in people's words.
struct Words {
    /// Before the subject, e.g. `Missing attachment`.
    lead: String,
    /// After the subject, e.g. `, which is not in the vault`.
    tail: &'static str,
    /// The fix; `None` for a code this page does not know (each finding's message says it).
    fix: Option<&'static str>,
    /// What the files named are: notes, or documents.
    noun: (&'static str, &'static str),
    /// Whether each finding's own message is worth showing under the group (it differs from
    /// finding to finding, as a parser's complaint does).
    each_message: bool,
}

const NOTES: (&str, &str) = ("note", "notes");
const DOCUMENTS: (&str, &str) = ("document", "documents");

/// The words for a built-in code; a vault's own code is named from its snake_case.
fn words(code: &str) -> Words {
    let w = |lead: &str, tail, fix, noun, each_message| Words {
        lead: lead.to_string(),
        tail,
        fix: Some(fix),
        noun,
        each_message,
    };
    match code {
        "missing_attachment" => w(
            "Missing attachment",
            ": the notes show nothing in its place",
            "Put the file back in the vault, or change the links to the name it has now.",
            NOTES,
            false,
        ),
        "broken_link" => w(
            "Links to",
            ", which is nowhere in the vault",
            "Create the note, or change the links to a note that exists.",
            NOTES,
            false,
        ),
        "ambiguous_link" => w(
            "Links to",
            ", a name several files share",
            "Write the folder in the link (as in [[Folder/Name]]) so it says which file.",
            NOTES,
            true,
        ),
        "duplicate_heading" => w(
            "The heading",
            " occurs twice in one note",
            "Rename all but one, so an edit or a section read can tell them apart.",
            NOTES,
            true,
        ),
        "invalid_frontmatter" => w(
            "Properties that cannot be read",
            "",
            "Correct the properties block at the top of the note; each note says what is wrong.",
            NOTES,
            true,
        ),
        "unclosed_frontmatter" => w(
            "A properties block that never closes",
            "",
            "Add a line of three dashes (---) after the last property.",
            NOTES,
            false,
        ),
        "unlinked_document" => w(
            "Filed documents no note links to",
            "",
            "Link each from the note that owns its folder, so someone browsing finds it.",
            DOCUMENTS,
            false,
        ),
        "empty_extraction" => w(
            "Documents with no text to search",
            "",
            "Run OCR on the scan, or file a copy that has its text.",
            DOCUMENTS,
            true,
        ),
        "extraction_failed" => w(
            "Documents that could not be read",
            "",
            "Check that the file opens; replace it if it is damaged.",
            DOCUMENTS,
            true,
        ),
        "malformed_expires" => w(
            "Expiry dates that cannot be tracked",
            "",
            "Write each as a date (expires: 2027-03-31) or a list of date and what.",
            NOTES,
            true,
        ),
        other => {
            let mut lead = other.replace('_', " ");
            if let Some(first) = lead.get(..1) {
                lead = first.to_uppercase() + &lead[1..];
            }
            Words { lead, tail: "", fix: None, noun: NOTES, each_message: true }
        }
    }
}

/// The subject a finding is about: its check's, or a script's `target` key.
fn subject(f: &Finding) -> Option<&str> {
    f.subject.as_deref().or_else(|| f.extra.get("target").and_then(|t| t.as_str()))
}

/// A check's findings grouped by cause, the worst and then the largest groups first.
fn groups(check: &CheckRun) -> Vec<Group<'_>> {
    let mut index: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    let mut out: Vec<Group> = Vec::new();
    for f in &check.findings {
        let key = (f.code.as_str(), subject(f));
        let at = *index.entry(key).or_insert_with(|| {
            out.push(Group { code: key.0, subject: key.1, severity: f.severity, findings: vec![] });
            out.len() - 1
        });
        out[at].severity = out[at].severity.min(f.severity);
        out[at].findings.push(f);
    }
    // Stable: equal groups keep the order the check reported them in.
    out.sort_by(|a, b| a.severity.cmp(&b.severity).then(b.findings.len().cmp(&a.findings.len())));
    out
}

fn plural(n: usize, (one, many): (&str, &str)) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One verdict over the run: the worst thing first, in words, with its class.
fn verdict(run: &Run) -> (&'static str, String) {
    let s = run.summary();
    let broken = s.could_not_run + s.invalid;
    if broken > 0 {
        let checks = plural(broken, ("check", "checks"));
        let errors = plural(s.errors, ("problem", "problems"));
        let warnings = plural(s.warnings, ("warning", "warnings"));
        return (
            "error",
            format!(
                "{checks} did not finish or broke the contract, so this list may be incomplete; \
                 {errors} and {warnings} found."
            ),
        );
    }
    if s.errors > 0 {
        return (
            "error",
            format!(
                "{} to fix, and {} worth a look.",
                plural(s.errors, ("problem", "problems")),
                plural(s.warnings, ("warning", "warnings"))
            ),
        );
    }
    if s.warnings > 0 {
        return (
            "notice",
            format!(
                "Nothing is broken, but {} are worth a look.",
                plural(s.warnings, ("warning", "warnings"))
            ),
        );
    }
    ("ok", "All clear: no check found anything.".to_string())
}

/// What one check found, said once (the label beside its title).
fn check_label(c: &CheckRun) -> (&'static str, String) {
    match c.status {
        Status::CouldNotRun => ("error", "could not run".into()),
        Status::Invalid => ("error", "broke the contract".into()),
        Status::Legacy => ("info", "its own text, below".into()),
        Status::Passed | Status::Failed if c.counts.error > 0 => {
            ("error", plural(c.counts.error, ("problem", "problems")))
        }
        _ if c.counts.warning > 0 => ("warning", plural(c.counts.warning, ("warning", "warnings"))),
        _ if c.counts.info > 0 => ("info", plural(c.counts.info, ("remark", "remarks"))),
        _ => ("ok", "nothing found".into()),
    }
}

/// A link to the finding's file at its line.
fn finding_link(vault: &str, f: &Finding) -> Markup {
    html! {
        @if let Some(path) = &f.path {
            @let href = match f.line { Some(l) => format!("{}&line={l}", url::note(vault, path)), None => url::note(vault, path) };
            a href=(href) { (path) @if let Some(l) = f.line { ", line " (l) } }
        }
    }
}

/// One group: its cause and count as the toggle, the fix and the files inside.
fn group_markup(vault: &str, check: &str, n: usize, g: &Group) -> Markup {
    let w = words(g.code);
    let files = g.files();
    html! {
        details.group id=(format!("group-{check}-{n}")) {
            summary {
                span class=(format!("label sev-{}", g.severity.as_str())) { (g.severity.as_str()) }
                " " (w.lead)
                @if let Some(s) = g.subject { " " code { (s) } }
                (w.tail) ": "
                strong.group-count {
                    @if files == 0 { (plural(g.findings.len(), ("finding", "findings"))) }
                    @else { (plural(files, w.noun)) }
                    @if files > 0 && g.findings.len() > files { " (" (g.findings.len()) " places)" }
                }
            }
            @if let Some(fix) = w.fix { p.fix { strong { "Fix: " } (fix) } }
            ul.findings {
                @for f in &g.findings {
                    li {
                        (finding_link(vault, f))
                        @if w.each_message || f.path.is_none() {
                            @if f.path.is_some() { " · " }
                            (f.message)
                        }
                    }
                }
            }
        }
    }
}

/// The maintenance page's body below its tabs: the verdict, then each check.
pub(crate) fn report(vault: &str, run: &Run) -> Markup {
    let (class, said) = verdict(run);
    html! {
        p #run-verdict class=(format!("run-verdict {class}")) { (said) }
        p.meta { (run.checks.len()) " checks ran in " (run.duration_ms) " ms at " (super::utc_words(&run.generated_at)) "." }
        @for check in &run.checks {
            @let (label_class, label) = check_label(check);
            @let name = &check.declaration.check;
            section.check id=(format!("check-{name}")) {
                h2 { (check.declaration.title) " " span class=(format!("label sev-{label_class}")) { (label) } }
                p.meta { (check.declaration.description) }
                @if let Some(e) = &check.error { p.error { (e) } }
                @for p in &check.problems { p.error { (p) } }
                @if let Some(o) = &check.output { pre.output { (o) } }
                @for (n, g) in groups(check).iter().enumerate() { (group_markup(vault, name, n, g)) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upkeep::findings::{Counts, Declaration, Source};

    fn check(findings: Vec<Finding>) -> CheckRun {
        let decl = Declaration {
            schema: 2,
            check: "links".into(),
            title: "Broken links".into(),
            description: "d".into(),
            order: 1,
        };
        CheckRun::from_findings(decl, Source::Builtin, findings, 1)
    }

    fn missing(note: &str, target: &str, line: u64) -> Finding {
        Finding::new(
            "links",
            Severity::Warning,
            "missing_attachment",
            format!("![[{target}]] shows nothing"),
            Some(note),
            Some(line),
            &[target, &line.to_string()],
        )
        .about(target)
    }

    fn run_of(checks: Vec<CheckRun>) -> Run {
        Run { vault: "v".into(), generated_at: "t".into(), duration_ms: 1, checks }
    }

    #[test]
    fn findings_about_one_attachment_make_one_group_counting_its_notes() {
        let c = check(vec![
            missing("A.md", "x.png", 1),
            missing("B.md", "y.png", 1),
            missing("B.md", "x.png", 4),
            missing("B.md", "x.png", 9),
        ]);
        let g = groups(&c);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].subject, g[0].findings.len(), g[0].files()), (Some("x.png"), 3, 2));
        assert_eq!((g[1].subject, g[1].files()), (Some("y.png"), 1));
        let html = group_markup("v", "links", 0, &g[0]).into_string();
        assert!(html.contains("Missing attachment <code>x.png</code>"), "{html}");
        assert!(html.contains("2 notes (3 places)"), "{html}");
        assert!(html.contains("Fix: "), "{html}");
    }

    #[test]
    fn errors_sort_before_warnings_and_a_script_target_is_a_subject() {
        let mut scripted =
            Finding::new("own", Severity::Error, "stale_review", "old", Some("C.md"), None, &[]);
        scripted.extra.insert("target".into(), "Q3".into());
        let c = check(vec![missing("A.md", "x.png", 1), scripted]);
        let g = groups(&c);
        assert_eq!((g[0].code, g[0].subject), ("stale_review", Some("Q3")));
        assert_eq!(words("stale_review").lead, "Stale review");
        assert!(words("stale_review").fix.is_none());
    }

    #[test]
    fn warnings_alone_never_read_as_passed() {
        let run = run_of(vec![check(vec![missing("A.md", "x.png", 1)])]);
        let (class, said) = verdict(&run);
        assert_eq!(class, "notice");
        assert!(said.contains("1 warning"), "{said}");
        assert_eq!(check_label(&run.checks[0]), ("warning", "1 warning".to_string()));
        let html = report("v", &run).into_string();
        assert!(!html.to_lowercase().contains("passed"), "{html}");
        let clean = run_of(vec![check(vec![])]);
        assert_eq!(verdict(&clean).0, "ok");
        assert_eq!(check_label(&clean.checks[0]).1, "nothing found");
        let mut broken = check(vec![]);
        broken.status = Status::CouldNotRun;
        broken.counts = Counts::default();
        assert_eq!(verdict(&run_of(vec![broken])).0, "error");
    }
}
