//! Configuration: built-in defaults, then the YAML file, then the environment, then flags.
//!
//! [`load`] is the only place defaults live and the only place the layers are merged. The file
//! is read into a JSON-like tree, every `MDVAULT_SECTION__KEY` environment variable is laid over
//! it (its value read as a YAML scalar, so `8` is a number and `true` a bool), and the result is
//! deserialised with unknown keys refused, so a typo in either layer never silently falls back
//! to a default. Lists may be YAML sequences or comma strings. The API key is never read here:
//! it comes from `MDVAULT_API_KEY` only, and a key in the file refuses to start.
//!
//! This module knows nothing of clap: the command line hands it an [`Overrides`]. It reads but
//! never writes; [`edit`] rewrites config text for a caller that writes it.

mod datadir;
pub(crate) mod edit;
pub(crate) mod legacy;
pub(crate) mod migrate;
mod raw;
mod server;

use std::path::{Path, PathBuf};

pub(crate) use datadir::DataDir;
use raw::{
    RawCallouts, RawChunking, RawConfig, RawEmbedding, RawIndex, RawMaintenance, RawRerank,
    RawSearch, RawVault, StringList,
};
use serde_json::{Map, Value};
pub(crate) use server::ServerSettings;

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

/// Settings that apply to every vault (`vault.*`).
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
    /// The frontmatter key every write stamps with the time; empty turns stamping off (a
    /// client that writes a note then gets its own bytes back, as the Local REST API's do).
    pub timestamp_key: String,
}

/// Which embedder computes vectors (`embedding.*`).
#[derive(Debug, Clone, PartialEq)]
pub enum EmbeddingBackend {
    /// A local safetensors BERT-family model folder.
    Local {
        /// The model folder.
        model_dir: PathBuf,
    },
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    Http {
        /// The full endpoint URL.
        url: String,
        /// The model name sent with each request.
        model: String,
        /// The expected vector length.
        dims: usize,
    },
    /// The model-free hashing embedder, for benchmarks and tests (never the default).
    Hashing {
        /// The vector length.
        dims: usize,
    },
}

/// Embedding settings.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingSettings {
    /// The backend.
    pub backend: EmbeddingBackend,
    /// Texts per HTTP request.
    pub(crate) batch_size: usize,
    /// HTTP attempts before giving up.
    pub(crate) max_attempts: u32,
    /// First retry wait, doubled each time.
    pub(crate) backoff_seconds: f64,
    /// The longest retry wait.
    pub(crate) backoff_max_seconds: f64,
    /// Prepended to a query before embedding (asymmetric models).
    pub(crate) query_prefix: String,
    /// Prepended to a chunk's embed text.
    pub(crate) document_prefix: String,
}

/// Chunking settings (`chunking.*`), in estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkingSettings {
    /// The size a long section is split towards.
    pub(crate) target_tokens: usize,
    /// How much of one split piece is repeated at the start of the next.
    pub(crate) overlap_tokens: usize,
    /// Sections smaller than this merge with a neighbour.
    pub(crate) min_tokens: usize,
}

/// Search settings (`search.*`).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    /// Results when the caller does not say.
    pub(crate) default_k: usize,
    /// Root-relative folders never searched (case-insensitive, whole segments).
    pub exclude_dirs: Vec<String>,
    /// Candidates taken from each arm before fusion.
    pub(crate) candidates: usize,
    /// How the two arms are fused (`rrf`, or a convex combination of normalised scores).
    pub(crate) fusion: Fusion,
    /// The reciprocal-rank-fusion constant.
    pub(crate) rrf_k: f64,
    /// The lexical arm's weight (the dense arm's is 1); unset, the fusion's own default.
    pub(crate) lexical_weight: Option<f64>,
    /// Multiplier applied to filed documents' fused scores.
    pub(crate) document_weight: f64,
    /// Relevance versus novelty in the diversity pass.
    pub(crate) mmr_lambda: Option<f64>,
    /// Pin exact identifier matches first (the lookup override); off only to measure it.
    pub(crate) lookup: bool,
    /// In a query of a few words, a word no passage holds is also searched as the indexed
    /// words one edit from it (or, failing those, that begin with it), and the answer says so.
    pub(crate) typos: bool,
    /// The most results one note may take; unset, two for k up to ten and k/5 beyond.
    pub(crate) max_per_note: Option<usize>,
    /// What a query word found in a chunk's title, aliases or heading path adds, beside its
    /// match in the body, as a share of that match (0: the body alone).
    pub(crate) heading_weight: f64,
    /// How many of the first fusion's leaders the dense query moves toward before the
    /// candidates are scored again (0: off; see `search::feedback`).
    pub(crate) feedback_passages: usize,
    /// The leaders' weight beside the query's own 1.0 in that move.
    pub(crate) feedback_weight: f64,
    /// A vault's own default `k`, for a search of that vault alone (`vaults: {NAME: {path,
    /// default_k}}`); a search of every vault uses `default_k`.
    pub(crate) vault_k: std::collections::BTreeMap<String, usize>,
}

