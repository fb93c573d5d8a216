//! One attention head's products (`Q K^T` and `P V`) in bf16, for heads 32 wide: on AMX tiles,
//! or with AVX-512 BF16 on CPUs without them ([`Unit`]).
//!
//! What it owns: the layouts the two products need, built per (text, head) from bf16 Q, K and
//! V, and the loop over 16-query strips: scores, softmax fused with the rounding of the
//! probabilities to bf16, context. What it does not do: the rounding of Q, K and V (the caller
//! rounds the whole `Q|K|V` matrix once per layer, vectorised) or anything with more than one
//! head at a time.
//!
//! Why AVX-512 too: the tile layouts are what `vdpbf16ps` wants as well (a B tile's pair-row is
//! one 512-bit register: 16 columns, two bf16 each), so the vector path shares everything but
//! the two products. Where the dense layers run in int8 or AVX-512 bf16 (`auto` without tiles),
//! attention's f32 products through `gemm` were 28% of the encoder's time (`perf`, AMD EPYC,
//! int8); `vdpbf16ps` does twice an f32 FMA's arithmetic per instruction.
//!
//! Why tiles: with 256-token texts, attention's two products are a tenth of the encoder's
//! arithmetic but, in f32 through `gemm` with K read transposed, a sixth of its time once the
//! dense layers ran on tiles. A head of width 32 is exactly one bf16 tile step, so `Q K^T` is
//! one `TDPBF16PS` per 16 x 16 block of scores, and `P V` one per 16 x 32 block of probabilities
//! and 16 output columns.
//!
//! Layouts (all 16 rows of 64 bytes per tile, read with a 64-byte stride, so each B tile is one
//! contiguous KiB):
//! - Q is read in place: 16 token rows of the head's 32 bf16.
//! - K as the B operand of `Q K^T`: per block of 16 tokens, 16 pair-rows (head dims 2i, 2i+1)
//!   of 16 tokens: a 32-bit transpose of the block, gathered from the token rows.
//! - P (the probabilities, bf16): 16 rows of the strip, `len` rounded up to 32 wide, zero past
//!   `len`.
//! - V as the B operand of `P V`: per 32 tokens and per 16 head dims, 16 pair-rows (tokens 2i,
//!   2i+1) of 16 dims, each dim's two tokens side by side.
//!
//! Tokens past `len` in the last block are zeros in K and V (never another text's values), and
//! their probability columns are zero, so they add nothing; query rows past `len` are computed
//! from whatever rows follow and thrown away.

#[cfg(target_arch = "x86_64")]
use std::arch::asm;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::{CONFIG, Lines, ROWS};
use crate::embed::lowp::Precision;

/// The head width the tiles serve: one tile step of bf16 pairs.
pub(crate) const HEAD: usize = 32;

/// Which unit runs the two products; the layouts and the softmax are the same for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// AMX tiles (`TDPBF16PS`), once Linux granted them ([`super::ready`]).
    Tiles,
    /// AVX-512 BF16 (`vdpbf16ps`) in registers.
    Vectors,
}

impl Unit {
    /// The unit for an encoder whose dense layers run at `p`: tiles under AMX, vectors where
    /// the CPU has AVX-512 BF16 and the dense layers are not the f32 reference (whose attention
    /// stays f32 too), none otherwise.
    pub(crate) fn for_precision(p: Precision) -> Option<Unit> {
        match p {
            Precision::Amx => Some(Unit::Tiles),
            Precision::Bf16 | Precision::Int8 if Precision::Bf16.available() => Some(Unit::Vectors),
            _ => None,
        }
    }
}

/// Bytes per tile: 16 rows of 64.
const TILE: usize = 1024;

/// Per-thread buffers of [`attend`], reused across heads and texts.
#[derive(Default)]
pub(crate) struct Scratch {
    /// K laid out as B tiles: one per 16 tokens.
    k: Lines,
    /// V laid out as B tiles: two per 32 tokens.
    v: Lines,
    /// One strip of scores: 16 rows of `width` floats.
    scores: Lines,
    /// One strip of probabilities: 16 rows of `width` bf16.
    p: Lines,
    /// One strip of context: 16 rows of 32 floats.
    ctx: Lines,
}

