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
    state: Mutex<Option<Stage>>,
}

/// The stage a clock is timing: `done` of `total` now, `from` done when it began here.
#[derive(Debug)]
struct Stage {
    name: String,
    from: usize,
    done: usize,
    total: usize,
    since: Instant,
}

/// Fewer items than this make no rate worth quoting (the first batch includes warm-up).
const ETA_MIN_DONE: usize = 1;

impl ProgressClock {
    /// A clock for a pass over `vault`.
    pub(crate) fn new(vault: &str) -> ProgressClock {
        ProgressClock { vault: vault.to_string(), state: Mutex::new(None) }
    }

    /// Records `done` of `total` in `stage` (a new stage restarts the clock, from the `done`
    /// it begins at: a pass that gave way goes on from what it had embedded).
    pub(crate) fn record(&self, stage: &str, done: usize, total: usize) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *s {
            Some(st) if st.name == stage => {
                st.done = done;
                st.total = total;
            }
            _ => {
                let name = stage.to_string();
                *s = Some(Stage { name, from: done, done, total, since: Instant::now() });
            }
        }
    }

    /// The snapshot now, if anything was recorded. The rate is of the items done on this
    /// clock: a resumed pass's earlier items would make it look hundreds of times faster.
    pub(crate) fn snapshot(&self) -> Option<PassProgress> {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let st = s.as_ref()?;
        let seconds = st.since.elapsed().as_secs_f64();
        let here = st.done.saturating_sub(st.from);
        let eta_seconds = (here >= ETA_MIN_DONE && seconds > 0.0)
            .then(|| st.total.saturating_sub(st.done) as f64 / (here as f64 / seconds));
        Some(PassProgress {
            vault: self.vault.clone(),
            stage: st.name.clone(),
            done: st.done,
            total: st.total,
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

/// A job a write comes to wait behind once it has embedded `batches` batches: it says it is
/// interrupted from the next batch on (tests of giving way).
#[cfg(test)]
pub(crate) struct WaitedAfter {
    batches: usize,
    asked: std::sync::atomic::AtomicUsize,
}

#[cfg(test)]
impl WaitedAfter {
    pub(crate) fn new(batches: usize) -> WaitedAfter {
        WaitedAfter { batches, asked: Default::default() }
    }
}

#[cfg(test)]
impl Progress for WaitedAfter {
    fn files(&self, _: usize, _: usize) {}
    fn embedded(&self, _: usize, _: usize) {}
    fn interrupted(&self) -> bool {
        self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= self.batches
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_eta_is_reckoned_from_the_items_done_on_this_clock_not_from_those_before_it() {
        // A pass that gave way goes on with 500,000 of 600,000 texts embedded.
        let clock = ProgressClock::new("v");
        clock.embedded(500_000, 600_000);
        assert_eq!(clock.snapshot().unwrap().eta_seconds, None, "no rate before an item here");
        let ten_ago = Instant::now().checked_sub(Duration::from_secs(10)).unwrap();
        clock.state.lock().unwrap().as_mut().unwrap().since = ten_ago;
        clock.embedded(501_000, 600_000);
        let snap = clock.snapshot().unwrap();
        assert_eq!((snap.stage.as_str(), snap.done, snap.total), ("embedding", 501_000, 600_000));
        // 1,000 in ten seconds: 99,000 left take about 990 s.
        let eta = snap.eta_seconds.unwrap();
        assert!((eta - 990.0).abs() < 5.0, "{eta}");
    }
}
