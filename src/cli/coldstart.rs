//! `bench --real-vault`: a real vault served from nothing, then restarted, as a user meets it.
//!
//! It copies the vault into a temporary folder (a server may write into what it serves: an
//! `index.md` when the configuration asks for one), starts `mdvault serve` over it with an empty data directory and the local model,
//! and times from the spawn: the first search that answers (by words, during the build), and
//! `/readyz` turning ready (every chunk embedded). It then stops the server, starts it again
//! over the same data directory and times the same two moments (the warm restart), and last
//! takes the search latency over HTTP on the finished index.
//!
//! Why a child process over HTTP and not an engine in this process: "after start" includes
//! the model load, the port bind and the owner lock, and a second engine in one process would
//! share the first one's lock and caches. It measures and prints; it never asserts.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{Failure, bench};
use crate::wire::BenchColdStart;

/// How often the moments are polled: well under the figures' resolution (seconds).
const POLL: Duration = Duration::from_millis(100);
/// Longest wait for either moment; a 2-core machine embeds about 100 chunks/s, so this covers
/// a vault of well over 100k chunks before calling the run failed.
const PATIENCE: Duration = Duration::from_secs(3 * 3600);
/// The key the child is started with (it only listens on loopback, for the run's length).
const KEY: &str = "bench-coldstart-key-0123456789abcdef";
/// A query every vault answers something for by words: a stop-word-free common term.
const PROBE: &str = "notes";

/// One start of the server: when it first answered a search, and when it was ready.
struct Start {
    first_answer_s: f64,
    ready_s: f64,
}

/// Serves `real` from nothing and again warm; prints and returns the figures.
pub(super) fn run(
    model: &Path,
    real: &Path,
    say: &dyn Fn(String),
) -> Result<BenchColdStart, Failure> {
    let work = tempfile::tempdir().map_err(|e| bench::fail(e.to_string()))?;
    let (vault, data) = (work.path().join("vault"), work.path().join("data"));
    bench::copy_tree(real, &vault)
        .map_err(|e| bench::fail(format!("copying {}: {e}", real.display())))?;
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();

    let cold = serve_once(model, &vault, &data, &agent)?;
    let (chunks, vectors) = counts(&data);
    say(format!(
        "{}: from nothing, first search answer {:.1} s after start, fully indexed {:.0} s \
         ({chunks} chunks, {vectors} vectors, {:.1} chunks/s)",
        real.display(),
        cold.first_answer_s,
        cold.ready_s,
        chunks as f64 / cold.ready_s
    ));

    let mut server = Server::spawn(model, &vault, &data)?;
    let warm = server.wait_moments(&agent)?;
    let mut lat = Vec::new();
    let mut corpus_queries = bench::Corpus::new();
    for _ in 0..30 {
        let q = corpus_queries.query();
        let t = Instant::now();
        let status = server.search(&agent, &q)?;
        if status != 200 {
            return Err(bench::fail(format!("a search on the warm server answered {status}")));
        }
        lat.push(bench::ms(t.elapsed()));
    }
    server.stop();
    lat.sort_by(f64::total_cmp);
    let store =
        std::fs::metadata(crate::config::DataDir::new(&data).store()).map_or(0, |m| m.len());
    say(format!(
        "{}: warm restart, first search answer {:.1} s, ready {:.1} s; REST search p50 {:.1} ms \
         / p95 {:.1} ms; store {:.1} MiB",
        real.display(),
        warm.first_answer_s,
        warm.ready_s,
        bench::percentile(&lat, 0.5),
        bench::percentile(&lat, 0.95),
        store as f64 / 1048576.0
    ));
    Ok(BenchColdStart {
        path: real.display().to_string(),
        chunks,
        vectors,
        cold_first_answer_s: cold.first_answer_s,
        cold_ready_s: cold.ready_s,
        chunks_per_s: chunks as f64 / cold.ready_s,
        warm_first_answer_s: warm.first_answer_s,
        warm_ready_s: warm.ready_s,
        rest_p50_ms: bench::percentile(&lat, 0.5),
        rest_p95_ms: bench::percentile(&lat, 0.95),
        store_bytes: store,
    })
}

