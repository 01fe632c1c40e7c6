//! Fortuna (scalrand-pool) against its baselines, side by side:
//! * single thread, 4 KiB reads: Fortuna Concurrent / Locked, the bare FS&K generator, and raw
//!   AES-256-CTR from the `aes` crate (the physical limit: no lock, no rekey, no key setup);
//!   the same for ChaCha20;
//! * single thread, 32-byte reads (a key's worth: where the per-read key setup and rekey
//!   dominate, and where the `aes` crate's per-call backend selection shows): Fortuna
//!   Concurrent / Locked with each PRF;
//! * two threads sharing one Fortuna, 4 KiB reads each: Concurrent vs Locked.

// A criterion bench is test code: a setup that fails has nothing to measure, and stopping
// with its error is the report (clippy.toml allows the same in #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use aes::Aes256Enc;
use aes::cipher::KeyInit;
use aes::cipher::array::Array;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scalrand_benches::rows::fortuna::{READ, aes_ctr_fill, chacha_core, chacha_fill};
use scalrand_pool::fortuna::{ChaCha20Prf, Fortuna, Generator, ReadMode};

fn small_reads(c: &mut Criterion) {
    let mut g = c.benchmark_group("fortuna 32B single thread");
    g.throughput(Throughput::Bytes(32));
    let mut buf = [0u8; 32];
    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        let f = Fortuna::new(mode).expect("OS entropy");
        g.bench_function(format!("Fortuna<AES> {mode:?}"), |b| {
            b.iter(|| {
                f.fill_bytes(&mut buf);
                black_box(&buf);
            })
        });
        let f = Fortuna::<ChaCha20Prf>::with_prf(mode).expect("OS entropy");
        g.bench_function(format!("Fortuna<ChaCha20> {mode:?}"), |b| {
            b.iter(|| {
                f.fill_bytes(&mut buf);
                black_box(&buf);
            })
        });
    }
    g.finish();
}

fn single_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("fortuna 4KiB single thread");
    g.throughput(Throughput::Bytes(READ as u64));
    let mut buf = [0u8; READ];

    let cipher = Aes256Enc::new(&Array::from([7u8; 32]));
    let mut ctr = 0u128;
    g.bench_function("raw AES-256-CTR (aes crate)", |b| {
        b.iter(|| {
            aes_ctr_fill(&cipher, &mut ctr, &mut buf);
            black_box(&buf);
        })
    });
    let mut gen_ = Generator::new();
    gen_.reseed(&[1; 32]);
    g.bench_function("Generator<AES> pseudo_random_data", |b| {
        b.iter(|| {
            gen_.pseudo_random_data(&mut buf).expect("seeded, 4 KiB");
            black_box(&buf);
        })
    });
    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        let f = Fortuna::new(mode).expect("OS entropy");
        g.bench_function(format!("Fortuna<AES> {mode:?}"), |b| {
            b.iter(|| {
                f.fill_bytes(&mut buf);
                black_box(&buf);
            })
        });
    }

    let mut cc = chacha_core(7);
    g.bench_function("raw ChaCha20 (chacha20 crate core)", |b| {
        b.iter(|| {
            chacha_fill(&mut cc, &mut buf);
            black_box(&buf);
        })
    });
    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        let f = Fortuna::<ChaCha20Prf>::with_prf(mode).expect("OS entropy");
        g.bench_function(format!("Fortuna<ChaCha20> {mode:?}"), |b| {
            b.iter(|| {
                f.fill_bytes(&mut buf);
                black_box(&buf);
            })
        });
    }
    g.finish();
}

/// What each mode holds the global lock for, per 4 KiB read: Locked generates the whole read
/// (= one 4 KiB generator request); Concurrent does one key setup, the reader's private key
/// and the new global key (= one 32-byte generator request, which is exactly that work: see
/// "Concurrent key schedule" in the fortuna module docs). Their ratio bounds how far
/// Concurrent can scale past Locked (Amdahl), independent of how many cores are free.
fn lock_hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("fortuna lock hold per 4KiB read");
    for (name, len) in [
        ("Locked: 4 KiB generator request", READ),
        ("Concurrent: key setup + reader key + new global key", 32),
    ] {
        let mut gen_ = Generator::new();
        gen_.reseed(&[1; 32]);
        let mut buf = vec![0u8; len];
        g.bench_function(format!("AES {name}"), |b| {
            b.iter(|| {
                gen_.pseudo_random_data(&mut buf).expect("seeded, <= 4 KiB");
                black_box(&buf);
            })
        });
        let mut gen_ = Generator::<ChaCha20Prf>::with_prf();
        gen_.reseed(&[1; 32]);
        g.bench_function(format!("ChaCha20 {name}"), |b| {
            b.iter(|| {
                gen_.pseudo_random_data(&mut buf).expect("seeded, <= 4 KiB");
                black_box(&buf);
            })
        });
    }
    g.finish();
}

/// `threads` threads each do `iters` reads of 4 KiB from `fill`; returns the wall time from
/// the first thread's start to the last thread's end (each thread takes its own start after
/// the barrier, so a short run cannot end before the clock starts and measure zero).
fn run_threads(threads: usize, iters: u64, fill: &(dyn Fn(&mut [u8]) + Sync)) -> Duration {
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut buf = [0u8; READ];
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        fill(&mut buf);
                        black_box(&buf);
                    }
                    (start, Instant::now())
                })
            })
            .collect();
        let spans: Vec<(Instant, Instant)> =
            hs.into_iter().map(|h| h.join().expect("worker")).collect();
        let first = spans.iter().map(|s| s.0).min();
        let last = spans.iter().map(|s| s.1).max();
        match (first, last) {
            (Some(a), Some(b)) => b - a,
            _ => Duration::ZERO,
        }
    })
}

fn two_threads(c: &mut Criterion) {
    const THREADS: usize = 2;
    let mut g = c.benchmark_group("fortuna 4KiB 2 threads");
    g.throughput(Throughput::Bytes((THREADS * READ) as u64));
    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        let f = Fortuna::new(mode).expect("OS entropy");
        g.bench_function(format!("Fortuna<AES> {mode:?}"), |b| {
            b.iter_custom(|iters| run_threads(THREADS, iters, &|buf| f.fill_bytes(buf)))
        });
    }
    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        let f = Fortuna::<ChaCha20Prf>::with_prf(mode).expect("OS entropy");
        g.bench_function(format!("Fortuna<ChaCha20> {mode:?}"), |b| {
            b.iter_custom(|iters| run_threads(THREADS, iters, &|buf| f.fill_bytes(buf)))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    targets = single_thread, small_reads, lock_hold, two_threads
}
criterion_main!(benches);
