//! The free area: per-page flags, the buddy free lists (one intrusive list per order and
//! migratetype) and the pageblock migratetypes of one zone — the data that Linux keeps in
//! `struct page` flags, `zone->free_area[order].free_list[migratetype]` and the pageblock
//! bitmap (`include/linux/mmzone.h`, `mm/page_alloc.c`).
//!
//! This module owns the mechanics only: flags, list insertion at the head or the tail,
//! removal, the kernel's `list_swap`, `shuffle_valid_page`, and the consistency walk. Policy
//! (where a freed block goes, merging, per-CPU lists, allocation) lives in [`crate::zone`],
//! which owns a [`FreeArea`]; the shuffle ([`crate::shuffle`]) works on a [`FreeArea`] alone.
//!
//! Storage: the lists are circular and doubly linked over per-page `next`/`prev` arrays of
//! `u32` (page index from the zone start), with one sentinel node per list after the pages —
//! the shape of the kernel's `list_head` — so every list operation is O(1). One byte of flags
//! per page packs the state (plain, free-block head, allocated-block head, hole), the order,
//! and for a free block the migratetype of the list it is on: in the kernel a merged block
//! joins the list of the *freed page's* migratetype (`__free_one_page(.., migratetype)`),
//! which need not be the pageblock type of the merged block's first page.

use alloc::vec;
use alloc::vec::Vec;

use crate::Error;

/// Highest buddy order (the kernel's `MAX_ORDER - 1` in 5.x terms): blocks of 1024 pages.
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

/// Number of migratetypes the model keeps lists for (the kernel's `MIGRATE_PCPTYPES`).
pub const NR_MIGRATETYPES: usize = 3;

impl MigrateType {
    /// All migratetypes, in index order.
    pub const ALL: [MigrateType; NR_MIGRATETYPES] = [
        MigrateType::Unmovable,
        MigrateType::Movable,
        MigrateType::Reclaimable,
    ];

    pub(crate) fn from_index(i: u8) -> MigrateType {
        match i {
            0 => MigrateType::Unmovable,
            2 => MigrateType::Reclaimable,
            _ => MigrateType::Movable,
        }
    }

    /// The kernel's fallback order (`fallbacks[]` in `mm/page_alloc.c`) for this migratetype.
    pub(crate) fn fallbacks(self) -> [MigrateType; 2] {
        match self {
            MigrateType::Unmovable => [MigrateType::Reclaimable, MigrateType::Movable],
            MigrateType::Movable => [MigrateType::Reclaimable, MigrateType::Unmovable],
            MigrateType::Reclaimable => [MigrateType::Unmovable, MigrateType::Movable],
        }
    }
}

// Per-page flags: two state bits, the list's migratetype (free heads), the order.
const ORDER_MASK: u8 = 0x0f;
const MT_SHIFT: u8 = 4;
const MT_MASK: u8 = 0x30;
const STATE_MASK: u8 = 0xc0;
const BUDDY: u8 = 0x40;
const ALLOC: u8 = 0x80;
const HOLE: u8 = 0xc0;
/// An order-0 page on a per-CPU list: allocated as far as the buddy lists can see
/// (not `PageBuddy`, so it never merges), but not handed to anyone.
const PCP: u8 = ALLOC | MT_MASK;

pub(crate) const NR_LISTS: usize = NR_ORDERS * NR_MIGRATETYPES;

#[inline]
pub(crate) fn list_id(order: u8, mt: u8) -> usize {
    order as usize * NR_MIGRATETYPES + mt as usize
}

/// Flags, free lists and pageblock types of one zone (see the module docs).
#[derive(Clone)]
pub struct FreeArea {
    start_pfn: u64,
    spanned: u32,
    meta: Vec<u8>,
    pageblock_mt: Vec<u8>,
    next: Vec<u32>,
    prev: Vec<u32>,
    nr_free: [u32; NR_LISTS],
    free_pages: u64,
    present_pages: u64,
}

impl core::fmt::Debug for FreeArea {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FreeArea")
            .field("start_pfn", &self.start_pfn)
            .field("spanned_pages", &self.spanned)
            .field("present_pages", &self.present_pages)
            .field("free_pages", &self.free_pages)
            .finish_non_exhaustive()
    }
}

