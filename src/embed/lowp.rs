//! Low-precision matrix products for the encoder's dense layers: int8 (AVX-512 VNNI) and bf16
//! (AVX-512 BF16), each a hand-written register-blocked kernel, picked at run time.
//!
//! What it owns: turning a dense layer's f32 weights into a packed low-precision copy once at
//! load ([`Packed::int8`], [`Packed::bf16`]), and computing `dst (+)= x W` with it, quantising
//! or rounding the activations `x` row by row on the fly.
//!
//! What it does not do: anything but those products. Attention's own products (`Q K^T`, `P V`),
//! softmax, GELU and layer norm stay in [`super::bert`] (attention on tiles under AMX, see
//! [`super::amx::attention`]), as do biases and residuals (they
//! are in `dst` before the product accumulates onto it, or the caller's epilogue adds them to
//! a block of results, see [`Packed::apply_blocks`]). It never decides which precision runs:
//! [`Precision::detect`] says what the CPU offers and the caller chooses.
//!
//! The int8 scheme: weights are symmetric int8 per output column (scale = column max / 127);
//! activations are symmetric int8 per row (per token), computed fresh on every call, stored
//! offset by +128 as u8 because `vpdpbusd` multiplies u8 by i8. The offset is taken back out
//! exactly with each column's weight sum: `sum (q + 128) w = sum q w + 128 sum w`. The integer
//! product is exact (at most 1536 * 255 * 127 < 2^31 per sum); only the two roundings to int8
//! lose precision, and the result is `acc * row_scale * column_scale`.
//!
//! The bf16 scheme: weights and activations rounded to bf16 (round to nearest even),
//! products summed in f32 by `vdpbf16ps`.
//!
//! Layout: the weights are cut into panels of [`NR`] output columns; inside a panel, each step
//! of `k` (four input rows for int8, two for bf16) holds 4 bytes per column, 256 bytes in all:
//! exactly the four registers one step of the kernel multiplies. A micro-tile is [`MR`] rows by
//! [`NR`] columns: 24 accumulators, 4 weight registers and a broadcast, inside AVX-512's 32.
//! Weights for AMX tiles keep the panels and their bytes, in the order the tiles read them
//! ([`super::amx::tile_order`]).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use rayon::prelude::*;

use super::amx::{self, Lines};

/// Output columns per weight panel: four 16-lane registers.
pub(crate) const NR: usize = 64;

/// Rows per micro-tile: 6 x 4 accumulators + 4 weight registers + 1 broadcast fit the 32
/// registers with room to spare; 8 rows would need all 32 plus the broadcast and spill.
const MR: usize = 6;

/// Rows handled per sweep over the panels. A panel of 64 columns and 384 inputs is 24 KB and
/// stays in L1 while 8 micro-tiles of these rows reuse it.
const ROW_BLOCK: usize = 8 * MR;

/// Rows per block of [`Packed::apply_blocks`]: two tile blocks, whose f32 results (192 KiB
/// for 1,536 outputs) stay in L2 beside the weights for the pass that consumes them.
const EPILOGUE_ROWS: usize = 32;

/// Bytes per column per step of `k` in a packed panel (4 int8 or 2 bf16 weights).
pub(crate) const STEP_BYTES: usize = 4;

/// Which arithmetic the encoder's dense layers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Precision {
    /// The reference: `gemm`'s f32 products, on every CPU.
    F32,
    /// u8 x i8 products into i32 with `vpdpbusd` (AVX-512 VNNI).
    Int8,
    /// bf16 pairs into f32 with `vdpbf16ps` (AVX-512 BF16).
    Bf16,
    /// The same bf16 products on AMX tiles ([`super::amx`]), the rows left over from whole
    /// blocks of 16 padded to one: the same rounding as `Bf16`, several times the speed.
    Amx,
}

