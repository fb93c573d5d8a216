//! The note tools: read, list, map, patch, replace text, append, write, set the body or
//! frontmatter, delete, move and folders, documents, links and periodic notes; each with vault
//! choice, the path gate, the write scope and the re-index of what it wrote.

use super::*;
use crate::vault::patch::{MoveTo, PatchSpec, Spelling};

/// Reads a note or one section.
pub(crate) fn read(desk: &dyn Desk, t: &Target, a: ReadArgs) -> Result<NoteRead> {
    let section = a.section.as_deref().filter(|s| !s.trim().is_empty());
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    plain(t, path, v.read(path, section, &*desk.documents()))
}

/// Reads the bytes of an attachment that `pick` chooses from its length (a byte range).
pub(crate) fn read_attachment_span(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    path: &str,
    pick: impl FnOnce(&crate::vault::attachment::Extent) -> crate::vault::attachment::Span,
) -> Result<crate::vault::attachment::SpanRead> {
    let (v, path) = locate(desk, t, vault, path)?;
    plain(t, path, v.read_attachment_span(path, pick))
}

/// Reads a canvas's own JSON (`vault::canvas::CanvasSource`).
pub(crate) fn read_canvas_source(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    path: &str,
) -> Result<crate::vault::canvas::CanvasSource> {
    let (v, path) = locate(desk, t, vault, path)?;
    plain(t, path, v.read_canvas_source(path))
}

/// Lists a folder.
pub(crate) fn list(desk: &dyn Desk, t: &Target, a: ListArgs) -> Result<Listing> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    Ok(visible_listing(v, &t.grant, plain(t, path, v.list(path))?))
}

/// Maps a note: frontmatter and heading paths.
pub(crate) fn map(desk: &dyn Desk, t: &Target, a: MapArgs) -> Result<NoteMap> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    plain(t, path, v.map(path, &*desk.documents()))
}

/// Edits one section: `vault_patch`'s arguments (MCP, the CLI, the web editor) built into
/// the one typed patch, its refusals worded in the tool's argument names.
pub(crate) fn patch(
    desk: &dyn Desk,
    t: &Target,
    a: PatchArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let spec = PatchSpec {
        target: a.target,
        operation: a.operation,
        delete: false,
        scope: a.target_scope,
        content: a.content,
        allow_empty: a.allow_empty,
        create_missing: a.create_target_if_missing,
        reject_if_present: a.reject_if_present,
        within: a.within,
        relative_levels: a.relative_levels,
        move_to: a.destination.map(|d| MoveTo { parent: d.parent, slot: d.place.slot() }),
    };
    let req = spec.build(&Spelling::TOOL)?;
    patch_built(desk, t, a.vault.as_deref(), &a.path, &req, expected)
}

/// Executes a patch a surface has already built (REST builds its own, to word refusals in
/// the plugin's field names).
pub(crate) fn patch_built(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    path: &str,
    req: &PatchRequest,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, vault, path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(desk, t, Kind::Patch, plain(t, path, v.patch(path, req, expected))?, None))
}

/// Replaces literal text.
pub(crate) fn replace_text(
    desk: &dyn Desk,
    t: &Target,
    a: ReplaceTextArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    let section = a.section.as_deref().filter(|s| !s.trim().is_empty());
    Ok(refreshed(
        desk,
        t,
        Kind::ReplaceText,
        plain(t, path, v.replace_text(path, &a.find, &a.replace, section, a.count, expected))?,
        None,
    ))
}

/// Appends, optionally creating the note.
pub(crate) fn append(
    desk: &dyn Desk,
    t: &Target,
    a: AppendArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(
        desk,
        t,
        Kind::Append,
        plain(t, path, v.append(path, &a.content, a.create_if_missing, expected))?,
        None,
    ))
}

/// Creates or overwrites a note.
pub(crate) fn write(
    desk: &dyn Desk,
    t: &Target,
    a: WriteArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(desk, t, Kind::Write, v.write(path, &a.content, a.overwrite, expected)?, None))
}

/// Files a document (REST and CLI only: MCP carries no binary uploads) and extracts it.
pub(crate) fn file_document(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    path: &str,
    bytes: &[u8],
    overwrite: bool,
) -> Result<(Filed, Verdict)> {
    let (v, path) = locate(desk, t, vault, path)?;
    in_scope(v, t, path, false)?;
    let filed = v.file_document(path, bytes, overwrite)?;
    let (_, extraction) = desk.documents().extraction(&filed.path, bytes)?;
    // Bytes the vault already held are not written again, so not recorded either.
    if filed.status != FilingStatus::Unchanged {
        let (vault, rel) = (&filed.vault, filed.path.as_str());
        wrote(
            desk,
            t,
            Kind::FileDocument,
            vault,
            &[(rel, None)],
            std::slice::from_ref(&filed.path),
        );
    }
    Ok((filed, extraction.verdict))
}

