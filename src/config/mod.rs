//! Configuration: built-in defaults, then the YAML file, then the environment, then flags.
//!
//! [`load`] is the only place defaults live and the only place the layers are merged. It reads
//! the config file and the environment but writes nothing. Unknown keys in the file refuse to
//! start, so a typo never silently falls back to a default. Every key `a.b` can also be set
//! with the environment variable `MDVAULT_A__B`; lists may be YAML sequences or comma strings
//! in both layers.
//!
//! This module knows nothing of clap: the command line hands it an [`Overrides`].

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A configuration problem; the binary exits with status 2 on one.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn err(msg: impl Into<String>) -> ConfigError {
    ConfigError(msg.into())
}

/// One named vault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultEntry {
    /// The name used in `--vault NAME=…`, `/v/<name>/…` and `NAME:path`.
    pub name: String,
    /// The vault's root folder (absolute).
    pub root: PathBuf,
}

/// Settings that apply to every vault (`vault.*` keys).
#[derive(Debug, Clone, PartialEq)]
pub struct VaultSettings {
    /// Document suffixes, lowercase with a leading dot.
    pub doc_suffixes: Vec<String>,
    /// The folder name documents must be filed directly inside.
    pub doc_files_dir: String,
    /// Whether scanned documents are OCR'd.
    pub doc_ocr: bool,
    /// The largest accepted upload in bytes; 0 disables the check.
    pub doc_max_bytes: u64,
}

/// The validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The vaults, the default first.
    pub vaults: Vec<VaultEntry>,
    /// Settings shared by the vaults.
    pub vault: VaultSettings,
    /// Where the index store and models live; never inside a vault.
    pub data_dir: PathBuf,
    /// The config file that was read, if any.
    pub file: Option<PathBuf>,
}

/// What the command line contributes (the top layer).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--config FILE`.
    pub config_file: Option<PathBuf>,
    /// `--vault [NAME=]PATH`, repeatable; replaces every other source of vaults.
    pub vaults: Vec<String>,
    /// `--data-dir DIR`.
    pub data_dir: Option<PathBuf>,
}

/// The environment as a lookup, so tests can supply their own.
pub trait Env {
    /// The value of a variable, if set.
    fn var(&self, name: &str) -> Option<String>;
}

/// The real process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl<const N: usize> Env for [(&str, &str); N] {
    fn var(&self, name: &str) -> Option<String> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }
}

/// A YAML sequence of strings, or one comma-separated string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum StringList {
    List(Vec<String>),
    Comma(String),
}

impl StringList {
    fn into_vec(self) -> Vec<String> {
        match self {
            StringList::List(v) => v,
            StringList::Comma(s) => split_commas(&s),
        }
    }
}

