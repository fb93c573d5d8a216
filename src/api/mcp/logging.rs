//! MCP logging: refused tool calls and index progress as `notifications/message`, logger
//! `mdvault`, to a client that asked for them.
//!
//! A client opts in one of two ways, and nothing is sent to one that did neither (the spec
//! leaves the default to the server; silence keeps a plain HTTP answer plain JSON, since a
//! notification turns it into an event stream):
//! - per request, with `io.modelcontextprotocol/logLevel` in the request's `_meta` (the way
//!   stateless HTTP and newer protocol versions carry it): the call's own notifications;
//! - per session, with `logging/setLevel` (stdio, where a session outlives a request): every
//!   later call's notifications, and index progress while the session lasts.
//!
//! Notifications below the level are not sent. Index progress is `info`, at most one a second
//! and only when it moved; a refusal is `warning`, one per refused call.

// rmcp marks logging deprecated (SEP-2577 moves it out of the core protocol); the clients this
// serves still speak it, so this module uses it knowingly.
#![allow(deprecated)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde::Serialize;
use serde_json::Value;

use crate::engine::Engine;

/// The logger every notification names.
pub(crate) const LOGGER: &str = "mdvault";

/// How often index progress may be told.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// A session's logging: the level `logging/setLevel` set, if any.
#[derive(Clone, Default)]
pub(crate) struct Logging {
    level: Arc<Mutex<Option<LoggingLevel>>>,
    /// Whether the session's progress watcher runs (one per session).
    watching: Arc<AtomicBool>,
}

impl Logging {
    /// Sets the session's level (`logging/setLevel`); from `info` down, index progress is
    /// watched for as long as the session's transport is open.
    pub(crate) fn set(&self, level: LoggingLevel, engine: Arc<Engine>, peer: Peer<RoleServer>) {
        *self.level.lock().unwrap_or_else(|p| p.into_inner()) = Some(level);
        if admits(level, LoggingLevel::Info) && !self.watching.swap(true, Ordering::SeqCst) {
            let (level, watching) = (self.level.clone(), self.watching.clone());
            tokio::spawn(async move {
                let threshold = || *level.lock().unwrap_or_else(|p| p.into_inner());
                let mut last = None;
                while !peer.is_transport_closed() {
                    if !tell_progress(&engine, &peer, threshold(), &mut last).await {
                        break;
                    }
                    tokio::time::sleep(PROGRESS_EVERY).await;
                }
                watching.store(false, Ordering::SeqCst);
            });
        }
    }

    /// The level a request's notifications are held to: its own opt-in, else the session's.
    pub(crate) fn level_for(&self, ctx: &RequestContext<RoleServer>) -> Option<LoggingLevel> {
        ctx.meta.log_level().or(*self.level.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Watches index progress for one call that opted in by its own `_meta` (a session's
    /// watcher covers the rest); the watch ends when the returned guard drops.
    pub(crate) fn watch_call(
        &self,
        ctx: &RequestContext<RoleServer>,
        engine: Arc<Engine>,
    ) -> Option<Watch> {
        let level = ctx.meta.log_level().filter(|l| admits(*l, LoggingLevel::Info))?;
        let peer = ctx.peer.clone();
        Some(Watch(tokio::spawn(async move {
            let mut last = None;
            while tell_progress(&engine, &peer, Some(level), &mut last).await {
                tokio::time::sleep(PROGRESS_EVERY).await;
            }
        })))
    }
}

/// A call's progress watch, stopped when dropped.
pub(crate) struct Watch(tokio::task::JoinHandle<()>);

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Severity order, lowest first, as the spec lists the syslog levels.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Whether a threshold of `threshold` lets a message of `level` through.
fn admits(threshold: LoggingLevel, level: LoggingLevel) -> bool {
    rank(level) >= rank(threshold)
}

/// A log message's `data`, told apart by `event`.
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Told<'a> {
    /// A tool call was refused: the tool and the refusal's text.
    Refused { tool: &'a str, message: &'a str },
    /// A pass's progress: the sentence `status` shows, and its numbers.
    IndexProgress { message: String, stage: &'a str, done: usize, total: usize },
}

/// Sends one message when the threshold admits it; false when the client is gone.
async fn send(
    peer: &Peer<RoleServer>,
    threshold: Option<LoggingLevel>,
    level: LoggingLevel,
    data: Told<'_>,
) -> bool {
    if !threshold.is_some_and(|t| admits(t, level)) {
        return true;
    }
    let data = serde_json::to_value(data).unwrap_or(Value::Null);
    let message = LoggingMessageNotificationParam::new(level, data).with_logger(LOGGER);
    peer.notify_logging_message(message).await.is_ok()
}

/// Tells the index's progress when it moved since `last`; false when the client is gone.
async fn tell_progress(
    engine: &Engine,
    peer: &Peer<RoleServer>,
    threshold: Option<LoggingLevel>,
    last: &mut Option<(String, usize, usize)>,
) -> bool {
    let Some(p) = engine.pass_progress() else {
        *last = None;
        return true;
    };
    let now = Some((p.stage.clone(), p.done, p.total));
    if now == *last {
        return true;
    }
    *last = now;
    let data = Told::IndexProgress {
        message: p.describe(),
        stage: &p.stage,
        done: p.done,
        total: p.total,
    };
    send(peer, threshold, LoggingLevel::Info, data).await
}

/// Tells of a refused tool call: the tool and the refusal's text (which starts with its code).
pub(crate) async fn refused(
    peer: &Peer<RoleServer>,
    threshold: Option<LoggingLevel>,
    tool: &str,
    text: &str,
) {
    let data = Told::Refused { tool, message: text };
    send(peer, threshold, LoggingLevel::Warning, data).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_lets_through_its_level_and_the_more_severe_ones_only() {
        assert!(admits(LoggingLevel::Info, LoggingLevel::Warning));
        assert!(admits(LoggingLevel::Warning, LoggingLevel::Warning));
        assert!(!admits(LoggingLevel::Warning, LoggingLevel::Info));
        assert!(!admits(LoggingLevel::Error, LoggingLevel::Warning));
        assert!(admits(LoggingLevel::Debug, LoggingLevel::Emergency));
    }
}
