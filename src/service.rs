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
//! Every function is blocking (file I/O, embedding); the async surfaces run them on the
//! blocking pool. Rendering the outcome (prose for MCP, text or JSON for REST, lines for the
//! terminal) is theirs: this module knows no HTTP, MCP or clap.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::docs::Verdict;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::index::SyncReport;
use crate::search::{SearchRequest, SearchResponse};
use crate::vault::edit::Operation;
use crate::vault::headings::Scope;
use crate::vault::{Change, Filed, FilingStatus, Listing, NoteMap, NoteRead, PatchRequest, Vault};

/// Which vault a request addresses and, for `/mcp/only/<path>`, the one note or folder its
/// writes are confined to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// The vault named in the URL (`/v/<name>/...`); `None` is the default vault.
    pub vault: Option<String>,
    /// The write scope; `None` is unscoped.
    pub scope: Option<String>,
}

/// The largest `k` a search may ask for.
pub const MAX_K: usize = 20;

fn default_true() -> bool {
    true
}
fn default_one() -> usize {
    1
}
fn default_replace() -> String {
    "replace".into()
}
fn default_content_scope() -> String {
    "content".into()
}

/// `vault_search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for: a question, some words, or an exact token (a policy number, a plate).
    pub query: String,
    /// How many passages to return (1 to 20; empty or 0 means the configured default, 6).
    #[serde(default)]
    pub k: Option<usize>,
    /// Only this folder, e.g. "Projects/Alpha" (case-insensitive, whole folder names).
    #[serde(default)]
    pub prefix: Option<String>,
    /// Only this vault (by name); by default, or with "all", every vault is searched.
    #[serde(default)]
    pub vault: Option<String>,
    /// Spend longer for a better order (more candidates for the reranker, when one is set up).
    #[serde(default)]
    pub thorough: bool,
}

/// `vault_read`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note, e.g. "Projects/Alpha.md".
    pub path: String,
    /// Only this section: a heading path from vault_map such as "Plan::Risks", or a unique
    /// heading name.
    #[serde(default)]
    pub section: Option<String>,
}

/// `vault_list`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative folder; empty for the vault root.
    #[serde(default)]
    pub path: String,
}

/// `vault_map`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MapArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note.
    pub path: String,
}

/// `vault_patch`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note.
    pub path: String,
    /// The heading to edit, as vault_map shows it ("Plan::Risks"); a unique trailing part
    /// ("Risks") also works.
    pub target: String,
    /// replace, prepend or append.
    #[serde(default = "default_replace")]
    pub operation: String,
    /// The Markdown to put in.
    #[serde(default)]
    pub content: String,
    /// What the operation applies to: content (the lines under the heading, subsections
    /// included), marker (the heading line) or markerAndContent.
    #[serde(default = "default_content_scope")]
    pub target_scope: String,
}

/// `vault_replace_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceTextArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note.
    pub path: String,
    /// The exact text to find (literal, case-sensitive).
    pub find: String,
    /// What to put in its place.
    pub replace: String,
    /// Only within this section (a heading target as for vault_patch).
    #[serde(default)]
    pub section: Option<String>,
    /// How many occurrences you expect; the edit is refused if there are more or fewer.
    #[serde(default = "default_one")]
    pub count: usize,
}

/// `vault_append`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note.
    pub path: String,
    /// The Markdown to add at the end.
    pub content: String,
    /// Create the note with this content when it does not exist.
    #[serde(default)]
    pub create_if_missing: bool,
}

/// `vault_write`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note (ending in .md); missing folders are created.
    pub path: String,
    /// The whole note, frontmatter included.
    pub content: String,
    /// Replace the note when it exists (otherwise that is refused).
    #[serde(default)]
    pub overwrite: bool,
}

/// `vault_set_body`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetBodyArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note.
    pub path: String,
    /// The new body; the frontmatter block is kept as it is.
    pub content: String,
}

/// `vault_set_frontmatter`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetFrontmatterArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note.
    pub path: String,
    /// The frontmatter key.
    pub key: String,
    /// The new value: a string, number, boolean or list. Leave empty when deleting.
    #[serde(default)]
    pub value: Option<Value>,
    /// Remove the key instead of setting it.
    #[serde(default)]
    pub delete: bool,
}

