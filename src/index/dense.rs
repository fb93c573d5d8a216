//! The dense arm's data: every chunk vector, searched exactly.
//!
//! A query is one dot product per row (vectors are unit length, so this is the cosine), which at
//! vault scale is faster and simpler than an approximate index and never misses a neighbour.
//! Rows live in two places: the **base**, the memory-mapped vectors file (`vectors.rs`) as it
//! was last written, scanned as int8; and the **overlay**, an in-memory f32 matrix of the rows
//! added since, updated in place (a removed chunk frees its slot for the next one), so an edit
//! copies nothing. A removed or replaced base row is only forgotten (its key cleared).
//!
//! The scan is a cascade of filters, not the answer. The 4-bit pass ([`Scan::Exact`], the
//! default) reads every row's 4-bit code and bounds its exact score from both sides
//! (`nibbles.rs`); a row whose most is below the k-th best least of the rows seen is out, and
//! the rest (a few hundred for a short query at a million rows) are bounded again from their
//! int8 codes and rescored from the file's f32 section, best bound first, until no row left
//! can enter the top. [`Scan::Int8`], the exact scan before the 4-bit pass, reads every row's
//! int8 code instead, keeps the best candidates by their bound and widens to every row whose
//! bound leaves it a chance. Either way the top-k is the f32 scan's, row for row and score for
//! score.
//!
//! [`Scan::Sign`] is the approximate option beside it: the rows' 1-bit sign codes (an eighth
//! of the int8 codes' bytes) pick the candidates, and only those are scored in int8 and then
//! rescored in f32 under the same error bound, so the answer is the exact top-k of the
//! candidates, and a row the sign estimate ranked below all of them is never seen. It is not
//! the default: `mdvault bench` prints its recall against the exact scan.
//!
//! This module knows nothing of SQLite or the embedder; it is handed vectors and filters.

use std::borrow::Cow;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::nibbles::{self, NibbleQuery};
use super::signs::{self, BLOCK_ROWS, Rotation, SignQuery};
use super::vectors::{self, QuantQuery, VectorFile};

/// How a search scans the vectors file's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// Every row's 4-bit code under its bounds, then the int8 and f32 scores of the rows they
    /// leave a chance: the f32 scan's top-k exactly, reading about half the int8 pass's bytes.
    Exact,
    /// Every row's int8 code, under the error bound: the same top-k. The exact scan before the
    /// 4-bit pass, which `mdvault bench` times beside it.
    Int8,
    /// Every row's sign code, keeping the best `candidates` by the sign estimate; their exact
    /// top-k. Approximate (see the module header).
    Sign {
        /// Rows the sign estimate passes on to the int8 and f32 scores.
        candidates: usize,
    },
}

/// Candidates the int8 scan keeps per thread, at least: enough that on real embeddings the
/// error bound almost never calls for a second scan (measured on the benchmark's queries),
/// few enough that rescoring them from the f32 section costs well under a millisecond.
const CANDIDATES_MIN: usize = 1024;
/// Candidates per wanted result, when more results are asked for.
const CANDIDATES_PER_RESULT: usize = 16;
/// Rows scored per int8 kernel call: 96 KiB of codes at 384 dimensions, so a block's dots
/// stay in a small buffer and the kernel runs without a call per row.
const SCAN_BLOCK: usize = 256;

/// Where a row's chunk lives, for filtering before the top-k is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowKey {
    /// The chunk id.
    pub(crate) chunk_id: i64,
    /// Index of the vault name in the caller's vault list.
    pub(crate) vault: u32,
    /// Vault-relative path of the file.
    pub(crate) path: std::sync::Arc<str>,
}

/// The base file with its row keys, and the overlay matrix with its row keys.
#[derive(Debug)]
pub(crate) struct Dense {
    dims: usize,
    keys: Vec<Option<RowKey>>,
    matrix: Vec<f32>,
    free: Vec<usize>,
    by_id: FxHashMap<i64, usize>,
    base: Option<Arc<VectorFile>>,
    base_keys: Vec<Option<RowKey>>,
    base_by_id: FxHashMap<i64, usize>,
}

/// An int8 candidate: the most its exact score can be (see [`QuantQuery::upper`]) and its base
/// row, ordered by that bound (then row).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate(f32, u32);

/// What one thread's int8 pass over its rows found: its best candidates, and whether it left
/// any row out.
struct Scanned {
    kept: Vec<Candidate>,
    dropped: bool,
}

/// A row the 4-bit pass could not rule out, with the least and the most its exact score can
/// be.
struct Bounded {
    upper: f32,
    lower: f32,
    row: u32,
}

impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

impl Dense {
    /// An empty matrix for vectors of `dims` floats.
    pub(crate) fn new(dims: usize) -> Dense {
        Dense {
            dims,
            keys: Vec::new(),
            matrix: Vec::new(),
            free: Vec::new(),
            by_id: FxHashMap::default(),
            base: None,
            base_keys: Vec::new(),
            base_by_id: FxHashMap::default(),
        }
    }

