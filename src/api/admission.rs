//! Which connections the server keeps when it cannot keep them all: one that has not sent a
//! complete request head gives way to a new one, so half-sent requests never keep out a client
//! that is ready.
//!
//! Every open connection is either *waiting* (just accepted, in its TLS handshake, or idle
//! between two requests on a kept-alive connection: no complete request head) or *serving* (from
//! the moment its request head is complete until its response body is written). Together they
//! are at most the connection budget (`limits::connection_budget`). When one more connection is
//! accepted past it, a waiting one is closed to make room, in this order:
//!
//! 1. a half-sent request: part of a head read, the rest not come (plain HTTP; under TLS the
//!    bytes are handshake records, which an honest client mid-handshake has sent too);
//! 2. a connection whose task has read it and found nothing: a bare connection, or a client
//!    idle between kept-alive requests;
//!
//! the longest-waiting first within each (a kept-alive connection starts waiting afresh after
//! each response). A connection whose task has not run yet is not closed, nor one whose complete
//! head already sits unread in its socket: under a flood of new connections the accept loop can
//! run ahead of the connections' tasks, and a client that sent its head at once would otherwise
//! be closed before it was read. If nothing else can give way, the newcomer is admitted past the
//! budget, up to a ceiling of twice the budget; there the same order goes on to those unread
//! connections. A serving connection is never closed for room: its request is what the server
//! is for. Only while no connection can give way does a new one wait in the kernel's accept
//! queue.
//!
//! It owns the table of connections and their states, nothing about HTTP but where a request
//! head ends: the accept loop (`mod.rs`) waits for [`Admission::room`], registers each connection
//! with [`Admission::admit`] and stops serving it when [`Admitted::evicted`] fires; the
//! per-connection service marks a request with [`Marker::serving`], and the response body
//! carries that mark ([`Held`]) until it is written.

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// How much of a waiting connection's unread bytes are looked at for the end of a request
/// head. Honest heads are far shorter; a head longer than this is not protected.
const PEEK_BYTES: usize = 8 * 1024;

/// The most connections open at once, as a multiple of the budget, when no waiting one can give
/// way because none has been read yet: there the unread ones give way too, so the descriptors a
/// flood can take stay bounded (the budget is half of what is free; see `limits`).
const CEILING_FACTOR: usize = 2;

/// The connections of one server and the room left among them. Clones share the table.
#[derive(Clone)]
pub(crate) struct Admission {
    shared: Arc<Shared>,
}

struct Shared {
    capacity: usize,
    table: Mutex<Table>,
    /// Told whenever room may have appeared: a connection closed, or one went back to waiting.
    /// Only the accept loop waits on it, so `notify_one`'s stored permit loses no wake-up.
    room: Notify,
}

#[derive(Default)]
struct Table {
    /// Connections counted against the capacity: every registered one not yet closed or
    /// evicted.
    open: usize,
    /// Both connection ids and waiting turns come from this counter, so a later turn is a
    /// larger number.
    next: u64,
    /// The waiting connections by the turn they started waiting in, oldest first.
    waiting: BTreeMap<u64, u64>,
    conns: HashMap<u64, Entry>,
}

struct Entry {
    /// Its socket, to look for a complete head in (never a closed descriptor: see
    /// [`Admitted`]). `None` where there is no way to look.
    socket: Option<Socket>,
    /// Its turn in `waiting` while it waits.
    turn: Option<u64>,
    /// How far its task has read it while it waits.
    progress: Arc<Progress>,
    /// Requests of this connection between a complete head and a written response (HTTP/1
    /// serves one at a time; counted, so an overlap at the boundary cannot go negative).
    in_flight: usize,
    evict: Arc<Notify>,
}

