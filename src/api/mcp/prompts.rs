//! The MCP prompts: `daily_review`, `file_document`, `maintenance_pass` and
//! `note_from_template`, each a few lines of guidance built from the vault as it is now.
//!
//! A prompt is read through the same front door the tools use (`crate::service`), so it sees
//! what a tool call would and refuses what a tool call would (a vault the connection is not
//! bound to, a path outside the gate). Its text names the tool calls that act on what it lists,
//! so a model can go straight from the prompt to the fix. An unknown prompt or a missing
//! required argument is an MCP invalid-params error saying what to send instead; a refusal
//! while reading the vault is one too, with the refusal's own advice.
//!
//! Templates follow Obsidian's core Templates plugin: the folder named in
//! `.obsidian/templates.json` (`folder`, with `dateFormat` and `timeFormat`), else
//! `Templates/`; placeholders are filled by `vault::periodic::Placeholders`, the rule periodic
//! notes use.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::Value;

use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::service::{self as tools, Target};
use crate::vault::Vault;
use crate::vault::periodic::{Placeholders, format};

/// How many days ahead `daily_review` looks for expiries.
const EXPIRY_DAYS: i64 = 14;
/// How many callouts, expiries, findings or related notes a prompt lists before saying how
/// many more there are: a prompt is a starting point, not a report.
const SHOWN: usize = 15;
/// Where Obsidian's core Templates plugin looks when its settings name no folder.
const DEFAULT_TEMPLATES: &str = "Templates";
/// Obsidian's default formats for a bare `{{date}}` and `{{time}}` in a template.
const DEFAULT_DATE_FORMAT: &str = "YYYY-MM-DD";
const DEFAULT_TIME_FORMAT: &str = "HH:mm";
/// No settings file Obsidian writes is near this size.
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// One prompt: its name, what it is for, and its arguments (name, description, required).
struct Spec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
}

const VAULT_ARG: (&str, &str, bool) =
    ("vault", "Which vault, where the server serves several (its default otherwise).", false);

const PROMPTS: &[Spec] = &[
    Spec {
        name: "daily_review",
        title: "Daily review",
        description: "Today's review: the open callouts, what expires within 14 days and \
                      today's daily note, with the tool calls that act on each.",
        arguments: &[VAULT_ARG],
    },
    Spec {
        name: "file_document",
        title: "File a document",
        description: "Where a PDF or note would be filed and which notes it should link to.",
        arguments: &[("path", "The document or note to file, as a vault path.", true), VAULT_ARG],
    },
    Spec {
        name: "maintenance_pass",
        title: "Maintenance pass",
        description: "The vault's current maintenance findings, each with the tool call that \
                      fixes it.",
        arguments: &[VAULT_ARG],
    },
    Spec {
        name: "note_from_template",
        title: "Note from a template",
        description: "A new note from one of the vault's templates (Obsidian's templates \
                      folder), with {{title}}, {{date}} and {{time}} filled in.",
        arguments: &[
            ("template", "The template's name or path in the templates folder.", true),
            ("title", "The new note's title (its file name).", true),
            VAULT_ARG,
        ],
    },
];

/// The prompts `prompts/list` answers with.
pub(crate) fn list() -> Vec<Prompt> {
    PROMPTS
        .iter()
        .map(|p| {
            let args = p
                .arguments
                .iter()
                .map(|(name, about, required)| {
                    PromptArgument::new(*name).with_description(*about).with_required(*required)
                })
                .collect();
            Prompt::new(p.name, Some(p.description), Some(args)).with_title(p.title)
        })
        .collect()
}

/// A prompt's arguments as strings (MCP sends them so; other JSON values are taken as text).
struct Args(BTreeMap<String, String>);

impl Args {
    fn new(raw: Option<JsonObject>) -> Args {
        let text = |v: Value| match v {
            Value::String(s) => s,
            other => other.to_string(),
        };
        Args(
            raw.unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, text(v)))
                .filter(|(_, v)| !v.trim().is_empty())
                .collect(),
        )
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|s| s.trim())
    }

    /// A required argument, or the invalid-params error that names it and how to find a value.
    fn required(&self, prompt: &str, name: &str) -> std::result::Result<&str, ErrorData> {
        self.get(name).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "the prompt {prompt} needs the argument `{name}`; prompts/list describes it, \
                     and completion/complete suggests values"
                ),
                None,
            )
        })
    }
}

