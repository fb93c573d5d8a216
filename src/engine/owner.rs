//! The data directory's one writer: who owns the index, and how another process reaches it.
//!
//! Exactly one process at a time writes a data directory's index (the store's chunks and
//! vectors, the lexical index). It proves ownership with an exclusive lock on `owner.lock`,
//! which the kernel releases when the process ends however it ends, so a crash never leaves a
//! stale owner behind. The owner listens on `indexer.sock` beside it: a Unix socket inside the
//! data directory, which is private to the user (0700), so nothing guesses a port and no API key
//! is involved; every request also carries the owner's token from `owner.token` (0600, made
//! afresh by each owner), so a process that can reach the socket but not read the data
//! directory is refused before any job starts. Every other process on that data directory is a reader: it searches the files
//! read-only and sends its index jobs (a pass over a vault, paths it has just written) to the
//! owner over the socket.
//!
//! The protocol is one JSON request line and one JSON reply line per connection, in the typed
//! [`Request`] and [`Reply`] below, spoken only between processes of the same binary.
//!
//! This module does no indexing itself: the owner hands each job to the
//! [`Indexer`](super::indexer::Indexer) and writes back what it answered.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::indexer::Indexer;
use crate::config::DataDir;
use crate::error::{Error, ErrorCode, Result};
use crate::index::{Pass, Silent, SyncReport};

/// How long a reader waits for a socket that an owner has locked but not yet bound (an owner
/// opens its store and index between the two, which takes a moment on a large index).
const CONNECT_PATIENCE: Duration = Duration::from_secs(20);
/// How long a request line may take to arrive: a client that connects and sends nothing must
/// not hold a handler thread.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Who holds a data directory: told to any process that asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct OwnerInfo {
    /// The owner's process id.
    pub(crate) pid: u32,
    /// What the owner is running (`serve`, `mcp`, `index`, ...), for messages.
    pub(crate) command: String,
    /// The vaults it indexes, by its names for them, with their canonical roots.
    pub(crate) vaults: Vec<VaultRoot>,
    /// How far the pass it runs now is (absent between passes, and from an older owner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) progress: Option<crate::index::PassProgress>,
}

/// A vault as the owner knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VaultRoot {
    /// The owner's name for it.
    pub(crate) name: String,
    /// Its canonical root.
    pub(crate) root: PathBuf,
}

/// What a reader asks of the owner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "job", rename_all = "snake_case")]
pub(crate) enum Request {
    /// Who are you?
    Hello,
    /// A pass over one vault (`full`: re-read and re-chunk every file).
    Sync {
        /// The owner's name of the vault.
        vault: String,
        /// Re-chunk every file, not only changed ones.
        full: bool,
        /// Also embed every text again, replacing stored vectors (absent from an older
        /// reader's request: false).
        #[serde(default)]
        re_embed: bool,
    },
    /// Re-index these paths of one vault (a reader has just written them).
    Update {
        /// The owner's name of the vault.
        vault: String,
        /// Vault-relative paths.
        paths: Vec<String>,
    },
}

/// A request line: the job and the owner's token.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Envelope {
    token: String,
    request: Request,
}

/// A fresh token: 32 random bytes, hex.
fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes the token where only this user can read it, replacing a dead owner's.
fn write_token(path: &Path, token: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let staged = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&staged)?;
    f.write_all(token.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&staged, path)
}

/// Compares two tokens in time that does not depend on where they differ.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The owner's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reply {
    /// The answer to [`Request::Hello`].
    Owner(OwnerInfo),
    /// What a sync or update did.
    Report(SyncReport),
    /// A refusal.
    Error {
        /// The error code's wire name.
        code: String,
        /// The message.
        message: String,
    },
}

fn error_reply(e: &Error) -> Reply {
    Reply::Error { code: e.code().as_str().to_string(), message: e.message().to_string() }
}

fn error_from_reply(code: &str, message: String) -> Error {
    let code = ErrorCode::ALL
        .iter()
        .copied()
        .find(|c| c.as_str() == code)
        .unwrap_or(ErrorCode::InternalError);
    Error::new(code, message)
}

fn io_error(what: &str, path: &Path, e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::InternalError,
        format!("cannot {what} {}: {e}; check the data directory's permissions", path.display()),
    )
}