impl SearchSettings {
    /// The lexical arm's weight against the dense arm's 1.0: `search.lexical_weight`, or the
    /// fusion's own default (each was chosen on SciFact's train queries; see docs/search.md).
    /// Theoretical normalisation keeps BM25's own scale (a weak match stays small) where the
    /// list-relative ones stretch every list to the same range, so it wants a far smaller weight.
    pub(crate) fn lexical_weight(&self) -> f64 {
        self.lexical_weight.unwrap_or(match self.fusion {
            Fusion::Rrf => 1.0,
            Fusion::Convex(Normalisation::Theoretical) => 0.33,
            Fusion::Convex(Normalisation::MinMax | Normalisation::ZScore) => 1.25,
        })
    }

    /// Relevance against novelty in the diversity pass: `search.mmr_lambda`, or the fusion's
    /// own default. The same-note penalty is `1 - lambda` in fused-score units, and a convex
    /// fusion spreads its scores over [0, 1] where RRF's bunch near the top, so it needs the
    /// larger penalty to keep one note from taking two places as seldom as RRF let it (the
    /// fixture set: 1.18 results from one note in six under both; 1.42 at 0.9).
    pub(crate) fn mmr_lambda(&self) -> f64 {
        self.mmr_lambda.unwrap_or(match self.fusion {
            Fusion::Rrf => 0.9,
            Fusion::Convex(_) => 0.8,
        })
    }
}

/// How the two arms' lists become one (`search.fusion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fusion {
    /// Weighted reciprocal-rank fusion: ranks only.
    Rrf,
    /// A weighted mean of the arms' scores, each normalised over its own candidate list.
    Convex(Normalisation),
}

/// How one arm's raw scores are brought to a common scale before a convex combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Normalisation {
    /// `(s - min) / (max - min)` over the arm's list.
    MinMax,
    /// `(s - mean) / standard deviation` over the arm's list (shifted so the list's lowest
    /// is 0; a shift changes no order).
    ZScore,
    /// `(s - m) / (max - m)` where `m` is the least score the arm can give at all (BM25 0,
    /// cosine -1) rather than the list's least, so a list of near-ties keeps them near.
    Theoretical,
}

impl Fusion {
    /// The default: at lexical weight 0.33 it had the best SciFact train figure of every fusion
    /// that keeps the fixture set's MRR@10 above 0.95, and on the test halves it beat
    /// `convex-zscore` (the default before it) on SciFact and both real vaults (docs/search.md).
    pub(crate) const DEFAULT: Fusion = Fusion::Convex(Normalisation::Theoretical);

    /// Every fusion with its configuration name, in one place for the parser and the docs.
    pub(crate) const NAMES: [(&'static str, Fusion); 4] = [
        ("rrf", Fusion::Rrf),
        ("convex-minmax", Fusion::Convex(Normalisation::MinMax)),
        ("convex-zscore", Fusion::Convex(Normalisation::ZScore)),
        ("convex-theoretical", Fusion::Convex(Normalisation::Theoretical)),
    ];

    /// The configuration name.
    pub(crate) fn name(self) -> &'static str {
        Fusion::NAMES.iter().find(|(_, f)| *f == self).map_or("rrf", |(n, _)| n)
    }

    /// The fusion a configuration name gives, if any.
    pub(crate) fn parse(name: &str) -> Option<Fusion> {
        Fusion::NAMES.iter().find(|(n, _)| *n == name.trim()).map(|(_, f)| *f)
    }
}

/// The optional reranker (`rerank.*`).
#[derive(Debug, Clone, PartialEq)]
pub struct RerankSettings {
    /// A `/v1/rerank` endpoint; empty means no reranking.
    pub url: String,
    /// The model name sent with each request.
    pub(crate) model: String,
    /// Candidates rescored in the default mode.
    pub(crate) candidates: usize,
    /// RRF constant fusing the reranker's order with the fused order; 0 = reranker order only.
    pub(crate) fusion_k: f64,
    /// Candidates ordered purely by the reranker in `thorough` mode.
    pub(crate) thorough_candidates: usize,
}

/// Index lifecycle settings (`index.*`).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexSettings {
    /// Root-relative folders left out of the generated index.md.
    pub(crate) exclude_dirs: Vec<String>,
    /// Background build attempts before giving up.
    pub(crate) build_max_attempts: u32,
    /// The first wait between build attempts, doubled each time.
    pub(crate) build_retry_seconds: f64,
    /// How often a full reconcile pass catches missed file events; 0 disables it.
    pub reconcile_seconds: f64,
    /// Whether the root `index.md` is generated and kept up to date (off by default).
    pub(crate) index_md: bool,
}

/// Vault maintenance settings (`maintenance.*`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MaintenanceSettings {
    /// The interpreter the vault's `.scripts/*.py` checks run with.
    pub(crate) python: String,
    /// How long one script may run before it is stopped.
    pub(crate) timeout_seconds: f64,
}

/// Callout listing settings (`callouts.*`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CalloutSettings {
    /// The callout types listed as open (Obsidian aliases allowed).
    pub(crate) open_types: Vec<String>,
}

