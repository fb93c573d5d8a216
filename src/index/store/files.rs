//! The `files` table's queries: which files the store knows, for a whole vault or for a few
//! paths (a write's re-index reads only the rows it needs).

use rusqlite::Row;

use super::{FileKind, FileRow, FileStatus, Store, db_err};
use crate::error::Result;

impl Store {
    /// Every file of a vault.
    pub(crate) fn files(&self, vault: &str) -> Result<Vec<FileRow>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, vault, path, kind, size, mtime_ns, sha256, status, detail, fingerprint
                 FROM files WHERE vault = ?1 ORDER BY path",
            )
            .map_err(|e| db_err(&self.path, e))?;
        let rows = stmt.query_map([vault], file_row).map_err(|e| db_err(&self.path, e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| db_err(&self.path, e))
    }

    /// The rows of `vault` at each of `paths` or below it (a folder's files): what a re-index
    /// of a few paths needs, without reading the vault's whole table. Uses the
    /// `(vault, path)` index: below `p` is the range from `p/` up to `p0` ('0' follows '/').
    pub(crate) fn files_at(&self, vault: &str, paths: &[String]) -> Result<Vec<FileRow>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, vault, path, kind, size, mtime_ns, sha256, status, detail, fingerprint
                 FROM files WHERE vault = ?1 AND (path = ?2 OR (path >= ?3 AND path < ?4))",
            )
            .map_err(|e| db_err(&self.path, e))?;
        let mut out = Vec::new();
        for p in paths {
            let p = p.trim_matches('/');
            if p.is_empty() {
                // The vault's root: every file (as `index::under` has it).
                drop(stmt);
                drop(conn);
                return self.files(vault);
            }
            let (below, past) = (format!("{p}/"), format!("{p}0"));
            let rows = stmt
                .query_map(rusqlite::params![vault, p, below, past], file_row)
                .map_err(|e| db_err(&self.path, e))?;
            for row in rows {
                out.push(row.map_err(|e| db_err(&self.path, e))?);
            }
        }
        Ok(out)
    }
}

/// A `files` row as the queries above select it.
fn file_row(r: &Row<'_>) -> rusqlite::Result<FileRow> {
    Ok(FileRow {
        id: r.get(0)?,
        vault: r.get(1)?,
        path: r.get(2)?,
        kind: FileKind::parse(&r.get::<_, String>(3)?),
        size: r.get::<_, i64>(4)? as u64,
        mtime_ns: r.get(5)?,
        sha256: r.get(6)?,
        // A name this build does not know (a newer one wrote it) reads as failed:
        // the file is re-indexed on its next change, and status shows it meanwhile.
        status: FileStatus::parse(&r.get::<_, String>(7)?).unwrap_or(FileStatus::Failed),
        detail: r.get(8)?,
        fingerprint: r.get(9)?,
    })
}
