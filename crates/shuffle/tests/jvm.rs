//! The JVM-like heap ([`scalrand_shuffle::jvm`]): its layout against HotSpot's default
//! ratios worked out by hand, and runs whose outcome follows from the layout alone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

use rand_core::SeedableRng;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::jvm::{JvmAssumptions, JvmSpec, run_jvm};
use scalrand_shuffle::pcp::PcpLists;
use scalrand_shuffle::{
    CacheMode, Error, MemSideCache, MigrateType, PAGE_SIZE, ShufflePolicy, Zone, ZoneConfig,
};

/// The calibration's default size: a 1 GiB cache (262,144 pages), 16 threads. By hand: heap 3
/// caches = 786,432 pages (e900a918b098); NewRatio = 2 puts one third of it in the young
/// generation, 262,144, and two thirds, 524,288, in the old; SurvivorRatio = 8 makes eden 8
/// parts and each survivor 1 part of 10: 26,214.4, rounded down to 26,214 pages, eden the other
/// 262,144 − 52,428 = 209,716. A TLAB is eden over 16 threads × 50 refills: 262.1 → 262 pages.
#[test]
fn hotspot_layout_at_calibrate_scale() {
    let s = JvmSpec::hotspot(262_144, 1000, 16, &JvmAssumptions::default());
    assert_eq!(s.heap_pages, 786_432);
    assert_eq!(s.survivor_pages, 26_214);
    assert_eq!(s.eden_pages, 209_716);
    assert_eq!(s.old_pages(), 524_288);
    assert_eq!(s.fault_run, 262);
    // The hot part's default, an eighth of the cache.
    assert_eq!(s.hot_old_pages, 32_768);
    assert_eq!(s.threads, 16);
    assert!(!s.huge);
    assert_eq!(s.warmup, 250);
    assert_eq!(s.validate(), Ok(()));
}

/// A size that divides evenly: 1000-page cache, 4 threads. Heap 3000; young 1000, old 2000;
/// survivors 100 each, eden 800 (8 : 1 : 1); TLAB 800 / (4 × 50) = 4 pages.
#[test]
fn hotspot_layout_divides_as_the_ratios_say() {
    let s = JvmSpec::hotspot(1000, 1000, 4, &JvmAssumptions::default());
    assert_eq!(
        (s.heap_pages, s.eden_pages, s.survivor_pages, s.old_pages()),
        (3000, 800, 100, 2000)
    );
    assert_eq!(s.fault_run, 4);
    assert_eq!(s.old_pages(), 2 * (s.eden_pages + 2 * s.survivor_pages));
    assert_eq!(s.eden_pages, 8 * s.survivor_pages);
}

/// A zone of 32,768 pages (128 MiB) with 4 CPUs' per-CPU lists, booted in order, and a cache
/// of 4096 pages (16 MiB).
fn fresh_zone() -> (Zone<Xoroshiro128PlusPlus>, MemSideCache) {
    let zc = ZoneConfig::with_span(0, 32_768)
        .unwrap()
        .pcp(PcpLists::Kernel { cpus: 4 });
    let zone = Zone::new(
        &zc,
        ShufflePolicy::OFF,
        Xoroshiro128PlusPlus::seed_from_u64(1),
    )
    .unwrap();
    let cache = MemSideCache::new(4096 * PAGE_SIZE, CacheMode::PageColour).unwrap();
    (zone, cache)
}

/// The heap's pages straight from the zone, through `cpu`'s per-CPU list.
fn direct(z: &mut Zone<Xoroshiro128PlusPlus>, cpu: u32, order: u8) -> Result<Option<u64>, Error> {
    z.alloc_pages_on(cpu, order, MigrateType::Movable)
}

fn spec(assume: &JvmAssumptions) -> JvmSpec {
    JvmSpec::hotspot(4096, 4 * 4096, 4, assume)
}

/// Every access in the miss floor misses, whatever the placement, and touches no cache line.
#[test]
fn miss_floor_alone_misses_every_access() {
    let (mut zone, mut cache) = fresh_zone();
    let a = JvmAssumptions {
        eden: 0.0,
        survivor: 0.0,
        hot_old: 0.0,
        cold_old: 0.0,
        miss_floor: 1.0,
        ..JvmAssumptions::default()
    };
    let mut rng = Xoroshiro128PlusPlus::seed_from_u64(9);
    let st = run_jvm(
        &mut zone,
        &mut cache,
        &mut rng,
        &spec(&a),
        4,
        &mut |z, cpu, o| z.alloc_pages_on(cpu, o, MigrateType::Movable),
    )
    .unwrap();
    assert_eq!(st.accesses, 4 * 4096);
    assert_eq!(st.misses, st.accesses);
    assert_eq!(st.conflict_rate(), 1.0);
    zone.check_consistency().unwrap();
}

