//! `mdvault eval`: score search against judged queries, per mode, and gate on a baseline.
//!
//! The scoring and the baseline rule live in `search::eval`; this file runs the searches (each
//! query in each mode, timed), prints the side-by-side table or JSON, and turns regressions and
//! leaks into the exit status. A BEIR folder is written out as a vault under the data
//! directory (`eval/<name>/`) with its own index, so a second run re-embeds nothing.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde_json::Value;

use super::search::Report;
use super::{Failure, print, print_json};
use crate::config::{Config, VaultEntry};
use crate::engine::Engine;
use crate::search::eval::{self, Arm, Baseline, Comparison, QuerySet, Scored, Summary};
use crate::search::{Mode, SearchRequest};
use crate::wire::{
    EvalBaseline, EvalMode, EvalQuery, EvalReport, EvalSummary, ForeignOrigin, Latency,
};

/// `mdvault eval`.
#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// The judged queries: a JSON file (`{"queries": [{"q", "arm", "expect", "never"}]}`), a
    /// JSONL file (`{"query", "gold"}` per line) or a BEIR folder (corpus.jsonl, queries.jsonl,
    /// qrels/test.tsv).
    queries: PathBuf,
    /// Results per query (default: search.default_k; 10 for a BEIR folder).
    #[arg(short, long)]
    k: Option<usize>,
    /// Compare with a recorded run: a hit that became a miss or a worse rank exits 1. A
    /// `{encoder}` in FILE is replaced by the local model's arithmetic (amx, int8,
    /// int8-f32-attention, bf16, f32), to keep a baseline per arithmetic.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Record this run as the baseline (the --baseline file) instead of comparing.
    #[arg(long, requires = "baseline")]
    update_baseline: bool,
    /// Only these modes, comma separated: lexical, dense, hybrid, rerank, thorough.
    #[arg(long, value_delimiter = ',')]
    modes: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Which half to run: for a BEIR folder, which judgments, `qrels/<SPLIT>.tsv` (default
    /// test; SciFact has test and train: tune on train, report test); for a JSON file, the
    /// queries marked `"split": SPLIT` and those marked with none (default: every query).
    #[arg(long)]
    split: Option<String>,
}

/// One way of searching, as the table's columns name them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Way {
    name: &'static str,
    mode: Mode,
    rerank: bool,
    thorough: bool,
}

impl Way {
    /// Whether the baseline holds this mode to a query written for `arm`. A single-arm mode
    /// is held only to its own arm's queries (and `either`): where the dense arm happens to
    /// rank a part number is noise, and gating on it would fail on another CPU's rounding.
    fn gates(self, arm: Arm) -> bool {
        match self.mode {
            Mode::Hybrid => true,
            Mode::Lexical => matches!(arm, Arm::Lexical | Arm::Either),
            Mode::Dense => matches!(arm, Arm::Dense | Arm::Either),
        }
    }
}

const WAYS: [Way; 5] = [
    Way { name: "lexical", mode: Mode::Lexical, rerank: false, thorough: false },
    Way { name: "dense", mode: Mode::Dense, rerank: false, thorough: false },
    Way { name: "hybrid", mode: Mode::Hybrid, rerank: false, thorough: false },
    Way { name: "rerank", mode: Mode::Hybrid, rerank: true, thorough: false },
    Way { name: "thorough", mode: Mode::Hybrid, rerank: true, thorough: true },
];

/// One query's outcome in one mode.
struct Outcome {
    scored: bool,
    /// The rank in the k run (what the gate compares).
    rank: Option<usize>,
    /// The figures: hit@n, MRR and nDCG from a k>=10 run, recall@k, crowding and leaks from
    /// the k run, R@100 from a k=100 run.
    result: Scored,
    top: Vec<String>,
}

