//! Vault upkeep: the things that keep a vault navigable and healthy as people and agents write
//! to it.
//!
//! - `indexmd`: the generated root `index.md`.
//! - `findings` and `scripts`: the findings contract, and the vault's own checker scripts in
//!   `.scripts/`, discovered by declaration and run under fixed rules.
//! - `builtin`: mdvault's own checks (links, headings, frontmatter, documents, expiries),
//!   reported through the same contract, so a vault with no scripts still gets a useful run;
//!   a vault script declaring one's name replaces it for that vault.
//! - `callouts`, `expiries`, `fmquery`: reading Obsidian callouts, dated `expires` blocks and
//!   line-scanned frontmatter values out of note text (a vault's own
//!   `.scripts/extract_callouts.py` replaces the callout parser).
//!
//! Everything here walks the files on disk, never the search index, so it answers for folders
//! the index leaves out and while the embedder is down. It does not schedule anything (the
//! engine runs the index.md passes) and knows nothing of HTTP, MCP or terminals.

pub(crate) mod builtin;
pub mod callouts;
pub(crate) mod expiries;
pub(crate) mod findings;
pub(crate) mod fmquery;
pub mod indexmd;
pub(crate) mod scripts;
pub(crate) mod survey;

use std::time::Instant;

use crate::error::{Error, ErrorCode, Result};
use crate::vault::canvas::Canvas;
use crate::vault::census::{self, Counting, FileClass};
use crate::vault::{DocumentText, Vault, fs};
use findings::{Declaration, Run, Source};

/// How maintenance and callouts behave (from `maintenance.*` and `callouts.*`).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// How the vault's scripts are run.
    pub(crate) scripts: scripts::ScriptSettings,
    /// The callout types listed as open (aliases allowed).
    pub(crate) open_callouts: Vec<String>,
}

impl Settings {
    /// The settings of a configuration.
    pub(crate) fn from_config(config: &crate::config::Config) -> Settings {
        let m = &config.maintenance;
        Settings {
            scripts: scripts::ScriptSettings {
                python: m.python.clone(),
                timeout: std::time::Duration::from_secs_f64(m.timeout_seconds),
                describe_timeout: std::time::Duration::from_secs_f64(m.timeout_seconds.min(10.0)),
            },
            open_callouts: config.callouts.open_types.clone(),
        }
    }
}

/// The notes under `dir` (vault-relative; `""` for all) with their text, sorted by path: every
/// note the vault's census counts with no folder excluded (upkeep answers for the folders
/// search leaves out), and a root `index.md` unless it is the generated page. A note that is
/// not UTF-8 is read lossily; one that cannot be read is skipped.
pub(crate) fn notes(vault: &Vault, dir: &str) -> Vec<(String, String)> {
    let counting = Counting::notes_everywhere();
    let mut out = Vec::new();
    for path in vault.all_files() {
        if !census::under(&path, dir) {
            continue;
        }
        let class = census::classify(&path, &counting);
        if !matches!(class, FileClass::Note | FileClass::RootIndex) {
            continue;
        }
        match fs::read(&vault.root().join(&path)) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                // The generated page only repeats the notes; a hand-written one is a note.
                if class == FileClass::RootIndex && indexmd::generated(&text) {
                    continue;
                }
                out.push((path, text));
            }
            Err(e) => tracing::warn!("upkeep: cannot read {path}: {e}"),
        }
    }
    out
}

/// The canvases of the vault with what each says (`Canvas::reading_text`), sorted by path: the
/// link checks and backlinks read their links there, a file node as a wikilink to its file
/// and a text node's links as written, so a line is a line of the canvas as read. A canvas
/// that is not JSON Canvas links nothing (its read says why).
pub(crate) fn canvases(vault: &Vault) -> Vec<(String, String)> {
    let counting = Counting::notes_everywhere();
    let mut out = Vec::new();
    for path in vault.all_files() {
        if census::classify(&path, &counting) != FileClass::Canvas {
            continue;
        }
        match fs::read(&vault.root().join(&path)) {
            Ok(bytes) => match Canvas::parse(&String::from_utf8_lossy(&bytes)) {
                Ok(canvas) => out.push((path, canvas.reading_text())),
                Err(why) => tracing::warn!("upkeep: {path}: {why}"),
            },
            Err(e) => tracing::warn!("upkeep: cannot read {path}: {e}"),
        }
    }
    out
}

/// One check as listed by `/maintenance/checks`: what it declares and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckInfo {
    /// The declaration (synthesised for a pre-contract script).
    pub(crate) declaration: Declaration,
    /// Built in, or a script in `.scripts/`.
    pub(crate) source: Source,
    /// True for a pre-contract script, run as legacy.
    pub(crate) legacy: bool,
    /// Why a script's declaration was rejected, if it was.
    pub(crate) problem: Option<String>,
    /// True for a vault script that replaces the built-in check of the same name.
    pub(crate) replaces_builtin: bool,
}