impl FreeArea {
    /// An empty free area over `start_pfn .. start_pfn + spanned`, the given PFN ranges holes,
    /// every pageblock MOVABLE (what `memmap_init_zone` sets at boot).
    ///
    /// # Errors
    /// [`Error::ZoneTooLarge`] above [`MAX_SPANNED_PAGES`], [`Error::AllHoles`].
    pub(crate) fn new(start_pfn: u64, spanned: u64, holes: &[(u64, u64)]) -> Result<Self, Error> {
        let spanned32 = u32::try_from(spanned)
            .ok()
            .filter(|&s| u64::from(s) <= MAX_SPANNED_PAGES)
            .ok_or(Error::ZoneTooLarge {
                spanned_pages: spanned,
            })?;
        let n = spanned as usize;
        let mut meta = vec![0u8; n];
        for &(s, e) in holes {
            for m in &mut meta[(s - start_pfn) as usize..(e - start_pfn) as usize] {
                *m = HOLE;
            }
        }
        let present_pages = meta.iter().filter(|&&m| m == HOLE).count() as u64;
        let present_pages = spanned - present_pages;
        if present_pages == 0 {
            return Err(Error::AllHoles);
        }
        let first_block = start_pfn >> PAGEBLOCK_ORDER;
        let last_block = (start_pfn + spanned - 1) >> PAGEBLOCK_ORDER;
        let pageblock_mt =
            vec![MigrateType::Movable as u8; (last_block - first_block + 1) as usize];
        let mut next = vec![0u32; n + NR_LISTS];
        let mut prev = vec![0u32; n + NR_LISTS];
        for id in 0..NR_LISTS {
            let s = (n + id) as u32;
            next[n + id] = s;
            prev[n + id] = s;
        }
        Ok(FreeArea {
            start_pfn,
            spanned: spanned32,
            meta,
            pageblock_mt,
            next,
            prev,
            nr_free: [0; NR_LISTS],
            free_pages: 0,
            present_pages,
        })
    }

    // ----- flags -----

    #[inline]
    pub(crate) fn idx(&self, pfn: u64) -> usize {
        (pfn - self.start_pfn) as usize
    }

    /// Page index of `pfn` if it is inside the span.
    #[inline]
    pub(crate) fn index_of(&self, pfn: u64) -> Option<u32> {
        let rel = pfn.checked_sub(self.start_pfn)?;
        (rel < u64::from(self.spanned)).then_some(rel as u32)
    }

    #[inline]
    pub(crate) fn is_hole(&self, i: u32) -> bool {
        self.meta[i as usize] == HOLE
    }

    /// Whether page `i` is the first page of a free block of exactly `order` (`PageBuddy` with
    /// `page_order == order`).
    #[inline]
    pub(crate) fn is_free_head(&self, i: u32, order: u8) -> bool {
        self.meta[i as usize] & (STATE_MASK | ORDER_MASK) == BUDDY | order
    }

    /// Whether page `i` heads a block handed out at exactly `order`.
    #[inline]
    pub(crate) fn is_alloc_head(&self, i: u32, order: u8) -> bool {
        self.meta[i as usize] == ALLOC | order
    }

    /// Whether page `i` sits on a per-CPU list.
    #[inline]
    pub(crate) fn is_pcp(&self, i: u32) -> bool {
        self.meta[i as usize] == PCP
    }

    /// Migratetype of the list the free block headed by `i` is on.
    #[inline]
    pub(crate) fn list_mt(&self, i: u32) -> u8 {
        (self.meta[i as usize] & MT_MASK) >> MT_SHIFT
    }

    #[inline]
    pub(crate) fn set_alloc(&mut self, i: u32, order: u8) {
        self.meta[i as usize] = ALLOC | order;
    }

    #[inline]
    pub(crate) fn set_pcp(&mut self, i: u32) {
        self.meta[i as usize] = PCP;
    }

    #[inline]
    pub(crate) fn clear(&mut self, i: u32) {
        self.meta[i as usize] = 0;
    }

    /// Marks `start .. end` (inside the span, all holes) present.
    pub(crate) fn make_present(&mut self, start: u64, end: u64) {
        for pfn in start..end {
            let i = self.idx(pfn);
            self.meta[i] = 0;
        }
        self.present_pages += end - start;
    }

