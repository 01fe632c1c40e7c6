//! Fork safety: 1,000 real forks (250 in a sampled campaign, `SCALRAND_CAMPAIGN=sample`: what
//! `cargo xtask ci` and the emulated machines run); no 32-byte output of a child equals any
//! output of its parent.
#![cfg(all(feature = "std", unix, not(miri)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use scalrand_pool::numa::{NodePools, Topology};
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use scalrand_testkit::fork::raw_fork;
use scalrand_testkit::fork::{ForkFn, in_child, libc_fork};
use scalrand_testkit::maps::{self, Mapping};
use std::collections::HashSet;

/// Forks per test: 1,000, or 250 in a sampled campaign.
fn forks() -> usize {
    scalrand_testkit::campaign::trials(1000, 250)
}

/// Forks, lets the child read 32 bytes from `pools` and send them through a pipe, and reads
/// 32 bytes in the parent too. Returns (parent's bytes, child's bytes).
fn fork_once(pools: &NodePools) -> ([u8; 32], [u8; 32]) {
    // This test binary runs this one test only, so no other thread holds a lock the child
    // needs; the child reads from the pools (no allocation on that path).
    let read = || {
        let mut b = [0u8; 32];
        pools.fill_bytes(&mut b);
        b
    };
    let (parent, child) = in_child(libc_fork, read, read);
    (
        parent,
        child.expect("the child answered").try_into().unwrap(),
    )
}

#[test]
fn no_child_repeats_its_parent() {
    let pools = NodePools::new(Topology::detect()).unwrap();
    no_child_repeats(&pools);
}

/// The same on keys in ordinary heap memory, the path systems without `MADV_WIPEONFORK` take:
/// every read checks the fork generation, and the child erases every slot itself.
#[test]
fn no_child_repeats_its_parent_without_wipe_on_fork_memory() {
    let pools = NodePools::__new_on_heap(Topology::detect()).unwrap();
    assert!(!pools.keys_wipe_on_fork());
    no_child_repeats(&pools);
}

fn no_child_repeats(pools: &NodePools) {
    // Warm every path the child will copy: a keyed slot with a half-used batch.
    let mut warm = [0u8; 32];
    pools.fill_bytes(&mut warm);
    let mut parent = HashSet::new();
    let mut children = HashSet::new();
    parent.insert(warm);
    let forks = forks();
    for _ in 0..forks {
        let (p, c) = fork_once(pools);
        parent.insert(p);
        children.insert(c);
    }
    assert_eq!(parent.len(), forks + 1, "the parent never repeats itself");
    assert_eq!(children.len(), forks, "children do not repeat each other");
    assert!(
        parent.is_disjoint(&children),
        "a child returned bytes its parent returned"
    );
    // Without the fork check the child's first read would be the parent's next one; the
    // parent's outputs above include exactly those bytes for every fork.
}

// ---- hostile orderings ------------------------------------------------------------------
//
// Each case below made a child repeat its parent (or keep its parent's future output) before
// fork detection moved to a wipe-on-fork word and the keys to wipe-on-fork memory: atfork
// handlers do not run for a raw `SYS_fork`, and a handler registered before scalrand's runs
// first. Reads use CPU 0's slot explicitly, so parent and child would read the same slot.

/// Forks with `how`; the child runs `child` and sends its 32 bytes; the parent then reads 32
/// bytes on CPU 0. Returns (parent, child).
fn fork_with(
    how: ForkFn,
    pools: &NodePools,
    child: impl FnOnce() -> [u8; 32],
) -> ([u8; 32], [u8; 32]) {
    let (parent, c) = in_child(how, child, || {
        let mut parent = [0u8; 32];
        pools.fill_bytes_on_cpu(0, &mut parent);
        parent
    });
    (parent, c.expect("the child answered").try_into().unwrap())
}