    /// A matrix over a vectors file: `keys[r]` is base row `r`'s key, `None` for a row not to
    /// use (its chunk is gone or its text changed).
    pub(crate) fn with_base(
        dims: usize,
        file: Arc<VectorFile>,
        keys: Vec<Option<RowKey>>,
    ) -> Dense {
        let mut d = Dense::new(dims);
        d.base_by_id = FxHashMap::with_capacity_and_hasher(keys.len(), Default::default());
        d.base_by_id.extend(
            keys.iter().enumerate().filter_map(|(r, k)| k.as_ref().map(|k| (k.chunk_id, r))),
        );
        d.base_keys = keys;
        d.base = Some(file);
        d
    }

    /// Rows held in memory (added since the vectors file was written).
    pub(crate) fn overlay_len(&self) -> usize {
        self.by_id.len()
    }

    /// Rows of the vectors file, used or not.
    pub(crate) fn base_rows(&self) -> usize {
        self.base.as_ref().map_or(0, |b| b.rows())
    }

    /// Bytes of the vectors file a scan reads in full, exact and with sign codes, if there
    /// is a file.
    pub(crate) fn scanned_bytes(&self) -> Option<vectors::ScannedBytes> {
        self.base.as_ref().map(|b| b.scanned_bytes())
    }

    /// How many chunks have a vector.
    pub(crate) fn len(&self) -> usize {
        self.by_id.len() + self.base_by_id.len()
    }

    /// True when this chunk has a vector here.
    pub(crate) fn contains(&self, chunk_id: i64) -> bool {
        self.by_id.contains_key(&chunk_id) || self.base_by_id.contains_key(&chunk_id)
    }

    /// The exact dot product of `query` with one chunk's vector, if it has one here.
    pub(crate) fn score(&self, query: &[f32], chunk_id: i64) -> Option<f32> {
        if query.len() != self.dims {
            return None;
        }
        Some(dot(query, &self.vector(chunk_id)?))
    }

