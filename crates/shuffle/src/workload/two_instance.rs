//! The contrived two-instance case: one instance on each of two nodes whose bases alias in
//! one shared cache, accessed uniformly or streamed.

use alloc::vec::Vec;

use rand_core::Rng;

use super::stream::sweep_page;
use super::{alloc_run, free_run};
use crate::Error;
use crate::cache::{CacheStats, MemSideCache};
use crate::draw::uniform;
use crate::zone::{MigrateType, PAGE_SIZE, Zone};

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