/// The exclusive lock that makes this process the data directory's owner; dropping it (or the
/// process ending) gives ownership up.
#[derive(Debug)]
pub(crate) struct Ownership {
    _file: std::fs::File,
}

/// Takes ownership of `data_dir` if no other process (or other engine of this process) holds
/// it: `Ok(None)` when someone does.
pub(crate) fn try_own(data_dir: &Path) -> Result<Option<Ownership>> {
    let file = open_lock(data_dir)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(Ownership { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(io_error("lock", &DataDir::new(data_dir).owner_lock(), &e))
        }
    }
}

/// Waits until ownership of `data_dir` is free, then takes it (a reader that serves takes over
/// when the owner ends).
pub(crate) fn own_when_free(data_dir: &Path) -> Result<Ownership> {
    let file = open_lock(data_dir)?;
    file.lock().map_err(|e| io_error("lock", &DataDir::new(data_dir).owner_lock(), &e))?;
    Ok(Ownership { _file: file })
}

fn open_lock(data_dir: &Path) -> Result<std::fs::File> {
    crate::index::store::create_private_dir(data_dir)?;
    let path = DataDir::new(data_dir).owner_lock();
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io_error("open", &path, &e))
}

/// The owner's listening socket; dropping it stops the listener and removes the socket file.
pub(crate) struct Endpoint {
    path: PathBuf,
    token_path: PathBuf,
    /// The listening socket itself (a second handle on it), to shut down from `drop`.
    socket: UnixListener,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Endpoint {
    /// Binds `indexer.sock` in `data_dir` and answers requests with `info` and `indexer`. Only
    /// the owner calls this (its indexer thread holds the [`Ownership`]): a socket left by a
    /// dead owner is replaced.
    pub(crate) fn bind(data_dir: &Path, info: OwnerInfo, indexer: Indexer) -> Result<Endpoint> {
        let data = DataDir::new(data_dir);
        let path = data.owner_socket();
        // Holding the lock proves any socket file here belongs to an owner that is gone.
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("remove the stale socket", &path, &e)),
        }
        let token_path = data.owner_token();
        let token = new_token()
            .and_then(|t| write_token(&token_path, &t).map(|()| t))
            .map_err(|e| io_error("write the owner token", &token_path, &e))?;
        let token: Arc<str> = Arc::from(token);
        let listener = UnixListener::bind(&path).map_err(|e| io_error("listen on", &path, &e))?;
        let socket = listener.try_clone().map_err(|e| io_error("listen on", &path, &e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let info = Arc::new(info);
        let thread = std::thread::Builder::new()
            .name("mdvault-owner".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else {
                        // A failing listener (shut down, or out of descriptors) must not spin.
                        std::thread::sleep(Duration::from_millis(20));
                        continue;
                    };
                    let (info, indexer, token) = (info.clone(), indexer.clone(), token.clone());
                    // One thread per connection: a long pass asked for by one reader must not
                    // keep another reader's hello waiting. Jobs still run one at a time.
                    let _ = std::thread::Builder::new()
                        .name("mdvault-owner-conn".into())
                        .spawn(move || answer(conn, &info, &indexer, &token));
                }
            })
            .map_err(|e| io_error("start the listener for", &path, &e))?;
        Ok(Endpoint { path, token_path, socket, stop, thread: Some(thread) })
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        self.stop.store(true, Ordering::SeqCst);
        // Shutting the listening socket down wakes the accept loop (with an error) even when
        // the socket file is already gone, as it is when the data directory was removed
        // first; connecting to the path would not reach it then.
        // SAFETY: the descriptor belongs to `self.socket`, which is alive for the call.
        let woken = unsafe { libc::shutdown(self.socket.as_raw_fd(), libc::SHUT_RDWR) } == 0;
        if let Some(t) = self.thread.take()
            && woken
        {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(&self.token_path);
    }
}

