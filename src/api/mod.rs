//! The network surfaces: REST and MCP over one HTTP server, and MCP over stdio.
//!
//! The vault tools live once in the engine's front door (`crate::service`: arguments and the
//! engine calls); `mcp` renders them as an rmcp server; `rest` maps HTTP routes onto the same
//! calls (`accept` decides which form of a note a request asks for); `guard` authenticates and
//! checks Host and Origin before any route runs; `limits` holds the timeouts and caps; `web` is
//! the page people use in a browser at `/ui/`, over the same calls. Both
//! entry points start the engine's background work (first build, watcher, reconcile) and
//! answer at once: search says `not_ready` until the build is done, everything else works
//! from the first second.
//!
//! The HTTP server is hyper's HTTP/1 connection driven by an accept loop here rather than
//! `axum::serve`, which takes no settings: `admission` decides which connections stay open when
//! there are too many (one still sending its request head gives way to a new one), and each
//! connection gets the header and body read timeouts of `limits`.
//!
//! This module owns tokio, axum, hyper and rmcp; the engine below knows none of them.

mod accept;
mod admission;
mod common;
pub(crate) mod compat;
pub mod guard;
pub(crate) mod limits;
mod logic;
pub(crate) mod mcp;
pub(crate) mod oauth;
mod patch;
mod periodic;
mod preview;
mod prose;
mod ranges;
mod readiness;
pub(crate) mod render;
pub mod rest;
pub(crate) mod sanitize;
mod scale;
pub(crate) mod tls;
pub(crate) mod web;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tower::ServiceExt;
use tower_http::timeout::TimeoutBody;

use crate::engine::Engine;

/// Why a server could not start (exit status 2 on the command line).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct StartError(pub String);

fn runtime() -> Result<tokio::runtime::Runtime, StartError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("mdvault-http")
        .build()
        .map_err(|e| StartError(format!("cannot start the async runtime: {e}")))
}

/// The gate's policy for this configuration and key.
pub(crate) fn policy(engine: &Engine, api_key: &str, listen: &str) -> guard::Policy {
    let server = &engine.config().server;
    let mut allowed_hosts = server.allowed_hosts.clone();
    // Reaching the server at the exact address it was told to bind is never a rebinding.
    if let Ok(addr) = listen.parse::<std::net::SocketAddr>()
        && !addr.ip().is_unspecified()
    {
        allowed_hosts.push(addr.ip().to_string());
    }
    // The public address is how clients reach the server from outside: its Host is allowed.
    if let Some(authority) =
        server.public_url.as_deref().and_then(|u| url::Url::parse(u).ok()).map(|u| {
            let host = u.host_str().unwrap_or_default().to_string();
            match u.port() {
                Some(p) => format!("{host}:{p}"),
                None => host,
            }
        })
    {
        allowed_hosts.push(authority);
    }
    guard::Policy {
        authorization: format!("Bearer {api_key}").into_bytes(),
        allowed_hosts,
        allowed_origins: server.allowed_origins.clone(),
        vaults: engine.vaults().names().iter().map(|s| s.to_string()).collect(),
        public: rest::PUBLIC,
        tokens: None,
        oauth: server
            .oauth
            .then(|| guard::OAuthHint { public_url: server.public_url.clone(), tls: server.tls }),
        owner_loopback_only: server.owner_loopback_only,
    }
}

