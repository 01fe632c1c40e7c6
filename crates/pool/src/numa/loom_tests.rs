//! loom model of the per-CPU refresh path: a reader against a reseed.
//!
//! Run: `RUSTFLAGS="--cfg scalrand_loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p scalrand-pool --release --lib numa::loom_tests`
//!
//! The property: once a reader has observed a node generation (directly, or because the
//! reseed happened-before its read), the bytes it gets descend from a key of that generation
//! or a newer one; a slot never answers with a key from before a generation it could see.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers fail loudly

use super::*;
use alloc::vec;
use loom::sync::Arc;
use loom::thread;

fn pools(cpus: usize) -> NodePools {
    NodePools::from_seed(Topology::single_node(cpus), &[1; 32]).unwrap()
}

fn generation(p: &NodePools) -> usize {
    p.node_stats()[0].generation
}

#[test]
fn reader_vs_reseed() {
    loom::model(|| {
        let p = Arc::new(pools(1));
        let mut b = [0u8; 8];
        // The slot holds a key (and a batch) from the first generation.
        let (_, g0) = p.fill_traced(0, &mut b).unwrap().unwrap();
        let p2 = p.clone();
        let reseeder = thread::spawn(move || {
            p2.reseed();
            generation(&p2)
        });
        let seen = generation(&p);
        let (_, used) = p.fill_traced(0, &mut b).unwrap().unwrap();
        assert!(
            used >= seen,
            "read used generation {used} after seeing {seen}"
        );
        assert!(used >= g0);
        let g1 = reseeder.join().unwrap();
        assert!(g1 > g0);
        // The reseed happened-before this read: its key must be from g1.
        let (_, after) = p.fill_traced(0, &mut b).unwrap().unwrap();
        assert_eq!(after, g1, "stale key after the generation changed");
    });
}

#[test]
fn two_readers_one_slot_vs_reseed() {
    loom::model(|| {
        let p = Arc::new(pools(1));
        let mut b = [0u8; 300]; // a bulk read: one-read key, keystream outside the lock
        p.fill_traced(0, &mut b[..8]).unwrap().unwrap();
        let p2 = p.clone();
        let reader = thread::spawn(move || {
            let mut b = vec![0u8; 300];
            let seen = generation(&p2);
            let (_, used) = p2.fill_traced(0, &mut b).unwrap().unwrap();
            assert!(used >= seen);
        });
        let p3 = p.clone();
        let reseeder = thread::spawn(move || p3.reseed());
        let seen = generation(&p);
        // Same CPU as the other reader: one of the two may find the slot busy and take the
        // fallback path; both must still respect the generation.
        let (_, used) = p.fill_traced(0, &mut b).unwrap().unwrap();
        assert!(used >= seen);
        reader.join().unwrap();
        reseeder.join().unwrap();
        let g = generation(&p);
        let (_, after) = p.fill_traced(0, &mut b[..8]).unwrap().unwrap();
        assert_eq!(after, g);
    });
}
