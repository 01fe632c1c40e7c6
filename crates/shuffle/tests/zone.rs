//! Buddy-allocator behaviour the simulation depends on, worked out by hand.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use common::{Replay, SplitMix64};
use scalrand_shuffle::{
    KernelVersion, MigrateType::Movable, PcpLists, PickTail, ShuffleMode, ShufflePolicy, Zone,
    ZoneConfig,
};

/// Before 5.10 boot frees ascending at the head (`__free_one_page`, order 10: no merge-likely
/// tail), so the list is descending; since 5.10 (`FPI_TO_TAIL`, 7fef431be9c9) ascending.
#[test]
fn boot_frees_ascending_so_the_list_is_descending_before_5_10() {
    for (k, want) in [
        (KernelVersion::V5_2, vec![3072, 2048, 1024, 0]),
        (KernelVersion::V5_7, vec![3072, 2048, 1024, 0]),
        (KernelVersion::V5_10, vec![0, 1024, 2048, 3072]),
    ] {
        let z = Zone::new(
            &ZoneConfig::new(0, 4096).unwrap().kernel(k),
            ShufflePolicy::OFF,
            SplitMix64(1),
        )
        .unwrap();
        assert_eq!(z.free_list(10, Movable), want, "{k:?}");
        assert_eq!(z.nr_free_pages(), 4096);
    }
}

