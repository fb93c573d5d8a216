//! A hand-rolled CPU forward pass for BERT sentence encoders (all-MiniLM-L6-v2 and kin), in f32.
//!
//! What it owns: parsing a model's `config.json` and `model.safetensors` (given as text and
//! bytes), checking every weight's shape, and turning token id sequences into mean-pooled,
//! L2-normalised vectors.
//!
//! What it does not do: reading files, tokenising (the caller, [`super::local`], runs
//! `tokenizers`, adds `[CLS]`/`[SEP]` and truncates), model download, hashing, or choosing a
//! thread count. It runs on the *current* rayon
//! pool: callers pick the thread count with `ThreadPool::install` (or use the global pool), and
//! this module starts no threads of its own. Token type ids are all zero (single-segment input,
//! which is what sentence encoders are given).
//!
//! Why hand-rolled rather than a general tensor library: a sentence encoder is a fixed sequence
//! of operations, and the big costs of the general route are avoidable here:
//! - No padding. The tokens of every text in a batch are stacked into one `tokens x hidden`
//!   matrix for the dense layers (which treat tokens independently), and attention runs per text
//!   at its own length. Padding a batch to its longest text wastes work in every layer.
//! - Fused work. Q, K and V are one matrix product with concatenated weights; biases and the
//!   residual connection are pre-loaded into the output, so the product accumulates onto them
//!   (the feed-forward's inner bias is added by the GELU pass instead); where the layers
//!   run in bf16, a product whose f32 result only feeds a rounding (Q|K|V for attention on
//!   tiles, the feed-forward's inner product through GELU) rounds it block by block as it is
//!   made (see [`fused`]); the attention scale
//!   1/sqrt(head_dim) is folded into the query weights at load time; the softmax division is
//!   applied to the (narrower) attention output instead of the scores.
//! - Whole batches per thread instead of parallel matrix products. With enough work, texts are
//!   dealt into equal-sized batches and each thread runs whole batches with single-threaded
//!   kernels: no barriers, and no core idles during the element-wise steps. Only small calls (a
//!   query, a couple of texts) split each step across the pool.
//! - Weights in column panels (see [`Linear`]) so that a product with few tokens streams the
//!   weights sequentially; this halves the latency of a one-query call.
//! - Vectorised kernels for `erf` (GELU), `exp` (softmax) and layer norm, compiled for AVX-512 and
//!   for AVX2+FMA and picked at load time, so a portable build still gets wide vectors.
//!
//! The matrix products are `gemm`'s (the crate candle uses), called directly; `Cargo.toml` turns on
//! its `x86-v4` feature for its AVX-512 kernels (picked at run time), without which they are AVX2
//! at best and the whole pass runs at about half the speed.
//!
//! Precision. The four dense products of each layer (QKV, attention output, FFN up and down:
//! nearly all of the arithmetic) can run in bf16 or int8 instead, with [`super::lowp`]'s kernels;
//! attention's own products, softmax, GELU, layer norm, biases, residuals and pooling stay f32,
//! except that attention's two products run in bf16 as well, with the softmax fused into them,
//! wherever the dense layers are not f32 and the CPU has AVX-512 BF16: on tiles under AMX, in
//! registers under bf16 and int8 (see [`super::amx::attention`]).
//! The choice is made once at load ([`Precision`]; `MDVAULT_ENCODER` in [`super::local`]):
//! `auto` picks bf16 on AMX tiles where the CPU and Linux allow (see [`super::amx`]), else int8
//! with AVX-512 VNNI, else bf16 with AVX-512 BF16, else f32 (`Precision::fastest` says why); f32
//! remains the reference the others are tested against. Measured on the 2-core development machine (AMD EPYC, Zen 5,
//! release build, 2026-12-04, other builds running: load average 8-9, so ratios from one run):
//! - f32: 14.8-15.6 chunks/s, one short query p50 4.1-5.5 ms (about twice these when quiet).
//! - bf16: 25.5-32.2 chunks/s (1.7-2.1x f32), query p50 1.1-1.5 ms; every vector within cosine
//!   0.99997 of f32 (mean 0.99999) over the 395 paragraphs of `docs/` and `examples/vault`.
//! - int8 (per-column weights, per-token activations, smoothed with per-channel factors found by
//!   running calibration text through f32 at load): 31.8-34.0 chunks/s, query p50 0.4 ms, but
//!   worst cosine 0.9959 on those paragraphs and 0.988 on the empty text: below the 0.999 the
//!   vectors must keep, because layer norm's outputs carry a few channels far larger than the
//!   rest, and one scale per token cannot serve both (without smoothing: 0.9915). So int8 was
//!   kept as an explicit choice until 2026-12-06, when a quiet machine measured it at 1.5x
//!   bf16 and SciFact's rankings within 0.003 of bf16's; the vectors' cosine is what the
//!   rankings do not see.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use gemm::Parallelism;
use rayon::prelude::*;

use super::amx::{self, Lines};
use super::lowp;
pub(crate) use super::lowp::Precision;
use checkpoint::{Config, Tensors};

mod checkpoint;
mod fused;

/// Tokens per batch when a call holds many texts. Measured on 2 cores with 256-token texts,
/// 256 to 2048 tokens perform within noise of each other; a middling size keeps the per-batch
/// activations (about 16 KB per token for MiniLM) modest while amortising per-call overheads.
const TOKEN_BUDGET: usize = 1024;

/// Whole batches per thread are used only when the dealt batches are this balanced: the largest
/// holds at most 1 + 1/8 of the mean. Otherwise one thread would finish long after the others,
/// and splitting each step across the pool wastes less.
const BALANCE: (usize, usize) = (9, 8);

/// Output columns per weight panel (see [`Linear`]). 64 to 192 measured alike for large batches;
/// all are about twice as fast as unpanelled weights for a 12-token query.
const PANEL: usize = 128;

/// Sizes of the model, checked once at load time.
#[derive(Debug, Clone, Copy)]
struct Dims {
    hidden: usize,
    heads: usize,
    head_dim: usize,
    inter: usize,
    max_pos: usize,
    vocab: usize,
    eps: f32,
}

/// A dense layer `y = x W + b` with `W` stored `n_in x n_out` in column panels: panel `p` holds
/// output columns `p * PANEL ..` (at most `PANEL` of them) as a contiguous row-major block.
///
/// Why panels: with few tokens, `gemm` reads the weights in place, one `n_in` row after another.
/// Rows of a whole `384 x 1536` matrix are 6 KB apart, so nearly every step lands on a new page
/// and defeats the prefetcher; inside a panel they are 512 bytes apart.
///
/// With a low precision (see [`lowp`]), the weights live only in their packed form and `w` is
/// empty: the encoder's precision is fixed at load.
struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
    n_in: usize,
    n_out: usize,
    low: Option<lowp::Packed>,
}

impl Linear {
    /// From PyTorch's layout: `w` is `n_out x n_in`, row-major.
    /// `act_max` is the largest activation seen per input channel in calibration: int8 uses
    /// it to smooth outsized channels (see [`lowp::smoothing`]); other precisions ignore it.
    fn from_torch(
        w: &[f32],
        b: Vec<f32>,
        n_in: usize,
        n_out: usize,
        p: Precision,
        act_max: Option<&[f32]>,
    ) -> Linear {
        let low = match p {
            Precision::F32 => None,
            Precision::Int8 => {
                let smooth = act_max.map(|a| lowp::smoothing(a, w, n_in));
                Some(lowp::Packed::int8(w, n_in, n_out, smooth.as_deref()))
            }
            Precision::Bf16 => Some(lowp::Packed::bf16(w, n_in, n_out, false)),
            Precision::Amx => Some(lowp::Packed::bf16(w, n_in, n_out, true)),
        };
        if low.is_some() {
            return Linear { w: Vec::new(), b, n_in, n_out, low };
        }
        let mut panels = Vec::with_capacity(w.len());
        for c0 in (0..n_out).step_by(PANEL) {
            let width = PANEL.min(n_out - c0);
            for r in 0..n_in {
                panels.extend((c0..c0 + width).map(|c| w[c * n_in + r]));
            }
        }
        Linear { w: panels, b, n_in, n_out, low: None }
    }

