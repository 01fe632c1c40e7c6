//! Experiments: boot a zone with shuffling off and on, run a workload first after boot and
//! again after each aging round, over several seeds, and report conflict rates — the shape of
//! Java measurement in commit e900a918b098 ("mm: shuffle initial free memory to improve
//! memory-side-cache utilization", Linux 5.2): 8% first run, 21% aged, 11% shuffled.

use alloc::vec;
use alloc::vec::Vec;

use rand_core::{Rng, SeedableRng};

use crate::Error;
use crate::cache::{CacheMode, MemSideCache};
use crate::kernel::KernelVersion;
use crate::pcp::PcpLists;
use crate::server::{ServerAging, ServerSpec};
use crate::shuffle::ShuffleMode;
use crate::workload::{Aging, AgingSpec, Zipf};
use crate::zone::{MAX_ORDER, MigrateType, PAGE_SIZE, ShufflePolicy, Zone, ZoneConfig};

pub use crate::workload::Workload;

/// Everything an experiment needs.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ExperimentConfig {
    /// First PFN of the (first) zone.
    pub zone_start_pfn: u64,
    /// Pages per zone (per node for the two-instance case).
    pub zone_pages: u64,
    /// Memory-side cache capacity in bytes.
    pub cache_bytes: u64,
    /// Cache model granularity.
    pub cache_mode: CacheMode,
    /// Shuffle order (0 ..= 10).
    pub shuffle_order: u8,
    /// Shuffle used in the "shuffled" runs.
    pub shuffle_mode: ShuffleMode,
    /// `pick_tail` in the "shuffled" runs.
    pub pick_tail: bool,
    /// The measured workload.
    pub workload: Workload,
    /// The synthetic aging between measurements (used when `server` is `None`).
    pub aging: AgingSpec,
    /// The server aging (page cache + reclaim, processes, per-CPU lists); replaces `aging`.
    pub server: Option<ServerSpec>,
    /// The kernel whose rules the zone follows.
    pub kernel: KernelVersion,
    /// Per-CPU page lists (the kernel's sizes; as many CPUs as the server aging uses, else 1).
    pub pcp: bool,
    /// Aging rounds (the "aged" figure is after the last one).
    pub aging_rounds: u32,
    /// Seeds; each runs both policies.
    pub seeds: Vec<u64>,
}

/// Conflict rates of one policy, averaged over seeds.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Curve {
    /// Mean conflict rate after 0, 1, …, `aging_rounds` rounds (index 0: first run).
    pub mean: Vec<f64>,
    /// Smallest rate over seeds, per round.
    pub min: Vec<f64>,
    /// Largest rate over seeds, per round.
    pub max: Vec<f64>,
    /// Sample standard deviation over seeds, per round (0 for one seed).
    pub sd: Vec<f64>,
    /// Every seed's rate, per round (`samples[round][seed]`).
    pub samples: Vec<Vec<f64>>,
}

impl Curve {
    fn new(rounds: usize) -> Self {
        Curve {
            mean: vec![0.0; rounds],
            min: vec![f64::INFINITY; rounds],
            max: vec![0.0; rounds],
            sd: vec![0.0; rounds],
            samples: vec![Vec::new(); rounds],
        }
    }

    fn finish(&mut self) {
        for (r, xs) in self.samples.iter().enumerate() {
            let n = xs.len() as f64;
            if xs.len() > 1 {
                let m = xs.iter().sum::<f64>() / n;
                let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
                self.sd[r] = libm::sqrt(v);
            }
        }
    }

    /// First-run rate (round 0).
    pub fn first_run(&self) -> f64 {
        self.mean.first().copied().unwrap_or(0.0)
    }

    /// Rate after the last aging round.
    pub fn aged(&self) -> f64 {
        self.mean.last().copied().unwrap_or(0.0)
    }
}

/// What an experiment measured.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ExperimentResult {
    /// Shuffle off.
    pub in_order: Curve,
    /// Shuffle on.
    pub shuffled: Curve,
    /// Seeds run.
    pub seeds: usize,
    /// Page allocations and frees simulated, all runs together ([`Zone::page_ops`]).
    pub page_ops: u64,
}

