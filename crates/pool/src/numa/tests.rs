//! Unit tests that need crate-private hooks (the rest live in `tests/numa_*.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use super::*;
use alloc::vec;

fn two_nodes() -> NodePools {
    NodePools::from_seed(Topology::from_nodes(vec![vec![0], vec![1]]), &[5; 32]).unwrap()
}

#[test]
fn all_slots_busy_falls_back_to_a_node_key() {
    let p = two_nodes();
    let before = p.node_stats();
    let mut a = [0u8; 32];
    let src = p.with_all_slots_busy(|| p.fill_traced(1, &mut a));
    assert_eq!(src.map(|s| s.0), Some(1));
    assert_ne!(a, [0; 32]);
    let after = p.node_stats();
    assert_eq!(after[1].key_derivations, before[1].key_derivations + 1);
    assert_eq!(after[1].reads, before[1].reads, "no slot served it");
}

#[test]
fn reseed_moves_every_generation_and_slots_follow() {
    let p = two_nodes();
    let mut a = [0u8; 16];
    let (_, g0) = p.fill_traced(0, &mut a).unwrap();
    p.reseed();
    let (_, g1) = p.fill_traced(0, &mut a).unwrap();
    assert!(g1 > g0);
    assert_eq!(p.node_stats()[0].generation, g1);
}

#[test]
fn byte_schedule_reseeds() {
    let p = two_nodes().with_reseed_policy(
        ReseedPolicy {
            max_bytes: 100_000,
            max_interval_secs: 0,
        },
        NoClock,
    );
    let g = p.node_stats()[0].generation;
    let mut buf = alloc::vec![0u8; 4096];
    for _ in 0..40 {
        p.fill_bytes_on_cpu(0, &mut buf);
    }
    assert!(
        p.node_stats()[0].generation > g,
        "160 KB > 100 KB must reseed"
    );
}

#[test]
fn time_schedule_reseeds() {
    use alloc::sync::Arc;
    struct Shared(Arc<ManualClock>);
    impl Clock for Shared {
        fn now_secs(&self) -> Option<u64> {
            self.0.now_secs()
        }
    }
    let clock = Arc::new(ManualClock::new(100));
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
    clock.advance(61);
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
fn manual_clock_drives_the_schedule_without_std_time() {
    let clock = ManualClock::new(0);
    clock.set(5);
    clock.advance(10);
    assert_eq!(clock.now_secs(), Some(15));
    assert_eq!(NoClock.now_secs(), None);
}
