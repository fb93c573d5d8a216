//! The front door: every request any surface makes, once, below all of them.
//!
//! Each vault tool is an argument struct and one function that does, in order: vault choice
//! (the one rule, [`crate::vault::Vaults::locate`]), the path gate (inside the vault
//! operation), the write scope, the operation, and the re-index of what it wrote. MCP
//! deserialises these structs straight from a tool call (their JSON schemas are the tools'
//! input schemas); REST builds the same structs from a path, query, headers and body; the
//! CLI's search and reindex call the same functions. So the surfaces can phrase answers
//! differently but cannot act differently: a scoped-write check, a clamp on `k` or the
//! re-index after a write lives here and nowhere else.
//!
//! The note and upkeep tools run on a [`Desk`]: the serving [`Engine`], or the CLI's
//! [`LightEngine`] (the vaults without the model, handing re-index work to the running owner).
//! Search, status and reindex need the index and take the [`Engine`] itself.
//!
//! Every function is blocking (file I/O, embedding); the async surfaces run them on the
//! blocking pool. Rendering the outcome (prose for MCP, text or JSON for REST, lines for the
//! terminal) is theirs: this module knows no HTTP, MCP or clap.

use serde_json::Value;

use crate::auth::audit::{Kind, Trail};
use crate::config::Config;
use crate::docs::Verdict;
use crate::engine::{Engine, LightEngine};
use crate::error::{Error, ErrorCode, Result};
use crate::index::SyncReport;
use crate::search::{Limit, ScopedSearch, SearchRequest, SearchResponse};
use crate::vault::Indexed;
use crate::vault::grant::Grant;
use crate::vault::{
    Change, DocumentText, Filed, FilingStatus, Listing, NoteMap, NoteRead, PatchRequest, Vault,
    VaultScope, Vaults,
};

/// Which vault a request addresses and, for `/mcp/only/<path>`, the one note or folder its
/// writes are confined to, and the rights of the client that sent it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// The vault named in the URL (`/v/<name>/...`); `None` is the default vault.
    pub(crate) vault: Option<String>,
    /// The write scope; `None` is unscoped.
    pub(crate) scope: Option<String>,
    /// The client's rights, resolved at the front door from its credential; the default is
    /// the owner's, every right (the CLI, stdio and the API key). The URL's vault and scope
    /// narrow it further and never widen it (`service::grants`).
    pub(crate) grant: Grant,
}

/// What the note and upkeep tools need from below, whichever process serves them.
pub(crate) trait Desk {
    /// The configuration (upkeep settings, defaults).
    fn config(&self) -> &Config;
    /// The configured vaults.
    fn vaults(&self) -> &Vaults;
    /// The text of filed documents (the index's extraction cache).
    fn documents(&self) -> Box<dyn DocumentText + '_>;
    /// Has what a write touched re-indexed, within a bounded wait, and says how far that got
    /// (`None`: no index was told).
    fn written(&self, vault: &str, paths: &[String]) -> Option<Indexed>;
    /// Held for the length of a maintenance run, so runs in one process never overlap.
    fn maintenance_turn(&self) -> std::sync::MutexGuard<'_, ()>;
    /// The audit trail this process records its writes in ([`wrote`]).
    fn trail(&self) -> &Trail;
}

impl Desk for Engine {
    fn config(&self) -> &Config {
        Engine::config(self)
    }
    fn vaults(&self) -> &Vaults {
        Engine::vaults(self)
    }
    fn documents(&self) -> Box<dyn DocumentText + '_> {
        Box::new(self.index())
    }
    fn written(&self, vault: &str, paths: &[String]) -> Option<Indexed> {
        self.refresh(vault, paths)
    }
    fn maintenance_turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.maintenance_runs().lock().unwrap_or_else(|p| p.into_inner())
    }
    fn trail(&self) -> &Trail {
        Engine::trail(self)
    }
}

