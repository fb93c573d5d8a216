//! The audit trail: one row per completed write, in `auth.db` beside the clients it names,
//! saying which client made it, when (Unix seconds, shown in UTC), in which vault, at which
//! path (and to which destination, for a move) and what kind of change it was.
//!
//! The front door records (`service::wrote`, the one place every write passes); this file
//! owns the rows: [`Credentials::record`] appends a write's rows in one transaction (one
//! INSERT each, on the WAL file the credentials already use, so a write costs no extra fsync
//! of its own), and [`Credentials::audit`] lists them newest first through a [`Filter`].
//! [`Trail`] is the file as a process's front door holds it: opened at the first write, so a
//! command that only reads never opens it.
//!
//! Rows are never changed and nothing prunes them; the trail grows by some 100 bytes a write.

use std::path::PathBuf;
use std::sync::OnceLock;

use rusqlite::params_from_iter;

use super::{Credentials, failed, now};
use crate::error::{Error, ErrorCode, Result};

/// What kind of change a write was: the closed set the trail records (`as_str` is the stored
/// and shown word).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A note created or overwritten whole.
    Write,
    /// Text appended to a note.
    Append,
    /// A section, block or `within` edit.
    Patch,
    /// A literal find-and-replace.
    ReplaceText,
    /// The body replaced, the frontmatter kept.
    SetBody,
    /// A frontmatter key set, removed, renamed or placed, or a list's items edited.
    Frontmatter,
    /// A note or document deleted.
    Delete,
    /// A note or document moved (its path the source, `to` the destination).
    Move,
    /// A folder created.
    CreateFolder,
    /// A folder deleted.
    DeleteFolder,
    /// A tag renamed or merged: one row per note it changed.
    TagRename,
    /// A document filed (uploaded).
    FileDocument,
}

impl Kind {
    /// Every kind.
    #[cfg(test)]
    pub(crate) const ALL: [Kind; 12] = [
        Kind::Write,
        Kind::Append,
        Kind::Patch,
        Kind::ReplaceText,
        Kind::SetBody,
        Kind::Frontmatter,
        Kind::Delete,
        Kind::Move,
        Kind::CreateFolder,
        Kind::DeleteFolder,
        Kind::TagRename,
        Kind::FileDocument,
    ];

    /// The word stored and shown.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Write => "write",
            Kind::Append => "append",
            Kind::Patch => "patch",
            Kind::ReplaceText => "replace_text",
            Kind::SetBody => "set_body",
            Kind::Frontmatter => "frontmatter",
            Kind::Delete => "delete",
            Kind::Move => "move",
            Kind::CreateFolder => "create_folder",
            Kind::DeleteFolder => "delete_folder",
            Kind::TagRename => "tag_rename",
            Kind::FileDocument => "file_document",
        }
    }
}

/// One write as the trail keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Unix seconds of the write.
    pub(crate) at: i64,
    /// The client's name (`owner` for the API key and every surface the owner runs).
    pub(crate) client: String,
    /// The vault written.
    pub(crate) vault: String,
    /// The vault-relative path written (a move's source).
    pub(crate) path: String,
    /// A move's destination.
    pub(crate) to: Option<String>,
    /// The kind of change, as [`Kind::as_str`] wrote it.
    pub(crate) kind: String,
}

/// Which rows a listing wants. The default is the newest [`Filter::DEFAULT_LIMIT`] of all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filter {
    /// Only this client's rows.
    pub(crate) client: Option<String>,
    /// Only this vault's rows.
    pub(crate) vault: Option<String>,
    /// Only rows whose path or destination is this path or lies under this folder (whole
    /// segments: `Inbox` matches `Inbox/a.md`, not `Inboxes/a.md`).
    pub(crate) path: Option<String>,
    /// Only rows at or after this Unix second.
    pub(crate) since: Option<i64>,
    /// At most this many rows (clamped to [`Filter::MAX_LIMIT`]).
    pub(crate) limit: usize,
}

impl Filter {
    /// How many rows a listing shows when not told.
    pub(crate) const DEFAULT_LIMIT: usize = 100;
    /// The most rows one listing shows.
    pub(crate) const MAX_LIMIT: usize = 10_000;
}

impl Filter {
    /// A filter as a caller spells it (the CLI's flags, REST's and the web page's query), each
    /// part optional and an empty one left out: `since` by [`parse_since`], `limit` a count.
    pub(crate) fn asked(
        client: Option<&str>,
        path: Option<&str>,
        since: Option<&str>,
        limit: Option<&str>,
    ) -> Result<Filter> {
        fn given(v: Option<&str>) -> Option<&str> {
            v.map(str::trim).filter(|v| !v.is_empty())
        }
        let limit = match given(limit) {
            None => Filter::DEFAULT_LIMIT,
            Some(n) => n.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidRequest,
                    format!("the limit '{n}' is not a count; give a whole number from 1"),
                )
            })?,
        };
        Ok(Filter {
            client: given(client).map(String::from),
            vault: None,
            path: given(path).map(String::from),
            since: given(since).map(parse_since).transpose()?,
            limit,
        })
    }
}

