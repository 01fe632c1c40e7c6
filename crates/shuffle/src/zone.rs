//! The zone model: a span of PFNs with holes, 512-page pageblocks carrying a migratetype, and
//! buddy free lists per order and migratetype, as Linux 5.2's `mm/page_alloc.c` keeps them.
//!
//! Follows the seed `003_847b53755ecb89bf` (the v7 `mm/shuffle.c` patch) and the page
//! allocator it plugs into:
//!
//! * free lists are ordered: allocation takes the head (`__rmqueue_smallest`), `expand()`
//!   keeps the low half of a split block and puts each high half on the head of the list one
//!   order down;
//! * a free merges with its buddy while the buddy is a free block of the same order
//!   (`__free_one_page`), then goes to the head of its list, to the tail when the buddy of the
//!   merged block is itself free (the kernel's "merge likely" heuristic), or — when shuffling is
//!   on and the order is at least the shuffle order — to the head or the tail by a coin
//!   ([`Zone::pick_tail`], the kernel's `shuffle_pick_tail`);
//! * boot frees every present range in ascending PFN order, in the largest aligned chunks
//!   (`__free_pages_memory`), then shuffles the zone; hotplug ([`Zone::online_pages`]) does the
//!   same for the range it brings online.
//!
//! Simplifications (documented in the README too): no per-CPU page lists, no watermarks, and a
//! free block always sits on the list of the migratetype of the pageblock holding its first
//! page; a fallback allocation takes a block from another migratetype's list without stealing
//! its pageblock.
//!
//! Storage: the lists are intrusive, circular and doubly linked over per-page `next`/`prev`
//! arrays of `u32` (page index from the zone start), with one sentinel node per list after the
//! pages, exactly the shape of the kernel's `list_head`. That keeps every list operation O(1)
//! and lets `shuffle_zone` swap list positions the way `list_swap` does.

use alloc::vec;
use alloc::vec::Vec;

use rand_core::Rng;

use crate::Error;
use crate::shuffle::{PickTail, ShuffleMode, ShuffleStats};

/// Highest buddy order (the kernel's `MAX_ORDER - 1` in 5.2 terms): blocks of 1024 pages.
pub const MAX_ORDER: u8 = 10;
/// Number of buddy orders, 0 ..= [`MAX_ORDER`].
pub const NR_ORDERS: usize = MAX_ORDER as usize + 1;
/// Order of a pageblock (x86-64 with 2 MiB huge pages: 9).
pub const PAGEBLOCK_ORDER: u8 = 9;
/// Pages per pageblock.
pub const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;
/// The kernel's `SHUFFLE_ORDER`: shuffling and `pick_tail` work on blocks of this order.
pub const SHUFFLE_ORDER: u8 = MAX_ORDER;
/// Largest zone the model indexes (page indices and list nodes are `u32`).
pub const MAX_SPANNED_PAGES: u64 = 1 << 31;

/// Page size the model assumes (4 KiB).
pub const PAGE_SIZE: u64 = 4096;

/// A pageblock's mobility class; each has its own set of free lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MigrateType {
    /// Kernel allocations that cannot move.
    Unmovable = 0,
    /// User pages and page cache that compaction can move (the default).
    Movable = 1,
    /// Slab caches that reclaim can free.
    Reclaimable = 2,
}

/// Number of migratetypes the model keeps lists for.
pub const NR_MIGRATETYPES: usize = 3;

impl MigrateType {
    /// All migratetypes, in index order.
    pub const ALL: [MigrateType; NR_MIGRATETYPES] = [
        MigrateType::Unmovable,
        MigrateType::Movable,
        MigrateType::Reclaimable,
    ];

    fn from_index(i: u8) -> MigrateType {
        match i {
            0 => MigrateType::Unmovable,
            2 => MigrateType::Reclaimable,
            _ => MigrateType::Movable,
        }
    }