fn seeded_pools() -> NodePools {
    let p = NodePools::new(Topology::from_nodes(vec![vec![0, 1]])).unwrap();
    // A keyed slot 0 with most of its batch unread: what the child inherits.
    let mut warm = [0u8; 8];
    p.fill_bytes_on_cpu(0, &mut warm);
    p
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn raw_sys_fork_child_does_not_repeat_its_parent() {
    let pools = seeded_pools();
    let (parent, child) = fork_with(raw_fork, &pools, || {
        let mut b = [0u8; 32];
        pools.fill_bytes_on_cpu(0, &mut b);
        b
    });
    assert_ne!(
        parent, child,
        "SYS_fork ran no atfork handler and the child repeated"
    );
}

/// The raw-`SYS_fork` case on keys in ordinary heap memory (see
/// `no_child_repeats_its_parent_without_wipe_on_fork_memory`): the child's copy of slot 0 still
/// holds the parent's key and unread batch, and the per-read fork check must erase them first.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn raw_sys_fork_child_does_not_repeat_its_parent_without_wipe_on_fork_memory() {
    let pools = NodePools::__new_on_heap(Topology::from_nodes(vec![vec![0, 1]])).unwrap();
    assert!(!pools.keys_wipe_on_fork());
    let mut warm = [0u8; 8];
    pools.fill_bytes_on_cpu(0, &mut warm);
    let (parent, child) = fork_with(raw_fork, &pools, || {
        let mut b = [0u8; 32];
        pools.fill_bytes_on_cpu(0, &mut b);
        b
    });
    assert_ne!(
        parent, child,
        "the child answered from its copy of the parent's slot"
    );
}

static EARLY: std::sync::atomic::AtomicPtr<NodePools> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
static mut EARLY_DRAW: [u8; 32] = [0; 32];

extern "C" fn early_child_handler() {
    let p = EARLY.load(std::sync::atomic::Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: `EARLY` points at pools the test keeps alive across the fork; the child is
        // single-threaded while atfork handlers run, so `EARLY_DRAW` has one writer.
        unsafe { (*p).fill_bytes_on_cpu(0, &mut *std::ptr::addr_of_mut!(EARLY_DRAW)) };
    }
}

#[test]
fn an_earlier_atfork_handler_that_draws_gets_fresh_bytes() {
    // Another library registered its child handler before scalrand's first use (glibc runs
    // child handlers in registration order) and draws random bytes in it.
    // SAFETY: a valid handler without captured state.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(early_child_handler)) };
    assert_eq!(rc, 0);
    let pools = seeded_pools();
    EARLY.store(
        std::ptr::from_ref(&pools).cast_mut(),
        std::sync::atomic::Ordering::Release,
    );
    // SAFETY: read in the single-threaded child after its handlers ran.
    let (parent, child) = fork_with(libc_fork, &pools, || unsafe { EARLY_DRAW });
    EARLY.store(std::ptr::null_mut(), std::sync::atomic::Ordering::Release);
    assert_ne!(child, [0u8; 32], "the handler drew");
    assert_ne!(
        parent, child,
        "the early handler's draw repeated the parent"
    );
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
static SIG_POOLS: std::sync::atomic::AtomicPtr<NodePools> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
static mut SIG_DRAW: [u8; 32] = [0; 32];

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
extern "C" fn draw_on_sigusr1(_: libc::c_int) {
    let p = SIG_POOLS.load(std::sync::atomic::Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: `SIG_POOLS` is non-null only while the test keeps the pools alive; it runs in
        // the single-threaded child, where this handler is `SIG_DRAW`'s one writer.
        unsafe { (*p).fill_bytes_on_cpu(0, &mut *std::ptr::addr_of_mut!(SIG_DRAW)) };
    }
}

/// The child's first read comes from a signal handler, before any code of the child's own
/// (and, with a raw `SYS_fork`, with no atfork handler ever running): the handler is
/// installed in the parent and the child raises the signal as its first act. Detection that
/// needs the child to run something first (an atfork handler, a check in the normal read
/// path's caller) would hand the handler its parent's bytes; a wipe-on-fork key cannot.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn a_signal_handler_reading_first_in_a_raw_fork_child_gets_fresh_bytes() {
    let pools = seeded_pools();
    // SAFETY: installs a handler that only reads from pools the test keeps alive (see
    // `draw_on_sigusr1`); SIGUSR1 is raised only by this test's child.
    let old = unsafe {
        libc::signal(
            libc::SIGUSR1,
            draw_on_sigusr1 as *const () as libc::sighandler_t,
        )
    };
    assert_ne!(old, libc::SIG_ERR);
    SIG_POOLS.store(
        std::ptr::from_ref(&pools).cast_mut(),
        std::sync::atomic::Ordering::Release,
    );
    let (parent, child) = fork_with(raw_fork, &pools, || {
        // SAFETY: a signal a process sends itself is delivered before kill(2) returns (the
        // child's one thread has it unblocked), so the handler has run when `SIG_DRAW` is read.
        // Not raise(3): after a raw SYS_fork glibc's cached thread id is the parent's.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGUSR1);
            SIG_DRAW
        }
    });
    SIG_POOLS.store(std::ptr::null_mut(), std::sync::atomic::Ordering::Release);
    assert_ne!(child, [0u8; 32], "the handler drew");
    assert_ne!(
        parent, child,
        "a read from a signal handler in the child repeated the parent"
    );
}