/// `prompts/get`: the named prompt built from the vault now, on the blocking pool's side of
/// the caller (it reads files).
pub(crate) fn get(
    engine: &Engine,
    t: &Target,
    name: &str,
    raw: Option<JsonObject>,
) -> std::result::Result<GetPromptResult, ErrorData> {
    let Some(spec) = PROMPTS.iter().find(|p| p.name == name) else {
        let names: Vec<&str> = PROMPTS.iter().map(|p| p.name).collect();
        return Err(ErrorData::invalid_params(
            format!("there is no prompt {name:?}; the prompts are {}", names.join(", ")),
            None,
        ));
    };
    let args = Args::new(raw);
    let vault = args.get("vault");
    let text = match spec.name {
        "daily_review" => daily_review(engine, t, vault),
        "file_document" => file_document(engine, t, vault, args.required(name, "path")?),
        "maintenance_pass" => maintenance_pass(engine, t, vault),
        _ => note_from_template(
            engine,
            t,
            vault,
            args.required(name, "template")?,
            args.required(name, "title")?,
            chrono::Local::now().naive_local(),
        ),
    };
    let text = text.map_err(|e| {
        ErrorData::invalid_params(
            format!("the prompt {name} cannot be built: {}", e.message()),
            None,
        )
    })?;
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description(spec.description))
}

/// "and N more" when a list was cut at [`SHOWN`].
fn more(total: usize) -> String {
    if total > SHOWN { format!("- ... and {} more\n", total - SHOWN) } else { String::new() }
}

fn daily_review(engine: &Engine, t: &Target, vault: Option<&str>) -> Result<String> {
    let v = vault.map(String::from);
    let callouts = tools::callouts(engine, t, tools::CalloutsArgs { vault: v.clone(), dir: None })?;
    let args =
        tools::ExpiriesArgs { vault: v.clone(), within: Some(EXPIRY_DAYS), ..Default::default() };
    let expiries = tools::expiries(engine, t, args)?;
    let mut out = String::from("Review the vault for today.\n\n");
    if callouts.callouts.is_empty() {
        out.push_str("Open callouts: none.\n");
    } else {
        out.push_str(&format!("Open callouts ({}), most urgent first:\n", callouts.callouts.len()));
        for c in callouts.callouts.iter().take(SHOWN) {
            let body = c.body.lines().next().unwrap_or("").trim();
            let what = if c.title.is_empty() { body } else { c.title.as_str() };
            out.push_str(&format!("- [{}] {}:{}: {what}\n", c.kind, c.note, c.line));
        }
        out.push_str(&more(callouts.callouts.len()));
        out.push_str(
            "Settle each with the user; close a done one with vault_patch (or vault_edit) on \
             its note, after vault_read with the note's path.\n",
        );
    }
    if expiries.entries.is_empty() {
        out.push_str(&format!("\nNothing expires within {EXPIRY_DAYS} days.\n"));
    } else {
        out.push_str(&format!("\nExpiring within {EXPIRY_DAYS} days (lapsed first):\n"));
        for e in expiries.entries.iter().take(SHOWN) {
            let when = match e.days {
                d if d < 0 => format!("lapsed {} day(s) ago", -d),
                0 => "today".to_string(),
                d => format!("in {d} day(s)"),
            };
            out.push_str(&format!("- {} ({}, {when}): {}\n", e.note, e.date, e.what));
        }
        out.push_str(&more(expiries.entries.len()));
        out.push_str(
            "Once one is renewed, update its `expires` list with vault_set_frontmatter.\n",
        );
    }
    let bound = Target { vault: vault.map(String::from).or_else(|| t.vault.clone()), ..t.clone() };
    out.push('\n');
    match tools::periodic_note(engine, &bound, "daily", None) {
        Ok(note) if note.exists => out.push_str(&format!(
            "Today's daily note is {}; read it with vault_read and add to it with vault_append.\n",
            note.path
        )),
        Ok(note) => out.push_str(&format!(
            "Today's daily note {} does not exist yet; create it with vault_write (path {}) \
             if the user wants one.\n",
            note.path, note.path
        )),
        Err(e) => out.push_str(&format!("This vault has no daily note: {}\n", e.message())),
    }
    Ok(out)
}