    /// The kernel's fallback order (`fallbacks[]` in `page_alloc.c`) for this migratetype.
    fn fallbacks(self) -> [MigrateType; 2] {
        match self {
            MigrateType::Unmovable => [MigrateType::Reclaimable, MigrateType::Movable],
            MigrateType::Movable => [MigrateType::Reclaimable, MigrateType::Unmovable],
            MigrateType::Reclaimable => [MigrateType::Unmovable, MigrateType::Movable],
        }
    }
}

/// Shape of a zone before boot: its span, its holes and its pageblocks' migratetypes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneConfig {
    start_pfn: u64,
    end_pfn: u64,
    holes: Vec<(u64, u64)>,
    migratetypes: Vec<(u64, u64, MigrateType)>,
}

impl ZoneConfig {
    /// A zone spanning PFNs `start_pfn .. end_pfn`, no holes, every pageblock movable.
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

    /// Gives the pageblocks overlapping PFNs `start .. end` the migratetype `mt`.
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::RangeOutsideZone`].
    pub fn migratetype(mut self, start: u64, end: u64, mt: MigrateType) -> Result<Self, Error> {
        self.check_range(start, end)?;
        self.migratetypes.push((start, end, mt));
        Ok(self)
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
    /// What `page_alloc.shuffle=1` does in Linux 5.2: kernel shuffle at order 10 plus
    /// `pick_tail`.
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

// Per-page metadata bits.
const HOLE: u8 = 0x80;
const BUDDY: u8 = 0x40;
const ALLOC: u8 = 0x20;
const ORDER_MASK: u8 = 0x0f;

const NR_LISTS: usize = NR_ORDERS * NR_MIGRATETYPES;

#[inline]
fn list_id(order: u8, mt: u8) -> usize {
    order as usize * NR_MIGRATETYPES + mt as usize
}

/// A zone after boot: buddy free lists over a PFN span, driven by a seedable generator `R`
/// that stands in for the kernel's `get_random_long()` / `get_random_u64()`.
pub struct Zone<R> {
    start_pfn: u64,
    spanned: u32,
    meta: Vec<u8>,
    pageblock_mt: Vec<u8>,
    next: Vec<u32>,
    prev: Vec<u32>,
    nr_free: [u32; NR_LISTS],
    free_pages: u64,
    present_pages: u64,
    policy: ShufflePolicy,
    pub(crate) tail: PickTail,
    pub(crate) rng: R,
}

impl<R> core::fmt::Debug for Zone<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The generator's state is deliberately left out.
        f.debug_struct("Zone")
            .field("start_pfn", &self.start_pfn)
            .field("spanned_pages", &self.spanned)
            .field("present_pages", &self.present_pages)
            .field("free_pages", &self.free_pages)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<R: Rng> Zone<R> {
    /// Builds the zone and boots it: every present page is freed in ascending PFN order, in
    /// the largest naturally aligned chunks, then — if `policy.enabled` — the zone is shuffled
    /// (`shuffle_free_memory`).
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`] for `policy.order > 10`, [`Error::AllHoles`] when no page is
    /// present.
    pub fn new(config: &ZoneConfig, policy: ShufflePolicy, rng: R) -> Result<Self, Error> {
        policy.validate()?;
        let spanned = config.spanned_pages();
        // ZoneConfig::new bounds the span by MAX_SPANNED_PAGES = 2^31.
        let spanned32 = u32::try_from(spanned).map_err(|_| Error::ZoneTooLarge {
            spanned_pages: spanned,
        })?;
        let n = spanned as usize;
        let mut meta = vec![0u8; n];
        for &(s, e) in &config.holes {
            for m in &mut meta[(s - config.start_pfn) as usize..(e - config.start_pfn) as usize] {
                *m = HOLE;
            }
        }
        let present_pages = meta.iter().filter(|&&m| m & HOLE == 0).count() as u64;
        if present_pages == 0 {
            return Err(Error::AllHoles);
        }
        let first_block = config.start_pfn >> PAGEBLOCK_ORDER;
        let last_block = (config.end_pfn - 1) >> PAGEBLOCK_ORDER;
        let mut pageblock_mt =
            vec![MigrateType::Movable as u8; (last_block - first_block + 1) as usize];
        for &(s, e, mt) in &config.migratetypes {
            if s == e {
                continue;
            }
            for b in (s >> PAGEBLOCK_ORDER)..=((e - 1) >> PAGEBLOCK_ORDER) {
                pageblock_mt[(b - first_block) as usize] = mt as u8;
            }
        }
        let mut next = vec![0u32; n + NR_LISTS];
        let mut prev = vec![0u32; n + NR_LISTS];
        for id in 0..NR_LISTS {
            let s = (n + id) as u32;
            next[n + id] = s;
            prev[n + id] = s;
        }
        let mut zone = Zone {
            start_pfn: config.start_pfn,
            spanned: spanned32,
            meta,
            pageblock_mt,
            next,
            prev,
            nr_free: [0; NR_LISTS],
            free_pages: 0,
            present_pages,
            policy,
            tail: PickTail::new(),
            rng,
        };
        zone.free_present_range(config.start_pfn, config.end_pfn);
        if policy.enabled {
            zone.shuffle_free_memory();
        }
        Ok(zone)
    }

    /// Memory hotplug: brings the hole `start .. end` online, frees it in ascending order and,
    /// if shuffling is on, shuffles the zone again (`online_pages` → `shuffle_zone`).
    ///
    /// # Errors
    /// [`Error::StartAfterEnd`], [`Error::RangeOutsideZone`], [`Error::AlreadyOnline`] if any
    /// page of the range is present. On error nothing changes.
    pub fn online_pages(&mut self, start: u64, end: u64) -> Result<Option<ShuffleStats>, Error> {
        if start > end {
            return Err(Error::StartAfterEnd { start, end });
        }
        if start < self.start_pfn || end > self.end_pfn() {
            return Err(Error::RangeOutsideZone { start, end });
        }
        for pfn in start..end {
            if self.meta[self.idx(pfn)] & HOLE == 0 {
                return Err(Error::AlreadyOnline { pfn });
            }
        }
        for pfn in start..end {
            let i = self.idx(pfn);
            self.meta[i] = 0;
        }
        self.present_pages += end - start;
        self.free_present_range(start, end);
        if self.policy.enabled {
            return Ok(Some(self.shuffle_free_memory()));
        }
        Ok(None)
    }

    /// The boot / hotplug shuffle: `shuffle_zone` at every order from the policy's order up to
    /// [`MAX_ORDER`], lowest first. With the default order 10 that is Linux 5.2's single call;
    /// a lower order follows the seed's v7 patch, where the order is `CONFIG_SHUFFLE_PAGE_ORDER`
    /// (0 ..= 10) and every order from it up is shuffled.
    fn shuffle_free_memory(&mut self) -> ShuffleStats {
        let mut total = ShuffleStats::default();
        for order in self.policy.order..=MAX_ORDER {
            let st = crate::shuffle::shuffle_order(self, order, self.policy.mode);
            total.candidates += st.candidates;
            total.swaps += st.swaps;
            total.retries_exhausted += st.retries_exhausted;
            total.migratetype_mismatches += st.migratetype_mismatches;
            total.random_words += st.random_words;
        }
        total
    }

    /// Frees every present page of `start .. end` in ascending order, in chunks of
    /// `min(MAX_ORDER, alignment)` as `__free_pages_memory` does.
    fn free_present_range(&mut self, start: u64, end: u64) {
        let mut pfn = start;
        while pfn < end {
            if self.meta[self.idx(pfn)] & HOLE != 0 {
                pfn += 1;
                continue;
            }
            let mut run_end = pfn;
            while run_end < end && self.meta[self.idx(run_end)] & HOLE == 0 {
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
                self.free_pages += 1 << order;
                self.free_one_page(s, order);
                s += 1 << order;
            }
            pfn = run_end;
        }
    }

    /// The kernel's `shuffle_pick_tail`: one bit of a 64-bit batch drawn with `next_u64`.
    pub fn pick_tail(&mut self) -> bool {
        self.tail.coin(&mut self.rng)
    }

    /// Allocates a block of `2^order` pages of migratetype `mt` (falling back to the other
    /// migratetypes' lists), and returns its first PFN, or `None` when no block is free.
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`].
    #[inline]
    pub fn alloc_pages(&mut self, order: u8, mt: MigrateType) -> Result<Option<u64>, Error> {
        if order > MAX_ORDER {
            return Err(Error::OrderTooLarge { order });
        }
        let mt8 = mt as u8;
        // __rmqueue_smallest: the smallest order with a free block of the wanted type.
        for o in order..=MAX_ORDER {
            if let Some(i) = self.take_head(list_id(o, mt8)) {
                return Ok(Some(self.finish_alloc(i, order, o)));
            }
        }
        // __rmqueue_fallback (simplified): the largest block of a fallback type, no stealing.
        for fb in mt.fallbacks() {
            for o in (order..=MAX_ORDER).rev() {
                if let Some(i) = self.take_head(list_id(o, fb as u8)) {
                    return Ok(Some(self.finish_alloc(i, order, o)));
                }
            }
        }
        Ok(None)
    }

    #[inline]
    fn take_head(&mut self, id: usize) -> Option<u32> {
        let s = self.sentinel(id);
        let i = self.next[s as usize];
        if i == s {
            return None;
        }
        self.list_del(i);
        self.nr_free[id] -= 1;
        Some(i)
    }

    #[inline]
    fn finish_alloc(&mut self, i: u32, order: u8, high: u8) -> u64 {
        // expand(): keep the low half, put each high half on the head of its list.
        let mut high = high;
        while high > order {
            high -= 1;
            let b = i + (1u32 << high);
            self.meta[b as usize] = BUDDY | high;
            let id = list_id(high, self.mt_of(b));
            self.list_add(b, id);
            self.nr_free[id] += 1;
        }
        self.meta[i as usize] = ALLOC | order;
        self.free_pages -= 1 << order;
        self.start_pfn + u64::from(i)
    }

    /// Frees the block of `2^order` pages at `pfn` that [`Zone::alloc_pages`] handed out.
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`]; [`Error::NotAllocated`] if `pfn` is outside the zone or is
    /// not the first page of an allocated block of exactly that order (double free, wrong
    /// order, a hole). On error nothing changes.
    #[inline]
    pub fn free_pages(&mut self, pfn: u64, order: u8) -> Result<(), Error> {
        if order > MAX_ORDER {
            return Err(Error::OrderTooLarge { order });
        }
        let rel = pfn.wrapping_sub(self.start_pfn);
        if rel >= u64::from(self.spanned) || self.meta[rel as usize] != ALLOC | order {
            return Err(Error::NotAllocated { pfn, order });
        }
        self.meta[rel as usize] = 0;
        self.free_pages += 1 << order;
        self.free_one_page(pfn, order);
        Ok(())
    }

    /// `__free_one_page`: merge with free buddies, then put the block on its list.
    #[inline]
    fn free_one_page(&mut self, pfn: u64, order: u8) {
        let mut pfn = pfn;
        let mut order = order;
        let end = self.end_pfn();
        while order < MAX_ORDER {
            let buddy = pfn ^ (1u64 << order);
            if buddy < self.start_pfn || buddy >= end {
                break;
            }
            let bi = (buddy - self.start_pfn) as u32;
            if self.meta[bi as usize] != BUDDY | order {
                break;
            }
            let id = list_id(order, self.mt_of(bi));
            self.list_del(bi);
            self.nr_free[id] -= 1;
            self.meta[bi as usize] = 0;
            pfn &= buddy;
            order += 1;
        }
        let i = (pfn - self.start_pfn) as u32;
        self.meta[i as usize] = BUDDY | order;
        let id = list_id(order, self.mt_of(i));
        let shuffle_order = self.policy.enabled && order >= self.policy.order;
        let to_tail = if shuffle_order {
            self.policy.pick_tail && self.tail.coin(&mut self.rng)
        } else if order < MAX_ORDER - 1 {
            // buddy_merge_likely: is the buddy of the merged block free at order + 1?
            let combined = pfn & !(1u64 << order);
            let higher_buddy = combined ^ (1u64 << (order + 1));
            higher_buddy >= self.start_pfn
                && higher_buddy < end
                && self.meta[(higher_buddy - self.start_pfn) as usize] == BUDDY | (order + 1)
        } else {
            false
        };
        if to_tail {
            self.list_add_tail(i, id);
        } else {
            self.list_add(i, id);
        }
        self.nr_free[id] += 1;
    }

    /// Shuffles the free lists of blocks of `order` over the whole zone with `mode`
    /// (see [`crate::shuffle`]).
    ///
    /// # Errors
    /// [`Error::OrderTooLarge`].
    pub fn shuffle_zone(&mut self, order: u8, mode: ShuffleMode) -> Result<ShuffleStats, Error> {
        crate::shuffle::shuffle_zone(self, order, mode)
    }
}

