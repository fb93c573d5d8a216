//! The index store: one SQLite file per data directory, the record the rest is derived from.
//!
//! It holds the indexed files (path, size, mtime, sha256, title, status), their chunks,
//! vectors keyed by the sha256 of the text that was embedded, so a text is embedded once
//! however many files, renames or rebuilds carry it, and document extractions keyed by the
//! sha256 of the document's bytes. A chunker change invalidates chunks (each
//! file remembers the fingerprint it was chunked with) but keeps vectors; a model change drops
//! vectors and keeps chunks. Every change is one transaction (WAL mode), so a crash leaves the
//! last committed state, and vectors, once committed, are never lost to a later failure.
//!
//! This is the only module that uses rusqlite. It does not chunk, embed or search.

mod counts;
mod files;
mod vectors;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use crate::docs::{Extraction, Status, Verdict};
use crate::error::{Error, ErrorCode, Result};

/// The schema this code writes; an older store is migrated, a newer one refused.
const SCHEMA_VERSION: i64 = 3;

/// sha256 of an embed text: the key of a vector.
pub(crate) type TextHash = [u8; 32];

/// What kind of file an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A Markdown note.
    Note,
    /// A filed document (its extracted text is chunked).
    Document,
}

impl FileKind {
    fn as_str(self) -> &'static str {
        match self {
            FileKind::Note => "note",
            FileKind::Document => "document",
        }
    }

    fn parse(s: &str) -> FileKind {
        if s == "document" { FileKind::Document } else { FileKind::Note }
    }
}

/// What became of a file the last time it was indexed: one closed set, stored by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FileStatus {
    /// A note whose text is in the index.
    Indexed,
    /// A note with no text to index.
    Skipped,
    /// A note or document that could not be read or parsed (the detail says why).
    Failed,
    /// A document whose text layer is in the index.
    Extracted,
    /// A scanned document whose OCR text is in the index.
    Ocr,
    /// A document that holds no text.
    NoText,
    /// A scanned document waiting for OCR (off, or Tesseract missing).
    NeedsOcr,
    /// A file the indexer cannot open (reported by coverage, never stored).
    Unreadable,
}

impl FileStatus {
    /// Every status, for parsing.
    const ALL: [FileStatus; 8] = [
        FileStatus::Indexed,
        FileStatus::Skipped,
        FileStatus::Failed,
        FileStatus::Extracted,
        FileStatus::Ocr,
        FileStatus::NoText,
        FileStatus::NeedsOcr,
        FileStatus::Unreadable,
    ];

    /// The stored and wire name, e.g. `needs_ocr`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FileStatus::Indexed => "indexed",
            FileStatus::Skipped => "skipped",
            FileStatus::Failed => "failed",
            FileStatus::Extracted => "extracted",
            FileStatus::Ocr => "ocr",
            FileStatus::NoText => "no_text",
            FileStatus::NeedsOcr => "needs_ocr",
            FileStatus::Unreadable => "unreadable",
        }
    }

    /// The inverse of [`FileStatus::as_str`].
    pub(crate) fn parse(s: &str) -> Option<FileStatus> {
        FileStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// A document's status from its extraction verdict.
    pub(crate) fn of_document(verdict: crate::docs::Status) -> FileStatus {
        match verdict {
            crate::docs::Status::Extracted => FileStatus::Extracted,
            crate::docs::Status::Ocr => FileStatus::Ocr,
            crate::docs::Status::NoText => FileStatus::NoText,
            crate::docs::Status::NeedsOcr => FileStatus::NeedsOcr,
            crate::docs::Status::Failed => FileStatus::Failed,
        }
    }

    /// Whether a file of this status has its text in the index.
    pub(crate) fn searchable(self) -> bool {
        matches!(self, FileStatus::Indexed | FileStatus::Extracted | FileStatus::Ocr)
    }
}

