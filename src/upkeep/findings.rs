//! The findings contract: what a check declares, what it reports, and what one run of all the
//! checks adds up to.
//!
//! This module owns the schema-2 JSON shapes that the vault's checker scripts print and that
//! mdvault hands back to clients: the [`Declaration`] (`--describe`), the [`Finding`] and its
//! stable id scheme ([`finding_id`]), the reading of a script's findings envelope with every
//! contract violation named ([`parse_envelope`]), the per-check result ([`CheckRun`]) and the
//! whole [`Run`] with its exit code and its Markdown rendering for people.
//!
//! Unlike the engine types elsewhere in the crate (whose wire names live in `wire`), these types
//! carry serde derives: the JSON *is* the contract here, shared with scripts written outside
//! this crate, so the field names are the specification and must not drift from it.
//!
//! It deliberately does not start processes, walk the vault or decide which checks exist: the
//! scripts module runs the vault's own scripts and built-in checks live elsewhere; both only
//! produce [`CheckRun`]s through the functions here. The Markdown is rendered from the same
//! data as the JSON and is never a second source of truth.

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The contract version this mdvault reads and writes.
pub(crate) const SCHEMA: u32 = 2;

/// How many findings per check the Markdown shows before pointing at the JSON: a report with
/// thousands of list items is unreadable, and the JSON keeps every finding anyway.
const MARKDOWN_FINDINGS_PER_CHECK: usize = 50;

/// What a check says about itself (`--describe`), repeated at the head of its findings envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Declaration {
    /// The contract version; [`SCHEMA`] for a valid declaration.
    pub(crate) schema: u32,
    /// The check's name, snake_case and unique among the vault's checks.
    pub(crate) check: String,
    /// A short human title, e.g. `Broken links`.
    pub(crate) title: String,
    /// One or two sentences on what the check looks for.
    pub(crate) description: String,
    /// Where the check sorts among the others; lower runs and is listed first.
    pub(crate) order: i64,
}

/// Reads the stdout of `--describe` into a [`Declaration`].
///
/// The error is one sentence saying why the output is not a valid declaration: not a JSON
/// object, a field missing or of the wrong type, a schema other than [`SCHEMA`], a check name
/// that is not snake_case, or an empty title.
pub(crate) fn parse_declaration(stdout: &str) -> Result<Declaration, String> {
    if stdout.trim().is_empty() {
        return Err("--describe printed nothing".to_string());
    }
    let value: Value =
        serde_json::from_str(stdout).map_err(|e| format!("--describe did not print JSON ({e})"))?;
    if !value.is_object() {
        return Err("--describe did not print a JSON object".to_string());
    }
    let decl: Declaration = serde_json::from_value(value)
        .map_err(|e| format!("the declaration does not fit the contract: {e}"))?;
    if decl.schema != SCHEMA {
        return Err(format!(
            "the declaration is for schema {}, and this mdvault reads schema {SCHEMA}",
            decl.schema
        ));
    }
    if !is_snake_case(&decl.check) {
        return Err(format!("the declared check name {:?} is not snake_case", decl.check));
    }
    if decl.title.trim().is_empty() {
        return Err("the declaration has an empty title".to_string());
    }
    Ok(decl)
}

/// How serious a finding is. Orders `Error` first, so sorting puts the worst on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    /// Something is wrong; a check with one fails and exits 1.
    Error,
    /// Worth a look, but not wrong.
    Warning,
    /// For information only.
    Info,
}

