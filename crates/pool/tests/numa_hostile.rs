//! The node pools in hostile contexts: a fork child whose OS entropy is denied, and signal
//! handlers that read while the thread they interrupted is inside a read.
//!
//! - **Denied entropy** (Linux x86_64; node pools and Fortuna): a seccomp filter in each fork
//!   child makes
//!   `getrandom(2)` and `open`/`openat` (the `/dev/urandom` fallback) fail with `EPERM`, as a
//!   sandbox may. A child that answered anyway could only use what it inherited, which its
//!   siblings share: the pools must refuse (`try_fill_bytes` errors, `fill_bytes` panics).
//! - **Signal storms**: readers hammered by `SIGUSR1` whose handler reads too, run in a child
//!   process with a deadline, with glibc's rseq registration on and off
//!   (`GLIBC_TUNABLES=glibc.pthread.rseq=0`, the path of every target without the rseq fast
//!   path). A read must never wait for a lock its own thread holds.

#![cfg(all(feature = "fortuna", target_os = "linux", feature = "std", not(miri)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::numa::{NodePools, Topology};
#[cfg(target_arch = "x86_64")]
use scalrand_testkit::fork::in_child;
use scalrand_testkit::{cli, fork, fork::libc_fork};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn topology() -> Topology {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    Topology::from_nodes(vec![(0..cpus).collect()])
}

/// Room for what a child reports (at most a 12-byte verdict and a 300-byte read).
#[cfg(target_arch = "x86_64")]
const REPORT: usize = 1024;

/// Runs `f` in a child of libc's `fork()` ([`in_child`]); what `f` reports goes into a buffer
/// allocated before the fork, which the child sends back. `None` if the child failed.
#[cfg(target_arch = "x86_64")]
fn reported_by_child(f: impl FnOnce(&mut dyn FnMut(&[u8]))) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(REPORT);
    let ((), got) = in_child(
        libc_fork,
        move || {
            f(&mut |b: &[u8]| out.extend_from_slice(b));
            out
        },
        || (),
    );
    got
}

/// Children whose OS entropy is denied refuse to answer instead of repeating each other:
/// both through the wipe-on-fork slots and through the heap fallback (what a system without
/// wipe-on-fork memory, or an emulator, runs), for a small read (the rseq path where it runs)
/// and a large one.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_fork_child_without_entropy_refuses_to_answer() {
    use scalrand_pool::numa::NumaError;
    for heap in [false, true] {
        let pools = if heap {
            NodePools::__new_on_heap(topology()).unwrap()
        } else {
            NodePools::new(topology()).unwrap()
        };
        // The parent reads first, so every slot holds a key a child inherits (or finds wiped).
        let mut warm = [0u8; 32];
        for _ in 0..100 {
            pools.fill_bytes(&mut warm);
        }
        for len in [16usize, 32, 300] {
            let mut answers = Vec::new();
            for _ in 0..3 {
                let out = reported_by_child(|report| {
                    scalrand_testkit::seccomp::deny_entropy();
                    let mut b = vec![0u8; len];
                    match pools.try_fill_bytes(&mut b) {
                        Err(NumaError::Entropy(_)) => report(b"refused;"),
                        Err(_) => report(b"other error;"),
                        Ok(()) => report(b"answered;"),
                    }
                    std::panic::set_hook(Box::new(|_| {}));
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        pools.fill_bytes(&mut b);
                    })) {
                        Ok(()) => report(&b),
                        Err(_) => report(b"panicked"),
                    }
                });
                answers.push(out.expect("the child exited after its report"));
            }
            for a in &answers {
                assert_eq!(
                    a.as_slice(),
                    b"refused;panicked",
                    "heap {heap}, {len} B: a child without entropy answered ({} bytes)",
                    a.len()
                );
            }
        }
        // The parent is unaffected.
        let mut a = [0u8; 32];
        pools.try_fill_bytes(&mut a).unwrap();
        assert_ne!(a, warm);
    }
}

/// Fortuna's fork path fails closed the same way, in both read modes and with both PRFs.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_fortuna_fork_child_without_entropy_refuses_to_answer() {
    use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, FortunaError, ReadMode};
    fn check<P: scalrand_pool::fortuna::Prf>(mode: ReadMode) {
        let f = Fortuna::<P>::with_prf(mode).unwrap();
        let mut warm = [0u8; 32];
        f.fill_bytes(&mut warm);
        let out = reported_by_child(|report| {
            scalrand_testkit::seccomp::deny_entropy();
            let mut b = [0u8; 32];
            match f.try_fill_bytes(&mut b) {
                Err(FortunaError::Entropy(_)) => report(b"refused;"),
                Err(_) => report(b"other error;"),
                Ok(()) => report(b"answered;"),
            }
            std::panic::set_hook(Box::new(|_| {}));
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.fill_bytes(&mut b))) {
                Ok(()) => report(&b),
                Err(_) => report(b"panicked"),
            }
        })
        .expect("the child exited after its report");
        assert_eq!(
            out.as_slice(),
            b"refused;panicked",
            "{} {mode:?}: a child without entropy answered",
            P::NAME
        );
        f.try_fill_bytes(&mut warm).unwrap();
    }
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        check::<Aes256Prf>(mode);
        check::<ChaCha20Prf>(mode);
    }
}

