//! scalrand-simd-chunk benches, baselines side by side:
//!
//! 1. Throughput (criterion): chunked (`digest_chunked`, default 4 KiB policy) vs one-shot
//!    `D::digest` for SHA-256 and SHA-512, plus BLAKE3 at 4 KiB, 16 KiB and `Policy::tree_hash`.
//! 2. Ratio report (printed after criterion, same run): interleaved A/B timings of the same
//!    pairs, as ratios of the best runs and of the median runs.
//! 3. Gaps between yield checks under the calibrated time-budget policy (50 µs target), in wall
//!    time and in this thread's CPU time.
//! 4. Ping latency on a tokio current-thread runtime while 256 MiB is hashed: `digest_async`
//!    (and `PollBudget` 16 KiB, `PollTimeBudget`, `TokioCoop`) vs a plain `Sha256::digest` in
//!    the same future, and an idle runtime as the floor.
//!
//! `cargo bench -p scalrand-benches --bench simd_chunk -- --warm-up-time 1 --measurement-time 3`
//! Criterion filters apply to part 1 only; parts 2-4 always run unless `--test` or `--list`.

// A criterion bench is test code: a setup that fails has nothing to measure, and stopping
// with its error is the report (clippy.toml allows the same in #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use scalrand_simd_chunk::digest::Digest;
use scalrand_simd_chunk::digest::common::BlockSizeUser;
use scalrand_simd_chunk::digest::typenum::Unsigned;
use scalrand_simd_chunk::{
    FlagPreempt, Hashing, MonotonicClock, NeverYield, NoSection, Policy, PollBudget,
    PollTimeBudget, Preempt, ThreadYield, TimeBudget, TokioCoop, Work, calibrate, digest_async,
    digest_chunked, digest_chunked_with,
};
use sha2::{Sha256, Sha512};

const MIB: usize = 1 << 20;

fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// Consumes a digest so the optimizer cannot drop the work.
fn sink<T>(t: T) {
    black_box(t);
}

fn policy_or_default(interval: usize) -> Policy {
    Policy::for_block_size(interval, 64).unwrap_or(Policy::for_digest::<blake3::Hasher>())
}

fn throughput(c: &mut Criterion) {
    let data = pattern(4 * MIB);
    let mut g = c.benchmark_group("simd_chunk/throughput_4MiB");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(20);
    g.bench_function("sha256/one_shot", |b| {
        b.iter(|| Sha256::digest(black_box(&data)))
    });
    g.bench_function("sha256/chunked_never", |b| {
        b.iter(|| digest_chunked::<Sha256>(black_box(&data), &mut NeverYield))
    });
    let flag = AtomicBool::new(false);
    g.bench_function("sha256/chunked_flag", |b| {
        b.iter(|| {
            let mut p = FlagPreempt::new(&flag, ThreadYield);
            digest_chunked::<Sha256>(black_box(&data), &mut p)
        })
    });
    g.bench_function("sha512/one_shot", |b| {
        b.iter(|| Sha512::digest(black_box(&data)))
    });
    g.bench_function("sha512/chunked_never", |b| {
        b.iter(|| digest_chunked::<Sha512>(black_box(&data), &mut NeverYield))
    });
    g.bench_function("blake3/one_shot", |b| {
        b.iter(|| blake3::Hasher::digest(black_box(&data)))
    });
    g.bench_function("blake3/chunked_default_4KiB", |b| {
        b.iter(|| digest_chunked::<blake3::Hasher>(black_box(&data), &mut NeverYield))
    });
    let tree = Policy::tree_hash::<blake3::Hasher>();
    g.bench_function("blake3/chunked_tree_64KiB", |b| {
        b.iter(|| {
            digest_chunked_with::<blake3::Hasher, _, _>(
                black_box(&data),
                tree,
                &mut NoSection,
                &mut NeverYield,
            )
        })
    });
    g.finish();
}

/// Seconds of `rounds` runs each of `a` and `b`, interleaved so drift and noise from other
/// processes hit both alike. Returns [best a, best b, median a, median b].
fn ab(rounds: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> [f64; 4] {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        a();
        ta.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        b();
        tb.push(t.elapsed().as_secs_f64());
    }
    [
        pct(&mut ta, 0.0),
        pct(&mut tb, 0.0),
        pct(&mut ta, 0.5),
        pct(&mut tb, 0.5),
    ]
}