/// One indexed (or skipped, or failed) file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileRow {
    /// Row id.
    pub(crate) id: i64,
    /// The vault name.
    pub(crate) vault: String,
    /// Vault-relative path.
    pub(crate) path: String,
    /// Note or document.
    pub(crate) kind: FileKind,
    /// Size in bytes when last read.
    pub(crate) size: u64,
    /// Modification time in nanoseconds since the epoch when last read.
    pub(crate) mtime_ns: i64,
    /// sha256 of the bytes when last read.
    pub(crate) sha256: String,
    /// What became of it.
    pub(crate) status: FileStatus,
    /// Why it was skipped or failed.
    pub(crate) detail: String,
    /// The chunker fingerprint its chunks were made with.
    pub(crate) fingerprint: String,
}

/// A chunk to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NewChunk {
    /// Heading path, `A > B`.
    pub(crate) breadcrumb: String,
    /// 1-based line in the file.
    pub(crate) line: usize,
    /// The chunk's text.
    pub(crate) text: String,
    /// sha256 of the embed text.
    pub(crate) embed_hash: TextHash,
}

/// A file's new state, with all of its chunks.
#[derive(Debug, Clone)]
pub(crate) struct FileUpdate {
    /// The vault name.
    pub(crate) vault: String,
    /// Vault-relative path.
    pub(crate) path: String,
    /// Note or document.
    pub(crate) kind: FileKind,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Modification time, ns.
    pub(crate) mtime_ns: i64,
    /// sha256 of the bytes.
    pub(crate) sha256: String,
    /// The title chunks are embedded with.
    pub(crate) title: String,
    /// The description chunks are embedded with.
    pub(crate) description: String,
    /// The note's aliases, one a line: searched with its title, never embedded.
    pub(crate) aliases: String,
    /// What became of it.
    pub(crate) status: FileStatus,
    /// Why it was skipped or failed.
    pub(crate) detail: String,
    /// The chunker fingerprint.
    pub(crate) fingerprint: String,
    /// The chunks, in order.
    pub(crate) chunks: Vec<NewChunk>,
}

/// One transaction's worth of changes.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Files whose chunks are replaced wholesale.
    pub(crate) upserts: Vec<FileUpdate>,
    /// Files that are gone.
    pub(crate) deletes: Vec<(String, String)>,
    /// Files whose bytes are unchanged but whose mtime moved: (file id, mtime ns).
    pub(crate) touches: Vec<(i64, i64)>,
    /// New vectors.
    pub(crate) vectors: Vec<(TextHash, Vec<f32>)>,
    /// The vectors replace stored ones for the same text (a forced re-embed) instead of being
    /// ignored when one exists.
    pub(crate) replace_vectors: bool,
}

/// What a transaction changed, for the in-memory indexes.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// The chunk generation after the transaction.
    pub(crate) generation: u64,
    /// Chunk ids that no longer exist.
    pub(crate) removed: Vec<i64>,
    /// Chunk ids that were added.
    pub(crate) added: Vec<i64>,
}

/// The columns [`info_from_row`] reads, in its order: every query that makes a [`ChunkInfo`]
/// selects these first, and a chunk's text after them comes at index 10.
macro_rules! chunk_info_columns {
    () => {
        "chunks.id, files.vault, files.path, files.kind, files.title, files.description,
         chunks.breadcrumb, chunks.line, chunks.embed_hash, files.aliases"
    };
}

/// A chunk with what search needs to show it (no vector).
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkInfo {
    /// Chunk id.
    pub id: i64,
    /// The vault name.
    pub(crate) vault: String,
    /// Vault-relative path.
    pub path: String,
    /// Note or document.
    pub(crate) kind: FileKind,
    /// The file's title.
    pub(crate) title: String,
    /// The file's description.
    pub(crate) description: String,
    /// The note's aliases, one a line.
    pub(crate) aliases: String,
    /// Heading path.
    pub breadcrumb: String,
    /// 1-based line.
    pub line: usize,
    /// sha256 of the embed text.
    pub embed_hash: TextHash,
}

/// The SQLite store.
pub struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

fn db_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::InternalError,
        format!(
            "the index store {} failed: {e}; if it persists, delete it and run `mdvault index`",
            path.display()
        ),
    )
}