    /// One chunk's vector (unit length), if it has one here: borrowed from the overlay, or
    /// read from the vectors file.
    pub(crate) fn vector(&self, chunk_id: i64) -> Option<Cow<'_, [f32]>> {
        if let Some(row) = self.by_id.get(&chunk_id) {
            return Some(Cow::Borrowed(&self.matrix[row * self.dims..(row + 1) * self.dims]));
        }
        let row = *self.base_by_id.get(&chunk_id)?;
        self.base.as_ref()?.floats(row).map(Cow::Owned)
    }

    /// Adds (or replaces) a chunk's vector. A vector of the wrong length is ignored.
    pub(crate) fn insert(&mut self, key: RowKey, vector: &[f32]) {
        if vector.len() != self.dims {
            return;
        }
        self.remove(key.chunk_id);
        let row = match self.free.pop() {
            Some(row) => row,
            None => {
                self.keys.push(None);
                self.matrix.resize(self.matrix.len() + self.dims, 0.0);
                self.keys.len() - 1
            }
        };
        self.matrix[row * self.dims..(row + 1) * self.dims].copy_from_slice(vector);
        self.by_id.insert(key.chunk_id, row);
        self.keys[row] = Some(key);
    }

    /// Removes a chunk's vector, if present.
    pub(crate) fn remove(&mut self, chunk_id: i64) {
        if let Some(row) = self.by_id.remove(&chunk_id) {
            self.keys[row] = None;
            self.free.push(row);
        }
        if let Some(row) = self.base_by_id.remove(&chunk_id) {
            self.base_keys[row] = None;
        }
    }

    /// The `limit` best rows by dot product with `query` among rows `keep` accepts, best first.
    /// Ties break by chunk id so results are deterministic.
    pub(crate) fn top(
        &self,
        query: &[f32],
        limit: usize,
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
    ) -> Vec<(i64, f32)> {
        self.top_with(query, limit, keep, Scan::Exact)
    }

    /// [`Dense::top`], with the vectors file's rows scanned as `scan` says.
    pub(crate) fn top_with(
        &self,
        query: &[f32],
        limit: usize,
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
        scan: Scan,
    ) -> Vec<(i64, f32)> {
        if query.len() != self.dims || limit == 0 {
            return Vec::new();
        }
        let mut scored = self.scan_overlay(query, keep);
        if let Some(base) = &self.base {
            let found = match scan {
                Scan::Exact => self.top_nibbles(base, query, limit, keep, &scored),
                Scan::Int8 => self.top_base(base, query, limit, keep, &scored),
                Scan::Sign { candidates } => {
                    let chosen = self.sign_candidates(base, query, candidates.max(limit), keep);
                    let q = QuantQuery::new(query);
                    let (scales, errors) = (base.scales(), base.errors());
                    let upper = chosen.iter().map(|r| {
                        let i = *r as usize;
                        let d = vectors::dot_i8(&q.codes, base.codes(i));
                        Candidate(q.upper(d, scales[i], errors[i]), *r)
                    });
                    self.rescore(base, query, limit, upper.collect(), &scored)
                }
            };
            scored.extend(found);
        }
        let by_score = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit - 1, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        scored
    }

    /// How many threads a scan of `rows` rows uses: two pay off only once the scan costs more
    /// than spawning them.
    fn threads(rows: usize, min_rows: usize) -> usize {
        if rows >= min_rows {
            std::thread::available_parallelism().map_or(1, |n| n.get()).min(4)
        } else {
            1
        }
    }

    /// Runs `f` over `0..rows` split in `threads` ranges, results concatenated.
    fn split<T: Send>(
        rows: usize,
        threads: usize,
        f: &(dyn Fn(usize, usize) -> Vec<T> + Sync),
    ) -> Vec<T> {
        if threads <= 1 {
            return f(0, rows);
        }
        let per = rows.div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let start = (t * per).min(rows);
                    let end = ((t + 1) * per).min(rows);
                    scope.spawn(move || f(start, end))
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
        })
    }

    /// Every kept overlay row, scored exactly.
    fn scan_overlay(
        &self,
        query: &[f32],
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
    ) -> Vec<(i64, f32)> {
        let rows = self.keys.len();
        Dense::split(rows, Dense::threads(rows, 20_000), &|s, e| self.scan(query, s, e, keep))
    }

    /// The base rows that can be in the top `limit` (with `overlay`'s exact scores beside
    /// them), scored exactly: the int8 scan's best candidates rescored from the f32 section,
    /// widened when the error bound says a row left out could still beat the `limit`-th.
    fn top_base(
        &self,
        base: &VectorFile,
        query: &[f32],
        limit: usize,
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
        overlay: &[(i64, f32)],
    ) -> Vec<(i64, f32)> {
        let rows = base.rows();
        let q = QuantQuery::new(query);
        let wanted = CANDIDATES_MIN.max(limit * CANDIDATES_PER_RESULT);
        let threads = Dense::threads(rows, 50_000);
        let (scales, errors) = (base.scales(), base.errors());
        // Each thread keeps its best `wanted` rows by their bound (the most their exact score
        // can be) in a min-heap, scoring a block of rows per kernel call, and writes every
        // row's bound into its part of `upper` (4 bytes a row): should the bound call for a
        // wider look, that is a filter over these, not a second int8 pass over the codes. One
        // buffer made here, not one per thread: the threads live for one search, and memory a
        // short-lived thread allocates can stay mapped after it ends (that grew the peak RSS at
        // 1M rows by about 170 MiB). Reusing it per searching thread was measured and not
        // kept: the scan's p50 at 1M did not move beyond the machine's spread.
        // A row is looked up (deleted, filtered out) only once its score would enter the heap.
        let mut upper = vec![0f32; rows];
        let pass = |start: usize, part: &mut [f32]| -> Scanned {
            let end = start + part.len();
            let mut heap: BinaryHeap<std::cmp::Reverse<Candidate>> =
                BinaryHeap::with_capacity(wanted + 1);
            let mut least = f32::NEG_INFINITY;
            let mut dropped = false;
            let mut dots = [0i32; SCAN_BLOCK];
            for first in (start..end).step_by(SCAN_BLOCK) {
                let n = SCAN_BLOCK.min(end - first);
                base.dots_i8(&q.codes, first, &mut dots[..n]);
                let block = dots[..n].iter().zip(&scales[first..first + n]);
                let block = block.zip(&errors[first..first + n]);
                for (r, ((d, scale), e)) in (first..).zip(block) {
                    let a = q.upper(*d, *scale, *e);
                    part[r - start] = a;
                    let full = heap.len() == wanted;
                    if full && a <= least {
                        dropped = true;
                        continue;
                    }
                    if !self.base_keys[r].as_ref().is_some_and(keep) {
                        continue;
                    }
                    if full {
                        heap.pop();
                        dropped = true;
                    }
                    heap.push(std::cmp::Reverse(Candidate(a, r as u32)));
                    if heap.len() == wanted {
                        least = heap.peek().map_or(f32::NEG_INFINITY, |m| m.0.0);
                    }
                }
            }
            Scanned { kept: heap.into_iter().map(|c| c.0).collect(), dropped }
        };
        let heaps: Vec<Scanned> = if threads <= 1 {
            vec![pass(0, &mut upper)]
        } else {
            let per = rows.div_ceil(threads).max(1);
            let pass = &pass;
            std::thread::scope(|scope| {
                let handles: Vec<_> = upper
                    .chunks_mut(per)
                    .enumerate()
                    .map(|(t, part)| scope.spawn(move || pass(t * per, part)))
                    .collect();
                let joined = handles.into_iter().map(|h| h.join());
                joined.map(|r| r.unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
            })
        };
        // A row left out by a thread scored at most that thread's smallest kept score.
        let mut floor = f32::NEG_INFINITY;
        let mut kept: Vec<Candidate> = Vec::new();
        for scanned in &heaps {
            if scanned.dropped {
                let least = scanned.kept.iter().map(|c| c.0).fold(f32::INFINITY, f32::min);
                floor = floor.max(least);
            }
            kept.extend(&scanned.kept);
        }
        let chosen: Vec<u32> = kept.iter().map(|c| c.1).collect();
        // Only the kept rows that can still reach the top are read in f32: the rest of the
        // f32 section stays out of memory (rescoring every kept row made most of it resident
        // after a few hundred searches).
        let mut out = self.rescore(base, query, limit, kept, overlay);
        let rescore = |r: u32| {
            let key = self.base_keys[r as usize].as_ref().map_or(0, |k| k.chunk_id);
            Some((key, dot(query, &base.floats(r as usize)?)))
        };
        if floor == f32::NEG_INFINITY {
            return out; // every kept row is a candidate
        }
        // The `limit`-th best exact score so far, overlay included.
        let mut scores: Vec<f32> = out.iter().chain(overlay).map(|s| s.1).collect();
        let threshold = if scores.len() >= limit {
            scores.select_nth_unstable_by(limit - 1, |a, b| b.total_cmp(a));
            scores[limit - 1]
        } else {
            f32::NEG_INFINITY
        };
        if floor < threshold {
            return out; // nothing left out can reach the top
        }
        // Rare: widen to every row whose bound leaves it a chance.
        let taken: HashSet<u32> = chosen.into_iter().collect();
        let more: Vec<u32> = (0u32..)
            .zip(&upper)
            .filter(|(_, a)| **a >= threshold)
            .map(|(r, _)| r)
            .filter(|r| !taken.contains(r))
            .filter(|r| self.base_keys[*r as usize].as_ref().is_some_and(keep))
            .collect();
        out.extend(more.into_iter().filter_map(rescore));
        out
    }

    /// The base rows that can be in the top `limit` (with `overlay`'s exact scores beside
    /// them), scored exactly: every row's 4-bit bounds decide which rows could still enter the
    /// top, and only those are bounded again in int8 and rescored in f32 ([`Dense::rescore`]).
    fn top_nibbles(
        &self,
        base: &VectorFile,
        query: &[f32],
        limit: usize,
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
        overlay: &[(i64, f32)],
    ) -> Vec<(i64, f32)> {
        let rows = base.rows();
        let q8 = QuantQuery::new(query);
        let q = NibbleQuery::new(query, &q8);
        let terms = base.nibble_terms();
        // The overlay's exact scores are lower bounds like any other: they start every
        // thread's `limit` best.
        let seed: Vec<f32> = overlay.iter().map(|s| s.1).collect();
        let (scales, errors) = (base.scales(), base.errors());
        // Each thread keeps the `limit` best lower bounds of the rows `keep` accepts in a
        // min-heap: its smallest, `floor`, only rises, and a row whose upper bound is below
        // it is beaten by `limit` rows already and is out. A row is looked up (deleted,
        // filtered out) only once its upper bound reaches the floor. A row entering the heap
        // takes the least of its int8 bounds instead (several times tighter; only about
        // `limit · ln(rows)` rows enter): with the 4-bit least alone the floor sat that much
        // lower, and on the benchmark's index thousands of rows a query passed it.
        let pass = |start: usize, end: usize| -> Vec<Bounded> {
            let mut least: BinaryHeap<std::cmp::Reverse<Candidate>> =
                seed.iter().map(|s| std::cmp::Reverse(Candidate(*s, u32::MAX))).collect();
            while least.len() > limit {
                least.pop();
            }
            let floor_of = |h: &BinaryHeap<std::cmp::Reverse<Candidate>>| {
                if h.len() < limit {
                    f32::NEG_INFINITY
                } else {
                    h.peek().map_or(f32::NEG_INFINITY, |m| m.0.0)
                }
            };
            let mut floor = floor_of(&least);
            let mut out = Vec::new();
            let mut dots = [0i32; SCAN_BLOCK];
            let (mut upper, mut lower) = ([0f32; SCAN_BLOCK], [0f32; SCAN_BLOCK]);
            for first in (start..end).step_by(SCAN_BLOCK) {
                let n = SCAN_BLOCK.min(end - first);
                nibbles::dots(&q, base.nibbles(first, n), &mut dots[..n]);
                let (u, l) = (&mut upper[..n], &mut lower[..n]);
                q.bounds(&dots[..n], &terms[first..first + n], u, l);
                for (r, (&upper, &lower)) in (first..).zip(upper[..n].iter().zip(&lower[..n])) {
                    if upper < floor {
                        continue;
                    }
                    let mut lower = lower;
                    if lower > floor {
                        // Only a row that would raise the floor is looked up here: a deleted
                        // or filtered-out row must not. The rest are looked up below, once the
                        // final floor has left far fewer of them (a lookup per passing row
                        // was a third of this loop's time at 1M rows).
                        if !self.base_keys[r].as_ref().is_some_and(keep) {
                            continue;
                        }
                        let d = vectors::dot_i8(&q8.codes, base.codes(r));
                        lower = lower.max(q8.lower(d, scales[r], errors[r]));
                        least.push(std::cmp::Reverse(Candidate(lower, r as u32)));
                        if least.len() > limit {
                            least.pop();
                        }
                        floor = floor_of(&least);
                    }
                    out.push(Bounded { upper, lower, row: r as u32 });
                }
            }
            out
        };
        let found = Dense::split(rows, Dense::threads(rows, 50_000), &pass);
        // The `limit`-th best lower bound over every thread's rows and the overlay: a row whose
        // upper bound is below it cannot be in the top. Rows not looked up yet count too, but
        // cannot raise it: each came while its thread held `limit` looked-up rows (or overlay
        // scores) whose lower bounds are at least its own.
        let mut lowers: Vec<f32> = found.iter().map(|b| b.lower).chain(seed).collect();
        let floor = if lowers.len() >= limit {
            lowers.select_nth_unstable_by(limit - 1, |a, b| b.total_cmp(a));
            lowers[limit - 1]
        } else {
            f32::NEG_INFINITY
        };
        let kept = |b: &Bounded| self.base_keys[b.row as usize].as_ref().is_some_and(keep);
        let upper = found.into_iter().filter(|b| b.upper >= floor && kept(b)).map(|b| {
            let i = b.row as usize;
            let d = vectors::dot_i8(&q8.codes, base.codes(i));
            Candidate(q8.upper(d, scales[i], errors[i]).min(b.upper), b.row)
        });
        self.rescore(base, query, limit, upper.collect(), overlay)
    }

    /// The `wanted` base rows `keep` accepts with the best sign estimates (in no order).
    fn sign_candidates(
        &self,
        base: &VectorFile,
        query: &[f32],
        wanted: usize,
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
    ) -> Vec<u32> {
        let rows = base.rows();
        let q = SignQuery::new(&Rotation::new(self.dims), query);
        let factors = base.sign_factors();
        const PER_CALL: usize = SCAN_BLOCK / BLOCK_ROWS;
        // Each thread keeps its best `wanted` in a min-heap, as the int8 pass does; a row is
        // looked up (deleted, filtered out) only once its estimate would enter the heap.
        let pass = |first_block: usize, end_block: usize| -> Vec<Candidate> {
            let mut heap: BinaryHeap<std::cmp::Reverse<Candidate>> =
                BinaryHeap::with_capacity(wanted + 1);
            let mut least = f32::NEG_INFINITY;
            let (mut ones, mut weighted) = ([0u32; SCAN_BLOCK], [0u32; SCAN_BLOCK]);
            for b in (first_block..end_block).step_by(PER_CALL) {
                let count = PER_CALL.min(end_block - b);
                let first = b * BLOCK_ROWS;
                let n = (count * BLOCK_ROWS).min(rows - first);
                signs::scores(&q, base.sign_blocks(b, count), &mut ones[..n], &mut weighted[..n]);
                for (i, r) in (first..first + n).enumerate() {
                    let e = q.estimate(ones[i], weighted[i], factors[r]);
                    let full = heap.len() == wanted;
                    if (full && e <= least) || !self.base_keys[r].as_ref().is_some_and(keep) {
                        continue;
                    }
                    if full {
                        heap.pop();
                    }
                    heap.push(std::cmp::Reverse(Candidate(e, r as u32)));
                    if heap.len() == wanted {
                        least = heap.peek().map_or(f32::NEG_INFINITY, |m| m.0.0);
                    }
                }
            }
            heap.into_iter().map(|c| c.0).collect()
        };
        let blocks = rows.div_ceil(BLOCK_ROWS);
        let mut kept = Dense::split(blocks, Dense::threads(rows, 200_000), &pass);
        if kept.len() > wanted {
            kept.select_nth_unstable_by(wanted - 1, |a, b| b.cmp(a));
            kept.truncate(wanted);
        }
        kept.into_iter().map(|c| c.1).collect()
    }

    /// The base rows of `upper` (each with the most its exact score can be) that can be in the
    /// top `limit` (with `overlay`'s exact scores beside them), scored exactly: in order of
    /// their bounds, rescored in f32 until no row left can beat the `limit`-th best exact score.
    fn rescore(
        &self,
        base: &VectorFile,
        query: &[f32],
        limit: usize,
        mut upper: Vec<Candidate>,
        overlay: &[(i64, f32)],
    ) -> Vec<(i64, f32)> {
        upper.sort_unstable_by(|a, b| b.cmp(a));
        // The best `limit` exact scores so far, overlay included, smallest on top.
        let mut best: BinaryHeap<std::cmp::Reverse<Candidate>> =
            overlay.iter().map(|s| std::cmp::Reverse(Candidate(s.1, 0))).collect();
        while best.len() > limit {
            best.pop();
        }
        let mut out = Vec::new();
        for Candidate(u, r) in upper {
            if best.len() == limit && best.peek().is_some_and(|m| u < m.0.0) {
                break; // every row after this one scores lower still
            }
            let key = self.base_keys[r as usize].as_ref().map_or(0, |k| k.chunk_id);
            let Some(row) = base.floats(r as usize) else { continue };
            let exact = dot(query, &row);
            out.push((key, exact));
            best.push(std::cmp::Reverse(Candidate(exact, r)));
            if best.len() > limit {
                best.pop();
            }
        }
        out
    }

    fn scan(
        &self,
        query: &[f32],
        start: usize,
        end: usize,
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
    ) -> Vec<(i64, f32)> {
        let mut out = Vec::new();
        for row in start..end {
            let Some(key) = &self.keys[row] else { continue };
            if !keep(key) {
                continue;
            }
            let v = &self.matrix[row * self.dims..(row + 1) * self.dims];
            out.push((key.chunk_id, dot(query, v)));
        }
        out
    }
}

