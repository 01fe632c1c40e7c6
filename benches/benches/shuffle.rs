//! scalrand-shuffle beside its baseline (criterion):
//! * `shuffle_zone` over 2^24 free order-0 pages (a 2^25-page zone with every odd page
//!   allocated, so no buddies merge), kernel and Fisher–Yates modes, against rand's
//!   `SliceRandom::shuffle` of a `Vec<u32>` of 2^24 entries;
//! * simulated page allocations + frees per second, with and without the memory-side cache
//!   model (one page-colour access per allocation), through the per-CPU lists (the default).

// A criterion bench is test code: a setup that fails has nothing to measure, and stopping
// with its error is the report (clippy.toml allows the same in #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::seq::SliceRandom;
use rand_core::SeedableRng;
use scalrand_fastprng::Xoroshiro128PlusPlus;
use scalrand_shuffle::{
    CacheMode, MemSideCache, MigrateType, ShuffleMode, ShufflePolicy, Zone, ZoneConfig,
};

const PAGES: u64 = 1 << 24;

/// Free pages the shuffle benchmarks work on: [`PAGES`], or 2^16 in criterion's test mode
/// (`-- --test`, each benchmark run once to show that it works, in whatever build the caller
/// made: CI's is unoptimised, where the 2^25-page zone took over a minute to set up).
fn pages() -> u64 {
    if std::env::args().any(|a| a == "--test") {
        1 << 16
    } else {
        PAGES
    }
}

fn half_free_zone(pages: u64) -> Zone<Xoroshiro128PlusPlus> {
    let cfg = ZoneConfig::with_span(0, 2 * pages).unwrap();
    let mut z = Zone::new(
        &cfg,
        ShufflePolicy::OFF,
        Xoroshiro128PlusPlus::seed_from_u64(1),
    )
    .unwrap();
    let mut all = Vec::with_capacity(2 * pages as usize);
    while let Some(p) = z.alloc_pages(0, MigrateType::Movable).unwrap() {
        all.push(p);
    }
    for p in all.into_iter().filter(|p| p % 2 == 0) {
        z.free_pages(p, 0).unwrap();
    }
    // Order-0 frees go to the per-CPU lists first (on by default); the shuffle works on the
    // buddy lists, so hand those pages back as a drain would.
    z.drain_pages();
    assert_eq!(z.nr_free(0, MigrateType::Movable), pages);
    z
}

fn shuffle(c: &mut Criterion) {
    let pages = pages();
    let mut g = c.benchmark_group(format!("shuffle/2^{} order-0 pages", pages.ilog2()));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Elements(pages));
    let mut v: Vec<u32> = (0..pages as u32).collect();
    // The same generator on both sides, so the ratio is about the shuffles.
    let mut rng = Xoroshiro128PlusPlus::seed_from_u64(1);
    g.bench_function("rand SliceRandom::shuffle Vec<u32>", |b| {
        b.iter(|| {
            v.shuffle(&mut rng);
            black_box(v[0])
        })
    });
    drop(v);
    let mut z = half_free_zone(pages);
    g.bench_function("shuffle_zone Kernel", |b| {
        b.iter(|| black_box(z.shuffle_zone(0, ShuffleMode::Kernel).unwrap()))
    });
    g.bench_function("shuffle_zone FisherYates", |b| {
        b.iter(|| black_box(z.shuffle_zone(0, ShuffleMode::FisherYates).unwrap()))
    });
    g.finish();
}

const BATCH: u64 = 1 << 16;
const RING: usize = 4096;

fn alloc_free(c: &mut Criterion) {
    let mut g = c.benchmark_group("shuffle/page alloc+free");
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    // One allocation and one free per step.
    g.throughput(Throughput::Elements(2 * BATCH));
    for (name, policy, cached) in [
        ("in-order, cache model on", ShufflePolicy::OFF, true),
        (
            "shuffled (order 0 pick_tail), cache model on",
            ShufflePolicy {
                order: 0,
                ..ShufflePolicy::KERNEL
            },
            true,
        ),
        ("in-order, no cache model", ShufflePolicy::OFF, false),
    ] {
        let cfg = ZoneConfig::with_span(0, 1 << 20).unwrap();
        let mut z = Zone::new(&cfg, policy, Xoroshiro128PlusPlus::seed_from_u64(2)).unwrap();
        let mut cache = MemSideCache::new(64 << 20, CacheMode::PageColour).unwrap();
        let mut ring: Vec<u64> = (0..RING)
            .map(|_| z.alloc_pages(0, MigrateType::Movable).unwrap().unwrap())
            .collect();
        let mut at = 0usize;
        g.bench_function(name, |b| {
            b.iter(|| {
                for _ in 0..BATCH {
                    let p = z.alloc_pages(0, MigrateType::Movable).unwrap().unwrap();
                    if cached {
                        cache.access_page(p, 0);
                    }
                    let old = std::mem::replace(&mut ring[at], p);
                    z.free_pages(old, 0).unwrap();
                    at = (at + 1) % RING;
                }
                black_box(cache.stats().accesses)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, shuffle, alloc_free);
criterion_main!(benches);