    /// `dst (tokens x n_out) = x (tokens x n_in) W`, plus dst's old value when `acc`. The bias is
    /// the caller's business, so that it can be merged into a pass the caller makes anyway.
    fn apply(
        &self,
        x: &[f32],
        tokens: usize,
        dst: &mut [f32],
        acc: bool,
        par: Parallelism,
        scratch: &mut lowp::Scratch,
    ) {
        if let Some(low) = &self.low {
            let split = !matches!(par, Parallelism::None);
            low.apply(x, tokens, dst, acc, split, scratch);
            return;
        }
        let a = Mat { data: x, rows: tokens, cols: self.n_in, rs: self.n_in, cs: 1 };
        for c0 in (0..self.n_out).step_by(PANEL) {
            let width = PANEL.min(self.n_out - c0);
            let panel = &self.w[c0 * self.n_in..][..width * self.n_in];
            let b = Mat { data: panel, rows: self.n_in, cols: width, rs: width, cs: 1 };
            gemm_into(&mut dst[c0..], self.n_out, a, b, acc, par);
        }
    }
}

/// One transformer layer.
struct Layer {
    /// Q, K and V side by side (`hidden x 3*hidden`); Q's part is pre-scaled by 1/sqrt(head_dim).
    qkv: Linear,
    out: Linear,
    ln1_g: Vec<f32>,
    ln1_b: Vec<f32>,
    up: Linear,
    down: Linear,
    ln2_g: Vec<f32>,
    ln2_b: Vec<f32>,
}

/// A BERT encoder with its weights in memory (about 90 MB for MiniLM-L6). `Send + Sync`: one
/// instance serves every thread.
pub(crate) struct Encoder {
    d: Dims,
    /// `vocab x hidden`.
    word: Vec<f32>,
    /// Position embeddings with token type 0's embedding already added: `max_pos x hidden`.
    pos_type: Vec<f32>,
    emb_ln_g: Vec<f32>,
    emb_ln_b: Vec<f32>,
    layers: Vec<Layer>,
    kernels: Kernels,
    precision: Precision,
    /// Attention's products run in bf16 (see [`amx::attention`]), on tiles under
    /// [`Precision::Amx`] and with AVX-512 BF16 under bf16 and int8, for heads of the tiles'
    /// width; `None` runs them in f32 through `gemm` (the reference's way).
    attention16: Option<amx::attention::Unit>,
    /// Workspaces kept between calls to [`Encoder::encode`], at most one per pool thread and
    /// one more: a fresh one per call and per rayon split had the kernel clearing ~20 MB of
    /// new pages each time (about 5% of a build's time).
    spare: Mutex<Vec<Workspace>>,
}

impl fmt::Debug for Encoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoder")
            .field("dims", &self.d)
            .field("layers", &self.layers.len())
            .field("kernels", &self.kernels)
            .field("precision", &self.precision)
            .finish()
    }
}

impl Encoder {
    /// Builds the encoder from the text of a Hugging Face `config.json` and the bytes of its
    /// `model.safetensors`. The weights are copied into re-laid-out buffers, so the bytes can be
    /// dropped afterwards.
    ///
    /// Errors name the file and what is wrong with it (not a BERT config, a missing tensor, a
    /// wrong shape, an unsupported activation or dtype).
    ///
    /// `precision` is the dense layers' arithmetic; the caller checks that the CPU has it
    /// ([`Precision::parse`] does).
    ///
    /// `calibration` (token id sequences of ordinary text) is run through the f32 encoder once
    /// when `precision` is int8, to find each layer's outsized activation channels.
    pub(crate) fn new(
        config_json: &str,
        weights: &[u8],
        precision: Precision,
        calibration: &[&[u32]],
    ) -> Result<Encoder, String> {
        let config: Config = serde_json::from_str(config_json)
            .map_err(|e| format!("`config.json` is not a BERT config: {e}"))?;
        Encoder::from_parts(&config, weights, precision, calibration)
    }