/// One head of one text, in the caller's bf16 `Q|K|V` rows.
pub(crate) struct Head<'a> {
    /// The rows: token `t` of the text starts at byte `t * rs`. Rows up to `len` rounded up to
    /// 16 must be readable (query rows past `len` are computed and discarded).
    pub(crate) rows: &'a [u8],
    pub(crate) rs: usize,
    /// Byte offsets inside a row of this head's Q, K and V (32 bf16 each).
    pub(crate) q: usize,
    pub(crate) k: usize,
    pub(crate) v: usize,
    pub(crate) len: usize,
}

/// Writes the head's context (`len x 32`, normalised) into `out`, rows `out_rs` floats apart.
///
/// # Panics
///
/// If the rows or `out` are shorter than the shapes say, or the CPU lacks the unit (AMX for
/// tiles, AVX-512 BF16 for both: callers take the unit from [`Unit::for_precision`]).
pub(crate) fn attend(
    head: &Head,
    unit: Unit,
    scratch: &mut Scratch,
    out: &mut [f32],
    out_rs: usize,
) {
    let len = head.len;
    if len == 0 {
        return;
    }
    let strips = len.div_ceil(ROWS);
    let width = len.next_multiple_of(2 * ROWS);
    assert!(
        head.q.max(head.k).max(head.v) + 2 * HEAD <= head.rs
            && (strips * ROWS - 1) * head.rs + head.rs <= head.rows.len(),
        "head rows out of bounds"
    );
    assert!((len - 1) * out_rs + HEAD <= out.len(), "context rows out of bounds");
    let tiles = unit == Unit::Tiles;
    let needs = if tiles { Precision::Amx } else { Precision::Bf16 };
    assert!(needs.available(), "{unit:?} attention on a CPU without {needs:?}");
    scratch.k.fit(width / ROWS * TILE);
    scratch.v.fit(width / ROWS * TILE);
    scratch.scores.fit(ROWS * width * 4);
    scratch.p.fit(ROWS * width * 2);
    scratch.ctx.fit(ROWS * HEAD * 4);
    // SAFETY: the CPU has AVX-512 BW and BF16, and AMX for tiles (asserted); the layouts read
    // rows below `len` (asserted inside the rows) and write inside the buffers just sized. The
    // configuration is valid for palette 1 and holds until the release after the last strip
    // (no other tile code runs on this thread in between).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        lay_out_k(head, width, scratch.k.bytes_mut());
        lay_out_v(head, width, scratch.v.bytes_mut());
        if tiles {
            asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(nostack, readonly));
        }
    }
    let mut inv = [0.0f32; ROWS];
    for strip in 0..strips {
        let r0 = strip * ROWS;
        // SAFETY: the unit is there (tiles configured above); Q rows r0..r0+16 are readable
        // (asserted), the K tiles and the scores strip hold `width` columns.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            if tiles {
                scores(head, r0, &scratch.k, &mut scratch.scores, width)
            } else {
                scores_vectors(head, r0, &scratch.k, &mut scratch.scores, width)
            }
        };
        let rows = (len - r0).min(ROWS);
        let (scores, p) = (scratch.scores.floats_mut(), scratch.p.bytes_mut());
        for r in 0..ROWS {
            let pr = &mut p[r * width * 2..][..width * 2];
            if r < rows {
                #[cfg(target_arch = "x86_64")]
                {
                    let row = &scores[r * width..][..len];
                    // SAFETY: AVX-512 F/BW/BF16 are there for either unit (asserted above); `pr`
                    // holds `width` >= `len` rounded up to 16 bf16.
                    inv[r] = 1.0 / unsafe { softmax_row(row, pr) };
                }
            } else {
                pr.fill(0);
            }
        }
        // SAFETY: as above; the probabilities strip and the V tiles hold `width` tokens.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            if tiles {
                context(&scratch.p, &scratch.v, &mut scratch.ctx, width)
            } else {
                context_vectors(&scratch.p, &scratch.v, &mut scratch.ctx, width)
            }
        };
        let ctx = scratch.ctx.floats_mut();
        for r in 0..rows {
            let o = &mut out[(r0 + r) * out_rs..][..HEAD];
            o.iter_mut().zip(&ctx[r * HEAD..][..HEAD]).for_each(|(o, c)| *o = c * inv[r]);
        }
    }
    #[cfg(target_arch = "x86_64")]
    if tiles {
        // SAFETY: releases the tile state configured above.
        unsafe { asm!("tilerelease", options(nostack, nomem)) };
    }
}

