//! The shuffle's quality, measured: runs `shuffle_zone` many times on a zone of `n` free blocks of
//! the shuffle order, counts which list position each block ends in, and tests that matrix
//! against the uniform one with Pearson's chi-square — the quality measurement the seed
//! (commit e900a918b098, Linux 5.2) leaves out ("does not attempt to correct for sources of bias").
//!
//! The chi-square p-value is the upper regularised incomplete gamma function
//! `Q(df / 2, χ² / 2)`, computed here (series below `a + 1`, Lentz's continued fraction above)
//! and checked against mpmath in `tests/chi2.rs`.

use alloc::vec;
use alloc::vec::Vec;

use rand_core::Rng;

use crate::Error;
use crate::shuffle::ShuffleMode;
use crate::zone::{MAX_ORDER, ShufflePolicy, Zone, ZoneConfig};

/// The bias measurement's result.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BiasReport {
    /// Blocks shuffled.
    pub blocks: usize,
    /// Shuffles run.
    pub trials: u64,
    /// `counts[b][p]`: trials in which block `b` (in PFN order) ended at list position `p`
    /// (0 = head).
    pub counts: Vec<Vec<u64>>,
    /// Pearson's statistic against `trials / blocks` in every cell.
    pub chi2: f64,
    /// Degrees of freedom, `(blocks − 1)²` (rows and columns of a permutation matrix are fixed).
    pub df: u64,
    /// `P(χ²_df ≥ chi2)`: small means biased.
    pub chi2_p: f64,
    /// Share of (trial, block) pairs where the block kept its list position (uniform: 1/n).
    pub fixed_point_rate: f64,
    /// Largest `|count / expected − 1|` over the cells.
    pub max_rel_dev: f64,
}

/// Shuffles a zone of `blocks` free blocks of `order` (`blocks << order` pages starting at
/// PFN 0, all movable) `trials` times with `mode`, each time from the boot list order.
///
/// # Errors
/// [`Error::BadBiasSetup`] for fewer than 2 blocks, zero trials or more than 2^16 blocks;
/// [`Error::OrderTooLarge`].
pub fn measure_bias<R: Rng>(
    mode: ShuffleMode,
    order: u8,
    blocks: usize,
    trials: u64,
    rng: R,
) -> Result<BiasReport, Error> {
    measure_bias_with_progress(mode, order, blocks, trials, rng, &mut |_, _| {})
}

/// Trials between two calls of [`measure_bias_with_progress`]'s `progress`.
pub const BIAS_PROGRESS_EVERY: u64 = 1 << 12;

/// The most blocks [`measure_bias`] takes (its count matrix is `blocks`² cells).
pub const MAX_BIAS_BLOCKS: usize = 1 << 16;

