//! A read nested inside a refill of its own thread (what a signal handler that reads does when
//! it interrupts one), in the parent and in a child forked at that point (a handler that
//! forks): parent and child hand out no word in common, and the child none of the all-zero
//! key's keystream.
//!
//! The interruption is placed with the pools' test hook, right after the refill has claimed
//! its frame and before it generates its batch; the thread is pinned to CPU 0 and the pools
//! are new, so the refill takes the first frame of the pool, the one a refill in the child
//! would take too (the kernel hands the child every frame zeroed, hence free). Where the
//! restartable-sequence path does not run (no rseq, no wipe-on-fork memory), there is no
//! such refill and the test says so.
#![cfg(all(feature = "std", target_os = "linux", not(miri), not(scalrand_loom)))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

use scalrand_pool::chacha::keystream;
use scalrand_pool::numa::{__in_next_rseq_refill, NodePools, Rounds, Topology};
use scalrand_testkit::fork::{read_to_end, wait_within, write_all};

static POOLS: OnceLock<NodePools> = OnceLock::new();
static HOOK_RAN: AtomicBool = AtomicBool::new(false);
static IN_CHILD: AtomicBool = AtomicBool::new(false);
static CHILD_PID: AtomicI32 = AtomicI32::new(0);
/// The nested read's 32 bytes, in whichever process this is.
static NESTED: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

/// What a handler would do there: fork, then read 32 bytes in both processes.
fn interrupt() {
    HOOK_RAN.store(true, Ordering::SeqCst);
    // SAFETY: a plain fork; the child only reads, writes a pipe and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        IN_CHILD.store(true, Ordering::SeqCst);
    } else {
        CHILD_PID.store(pid, Ordering::SeqCst);
    }
    let mut b = [0u8; 32];
    POOLS.get().unwrap().fill_bytes(&mut b);
    for (slot, w) in NESTED.iter().zip(b.chunks_exact(8)) {
        slot.store(u64::from_le_bytes(w.try_into().unwrap()), Ordering::SeqCst);
    }
}

fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn nested() -> Vec<u8> {
    NESTED
        .iter()
        .flat_map(|w| w.load(Ordering::SeqCst).to_le_bytes())
        .collect()
}

#[test]
fn a_read_nested_in_a_refill_and_a_fork_there_share_no_word() {
    let rseq = scalrand_os::cpu::rseq_cpu().is_some();
    let wiped = scalrand_os::wipe::WipeOnFork::<u8>::new(1, |_| 0).wipes_on_fork();
    assert!(scalrand_testkit::cpu::pin_to(0), "cannot pin to CPU 0");
    let cpus = scalrand_testkit::cpu::configured().max(1);
    POOLS
        .set(NodePools::new(Topology::from_nodes(vec![(0..cpus).collect()])).unwrap())
        .ok()
        .unwrap();
    let pools = POOLS.get().unwrap();
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    __in_next_rseq_refill(interrupt);
    // The first small read on CPU 0 refills its slot: the hook runs inside that refill.
    let mut outer = [0u8; 32];
    pools.fill_bytes(&mut outer);
    let mut more = vec![0u8; 1024];
    for c in more.chunks_mut(32) {
        pools.fill_bytes(c);
    }
    if IN_CHILD.load(Ordering::SeqCst) {
        let mut report = nested();
        report.extend_from_slice(&outer);
        report.extend_from_slice(&more);
        write_all(fds[1], &report);
        // SAFETY: ends the child at once, without the parent's destructors.
        unsafe { libc::_exit(0) };
    }
    if !HOOK_RAN.load(Ordering::SeqCst) {
        assert!(
            !(rseq && wiped),
            "the rseq path runs here, but no refill ran the hook"
        );
        scalrand_testkit::rseq::nothing_to_check(&format!(
            "a refill nested in a refill (rseq {rseq}, wipe-on-fork {wiped})"
        ));
        return;
    }
    // SAFETY: the parent's write end.
    unsafe { libc::close(fds[1]) };
    let child = read_to_end(fds[0]);
    let status = wait_within(CHILD_PID.load(Ordering::SeqCst), Duration::from_secs(20));
    assert_eq!(status, Some(0), "the child failed");
    assert_eq!(child.len(), 32 + 32 + 1024, "the child's report");
    let mut parent = nested();
    parent.extend_from_slice(&outer);
    parent.extend_from_slice(&more);
    let parent_words = words(&parent);
    let shared: Vec<(usize, u64)> = words(&child)
        .into_iter()
        .enumerate()
        .filter(|(_, w)| parent_words.contains(w))
        .collect();
    let zeros = words(&child).iter().filter(|&&w| w == 0).count();
    let mut zero_key = vec![0u8; 8192];
    keystream(&[0; 32], 0, &mut zero_key, Rounds::ChaCha20);
    let zero_key_words = words(&zero_key);
    let predictable = words(&child)
        .iter()
        .filter(|w| zero_key_words.contains(w))
        .count();
    assert!(
        shared.is_empty() && zeros == 0 && predictable == 0,
        "the child handed out {} of the parent's words (word index, value: {:x?}), {zeros} \
         zero words and {predictable} words of the all-zero key's keystream",
        shared.len(),
        &shared[..shared.len().min(8)]
    );
}
