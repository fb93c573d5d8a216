//! `mdvault bench`: performance figures measured on this machine.
//!
//! It prints, and never asserts: embedder throughput (optionally against sentence-transformers
//! on the same texts and threads), indexing throughput with the local model, hybrid search
//! latency at synthetic scale points with the query embedding included and excluded, the dense
//! scan alone with its sign-code option's recall (`scan.rs`), warm start, edit-to-searchable
//! time, peak memory and resident memory by part (`memory.rs`), PDF extraction throughput (text layer and
//! OCR), and the upkeep passes (index.md, checks, callouts, expiries) over a synthetic vault. Synthetic corpora are generated, indexed
//! with the model-free hashing embedder (embedding 100k real chunks would take hours; search
//! costs the same whatever made the vectors), and deleted afterwards.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::Args;
use serde_json::Value;

use super::memory::{self, memory_mib, reset_peak};
use super::{Failure, print, print_json};
use crate::config::{Config, EmbeddingBackend};
use crate::docs::{self, ExtractSettings, Extractor};
use crate::embed::Embedder;
use crate::embed::hashing::HashingEmbedder;
use crate::embed::local::LocalEmbedder;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::index::Silent;
use crate::search::SearchRequest;
use crate::wire::{
    BenchDocuments, BenchEditToSearchable, BenchEmbedder, BenchIndexing, BenchMachine, BenchOcr,
    BenchPdf, BenchReport, BenchScale, BenchTiles, BenchUpkeep,
};

/// `mdvault bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Synthetic scale points, in chunks.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    scales: Vec<usize>,
    /// Queries timed per scale point.
    #[arg(long, default_value_t = 60)]
    queries: usize,
    /// Also serve this real vault (a copy) from nothing with the local model, then restart it:
    /// the first search answer and the full index, cold and warm (slow: about 100 chunks per
    /// second on two cores).
    #[arg(long, value_name = "PATH")]
    real_vault: Option<PathBuf>,
    /// Compare the local embedder with sentence-transformers (needs `pip install
    /// sentence-transformers`).
    #[arg(long)]
    compare_python: bool,
    /// Also extract this PDF and report its pages/s and its word recall against `pdftotext`;
    /// repeat for several.
    #[arg(long, value_name = "FILE")]
    pdf: Vec<PathBuf>,
    /// Measure document extraction only (text and OCR pages/s, and any --pdf files).
    #[arg(long)]
    documents_only: bool,
    /// Measure the upkeep features only (index.md, checks, callouts, expiries) on a synthetic
    /// vault of `--upkeep-notes` notes, and on --real-vault (a copy of it) when given.
    #[arg(long)]
    upkeep_only: bool,
    /// Notes in the synthetic vault the upkeep figures are measured on.
    #[arg(long, default_value_t = 10_000)]
    upkeep_notes: usize,
    /// Measure the synthetic scale points only (skip the embedder, indexing, documents and
    /// upkeep figures).
    #[arg(long)]
    scales_only: bool,
    /// Build the scale points' vaults and indexes under this folder and keep them; a later
    /// run with the same folder reuses them (its build time is then an unchanged pass), so a
    /// change to search or start-up can be measured without rebuilding a million chunks.
    #[arg(long, value_name = "DIR")]
    scale_dir: Option<PathBuf>,
    /// At each scale point, last, evict the index's files from the page cache and time an
    /// index opened afresh and its first searches. Opt-in: it leaves the files out of the
    /// cache, so the next run's warm figures would start cold.
    #[arg(long)]
    cold: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    load: super::load::LoadArgs,
}

pub(super) fn fail(msg: impl Into<String>) -> Failure {
    Failure::Refused(Error::new(ErrorCode::InternalError, msg.into()))
}

/// A small deterministic generator, so every run measures the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Pseudo-English: a vocabulary of invented words drawn with a Zipf-like skew, plus the odd
/// identifier, so both arms have realistic work.
pub(super) struct Corpus {
    words: Vec<String>,
    cumulative: Vec<f64>,
    rng: Rng,
}

