//! Boot and memory hotplug: the zone built and every present page freed the way
//! `memmap_init_zone` and `__free_pages_memory` do, then shuffled (`shuffle_free_memory`).

use alloc::vec::Vec;

use rand_core::Rng;

use super::{ShufflePolicy, Zone, ZoneConfig};
use crate::Error;
use crate::free_area::{FreeArea, MAX_ORDER, MigrateType, PAGEBLOCK_NR_PAGES};
use crate::pcp::PerCpuPages;
use crate::shuffle::{PickTail, ShuffleStats};

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
}