impl Precision {
    /// Whether this CPU can run `self`.
    pub(crate) fn available(self) -> bool {
        match self {
            Precision::F32 => true,
            #[cfg(target_arch = "x86_64")]
            Precision::Int8 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vnni")
            }
            #[cfg(target_arch = "x86_64")]
            Precision::Bf16 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512bf16")
            }
            #[cfg(target_arch = "x86_64")]
            Precision::Amx => Precision::Bf16.available() && amx::ready(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Whether the dense layers take bf16 rows (so a producer may round its output for them:
    /// see [`Packed::apply_prepared`]).
    pub(crate) fn is_bf16(self) -> bool {
        matches!(self, Precision::Bf16 | Precision::Amx)
    }

    /// What `auto` runs on this CPU (see [`Precision::fastest`]).
    pub(crate) fn detect() -> Precision {
        Precision::fastest(Precision::available)
    }

    /// The fastest precision among those `has` admits, in the order measured (`docs/search.md`,
    /// "Encoder precision"):
    /// - AMX tiles first: on the Intel machine they embedded 67.5 chunks/s against int8's 53.8,
    ///   and with bf16's rounding.
    /// - Then int8 before AVX-512 bf16: on the AMD EPYC int8 embedded 74.5 chunks/s against
    ///   48.9-55.2 in alternating runs (2026-12-06), and SciFact stayed within the 0.003 the
    ///   speed issue allows (hybrid nDCG@10 train 0.7429 against 0.7441, dense 0.6539
    ///   against 0.6498). Its vectors keep only cosine 0.988-0.996 to f32, which rankings do
    ///   not see; `MDVAULT_ENCODER=bf16` keeps 0.9999 where that matters more than speed.
    /// - Then bf16, then the f32 reference.
    fn fastest(has: impl Fn(Precision) -> bool) -> Precision {
        [Precision::Amx, Precision::Int8, Precision::Bf16]
            .into_iter()
            .find(|&p| has(p))
            .unwrap_or(Precision::F32)
    }

    /// Parses a setting: `auto` (the fastest available), `amx`, `int8`, `bf16` or `f32`. A named
    /// precision the CPU lacks is an error rather than a silent fallback, so a forced setting
    /// always means what it says.
    pub(crate) fn parse(setting: &str) -> Result<Precision, String> {
        let p = match setting.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => return Ok(Precision::detect()),
            "f32" => Precision::F32,
            "int8" => Precision::Int8,
            "bf16" => Precision::Bf16,
            "amx" => Precision::Amx,
            other => {
                return Err(format!(
                    "encoder precision {other:?} is not one of auto, amx, int8, bf16, f32"
                ));
            }
        };
        if p.available() {
            Ok(p)
        } else {
            Err(format!(
                "encoder precision {setting} needs CPU instructions this machine lacks \
                 (AVX-512 VNNI for int8, AVX-512 BF16 for bf16, AMX-BF16 and the kernel's \
                 leave to use its tiles for amx); use auto or f32"
            ))
        }
    }
}

/// A dense layer's weights in a low-precision packed form (see the module docs for the layout).
pub(crate) struct Packed {
    kind: Kind,
    /// `panels x steps x NR x STEP_BYTES` bytes, aligned to cache lines.
    data: Lines,
    /// Steps of `k`: `n_in` rounded up to whole steps.
    steps: usize,
    n_in: usize,
    n_out: usize,
    /// Per column, padded to whole panels (int8 only): the dequantisation scale ...
    col_scale: Vec<f32>,
    /// ... and 128 x the column's weight sum, the +128 offset's contribution to take back out.
    col_offset: Vec<i32>,
    /// Per input channel, the factor activations are multiplied by before quantising (int8
    /// with smoothing, see [`Packed::int8`]); empty for none.
    in_scale: Vec<f32>,
    /// bf16 whose whole 16-row blocks run on AMX tiles (see [`Packed::bf16`]).
    amx: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int8,
    Bf16,
}

/// Per-thread buffers for the activations in low precision: fresh ones per product would cost
/// page faults on every call.
#[derive(Default)]
pub(crate) struct Scratch {
    /// `tokens x steps x STEP_BYTES`, aligned to cache lines (rows are whole lines for every
    /// shape the tiles take).
    a: Lines,
    /// Each row's int8 scale.
    row_scale: Vec<f32>,
    /// One smoothed row before quantising.
    row: Vec<f32>,
}

/// f32 to bf16, rounding to nearest even (what `vcvtneps2bf16` does for finite inputs).
pub(crate) fn bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// `x` rounded to the nearest integer, ties to even, for `|x| <= 2^22` (a quantised weight is
/// within ±127.5). `round_ties_even` is a call to libm's `rintf` in a build for baseline
/// x86-64, and the int8 weights of MiniLM take 10.6 million of them at every load: 60 ms, a
/// third of what loading the int8 encoder costs beyond bf16. Adding and taking away 1.5·2^23
/// leaves no fraction bits, so the hardware's own rounding (to nearest even) does the work.
#[inline(always)]
fn round_small(x: f32) -> f32 {
    const SHIFT: f32 = 12_582_912.0;
    (x + SHIFT) - SHIFT
}

/// The symmetric int8 scale of a row or column whose largest magnitude is `max`.
fn int8_scale(max: f32) -> f32 {
    if max > 0.0 { max / 127.0 } else { 1.0 }
}

impl Packed {
    /// Quantises `w` (PyTorch layout: `n_out x n_in`, row-major) to int8 per output column.
    ///
    /// With `smooth` (one factor per input channel), input channel `k` of the weights is
    /// multiplied by `smooth[k]` and of the activations divided by it, which leaves the product
    /// unchanged but moves the range of a few outsized activation channels into the weights,
    /// where per-column scales absorb it (SmoothQuant's idea); see [`smoothing`].
    pub(crate) fn int8(w: &[f32], n_in: usize, n_out: usize, smooth: Option<&[f32]>) -> Packed {
        let smoothed: Vec<f32>;
        let w = match smooth {
            Some(f) => {
                assert_eq!(f.len(), n_in, "one smoothing factor per input channel");
                smoothed = w
                    .chunks_exact(n_in)
                    .flat_map(|r| r.iter().zip(f).map(|(a, b)| a * b))
                    .collect();
                &smoothed
            }
            None => w,
        };
        let in_scale = smooth.map_or(Vec::new(), |f| f.iter().map(|x| 1.0 / x).collect());
        let steps = n_in.div_ceil(4);
        let panels = n_out.div_ceil(NR);
        let mut lines = Lines::default();
        lines.fit(panels * steps * NR * STEP_BYTES);
        let data = lines.bytes_mut();
        let mut col_scale = vec![0.0f32; panels * NR];
        let mut col_offset = vec![0i32; panels * NR];
        for c in 0..n_out {
            let row = &w[c * n_in..][..n_in];
            let scale = int8_scale(row.iter().fold(0.0f32, |m, x| m.max(x.abs())));
            let (p, lane) = (c / NR, c % NR);
            let mut total = 0i32;
            for (k, &x) in row.iter().enumerate() {
                let q = round_small(x / scale).clamp(-127.0, 127.0) as i8;
                total += q as i32;
                data[((p * steps + k / 4) * NR + lane) * STEP_BYTES + k % 4] = q as u8;
            }
            col_scale[c] = scale;
            col_offset[c] = 128 * total;
        }
        Packed {
            kind: Kind::Int8,
            data: lines,
            steps,
            n_in,
            n_out,
            col_scale,
            col_offset,
            in_scale,
            amx: false,
        }
    }

    /// Rounds `w` (PyTorch layout: `n_out x n_in`, row-major) to bf16. With `amx` (only after
    /// [`Precision::Amx`] was found available), the products run on AMX tiles where the shape
    /// allows ([`amx::fits`]; every MiniLM layer does), each panel's bytes in the tiles' order.
    pub(crate) fn bf16(w: &[f32], n_in: usize, n_out: usize, amx: bool) -> Packed {
        let steps = n_in.div_ceil(2);
        let panels = n_out.div_ceil(NR);
        let mut lines = Lines::default();
        lines.fit(panels * steps * NR * STEP_BYTES);
        let data = lines.bytes_mut();
        let tiles = amx && amx::fits(n_in, n_out);
        for c in 0..n_out {
            let (p, lane) = (c / NR, c % NR);
            for (k, &x) in w[c * n_in..][..n_in].iter().enumerate() {
                // Under tiles, each panel's bytes are reordered so that every B tile is 1 KiB
                // in one piece (see `amx::tile_order`); the vector kernel never reads them.
                let in_panel = if tiles {
                    amx::tile_order(steps, k / 2, lane)
                } else {
                    (k / 2 * NR + lane) * STEP_BYTES
                };
                let at = p * steps * NR * STEP_BYTES + in_panel + (k % 2) * 2;
                data[at..at + 2].copy_from_slice(&bf16_bits(x).to_le_bytes());
            }
        }
        Packed {
            kind: Kind::Bf16,
            data: lines,
            steps,
            n_in,
            n_out,
            col_scale: Vec::new(),
            col_offset: Vec::new(),
            in_scale: Vec::new(),
            amx: tiles,
        }
    }