/// A softmax row before its division, fused: `p` gets `e^(x - max)` of each score rounded to
/// bf16 (zeros past the scores, to its end); returns the sum of the exponentials (unrounded).
/// One pass for the maximum and one for the rest, both in registers: the f32 exponentials are
/// never stored.
///
/// The exponential is [`exp2_scaled`]'s, accurate to 7.5e-5 of its value: the probabilities
/// are rounded to bf16 right after, which moves them by up to 2e-3.
///
/// # Safety
///
/// AVX-512 F/BW/BF16 present; `p` holds at least 2 bytes per score, rounded up to 16 scores.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
unsafe fn softmax_row(scores: &[f32], p: &mut [u8]) -> f32 {
    let len = scores.len();
    assert!(p.len() >= 2 * len.next_multiple_of(16), "probability row too short");
    // Whole vectors unmasked, then the tail's lanes masked (zeros past `len`).
    let (full, tail) = (len - len % 16, (1u32 << (len % 16)) as u16 - 1);
    let (sp, pp) = (scores.as_ptr(), p.as_mut_ptr());
    let mut top = _mm512_set1_ps(f32::NEG_INFINITY);
    for i in (0..full).step_by(16) {
        // SAFETY: 16 scores from `i < full` lie inside `scores`.
        top = _mm512_max_ps(top, unsafe { _mm512_loadu_ps(sp.add(i)) });
    }
    // SAFETY: the tail's lanes lie inside `scores`; masked-off lanes keep `top`.
    top = _mm512_max_ps(top, unsafe { _mm512_mask_loadu_ps(top, tail, sp.add(full)) });
    // e^(x - top) = 2^(x log2 e - top log2 e): one fused multiply-subtract per lane.
    let top = _mm512_set1_ps(_mm512_reduce_max_ps(top) * std::f32::consts::LOG2_E);
    let log2e = _mm512_set1_ps(std::f32::consts::LOG2_E);
    let mut sum = _mm512_setzero_ps();
    let mut one = |i: usize, x: __m512, keep: __mmask16| {
        let e = _mm512_maskz_mov_ps(keep, exp2_scaled(_mm512_fmsub_ps(x, log2e, top)));
        sum = _mm512_add_ps(sum, e);
        // SAFETY: the 32 bytes from `2i` lie inside `p` (16 scores' worth from `i <= len`,
        // which the assert covers); the transmute only renames the 256 bits.
        unsafe {
            let b = std::mem::transmute::<__m256bh, __m256i>(_mm512_cvtneps_pbh(e));
            _mm256_storeu_si256(pp.add(2 * i).cast(), b);
        }
    };
    for i in (0..full).step_by(16) {
        // SAFETY: as in the first pass.
        one(i, unsafe { _mm512_loadu_ps(sp.add(i)) }, u16::MAX);
    }
    if tail != 0 {
        // SAFETY: as in the first pass.
        one(full, unsafe { _mm512_maskz_loadu_ps(tail, sp.add(full)) }, tail);
    }
    p[2 * len.next_multiple_of(16)..].fill(0);
    _mm512_reduce_add_ps(sum)
}

/// 2^t, 16 lanes, to 7.5e-5 of its value: `t` rounded to the nearest integer `n` (by
/// `roundscale`), 2^(t - n) by a degree-3 polynomial on [-1/2, 1/2] (coefficients fitted for
/// the least largest relative error), and the 2^n applied by `scalef`, which also takes a very
/// negative `n` to zero. Half the instructions of the encoder's ~1 ulp `exp_neg` (see `bert`),
/// whose accuracy the bf16 rounding that follows in attention throws away; softmax was a
/// seventh of the encoder's time on tiles.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn exp2_scaled(t: __m512) -> __m512 {
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(t);
    let f = _mm512_sub_ps(t, n);
    let mut p = _mm512_set1_ps(0.055_171_322);
    for c in [0.242_610_54, 0.693_260_97, 0.999_928_1] {
        p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(c));
    }
    _mm512_scalef_ps(p, n)
}

