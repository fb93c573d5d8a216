//! JSON shapes of `mdvault bench --json` and `bench --load --json`: the benchmark reports,
//! apart from the engine's results (they describe the machine and its timings, not a vault).

use serde::Serialize;

use super::pairs_as_object;

/// `mdvault bench --json`: each part present when it was measured.
#[derive(Debug, Default, Serialize)]
pub(crate) struct BenchReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) machine: Option<BenchMachine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) documents: Option<BenchDocuments>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) embedder: Option<BenchEmbedder>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) indexing: Option<BenchIndexing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) edit_to_searchable_ms: Option<BenchEditToSearchable>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model_load_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scales: Option<Vec<BenchScale>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) real_vault: Option<BenchColdStart>,
    /// Per vault label (`synthetic`, then the real vault's path), in that order.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "upkeep_object")]
    pub(crate) upkeep: Option<Vec<(String, BenchUpkeep)>>,
}

fn upkeep_object<S: serde::Serializer>(
    v: &Option<Vec<(String, BenchUpkeep)>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    pairs_as_object(v.as_deref().unwrap_or_default(), s)
}

#[derive(Debug, Serialize)]
pub(crate) struct BenchMachine {
    pub(crate) cores: usize,
    pub(crate) os: &'static str,
    pub(crate) arch: &'static str,
}

/// The local embedder alone, and sentence-transformers beside it when asked: its rate at its
/// best batch size, the paired rounds and their median ratio, or (`python`) why it did not run.
#[derive(Debug, Serialize)]
pub(crate) struct BenchEmbedder {
    pub(crate) chunks_per_s: f64,
    pub(crate) query_p50_ms: f64,
    pub(crate) query_p95_ms: f64,
    pub(crate) precision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) python_chunks_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) python: Option<String>,
    /// `[mdvault, sentence-transformers]` chunks/s for each round of alternating passes; the
    /// ratio is the median of their ratios.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) paired: Option<Vec<(f64, f64)>>,
    /// The encoder's arithmetic over its rate above, in GFLOP/s (all threads together).
    pub(crate) gflops: f64,
    /// The tile unit's figures, when the encoder runs on AMX tiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tiles: Option<BenchTiles>,
}

/// The AMX tile unit on one thread (`embed::TileRate`), in GFLOP/s.
#[derive(Debug, Serialize)]
pub(crate) struct BenchTiles {
    /// Tile products alone, operands in registers.
    pub(crate) peak: f64,
    /// The dense kernel per product shape, named `<inputs>x<outputs>`.
    #[serde(serialize_with = "pairs_as_object")]
    pub(crate) kernels: Vec<(String, f64)>,
}

#[derive(Debug, Serialize)]
pub(crate) struct BenchIndexing {
    pub(crate) chunks: usize,
    pub(crate) seconds: f64,
    pub(crate) chunks_per_s: f64,
}

#[derive(Debug, Serialize)]
pub(crate) struct BenchEditToSearchable {
    pub(crate) p50: f64,
    pub(crate) max: Option<f64>,
}

/// One synthetic scale point.
#[derive(Debug, Serialize)]
pub(crate) struct BenchScale {
    pub(crate) chunks: usize,
    pub(crate) hybrid_p50_ms_with_embedding: f64,
    pub(crate) hybrid_p95_ms_with_embedding: f64,
    pub(crate) hybrid_p50_ms_without_embedding: f64,
    pub(crate) hybrid_p95_ms_without_embedding: f64,
    pub(crate) build_seconds: f64,
    pub(crate) warm_start_ms: f64,
    pub(crate) peak_rss_mib: f64,
    pub(crate) rss_mib: f64,
    pub(crate) build_peak_rss_mib: f64,
    pub(crate) search_peak_rss_mib: f64,
    pub(crate) reused: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scan: Option<BenchScan>,
    /// With `concurrent_searchers` searching at once: the peak, then resident MiB by part.
    pub(crate) concurrent_peak_rss_mib: f64,
    pub(crate) concurrent_searchers: usize,
    pub(crate) memory: Vec<(String, f64)>,
    /// The first searches after the index's files were evicted from the page cache (`--cold`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cold: Option<BenchCold>,
}

/// The first searches of an index opened after its files were evicted from the page cache
/// (`bytes` of files; `resident_*`: how many of them were cached before and after).
#[derive(Debug, Serialize)]
pub(crate) struct BenchCold {
    pub(crate) bytes: u64,
    pub(crate) resident_before: u64,
    pub(crate) resident_after: u64,
    pub(crate) open_ms: f64,
    pub(crate) first_ms: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p95_ms: f64,
    pub(crate) searches: usize,
}

