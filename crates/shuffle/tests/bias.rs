//! The shuffle's quality: Fisher–Yates is uniform, the kernel's swap-with-another is not.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use common::SplitMix64;
use scalrand_shuffle::bias::BIAS_PROGRESS_EVERY;
use scalrand_shuffle::{ShuffleMode, measure_bias, measure_bias_with_progress};

// Debug builds are ~30× slower; the 200k trials run in release (`--release`).
const TRIALS: u64 = if cfg!(debug_assertions) {
    40_000
} else {
    200_000
};

#[test]
fn fisher_yates_is_uniform() {
    let r = measure_bias(ShuffleMode::FisherYates, 10, 8, TRIALS, SplitMix64(1)).unwrap();
    assert!(r.chi2_p > 0.01, "p = {}", r.chi2_p);
    assert!(
        (r.fixed_point_rate - 1.0 / 8.0).abs() < 0.005,
        "{}",
        r.fixed_point_rate
    );
    for row in &r.counts {
        assert_eq!(row.iter().sum::<u64>(), TRIALS);
    }
}

/// The progress form reports every `BIAS_PROGRESS_EVERY` trials and the last, in order, and
/// gives the same report as `measure_bias` for the same generator.
#[test]
fn progress_reports_every_step_and_changes_nothing() {
    let trials = 3 * BIAS_PROGRESS_EVERY + 5;
    let mut seen = Vec::new();
    let r = measure_bias_with_progress(
        ShuffleMode::Kernel,
        10,
        4,
        trials,
        SplitMix64(3),
        &mut |done, total| seen.push((done, total)),
    )
    .unwrap();
    let want: Vec<(u64, u64)> = (1..=3)
        .map(|i| (i * BIAS_PROGRESS_EVERY, trials))
        .chain([(trials, trials)])
        .collect();
    assert_eq!(seen, want);
    assert_eq!(
        r,
        measure_bias(ShuffleMode::Kernel, 10, 4, trials, SplitMix64(3)).unwrap()
    );
}

#[test]
fn kernel_is_biased() {
    let r = measure_bias(ShuffleMode::Kernel, 10, 8, TRIALS, SplitMix64(2)).unwrap();
    assert!(r.chi2_p < 1e-12, "p = {}", r.chi2_p);
}

/// Two blocks: step 0 swaps them, step 1 swaps them back, unless one step's ten tries all
/// hit the block itself (probability 2^-10 each): identity with probability
/// (1 - 2^-10)^2 + 2^-20 ≈ 0.998.
#[test]
fn kernel_with_two_blocks_is_almost_always_the_identity() {
    let r = measure_bias(ShuffleMode::Kernel, 10, 2, 20_000, SplitMix64(3)).unwrap();
    let p = (1.0 - 1.0 / 1024.0f64).powi(2) + 1.0 / (1u64 << 20) as f64;
    assert!(
        (r.fixed_point_rate - p).abs() < 0.0015,
        "{} vs {p}",
        r.fixed_point_rate
    );
}

/// For three blocks the kernel loop picks, for i = 0, 1, 2, a partner uniformly among the
/// other two (retries on j == i do not change that). Enumerating the 8 equally likely
/// choices gives the exact position distribution, independently of the crate's code.
#[test]
#[allow(clippy::needless_range_loop)]
fn kernel_three_blocks_matches_enumeration() {
    // Boot list (head first) holds blocks 2, 1, 0: position of block b is 2 - b.
    let mut exact = [[0u32; 3]; 3];
    for choice in 0..8u32 {
        let mut pos = [2usize, 1, 0];
        for i in 0..3 {
            let others: Vec<usize> = (0..3).filter(|&k| k != i).collect();
            let j = others[((choice >> i) & 1) as usize];
            pos.swap(i, j);
        }
        for b in 0..3 {
            exact[b][pos[b]] += 1;
        }
    }
    let trials = 48_000u64;
    let r = measure_bias(ShuffleMode::Kernel, 10, 3, trials, SplitMix64(4)).unwrap();
    for b in 0..3 {
        for p in 0..3 {
            let want = trials as f64 * f64::from(exact[b][p]) / 8.0;
            let got = r.counts[b][p] as f64;
            // 6 standard deviations of a binomial count.
            let sd = (want * (1.0 - f64::from(exact[b][p]) / 8.0))
                .sqrt()
                .max(1.0);
            assert!(
                (got - want).abs() < 6.0 * sd,
                "block {b} pos {p}: {got} vs {want}"
            );
        }
    }
    // The enumeration itself shows the bias: not every cell is 8/3.
    assert!(exact.iter().flatten().any(|&c| c * 3 != 8));
}
