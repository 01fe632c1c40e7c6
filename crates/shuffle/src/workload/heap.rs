//! The Java-like heap at 3× the cache: order-0 movable pages in virtual order, a
//! Zipf-popular hot region that takes most accesses, the rest uniform.

use alloc::vec::Vec;

use rand_core::Rng;

use super::{PageAlloc, Zipf, alloc_run_with, free_run};
use crate::Error;
use crate::cache::{CacheStats, MemSideCache};
use crate::draw::{uniform, unit};
use crate::zone::{MigrateType, PAGE_SIZE, Zone};

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