impl Desk for LightEngine {
    fn config(&self) -> &Config {
        LightEngine::config(self)
    }
    fn vaults(&self) -> &Vaults {
        LightEngine::vaults(self)
    }
    fn documents(&self) -> Box<dyn DocumentText + '_> {
        Box::new(Borrowed(LightEngine::documents(self)))
    }
    fn written(&self, vault: &str, paths: &[String]) -> Option<Indexed> {
        self.refresh(vault, paths)
    }
    fn maintenance_turn(&self) -> std::sync::MutexGuard<'_, ()> {
        self.maintenance_runs().lock().unwrap_or_else(|p| p.into_inner())
    }
    fn trail(&self) -> &Trail {
        LightEngine::trail(self)
    }
}

/// A borrowed extraction cache, boxed like the engine's shared one.
struct Borrowed<'a, T: ?Sized>(&'a T);

impl<T: DocumentText + ?Sized> DocumentText for Borrowed<'_, T> {
    fn extraction(&self, rel: &str, bytes: &[u8]) -> Result<(String, crate::docs::Extraction)> {
        self.0.extraction(rel, bytes)
    }
}

/// The surfaces hold the engine in an `Arc`.
impl<T: Desk + ?Sized> Desk for std::sync::Arc<T> {
    fn config(&self) -> &Config {
        (**self).config()
    }
    fn vaults(&self) -> &Vaults {
        (**self).vaults()
    }
    fn documents(&self) -> Box<dyn DocumentText + '_> {
        (**self).documents()
    }
    fn written(&self, vault: &str, paths: &[String]) -> Option<Indexed> {
        (**self).written(vault, paths)
    }
    fn maintenance_turn(&self) -> std::sync::MutexGuard<'_, ()> {
        (**self).maintenance_turn()
    }
    fn trail(&self) -> &Trail {
        (**self).trail()
    }
}

mod args;
mod grants;
mod notes;
mod search;
mod upkeep;

pub(crate) use args::*;
pub(crate) use grants::{hidden, visible_links, visible_listing};
use grants::{plain, visible, writable};
pub(crate) use notes::*;
pub(crate) use search::*;
pub(crate) use upkeep::*;

/// The vault a request means: the `vault` argument, else the connection's (`/v/<name>/`), else
/// the default vault. The two may not disagree.
fn chosen<'a>(t: &'a Target, arg: Option<&'a str>) -> Result<Option<&'a str>> {
    let arg = arg.map(str::trim).filter(|v| !v.is_empty());
    match (arg, t.vault.as_deref()) {
        (Some(a), Some(b)) if a != b => Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "this connection is bound to vault '{b}' by its URL, and the request names vault \
                 '{a}'; leave the vault out, or connect without /v/{b}/"
            ),
        )),
        (Some(a), _) => Ok(Some(a)),
        (None, Some(b)) => Ok(Some(b)),
        // A client limited to some vaults means its first when it names none.
        (None, None) => Ok(t.grant.default_vault()),
    }
}

/// The vault and vault-relative path a request means, by the one rule every surface uses
/// ([`crate::vault::Vaults::locate`]): a `NAME:` prefix on the path picks a configured vault,
/// else [`chosen`]. A connection bound to a vault (by URL or by a write scope) cannot reach
/// another one through a prefix.
fn locate<'e, 'p>(
    desk: &'e dyn Desk,
    t: &Target,
    arg: Option<&str>,
    raw: &'p str,
) -> Result<(&'e std::sync::Arc<Vault>, &'p str)> {
    let default = chosen(t, arg)?;
    let (v, path) = desk.vaults().locate(default, raw)?;
    t.grant.check_vault(v.name())?;
    visible(v, &t.grant, path)?;
    if let Some(bound) = bound(desk, t)?
        && v.name() != bound
    {
        return Err(Error::new(
            ErrorCode::OutOfScope,
            format!(
                "this connection is confined to vault '{bound}'; '{raw}' is in vault '{}'",
                v.name()
            ),
        ));
    }
    Ok((v, path))
}