/// The validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The vaults, the default first.
    pub vaults: Vec<VaultEntry>,
    /// Settings shared by the vaults.
    pub(crate) vault: VaultSettings,
    /// The embedder.
    pub embedding: EmbeddingSettings,
    /// The chunker.
    pub(crate) chunking: ChunkingSettings,
    /// Retrieval.
    pub search: SearchSettings,
    /// The optional reranker.
    pub rerank: RerankSettings,
    /// Index lifecycle.
    pub index: IndexSettings,
    /// Vault maintenance checks.
    pub(crate) maintenance: MaintenanceSettings,
    /// Open callouts.
    pub(crate) callouts: CalloutSettings,
    /// Quiet time per path before a file change is acted on.
    pub watch_debounce_seconds: f64,
    /// The HTTP server.
    pub(crate) server: ServerSettings,
    /// Where the index store and models live; never inside a vault.
    pub(crate) data_dir: PathBuf,
    /// The config file that was read, if any.
    pub(crate) file: Option<PathBuf>,
}

impl Config {
    /// The default local model folder inside the data directory.
    pub(crate) fn default_model_dir(data_dir: &Path) -> PathBuf {
        DataDir::new(data_dir).models().join("all-MiniLM-L6-v2")
    }
}

/// The callout types listed as open when `callouts.open_types` names none: the ones that ask
/// the reader to act or warn of something wrong.
pub(crate) const DEFAULT_OPEN_CALLOUTS: &[&str] =
    &["danger", "bug", "failure", "warning", "todo", "question"];

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
    /// Every variable whose name starts with `prefix`.
    fn with_prefix(&self, prefix: &str) -> Vec<(String, String)>;
}

/// The real process environment.
pub(crate) struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        std::env::vars().filter(|(k, _)| k.starts_with(prefix)).collect()
    }
}

impl<const N: usize> Env for [(&str, &str); N] {
    fn var(&self, name: &str) -> Option<String> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    fn with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        self.iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

fn split_commas(s: &str) -> Vec<String> {
    s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// Splits `MDVAULT_VAULTS` at commas, where `\,` is a comma inside a path and `\\` a
/// backslash (so a folder named `Work, 2026` can be listed; `mdvault service install` writes
/// it that way).
pub(crate) fn split_vault_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ (',' | '\\')) => cur.push(n),
                Some(n) => {
                    cur.push('\\');
                    cur.push(n);
                }
                None => cur.push('\\'),
            },
            ',' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// The inverse of [`split_vault_list`] for one entry.
pub(crate) fn escape_vault_entry(s: &str) -> String {
    s.replace('\\', "\\\\").replace(',', "\\,")
}

/// Environment variables with these names are settings of their own, not `section.key` paths.
const SPECIAL_ENV: &[&str] =
    &["MDVAULT_API_KEY", "MDVAULT_CONFIG", "MDVAULT_DATA_DIR", "MDVAULT_VAULTS", "MDVAULT_LISTEN"];

/// Loads the configuration: defaults < file < environment < overrides.
///
/// Each section is read by its own step below, in this order; the order is the order of the
/// checks, so a file with two mistakes is always told of the same one first.
pub fn load(overrides: &Overrides, env: &dyn Env) -> Result<Config, ConfigError> {
    let (file, mut tree) = read_file(overrides, env)?;
    overlay_env(&mut tree, env)?;
    legacy::recognise(&mut tree, env, overrides, file.is_some())?;
    let raw: RawConfig = serde_path_to_error::deserialize(Value::Object(tree)).map_err(|e| {
        let origin = match &file {
            Some(f) => format!("{} (or an MDVAULT_ variable)", f.display()),
            None => "the MDVAULT_ environment variables".to_string(),
        };
        let key = e.path().to_string();
        err(format!("the setting {key} in {origin} is invalid: {}", e.into_inner()))
    })?;
    let file_dir = file.as_deref().and_then(Path::parent).map(Path::to_path_buf);
    let home = env.var("HOME").map(PathBuf::from);
    // Relative paths in the file are the file's; `~` is the home folder.
    let paths = Paths { file_dir: file_dir.as_deref(), home: home.as_deref() };

    let data_dir = data_dir(overrides, env, home.as_deref())?;
    let vault = vault_settings(raw.vault)?;
    let embedding = embedding_settings(raw.embedding, paths, &data_dir)?;
    let chunking = chunking_settings(raw.chunking)?;
    let mut search = search_settings(raw.search)?;
    let rerank = rerank_settings(raw.rerank)?;
    let maintenance = maintenance_settings(raw.maintenance)?;
    let index = index_settings(raw.index)?;
    let callouts = callout_settings(raw.callouts);
    let specs = vault_specs(overrides, env, raw.vaults, paths, &mut search.vault_k)?;
    let vaults = vault_entries(specs, &data_dir)?;
    let server = server::server_settings(raw.server, env)?;

    Ok(Config {
        vaults,
        vault,
        embedding,
        chunking,
        search,
        rerank,
        index,
        maintenance,
        callouts,
        watch_debounce_seconds: raw.watch.debounce_seconds.unwrap_or(2.0),
        server,
        data_dir,
        file,
    })
}

/// The folders a path in the configuration is read against.
#[derive(Clone, Copy)]
struct Paths<'a> {
    /// The config file's folder, for relative paths written in it.
    file_dir: Option<&'a Path>,
    home: Option<&'a Path>,
}

