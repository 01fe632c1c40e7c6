//! Workloads that run on a booted zone and touch the memory-side cache: the aging phase, the
//! Java-like heap at 3× the cache with a hot Zipf subset, a STREAM-like sweep, and the
//! two-instance contrived case, after the measurements quoted by commit e900a918b098 ("mm:
//! shuffle initial free memory to improve memory-side-cache utilization", Linux 5.2).
//!
//! All randomness comes from the workload's own generator, so shuffle off and on replay the
//! same workload and differ only in where the allocator puts the pages.

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::Reverse;

use rand_core::Rng;

use crate::Error;
use crate::cache::{CacheStats, MemSideCache};
use crate::draw::{uniform, unit};
use crate::zone::{MAX_ORDER, MigrateType, PAGE_SIZE, Zone};

/// A Zipf(s) sampler over ranks `0 .. n` (rank 0 the most popular), by inverse CDF.
#[derive(Clone, Debug)]
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// Weights `1 / (k + 1)^s`.
    ///
    /// # Errors
    /// [`Error::BadParameter`] for `n == 0` or a negative or non-finite `s`.
    pub fn new(n: usize, s: f64) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::BadParameter("Zipf over zero ranks"));
        }
        if !(s.is_finite() && s >= 0.0) {
            return Err(Error::BadParameter("Zipf exponent must be finite and >= 0"));
        }
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for k in 0..n {
            acc += libm::pow(k as f64 + 1.0, -s);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Ok(Zipf { cdf })
    }

    /// One rank.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let u = unit(rng);
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

/// The Java-like heap: `heap_pages` order-0 movable pages allocated in virtual order; a hot
/// region (the first `hot_pages` virtual pages, Zipf-popular within) takes `hot_prob` of the
/// accesses, the rest fall uniformly on the whole heap.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HeapSpec {
    /// Heap size in pages.
    pub heap_pages: u64,
    /// Hot region size in pages (≤ `heap_pages`).
    pub hot_pages: u64,
    /// Share of accesses that go to the hot region.
    pub hot_prob: f64,
    /// Zipf exponent inside the hot region.
    pub zipf_s: f64,
    /// Accesses measured.
    pub accesses: u64,
    /// Accesses run first to warm the cache, not counted.
    pub warmup: u64,
    /// `false`: the hot region is the first `hot_pages` virtual pages (a young generation
    /// touched first); `true`: the hot pages are spread over the heap by a random permutation
    /// drawn per run (hot objects scattered in an old generation).
    pub hot_spread: bool,
}

impl HeapSpec {
    fn validate(&self) -> Result<(), Error> {
        if self.heap_pages == 0 || self.hot_pages == 0 || self.hot_pages > self.heap_pages {
            return Err(Error::BadParameter(
                "heap needs 0 < hot_pages <= heap_pages",
            ));
        }
        if !(0.0..=1.0).contains(&self.hot_prob) {
            return Err(Error::BadParameter("hot_prob must be within 0..=1"));
        }
        if self.accesses == 0 {
            return Err(Error::BadParameter(
                "heap needs at least one measured access",
            ));
        }
        Ok(())
    }
}

/// Which workload an experiment measures.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Workload {
    /// The Java-like heap with a hot Zipf subset.
    Heap(HeapSpec),
    /// The STREAM-like sweep.
    Stream(StreamSpec),
    /// The two-instance contrived case (two nodes of `zone_pages` each).
    TwoInstance(TwoInstanceSpec),
}