impl Severity {
    /// The wire name: `error`, `warning` or `info`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// The severity with this wire name, if it is one.
    pub(crate) fn parse(s: &str) -> Option<Severity> {
        match s {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing a check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Finding {
    /// Stable across runs and unique within the run, so a client can track or dismiss it.
    pub(crate) id: String,
    /// How serious it is.
    pub(crate) severity: Severity,
    /// What kind of finding it is, snake_case, e.g. `broken_link`.
    pub(crate) code: String,
    /// A sentence for people.
    pub(crate) message: String,
    /// The vault-relative path it concerns, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<String>,
    /// The 1-based line in `path`, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<u64>,
    /// Every other key the check printed (including the reserved `fix`), carried through
    /// untouched so checks can add detail without a contract change.
    #[serde(flatten)]
    pub(crate) extra: Map<String, Value>,
    /// What the finding is about beyond its note, when a built-in check knows it: the missing
    /// attachment or link target, the repeated heading. Findings of one check and code with the
    /// same subject share a cause, so the web page lists them as one group. Never part of the
    /// contract's JSON (a script says the same with a `target` key, kept in `extra`), so the
    /// answers to REST, MCP and the CLI are as they were.
    #[serde(skip)]
    pub(crate) subject: Option<String>,
}

impl Finding {
    /// A finding whose id is [`finding_id`] over the check, the code, the path (when there is
    /// one) and `identity`: whatever else tells two findings of the same code on the same note
    /// apart, such as a link target. The message never feeds the id, so rewording it does not
    /// turn an old finding into a new one.
    pub(crate) fn new(
        check: &str,
        severity: Severity,
        code: &str,
        message: impl Into<String>,
        path: Option<&str>,
        line: Option<u64>,
        identity: &[&str],
    ) -> Finding {
        let parts: Vec<&str> = path.into_iter().chain(identity.iter().copied()).collect();
        Finding {
            id: finding_id(check, code, &parts),
            severity,
            code: code.to_string(),
            message: message.into(),
            path: path.map(str::to_string),
            line,
            extra: Map::new(),
            subject: None,
        }
    }

    /// The finding with its [`subject`](Finding::subject): what it is about beyond its note.
    pub(crate) fn about(mut self, subject: &str) -> Finding {
        self.subject = Some(subject.to_string());
        self
    }
}

/// A stable finding id: the first 16 hex digits of the SHA-256 of `check`, `code` and the
/// identity parts joined with NUL bytes (NUL cannot occur in paths or names, so different parts
/// cannot run together into the same bytes). Scripts can compute the same id in a few lines.
pub(crate) fn finding_id(check: &str, code: &str, identity: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(check.as_bytes());
    hasher.update([0u8]);
    hasher.update(code.as_bytes());
    for part in identity {
        hasher.update([0u8]);
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    let mut id = String::with_capacity(16);
    for byte in &digest[..8] {
        let _ = write!(id, "{byte:02x}");
    }
    id
}

/// Whether `s` matches `^[a-z][a-z0-9]*(_[a-z0-9]+)*$`: lowercase ASCII words joined by single
/// underscores, starting with a letter.
pub(crate) fn is_snake_case(s: &str) -> bool {
    let mut chars = s.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_lowercase()) {
        return false;
    }
    let mut after_underscore = false;
    for c in chars {
        match c {
            '_' if after_underscore => return false,
            '_' => after_underscore = true,
            'a'..='z' | '0'..='9' => after_underscore = false,
            _ => return false,
        }
    }
    !after_underscore
}

/// Where a check comes from. Serialised flat into its [`CheckRun`]: `"source": "builtin"`, or
/// `"source": "script", "script": ".scripts/check_links.py"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub(crate) enum Source {
    /// A check compiled into mdvault.
    Builtin,
    /// One of the vault's own checker scripts.
    Script {
        /// The script's vault-relative path, e.g. `.scripts/check_links.py`.
        script: String,
    },
}

impl Source {
    /// For people: `built in`, or the script's path.
    pub(crate) fn label(&self) -> &str {
        match self {
            Source::Builtin => "built in",
            Source::Script { script } => script,
        }
    }
}

/// How one check's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// It ran and reported no error finding.
    Passed,
    /// It ran and reported at least one error finding.
    Failed,
    /// It did not finish: it crashed, timed out, could not be started or said so (exit 2).
    CouldNotRun,
    /// A pre-contract script: its text output is carried through as printed.
    Legacy,
    /// It broke the contract; the findings that could be read are still carried through.
    Invalid,
}

impl Status {
    /// For people, e.g. `Could not run`.
    fn label(self) -> &'static str {
        match self {
            Status::Passed => "Passed",
            Status::Failed => "Failed",
            Status::CouldNotRun => "Could not run",
            Status::Legacy => "Legacy",
            Status::Invalid => "Invalid",
        }
    }
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counts {
    /// `error` findings.
    pub(crate) error: usize,
    /// `warning` findings.
    pub(crate) warning: usize,
    /// `info` findings.
    pub(crate) info: usize,
}

impl Counts {
    /// Counts `findings` by severity.
    pub(crate) fn of(findings: &[Finding]) -> Counts {
        let mut counts = Counts::default();
        for f in findings {
            match f.severity {
                Severity::Error => counts.error += 1,
                Severity::Warning => counts.warning += 1,
                Severity::Info => counts.info += 1,
            }
        }
        counts
    }
}

/// The result of running one check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CheckRun {
    /// What the check declared (for a legacy script, what mdvault made up for it); flattened.
    #[serde(flatten)]
    pub(crate) declaration: Declaration,
    /// Where the check comes from; flattened.
    #[serde(flatten)]
    pub(crate) source: Source,
    /// How the run ended.
    pub(crate) status: Status,
    /// The process's exit status; `None` when it never exited on its own (not started, stopped
    /// at the timeout, killed by a signal).
    pub(crate) exit_code: Option<i32>,
    /// Wall-clock time of the run.
    pub(crate) duration_ms: u64,
    /// The findings per severity.
    pub(crate) counts: Counts,
    /// Contract violations, one sentence each; empty when the check kept the contract.
    pub(crate) problems: Vec<String>,
    /// Why the check could not run.
    pub(crate) error: Option<String>,
    /// A legacy script's text, or the tail of stderr when the check could not run.
    pub(crate) output: Option<String>,
    /// Every finding, in the order the check reported them.
    pub(crate) findings: Vec<Finding>,
}

