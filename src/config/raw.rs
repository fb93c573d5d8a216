//! The configuration file's shape as it is read: every key optional (the defaults are
//! [`super::load`]'s), unknown keys refused, lists as YAML sequences or comma strings.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::split_commas;

/// A YAML sequence of strings, or one comma-separated string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum StringList {
    List(Vec<String>),
    Comma(String),
}

impl StringList {
    pub(super) fn into_vec(self) -> Vec<String> {
        match self {
            StringList::List(v) => v,
            StringList::Comma(s) => split_commas(&s),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    pub(super) vaults: Option<Map<String, Value>>,
    #[serde(default)]
    pub(super) vault: RawVault,
    #[serde(default)]
    pub(super) embedding: RawEmbedding,
    #[serde(default)]
    pub(super) chunking: RawChunking,
    #[serde(default)]
    pub(super) search: RawSearch,
    #[serde(default)]
    pub(super) rerank: RawRerank,
    #[serde(default)]
    pub(super) index: RawIndex,
    #[serde(default)]
    pub(super) watch: RawWatch,
    #[serde(default)]
    pub(super) maintenance: RawMaintenance,
    #[serde(default)]
    pub(super) callouts: RawCallouts,
    #[serde(default)]
    pub(super) server: RawServer,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    pub(super) listen: Option<String>,
    pub(super) allowed_hosts: Option<StringList>,
    pub(super) allowed_origins: Option<StringList>,
    pub(super) max_body_bytes: Option<u64>,
    pub(super) tls: Option<bool>,
    pub(super) strict_patch_version: Option<bool>,
    pub(super) public_url: Option<String>,
    pub(super) oauth: Option<bool>,
    pub(super) oauth_access_seconds: Option<u64>,
    pub(super) owner_loopback_only: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVault {
    pub(super) doc_suffixes: Option<StringList>,
    pub(super) doc_files_dir: Option<String>,
    pub(super) doc_ocr: Option<bool>,
    pub(super) doc_max_bytes: Option<u64>,
    pub(super) timestamp_key: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEmbedding {
    pub(super) backend: Option<String>,
    pub(super) model_dir: Option<String>,
    pub(super) url: Option<String>,
    pub(super) model: Option<String>,
    pub(super) dims: Option<usize>,
    pub(super) batch_size: Option<usize>,
    pub(super) max_attempts: Option<u32>,
    pub(super) backoff_seconds: Option<f64>,
    pub(super) backoff_max_seconds: Option<f64>,
    pub(super) query_prefix: Option<String>,
    pub(super) document_prefix: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChunking {
    pub(super) target_tokens: Option<usize>,
    pub(super) overlap_tokens: Option<usize>,
    pub(super) min_tokens: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSearch {
    pub(super) default_k: Option<usize>,
    pub(super) exclude_dirs: Option<StringList>,
    pub(super) candidates: Option<usize>,
    pub(super) fusion: Option<String>,
    pub(super) rrf_k: Option<f64>,
    pub(super) lexical_weight: Option<f64>,
    pub(super) document_weight: Option<f64>,
    pub(super) mmr_lambda: Option<f64>,
    pub(super) lookup: Option<bool>,
    pub(super) typos: Option<bool>,
    pub(super) max_per_note: Option<usize>,
    pub(super) heading_weight: Option<f64>,
    pub(super) feedback_passages: Option<usize>,
    pub(super) feedback_weight: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRerank {
    pub(super) url: Option<String>,
    pub(super) model: Option<String>,
    pub(super) candidates: Option<usize>,
    pub(super) fusion_k: Option<f64>,
    pub(super) thorough_candidates: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIndex {
    pub(super) exclude_dirs: Option<StringList>,
    pub(super) build_max_attempts: Option<u32>,
    pub(super) build_retry_seconds: Option<f64>,
    pub(super) reconcile_seconds: Option<f64>,
    pub(super) index_md: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMaintenance {
    pub(super) python: Option<String>,
    pub(super) timeout_seconds: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCallouts {
    pub(super) open_types: Option<StringList>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWatch {
    pub(super) debounce_seconds: Option<f64>,
}