/// Gathers K into B tiles: tile `j`, pair-row `i`, column `n` holds dims 2i and 2i+1 of token
/// 16j + n (zeros from `len` up to `width`).
///
/// # Safety
///
/// AVX-512 F present; the head's K is readable for tokens below `len`; `dst` holds a tile per
/// 16 tokens of `width`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn lay_out_k(head: &Head, width: usize, dst: &mut [u8]) {
    let lanes: [i32; 16] = std::array::from_fn(|n| (n * head.rs) as i32);
    // SAFETY: 16 i32s are one 512-bit load.
    let index = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
    for j in 0..width / ROWS {
        let valid = head.len.saturating_sub(j * ROWS).min(ROWS);
        let mask: __mmask16 = if valid == ROWS { u16::MAX } else { (1 << valid) - 1 };
        // Past `len` the mask is empty and nothing is read: the address need not be valid.
        let base = head.rows.as_ptr().wrapping_add(j * ROWS * head.rs + head.k);
        for i in 0..HEAD / 2 {
            // SAFETY: the masked lanes read 4 bytes of K in rows below `len` (the contract);
            // the store writes pair-row i of tile j, inside `dst`.
            unsafe {
                let g = _mm512_mask_i32gather_epi32::<1>(
                    _mm512_setzero_si512(),
                    mask,
                    index,
                    base.wrapping_add(4 * i).cast(),
                );
                _mm512_storeu_si512(dst[j * TILE + i * 64..].as_mut_ptr().cast(), g);
            }
        }
    }
}

/// Interleaves V into B tiles: tile `2s + h`, pair-row `i`, column `d` holds dim 16h + d of
/// tokens 32s + 2i and 32s + 2i + 1 (zeros from `len` up to `width`).
///
/// # Safety
///
/// AVX-512 F/BW present; the head's V is readable for tokens below `len`; `dst` holds two
/// tiles per 32 tokens of `width`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn lay_out_v(head: &Head, width: usize, dst: &mut [u8]) {
    // Word 2d of the result is word d (+16 for the upper half) of the even token's row, word
    // 2d + 1 the same of the odd token's (indices 32 and up select the second operand).
    let lo: [i16; 32] = std::array::from_fn(|w| (w / 2 + (w % 2) * 32) as i16);
    let hi: [i16; 32] = std::array::from_fn(|w| (16 + w / 2 + (w % 2) * 32) as i16);
    // SAFETY: 32 i16s are one 512-bit load each.
    let (lo, hi) =
        unsafe { (_mm512_loadu_si512(lo.as_ptr().cast()), _mm512_loadu_si512(hi.as_ptr().cast())) };
    let row = |t: usize| {
        if t < head.len {
            // SAFETY: token t < len: its 64 bytes of V are readable (the contract).
            unsafe { _mm512_loadu_si512(head.rows[t * head.rs + head.v..].as_ptr().cast()) }
        } else {
            _mm512_setzero_si512()
        }
    };
    for pair in 0..width / 2 {
        let (even, odd) = (row(2 * pair), row(2 * pair + 1));
        let (s, i) = (pair / ROWS, pair % ROWS);
        // SAFETY: tiles 2s and 2s + 1 lie inside `dst` (two per 32 tokens).
        unsafe {
            let at = dst[2 * s * TILE + i * 64..].as_mut_ptr();
            _mm512_storeu_si512(at.cast(), _mm512_permutex2var_epi16(even, lo, odd));
            _mm512_storeu_si512(at.add(TILE).cast(), _mm512_permutex2var_epi16(even, hi, odd));
        }
    }
}

/// The scores of query rows `r0..r0 + 16` against every key: `width` columns into `strip`.
///
/// # Safety
///
/// The tiles are configured ([`CONFIG`]); Q rows `r0..r0 + 16` are readable; `k` holds
/// `width / 16` tiles and `strip` 16 rows of `width` floats.
#[cfg(target_arch = "x86_64")]
unsafe fn scores(head: &Head, r0: usize, k: &Lines, strip: &mut Lines, width: usize) {
    let q = head.rows[r0 * head.rs + head.q..].as_ptr();
    let (k, s) = (k.bytes().as_ptr(), strip.bytes_mut().as_mut_ptr());
    let s_rs = width * 4;
    // SAFETY: every load and store stays inside the buffers named in the contract (16 rows of
    // 64 bytes, the strides given).
    unsafe {
        load!(4, q, head.rs);
        for j in (0..width / ROWS).step_by(2) {
            asm!("tilezero tmm0", "tilezero tmm1", options(nostack, nomem));
            load!(6, k.add(j * TILE), 64);
            load!(7, k.add((j + 1) * TILE), 64);
            dot!(0, 4, 6);
            dot!(1, 4, 7);
            store!(0, s.add(j * 64), s_rs);
            store!(1, s.add((j + 1) * 64), s_rs);
        }
    }
}