/// The dot product of two equally long vectors. On x86-64 machines with AVX2 and FMA (checked
/// once at run time, so the binary stays portable) it uses 256-bit fused multiply-adds, which
/// is what makes an exact scan of 100k rows a few milliseconds.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    (dot_impl())(a, b)
}

type DotFn = fn(&[f32], &[f32]) -> f32;

fn dot_impl() -> DotFn {
    static CHOSEN: std::sync::OnceLock<DotFn> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return dot_avx2_checked;
        }
        dot_portable
    })
}

/// Fixed-size blocks (no bounds checks in the loop) and eight independent accumulators, so the
/// compiler vectorises it with the baseline instruction set.
fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let (blocks_a, rest_a) = a.as_chunks::<8>();
    let (blocks_b, rest_b) = b.as_chunks::<8>();
    let mut acc = [0.0f32; 8];
    for (x, y) in blocks_a.iter().zip(blocks_b) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in rest_a.iter().zip(rest_b) {
        sum += x * y;
    }
    sum
}

#[cfg(target_arch = "x86_64")]
fn dot_avx2_checked(a: &[f32], b: &[f32]) -> f32 {
    // SAFETY: only chosen by `dot_impl` after detecting AVX2 and FMA on this CPU.
    unsafe { dot_avx2(a, b) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc = [_mm256_setzero_ps(); 4];
    let mut i = 0;
    // SAFETY: every load reads 8 floats at an offset below `n - 8` (checked by the loop bounds)
    // from slices of at least `n` floats; unaligned loads have no alignment requirement.
    unsafe {
        while i + 32 <= n {
            for (k, slot) in acc.iter_mut().enumerate() {
                let x = _mm256_loadu_ps(pa.add(i + 8 * k));
                let y = _mm256_loadu_ps(pb.add(i + 8 * k));
                *slot = _mm256_fmadd_ps(x, y, *slot);
            }
            i += 32;
        }
        while i + 8 <= n {
            acc[0] =
                _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), acc[0]);
            i += 8;
        }
        let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let mut lanes = [0.0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), sum);
        let mut total: f32 = lanes.iter().sum();
        while i < n {
            total += *pa.add(i) * *pb.add(i);
            i += 1;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn key(id: i64, path: &str) -> RowKey {
        RowKey { chunk_id: id, vault: 0, path: path.into() }
    }

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn finds_the_nearest_rows_exactly_and_reuses_freed_slots() {
        let mut d = Dense::new(3);
        d.insert(key(1, "a.md"), &unit(&[1.0, 0.0, 0.0]));
        d.insert(key(2, "b.md"), &unit(&[0.9, 0.1, 0.0]));
        d.insert(key(3, "c.md"), &unit(&[0.0, 1.0, 0.0]));
        let q = unit(&[1.0, 0.05, 0.0]);
        let top = d.top(&q, 2, &|_| true);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), [1, 2]);
        let only_c = d.top(&q, 2, &|k| &*k.path == "c.md");
        assert_eq!(only_c.iter().map(|t| t.0).collect::<Vec<_>>(), [3]);
        d.remove(1);
        assert_eq!(d.len(), 2);
        d.insert(key(4, "d.md"), &unit(&[1.0, 0.0, 0.0]));
        assert_eq!(d.keys.len(), 3, "the freed slot is reused");
        assert_eq!(d.top(&q, 1, &|_| true)[0].0, 4);
        d.insert(key(5, "e.md"), &[1.0]);
        assert!(!d.contains(5), "wrong length is ignored");
    }

    #[test]
    fn threaded_and_single_scans_agree() {
        let mut d = Dense::new(8);
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / u32::MAX as f32) - 0.25
        };
        for id in 0..25_000 {
            let v: Vec<f32> = (0..8).map(|_| next()).collect();
            d.insert(key(id, "x.md"), &unit(&v));
        }
        let q = unit(&[0.3, -0.2, 0.5, 0.1, 0.0, 0.9, -0.4, 0.2]);
        let threaded = d.top(&q, 50, &|_| true);
        let mut single = d.scan(&q, 0, d.keys.len(), &|_| true);
        single.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        single.truncate(50);
        assert_eq!(threaded, single);
    }

    #[test]
    fn every_dot_implementation_matches_the_plain_sum() {
        for len in [0, 1, 7, 8, 19, 33, 384, 385] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-3, "len {len}");
            assert!((dot_portable(&a, &b) - plain).abs() < 1e-3, "len {len}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                assert!((dot_avx2_checked(&a, &b) - plain).abs() < 1e-3, "len {len}");
            }
        }
    }

    /// Random unit vectors near a few centres: scores crowd together the way real
    /// embeddings' do, which is where an approximate scan would slip.
    #[test]
    fn near_ties_finer_than_the_int8_codes_widen_the_scan_and_stay_exact() {
        // Every row is one direction plus noise far below what an int8 code resolves, so the
        // int8 pass cannot tell the best rows from the rest and the error bound must send the
        // search to the rows it left out (on two threads: 60,000 rows).
        let (n, dims) = (60_000, 48);
        let mut seed = 11u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let centre: Vec<f32> = (0..dims).map(|_| next()).collect();
        let rows: Vec<Vec<f32>> = (0..n)
            .map(|_| unit(&centre.iter().map(|x| x + 0.002 * next()).collect::<Vec<_>>()))
            .collect();
        let query = unit(&centre.iter().map(|x| x + 0.01 * next()).collect::<Vec<_>>());
        let dir = tempfile::tempdir().unwrap();
        let (mut quantised, mut exact) = both_stores(dir.path(), &rows, 2);
        // The exact best row is removed, so a widened look must skip deleted rows too.
        let best = exact.top(&query, 1, &|_| true)[0].0;
        quantised.remove(best);
        exact.remove(best);
        let only_b = |k: &RowKey| &*k.path == "b.md";
        for scan in [Scan::Exact, Scan::Int8] {
            for limit in [1, 10, 100] {
                assert_eq!(
                    quantised.top_with(&query, limit, &|_| true, scan),
                    exact.top(&query, limit, &|_| true)
                );
            }
            assert_eq!(
                quantised.top_with(&query, 20, &only_b, scan),
                exact.top(&query, 20, &only_b)
            );
        }
    }

    #[test]
    fn the_four_bit_pass_at_the_models_width_gives_the_f32_top_k_for_dense_and_sparse_queries() {
        // 384 dimensions take the 4-bit kernel's AVX-512 path where the CPU has it (48 above
        // take the portable one); a sparse query is what a hashing embedder gives a short
        // query, where the pass bounds rows by the largest coordinate error.
        let (n, dims) = (20_000, 384);
        let mut seed = 23u64;
        let rows = clustered(n, dims, &mut seed);
        let mut queries = clustered(6, dims, &mut seed);
        let mut sparse = vec![0.0f32; dims];
        for (j, i) in [5usize, 100, 191, 192, 300, 383].into_iter().enumerate() {
            sparse[i] = if j % 2 == 0 { 0.5 } else { -0.4 };
        }
        queries.push(unit(&sparse));
        let dir = tempfile::tempdir().unwrap();
        let (mut quantised, mut exact) = both_stores(dir.path(), &rows, 4);
        // An overlay row (an edit since the file was written) that belongs in the top.
        let near = unit(&queries[1].iter().map(|x| x + 0.01).collect::<Vec<_>>());
        quantised.insert(key(3, "a.md"), &near);
        exact.insert(key(3, "a.md"), &near);
        let only_a = |k: &RowKey| &*k.path == "a.md";
        for q in &queries {
            for limit in [1, 10, 50] {
                let want = exact.top(q, limit, &|_| true);
                assert_eq!(quantised.top_with(q, limit, &|_| true, Scan::Exact), want);
                assert_eq!(quantised.top_with(q, limit, &|_| true, Scan::Int8), want);
            }
            assert_eq!(quantised.top(q, 10, &only_a), exact.top(q, 10, &only_a));
        }
    }

    #[test]
    fn rows_a_filter_leaves_out_never_raise_the_bar_for_the_rows_it_keeps() {
        // The rows nearest the query are all filtered out: were any of them let into a
        // thread's best-so-far, the bar it sets would leave out every row the filter keeps.
        let (n, dims) = (60_000, 384);
        let mut seed = 41u64;
        let mut rows = clustered(n, dims, &mut seed);
        let query = clustered(1, dims, &mut seed).remove(0);
        for (i, row) in rows.iter_mut().enumerate().filter(|(i, _)| i % 3 != 0).take(300) {
            *row = unit(&query.iter().map(|x| x + 0.001 * (i % 7) as f32).collect::<Vec<_>>());
        }
        let dir = tempfile::tempdir().unwrap();
        let (quantised, exact) = both_stores(dir.path(), &rows, 3);
        let only_a = |k: &RowKey| &*k.path == "a.md";
        for scan in [Scan::Exact, Scan::Int8] {
            for limit in [1, 10, 50] {
                let want = exact.top(&query, limit, &only_a);
                assert_eq!(want.len(), limit);
                assert_eq!(quantised.top_with(&query, limit, &only_a, scan), want);
            }
        }
    }

    #[test]
    fn one_chunks_score_is_its_exact_dot_product_from_either_store() {
        let dir = tempfile::tempdir().unwrap();
        let mut seed = 11u64;
        let rows = clustered(40, 16, &mut seed);
        let (quantised, exact) = both_stores(dir.path(), &rows, 2);
        let q = &rows[3];
        for store in [&quantised, &exact] {
            assert_eq!(store.score(q, 7), Some(dot(q, &rows[7])));
            assert_eq!(store.score(q, 99), None, "no vector, no score");
            assert_eq!(store.score(&q[..8], 7), None, "a query of another length");
        }
    }

    /// The same rows twice: written to a vectors file in `dir` and read back as the int8 base,
    /// and inserted one by one for the plain f32 scan. Row `i` is in `a.md` when `every`
    /// divides it, else in `b.md`.
    fn both_stores(dir: &Path, rows: &[Vec<f32>], every: usize) -> (Dense, Dense) {
        let dims = rows[0].len();
        let path = dir.join("vectors.bin");
        let table: Vec<(i64, u64, &[f32])> =
            rows.iter().enumerate().map(|(i, v)| (i as i64, 0, v.as_slice())).collect();
        vectors::write(&path, dims, "m", &table).unwrap();
        let file = Arc::new(VectorFile::open(&path, dims, "m").unwrap());
        let path_of = |i: usize| if i.is_multiple_of(every) { "a.md" } else { "b.md" };
        let keys = (0..rows.len()).map(|i| Some(key(i as i64, path_of(i)))).collect();
        let quantised = Dense::with_base(dims, file, keys);
        let mut exact = Dense::new(dims);
        for (i, v) in rows.iter().enumerate() {
            exact.insert(key(i as i64, path_of(i)), v);
        }
        (quantised, exact)
    }

    fn clustered(n: usize, dims: usize, seed: &mut u64) -> Vec<Vec<f32>> {
        let mut next = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((*seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let centres: Vec<Vec<f32>> = (0..5).map(|_| (0..dims).map(|_| next()).collect()).collect();
        (0..n)
            .map(|i| {
                let c = &centres[i % centres.len()];
                unit(&c.iter().map(|x| x + 0.3 * next()).collect::<Vec<_>>())
            })
            .collect()
    }

    #[test]
    fn a_sign_scan_whose_candidates_cover_every_row_is_the_exact_scan() {
        // With every row a candidate, only the int8-then-f32 rescoring decides, and its
        // bound must make it exact: overlay, deletions and filters included.
        let (n, dims) = (3_000, 48);
        let mut seed = 17u64;
        let rows = clustered(n, dims, &mut seed);
        let queries = clustered(6, dims, &mut seed);
        let dir = tempfile::tempdir().unwrap();
        let (mut quantised, exact) = both_stores(dir.path(), &rows, 3);
        let moved = unit(&queries[1]);
        quantised.insert(key(7, "b.md"), &moved);
        quantised.remove(8);
        let mut exact = exact;
        exact.insert(key(7, "b.md"), &moved);
        exact.remove(8);
        let all = Scan::Sign { candidates: n };
        let only_a = |k: &RowKey| &*k.path == "a.md";
        for q in &queries {
            for limit in [1, 10, 100] {
                assert_eq!(
                    quantised.top_with(q, limit, &|_| true, all),
                    exact.top(q, limit, &|_| true)
                );
            }
            assert_eq!(quantised.top_with(q, 30, &only_a, all), exact.top(q, 30, &only_a));
        }
    }

    #[test]
    fn a_sign_scans_recall_is_far_above_chance_and_grows_with_its_candidates() {
        // Approximate by design, and weak on rows this alike (five tight clusters): 3,000
        // candidates of 20,000 rows must still find most of the exact top ten, where a blind
        // pick of 15 % would find one or two, and more candidates must find more.
        let (n, dims) = (20_000, 384);
        let mut seed = 23u64;
        let rows = clustered(n, dims, &mut seed);
        let queries = clustered(40, dims, &mut seed);
        let dir = tempfile::tempdir().unwrap();
        let (quantised, _) = both_stores(dir.path(), &rows, 2);
        let recall = |candidates: usize| {
            let mut found = 0;
            for q in &queries {
                let exact: HashSet<i64> =
                    quantised.top(q, 10, &|_| true).iter().map(|t| t.0).collect();
                let sign = quantised.top_with(q, 10, &|_| true, Scan::Sign { candidates });
                found += sign.iter().filter(|t| exact.contains(&t.0)).count();
            }
            found as f64 / (10 * queries.len()) as f64
        };
        let (few, more) = (recall(300), recall(3000));
        assert!(more >= 0.75, "recall@10 {more} with 3,000 candidates");
        assert!(more > few, "recall@10 {few} with 300 candidates, {more} with 3,000");
    }

    #[test]
    fn the_quantised_store_gives_the_f32_scans_top_k_exactly() {
        let (n, dims) = (60_000, 48);
        let mut seed = 5u64;
        let rows = clustered(n, dims, &mut seed);
        let queries = clustered(12, dims, &mut seed);
        let dir = tempfile::tempdir().unwrap();
        let (mut quantised, mut exact) = both_stores(dir.path(), &rows, 3);
        let path_of = |i: usize| if i.is_multiple_of(3) { "a.md" } else { "b.md" };
        // An edit after the file was written: one row replaced, one removed.
        let moved = unit(&queries[0]);
        quantised.insert(key(7, path_of(7)), &moved);
        exact.insert(key(7, path_of(7)), &moved);
        quantised.remove(8);
        exact.remove(8);
        assert_eq!(quantised.len(), exact.len());
        let only_a = |k: &RowKey| &*k.path == "a.md";
        for q in &queries {
            for scan in [Scan::Exact, Scan::Int8] {
                for limit in [1, 10, 50, 200] {
                    let want = exact.top(q, limit, &|_| true);
                    assert_eq!(quantised.top_with(q, limit, &|_| true, scan), want);
                }
                assert_eq!(quantised.top_with(q, 50, &only_a, scan), exact.top(q, 50, &only_a));
            }
        }
    }
}
