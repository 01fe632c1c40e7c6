//! A JVM-like heap with HotSpot's generational layout, as a workload for the cache model.
//!
//! **Cited sizes.** The heap is 3× the cache (commit e900a918b098, whose Java server
//! benchmark's heap "exceeded cache size by 3X"). Its generations are sized as HotSpot sizes
//! them (Oracle, "Java Platform, Standard Edition HotSpot Virtual Machine Garbage Collection
//! Tuning Guide", Java SE 8, chapter 4 "Sizing the Generations") and laid out in virtual order
//! as the serial collector reserves them (OpenJDK `DefNewGeneration`: eden, then the two
//! survivor spaces, below the old generation): a young generation of `1 / (NewRatio + 1)` of
//! the heap, made of eden and two survivor spaces of `1 / (SurvivorRatio + 2)` of it each,
//! then the old generation, with the defaults of the guide's "Default Parameter Values for
//! Survivor Space Sizing" table, [`NEW_RATIO`] = 2 and [`SURVIVOR_RATIO`] = 8 (`java
//! -XX:+PrintFlagsFinal` prints both). Threads fault eden in through their thread-local
//! allocation buffers (TLABs), whose initial size HotSpot sets to eden's capacity over
//! `threads × target_refills`, with `target_refills = 100 / (2 × TLABWasteTargetPercent)` =
//! [`TLAB_TARGET_REFILLS`] = 50 at the default `TLABWasteTargetPercent` = 1 (OpenJDK,
//! `ThreadLocalAllocBuffer::initial_desired_size` and `startup_initialization` in
//! `threadLocalAllocBuffer.cpp`). Large pages are off unless asked for (`-XX:+UseLargePages`
//! is disabled by default, Oracle's `java` command reference), so [`JvmSpec::hotspot`] leaves
//! [`JvmSpec::huge`] `false`.
//!
//! **Assumptions.** How the benchmark's accesses fall on the generations has no public figure:
//! commit e900a918b098 does not describe its benchmark. Those numbers are the fields of
//! [`JvmAssumptions`], each with a default chosen here, not measured: the shares of the
//! accesses to eden, the active survivor space, a hot part of the old generation, the cold
//! bulk of the old generation and a miss floor, and the size of the hot part. So are the
//! number of faulting threads (the model server's CPUs) and running the same TLAB-sized runs
//! for the survivor spaces and the old generation, which HotSpot fills by copying during
//! collections.
//!
//! Accesses go to:
//!
//! * **eden**, swept: allocation bumps a pointer through it, and when it wraps (a minor
//!   collection) the survivor spaces swap roles;
//! * **the active survivor space**, uniformly (objects copied there at the last collection);
//! * **the hot part of the old generation**, uniformly, at its start (long-lived objects
//!   promoted first);
//! * **the cold bulk** of the old generation, uniformly;
//! * **a miss floor**: accesses that miss whatever the placement (off-heap buffers, I/O), counted
//!   as misses and conflicts without touching the cache; a floor `f` turns a rate `r` of the
//!   rest into `f + (1 − f) · r`.
//!
//! The heap is faulted in region by region (eden, survivors, old) by `threads` threads taking
//! turns in runs of one TLAB, thread `t` on CPU `t mod cpus` (so through that CPU's per-CPU
//! list), in 4 KiB pages or, with `huge`, in 2 MiB (order-9) pages where the zone has them.

use alloc::vec::Vec;

use rand_core::Rng;

use crate::Error;
use crate::cache::{CacheStats, MemSideCache};
use crate::draw::{uniform, unit};
use crate::free_area::PAGEBLOCK_ORDER;
use crate::zone::{PAGE_SIZE, Zone};

