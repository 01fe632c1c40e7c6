//! loom model of `FlagPreempt`: a request set by another thread is never lost and never
//! answered twice. Run with
//! `RUSTFLAGS="--cfg scalrand_loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p scalrand-simd-chunk --release --test loom_flag`.
#![cfg(scalrand_loom)]

use std::cell::Cell;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use scalrand_simd_chunk::{FlagPreempt, NoSection, Policy, fill_chunked};

#[test]
fn flag_request_is_seen_or_still_pending() {
    loom::model(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f2 = flag.clone();
        let setter = thread::spawn(move || f2.store(true, Ordering::Relaxed));
        let yields = Cell::new(0u32);
        let mut p = FlagPreempt::new(&flag, || yields.set(yields.get() + 1));
        let mut buf = [0u8; 3];
        let policy = Policy::new(1).unwrap();
        // 3 one-byte pieces: 2 checks.
        let c = fill_chunked(&mut buf, policy, &mut NoSection, &mut p, |_, _| {});
        setter.join().unwrap();
        assert_eq!(c.checks, 2);
        assert_eq!(u64::from(yields.get()), c.yields);
        // One request: at most one yield, and if none happened the request is still pending.
        assert!(yields.get() <= 1);
        assert!(yields.get() == 1 || flag.load(Ordering::Relaxed));
        // If the yield happened, it cleared the flag.
        if yields.get() == 1 {
            assert!(!flag.load(Ordering::Relaxed));
        }
    });
}
