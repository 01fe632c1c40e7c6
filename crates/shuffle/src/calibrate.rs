//! Calibration against the public measurements of memory-side caches, each case a machine and
//! a workload from a public source, with the delivered bandwidth from [`BandwidthModel`]:
//!
//! * **KNL STREAM** (Łukasz Daniluk's cache-colouring RFC, LKML 2017-08-23,
//!   `20170823100205.17311-1-lukasz.daniluk@intel.com`): Xeon Phi x200 in cache mode, STREAM
//!   with a 16 GB working set on 16 GB of MCDRAM, 336 GB/s after boot and 117 GB/s after days
//!   of use; NERSC's KNL cache-mode page reports 350–360 GB/s after a reboot. The model: a
//!   zone of 96 GiB (a NERSC Cori KNL node's DDR4) behind a 16 GiB direct-mapped cache in
//!   page-colour mode, three STREAM arrays of 16/3 GiB each; *fresh* = first run after boot
//!   (no shuffle: the measured kernels predate it), *aged* = after rounds of [`crate::server`]
//!   aging (page cache read and reclaimed, processes starting and exiting, slab and page
//!   tables, 16 CPUs' per-CPU lists), the arrays allocated through reclaim. Bandwidth is
//!   a STREAM Triad's in cache mode ([`BandwidthModel::cache_mode_gbps`]): a third of the
//!   counted bytes are writes, and each write first reads its slot in MCDRAM. Fresh, the
//!   in-order arrays take one page colour each and nothing misses; the 336 GB/s is the cost
//!   of those reads (the same RFC's colour-perfect placement stays within 1.5% of it).
//! * **Aliasing** (commit e900a918b098, "mm: shuffle initial free memory to improve
//!   memory-side-cache utilization", Linux 5.2, its changelog's contrived case): two instances
//!   of a bandwidth benchmark on two cache-sized emulated NUMA nodes whose bases alias in the
//!   cache, "3X" faster with the shuffle. The model: two zones of one cache size each, based
//!   at 0 and at one cache size, one instance per node of half a cache (two would fit in the
//!   cache together), streamed page by page in turn; in-order, shuffled (kernel shuffle,
//!   order 10 + coin) and zonesort (run before each instance, seeing what the first holds).
//! * **JVM heap** (commit e900a918b098's Java server benchmark: heap 3× the cache, cache
//!   conflict rate 8% on the first run, 21% after aging, levelled at 11% with the shuffle; the
//!   changelog gives no method, and Michal Hocko (LKML, Oct 2018) objected that it was a single
//!   undescribed benchmark). The model: [`crate::jvm::JvmSpec::hotspot`] (heap 3× the cache in
//!   HotSpot's default generations, eden swept, survivor spaces, a hot part of the old
//!   generation, a cold bulk, a miss floor; faulted in TLAB-sized runs by one thread per CPU
//!   through the per-CPU lists; the access shares are [`CalibrateConfig::jvm`], assumptions)
//!   on the KNL zone and cache, first run after boot (*fresh*) and after the server aging
//!   (*aged*, the heap's pages allocated through reclaim), under in-order, shuffle (order 10 +
//!   coin) and zonesort (run just before the heap starts); conflict rate (conflicts /
//!   accesses) as a distribution over seeds, one aging history each.
//!
//! Everything is scaled by `scale` (a power of two): sizes divide by it, ratios stay. The
//! miss ratio is over all measured traffic after one warm pass: compulsory, capacity and
//! conflict misses alike.

use alloc::vec::Vec;

use rand_core::{Rng, SeedableRng};

use crate::Error;
use crate::bandwidth::BandwidthModel;
use crate::cache::{CacheMode, MemSideCache};
use crate::jvm::{JvmAssumptions, JvmSpec, run_jvm};
use crate::kernel::KernelVersion;
use crate::pcp::PcpLists;
use crate::server::{ServerAging, ServerSpec};
use crate::workload::{StreamSpec, run_stream, run_stream_with, run_two_instance_stream};
use crate::zone::{MigrateType, PAGE_SIZE, ShufflePolicy, Zone, ZoneConfig};