/// The data directory: `--data-dir`, else `MDVAULT_DATA_DIR`, else the XDG data folder.
fn data_dir(
    overrides: &Overrides,
    env: &dyn Env,
    home: Option<&Path>,
) -> Result<PathBuf, ConfigError> {
    Ok(match (&overrides.data_dir, env.var("MDVAULT_DATA_DIR")) {
        (Some(d), _) => absolute(d.clone()),
        (None, Some(d)) if !d.trim().is_empty() => expand(&d, None, home),
        _ => match (env.var("XDG_DATA_HOME").filter(|s| !s.is_empty()), home) {
            (Some(x), _) => PathBuf::from(x).join("mdvault"),
            (None, Some(h)) => h.join(".local/share/mdvault"),
            (None, None) => return Err(err("cannot find a data directory: set MDVAULT_DATA_DIR")),
        },
    })
}

/// `vault:`: what every vault holds besides notes (documents, the timestamp key).
fn vault_settings(v: RawVault) -> Result<VaultSettings, ConfigError> {
    let mut vault = VaultSettings {
        doc_suffixes: v.doc_suffixes.map_or_else(|| vec![".pdf".to_string()], StringList::into_vec),
        doc_files_dir: v.doc_files_dir.unwrap_or_else(|| "Files".to_string()),
        doc_ocr: v.doc_ocr.unwrap_or(true),
        doc_max_bytes: v.doc_max_bytes.unwrap_or(50 * 1024 * 1024),
        // The predecessor's key, so existing vaults keep their stamps.
        timestamp_key: v.timestamp_key.unwrap_or_else(|| "timestamp".to_string()),
    };
    vault.timestamp_key = vault.timestamp_key.trim().to_string();
    if vault.timestamp_key.contains(|c: char| c == ':' || c == '#' || c.is_control()) {
        return Err(err(
            "vault.timestamp_key must be a plain frontmatter key such as timestamp, or \"\" to \
             turn stamping off",
        ));
    }
    vault.doc_suffixes = normalize_suffixes(vault.doc_suffixes)?;
    if let Some(orphan) = vault.doc_suffixes.iter().find(|s| !crate::docs::has_extractor(s)) {
        return Err(err(format!(
            "vault.doc_suffixes lists `{orphan}`, but mdvault has no text extractor for it; \
             supported: {}",
            crate::docs::SUFFIXES.join(", ")
        )));
    }
    vault.doc_files_dir = vault.doc_files_dir.trim().trim_matches('/').to_string();
    if vault.doc_files_dir.is_empty() || vault.doc_files_dir.contains('/') {
        return Err(err("vault.doc_files_dir must be a single folder name such as Files"));
    }
    Ok(vault)
}

/// `embedding:`: the backend (a local model folder by default) and how batches are sent.
fn embedding_settings(
    e: RawEmbedding,
    paths: Paths,
    data_dir: &Path,
) -> Result<EmbeddingSettings, ConfigError> {
    let backend = match e.backend.as_deref().map(str::trim).unwrap_or("local") {
        "local" => EmbeddingBackend::Local {
            model_dir: match e.model_dir.filter(|s| !s.trim().is_empty()) {
                Some(d) => expand(&d, paths.file_dir, paths.home),
                None => Config::default_model_dir(data_dir),
            },
        },
        "http" => {
            let dims = e.dims.ok_or_else(|| {
                err("embedding.backend is http, so embedding.dims (the vector length) must be set")
            })?;
            EmbeddingBackend::Http {
                url: e
                    .url
                    .unwrap_or_else(|| "http://127.0.0.1:8096/v1/embeddings".to_string())
                    .trim()
                    .trim_end_matches('/')
                    .to_string(),
                model: e.model.unwrap_or_default(),
                dims,
            }
        }
        "hashing" => EmbeddingBackend::Hashing { dims: e.dims.unwrap_or(384) },
        other => {
            return Err(err(format!("embedding.backend is {other:?}; use local or http")));
        }
    };
    Ok(EmbeddingSettings {
        backend,
        batch_size: positive("embedding.batch_size", e.batch_size.unwrap_or(64))?,
        max_attempts: e.max_attempts.unwrap_or(5).max(1),
        backoff_seconds: e.backoff_seconds.unwrap_or(1.0),
        backoff_max_seconds: e.backoff_max_seconds.unwrap_or(30.0),
        query_prefix: e.query_prefix.unwrap_or_default(),
        document_prefix: e.document_prefix.unwrap_or_default(),
    })
}

/// `chunking:`.
fn chunking_settings(c: RawChunking) -> Result<ChunkingSettings, ConfigError> {
    let chunking = ChunkingSettings {
        target_tokens: positive("chunking.target_tokens", c.target_tokens.unwrap_or(400))?,
        overlap_tokens: c.overlap_tokens.unwrap_or(60),
        min_tokens: c.min_tokens.unwrap_or(120),
    };
    if chunking.overlap_tokens >= chunking.target_tokens {
        return Err(err("chunking.overlap_tokens must be smaller than chunking.target_tokens"));
    }
    Ok(chunking)
}

