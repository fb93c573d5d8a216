//! The upkeep tools: status, expiries, callouts, tags, maintenance and its checks,
//! frontmatter queries, grep and links.

use super::*;

/// Index coverage per vault (only the target vault when one is named).
pub(crate) fn status(
    engine: &Engine,
    t: &Target,
    a: StatusArgs,
) -> Result<crate::index::coverage::Report> {
    let name = chosen(t, a.vault.as_deref())?;
    if let Some(name) = name {
        t.grant.check_vault(name)?;
    }
    engine.coverage(name)
}

/// The dated commitments (`expires` frontmatter), one row per date, counted from today (local
/// time).
pub(crate) fn expiries(
    desk: &dyn Desk,
    t: &Target,
    a: ExpiriesArgs,
) -> Result<crate::upkeep::expiries::Report> {
    let v = vault(desk, t, a.vault.as_deref())?;
    t.grant.check_sees_all("vault_expiries")?;
    let query = crate::upkeep::expiries::Query { within: a.within, list_untracked: a.untracked };
    let today = chrono::Local::now().date_naive();
    crate::upkeep::expiries(v, a.dir.as_deref().unwrap_or(""), today, &query)
}

/// The open callouts.
pub(crate) fn callouts(
    desk: &dyn Desk,
    t: &Target,
    a: CalloutsArgs,
) -> Result<crate::upkeep::callouts::Report> {
    let v = vault(desk, t, a.vault.as_deref())?;
    t.grant.check_sees_all("vault_callouts")?;
    crate::upkeep::callouts(v, a.dir.as_deref().unwrap_or(""), &upkeep_settings(desk))
}

/// The vault's tags (frontmatter and inline, nested ones counted for their parents too) with
/// how many notes carry each; or, with a tag, the notes carrying it or a tag nested under it.
pub(crate) fn tags(
    desk: &dyn Desk,
    t: &Target,
    a: TagsArgs,
) -> Result<crate::vault::tags::TagReport> {
    let v = vault(desk, t, a.vault.as_deref())?;
    let wanted = match a.tag.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(crate::vault::tags::asked(raw).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidRequest,
                format!(
                    "{raw:?} is not a tag: a tag is letters, digits, `_`, `-` and `/` (for \
                     nesting), with at least one non-digit, e.g. \"project/alpha\""
                ),
            )
        })?),
    };
    let dir = v.folder(a.dir.as_deref().unwrap_or(""))?;
    let mut notes = crate::upkeep::notes(v, &dir);
    notes.retain(|(path, _)| t.grant.can_read(path));
    Ok(crate::vault::tags::report(&notes, wanted))
}

/// Renames (or merges) a tag in every note, inline and in the frontmatter, nested tags with
/// it, as one journaled change; refused under any write scope, as a move is.
pub(crate) fn rename_tag(
    desk: &dyn Desk,
    t: &Target,
    a: TagRenameArgs,
) -> Result<crate::vault::TagRenamed> {
    let v = vault(desk, t, a.vault.as_deref())?;
    t.grant.check_whole_vault("a tag's rename")?;
    if let Some(scope) = &t.scope {
        return Err(Error::new(
            ErrorCode::OutOfScope,
            format!(
                "a tag's rename changes notes anywhere in the vault, which a connection confined \
                 to {scope} may not; ask the user to rename #{} themselves",
                a.from.trim().trim_start_matches('#')
            ),
        ));
    }
    let retag = crate::vault::tag_rename::Retag::new(&a.from, &a.to)?;
    let r = v.rename_tag(&retag, a.dry_run, crate::upkeep::indexmd::generated)?;
    if !r.dry_run && !r.notes.is_empty() {
        let paths: Vec<String> = r.notes.iter().map(|(p, _)| p.clone()).collect();
        let rows: Vec<(&str, Option<&str>)> = paths.iter().map(|p| (p.as_str(), None)).collect();
        wrote(desk, t, Kind::TagRename, v.name(), &rows, &paths);
    }
    Ok(r)
}

