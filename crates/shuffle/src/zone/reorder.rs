//! What takes or reorders free lists wholesale: compaction's free scanner step
//! (`isolate_freepages_block`), Intel's zonesort and `shuffle_zone`.

use alloc::vec::Vec;

use rand_core::Rng;

use super::Zone;
use crate::Error;
use crate::free_area::{FreeArea, MAX_ORDER, MigrateType, PAGEBLOCK_ORDER};
use crate::shuffle::{ShuffleMode, ShuffleStats};

impl<R: Rng> Zone<R> {
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