/// The dense scan alone, exact and with sign codes (`bytes`: read in full per query).
#[derive(Debug, Serialize)]
pub(crate) struct BenchScan {
    pub(crate) queries: usize,
    pub(crate) exact_p50_ms: f64,
    pub(crate) exact_p95_ms: f64,
    pub(crate) exact_bytes: usize,
    /// The int8 pass over every row (the exact scan before the 4-bit pass), timed beside it.
    pub(crate) int8_p50_ms: f64,
    pub(crate) int8_p95_ms: f64,
    pub(crate) int8_bytes: usize,
    /// Queries whose top ten, ids and scores in order, both exact scans gave alike.
    pub(crate) same_top_10: usize,
    pub(crate) sign: Vec<BenchSignScan>,
}

#[derive(Debug, Serialize)]
pub(crate) struct BenchSignScan {
    pub(crate) candidates: usize,
    pub(crate) p50_ms: f64,
    pub(crate) p95_ms: f64,
    pub(crate) recall_at_10: f64,
    pub(crate) bytes: usize,
}

/// `bench --real-vault`: cold and warm starts of a server over a copy of a real vault.
#[derive(Debug, Serialize)]
pub(crate) struct BenchColdStart {
    pub(crate) path: String,
    pub(crate) chunks: u64,
    pub(crate) vectors: u64,
    pub(crate) cold_first_answer_s: f64,
    pub(crate) cold_ready_s: f64,
    pub(crate) chunks_per_s: f64,
    pub(crate) warm_first_answer_s: f64,
    pub(crate) warm_ready_s: f64,
    pub(crate) rest_p50_ms: f64,
    pub(crate) rest_p95_ms: f64,
    pub(crate) store_bytes: u64,
}

/// The upkeep passes over one vault.
#[derive(Debug, Serialize)]
pub(crate) struct BenchUpkeep {
    pub(crate) notes: usize,
    pub(crate) index_md_first_ms: f64,
    pub(crate) index_md_unchanged_ms: f64,
    pub(crate) index_md_edit_p50_ms: f64,
    pub(crate) index_md_body_edit_p50_ms: f64,
    pub(crate) checks_ms: f64,
    pub(crate) findings: usize,
    pub(crate) callouts_ms: f64,
    pub(crate) expiries_ms: f64,
}

/// Document extraction: generated pages through the text layer and OCR, and any real PDFs.
#[derive(Debug, Serialize)]
pub(crate) struct BenchDocuments {
    pub(crate) text_pages_per_s: f64,
    pub(crate) text_pages: usize,
    pub(crate) ocr: BenchOcr,
    pub(crate) files: Vec<BenchPdf>,
}

/// OCR's figures, or why it could not run.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum BenchOcr {
    Unavailable { unavailable: String },
    Measured { pages_per_s: f64, pages: usize, word_recall: f64 },
}

/// One `--pdf` file; `word_recall` is null without `pdftotext`.
#[derive(Debug, Serialize)]
pub(crate) struct BenchPdf {
    pub(crate) path: String,
    pub(crate) status: &'static str,
    pub(crate) pages: u32,
    pub(crate) chars: usize,
    pub(crate) headings: usize,
    pub(crate) seconds: f64,
    pub(crate) word_recall: Option<f64>,
}

/// `mdvault bench --load --json`.
#[derive(Debug, Serialize)]
pub(crate) struct LoadReport {
    pub(crate) load: Load,
}

#[derive(Debug, Serialize)]
pub(crate) struct Load {
    pub(crate) url: String,
    pub(crate) searchers: usize,
    pub(crate) writers: usize,
    pub(crate) distinct_queries: bool,
    pub(crate) seconds: f64,
    /// Per kind of request (`search`, `put`, `append`).
    #[serde(serialize_with = "pairs_as_object")]
    pub(crate) kinds: Vec<(String, LoadKind)>,
    pub(crate) errors: usize,
    /// How far each write's re-index had got when it answered, counted by `indexed` value.
    pub(crate) indexed: std::collections::BTreeMap<String, usize>,
    pub(crate) acknowledged_writes: usize,
    pub(crate) lost_writes: usize,
    pub(crate) lost: Vec<String>,
    pub(crate) searched: usize,
    pub(crate) found: usize,
    /// With `--while-building`: the index build beside the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) during_build: Option<LoadBuild>,
}

/// The index build a `--while-building` run searched beside: its vectors before and after.
#[derive(Debug, Serialize)]
pub(crate) struct LoadBuild {
    pub(crate) vectors_before: u64,
    pub(crate) vectors_after: u64,
    pub(crate) finished: bool,
}

/// One kind of request under load: counts by HTTP status, and latency in milliseconds.
#[derive(Debug, Serialize)]
pub(crate) struct LoadKind {
    pub(crate) requests: usize,
    pub(crate) per_second: f64,
    pub(crate) status: std::collections::BTreeMap<String, usize>,
    pub(crate) ms: LoadMs,
}

#[derive(Debug, Serialize)]
pub(crate) struct LoadMs {
    pub(crate) p50: f64,
    pub(crate) p95: f64,
    pub(crate) p99: f64,
    pub(crate) max: f64,
}