/// `search:`; the per-vault `default_k`s are added from `vaults:` later.
fn search_settings(s: RawSearch) -> Result<SearchSettings, ConfigError> {
    let search = SearchSettings {
        default_k: positive("search.default_k", s.default_k.unwrap_or(6))?,
        exclude_dirs: clean_dirs(s.exclude_dirs),
        candidates: positive("search.candidates", s.candidates.unwrap_or(50))?,
        fusion: match s.fusion.as_deref() {
            None => Fusion::DEFAULT,
            Some(name) => Fusion::parse(name).ok_or_else(|| {
                let names: Vec<&str> = Fusion::NAMES.iter().map(|n| n.0).collect();
                err(format!("search.fusion {name:?} is not one of {}", names.join(", ")))
            })?,
        },
        rrf_k: s.rrf_k.unwrap_or(60.0),
        lexical_weight: s.lexical_weight,
        document_weight: s.document_weight.unwrap_or(0.95),
        mmr_lambda: s.mmr_lambda,
        lookup: s.lookup.unwrap_or(true),
        typos: s.typos.unwrap_or(true),
        max_per_note: s.max_per_note,
        heading_weight: s.heading_weight.unwrap_or(0.0),
        feedback_passages: s.feedback_passages.unwrap_or(0),
        feedback_weight: s.feedback_weight.unwrap_or(0.0),
        vault_k: std::collections::BTreeMap::new(),
    };
    if search.lexical_weight.is_some_and(|w| !(w >= 0.0 && w.is_finite())) {
        return Err(err("search.lexical_weight must be a number of 0 or more"));
    }
    for (key, w) in
        [("heading_weight", search.heading_weight), ("feedback_weight", search.feedback_weight)]
    {
        if !(w >= 0.0 && w.is_finite()) {
            return Err(err(format!("search.{key} must be a number of 0 or more")));
        }
    }
    if search.mmr_lambda.is_some_and(|l| !(0.0..=1.0).contains(&l)) {
        return Err(err("search.mmr_lambda must be between 0 and 1"));
    }
    Ok(search)
}

/// `rerank:` (off while `url` is empty).
fn rerank_settings(r: RawRerank) -> Result<RerankSettings, ConfigError> {
    Ok(RerankSettings {
        url: r.url.unwrap_or_default().trim().to_string(),
        model: r.model.unwrap_or_default(),
        candidates: positive("rerank.candidates", r.candidates.unwrap_or(20))?,
        fusion_k: r.fusion_k.unwrap_or(5.0),
        thorough_candidates: positive(
            "rerank.thorough_candidates",
            r.thorough_candidates.unwrap_or(40),
        )?,
    })
}

/// `maintenance:`: the Python that runs vault scripts, and how long one may take.
fn maintenance_settings(m: RawMaintenance) -> Result<MaintenanceSettings, ConfigError> {
    let maintenance = MaintenanceSettings {
        python: m
            .python
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "python3".to_string()),
        timeout_seconds: m.timeout_seconds.unwrap_or(120.0),
    };
    if !(maintenance.timeout_seconds > 0.0 && maintenance.timeout_seconds <= 86_400.0) {
        return Err(err(
            "maintenance.timeout_seconds must be more than 0 and at most 86400 (a day)",
        ));
    }
    Ok(maintenance)
}

/// `index:`.
fn index_settings(i: RawIndex) -> Result<IndexSettings, ConfigError> {
    let index = IndexSettings {
        exclude_dirs: clean_dirs(i.exclude_dirs),
        build_max_attempts: i.build_max_attempts.unwrap_or(5).max(1),
        build_retry_seconds: i.build_retry_seconds.unwrap_or(5.0),
        reconcile_seconds: i.reconcile_seconds.unwrap_or(900.0),
        // Off unless asked for: nothing appears in a user's vault that they did not ask for
        // (`migrate` from the vault MCP server, which always wrote one, turns it on).
        index_md: i.index_md.unwrap_or(false),
    };
    if !(index.reconcile_seconds >= 0.0 && index.reconcile_seconds <= 31_536_000.0) {
        return Err(err("index.reconcile_seconds must be between 0 (off) and 31536000 (a year)"));
    }
    Ok(index)
}

/// `callouts:`: which callout types count as open.
fn callout_settings(c: RawCallouts) -> CalloutSettings {
    CalloutSettings {
        open_types: match c.open_types {
            Some(list) => list
                .into_vec()
                .into_iter()
                .map(|t| t.trim().to_lowercase())
                .filter(|t| !t.is_empty())
                .collect(),
            None => DEFAULT_OPEN_CALLOUTS.iter().map(|t| t.to_string()).collect(),
        },
    }
}

/// The vaults as (name if given, folder): `--vault` flags, else `MDVAULT_VAULTS`, else the
/// file's `vaults:` (whose per-vault `default_k` goes into `vault_k`). Flags and the variable
/// replace the file's list rather than adding to it.
fn vault_specs(
    overrides: &Overrides,
    env: &dyn Env,
    file_vaults: Option<Map<String, Value>>,
    paths: Paths,
    vault_k: &mut std::collections::BTreeMap<String, usize>,
) -> Result<Vec<(Option<String>, PathBuf)>, ConfigError> {
    let mut specs: Vec<(Option<String>, PathBuf)> = Vec::new();
    if !overrides.vaults.is_empty() {
        for spec in &overrides.vaults {
            specs.push(parse_vault_spec(spec, paths.home));
        }
    } else if let Some(list) = env.var("MDVAULT_VAULTS").filter(|s| !s.trim().is_empty()) {
        for spec in split_vault_list(&list) {
            specs.push(parse_vault_spec(&spec, paths.home));
        }
    } else if let Some(map) = file_vaults {
        for (name, value) in map {
            // A path, or a mapping with the path and the vault's own settings.
            let path = match value {
                Value::String(path) => path,
                Value::Object(mut m) => {
                    let path = match m.remove("path") {
                        Some(Value::String(p)) => p,
                        _ => {
                            return Err(err(format!(
                                "vaults.{name}.path must be set to the vault's folder"
                            )));
                        }
                    };
                    if let Some(k) = m.remove("default_k") {
                        let k = k.as_u64().filter(|k| *k > 0).ok_or_else(|| {
                            err(format!("vaults.{name}.default_k must be a whole number from 1"))
                        })?;
                        vault_k.insert(name.clone(), k as usize);
                    }
                    if let Some(other) = m.keys().next() {
                        return Err(err(format!(
                            "vaults.{name}.{other} is not a vault setting; a vault takes path \
                             and default_k"
                        )));
                    }
                    path
                }
                _ => {
                    return Err(err(format!(
                        "vaults.{name} must be a folder path, or a mapping with path (and \
                         default_k)"
                    )));
                }
            };
            specs.push((Some(name), expand(&path, paths.file_dir, paths.home)));
        }
    }
    Ok(specs)
}

