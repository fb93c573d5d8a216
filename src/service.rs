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

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::config::Config;
use crate::docs::Verdict;
use crate::engine::{Engine, LightEngine};
use crate::error::{Error, ErrorCode, Result};
use crate::index::SyncReport;
use crate::search::{SearchRequest, SearchResponse};
use crate::vault::Indexed;
use crate::vault::edit::Operation;
use crate::vault::headings::Scope;
use crate::vault::{
    Change, DocumentText, Filed, FilingStatus, Listing, NoteMap, NoteRead, PatchRequest, Vault,
    VaultScope, Vaults,
};

/// Which vault a request addresses and, for `/mcp/only/<path>`, the one note or folder its
/// writes are confined to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// The vault named in the URL (`/v/<name>/...`); `None` is the default vault.
    pub vault: Option<String>,
    /// The write scope; `None` is unscoped.
    pub scope: Option<String>,
}

/// What the note and upkeep tools need from below, whichever process serves them.
pub trait Desk {
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
}

/// The largest `k` a search may ask for.
pub const MAX_K: usize = 20;

fn default_true() -> bool {
    true
}
fn default_one() -> usize {
    1
}

/// A closed set on the wire: a tool call names one of the vault layer's names (any case), and
/// its JSON schema lists them, so a model sees the choices instead of guessing.
fn by_name<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = Error>,
{
    let name = String::deserialize(d)?;
    name.parse().map_err(|e: Error| serde::de::Error::custom(e.message()))
}

fn operation_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names = [Operation::Replace, Operation::Prepend, Operation::Append].map(Operation::as_str);
    schemars::json_schema!({"type": "string", "enum": names})
}

fn scope_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names = [Scope::Content, Scope::Marker, Scope::MarkerAndContent].map(Scope::as_str);
    schemars::json_schema!({"type": "string", "enum": names, "default": "content"})
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
    /// Only this vault (by name); by default, or with "all", every vault is searched (a vault
    /// configured under the name "all" is that vault alone).
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
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
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
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
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
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub path: String,
    /// The heading to edit, as vault_map shows it ("Plan::Risks"); a unique trailing part
    /// ("Risks") also works. A block id ("^risk-table") edits the paragraph, list item or
    /// table that the id ends.
    pub target: String,
    /// replace, prepend or append (required: there is no default). Append and prepend join
    /// with one blank line, or none when the content continues the list or table it meets.
    #[serde(deserialize_with = "by_name")]
    #[schemars(schema_with = "operation_schema")]
    pub operation: Operation,
    /// The Markdown to put in. With target_scope marker: the new heading line ("## New name"),
    /// or the bare text to keep the heading's level.
    #[serde(default)]
    pub content: String,
    /// Allow a replace with empty content, which empties the section (or deletes the heading
    /// line, or with within the block); without it such a replace is refused with
    /// empty_content.
    #[serde(default)]
    pub allow_empty: bool,
    /// What the operation applies to: content (the lines under the heading, subsections
    /// included), marker (the heading line) or markerAndContent.
    #[serde(default, deserialize_with = "by_name")]
    #[schemars(schema_with = "scope_schema")]
    pub target_scope: Scope,
    /// Create the heading first when the target names none (at the end of its deepest
    /// existing parent, else at the end of the note).
    #[serde(default)]
    pub create_target_if_missing: bool,
    /// Refuse an append or prepend whose content the target already holds (already_exists),
    /// so a retried request does not add it twice.
    #[serde(default)]
    pub reject_if_present: bool,
    /// Edit one body block of the section instead of all of it: 0 is the first block under
    /// the heading, -1 the last (subsections excluded). Blocks are separated by blank lines
    /// outside code, so a fenced code block or a callout is one block. With scope content an append or
    /// prepend joins the block literally, on its own line; with markerAndContent it adds a
    /// sibling block.
    #[serde(default)]
    pub within: Option<i64>,
    /// Read the content's heading levels as relative to where it lands, as the Local REST
    /// API's 2.x format does: under target_scope content a "# X" becomes a direct child of
    /// the target ("### X" under a "##"), under markerAndContent it takes the target's own
    /// level. Off (the default), headings are written with the levels sent. A level pushed
    /// past 6 is written anyway and reported as a heading-depth-overflow warning.
    #[serde(default)]
    pub relative_levels: bool,
    /// Move the target heading's section (its heading line and subsections) here instead of
    /// editing it; the section is re-levelled to sit under its new parent. Send it with
    /// operation replace and no content.
    #[serde(default)]
    pub destination: Option<Destination>,
}

