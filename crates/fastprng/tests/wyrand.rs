//! `WyRand` against an independent implementation (the `fastrand` crate's wyrand), and
//! `PerCpuWyRand`'s single-store rseq step against the Rust engine on a pinned CPU, plus exact
//! accounting of every output under contention.
#![cfg(feature = "std")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::HashMap;

mod common;

// The rseq tests' (Linux; whether rseq runs is asked at run time).
#[cfg(target_os = "linux")]
use scalrand_fastprng::FastPath;
use scalrand_fastprng::{Error, PerCpuWyRand, WyRand};

#[test]
fn reference_matches_fastrand() {
    for seed in [0u64, 1, 7, 0xdead_beef, u64::MAX, 0x2d35_8dcc_aa6c_78a5] {
        let mut ours = WyRand::from_state(seed);
        let mut theirs = fastrand::Rng::with_seed(seed);
        for i in 0..1000 {
            assert_eq!(ours.next_raw(), theirs.u64(..), "seed {seed:#x} output {i}");
        }
    }
}

#[test]
fn debug_hides_the_state() {
    assert_eq!(format!("{:?}", WyRand::from_state(42)), "WyRand { .. }");
}

/// The single-store assembly step on one pinned CPU produces exactly that CPU's slot stream:
/// slot `cpu` starts at the master's `cpu`-th output.
#[cfg(target_os = "linux")]
#[test]
#[cfg_attr(
    miri,
    ignore = "inline assembly and sched_setaffinity are outside miri"
)]
fn rseq_step_is_bit_exact_on_a_pinned_cpu() {
    if scalrand_os::cpu::rseq_cpu().is_none() {
        scalrand_testkit::rseq::nothing_to_check("PerCpuWyRand bit-exactness");
        return;
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            let cpus = std::thread::available_parallelism().unwrap().get();
            let p = PerCpuWyRand::with_cpus(WyRand::from_state(99), 64.max(cpus)).unwrap();
            // SAFETY: no preconditions.
            let cpu = unsafe { libc::sched_getcpu() } as usize;
            assert!(common::pin_to(cpu));
            assert_eq!(p.fast_path(), FastPath::Rseq);
            let mut master = WyRand::from_state(99);
            for _ in 0..cpu {
                master.next_raw();
            }
            let mut want = WyRand::from_state(master.next_raw());
            for i in 0..10_000 {
                assert_eq!(p.next_u64(), want.next_raw(), "output {i}");
            }
        });
    });
}