    /// `dst (tokens x n_out) = x (tokens x n_in) W`, plus dst's old value when `acc`. With
    /// `par`, the panels are split across the current rayon pool.
    ///
    /// # Panics
    ///
    /// If a slice is shorter than the shapes say, or the CPU lacks the instructions (callers
    /// pack only after [`Precision::available`] said yes).
    pub(crate) fn apply(
        &self,
        x: &[f32],
        tokens: usize,
        dst: &mut [f32],
        acc: bool,
        par: bool,
        scratch: &mut Scratch,
    ) {
        assert!(x.len() >= tokens * self.n_in, "activations shorter than tokens x n_in");
        if tokens == 0 {
            return;
        }
        self.prepare(x, tokens, par, scratch);
        self.run(scratch.a.bytes(), &scratch.row_scale, tokens, dst, acc, par);
    }

    /// Whether [`Packed::apply_prepared`] takes this layer: its input is plain bf16 rows.
    pub(crate) fn takes_bf16(&self) -> bool {
        self.kind == Kind::Bf16
    }

    /// The width in bytes of one prepared activation row (bf16: `2 n_in`, padded to whole
    /// steps): what [`Packed::apply_prepared`] reads, and what a producer writes for it.
    pub(crate) fn prepared_row_bytes(&self) -> usize {
        self.steps * STEP_BYTES
    }

    /// [`Packed::apply`] on activations already rounded to bf16 by the caller: `tokens` rows of
    /// [`Packed::prepared_row_bytes`] each, on this thread. Lets a producer round its output
    /// once, in the pass that made it, instead of writing f32 that `apply` reads back to round.
    ///
    /// # Panics
    ///
    /// If the layer is not bf16 ([`Packed::takes_bf16`]) or `a` holds fewer rows.
    pub(crate) fn apply_prepared(&self, a: &[u8], tokens: usize, dst: &mut [f32], acc: bool) {
        assert!(self.takes_bf16(), "prepared bf16 rows given to an {:?} layer", self.kind);
        assert!(a.len() >= tokens * self.prepared_row_bytes(), "prepared rows too few");
        if tokens > 0 {
            self.run(a, &[], tokens, dst, acc, false);
        }
    }

    /// `x W` for [`EPILOGUE_ROWS`] rows at a time into `block` (f32, reused, `rows x n_out`),
    /// each block handed to `each(first_row, block)` at once, while it is still in cache. For
    /// results that are consumed by a pass of their own (a bias and a rounding, or GELU): that
    /// pass then reads a block in L2 instead of a whole batch's activations from memory, and
    /// the f32 results are never written out. One thread.
    pub(crate) fn apply_blocks(
        &self,
        x: &[f32],
        tokens: usize,
        scratch: &mut Scratch,
        block: &mut Vec<f32>,
        mut each: impl FnMut(usize, &mut [f32]),
    ) {
        assert!(x.len() >= tokens * self.n_in, "activations shorter than tokens x n_in");
        if tokens == 0 {
            return;
        }
        self.prepare(x, tokens, false, scratch);
        let a_rs = self.prepared_row_bytes();
        for r0 in (0..tokens).step_by(EPILOGUE_ROWS) {
            let rows = (tokens - r0).min(EPILOGUE_ROWS);
            block.resize(rows * self.n_out, 0.0);
            let a = &scratch.a.bytes()[r0 * a_rs..];
            let scale = scratch.row_scale.get(r0..).unwrap_or(&[]);
            self.run(a, scale, rows, block, false, false);
            each(r0, block);
        }
    }

    /// The products over every panel of prepared rows `a` (with their int8 `row_scale`, empty
    /// for bf16): `dst (+)= a W`, the panels split across the pool when `par`.
    fn run(
        &self,
        a: &[u8],
        row_scale: &[f32],
        tokens: usize,
        dst: &mut [f32],
        acc: bool,
        par: bool,
    ) {
        assert!(dst.len() >= tokens * self.n_out, "destination shorter than tokens x n_out");
        assert!(a.len() >= tokens * self.prepared_row_bytes(), "prepared rows too few");
        assert!(self.kind == Kind::Bf16 || row_scale.len() >= tokens, "int8 rows without scales");
        let wanted = match self.kind {
            Kind::Int8 => Precision::Int8,
            Kind::Bf16 if self.amx => Precision::Amx,
            Kind::Bf16 => Precision::Bf16,
        };
        assert!(wanted.available(), "{wanted:?} products on a CPU without the instructions");
        let panels = self.n_out.div_ceil(NR);
        let out = Out { ptr: dst.as_mut_ptr(), rs: self.n_out };
        let run = |p0: usize, p1: usize| {
            // SAFETY: the CPU has the instructions (asserted above); `a` holds `tokens`
            // prepared rows (and int8 their scales); `dst` holds `tokens x n_out` (asserted
            // above) and every call gets its own panels, so no two write the same element.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                self.panels(a, row_scale, tokens, p0..p1, out, acc)
            };
            #[cfg(not(target_arch = "x86_64"))]
            unreachable!("{p0}..{p1}: no low-precision kernels off x86-64");
        };
        let threads = rayon::current_num_threads();
        if par && threads > 1 && panels > 1 {
            let pieces = threads.min(panels);
            (0..pieces)
                .into_par_iter()
                .for_each(|i| run(i * panels / pieces, (i + 1) * panels / pieces));
        } else {
            run(0, panels);
        }
    }

    /// Fills `scratch` with `x` in the kernel's input form: u8 (+128) with per-row scales for
    /// int8, bf16 for bf16; each row padded with zeros to whole steps.
    fn prepare(&self, x: &[f32], tokens: usize, par: bool, scratch: &mut Scratch) {
        let width = self.steps * STEP_BYTES;
        scratch.a.fit(tokens * width);
        scratch.row_scale.resize(tokens, 0.0);
        let n_in = self.n_in;
        let (kind, in_scale) = (self.kind, &self.in_scale[..]);
        let one = |tmp: &mut Vec<f32>, (row, (a, s)): (&[f32], (&mut [u8], &mut f32))| match kind {
            Kind::Int8 if in_scale.is_empty() => *s = quantise_row(row, a),
            Kind::Int8 => {
                tmp.clear();
                tmp.extend(row.iter().zip(in_scale).map(|(x, f)| x * f));
                *s = quantise_row(tmp, a);
            }
            Kind::Bf16 => round_row(row, a),
        };
        let rows = x[..tokens * n_in].chunks_exact(n_in);
        let outs = scratch.a.bytes_mut().chunks_exact_mut(width).zip(scratch.row_scale.iter_mut());
        if par && tokens >= 64 {
            rows.collect::<Vec<_>>()
                .into_par_iter()
                .zip(outs.collect::<Vec<_>>())
                .for_each_init(Vec::new, one);
        } else {
            let tmp = &mut scratch.row;
            rows.zip(outs).for_each(|r| one(tmp, r));
        }
    }