#[test]
fn expand_keeps_the_low_half() {
    let mut z = Zone::new(
        &ZoneConfig::new(0, 1024).unwrap().pcp(PcpLists::Off),
        ShufflePolicy::OFF,
        SplitMix64(1),
    )
    .unwrap();
    let got: Vec<u64> = (0..6)
        .map(|_| z.alloc_pages(0, Movable).unwrap().unwrap())
        .collect();
    assert_eq!(got, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(z.free_list(9, Movable), vec![512]);
    assert_eq!(z.free_list(0, Movable), Vec::<u64>::new());
    assert_eq!(z.free_list(1, Movable), vec![6]);
    // Freeing everything merges back to one order-10 block.
    for p in got {
        z.free_pages(p, 0).unwrap();
    }
    assert_eq!(z.free_list(10, Movable), vec![0]);
    z.check_consistency().unwrap();
}

/// `buddy_merge_likely`: a freed block whose merged block's buddy is free goes to the tail.
#[test]
fn merge_likely_goes_to_the_tail() {
    let mut z = Zone::new(
        &ZoneConfig::new(0, 1024).unwrap().pcp(PcpLists::Off),
        ShufflePolicy::OFF,
        SplitMix64(1),
    )
    .unwrap();
    // Six order-0 allocations take pages 0..6 and leave 6..8 free at order 1.
    let got: Vec<u64> = (0..6)
        .map(|_| z.alloc_pages(0, Movable).unwrap().unwrap())
        .collect();
    assert_eq!(got, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(z.free_list(1, Movable), vec![6]);
    // 0: buddy 1 allocated, order-1 buddy 2..4 allocated: head.
    z.free_pages(0, 0).unwrap();
    // 4: buddy 5 allocated, order-1 buddy 6..8 free: tail.
    z.free_pages(4, 0).unwrap();
    // 2: buddy 3 allocated, order-1 buddy 0..2 not free at order 1: head.
    z.free_pages(2, 0).unwrap();
    assert_eq!(z.free_list(0, Movable), vec![2, 0, 4]);
    z.check_consistency().unwrap();
}

#[test]
fn pick_tail_uses_the_low_bit_first_then_refills() {
    let mut rng = Replay(vec![0b1011, 1u64 << 63, 0], 0);
    let mut t = PickTail::new();
    let first: Vec<bool> = (0..4).map(|_| t.coin(&mut rng)).collect();
    assert_eq!(first, vec![true, true, false, true]);
    for _ in 4..64 {
        assert!(!t.coin(&mut rng));
    }
    assert_eq!(rng.1, 1, "one word per 64 coins");
    for _ in 0..63 {
        assert!(!t.coin(&mut rng));
    }
    assert!(t.coin(&mut rng));
    assert_eq!(rng.1, 2);
}

#[test]
fn pick_tail_decides_order_10_frees_when_shuffling() {
    // Boot a 4-block zone with shuffling on (kernel, pick_tail) and a replayed stream: the
    // four boot frees draw one word whose low bits 1,0,1,1 put blocks 0,2,3 at the tail;
    // then the shuffle draws for i = 0, 1024, 2048, 3072.
    let words = vec![0b1101, 1024, 0, 0, 0];
    // 5.7 - 5.9: shuffle_pick_tail, a set bit means tail.
    let cfg = ZoneConfig::new(0, 4096)
        .unwrap()
        .kernel(KernelVersion::V5_7);
    let z = Zone::new(&cfg, ShufflePolicy::KERNEL, Replay(words, 0));
    // i = 0: j = 1024 swap; i = 1024: j = 0 swap back; i = 2048: j = 0 swap; i = 3072: j = 0.
    // Boot list: free 0 tail [0]; 1024 head [1024,0]; 2048 tail [1024,0,2048]; 3072 tail
    // [1024,0,2048,3072].
    let z = z.unwrap();
    // After the shuffle: swap(0,1024) -> [0,1024,2048,3072]; swap(1024,0) -> [1024,0,2048,3072];
    // swap(2048,0) -> [1024,2048,0,3072]; swap(3072,0) -> [1024,2048,3072,0].
    assert_eq!(z.free_list(10, Movable), vec![1024, 2048, 3072, 0]);
}

#[test]
fn hotplug_frees_and_reshuffles() {
    let cfg = ZoneConfig::new(0, 8192)
        .unwrap()
        .kernel(KernelVersion::V5_2)
        .hole(4096, 8192)
        .unwrap();
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, SplitMix64(1)).unwrap();
    assert_eq!(z.present_pages(), 4096);
    assert_eq!(z.online_pages(4096, 8192).unwrap(), None);
    assert_eq!(
        z.free_list(10, Movable),
        vec![7168, 6144, 5120, 4096, 3072, 2048, 1024, 0]
    );
    let cfg = ZoneConfig::new(0, 8192).unwrap().hole(4096, 8192).unwrap();
    let mut z = Zone::new(
        &cfg,
        ShufflePolicy {
            pick_tail: false,
            ..ShufflePolicy::KERNEL
        },
        SplitMix64(1),
    )
    .unwrap();
    let st = z.online_pages(4096, 8192).unwrap().unwrap();
    assert_eq!(st.candidates, 8);
    assert!(st.swaps > 0);
    z.check_consistency().unwrap();
    assert_eq!(z.nr_free_pages(), 8192);
}

#[test]
fn migratetype_mismatch_is_skipped_without_retry() {
    // Two blocks of different migratetypes: every found partner mismatches; one word each.
    let cfg = ZoneConfig::new(0, 2048)
        .unwrap()
        .migratetype(0, 1024, scalrand_shuffle::MigrateType::Unmovable)
        .unwrap();
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, Replay(vec![1024, 0], 0)).unwrap();
    let st = z.shuffle_zone(10, ShuffleMode::Kernel).unwrap();
    assert_eq!(
        (st.swaps, st.migratetype_mismatches, st.random_words),
        (0, 2, 2)
    );
}

#[test]
fn zone_at_the_top_of_the_pfn_space() {
    let start = u64::MAX - 3000;
    let cfg = ZoneConfig::with_span(start, 3000).unwrap();
    let mut z = Zone::new(&cfg, ShufflePolicy::KERNEL, SplitMix64(9)).unwrap();
    assert_eq!(z.nr_free_pages(), 3000);
    let p = z.alloc_pages(3, Movable).unwrap().unwrap();
    z.free_pages(p, 3).unwrap();
    for order in 0..=10 {
        z.shuffle_zone(order, ShuffleMode::Kernel).unwrap();
        z.shuffle_zone(order, ShuffleMode::FisherYates).unwrap();
    }
    z.check_consistency().unwrap();
    assert_eq!(z.free_page_set().len(), 3000);
}