/// The vaults named and checked: unique names, and none overlapping the data directory.
fn vault_entries(
    specs: Vec<(Option<String>, PathBuf)>,
    data_dir: &Path,
) -> Result<Vec<VaultEntry>, ConfigError> {
    let mut vaults: Vec<VaultEntry> = Vec::new();
    for (name, root) in specs {
        let name = name.unwrap_or_else(|| name_from_folder(&root));
        validate_name(&name)?;
        if vaults.iter().any(|v| v.name == name) {
            return Err(err(format!(
                "two vaults are named {name:?}; name them explicitly with --vault NAME=PATH"
            )));
        }
        // Compared as the folders they are on disk, not as text: `x/../Notes/.idx` and a
        // symlink into the vault both put the index inside it.
        let (real_root, real_data) = (on_disk(&root), on_disk(data_dir));
        if real_root.starts_with(&real_data) || real_data.starts_with(&real_root) {
            return Err(err(format!(
                "the data directory {} ({}) and the vault {} ({}) overlap; the index must live \
                 outside the vault: set MDVAULT_DATA_DIR (or --data-dir) to a folder outside it",
                data_dir.display(),
                real_data.display(),
                root.display(),
                real_root.display()
            )));
        }
        vaults.push(VaultEntry { name, root });
    }
    Ok(vaults)
}

fn positive(key: &str, n: usize) -> Result<usize, ConfigError> {
    if n == 0 { Err(err(format!("{key} must be at least 1"))) } else { Ok(n) }
}

fn clean_dirs(list: Option<StringList>) -> Vec<String> {
    list.map(StringList::into_vec)
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.trim().trim_matches('/').to_string())
        .filter(|d| !d.is_empty())
        .collect()
}

/// Where the config file is looked for when no `--config` or `MDVAULT_CONFIG` names one:
/// `$XDG_CONFIG_HOME/mdvault/config.yaml`, else `~/.config/mdvault/config.yaml`.
pub(crate) fn default_file(env: &dyn Env) -> Option<PathBuf> {
    env.var("XDG_CONFIG_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|b| b.join("mdvault/config.yaml"))
}

fn read_file(
    overrides: &Overrides,
    env: &dyn Env,
) -> Result<(Option<PathBuf>, Map<String, Value>), ConfigError> {
    let explicit = match (&overrides.config_file, env.var("MDVAULT_CONFIG")) {
        (Some(p), _) if !p.as_os_str().is_empty() => Some(p.clone()),
        (Some(_), _) => return Ok((None, Map::new())),
        // An empty MDVAULT_CONFIG means "no file", which lets a service ignore a stray default.
        (None, Some(p)) if p.trim().is_empty() => return Ok((None, Map::new())),
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
            absolute(p)
        }
        None => match default_file(env) {
            Some(p) if p.is_file() => p,
            _ => return Ok((None, Map::new())),
        },
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| err(format!("cannot read the config file {}: {e}", path.display())))?;
    let tree: Value = if text.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_saphyr::from_str(&text).map_err(|e| {
            err(format!("the config file {} is not valid YAML: {e}", path.display()))
        })?
    };
    let Value::Object(map) = tree else {
        return Err(err(format!(
            "the config file {} must be a mapping of sections",
            path.display()
        )));
    };
    if map.contains_key("api_key") || map.values().any(|v| v.get("api_key").is_some()) {
        return Err(err(format!(
            "{} holds an API key; remove it and set MDVAULT_API_KEY in the environment instead",
            path.display()
        )));
    }
    Ok((Some(path), map))
}

