//! The facade's secure functions, forked from another thread in the middle of their reads:
//! the child finds no 32-byte window of its memory that regenerates what the parent's
//! `scalrand::fill_bytes` (the global node pools) writes after the fork. The pools' own test
//! (`crates/pool/tests/fork_mid_read.rs`) covers the fallbacks and Fortuna. Optimised builds
//! only (see there).

#![cfg(all(target_os = "linux", not(miri), not(debug_assertions)))]
#![allow(clippy::unwrap_used, clippy::panic)] // test code fails loudly

use scalrand_testkit::midread::{Cipher, Reads, fork_during_reads, node_block_at};

#[test]
fn fill_bytes_in_flight_at_a_fork_is_not_in_the_child() {
    if !scalrand::os::wipe::WipeOnFork::<u8>::new(1, |_| 0).wipes_on_fork() {
        eprintln!("not checked: no wipe-on-fork memory here");
        return;
    }
    for len in [300usize, 64 << 10, 2 << 20] {
        let out = fork_during_reads(&Reads {
            len,
            readers: 2,
            landings: 3,
            max_forks: 20,
            read: &scalrand::fill_bytes,
            cipher: Cipher::ChaCha(20),
            block_at: node_block_at,
        });
        eprintln!("scalrand::fill_bytes {len} B: {out:?}");
        assert!(out.landed > 0, "{len} B: no fork landed inside a read");
        assert_eq!(out.exposed, 0, "{len} B: {out:?}");
        assert_eq!(out.rewritten, 0, "{len} B: {out:?}");
    }
}
