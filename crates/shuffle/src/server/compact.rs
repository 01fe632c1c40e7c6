//! Compaction of the server's memory, as `compact_zone` (`mm/compaction.c`) runs it for a
//! whole zone: the migration scanner takes the in-use MOVABLE pages the server owns from the
//! low end, the free scanner isolates free pages from the high end, and each page moves.

use alloc::vec::Vec;

use rand_core::Rng;

use super::{CompactStats, Owner, ServerAging};
use crate::Error;
use crate::zone::Zone;

impl ServerAging {
    /// PFNs of the in-use MOVABLE pages the server owns (page cache and processes' anonymous
    /// memory), ascending: the pages [`ServerAging::compact`] may move.
    pub fn movable_pages(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.owned().into_iter().map(|(p, _)| p).collect();
        v.sort_unstable();
        v
    }

    fn owned(&self) -> Vec<(u64, Owner)> {
        let mut v = Vec::with_capacity((self.cache_pages + self.anon_pages) as usize);
        for &id in &self.live_files {
            let f = &self.files[id as usize];
            for (k, &p) in f.pages.iter().enumerate().skip(f.evicted) {
                v.push((p, Owner::File(id, k as u32)));
            }
        }
        for (id, pr) in self.procs.iter().enumerate() {
            for (k, &p) in pr.pages.iter().enumerate() {
                v.push((p, Owner::Anon(id as u32, k as u32)));
            }
        }
        v
    }

    /// One full compaction of `zone`, as `compact_zone` (`mm/compaction.c`, v5.10) runs it
    /// for a whole-zone request (`compact_node`, sync mode) at the level of this model:
    ///
    /// * first the per-CPU lists are drained, so that every free page is on the buddy lists
    ///   where the free scanner looks (a choice of this model: the kernel's free scanner
    ///   skips pages on per-CPU lists);
    /// * the migration scanner walks pageblocks from the zone's low end and takes the in-use
    ///   MOVABLE pages this server owns (page cache and anonymous memory), lowest first
    ///   (`isolate_migratepages_block`; kernel pages and slab are not movable and stay);
    /// * the free scanner walks pageblocks from the high end and, in each MOVABLE pageblock
    ///   without a free block of pageblock order, takes every free block off the buddy lists
    ///   split into order-0 pages (`isolate_freepages_block`, `suitable_migration_target`,
    ///   `split_map_pages`); it runs when the migration scanner needs a target page;
    /// * each taken page moves to the lowest isolated free page (`compaction_alloc`,
    ///   `migrate_pages`): its owner's record gets the new PFN and the old page is freed on
    ///   CPU 0 through the normal free path;
    /// * the run stops when the scanners meet (`compact_scanners_met`): the migration scanner
    ///   reaches the free scanner's pageblock or the free scanner finds nothing more below;
    /// * isolated free pages left over are freed (`release_freepages`) and the per-CPU lists
    ///   drained (as `compact_zone` does for a request of an order, `drain_local_pages`),
    ///   so freed pages merge with their buddies.
    ///
    /// Compaction ignores the watermarks and the deferral (`compaction_deferred`) the kernel
    /// applies; it runs when called, or every [`ServerSpec::compact_every`](super::ServerSpec::compact_every) rounds.
    ///
    /// # Errors
    /// Never in practice (the pages moved and freed are this server's); propagated from
    /// [`Zone::free_pages_on`].
    pub fn compact<R: Rng>(&mut self, zone: &mut Zone<R>) -> Result<CompactStats, Error> {
        zone.drain_pages();
        let mut owned = self.owned();
        owned.sort_unstable_by_key(|&(p, _)| p);
        let nr_block = crate::free_area::PAGEBLOCK_NR_PAGES;
        let block = |p: u64| p & !(nr_block - 1);
        let mut st = CompactStats::default();
        // The free scanner's next pageblock (it scans downwards) and its isolated pages.
        let mut free_pb = block(zone.end_pfn() - 1);
        let mut freepages: Vec<u64> = Vec::new();
        let mut next = 0usize;
        let mut meet = zone.end_pfn();
        for &(pfn, owner) in &owned {
            let pb = block(pfn);
            if next == freepages.len() {
                freepages.clear();
                next = 0;
                while freepages.is_empty() && free_pb > pb {
                    zone.isolate_free_pageblock(free_pb, &mut freepages);
                    free_pb -= nr_block;
                }
                st.isolated_free += freepages.len() as u64;
            }
            // Scanners met: the page lies in or above the free scanner's last pageblock.
            if next == freepages.len() || pb > free_pb {
                meet = pb;
                break;
            }
            let to = freepages[next];
            next += 1;
            match owner {
                Owner::File(id, k) => self.files[id as usize].pages[k as usize] = to,
                Owner::Anon(id, k) => self.procs[id as usize].pages[k as usize] = to,
            }
            zone.free_pages_on(0, pfn, 0)?;
            st.migrated += 1;
        }
        if meet == zone.end_pfn() {
            meet = free_pb + nr_block;
        }
        st.meet_pfn = meet.max(zone.start_pfn());
        for &p in &freepages[next..] {
            zone.free_pages_on(0, p, 0)?;
        }
        zone.drain_pages();
        self.stats.compactions += 1;
        self.stats.migrated += st.migrated;
        Ok(st)
    }
}
