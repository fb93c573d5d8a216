//! How much of the server one client, or all of them together, may hold: how long a request
//! head and a request body may take to arrive, how many connections are open at once (which of
//! them give way is `admission`'s), and how many searches and image decodes run at once.
//!
//! Every number is a named constant here with its reason, so that the accept loop (`mod.rs`)
//! and the two ways into search (`rest/` and `mcp/`) apply the same ones. None of them is
//! configurable: they bound misbehaviour, and no honest client comes near them.
//!
//! It does not decide whether a request is allowed (that is `guard`), and it does not know
//! what a search does: the engine is unchanged, and [`Searches`] is a queue in front of it
//! that both surfaces pass through.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, ErrorCode};

/// How long a connection may take to send a whole request head, counted from when the server
/// starts waiting for it: at accept, and again after each response. A client sends its head in
/// one or two packets at once, so a few seconds is generous; a half-sent head is dropped when
/// it runs out. Because the clock also runs between requests, this is the keep-alive idle
/// timeout as well (five seconds, as Apache's `KeepAliveTimeout`): an idle connection costs a
/// descriptor that a waiting client could use.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How long requests in flight may go on finishing after SIGTERM or Ctrl-C: an honest
/// request is done well within it, and a supervisor restarting the server waits no longer.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// When, after the signal, the process ends whatever is still running (see `api::exit_after`):
/// past the grace, with a second left for the runtime and the engine's threads to stop.
pub(crate) const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(4);

/// How long a request body may go without a single byte arriving before the request is
/// answered 408 `request_timeout` and its connection closed. Ten seconds of silence from a
/// client that promised more bytes (its `Content-Length`) is a client that stopped, not a slow
/// one: TCP has retransmitted a lost packet several times over by then. The clock restarts
/// with every piece of the body, so a large upload over a slow link is not cut off. Only
/// authenticated routes read a body; the guard answers everything else without reading it.
pub(crate) const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections open at once, waiting for their request head or serving one. Each
/// costs a file descriptor and about 10 KiB (hyper's 8 KiB read buffer and its task); 4,096 of
/// them is some 40 MiB, and far beyond what honest clients of a personal server open (an agent
/// or a script keeps one or a few). Beyond it, a connection still waiting for its request head
/// (a half-sent one first) is closed for the newcomer (`admission`), so idle and half-sent
/// connections give way to a client that is ready; only while none can do new connections wait
/// in the kernel's accept queue, rather than taking the descriptors search needs.
pub(crate) const MAX_CONNECTIONS: usize = 4096;

/// File descriptors kept out of the connection budget for everything else the process holds
/// open: the index store and its journal, the lexical index's files, the watcher, the
/// embedding model, the PDF tools' pipes, the listening socket and standard streams.
pub(crate) const FDS_FOR_THE_ENGINE: u64 = 256;

/// The fewest connections served, however low the descriptor limit: below this the server
/// could not serve an agent, a script and a health check together.
pub(crate) const MIN_CONNECTIONS: usize = 16;

/// How long a search waits for a free core before it is answered 503 `busy`. A search takes
/// tens to hundreds of milliseconds, so this much waiting means dozens are queued ahead; a
/// client is better told to come back than left hanging while the queue grows.
pub(crate) const SEARCH_QUEUE_WAIT: Duration = Duration::from_secs(10);

/// The `Retry-After` seconds sent with `busy`: long enough for a queue that took
/// [`SEARCH_QUEUE_WAIT`] to build to shrink noticeably, short enough that a retry is prompt.
pub(crate) const BUSY_RETRY_AFTER_SECONDS: u64 = 2;

/// The connections to serve at once when the process may hold `fd_limit` descriptors.
///
/// Every connection may open a file or two while its request runs (a note, a document, the
/// index), so sockets get half of what is left after [`FDS_FOR_THE_ENGINE`]; the other half
/// stays for what their requests open. `None` (no limit known) leaves [`MAX_CONNECTIONS`].
pub(crate) fn connection_budget(fd_limit: Option<u64>) -> usize {
    let Some(limit) = fd_limit else { return MAX_CONNECTIONS };
    let for_sockets = limit.saturating_sub(FDS_FOR_THE_ENGINE) / 2;
    usize::try_from(for_sockets).unwrap_or(usize::MAX).clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// Raises the soft limit on open file descriptors to the hard limit, and returns the limit now
/// in force (`None` where there is no such limit to read).
///
/// Many systems start processes with a soft limit of 1,024 and a hard one far above; the soft
/// one is a default for programs that never need more, not a policy. A server that keeps
/// thousands of connections and an index open does, and raising it needs no privilege.
pub(crate) fn raise_fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one rlimit through a valid pointer to a local.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
            return None;
        }
        // macOS reports an unlimited hard limit but refuses a soft one above OPEN_MAX.
        let wanted = if cfg!(target_os = "macos") && lim.rlim_max == libc::RLIM_INFINITY {
            10_240
        } else {
            lim.rlim_max
        };
        if wanted > lim.rlim_cur {
            let raised = libc::rlimit { rlim_cur: wanted, rlim_max: lim.rlim_max };
            // SAFETY: setrlimit reads one rlimit through a valid pointer to a local.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                lim.rlim_cur = wanted;
            } else {
                tracing::warn!(
                    "could not raise the open-file limit from {} to {wanted}; serving fewer \
                     connections at once",
                    lim.rlim_cur
                );
            }
        }
        // `rlim_t` is narrower than u64 on 32-bit targets.
        #[allow(clippy::unnecessary_cast)]
        let limit = lim.rlim_cur as u64;
        if lim.rlim_cur == libc::RLIM_INFINITY { None } else { Some(limit) }
    }
    #[cfg(not(unix))]
    None
}

