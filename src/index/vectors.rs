//! The dense vectors as one flat, memory-mapped file (`vectors.bin`), derived from the store.
//!
//! At a million chunks, loading every vector from SQLite into a matrix took most of a warm
//! start and held 1.5 GB of floats in memory. This file holds the same vectors four times,
//! laid out for the scan: a 4-bit copy (`nibbles.rs`, an eighth of the floats, each row with
//! its own error terms) that the exact scan reads in full, an int8 copy (one byte per
//! component and one scale per row, a quarter of the floats) that it reads for the rows the
//! 4-bit pass could not rule out, a 1-bit sign code per row (`signs.rs`, a thirty-second of
//! the floats) that the sign scan reads in full instead, and the f32 vectors themselves, of
//! which a query reads only the rows it rescores. The sections
//! scanned in full are memory-mapped: the kernel pages them in on demand and may drop them
//! under pressure, so opening costs a header check, not a load. The f32 rows are read with
//! `pread`, a few hundred a query at most, and are never mapped: a fault in a mapping also maps
//! the cached pages around it (the kernel's fault-around, which `madvise` does not turn off),
//! so a few hundred rescored rows a query made the whole f32 section resident within a few
//! hundred searches, 1.5 GiB at a million rows, counted in the process's memory.
//!
//! **The file is derived.** The store stays the record: each row names its chunk id and the
//! first eight bytes of its embed text's hash, so a row is used only when the store's chunk
//! still has that text; the header names the model, the row count and a checksum of the row
//! table, and a file that is missing, truncated, of another model or failing its checksum is
//! ignored and rebuilt from the store. It is only ever replaced whole (written beside, then
//! renamed), so a process that mapped the old one keeps reading it intact.
//!
//! Layout (little endian; every section starts on a 64-byte boundary):
//! header (64 bytes: magic, dims, rows, model hash, table checksum), row table (`rows` × chunk
//! id i64 + hash prefix u64), scales (`rows` × f32), error terms (`rows` × two f32, see
//! [`QuantQuery::upper`]), sign factors (`rows` × f32), sign codes (`rows / 8` blocks of
//! `dims / 8` × 8 bytes, see `signs.rs`), 4-bit terms (`rows` × four f32) and codes (`rows` ×
//! `⌈dims / 2⌉`, see `nibbles.rs`), int8 codes (`rows` × `dims`), f32 vectors (`rows` ×
//! `dims`). The sections read in full come first and the f32 section last, so a cold start
//! reads the first part of the file in one sequential sweep (`VectorFile::open` asks the
//! kernel to) and the f32 rows as they are rescored (see above). Version 02 added the sign
//! sections, version 03 each row's own error terms and version 04 the 4-bit sections: a file
//! of an older version fails the magic check and is rebuilt from the store.
//!
//! This module knows nothing of SQLite or search; the index hands it rows and reads them back.

use std::path::{Path, PathBuf};

use super::nibbles;
use super::signs::{self, BLOCK_ROWS, Rotation};
use crate::error::{Error, ErrorCode, Result};

const MAGIC: &[u8; 8] = b"MDVVEC04";
const HEADER: usize = 64;
const ALIGN: usize = 64;
/// Rows written per batch of section writes: large enough that writes are few, small enough
/// that the buffers stay a few megabytes.
const WRITE_ROWS: usize = 4096;

fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// Where each section starts, for `rows` rows of `dims`.
#[derive(Debug, Clone, Copy)]
struct Layout {
    table: usize,
    scales: usize,
    errors: usize,
    factors: usize,
    signs: usize,
    terms: usize,
    nibbles: usize,
    codes: usize,
    floats: usize,
    end: usize,
}

impl Layout {
    fn new(rows: usize, dims: usize) -> Layout {
        let table = HEADER;
        let scales = align(table + rows * 16);
        let errors = align(scales + rows * 4);
        let factors = align(errors + rows * 8);
        let signs = align(factors + rows * 4);
        let terms = align(signs + rows.div_ceil(BLOCK_ROWS) * signs::block_bytes(dims));
        let nibbles = align(terms + rows * 16);
        let codes = align(nibbles + rows * nibbles::row_bytes(dims));
        let floats = align(codes + rows * dims);
        let end = floats + rows * dims * 4;
        Layout { table, scales, errors, factors, signs, terms, nibbles, codes, floats, end }
    }
}