/// Replaces the body.
pub(crate) fn set_body(
    desk: &dyn Desk,
    t: &Target,
    a: SetBodyArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(
        desk,
        t,
        Kind::SetBody,
        plain(t, path, v.set_body(path, &a.content, expected))?,
        None,
    ))
}

/// Sets or removes one frontmatter key.
pub(crate) fn set_frontmatter(
    desk: &dyn Desk,
    t: &Target,
    a: SetFrontmatterArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    if a.key.trim().is_empty() {
        return Err(Error::new(ErrorCode::InvalidRequest, "the frontmatter key is empty"));
    }
    let positioned = a.before.is_some() || a.after.is_some();
    let listed = a.add.is_some() || a.remove.is_some();
    if let Some(new) = &a.rename_to {
        if a.delete || a.value.is_some() || listed || positioned {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "rename_to renames the key and keeps its value; send it without value, delete, \
                 add, remove, before or after (set the value in a second call)",
            ));
        }
        let changed = v.rename_frontmatter_key(path, a.key.trim(), new, expected)?;
        return Ok(refreshed(desk, t, Kind::Frontmatter, changed, None));
    }
    if positioned {
        let value = match a.value {
            Some(value) if !value.is_null() && !a.delete && !listed => value,
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidRequest,
                    "before and after place a new key; send them with a value (no delete, add \
                     or remove), and only one of them",
                ));
            }
        };
        let (anchor, place) = match (&a.before, &a.after) {
            (Some(b), None) => (b.trim(), crate::vault::frontmatter::Place::Before),
            (None, Some(after)) => (after.trim(), crate::vault::frontmatter::Place::After),
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidRequest,
                    "send before or after, not both: the new key goes beside one existing key",
                ));
            }
        };
        let entries = [(a.key.trim().to_string(), value)];
        let changed = v.frontmatter_entries(path, anchor, place, &entries, expected)?;
        return Ok(refreshed(desk, t, Kind::Frontmatter, changed, None));
    }
    if a.add.is_some() || a.remove.is_some() {
        if a.delete || a.value.as_ref().is_some_and(|v| !v.is_null()) {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "add and remove edit the items of a list; send them without value or delete",
            ));
        }
        let (add, remove) = (items(a.add), items(a.remove));
        let edited = v.edit_list(path, a.key.trim(), &add, &remove, expected)?;
        return Ok(refreshed(desk, t, Kind::Frontmatter, edited, None));
    }
    if a.key.trim() == "expires"
        && let Some(value) = a.value.as_ref().filter(|_| !a.delete)
    {
        check_expires(value)?;
    }
    let value = match (a.delete, a.value) {
        (true, _) => None,
        (false, None | Some(Value::Null)) => {
            return Err(Error::new(
                ErrorCode::InvalidValue,
                format!(
                    "no value for '{}'; pass a string, number, boolean or list, \
                     or set delete to remove the key",
                    a.key.trim()
                ),
            ));
        }
        (false, Some(v)) => Some(v),
    };
    Ok(refreshed(
        desk,
        t,
        Kind::Frontmatter,
        plain(t, path, v.set_frontmatter(path, &a.key, value.as_ref(), expected))?,
        None,
    ))
}

/// Puts frontmatter entries before, after or in place of an existing key: the Local REST API's
/// markerAndContent frontmatter edits (`vault_set_frontmatter` reaches the same operation
/// with `before` and `after`).
pub(crate) fn frontmatter_entries(
    desk: &dyn Desk,
    t: &Target,
    a: EntriesArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    let changed = v.frontmatter_entries(path, a.anchor.trim(), a.place, &a.entries, expected)?;
    Ok(refreshed(desk, t, Kind::Frontmatter, changed, None))
}

/// Deletes a note or document.
pub(crate) fn delete(
    desk: &dyn Desk,
    t: &Target,
    a: DeleteArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(
        desk,
        t,
        Kind::Delete,
        plain(t, path, v.remove(path, expected, a.permanent))?,
        None,
    ))
}

