//! The indexer: the one thread that writes the index of a data directory.
//!
//! Everything that changes the store's chunks and vectors or the lexical index is a [`Job`] on
//! a bounded queue, and one thread takes them in order: the first build, a pass asked for by a
//! surface (`/reindex`, `mdvault index`), the paths a write has just touched, the watcher's
//! events, the periodic reconcile pass, and jobs that reader processes send through the owner's
//! socket. Senders never touch the index; readers (search, status) never wait for the thread.
//! That replaces a mutex that callers polled, and makes "one writer" a property of the design
//! rather than of every caller's discipline.
//!
//! The thread holds the data directory's [`Ownership`] for as long as it runs, so another
//! process cannot become the owner while a job is still writing.
//!
//! This module does not decide *when* to index (the engine's background work does) or which
//! vault a caller means (the caller names it).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use super::owner::Ownership;
use crate::error::{Error, ErrorCode, Result};
use crate::index::{Both, Index, Pass, PassProgress, Progress, ProgressClock, Reached, SyncReport};
use crate::vault::{Indexed, Vaults};

/// Jobs that may wait in the queue. A watcher burst beyond this blocks the watcher (which
/// debounces anyway) rather than growing memory; a write's refresh finding the queue full
/// leaves the paths to the watcher.
const QUEUE: usize = 256;

/// What a caller waiting for an update hears: that the paths are searchable by their words
/// (chunks and lexical entries committed), then the report once their vectors are in too.
enum UpdateMsg {
    Searchable,
    Done(Result<SyncReport>),
}

/// Where the answer to an update goes.
type Answer = mpsc::Sender<UpdateMsg>;

/// What a waiting caller of a pass hears: progress as it happens, then the report.
enum PassMsg {
    Files(usize, usize),
    Embedded(usize, usize),
    Done(Result<SyncReport>),
}

/// Progress of a pass, sent back to the thread that waits for it (which shows it on its own
/// [`Progress`]: a terminal bar must be drawn by the thread that owns it, not the indexer).
struct Relay(mpsc::Sender<PassMsg>);

impl Progress for Relay {
    fn files(&self, done: usize, total: usize) {
        let _ = self.0.send(PassMsg::Files(done, total));
    }
    fn embedded(&self, done: usize, total: usize) {
        let _ = self.0.send(PassMsg::Embedded(done, total));
    }
}

/// One unit of index work.
enum Job {
    /// A pass over one vault; `walked` is what a pass that gave way while embedding had
    /// done, to go on from.
    Sync {
        vault: String,
        pass: Pass,
        answer: Option<mpsc::Sender<PassMsg>>,
        walked: Option<SyncReport>,
    },
    /// Re-index some paths of one vault.
    Update { vault: String, paths: Vec<String>, answer: Option<Answer> },
    /// Go on embedding what re-indexes that gave way left (their words are in), then tell the
    /// writers who wait for the end. One at most waits in line: a later one joins it.
    Embed { vault: String, answers: Vec<Answer> },
    /// End the thread (what is still queued is abandoned).
    Stop,
}

/// A handle for sending jobs to the indexer; cheap to clone.
#[derive(Clone)]
pub(crate) struct Indexer {
    jobs: SyncSender<Job>,
    running: Running,
    failing: Failing,
    waiting: Waiting,
}

/// How many re-indexes of paths (a write's, the watcher's) are queued and not yet begun. While
/// any is, the job in hand stops embedding before its next batch and is taken up again after
/// them ([`Yielding`]), so a note written during a first build of an hour is searchable by its
/// words within a batch, not when the build ends.
type Waiting = Arc<AtomicUsize>;

/// The progress of a job that gives way to waiting re-indexes: interrupted while any waits,
/// and remembering that it was.
struct Yielding<'a> {
    inner: &'a dyn Progress,
    waiting: &'a AtomicUsize,
    gave_way: AtomicBool,
}

impl<'a> Yielding<'a> {
    fn new(inner: &'a dyn Progress, waiting: &'a AtomicUsize) -> Yielding<'a> {
        Yielding { inner, waiting, gave_way: AtomicBool::new(false) }
    }

    fn gave_way(&self) -> bool {
        self.gave_way.load(Ordering::SeqCst)
    }
}

