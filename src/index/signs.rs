//! The 1-bit (sign) codes of the vectors file and the kernel that scores a query against them:
//! a candidate picker that reads `dims / 8` bytes a row (48 at 384 dimensions) where the int8
//! codes take `dims`.
//!
//! A row's code is the signs of the row after a fixed orthogonal rotation ([`Rotation`]:
//! random sign flips and Walsh–Hadamard blocks, twice, with a permutation between), which
//! spreads each row's weight over every coordinate so that one sign says about as much as any
//! other (without it, the hashing embedder's sparse rows would be mostly signs of zeros).
//! Since the rotation keeps dot products, `q · x = Rq · Rx`, and the estimate of it is
//! `<sign(Rx), Rq> / |Rx|₁` (RaBitQ's estimator: unbiased when the query's part orthogonal to
//! the row points anywhere). One bit a coordinate bounds a dot product only loosely (about
//! ±0.6 for unit vectors at 384 dimensions, wider than the spread of the scores), so the sign
//! scan proves nothing: it is an option beside the exact scan, and `mdvault bench` measures its
//! recall against the exact ranking.
//!
//! Codes are stored in blocks of [`BLOCK_ROWS`] rows, word-interleaved (word `w` of the
//! block's row `j` at `w * 8 + j`), so one 512-bit load holds the same word of eight rows and
//! the kernel needs no horizontal sums. The query is quantised to [`QUERY_BITS`] bits a
//! coordinate and split into bit planes, so a row's score is a few AND-and-popcounts a word.
//!
//! This module knows nothing of files or search; `vectors.rs` stores the codes and `dense.rs`
//! scans them.

/// Rows per interleaved block.
pub(crate) const BLOCK_ROWS: usize = 8;
/// Bits a query coordinate keeps: four costs nothing measurable next to a row's one bit.
const QUERY_BITS: usize = 4;
/// The rotation's fixed seed: a file and a query must agree on it, so changing it changes the
/// vectors file's version.
const ROTATION_SEED: u64 = 0x5eed_0f5c_a1ab_1e55;

/// 64-bit words of code per row.
pub(crate) fn words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// Bytes of one block of codes.
pub(crate) fn block_bytes(dims: usize) -> usize {
    words(dims) * BLOCK_ROWS * 8
}

/// A fixed orthogonal transform of `dims`-long vectors. Walsh–Hadamard blocks are the largest
/// power of two up to 128 that divides `dims` (an odd `dims` gets blocks of one, and the
/// rotation is then only sign flips and a permutation).
#[derive(Debug, Clone)]
pub(crate) struct Rotation {
    flips: [Vec<f32>; 2],
    order: Vec<usize>,
    block: usize,
}

