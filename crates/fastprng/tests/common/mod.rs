//! Shared by the per-CPU generator tests: CPU pinning, an order-independent output multiset,
//! and the signal storm that makes the kernel abort restartable sequences.
#![allow(dead_code)] // each test binary uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
// The signal storm's (Linux; whether rseq runs is asked at run time).
#[cfg(target_os = "linux")]
use std::{
    sync::{Barrier, atomic::AtomicBool},
    time::{Duration, Instant},
};

#[cfg(target_os = "linux")]
pub use scalrand_testkit::cpu::pin_to;

/// Counts a worker as finished even if it panics, so the signaller stops.
pub struct Done<'a>(&'a AtomicUsize);
impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(target_os = "linux")]
pub use scalrand_testkit::cpu::allowed_cpus;

/// Order-independent fingerprint of a multiset of outputs: count, wrapping sum, and wrapping
/// sum of a bijective mix. A lost, repeated or foreign output changes it (the two sums cancel
/// together only by accident, with probability about 2^-64).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Multiset {
    pub count: u64,
    pub sum: u64,
    pub mixed: u64,
}

impl Multiset {
    pub fn add(&mut self, x: u64) {
        // SplitMix64's finaliser: a bijection that is not linear over the integers.
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        self.count += 1;
        self.sum = self.sum.wrapping_add(x);
        self.mixed = self.mixed.wrapping_add(z);
    }
    pub fn merge(&mut self, o: Multiset) {
        self.count += o.count;
        self.sum = self.sum.wrapping_add(o.sum);
        self.mixed = self.mixed.wrapping_add(o.mixed);
    }
}

/// A signal or a preemption that lands inside a restartable sequence aborts it. Three workers
/// share one CPU (so they preempt each other) while a thread on another CPU bombards them with
/// signals, until the kernel has aborted 5,000 sections (`restarts() - before`) or 30 s pass.
/// Every worker calls `step` (which must take the rseq path: `on_rseq` says so) and the
/// outputs' multiset is returned with the number of aborts; the caller asserts enough aborts
/// and compares the multiset with the slots' streams.
#[cfg(target_os = "linux")]
pub fn signal_storm(
    restarts: &(dyn Fn() -> u64 + Sync),
    on_rseq: &(dyn Fn() -> bool + Sync),
    step: &(dyn Fn() -> u64 + Sync),
) -> (Multiset, u64) {
    extern "C" fn ignore_signal(_: libc::c_int) {}
    const WORKERS: usize = 3;
    const TARGET_RESTARTS: u64 = 5_000;
    let deadline = Duration::from_secs(30);
    let cpus = allowed_cpus();
    let work_cpu = cpus[0];
    let signal_cpu = *cpus.last().unwrap();
    // SAFETY: installs a handler that does nothing, with SA_RESTART, for SIGUSR1.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = ignore_signal as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
    let before = restarts();
    let stop = AtomicBool::new(false);
    let finished = AtomicUsize::new(0);
    let barrier = Barrier::new(WORKERS + 1);
    let (tx, rx) = std::sync::mpsc::channel::<libc::pthread_t>();
    let got: Multiset = std::thread::scope(|s| {
        let (stop, finished, barrier) = (&stop, &finished, &barrier);
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let tx = tx.clone();
                s.spawn(move || {
                    assert!(pin_to(work_cpu));
                    assert!(on_rseq(), "the storm needs the rseq path");
                    // SAFETY: pthread_self has no preconditions.
                    tx.send(unsafe { libc::pthread_self() }).unwrap();
                    barrier.wait();
                    let _done = Done(finished);
                    let mut m = Multiset::default();
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..1024 {
                            m.add(step());
                        }
                    }
                    m
                })
            })
            .collect();
        drop(tx);
        let targets: Vec<libc::pthread_t> = (0..WORKERS).map(|_| rx.recv().unwrap()).collect();
        s.spawn(move || {
            assert!(pin_to(signal_cpu));
            barrier.wait();
            let start = Instant::now();
            while finished.load(Ordering::Relaxed) < WORKERS {
                for &t in &targets {
                    // SAFETY: the targets stay alive until `finished` reaches WORKERS, and
                    // SIGUSR1 has a no-op handler.
                    unsafe { libc::pthread_kill(t, libc::SIGUSR1) };
                }
                if restarts() - before >= TARGET_RESTARTS || start.elapsed() > deadline {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        });
        let mut all = Multiset::default();
        for h in workers {
            all.merge(h.join().unwrap());
        }
        all
    });
    (got, restarts() - before)
}