    /// Runs the kernel over panels `ps` for every row.
    ///
    /// # Safety
    ///
    /// The CPU has the kernel's instructions; `a` holds `tokens` prepared rows; `out` points at
    /// `tokens x n_out` writable floats of which no other thread touches the columns of `ps`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn panels(
        &self,
        a: &[u8],
        row_scale: &[f32],
        tokens: usize,
        ps: std::ops::Range<usize>,
        out: Out,
        acc: bool,
    ) {
        let a_rs = self.steps * STEP_BYTES;
        let panel_bytes = self.steps * NR * STEP_BYTES;
        // Whole 16-row blocks go to the tiles, and so do the rows left over (a short query's
        // every row), padded to a block: a tile block of zero rows costs less than a tenth of
        // those rows on the AVX-512 kernel, which took ~4% of a build's time for at most 15
        // rows a batch. Without tiles, every row runs on AVX-512.
        let tiled = if self.amx { tokens - tokens % amx::ROWS } else { 0 };
        if self.amx && tiled < tokens {
            // SAFETY: as this function's own contract, for rows `tiled..tokens`.
            unsafe {
                self.tail_on_tiles(&a[tiled * a_rs..], tokens - tiled, ps.clone(), out, tiled, acc)
            };
        }
        if tiled > 0 {
            let op = amx::Operands {
                a,
                a_rs,
                b: self.data.bytes(),
                n_in: self.n_in,
                dst: out.ptr,
                dst_rs: out.rs,
                acc,
            };
            // SAFETY: `self.amx` is set only for shapes that fit and after `Precision::Amx`
            // was available (which asked for the tiles); the rest is the caller's promise.
            unsafe { amx::product(&op, tiled, ps.clone()) };
        }
        let vector_rows = if self.amx { tokens..tokens } else { 0..tokens };
        for r0 in vector_rows.step_by(ROW_BLOCK) {
            let r_end = (r0 + ROW_BLOCK).min(tokens);
            for p in ps.clone() {
                let b = &self.data.bytes()[p * panel_bytes..][..panel_bytes];
                let c0 = p * NR;
                let valid = (self.n_out - c0).min(NR);
                for m0 in (r0..r_end).step_by(MR) {
                    let t = Tile {
                        a: a[m0 * a_rs..].as_ptr(),
                        a_rs,
                        b: b.as_ptr(),
                        steps: self.steps,
                        dst: out.ptr.wrapping_add(m0 * out.rs + c0),
                        dst_rs: out.rs,
                        valid,
                        acc,
                        // bf16 has no row scales (an empty slice) and never reads them.
                        row_scale: row_scale.get(m0..).map_or(std::ptr::null(), |s| s.as_ptr()),
                        col_scale: self
                            .col_scale
                            .get(c0..)
                            .map_or(std::ptr::null(), |s| s.as_ptr()),
                        col_offset: self
                            .col_offset
                            .get(c0..)
                            .map_or(std::ptr::null(), |s| s.as_ptr()),
                    };
                    let rows = (r_end - m0).min(MR);
                    // SAFETY: as promised by the caller; the tile's rows and columns lie inside
                    // the buffers (rows < tokens, columns < valid).
                    unsafe {
                        match (self.kind, rows) {
                            (Kind::Int8, 6) => tile_int8::<6>(&t),
                            (Kind::Int8, 5) => tile_int8::<5>(&t),
                            (Kind::Int8, 4) => tile_int8::<4>(&t),
                            (Kind::Int8, 3) => tile_int8::<3>(&t),
                            (Kind::Int8, 2) => tile_int8::<2>(&t),
                            (Kind::Int8, _) => tile_int8::<1>(&t),
                            (Kind::Bf16, 6) => tile_bf16::<6>(&t),
                            (Kind::Bf16, 5) => tile_bf16::<5>(&t),
                            (Kind::Bf16, 4) => tile_bf16::<4>(&t),
                            (Kind::Bf16, 3) => tile_bf16::<3>(&t),
                            (Kind::Bf16, 2) => tile_bf16::<2>(&t),
                            (Kind::Bf16, _) => tile_bf16::<1>(&t),
                        }
                    }
                }
            }
        }
    }

    /// Rows `first..first + rows` (fewer than a tile block) on the tiles: copied into a block
    /// padded with zero rows, and their results (with the destination's old values under
    /// `acc`) through a block of this thread's, of which only the real rows are copied back.
    ///
    /// # Safety
    ///
    /// As [`Packed::panels`], with the tiles available ([`Packed::amx`] set) and `a` holding
    /// the `rows` prepared rows.
    #[cfg(target_arch = "x86_64")]
    unsafe fn tail_on_tiles(
        &self,
        a: &[u8],
        rows: usize,
        ps: std::ops::Range<usize>,
        out: Out,
        first: usize,
        acc: bool,
    ) {
        thread_local! {
            static BLOCK: std::cell::RefCell<(Lines, Vec<f32>)> = Default::default();
        }
        let a_rs = self.steps * STEP_BYTES;
        let (c0, c1) = (ps.start * NR, (ps.end * NR).min(self.n_out));
        BLOCK.with_borrow_mut(|(a16, c16)| {
            a16.fit(amx::ROWS * a_rs);
            let (real, pad) = a16.bytes_mut().split_at_mut(rows * a_rs);
            real.copy_from_slice(&a[..rows * a_rs]);
            pad.fill(0);
            c16.resize(amx::ROWS * out.rs, 0.0);
            for r in 0..rows {
                let dst = &mut c16[r * out.rs..][c0..c1];
                if acc {
                    // SAFETY: row `first + r` of the destination, columns of this thread's
                    // panels (the caller's contract), which no other thread writes meanwhile.
                    let old = unsafe {
                        std::slice::from_raw_parts(out.ptr.add((first + r) * out.rs + c0), c1 - c0)
                    };
                    dst.copy_from_slice(old);
                }
            }
            let op = amx::Operands {
                a: a16.bytes(),
                a_rs,
                b: self.data.bytes(),
                n_in: self.n_in,
                dst: c16.as_mut_ptr(),
                dst_rs: out.rs,
                acc,
            };
            // SAFETY: the tiles are available (`self.amx`); `a16` holds one block of rows,
            // `c16` a block of destination rows, both this thread's own.
            unsafe { amx::product(&op, amx::ROWS, ps) };
            for r in 0..rows {
                let src = &c16[r * out.rs..][c0..c1];
                // SAFETY: as above: this thread's columns of a destination row, which does not
                // overlap the thread's own block.
                unsafe {
                    let to = out.ptr.add((first + r) * out.rs + c0);
                    std::ptr::copy_nonoverlapping(src.as_ptr(), to, c1 - c0);
                }
            }
        });
    }
}

