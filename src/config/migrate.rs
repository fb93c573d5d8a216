//! What `mdvault migrate` maps: a predecessor's settings turned into mdvault config keys.
//!
//! mdvault replaces two earlier tools, and their users arrive with a setup that worked. The
//! vault MCP server was configured by a `config.yaml` plus environment variables (the
//! variables win); vault-search by a `vaults.json` of vault names plus environment variables.
//! [`plan`] reads either setup as the predecessor itself would have (its defaults, then its
//! file, then its variables), and returns one [`Row`] per setting saying what became of it
//! (mapped, changed, or not carried and why), the [`Setting`]s an mdvault config needs to
//! behave the same, the environment lines to use instead of the old ones, and an MCP client
//! entry. [`merge`] lays those settings into an existing mdvault config file's text without
//! touching anything the user wrote, and refuses a key the file already sets differently.
//!
//! A setting is written when the predecessor had it set (in its file or its environment),
//! or when the predecessor's default differs from mdvault's; a default both share is listed
//! and not written. mdvault's defaults are read from `config.example.yaml`, which a test keeps
//! equal to the code, so this module holds no second copy of them.
//!
//! Pure: it reads the predecessor's file and the given environment, and writes nothing. The
//! CLI (`cli/migrate.rs`) prints the plan and writes the file.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::edit::{set_keys, yaml_string};
use super::{ConfigError, Env, err, name_from_folder, split_commas};

mod vault_search;

/// Which predecessor a setup belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Predecessor {
    /// The vault MCP server (`config.yaml`, `VAULT_MCP_CONFIG`, `VAULT_PATH`, ...).
    VaultMcp,
    /// vault-search (`vaults.json`, `VAULT_SEARCH_CONFIG`, `VAULT_EMBED_URL`, ...).
    VaultSearch,
}

impl Predecessor {
    /// How the table names it.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Predecessor::VaultMcp => "the vault MCP server",
            Predecessor::VaultSearch => "vault-search",
        }
    }

    /// The variable that named its config file.
    pub(crate) fn config_var(self) -> &'static str {
        match self {
            Predecessor::VaultMcp => "VAULT_MCP_CONFIG",
            Predecessor::VaultSearch => "VAULT_SEARCH_CONFIG",
        }
    }
}

/// What became of one predecessor setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Carried as it was (or already mdvault's default).
    Mapped,
    /// Carried in another form; `why` says how.
    Changed,
    /// Not carried; `why` says why and what replaces it.
    NotCarried,
}

impl Outcome {
    /// The table's word for it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Mapped => "mapped",
            Outcome::Changed => "changed",
            Outcome::NotCarried => "not carried",
        }
    }
}

/// Where a predecessor's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layer {
    /// Its built-in default (or built-in behaviour).
    Default,
    /// Its config file.
    File,
    /// Its environment variable.
    Env,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Default => "default",
            Layer::File => "file",
            Layer::Env => "env",
        })
    }
}

/// One line of the migration table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// The predecessor's key and/or variable.
    pub(crate) old: String,
    /// Where its value came from.
    pub(crate) layer: Layer,
    /// Its value as shown (a secret is shown as `(set)`).
    pub(crate) value: String,
    /// The mdvault key or variable it became, or `-`.
    pub(crate) new: String,
    /// What became of it.
    pub(crate) outcome: Outcome,
    /// Why, when it is not a plain copy.
    pub(crate) why: String,
}

/// One mdvault key the migrated config sets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    /// The top-level section (`vaults`, `search`, ...).
    pub(crate) section: String,
    /// The key inside it (for `vaults`, the vault's name).
    pub(crate) key: String,
    /// The value.
    pub(crate) value: Value,
}

impl Setting {
    fn new(section: &str, key: &str, value: Value) -> Setting {
        Setting { section: section.to_string(), key: key.to_string(), value }
    }

    /// `section.key`.
    pub(crate) fn path(&self) -> String {
        format!("{}.{}", self.section, self.key)
    }
}

/// Everything `mdvault migrate` prints and writes.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Whose setup this was.
    pub(crate) predecessor: Predecessor,
    /// The predecessor's config file that was read, if any.
    pub(crate) source: Option<PathBuf>,
    /// One row per setting.
    pub(crate) rows: Vec<Row>,
    /// The mdvault keys to set, in section order.
    pub(crate) settings: Vec<Setting>,
    /// Environment lines to use instead of the old ones (`NAME=value`, shell syntax).
    pub(crate) env_lines: Vec<String>,
    /// The predecessor's variables that are set and should be unset once migrated.
    pub(crate) unset: Vec<String>,
    /// Whether clients reach it over HTTP (`/mcp`) rather than starting it over stdio.
    pub(crate) http_mcp: bool,
}

/// Top-level sections in the order a written file lists them.
const SECTION_ORDER: &[&str] = &[
    "vaults",
    "vault",
    "embedding",
    "chunking",
    "search",
    "rerank",
    "index",
    "watch",
    "maintenance",
    "callouts",
    "server",
];