impl ExperimentConfig {
    /// Checks the configuration without running it.
    ///
    /// # Errors
    /// [`Error::ZeroSeeds`], [`Error::OrderTooLarge`], the cache errors of
    /// [`MemSideCache::new`], the zone errors of [`ZoneConfig::with_span`].
    pub fn validate(&self) -> Result<(), Error> {
        if self.seeds.is_empty() {
            return Err(Error::ZeroSeeds);
        }
        if self.shuffle_order > MAX_ORDER {
            return Err(Error::OrderTooLarge {
                order: self.shuffle_order,
            });
        }
        MemSideCache::new(self.cache_bytes, self.cache_mode)?;
        ZoneConfig::with_span(self.zone_start_pfn, self.zone_pages)?;
        if matches!(self.workload, Workload::TwoInstance(_)) {
            let both = self.zone_pages.checked_mul(2).ok_or(Error::PfnOverflow)?;
            ZoneConfig::with_span(self.zone_start_pfn, both)?;
        }
        Ok(())
    }

    /// An upper estimate of the memory one run needs, in bytes: per simulated page 1 byte of
    /// page metadata and two 4-byte list links (the free area), plus up to 8 bytes in the
    /// aging's lists of allocated pages; per cache set an 8-byte tag; 16 MiB besides. Zones
    /// are simulated one policy and one seed at a time (two zones for the two-instance
    /// workload). Saturates instead of overflowing.
    pub fn memory_estimate(&self) -> u64 {
        let nodes: u64 = if matches!(self.workload, Workload::TwoInstance(_)) {
            2
        } else {
            1
        };
        let pages = self.zone_pages.saturating_mul(nodes);
        let sets = match self.cache_mode {
            CacheMode::Line => self.cache_bytes / 64,
            CacheMode::PageColour => self.cache_bytes / PAGE_SIZE,
        };
        pages
            .saturating_mul(1 + 4 + 4 + 8)
            .saturating_add(sets.saturating_mul(8))
            .saturating_add(16 << 20)
    }

    /// Cache capacity in pages.
    pub fn cache_pages(&self) -> u64 {
        self.cache_bytes / PAGE_SIZE
    }
}

