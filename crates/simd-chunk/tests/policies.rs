//! The shipped `Preempt` implementations and every row of the README's bad-input table.

// Test helpers outside #[test] fns unwrap and assert too; clippy.toml only exempts #[test] bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(all(feature = "std", not(scalrand_loom)))]

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use digest::Digest;
use scalrand_simd_chunk::{
    Chunked, FlagPreempt, FnClock, NeverYield, NoSection, Policy, PolicyError, Preempt, SpinYield,
    ThreadYield, TimeBudget, Work, calibrate, digest_chunked, digest_chunked_with, fill_chunked,
};
use sha2::Sha256;

#[test]
fn never_yield_checks_but_never_yields() {
    let data = vec![1u8; 5 * 4096 + 1];
    let (out, c) = digest_chunked_with::<Sha256, _, _>(
        &data,
        Policy::for_digest::<Sha256>(),
        &mut NoSection,
        &mut NeverYield,
    );
    assert_eq!(out, Sha256::digest(&data));
    assert_eq!((c.checks, c.yields, c.sections, c.fallbacks), (5, 0, 1, 0));
    assert_eq!(c.longest_stretch, data.len() as u64);
}

#[test]
fn flag_set_before_run_yields_once_and_is_cleared() {
    let flag = AtomicBool::new(false);
    let setter = std::thread::scope(|s| s.spawn(|| flag.store(true, Ordering::Relaxed)).join());
    setter.unwrap();
    let yields = Cell::new(0);
    let mut p = FlagPreempt::new(&flag, || yields.set(yields.get() + 1));
    let data = vec![3u8; 10 * 4096];
    assert_eq!(
        digest_chunked::<Sha256>(&data, &mut p),
        Sha256::digest(&data)
    );
    assert_eq!(yields.get(), 1);
    assert!(!flag.load(Ordering::Relaxed));
}

#[test]
fn flag_set_by_another_thread_mid_run_is_seen_at_the_next_check() {
    // The filler hands chunk numbers to a "scheduler" thread, which sets the flag on chunks 2
    // and 5 and acknowledges; each set must produce exactly one yield at the next check.
    let flag = AtomicBool::new(false);
    let (to_sched, sched_rx) = mpsc::channel::<u32>();
    let (ack_tx, ack) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        let flag_ref = &flag;
        s.spawn(move || {
            for chunk in sched_rx {
                if chunk == 2 || chunk == 5 {
                    flag_ref.store(true, Ordering::Relaxed);
                }
                ack_tx.send(()).unwrap();
            }
        });
        let yielded_after = Rc::new(Cell::new(Vec::new()));
        let chunk_no = Rc::new(Cell::new(0u32));
        let (y, n) = (yielded_after.clone(), chunk_no.clone());
        let mut p = FlagPreempt::new(&flag, move || {
            let mut v = y.take();
            v.push(n.get());
            y.set(v);
        });
        let mut buf = vec![0u8; 8 * 1024];
        let c = fill_chunked(
            &mut buf,
            Policy::new(1024).unwrap(),
            &mut NoSection,
            &mut p,
            |_, _| {
                to_sched.send(chunk_no.get()).unwrap();
                ack.recv().unwrap();
                chunk_no.set(chunk_no.get() + 1);
            },
        );
        drop(to_sched);
        assert_eq!(c.yields, 2);
        // Chunk k is followed by check k; the flag set during chunk 2 is seen right after it.
        assert_eq!(yielded_after.take(), vec![3, 6]);
    });
}

/// A fake clock: each reading advances time by `step` ns.
/// A fake clock that moves `step` ns forward at every reading.
fn fake_clock(step: u64) -> FnClock<impl Fn() -> Duration> {
    let t = std::cell::Cell::new(0u64);
    FnClock(move || {
        t.set(t.get() + step);
        Duration::from_nanos(t.get())
    })
}

#[test]
fn time_budget_yields_when_budget_elapsed() {
    // Each check reads the clock once (+10 ns); yield_now reads it once more to restart.
    // Budget 30 ns: construction at 10; checks at 20, 30, 40 -> yes at 40 (30 elapsed),
    // restart at 50; checks at 60, 70, 80 -> yes at 80; ...
    let count = Cell::new(0u32);
    let mut p = TimeBudget::new(fake_clock(10), 30, || count.set(count.get() + 1));
    let mut answers = Vec::new();
    for _ in 0..7 {
        let yes = p.should_yield(Work::new(64, 64));
        answers.push(yes);
        if yes {
            p.yield_now();
        }
    }
    assert_eq!(answers, [false, false, true, false, false, true, false]);
    assert_eq!(count.get(), 2);
}

#[test]
fn time_budget_std_and_thread_yield_run() {
    let data = vec![9u8; 256 * 1024];
    let mut p = TimeBudget::std(std::time::Duration::ZERO);
    let mut section = NoSection;
    let (out, c) = digest_chunked_with::<Sha256, _, _>(
        &data,
        Policy::new(4096).unwrap(),
        &mut section,
        &mut p,
    );
    assert_eq!(out, Sha256::digest(&data));
    // A zero budget yields (thread::yield_now) at every check.
    assert_eq!(c.yields, c.checks);
    assert_eq!(c.checks, 63);
    let mut t = ThreadYield;
    scalrand_simd_chunk::YieldNow::yield_now(&mut t);
    let mut s = SpinYield;
    scalrand_simd_chunk::YieldNow::yield_now(&mut s);
}

