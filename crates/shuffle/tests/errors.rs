//! One test per row of the README's "Bad input" table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: failing loudly is the point

mod common;

use common::SplitMix64;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::presets::preset;
use scalrand_shuffle::server::{ServerAging, ServerSpec};
use scalrand_shuffle::workload::{Aging, HeapSpec, Zipf, run_heap};
use scalrand_shuffle::{
    CacheMode, Error, KernelVersion, MemSideCache, MigrateType, PcpLists, ShuffleMode,
    ShufflePolicy, Zone, ZoneConfig, measure_bias, run_experiment,
};

fn zone(span: u64) -> Zone<SplitMix64> {
    Zone::new(
        &ZoneConfig::with_span(0, span).unwrap(),
        ShufflePolicy::OFF,
        SplitMix64(1),
    )
    .unwrap()
}

#[test]
fn start_after_end() {
    assert_eq!(
        ZoneConfig::new(10, 5),
        Err(Error::StartAfterEnd { start: 10, end: 5 })
    );
    let cfg = ZoneConfig::new(0, 4096).unwrap();
    assert_eq!(
        cfg.clone().hole(20, 10),
        Err(Error::StartAfterEnd { start: 20, end: 10 })
    );
    assert_eq!(
        cfg.migratetype(20, 10, MigrateType::Movable),
        Err(Error::StartAfterEnd { start: 20, end: 10 })
    );
    let mut z = zone(4096);
    assert_eq!(
        z.online_pages(20, 10),
        Err(Error::StartAfterEnd { start: 20, end: 10 })
    );
}

#[test]
fn empty_zone() {
    assert_eq!(ZoneConfig::new(7, 7), Err(Error::EmptyZone));
}

#[test]
fn zone_too_large() {
    assert_eq!(
        ZoneConfig::with_span(0, (1 << 31) + 1),
        Err(Error::ZoneTooLarge {
            spanned_pages: (1 << 31) + 1
        })
    );
}

#[test]
fn pfn_overflow() {
    assert_eq!(
        ZoneConfig::with_span(u64::MAX - 1, 4),
        Err(Error::PfnOverflow)
    );
}

#[test]
fn range_outside_zone() {
    let cfg = ZoneConfig::new(1024, 2048).unwrap();
    assert_eq!(
        cfg.clone().hole(0, 1100),
        Err(Error::RangeOutsideZone {
            start: 0,
            end: 1100
        })
    );
    assert_eq!(
        cfg.hole(2000, 2049),
        Err(Error::RangeOutsideZone {
            start: 2000,
            end: 2049
        })
    );
    let mut z = zone(4096);
    assert_eq!(
        z.online_pages(4000, 5000),
        Err(Error::RangeOutsideZone {
            start: 4000,
            end: 5000
        })
    );
}

#[test]
fn order_too_large() {
    let cfg = ZoneConfig::new(0, 4096).unwrap();
    let bad = ShufflePolicy {
        order: 11,
        ..ShufflePolicy::KERNEL
    };
    assert_eq!(
        Zone::new(&cfg, bad, SplitMix64(1)).unwrap_err(),
        Error::OrderTooLarge { order: 11 }
    );
    let mut z = zone(4096);
    assert_eq!(
        z.shuffle_zone(11, ShuffleMode::Kernel),
        Err(Error::OrderTooLarge { order: 11 })
    );
    assert_eq!(
        z.alloc_pages(11, MigrateType::Movable),
        Err(Error::OrderTooLarge { order: 11 })
    );
    assert_eq!(z.free_pages(0, 12), Err(Error::OrderTooLarge { order: 12 }));
    assert_eq!(
        measure_bias(ShuffleMode::Kernel, 11, 4, 10, SplitMix64(1)).unwrap_err(),
        Error::OrderTooLarge { order: 11 }
    );
    let mut cfg = preset("tiny").unwrap();
    cfg.shuffle_order = 11;
    assert_eq!(
        run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut |_, _| {}).unwrap_err(),
        Error::OrderTooLarge { order: 11 }
    );
    let mut spec = scalrand_shuffle::presets::default_aging(4096);
    spec.orders = vec![(12, 1)];
    assert_eq!(
        Aging::new().round(&mut z, &mut SplitMix64(2), &spec),
        Err(Error::OrderTooLarge { order: 12 })
    );
}

#[test]
fn all_holes() {
    let cfg = ZoneConfig::new(0, 2048)
        .unwrap()
        .hole(0, 1024)
        .unwrap()
        .hole(1024, 2048)
        .unwrap();
    assert_eq!(
        Zone::new(&cfg, ShufflePolicy::KERNEL, SplitMix64(1)).unwrap_err(),
        Error::AllHoles
    );
}