/// The one vault a connection is confined to: the one its URL names, else the default vault
/// when it has a write scope; `None` when it reaches every vault.
fn bound<'e>(desk: &'e dyn Desk, t: &'e Target) -> Result<Option<&'e str>> {
    Ok(match (&t.vault, &t.scope) {
        (Some(name), _) => Some(name.as_str()),
        (None, Some(_)) => Some(desk.vaults().get(None)?.name()),
        (None, None) => None,
    })
}

/// The vaults a connection reaches, the default first: the one it is confined to
/// ([`locate`]'s rule), else every vault. For surfaces that enumerate what can be read (MCP's
/// resources), so a listing never names what a read would refuse.
pub(crate) fn reachable<'e>(
    desk: &'e dyn Desk,
    t: &Target,
) -> Result<Vec<&'e std::sync::Arc<Vault>>> {
    match bound(desk, t)? {
        Some(name) => {
            let v = desk.vaults().get(Some(name))?;
            Ok(if t.grant.reaches(v.name()) { vec![v] } else { Vec::new() })
        }
        None => Ok(desk.vaults().iter().filter(|v| t.grant.reaches(v.name())).collect()),
    }
}

/// The vault a request without a path means.
pub(crate) fn vault<'e>(
    desk: &'e dyn Desk,
    t: &Target,
    arg: Option<&str>,
) -> Result<&'e std::sync::Arc<Vault>> {
    let v = desk.vaults().get(chosen(t, arg)?)?;
    t.grant.check_vault(v.name())?;
    Ok(v)
}

/// Whether the request may write at `raw`: the client's grant (writes, and the path visible:
/// `locate` checked that), then the connection's write scope.
fn in_scope(v: &Vault, t: &Target, raw: &str, folder: bool) -> Result<()> {
    writable(v, &t.grant, raw, folder)?;
    match t.scope.as_deref() {
        Some(scope) => v.check_scope(raw, folder, scope),
        None => Ok(()),
    }
}

/// The vaults a search or a re-index covers: the `vault` argument by the one rule
/// ([`crate::vault::Vaults::scope`]: a configured name, even `all`, is that vault; else `all`
/// or nothing is every vault), else the connection's vault (`/v/<name>/`), else every vault.
/// A connection bound to a vault by its URL reaches no other, and not every vault either.
fn scope(engine: &Engine, t: &Target, arg: Option<&str>) -> Result<VaultScope> {
    let asked = arg.map(str::trim).filter(|v| !v.is_empty());
    match (engine.vaults().scope(asked)?, &t.vault) {
        (VaultScope::Every, Some(bound)) if asked.is_some() => Err(Error::new(
            ErrorCode::InvalidRequest,
            format!(
                "this connection is bound to vault '{bound}' by its URL, so it cannot reach every \
                 vault; leave the vault out, or connect without /v/{bound}/"
            ),
        )),
        (VaultScope::Every, Some(bound)) => Ok(VaultScope::One(bound.clone())),
        (VaultScope::One(name), _) => {
            chosen(t, Some(&name))?;
            t.grant.check_vault(&name)?;
            Ok(VaultScope::One(name))
        }
        // The caller's words never name several; only a grant narrows every vault to them.
        (several @ VaultScope::Several(_), _) => Ok(several),
        (every, None) => grants::vault_scope(&t.grant, engine.vaults(), every),
    }
    .and_then(|s| {
        for name in s.names().unwrap_or_default() {
            t.grant.check_vault(name)?;
        }
        Ok(s)
    })
}

/// Every completed write passes here, once: it is recorded in the audit trail as the
/// request's client's (`rows`: each path written, with a move's destination), then what it
/// touched (`reindex`) is re-indexed. A refused write never gets here, so it records nothing.
///
/// Why here: every surface's write (REST, MCP, the web page, the CLI) is one front-door
/// function, and each ends in this call after its operation succeeded, so the client comes
/// from the one `Target` the surface resolved and no handler records anything itself. The
/// owner's surfaces (the API key, the signed-in web page, the CLI and stdio, which all run
/// with the owner's grant) record as `owner`.
fn wrote(
    desk: &dyn Desk,
    t: &Target,
    kind: Kind,
    vault: &str,
    rows: &[(&str, Option<&str>)],
    reindex: &[String],
) -> Option<Indexed> {
    desk.trail().record(&t.grant.client, kind, vault, rows);
    if reindex.is_empty() {
        return None;
    }
    desk.written(vault, reindex)
}