impl Table {
    fn ticket(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// Closes the waiting connection that should give way first (see the module's order);
    /// false when none can. Below the ceiling only a connection its task has read gives way;
    /// at it, any waiting one.
    fn evict_one(&mut self, at_ceiling: bool) -> bool {
        let mut buf = vec![0u8; PEEK_BYTES];
        let oldest = |stage: u8, buf: &mut [u8]| {
            self.waiting.iter().find_map(|(&turn, id)| {
                let entry = self.conns.get(id)?;
                let gives_way = entry.progress.stage() == stage
                    && !entry.socket.is_some_and(|s| s.head_unread(buf));
                gives_way.then_some(turn)
            })
        };
        let mut pick =
            oldest(Progress::BEGUN, &mut buf).or_else(|| oldest(Progress::SEEN, &mut buf));
        if pick.is_none() && at_ceiling {
            pick = oldest(Progress::UNSEEN, &mut buf)
                .or_else(|| self.waiting.first_key_value().map(|(&turn, _)| turn));
        }
        pick.is_some_and(|turn| self.evict(turn))
    }

    fn evict(&mut self, turn: u64) -> bool {
        let Some(id) = self.waiting.remove(&turn) else { return false };
        if let Some(entry) = self.conns.remove(&id) {
            // Counted out now, not when its task gets round to ending: the room is needed now,
            // and the descriptor closes a moment later.
            self.open -= 1;
            entry.evict.notify_one();
        }
        true
    }
}

/// How far a waiting connection's task has read it: not yet, found nothing (or, under TLS,
/// anything), or part of a request head.
#[derive(Default)]
struct Progress(AtomicU8);

impl Progress {
    const UNSEEN: u8 = 0;
    const SEEN: u8 = 1;
    const BEGUN: u8 = 2;

    fn stage(&self) -> u8 {
        self.0.load(Ordering::Relaxed)
    }

    /// The connection's task read from it; `head_bytes` when what it read was part of a head.
    fn read(&self, head_bytes: bool) {
        let stage = if head_bytes { Progress::BEGUN } else { Progress::SEEN };
        self.0.fetch_max(stage, Ordering::Relaxed);
    }