/// Where `vault_patch` moves a section.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Destination {
    /// The heading to move the section under, as vault_map shows it ("Plan::Later"); empty
    /// or absent for the top level of the note.
    #[serde(default)]
    pub parent: Option<String>,
    /// Where among the parent's subsections: "first", "last" (the default), or
    /// {"before": "<heading>"} / {"after": "<heading>"} naming one of them.
    #[serde(default)]
    pub place: Place,
}

/// A [`Destination`]'s place among the new parent's subsections.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    /// Before the first subsection, after the parent's own text.
    First,
    /// After the last subsection.
    #[default]
    Last,
    /// Just before this subsection of the parent.
    Before(String),
    /// Just after this subsection of the parent.
    After(String),
}

impl Place {
    fn slot(&self) -> crate::vault::edit::Slot {
        use crate::vault::edit::Slot;
        match self {
            Place::First => Slot::First,
            Place::Last => Slot::Last,
            Place::Before(h) => Slot::Before(h.clone()),
            Place::After(h) => Slot::After(h.clone()),
        }
    }
}

/// `vault_replace_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceTextArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
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
    /// Vault-relative path of the note ("Projects/Alpha.md"); without create_if_missing, its
    /// name alone ("Alpha") or an alias finds it anywhere in the vault when no other note
    /// answers to it. A note to create is made at the path as written.
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
    /// Vault-relative path of the note (ending in .md); missing folders are created. The path
    /// is taken as written: a name never finds a note elsewhere.
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
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
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
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub path: String,
    /// The frontmatter key.
    pub key: String,
    /// The new value: a string, number, boolean or list. Leave empty when deleting, or when
    /// using add/remove. `expires` must be a list of {"date": "YYYY-MM-DD", "what": "..."}
    /// items (or "none" with an expires_reason key); anything else is refused.
    #[serde(default)]
    pub value: Option<Value>,
    /// Remove the key instead of setting it.
    #[serde(default)]
    pub delete: bool,
    /// Add these items (a string or a list) to the list under `key` (e.g. tags), keeping the
    /// items already there; a missing key becomes a new list.
    #[serde(default)]
    pub add: Option<Value>,
    /// Remove these items (a string or a list) from the list under `key`.
    #[serde(default)]
    pub remove: Option<Value>,
    /// Rename `key` to this, keeping its value as written; refused (key_exists) when the
    /// note already has a key of that name. Send it without value, delete, add or remove.
    #[serde(default)]
    pub rename_to: Option<String>,
    /// Insert `key` with `value` as a new entry just before this existing key; refused
    /// (key_exists) when `key` is already set. Without before or after, a new key goes in
    /// the usual order.
    #[serde(default)]
    pub before: Option<String>,
    /// Insert `key` with `value` as a new entry just after this existing key; refused
    /// (key_exists) when `key` is already set.
    #[serde(default)]
    pub after: Option<String>,
}

impl SetFrontmatterArgs {
    /// `key` of the note at `path` in the connection's vault, with no value and no option
    /// set; callers fill in the one field their edit needs.
    pub fn of(path: &str, key: String) -> SetFrontmatterArgs {
        SetFrontmatterArgs {
            vault: None,
            path: path.to_string(),
            key,
            value: None,
            delete: false,
            add: None,
            remove: None,
            rename_to: None,
            before: None,
            after: None,
        }
    }
}

/// [`frontmatter_entries`]: whole entries put beside, or in place of, an existing key. REST
/// builds it; MCP and the CLI reach one entry at a time through `set_frontmatter`'s `before`
/// and `after`.
#[derive(Debug, Clone)]
pub struct EntriesArgs {
    /// The vault, by name (default: the connection's vault, else the default vault).
    pub vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub path: String,
    /// The existing key the entries go beside (or replace).
    pub anchor: String,
    /// Before, after or instead of `anchor`.
    pub place: crate::vault::frontmatter::Place,
    /// The new entries, in order.
    pub entries: Vec<(String, Value)>,
}

