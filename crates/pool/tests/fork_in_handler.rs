//! A fork made by a signal handler that interrupted a read (`NodePools`, Fortuna) on the same
//! thread: the interrupted read finishes in both processes, and the child's bytes are its own. They
//! hold no run of 8 zero bytes (the kernel zeroed the slot under the read), are not the keystream
//! of the all-zero key, share no 8-byte run at the same offset with the parent's read of that
//! moment, and the child does not panic. A child that returns the parent's whole read is the fork
//! that landed after the read's last byte was settled (unavoidable, counted apart).
//!
//! Every length from 1 to 300 bytes and 4096 on the default routing (the rseq path up to 64
//! bytes where it runs, the locked slots up to 256, a one-read key beyond), on the locked slots
//! alone (`fill_bytes_on_cpu`), on the node fallback (every slot busy) and on the OS fallback
//! (every slot busy and the node locked), and on Fortuna with both PRFs in both modes; then
//! 200 trials each at 100 and 200 bytes. A sampled campaign (`SCALRAND_CAMPAIGN=sample`, see
//! `scalrand_testkit::campaign`) takes every 7th length (1, 8, …, 295, 300 and 4096) and 40
//! trials each.
#![cfg(all(feature = "fortuna", feature = "std", target_os = "linux", not(miri)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

use scalrand_pool::chacha::keystream;
use scalrand_pool::fortuna::{Aes256Prf, ChaCha20Prf, Fortuna, ReadMode};
use scalrand_pool::numa::{NodePools, Rounds, Topology};
use scalrand_testkit::campaign;
use scalrand_testkit::fork::wait_within;

/// Set before a trial; the handler forks once when it finds it set.
static ARMED: AtomicBool = AtomicBool::new(false);
/// In the child: set by the handler.
static IN_CHILD: AtomicBool = AtomicBool::new(false);
/// In the parent: the child's pid (0 until the fork).
static CHILD_PID: AtomicI32 = AtomicI32::new(0);
/// The write end of the child's pipe.
static PIPE_W: AtomicI32 = AtomicI32::new(-1);
/// The sender's delay before its signal, in spin iterations (varied per trial).
static DELAY: AtomicU64 = AtomicU64::new(0);