impl Rotation {
    /// The rotation every vectors file of `dims` uses.
    pub(crate) fn new(dims: usize) -> Rotation {
        let mut seed = ROTATION_SEED ^ dims as u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut flip = || (0..dims).map(|_| if next() & 1 == 1 { 1.0 } else { -1.0 }).collect();
        let flips = [flip(), flip()];
        let mut order: Vec<usize> = (0..dims).collect();
        for i in (1..dims).rev() {
            order.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let block = 1usize << dims.trailing_zeros().min(7);
        Rotation { flips, order, block }
    }

    /// `v` rotated into `out` (both `dims` long).
    pub(crate) fn apply(&self, v: &[f32], out: &mut [f32]) {
        let mut tmp: Vec<f32> = v.iter().zip(&self.flips[0]).map(|(x, f)| x * f).collect();
        self.hadamard(&mut tmp);
        for ((o, i), f) in out.iter_mut().zip(&self.order).zip(&self.flips[1]) {
            *o = tmp[*i] * f;
        }
        self.hadamard(out);
    }

    /// The normalised Walsh–Hadamard transform of each block, in place (orthogonal).
    fn hadamard(&self, v: &mut [f32]) {
        let norm = 1.0 / (self.block as f32).sqrt();
        for block in v.chunks_exact_mut(self.block) {
            let mut h = 1;
            while h < block.len() {
                for i in (0..block.len()).step_by(2 * h) {
                    for j in i..i + h {
                        let (a, b) = (block[j], block[j + h]);
                        block[j] = a + b;
                        block[j + h] = a - b;
                    }
                }
                h *= 2;
            }
            block.iter_mut().for_each(|x| *x *= norm);
        }
    }
}

/// One row's sign code (`words(dims)` words, bit `i % 64` of word `i / 64` set when rotated
/// coordinate `i` is positive) and its estimate factor `|x|² / |Rx|₁` (`1 / |Rx|₁` for the
/// unit rows the index holds; 0 for a zero row).
pub(crate) fn encode(rotation: &Rotation, v: &[f32], code: &mut [u64]) -> f32 {
    let mut r = vec![0.0f32; v.len()];
    rotation.apply(v, &mut r);
    code.fill(0);
    for (i, x) in r.iter().enumerate() {
        if *x > 0.0 {
            code[i / 64] |= 1 << (i % 64);
        }
    }
    let l1: f32 = r.iter().map(|x| x.abs()).sum();
    let squared: f32 = v.iter().map(|x| x * x).sum();
    if l1 > 0.0 { squared / l1 } else { 0.0 }
}

/// A query ready for the sign kernel: its rotated coordinates quantised to [`QUERY_BITS`]
/// unsigned bits, `q[i] ≈ low + step * code[i]`, as bit planes.
#[derive(Debug, Clone)]
pub(crate) struct SignQuery {
    /// `planes[w][k]`: bit `k` of the codes of word `w`'s 64 coordinates.
    planes: Vec<[u64; QUERY_BITS]>,
    low: f32,
    step: f32,
    /// `low * dims + step * sum(code)`: the quantised query's coordinate sum.
    sum: f32,
}

impl SignQuery {
    /// The query `q`, rotated and quantised.
    pub(crate) fn new(rotation: &Rotation, q: &[f32]) -> SignQuery {
        let mut r = vec![0.0f32; q.len()];
        rotation.apply(q, &mut r);
        let low = r.iter().copied().fold(f32::INFINITY, f32::min);
        let high = r.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let levels = ((1 << QUERY_BITS) - 1) as f32;
        let step = if high > low { (high - low) / levels } else { 0.0 };
        let mut planes = vec![[0u64; QUERY_BITS]; words(q.len())];
        let mut codes = 0u64;
        for (i, x) in r.iter().enumerate() {
            let c = if step > 0.0 { ((x - low) / step).round() as u64 } else { 0 };
            codes += c;
            for (k, plane) in planes[i / 64].iter_mut().enumerate() {
                *plane |= ((c >> k) & 1) << (i % 64);
            }
        }
        let sum = low * q.len() as f32 + step * codes as f32;
        SignQuery { planes, low, step, sum }
    }

    /// The estimate of `q · x` for a row whose code has `ones` bits set, `weighted` the
    /// kernel's plane-weighted count, and estimate factor `factor`:
    /// `<sign, q> = 2 * sum(q over set bits) - sum(q)`.
    pub(crate) fn estimate(&self, ones: u32, weighted: u32, factor: f32) -> f32 {
        let over_set = self.low * ones as f32 + self.step * weighted as f32;
        (2.0 * over_set - self.sum) * factor
    }
}

/// For each row of the interleaved `blocks` (whole blocks; `ones.len()` rows are wanted):
/// `ones[i]`, the bits set in row `i`'s code, and `weighted[i]`, `Σ_k 2^k popcount(code &
/// plane_k)`, the query's quantised codes summed over the row's set bits.
pub(crate) fn scores(q: &SignQuery, blocks: &[u64], ones: &mut [u32], weighted: &mut [u32]) {
    (scores_impl())(q, blocks, ones, weighted)
}

type ScoresFn = fn(&SignQuery, &[u64], &mut [u32], &mut [u32]);

fn scores_impl() -> ScoresFn {
    static CHOSEN: std::sync::OnceLock<ScoresFn> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vpopcntdq")
        {
            return scores_avx512_checked;
        }
        scores_portable
    })
}

/// One row at a time with the plain popcount.
fn scores_portable(q: &SignQuery, blocks: &[u64], ones: &mut [u32], weighted: &mut [u32]) {
    let words = q.planes.len();
    for (i, (o, wt)) in ones.iter_mut().zip(weighted.iter_mut()).enumerate() {
        let block = &blocks[(i / BLOCK_ROWS) * words * BLOCK_ROWS..];
        let (mut n, mut s) = (0, 0);
        for (w, planes) in q.planes.iter().enumerate() {
            let x = block[w * BLOCK_ROWS + i % BLOCK_ROWS];
            n += x.count_ones();
            for (k, p) in planes.iter().enumerate() {
                s += (x & p).count_ones() << k;
            }
        }
        *o = n;
        *wt = s;
    }
}

