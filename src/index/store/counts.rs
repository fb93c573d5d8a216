//! How much the store holds: files, chunks and vectors, per vault and in all, and what is
//! still to embed. Counts only; nothing here writes.

use super::{Store, db_err};
use crate::error::Result;

impl Store {
    /// How many distinct embed texts of the chunks with ids above `after` have no vector yet
    /// (an embedding pass's total; 0 for all chunks).
    pub(crate) fn texts_missing_vectors(&self, after: i64) -> Result<usize> {
        self.lock()
            .query_row(
                "SELECT COUNT(DISTINCT embed_hash) FROM chunks WHERE chunks.id > ?1
                   AND NOT EXISTS (SELECT 1 FROM vectors WHERE vectors.hash = chunks.embed_hash)",
                [after],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(|e| db_err(&self.path, e))
    }

    /// How many distinct embed texts one vault's chunks have (a re-embed's total).
    pub(crate) fn vault_texts(&self, vault: &str) -> Result<usize> {
        self.lock()
            .query_row(
                "SELECT COUNT(DISTINCT chunks.embed_hash) FROM chunks
                 JOIN files ON files.id = chunks.file_id WHERE files.vault = ?1",
                [vault],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(|e| db_err(&self.path, e))
    }

    /// Distinct embed texts of the chunks stored now: what a model switch must embed again.
    pub fn distinct_texts(&self) -> Result<u64> {
        self.lock()
            .query_row("SELECT COUNT(DISTINCT embed_hash) FROM chunks", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| db_err(&self.path, e))
    }

    /// One vault's chunks, and how many of them still have no vector.
    pub(crate) fn vault_chunk_counts(&self, vault: &str) -> Result<(u64, u64)> {
        self.lock()
            .query_row(
                "SELECT COUNT(*), COALESCE(SUM(v.hash IS NULL), 0)
                 FROM chunks c JOIN files f ON f.id = c.file_id
                 LEFT JOIN vectors v ON v.hash = c.embed_hash
                 WHERE f.vault = ?1",
                [vault],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
            )
            .map_err(|e| db_err(&self.path, e))
    }

    /// Whether `vault` has any chunk: one indexed row, not a count (search asks it under the
    /// lock a first build writes through).
    pub(crate) fn vault_has_chunks(&self, vault: &str) -> Result<bool> {
        let sql = "SELECT EXISTS (SELECT 1 FROM files f JOIN chunks c ON c.file_id = f.id \
                   WHERE f.vault = ?1)";
        self.lock().query_row(sql, [vault], |r| r.get(0)).map_err(|e| db_err(&self.path, e))
    }

    /// Counts: (files, chunks, vectors).
    pub(crate) fn counts(&self) -> Result<(u64, u64, u64)> {
        let conn = self.lock();
        let count = |sql: &str| -> Result<u64> {
            conn.query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|n| n as u64)
                .map_err(|e| db_err(&self.path, e))
        };
        Ok((
            count("SELECT COUNT(*) FROM files")?,
            count("SELECT COUNT(*) FROM chunks")?,
            count("SELECT COUNT(*) FROM vectors")?,
        ))
    }
}
