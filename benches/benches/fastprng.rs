//! Single-thread costs of scalrand-fastprng beside the baselines (criterion).
//! Multi-thread scaling is `cargo xtask scaling`'s job.

// A criterion bench is test code: a setup that fails has nothing to measure, and stopping
// with its error is the report (clippy.toml allows the same in #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand_core::{Rng, SeedableRng};
use scalrand_fastprng::{PerCpu, PerCpuWyRand, StaticWyRand, WyRand, Xoroshiro128PlusPlus};

thread_local! {
    static TL: RefCell<rand_xoshiro::Xoroshiro128PlusPlus> =
        RefCell::new(rand_xoshiro::Xoroshiro128PlusPlus::seed_from_u64(1));
}

fn next_u64(c: &mut Criterion) {
    let mut g = c.benchmark_group("fastprng/next_u64");
    g.throughput(Throughput::Elements(1));
    let mut ours = Xoroshiro128PlusPlus::seed_from_u64(1);
    g.bench_function("Xoroshiro128PlusPlus (owned)", |b| {
        b.iter(|| black_box(ours.next_u64()))
    });
    let mut theirs = rand_xoshiro::Xoroshiro128PlusPlus::seed_from_u64(1);
    g.bench_function("rand_xoshiro (owned)", |b| {
        b.iter(|| black_box(theirs.next_u64()))
    });
    g.bench_function("scalrand::fast::u64(..)", |b| {
        b.iter(|| black_box(scalrand::fast::u64(..)))
    });
    let p = PerCpu::new(Xoroshiro128PlusPlus::seed_from_u64(2)).unwrap();
    g.bench_function("PerCpu (rseq)", |b| b.iter(|| black_box(p.next_u64())));
    let q = PerCpu::new(Xoroshiro128PlusPlus::seed_from_u64(3))
        .unwrap()
        .force_try_lock();
    g.bench_function("PerCpu (try-lock)", |b| b.iter(|| black_box(q.next_u64())));
    let w = PerCpuWyRand::new(WyRand::from_state(5)).unwrap();
    g.bench_function("PerCpuWyRand (rseq)", |b| {
        b.iter(|| black_box(w.next_u64()))
    });
    static STATIC_WY: StaticWyRand = StaticWyRand::new();
    g.bench_function("StaticWyRand (rseq)", |b| {
        b.iter(|| black_box(STATIC_WY.try_next_u64()))
    });
    g.bench_function("thread-local rand_xoshiro", |b| {
        b.iter(|| black_box(TL.with(|r| r.borrow_mut().next_u64())))
    });
    g.bench_function("fastrand::u64", |b| b.iter(|| black_box(fastrand::u64(..))));
    let m = Mutex::new(rand_xoshiro::Xoroshiro128PlusPlus::seed_from_u64(4));
    g.bench_function("Mutex<Xoroshiro128PlusPlus>", |b| {
        b.iter(|| black_box(m.lock().unwrap().next_u64()))
    });
    g.finish();
}

/// 1,000 numbers per iteration: the scoped API against owned generators in a loop.
fn batch_1000(c: &mut Criterion) {
    let mut g = c.benchmark_group("fastprng/1000_u64");
    g.throughput(Throughput::Elements(1000));
    let mut owned = Xoroshiro128PlusPlus::seed_from_u64(1);
    g.bench_function("Xoroshiro128PlusPlus (owned) loop", |b| {
        b.iter(|| (0..1000).fold(0u64, |a, _| a ^ owned.next_u64()))
    });
    let mut wy = WyRand::from_state(1);
    g.bench_function("WyRand (owned) loop", |b| {
        b.iter(|| (0..1000).fold(0u64, |a, _| a ^ wy.next_raw()))
    });
    g.bench_function("scalrand::fast::with loop", |b| {
        b.iter(|| scalrand::fast::with(|r| (0..1000).fold(0u64, |a, _| a ^ r.next_raw())))
    });
    g.bench_function("scalrand::fast::u64(..) loop", |b| {
        b.iter(|| (0..1000).fold(0u64, |a, _| a ^ scalrand::fast::u64(..)))
    });
    g.bench_function("fastrand::u64 loop", |b| {
        b.iter(|| (0..1000).fold(0u64, |a, _| a ^ fastrand::u64(..)))
    });
    g.bench_function("thread-local rand_xoshiro loop", |b| {
        b.iter(|| (0..1000).fold(0u64, |a, _| a ^ TL.with(|r| r.borrow_mut().next_u64())))
    });
    let mut buf = [0u64; 1000];
    g.bench_function("scalrand::fast::fill_u64", |b| {
        b.iter(|| {
            scalrand::fast::fill_u64(&mut buf);
            black_box(&buf);
        })
    });
    g.finish();
}

fn fill_4k(c: &mut Criterion) {
    let mut g = c.benchmark_group("fastprng/fill_bytes_4KiB");
    g.throughput(Throughput::Bytes(4096));
    let mut buf = vec![0u8; 4096];
    let mut ours = Xoroshiro128PlusPlus::seed_from_u64(1);
    g.bench_function("Xoroshiro128PlusPlus (owned)", |b| {
        b.iter(|| ours.fill_bytes(&mut buf))
    });
    let mut theirs = rand_xoshiro::Xoroshiro128PlusPlus::seed_from_u64(1);
    g.bench_function("rand_xoshiro (owned)", |b| {
        b.iter(|| theirs.fill_bytes(&mut buf))
    });
    g.bench_function("scalrand::fast::fill", |b| {
        b.iter(|| scalrand::fast::fill(&mut buf))
    });
    g.bench_function("fastrand::fill", |b| b.iter(|| fastrand::fill(&mut buf)));
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

criterion_group! { name = benches; config = config(); targets = next_u64, batch_1000, fill_4k }
criterion_main!(benches);