extern "C" fn fork_once(_: libc::c_int) {
    if ARMED.swap(false, Ordering::SeqCst) {
        // SAFETY: fork is async-signal-safe.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: alarm(2) only arms this process's timer: a child that hangs ends (and
            // fails its trial) instead of holding up the parent's read of its pipe.
            unsafe { libc::alarm(scalrand_testkit::fork::CHILD_ALARM_SECS) };
            IN_CHILD.store(true, Ordering::SeqCst);
        } else {
            CHILD_PID.store(pid, Ordering::SeqCst);
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Path {
    /// `fill_bytes`: rseq up to 64 bytes where it runs, the locked slots to 256, then a
    /// one-read key.
    Default,
    /// `fill_bytes_on_cpu`: the locked slots (and a one-read key beyond 256 bytes).
    Locked,
    /// Every slot busy: a one-read key from the node.
    Node,
    /// Every slot busy and the node locked: a one-read key from the OS.
    Os,
    /// `Fortuna<AES-256>`, Concurrent reads.
    FortunaAesConcurrent,
    /// `Fortuna<AES-256>`, Locked reads.
    FortunaAesLocked,
    /// `Fortuna<ChaCha20>`, Concurrent reads.
    FortunaChaChaConcurrent,
    /// `Fortuna<ChaCha20>`, Locked reads.
    FortunaChaChaLocked,
}

/// The read lengths every path is tried at: 1 to 300 bytes, and 4096.
const LENGTHS: [usize; 301] = {
    let mut l = [0; 301];
    let mut i = 0;
    while i < 300 {
        l[i] = i + 1;
        i += 1;
    }
    l[300] = 4096;
    l
};

/// The generators the trials read from.
struct Readers {
    pools: NodePools,
    aes: [Fortuna<Aes256Prf>; 2],
    chacha: [Fortuna<ChaCha20Prf>; 2],
}

/// What the trials found.
#[derive(Default, Debug)]
struct Found {
    trials: usize,
    /// The child returned the parent's whole read (the fork came after it was settled).
    whole_repeats: usize,
    bad: Vec<String>,
}

/// The 16-byte windows of the all-zero key's keystream (ChaCha20, 8 KiB): a child's read must
/// not contain one. A set, so that each check is linear in the read's length (a scan of the
/// keystream for every window took most of an unoptimised run).
fn zero_key_stream() -> HashSet<[u8; 16]> {
    let mut v = vec![0u8; 8192];
    keystream(&[0; 32], 0, &mut v, Rounds::ChaCha20);
    v.windows(16)
        .map(|w| <[u8; 16]>::try_from(w).unwrap())
        .collect()
}

/// One trial: reads `len` bytes on `path` until the handler has forked during (or just
/// before) a read; the child sends that read's bytes and exits; returns (parent's, child's
/// bytes, child's exit status).
fn trial(r: &Readers, path: Path, len: usize, reader: libc::pthread_t) -> (Vec<u8>, Vec<u8>, i32) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    PIPE_W.store(fds[1], Ordering::SeqCst);
    CHILD_PID.store(0, Ordering::SeqCst);
    let mut buf = vec![0u8; len];
    let p = &r.pools;
    let read = |buf: &mut [u8]| match path {
        Path::FortunaAesConcurrent => r.aes[0].fill_bytes(buf),
        Path::FortunaAesLocked => r.aes[1].fill_bytes(buf),
        Path::FortunaChaChaConcurrent => r.chacha[0].fill_bytes(buf),
        Path::FortunaChaChaLocked => r.chacha[1].fill_bytes(buf),
        Path::Default => p.fill_bytes(buf),
        Path::Locked => p.fill_bytes_on_cpu(0, buf),
        Path::Node => p.__with_all_slots_busy(|| p.fill_bytes_on_cpu(0, buf)),
        Path::Os => {
            p.__with_all_slots_busy(|| p.__with_node_locked(0, || p.fill_bytes_on_cpu(0, buf)))
        }
    };
    std::thread::scope(|s| {
        let reader = reader as usize;
        s.spawn(move || {
            // Armed only once the spawn has returned on the reader's side: libc's fork in the
            // handler takes the allocator's and thread list's locks, which the reader holds
            // while it starts this thread (a deadlock, not a finding).
            while !ARMED.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            for _ in 0..DELAY.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            // SAFETY: the reader thread is alive until this scope ends.
            unsafe { libc::pthread_kill(reader as libc::pthread_t, libc::SIGUSR1) };
        });
        ARMED.store(true, Ordering::SeqCst);
        loop {
            read(&mut buf);
            if IN_CHILD.load(Ordering::SeqCst) {
                // The child: nothing that allocates or locks (other threads' locks may be
                // held at the fork); the bytes, then out.
                let w = PIPE_W.load(Ordering::SeqCst);
                scalrand_testkit::fork::write_all(w, &buf);
                // SAFETY: ends the child at once, without running the parent's destructors.
                unsafe { libc::_exit(0) };
            }
            if CHILD_PID.load(Ordering::SeqCst) != 0 {
                break;
            }
        }
    });
    let pid = CHILD_PID.load(Ordering::SeqCst);
    // SAFETY: closing our copy of the write end, so the read below sees the end.
    unsafe { libc::close(fds[1]) };
    let mut child = vec![0u8; len];
    let mut got = 0;
    while got < len {
        // SAFETY: `child[got..]` is writable.
        let n = unsafe { libc::read(fds[0], child[got..].as_mut_ptr().cast(), len - got) };
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    child.truncate(got);
    // SAFETY: our read end.
    unsafe { libc::close(fds[0]) };
    let status = wait_within(pid, Duration::from_secs(20)).unwrap_or(-1);
    (buf, child, status)
}

fn check(
    found: &mut Found,
    what: &str,
    parent: &[u8],
    child: &[u8],
    status: i32,
    zero: &HashSet<[u8; 16]>,
) {
    found.trials += 1;
    if status != 0 || child.len() != parent.len() {
        found.bad.push(format!(
            "{what}: child status {status}, {} of {} bytes",
            child.len(),
            parent.len()
        ));
        return;
    }
    if child == parent {
        found.whole_repeats += 1;
        return;
    }
    if child.windows(8).any(|w| w == [0; 8]) {
        found.bad.push(format!("{what}: a run of 8 zero bytes"));
    }
    if let Some(i) =
        (0..child.len().saturating_sub(7)).find(|&i| child[i..i + 8] == parent[i..i + 8])
    {
        found
            .bad
            .push(format!("{what}: the parent's bytes at offset {i}"));
    }
    if child
        .windows(16)
        .any(|w| zero.contains(&<[u8; 16]>::try_from(w).unwrap()))
    {
        found
            .bad
            .push(format!("{what}: the all-zero key's keystream"));
    }
}

#[test]
fn a_fork_from_a_handler_mid_read_gives_the_child_its_own_bytes() {
    // SAFETY: installs a plain handler for SIGUSR1 (no SA_RESTART needed: reads make no
    // blocking system calls).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = fork_once as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
    let r = Readers {
        pools: NodePools::new(Topology::from_nodes(vec![vec![0, 1]])).unwrap(),
        aes: [
            Fortuna::with_prf(ReadMode::Concurrent).unwrap(),
            Fortuna::with_prf(ReadMode::Locked).unwrap(),
        ],
        chacha: [
            Fortuna::with_prf(ReadMode::Concurrent).unwrap(),
            Fortuna::with_prf(ReadMode::Locked).unwrap(),
        ],
    };
    let zero = zero_key_stream();
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() };
    let mut found = Found::default();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut delay = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        DELAY.store(x % 4000, Ordering::Relaxed);
    };
    for path in [
        Path::Default,
        Path::Locked,
        Path::Node,
        Path::Os,
        Path::FortunaAesConcurrent,
        Path::FortunaAesLocked,
        Path::FortunaChaChaConcurrent,
        Path::FortunaChaChaLocked,
    ] {
        for len in campaign::spread(&LENGTHS, 7) {
            delay();
            let (par, ch, st) = trial(&r, path, len, me);
            check(
                &mut found,
                &format!("{path:?} {len} B"),
                &par,
                &ch,
                st,
                &zero,
            );
        }
    }
    for len in [100, 200] {
        for _ in 0..campaign::trials(200, 40) {
            delay();
            let (par, ch, st) = trial(&r, Path::Default, len, me);
            check(
                &mut found,
                &format!("Default {len} B"),
                &par,
                &ch,
                st,
                &zero,
            );
        }
    }
    eprintln!(
        "{} trials, {} children repeated the parent's whole read (forked after it), {} bad",
        found.trials,
        found.whole_repeats,
        found.bad.len()
    );
    assert!(
        found.bad.is_empty(),
        "{:#?}",
        &found.bad[..found.bad.len().min(20)]
    );
}

