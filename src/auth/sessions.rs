//! The web page's sign-ins as rows of `auth.db`: made at sign-in, checked on every request,
//! deleted at sign-out or revocation, pruned once expired.
//!
//! A row holds the hash of the session's secret (never the secret), when it was made, last
//! seen and ends, and the browser and address it was made from as the list shows them
//! (cleaned of control characters and cut short, so a hostile `User-Agent` can neither
//! overflow a listing nor drive a terminal). A session is named to people by its hash's first
//! [`Hash::SHORT`] hex digits; revoking takes any unambiguous prefix of that name.
//!
//! Nothing is cached: every check reads the file, so a revocation by another process (the CLI
//! beside a running server) holds from that process's commit on.

use rusqlite::params;

use super::{Credentials, Hash, Pepper, Secret, failed, now};
use crate::error::{Error, ErrorCode, Result};

/// How stale `last_seen` may get: a check writes it only when it is at least this old, so a
/// busy page costs one write a minute, not one per request.
const LAST_SEEN_STEP: i64 = 60;

/// How much of a `User-Agent` is kept.
const AGENT_CHARS: usize = 160;

/// How much of a remote address is kept (an IPv6 address with a zone fits).
const REMOTE_CHARS: usize = 64;

/// Who signed in, as the request showed it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Client {
    /// The `User-Agent` header, if any.
    pub(crate) user_agent: String,
    /// The peer's address.
    pub(crate) remote: String,
}

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Session {
    /// What is stored of its secret.
    pub(crate) hash: Hash,
    /// Unix seconds of the sign-in.
    pub(crate) created: i64,
    /// Unix seconds of the last request seen (to within a minute).
    pub(crate) last_seen: i64,
    /// Unix seconds when it ends.
    pub(crate) expires: i64,
    /// The browser's `User-Agent`, cleaned.
    pub(crate) user_agent: String,
    /// The address it signed in from.
    pub(crate) remote: String,
}

impl Session {
    /// Its name for people: the first [`Hash::SHORT`] hex digits of the hash.
    pub(crate) fn id(&self) -> String {
        self.hash.short()
    }
}

/// Which sessions a revocation ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Revoke {
    /// The one session whose id starts with these hex digits.
    Prefix(String),
    /// Every session.
    All,
}

/// Text as a listing may show it: control and bidirectional formatting characters become
/// spaces, runs of spaces one, and at most `max` characters are kept (an ellipsis marks a cut).
fn clean(text: &str, max: usize) -> String {
    let bidi = |c: char| matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let spaced: String =
        text.chars().map(|c| if c.is_control() || bidi(c) { ' ' } else { c }).collect();
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn session_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    let bytes: Vec<u8> = r.get(0)?;
    Ok(Session {
        hash: Hash(bytes.try_into().unwrap_or([0; 32])),
        created: r.get(1)?,
        last_seen: r.get(2)?,
        expires: r.get(3)?,
        user_agent: r.get(4)?,
        remote: r.get(5)?,
    })
}

impl Credentials {
    /// Starts a session lasting `lifetime_seconds`: a new random secret, whose hash is stored
    /// with the client's description. Returns the secret (for the cookie, and nowhere else)
    /// and the stored row. Expired sessions are pruned on the way.
    pub(crate) fn start_session(
        &self,
        pepper: &Pepper,
        client: &Client,
        lifetime_seconds: i64,
    ) -> Result<(Secret, Session)> {
        self.start_session_at(pepper, client, lifetime_seconds, now())
    }