impl Progress for Yielding<'_> {
    fn files(&self, done: usize, total: usize) {
        self.inner.files(done, total);
    }
    fn embedded(&self, done: usize, total: usize) {
        self.inner.embedded(done, total);
    }
    fn interrupted(&self) -> bool {
        let now = self.inner.interrupted() || self.waiting.load(Ordering::SeqCst) > 0;
        if now {
            self.gave_way.store(true, Ordering::SeqCst);
        }
        now
    }
}

/// Why the last index job failed, until one succeeds: the index is behind the vault (a full
/// or read-only data directory, say). `/readyz` turns degraded and writes answer "behind".
type Failing = Arc<std::sync::Mutex<Option<String>>>;

/// The clock of the pass the thread is running, if any (for `/readyz`, `status` and other
/// processes' `mdvault index`).
type Running = Arc<std::sync::Mutex<Option<Arc<ProgressClock>>>>;

/// The running indexer thread; dropping it stops the thread after the job in hand.
pub(crate) struct IndexerThread {
    jobs: SyncSender<Job>,
    state: Arc<State>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Starts the indexer for `index` over `vaults`, holding `ownership` until it ends.
pub(crate) fn start(
    index: Arc<Index>,
    vaults: Vaults,
    ownership: Ownership,
) -> Result<(Indexer, IndexerThread)> {
    let (tx, rx) = mpsc::sync_channel::<Job>(QUEUE);
    let state = Arc::new(State::default());
    let shared = state.clone();
    let running = state.running.clone();
    let failing = state.failing.clone();
    let waiting = state.waiting.clone();
    let thread = std::thread::Builder::new()
        .name("mdvault-indexer".into())
        .spawn(move || {
            let _ownership = ownership;
            run(&index, &vaults, &rx, &shared);
        })
        .map_err(|e| {
            Error::new(ErrorCode::InternalError, format!("cannot start the indexer thread: {e}"))
        })?;
    Ok((
        Indexer { jobs: tx.clone(), running, failing, waiting },
        IndexerThread { jobs: tx, state, thread: Some(thread) },
    ))
}

/// What the indexer thread shares with its handle.
#[derive(Default)]
struct State {
    /// A job is writing the index right now (cleared before its caller hears the answer, so a
    /// caller that drops the engine right after finds the thread idle; a writer answered while
    /// its job goes on embedding other jobs' texts, `Reached::Vectors`, finds it busy).
    busy: AtomicBool,
    /// The handle was dropped: queued jobs are abandoned (their callers hear "stopped").
    stopping: AtomicBool,
    /// The running pass's progress.
    running: Running,
    /// The last job's failure, cleared by the next job that succeeds.
    failing: Failing,
    /// Re-indexes of paths queued and not yet begun.
    waiting: Waiting,
}

impl State {
    /// Records how a job that wrote the index ended.
    fn ended<T>(&self, result: &Result<T>) {
        let mut failing = self.failing.lock().unwrap_or_else(|p| p.into_inner());
        *failing = result.as_ref().err().map(|e| e.message().to_string());
    }
}

fn run(index: &Index, vaults: &Vaults, rx: &Receiver<Job>, state: &State) {
    // Jobs taken off the queue early (while folding updates, or behind a job that gave way);
    // they run before anything newer. Every update among them is still counted as waiting (a
    // job put back after giving way is never an update: see `requeue`).
    let mut taken: VecDeque<Job> = VecDeque::new();
    loop {
        let job = match taken.pop_front() {
            Some(job) => job,
            None => match rx.recv() {
                Ok(job) => job,
                Err(_) => break,
            },
        };
        if is_update(&job) {
            begun(&state.waiting);
        }
        if matches!(job, Job::Stop) || state.stopping.load(Ordering::SeqCst) {
            break;
        }
        state.busy.store(true, Ordering::SeqCst);
        let job = match job {
            Job::Update { vault, paths, answer: None } => {
                fold(rx, vault, paths, &mut taken, &state.waiting)
            }
            other => other,
        };
        if let Some(again) = run_one(index, vaults, job, state) {
            // It gave way: what is queued now runs first, then it again, to go on embedding
            // where it stopped.
            taken.extend(rx.try_iter());
            requeue(&mut taken, again);
        }
        state.busy.store(false, Ordering::SeqCst);
    }
}

/// Puts a job that gave way (a pass, or an [`Job::Embed`]; never an update, whose leftover
/// is an `Embed`) back in line, last; the writers of an embedding left over join the one
/// already waiting, so a burst of writes during a build leaves one such job, not one each.
fn requeue(taken: &mut VecDeque<Job>, again: Job) {
    debug_assert!(!is_update(&again), "an update that gave way is put back as an Embed");
    let Job::Embed { vault, answers } = again else {
        taken.push_back(again);
        return;
    };
    match taken.iter_mut().find(|j| matches!(j, Job::Embed { .. })) {
        Some(Job::Embed { answers: held, .. }) => held.extend(answers),
        _ => taken.push_back(Job::Embed { vault, answers }),
    }
}

fn is_update(job: &Job) -> bool {
    matches!(job, Job::Update { .. })
}

/// One queued re-index has begun.
fn begun(waiting: &AtomicUsize) {
    let _ = waiting.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
}

/// Folds the queued updates of `vault` that nobody waits for into one job: a burst of watcher
/// events becomes one pass and one embedding call. Stops at the first other job, which is kept
/// in `taken` to run next.
fn fold(
    rx: &Receiver<Job>,
    vault: String,
    mut paths: Vec<String>,
    taken: &mut VecDeque<Job>,
    waiting: &AtomicUsize,
) -> Job {
    while let Ok(next) = rx.try_recv() {
        match next {
            Job::Update { vault: v, paths: more, answer: None } if v == vault => {
                begun(waiting);
                for path in more {
                    if !paths.contains(&path) {
                        paths.push(path);
                    }
                }
            }
            other => {
                taken.push_back(other);
                break;
            }
        }
    }
    Job::Update { vault, paths, answer: None }
}

/// Runs one job and answers it (or logs the outcome when nobody waits), clearing `busy` once
/// the index is written and before anyone is told. A job that gave way to waiting re-indexes
/// is not answered: it comes back, to be run again after them.
fn run_one(index: &Index, vaults: &Vaults, job: Job, state: &State) -> Option<Job> {
    let busy = &state.busy;
    let (what, vault, result, answer) = match job {
        Job::Stop => return None,
        Job::Sync { vault, pass, answer, walked } => {
            let clock = Arc::new(ProgressClock::new(&vault));
            *state.running.lock().unwrap_or_else(|p| p.into_inner()) = Some(clock.clone());
            let relay = answer.as_ref().map(|tx| Relay(tx.clone()));
            let both;
            let shown: &dyn Progress = match &relay {
                Some(relay) => {
                    both = Both(relay, &*clock);
                    &both
                }
                None => &*clock,
            };
            // Only a pass over changed files gives way: run again, it goes on embedding from
            // what it had done (`Index::resume_sync`). A full pass would read every file
            // again, and a re-embed would replace every vector again.
            let yielding = Yielding::new(shown, &state.waiting);
            let progress: &dyn Progress = if pass == Pass::Changed { &yielding } else { shown };
            let result = vaults.get(Some(&vault)).and_then(|v| match walked {
                Some(report) => index.resume_sync(v, report, progress),
                None => index.sync(v, pass, progress),
            });
            *state.running.lock().unwrap_or_else(|p| p.into_inner()) = None;
            state.ended(&result);
            if result.is_ok() && yielding.gave_way() {
                return Some(Job::Sync { vault, pass, answer, walked: result.ok() });
            }
            if let Some(tx) = answer {
                busy.store(false, Ordering::SeqCst);
                let _ = tx.send(PassMsg::Done(result));
                return None;
            }
            ("pass over", vault, result, None)
        }
        Job::Update { vault, paths, answer } => {
            let clock = Arc::new(ProgressClock::new(&vault));
            *state.running.lock().unwrap_or_else(|p| p.into_inner()) = Some(clock.clone());
            let yielding = Yielding::new(&*clock, &state.waiting);
            let mut answer = answer;
            let result = {
                let mut reached = |at: Reached, report: &SyncReport| match at {
                    Reached::Words => {
                        if let Some(a) = &answer {
                            let _ = a.send(UpdateMsg::Searchable);
                        }
                    }
                    // Its writer is answered now: the rest of the job embeds other jobs'
                    // texts (a first build's), which may take minutes.
                    Reached::Vectors => {
                        if let Some(a) = answer.take() {
                            let _ = a.send(UpdateMsg::Done(Ok(report.clone())));
                        }
                    }
                };
                vaults
                    .get(Some(&vault))
                    .and_then(|v| index.update_paths(v, &paths, &mut reached, &yielding))
            };
            *state.running.lock().unwrap_or_else(|p| p.into_inner()) = None;
            state.ended(&result);
            if result.is_ok() && yielding.gave_way() {
                // Its words are in; the embedding left is any embedding job's to finish (the
                // job it gave way to embeds what is pending). A writer waiting for the end
                // hears it once that is done.
                return answer.map(|a| Job::Embed { vault, answers: vec![a] });
            }
            ("re-index of", vault, result, answer)
        }
        Job::Embed { vault, answers } => {
            let clock = Arc::new(ProgressClock::new(&vault));
            *state.running.lock().unwrap_or_else(|p| p.into_inner()) = Some(clock.clone());
            let yielding = Yielding::new(&*clock, &state.waiting);
            let result = index
                .embed_pending(&yielding)
                .map(|n| SyncReport { texts_embedded: n, ..SyncReport::default() });
            *state.running.lock().unwrap_or_else(|p| p.into_inner()) = None;
            state.ended(&result);
            if result.is_ok() && yielding.gave_way() {
                return Some(Job::Embed { vault, answers });
            }
            busy.store(false, Ordering::SeqCst);
            for a in answers {
                let _ = a.send(UpdateMsg::Done(result.clone()));
            }
            return None;
        }
    };
    busy.store(false, Ordering::SeqCst);
    match (answer, result) {
        (Some(a), result) => {
            let _ = a.send(UpdateMsg::Done(result));
        }
        (None, Ok(r)) if r.files_chunked + r.files_removed > 0 => tracing::info!(
            "{what} {vault}: {} chunked, {} removed, {} embedded in {:.0} ms",
            r.files_chunked,
            r.files_removed,
            r.texts_embedded,
            r.seconds * 1000.0
        ),
        (None, Ok(_)) => {}
        (None, Err(e)) => tracing::warn!("{what} {vault} failed: {e}"),
    }
    None
}

fn gone() -> Error {
    Error::new(
        ErrorCode::NotReady,
        "the indexer has stopped (the process is shutting down); retry in a moment",
    )
}

impl Indexer {
    /// How far the pass running now is; `None` between passes.
    pub(crate) fn progress(&self) -> Option<PassProgress> {
        let clock = self.running.lock().unwrap_or_else(|p| p.into_inner()).clone();
        clock.and_then(|c| c.snapshot())
    }

