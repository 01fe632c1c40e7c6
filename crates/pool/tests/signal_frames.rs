//! No key outlives a signal: a signal delivered at any instruction of a read leaves no piece of
//! any key in the memory its frame was written to, once the read has returned.
//!
//! The kernel writes every register of the interrupted thread (the `xsave` area, up to 2.7 KB
//! with AVX-512) and its `ucontext` below the stack pointer, past the 128-byte red zone, and
//! the handler's own frames go below that; nothing wipes that memory when the handler
//! returns. A read that held a key in a register at that instruction would leave it there,
//! where a child forked later (from any thread), a core dump or any later read of the stack
//! finds it. `scalrand_testkit::trace::signals_at_steps` runs each read in a forked child
//! under `ptrace` to instruction `n` (found in one single-stepped run of the read), delivers
//! `SIGUSR1` (a handler that does nothing) there, lets the read finish and searches the
//! thread's stack (64 KiB below where the read started) and the alternate stack for 16-byte
//! pieces of every key the child derived (either half, or a key word repeated across four
//! lanes). The instructions `n` are spread over the whole read.
//!
//! Covered: the node pools through a slot (4 KiB, 200-byte reads across a refill and from the
//! middle of a batch), the node fallback, and Fortuna in both modes with both PRFs, with the
//! handler on the thread's stack and with it on an alternate stack (`SA_ONSTACK`).
//! `SCALRAND_SIGNAL_TRIALS` sets the signals per scenario and stack (128; 32 in a sampled
//! campaign). rseq off (see `scalrand_testkit::trace`): every section ends as one that a
//! signal interrupted. Optimised builds.

#![cfg(all(
    feature = "fortuna",
    target_os = "linux",
    target_arch = "x86_64",
    target_env = "gnu",
    feature = "std",
    not(miri),
    not(debug_assertions)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::chacha::{__observe_keys, backend};
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, Prf, ReadMode};
use scalrand_pool::numa::{BATCH_LEN, NodePools, Topology};
use scalrand_testkit::campaign;
use scalrand_testkit::trace::{HandlerStack, Marks, keys_of, record_steps, signals_at_steps};

/// Signals per scenario and handler stack, spread evenly over the read's instructions:
/// `SCALRAND_SIGNAL_TRIALS`, else 128, or 32 in a sampled campaign (`SCALRAND_CAMPAIGN=sample`;
/// each is a traced child run to its instruction through a breakpoint: a few milliseconds).
fn trials() -> u64 {
    std::env::var("SCALRAND_SIGNAL_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(campaign::trials(128, 32) as u64)
}

fn run(name: &str, work: &(dyn Fn(&Marks) + Sync)) {
    let keys = keys_of(__observe_keys, work);
    let recorded = record_steps(work);
    let steps = recorded.count();
    assert!(!keys.is_empty() && steps > 100, "{name}: nothing to trace");
    let mut failures = Vec::new();
    let trials = trials();
    for stack in [HandlerStack::Thread, HandlerStack::Alternate] {
        // Evenly spread, each trial offset a little so that runs differ in the low bits.
        let ns: Vec<u64> = (0..trials)
            .map(|k| (k * steps) / trials + (k * 7919) % (steps / trials).max(1))
            .collect();
        let mut exposed = 0;
        let mut delivered = 0;
        let mut first = None;
        for (n, t) in ns
            .iter()
            .zip(signals_at_steps(&keys, work, &recorded, &ns, stack))
        {
            delivered += u64::from(t.signal_at.is_some());
            if t.hit_count > 0 {
                exposed += 1;
                first.get_or_insert((*n, t.signal_at, t.hits[0].clone()));
            }
        }
        eprintln!(
            "{name} on {:?}, handler on the {stack:?} stack: {exposed} of {delivered} signals ({trials} aimed) left a key piece ({} keys, {steps} instructions); first {first:?}",
            backend(),
            keys.len(),
        );
        if exposed > 0 {
            failures.push(format!(
                "{stack:?}: {exposed} of {delivered}, first {first:?}"
            ));
        }
        // A signal is not delivered where the read ran out before its instruction: a run that
        // strayed from the recorded one before that point (a clock read's retry, a copy whose
        // buffer sits at another alignment), so that it passed the address fewer times.
        if delivered < trials - trials / 8 {
            failures.push(format!(
                "{stack:?}: only {delivered} of {trials} signals reached their instruction"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{name} on {:?}: {failures:#?}",
        backend()
    );
}

fn pools() -> NodePools {
    NodePools::from_seed(Topology::from_nodes(vec![vec![0, 1]]), &[9u8; 32]).unwrap()
}

#[test]
fn node_pools_4096_through_a_slot() {
    run("NodePools slot 4096 B", &|m: &Marks| {
        let p = pools();
        let mut buf = vec![0u8; 4096];
        p.fill_bytes(&mut buf);
        m.start();
        p.fill_bytes(&mut buf);
        m.stop();
    });
}

/// Twelve traced 200-byte reads through a slot, after `before` untraced ones.
fn twelve_reads_of_200(name: &str, before: usize) {
    run(name, &|m: &Marks| {
        let p = pools();
        let mut buf = vec![0u8; 200];
        for _ in 0..before {
            p.fill_bytes(&mut buf);
        }
        m.start();
        for _ in 0..12 {
            p.fill_bytes(&mut buf);
        }
        m.stop();
    });
}

#[test]
fn node_pools_200_across_a_refill() {
    // All but about 1 KiB of the first batch, so that the traced reads cross a refill.
    twelve_reads_of_200("NodePools slot 12 × 200 B", (BATCH_LEN - 32 - 1000) / 200);
}

/// Reads from the middle of a batch, no refill: what runs outside every section on each read
/// of a locked slot (the lock, the staleness checks, the copy out of the batch), a stretch
/// short enough for the trials to land on most of its instructions' neighbourhoods.
#[test]
fn node_pools_200_from_the_batch() {
    twelve_reads_of_200("NodePools slot 12 × 200 B, no refill", 1);
}

#[test]
fn node_pools_200_through_the_node() {
    run("NodePools node 200 B", &|m: &Marks| {
        let p = pools();
        let mut buf = vec![0u8; 200];
        p.fill_bytes(&mut buf);
        p.__with_all_slots_busy(|| {
            m.start();
            p.fill_bytes(&mut buf);
            m.stop();
        });
    });
}

fn fortuna<P: Prf>(mode: ReadMode) {
    run(
        &format!("Fortuna {} {mode:?} 300 B", P::NAME),
        &|m: &Marks| {
            let f = Fortuna::<P>::with_prf_and_seed(mode, &[7u8; 32]).unwrap();
            let mut buf = vec![0u8; 300];
            f.fill_bytes(&mut buf);
            m.start();
            f.fill_bytes(&mut buf);
            m.stop();
        },
    );
}

#[test]
fn fortuna_aes_concurrent() {
    fortuna::<Aes256Prf>(ReadMode::Concurrent);
}

#[test]
fn fortuna_aes_locked() {
    fortuna::<Aes256Prf>(ReadMode::Locked);
}

#[test]
fn fortuna_chacha_concurrent() {
    fortuna::<ChaCha20Prf>(ReadMode::Concurrent);
}

#[test]
fn fortuna_chacha_locked() {
    fortuna::<ChaCha20Prf>(ReadMode::Locked);
}
