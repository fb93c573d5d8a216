//! `mdvault index` and `mdvault search`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;

use super::{Failure, print, print_json};
use crate::engine::Engine;
use crate::index::{Pass, Progress};
use crate::search::Mode;
use crate::wire;

/// `mdvault index`.
#[derive(Debug, Args)]
pub(crate) struct IndexArgs {
    /// Re-read and re-chunk every file of the vault (only the vault given with --vault, or
    /// every vault), even unchanged ones; texts that already have vectors are not embedded
    /// again.
    #[arg(long)]
    full: bool,
    /// A full pass that also embeds every text again, replacing the stored vectors: for a
    /// model folder whose weights changed in a way the index cannot see (same name and
    /// size). Slow: every text is embedded.
    #[arg(long)]
    re_embed: bool,
}

/// `mdvault search`.
#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// What to look for: words, a question, or an exact identifier.
    query: String,
    /// How many results (default: search.default_k).
    #[arg(short, long)]
    k: Option<usize>,
    /// Only this folder, e.g. Home/Utilities.
    #[arg(long)]
    prefix: Option<String>,
    /// Rerank more candidates and order purely by the reranker (needs rerank.url).
    #[arg(long)]
    thorough: bool,
    /// Skip the reranker even when one is configured.
    #[arg(long)]
    no_rerank: bool,
    /// Show ranks, scores and the fusion constants.
    #[arg(long)]
    explain: bool,
    /// lexical, dense or hybrid (default).
    #[arg(long, default_value = "hybrid")]
    mode: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// A terminal progress bar, or plain log lines when stderr is not a terminal.
pub(super) struct Report {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    last: Mutex<(usize, Instant)>,
    clock: crate::index::ProgressClock,
}

impl Report {
    pub(super) fn new() -> Report {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix:>9} [{bar:30}] {pos}/{len} {msg} ETA {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
        Report {
            bar,
            started: Instant::now(),
            last: Mutex::new((usize::MAX, Instant::now())),
            clock: crate::index::ProgressClock::new(""),
        }
    }

    /// Clears the bar, if there is one.
    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn step(&self, what: &str, done: usize, total: usize) {
        self.clock.record(what, done, total);
        if let Some(bar) = &self.bar {
            bar.set_prefix(what.to_string());
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            if what == "embedding" {
                let rate = done as f64 / self.started.elapsed().as_secs_f64().max(0.001);
                bar.set_message(format!("chunks ({rate:.1}/s)"));
            } else {
                bar.set_message("files");
            }
            return;
        }
        // Without a terminal: a line every ten seconds and at the end of each phase.
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if done == total || last.1.elapsed().as_secs() >= 10 || last.0 == usize::MAX {
            if done == total && last.0 == done {
                return;
            }
            let eta = match self.clock.snapshot().and_then(|p| p.eta_seconds) {
                Some(s) if done < total => {
                    format!(", about {} left", crate::index::human_seconds(s))
                }
                _ => String::new(),
            };
            eprintln!("{what}: {done}/{total}{eta}");
            *last = (done, Instant::now());
        }
    }
}

impl Progress for Report {
    fn files(&self, done: usize, total: usize) {
        self.step("files", done, total);
    }

    fn embedded(&self, done: usize, total: usize) {
        self.step("embedding", done, total);
    }
}

