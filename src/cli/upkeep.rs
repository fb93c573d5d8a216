//! The upkeep commands: `check` (maintenance), `index-md`, `callouts`, `tags` and `expiries`.
//!
//! None of them loads the embedding model or touches the search index: they read the notes
//! on disk, so they work on a machine where the model is missing. `check` exits as the
//! findings contract says (0 clean, 1 error findings, 2 a check could not run); its listing is
//! coloured on a terminal unless `NO_COLOR` is set.

use std::io::IsTerminal;

use clap::{Args, Subcommand};

use super::{Failure, print, print_json};
use crate::engine::LightEngine;
use crate::service::{self, Target};
use crate::upkeep::findings::{CheckRun, Run, Severity, Status};
use crate::upkeep::indexmd;
use crate::vault::Vault;
use crate::wire;

/// `mdvault check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Print the findings contract's JSON (with the Markdown rendering) instead of a listing.
    #[arg(long)]
    json: bool,
    /// Only list the checks (built in, and the vault's `.scripts/`), without running them.
    #[arg(long)]
    list: bool,
    /// Show every finding (a check lists at most 20 otherwise).
    #[arg(long)]
    all: bool,
}

/// `mdvault callouts`.
#[derive(Debug, Args)]
pub(crate) struct CalloutsArgs {
    /// Only notes under this folder.
    #[arg(long, value_name = "FOLDER")]
    dir: Option<String>,
    /// Print JSON (the shape `/callouts` answers with).
    #[arg(long)]
    json: bool,
}

/// `mdvault tags`.
#[derive(Debug, Args)]
pub(crate) struct TagsArgs {
    #[command(subcommand)]
    command: Option<TagsCommand>,
    /// List the notes carrying this tag or a tag nested under it (`project` also finds
    /// `#project/alpha`); `#` optional, case ignored.
    #[arg(value_name = "TAG")]
    tag: Option<String>,
    /// Only notes under this folder.
    #[arg(long, value_name = "FOLDER")]
    dir: Option<String>,
    /// Print JSON: the tags in tree order with counts and depth, and the notes under TAG.
    #[arg(long)]
    json: bool,
}

/// `mdvault tags rename`.
#[derive(Debug, Subcommand)]
enum TagsCommand {
    /// Rename (or merge) a tag in every note, inline `#tags` and frontmatter `tags:`, the
    /// tags nested under it with it (`#old/child` becomes `#new/child`); renaming onto an
    /// existing tag merges the two. All or nothing; every other byte stays.
    #[command(
        after_help = "Examples:\n  mdvault tags rename project work --dry-run\n  mdvault tags rename '#Todo' todo --json"
    )]
    Rename {
        /// The tag to rename (`#` optional, case ignored).
        #[arg(value_name = "OLD")]
        from: String,
        /// Its new name (`#` optional).
        #[arg(value_name = "NEW")]
        to: String,
        /// Only list the notes that would change; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON: the changed notes with their counts.
        #[arg(long)]
        json: bool,
    },
}

/// `mdvault expiries`.
#[derive(Debug, Args)]
pub(crate) struct ExpiriesArgs {
    /// Only dates at most this many days away (lapsed dates are always shown).
    #[arg(long, value_name = "DAYS", allow_negative_numbers = true)]
    within: Option<i64>,
    /// Also list the notes without an `expires` field.
    #[arg(long)]
    untracked: bool,
    /// Only notes under this folder.
    #[arg(long, value_name = "FOLDER")]
    dir: Option<String>,
    /// Print JSON (the shape `/expiries` answers with).
    #[arg(long)]
    json: bool,
}

/// The vaults a command covers: the one picked with `--vault NAME`, else all of them.
fn chosen<'v>(
    vaults: &'v crate::vault::Vaults,
    only: Option<&str>,
) -> Result<Vec<&'v Vault>, Failure> {
    match only {
        Some(name) => Ok(vec![vaults.get(Some(name))?.as_ref()]),
        None => Ok(vaults.iter().map(|v| v.as_ref()).collect()),
    }
}