/// Serves REST and MCP on `listen` until Ctrl-C or SIGTERM. `ready` is called with the bound
/// address once the port accepts connections.
pub(crate) fn serve(
    engine: Arc<Engine>,
    api_key: &str,
    listen: &str,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<(), StartError> {
    if api_key.trim().is_empty() {
        return Err(StartError(
            "no API key: set MDVAULT_API_KEY to a secret of your choice (for example \
             `export MDVAULT_API_KEY=$(openssl rand -hex 24)`); the server never runs without one"
                .into(),
        ));
    }
    let fd_limit = limits::raise_fd_limit();
    let connections = limits::connection_budget(fd_limit);
    tracing::debug!(
        "serving up to {connections} connections at once (open-file limit {fd_limit:?})"
    );
    let rt = runtime()?;
    let mut policy = policy(&engine, api_key.trim(), listen);
    // One search queue for every surface: the page's searches wait in line with REST's and
    // MCP's, so the cores are never oversubscribed.
    let searches = limits::Searches::for_this_machine();
    // And one queue for decoding images: the page's fitted photos and MCP's previews.
    let images = limits::Images::for_this_machine();
    // With `server.tls`, the certificate is made (or read back) before the port opens, so a
    // server that cannot serve what it was asked to does not start at all.
    let tls = if engine.config().server.tls {
        let server = &engine.config().server;
        let t = tls::load_or_make(&engine.config().data_dir, listen, &server.allowed_hosts)
            .map_err(StartError)?;
        if !t.made {
            tracing::info!("serving HTTPS with the certificate kept at {}", t.cert_path.display());
        }
        Some(t)
    } else {
        None
    };
    let certificate = tls.as_ref().map(|t| t.pem.clone());
    // The web page's sessions live in the data directory's credentials file; one that cannot
    // be opened stops the start, by name, rather than every sign-in later.
    let credentials = crate::auth::Credentials::open(&engine.config().data_dir)
        .map(Arc::new)
        .map_err(|e| StartError(e.message().to_string()))?;
    // Clients' tokens are checked in the same file.
    policy.tokens = Some(guard::Tokens::new(credentials.clone(), api_key.trim()));
    // OAuth's routes (`/oauth/`, `/.well-known/`), when on, hand out tokens of the same kind.
    let door = engine.config().server.oauth.then(|| {
        oauth::Door::new(
            credentials.clone(),
            crate::auth::Pepper::for_tokens(api_key.trim()),
            Arc::new(policy.clone()),
            &engine.config().server,
            engine.vaults().names().iter().map(|s| s.to_string()).collect(),
        )
    });
    // The web page's routes (all under `/ui`) come first, with OAuth's; everything else is
    // REST and MCP.
    let mut router = web::router(
        engine.clone(),
        policy.clone(),
        api_key.trim(),
        searches.clone(),
        images.clone(),
        credentials,
        door.clone(),
    );
    if let Some(door) = door {
        router = router.merge(oauth::router(door));
    }
    let router = router.fallback_service(rest::router(
        engine.clone(),
        policy,
        searches,
        images,
        certificate,
    ));
    let signal = watch_for_shutdown()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| StartError(format!("cannot listen on {listen}: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| StartError(format!("cannot read the bound address: {e}")))?;
        // The port is bound before the build starts, so /healthz answers from the start.
        let _background = engine.start_background();
        ready(addr);
        let acceptor = tls.map(|t| t.acceptor);
        let signalled = async {
            let _ = signal.await;
        };
        // On a worker, not on this thread: there the accept loop takes turns with the
        // connections it starts (see `serve_connections`) instead of running ahead of them.
        let served = serve_connections(listener, router, connections, acceptor, signalled);
        tokio::spawn(served)
            .await
            .map_err(|e| StartError(format!("the server stopped unexpectedly: {e}")))
    })?;
    // Blocking work still running (a search, an evaluation) is not waited for: every write is
    // atomic and every move journaled, so ending mid-way loses nothing acknowledged.
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    Ok(())
}

/// Waits for Ctrl-C or SIGTERM on a thread and a runtime of its own, then starts the exit
/// deadline and resolves the returned receiver (which starts the graceful shutdown). Not on
/// the serving runtime: when long requests hold every one of its workers, a signal handled
/// there is only seen once one of them is free, and the deadline would start minutes late.
fn watch_for_shutdown() -> Result<tokio::sync::oneshot::Receiver<()>, StartError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| StartError(format!("cannot start the signal watcher: {e}")))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("mdvault-signal".into())
        .spawn(move || {
            rt.block_on(shutdown_signal());
            exit_after(limits::SHUTDOWN_DEADLINE);
            let _ = tx.send(());
        })
        .map_err(|e| StartError(format!("cannot start the signal watcher: {e}")))?;
    Ok(rx)
}

