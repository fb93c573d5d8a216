//! Dated commitments: the `expires` frontmatter key, read per note and gathered into a report of
//! what falls due when.
//!
//! A note either lists dates,
//!
//! ```yaml
//! expires:
//!   - date: 2026-09-25
//!     what: Annual boiler service due
//! ```
//!
//! or says `expires: none` with an `expires_reason` (reviewed, deliberately untracked), or has
//! no `expires` key at all (never reviewed: untracked). Anything else is malformed, with a
//! message telling the author what to write instead.
//!
//! Deliberately not done: this module never edits notes, never reads the clock (the caller
//! passes `today`), and does not guess at dates in other shapes (`2026-9-5`, `25/09/2026`,
//! timestamps): only `YYYY-MM-DD` counts, so every tool reading the vault agrees on it.

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::vault::frontmatter::{locate, parse_strict};

/// One dated commitment of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dated {
    /// When it falls due.
    pub(crate) date: NaiveDate,
    /// What falls due, as written (trimmed).
    pub(crate) what: String,
}

/// What a note says about its expiry dates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    /// No frontmatter, or no `expires` key: nobody has reviewed the note for dates.
    Untracked,
    /// `expires: none` with a reason: reviewed, nothing to track.
    Dismissed {
        /// The `expires_reason`, trimmed.
        reason: String,
    },
    /// The valid dates (at least one); bad sibling items are in the problems.
    Dates(Vec<Dated>),
    /// Nothing usable; the problems say why.
    Malformed,
}

/// A note's expiry state plus everything wrong with how it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteExpiries {
    /// The state.
    pub(crate) state: State,
    /// One message per problem, each saying what to fix. Empty when nothing is malformed; a
    /// `Dates` state may carry problems for the items it had to leave out.
    pub(crate) problems: Vec<String>,
}

impl NoteExpiries {
    fn untracked() -> Self {
        NoteExpiries { state: State::Untracked, problems: Vec::new() }
    }

    fn malformed(problem: String) -> Self {
        NoteExpiries { state: State::Malformed, problems: vec![problem] }
    }
}

/// How each list item should look, quoted in messages so the author can copy it.
const ITEM_SHAPE: &str = "`- date: YYYY-MM-DD` with `what: <what falls due>` on the next line";

/// Reads one note's `expires` (and `expires_reason`) from its frontmatter.
pub(crate) fn read(text: &str) -> NoteExpiries {
    let map = match parse_strict(text) {
        Ok(Some(map)) => map,
        Ok(None) => return NoteExpiries::untracked(),
        Err(message) => {
            // The block is broken, but if it visibly has an `expires` key the author meant to
            // track dates, and silently calling the note untracked would hide them.
            return if has_expires_line(text) {
                NoteExpiries::malformed(format!(
                    "the frontmatter does not parse, so its expires dates are not tracked: \
                     {message}"
                ))
            } else {
                NoteExpiries::untracked()
            };
        }
    };
    let Some(value) = map.get("expires") else {
        return NoteExpiries::untracked();
    };
    match value {
        Value::String(s) if s.trim().eq_ignore_ascii_case("none") => dismissal(&map),
        Value::Array(items) => dates(items),
        Value::Null => NoteExpiries::malformed(format!(
            "`expires` is empty; list the dates under it as {ITEM_SHAPE}, or write \
             `expires: none` with an `expires_reason` saying why nothing needs tracking"
        )),
        Value::String(s) if parse_date(s).is_some() => NoteExpiries::malformed(format!(
            "`expires` is a bare date ({}); write it as a list item, {ITEM_SHAPE}",
            s.trim()
        )),
        Value::Object(fields) if fields.contains_key("date") => NoteExpiries::malformed(format!(
            "`expires` is a single mapping, not a list; put `- ` before `date:` (and indent \
             `what:` to match) so it reads as {ITEM_SHAPE}"
        )),
        other => NoteExpiries::malformed(format!(
            "`expires` is {}; write a list of dates, each as {ITEM_SHAPE}, or `expires: none` \
             with an `expires_reason`",
            describe(other)
        )),
    }
}