/// One setting of the vault MCP server: its key, its variable, its default (as YAML).
struct Old {
    key: &'static str,
    env: &'static str,
    default: &'static str,
}

const fn old(key: &'static str, env: &'static str, default: &'static str) -> Old {
    Old { key, env, default }
}

/// The vault MCP server's settings, each with the variable that overrode it and its default.
const VAULT_MCP: &[Old] = &[
    old("vault.path", "VAULT_PATH", "/vault"),
    old("vault.doc_suffixes", "DOC_SUFFIXES", ".pdf"),
    old("vault.doc_files_dir", "DOC_FILES_DIR", "Files"),
    old("vault.doc_ocr", "DOC_OCR", "true"),
    old("vault.doc_max_bytes", "DOC_MAX_BYTES", "52428800"),
    old("server.host", "BIND_HOST", "0.0.0.0"),
    old("server.port", "BIND_PORT", "8080"),
    old("server.allowed_hosts", "MCP_ALLOWED_HOSTS", "vault-mcp:8080, 127.0.0.1:8090"),
    old("embedding.ollama_url", "OLLAMA_URL", "http://ollama:11434/v1"),
    old("embedding.model", "EMBED_MODEL", "nomic-embed-text"),
    old("embedding.dims", "EMBED_DIMS", "768"),
    old("embedding.batch_size", "EMBED_BATCH_SIZE", "64"),
    old("embedding.max_attempts", "EMBED_MAX_ATTEMPTS", "5"),
    old("embedding.backoff_seconds", "EMBED_BACKOFF_SECONDS", "1.0"),
    old("embedding.backoff_max_seconds", "EMBED_BACKOFF_MAX_SECONDS", "30.0"),
    old("chunking.target_tokens", "CHUNK_TARGET_TOKENS", "400"),
    old("chunking.overlap_tokens", "CHUNK_OVERLAP_TOKENS", "60"),
    old("chunking.min_tokens", "CHUNK_MIN_TOKENS", "120"),
    old("search.default_k", "SEARCH_DEFAULT_K", "6"),
    old("search.exclude_dirs", "SEARCH_EXCLUDE_DIRS", "Workflows, Reports, .obsidian"),
    old(
        "index.exclude_dirs",
        "INDEX_EXCLUDE_DIRS",
        "Workflows/Approvals, Workflows/Email Triage/Logs, Reports/Daily Coffee Read, \
         Reports/Plex Music Recommendations, Reports/Vault Maintenance, \
         Reports/Monthly Events Discovery",
    ),
    old("index.build_max_attempts", "INDEX_BUILD_MAX_ATTEMPTS", "5"),
    old("index.build_retry_seconds", "INDEX_BUILD_RETRY_SECONDS", "5.0"),
    old("index.cache_path", "INDEX_CACHE_PATH", "\"\""),
    old("index.cache_flush_seconds", "INDEX_CACHE_FLUSH_SECONDS", "60.0"),
    old("index.reconcile_seconds", "INDEX_RECONCILE_SECONDS", "900.0"),
    old("watch.debounce_seconds", "WATCH_DEBOUNCE_SECONDS", "2.0"),
];

/// The vault MCP server's API key variable (environment only, never in its file).
pub(crate) const VAULT_MCP_KEY_VAR: &str = "VAULT_MCP_API_KEY";

/// vault-search's variables, with their defaults.
const VAULT_SEARCH: &[(&str, &str)] = &[
    ("VAULT_SEARCH_DB", "~/.local/share/vault-search/index.db"),
    ("VAULT_EMBED_URL", "http://127.0.0.1:8096/v1/embeddings"),
    ("VAULT_RERANK_URL", "http://127.0.0.1:8095/v1/rerank"),
    ("VAULT_RERANK_CANDIDATES", "20"),
    ("VAULT_RERANK_FUSION_K", "5"),
];

/// Every variable either predecessor read, for the start-up check and for hiding them when the
/// migrated file is verified.
pub(crate) fn predecessor_vars() -> Vec<&'static str> {
    let mut out: Vec<&str> = VAULT_MCP.iter().map(|o| o.env).collect();
    out.extend([VAULT_MCP_KEY_VAR, "VAULT_MCP_CONFIG", "VAULT_SEARCH_CONFIG"]);
    out.extend(VAULT_SEARCH.iter().map(|(v, _)| *v));
    out
}

/// nomic-embed-text's prompts, which the vault MCP server put before every query and chunk.
const NOMIC_QUERY_PREFIX: &str = "search_query: ";
const NOMIC_DOCUMENT_PREFIX: &str = "search_document: ";