fn file_document(engine: &Engine, t: &Target, vault: Option<&str>, path: &str) -> Result<String> {
    let v = tools::vault(engine, t, vault)?;
    let mut files = v.all_files();
    // What the client cannot see neither exists for it nor suggests a folder.
    files.retain(|f| !tools::hidden(v, &t.grant, f));
    let exists = files.iter().any(|f| f == path);
    let stem = path.rsplit('/').next().unwrap_or(path);
    let (title, ext) = match stem.rsplit_once('.') {
        Some((title, ext)) => (title, ext.to_ascii_lowercase()),
        None => (stem, String::new()),
    };
    let query = title.replace(['-', '_'], " ");
    let mut out = format!("File `{path}` in the vault.\n\n");
    if !exists {
        out.push_str(&format!(
            "{path} is not in the vault yet: upload it first (a document through the REST API \
             or the web page, a note with vault_write).\n"
        ));
    }
    let search = tools::SearchArgs {
        query: query.clone(),
        k: Some(8),
        prefix: None,
        vault: vault.map(String::from),
        thorough: false,
    };
    let hits = match tools::search(engine, t, search) {
        Ok(r) => r.results.into_iter().filter(|h| h.path != path).collect(),
        Err(e) => {
            out.push_str(&format!("Search could not help yet: {}\n", e.message()));
            Vec::new()
        }
    };
    // Folders first by the related notes, then by where files of its kind already live: the
    // vault's own structure is its filing rule.
    let mut folders: Vec<(String, usize)> = Vec::new();
    let mut count = |dir: &str, weight: usize| {
        let dir = if dir.is_empty() { "(the vault's root)" } else { dir };
        match folders.iter_mut().find(|(d, _)| d == dir) {
            Some((_, n)) => *n += weight,
            None => folders.push((dir.to_string(), weight)),
        }
    };
    for h in &hits {
        count(h.path.rsplit_once('/').map_or("", |(d, _)| d), 2);
    }
    let same_kind =
        |f: &&String| !ext.is_empty() && f.to_ascii_lowercase().ends_with(&format!(".{ext}"));
    for f in files.iter().filter(same_kind).filter(|f| *f != path) {
        count(f.rsplit_once('/').map_or("", |(d, _)| d), 1);
    }
    folders.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if folders.is_empty() {
        out.push_str("No folder stands out; ask the user where it belongs.\n");
    } else {
        out.push_str("Folders where it would fit, likeliest first:\n");
        for (dir, _) in folders.iter().take(5) {
            out.push_str(&format!("- {dir}\n"));
        }
        out.push_str(&format!(
            "Move it with vault_move (path `{path}`, destination `<folder>/{stem}`).\n"
        ));
    }
    if hits.is_empty() {
        out.push_str(&format!("\nNo note relates to {query:?} by search.\n"));
    } else {
        out.push_str(&format!("\nNotes related to {query:?}, to link it from:\n"));
        let mut seen = Vec::new();
        for h in hits.iter().filter(|h| {
            !seen.contains(&h.path) && {
                seen.push(h.path.clone());
                true
            }
        }) {
            out.push_str(&format!("- {} ({})\n", h.path, h.title));
        }
        out.push_str(&format!(
            "Add a link `[[{stem}]]` to the fitting ones with vault_append or vault_patch; \
             vault_links shows what links to it afterwards.\n"
        ));
    }
    Ok(out)
}

