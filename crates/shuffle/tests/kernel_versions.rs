//! Each kernel version's rules on small zones with a fixed random stream, against lists
//! worked out by hand from the kernel functions:
//!
//! * v5.2 `mm/shuffle.c: add_to_free_area_random()`: `if (rand & 1) add_to_free_area()` —
//!   a set bit puts the block at the head (5.2 – 5.6);
//! * v5.7 `mm/page_alloc.c: __free_one_page()` with `to_tail = shuffle_pick_tail()`, which
//!   returns `rand & 1` — a set bit means tail (5.7 – 5.9);
//! * v5.10 `__free_pages_core()` passes `FPI_TO_TAIL` (commit 7fef431be9c9), checked first in
//!   `__free_one_page()`: boot and hotplug frees go to the tail and draw no coin;
//! * `__free_pages_ok()` / `free_one_page()` file a block under
//!   `get_pfnblock_migratetype(page, pfn)` of the freed page, and `__free_one_page()` adds the
//!   merged block to that migratetype's list (v5.2 – v5.10);
//! * per-CPU lists, v5.10 `free_unref_page_commit()`, `free_pcppages_bulk()`,
//!   `rmqueue_bulk()`, `__rmqueue_pcplist()`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use common::Replay;
use scalrand_shuffle::{
    Error, KernelVersion, MigrateType, PcpLists, ShufflePolicy, Zone, ZoneConfig,
};

/// Shuffle words that make every `__shuffle_zone` step draw its own block ten times (no swap):
/// for `i = b << 10`, `j = r % spanned` aligned down is `i` itself.
fn no_op_shuffle(blocks: u64) -> Vec<u64> {
    (0..blocks)
        .flat_map(|b| std::iter::repeat_n(b << 10, 10))
        .collect()
}

fn boot(k: KernelVersion, words: Vec<u64>) -> Zone<Replay> {
    let cfg = ZoneConfig::new(0, 4096)
        .unwrap()
        .kernel(k)
        .pcp(PcpLists::Off);
    Zone::new(&cfg, ShufflePolicy::KERNEL, Replay(words, 0)).unwrap()
}

/// Four order-10 blocks freed at boot in ascending order, one coin word `0b0110`: the coins
/// for 0, 1024, 2048, 3072 are 0, 1, 1, 0. The boot shuffle then draws its own blocks (no
/// swaps).
#[test]
fn boot_coin_direction_per_version() {
    let mut words = vec![0b0110];
    words.extend(no_op_shuffle(4));
    // 5.2: clear -> tail [0]; set -> head [1024 0]; set -> head [2048 1024 0];
    // clear -> tail [2048 1024 0 3072].
    let z = boot(KernelVersion::V5_2, words.clone());
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        vec![2048, 1024, 0, 3072]
    );
    // 5.7: clear -> head [0]; set -> tail [0 1024]; set -> tail [0 1024 2048];
    // clear -> head [3072 0 1024 2048].
    let z = boot(KernelVersion::V5_7, words.clone());
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        vec![3072, 0, 1024, 2048]
    );
    // 5.10: FPI_TO_TAIL, no coin: [0 1024 2048 3072], and the coin word goes to the shuffle
    // instead. i = 0: 6 -> j = 0, then nine zeros -> j = 0: all ten tries fail.
    // i = 1024: 0 -> j = 0: swap -> [1024 0 2048 3072].
    // i = 2048: 1024 -> j = 1024: swap -> [2048 0 1024 3072].
    // i = 3072: 1024 -> j = 1024: swap -> [2048 0 3072 1024].
    words.extend(std::iter::repeat_n(0, 16));
    let z = boot(KernelVersion::V5_10, words);
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        vec![2048, 0, 3072, 1024]
    );
}

/// Hotplug: `online_pages()` frees the range the way boot does, then `shuffle_zone()`.
#[test]
fn hotplug_placement_per_version() {
    let cfg = |k| {
        ZoneConfig::new(0, 8192)
            .unwrap()
            .hole(4096, 8192)
            .unwrap()
            .kernel(k)
            .pcp(PcpLists::Off)
    };
    // One coin word 0b0101_0000: the batch is static state (`rand`, `rand_bits`), so the
    // boot frees use bits 0..4 and the online frees bits 4..8 of the same word.
    // 5.7: boot coins 0, 0, 0, 0 -> all four at the head: [3072 2048 1024 0]; no-op boot
    // shuffle; online coins for 4096, 5120, 6144, 7168 = 1, 0, 1, 0: tail, head, tail, head
    // -> [7168 5120 3072 2048 1024 0 4096 6144]; no-op shuffle over eight blocks.
    let mut words = vec![0b0101_0000];
    words.extend(no_op_shuffle(4));
    words.extend(no_op_shuffle(8));
    let mut z = Zone::new(
        &cfg(KernelVersion::V5_7),
        ShufflePolicy::KERNEL,
        Replay(words.clone(), 0),
    )
    .unwrap();
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        vec![3072, 2048, 1024, 0]
    );
    z.online_pages(4096, 8192).unwrap();
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        vec![7168, 5120, 3072, 2048, 1024, 0, 4096, 6144]
    );
    // 5.2, same stream: boot coins 0 -> all at the tail [0 1024 2048 3072]; online coins
    // 1, 0, 1, 0: head, tail, head, tail -> [6144 4096 0 1024 2048 3072 5120 7168].
    let mut z = Zone::new(
        &cfg(KernelVersion::V5_2),
        ShufflePolicy::KERNEL,
        Replay(words, 0),
    )
    .unwrap();
    z.online_pages(4096, 8192).unwrap();
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        vec![6144, 4096, 0, 1024, 2048, 3072, 5120, 7168]
    );
    // 5.10: no coins at boot or hotplug; tail adds give ascending lists.
    let mut words = no_op_shuffle(4);
    words.extend(no_op_shuffle(8));
    let mut z = Zone::new(
        &cfg(KernelVersion::V5_10),
        ShufflePolicy::KERNEL,
        Replay(words, 0),
    )
    .unwrap();
    z.online_pages(4096, 8192).unwrap();
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        (0..8).map(|b| b * 1024).collect::<Vec<u64>>()
    );
}