/// FNV-1a, 64 bits: a checksum and a model fingerprint, not a defence against tampering.
pub(crate) fn fnv64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A vector's int8 codes and scale: `v[i] ≈ code[i] * scale / 127`, `scale` its largest
/// magnitude (a zero vector gets scale 0).
pub(crate) fn quantise(v: &[f32], codes: &mut [i8]) -> f32 {
    let scale = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if scale == 0.0 {
        codes.fill(0);
        return 0.0;
    }
    let k = 127.0 / scale;
    for (c, x) in codes.iter_mut().zip(v) {
        *c = (x * k).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

/// A row's two error terms for its `codes` and `scale` (see [`QuantQuery::upper`]): the length
/// of what quantising moved, `|v - v̂|`, and the length of the quantised row, `|v̂|`.
fn error_terms(v: &[f32], codes: &[i8], scale: f32) -> [f32; 2] {
    let step = f64::from(scale) / 127.0;
    let (mut moved, mut kept) = (0f64, 0f64);
    for (x, c) in v.iter().zip(codes) {
        let q = f64::from(*c) * step;
        moved += (f64::from(*x) - q).powi(2);
        kept += q * q;
    }
    [moved.sqrt() as f32, kept.sqrt() as f32]
}

/// How a query meets the int8 codes: its own codes, the factor that turns an integer dot
/// product with a row's codes into a score (with the row's scale), and the two lengths the
/// error bound needs.
pub(crate) struct QuantQuery {
    /// The query's int8 codes.
    pub(crate) codes: Vec<i8>,
    /// The query's largest magnitude: `query[i] ≈ codes[i] * scale / 127`.
    pub(crate) scale: f32,
    factor: f32,
    /// `|q|`.
    pub(crate) norm: f32,
    /// `|q - q̂|`, what quantising the query moved.
    pub(crate) moved: f32,
}

impl QuantQuery {
    /// Quantises `query`.
    pub(crate) fn new(query: &[f32]) -> QuantQuery {
        let mut codes = vec![0i8; query.len()];
        let scale = quantise(query, &mut codes);
        let norm = query.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt() as f32;
        let moved = error_terms(query, &codes, scale)[0];
        QuantQuery { codes, scale, factor: scale / (127.0 * 127.0), norm, moved }
    }

    /// The most a row's exact score can be, given its integer dot product `dot` with the
    /// query's codes, its `scale` and its error terms `[|v - v̂|, |v̂|]`.
    ///
    /// The approximate score is `q̂·v̂`, and `q·v - q̂·v̂ = q·(v - v̂) + (q - q̂)·v̂`, which by
    /// Cauchy–Schwarz is at most `|q|·|v - v̂| + |q - q̂|·|v̂|`. Each row carries its own terms:
    /// a bound from the file's largest scale held for every row at once, and at a million rows
    /// was loose enough that a hybrid search rescored thousands of rows from the f32 section
    /// (which then became resident). The small margin covers the float arithmetic of both
    /// scores.
    #[inline]
    pub(crate) fn upper(&self, dot: i32, scale: f32, errors: [f32; 2]) -> f32 {
        let bound = self.norm * errors[0] + self.moved * errors[1];
        dot as f32 * self.factor * scale + bound * 1.001 + 1e-5
    }

    /// The least a row's exact score can be, by the same bound as [`QuantQuery::upper`].
    #[inline]
    pub(crate) fn lower(&self, dot: i32, scale: f32, errors: [f32; 2]) -> f32 {
        let bound = self.norm * errors[0] + self.moved * errors[1];
        dot as f32 * self.factor * scale - bound * 1.001 - 1e-5
    }
}

/// Writes a vectors file of a known row count, row by row: into a temporary beside the
/// target, flushed, then renamed over the old file by [`Writer::finish`].
pub(crate) struct Writer {
    path: PathBuf,
    tmp: PathBuf,
    file: std::fs::File,
    dims: usize,
    model: String,
    count: usize,
    layout: Layout,
    written: usize,
    first: usize,
    table: Vec<u8>,
    scales: Vec<u8>,
    errors: Vec<u8>,
    factors: Vec<u8>,
    /// This batch's sign codes, interleaved by block as the file holds them.
    signs: Vec<u64>,
    terms: Vec<u8>,
    nibbles: Vec<u8>,
    codes: Vec<u8>,
    floats: Vec<u8>,
    row_codes: Vec<i8>,
    row_nibbles: Vec<u8>,
    row_signs: Vec<u64>,
    rotation: Rotation,
    checksum_input: Vec<u8>,
}

impl Writer {
    /// Starts the file for `count` rows of `dims`.
    pub(crate) fn create(path: &Path, dims: usize, model: &str, count: usize) -> Result<Writer> {
        let tmp = temp_name(path);
        let layout = Layout::new(count, dims);
        let file = std::fs::File::create(&tmp).map_err(|e| io_err("create", &tmp, &e))?;
        file.set_len(layout.end as u64).map_err(|e| io_err("size", &tmp, &e))?;
        Ok(Writer {
            path: path.to_path_buf(),
            tmp,
            file,
            dims,
            model: model.to_string(),
            count,
            layout,
            written: 0,
            first: 0,
            table: Vec::new(),
            scales: Vec::new(),
            errors: Vec::new(),
            factors: Vec::new(),
            signs: Vec::new(),
            terms: Vec::new(),
            nibbles: Vec::new(),
            codes: Vec::new(),
            floats: Vec::new(),
            row_codes: vec![0; dims],
            row_nibbles: vec![0; nibbles::row_bytes(dims)],
            row_signs: vec![0; signs::words(dims)],
            rotation: Rotation::new(dims),
            checksum_input: Vec::with_capacity(count * 16),
        })
    }

    /// Adds one row: its chunk id, its text hash prefix and its vector. Rows beyond the
    /// count are ignored (and make [`Writer::finish`] refuse).
    pub(crate) fn push(&mut self, id: i64, hash: u64, v: &[f32]) -> Result<()> {
        if self.written == self.count {
            self.written += 1;
            return Ok(());
        }
        if self.written > self.count {
            return Ok(());
        }
        let zero;
        let v = if v.len() == self.dims {
            v
        } else {
            // The index never hands a wrong-length vector; a zero row keeps the count honest.
            zero = vec![0.0; self.dims];
            &zero
        };
        self.table.extend_from_slice(&id.to_le_bytes());
        self.table.extend_from_slice(&hash.to_le_bytes());
        let scale = quantise(v, &mut self.row_codes);
        self.scales.extend_from_slice(&scale.to_le_bytes());
        for e in error_terms(v, &self.row_codes, scale) {
            self.errors.extend_from_slice(&e.to_le_bytes());
        }
        let factor = signs::encode(&self.rotation, v, &mut self.row_signs);
        self.factors.extend_from_slice(&factor.to_le_bytes());
        // Batches start on a block boundary (`WRITE_ROWS` is a multiple of the block).
        let i = self.written - self.first;
        let words = self.row_signs.len();
        let block = (i / BLOCK_ROWS) * words * BLOCK_ROWS;
        self.signs.resize(self.signs.len().max(block + words * BLOCK_ROWS), 0);
        for (w, x) in self.row_signs.iter().enumerate() {
            self.signs[block + w * BLOCK_ROWS + i % BLOCK_ROWS] = *x;
        }
        for t in nibbles::encode(v, &mut self.row_nibbles) {
            self.terms.extend_from_slice(&t.to_le_bytes());
        }
        self.nibbles.extend_from_slice(&self.row_nibbles);
        self.codes.extend(self.row_codes.iter().map(|c| *c as u8));
        for x in v {
            self.floats.extend_from_slice(&x.to_le_bytes());
        }
        self.written += 1;
        if self.written - self.first == WRITE_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let (l, first, dims) = (self.layout, self.first, self.dims);
        let io = |e: std::io::Error| io_err("write", &self.tmp, &e);
        self.file.write_all_at(&self.table, (l.table + first * 16) as u64).map_err(io)?;
        self.file.write_all_at(&self.scales, (l.scales + first * 4) as u64).map_err(io)?;
        self.file.write_all_at(&self.errors, (l.errors + first * 8) as u64).map_err(io)?;
        self.file.write_all_at(&self.factors, (l.factors + first * 4) as u64).map_err(io)?;
        let signs: Vec<u8> = self.signs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let at = l.signs + first / BLOCK_ROWS * signs::block_bytes(dims);
        self.file.write_all_at(&signs, at as u64).map_err(io)?;
        self.file.write_all_at(&self.terms, (l.terms + first * 16) as u64).map_err(io)?;
        let at = l.nibbles + first * nibbles::row_bytes(dims);
        self.file.write_all_at(&self.nibbles, at as u64).map_err(io)?;
        self.file.write_all_at(&self.codes, (l.codes + first * dims) as u64).map_err(io)?;
        self.file.write_all_at(&self.floats, (l.floats + first * dims * 4) as u64).map_err(io)?;
        self.checksum_input.extend_from_slice(&self.table);
        self.table.clear();
        self.scales.clear();
        self.errors.clear();
        self.factors.clear();
        self.signs.clear();
        self.terms.clear();
        self.nibbles.clear();
        self.codes.clear();
        self.floats.clear();
        self.first = self.written;
        Ok(())
    }

    /// Writes the header, flushes and renames the file into place. Refuses (removing the
    /// temporary) when the rows pushed were not exactly the count.
    pub(crate) fn finish(mut self) -> Result<()> {
        use std::os::unix::fs::FileExt;
        if self.written != self.count {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(Error::new(
                ErrorCode::InternalError,
                format!(
                    "the store yielded {} vectors where it counted {} (it changed while the \
                     vectors file was written); the next pass writes it again",
                    self.written, self.count
                ),
            ));
        }
        self.flush()?;
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&(self.dims as u32).to_le_bytes());
        header[16..24].copy_from_slice(&(self.count as u64).to_le_bytes());
        header[24..32].copy_from_slice(&fnv64(self.model.as_bytes()).to_le_bytes());
        header[32..40].copy_from_slice(&fnv64(&self.checksum_input).to_le_bytes());
        let tmp = self.tmp.clone();
        self.file.write_all_at(&header, 0).map_err(|e| io_err("write", &tmp, &e))?;
        self.file.sync_all().map_err(|e| io_err("flush", &tmp, &e))?;
        std::fs::rename(&self.tmp, &self.path).map_err(|e| io_err("rename", &tmp, &e))
    }
}

fn io_err(what: &str, path: &Path, e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::InternalError,
        format!(
            "cannot {what} the vectors file {}: {e}; check the disk (search reads the vectors \
             from the store meanwhile)",
            path.display()
        ),
    )
}