/// Decides whose setup to read: `--from` by its file name (`.json` is vault-search's), else the
/// predecessor whose config variable is set, else vault-search's default `vaults.json` if it
/// exists, else a vault MCP setup made of variables alone (`VAULT_PATH`).
pub(crate) fn detect(
    from: Option<&Path>,
    env: &dyn Env,
) -> Result<(Predecessor, Option<PathBuf>), ConfigError> {
    let set = |name: &str| env.var(name).filter(|v| !v.trim().is_empty());
    if let Some(path) = from {
        let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let kind = if json { Predecessor::VaultSearch } else { Predecessor::VaultMcp };
        return Ok((kind, Some(path.to_path_buf())));
    }
    match (set("VAULT_MCP_CONFIG"), set("VAULT_SEARCH_CONFIG")) {
        (Some(_), Some(_)) => {
            Err(err("both VAULT_MCP_CONFIG and VAULT_SEARCH_CONFIG are set; pick one with \
             `mdvault migrate --from FILE`"))
        }
        (Some(p), None) => Ok((Predecessor::VaultMcp, Some(PathBuf::from(p)))),
        (None, Some(p)) => Ok((Predecessor::VaultSearch, Some(PathBuf::from(p)))),
        (None, None) => {
            let home = env.var("HOME").map(PathBuf::from);
            let default = home.map(|h| h.join(".config/vault-search/vaults.json"));
            if let Some(p) = default.filter(|p| p.is_file()) {
                return Ok((Predecessor::VaultSearch, Some(p)));
            }
            if set("VAULT_PATH").is_some() {
                return Ok((Predecessor::VaultMcp, None));
            }
            Err(err("found no predecessor setup: pass `mdvault migrate --from config.yaml` (the \
                 vault MCP server's) or `--from vaults.json` (vault-search's), or set \
                 VAULT_MCP_CONFIG or VAULT_SEARCH_CONFIG"))
        }
    }
}

/// Reads the predecessor's setup and maps it.
pub(crate) fn plan(
    predecessor: Predecessor,
    source: Option<&Path>,
    env: &dyn Env,
) -> Result<Plan, ConfigError> {
    let text = match source {
        Some(p) => Some(std::fs::read_to_string(p).map_err(|e| {
            err(format!(
                "cannot read {}'s config {}: {e}; check the path given to --from or {}",
                predecessor.label(),
                p.display(),
                predecessor.config_var()
            ))
        })?),
        None => None,
    };
    let base = source.and_then(Path::parent).map(Path::to_path_buf);
    let mut plan = Plan {
        predecessor,
        source: source.map(Path::to_path_buf),
        rows: Vec::new(),
        settings: Vec::new(),
        env_lines: Vec::new(),
        unset: Vec::new(),
        http_mcp: false,
    };
    match predecessor {
        Predecessor::VaultMcp => plan_vault_mcp(&mut plan, text.as_deref(), base.as_deref(), env)?,
        Predecessor::VaultSearch => {
            vault_search::plan(&mut plan, text.as_deref().unwrap_or("{}"), base.as_deref(), env)?
        }
    }
    for var in predecessor_vars() {
        if env.var(var).is_some() && !plan.unset.contains(&var.to_string()) {
            plan.unset.push(var.to_string());
        }
    }
    plan.settings.sort_by_key(|s| {
        SECTION_ORDER.iter().position(|x| *x == s.section).unwrap_or(SECTION_ORDER.len())
    });
    Ok(plan)
}

/// A value read from a variable: a YAML scalar, so `8` is a number and `true` a bool.
fn scalar(raw: &str) -> Value {
    match serde_saphyr::from_str::<Value>(raw) {
        Ok(v @ (Value::Bool(_) | Value::Number(_) | Value::String(_))) => v,
        _ => Value::String(raw.to_string()),
    }
}

/// A list setting as a list of trimmed strings (a comma string is split).
fn list(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().map(show).collect(),
        Value::String(s) => split_commas(s),
        other => vec![show(other)],
    }
}

/// A value as the table shows it.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// mdvault's defaults as a tree, from the example file a test keeps equal to the code.
fn mdvault_defaults() -> Map<String, Value> {
    let example = include_str!("../../config.example.yaml");
    match serde_saphyr::from_str::<Value>(example) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn default_of(defaults: &Map<String, Value>, path: &str) -> Option<Value> {
    let (section, key) = path.split_once('.')?;
    defaults.get(section)?.get(key).cloned()
}

/// Whether two setting values mean the same: numbers by value, lists item by item (a comma
/// string equals its list), strings trimmed.
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(_), _) | (_, Value::Array(_)) => list(a) == list(b),
        (Value::String(x), Value::String(y)) => x.trim() == y.trim(),
        _ => a == b,
    }
}

