//! `bench`'s figures for the dense scan at a scale point: the scan alone over
//! [`QUERIES`] queries, exact (the 4-bit pass, and the int8 pass beside it) and with the sign
//! codes picking candidates (each with its
//! recall@10 against the exact top ten), and the peak memory while [`SEARCHERS`] searchers
//! search at once.

use std::collections::HashSet;
use std::time::Instant;

use super::Failure;
use super::bench::{Corpus, ms, percentile};
use super::memory::{self, memory_mib, reset_peak};
use crate::embed::hashing::HashingEmbedder;
use crate::engine::Engine;
use crate::index::dense::{RowKey, Scan};
use crate::search::SearchRequest;
use crate::wire::{BenchScan, BenchSignScan};

/// Queries the scan is timed on and its recall measured over.
pub(super) const QUERIES: usize = 1000;
/// Candidate counts the sign scan is measured with (those below the row count).
const CANDIDATES: [usize; 3] = [2_000, 10_000, 50_000];
/// Searchers at once for the concurrent peak.
pub(super) const SEARCHERS: usize = 8;
/// Searches each of them makes.
const SEARCHES_EACH: usize = 20;

/// What this module measures at one scale point.
pub(super) struct Figures {
    /// The peak resident MiB while [`SEARCHERS`] searched at once.
    pub(super) concurrent_peak: f64,
    /// What loading the model added to anonymous memory (MiB).
    pub(super) model_mib: f64,
    /// Resident memory after they did, by part (MiB).
    pub(super) memory: Vec<(String, f64)>,
    /// The scan alone, where the index has a vectors file.
    pub(super) scan: Option<BenchScan>,
}

/// Several searchers at once (their peak, and the memory split after them), then the scan
/// alone. In that order: the scan figures touch the sign codes, which the default exact scan
/// never reads, so the memory figures are a server's searching this index. `root` is the
/// scale point's folder, which the report's file names are shown relative to.
pub(super) fn measure(
    engine: &Engine,
    dims: usize,
    model_mib: f64,
    root: &std::path::Path,
) -> Result<Figures, Failure> {
    reset_peak();
    concurrent(engine, dims)?;
    let (concurrent_peak, _) = memory_mib();
    let memory = memory::report(root);
    Ok(Figures { concurrent_peak, model_mib, memory, scan: scan(engine, dims) })
}

/// Query texts and their vectors in the index's own space: the hashing embedder's, which made
/// the synthetic rows (a nearest neighbour means something only among one model's vectors).
fn queries(dims: usize, n: usize) -> Vec<(String, Vec<f32>)> {
    let embedder = HashingEmbedder::new(dims);
    let mut corpus = Corpus::new();
    (0..n)
        .map(|_| {
            let q = corpus.query();
            let v = embedder.embed(&[q.as_str()]).swap_remove(0);
            (q, v)
        })
        .collect()
}

/// The scan alone, exact (the 4-bit pass, then the int8 pass over every row beside it) and
/// with each candidate count, or `None` when the index has no vectors file (every row in
/// memory).
fn scan(engine: &Engine, dims: usize) -> Option<BenchScan> {
    let index = engine.index();
    let dense = index.dense();
    let bytes = dense.scanned_bytes()?;
    let rows = dense.base_rows();
    let queries = queries(dims, QUERIES);
    let keep = |_: &RowKey| true;
    // Each query's top ten under `scan`, and the p50 and p95 of the times.
    let timed = |scan: Scan| {
        let mut times = Vec::new();
        let tops: Vec<Vec<(i64, f32)>> = queries
            .iter()
            .map(|(_, v)| {
                let t = Instant::now();
                let top = dense.top_with(v, 10, &keep, scan);
                times.push(ms(t.elapsed()));
                top
            })
            .collect();
        times.sort_by(f64::total_cmp);
        (tops, percentile(&times, 0.5), percentile(&times, 0.95))
    };
    let (exact, exact_p50_ms, exact_p95_ms) = timed(Scan::Exact);
    let (int8, int8_p50_ms, int8_p95_ms) = timed(Scan::Int8);
    let same_top_10 = exact.iter().zip(&int8).filter(|(a, b)| a == b).count();
    let exact: Vec<HashSet<i64>> =
        exact.into_iter().map(|top| top.into_iter().map(|t| t.0).collect()).collect();
    let mut sign = Vec::new();
    for candidates in CANDIDATES.into_iter().filter(|c| *c < rows) {
        let (tops, p50_ms, p95_ms) = timed(Scan::Sign { candidates });
        let (mut found, mut wanted) = (0, 0);
        for (got, want) in tops.iter().zip(&exact) {
            found += got.iter().filter(|t| want.contains(&t.0)).count();
            wanted += want.len();
        }
        sign.push(BenchSignScan {
            candidates,
            p50_ms,
            p95_ms,
            recall_at_10: if wanted == 0 { 1.0 } else { found as f64 / wanted as f64 },
            bytes: bytes.signs + candidates * dims,
        });
    }
    Some(BenchScan {
        queries: QUERIES,
        exact_p50_ms,
        exact_p95_ms,
        exact_bytes: bytes.nibbles,
        int8_p50_ms,
        int8_p95_ms,
        int8_bytes: bytes.int8,
        same_top_10,
        sign,
    })
}