/// Writes `rows` as the vectors file at `path` (see [`Writer`]).
#[cfg(test)]
pub(crate) fn write(
    path: &Path,
    dims: usize,
    model: &str,
    rows: &[(i64, u64, &[f32])],
) -> Result<()> {
    let mut w = Writer::create(path, dims, model, rows.len())?;
    for (id, hash, v) in rows {
        w.push(*id, *hash, v)?;
    }
    w.finish()
}

fn temp_name(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    PathBuf::from(name)
}

/// Bytes a query reads in full under each scan (see [`VectorFile::scanned_bytes`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScannedBytes {
    pub(crate) nibbles: usize,
    pub(crate) int8: usize,
    pub(crate) signs: usize,
}

/// A mapped, checked vectors file.
#[derive(Debug)]
pub(crate) struct VectorFile {
    /// Every section before the f32 rows.
    map: memmap2::Mmap,
    /// The file, for the f32 rows.
    file: std::fs::File,
    path: PathBuf,
    rows: usize,
    dims: usize,
    layout: Layout,
}

impl VectorFile {
    /// Maps the file at `path` if it is whole and belongs to `model` with `dims`: `Ok(None)`
    /// with the reason when it is missing or does not (the caller rebuilds it).
    pub(crate) fn open(
        path: &Path,
        dims: usize,
        model: &str,
    ) -> std::result::Result<VectorFile, String> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(path).map_err(|e| format!("cannot open it: {e}"))?;
        let len = file.metadata().map_err(|e| format!("cannot read its size: {e}"))?.len();
        let mut header = [0u8; HEADER];
        if len < HEADER as u64 || file.read_exact_at(&mut header, 0).is_err() {
            return Err("it is not a vectors file of this version".into());
        }
        if &header[..8] != MAGIC {
            return Err("it is not a vectors file of this version".into());
        }
        let u32_at = |o: usize| u32::from_le_bytes(header[o..o + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |o: usize| u64::from_le_bytes(header[o..o + 8].try_into().unwrap_or([0; 8]));
        let file_dims = u32_at(8) as usize;
        if file_dims != dims {
            return Err(format!("it holds {file_dims}-dimensional vectors, not {dims}"));
        }
        if u64_at(24) != fnv64(model.as_bytes()) {
            return Err("it was made with another model".into());
        }
        let rows = u64_at(16) as usize;
        let layout = Layout::new(rows, dims);
        if len != layout.end as u64 {
            return Err(format!("it is {len} bytes where {rows} rows need {}", layout.end));
        }
        // SAFETY: the file is only ever replaced by rename, never written in place, so the
        // mapped bytes do not change under us; its length was checked above, so every section
        // read through the mapping lies inside the file.
        let map = unsafe { memmap2::MmapOptions::new().len(layout.floats).map(&file) }
            .map_err(|e| format!("cannot map it: {e}"))?;
        if fnv64(&map[layout.table..layout.table + rows * 16]) != u64_at(32) {
            return Err("its row table fails its checksum".into());
        }
        // A scan reads every mapped section in full: it is read ahead now, in one sequential
        // sweep, so a cold start does not fault it in a page at a time.
        let _ = map.advise(memmap2::Advice::WillNeed);
        Ok(VectorFile { map, file, path: path.to_path_buf(), rows, dims, layout })
    }

    /// How many rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Row `r`'s chunk id and text hash prefix.
    pub(crate) fn key(&self, r: usize) -> (i64, u64) {
        let o = self.layout.table + r * 16;
        let id = i64::from_le_bytes(self.map[o..o + 8].try_into().unwrap_or([0; 8]));
        let hash = u64::from_le_bytes(self.map[o + 8..o + 16].try_into().unwrap_or([0; 8]));
        (id, hash)
    }

    /// Row `r`'s scale.
    #[cfg(test)]
    pub(crate) fn scale(&self, r: usize) -> f32 {
        let o = self.layout.scales + r * 4;
        f32::from_le_bytes(self.map[o..o + 4].try_into().unwrap_or([0; 4]))
    }

    /// Row `r`'s int8 codes.
    pub(crate) fn codes(&self, r: usize) -> &[i8] {
        let o = self.layout.codes + r * self.dims;
        let bytes = &self.map[o..o + self.dims];
        // SAFETY: i8 and u8 have the same size and alignment, and every bit pattern is valid.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
    }

    /// Row `r`'s f32 vector, exactly as stored, read from the file (see the module header for
    /// why it is not mapped). `None`, logged, when the disk fails the read.
    pub(crate) fn floats(&self, r: usize) -> Option<Vec<f32>> {
        use std::os::unix::fs::FileExt;
        let mut bytes = vec![0u8; self.dims * 4];
        let at = (self.layout.floats + r * self.dims * 4) as u64;
        if let Err(e) = self.file.read_exact_at(&mut bytes, at) {
            tracing::error!(
                "cannot read row {r} of the vectors file {}: {e}; that row is left out of \
                 this search (check the disk; the next start rebuilds a file removed by hand \
                 from the store)",
                self.path.display()
            );
            return None;
        }
        let floats = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        Some(floats.collect())
    }
}

impl VectorFile {
    /// The integer dot products of `query` with the `out.len()` code rows from row `first`
    /// on: `out[i] = dot_i8(query, codes(first + i))`. One call per block of rows, so the
    /// kernel (chosen once by CPU feature) runs over contiguous codes without a call per row.
    pub(crate) fn dots_i8(&self, query: &[i8], first: usize, out: &mut [i32]) {
        let o = self.layout.codes + first * self.dims;
        let bytes = &self.map[o..o + out.len() * self.dims];
        // SAFETY: as in `codes`: i8 and u8 share size, alignment and every bit pattern.
        let codes = unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) };
        dots_i8(query, codes, self.dims, out);
    }

    /// The 4-bit codes of rows `first..first + count`, `nibbles::row_bytes(dims)` bytes each.
    pub(crate) fn nibbles(&self, first: usize, count: usize) -> &[u8] {
        let size = nibbles::row_bytes(self.dims);
        let o = self.layout.nibbles + first * size;
        &self.map[o..o + count * size]
    }

    /// Every row's 4-bit step and error terms (see `nibbles::NibbleQuery::score`), in row
    /// order.
    pub(crate) fn nibble_terms(&self) -> &[nibbles::Terms] {
        let bytes = &self.map[self.layout.terms..self.layout.terms + self.rows * 16];
        // SAFETY: as in `scales`: a 64-byte aligned section of f32 quadruples, which need
        // only the alignment of f32.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<nibbles::Terms>(), self.rows) }
    }

    /// Every row's sign estimate factor (see `signs::encode`), in row order.
    pub(crate) fn sign_factors(&self) -> &[f32] {
        let bytes = &self.map[self.layout.factors..self.layout.factors + self.rows * 4];
        // SAFETY: as in `scales`: a 64-byte aligned section of f32s.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), self.rows) }
    }

    /// The sign codes of blocks `first..first + count`, interleaved (see `signs.rs`).
    pub(crate) fn sign_blocks(&self, first: usize, count: usize) -> &[u64] {
        let size = signs::block_bytes(self.dims);
        let o = self.layout.signs + first * size;
        let bytes = &self.map[o..o + count * size];
        // SAFETY: the section starts on a 64-byte boundary of a page-aligned mapping and
        // blocks are whole multiples of 8 bytes, so the pointer is aligned for u64; every bit
        // pattern is a valid u64 (little endian, as the file is).
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u64>(), bytes.len() / 8) }
    }

    /// Bytes of the sections each scan reads in full: the 4-bit codes with their terms (the
    /// exact scan), the int8 codes with their scales and error terms (the exact scan before the
    /// 4-bit pass), the sign codes with their factors.
    pub(crate) fn scanned_bytes(&self) -> ScannedBytes {
        let l = &self.layout;
        ScannedBytes {
            nibbles: l.codes - l.terms,
            int8: l.floats - l.codes + self.rows * 12,
            signs: l.terms - l.signs + self.rows * 4,
        }
    }

    /// Every row's error terms (see [`QuantQuery::upper`]), in row order.
    pub(crate) fn errors(&self) -> &[[f32; 2]] {
        let bytes = &self.map[self.layout.errors..self.layout.errors + self.rows * 8];
        // SAFETY: as in `scales`: a 64-byte aligned section of f32 pairs, which need only
        // the alignment of f32.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<[f32; 2]>(), self.rows) }
    }

    /// Every row's scale, in row order.
    pub(crate) fn scales(&self) -> &[f32] {
        let bytes = &self.map[self.layout.scales..self.layout.scales + self.rows * 4];
        // SAFETY: the section starts on a 64-byte boundary of a page-aligned mapping, so the
        // pointer is aligned for f32; every bit pattern is a valid f32 (little endian, as the
        // file is).
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), self.rows) }
    }
}