/// Runs the experiment with generator `R` (zone and workload each get their own instance,
/// seeded from the seed), one seed after another, calling `progress(done, total)` after every
/// measurement.
///
/// # Errors
/// Those of [`ExperimentConfig::validate`] and of the workloads.
pub fn run_experiment<R: Rng + SeedableRng>(
    cfg: &ExperimentConfig,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExperimentResult, Error> {
    cfg.validate()?;
    let zipf = zipf_of(cfg)?;
    let total = measurements(cfg);
    let mut done = 0;
    let runs = crate::seeds::map_serial(&cfg.seeds, |seed| {
        run_seed::<R>(cfg, zipf.as_ref(), seed, &mut || {
            done += 1;
            progress(done, total);
        })
    })?;
    Ok(aggregate(cfg, &runs))
}

/// [`run_experiment`] with the seeds run in parallel on the current rayon thread pool (the
/// global one, or the pool whose `install` calls this: that is how a caller picks the number
/// of threads). Each seed runs exactly as in [`run_experiment`] and the results are combined
/// in seed order, so the result is bit-identical to the serial run's. `progress(done, total)`
/// is called from the worker threads after every measurement, `done` counting all seeds'.
///
/// # Errors
/// Those of [`run_experiment`]; where several seeds fail, one of their errors.
#[cfg(feature = "parallel")]
pub fn run_experiment_parallel<R: Rng + SeedableRng>(
    cfg: &ExperimentConfig,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<ExperimentResult, Error> {
    use core::sync::atomic::{AtomicU64, Ordering};
    cfg.validate()?;
    let zipf = zipf_of(cfg)?;
    let total = measurements(cfg);
    let done = AtomicU64::new(0);
    let runs = crate::seeds::map_parallel(&cfg.seeds, |seed| {
        run_seed::<R>(cfg, zipf.as_ref(), seed, &mut || {
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
        })
    })?;
    Ok(aggregate(cfg, &runs))
}

/// Measurements in a run: both policies, every round, every seed.
fn measurements(cfg: &ExperimentConfig) -> u64 {
    2 * cfg.seeds.len() as u64 * (u64::from(cfg.aging_rounds) + 1)
}

fn zipf_of(cfg: &ExperimentConfig) -> Result<Option<Zipf>, Error> {
    match &cfg.workload {
        Workload::Heap(h) => Ok(Some(Zipf::new(h.hot_pages as usize, h.zipf_s)?)),
        _ => Ok(None),
    }
}

/// One seed's conflict rates, per policy and round, and its page operations.
struct SeedRun {
    /// `rates[0]`: in-order, `rates[1]`: shuffled; one rate per round.
    rates: [Vec<f64>; 2],
    page_ops: u64,
}

/// The curves of all seeds, combined in seed order (the same sums in the same order whether
/// the seeds ran serially or in parallel).
fn aggregate(cfg: &ExperimentConfig, runs: &[SeedRun]) -> ExperimentResult {
    let rounds = cfg.aging_rounds as usize + 1;
    let mut curves = [Curve::new(rounds), Curve::new(rounds)];
    let mut page_ops = 0;
    for run in runs {
        for (curve, rates) in curves.iter_mut().zip(&run.rates) {
            for (round, &r) in rates.iter().enumerate() {
                curve.mean[round] += r / cfg.seeds.len() as f64;
                curve.min[round] = curve.min[round].min(r);
                curve.max[round] = curve.max[round].max(r);
                curve.samples[round].push(r);
            }
        }
        page_ops += run.page_ops;
    }
    let [mut in_order, mut shuffled] = curves;
    in_order.finish();
    shuffled.finish();
    ExperimentResult {
        in_order,
        shuffled,
        seeds: cfg.seeds.len(),
        page_ops,
    }
}

/// Both policies on one seed: boot, first run, then each aging round and a run. Calls `tick`
/// after every measurement.
fn run_seed<R: Rng + SeedableRng>(
    cfg: &ExperimentConfig,
    zipf: Option<&Zipf>,
    seed: u64,
    tick: &mut dyn FnMut(),
) -> Result<SeedRun, Error> {
    let rounds = cfg.aging_rounds as usize + 1;
    let mut out = SeedRun {
        rates: [Vec::with_capacity(rounds), Vec::with_capacity(rounds)],
        page_ops: 0,
    };
    for on in [false, true] {
        let policy = if on {
            ShufflePolicy {
                enabled: true,
                order: cfg.shuffle_order,
                mode: cfg.shuffle_mode,
                pick_tail: cfg.pick_tail,
            }
        } else {
            ShufflePolicy {
                order: cfg.shuffle_order,
                ..ShufflePolicy::OFF
            }
        };
        let nodes = if matches!(cfg.workload, Workload::TwoInstance(_)) {
            2
        } else {
            1
        };
        let mut zones = Vec::with_capacity(nodes);
        let cpus = cfg.server.as_ref().map_or(1, |s| s.cpus);
        for n in 0..nodes as u64 {
            let zc =
                ZoneConfig::with_span(cfg.zone_start_pfn + n * cfg.zone_pages, cfg.zone_pages)?
                    .kernel(cfg.kernel)
                    .pcp(if cfg.pcp {
                        PcpLists::Kernel { cpus }
                    } else {
                        PcpLists::Off
                    });
            let zseed = seed ^ (0xa076_1d64_78bd_642f_u64.wrapping_mul(n + 1));
            zones.push(Zone::new(&zc, policy, R::seed_from_u64(zseed))?);
        }
        // The workload's generator is the same for both policies.
        let mut wrng = R::seed_from_u64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
        let mut agers: Vec<Aging> = (0..nodes).map(|_| Aging::new()).collect();
        let mut servers: Vec<ServerAging> = (0..nodes).map(|_| ServerAging::new()).collect();
        let mut cache = MemSideCache::new(cfg.cache_bytes, cfg.cache_mode)?;
        let rates = &mut out.rates[usize::from(on)];
        for round in 0..rounds {
            if round > 0 {
                match &cfg.server {
                    Some(sp) => {
                        for (z, s) in zones.iter_mut().zip(servers.iter_mut()) {
                            s.round(z, &mut wrng, sp)?;
                        }
                    }
                    None => {
                        for (z, a) in zones.iter_mut().zip(agers.iter_mut()) {
                            a.round(z, &mut wrng, &cfg.aging)?;
                        }
                    }
                }
            }
            let st = match &cfg.server {
                Some(sp) => {
                    let srv = &mut servers[0];
                    cfg.workload.run(
                        &mut zones,
                        &mut cache,
                        &mut wrng,
                        zipf,
                        Some(&mut |z: &mut Zone<R>| srv.alloc(z, sp, 0, MigrateType::Movable)),
                    )?
                }
                None => cfg
                    .workload
                    .run(&mut zones, &mut cache, &mut wrng, zipf, None)?,
            };
            rates.push(st.conflict_rate());
            tick();
        }
        out.page_ops += zones.iter().map(Zone::page_ops).sum::<u64>();
    }
    Ok(out)
}
