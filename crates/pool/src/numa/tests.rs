//! Unit tests that need crate-private hooks (the rest live in `tests/numa_*.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use super::*;
use alloc::vec;

/// The rounds of the tests' output keystream: ChaCha20, and ChaCha8 under miri, which
/// interprets every round of every 7 KiB slot batch (minutes over these tests). What miri
/// checks here, the slots' and locks' unsafe code, takes the same path for either count.
const ROUNDS: Rounds = if cfg!(miri) {
    Rounds::ChaCha8
} else {
    Rounds::ChaCha20
};

fn two_nodes() -> NodePools {
    NodePools::from_seed(Topology::from_nodes(vec![vec![0], vec![1]]), &[5; 32])
        .unwrap()
        .with_rounds(ROUNDS)
}

#[test]
fn all_slots_busy_falls_back_to_a_node_key() {
    let p = two_nodes();
    let before = p.node_stats();
    let mut a = [0u8; 32];
    let src = p.__with_all_slots_busy(|| p.fill_traced(1, &mut a));
    assert_eq!(src.unwrap().map(|s| s.0), Some(1));
    assert_ne!(a, [0; 32]);
    let after = p.node_stats();
    assert_eq!(after[1].key_derivations, before[1].key_derivations + 1);
    assert_eq!(after[1].reads, before[1].reads, "no slot served it");
}

#[test]
fn reseed_moves_every_generation_and_slots_follow() {
    let p = two_nodes();
    let mut a = [0u8; 16];
    let (_, g0) = p.fill_traced(0, &mut a).unwrap().unwrap();
    p.reseed();
    let (_, g1) = p.fill_traced(0, &mut a).unwrap().unwrap();
    assert!(g1 > g0);
    assert_eq!(p.node_stats()[0].generation, g1);
}

#[test]
fn byte_schedule_reseeds() {
    let p = two_nodes().with_reseed_policy(
        ReseedPolicy {
            max_bytes: 1_000,
            max_interval_secs: 0,
        },
        scalrand_os::NoClock,
    );
    let g = p.node_stats()[0].generation;
    // The schedule is looked at every CHECK_EVERY_CALLS reads: 65 reads of 32 B are past it
    // and past the byte limit.
    let mut buf = [0u8; 32];
    for _ in 0..=super::schedule::CHECK_EVERY_CALLS {
        p.fill_bytes_on_cpu(0, &mut buf);
    }
    assert!(
        p.node_stats()[0].generation > g,
        "2080 B > 1000 B must reseed"
    );
}

#[test]
fn time_schedule_reseeds() {
    use alloc::sync::Arc;
    use core::time::Duration;
    use scalrand_os::{Clock, ManualClock};
    struct Shared(Arc<ManualClock>);
    impl Clock for Shared {
        fn now(&self) -> Duration {
            self.0.now()
        }
    }
    let clock = Arc::new(ManualClock::new(Duration::from_secs(100)));
    let p = two_nodes().with_reseed_policy(
        ReseedPolicy {
            max_bytes: 0,
            max_interval_secs: 60,
        },
        Shared(clock.clone()),
    );
    let g = p.node_stats()[0].generation;
    let mut b = [0u8; 8];
    for _ in 0..2 * CHECK_EVERY_CALLS {
        p.fill_bytes_on_cpu(0, &mut b);
    }
    assert_eq!(p.node_stats()[0].generation, g, "no time has passed");
    clock.advance(Duration::from_secs(61));
    for _ in 0..CHECK_EVERY_CALLS {
        p.fill_bytes_on_cpu(0, &mut b);
    }
    assert!(p.node_stats()[0].generation > g, "61 s > 60 s must reseed");
}

#[test]
fn debug_prints_no_key_material() {
    let p = two_nodes();
    let mut b = [0u8; 32];
    p.fill_bytes_on_cpu(0, &mut b);
    let text = alloc::format!("{p:?}");
    assert!(text.contains("NodePools"));
    // The impl prints counts, readiness and the policy: nothing keyed.
    assert!(!text.contains("key"));
    assert!(!text.contains("batch"));
    assert!(!text.contains("[")); // no byte arrays at all
}