/// `out[i]` = the integer dot product of `query` with row `i` of `codes` (rows of `dims`).
pub(crate) fn dots_i8(query: &[i8], codes: &[i8], dims: usize, out: &mut [i32]) {
    let rows = out.len().min(codes.len() / dims.max(1));
    let query = &query[..dims.min(query.len())];
    (dots_i8_impl())(query, &codes[..rows * dims], dims, &mut out[..rows])
}

type DotsI8 = fn(&[i8], &[i8], usize, &mut [i32]);

fn dots_i8_impl() -> DotsI8 {
    static CHOSEN: std::sync::OnceLock<DotsI8> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
        {
            return dots_i8_vnni_checked;
        }
        dots_i8_rows
    })
}

/// Row by row with the pairwise kernel.
fn dots_i8_rows(query: &[i8], codes: &[i8], dims: usize, out: &mut [i32]) {
    for (o, row) in out.iter_mut().zip(codes.chunks_exact(dims.max(1))) {
        *o = dot_i8(query, row);
    }
}

#[cfg(target_arch = "x86_64")]
fn dots_i8_vnni_checked(query: &[i8], codes: &[i8], dims: usize, out: &mut [i32]) {
    // SAFETY: only chosen by `dots_i8_impl` after detecting AVX-512 F, BW and VNNI.
    unsafe { dots_i8_vnni(query, codes, dims, out) }
}

