//! The dense arm's data: every chunk vector in one contiguous in-memory matrix, searched exactly.
//!
//! A query is one dot product per row (vectors are unit length, so this is the cosine), which at
//! vault scale is faster and simpler than an approximate index and never misses a neighbour:
//! 100k chunks of 384 floats take a few milliseconds on two cores. Rows are updated in place
//! (a removed chunk frees its slot for the next one), so an edit does not copy the matrix.
//!
//! This module knows nothing of SQLite or the embedder; it is handed vectors and filters.

use std::collections::HashMap;

/// Where a row's chunk lives, for filtering before the top-k is taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowKey {
    /// The chunk id.
    pub chunk_id: i64,
    /// Index of the vault name in the caller's vault list.
    pub vault: u32,
    /// Vault-relative path of the file.
    pub path: std::sync::Arc<str>,
}

/// The matrix and its row keys.
#[derive(Debug)]
pub struct Dense {
    dims: usize,
    keys: Vec<Option<RowKey>>,
    matrix: Vec<f32>,
    free: Vec<usize>,
    by_id: HashMap<i64, usize>,
}

impl Dense {
    /// An empty matrix for vectors of `dims` floats.
    pub fn new(dims: usize) -> Dense {
        Dense {
            dims,
            keys: Vec::new(),
            matrix: Vec::new(),
            free: Vec::new(),
            by_id: HashMap::new(),
        }
    }

    /// The vector length.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// How many chunks have a vector.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True when no chunk has a vector.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// True when this chunk has a vector here.
    pub fn contains(&self, chunk_id: i64) -> bool {
        self.by_id.contains_key(&chunk_id)
    }

    /// Adds (or replaces) a chunk's vector. A vector of the wrong length is ignored.
    pub fn insert(&mut self, key: RowKey, vector: &[f32]) {
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
    pub fn remove(&mut self, chunk_id: i64) {
        if let Some(row) = self.by_id.remove(&chunk_id) {
            self.keys[row] = None;
            self.free.push(row);
        }
    }

    /// The `limit` best rows by dot product with `query` among rows `keep` accepts, best first.
    /// Ties break by chunk id so results are deterministic.
    pub fn top(
        &self,
        query: &[f32],
        limit: usize,
        keep: &(dyn Fn(&RowKey) -> bool + Sync),
    ) -> Vec<(i64, f32)> {
        if query.len() != self.dims || limit == 0 {
            return Vec::new();
        }
        let rows = self.keys.len();
        // Two threads pay off only once the scan costs more than spawning them.
        let threads = if rows >= 20_000 {
            std::thread::available_parallelism().map_or(1, |n| n.get()).min(4)
        } else {
            1
        };
        let per = rows.div_ceil(threads.max(1));
        let mut scored: Vec<(i64, f32)> = if threads <= 1 {
            self.scan(query, 0, rows, keep)
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let start = t * per;
                        let end = ((t + 1) * per).min(rows);
                        scope.spawn(move || self.scan(query, start, end, keep))
                    })
                    .collect();
                handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
            })
        };
        let by_score = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit - 1, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        scored
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
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
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
}