/// SmoothQuant's factors for one layer: `s_k = sqrt(max |x_k| / max |w_k|)` per input channel
/// `k`, from the largest activation seen in calibration and the largest weight of that input.
/// The square root splits the range evenly between the two int8 roundings. Channels never seen
/// active or with all-zero weights keep factor 1.
pub(crate) fn smoothing(act_max: &[f32], w: &[f32], n_in: usize) -> Vec<f32> {
    let mut w_max = vec![0.0f32; n_in];
    for row in w.chunks_exact(n_in) {
        w_max.iter_mut().zip(row).for_each(|(m, x)| *m = m.max(x.abs()));
    }
    act_max
        .iter()
        .zip(&w_max)
        .map(|(&a, &w)| if a > 0.0 && w > 0.0 { (a / w).sqrt() } else { 1.0 })
        .collect()
}

/// The destination matrix, shared by the threads that each write their own columns.
#[derive(Clone, Copy)]
struct Out {
    ptr: *mut f32,
    rs: usize,
}

// SAFETY: `Out` is only handed to threads that write disjoint column ranges (see `apply`).
unsafe impl Send for Out {}
// SAFETY: as above.
unsafe impl Sync for Out {}

/// One micro-tile's operands: up to `MR` rows of prepared activations against one panel.
struct Tile {
    a: *const u8,
    a_rs: usize,
    b: *const u8,
    steps: usize,
    dst: *mut f32,
    dst_rs: usize,
    /// Columns of the panel that exist (the rest are padding and not stored).
    valid: usize,
    acc: bool,
    row_scale: *const f32,
    col_scale: *const f32,
    col_offset: *const i32,
}

/// The store mask for the `j`-th 16-column register of a panel with `valid` real columns.
#[inline(always)]
fn lane_mask(valid: usize, j: usize) -> u16 {
    let n = valid.saturating_sub(16 * j).min(16);
    if n == 16 { u16::MAX } else { (1u16 << n) - 1 }
}

/// Symmetric int8 quantisation of one row, stored +128 as u8 into `out` (zero-padded past the
/// row); returns the row's scale.
pub(crate) fn quantise_row(row: &[f32], out: &mut [u8]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if Precision::Int8.available() {
        // SAFETY: checked just above.
        return unsafe { quantise_row_avx512(row, out) };
    }
    let scale = int8_scale(row.iter().fold(0.0f32, |m, x| m.max(x.abs())));
    let inv = 1.0 / scale;
    for (o, &x) in out.iter_mut().zip(row) {
        *o = ((x * inv).round_ties_even().clamp(-127.0, 127.0) as i32 + 128) as u8;
    }
    out[row.len()..].fill(0);
    scale
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn quantise_row_avx512(row: &[f32], out: &mut [u8]) -> f32 {
    let chunks = row.chunks_exact(16);
    let tail = chunks.remainder();
    let mut top = _mm512_setzero_ps();
    for c in chunks.clone() {
        // SAFETY: `c` holds 16 floats.
        let v = unsafe { _mm512_loadu_ps(c.as_ptr()) };
        top = _mm512_max_ps(top, _mm512_abs_ps(v));
    }
    let max = tail.iter().fold(_mm512_reduce_max_ps(top), |m, x| m.max(x.abs()));
    let scale = int8_scale(max);
    // The same `x * inv` as the portable loop, so both round alike.
    let inv = 1.0 / scale;
    let vinv = _mm512_set1_ps(inv);
    let offset = _mm512_set1_epi32(128);
    for (i, c) in chunks.enumerate() {
        // SAFETY: `c` holds 16 floats and `out` at least `row.len()` bytes.
        unsafe {
            let v = _mm512_mul_ps(_mm512_loadu_ps(c.as_ptr()), vinv);
            // Default rounding (MXCSR): to nearest even; |v| <= 127 by the choice of scale.
            let q = _mm512_add_epi32(_mm512_cvtps_epi32(v), offset);
            _mm_storeu_si128(out[16 * i..].as_mut_ptr().cast(), _mm512_cvtusepi32_epi8(q));
        }
    }
    let done = row.len() - tail.len();
    for (o, &x) in out[done..].iter_mut().zip(tail) {
        *o = ((x * inv).round_ties_even().clamp(-127.0, 127.0) as i32 + 128) as u8;
    }
    out[row.len()..].fill(0);
    scale
}

/// One row rounded to bf16 into `out` (little-endian pairs of bytes, zero-padded past the row).
pub(crate) fn round_row(row: &[f32], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if Precision::Bf16.available() {
        // SAFETY: checked just above.
        return unsafe { round_row_avx512(row, out) };
    }
    round_row_portable(row, out);
}

/// [`round_row`] without special instructions: also the rows' tails and the tests' reference.
fn round_row_portable(row: &[f32], out: &mut [u8]) {
    for (o, &x) in out.chunks_exact_mut(2).zip(row) {
        o.copy_from_slice(&bf16_bits(x).to_le_bytes());
    }
    out[2 * row.len()..].fill(0);
}

/// [`round_row`] with `vcvtneps2bf16`, 16 values at a time: the scalar rounding costs about a
/// fifth of a 384-wide product's time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
fn round_row_avx512(row: &[f32], out: &mut [u8]) {
    let chunks = row.chunks_exact(16);
    let done = row.len() - chunks.remainder().len();
    for (i, c) in chunks.enumerate() {
        // SAFETY: `c` holds 16 floats and `out` at least 2 bytes per float of the row.
        unsafe {
            let v = _mm512_cvtneps_pbh(_mm512_loadu_ps(c.as_ptr()));
            _mm256_storeu_si256(
                out[32 * i..].as_mut_ptr().cast(),
                std::mem::transmute::<__m256bh, __m256i>(v),
            );
        }
    }
    round_row_portable(&row[done..], &mut out[2 * done..]);
}

/// `MR`-row int8 micro-kernel (rows = `M`).
///
/// # Safety
///
/// AVX-512 F/BW/VNNI present; `t` describes `M` readable activation rows of `steps * 4` bytes,
/// a panel of `steps * 256` bytes, `M` row scales, `NR` column scales and offsets, and `M`
/// destination rows with `valid` writable columns.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tile_int8<const M: usize>(t: &Tile) {
    let mut c = [[_mm512_setzero_si512(); 4]; M];
    for s in 0..t.steps {
        // SAFETY: inside the panel and the activation rows (see the function's contract).
        unsafe {
            let bp = t.b.add(s * NR * STEP_BYTES);
            let b = [
                _mm512_loadu_si512(bp.cast()),
                _mm512_loadu_si512(bp.add(64).cast()),
                _mm512_loadu_si512(bp.add(128).cast()),
                _mm512_loadu_si512(bp.add(192).cast()),
            ];
            for (r, cr) in c.iter_mut().enumerate() {
                let a = _mm512_set1_epi32(
                    t.a.add(r * t.a_rs + s * STEP_BYTES).cast::<i32>().read_unaligned(),
                );
                for j in 0..4 {
                    cr[j] = _mm512_dpbusd_epi32(cr[j], a, b[j]);
                }
            }
        }
    }
    for (r, cr) in c.iter().enumerate() {
        // SAFETY: as above; stores are masked to the valid columns.
        unsafe {
            let rs = _mm512_set1_ps(*t.row_scale.add(r));
            let d = t.dst.add(r * t.dst_rs);
            for (j, &sum) in cr.iter().enumerate() {
                let m = lane_mask(t.valid, j);
                let off = _mm512_loadu_si512(t.col_offset.add(16 * j).cast());
                let cs = _mm512_loadu_ps(t.col_scale.add(16 * j));
                let v = _mm512_cvtepi32_ps(_mm512_sub_epi32(sum, off));
                let mut y = _mm512_mul_ps(v, _mm512_mul_ps(rs, cs));
                if t.acc {
                    y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(m, d.add(16 * j)));
                }
                _mm512_mask_storeu_ps(d.add(16 * j), m, y);
            }
        }
    }
}

