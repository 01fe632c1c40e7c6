//! Compaction in the server aging (`ServerAging::compact`, `ServerSpec::compact_every`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use std::collections::BTreeSet;

use common::SplitMix64;
use scalrand_shuffle::free_area::{MAX_ORDER, MigrateType, PAGEBLOCK_ORDER};
use scalrand_shuffle::pcp::PcpLists;
use scalrand_shuffle::server::{ServerAging, ServerSpec};
use scalrand_shuffle::{ShufflePolicy, Zone, ZoneConfig};

const ZONE_PAGES: u64 = 1 << 16;
const ROUNDS: u32 = 4;

/// A 256 MiB zone after `rounds` rounds of server aging: page cache, processes and their
/// kernel pages scattered over it.
fn aged(seed: u64, rounds: u32) -> (Zone<SplitMix64>, ServerAging, ServerSpec) {
    let spec = ServerSpec::for_zone(ZONE_PAGES);
    let zc = ZoneConfig::with_span(0, ZONE_PAGES)
        .unwrap()
        .pcp(PcpLists::Kernel { cpus: spec.cpus });
    let mut zone = Zone::new(&zc, ShufflePolicy::OFF, SplitMix64(seed)).unwrap();
    let mut srv = ServerAging::new();
    let mut wrng = SplitMix64(seed ^ 0x5555);
    for _ in 0..rounds {
        srv.round(&mut zone, &mut wrng, &spec).unwrap();
    }
    (zone, srv, spec)
}

/// Free pages below `limit` that sit in free blocks of pageblock order or more.
fn high_order_free_below(zone: &Zone<SplitMix64>, limit: u64) -> u64 {
    let mut n = 0;
    for order in PAGEBLOCK_ORDER..=MAX_ORDER {
        for mt in MigrateType::ALL {
            n += zone
                .free_list(order, mt)
                .iter()
                .filter(|&&p| p < limit)
                .count() as u64
                * (1 << order);
        }
    }
    n
}

fn in_use(zone: &Zone<SplitMix64>) -> u64 {
    zone.present_pages() - zone.nr_free_pages()
}

/// The zone's state as the tests compare it: free pages, the server's pages, its counters.
fn snapshot(zone: &Zone<SplitMix64>, srv: &ServerAging) -> (Vec<u64>, Vec<u64>, String) {
    (
        zone.free_page_set(),
        srv.movable_pages(),
        format!("{:?}", srv.stats()),
    )
}

/// On an aged zone compaction moves pages up and leaves more free memory in blocks of
/// pageblock order or more in the low half; it never breaks such a block; the pages in use
/// stay as many and the zone stays consistent.
#[test]
fn compaction_gathers_free_memory_low_in_the_zone() {
    for seed in 1..=4 {
        let (mut zone, mut srv, _) = aged(seed, ROUNDS);
        let half = ZONE_PAGES / 2;
        let before = high_order_free_below(&zone, half);
        // Fragmented: free pages scattered, most of them outside high-order blocks.
        assert!(zone.nr_free_pages() > 1000, "seed {seed}");
        assert!(
            high_order_free_below(&zone, ZONE_PAGES) < zone.nr_free_pages() / 2 + 512,
            "seed {seed}"
        );
        let used = in_use(&zone);
        let st = srv.compact(&mut zone).unwrap();
        let after = high_order_free_below(&zone, half);
        assert!(st.migrated > 0, "seed {seed}: {st:?}");
        assert!(after > before, "seed {seed}: {before} -> {after}, {st:?}");
        assert!(
            high_order_free_below(&zone, ZONE_PAGES) > before,
            "seed {seed}"
        );
        assert_eq!(in_use(&zone), used, "seed {seed}");
        assert_eq!(zone.nr_pcp_pages(), 0, "seed {seed}");
        zone.check_consistency().unwrap();
        assert_eq!(srv.stats().migrated, st.migrated);
        assert_eq!(srv.stats().compactions, 1);
    }
}