    /// The connection starts waiting for its next head, having been read.
    fn restart(&self) {
        self.0.store(Progress::SEEN, Ordering::Relaxed);
    }
}

/// A connection's socket, looked into without reading it.
#[derive(Clone, Copy)]
struct Socket(#[cfg(unix)] std::os::fd::RawFd);

impl Socket {
    #[cfg(unix)]
    fn of(stream: &TcpStream) -> Option<Socket> {
        use std::os::fd::AsRawFd;
        Some(Socket(stream.as_raw_fd()))
    }

    #[cfg(not(unix))]
    fn of(_: &TcpStream) -> Option<Socket> {
        None
    }

    /// Whether a whole request head (up to its blank line) has arrived and is still unread.
    #[cfg(unix)]
    fn head_unread(self, buf: &mut [u8]) -> bool {
        // SAFETY: `buf` is valid for `buf.len()` bytes, and the descriptor is open: a table
        // entry is removed before its socket closes (see `Admitted`). MSG_PEEK leaves the
        // bytes for the connection's own reader; MSG_DONTWAIT never blocks the accept loop.
        let n = unsafe {
            libc::recv(
                self.0,
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        usize::try_from(n).is_ok_and(|n| head_complete(&buf[..n.min(buf.len())]))
    }

    #[cfg(not(unix))]
    fn head_unread(self, _: &mut [u8]) -> bool {
        false
    }
}

/// Whether `bytes` hold a request head up to its end (the blank line after the header lines).
fn head_complete(bytes: &[u8]) -> bool {
    bytes.windows(4).any(|w| w == b"\r\n\r\n")
}

impl Admission {
    /// Room for `capacity` connections at once (at least one).
    pub(crate) fn new(capacity: usize) -> Admission {
        Admission {
            shared: Arc::new(Shared {
                capacity: capacity.max(1),
                table: Mutex::new(Table::default()),
                room: Notify::new(),
            }),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // The table is consistent between statements; a panic elsewhere cannot break it.
        self.shared.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Returns once one more connection can be admitted: the budget is not full, or a waiting
    /// connection can be closed for it. While every connection is serving, this waits.
    pub(crate) async fn room(&self) {
        loop {
            {
                let t = self.table();
                if t.open < self.shared.capacity || !t.waiting.is_empty() {
                    return;
                }
            }
            self.shared.room.notified().await;
        }
    }

    /// Registers an accepted connection as waiting, first closing one that can give way when
    /// the budget is full. Serve the connection through the returned [`Admitted`]. `plain`:
    /// the bytes read are HTTP itself, so that part of a head read marks a half-sent request;
    /// under TLS they are handshake records, which a client in the middle of its handshake
    /// has sent too.
    pub(crate) fn admit(&self, stream: TcpStream, plain: bool) -> Admitted {
        let connection = self.register(Socket::of(&stream));
        Admitted { connection, plain, stream }
    }

    fn register(&self, socket: Option<Socket>) -> Connection {
        let mut t = self.table();
        let capacity = self.shared.capacity;
        let at_ceiling = t.open >= capacity * CEILING_FACTOR;
        if t.open >= capacity && t.evict_one(at_ceiling) {
            tracing::debug!(
                "closed the connection that waited longest for its request head, to admit a \
                 new one ({} connections open)",
                t.open
            );
        }
        let id = t.ticket();
        let turn = t.ticket();
        let evict = Arc::new(Notify::new());
        let progress = Arc::new(Progress::default());
        let entry = Entry {
            socket,
            turn: Some(turn),
            progress: progress.clone(),
            in_flight: 0,
            evict: evict.clone(),
        };
        t.conns.insert(id, entry);
        t.waiting.insert(turn, id);
        t.open += 1;
        Connection { marker: Marker { shared: self.clone(), id }, evict, progress }
    }

    /// Closes a waiting connection (in the module's order, unread ones too), when the process
    /// is out of descriptors; false when every connection is serving.
    pub(crate) fn make_room(&self) -> bool {
        self.table().evict_one(true)
    }

    /// How many connections are open and how many of them are waiting.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let t = self.table();
        (t.open, t.waiting.len())
    }
}

/// An admitted connection's socket, to be served: reads and writes go straight to the socket.
/// Dropping it gives its room back, before the socket closes (fields drop in order), so the
/// table never looks into a descriptor that was closed and perhaps reused.
pub(crate) struct Admitted {
    connection: Connection,
    /// Whether the bytes read are HTTP (not TLS records): see [`Admission::admit`].
    plain: bool,
    stream: TcpStream,
}

impl Admitted {
    /// What the connection's service uses to mark its requests.
    pub(crate) fn marker(&self) -> Marker {
        self.connection.marker()
    }

    /// Completes when this connection was closed to make room: its task stops serving it.
    pub(crate) fn evicted(&self) -> impl Future<Output = ()> + Send + 'static {
        self.connection.evicted()
    }
}

impl AsyncRead for Admitted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        // Pending or not, the task has looked; bytes of plain HTTP are part of a head.
        let got_bytes = read.is_ready() && buf.filled().len() > before;
        this.connection.progress.read(this.plain && got_bytes);
        read
    }
}

impl AsyncWrite for Admitted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// One registered connection: dropping it gives its room back.
struct Connection {
    marker: Marker,
    evict: Arc<Notify>,
    progress: Arc<Progress>,
}

impl Connection {
    fn marker(&self) -> Marker {
        self.marker.clone()
    }

    fn evicted(&self) -> impl Future<Output = ()> + Send + 'static {
        let evict = self.evict.clone();
        async move { evict.notified().await }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let mut t = self.marker.shared.table();
        if let Some(entry) = t.conns.remove(&self.marker.id) {
            if let Some(turn) = entry.turn {
                t.waiting.remove(&turn);
            }
            t.open -= 1;
        }
        drop(t);
        self.marker.shared.shared.room.notify_one();
    }
}

/// Marks one connection's requests as serving. Cheap to clone into a per-request service.
#[derive(Clone)]
pub(crate) struct Marker {
    shared: Admission,
    id: u64,
}

impl Marker {
    /// The connection's request head is complete: it serves until the returned mark drops.
    pub(crate) fn serving(&self) -> Serving {
        let mut t = self.shared.table();
        if let Some(entry) = t.conns.get_mut(&self.id) {
            entry.in_flight += 1;
            if let Some(turn) = entry.turn.take() {
                t.waiting.remove(&turn);
            }
        }
        Serving(self.clone())
    }
}

/// A request in flight; when it drops (the response written, or the request abandoned), its
/// connection waits again, as the newest in line.
pub(crate) struct Serving(Marker);

impl Drop for Serving {
    fn drop(&mut self) {
        let Marker { shared, id } = &self.0;
        let mut t = shared.table();
        let turn = t.ticket();
        let Some(entry) = t.conns.get_mut(id) else { return };
        entry.in_flight = entry.in_flight.saturating_sub(1);
        if entry.in_flight == 0 && entry.turn.is_none() {
            // Whatever was read while serving was that request's; its next head is unbegun.
            entry.progress.restart();
            entry.turn = Some(turn);
            t.waiting.insert(turn, *id);
            drop(t);
            shared.shared.room.notify_one();
        }
    }
}

/// A response body that keeps its request marked [`Serving`] until hyper has written the last
/// of it and dropped it: a response streamed for minutes (an MCP answer, a large document) is
/// serving all along.
pub(crate) struct Held<B> {
    body: B,
    _serving: Serving,
}

impl<B> Held<B> {
    pub(crate) fn new(body: B, serving: Serving) -> Held<B> {
        Held { body, _serving: serving }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for Held<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a future completes on its first poll.
    fn is_ready(fut: impl Future) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        std::pin::pin!(fut).poll(&mut cx).is_ready()
    }