/// A vault MCP server setting as that server resolved it: where the value came from, and the
/// value.
type Resolved = (&'static Old, Layer, Value);

fn plan_vault_mcp(
    plan: &mut Plan,
    text: Option<&str>,
    base: Option<&Path>,
    env: &dyn Env,
) -> Result<(), ConfigError> {
    let tree = vault_mcp_tree(plan, text)?;
    let resolved = resolve_vault_mcp(&tree, env);
    unknown_vault_mcp_keys(plan, &tree);
    let home = env.var("HOME").map(PathBuf::from);
    let carry =
        McpCarry { resolved: &resolved, defaults: mdvault_defaults(), base, home: home.as_deref() };
    for (o, layer, value) in resolved.iter().cloned() {
        carry.setting(plan, o, layer, value);
    }
    vault_mcp_built_ins(plan, env);
    plan.http_mcp = true;
    Ok(())
}

/// The vault MCP server's file as a tree of sections (empty without a file).
fn vault_mcp_tree(plan: &Plan, text: Option<&str>) -> Result<Map<String, Value>, ConfigError> {
    let source = plan.source.clone().unwrap_or_default();
    Ok(match text {
        Some(t) if !t.trim().is_empty() => match serde_saphyr::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(err(format!("{} is not a mapping of sections", source.display()))),
            Err(e) => return Err(err(format!("{} is not valid YAML: {e}", source.display()))),
        },
        _ => Map::new(),
    })
}

/// Resolves every setting as the predecessor did: default < file < variable.
fn resolve_vault_mcp(tree: &Map<String, Value>, env: &dyn Env) -> Vec<Resolved> {
    let mut resolved: Vec<Resolved> = Vec::new();
    for o in VAULT_MCP {
        let (section, key) = o.key.split_once('.').unwrap_or((o.key, ""));
        let from_env = env.var(o.env);
        let from_file = tree.get(section).and_then(|s| s.get(key)).cloned();
        let (layer, value) = match (from_env, from_file) {
            (Some(v), _) => (Layer::Env, scalar(&v)),
            (None, Some(v)) => (Layer::File, v),
            (None, None) => (Layer::Default, scalar(o.default)),
        };
        resolved.push((o, layer, value));
    }
    resolved
}

/// A row for each key of the file the predecessor did not know.
fn unknown_vault_mcp_keys(plan: &mut Plan, tree: &Map<String, Value>) {
    for (section, body) in tree {
        let keys: Vec<String> = match body {
            Value::Object(m) => m.keys().map(|k| format!("{section}.{k}")).collect(),
            _ => vec![section.clone()],
        };
        for k in keys {
            if !VAULT_MCP.iter().any(|o| o.key == k) {
                plan.rows.push(Row {
                    old: k,
                    layer: Layer::File,
                    value: String::new(),
                    new: "-".into(),
                    outcome: Outcome::NotCarried,
                    why: "not a setting of the vault MCP server, which would have refused it"
                        .into(),
                });
            }
        }
    }
}

/// What carrying one vault MCP server setting over needs to know besides the setting.
struct McpCarry<'a> {
    /// Every setting, for those that combine two (host and port).
    resolved: &'a [Resolved],
    defaults: Map<String, Value>,
    /// The predecessor's config folder, which its relative `vault.path` was read against.
    base: Option<&'a Path>,
    home: Option<&'a Path>,
}

impl McpCarry<'_> {
    /// Carries one setting: its row, and the mdvault settings it needs. The keys that change
    /// form on the way have a step of their own below.
    fn setting(&self, plan: &mut Plan, o: &Old, layer: Layer, value: Value) {
        let explicit = layer != Layer::Default;
        let mut row = Row {
            old: format!("{} / {}", o.key, o.env),
            layer,
            value: show(&value),
            new: o.key.to_string(),
            outcome: Outcome::Mapped,
            why: String::new(),
        };
        match o.key {
            "vault.path" => self.vault_path(plan, &mut row, &value),
            "server.host" => self.listen(plan, &mut row, &value, layer),
            "server.port" => return,
            "server.allowed_hosts" => allowed_hosts(plan, &mut row, &value, explicit),
            "embedding.ollama_url" => return ollama(plan, row, &value),
            "embedding.model" | "embedding.dims" => {
                // The HTTP backend is what the server used, so its model and width always go.
                plan.settings.push(Setting::new("embedding", &o.key[10..], value.clone()));
            }
            "search.exclude_dirs" => {
                let (dotted, kept): (Vec<String>, Vec<String>) = list(&value)
                    .into_iter()
                    .map(|d| d.trim().trim_matches('/').to_string())
                    .filter(|d| !d.is_empty())
                    .partition(|d| d.split('/').any(|s| s.starts_with('.')));
                if !dotted.is_empty() {
                    row.outcome = Outcome::Changed;
                    row.why = format!(
                        "{} dropped: mdvault never indexes dotted folders",
                        dotted.join(", ")
                    );
                }
                let kept = Value::Array(kept.into_iter().map(Value::String).collect());
                if !push_if_needed(plan, &self.defaults, "search.exclude_dirs", kept, explicit) {
                    row.why = SAME_DEFAULT.into();
                }
            }
            "index.cache_path" | "index.cache_flush_seconds" => {
                row.new = "-".into();
                row.outcome = Outcome::NotCarried;
                row.why = "mdvault keeps its index in SQLite under the data directory \
                           (MDVAULT_DATA_DIR), committed as it goes; the first start builds it"
                    .into();
            }
            key => {
                if !push_if_needed(plan, &self.defaults, key, value.clone(), explicit) {
                    row.why = SAME_DEFAULT.into();
                }
            }
        }
        plan.rows.push(row);
    }

    /// `vault.path`: one vault, named after its folder.
    fn vault_path(&self, plan: &mut Plan, row: &mut Row, value: &Value) {
        let raw = show(value);
        let path = super::expand(raw.trim(), self.base, self.home);
        let name = name_from_folder(&path);
        row.new = format!("vaults.{name}");
        row.outcome = Outcome::Changed;
        row.why =
            format!("one vault named after its folder; mdvault serves several, at /v/{name}/ too");
        plan.settings.push(Setting::new(
            "vaults",
            &name,
            Value::String(path.display().to_string()),
        ));
    }

    /// `server.host` and `server.port` together: one `server.listen`.
    fn listen(&self, plan: &mut Plan, row: &mut Row, value: &Value, layer: Layer) {
        let explicit = layer != Layer::Default;
        let host = show(value);
        let (_, port_layer, port) = self
            .resolved
            .iter()
            .find(|(o, _, _)| o.key == "server.port")
            .cloned()
            .expect("server.port is listed");
        let port = show(&port);
        let host =
            if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host };
        let listen = format!("{}:{}", host.trim(), port.trim());
        row.old = "server.host + server.port / BIND_HOST + BIND_PORT".into();
        row.value = listen.clone();
        row.layer = if port_layer != Layer::Default { port_layer } else { layer };
        row.new = "server.listen".into();
        row.outcome = Outcome::Changed;
        row.why = "one host:port; MDVAULT_LISTEN or --listen override it".into();
        let mdvault = default_of(&self.defaults, "server.listen");
        if explicit || port_layer != Layer::Default || mdvault.is_none_or(|d| show(&d) != listen) {
            plan.settings.push(Setting::new("server", "listen", Value::String(listen)));
        }
    }
}