/// The tool call that fixes a finding of `code` at `path`.
fn fix_for(code: &str, path: &str) -> String {
    match code {
        "broken_link" | "missing_attachment" => format!(
            "vault_links on {path} shows the link; correct it with vault_patch, or create the \
             target with vault_write"
        ),
        "ambiguous_link" => {
            format!("vault_links on {path}, then vault_patch the link to name the full path")
        }
        "duplicate_heading" => {
            format!("vault_map on {path}, then vault_patch to rename one of the headings")
        }
        "invalid_frontmatter" | "unclosed_frontmatter" => {
            format!("vault_read {path}, then fix the frontmatter with vault_set_frontmatter")
        }
        "malformed_expires" => {
            format!("vault_set_frontmatter on {path}, key `expires`, with dated items")
        }
        "unlinked_document" => format!(
            "the prompt file_document with path {path}, then link it from a note with vault_append"
        ),
        "empty_extraction" | "extraction_failed" => {
            format!("vault_status explains why {path} gave no text; a searchable copy helps")
        }
        _ => format!("vault_read {path} and fix what the finding says"),
    }
}

fn maintenance_pass(engine: &Engine, t: &Target, vault: Option<&str>) -> Result<String> {
    let run = tools::maintenance(engine, t, vault)?;
    let findings: Vec<_> = run.checks.iter().flat_map(|c| c.findings.iter()).collect();
    if findings.is_empty() {
        return Ok(format!(
            "Vault {} passed every maintenance check: nothing to fix.\n",
            run.vault
        ));
    }
    let mut out = format!(
        "Fix the maintenance findings of vault {} ({} in all), one at a time, then run \
         vault_maintenance again to check.\n\n",
        run.vault,
        findings.len()
    );
    for f in findings.iter().take(SHOWN) {
        let at = match (&f.path, f.line) {
            (Some(p), Some(l)) => format!("{p}:{l}"),
            (Some(p), None) => p.clone(),
            _ => "the vault".to_string(),
        };
        let fix = fix_for(&f.code, f.path.as_deref().unwrap_or("the note"));
        out.push_str(&format!(
            "- {} ({}) at {at}: {}\n  Fix: {fix}.\n",
            f.code,
            f.severity.as_str(),
            f.message
        ));
    }
    out.push_str(&more(findings.len()));
    Ok(out)
}

/// Obsidian's core Templates settings: the folder and the formats of `{{date}}`/`{{time}}`.
struct TemplateSettings {
    folder: String,
    date_format: String,
    time_format: String,
}