    /// Why the index is behind the vault: the last job's failure, `None` once one succeeds.
    pub(crate) fn failing(&self) -> Option<String> {
        self.failing.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A pass over `vault`, waiting for its report; progress is shown on `progress` by the
    /// calling thread.
    pub(crate) fn sync(
        &self,
        vault: &str,
        pass: Pass,
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        let (tx, rx) = mpsc::channel();
        self.jobs
            .send(Job::Sync { vault: vault.to_string(), pass, answer: Some(tx), walked: None })
            .map_err(|_| gone())?;
        loop {
            match rx.recv().map_err(|_| gone())? {
                PassMsg::Files(done, total) => progress.files(done, total),
                PassMsg::Embedded(done, total) => progress.embedded(done, total),
                PassMsg::Done(result) => return result,
            }
        }
    }

    /// Queues a pass over `vault` and returns at once (the reconcile timer).
    pub(crate) fn sync_later(&self, vault: &str) {
        let _ = self.jobs.send(Job::Sync {
            vault: vault.to_string(),
            pass: Pass::Changed,
            answer: None,
            walked: None,
        });
    }

    /// Re-indexes `paths` of `vault` and waits as long as it takes for the report (with its
    /// vectors). `None` when the queue is full, leaving the paths to the watcher and the
    /// reconcile pass.
    pub(crate) fn update(&self, vault: &str, paths: Vec<String>) -> Option<Result<SyncReport>> {
        let rx = self.queue_update(vault, paths)?;
        loop {
            match rx.recv() {
                Ok(UpdateMsg::Searchable) => {}
                Ok(UpdateMsg::Done(r)) => return Some(r),
                Err(_) => return Some(Err(gone())),
            }
        }
    }

    /// Queues `paths` of `vault` for re-indexing and waits at most `wait` for it: what a
    /// write does before it answers. The job runs to the end whatever the wait; the answer
    /// says how far it had got ([`Indexed::Queued`] also when the queue is full, leaving the
    /// paths to the watcher and the reconcile pass), or the error it ended with.
    pub(crate) fn update_within(
        &self,
        vault: &str,
        paths: Vec<String>,
        wait: Duration,
    ) -> Result<Indexed> {
        let Some(rx) = self.queue_update(vault, paths) else { return Ok(Indexed::Queued) };
        let deadline = std::time::Instant::now() + wait;
        let mut reached = Indexed::Queued;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(UpdateMsg::Searchable) => reached = Indexed::Lexical,
                Ok(UpdateMsg::Done(r)) => return r.map(|_| Indexed::Full),
                Err(RecvTimeoutError::Timeout) => return Ok(reached),
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
            }
        }
    }

