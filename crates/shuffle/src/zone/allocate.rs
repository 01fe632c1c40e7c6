//! Allocation: `__rmqueue_smallest`, the per-CPU lists, `__rmqueue_fallback` with
//! `steal_suitable_fallback` and `move_freepages_block`, and the drain-and-retry.

use rand_core::Rng;

use super::Zone;
use crate::Error;
use crate::free_area::{MAX_ORDER, MigrateType, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use crate::pcp::PerCpuPages;

impl<R: Rng> Zone<R> {
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
    pub(super) fn check_cpu(&self, cpu: u32) -> Result<(), Error> {
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
}

/// `can_steal_fallback` (v5.2 – v5.10): whole pageblocks are claimed for large requests and
/// for unmovable or reclaimable ones.
fn can_steal_fallback(order: u8, start_mt: u8) -> bool {
    order >= PAGEBLOCK_ORDER / 2
        || start_mt == MigrateType::Unmovable as u8
        || start_mt == MigrateType::Reclaimable as u8
}
