//! STREAM-like sweeps (`a[i] = b[i] + s·c[i]`) over three arrays, every line or every page.

use rand_core::Rng;

use super::{PageAlloc, alloc_run_with, free_run};
use crate::Error;
use crate::cache::{CacheStats, MemSideCache};
use crate::zone::{MigrateType, PAGE_SIZE, Zone};

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
pub(super) fn sweep_page(cache: &mut MemSideCache, pages: &[u64]) {
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