/// `vault_delete`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note or document.
    pub path: String,
}

/// `vault_move`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Where the note or document is now.
    pub source: String,
    /// Where it should go (must not exist).
    pub destination: String,
    /// Repoint Markdown links in other notes that point at it.
    #[serde(default = "default_true")]
    pub update_links: bool,
}

/// `vault_create_folder`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateFolderArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative folder; missing parents are created too.
    pub path: String,
}

/// `vault_delete_folder`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFolderArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative folder.
    pub path: String,
    /// Delete everything inside too (otherwise only an empty folder is deleted).
    #[serde(default)]
    pub recursive: bool,
}

/// `vault_reindex`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReindexArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Re-read and re-chunk every file instead of only the changed ones.
    #[serde(default)]
    pub full: bool,
}

/// `vault_status`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
}

/// `vault_expiries`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpiriesArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Only dates at most this many days away; lapsed dates are always included.
    #[serde(default)]
    pub within: Option<i64>,
    /// Also list the notes that have no `expires` field (otherwise only counted).
    #[serde(default)]
    pub untracked: bool,
    /// Only notes under this folder, e.g. "Home".
    #[serde(default)]
    pub dir: Option<String>,
}

/// `vault_callouts`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalloutsArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Only notes under this folder, e.g. "Projects".
    #[serde(default)]
    pub dir: Option<String>,
}

/// `vault_maintenance`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaintenanceArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Only list the checks, without running them.
    #[serde(default)]
    pub list_only: bool,
}

/// `vault_frontmatter_query`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrontmatterQueryArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// The frontmatter key, e.g. "status" or "tags".
    pub key: String,
    /// The exact value to match: equal to a plain value, or one item of a list. May be "".
    pub value: String,
    /// Only notes under this folder.
    #[serde(default)]
    pub dir: Option<String>,
}

pub use crate::vault::ALL_VAULTS;

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
        (None, b) => Ok(b),
    }
}

/// The vault and vault-relative path a request means, by the one rule every surface uses
/// ([`crate::vault::Vaults::locate`]): a `NAME:` prefix on the path picks a configured vault,
/// else [`chosen`]. A connection bound to a vault (by URL or by a write scope) cannot reach
/// another one through a prefix.
fn locate<'e, 'p>(
    engine: &'e Engine,
    t: &Target,
    arg: Option<&str>,
    raw: &'p str,
) -> Result<(&'e std::sync::Arc<Vault>, &'p str)> {
    let default = chosen(t, arg)?;
    let (v, path) = engine.vaults().locate(default, raw)?;
    let bound = match (&t.vault, &t.scope) {
        (Some(name), _) => Some(name.as_str()),
        (None, Some(_)) => Some(engine.vaults().get(None)?.name()),
        (None, None) => None,
    };
    if let Some(bound) = bound
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

/// The vault a request without a path means.
fn vault<'e>(
    engine: &'e Engine,
    t: &Target,
    arg: Option<&str>,
) -> Result<&'e std::sync::Arc<Vault>> {
    engine.vaults().get(chosen(t, arg)?)
}

fn in_scope(v: &Vault, t: &Target, raw: &str, folder: bool) -> Result<()> {
    match t.scope.as_deref() {
        Some(scope) => v.check_scope(raw, folder, scope),
        None => Ok(()),
    }
}

/// Re-indexes what a write touched, so a search right after it sees the change.
fn refreshed(engine: &Engine, change: Change, also: &[&str]) -> Change {
    let mut paths = vec![change.path.clone()];
    paths.extend(also.iter().map(|p| p.trim_matches('/').to_string()));
    engine.refresh(&change.vault, &paths);
    change
}

/// Searches; `k` of 0 or none is the configured default, then clamped to 1..=20.
pub fn search(engine: &Engine, t: &Target, a: SearchArgs) -> Result<SearchResponse> {
    engine.search(&search_request(engine, t, a)?)
}