/// A runtime free at order 10 draws a coin in every version (5.10 included: `FPI_NONE`).
#[test]
fn runtime_order_10_free_draws_the_coin_in_5_10() {
    // Boot: no-op shuffle; then allocate block 0 (head of [0 1024 2048 3072]) and free it
    // with coin word 0b1 (set: tail in 5.10) -> [1024 2048 3072 0].
    let mut words = no_op_shuffle(4);
    words.push(1);
    let mut z = boot(KernelVersion::V5_10, words);
    let p = z.alloc_pages(10, MigrateType::Movable).unwrap().unwrap();
    assert_eq!(p, 0);
    z.free_pages(0, 10).unwrap();
    assert_eq!(
        z.free_list(10, MigrateType::Movable),
        vec![1024, 2048, 3072, 0]
    );
}

/// `KernelVersion::parse` maps every kernel to its rule set; 5.4 follows 5.2's rule.
#[test]
fn parse_versions() {
    for (s, k) in [
        ("5.2", KernelVersion::V5_2),
        ("5.4", KernelVersion::V5_2),
        ("5.6.19", KernelVersion::V5_2),
        ("5.7", KernelVersion::V5_7),
        ("5.9", KernelVersion::V5_7),
        ("5.10", KernelVersion::V5_10),
        ("5.19", KernelVersion::V5_10),
        ("6.0", KernelVersion::V5_10),
        ("6.8", KernelVersion::V5_10),
        ("6.19.3", KernelVersion::V5_10),
    ] {
        assert_eq!(KernelVersion::parse(s), Ok(k), "{s}");
    }
    // Not a release: refused rather than read as the 5.10 rules.
    for s in [
        "5.1", "4.19", "5", "x.y", "", "99.0", "5.20", "6.20", "-1.0",
    ] {
        assert_eq!(KernelVersion::parse(s), Err(Error::BadKernelVersion), "{s}");
    }
}

/// Pageblock 1 (PFNs 512..1024) UNMOVABLE, the rest MOVABLE; no per-CPU lists, 5.10 rules.
fn two_types() -> Zone<Replay> {
    let cfg = ZoneConfig::new(0, 2048)
        .unwrap()
        .migratetype(512, 1024, MigrateType::Unmovable)
        .unwrap()
        .pcp(PcpLists::Off);
    Zone::new(&cfg, ShufflePolicy::OFF, Replay(vec![], 0)).unwrap()
}

/// The merged block joins the list of the freed page's migratetype, not that of the pageblock
/// holding the merged block's first page.
#[test]
fn merged_block_joins_the_freed_pages_migratetype() {
    let mut z = two_types();
    // Boot: pageblock 1 is UNMOVABLE before the frees, but the order-10 chunk at PFN 0 is
    // freed under PFN 0's pageblock type: [0 1024] on the MOVABLE order-10 list.
    assert_eq!(z.free_list(10, MigrateType::Movable), vec![0, 1024]);
    // Two movable order-9 allocations: 0 (512 goes to the movable order-9 list), then 512.
    assert_eq!(z.alloc_pages(9, MigrateType::Movable).unwrap(), Some(0));
    assert_eq!(z.free_list(9, MigrateType::Movable), vec![512]);
    assert_eq!(z.alloc_pages(9, MigrateType::Movable).unwrap(), Some(512));
    // Free 0 (MOVABLE pageblock): buddy 512 allocated -> order-9 MOVABLE list.
    z.free_pages(0, 9).unwrap();
    assert_eq!(z.free_list(9, MigrateType::Movable), vec![0]);
    // Free 512 (UNMOVABLE pageblock): merges with 0 into an order-10 block headed by PFN 0,
    // whose pageblock is MOVABLE, but the block joins the UNMOVABLE list.
    z.free_pages(512, 9).unwrap();
    assert_eq!(z.free_list(10, MigrateType::Unmovable), vec![0]);
    assert_eq!(z.free_list(10, MigrateType::Movable), vec![1024]);
    z.check_consistency().unwrap();
}