/// Heap size over cache size (commit e900a918b098: the heap "exceeded cache size by 3X").
pub const HEAP_TO_CACHE: u64 = 3;
/// HotSpot's default `-XX:NewRatio`: old generation : young generation = 2 : 1 (Oracle's GC
/// tuning guide, Java SE 8, "Sizing the Generations", table "Default Parameter Values for
/// Survivor Space Sizing").
pub const NEW_RATIO: u64 = 2;
/// HotSpot's default `-XX:SurvivorRatio`: eden : one survivor space = 8 : 1 (same guide and
/// table).
pub const SURVIVOR_RATIO: u64 = 8;
/// The old generation's size in caches: [`HEAP_TO_CACHE`] × `NEW_RATIO / (NEW_RATIO + 1)`
/// (2), the most [`JvmAssumptions::hot_old_of_cache`] can be.
pub const OLD_OF_CACHE: f64 = (HEAP_TO_CACHE * NEW_RATIO) as f64 / (NEW_RATIO + 1) as f64;
/// `100 / (2 * TLABWasteTargetPercent)` at HotSpot's default `TLABWasteTargetPercent` = 1:
/// the TLAB refills per eden that sizes a thread's first TLAB (OpenJDK
/// `threadLocalAllocBuffer.cpp`).
pub const TLAB_TARGET_REFILLS: u64 = 50;

/// What the JVM case assumes where no public source gives a number (module docs). Every field
/// is an assumption of this model, not a measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JvmAssumptions {
    /// Share of the accesses that allocate in eden (default 0.5).
    pub eden: f64,
    /// Share to the active survivor space (default 0.05).
    pub survivor: f64,
    /// Share to the hot part of the old generation (default 0.4).
    pub hot_old: f64,
    /// Share to the cold bulk of the old generation (default 0.05).
    pub cold_old: f64,
    /// Share that misses whatever the placement (default 0).
    pub miss_floor: f64,
    /// Size of the hot part of the old generation as a fraction of the cache (default 1/8).
    pub hot_old_of_cache: f64,
}

impl Default for JvmAssumptions {
    fn default() -> Self {
        JvmAssumptions {
            eden: 0.5,
            survivor: 0.05,
            hot_old: 0.4,
            cold_old: 0.05,
            miss_floor: 0.0,
            hot_old_of_cache: 0.125,
        }
    }
}

impl JvmAssumptions {
    /// The five shares in access order: eden, survivor, hot old, cold old, miss floor.
    pub fn shares(&self) -> [f64; 5] {
        [
            self.eden,
            self.survivor,
            self.hot_old,
            self.cold_old,
            self.miss_floor,
        ]
    }

    /// Checks the shares and the hot part's size.
    ///
    /// # Errors
    /// [`Error::BadParameter`] for a share outside `0..=1`, shares that do not sum to 1, or a
    /// hot part that is not above 0 and within the old generation (2 caches: [`HEAP_TO_CACHE`]
    /// × `NEW_RATIO / (NEW_RATIO + 1)`).
    pub fn validate(&self) -> Result<(), Error> {
        let s = self.shares();
        let sum: f64 = s.iter().sum();
        if s.iter().any(|x| !(0.0..=1.0).contains(x)) || (sum - 1.0).abs() > 1e-9 {
            return Err(Error::BadParameter(
                "JVM access shares must be within 0..=1 and sum to 1",
            ));
        }
        if !(self.hot_old_of_cache > 0.0 && self.hot_old_of_cache <= OLD_OF_CACHE) {
            return Err(Error::BadParameter(
                "JVM hot old part must be above 0 and within the old generation (2 caches)",
            ));
        }
        Ok(())
    }
}

/// The JVM-like heap (module docs), in pages.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JvmSpec {
    /// Heap size.
    pub heap_pages: u64,
    /// Eden.
    pub eden_pages: u64,
    /// Each survivor space.
    pub survivor_pages: u64,
    /// The hot part of the old generation.
    pub hot_old_pages: u64,
    /// Shares of the accesses: eden, survivor, hot old, cold old, miss floor (sum 1).
    pub shares: [f64; 5],
    /// Threads faulting the heap in.
    pub threads: u32,
    /// Pages a thread faults before the next takes its turn (one TLAB).
    pub fault_run: u64,
    /// 2 MiB pages where the zone has them (4 KiB pages otherwise).
    pub huge: bool,
    /// Accesses measured.
    pub accesses: u64,
    /// Accesses run first to warm the cache, not counted.
    pub warmup: u64,
}