impl Workload {
    /// Runs the workload once on `zones` (the first; both for the two-instance case) through
    /// `cache`, drawing from `rng`: [`run_heap`] (its pages from `alloc` when given, e.g. a
    /// server's reclaim; `zipf` is its hot-region table), [`run_stream`] or
    /// [`run_two_instance`].
    ///
    /// # Errors
    /// Those of the workload; [`Error::BadParameter`] for a heap without its Zipf table, or
    /// fewer zones than the workload needs.
    pub fn run<R: Rng, W: Rng>(
        &self,
        zones: &mut [Zone<R>],
        cache: &mut MemSideCache,
        rng: &mut W,
        zipf: Option<&Zipf>,
        alloc: Option<&mut PageAlloc<'_, R>>,
    ) -> Result<CacheStats, Error> {
        let needed = if matches!(self, Workload::TwoInstance(_)) {
            2
        } else {
            1
        };
        if zones.len() < needed {
            return Err(Error::BadParameter("workload needs more zones"));
        }
        match self {
            Workload::Heap(h) => {
                let zipf = zipf.ok_or(Error::BadParameter("heap without its Zipf table"))?;
                match alloc {
                    Some(a) => run_heap_with(&mut zones[0], cache, rng, h, zipf, a),
                    None => run_heap(&mut zones[0], cache, rng, h, zipf),
                }
            }
            Workload::Stream(s) => match alloc {
                Some(a) => run_stream_with(&mut zones[0], cache, s, a),
                None => run_stream(&mut zones[0], cache, s),
            },
            Workload::TwoInstance(t) => {
                let (a, b) = zones.split_at_mut(1);
                run_two_instance(&mut a[0], &mut b[0], cache, rng, t)
            }
        }
    }
}

/// How a workload gets one order-0 page: straight from the zone, or through a server's
/// reclaim ([`crate::server::ServerAging::alloc`]).
pub type PageAlloc<'a, R> = dyn FnMut(&mut Zone<R>) -> Result<Option<u64>, Error> + 'a;

/// Allocates `pages` order-0 pages of `mt` in order; frees what it got and returns `None` if
/// the zone runs out.
fn alloc_run<R: Rng>(
    zone: &mut Zone<R>,
    pages: u64,
    mt: MigrateType,
) -> Result<Option<Vec<u64>>, Error> {
    alloc_run_with(zone, pages, &mut |z: &mut Zone<R>| z.alloc_pages(0, mt))
}

fn alloc_run_with<R: Rng>(
    zone: &mut Zone<R>,
    pages: u64,
    alloc: &mut PageAlloc<'_, R>,
) -> Result<Option<Vec<u64>>, Error> {
    let mut got = Vec::with_capacity(pages as usize);
    for _ in 0..pages {
        match alloc(zone)? {
            Some(p) => got.push(p),
            None => {
                free_run(zone, &got)?;
                return Ok(None);
            }
        }
    }
    Ok(Some(got))
}

/// Frees order-0 pages in the given order (a process exit unmaps in virtual order).
fn free_run<R: Rng>(zone: &mut Zone<R>, pages: &[u64]) -> Result<(), Error> {
    for &p in pages {
        zone.free_pages(p, 0)?;
    }
    Ok(())
}

/// Runs the heap once: allocate, warm up, measure, free. The cache is flushed first.
///
/// # Errors
/// [`Error::BadParameter`] for a bad spec or a heap that does not fit in the free memory.
pub fn run_heap<R: Rng, W: Rng>(
    zone: &mut Zone<R>,
    cache: &mut MemSideCache,
    rng: &mut W,
    spec: &HeapSpec,
    zipf: &Zipf,
) -> Result<CacheStats, Error> {
    run_heap_with(zone, cache, rng, spec, zipf, &mut |z: &mut Zone<R>| {
        z.alloc_pages(0, MigrateType::Movable)
    })
}

/// [`run_heap`] with the heap's pages from `alloc` (e.g. through a server's reclaim).
///
/// # Errors
/// As [`run_heap`].
pub fn run_heap_with<R: Rng, W: Rng>(
    zone: &mut Zone<R>,
    cache: &mut MemSideCache,
    rng: &mut W,
    spec: &HeapSpec,
    zipf: &Zipf,
    alloc: &mut PageAlloc<'_, R>,
) -> Result<CacheStats, Error> {
    spec.validate()?;
    let Some(phys) = alloc_run_with(zone, spec.heap_pages, alloc)? else {
        return Err(Error::BadParameter(
            "heap does not fit in the zone's free memory",
        ));
    };
    cache.flush();
    let hot = spec.hot_pages as usize;
    // Hot rank -> virtual page.
    let mut hot_map: Vec<u32> = (0..spec.heap_pages as u32).collect();
    if spec.hot_spread {
        for i in (1..hot_map.len()).rev() {
            let j = uniform(rng, i as u64 + 1) as usize;
            hot_map.swap(i, j);
        }
    }
    let one = |rng: &mut W, cache: &mut MemSideCache| {
        let v = if unit(rng) <= spec.hot_prob {
            hot_map[zipf.sample(rng).min(hot - 1)] as usize
        } else {
            uniform(rng, spec.heap_pages) as usize
        };
        let off = rng.next_u64() % PAGE_SIZE;
        cache.access_page(phys[v], off);
    };
    for _ in 0..spec.warmup {
        one(rng, cache);
    }
    cache.reset_stats();
    for _ in 0..spec.accesses {
        one(rng, cache);
    }
    let st = cache.stats();
    free_run(zone, &phys)?;
    Ok(st)
}

