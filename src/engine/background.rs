//! What a server runs in the background: an owner's watcher, first build with retries,
//! reconcile timer and index.md passes; a reader's wait to take over when the owner ends.
//! Dropping the returned handles stops them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::owner::{self, OwnerClient};
use super::{Engine, Phase};
use crate::index::Pass;
use crate::index::watch::Watcher;

impl Engine {
    /// Starts serving in the background. An owner starts at once: watching every vault (so
    /// nothing changed during the build is missed), the first build with retries, then the
    /// periodic reconcile pass and the index.md passes. A reader searches what the owner keeps
    /// and waits on a thread of its own to take over when the owner ends, then starts the same.
    /// Search answers from the first build's words (and the vectors made so far) while it
    /// runs, with a notice. Dropping the handle stops the watcher and
    /// the passes; the build thread finishes its current attempt.
    pub fn start_background(self: &Arc<Self>) -> Background {
        let work = Arc::new(Mutex::new(None));
        let cancelled = Arc::new(AtomicBool::new(false));
        if self.is_owner() {
            *work.lock().unwrap_or_else(|p| p.into_inner()) = Some(self.owner_work());
            return Background { work, cancelled, _successor: None };
        }
        self.readiness.set_phase(Phase::Ready);
        let (engine, slot, stop) = (self.clone(), work.clone(), cancelled.clone());
        let data_dir = self.config.data_dir.clone();
        match OwnerClient::new(&data_dir).hello() {
            Ok(o) => tracing::info!(
                "mdvault `{}` (pid {}) owns the index in {}; searching beside it, and taking \
                 over when it ends",
                o.command,
                o.pid,
                data_dir.display()
            ),
            Err(e) => tracing::warn!("{e}"),
        }
        let successor = std::thread::Builder::new()
            .name("mdvault-successor".into())
            .spawn(move || {
                let ownership = match owner::own_when_free(&data_dir) {
                    Ok(o) => o,
                    Err(e) => return tracing::warn!("cannot wait to own the index: {e}"),
                };
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Err(e) = engine.take_over(ownership) {
                    engine.readiness.update(|s| s.error = Some(e.to_string()));
                    engine.readiness.set_phase(Phase::Failed);
                    return tracing::error!("taking over the index failed: {e}");
                }
                let started = engine.owner_work();
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(started);
            })
            .map_err(|e| tracing::error!("cannot start the successor thread: {e}"))
            .ok();
        Background { work, cancelled, _successor: successor }
    }

    /// An owner's background work: watcher, first build, reconcile, index.md passes.
    fn owner_work(self: &Arc<Self>) -> OwnerWork {
        let watcher = match self.watch() {
            Ok(w) => {
                self.readiness.update(|s| s.watching = true);
                Some(w)
            }
            Err(e) => {
                tracing::warn!("file watching is off: {e}");
                None
            }
        };
        self.readiness.set_phase(Phase::Building);
        let engine = self.clone();
        let (tx, rx) = std::sync::mpsc::channel::<Reconciler>();
        let builder = std::thread::Builder::new()
            .name("mdvault-build".into())
            .spawn(move || {
                if engine.build_with_retries()
                    && let Some(r) = engine.reconcile()
                {
                    let _ = tx.send(r);
                }
            })
            .map_err(|e| tracing::error!("cannot start the index build: {e}"))
            .ok();
        let index_md = self.index_md_passes();
        OwnerWork { _watcher: watcher, _reconciler: rx, _builder: builder, _index_md: index_md }
    }

    /// Starts the index.md passes on a thread of their own, apart from the index build (so
    /// the page is kept while the embedder is down): a full scan now, then one every
    /// `index.reconcile_seconds` to catch what the watcher missed. `None` when generation is
    /// off.
    fn index_md_passes(&self) -> Option<Reconciler> {
        if self.index_md.is_empty() {
            return None;
        }
        let seconds = self.config.index.reconcile_seconds;
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let (vaults, generators) = (self.vaults.clone(), self.index_md.clone());
        let thread = std::thread::Builder::new()
            .name("mdvault-index-md".into())
            .spawn(move || {
                loop {
                    for vault in vaults.iter() {
                        if let Some(g) = generators.get(vault.name())
                            && let Err(e) = g.rebuild(vault)
                        {
                            tracing::warn!("index.md of {}: {e}", vault.name());
                        }
                    }
                    let pause = if seconds > 0.0 {
                        Duration::from_secs_f64(seconds)
                    } else {
                        Duration::MAX
                    };
                    match wait.recv_timeout(pause) {
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                        _ => break,
                    }
                }
            })
            .map_err(|e| tracing::error!("cannot start the index.md passes: {e}"))
            .ok()?;
        Some(Reconciler { stop: Some(stop), thread: Some(thread) })
    }