impl CheckRun {
    /// A run that produced `findings` and kept the contract, as built-in checks do: failed with
    /// exit code 1 if any finding is an error, passed with 0 otherwise.
    pub(crate) fn from_findings(
        declaration: Declaration,
        source: Source,
        findings: Vec<Finding>,
        duration_ms: u64,
    ) -> CheckRun {
        let counts = Counts::of(&findings);
        let failed = counts.error > 0;
        CheckRun {
            declaration,
            source,
            status: if failed { Status::Failed } else { Status::Passed },
            exit_code: Some(i32::from(failed)),
            duration_ms,
            counts,
            problems: Vec::new(),
            error: None,
            output: None,
            findings,
        }
    }
}

/// Totals over a [`Run`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Summary {
    /// Checks run.
    pub(crate) checks: usize,
    /// Checks with status `passed`.
    pub(crate) passed: usize,
    /// Checks with status `failed`.
    pub(crate) failed: usize,
    /// Checks with status `could_not_run`.
    pub(crate) could_not_run: usize,
    /// Checks with status `legacy`.
    pub(crate) legacy: usize,
    /// Checks with status `invalid`.
    pub(crate) invalid: usize,
    /// `error` findings over all checks.
    pub(crate) errors: usize,
    /// `warning` findings over all checks.
    pub(crate) warnings: usize,
    /// `info` findings over all checks.
    pub(crate) infos: usize,
}

/// One run of all the checks over a vault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Run {
    /// The vault's name.
    pub(crate) vault: String,
    /// When the run started, UTC, `YYYY-MM-DDTHH:MM:SSZ` (see [`utc_now`]).
    pub(crate) generated_at: String,
    /// Wall-clock time of the whole run.
    pub(crate) duration_ms: u64,
    /// Each check's result, in the order they are listed.
    pub(crate) checks: Vec<CheckRun>,
}

/// The current time in the form [`Run::generated_at`] uses.
#[cfg(test)]
pub(crate) fn utc_now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

impl Run {
    /// Totals over the checks.
    pub(crate) fn summary(&self) -> Summary {
        let mut s = Summary { checks: self.checks.len(), ..Summary::default() };
        for c in &self.checks {
            match c.status {
                Status::Passed => s.passed += 1,
                Status::Failed => s.failed += 1,
                Status::CouldNotRun => s.could_not_run += 1,
                Status::Legacy => s.legacy += 1,
                Status::Invalid => s.invalid += 1,
            }
            s.errors += c.counts.error;
            s.warnings += c.counts.warning;
            s.infos += c.counts.info;
        }
        s
    }

    /// The process exit code for the run, by the same rule as a single check: 2 if any check
    /// could not run or broke the contract (the result is incomplete or untrustworthy), else 1
    /// if any check reported an error finding, else 0. Legacy output never fails a run: there is
    /// no telling what its text means.
    pub(crate) fn exit_code(&self) -> i32 {
        let s = self.summary();
        if s.could_not_run > 0 || s.invalid > 0 {
            2
        } else if s.errors > 0 {
            1
        } else {
            0
        }
    }

    /// The run as one Markdown block for people: a summary line, then a `###` section per
    /// check with its status and findings (worst first, at most 50 per check). Rendered from
    /// the same data as the JSON; nothing here is recorded anywhere else.
    pub(crate) fn markdown(&self) -> String {
        let s = self.summary();
        let mut out = String::new();
        let _ = write!(
            out,
            "Checked vault **{}** at {} in {}: {}, {}, {}, {}",
            one_line(&self.vault),
            self.generated_at,
            human_duration(self.duration_ms),
            plural(s.checks, "check", "checks"),
            plural(s.errors, "error", "errors"),
            plural(s.warnings, "warning", "warnings"),
            plural(s.infos, "info", "infos"),
        );
        let troubles: Vec<String> =
            [(s.could_not_run, "could not run"), (s.legacy, "legacy"), (s.invalid, "invalid")]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("{n} {what}"))
                .collect();
        if !troubles.is_empty() {
            let _ = write!(out, "; {}", troubles.join(", "));
        }
        out.push_str(".\n\n");

        // Every block a check renders ends with a blank line; the last one is trimmed here.
        for (i, check) in self.checks.iter().enumerate() {
            render_check(&mut out, i + 1, check);
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    }
}