impl Default for Filter {
    fn default() -> Filter {
        Filter { client: None, vault: None, path: None, since: None, limit: Filter::DEFAULT_LIMIT }
    }
}

/// A `--since` or `since=` value: a date (`2026-05-02`, midnight UTC) or an RFC 3339 time.
pub(crate) fn parse_since(text: &str) -> Result<i64> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.timestamp());
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(t.and_utc().timestamp());
    }
    Err(Error::new(
        ErrorCode::InvalidRequest,
        format!(
            "'{text}' is not a date; give one as 2026-05-02 (midnight UTC) or 2026-05-02T14:03:11Z"
        ),
    ))
}

impl Credentials {
    /// Appends one write's rows (a tag's rename has one per note) in one transaction.
    pub(crate) fn record(&self, rows: &[Entry]) -> Result<()> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| failed(&self.path, e))?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO audit (at, client, vault, path, dest, kind)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(|e| failed(&self.path, e))?;
            for r in rows {
                insert
                    .execute(rusqlite::params![r.at, r.client, r.vault, r.path, r.to, r.kind])
                    .map_err(|e| failed(&self.path, e))?;
            }
        }
        tx.commit().map_err(|e| failed(&self.path, e))
    }

    /// The rows `filter` wants, newest first.
    pub(crate) fn audit(&self, filter: &Filter) -> Result<Vec<Entry>> {
        let mut sql = String::from("SELECT at, client, vault, path, dest, kind FROM audit WHERE 1");
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(client) = &filter.client {
            args.push(client.clone().into());
            sql.push_str(&format!(" AND client = ?{}", args.len()));
        }
        if let Some(vault) = &filter.vault {
            args.push(vault.clone().into());
            sql.push_str(&format!(" AND vault = ?{}", args.len()));
        }
        if let Some(path) =
            filter.path.as_deref().map(|p| p.trim_matches('/')).filter(|p| !p.is_empty())
        {
            // Whole segments, compared as text (no LIKE, so `%` and `_` in a path are plain).
            args.push(path.to_string().into());
            let n = args.len();
            sql.push_str(&format!(
                " AND (path = ?{n} OR substr(path, 1, length(?{n}) + 1) = ?{n} || '/'
                       OR dest = ?{n} OR substr(dest, 1, length(?{n}) + 1) = ?{n} || '/')"
            ));
        }
        if let Some(since) = filter.since {
            args.push(since.into());
            sql.push_str(&format!(" AND at >= ?{}", args.len()));
        }
        let limit = filter.limit.clamp(1, Filter::MAX_LIMIT);
        sql.push_str(&format!(" ORDER BY id DESC LIMIT {limit}"));
        let conn = self.lock();
        let mut stmt = conn.prepare(&sql).map_err(|e| failed(&self.path, e))?;
        let rows = stmt
            .query_map(params_from_iter(args), |r| {
                Ok(Entry {
                    at: r.get(0)?,
                    client: r.get(1)?,
                    vault: r.get(2)?,
                    path: r.get(3)?,
                    to: r.get(4)?,
                    kind: r.get(5)?,
                })
            })
            .map_err(|e| failed(&self.path, e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| failed(&self.path, e))
    }
}

/// The trail as a process's front door holds it: `auth.db` in the data directory, opened at
/// the first write and kept open.
pub(crate) struct Trail {
    data_dir: PathBuf,
    store: OnceLock<std::result::Result<Credentials, String>>,
}

impl std::fmt::Debug for Trail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trail").field("data_dir", &self.data_dir).finish()
    }
}

impl Trail {
    /// The trail of the data directory `data_dir`; nothing is opened yet.
    pub(crate) fn new(data_dir: PathBuf) -> Trail {
        Trail { data_dir, store: OnceLock::new() }
    }

    /// Records a completed write's rows, stamped now.
    ///
    /// Why a failure is logged and not returned: the write it records is already on disk, so
    /// refusing now would tell the caller a write failed that did not, and invite a retry that
    /// writes twice. A store that cannot be opened or written is logged each time.
    pub(crate) fn record(
        &self,
        client: &str,
        kind: Kind,
        vault: &str,
        paths: &[(&str, Option<&str>)],
    ) {
        let at = now();
        let rows: Vec<Entry> = paths
            .iter()
            .map(|(path, to)| Entry {
                at,
                client: client.to_string(),
                vault: vault.to_string(),
                path: (*path).to_string(),
                to: to.map(str::to_string),
                kind: kind.as_str().to_string(),
            })
            .collect();
        if rows.is_empty() {
            return;
        }
        if let Err(e) = self.store().and_then(|store| store.record(&rows)) {
            tracing::warn!("the audit trail did not record a {} by '{client}': {e}", kind.as_str());
        }
    }

    /// The rows `filter` wants, newest first.
    pub(crate) fn list(&self, filter: &Filter) -> Result<Vec<Entry>> {
        self.store()?.audit(filter)
    }