#[test]
fn huge_credit_pushes_each_node_once() {
    let p = two_nodes();
    let before: alloc::vec::Vec<usize> = p.node_stats().iter().map(|n| n.reseeds).collect();
    p.add_entropy(b"claims everything", usize::MAX);
    let after: alloc::vec::Vec<usize> = p.node_stats().iter().map(|n| n.reseeds).collect();
    assert_eq!(after, [before[0] + 1, before[1] + 1]);
    // The excess credit is gone: a small credit does not push again.
    p.add_entropy(b"x", 8);
    assert_eq!(p.node_stats()[0].reseeds, before[0] + 1);
}

#[test]
fn a_zeroed_slot_is_stale_and_never_answers_zeros() {
    // What a fork child finds in wipe-on-fork memory: wipe every slot by hand, then read.
    let p = two_nodes();
    let mut a = [0u8; 64];
    p.fill_bytes_on_cpu(0, &mut a);
    p.wipe_slots();
    let g = p.node_stats()[0].generation;
    let mut b = [0u8; 64];
    let (_, used) = p.fill_traced(0, &mut b).unwrap().unwrap();
    assert_eq!(used, g);
    assert_ne!(b, [0u8; 64]);
    assert_ne!(a, b);
}

/// What a signal handler meets when it interrupts a read that holds a node lock: every slot
/// busy and the node lock held by its own thread. The read must not spin; with `std` it takes
/// a key from the OS, without it it reports `Busy`.
#[test]
fn a_node_lock_held_by_this_thread_sends_the_read_elsewhere() {
    let p = two_nodes();
    let mut a = [0u8; 100];
    let r = p.__with_node_locked(1, || p.__with_all_slots_busy(|| p.fill_traced(1, &mut a)));
    #[cfg(feature = "std")]
    {
        assert_eq!(r, Ok(None), "keyed from the OS, not from a node");
        assert_ne!(a, [0; 100]);
        assert_eq!(p.__os_keyed_reads(), 1);
    }
    #[cfg(not(feature = "std"))]
    assert_eq!(r, Err(NumaError::Busy));
    // And with the lock free again, the node serves it.
    let r = p.__with_all_slots_busy(|| p.fill_traced(1, &mut a));
    assert_eq!(r.unwrap().map(|s| s.0), Some(1));
}

/// A busy home slot sends the read to another slot of the same node, never across a node
/// boundary: not past the node's last slot into the next node, and not from the last node's
/// last slot round to node 0. Every start slot, with every other slot of its node busy too.
#[test]
fn busy_slots_send_the_read_to_a_slot_of_the_same_node() {
    let nodes = vec![vec![0, 1, 2], vec![3, 4], vec![5, 6, 7]];
    let p = NodePools::from_seed(Topology::from_nodes(nodes.clone()), &[9; 32])
        .unwrap()
        .with_rounds(ROUNDS);
    for (node, cpus) in nodes.iter().enumerate() {
        for (i, &cpu) in cpus.iter().enumerate() {
            // Hold the slots from this CPU's to the node's last, so that a probe that
            // walks past the node's end finds a free slot of the next node.
            let held: alloc::vec::Vec<_> = cpus[i..]
                .iter()
                .map(|&c| p.hold_home_slot(c).unwrap())
                .collect();
            let mut a = [0u8; 32];
            let src = p.fill_traced(cpu, &mut a).unwrap().map(|s| s.0);
            drop(held);
            assert_eq!(
                src,
                Some(node),
                "CPU {cpu} with slots {i}.. of node {node} busy"
            );
        }
    }
}

/// The per-CPU slots are mapped, not written: 256 CPUs' slots (7 KiB each) take memory only
/// for the slots reads used (where the pools map their own memory).
#[cfg(all(target_os = "linux", not(miri)))]
#[test]
fn slots_take_memory_only_once_used() {
    if !scalrand_os::wipe::OWN_MAPPINGS {
        return;
    }
    let p = NodePools::from_seed(Topology::single_node(256), &[3; 32]).unwrap();
    let mut b = [0u8; 32];
    p.fill_bytes(&mut b);
    let (addr, bytes) = p.slots_span();
    let rss = scalrand_testkit::maps::rss_kib(addr).expect("the slots' mapping") * 1024;
    // Other wipe-on-fork mappings the kernel merged with this one count too: a quarter of
    // the slots' bytes is far above what one read touches, far below them all.
    assert!(rss < bytes / 4, "Rss {rss} of {bytes} bytes of slots");
}
