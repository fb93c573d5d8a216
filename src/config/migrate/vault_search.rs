//! What `mdvault migrate` makes of vault-search's setup: its `vaults.json` becomes the vaults,
//! and its variables (and the EmbeddingGemma prompts, k and skipped folder it built in) become
//! mdvault settings. The rows and settings go into the [`Plan`] `migrate` builds.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    Layer, Outcome, Plan, Row, SAME_DEFAULT, Setting, VAULT_SEARCH, mdvault_defaults,
    push_if_needed, scalar,
};
use crate::config::{ConfigError, Env, err};

/// vault-search's results per query when the caller did not say.
const VAULT_SEARCH_DEFAULT_K: u64 = 8;
/// The vector length of EmbeddingGemma, the model vault-search was built and tested with; its
/// setup never recorded one, so the migration assumes this and says so.
const EMBEDDINGGEMMA_DIMS: u64 = 768;
/// EmbeddingGemma's asymmetric prompts as vault-search sent them: a task line before queries,
/// and a title/text template around documents.
const EMBEDDINGGEMMA_QUERY_PREFIX: &str = "task: search result | query: ";
const EMBEDDINGGEMMA_DOCUMENT_TEMPLATE: &str = "title: {title} | text: {text}";

/// Reads vault-search's setup into `plan`.
pub(super) fn plan(
    plan: &mut Plan,
    text: &str,
    base: Option<&Path>,
    env: &dyn Env,
) -> Result<(), ConfigError> {
    vault_search_vaults(plan, text, base, env)?;
    vault_search_embedder(plan, env);
    vault_search_reranker(plan, env);
    vault_search_built_ins(plan);
    Ok(())
}

/// One table row.
fn row(old: &str, layer: Layer, value: &str, new: &str, outcome: Outcome, why: &str) -> Row {
    Row { old: old.into(), layer, value: value.into(), new: new.into(), outcome, why: why.into() }
}

/// A vault-search variable as it read it: the environment's value, else its default.
fn vault_search_var(env: &dyn Env, name: &str) -> (Layer, String) {
    match env.var(name) {
        Some(v) => (Layer::Env, v),
        None => {
            let default = VAULT_SEARCH.iter().find(|(v, _)| *v == name).map_or("", |d| d.1);
            (Layer::Default, default.to_string())
        }
    }
}

/// `vaults.json`: each name and folder, one vault each.
fn vault_search_vaults(
    plan: &mut Plan,
    text: &str,
    base: Option<&Path>,
    env: &dyn Env,
) -> Result<(), ConfigError> {
    let source = plan.source.clone().unwrap_or_default();
    let home = env.var("HOME").map(PathBuf::from);
    let Ok(Value::Object(vaults)) = serde_json::from_str::<Value>(text) else {
        return Err(err(format!(
            "{} is not a JSON object of vault names and folders, like {{\"notes\": \
             \"~/Notes\"}}",
            source.display()
        )));
    };
    for (name, path) in &vaults {
        let Value::String(path) = path else {
            return Err(err(format!("{}: vault {name:?} must be a folder path", source.display())));
        };
        let root = crate::config::expand(path.trim(), base, home.as_deref());
        plan.rows.push(Row {
            old: format!("vaults.json: {name}"),
            layer: Layer::File,
            value: path.clone(),
            new: format!("vaults.{name}"),
            outcome: Outcome::Mapped,
            why: String::new(),
        });
        plan.settings.push(Setting::new("vaults", name, Value::String(root.display().to_string())));
    }
    Ok(())
}

/// The old index file (not carried), and the embedding endpoint with EmbeddingGemma's width
/// and prompts, which vault-search built in.
fn vault_search_embedder(plan: &mut Plan, env: &dyn Env) {
    let (layer, db) = vault_search_var(env, "VAULT_SEARCH_DB");
    plan.rows.push(row(
        "VAULT_SEARCH_DB",
        layer,
        &db,
        "MDVAULT_DATA_DIR",
        Outcome::NotCarried,
        "mdvault builds its own index (a different format) under its data directory; the \
         first index run rebuilds it and the old file can be deleted",
    ));

    let (layer, url) = vault_search_var(env, "VAULT_EMBED_URL");
    plan.rows.push(row(
        "VAULT_EMBED_URL",
        layer,
        &url,
        "embedding.backend: http + embedding.url",
        Outcome::Mapped,
        "",
    ));
    plan.settings.push(Setting::new("embedding", "backend", "http".into()));
    plan.settings.push(Setting::new("embedding", "url", Value::String(url.trim().to_string())));
    plan.rows.push(row(
        "(built in) EmbeddingGemma's vector length",
        Layer::Default,
        &EMBEDDINGGEMMA_DIMS.to_string(),
        "embedding.dims",
        Outcome::Changed,
        "mdvault checks the width; 768 assumes EmbeddingGemma, change it for another model",
    ));
    plan.settings.push(Setting::new("embedding", "dims", EMBEDDINGGEMMA_DIMS.into()));
    plan.rows.push(row(
        "(built in) query prompt",
        Layer::Default,
        EMBEDDINGGEMMA_QUERY_PREFIX,
        "embedding.query_prefix",
        Outcome::Mapped,
        "",
    ));
    plan.settings.push(Setting::new(
        "embedding",
        "query_prefix",
        EMBEDDINGGEMMA_QUERY_PREFIX.into(),
    ));
    plan.rows.push(row(
        "(built in) document prompt",
        Layer::Default,
        EMBEDDINGGEMMA_DOCUMENT_TEMPLATE,
        "embedding.document_prefix",
        Outcome::Mapped,
        "a template: {title} is the note's title, {text} the chunk",
    ));
    plan.settings.push(Setting::new(
        "embedding",
        "document_prefix",
        EMBEDDINGGEMMA_DOCUMENT_TEMPLATE.into(),
    ));
}

