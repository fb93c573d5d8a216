//! What the tile unit does on this machine, measured for `mdvault bench`: its peak (tile
//! products on registers alone, no memory touched) and the dense kernel's rate on each of the
//! encoder's product shapes, on one thread, with operands laid out as the encoder lays them
//! out. Issue 37 asks for the kernels against the hardware's peak; a count of the encoder's
//! own arithmetic over its measured rate gives the rest (`LocalEmbedder::flops`).
//!
//! Why a warm-up: on the Intel machine these figures were first taken on, the first
//! milliseconds of tile work after 10-100 ms without any ran at a fraction of the later rate
//! (the unit seems to be powered up on demand), so each figure is taken after the unit has
//! been busy, and is the median of several short runs. That machine also ran the kernel at one
//! of two speeds, switching within minutes whatever ran on it (`docs/search.md`), which no
//! warm-up removes: compare figures only from runs that alternate.

use std::arch::asm;
use std::time::{Duration, Instant};

use super::{CONFIG, Lines, Operands, PAIR_ROW, PANEL, ROWS, fits, product, ready};

/// The tile unit's figures on one thread, in GFLOP/s (a multiply-add is two).
#[derive(Debug, Clone)]
pub(crate) struct TileRate {
    /// Tile products alone, operands in registers: the most the unit gives one thread here.
    pub(crate) peak: f64,
    /// Rows of activations each kernel run multiplies.
    pub(crate) rows: usize,
    /// The dense kernel on `(n_in, n_out, GFLOP/s)` for each shape asked about.
    pub(crate) kernels: Vec<(usize, usize, f64)>,
}

/// Rows of activations each kernel run multiplies: about what one thread gets of a batch.
const KERNEL_ROWS: usize = 512;
/// Timed runs per figure; the figure is their median.
const RUNS: usize = 7;
/// About how long one timed run lasts.
const RUN_TIME: Duration = Duration::from_millis(8);

/// Measures the unit's peak and the kernel on each `(n_in, n_out)` shape that runs on tiles;
/// `None` when this process may not use AMX. Takes about a second.
pub(crate) fn measure(shapes: &[(usize, usize)]) -> Option<TileRate> {
    if !ready() {
        return None;
    }
    // SAFETY: `ready` granted the tile state.
    unsafe { dots(Duration::from_millis(100)) }; // the warm-up (see the module docs)
    // SAFETY: as above.
    let peak = median((0..RUNS).map(|_| unsafe { dots(RUN_TIME) }).collect());
    let kernels = shapes
        .iter()
        .filter(|&&(n_in, n_out)| fits(n_in, n_out))
        .map(|&(n_in, n_out)| (n_in, n_out, kernel(n_in, n_out)))
        .collect();
    Some(TileRate { peak, rows: KERNEL_ROWS, kernels })
}

/// Runs `TDPBF16PS` on four accumulators for about `time`; returns GFLOP/s.
///
/// # Safety
///
/// [`ready`] returned true.
unsafe fn dots(time: Duration) -> f64 {
    const ROUND: usize = 1024;
    let started = Instant::now();
    let mut rounds = 0usize;
    // SAFETY: the tile state was granted (the caller's promise); the configuration is valid,
    // and the products read and write tile registers only.
    unsafe {
        asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(nostack, readonly));
        asm!(
            "tilezero tmm4",
            "tilezero tmm5",
            "tilezero tmm6",
            "tilezero tmm7",
            options(nostack, nomem)
        );
        while started.elapsed() < time {
            for _ in 0..ROUND {
                dot!(0, 4, 6);
                dot!(1, 4, 7);
                dot!(2, 5, 6);
                dot!(3, 5, 7);
            }
            rounds += 1;
        }
        asm!("tilerelease", options(nostack, nomem));
    }
    let flop = (rounds * ROUND * 4) as f64 * (ROWS * 16 * 32 * 2) as f64;
    flop / started.elapsed().as_secs_f64() / 1e9
}

/// The dense kernel's GFLOP/s on `KERNEL_ROWS x n_in` activations and every panel of `n_out`.
fn kernel(n_in: usize, n_out: usize) -> f64 {
    let panels = n_out / PANEL;
    let mut a = Lines::default();
    a.fit(KERNEL_ROWS * n_in * 2);
    // Ordinary bf16 values (high bytes 0x3f and 0x3c: magnitudes near 1 and 1/100), so no
    // sum overflows or turns denormal, which could slow the run down.
    for (i, b) in a.bytes_mut().iter_mut().enumerate() {
        *b = if i % 2 == 1 { 0x3f } else { (i % 251) as u8 };
    }
    let mut b = Lines::default();
    b.fit(panels * n_in / 2 * PAIR_ROW);
    for (i, x) in b.bytes_mut().iter_mut().enumerate() {
        *x = if i % 2 == 1 { 0x3c } else { (i % 241) as u8 };
    }
    let mut dst = Lines::default();
    dst.fit(KERNEL_ROWS * n_out * 4);
    let dst = dst.floats_mut();
    let op = Operands {
        a: a.bytes(),
        a_rs: n_in * 2,
        b: b.bytes(),
        n_in,
        dst: dst.as_mut_ptr(),
        dst_rs: n_out,
        acc: false,
    };
    let flop = 2.0 * (KERNEL_ROWS * n_in * n_out) as f64;
    let run = |time: Duration| {
        let started = Instant::now();
        let mut n = 0usize;
        while n == 0 || started.elapsed() < time {
            // SAFETY: `measure` checked `ready` and `fits`; `a` holds KERNEL_ROWS rows of
            // `2 n_in` bytes, `b` every panel, and `dst` KERNEL_ROWS x n_out floats that only
            // this thread touches.
            unsafe { product(&op, KERNEL_ROWS, 0..panels) };
            n += 1;
        }
        flop * n as f64 / started.elapsed().as_secs_f64() / 1e9
    };
    run(RUN_TIME);
    median((0..RUNS).map(|_| run(RUN_TIME)).collect())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_and_every_fitting_shape_are_measured_where_the_tiles_run() {
        let Some(rate) = measure(&[(384, 1152), (1536, 384), (100, 64)]) else {
            return; // no AMX here: nothing to measure, and `bench` says so
        };
        assert!(rate.peak > 0.0 && rate.peak.is_finite());
        let shapes: Vec<(usize, usize)> = rate.kernels.iter().map(|&(i, o, _)| (i, o)).collect();
        assert_eq!(shapes, [(384, 1152), (1536, 384)], "100 inputs do not fit the tiles");
        for (_, _, g) in rate.kernels {
            assert!(g > 0.0 && g.is_finite());
        }
    }
}