/// `server.allowed_hosts`: loopback hosts go (mdvault always accepts them).
fn allowed_hosts(plan: &mut Plan, row: &mut Row, value: &Value, explicit: bool) {
    let (loopback, kept): (Vec<String>, Vec<String>) =
        list(value).into_iter().partition(|h| is_loopback_authority(h));
    if !loopback.is_empty() {
        row.outcome = Outcome::Changed;
        row.why = format!(
            "{} dropped: mdvault always accepts loopback hosts on any port",
            loopback.join(", ")
        );
    }
    if !kept.is_empty() || explicit {
        plan.settings.push(Setting::new(
            "server",
            "allowed_hosts",
            Value::Array(kept.into_iter().map(Value::String).collect()),
        ));
    }
}

/// `embedding.ollama_url`: the HTTP backend at the whole endpoint, with the prompts the server
/// put before every text; pushes its row and the prompts' rows.
fn ollama(plan: &mut Plan, mut row: Row, value: &Value) {
    let url = format!("{}/embeddings", show(value).trim().trim_end_matches('/'));
    row.new = "embedding.backend: http + embedding.url".into();
    row.outcome = Outcome::Changed;
    row.why =
        format!("mdvault takes the whole endpoint ({url}); the prompts it prefixed are below");
    plan.settings.push(Setting::new("embedding", "backend", "http".into()));
    plan.settings.push(Setting::new("embedding", "url", Value::String(url)));
    // The server put nomic's prompts before every text; mdvault sends only what
    // it is told to, so say so explicitly.
    plan.rows.push(row);
    plan.rows.push(Row {
        old: "(built in) \"search_query: \" before queries".into(),
        layer: Layer::Default,
        value: NOMIC_QUERY_PREFIX.into(),
        new: "embedding.query_prefix".into(),
        outcome: Outcome::Mapped,
        why: String::new(),
    });
    plan.rows.push(Row {
        old: "(built in) \"search_document: \" before chunks".into(),
        layer: Layer::Default,
        value: NOMIC_DOCUMENT_PREFIX.into(),
        new: "embedding.document_prefix".into(),
        outcome: Outcome::Mapped,
        why: String::new(),
    });
    plan.settings.push(Setting::new("embedding", "query_prefix", NOMIC_QUERY_PREFIX.into()));
    plan.settings.push(Setting::new("embedding", "document_prefix", NOMIC_DOCUMENT_PREFIX.into()));
}

