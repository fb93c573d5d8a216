//! 4-bit codes: the exact scan's first pass, half the bytes of the int8 codes.
//!
//! What it owns: turning a row into its 4-bit code and the four numbers that bound what the
//! code lost ([`encode`]), a query into what meets those codes ([`NibbleQuery`]), and the
//! integer dot products of a query with many rows at once ([`dots`]).
//!
//! Why a first pass at all: at a million rows the int8 scan reads 396 MB a query, which on
//! the 2-core machines this project is measured on is 13-17 ms of memory traffic alone. These
//! codes are 192 bytes a row, and each row carries its own error terms, so a row's exact score
//! is bounded from both sides and the pass proves which rows cannot be in the top k; only the
//! rest (a few hundred for a short query) are scored in int8 and then f32. The answer stays
//! the f32 scan's, row for row (see `dense.rs`).
//!
//! The code: `v[i] ≈ c[i] * step` with `c[i]` in `-8..=7` and `step = max |v| / 7.5`, so the
//! largest coordinate lands on a level's edge and every coordinate's rounding error is at most
//! half a step. Stored unsigned (`u = c + 8`), because `vpdpbusd` multiplies unsigned bytes by
//! signed ones; the query's `8 * sum(q̂)` that adds is taken off again, so the integer dot
//! product is exact. Byte `i` of a row holds dimension `i` in its low nibble and dimension
//! `i + half` in its high one (`half = ⌈dims / 2⌉`), so a 64-byte load serves two runs of 64
//! query codes without shuffling.
//!
//! The bound: the approximate score is `q̂·v̂`, and `q·v - q̂·v̂ = q·(v - v̂) + (q - q̂)·v̂`. The
//! first term is at most `|q|·|v - v̂|` (Cauchy–Schwarz) and also at most `‖q‖₁·max|v - v̂|`
//! (Hölder); a short query's embedding is sparse, where the second is several times tighter,
//! and a long one's dense, where the first is, so the smaller of the two is used. The second
//! term is at most `|q - q̂|·|v̂|`.

use super::vectors::QuantQuery;

/// Bytes of one row's code.
pub(crate) fn row_bytes(dims: usize) -> usize {
    dims.div_ceil(2)
}

/// Levels each side of zero: the largest magnitude maps to 7.5 steps, the edge of the top level.
const LEVELS: f32 = 7.5;

/// One row's step and error terms: `[step, |v - v̂|, max |v - v̂|, |v̂|]`.
pub(crate) type Terms = [f32; 4];

/// Writes `v`'s code into `out` (`row_bytes(v.len())` bytes) and returns its terms.
pub(crate) fn encode(v: &[f32], out: &mut [u8]) -> Terms {
    let dims = v.len();
    let half = row_bytes(dims);
    let largest = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let step = largest / LEVELS;
    let level =
        |x: f32| -> i32 { if step == 0.0 { 0 } else { ((x / step).round() as i32).clamp(-8, 7) } };
    let (mut moved, mut worst, mut kept) = (0f64, 0f64, 0f64);
    let mut code = |i: usize| -> u8 {
        let Some(&x) = v.get(i) else { return 8 };
        let c = level(x);
        let back = f64::from(c) * f64::from(step);
        let err = (f64::from(x) - back).abs();
        moved += err * err;
        worst = worst.max(err);
        kept += back * back;
        (c + 8) as u8
    };
    for (i, byte) in out.iter_mut().enumerate().take(half) {
        *byte = code(i) | (code(i + half) << 4);
    }
    [step, moved.sqrt() as f32, worst as f32, kept.sqrt() as f32]
}

/// How a query meets the 4-bit codes: its int8 codes in the order a row's nibbles hold their
/// dimensions, and what turns an integer dot product into a score and a bound.
pub(crate) struct NibbleQuery {
    /// Codes for the low nibbles (dimensions `0..half`), then for the high ones (`half..`),
    /// each run `half` long (zero past the last dimension).
    low: Vec<i8>,
    high: Vec<i8>,
    /// `8 * sum(q̂)`, what the unsigned codes' offset adds to every dot product.
    bias: i32,
    factor: f32,
    norm: f32,
    l1: f32,
    moved: f32,
}

impl NibbleQuery {
    /// `query` meeting the 4-bit codes through its int8 quantisation `q8` (the scan has it
    /// already, for the rows this pass leaves to the int8 bound), laid out as the rows' nibbles.
    pub(crate) fn new(query: &[f32], q8: &QuantQuery) -> NibbleQuery {
        let codes = &q8.codes;
        let dims = codes.len();
        let half = row_bytes(dims);
        let mut low = vec![0i8; half];
        let mut high = vec![0i8; half];
        low.copy_from_slice(&codes[..half]);
        high[..dims - half].copy_from_slice(&codes[half..]);
        let bias = 8 * codes.iter().map(|c| i32::from(*c)).sum::<i32>();
        NibbleQuery {
            low,
            high,
            bias,
            factor: q8.scale / 127.0,
            norm: q8.norm,
            l1: query.iter().map(|x| f64::from(x.abs())).sum::<f64>() as f32,
            moved: q8.moved,
        }
    }