/// The audit trail's rows `filter` wants, newest first, as the request's client may see them.
///
/// Why a client sees only its own rows: the trail names every client's paths, and a client
/// limited to some folders or vaults must not learn another's (nor the owner's) paths from it.
/// So the owner sees every row; any other client gets its own, asked or not, and is refused
/// (`not_granted`) when it asks for another client's. A connection bound to a vault
/// (`/v/<name>/`) sees that vault's rows; a row at a path its grant no longer shows is left out.
pub(crate) fn audit(
    desk: &dyn Desk,
    t: &Target,
    mut filter: crate::auth::audit::Filter,
) -> Result<Vec<crate::auth::audit::Entry>> {
    let grant = &t.grant;
    if grant.client != crate::vault::grant::OWNER {
        match filter.client.as_deref() {
            Some(other) if other != grant.client => {
                return Err(grant.refused(format!("another client's audit trail ('{other}')")));
            }
            _ => filter.client = Some(grant.client.clone()),
        }
    }
    if t.vault.is_some() {
        filter.vault = t.vault.clone();
    }
    let mut rows = desk.trail().list(&filter)?;
    rows.retain(|r| {
        grant.reaches(&r.vault)
            && grant.can_read(&r.path)
            && r.to.as_deref().is_none_or(|to| grant.can_read(to))
    });
    Ok(rows)
}

/// Runs every maintenance check (built-in and the vault's scripts); a second caller in the
/// same process waits for the run in progress.
pub(crate) fn maintenance(
    desk: &dyn Desk,
    t: &Target,
    vault_name: Option<&str>,
) -> Result<crate::upkeep::findings::Run> {
    let v = vault(desk, t, vault_name)?;
    t.grant.check_sees_all("vault_maintenance")?;
    let _turn = desk.maintenance_turn();
    Ok(crate::upkeep::maintenance(v, &*desk.documents(), &upkeep_settings(desk)))
}

/// Lists the maintenance checks without running them.
pub(crate) fn checks(
    desk: &dyn Desk,
    t: &Target,
    vault_name: Option<&str>,
) -> Result<Vec<crate::upkeep::CheckInfo>> {
    let v = vault(desk, t, vault_name)?;
    t.grant.check_sees_all("the maintenance checks")?;
    Ok(crate::upkeep::checks(v, &upkeep_settings(desk)))
}

/// The notes whose frontmatter `key` holds exactly `value`.
pub(crate) fn frontmatter_query(
    desk: &dyn Desk,
    t: &Target,
    a: FrontmatterQueryArgs,
) -> Result<Vec<String>> {
    let v = vault(desk, t, a.vault.as_deref())?;
    let mut paths =
        crate::upkeep::frontmatter_query(v, &a.key, &a.value, a.dir.as_deref().unwrap_or(""))?;
    paths.retain(|path| t.grant.can_read(path));
    Ok(paths)
}

/// Every line that holds a literal string or matches a pattern, over notes and the text of
/// filed documents, paged.
pub(crate) fn grep(
    desk: &dyn Desk,
    t: &Target,
    a: GrepArgs,
) -> Result<crate::upkeep::survey::GrepReport> {
    let v = vault(desk, t, a.vault.as_deref())?;
    let q = crate::upkeep::survey::GrepQuery {
        pattern: a.pattern,
        regex: a.regex,
        ignore_case: a.ignore_case,
        dir: a.dir.unwrap_or_default(),
        limit: a.limit.filter(|&n| n > 0).unwrap_or(crate::upkeep::survey::GREP_DEFAULT_LIMIT),
        offset: a.offset,
        grant: t.grant.clone(),
    };
    crate::upkeep::survey::grep(v, &*desk.documents(), &q)
}

/// A note's outgoing links (resolved or broken) and its backlinks.
pub(crate) fn links(
    desk: &dyn Desk,
    t: &Target,
    a: LinksArgs,
) -> Result<crate::upkeep::survey::LinkReport> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    let rel = plain(t, path, v.existing(path))?;
    Ok(visible_links(&t.grant, crate::upkeep::survey::links_of(v, &rel)?))
}

fn upkeep_settings(desk: &dyn Desk) -> crate::upkeep::Settings {
    crate::upkeep::Settings::from_config(desk.config())
}
