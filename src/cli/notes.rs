//! `mdvault read|map|ls|write|append|patch|set-body|set-frontmatter|replace-text|mv|rm|mkdir|rmdir|file`.
//!
//! A PATH may be written `NAME:path/in/vault` to pick a vault other than the default. Content
//! for the writing commands comes from `--content`, `--file`, or standard input. These commands
//! never load the embedding model; reading or filing a document opens the index store only for
//! its extraction cache. They go through the same front door as REST and MCP, on a
//! [`LightEngine`]; a write is handed to the running index owner, when there is one, so a search
//! right after it finds it.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Failure, print, print_json};
use crate::engine::LightEngine;
use crate::error::{Error, ErrorCode};
use crate::service::{self, Target};
use crate::wire;

#[derive(Debug, Subcommand)]
pub(crate) enum NoteCommand {
    /// Print a note, or one section of it.
    #[command(
        after_help = "Examples:\n  mdvault read Home/Boiler.md\n  mdvault read Home/Boiler.md --section 'Servicing::History'\n  mdvault read work:Projects/Plan.md --json"
    )]
    Read {
        /// The note ([VAULT:]path).
        path: String,
        /// A heading target such as `Section` or `Parent::Section`.
        #[arg(long, short)]
        section: Option<String>,
        /// Print JSON (path, content, body, frontmatter, etag).
        #[arg(long)]
        json: bool,
    },
    /// Print a note's frontmatter and its headings as `::` paths to use as patch targets.
    #[command(after_help = "Example:\n  mdvault map 'Tech/Linux Server.md'")]
    Map {
        /// The note ([VAULT:]path).
        path: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List a folder (the vault root when no path is given).
    #[command(after_help = "Examples:\n  mdvault ls\n  mdvault ls Home --json")]
    Ls {
        /// The folder ([VAULT:]path).
        #[arg(default_value = "")]
        path: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Create a note (refuses to replace one unless --overwrite).
    #[command(
        after_help = "Examples:\n  mdvault write Inbox/Idea.md --content '# Idea'\n  echo '# Idea' | mdvault write Inbox/Idea.md --overwrite"
    )]
    Write {
        /// The note ([VAULT:]path).
        path: String,
        #[command(flatten)]
        content: ContentArgs,
        /// Replace the note if it exists.
        #[arg(long)]
        overwrite: bool,
        #[command(flatten)]
        common: WriteArgs,
    },
    /// Append to the end of a note.
    #[command(
        after_help = "Example:\n  mdvault append Inbox/Log.md --create --content '- called the plumber'"
    )]
    Append {
        /// The note ([VAULT:]path).
        path: String,
        #[command(flatten)]
        content: ContentArgs,
        /// Create the note if it does not exist.
        #[arg(long)]
        create: bool,
        #[command(flatten)]
        common: WriteArgs,
    },
    /// Replace, prepend to or append to one heading's section, or one block (`^id`).
    #[command(
        after_help = "Examples:\n  mdvault patch Home/Boiler.md --target 'Servicing' --operation replace --content 'Booked for May.'\n  mdvault patch Home/Boiler.md --target 'Boiler::Log' --operation append --file entry.md\n  mdvault patch Home/Boiler.md --target '^parts-table' --operation append --content '| valve | 12 |'"
    )]
    Patch(PatchCommand),
    /// Replace a note's body, keeping its frontmatter block byte for byte.
    #[command(after_help = "Example:\n  mdvault set-body Inbox/Idea.md --file new-body.md")]
    SetBody {
        /// The note ([VAULT:]path).
        path: String,
        #[command(flatten)]
        content: ContentArgs,
        #[command(flatten)]
        common: WriteArgs,
    },
    /// Set or remove one frontmatter key, leaving every other line as it was.
    #[command(
        after_help = "Examples:\n  mdvault set-frontmatter Home/Boiler.md status serviced\n  mdvault set-frontmatter Home/Boiler.md tags --json-value '[\"home\", \"heating\"]'\n  mdvault set-frontmatter Home/Boiler.md status --delete"
    )]
    SetFrontmatter(SetFrontmatterCommand),
    /// Replace literal text, refusing unless it occurs exactly --count times.
    #[command(
        after_help = "Example:\n  mdvault replace-text Home/Boiler.md --find '1.2 bar' --replace '1.4 bar' --section Settings"
    )]
    ReplaceText {
        /// The note ([VAULT:]path).
        path: String,
        /// The literal text to find (not a pattern).
        #[arg(long)]
        find: String,
        /// The replacement.
        #[arg(long)]
        replace: String,
        /// Only look inside this heading's section.
        #[arg(long)]
        section: Option<String>,
        /// How many occurrences you expect; a different number is refused.
        #[arg(long, default_value_t = 1)]
        count: usize,
        #[command(flatten)]
        common: WriteArgs,
    },
    /// Move a note, document, canvas or attachment, repointing links to it across the vault.
    #[command(name = "mv", after_help = "Example:\n  mdvault mv Inbox/Idea.md Projects/Idea.md")]
    Move {
        /// The current path ([VAULT:]path).
        source: String,
        /// The new path (same vault).
        destination: String,
        /// Leave links pointing at the old path.
        #[arg(long)]
        no_update_links: bool,
        #[command(flatten)]
        common: WriteArgs,
    },
    /// Delete a note or document: it moves to the vault's .trash folder, as in Obsidian.
    #[command(name = "rm", after_help = "Example:\n  mdvault rm Inbox/Old.md")]
    Remove {
        /// The file ([VAULT:]path).
        path: String,
        /// Remove it for good instead of moving it to the vault's .trash folder.
        #[arg(long)]
        permanent: bool,
        #[command(flatten)]
        common: WriteArgs,
    },
    /// Create a folder and any missing parents.
    #[command(after_help = "Example:\n  mdvault mkdir Projects/2027")]
    Mkdir {
        /// The folder ([VAULT:]path).
        path: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// File a document (a PDF) in the vault: directly inside a `Files` folder, bytes kept as
    /// they are, then extracted and reported. Refuses to replace different bytes unless
    /// --overwrite.
    #[command(
        after_help = "Examples:\n  mdvault file ~/Downloads/contract.pdf 'Home/Utilities/Files/2026-10-12 Larkspire - Contract.pdf'\n  mdvault file scan.pdf work:Admin/Files/scan.pdf --overwrite --json"
    )]
    File {
        /// The document on this machine.
        local: PathBuf,
        /// Where to file it ([VAULT:]<folder>/Files/<name>.pdf).
        path: String,
        /// Replace a document with different bytes at that path.
        #[arg(long)]
        overwrite: bool,
        /// Print JSON (path, sha256, size, status, extraction, pages, ...).
        #[arg(long)]
        json: bool,
    },
    /// Every line holding an exact string (or matching a pattern with --regex), over notes and
    /// filed documents' text; an empty answer proves absence.
    #[command(
        after_help = "Examples:\n  mdvault grep '0161 496 0000'\n  mdvault grep --regex --ignore-case 'vantor|t60' --dir Personal"
    )]
    Grep {
        /// The text to find, or a regular expression with --regex.
        pattern: String,
        /// Read the pattern as a regular expression.
        #[arg(long)]
        regex: bool,
        /// Match regardless of case.
        #[arg(long, short)]
        ignore_case: bool,
        /// Only files under this folder.
        #[arg(long, value_name = "FOLDER")]
        dir: Option<String>,
        /// At most this many lines (1 to 200; default 50).
        #[arg(long)]
        limit: Option<usize>,
        /// Skip this many matching lines first.
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Print JSON (the shape `/grep` answers with).
        #[arg(long)]
        json: bool,
    },
    /// A note's outgoing links (resolved or broken) and the notes linking to it.
    #[command(after_help = "Example:\n  mdvault links Inbox/Scratch.md")]
    Links {
        /// The note ([VAULT:]path).
        path: String,
        /// Print JSON (the shape `/links/{path}` answers with).
        #[arg(long)]
        json: bool,
    },
    /// Delete a folder (a non-empty one only with --recursive).
    #[command(after_help = "Example:\n  mdvault rmdir Projects/Old --recursive")]
    Rmdir {
        /// The folder ([VAULT:]path).
        path: String,
        /// Delete its contents too.
        #[arg(long)]
        recursive: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `mdvault patch`'s flags.
#[derive(Debug, Args)]
pub(crate) struct PatchCommand {
    /// The note ([VAULT:]path).
    path: String,
    /// The heading target (`Section`, or `Parent::Section` when the leaf is ambiguous), or
    /// a block id (`^id`).
    #[arg(long, short)]
    target: String,
    /// replace, prepend or append (required: a replace by mistake loses the section).
    #[arg(long, short)]
    operation: String,
    /// Allow a replace with empty content, which empties the section.
    #[arg(long)]
    allow_empty: bool,
    /// Create the heading first when the target names none.
    #[arg(long)]
    create: bool,
    /// content (below the heading), marker (the heading line) or markerAndContent.
    #[arg(long, default_value = "content")]
    scope: String,
    /// Read the content's heading levels as relative to the target: `# X` under a content
    /// target becomes its direct child (warns when a level passes 6).
    #[arg(long)]
    relative_levels: bool,
    /// Move the target's section under this heading instead of editing it ('' for the
    /// top level); with --operation replace and no content.
    #[arg(long, value_name = "HEADING")]
    move_under: Option<String>,
    /// Where a moved section goes among the new parent's subsections: first, last (the
    /// default), before:HEADING or after:HEADING.
    #[arg(long, requires = "move_under")]
    place: Option<String>,
    #[command(flatten)]
    content: ContentArgs,
    #[command(flatten)]
    common: WriteArgs,
}

/// `mdvault set-frontmatter`'s flags.
#[derive(Debug, Args)]
pub(crate) struct SetFrontmatterCommand {
    /// The note ([VAULT:]path).
    path: String,
    /// The key.
    key: String,
    /// The value, as a string.
    #[arg(conflicts_with_all = ["json_value", "delete"])]
    value: Option<String>,
    /// The value as JSON (a number, true/false, a list), e.g. '[1, 2]'.
    #[arg(long, value_name = "JSON", conflicts_with = "delete")]
    json_value: Option<String>,
    /// Remove the key.
    #[arg(long)]
    delete: bool,
    /// Add this item to the list under the key (repeat for more), e.g. --add car.
    #[arg(long, value_name = "ITEM", conflicts_with_all = ["value", "json_value", "delete"])]
    add: Vec<String>,
    /// Remove this item from the list under the key (repeat for more).
    #[arg(long, value_name = "ITEM", conflicts_with_all = ["value", "json_value", "delete"])]
    remove: Vec<String>,
    /// Rename the key to NEW, keeping its value as written (refused if NEW is set).
    #[arg(long, value_name = "NEW", conflicts_with_all = ["value", "json_value", "delete", "add", "remove"])]
    rename_to: Option<String>,
    /// Insert the key as a new entry just before this existing key.
    #[arg(long, value_name = "KEY", conflicts_with_all = ["delete", "add", "remove", "after"])]
    before: Option<String>,
    /// Insert the key as a new entry just after this existing key.
    #[arg(long, value_name = "KEY", conflicts_with_all = ["delete", "add", "remove"])]
    after: Option<String>,
    #[command(flatten)]
    common: WriteArgs,
}

/// Where the new content comes from.
#[derive(Debug, Args)]
pub(crate) struct ContentArgs {
    /// The content as an argument (may start with '-', e.g. a list item).
    #[arg(long, short, conflicts_with = "file", allow_hyphen_values = true)]
    content: Option<String>,
    /// Read the content from a file.
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
}

/// Flags shared by the writing commands.
#[derive(Debug, Args)]
pub(crate) struct WriteArgs {
    /// Refuse (error[conflict]) unless the file's current sha256 is this etag.
    #[arg(long, value_name = "ETAG")]
    if_match: Option<String>,
    /// Print the confirmation as JSON.
    #[arg(long)]
    json: bool,
}

impl ContentArgs {
    fn read(&self) -> Result<String, Failure> {
        if let Some(c) = &self.content {
            return Ok(c.clone());
        }
        if let Some(f) = &self.file {
            return std::fs::read_to_string(f)
                .map_err(|e| Failure::Config(format!("cannot read {}: {e}", f.display())));
        }
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Err(Failure::Config(
                "no content given: pass --content TEXT, --file FILE, or pipe it on standard input"
                    .into(),
            ));
        }
        let mut buf = String::new();
        stdin
            .lock()
            .read_to_string(&mut buf)
            .map_err(|e| Failure::Config(format!("cannot read standard input: {e}")))?;
        Ok(buf)
    }
}