/// The reranker and its two figures.
fn vault_search_reranker(plan: &mut Plan, env: &dyn Env) {
    // Only a reranker the user pointed vault-search at is carried. Its built-in default
    // (a local port) names a service that may never have run: vault-search fell back in
    // silence when nothing answered there, while mdvault says so on every search.
    let (layer, rerank) = vault_search_var(env, "VAULT_RERANK_URL");
    if layer == Layer::Default {
        plan.rows.push(row(
            "VAULT_RERANK_URL",
            layer,
            &rerank,
            "rerank.url",
            Outcome::NotCarried,
            "not set, so no reranker is configured; if one runs there, set rerank.url to it",
        ));
    } else if rerank.trim().is_empty() {
        plan.rows.push(row(
            "VAULT_RERANK_URL",
            layer,
            "",
            "rerank.url",
            Outcome::Mapped,
            "empty: no reranking, mdvault's default",
        ));
    } else {
        plan.rows.push(row(
            "VAULT_RERANK_URL",
            layer,
            &rerank,
            "rerank.url",
            Outcome::Mapped,
            "like before, search falls back to its own order when the reranker fails",
        ));
        plan.settings.push(Setting::new("rerank", "url", Value::String(rerank.trim().into())));
    }
    let defaults = mdvault_defaults();
    for (name, key) in [
        ("VAULT_RERANK_CANDIDATES", "rerank.candidates"),
        ("VAULT_RERANK_FUSION_K", "rerank.fusion_k"),
    ] {
        let (layer, value) = vault_search_var(env, name);
        let written =
            push_if_needed(plan, &defaults, key, scalar(value.trim()), layer == Layer::Env);
        let why = if written { "" } else { SAME_DEFAULT };
        plan.rows.push(row(name, layer, &value, key, Outcome::Mapped, why));
    }
}

/// What vault-search built in rather than read: its k, its skipped folder, its chunking, its
/// per-note cap, its MCP tools and its stdio server.
fn vault_search_built_ins(plan: &mut Plan) {
    plan.rows.push(row(
        "(built in) k = 8 results",
        Layer::Default,
        "8",
        "search.default_k",
        Outcome::Mapped,
        "",
    ));
    plan.settings.push(Setting::new("search", "default_k", VAULT_SEARCH_DEFAULT_K.into()));
    plan.rows.push(row(
        "(built in) skips node_modules",
        Layer::Default,
        "node_modules",
        "search.exclude_dirs",
        Outcome::Changed,
        "only at a vault's root; dotted folders (.obsidian, .trash, .git) are never indexed",
    ));
    plan.settings.push(Setting::new(
        "search",
        "exclude_dirs",
        Value::Array(vec!["node_modules".into()]),
    ));
    plan.rows.push(row(
        "(built in) ~1,400-character chunks",
        Layer::Default,
        "",
        "chunking.*",
        Outcome::NotCarried,
        "mdvault's heading-aware chunker sizes by tokens (400, about 1,440 characters)",
    ));
    plan.rows.push(row(
        "(built in) at most 2 chunks per note",
        Layer::Default,
        "",
        "search.mmr_lambda",
        Outcome::NotCarried,
        "mdvault keeps results varied with a diversity pass instead of a cap",
    ));
    plan.rows.push(row(
        "MCP tools vault_search, vault_reindex",
        Layer::Default,
        "",
        "vault_search, vault_reindex",
        Outcome::Mapped,
        "same names; vault_search takes query, k, vault and thorough, and answers with a score",
    ));
    plan.rows.push(row(
        "`vault_search.py serve` (stdio MCP)",
        Layer::Default,
        "",
        "mdvault mcp",
        Outcome::Changed,
        "`mdvault serve` is the HTTP server; stdio MCP is `mdvault mcp`",
    ));
}