    fn from_parts(
        c: &Config,
        bytes: &[u8],
        precision: Precision,
        calibration: &[&[u32]],
    ) -> Result<Encoder, String> {
        if !precision.available() {
            return Err(format!("this CPU cannot run the encoder in {precision:?}"));
        }
        // Per layer, the largest activation per input channel of qkv, out, up and down.
        let act_max = if precision == Precision::Int8 && !calibration.is_empty() {
            let reference = Encoder::from_parts(c, bytes, Precision::F32, &[])?;
            Some(reference.calibrate(calibration))
        } else {
            None
        };
        let d = Dims::of(c)?;
        let t = Tensors::read(bytes)?;
        let h = d.hidden;
        let word = t.get("embeddings.word_embeddings.weight", &[d.vocab, h])?;
        let mut pos_type = t.get("embeddings.position_embeddings.weight", &[d.max_pos, h])?;
        let types = t.get("embeddings.token_type_embeddings.weight", &[c.type_vocab_size, h])?;
        for row in pos_type.chunks_exact_mut(h) {
            row.iter_mut().zip(&types[..h]).for_each(|(p, t)| *p += t);
        }
        let emb_ln_g = t.get("embeddings.LayerNorm.weight", &[h])?;
        let emb_ln_b = t.get("embeddings.LayerNorm.bias", &[h])?;
        let mut layers = Vec::with_capacity(c.num_hidden_layers);
        for l in 0..c.num_hidden_layers {
            let act = act_max.as_ref().map(|a: &Vec<[Vec<f32>; 4]>| &a[l]);
            layers.push(Layer::read(&t, l, d, precision, act)?);
        }
        Ok(Encoder {
            d,
            word,
            pos_type,
            emb_ln_g,
            emb_ln_b,
            layers,
            kernels: Kernels::detect(),
            precision,
            attention16: amx::attention::Unit::for_precision(precision)
                .filter(|_| d.head_dim == amx::attention::HEAD),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// Runs `seqs` through this (f32) encoder, returning per layer the largest magnitude seen
    /// per input channel of its qkv, out, up and down products. Sequences the model cannot
    /// take (too long, or an id outside the vocabulary) are skipped.
    fn calibrate(&self, seqs: &[&[u32]]) -> Vec<[Vec<f32>; 4]> {
        let mut work = Workspace {
            record: Some(
                self.layers
                    .iter()
                    .map(|l| [l.qkv.n_in, l.out.n_in, l.up.n_in, l.down.n_in].map(|n| vec![0.0; n]))
                    .collect(),
            ),
            ..Workspace::default()
        };
        let usable = |s: &&[u32]| {
            !s.is_empty()
                && s.len() <= self.d.max_pos
                && s.iter().all(|&t| (t as usize) < self.d.vocab)
        };
        let seqs: Vec<&[u32]> = seqs.iter().copied().filter(usable).collect();
        self.forward(&mut work, &seqs, false);
        work.record.unwrap_or_default()
    }

    /// The dense layers' arithmetic, as chosen at load.
    pub(crate) fn precision(&self) -> Precision {
        self.precision
    }

    /// Where attention's products run in bf16 (`None`: in f32; see [`amx::attention::Unit`]).
    pub(crate) fn attention_unit(&self) -> Option<amx::attention::Unit> {
        self.attention16
    }

    /// The width of every output vector (the model's hidden size; 384 for MiniLM).
    pub(crate) fn hidden(&self) -> usize {
        self.d.hidden
    }

    /// How many token ids the word embeddings cover; larger ids are refused by [`Encoder::encode`].
    pub(crate) fn vocab(&self) -> usize {
        self.d.vocab
    }

    /// The `(inputs, outputs)` of a layer's four dense products: Q|K|V, attention's output,
    /// and the feed-forward's two.
    pub(crate) fn product_shapes(&self) -> [(usize, usize); 4] {
        let (h, i) = (self.d.hidden, self.d.inter);
        [(h, 3 * h), (h, h), (h, i), (i, h)]
    }

    /// The floating-point operations (a multiply-add is two) one sequence of `tokens` tokens
    /// costs: every layer's dense products, and attention's two (`Q K^T` and `P V`, each
    /// `tokens^2 x hidden` multiply-adds). Layer norms, softmax and GELU are left out.
    pub(crate) fn flops(&self, tokens: usize) -> f64 {
        let per_token: usize = self.product_shapes().iter().map(|(i, o)| i * o).sum();
        let (t, h) = (tokens as f64, self.d.hidden as f64);
        self.layers.len() as f64 * (2.0 * t * per_token as f64 + 4.0 * t * t * h)
    }

    /// The longest sequence the position embeddings allow (512 for BERT models).
    pub(crate) fn max_tokens(&self) -> usize {
        self.d.max_pos
    }

    /// Encodes token id sequences (each with its `[CLS]` and `[SEP]`, already truncated) into
    /// mean-pooled, L2-normalised rows, in input order. An empty sequence gives a zero row.
    ///
    /// Runs on the current rayon pool (see the module docs). Rows do not depend on how the
    /// inputs are batched or threaded beyond float rounding (cosine > 1 - 1e-6).
    ///
    /// # Panics
    ///
    /// If a sequence is longer than [`Encoder::max_tokens`] or holds an id outside the vocabulary:
    /// both are caller bugs (the tokenizer cannot produce them when set up as documented).
    pub(crate) fn encode(&self, ids: &[&[u32]]) -> Vec<Vec<f32>> {
        for (n, seq) in ids.iter().enumerate() {
            assert!(
                seq.len() <= self.d.max_pos,
                "sequence {n} has {} tokens, more than the model's {} positions",
                seq.len(),
                self.d.max_pos
            );
            if let Some(bad) = seq.iter().find(|&&t| t as usize >= self.d.vocab) {
                panic!(
                    "sequence {n} holds token id {bad}, outside the vocabulary of {}",
                    self.d.vocab
                );
            }
        }
        let mut order: Vec<usize> = (0..ids.len()).filter(|&n| !ids[n].is_empty()).collect();
        order.sort_by_key(|&n| std::cmp::Reverse(ids[n].len()));
        let total: usize = order.iter().map(|&n| ids[n].len()).sum();
        let threads = rayon::current_num_threads();
        let wanted = total.div_ceil(TOKEN_BUDGET).max(1);

        let mut whole_batches = None;
        if threads > 1 && wanted >= threads {
            let count = wanted.next_multiple_of(threads);
            let batches = deal(ids, &order, count);
            let largest = batches.iter().map(|b| b.1).max().unwrap_or(0);
            if largest * count * BALANCE.1 <= total * BALANCE.0 {
                whole_batches = Some(batches);
            }
        }
        let run = |work: &mut Workspace, batch: &(Vec<usize>, usize), par: bool| {
            let seqs: Vec<&[u32]> = batch.0.iter().map(|&n| ids[n]).collect();
            self.forward(work, &seqs, par)
        };
        let (batches, rows): (_, Vec<Vec<Vec<f32>>>) = match whole_batches {
            // One whole batch at a time per thread, single-threaded kernels inside.
            Some(batches) => {
                let rows = batches
                    .par_iter()
                    .map_init(|| self.lend(), |w, b| run(&mut w.work, b, false))
                    .collect();
                (batches, rows)
            }
            // Too little (or too lumpy) work for that: every step split across the pool.
            None => {
                let batches = deal(ids, &order, wanted);
                let mut lent = self.lend();
                let rows = batches.iter().map(|b| run(&mut lent.work, b, threads > 1)).collect();
                (batches, rows)
            }
        };
        let mut out = vec![vec![0.0; self.d.hidden]; ids.len()];
        for ((positions, _), rows) in batches.into_iter().zip(rows) {
            for (n, row) in positions.into_iter().zip(rows) {
                out[n] = row;
            }
        }
        out
    }

    /// A spare workspace, or a new one; it goes back when the loan is dropped.
    fn lend(&self) -> Loan<'_> {
        let spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner).pop();
        Loan { work: spare.unwrap_or_default(), to: &self.spare }
    }

    /// Runs the encoder over `seqs` stacked without padding; returns one pooled row per text.
    /// With `par`, each step is split across the current pool.
    fn forward(&self, work: &mut Workspace, seqs: &[&[u32]], par: bool) -> Vec<Vec<f32>> {
        let d = self.d;
        let (h, k) = (d.hidden, self.kernels);
        let total: usize = seqs.iter().map(|s| s.len()).sum();
        let gemm_par = if par { Parallelism::Rayon(0) } else { Parallelism::None };

        let Workspace { x, qkv, qkv16, ctx, heads, inter, low, fused, record } = work;
        // Calibration records the f32 activations the fused steps never write; split steps
        // are a query's case, where the fused steps' one thread would be slower than two.
        let fuse = record.is_none() && !par && self.precision.is_bf16();
        let fuse_qkv = fuse && self.attention16.is_some();
        // Every element of each buffer is written before it is read, so resizing is enough;
        // the f32 buffers the fused steps replace are not needed at all.
        x.resize(total * h, 0.0);
        qkv.resize(if fuse_qkv { 0 } else { total * 3 * h }, 0.0);
        ctx.resize(total * h, 0.0);
        heads.resize(if par { total * h } else { 0 }, 0.0);
        inter.resize(if fuse { 0 } else { total * d.inter }, 0.0);
        let positions = seqs.iter().flat_map(|s| s.iter().zip(0..));
        for (row, (&id, p)) in x.chunks_exact_mut(h).zip(positions) {
            let word = &self.word[id as usize * h..][..h];
            let pos = &self.pos_type[p * h..][..h];
            for ((o, w), q) in row.iter_mut().zip(word).zip(pos) {
                *o = w + q;
            }
        }
        rows_mut(x, h, par, |r| k.layer_norm(r, &self.emb_ln_g, &self.emb_ln_b, d.eps));

        let mut seen = |li: usize, j: usize, buf: &[f32]| {
            if let Some(r) = record.as_mut() {
                let m = &mut r[li][j];
                for row in buf.chunks_exact(m.len()) {
                    m.iter_mut().zip(row).for_each(|(m, x)| *m = m.max(x.abs()));
                }
            }
        };
        for (li, l) in self.layers.iter().enumerate() {
            seen(li, 0, x);
            if fuse_qkv {
                fused.qkv(l, x, total, low, qkv16);
            } else {
                fill_rows(qkv, &l.qkv.b);
                l.qkv.apply(x, total, qkv, true, gemm_par, low);
                if self.attention16.is_some() {
                    round_rows(qkv, 3 * h, total, par, qkv16);
                }
            }
            self.attention(seqs, (qkv, qkv16.bytes()), ctx, heads, par);
            seen(li, 1, ctx);
            // x = LayerNorm(x + ctx Wo + bo)
            add_rows(x, &l.out.b);
            l.out.apply(ctx, total, x, true, gemm_par, low);
            rows_mut(x, h, par, |r| k.layer_norm(r, &l.ln1_g, &l.ln1_b, d.eps));
            // x = LayerNorm(x + gelu(x Wi + bi) Wd + bd)
            seen(li, 2, x);
            if fuse {
                fused.feed_forward(l, k, x, total, low);
            } else {
                l.up.apply(x, total, inter, false, gemm_par, low);
                rows_mut(inter, d.inter, par, |r| k.gelu(r, &l.up.b));
                seen(li, 3, inter);
                add_rows(x, &l.down.b);
                l.down.apply(inter, total, x, true, gemm_par, low);
            }
            rows_mut(x, h, par, |r| k.layer_norm(r, &l.ln2_g, &l.ln2_b, d.eps));
        }

        let mut start = 0;
        seqs.iter()
            .map(|s| {
                let rows = &x[start * h..(start + s.len()) * h];
                start += s.len();
                let mut v = vec![0.0f32; h];
                for row in rows.chunks_exact(h) {
                    v.iter_mut().zip(row).for_each(|(a, b)| *a += b);
                }
                // The mean's division by the token count cannot change the direction: skip it.
                let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|a| *a /= norm);
                }
                v
            })
            .collect()
    }

    /// Self-attention for every (text, head) pair, writing each head's context into its columns
    /// of `ctx` (`tokens x hidden`). With `par`, the pairs run across the pool, each into its own
    /// block of `heads` (text by text, head by head), which is then copied into `ctx`.
    fn attention(
        &self,
        seqs: &[&[u32]],
        qkv: (&[f32], &[u8]),
        ctx: &mut [f32],
        heads: &mut [f32],
        par: bool,
    ) {
        let d = self.d;
        let (h, dh) = (d.hidden, d.head_dim);
        if !par {
            let mut scratch = Scratch::default();
            let mut start = 0;
            for s in seqs {
                for head in 0..d.heads {
                    let out = &mut ctx[start * h + head * dh..];
                    self.attend(qkv, (start, s.len(), head), &mut scratch, out, h);
                }
                start += s.len();
            }
            return;
        }
        let mut tasks = Vec::with_capacity(seqs.len() * d.heads);
        let mut rest = &mut *heads;
        let mut start = 0;
        for s in seqs {
            let len = s.len();
            let (mine, tail) = rest.split_at_mut(len * h);
            rest = tail;
            for (head, block) in mine.chunks_exact_mut(len * dh).enumerate() {
                tasks.push(((start, len, head), block));
            }
            start += len;
        }
        tasks.into_par_iter().for_each_init(Scratch::default, |scratch, (at, block)| {
            self.attend(qkv, at, scratch, block, dh);
        });
        let mut start = 0;
        for s in seqs {
            let len = s.len();
            let src = &heads[start * h..(start + len) * h];
            let dst = &mut ctx[start * h..(start + len) * h];
            for (head, block) in src.chunks_exact(len * dh).enumerate() {
                for (t, piece) in block.chunks_exact(dh).enumerate() {
                    dst[t * h + head * dh..][..dh].copy_from_slice(piece);
                }
            }
            start += len;
        }
    }

    /// Attention of one head over the text of `len` tokens starting at token `start`: writes its
    /// `len x head_dim` context into `out`, whose rows are `out_rs` apart.
    fn attend(
        &self,
        (qkv, qkv16): (&[f32], &[u8]),
        (start, len, head): (usize, usize, usize),
        scratch: &mut Scratch,
        out: &mut [f32],
        out_rs: usize,
    ) {
        let (h, dh) = (self.d.hidden, self.d.head_dim);
        let Scratch { scores, inv_sums, tiles } = scratch;
        if let Some(unit) = self.attention16 {
            // The bf16 rows of Q|K|V: 6h bytes each, this head's 2dh-byte pieces in them.
            let rs = 6 * h;
            let one = amx::attention::Head {
                rows: &qkv16[start * rs..],
                rs,
                q: 2 * head * dh,
                k: 2 * (h + head * dh),
                v: 2 * (2 * h + head * dh),
                len,
            };
            amx::attention::attend(&one, unit, tiles, out, out_rs);
            return;
        }
        scores.resize(len * len, 0.0);
        inv_sums.resize(len, 0.0);
        let base = start * 3 * h + head * dh;
        // scores = Q K^T (the scale is folded into Q); K^T is K read with swapped strides.
        let q = Mat { data: &qkv[base..], rows: len, cols: dh, rs: 3 * h, cs: 1 };
        let kt = Mat { data: &qkv[base + h..], rows: dh, cols: len, rs: 1, cs: 3 * h };
        gemm_into(scores, len, q, kt, false, Parallelism::None);
        // Softmax without its division: each context row is scaled instead, which touches
        // head_dim numbers per row rather than len.
        for (row, inv) in scores.chunks_exact_mut(len).zip(inv_sums.iter_mut()) {
            *inv = 1.0 / self.kernels.exp_shifted(row);
        }
        let p = Mat { data: scores, rows: len, cols: len, rs: len, cs: 1 };
        let v = Mat { data: &qkv[base + 2 * h..], rows: len, cols: dh, rs: 3 * h, cs: 1 };
        gemm_into(out, out_rs, p, v, false, Parallelism::None);
        for (r, inv) in inv_sums.iter().enumerate() {
            out[r * out_rs..][..dh].iter_mut().for_each(|x| *x *= inv);
        }
    }
}