/// `MR`-row bf16 micro-kernel (rows = `M`).
///
/// # Safety
///
/// AVX-512 F/BW/BF16 present; `t` describes `M` readable activation rows of `steps * 4` bytes,
/// a panel of `steps * 256` bytes and `M` destination rows with `valid` writable columns.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
unsafe fn tile_bf16<const M: usize>(t: &Tile) {
    let mut c = [[_mm512_setzero_ps(); 4]; M];
    for s in 0..t.steps {
        // SAFETY: inside the panel and the activation rows (see the function's contract).
        unsafe {
            let bp = t.b.add(s * NR * STEP_BYTES);
            let b: [__m512bh; 4] = [
                std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(bp.cast())),
                std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(bp.add(64).cast())),
                std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(bp.add(128).cast())),
                std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(bp.add(192).cast())),
            ];
            for (r, cr) in c.iter_mut().enumerate() {
                let a = std::mem::transmute::<__m512i, __m512bh>(_mm512_set1_epi32(
                    t.a.add(r * t.a_rs + s * STEP_BYTES).cast::<i32>().read_unaligned(),
                ));
                for j in 0..4 {
                    cr[j] = _mm512_dpbf16_ps(cr[j], a, b[j]);
                }
            }
        }
    }
    for (r, cr) in c.iter().enumerate() {
        // SAFETY: as above; stores are masked to the valid columns.
        unsafe {
            let d = t.dst.add(r * t.dst_rs);
            for (j, &sum) in cr.iter().enumerate() {
                let m = lane_mask(t.valid, j);
                let mut y = sum;
                if t.acc {
                    y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(m, d.add(16 * j)));
                }
                _mm512_mask_storeu_ps(d.add(16 * j), m, y);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift) for test data, in [-1, 1).
    struct Rng(u64);
    impl Rng {
        fn vec(&mut self, n: usize, scale: f32) -> Vec<f32> {
            (0..n)
                .map(|_| {
                    self.0 ^= self.0 << 13;
                    self.0 ^= self.0 >> 7;
                    self.0 ^= self.0 << 17;
                    ((self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
                })
                .collect()
        }
    }

    /// Odd shapes on purpose: inputs not a multiple of a step, outputs not a multiple of a
    /// register or a panel, token counts not a multiple of a micro-tile or a row block.
    const SHAPES: [(usize, usize, usize); 6] =
        [(1, 5, 1), (7, 387, 70), (13, 64, 130), (50, 33, 17), (6, 1536, 64), (2, 384, 1152)];

    fn portable_scale(xs: &[f32]) -> f32 {
        int8_scale(xs.iter().fold(0.0f32, |m, x| m.max(x.abs())))
    }

    /// Runs `packed` on 1 thread and (with `par`) on a pool of 3, checking both give `check`.
    fn run_both(packed: &Packed, x: &[f32], tokens: usize, start: &[f32]) -> [Vec<f32>; 2] {
        let mut out = [start.to_vec(), start.to_vec()];
        packed.apply(x, tokens, &mut out[0], true, false, &mut Scratch::default());
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        pool.install(|| packed.apply(x, tokens, &mut out[1], true, true, &mut Scratch::default()));
        out
    }

    #[test]
    fn int8_products_equal_the_integer_reference_exactly() {
        if !Precision::Int8.available() {
            return; // nothing to check on this CPU; the f32 path is what runs
        }
        let mut rng = Rng(17);
        for (tokens, n_in, n_out) in SHAPES {
            let w = rng.vec(n_out * n_in, 0.3);
            let x = rng.vec(tokens * n_in, 2.0);
            let start = rng.vec(tokens * n_out, 1.0);
            let packed = Packed::int8(&w, n_in, n_out, None);
            for got in run_both(&packed, &x, tokens, &start) {
                for t in 0..tokens {
                    let row = &x[t * n_in..][..n_in];
                    let sx = portable_scale(row);
                    // Activations multiply by the inverse scale, as the kernel does.
                    let qx: Vec<i64> =
                        row.iter().map(|v| (v * (1.0 / sx)).round_ties_even() as i64).collect();
                    for c in 0..n_out {
                        let wc = &w[c * n_in..][..n_in];
                        let sw = portable_scale(wc);
                        let dot: i64 = wc
                            .iter()
                            .zip(&qx)
                            .map(|(v, q)| (v / sw).round_ties_even() as i64 * q)
                            .sum();
                        // The integer sum is exact; the one conversion and two products are
                        // done in the same order as the kernel, so the floats agree bit for bit.
                        let want = dot as f32 * (sx * sw) + start[t * n_out + c];
                        assert_eq!(
                            got[t * n_out + c].to_bits(),
                            want.to_bits(),
                            "shape {tokens}x{n_in}x{n_out}, token {t}, column {c}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn int8_products_stay_within_the_quantisation_bound_of_f32() {
        if !Precision::Int8.available() {
            return;
        }
        let mut rng = Rng(23);
        for (tokens, n_in, n_out) in SHAPES {
            let w = rng.vec(n_out * n_in, 0.3);
            let x = rng.vec(tokens * n_in, 2.0);
            let packed = Packed::int8(&w, n_in, n_out, None);
            let mut got = vec![0.0; tokens * n_out];
            packed.apply(&x, tokens, &mut got, false, false, &mut Scratch::default());
            for t in 0..tokens {
                let row = &x[t * n_in..][..n_in];
                let sx = portable_scale(row) as f64;
                for c in 0..n_out {
                    let wc = &w[c * n_in..][..n_in];
                    let sw = portable_scale(wc) as f64;
                    let exact: f64 = row.iter().zip(wc).map(|(a, b)| *a as f64 * *b as f64).sum();
                    // Each rounding moves a value by at most half its scale:
                    // |x w - x' w'| <= |x| sw/2 + |w| sx/2 + sx sw/4, summed over k.
                    let bound: f64 = row
                        .iter()
                        .zip(wc)
                        .map(|(a, b)| {
                            (*a as f64).abs() * sw / 2.0
                                + (*b as f64).abs() * sx / 2.0
                                + sx * sw / 4.0
                        })
                        .sum();
                    let err = (got[t * n_out + c] as f64 - exact).abs();
                    assert!(
                        err <= bound * 1.001 + 1e-6,
                        "{tokens}x{n_in}x{n_out}: {err} > {bound}"
                    );
                }
            }
        }
    }

    #[test]
    fn bf16_products_match_the_rounded_inputs_summed_in_f64() {
        if !Precision::Bf16.available() {
            return;
        }
        let bf = |x: f32| f32::from_bits((bf16_bits(x) as u32) << 16) as f64;
        let mut rng = Rng(29);
        for (tokens, n_in, n_out) in SHAPES {
            let w = rng.vec(n_out * n_in, 0.3);
            let x = rng.vec(tokens * n_in, 2.0);
            let start = rng.vec(tokens * n_out, 1.0);
            let packed = Packed::bf16(&w, n_in, n_out, false);
            for got in run_both(&packed, &x, tokens, &start) {
                for t in 0..tokens {
                    for c in 0..n_out {
                        let terms = (0..n_in).map(|k| bf(x[t * n_in + k]) * bf(w[c * n_in + k]));
                        let (sum, size) = terms.fold((0.0, 0.0), |(s, m), v| (s + v, m + v.abs()));
                        let want = sum + start[t * n_out + c] as f64;
                        // Products of bf16 are exact in f32; only the f32 accumulation rounds,
                        // in its own order: a few ulps of the summed magnitudes.
                        let err = (got[t * n_out + c] as f64 - want).abs();
                        assert!(err <= 1e-5 * (size + 1.0), "{tokens}x{n_in}x{n_out}: {err}");
                    }
                }
            }
        }
    }

    /// Shapes that fit the tiles, with token counts at, under, over and far past one block
    /// of 16 rows, so both whole blocks and the padded block of the rows left over run.
    const TILE_SHAPES: [(usize, usize, usize); 6] = [
        (16, 384, 64),
        (37, 384, 1152),
        (300, 1536, 384),
        (50, 32, 128),
        (129, 64, 64),
        (5, 384, 64),
    ];

    #[test]
    fn amx_products_equal_the_avx512_bf16_products_within_summation_order() {
        if !Precision::Amx.available() {
            return; // nothing to check on this CPU; `auto` never picks the tiles here
        }
        let mut rng = Rng(41);
        for (tokens, n_in, n_out) in TILE_SHAPES {
            let w = rng.vec(n_out * n_in, 0.3);
            let x = rng.vec(tokens * n_in, 2.0);
            let start = rng.vec(tokens * n_out, 1.0);
            let tiles = Packed::bf16(&w, n_in, n_out, true);
            assert!(tiles.amx, "{n_in}x{n_out} fits the tiles");
            let vector = Packed::bf16(&w, n_in, n_out, false);
            let want = run_both(&vector, &x, tokens, &start);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            for (acc, par) in [(true, false), (true, true), (false, false), (false, true)] {
                // Without `acc` the old values must not matter: start from NaN.
                let mut got = if acc { start.clone() } else { vec![f32::NAN; start.len()] };
                let mut scratch = Scratch::default();
                pool.install(|| tiles.apply(&x, tokens, &mut got, acc, par, &mut scratch));
                for t in 0..tokens {
                    for c in 0..n_out {
                        let i = t * n_out + c;
                        let reference = want[0][i] - if acc { 0.0 } else { start[i] };
                        let size: f32 =
                            (0..n_in).map(|k| (x[t * n_in + k] * w[c * n_in + k]).abs()).sum();
                        // The same bf16 products; only the f32 sums' order differs.
                        let err = (got[i] - reference).abs();
                        assert!(
                            err <= 1e-5 * (size + 1.0),
                            "{tokens}x{n_in}x{n_out} acc {acc} par {par}, token {t}, column {c}: \
                             {} against {reference}",
                            got[i]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn blocks_and_prepared_rows_give_what_apply_gives_bit_for_bit() {
        let mut rng = Rng(53);
        let kinds = [Precision::Int8, Precision::Bf16, Precision::Amx];
        for p in kinds.into_iter().filter(|p| p.available()) {
            for (tokens, n_in, n_out) in
                [(12, 64, 128), (40, 384, 64), (70, 96, 192), (820, 8, 12), (45, 12, 8)]
            {
                let w = rng.vec(n_out * n_in, 0.3);
                let x = rng.vec(tokens * n_in, 2.0);
                let packed = match p {
                    Precision::Int8 => Packed::int8(&w, n_in, n_out, None),
                    _ => Packed::bf16(&w, n_in, n_out, p == Precision::Amx),
                };
                let mut want = vec![f32::NAN; tokens * n_out];
                packed.apply(&x, tokens, &mut want, false, false, &mut Scratch::default());
                // Blocks: every row handed over once, in order, with apply's values.
                let mut got = vec![f32::NAN; tokens * n_out];
                let (mut block, mut next) = (Vec::new(), 0);
                let mut scratch = Scratch::default();
                packed.apply_blocks(&x, tokens, &mut scratch, &mut block, |r0, rows| {
                    assert_eq!(r0, next, "{p:?}: blocks in order, none skipped");
                    next += rows.len() / n_out;
                    got[r0 * n_out..][..rows.len()].copy_from_slice(rows);
                });
                assert_eq!(next, tokens, "{p:?}: every row handed over");
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{p:?} {tokens}x{n_in}x{n_out}: blocks");
                if !packed.takes_bf16() {
                    continue;
                }
                // Prepared rows: the caller's rounding in place of apply's.
                let bytes = packed.prepared_row_bytes();
                let mut rows = vec![0u8; tokens * bytes];
                for (row, out) in x.chunks_exact(n_in).zip(rows.chunks_exact_mut(bytes)) {
                    round_row(row, out);
                }
                let mut got = vec![f32::NAN; tokens * n_out];
                packed.apply_prepared(&rows, tokens, &mut got, false);
                assert_eq!(bits(&got), bits(&want), "{p:?} {tokens}x{n_in}x{n_out}: prepared");
            }
        }
    }

    #[test]
    fn shapes_that_do_not_fit_the_tiles_run_on_avx512_alone() {
        assert!(amx::fits(384, 1152) && amx::fits(1536, 384));
        assert!(!amx::fits(387, 64) && !amx::fits(384, 70));
        let w = Rng(43).vec(70 * 387, 0.3);
        assert!(!Packed::bf16(&w, 387, 70, true).amx, "an odd shape keeps the vector kernel");
    }

    #[test]
    fn row_quantisation_agrees_between_the_vector_and_portable_code() {
        let mut rng = Rng(31);
        for len in [1, 15, 16, 17, 384, 390] {
            let row = rng.vec(len, 5.0);
            let padded = len.div_ceil(4) * 4;
            let mut got = vec![7u8; padded];
            let scale = quantise_row(&row, &mut got);
            assert_eq!(scale, portable_scale(&row));
            for (k, &x) in row.iter().enumerate() {
                let want = (x * (1.0 / scale)).round_ties_even() as i32 + 128;
                assert_eq!(got[k] as i32, want, "len {len} at {k}");
                assert!((1..=255).contains(&want));
            }
            assert!(got[len..].iter().all(|&b| b == 0), "padding is zero");
        }
        let mut zeros = [9u8; 4];
        assert_eq!(quantise_row(&[0.0; 3], &mut zeros), 1.0, "an all-zero row gets scale 1");
        assert_eq!(zeros, [128, 128, 128, 0]);
    }

    #[test]
    fn bf16_rows_round_alike_in_the_vector_and_portable_code() {
        let mut rng = Rng(37);
        for len in [1, 15, 16, 17, 384, 391] {
            let row = rng.vec(len, 3.0);
            let padded = len.div_ceil(2) * 4;
            let (mut got, mut want) = (vec![7u8; padded], vec![9u8; padded]);
            round_row(&row, &mut got);
            round_row_portable(&row, &mut want);
            want[2 * len..].fill(0);
            assert_eq!(got, want, "len {len}");
        }
    }

    #[test]
    fn bf16_rounding_is_to_nearest_even() {
        assert_eq!(bf16_bits(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even (1.0).
        assert_eq!(bf16_bits(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(bf16_bits(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(bf16_bits(-2.0), 0xc000);
    }

    #[test]
    fn precision_settings_parse_and_refuse_unknown_names() {
        assert_eq!(Precision::parse("f32"), Ok(Precision::F32));
        assert_eq!(Precision::parse("auto"), Ok(Precision::detect()));
        assert_eq!(Precision::parse(""), Ok(Precision::detect()));
        let e = Precision::parse("fp8").unwrap_err();
        assert!(e.contains("not one of auto, amx, int8, bf16, f32"), "{e}");
        for p in [Precision::Int8, Precision::Bf16, Precision::Amx] {
            let name = format!("{p:?}").to_lowercase();
            assert_eq!(Precision::parse(&name).is_ok(), p.available(), "{name}");
        }
    }

    #[test]
    fn small_rounding_is_round_ties_even_over_the_quantised_range() {
        let mut rng = Rng(0x5eed);
        let halves = (-300..=300).map(|i| i as f32 * 0.5);
        let near = halves.clone().flat_map(|h| [h.next_down(), h.next_up()]);
        let random = rng.vec(100_000, 200.0);
        for x in halves.chain(near).chain(random).chain([0.0, -0.0, 4_194_304.0, -4_194_303.5]) {
            assert_eq!(round_small(x), x.round_ties_even(), "{x}");
        }
    }

    #[test]
    fn auto_prefers_tiles_then_int8_then_bf16_then_f32() {
        use Precision::*;
        let offers = |set: &'static [Precision]| move |p: Precision| set.contains(&p);
        // Sapphire Rapids and later: every one, and the tiles win.
        assert_eq!(Precision::fastest(offers(&[Amx, Bf16, Int8])), Amx);
        // Zen 4 and 5, and an Intel CPU whose Linux refuses the tiles: int8 before bf16.
        assert_eq!(Precision::fastest(offers(&[Bf16, Int8])), Int8);
        // Ice Lake and Cascade Lake: VNNI alone.
        assert_eq!(Precision::fastest(offers(&[Int8])), Int8);
        assert_eq!(Precision::fastest(offers(&[Bf16])), Bf16);
        assert_eq!(Precision::fastest(offers(&[])), F32);
    }
}