/// 64 codes per instruction with `vpdpbusd`, which multiplies unsigned bytes by signed ones:
/// each row byte is shifted into 0..=254 by flipping its top bit (`x + 128`), and the
/// `128 * sum(query)` that adds is taken off again, so the result is exact. The 64-byte
/// blocks of the query stay in registers across rows; a tail of fewer than 64 dimensions is
/// summed plainly.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dots_i8_vnni(query: &[i8], codes: &[i8], dims: usize, out: &mut [i32]) {
    use std::arch::x86_64::*;
    let blocks = dims.min(query.len()) / 64;
    let head = blocks * 64;
    let bias: i32 = 128 * query[..head].iter().map(|x| i32::from(*x)).sum::<i32>();
    let flip = _mm512_set1_epi8(i8::MIN);
    // MiniLM's 384 dimensions (six blocks, no tail): sixteen rows at a time with the query
    // in registers and one shared reduction (see `dots16`).
    let done = if blocks == 6 && head == dims {
        // SAFETY: the same features are enabled here; `dots16` reads whole rows of `codes`.
        unsafe { dots16::<6>(query, codes, bias, out) }
    } else {
        0
    };
    for (r, o) in out.iter_mut().enumerate().skip(done) {
        let row = &codes[r * dims..(r + 1) * dims];
        let mut acc = _mm512_setzero_si512();
        // SAFETY: block `b` reads bytes `64 * b .. 64 * (b + 1)`, below `head`, of `row` and
        // `query`, both at least `head` long; unaligned loads have no alignment requirement.
        unsafe {
            for b in 0..blocks {
                let x = _mm512_loadu_si512(row.as_ptr().add(64 * b).cast());
                let q = _mm512_loadu_si512(query.as_ptr().add(64 * b).cast());
                acc = _mm512_dpbusd_epi32(acc, _mm512_xor_si512(x, flip), q);
            }
        }
        let mut total = _mm512_reduce_add_epi32(acc) - bias;
        for (x, y) in row[head..].iter().zip(&query[head..]) {
            total += i32::from(*x) * i32::from(*y);
        }
        *o = total;
    }
}