#[test]
fn already_online() {
    let cfg = ZoneConfig::new(0, 4096).unwrap().hole(1024, 2048).unwrap();
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, SplitMix64(1)).unwrap();
    assert_eq!(
        z.online_pages(1000, 1100),
        Err(Error::AlreadyOnline { pfn: 1000 })
    );
    // Nothing changed: the whole hole can still come online.
    assert_eq!(z.nr_free_pages(), 3072);
    z.online_pages(1024, 2048).unwrap();
    assert_eq!(z.nr_free_pages(), 4096);
}

#[test]
fn not_allocated() {
    let mut z = zone(4096);
    assert_eq!(
        z.free_pages(5, 0),
        Err(Error::NotAllocated { pfn: 5, order: 0 })
    );
    assert_eq!(
        z.free_pages(1 << 40, 0),
        Err(Error::NotAllocated {
            pfn: 1 << 40,
            order: 0
        })
    );
    let p = z.alloc_pages(2, MigrateType::Movable).unwrap().unwrap();
    assert_eq!(
        z.free_pages(p, 1),
        Err(Error::NotAllocated { pfn: p, order: 1 }),
        "wrong order"
    );
    assert_eq!(
        z.free_pages(p + 1, 0),
        Err(Error::NotAllocated {
            pfn: p + 1,
            order: 0
        }),
        "not the head"
    );
    z.free_pages(p, 2).unwrap();
    assert_eq!(
        z.free_pages(p, 2),
        Err(Error::NotAllocated { pfn: p, order: 2 }),
        "double free"
    );
    z.check_consistency().unwrap();
    // A hole is never allocated, so it cannot be freed either.
    let cfg = ZoneConfig::new(0, 2048).unwrap().hole(0, 1024).unwrap();
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, SplitMix64(1)).unwrap();
    assert_eq!(
        z.free_pages(3, 0),
        Err(Error::NotAllocated { pfn: 3, order: 0 })
    );
}

#[test]
fn zero_cache_size() {
    assert_eq!(
        MemSideCache::new(0, CacheMode::Line).unwrap_err(),
        Error::ZeroCacheSize
    );
    assert_eq!(
        MemSideCache::new(0, CacheMode::PageColour).unwrap_err(),
        Error::ZeroCacheSize
    );
}

#[test]
fn cache_size_not_multiple() {
    assert_eq!(
        MemSideCache::new(100, CacheMode::Line).unwrap_err(),
        Error::CacheSizeNotMultiple {
            capacity: 100,
            unit: 64
        }
    );
    assert_eq!(
        MemSideCache::new(64 * 3, CacheMode::PageColour).unwrap_err(),
        Error::CacheSizeNotMultiple {
            capacity: 192,
            unit: 4096
        }
    );
    let mut cfg = preset("tiny").unwrap();
    cfg.cache_bytes = 1000;
    assert!(matches!(
        run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut |_, _| {}),
        Err(Error::CacheSizeNotMultiple { .. })
    ));
}

#[test]
fn zero_seeds() {
    let mut cfg = preset("tiny").unwrap();
    cfg.seeds.clear();
    assert_eq!(
        run_experiment::<Xoroshiro128PlusPlus>(&cfg, &mut |_, _| {}).unwrap_err(),
        Error::ZeroSeeds
    );
}

#[test]
fn bad_parameter() {
    assert!(matches!(Zipf::new(0, 1.0), Err(Error::BadParameter(_))));
    assert!(matches!(
        Zipf::new(10, f64::NAN),
        Err(Error::BadParameter(_))
    ));
    assert!(matches!(preset("nope"), Err(Error::BadParameter(_))));
    let mut z = zone(4096);
    let mut c = MemSideCache::new(4096 * 4, CacheMode::PageColour).unwrap();
    let zipf = Zipf::new(4, 1.0).unwrap();
    let spec = HeapSpec {
        heap_pages: 8,
        hot_pages: 9,
        hot_prob: 0.5,
        zipf_s: 1.0,
        accesses: 10,
        warmup: 0,
        hot_spread: false,
    };
    assert!(matches!(
        run_heap(&mut z, &mut c, &mut SplitMix64(1), &spec, &zipf),
        Err(Error::BadParameter(_))
    ));
    let too_big = HeapSpec {
        heap_pages: 5000,
        hot_pages: 4,
        ..spec
    };
    assert!(matches!(
        run_heap(&mut z, &mut c, &mut SplitMix64(1), &too_big, &zipf),
        Err(Error::BadParameter(_))
    ));
    // A heap that did not fit left the zone as it was.
    assert_eq!(z.nr_free_pages(), 4096);
    z.check_consistency().unwrap();
}