/// One start to ready, then a clean stop (so the next start is a warm restart, not recovery).
fn serve_once(
    model: &Path,
    vault: &Path,
    data: &Path,
    agent: &ureq::Agent,
) -> Result<Start, Failure> {
    let mut server = Server::spawn(model, vault, data)?;
    let start = server.wait_moments(agent);
    server.stop();
    start
}

/// Chunks and vectors in the finished store (read after the server stopped).
fn counts(data: &Path) -> (u64, u64) {
    crate::index::store::Store::open(data)
        .and_then(|s| s.counts())
        .map_or((0, 0), |(_, chunks, vectors)| (chunks, vectors))
}

/// A `mdvault serve` child on a free loopback port.
struct Server {
    child: Child,
    base: String,
    started: Instant,
}

impl Server {
    fn spawn(model: &Path, vault: &Path, data: &Path) -> Result<Server, Failure> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| bench::fail(format!("no free port: {e}")))?
            .port();
        let exe = std::env::current_exe().map_err(|e| bench::fail(e.to_string()))?;
        let started = Instant::now();
        let child = Command::new(exe)
            .arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg(format!("--vault=bench={}", vault.display()))
            .arg("--data-dir")
            .arg(data)
            // Only what this run says: no user config, the local model, the precision of the
            // caller's environment (MDVAULT_ENCODER passes through).
            .env("MDVAULT_CONFIG", "")
            .env("MDVAULT_API_KEY", KEY)
            .env("MDVAULT_EMBEDDING__BACKEND", "local")
            .env("MDVAULT_EMBEDDING__MODEL_DIR", model)
            .env("MDVAULT_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| bench::fail(format!("cannot start `mdvault serve`: {e}")))?;
        Ok(Server { child, base: format!("http://127.0.0.1:{port}"), started })
    }

    /// The search's status (0 while the port is not open yet; 503 while no word is indexed).
    fn search(&self, agent: &ureq::Agent, q: &str) -> Result<u16, Failure> {
        let url = format!("{}/search", self.base);
        match agent.get(&url).query("q", q).header("Authorization", &format!("Bearer {KEY}")).call()
        {
            Ok(r) => match r.status().as_u16() {
                status @ (200 | 503) => Ok(status),
                other => Err(bench::fail(format!("{url} answered {other}"))),
            },
            Err(ureq::Error::Io(_) | ureq::Error::ConnectionFailed) => Ok(0),
            Err(e) => Err(bench::fail(format!("searching {url}: {e}"))),
        }
    }

    /// Whether `/readyz` says ready; a refusal (a key the server does not take) is an error,
    /// never "not yet", so a misconfigured run cannot poll forever.
    fn ready(&self, agent: &ureq::Agent) -> Result<bool, Failure> {
        let url = format!("{}/readyz", self.base);
        match agent.get(&url).header("Authorization", &format!("Bearer {KEY}")).call() {
            Ok(r) => match r.status().as_u16() {
                200 => Ok(true),
                503 => Ok(false),
                other => Err(bench::fail(format!("{url} answered {other}"))),
            },
            Err(ureq::Error::Io(_) | ureq::Error::ConnectionFailed) => Ok(false),
            Err(e) => Err(bench::fail(format!("asking {url}: {e}"))),
        }
    }

    /// Polls until a search answers 200 and `/readyz` is ready, timing both from the spawn.
    fn wait_moments(&mut self, agent: &ureq::Agent) -> Result<Start, Failure> {
        let mut first_answer = None;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(bench::fail(format!("`mdvault serve` ended early ({status})")));
            }
            let elapsed = self.started.elapsed();
            if first_answer.is_none() && self.search(agent, PROBE)? == 200 {
                first_answer = Some(elapsed.as_secs_f64());
            }
            if let Some(first_answer_s) = first_answer
                && self.ready(agent)?
            {
                return Ok(Start { first_answer_s, ready_s: self.started.elapsed().as_secs_f64() });
            }
            if elapsed > PATIENCE {
                return Err(bench::fail("the server was not ready in 3 hours"));
            }
            std::thread::sleep(POLL);
        }
    }

    /// SIGTERM, the way a service manager stops it, then waits; a kill if it will not end.
    fn stop(&mut self) {
        // SAFETY: `kill` with a child's pid that this process has not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(POLL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
