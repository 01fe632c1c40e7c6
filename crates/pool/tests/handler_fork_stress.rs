//! Forks from signal handlers while many threads read: no 8-byte word is handed out both by
//! the parent and by one of its children.
//!
//! Sixteen threads read 16 to 200 bytes at a time from one `NodePools` (the rseq path up to
//! 64 bytes, where it runs, with its lock-free refills; the locked slots above) and record
//! every word they get. A sender thread signals a random reader every few microseconds (a
//! real-time signal, so that signals to a reader that is not running queue up); the
//! handler reads 16 to 64 bytes too (recorded), and every 500th signal it forks. The child's
//! handler reads again, then returns into whatever the interrupted thread was doing (often a
//! refill: its keystream, its key put back, its publish), lets that read finish, reads 1 KiB
//! more and sends its handler read and the 1 KiB back. None of a child's words may be one
//! the parent handed out, and none may be zero.
//!
//! The forks alternate between libc's `fork()` and a raw `SYS_fork`. libc's `fork()` takes the
//! allocator's locks, so a handler that calls it on a thread interrupted inside `malloc`
//! deadlocks that thread (POSIX.1-2024 no longer lists `fork` as async-signal-safe for this
//! reason): the readers allocate everything they record into before the first signal and
//! leave their loops before their buffers would grow, and a handler forks only on a thread
//! inside that loop (`MAY_FORK`), never on one that is starting or ending. A child ends itself after
//! `scalrand_testkit::fork::CHILD_ALARM_SECS` (`alarm`): a child stuck on a lock a vanished
//! thread held sends nothing and does not hold the run up.
//!
//! `SCALRAND_CAMPAIGN=sample` (`scalrand_testkit::campaign`) stops after 300 forks, a full
//! campaign after 20,000; either stops after 4 or 20 s, or at 48 M recorded words. Optimised builds: the race needs the read rate.
#![cfg(all(feature = "std", target_os = "linux", not(miri), not(debug_assertions)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::HashSet;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use scalrand_pool::numa::{NodePools, Topology};
use scalrand_testkit::campaign;
use scalrand_testkit::fork::{CHILD_ALARM_SECS, libc_fork, raw_fork, read_to_end, write_all};

/// Reader threads.
const THREADS: usize = 16;
/// Every this many handled signals, the handler forks.
const FORK_EVERY: u64 = 500;
/// Most forks one run makes.
const MAX_FORKS: usize = 20_000;
/// Words the parent's handlers may record.
const HANDLER_CAP: usize = 1 << 23;
/// Words the readers record in all at most; the run ends there.
const READERS_CAP: usize = 48 << 20;
/// Words the readers have recorded.
static RECORDED: AtomicUsize = AtomicUsize::new(0);
/// Set when the run is stopping: readers leave their loops.
static STOP: AtomicBool = AtomicBool::new(false);

std::thread_local! {
    /// Set while this thread is inside its reading loop, where it holds no allocator lock:
    /// the only place a handler forks.
    static MAY_FORK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

static POOLS: OnceLock<NodePools> = OnceLock::new();
/// Set in a child, by the handler that forked it.
static IN_CHILD: AtomicBool = AtomicBool::new(false);
/// The write end of the pipe every child reports through (one message each, shorter than
/// `PIPE_BUF`, so written at once).
static REPORT_W: AtomicI32 = AtomicI32::new(-1);
/// In a child: the words its handler read.
static CHILD_HANDLER: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
static CHILD_HANDLER_LEN: AtomicUsize = AtomicUsize::new(0);
/// Signals handled (in the parent).
static HANDLED: AtomicU64 = AtomicU64::new(0);
/// Forks made, and the most this run makes.
static FORKS: AtomicUsize = AtomicUsize::new(0);
static FORK_LIMIT: AtomicUsize = AtomicUsize::new(0);
/// The words the parent's handlers read.
static HANDLER_WORDS: [AtomicU64; HANDLER_CAP] = [const { AtomicU64::new(0) }; HANDLER_CAP];
static HANDLER_LEN: AtomicUsize = AtomicUsize::new(0);

/// The whole little-endian words of `bytes`.
fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
}

