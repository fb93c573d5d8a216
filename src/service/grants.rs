//! The front door's side of a client's [`Grant`]: what each tool asks of it before acting, and
//! what an answer that names paths leaves out.
//!
//! The grant itself (`vault::grant`) holds the rules; this file applies them where the front
//! door knows the vault and the path a request means: a caller's path is checked as written
//! and as a forgiving lookup resolves it (a note's name can lead into a denied folder), so no
//! spelling and no name reaches a path the client cannot see. An invisible path answers like a
//! missing one, and a path really missing is refused in the same words ([`plain`]): the
//! nearest paths an operation's `not_found` suggests could name what the client may not see.

use crate::error::{ErrorCode, Result};
use crate::upkeep::survey::LinkReport;
use crate::vault::grant::{Grant, invisible};
use crate::vault::{EntryKind, Listing, Vault, VaultScope, Vaults, without_nearest};

/// Refuses a caller's path (as `Vaults::locate` left it) that the grant cannot see.
pub(super) fn visible(v: &Vault, grant: &Grant, raw: &str) -> Result<()> {
    if grant.sees_everything() {
        return Ok(());
    }
    // As written: a path the gate refuses is left for the gate to refuse in its own words.
    let Ok(written) = v.vault_path(raw) else { return Ok(()) };
    if !grant.can_list(&written) || generated_index(v, &written) {
        return Err(invisible(raw));
    }
    match v.existing(raw) {
        Ok(found) if found != written && !grant.can_read(&found) => Err(invisible(raw)),
        // It lists every candidate, which may include paths the grant may not see.
        Err(e) if e.code() == ErrorCode::AmbiguousPath => Err(invisible(raw)),
        // Nothing there: a write may create it, a read answers `not_found` itself.
        _ => Ok(()),
    }
}

/// Whether `rel` is the generated root `index.md`, which lists every note: a client that sees
/// only some folders is not shown it (a hand-written one is a note like any other).
fn generated_index(v: &Vault, rel: &str) -> bool {
    rel.eq_ignore_ascii_case("index.md")
        && v.read_bytes(rel)
            .is_ok_and(|b| crate::upkeep::indexmd::generated(&String::from_utf8_lossy(&b)))
}

/// Whether a file a listing found is hidden from the grant: a path it cannot see, or the
/// generated `index.md` when it sees only some folders.
pub(crate) fn hidden(v: &Vault, grant: &Grant, rel: &str) -> bool {
    !grant.sees_everything() && (!grant.can_read(rel) || generated_index(v, rel))
}

/// An operation's outcome for a client that sees only some folders: its `not_found` in the
/// words an invisible path gets, and no refusal with the nearest paths (which could name
/// hidden ones).
pub(super) fn plain<T>(t: &super::Target, raw: &str, r: Result<T>) -> Result<T> {
    match r {
        Err(e) if !t.grant.sees_everything() => Err(match e.code() {
            ErrorCode::NotFound => invisible(raw),
            _ => without_nearest(e),
        }),
        r => r,
    }
}

/// Refuses a write when the client may only read, or at a path it cannot see (`visible` let
/// the folders on the way to an allowed one through, for a listing), or of a folder that
/// holds one it cannot see.
pub(super) fn writable(v: &Vault, grant: &Grant, raw: &str, folder: bool) -> Result<()> {
    grant.check_write()?;
    if grant.sees_everything() {
        return Ok(());
    }
    let Ok(written) = v.vault_path(raw) else { return Ok(()) };
    if !grant.can_read(&written) {
        return Err(invisible(raw));
    }
    if folder && grant.holds_denied(&written) {
        return Err(
            grant.refused(format!("the whole of '{written}', which holds folders it may not see"))
        );
    }
    Ok(())
}

/// A search over "every vault" for a client limited to some means every vault it reaches:
/// all of them, the one, or the several (a remote agent's connector searches with a query
/// alone, and the owner ticked those vaults for it). It reaches at least one, since a grant
/// names only configured vaults; were none left, the refusal names what it was granted.
pub(super) fn vault_scope(grant: &Grant, vaults: &Vaults, asked: VaultScope) -> Result<VaultScope> {
    if grant.vaults.is_empty() || asked != VaultScope::Every {
        return Ok(asked);
    }
    let names = vaults.names();
    let reached: Vec<&str> = names.iter().copied().filter(|n| grant.reaches(n)).collect();
    match reached.as_slice() {
        [] => Err(grant.refused(format!(
            "any configured vault (it reaches only {})",
            grant.vaults.join(", ")
        ))),
        _ if reached.len() == names.len() => Ok(VaultScope::Every),
        [one] => Ok(VaultScope::One(one.to_string())),
        _ => Ok(VaultScope::Several(reached.iter().map(|n| n.to_string()).collect())),
    }
}

/// A folder's listing without what the grant cannot see.
pub(crate) fn visible_listing(v: &Vault, grant: &Grant, mut listing: Listing) -> Listing {
    if !grant.sees_everything() {
        listing.entries.retain(|e| match e.kind {
            EntryKind::Folder => grant.can_list(&e.path),
            _ => !hidden(v, grant, &e.path),
        });
    }
    listing
}

/// A note's links without the notes the grant cannot see: a backlink from one goes, and a
/// link to one reads as unresolved.
pub(crate) fn visible_links(grant: &Grant, mut report: LinkReport) -> LinkReport {
    if !grant.sees_everything() {
        report.backlinks.retain(|b| grant.can_read(&b.from));
        for link in &mut report.outgoing {
            if link.resolved.as_deref().is_some_and(|p| !grant.can_read(p)) {
                link.resolved = None;
            }
        }
    }
    report
}