fn answer(conn: UnixStream, info: &OwnerInfo, indexer: &Indexer, token: &str) {
    let _ = conn.set_read_timeout(Some(REQUEST_TIMEOUT));
    let mut line = String::new();
    let Ok(mut writer) = conn.try_clone() else { return };
    if BufReader::new(conn).read_line(&mut line).is_err() || line.trim().is_empty() {
        return;
    }
    let request = match serde_json::from_str::<Envelope>(&line) {
        Ok(e) if same_token(&e.token, token) => Ok(e.request),
        Ok(_) => Err(Reply::Error {
            code: ErrorCode::Unauthorized.as_str().to_string(),
            message: "the request did not carry the owner's token (owner.token in the data \
                      directory); only mdvault processes that can read the data directory may ask"
                .to_string(),
        }),
        Err(e) => Err(Reply::Error {
            code: ErrorCode::InvalidRequest.as_str().to_string(),
            message: format!(
                "the owner could not read the request ({e}); are both processes the same mdvault version?"
            ),
        }),
    };
    let reply = match request {
        Err(refused) => refused,
        Ok(Request::Hello) => {
            Reply::Owner(OwnerInfo { progress: indexer.progress(), ..info.clone() })
        }
        Ok(Request::Sync { vault, full, re_embed }) => {
            let pass = if re_embed { Pass::ReEmbed } else { Pass::from_full(full) };
            match indexer.sync(&vault, pass, &Silent) {
                Ok(r) => Reply::Report(r),
                Err(e) => error_reply(&e),
            }
        }
        Ok(Request::Update { vault, paths }) => match indexer.update(&vault, paths) {
            Some(Ok(r)) => Reply::Report(r),
            Some(Err(e)) => error_reply(&e),
            None => Reply::Error {
                code: ErrorCode::NotReady.as_str().to_string(),
                message: "the indexer is gone".into(),
            },
        },
    };
    if let Ok(mut text) = serde_json::to_string(&reply) {
        text.push('\n');
        let _ = writer.write_all(text.as_bytes());
    }
}

/// What the owner said to a write's re-index request ([`OwnerClient::refresh`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Re-indexed, vectors and all, within the wait.
    Indexed,
    /// Not confirmed in time (or the owner could not be asked): it catches up in the
    /// background.
    Unconfirmed,
    /// The owner does not index that vault's folder.
    NotTheirs,
}

/// A reader's line to the owner of a data directory.
#[derive(Debug, Clone)]
pub(crate) struct OwnerClient {
    socket: PathBuf,
    token: PathBuf,
}

impl OwnerClient {
    /// The client for `data_dir`'s owner (nothing is contacted yet).
    pub(crate) fn new(data_dir: &Path) -> OwnerClient {
        let data = DataDir::new(data_dir);
        OwnerClient { socket: data.owner_socket(), token: data.owner_token() }
    }

    /// Sends one request and waits up to `wait` for the reply (`None`: as long as it takes).
    pub(crate) fn ask(&self, req: &Request, wait: Option<Duration>) -> Result<Reply> {
        let started = std::time::Instant::now();
        let mut conn = loop {
            match UnixStream::connect(&self.socket) {
                Ok(c) => break c,
                // The owner holds the lock but has not bound yet, or has just ended.
                Err(_) if started.elapsed() < CONNECT_PATIENCE => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => {
                    return Err(Error::new(
                        ErrorCode::NotReady,
                        format!(
                            "another mdvault process owns the index in {} but does not answer \
                             on {} ({e}); wait for it to finish, or stop it",
                            self.socket.parent().unwrap_or(Path::new(".")).display(),
                            self.socket.display()
                        ),
                    ));
                }
            }
        };
        conn.set_read_timeout(wait).map_err(|e| io_error("talk to", &self.socket, &e))?;
        // Read after connecting: the owner writes its token before it binds the socket.
        let token = std::fs::read_to_string(&self.token)
            .map_err(|e| io_error("read the owner token", &self.token, &e))?;
        let envelope = Envelope { token: token.trim().to_string(), request: req.clone() };
        let mut text = serde_json::to_string(&envelope).unwrap_or_default();
        text.push('\n');
        conn.write_all(text.as_bytes()).map_err(|e| io_error("write to", &self.socket, &e))?;
        let mut line = String::new();
        BufReader::new(conn).read_line(&mut line).map_err(|e| {
            Error::new(
                ErrorCode::NotReady,
                format!("the index owner did not answer in time ({e}); it will catch up by itself"),
            )
        })?;
        serde_json::from_str::<Reply>(&line).map_err(|e| {
            Error::new(
                ErrorCode::InternalError,
                format!(
                    "the index owner's answer was unreadable ({e}); are both processes the same \
                     mdvault version?"
                ),
            )
        })
    }

    /// Whether an owner answers on the socket right now (one attempt, no waiting): a process
    /// that only wants to tell a running owner about a change asks this first, so that without
    /// one it does not wait [`CONNECT_PATIENCE`] for nobody.
    pub(crate) fn answers(&self) -> bool {
        UnixStream::connect(&self.socket).is_ok()
    }