/// STREAM-like: three arrays of `array_pages` pages, `sweeps` passes of `a[i] = b[i] + s·c[i]`
/// touching every line (line mode) or every page (page-colour mode); the first pass warms.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StreamSpec {
    /// Pages per array.
    pub array_pages: u64,
    /// Passes measured (one more runs first, unmeasured).
    pub sweeps: u32,
}

/// Runs the STREAM-like sweep once: allocate, sweep, free. The cache is flushed first.
///
/// # Errors
/// [`Error::BadParameter`] for zero pages or sweeps, or arrays that do not fit.
pub fn run_stream<R: Rng>(
    zone: &mut Zone<R>,
    cache: &mut MemSideCache,
    spec: &StreamSpec,
) -> Result<CacheStats, Error> {
    run_stream_with(zone, cache, spec, &mut |z: &mut Zone<R>| {
        z.alloc_pages(0, MigrateType::Movable)
    })
}

/// [`run_stream`] with the arrays' pages from `alloc` (e.g. through a server's reclaim).
///
/// # Errors
/// As [`run_stream`].
pub fn run_stream_with<R: Rng>(
    zone: &mut Zone<R>,
    cache: &mut MemSideCache,
    spec: &StreamSpec,
    alloc: &mut PageAlloc<'_, R>,
) -> Result<CacheStats, Error> {
    if spec.array_pages == 0 || spec.sweeps == 0 {
        return Err(Error::BadParameter("stream needs pages and sweeps"));
    }
    let Some(phys) = alloc_run_with(zone, 3 * spec.array_pages, alloc)? else {
        return Err(Error::BadParameter(
            "stream arrays do not fit in the zone's free memory",
        ));
    };
    let n = spec.array_pages as usize;
    let (a, rest) = phys.split_at(n);
    let (b, c) = rest.split_at(n);
    cache.flush();
    for sweep in 0..=spec.sweeps {
        if sweep == 1 {
            cache.reset_stats();
        }
        for i in 0..n {
            sweep_page(cache, &[b[i], c[i], a[i]]);
        }
    }
    let st = cache.stats();
    free_run(zone, &phys)?;
    Ok(st)
}

/// Touches every line (line mode) or the page (page-colour mode) of each page, interleaved.
fn sweep_page(cache: &mut MemSideCache, pages: &[u64]) {
    let step = match cache.mode() {
        crate::cache::CacheMode::Line => crate::cache::LINE_SIZE,
        crate::cache::CacheMode::PageColour => PAGE_SIZE,
    };
    let mut off = 0;
    while off < PAGE_SIZE {
        for &p in pages {
            cache.access_page(p, off);
        }
        off += step;
    }
}

/// What runs on the nodes before instance `k` allocates (see [`run_two_instance_stream`]).
pub type NodeHook<'a, R> = dyn FnMut(usize, &mut [Zone<R>; 2]) -> Result<(), Error> + 'a;

