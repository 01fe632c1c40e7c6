//! The Fortuna type's tests: both read modes, fork and reseed behaviour, erasure.

use super::*;
use crate::fortuna::ChaCha20Prf;
use crate::fortuna::generator::READER_FIRST_BLOCK;
use crate::fortuna::prf::TaggingPrf;
use std::collections::HashSet;
use std::vec;

fn zero() -> Duration {
    Duration::ZERO
}

/// Forward secrecy at the Fortuna level, both modes: after a read, the global state's key
/// regenerates none of the output for any counter up to C + 256, while the key the read
/// started from does, through the mode's schedule (so the check can see a match when
/// there is one).
#[test]
fn forward_secrecy_after_a_read() {
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f: Fortuna = Fortuna::from_seed(mode, &[3; 32], zero as fn() -> Duration).unwrap();
        let (k0, c0, _) = f.raw_state();
        let mut out = [0u8; 3000];
        f.fill_bytes(&mut out);
        let (k1, c1, _) = f.raw_state();
        assert_ne!(k0, k1);
        let span = c1 as usize + 256;
        let mut ks = vec![0u8; span * 16];
        Aes256Prf::keystream(&Aes256Prf::keyed(&k1), 0, &mut ks);
        for blk in ks.chunks_exact(16) {
            assert!(out.chunks_exact(16).all(|o| o != blk), "{mode:?}");
        }
        let mut again = [0u8; 16];
        match mode {
            ReadMode::Locked => {
                Aes256Prf::keystream(&Aes256Prf::keyed(&k0), c0, &mut again);
            }
            ReadMode::Concurrent => {
                let mut kr = [0u8; 32];
                Aes256Prf::keystream(&Aes256Prf::keyed(&k0), c0, &mut kr);
                Aes256Prf::keystream(&Aes256Prf::keyed(&kr), READER_FIRST_BLOCK, &mut again);
            }
        }
        assert_eq!(again, out[..16], "{mode:?}");
    }
}

/// The Concurrent schedule's forward secrecy between readers: the private key a reader
/// holds after unlocking reaches neither the new global key nor any later reader's
/// output. Reader 1's key is taken from the locked half; then reader 2 reads. Checked:
/// no block of reader 2 is in reader 1's keystream for counters 0 .. C' + 4096 (C' the
/// global counter after reader 1, far past every counter used), and no key the schedule
/// derives from reader 1's key at any of those counters is the global K' or produces
/// reader 2's first blocks. (The pre-2026 schedule, where the reader held the global K
/// itself and K' = E(K, C + R ..), fails both.)
fn reader_key_reaches_no_later_reader<P: Prf>() {
    let f: Fortuna<P> =
        Fortuna::from_seed(ReadMode::Concurrent, &[7; 32], zero as fn() -> Duration).unwrap();
    let mut warm = [0u8; 100];
    f.fill_bytes(&mut warm);
    let k1 = f.reserve_for_tests();
    let (k_global, c_global, _) = f.raw_state();
    let mut out2 = vec![0u8; 4096];
    f.fill_bytes(&mut out2);
    let blocks2: HashSet<&[u8]> = out2.chunks_exact(P::BLOCK_LEN).collect();
    let window = c_global as usize + 4096;
    let keyed1 = P::keyed(&k1);
    let mut ks = vec![0u8; window * P::BLOCK_LEN];
    P::keystream(&keyed1, 0, &mut ks);
    for blk in ks.chunks_exact(P::BLOCK_LEN) {
        assert!(
            !blocks2.contains(blk),
            "reader 2's block in reader 1's keystream"
        );
    }
    let mut first2 = vec![0u8; 2 * P::BLOCK_LEN];
    first2.copy_from_slice(&out2[..2 * P::BLOCK_LEN]);
    for c in 0..window as u128 {
        let mut derived = [0u8; 32];
        P::keystream(&keyed1, c, &mut derived);
        assert_ne!(derived, k_global, "K' derivable from reader 1's key at {c}");
        let mut guess = vec![0u8; 2 * P::BLOCK_LEN];
        P::keystream(&P::keyed(&derived), READER_FIRST_BLOCK, &mut guess);
        assert_ne!(
            guess, first2,
            "reader 2's key derivable from reader 1's at {c}"
        );
    }
    // The control: reader 1's key does regenerate reader 1's own output.
    let mut own = vec![0u8; P::BLOCK_LEN];
    P::keystream(&keyed1, READER_FIRST_BLOCK, &mut own);
    assert_eq!(own, ks[P::BLOCK_LEN..2 * P::BLOCK_LEN]);
}

#[test]
fn concurrent_reader_key_reaches_no_later_reader_aes() {
    reader_key_reaches_no_later_reader::<Aes256Prf>();
}

#[test]
fn concurrent_reader_key_reaches_no_later_reader_chacha() {
    reader_key_reaches_no_later_reader::<ChaCha20Prf>();
}

/// The fork path, driven by hand (what a child does on its first read): K and C are
/// replaced, the new key is not the old one, and the fork secret changes with it.
#[test]
fn a_wiped_state_is_rekeyed_before_answering() {
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Locked, &[2; 32], zero as fn() -> Duration).unwrap();
    let twin: Fortuna =
        Fortuna::from_seed(ReadMode::Locked, &[2; 32], zero as fn() -> Duration).unwrap();
    let (k0, _, _) = f.raw_state();
    let s0 = f.fork_secret.lock().with(|s| s.0);
    // What the kernel does to wipe-on-fork memory, done by hand.
    f.state().lock().with(|s| s.generator.wipe());
    let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
    f.fill_bytes(&mut a);
    twin.fill_bytes(&mut b);
    assert_ne!(a, b);
    let (k1, _, _) = f.raw_state();
    assert_ne!(k1, k0);
    assert_ne!(f.fork_secret.lock().with(|s| s.0), s0);
    assert_ne!(s0, k0);
}

#[test]
fn reseed_from_os_changes_the_stream() {
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[3; 32], zero as fn() -> Duration).unwrap();
    let twin: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[3; 32], zero as fn() -> Duration).unwrap();
    f.reseed_from_os().unwrap();
    let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
    f.fill_bytes(&mut a);
    twin.fill_bytes(&mut b);
    assert_ne!(a, b);
}

/// Every block a concurrent reader emits is tagged with (key, counter) by the tagging
/// PRF: readers' blocks never repeat, and the epoch counts every key change.
#[test]
fn concurrent_readers_never_share_a_block() {
    let f: Fortuna<TaggingPrf> =
        Fortuna::from_seed(ReadMode::Concurrent, &[9; 32], zero as fn() -> Duration).unwrap();
    let mut seen = HashSet::new();
    let reads = 200;
    std::thread::scope(|s| {
        let hs: std::vec::Vec<_> = (0..4)
            .map(|t| {
                let f = &f;
                s.spawn(move || {
                    let mut all = std::vec::Vec::new();
                    for i in 0..reads / 4 {
                        let mut buf = vec![0u8; 16 * (1 + (i + t) % 7)];
                        f.fill_bytes(&mut buf);
                        all.extend_from_slice(&buf);
                    }
                    all
                })
            })
            .collect();
        for h in hs {
            for b in h.join().unwrap().chunks(16) {
                assert!(seen.insert(b.to_vec()), "block reused");
            }
        }
    });
    let (_, _, epoch) = f.raw_state();
    assert_eq!(epoch, reads as u64);
}
