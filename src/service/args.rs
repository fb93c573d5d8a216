//! The tools' arguments: one struct per vault tool, deserialised by MCP straight from a tool
//! call (their JSON schemas are the tools' input schemas) and built by REST and the CLI from
//! their own inputs, with the small parsers and schemas they share.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::vault::edit::Operation;
use crate::vault::headings::Scope;

/// The largest `k` a search may ask for (its home is the search scope's rules).
pub(crate) use crate::search::MAX_K;

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

/// A frontmatter value as its schema offers it: a string, number, boolean or list (of plain
/// values or objects, as `expires` items are), each branch typed, so a client that checks
/// arguments against the schema knows what to send. serde still reads any JSON value.
fn frontmatter_value_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"anyOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"anyOf": [
            {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "object"},
        ]}},
    ]})
}

/// Items to add to or remove from a list key: one string, or a list of plain values.
fn list_items_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"anyOf": [
            {"type": "string"}, {"type": "number"}, {"type": "boolean"},
        ]}},
    ]})
}

/// `vault_search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// What to look for: a question, some words, or an exact token (a policy number, a plate).
    pub(crate) query: String,
    /// How many passages to return (1 to 20; empty or 0 means the configured default, 6).
    #[serde(default)]
    pub(crate) k: Option<usize>,
    /// Only this folder, e.g. "Projects/Alpha" (case-insensitive, whole folder names).
    #[serde(default)]
    pub(crate) prefix: Option<String>,
    /// Only this vault (by name); by default, or with "all", every vault is searched (a vault
    /// configured under the name "all" is that vault alone).
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Spend longer for a better order (more candidates for the reranker, when one is set up).
    #[serde(default)]
    pub(crate) thorough: bool,
}

/// `vault_read`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it, and a link
    /// copied from a note ("[[Alpha#Risks]]") reads the part it names.
    pub(crate) path: String,
    /// Only this section: a heading path from vault_map such as "Plan::Risks", or a unique
    /// heading name.
    #[serde(default)]
    pub(crate) section: Option<String>,
}

/// `vault_list`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative folder; empty for the vault root.
    #[serde(default)]
    pub(crate) path: String,
}

/// `vault_map`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MapArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub(crate) path: String,
}

/// `vault_patch`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PatchArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub(crate) path: String,
    /// The heading to edit, as vault_map shows it ("Plan::Risks"); a unique trailing part
    /// ("Risks") also works. A block id ("^risk-table") edits the paragraph, list item or
    /// table that the id ends.
    pub(crate) target: String,
    /// replace, prepend or append (required: there is no default). Append and prepend join
    /// with one blank line, or none when the content continues the list or table it meets.
    #[serde(deserialize_with = "by_name")]
    #[schemars(schema_with = "operation_schema")]
    pub(crate) operation: Operation,
    /// The Markdown to put in. With target_scope marker: the new heading line ("## New name"),
    /// or the bare text to keep the heading's level.
    #[serde(default)]
    pub(crate) content: String,
    /// Allow a replace with empty content, which empties the section (or deletes the heading
    /// line, or with within the block); without it such a replace is refused with
    /// empty_content.
    #[serde(default)]
    pub(crate) allow_empty: bool,
    /// What the operation applies to: content (the lines under the heading, subsections
    /// included), marker (the heading line) or markerAndContent.
    #[serde(default, deserialize_with = "by_name")]
    #[schemars(schema_with = "scope_schema")]
    pub(crate) target_scope: Scope,
    /// Create the heading first when the target names none (at the end of its deepest
    /// existing parent, else at the end of the note).
    #[serde(default)]
    pub(crate) create_target_if_missing: bool,
    /// Refuse an append or prepend whose content the target already holds (already_exists),
    /// so a retried request does not add it twice.
    #[serde(default)]
    pub(crate) reject_if_present: bool,
    /// Edit one body block of the section instead of all of it: 0 is the first block under
    /// the heading, -1 the last (subsections excluded). Blocks are separated by blank lines
    /// outside code, so a fenced code block or a callout is one block. With scope content an append or
    /// prepend joins the block literally, on its own line; with markerAndContent it adds a
    /// sibling block.
    #[serde(default)]
    pub(crate) within: Option<i64>,
    /// Read the content's heading levels as relative to where it lands, as the Local REST
    /// API's 2.x format does: under target_scope content a "# X" becomes a direct child of
    /// the target ("### X" under a "##"), under markerAndContent it takes the target's own
    /// level. Off (the default), headings are written with the levels sent. A level pushed
    /// past 6 is written anyway and reported as a heading-depth-overflow warning.
    #[serde(default)]
    pub(crate) relative_levels: bool,
    /// Move the target heading's section (its heading line and subsections) here instead of
    /// editing it; the section is re-levelled to sit under its new parent. Send it with
    /// operation replace and no content.
    #[serde(default)]
    pub(crate) destination: Option<Destination>,
}