impl JvmSpec {
    /// HotSpot's default layout for a cache of `cache_pages` (module docs): heap
    /// [`HEAP_TO_CACHE`] × the cache, young generation `heap / (NEW_RATIO + 1)`, each survivor
    /// space `young / (SURVIVOR_RATIO + 2)`, eden the rest of the young generation, a TLAB of
    /// `eden / (threads × TLAB_TARGET_REFILLS)`; the hot old part and the shares from
    /// `assume`; `accesses` measured after `accesses / 4` of warm-up; 4 KiB pages.
    pub fn hotspot(cache_pages: u64, accesses: u64, threads: u32, assume: &JvmAssumptions) -> Self {
        let threads = threads.max(1);
        let heap_pages = HEAP_TO_CACHE * cache_pages;
        let young = heap_pages / (NEW_RATIO + 1);
        let survivor_pages = young / (SURVIVOR_RATIO + 2);
        let eden_pages = young - 2 * survivor_pages;
        JvmSpec {
            heap_pages,
            eden_pages,
            survivor_pages,
            hot_old_pages: (cache_pages as f64 * assume.hot_old_of_cache) as u64,
            shares: assume.shares(),
            threads,
            fault_run: (eden_pages / (u64::from(threads) * TLAB_TARGET_REFILLS)).max(1),
            huge: false,
            accesses,
            warmup: accesses / 4,
        }
    }

    /// The old generation's size in pages.
    pub fn old_pages(&self) -> u64 {
        self.heap_pages
            .saturating_sub(self.eden_pages + 2 * self.survivor_pages)
    }

    /// Checks the layout and the shares.
    ///
    /// # Errors
    /// [`Error::BadParameter`].
    pub fn validate(&self) -> Result<(), Error> {
        let young = self
            .eden_pages
            .checked_add(self.survivor_pages.saturating_mul(2))
            .ok_or(Error::BadParameter("JVM generations overflow"))?;
        if self.eden_pages == 0 || self.survivor_pages == 0 || young >= self.heap_pages {
            return Err(Error::BadParameter(
                "JVM heap needs eden, survivors and an old generation",
            ));
        }
        if self.hot_old_pages == 0 || self.hot_old_pages > self.old_pages() {
            return Err(Error::BadParameter(
                "JVM hot old part must be within the old generation",
            ));
        }
        let sum: f64 = self.shares.iter().sum();
        if self.shares.iter().any(|s| !(0.0..=1.0).contains(s)) || (sum - 1.0).abs() > 1e-9 {
            return Err(Error::BadParameter(
                "JVM access shares must be within 0..=1 and sum to 1",
            ));
        }
        if self.threads == 0 || self.fault_run == 0 || self.accesses == 0 {
            return Err(Error::BadParameter(
                "JVM heap needs threads, a fault run and accesses",
            ));
        }
        Ok(())
    }
}

/// How the heap's pages are had: `alloc(zone, cpu, order)`.
pub type JvmAlloc<'a, R> = dyn FnMut(&mut Zone<R>, u32, u8) -> Result<Option<u64>, Error> + 'a;

