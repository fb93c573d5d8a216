//! The predecessors' names, recognised at start: a variable or config key of the vault MCP
//! server or vault-search that is set where mdvault's own counterpart is not refuses to start,
//! naming the new key and `mdvault migrate`.
//!
//! Why refuse rather than ignore: a user who brought their environment or config file over
//! would otherwise get a server that silently serves the wrong folder, binds the wrong port or
//! embeds with the wrong endpoint. Why not refuse when both are set: someone who has migrated
//! may keep the old variables for a while (a shared shell profile, the old tool still running);
//! then mdvault's setting wins and the old one is named in a warning, never silently dropped.
//!
//! This module only judges names; `migrate` owns the mapping of values. It knows no clap.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::{ConfigError, Env, Overrides, err};

/// What stands in for an old name in mdvault.
#[derive(Debug, Clone, Copy)]
enum Counterpart {
    /// One key of the merged tree (file or `MDVAULT_SECTION__KEY`).
    Key(&'static str),
    /// The vaults: `--vault`, `MDVAULT_VAULTS` or `vaults:`.
    Vaults,
    /// The listen address: `MDVAULT_LISTEN` or `server.listen`.
    Listen,
    /// A variable of its own (`MDVAULT_API_KEY`, `MDVAULT_DATA_DIR`).
    Var(&'static str),
    /// mdvault's config file: `--config`, `MDVAULT_CONFIG` or the default file.
    ConfigFile,
    /// Nothing: the setting has no meaning in mdvault.
    None(&'static str),
}

impl Counterpart {
    /// How a message names it.
    fn name(self) -> String {
        match self {
            Counterpart::Key(k) => {
                format!("`{k}` (or MDVAULT_{})", k.replace('.', "__").to_ascii_uppercase())
            }
            Counterpart::Vaults => {
                "`vaults:` in the config file (or MDVAULT_VAULTS, --vault)".into()
            }
            Counterpart::Listen => "`server.listen` (or MDVAULT_LISTEN)".into(),
            Counterpart::Var(v) => v.to_string(),
            Counterpart::ConfigFile => "an mdvault config file (MDVAULT_CONFIG, --config, or \
                 ~/.config/mdvault/config.yaml)"
                .into(),
            Counterpart::None(why) => why.to_string(),
        }
    }
}

const MCP: &str = "the vault MCP server";
const SEARCH: &str = "vault-search";

/// Every predecessor variable, whose it was, and what replaces it.
const VARIABLES: &[(&str, &str, Counterpart)] = &[
    ("VAULT_MCP_API_KEY", MCP, Counterpart::Var("MDVAULT_API_KEY")),
    ("VAULT_MCP_CONFIG", MCP, Counterpart::ConfigFile),
    ("VAULT_PATH", MCP, Counterpart::Vaults),
    ("DOC_SUFFIXES", MCP, Counterpart::Key("vault.doc_suffixes")),
    ("DOC_FILES_DIR", MCP, Counterpart::Key("vault.doc_files_dir")),
    ("DOC_OCR", MCP, Counterpart::Key("vault.doc_ocr")),
    ("DOC_MAX_BYTES", MCP, Counterpart::Key("vault.doc_max_bytes")),
    ("BIND_HOST", MCP, Counterpart::Listen),
    ("BIND_PORT", MCP, Counterpart::Listen),
    ("MCP_ALLOWED_HOSTS", MCP, Counterpart::Key("server.allowed_hosts")),
    ("OLLAMA_URL", MCP, Counterpart::Key("embedding.url")),
    ("EMBED_MODEL", MCP, Counterpart::Key("embedding.model")),
    ("EMBED_DIMS", MCP, Counterpart::Key("embedding.dims")),
    ("EMBED_BATCH_SIZE", MCP, Counterpart::Key("embedding.batch_size")),
    ("EMBED_MAX_ATTEMPTS", MCP, Counterpart::Key("embedding.max_attempts")),
    ("EMBED_BACKOFF_SECONDS", MCP, Counterpart::Key("embedding.backoff_seconds")),
    ("EMBED_BACKOFF_MAX_SECONDS", MCP, Counterpart::Key("embedding.backoff_max_seconds")),
    ("CHUNK_TARGET_TOKENS", MCP, Counterpart::Key("chunking.target_tokens")),
    ("CHUNK_OVERLAP_TOKENS", MCP, Counterpart::Key("chunking.overlap_tokens")),
    ("CHUNK_MIN_TOKENS", MCP, Counterpart::Key("chunking.min_tokens")),
    ("SEARCH_DEFAULT_K", MCP, Counterpart::Key("search.default_k")),
    ("SEARCH_EXCLUDE_DIRS", MCP, Counterpart::Key("search.exclude_dirs")),
    ("INDEX_EXCLUDE_DIRS", MCP, Counterpart::Key("index.exclude_dirs")),
    ("INDEX_BUILD_MAX_ATTEMPTS", MCP, Counterpart::Key("index.build_max_attempts")),
    ("INDEX_BUILD_RETRY_SECONDS", MCP, Counterpart::Key("index.build_retry_seconds")),
    ("INDEX_RECONCILE_SECONDS", MCP, Counterpart::Key("index.reconcile_seconds")),
    ("INDEX_CACHE_PATH", MCP, Counterpart::Var("MDVAULT_DATA_DIR")),
    (
        "INDEX_CACHE_FLUSH_SECONDS",
        MCP,
        Counterpart::None("nothing: mdvault commits its index as it goes"),
    ),
    ("WATCH_DEBOUNCE_SECONDS", MCP, Counterpart::Key("watch.debounce_seconds")),
    ("VAULT_SEARCH_CONFIG", SEARCH, Counterpart::ConfigFile),
    ("VAULT_SEARCH_DB", SEARCH, Counterpart::Var("MDVAULT_DATA_DIR")),
    ("VAULT_EMBED_URL", SEARCH, Counterpart::Key("embedding.url")),
    ("VAULT_RERANK_URL", SEARCH, Counterpart::Key("rerank.url")),
    ("VAULT_RERANK_CANDIDATES", SEARCH, Counterpart::Key("rerank.candidates")),
    ("VAULT_RERANK_FUSION_K", SEARCH, Counterpart::Key("rerank.fusion_k")),
];

/// The vault MCP server's config keys that mdvault spells differently or does not have.
const KEYS: &[(&str, Counterpart)] = &[
    ("vault.path", Counterpart::Vaults),
    ("server.host", Counterpart::Listen),
    ("server.port", Counterpart::Listen),
    ("embedding.ollama_url", Counterpart::Key("embedding.url")),
    (
        "index.cache_path",
        Counterpart::None("nothing: mdvault keeps its index under MDVAULT_DATA_DIR"),
    ),
    (
        "index.cache_flush_seconds",
        Counterpart::None("nothing: mdvault commits its index as it goes"),
    ),
];

/// Logs a warning once per process: the CLI loads the config more than once.
fn warn_once(message: String) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen.get_or_insert_with(HashSet::new).insert(message.clone()) {
        tracing::warn!("{message}");
    }
}

/// Whether a predecessor variable (or one of their keys) is shadowed by mdvault's own setting.
fn present(
    c: Counterpart,
    tree: &Map<String, Value>,
    env: &dyn Env,
    overrides: &Overrides,
    file_read: bool,
) -> bool {
    let var = |n: &str| env.var(n).is_some_and(|v| !v.trim().is_empty());
    match c {
        Counterpart::Key(path) => {
            let (section, key) = path.split_once('.').unwrap_or((path, ""));
            tree.get(section).and_then(|s| s.get(key)).is_some()
        }
        Counterpart::Vaults => {
            !overrides.vaults.is_empty() || var("MDVAULT_VAULTS") || tree.contains_key("vaults")
        }
        Counterpart::Listen => {
            var("MDVAULT_LISTEN") || tree.get("server").and_then(|s| s.get("listen")).is_some()
        }
        Counterpart::Var(v) => var(v),
        Counterpart::ConfigFile => {
            file_read || overrides.config_file.is_some() || env.var("MDVAULT_CONFIG").is_some()
        }
        Counterpart::None(_) => false,
    }
}

/// Refuses a predecessor's variable or key set without its mdvault counterpart, and drops (with
/// a warning) an old key whose counterpart is set. Run on the merged tree, before it is judged.
pub(crate) fn recognise(
    tree: &mut Map<String, Value>,
    env: &dyn Env,
    overrides: &Overrides,
    file_read: bool,
) -> Result<(), ConfigError> {
    let mut problems = Vec::new();
    for (var, whose, counterpart) in VARIABLES {
        if env.var(var).is_none_or(|v| v.trim().is_empty()) {
            continue;
        }
        let shadowed = present(*counterpart, tree, env, overrides, file_read);
        match counterpart {
            Counterpart::None(why) => warn_once(format!(
                "{var} ({whose}'s) is set and ignored: mdvault has {why}; unset it once migrated"
            )),
            _ if shadowed => warn_once(format!(
                "{var} ({whose}'s) is set but ignored: {} is set and wins; unset {var} once \
                 migrated",
                counterpart.name()
            )),
            _ => problems.push(format!(
                "{var} is {whose}'s variable; mdvault reads {} instead",
                counterpart.name()
            )),
        }
    }
    for (path, counterpart) in KEYS {
        let (section, key) = path.split_once('.').unwrap_or((path, ""));
        let set = tree.get(section).and_then(|s| s.get(key)).is_some();
        if !set {
            continue;
        }
        if present(*counterpart, tree, env, overrides, file_read) {
            warn_once(format!(
                "the config key {path} ({MCP}'s) is ignored: {} is set and wins; remove {path}",
                counterpart.name()
            ));
            if let Some(Value::Object(s)) = tree.get_mut(section) {
                s.remove(key);
            }
        } else {
            problems.push(format!(
                "the config key {path} is {MCP}'s; mdvault reads {} instead",
                counterpart.name()
            ));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(err(format!(
        "{}. Run `mdvault migrate` to write an mdvault config from your old setup (it prints \
         what it maps before --write changes anything), or set the new names yourself",
        problems.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use crate::config::tests::load_with;

    /// Every old variable, alone, refuses to start with a message naming its new name and
    /// `mdvault migrate`, except the one that has no counterpart (a warning).
    #[test]
    fn each_old_variable_alone_refuses_naming_its_new_name_and_migrate() {
        for (var, _, counterpart) in super::VARIABLES {
            let result = load_with(None, &[(var, "1")], &[]);
            if let super::Counterpart::None(_) = counterpart {
                assert!(result.is_ok(), "{var}: {:?}", result.err());
                continue;
            }
            let msg = result.err().unwrap_or_else(|| panic!("{var} was accepted")).0;
            let new = match counterpart {
                super::Counterpart::Key(k) => k.to_string(),
                super::Counterpart::Vaults => "vaults:".into(),
                super::Counterpart::Listen => "server.listen".into(),
                super::Counterpart::Var(v) => v.to_string(),
                super::Counterpart::ConfigFile => "MDVAULT_CONFIG".into(),
                super::Counterpart::None(_) => unreachable!(),
            };
            assert!(msg.starts_with(var), "{msg}");
            assert!(msg.contains(&new), "{var}: {msg}");
            assert!(msg.contains("mdvault migrate"), "{var}: {msg}");
        }
    }

    #[test]
    fn an_old_variable_beside_its_counterpart_loses_to_it() {
        let c = load_with(
            None,
            &[("OLLAMA_URL", "http://old/v1"), ("MDVAULT_EMBEDDING__URL", "http://new/v1")],
            &[],
        )
        .unwrap();
        assert_eq!(
            c.embedding.backend,
            crate::config::EmbeddingBackend::Local {
                model_dir: c.data_dir.join("models/all-MiniLM-L6-v2")
            }
        );
        let c = load_with(None, &[("VAULT_PATH", "/old"), ("SEARCH_DEFAULT_K", "9")], &["/new/v"])
            .unwrap_err();
        assert!(c.0.contains("SEARCH_DEFAULT_K") && !c.0.contains("VAULT_PATH"), "{c}");
        let c =
            load_with(None, &[("BIND_PORT", "9"), ("MDVAULT_LISTEN", "127.0.0.1:1")], &[]).unwrap();
        assert_eq!(c.server.listen, "127.0.0.1:1");
        let c = load_with(None, &[("VAULT_MCP_API_KEY", "a"), ("MDVAULT_API_KEY", "b")], &[]);
        assert!(c.is_ok());
        // Empty is unset (the predecessors read it that way too).
        assert!(load_with(None, &[("VAULT_RERANK_URL", "")], &[]).is_ok());
    }

    #[test]
    fn each_old_config_key_refuses_naming_its_new_key_and_migrate() {
        for (file, new) in [
            ("vault:\n  path: /v\n", "vaults:"),
            ("server:\n  host: 0.0.0.0\n", "server.listen"),
            ("server:\n  port: 8080\n", "server.listen"),
            ("embedding:\n  ollama_url: http://o/v1\n", "embedding.url"),
            ("index:\n  cache_path: /cache/x.npz\n", "MDVAULT_DATA_DIR"),
            ("index:\n  cache_flush_seconds: 60\n", "commits its index"),
        ] {
            let msg = load_with(Some(file), &[], &[]).unwrap_err().0;
            assert!(msg.contains("config key") && msg.contains(new), "{file}: {msg}");
            assert!(msg.contains("mdvault migrate"), "{msg}");
        }
        // Beside its counterpart the old key is dropped, and the new one is what counts.
        let c = load_with(Some("server:\n  port: 9\n  listen: 127.0.0.1:7\n"), &[], &[]).unwrap();
        assert_eq!(c.server.listen, "127.0.0.1:7");
    }
}