/// Where `vault_patch` moves a section.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Destination {
    /// The heading to move the section under, as vault_map shows it ("Plan::Later"); empty
    /// or absent for the top level of the note.
    #[serde(default)]
    pub(crate) parent: Option<String>,
    /// Where among the parent's subsections: "first", "last" (the default), or
    /// {"before": "<heading>"} / {"after": "<heading>"} naming one of them.
    #[serde(default)]
    pub(crate) place: Place,
}

/// A [`Destination`]'s place among the new parent's subsections.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Place {
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
    pub(super) fn slot(&self) -> crate::vault::edit::Slot {
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
pub(crate) struct ReplaceTextArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub(crate) path: String,
    /// The exact text to find (literal, case-sensitive).
    pub(crate) find: String,
    /// What to put in its place.
    pub(crate) replace: String,
    /// Only within this section (a heading target as for vault_patch).
    #[serde(default)]
    pub(crate) section: Option<String>,
    /// How many occurrences you expect; the edit is refused if there are more or fewer.
    #[serde(default = "default_one")]
    pub(crate) count: usize,
}

/// `vault_append`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AppendArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); without create_if_missing, its
    /// name alone ("Alpha") or an alias finds it anywhere in the vault when no other note
    /// answers to it. A note to create is made at the path as written.
    pub(crate) path: String,
    /// The Markdown to add at the end.
    pub(crate) content: String,
    /// Create the note with this content when it does not exist.
    #[serde(default)]
    pub(crate) create_if_missing: bool,
}

/// `vault_write`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note (ending in .md); missing folders are created. The path
    /// is taken as written: a name never finds a note elsewhere.
    pub(crate) path: String,
    /// The whole note, frontmatter included.
    pub(crate) content: String,
    /// Replace the note when it exists (otherwise that is refused).
    #[serde(default)]
    pub(crate) overwrite: bool,
}

/// `vault_set_body`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetBodyArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub(crate) path: String,
    /// The new body; the frontmatter block is kept as it is.
    pub(crate) content: String,
}

/// `vault_set_frontmatter`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetFrontmatterArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub(crate) path: String,
    /// The frontmatter key.
    pub(crate) key: String,
    /// The new value: a string, number, boolean or list. Leave empty when deleting, or when
    /// using add/remove. `expires` must be a list of {"date": "YYYY-MM-DD", "what": "..."}
    /// items (or "none" with an expires_reason key); anything else is refused.
    #[serde(default)]
    #[schemars(schema_with = "frontmatter_value_schema")]
    pub(crate) value: Option<Value>,
    /// Remove the key instead of setting it.
    #[serde(default)]
    pub(crate) delete: bool,
    /// Add these items (a string or a list) to the list under `key` (e.g. tags), keeping the
    /// items already there; a missing key becomes a new list.
    #[serde(default)]
    #[schemars(schema_with = "list_items_schema")]
    pub(crate) add: Option<Value>,
    /// Remove these items (a string or a list) from the list under `key`.
    #[serde(default)]
    #[schemars(schema_with = "list_items_schema")]
    pub(crate) remove: Option<Value>,
    /// Rename `key` to this, keeping its value as written; refused (key_exists) when the
    /// note already has a key of that name. Send it without value, delete, add or remove.
    #[serde(default)]
    pub(crate) rename_to: Option<String>,
    /// Insert `key` with `value` as a new entry just before this existing key; refused
    /// (key_exists) when `key` is already set. Without before or after, a new key goes in
    /// the usual order.
    #[serde(default)]
    pub(crate) before: Option<String>,
    /// Insert `key` with `value` as a new entry just after this existing key; refused
    /// (key_exists) when `key` is already set.
    #[serde(default)]
    pub(crate) after: Option<String>,
}

impl SetFrontmatterArgs {
    /// `key` of the note at `path` in the connection's vault, with no value and no option
    /// set; callers fill in the one field their edit needs.
    pub(crate) fn of(path: &str, key: String) -> SetFrontmatterArgs {
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
pub(crate) struct EntriesArgs {
    /// The vault, by name (default: the connection's vault, else the default vault).
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note ("Projects/Alpha.md"); its name alone ("Alpha") or an
    /// alias finds it anywhere in the vault when no other note answers to it.
    pub(crate) path: String,
    /// The existing key the entries go beside (or replace).
    pub(crate) anchor: String,
    /// Before, after or instead of `anchor`.
    pub(crate) place: crate::vault::frontmatter::Place,
    /// The new entries, in order.
    pub(crate) entries: Vec<(String, Value)>,
}

/// An `add` or `remove` argument as list items: one value, or each item of a list.
pub(super) fn items(v: Option<Value>) -> Vec<Value> {
    match v {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(one) => vec![one],
    }
}

/// Refuses an `expires` value mdvault's expiry reader could not track, with what to write
/// instead, so a malformed date is caught at the write rather than at the next review.
pub(super) fn check_expires(value: &Value) -> Result<()> {
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
pub(crate) struct DeleteArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note or document.
    pub(crate) path: String,
    /// Remove it for good; by default it moves to the vault's `.trash` folder, as Obsidian
    /// does, where it can be restored.
    #[serde(default)]
    pub(crate) permanent: bool,
}

/// `vault_move`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MoveArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Where the note, document, canvas or attachment is now.
    pub(crate) source: String,
    /// Where it should go (must not exist).
    pub(crate) destination: String,
    /// Repoint Markdown links in other notes that point at it.
    #[serde(default = "default_true")]
    pub(crate) update_links: bool,
}

/// `vault_create_folder`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateFolderArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative folder; missing parents are created too.
    pub(crate) path: String,
}

