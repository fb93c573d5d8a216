//! The credentials file: `auth.db` in the data directory, where the server keeps what it
//! handed out to let someone back in, so that a sign-out or a revocation holds at once, across
//! restarts, and for every mdvault process on the same data directory.
//!
//! Every credential kept here follows one rule: the secret itself (at least 32 random bytes)
//! leaves the process once, to whoever is given it, and only its hash is stored. The hash is
//! sha256 over a *pepper* and the secret; the pepper is a server secret the surface derives
//! from the API key, so a new key makes every secret handed out under the old one unknown
//! without touching the file, and the file alone says nothing about the key. A secret a caller
//! presents is looked up by the first bytes of its hash and the whole hash is compared in
//! constant time (`Hash::same`).
//!
//! One table per kind of credential: `sessions` (the web page's sign-ins, in `sessions.rs`),
//! `clients` with their `tokens` (static tokens and OAuth access tokens, in `clients.rs`), the
//! `audit` trail of writes (in `audit.rs`), and OAuth's registered applications, codes and
//! refresh tokens (in `oauth.rs`), each a [`MIGRATIONS`] step on the same rule. The schema
//! version is the file's `user_version`: an older file is brought up to date when opened, a
//! newer one refused.
//!
//! This module knows no HTTP and no cookies; `api::web::session` turns its sessions into one.

pub(crate) mod audit;
pub(crate) mod clients;
pub(crate) mod oauth;
pub(crate) mod sessions;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::Connection;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{Error, ErrorCode, Result};

/// The file's path inside the data directory `data_dir`.
fn file_in(data_dir: &std::path::Path) -> std::path::PathBuf {
    crate::config::DataDir::new(data_dir).auth()
}

/// The schema, one step per version: the file at version `n` has had the first `n` steps.
/// A later kind of credential is a new step at the end; a step never changes once released.
const MIGRATIONS: &[&str] = &[
    // 1: the web page's sessions. `hash` is sha256(pepper || secret), 32 bytes; times are
    // Unix seconds; `user_agent` and `remote` are as the sign-in showed them, cleaned.
    "CREATE TABLE sessions (
         hash BLOB PRIMARY KEY NOT NULL CHECK (length(hash) = 32),
         created INTEGER NOT NULL,
         last_seen INTEGER NOT NULL,
         expires INTEGER NOT NULL,
         user_agent TEXT NOT NULL,
         remote TEXT NOT NULL
     ) WITHOUT ROWID;
     CREATE INDEX sessions_by_expiry ON sessions (expires);",
    // 2: clients (a name with a grant, as JSON: `vault::grant::Grant`) and their tokens.
    // `kind` is `token` for a static token; `revoked` is Unix seconds, NULL while live. A
    // token's `hash` is sha256(pepper || secret); `expires` NULL is never.
    "CREATE TABLE clients (
         name TEXT PRIMARY KEY NOT NULL,
         kind TEXT NOT NULL,
         created INTEGER NOT NULL,
         revoked INTEGER,
         grant_json TEXT NOT NULL
     );
     CREATE TABLE tokens (
         hash BLOB PRIMARY KEY NOT NULL CHECK (length(hash) = 32),
         client TEXT NOT NULL REFERENCES clients (name),
         created INTEGER NOT NULL,
         expires INTEGER
     ) WITHOUT ROWID;
     CREATE INDEX tokens_by_client ON tokens (client);",
    // 3: the audit trail (`audit.rs`): one row per completed write. Why here and not in the
    // index store: every process that writes a vault (the server, and the CLI beside it)
    // can write this file, while `index.db` has one writer per data directory; and the rows
    // name the clients this file holds. `at` is Unix seconds; `dest` a move's destination.
    "CREATE TABLE audit (
         id INTEGER PRIMARY KEY,
         at INTEGER NOT NULL,
         client TEXT NOT NULL,
         vault TEXT NOT NULL,
         path TEXT NOT NULL,
         dest TEXT,
         kind TEXT NOT NULL
     );
     CREATE INDEX audit_by_client ON audit (client, id);",
    // 4: OAuth 2.1 (`oauth.rs`). `oauth_apps` are the registered applications (RFC 7591;
    // `secret` the hash of a client secret, for those that asked for one; `used` when a code
    // was first issued to it). A consent makes a `clients` row of kind `oauth` whose `app` is
    // the application's client_id; its access tokens are `tokens` rows with an expiry, its
    // codes and refresh tokens the rows below (`used` set when redeemed or rotated, kept until
    // they expire so that a second use is seen as a replay).
    "ALTER TABLE clients ADD COLUMN app TEXT;
     CREATE TABLE oauth_apps (
         client_id TEXT PRIMARY KEY NOT NULL,
         name TEXT NOT NULL,
         redirect_uris TEXT NOT NULL,
         secret BLOB CHECK (secret IS NULL OR length(secret) = 32),
         created INTEGER NOT NULL,
         used INTEGER
     );
     CREATE TABLE oauth_codes (
         hash BLOB PRIMARY KEY NOT NULL CHECK (length(hash) = 32),
         app TEXT NOT NULL,
         client TEXT NOT NULL,
         redirect_uri TEXT NOT NULL,
         challenge TEXT NOT NULL,
         resource TEXT NOT NULL,
         expires INTEGER NOT NULL,
         used INTEGER
     ) WITHOUT ROWID;
     CREATE TABLE refresh_tokens (
         hash BLOB PRIMARY KEY NOT NULL CHECK (length(hash) = 32),
         client TEXT NOT NULL,
         app TEXT NOT NULL,
         resource TEXT NOT NULL,
         created INTEGER NOT NULL,
         expires INTEGER NOT NULL,
         used INTEGER
     ) WITHOUT ROWID;
     CREATE INDEX refresh_by_client ON refresh_tokens (client);",
];