/// The rows for what the server had outside its settings: the key (environment only), the
/// generated index.md, and its routes.
fn vault_mcp_built_ins(plan: &mut Plan, env: &dyn Env) {
    // The key was in the environment only; it stays there under its new name.
    let key_row = match env.var(VAULT_MCP_KEY_VAR) {
        Some(_) => {
            plan.env_lines.push(format!("MDVAULT_API_KEY=\"${VAULT_MCP_KEY_VAR}\""));
            Row {
                old: VAULT_MCP_KEY_VAR.into(),
                layer: Layer::Env,
                value: "(set)".into(),
                new: "MDVAULT_API_KEY".into(),
                outcome: Outcome::Changed,
                why: "renamed; still environment only, never in the file".into(),
            }
        }
        None => {
            plan.env_lines.push("MDVAULT_API_KEY=<a secret of your choice>".into());
            Row {
                old: VAULT_MCP_KEY_VAR.into(),
                layer: Layer::Default,
                value: "(unset)".into(),
                new: "MDVAULT_API_KEY".into(),
                outcome: Outcome::NotCarried,
                why: "not set here; serve needs MDVAULT_API_KEY".into(),
            }
        }
    };
    plan.rows.push(key_row);
    // The server always kept a generated index.md; mdvault writes one only when asked, so a
    // vault that had one keeps it up to date.
    plan.rows.push(Row {
        old: "(built in) the generated index.md".into(),
        layer: Layer::Default,
        value: "always".into(),
        new: "index.index_md: true".into(),
        outcome: Outcome::Changed,
        why: "mdvault writes index.md only when this is on (off by default); set it to false \
              to stop"
            .into(),
    });
    plan.settings.push(Setting::new("index", "index_md", Value::Bool(true)));
    plan.rows.push(Row {
        old: "/mcp, /mcp/only/<path>, REST routes".into(),
        layer: Layer::Default,
        value: String::new(),
        new: "the same routes".into(),
        outcome: Outcome::Mapped,
        why: "same bearer key; add the Host clients use to server.allowed_hosts".into(),
    });
}

/// Adds `key` unless it came from the predecessor's default and that equals mdvault's; says
/// whether it did.
fn push_if_needed(
    plan: &mut Plan,
    defaults: &Map<String, Value>,
    key: &str,
    value: Value,
    explicit: bool,
) -> bool {
    let mdvault = default_of(defaults, key);
    // A list setting is written as a list, whichever form the predecessor used.
    let value = match (&mdvault, value) {
        (Some(Value::Array(_)), v @ (Value::String(_) | Value::Array(_))) => {
            Value::Array(list(&v).into_iter().map(Value::String).collect())
        }
        (_, v) => v,
    };
    let same = mdvault.is_some_and(|d| same_value(&d, &value));
    if explicit || !same {
        let (section, k) = key.split_once('.').unwrap_or((key, ""));
        plan.settings.push(Setting::new(section, k, value));
        true
    } else {
        false
    }
}

/// What a row says when the predecessor's default is mdvault's too.
const SAME_DEFAULT: &str = "the same default in mdvault; nothing to write";

/// Whether `host[:port]` names this machine: mdvault's Host check always accepts those.
fn is_loopback_authority(authority: &str) -> bool {
    let a = authority.trim();
    let host = if let Some(rest) = a.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        a.rsplit_once(':').map_or(a, |(h, _)| h)
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The outcome of laying a plan's settings into a config file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Merged {
    /// The file already says all of it; nothing to write.
    Unchanged,
    /// The new text, and the `section.key`s it added.
    Text(String, Vec<String>),
}

