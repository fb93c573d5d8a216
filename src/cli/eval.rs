//! `mdvault eval`: score search against judged queries, per mode, and gate on a baseline.
//!
//! The scoring and the baseline rule live in `search::eval`; this file runs the searches (each
//! query in each mode, timed), prints the side-by-side table or JSON, and turns regressions and
//! leaks into the exit status. A BEIR folder is written out as a vault under the data
//! directory (`eval/<name>/`) with its own index, so a second run re-embeds nothing.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde_json::{Value, json};

use super::search::Report;
use super::{Failure, print, print_json};
use crate::config::{Config, VaultEntry};
use crate::engine::Engine;
use crate::search::eval::{self, Arm, Baseline, Comparison, QuerySet, Scored, Summary};
use crate::search::{Mode, SearchRequest};

/// `mdvault eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The judged queries: a JSON file (`{"queries": [{"q", "arm", "expect", "never"}]}`), a
    /// JSONL file (`{"query", "gold"}` per line) or a BEIR folder (corpus.jsonl, queries.jsonl,
    /// qrels/test.tsv).
    queries: PathBuf,
    /// Results per query (default: search.default_k; 10 for a BEIR folder).
    #[arg(short, long)]
    k: Option<usize>,
    /// Compare with a recorded run: a hit that became a miss or a worse rank exits 1.
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
/// re-embeds only what changed.
fn eval_home(config: &Config, name: &str) -> PathBuf {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for v in &config.vaults {
        h.update(v.name.as_bytes());
        h.update([0]);
        h.update(v.root.to_string_lossy().as_bytes());
        h.update([0]);
    }
    let tag: String = h.finalize().iter().take(4).map(|b| format!("{b:02x}")).collect();
    config.data_dir.join("eval").join(format!("{}-{tag}", sanitize(name)))
}