/// A read of 16 to 64 bytes in a handler, its length picked by `n`.
fn handler_read(n: u64, buf: &mut [u8; 64]) -> usize {
    let len = 16 + (n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize % 49;
    POOLS.get().unwrap().fill_bytes(&mut buf[..len]);
    len
}

extern "C" fn on_signal(_: libc::c_int) {
    if IN_CHILD.load(Ordering::Relaxed) {
        return;
    }
    let n = HANDLED.fetch_add(1, Ordering::Relaxed);
    let mut buf = [0u8; 64];
    let len = handler_read(n, &mut buf);
    for w in words(&buf[..len]) {
        let i = HANDLER_LEN.fetch_add(1, Ordering::Relaxed);
        if let Some(slot) = HANDLER_WORDS.get(i) {
            slot.store(w, Ordering::Relaxed);
        }
    }
    if n % FORK_EVERY != FORK_EVERY - 1 || !MAY_FORK.get() {
        return;
    }
    let k = FORKS.fetch_add(1, Ordering::Relaxed);
    if k >= FORK_LIMIT.load(Ordering::Relaxed) {
        return;
    }
    // The interrupted thread holds no allocator lock (see the module docs), so libc's fork
    // cannot deadlock on it.
    let pid = if k.is_multiple_of(2) {
        libc_fork()
    } else {
        raw_fork()
    };
    if pid == 0 {
        // SAFETY: alarm(2) only arms this process's timer.
        unsafe { libc::alarm(CHILD_ALARM_SECS) };
        // The child: its own handler read, kept for the reader to send; then back into the
        // interrupted code.
        IN_CHILD.store(true, Ordering::SeqCst);
        let mut buf = [0u8; 64];
        let len = handler_read(n ^ 0x5555, &mut buf);
        for (i, w) in words(&buf[..len]).enumerate() {
            CHILD_HANDLER[i].store(w, Ordering::Relaxed);
            CHILD_HANDLER_LEN.store(i + 1, Ordering::Relaxed);
        }
    }
}

/// What a child does once the read its fork interrupted has returned: sends its handler's
/// words and 1 KiB of new reads, and exits. Nothing that allocates or locks.
fn child_finish(pools: &NodePools, mut x: u64) -> ! {
    let mut out = [0u8; 4 + 64 + 1024];
    let mut n = 4;
    for slot in CHILD_HANDLER
        .iter()
        .take(CHILD_HANDLER_LEN.load(Ordering::SeqCst))
    {
        out[n..n + 8].copy_from_slice(&slot.load(Ordering::Relaxed).to_le_bytes());
        n += 8;
    }
    let end = n + 1024;
    while n < end {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = (16 + (x % 49) as usize).min(end - n) / 8 * 8;
        let len = len.max(8);
        pools.fill_bytes(&mut out[n..n + len]);
        n += len;
    }
    out[..4].copy_from_slice(&(n as u32 - 4).to_le_bytes());
    write_all(REPORT_W.load(Ordering::SeqCst), &out[..n]);
    // SAFETY: ends the child at once, without the parent's destructors.
    unsafe { libc::_exit(0) }
}

/// Reads until the run stops, recording into `got` (allocated before the first signal, and
/// never grown: a thread whose buffer is full leaves the run to the others).
fn reader(seed: u64, mut got: Vec<u64>) -> Vec<u64> {
    // Below the sender: sixteen readers on a few CPUs would otherwise leave it little time.
    // SAFETY: lowers this thread's own priority (Linux takes a thread id here).
    unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10) };
    let pools = POOLS.get().unwrap();
    let mut buf = [0u8; 200];
    let mut x = seed | 1;
    MAY_FORK.set(true);
    while !STOP.load(Ordering::SeqCst) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = 16 + (x % 185) as usize;
        pools.fill_bytes(&mut buf[..len]);
        if IN_CHILD.load(Ordering::SeqCst) {
            child_finish(pools, x);
        }
        if got.len() + buf.len() / 8 > got.capacity() {
            break;
        }
        got.extend(words(&buf[..len]));
        if RECORDED.fetch_add(len / 8, Ordering::Relaxed) + len / 8 >= READERS_CAP {
            STOP.store(true, Ordering::SeqCst);
        }
    }
    MAY_FORK.set(false);
    if IN_CHILD.load(Ordering::SeqCst) {
        // Forked between the last read and the end of the run.
        child_finish(pools, x);
    }
    got
}