/// An `add` or `remove` argument as list items: one value, or each item of a list.
fn items(v: Option<Value>) -> Vec<Value> {
    match v {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(one) => vec![one],
    }
}

/// Refuses an `expires` value mdvault's expiry reader could not track, with what to write
/// instead, so a malformed date is caught at the write rather than at the next review.
fn check_expires(value: &Value) -> Result<()> {
    if value.as_str().is_some_and(|s| s.trim().eq_ignore_ascii_case("none")) {
        return Ok(());
    }
    let probe = crate::vault::frontmatter::set("---\n---\n", "expires", value)?;
    let read = crate::upkeep::expiries::read(&probe);
    if read.problems.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidValue,
        format!(
            "this `expires` value would not be tracked: {}. Send a list such as \
             [{{\"date\": \"2027-02-14\", \"what\": \"Car insurance renewal\"}}], or \"none\" \
             (then set expires_reason)",
            read.problems.join("; ")
        ),
    ))
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
    /// Remove it for good; by default it moves to the vault's `.trash` folder, as Obsidian
    /// does, where it can be restored.
    #[serde(default)]
    pub permanent: bool,
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

/// `vault_grep`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// The vault, by name (default: the connection's vault, else the default vault).
    #[serde(default)]
    pub vault: Option<String>,
    /// The exact text to find (literal, case-sensitive unless ignore_case), or a regular
    /// expression when `regex` is true (Rust regex syntax, e.g. "0\\d{3} \\d{6}").
    pub pattern: String,
    /// Read `pattern` as a regular expression instead of literal text.
    #[serde(default)]
    pub regex: bool,
    /// Match regardless of case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Only files under this folder, e.g. "Home" (default: the whole vault).
    #[serde(default)]
    pub dir: Option<String>,
    /// At most this many matching lines (1 to 200; default 50).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Skip this many matching lines first: the next page starts at offset + limit.
    #[serde(default)]
    pub offset: usize,
}

/// `vault_links`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinksArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub vault: Option<String>,
    /// Vault-relative path of the note or document; its name alone or an alias finds it
    /// anywhere in the vault when no other file answers to it.
    pub path: String,
}

/// `vault_reindex`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReindexArgs {
    /// Only this vault (by name); by default, or with "all", every vault (a connection bound
    /// to a vault by its URL: that vault). A vault configured under the name "all" is that
    /// vault alone.
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
    desk: &'e dyn Desk,
    t: &Target,
    arg: Option<&str>,
    raw: &'p str,
) -> Result<(&'e std::sync::Arc<Vault>, &'p str)> {
    let default = chosen(t, arg)?;
    let (v, path) = desk.vaults().locate(default, raw)?;
    let bound = match (&t.vault, &t.scope) {
        (Some(name), _) => Some(name.as_str()),
        (None, Some(_)) => Some(desk.vaults().get(None)?.name()),
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
    desk: &'e dyn Desk,
    t: &Target,
    arg: Option<&str>,
) -> Result<&'e std::sync::Arc<Vault>> {
    desk.vaults().get(chosen(t, arg)?)
}

fn in_scope(v: &Vault, t: &Target, raw: &str, folder: bool) -> Result<()> {
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
            Ok(VaultScope::One(name))
        }
        (every, None) => Ok(every),
    }
}

/// Re-indexes what a write touched, so a search right after it sees the change. The write is
/// done (its bytes renamed into place) before this is called; the answer waits for the
/// re-index only a bounded time and records how far it got.
fn refreshed(desk: &dyn Desk, mut change: Change, also: &[&str]) -> Change {
    let mut paths = vec![change.path.clone()];
    paths.extend(also.iter().map(|p| p.trim_matches('/').to_string()));
    change.indexed = desk.written(&change.vault, &paths);
    change
}