/// `vault_delete_folder`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteFolderArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative folder.
    pub(crate) path: String,
    /// Delete everything inside too (otherwise only an empty folder is deleted).
    #[serde(default)]
    pub(crate) recursive: bool,
}

/// `vault_grep`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepArgs {
    /// The vault, by name (default: the connection's vault, else the default vault).
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// The exact text to find (literal, case-sensitive unless ignore_case), or a regular
    /// expression when `regex` is true (Rust regex syntax, e.g. "0\\d{3} \\d{6}").
    pub(crate) pattern: String,
    /// Read `pattern` as a regular expression instead of literal text.
    #[serde(default)]
    pub(crate) regex: bool,
    /// Match regardless of case.
    #[serde(default)]
    pub(crate) ignore_case: bool,
    /// Only files under this folder, e.g. "Home" (default: the whole vault).
    #[serde(default)]
    pub(crate) dir: Option<String>,
    /// At most this many matching lines (1 to 200; default 50).
    #[serde(default)]
    pub(crate) limit: Option<usize>,
    /// Skip this many matching lines first: the next page starts at offset + limit.
    #[serde(default)]
    pub(crate) offset: usize,
}

/// `vault_links`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinksArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Vault-relative path of the note or document; its name alone or an alias finds it
    /// anywhere in the vault when no other file answers to it.
    pub(crate) path: String,
}

/// `vault_reindex`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReindexArgs {
    /// Only this vault (by name); by default, or with "all", every vault (a connection bound
    /// to a vault by its URL: that vault). A vault configured under the name "all" is that
    /// vault alone.
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Re-read and re-chunk every file instead of only the changed ones.
    #[serde(default)]
    pub(crate) full: bool,
}

/// `vault_status`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
}

/// `vault_expiries`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpiriesArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Only dates at most this many days away; lapsed dates are always included.
    #[serde(default)]
    pub(crate) within: Option<i64>,
    /// Also list the notes that have no `expires` field (otherwise only counted).
    #[serde(default)]
    pub(crate) untracked: bool,
    /// Only notes under this folder, e.g. "Home".
    #[serde(default)]
    pub(crate) dir: Option<String>,
}

/// `vault_callouts`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CalloutsArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Only notes under this folder, e.g. "Projects".
    #[serde(default)]
    pub(crate) dir: Option<String>,
}

/// `vault_tags`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TagsArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// List the notes carrying this tag or a tag nested under it ("project" also finds
    /// "#project/alpha"), `#` optional, case ignored. Without it, every tag with its count.
    #[serde(default)]
    pub(crate) tag: Option<String>,
    /// Only notes under this folder, e.g. "Projects".
    #[serde(default)]
    pub(crate) dir: Option<String>,
}

/// `vault_tag_rename`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TagRenameArgs {
    /// The vault, by name (default: the connection's vault, else the default vault).
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// The tag to rename, `#` optional, case ignored; the tags nested under it follow
    /// ("project" to "work" turns "#project/alpha" into "#work/alpha").
    pub(crate) from: String,
    /// Its new name, `#` optional. Naming a tag that exists merges the two.
    pub(crate) to: String,
    /// Only list the notes that would change; write nothing.
    #[serde(default)]
    pub(crate) dry_run: bool,
}

/// `vault_maintenance`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MaintenanceArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// Only list the checks, without running them.
    #[serde(default)]
    pub(crate) list_only: bool,
}

/// `vault_frontmatter_query`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrontmatterQueryArgs {
    /// The vault, by name (default: the connection's vault, else the default vault). A path
    /// may also name it as a prefix, "journal:Daily/2026-01-02.md".
    #[serde(default)]
    pub(crate) vault: Option<String>,
    /// The frontmatter key, e.g. "status" or "tags".
    pub(crate) key: String,
    /// The exact value to match: equal to a plain value, or one item of a list. May be "".
    pub(crate) value: String,
    /// Only notes under this folder.
    #[serde(default)]
    pub(crate) dir: Option<String>,
}