    // ----- pageblocks -----

    #[inline]
    fn pageblock_index(&self, i: u32) -> usize {
        (((self.start_pfn + u64::from(i)) >> PAGEBLOCK_ORDER) - (self.start_pfn >> PAGEBLOCK_ORDER))
            as usize
    }

    /// Migratetype of the pageblock holding page `i` (`get_pageblock_migratetype`).
    #[inline]
    pub(crate) fn mt_of(&self, i: u32) -> u8 {
        self.pageblock_mt[self.pageblock_index(i)]
    }

    /// `set_pageblock_migratetype` for the pageblock holding page `i`.
    #[inline]
    pub(crate) fn set_pageblock_mt(&mut self, i: u32, mt: u8) {
        let pb = self.pageblock_index(i);
        self.pageblock_mt[pb] = mt;
    }

    /// Page-index range of the pageblock holding page `i`, clipped to the span.
    pub(crate) fn pageblock_range(&self, i: u32) -> (u32, u32) {
        let pfn = self.start_pfn + u64::from(i);
        let s = (pfn & !(PAGEBLOCK_NR_PAGES - 1)).max(self.start_pfn);
        // Saturating: a zone may end at the top of the PFN space (the fuzzer's zones do).
        let e = (pfn | (PAGEBLOCK_NR_PAGES - 1))
            .saturating_add(1)
            .min(self.end_pfn());
        ((s - self.start_pfn) as u32, (e - self.start_pfn) as u32)
    }

    // ----- lists -----

    #[inline]
    fn sentinel(&self, id: usize) -> u32 {
        self.spanned + id as u32
    }

    #[inline]
    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    /// Inserts `i` right after `pos`.
    #[inline]
    fn link_after(&mut self, i: u32, pos: u32) {
        let n = self.next[pos as usize];
        self.next[i as usize] = n;
        self.prev[i as usize] = pos;
        self.prev[n as usize] = i;
        self.next[pos as usize] = i;
    }

    /// `add_to_free_list` / `add_to_free_list_tail`: `i` becomes the head of a free block of
    /// `order` on the list of `mt`, at its head or tail.
    #[inline]
    pub(crate) fn add(&mut self, i: u32, order: u8, mt: u8, tail: bool) {
        self.meta[i as usize] = BUDDY | (mt << MT_SHIFT) | order;
        let id = list_id(order, mt);
        let s = self.sentinel(id);
        let pos = if tail { self.prev[s as usize] } else { s };
        self.link_after(i, pos);
        self.nr_free[id] += 1;
        self.free_pages += 1 << order;
    }

    /// `del_page_from_free_list`: takes the free block headed by `i` (of `order`) off its list
    /// and clears its flags.
    #[inline]
    pub(crate) fn del(&mut self, i: u32, order: u8) {
        let id = list_id(order, self.list_mt(i));
        self.unlink(i);
        self.nr_free[id] -= 1;
        self.free_pages -= 1 << order;
        self.meta[i as usize] = 0;
    }

    /// `move_to_free_list`: the free block headed by `i` moves to the list of `mt` (head or
    /// tail).
    pub(crate) fn move_to(&mut self, i: u32, order: u8, mt: u8, tail: bool) {
        self.del(i, order);
        self.add(i, order, mt, tail);
    }

    /// The head of the list of `order` and `mt`, taken off the list (`get_page_from_free_area`
    /// + `del_page_from_free_list`).
    #[inline]
    pub(crate) fn take_head(&mut self, order: u8, mt: u8) -> Option<u32> {
        let i = self.head(order, mt)?;
        self.del(i, order);
        Some(i)
    }

    /// The head of the list of `order` and `mt`, left in place.
    #[inline]
    pub(crate) fn head(&self, order: u8, mt: u8) -> Option<u32> {
        let s = self.sentinel(list_id(order, mt));
        let i = self.next[s as usize];
        (i != s).then_some(i)
    }