static POOLS: OnceLock<NodePools> = OnceLock::new();
static HANDLER_LEN: AtomicUsize = AtomicUsize::new(16);
static HANDLED: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    if let Some(p) = POOLS.get() {
        let mut b = [0u8; 512];
        let len = HANDLER_LEN.load(Ordering::Relaxed).min(b.len());
        p.fill_bytes(&mut b[..len]);
        HANDLED.fetch_add(1, Ordering::Relaxed);
    }
}

/// The storm itself, run by `signal_handlers_that_read_never_hang` in a child process with a
/// deadline (`SCALRAND_STORM_LEN` sets the handler's read length). Ignored on its own.
#[test]
#[ignore = "run by signal_handlers_that_read_never_hang in a child process"]
fn signal_storm() {
    let len: usize = std::env::var("SCALRAND_STORM_LEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(112);
    storm(len);
}

/// Readers on three threads, `SIGUSR1` sent to them for 1.5 s (0.5 s in a sampled campaign,
/// `SCALRAND_CAMPAIGN=sample`) and until more than 100 handler reads have run (at most 20 s:
/// an emulated machine on a busy host delivers a few dozen a second), a handler that reads
/// `len` bytes.
fn storm(len: usize) {
    HANDLER_LEN.store(len, Ordering::Relaxed);
    let p = POOLS.get_or_init(|| NodePools::new(topology()).unwrap());
    // SAFETY: installs `on_signal` for SIGUSR1 (SA_RESTART so the readers' own calls resume).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
    let stop = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    let tids = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for w in 0..3 {
            let (stop, reads, tids) = (&stop, &reads, &tids);
            s.spawn(move || {
                // SAFETY: no preconditions.
                tids.lock().unwrap().push(unsafe { libc::pthread_self() });
                let mut b = [0u8; 400];
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    let n = [16usize, 112, 304, 48][(i + w) % 4];
                    p.fill_bytes(&mut b[..n]);
                    i += 1;
                }
                reads.fetch_add(i, Ordering::Relaxed);
            });
        }
        let least = Duration::from_millis(scalrand_testkit::campaign::trials(1500, 500) as u64);
        let start = Instant::now();
        while start.elapsed() < least
            || (HANDLED.load(Ordering::Relaxed) <= 100 && start.elapsed() < Duration::from_secs(20))
        {
            for &t in tids.lock().unwrap().iter() {
                // SAFETY: the readers live until `stop`; SIGUSR1 has a handler.
                unsafe { libc::pthread_kill(t, libc::SIGUSR1) };
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    let handled = HANDLED.load(Ordering::Relaxed);
    eprintln!(
        "{} reads, {handled} handler reads, {} keyed from the OS",
        reads.load(Ordering::Relaxed),
        p.__os_keyed_reads()
    );
    // Signals to one thread coalesce while one is pending: how many run depends on the
    // scheduler. Hundreds interrupted reads; what matters is that the process finished.
    assert!(handled > 100, "the handlers ran");
}

/// Runs `signal_storm` in child processes (handler reads of 16, 112 and 304 bytes; rseq on
/// and off) and fails if one does not finish within a deadline beyond its storm's 20 s cap.
#[test]
fn signal_handlers_that_read_never_hang() {
    let exe = std::env::current_exe().unwrap();
    for tunables in ["", "glibc.pthread.rseq=0"] {
        for len in [16usize, 112, 304] {
            let mut child = Command::new(&exe)
                .args(["--exact", "signal_storm", "--ignored", "--nocapture"])
                .env("SCALRAND_STORM_LEN", len.to_string())
                .env("GLIBC_TUNABLES", tunables)
                .spawn()
                .unwrap();
            let status = cli::wait_within(&mut child, Duration::from_secs(45));
            if status.and_then(|s| s.code()) == Some(127) {
                // This binary cannot be executed again (a user-mode emulator without a
                // binfmt handler): run the storm in a forked child instead, once per length
                // (no GLIBC_TUNABLES there; such emulators run without rseq anyway).
                if tunables.is_empty() {
                    storm_in_fork(len);
                }
                continue;
            }
            let status = status.unwrap_or_else(|| {
                panic!("handler reads of {len} B with GLIBC_TUNABLES={tunables:?}: hung")
            });
            assert!(
                status.success(),
                "handler reads of {len} B with GLIBC_TUNABLES={tunables:?}: {status}"
            );
        }
    }
}

/// [`storm`] in a forked child, with a deadline of 60 s.
fn storm_in_fork(len: usize) {
    // The child runs the storm and leaves with `_exit`.
    let pid = libc_fork();
    assert!(pid >= 0);
    if pid == 0 {
        let ok = std::panic::catch_unwind(|| storm(len)).is_ok();
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let status = fork::wait_within(pid, Duration::from_secs(60))
        .unwrap_or_else(|| panic!("handler reads of {len} B in a forked child: hung"));
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "handler reads of {len} B in a forked child: status {status:#x}"
    );
}