/// The `p` quantile (0 = minimum) of `v`.
fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 * p).ceil() as usize)
        .saturating_sub(1)
        .min(v.len() - 1);
    v[i]
}

type HashFn = Box<dyn Fn(&[u8])>;

fn ratio_report() {
    const ROUNDS: usize = 201;
    let data = pattern(MIB);
    println!(
        "\n## simd_chunk throughput ratios (1 MiB buffer, {ROUNDS} interleaved runs per side)\n"
    );
    println!(
        "| algorithm | chunked policy | one-shot MB/s (best) | chunked MB/s (best) | ratio, best runs | ratio, median runs |"
    );
    println!("|---|---|---|---|---|---|");
    let mb = data.len() as f64 / 1e6;
    let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let b3_16k = policy_or_default(16 * 1024);
    let b3_tree = Policy::tree_hash::<blake3::Hasher>();
    let cases: Vec<(&str, &str, HashFn, HashFn)> = vec![
        (
            "SHA-256",
            "default 4 KiB, NeverYield",
            Box::new(|d| sink(Sha256::digest(d))),
            Box::new(|d| sink(digest_chunked::<Sha256>(d, &mut NeverYield))),
        ),
        (
            "SHA-256",
            "default 4 KiB, FlagPreempt (never set)",
            Box::new(|d| sink(Sha256::digest(d))),
            Box::new(move |d| {
                let mut p = FlagPreempt::new(flag, ThreadYield);
                sink(digest_chunked::<Sha256>(d, &mut p))
            }),
        ),
        (
            "SHA-512",
            "default 4 KiB, NeverYield",
            Box::new(|d| sink(Sha512::digest(d))),
            Box::new(|d| sink(digest_chunked::<Sha512>(d, &mut NeverYield))),
        ),
        (
            "BLAKE3",
            "default 4 KiB, NeverYield",
            Box::new(|d| sink(blake3::Hasher::digest(d))),
            Box::new(|d| sink(digest_chunked::<blake3::Hasher>(d, &mut NeverYield))),
        ),
        (
            "BLAKE3",
            "16 KiB, NeverYield",
            Box::new(|d| sink(blake3::Hasher::digest(d))),
            Box::new(move |d| {
                sink(digest_chunked_with::<blake3::Hasher, _, _>(
                    d,
                    b3_16k,
                    &mut NoSection,
                    &mut NeverYield,
                ))
            }),
        ),
        (
            "BLAKE3",
            "Policy::tree_hash (64 KiB), NeverYield",
            Box::new(|d| sink(blake3::Hasher::digest(d))),
            Box::new(move |d| {
                sink(digest_chunked_with::<blake3::Hasher, _, _>(
                    d,
                    b3_tree,
                    &mut NoSection,
                    &mut NeverYield,
                ))
            }),
        ),
    ];
    for (name, policy, one, chunked) in cases {
        let [best_one, best_chunked, med_one, med_chunked] = ab(
            ROUNDS,
            || one(black_box(&data)),
            || chunked(black_box(&data)),
        );
        println!(
            "| {name} | {policy} | {:.0} | {:.0} | {:.3}x | {:.3}x |",
            mb / best_one,
            mb / best_chunked,
            best_one / best_chunked,
            med_one / med_chunked,
        );
    }
}

/// This thread's CPU time in µs. Unlike wall time it excludes the time the OS ran other
/// processes (this 2-core box is shared), so it measures the work done between two checks,
/// which is what a check-interval policy controls.
fn thread_cpu_us() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux and
    // clock_gettime writes only to `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

/// Wraps a `Preempt` and records wall and CPU time between consecutive checks, and wall time
/// between yields. Time spent inside `yield_now` is not counted as a gap.
struct Recorder<P> {
    inner: P,
    last_check: Instant,
    last_check_cpu: f64,
    last_yield: Instant,
    check_gaps: Vec<f64>,
    check_gaps_cpu: Vec<f64>,
    yield_gaps: Vec<f64>,
}

impl<P> Recorder<P> {
    fn new(inner: P) -> Self {
        let now = Instant::now();
        Recorder {
            inner,
            last_check: now,
            last_check_cpu: thread_cpu_us(),
            last_yield: now,
            check_gaps: Vec::new(),
            check_gaps_cpu: Vec::new(),
            yield_gaps: Vec::new(),
        }
    }
}