/// Appends one check's section to the Markdown, every block followed by a blank line.
fn render_check(out: &mut String, number: usize, c: &CheckRun) {
    let _ = writeln!(
        out,
        "### {number}. {} (`{}`)\n",
        one_line(&c.declaration.title),
        c.declaration.check
    );
    let counts = if c.findings.is_empty() {
        "no findings".to_string()
    } else {
        format!(
            "{}, {}, {}",
            plural(c.counts.error, "error", "errors"),
            plural(c.counts.warning, "warning", "warnings"),
            plural(c.counts.info, "info", "infos")
        )
    };
    let detail = match c.status {
        Status::Passed | Status::Failed => counts,
        Status::Invalid => format!("broke the findings contract; {counts}"),
        Status::Legacy => match c.exit_code {
            Some(code) => {
                format!("a pre-contract script, shown as it printed it (exit status {code})")
            }
            None => "a pre-contract script, shown as it printed it".to_string(),
        },
        Status::CouldNotRun => "the check did not finish".to_string(),
    };
    let _ = writeln!(
        out,
        "**{}**: {detail} · `{}` · {}\n",
        c.status.label(),
        c.source.label(),
        human_duration(c.duration_ms)
    );

    if let Some(error) = &c.error {
        let _ = writeln!(out, "**{}**\n", one_line(error));
    }
    if !c.problems.is_empty() {
        out.push_str("Problems:\n\n");
        for p in &c.problems {
            let _ = writeln!(out, "- {}", one_line(p));
        }
        out.push('\n');
    }
    if let Some(output) = &c.output {
        if output.trim().is_empty() {
            out.push_str("(no output)\n\n");
        } else {
            fenced(out, "text", output);
        }
    }
    if !c.findings.is_empty() {
        // Worst first; the sort is stable, so within a severity the check's own order stays.
        let mut shown: Vec<&Finding> = c.findings.iter().collect();
        shown.sort_by_key(|f| f.severity);
        for f in shown.iter().take(MARKDOWN_FINDINGS_PER_CHECK) {
            let _ = write!(out, "- **{}** `{}`", f.severity, f.code);
            if let Some(path) = &f.path {
                let _ = write!(out, " {}", one_line(path));
                if let Some(line) = f.line {
                    let _ = write!(out, ":{line}");
                }
            }
            let _ = writeln!(out, " — {}", one_line(&f.message));
        }
        if shown.len() > MARKDOWN_FINDINGS_PER_CHECK {
            let _ = writeln!(
                out,
                "- … and {} more (see the JSON)",
                shown.len() - MARKDOWN_FINDINGS_PER_CHECK
            );
        }
        out.push('\n');
    }
}

/// Appends `text` in a fenced block whose fence is longer than any backtick run inside it, so a
/// script that prints its own code fences cannot close ours early.
fn fenced(out: &mut String, info: &str, text: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(out, "{fence}{info}\n{}\n{fence}\n", text.trim_end_matches(['\n', '\r']));
}

/// Text a script controls, flattened to one line so it cannot break out of a list item or
/// heading.
fn one_line(s: &str) -> String {
    s.split(['\n', '\r']).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn human_duration(ms: u64) -> String {
    if ms < 1000 { format!("{ms} ms") } else { format!("{:.1} s", ms as f64 / 1000.0) }
}

/// The stdout of a `--json` run was not a findings document at all: not a JSON object with a
/// `findings` array. The caller decides what that means (a crash, or a legacy script).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotFindings;

impl fmt::Display for NotFindings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a findings document")
    }
}

impl std::error::Error for NotFindings {}

/// Reads a script's `--json` stdout against its declaration and exit code.
///
/// Returns [`NotFindings`] when stdout is not a JSON object with a `findings` array. Otherwise
/// returns the findings that fit the contract, in order, and one sentence per contract problem:
/// a head field missing or different from the declaration; a finding that does not fit (it is
/// skipped, the others kept); a code that is not snake_case (the finding is kept); an id used
/// twice (both kept); an exit code that disagrees with the findings. An exit code of 2 is the
/// script saying it could not run and is not a problem here; `None` (no exit code) is not
/// judged either.
pub(crate) fn parse_envelope(
    stdout: &str,
    declared: &Declaration,
    exit_code: Option<i32>,
) -> Result<(Vec<Finding>, Vec<String>), NotFindings> {
    let Ok(Value::Object(mut envelope)) = serde_json::from_str::<Value>(stdout) else {
        return Err(NotFindings);
    };
    let Some(Value::Array(raw)) = envelope.remove("findings") else {
        return Err(NotFindings);
    };

    let mut problems = Vec::new();
    let head = [
        ("schema", Value::from(declared.schema)),
        ("check", Value::from(declared.check.as_str())),
        ("title", Value::from(declared.title.as_str())),
        ("description", Value::from(declared.description.as_str())),
        ("order", Value::from(declared.order)),
    ];
    for (key, expected) in head {
        match envelope.get(key) {
            None => problems.push(format!(
                "the envelope has no `{key}` field (--describe declared {expected})"
            )),
            Some(found) if *found != expected => problems.push(format!(
                "the envelope's `{key}` is {found}, but --describe declared {expected}"
            )),
            Some(_) => {}
        }
    }

    let mut findings = Vec::with_capacity(raw.len());
    let mut first_index_of: HashMap<String, usize> = HashMap::new();
    for (index, value) in raw.into_iter().enumerate() {
        let label = finding_label(index, &value);
        if let Err(why) = check_finding_shape(&value) {
            problems.push(format!("{label} was skipped: {why}"));
            continue;
        }
        let finding: Finding = match serde_json::from_value(value) {
            Ok(f) => f,
            // The shape check above should have caught everything serde rejects; this keeps a
            // gap between the two from ever being a panic or a silent drop.
            Err(e) => {
                problems.push(format!("{label} was skipped: {e}"));
                continue;
            }
        };
        if !is_snake_case(&finding.code) {
            problems
                .push(format!("{label} has the code {:?}, which is not snake_case", finding.code));
        }
        match first_index_of.get(&finding.id) {
            Some(first) => problems.push(format!(
                "findings[{first}] and findings[{index}] share the id {:?}; ids must be unique within a run",
                finding.id
            )),
            None => {
                first_index_of.insert(finding.id.clone(), index);
            }
        }
        findings.push(finding);
    }

    let errors = Counts::of(&findings).error;
    match exit_code {
        Some(0) if errors > 0 => problems.push(format!(
            "the script exited with status 0 although it reported {}; the contract says 1",
            plural(errors, "error finding", "error findings")
        )),
        Some(1) if errors == 0 => problems.push(
            "the script exited with status 1 but reported no error finding; the contract says 0"
                .to_string(),
        ),
        Some(0..=2) | None => {}
        Some(other) => problems
            .push(format!("the script exited with status {other}; the contract allows 0, 1 or 2")),
    }
    Ok((findings, problems))
}

