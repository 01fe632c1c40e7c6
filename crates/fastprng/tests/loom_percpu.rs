//! loom model of `PerCpu`'s try-lock path: with fewer slots than threads, every interleaving
//! gives each output to exactly one caller and never lets two callers step one state at once
//! (loom's `UnsafeCell` tracking would report the data race).
//!
//! Run: `RUSTFLAGS="--cfg scalrand_loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p scalrand-fastprng --release --test loom_percpu`
#![cfg(all(scalrand_loom, feature = "std"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use loom::sync::Arc;
use rand_core::SeedableRng;
use scalrand_fastprng::{PerCpu, Xoroshiro128, Xoroshiro128PlusPlus};

#[test]
fn two_threads_one_slot() {
    loom::model(|| {
        let master = Xoroshiro128PlusPlus::seed_from_u64(1);
        let p = Arc::new(PerCpu::with_cpus(master.clone(), 1).unwrap());
        let p2 = Arc::clone(&p);
        let t = loom::thread::spawn(move || p2.with_cpu(0, |r| r.next_u64()).unwrap());
        let a = p.next_u64();
        let b = t.join().unwrap();
        // The single try-lock slot is master jumped twice; its first two outputs go to the two
        // callers in some order.
        let mut r = master;
        r.jump();
        r.jump();
        let (x, y) = (r.next_raw(), r.next_raw());
        assert!((a, b) == (x, y) || (a, b) == (y, x), "{a:x} {b:x}");
    });
}

#[test]
fn three_callers_two_slots() {
    loom::model(|| {
        let master = Xoroshiro128PlusPlus::seed_from_u64(2);
        let p = Arc::new(PerCpu::with_cpus(master, 2).unwrap());
        let hs: Vec<_> = (0..2)
            .map(|i| {
                let p = Arc::clone(&p);
                loom::thread::spawn(move || p.with_cpu(i, |r| r.next_u64()).unwrap())
            })
            .collect();
        let mine = p.with_cpu(0, |r| r.next_u64()).unwrap();
        let mut all: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        all.push(mine);
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 3, "no output handed out twice");
    });
}