fn confirm(change: crate::vault::Change, json: bool) {
    if json {
        print_json(&wire::change(&change));
    } else {
        print(&change.message);
        for w in &change.warnings {
            eprintln!("warning[{}]: {}", w.code, w.message);
        }
    }
}

/// `--place`: first, last, before:HEADING or after:HEADING.
fn place_arg(place: Option<&str>) -> Result<service::Place, Error> {
    let Some(place) = place.map(str::trim) else { return Ok(service::Place::Last) };
    match place.split_once(':') {
        None if place == "first" => Ok(service::Place::First),
        None if place == "last" => Ok(service::Place::Last),
        Some(("before", h)) if !h.trim().is_empty() => Ok(service::Place::Before(h.to_string())),
        Some(("after", h)) if !h.trim().is_empty() => Ok(service::Place::After(h.to_string())),
        _ => Err(Error::new(
            ErrorCode::InvalidRequest,
            format!("--place {place} is not one of first, last, before:HEADING, after:HEADING"),
        )),
    }
}

/// Translates each command onto the front door ([`crate::service`]), as REST and MCP do: a
/// `NAME:` prefix on a path picks a vault, else `--vault NAME`, else the default vault.
pub(crate) fn run(desk: &LightEngine, only: Option<&str>, cmd: NoteCommand) -> Result<(), Failure> {
    let t = &Target::default();
    let vault = || only.map(str::to_string);
    match cmd {
        NoteCommand::Read { path, section, json } => {
            let note = service::read(desk, t, service::ReadArgs { vault: vault(), path, section })?;
            show(json, || wire::note(&note), &note.content);
        }
        NoteCommand::Map { path, json } => {
            let map = service::map(desk, t, service::MapArgs { vault: vault(), path })?;
            show(json, || wire::map(&map), &map.render());
        }
        NoteCommand::Ls { path, json } => {
            let listing = service::list(desk, t, service::ListArgs { vault: vault(), path })?;
            show(json, || wire::listing(&listing), &listing.render());
        }
        NoteCommand::Write { path, content, overwrite, common } => {
            let a =
                service::WriteArgs { vault: vault(), path, content: content.read()?, overwrite };
            confirm(service::write(desk, t, a, common.if_match.as_deref())?, common.json);
        }
        NoteCommand::Append { path, content, create, common } => {
            let a = service::AppendArgs {
                vault: vault(),
                path,
                content: content.read()?,
                create_if_missing: create,
            };
            confirm(service::append(desk, t, a, common.if_match.as_deref())?, common.json);
        }
        NoteCommand::Patch(p) => patch(desk, t, vault(), p)?,
        NoteCommand::SetBody { path, content, common } => {
            let a = service::SetBodyArgs { vault: vault(), path, content: content.read()? };
            confirm(service::set_body(desk, t, a, common.if_match.as_deref())?, common.json);
        }
        NoteCommand::SetFrontmatter(f) => set_frontmatter(desk, t, vault(), f)?,
        NoteCommand::ReplaceText { path, find, replace, section, count, common } => {
            let a =
                service::ReplaceTextArgs { vault: vault(), path, find, replace, section, count };
            confirm(service::replace_text(desk, t, a, common.if_match.as_deref())?, common.json);
        }
        NoteCommand::Move { source, destination, no_update_links, common } => {
            let a = service::MoveArgs {
                vault: vault(),
                source,
                destination,
                update_links: !no_update_links,
            };
            confirm(service::move_file(desk, t, a, common.if_match.as_deref())?, common.json);
        }
        NoteCommand::Remove { path, permanent, common } => {
            let a = service::DeleteArgs { vault: vault(), path, permanent };
            confirm(service::delete(desk, t, a, common.if_match.as_deref())?, common.json);
        }
        NoteCommand::Mkdir { path, json } => {
            let a = service::CreateFolderArgs { vault: vault(), path };
            confirm(service::create_folder(desk, t, a)?, json);
        }
        NoteCommand::Grep { pattern, regex, ignore_case, dir, limit, offset, json } => {
            let a = service::GrepArgs {
                vault: vault(),
                pattern,
                regex,
                ignore_case,
                dir,
                limit,
                offset,
            };
            print_grep(&service::grep(desk, t, a)?, json);
        }
        NoteCommand::Links { path, json } => {
            let r = service::links(desk, t, service::LinksArgs { vault: vault(), path })?;
            print_links(&r, json);
        }
        NoteCommand::Rmdir { path, recursive, json } => {
            let a = service::DeleteFolderArgs { vault: vault(), path, recursive };
            confirm(service::delete_folder(desk, t, a)?, json);
        }
        NoteCommand::File { local, path, overwrite, json } => {
            let bytes = std::fs::read(&local)
                .map_err(|e| Failure::Config(format!("cannot read {}: {e}", local.display())))?;
            let (filed, v) = service::file_document(desk, t, only, &path, &bytes, overwrite)?;
            print_filed(&filed, &v, json);
        }
    }
    Ok(())
}