impl<R> Zone<R> {
    #[inline]
    fn idx(&self, pfn: u64) -> usize {
        (pfn - self.start_pfn) as usize
    }

    #[inline]
    fn sentinel(&self, id: usize) -> u32 {
        self.spanned + id as u32
    }

    #[inline]
    pub(crate) fn mt_of(&self, i: u32) -> u8 {
        let pb = ((self.start_pfn + u64::from(i)) >> PAGEBLOCK_ORDER)
            - (self.start_pfn >> PAGEBLOCK_ORDER);
        self.pageblock_mt[pb as usize]
    }

    #[inline]
    fn list_del(&mut self, i: u32) {
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    /// Inserts `i` right after `pos`.
    #[inline]
    fn list_add_after(&mut self, i: u32, pos: u32) {
        let n = self.next[pos as usize];
        self.next[i as usize] = n;
        self.prev[i as usize] = pos;
        self.prev[n as usize] = i;
        self.next[pos as usize] = i;
    }

    #[inline]
    fn list_add(&mut self, i: u32, id: usize) {
        let s = self.sentinel(id);
        self.list_add_after(i, s);
    }

    #[inline]
    fn list_add_tail(&mut self, i: u32, id: usize) {
        let s = self.sentinel(id);
        let last = self.prev[s as usize];
        self.list_add_after(i, last);
    }

    /// The kernel's `list_swap`: `a` and `b` exchange their places in their lists.
    #[inline]
    pub(crate) fn list_swap(&mut self, a: u32, b: u32) {
        let mut pos = self.prev[b as usize];
        self.list_del(b);
        // list_replace(a, b): b takes a's place.
        let (ap, an) = (self.prev[a as usize], self.next[a as usize]);
        self.next[b as usize] = an;
        self.prev[b as usize] = ap;
        self.prev[an as usize] = b;
        self.next[ap as usize] = b;
        if pos == a {
            pos = b;
        }
        self.list_add_after(a, pos);
    }

    /// `shuffle_valid_page`: the page index of `pfn` if it is in the zone, present, and the
    /// first page of a free block of exactly `order`.
    #[inline]
    pub(crate) fn shuffle_valid_page(&self, pfn: u64, order: u8) -> Option<u32> {
        let rel = pfn.checked_sub(self.start_pfn)?;
        if rel >= u64::from(self.spanned) {
            return None;
        }
        (self.meta[rel as usize] == BUDDY | order).then_some(rel as u32)
    }

    /// Page indices of a free list, head first.
    pub(crate) fn list_nodes(&self, order: u8, mt: u8) -> Vec<u32> {
        let s = self.sentinel(list_id(order, mt));
        let mut out = Vec::with_capacity(self.nr_free[list_id(order, mt)] as usize);
        let mut i = self.next[s as usize];
        while i != s {
            out.push(i);
            i = self.next[i as usize];
        }
        out
    }

    /// The members of the free lists of `order`, one vector per migratetype, in an order that
    /// does not matter to an unbiased shuffle: list order for short lists, PFN order (a
    /// sequential scan of the page flags, instead of a pointer chase through the list) when
    /// the lists hold more than 1/8 of the zone's aligned slots of that order.
    pub(crate) fn shuffle_members(&self, order: u8) -> [Vec<u32>; NR_MIGRATETYPES] {
        let total: u64 = (0..NR_MIGRATETYPES)
            .map(|mt| u64::from(self.nr_free[list_id(order, mt as u8)]))
            .sum();
        if total.saturating_mul(8u64 << order) < u64::from(self.spanned) {
            return core::array::from_fn(|mt| self.list_nodes(order, mt as u8));
        }
        let mut out: [Vec<u32>; NR_MIGRATETYPES] = core::array::from_fn(|mt| {
            Vec::with_capacity(self.nr_free[list_id(order, mt as u8)] as usize)
        });
        let step = 1u64 << order;
        let Some(first) = self.start_pfn.checked_add(step - 1) else {
            return out;
        };
        let mut i = (first & !(step - 1)) - self.start_pfn;
        while i < u64::from(self.spanned) {
            if self.meta[i as usize] == BUDDY | order {
                let mt = self.mt_of(i as u32);
                out[mt as usize].push(i as u32);
            }
            i += step;
        }
        out
    }

    /// Relinks a free list in the given order (head first); `nodes` must be a permutation of
    /// the list's current members.
    pub(crate) fn relink(&mut self, order: u8, mt: u8, nodes: &[u32]) {
        let s = self.sentinel(list_id(order, mt));
        let mut p = s;
        for &i in nodes {
            self.next[p as usize] = i;
            self.prev[i as usize] = p;
            p = i;
        }
        self.next[p as usize] = s;
        self.prev[s as usize] = p;
    }

    /// First PFN of the zone.
    pub fn start_pfn(&self) -> u64 {
        self.start_pfn
    }

    /// One past the last PFN of the zone.
    pub fn end_pfn(&self) -> u64 {
        self.start_pfn + u64::from(self.spanned)
    }

    /// Pages spanned, holes included.
    pub fn spanned_pages(&self) -> u64 {
        u64::from(self.spanned)
    }

    /// Pages present (not holes).
    pub fn present_pages(&self) -> u64 {
        self.present_pages
    }

    /// Pages on the free lists.
    pub fn nr_free_pages(&self) -> u64 {
        self.free_pages
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
        u64::from(self.nr_free[list_id(order, mt as u8)])
    }

    /// First PFNs of the blocks on the free list of `order` and `mt`, head first (empty for an
    /// order above 10).
    pub fn free_list(&self, order: u8, mt: MigrateType) -> Vec<u64> {
        if order > MAX_ORDER {
            return Vec::new();
        }
        self.list_nodes(order, mt as u8)
            .into_iter()
            .map(|i| self.start_pfn + u64::from(i))
            .collect()
    }

    /// Migratetype of the pageblock holding `pfn` (`None` outside the zone).
    pub fn pageblock_migratetype(&self, pfn: u64) -> Option<MigrateType> {
        let rel = pfn.checked_sub(self.start_pfn)?;
        if rel >= u64::from(self.spanned) {
            return None;
        }
        Some(MigrateType::from_index(self.mt_of(rel as u32)))
    }

    /// Whether `pfn` is in the zone and present.
    pub fn is_present(&self, pfn: u64) -> bool {
        pfn.checked_sub(self.start_pfn)
            .is_some_and(|rel| rel < u64::from(self.spanned) && self.meta[rel as usize] & HOLE == 0)
    }

    /// Every free page, ascending, found by walking the free lists (not the page flags).
    pub fn free_page_set(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.free_pages as usize);
        for order in 0..=MAX_ORDER {
            for mt in 0..NR_MIGRATETYPES as u8 {
                for i in self.list_nodes(order, mt) {
                    let pfn = self.start_pfn + u64::from(i);
                    out.extend(pfn..pfn + (1u64 << order));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Checks the zone's internal consistency: list links, counts, that each list holds
    /// exactly the free blocks of its order and migratetype, that free blocks are aligned, do
    /// not overlap and hold no hole, and that no two free buddies were left unmerged.
    ///
    /// # Errors
    /// A description of the first broken invariant (a bug in this crate if it ever happens).
    // Indexing walks several parallel per-page arrays at once; iterators would obscure it.
    #[allow(clippy::needless_range_loop)]
    pub fn check_consistency(&self) -> Result<(), &'static str> {
        let n = self.spanned as usize;
        let mut on_list = vec![false; n];
        let mut total = 0u64;
        for order in 0..=MAX_ORDER {
            for mt in 0..NR_MIGRATETYPES as u8 {
                let id = list_id(order, mt);
                let s = self.sentinel(id);
                let mut count = 0u32;
                let mut p = s;
                let mut i = self.next[s as usize];
                while i != s {
                    if i as usize >= n {
                        return Err("list link points at another list's sentinel");
                    }
                    if self.prev[i as usize] != p {
                        return Err("prev link does not match next link");
                    }
                    if on_list[i as usize] {
                        return Err("block on a free list twice");
                    }
                    on_list[i as usize] = true;
                    if self.meta[i as usize] != BUDDY | order {
                        return Err("block on the list of another order");
                    }
                    if self.mt_of(i) != mt {
                        return Err("block on the list of another migratetype");
                    }
                    let pfn = self.start_pfn + u64::from(i);
                    if pfn & ((1u64 << order) - 1) != 0 {
                        return Err("free block not naturally aligned");
                    }
                    if u64::from(i) + (1u64 << order) > u64::from(self.spanned) {
                        return Err("free block reaches past the zone end");
                    }
                    count += 1;
                    total += 1 << order;
                    p = i;
                    i = self.next[i as usize];
                    if count > self.spanned {
                        return Err("free list loops");
                    }
                }
                if self.prev[s as usize] != p {
                    return Err("sentinel prev does not match the last node");
                }
                if count != self.nr_free[id] {
                    return Err("nr_free does not match the list length");
                }
            }
        }
        if total != self.free_pages {
            return Err("free page count does not match the lists");
        }
        let mut covered = vec![false; n];
        for i in 0..n {
            let m = self.meta[i];
            if m & BUDDY != 0 {
                if !on_list[i] {
                    return Err("page marked free head but on no list");
                }
                let order = m & ORDER_MASK;
                for j in i..i + (1usize << order) {
                    if covered[j] {
                        return Err("free blocks overlap");
                    }
                    covered[j] = true;
                    if self.meta[j] & HOLE != 0 {
                        return Err("free block holds a hole");
                    }
                    if j != i && self.meta[j] & (BUDDY | ALLOC) != 0 {
                        return Err("free block holds another block's head");
                    }
                }
                if order < MAX_ORDER {
                    let pfn = self.start_pfn + i as u64;
                    let buddy = pfn ^ (1u64 << order);
                    if buddy >= self.start_pfn
                        && buddy < self.end_pfn()
                        && self.meta[(buddy - self.start_pfn) as usize] == BUDDY | order
                    {
                        return Err("two free buddies left unmerged");
                    }
                }
            } else if m & ALLOC != 0 && m & HOLE != 0 {
                return Err("hole handed out");
            }
        }
        Ok(())
    }
}