/// Deals the texts `order` (longest first) into `count` batches, each text to the batch with the
/// fewest tokens so far (longest-processing-time scheduling: within one text of even).
/// Returns each batch's text positions and token count; empty batches are dropped.
fn deal(ids: &[&[u32]], order: &[usize], count: usize) -> Vec<(Vec<usize>, usize)> {
    let mut batches = vec![(Vec::new(), 0usize); count];
    for &n in order {
        if let Some(b) = batches.iter_mut().min_by_key(|b| b.1) {
            b.0.push(n);
            b.1 += ids[n].len();
        }
    }
    batches.retain(|b| !b.0.is_empty());
    batches
}

/// Activation buffers of [`Encoder::forward`], kept across the batches a thread runs: fresh
/// multi-megabyte allocations cost page faults on every batch.
#[derive(Default)]
struct Workspace {
    x: Vec<f32>,
    qkv: Vec<f32>,
    /// `qkv` rounded to bf16 for attention on tiles, with [`ROUND_PAD`] zero rows after it.
    qkv16: Lines,
    ctx: Vec<f32>,
    heads: Vec<f32>,
    inter: Vec<f32>,
    /// The activations in low precision, when the dense layers use one.
    low: lowp::Scratch,
    /// The fused steps' own buffers (see [`fused`]).
    fused: fused::Fused,
    /// Calibration only: per layer, the largest magnitude per input channel of each product.
    record: Option<Vec<[Vec<f32>; 4]>>,
}

/// A workspace lent from [`Encoder::spare`]; dropping it gives it back unless the encoder
/// already keeps one per pool thread and one more (more callers than that at once get fresh
/// ones, which are then freed).
struct Loan<'a> {
    work: Workspace,
    to: &'a Mutex<Vec<Workspace>>,
}

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        let mut spare = self.to.lock().unwrap_or_else(PoisonError::into_inner);
        if spare.len() <= rayon::current_num_threads() {
            spare.push(std::mem::take(&mut self.work));
        }
    }
}

/// Per-thread temporaries of [`Encoder::attend`].
#[derive(Default)]
struct Scratch {
    scores: Vec<f32>,
    inv_sums: Vec<f32>,
    /// The tile path's own.
    tiles: amx::attention::Scratch,
}

/// Zero rows after the bf16 `Q|K|V`: a text's last 16-query tile may read up to 15 rows past
/// its end.
const ROUND_PAD: usize = 16;

/// Rounds the `tokens` rows of `src` (`width` floats each) to bf16 rows of `2 width` bytes in
/// `dst`, followed by [`ROUND_PAD`] zero rows; split across the pool when `par`.
fn round_rows(src: &[f32], width: usize, tokens: usize, par: bool, dst: &mut Lines) {
    let bytes = 2 * width;
    let rows = padded_rows(dst, tokens, bytes);
    let pairs = src[..tokens * width].chunks_exact(width).zip(rows.chunks_exact_mut(bytes));
    if par {
        pairs.collect::<Vec<_>>().into_par_iter().for_each(|(s, d)| lowp::round_row(s, d));
    } else {
        pairs.for_each(|(s, d)| lowp::round_row(s, d));
    }
}

