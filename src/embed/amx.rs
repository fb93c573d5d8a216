//! The bf16 dense products on Intel's AMX tiles (`TDPBF16PS`), for the CPUs that have them.
//!
//! What it owns: asking the kernel for the tile registers once per process ([`ready`]), and
//! computing `dst (+)= x W` for whole 16-row blocks of activations against whole 64-column
//! panels of [`super::lowp`]'s packed bf16 weights. The caller ([`super::lowp::Packed::apply`])
//! prepares the activations (rounded to bf16, rows padded to whole pairs) exactly as for its
//! AVX-512 kernel, and hands the rows left over (fewer than 16) to the tiles as one block
//! padded with zero rows.
//!
//! Why a kernel of its own: an AVX-512 `vdpbf16ps` does 32 multiply-adds; one `TDPBF16PS` does
//! 16 x 16 x 32 = 8,192 into a 16 x 16 f32 tile. The encoder's four dense products are nearly
//! all of its arithmetic, so on a CPU with AMX they run several times faster with the same
//! rounding (bf16 inputs, f32 sums; only the order of the sums differs).
//!
//! The layout is `lowp`'s panels of 64 columns, each column a bf16 pair per pair of input rows
//! (4 bytes): `TDPBF16PS`'s pair-interleaved operand. Inside a panel the bytes are in the
//! tiles' order ([`tile_order`]): a B tile (16 pair-rows of 16 columns, 16 rows of 64 bytes)
//! is 1 KiB in one piece, and the tiles one 32-column half of the panel multiplies come one
//! after the other. Read with a 256-byte stride from the plain layout, every tile load touched
//! sixteen lines spread over 4 KiB; in one piece the kernel runs 3-20% faster by shape (`bench`
//! on the Intel machine, alternating: 384x1536 1,518-1,634 to 1,801-1,985 GFLOP/s). An A tile
//! is 16 activation rows of 32 bf16 (64 bytes), read with the row stride.
//!
//! Registers: C tiles 0-3 (a 32 x 32 block of f32 results), A tiles 4-5 (two 16-row blocks),
//! B tiles 6-7 (two 16-column blocks). Rust has no tile intrinsics on stable, so the handful
//! of instructions are inline assembly; the compiler never allocates tile registers, so
//! naming them in the templates is safe.

#[cfg(target_arch = "x86_64")]
use std::arch::asm;
use std::sync::OnceLock;

// The packed layout is `lowp`'s, read as it is: its panel width and bytes per column step.
use super::lowp::{NR as PANEL, STEP_BYTES};

/// Bytes in a packed panel's row of one pair of inputs (64 columns x 4 bytes).
const PAIR_ROW: usize = PANEL * STEP_BYTES;
/// Bytes in one B tile: 16 pair-rows of 16 columns.
const TILE: usize = 1024;

/// Where, inside a packed panel of `steps` pairs of inputs, the tiles want the bf16 pair of
/// input pair `pair` and column `lane` (< 64): the panel is two 32-column halves, each its
/// tile steps in order, each step its two 16-column tiles, each tile 16 pair-rows of 64
/// bytes. A bijection onto the panel's `steps x 256` bytes (for `steps` a multiple of 16, as
/// [`fits`] makes it).
pub(crate) fn tile_order(steps: usize, pair: usize, lane: usize) -> usize {
    let (half, within) = (lane / 32, lane % 32);
    let (step, row) = (pair / ROWS, pair % ROWS);
    let tile = (half * (steps / ROWS) + step) * 2 + within / 16;
    tile * TILE + row * 64 + within % 16 * STEP_BYTES
}
/// Inputs per tile step: 16 pair-rows of the B tile.
pub(crate) const K_STEP: usize = 32;
/// Activation rows per A tile.
pub(crate) const ROWS: usize = 16;
/// Rows swept per pass over the panels: their A tiles (32 x 384 bf16, 24 KiB, for the products
/// with 384 inputs) stay in L1 while the panels stream past from L2. With 128 rows (96 KiB)
/// the activations streamed from L2 instead, likely slower because a tile load's sixteen rows
/// lie 768 bytes or more apart while a panel's lie 256 bytes apart. Measured
/// with `bench`'s kernel figure, alternating 32 and 128 in one process: 20-40% faster on the
/// 384-input shapes, about 5% on the 1,536-input one.
const ROW_BLOCK: usize = 32;