/// The two-instance case as a bandwidth tool runs it: each instance streams over its own
/// `pages` pages, the two interleaved page by page, `sweeps` measured passes after one warm
/// pass. `before[k]` runs on node `k` just before instance `k` allocates (e.g. a zonesort
/// that sees what instance 0 holds). Returns the stats; frees both instances.
///
/// # Errors
/// [`Error::BadParameter`] for zero pages or sweeps, or an instance that does not fit.
pub fn run_two_instance_stream<R: Rng>(
    nodes: &mut [Zone<R>; 2],
    cache: &mut MemSideCache,
    pages: u64,
    sweeps: u32,
    before: &mut NodeHook<'_, R>,
) -> Result<CacheStats, Error> {
    if pages == 0 || sweeps == 0 {
        return Err(Error::BadParameter("two-instance needs pages and sweeps"));
    }
    let mut inst: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for k in 0..2 {
        before(k, nodes)?;
        match alloc_run(&mut nodes[k], pages, MigrateType::Movable)? {
            Some(p) => inst[k] = p,
            None => {
                if k == 1 {
                    free_run(&mut nodes[0], &inst[0])?;
                }
                return Err(Error::BadParameter("an instance does not fit on its node"));
            }
        }
    }
    cache.flush();
    for sweep in 0..=sweeps {
        if sweep == 1 {
            cache.reset_stats();
        }
        for (&p0, &p1) in inst[0].iter().zip(&inst[1]) {
            sweep_page(cache, &[p0, p1]);
        }
    }
    let st = cache.stats();
    for k in 0..2 {
        free_run(&mut nodes[k], &inst[k])?;
    }
    Ok(st)
}

/// The contrived two-instance case: one instance of `pages` pages on each of two nodes (two
/// zones), accessed uniformly and alternately through one shared cache.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TwoInstanceSpec {
    /// Pages per instance.
    pub pages: u64,
    /// Accesses measured.
    pub accesses: u64,
    /// Accesses run first to warm the cache, not counted.
    pub warmup: u64,
}

/// Runs both instances once: allocate each on its node, access, free.
///
/// # Errors
/// [`Error::BadParameter`] for zero pages or accesses, or an instance that does not fit.
pub fn run_two_instance<R: Rng, W: Rng>(
    node0: &mut Zone<R>,
    node1: &mut Zone<R>,
    cache: &mut MemSideCache,
    rng: &mut W,
    spec: &TwoInstanceSpec,
) -> Result<CacheStats, Error> {
    if spec.pages == 0 || spec.accesses == 0 {
        return Err(Error::BadParameter("two-instance needs pages and accesses"));
    }
    let Some(p0) = alloc_run(node0, spec.pages, MigrateType::Movable)? else {
        return Err(Error::BadParameter("instance 0 does not fit on its node"));
    };
    let Some(p1) = alloc_run(node1, spec.pages, MigrateType::Movable)? else {
        free_run(node0, &p0)?;
        return Err(Error::BadParameter("instance 1 does not fit on its node"));
    };
    cache.flush();
    for k in 0..spec.warmup + spec.accesses {
        if k == spec.warmup {
            cache.reset_stats();
        }
        let inst = if k & 1 == 0 { &p0 } else { &p1 };
        let v = uniform(rng, spec.pages) as usize;
        cache.access_page(inst[v], rng.next_u64() % PAGE_SIZE);
    }
    let st = cache.stats();
    free_run(node0, &p0)?;
    free_run(node1, &p1)?;
    Ok(st)
}

/// One aging round: `ops` allocations of mixed orders and migratetypes, each living a
/// mixed-length time (most short, some spanning rounds), with frees as lifetimes end; the
/// live set is kept near `live_fraction` of the zone's present pages.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AgingSpec {
    /// Allocations per round.
    pub ops: u64,
    /// Share of present pages the aging keeps allocated at most.
    pub live_fraction: f64,
    /// `(order, weight)` pairs the allocation orders are drawn from.
    pub orders: Vec<(u8, u32)>,
    /// Probability that an allocation is long-lived.
    pub long_prob: f64,
    /// Mean lifetime of a short-lived allocation, in allocations.
    pub short_mean: u64,
    /// Mean lifetime of a long-lived allocation, in rounds.
    pub long_rounds: u64,
    /// Probability that an allocation is unmovable (the rest are movable).
    pub unmovable_prob: f64,
    /// At the end of the round every short-lived allocation still live is freed (its job
    /// exited), soonest-expiring first; long-lived ones stay.
    pub drain_short: bool,
}