/// True when the block has a column-0 `expires:` line, read without parsing the YAML.
fn has_expires_line(text: &str) -> bool {
    locate(text).is_some_and(|block| {
        text[block.yaml_start..block.yaml_end].lines().any(|line| line.starts_with("expires:"))
    })
}

fn dismissal(map: &Map<String, Value>) -> NoteExpiries {
    match map.get("expires_reason") {
        Some(Value::String(reason)) if !reason.trim().is_empty() => NoteExpiries {
            state: State::Dismissed { reason: reason.trim().to_string() },
            problems: Vec::new(),
        },
        Some(other @ (Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_))) => {
            NoteExpiries::malformed(format!(
                "`expires: none` needs an `expires_reason` saying why; it is {}, write it as a \
                 sentence",
                describe(other)
            ))
        }
        _ => NoteExpiries::malformed(
            "`expires: none` needs an `expires_reason` saying why; add a line such as \
             `expires_reason: reference note, nothing lapses`"
                .to_string(),
        ),
    }
}

fn dates(items: &[Value]) -> NoteExpiries {
    if items.is_empty() {
        return NoteExpiries::malformed(format!(
            "`expires` is an empty list; add dates as {ITEM_SHAPE}, or write `expires: none` \
             with an `expires_reason`"
        ));
    }
    let mut valid = Vec::new();
    let mut problems = Vec::new();
    for (idx, item) in items.iter().enumerate() {
        match item_of(item) {
            Ok(dated) => valid.push(dated),
            Err(what_is_wrong) => problems.push(format!(
                "`expires` item {}: {what_is_wrong}; each item needs {ITEM_SHAPE}",
                idx + 1
            )),
        }
    }
    // With no usable item the note tracks nothing, which is what Malformed means.
    let state = if valid.is_empty() { State::Malformed } else { State::Dates(valid) };
    NoteExpiries { state, problems }
}

/// One list item, or everything wrong with it in one sentence.
fn item_of(item: &Value) -> Result<Dated, String> {
    let Value::Object(fields) = item else {
        return Err(match item {
            Value::String(s) if parse_date(s).is_some() => {
                format!("is a bare date ({}) with no `what`", s.trim())
            }
            other => format!("is {}, not a `date`/`what` mapping", describe(other)),
        });
    };
    let mut wrong = Vec::new();
    let date = match fields.get("date") {
        None | Some(Value::Null) => {
            wrong.push("`date` is missing".to_string());
            None
        }
        Some(Value::String(s)) => {
            let date = parse_date(s);
            if date.is_none() {
                wrong.push(format!(
                    "`date` {} is not a real calendar date written YYYY-MM-DD",
                    s.trim()
                ));
            }
            date
        }
        Some(other) => {
            wrong.push(format!("`date` is {}, not a YYYY-MM-DD date", describe(other)));
            None
        }
    };
    let what = match fields.get("what") {
        None | Some(Value::Null) => {
            wrong.push("`what` is missing".to_string());
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            wrong.push("`what` is empty".to_string());
            None
        }
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(other) => {
            wrong.push(format!("`what` is {}; write it as text (quote it)", describe(other)));
            None
        }
    };
    match (date, what) {
        (Some(date), Some(what)) if wrong.is_empty() => Ok(Dated { date, what }),
        _ => Err(wrong.join(", ")),
    }
}

/// A strict `YYYY-MM-DD`: chrono alone would also take `2026-9-5` or `+2026-09-05`.
fn parse_date(s: &str) -> Option<NaiveDate> {
    let s = s.trim();
    let shaped = s.len() == 10
        && s.bytes()
            .enumerate()
            .all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if !shaped {
        return None;
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "empty".to_string(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(s) => format!("the text `{}`", s.trim()),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "a mapping".to_string(),
    }
}

/// What to include in a [`report`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Query {
    /// Keep only dates at most this many days away (lapsed dates are always kept). None keeps
    /// every date.
    pub(crate) within: Option<i64>,
    /// List the untracked notes by path, not just count them.
    pub(crate) list_untracked: bool,
}