/// `mdvault check`: runs (or lists) every check of each chosen vault.
pub(crate) fn check(
    desk: &LightEngine,
    only: Option<&str>,
    args: CheckArgs,
) -> Result<(), Failure> {
    let t = &Target::default();
    let colour = Colour::detect();
    if args.list {
        for v in chosen(desk.vaults(), only)? {
            let checks = service::checks(desk, t, Some(v.name()))?;
            if args.json {
                print_json(&wire::checks(&checks));
                continue;
            }
            print(&format!("{}:", v.name()));
            for c in checks {
                let d = &c.declaration;
                let from = c.source.label();
                let legacy = if c.legacy { ", legacy" } else { "" };
                let replaces =
                    if c.replaces_builtin { ", replaces the built-in check" } else { "" };
                print(&format!("  {:<14} {} ({from}{legacy}{replaces})", d.check, d.title));
            }
        }
        return Ok(());
    }
    let mut worst = 0;
    for v in chosen(desk.vaults(), only)? {
        let run = service::maintenance(desk, t, Some(v.name()))?;
        worst = worst.max(run.exit_code());
        if args.json {
            print_json(&wire::maintenance(&run));
        } else {
            print(&listing(&run, &colour, if args.all { usize::MAX } else { 20 }));
        }
    }
    match worst {
        0 => Ok(()),
        code => Err(Failure::Exit(code as u8)),
    }
}

/// ANSI colours when stdout is a terminal and `NO_COLOR` is unset.
struct Colour(bool);