fn split_commas(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    vaults: Option<serde_json::Map<String, serde_json::Value>>,
    vault: Option<RawVault>,
    /// Refused with a clear message rather than as an unknown key.
    api_key: Option<serde_json::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVault {
    doc_suffixes: Option<StringList>,
    doc_files_dir: Option<String>,
    doc_ocr: Option<bool>,
    doc_max_bytes: Option<u64>,
}

/// Loads the configuration: defaults < file < environment < overrides.
pub fn load(overrides: &Overrides, env: &dyn Env) -> Result<Config, ConfigError> {
    let (file, raw) = read_file(overrides, env)?;
    let file_dir = file.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    let home = env.var("HOME").map(PathBuf::from);

    let mut settings = VaultSettings {
        doc_suffixes: vec![".pdf".to_string()],
        doc_files_dir: "Files".to_string(),
        doc_ocr: true,
        doc_max_bytes: 50 * 1024 * 1024,
    };
    if let Some(v) = raw.vault {
        if let Some(s) = v.doc_suffixes {
            settings.doc_suffixes = s.into_vec();
        }
        if let Some(s) = v.doc_files_dir {
            settings.doc_files_dir = s;
        }
        if let Some(b) = v.doc_ocr {
            settings.doc_ocr = b;
        }
        if let Some(n) = v.doc_max_bytes {
            settings.doc_max_bytes = n;
        }
    }
    if let Some(s) = env.var("MDVAULT_VAULT__DOC_SUFFIXES") {
        settings.doc_suffixes = split_commas(&s);
    }
    if let Some(s) = env.var("MDVAULT_VAULT__DOC_FILES_DIR") {
        settings.doc_files_dir = s;
    }
    if let Some(s) = env.var("MDVAULT_VAULT__DOC_OCR") {
        settings.doc_ocr = parse_bool("MDVAULT_VAULT__DOC_OCR", &s)?;
    }
    if let Some(s) = env.var("MDVAULT_VAULT__DOC_MAX_BYTES") {
        settings.doc_max_bytes = s.trim().parse().map_err(|_| {
            err(format!("MDVAULT_VAULT__DOC_MAX_BYTES must be a whole number of bytes, not {s:?}"))
        })?;
    }
    settings.doc_suffixes = normalize_suffixes(settings.doc_suffixes)?;
    settings.doc_files_dir = settings.doc_files_dir.trim().trim_matches('/').to_string();
    if settings.doc_files_dir.is_empty() || settings.doc_files_dir.contains('/') {
        return Err(err("vault.doc_files_dir must be a single folder name such as Files"));
    }

    let mut specs: Vec<(Option<String>, PathBuf)> = Vec::new();
    if !overrides.vaults.is_empty() {
        for spec in &overrides.vaults {
            specs.push(parse_vault_spec(spec, None, home.as_deref()));
        }
    } else if let Some(list) = env.var("MDVAULT_VAULTS").filter(|s| !s.trim().is_empty()) {
        for spec in split_commas(&list) {
            specs.push(parse_vault_spec(&spec, None, home.as_deref()));
        }
    } else if let Some(map) = raw.vaults {
        for (name, value) in map {
            let serde_json::Value::String(path) = value else {
                return Err(err(format!("vaults.{name} must be a folder path string")));
            };
            let root = expand(&path, file_dir.as_deref(), home.as_deref());
            specs.push((Some(name), root));
        }
    }
    let mut vaults: Vec<VaultEntry> = Vec::new();
    for (name, root) in specs {
        let name = match name {
            Some(n) => n,
            None => name_from_folder(&root),
        };
        validate_name(&name)?;
        if vaults.iter().any(|v| v.name == name) {
            return Err(err(format!(
                "two vaults are named {name:?}; name them explicitly with --vault NAME=PATH"
            )));
        }
        vaults.push(VaultEntry { name, root });
    }

    let data_dir = match (&overrides.data_dir, env.var("MDVAULT_DATA_DIR")) {
        (Some(d), _) => d.clone(),
        (None, Some(d)) if !d.trim().is_empty() => expand(&d, None, home.as_deref()),
        _ => match (env.var("XDG_DATA_HOME").filter(|s| !s.is_empty()), &home) {
            (Some(x), _) => PathBuf::from(x).join("mdvault"),
            (None, Some(h)) => h.join(".local/share/mdvault"),
            (None, None) => return Err(err("cannot find a data directory: set MDVAULT_DATA_DIR")),
        },
    };

    Ok(Config { vaults, vault: settings, data_dir, file })
}

fn read_file(
    overrides: &Overrides,
    env: &dyn Env,
) -> Result<(Option<PathBuf>, RawFile), ConfigError> {
    let explicit = match (&overrides.config_file, env.var("MDVAULT_CONFIG")) {
        (Some(p), _) => Some(p.clone()),
        // An empty MDVAULT_CONFIG means "no file", which lets a service ignore a stray default.
        (None, Some(p)) if p.trim().is_empty() => return Ok((None, RawFile::default())),
        (None, Some(p)) => Some(PathBuf::from(p)),
        (None, None) => None,
    };
    let path = match explicit {
        Some(p) => {
            if !p.is_file() {
                return Err(err(format!(
                    "the config file {} does not exist; create it or drop --config/MDVAULT_CONFIG",
                    p.display()
                )));
            }
            p
        }
        None => {
            let base = env
                .var("XDG_CONFIG_HOME")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .or_else(|| env.var("HOME").map(|h| PathBuf::from(h).join(".config")));
            match base.map(|b| b.join("mdvault/config.yaml")) {
                Some(p) if p.is_file() => p,
                _ => return Ok((None, RawFile::default())),
            }
        }
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| err(format!("cannot read the config file {}: {e}", path.display())))?;
    let raw: RawFile = if text.trim().is_empty() {
        RawFile::default()
    } else {
        serde_saphyr::from_str(&text)
            .map_err(|e| err(format!("the config file {} is invalid: {e}", path.display())))?
    };
    if raw.api_key.is_some() {
        return Err(err(format!(
            "{} holds an API key; remove it and set MDVAULT_API_KEY in the environment instead",
            path.display()
        )));
    }
    Ok((Some(path), raw))
}

/// Splits `NAME=PATH` (or a bare `PATH`, named after its folder).
fn parse_vault_spec(
    spec: &str,
    base: Option<&Path>,
    home: Option<&Path>,
) -> (Option<String>, PathBuf) {
    if let Some((name, path)) = spec.split_once('=')
        && !name.is_empty()
        && !name.contains('/')
    {
        return (Some(name.trim().to_string()), expand(path.trim(), base, home));
    }
    (None, expand(spec.trim(), base, home))
}

/// A vault named after its folder: the basename with characters a name cannot hold replaced.
fn name_from_folder(root: &Path) -> String {
    let base = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let cleaned: String = base
        .trim_start_matches('.')
        .chars()
        .map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ') { c } else { '-' })
        .collect();
    if cleaned.trim().is_empty() { "vault".to_string() } else { cleaned.trim().to_string() }
}

fn validate_name(name: &str) -> Result<(), ConfigError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '));
    if ok {
        Ok(())
    } else {
        Err(err(format!(
            "{name:?} is not a usable vault name; use letters, digits, '-', '_' or '.' (--vault NAME=PATH)"
        )))
    }
}