    /// The file, opened at the first call; a failure to open is kept and answered each time.
    fn store(&self) -> Result<&Credentials> {
        let store =
            self.store.get_or_init(|| Credentials::open(&self.data_dir).map_err(|e| e.to_string()));
        store.as_ref().map_err(|e| Error::new(ErrorCode::InternalError, e.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at: i64, client: &str, path: &str, to: Option<&str>, kind: Kind) -> Entry {
        Entry {
            at,
            client: client.into(),
            vault: "main".into(),
            path: path.into(),
            to: to.map(String::from),
            kind: kind.as_str().into(),
        }
    }

    fn filled() -> (tempfile::TempDir, Credentials) {
        let dir = tempfile::tempdir().unwrap();
        let creds = Credentials::open(dir.path()).unwrap();
        creds.record(&[entry(100, "owner", "a.md", None, Kind::Write)]).unwrap();
        creds.record(&[entry(200, "phone", "Inbox/b.md", None, Kind::Append)]).unwrap();
        creds
            .record(&[entry(300, "phone", "Inboxes/c.md", Some("Inbox/c.md"), Kind::Move)])
            .unwrap();
        creds
            .record(&[
                entry(400, "owner", "x/1.md", None, Kind::TagRename),
                entry(400, "owner", "x/2.md", None, Kind::TagRename),
            ])
            .unwrap();
        (dir, creds)
    }

    fn paths(rows: &[Entry]) -> Vec<&str> {
        rows.iter().map(|r| r.path.as_str()).collect()
    }

    #[test]
    fn rows_list_newest_first_and_a_limit_keeps_the_newest() {
        let (_dir, creds) = filled();
        let all = creds.audit(&Filter::default()).unwrap();
        assert_eq!(paths(&all), ["x/2.md", "x/1.md", "Inboxes/c.md", "Inbox/b.md", "a.md"]);
        assert_eq!(all[2].to.as_deref(), Some("Inbox/c.md"));
        assert_eq!(all[2].kind, "move");
        let two = creds.audit(&Filter { limit: 2, ..Filter::default() }).unwrap();
        assert_eq!(paths(&two), ["x/2.md", "x/1.md"]);
    }

    #[test]
    fn filters_take_a_client_a_folder_by_whole_segments_and_a_time() {
        let (_dir, creds) = filled();
        let phone = Filter { client: Some("phone".into()), ..Filter::default() };
        assert_eq!(paths(&creds.audit(&phone).unwrap()), ["Inboxes/c.md", "Inbox/b.md"]);
        // A move into the folder counts by its destination; `Inboxes` is not under `Inbox`.
        let inbox = Filter { path: Some("/Inbox/".into()), ..Filter::default() };
        assert_eq!(paths(&creds.audit(&inbox).unwrap()), ["Inboxes/c.md", "Inbox/b.md"]);
        let one = Filter { path: Some("a.md".into()), ..Filter::default() };
        assert_eq!(paths(&creds.audit(&one).unwrap()), ["a.md"]);
        let since = Filter { since: Some(300), client: Some("owner".into()), ..Filter::default() };
        assert_eq!(paths(&creds.audit(&since).unwrap()), ["x/2.md", "x/1.md"]);
        let none = Filter { path: Some("%".into()), ..Filter::default() };
        assert!(creds.audit(&none).unwrap().is_empty());
    }

    #[test]
    fn a_since_is_a_date_at_midnight_utc_or_an_rfc3339_time() {
        assert_eq!(parse_since("1970-01-02").unwrap(), 86_400);
        assert_eq!(parse_since("2026-05-02T14:03:11Z").unwrap(), 1_777_730_591);
        assert_eq!(parse_since("2026-05-02T16:03:11+02:00").unwrap(), 1_777_730_591);
        let e = parse_since("yesterday").unwrap_err();
        assert!(e.message().contains("2026-05-02"), "{e}");
    }

    #[test]
    fn the_trail_opens_at_its_first_write_and_records_every_row_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let trail = Trail::new(data.clone());
        assert!(!data.exists());
        trail.record("phone", Kind::Move, "main", &[("a.md", Some("b/a.md"))]);
        trail.record("owner", Kind::TagRename, "main", &[("1.md", None), ("2.md", None)]);
        let rows = Credentials::open(&data).unwrap().audit(&Filter::default()).unwrap();
        assert_eq!(paths(&rows), ["2.md", "1.md", "a.md"]);
        assert_eq!((rows[2].client.as_str(), rows[2].to.as_deref()), ("phone", Some("b/a.md")));
        assert!(rows.iter().all(|r| r.at > 1_700_000_000));
    }

    #[test]
    fn a_filter_as_asked_leaves_empty_parts_out_and_refuses_a_bad_count() {
        let f = Filter::asked(Some(" phone "), Some(""), Some("1970-01-02"), None).unwrap();
        let want =
            Filter { client: Some("phone".into()), since: Some(86_400), ..Filter::default() };
        assert_eq!(f, want);
        assert_eq!(Filter::asked(None, None, None, Some("7")).unwrap().limit, 7);
        for bad in ["0", "-1", "many"] {
            let e = Filter::asked(None, None, None, Some(bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidRequest, "{bad}");
        }
    }

    #[test]
    fn every_kind_has_its_own_word() {
        let words: std::collections::BTreeSet<&str> =
            Kind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(words.len(), Kind::ALL.len());
    }
}