#[test]
fn unmerged_free_in_an_unmovable_pageblock_goes_to_the_unmovable_list() {
    let mut z = two_types();
    assert_eq!(z.alloc_pages(9, MigrateType::Movable).unwrap(), Some(0));
    assert_eq!(z.alloc_pages(9, MigrateType::Movable).unwrap(), Some(512));
    // 512 first: buddy 0 allocated, no merge; its pageblock is UNMOVABLE.
    z.free_pages(512, 9).unwrap();
    assert_eq!(z.free_list(9, MigrateType::Unmovable), vec![512]);
    assert_eq!(z.free_list(9, MigrateType::Movable), Vec::<u64>::new());
    // Then 0 (MOVABLE): merges with 512 (taken off the UNMOVABLE list) -> MOVABLE order 10.
    z.free_pages(0, 9).unwrap();
    assert_eq!(z.free_list(10, MigrateType::Movable), vec![0, 1024]);
    assert_eq!(z.free_list(9, MigrateType::Unmovable), Vec::<u64>::new());
    z.check_consistency().unwrap();
}

/// Per-CPU lists with high 4, batch 2 on a one-block zone, worked through by hand.
#[test]
fn per_cpu_lists_are_lifo_and_spill_the_oldest() {
    let cfg = ZoneConfig::new(0, 1024).unwrap().pcp(PcpLists::Custom {
        cpus: 2,
        high: 4,
        batch: 2,
    });
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, Replay(vec![], 0)).unwrap();
    let mv = MigrateType::Movable;
    // rmqueue_bulk(2) takes 0 then 1 (each appended at the tail): [0 1]; head 0 is handed out.
    assert_eq!(z.alloc_pages_on(0, 0, mv).unwrap(), Some(0));
    assert_eq!(z.pcp_list(0, mv), vec![1]);
    assert_eq!(z.alloc_pages_on(0, 0, mv).unwrap(), Some(1));
    // Empty again: refill takes 2 and 3 (order-1 block at 2 split).
    assert_eq!(z.alloc_pages_on(0, 0, mv).unwrap(), Some(2));
    assert_eq!(z.pcp_list(0, mv), vec![3]);
    // CPU 1 has its own lists: its refill takes 4 and 5.
    assert_eq!(z.alloc_pages_on(1, 0, mv).unwrap(), Some(4));
    assert_eq!(z.pcp_list(1, mv), vec![5]);
    // Frees go to the head of the freeing CPU's list.
    z.free_pages_on(0, 0, 0).unwrap();
    z.free_pages_on(0, 1, 0).unwrap();
    assert_eq!(z.pcp_list(0, mv), vec![1, 0, 3]);
    // LIFO: the last page freed is the next handed out.
    assert_eq!(z.alloc_pages_on(0, 0, mv).unwrap(), Some(1));
    z.free_pages_on(0, 1, 0).unwrap();
    // The fourth page reaches high: free_pcppages_bulk(2) takes from the tail: 3, then 0.
    z.free_pages_on(0, 2, 0).unwrap();
    assert_eq!(z.pcp_list(0, mv), vec![2, 1]);
    // 3: buddy 2 is on a per-CPU list (not PageBuddy), no merge; 0: buddy 1 likewise. Both at
    // the head (their order-1 buddies are not free): [0 3].
    assert_eq!(z.free_list(0, mv), vec![0, 3]);
    // A page on a per-CPU list cannot be freed again.
    assert_eq!(
        z.free_pages_on(0, 2, 0),
        Err(Error::NotAllocated { pfn: 2, order: 0 })
    );
    assert_eq!(z.nr_pcp_pages(), 3);
    z.check_consistency().unwrap();
    // Draining returns every page; freeing 4 makes the zone whole again.
    z.drain_pages();
    z.free_pages_on(1, 4, 0).unwrap();
    z.drain_pages();
    assert_eq!(z.free_list(10, mv), vec![0]);
    assert_eq!(z.nr_free_pages(), 1024);
    z.check_consistency().unwrap();
}

/// `zone_batchsize()` (v5.2 – v5.13): a 64 GiB zone gets batch 63 and high 378.
#[test]
fn kernel_pcp_sizes() {
    assert_eq!(scalrand_shuffle::kernel::zone_batchsize(16 << 20), 63);
    let cfg = ZoneConfig::new(0, 16 * 1024)
        .unwrap()
        .pcp(PcpLists::Kernel { cpus: 4 });
    let z = Zone::new(&cfg, ShufflePolicy::OFF, Replay(vec![], 0)).unwrap();
    // 16384 / 1024 = 16, / 4 = 4, rounddown_pow_of_two(4 + 2) - 1 = 3; high = 18.
    assert_eq!(z.pcp_sizes(), Some((4, 18, 3)));
}