/// A server secret mixed into every stored hash (see the module header).
#[derive(Clone)]
pub(crate) struct Pepper([u8; 32]);

impl Pepper {
    /// A pepper from 32 bytes the surface derived.
    pub(crate) fn new(bytes: [u8; 32]) -> Pepper {
        Pepper(bytes)
    }

    /// The pepper of clients' tokens: sha256 over a fixed label and the API key, so a new key
    /// makes every token unknown, as it ends every session, and the CLI that makes a token and
    /// the server that checks it derive the same one from the same key.
    pub(crate) fn for_tokens(api_key: &str) -> Pepper {
        let mut h = Sha256::new();
        h.update(b"mdvault client token v1\0");
        h.update(api_key.trim().as_bytes());
        Pepper(h.finalize().into())
    }
}

/// A secret as handed out: 32 random bytes, written as 64 lowercase hex digits.
pub(crate) struct Secret([u8; 32]);

impl Secret {
    /// 32 bytes from the operating system's random source.
    fn random() -> Result<Secret> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| {
            Error::new(
                ErrorCode::InternalError,
                format!("the system's random source failed ({e}); no credential was made"),
            )
        })?;
        Ok(Secret(bytes))
    }

    /// The secret as text, for whoever is given it.
    pub(crate) fn expose(&self) -> String {
        hex(&self.0)
    }

    /// A secret read back from text: exactly 64 hex digits, else none.
    fn parse(text: &str) -> Option<Secret> {
        let bytes = unhex(text)?;
        Some(Secret(bytes.try_into().ok()?))
    }

    fn hash(&self, pepper: &Pepper) -> Hash {
        let mut h = Sha256::new();
        h.update(pepper.0);
        h.update(self.0);
        Hash(h.finalize().into())
    }
}

/// What is stored of a secret.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Hash([u8; 32]);

