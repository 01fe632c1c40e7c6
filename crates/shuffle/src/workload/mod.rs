//! Workloads that run on a booted zone and touch the memory-side cache: the aging phase, the
//! Java-like heap at 3× the cache with a hot Zipf subset, a STREAM-like sweep, and the
//! two-instance contrived case, after the measurements quoted by commit e900a918b098 ("mm:
//! shuffle initial free memory to improve memory-side-cache utilization", Linux 5.2).
//!
//! All randomness comes from the workload's own generator, so shuffle off and on replay the
//! same workload and differ only in where the allocator puts the pages.

use alloc::vec::Vec;

use rand_core::Rng;

use crate::Error;
use crate::cache::{CacheStats, MemSideCache};
use crate::zone::{MigrateType, Zone};
mod aging;
mod heap;
mod stream;
mod two_instance;
mod zipf;

pub use aging::{Aging, AgingSpec};
pub use heap::{HeapSpec, run_heap, run_heap_with};
pub use stream::{StreamSpec, run_stream, run_stream_with};
pub use two_instance::{NodeHook, TwoInstanceSpec, run_two_instance, run_two_instance_stream};
pub use zipf::Zipf;

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
pub(super) fn alloc_run<R: Rng>(
    zone: &mut Zone<R>,
    pages: u64,
    mt: MigrateType,
) -> Result<Option<Vec<u64>>, Error> {
    alloc_run_with(zone, pages, &mut |z: &mut Zone<R>| z.alloc_pages(0, mt))
}

pub(super) fn alloc_run_with<R: Rng>(
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
pub(super) fn free_run<R: Rng>(zone: &mut Zone<R>, pages: &[u64]) -> Result<(), Error> {
    for &p in pages {
        zone.free_pages(p, 0)?;
    }
    Ok(())
}