const GIB: u64 = 1 << 30;
/// The largest [`CalibrateConfig::scale`]: sizes divided by more leave too few pages to age.
pub const MAX_SCALE: u64 = 1024;
/// The KNL node's DDR4 and MCDRAM, bytes (NERSC Cori KNL: 96 GB DDR4, 16 GB MCDRAM).
const KNL_DDR: u64 = 96 * GIB;
const KNL_MCDRAM: u64 = 16 * GIB;
/// Written share of the bytes a STREAM Triad counts (`a[i] = b[i] + q * c[i]`: two 8-byte
/// reads, one 8-byte write per element; McCalpin's STREAM counts all three).
pub const STREAM_TRIAD_WRITE_FRACTION: f64 = 1.0 / 3.0;
/// The published STREAM figures the KNL case is held against, GB/s (Daniluk, LKML 2017).
pub const KNL_FRESH_GBPS: f64 = 336.0;
/// See [`KNL_FRESH_GBPS`].
pub const KNL_AGED_GBPS: f64 = 117.0;

/// What `calibrate` runs.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CalibrateConfig {
    /// Sizes divide by this power of two (1 = full size: 96 GiB zone, 16 GiB cache).
    pub scale: u64,
    /// Near and far bandwidth.
    pub bandwidth: BandwidthModel,
    /// Seeds (one aging history each); figures are medians over them.
    pub seeds: Vec<u64>,
    /// Server aging rounds before the "aged" STREAM run.
    pub aging_rounds: u32,
    /// STREAM passes measured (after one warm pass).
    pub sweeps: u32,
    /// Kernel rules of the zones.
    pub kernel: KernelVersion,
    /// The JVM case's access shares and hot old size: assumptions, no public source
    /// ([`JvmAssumptions`]); the defaults when a report without them is read back.
    #[cfg_attr(feature = "serde", serde(default))]
    pub jvm: JvmAssumptions,
}

impl Default for CalibrateConfig {
    fn default() -> Self {
        CalibrateConfig {
            scale: 16,
            bandwidth: BandwidthModel::KNL,
            seeds: (1..=20).collect(),
            aging_rounds: 4,
            sweeps: 3,
            kernel: KernelVersion::default(),
            jvm: JvmAssumptions::default(),
        }
    }
}

impl CalibrateConfig {
    /// Checks every parameter.
    ///
    /// # Errors
    /// [`Error::BadParameter`] for a scale that is not a power of two in `1 ..= 1024`, no
    /// seeds, zero aging rounds or sweeps, a bad bandwidth ([`BandwidthModel::validate`]) or
    /// bad JVM assumptions ([`JvmAssumptions::validate`]); [`Error::ZeroSeeds`] for no seeds.
    pub fn validate(&self) -> Result<(), Error> {
        if !self.scale.is_power_of_two() || self.scale > MAX_SCALE {
            return Err(Error::BadParameter(
                "scale must be a power of two from 1 to 1024",
            ));
        }
        if self.seeds.is_empty() {
            return Err(Error::ZeroSeeds);
        }
        if self.aging_rounds == 0 || self.sweeps == 0 {
            return Err(Error::BadParameter(
                "calibrate needs at least one aging round and one sweep",
            ));
        }
        self.bandwidth.validate()?;
        self.jvm.validate()
    }

    /// The near-memory cache after scaling, in pages (0 for a scale of 0, which
    /// [`validate`](Self::validate) refuses).
    pub fn cache_pages(&self) -> u64 {
        KNL_MCDRAM.checked_div(self.scale).unwrap_or(0) / PAGE_SIZE
    }

    /// The zone after scaling, in pages (0 for a scale of 0, which
    /// [`validate`](Self::validate) refuses).
    pub fn zone_pages(&self) -> u64 {
        KNL_DDR.checked_div(self.scale).unwrap_or(0) / PAGE_SIZE
    }

    /// Runs in a calibration (what `progress` counts to): per seed, the fresh and the aged
    /// STREAM, the aliasing cases (counted as two), and three JVM histories.
    pub fn runs(&self) -> u64 {
        self.seeds.len() as u64 * 7
    }
}