/// How often `mdvault index` asks the owning process how far its pass is: often enough for a
/// live bar, rarely enough to cost the owner nothing.
const OWNER_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// `mdvault index`. One process at a time writes a data directory's index: when a server (or
/// another command) owns it, the pass is asked of that process, which runs it on its indexer
/// and answers with the report; otherwise this process owns the index for the pass.
pub(crate) fn index(
    config: crate::config::Config,
    only: Option<&str>,
    args: IndexArgs,
) -> Result<(), Failure> {
    let data_dir = config.data_dir.clone();
    let engine = super::open_engine(config)?;
    let engine = &engine;
    let owner = engine.owner_info();
    if let Some(o) = &owner {
        eprintln!(
            "mdvault `{}` (pid {}) owns this index; asking it to do the pass",
            o.command, o.pid
        );
    }
    let report = Report::new();
    let pass = if args.re_embed { Pass::ReEmbed } else { Pass::from_full(args.full) };
    let done = std::sync::atomic::AtomicBool::new(false);
    let results = std::thread::scope(|scope| {
        // The owner runs the pass and answers only at its end: show its progress meanwhile
        // (and that of a pass it was already running, such as a server's first build).
        if owner.is_some() {
            let (report, done, data_dir) = (&report, &done, &data_dir);
            scope.spawn(move || {
                let client = crate::engine::owner::OwnerClient::new(data_dir);
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    if let Some(p) = client.hello().ok().and_then(|o| o.progress) {
                        match p.stage.as_str() {
                            "embedding" => report.embedded(p.done, p.total),
                            _ => report.files(p.done, p.total),
                        }
                    }
                    std::thread::sleep(OWNER_POLL);
                }
            });
        }
        let results = engine.pass(only, pass, &report);
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        results
    });
    report.finish();
    let results = match results {
        Ok(r) => r,
        // The owner indexes other vaults: a setup problem, not a refusal of this request.
        Err(e) if owner.is_some() && e.code() == crate::error::ErrorCode::NotReady => {
            return Err(Failure::Config(e.message().to_string()));
        }
        Err(e) => return Err(e.into()),
    };
    for (vault, r) in &results {
        print(&format!(
            "{vault}: {} files ({} re-chunked, {} unchanged, {} removed, {} failed), {} texts embedded, {} reused, in {:.1} s",
            r.files_seen,
            r.files_chunked,
            r.files_unchanged,
            r.files_removed,
            r.failed.len(),
            r.texts_embedded,
            r.texts_reused,
            r.seconds
        ));
        for (path, why) in &r.failed {
            print(&format!("  failed: {path}: {why}"));
        }
    }
    if owner.is_none() {
        let (chunks, vectors) = engine.index().counts();
        print(&format!("index: {chunks} chunks, {vectors} with vectors"));
    }
    Ok(())
}

pub(crate) fn search(engine: &Engine, only: Option<&str>, args: SearchArgs) -> Result<(), Failure> {
    let mode = match args.mode.as_str() {
        "hybrid" => Mode::Hybrid,
        "lexical" => Mode::Lexical,
        "dense" => Mode::Dense,
        other => {
            return Err(Failure::Config(format!("--mode {other:?}: use hybrid, lexical or dense")));
        }
    };
    // The same request every surface builds (the empty-query refusal, the k default and
    // clamp, the vault rule); the CLI adds its own mode and reranker switch.
    let args_k = args.k;
    let mut req = crate::service::search_request(
        engine,
        &crate::service::Target::default(),
        crate::service::SearchArgs {
            query: args.query.clone(),
            k: args_k,
            prefix: args.prefix.clone(),
            vault: only.map(str::to_string),
            thorough: args.thorough,
        },
    )?;
    req.mode = mode;
    req.rerank = !args.no_rerank;
    let resp = engine.search(&req)?;
    if args.json {
        print_json(&wire::search(&resp, args.explain));
        return Ok(());
    }
    for n in &resp.notices {
        eprintln!("note: {n}");
    }
    if resp.results.is_empty() {
        print(&format!("no matches for \"{}\"", args.query));
        return Ok(());
    }
    let mut out = String::new();
    for hit in &resp.results {
        let label =
            if hit.pinned { "pinned".to_string() } else { hit.matched.as_str().to_string() };
        let heading =
            if hit.heading.is_empty() { String::new() } else { format!(" § {}", hit.heading) };
        let place =
            if hit.document { "document".to_string() } else { format!("line {}", hit.line) };
        out.push_str(&format!(
            "{label:<8} [{}] {}{heading}  ({place}, score {:.3})\n",
            hit.vault, hit.path, hit.explain.score
        ));
        out.push_str(&format!("         {}\n", hit.excerpt));
        if args.explain {
            let e = &hit.explain;
            let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
            let raw = |s: Option<f32>| s.map_or("-".to_string(), |s| format!("{s:.3}"));
            out.push_str(&format!(
                "         dense #{} ({}, part {:.4}) lexical #{} ({}, part {:.4}) rerank #{} fused {:.4} weight {:.2} relevance {:.4} score {:.4}\n",
                rank(e.dense_rank),
                raw(e.dense_score),
                e.dense_part,
                rank(e.lexical_rank),
                raw(e.lexical_score),
                e.lexical_part,
                rank(e.rerank_rank),
                e.fused,
                e.weight,
                e.relevance,
                e.score
            ));
        }
        out.push('\n');
    }
    if args.explain {
        let e = &resp.explain;
        out.push_str(&format!(
            "tokens {:?}; rarest df {}; lookup {}; fusion {} rrf_k {} lexical weight {} candidates {} document weight {} mmr λ {} cap {}; rerank {}\n",
            e.tokens,
            e.rarest,
            if e.lookup_fired { "pinned" } else { "did not fire" },
            e.fusion.name(),
            e.rrf_k,
            e.lexical_weight,
            e.candidates,
            e.document_weight,
            e.mmr_lambda,
            e.cap,
            e.rerank
        ));
    }
    print(out.trim_end());
    Ok(())
}