    /// The kernel's `list_swap`: free blocks `a` and `b` exchange their places in their lists
    /// (which may be different lists: the shuffle compares pageblock types, not list types, so
    /// the list migratetypes move with the positions).
    #[inline]
    pub(crate) fn list_swap(&mut self, a: u32, b: u32) {
        let mut pos = self.prev[b as usize];
        self.unlink(b);
        // list_replace(a, b): b takes a's place.
        let (ap, an) = (self.prev[a as usize], self.next[a as usize]);
        self.next[b as usize] = an;
        self.prev[b as usize] = ap;
        self.prev[an as usize] = b;
        self.next[ap as usize] = b;
        if pos == a {
            pos = b;
        }
        self.link_after(a, pos);
        let (ma, mb) = (
            self.meta[a as usize] & MT_MASK,
            self.meta[b as usize] & MT_MASK,
        );
        self.meta[a as usize] = (self.meta[a as usize] & !MT_MASK) | mb;
        self.meta[b as usize] = (self.meta[b as usize] & !MT_MASK) | ma;
    }

    /// `shuffle_valid_page`: the page index of `pfn` if it is in the zone, present, and the
    /// first page of a free block of exactly `order`.
    #[inline]
    pub(crate) fn shuffle_valid_page(&self, pfn: u64, order: u8) -> Option<u32> {
        let i = self.index_of(pfn)?;
        self.is_free_head(i, order).then_some(i)
    }

    /// Page indices of a free list, head first.
    pub(crate) fn list_nodes(&self, order: u8, mt: u8) -> Vec<u32> {
        let id = list_id(order, mt);
        let s = self.sentinel(id);
        let mut out = Vec::with_capacity(self.nr_free[id] as usize);
        let mut i = self.next[s as usize];
        while i != s {
            out.push(i);
            i = self.next[i as usize];
        }
        out
    }

    /// The members of the free lists of `order`, one vector per list migratetype, in an order
    /// that does not matter to an unbiased shuffle: list order for short lists, PFN order (a
    /// sequential scan of the flags instead of a pointer chase) when the lists hold more than
    /// 1/8 of the zone's aligned slots of that order.
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
            if self.is_free_head(i as u32, order) {
                out[self.list_mt(i as u32) as usize].push(i as u32);
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

    // ----- sizes -----

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

    /// Pages on the buddy free lists.
    pub fn nr_free_pages(&self) -> u64 {
        self.free_pages
    }

    /// Blocks on the list of `order` and `mt` (`order ≤ 10`).
    pub(crate) fn nr_free(&self, order: u8, mt: u8) -> u64 {
        u64::from(self.nr_free[list_id(order, mt)])
    }

    /// Pages flagged as sitting on a per-CPU list (a sequential scan).
    pub(crate) fn nr_pcp_flagged(&self) -> u64 {
        self.meta.iter().filter(|&&m| m == PCP).count() as u64
    }

    /// Bytes of model state per spanned page (flags, two links), for the memory budget.
    pub const BYTES_PER_PAGE: u64 = 1 + 4 + 4;

    /// Checks the internal consistency: list links, counts, that each list holds exactly the
    /// free blocks whose flags name its order and migratetype, that free blocks are aligned, do
    /// not overlap and hold no hole, and that no two free buddies were left unmerged.
    /// Per-CPU pages count as allocated here.
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
                    if !self.is_free_head(i, order) {
                        return Err("block on the list of another order");
                    }
                    if self.list_mt(i) != mt {
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
            match m & STATE_MASK {
                BUDDY => {
                    if !on_list[i] {
                        return Err("page marked free head but on no list");
                    }
                    if m & MT_MASK == MT_MASK {
                        return Err("free block with an invalid list migratetype");
                    }
                    let order = m & ORDER_MASK;
                    for j in i..i + (1usize << order) {
                        if covered[j] {
                            return Err("free blocks overlap");
                        }
                        covered[j] = true;
                        if self.meta[j] == HOLE {
                            return Err("free block holds a hole");
                        }
                        if j != i && self.meta[j] != 0 {
                            return Err("free block holds another block's head");
                        }
                    }
                    if order < MAX_ORDER {
                        let pfn = self.start_pfn + i as u64;
                        let buddy = pfn ^ (1u64 << order);
                        if let Some(b) = self.index_of(buddy)
                            && self.is_free_head(b, order)
                        {
                            return Err("two free buddies left unmerged");
                        }
                    }
                }
                ALLOC if m != PCP && m & MT_MASK != 0 => {
                    return Err("allocated head with list bits set");
                }
                _ => {}
            }
        }
        Ok(())
    }
}
