//! `calibrate`: the calibration cases, their `--json` report and text summary.

use std::string::ToString;
use std::{format, println};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::jvm::{JvmAssumptions, OLD_OF_CACHE};
use scalrand_shuffle::{BandwidthModel, CalibrateConfig, run_calibrate, run_calibrate_parallel};

use crate::CliError;
use crate::args::{CalibrateArgs, repeated_seed};
use crate::estimate::Estimate;
use crate::jobs::run_seeds;

/// Cost of one work unit (see [`estimate`]), nanoseconds of one core in a release build (the
/// runs it comes from are in BENCHMARKS.md).
const NS_PER_UNIT: f64 = 590.0;

/// The most work units `calibrate` runs without `--force`: 4 × the full-size run (`--scale
/// 1`, 20 seeds), about 100 CPU-minutes.
pub(crate) const CAP_UNITS: u64 = 10_000_000_000;

/// What the run is about to cost. A work unit is one page of the zone through one aging round
/// or the fresh measurement, for every seed; the sweeps cost little beside them.
pub(crate) fn estimate(cfg: &CalibrateConfig, jobs: Option<usize>) -> Estimate {
    let zone_pages = cfg.zone_pages();
    let cores = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    Estimate {
        unit: "work units",
        units: (cfg.seeds.len() as u64)
            .saturating_mul(zone_pages)
            .saturating_mul(u64::from(cfg.aging_rounds).saturating_add(1)),
        ns_per_unit: NS_PER_UNIT,
        threads: cores.min(cfg.seeds.len()).max(1),
        // Two zones at once (the aliasing case's two nodes), 17 bytes a page.
        memory: zone_pages
            .saturating_mul(2 * 17)
            .saturating_add(cfg.cache_pages().saturating_mul(8))
            .saturating_add(16 << 20),
        cap: CAP_UNITS,
        sized_by: "--scale, --seeds, --rounds",
    }
}

/// Refuses what `CalibrateConfig::validate` would, naming the flag (each value alone was
/// checked when the flags were read): a seed given twice, `--far-gbps` above `--near-gbps`,
/// `--jvm-shares` that do not sum to 1, a `--jvm-hot-old` larger than the old generation.
fn check_flags(cfg: &CalibrateConfig) -> Result<(), CliError> {
    if let Some(seed) = repeated_seed(&cfg.seeds) {
        return Err(CliError(format!(
            "--seeds: seed {seed} is given twice; each seed is one run, so give each once"
        )));
    }
    let bw = &cfg.bandwidth;
    if bw.far_gbps > bw.near_gbps {
        return Err(CliError(format!(
            "--far-gbps ({} GB/s) must not exceed --near-gbps ({} GB/s)",
            bw.far_gbps, bw.near_gbps
        )));
    }
    let sum: f64 = cfg.jvm.shares().iter().sum();
    // The tolerance of `JvmAssumptions::validate`.
    if (sum - 1.0).abs() > 1e-9 {
        return Err(CliError(format!("--jvm-shares must sum to 1, got {sum}")));
    }
    if cfg.jvm.hot_old_of_cache > OLD_OF_CACHE {
        return Err(CliError(format!(
            "--jvm-hot-old must be at most {OLD_OF_CACHE} (the old generation, in caches), got {}",
            cfg.jvm.hot_old_of_cache
        )));
    }
    Ok(())
}