/// Moves a note or document; refused under any write scope.
pub(crate) fn move_file(
    desk: &dyn Desk,
    t: &Target,
    a: MoveArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, source) = locate(desk, t, a.vault.as_deref(), &a.source)?;
    let (to, destination) = desk.vaults().locate(Some(v.name()), &a.destination)?;
    if to.name() != v.name() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "a move stays inside one vault; copy across vaults with read and write, then delete",
        ));
    }
    if let Some(scope) = &t.scope {
        return Err(Error::new(
            ErrorCode::OutOfScope,
            format!(
                "moves are not allowed on a connection confined to {scope}; \
                 ask the user to move {} themselves",
                a.source
            ),
        ));
    }
    // Both ends must be the client's to write; rewriting the links to it may touch any note.
    in_scope(v, t, source, false)?;
    grants::visible(v, &t.grant, destination)?;
    in_scope(v, t, destination, false)?;
    if a.update_links {
        t.grant.check_whole_vault("a move's link rewrites (pass update_links: false)")?;
    }
    let change = plain(t, source, v.move_file(source, destination, a.update_links, expected))?;
    // The source as the vault spells it (`./Inbox/x.md` is `Inbox/x.md`, an absolute path
    // inside the vault folder its relative form), so the index and index.md find the entry
    // to drop.
    let from = v.vault_path(source).unwrap_or_else(|_| source.to_string());
    Ok(refreshed(desk, t, Kind::Move, change, Some(&from)))
}

/// Creates a folder and its parents.
pub(crate) fn create_folder(desk: &dyn Desk, t: &Target, a: CreateFolderArgs) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, true)?;
    let change = v.create_folder(path)?;
    // No index holds a folder: recorded, nothing re-indexed.
    wrote(desk, t, Kind::CreateFolder, &change.vault, &[(&change.path, None)], &[]);
    Ok(change)
}

/// Deletes a folder.
pub(crate) fn delete_folder(desk: &dyn Desk, t: &Target, a: DeleteFolderArgs) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, true)?;
    Ok(refreshed(
        desk,
        t,
        Kind::DeleteFolder,
        plain(t, path, v.delete_folder(path, a.recursive))?,
        None,
    ))
}

/// A note's times (milliseconds since the epoch; creation falls back to modification where
/// the filesystem keeps no birth time) and size, for the Local REST API's `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileTimes {
    /// Creation time.
    pub(crate) ctime_ms: i64,
    /// Modification time.
    pub(crate) mtime_ms: i64,
    /// Size in bytes.
    pub(crate) size: u64,
}

/// The times and size of one file (through the gate, like every read).
pub(crate) fn file_times(desk: &dyn Desk, t: &Target, raw: &str) -> Result<FileTimes> {
    let (v, path) = locate(desk, t, None, raw)?;
    let stat = v
        .stat(path)
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("{path} does not exist")))?;
    let ms = |time: std::io::Result<std::time::SystemTime>| {
        time.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64)
    };
    let meta = std::fs::metadata(v.root().join(&stat.path)).ok();
    let mtime_ms = stat.mtime_ns / 1_000_000;
    let ctime_ms = meta.and_then(|m| ms(m.created())).unwrap_or(mtime_ms);
    Ok(FileTimes { ctime_ms, mtime_ms, size: stat.size })
}

/// A filed document's bytes and its vault-relative path, for a surface that hands the file
/// itself to a viewer (the web page's PDF link); the gate and the document suffixes decide.
pub(crate) fn document_bytes(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    raw: &str,
) -> Result<(String, Vec<u8>)> {
    let (v, path) = locate(desk, t, vault, raw)?;
    plain(t, path, v.document_bytes(path))
}

/// Every note of the addressed vault with its text, in path order: for reads that look at
/// every note at once (the Local REST API's `/tags/` and JsonLogic `/search/`).
pub(crate) fn all_notes(desk: &dyn Desk, t: &Target) -> Result<Vec<(String, String)>> {
    let v = vault(desk, t, None)?;
    let mut notes = crate::upkeep::notes(v, "");
    notes.retain(|(path, _)| t.grant.can_read(path));
    Ok(notes)
}

/// Where a note's links point: the vault paths they resolve to, and the targets that name
/// nothing in the vault (as written), each once, in order.
pub(crate) fn note_links(
    desk: &dyn Desk,
    t: &Target,
    raw: &str,
    text: &str,
) -> Result<(Vec<String>, Vec<String>)> {
    let (v, path) = locate(desk, t, None, raw)?;
    let paths = v.link_paths();
    let (mut resolved, mut unresolved) = (Vec::new(), Vec::new());
    for link in crate::vault::links::links(text) {
        if link.is_external() || link.target.is_empty() {
            continue;
        }
        match crate::vault::links::resolve(&link.target, link.kind, path, &paths) {
            Some(p) if !resolved.contains(&p) => resolved.push(p),
            Some(_) => {}
            None if !unresolved.contains(&link.target) => unresolved.push(link.target),
            None => {}
        }
    }
    Ok((resolved, unresolved))
}