    /// Puts an update job on the queue without blocking; `None` when the queue is full.
    fn queue_update(&self, vault: &str, paths: Vec<String>) -> Option<Receiver<UpdateMsg>> {
        let (tx, rx) = mpsc::channel();
        let job = Job::Update { vault: vault.to_string(), paths, answer: Some(tx) };
        // Counted before it is sent, so the thread never takes it up uncounted.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        match self.jobs.try_send(job) {
            Ok(()) => Some(rx),
            // A disconnected queue: the receiver sees the sender dropped and reports it.
            Err(TrySendError::Full(_)) => {
                begun(&self.waiting);
                None
            }
            Err(TrySendError::Disconnected(_)) => {
                begun(&self.waiting);
                Some(mpsc::channel().1)
            }
        }
    }

    /// Queues paths of `vault` to re-index and returns at once (the watcher).
    pub(crate) fn notify(&self, vault: &str, paths: Vec<String>) {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let job = Job::Update { vault: vault.to_string(), paths, answer: None };
        if self.jobs.send(job).is_err() {
            begun(&self.waiting);
        }
    }
}

impl Drop for IndexerThread {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        // Wakes a thread waiting for work; a full queue means it is awake anyway.
        let _ = self.jobs.try_send(Job::Stop);
        // Join an idle thread, so the data directory is free when this returns (an engine
        // reopened at once becomes the owner again); a thread in the middle of a pass is left
        // to finish it, still holding ownership, rather than making shutdown wait for a build.
        if let Some(t) = self.thread.take()
            && !self.state.busy.load(Ordering::SeqCst)
        {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_left_waiting_by_jobs_that_gave_way_join_the_one_embedding_in_line() {
        let answer = || mpsc::channel::<UpdateMsg>().0;
        let update = |path: &str| Job::Update {
            vault: "v".into(),
            paths: vec![path.to_string()],
            answer: Some(answer()),
        };
        let mut taken: VecDeque<Job> = VecDeque::new();
        taken.push_back(update("a.md"));
        requeue(&mut taken, Job::Embed { vault: "v".into(), answers: vec![answer()] });
        requeue(
            &mut taken,
            Job::Sync { vault: "v".into(), pass: Pass::Changed, answer: None, walked: None },
        );
        requeue(&mut taken, Job::Embed { vault: "v".into(), answers: vec![answer(), answer()] });
        let kinds: Vec<String> = taken
            .iter()
            .map(|j| match j {
                Job::Update { .. } => "update".to_string(),
                Job::Embed { answers, .. } => format!("embed for {}", answers.len()),
                Job::Sync { .. } => "sync".into(),
                Job::Stop => "stop".into(),
            })
            .collect();
        assert_eq!(kinds, ["update", "embed for 3", "sync"]);
    }
}
