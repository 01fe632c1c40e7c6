//! A loom model of the Fortuna type's concurrent read mode (`--cfg scalrand_loom`).
//!
//! Two readers and one reseed, under every interleaving loom finds with the preemption
//! bound: no two readers use the same (key, counter) block, no reader holds a global key
//! (Concurrent: each reader's key is derived, never the shared K), and no key change is
//! lost or replayed.

use super::*;
use crate::fortuna::generator::READER_FIRST_BLOCK;
use crate::fortuna::prf::TaggingPrf;
use loom::sync::Arc;
extern crate std;
use std::vec::Vec;

fn zero() -> Duration {
    Duration::ZERO
}

/// (key tag, counter) of each 16-byte block.
fn blocks(buf: &[u8]) -> Vec<(u64, u64)> {
    buf.chunks(16)
        .map(|b| {
            let mut t = [0u8; 8];
            let mut c = [0u8; 8];
            t.copy_from_slice(&b[..8]);
            c.copy_from_slice(&b[8..]);
            (u64::from_le_bytes(t), u64::from_le_bytes(c))
        })
        .collect()
}

#[test]
fn two_concurrent_readers_and_a_reseed() {
    two_readers_and_a_reseed(ReadMode::Concurrent);
}

#[test]
fn two_locked_readers_and_a_reseed() {
    two_readers_and_a_reseed(ReadMode::Locked);
}

fn two_readers_and_a_reseed(mode: ReadMode) {
    // `scalrand_os::Lock` spins (a loom `yield_now` per attempt): each wait is a branch,
    // so the default bound of 1,000 branches per execution is too small.
    let mut builder = loom::model::Builder::new();
    builder.max_branches = builder.max_branches.max(100_000);
    // Executions explored (plain std atomic: counts across loom's runs), printed at the end.
    static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    EXECUTIONS.store(0, std::sync::atomic::Ordering::Relaxed);
    builder.check(move || {
        EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let f: Arc<Fortuna<TaggingPrf>> =
            Arc::new(Fortuna::from_seed(mode, &[1; 32], zero as fn() -> Duration).unwrap());
        let (k0, c0, e0) = f.raw_state();
        let readers: Vec<_> = [3usize, 5]
            .into_iter()
            .map(|nblocks| {
                let f = Arc::clone(&f);
                loom::thread::spawn(move || {
                    let mut buf = std::vec![0u8; 16 * nblocks];
                    f.fill_bytes(&mut buf);
                    blocks(&buf)
                })
            })
            .collect();
        let g = Arc::clone(&f);
        let reseeder = loom::thread::spawn(move || g.reseed(b"event"));
        let outs: Vec<Vec<(u64, u64)>> = readers.into_iter().map(|h| h.join().unwrap()).collect();
        reseeder.join().unwrap();
        let (k1, c1, e1) = f.raw_state();

        // Each reader used one key, consecutive counters.
        for o in &outs {
            assert!(
                o.windows(2)
                    .all(|w| w[0].0 == w[1].0 && w[1].1 == w[0].1 + 1)
            );
        }
        // No (K, C) block is shared between the readers.
        for a in &outs[0] {
            assert!(!outs[1].contains(a), "readers shared block {a:?}");
        }
        // The readers used different keys, neither of them the final global one.
        let (ta, tb) = (outs[0][0].0, outs[1][0].0);
        assert_ne!(ta, tb);
        let t1 = TaggingPrf::tag(&k1);
        assert_ne!(t1, ta);
        assert_ne!(t1, tb);
        assert_ne!(k1, k0);
        // Three key changes, none lost.
        assert_eq!(e1, e0 + 3);
        let kb = <TaggingPrf as Prf>::KEY_BLOCKS as u128;
        match mode {
            ReadMode::Concurrent => {
                // Readers start at block 1 of their private keys, which are never a
                // global key (the initial one included); the global counter moved by
                // exactly 2·KB per reader, +1 for the reseed.
                for o in &outs {
                    assert_eq!(o[0].1, READER_FIRST_BLOCK as u64);
                }
                let t0 = TaggingPrf::tag(&k0);
                assert_ne!(ta, t0);
                assert_ne!(tb, t0);
                assert_eq!(c1, c0 + 2 * (2 * kb) + 1);
            }
            ReadMode::Locked => {
                // 3 + 5 output blocks, a KB-block rekey after each read, +1 for the reseed.
                assert_eq!(c1, c0 + 3 + 5 + 2 * kb + 1);
            }
        }
    });
    std::eprintln!(
        "loom {mode:?}: {} executions",
        EXECUTIONS.load(std::sync::atomic::Ordering::Relaxed)
    );
}