/// Threads hammer one instance on both paths; every output is accounted for exactly: each
/// slot walked `k` steps from its start, and the outputs are exactly those prefixes.
fn exact_accounting(p: PerCpuWyRand, master: u64) {
    let threads = 4;
    let per = 20_000;
    let outs: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = &p;
                s.spawn(move || {
                    let mut v = Vec::with_capacity(per);
                    for i in 0..per {
                        if (i + t) % 7 == 0 {
                            let mut b = [0u64; 3];
                            p.fill_u64(&mut b);
                            v.extend_from_slice(&b);
                        } else {
                            v.push(p.next_u64());
                        }
                    }
                    v
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let draws = p.overflow_draws();
    let mut p = p;
    let finals = p.slot_states();
    let mut m = WyRand::from_state(master);
    let mut got: HashMap<u64, usize> = HashMap::new();
    for &x in &outs {
        *got.entry(x).or_default() += 1;
    }
    let mut from_slots = 0usize;
    for fin in finals {
        let mut r = WyRand::from_state(m.next_raw());
        while r.state() != fin {
            let x = r.next_raw();
            let c = got
                .get_mut(&x)
                .filter(|c| **c > 0)
                .expect("a slot output was never handed out, or handed out twice");
            *c -= 1;
            from_slots += 1;
            assert!(
                from_slots <= outs.len(),
                "a slot stepped more than calls made"
            );
        }
    }
    // What is left came from the overflow stream (callers that found every slot busy for
    // BUSY_SWEEPS sweeps, as a preempted holder under a sanitizer makes happen): one word per
    // `next_u64`, two words per `fill_u64` of three. Nothing else may be left over.
    let extra = outs.len() - from_slots;
    eprintln!("{from_slots} outputs from slots, {extra} from {draws} overflow draws");
    assert!(
        extra <= 2 * draws as usize && (extra == 0) == (draws == 0),
        "{extra} outputs not from any slot, {draws} overflow draws"
    );
    assert!(got.values().all(|&c| c <= 1), "an overflow output repeated");
}

#[test]
#[cfg_attr(miri, ignore = "too slow under miri")]
fn contention_exact_accounting() {
    exact_accounting(
        PerCpuWyRand::with_cpus(WyRand::from_state(5), 2).unwrap(),
        5,
    );
}

#[test]
#[cfg_attr(miri, ignore = "too slow under miri")]
fn forced_try_lock_exact_accounting() {
    let p = PerCpuWyRand::with_cpus(WyRand::from_state(6), 2)
        .unwrap()
        .force_try_lock();
    exact_accounting(p, 6);
}

#[test]
fn bad_inputs() {
    let m = WyRand::from_state(1);
    assert_eq!(
        PerCpuWyRand::with_cpus(m.clone(), 0).unwrap_err(),
        Error::NoSlots
    );
    assert!(matches!(
        PerCpuWyRand::with_cpus(m.clone(), scalrand_fastprng::MAX_CPUS + 1),
        Err(Error::TooManySlots { .. })
    ));
    let p = PerCpuWyRand::with_cpus(m, 1).unwrap().force_try_lock();
    assert_eq!(
        p.with_cpu(1, |r| r.next_raw()),
        Err(Error::CpuOutOfRange { cpu: 1, cpus: 1 })
    );
    // Re-entrant use returns (typed error or overflow stream), never spins.
    let (nested, a, b) = p
        .with_cpu(0, |_| {
            (p.with_cpu(0, |r| r.next_raw()), p.next_u64(), p.next_u64())
        })
        .unwrap();
    assert_eq!(nested, Err(Error::SlotsBusy));
    assert_ne!(a, b);
    let s = p.with_cpu(0, |_| p.with_current(|r| r.next_raw())).unwrap();
    let _ = s;
    let mut empty: [u8; 0] = [];
    p.fill_bytes(&mut empty);
}

/// The single-store section under the signal storm of `common::signal_storm`: at least 100
/// aborts, then the outputs' multiset equals the slots' streams exactly. (A one-word state has
/// no torn intermediate to plant a bug in: a store moved before the `add` fails this test
/// without any abort, as every output then repeats.)
#[cfg(target_os = "linux")]
#[test]
#[cfg_attr(miri, ignore = "signals and pthread_kill are outside miri")]
fn signals_abort_sections_without_losing_or_repeating() {
    if scalrand_os::cpu::rseq_cpu().is_none() {
        scalrand_testkit::rseq::nothing_to_check("PerCpuWyRand under signals");
        return;
    }
    let mut p = PerCpuWyRand::new(WyRand::from_state(14)).unwrap();
    let (got, restarts) = {
        let p = &p;
        common::signal_storm(
            &|| p.rseq_restarts(),
            &|| p.fast_path() == FastPath::Rseq,
            &|| p.next_u64(),
        )
    };
    assert!(restarts >= 100, "only {restarts} sections were aborted");
    let mut want = common::Multiset::default();
    let mut m = WyRand::from_state(14);
    let cpus = p.cpus();
    for fin in p.slot_states().into_iter().take(cpus) {
        let mut r = WyRand::from_state(m.next_raw());
        while r.state() != fin {
            want.add(r.next_raw());
            assert!(
                want.count <= got.count,
                "a slot stepped more often than calls were made"
            );
        }
    }
    assert_eq!(got, want, "outputs handed out != the slots' streams");
    eprintln!("{restarts} restarts, {} outputs accounted for", got.count);
}
