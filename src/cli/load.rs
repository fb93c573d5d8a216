//! `mdvault bench --load`: many clients at once against a running server, over its REST API.
//!
//! `--searchers` threads send searches and `--writers` threads write notes for `--seconds`;
//! then every acknowledged write is read back and compared, and a sample of them is searched
//! for. It prints the status codes per kind of request, latency percentiles, throughput, how
//! far each write's re-index had got when it answered (`indexed`), and lost writes. It
//! measures and asserts nothing; the exit status is 0 whatever it finds, unless the server
//! cannot be reached at all.
//!
//! It does not start a server: it measures the one at `--url` (default: the configured listen
//! address) with the key the other commands find (`MDVAULT_API_KEY`, the installed service's
//! environment file, or the data directory's `api-key`). Writers write only below a scratch
//! folder of their own (`mdvault-load/<run>/`), which is deleted afterwards.
//!
//! Why blocking `ureq` on one thread per client rather than an async client: every client is
//! a loop of one request at a time, 55 threads are nothing to the OS, and the HTTP client the
//! crate already uses (the HTTP embedder, the reranker) is the one measured.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Failure, print, print_json};
use crate::config::Config;
use crate::error::{Error, ErrorCode};
use crate::wire::{Load, LoadBuild, LoadKind, LoadMs, LoadReport};

/// The load options of `mdvault bench`.
#[derive(Debug, Args)]
pub(crate) struct LoadArgs {
    /// Run the load benchmark against a running server instead of the other figures.
    #[arg(long)]
    load: bool,
    /// The server to load (default: http:// and the configured listen address).
    #[arg(long, value_name = "URL", requires = "load")]
    url: Option<String>,
    /// Clients that search in a loop.
    #[arg(long, default_value_t = 50, requires = "load")]
    searchers: usize,
    /// Clients that write notes in a loop (a new note, or an append to their last one).
    #[arg(long, default_value_t = 5, requires = "load")]
    writers: usize,
    /// How long the clients run.
    #[arg(long, default_value_t = 60.0, requires = "load")]
    seconds: f64,
    /// Make every query text unique (a number appended), so that no query vector comes from
    /// the server's cache of recent queries: the cost of a search that embeds its query.
    #[arg(long, requires = "load")]
    distinct_queries: bool,
    /// Run while the server is still building its index (`/readyz` answering 503 with
    /// `building`), to measure searches beside document embedding; the report says how many
    /// vectors the build added during the run.
    #[arg(long, requires = "load")]
    while_building: bool,
}

impl LoadArgs {
    /// Whether `--load` was given.
    pub(crate) fn wanted(&self) -> bool {
        self.load
    }
}

/// Results asked for per search: what an agent asks for.
const SEARCH_K: usize = 5;
/// A request still unanswered after this counts as an error (status 0): far beyond anything a
/// healthy server takes, short enough that a stuck one cannot hang the run.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Acknowledged writes searched for after the run.
const SEARCH_SAMPLE: usize = 20;
/// Notes listed at most when collecting note titles as queries.
const TITLE_LIMIT: usize = 400;
/// Queries used when the vault yields too few titles.
const FALLBACK_QUERIES: &[&str] = &[
    "how do I configure the server",
    "meeting notes from last week",
    "boiler pressure settings",
    "search syntax",
    "install the plugin",
    "keyboard shortcuts",
    "backup and sync",
    "links between notes",
    "daily journal template",
    "embedding model",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Search,
    Put,
    Append,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Search => "search",
            Kind::Put => "put",
            Kind::Append => "append",
        }
    }
}

/// One request's outcome: status 0 is a transport error or a timeout.
struct Sample {
    kind: Kind,
    status: u16,
    micros: u64,
}

/// An acknowledged write, remembered to be read back.
struct Ack {
    path: String,
    kind: Kind,
    /// The unique token the write carried.
    token: String,
    /// The whole note for a put, the added line for an append.
    text: String,
    /// The content hash the answer gave.
    etag: String,
    /// When it was acknowledged (orders the writes of one note).
    seq: usize,
}

