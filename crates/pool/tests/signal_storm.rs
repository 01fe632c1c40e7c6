//! Signals at random intervals of 0.5 to 5 µs on a thread that reads, with rseq on: when the
//! reads stop, the reading thread's stack holds no piece of any key the reads derived.
//!
//! The companion of `signal_frames.rs`, which places one signal at chosen instructions under
//! `ptrace` but must run without rseq. Here the thread keeps its rseq registration, so every
//! section ends as it does in production: with the short wipe when its rseq watch says
//! nothing interrupted it, with the wipe that reaches past a signal frame when something did
//! (`scalrand_os::signal::Watch`). A watch that missed a signal leaves that signal's frame,
//! with the registers of the interrupted section, below the short wipe, where this test finds
//! it. Reads: node pools (32 B through the rseq path, 200 B through the locked slots, 4 KiB)
//! and Fortuna (both PRFs, Concurrent and Locked, 300 B). Optimised builds.

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
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, ReadMode};
use scalrand_pool::numa::{NodePools, Topology};
use scalrand_testkit::trace::find_key_pieces;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

static KEYS: Mutex<Vec<[u8; 32]>> = Mutex::new(Vec::new());
static SIGNALS: AtomicUsize = AtomicUsize::new(0);

fn observe(k: &[u8; 32]) {
    KEYS.lock().unwrap_or_else(|e| e.into_inner()).push(*k);
}

extern "C" fn count(_: libc::c_int) {
    SIGNALS.fetch_add(1, Ordering::Relaxed);
}

/// Signals the storm lasts for at least (the test checks that more than 1,000 landed).
const MIN_SIGNALS: usize = 4000;

/// Bytes of the reader's stack searched: everything below where it started reading, down to
/// this depth.
const DEPTH: usize = 64 << 10;

#[test]
fn no_key_survives_a_signal_storm() {
    // SAFETY: an all-zero sigaction with an extern "C" fn(c_int) handler.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = count as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        assert_eq!(
            libc::sigaction(libc::SIGUSR1, &raw const sa, core::ptr::null_mut()),
            0
        );
    }
    __observe_keys(Some(observe));
    let pools = NodePools::new(Topology::from_nodes(vec![vec![0, 1]])).unwrap();
    let aes_c = Fortuna::<Aes256Prf>::with_prf(ReadMode::Concurrent).unwrap();
    let aes_l = Fortuna::<Aes256Prf>::with_prf(ReadMode::Locked).unwrap();
    let chacha_c = Fortuna::<ChaCha20Prf>::with_prf(ReadMode::Concurrent).unwrap();
    let chacha_l = Fortuna::<ChaCha20Prf>::with_prf(ReadMode::Locked).unwrap();
    let done = AtomicBool::new(false);
    let parked = Barrier::new(2);
    let scanned = Barrier::new(2);
    let top = AtomicUsize::new(0);
    let tid = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            // SAFETY: pthread_self has no preconditions.
            tid.store(unsafe { libc::pthread_self() } as usize, Ordering::Release);
            read_loop(
                &pools,
                [&aes_c, &aes_l],
                [&chacha_c, &chacha_l],
                &top,
                &done,
            );
            parked.wait();
            scanned.wait();
        });
        // The signaller: SIGUSR1 to the reader every 0.5 to 5 µs until it is done.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        while tid.load(Ordering::Acquire) == 0 {
            std::hint::spin_loop();
        }
        let t = tid.load(Ordering::Acquire) as libc::pthread_t;
        while !done.load(Ordering::Acquire) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let wait = Duration::from_nanos(500 + x % 4500);
            let until = Instant::now() + wait;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            // SAFETY: the reader thread is alive until it passes `scanned`, after `done`.
            unsafe { libc::pthread_kill(t, libc::SIGUSR1) };
        }
        parked.wait();
        // The reader is parked in the barrier, its reads over: search its stack below where
        // it started reading (the barrier's own frames are near that point, above the area).
        let top = top.load(Ordering::Acquire);
        let base = top - DEPTH;
        let mut mem = vec![0u8; DEPTH - 1024];
        for (i, b) in mem.iter_mut().enumerate() {
            // SAFETY: the reader's stack (2 MiB), below its parked frames; volatile, as the
            // memory is another thread's.
            *b = unsafe { core::ptr::read_volatile((base + i) as *const u8) };
        }
        __observe_keys(None);
        let keys = KEYS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let found = find_key_pieces(&mem, base as u64, &keys);
        let signals = SIGNALS.load(Ordering::Relaxed);
        eprintln!(
            "{:?}: {signals} signals, {} keys derived, {} key pieces left on the reader's stack, first {:?}",
            backend(),
            keys.len(),
            found.hit_count,
            found.hits.first()
        );
        scanned.wait();
        reader.join().unwrap();
        assert!(signals > 1000, "only {signals} signals landed");
        assert!(
            found.hit_count == 0,
            "{:?}: {} key pieces on the reader's stack after the storm: {:#?}",
            backend(),
            found.hit_count,
            found.hits
        );
    });
}

/// Reads for 0.4 s, rotating through the paths; records the stack address it started at.
#[inline(never)]
fn read_loop(
    pools: &NodePools,
    aes: [&Fortuna<Aes256Prf>; 2],
    chacha: [&Fortuna<ChaCha20Prf>; 2],
    top: &AtomicUsize,
    done: &AtomicBool,
) {
    let here = 0u8;
    top.store(core::ptr::from_ref(&here) as usize, Ordering::Release);
    let mut buf = vec![0u8; 4096];
    // At least 400 ms and until enough signals have landed: on a loaded machine the signaller
    // gets less of a CPU (at most 30 s).
    let start = Instant::now();
    let mut i = 0usize;
    while start.elapsed() < Duration::from_millis(400)
        || SIGNALS.load(Ordering::Relaxed) < MIN_SIGNALS
            && start.elapsed() < Duration::from_secs(30)
    {
        match i % 8 {
            0 => pools.fill_bytes(&mut buf[..32]),
            1 => pools.fill_bytes(&mut buf[..200]),
            2 => pools.fill_bytes(&mut buf[..4096]),
            3 => aes[0].fill_bytes(&mut buf[..300]),
            4 => aes[1].fill_bytes(&mut buf[..300]),
            5 => chacha[0].fill_bytes(&mut buf[..300]),
            6 => chacha[1].fill_bytes(&mut buf[..300]),
            _ => {
                for _ in 0..64 {
                    pools.fill_bytes(&mut buf[..32]);
                }
            }
        }
        i += 1;
    }
    done.store(true, Ordering::Release);
    core::hint::black_box(&buf);
}