    /// The first build: every vault synced, retried with doubling waits.
    fn build_with_retries(&self) -> bool {
        let attempts = self.config.index.build_max_attempts.max(1);
        let mut wait = self.config.index.build_retry_seconds.max(0.0);
        for attempt in 1..=attempts {
            self.readiness.update(|s| s.attempts = attempt);
            let started = std::time::Instant::now();
            // Every vault's words first (seconds), then the vectors (minutes): search answers
            // by words for every vault while the embedding runs. A warm restart skips it, as
            // its pass only catches up with a few changed files.
            let words = if self.warm.load(Ordering::SeqCst) {
                Ok(Vec::new())
            } else {
                self.pass(None, Pass::Words, &crate::index::Silent)
            };
            if words.is_ok() {
                self.words_done.store(true, Ordering::SeqCst);
            }
            match words.and_then(|_| self.sync(None, false, &crate::index::Silent)) {
                Ok(reports) => {
                    let seconds = started.elapsed().as_secs_f64();
                    for (name, r) in &reports {
                        tracing::info!(
                            "indexed {name}: {} files seen, {} chunked, {} embedded in {:.1} s",
                            r.files_seen,
                            r.files_chunked,
                            r.texts_embedded,
                            r.seconds
                        );
                    }
                    self.readiness.update(|s| {
                        s.phase = Phase::Ready;
                        s.since = std::time::Instant::now();
                        s.built_at = Some(crate::vault::now_timestamp());
                        s.build_seconds = Some(seconds);
                        s.error = None;
                    });
                    return true;
                }
                Err(e) => {
                    tracing::warn!("index build attempt {attempt} of {attempts} failed: {e}");
                    self.readiness.update(|s| s.error = Some(e.to_string()));
                    if attempt < attempts {
                        std::thread::sleep(Duration::from_secs_f64(wait));
                        wait = (wait * 2.0).min(300.0);
                    }
                }
            }
        }
        self.readiness.set_phase(Phase::Failed);
        false
    }

    /// Starts the periodic reconcile pass: every `index.reconcile_seconds` each vault gets a
    /// pass on the indexer (a stat walk; only changed files are read), catching whatever the
    /// watcher missed (events dropped by the OS, edits while the process was suspended). Stops
    /// when the returned handle is dropped. `None` when the interval is 0 or this engine is not
    /// the owner.
    pub fn reconcile(&self) -> Option<Reconciler> {
        let seconds = self.config.index.reconcile_seconds;
        let indexer = self.indexer()?;
        if seconds <= 0.0 {
            return None;
        }
        let interval = Duration::from_secs_f64(seconds);
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let names: Vec<String> = self.vaults.names().iter().map(|s| s.to_string()).collect();
        let thread = std::thread::Builder::new()
            .name("mdvault-reconcile".into())
            .spawn(move || {
                // A message or a closed channel both mean stop; a timeout means work.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    wait.recv_timeout(interval)
                {
                    for name in &names {
                        indexer.sync_later(name);
                    }
                }
            })
            .ok()?;
        Some(Reconciler { stop: Some(stop), thread: Some(thread) })
    }
}

/// What [`Engine::start_background`] started; dropping it stops watching and reconciling.
pub struct Background {
    /// The owner's work, there from the start or once a reader has taken over.
    work: Arc<Mutex<Option<OwnerWork>>>,
    /// Tells a successor still waiting for ownership not to start anything.
    cancelled: Arc<AtomicBool>,
    // Left running when dropped: it waits on a lock that cannot be interrupted, and checks
    // `cancelled` when it gets it.
    _successor: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Background {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::SeqCst);
        drop(self.work.lock().unwrap_or_else(|p| p.into_inner()).take());
    }
}

/// An owner's background threads.
struct OwnerWork {
    _watcher: Option<Watcher>,
    _index_md: Option<Reconciler>,
    // The build thread sends the reconcile handle here once the first build succeeds; it
    // lives in the channel until this value is dropped, which stops it.
    _reconciler: std::sync::mpsc::Receiver<Reconciler>,
    _builder: Option<std::thread::JoinHandle<()>>,
}

/// The running reconcile pass; dropping it stops the thread.
pub struct Reconciler {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Reconciler {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