/// The context of one strip: `p` (16 rows of `width` bf16) times V's tiles, 16 x 32 floats
/// into `ctx`.
///
/// # Safety
///
/// The tiles are configured; `p` holds 16 rows of `width` bf16, `v` two tiles per 32 of
/// `width`, `ctx` 16 rows of 32 floats.
#[cfg(target_arch = "x86_64")]
unsafe fn context(p: &Lines, v: &Lines, ctx: &mut Lines, width: usize) {
    let (p, v, c) = (p.bytes().as_ptr(), v.bytes().as_ptr(), ctx.bytes_mut().as_mut_ptr());
    // SAFETY: as `scores`.
    unsafe {
        asm!("tilezero tmm0", "tilezero tmm1", options(nostack, nomem));
        for s in 0..width / (2 * ROWS) {
            load!(4, p.add(s * 64), width * 2);
            load!(6, v.add(2 * s * TILE), 64);
            load!(7, v.add((2 * s + 1) * TILE), 64);
            dot!(0, 4, 6);
            dot!(1, 4, 7);
        }
        store!(0, c, HEAD * 4);
        store!(1, c.add(64), HEAD * 4);
    }
}

/// Query rows per register block of the vector kernels: 8 rows x 2 column groups are 16
/// accumulators, with room for the two B registers and a broadcast in AVX-512's 32.
const VEC_ROWS: usize = 8;

/// [`scores`] with `vdpbf16ps`: each K tile's pair-row `i` is one register (16 keys, dims 2i
/// and 2i + 1), multiplied by the query row's dims 2i and 2i + 1 broadcast.
///
/// # Safety
///
/// AVX-512 F/BF16 present; Q rows `r0..r0 + 16` are readable; `k` holds `width / 16` tiles and
/// `strip` 16 rows of `width` floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn scores_vectors(head: &Head, r0: usize, k: &Lines, strip: &mut Lines, width: usize) {
    let q = head.rows[r0 * head.rs + head.q..].as_ptr();
    let (k, s) = (k.bytes().as_ptr(), strip.floats_mut().as_mut_ptr());
    for half in (0..ROWS).step_by(VEC_ROWS) {
        for j in (0..width / ROWS).step_by(2) {
            let mut c = [[_mm512_setzero_ps(); 2]; VEC_ROWS];
            for i in 0..HEAD / 2 {
                // SAFETY: pair-row i of tiles j and j + 1 (width / 16 is even), and 4 bytes of
                // Q's dims 2i and 2i + 1 in rows below r0 + 16: inside the contract's buffers.
                unsafe {
                    let b = [
                        as_bh(_mm512_loadu_si512(k.add(j * TILE + i * 64).cast())),
                        as_bh(_mm512_loadu_si512(k.add((j + 1) * TILE + i * 64).cast())),
                    ];
                    for (r, cr) in c.iter_mut().enumerate() {
                        let at = q.add((half + r) * head.rs + 4 * i);
                        let a = as_bh(_mm512_set1_epi32(at.cast::<i32>().read_unaligned()));
                        cr[0] = _mm512_dpbf16_ps(cr[0], a, b[0]);
                        cr[1] = _mm512_dpbf16_ps(cr[1], a, b[1]);
                    }
                }
            }
            for (r, cr) in c.iter().enumerate() {
                // SAFETY: columns 16j..16j + 32 of strip row half + r, inside `strip`.
                unsafe {
                    let row = s.add((half + r) * width + j * ROWS);
                    _mm512_storeu_ps(row, cr[0]);
                    _mm512_storeu_ps(row.add(ROWS), cr[1]);
                }
            }
        }
    }
}