/// One dated commitment in a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The note's vault-relative path.
    pub(crate) note: String,
    /// When it falls due.
    pub(crate) date: NaiveDate,
    /// What falls due.
    pub(crate) what: String,
    /// `date - today` in days; negative once lapsed.
    pub(crate) days: i64,
}

/// A note that says `expires: none`, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dismissal {
    /// The note's vault-relative path.
    pub(crate) note: String,
    /// Its `expires_reason`.
    pub(crate) reason: String,
}

/// One thing wrong with a note's `expires`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The note's vault-relative path.
    pub(crate) note: String,
    /// What is wrong and how to fix it.
    pub(crate) problem: String,
}

/// Every note's expiry dates, relative to one day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The day `days` counts from.
    pub(crate) today: NaiveDate,
    /// How many notes were read.
    pub(crate) notes_scanned: usize,
    /// One row per date (a note with three dates gives three), oldest first, then by note
    /// path, then by `what`; filtered by [`Query::within`].
    pub(crate) entries: Vec<Entry>,
    /// How many entries have lapsed (`days < 0`).
    pub(crate) lapsed: usize,
    /// Notes that say `expires: none`, sorted by path.
    pub(crate) dismissed: Vec<Dismissal>,
    /// How many notes have no `expires` key (or no frontmatter).
    pub(crate) untracked_count: usize,
    /// Their paths, sorted; only when [`Query::list_untracked`] is set.
    pub(crate) untracked: Option<Vec<String>>,
    /// Every problem, by note path, in the order found within a note.
    pub(crate) malformed: Vec<Problem>,
}