/// `patch`: the flags as the front door's patch, a section move when `--move-under` asks.
fn patch(
    desk: &LightEngine,
    t: &Target,
    vault: Option<String>,
    p: PatchCommand,
) -> Result<(), Failure> {
    let PatchCommand {
        path,
        target,
        operation,
        allow_empty,
        create,
        scope,
        relative_levels,
        move_under,
        place,
        content,
        common,
    } = p;
    let destination = match move_under {
        None => None,
        Some(parent) => {
            Some(service::Destination { parent: Some(parent), place: place_arg(place.as_deref())? })
        }
    };
    let a = service::PatchArgs {
        vault,
        path,
        target,
        operation: operation.parse()?,
        content: content.read()?,
        allow_empty,
        target_scope: scope.parse()?,
        create_target_if_missing: create,
        reject_if_present: false,
        within: None,
        relative_levels,
        destination,
    };
    confirm(service::patch(desk, t, a, common.if_match.as_deref())?, common.json);
    Ok(())
}

/// `set-frontmatter`: one of set, delete, add, remove or rename, as the flags say.
fn set_frontmatter(
    desk: &LightEngine,
    t: &Target,
    vault: Option<String>,
    f: SetFrontmatterCommand,
) -> Result<(), Failure> {
    let SetFrontmatterCommand {
        path,
        key,
        value,
        json_value,
        delete,
        add,
        remove,
        rename_to,
        before,
        after,
        common,
    } = f;
    let list = |items: Vec<String>| (!items.is_empty()).then(|| serde_json::Value::from(items));
    let (add, remove) = (list(add), list(remove));
    let other_operation = add.is_some() || remove.is_some() || rename_to.is_some();
    let value = frontmatter_value(value, json_value, delete, other_operation)?;
    let a = service::SetFrontmatterArgs {
        vault,
        path,
        key,
        value,
        delete,
        add,
        remove,
        rename_to,
        before,
        after,
    };
    confirm(service::set_frontmatter(desk, t, a, common.if_match.as_deref())?, common.json);
    Ok(())
}

