//! Per-NUMA ChaCha20 pools (`scalrand_pool::numa`) and the crypto facade against their
//! baselines, side by side:
//! * single thread, 32-byte and 4 KiB reads: `NodePools` (ChaCha20, and the ChaCha12 and
//!   ChaCha8 output choices of `with_rounds`), `scalrand::fill_bytes`,
//!   `Mutex<ChaCha20Rng>`, rand's `ThreadRng`, `getrandom::fill`, raw ChaCha20 keystream;
//! * 1 and 2 threads (all the cores this machine has), aggregate throughput of one shared
//!   generator, same rows;
//! * the table shape of Andi Kleen's per-node urandom pools (LKML, "[PATCH 1/3] Make
//!   /dev/urandom scalable", 2015-10-06): an explicit 4-node topology of 4 CPUs each, 1 to 4
//!   "nodes" of threads (thread `i` reads as CPU `i`), against one global lock;
//! * the pools' keystream alone (`chacha::keystream`, which picks the widest of its AVX-512,
//!   AVX2, SSE2 and portable backends at run time) against the `chacha20` crate's core, 1 KiB
//!   and 4 KiB, ChaCha8/12/20, single thread; after criterion the same pairs again as a ratio
//!   table from interleaved A/B timings (best and median batches), which a shared, busy
//!   machine disturbs far less than two criterion runs one after the other.
//!
//! Multi-threaded groups use `iter_custom`: one iteration = every thread doing one read, so
//! criterion's throughput is aggregate bytes per second.

// A criterion bench is test code: a setup that fails has nothing to measure, and stopping
// with its error is the report (clippy.toml allows the same in #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherCore};
use chacha20::{ChaCha20, ChaChaCore, R8, R12, R20, variants::Ietf};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use rand_core::{Rng, SeedableRng};
use scalrand_pool::chacha::keystream;
use scalrand_pool::numa::{NodePools, Rounds, Topology};

/// A generator the multi-threaded groups can share: `fill(thread, buf)`.
type Shared = Box<dyn Fn(usize, &mut [u8]) + Send + Sync>;

