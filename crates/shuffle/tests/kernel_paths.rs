//! Every kernel version's boot and hotplug paths, shuffle on, on zones with holes and runs of
//! UNMOVABLE and RECLAIMABLE pageblocks, against an independent reference written here from
//! the kernel's C text, function by function (it shares no code with the crate):
//!
//! * `include/linux/list.h`: `list_add`, `list_add_tail`, `list_del`, `list_move`,
//!   `list_move_tail`, `list_replace`, `list_swap`;
//! * `mm/page_alloc.c` `memmap_init_zone()` (every pageblock MOVABLE), `__free_pages_memory()`
//!   in `mm/memblock.c` (largest naturally aligned chunks, ascending), `__free_pages_core()`,
//!   `__free_one_page()`, `buddy_merge_likely()`, `move_freepages()` with
//!   `move_to_free_area()` / `move_to_free_list()` — at v5.2, v5.7 and v5.10;
//! * `mm/shuffle.c` `__shuffle_zone()`, `shuffle_valid_page()`, and the coin:
//!   v5.2 `add_to_free_area_random()` (`if (rand & 1) add_to_free_area()`: head),
//!   v5.7 `shuffle_pick_tail()` (`ret = rand & 1`: tail), v5.10 `FPI_TO_TAIL` checked first;
//! * `mm/memory_hotplug.c` `online_pages()`: v5.2 / v5.7 `memmap_init_zone(MEMMAP_HOTPLUG)`
//!   marks the onlined pageblocks MOVABLE, the range is freed through `__free_pages_core()`,
//!   then `shuffle_zone()`; v5.10 onlines into MIGRATE_ISOLATE pageblocks, frees with
//!   `FPI_TO_TAIL`, `undo_isolate_page_range(.., MIGRATE_MOVABLE)` moves the blocks to the
//!   MOVABLE tail (`move_to_free_list` is `list_move_tail` since commit 293ffa5ebb9c), then
//!   `shuffle_zone()`.
//!
//! A zone's pageblock types are those in effect when boot frees its pages: `memmap_init_zone`
//! marks every pageblock MOVABLE, then the runs are set with `set_pageblock_migratetype()`
//! before `memblock_free_all()` (the way `init_cma_reserved_pageblock()` sets MIGRATE_CMA
//! before it frees), so every boot free lands on its pageblock's list by `__free_one_page()`'s
//! own rule. The hotplugged ranges are aligned multiples of 1024 pages, as memory sections
//! are: v5.2's `online_pages_blocks()` (`get_order()` of what is left) and later kernels'
//! `__ffs`-aligned chunks then free the same order-10 blocks.
//!
//! The random words are SplitMix64's for both sides; the test also compares how many words
//! each side drew.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use std::cell::Cell;
use std::convert::Infallible;
use std::fmt::Write;
use std::rc::Rc;

use rand_core::TryRng;
use scalrand_shuffle::{KernelVersion, MigrateType, PcpLists, ShufflePolicy, Zone, ZoneConfig};

// ---------------------------------------------------------------- the reference

/// Kernel's `MAX_ORDER` (11): orders 0 ..= 10.
const K_MAX_ORDER: u32 = 11;
const PAGEBLOCK_ORDER: u32 = 9;
const SHUFFLE_ORDER: u32 = 10;
const SHUFFLE_RETRY: u32 = 10;
const MIGRATE_UNMOVABLE: usize = 0;
const MIGRATE_MOVABLE: usize = 1;
const MIGRATE_RECLAIMABLE: usize = 2;
const MIGRATE_ISOLATE: usize = 3;
const NR_MT: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kv {
    V52,
    V57,
    V510,
}

/// SplitMix64 with a word counter, standing in for `get_random_long()` / `get_random_u64()`.
struct Words {
    state: u64,
    drawn: u64,
}