/// An answer as `--json` asked, or as its text.
fn show(json: bool, wire: impl FnOnce() -> serde_json::Value, text: &str) {
    if json {
        print_json(&wire());
    } else {
        print(text);
    }
}

/// `set-frontmatter`'s value: none when another operation (add, remove, rename) or a delete
/// is asked for, else the VALUE as a string or `--json-value` as JSON.
fn frontmatter_value(
    value: Option<String>,
    json_value: Option<String>,
    delete: bool,
    other_operation: bool,
) -> Result<Option<serde_json::Value>, Failure> {
    Ok(match (value, json_value, delete) {
        _ if other_operation => None,
        (_, _, true) => None,
        (Some(v), None, false) => Some(serde_json::Value::String(v)),
        (None, Some(j), false) => Some(serde_json::from_str(&j).map_err(|e| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!("--json-value is not JSON ({e}); quote strings, e.g. '\"done\"'"),
            )
        })?),
        _ => {
            return Err(Failure::Config("give a VALUE, --json-value JSON, or --delete".into()));
        }
    })
}

/// `grep`'s hits, one `path:line: text` each, and the counts on stderr.
fn print_grep(r: &crate::upkeep::survey::GrepReport, json: bool) {
    if json {
        print_json(&wire::grep(r));
        return;
    }
    for h in &r.hits {
        print(&format!("{}:{}: {}", h.path, h.line, h.text));
    }
    let shown = r.offset + r.hits.len();
    eprintln!("{} matching line(s) in {} file(s); showing up to {shown}", r.total, r.files);
}

/// `links`: each outgoing link with where it resolves, then each backlink.
fn print_links(r: &crate::upkeep::survey::LinkReport, json: bool) {
    if json {
        print_json(&wire::links(r));
        return;
    }
    for l in &r.outgoing {
        let to = match (&l.resolved, l.external) {
            (_, true) => "external".to_string(),
            (Some(p), _) => p.clone(),
            (None, _) => "BROKEN".to_string(),
        };
        print(&format!("-> {}:{} {} ({to})", r.path, l.line, l.target));
    }
    for b in &r.backlinks {
        print(&format!("<- {}:{} {}", b.from, b.line, b.written));
    }
}

/// A filed document: where it went and what extraction made of it.
fn print_filed(filed: &crate::vault::Filed, v: &crate::docs::Verdict, json: bool) {
    if json {
        print_json(&wire::upload(filed, v));
        return;
    }
    let mut line = format!(
        "{} {} ({} bytes): {}, {} page(s), {} characters extracted",
        filed.status.as_str(),
        filed.path,
        filed.size,
        v.status.as_str(),
        v.pages,
        v.extracted_chars
    );
    if !v.detail.is_empty() {
        line.push_str(&format!("; {}", v.detail));
    }
    print(&line);
}