    fn is_evicted(c: &Connection) -> bool {
        is_ready(c.evicted())
    }

    /// A registered connection its task has read and found nothing in.
    fn seen(a: &Admission) -> Connection {
        let c = a.register(None);
        c.progress.read(false);
        c
    }

    #[test]
    fn past_the_budget_the_longest_waiting_connection_makes_room() {
        let a = Admission::new(2);
        let first = seen(&a);
        let second = seen(&a);
        assert_eq!(a.counts(), (2, 2));
        let third = seen(&a);
        assert!(is_evicted(&first), "the oldest waiting connection was kept");
        assert!(!is_evicted(&second) && !is_evicted(&third));
        assert_eq!(a.counts(), (2, 2));
        // The evicted connection's task ends later; that changes no count.
        drop(first);
        assert_eq!(a.counts(), (2, 2));
        drop((second, third));
        assert_eq!(a.counts(), (0, 0));
    }

    #[test]
    fn a_serving_connection_is_never_closed_for_room() {
        let a = Admission::new(2);
        let busy = seen(&a);
        let request = busy.marker().serving();
        let idle = seen(&a);
        let newcomer = seen(&a);
        assert!(is_evicted(&idle) && !is_evicted(&busy) && !is_evicted(&newcomer));
        // With no waiting connection left to close, make_room says so.
        let _answered = newcomer.marker().serving();
        assert!(!a.make_room());
        drop(request);
        assert!(a.make_room(), "a connection back between requests can give way");
        assert!(is_evicted(&busy));
    }

    #[test]
    fn a_kept_alive_connection_waits_afresh_after_each_response() {
        let a = Admission::new(2);
        let client = seen(&a);
        let other = seen(&a);
        // The client's request is answered after the other connection came: the client now
        // waits for its next request as the newest, and the other gives way first.
        drop(client.marker().serving());
        let _newcomer = seen(&a);
        assert!(is_evicted(&other) && !is_evicted(&client));
    }

