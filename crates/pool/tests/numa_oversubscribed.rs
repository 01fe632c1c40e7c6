//! `NodePools` with more threads than CPUs: a refill that a preempted (here: stopped) thread
//! is in the middle of delays no other reader of its CPU, and 64 reading threads per CPU make
//! no read keyed from the OS and repeat no output.
#![cfg(all(feature = "std", target_os = "linux", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use scalrand_pool::chacha::__observe_keys;
use scalrand_pool::numa::{NodePools, Topology};
use scalrand_testkit::cpu::{configured, current, pin_to};

thread_local! {
    /// Set on the thread whose next derived key stops it (once).
    static STOP_HERE: Cell<bool> = const { Cell::new(false) };
}

/// The stopped thread's state: whether it is stopped, whether it may go on.
static STOPPED: Mutex<(bool, bool)> = Mutex::new((false, false));
static WAKE: Condvar = Condvar::new();

/// The key observer: stops the thread that set `STOP_HERE` at the first key it derives (inside
/// a refill: after the slot key was taken and block 0 computed), until it is let go. Every
/// other thread passes.
fn stop_once(_key: &[u8; 32]) {
    if !STOP_HERE.with(|s| s.replace(false)) {
        return;
    }
    let mut g = STOPPED.lock().unwrap();
    g.0 = true;
    WAKE.notify_all();
    while !g.1 {
        g = WAKE.wait(g).unwrap();
    }
}

/// A thread stopped in the middle of a refill (it took its CPU's slot key and holds it while it
/// sleeps, as a preempted one would) delays no other thread of that CPU: 20,000 reads there,
/// many refills' worth, are all served by the rseq path, none by the locked path or the OS.
/// Before the refill took no lock, the second thread found the slot claimed and every one of
/// its refills left the rseq path.
#[test]
fn a_refill_stopped_midway_delays_no_other_reader_of_its_cpu() {
    let p = NodePools::from_seed(
        Topology::from_nodes(vec![(0..configured()).collect()]),
        &[9; 32],
    )
    .unwrap();
    if p.__rseq_reads().is_none() {
        scalrand_testkit::rseq::nothing_to_check("a stopped rseq refill");
        return;
    }
    let cpu = std::thread::spawn(current).join().unwrap();
    __observe_keys(Some(stop_once));
    std::thread::scope(|s| {
        let stopped = s.spawn(|| {
            assert!(pin_to(cpu));
            // Warm the slot (its key cell is full after the first refill), then stop in the
            // next refill.
            let mut b = [0u8; 32];
            for _ in 0..200 {
                p.fill_bytes(&mut b);
            }
            STOP_HERE.with(|s| s.set(true));
            for _ in 0..200 {
                p.fill_bytes(&mut b);
            }
        });
        {
            let mut g = STOPPED.lock().unwrap();
            while !g.0 {
                g = WAKE.wait_timeout(g, Duration::from_secs(20)).unwrap().0;
                assert!(
                    !stopped.is_finished(),
                    "the thread never stopped in a refill"
                );
            }
        }
        let (rseq_before, left_before, os_before) = (
            p.__rseq_reads().unwrap(),
            p.__left_rseq_reads(),
            p.__os_keyed_reads(),
        );
        s.spawn(|| {
            assert!(pin_to(cpu));
            let mut b = [0u8; 32];
            for _ in 0..20_000 {
                p.fill_bytes(&mut b);
            }
        })
        .join()
        .unwrap();
        let served = p.__rseq_reads().unwrap() - rseq_before;
        let left = p.__left_rseq_reads() - left_before;
        let os = p.__os_keyed_reads() - os_before;
        {
            let mut g = STOPPED.lock().unwrap();
            g.1 = true;
            WAKE.notify_all();
        }
        stopped.join().unwrap();
        __observe_keys(None);
        // The stopped thread's read in flight may count once on either side of the window.
        assert!(
            served >= 20_000 && left == 0 && os == 0,
            "while a refill was stopped: {served} of 20000 reads served by the rseq path, \
             {left} left it, {os} keyed from the OS"
        );
    });
}

/// 64 threads per CPU read 16 bytes at a time, 10^7 reads in all: none is keyed from the OS,
/// no 16-byte output repeats, and hardly any leaves the rseq path. Preemption lands inside refills all the time here (most of a
/// CPU's time is keystream generation); before refills took no lock, the readers of a CPU
/// whose refiller was preempted went to the locked slots, the node and then the OS.
#[test]
fn sixty_four_threads_per_cpu_make_no_os_keyed_read_and_repeat_nothing() {
    let p = NodePools::new(Topology::detect()).unwrap();
    let threads = 64 * std::thread::available_parallelism().map_or(2, |n| n.get());
    let total = if cfg!(debug_assertions) {
        2_000_000
    } else {
        10_000_000
    };
    let per_thread = total / threads;
    let go = AtomicBool::new(false);
    let mut outputs: Vec<u128> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (p, go) = (&p, &go);
                s.spawn(move || {
                    while !go.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    let mut v = Vec::with_capacity(per_thread);
                    let mut b = [0u8; 16];
                    for _ in 0..per_thread {
                        p.fill_bytes(&mut b);
                        v.push(u128::from_le_bytes(b));
                    }
                    v
                })
            })
            .collect();
        go.store(true, Ordering::Release);
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let n = outputs.len();
    outputs.sort_unstable();
    outputs.dedup();
    let os = p.__os_keyed_reads();
    let left = p.__left_rseq_reads();
    let derivations: usize = p.node_stats().iter().map(|s| s.key_derivations).sum();
    eprintln!(
        "{threads} threads, {n} reads: {os} keyed from the OS, {left} left the rseq path, \
         {derivations} keys derived from the nodes"
    );
    assert_eq!(
        outputs.len(),
        n,
        "{} repeated 16-byte outputs",
        n - outputs.len()
    );
    if p.__rseq_reads().is_none() {
        // The locked slots (rseq off, or no wipe-on-fork memory) still send a read to the OS
        // when a preempted thread holds the slot and node locks it needs: hundreds to a few
        // thousand in 10^7 reads here. That path's promise is only the uniqueness above.
        scalrand_testkit::rseq::nothing_to_check("OS-keyed reads of the rseq path");
        return;
    }
    assert_eq!(os, 0, "reads keyed from the OS");
    // A read leaves the rseq path (for the locked slots, not the OS) only when a refill finds
    // no key in its CPU's slot (another refill took it and was preempted before putting the
    // next one back) and the node's lock is held by a preempted thread too, or when no frame
    // is free: rare events, not one per preemption (none in 10^7 reads on 2 CPUs, 0.1% with
    // 1024 threads on 16 CPUs sharing one node). Before refills took no lock, 2.7% of these
    // reads left it on 2 CPUs.
    assert!(left <= n / 100, "{left} of {n} reads left the rseq path");
}