/// The check of the check: a child's read that carries a piece of the all-zero key's
/// keystream at any offset, or the parent's bytes, is reported.
#[test]
fn the_checks_find_the_zero_key_stream_and_the_parents_bytes() {
    let zero = zero_key_stream();
    let mut stream = vec![0u8; 8192];
    keystream(&[0; 32], 0, &mut stream, Rounds::ChaCha20);
    let parent: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
    let mut found = Found::default();
    let mut child: Vec<u8> = parent.iter().map(|b| !b).collect();
    child[33..33 + 16].copy_from_slice(&stream[4321..4321 + 16]);
    check(&mut found, "planted keystream", &parent, &child, 0, &zero);
    assert_eq!(found.bad.len(), 1, "{:?}", found.bad);
    assert!(found.bad[0].contains("all-zero key"), "{:?}", found.bad);
    let mut child: Vec<u8> = parent.iter().map(|b| !b).collect();
    child[50..58].copy_from_slice(&parent[50..58]);
    check(
        &mut found,
        "planted parent bytes",
        &parent,
        &child,
        0,
        &zero,
    );
    assert_eq!(found.bad.len(), 2, "{:?}", found.bad);
    let child: Vec<u8> = parent.iter().map(|b| !b).collect();
    check(&mut found, "clean", &parent, &child, 0, &zero);
    assert_eq!(found.bad.len(), 2, "{:?}", found.bad);
}