/// Lays `MDVAULT_SECTION__KEY=value` variables over the file's tree.
fn overlay_env(tree: &mut Map<String, Value>, env: &dyn Env) -> Result<(), ConfigError> {
    let mut vars = env.with_prefix("MDVAULT_");
    vars.sort();
    for (name, raw) in vars {
        if SPECIAL_ENV.contains(&name.as_str()) {
            continue;
        }
        // Only SECTION__KEY names are settings; other MDVAULT_ variables (test helpers, say) are
        // not ours to judge.
        let Some((section, key)) = name["MDVAULT_".len()..].split_once("__") else {
            continue;
        };
        let (section, key) = (section.to_ascii_lowercase(), key.to_ascii_lowercase());
        // Read the value as a YAML scalar so numbers and booleans keep their types; anything
        // that does not parse as one stays a string.
        let value = match serde_saphyr::from_str::<Value>(&raw) {
            Ok(v @ (Value::Bool(_) | Value::Number(_) | Value::String(_))) => v,
            _ => Value::String(raw.clone()),
        };
        let entry = tree.entry(section.clone()).or_insert_with(|| Value::Object(Map::new()));
        match entry {
            Value::Object(m) => {
                m.insert(key, value);
            }
            _ => {
                return Err(err(format!(
                    "{name} sets a key inside {section}, which is not a section"
                )));
            }
        }
    }
    Ok(())
}

/// Splits `NAME=PATH` (or a bare `PATH`, named after its folder).
fn parse_vault_spec(spec: &str, home: Option<&Path>) -> (Option<String>, PathBuf) {
    if let Some((name, path)) = spec.split_once('=')
        && !name.is_empty()
        && !name.contains('/')
    {
        return (Some(name.trim().to_string()), expand(path.trim(), None, home));
    }
    (None, expand(spec.trim(), None, home))
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

fn absolute(p: PathBuf) -> PathBuf {
    if p.is_absolute() { p } else { std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p) }
}

/// Where an absolute path leads on disk, whether or not it exists yet: its longest existing
/// ancestor canonicalised (symlinks and `..` resolved by the kernel), then the rest of it with
/// `.` dropped and `..` taking off the component before it, as `create_dir_all` would make it.
fn on_disk(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(real) = existing.canonicalize() {
            break real;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            // `..` or `.` ending a missing path: kept for the walk below to resolve.
            (Some(parent), None) => {
                rest.push(existing.components().next_back().map_or_else(
                    || std::ffi::OsString::from("."),
                    |c| c.as_os_str().to_os_string(),
                ));
                existing = parent;
            }
            (None, _) => break existing.to_path_buf(),
        }
    };
    let mut out = base;
    for part in rest.iter().rev() {
        match part.to_str() {
            Some(".") => {}
            Some("..") => {
                out.pop();
            }
            _ => out.push(part),
        }
    }
    out
}