    /// Who owns the index, and its name for the vault at `root` (`None` when it does not index
    /// that folder: names may differ between processes, roots do not).
    pub(crate) fn name_for(&self, root: &Path) -> Result<(OwnerInfo, Option<String>)> {
        let info = self.hello()?;
        let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let root = canon(root);
        let name = info.vaults.iter().find(|o| canon(&o.root) == root).map(|o| o.name.clone());
        Ok((info, name))
    }

    /// Who owns the index.
    pub(crate) fn hello(&self) -> Result<OwnerInfo> {
        match self.ask(&Request::Hello, Some(REQUEST_TIMEOUT))? {
            Reply::Owner(info) => Ok(info),
            Reply::Error { code, message } => Err(error_from_reply(&code, message)),
            Reply::Report(_) => Err(unexpected()),
        }
    }

    /// Asks the owner for a pass over its vault `vault` and waits for the report.
    pub(crate) fn sync(&self, vault: &str, pass: Pass) -> Result<SyncReport> {
        let (full, re_embed) = (pass.is_full(), pass == Pass::ReEmbed);
        report(self.ask(&Request::Sync { vault: vault.to_string(), full, re_embed }, None)?)
    }

    /// Asks the owner to re-index paths, waiting at most `wait`.
    pub(crate) fn update(
        &self,
        vault: &str,
        paths: &[String],
        wait: Duration,
    ) -> Result<SyncReport> {
        let req = Request::Update { vault: vault.to_string(), paths: paths.to_vec() };
        report(self.ask(&req, Some(wait))?)
    }

    /// Asks the owner to re-index `paths` of the vault at `root` (ours called `vault`, for the
    /// log) after a write, waiting at most `wait`: the one way every non-owner asks, so a
    /// reader engine and the light CLI engine cannot come to disagree about it.
    pub(crate) fn refresh(
        &self,
        root: &Path,
        vault: &str,
        paths: &[String],
        wait: Duration,
    ) -> Asked {
        let name = match self.name_for(root) {
            Ok((_, Some(name))) => name,
            Ok((_, None)) => {
                tracing::debug!("the index owner does not index {vault}");
                return Asked::NotTheirs;
            }
            Err(e) => {
                tracing::debug!("the index owner could not be asked about {paths:?}: {e}");
                return Asked::Unconfirmed;
            }
        };
        match self.update(&name, paths, wait) {
            Ok(_) => Asked::Indexed,
            Err(e) => {
                tracing::debug!("the index owner did not confirm {paths:?} in time: {e}");
                Asked::Unconfirmed
            }
        }
    }
}

fn unexpected() -> Error {
    Error::new(ErrorCode::InternalError, "the index owner answered something else than asked")
}

fn report(reply: Reply) -> Result<SyncReport> {
    match reply {
        Reply::Report(r) => Ok(r),
        Reply::Error { code, message } => Err(error_from_reply(&code, message)),
        Reply::Owner(_) => Err(unexpected()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_engine_at_a_time_owns_a_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_own(dir.path()).unwrap();
        assert!(first.is_some());
        assert!(try_own(dir.path()).unwrap().is_none(), "a second owner while the first lives");
        drop(first);
        assert!(try_own(dir.path()).unwrap().is_some(), "ownership is free again after a drop");
    }

    #[test]
    fn tokens_are_fresh_private_and_compared_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        let path = DataDir::new(dir.path()).owner_token();
        write_token(&path, &a).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(same_token(&a, &std::fs::read_to_string(&path).unwrap()));
        assert!(!same_token(&a, &b) && !same_token(&a, &a[..63]) && !same_token(&a, ""));
    }

    #[test]
    fn requests_and_replies_round_trip_as_one_json_line_each() {
        let req = Request::Update { vault: "notes".into(), paths: vec!["a b.md".into()] };
        let line = serde_json::to_string(&req).unwrap();
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Request>(&line).unwrap(), req);
        let reply = Reply::Error { code: "not_found".into(), message: "no vault".into() };
        let back: Reply = serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
        assert_eq!(back, reply);
        let Reply::Error { code, message } = back else { unreachable!() };
        assert_eq!(error_from_reply(&code, message).code(), ErrorCode::NotFound);
    }
}