#[test]
fn calibrated_policy_from_fake_clock() {
    // 3 runs, each 2 clock readings 1000 ns apart over a 500-byte sample: 2 ns/byte.
    let clock = fake_clock(1000);
    let rate = calibrate::<Sha256, _>(&clock, &[0u8; 500]).unwrap();
    assert_eq!(rate, 2.0);
    // 50 us target at 2 ns/byte = 25_000 bytes, rounded down to 64-byte blocks.
    let p = Policy::for_latency(50_000, rate, 64).unwrap();
    assert_eq!(p.interval(), 24_960);
    // A tiny target still moves one block per check.
    assert_eq!(Policy::for_latency(1, rate, 64).unwrap().interval(), 64);
}

#[test]
fn default_policies_are_block_multiples() {
    assert_eq!(Policy::for_digest::<Sha256>().interval(), 4096);
    assert_eq!(Policy::for_digest::<sha2::Sha512>().block_size(), 128);
    assert_eq!(Policy::for_digest::<sha2::Sha512>().interval(), 4096);
    assert_eq!(Policy::tree_hash::<blake3::Hasher>().interval(), 64 * 1024);
    assert_eq!(Policy::for_block_size(4096, 136).unwrap().interval(), 4216);
}

// ---- Bad-input table (README), one test per row ----

#[test]
fn bad_zero_interval() {
    assert_eq!(Policy::new(0), Err(PolicyError::ZeroInterval));
    assert_eq!(
        Policy::for_block_size(0, 64),
        Err(PolicyError::ZeroInterval)
    );
}

#[test]
fn bad_zero_block_size() {
    assert_eq!(
        Policy::for_block_size(4096, 0),
        Err(PolicyError::ZeroBlockSize)
    );
    assert_eq!(
        Policy::for_latency(1000, 1.0, 0),
        Err(PolicyError::ZeroBlockSize)
    );
}

#[test]
fn bad_interval_overflow() {
    assert_eq!(
        Policy::for_block_size(usize::MAX, 64),
        Err(PolicyError::IntervalOverflow)
    );
}

#[test]
fn bad_zero_target() {
    assert_eq!(
        Policy::for_latency(0, 1.0, 64),
        Err(PolicyError::ZeroTarget)
    );
}

#[test]
fn bad_rate() {
    for r in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(
            Policy::for_latency(1000, r, 64),
            Err(PolicyError::BadRate),
            "{r}"
        );
    }
}

#[test]
fn huge_latency_target_saturates_instead_of_overflowing() {
    let p = Policy::for_latency(u64::MAX, f64::MIN_POSITIVE, 64).unwrap();
    assert_eq!(p.interval() % 64, 0);
    assert!(p.interval() > 0);
}

#[test]
fn bad_calibration_sample() {
    assert_eq!(
        calibrate::<Sha256, _>(&fake_clock(1), &[]),
        Err(PolicyError::EmptySample)
    );
    assert_eq!(
        calibrate::<Sha256, _>(&FnClock(|| Duration::from_nanos(5)), &[0u8; 64]),
        Err(PolicyError::ClockTooCoarse)
    );
}

#[test]
fn backwards_clock_saturates_to_zero_elapsed() {
    let t = std::cell::Cell::new(1_000_000u64);
    let mut p = TimeBudget::new(
        FnClock(move || {
            t.set(t.get() - 10);
            Duration::from_nanos(t.get())
        }),
        5,
        SpinYield,
    );
    assert!(!p.should_yield(Work::new(64, 64)));
}

#[test]
fn empty_input_is_the_empty_digest_without_sections() {
    let (out, c) = digest_chunked_with::<Sha256, _, _>(
        &[],
        Policy::new(1).unwrap(),
        &mut NoSection,
        &mut NeverYield,
    );
    assert_eq!(out, Sha256::digest([]));
    assert_eq!(c, Default::default());
    let mut h = Chunked::<Sha256, _, _>::new(NeverYield);
    h.update(&[]);
    assert_eq!(h.counters().sections, 0);
}

#[test]
fn errors_display() {
    assert_eq!(
        PolicyError::ZeroInterval.to_string(),
        "check interval must be at least one byte"
    );
    let e: &dyn std::error::Error = &PolicyError::BadRate;
    assert!(e.to_string().contains("rate"));
}

#[test]
fn chunked_debug_shows_counters_not_state() {
    let mut h = Chunked::<Sha256, _, _>::new(NeverYield);
    h.update(b"correct horse battery staple");
    let s = format!("{h:?}");
    assert!(
        s.starts_with("Chunked { policy: Policy { interval: 4096"),
        "{s}"
    );
    assert!(s.contains("bytes: 28"), "{s}");
    assert!(!s.contains("Sha256"), "{s}");
}

#[test]
fn calibrated_std_policy_is_a_block_multiple() {
    let p = Policy::calibrated::<sha2::Sha512>(std::time::Duration::from_micros(12)).unwrap();
    assert_eq!(p.block_size(), 128);
    assert_eq!(p.interval() % 128, 0);
    assert!(p.interval() >= 128);
    assert_eq!(
        Policy::calibrated::<Sha256>(std::time::Duration::ZERO),
        Err(PolicyError::ZeroTarget)
    );
}