/// Reads the children's reports from `fd` until every write end is closed: each a `u32`
/// length and that many bytes of words.
fn collect(fd: i32) -> Vec<Vec<u8>> {
    let all = read_to_end(fd);
    let mut reports = Vec::new();
    let mut rest = &all[..];
    while rest.len() >= 4 {
        let len = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
        let end = (4 + len).min(rest.len());
        reports.push(rest[4..end].to_vec());
        rest = &rest[end..];
    }
    reports
}

#[test]
fn no_word_is_handed_out_by_a_parent_and_its_child() {
    let limit = campaign::trials(MAX_FORKS, 300);
    let seconds = campaign::trials(20, 4) as u64;
    FORK_LIMIT.store(limit, Ordering::SeqCst);
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    POOLS
        .set(NodePools::new(Topology::from_nodes(vec![(0..cpus).collect()])).unwrap())
        .ok()
        .unwrap();
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors; the signal dispositions: a plain handler
    // for the first real-time signal (queued, not merged: a reader that is not running when
    // signalled handles each one when it runs again), restarting interrupted system calls;
    // children reaped by the kernel (SIGCHLD ignored), so forks never pile up as zombies.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGRTMIN(), &sa, std::ptr::null_mut()),
            0
        );
        libc::signal(libc::SIGCHLD, libc::SIG_IGN);
    }
    REPORT_W.store(fds[1], Ordering::SeqCst);
    let collector = std::thread::spawn(move || collect(fds[0]));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let parent_words: Vec<Vec<u64>> = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        let handles: Vec<_> = (0..THREADS as u64)
            .map(|i| {
                let tx = tx.clone();
                s.spawn(move || {
                    // Allocated before the signals start (they start once every reader has
                    // sent its id).
                    let got = Vec::with_capacity(READERS_CAP / THREADS);
                    // SAFETY: the calling thread's own id.
                    tx.send(unsafe { libc::pthread_self() } as usize).unwrap();
                    reader(0x243f_6a88_85a3_08d3 ^ (i << 32), got)
                })
            })
            .collect();
        let threads: Vec<usize> = (0..THREADS).map(|_| rx.recv().unwrap()).collect();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        while !STOP.load(Ordering::SeqCst)
            && FORKS.load(Ordering::Relaxed) < limit
            && Instant::now() < deadline
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = threads[(x % THREADS as u64) as usize];
            // SAFETY: the reader threads live until `STOP` is set, after this loop.
            unsafe { libc::pthread_kill(t as libc::pthread_t, libc::SIGRTMIN()) };
            let until = Instant::now() + Duration::from_nanos(1000 + x % 4000);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        STOP.store(true, Ordering::SeqCst);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Children still running hold the write end too; the collector ends when the last one
    // has exited.
    // SAFETY: the parent's write end, no longer used.
    unsafe { libc::close(fds[1]) };
    let reports = collector.join().unwrap();
    let forks = FORKS.load(Ordering::SeqCst).min(limit);
    let handler_len = HANDLER_LEN.load(Ordering::SeqCst).min(HANDLER_CAP);
    let mut parent: HashSet<u64> =
        HashSet::with_capacity(parent_words.iter().map(Vec::len).sum::<usize>() + handler_len);
    for v in &parent_words {
        parent.extend(v.iter().copied());
    }
    parent.extend(
        HANDLER_WORDS[..handler_len]
            .iter()
            .map(|w| w.load(Ordering::Relaxed)),
    );
    let mut dups = Vec::new();
    let (mut zeros, mut child_words) = (0usize, 0usize);
    for (k, r) in reports.iter().enumerate() {
        for w in words(r) {
            child_words += 1;
            if w == 0 {
                zeros += 1;
            } else if parent.contains(&w) {
                dups.push((k, w));
            }
        }
    }
    eprintln!(
        "{forks} forks, {} reports, {} parent words ({handler_len} from handlers), \
         {child_words} child words: {} shared with the parent, {zeros} zero",
        reports.len(),
        parent.len(),
        dups.len()
    );
    assert!(!reports.is_empty() && child_words > 0, "no child reported");
    assert!(
        dups.is_empty() && zeros == 0,
        "{} words handed out by a parent and its child, {zeros} zero words: {:x?}",
        dups.len(),
        &dups[..dups.len().min(20)]
    );
}