/// Reads `notes` (vault-relative path, text) and reports their dates relative to `today`.
pub(crate) fn report<I: IntoIterator<Item = (String, String)>>(
    notes: I,
    today: NaiveDate,
    query: &Query,
) -> Report {
    let mut notes_scanned = 0;
    let mut entries = Vec::new();
    let mut dismissed = Vec::new();
    let mut untracked = Vec::new();
    let mut malformed = Vec::new();
    for (note, text) in notes {
        notes_scanned += 1;
        let found = read(&text);
        for problem in found.problems {
            malformed.push(Problem { note: note.clone(), problem });
        }
        match found.state {
            State::Untracked => untracked.push(note),
            State::Dismissed { reason } => dismissed.push(Dismissal { note, reason }),
            State::Dates(dated) => {
                for Dated { date, what } in dated {
                    let days = (date - today).num_days();
                    // Lapsed dates always show: a small window must not hide what is overdue.
                    if days < 0 || query.within.is_none_or(|n| days <= n) {
                        entries.push(Entry { note: note.clone(), date, what, days });
                    }
                }
            }
            State::Malformed => {}
        }
    }
    entries.sort_by(|a, b| (a.date, &a.note, &a.what).cmp(&(b.date, &b.note, &b.what)));
    dismissed.sort_by(|a, b| a.note.cmp(&b.note));
    untracked.sort();
    // Stable, so a note's problems keep the order they were found in.
    malformed.sort_by(|a, b| a.note.cmp(&b.note));
    Report {
        today,
        notes_scanned,
        lapsed: entries.iter().filter(|e| e.days < 0).count(),
        entries,
        dismissed,
        untracked_count: untracked.len(),
        untracked: query.list_untracked.then_some(untracked),
        malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn note(yaml: &str) -> String {
        format!("---\ntitle: t\n{yaml}---\n# Body\n")
    }

    fn problems(yaml: &str) -> Vec<String> {
        let got = read(&note(yaml));
        assert!(!got.problems.is_empty(), "{yaml:?} gave no problem: {got:?}");
        got.problems
    }

    fn only_problem(yaml: &str) -> String {
        let got = read(&note(yaml));
        assert_eq!(got.state, State::Malformed, "{yaml:?}");
        assert_eq!(got.problems.len(), 1, "{got:?}");
        got.problems[0].clone()
    }

    fn notes(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    }

    #[test]
    fn reads_a_list_of_dates() {
        let got = read(&note(
            "expires:\n  - date: 2026-09-25\n    what: Annual boiler service due\n  - date: \
             2027-01-31\n    what: '  Warranty ends '\n    owner: me\n",
        ));
        assert_eq!(got.problems, Vec::<String>::new());
        assert_eq!(
            got.state,
            State::Dates(vec![
                Dated { date: day("2026-09-25"), what: "Annual boiler service due".into() },
                Dated { date: day("2027-01-31"), what: "Warranty ends".into() },
            ])
        );
    }

    #[test]
    fn a_quoted_date_reads_like_a_bare_one() {
        for date in ["\"2026-09-25\"", "'2026-09-25'", "2026-09-25"] {
            let got = read(&note(&format!("expires:\n  - date: {date}\n    what: x\n")));
            assert_eq!(
                got.state,
                State::Dates(vec![Dated { date: day("2026-09-25"), what: "x".into() }])
            );
        }
    }

    #[test]
    fn untracked_without_frontmatter_or_key() {
        assert_eq!(read("# Just a body\n"), NoteExpiries::untracked());
        assert_eq!(read(&note("")), NoteExpiries::untracked());
        assert_eq!(read("---\n---\n"), NoteExpiries::untracked());
        // `expires_reason` alone is not a decision about dates.
        assert_eq!(read(&note("expires_reason: why\n")), NoteExpiries::untracked());
    }

    #[test]
    fn none_with_and_without_a_reason() {
        let got = read(&note("expires: none\nexpires_reason: '  evergreen reference '\n"));
        assert_eq!(got.state, State::Dismissed { reason: "evergreen reference".into() });
        assert!(got.problems.is_empty());
        let got = read(&note("expires: None\nexpires_reason: x\n"));
        assert_eq!(got.state, State::Dismissed { reason: "x".into() });
        for yaml in [
            "expires: none\n",
            "expires: NONE\nexpires_reason: ''\n",
            "expires: none\nexpires_reason:\n",
        ] {
            let p = only_problem(yaml);
            assert!(p.contains("`expires: none` needs an `expires_reason` saying why"), "{p}");
        }
        let p = only_problem("expires: none\nexpires_reason: 42\n");
        assert!(
            p.contains("needs an `expires_reason` saying why") && p.contains("a number"),
            "{p}"
        );
    }

    #[test]
    fn malformed_whole_values() {
        let p = only_problem("expires:\n");
        assert!(p.contains("`expires` is empty") && p.contains("expires: none"), "{p}");
        let p = only_problem("expires: []\n");
        assert!(p.contains("empty list"), "{p}");
        let p = only_problem("expires: 2026-09-25\n");
        assert!(p.contains("bare date (2026-09-25)") && p.contains("- date: YYYY-MM-DD"), "{p}");
        let p = only_problem("expires:\n  date: 2026-09-25\n  what: x\n");
        assert!(p.contains("single mapping") && p.contains("put `- ` before `date:`"), "{p}");
        let p = only_problem("expires:\n  when: soon\n");
        assert!(p.contains("is a mapping"), "{p}");
        let p = only_problem("expires: 12\n");
        assert!(p.contains("a number (12)"), "{p}");
        let p = only_problem("expires: soon\n");
        assert!(p.contains("the text `soon`"), "{p}");
        let p = only_problem("expires: true\n");
        assert!(p.contains("a boolean"), "{p}");
    }

    #[test]
    fn each_bad_item_is_one_problem_and_good_siblings_stay() {
        let yaml = "expires:\n  - date: 2026-09-25\n    what: good\n  - 2026-10-01\n  - what: no date\n  - date: 2026-02-30\n    what: bad day\n  - date: 2026-03-01\n  - date: 2026-03-02\n    what: '  '\n  - date: 20260303\n    what: number\n  - [a]\n  - date: 2026-9-5\n    what: short\n  - date: 2026-03-04\n    what: 7\n  - {}\n";
        let got = read(&note(yaml));
        assert_eq!(
            got.state,
            State::Dates(vec![Dated { date: day("2026-09-25"), what: "good".into() }])
        );
        let p = &got.problems;
        assert_eq!(p.len(), 10, "{p:#?}");
        assert!(
            p[0].starts_with("`expires` item 2: is a bare date (2026-10-01) with no `what`"),
            "{}",
            p[0]
        );
        assert!(p[1].starts_with("`expires` item 3: `date` is missing;"), "{}", p[1]);
        assert!(
            p[2].starts_with("`expires` item 4: `date` 2026-02-30 is not a real calendar date"),
            "{}",
            p[2]
        );
        assert!(p[3].starts_with("`expires` item 5: `what` is missing;"), "{}", p[3]);
        assert!(p[4].starts_with("`expires` item 6: `what` is empty;"), "{}", p[4]);
        assert!(p[5].starts_with("`expires` item 7: `date` is a number (20260303)"), "{}", p[5]);
        assert!(
            p[6].starts_with("`expires` item 8: is a list, not a `date`/`what` mapping"),
            "{}",
            p[6]
        );
        assert!(
            p[7].starts_with("`expires` item 9: `date` 2026-9-5 is not a real calendar date"),
            "{}",
            p[7]
        );
        assert!(p[8].starts_with("`expires` item 10: `what` is a number (7)"), "{}", p[8]);
        assert!(
            p[9].starts_with("`expires` item 11: `date` is missing, `what` is missing;"),
            "{}",
            p[9]
        );
        assert!(p.iter().all(|m| m.contains("each item needs `- date: YYYY-MM-DD`")));
    }

    #[test]
    fn a_list_with_no_good_item_is_malformed() {
        let p = problems("expires:\n  - date: 2026-13-01\n    what: x\n");
        assert_eq!(p.len(), 1);
        assert_eq!(
            read(&note("expires:\n  - date: 2026-13-01\n    what: x\n")).state,
            State::Malformed
        );
        let p = problems("expires:\n  - nope\n");
        assert!(p[0].contains("item 1: is the text `nope`"), "{}", p[0]);
    }

    #[test]
    fn unparseable_frontmatter_with_and_without_an_expires_line() {
        let text = "---\ntitle: [unclosed\nexpires:\n  - date: 2026-09-25\n    what: x\n---\n";
        let got = read(text);
        assert_eq!(got.state, State::Malformed);
        assert_eq!(got.problems.len(), 1);
        assert!(
            got.problems[0]
                .starts_with("the frontmatter does not parse, so its expires dates are not tracked: the frontmatter is not valid YAML"),
            "{}",
            got.problems[0]
        );
        assert_eq!(read("---\ntitle: [unclosed\n---\n"), NoteExpiries::untracked());
        // Indented or prefixed lookalikes are not the key.
        assert_eq!(
            read("---\ntitle: [unclosed\n  expires: x\nexpires_reason: y\n---\n"),
            NoteExpiries::untracked()
        );
        // A block that parses to something other than a mapping counts as unparseable too.
        let got = read("---\n- expires: 2026-01-01\nexpires: x\n---\n");
        assert_eq!(got.state, State::Malformed);
    }

    #[test]
    fn report_rows_are_per_date_and_sorted() {
        let a = note(
            "expires:\n  - date: 2026-12-01\n    what: a late\n  - date: 2026-06-01\n    what: a \
             early\n  - date: 2026-06-01\n    what: a early\n",
        );
        let b = note(
            "expires:\n  - date: 2026-09-01\n    what: b mid\n  - date: 2026-06-01\n    what: b same day\n",
        );
        let r = report(notes(&[("b.md", &b), ("a.md", &a)]), day("2026-05-01"), &Query::default());
        let got: Vec<(&str, String, &str, i64)> = r
            .entries
            .iter()
            .map(|e| (e.note.as_str(), e.date.to_string(), e.what.as_str(), e.days))
            .collect();
        assert_eq!(
            got,
            [
                ("a.md", "2026-06-01".to_string(), "a early", 31),
                ("a.md", "2026-06-01".to_string(), "a early", 31),
                ("b.md", "2026-06-01".to_string(), "b same day", 31),
                ("b.md", "2026-09-01".to_string(), "b mid", 123),
                ("a.md", "2026-12-01".to_string(), "a late", 214),
            ]
        );
        assert_eq!((r.notes_scanned, r.lapsed, r.today), (2, 0, day("2026-05-01")));
    }

    #[test]
    fn within_keeps_every_lapsed_date() {
        let a = note(
            "expires:\n  - date: 2020-01-01\n    what: long gone\n  - date: 2026-05-10\n    what: \
             soon\n  - date: 2026-05-20\n    what: later\n  - date: 2026-04-30\n    what: \
             yesterday\n",
        );
        let today = day("2026-05-01");
        let run = |within| {
            let r = report(notes(&[("a.md", &a)]), today, &Query { within, list_untracked: false });
            let whats: Vec<String> = r.entries.iter().map(|e| e.what.clone()).collect();
            (whats, r.lapsed)
        };
        assert_eq!(run(Some(9)), (vec!["long gone".into(), "yesterday".into(), "soon".into()], 2));
        assert_eq!(run(Some(8)), (vec!["long gone".into(), "yesterday".into()], 2));
        assert_eq!(run(Some(0)), (vec!["long gone".into(), "yesterday".into()], 2));
        assert_eq!(run(Some(-30)), (vec!["long gone".into(), "yesterday".into()], 2));
        assert_eq!(run(None).0.len(), 4);
        let r = report(notes(&[("a.md", &a)]), today, &Query::default());
        assert_eq!(r.entries[1].days, -1);
    }

    #[test]
    fn report_dismissed_untracked_and_malformed() {
        let list = notes(&[
            ("z.md", &note("expires: none\nexpires_reason: reference\n")),
            ("m.md", "# no frontmatter\n"),
            ("d.md", &note("expires: none\nexpires_reason: archive\n")),
            ("c.md", &note("")),
            ("bad.md", &note("expires: none\n")),
            (
                "mixed.md",
                &note(
                    "expires:\n  - date: 2026-06-01\n    what: ok\n  - date: x\n    what: y\n  - 3\n",
                ),
            ),
        ]);
        let today = day("2026-05-01");
        let r = report(list.clone(), today, &Query::default());
        assert_eq!(r.notes_scanned, 6);
        let dismissed: Vec<(&str, &str)> =
            r.dismissed.iter().map(|d| (d.note.as_str(), d.reason.as_str())).collect();
        assert_eq!(dismissed, [("d.md", "archive"), ("z.md", "reference")]);
        assert_eq!(r.untracked_count, 2);
        assert_eq!(r.untracked, None);
        let bad: Vec<&str> = r.malformed.iter().map(|p| p.note.as_str()).collect();
        assert_eq!(bad, ["bad.md", "mixed.md", "mixed.md"]);
        assert!(r.malformed[1].problem.contains("item 2"));
        assert!(r.malformed[2].problem.contains("item 3"));
        assert_eq!(r.entries.len(), 1);
        assert_eq!(r.entries[0].note, "mixed.md");

        let r = report(list, today, &Query { within: None, list_untracked: true });
        assert_eq!(r.untracked, Some(vec!["c.md".to_string(), "m.md".to_string()]));
        assert_eq!(r.untracked_count, 2);
    }
}