/// The KNL STREAM case (medians over seeds).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StreamCalibration {
    /// Zone and cache size, bytes (after scaling).
    pub zone_bytes: u64,
    /// See `zone_bytes`.
    pub cache_bytes: u64,
    /// Miss ratio of the first run after boot.
    pub fresh_miss_ratio: f64,
    /// Miss ratio after aging.
    pub aged_miss_ratio: f64,
    /// Written share of the counted bytes (a STREAM Triad's, 1/3), each write reading its
    /// slot first ([`BandwidthModel::cache_mode_gbps`]).
    pub write_fraction: f64,
    /// Delivered bandwidth in cache mode, GB/s.
    pub fresh_gbps: f64,
    /// See `fresh_gbps`.
    pub aged_gbps: f64,
    /// Aged miss ratios, one per seed.
    pub aged_miss_ratios: Vec<f64>,
    /// The published figures, GB/s.
    pub target_fresh_gbps: f64,
    /// See `target_fresh_gbps`.
    pub target_aged_gbps: f64,
}

/// The two-instance aliasing case (medians over seeds).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AliasingCalibration {
    /// Pages per instance (half the cache).
    pub instance_pages: u64,
    /// Miss ratios per policy.
    pub in_order_miss_ratio: f64,
    /// See `in_order_miss_ratio`.
    pub shuffled_miss_ratio: f64,
    /// See `in_order_miss_ratio`.
    pub zonesort_miss_ratio: f64,
    /// Delivered bandwidth per policy, GB/s.
    pub in_order_gbps: f64,
    /// See `in_order_gbps`.
    pub shuffled_gbps: f64,
    /// See `in_order_gbps`.
    pub zonesort_gbps: f64,
    /// `shuffled_gbps / in_order_gbps` (the changelog reports 3×).
    pub shuffle_speedup: f64,
    /// What the shuffle is expected to give from the slot overlap alone ([`expected_shuffled_miss_ratio`]).
    pub expected_shuffled_gbps: f64,
    /// The same case with instances of a quarter and an eighth of the cache (the changelog
    /// does not give the size).
    pub smaller_instances: Vec<AliasingPoint>,
}

/// The aliasing case at one instance size (medians over seeds).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AliasingPoint {
    /// Pages per instance.
    pub instance_pages: u64,
    /// Delivered bandwidth per policy, GB/s.
    pub in_order_gbps: f64,
    /// See `in_order_gbps`.
    pub shuffled_gbps: f64,
    /// See `in_order_gbps`.
    pub zonesort_gbps: f64,
    /// `shuffled_gbps / in_order_gbps`.
    pub shuffle_speedup: f64,
    /// What the shuffle is expected to give from the slot overlap alone ([`expected_shuffled_miss_ratio`]).
    pub expected_shuffled_gbps: f64,
}

/// The miss ratio the shuffle is expected to leave in the aliasing case, from the mechanism
/// commit e900a918b098 describes: each instance allocates `instance_pages` from the head of
/// its node's shuffled free list, so it holds a uniformly random `k` of the node's `n`
/// order-10 blocks, and block `i` of either node sits in cache slot `i` (the nodes are one
/// cache long). One instance's block collides exactly when the other instance holds the same
/// slot, which it does with probability `k / n` (the mean of a hypergeometric draw), and two
/// instances streaming through a shared slot evict each other on every access. So the miss
/// ratio is `k / n`, the instance's share of the cache, and the shuffle's speedup over
/// in-order (every access a miss) is at most `1 / (k / n)` however fast near memory is: 2×
/// for instances of half a cache.
pub fn expected_shuffled_miss_ratio(instance_pages: u64, cache_pages: u64) -> f64 {
    let block = 1u64 << crate::free_area::SHUFFLE_ORDER;
    let n = (cache_pages / block).max(1);
    let k = instance_pages.div_ceil(block).min(n);
    k as f64 / n as f64
}

/// Instance sizes of the aliasing case, as fractions 1/n of the cache; the first is the
/// headline case.
const ALIAS_FRACTIONS: [u64; 3] = [2, 4, 8];

/// Median and the 10th and 90th percentiles of a sample (linear interpolation between order
/// statistics).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Spread {
    /// 50th percentile.
    pub median: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
}

impl Spread {
    /// The spread of `v` (all 0 for an empty sample).
    pub fn of(v: &[f64]) -> Spread {
        let mut s: Vec<f64> = v.to_vec();
        s.sort_by(f64::total_cmp);
        let q = |p: f64| -> f64 {
            if s.is_empty() {
                return 0.0;
            }
            let x = p * (s.len() - 1) as f64;
            let lo = x as usize;
            let hi = (lo + 1).min(s.len() - 1);
            s[lo] + (s[hi] - s[lo]) * (x - lo as f64)
        };
        Spread {
            median: q(0.5),
            p10: q(0.1),
            p90: q(0.9),
        }
    }
}