#[cfg(target_arch = "x86_64")]
fn scores_avx512_checked(q: &SignQuery, blocks: &[u64], ones: &mut [u32], weighted: &mut [u32]) {
    // SAFETY: only chosen by `scores_impl` after detecting AVX-512 F and VPOPCNTDQ.
    unsafe { scores_avx512(q, blocks, ones, weighted) }
}

/// A block of eight rows per step: one 512-bit load holds one word of each, so each plane is
/// one AND and one `vpopcntq` for eight rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
unsafe fn scores_avx512(q: &SignQuery, blocks: &[u64], ones: &mut [u32], weighted: &mut [u32]) {
    use std::arch::x86_64::*;
    let words = q.planes.len();
    let rows = ones.len().min(weighted.len());
    let whole = rows.div_ceil(BLOCK_ROWS).min(blocks.len() / (words * BLOCK_ROWS).max(1));
    let mut lanes_n = [0u64; BLOCK_ROWS];
    let mut lanes_s = [0u64; BLOCK_ROWS];
    for b in 0..whole {
        let base = &blocks[b * words * BLOCK_ROWS..(b + 1) * words * BLOCK_ROWS];
        let mut n = _mm512_setzero_si512();
        let mut s = [_mm512_setzero_si512(); QUERY_BITS];
        for (w, planes) in q.planes.iter().enumerate() {
            // SAFETY: `base` holds `words * 8` words, and this reads words `8w .. 8w + 8`;
            // unaligned loads have no alignment requirement.
            let x = unsafe { _mm512_loadu_si512(base.as_ptr().add(w * BLOCK_ROWS).cast()) };
            n = _mm512_add_epi64(n, _mm512_popcnt_epi64(x));
            for (acc, p) in s.iter_mut().zip(planes) {
                let m = _mm512_and_si512(x, _mm512_set1_epi64(*p as i64));
                *acc = _mm512_add_epi64(*acc, _mm512_popcnt_epi64(m));
            }
        }
        let mut total = s[QUERY_BITS - 1];
        for acc in s[..QUERY_BITS - 1].iter().rev() {
            total = _mm512_add_epi64(_mm512_slli_epi64::<1>(total), *acc);
        }
        // SAFETY: both arrays hold eight u64s, what one 512-bit store writes.
        unsafe {
            _mm512_storeu_si512(lanes_n.as_mut_ptr().cast(), n);
            _mm512_storeu_si512(lanes_s.as_mut_ptr().cast(), total);
        }
        let first = b * BLOCK_ROWS;
        let end = (first + BLOCK_ROWS).min(rows);
        for j in 0..end - first {
            ones[first + j] = lanes_n[j] as u32;
            weighted[first + j] = lanes_s[j] as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(seed: &mut u64) -> f32 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    }

    /// Rows coded one by one and laid out in interleaved blocks, as the vectors file holds them.
    fn blocks_of(rows: &[Vec<u64>], words: usize) -> Vec<u64> {
        let mut out = vec![0u64; rows.len().div_ceil(BLOCK_ROWS) * words * BLOCK_ROWS];
        for (r, code) in rows.iter().enumerate() {
            for (w, x) in code.iter().enumerate() {
                out[(r / BLOCK_ROWS) * words * BLOCK_ROWS + w * BLOCK_ROWS + r % BLOCK_ROWS] = *x;
            }
        }
        out
    }

    #[test]
    fn the_rotation_keeps_lengths_and_dot_products() {
        let mut seed = 1u64;
        for dims in [1, 3, 8, 48, 100, 384, 768] {
            let rot = Rotation::new(dims);
            let a: Vec<f32> = (0..dims).map(|_| random(&mut seed)).collect();
            let b: Vec<f32> = (0..dims).map(|_| random(&mut seed)).collect();
            let (mut ra, mut rb) = (vec![0.0; dims], vec![0.0; dims]);
            rot.apply(&a, &mut ra);
            rot.apply(&b, &mut rb);
            let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
            assert!((dot(&a, &b) - dot(&ra, &rb)).abs() < 1e-4, "dims {dims}");
            assert!((dot(&a, &a) - dot(&ra, &ra)).abs() < 1e-4, "dims {dims}");
        }
    }

    #[test]
    fn every_sign_kernel_equals_the_plain_sum_over_each_rows_set_bits() {
        let mut seed = 9u64;
        for (dims, rows) in [(1, 3), (63, 9), (64, 8), (100, 17), (384, 37)] {
            let rot = Rotation::new(dims);
            let words = words(dims);
            let vectors: Vec<Vec<f32>> =
                (0..rows).map(|_| (0..dims).map(|_| random(&mut seed)).collect()).collect();
            let codes: Vec<Vec<u64>> = vectors
                .iter()
                .map(|v| {
                    let mut c = vec![0u64; words];
                    encode(&rot, v, &mut c);
                    c
                })
                .collect();
            let blocks = blocks_of(&codes, words);
            let query: Vec<f32> = (0..dims).map(|_| random(&mut seed)).collect();
            let q = SignQuery::new(&rot, &query);
            // The plain definition: the query's quantised code at every set bit, summed.
            let code_at = |i: usize| {
                (0..QUERY_BITS).map(|k| ((q.planes[i / 64][k] >> (i % 64)) & 1) << k).sum::<u64>()
            };
            let set = |c: &[u64], i: usize| (c[i / 64] >> (i % 64)) & 1 == 1;
            let want_n: Vec<u32> =
                codes.iter().map(|c| c.iter().map(|x| x.count_ones()).sum()).collect();
            let want_s: Vec<u32> = codes
                .iter()
                .map(|c| (0..dims).filter(|i| set(c, *i)).map(|i| code_at(i) as u32).sum())
                .collect();
            let (mut n, mut s) = (vec![0; rows], vec![0; rows]);
            scores(&q, &blocks, &mut n, &mut s);
            assert_eq!((&n, &s), (&want_n, &want_s), "dims {dims}");
            let (mut n, mut s) = (vec![0; rows], vec![0; rows]);
            scores_portable(&q, &blocks, &mut n, &mut s);
            assert_eq!((&n, &s), (&want_n, &want_s), "dims {dims}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512vpopcntdq")
            {
                let (mut n, mut s) = (vec![0; rows], vec![0; rows]);
                scores_avx512_checked(&q, &blocks, &mut n, &mut s);
                assert_eq!((&n, &s), (&want_n, &want_s), "dims {dims}");
            }
        }
    }

    #[test]
    fn the_estimate_tracks_the_exact_dot_product() {
        // Not a bound: on random unit vectors the estimate should correlate strongly with
        // the exact score, which is all a candidate picker needs.
        let (dims, rows) = (384, 2000);
        let mut seed = 21u64;
        let rot = Rotation::new(dims);
        let unit = |seed: &mut u64| {
            let v: Vec<f32> = (0..dims).map(|_| random(seed)).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let query = unit(&mut seed);
        let q = SignQuery::new(&rot, &query);
        let (mut exact, mut approx) = (Vec::new(), Vec::new());
        for _ in 0..rows {
            // Rows leaning towards the query by a random amount, so scores spread.
            let lean = random(&mut seed) + 0.5;
            let noise = unit(&mut seed);
            let v: Vec<f32> = query.iter().zip(&noise).map(|(a, b)| lean * a + b).collect();
            let mut code = vec![0u64; words(dims)];
            let factor = encode(&rot, &v, &mut code);
            let (mut n, mut s) = ([0u32], [0u32]);
            scores_portable(&q, &blocks_of(&[code], words(dims)), &mut n, &mut s);
            exact.push(v.iter().zip(&query).map(|(a, b)| a * b).sum::<f32>());
            approx.push(q.estimate(n[0], s[0], factor));
        }
        let mean = |x: &[f32]| x.iter().sum::<f32>() / x.len() as f32;
        let (me, ma) = (mean(&exact), mean(&approx));
        let cov: f32 = exact.iter().zip(&approx).map(|(e, a)| (e - me) * (a - ma)).sum();
        let var = |x: &[f32], m: f32| x.iter().map(|v| (v - m) * (v - m)).sum::<f32>().sqrt();
        let corr = cov / (var(&exact, me) * var(&approx, ma));
        assert!(corr > 0.9, "correlation {corr}");
    }
}