/// Sizes `dst` for `tokens` bf16 rows of `bytes` each followed by [`ROUND_PAD`] zero rows,
/// zeroes the padding and returns the rows to fill: the layout attention on tiles reads.
fn padded_rows(dst: &mut Lines, tokens: usize, bytes: usize) -> &mut [u8] {
    dst.fit((tokens + ROUND_PAD) * bytes);
    let (rows, pad) = dst.bytes_mut().split_at_mut(tokens * bytes);
    pad.fill(0);
    rows
}

/// Sets every row of `buf` (width `row.len()`) to `row`.
fn fill_rows(buf: &mut [f32], row: &[f32]) {
    buf.chunks_exact_mut(row.len()).for_each(|r| r.copy_from_slice(row));
}

/// Adds `row` to every row of `buf`.
fn add_rows(buf: &mut [f32], row: &[f32]) {
    for r in buf.chunks_exact_mut(row.len()) {
        r.iter_mut().zip(row).for_each(|(a, b)| *a += b);
    }
}

/// Applies `f` to every `width`-wide row of `buf`, split across the pool when `par`.
fn rows_mut(buf: &mut [f32], width: usize, par: bool, f: impl Fn(&mut [f32]) + Sync) {
    if par {
        // Blocks of about 64 KB, so each task is worth scheduling.
        let per = (16384 / width).max(1) * width;
        buf.par_chunks_mut(per).for_each(|block| block.chunks_exact_mut(width).for_each(&f));
    } else {
        buf.chunks_exact_mut(width).for_each(f);
    }
}

/// A strided view of a matrix: element (r, c) is `data[r * rs + c * cs]`.
#[derive(Clone, Copy)]
struct Mat<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

impl Mat<'_> {
    /// Whether every element lies inside `data`.
    fn in_bounds(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.rs + (self.cols - 1) * self.cs < self.data.len()
    }
}

/// `dst (a.rows x b.cols, row stride dst_rs) (+)= a b`: accumulates when `acc`, else overwrites.
fn gemm_into(dst: &mut [f32], dst_rs: usize, a: Mat, b: Mat, acc: bool, par: Parallelism) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert_eq!(k, b.rows, "inner dimensions differ");
    let out = Mat { data: dst, rows: m, cols: n, rs: dst_rs, cs: 1 };
    assert!(a.in_bounds() && b.in_bounds() && out.in_bounds(), "matrix view out of bounds");
    assert!(dst_rs >= n || m <= 1, "destination rows overlap");
    // SAFETY: the asserts check that every element gemm reads from `a` and `b` and writes to
    // `dst` lies inside the borrowed slices, and that no two destination elements coincide;
    // `dst` is a unique borrow, so it aliases neither input. gemm computes
    // dst = 1 * dst + 1 * a b, reading dst only when `acc`.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
            acc,
            a.data.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            par,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Element-wise kernels.
//
// Plain loops over lanes that LLVM vectorises, compiled three times (baseline, AVX2+FMA,
// AVX-512) and picked once at load time. In a portable x86-64 build they would otherwise run on
// 4-wide SSE2 without FMA: measured, GELU 3x and the softmax exponentials 3.5x slower.
// ---------------------------------------------------------------------------------------------
/// `a * b + c`, fused when the kernel is compiled for FMA (`F`). Unfused otherwise: without the
/// instruction, `mul_add` would be a slow library call.
#[inline(always)]
fn fma<const F: bool>(a: f32, b: f32, c: f32) -> f32 {
    if F { a.mul_add(b, c) } else { a * b + c }
}

/// erf(x) for f32 as a rational function of x (the minimax fit used by Eigen and XLA); inputs
/// are clamped to [-4, 4], outside which erf is ±1 to within f32 precision. |error| < 1e-6.
#[inline(always)]
fn erf<const F: bool>(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    for c in [
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_600_1e-3,
        -1.609_603_3e-2,
    ] {
        p = fma::<F>(p, x2, c);
    }
    let mut q = -1.456_607_2e-5_f32;
    for c in [-2.133_740_6e-4, -1.682_827e-3, -7.373_329_2e-3, -1.426_474e-2] {
        q = fma::<F>(q, x2, c);
    }
    x * p / q
}

/// e^x for x <= 0 (softmax after subtracting the row maximum), flushing to 0 below -87.
/// Range reduction x = n ln2 + r, then a degree-6 polynomial on r (Cephes' expf): ~1 ulp.
#[inline(always)]
fn exp_neg<const F: bool>(x: f32) -> f32 {
    let x = x.max(-87.0);
    // Round x/ln2 to the nearest integer with the 1.5 * 2^23 trick; its low bits hold n.
    let shifted = fma::<F>(x, std::f32::consts::LOG2_E, 12_582_912.0);
    let n = shifted - 12_582_912.0;
    let r = fma::<F>(n, 2.121_944_4e-4, fma::<F>(n, -0.693_359_4, x));
    let mut p = 1.987_569_1e-4_f32;
    for c in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
        p = fma::<F>(p, r, c);
    }
    let e = fma::<F>(p, r * r, r) + 1.0;
    let ni = shifted.to_bits().wrapping_sub(0x4B40_0000);
    f32::from_bits(e.to_bits().wrapping_add(ni << 23))
}

const LANES: usize = 16;

/// Sum with 16 independent accumulators, so it vectorises without reassociation.
#[inline(always)]
fn sum(xs: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x;
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// x = gelu(x + b), with the exact (erf) GELU of BERT.
#[inline(always)]
fn gelu_impl<const F: bool>(xs: &mut [f32], b: &[f32]) {
    for (x, b) in xs.iter_mut().zip(b) {
        let y = *x + b;
        *x = 0.5 * y * (1.0 + erf::<F>(y * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// Replaces each x by e^(x - max) and returns the sum: a softmax row before its division.
#[inline(always)]
fn exp_shifted_impl<const F: bool>(xs: &mut [f32]) -> f32 {
    // `if` rather than `f32::max`: no NaN handling, so a plain vector max.
    let mut top = [f32::NEG_INFINITY; LANES];
    let chunks = xs.chunks_exact(LANES);
    let mut m =
        chunks.remainder().iter().fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    for c in chunks {
        for (t, &x) in top.iter_mut().zip(c) {
            *t = if x > *t { x } else { *t };
        }
    }
    m = top.iter().fold(m, |m, &x| if x > m { x } else { m });
    let mut acc = [0.0f32; LANES];
    let mut chunks = xs.chunks_exact_mut(LANES);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *x = exp_neg::<F>(*x - m);
            *a += *x;
        }
    }
    let mut tail = 0.0;
    for x in chunks.into_remainder() {
        *x = exp_neg::<F>(*x - m);
        tail += *x;
    }
    acc.iter().sum::<f32>() + tail
}

#[inline(always)]
fn layer_norm_impl<const F: bool>(xs: &mut [f32], g: &[f32], b: &[f32], eps: f32) {
    let n = xs.len() as f32;
    let mean = sum(xs) / n;
    let mut acc = [0.0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().map(|x| (x - mean) * (x - mean)).sum();
    for c in chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a = fma::<F>(x - mean, x - mean, *a);
        }
    }
    let var = (acc.iter().sum::<f32>() + tail) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, g), b) in xs.iter_mut().zip(g).zip(b) {
        *x = fma::<F>((*x - mean) * inv, *g, *b);
    }
}

/// Which compiled copy of the element-wise kernels this CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernels {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// Defines `$name` for each instruction set; `$body` is the `#[inline(always)]` kernel.
macro_rules! multiversion {
    ($(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty => $body:ident;)*) => {
        impl Kernels {
            $(
            #[inline]
            fn $name(self, $($arg: $ty),*) -> $ret {
                #[cfg(target_arch = "x86_64")]
                mod $name {
                    #[target_feature(enable = "avx2,fma")]
                    pub(super) fn avx2($($arg: $ty),*) -> $ret {
                        super::$body::<true>($($arg),*)
                    }
                    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
                    pub(super) fn avx512($($arg: $ty),*) -> $ret {
                        super::$body::<true>($($arg),*)
                    }
                }
                match self {
                    Kernels::Portable => $body::<false>($($arg),*),
                    // SAFETY: `Kernels::detect` picks these variants only when the CPU reports
                    // the instruction sets the functions are compiled for.
                    #[cfg(target_arch = "x86_64")]
                    Kernels::Avx2 => unsafe { $name::avx2($($arg),*) },
                    // SAFETY: as above, for the AVX-512 variant.
                    #[cfg(target_arch = "x86_64")]
                    Kernels::Avx512 => unsafe { $name::avx512($($arg),*) },
                }
            }
            )*
        }
    };
}