impl<P: Preempt> Preempt for Recorder<P> {
    fn should_yield(&mut self, work: Work) -> bool {
        let now = Instant::now();
        let cpu = thread_cpu_us();
        self.check_gaps
            .push((now - self.last_check).as_secs_f64() * 1e6);
        self.check_gaps_cpu.push(cpu - self.last_check_cpu);
        self.last_check = now;
        self.last_check_cpu = cpu;
        self.inner.should_yield(work)
    }

    fn yield_now(&mut self) {
        self.yield_gaps
            .push((Instant::now() - self.last_yield).as_secs_f64() * 1e6);
        self.inner.yield_now();
        self.last_yield = Instant::now();
        self.last_check = self.last_yield;
        self.last_check_cpu = thread_cpu_us();
    }
}

fn gap_report_for<D: Digest + BlockSizeUser>(name: &str, data: &[u8]) {
    const TARGET_NS: u64 = 50_000;
    let sample = pattern(256 * 1024);
    let Ok(rate) = calibrate::<D, _>(&MonotonicClock::new(), &sample) else {
        println!("| {name} | calibration failed |");
        return;
    };
    // One interval takes a quarter of the target at the measured rate; the time budget is
    // the rest, so a stretch between yields is about the target.
    let block = <D::BlockSize as Unsigned>::USIZE;
    let Ok(policy) = Policy::for_latency(TARGET_NS / 4, rate, block) else {
        println!("| {name} | policy error |");
        return;
    };
    let step_ns = (policy.interval() as f64 * rate) as u64;
    let budget = TimeBudget::new(
        MonotonicClock::new(),
        TARGET_NS.saturating_sub(step_ns),
        ThreadYield,
    );
    let mut rec = Recorder::new(budget);
    let (out, c) = digest_chunked_with::<D, _, _>(data, policy, &mut NoSection, &mut rec);
    sink(out);
    let (mut wall, mut cpu, mut yg) = (rec.check_gaps, rec.check_gaps_cpu, rec.yield_gaps);
    println!(
        "| {name} | {rate:.3} ns/B -> {} B | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} / {} |",
        policy.interval(),
        pct(&mut wall, 0.5),
        pct(&mut wall, 0.99),
        pct(&mut wall, 1.0),
        pct(&mut cpu, 0.99),
        pct(&mut cpu, 1.0),
        pct(&mut yg, 0.99),
        c.yields,
        c.checks,
    );
}