/// The request a search means on every surface: the empty-query refusal, the default and the
/// clamp of `k`, the vault rule with `all`, an empty prefix as none. A surface with options of
/// its own (the CLI's `--mode`) sets them on the result.
pub fn search_request(engine: &Engine, t: &Target, a: SearchArgs) -> Result<SearchRequest> {
    if a.query.trim().is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "the query is empty; pass some words, a question or an exact token",
        ));
    }
    let k = match a.k {
        None | Some(0) => engine.config().search.default_k,
        Some(k) => k,
    }
    .clamp(1, MAX_K);
    // "all" (or nothing) searches every vault, unless a vault is called that.
    let named = a.vault.filter(|v| !v.trim().is_empty());
    let named = match named {
        Some(v) if v.trim() == ALL_VAULTS && engine.vaults().get(Some(ALL_VAULTS)).is_err() => {
            if let Some(bound) = &t.vault {
                return Err(Error::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "this connection is bound to vault '{bound}' by its URL; it cannot search every vault"
                    ),
                ));
            }
            None
        }
        other => other,
    };
    let vault = chosen(t, named.as_deref())?.map(str::to_string);
    if let Some(name) = &vault {
        engine.vaults().get(Some(name))?;
    }
    let mut req = SearchRequest::new(&a.query);
    req.k = Some(k);
    req.vault = vault;
    req.prefix = a.prefix.filter(|p| !p.trim().is_empty());
    req.thorough = a.thorough;
    Ok(req)
}

/// Reads a note or one section.
pub fn read(engine: &Engine, t: &Target, a: ReadArgs) -> Result<NoteRead> {
    let section = a.section.as_deref().filter(|s| !s.trim().is_empty());
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    v.read(path, section, engine.index().as_ref())
}

/// Lists a folder.
pub fn list(engine: &Engine, t: &Target, a: ListArgs) -> Result<Listing> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    v.list(path)
}

/// Maps a note: frontmatter and heading paths.
pub fn map(engine: &Engine, t: &Target, a: MapArgs) -> Result<NoteMap> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    v.map(path, engine.index().as_ref())
}

/// Edits one section.
pub fn patch(engine: &Engine, t: &Target, a: PatchArgs, expected: Option<&str>) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    let req = PatchRequest {
        target: &a.target,
        operation: a.operation.parse::<Operation>()?,
        scope: a.target_scope.parse::<Scope>()?,
        content: &a.content,
    };
    Ok(refreshed(engine, v.patch(path, &req, expected)?, &[]))
}

/// Replaces literal text.
pub fn replace_text(
    engine: &Engine,
    t: &Target,
    a: ReplaceTextArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    let section = a.section.as_deref().filter(|s| !s.trim().is_empty());
    Ok(refreshed(
        engine,
        v.replace_text(path, &a.find, &a.replace, section, a.count, expected)?,
        &[],
    ))
}

/// Appends, optionally creating the note.
pub fn append(
    engine: &Engine,
    t: &Target,
    a: AppendArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(engine, v.append(path, &a.content, a.create_if_missing, expected)?, &[]))
}

/// Creates or overwrites a note.
pub fn write(engine: &Engine, t: &Target, a: WriteArgs, expected: Option<&str>) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(engine, v.write(path, &a.content, a.overwrite, expected)?, &[]))
}

/// Files a document (REST and CLI only: MCP carries no binary uploads) and extracts it.
pub fn file_document(
    engine: &Engine,
    t: &Target,
    path: &str,
    bytes: &[u8],
    overwrite: bool,
) -> Result<(Filed, Verdict)> {
    let (v, path) = locate(engine, t, None, path)?;
    in_scope(v, t, path, false)?;
    let filed = v.file_document(path, bytes, overwrite)?;
    let (_, extraction) = engine.index().extraction(&filed.path, bytes)?;
    if filed.status != FilingStatus::Unchanged {
        engine.refresh(&filed.vault, std::slice::from_ref(&filed.path));
    }
    Ok((filed, extraction.verdict))
}

/// Replaces the body.
pub fn set_body(
    engine: &Engine,
    t: &Target,
    a: SetBodyArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(engine, v.set_body(path, &a.content, expected)?, &[]))
}

/// Sets or removes one frontmatter key.
pub fn set_frontmatter(
    engine: &Engine,
    t: &Target,
    a: SetFrontmatterArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    if a.key.trim().is_empty() {
        return Err(Error::new(ErrorCode::InvalidRequest, "the frontmatter key is empty"));
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
    Ok(refreshed(engine, v.set_frontmatter(path, &a.key, value.as_ref(), expected)?, &[]))
}

/// Deletes a note or document.
pub fn delete(
    engine: &Engine,
    t: &Target,
    a: DeleteArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(engine, v.delete(path, expected)?, &[]))
}