multiversion! {
    fn gelu(xs: &mut [f32], b: &[f32]) -> () => gelu_impl;
    fn exp_shifted(xs: &mut [f32]) -> f32 => exp_shifted_impl;
    fn layer_norm(xs: &mut [f32], g: &[f32], b: &[f32], eps: f32) -> () => layer_norm_impl;
}

impl Kernels {
    fn detect() -> Kernels {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
            {
                return Kernels::Avx512;
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                return Kernels::Avx2;
            }
        }
        Kernels::Portable
    }
}

#[cfg(test)]
mod tests {
    use safetensors::Dtype;

    use super::*;

    /// A small deterministic generator (xorshift) for test data.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
        fn vec(&mut self, n: usize, scale: f32) -> Vec<f32> {
            (0..n).map(|_| self.next() * scale).collect()
        }
    }

    /// erf in f64: Taylor series below 3, the continued fraction of erfc above.
    fn erf_ref(x: f64) -> f64 {
        let a = x.abs();
        let v = if a < 3.0 {
            let (mut term, mut total, mut n) = (a, a, 0.0);
            while term.abs() > 1e-17 * total.abs() {
                n += 1.0;
                term *= -a * a / n;
                total += term / (2.0 * n + 1.0);
            }
            total * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            let mut t = a;
            for k in (1..=80).rev() {
                t = a + (k as f64 / 2.0) / t;
            }
            1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * t)
        };
        v.copysign(x)
    }

    /// Every kernel copy this CPU can run.
    fn kernel_sets() -> Vec<Kernels> {
        let mut all = vec![Kernels::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                all.push(Kernels::Avx2);
            }
            if Kernels::detect() == Kernels::Avx512 {
                all.push(Kernels::Avx512);
            }
        }
        all
    }

    #[test]
    fn erf_reference_matches_known_values() {
        // Values from Python's math.erf.
        for (x, want) in [
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (3.5, 0.999_999_256_901_627_7),
            (-0.1, -0.112_462_916_018_284_9),
        ] {
            assert!((erf_ref(x) - want).abs() < 1e-14, "erf_ref({x})");
        }
    }

    #[test]
    fn erf_error_is_below_1e6() {
        let mut worst = (0.0f64, 0.0f32);
        for i in -70_000..=70_000 {
            let x = i as f32 * 1e-4;
            for got in [erf::<false>(x), erf::<true>(x)] {
                let err = (got as f64 - erf_ref(x as f64)).abs();
                if err > worst.0 {
                    worst = (err, x);
                }
            }
        }
        assert!(worst.0 < 1e-6, "erf error {:e} at {}", worst.0, worst.1);
    }

    #[test]
    fn gelu_matches_exact_erf_gelu_in_every_kernel_set() {
        let xs: Vec<f32> = (-1000..=1000).map(|i| i as f32 * 0.01).collect();
        for k in kernel_sets() {
            let mut got = xs.clone();
            let bias: Vec<f32> = (0..xs.len()).map(|i| (i % 3) as f32 - 1.0).collect();
            k.gelu(&mut got, &bias);
            for ((&x, &g), &b) in xs.iter().zip(&got).zip(&bias) {
                let x64 = (x + b) as f64;
                let want = 0.5 * x64 * (1.0 + erf_ref(x64 / std::f64::consts::SQRT_2));
                assert!((g as f64 - want).abs() < 1e-6 * x64.abs().max(1.0), "{k:?} gelu({x})");
            }
        }
    }

    #[test]
    fn exp_is_accurate_and_flushes_far_below_zero() {
        for i in 0..=870_000 {
            let x = -(i as f32) * 1e-4;
            for got in [exp_neg::<false>(x), exp_neg::<true>(x)] {
                let want = (x as f64).exp();
                assert!(((got as f64 - want) / want).abs() < 3e-7, "exp({x}) = {got}, want {want}");
            }
        }
        for x in [-87.5f32, -100.0, -1e6, f32::NEG_INFINITY] {
            let got = exp_neg::<true>(x);
            assert!((0.0..1e-37).contains(&got), "exp({x}) = {got}");
        }
    }

    #[test]
    fn softmax_rows_match_reference_at_every_length() {
        let mut rng = Rng(7);
        for k in kernel_sets() {
            for len in [1, 2, 15, 16, 17, 100, 256] {
                // A large offset checks the max subtraction.
                let xs: Vec<f32> = rng.vec(len, 8.0).iter().map(|x| x + 1000.0).collect();
                let mut got = xs.clone();
                let total = k.exp_shifted(&mut got);
                let top = xs.iter().fold(f64::MIN, |m, &x| m.max(x as f64));
                let exps: Vec<f64> = xs.iter().map(|&x| (x as f64 - top).exp()).collect();
                let want_total: f64 = exps.iter().sum();
                assert!((total as f64 - want_total).abs() < 1e-5 * want_total, "{k:?} len {len}");
                for (g, e) in got.iter().zip(&exps) {
                    assert!(
                        (*g as f64 / total as f64 - e / want_total).abs() < 1e-6,
                        "{k:?} len {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn layer_norm_matches_reference() {
        let mut rng = Rng(11);
        for k in kernel_sets() {
            for len in [7, 16, 384, 390] {
                let xs: Vec<f32> = rng.vec(len, 3.0).iter().map(|x| x + 5.0).collect();
                let (g, b) = (rng.vec(len, 1.0), rng.vec(len, 1.0));
                let mut got = xs.clone();
                k.layer_norm(&mut got, &g, &b, 1e-12);
                let n = len as f64;
                let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
                let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
                for i in 0..len {
                    let want =
                        (xs[i] as f64 - mean) / (var + 1e-12).sqrt() * g[i] as f64 + b[i] as f64;
                    assert!((got[i] as f64 - want).abs() < 1e-5, "{k:?} len {len} at {i}");
                }
            }
        }
    }

    #[test]
    fn gemm_into_follows_strides_and_accumulates() {
        let mut rng = Rng(3);
        let (m, k, n) = (5, 7, 3);
        let a_data = rng.vec(m * 10, 1.0); // a (m x k) with row stride 10
        let b_data = rng.vec(k * n * 2, 1.0); // b (k x n) stored transposed: (r, c) at c * k + r
        let a = Mat { data: &a_data, rows: m, cols: k, rs: 10, cs: 1 };
        let b = Mat { data: &b_data, rows: k, cols: n, rs: 1, cs: k };
        let mut dst = vec![1.0f32; m * 4]; // row stride 4: the last column stays untouched
        gemm_into(&mut dst, 4, a, b, true, Parallelism::None);
        for r in 0..m {
            for c in 0..n {
                let want: f32 =
                    1.0 + (0..k).map(|i| a_data[r * 10 + i] * b_data[c * k + i]).sum::<f32>();
                assert!((dst[r * 4 + c] - want).abs() < 1e-5);
            }
            assert_eq!(dst[r * 4 + 3], 1.0);
        }
    }

    #[test]
    fn panelled_weights_multiply_like_the_plain_matrix() {
        let mut rng = Rng(5);
        let (n_in, n_out, tokens) = (7, 2 * PANEL + 44, 5);
        let w = rng.vec(n_out * n_in, 1.0); // PyTorch layout: n_out x n_in
        let x = rng.vec(tokens * n_in, 1.0);
        let lin = Linear::from_torch(&w, vec![0.0; n_out], n_in, n_out, Precision::F32, None);
        let mut dst = vec![0.5f32; tokens * n_out];
        lin.apply(&x, tokens, &mut dst, true, Parallelism::None, &mut lowp::Scratch::default());
        for t in 0..tokens {
            for o in 0..n_out {
                let want = 0.5 + (0..n_in).map(|k| x[t * n_in + k] * w[o * n_in + k]).sum::<f32>();
                assert!((dst[t * n_out + o] - want).abs() < 1e-5, "token {t}, output {o}");
            }
        }
    }

    #[test]
    fn dealing_balances_tokens_and_keeps_every_text() {
        let texts: Vec<Vec<u32>> = (1..=10).map(|n| vec![0; n]).collect();
        let ids: Vec<&[u32]> = texts.iter().map(Vec::as_slice).collect();
        let order: Vec<usize> = (0..10).rev().collect(); // longest first
        let batches = deal(&ids, &order, 3);
        assert_eq!(batches.len(), 3);
        let mut seen: Vec<usize> = batches.iter().flat_map(|b| b.0.clone()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        for (positions, tokens) in &batches {
            assert_eq!(*tokens, positions.iter().map(|&n| n + 1).sum::<usize>());
            assert!((18..=19).contains(tokens), "{batches:?}");
        }
        assert_eq!(deal(&ids, &order[..2], 5).len(), 2, "empty batches are dropped");
    }

    // A tiny random BERT, checked against a plain f64 forward pass: exercises loading, the
    // unpadded batching, both threading schemes and the pooling without the real model.

    const TINY: (usize, usize, usize, usize, usize, usize) = (8, 2, 12, 2, 23, 40); // hidden, heads, inter, layers, vocab, positions

    fn tiny_config() -> Config {
        let (hidden, heads, inter, layers, vocab, pos) = TINY;
        Config {
            hidden_size: hidden,
            num_attention_heads: heads,
            num_hidden_layers: layers,
            intermediate_size: inter,
            max_position_embeddings: pos,
            vocab_size: vocab,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
            hidden_act: "gelu".into(),
            position_embedding_type: Some("absolute".into()),
        }
    }

    fn tiny_tensors() -> Vec<(String, Vec<usize>, Vec<f32>)> {
        let (h, _, i, layers, vocab, pos) = TINY;
        let mut rng = Rng(42);
        let mut t = Vec::new();
        let mut add = |name: String, shape: Vec<usize>, scale: f32, offset: f32| {
            let n = shape.iter().product();
            let data = rng.vec(n, scale).iter().map(|x| x + offset).collect();
            t.push((name, shape, data));
        };
        add("embeddings.word_embeddings.weight".into(), vec![vocab, h], 1.0, 0.0);
        add("embeddings.position_embeddings.weight".into(), vec![pos, h], 0.5, 0.0);
        add("embeddings.token_type_embeddings.weight".into(), vec![2, h], 0.5, 0.0);
        add("embeddings.LayerNorm.weight".into(), vec![h], 0.2, 1.0);
        add("embeddings.LayerNorm.bias".into(), vec![h], 0.2, 0.0);
        for l in 0..layers {
            let p = format!("encoder.layer.{l}.");
            for (name, o, n) in [
                ("attention.self.query", h, h),
                ("attention.self.key", h, h),
                ("attention.self.value", h, h),
                ("attention.output.dense", h, h),
                ("intermediate.dense", i, h),
                ("output.dense", h, i),
            ] {
                add(format!("{p}{name}.weight"), vec![o, n], 0.8, 0.0);
                add(format!("{p}{name}.bias"), vec![o], 0.3, 0.0);
            }
            for ln in ["attention.output.LayerNorm", "output.LayerNorm"] {
                add(format!("{p}{ln}.weight"), vec![h], 0.2, 1.0);
                add(format!("{p}{ln}.bias"), vec![h], 0.2, 0.0);
            }
        }
        t
    }

    fn to_safetensors(tensors: &[(String, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
        let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
            .iter()
            .map(|(n, s, d)| {
                (n.clone(), s.clone(), d.iter().flat_map(|x| x.to_le_bytes()).collect())
            })
            .collect();
        let views = bytes.iter().map(|(n, s, b)| {
            (n.clone(), safetensors::tensor::TensorView::new(Dtype::F32, s.clone(), b).unwrap())
        });
        safetensors::serialize(views, None).unwrap()
    }

    /// The textbook forward pass in f64, one text at a time.
    fn reference(tensors: &[(String, Vec<usize>, Vec<f32>)], ids: &[u32]) -> Vec<f64> {
        let (h, heads, i, layers, _, _) = TINY;
        let w = |name: &str| -> Vec<f64> {
            tensors.iter().find(|t| t.0 == name).unwrap().2.iter().map(|&x| x as f64).collect()
        };
        let len = ids.len();
        let ln = |x: &mut [f64], g: &[f64], b: &[f64]| {
            let mean = x.iter().sum::<f64>() / h as f64;
            let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / h as f64;
            for j in 0..h {
                x[j] = (x[j] - mean) / (var + 1e-12).sqrt() * g[j] + b[j];
            }
        };
        // y (len x out) = x (len x n_in) W^T + b, W in PyTorch layout (out x n_in).
        let lin = |x: &[f64], n_in: usize, name: &str| -> Vec<f64> {
            let (wt, b) = (w(&format!("{name}.weight")), w(&format!("{name}.bias")));
            let out = b.len();
            let mut y = vec![0.0; len * out];
            for t in 0..len {
                for o in 0..out {
                    y[t * out + o] =
                        b[o] + (0..n_in).map(|k| x[t * n_in + k] * wt[o * n_in + k]).sum::<f64>();
                }
            }
            y
        };
        let (word, pos, typ) = (
            w("embeddings.word_embeddings.weight"),
            w("embeddings.position_embeddings.weight"),
            w("embeddings.token_type_embeddings.weight"),
        );
        let mut x = vec![0.0; len * h];
        for (t, &id) in ids.iter().enumerate() {
            for j in 0..h {
                x[t * h + j] = word[id as usize * h + j] + pos[t * h + j] + typ[j];
            }
            ln(
                &mut x[t * h..][..h],
                &w("embeddings.LayerNorm.weight"),
                &w("embeddings.LayerNorm.bias"),
            );
        }
        let dh = h / heads;
        for l in 0..layers {
            let p = format!("encoder.layer.{l}.");
            let q = lin(&x, h, &format!("{p}attention.self.query"));
            let k = lin(&x, h, &format!("{p}attention.self.key"));
            let v = lin(&x, h, &format!("{p}attention.self.value"));
            let mut ctx = vec![0.0; len * h];
            for hd in 0..heads {
                for a in 0..len {
                    let s: Vec<f64> = (0..len)
                        .map(|b| {
                            (0..dh)
                                .map(|d| q[a * h + hd * dh + d] * k[b * h + hd * dh + d])
                                .sum::<f64>()
                                / (dh as f64).sqrt()
                        })
                        .collect();
                    let top = s.iter().cloned().fold(f64::MIN, f64::max);
                    let e: Vec<f64> = s.iter().map(|v| (v - top).exp()).collect();
                    let z: f64 = e.iter().sum();
                    for d in 0..dh {
                        ctx[a * h + hd * dh + d] =
                            (0..len).map(|b| e[b] / z * v[b * h + hd * dh + d]).sum();
                    }
                }
            }
            let o = lin(&ctx, h, &format!("{p}attention.output.dense"));
            for j in 0..len * h {
                x[j] += o[j];
            }
            for t in 0..len {
                ln(
                    &mut x[t * h..][..h],
                    &w(&format!("{p}attention.output.LayerNorm.weight")),
                    &w(&format!("{p}attention.output.LayerNorm.bias")),
                );
            }
            let mut up = lin(&x, h, &format!("{p}intermediate.dense"));
            for u in &mut up {
                *u = 0.5 * *u * (1.0 + erf_ref(*u / std::f64::consts::SQRT_2));
            }
            let down = lin(&up, i, &format!("{p}output.dense"));
            for j in 0..len * h {
                x[j] += down[j];
            }
            for t in 0..len {
                ln(
                    &mut x[t * h..][..h],
                    &w(&format!("{p}output.LayerNorm.weight")),
                    &w(&format!("{p}output.LayerNorm.bias")),
                );
            }
        }
        let mut pooled: Vec<f64> =
            (0..h).map(|j| (0..len).map(|t| x[t * h + j]).sum::<f64>() / len as f64).collect();
        let norm = pooled.iter().map(|v| v * v).sum::<f64>().sqrt();
        pooled.iter_mut().for_each(|v| *v /= norm);
        pooled
    }

    fn tiny_texts(n: usize) -> Vec<Vec<u32>> {
        let (_, _, _, _, vocab, pos) = TINY;
        (0..n)
            .map(|t| (0..1 + (t * 7) % pos).map(|j| ((t * 31 + j * 17) % vocab) as u32).collect())
            .collect()
    }

    #[test]
    fn tiny_model_matches_f64_reference_alone_batched_and_threaded() {
        let tensors = tiny_tensors();
        let enc =
            Encoder::from_parts(&tiny_config(), &to_safetensors(&tensors), Precision::F32, &[])
                .unwrap();
        assert_eq!(enc.hidden(), TINY.0);
        // Enough tokens for many batches (the whole-batch-per-thread path) ...
        let texts = tiny_texts(300);
        let refs: Vec<&[u32]> = texts.iter().map(Vec::as_slice).collect();
        let want: Vec<Vec<f64>> = texts.iter().map(|t| reference(&tensors, t)).collect();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let got = pool.install(|| enc.encode(&refs));
            // ... and single texts and small groups (the split-every-step path).
            let alone: Vec<Vec<f32>> =
                refs.iter().take(20).map(|t| pool.install(|| enc.encode(&[t])).remove(0)).collect();
            let few = pool.install(|| enc.encode(&refs[..5]));
            for (n, row) in got.iter().chain(&alone).chain(&few).enumerate() {
                let w = &want[if n < 300 {
                    n
                } else if n < 320 {
                    n - 300
                } else {
                    n - 320
                }];
                let err = row.iter().zip(w).map(|(a, b)| (*a as f64 - b).abs()).fold(0.0, f64::max);
                assert!(err < 1e-5, "{threads} threads, row {n}: max error {err:e}");
            }
        }
    }

    #[test]
    fn tiny_model_in_low_precision_stays_close_to_the_f64_reference() {
        let tensors = tiny_tensors();
        let texts = tiny_texts(40);
        let refs: Vec<&[u32]> = texts.iter().map(Vec::as_slice).collect();
        // bf16 keeps about 3 significant digits per operand; int8 about 2, with only 8 channels
        // per token to spread a scale over (the real model's figures are in `local.rs`).
        for (precision, least) in
            [(Precision::Bf16, 0.999), (Precision::Amx, 0.999), (Precision::Int8, 0.95)]
        {
            if !precision.available() {
                continue;
            }
            let bytes = to_safetensors(&tensors);
            let enc = Encoder::from_parts(&tiny_config(), &bytes, precision, &refs[..8]).unwrap();
            assert_eq!(enc.precision(), precision);
            // Split steps on two threads, and whole batches on one (the fused steps' case).
            for threads in [2, 1] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                for (n, row) in pool.install(|| enc.encode(&refs)).iter().enumerate() {
                    let want = reference(&tensors, &texts[n]);
                    let cos: f64 = row.iter().zip(&want).map(|(a, b)| *a as f64 * b).sum();
                    assert!(cos >= least, "{precision:?}, {threads} threads, text {n}: cos {cos}");
                }
            }
        }
    }

    #[test]
    fn a_lent_workspace_leaves_nothing_behind_and_the_encoder_keeps_few() {
        let tensors = tiny_tensors();
        let texts = tiny_texts(300);
        let refs: Vec<&[u32]> = texts.iter().map(Vec::as_slice).collect();
        for precision in [Precision::F32, Precision::Bf16, Precision::Amx, Precision::Int8] {
            if !precision.available() {
                continue;
            }
            let bytes = to_safetensors(&tensors);
            let enc = Encoder::from_parts(&tiny_config(), &bytes, precision, &refs[..8]).unwrap();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            // Long texts, then short ones in the same (now larger) buffers, then long again.
            let fresh = Encoder::from_parts(&tiny_config(), &bytes, precision, &refs[..8]).unwrap();
            let short_fresh = pool.install(|| fresh.encode(&refs[..3]));
            let first = pool.install(|| enc.encode(&refs));
            let short = pool.install(|| enc.encode(&refs[..3]));
            let again = pool.install(|| enc.encode(&refs));
            assert_eq!(first, again, "{precision:?}");
            assert_eq!(short, short_fresh, "{precision:?}");
            let kept = enc.spare.lock().unwrap().len();
            assert!((1..=3).contains(&kept), "{precision:?}: {kept} workspaces kept");
        }
    }

    #[test]
    fn empty_inputs_give_zero_rows_in_place() {
        let enc = Encoder::from_parts(
            &tiny_config(),
            &to_safetensors(&tiny_tensors()),
            Precision::F32,
            &[],
        )
        .unwrap();
        assert!(enc.encode(&[]).is_empty());
        let got = enc.encode(&[&[1, 2, 3], &[], &[4]]);
        assert_eq!(got.len(), 3);
        assert!(got[1].iter().all(|&x| x == 0.0));
        assert!((got[0].iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    }

    #[test]
    #[should_panic(expected = "more than the model's 40 positions")]
    fn too_long_a_sequence_is_a_caller_bug() {
        let enc = Encoder::from_parts(
            &tiny_config(),
            &to_safetensors(&tiny_tensors()),
            Precision::F32,
            &[],
        )
        .unwrap();
        enc.encode(&[&[1; 41]]);
    }

    #[test]
    fn bad_files_are_named_in_errors() {
        let tensors = tiny_tensors();
        let err = |config: &Config, tensors: &[(String, Vec<usize>, Vec<f32>)]| {
            Encoder::from_parts(config, &to_safetensors(tensors), Precision::F32, &[]).unwrap_err()
        };
        let mut wrong = tensors.clone();
        wrong[0].1 = vec![TINY.4, TINY.0 + 1];
        wrong[0].2.extend(vec![0.0; TINY.4]);
        let e = err(&tiny_config(), &wrong);
        assert!(e.contains("`embeddings.word_embeddings.weight` has shape [23, 9]"), "{e}");
        let missing: Vec<_> = tensors
            .iter()
            .filter(|t| !t.0.contains("layer.1.output.dense.bias"))
            .cloned()
            .collect();
        let e = err(&tiny_config(), &missing);
        assert!(e.contains("no tensor `encoder.layer.1.output.dense.bias`"), "{e}");
        let e = err(&Config { hidden_act: "gelu_new".into(), ..tiny_config() }, &tensors);
        assert!(e.contains("hidden_act \"gelu_new\""), "{e}");
        let e = err(&Config { num_attention_heads: 3, ..tiny_config() }, &tensors);
        assert!(e.contains("not a multiple"), "{e}");
        let e = Encoder::from_parts(&tiny_config(), b"not safetensors", Precision::F32, &[])
            .unwrap_err();
        assert!(e.contains("not a safetensors file"), "{e}");
        let e = Encoder::new("{not json", &[], Precision::F32, &[]).unwrap_err();
        assert!(e.starts_with("`config.json` is not a BERT config"), "{e}");
        // A `bert.`-prefixed checkpoint (saved from a task model) loads too.
        let prefixed: Vec<_> =
            tensors.iter().map(|(n, s, d)| (format!("bert.{n}"), s.clone(), d.clone())).collect();
        assert!(
            Encoder::from_parts(&tiny_config(), &to_safetensors(&prefixed), Precision::F32, &[])
                .is_ok()
        );
    }
}