/// Searches; `k` of 0 or none is the vault's own `default_k` (a one-vault search), else
/// `search.default_k`, then clamped to 1..=20.
pub fn search(engine: &Engine, t: &Target, a: SearchArgs) -> Result<SearchResponse> {
    let asked = a.k;
    let mut resp = engine.search(&search_request(engine, t, a)?)?;
    if let Some(k) = asked.filter(|&k| k > MAX_K) {
        // Said out loud, so a caller that asked for more does not take 20 for all there is.
        resp.notices.push(format!(
            "k {k} is above the limit of {MAX_K}, so at most {MAX_K} passages are returned; \
             narrow the query or use `prefix` to see others"
        ));
    }
    Ok(resp)
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
    let scope = scope(engine, t, a.vault.as_deref())?;
    // A search of one vault takes that vault's own default when it has one.
    let search = &engine.config().search;
    let k = match a.k {
        None | Some(0) => scope.name().and_then(|v| search.vault_k.get(v)).copied(),
        Some(k) => Some(k),
    }
    .unwrap_or(search.default_k)
    .clamp(1, MAX_K);
    let mut req = SearchRequest::new(&a.query);
    req.k = Some(k);
    req.scope = scope;
    req.prefix = a.prefix.filter(|p| !p.trim().is_empty());
    req.thorough = a.thorough;
    Ok(req)
}

/// Where the words of a search's query occur in `text` (a hit's excerpt): the byte ranges of
/// the words whose analysed form (the index's own analyzer: folding, stemming) is one of
/// `tokens`, the query tokens a [`SearchResponse`]'s explanation lists. A surface marks them.
pub fn query_matches(text: &str, tokens: &[String]) -> Vec<std::ops::Range<usize>> {
    crate::index::tokenize::tokens_with_offsets(text)
        .into_iter()
        .filter(|(token, _)| tokens.contains(token))
        .map(|(_, range)| range)
        .collect()
}

/// Reads a note or one section.
pub fn read(desk: &dyn Desk, t: &Target, a: ReadArgs) -> Result<NoteRead> {
    let section = a.section.as_deref().filter(|s| !s.trim().is_empty());
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    v.read(path, section, &*desk.documents())
}

/// Lists a folder.
pub fn list(desk: &dyn Desk, t: &Target, a: ListArgs) -> Result<Listing> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    v.list(path)
}

/// Maps a note: frontmatter and heading paths.
pub fn map(desk: &dyn Desk, t: &Target, a: MapArgs) -> Result<NoteMap> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    v.map(path, &*desk.documents())
}

/// Edits one section.
pub fn patch(desk: &dyn Desk, t: &Target, a: PatchArgs, expected: Option<&str>) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    let req = PatchRequest {
        target: &a.target,
        operation: a.operation,
        scope: a.target_scope,
        content: &a.content,
        allow_empty: a.allow_empty,
        create_missing: a.create_target_if_missing,
        reject_if_present: a.reject_if_present,
        within: a.within,
        relative_levels: a.relative_levels,
        move_to: a.destination.as_ref().map(|d| (d.parent.as_deref(), d.place.slot())),
    };
    Ok(refreshed(desk, v.patch(path, &req, expected)?, &[]))
}

/// Replaces literal text.
pub fn replace_text(
    desk: &dyn Desk,
    t: &Target,
    a: ReplaceTextArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    let section = a.section.as_deref().filter(|s| !s.trim().is_empty());
    Ok(refreshed(desk, v.replace_text(path, &a.find, &a.replace, section, a.count, expected)?, &[]))
}

/// Appends, optionally creating the note.
pub fn append(
    desk: &dyn Desk,
    t: &Target,
    a: AppendArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(desk, v.append(path, &a.content, a.create_if_missing, expected)?, &[]))
}

/// Creates or overwrites a note.
pub fn write(desk: &dyn Desk, t: &Target, a: WriteArgs, expected: Option<&str>) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(desk, v.write(path, &a.content, a.overwrite, expected)?, &[]))
}

/// Files a document (REST and CLI only: MCP carries no binary uploads) and extracts it.
pub fn file_document(
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
    if filed.status != FilingStatus::Unchanged {
        desk.written(&filed.vault, std::slice::from_ref(&filed.path));
    }
    Ok((filed, extraction.verdict))
}

/// Replaces the body.
pub fn set_body(
    desk: &dyn Desk,
    t: &Target,
    a: SetBodyArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(desk, v.set_body(path, &a.content, expected)?, &[]))
}

/// Sets or removes one frontmatter key.
pub fn set_frontmatter(
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
        return Ok(refreshed(desk, changed, &[]));
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
        return Ok(refreshed(desk, changed, &[]));
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
        return Ok(refreshed(desk, edited, &[]));
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
    Ok(refreshed(desk, v.set_frontmatter(path, &a.key, value.as_ref(), expected)?, &[]))
}

