//! `mdvault index` and `mdvault search`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;

use super::{Failure, print, print_json};
use crate::engine::Engine;
use crate::index::Progress;
use crate::search::{Mode, SearchRequest};
use crate::wire;

/// `mdvault index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Drop the index and rebuild it from scratch (re-chunk and re-embed everything).
    #[arg(long)]
    full: bool,
}

/// `mdvault search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
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
        Report { bar, started: Instant::now(), last: Mutex::new((usize::MAX, Instant::now())) }
    }

    /// Clears the bar, if there is one.
    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn step(&self, what: &str, done: usize, total: usize) {
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
            eprintln!("{what}: {done}/{total}");
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

/// When a server already serves these vaults from this data directory (it holds the index,
/// and only one process may write it), `index` asks it to do the pass over REST instead. The
/// key is MDVAULT_API_KEY, else the one `service install` or `start.sh` kept. Nothing
/// listening, another data directory or no key it accepts means "no server", and the local
/// pass runs; a server writing this data directory's index for other vaults is a refusal.
fn via_server(
    config: &crate::config::Config,
    only: Option<&str>,
    full: bool,
) -> Result<Option<serde_json::Value>, Failure> {
    let keys = super::service::known_keys(&config.data_dir);
    let listen = std::env::var("MDVAULT_LISTEN")
        .ok()
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| config.server.listen.clone());
    let base = format!("http://{listen}");
    let probe = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(3)))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut found = None;
    for (key, _) in keys {
        let auth = format!("Bearer {key}");
        let Ok(mut ready) =
            probe.get(format!("{base}/readyz")).header("Authorization", &auth).call()
        else {
            return Ok(None);
        };
        if matches!(ready.status().as_u16(), 401 | 403) {
            continue;
        }
        let Ok(body) = ready.body_mut().read_json::<serde_json::Value>() else { return Ok(None) };
        found = Some((auth, body));
        break;
    }
    let Some((auth, body)) = found else { return Ok(None) };
    // The same vaults indexed into another data directory (`--data-dir`) are another index:
    // that one is ours to write, and the server's must not be updated in its place.
    let same_store = body["store"]["path"].as_str().is_some_and(|theirs| {
        let canon = |p: &std::path::Path| p.canonicalize().ok();
        canon(std::path::Path::new(theirs))
            .is_some_and(|t| canon(&config.data_dir.join("index.db")) == Some(t))
    });
    if !same_store {
        return Ok(None);
    }
    // (server name, root) pairs; the roots must be ours, in order, for the server to be ours.
    let served: Vec<(String, String)> = body["vaults"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter_map(|v| {
                    Some((v["name"].as_str()?.to_string(), v["root"].as_str()?.to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    let mine: Vec<(String, String)> = config
        .vaults
        .iter()
        .map(|v| {
            let root = v.root.canonicalize().unwrap_or_else(|_| v.root.clone());
            (v.name.clone(), root.display().to_string())
        })
        .collect();
    if served.iter().map(|s| &s.1).ne(mine.iter().map(|m| &m.1)) {
        let roots = |v: &[(String, String)]| {
            v.iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>().join(", ")
        };
        return Err(Failure::Config(format!(
            "the server at {base} writes the index in {} for other vaults ({}), so this pass \
             for {} cannot run beside it; give `index` the server's vaults, stop the server, or \
             use another --data-dir",
            config.data_dir.display(),
            roots(&served),
            roots(&mine)
        )));
    }
    // A bare /reindex means the server's default vault only: ask for each vault by the
    // server's own name for it (the names may differ from ours; the roots do not).
    let wanted: Vec<&String> = served
        .iter()
        .zip(&mine)
        .filter(|(_, m)| only.is_none_or(|n| n == m.0))
        .map(|(s, _)| &s.0)
        .collect();
    eprintln!("a server at {base} holds the index; asking it to do the pass");
    // A pass may take as long as a build, but never forever (a nightly unit waits on it).
    let agent = ureq::Agent::config_builder()
        .timeout_connect(Some(std::time::Duration::from_secs(10)))
        .timeout_global(Some(std::time::Duration::from_secs(6 * 3600)))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut vaults = Vec::new();
    for name in wanted {
        let url = format!("{base}/v/{name}/reindex{}", if full { "?full=1" } else { "" });
        let mut resp =
            agent.post(&url).header("Authorization", &auth).send_empty().map_err(|e| {
                Failure::Config(format!("the server at {base} did not answer: {e}"))
            })?;
        let status = resp.status().as_u16();
        let answer: serde_json::Value = resp.body_mut().read_json().unwrap_or_default();
        if status != 200 {
            return Err(Failure::Config(format!(
                "the server at {base} refused the pass for {name} ({status}): {}",
                answer["error"].as_str().unwrap_or("no reason given")
            )));
        }
        vaults.extend(answer["vaults"].as_array().cloned().unwrap_or_default());
    }
    Ok(Some(serde_json::json!({ "vaults": vaults })))
}

pub fn index(
    config: crate::config::Config,
    only: Option<&str>,
    args: IndexArgs,
) -> Result<(), Failure> {
    if let Some(answer) = via_server(&config, only, args.full)? {
        for v in answer["vaults"].as_array().into_iter().flatten() {
            print(&format!(
                "{}: {} files ({} re-chunked, {} removed, {} failed), {} texts embedded in {} s",
                v["vault"].as_str().unwrap_or("?"),
                v["files_seen"],
                v["files_chunked"],
                v["files_removed"],
                v["failed"].as_array().map_or(0, Vec::len),
                v["texts_embedded"],
                v["seconds"]
            ));
            for f in v["failed"].as_array().into_iter().flatten() {
                print(&format!(
                    "  failed: {}: {}",
                    f["path"].as_str().unwrap_or("?"),
                    f["error"].as_str().unwrap_or("?")
                ));
            }
        }
        return Ok(());
    }
    let engine = super::open_engine(config)?;
    let engine = &engine;
    let report = Report::new();
    let results = engine.sync(only, args.full, &report)?;
    report.finish();
    let (chunks, vectors) = engine.index().counts();
    for (vault, r) in &results {
        print(&format!(
            "{vault}: {} files ({} re-chunked, {} unchanged, {} removed, {} failed), {} texts embedded in {:.1} s",
            r.files_seen,
            r.files_chunked,
            r.files_unchanged,
            r.files_removed,
            r.failed.len(),
            r.texts_embedded,
            r.seconds
        ));
        for (path, why) in &r.failed {
            print(&format!("  failed: {path}: {why}"));
        }
    }
    print(&format!("index: {chunks} chunks, {vectors} with vectors"));
    Ok(())
}

pub fn search(engine: &Engine, only: Option<&str>, args: SearchArgs) -> Result<(), Failure> {
    let mode = match args.mode.as_str() {
        "hybrid" => Mode::Hybrid,
        "lexical" => Mode::Lexical,
        "dense" => Mode::Dense,
        other => {
            return Err(Failure::Config(format!("--mode {other:?}: use hybrid, lexical or dense")));
        }
    };
    let req = SearchRequest {
        query: args.query.clone(),
        k: args.k,
        vault: only.map(str::to_string),
        prefix: args.prefix.clone(),
        thorough: args.thorough,
        rerank: !args.no_rerank,
        mode,
        query_vector: None,
        candidates: None,
    };
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
        out.push_str(&format!("{label:<8} [{}] {}{heading}  ({place})\n", hit.vault, hit.path));
        out.push_str(&format!("         {}\n", hit.excerpt));
        if args.explain {
            let e = &hit.explain;
            let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
            out.push_str(&format!(
                "         dense #{} lexical #{} rerank #{} fused {:.4} weight {:.2} score {:.4}\n",
                rank(e.dense_rank),
                rank(e.lexical_rank),
                rank(e.rerank_rank),
                e.fused,
                e.weight,
                e.score
            ));
        }
        out.push('\n');
    }
    if args.explain {
        let e = &resp.explain;
        out.push_str(&format!(
            "tokens {:?}; rarest df {}; lookup {}; rrf_k {} lexical weight {} candidates {} document weight {} mmr λ {} cap {}; rerank {}\n",
            e.tokens,
            e.rarest,
            if e.lookup_fired { "pinned" } else { "did not fire" },
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