/// [`context`] with `vdpbf16ps`: for each pair of tokens, the two V tiles' pair-rows (dims
/// 0-15 and 16-31, the two tokens' values side by side) times the probability row's two
/// tokens broadcast.
///
/// # Safety
///
/// AVX-512 F/BF16 present; `p` holds 16 rows of `width` bf16, `v` two tiles per 32 of `width`,
/// `ctx` 16 rows of 32 floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn context_vectors(p: &Lines, v: &Lines, ctx: &mut Lines, width: usize) {
    let (p, v, c) = (p.bytes().as_ptr(), v.bytes().as_ptr(), ctx.floats_mut().as_mut_ptr());
    for half in (0..ROWS).step_by(VEC_ROWS) {
        let mut acc = [[_mm512_setzero_ps(); 2]; VEC_ROWS];
        for t in 0..width / 2 {
            let (s, i) = (t / ROWS, t % ROWS);
            // SAFETY: pair-row i of tiles 2s and 2s + 1 (two per 32 tokens of `width`), and 4
            // bytes of probability row half + r at token 2t, inside the contract's buffers.
            unsafe {
                let b = [
                    as_bh(_mm512_loadu_si512(v.add(2 * s * TILE + i * 64).cast())),
                    as_bh(_mm512_loadu_si512(v.add((2 * s + 1) * TILE + i * 64).cast())),
                ];
                for (r, ar) in acc.iter_mut().enumerate() {
                    let at = p.add((half + r) * width * 2 + 4 * t);
                    let a = as_bh(_mm512_set1_epi32(at.cast::<i32>().read_unaligned()));
                    ar[0] = _mm512_dpbf16_ps(ar[0], a, b[0]);
                    ar[1] = _mm512_dpbf16_ps(ar[1], a, b[1]);
                }
            }
        }
        for (r, ar) in acc.iter().enumerate() {
            // SAFETY: the 32 floats of context row half + r, inside `ctx`.
            unsafe {
                let row = c.add((half + r) * HEAD);
                _mm512_storeu_ps(row, ar[0]);
                _mm512_storeu_ps(row.add(16), ar[1]);
            }
        }
    }
}

