//! The zone: a span of PFNs with holes, pageblocks carrying a migratetype, the buddy free
//! lists ([`FreeArea`]), per-CPU page lists, and the page allocator's policy on top of them —
//! where a freed block goes, merging, allocation and fallback, boot and hotplug — following
//! Linux `mm/page_alloc.c` of the version chosen with [`ZoneConfig::kernel`] (see
//! [`crate::kernel`] for what differs).
//!
//! * Allocation (`__rmqueue_smallest`) takes the head of the smallest order with a free block
//!   of the wanted migratetype; `expand()` keeps the low half and puts each high half on the
//!   head of the wanted type's list one order down. Failing that, `__rmqueue_fallback` takes
//!   the largest block of a fallback type (`fallbacks[]`), claims its pageblock when
//!   `can_steal_fallback` allows and at least half of the pageblock is free
//!   (`steal_suitable_fallback`, `move_freepages_block`), and allocates from the wanted list.
//!   Order-0 allocations go through the per-CPU lists ([`crate::pcp`]); an allocation that
//!   finds nothing drains them (`drain_all_pages`) and tries once more.
//! * A free (`__free_one_page`) merges with its buddy while the buddy is a free block of the
//!   same order, then joins the list of the **freed page's** migratetype (its pageblock's type
//!   at free time, or the per-CPU list's): at the tail with `FPI_TO_TAIL` (boot and hotplug
//!   since 5.10), else at the head or the tail by the shuffle coin at orders ≥ the shuffle
//!   order, else at the tail when the merged block's buddy is free (`buddy_merge_likely`),
//!   else at the head.
//! * Boot marks every pageblock MOVABLE (`memmap_init_zone`), sets the pageblock types given
//!   with [`ZoneConfig::migratetype`] (`set_pageblock_migratetype`, before any page is free,
//!   as `init_cma_reserved_pageblock` does for CMA), frees every present range in ascending
//!   PFN order in the largest naturally aligned chunks (`__free_pages_memory` →
//!   `__free_pages_core` → `__free_one_page`, so each block joins its pageblock's list by the
//!   version's placement rule), then shuffles.
//! * [`Zone::online_pages`] (hotplug) marks every pageblock whose first PFN it onlines MOVABLE
//!   (`memmap_init_zone(MEMMAP_HOTPLUG)`; 5.10 isolates them first and ends at MOVABLE, with
//!   the same lists for section-aligned ranges), frees the range the way boot does and
//!   shuffles the zone again.
//!
//! Simplifications: no watermarks inside the zone (the server aging keeps its own), no
//! `ALLOC_NOFRAGMENT`, no CMA or isolation, and "alike pages" in `steal_suitable_fallback`
//! count as 0 (the model does not remember what an allocated page holds).

use alloc::vec::Vec;

pub use crate::free_area::{
    FreeArea, MAX_ORDER, MAX_SPANNED_PAGES, MigrateType, NR_MIGRATETYPES, NR_ORDERS, PAGE_SIZE,
    PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER, SHUFFLE_ORDER,
};
use crate::kernel::KernelVersion;
use crate::pcp::PerCpuPages;
use crate::shuffle::PickTail;

mod allocate;
mod boot;
mod config;
mod free;
mod query;
mod reorder;

pub use config::{ShufflePolicy, ZoneConfig};

/// A zone after boot: buddy free lists and per-CPU lists over a PFN span, driven by a
/// seedable generator `R` that stands in for the kernel's `get_random_long()` /
/// `get_random_u64()`.
pub struct Zone<R> {
    area: FreeArea,
    pcp: Option<PerCpuPages>,
    policy: ShufflePolicy,
    kernel: KernelVersion,
    tail: PickTail,
    rng: R,
    bulk: Vec<(u32, u8)>,
    ops: u64,
}

impl<R> core::fmt::Debug for Zone<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The generator's state is deliberately left out.
        f.debug_struct("Zone")
            .field("area", &self.area)
            .field("kernel", &self.kernel)
            .field("policy", &self.policy)
            .field("pcp_pages", &self.nr_pcp_pages())
            .finish_non_exhaustive()
    }
}