/// Moves a note or document; refused under any write scope.
pub fn move_file(
    engine: &Engine,
    t: &Target,
    a: MoveArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, source) = locate(engine, t, a.vault.as_deref(), &a.source)?;
    let (to, destination) = engine.vaults().locate(Some(v.name()), &a.destination)?;
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
    let change = v.move_file(source, destination, a.update_links, expected)?;
    // The source as the vault spells it (`./Inbox/x.md` is `Inbox/x.md`), so the index and
    // index.md find the entry to drop.
    let from = crate::vault::path::normalize(source)
        .map(|parts| parts.join("/"))
        .unwrap_or_else(|_| source.to_string());
    Ok(refreshed(engine, change, &[&from]))
}

/// Creates a folder and its parents.
pub fn create_folder(engine: &Engine, t: &Target, a: CreateFolderArgs) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, true)?;
    v.create_folder(path)
}

/// Deletes a folder.
pub fn delete_folder(engine: &Engine, t: &Target, a: DeleteFolderArgs) -> Result<Change> {
    let (v, path) = locate(engine, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, true)?;
    Ok(refreshed(engine, v.delete_folder(path, a.recursive)?, &[]))
}

/// Index coverage per vault (only the target vault when one is named).
pub fn status(
    engine: &Engine,
    t: &Target,
    a: StatusArgs,
) -> Result<crate::index::coverage::Report> {
    engine.coverage(chosen(t, a.vault.as_deref())?)
}

/// The dated commitments (`expires` frontmatter), one row per date.
pub fn expiries(
    engine: &Engine,
    t: &Target,
    a: ExpiriesArgs,
) -> Result<crate::upkeep::expiries::Report> {
    let query = crate::upkeep::expiries::Query { within: a.within, list_untracked: a.untracked };
    engine.expiries(chosen(t, a.vault.as_deref())?, a.dir.as_deref().unwrap_or(""), &query)
}

/// The open callouts.
pub fn callouts(
    engine: &Engine,
    t: &Target,
    a: CalloutsArgs,
) -> Result<crate::upkeep::callouts::Report> {
    engine.callouts(chosen(t, a.vault.as_deref())?, a.dir.as_deref().unwrap_or(""))
}

/// Runs every maintenance check.
pub fn maintenance(
    engine: &Engine,
    t: &Target,
    vault: Option<&str>,
) -> Result<crate::upkeep::findings::Run> {
    engine.maintenance(chosen(t, vault)?)
}

/// Lists the maintenance checks without running them.
pub fn checks(
    engine: &Engine,
    t: &Target,
    vault: Option<&str>,
) -> Result<Vec<crate::upkeep::CheckInfo>> {
    engine.checks(chosen(t, vault)?)
}

/// The notes whose frontmatter `key` holds exactly `value`.
pub fn frontmatter_query(
    engine: &Engine,
    t: &Target,
    a: FrontmatterQueryArgs,
) -> Result<Vec<String>> {
    engine.frontmatter_query(
        chosen(t, a.vault.as_deref())?,
        &a.key,
        &a.value,
        a.dir.as_deref().unwrap_or(""),
    )
}

/// Brings the index of the addressed vault up to date (or rebuilds it with `full`).
pub fn reindex(engine: &Engine, t: &Target, a: ReindexArgs) -> Result<Vec<(String, SyncReport)>> {
    let name = vault(engine, t, a.vault.as_deref())?.name().to_string();
    engine.sync(Some(&name), a.full, &crate::index::Silent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_arguments_take_their_documented_defaults() {
        let p: PatchArgs =
            serde_json::from_value(serde_json::json!({"path": "a.md", "target": "A"})).unwrap();
        assert_eq!(
            (p.operation.as_str(), p.target_scope.as_str(), p.content.as_str()),
            ("replace", "content", "")
        );
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
    fn unknown_arguments_are_refused_rather_than_ignored() {
        let e = serde_json::from_value::<WriteArgs>(
            serde_json::json!({"path": "a.md", "content": "x", "overwrit": true}),
        );
        assert!(e.is_err());
    }
}