/// One mode's run.
struct ModeRun {
    way: Way,
    outcomes: Vec<Outcome>,
    summary: Summary,
    p50_ms: f64,
    p95_ms: f64,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn fail(msg: impl Into<String>) -> Failure {
    Failure::Config(msg.into())
}

/// The eval's own index, under `<data>/eval/`: it never touches the index a server may be
/// using (tantivy admits one writer), and it holds only the vaults under test, so results
/// from other vaults cannot creep in. Keyed by the query set and the vaults, so a second run
/// re-embeds only what changed. Keyed by the vaults, not the query file, so every query set
/// over the same vaults shares it.
fn eval_home(config: &Config) -> PathBuf {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for v in &config.vaults {
        h.update(v.name.as_bytes());
        h.update([0]);
        h.update(v.root.to_string_lossy().as_bytes());
        h.update([0]);
    }
    let tag: String = h.finalize().iter().take(4).map(|b| format!("{b:02x}")).collect();
    config.data_dir.join("eval").join(format!("vaults-{tag}"))
}

/// For a BEIR folder: the corpus written (or brought up to date) as a vault beside the eval's
/// index, under `<data>/eval/beir-<folder name>-<digest of its path>/`.
fn beir_config(config: &Config, folder: &Path) -> Result<Config, Failure> {
    use sha2::{Digest, Sha256};
    let canonical = folder.canonicalize().unwrap_or_else(|_| folder.to_path_buf());
    let tag: String = Sha256::digest(canonical.to_string_lossy().as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = sanitize(&folder.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
    let home = config.data_dir.join("eval").join(format!("beir-{name}-{tag}"));
    let vault = home.join("vault");
    std::fs::create_dir_all(&vault)
        .map_err(|e| fail(format!("cannot create {}: {e}", vault.display())))?;
    let n = eval::write_beir_vault(folder, &vault).map_err(setup)?;
    eprintln!("{name}: {n} documents as notes in {}", vault.display());
    let mut c = config.clone();
    c.vaults = vec![VaultEntry { name, root: vault }];
    c.data_dir = home.join("index");
    // The corpus is not the user's vault: none of its folders are special.
    c.search.exclude_dirs.clear();
    c.index.exclude_dirs.clear();
    c.index.index_md = false;
    Ok(c)
}

fn sanitize(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' }).collect();
    if s.is_empty() { "beir".into() } else { s }
}

/// Any engine refusal during an eval is a setup problem (exit 2), never a regression (exit 1):
/// CI must be able to tell "search got worse" from "the eval could not run".
fn setup(e: crate::error::Error) -> Failure {
    Failure::Config(format!("{} [{}]", e.message(), e.code()))
}

pub(crate) fn run(config: &Config, only: Option<&str>, mut args: EvalArgs) -> Result<(), Failure> {
    let set = eval::load(&args.queries, args.split.as_deref()).map_err(setup)?;
    if set.queries.is_empty() {
        return Err(fail(format!("{} holds no queries", args.queries.display())));
    }
    if let Some(bad) = args.modes.iter().find(|m| !WAYS.iter().any(|w| w.name == m.trim())) {
        return Err(fail(format!(
            "--modes {bad:?}: use lexical, dense, hybrid, rerank or thorough"
        )));
    }
    let beir = args.queries.is_dir();
    let k = args.k.unwrap_or(if beir { 10 } else { config.search.default_k }).clamp(1, 100);
    let reranker = !config.rerank.url.is_empty();
    let ways: Vec<Way> = WAYS
        .iter()
        .copied()
        .filter(|w| args.modes.is_empty() || args.modes.iter().any(|m| m.trim() == w.name))
        .filter(|w| reranker || !w.rerank)
        .collect();
    if ways.is_empty() {
        return Err(fail("no mode to run: rerank and thorough need rerank.url"));
    }
    let config = if beir {
        beir_config(config, &args.queries)?
    } else {
        let mut c = config.clone();
        c.data_dir = eval_home(config);
        c
    };
    let engine = Engine::open(config).map_err(setup)?;
    let embedder = engine.index().embedder().model_id().to_string();
    let encoder = engine.index().embedder().encoder();
    if let Some(path) = &args.baseline {
        args.baseline = Some(per_encoder(path, encoder, &embedder)?);
    }

    // Everything that can refuse the comparison is checked before the (possibly long) sync.
    let (recorded_before, foreign) = read_baseline(&args)?;
    let header = Baseline {
        queries: set.name.clone(),
        k,
        embedder: embedder.clone(),
        ranks: Default::default(),
        judgments: set.queries.iter().map(|q| (q.id.clone(), q.judgment())).collect(),
        summaries: Default::default(),
        encoder: encoder.map(str::to_string),
    };
    if let Some(old) = recorded_before.as_ref().filter(|_| !args.update_baseline) {
        comparable(old, &header, &ways, &args)?;
    }

    let report = Report::new();
    let synced = engine.sync(only, false, &report).map_err(setup)?;
    report.finish();
    for (vault, r) in &synced {
        eprintln!(
            "{vault}: {} files ({} re-chunked, {} failed), {} texts embedded",
            r.files_seen,
            r.files_chunked,
            r.failed.len(),
            r.texts_embedded
        );
    }

    // The dense arm is judged only with a real model: hashed vectors know no paraphrase.
    let real_model = !embedder.starts_with("hashing");
    let graded = set.queries.iter().any(|q| matches!(q.relevant, eval::Relevant::Graded(_)));
    let mut runs = Vec::new();
    for way in &ways {
        runs.push(run_mode(&engine, only, &set, *way, k, graded, real_model)?);
    }
    let mut recorded = record(header, &set, &runs);

    let leaks: usize = runs.iter().map(|r| r.summary.leaks).sum();
    let (mut comparison, saved) = settle_baseline(&args, recorded_before, &mut recorded, leaks)?;

    // The old server's ranks inform and never fail: another engine ranks differently by
    // design, and the user is here to see how.
    if let Some(f) = &foreign {
        let main = recorded.ranks.get("hybrid").or_else(|| recorded.ranks.values().next());
        let mode = if recorded.ranks.contains_key("hybrid") { "hybrid" } else { "first mode" };
        comparison = main.map(|ranks| eval::compare_foreign(f, mode, ranks));
    }
    let regressions =
        if foreign.is_some() { 0 } else { comparison.as_ref().map_or(0, |c| c.regressions.len()) };
    let ctx = Finished {
        set: &set,
        engine: &engine,
        k,
        embedder: &embedder,
        encoder,
        runs: &runs,
        comparison: comparison.as_ref(),
        foreign: foreign.as_ref(),
        saved: saved.as_deref(),
        args: &args,
    };
    if args.json {
        print_json(&to_json(&ctx));
    } else {
        print(&render(&ctx));
    }
    if leaks > 0 || regressions > 0 {
        return Err(Failure::Exit(1));
    }
    Ok(())
}

/// The `--baseline` path with `{encoder}` replaced by the local model's arithmetic, so that
/// one command keeps a baseline per arithmetic: `int8` (what `auto` runs on most AVX-512 CPUs)
/// moves a few ranks against `bf16` and `amx`, as any change of rounding does, and a gate
/// recorded under one would fail under the other for no fault of the code.
fn per_encoder(path: &Path, encoder: Option<&str>, embedder: &str) -> Result<PathBuf, Failure> {
    let text = path.to_string_lossy();
    if !text.contains("{encoder}") {
        return Ok(path.to_path_buf());
    }
    let Some(encoder) = encoder else {
        return Err(fail(format!(
            "--baseline {text}: {{encoder}} names the local model's arithmetic, and this run's \
             embedder is {embedder}; name the file without it"
        )));
    };
    Ok(PathBuf::from(text.replace("{encoder}", encoder)))
}

/// The `--baseline` file: mdvault's own (to compare with, or to keep modes this run skips
/// when recording), or the vault MCP server's (to inform; never written). Neither when there
/// is none yet to record over.
fn read_baseline(
    args: &EvalArgs,
) -> Result<(Option<Baseline>, Option<eval::ForeignBaseline>), Failure> {
    let mut foreign = None;
    let recorded_before = match &args.baseline {
        Some(path) if path.exists() || !args.update_baseline => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                fail(format!(
                    "cannot read the baseline {}: {e}; record one with --update-baseline",
                    path.display()
                ))
            })?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| fail(format!("{} is not an eval baseline: {e}", path.display())))?;
            match serde_json::from_value::<Baseline>(value.clone()) {
                Ok(old) => Some(old),
                Err(e) => match eval::read_foreign_baseline(&value) {
                    Some(_) if args.update_baseline => {
                        return Err(fail(format!(
                            "{} is the vault MCP server's baseline, which mdvault reads and never \
                             writes; record mdvault's own with --baseline NEW.json \
                             --update-baseline",
                            path.display()
                        )));
                    }
                    Some(f) => {
                        foreign = Some(f);
                        None
                    }
                    None => {
                        return Err(fail(format!(
                            "{} is not an eval baseline (mdvault's, or the vault MCP server's \
                             baseline.json): {e}",
                            path.display()
                        )));
                    }
                },
            }
        }
        _ => None,
    };
    Ok((recorded_before, foreign))
}