/// Conflict rates of one policy in the JVM case.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JvmPolicy {
    /// First run after boot.
    pub fresh: Spread,
    /// After the aging rounds.
    pub aged: Spread,
}

/// The JVM heap case: conflict rates per policy over seeds.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JvmCalibration {
    /// No shuffle, no sort.
    pub in_order: JvmPolicy,
    /// The kernel's shuffle, order 10 + coin.
    pub shuffle: JvmPolicy,
    /// Zonesort just before the heap starts.
    pub zonesort: JvmPolicy,
}

/// What `calibrate` reports.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CalibrateReport {
    /// The configuration run.
    pub config: CalibrateConfig,
    /// The KNL STREAM case.
    pub knl_stream: StreamCalibration,
    /// The two-instance aliasing case.
    pub aliasing: AliasingCalibration,
    /// The JVM heap case.
    pub jvm: JvmCalibration,
}

/// Median of `v` (mean of the middle two for an even count); 0 for none.
pub fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Runs the cases with generator `R`, one seed after another, calling `progress(done, total)`
/// after each run.
///
/// # Errors
/// Those of [`CalibrateConfig::validate`], and of the zones and workloads.
pub fn run_calibrate<R: Rng + SeedableRng>(
    cfg: &CalibrateConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<CalibrateReport, Error> {
    cfg.validate()?;
    let total = cfg.runs();
    let mut done = 0;
    let seeds = crate::seeds::map_serial(&cfg.seeds, |seed| {
        calibrate_seed::<R>(cfg, seed, &mut |n| {
            done += n;
            progress(done, total);
        })
    })?;
    Ok(report(cfg, &seeds))
}

/// [`run_calibrate`] with the seeds run in parallel on the current rayon thread pool (the
/// global one, or the pool whose `install` calls this). Each seed runs exactly as in
/// [`run_calibrate`] and the figures are taken over the seeds in seed order, so the report is
/// bit-identical to the serial run's. `progress(done, total)` is called from the worker
/// threads.
///
/// # Errors
/// Those of [`run_calibrate`]; where several seeds fail, one of their errors.
#[cfg(feature = "parallel")]
pub fn run_calibrate_parallel<R: Rng + SeedableRng>(
    cfg: &CalibrateConfig,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<CalibrateReport, Error> {
    use core::sync::atomic::{AtomicU64, Ordering};
    cfg.validate()?;
    let total = cfg.runs();
    let done = AtomicU64::new(0);
    let seeds = crate::seeds::map_parallel(&cfg.seeds, |seed| {
        calibrate_seed::<R>(cfg, seed, &mut |n| {
            progress(done.fetch_add(n, Ordering::Relaxed) + n, total);
        })
    })?;
    Ok(report(cfg, &seeds))
}

/// One seed's figures in every case.
struct SeedFigures {
    /// KNL STREAM miss ratios, fresh and aged.
    fresh: f64,
    aged: f64,
    /// Aliasing miss ratios: per instance size, per policy (in-order, shuffle, zonesort).
    alias: [[f64; 3]; ALIAS_FRACTIONS.len()],
    /// JVM conflict rates (fresh, aged) per policy.
    jvm: [(f64, f64); 3],
}

/// Every case on one seed; `tick(n)` after each run, `n` the runs just finished.
fn calibrate_seed<R: Rng + SeedableRng>(
    cfg: &CalibrateConfig,
    seed: u64,
    tick: &mut dyn FnMut(u64),
) -> Result<SeedFigures, Error> {
    let cache_pages = cfg.cache_pages();
    let cache_bytes = cache_pages * PAGE_SIZE;
    let zone_pages = cfg.zone_pages();
    let stream = StreamSpec {
        array_pages: cache_pages / 3,
        sweeps: cfg.sweeps,
    };
    let server = ServerSpec::for_zone(zone_pages);
    // KNL STREAM: in-order zone, fresh then aged.
    let zc = ZoneConfig::with_span(0, zone_pages)?
        .kernel(cfg.kernel)
        .pcp(PcpLists::Kernel { cpus: server.cpus });
    let mut zone = Zone::new(&zc, ShufflePolicy::OFF, R::seed_from_u64(seed))?;
    let mut cache = MemSideCache::new(cache_bytes, CacheMode::PageColour)?;
    let fresh = run_stream(&mut zone, &mut cache, &stream)?.miss_rate();
    tick(1);
    let mut wrng = R::seed_from_u64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
    let mut srv = ServerAging::new();
    for _ in 0..cfg.aging_rounds {
        srv.round(&mut zone, &mut wrng, &server)?;
    }
    let aged = run_stream_with(&mut zone, &mut cache, &stream, &mut |z: &mut Zone<R>| {
        srv.alloc(z, &server, 0, MigrateType::Movable)
    })?
    .miss_rate();
    tick(1);
    // Aliasing: two cache-sized nodes, three policies, three instance sizes.
    let mut alias = [[0.0; 3]; ALIAS_FRACTIONS.len()];
    for (frac, outs) in ALIAS_FRACTIONS.iter().zip(alias.iter_mut()) {
        for (p, out) in outs.iter_mut().enumerate() {
            let policy = if p == 1 {
                ShufflePolicy::KERNEL
            } else {
                ShufflePolicy::OFF
            };
            let node = |n: u64| -> Result<Zone<R>, Error> {
                let zc = ZoneConfig::with_span(n * cache_pages, cache_pages)?.kernel(cfg.kernel);
                Zone::new(
                    &zc,
                    policy,
                    R::seed_from_u64(seed ^ (n + 1).wrapping_mul(0xa076_1d64_78bd_642f)),
                )
            };
            let mut nodes = [node(0)?, node(1)?];
            let zonesort = p == 2;
            let st = run_two_instance_stream(
                &mut nodes,
                &mut cache,
                cache_pages / frac,
                cfg.sweeps,
                &mut |k, nodes: &mut [Zone<R>; 2]| {
                    if !zonesort {
                        return Ok(());
                    }
                    let mut cover = nodes[0].slot_cover(cache_pages)?;
                    for (c, d) in cover.iter_mut().zip(nodes[1].slot_cover(cache_pages)?) {
                        *c += d;
                    }
                    nodes[k].zonesort(cache_pages, &cover)
                },
            )?;
            *out = st.miss_rate();
        }
    }
    tick(2);
    let mut jvm = [(0.0, 0.0); 3];
    for (p, out) in jvm.iter_mut().enumerate() {
        *out = jvm_history::<R>(cfg, p, seed, zone_pages, &server)?;
        tick(1);
    }
    Ok(SeedFigures {
        fresh,
        aged,
        alias,
        jvm,
    })
}

/// The report from every seed's figures, taken in seed order.
fn report(cfg: &CalibrateConfig, seeds: &[SeedFigures]) -> CalibrateReport {
    let cache_pages = cfg.cache_pages();
    let fresh: Vec<f64> = seeds.iter().map(|s| s.fresh).collect();
    let aged: Vec<f64> = seeds.iter().map(|s| s.aged).collect();
    let alias = |i: usize, p: usize| -> f64 {
        median(&seeds.iter().map(|s| s.alias[i][p]).collect::<Vec<_>>())
    };
    let bw = cfg.bandwidth;
    let (f, a) = (median(&fresh), median(&aged));
    let m: [f64; 3] = core::array::from_fn(|p| alias(0, p));
    // Medians of the bandwidths are the bandwidths of the median miss ratios: bw(m) is
    // monotonic.
    let g: [f64; 3] = core::array::from_fn(|p| bw.effective_gbps(m[p]));
    let smaller_instances = ALIAS_FRACTIONS
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, frac)| {
            let g: [f64; 3] = core::array::from_fn(|p| bw.effective_gbps(alias(i, p)));
            AliasingPoint {
                instance_pages: cache_pages / frac,
                in_order_gbps: g[0],
                shuffled_gbps: g[1],
                zonesort_gbps: g[2],
                shuffle_speedup: g[1] / g[0],
                expected_shuffled_gbps: bw.effective_gbps(expected_shuffled_miss_ratio(
                    cache_pages / frac,
                    cache_pages,
                )),
            }
        })
        .collect();
    let pol = |p: usize| JvmPolicy {
        fresh: Spread::of(&seeds.iter().map(|s| s.jvm[p].0).collect::<Vec<_>>()),
        aged: Spread::of(&seeds.iter().map(|s| s.jvm[p].1).collect::<Vec<_>>()),
    };
    CalibrateReport {
        config: cfg.clone(),
        knl_stream: StreamCalibration {
            zone_bytes: cfg.zone_pages() * PAGE_SIZE,
            cache_bytes: cache_pages * PAGE_SIZE,
            fresh_miss_ratio: f,
            aged_miss_ratio: a,
            write_fraction: STREAM_TRIAD_WRITE_FRACTION,
            fresh_gbps: bw.cache_mode_gbps(f, STREAM_TRIAD_WRITE_FRACTION),
            aged_gbps: bw.cache_mode_gbps(a, STREAM_TRIAD_WRITE_FRACTION),
            aged_miss_ratios: aged,
            target_fresh_gbps: KNL_FRESH_GBPS,
            target_aged_gbps: KNL_AGED_GBPS,
        },
        aliasing: AliasingCalibration {
            instance_pages: cache_pages / 2,
            in_order_miss_ratio: m[0],
            shuffled_miss_ratio: m[1],
            zonesort_miss_ratio: m[2],
            in_order_gbps: g[0],
            shuffled_gbps: g[1],
            zonesort_gbps: g[2],
            shuffle_speedup: g[1] / g[0],
            expected_shuffled_gbps: bw
                .effective_gbps(expected_shuffled_miss_ratio(cache_pages / 2, cache_pages)),
            smaller_instances,
        },
        jvm: JvmCalibration {
            in_order: pol(0),
            shuffle: pol(1),
            zonesort: pol(2),
        },
    }
}