/// Ends the process `after` the shutdown signal whatever is still running (a build pass, a
/// scan, a background thread that will not stop): a SIGTERM must end the server within
/// seconds. Safe for the same reason a `kill -9` is: writes are staged and renamed, moves are
/// journaled, the index is SQLite in WAL mode, and the next start settles what was left.
fn exit_after(after: std::time::Duration) {
    let spawned = std::thread::Builder::new().name("mdvault-exit".into()).spawn(move || {
        std::thread::sleep(after);
        tracing::warn!("still busy {} s after the signal; exiting now", after.as_secs());
        std::process::exit(0);
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the exit deadline: {e}");
    }
}

/// How long the accept loop pauses after an accept fails for a reason other than the client
/// (out of memory, or out of descriptors with no waiting connection to close): retrying at
/// once would spin, and a pause lets connections close and give theirs back.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(250);

/// Accepts and serves connections until `shutdown` completes, then lets the open ones finish.
///
/// Accepting never stops for half-sent requests: `admission` keeps at most `max_connections`
/// open and, past it, closes one still waiting for its request head (a half-sent one first), so
/// a client ready to send is admitted at once however many connections sit idle. The loop must
/// run on a worker and yields after each accept, so that each new connection is read before the
/// next one needs room (`admission` spares one not yet read). hyper drops a head
/// that does not arrive within `limits::HEADER_READ_TIMEOUT` anyway, and bodies are held to
/// `limits::BODY_READ_TIMEOUT` between pieces. With `tls`, each connection's handshake runs on
/// its own task (so a slow one never holds up the loop), held to the same deadline as a request
/// head and waiting like one, and every request it carries is marked [`tls::OverTls`]. Every request
/// carries its peer's address as axum's `ConnectInfo`.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    max_connections: usize,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) {
    let admission = admission::Admission::new(max_connections);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits::HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            () = admission.room() => {}
            () = &mut shutdown => break,
        }
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(&e, &admission).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let stream = admission.admit(stream, tls.is_none());
        let service = connection_service(router.clone(), tls.is_some(), peer, stream.marker());
        let evicted = stream.evicted();
        let (http, watcher, tls) = (http.clone(), graceful.watcher(), tls.clone());
        tokio::spawn(async move {
            // A client that hangs up, times out, fails its handshake or is closed for room ends
            // here; nothing to report. Either way the connection's room is given back when
            // `stream` drops.
            let served = async move {
                match tls {
                    None => {
                        let conn = http.serve_connection(TokioIo::new(stream), service);
                        let _ = watcher.watch(conn).await;
                    }
                    Some(acceptor) => {
                        let handshake = acceptor.accept(stream);
                        if let Ok(Ok(stream)) =
                            tokio::time::timeout(limits::HEADER_READ_TIMEOUT, handshake).await
                        {
                            let conn = http.serve_connection(TokioIo::new(stream), service);
                            let _ = watcher.watch(conn).await;
                        }
                    }
                }
            };
            tokio::select! {
                () = served => {}
                () = evicted => {}
            }
        });
        // The new connection's task runs before the next accept, so that its head, when it
        // came with the connection, is read before a flood of newcomers needs its room.
        tokio::task::yield_now().await;
    }
    drop(listener);
    // Requests in flight get a short grace to finish; one that would run on (a long JsonLogic
    // query, a scan of a pathological note) does not hold the process past it.
    if tokio::time::timeout(limits::SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!(
            "requests still running {} s after the signal were cut off",
            limits::SHUTDOWN_GRACE.as_secs()
        );
    }
}

/// What the accept loop does when an accept fails. A client that gave up before it was
/// accepted is nothing; running out of descriptors closes the connection that has waited
/// longest for its head, so the one in the accept queue gets in, and waits for it to close.
async fn accept_failed(e: &std::io::Error, admission: &admission::Admission) {
    use std::io::ErrorKind;
    if matches!(e.kind(), ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset) {
        return;
    }
    let out_of_descriptors =
        matches!(e.raw_os_error(), Some(code) if code == libc::EMFILE || code == libc::ENFILE);
    if out_of_descriptors && admission.make_room() {
        tracing::debug!("out of file descriptors: closed the longest-waiting connection");
        let _ = tokio::time::timeout(ACCEPT_ERROR_PAUSE, admission.room()).await;
        return;
    }
    tracing::error!("could not accept a connection: {e}");
    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
}

/// The service one connection's requests go through: the router, with each body held to
/// `limits::BODY_READ_TIMEOUT`, TLS marked, and each request marked serving (through
/// `admission`) from its complete head until its response is written.
fn connection_service(
    router: axum::Router,
    over_tls: bool,
    peer: std::net::SocketAddr,
    marker: admission::Marker,
) -> TowerToHyperService<
    impl tower::Service<
        http::Request<hyper::body::Incoming>,
        Response = http::Response<admission::Held<axum::body::Body>>,
        Error = std::convert::Infallible,
        Future = impl Send,
    > + Clone,
> {
    TowerToHyperService::new(tower::service_fn(move |req: http::Request<hyper::body::Incoming>| {
        // hyper calls the service once the head is complete: from here the connection serves.
        let serving = marker.serving();
        let router = router.clone();
        async move {
            let mut req = req.map(|body| TimeoutBody::new(limits::BODY_READ_TIMEOUT, body));
            // Where the request came from, for the web page's list of sessions.
            req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
            if over_tls {
                req.extensions_mut().insert(tls::OverTls);
            }
            let response = router.oneshot(req).await?;
            Ok(response.map(|body| admission::Held::new(body, serving)))
        }
    }))
}

/// Serves MCP over stdin and stdout until the client closes the stream.
pub(crate) fn serve_stdio(engine: Arc<Engine>) -> Result<(), StartError> {
    use rmcp::ServiceExt;
    let rt = runtime()?;
    rt.block_on(async move {
        let _background = engine.start_background();
        let service = mcp::VaultMcp::new(
            engine,
            limits::Searches::for_this_machine(),
            limits::Images::for_this_machine(),
        )
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| StartError(format!("the MCP session did not start: {e}")))?;
        service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| StartError(format!("the MCP session ended with an error: {e}")))
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
