//! Per-NUMA ChaCha20 pools (`scalrand_pool::numa`) and the crypto facade against their
//! baselines, side by side:
//! * single thread, 32-byte and 4 KiB reads: `NodePools`, `scalrand::fill_bytes`,
//!   `Mutex<ChaCha20Rng>`, rand's `ThreadRng`, `getrandom::fill`, raw ChaCha20 keystream;
//! * 1 and 2 threads (all the cores this machine has), aggregate throughput of one shared
//!   generator, same rows;
//! * the table shape of Andi Kleen's per-node urandom pools (LKML, "[PATCH 1/3] Make
//!   /dev/urandom scalable", 2015-10-06): an explicit 4-node topology of 4 CPUs each, 1 to 4
//!   "nodes" of threads (thread `i` reads as CPU `i`), against one global lock.
//!
//! Multi-threaded groups use `iter_custom`: one iteration = every thread doing one read, so
//! criterion's throughput is aggregate bytes per second.

// A criterion bench is test code: a setup that fails has nothing to measure, and stopping
// with its error is the report (clippy.toml allows the same in #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use chacha20::ChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand_core::{Rng, SeedableRng};
use scalrand_pool::numa::{NodePools, Topology};

/// A generator the multi-threaded groups can share: `fill(thread, buf)`.
type Shared = Box<dyn Fn(usize, &mut [u8]) + Send + Sync>;

fn shared_rows() -> Vec<(&'static str, Shared)> {
    let pools = NodePools::new(Topology::detect()).expect("OS entropy");
    let mutex = Mutex::new(rand_chacha::ChaCha20Rng::from_seed([7; 32]));
    vec![
        (
            "NodePools",
            Box::new(move |_, b: &mut [u8]| pools.fill_bytes(b)) as Shared,
        ),
        (
            "scalrand::fill_bytes",
            Box::new(|_, b: &mut [u8]| scalrand::fill_bytes(b)),
        ),
        (
            "Mutex<ChaCha20Rng>",
            Box::new(move |_, b: &mut [u8]| mutex.lock().expect("poisoned").fill_bytes(b)),
        ),
        (
            "ThreadRng",
            Box::new(|_, b: &mut [u8]| rand::rng().fill_bytes(b)),
        ),
        (
            "getrandom::fill",
            Box::new(|_, b: &mut [u8]| getrandom::fill(b).expect("getrandom")),
        ),
    ]
}

fn single_thread(c: &mut Criterion) {
    for len in [32usize, 4096] {
        let mut g = c.benchmark_group(format!("numa {len}B single thread"));
        g.throughput(Throughput::Bytes(len as u64));
        let mut buf = vec![0u8; len];
        for (name, f) in shared_rows() {
            g.bench_function(name, |b| {
                b.iter(|| {
                    f(0, &mut buf);
                    black_box(&buf);
                })
            });
        }
        let mut cc = ChaCha20::new(&[7u8; 32].into(), &[0u8; 12].into());
        g.bench_function("raw ChaCha20 keystream", |b| {
            b.iter(|| {
                cc.write_keystream(&mut buf);
                black_box(&buf);
            })
        });
        g.finish();
    }
}

/// `threads` threads each doing `iters` reads of `len` bytes through `f`; wall time.
fn run_threads(
    threads: usize,
    iters: u64,
    len: usize,
    f: &(dyn Fn(usize, &mut [u8]) + Sync),
) -> Duration {
    let barrier = Barrier::new(threads);
    let times: Vec<Duration> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    let mut buf = vec![0u8; len];
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..iters {
                        f(t, &mut buf);
                        black_box(&buf);
                    }
                    start.elapsed()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("worker")).collect()
    });
    times.into_iter().max().unwrap_or_default()
}

fn threads(c: &mut Criterion) {
    let max = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counts: Vec<usize> = if max >= 2 { vec![1, 2] } else { vec![1] };
    for len in [32usize, 4096] {
        let mut g = c.benchmark_group(format!("numa {len}B threads"));
        let mut rows = shared_rows();
        rows.push((
            "raw ChaCha20 keystream per thread",
            Box::new(|t, b: &mut [u8]| {
                // A fresh cipher per read would measure key setup; one per thread is the
                // ceiling (no erasure, no sharing).
                thread_local! {
                    static C: std::cell::RefCell<ChaCha20> =
                        std::cell::RefCell::new(ChaCha20::new(&[9u8; 32].into(), &[0u8; 12].into()));
                }
                let _ = t;
                C.with(|c| c.borrow_mut().write_keystream(b));
            }),
        ));
        for (name, f) in &rows {
            for &t in &counts {
                g.throughput(Throughput::Bytes((len * t) as u64));
                g.bench_with_input(BenchmarkId::new(*name, t), &t, |b, &t| {
                    b.iter_custom(|iters| run_threads(t, iters, len, f.as_ref()))
                });
            }
        }
        g.finish();
    }
}

/// Kleen's table: 1..4 nodes of 4 CPUs busy (4..16 threads), per-node pools vs one lock.
fn kleen_table(c: &mut Criterion) {
    let mut g = c.benchmark_group("numa Kleen table 32B (4 nodes x 4 CPUs)");
    let topo = Topology::from_nodes((0..4).map(|n| (4 * n..4 * n + 4).collect()).collect());
    let pools = NodePools::new(topo).expect("OS entropy");
    let per_node = move |t: usize, b: &mut [u8]| pools.fill_bytes_on_cpu(t, b);
    let mutex = Mutex::new(rand_chacha::ChaCha20Rng::from_seed([7; 32]));
    let global = move |_: usize, b: &mut [u8]| mutex.lock().expect("poisoned").fill_bytes(b);
    for nodes in 1..=4usize {
        let t = 4 * nodes;
        g.throughput(Throughput::Bytes((32 * t) as u64));
        g.bench_with_input(BenchmarkId::new("per-node pools", nodes), &t, |b, &t| {
            b.iter_custom(|iters| run_threads(t, iters, 32, &per_node))
        });
        g.bench_with_input(BenchmarkId::new("one global lock", nodes), &t, |b, &t| {
            b.iter_custom(|iters| run_threads(t, iters, 32, &global))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = single_thread, threads, kleen_table
}
criterion_main!(benches);
