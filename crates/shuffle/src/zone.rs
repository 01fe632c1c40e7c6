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

use rand_core::Rng;

use crate::Error;
pub use crate::free_area::{
    FreeArea, MAX_ORDER, MAX_SPANNED_PAGES, MigrateType, NR_MIGRATETYPES, NR_ORDERS, PAGE_SIZE,
    PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER, SHUFFLE_ORDER,
};
use crate::kernel::KernelVersion;
use crate::pcp::{PcpLists, PerCpuPages};
use crate::shuffle::{PickTail, ShuffleMode, ShuffleStats};

/// Shape of a zone before boot: its span, its holes and its pageblocks' migratetypes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneConfig {
    start_pfn: u64,
    end_pfn: u64,
    holes: Vec<(u64, u64)>,
    migratetypes: Vec<(u64, u64, MigrateType)>,
    kernel: KernelVersion,
    pcp: PcpLists,
}

impl ZoneConfig {
    /// A zone spanning PFNs `start_pfn .. end_pfn`, no holes, every pageblock movable, the
    /// newest kernel's rules ([`KernelVersion::V5_10`]) and per-CPU lists of the kernel's size
    /// on one CPU.
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::EmptyZone`], [`Error::ZoneTooLarge`].
    pub fn new(start_pfn: u64, end_pfn: u64) -> Result<Self, Error> {
        if start_pfn > end_pfn {
            return Err(Error::StartAfterEnd {
                start: start_pfn,
                end: end_pfn,
            });
        }
        if start_pfn == end_pfn {
            return Err(Error::EmptyZone);
        }
        let spanned_pages = end_pfn - start_pfn;
        if spanned_pages > MAX_SPANNED_PAGES {
            return Err(Error::ZoneTooLarge { spanned_pages });
        }
        Ok(ZoneConfig {
            start_pfn,
            end_pfn,
            holes: Vec::new(),
            migratetypes: Vec::new(),
            kernel: KernelVersion::default(),
            pcp: PcpLists::default(),
        })
    }

    /// A zone of `spanned_pages` pages starting at `start_pfn`.
    ///
    /// # Errors
    /// As [`ZoneConfig::new`], and [`Error::PfnOverflow`].
    pub fn with_span(start_pfn: u64, spanned_pages: u64) -> Result<Self, Error> {
        let end = start_pfn
            .checked_add(spanned_pages)
            .ok_or(Error::PfnOverflow)?;
        Self::new(start_pfn, end)
    }

    /// Marks PFNs `start .. end` as a hole (not present; [`Zone::online_pages`] can bring it
    /// online later, as memory hotplug does).
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::RangeOutsideZone`].
    pub fn hole(mut self, start: u64, end: u64) -> Result<Self, Error> {
        self.check_range(start, end)?;
        self.holes.push((start, end));
        Ok(self)
    }

    /// Gives the pageblocks overlapping PFNs `start .. end` the migratetype `mt` before the
    /// boot frees (after `memmap_init_zone` has marked every pageblock MOVABLE), so the boot
    /// frees put their blocks on `mt`'s lists by `__free_one_page`'s rules. A hole brought
    /// online later becomes MOVABLE again, as hotplug makes it.
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::RangeOutsideZone`].
    pub fn migratetype(mut self, start: u64, end: u64, mt: MigrateType) -> Result<Self, Error> {
        self.check_range(start, end)?;
        self.migratetypes.push((start, end, mt));
        Ok(self)
    }

    /// The kernel whose rules the zone follows.
    pub fn kernel(mut self, kernel: KernelVersion) -> Self {
        self.kernel = kernel;
        self
    }

    /// Per-CPU page lists (default: the kernel's sizes on one CPU).
    pub fn pcp(mut self, pcp: PcpLists) -> Self {
        self.pcp = pcp;
        self
    }

    fn check_range(&self, start: u64, end: u64) -> Result<(), Error> {
        if start > end {
            return Err(Error::StartAfterEnd { start, end });
        }
        if start < self.start_pfn || end > self.end_pfn {
            return Err(Error::RangeOutsideZone { start, end });
        }
        Ok(())
    }

    /// First PFN of the zone (`zone_start_pfn`).
    pub fn start_pfn(&self) -> u64 {
        self.start_pfn
    }

    /// Pages the zone spans, holes included (`spanned_pages`).
    pub fn spanned_pages(&self) -> u64 {
        self.end_pfn - self.start_pfn
    }
}

/// Whether and how the zone shuffles: the kernel's `page_alloc.shuffle` switch plus this
/// simulator's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShufflePolicy {
    /// Shuffle at boot and hotplug, and (with `pick_tail`) randomise frees at the shuffle order.
    pub enabled: bool,
    /// Order of the blocks shuffled (the kernel's `SHUFFLE_ORDER`, 10; 0 ..= 10 here).
    pub order: u8,
    /// Which shuffle runs.
    pub mode: ShuffleMode,
    /// Free blocks of order ≥ `order` to the head or the tail by a coin (`shuffle_pick_tail`).
    pub pick_tail: bool,
}

impl ShufflePolicy {
    /// Shuffling off: the in-order allocator.
    pub const OFF: ShufflePolicy = ShufflePolicy {
        enabled: false,
        order: SHUFFLE_ORDER,
        mode: ShuffleMode::Kernel,
        pick_tail: false,
    };
    /// What `page_alloc.shuffle=1` does (every version since 5.2): kernel shuffle at order 10
    /// plus the coin for frees at order ≥ 10.
    pub const KERNEL: ShufflePolicy = ShufflePolicy {
        enabled: true,
        order: SHUFFLE_ORDER,
        mode: ShuffleMode::Kernel,
        pick_tail: true,
    };

    fn validate(&self) -> Result<(), Error> {
        if self.order > MAX_ORDER {
            return Err(Error::OrderTooLarge { order: self.order });
        }
        Ok(())
    }
}

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

impl<R: Rng> Zone<R> {
    /// Builds the zone and boots it: every pageblock MOVABLE, every present page freed in
    /// ascending PFN order in the largest naturally aligned chunks, the configured pageblock
    /// types applied, then — if `policy.enabled` — the zone shuffled (`shuffle_free_memory`).
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`] for `policy.order > 10`, [`Error::AllHoles`] when no page is
    /// present, [`Error::BadParameter`] for bad per-CPU list sizes.
    pub fn new(config: &ZoneConfig, policy: ShufflePolicy, rng: R) -> Result<Self, Error> {
        policy.validate()?;
        let area = FreeArea::new(config.start_pfn, config.spanned_pages(), &config.holes)?;
        let pcp = config
            .pcp
            .resolve(area.present_pages())?
            .map(|(cpus, high, batch)| PerCpuPages::new(cpus, high, batch));
        let mut zone = Zone {
            area,
            pcp,
            policy,
            kernel: config.kernel,
            tail: PickTail::new(),
            rng,
            bulk: Vec::new(),
            ops: 0,
        };
        for &(s, e, mt) in &config.migratetypes {
            if s < e {
                zone.set_pageblocks(s, e, mt as u8);
            }
        }
        zone.free_present_range(config.start_pfn, config.end_pfn);
        if policy.enabled {
            zone.shuffle_free_memory();
        }
        Ok(zone)
    }

    /// Memory hotplug: brings the hole `start .. end` online, marks every pageblock whose first
    /// PFN lies in it MOVABLE (`memmap_init_zone(MEMMAP_HOTPLUG)`), frees it in ascending
    /// order the way boot does and, if shuffling is on, shuffles the zone again
    /// (`online_pages` → `shuffle_zone`). Linux 5.10 onlines into MIGRATE_ISOLATE pageblocks
    /// and moves the blocks to the MOVABLE tail afterwards (`undo_isolate_page_range`); for
    /// ranges that are aligned multiples of 1024 pages, as memory sections are, that gives the
    /// lists this direct tail free gives.
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::RangeOutsideZone`], [`Error::AlreadyOnline`] if any
    /// page of the range is present. On error nothing changes.
    pub fn online_pages(&mut self, start: u64, end: u64) -> Result<Option<ShuffleStats>, Error> {
        if start > end {
            return Err(Error::StartAfterEnd { start, end });
        }
        if start < self.start_pfn() || end > self.end_pfn() {
            return Err(Error::RangeOutsideZone { start, end });
        }
        for pfn in start..end {
            if !self.area.is_hole(self.area.idx(pfn) as u32) {
                return Err(Error::AlreadyOnline { pfn });
            }
        }
        self.area.make_present(start, end);
        // memmap_init_zone(MEMMAP_HOTPLUG): every pageblock whose first PFN is onlined
        // becomes MOVABLE (5.10 isolates it first and ends at MOVABLE too).
        let mut next = start.checked_next_multiple_of(PAGEBLOCK_NR_PAGES);
        while let Some(pfn) = next.filter(|&p| p < end) {
            let i = self.area.idx(pfn) as u32;
            self.area.set_pageblock_mt(i, MigrateType::Movable as u8);
            next = pfn.checked_add(PAGEBLOCK_NR_PAGES);
        }
        self.free_present_range(start, end);
        if self.policy.enabled {
            return Ok(Some(self.shuffle_free_memory()));
        }
        Ok(None)
    }

    /// The boot / hotplug shuffle: `shuffle_zone` at every order from the policy's order up to
    /// [`MAX_ORDER`], lowest first. With the kernel's order 10 that is one call, as in every
    /// merged kernel (`SHUFFLE_ORDER`, commit e900a918b098); a lower order is this model's
    /// extension for experiments, not a kernel configuration.
    fn shuffle_free_memory(&mut self) -> ShuffleStats {
        let mut total = ShuffleStats::default();
        for order in self.policy.order..=MAX_ORDER {
            let st = crate::shuffle::shuffle_order(
                &mut self.area,
                &mut self.rng,
                order,
                self.policy.mode,
            );
            total.candidates += st.candidates;
            total.swaps += st.swaps;
            total.retries_exhausted += st.retries_exhausted;
            total.migratetype_mismatches += st.migratetype_mismatches;
            total.random_words += st.random_words;
        }
        total
    }

    /// Frees every present page of `start .. end` in ascending order, in chunks of
    /// `min(MAX_ORDER, alignment)` as `__free_pages_memory` does, through `__free_pages_core`
    /// (`FPI_TO_TAIL` since 5.10).
    fn free_present_range(&mut self, start: u64, end: u64) {
        let to_tail = self.kernel.boot_frees_to_tail();
        let mut pfn = start;
        while pfn < end {
            if self.area.is_hole(self.area.idx(pfn) as u32) {
                pfn += 1;
                continue;
            }
            let mut run_end = pfn;
            while run_end < end && !self.area.is_hole(self.area.idx(run_end) as u32) {
                run_end += 1;
            }
            let mut s = pfn;
            while s < run_end {
                let mut order = if s == 0 {
                    MAX_ORDER
                } else {
                    (s.trailing_zeros() as u8).min(MAX_ORDER)
                };
                while (1u64 << order) > run_end - s {
                    order -= 1;
                }
                let i = self.area.idx(s) as u32;
                let mt = self.area.mt_of(i);
                self.free_one_page(i, order, mt, to_tail);
                s += 1 << order;
            }
            pfn = run_end;
        }
    }

    /// `set_pageblock_migratetype` for every pageblock overlapping `start .. end` (before the
    /// boot frees: nothing is free yet, so nothing moves).
    fn set_pageblocks(&mut self, start: u64, end: u64, mt: u8) {
        let mut pfn = start & !(PAGEBLOCK_NR_PAGES - 1);
        while pfn < end {
            if let Some(i) = self.area.index_of(pfn.max(self.start_pfn())) {
                self.area.set_pageblock_mt(i, mt);
            }
            // A zone may end at the top of the PFN space (the fuzzer's zones do).
            let Some(next) = pfn.checked_add(PAGEBLOCK_NR_PAGES) else {
                break;
            };
            pfn = next;
        }
    }

    /// `move_freepages_block`: every free block headed inside the pageblock of page `i` moves
    /// to `mt`'s list (head before 5.10, tail since); returns the pages moved.
    fn move_freepages_block(&mut self, i: u32, mt: u8) -> u64 {
        let (s, e) = self.area.pageblock_range(i);
        let tail = self.kernel.move_to_tail();
        let mut moved = 0;
        let mut p = s;
        while p < e {
            let mut step = 1;
            for order in 0..=MAX_ORDER {
                if self.area.is_free_head(p, order) {
                    self.area.move_to(p, order, mt, tail);
                    moved += 1u64 << order;
                    step = 1u32 << order;
                    break;
                }
            }
            p = p.saturating_add(step);
        }
        moved
    }

    /// The shuffle coin (`shuffle_pick_tail` / `add_to_free_area_random`): one bit of a 64-bit
    /// batch drawn with `next_u64`, read the way this zone's kernel reads it: `true` = tail.
    pub fn pick_tail(&mut self) -> bool {
        let bit = self.tail.coin(&mut self.rng);
        self.kernel.coin_means_tail(bit)
    }

    /// Allocates a block of `2^order` pages of migratetype `mt` on CPU 0; see
    /// [`Zone::alloc_pages_on`].
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`].
    #[inline]
    pub fn alloc_pages(&mut self, order: u8, mt: MigrateType) -> Result<Option<u64>, Error> {
        self.alloc_pages_on(0, order, mt)
    }

    /// Allocates a block of `2^order` pages of migratetype `mt` on `cpu` (order 0 through that
    /// CPU's list), falling back to other migratetypes, draining the per-CPU lists and trying
    /// again before giving up; returns its first PFN, or `None` when no block is free.
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`]; [`Error::NoSuchCpu`] for a CPU the zone has no list for (with
    /// per-CPU lists off, every CPU is accepted).
    #[inline]
    pub fn alloc_pages_on(
        &mut self,
        cpu: u32,
        order: u8,
        mt: MigrateType,
    ) -> Result<Option<u64>, Error> {
        if order > MAX_ORDER {
            return Err(Error::OrderTooLarge { order });
        }
        self.check_cpu(cpu)?;
        self.ops += 1;
        let mt = mt as u8;
        if let Some(i) = self.rmqueue(cpu as usize, order, mt) {
            return Ok(Some(self.start_pfn() + u64::from(i)));
        }
        if self.nr_pcp_pages() > 0 {
            self.drain_pages();
            if let Some(i) = self.rmqueue(cpu as usize, order, mt) {
                return Ok(Some(self.start_pfn() + u64::from(i)));
            }
        }
        Ok(None)
    }

    /// Without per-CPU lists the CPU makes no difference and any is accepted.
    fn check_cpu(&self, cpu: u32) -> Result<(), Error> {
        match &self.pcp {
            Some(p) if cpu >= p.cpus() => Err(Error::NoSuchCpu {
                cpu,
                cpus: p.cpus(),
            }),
            _ => Ok(()),
        }
    }

    /// `rmqueue`: order 0 through the per-CPU list, else the buddy lists.
    #[inline]
    fn rmqueue(&mut self, cpu: usize, order: u8, mt: u8) -> Option<u32> {
        if order == 0
            && let Some(mut pcp) = self.pcp.take()
        {
            let got = self.rmqueue_pcplist(&mut pcp, cpu, mt);
            self.pcp = Some(pcp);
            return got;
        }
        let i = self.rmqueue_buddy(order, mt)?;
        self.area.set_alloc(i, order);
        Some(i)
    }

    fn rmqueue_pcplist(&mut self, pcp: &mut PerCpuPages, cpu: usize, mt: u8) -> Option<u32> {
        if pcp.lists[cpu][mt as usize].is_empty() {
            // rmqueue_bulk: `batch` pages appended at the tail, in the order taken.
            for _ in 0..pcp.batch {
                let Some(i) = self.rmqueue_buddy(0, mt) else {
                    break;
                };
                self.area.set_pcp(i);
                pcp.push_tail(cpu, mt, i);
            }
        }
        let i = pcp.pop_head(cpu, mt)?;
        self.area.set_alloc(i, 0);
        Some(i)
    }

    /// `__rmqueue`: smallest block of the wanted type, else steal from a fallback type and
    /// try again.
    #[inline]
    fn rmqueue_buddy(&mut self, order: u8, mt: u8) -> Option<u32> {
        if let Some(i) = self.rmqueue_smallest(order, mt) {
            return Some(i);
        }
        if self.rmqueue_fallback(order, mt) {
            return self.rmqueue_smallest(order, mt);
        }
        None
    }

    #[inline]
    fn rmqueue_smallest(&mut self, order: u8, mt: u8) -> Option<u32> {
        for o in order..=MAX_ORDER {
            if let Some(i) = self.area.take_head(o, mt) {
                // expand(): keep the low half, each high half to the head one order down.
                let mut high = o;
                while high > order {
                    high -= 1;
                    self.area.add(i + (1u32 << high), high, mt, false);
                }
                return Some(i);
            }
        }
        None
    }

    /// `__rmqueue_fallback` (v5.2 – v5.10, without `ALLOC_NOFRAGMENT`): the largest block on a
    /// fallback list (a movable request that may not steal takes the smallest instead), then
    /// `steal_suitable_fallback`. Returns whether a block was moved to `start_mt`'s lists.
    fn rmqueue_fallback(&mut self, order: u8, start_mt: u8) -> bool {
        let start = MigrateType::from_index(start_mt);
        let mut found = None;
        for current in (order..=MAX_ORDER).rev() {
            if let Some(fb) = start
                .fallbacks()
                .into_iter()
                .find(|&fb| self.area.nr_free(current, fb as u8) > 0)
            {
                let can_steal = can_steal_fallback(current, start_mt);
                if !can_steal && start == MigrateType::Movable && current > order {
                    // find_smallest
                    found = (order..=MAX_ORDER).find_map(|o| {
                        start
                            .fallbacks()
                            .into_iter()
                            .find(|&fb| self.area.nr_free(o, fb as u8) > 0)
                            .map(|fb| (o, fb, can_steal_fallback(o, start_mt)))
                    });
                } else {
                    found = Some((current, fb, can_steal));
                }
                break;
            }
        }
        let Some((current, fb, can_steal)) = found else {
            return false;
        };
        let Some(i) = self.area.head(current, fb as u8) else {
            return false;
        };
        self.steal_suitable_fallback(i, current, start_mt, can_steal);
        true
    }

    fn steal_suitable_fallback(&mut self, i: u32, current: u8, start_mt: u8, whole_block: bool) {
        let tail = self.kernel.move_to_tail();
        if current >= PAGEBLOCK_ORDER {
            // change_pageblock_range
            let mut p = i;
            let end = i + (1u32 << current);
            while p < end {
                self.area.set_pageblock_mt(p, start_mt);
                p += PAGEBLOCK_NR_PAGES as u32;
            }
        } else if whole_block {
            let free_pages = self.move_freepages_block(i, start_mt);
            if free_pages >= PAGEBLOCK_NR_PAGES / 2 {
                self.area.set_pageblock_mt(i, start_mt);
            }
            if free_pages > 0 {
                return;
            }
        }
        // single_page
        if self.area.is_free_head(i, current) {
            self.area.move_to(i, current, start_mt, tail);
        }
    }

    /// Frees, on CPU 0, the block of `2^order` pages at `pfn`; see [`Zone::free_pages_on`].
    ///
    /// # Errors
    /// As [`Zone::free_pages_on`].
    #[inline]
    pub fn free_pages(&mut self, pfn: u64, order: u8) -> Result<(), Error> {
        self.free_pages_on(0, pfn, order)
    }

    /// Frees, on `cpu`, the block of `2^order` pages at `pfn` that [`Zone::alloc_pages`]
    /// handed out: order 0 to the CPU's list (`free_unref_page`), spilling a batch to the buddy
    /// lists at `high`; larger blocks to the buddy lists (`__free_pages_ok`).
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`]; [`Error::NoSuchCpu`]; [`Error::NotAllocated`] if `pfn` is
    /// outside the zone or is not the first page of an allocated block of exactly that order
    /// (double free, wrong order, not its head, a hole, a page on a per-CPU list). On error
    /// nothing changes.
    #[inline]
    pub fn free_pages_on(&mut self, cpu: u32, pfn: u64, order: u8) -> Result<(), Error> {
        if order > MAX_ORDER {
            return Err(Error::OrderTooLarge { order });
        }
        self.check_cpu(cpu)?;
        let i = match self.area.index_of(pfn) {
            Some(i) if self.area.is_alloc_head(i, order) => i,
            _ => return Err(Error::NotAllocated { pfn, order }),
        };
        self.ops += 1;
        let mt = self.area.mt_of(i);
        if order == 0
            && let Some(pcp) = self.pcp.as_mut()
        {
            self.area.set_pcp(i);
            if pcp.push(cpu as usize, mt, i) {
                let batch = pcp.batch;
                self.free_pcppages_bulk(cpu as usize, batch);
            }
            return Ok(());
        }
        self.area.clear(i);
        self.free_one_page(i, order, mt, false);
        Ok(())
    }

    fn free_pcppages_bulk(&mut self, cpu: usize, count: u32) {
        let mut bulk = core::mem::take(&mut self.bulk);
        bulk.clear();
        if let Some(pcp) = self.pcp.as_mut() {
            pcp.take_bulk(cpu, count, &mut bulk);
        }
        for &(i, mt) in &bulk {
            self.area.clear(i);
            self.free_one_page(i, 0, mt, false);
        }
        self.bulk = bulk;
    }

    /// `drain_all_pages`: every per-CPU list back to the buddy lists.
    pub fn drain_pages(&mut self) {
        for cpu in 0..self.pcp.as_ref().map_or(0, PerCpuPages::cpus) as usize {
            let n = self.pcp.as_ref().map_or(0, |p| p.count[cpu]);
            if n > 0 {
                self.free_pcppages_bulk(cpu, n);
            }
        }
    }

    /// `__free_one_page`: merge with free buddies, then put the block on the list of `mt` (the
    /// freed page's migratetype).
    #[inline]
    fn free_one_page(&mut self, i: u32, order: u8, mt: u8, fpi_to_tail: bool) {
        let start = self.start_pfn();
        let mut pfn = start + u64::from(i);
        let mut order = order;
        while order < MAX_ORDER {
            let buddy = pfn ^ (1u64 << order);
            let Some(bi) = self.area.index_of(buddy) else {
                break;
            };
            if !self.area.is_free_head(bi, order) {
                break;
            }
            self.area.del(bi, order);
            pfn &= buddy;
            order += 1;
        }
        let i = (pfn - start) as u32;
        let shuffle_order = self.policy.enabled && order >= self.policy.order;
        let to_tail = if fpi_to_tail {
            true
        } else if shuffle_order {
            self.policy.pick_tail && {
                let bit = self.tail.coin(&mut self.rng);
                self.kernel.coin_means_tail(bit)
            }
        } else if order < MAX_ORDER - 1 {
            // buddy_merge_likely: is the buddy of the merged block free at order + 1?
            let combined = pfn & !(1u64 << order);
            let higher_buddy = combined ^ (1u64 << (order + 1));
            self.area
                .index_of(higher_buddy)
                .is_some_and(|h| self.area.is_free_head(h, order + 1))
        } else {
            false
        };
        self.area.add(i, order, mt, to_tail);
    }

    /// The free scanner's step of compaction (`isolate_freepages_block`, sync mode): when the
    /// pageblock holding `pfn` is a MOVABLE one (`suitable_migration_target`) and holds no
    /// free block of pageblock order or more, every free block on the buddy lists inside it is
    /// taken off its list and split into order-0 pages (`split_map_pages`), which are marked
    /// handed out and returned, lowest PFN first. Pages on per-CPU lists are not `PageBuddy`
    /// and stay where they are. Hand back what goes unused with [`Zone::free_pages_on`] at
    /// order 0 (`release_freepages`).
    pub(crate) fn isolate_free_pageblock(&mut self, pfn: u64, out: &mut Vec<u64>) {
        let Some(i) = self.area.index_of(pfn) else {
            return;
        };
        if self.area.mt_of(i) != MigrateType::Movable as u8 {
            return;
        }
        let (s, e) = self.area.pageblock_range(i);
        let order_at = |area: &FreeArea, j: u32| (0..=MAX_ORDER).find(|&o| area.is_free_head(j, o));
        if order_at(&self.area, s).is_some_and(|o| o >= PAGEBLOCK_ORDER) {
            return;
        }
        let start = self.start_pfn();
        let mut j = s;
        while j < e {
            match order_at(&self.area, j) {
                Some(o) => {
                    self.area.del(j, o);
                    for k in j..j + (1u32 << o) {
                        self.area.set_alloc(k, 0);
                        out.push(start + u64::from(k));
                    }
                    j += 1u32 << o;
                }
                None => j += 1,
            }
        }
    }

    /// Pages in use per 4 MiB cache slot for a direct-mapped cache of `cache_pages` pages
    /// (see [`crate::zonesort`]).
    ///
    /// # Errors
    /// [`Error::BadParameter`] unless `cache_pages` is a positive multiple of 1024.
    pub fn slot_cover(&self, cache_pages: u64) -> Result<Vec<u64>, Error> {
        crate::zonesort::slot_cover(&self.area, cache_pages)
    }

    /// Intel's zonesort (see [`crate::zonesort`]): every free list sorted by address, the
    /// order-10 lists queued by how many times their cache slot is covered in `cover` (from
    /// [`Zone::slot_cover`], summed over every zone behind the cache).
    ///
    /// # Errors
    /// [`Error::BadParameter`] unless `cache_pages` is a positive multiple of 1024 and `cover`
    /// has `cache_pages / 1024` entries.
    pub fn zonesort(&mut self, cache_pages: u64, cover: &[u64]) -> Result<(), Error> {
        crate::zonesort::zonesort(&mut self.area, cache_pages, cover)
    }

    /// Shuffles the free lists of blocks of `order` over the whole zone with `mode`
    /// (see [`crate::shuffle`]).
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`].
    pub fn shuffle_zone(&mut self, order: u8, mode: ShuffleMode) -> Result<ShuffleStats, Error> {
        crate::shuffle::shuffle_zone(&mut self.area, &mut self.rng, order, mode)
    }
}

/// `can_steal_fallback` (v5.2 – v5.10): whole pageblocks are claimed for large requests and
/// for unmovable or reclaimable ones.
fn can_steal_fallback(order: u8, start_mt: u8) -> bool {
    order >= PAGEBLOCK_ORDER / 2
        || start_mt == MigrateType::Unmovable as u8
        || start_mt == MigrateType::Reclaimable as u8
}

impl<R> Zone<R> {
    /// The free area the zone owns (flags, buddy lists, pageblock types).
    pub fn free_area(&self) -> &FreeArea {
        &self.area
    }

    /// Allocation and free calls served so far (failed allocations included, rejected calls
    /// not): the unit of the simulator's "page ops/s".
    pub fn page_ops(&self) -> u64 {
        self.ops
    }

    /// The kernel rules the zone follows.
    pub fn kernel(&self) -> KernelVersion {
        self.kernel
    }

    /// First PFN of the zone.
    pub fn start_pfn(&self) -> u64 {
        self.area.start_pfn()
    }

    /// One past the last PFN of the zone.
    pub fn end_pfn(&self) -> u64 {
        self.area.end_pfn()
    }

    /// Pages spanned, holes included.
    pub fn spanned_pages(&self) -> u64 {
        self.area.spanned_pages()
    }

    /// Pages present (not holes).
    pub fn present_pages(&self) -> u64 {
        self.area.present_pages()
    }

    /// Pages not handed out: on the buddy free lists or on a per-CPU list.
    pub fn nr_free_pages(&self) -> u64 {
        self.area.nr_free_pages() + self.nr_pcp_pages()
    }

    /// Pages waiting on per-CPU lists.
    pub fn nr_pcp_pages(&self) -> u64 {
        self.pcp.as_ref().map_or(0, |p| p.total)
    }

    /// `(cpus, high, batch)` of the per-CPU lists, `None` when off.
    pub fn pcp_sizes(&self) -> Option<(u32, u32, u32)> {
        self.pcp.as_ref().map(|p| (p.cpus(), p.high, p.batch))
    }

    /// PFNs on the per-CPU list of `cpu` and `mt`, head first (empty for no such list).
    pub fn pcp_list(&self, cpu: u32, mt: MigrateType) -> Vec<u64> {
        self.pcp
            .as_ref()
            .and_then(|p| p.lists.get(cpu as usize))
            .map(|l| {
                l[mt as usize]
                    .iter()
                    .map(|&i| self.start_pfn() + u64::from(i))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The shuffle policy the zone was booted with.
    pub fn policy(&self) -> ShufflePolicy {
        self.policy
    }

    /// Number of blocks on the free list of `order` and `mt` (0 for an order above 10).
    pub fn nr_free(&self, order: u8, mt: MigrateType) -> u64 {
        if order > MAX_ORDER {
            return 0;
        }
        self.area.nr_free(order, mt as u8)
    }

    /// First PFNs of the blocks on the free list of `order` and `mt`, head first (empty for an
    /// order above 10).
    pub fn free_list(&self, order: u8, mt: MigrateType) -> Vec<u64> {
        if order > MAX_ORDER {
            return Vec::new();
        }
        self.area
            .list_nodes(order, mt as u8)
            .into_iter()
            .map(|i| self.start_pfn() + u64::from(i))
            .collect()
    }

    /// Page indices of a free list (for the bias measurement).
    pub(crate) fn list_nodes(&self, order: u8, mt: u8) -> Vec<u32> {
        self.area.list_nodes(order, mt)
    }

    /// Relinks a free list (for the bias measurement).
    pub(crate) fn relink(&mut self, order: u8, mt: u8, nodes: &[u32]) {
        self.area.relink(order, mt, nodes);
    }

    /// Migratetype of the pageblock holding `pfn` (`None` outside the zone).
    pub fn pageblock_migratetype(&self, pfn: u64) -> Option<MigrateType> {
        let i = self.area.index_of(pfn)?;
        Some(MigrateType::from_index(self.area.mt_of(i)))
    }

    /// Whether `pfn` is in the zone and present.
    pub fn is_present(&self, pfn: u64) -> bool {
        self.area
            .index_of(pfn)
            .is_some_and(|i| !self.area.is_hole(i))
    }

    /// Every page not handed out, ascending: the buddy free lists walked (not the page
    /// flags), plus the per-CPU lists.
    pub fn free_page_set(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.nr_free_pages() as usize);
        for order in 0..=MAX_ORDER {
            for mt in 0..NR_MIGRATETYPES as u8 {
                for i in self.area.list_nodes(order, mt) {
                    let pfn = self.start_pfn() + u64::from(i);
                    out.extend(pfn..pfn + (1u64 << order));
                }
            }
        }
        if let Some(p) = &self.pcp {
            for cpu in &p.lists {
                for l in cpu {
                    out.extend(l.iter().map(|&i| self.start_pfn() + u64::from(i)));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Checks the zone's internal consistency: the free area's ([`FreeArea::check_consistency`])
    /// and the per-CPU lists' (each page on one list once, flagged as such, counts right).
    ///
    /// # Errors
    /// A description of the first broken invariant (a bug in this crate if it ever happens).
    pub fn check_consistency(&self) -> Result<(), &'static str> {
        self.area.check_consistency()?;
        if self.area.nr_pcp_flagged() != self.nr_pcp_pages() {
            return Err("pages flagged per-CPU do not match the per-CPU lists");
        }
        let Some(p) = &self.pcp else {
            return Ok(());
        };
        let mut seen = alloc::collections::BTreeSet::new();
        let mut total = 0u64;
        for (cpu, lists) in p.lists.iter().enumerate() {
            let mut count = 0u32;
            for l in lists {
                for &i in l {
                    if i as u64 >= self.spanned_pages() || !self.area.is_pcp(i) {
                        return Err("per-CPU page not flagged as such");
                    }
                    if !seen.insert(i) {
                        return Err("page on per-CPU lists twice");
                    }
                    count += 1;
                }
            }
            if count != p.count[cpu] {
                return Err("per-CPU count does not match its lists");
            }
            total += u64::from(count);
        }
        if total != p.total {
            return Err("per-CPU total does not match the lists");
        }
        Ok(())
    }
}