/// Expands `~/` and makes a relative path absolute against `base` (or the working directory).
fn expand(path: &str, base: Option<&Path>, home: Option<&Path>) -> PathBuf {
    let p = match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ if path == "~" && home.is_some() => home.unwrap_or(Path::new("/")).to_path_buf(),
        _ => PathBuf::from(path),
    };
    if p.is_absolute() {
        p
    } else {
        match base {
            Some(b) => b.join(p),
            None => std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p),
        }
    }
}

fn normalize_suffixes(list: Vec<String>) -> Result<Vec<String>, ConfigError> {
    let mut out = Vec::new();
    for s in list {
        let s = s.trim().to_ascii_lowercase();
        let s = if s.starts_with('.') { s } else { format!(".{s}") };
        if s == ".md" || s.len() < 2 || s[1..].contains(['.', '/']) {
            return Err(err(format!("{s:?} cannot be a document suffix")));
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

fn parse_bool(name: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(err(format!("{name} must be true or false, not {value:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_with(
        file: Option<&str>,
        env: &[(&str, &str)],
        flags: &[&str],
    ) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let mut overrides = Overrides {
            vaults: flags.iter().map(|s| s.to_string()).collect(),
            ..Overrides::default()
        };
        if let Some(text) = file {
            let p = dir.path().join("config.yaml");
            std::fs::write(&p, text).unwrap();
            overrides.config_file = Some(p);
        }
        struct V<'a>(&'a [(&'a str, &'a str)], String);
        impl Env for V<'_> {
            fn var(&self, name: &str) -> Option<String> {
                if name == "HOME" {
                    return Some(self.1.clone());
                }
                self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
            }
        }
        load(&overrides, &V(env, dir.path().display().to_string()))
    }

    #[test]
    fn precedence_defaults_file_env_flags() {
        let file =
            "vaults:\n  home: /srv/home\n  work: /srv/work\nvault:\n  doc_suffixes: [pdf, .DOCX]\n";
        let c = load_with(Some(file), &[], &[]).unwrap();
        assert_eq!(c.vaults[0], VaultEntry { name: "home".into(), root: "/srv/home".into() });
        assert_eq!(c.vaults.len(), 2);
        assert_eq!(c.vault.doc_suffixes, vec![".pdf", ".docx"]);
        assert_eq!(c.vault.doc_files_dir, "Files");

        let c = load_with(
            Some(file),
            &[("MDVAULT_VAULTS", "a=/x,/y/notes"), ("MDVAULT_VAULT__DOC_SUFFIXES", "pdf")],
            &[],
        )
        .unwrap();
        assert_eq!(c.vaults.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["a", "notes"]);
        assert_eq!(c.vault.doc_suffixes, vec![".pdf"]);

        let c = load_with(Some(file), &[("MDVAULT_VAULTS", "a=/x")], &["/z/Mine"]).unwrap();
        assert_eq!(c.vaults, vec![VaultEntry { name: "Mine".into(), root: "/z/Mine".into() }]);
    }

    #[test]
    fn refuses_unknown_keys_keys_in_file_and_missing_named_file() {
        assert!(
            load_with(Some("vault:\n  doc_sufixes: pdf\n"), &[], &[])
                .unwrap_err()
                .0
                .contains("doc_sufixes")
        );
        assert!(
            load_with(Some("api_key: abc\n"), &[], &[]).unwrap_err().0.contains("MDVAULT_API_KEY")
        );
        let missing =
            Overrides { config_file: Some("/nonexistent/c.yaml".into()), ..Overrides::default() };
        assert!(load(&missing, &[("HOME", "/tmp")]).is_err());
        assert!(load_with(None, &[], &["a=/x", "a=/y"]).is_err());
    }

    #[test]
    fn data_dir_follows_xdg() {
        let c = load_with(None, &[("XDG_DATA_HOME", "/d")], &[]).unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/d/mdvault"));
        let c = load_with(None, &[("MDVAULT_DATA_DIR", "/e")], &[]).unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/e"));
    }
}
