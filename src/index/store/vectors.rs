//! The `vectors` table and the chunks' way to it: which texts have a vector, every chunk's
//! vector read a page at a time (the vectors file's rewrite and a start-up load), and
//! dropping vectors no chunk uses or another model made. What still needs one is asked in
//! `counts` and, with the chunks' texts, in the store's chunk queries.

use std::collections::HashSet;

use rusqlite::OptionalExtension;

use super::{Store, TextHash, db_err, vector_from_bytes};
use crate::error::Result;

/// Chunk vectors read under one hold of the connection (6 MiB of 384 floats): a few
/// milliseconds of other callers' wait, and few enough queries next to reading a million.
const VECTOR_PAGE_ROWS: usize = 4096;
/// Chunk ids whose vectors are looked for under one hold of the connection, when only the ids
/// are read (about 100 ms of a join).
const VECTOR_ID_RANGE: i64 = 65_536;

impl Store {
    /// Which of these hashes already have a vector.
    pub(crate) fn present_vectors(&self, hashes: &[TextHash]) -> Result<HashSet<TextHash>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached("SELECT 1 FROM vectors WHERE hash = ?1")
            .map_err(|e| db_err(&self.path, e))?;
        let mut out = HashSet::new();
        for h in hashes {
            if stmt.exists([&h[..]]).map_err(|e| db_err(&self.path, e))? {
                out.insert(*h);
            }
        }
        Ok(out)
    }

    /// Calls `f` with every chunk that has a vector, in chunk id order (the start-up load):
    /// [`Store::for_each_chunk_vector_after`] from the first id (ids start at 1).
    pub(crate) fn for_each_chunk_vector(&self, f: impl FnMut(i64, Vec<f32>)) -> Result<()> {
        self.for_each_chunk_vector_after(0, f)
    }

    /// Calls `f` with the id and vector of every chunk with an id above `after` whose embed
    /// text has a vector, in id order, a page of [`VECTOR_PAGE_ROWS`] at a time: the
    /// connection is held for one page's query, never while `f` runs, so a search or `/readyz`
    /// waits for a page, not for the whole read (rewriting the vectors file at a million rows
    /// held it 11-19 s, and every search and readiness check with it).
    pub(crate) fn for_each_chunk_vector_after(
        &self,
        after: i64,
        f: impl FnMut(i64, Vec<f32>),
    ) -> Result<()> {
        self.for_each_chunk_vector_in_pages(after, VECTOR_PAGE_ROWS, f)
    }

    fn for_each_chunk_vector_in_pages(
        &self,
        mut after: i64,
        rows: usize,
        mut f: impl FnMut(i64, Vec<f32>),
    ) -> Result<()> {
        loop {
            let page = self.chunk_vectors_page(after, rows)?;
            let Some(&(last, _)) = page.last() else { return Ok(()) };
            after = last;
            for (id, v) in page {
                f(id, v);
            }
        }
    }

    /// Up to `limit` chunks with ids above `after` whose embed text has a vector, in id order,
    /// with their vectors: a range of the chunk rows, each joined to its vector (`CROSS JOIN`
    /// keeps the chunks outside, so the range is all that is read of them).
    fn chunk_vectors_page(&self, after: i64, limit: usize) -> Result<Vec<(i64, Vec<f32>)>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT chunks.id, vectors.vector FROM chunks
                 CROSS JOIN vectors ON vectors.hash = chunks.embed_hash
                 WHERE chunks.id > ?1 ORDER BY chunks.id LIMIT ?2",
            )
            .map_err(|e| db_err(&self.path, e))?;
        let mut rows = stmt
            .query(rusqlite::params![after, limit as i64])
            .map_err(|e| db_err(&self.path, e))?;
        let mut out = Vec::with_capacity(limit.min(VECTOR_PAGE_ROWS));
        while let Some(r) = rows.next().map_err(|e| db_err(&self.path, e))? {
            let id: i64 = r.get(0).map_err(|e| db_err(&self.path, e))?;
            let bytes = r.get_ref(1).map_err(|e| db_err(&self.path, e))?;
            let bytes = bytes.as_blob().map_err(|e| db_err(&self.path, e))?;
            out.push((id, vector_from_bytes(bytes)));
        }
        Ok(out)
    }

    /// The chunks whose embed text has a vector, in id order (ids only: what the vectors file
    /// must hold). Read by ranges of [`VECTOR_ID_RANGE`] ids, the connection held for one
    /// range at a time: the whole join took 2 s at a million chunks.
    pub(crate) fn chunk_ids_with_vectors(&self) -> Result<Vec<i64>> {
        self.chunk_ids_with_vectors_by(VECTOR_ID_RANGE)
    }

    fn chunk_ids_with_vectors_by(&self, range: i64) -> Result<Vec<i64>> {
        let newest: i64 = self
            .lock()
            .query_row("SELECT COALESCE(MAX(id), 0) FROM chunks", [], |r| r.get(0))
            .map_err(|e| db_err(&self.path, e))?;
        let mut out = Vec::new();
        let mut after = 0;
        while after < newest {
            let conn = self.lock();
            let mut stmt = conn
                .prepare_cached(
                    "SELECT chunks.id FROM chunks
                     CROSS JOIN vectors ON vectors.hash = chunks.embed_hash
                     WHERE chunks.id > ?1 AND chunks.id <= ?2 ORDER BY chunks.id",
                )
                .map_err(|e| db_err(&self.path, e))?;
            let upto = after + range;
            let rows = stmt
                .query_map([after, upto], |r| r.get::<_, i64>(0))
                .map_err(|e| db_err(&self.path, e))?;
            for id in rows {
                out.push(id.map_err(|e| db_err(&self.path, e))?);
            }
            after = upto;
        }
        Ok(out)
    }

    /// The vectors of some chunks (chunks without one are left out).
    pub fn chunk_vectors(&self, ids: &[i64]) -> Result<Vec<(i64, Vec<f32>)>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(
                "SELECT vectors.vector FROM chunks JOIN vectors ON vectors.hash = chunks.embed_hash
                 WHERE chunks.id = ?1",
            )
            .map_err(|e| db_err(&self.path, e))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(b) = stmt
                .query_row([id], |r| r.get::<_, Vec<u8>>(0))
                .optional()
                .map_err(|e| db_err(&self.path, e))?
            {
                out.push((*id, vector_from_bytes(&b)));
            }
        }
        Ok(out)
    }

    /// Removes vectors no chunk refers to; returns how many.
    pub(crate) fn prune_vectors(&self) -> Result<usize> {
        self.lock()
            .execute("DELETE FROM vectors WHERE hash NOT IN (SELECT embed_hash FROM chunks)", [])
            .map_err(|e| db_err(&self.path, e))
    }

    /// Drops every vector (the model changed).
    pub fn drop_vectors(&self) -> Result<()> {
        self.lock()
            .execute("DELETE FROM vectors", [])
            .map(|_| ())
            .map_err(|e| db_err(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{file, store_with};
    use super::super::{Batch, FileUpdate, NewChunk};
    use super::*;

    #[test]
    fn chunk_vectors_read_in_pages_and_id_ranges_are_the_whole_read_in_id_order() {
        let (_dir, store) = store_with(&[]);
        // Twelve chunks over three files, every third text without a vector, and a file
        // deleted so the ids have a gap.
        let hash = |i: usize| -> TextHash { [i as u8; 32] };
        let upserts: Vec<FileUpdate> = (0..3)
            .map(|f| {
                let mut u = file("v", &format!("f{f}.md"));
                u.chunks = (0..4)
                    .map(|c| NewChunk {
                        breadcrumb: String::new(),
                        line: 1,
                        text: format!("chunk {f} {c}"),
                        embed_hash: hash(f * 4 + c),
                    })
                    .collect();
                u
            })
            .collect();
        let vectors =
            (0..12).filter(|i| i % 3 != 0).map(|i| (hash(i), vec![i as f32; 4])).collect();
        store.apply(Batch { upserts, vectors, ..Batch::default() }).unwrap();
        store
            .apply(Batch { deletes: vec![("v".into(), "f1.md".into())], ..Batch::default() })
            .unwrap();

        let mut whole = Vec::new();
        store.for_each_chunk_vector_in_pages(0, 1000, |id, v| whole.push((id, v))).unwrap();
        assert_eq!(whole.len(), 5, "f0's and f2's chunks whose text has a vector: {whole:?}");
        for rows in [1, 2, 3] {
            let mut paged = Vec::new();
            store.for_each_chunk_vector_in_pages(0, rows, |id, v| paged.push((id, v))).unwrap();
            assert_eq!(paged, whole, "pages of {rows}");
        }
        let ids: Vec<i64> = whole.iter().map(|(id, _)| *id).collect();
        for range in [1, 2, 5, 100] {
            assert_eq!(store.chunk_ids_with_vectors_by(range).unwrap(), ids, "ranges of {range}");
        }
    }
}