/// Whether this process may use AMX-BF16: the CPU reports AMX-TILE and AMX-BF16, and Linux
/// granted the tile data state (it must be requested before the first tile instruction, or
/// that instruction faults). Asked once; the grant holds for every thread of the process.
pub(crate) fn ready() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(request)
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn request() -> bool {
    use std::arch::x86_64::__cpuid_count;
    if __cpuid_count(0, 0).eax < 7 {
        return false; // no leaf 7: no AMX either
    }
    let leaf7 = __cpuid_count(7, 0);
    const AMX_BF16: u32 = 1 << 22;
    const AMX_TILE: u32 = 1 << 24;
    if leaf7.edx & (AMX_BF16 | AMX_TILE) != AMX_BF16 | AMX_TILE {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with this request only changes which state the kernel lets this
    // process use; it reads and writes no memory of ours.
    let granted =
        unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) };
    granted == 0
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn request() -> bool {
    false
}

/// Whether a product of this shape can run on tiles: whole tile steps of inputs and whole
/// panels of outputs (true of every MiniLM layer: 384 and 1,536 inputs; 384, 1,152 and 1,536
/// outputs). Other shapes use the AVX-512 kernel for all rows.
pub(crate) fn fits(n_in: usize, n_out: usize) -> bool {
    n_in.is_multiple_of(K_STEP) && n_out.is_multiple_of(PANEL)
}

/// One product's operands, as [`super::lowp`] laid them out.
pub(crate) struct Operands<'a> {
    /// The bf16 activations: `rows x a_rs` bytes.
    pub(crate) a: &'a [u8],
    /// Bytes per activation row (`2 n_in`).
    pub(crate) a_rs: usize,
    /// The packed weights: panels of `n_in / 2 x 256` bytes.
    pub(crate) b: &'a [u8],
    pub(crate) n_in: usize,
    /// The destination's first element and its row length in floats.
    pub(crate) dst: *mut f32,
    pub(crate) dst_rs: usize,
    /// Add onto the destination's old values rather than overwrite them.
    pub(crate) acc: bool,
}

/// The tile configuration (palette 1): eight tiles of 16 rows x 64 bytes.
#[repr(C, align(64))]
struct Config {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    bytes_per_row: [u16; 16],
    rows: [u8; 16],
}

const CONFIG: Config = Config {
    palette: 1,
    start_row: 0,
    reserved: [0; 14],
    bytes_per_row: [64, 64, 64, 64, 64, 64, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0],
    rows: [16, 16, 16, 16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0],
};

/// `dst[rows, panels] (+)= a[rows] x b[panels]` on tiles, for `rows` a multiple of [`ROWS`].
///
/// # Safety
///
/// [`ready`] returned true; [`fits`] holds for the shape; `op.a` holds `rows` rows of
/// `op.a_rs >= 2 n_in` bytes; `op.b` holds every panel of `panels`; `op.dst` points at
/// `rows x op.dst_rs` floats of which the columns of `panels` are writable by this thread and
/// by no other.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn product(op: &Operands, rows: usize, panels: std::ops::Range<usize>) {
    debug_assert!(rows.is_multiple_of(ROWS) && fits(op.n_in, PANEL));
    let panel_bytes = op.n_in / 2 * PAIR_ROW;
    // SAFETY: tile state was granted (`ready`); the configuration is valid for palette 1.
    unsafe { asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(nostack, readonly)) };
    for r0 in (0..rows).step_by(ROW_BLOCK) {
        let r_end = (r0 + ROW_BLOCK).min(rows);
        for p in panels.clone() {
            let panel = &op.b[p * panel_bytes..][..panel_bytes];
            for half in 0..2 {
                let col = p * PANEL + half * 32;
                let mut m = r0;
                while m < r_end {
                    let two = r_end - m >= 2 * ROWS;
                    // SAFETY: rows m..m+16 (or +32) lie inside `op.a` and `op.dst`; the columns
                    // col..col+32 belong to panel `p`, which this thread owns (the contract).
                    unsafe { block(op, panel, half, m, col, two) };
                    m += if two { 2 * ROWS } else { ROWS };
                }
            }
        }
    }
    // SAFETY: releases the tile state this thread configured above.
    unsafe { asm!("tilerelease", options(nostack, nomem)) };
}

/// `tileloadd tmmT, [p + s]`: 16 rows of 64 bytes from `p`, `s` bytes apart.
macro_rules! load {
    ($t:literal, $p:expr, $s:expr) => {
        asm!(concat!("tileloadd tmm", $t, ", [{p} + {s}*1]"), p = in(reg) $p, s = in(reg) $s as usize,
             options(nostack, readonly))
    };
}

/// `tilestored [p + s], tmmT`: the tile's 16 rows of 64 bytes to `p`, `s` bytes apart.
macro_rules! store {
    ($t:literal, $p:expr, $s:expr) => {
        asm!(concat!("tilestored [{p} + {s}*1], tmm", $t), p = in(reg) $p, s = in(reg) $s as usize,
             options(nostack))
    };
}

/// `tdpbf16ps tmmC, tmmA, tmmB`: C (16 x 16 f32) += A (16 x 32 bf16) B (16 pair-rows x 16).
macro_rules! dot {
    ($c:literal, $a:literal, $b:literal) => {
        asm!(concat!("tdpbf16ps tmm", $c, ", tmm", $a, ", tmm", $b), options(nostack, nomem))
    };
}

