//! Progress of a long index pass: the callbacks a pass reports to ([`Progress`]), the clock
//! that turns them into stage, counts and an ETA ([`ProgressClock`]), and the snapshot that
//! `/readyz`, `status` and other processes' `mdvault index` show ([`PassProgress`]).

use std::sync::Mutex;
use std::time::Instant;

/// How far a running pass is: what the indexer reports to `/readyz`, `status` and `mdvault
/// index` (it crosses the owner's socket as JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PassProgress {
    /// The vault the pass is over.
    pub(crate) vault: String,
    /// `files` (compared and chunked) or `embedding` (texts turned into vectors).
    pub stage: String,
    /// Items of the stage done.
    pub done: usize,
    /// Items of the stage in all.
    pub total: usize,
    /// Seconds since the stage began.
    pub(crate) seconds: f64,
    /// Seconds the stage should still take at its rate so far; absent until there is a rate.
    pub(crate) eta_seconds: Option<f64>,
}

impl PassProgress {
    /// One line for people: `embedding notes: 1200/19500 texts, about 6 min left`.
    pub(crate) fn describe(&self) -> String {
        let what = if self.stage == "embedding" { "texts embedded" } else { "files chunked" };
        let left = match self.eta_seconds {
            Some(s) => format!(", about {} left", human_seconds(s)),
            None => String::new(),
        };
        format!("{}: {}/{} {what}{left}", self.vault, self.done, self.total)
    }
}

/// `42 s`, `7 min`, `2.5 h`.
pub fn human_seconds(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Turns [`Progress`] callbacks into [`PassProgress`] snapshots with an ETA: the rate is the
/// stage's items done over its elapsed time, which for embedding (the long stage, steady
/// batches) is within a few per cent after the first batches.
#[derive(Debug)]
pub struct ProgressClock {
    vault: String,
    state: Mutex<Option<(String, usize, usize, Instant)>>,
}

/// Fewer items than this make no rate worth quoting (the first batch includes warm-up).
const ETA_MIN_DONE: usize = 1;

impl ProgressClock {
    /// A clock for a pass over `vault`.
    pub(crate) fn new(vault: &str) -> ProgressClock {
        ProgressClock { vault: vault.to_string(), state: Mutex::new(None) }
    }

    /// Records `done` of `total` in `stage` (a new stage restarts the clock).
    pub(crate) fn record(&self, stage: &str, done: usize, total: usize) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *s {
            Some((st, d, t, _)) if st == stage => {
                *d = done;
                *t = total;
            }
            _ => *s = Some((stage.to_string(), done, total, Instant::now())),
        }
    }

    /// The snapshot now, if anything was recorded.
    pub(crate) fn snapshot(&self) -> Option<PassProgress> {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (stage, done, total, since) = s.as_ref()?;
        let seconds = since.elapsed().as_secs_f64();
        let eta_seconds = (*done >= ETA_MIN_DONE && seconds > 0.0)
            .then(|| total.saturating_sub(*done) as f64 / (*done as f64 / seconds));
        Some(PassProgress {
            vault: self.vault.clone(),
            stage: stage.clone(),
            done: *done,
            total: *total,
            seconds,
            eta_seconds,
        })
    }
}

impl Progress for ProgressClock {
    fn files(&self, done: usize, total: usize) {
        self.record("files", done, total);
    }
    fn embedded(&self, done: usize, total: usize) {
        self.record("embedding", done, total);
    }
}

/// Shows progress on two sinks (the caller's and the indexer's own record).
pub struct Both<'a>(pub &'a dyn Progress, pub &'a dyn Progress);

impl Progress for Both<'_> {
    fn files(&self, done: usize, total: usize) {
        self.0.files(done, total);
        self.1.files(done, total);
    }
    fn embedded(&self, done: usize, total: usize) {
        self.0.embedded(done, total);
        self.1.embedded(done, total);
    }
    fn interrupted(&self) -> bool {
        self.0.interrupted() || self.1.interrupted()
    }
}

/// Progress callbacks for a long sync (a terminal bar, or log lines).
pub trait Progress: Sync {
    /// `done` of `total` files compared or chunked.
    fn files(&self, done: usize, total: usize);
    /// `done` of `total` texts embedded.
    fn embedded(&self, done: usize, total: usize);
    /// Whether the embedding of pending texts should stop before its next batch, to let
    /// waiting work in (a write's re-index queued behind a build). The texts left stay
    /// pending for the next job that embeds.
    fn interrupted(&self) -> bool {
        false
    }
}

/// A progress sink that shows nothing.
pub struct Silent;

impl Progress for Silent {
    fn files(&self, _: usize, _: usize) {}
    fn embedded(&self, _: usize, _: usize) {}
}