/// [`dots_i8_vnni`] for rows of exactly `B` 64-byte blocks, sixteen rows at a time; returns
/// how many rows it did (a multiple of 16; the caller does the rest). The query's blocks are
/// loaded once and the sixteen rows' sums made by [`fold16`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dots16<const B: usize>(query: &[i8], codes: &[i8], bias: i32, out: &mut [i32]) -> usize {
    use std::arch::x86_64::*;
    let dims = 64 * B;
    let flip = _mm512_set1_epi8(i8::MIN);
    // SAFETY: `query` holds `dims` codes (the caller checked `head == dims`).
    let q: [__m512i; B] =
        std::array::from_fn(|b| unsafe { _mm512_loadu_si512(query.as_ptr().add(64 * b).cast()) });
    let bias = _mm512_set1_epi32(bias);
    let groups = out.len().min(codes.len() / dims) / 16;
    for g in 0..groups {
        let base = codes[g * 16 * dims..].as_ptr();
        let acc: [__m512i; 16] = std::array::from_fn(|r| {
            let mut acc = _mm512_setzero_si512();
            for (b, qb) in q.iter().enumerate() {
                // SAFETY: row `16 g + r` lies inside `codes` (`groups` counts whole rows).
                let x = unsafe { _mm512_loadu_si512(base.add(r * dims + 64 * b).cast()) };
                acc = _mm512_dpbusd_epi32(acc, _mm512_xor_si512(x, flip), *qb);
            }
            acc
        });
        // SAFETY: the same features are enabled here.
        let sums = unsafe { fold16(&acc) };
        // SAFETY: `out` holds at least `16 (g + 1)` values.
        unsafe {
            _mm512_storeu_si512(out.as_mut_ptr().add(16 * g).cast(), _mm512_sub_epi32(sums, bias))
        };
    }
    groups * 16
}

/// Sixteen rows' accumulators folded into one vector of their sums, row `r` in lane `r`:
/// 32-bit pairs, then 64-bit pairs (each 128-bit lane then holds four rows' partial sums),
/// then the four 128-bit lanes (45 instructions, where sixteen reductions of their own took
/// about ten each with a long dependency chain). Shared by the int8 and 4-bit kernels.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn fold16(acc: &[std::arch::x86_64::__m512i; 16]) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let b: [__m512i; 8] = std::array::from_fn(|i| {
        let (x, y) = (acc[2 * i], acc[2 * i + 1]);
        _mm512_add_epi32(_mm512_unpacklo_epi32(x, y), _mm512_unpackhi_epi32(x, y))
    });
    let c: [__m512i; 4] = std::array::from_fn(|i| {
        let (x, y) = (b[2 * i], b[2 * i + 1]);
        _mm512_add_epi32(_mm512_unpacklo_epi64(x, y), _mm512_unpackhi_epi64(x, y))
    });
    let e: [__m512i; 2] = std::array::from_fn(|i| {
        let (x, y) = (c[2 * i], c[2 * i + 1]);
        _mm512_add_epi32(_mm512_shuffle_i32x4::<0x88>(x, y), _mm512_shuffle_i32x4::<0xDD>(x, y))
    });
    _mm512_add_epi32(
        _mm512_shuffle_i32x4::<0x88>(e[0], e[1]),
        _mm512_shuffle_i32x4::<0xDD>(e[0], e[1]),
    )
}

/// The integer dot product of two code rows.
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    (dot_i8_impl())(a, b)
}

type DotI8 = fn(&[i8], &[i8]) -> i32;

fn dot_i8_impl() -> DotI8 {
    static CHOSEN: std::sync::OnceLock<DotI8> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            return dot_i8_avx2_checked;
        }
        dot_i8_portable
    })
}