#[test]
fn bad_bias_setup() {
    assert!(matches!(
        measure_bias(ShuffleMode::Kernel, 10, 1, 10, SplitMix64(1)),
        Err(Error::BadBiasSetup(_))
    ));
    assert!(matches!(
        measure_bias(ShuffleMode::Kernel, 10, 4, 0, SplitMix64(1)),
        Err(Error::BadBiasSetup(_))
    ));
    // Order-5 blocks merge at boot: reported, not mis-measured.
    assert!(matches!(
        measure_bias(ShuffleMode::Kernel, 5, 4, 10, SplitMix64(1)),
        Err(Error::BadBiasSetup(_))
    ));
}

#[test]
fn no_such_cpu() {
    let cfg = ZoneConfig::new(0, 4096).unwrap().pcp(PcpLists::Custom {
        cpus: 2,
        high: 8,
        batch: 2,
    });
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, SplitMix64(1)).unwrap();
    assert_eq!(
        z.alloc_pages_on(2, 0, MigrateType::Movable),
        Err(Error::NoSuchCpu { cpu: 2, cpus: 2 })
    );
    let p = z
        .alloc_pages_on(1, 0, MigrateType::Movable)
        .unwrap()
        .unwrap();
    assert_eq!(
        z.free_pages_on(7, p, 0),
        Err(Error::NoSuchCpu { cpu: 7, cpus: 2 })
    );
    // The default: the kernel's lists on one CPU.
    let mut z = zone(4096);
    assert_eq!(
        z.alloc_pages_on(1, 0, MigrateType::Movable),
        Err(Error::NoSuchCpu { cpu: 1, cpus: 1 })
    );
    z.check_consistency().unwrap();
    // Without per-CPU lists the CPU makes no difference: any is accepted.
    let cfg = ZoneConfig::new(0, 4096).unwrap().pcp(PcpLists::Off);
    let mut z = Zone::new(&cfg, ShufflePolicy::OFF, SplitMix64(1)).unwrap();
    let p = z
        .alloc_pages_on(9, 0, MigrateType::Movable)
        .unwrap()
        .unwrap();
    z.free_pages_on(3, p, 0).unwrap();
    assert_eq!(z.nr_free_pages(), 4096);
}

#[test]
fn bad_kernel_version() {
    for s in ["5.1", "4.19", "five", "5", "5.x"] {
        assert_eq!(KernelVersion::parse(s), Err(Error::BadKernelVersion), "{s}");
    }
}

#[test]
fn bad_pcp_and_server_parameters() {
    let cfg = |pcp| ZoneConfig::new(0, 4096).unwrap().pcp(pcp);
    for pcp in [
        PcpLists::Kernel { cpus: 0 },
        PcpLists::Custom {
            cpus: 1,
            high: 4,
            batch: 0,
        },
    ] {
        assert!(matches!(
            Zone::new(&cfg(pcp), ShufflePolicy::OFF, SplitMix64(1)),
            Err(Error::BadParameter(_))
        ));
    }
    let mut z = Zone::new(
        &cfg(PcpLists::Kernel { cpus: 16 }),
        ShufflePolicy::OFF,
        SplitMix64(1),
    )
    .unwrap();
    let good = ServerSpec::for_zone(4096);
    for bad in [
        ServerSpec {
            cpus: 0,
            ..good.clone()
        },
        ServerSpec {
            file_pages: (0, 4),
            ..good.clone()
        },
        ServerSpec {
            process_pages: (9, 3),
            ..good.clone()
        },
        ServerSpec {
            reread_prob: 1.5,
            ..good.clone()
        },
        ServerSpec {
            watermarks: (1, 9, 3),
            ..good.clone()
        },
    ] {
        assert!(matches!(
            ServerAging::new().round(&mut z, &mut SplitMix64(2), &bad),
            Err(Error::BadParameter(_))
        ));
    }
    // The zone has 16 CPUs' lists; a server spec naming more is refused by the zone.
    let more = ServerSpec { cpus: 64, ..good };
    let mut failed = false;
    for seed in 0..20 {
        if let Err(e) = ServerAging::new().round(&mut z, &mut SplitMix64(seed), &more) {
            assert!(matches!(e, Error::NoSuchCpu { .. }));
            failed = true;
            break;
        }
    }
    assert!(failed);
    z.check_consistency().unwrap();
}
