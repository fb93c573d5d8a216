//! The network surfaces: REST and MCP over one HTTP server, and MCP over stdio.
//!
//! The vault tools live once in the engine's front door (`crate::service`: arguments and the
//! engine calls); `mcp` renders them as an rmcp server; `rest` maps HTTP routes onto the same
//! calls; `guard` authenticates and
//! checks Host and Origin before any route runs. Both entry points start the engine's
//! background work (first build, watcher, reconcile) and answer at once: search says
//! `not_ready` until the build is done, everything else works from the first second.
//!
//! This module owns tokio, axum and rmcp; the engine below knows none of them.

pub mod guard;
pub mod mcp;
pub mod rest;

use std::sync::Arc;

use crate::engine::Engine;

/// Why a server could not start (exit status 2 on the command line).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

fn runtime() -> Result<tokio::runtime::Runtime, StartError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("mdvault-http")
        .build()
        .map_err(|e| StartError(format!("cannot start the async runtime: {e}")))
}

/// The gate's policy for this configuration and key.
pub fn policy(engine: &Engine, api_key: &str, listen: &str) -> guard::Policy {
    let server = &engine.config().server;
    let mut allowed_hosts = server.allowed_hosts.clone();
    // Reaching the server at the exact address it was told to bind is never a rebinding.
    if let Ok(addr) = listen.parse::<std::net::SocketAddr>()
        && !addr.ip().is_unspecified()
    {
        allowed_hosts.push(addr.ip().to_string());
    }
    guard::Policy {
        authorization: format!("Bearer {api_key}").into_bytes(),
        allowed_hosts,
        allowed_origins: server.allowed_origins.clone(),
        vaults: engine.vaults().names().iter().map(|s| s.to_string()).collect(),
    }
}

/// Serves REST and MCP on `listen` until Ctrl-C or SIGTERM. `ready` is called with the bound
/// address once the port accepts connections.
pub fn serve(
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
    let rt = runtime()?;
    let router = rest::router(engine.clone(), policy(&engine, api_key.trim(), listen));
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
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .map_err(|e| StartError(format!("the server stopped: {e}")))
    })
}

/// Serves MCP over stdin and stdout until the client closes the stream.
pub fn serve_stdio(engine: Arc<Engine>) -> Result<(), StartError> {
    use rmcp::ServiceExt;
    let rt = runtime()?;
    rt.block_on(async move {
        let _background = engine.start_background();
        let service = mcp::VaultMcp::new(engine)
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