/// A note's write done: recorded and re-indexed ([`wrote`]), so a search right after it sees
/// the change. The write is done (its bytes renamed into place) before this is called; the
/// answer waits for the re-index only a bounded time and records how far it got. `moved_from`
/// is a move's source, re-indexed too so its entry goes.
fn refreshed(
    desk: &dyn Desk,
    t: &Target,
    kind: Kind,
    mut change: Change,
    moved_from: Option<&str>,
) -> Change {
    let mut paths = vec![change.path.clone()];
    let row = match moved_from {
        Some(from) => {
            let from = from.trim_matches('/');
            paths.push(from.to_string());
            (from, Some(change.path.as_str()))
        }
        None => (change.path.as_str(), None),
    };
    change.indexed = wrote(desk, t, kind, &change.vault, &[row], &paths);
    change
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::edit::Operation;
    use crate::vault::headings::Scope;

    #[test]
    fn tool_arguments_take_their_documented_defaults() {
        let p: PatchArgs = serde_json::from_value(
            serde_json::json!({"path": "a.md", "target": "A", "operation": "replace"}),
        )
        .unwrap();
        assert_eq!(
            (p.operation, p.target_scope, p.content.as_str(), p.allow_empty),
            (Operation::Replace, Scope::Content, "", false)
        );
        let e = serde_json::from_value::<PatchArgs>(
            serde_json::json!({"path": "a.md", "target": "A", "content": ""}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("missing field `operation`"), "{e}");
        let p: PatchArgs = serde_json::from_value(serde_json::json!(
            {"path": "a.md", "target": "A", "operation": "Append", "target_scope": "markerAndContent"}
        ))
        .unwrap();
        assert_eq!((p.operation, p.target_scope), (Operation::Append, Scope::MarkerAndContent));
        let m: MoveArgs =
            serde_json::from_value(serde_json::json!({"source": "a.md", "destination": "b.md"}))
                .unwrap();
        assert!(m.update_links);
        let r: ReplaceTextArgs = serde_json::from_value(
            serde_json::json!({"path": "a.md", "find": "x", "replace": "y"}),
        )
        .unwrap();
        assert_eq!(r.count, 1);
        let l: ListArgs = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(l.path, "");
    }

    #[test]
    fn a_patch_operation_outside_the_closed_set_is_refused_with_the_choices() {
        let e = serde_json::from_value::<PatchArgs>(
            serde_json::json!({"path": "a.md", "target": "A", "operation": "insert"}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("use one of replace, prepend, append"), "{e}");
        let schema = serde_json::to_value(schemars::schema_for!(PatchArgs)).unwrap();
        assert_eq!(
            schema["properties"]["operation"]["enum"],
            serde_json::json!(["replace", "prepend", "append"])
        );
    }

    #[test]
    fn an_expires_value_the_expiry_reader_cannot_track_is_refused_before_writing() {
        let good = serde_json::json!([{"date": "2027-02-14", "what": "Car insurance"}]);
        assert!(check_expires(&good).is_ok());
        assert!(check_expires(&serde_json::json!("none")).is_ok());
        for bad in [
            serde_json::json!("2027-02-14"),
            serde_json::json!([{"date": "2027-02-30", "what": "x"}]),
            serde_json::json!([{"date": "2027-02-14"}]),
            serde_json::json!([]),
        ] {
            let e = check_expires(&bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidValue, "{bad}");
            assert!(e.message().contains("\"date\": \"2027-02-14\""), "{}", e.message());
        }
    }

    #[test]
    fn unknown_arguments_are_refused_rather_than_ignored() {
        let e = serde_json::from_value::<WriteArgs>(
            serde_json::json!({"path": "a.md", "content": "x", "overwrit": true}),
        );
        assert!(e.is_err());
    }
}