/// Puts frontmatter entries before, after or in place of an existing key: the Local REST API's
/// markerAndContent frontmatter edits (`vault_set_frontmatter` reaches the same operation
/// with `before` and `after`).
pub fn frontmatter_entries(
    desk: &dyn Desk,
    t: &Target,
    a: EntriesArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    let changed = v.frontmatter_entries(path, a.anchor.trim(), a.place, &a.entries, expected)?;
    Ok(refreshed(desk, changed, &[]))
}

/// Deletes a note or document.
pub fn delete(
    desk: &dyn Desk,
    t: &Target,
    a: DeleteArgs,
    expected: Option<&str>,
) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, false)?;
    Ok(refreshed(desk, v.remove(path, expected, a.permanent)?, &[]))
}

/// Moves a note or document; refused under any write scope.
pub fn move_file(
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
    let change = v.move_file(source, destination, a.update_links, expected)?;
    // The source as the vault spells it (`./Inbox/x.md` is `Inbox/x.md`, an absolute path
    // inside the vault folder its relative form), so the index and index.md find the entry
    // to drop.
    let from = v.vault_path(source).unwrap_or_else(|_| source.to_string());
    Ok(refreshed(desk, change, &[&from]))
}

/// Creates a folder and its parents.
pub fn create_folder(desk: &dyn Desk, t: &Target, a: CreateFolderArgs) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, true)?;
    v.create_folder(path)
}

/// Deletes a folder.
pub fn delete_folder(desk: &dyn Desk, t: &Target, a: DeleteFolderArgs) -> Result<Change> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    in_scope(v, t, path, true)?;
    Ok(refreshed(desk, v.delete_folder(path, a.recursive)?, &[]))
}

/// A note's times (milliseconds since the epoch; creation falls back to modification where
/// the filesystem keeps no birth time) and size, for the Local REST API's `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileTimes {
    /// Creation time.
    pub ctime_ms: i64,
    /// Modification time.
    pub mtime_ms: i64,
    /// Size in bytes.
    pub size: u64,
}