/// [`SEARCHERS`] threads making hybrid searches at once.
fn concurrent(engine: &Engine, dims: usize) -> Result<(), Failure> {
    let queries = queries(dims, SEARCHERS * SEARCHES_EACH);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..SEARCHERS)
            .map(|t| {
                let queries = &queries;
                scope.spawn(move || -> Result<(), Failure> {
                    for (q, v) in queries.iter().skip(t).step_by(SEARCHERS) {
                        let mut req = SearchRequest::new(q);
                        req.query_vector = Some(v.clone());
                        engine.search(&req)?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })
}

/// " (target at 1M: …)" beside a figure at a scale point of about a million chunks, where
/// issue 37 set its targets; nothing elsewhere.
pub(super) fn target(chunks: usize, what: &str) -> String {
    if chunks >= 900_000 { format!(" [target at 1M: {what}]") } else { String::new() }
}

/// The figures as lines.
pub(super) fn lines(chunks: usize, f: &Figures) -> Vec<String> {
    let mut out = f.scan.as_ref().map_or_else(Vec::new, |s| scan_lines(chunks, s));
    out.push(format!(
        "{chunks:>7} chunks: peak RSS {:.0} MiB with {SEARCHERS} concurrent searchers{}; then {}",
        f.concurrent_peak,
        target(chunks, "≤ 1,536 MiB"),
        memory::line(&f.memory, f.model_mib)
    ));
    out
}

fn scan_lines(chunks: usize, s: &BenchScan) -> Vec<String> {
    let mb = |b: usize| b as f64 / 1e6;
    let mut out = vec![
        format!(
            "{chunks:>7} chunks: dense scan alone (top 10, {} queries in the index's own vectors): exact p50 {:.1} ms / p95 {:.1} ms, reading {:.0} MB a query in full{}",
            s.queries,
            s.exact_p50_ms,
            s.exact_p95_ms,
            mb(s.exact_bytes),
            target(chunks, "p50 ≤ 12 ms with recall@10 1.000")
        ),
        format!(
            "{chunks:>7} chunks: beside it the int8 pass over every row (the exact scan before the 4-bit pass): p50 {:.1} ms / p95 {:.1} ms, reading {:.0} MB a query; the same top ten, ids and scores, for {} of {} queries",
            s.int8_p50_ms,
            s.int8_p95_ms,
            mb(s.int8_bytes),
            s.same_top_10,
            s.queries
        ),
    ];
    for x in &s.sign {
        out.push(format!(
            "{chunks:>7} chunks: dense scan with sign codes picking {} candidates: p50 {:.1} ms / p95 {:.1} ms, reading {:.0} MB a query; recall@10 against exact {:.3}{}",
            x.candidates,
            x.p50_ms,
            x.p95_ms,
            mb(x.bytes),
            x.recall_at_10,
            target(chunks, "p50 ≤ 12 ms with recall@10 1.000; exact stays the default below 1.000")
        ));
    }
    out
}