impl Corpus {
    pub(super) fn new() -> Corpus {
        // Everyday English nouns, so the model tokenises queries as it would real ones (one word
        // piece per word); rarer invented words stretch the vocabulary's long tail.
        const COMMON: &str = concat!(
            "account address advice airport allowance anchor answer apple appointment april archive ",
            "area arrival article autumn balance bank basket battery bedroom bicycle bill birthday ",
            "blanket boiler book border bottle branch bread breakfast bridge budget building bus ",
            "cabinet cable calendar camera campaign candle capital car card carpet castle cellar ",
            "certificate chair change charge check cheese child chimney church city claim class cleaner ",
            "client clock cloud coach coast coffee collar colour company computer contract cooker ",
            "corner cottage council country course cover credit crop cupboard customer cycle damage ",
            "date daughter deadline deal debt decision delivery dentist deposit design desk detail ",
            "diary dinner director discount doctor document door drain drawer driver engine entry ",
            "estate evening event exam expense factory family farm fee fence ferry field file filter ",
            "finance fire floor flower folder food forest form fridge friend fuel furnace garage garden ",
            "gate gift glass goal grant grass guest habit hall harbour health heater hedge history ",
            "holiday home hospital hotel hour house insurance interest invoice island item jacket ",
            "journey kettle key kitchen ladder lake lamp land laptop lawn lease lecture ledger lesson ",
            "letter library licence light limit list loan lock lunch machine manager map market meal ",
            "meeting member memory meter method mileage minute mirror model month morning mortgage ",
            "motor mountain museum neighbour network news night note notice number nurse office oil ",
            "order oven owner package page paint panel parcel parent park parking partner passport ",
            "password path payment pension people permit phone photo piano picture pipe plan plant ",
            "plate policy pool post pound power premium price printer problem profit project property ",
            "provider pump quarter radiator rail rate receipt record refund region rent repair report ",
            "request reserve result river road roof room route router salary sale school season seat ",
            "server service session share shed shelf shop shower signal sister site skill sofa software ",
            "soil spring staff stairs station statement storage storm street student studio subject ",
            "summer supplier supply survey switch table tariff tax teacher team tenant term test ticket ",
            "timber timer tool tooth tour town track trade train transfer tree trip truck tyre unit ",
            "valve van vehicle village visit voucher wage wall wallet warranty washer water weather ",
            "week weekend window winter wire worker workshop year yard "
        );
        let syllables =
            ["ka", "ri", "to", "men", "sal", "or", "ve", "lin", "dra", "po", "qui", "ser"];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut words: Vec<String> = COMMON.split_whitespace().map(String::from).collect();
        let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
        while words.len() < 6000 {
            let n = 2 + rng.below(3);
            let w: String = (0..n).map(|_| syllables[rng.below(syllables.len())]).collect();
            if seen.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=words.len())
            .map(|r| {
                total += 1.0 / r as f64;
                total
            })
            .collect();
        Corpus { words, cumulative, rng }
    }

    fn word(&mut self) -> &str {
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let x = (self.rng.next() as f64 / u64::MAX as f64) * total;
        let i = self.cumulative.partition_point(|c| *c < x).min(self.words.len() - 1);
        &self.words[i]
    }

    fn sentence(&mut self) -> String {
        let n = 8 + self.rng.below(10);
        let mut s: Vec<String> = (0..n).map(|_| self.word().to_string()).collect();
        if self.rng.below(12) == 0 {
            s.push(format!("AX-{:07}", self.rng.below(10_000_000)));
        }
        let mut out = s.join(" ");
        if let Some(first) = out.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        out.push('.');
        out
    }

    fn paragraph(&mut self, chars: usize) -> String {
        let mut p = String::new();
        while p.len() < chars {
            if !p.is_empty() {
                p.push(' ');
            }
            p.push_str(&self.sentence());
        }
        p
    }

    /// A note that the chunker cuts into five chunks: an introduction and four sections.
    fn note(&mut self, title: &str) -> String {
        let mut text = format!("# {title}\n\n{}\n", self.paragraph(600));
        for s in 1..=4 {
            text.push_str(&format!("\n## Part {s}\n\n{}\n", self.paragraph(1250)));
        }
        text
    }

    pub(super) fn query(&mut self) -> String {
        let n = 2 + self.rng.below(4);
        (0..n).map(|_| self.words[self.rng.below(300)].clone()).collect::<Vec<_>>().join(" ")
    }
}

pub(super) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

pub(super) fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn model_dir(config: &Config) -> Result<PathBuf, Failure> {
    match &config.embedding.backend {
        EmbeddingBackend::Local { model_dir } => Ok(model_dir.clone()),
        _ => Ok(Config::default_model_dir(&config.data_dir)),
    }
}

fn bench_config(base: &Config, vault: &Path, data: &Path, backend: EmbeddingBackend) -> Config {
    let mut c = base.clone();
    c.vaults = vec![crate::config::VaultEntry { name: "bench".into(), root: vault.to_path_buf() }];
    c.data_dir = data.to_path_buf();
    c.embedding.backend = backend;
    c.search.exclude_dirs.clear();
    c.rerank.url.clear();
    c
}