impl AgingSpec {
    fn validate(&self) -> Result<(), Error> {
        if self.orders.is_empty() || self.orders.iter().all(|&(_, w)| w == 0) {
            return Err(Error::BadParameter(
                "aging needs at least one order with a weight",
            ));
        }
        if let Some(&(o, _)) = self.orders.iter().find(|&&(o, _)| o > MAX_ORDER) {
            return Err(Error::OrderTooLarge { order: o });
        }
        if !(0.0..=1.0).contains(&self.live_fraction)
            || !(0.0..=1.0).contains(&self.long_prob)
            || !(0.0..=1.0).contains(&self.unmovable_prob)
        {
            return Err(Error::BadParameter(
                "aging probabilities must be within 0..=1",
            ));
        }
        if self.short_mean == 0 || self.long_rounds == 0 {
            return Err(Error::BadParameter("aging lifetimes must be at least 1"));
        }
        Ok(())
    }
}

/// The aging state of one zone: live allocations ordered by expiry.
#[derive(Debug, Default)]
pub struct Aging {
    clock: u64,
    live_pages: u64,
    live: BinaryHeap<Reverse<(u64, u64, u8, bool)>>,
}

impl Aging {
    /// No live allocations.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pages the aging holds now.
    pub fn live_pages(&self) -> u64 {
        self.live_pages
    }

    fn free_due<R: Rng>(&mut self, zone: &mut Zone<R>, now: u64) -> Result<(), Error> {
        while let Some(&Reverse((t, pfn, order, _))) = self.live.peek() {
            if t > now {
                break;
            }
            self.live.pop();
            zone.free_pages(pfn, order)?;
            self.live_pages -= 1 << order;
        }
        Ok(())
    }

    fn free_oldest<R: Rng>(&mut self, zone: &mut Zone<R>) -> Result<bool, Error> {
        match self.live.pop() {
            Some(Reverse((_, pfn, order, _))) => {
                zone.free_pages(pfn, order)?;
                self.live_pages -= 1 << order;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Runs one round on `zone`.
    ///
    /// # Errors
    /// [`Error::BadParameter`] / [`Error::OrderTooLarge`] for a bad spec.
    pub fn round<R: Rng, W: Rng>(
        &mut self,
        zone: &mut Zone<R>,
        rng: &mut W,
        spec: &AgingSpec,
    ) -> Result<(), Error> {
        spec.validate()?;
        let total_w: u64 = spec.orders.iter().map(|&(_, w)| u64::from(w)).sum();
        let cap = (zone.present_pages() as f64 * spec.live_fraction) as u64;
        for _ in 0..spec.ops {
            self.clock += 1;
            self.free_due(zone, self.clock)?;
            let mut pick = uniform(rng, total_w);
            let mut order = 0;
            for &(o, w) in &spec.orders {
                if pick < u64::from(w) {
                    order = o;
                    break;
                }
                pick -= u64::from(w);
            }
            while self.live_pages + (1 << order) > cap {
                if !self.free_oldest(zone)? {
                    break;
                }
            }
            let mt = if unit(rng) <= spec.unmovable_prob {
                MigrateType::Unmovable
            } else {
                MigrateType::Movable
            };
            let Some(pfn) = zone.alloc_pages(order, mt)? else {
                continue;
            };
            let long = unit(rng) <= spec.long_prob;
            // Saturating: absurd lifetimes must not overflow (n >= 2 here, never 0).
            let span = if long {
                spec.long_rounds.saturating_mul(spec.ops).saturating_mul(2)
            } else {
                spec.short_mean.saturating_mul(2)
            };
            let life = 1 + uniform(rng, span);
            self.live
                .push(Reverse((self.clock + life, pfn, order, long)));
            self.live_pages += 1 << order;
        }
        if spec.drain_short {
            let mut keep = BinaryHeap::with_capacity(self.live.len());
            while let Some(Reverse(e)) = self.live.pop() {
                if e.3 {
                    keep.push(Reverse(e));
                } else {
                    zone.free_pages(e.1, e.2)?;
                    self.live_pages -= 1 << e.2;
                }
            }
            self.live = keep;
        }
        Ok(())
    }

    /// Frees everything the aging holds.
    ///
    /// # Errors
    /// Never in practice (the zone handed these blocks out); propagated from `free_pages`.
    pub fn release_all<R: Rng>(&mut self, zone: &mut Zone<R>) -> Result<(), Error> {
        while self.free_oldest(zone)? {}
        Ok(())
    }
}