/// One seed's JVM history under policy `p` (0 in-order, 1 shuffle, 2 zonesort): conflict rate
/// of the first run and of the run after the aging rounds.
fn jvm_history<R: Rng + SeedableRng>(
    cfg: &CalibrateConfig,
    p: usize,
    seed: u64,
    zone_pages: u64,
    server: &ServerSpec,
) -> Result<(f64, f64), Error> {
    let cache_pages = cfg.cache_pages();
    let heap = JvmSpec::hotspot(cache_pages, 4 * cache_pages, server.cpus, &cfg.jvm);
    let zc = ZoneConfig::with_span(0, zone_pages)?
        .kernel(cfg.kernel)
        .pcp(PcpLists::Kernel { cpus: server.cpus });
    let policy = if p == 1 {
        ShufflePolicy::KERNEL
    } else {
        ShufflePolicy::OFF
    };
    let mut zone = Zone::new(&zc, policy, R::seed_from_u64(seed))?;
    let mut cache = MemSideCache::new(cache_pages * PAGE_SIZE, CacheMode::PageColour)?;
    // The workload's generator is the same for every policy.
    let mut wrng = R::seed_from_u64(seed.wrapping_add(0x2545_f491_4f6c_dd1d));
    let sort = |zone: &mut Zone<R>| -> Result<(), Error> {
        if p == 2 {
            let cover = zone.slot_cover(cache_pages)?;
            zone.zonesort(cache_pages, &cover)?;
        }
        Ok(())
    };
    sort(&mut zone)?;
    let fresh = run_jvm(
        &mut zone,
        &mut cache,
        &mut wrng,
        &heap,
        server.cpus,
        &mut |z: &mut Zone<R>, cpu, order| z.alloc_pages_on(cpu, order, MigrateType::Movable),
    )?
    .conflict_rate();
    let mut srv = ServerAging::new();
    for _ in 0..cfg.aging_rounds {
        srv.round(&mut zone, &mut wrng, server)?;
    }
    sort(&mut zone)?;
    // Aged, the heap's 4 KiB pages come through reclaim.
    let aged = run_jvm(
        &mut zone,
        &mut cache,
        &mut wrng,
        &heap,
        server.cpus,
        &mut |z: &mut Zone<R>, cpu, order| {
            if order == 0 {
                srv.alloc(z, server, cpu, MigrateType::Movable)
            } else {
                z.alloc_pages_on(cpu, order, MigrateType::Movable)
            }
        },
    )?
    .conflict_rate();
    Ok((fresh, aged))
}