impl Words {
    fn next(&mut self) -> u64 {
        self.drawn += 1;
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `struct list_head` as indices: nodes `0 .. spanned` are pages' `lru`, the rest the
/// `free_list[order][mt]` heads.
struct Lists {
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl Lists {
    fn __list_add(&mut self, new: usize, prev: usize, next: usize) {
        self.prev[next] = new;
        self.next[new] = next;
        self.prev[new] = prev;
        self.next[prev] = new;
    }
    fn list_add(&mut self, new: usize, head: usize) {
        let n = self.next[head];
        self.__list_add(new, head, n);
    }
    fn list_add_tail(&mut self, new: usize, head: usize) {
        let p = self.prev[head];
        self.__list_add(new, p, head);
    }
    fn list_del(&mut self, entry: usize) {
        let (p, n) = (self.prev[entry], self.next[entry]);
        self.prev[n] = p;
        self.next[p] = n;
    }
    fn list_move(&mut self, entry: usize, head: usize) {
        self.list_del(entry);
        self.list_add(entry, head);
    }
    fn list_move_tail(&mut self, entry: usize, head: usize) {
        self.list_del(entry);
        self.list_add_tail(entry, head);
    }
    fn list_replace(&mut self, old: usize, new: usize) {
        self.next[new] = self.next[old];
        let n = self.next[new];
        self.prev[n] = new;
        self.prev[new] = self.prev[old];
        let p = self.prev[new];
        self.next[p] = new;
    }
    fn list_swap(&mut self, entry1: usize, entry2: usize) {
        let mut pos = self.prev[entry2];
        self.list_del(entry2);
        self.list_replace(entry1, entry2);
        if pos == entry1 {
            pos = entry2;
        }
        self.list_add(entry1, pos);
    }
}

struct Page {
    present: bool,
    buddy: bool, // PageBuddy
    order: u32,  // page_order / buddy_order
}

struct KZone {
    kv: Kv,
    start: u64,
    spanned: u64,
    pages: Vec<Page>,
    pb_mt: Vec<usize>,
    lists: Lists,
    words: Words,
    // shuffle_pick_tail's / add_to_free_area_random's statics
    rand: u64,
    rand_bits: u8,
}

impl KZone {
    fn head(&self, order: u32, mt: usize) -> usize {
        self.spanned as usize + order as usize * NR_MT + mt
    }
    fn page(&self, pfn: u64) -> Option<usize> {
        (pfn >= self.start && pfn < self.start + self.spanned).then(|| (pfn - self.start) as usize)
    }
    fn pb(&self, pfn: u64) -> usize {
        ((pfn >> PAGEBLOCK_ORDER) - (self.start >> PAGEBLOCK_ORDER)) as usize
    }
    fn get_pfnblock_migratetype(&self, pfn: u64) -> usize {
        self.pb_mt[self.pb(pfn)]
    }
    fn set_pageblock_migratetype(&mut self, pfn: u64, mt: usize) {
        let b = self.pb(pfn);
        self.pb_mt[b] = mt;
    }

    /// `page_is_buddy()`: same zone, PageBuddy, same order.
    fn page_is_buddy(&self, buddy_pfn: u64, order: u32) -> bool {
        match self.page(buddy_pfn) {
            Some(b) => self.pages[b].buddy && self.pages[b].order == order,
            None => false,
        }
    }

    fn is_shuffle_order(&self, order: u32) -> bool {
        order >= SHUFFLE_ORDER
    }

    fn coin(&mut self) -> bool {
        if self.rand_bits == 0 {
            self.rand_bits = 64;
            self.rand = self.words.next();
        }
        let ret = self.rand & 1 == 1;
        self.rand_bits -= 1;
        self.rand >>= 1;
        ret
    }

    fn add_to_free_list(&mut self, p: usize, order: u32, mt: usize) {
        let h = self.head(order, mt);
        self.lists.list_add(p, h);
    }
    fn add_to_free_list_tail(&mut self, p: usize, order: u32, mt: usize) {
        let h = self.head(order, mt);
        self.lists.list_add_tail(p, h);
    }

    /// v5.7 / v5.10 `buddy_merge_likely()`; v5.2 has the same test inline.
    fn buddy_merge_likely(&self, pfn: u64, buddy_pfn: u64, order: u32) -> bool {
        if order >= K_MAX_ORDER - 2 {
            return false;
        }
        let combined_pfn = buddy_pfn & pfn;
        let higher_buddy = combined_pfn ^ (1 << (order + 1));
        self.page_is_buddy(higher_buddy, order + 1)
    }

    /// `__free_one_page()` of the version (no guard pages, no isolation races).
    fn __free_one_page(
        &mut self,
        mut pfn: u64,
        mut order: u32,
        migratetype: usize,
        to_tail_fpi: bool,
    ) {
        let mut buddy_pfn = pfn; // uninitialized_var in the kernel; unused when the loop never runs
        while order < K_MAX_ORDER - 1 {
            buddy_pfn = pfn ^ (1 << order);
            if !self.page_is_buddy(buddy_pfn, order) {
                break;
            }
            // v5.10: at order >= pageblock_order an ISOLATE block does not merge with another type.
            if self.kv == Kv::V510 && order >= PAGEBLOCK_ORDER {
                let buddy_mt = self.get_pfnblock_migratetype(buddy_pfn);
                if migratetype != buddy_mt
                    && (migratetype == MIGRATE_ISOLATE || buddy_mt == MIGRATE_ISOLATE)
                {
                    break;
                }
            }
            let b = self.page(buddy_pfn).unwrap();
            self.lists.list_del(b); // del_page_from_free_area / del_page_from_free_list
            self.pages[b].buddy = false;
            let combined_pfn = buddy_pfn & pfn;
            pfn = combined_pfn;
            order += 1;
        }
        // done_merging: set_page_order
        let p = self.page(pfn).unwrap();
        self.pages[p].buddy = true;
        self.pages[p].order = order;
        match self.kv {
            Kv::V52 => {
                // if ((order < MAX_ORDER-2) && pfn_valid_within(buddy_pfn) && !is_shuffle_order(order))
                if order < K_MAX_ORDER - 2 && !self.is_shuffle_order(order) {
                    let combined_pfn = buddy_pfn & pfn;
                    let higher_buddy = combined_pfn ^ (1 << (order + 1));
                    if self.page_is_buddy(higher_buddy, order + 1) {
                        self.add_to_free_list_tail(p, order, migratetype);
                        return;
                    }
                }
                if self.is_shuffle_order(order) {
                    // add_to_free_area_random: if (rand & 1) add_to_free_area() else ..._tail()
                    if self.coin() {
                        self.add_to_free_list(p, order, migratetype);
                    } else {
                        self.add_to_free_list_tail(p, order, migratetype);
                    }
                } else {
                    self.add_to_free_list(p, order, migratetype);
                }
            }
            Kv::V57 | Kv::V510 => {
                let to_tail = if self.kv == Kv::V510 && to_tail_fpi {
                    true
                } else if self.is_shuffle_order(order) {
                    self.coin() // shuffle_pick_tail: ret = rand & 1
                } else {
                    self.buddy_merge_likely(pfn, buddy_pfn, order)
                };
                if to_tail {
                    self.add_to_free_list_tail(p, order, migratetype);
                } else {
                    self.add_to_free_list(p, order, migratetype);
                }
            }
        }
    }

    /// `__free_pages_core()`: 5.2 / 5.7 through `__free_pages()` (order 0 via the boot
    /// pageset, high 0 / batch 1, which hands the page straight to `__free_one_page`), 5.10
    /// `__free_pages_ok(page, order, FPI_TO_TAIL)`; the migratetype is the pageblock's.
    fn __free_pages_core(&mut self, pfn: u64, order: u32) {
        let mt = self.get_pfnblock_migratetype(pfn);
        self.__free_one_page(pfn, order, mt, true);
    }

    /// `mm/memblock.c: __free_pages_memory()`.
    fn __free_pages_memory(&mut self, mut start: u64, end: u64) {
        while start < end {
            let mut order = if start == 0 {
                K_MAX_ORDER - 1
            } else {
                (K_MAX_ORDER - 1).min(start.trailing_zeros())
            };
            while start + (1 << order) > end {
                order -= 1;
            }
            self.__free_pages_core(start, order);
            start += 1 << order;
        }
    }

    /// `move_freepages()` over one pageblock: `move_to_free_area` / `move_to_free_list` are
    /// `list_move` before 5.10 and `list_move_tail` since.
    fn move_freepages_block(&mut self, pfn: u64, mt: usize) {
        let start = pfn & !((1 << PAGEBLOCK_ORDER) - 1);
        let end = start + (1 << PAGEBLOCK_ORDER) - 1;
        let mut p = start.max(self.start);
        if self.page(end).is_none() {
            return;
        }
        while p <= end {
            let i = self.page(p).unwrap();
            if !self.pages[i].buddy {
                p += 1;
                continue;
            }
            let order = self.pages[i].order;
            let h = self.head(order, mt);
            if self.kv == Kv::V510 {
                self.lists.list_move_tail(i, h);
            } else {
                self.lists.list_move(i, h);
            }
            p += 1 << order;
        }
    }

    /// `shuffle_valid_page()`: in the zone, present, PageBuddy, exactly `order`.
    fn shuffle_valid_page(&self, pfn: u64, order: u32) -> Option<usize> {
        let i = self.page(pfn)?;
        let pg = &self.pages[i];
        (pg.present && pg.buddy && pg.order == order).then_some(i)
    }

    /// `__shuffle_zone()`.
    fn shuffle_zone(&mut self) {
        let order = SHUFFLE_ORDER;
        let order_pages = 1u64 << order;
        let start_pfn = (self.start + order_pages - 1) & !(order_pages - 1); // ALIGN
        let end_pfn = self.start + self.spanned;
        let mut i = start_pfn;
        while i < end_pfn {
            if let Some(page_i) = self.shuffle_valid_page(i, order) {
                let mut found = None;
                for _ in 0..SHUFFLE_RETRY {
                    let r = self.words.next();
                    let j = self.start + ((r % self.spanned) & !(order_pages - 1)); // ALIGN_DOWN
                    if let Some(page_j) = self.shuffle_valid_page(j, order)
                        && page_j != page_i
                    {
                        found = Some((j, page_j));
                        break;
                    }
                }
                if let Some((j, page_j)) = found {
                    let migratetype = self.get_pfnblock_migratetype(i);
                    if self.get_pfnblock_migratetype(j) == migratetype {
                        self.lists.list_swap(page_i, page_j);
                    }
                }
            }
            i += order_pages;
        }
    }

    /// Boot: `memmap_init_zone()`, the pageblock runs, `memblock_free_all()` over the present
    /// ranges, `shuffle_free_memory()`.
    fn boot(
        kv: Kv,
        start: u64,
        spanned: u64,
        holes: &[(u64, u64)],
        runs: &[(u64, u64, usize)],
        seed: u64,
    ) -> KZone {
        let nr_lists = (K_MAX_ORDER as usize) * NR_MT;
        let n = spanned as usize + nr_lists;
        let mut z = KZone {
            kv,
            start,
            spanned,
            pages: (0..spanned)
                .map(|_| Page {
                    present: true,
                    buddy: false,
                    order: 0,
                })
                .collect(),
            pb_mt: vec![
                MIGRATE_UNMOVABLE;
                (((start + spanned - 1) >> 9) - (start >> 9) + 1) as usize
            ],
            lists: Lists {
                next: (0..n).collect(),
                prev: (0..n).collect(),
            },
            words: Words {
                state: seed,
                drawn: 0,
            },
            rand: 0,
            rand_bits: 0,
        };
        for &(s, e) in holes {
            for pfn in s..e {
                let i = z.page(pfn).unwrap();
                z.pages[i].present = false;
            }
        }
        // memmap_init_zone: if (!(pfn & (pageblock_nr_pages - 1))) set MOVABLE
        for pfn in start..start + spanned {
            if pfn & ((1 << PAGEBLOCK_ORDER) - 1) == 0 {
                z.set_pageblock_migratetype(pfn, MIGRATE_MOVABLE);
            }
        }
        for &(s, e, mt) in runs {
            let mut pfn = s & !((1 << PAGEBLOCK_ORDER) - 1);
            while pfn < e {
                z.set_pageblock_migratetype(pfn.max(start), mt);
                pfn += 1 << PAGEBLOCK_ORDER;
            }
        }
        z.free_present(start, start + spanned);
        z.shuffle_zone();
        z
    }

    fn free_present(&mut self, s: u64, e: u64) {
        let mut pfn = s;
        while pfn < e {
            if !self.pages[self.page(pfn).unwrap()].present {
                pfn += 1;
                continue;
            }
            let mut end = pfn;
            while end < e && self.pages[self.page(end).unwrap()].present {
                end += 1;
            }
            self.__free_pages_memory(pfn, end);
            pfn = end;
        }
    }

    /// `online_pages()` of a hole `s .. e` (aligned multiples of 1024 pages).
    fn online_pages(&mut self, s: u64, e: u64) {
        assert!(s.is_multiple_of(1024) && e.is_multiple_of(1024));
        for pfn in s..e {
            let i = self.page(pfn).unwrap();
            self.pages[i].present = true;
        }
        let mt = if self.kv == Kv::V510 {
            MIGRATE_ISOLATE
        } else {
            MIGRATE_MOVABLE
        };
        // memmap_init_zone(MEMMAP_HOTPLUG) / move_pfn_range_to_zone(.., MIGRATE_ISOLATE)
        let mut pfn = s;
        while pfn < e {
            self.set_pageblock_migratetype(pfn, mt);
            pfn += 1 << PAGEBLOCK_ORDER;
        }
        // online_pages_range: __free_pages_core over aligned order-10 chunks
        let mut pfn = s;
        while pfn < e {
            self.__free_pages_core(pfn, K_MAX_ORDER - 1);
            pfn += 1 << (K_MAX_ORDER - 1);
        }
        if self.kv == Kv::V510 {
            // undo_isolate_page_range -> unset_migratetype_isolate: move_freepages_block to
            // MOVABLE (order-10 blocks: order < MAX_ORDER - 1 fails, no __isolate_free_page),
            // then set_pageblock_migratetype.
            let mut pfn = s;
            while pfn < e {
                self.move_freepages_block(pfn, MIGRATE_MOVABLE);
                self.set_pageblock_migratetype(pfn, MIGRATE_MOVABLE);
                pfn += 1 << PAGEBLOCK_ORDER;
            }
        }
        self.shuffle_zone();
    }

    fn dump(&self, out: &mut String) {
        for order in 0..K_MAX_ORDER {
            for mt in [
                MIGRATE_UNMOVABLE,
                MIGRATE_MOVABLE,
                MIGRATE_RECLAIMABLE,
                MIGRATE_ISOLATE,
            ] {
                let h = self.head(order, mt);
                let mut i = self.lists.next[h];
                if i == h {
                    continue;
                }
                write!(out, "o{order} m{mt}:").unwrap();
                while i != h {
                    write!(out, " {:x}", self.start + i as u64).unwrap();
                    i = self.lists.next[i];
                }
                out.push('\n');
            }
        }
        writeln!(out, "words {}", self.words.drawn).unwrap();
    }
}

// ---------------------------------------------------------------- the crate under test

/// SplitMix64 that counts the words the zone draws.
struct Counted(common::SplitMix64, Rc<Cell<u64>>);

impl TryRng for Counted {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.try_next_u64()? >> 32) as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.1.set(self.1.get() + 1);
        self.0.try_next_u64()
    }
    fn try_fill_bytes(&mut self, _dst: &mut [u8]) -> Result<(), Infallible> {
        unimplemented!()
    }
}

fn dump_crate(z: &Zone<Counted>, drawn: u64, out: &mut String) {
    for order in 0..=10u8 {
        for mt in MigrateType::ALL {
            let l = z.free_list(order, mt);
            if l.is_empty() {
                continue;
            }
            write!(out, "o{order} m{}:", mt as u8).unwrap();
            for p in l {
                write!(out, " {p:x}").unwrap();
            }
            out.push('\n');
        }
    }
    writeln!(out, "words {drawn}").unwrap();
}

struct Scenario {
    start: u64,
    spanned: u64,
    holes: Vec<(u64, u64)>,
    runs: Vec<(u64, u64, MigrateType)>,
    /// Holes brought online afterwards, in this order (aligned multiples of 1024).
    hotplug: Vec<(u64, u64)>,
}

fn scenarios() -> Vec<Scenario> {
    let b = 0x40000;
    vec![
        // Holes, a run of UNMOVABLE pageblocks that starts and ends mid order-10 block.
        Scenario {
            start: b,
            spanned: 32 * 1024,
            holes: vec![
                (b + 3 * 1024, b + 4 * 1024),
                (b + 10 * 1024 + 100, b + 10 * 1024 + 200),
                (b + 20 * 1024, b + 22 * 1024),
            ],
            runs: vec![(
                b + 5 * 1024 + 512,
                b + 9 * 1024 + 512,
                MigrateType::Unmovable,
            )],
            hotplug: vec![(b + 20 * 1024, b + 22 * 1024), (b + 3 * 1024, b + 4 * 1024)],
        },
        // UNMOVABLE and RECLAIMABLE runs, a hole inside the UNMOVABLE run, a zone end that is
        // not order-10 aligned.
        Scenario {
            start: 0,
            spanned: 24 * 1024 + 700,
            holes: vec![(2 * 1024, 3 * 1024), (7 * 1024 + 1, 7 * 1024 + 3)],
            runs: vec![
                (1024, 6 * 1024, MigrateType::Unmovable),
                (12 * 1024, 15 * 1024, MigrateType::Reclaimable),
            ],
            hotplug: vec![(2 * 1024, 3 * 1024)],
        },
        // Pageblock-sized holes in every other order-10 block, two short UNMOVABLE runs.
        Scenario {
            start: 0x10_0000,
            spanned: 16 * 1024,
            holes: (0..8)
                .map(|k| (0x10_0000 + k * 2048, 0x10_0000 + k * 2048 + 512))
                .collect(),
            runs: vec![
                (0x10_0000 + 4096, 0x10_0000 + 6144, MigrateType::Unmovable),
                (0x10_0000 + 12288, 0x10_0000 + 12800, MigrateType::Unmovable),
            ],
            hotplug: vec![],
        },
        // A zone start that is pageblock- but not order-10-aligned (the kernel's shuffle then
        // never finds a partner, yet draws its words), a RECLAIMABLE run, a hole onlined.
        Scenario {
            start: 0x2_0000 + 1536,
            spanned: 12 * 1024 + 512,
            holes: vec![(0x2_0000 + 4096, 0x2_0000 + 6144)],
            runs: vec![(0x2_0000 + 8192, 0x2_0000 + 9216, MigrateType::Reclaimable)],
            hotplug: vec![(0x2_0000 + 4096, 0x2_0000 + 6144)],
        },
        // A large hole brought online in two steps; UNMOVABLE run at the zone start.
        Scenario {
            start: 0x8_0000,
            spanned: 40 * 1024,
            holes: vec![(0x8_0000 + 16 * 1024, 0x8_0000 + 32 * 1024)],
            runs: vec![(0x8_0000, 0x8_0000 + 3 * 1024, MigrateType::Unmovable)],
            hotplug: vec![
                (0x8_0000 + 24 * 1024, 0x8_0000 + 32 * 1024),
                (0x8_0000 + 16 * 1024, 0x8_0000 + 24 * 1024),
            ],
        },
    ]
}

fn kv_of(k: KernelVersion) -> Kv {
    match k {
        KernelVersion::V5_2 => Kv::V52,
        KernelVersion::V5_7 => Kv::V57,
        KernelVersion::V5_10 => Kv::V510,
    }
}

fn compare(k: KernelVersion, id: usize, sc: &Scenario, seed: u64) -> Vec<String> {
    let mut failures = Vec::new();
    let runs: Vec<(u64, u64, usize)> = sc
        .runs
        .iter()
        .map(|&(s, e, m)| (s, e, m as usize))
        .collect();
    let mut r = KZone::boot(kv_of(k), sc.start, sc.spanned, &sc.holes, &runs, seed);

    let mut cfg = ZoneConfig::with_span(sc.start, sc.spanned)
        .unwrap()
        .kernel(k)
        .pcp(PcpLists::Off);
    for &(s, e) in &sc.holes {
        cfg = cfg.hole(s, e).unwrap();
    }
    for &(s, e, m) in &sc.runs {
        cfg = cfg.migratetype(s, e, m).unwrap();
    }
    let drawn = Rc::new(Cell::new(0));
    let mut z = Zone::new(
        &cfg,
        ShufflePolicy::KERNEL,
        Counted(common::SplitMix64(seed), drawn.clone()),
    )
    .unwrap();

    let mut check = |stage: &str, r: &KZone, z: &Zone<Counted>| {
        let (mut want, mut got) = (String::new(), String::new());
        r.dump(&mut want);
        dump_crate(z, drawn.get(), &mut got);
        z.check_consistency().unwrap();
        if want != got {
            let first = want
                .lines()
                .zip(got.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("\n  kernel: {a}\n  crate:  {b}"))
                .unwrap_or_else(|| "(line count differs)".into());
            failures.push(format!(
                "{} scenario {id} seed {seed} {stage}:{first}",
                k.name()
            ));
        }
    };
    check("boot", &r, &z);
    for (n, &(s, e)) in sc.hotplug.iter().enumerate() {
        r.online_pages(s, e);
        z.online_pages(s, e).unwrap();
        check(&format!("hotplug {n}"), &r, &z);
    }
    failures
}

#[test]
fn boot_and_hotplug_match_the_kernel_text_per_version() {
    let mut failures = Vec::new();
    for k in KernelVersion::ALL {
        for (id, sc) in scenarios().iter().enumerate() {
            for seed in [1, 2, 3, 0xdead_beef] {
                failures.extend(compare(k, id, sc, seed));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The reference is not vacuous: its lists do depend on the version and on the words.
#[test]
fn reference_differs_by_version_and_seed() {
    let sc = &scenarios()[0];
    let runs: Vec<(u64, u64, usize)> = sc
        .runs
        .iter()
        .map(|&(s, e, m)| (s, e, m as usize))
        .collect();
    let dump = |kv, seed| {
        let z = KZone::boot(kv, sc.start, sc.spanned, &sc.holes, &runs, seed);
        let mut s = String::new();
        z.dump(&mut s);
        s
    };
    assert_ne!(dump(Kv::V52, 1), dump(Kv::V57, 1));
    assert_ne!(dump(Kv::V57, 1), dump(Kv::V510, 1));
    assert_ne!(dump(Kv::V52, 1), dump(Kv::V52, 2));
    // An UNMOVABLE order-10 list exists and has more than one block to order.
    let d = dump(Kv::V52, 1);
    let l = d.lines().find(|l| l.starts_with("o10 m0:")).unwrap();
    assert!(l.split_whitespace().count() > 3, "{l}");
}