/// Runs the heap once: fault it in through `alloc`, access it, free it. The cache is flushed
/// first; the returned counters include the miss floor.
///
/// # Errors
/// Those of [`JvmSpec::validate`]; [`Error::BadParameter`] when the heap does not fit.
pub fn run_jvm<R: Rng, W: Rng>(
    zone: &mut Zone<R>,
    cache: &mut MemSideCache,
    rng: &mut W,
    spec: &JvmSpec,
    cpus: u32,
    alloc: &mut JvmAlloc<'_, R>,
) -> Result<CacheStats, Error> {
    spec.validate()?;
    let (phys, blocks) = fault_in(zone, spec, cpus.max(1), alloc)?;
    let eden = spec.eden_pages;
    let surv = [eden, eden + spec.survivor_pages];
    let old = eden + 2 * spec.survivor_pages;
    let cold = spec.old_pages() - spec.hot_old_pages;
    let mut cum = [0.0; 5];
    let mut acc = 0.0;
    for (c, s) in cum.iter_mut().zip(spec.shares) {
        acc += s;
        *c = acc;
    }
    let (mut cursor, mut active, mut floor) = (0u64, 0usize, 0u64);
    cache.flush();
    let mut one = |rng: &mut W, cache: &mut MemSideCache, counted: bool| {
        let u = unit(rng);
        let v = if u <= cum[0] {
            let v = cursor;
            cursor += 1;
            if cursor == eden {
                cursor = 0;
                active ^= 1;
            }
            v
        } else if u <= cum[1] {
            surv[active] + uniform(rng, spec.survivor_pages)
        } else if u <= cum[2] || (u <= cum[3] && cold == 0) {
            // A hot part as large as the old generation leaves no cold bulk: the old
            // generation is all hot.
            old + uniform(rng, spec.hot_old_pages)
        } else if u <= cum[3] {
            old + spec.hot_old_pages + uniform(rng, cold)
        } else {
            floor += u64::from(counted);
            return;
        };
        let off = rng.next_u64() % PAGE_SIZE;
        cache.access_page(phys[v as usize], off);
    };
    for _ in 0..spec.warmup {
        one(rng, cache, false);
    }
    cache.reset_stats();
    for _ in 0..spec.accesses {
        one(rng, cache, true);
    }
    let mut st = cache.stats();
    st.accesses += floor;
    st.misses += floor;
    st.conflicts += floor;
    for (pfn, order) in blocks {
        zone.free_pages(pfn, order)?;
    }
    Ok(st)
}

/// A faulted heap: per virtual page its PFN, and the blocks (PFN, order) to free.
type Faulted = (Vec<u64>, Vec<(u64, u8)>);

/// Faults the heap in (module docs).
fn fault_in<R: Rng>(
    zone: &mut Zone<R>,
    spec: &JvmSpec,
    cpus: u32,
    alloc: &mut JvmAlloc<'_, R>,
) -> Result<Faulted, Error> {
    let huge = 1u64 << PAGEBLOCK_ORDER;
    let mut phys = Vec::with_capacity(spec.heap_pages as usize);
    let mut blocks = Vec::new();
    let young = spec.eden_pages + 2 * spec.survivor_pages;
    let regions = [
        (0, spec.eden_pages),
        (spec.eden_pages, young),
        (young, spec.heap_pages),
    ];
    let mut thread = 0u32;
    for (start, end) in regions {
        let mut v = start;
        while v < end {
            let cpu = thread % cpus;
            thread = (thread + 1) % spec.threads;
            let run_end = (v + spec.fault_run).min(end);
            while v < run_end {
                let got = if spec.huge && v % huge == 0 && end - v >= huge {
                    alloc(zone, cpu, PAGEBLOCK_ORDER)?.map(|p| (p, PAGEBLOCK_ORDER))
                } else {
                    None
                };
                let (pfn, order) = match got {
                    Some(b) => b,
                    None => match alloc(zone, cpu, 0)? {
                        Some(p) => (p, 0),
                        None => {
                            for (pfn, order) in blocks {
                                zone.free_pages(pfn, order)?;
                            }
                            return Err(Error::BadParameter(
                                "JVM heap does not fit in the zone's free memory",
                            ));
                        }
                    },
                };
                blocks.push((pfn, order));
                for i in 0..1u64 << order {
                    phys.push(pfn + i);
                }
                v += 1 << order;
            }
        }
    }
    Ok((phys, blocks))
}