impl Hash {
    /// How many hex digits of the hash name a credential to people (`mdvault sessions list`):
    /// 48 bits, which no two of a server's sessions share by chance.
    pub(crate) const SHORT: usize = 12;

    /// Whether two hashes are the same, in time that does not depend on where they differ.
    fn same(&self, other: &[u8]) -> bool {
        bool::from(self.0.as_slice().ct_eq(other))
    }

    /// The name shown for the credential: the first [`Hash::SHORT`] hex digits.
    pub(crate) fn short(&self) -> String {
        hex(&self.0[..Self::SHORT / 2])
    }

    /// The first 8 bytes, by which a presented secret's row is found.
    fn lookup_range(&self) -> (Vec<u8>, Option<Vec<u8>>) {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.0[..8]);
        let next = u64::from_be_bytes(first).checked_add(1).map(|n| n.to_be_bytes().to_vec());
        (first.to_vec(), next)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A time of a credential as it is written for people and in JSON alike: RFC 3339 in UTC, to
/// the second (`2026-05-02T14:03:11Z`), as the vault writes its timestamps.
pub(crate) fn utc(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| seconds.to_string())
}

/// The open credentials file. One connection, shared by the threads of this process; other
/// processes open their own (SQLite's locking keeps them apart, and a change one commits is
/// what the next read of another sees).
pub(crate) struct Credentials {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("path", &self.path).finish()
    }
}

/// A failure of the file, named, with what to do.
fn failed(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::InternalError,
        format!(
            "the session store {} failed: {e}; check that it is a file this user can read and \
             write, or move it aside (that signs every browser out) and start again",
            path.display()
        ),
    )
}

impl Credentials {
    /// Opens `auth.db` in `data_dir`, creating both (the folder 0700, the file 0600), brings
    /// its schema up to date and removes expired entries.
    pub(crate) fn open(data_dir: &Path) -> Result<Credentials> {
        let path = file_in(data_dir);
        let cannot = |why: String| {
            Error::new(
                ErrorCode::InternalError,
                format!("the session store {} cannot be opened: {why}", path.display()),
            )
        };
        let broken = |e: &dyn std::fmt::Display| {
            cannot(format!(
                "{e}; check that it is a file this user can read and write, or move it aside \
                 (that signs every browser out) and start again"
            ))
        };
        crate::vault::fs::create_private_dir(data_dir).map_err(|e| broken(&e))?;
        create_private_file(&path).map_err(|e| broken(&e))?;
        let conn = Connection::open(&path).map_err(|e| broken(&e))?;
        // The first statement is the first read of the file: a file that is not a database
        // fails here, by name, rather than on a later request.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA busy_timeout = 5000;",
        )
        .map_err(|e| broken(&e))?;
        let creds = Credentials { path: path.clone(), conn: Mutex::new(conn) };
        match creds.migrate() {
            Ok(()) => {}
            Err(Migration::Failed(e)) => return Err(broken(&e)),
            Err(Migration::Newer(version)) => {
                return Err(cannot(format!(
                    "it was written by a newer mdvault (schema {version}); upgrade mdvault, or \
                     move it aside (that signs every browser out)"
                )));
            }
        }
        creds.prune()?;
        Ok(creds)
    }

    /// Where the file is.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn migrate(&self) -> std::result::Result<(), Migration> {
        let mut conn = self.lock();
        let newest = i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX);
        // Taken for writing before the version is read, so two processes opening a new file at
        // once do not both run the first step.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > newest {
            return Err(Migration::Newer(version));
        }
        for (i, step) in MIGRATIONS.iter().enumerate().skip(usize::try_from(version).unwrap_or(0)) {
            tx.execute_batch(step)?;
            tx.pragma_update(None, "user_version", i64::try_from(i + 1).unwrap_or(i64::MAX))?;
        }
        Ok(tx.commit()?)
    }

    /// Removes every entry whose time is up; how many went.
    pub(crate) fn prune(&self) -> Result<usize> {
        self.prune_at(now())
    }

    fn prune_at(&self, now: i64) -> Result<usize> {
        let conn = self.lock();
        let tokens = conn
            .execute("DELETE FROM tokens WHERE expires IS NOT NULL AND expires <= ?1", [now])
            .map_err(|e| failed(&self.path, e))?;
        let sessions = conn
            .execute("DELETE FROM sessions WHERE expires <= ?1", [now])
            .map_err(|e| failed(&self.path, e))?;
        drop(conn);
        Ok(sessions + tokens + self.prune_oauth(now)?)
    }
}