/// Where link targets written in the note `raw` lead, in the vault's own resolution (the one
/// moves and backlinks use): each `(target, wikilink?)` becomes its vault path or `None`. For
/// a surface that renders the note and must point its links somewhere (the web page).
pub(crate) fn resolve_links(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    raw: &str,
    targets: &[(String, bool)],
) -> Result<Vec<Option<String>>> {
    use crate::vault::links::{LinkKind, resolve};
    let (v, path) = locate(desk, t, vault, raw)?;
    let paths = v.link_paths();
    Ok(targets
        .iter()
        .map(|(target, wiki)| {
            let kind = if *wiki { LinkKind::Wiki } else { LinkKind::Markdown };
            resolve(target, kind, path, &paths)
        })
        .collect())
}

/// What each embed of the note at `raw` shows (`vault::embed::found`), for `keys` of
/// `(target, is_wiki, fragment)`: resolved as its links are, with one walk of the vault, and
/// each embedded note read once.
pub(crate) fn embeds(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    raw: &str,
    keys: &[((String, bool), Option<String>)],
) -> Result<Vec<crate::vault::embed::Found>> {
    use crate::vault::links::{LinkKind, PathSet, resolve};
    let (v, path) = locate(desk, t, vault, raw)?;
    let paths = PathSet::new(v.all_files());
    let read = |p: &str| Ok(v.read(p, None, &*desk.documents())?.content);
    Ok(keys
        .iter()
        .map(|((target, wiki), fragment)| {
            let kind = if *wiki { LinkKind::Wiki } else { LinkKind::Markdown };
            let resolved = resolve(target, kind, path, &paths);
            crate::vault::embed::found(path, resolved, fragment.as_deref(), &read)
        })
        .collect())
}

/// The periodic note of `period` (`daily`, `weekly`, `monthly`, `quarterly`, `yearly`) that
/// holds `date` (today, in local time, when `None`), by the vault's own Obsidian settings
/// (`vault::periodic`): its gated path and whether it is there. Reads settings only.
pub(crate) fn periodic_note(
    desk: &dyn Desk,
    t: &Target,
    period: &str,
    date: Option<chrono::NaiveDate>,
) -> Result<crate::vault::periodic::PeriodicNote> {
    let date = date.unwrap_or_else(|| chrono::Local::now().date_naive());
    vault(desk, t, None)?.periodic(period, date)
}

/// Creates a missing periodic note from its template (with Obsidian's placeholders filled in),
/// or empty when the period has none. `None` when the note is there already (another writer
/// was first), so a caller can go on to edit it either way. A template the settings name but
/// the vault lacks is refused rather than skipped: the note would not be what the owner set up.
pub(crate) fn periodic_create(
    desk: &dyn Desk,
    t: &Target,
    note: &crate::vault::periodic::PeriodicNote,
    date: Option<chrono::NaiveDate>,
) -> Result<Option<Change>> {
    use crate::vault::periodic::expand_template;
    let now = chrono::Local::now().naive_local();
    let date = date.unwrap_or(now.date());
    let s = &note.settings;
    let content = match s.template.as_deref() {
        None => String::new(),
        Some(template) => {
            let setting = s.source.unwrap_or("the settings");
            // Obsidian's settings name a template as a link does, usually without `.md`.
            let path = if template.to_ascii_lowercase().ends_with(".md") {
                template.to_string()
            } else {
                format!("{template}.md")
            };
            let a = ReadArgs { vault: None, path, section: None };
            let text = read(desk, t, a).map_err(|e| {
                let next = if e.code() == ErrorCode::NotFound {
                    "create it, or change the template in Obsidian".to_string()
                } else {
                    e.message().to_string()
                };
                Error::new(
                    e.code(),
                    format!(
                        "the {} template '{template}' named in {setting} cannot be used: {next}",
                        s.period
                    ),
                )
            })?;
            expand_template(&text.content, s, date, now)
        }
    };
    let a = WriteArgs { vault: None, path: note.path.clone(), content, overwrite: false };
    match write(desk, t, a, None) {
        Ok(c) => Ok(Some(c)),
        Err(e) if e.code() == ErrorCode::AlreadyExists => Ok(None),
        Err(e) => Err(e),
    }
}