/// Everything the clients report, behind one lock (taken once per request: negligible next to
/// a request's milliseconds).
#[derive(Default)]
struct Log {
    samples: Vec<Sample>,
    acks: Vec<Ack>,
    indexed: BTreeMap<String, usize>,
}

struct Client {
    base: String,
    key: String,
    agent: ureq::Agent,
}

impl Client {
    fn new(base: &str, key: &str) -> Client {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(REQUEST_TIMEOUT))
            .http_status_as_error(false)
            .max_idle_connections_per_host(256)
            .max_idle_connections(256)
            .user_agent(concat!("mdvault-bench/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Client { base: base.trim_end_matches('/').to_string(), key: key.to_string(), agent }
    }

    /// Sends one request; the status (0 on a transport error) and the body.
    fn call(&self, method: &str, path: &str, body: Option<&str>, json: bool) -> (u16, String) {
        let url = format!("{}{path}", self.base);
        let auth = format!("Bearer {}", self.key);
        let accept = if json { "application/json" } else { "*/*" };
        let result = match (method, body) {
            ("GET", _) => {
                self.agent.get(&url).header("Authorization", &auth).header("Accept", accept).call()
            }
            ("DELETE", _) => self.agent.delete(&url).header("Authorization", &auth).call(),
            ("PUT", Some(b)) => self
                .agent
                .put(&url)
                .header("Authorization", &auth)
                .header("Accept", accept)
                .header("Content-Type", "text/markdown")
                .send(b),
            (_, b) => self
                .agent
                .post(&url)
                .header("Authorization", &auth)
                .header("Accept", accept)
                .header("Content-Type", "text/markdown")
                .send(b.unwrap_or("")),
        };
        match result {
            Ok(mut resp) => {
                let status = resp.status().as_u16();
                let text = resp.body_mut().read_to_string().unwrap_or_default();
                (status, text)
            }
            Err(_) => (0, String::new()),
        }
    }
}

fn fail(msg: impl Into<String>) -> Failure {
    Failure::Refused(Error::new(ErrorCode::InternalError, msg.into()))
}

fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn encode_path(p: &str) -> String {
    p.split('/').map(encode).collect::<Vec<_>>().join("/")
}

/// Note titles (file stems) from the server's listings, as realistic queries; the fixed list
/// when the vault has too few.
fn queries(client: &Client) -> Vec<String> {
    let mut out = Vec::new();
    let mut folders = vec![String::new()];
    let mut listed = 0;
    while let Some(dir) = folders.pop() {
        if out.len() >= TITLE_LIMIT || listed >= 200 {
            break;
        }
        listed += 1;
        let path = if dir.is_empty() { "/vault/".to_string() } else { format!("/vault/{dir}/") };
        let (status, body) = client.call("GET", &encode_path(&path), None, true);
        let Ok(listing) = serde_json::from_str::<Value>(&body) else { continue };
        if status != 200 {
            continue;
        }
        for e in listing["entries"].as_array().into_iter().flatten() {
            let (Some(kind), Some(p)) = (e["kind"].as_str(), e["path"].as_str()) else { continue };
            match kind {
                "folder" if !p.starts_with("mdvault-load") => {
                    folders.push(p.trim_end_matches('/').to_string())
                }
                "note" => {
                    let stem = e["name"].as_str().unwrap_or(p).trim_end_matches(".md");
                    if stem != "index" && stem.chars().any(char::is_alphabetic) {
                        out.push(stem.replace(['-', '_'], " "));
                    }
                }
                _ => {}
            }
        }
    }
    if out.len() < FALLBACK_QUERIES.len() {
        out.extend(FALLBACK_QUERIES.iter().map(|q| q.to_string()));
    }
    out
}

/// A base36 stamp for this run, so its scratch folder and tokens are its own.
fn run_id() -> String {
    let mut n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64 ^ u64::from(std::process::id()));
    let mut s = String::new();
    while n > 0 {
        let d = (n % 36) as u32;
        s.push(char::from_digit(d, 36).unwrap_or('0'));
        n /= 36;
    }
    s
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)] as f64 / 1000.0
}

fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a `/readyz` answer's index is building, and its vectors so far.
fn index_state(body: &str) -> Option<(bool, u64)> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let index = v.get("index")?;
    Some((index.get("building")?.as_bool()?, index.get("vectors")?.as_u64()?))
}

/// The vectors so far of a `/readyz` answer whose index is building, `None` for any other.
fn building(body: &str) -> Option<u64> {
    index_state(body).and_then(|(building, vectors)| building.then_some(vectors))
}

/// `mdvault bench --load`.
pub(crate) fn run(config: &Config, args: &LoadArgs, json_out: bool) -> Result<(), Failure> {
    let base = args.url.clone().unwrap_or_else(|| format!("http://{}", config.server.listen));
    let key = super::service::known_keys(&config.data_dir)
        .into_iter()
        .next()
        .map(|(k, _)| k)
        .ok_or_else(|| {
            Failure::Config(
                "no API key: set MDVAULT_API_KEY to the key the server runs with".to_string(),
            )
        })?;
    let client = Client::new(&base, &key);
    let build_before = match client.call("GET", "/readyz", None, true) {
        (200, _) if args.while_building => {
            return Err(fail(format!(
                "{base} has finished building its index; --while-building measures a server \
                 whose build is under way (start one over an empty data directory)"
            )));
        }
        (200, _) => None,
        (0, _) => {
            return Err(Failure::Config(format!(
                "no server answers at {base}; start one (`mdvault serve`) or pass --url"
            )));
        }
        (503, body) if args.while_building && building(&body).is_some() => building(&body),
        (s, body) => return Err(fail(format!("{base}/readyz answered {s}: {body}"))),
    };
    let queries = queries(&client);
    let run = run_id();
    let folder = format!("mdvault-load/{run}");
    let say = |line: String| {
        if !json_out {
            print(&line);
        }
    };
    say(format!(
        "load: {} searchers and {} writers for {} s against {base}; {} queries from note titles{}; \
         writes under {folder}/",
        args.searchers,
        args.writers,
        args.seconds,
        queries.len(),
        if args.distinct_queries { ", each made distinct" } else { "" }
    ));

    let clients = Clients { base: &base, key: &key, queries: &queries, folder: &folder, run: &run };
    let (log, elapsed) = drive(args, &clients);
    let during_build = build_before.map(|before| {
        let (status, body) = client.call("GET", "/readyz", None, true);
        LoadBuild {
            vectors_before: before,
            vectors_after: index_state(&body).map_or(before, |(_, vectors)| vectors),
            finished: status == 200,
        }
    });
    if let Some(b) = &during_build {
        say(format!(
            "beside an index build: it embedded {} texts during the run ({} → {} vectors){}",
            b.vectors_after.saturating_sub(b.vectors_before),
            b.vectors_before,
            b.vectors_after,
            if b.finished { "; it finished before the run ended" } else { "" }
        ));
    }
    let (kinds, errors) = per_kind(&log, elapsed, &say);
    let indexed: Vec<String> = log.indexed.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    say(format!("writes' `indexed` when answered: {}", indexed.join(", ")));
    let lost = lost_writes(&client, &log);
    say(format!(
        "acknowledged writes: {}; lost: {}{}",
        log.acks.len(),
        lost.len(),
        lost.iter().take(5).map(|l| format!("\n  {l}")).collect::<String>()
    ));
    let (searched, found) = searchable(&client, &log);
    say(format!("search finds {found} of {searched} sampled acknowledged writes"));
    say(format!("errors (non-2xx or no answer): {errors}"));

    let (status, _) =
        client.call("DELETE", &format!("/folder/{}?recursive=1", encode_path(&folder)), None, true);
    if !(200..300).contains(&status) {
        say(format!("could not delete the scratch folder {folder}/ ({status}); remove it by hand"));
    }
    // The parent goes too when no other run's folder is left in it.
    let _ = client.call("DELETE", "/folder/mdvault-load", None, true);
    if json_out {
        print_json(&LoadReport {
            load: Load {
                url: base.clone(),
                searchers: args.searchers,
                writers: args.writers,
                distinct_queries: args.distinct_queries,
                seconds: elapsed,
                kinds,
                errors,
                indexed: log.indexed,
                acknowledged_writes: log.acks.len(),
                lost_writes: lost.len(),
                lost,
                searched,
                found,
                during_build,
            },
        });
    }
    Ok(())
}