/// The settings from `.obsidian/templates.json`, Obsidian's defaults where it is silent. The
/// file is the owner's, read here as periodic notes read theirs; a symlink or an oversized or
/// unreadable file counts as absent, since a prompt only suggests.
fn template_settings(v: &Vault) -> TemplateSettings {
    let at = v.root().join(".obsidian/templates.json");
    let json: Value = std::fs::symlink_metadata(&at)
        .ok()
        .filter(|m| m.is_file() && m.len() <= MAX_SETTINGS_BYTES)
        .and_then(|_| std::fs::read(&at).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let text = |key: &str, default: &str| {
        json.get(key)
            .and_then(Value::as_str)
            .map(|s| s.trim().trim_matches('/'))
            .filter(|s| !s.is_empty())
            .unwrap_or(default)
            .to_string()
    };
    TemplateSettings {
        folder: text("folder", DEFAULT_TEMPLATES),
        date_format: text("dateFormat", DEFAULT_DATE_FORMAT),
        time_format: text("timeFormat", DEFAULT_TIME_FORMAT),
    }
}

/// The templates: the notes under the templates folder, as vault paths.
fn templates(v: &Vault, folder: &str) -> Vec<String> {
    let under = format!("{folder}/");
    v.all_files()
        .into_iter()
        .filter(|f| f.starts_with(&under) && f.to_ascii_lowercase().ends_with(".md"))
        .collect()
}

fn note_from_template(
    engine: &Engine,
    t: &Target,
    vault: Option<&str>,
    template: &str,
    title: &str,
    now: chrono::NaiveDateTime,
) -> Result<String> {
    let v = tools::vault(engine, t, vault)?;
    let s = template_settings(v);
    let mut all = templates(v, &s.folder);
    all.retain(|p| !tools::hidden(v, &t.grant, p));
    if all.is_empty() {
        return Ok(format!(
            "This vault has no templates folder ({}/ holds no notes; Obsidian's Templates \
             plugin names its folder in .obsidian/templates.json). Ask the user for the note's \
             content, then create `{title}.md` with vault_write.\n",
            s.folder
        ));
    }
    let wanted = template.trim_end_matches(".md");
    let found = all.iter().find(|p| {
        let p = p.trim_end_matches(".md");
        p == wanted || p.rsplit('/').next() == Some(wanted) || p == format!("{}/{wanted}", s.folder)
    });
    let Some(path) = found else {
        let names: Vec<&str> = all.iter().map(|p| p.as_str()).collect();
        return Err(Error::new(
            ErrorCode::NotFound,
            format!("there is no template {template:?}; the templates are {}", names.join(", ")),
        ));
    };
    let read = tools::read(
        engine,
        t,
        tools::ReadArgs { vault: vault.map(String::from), path: path.clone(), section: None },
    )?;
    let fill = Placeholders {
        title: title.to_string(),
        date_format: &s.date_format,
        time_format: &s.time_format,
    };
    let text = fill.apply(&read.content, now, now);
    Ok(format!(
        "Create the note `{title}.md` from the template {path} (placeholders filled for {}). \
         Ask the user where it belongs if the vault's root is not right, adjust the text with \
         them, then call vault_write with path `{title}.md` and this content:\n\n{text}",
        format(&s.date_format, now)
    ))
}

/// The templates `note_from_template`'s `template` argument names, as it names them (the
/// path under the templates folder, without `.md`): what `completion/complete` offers for it
/// (`completion::prompt_argument` decides that this argument takes a template).
pub(crate) fn template_names(
    engine: &Engine,
    t: &Target,
    vault: Option<&str>,
) -> Result<Vec<String>> {
    let v = tools::vault(engine, t, vault)?;
    let s = template_settings(v);
    let under = format!("{}/", s.folder);
    Ok(templates(v, &s.folder)
        .into_iter()
        .map(|p| p[under.len()..].trim_end_matches(".md").to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixture;
    use serde_json::json;

    fn vault(notes: &[(&str, &str)]) -> fixture::Vaults {
        fixture::Vaults::new(&[("v", notes)])
    }

    fn text(r: &GetPromptResult) -> String {
        r.messages.iter().filter_map(|m| m.content.as_text().map(|t| t.text.clone())).collect()
    }

    fn args(v: Value) -> Option<JsonObject> {
        v.as_object().cloned()
    }

    #[test]
    fn a_template_is_filled_with_the_title_and_obsidians_date_and_time_formats() {
        let f = vault(&[
            (".obsidian/templates.json", r#"{"folder": "Meta/Tpl", "dateFormat": "DD.MM.YYYY"}"#),
            (
                "Meta/Tpl/Meeting.md",
                "# {{title}}\n\nOn {{date}} at {{time}}; iso {{date:YYYY-MM-DD}}; {{other}}\n",
            ),
        ]);
        let engine = f.engine();
        let now =
            chrono::NaiveDate::from_ymd_opt(2026, 3, 7).unwrap().and_hms_opt(9, 5, 0).unwrap();
        let out = note_from_template(&engine, &Target::default(), None, "Meeting", "Kickoff", now)
            .unwrap();
        assert!(
            out.contains("# Kickoff\n\nOn 07.03.2026 at 09:05; iso 2026-03-07; {{other}}\n"),
            "{out}"
        );
        assert!(out.contains("vault_write with path `Kickoff.md`"), "{out}");
    }

    #[test]
    fn templates_default_to_the_templates_folder_and_their_absence_is_said() {
        let f = vault(&[("Templates/Day.md", "{{date}}")]);
        let engine = f.engine();
        let now =
            chrono::NaiveDate::from_ymd_opt(2026, 1, 2).unwrap().and_hms_opt(0, 0, 0).unwrap();
        let out =
            note_from_template(&engine, &Target::default(), None, "Templates/Day.md", "X", now)
                .unwrap();
        assert!(out.ends_with("2026-01-02"), "{out}");
        let missing = note_from_template(&engine, &Target::default(), None, "Week", "X", now);
        assert!(missing.unwrap_err().message().contains("the templates are Templates/Day.md"));

        let bare = vault(&[("A.md", "# A\n")]);
        let engine = bare.engine();
        let out = note_from_template(&engine, &Target::default(), None, "Day", "X", now).unwrap();
        assert!(out.starts_with("This vault has no templates folder (Templates/"), "{out}");
    }

    #[test]
    fn daily_review_lists_open_callouts_and_the_daily_note() {
        let f = vault(&[("Home/Boiler.md", "# Boiler\n\n> [!todo] Bleed the radiators\n")]);
        let engine = f.engine();
        let r = get(&engine, &Target::default(), "daily_review", None).unwrap();
        let out = text(&r);
        assert!(out.contains("Home/Boiler.md:3: Bleed the radiators"), "{out}");
        assert!(out.contains("Today's daily note"), "{out}");
        assert!(out.contains("vault_patch"), "{out}");
    }

    #[test]
    fn maintenance_pass_gives_each_finding_its_fix() {
        let f = vault(&[("A.md", "# A\n\nSee [[Nowhere]].\n")]);
        let engine = f.engine();
        let out = text(&get(&engine, &Target::default(), "maintenance_pass", None).unwrap());
        assert!(out.contains("broken_link"), "{out}");
        assert!(out.contains("Fix: vault_links on A.md"), "{out}");
    }

    #[test]
    fn an_unknown_prompt_or_a_missing_argument_is_invalid_params_saying_what_to_send() {
        let f = vault(&[("A.md", "# A\n")]);
        let engine = f.engine();
        let e = get(&engine, &Target::default(), "weekly", None).unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("the prompts are daily_review, file_document"), "{}", e.message);
        let e =
            get(&engine, &Target::default(), "note_from_template", args(json!({"template": "T"})))
                .unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("needs the argument `title`"), "{}", e.message);
        let e = get(&engine, &Target::default(), "daily_review", args(json!({"vault": "nope"})))
            .unwrap_err();
        assert!(e.message.contains("cannot be built"), "{}", e.message);
    }

    #[test]
    fn file_document_suggests_folders_of_its_kind_and_says_when_it_is_not_there() {
        let f = vault(&[("Bills/old.pdf", "x"), ("Bills/older.pdf", "y"), ("A.md", "# A\n")]);
        let engine = f.engine();
        let a = args(json!({"path": "Inbox/gas-bill.pdf"}));
        let out = text(&get(&engine, &Target::default(), "file_document", a).unwrap());
        assert!(out.contains("Inbox/gas-bill.pdf is not in the vault yet"), "{out}");
        assert!(out.contains("- Bills\n"), "{out}");
        assert!(out.contains("vault_move"), "{out}");
    }

    #[test]
    fn file_document_neither_finds_nor_suggests_what_the_clients_grant_hides() {
        let f =
            vault(&[("Private/gas-bill.pdf", "x"), ("Private/old.pdf", "y"), ("A.md", "# A\n")]);
        let engine = f.engine();
        let grant = crate::vault::grant::Grant {
            client: "phone".into(),
            deny: vec!["Private".into()],
            ..crate::vault::grant::Grant::owner()
        };
        let t = Target { grant, ..Target::default() };
        let a = args(json!({"path": "Private/gas-bill.pdf"}));
        let out = text(&get(&engine, &t, "file_document", a).unwrap());
        assert!(out.contains("Private/gas-bill.pdf is not in the vault yet"), "{out}");
        assert!(!out.contains("- Private\n"), "{out}");
        // The owner is told it is there, and where its kind lives.
        let a = args(json!({"path": "Private/gas-bill.pdf"}));
        let out = text(&get(&engine, &Target::default(), "file_document", a).unwrap());
        assert!(!out.contains("not in the vault yet") && out.contains("- Private\n"), "{out}");
    }

    #[test]
    fn the_templates_are_named_as_the_template_argument_names_them() {
        let f =
            vault(&[("Templates/Meeting.md", "x"), ("Templates/Memo.md", "y"), ("Mail.md", "z")]);
        let engine = f.engine();
        let mut names = template_names(&engine, &Target::default(), None).unwrap();
        names.sort();
        assert_eq!(names, ["Meeting", "Memo"]);
    }
}
