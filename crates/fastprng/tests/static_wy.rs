//! `StaticWyRand`: a static per-CPU wyrand whose slots a fork child receives zeroed.
//!
//! Checked here: outputs are distinct across threads; every output of a slot is accounted for
//! under a signal storm that aborts thousands of sections (each restart must recompute from
//! the committed state); and a child forked by `fork()` or by a raw `SYS_fork` (no atfork
//! handler runs) on the same CPU does not continue its parent's stream.
#![cfg(all(feature = "std", target_os = "linux", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

use std::collections::HashSet;

use scalrand_fastprng::{StaticWyRand, WyRand};
use scalrand_testkit::fork::{in_child, libc_fork, raw_fork};
use scalrand_testkit::rseq::unregister_rseq;

/// Whether this process can run the restartable sequence at all (glibc ≥ 2.35 registers rseq
/// for every thread unless the `glibc.pthread.rseq=0` tunable says otherwise).
fn rseq_registered() -> bool {
    let here = scalrand_os::cpu::rseq_cpu().is_some();
    if !here {
        scalrand_testkit::rseq::nothing_to_check("StaticWyRand");
    }
    here
}

#[test]
fn threads_get_distinct_outputs() {
    static RNG: StaticWyRand = StaticWyRand::new();
    if !rseq_registered() {
        assert_eq!(RNG.try_next_u64(), None);
        return;
    }
    let all: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    (0..10_000)
                        .map(|_| RNG.try_next_u64().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(RNG.is_mapped());
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(distinct.len(), all.len());
}

/// A thread without an rseq registration is not served (`None`: bad-input table), while a
/// registered thread of the same process is.
#[test]
fn a_thread_without_rseq_gets_none() {
    static RNG: StaticWyRand = StaticWyRand::new();
    if !rseq_registered() {
        return;
    }
    assert!(RNG.try_next_u64().is_some());
    let served = std::thread::scope(|s| {
        s.spawn(|| {
            if !unregister_rseq() {
                eprintln!("the kernel refused to unregister rseq: nothing to check");
                return None;
            }
            Some((0..100).filter_map(|_| RNG.try_next_u64()).count())
        })
        .join()
        .unwrap()
    });
    if let Some(n) = served {
        assert_eq!(n, 0, "an unregistered thread was served");
    }
}

/// Outputs a slot handed out between states `from` and `to`: `mix(from + k·INC)`, k ≥ 1.
fn stream(from: u64, to: u64) -> common::Multiset {
    let mut m = common::Multiset::default();
    let mut s = from;
    while s != to {
        s = s.wrapping_add(WyRand::INCREMENT);
        m.add(WyRand::mix(s));
    }
    m
}

#[test]
fn signal_storm_loses_and_repeats_nothing() {
    static RNG: StaticWyRand = StaticWyRand::new();
    if !rseq_registered() {
        return;
    }
    let cpu = common::allowed_cpus()[0];
    // Seed the storm's slot first (on its CPU), and note where its stream stands.
    let start = std::thread::scope(|s| {
        s.spawn(|| {
            assert!(common::pin_to(cpu));
            RNG.try_next_u64().unwrap();
            RNG.__slot_state(cpu).unwrap()
        })
        .join()
        .unwrap()
    });
    let (got, aborted) = common::signal_storm(
        &|| RNG.rseq_restarts(),
        // The probe must not draw an output, so that the storm's outputs are the whole stream.
        &|| rseq_registered() && RNG.is_mapped(),
        &|| RNG.try_next_u64().unwrap(),
    );
    assert!(aborted >= 100, "only {aborted} sections aborted");
    let want = stream(start, RNG.__slot_state(cpu).unwrap());
    assert_eq!(
        got, want,
        "the slot's stream and the outputs handed out differ"
    );
}

/// Forks with `fork()` or with a raw `SYS_fork` (no atfork handler runs); the child reads
/// four outputs and sends them through a pipe. The child only steps the generator (seeding it
/// calls getrandom; no allocation, no lock).
fn fork_and_read(raw: bool) -> [u64; 4] {
    let how = if raw { raw_fork } else { libc_fork };
    let ((), child) = in_child(
        how,
        || {
            let mut out = [0u8; 32];
            for x in out.chunks_exact_mut(8) {
                x.copy_from_slice(&FORKED.try_next_u64().unwrap_or(0).to_ne_bytes());
            }
            out
        },
        || (),
    );
    let child = child.expect("the child answered");
    core::array::from_fn(|i| u64::from_ne_bytes(child[i * 8..][..8].try_into().unwrap()))
}

static FORKED: StaticWyRand = StaticWyRand::new();

/// Parent and child on one CPU: with the slot copied into the child, the child's outputs
/// would be exactly the parent's next ones.
#[test]
fn fork_child_does_not_continue_the_parent_stream() {
    if !rseq_registered() {
        return;
    }
    let cpu = common::allowed_cpus()[0];
    std::thread::scope(|s| {
        s.spawn(|| {
            assert!(common::pin_to(cpu));
            let mut children = Vec::new();
            for raw in [false, true, false, true] {
                let _warm = FORKED.try_next_u64().unwrap();
                let before = FORKED.__slot_state(cpu).unwrap();
                let child = fork_and_read(raw);
                assert_eq!(
                    FORKED.__slot_state(cpu).unwrap(),
                    before,
                    "the parent did not step"
                );
                let parent: Vec<u64> = (0..4).map(|_| FORKED.try_next_u64().unwrap()).collect();
                assert!(child.iter().all(|&x| x != 0), "the child was not served");
                assert!(
                    child.iter().all(|x| !parent.contains(x)),
                    "raw = {raw}: the child continued the parent's stream"
                );
                children.push(child);
            }
            // Each child seeds from fresh OS entropy: no two children share a stream either
            // (a child stepping its wiped state from 0 would repeat its siblings').
            let all: HashSet<u64> = children.iter().flatten().copied().collect();
            assert_eq!(all.len(), 4 * children.len(), "two children share outputs");
        });
    });
}
