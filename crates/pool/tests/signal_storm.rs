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
//!
//! A second storm hits 32-byte reads alone and searches the stack below them after every read,
//! before a later section's wipe can hide what one left: the rseq refill ends with the wipe
//! past a signal frame only when its own record says something interrupted it (its take and
//! put sections report an abort, a watch covers its keystream), and a record that missed a
//! signal leaves the frame, with the keystream's key words, right there.

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
use scalrand_testkit::stack::Forms;
use scalrand_testkit::stack::{copy_below, zero_below};
use scalrand_testkit::trace::{find_key_pieces, find_key_pieces_of};
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

/// Signals the first storm lasts for at least, and twice what the second one does (each test
/// checks that more than 1,000 landed): 4,000, or 2,500 in a sampled campaign
/// (`SCALRAND_CAMPAIGN=sample`).
fn min_signals() -> usize {
    scalrand_testkit::campaign::trials(4000, 2500)
}

/// The longest a storm reads while waiting for its signals. Every read derives keys, and the
/// search after the first storm is over all of them: a storm cut short by the limit with fewer
/// than 1,000 signals fails, a longer one only makes that search slower.
const LIMIT: Duration = Duration::from_secs(10);

/// Bytes of the reader's stack searched: everything below where it started reading, down to
/// this depth.
const DEPTH: usize = 64 << 10;

/// The two storms share the handler, the counter and the key record: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn install_counter() {
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
    SIGNALS.store(0, Ordering::Relaxed);
    KEYS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The CPUs the reader and the signaller run on: two different ones where the process may use
/// two, so that the signaller runs while the reader reads. Unpinned, a busy machine's scheduler
/// may keep both on one CPU, where every signal sent while the reader waits for it merges into
/// one pending signal, and the storm runs to its time limit.
fn storm_cpus() -> Option<(usize, usize)> {
    let cpus = scalrand_testkit::cpu::allowed_cpus();
    (cpus.len() >= 2).then(|| (cpus[0], cpus[cpus.len() - 1]))
}

/// Pins the calling thread to `cpu`, if there is one to pin to.
fn pin(cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        assert!(scalrand_testkit::cpu::pin_to(cpu), "pinning to CPU {cpu}");
    }
}

/// Sends SIGUSR1 to the thread whose `pthread_t` `tid` will hold, every 0.5 to 5 µs, until
/// `done`, from the signaller's CPU of [`storm_cpus`] (the calling thread's affinity is
/// restored at the end).
fn signaller(tid: &AtomicUsize, done: &AtomicBool) {
    let restore = scalrand_testkit::cpu::allowed_cpus();
    pin(storm_cpus().map(|c| c.1));
    signal_until(tid, done);
    assert!(scalrand_testkit::cpu::pin_to_set(&restore));
}

fn signal_until(tid: &AtomicUsize, done: &AtomicBool) {
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
        // SAFETY: the signalled thread lives until after `done` (the callers' protocol).
        unsafe { libc::pthread_kill(t, libc::SIGUSR1) };
    }
}

#[test]
fn no_key_survives_a_signal_storm() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    install_counter();
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
            pin(storm_cpus().map(|c| c.0));
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
        // The signaller (the reader is alive until it passes `scanned`, after `done`).
        signaller(&tid, &done);
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
        // Every key of the storm (some 10^5): the unsliced forms (the step-by-step and
        // signal-frame searches look for the bitsliced ones of each read's keys).
        let found = find_key_pieces_of(&mem, base as u64, &keys, Forms::Unsliced);
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
    // gets less of a CPU (at most `LIMIT`).
    let least = min_signals();
    let start = Instant::now();
    let mut i = 0usize;
    while start.elapsed() < Duration::from_millis(400)
        || SIGNALS.load(Ordering::Relaxed) < least && start.elapsed() < LIMIT
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

/// Bytes below a 32-byte read's caller searched after each read: its frames, a signal frame
/// (up to `AT_MINSIGSTKSZ`, 3.6 KB with AVX-512) and the handler's, with room to spare.
const BELOW_A_READ: usize = 16 << 10;

#[test]
fn no_key_survives_a_signal_in_a_refill() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    install_counter();
    __observe_keys(Some(observe));
    let pools = NodePools::new(Topology::from_nodes(vec![vec![0, 1]])).unwrap();
    let done = AtomicBool::new(false);
    let tid = AtomicUsize::new(0);
    let (reads, hits) = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            pin(storm_cpus().map(|c| c.0));
            // SAFETY: pthread_self has no preconditions.
            tid.store(unsafe { libc::pthread_self() } as usize, Ordering::Release);
            let r = refill_loop(&pools);
            done.store(true, Ordering::Release);
            r
        });
        signaller(&tid, &done);
        reader.join().unwrap()
    });
    __observe_keys(None);
    let signals = SIGNALS.load(Ordering::Relaxed);
    eprintln!(
        "{:?}: {signals} signals over {reads} reads of 32 B, key pieces below a refill's read after {} of them, first {:?}",
        backend(),
        hits.len(),
        hits.first()
    );
    assert!(signals > 1000, "only {signals} signals landed");
    assert!(
        hits.is_empty(),
        "{:?}: key pieces below a 32-byte read after {} reads: {:#?}",
        backend(),
        hits.len(),
        &hits[..hits.len().min(4)]
    );
}

/// 32-byte reads (a refill every 223) until enough signals have landed (at least 300 ms, at
/// most `LIMIT`); after each, the stack below is copied, and after each that derived a key (a
/// refill) the copy is searched for pieces of the last keys the pools derived, then the stack
/// the search used is zeroed (its own frames held those pieces). Returns the reads and, for
/// each read after which a piece was there, the read's number and the piece.
#[inline(never)]
fn refill_loop(pools: &NodePools) -> (usize, Vec<(usize, scalrand_testkit::trace::Hit)>) {
    let mut buf = [0u8; 32];
    let mut below = vec![0u8; BELOW_A_READ];
    let mut hits = Vec::new();
    let least = min_signals() / 2;
    let start = Instant::now();
    let mut reads = 0;
    let mut derived = 0;
    while start.elapsed() < Duration::from_millis(300)
        || SIGNALS.load(Ordering::Relaxed) < least && start.elapsed() < LIMIT
    {
        pools.fill_bytes(&mut buf);
        reads += 1;
        // The copy's window ends 256 bytes below its own local: where the read's frames were.
        let base = copy_below(&mut below, -256) as u64;
        let keys: Vec<[u8; 32]> = {
            let k = KEYS.lock().unwrap_or_else(|e| e.into_inner());
            if k.len() == derived {
                continue;
            }
            derived = k.len();
            k[k.len().saturating_sub(4)..].to_vec()
        };
        let found = find_key_pieces(&below, base, &keys);
        if let Some(h) = found.hits.first() {
            hits.push((reads, h.clone()));
        }
        zero_below::<{ 64 << 10 }>();
    }
    core::hint::black_box(&buf);
    (reads, hits)
}