    fn start_session_at(
        &self,
        pepper: &Pepper,
        client: &Client,
        lifetime_seconds: i64,
        now: i64,
    ) -> Result<(Secret, Session)> {
        self.prune_at(now)?;
        let secret = Secret::random()?;
        let session = Session {
            hash: secret.hash(pepper),
            created: now,
            last_seen: now,
            expires: now.saturating_add(lifetime_seconds),
            user_agent: clean(&client.user_agent, AGENT_CHARS),
            remote: clean(&client.remote, REMOTE_CHARS),
        };
        self.lock()
            .execute(
                "INSERT INTO sessions (hash, created, last_seen, expires, user_agent, remote)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    session.hash.0.as_slice(),
                    session.created,
                    session.last_seen,
                    session.expires,
                    session.user_agent,
                    session.remote
                ],
            )
            .map_err(|e| failed(&self.path, e))?;
        Ok((secret, session))
    }

    /// The live session a presented secret opens, if any: it must be stored (under this
    /// pepper) and not expired. Notes the visit in `last_seen` (see [`LAST_SEEN_STEP`]).
    pub(crate) fn check_session(&self, pepper: &Pepper, presented: &str) -> Result<Option<Hash>> {
        self.check_session_at(pepper, presented, now())
    }

    fn check_session_at(&self, pepper: &Pepper, presented: &str, now: i64) -> Result<Option<Hash>> {
        let Some(secret) = Secret::parse(presented) else { return Ok(None) };
        let hash = secret.hash(pepper);
        // The row is found by the first 8 bytes of the hash, and the whole hash is compared in
        // constant time: the lookup's timing could tell at most where a guess's hash sits among
        // the stored ones, and the comparison that decides tells nothing of how much matched.
        let (first, next) = hash.lookup_range();
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT hash, last_seen, expires FROM sessions
                 WHERE hash >= ?1 AND (?2 IS NULL OR hash < ?2)",
            )
            .map_err(|e| failed(&self.path, e))?;
        let rows = stmt
            .query_map(params![first, next], |r| {
                Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| failed(&self.path, e))?;
        let Some((_, last_seen, expires)) = rows.into_iter().find(|(h, _, _)| hash.same(h)) else {
            return Ok(None);
        };
        if expires <= now {
            return Ok(None);
        }
        if now - last_seen >= LAST_SEEN_STEP {
            conn.execute(
                "UPDATE sessions SET last_seen = ?2 WHERE hash = ?1",
                params![hash.0.as_slice(), now],
            )
            .map_err(|e| failed(&self.path, e))?;
        }
        Ok(Some(hash))
    }

    /// Ends the session a presented secret opens (sign-out); whether there was one.
    pub(crate) fn end_session(&self, pepper: &Pepper, presented: &str) -> Result<bool> {
        let Some(hash) = self.check_session(pepper, presented)? else { return Ok(false) };
        let gone = self
            .lock()
            .execute("DELETE FROM sessions WHERE hash = ?1", [hash.0.as_slice()])
            .map_err(|e| failed(&self.path, e))?;
        Ok(gone > 0)
    }

    /// Every live session, the most recently seen first. Expired ones are pruned first.
    pub(crate) fn sessions(&self) -> Result<Vec<Session>> {
        self.sessions_at(now())
    }

    fn sessions_at(&self, now: i64) -> Result<Vec<Session>> {
        self.prune_at(now)?;
        let conn = self.lock();
        let mut stmt = conn
            .prepare(
                "SELECT hash, created, last_seen, expires, user_agent, remote FROM sessions
                 ORDER BY last_seen DESC, created DESC",
            )
            .map_err(|e| failed(&self.path, e))?;
        stmt.query_map([], session_from_row)
            .and_then(|rows| rows.collect())
            .map_err(|e| failed(&self.path, e))
    }

    /// Ends the sessions `which` names, and returns them. A prefix must be hex and name exactly
    /// one live session; otherwise nothing is ended and the refusal says what it matched.
    pub(crate) fn revoke(&self, which: &Revoke) -> Result<Vec<Session>> {
        self.revoke_at(which, now())
    }

    fn revoke_at(&self, which: &Revoke, now: i64) -> Result<Vec<Session>> {
        let live = self.sessions_at(now)?;
        let chosen: Vec<Session> = match which {
            Revoke::All => live,
            Revoke::Prefix(prefix) => {
                let prefix = prefix.trim().to_ascii_lowercase();
                if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(Error::new(
                        ErrorCode::InvalidRequest,
                        format!(
                            "'{}' is not a session id: give the hex digits `mdvault sessions \
                             list` shows (a prefix is enough), or --all",
                            clean(&prefix, 40)
                        ),
                    ));
                }
                let matching: Vec<Session> =
                    live.into_iter().filter(|s| hex_of(&s.hash).starts_with(&prefix)).collect();
                match matching.len() {
                    1 => matching,
                    0 => {
                        return Err(Error::new(
                            ErrorCode::NotFound,
                            format!(
                                "no live session's id starts with '{prefix}' (it may have \
                                 expired or been revoked); `mdvault sessions list` shows them"
                            ),
                        ));
                    }
                    n => {
                        let ids: Vec<String> = matching.iter().map(Session::id).collect();
                        return Err(Error::new(
                            ErrorCode::InvalidRequest,
                            format!(
                                "'{prefix}' starts {n} sessions' ids ({}); give more of the \
                                 id, or --all",
                                ids.join(", ")
                            ),
                        ));
                    }
                }
            }
        };
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| failed(&self.path, e))?;
        for s in &chosen {
            tx.execute("DELETE FROM sessions WHERE hash = ?1", [s.hash.0.as_slice()])
                .map_err(|e| failed(&self.path, e))?;
        }
        tx.commit().map_err(|e| failed(&self.path, e))?;
        Ok(chosen)
    }

    /// The stored row of one session, if it is still there (expired or not).
    #[cfg(test)]
    pub(crate) fn session(&self, hash: &Hash) -> Result<Option<Session>> {
        use rusqlite::OptionalExtension;
        self.lock()
            .query_row(
                "SELECT hash, created, last_seen, expires, user_agent, remote FROM sessions
                 WHERE hash = ?1",
                [hash.0.as_slice()],
                session_from_row,
            )
            .optional()
            .map_err(|e| failed(&self.path, e))
    }
}