fn shared_rows() -> Vec<(&'static str, Shared)> {
    let pools = NodePools::new(Topology::detect()).expect("OS entropy");
    let pools12 = NodePools::new(Topology::detect())
        .expect("OS entropy")
        .with_rounds(Rounds::ChaCha12);
    let pools8 = NodePools::new(Topology::detect())
        .expect("OS entropy")
        .with_rounds(Rounds::ChaCha8);
    let mutex = Mutex::new(rand_chacha::ChaCha20Rng::from_seed([7; 32]));
    vec![
        (
            "NodePools",
            Box::new(move |_, b: &mut [u8]| pools.fill_bytes(b)) as Shared,
        ),
        (
            "NodePools ChaCha12 (with_rounds)",
            Box::new(move |_, b: &mut [u8]| pools12.fill_bytes(b)),
        ),
        (
            "NodePools ChaCha8 (with_rounds)",
            Box::new(move |_, b: &mut [u8]| pools8.fill_bytes(b)),
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

/// The `chacha20` crate's IETF core the way the pools used it before their own backend: a
/// core per call from the key, block counter 0, whole blocks straight into `buf`.
fn crate_keystream<R: chacha20::Rounds>(key: &[u8; 32], buf: &mut [u8]) {
    let mut c = ChaChaCore::<R, Ietf>::new(key.into(), &[0u8; 12].into());
    c.set_block_pos(0);
    let (blocks, tail) = chacha20::cipher::array::Array::slice_as_chunks_mut(buf);
    c.write_keystream_blocks(blocks);
    assert!(tail.is_empty(), "whole blocks only");
}

/// Keystream alone, per call from a key (as a slot refill or a large read does): ours
/// (dispatching) against the `chacha20` crate's core, same rounds, same bytes.
fn keystream_backends(c: &mut Criterion) {
    let key = [7u8; 32];
    for len in [1024usize, 4096] {
        let mut g = c.benchmark_group(format!("numa chacha keystream {len}B"));
        g.throughput(Throughput::Bytes(len as u64));
        let mut buf = vec![0u8; len];
        let mut check = vec![0u8; len];
        for (rounds, name) in [
            (Rounds::ChaCha8, "ChaCha8"),
            (Rounds::ChaCha12, "ChaCha12"),
            (Rounds::ChaCha20, "ChaCha20"),
        ] {
            let theirs: fn(&[u8; 32], &mut [u8]) = match rounds {
                Rounds::ChaCha8 => crate_keystream::<R8>,
                Rounds::ChaCha12 => crate_keystream::<R12>,
                Rounds::ChaCha20 => crate_keystream::<R20>,
            };
            keystream(&key, 0, &mut buf, rounds);
            theirs(&key, &mut check);
            assert_eq!(buf, check, "same bytes from both");
            g.bench_with_input(
                BenchmarkId::new("chacha::keystream", name),
                &rounds,
                |b, &r| {
                    b.iter(|| {
                        keystream(black_box(&key), 0, &mut buf, r);
                        black_box(&buf);
                    })
                },
            );
            g.bench_with_input(
                BenchmarkId::new("chacha20 crate core", name),
                &rounds,
                |b, _| {
                    b.iter(|| {
                        theirs(black_box(&key), &mut buf);
                        black_box(&buf);
                    })
                },
            );
        }
        g.finish();
    }
}

/// Seconds per call of `a` and `b`, timed in `rounds` alternating batches of `batch` calls so
/// that noise from other processes hits both alike: [best a, best b, median a, median b].
fn ab(rounds: usize, batch: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> [f64; 4] {
    let (mut ta, mut tb) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..batch {
            a();
        }
        ta.push(t.elapsed().as_secs_f64() / batch as f64);
        let t = Instant::now();
        for _ in 0..batch {
            b();
        }
        tb.push(t.elapsed().as_secs_f64() / batch as f64);
    }
    ta.sort_by(f64::total_cmp);
    tb.sort_by(f64::total_cmp);
    [ta[0], tb[0], ta[rounds / 2], tb[rounds / 2]]
}

/// Markdown table: ours / the `chacha20` crate's keystream throughput, per length and rounds.
fn keystream_ratio_report() {
    const ROUNDS: usize = 401;
    const BATCH: usize = 32;
    println!(
        "\n## chacha::keystream vs the chacha20 crate's core ({ROUNDS} interleaved batches of \
         {BATCH} calls per side)\n"
    );
    println!(
        "| length | rounds | chacha20 crate (best) | chacha::keystream (best) | ratio, best | ratio, median |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    let key = [7u8; 32];
    for len in [1024usize, 4096] {
        for (rounds, name, theirs) in [
            (
                Rounds::ChaCha8,
                "ChaCha8",
                crate_keystream::<R8> as fn(&[u8; 32], &mut [u8]),
            ),
            (Rounds::ChaCha12, "ChaCha12", crate_keystream::<R12>),
            (Rounds::ChaCha20, "ChaCha20", crate_keystream::<R20>),
        ] {
            let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
            let [ours_best, theirs_best, ours_med, theirs_med] = ab(
                ROUNDS,
                BATCH,
                || {
                    keystream(black_box(&key), 0, &mut x, rounds);
                    black_box(&x);
                },
                || {
                    theirs(black_box(&key), &mut y);
                    black_box(&y);
                },
            );
            assert_eq!(x, y, "same bytes from both");
            println!(
                "| {len} B | {name} | {:.0} ns | {:.0} ns | **{:.2}x** | {:.2}x |",
                theirs_best * 1e9,
                ours_best * 1e9,
                theirs_best / ours_best,
                theirs_med / ours_med
            );
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    targets = single_thread, threads, kleen_table, keystream_backends
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    keystream_ratio_report();
}