/// Counts occurrences of `needle` in every readable private mapping of this process, except
/// at `skip` (the buffer holding the needle itself). Allocation-free: it runs in a fork child
/// of a multithreaded process.
fn count_in_memory(needle: &[u8; 32], skip: *const u8) -> u64 {
    static mut MAPS: [u8; 1 << 17] = [0; 1 << 17];
    static mut MAPPINGS: [Mapping; 4096] = [Mapping::EMPTY; 4096];
    // SAFETY: the child is single-threaded; `MAPS` and `MAPPINGS` have one user each.
    let (text, mappings) = unsafe {
        (
            &mut *std::ptr::addr_of_mut!(MAPS),
            &mut *std::ptr::addr_of_mut!(MAPPINGS),
        )
    };
    let n = maps::readable(text, mappings);
    let mut found = 0;
    for m in &mappings[..n] {
        let mut a = m.start;
        while a + 32 <= m.end {
            // SAFETY: `[start, end)` is a readable mapping of this (single-threaded) process.
            let w = unsafe { std::slice::from_raw_parts(a as *const u8, 32) };
            if w == needle && a as *const u8 != skip {
                found += 1;
            }
            a += 8;
        }
    }
    found
}

#[test]
fn a_child_holds_none_of_its_parents_later_output() {
    let pools = seeded_pools();
    if !pools.keys_wipe_on_fork() {
        // No wipe-on-fork memory here (an emulator whose `madvise` is not truthful, or not
        // Linux): a child that never reads keeps its copy until its first read erases it, as
        // the module docs say; the other fork tests cover that first read.
        eprintln!("skipped: keys are not in wipe-on-fork memory here");
        return;
    }
    let mut to_child = [0; 2];
    // SAFETY: a valid array for pipe(2).
    assert_eq!(unsafe { libc::pipe(to_child.as_mut_ptr()) }, 0);
    let ((), counted) = in_child(
        libc_fork,
        || {
            // The child never reads from the pools: it waits for what the parent hands out
            // after the fork and looks for it in its own memory.
            static mut NEEDLES: [[u8; 32]; 4] = [[0; 32]; 4];
            // SAFETY: single-threaded child; the static has one user.
            let needles = unsafe { &mut *std::ptr::addr_of_mut!(NEEDLES) };
            let mut total = 0u64;
            for needle in needles.iter_mut() {
                // SAFETY: 32 writable bytes.
                let n = unsafe { libc::read(to_child[0], needle.as_mut_ptr().cast(), 32) };
                assert_eq!(n, 32);
            }
            for needle in needles.iter() {
                total += count_in_memory(needle, needle.as_ptr());
            }
            total.to_ne_bytes()
        },
        || {
            // The parent's next small reads come from the batch slot 0 already held at the fork.
            for _ in 0..4 {
                let mut out = [0u8; 32];
                pools.fill_bytes_on_cpu(0, &mut out);
                // SAFETY: 32 valid bytes.
                let n = unsafe { libc::write(to_child[1], out.as_ptr().cast(), 32) };
                assert_eq!(n, 32);
            }
        },
    );
    // SAFETY: both ends are ours, and the child has exited.
    unsafe {
        libc::close(to_child[0]);
        libc::close(to_child[1]);
    }
    let b: [u8; 8] = counted.expect("the child answered").try_into().unwrap();
    assert!(pools.keys_wipe_on_fork());
    assert_eq!(
        u64::from_ne_bytes(b),
        0,
        "the child's memory held bytes its parent handed out after the fork"
    );
}