/// The times and size of one file (through the gate, like every read).
pub fn file_times(desk: &dyn Desk, t: &Target, raw: &str) -> Result<FileTimes> {
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
pub fn document_bytes(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    raw: &str,
) -> Result<(String, Vec<u8>)> {
    let (v, path) = locate(desk, t, vault, raw)?;
    v.document_bytes(path)
}

/// Every note of the addressed vault with its text, in path order: for reads that look at
/// every note at once (the Local REST API's `/tags/` and JsonLogic `/search/`).
pub fn all_notes(desk: &dyn Desk, t: &Target) -> Result<Vec<(String, String)>> {
    let v = vault(desk, t, None)?;
    Ok(crate::upkeep::notes(v, ""))
}

/// Where a note's links point: the vault paths they resolve to, and the targets that name
/// nothing in the vault (as written), each once, in order.
pub fn note_links(
    desk: &dyn Desk,
    t: &Target,
    raw: &str,
    text: &str,
) -> Result<(Vec<String>, Vec<String>)> {
    let (v, path) = locate(desk, t, None, raw)?;
    let paths = crate::vault::links::PathSet::new(v.all_files());
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
pub fn resolve_links(
    desk: &dyn Desk,
    t: &Target,
    vault: Option<&str>,
    raw: &str,
    targets: &[(String, bool)],
) -> Result<Vec<Option<String>>> {
    use crate::vault::links::{LinkKind, PathSet, resolve};
    let (v, path) = locate(desk, t, vault, raw)?;
    let paths = PathSet::new(v.all_files());
    Ok(targets
        .iter()
        .map(|(target, wiki)| {
            let kind = if *wiki { LinkKind::Wiki } else { LinkKind::Markdown };
            resolve(target, kind, path, &paths)
        })
        .collect())
}

/// The periodic note of `period` (`daily`, `weekly`, `monthly`, `quarterly`, `yearly`) that
/// holds `date` (today, in local time, when `None`), by the vault's own Obsidian settings
/// (`vault::periodic`): its gated path and whether it is there. Reads settings only.
pub fn periodic_note(
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
pub fn periodic_create(
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

/// Index coverage per vault (only the target vault when one is named).
pub fn status(
    engine: &Engine,
    t: &Target,
    a: StatusArgs,
) -> Result<crate::index::coverage::Report> {
    engine.coverage(chosen(t, a.vault.as_deref())?)
}

/// The dated commitments (`expires` frontmatter), one row per date, counted from today (local
/// time).
pub fn expiries(
    desk: &dyn Desk,
    t: &Target,
    a: ExpiriesArgs,
) -> Result<crate::upkeep::expiries::Report> {
    let v = vault(desk, t, a.vault.as_deref())?;
    let query = crate::upkeep::expiries::Query { within: a.within, list_untracked: a.untracked };
    let today = chrono::Local::now().date_naive();
    crate::upkeep::expiries(v, a.dir.as_deref().unwrap_or(""), today, &query)
}

/// The open callouts.
pub fn callouts(
    desk: &dyn Desk,
    t: &Target,
    a: CalloutsArgs,
) -> Result<crate::upkeep::callouts::Report> {
    let v = vault(desk, t, a.vault.as_deref())?;
    crate::upkeep::callouts(v, a.dir.as_deref().unwrap_or(""), &upkeep_settings(desk))
}

/// Runs every maintenance check (built-in and the vault's scripts); a second caller in the
/// same process waits for the run in progress.
pub fn maintenance(
    desk: &dyn Desk,
    t: &Target,
    vault_name: Option<&str>,
) -> Result<crate::upkeep::findings::Run> {
    let v = vault(desk, t, vault_name)?;
    let _turn = desk.maintenance_turn();
    Ok(crate::upkeep::maintenance(v, &*desk.documents(), &upkeep_settings(desk)))
}

/// Lists the maintenance checks without running them.
pub fn checks(
    desk: &dyn Desk,
    t: &Target,
    vault_name: Option<&str>,
) -> Result<Vec<crate::upkeep::CheckInfo>> {
    Ok(crate::upkeep::checks(vault(desk, t, vault_name)?, &upkeep_settings(desk)))
}

/// The notes whose frontmatter `key` holds exactly `value`.
pub fn frontmatter_query(
    desk: &dyn Desk,
    t: &Target,
    a: FrontmatterQueryArgs,
) -> Result<Vec<String>> {
    let v = vault(desk, t, a.vault.as_deref())?;
    crate::upkeep::frontmatter_query(v, &a.key, &a.value, a.dir.as_deref().unwrap_or(""))
}

/// Every line that holds a literal string or matches a pattern, over notes and the text of
/// filed documents, paged.
pub fn grep(desk: &dyn Desk, t: &Target, a: GrepArgs) -> Result<crate::upkeep::survey::GrepReport> {
    let v = vault(desk, t, a.vault.as_deref())?;
    let q = crate::upkeep::survey::GrepQuery {
        pattern: a.pattern,
        regex: a.regex,
        ignore_case: a.ignore_case,
        dir: a.dir.unwrap_or_default(),
        limit: a.limit.filter(|&n| n > 0).unwrap_or(crate::upkeep::survey::GREP_DEFAULT_LIMIT),
        offset: a.offset,
    };
    crate::upkeep::survey::grep(v, &*desk.documents(), &q)
}

/// A note's outgoing links (resolved or broken) and its backlinks.
pub fn links(
    desk: &dyn Desk,
    t: &Target,
    a: LinksArgs,
) -> Result<crate::upkeep::survey::LinkReport> {
    let (v, path) = locate(desk, t, a.vault.as_deref(), &a.path)?;
    let rel = v.existing(path)?;
    crate::upkeep::survey::links_of(v, &rel)
}

fn upkeep_settings(desk: &dyn Desk) -> crate::upkeep::Settings {
    crate::upkeep::Settings::from_config(desk.config())
}

/// Brings the index of the vaults [`scope`] names up to date (or re-chunks them with `full`).
pub fn reindex(engine: &Engine, t: &Target, a: ReindexArgs) -> Result<Vec<(String, SyncReport)>> {
    let scope = scope(engine, t, a.vault.as_deref())?;
    engine.sync(scope.name(), a.full, &crate::index::Silent)
}

#[cfg(test)]
mod tests {
    use super::*;

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