/// Refuses a comparison that would mean nothing: another query file, k or embedder, or a
/// baseline mode this run cannot run (unless `--modes` narrowed the run on purpose).
fn comparable(
    old: &Baseline,
    header: &Baseline,
    ways: &[Way],
    args: &EvalArgs,
) -> Result<(), Failure> {
    old.comparable(header).map_err(setup)?;
    let missing: Vec<&String> = old
        .ranks
        .keys()
        .filter(|m| !ways.iter().any(|w| w.name == m.as_str()))
        .filter(|_| args.modes.is_empty())
        .collect();
    if !missing.is_empty() {
        return Err(fail(format!(
            "the baseline has the mode(s) {} and this run cannot run them (is rerank.url \
             set?); pass --modes to compare the others, or record with --update-baseline",
            missing.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(())
}

/// This run as a baseline: per mode, the rank of every query the mode is held to, and the
/// means.
fn record(header: Baseline, set: &QuerySet, runs: &[ModeRun]) -> Baseline {
    let mut recorded = header;
    recorded.ranks = runs
        .iter()
        .map(|r| {
            let ranks = set
                .queries
                .iter()
                .zip(&r.outcomes)
                .filter(|(q, o)| o.scored && r.way.gates(q.arm))
                .map(|(q, o)| (q.id.clone(), o.rank))
                .collect();
            (r.way.name.to_string(), ranks)
        })
        .collect();
    recorded.summaries = runs.iter().map(|r| (r.way.name.to_string(), r.summary.clone())).collect();
    recorded
}

/// Compares with the baseline, or records this run as it (only without leaks); the
/// comparison, and where it was recorded.
fn settle_baseline(
    args: &EvalArgs,
    recorded_before: Option<Baseline>,
    recorded: &mut Baseline,
    leaks: usize,
) -> Result<(Option<Comparison>, Option<PathBuf>), Failure> {
    let mut comparison = None;
    let mut saved = None;
    if let Some(path) = &args.baseline {
        if args.update_baseline {
            if leaks == 0 {
                // Modes this run skipped (`--modes`) keep their recorded ranks.
                if let Some(old) = recorded_before.filter(|old| old.comparable(recorded).is_ok()) {
                    for (mode, ranks) in old.ranks {
                        if !recorded.ranks.contains_key(&mode) {
                            recorded.ranks.insert(mode.clone(), ranks);
                            if let Some(s) = old.summaries.get(&mode) {
                                recorded.summaries.insert(mode, s.clone());
                            }
                        }
                    }
                }
                let text = serde_json::to_string_pretty(recorded).unwrap_or_default();
                std::fs::write(path, text + "\n")
                    .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
                saved = Some(path.clone());
            }
        } else if let Some(old) = &recorded_before {
            comparison = Some(eval::compare(old, recorded).map_err(setup)?);
        }
    }
    Ok((comparison, saved))
}

/// Runs one query in one way; a shortfall (an arm or the reranker fell back) means the run
/// would not measure what its column says, so it stops the eval.
fn search(engine: &Engine, req: &SearchRequest, way: Way) -> Result<Vec<String>, Failure> {
    let resp = engine.search(req).map_err(setup)?;
    if let Some(n) = resp.shortfalls().next() {
        return Err(fail(format!(
            "the {} run degraded ({n}); fix that first, or leave the mode out with --modes",
            way.name
        )));
    }
    Ok(resp.results.into_iter().map(|h| h.path).collect())
}

fn run_mode(
    engine: &Engine,
    only: Option<&str>,
    set: &QuerySet,
    way: Way,
    k: usize,
    graded: bool,
    real_model: bool,
) -> Result<ModeRun, Failure> {
    let scope = engine.vaults().scope(only)?;
    let req = |text: &str, k: usize, candidates: Option<usize>| SearchRequest {
        query: text.to_string(),
        k: Some(k),
        scope: scope.clone(),
        prefix: None,
        thorough: way.thorough,
        rerank: way.rerank,
        mode: way.mode,
        query_vector: None,
        candidates,
    };
    // One untimed search first, so model warm-up is not the slowest query.
    if let Some(q) = set.queries.first() {
        search(engine, &req(&q.text, k, None), way)?;
    }
    let mut outcomes = Vec::with_capacity(set.queries.len());
    let mut latencies = Vec::with_capacity(set.queries.len());
    for q in &set.queries {
        let started = Instant::now();
        let paths = search(engine, &req(&q.text, k, None), way)?;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        // The k run is what a caller gets: the gate's rank, recall@k, crowding and leaks.
        let at_k = eval::score(q, &paths, k);
        // The @10 figures need ten results; a smaller k caps and diversifies differently, so
        // they come from their own k=10 search.
        let mut result = if k < 10 {
            eval::score(q, &search(engine, &req(&q.text, 10, None), way)?, 10)
        } else {
            at_k.clone()
        };
        result.recall = at_k.recall;
        result.max_per_note = at_k.max_per_note;
        result.leaks = at_k.leaks.clone();
        // R@100 needs a hundred results from arms that each offer a hundred candidates.
        result.recall100 = if !graded {
            0.0
        } else if k < 100 {
            let wide = search(engine, &req(&q.text, 100, Some(100)), way)?;
            eval::score(q, &wide, 100).recall100
        } else {
            at_k.recall100
        };
        let scored = q.scored() && (q.arm != Arm::Dense || real_model);
        let mut top = Vec::new();
        for p in paths {
            if !top.contains(&p) {
                top.push(p);
            }
        }
        let rank = at_k.rank.filter(|r| *r <= k);
        outcomes.push(Outcome { scored, rank, result, top });
    }
    let summary =
        eval::summarize(&outcomes.iter().map(|o| (o.scored, o.result.clone())).collect::<Vec<_>>());
    latencies.sort_by(f64::total_cmp);
    Ok(ModeRun {
        way,
        outcomes,
        summary,
        p50_ms: percentile(&latencies, 0.5),
        p95_ms: percentile(&latencies, 0.95),
    })
}

fn vault_list(engine: &Engine) -> String {
    engine.vaults().iter().map(|v| v.name().to_string()).collect::<Vec<_>>().join(", ")
}

/// A finished run, for the two renderings.
#[derive(Clone, Copy)]
struct Finished<'a> {
    set: &'a QuerySet,
    engine: &'a Engine,
    k: usize,
    embedder: &'a str,
    encoder: Option<&'static str>,
    runs: &'a [ModeRun],
    comparison: Option<&'a Comparison>,
    /// The vault MCP server's baseline, when `comparison` is against it (read-only).
    foreign: Option<&'a eval::ForeignBaseline>,
    saved: Option<&'a Path>,
    args: &'a EvalArgs,
}

fn render(ctx: &Finished) -> String {
    let Finished { set, engine, k, embedder, encoder, runs, args, .. } = *ctx;
    let scored = runs.first().map_or(0, |r| r.summary.scored);
    let arithmetic = encoder.map(|e| format!(" ({e})")).unwrap_or_default();
    let mut out = format!(
        "{}: {} queries, {} scored · k={k} · embedder {embedder}{arithmetic} · vaults: {}\n\n",
        set.name,
        set.queries.len(),
        scored,
        vault_list(engine)
    );
    let graded = set.queries.iter().any(|q| matches!(q.relevant, eval::Relevant::Graded(_)));
    render_table(&mut out, runs, k, graded);
    // Where the default mode fell short, query by query (not for a thousand BEIR queries).
    if !args.queries.is_dir() {
        render_misses(&mut out, set, runs);
    }
    render_baseline(&mut out, ctx);
    let leaks: usize = runs.iter().map(|r| r.summary.leaks).sum();
    if leaks > 0 {
        out.push_str(&format!(
            "\nFAILED: {leaks} never-leaks (a path that must never appear did){}\n",
            if args.update_baseline { "; the baseline was not recorded" } else { "" }
        ));
    }
    out
}

/// The side-by-side table: one row per figure, one column per mode.
fn render_table(out: &mut String, runs: &[ModeRun], k: usize, graded: bool) {
    let mut labels: Vec<String> =
        ["hit@1", "hit@5", "hit@10", &format!("recall@{k}"), "MRR@10", "nDCG@10"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    if graded {
        labels.push("R@100".into());
    }
    labels.extend(["per note mean/worst", "never leaks", "p50 ms", "p95 ms"].map(String::from));
    let columns: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let m = &r.summary;
            let mut c: Vec<String> = [m.hit1, m.hit5, m.hit10, m.recall, m.mrr10, m.ndcg10]
                .iter()
                .map(|x| format!("{x:.3}"))
                .collect();
            if graded {
                c.push(format!("{:.3}", m.recall100));
            }
            c.push(format!("{:.2}/{}", m.mean_max_per_note, m.worst_max_per_note));
            c.push(m.leaks.to_string());
            c.push(format!("{:.1}", r.p50_ms));
            c.push(format!("{:.1}", r.p95_ms));
            c
        })
        .collect();
    out.push_str(&format!("{:<20}", ""));
    for r in runs {
        out.push_str(&format!("{:>10}", r.way.name));
    }
    out.push('\n');
    for (i, label) in labels.iter().enumerate() {
        out.push_str(&format!("{label:<20}"));
        for c in &columns {
            out.push_str(&format!("{:>10}", c[i]));
        }
        out.push('\n');
    }
}

/// The default mode's queries that were not answered first: leaks, lower ranks and misses.
fn render_misses(out: &mut String, set: &QuerySet, runs: &[ModeRun]) {
    let Some(main) = runs.iter().find(|r| r.way.name == "hybrid").or(runs.first()) else {
        return;
    };
    let mut lines = Vec::new();
    for (q, o) in set.queries.iter().zip(&main.outcomes) {
        let first = o.top.first().map_or("(nothing)", String::as_str);
        if !o.result.leaks.is_empty() {
            lines.push(format!("  LEAK  {:?}: returned {}", q.text, o.result.leaks.join(", ")));
        } else if o.scored && o.rank != Some(1) {
            let rank = o.rank;
            lines.push(format!(
                "  {:<5} {:?} [{}]: {}; first was {first}",
                rank.map_or("miss".to_string(), |r| format!("#{r}")),
                q.text,
                q.arm.as_str(),
                if rank.is_some() { "found lower down" } else { "not found" },
            ));
        }
    }
    if !lines.is_empty() {
        out.push_str(&format!("\n{} queries not answered first:\n", main.way.name));
        out.push_str(&lines.join("\n"));
        out.push('\n');
    }
}

/// What the baseline said: the comparison (a foreign one informs only), or where this run was
/// recorded.
fn render_baseline(out: &mut String, ctx: &Finished) {
    let Finished { k, comparison, foreign, saved, .. } = *ctx;
    if let Some(c) = comparison {
        out.push('\n');
        let show = |c: &eval::Change| {
            let r = |r: Option<usize>| r.map_or("miss".to_string(), |r| format!("#{r}"));
            format!("  {:<9} {:?}: {} -> {}", c.mode, c.id, r(c.before), r(c.after))
        };
        if let Some(f) = foreign {
            let or = |v: Option<String>| v.unwrap_or_else(|| "?".into());
            out.push_str(&format!(
                "the vault MCP server's baseline (k={}, embedder {}; read-only, informs and \
                 never fails): {} worse, {} better, {} not in it\n",
                or(f.k.map(|k| k.to_string())),
                or(f.embedder.clone()),
                c.regressions.len(),
                c.improvements.len(),
                c.new.len()
            ));
            if f.k.is_some_and(|old| old != k) {
                out.push_str(&format!(
                    "  note: it was recorded at k={}, this run is at k={k}\n",
                    f.k.unwrap_or(0)
                ));
            }
            out.extend(c.regressions.iter().map(|x| format!("  worse {}\n", show(x))));
            out.extend(c.improvements.iter().map(|x| format!("  better {}\n", show(x))));
        } else if c.regressions.is_empty() {
            out.push_str("baseline: no regressions\n");
        } else {
            out.push_str(&format!("baseline: {} REGRESSIONS\n", c.regressions.len()));
            out.extend(c.regressions.iter().map(|x| show(x) + "\n"));
        }
        if !c.improvements.is_empty() && foreign.is_none() {
            out.push_str(&format!("improvements ({}):\n", c.improvements.len()));
            out.extend(c.improvements.iter().map(|x| show(x) + "\n"));
        }
        if !c.new.is_empty() && foreign.is_none() {
            out.push_str(&format!(
                "{} queries are new to the baseline (record them with --update-baseline)\n",
                c.new.len()
            ));
        }
        if !c.modes_new.is_empty() {
            out.push_str(&format!("not in the baseline yet: {}\n", c.modes_new.join(", ")));
        }
        if !c.modes_missing.is_empty() {
            out.push_str(&format!("left out of this run: {}\n", c.modes_missing.join(", ")));
        }
    } else if let Some(p) = saved {
        out.push_str(&format!("\nrecorded this run as the baseline in {}\n", p.display()));
    }
}

fn to_json(ctx: &Finished) -> EvalReport {
    let Finished { set, engine, k, embedder, encoder, runs, comparison, foreign, saved, args: _ } =
        *ctx;
    let graded = set.queries.iter().any(|q| matches!(q.relevant, eval::Relevant::Graded(_)));
    let modes = runs
        .iter()
        .map(|r| {
            let queries = set
                .queries
                .iter()
                .zip(&r.outcomes)
                .map(|(q, o)| EvalQuery {
                    id: q.id.clone(),
                    arm: q.arm.as_str(),
                    scored: o.scored,
                    rank: o.rank,
                    mrr10: o.result.mrr10,
                    ndcg10: o.result.ndcg10,
                    recall: o.result.recall,
                    recall100: graded.then_some(o.result.recall100),
                    max_per_note: o.result.max_per_note,
                    leaks: o.result.leaks.clone(),
                    top: o.top.iter().take(3).cloned().collect(),
                })
                .collect();
            EvalMode {
                mode: r.way.name,
                summary: EvalSummary::new(&r.summary, graded),
                latency_ms: Latency { p50: r.p50_ms, p95: r.p95_ms },
                queries,
            }
        })
        .collect();
    let baseline = match (comparison, saved) {
        (Some(c), _) => Some(EvalBaseline::Compared {
            comparison: c.clone(),
            foreign: foreign.map(|f| ForeignOrigin {
                source: "vault MCP server (read-only)",
                recorded_k: f.k,
                recorded_embedder: f.embedder.clone(),
            }),
        }),
        (None, Some(p)) => Some(EvalBaseline::Recorded { recorded: p.to_path_buf() }),
        (None, None) => None,
    };
    EvalReport {
        queries: set.name.clone(),
        count: set.queries.len(),
        k,
        embedder: embedder.to_string(),
        encoder,
        vaults: engine.vaults().iter().map(|v| v.name().to_string()).collect(),
        modes,
        leaks: runs.iter().map(|r| r.summary.leaks).sum(),
        baseline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_path_names_the_arithmetic_only_where_it_asks_to() {
        let local = "local:all-MiniLM-L6-v2@53aa51172d14";
        let asked = Path::new("real/help.{encoder}.baseline.json");
        let got = per_encoder(asked, Some("int8"), local).unwrap();
        assert_eq!(got, Path::new("real/help.int8.baseline.json"));
        let plain = Path::new("real/help.baseline.json");
        assert_eq!(per_encoder(plain, Some("int8"), local).unwrap(), plain);
        assert_eq!(per_encoder(plain, None, "hashing").unwrap(), plain);
        let Err(Failure::Config(e)) = per_encoder(asked, None, "hashing") else {
            panic!("a placeholder without a local model is refused");
        };
        assert!(e.contains("this run's embedder is hashing"), "{e}");
    }
}