fn vector_bytes(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Decodes a stored little-endian f32 vector.
pub(crate) fn vector_from_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

impl Store {
    /// Opens (or creates) `index.db` in `data_dir`, which is created 0700 with the file 0600.
    pub(crate) fn open(data_dir: &Path) -> Result<Store> {
        create_private_dir(data_dir)?;
        let path = crate::config::DataDir::new(data_dir).store();
        let existed = path.exists();
        let conn = Connection::open(&path).map_err(|e| db_err(&path, e))?;
        #[cfg(unix)]
        if !existed {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        let _ = existed;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA foreign_keys = ON;
             PRAGMA busy_timeout = 5000;",
        )
        .map_err(|e| db_err(&path, e))?;
        let store = Store { path, conn: Mutex::new(conn) };
        store.migrate()?;
        Ok(store)
    }

    /// SQLite's own integrity check of the store at `path`, opened read-only without
    /// migrating it (`doctor` must not change what it examines): `"ok"` when healthy, else
    /// SQLite's first complaint; an error when the file cannot be opened or read.
    pub(crate) fn quick_check(path: &Path) -> std::result::Result<String, String> {
        Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|c| c.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)))
        .map_err(|e| e.to_string())
    }

    /// Where the store lives.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn migrate(&self) -> Result<()> {
        let conn = self.lock();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| db_err(&self.path, e))?;
        if version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorCode::InternalError,
                format!(
                    "the index store {} was written by a newer mdvault (schema {version}); \
                     upgrade mdvault or delete the store to rebuild it",
                    self.path.display()
                ),
            ));
        }
        if version < 1 {
            conn.execute_batch(
                "BEGIN;
                 CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS files (
                     id INTEGER PRIMARY KEY AUTOINCREMENT,
                     vault TEXT NOT NULL,
                     path TEXT NOT NULL,
                     kind TEXT NOT NULL,
                     size INTEGER NOT NULL,
                     mtime_ns INTEGER NOT NULL,
                     sha256 TEXT NOT NULL,
                     title TEXT NOT NULL,
                     description TEXT NOT NULL,
                     status TEXT NOT NULL,
                     detail TEXT NOT NULL,
                     fingerprint TEXT NOT NULL,
                     UNIQUE (vault, path));
                 CREATE TABLE IF NOT EXISTS chunks (
                     id INTEGER PRIMARY KEY AUTOINCREMENT,
                     file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
                     ord INTEGER NOT NULL,
                     breadcrumb TEXT NOT NULL,
                     line INTEGER NOT NULL,
                     text TEXT NOT NULL,
                     embed_hash BLOB NOT NULL);
                 CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (file_id, ord);
                 CREATE INDEX IF NOT EXISTS chunks_by_hash ON chunks (embed_hash);
                 CREATE TABLE IF NOT EXISTS vectors (hash BLOB PRIMARY KEY, vector BLOB NOT NULL);
                 PRAGMA user_version = 1;
                 COMMIT;",
            )
            .map_err(|e| db_err(&self.path, e))?;
        }
        if version < 2 {
            // Extraction results by content hash: OCR can take seconds a page, so a restart
            // or a rename must not redo it. `signature` names the extractor that produced the
            // row, so a newer extractor (or one that gained OCR) does the work again.
            conn.execute_batch(
                "BEGIN;
                 CREATE TABLE IF NOT EXISTS extractions (
                     sha256 TEXT NOT NULL,
                     signature TEXT NOT NULL,
                     status TEXT NOT NULL,
                     pages INTEGER NOT NULL,
                     has_text_layer INTEGER NOT NULL,
                     extracted_chars INTEGER NOT NULL,
                     detail TEXT NOT NULL,
                     markdown TEXT NOT NULL,
                     PRIMARY KEY (sha256, signature));
                 PRAGMA user_version = 2;
                 COMMIT;",
            )
            .map_err(|e| db_err(&self.path, e))?;
        }
        if version < 3 {
            // A note's aliases, searched beside its title. Rows written before are filled in
            // when the chunker's version (in each row's fingerprint) makes every note re-read.
            conn.execute_batch(
                "BEGIN;
                 ALTER TABLE files ADD COLUMN aliases TEXT NOT NULL DEFAULT '';
                 PRAGMA user_version = 3;
                 COMMIT;",
            )
            .map_err(|e| db_err(&self.path, e))?;
        }
        Ok(())
    }

    /// A cached extraction of the document with these bytes, by this extractor.
    pub(crate) fn extraction(&self, sha256: &str, signature: &str) -> Result<Option<Extraction>> {
        let conn = self.lock();
        let row = conn.query_row(
            "SELECT status, pages, has_text_layer, extracted_chars, detail, markdown
             FROM extractions WHERE sha256 = ?1 AND signature = ?2",
            rusqlite::params![sha256, signature],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            },
        );
        match row {
            Ok((status, pages, has_text_layer, chars, detail, markdown)) => {
                // A status this build does not know (a newer one wrote it) is a cache miss.
                Ok(Status::parse(&status).map(|status| Extraction {
                    verdict: Verdict {
                        status,
                        pages: pages as u32,
                        has_text_layer,
                        extracted_chars: chars as usize,
                        detail,
                    },
                    markdown,
                }))
            }
            Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(db_err(&self.path, e)),
        }
    }

    /// Remembers an extraction.
    pub(crate) fn put_extraction(
        &self,
        sha256: &str,
        signature: &str,
        e: &Extraction,
    ) -> Result<()> {
        let v = &e.verdict;
        self.lock()
            .execute(
                "INSERT OR REPLACE INTO extractions
                 (sha256, signature, status, pages, has_text_layer, extracted_chars, detail, markdown)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    sha256,
                    signature,
                    v.status.as_str(),
                    v.pages as i64,
                    v.has_text_layer,
                    v.extracted_chars as i64,
                    v.detail,
                    e.markdown
                ],
            )
            .map(|_| ())
            .map_err(|e| db_err(&self.path, e))
    }

    /// Removes extractions of bytes no indexed file has any more; returns how many.
    pub(crate) fn prune_extractions(&self) -> Result<usize> {
        self.lock()
            .execute("DELETE FROM extractions WHERE sha256 NOT IN (SELECT sha256 FROM files)", [])
            .map_err(|e| db_err(&self.path, e))
    }

    /// A value from the `meta` table.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        self.lock()
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| db_err(&self.path, e))
    }

    /// Sets a value in the `meta` table.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.lock()
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )
            .map(|_| ())
            .map_err(|e| db_err(&self.path, e))
    }

    /// SQLite's `data_version`: it changes whenever another connection (another process)
    /// commits, so a reader can tell cheaply whether the owner has written since it last looked.
    pub(crate) fn data_version(&self) -> Result<i64> {
        self.lock()
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .map_err(|e| db_err(&self.path, e))
    }

    /// The current chunk generation (bumped by every transaction that changes chunks).
    pub(crate) fn generation(&self) -> Result<u64> {
        Ok(self.meta("generation")?.and_then(|g| g.parse().ok()).unwrap_or(0))
    }
}