impl Colour {
    fn detect() -> Colour {
        Colour(super::colour(std::io::stdout().is_terminal()))
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.0 { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }

    fn severity(&self, s: Severity) -> String {
        let code = match s {
            Severity::Error => "1;31",
            Severity::Warning => "33",
            Severity::Info => "36",
        };
        self.paint(code, &format!("{:<7}", s.as_str()))
    }
}

/// The run as a listing for a person: one block per check, then the summary.
fn listing(run: &Run, colour: &Colour, cap: usize) -> String {
    let mut out = format!(
        "{} ({} ms)\n",
        colour.paint("1", &format!("vault {}", run.vault)),
        run.duration_ms
    );
    for c in &run.checks {
        out.push_str(&check_block(c, colour, cap));
    }
    let s = run.summary();
    let mut tail = format!(
        "{} checks: {} error(s), {} warning(s), {} info",
        s.checks, s.errors, s.warnings, s.infos
    );
    for (n, what) in [
        (s.could_not_run, "could not run"),
        (s.invalid, "broke the contract"),
        (s.legacy, "legacy"),
    ] {
        if n > 0 {
            tail.push_str(&format!("; {n} {what}"));
        }
    }
    let code = if s.errors > 0 || s.could_not_run + s.invalid > 0 { "1;31" } else { "1;32" };
    out.push_str(&colour.paint(code, &tail));
    out.push('\n');
    out
}

fn check_block(c: &CheckRun, colour: &Colour, cap: usize) -> String {
    let d = &c.declaration;
    let state = match c.status {
        Status::Passed if c.findings.is_empty() => colour.paint("32", "ok"),
        Status::Passed => colour.paint("33", "passed with notes"),
        Status::Failed => colour.paint("1;31", "failed"),
        Status::CouldNotRun => colour.paint("1;31", "could not run"),
        Status::Legacy => colour.paint("36", "legacy output"),
        Status::Invalid => colour.paint("1;31", "broke the findings contract"),
    };
    let mut out = format!(
        "\n{}  {}: {state} ({} ms, {})\n",
        colour.paint("1", &d.check),
        d.title,
        c.duration_ms,
        c.source.label()
    );
    if let Some(e) = &c.error {
        out.push_str(&format!("  {e}\n"));
    }
    for p in &c.problems {
        out.push_str(&format!("  contract: {p}\n"));
    }
    let mut findings: Vec<_> = c.findings.iter().collect();
    findings.sort_by_key(|f| f.severity);
    for f in findings.iter().take(cap) {
        let at = match (&f.path, f.line) {
            (Some(p), Some(l)) => format!("{p}:{l} "),
            (Some(p), None) => format!("{p} "),
            _ => String::new(),
        };
        out.push_str(&format!("  {} {} {at}{}\n", colour.severity(f.severity), f.code, f.message));
    }
    if findings.len() > cap {
        out.push_str(&format!("  … and {} more (--all shows them)\n", findings.len() - cap));
    }
    if c.status == Status::Legacy
        && let Some(text) = &c.output
    {
        for line in text.lines() {
            out.push_str(&format!("  | {line}\n"));
        }
    }
    out
}

/// `mdvault index-md`: regenerates each chosen vault's index.md now. Running it is asking for
/// the page, so it writes one even while `index.index_md` is off, and then says that nothing
/// will keep it up to date.
pub(crate) fn index_md(desk: &LightEngine, only: Option<&str>) -> Result<(), Failure> {
    if !desk.config().index.index_md {
        eprintln!(
            "note: index.index_md is off, so a running server will not keep this index.md up to \
             date; set index: {{index_md: true}} in the config file to have it kept"
        );
    }
    for v in chosen(desk.vaults(), only)? {
        let generator = indexmd::IndexMd::new(&desk.config().index.exclude_dirs);
        let outcome = generator.rebuild(v)?;
        let entries = generator.status().entries;
        let what = match outcome {
            indexmd::Outcome::Written => "written",
            indexmd::Outcome::Unchanged => "already up to date",
        };
        print(&format!("{}: index.md {what} ({entries} notes listed)", v.name()));
    }
    Ok(())
}

/// `mdvault callouts`.
pub(crate) fn callouts(
    desk: &LightEngine,
    only: Option<&str>,
    args: CalloutsArgs,
) -> Result<(), Failure> {
    let v = desk.vaults().get(only)?;
    let started = std::time::Instant::now();
    let a = service::CalloutsArgs { vault: Some(v.name().to_string()), dir: args.dir };
    let r = service::callouts(desk, &Target::default(), a)?;
    if args.json {
        let ms = started.elapsed().as_millis() as u64;
        let open = &desk.config().callouts.open_types;
        print_json(&wire::callouts(v.name(), open, &r, ms));
        return Ok(());
    }
    let colour = Colour::detect();
    for c in &r.callouts {
        let sev = match c.severity.as_str() {
            "critical" => colour.paint("1;31", "critical"),
            "warning" => colour.paint("33", "warning "),
            "action" => colour.paint("36", "action  "),
            other => format!("{other:<8}"),
        };
        print(&format!("{sev} {}:{} [{}] {}", c.note, c.line, c.kind, c.title));
    }
    print(&format!(
        "{} open callout(s) in {} note(s); {} note(s) scanned",
        r.callouts.len(),
        r.notes_with_callouts,
        r.notes_scanned
    ));
    Ok(())
}

/// `mdvault tags`.
pub(crate) fn tags(desk: &LightEngine, only: Option<&str>, args: TagsArgs) -> Result<(), Failure> {
    let v = desk.vaults().get(only)?;
    if let Some(TagsCommand::Rename { from, to, dry_run, json }) = args.command {
        let a = service::TagRenameArgs { vault: Some(v.name().to_string()), from, to, dry_run };
        let r = service::rename_tag(desk, &Target::default(), a)?;
        if json {
            print_json(&wire::tag_renamed(&r));
        } else {
            print(&r.render());
        }
        return Ok(());
    }
    let a = service::TagsArgs { vault: Some(v.name().to_string()), tag: args.tag, dir: args.dir };
    let r = service::tags(desk, &Target::default(), a)?;
    if args.json {
        print_json(&wire::tags(v.name(), &r));
    } else {
        print(&r.render());
    }
    Ok(())
}

/// `mdvault expiries`.
pub(crate) fn expiries(
    desk: &LightEngine,
    only: Option<&str>,
    args: ExpiriesArgs,
) -> Result<(), Failure> {
    let a = service::ExpiriesArgs {
        vault: only.map(str::to_string),
        within: args.within,
        untracked: args.untracked,
        dir: args.dir,
    };
    let r = service::expiries(desk, &Target::default(), a)?;
    if args.json {
        print_json(&wire::expiries(&r, args.within));
        return Ok(());
    }
    let colour = Colour::detect();
    for e in &r.entries {
        let when = match e.days {
            d if d < 0 => colour.paint("1;31", &format!("lapsed {:>4} d ago", -d)),
            d if d <= 30 => colour.paint("33", &format!("in {d:>4} days     ")),
            d => format!("in {d:>4} days     "),
        };
        print(&format!("{} {when} {}  ({})", e.date, e.what, e.note));
    }
    for d in &r.dismissed {
        print(&format!("dismissed  {}: {}", d.note, d.reason));
    }
    for m in &r.malformed {
        print(&format!("{} {}: {}", colour.paint("1;31", "malformed "), m.note, m.problem));
    }
    print(&format!("{} note(s) without an expires field", r.untracked_count));
    for n in r.untracked.iter().flatten() {
        print(&format!("  {n}"));
    }
    Ok(())
}