/// [`measure_bias`], calling `progress(done, trials)` every [`BIAS_PROGRESS_EVERY`] trials and
/// after the last; the report is the same as [`measure_bias`]'s for the same generator.
///
/// # Errors
/// Those of [`measure_bias`].
pub fn measure_bias_with_progress<R: Rng>(
    mode: ShuffleMode,
    order: u8,
    blocks: usize,
    trials: u64,
    rng: R,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<BiasReport, Error> {
    if blocks < 2 {
        return Err(Error::BadBiasSetup("need at least 2 blocks"));
    }
    if blocks > MAX_BIAS_BLOCKS {
        return Err(Error::BadBiasSetup("at most 65536 blocks"));
    }
    if trials == 0 {
        return Err(Error::BadBiasSetup("need at least one trial"));
    }
    if order > MAX_ORDER {
        return Err(Error::OrderTooLarge { order });
    }
    // Free blocks of `order` stay separate after boot only at MAX_ORDER (lower orders merge
    // into larger blocks), so any other order is reported as a bad setup below.
    let pages = (blocks as u64) << order;
    // Boot frees at the head (the pre-5.10 rule) leave the list in descending PFN order: the
    // starting order the README's table and the tests' enumeration use.
    let cfg = ZoneConfig::new(0, pages)?
        .kernel(crate::kernel::KernelVersion::V5_2)
        .pcp(crate::pcp::PcpLists::Off);
    let mut zone = Zone::new(
        &cfg,
        ShufflePolicy {
            order,
            ..ShufflePolicy::OFF
        },
        rng,
    )?;
    let mt = crate::zone::MigrateType::Movable;
    let initial = zone.list_nodes(order, mt as u8);
    if initial.len() != blocks {
        return Err(Error::BadBiasSetup(
            "blocks of this order merge at boot; use order 10",
        ));
    }
    let shift = order;
    let mut counts = vec![vec![0u64; blocks]; blocks];
    let mut fixed = 0u64;
    for t in 1..=trials {
        zone.relink(order, mt as u8, &initial);
        zone.shuffle_zone(order, mode)?;
        for (pos, node) in zone.list_nodes(order, mt as u8).into_iter().enumerate() {
            let b = (node >> shift) as usize;
            counts[b][pos] += 1;
            if initial[pos] == node {
                fixed += 1;
            }
        }
        if t % BIAS_PROGRESS_EVERY == 0 || t == trials {
            progress(t, trials);
        }
    }
    let expected = trials as f64 / blocks as f64;
    let mut chi2 = 0.0;
    let mut max_rel_dev: f64 = 0.0;
    for row in &counts {
        for &c in row {
            let d = c as f64 - expected;
            chi2 += d * d / expected;
            max_rel_dev = max_rel_dev.max((c as f64 / expected - 1.0).abs());
        }
    }
    let df = ((blocks - 1) * (blocks - 1)) as u64;
    Ok(BiasReport {
        blocks,
        trials,
        counts,
        chi2,
        df,
        chi2_p: chi2_sf(chi2, df as f64),
        fixed_point_rate: fixed as f64 / (trials as f64 * blocks as f64),
        max_rel_dev,
    })
}

/// Survival function of the chi-square distribution: `P(X ≥ x)` for `df` degrees of freedom.
/// Returns NaN for `df ≤ 0` or a NaN argument, 1 for `x ≤ 0`.
pub fn chi2_sf(x: f64, df: f64) -> f64 {
    if x.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 1.0;
    }
    gamma_q(df / 2.0, x / 2.0)
}

/// Upper regularised incomplete gamma `Q(a, x) = Γ(a, x) / Γ(a)` for `a > 0`, `x ≥ 0`.
/// NaN outside that domain.
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if a.is_nan() || x.is_nan() || a <= 0.0 || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return 1.0;
    }
    if x.is_infinite() {
        return 0.0;
    }
    if x < a + 1.0 {
        1.0 - gamma_p_series(a, x)
    } else {
        gamma_q_cf(a, x)
    }
}

/// `ln(x^a e^{-x} / Γ(a))`.
fn log_prefactor(a: f64, x: f64) -> f64 {
    a * libm::log(x) - x - libm::lgamma(a)
}

/// `P(a, x)` by its power series `e^{-x} x^a / Γ(a+1) · Σ x^n / ((a+1)…(a+n))`.
fn gamma_p_series(a: f64, x: f64) -> f64 {
    let mut term = 1.0 / a;
    let mut sum = term;
    let mut ap = a;
    for _ in 0..10_000 {
        ap += 1.0;
        term *= x / ap;
        sum += term;
        if term.abs() < sum.abs() * 1e-17 {
            break;
        }
    }
    sum * libm::exp(log_prefactor(a, x))
}

/// `Q(a, x)` by the continued fraction `1 / (x + 1 − a − 1·(1−a) / (x + 3 − a − …))`,
/// evaluated with the modified Lentz method.
fn gamma_q_cf(a: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..10_000 {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    libm::exp(log_prefactor(a, x)) * h
}
