//! `Fortuna` shared by `&self` across threads, and its `rand_core` traits. Without the `std`
//! feature the same tests run too (same `scalrand_os::Lock`; state on the plain heap).
#![cfg(feature = "fortuna")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use core::time::Duration;
use std::collections::HashSet;

use rand_core::{CryptoRng, Rng, TryCryptoRng, TryRng};
use scalrand_pool::fortuna::{ChaCha20Prf, Fortuna, Generator, ReadMode};

fn zero() -> Duration {
    Duration::ZERO
}

/// Many threads, both modes, both PRFs: no 16-byte block is ever returned twice (with a
/// CSPRNG a repeat has probability ~2^-100 here; a reused (K, C) range repeats for sure).
fn no_repeats<F: Fn(&mut [u8]) + Sync>(fill: F) {
    let threads = 4;
    let reads = if cfg!(debug_assertions) { 100 } else { 1000 };
    let mut all = HashSet::new();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let fill = &fill;
                s.spawn(move || {
                    let mut out = Vec::new();
                    for i in 0..reads {
                        let mut b = vec![0u8; 16 * (1 + (i * 7 + t) % 300)];
                        fill(&mut b);
                        out.extend_from_slice(&b);
                    }
                    out
                })
            })
            .collect();
        for h in hs {
            for blk in h.join().unwrap().chunks_exact(16) {
                assert!(all.insert(blk.to_vec()), "a block was returned twice");
            }
        }
    });
}

#[test]
fn threads_never_share_output() {
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f: Fortuna = Fortuna::from_seed(mode, &[4; 32], zero as fn() -> Duration).unwrap();
        no_repeats(|b| f.fill_bytes(b));
        let c: Fortuna<ChaCha20Prf> =
            Fortuna::from_seed(mode, &[4; 32], zero as fn() -> Duration).unwrap();
        no_repeats(|b| c.fill_bytes(b));
    }
}

/// Concurrent readers and event adders at once (the reseed path races the read path).
#[test]
fn reads_race_events_and_reseeds() {
    static MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    fn now() -> Duration {
        Duration::from_millis(MS.fetch_add(30, std::sync::atomic::Ordering::Relaxed))
    }
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[8; 32], now as fn() -> Duration).unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut b = [0u8; 100];
                for _ in 0..200 {
                    f.fill_bytes(&mut b);
                }
            });
        }
        s.spawn(|| {
            for i in 0..400u32 {
                f.add_random_event(3, (i % 32) as usize, &i.to_le_bytes())
                    .unwrap();
                f.add_random_event(3, 0, &[i as u8; 32]).unwrap();
            }
        });
    });
    let mut b = [0u8; 16];
    f.fill_bytes(&mut b);
    assert!(f.reseed_count() > 0);
}

fn assert_crypto_rng<R: CryptoRng>(_: &R) {}
fn assert_try_crypto_rng<R: TryCryptoRng>(_: &R) {}

#[test]
fn rand_core_traits() {
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[6; 32], zero as fn() -> Duration).unwrap();
    let twin: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[6; 32], zero as fn() -> Duration).unwrap();
    assert_crypto_rng(&&f);
    assert_try_crypto_rng(&&f);
    let mut r = &f;
    let a = r.next_u64();
    let t = &twin;
    let mut b = [0u8; 8];
    t.fill_bytes(&mut b);
    assert_eq!(
        a,
        u64::from_le_bytes(b),
        "next_u64 is 8 little-endian bytes of fill_bytes"
    );
    let x = r.next_u32();
    let mut b4 = [0u8; 4];
    t.fill_bytes(&mut b4);
    assert_eq!(x, u32::from_le_bytes(b4));
    let mut owned = f;
    assert_crypto_rng(&owned);
    let _ = owned.try_next_u64().unwrap();
    let mut buf = [0u8; 10];
    owned.try_fill_bytes(&mut buf).unwrap();
    // `&Fortuna` works with rand's generic APIs across threads.
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut r = &owned;
            let _: u64 = r.next_u64();
        });
    });
}

#[test]
fn debug_never_prints_state() {
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Locked, &[0x5a; 32], zero as fn() -> Duration).unwrap();
    assert_eq!(
        format!("{f:?}"),
        "Fortuna { mode: Locked, prf: \"AES-256\", .. }"
    );
    let g = Generator::<ChaCha20Prf>::with_prf();
    assert_eq!(
        format!("{g:?}"),
        "Generator { prf: \"ChaCha20\", seeded: false, .. }"
    );
}

#[cfg(feature = "std")]
#[test]
fn os_seeded_instances_differ() {
    let a = Fortuna::new(ReadMode::Concurrent).unwrap();
    let b = Fortuna::new(ReadMode::Concurrent).unwrap();
    let (mut x, mut y) = ([0u8; 32], [0u8; 32]);
    a.fill_bytes(&mut x);
    b.fill_bytes(&mut y);
    assert_ne!(x, y);
    assert_eq!(a.mode(), ReadMode::Concurrent);
}