impl Store {
    /// Applies a batch in one transaction and returns what changed.
    pub(crate) fn apply(&self, batch: Batch) -> Result<Applied> {
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| db_err(&self.path, e))?;
        let mut applied = Applied::default();
        let changes_chunks = !batch.upserts.is_empty() || !batch.deletes.is_empty();
        {
            let insert_sql = if batch.replace_vectors {
                "INSERT OR REPLACE INTO vectors (hash, vector) VALUES (?1, ?2)"
            } else {
                "INSERT OR IGNORE INTO vectors (hash, vector) VALUES (?1, ?2)"
            };
            let mut insert_vec =
                tx.prepare_cached(insert_sql).map_err(|e| db_err(&self.path, e))?;
            for (hash, v) in &batch.vectors {
                insert_vec
                    .execute(params![&hash[..], vector_bytes(v)])
                    .map_err(|e| db_err(&self.path, e))?;
            }
            let mut old_chunks = tx
                .prepare_cached(
                    "SELECT chunks.id FROM chunks JOIN files ON files.id = chunks.file_id
                     WHERE files.vault = ?1 AND files.path = ?2",
                )
                .map_err(|e| db_err(&self.path, e))?;
            let mut delete_file = tx
                .prepare_cached("DELETE FROM files WHERE vault = ?1 AND path = ?2")
                .map_err(|e| db_err(&self.path, e))?;
            // An upserted file replaces its old row (and, by cascade, its old chunks).
            let replaced = batch.upserts.iter().map(|u| (u.vault.clone(), u.path.clone()));
            let gone: Vec<(String, String)> =
                batch.deletes.iter().cloned().chain(replaced).collect();
            for (vault, path) in &gone {
                let ids = old_chunks
                    .query_map(params![vault, path], |r| r.get::<_, i64>(0))
                    .map_err(|e| db_err(&self.path, e))?
                    .collect::<rusqlite::Result<Vec<i64>>>()
                    .map_err(|e| db_err(&self.path, e))?;
                applied.removed.extend(ids);
                delete_file.execute(params![vault, path]).map_err(|e| db_err(&self.path, e))?;
            }
            let mut insert_file = tx
                .prepare_cached(
                    "INSERT INTO files (vault, path, kind, size, mtime_ns, sha256, title, description,
                                        status, detail, fingerprint, aliases)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(|e| db_err(&self.path, e))?;
            let mut insert_chunk = tx
                .prepare_cached(
                    "INSERT INTO chunks (file_id, ord, breadcrumb, line, text, embed_hash)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(|e| db_err(&self.path, e))?;
            for u in &batch.upserts {
                insert_file
                    .execute(params![
                        u.vault,
                        u.path,
                        u.kind.as_str(),
                        u.size as i64,
                        u.mtime_ns,
                        u.sha256,
                        u.title,
                        u.description,
                        u.status.as_str(),
                        u.detail,
                        u.fingerprint,
                        u.aliases
                    ])
                    .map_err(|e| db_err(&self.path, e))?;
                let file_id = tx.last_insert_rowid();
                for (ord, c) in u.chunks.iter().enumerate() {
                    insert_chunk
                        .execute(params![
                            file_id,
                            ord as i64,
                            c.breadcrumb,
                            c.line as i64,
                            c.text,
                            &c.embed_hash[..]
                        ])
                        .map_err(|e| db_err(&self.path, e))?;
                    applied.added.push(tx.last_insert_rowid());
                }
            }
            let mut touch = tx
                .prepare_cached("UPDATE files SET mtime_ns = ?2 WHERE id = ?1")
                .map_err(|e| db_err(&self.path, e))?;
            for (id, mtime) in &batch.touches {
                touch.execute(params![id, mtime]).map_err(|e| db_err(&self.path, e))?;
            }
        }
        let mut generation: u64 = tx
            .query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| {
                r.get::<_, String>(0)
            })
            .optional()
            .map_err(|e| db_err(&self.path, e))?
            .and_then(|g| g.parse().ok())
            .unwrap_or(0);
        if changes_chunks {
            generation += 1;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('generation', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [generation.to_string()],
            )
            .map_err(|e| db_err(&self.path, e))?;
        }
        tx.commit().map_err(|e| db_err(&self.path, e))?;
        applied.generation = generation;
        Ok(applied)
    }

    /// Chunks with what search shows, for the given ids (missing ids are left out), in one
    /// query per few hundred ids.
    pub(crate) fn chunk_infos(&self, ids: &[i64]) -> Result<Vec<ChunkInfo>> {
        let conn = self.lock();
        let mut out = Vec::with_capacity(ids.len());
        for part in ids.chunks(500) {
            let marks = vec!["?"; part.len()].join(",");
            let sql = format!(
                concat!(
                    "SELECT ",
                    chunk_info_columns!(),
                    "
                 FROM chunks JOIN files ON files.id = chunks.file_id WHERE chunks.id IN ({marks})"
                ),
                marks = marks
            );
            let mut stmt = conn.prepare_cached(&sql).map_err(|e| db_err(&self.path, e))?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(part.iter()), info_from_row)
                .map_err(|e| db_err(&self.path, e))?;
            for row in rows {
                out.push(row.map_err(|e| db_err(&self.path, e))?);
            }
        }
        Ok(out)
    }

    /// Every file that may have chunks: (file id, vault, path, kind), for the catalog.
    pub(crate) fn catalog_files(&self) -> Result<Vec<(i64, String, String, FileKind)>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare("SELECT id, vault, path, kind FROM files")
            .map_err(|e| db_err(&self.path, e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, FileKind::parse(&r.get::<_, String>(3)?)))
            })
            .map_err(|e| db_err(&self.path, e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| db_err(&self.path, e))
    }

    /// Calls `f` with every chunk's id and file id. Read from the `(file_id, ord)` index,
    /// which holds both: scanning the chunk rows themselves would read every text.
    pub(crate) fn for_each_chunk_file(&self, mut f: impl FnMut(i64, i64)) -> Result<()> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare("SELECT id, file_id FROM chunks INDEXED BY chunks_by_file")
            .map_err(|e| db_err(&self.path, e))?;
        let mut rows = stmt.query([]).map_err(|e| db_err(&self.path, e))?;
        while let Some(r) = rows.next().map_err(|e| db_err(&self.path, e))? {
            f(
                r.get(0).map_err(|e| db_err(&self.path, e))?,
                r.get(1).map_err(|e| db_err(&self.path, e))?,
            );
        }
        Ok(())
    }

    /// Calls `f` with every chunk's id and embed text hash, read from the hash index (see
    /// [`Store::for_each_chunk_file`]).
    pub(crate) fn for_each_chunk_hash(&self, mut f: impl FnMut(i64, TextHash)) -> Result<()> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare("SELECT id, embed_hash FROM chunks INDEXED BY chunks_by_hash")
            .map_err(|e| db_err(&self.path, e))?;
        let mut rows = stmt.query([]).map_err(|e| db_err(&self.path, e))?;
        while let Some(r) = rows.next().map_err(|e| db_err(&self.path, e))? {
            let id: i64 = r.get(0).map_err(|e| db_err(&self.path, e))?;
            let hash = r.get_ref(1).map_err(|e| db_err(&self.path, e))?;
            let hash = hash.as_blob().ok().and_then(|b| TextHash::try_from(b).ok());
            f(id, hash.unwrap_or([0; 32]));
        }
        Ok(())
    }

    /// Every chunk with its info, in (vault, path, order) order.
    pub fn all_chunk_infos(&self) -> Result<Vec<ChunkInfo>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare(concat!(
                "SELECT ",
                chunk_info_columns!(),
                "
                 FROM chunks JOIN files ON files.id = chunks.file_id
                 ORDER BY files.vault, files.path, chunks.ord"
            ))
            .map_err(|e| db_err(&self.path, e))?;
        let rows = stmt.query_map([], info_from_row).map_err(|e| db_err(&self.path, e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| db_err(&self.path, e))
    }

    /// The texts of some chunks, in one query per few hundred ids.
    pub(crate) fn chunk_texts(&self, ids: &[i64]) -> Result<HashMap<i64, String>> {
        let conn = self.lock();
        let mut out = HashMap::with_capacity(ids.len());
        for part in ids.chunks(500) {
            let marks = vec!["?"; part.len()].join(",");
            let sql = format!("SELECT id, text FROM chunks WHERE id IN ({marks})");
            let mut stmt = conn.prepare_cached(&sql).map_err(|e| db_err(&self.path, e))?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(part.iter()), |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(|e| db_err(&self.path, e))?;
            for row in rows {
                let (id, text) = row.map_err(|e| db_err(&self.path, e))?;
                out.insert(id, text);
            }
        }
        Ok(out)
    }

    /// The chunks whose embed text is one of `hashes`: (text hash, chunk id).
    pub(crate) fn chunks_of_texts(&self, hashes: &[TextHash]) -> Result<Vec<(TextHash, i64)>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached("SELECT id FROM chunks WHERE embed_hash = ?1")
            .map_err(|e| db_err(&self.path, e))?;
        let mut out = Vec::with_capacity(hashes.len());
        for hash in hashes {
            let rows = stmt
                .query_map([&hash[..]], |r| r.get::<_, i64>(0))
                .map_err(|e| db_err(&self.path, e))?;
            for id in rows {
                out.push((*hash, id.map_err(|e| db_err(&self.path, e))?));
            }
        }
        Ok(out)
    }

    /// Up to `limit` chunks whose embed text has no vector yet, with ids above `after`, in id
    /// order: (chunk info, chunk text). Paged by id so an embedding pass holds one page of texts
    /// at a time, not the vault's (a million chunks' texts are gigabytes), and each page
    /// starts where the last ended instead of skipping the rows already embedded.
    pub(crate) fn chunks_missing_vectors(
        &self,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(ChunkInfo, String)>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(concat!(
                "SELECT ",
                chunk_info_columns!(),
                ", chunks.text
                 FROM chunks JOIN files ON files.id = chunks.file_id
                 WHERE chunks.id > ?1
                   AND NOT EXISTS (SELECT 1 FROM vectors WHERE vectors.hash = chunks.embed_hash)
                 ORDER BY chunks.id LIMIT ?2"
            ))
            .map_err(|e| db_err(&self.path, e))?;
        let rows = stmt
            .query_map(rusqlite::params![after, limit as i64], info_and_text)
            .map_err(|e| db_err(&self.path, e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| db_err(&self.path, e))
    }

    /// One chunk for each of `hashes` whose text has no vector yet, in id order, with its
    /// text: what a write's re-index embeds before anything else still without a vector.
    pub(crate) fn chunks_of_texts_missing_vectors(
        &self,
        hashes: &[TextHash],
    ) -> Result<Vec<(ChunkInfo, String)>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(concat!(
                "SELECT ",
                chunk_info_columns!(),
                ", chunks.text
                 FROM chunks JOIN files ON files.id = chunks.file_id
                 WHERE chunks.embed_hash = ?1
                   AND NOT EXISTS (SELECT 1 FROM vectors WHERE vectors.hash = ?1)
                 ORDER BY chunks.id LIMIT 1"
            ))
            .map_err(|e| db_err(&self.path, e))?;
        let mut out = Vec::with_capacity(hashes.len());
        for hash in hashes {
            let row = stmt
                .query_row([&hash[..]], info_and_text)
                .optional()
                .map_err(|e| db_err(&self.path, e))?;
            out.extend(row);
        }
        out.sort_by_key(|(info, _)| info.id);
        Ok(out)
    }

    /// Up to `limit` chunks of one vault with ids above `after`, in id order, with their
    /// texts, vector or not: a page of what a forced re-embed embeds.
    pub(crate) fn vault_chunk_texts(
        &self,
        vault: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(ChunkInfo, String)>> {
        let conn = self.lock();
        let mut stmt = conn
            .prepare_cached(concat!(
                "SELECT ",
                chunk_info_columns!(),
                ", chunks.text
                 FROM chunks JOIN files ON files.id = chunks.file_id
                 WHERE files.vault = ?1 AND chunks.id > ?2
                 ORDER BY chunks.id LIMIT ?3"
            ))
            .map_err(|e| db_err(&self.path, e))?;
        let rows = stmt
            .query_map(rusqlite::params![vault, after, limit as i64], info_and_text)
            .map_err(|e| db_err(&self.path, e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| db_err(&self.path, e))
    }
}

/// A chunk's info and its text: the columns [`chunk_info_columns`] names, then `chunks.text`.
fn info_and_text(r: &rusqlite::Row<'_>) -> rusqlite::Result<(ChunkInfo, String)> {
    Ok((info_from_row(r)?, r.get::<_, String>(10)?))
}

fn info_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChunkInfo> {
    let hash: Vec<u8> = r.get(8)?;
    Ok(ChunkInfo {
        id: r.get(0)?,
        vault: r.get(1)?,
        path: r.get(2)?,
        kind: FileKind::parse(&r.get::<_, String>(3)?),
        title: r.get(4)?,
        description: r.get(5)?,
        breadcrumb: r.get(6)?,
        line: r.get::<_, i64>(7)? as usize,
        embed_hash: TextHash::try_from(hash.as_slice()).unwrap_or([0; 32]),
        aliases: r.get(9)?,
    })
}

/// Creates `dir` (and parents) and makes it private to the user.
pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(
            ErrorCode::InternalError,
            format!(
                "cannot create the data directory {}: {e}; choose another with --data-dir",
                dir.display()
            ),
        )
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn file(vault: &str, path: &str) -> FileUpdate {
        FileUpdate {
            vault: vault.into(),
            path: path.into(),
            kind: FileKind::Note,
            size: 1,
            mtime_ns: 1,
            sha256: format!("sha of {path}"),
            title: String::new(),
            description: String::new(),
            aliases: String::new(),
            status: FileStatus::Indexed,
            detail: String::new(),
            fingerprint: "f".into(),
            chunks: Vec::new(),
        }
    }

    pub(super) fn store_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let upserts = files.iter().map(|(v, p)| file(v, p)).collect();
        store.apply(Batch { upserts, ..Batch::default() }).unwrap();
        (dir, store)
    }

    #[test]
    fn files_at_finds_a_path_and_a_folders_files_and_nothing_beside_them() {
        let (_dir, store) = store_with(&[
            ("v", "a.md"),
            ("v", "a/b.md"),
            ("v", "a/c/d.md"),
            ("v", "a b.md"),
            ("v", "a0.md"),
            ("v", "ab/e.md"),
            ("w", "a/b.md"),
        ]);
        let paths = |asked: &[&str]| {
            let asked: Vec<String> = asked.iter().map(|s| s.to_string()).collect();
            let mut got: Vec<String> =
                store.files_at("v", &asked).unwrap().into_iter().map(|r| r.path).collect();
            got.sort();
            got
        };
        assert_eq!(paths(&["a"]), ["a/b.md", "a/c/d.md"]);
        assert_eq!(paths(&["a/"]), ["a/b.md", "a/c/d.md"]);
        assert_eq!(paths(&["a.md", "ab"]), ["a.md", "ab/e.md"]);
        assert_eq!(paths(&["missing.md"]), Vec::<String>::new());
        assert_eq!(paths(&[""]).len(), 6, "the root is every file of the vault");
    }

    #[test]
    fn a_vault_has_chunks_only_when_one_of_its_files_holds_one() {
        let (_dir, store) = store_with(&[("v", "empty.md")]);
        assert!(!store.vault_has_chunks("v").unwrap(), "a file without chunks is not a chunk");
        let chunk = NewChunk {
            breadcrumb: String::new(),
            line: 1,
            text: "boiler".into(),
            embed_hash: [7; 32],
        };
        let upserts = vec![FileUpdate { chunks: vec![chunk], ..file("w", "boiler.md") }];
        store.apply(Batch { upserts, ..Batch::default() }).unwrap();
        assert!(store.vault_has_chunks("w").unwrap());
        assert!(!store.vault_has_chunks("v").unwrap(), "another vault's chunk is not v's");
        assert!(!store.vault_has_chunks("x").unwrap());
        assert_eq!(
            store.vault_has_chunks("w").unwrap(),
            store.vault_chunk_counts("w").unwrap().0 > 0,
            "it agrees with the count"
        );
    }

    #[test]
    fn a_store_file_is_private_to_its_user() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, _store) = store_with(&[]);
        let db = crate::config::DataDir::new(dir.path()).store();
        assert_eq!(std::fs::metadata(db).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn quick_check_says_ok_for_a_sound_store_and_complains_about_a_torn_one() {
        let (dir, store) = store_with(&[("v", "a.md")]);
        let db = store.path().to_path_buf();
        assert_eq!(Store::quick_check(&db).as_deref(), Ok("ok"));
        drop(store);
        let torn = dir.path().join("torn.db");
        std::fs::write(&torn, b"SQLite format 3\0 but not really a database").unwrap();
        assert!(Store::quick_check(&torn).is_err_and(|e| !e.is_empty()));
    }
}