/// A value as YAML: JSON's forms (quoted strings, `[..]` lists) are valid YAML.
fn yaml_value(v: &Value) -> String {
    match v {
        Value::String(s) => yaml_string(s),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// A key as YAML: plain when it is a simple word, quoted otherwise (a vault named `My Notes`).
fn yaml_key(k: &str) -> String {
    let plain = !k.is_empty()
        && k.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !k.starts_with(['-', '.']);
    if plain { k.to_string() } else { yaml_string(k) }
}

/// Lays `settings` into `existing` config text: a key the file lacks is added, one it already
/// sets to the same value is left alone, and one it sets differently refuses the whole merge
/// (naming every such key), so nothing the user wrote is ever overwritten.
pub(crate) fn merge(
    existing: &str,
    settings: &[Setting],
    file: &Path,
) -> Result<Merged, ConfigError> {
    let tree = if existing.trim().is_empty() {
        Map::new()
    } else {
        match serde_saphyr::from_str::<Value>(existing) {
            Ok(Value::Object(m)) => m,
            // Comments alone.
            Ok(Value::Null) => Map::new(),
            Ok(_) => return Err(err(format!("{} is not a mapping of sections", file.display()))),
            Err(e) => return Err(err(format!("{} is not valid YAML: {e}", file.display()))),
        }
    };
    let mut conflicts = Vec::new();
    let mut add: Vec<&Setting> = Vec::new();
    for s in settings {
        let section = tree.get(&s.section);
        let have = section.and_then(|m| m.get(&s.key));
        match have {
            Some(v) if same_value(v, &s.value) => {}
            Some(v) => conflicts.push(format!(
                "{} is {} there, the migration wants {}",
                s.path(),
                yaml_value(v),
                yaml_value(&s.value)
            )),
            None if s.section == "vaults" => {
                // The same folder under another name is the same vault.
                let same_root = section
                    .and_then(Value::as_object)
                    .is_some_and(|m| m.values().any(|v| same_value(v, &s.value)));
                if !same_root {
                    add.push(s);
                }
            }
            None => add.push(s),
        }
    }
    if !conflicts.is_empty() {
        return Err(err(format!(
            "{} already sets {} differently ({}); nothing was written. Edit those keys by hand, \
             or write elsewhere with `mdvault migrate --write --config NEW.yaml`",
            file.display(),
            if conflicts.len() == 1 { "a key" } else { "keys" },
            conflicts.join("; ")
        )));
    }
    if add.is_empty() {
        return Ok(Merged::Unchanged);
    }
    let mut text = existing.to_string();
    let mut added = Vec::new();
    for section in SECTION_ORDER {
        let keys: Vec<(String, String)> = add
            .iter()
            .filter(|s| s.section == *section)
            .map(|s| (yaml_key(&s.key), yaml_value(&s.value)))
            .collect();
        if keys.is_empty() {
            continue;
        }
        let refs: Vec<(&str, String)> = keys.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        text = set_keys(&text, section, &refs)?;
        added.extend(add.iter().filter(|s| s.section == *section).map(|s| s.path()));
    }
    Ok(Merged::Text(text, added))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct TestEnv(Vec<(String, String)>);

    impl Env for TestEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        }
        fn with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
            self.0.iter().filter(|(k, _)| k.starts_with(prefix)).cloned().collect()
        }
    }

    fn env(vars: &[(&str, &str)]) -> TestEnv {
        TestEnv(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    fn setting<'a>(plan: &'a Plan, path: &str) -> Option<&'a Value> {
        plan.settings.iter().find(|s| s.path() == path).map(|s| &s.value)
    }

    fn row<'a>(plan: &'a Plan, old: &str) -> &'a Row {
        plan.rows.iter().find(|r| r.old.starts_with(old)).unwrap_or_else(|| panic!("no row {old}"))
    }

    #[test]
    fn the_vault_mcp_servers_file_and_variables_map_with_the_variables_winning() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.yaml");
        std::fs::write(
            &file,
            "vault:\n  path: /srv/Vault\nserver:\n  port: 9000\nembedding:\n  ollama_url: \
             http://gpu:11434/v1/\nsearch:\n  default_k: 5\nindex:\n  cache_path: /cache/i.npz\n",
        )
        .unwrap();
        let e = env(&[("SEARCH_DEFAULT_K", "7"), ("VAULT_MCP_API_KEY", "s3cret"), ("HOME", "/h")]);
        let plan = plan(Predecessor::VaultMcp, Some(&file), &e).unwrap();
        assert_eq!(setting(&plan, "vaults.Vault"), Some(&Value::from("/srv/Vault")));
        assert_eq!(setting(&plan, "server.listen"), Some(&Value::from("0.0.0.0:9000")));
        assert_eq!(
            setting(&plan, "server.allowed_hosts"),
            Some(&serde_json::json!(["vault-mcp:8080"]))
        );
        assert_eq!(
            setting(&plan, "embedding.url"),
            Some(&Value::from("http://gpu:11434/v1/embeddings"))
        );
        assert_eq!(setting(&plan, "embedding.backend"), Some(&Value::from("http")));
        assert_eq!(setting(&plan, "embedding.dims"), Some(&Value::from(768)));
        assert_eq!(setting(&plan, "embedding.query_prefix"), Some(&Value::from("search_query: ")));
        assert_eq!(setting(&plan, "search.default_k"), Some(&Value::from(7)));
        assert_eq!(row(&plan, "search.default_k").layer, Layer::Env);
        assert_eq!(
            setting(&plan, "search.exclude_dirs"),
            Some(&serde_json::json!(["Workflows", "Reports"]))
        );
        assert_eq!(row(&plan, "search.exclude_dirs").outcome, Outcome::Changed);
        assert_eq!(setting(&plan, "index.exclude_dirs").map(|v| list(v).len()), Some(6));
        // A default both share is listed, not written.
        assert_eq!(setting(&plan, "chunking.target_tokens"), None);
        assert!(row(&plan, "chunking.target_tokens").why.contains("same default"));
        assert_eq!(row(&plan, "index.cache_path").outcome, Outcome::NotCarried);
        // It always generated index.md; mdvault does only when asked, so migrate asks.
        assert_eq!(setting(&plan, "index.index_md"), Some(&Value::Bool(true)));
        // The key is never printed or written; the env line refers to the old variable.
        assert!(plan.rows.iter().all(|r| !r.value.contains("s3cret")));
        assert_eq!(plan.env_lines, ["MDVAULT_API_KEY=\"$VAULT_MCP_API_KEY\""]);
        assert!(plan.unset.contains(&"SEARCH_DEFAULT_K".to_string()));
        assert!(plan.http_mcp);
    }

    #[test]
    fn vault_searchs_vaults_json_and_variables_map() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("vaults.json");
        std::fs::write(&file, r#"{"notes": "~/Documents/Notes", "journal": "/o/Journal"}"#)
            .unwrap();
        let e =
            env(&[("HOME", "/home/u"), ("VAULT_RERANK_URL", ""), ("VAULT_RERANK_FUSION_K", "0")]);
        let plan = plan(Predecessor::VaultSearch, Some(&file), &e).unwrap();
        assert_eq!(setting(&plan, "vaults.notes"), Some(&Value::from("/home/u/Documents/Notes")));
        assert_eq!(setting(&plan, "vaults.journal"), Some(&Value::from("/o/Journal")));
        assert_eq!(
            setting(&plan, "embedding.url"),
            Some(&Value::from("http://127.0.0.1:8096/v1/embeddings"))
        );
        assert_eq!(
            setting(&plan, "embedding.document_prefix"),
            Some(&Value::from("title: {title} | text: {text}"))
        );
        assert_eq!(setting(&plan, "search.default_k"), Some(&Value::from(8)));
        assert_eq!(setting(&plan, "rerank.url"), None);
        assert_eq!(setting(&plan, "rerank.fusion_k"), Some(&Value::from(0)));
        assert_eq!(setting(&plan, "rerank.candidates"), None);
        assert_eq!(row(&plan, "VAULT_SEARCH_DB").outcome, Outcome::NotCarried);
        assert!(!plan.http_mcp);
        // vault-search never wrote into a vault, so no index.md is asked for.
        assert_eq!(setting(&plan, "index.index_md"), None);
        // A reranker is carried only when the user named one; vault-search's default is not.
        let unset = super::plan(Predecessor::VaultSearch, Some(&file), &env(&[("HOME", "/h")]));
        let unset = unset.unwrap();
        assert_eq!(setting(&unset, "rerank.url"), None);
        assert_eq!(row(&unset, "VAULT_RERANK_URL").outcome, Outcome::NotCarried);
        let named = [("HOME", "/h"), ("VAULT_RERANK_URL", "http://gpu:8095/v1/rerank")];
        let named = super::plan(Predecessor::VaultSearch, Some(&file), &env(&named)).unwrap();
        assert_eq!(setting(&named, "rerank.url"), Some(&Value::from("http://gpu:8095/v1/rerank")));
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "[1]").unwrap();
        assert!(
            super::plan(Predecessor::VaultSearch, Some(&bad), &e)
                .unwrap_err()
                .0
                .contains("JSON object")
        );
    }

    #[test]
    fn detection_follows_from_then_the_config_variables() {
        let e = env(&[]);
        assert_eq!(
            detect(Some(Path::new("a/vaults.json")), &e).unwrap().0,
            Predecessor::VaultSearch
        );
        assert_eq!(detect(Some(Path::new("config.yaml")), &e).unwrap().0, Predecessor::VaultMcp);
        let e = env(&[("VAULT_MCP_CONFIG", "/c.yaml")]);
        assert_eq!(detect(None, &e).unwrap(), (Predecessor::VaultMcp, Some("/c.yaml".into())));
        let e = env(&[("VAULT_MCP_CONFIG", "/c.yaml"), ("VAULT_SEARCH_CONFIG", "/v.json")]);
        assert!(detect(None, &e).unwrap_err().0.contains("--from"));
        let e = env(&[("VAULT_PATH", "/v"), ("HOME", "/nonexistent")]);
        assert_eq!(detect(None, &e).unwrap(), (Predecessor::VaultMcp, None));
        assert!(detect(None, &env(&[("HOME", "/nonexistent")])).unwrap_err().0.contains("--from"));
    }

    #[test]
    fn merging_adds_missing_keys_keeps_the_users_text_and_refuses_a_different_value() {
        let settings = vec![
            Setting::new("vaults", "My Notes", "/n".into()),
            Setting::new("search", "default_k", 8.into()),
            Setting::new("search", "exclude_dirs", serde_json::json!(["Workflows"])),
        ];
        let f = Path::new("c.yaml");
        let Merged::Text(text, added) = merge("", &settings, f).unwrap() else { panic!() };
        assert_eq!(
            text,
            "vaults:\n  \"My Notes\": \"/n\"\n\nsearch:\n  default_k: 8\n  exclude_dirs: \
             [\"Workflows\"]\n"
        );
        assert_eq!(added.len(), 3);
        // Running again changes nothing.
        assert_eq!(merge(&text, &settings, f).unwrap(), Merged::Unchanged);
        // The user's comment and other keys stay; a comma string equals its list.
        let mine = "# mine\nsearch:\n  exclude_dirs: Workflows   # keep\nvaults:\n  n: /n\n";
        let Merged::Text(out, added) = merge(mine, &settings, f).unwrap() else { panic!() };
        assert_eq!(added, ["search.default_k"]);
        assert!(
            out.starts_with(
                "# mine\nsearch:\n  default_k: 8\n  exclude_dirs: Workflows   # keep\n"
            ),
            "{out}"
        );
        let e = merge("search:\n  default_k: 6\n", &settings, f).unwrap_err();
        assert!(
            e.0.contains("search.default_k is 6 there") && e.0.contains("nothing was written"),
            "{e}"
        );
    }
}