    #[test]
    fn a_half_sent_request_gives_way_before_a_connection_that_has_sent_nothing() {
        let a = Admission::new(3);
        let quiet = seen(&a);
        let half_sent = a.register(None);
        half_sent.progress.read(true);
        let client = seen(&a);
        // The quiet connection is older, but the half-sent one goes first.
        let _newcomer = seen(&a);
        assert!(is_evicted(&half_sent));
        assert!(!is_evicted(&quiet) && !is_evicted(&client));
        // With no half-sent request left, the longest-waiting goes.
        let _another = seen(&a);
        assert!(is_evicted(&quiet));
        // What a request read while serving does not make its connection half-sent after.
        let request = client.marker().serving();
        client.progress.read(true);
        drop(request);
        assert_eq!(client.progress.stage(), Progress::SEEN);
    }

    #[test]
    fn a_connection_not_yet_read_is_closed_only_at_the_ceiling() {
        let a = Admission::new(1);
        // Its task has not run: past the budget the newcomer is admitted beside it.
        let unread = a.register(None);
        let newcomer = a.register(None);
        assert!(!is_evicted(&unread));
        assert_eq!(a.counts(), (2, 2));
        // At twice the budget, the longest-waiting of them gives way.
        let _third = a.register(None);
        assert!(is_evicted(&unread) && !is_evicted(&newcomer));
        assert_eq!(a.counts(), (2, 2));
    }

    #[test]
    fn a_new_connection_waits_only_while_every_connection_is_serving() {
        let a = Admission::new(1);
        let only = seen(&a);
        // One waiting connection: there is room, by closing it.
        assert!(is_ready(a.room()));
        let request = only.marker().serving();
        let mut room = std::pin::pin!(a.room());
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(room.as_mut().poll(&mut cx).is_pending(), "room past a budget all serving");
        // The answer is written: the connection waits again, and the accept loop is told.
        drop(request);
        assert!(room.as_mut().poll(&mut cx).is_ready());
    }

    #[tokio::test]
    async fn a_connection_whose_whole_head_waits_unread_is_not_closed_for_room() {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let a = Admission::new(2);
        // Two clients, both looked at by their tasks before their bytes came: one then sent a
        // whole head, the other only part of one, and neither is read yet.
        let mut ready = TcpStream::connect(addr).await.unwrap();
        let ready_side = a.admit(listener.accept().await.unwrap().0, true);
        let mut half = TcpStream::connect(addr).await.unwrap();
        let half_side = a.admit(listener.accept().await.unwrap().0, true);
        ready_side.connection.progress.read(false);
        half_side.connection.progress.read(false);
        ready.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        half.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: sl").await.unwrap();
        // The bytes are on their way over loopback; wait until the head can be seen.
        let socket = Socket::of(&ready_side.stream).unwrap();
        let mut buf = vec![0; PEEK_BYTES];
        while !socket.head_unread(&mut buf) {
            tokio::task::yield_now().await;
        }
        // The older connection's head is whole: the newer, half-sent one gives way instead.
        let newcomer = a.register(None);
        assert!(is_ready(half_side.evicted()) && !is_ready(ready_side.evicted()));
        // While it is the only one waiting, newcomers are admitted past the budget, up to the
        // ceiling (twice the budget); there it goes all the same.
        let mut serving = vec![newcomer.marker().serving()];
        let mut beyond = Vec::new();
        for _ in 0..2 {
            let c = a.register(None);
            serving.push(c.marker().serving());
            beyond.push(c);
        }
        assert_eq!(a.counts(), (4, 1));
        assert!(!is_ready(ready_side.evicted()));
        let _last = a.register(None);
        assert!(is_ready(ready_side.evicted()));
        assert_eq!(a.counts(), (4, 1));
    }

    #[test]
    fn a_head_is_complete_at_its_blank_line() {
        assert!(head_complete(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(head_complete(b"GET / HTTP/1.1\r\n\r\nbody"));
        assert!(!head_complete(b"GET / HTTP/1.1\r\nHost: x\r\n"));
        assert!(!head_complete(b""));
    }
}