/// The same 512 bits seen as 32 bf16.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn as_bh(x: __m512i) -> __m512bh {
    // SAFETY: both types are 512 bits of plain data; the transmute only renames them.
    unsafe { std::mem::transmute::<__m512i, __m512bh>(x) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::lowp::bf16_bits;

    /// The units this CPU runs: the tests check each (none on a CPU without AVX-512 BF16,
    /// where the f32 attention runs instead).
    fn units() -> Vec<Unit> {
        [(Unit::Tiles, Precision::Amx), (Unit::Vectors, Precision::Bf16)]
            .into_iter()
            .filter(|(_, p)| p.available())
            .map(|(u, _)| u)
            .collect()
    }

    /// xorshift in [-scale, scale).
    fn values(seed: &mut u64, n: usize, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                ((*seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
            })
            .collect()
    }

    fn bf16(x: f32) -> f32 {
        f32::from_bits((bf16_bits(x) as u32) << 16)
    }

    /// A text of `len` tokens with `heads` heads, its `Q|K|V` rows in bf16 and the rows after
    /// it filled with NaN (another text's, or garbage): they must not reach the result.
    struct Text {
        len: usize,
        heads: usize,
        /// The bf16 values as f32, `len x 3 heads x 32`.
        qkv: Vec<f32>,
        rows: Vec<u8>,
    }

    impl Text {
        fn new(seed: &mut u64, len: usize, heads: usize) -> Text {
            let width = 3 * heads * HEAD;
            let qkv: Vec<f32> = values(seed, len * width, 2.0).into_iter().map(bf16).collect();
            let mut rows: Vec<u8> = qkv.iter().flat_map(|&x| bf16_bits(x).to_le_bytes()).collect();
            rows.extend((0..ROWS * width).flat_map(|_| 0x7fc0u16.to_le_bytes()));
            Text { len, heads, qkv, rows }
        }

        fn head(&self, head: usize) -> Head<'_> {
            let h = self.heads * HEAD;
            Head {
                rows: &self.rows,
                rs: 6 * h,
                q: 2 * head * HEAD,
                k: 2 * (h + head * HEAD),
                v: 2 * (2 * h + head * HEAD),
                len: self.len,
            }
        }

        /// softmax(Q K^T) V for one head, in f64 from the same bf16 inputs.
        fn reference(&self, head: usize) -> Vec<f64> {
            let (h, width) = (self.heads * HEAD, 3 * self.heads * HEAD);
            let at = |t: usize, part: usize, d: usize| {
                self.qkv[t * width + part * h + head * HEAD + d] as f64
            };
            let mut out = vec![0.0; self.len * HEAD];
            for i in 0..self.len {
                let s: Vec<f64> = (0..self.len)
                    .map(|j| (0..HEAD).map(|d| at(i, 0, d) * at(j, 1, d)).sum())
                    .collect();
                let top = s.iter().cloned().fold(f64::MIN, f64::max);
                let e: Vec<f64> = s.iter().map(|x| (x - top).exp()).collect();
                let total: f64 = e.iter().sum();
                for (j, p) in e.iter().enumerate() {
                    for d in 0..HEAD {
                        out[i * HEAD + d] += p / total * at(j, 2, d);
                    }
                }
            }
            out
        }
    }

    /// The probabilities are rounded to bf16 (relative error 2^-9 each) and weight values of
    /// at most 2, so each context value may move by about 2^-9 x 2; the f32 sums add little.
    const TOLERANCE: f64 = 6e-3;

    #[test]
    fn bf16_attention_matches_the_f64_softmax_at_odd_lengths_on_each_unit() {
        for unit in units() {
            let mut seed = 59;
            for len in [1, 2, 15, 16, 17, 31, 32, 33, 47, 100, 256, 300] {
                let text = Text::new(&mut seed, len, 2);
                let mut scratch = Scratch::default();
                for head in 0..2 {
                    // Context rows wider than a head, as in the encoder, with sentinels between.
                    let out_rs = 40;
                    let mut out = vec![7.0f32; len * out_rs];
                    attend(&text.head(head), unit, &mut scratch, &mut out, out_rs);
                    let want = text.reference(head);
                    for t in 0..len {
                        for d in 0..HEAD {
                            let (got, want) = (out[t * out_rs + d] as f64, want[t * HEAD + d]);
                            assert!(
                                (got - want).abs() <= TOLERANCE,
                                "{unit:?} len {len} head {head} token {t} dim {d}: {got} against \
                                 {want}"
                            );
                        }
                        let gap = &out[t * out_rs + HEAD..][..out_rs - HEAD];
                        assert!(gap.iter().all(|&x| x == 7.0), "{unit:?} wrote past the head");
                    }
                }
            }
        }
    }

    #[test]
    fn the_vector_unit_gives_the_tiles_results_within_the_order_of_their_sums() {
        let [Unit::Tiles, Unit::Vectors] = units()[..] else {
            return; // only a CPU with AMX runs both
        };
        let mut seed = 67;
        for len in [3, 16, 77, 256] {
            let text = Text::new(&mut seed, len, 1);
            let run = |unit| {
                let mut out = vec![0.0f32; len * HEAD];
                attend(&text.head(0), unit, &mut Scratch::default(), &mut out, HEAD);
                out
            };
            for (a, b) in run(Unit::Tiles).iter().zip(run(Unit::Vectors)) {
                assert!((a - b).abs() <= 1e-4 * (1.0 + a.abs()), "len {len}: {a} against {b}");
            }
        }
    }

    #[test]
    fn attention_runs_in_bf16_wherever_the_dense_layers_do_not_run_in_f32() {
        assert_eq!(Unit::for_precision(Precision::F32), None, "the reference stays f32");
        assert_eq!(Unit::for_precision(Precision::Amx), Some(Unit::Tiles));
        // Without AVX-512 BF16 (an int8-only CPU) attention stays f32.
        let vectors = Precision::Bf16.available().then_some(Unit::Vectors);
        assert_eq!(Unit::for_precision(Precision::Int8), vectors);
        assert_eq!(Unit::for_precision(Precision::Bf16), vectors);
    }

    #[test]
    fn bf16_attention_gives_the_same_results_on_several_threads_on_each_unit() {
        for unit in units() {
            same_results_on_several_threads(unit);
        }
    }

    fn same_results_on_several_threads(unit: Unit) {
        let mut seed = 61;
        let texts: Vec<Text> =
            [5, 40, 129, 256].iter().map(|&l| Text::new(&mut seed, l, 3)).collect();
        let jobs: Vec<(usize, usize)> =
            (0..texts.len()).flat_map(|t| (0..3).map(move |h| (t, h))).collect();
        let run = |&(t, h): &(usize, usize), scratch: &mut Scratch| {
            let mut out = vec![0.0f32; texts[t].len * HEAD];
            attend(&texts[t].head(h), unit, scratch, &mut out, HEAD);
            out
        };
        let mut scratch = Scratch::default();
        let alone: Vec<Vec<f32>> = jobs.iter().map(|j| run(j, &mut scratch)).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let threaded: Vec<Vec<f32>> = pool.install(|| {
            use rayon::prelude::*;
            jobs.par_iter().map_init(Scratch::default, |s, j| run(j, s)).collect()
        });
        assert_eq!(alone, threaded, "{unit:?}: each head's sums run in one fixed order");
    }
}