/// Why the schema could not be brought up to date.
enum Migration {
    Failed(rusqlite::Error),
    Newer(i64),
}

impl From<rusqlite::Error> for Migration {
    fn from(e: rusqlite::Error) -> Migration {
        Migration::Failed(e)
    }
}

/// Creates the file owner-only before SQLite first opens it (SQLite gives its `-wal` and
/// `-shm` files the same mode), so it is never readable by others, not even for a moment.
fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_reads_back_only_from_its_own_64_hex_digits() {
        let s = Secret::random().unwrap();
        let text = s.expose();
        assert_eq!(text.len(), 64);
        let pepper = Pepper::new([7; 32]);
        assert_eq!(Secret::parse(&text).unwrap().hash(&pepper), s.hash(&pepper));
        for junk in ["", "ab", &text[1..], &format!("{text}00"), &text.replace(&text[..1], "g")] {
            assert!(Secret::parse(junk).is_none(), "{junk}");
        }
    }

    #[test]
    fn a_new_pepper_makes_the_same_secret_another_hash() {
        let s = Secret::random().unwrap();
        assert_ne!(s.hash(&Pepper::new([1; 32])), s.hash(&Pepper::new([2; 32])));
    }

    #[test]
    fn times_are_written_in_utc_to_the_second() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(1_777_730_591), "2026-05-02T14:03:11Z");
    }

    #[test]
    fn hashes_compare_whole() {
        let h = Hash([5; 32]);
        assert!(h.same(&[5; 32]));
        let mut last = [5; 32];
        last[31] = 6;
        assert!(!h.same(&last));
        assert!(!h.same(&[5; 31]));
        assert_eq!(h.short(), "050505050505");
    }

    #[test]
    fn the_lookup_range_holds_exactly_the_hashes_with_those_first_bytes() {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0xff]);
        let (first, next) = Hash(b).lookup_range();
        assert_eq!(first, vec![0, 0, 0, 0, 0, 0, 0, 0xff]);
        assert_eq!(next, Some(vec![0, 0, 0, 0, 0, 0, 1, 0]));
        assert_eq!(Hash([0xff; 32]).lookup_range().1, None);
    }

    #[test]
    fn the_file_is_private_and_its_schema_current() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let creds = Credentials::open(&data).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(creds.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(&data).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let version: i64 = creds.lock().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
        drop(creds);
        // Opening again runs no step twice.
        Credentials::open(&data).unwrap();
    }

    #[test]
    fn a_file_that_is_not_a_store_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(file_in(dir.path()), "not a database, just text ".repeat(100)).unwrap();
        let e = Credentials::open(dir.path()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InternalError);
        assert!(e.message().contains("session store") && e.message().contains("auth.db"), "{e}");
        std::fs::remove_file(file_in(dir.path())).unwrap();
        std::fs::create_dir(file_in(dir.path())).unwrap();
        let e = Credentials::open(dir.path()).unwrap_err();
        assert!(e.message().contains("cannot be opened"), "{e}");
    }

    #[test]
    fn a_store_from_a_newer_mdvault_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        creds.lock().pragma_update(None, "user_version", 99).unwrap();
        drop(creds);
        let e = Credentials::open(dir.path()).unwrap_err();
        assert!(e.message().contains("newer mdvault (schema 99)"), "{e}");
    }
}