pub(crate) fn run(config: &Config, args: BenchArgs) -> Result<(), Failure> {
    if args.load.wanted() {
        // A server does the work; this process needs neither the model nor the index.
        return super::load::run(config, &args.load, args.json);
    }
    let model = model_dir(config)?;
    let before = memory::anonymous_mib();
    let local = LocalEmbedder::load(&model).map_err(|e| fail(e.to_string()))?;
    // What loading the model added: the memory report names it apart from the heap.
    let model_mib = (memory::anonymous_mib() - before).max(0.0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut report = BenchReport {
        machine: Some(BenchMachine {
            cores: threads,
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        }),
        ..BenchReport::default()
    };
    let say = |line: String| {
        if !args.json {
            print(&line);
        }
    };
    let precision = local.precision();
    // The hint names the reference path only when another one ran.
    let hint = if precision == "f32" { "" } else { " (set MDVAULT_ENCODER=f32 for the reference)" };
    say(format!("machine: {threads} cores; model {}; encoder {precision}{hint}", local.model_id()));

    if args.scales_only {
        report.scales = Some(scale_points(config, &args, &local, model_mib, &say)?);
        return finish(&args, &report);
    }
    if args.upkeep_only {
        report.upkeep = Some(upkeep(config, &args, &say)?);
        return finish(&args, &report);
    }
    report.documents = Some(documents(config, &args, &say)?);
    if args.documents_only {
        return finish(&args, &report);
    }

    // 1. The embedder alone, on 64 paragraphs of about 300 words.
    report.embedder = Some(embedder(&local, &model, threads, args.compare_python, &say)?);

    // 2. Indexing throughput and edit-to-searchable on a small real-looking vault.
    let (indexing, edits) = indexing(config, &model, &say)?;
    report.indexing = Some(indexing);
    report.edit_to_searchable_ms = Some(edits);

    // 3. Scale points: search latency, build time, warm start, memory.
    let scales = scale_points(config, &args, &local, model_mib, &say)?;
    let t = Instant::now();
    let _ = LocalEmbedder::load(&model).map_err(|e| fail(e.to_string()))?;
    let load_ms = ms(t.elapsed());
    say(format!("local model load: {load_ms:.0} ms (add it to a warm start with the local model)"));
    report.model_load_ms = Some(load_ms);
    report.scales = Some(scales);

    if let Some(real) = &args.real_vault {
        report.real_vault = Some(super::coldstart::run(&model, real, &say)?);
    }

    report.upkeep = Some(upkeep(config, &args, &say)?);
    finish(&args, &report)
}

/// Prints the report when `--json` asked for it (the lines went out as they were measured).
fn finish(args: &BenchArgs, report: &BenchReport) -> Result<(), Failure> {
    if args.json {
        print_json(report);
    }
    Ok(())
}

/// The local embedder's throughput (the median of five passes) and one query's latency, and
/// sentence-transformers on the same texts when `with_python` asks.
fn embedder(
    local: &LocalEmbedder,
    model: &Path,
    threads: usize,
    with_python: bool,
    say: &dyn Fn(String),
) -> Result<BenchEmbedder, Failure> {
    let mut corpus = Corpus::new();
    let paragraphs: Vec<String> = (0..64).map(|_| corpus.paragraph(1800)).collect();
    let refs: Vec<&str> = paragraphs.iter().map(String::as_str).collect();
    local.embed(&refs[..8]).map_err(|e| fail(e.to_string()))?;
    // One pass over the paragraphs, in chunks per second: timed alone here, and alternating
    // with sentence-transformers' passes below.
    let pass = || -> Result<f64, String> {
        let t = Instant::now();
        local.embed(&refs).map_err(|e| e.to_string())?;
        Ok(refs.len() as f64 / t.elapsed().as_secs_f64())
    };
    // The median of five passes: one pass is at the mercy of whatever else the machine does.
    let mut rates = (0..5).map(|_| pass()).collect::<Result<Vec<f64>, String>>().map_err(fail)?;
    rates.sort_by(f64::total_cmp);
    let rate = percentile(&rates, 0.5);
    let mut query_ms: Vec<f64> = (0..40)
        .map(|_| {
            let q = corpus.query();
            let t = Instant::now();
            let _ = local.embed(&[q.as_str()]);
            ms(t.elapsed())
        })
        .collect();
    query_ms.sort_by(f64::total_cmp);
    say(format!(
        "embedder: {rate:.1} chunks/s (median of 5 passes over 64 paragraphs of ~300 words, 256-token truncation); one query p50 {:.1} ms, p95 {:.1} ms",
        percentile(&query_ms, 0.5),
        percentile(&query_ms, 0.95)
    ));
    let flops = local.flops(&refs).map_err(|e| fail(e.to_string()))?;
    let gflops = flops * rate / refs.len() as f64 / 1e9;
    say(format!(
        "embedder arithmetic: {gflops:.0} GFLOP/s on {threads} threads ({:.1} GFLOP a text: the dense products and attention's two)",
        flops / refs.len() as f64 / 1e9
    ));
    let mut figures = BenchEmbedder {
        chunks_per_s: rate,
        query_p50_ms: percentile(&query_ms, 0.5),
        query_p95_ms: percentile(&query_ms, 0.95),
        precision: local.precision().to_string(),
        python_chunks_per_s: None,
        ratio: None,
        python: None,
        paired: None,
        gflops,
        tiles: tiles(local, gflops, threads, say),
    };
    if with_python {
        match compare_python(model, &paragraphs, threads, &pass) {
            Ok(paired) => {
                let pairs: Vec<String> =
                    paired.rounds.iter().map(|(a, b)| format!("{a:.1}/{b:.1}")).collect();
                say(format!(
                    "sentence-transformers on the same texts and {threads} threads (its best batch size, median of 5): {:.1} chunks/s; then alternating passes, mdvault/python: {}; mdvault/python = {:.2} (the median of those rounds' ratios)",
                    paired.best,
                    pairs.join(", "),
                    paired.ratio()
                ));
                figures.python_chunks_per_s = Some(paired.best);
                figures.ratio = Some(paired.ratio());
                figures.paired = Some(paired.rounds.clone());
            }
            Err(why) => {
                say(format!("sentence-transformers comparison skipped: {why}"));
                figures.python = Some(why);
            }
        }
    }
    Ok(figures)
}

/// The AMX tile unit's peak and the dense kernel's rate on one thread, beside the encoder's
/// measured arithmetic (`gflops`, all threads): how far from the hardware the encoder runs.
fn tiles(
    local: &LocalEmbedder,
    gflops: f64,
    threads: usize,
    say: &dyn Fn(String),
) -> Option<BenchTiles> {
    #[cfg(target_arch = "x86_64")]
    if let Some(rate) = local.tile_rate() {
        let kernels: Vec<(String, f64)> =
            rate.kernels.iter().map(|&(i, o, g)| (format!("{i}x{o}"), g)).collect();
        let listed: Vec<String> = kernels
            .iter()
            .map(|(shape, g)| format!("{shape} {g:.0} ({:.0}%)", 100.0 * g / rate.peak))
            .collect();
        say(format!(
            "AMX tiles, one thread: products alone {:.0} GFLOP/s; the dense kernel (inputs x outputs, {} rows) {}; the encoder uses {:.0}% of {threads} threads' tile peak",
            rate.peak,
            rate.rows,
            listed.join(", "),
            100.0 * gflops / (rate.peak * threads as f64)
        ));
        return Some(BenchTiles { peak: rate.peak, kernels });
    }
    let _ = (local, gflops, threads, say);
    None
}

/// Indexing throughput with the local model on a small real-looking vault, then the time from
/// an edit to the edited words being found.
fn indexing(
    config: &Config,
    model: &Path,
    say: &dyn Fn(String),
) -> Result<(BenchIndexing, BenchEditToSearchable), Failure> {
    let scratch = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
    let vault = scratch.path().join("vault");
    write_vault(&vault, &mut Corpus::new(), 40).map_err(|e| fail(e.to_string()))?;
    let data = scratch.path().join("data-local");
    let engine = Engine::with_embedder(
        bench_config(
            config,
            &vault,
            &data,
            EmbeddingBackend::Local { model_dir: model.to_path_buf() },
        ),
        Embedder::Local(LocalEmbedder::load(model).map_err(|e| fail(e.to_string()))?),
    )?;
    let t = Instant::now();
    let sync = engine.sync(None, false, &Silent)?;
    let secs = t.elapsed().as_secs_f64();
    let chunks = sync.iter().map(|(_, r)| r.chunks_written).sum::<usize>();
    say(format!(
        "indexing with the local model: {chunks} chunks in {secs:.1} s = {:.1} chunks/s",
        chunks as f64 / secs
    ));
    let indexing = BenchIndexing { chunks, seconds: secs, chunks_per_s: chunks as f64 / secs };

    let mut edit_ms = Vec::new();
    let bench_vault = engine.vaults().get(None)?.clone();
    for n in 0..7 {
        let rel = format!("Area0/Note {n}.md");
        let word = format!("zyxedit{n}quv");
        let path = vault.join(&rel);
        let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
        std::fs::write(&path, format!("{text}\nA late addition mentions {word} once.\n"))
            .map_err(|e| fail(e.to_string()))?;
        let t = Instant::now();
        engine.update(bench_vault.name(), std::slice::from_ref(&rel))?;
        let found =
            engine.search(&SearchRequest::new(&word))?.results.iter().any(|h| h.path == rel);
        let took = ms(t.elapsed());
        if !found {
            return Err(fail(format!("the edit to {rel} was not searchable")));
        }
        edit_ms.push(took);
    }
    edit_ms.sort_by(f64::total_cmp);
    say(format!(
        "edit to searchable (one note re-chunked, changed chunks embedded, committed, found): p50 {:.0} ms, max {:.0} ms",
        percentile(&edit_ms, 0.5),
        edit_ms.last().copied().unwrap_or(0.0)
    ));
    let edits =
        BenchEditToSearchable { p50: percentile(&edit_ms, 0.5), max: edit_ms.last().copied() };
    Ok((indexing, edits))
}

/// The synthetic scale points: search latency with and without the query embedding, build
/// time, warm start and memory, each on a vault of `target` chunks indexed with the hashing
/// embedder (in a temporary folder, or kept under `--scale-dir` for profiling).
fn scale_points(
    config: &Config,
    args: &BenchArgs,
    local: &LocalEmbedder,
    model_mib: f64,
    say: &dyn Fn(String),
) -> Result<Vec<BenchScale>, Failure> {
    let mut scales = Vec::new();
    for &target in &args.scales {
        let notes = target.div_ceil(5);
        let temporary;
        let root = match &args.scale_dir {
            Some(dir) => dir.join(target.to_string()),
            None => {
                temporary = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
                temporary.path().to_path_buf()
            }
        };
        let vault = root.join("vault");
        let data = root.join("data");
        let reused = crate::config::DataDir::new(&data).store().is_file();
        let t = Instant::now();
        if !reused {
            write_vault(&vault, &mut Corpus::new(), notes).map_err(|e| fail(e.to_string()))?;
        }
        let write_s = t.elapsed().as_secs_f64();
        let backend = EmbeddingBackend::Hashing { dims: local.dims() };
        let cfg = bench_config(config, &vault, &data, backend);
        let engine = Engine::with_embedder(
            cfg.clone(),
            Embedder::Hashing(HashingEmbedder::new(local.dims())),
        )?;
        reset_peak();
        let t = Instant::now();
        engine.sync(None, false, &Silent)?;
        let build_s = t.elapsed().as_secs_f64();
        let (build_peak, _) = memory_mib();
        drop(engine);
        // The queries run on an index opened afresh, as a server restarted on it would: the
        // peak they add is what serving this index costs, apart from what building it did.
        reset_peak();
        let engine = Engine::with_embedder(
            cfg.clone(),
            Embedder::Hashing(HashingEmbedder::new(local.dims())),
        )?;
        let (chunks, _) = engine.index().counts();

        let hashing = HashingEmbedder::new(local.dims());
        let mut queries = Corpus::new();
        let mut excluded = Vec::new();
        let mut included = Vec::new();
        for i in 0..args.queries {
            let q = if i % 6 == 5 {
                format!("AX-{:07}", i * 7919 % 10_000_000)
            } else {
                queries.query()
            };
            let t = Instant::now();
            local.embed(&[q.as_str()]).map_err(|e| fail(e.to_string()))?;
            let embed_ms = ms(t.elapsed());
            // The index holds the hashing embedder's vectors, so the query searches with its
            // vector in that space; the local model's embedding above is only timed. (A model
            // vector against hashing rows scores every row near zero, and the scan then
            // rescored rows its bound could not rule out, which no real query does.)
            let mut req = SearchRequest::new(&q);
            req.query_vector = Some(hashing.embed(&[q.as_str()]).swap_remove(0));
            let t = Instant::now();
            engine.search(&req)?;
            let search_ms = ms(t.elapsed());
            excluded.push(search_ms);
            included.push(search_ms + embed_ms);
        }
        excluded.sort_by(f64::total_cmp);
        included.sort_by(f64::total_cmp);
        let (serving_peak, rss) = memory_mib();
        let more = super::scan::measure(&engine, local.dims(), model_mib, &root)?;
        drop(engine);

        let warm = warm_start(&cfg, &data, &vault)?;
        let cold =
            if args.cold { Some(super::cold::measure(&cfg, &data, local.dims())?) } else { None };
        let peak = build_peak.max(serving_peak);
        let built = if reused { "reused, an unchanged pass took" } else { "built in" };
        say(format!(
            "{chunks:>7} chunks: hybrid k=6 p50 {:.1} ms / p95 {:.1} ms with the query embedding, {:.1} / {:.1} ms without; \
             {built} {build_s:.1} s (+{write_s:.1} s writing notes); warm start {warm:.0} ms (+ model load){}; \
             peak RSS {build_peak:.0} MiB building, {serving_peak:.0} MiB opening it afresh and searching",
            percentile(&included, 0.5),
            percentile(&included, 0.95),
            percentile(&excluded, 0.5),
            percentile(&excluded, 0.95),
            super::scan::target(chunks, "≤ 1 s")
        ));
        super::scan::lines(chunks, &more).into_iter().for_each(say);
        if let Some(cold) = &cold {
            say(super::cold::line(chunks, cold));
        }
        scales.push(BenchScale {
            chunks,
            hybrid_p50_ms_with_embedding: percentile(&included, 0.5),
            hybrid_p95_ms_with_embedding: percentile(&included, 0.95),
            hybrid_p50_ms_without_embedding: percentile(&excluded, 0.5),
            hybrid_p95_ms_without_embedding: percentile(&excluded, 0.95),
            build_seconds: build_s,
            warm_start_ms: warm,
            peak_rss_mib: peak,
            rss_mib: rss,
            build_peak_rss_mib: build_peak,
            search_peak_rss_mib: serving_peak,
            reused,
            scan: more.scan,
            memory: more.memory,
            concurrent_peak_rss_mib: more.concurrent_peak,
            concurrent_searchers: super::scan::SEARCHERS,
            cold,
        });
    }
    Ok(scales)
}

/// The upkeep features over the files: index.md (first write, an unchanged pass, one edited
/// note), the built-in maintenance checks, callouts and expiries, on a synthetic vault and,
/// with `--real-vault`, on a copy of that vault (index.md writes into the vault).
fn upkeep(
    config: &Config,
    args: &BenchArgs,
    say: &dyn Fn(String),
) -> Result<Vec<(String, BenchUpkeep)>, Failure> {
    let io = |e: std::io::Error| fail(format!("cannot prepare the upkeep vault: {e}"));
    let synthetic = tempfile::tempdir().map_err(io)?;
    let mut corpus = Corpus::new();
    write_vault(synthetic.path(), &mut corpus, args.upkeep_notes).map_err(io)?;
    // Callouts and dates in one note of ten, so the scans have something to find.
    for n in (0..args.upkeep_notes).step_by(10) {
        let folder = if n < 10 {
            synthetic.path().join("Area0")
        } else {
            synthetic.path().join(format!("Area{}", n % 50)).join(format!("Topic{}", (n / 50) % 20))
        };
        let path = folder.join(format!("Note {n}.md"));
        let body = std::fs::read_to_string(&path).map_err(io)?;
        let head = format!(
            "---\ndescription: Note {n} of the synthetic vault.\nexpires:\n  - date: 2027-0{}-1{}\n    what: Renewal {n}\n---\n",
            1 + n % 9,
            n % 10
        );
        let tail = "\n> [!todo] Follow up\n> Call back about it.\n";
        std::fs::write(&path, format!("{head}{body}{tail}")).map_err(io)?;
    }
    let mut out = Vec::new();
    let mut vaults = vec![("synthetic".to_string(), synthetic.path().to_path_buf(), None)];
    if let Some(real) = &args.real_vault {
        let copy = tempfile::tempdir().map_err(io)?;
        copy_tree(real, copy.path()).map_err(io)?;
        vaults.push((real.display().to_string(), copy.path().to_path_buf(), Some(copy)));
    }
    for (label, root, _keep) in &vaults {
        let vault = crate::vault::Vault::open("bench", root, &config.vault)?;
        let generator = crate::upkeep::indexmd::IndexMd::new(&config.index.exclude_dirs);
        let t = Instant::now();
        generator.rebuild(&vault)?;
        let first = ms(t.elapsed());
        let notes = generator.status().entries;
        let t = Instant::now();
        generator.rebuild(&vault)?;
        let unchanged = ms(t.elapsed());
        // One edited note at a time, as the watcher hands them over: a description change
        // (a rewrite of index.md) and a body change (nothing written).
        let listed: Vec<String> = vault
            .all_files()
            .into_iter()
            .filter(|p| crate::upkeep::indexmd::listed(p, &config.index.exclude_dirs))
            .take(20)
            .collect();
        let (mut rewrite, mut untouched) = (Vec::new(), Vec::new());
        for (i, rel) in listed.iter().enumerate() {
            let abs = root.join(rel);
            let text = std::fs::read_to_string(&abs).map_err(io)?;
            std::fs::write(&abs, format!("---\ndescription: Edited {i}.\n---\n{text}"))
                .map_err(io)?;
            let t = Instant::now();
            generator.refresh(&vault, std::slice::from_ref(rel))?;
            rewrite.push(ms(t.elapsed()));
            std::fs::write(&abs, format!("---\ndescription: Edited {i}.\n---\n{text}\nMore.\n"))
                .map_err(io)?;
            let t = Instant::now();
            generator.refresh(&vault, std::slice::from_ref(rel))?;
            untouched.push(ms(t.elapsed()));
        }
        rewrite.sort_by(f64::total_cmp);
        untouched.sort_by(f64::total_cmp);
        let settings = crate::upkeep::Settings::from_config(config);
        let docs = crate::engine::light::LazyDocuments::new(config);
        let t = Instant::now();
        let run = crate::upkeep::maintenance(&vault, &docs, &settings);
        let checks = ms(t.elapsed());
        let t = Instant::now();
        let callouts = crate::upkeep::callouts(&vault, "", &settings)?;
        let callouts_ms = ms(t.elapsed());
        let t = Instant::now();
        let today = chrono::Local::now().date_naive();
        let dates = crate::upkeep::expiries(&vault, "", today, &Default::default())?;
        let expiries_ms = ms(t.elapsed());
        let summary = run.summary();
        say(format!(
            "upkeep, {label} ({notes} notes): index.md first write {first:.0} ms, unchanged pass {unchanged:.0} ms, one edited note p50 {:.1} ms (rewritten) / {:.1} ms (body only, not written); checks {checks:.0} ms ({} findings); callouts {callouts_ms:.0} ms ({} open); expiries {expiries_ms:.0} ms ({} dates)",
            percentile(&rewrite, 0.5),
            percentile(&untouched, 0.5),
            summary.errors + summary.warnings + summary.infos,
            callouts.callouts.len(),
            dates.entries.len()
        ));
        out.push((
            label.clone(),
            BenchUpkeep {
                notes,
                index_md_first_ms: first,
                index_md_unchanged_ms: unchanged,
                index_md_edit_p50_ms: percentile(&rewrite, 0.5),
                index_md_body_edit_p50_ms: percentile(&untouched, 0.5),
                checks_ms: checks,
                findings: summary.errors + summary.warnings + summary.infos,
                callouts_ms,
                expiries_ms,
            },
        ));
    }
    Ok(out)
}

pub(super) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in walkdir::WalkDir::new(from).follow_links(false) {
        let entry = entry.map_err(std::io::Error::other)?;
        let Ok(rel) = entry.path().strip_prefix(from) else { continue };
        let target = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target)?;
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Document extraction: pages/s from a text layer and through OCR, on generated PDFs of known
/// text, and on any real PDFs given with `--pdf` (with their word recall against `pdftotext`).
fn documents(
    config: &Config,
    args: &BenchArgs,
    say: &dyn Fn(String),
) -> Result<BenchDocuments, Failure> {
    let ex = Extractor::new(ExtractSettings { ocr: true, ..ExtractSettings::default() });
    let mut corpus = Corpus::new();
    let page = |corpus: &mut Corpus| -> Vec<String> {
        // About 45 lines of 80 characters: a dense A4 page.
        let text = corpus.paragraph(3600);
        let mut lines = vec![String::new()];
        for word in text.split_whitespace() {
            if lines.last().is_some_and(|l| l.len() + word.len() > 80) {
                lines.push(String::new());
            }
            let last = lines.last_mut().expect("one line at least");
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
        lines
    };
    let pages: Vec<Vec<String>> = (0..40).map(|_| page(&mut corpus)).collect();
    let pdf = docs::pdf::sample(&pages);
    let mut rates = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let e = ex.extract(".pdf", &pdf);
        if e.verdict.status != docs::Status::Extracted {
            return Err(fail(format!("the sample PDF did not extract: {:?}", e.verdict)));
        }
        rates.push(pages.len() as f64 / t.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    let text_rate = rates[rates.len() / 2];
    say(format!(
        "PDF text extraction: {text_rate:.0} pages/s (median of 5 passes over {} dense A4 pages, {} KiB)",
        pages.len(),
        pdf.len() / 1024
    ));

    let ocr_pages = 4usize;
    let ocr_pdf = docs::pdf::sample(&pages[..ocr_pages]);
    let ocr = match ex.ocr_unavailable() {
        Some(why) => {
            say(format!("PDF OCR: not measured ({why})"));
            BenchOcr::Unavailable { unavailable: why.to_string() }
        }
        None => {
            let t = Instant::now();
            let texts = docs::pdf::ocr(&ocr_pdf, ocr_pages as u32, &ex).map_err(fail)?;
            let secs = t.elapsed().as_secs_f64();
            let recall = word_recall(&texts.join("\n"), &pages[..ocr_pages].concat().join("\n"));
            say(format!(
                "PDF OCR (pdftoppm 300 dpi + tesseract, one page per core): {:.2} pages/s ({ocr_pages} pages in {secs:.1} s; word recall {recall:.3})",
                ocr_pages as f64 / secs
            ));
            BenchOcr::Measured {
                pages_per_s: ocr_pages as f64 / secs,
                pages: ocr_pages,
                word_recall: recall,
            }
        }
    };

    let mut real = Vec::new();
    for path in &args.pdf {
        let bytes = std::fs::read(path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        let t = Instant::now();
        let e = Extractor::new(ExtractSettings { ocr: config.vault.doc_ocr, ..Default::default() })
            .extract(".pdf", &bytes);
        let secs = t.elapsed().as_secs_f64();
        let reference = ex
            .tools()
            .pdftotext(path, std::time::Duration::from_secs(120))
            .map(|p| p.join("\n"))
            .ok();
        let recall = reference.as_deref().map(|r| word_recall(&e.markdown, r));
        let headings =
            e.markdown.lines().filter(|l| l.starts_with('#') && !l.starts_with("## Page ")).count();
        say(format!(
            "{}: {} ({} pages, {} chars, {headings} headings) in {secs:.2} s = {:.0} pages/s; word recall vs pdftotext {}",
            path.display(),
            e.verdict.status.as_str(),
            e.verdict.pages,
            e.verdict.extracted_chars,
            e.verdict.pages as f64 / secs,
            recall.map_or("n/a (pdftotext missing or failed)".to_string(), |r| format!("{r:.3}"))
        ));
        real.push(BenchPdf {
            path: path.display().to_string(),
            status: e.verdict.status.as_str(),
            pages: e.verdict.pages,
            chars: e.verdict.extracted_chars,
            headings,
            seconds: secs,
            word_recall: recall,
        });
    }
    Ok(BenchDocuments { text_pages_per_s: text_rate, text_pages: pages.len(), ocr, files: real })
}

/// The share of `reference`'s distinct words (lowercase letter and digit runs) that `text`
/// also has.
fn word_recall(text: &str, reference: &str) -> f64 {
    let words = |s: &str| -> std::collections::HashSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let ours = words(text);
    let theirs = words(reference);
    if theirs.is_empty() {
        return 1.0;
    }
    theirs.iter().filter(|w| ours.contains(*w)).count() as f64 / theirs.len() as f64
}

fn write_vault(root: &Path, corpus: &mut Corpus, notes: usize) -> std::io::Result<()> {
    for n in 0..notes {
        let folder = root.join(format!("Area{}", n % 50)).join(format!("Topic{}", (n / 50) % 20));
        let folder = if n < 10 { root.join("Area0") } else { folder };
        std::fs::create_dir_all(&folder)?;
        std::fs::write(folder.join(format!("Note {n}.md")), corpus.note(&format!("Note {n}")))?;
    }
    Ok(())
}

/// Process start to first answer: `mdvault search` against the prepared store, hashing model.
fn warm_start(cfg: &Config, data: &Path, vault: &Path) -> Result<f64, Failure> {
    let exe = std::env::current_exe().map_err(|e| fail(e.to_string()))?;
    let dims = match cfg.embedding.backend {
        EmbeddingBackend::Hashing { dims } => dims,
        _ => 384,
    };
    let mut runs = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let out = Command::new(&exe)
            .args(["search", "warm start probe", "--json"])
            .arg(format!("--vault=bench={}", vault.display()))
            .arg("--data-dir")
            .arg(data)
            .env("MDVAULT_CONFIG", "")
            .env("MDVAULT_EMBEDDING__BACKEND", "hashing")
            .env("MDVAULT_EMBEDDING__DIMS", dims.to_string())
            .output()
            .map_err(|e| fail(e.to_string()))?;
        if !out.status.success() {
            return Err(fail(format!(
                "warm start run failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        runs.push(ms(t.elapsed()));
    }
    runs.sort_by(f64::total_cmp);
    Ok(runs[runs.len() / 2])
}

/// Runs sentence-transformers on the same texts: its figure at its best batch size, then
/// [`PAIRED_ROUNDS`] rounds of one pass of `ours` and one of its own, alternating.
fn compare_python(
    model: &Path,
    texts: &[String],
    threads: usize,
    ours: &dyn Fn() -> Result<f64, String>,
) -> Result<Paired, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bench_st.py");
    let input = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    std::fs::write(input.path(), serde_json::to_string(texts).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(model)
        .arg(input.path())
        .arg(threads.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("python3 did not start: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no pipe to python3")?;
    let mut lines =
        std::io::BufReader::new(child.stdout.take().ok_or("no pipe from python3")?).lines();
    let mut next = || -> Result<f64, String> {
        let line = lines.next().ok_or("python3 stopped")?.map_err(|e| e.to_string())?;
        let v: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
        v["chunks_per_s"].as_f64().ok_or_else(|| "no figure in the output".to_string())
    };
    let mut rounds = Vec::new();
    let best = next().and_then(|best| {
        for _ in 0..PAIRED_ROUNDS {
            let mine = ours()?;
            writeln!(stdin, "pass").map_err(|e| e.to_string())?;
            rounds.push((mine, next()?));
        }
        Ok(best)
    });
    drop(stdin);
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    match best {
        Ok(best) => Ok(Paired { best, rounds }),
        Err(_) if !out.status.success() => {
            let err = String::from_utf8_lossy(&out.stderr);
            Err(err.lines().last().unwrap_or("failed").to_string())
        }
        Err(e) => Err(e),
    }
}

/// Passes of each side, alternating, after sentence-transformers chose its batch size.
const PAIRED_ROUNDS: usize = 5;

/// sentence-transformers' figures: its best batch size's median, then `(ours, theirs)` for
/// each round, taken seconds apart.
struct Paired {
    best: f64,
    rounds: Vec<(f64, f64)>,
}

impl Paired {
    /// The median of the rounds' ratios: each is taken within one round, so a machine whose
    /// speed drifts between rounds moves both sides of it alike.
    fn ratio(&self) -> f64 {
        let mut r: Vec<f64> = self.rounds.iter().map(|(a, b)| a / b).collect();
        r.sort_by(f64::total_cmp);
        percentile(&r, 0.5)
    }
}
