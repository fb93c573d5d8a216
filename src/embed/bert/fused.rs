//! The two layer steps whose f32 results only feed a rounding to bf16, computed with that
//! rounding as their epilogue: Q|K|V for attention on tiles, and the feed-forward's inner
//! product with its GELU.
//!
//! What it owns: running those products block by block ([`lowp::Packed::apply_blocks`]) and,
//! on each block while it is still in L2, the pass that consumes it; then the feed-forward's
//! outer product straight from the bf16 rows ([`lowp::Packed::apply_prepared`]).
//!
//! Why: with a batch of 1,024 tokens the f32 Q|K|V (4.7 MB) and inner activations (6.3 MB)
//! do not fit in L2, so each element-wise pass over them (a bias, GELU, the rounding a bf16
//! product needs) went to memory: the feed-forward's inner activations were written by the
//! product, read and written by GELU, and read again to be rounded; Q|K|V was filled with its
//! bias, read and written by the product, and read again to be rounded. Now each is written
//! once, in bf16. The arithmetic is the same: the bias is added after the sum rather than
//! before it (a float rounding apart), GELU and the rounding are the same functions.
//!
//! When (`forward` decides once per call): the layers run in bf16, the steps are not split
//! across the pool (whole batches per thread, the index build's case), and no calibration
//! records the f32 activations. Q|K|V only when attention runs on tiles (the f32 path reads
//! f32 Q, K and V). Everything else takes the unfused steps in `forward`.

#[cfg(doc)]
use super::Precision;
use super::{Kernels, Layer, Linear, Lines, lowp, padded_rows};

/// The bf16 buffers and the f32 block the fused steps reuse across layers and batches.
#[derive(Default)]
pub(super) struct Fused {
    /// One block of a product's f32 results (see [`lowp::Packed::apply_blocks`]).
    block: Vec<f32>,
    /// The feed-forward's inner activations after GELU, in bf16: the outer product's input.
    inter: Lines,
}

impl Fused {
    /// Writes `x Wqkv + b` for `tokens` rows into `dst` as bf16 rows, followed by
    /// `super::ROUND_PAD` zero rows (what attention on tiles reads; see `padded_rows`).
    ///
    /// # Panics
    ///
    /// If the layer's products do not run in bf16 (the caller asks [`Precision::is_bf16`]).
    pub(super) fn qkv(
        &mut self,
        l: &Layer,
        x: &[f32],
        tokens: usize,
        low: &mut lowp::Scratch,
        dst: &mut Lines,
    ) {
        let packed = bf16(&l.qkv);
        let (width, b) = (l.qkv.n_out, &l.qkv.b);
        let bytes = 2 * width;
        let rows = padded_rows(dst, tokens, bytes);
        packed.apply_blocks(x, tokens, low, &mut self.block, |r0, block| {
            for (i, row) in block.chunks_exact_mut(width).enumerate() {
                row.iter_mut().zip(b).for_each(|(y, b)| *y += b);
                lowp::round_row(row, &mut rows[(r0 + i) * bytes..][..bytes]);
            }
        });
    }

    /// `x += gelu(x Wi + bi) Wd + bd`, the inner activations rounded to bf16 as GELU writes
    /// them.
    ///
    /// # Panics
    ///
    /// As [`Fused::qkv`].
    pub(super) fn feed_forward(
        &mut self,
        l: &Layer,
        k: Kernels,
        x: &mut [f32],
        tokens: usize,
        low: &mut lowp::Scratch,
    ) {
        let (up, down) = (bf16(&l.up), bf16(&l.down));
        let (width, b) = (l.up.n_out, &l.up.b);
        let bytes = down.prepared_row_bytes();
        self.inter.fit(tokens * bytes);
        let rows = self.inter.bytes_mut();
        up.apply_blocks(x, tokens, low, &mut self.block, |r0, block| {
            for (i, row) in block.chunks_exact_mut(width).enumerate() {
                k.gelu(row, b);
                lowp::round_row(row, &mut rows[(r0 + i) * bytes..][..bytes]);
            }
        });
        // The inner product has read `x` (rounded whole before its first block), so `x` takes
        // the outer bias now and the outer product accumulates onto it, as unfused.
        super::add_rows(x, &l.down.b);
        down.apply_prepared(self.inter.bytes(), tokens, x, true);
    }
}

/// The layer's packed bf16 weights: the only kind the fused steps serve.
fn bf16(l: &Linear) -> &lowp::Packed {
    l.low.as_ref().filter(|p| p.takes_bf16()).expect("fused steps on a layer not in bf16")
}