/// `finding "dup" (findings[2])` when the finding has a usable id, else `findings[2]`.
fn finding_label(index: usize, value: &Value) -> String {
    match value.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => format!("finding {id:?} (findings[{index}])"),
        _ => format!("findings[{index}]"),
    }
}

/// Why a raw finding does not fit [`Finding`], in words a script author can act on.
fn check_finding_shape(value: &Value) -> Result<(), String> {
    let Some(obj) = value.as_object() else {
        return Err("it is not a JSON object".to_string());
    };
    match obj.get("id") {
        Some(Value::String(id)) if !id.is_empty() => {}
        Some(Value::String(_)) => return Err("its `id` is empty".to_string()),
        Some(other) => return Err(format!("its `id` is {other}, not a string")),
        None => return Err("it has no `id`".to_string()),
    }
    match obj.get("severity") {
        Some(Value::String(s)) if Severity::parse(s).is_some() => {}
        Some(other) => {
            return Err(format!("its severity {other} is not one of error, warning, info"));
        }
        None => return Err("it has no `severity`".to_string()),
    }
    for key in ["code", "message"] {
        match obj.get(key) {
            Some(Value::String(_)) => {}
            Some(other) => return Err(format!("its `{key}` is {other}, not a string")),
            None => return Err(format!("it has no `{key}`")),
        }
    }
    match obj.get("path") {
        None | Some(Value::Null | Value::String(_)) => {}
        Some(other) => return Err(format!("its `path` is {other}, not a string")),
    }
    match obj.get("line") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.as_u64().is_some_and(|l| l > 0) => {}
        Some(other) => return Err(format!("its `line` is {other}, not a positive integer")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decl(check: &str, order: i64) -> Declaration {
        Declaration {
            schema: SCHEMA,
            check: check.to_string(),
            title: format!("The {check} check"),
            description: "Looks at things.".to_string(),
            order,
        }
    }

    fn envelope(d: &Declaration, findings: Value) -> String {
        let mut v = serde_json::to_value(d).unwrap();
        v["findings"] = findings;
        v.to_string()
    }

    fn finding(sev: Severity, code: &str, path: Option<&str>, line: Option<u64>) -> Finding {
        Finding::new("demo", sev, code, format!("{code} here"), path, line, &[])
    }

    fn run_of(checks: Vec<CheckRun>) -> Run {
        Run {
            vault: "Home".to_string(),
            generated_at: "2026-01-02T03:04:05Z".to_string(),
            duration_ms: 1234,
            checks,
        }
    }

    #[test]
    fn finding_id_is_stable_and_ignores_the_message() {
        // Pinned so a change to the scheme (which would orphan every id a client stored) is
        // caught; the fixture script check_tidy.py computes the same value in Python.
        let id = finding_id("tidy", "missing_title", &["B.md"]);
        assert_eq!(id, "938f5e9072ce9fc3");
        assert_eq!(id.len(), 16);
        let a = Finding::new(
            "tidy",
            Severity::Warning,
            "missing_title",
            "one",
            Some("B.md"),
            None,
            &[],
        );
        let b = Finding::new(
            "tidy",
            Severity::Warning,
            "missing_title",
            "two",
            Some("B.md"),
            Some(4),
            &[],
        );
        assert_eq!(a.id, id);
        assert_eq!(a.id, b.id);
        // Identity parts and their boundaries matter.
        assert_ne!(finding_id("tidy", "missing_title", &["B.md", "x"]), id);
        assert_ne!(finding_id("a", "bc", &[]), finding_id("ab", "c", &[]));
    }

    #[test]
    fn snake_case_rule() {
        for ok in ["a", "broken_link", "h2_skip", "a1_b2_c3", "x9"] {
            assert!(is_snake_case(ok), "{ok}");
        }
        for bad in ["", "BadCode", "_a", "a_", "a__b", "1a", "a-b", "a b", "é", "a_B"] {
            assert!(!is_snake_case(bad), "{bad}");
        }
    }

    #[test]
    fn severity_orders_worst_first_and_uses_wire_names() {
        let mut v = vec![Severity::Info, Severity::Error, Severity::Warning];
        v.sort();
        assert_eq!(v, [Severity::Error, Severity::Warning, Severity::Info]);
        assert_eq!(serde_json::to_value(Severity::Warning).unwrap(), json!("warning"));
        assert_eq!(Severity::parse("info"), Some(Severity::Info));
        assert_eq!(Severity::parse("fatal"), None);
        assert_eq!(Severity::Error.as_str(), "error");
    }

    #[test]
    fn finding_carries_extra_keys_and_skips_absent_location() {
        let raw = json!({"id": "x1", "severity": "info", "code": "note", "message": "m",
                         "fix": {"replace": "a"}, "target": "Boiler"});
        let f: Finding = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(f.path, None);
        assert_eq!(f.extra.get("fix"), Some(&json!({"replace": "a"})));
        assert_eq!(serde_json::to_value(&f).unwrap(), raw);
    }

    #[test]
    fn declaration_parsing() {
        let good = serde_json::to_string(&decl("tidy", 10)).unwrap();
        assert_eq!(parse_declaration(&good).unwrap(), decl("tidy", 10));
        assert!(parse_declaration("").unwrap_err().contains("printed nothing"));
        assert!(parse_declaration("usage: x").unwrap_err().contains("did not print JSON"));
        assert!(parse_declaration("[1]").unwrap_err().contains("object"));
        let no_title = json!({"schema": 2, "check": "a", "description": "", "order": 1});
        assert!(parse_declaration(&no_title.to_string()).unwrap_err().contains("title"));
        let mut d = decl("tidy", 1);
        d.schema = 1;
        let err = parse_declaration(&serde_json::to_string(&d).unwrap()).unwrap_err();
        assert!(err.contains("schema 1"), "{err}");
        let bad_name = decl("Tidy", 1);
        let err = parse_declaration(&serde_json::to_string(&bad_name).unwrap()).unwrap_err();
        assert!(err.contains("not snake_case"), "{err}");
        let mut blank = decl("tidy", 1);
        blank.title = "  ".to_string();
        assert!(parse_declaration(&serde_json::to_string(&blank).unwrap()).is_err());
    }

    #[test]
    fn envelope_that_is_not_a_findings_document() {
        let d = decl("demo", 1);
        for stdout in
            ["", "hello", "[]", "{\"schema\": 2}", "{\"findings\": {}}", "{\"findings\": null}"]
        {
            assert_eq!(parse_envelope(stdout, &d, Some(0)), Err(NotFindings), "{stdout}");
        }
        assert_eq!(NotFindings.to_string(), "not a findings document");
    }

    #[test]
    fn clean_envelope_has_no_problems() {
        let d = decl("demo", 1);
        let stdout = envelope(
            &d,
            json!([
                {"id": "a", "severity": "error", "code": "broken_link", "message": "m", "path": "A.md", "line": 3},
                {"id": "b", "severity": "warning", "code": "broken_link", "message": "m", "path": null},
                {"id": "c", "severity": "info", "code": "note", "message": "m", "fix": null}
            ]),
        );
        let (findings, problems) = parse_envelope(&stdout, &d, Some(1)).unwrap();
        assert_eq!(problems, Vec::<String>::new());
        assert_eq!(findings.len(), 3);
        assert_eq!(findings[0].line, Some(3));
        assert_eq!(findings[1].path, None);
        assert_eq!(Counts::of(&findings), Counts { error: 1, warning: 1, info: 1 });
        // Exit 2 with an envelope is the script's own "could not run", not a contract problem.
        assert!(parse_envelope(&stdout, &d, Some(2)).unwrap().1.is_empty());
        assert!(parse_envelope(&stdout, &d, None).unwrap().1.is_empty());
    }

    #[test]
    fn envelope_head_must_match_the_declaration() {
        let d = decl("demo", 5);
        let stdout =
            json!({"schema": 2, "check": "other", "title": d.title, "order": 6, "findings": []});
        let (_, problems) = parse_envelope(&stdout.to_string(), &d, Some(0)).unwrap();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(problems[0].contains("`check` is \"other\"") && problems[0].contains("\"demo\""));
        assert!(problems[1].contains("no `description`"));
        assert!(problems[2].contains("`order` is 6"));
    }

    #[test]
    fn broken_findings_are_named_skipped_and_the_rest_kept() {
        let d = decl("demo", 1);
        let stdout = envelope(
            &d,
            json!([
                {"id": "camel", "severity": "warning", "code": "BadCode", "message": "m"},
                {"id": "dup", "severity": "error", "code": "one", "message": "m"},
                {"id": "dup", "severity": "info", "code": "two", "message": "m"},
                {"id": "fatal", "severity": "fatal", "code": "x", "message": "m"},
                {"severity": "info", "code": "x", "message": "m"},
                {"id": "nocode", "severity": "info", "message": "m"},
                {"id": "l0", "severity": "info", "code": "x", "message": "m", "line": 0},
                {"id": "", "severity": "info", "code": "x", "message": "m"},
                "just a string"
            ]),
        );
        let (findings, problems) = parse_envelope(&stdout, &d, Some(0)).unwrap();
        let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["camel", "dup", "dup"]);
        let expect = [
            "finding \"camel\" (findings[0]) has the code \"BadCode\", which is not snake_case",
            "findings[1] and findings[2] share the id \"dup\"",
            "finding \"fatal\" (findings[3]) was skipped: its severity \"fatal\" is not one of error, warning, info",
            "findings[4] was skipped: it has no `id`",
            "finding \"nocode\" (findings[5]) was skipped: it has no `code`",
            "finding \"l0\" (findings[6]) was skipped: its `line` is 0, not a positive integer",
            "findings[7] was skipped: its `id` is empty",
            "findings[8] was skipped: it is not a JSON object",
            "the script exited with status 0 although it reported 1 error finding; the contract says 1",
        ];
        assert_eq!(problems.len(), expect.len(), "{problems:#?}");
        for (p, e) in problems.iter().zip(expect) {
            assert!(p.starts_with(e), "{p:?} should start with {e:?}");
        }
    }

    #[test]
    fn exit_code_must_agree_with_the_findings() {
        let d = decl("demo", 1);
        let none = envelope(&d, json!([]));
        let (_, p) = parse_envelope(&none, &d, Some(1)).unwrap();
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("status 1 but reported no error finding"));
        let (_, p) = parse_envelope(&none, &d, Some(3)).unwrap();
        assert!(p[0].contains("status 3"), "{p:?}");
        assert!(parse_envelope(&none, &d, Some(0)).unwrap().1.is_empty());
    }

    #[test]
    fn from_findings_sets_status_exit_code_and_counts() {
        let pass = CheckRun::from_findings(
            decl("a", 1),
            Source::Builtin,
            vec![finding(Severity::Warning, "w", None, None)],
            7,
        );
        assert_eq!((pass.status, pass.exit_code), (Status::Passed, Some(0)));
        assert_eq!(pass.counts, Counts { error: 0, warning: 1, info: 0 });
        let fail = CheckRun::from_findings(
            decl("a", 1),
            Source::Builtin,
            vec![finding(Severity::Error, "e", None, None)],
            7,
        );
        assert_eq!((fail.status, fail.exit_code), (Status::Failed, Some(1)));
    }

    #[test]
    fn check_run_json_is_flat_and_round_trips() {
        let script = Source::Script { script: ".scripts/check_links.py".to_string() };
        let run = CheckRun::from_findings(
            decl("links", 3),
            script,
            vec![finding(Severity::Error, "broken_link", Some("A.md"), Some(2))],
            12,
        );
        let v = serde_json::to_value(&run).unwrap();
        assert_eq!(v["check"], "links");
        assert_eq!(v["order"], 3);
        assert_eq!(v["source"], "script");
        assert_eq!(v["script"], ".scripts/check_links.py");
        assert_eq!(v["status"], "failed");
        assert_eq!(v["counts"], json!({"error": 1, "warning": 0, "info": 0}));
        assert_eq!(v["error"], Value::Null);
        assert!(v.get("declaration").is_none());
        let back: CheckRun = serde_json::from_value(v).unwrap();
        assert_eq!(back, run);

        let builtin = CheckRun::from_findings(decl("x", 1), Source::Builtin, vec![], 1);
        let v = serde_json::to_value(&builtin).unwrap();
        assert_eq!(v["source"], "builtin");
        assert!(v.get("script").is_none());
        assert_eq!(serde_json::from_value::<CheckRun>(v).unwrap(), builtin);
        assert_eq!(serde_json::to_value(Status::CouldNotRun).unwrap(), "could_not_run");
    }

    fn with_status(mut c: CheckRun, status: Status) -> CheckRun {
        c.status = status;
        c
    }

    #[test]
    fn run_exit_code_rules() {
        let pass = CheckRun::from_findings(decl("a", 1), Source::Builtin, vec![], 1);
        let fail = CheckRun::from_findings(
            decl("b", 2),
            Source::Builtin,
            vec![finding(Severity::Error, "e", None, None)],
            1,
        );
        let legacy = with_status(pass.clone(), Status::Legacy);
        assert_eq!(run_of(vec![]).exit_code(), 0);
        assert_eq!(run_of(vec![pass.clone(), legacy.clone()]).exit_code(), 0);
        assert_eq!(run_of(vec![pass.clone(), fail.clone()]).exit_code(), 1);
        let cnr = with_status(pass.clone(), Status::CouldNotRun);
        assert_eq!(run_of(vec![fail.clone(), cnr]).exit_code(), 2);
        let invalid = with_status(pass.clone(), Status::Invalid);
        assert_eq!(run_of(vec![pass, invalid]).exit_code(), 2);

        let s = run_of(vec![fail.clone(), fail, legacy]).summary();
        assert_eq!(s, Summary { checks: 3, failed: 2, legacy: 1, errors: 2, ..Summary::default() });
    }

    #[test]
    fn markdown_renders_each_kind_of_check() {
        let failed = CheckRun::from_findings(
            decl("links", 1),
            Source::Builtin,
            vec![
                finding(Severity::Info, "note", None, None),
                finding(Severity::Error, "broken_link", Some("Home/Boiler.md"), Some(12)),
                finding(Severity::Warning, "stale", Some("A.md"), None),
            ],
            5,
        );
        let mut legacy = CheckRun::from_findings(
            decl("check_old", 9),
            Source::Script { script: ".scripts/check_old.py".into() },
            vec![],
            30,
        );
        legacy.status = Status::Legacy;
        legacy.exit_code = Some(1);
        legacy.output = Some("line one\n```\nline two\n".into());
        let mut cnr = CheckRun::from_findings(decl("crash", 2), Source::Builtin, vec![], 40);
        cnr.status = Status::CouldNotRun;
        cnr.exit_code = Some(1);
        cnr.error = Some("exited with status 1: RuntimeError: boom".into());
        cnr.output = Some("Traceback (most recent call last):\nRuntimeError: boom".into());
        let mut invalid = CheckRun::from_findings(decl("sloppy", 3), Source::Builtin, vec![], 2);
        invalid.status = Status::Invalid;
        invalid.problems = vec!["findings[0] was skipped: it has no `id`".into()];

        let md = run_of(vec![failed, legacy, cnr, invalid]).markdown();
        let first = md.lines().next().unwrap();
        assert_eq!(
            first,
            "Checked vault **Home** at 2026-01-02T03:04:05Z in 1.2 s: 4 checks, 1 error, \
             1 warning, 1 info; 1 could not run, 1 legacy, 1 invalid."
        );
        assert!(md.contains("### 1. The links check (`links`)\n\n**Failed**: 1 error, 1 warning, 1 info · `built in` · 5 ms\n"));
        let err =
            md.find("- **error** `broken_link` Home/Boiler.md:12 — broken_link here").unwrap();
        let warn = md.find("- **warning** `stale` A.md — stale here").unwrap();
        let info = md.find("- **info** `note` — note here").unwrap();
        assert!(err < warn && warn < info, "worst first");
        assert!(md.contains("### 2. The check_old check (`check_old`)"));
        assert!(md.contains("(exit status 1)"));
        assert!(md.contains("````text\nline one\n```\nline two\n````\n"), "{md}");
        assert!(md.contains("**Could not run**"));
        assert!(md.contains("**exited with status 1: RuntimeError: boom**"));
        assert!(
            md.contains("```text\nTraceback (most recent call last):\nRuntimeError: boom\n```")
        );
        assert!(md.contains("**Invalid**: broke the findings contract; no findings"));
        assert!(md.contains("Problems:\n\n- findings[0] was skipped: it has no `id`\n"));
        assert!(!md.contains("\n\n\n"), "one blank line between blocks:\n{md}");
        assert!(md.ends_with("`id`\n"), "{md}");
    }

    #[test]
    fn markdown_caps_findings_per_check_and_keeps_messages_on_one_line() {
        let findings: Vec<Finding> = (0..120)
            .map(|i| {
                Finding::new(
                    "many",
                    if i % 2 == 0 { Severity::Warning } else { Severity::Error },
                    "thing",
                    format!("message {i}\n### not a heading"),
                    Some("A.md"),
                    Some(i + 1),
                    &[&i.to_string()],
                )
            })
            .collect();
        let run =
            run_of(vec![CheckRun::from_findings(decl("many", 1), Source::Builtin, findings, 1)]);
        let md = run.markdown();
        assert_eq!(md.matches("\n- **").count(), 50);
        // The 60 errors sort first, so the first 50 shown are all errors.
        assert_eq!(md.matches("- **error**").count(), 50);
        assert!(md.contains("- … and 70 more (see the JSON)\n"));
        assert!(!md.contains("\n### not a heading"));
        assert_eq!(run.checks[0].findings.len(), 120, "the data keeps everything");
    }

    #[test]
    fn utc_now_has_the_documented_shape() {
        let t = utc_now();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T');
    }
}