fn dot_i8_portable(a: &[i8], b: &[i8]) -> i32 {
    let (blocks_a, rest_a) = a.as_chunks::<16>();
    let (blocks_b, rest_b) = b.as_chunks::<16>();
    let mut acc = [0i32; 16];
    for (x, y) in blocks_a.iter().zip(blocks_b) {
        for j in 0..16 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in rest_a.iter().zip(rest_b) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

#[cfg(target_arch = "x86_64")]
fn dot_i8_avx2_checked(a: &[i8], b: &[i8]) -> i32 {
    // SAFETY: only chosen by `dot_i8_impl` after detecting AVX2 on this CPU.
    unsafe { dot_i8_avx2(a, b) }
}

/// Sign-extends 16 codes at a time to i16 and multiplies pairwise into i32 lanes
/// (`vpmaddwd`): exact, since |code| ≤ 127 keeps every pair sum far inside i32.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc0 = _mm256_setzero_si256();
    let mut acc1 = _mm256_setzero_si256();
    let mut i = 0;
    // SAFETY: each load reads 16 bytes at an offset at most `n - 16` of slices at least `n`
    // long; unaligned loads have no alignment requirement.
    unsafe {
        while i + 32 <= n {
            let x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pa.add(i).cast()));
            let y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pb.add(i).cast()));
            let x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pa.add(i + 16).cast()));
            let y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pb.add(i + 16).cast()));
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(x0, y0));
            acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(x1, y1));
            i += 32;
        }
        while i + 16 <= n {
            let x = _mm256_cvtepi8_epi16(_mm_loadu_si128(pa.add(i).cast()));
            let y = _mm256_cvtepi8_epi16(_mm_loadu_si128(pb.add(i).cast()));
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(x, y));
            i += 16;
        }
        let mut lanes = [0i32; 8];
        _mm256_storeu_si256(lanes.as_mut_ptr().cast(), _mm256_add_epi32(acc0, acc1));
        let mut total: i32 = lanes.iter().sum();
        while i < n {
            total += i32::from(*pa.add(i)) * i32::from(*pb.add(i));
            i += 1;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(seed: &mut u64) -> f32 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    }

    fn unit(seed: &mut u64, dims: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dims).map(|_| random(seed)).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn every_int8_dot_implementation_is_exact() {
        let mut seed = 3u64;
        for len in [0, 1, 15, 16, 31, 32, 33, 384, 385] {
            let a: Vec<i8> = (0..len).map(|_| (random(&mut seed) * 254.0) as i8).collect();
            let b: Vec<i8> = (0..len).map(|_| (random(&mut seed) * 254.0) as i8).collect();
            let plain: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
            assert_eq!(dot_i8(&a, &b), plain, "len {len}");
            assert_eq!(dot_i8_portable(&a, &b), plain, "len {len}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                assert_eq!(dot_i8_avx2_checked(&a, &b), plain, "len {len}");
            }
        }
        let extreme = vec![-127i8; 384];
        assert_eq!(dot_i8(&extreme, &extreme), 127 * 127 * 384);
    }

    #[test]
    fn every_blocked_int8_kernel_equals_the_plain_sum_on_every_row() {
        let mut seed = 5u64;
        for dims in [1, 63, 64, 100, 384, 400] {
            let rows = 37;
            let code = |seed: &mut u64| ((random(seed) * 254.0) as i8).max(-127);
            let query: Vec<i8> = (0..dims).map(|_| code(&mut seed)).collect();
            let mut codes: Vec<i8> = (0..rows * dims).map(|_| code(&mut seed)).collect();
            // The extremes: the bias trick must hold at both ends of the code range.
            codes[..dims].fill(-127);
            codes[dims..2 * dims].fill(127);
            let plain = |row: &[i8]| -> i32 {
                row.iter().zip(&query).map(|(a, b)| i32::from(*a) * i32::from(*b)).sum()
            };
            let want: Vec<i32> = codes.chunks(dims).map(plain).collect();
            let mut got = vec![0; rows];
            dots_i8(&query, &codes, dims, &mut got);
            assert_eq!(got, want, "dims {dims}");
            got.fill(0);
            dots_i8_rows(&query, &codes, dims, &mut got);
            assert_eq!(got, want, "dims {dims}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vnni")
            {
                got.fill(0);
                dots_i8_vnni_checked(&query, &codes, dims, &mut got);
                assert_eq!(got, want, "dims {dims}");
            }
        }
    }

    #[test]
    fn the_int8_score_stays_within_each_rows_stated_bound_of_the_f32_score() {
        let dims = 384;
        let mut seed = 11u64;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let mut rows: Vec<Vec<f32>> = (0..500).map(|_| unit(&mut seed, dims)).collect();
        // The awkward rows: one large component (the largest scale a row can have), a zero
        // row, and components just off the int8 steps.
        let mut spike = vec![0.0; dims];
        spike[7] = 1.0;
        rows.push(spike);
        rows.push(vec![0.0; dims]);
        rows.push((0..dims).map(|i| if i % 2 == 0 { 0.0511 } else { -0.0509 }).collect());
        let it: Vec<(i64, u64, &[f32])> =
            rows.iter().enumerate().map(|(i, v)| (i as i64, i as u64, v.as_slice())).collect();
        write(&path, dims, "m", &it).unwrap();
        let f = VectorFile::open(&path, dims, "m").unwrap();
        assert_eq!(f.rows(), rows.len());
        let mut widest = 0f32;
        for _ in 0..20 {
            let q = unit(&mut seed, dims);
            let qq = QuantQuery::new(&q);
            for (r, row) in rows.iter().enumerate() {
                let exact: f32 = q.iter().zip(row).map(|(a, b)| a * b).sum();
                let dot = dot_i8(&qq.codes, f.codes(r));
                let approx = dot as f32 * qq.factor * f.scale(r);
                let upper = qq.upper(dot, f.scale(r), f.errors()[r]);
                assert!(exact <= upper, "row {r}: {exact} above its bound {upper}");
                assert!((exact - approx).abs() <= upper - approx, "row {r}: {exact} vs {approx}");
                widest = widest.max(upper - approx);
                assert_eq!(f.floats(r).unwrap(), *row, "the f32 section is exact");
                assert_eq!(f.key(r), (r as i64, r as u64));
            }
        }
        // Tight enough to matter: a hundredth of the score range at most on unit rows (the
        // file-wide bound it replaced was several times wider on the same rows).
        assert!(widest < 0.02, "the widest bound was {widest}");
    }

    #[test]
    fn the_f32_rows_are_read_from_the_file_and_never_mapped() {
        // Mapped rows would count in the process's memory, with the cached pages around each
        // one (see the module header); so only the sections before them may be mapped.
        let dims = 384;
        let mut seed = 17u64;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let rows: Vec<Vec<f32>> = (0..2000).map(|_| unit(&mut seed, dims)).collect();
        let it: Vec<(i64, u64, &[f32])> =
            rows.iter().enumerate().map(|(i, v)| (i as i64, 0, v.as_slice())).collect();
        write(&path, dims, "m", &it).unwrap();
        let f = VectorFile::open(&path, dims, "m").unwrap();
        for (r, row) in rows.iter().enumerate() {
            assert_eq!(f.floats(r).unwrap(), *row);
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let name = path.to_str().unwrap();
        let mut mapped_kib = 0u64;
        let mut ours = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
                ours = line.ends_with(name);
            } else if ours && let Some(size) = line.strip_prefix("Size:") {
                mapped_kib += size.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap();
            }
        }
        let file_kib = std::fs::metadata(&path).unwrap().len() / 1024;
        assert!(mapped_kib > 0, "the scanned sections are mapped");
        assert!(
            mapped_kib * 1024 <= (f.layout.floats as u64).next_multiple_of(4096),
            "{mapped_kib} KiB of a {file_kib} KiB file are mapped"
        );
    }

    #[test]
    fn the_sign_sections_hold_each_rows_code_and_factor_by_block() {
        // 4,100 rows: more than one write batch, and a last block of four rows.
        let dims = 100;
        let mut seed = 13u64;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let rows: Vec<Vec<f32>> = (0..WRITE_ROWS + 4).map(|_| unit(&mut seed, dims)).collect();
        let it: Vec<(i64, u64, &[f32])> =
            rows.iter().enumerate().map(|(i, v)| (i as i64, 0, v.as_slice())).collect();
        write(&path, dims, "m", &it).unwrap();
        let f = VectorFile::open(&path, dims, "m").unwrap();
        let rotation = Rotation::new(dims);
        let words = signs::words(dims);
        let blocks = f.sign_blocks(0, rows.len().div_ceil(BLOCK_ROWS));
        for (r, row) in rows.iter().enumerate() {
            let mut code = vec![0u64; words];
            let factor = signs::encode(&rotation, row, &mut code);
            assert_eq!(f.sign_factors()[r], factor, "row {r}");
            let block = &blocks[(r / BLOCK_ROWS) * words * BLOCK_ROWS..];
            let stored: Vec<u64> =
                (0..words).map(|w| block[w * BLOCK_ROWS + r % BLOCK_ROWS]).collect();
            assert_eq!(stored, code, "row {r}");
        }
    }

    #[test]
    fn a_truncated_foreign_or_corrupt_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        let v = [0.6f32, 0.8, 0.0, 0.0];
        let rows = [(1i64, 7u64, &v[..]), (2, 8, &v[..])];
        write(&path, 4, "m", &rows).unwrap();
        assert!(VectorFile::open(&path, 4, "m").is_ok());
        assert!(VectorFile::open(&path, 4, "other").unwrap_err().contains("another model"));
        assert!(VectorFile::open(&path, 8, "m").is_err());
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(VectorFile::open(&path, 4, "m").unwrap_err().contains("checksum"));
        let len = bytes.len();
        std::fs::write(&path, &bytes[..len - 3]).unwrap();
        assert!(VectorFile::open(&path, 4, "m").unwrap_err().contains("bytes"));
        // A file of an older version (no sign sections, or no error terms) is refused, so it
        // is rebuilt.
        for magic in [b"MDVVEC01", b"MDVVEC02"] {
            let mut old = bytes.clone();
            old[..8].copy_from_slice(magic);
            std::fs::write(&path, &old).unwrap();
            assert!(VectorFile::open(&path, 4, "m").unwrap_err().contains("version"));
        }
        std::fs::write(&path, &bytes[..len - 3]).unwrap();
        assert!(VectorFile::open(&path, 4, "m").unwrap_err().contains("bytes"));
        assert!(VectorFile::open(&dir.path().join("none"), 4, "m").is_err());
    }
}