/// Eden alone, faulted first into a fresh in-order zone: its 3278 pages (plus what the four
/// per-CPU lists hold back, at most 4 × (high 90 + batch 15) for this zone) come from the
/// lowest PFNs, under 4096, so each has its own colour and, once the warm-up has swept it,
/// nothing conflicts.
#[test]
fn eden_alone_in_order_never_conflicts() {
    let (mut zone, mut cache) = fresh_zone();
    let a = JvmAssumptions {
        eden: 1.0,
        survivor: 0.0,
        hot_old: 0.0,
        cold_old: 0.0,
        miss_floor: 0.0,
        ..JvmAssumptions::default()
    };
    let s = spec(&a);
    assert_eq!(s.eden_pages, 3278);
    let mut rng = Xoroshiro128PlusPlus::seed_from_u64(9);
    let st = run_jvm(&mut zone, &mut cache, &mut rng, &s, 4, &mut |z, cpu, o| {
        z.alloc_pages_on(cpu, o, MigrateType::Movable)
    })
    .unwrap();
    assert_eq!(st.accesses, 4 * 4096);
    assert_eq!(st.conflicts, 0);
    // The old generation, three times the cache's colours over two cache lengths, does
    // conflict with itself once it takes accesses.
    let (mut zone, mut cache) = fresh_zone();
    let b = JvmAssumptions {
        eden: 0.0,
        cold_old: 1.0,
        ..a
    };
    let st = run_jvm(
        &mut zone,
        &mut cache,
        &mut rng,
        &spec(&b),
        4,
        &mut |z, cpu, o| z.alloc_pages_on(cpu, o, MigrateType::Movable),
    )
    .unwrap();
    assert!(st.conflicts > 0);
}

/// With 2 MiB pages the heap takes an order-9 block at every 512-aligned virtual page with 512
/// pages of its region left: in eden (pages 0..3278) at 0, 512, ..., 2560 (6 blocks), in the
/// survivor spaces (3278..4096) at 3584 (1), in the old generation (4096..12288) 16: 23.
#[test]
fn huge_pages_take_order_9_blocks_where_aligned() {
    let (mut zone, mut cache) = fresh_zone();
    let mut s = spec(&JvmAssumptions::default());
    s.huge = true;
    let mut rng = Xoroshiro128PlusPlus::seed_from_u64(9);
    let mut huge = 0;
    let mut small = 0;
    run_jvm(
        &mut zone,
        &mut cache,
        &mut rng,
        &s,
        4,
        &mut |z: &mut Zone<Xoroshiro128PlusPlus>, cpu: u32, o: u8| {
            let got = z.alloc_pages_on(cpu, o, MigrateType::Movable)?;
            if got.is_some() {
                if o == 9 { huge += 1 } else { small += 1 }
            }
            Ok(got)
        },
    )
    .unwrap();
    assert_eq!(huge, 23);
    assert_eq!(small, 12_288 - 23 * 512);
    zone.check_consistency().unwrap();
}

#[test]
fn bad_assumptions_are_refused() {
    let ok = JvmAssumptions::default();
    assert_eq!(ok.validate(), Ok(()));
    for bad in [
        JvmAssumptions { eden: 0.6, ..ok }, // sums to 1.1
        JvmAssumptions {
            eden: 1.5,
            hot_old: -0.95,
            ..ok
        },
        JvmAssumptions {
            hot_old_of_cache: 0.0,
            ..ok
        },
        JvmAssumptions {
            hot_old_of_cache: f64::NAN,
            ..ok
        },
        // The old generation is two caches (two thirds of three).
        JvmAssumptions {
            hot_old_of_cache: 2.01,
            ..ok
        },
    ] {
        assert!(
            matches!(bad.validate(), Err(Error::BadParameter(_))),
            "{bad:?}"
        );
    }
    // A spec whose hot part is larger than its old generation (2000 pages).
    let mut s = JvmSpec::hotspot(1000, 10, 1, &ok);
    s.hot_old_pages = 2001;
    assert!(matches!(s.validate(), Err(Error::BadParameter(_))));
    s.hot_old_pages = 2000;
    assert_eq!(s.validate(), Ok(()));
    // A heap that does not fit the zone: 3 × 16,384 pages in a 32,768-page zone.
    let (mut zone, _) = fresh_zone();
    let mut cache = MemSideCache::new(16_384 * PAGE_SIZE, CacheMode::PageColour).unwrap();
    let big = JvmSpec::hotspot(16_384, 10, 4, &ok);
    let mut rng = Xoroshiro128PlusPlus::seed_from_u64(9);
    assert!(matches!(
        run_jvm(&mut zone, &mut cache, &mut rng, &big, 4, &mut direct),
        Err(Error::BadParameter(_))
    ));
    zone.check_consistency().unwrap();
}

/// A hot part as large as the old generation (two caches) leaves no cold bulk: the cold share
/// then falls on the hot part, not on the miss floor. The old generation's 8192 pages over 4096
/// colours, accessed uniformly, hit on about half the accesses; were those accesses counted in
/// the floor, every one would miss.
#[test]
fn all_hot_old_generation_takes_the_cold_share() {
    let (mut zone, mut cache) = fresh_zone();
    let a = JvmAssumptions {
        eden: 0.0,
        survivor: 0.0,
        hot_old: 0.0,
        cold_old: 1.0,
        miss_floor: 0.0,
        hot_old_of_cache: 2.0,
    };
    let s = spec(&a);
    assert_eq!(s.hot_old_pages, s.old_pages());
    let mut rng = Xoroshiro128PlusPlus::seed_from_u64(9);
    let st = run_jvm(&mut zone, &mut cache, &mut rng, &s, 4, &mut direct).unwrap();
    assert!(st.conflict_rate() < 0.75, "{}", st.conflict_rate());
    assert!(st.hits > 0);
}