/// Expands `~/` and makes a relative path absolute against `base` (or the working directory).
fn expand(path: &str, base: Option<&Path>, home: Option<&Path>) -> PathBuf {
    let p = match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        (None, Some(h)) if path == "~" => h.to_path_buf(),
        _ => PathBuf::from(path),
    };
    match base {
        Some(b) if !p.is_absolute() => b.join(p),
        _ => absolute(p),
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

#[cfg(test)]
pub(crate) mod tests {
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

    pub(crate) fn load_with(
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
        let mut vars: Vec<(String, String)> =
            env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        vars.push(("HOME".into(), dir.path().display().to_string()));
        load(&overrides, &TestEnv(vars))
    }

    #[test]
    fn precedence_defaults_file_env_flags() {
        let file = "vaults:\n  home: /srv/home\n  work: /srv/work\nvault:\n  doc_suffixes: [PDF]\nsearch:\n  default_k: 8\n";
        let c = load_with(Some(file), &[], &[]).unwrap();
        assert_eq!(c.vaults[0], VaultEntry { name: "home".into(), root: "/srv/home".into() });
        assert_eq!(c.vaults.len(), 2);
        assert_eq!(c.vault.doc_suffixes, vec![".pdf"]);
        assert_eq!(c.vault.doc_files_dir, "Files");
        let orphan = load_with(Some("vault:\n  doc_suffixes: [pdf, docx]\n"), &[], &[]);
        let msg = orphan.unwrap_err().to_string();
        assert!(msg.contains("`.docx`") && msg.contains("supported: .pdf"), "{msg}");
        assert_eq!(c.search.default_k, 8);

        let env = [
            ("MDVAULT_VAULTS", "a=/x,/y/notes"),
            ("MDVAULT_VAULT__DOC_SUFFIXES", "pdf"),
            ("MDVAULT_SEARCH__DEFAULT_K", "3"),
            ("MDVAULT_SEARCH__EXCLUDE_DIRS", "Workflows, Reports/"),
        ];
        let c = load_with(Some(file), &env, &[]).unwrap();
        assert_eq!(c.vaults.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["a", "notes"]);
        assert_eq!(c.vault.doc_suffixes, vec![".pdf"]);
        assert_eq!(c.search.default_k, 3);
        assert_eq!(c.search.exclude_dirs, ["Workflows", "Reports"]);

        let c = load_with(Some(file), &[("MDVAULT_VAULTS", r"w=/n/Work\, 2026 , /y/b\\c")], &[])
            .unwrap();
        let roots: Vec<&Path> = c.vaults.iter().map(|v| v.root.as_path()).collect();
        assert_eq!(roots, [Path::new("/n/Work, 2026"), Path::new(r"/y/b\c")]);
        for raw in [r"w=/n/Work, 2026", r"/a\b,c\", "plain"] {
            assert_eq!(split_vault_list(&escape_vault_entry(raw)), [raw.trim()], "{raw}");
        }

        let c = load_with(Some(file), &[("MDVAULT_VAULTS", "a=/x")], &["/z/Mine"]).unwrap();
        assert_eq!(c.vaults, vec![VaultEntry { name: "Mine".into(), root: "/z/Mine".into() }]);
    }

    #[test]
    fn refuses_unknown_keys_keys_in_file_and_missing_named_file() {
        let e = load_with(Some("vault:\n  doc_sufixes: pdf\n"), &[], &[]).unwrap_err();
        assert!(e.0.contains("doc_sufixes"), "{e}");
        let e = load_with(None, &[("MDVAULT_SEARCH__DEFAULTK", "3")], &[]).unwrap_err();
        assert!(e.0.contains("defaultk"), "{e}");
        let e = load_with(None, &[("MDVAULT_NONSENSE__KEY", "3")], &[]).unwrap_err();
        assert!(e.0.contains("nonsense"), "{e}");
        let e = load_with(None, &[("MDVAULT_SEARCH__DEFAULT_K", "many")], &[]).unwrap_err();
        assert!(e.0.contains("default_k"), "{e}");
        assert!(
            load_with(Some("api_key: abc\n"), &[], &[]).unwrap_err().0.contains("MDVAULT_API_KEY")
        );
        assert!(
            load_with(Some("server:\n  api_key: abc\n"), &[], &[])
                .unwrap_err()
                .0
                .contains("MDVAULT_API_KEY")
        );
        let missing =
            Overrides { config_file: Some("/nonexistent/c.yaml".into()), ..Overrides::default() };
        assert!(load(&missing, &TestEnv(vec![("HOME".into(), "/tmp".into())])).is_err());
        assert!(load_with(None, &[], &["a=/x", "a=/y"]).is_err());
        assert!(
            load_with(Some("embedding:\n  backend: http\n"), &[], &[])
                .unwrap_err()
                .0
                .contains("dims")
        );
    }

    #[test]
    fn a_vault_may_carry_its_own_default_k() {
        let file = "vaults:\n  notes:\n    path: /srv/notes\n    default_k: 8\n  work: /srv/work\n";
        let c = load_with(Some(file), &[], &[]).unwrap();
        assert_eq!(c.vaults[0].root, PathBuf::from("/srv/notes"));
        assert_eq!(c.search.vault_k.get("notes"), Some(&8));
        assert_eq!(c.search.vault_k.get("work"), None);
        for (bad, says) in [
            ("vaults:\n  n:\n    default_k: 8\n", "vaults.n.path"),
            ("vaults:\n  n:\n    path: /n\n    default_k: 0\n", "vaults.n.default_k"),
            ("vaults:\n  n:\n    path: /n\n    k: 3\n", "vaults.n.k is not"),
            ("vaults:\n  n: 3\n", "vaults.n must be"),
        ] {
            let e = load_with(Some(bad), &[], &[]).unwrap_err();
            assert!(e.0.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn data_dir_follows_xdg_and_stays_out_of_vaults() {
        let c = load_with(None, &[("XDG_DATA_HOME", "/d")], &[]).unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/d/mdvault"));
        assert_eq!(
            c.embedding.backend,
            EmbeddingBackend::Local { model_dir: "/d/mdvault/models/all-MiniLM-L6-v2".into() }
        );
        let c = load_with(None, &[("MDVAULT_DATA_DIR", "/e")], &[]).unwrap();
        assert_eq!(c.data_dir, PathBuf::from("/e"));
        assert!(load_with(None, &[("MDVAULT_DATA_DIR", "/v/.mdvault")], &["/v"]).is_err());
    }

    #[test]
    fn a_data_directory_that_reaches_into_a_vault_by_dots_or_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path().join("vault");
        std::fs::create_dir(&vault).unwrap();
        std::os::unix::fs::symlink(&vault, dir.path().join("link")).unwrap();
        let spec = format!("notes={}", vault.display());
        let load = |data: &str| {
            let data = dir.path().join(data).display().to_string();
            load_with(None, &[("MDVAULT_DATA_DIR", data.as_str())], &[spec.as_str()])
        };
        // `missing` does not exist, so only the path's meaning on disk can tell.
        for inside in ["missing/../vault/.idx", "link/.idx", "vault/./a/b", "link"] {
            let e = load(inside).unwrap_err().to_string();
            assert!(e.contains("overlap") && e.contains("MDVAULT_DATA_DIR"), "{inside}: {e}");
        }
        // Beside the vault, or in a folder whose name only starts like it, is fine.
        for outside in ["missing/../data", "vault-data/idx", "link/../data"] {
            assert!(load(outside).is_ok(), "{outside}");
        }
    }

    #[test]
    fn the_example_file_is_the_whole_surface_at_its_defaults() {
        let example = include_str!("../../config.example.yaml");
        let env = [("MDVAULT_DATA_DIR", "/data")];
        let with_file = load_with(Some(example), &env, &[]).unwrap();
        let without = load_with(None, &env, &[]).unwrap();
        // Only the file's own path differs.
        assert_eq!(Config { file: None, ..with_file }, without);
        // Every section the code reads appears in the example.
        for section in [
            "vaults:",
            "vault:",
            "embedding:",
            "chunking:",
            "search:",
            "rerank:",
            "index:",
            "watch:",
            "maintenance:",
            "callouts:",
            "server:",
        ] {
            assert!(
                example.contains(&format!("\n{section}")),
                "config.example.yaml lacks {section}"
            );
        }
    }
}