/// Every check a maintenance run would run, in run order, without running any. Scripts are
/// only asked to describe themselves, which by contract walks no files.
pub(crate) fn checks(vault: &Vault, settings: &Settings) -> Vec<CheckInfo> {
    let (scripts, replaced) = discover(vault, settings);
    let mut out: Vec<CheckInfo> = builtin::declarations()
        .into_iter()
        .filter(|d| !replaced.contains(&d.check))
        .map(|declaration| CheckInfo {
            declaration,
            source: Source::Builtin,
            legacy: false,
            problem: None,
            replaces_builtin: false,
        })
        .collect();
    for s in scripts {
        out.push(CheckInfo {
            replaces_builtin: replaced.contains(&s.declaration.check),
            declaration: s.declaration.clone(),
            source: Source::Script { script: s.script.clone() },
            legacy: s.legacy,
            problem: s.describe_problem.clone(),
        });
    }
    out.sort_by(|a, b| {
        (a.declaration.order, &a.declaration.check)
            .cmp(&(b.declaration.order, &b.declaration.check))
    });
    out
}

/// The vault's scripts, and the built-in checks they replace. A script that declares a
/// built-in check's name (`frontmatter`, `links`, ...) replaces that check for its vault: the
/// vault's own rules are the ones its owner wrote, and scripts written for the vault MCP server
/// used those names before mdvault had built-ins. One name still means one check per run.
fn discover(vault: &Vault, settings: &Settings) -> (Vec<scripts::Script>, Vec<String>) {
    let builtin: Vec<String> = builtin::declarations().into_iter().map(|d| d.check).collect();
    let found = scripts::discover(vault.root(), &settings.scripts);
    let mut replaced: Vec<String> = found
        .iter()
        .filter(|s| !s.legacy && builtin.contains(&s.declaration.check))
        .map(|s| s.declaration.check.clone())
        .collect();
    replaced.dedup();
    (found, replaced)
}

/// Runs every check: the built-in ones over the notes, then the vault's scripts, one after
/// another, in declared order. Findings never make this fail.
pub(crate) fn maintenance(vault: &Vault, docs: &dyn DocumentText, settings: &Settings) -> Run {
    let started = Instant::now();
    let generated_at = crate::vault::now_timestamp();
    let all = notes(vault, "");
    let (scripts, replaced) = discover(vault, settings);
    let boards = canvases(vault);
    let mut runs = builtin::run_all(vault, &all, &boards, docs, &replaced);
    drop(all);
    for s in scripts {
        runs.push(scripts::run(vault.root(), &s, &settings.scripts));
    }
    runs.sort_by(|a, b| {
        (a.declaration.order, &a.declaration.check)
            .cmp(&(b.declaration.order, &b.declaration.check))
    });
    Run {
        vault: vault.name().to_string(),
        generated_at,
        duration_ms: started.elapsed().as_millis() as u64,
        checks: runs,
    }
}

/// The open callouts of the notes under `dir`: from the vault's own
/// `.scripts/extract_callouts.py` when it ships one (its rules, as before mdvault), else from
/// the built-in parser. A script that fails is an `internal_error`, never a silent fallback,
/// since the two can disagree on what is open.
pub(crate) fn callouts(vault: &Vault, dir: &str, settings: &Settings) -> Result<callouts::Report> {
    let dir = vault.folder(dir)?;
    if scripts::present(vault.root(), scripts::CALLOUT_SCRIPT) {
        let script = format!("{}/{}", scripts::SCRIPTS_DIR, scripts::CALLOUT_SCRIPT);
        let stdout = scripts::run_tool(vault.root(), scripts::CALLOUT_SCRIPT, &settings.scripts)
            .map_err(|why| {
                Error::new(
                    ErrorCode::InternalError,
                    format!("{why}; fix or remove the script to use the built-in parser"),
                )
            })?;
        return callouts::from_script(&stdout, &dir, &script).map_err(|why| {
            Error::new(
                ErrorCode::InternalError,
                format!("{why}; fix or remove the script to use the built-in parser"),
            )
        });
    }
    Ok(callouts::report(notes(vault, &dir), &settings.open_callouts))
}

/// The dated commitments of the notes under `dir`, relative to `today`.
pub(crate) fn expiries(
    vault: &Vault,
    dir: &str,
    today: chrono::NaiveDate,
    query: &expiries::Query,
) -> Result<expiries::Report> {
    let dir = vault.folder(dir)?;
    Ok(expiries::report(notes(vault, &dir), today, query))
}

/// The notes under `dir` whose frontmatter `key` holds exactly `value` (a scalar equal to it,
/// or a list containing it), sorted by path.
pub(crate) fn frontmatter_query(
    vault: &Vault,
    key: &str,
    value: &str,
    dir: &str,
) -> Result<Vec<String>> {
    let key = key.trim();
    if key.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "key is required: name the frontmatter key to match, e.g. key=tags&value=project",
        ));
    }
    let dir = vault.folder(dir)?;
    Ok(notes(vault, &dir)
        .into_iter()
        .filter(|(_, text)| fmquery::matches(text, key, value))
        .map(|(path, _)| path)
        .collect())
}