fn gap_report() {
    let data = pattern(64 * MIB);
    println!(
        "\n## simd_chunk time-budget policy: gaps between yield checks (64 MiB, 50 µs target)\n"
    );
    println!(
        "| algorithm | calibrated step | wall p50 µs | wall p99 µs | wall max µs | CPU p99 µs | CPU max µs | p99 between yields µs | yields / checks |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    gap_report_for::<Sha256>("SHA-256", &data);
    gap_report_for::<Sha512>("SHA-512", &data);
    gap_report_for::<blake3::Hasher>("BLAKE3", &data);
}

type BoxFut = Pin<Box<dyn Future<Output = ()>>>;

/// Runs `hash` (or, for `None`, a 200 ms sleep) on a current-thread runtime while another OS
/// thread sends a timestamped ping every 1 ms over a tokio channel to a task on the runtime.
/// Returns (hash seconds, latencies in ms of the pings sent while hashing). A ping's latency is
/// how long the executor took to get to it: the delay the hashing adds to every other task.
fn ping_during(hash: Option<BoxFut>) -> (f64, Vec<f64>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    else {
        return (0.0, Vec::new());
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let sender = std::thread::spawn(move || {
        while !stop2.load(Ordering::Relaxed) {
            if tx.send(Instant::now()).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let out = rt.block_on(async {
        let lat = Arc::new(Mutex::new(Vec::<(Instant, f64)>::new()));
        let l2 = lat.clone();
        let receiver = tokio::spawn(async move {
            while let Some(sent) = rx.recv().await {
                let ms = sent.elapsed().as_secs_f64() * 1e3;
                if let Ok(mut v) = l2.lock() {
                    v.push((sent, ms));
                }
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let start = Instant::now();
        match hash {
            Some(h) => h.await,
            None => tokio::time::sleep(Duration::from_millis(200)).await,
        }
        let end = Instant::now();
        // Let the pings queued during the hash be received.
        tokio::time::sleep(Duration::from_millis(5)).await;
        receiver.abort();
        let samples = lat
            .lock()
            .map(|v| {
                v.iter()
                    .filter(|(s, _)| *s >= start && *s <= end)
                    .map(|&(_, l)| l)
                    .collect()
            })
            .unwrap_or_default();
        ((end - start).as_secs_f64(), samples)
    });
    stop.store(true, Ordering::Relaxed);
    let _ = sender.join();
    out
}

/// Builds one hashing future of the ping report over `data` (`None`: idle runtime).
type MakeFut = fn(&'static [u8]) -> Option<BoxFut>;

fn ping_report() {
    const ROUNDS: usize = 5;
    let data: &'static [u8] = Box::leak(pattern(256 * MIB).into_boxed_slice());
    println!(
        "\n## simd_chunk async: ping latency while hashing 256 MiB with SHA-256 (tokio current-thread, {ROUNDS} rounds)\n"
    );
    println!(
        "| hashing future | hash time ms (median) | pings per round | p50 ms (median) | p99 ms: median of rounds | p99 ms: best / worst round | median p99 / unchunked |"
    );
    println!("|---|---|---|---|---|---|---|");
    let rows: Vec<(&str, MakeFut)> = vec![
        ("Sha256::digest (unchunked baseline)", |d| {
            Some(Box::pin(async move { sink(Sha256::digest(d)) }))
        }),
        ("none: idle runtime, 200 ms (noise floor)", |_| None),
        ("digest_async (PollBudget 64 KiB)", |d| {
            Some(Box::pin(
                async move { sink(digest_async::<Sha256>(d).await) },
            ))
        }),
        ("Hashing + PollBudget 16 KiB", |d| {
            Some(Box::pin(async move {
                let Ok(p) = PollBudget::new(16 * 1024) else {
                    return;
                };
                sink(Hashing::<Sha256, _>::new(d, Policy::for_digest::<Sha256>(), p).await)
            }))
        }),
        ("Hashing + PollTimeBudget 50 µs", |d| {
            Some(Box::pin(async move {
                let Ok(p) = PollTimeBudget::new(MonotonicClock::new(), 50_000) else {
                    return;
                };
                sink(Hashing::<Sha256, _>::new(d, Policy::for_digest::<Sha256>(), p).await)
            }))
        }),
        ("Hashing + TokioCoop (128 units x 4 KiB)", |d| {
            Some(Box::pin(async move {
                sink(Hashing::<Sha256, _>::new(d, Policy::for_digest::<Sha256>(), TokioCoop).await)
            }))
        }),
    ];
    // results[row] = per-round (time ms, pings, p50, p99); rounds interleave the rows so
    // background load hits all of them alike.
    let mut results: Vec<Vec<[f64; 4]>> = vec![Vec::new(); rows.len()];
    for _ in 0..ROUNDS {
        for (i, (_, make)) in rows.iter().enumerate() {
            let (t, mut s) = ping_during(make(data));
            let n = s.len() as f64;
            results[i].push([t * 1e3, n, pct(&mut s, 0.5), pct(&mut s, 0.99)]);
        }
    }
    let col = |r: &[[f64; 4]], k: usize| -> Vec<f64> { r.iter().map(|x| x[k]).collect() };
    let base_p99 = pct(&mut col(&results[0], 3), 0.5);
    for ((name, _), r) in rows.iter().zip(&results) {
        let mut p99s = col(r, 3);
        let med_p99 = pct(&mut p99s, 0.5);
        println!(
            "| {name} | {:.1} | {:.0} | {:.3} | {med_p99:.3} | {:.3} / {:.3} | {:.4} |",
            pct(&mut col(r, 0), 0.5),
            pct(&mut col(r, 1), 0.5),
            pct(&mut col(r, 2), 0.5),
            pct(&mut p99s, 0.0),
            pct(&mut p99s, 1.0),
            med_p99 / base_p99,
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut c = Criterion::default().configure_from_args();
    throughput(&mut c);
    c.final_summary();
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    ratio_report();
    gap_report();
    ping_report();
}