pub(crate) fn calibrate(a: CalibrateArgs) -> Result<(), CliError> {
    let [eden, survivor, hot_old, cold_old, miss_floor] = a.jvm_shares[..] else {
        return Err(CliError(
            "--jvm-shares takes five numbers: eden, survivor, hot old, cold old, miss floor"
                .to_string(),
        ));
    };
    let cfg = CalibrateConfig {
        scale: a.scale,
        bandwidth: BandwidthModel {
            near_gbps: a.near_gbps,
            far_gbps: a.far_gbps,
        },
        seeds: a.seeds,
        aging_rounds: a.rounds,
        sweeps: a.sweeps,
        kernel: a.kernel,
        jvm: JvmAssumptions {
            eden,
            survivor,
            hot_old,
            cold_old,
            miss_floor,
            hot_old_of_cache: a.jvm_hot_old,
        },
    };
    check_flags(&cfg)?;
    cfg.validate()?;
    estimate(&cfg, a.jobs).check(a.force, a.quiet)?;
    let target = if a.quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(cfg.runs()), target);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} (eta {eta})")
    {
        bar.set_style(style);
    }
    let res = run_seeds(
        a.jobs,
        &|done| bar.set_position(done),
        |p| run_calibrate::<Xoroshiro128PlusPlus>(&cfg, p),
        |p| run_calibrate_parallel::<Xoroshiro128PlusPlus>(&cfg, p),
    );
    bar.finish_and_clear();
    let r = res??;
    if a.json {
        let text = serde_json::to_string(&r).map_err(|e| CliError(e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    let k = &r.knl_stream;
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    println!(
        "bandwidth model: near {} GB/s, far {} GB/s; scale 1/{} ({:.2} GiB zone, {:.2} GiB cache), {} (medians)",
        cfg.bandwidth.near_gbps,
        cfg.bandwidth.far_gbps,
        cfg.scale,
        gib(k.zone_bytes),
        gib(k.cache_bytes),
        crate::report::seeds(cfg.seeds.len())
    );
    println!(
        "KNL STREAM   fresh: miss {:.3} -> {:.0} GB/s (published {:.0})   aged: miss {:.3} -> {:.0} GB/s (published {:.0})",
        k.fresh_miss_ratio,
        k.fresh_gbps,
        k.target_fresh_gbps,
        k.aged_miss_ratio,
        k.aged_gbps,
        k.target_aged_gbps
    );
    let al = &r.aliasing;
    println!(
        "aliasing     in-order: miss {:.3} -> {:.0} GB/s   shuffled: miss {:.3} -> {:.0} GB/s ({:.2}x; slot overlap alone: {:.0})   zonesort: miss {:.3} -> {:.0} GB/s",
        al.in_order_miss_ratio,
        al.in_order_gbps,
        al.shuffled_miss_ratio,
        al.shuffled_gbps,
        al.shuffle_speedup,
        al.expected_shuffled_gbps,
        al.zonesort_miss_ratio,
        al.zonesort_gbps
    );
    for pt in &al.smaller_instances {
        println!(
            "  instances of {:.3} of the cache: in-order {:.0}, shuffled {:.0} GB/s ({:.2}x; slot overlap alone: {:.0}), zonesort {:.0} GB/s",
            pt.instance_pages as f64 / (k.cache_bytes / scalrand_shuffle::PAGE_SIZE) as f64,
            pt.in_order_gbps,
            pt.shuffled_gbps,
            pt.shuffle_speedup,
            pt.expected_shuffled_gbps,
            pt.zonesort_gbps
        );
    }
    let pct = |x: f64| x * 100.0;
    let j = &cfg.jvm;
    println!(
        "JVM assumed shares: eden {}, survivor {}, hot old {} (of {} of the cache), cold old {}, miss floor {}",
        j.eden, j.survivor, j.hot_old, j.hot_old_of_cache, j.cold_old, j.miss_floor
    );
    for (name, p) in [
        ("in-order", &r.jvm.in_order),
        ("shuffle", &r.jvm.shuffle),
        ("zonesort", &r.jvm.zonesort),
    ] {
        println!(
            "JVM {name:<9} conflict rate  fresh: {:.2}% (p10 {:.2}, p90 {:.2})   aged: {:.2}% (p10 {:.2}, p90 {:.2})",
            pct(p.fresh.median),
            pct(p.fresh.p10),
            pct(p.fresh.p90),
            pct(p.aged.median),
            pct(p.aged.p10),
            pct(p.aged.p90)
        );
    }
    Ok(())
}