    /// A row's approximate score and the most its exact score can differ from it, given the
    /// integer dot product `dot` of the query's codes with the row's unsigned codes.
    #[inline]
    pub(crate) fn score(&self, dot: i32, terms: &Terms) -> (f32, f32) {
        let [step, moved, worst, kept] = *terms;
        let approx = (dot - self.bias) as f32 * self.factor * step;
        let first = (self.norm * moved).min(self.l1 * worst);
        // The small margin covers the float arithmetic of both scores, as the int8 bound's.
        (approx, (first + self.moved * kept) * 1.001 + 1e-5)
    }

    /// [`NibbleQuery::score`] for a block of rows at once, each row's most (`upper`) and least
    /// (`lower`): one plain loop the compiler vectorises, so that the scan's per-row work is a
    /// comparison with the floor (a scalar score per row was about half the pass).
    pub(crate) fn bounds(
        &self,
        dots: &[i32],
        terms: &[Terms],
        upper: &mut [f32],
        lower: &mut [f32],
    ) {
        let rows = dots.iter().zip(terms).zip(upper.iter_mut().zip(lower.iter_mut()));
        for ((d, t), (u, l)) in rows {
            let (approx, slack) = self.score(*d, t);
            *u = approx + slack;
            *l = approx - slack;
        }
    }
}

/// `out[i]` = the integer dot product of the query's codes with row `i` of `codes` (rows of
/// `row_bytes(dims)`), unsigned codes as stored (the bias is [`NibbleQuery::score`]'s to take
/// off).
pub(crate) fn dots(q: &NibbleQuery, codes: &[u8], out: &mut [i32]) {
    let half = q.low.len();
    let rows = out.len().min(codes.len() / half.max(1));
    (dots_impl())(q, &codes[..rows * half], &mut out[..rows])
}

type DotsFn = fn(&NibbleQuery, &[u8], &mut [i32]);

fn dots_impl() -> DotsFn {
    static CHOSEN: std::sync::OnceLock<DotsFn> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vnni")
        {
            return dots_vnni_checked;
        }
        dots_portable
    })
}

fn dots_portable(q: &NibbleQuery, codes: &[u8], out: &mut [i32]) {
    let half = q.low.len();
    for (o, row) in out.iter_mut().zip(codes.chunks_exact(half.max(1))) {
        let mut sum = 0i32;
        for ((b, lo), hi) in row.iter().zip(&q.low).zip(&q.high) {
            sum += i32::from(b & 15) * i32::from(*lo) + i32::from(b >> 4) * i32::from(*hi);
        }
        *o = sum;
    }
}

#[cfg(target_arch = "x86_64")]
fn dots_vnni_checked(q: &NibbleQuery, codes: &[u8], out: &mut [i32]) {
    let half = q.low.len();
    // The kernels take rows of whole 64-byte blocks: MiniLM's 384 dimensions are three.
    // SAFETY (each arm): only chosen by `dots_impl` after detecting AVX-512 F, BW and VNNI,
    // and `B` matches the rows' `half` bytes.
    let done = match half {
        // SAFETY: as above.
        192 => unsafe { dots16::<3>(q, codes, out) },
        // SAFETY: as above.
        128 => unsafe { dots16::<2>(q, codes, out) },
        // SAFETY: as above.
        256 => unsafe { dots16::<4>(q, codes, out) },
        _ => 0,
    };
    dots_portable(q, &codes[done * half..], &mut out[done..]);
}

