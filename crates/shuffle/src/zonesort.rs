//! Intel's `zonesort` module for Xeon Phi x200 ("Knights Landing") in cache mode, as NERSC
//! describes running it before each job on its KNL nodes: every free list is sorted by
//! physical address, so allocations come back in address order and a working set the size of
//! the MCDRAM cache maps onto distinct cache slots; at the largest order, blocks are queued by
//! how many times their cache slots are already covered by memory in use, least covered
//! first, so a new allocation fills the slots that nothing else maps to.
//!
//! A cache *slot* here is one order-10 block's worth of cache (4 MiB): slot of a block =
//! `(pfn / 1024) mod (cache_pages / 1024)`. The cover of a slot is the number of pages in use
//! (present and not on a buddy free list) whose 4 MiB granule maps to it; blocks are queued by
//! the times their slot is covered, `ceil(cover / 1024)` (a partly covered slot counts: its
//! pages in use would conflict), then by address. [`crate::Zone::slot_cover`] counts one zone;
//! a caller with several zones behind one cache (NUMA nodes) adds their covers up.
//!
//! Like the module, this works on the buddy lists only: pages on per-CPU lists stay there.

use alloc::vec;
use alloc::vec::Vec;

use crate::Error;
use crate::free_area::{FreeArea, MAX_ORDER, NR_MIGRATETYPES};

/// Pages per cache slot (one order-10 block).
pub const SLOT_PAGES: u64 = 1 << MAX_ORDER;

fn slots(cache_pages: u64) -> Result<u64, Error> {
    if cache_pages == 0 || !cache_pages.is_multiple_of(SLOT_PAGES) {
        return Err(Error::BadParameter(
            "zonesort needs a cache of a whole number of 4 MiB slots",
        ));
    }
    Ok(cache_pages / SLOT_PAGES)
}

/// Pages in use per cache slot for a cache of `cache_pages` pages.
///
/// # Errors
/// [`Error::BadParameter`] unless `cache_pages` is a positive multiple of 1024.
pub(crate) fn slot_cover(area: &FreeArea, cache_pages: u64) -> Result<Vec<u64>, Error> {
    let n = slots(cache_pages)?;
    let mut cover = vec![0u64; n as usize];
    let start = area.start_pfn();
    // Present pages per slot, then subtract the free ones.
    for i in 0..area.spanned_pages() as u32 {
        if !area.is_hole(i) {
            let s = ((start + u64::from(i)) / SLOT_PAGES) % n;
            cover[s as usize] += 1;
        }
    }
    for order in 0..=MAX_ORDER {
        for mt in 0..NR_MIGRATETYPES as u8 {
            for i in area.list_nodes(order, mt) {
                let pfn = start + u64::from(i);
                let s = ((pfn / SLOT_PAGES) % n) as usize;
                cover[s] -= 1u64 << order;
            }
        }
    }
    Ok(cover)
}

/// Sorts every free list of `area` by address; the order-10 lists by the times their slot is
/// covered (`ceil(cover / 1024)`, `cover` one entry per slot), then by address.
///
/// # Errors
/// [`Error::BadParameter`] unless `cache_pages` is a positive multiple of 1024 and `cover` has
/// one entry per slot.
pub(crate) fn zonesort(area: &mut FreeArea, cache_pages: u64, cover: &[u64]) -> Result<(), Error> {
    let n = slots(cache_pages)?;
    if cover.len() as u64 != n {
        return Err(Error::BadParameter(
            "zonesort cover needs one entry per cache slot",
        ));
    }
    let start = area.start_pfn();
    for order in 0..=MAX_ORDER {
        for mt in 0..NR_MIGRATETYPES as u8 {
            let mut nodes = area.list_nodes(order, mt);
            if order == MAX_ORDER {
                nodes.sort_unstable_by_key(|&i| {
                    let pfn = start + u64::from(i);
                    (
                        cover[((pfn / SLOT_PAGES) % n) as usize].div_ceil(SLOT_PAGES),
                        i,
                    )
                });
            } else {
                nodes.sort_unstable();
            }
            area.relink(order, mt, &nodes);
        }
    }
    Ok(())
}