/// For a BEIR folder: the corpus written (or brought up to date) as a vault beside the eval's
/// index.
fn beir_config(config: &Config, folder: &Path, name: &str) -> Result<Config, Failure> {
    let home = config.data_dir.join("eval").join(sanitize(name));
    let vault = home.join("vault");
    std::fs::create_dir_all(&vault)
        .map_err(|e| fail(format!("cannot create {}: {e}", vault.display())))?;
    let n = eval::write_beir_vault(folder, &vault)?;
    eprintln!("{name}: {n} documents as notes in {}", vault.display());
    let mut c = config.clone();
    c.vaults = vec![VaultEntry { name: sanitize(name), root: vault }];
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

pub fn run(config: &Config, only: Option<&str>, args: EvalArgs) -> Result<(), Failure> {
    let set = eval::load(&args.queries)?;
    if set.queries.is_empty() {
        return Err(fail(format!("{} holds no queries", args.queries.display())));
    }
    let beir = args.queries.is_dir();
    let config = if beir {
        beir_config(config, &args.queries, &set.name)?
    } else {
        let mut c = config.clone();
        c.data_dir = eval_home(config, &set.name);
        c
    };
    let k = args.k.unwrap_or(if beir { 10 } else { config.search.default_k }).clamp(1, 100);
    let engine = Engine::open(config).map_err(|e| fail(e.message().to_string()))?;
    let report = Report::new();
    let synced = engine.sync(only, false, &report)?;
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

    let embedder = engine.index().embedder().model_id().to_string();
    // The dense arm is judged only with a real model: hashed vectors know no paraphrase.
    let real_model = !embedder.starts_with("hashing");
    let reranker = !engine.config().rerank.url.is_empty();
    let ways: Vec<Way> = WAYS
        .iter()
        .copied()
        .filter(|w| args.modes.is_empty() || args.modes.iter().any(|m| m.trim() == w.name))
        .filter(|w| reranker || !w.rerank)
        .collect();
    if let Some(bad) = args.modes.iter().find(|m| !WAYS.iter().any(|w| w.name == m.trim())) {
        return Err(fail(format!(
            "--modes {bad:?}: use lexical, dense, hybrid, rerank or thorough"
        )));
    }
    if ways.is_empty() {
        return Err(fail("no mode to run: rerank and thorough need rerank.url"));
    }
    // R@100 needs a hundred results, but a k=100 search caps and diversifies differently:
    // the first-k metrics come from the k run, recall@100 from a second one.
    let deep = set.queries.iter().any(|q| matches!(q.relevant, eval::Relevant::Graded(_)));

    let mut runs = Vec::new();
    for way in &ways {
        runs.push(run_mode(&engine, only, &set, *way, k, deep, real_model)?);
    }

    let recorded = Baseline {
        queries: set.name.clone(),
        k,
        embedder: embedder.clone(),
        ranks: runs
            .iter()
            .map(|r| {
                let ranks = set
                    .queries
                    .iter()
                    .zip(&r.outcomes)
                    .filter(|(q, o)| o.scored && r.way.gates(q.arm))
                    .map(|(q, o)| (q.id.clone(), o.result.rank.filter(|r| *r <= k)))
                    .collect();
                (r.way.name.to_string(), ranks)
            })
            .collect(),
        summaries: runs.iter().map(|r| (r.way.name.to_string(), r.summary.clone())).collect(),
    };

    let mut comparison = None;
    if let Some(path) = &args.baseline {
        let leaking = runs.iter().any(|r| r.summary.leaks > 0);
        if args.update_baseline && !leaking {
            let text = serde_json::to_string_pretty(&recorded).unwrap_or_default();
            std::fs::write(path, text + "\n")
                .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
        } else if !args.update_baseline {
            let text = std::fs::read_to_string(path).map_err(|e| {
                fail(format!(
                    "cannot read the baseline {}: {e}; record one with --update-baseline",
                    path.display()
                ))
            })?;
            let old: Baseline = serde_json::from_str(&text)
                .map_err(|e| fail(format!("{} is not an eval baseline: {e}", path.display())))?;
            // Not comparable is a usage problem (exit 2), not a regression (exit 1).
            comparison =
                Some(eval::compare(&old, &recorded).map_err(|e| fail(e.message().to_string()))?);
        }
    }

    let leaks: usize = runs.iter().map(|r| r.summary.leaks).sum();
    let regressions = comparison.as_ref().map_or(0, |c| c.regressions.len());
    if args.json {
        print_json(&to_json(&set, &engine, k, &embedder, &runs, comparison.as_ref(), &args));
    } else {
        print(&render(&set, &engine, k, &embedder, &runs, comparison.as_ref(), &args));
    }
    if leaks > 0 || regressions > 0 {
        return Err(Failure::Exit(1));
    }
    Ok(())
}

fn run_mode(
    engine: &Engine,
    only: Option<&str>,
    set: &QuerySet,
    way: Way,
    k: usize,
    deep: bool,
    real_model: bool,
) -> Result<ModeRun, Failure> {
    let mut outcomes = Vec::with_capacity(set.queries.len());
    let mut latencies = Vec::with_capacity(set.queries.len());
    for q in &set.queries {
        let req = |k: usize| SearchRequest {
            query: q.text.clone(),
            k: Some(k),
            vault: only.map(str::to_string),
            prefix: None,
            thorough: way.thorough,
            rerank: way.rerank,
            mode: way.mode,
            query_vector: None,
        };
        let started = Instant::now();
        let resp = engine.search(&req(k))?;
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        let paths: Vec<String> = resp.results.iter().map(|h| h.path.clone()).collect();
        let mut result = eval::score(q, &paths, k);
        if deep && k < 100 {
            let wide = engine.search(&req(100))?;
            let wide: Vec<String> = wide.results.iter().map(|h| h.path.clone()).collect();
            result.recall100 = eval::score(q, &wide, 100).recall100;
        }
        let scored = q.scored() && (q.arm != Arm::Dense || real_model);
        let mut top = Vec::new();
        for p in paths {
            if !top.contains(&p) {
                top.push(p);
            }
        }
        outcomes.push(Outcome { scored, result, top });
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

fn render(
    set: &QuerySet,
    engine: &Engine,
    k: usize,
    embedder: &str,
    runs: &[ModeRun],
    comparison: Option<&Comparison>,
    args: &EvalArgs,
) -> String {
    let scored = runs.first().map_or(0, |r| r.summary.scored);
    let mut out = format!(
        "{}: {} queries, {} scored · k={k} · embedder {embedder} · vaults: {}\n\n",
        set.name,
        set.queries.len(),
        scored,
        vault_list(engine)
    );
    let graded = set.queries.iter().any(|q| matches!(q.relevant, eval::Relevant::Graded(_)));
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

    // Where the default mode fell short, query by query (not for a thousand BEIR queries).
    if let Some(main) = runs.iter().find(|r| r.way.name == "hybrid").or(runs.first())
        && !graded
    {
        let mut lines = Vec::new();
        for (q, o) in set.queries.iter().zip(&main.outcomes) {
            let first = o.top.first().map_or("(nothing)", String::as_str);
            if !o.result.leaks.is_empty() {
                lines.push(format!("  LEAK  {:?}: returned {}", q.text, o.result.leaks.join(", ")));
            } else if o.scored && o.result.rank != Some(1) {
                let rank = o.result.rank.filter(|r| *r <= k);
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

    let leaks: usize = runs.iter().map(|r| r.summary.leaks).sum();
    if let Some(c) = comparison {
        out.push('\n');
        let show = |c: &eval::Change| {
            let r = |r: Option<usize>| r.map_or("miss".to_string(), |r| format!("#{r}"));
            format!("  {:<9} {:?}: {} -> {}", c.mode, c.id, r(c.before), r(c.after))
        };
        if c.regressions.is_empty() {
            out.push_str("baseline: no regressions\n");
        } else {
            out.push_str(&format!("baseline: {} REGRESSIONS\n", c.regressions.len()));
            out.extend(c.regressions.iter().map(|x| show(x) + "\n"));
        }
        if !c.improvements.is_empty() {
            out.push_str(&format!("improvements ({}):\n", c.improvements.len()));
            out.extend(c.improvements.iter().map(|x| show(x) + "\n"));
        }
        if !c.new.is_empty() {
            out.push_str(&format!(
                "{} queries are new to the baseline (record them with --update-baseline)\n",
                c.new.len()
            ));
        }
        if !c.modes_not_compared.is_empty() {
            out.push_str(&format!(
                "not compared (only one side ran them): {}\n",
                c.modes_not_compared.join(", ")
            ));
        }
    } else if let Some(p) = args.baseline.as_ref().filter(|_| args.update_baseline && leaks == 0) {
        out.push_str(&format!("\nrecorded this run as the baseline in {}\n", p.display()));
    }
    if leaks > 0 {
        out.push_str(&format!(
            "\nFAILED: {leaks} never-leaks (a path that must never appear did){}\n",
            if args.update_baseline { "; the baseline was not recorded" } else { "" }
        ));
    }
    out
}

fn to_json(
    set: &QuerySet,
    engine: &Engine,
    k: usize,
    embedder: &str,
    runs: &[ModeRun],
    comparison: Option<&Comparison>,
    args: &EvalArgs,
) -> Value {
    let modes: Vec<Value> = runs
        .iter()
        .map(|r| {
            let queries: Vec<Value> = set
                .queries
                .iter()
                .zip(&r.outcomes)
                .map(|(q, o)| {
                    json!({
                        "id": q.id,
                        "arm": q.arm.as_str(),
                        "scored": o.scored,
                        "rank": o.result.rank,
                        "mrr10": o.result.mrr10,
                        "ndcg10": o.result.ndcg10,
                        "recall": o.result.recall,
                        "max_per_note": o.result.max_per_note,
                        "leaks": o.result.leaks,
                        "top": o.top.iter().take(3).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({
                "mode": r.way.name,
                "summary": r.summary,
                "latency_ms": {"p50": r.p50_ms, "p95": r.p95_ms},
                "queries": queries,
            })
        })
        .collect();
    let mut out = json!({
        "queries": set.name,
        "count": set.queries.len(),
        "k": k,
        "embedder": embedder,
        "vaults": engine.vaults().iter().map(|v| v.name().to_string()).collect::<Vec<_>>(),
        "modes": modes,
        "leaks": runs.iter().map(|r| r.summary.leaks).sum::<usize>(),
    });
    if let Some(c) = comparison {
        out["baseline"] = json!(c);
    } else if args.update_baseline {
        out["baseline"] = json!({"recorded": args.baseline});
    }
    out
}