/// Every moved page's owner holds its new PFN: the pages that left the server's set are
/// exactly as many as were migrated, each new page was free before and is handed out now,
/// each lies above the page it replaced (checked on the sorted sets), and freeing the
/// server's pages through their owners afterwards (which fails on any page not handed out)
/// leaves the whole zone free.
#[test]
fn moved_pages_are_owned_at_their_new_pfn() {
    for seed in [1, 5] {
        let (mut zone, mut srv, _) = aged(seed, ROUNDS);
        let free_before: BTreeSet<u64> = zone.free_page_set().into_iter().collect();
        let old: BTreeSet<u64> = srv.movable_pages().into_iter().collect();
        let st = srv.compact(&mut zone).unwrap();
        let new: BTreeSet<u64> = srv.movable_pages().into_iter().collect();
        assert_eq!(
            new.len(),
            old.len(),
            "seed {seed}: a page was lost or doubled"
        );
        let gone: Vec<u64> = old.difference(&new).copied().collect();
        let came: Vec<u64> = new.difference(&old).copied().collect();
        assert_eq!(gone.len() as u64, st.migrated, "seed {seed}");
        assert_eq!(came.len() as u64, st.migrated, "seed {seed}");
        let free_after: BTreeSet<u64> = zone.free_page_set().into_iter().collect();
        for &p in &came {
            assert!(free_before.contains(&p), "seed {seed}: {p} was not free");
            assert!(!free_after.contains(&p), "seed {seed}: {p} is free");
        }
        for &p in &gone {
            assert!(free_after.contains(&p), "seed {seed}: {p} was not freed");
        }
        // The migration scanner works below the free scanner.
        assert!(gone.last() < came.first(), "seed {seed}");
        zone.check_consistency().unwrap();
        srv.release_all(&mut zone).unwrap();
        zone.drain_pages();
        assert_eq!(zone.nr_free_pages(), zone.present_pages(), "seed {seed}");
        zone.check_consistency().unwrap();
    }
}

/// `compact_every: None` (the default) and a period the run never reaches give the same
/// zone, pages and counters as each other; compacting every round changes them.
#[test]
fn compaction_off_changes_nothing() {
    let run = |every: Option<u32>| {
        let spec = ServerSpec {
            compact_every: every,
            ..ServerSpec::for_zone(ZONE_PAGES)
        };
        let zc = ZoneConfig::with_span(0, ZONE_PAGES)
            .unwrap()
            .pcp(PcpLists::Kernel { cpus: spec.cpus });
        let mut zone = Zone::new(&zc, ShufflePolicy::OFF, SplitMix64(9)).unwrap();
        let mut srv = ServerAging::new();
        let mut wrng = SplitMix64(10);
        for _ in 0..3 {
            srv.round(&mut zone, &mut wrng, &spec).unwrap();
        }
        (snapshot(&zone, &srv), srv.stats().compactions)
    };
    let (absent, n0) = run(ServerSpec::for_zone(ZONE_PAGES).compact_every);
    let (never, n1) = run(Some(1000));
    let (every, n2) = run(Some(1));
    assert_eq!((n0, n1, n2), (0, 0, 3));
    assert_eq!(absent, never);
    assert_ne!(absent.1, every.1);
    let (_, n) = run(Some(2));
    assert_eq!(n, 1);
}

#[test]
fn compact_every_zero_is_refused() {
    let spec = ServerSpec {
        compact_every: Some(0),
        ..ServerSpec::for_zone(ZONE_PAGES)
    };
    let (mut zone, mut srv, _) = aged(1, 0);
    assert!(matches!(
        srv.round(&mut zone, &mut SplitMix64(1), &spec),
        Err(scalrand_shuffle::Error::BadParameter(_))
    ));
}

/// An experiment config without the field runs exactly as before, and says nothing about
/// compaction when written out.
#[cfg(feature = "serde")]
#[test]
fn experiment_without_the_field_is_unchanged() {
    use scalrand_fastprng::Xoroshiro128PlusPlus;
    use scalrand_shuffle::experiment::run_experiment;
    use scalrand_shuffle::presets::preset;
    let mut cfg = preset("tiny").unwrap();
    cfg.server = Some(ServerSpec::for_zone(cfg.zone_pages));
    cfg.pcp = true;
    cfg.seeds = vec![1];
    assert_eq!(cfg.server.as_ref().unwrap().compact_every, None);
    let json = serde_json::to_string(&cfg).unwrap();
    assert!(!json.contains("compact"));
    let back: scalrand_shuffle::ExperimentConfig = serde_json::from_str(&json).unwrap();
    let a = run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut |_, _| {}).unwrap();
    let b = run_experiment::<Xoroshiro128PlusPlus>(&back, &mut |_, _| {}).unwrap();
    assert_eq!(a, b);
    let mut on = cfg.clone();
    on.server.as_mut().unwrap().compact_every = Some(1);
    let json_on = serde_json::to_string(&on).unwrap();
    assert!(json_on.contains("\"compact_every\":1"));
    let c = run_experiment::<Xoroshiro128PlusPlus>(&on, &mut |_, _| {}).unwrap();
    assert_ne!(a.page_ops, c.page_ops);
}