fn hex_of(hash: &Hash) -> String {
    super::hex(&hash.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3600;

    fn open() -> (tempfile::TempDir, Credentials) {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        (dir, creds)
    }

    fn pepper() -> Pepper {
        Pepper::new([3; 32])
    }

    fn client() -> Client {
        Client { user_agent: "Firefox/140".into(), remote: "127.0.0.1".into() }
    }

    #[test]
    fn a_session_opens_until_it_expires_and_only_its_hash_is_stored() {
        let (dir, creds) = open();
        let (secret, row) = creds.start_session_at(&pepper(), &client(), 12 * HOUR, 1_000).unwrap();
        let text = secret.expose();
        assert_eq!(creds.check_session_at(&pepper(), &text, 1_000).unwrap(), Some(row.hash));
        assert!(creds.check_session_at(&pepper(), &text, 1_000 + 12 * HOUR - 1).unwrap().is_some());
        assert!(creds.check_session_at(&pepper(), &text, 1_000 + 12 * HOUR).unwrap().is_none());
        drop(creds);
        let bytes = std::fs::read(crate::config::DataDir::new(dir.path()).auth()).unwrap();
        let wal = std::fs::read(dir.path().join("auth.db-wal")).unwrap_or_default();
        for file in [&bytes, &wal] {
            assert!(!file.windows(64).any(|w| w == text.as_bytes()), "the secret was stored");
            assert!(!file.windows(32).any(|w| w == secret.0), "the secret was stored");
        }
    }

    #[test]
    fn another_pepper_or_a_changed_digit_opens_nothing() {
        let (_d, creds) = open();
        let (secret, _) = creds.start_session_at(&pepper(), &client(), HOUR, 1_000).unwrap();
        let text = secret.expose();
        assert!(creds.check_session_at(&Pepper::new([4; 32]), &text, 1_000).unwrap().is_none());
        let flipped = format!("{}{}", if text.starts_with('0') { '1' } else { '0' }, &text[1..]);
        for junk in [flipped.as_str(), "", "1.abc", &text[..63]] {
            assert!(creds.check_session_at(&pepper(), junk, 1_000).unwrap().is_none(), "{junk}");
        }
    }

    #[test]
    fn ending_a_session_refuses_its_secret_at_once() {
        let (_d, creds) = open();
        let (secret, _) = creds.start_session(&pepper(), &client(), HOUR).unwrap();
        let (other, _) = creds.start_session(&pepper(), &client(), HOUR).unwrap();
        assert!(creds.end_session(&pepper(), &secret.expose()).unwrap());
        assert!(creds.check_session(&pepper(), &secret.expose()).unwrap().is_none());
        assert!(!creds.end_session(&pepper(), &secret.expose()).unwrap(), "ended twice");
        assert!(creds.check_session(&pepper(), &other.expose()).unwrap().is_some());
    }

    #[test]
    fn last_seen_moves_at_most_once_a_minute() {
        let (_d, creds) = open();
        let (secret, row) = creds.start_session_at(&pepper(), &client(), HOUR, 1_000).unwrap();
        let seen = |creds: &Credentials| creds.session(&row.hash).unwrap().unwrap().last_seen;
        creds.check_session_at(&pepper(), &secret.expose(), 1_000 + LAST_SEEN_STEP - 1).unwrap();
        assert_eq!(seen(&creds), 1_000);
        creds.check_session_at(&pepper(), &secret.expose(), 1_000 + LAST_SEEN_STEP).unwrap();
        assert_eq!(seen(&creds), 1_000 + LAST_SEEN_STEP);
    }

    #[test]
    fn expired_sessions_are_pruned_and_never_listed() {
        let (_d, creds) = open();
        let (_, short) = creds.start_session_at(&pepper(), &client(), HOUR, 1_000).unwrap();
        let (_, long) = creds.start_session_at(&pepper(), &client(), 10 * HOUR, 1_000).unwrap();
        let listed = creds.sessions_at(1_000 + 2 * HOUR).unwrap();
        assert_eq!(listed, vec![long.clone()]);
        assert!(creds.session(&short.hash).unwrap().is_none(), "the expired row is still there");
        // A sign-in prunes too.
        creds.start_session_at(&pepper(), &client(), HOUR, 1_000 + 11 * HOUR).unwrap();
        assert!(creds.session(&long.hash).unwrap().is_none());
    }

    /// A row with a chosen hash, to make ids that share a prefix.
    fn insert(creds: &Credentials, first: &[u8]) -> Session {
        let mut bytes = [0x11; 32];
        bytes[..first.len()].copy_from_slice(first);
        let row = Session {
            hash: Hash(bytes),
            created: now(),
            last_seen: now(),
            expires: now() + HOUR,
            user_agent: String::new(),
            remote: String::new(),
        };
        creds
            .lock()
            .execute(
                "INSERT INTO sessions VALUES (?1, ?2, ?3, ?4, '', '')",
                params![bytes.as_slice(), row.created, row.last_seen, row.expires],
            )
            .unwrap();
        row
    }

    #[test]
    fn revoking_takes_one_unambiguous_prefix_or_all() {
        let (_d, creds) = open();
        let one = insert(&creds, &[0xab, 0xc0]);
        insert(&creds, &[0xab, 0xd0]);
        insert(&creds, &[0x12]);
        for bad in ["zz", "", "ab c"] {
            let e = creds.revoke(&Revoke::Prefix(bad.into())).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidRequest, "{bad}: {e}");
        }
        let e = creds.revoke(&Revoke::Prefix("ab".into())).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest);
        assert!(e.message().contains("abc011111111") && e.message().contains("abd011111111"));
        assert_eq!(creds.sessions().unwrap().len(), 3, "an ambiguous prefix ended some");
        assert_eq!(creds.revoke(&Revoke::Prefix("ABC".into())).unwrap(), vec![one.clone()]);
        let e = creds.revoke(&Revoke::Prefix(one.id())).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert_eq!(creds.revoke(&Revoke::All).unwrap().len(), 2);
        assert!(creds.sessions().unwrap().is_empty());
    }

    #[test]
    fn a_revocation_by_another_connection_holds_on_the_next_check() {
        let (dir, creds) = open();
        let (secret, row) = creds.start_session(&pepper(), &client(), HOUR).unwrap();
        assert!(creds.check_session(&pepper(), &secret.expose()).unwrap().is_some());
        let other = Credentials::open(dir.path()).unwrap();
        other.revoke(&Revoke::Prefix(row.id())).unwrap();
        assert!(creds.check_session(&pepper(), &secret.expose()).unwrap().is_none());
    }

    #[test]
    fn what_a_client_sent_is_cleaned_and_cut_before_it_is_stored() {
        assert_eq!(clean("Mozilla/5.0\u{1b}[31m\r\nX", 160), "Mozilla/5.0 [31m X");
        assert_eq!(clean("a\u{202e}b\u{2066}c", 160), "a b c");
        let long = "x".repeat(500);
        let cut = clean(&long, AGENT_CHARS);
        assert_eq!(cut.chars().count(), AGENT_CHARS);
        assert!(cut.ends_with('…'));
        let (_d, creds) = open();
        let hostile = Client { user_agent: format!("\u{7}{long}"), remote: "::1\n".into() };
        let (_, row) = creds.start_session(&pepper(), &hostile, HOUR).unwrap();
        let stored = creds.session(&row.hash).unwrap().unwrap();
        assert_eq!(stored.user_agent.chars().count(), AGENT_CHARS);
        assert!(!stored.user_agent.chars().any(char::is_control));
        assert_eq!(stored.remote, "::1");
    }
}