/// What every client thread shares: where to send, the queries, and this run's scratch folder
/// and stamp.
struct Clients<'a> {
    base: &'a str,
    key: &'a str,
    queries: &'a [String],
    folder: &'a str,
    run: &'a str,
}

/// Runs the searchers and writers until `--seconds` have passed; what they logged, and the
/// seconds it took.
fn drive(args: &LoadArgs, clients: &Clients) -> (Log, f64) {
    let log = Mutex::new(Log::default());
    let seq = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(args.seconds.max(0.0));
    std::thread::scope(|scope| {
        for s in 0..args.searchers {
            let log = &log;
            let distinct = args.distinct_queries;
            scope.spawn(move || search_loop(clients, s, distinct, until, log));
        }
        for w in 0..args.writers {
            let (log, seq) = (&log, &seq);
            scope.spawn(move || write_loop(clients, w, until, log, seq));
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    (log.into_inner().unwrap_or_else(|p| p.into_inner()), elapsed)
}

/// One searcher: the queries in turn (from its own starting point), until `until`.
fn search_loop(clients: &Clients, s: usize, distinct: bool, until: Instant, log: &Mutex<Log>) {
    let queries = clients.queries;
    let client = Client::new(clients.base, clients.key);
    let mut i = s * 7919;
    while Instant::now() < until {
        let q = if distinct {
            format!("{} {s}x{i}", queries[i % queries.len()])
        } else {
            queries[i % queries.len()].clone()
        };
        i += 1;
        let t = Instant::now();
        let (status, _) =
            client.call("GET", &format!("/search?q={}&k={SEARCH_K}", encode(&q)), None, true);
        let micros = t.elapsed().as_micros() as u64;
        let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
        l.samples.push(Sample { kind: Kind::Search, status, micros });
    }
}

/// One writer: new notes under the scratch folder, every third write an append to its last
/// note, until `until`; each acknowledged write is remembered to be read back.
fn write_loop(
    clients: &Clients,
    w: usize,
    until: Instant,
    log: &Mutex<Log>,
    seq: &std::sync::atomic::AtomicUsize,
) {
    let (queries, folder, run) = (clients.queries, clients.folder, clients.run);
    let client = Client::new(clients.base, clients.key);
    let mut n = 0usize;
    let mut last: Option<String> = None;
    while Instant::now() < until {
        n += 1;
        let token = format!("ld{run}w{w}n{n}");
        // Every third write appends to the writer's last note; the rest are new.
        let (kind, path, text) = match &last {
            Some(p) if n.is_multiple_of(3) => {
                (Kind::Append, p.clone(), format!("- {token} appended line\n"))
            }
            _ => {
                let path = format!("{folder}/w{w}-{n}.md");
                let topic = &queries[(w * 31 + n) % queries.len()];
                let text = format!(
                    "# Load note {token}\n\nWriter {w} wrote note {n} about {topic}: \
                     {token}.\n"
                );
                (Kind::Put, path, text)
            }
        };
        let method = if kind == Kind::Put { "PUT" } else { "POST" };
        let t = Instant::now();
        let (status, body) =
            client.call(method, &format!("/vault/{}", encode_path(&path)), Some(&text), true);
        let micros = t.elapsed().as_micros() as u64;
        let reply: Value = serde_json::from_str(&body).unwrap_or_default();
        let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
        l.samples.push(Sample { kind, status, micros });
        if (200..300).contains(&status) {
            let indexed = reply["indexed"].as_str().unwrap_or("absent").to_string();
            *l.indexed.entry(indexed).or_default() += 1;
            let seq = seq.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let etag = reply["etag"].as_str().unwrap_or_default().to_string();
            l.acks.push(Ack { path: path.clone(), kind, token, text, etag, seq });
            if kind == Kind::Put {
                last = Some(path);
            }
        }
    }
}

/// Per kind: the status histogram and the latency percentiles (printed as they are
/// summarised), and the requests that were not answered with a 2xx.
fn per_kind(log: &Log, elapsed: f64, say: &dyn Fn(String)) -> (Vec<(String, LoadKind)>, usize) {
    let mut kinds: BTreeMap<Kind, (BTreeMap<u16, usize>, Vec<u64>)> = BTreeMap::new();
    for s in &log.samples {
        let entry = kinds.entry(s.kind).or_default();
        *entry.0.entry(s.status).or_default() += 1;
        entry.1.push(s.micros);
    }
    let mut per_kind = Vec::new();
    let mut errors = 0;
    for (kind, (statuses, mut micros)) in kinds {
        micros.sort_unstable();
        let (p50, p95, p99) =
            (percentile(&micros, 0.50), percentile(&micros, 0.95), percentile(&micros, 0.99));
        let max = micros.last().copied().unwrap_or(0) as f64 / 1000.0;
        errors += statuses
            .iter()
            .filter(|(s, _)| !(200..300).contains(*s))
            .map(|(_, n)| n)
            .sum::<usize>();
        let histogram: Vec<String> = statuses.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        say(format!(
            "{:>6}: {} requests ({:.1}/s); status {}; ms p50 {p50:.0}, p95 {p95:.0}, p99 {p99:.0}, \
             max {max:.0}",
            kind.name(),
            micros.len(),
            micros.len() as f64 / elapsed,
            histogram.join(", ")
        ));
        per_kind.push((
            kind.name().to_string(),
            LoadKind {
                requests: micros.len(),
                per_second: micros.len() as f64 / elapsed,
                status: statuses.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
                ms: LoadMs { p50, p95, p99, max },
            },
        ));
    }
    (per_kind, errors)
}

/// Reads back every acknowledged write: a note's bytes must hold each of its writes, equal
/// the last put's bytes when nothing was appended after it, and hash to the last answer's
/// etag. What is missing, one line each.
fn lost_writes(client: &Client, log: &Log) -> Vec<String> {
    let mut by_path: HashMap<&str, Vec<&Ack>> = HashMap::new();
    for a in &log.acks {
        by_path.entry(a.path.as_str()).or_default().push(a);
    }
    let mut lost: Vec<String> = Vec::new();
    for (path, mut acks) in by_path {
        acks.sort_by_key(|a| a.seq);
        let (status, body) =
            client.call("GET", &format!("/vault/{}", encode_path(path)), None, false);
        if status != 200 {
            lost.extend(acks.iter().map(|a| format!("{path}: {} read back as {status}", a.token)));
            continue;
        }
        for (i, a) in acks.iter().enumerate() {
            let later_append = acks[i + 1..].iter().any(|b| b.kind == Kind::Append);
            let ok = match a.kind {
                Kind::Put if !later_append && i + 1 == acks.len() => body == a.text,
                Kind::Put => body.starts_with(a.text.trim_end()),
                _ => body.contains(a.text.trim_end()),
            };
            if !ok {
                lost.push(format!(
                    "{path}: the {} of {} is not in the note",
                    a.kind.name(),
                    a.token
                ));
            }
        }
        if let Some(last) = acks.last()
            && !last.etag.is_empty()
            && hash(&body) != last.etag
        {
            lost.push(format!("{path}: the bytes differ from the last acknowledged write's etag"));
        }
    }
    lost
}

/// A sample of the acknowledged writes must be searchable by their token: how many were
/// searched for, and how many found.
fn searchable(client: &Client, log: &Log) -> (usize, usize) {
    let step = (log.acks.len() / SEARCH_SAMPLE).max(1);
    let sample: Vec<&Ack> = log.acks.iter().step_by(step).take(SEARCH_SAMPLE).collect();
    let mut found = 0;
    for a in &sample {
        let (_, body) =
            client.call("GET", &format!("/search?q={}&k={SEARCH_K}", a.token), None, true);
        let hits: Value = serde_json::from_str(&body).unwrap_or_default();
        if hits["results"].as_array().into_iter().flatten().any(|h| h["path"] == a.path.as_str()) {
            found += 1;
        }
    }
    (sample.len(), found)
}