/// The queue in front of search, shared by REST and MCP: at most one search per core runs at
/// once, and the rest wait their turn for up to [`SEARCH_QUEUE_WAIT`].
///
/// Search is CPU work (embedding the query, scoring, fusing); run on more threads than there
/// are cores, every search in a burst slows down together and each waits longer than it would
/// in a queue. One instance is made per server and cloned into both surfaces, so a burst over
/// MCP and one over REST share the same cores.
#[derive(Debug, Clone)]
pub(crate) struct Searches {
    slots: Arc<Semaphore>,
    wait: Duration,
}

impl Searches {
    /// One slot per core of this machine.
    pub(crate) fn for_this_machine() -> Searches {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Searches::new(cores, SEARCH_QUEUE_WAIT)
    }

    fn new(slots: usize, wait: Duration) -> Searches {
        Searches { slots: Arc::new(Semaphore::new(slots.max(1))), wait }
    }

    /// Waits for a free slot; hold the permit for as long as the search runs (move it into the
    /// blocking task, so a client that hangs up does not free a core still in use). `busy`
    /// when none frees up in time.
    pub(crate) async fn enter(&self) -> Result<OwnedSemaphorePermit, Error> {
        match tokio::time::timeout(self.wait, self.slots.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; a closed one is treated like a full one.
            Ok(Err(_)) | Err(_) => Err(Error::new(
                ErrorCode::Busy,
                format!(
                    "the server is running as many searches as it has cores and more are \
                     waiting; ask again in {BUSY_RETRY_AFTER_SECONDS} seconds"
                ),
            )),
        }
    }
}

/// The queue in front of decoding images, shared by the page (fitting a note's photos to the
/// screen, `web/fitted.rs`) and MCP (`vault_read`'s and `resources/read`'s previews): at most one
/// image per core at once. A note of thirty photos asks for thirty at the same moment, and an
/// agent reads several images in parallel calls; each decode holds tens of megabytes (a
/// 12-megapixel photo is 36 MB of pixels before it is scaled), so the rest wait their turn
/// rather than take the machine's memory and every core from searches. Unlike a search, an
/// image waits as long as it takes: the page's images arrive as they are done. One per
/// server, cloned into each surface.
#[derive(Debug, Clone)]
pub(crate) struct Images(Arc<Semaphore>);

impl Images {
    /// One image at a time per core of this machine.
    pub(crate) fn for_this_machine() -> Images {
        Images::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    pub(crate) fn new(turns: usize) -> Images {
        Images(Arc::new(Semaphore::new(turns.max(1))))
    }

    /// Runs `work` once a turn is free, on a blocking thread that holds the turn until it ends
    /// (a client that gives up does not free a core still decoding).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let turn = self.0.clone().acquire_owned().await.map_err(|_| {
            Error::new(ErrorCode::InternalError, "the image queue closed; ask again")
        })?;
        let work = move || {
            let _turn = turn;
            work()
        };
        tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
            Err(Error::new(ErrorCode::InternalError, format!("decoding the image failed: {e}")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_budget_leaves_descriptors_for_what_requests_open() {
        assert_eq!(connection_budget(None), MAX_CONNECTIONS);
        // The container this was written in: soft and hard both 20,000.
        assert_eq!(connection_budget(Some(20_000)), MAX_CONNECTIONS);
        // The common default soft limit, were it not raised.
        assert_eq!(connection_budget(Some(1024)), 384);
        assert_eq!(connection_budget(Some(100)), MIN_CONNECTIONS);
        assert_eq!(connection_budget(Some(u64::MAX)), MAX_CONNECTIONS);
    }

    #[test]
    fn raising_the_descriptor_limit_reaches_the_hard_limit() {
        let Some(now) = raise_fd_limit() else { return };
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: as in raise_fd_limit.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        #[allow(clippy::unnecessary_cast)]
        let soft = lim.rlim_cur as u64;
        assert_eq!(now, soft);
        #[cfg(not(target_os = "macos"))]
        assert_eq!(lim.rlim_cur, lim.rlim_max);
    }

    #[tokio::test]
    async fn a_search_beyond_the_cores_waits_its_turn_then_is_told_to_come_back() {
        let searches = Searches::new(1, Duration::from_secs(60));
        let first = searches.enter().await.unwrap();
        // The second waits, and gets the slot the first gives back.
        let second = tokio::spawn({
            let s = searches.clone();
            async move { s.enter().await.map(|_| ()) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!second.is_finished(), "a second search ran beside the first");
        drop(first);
        second.await.unwrap().unwrap();

        // With the slot held and nobody finishing, the wait runs out: busy, not forever.
        let searches = Searches::new(1, Duration::from_millis(50));
        let _held = searches.enter().await.unwrap();
        let e = searches.enter().await.unwrap_err();
        assert_eq!((e.code(), e.code().http_status()), (ErrorCode::Busy, 503));
        assert!(e.message().contains("ask again"), "{}", e.message());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn images_past_the_turns_wait_and_every_one_is_answered() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let images = Images::new(2);
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let asked: Vec<_> = (0..8)
            .map(|i| {
                let (images, running, most) = (images.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    images
                        .run(move || {
                            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(now, Ordering::SeqCst);
                            // Long enough for the other seven to be asking meanwhile.
                            std::thread::sleep(std::time::Duration::from_millis(30));
                            running.fetch_sub(1, Ordering::SeqCst);
                            Ok(i)
                        })
                        .await
                })
            })
            .collect();
        let mut answered = Vec::new();
        for a in asked {
            answered.push(a.await.unwrap().unwrap());
        }
        assert_eq!(answered, (0..8).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 2, "at most two at once, and two did run");
    }
}
