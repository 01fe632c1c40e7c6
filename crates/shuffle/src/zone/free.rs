//! Freeing: the per-CPU lists and their bulk free, `__free_one_page` (merging with the
//! buddy, then head or tail by the version's rule), and the shuffle coin it flips.

use rand_core::Rng;

use super::Zone;
use crate::Error;
use crate::free_area::MAX_ORDER;
use crate::pcp::PerCpuPages;

impl<R: Rng> Zone<R> {
    /// The shuffle coin (`shuffle_pick_tail` / `add_to_free_area_random`): one bit of a 64-bit
    /// batch drawn with `next_u64`, read the way this zone's kernel reads it: `true` = tail.
    pub fn pick_tail(&mut self) -> bool {
        let bit = self.tail.coin(&mut self.rng);
        self.kernel.coin_means_tail(bit)
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
    pub(super) fn free_one_page(&mut self, i: u32, order: u8, mt: u8, fpi_to_tail: bool) {
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
}