pub(crate) mod attention;
#[cfg(target_arch = "x86_64")]
pub(crate) mod rate;

/// A byte buffer aligned to cache lines, so a tile's 64-byte rows (at 64-byte multiples) never
/// straddle two lines, which would double the lines every tile load touches.
#[derive(Default)]
pub(crate) struct Lines(Vec<Line>);

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

impl Lines {
    /// Makes the buffer `n` bytes long, rounded up to whole lines: what was there stays, new
    /// lines are zero.
    pub(crate) fn fit(&mut self, n: usize) {
        self.0.resize(n.div_ceil(64), Line([0; 64]));
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: a `Line` is 64 plain bytes without padding, so the lines are that many
        // initialised bytes, borrowed as long as `self`.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), self.0.len() * 64) }
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`, borrowed mutably and uniquely through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.0.len() * 64) }
    }

    /// The buffer as floats (any bit pattern is a valid f32; lines are 4-byte aligned).
    pub(crate) fn floats_mut(&mut self) -> &mut [f32] {
        // SAFETY: as `bytes_mut`; 64-byte alignment suits f32 and 64 bytes are 16 of them.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.0.len() * 16) }
    }
}

/// One 32 x 32 block of results (16 x 32 when `!two`): C tiles 0-1 for rows `m..m+16`, 2-3 for
/// the next 16, each pair over the 32 columns at `col` (half `half` of the panel).
///
/// # Safety
///
/// As [`product`], with the tiles configured; the rows and columns named are in bounds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block(op: &Operands, panel: &[u8], half: usize, m: usize, col: usize, two: bool) {
    let c_rs = op.dst_rs * 4;
    let c0 = op.dst.wrapping_add(m * op.dst_rs + col);
    let c1 = c0.wrapping_add(ROWS * op.dst_rs);
    let (c01, c11) = (c0.wrapping_add(16), c1.wrapping_add(16));
    // SAFETY: the results lie inside the destination (the function's contract); each load
    // reads 16 rows of 64 bytes, `c_rs` apart.
    unsafe {
        if op.acc {
            load!(0, c0, c_rs);
            load!(1, c01, c_rs);
            if two {
                load!(2, c1, c_rs);
                load!(3, c11, c_rs);
            }
        } else {
            asm!(
                "tilezero tmm0",
                "tilezero tmm1",
                "tilezero tmm2",
                "tilezero tmm3",
                options(nostack, nomem)
            );
        }
    }
    let a0 = op.a[m * op.a_rs..].as_ptr();
    let a1 = a0.wrapping_add(ROWS * op.a_rs);
    let steps = op.n_in / K_STEP;
    let b0 = panel[half * steps * 2 * TILE..].as_ptr();
    let b1 = b0.wrapping_add(TILE);
    for s in 0..steps {
        let (ak, bk) = (s * 64, s * 2 * TILE);
        // SAFETY: step `s` reads inputs 32s..32s+32 of rows m..m+16 (+16), inside the
        // activations, and the step's two tiles of the panel's half (`tile_order`).
        unsafe {
            load!(4, a0.wrapping_add(ak), op.a_rs);
            load!(6, b0.wrapping_add(bk), 64usize);
            load!(7, b1.wrapping_add(bk), 64usize);
            dot!(0, 4, 6);
            dot!(1, 4, 7);
            if two {
                load!(5, a1.wrapping_add(ak), op.a_rs);
                dot!(2, 5, 6);
                dot!(3, 5, 7);
            }
        }
    }
    // SAFETY: the stores write rows m..m+16 (+16) of columns col..col+32, which the caller
    // gave this thread alone.
    unsafe {
        store!(0, c0, c_rs);
        store!(1, c01, c_rs);
        if two {
            store!(2, c1, c_rs);
            store!(3, c11, c_rs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tile_order_is_a_one_to_one_map_onto_the_panel_with_each_tile_in_one_piece() {
        for steps in [16, 192, 768] {
            let mut seen = vec![false; steps * PAIR_ROW / STEP_BYTES];
            for pair in 0..steps {
                for lane in 0..PANEL {
                    let at = tile_order(steps, pair, lane);
                    assert_eq!(at % STEP_BYTES, 0);
                    assert!(!std::mem::replace(&mut seen[at / STEP_BYTES], true), "{pair} {lane}");
                    // A tile's 16 pair-rows x 16 columns share one 1 KiB piece.
                    let first = tile_order(steps, pair / ROWS * ROWS, lane / 16 * 16);
                    assert_eq!(at / TILE, first / TILE);
                }
            }
            assert!(seen.into_iter().all(|s| s));
        }
    }
}