/// Sixteen rows of `B` 64-byte blocks at a time: each block's low and high nibbles multiplied
/// by the query's two runs (six registers at 384 dimensions, loaded once), and the sixteen
/// rows' accumulators folded into one vector of sums (`vectors::fold16`). Returns how many
/// rows it did, a multiple of 16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dots16<const B: usize>(q: &NibbleQuery, codes: &[u8], out: &mut [i32]) -> usize {
    use std::arch::x86_64::*;
    let half = 64 * B;
    // Both runs are `half` codes long (the caller matched `half` to `B`).
    let run = |codes: &[i8]| -> [__m512i; B] {
        // SAFETY: block `b` reads bytes `64 b .. 64 (b + 1)`, inside the run.
        std::array::from_fn(|b| unsafe { _mm512_loadu_si512(codes.as_ptr().add(64 * b).cast()) })
    };
    let (low, high) = (run(&q.low), run(&q.high));
    let nibble = _mm512_set1_epi8(15);
    let groups = out.len().min(codes.len() / half) / 16;
    for g in 0..groups {
        let base = codes[g * 16 * half..].as_ptr();
        let acc: [__m512i; 16] = std::array::from_fn(|r| {
            let mut acc = _mm512_setzero_si512();
            for b in 0..B {
                // SAFETY: row `16 g + r` lies inside `codes` (`groups` counts whole rows).
                let x = unsafe { _mm512_loadu_si512(base.add(r * half + 64 * b).cast()) };
                let lo = _mm512_and_si512(x, nibble);
                let hi = _mm512_and_si512(_mm512_srli_epi16::<4>(x), nibble);
                acc = _mm512_dpbusd_epi32(acc, lo, low[b]);
                acc = _mm512_dpbusd_epi32(acc, hi, high[b]);
            }
            acc
        });
        // SAFETY: the same features are enabled here; `out` holds at least `16 (g + 1)` values.
        unsafe {
            let sums = super::vectors::fold16(&acc);
            _mm512_storeu_si512(out.as_mut_ptr().add(16 * g).cast(), sums);
        }
    }
    groups * 16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: &mut u64) -> f32 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        (*seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.into_iter().map(|x| x / n).collect()
    }

    fn rows(n: usize, dims: usize, seed: &mut u64) -> Vec<Vec<f32>> {
        (0..n).map(|_| unit((0..dims).map(|_| rng(seed)).collect())).collect()
    }

    fn codes_of(rows: &[Vec<f32>]) -> (Vec<u8>, Vec<Terms>) {
        let half = row_bytes(rows[0].len());
        let mut codes = vec![0u8; rows.len() * half];
        let terms = rows.iter().zip(codes.chunks_exact_mut(half)).map(|(v, c)| encode(v, c));
        let terms = terms.collect();
        (codes, terms)
    }

    #[test]
    fn every_kernel_equals_the_plain_sum_over_the_unsigned_codes() {
        let mut seed = 0x1234_5678_9abc_def1;
        for dims in [384, 256, 512, 383, 7, 1] {
            let data = rows(37, dims, &mut seed);
            let (codes, _) = codes_of(&data);
            // Extreme query codes included: the largest magnitude gives ±127.
            let mut query: Vec<f32> = (0..dims).map(|_| rng(&mut seed)).collect();
            query[0] = 1.0;
            if dims > 2 {
                query[dims - 1] = -1.0;
            }
            let q = NibbleQuery::new(&query, &QuantQuery::new(&query));
            let half = row_bytes(dims);
            let want: Vec<i32> = codes
                .chunks_exact(half)
                .map(|row| {
                    (0..dims)
                        .map(|i| {
                            let (b, shift, qi) = if i < half {
                                (row[i], 0, q.low[i])
                            } else {
                                (row[i - half], 4, q.high[i - half])
                            };
                            i32::from((b >> shift) & 15) * i32::from(qi)
                        })
                        .sum()
                })
                .collect();
            let mut fast = vec![0i32; data.len()];
            dots(&q, &codes, &mut fast);
            let mut plain = vec![0i32; data.len()];
            dots_portable(&q, &codes, &mut plain);
            assert_eq!(fast, want, "dims {dims}");
            assert_eq!(plain, want, "dims {dims}");
        }
    }

    #[test]
    fn each_rows_exact_score_lies_inside_its_bound_for_dense_and_sparse_queries() {
        let mut seed = 0x0bad_cafe_f00d_0001;
        let dims = 384;
        let mut data = rows(300, dims, &mut seed);
        // Adversarial rows: one coordinate carrying nearly everything, and a zero row.
        let mut spike = vec![0.001f32; dims];
        spike[5] = 1.0;
        data.push(unit(spike));
        data.push(vec![0.0; dims]);
        let (codes, terms) = codes_of(&data);
        let mut sparse = vec![0.0f32; dims];
        for i in [3usize, 77, 190, 191, 192, 383] {
            sparse[i] = if i % 2 == 0 { 0.4 } else { -0.4 };
        }
        let queries = [unit((0..dims).map(|_| rng(&mut seed)).collect()), unit(sparse)];
        for query in &queries {
            let q = NibbleQuery::new(query, &QuantQuery::new(query));
            let mut d = vec![0i32; data.len()];
            dots(&q, &codes, &mut d);
            for ((v, dot), t) in data.iter().zip(&d).zip(&terms) {
                let exact: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
                let (approx, slack) = q.score(*dot, t);
                assert!((exact - approx).abs() <= slack, "{exact} vs {approx} ± {slack}");
            }
        }
    }

    #[test]
    fn the_sparse_bound_is_the_tighter_for_a_short_query() {
        let mut seed = 7;
        let v = unit((0..384).map(|_| rng(&mut seed)).collect());
        let mut code = vec![0u8; row_bytes(384)];
        let t = encode(&v, &mut code);
        let mut sparse = vec![0.0f32; 384];
        sparse[10] = 0.6;
        sparse[300] = -0.8;
        let q = NibbleQuery::new(&sparse, &QuantQuery::new(&sparse));
        let (_, slack) = q.score(0, &t);
        // Cauchy–Schwarz alone would allow |q|·|v - v̂|; Hölder gives ‖q‖₁·max|v - v̂|.
        assert!(slack < 0.5 * t[1], "{slack} against {}", t[1]);
    }
}
