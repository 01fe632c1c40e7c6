//! One test per row of the "Bad inputs" table in `scalrand_pool::fortuna`'s docs.
#![cfg(feature = "fortuna")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use core::time::Duration;
use std::sync::atomic::{AtomicU64, Ordering};

use scalrand_pool::fortuna::{
    Accumulator, ChaCha20Prf, Clock, Fortuna, FortunaError, Generator, MAX_REQUEST, ReadMode,
};

fn zero() -> Duration {
    Duration::ZERO
}

#[test]
fn read_before_reseed() {
    let mut g = Generator::new();
    let mut out = [0xAAu8; 16];
    assert_eq!(g.pseudo_random_data(&mut out), Err(FortunaError::NotSeeded));
    assert_eq!(out, [0xAA; 16], "output untouched");
    let mut empty = [];
    assert_eq!(
        g.pseudo_random_data(&mut empty),
        Err(FortunaError::NotSeeded)
    );
    let mut c = Generator::<ChaCha20Prf>::with_prf();
    assert_eq!(c.pseudo_random_data(&mut out), Err(FortunaError::NotSeeded));
    assert!(!g.is_seeded());
}

#[test]
fn request_over_2_pow_20() {
    let mut g = Generator::new();
    let mut twin = Generator::new();
    g.reseed(b"s");
    twin.reseed(b"s");
    let mut big = vec![0u8; MAX_REQUEST + 1];
    assert_eq!(
        g.pseudo_random_data(&mut big),
        Err(FortunaError::RequestTooLarge {
            requested: MAX_REQUEST + 1
        })
    );
    assert!(big.iter().all(|&b| b == 0), "output untouched");
    // State untouched: the next read equals a twin's that never saw the bad request.
    let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
    g.pseudo_random_data(&mut a).unwrap();
    twin.pseudo_random_data(&mut b).unwrap();
    assert_eq!(a, b);
    // Exactly 2^20 is allowed.
    let mut max = vec![0u8; MAX_REQUEST];
    g.pseudo_random_data(&mut max).unwrap();
}

#[test]
fn empty_event() {
    let mut acc = Accumulator::new(zero as fn() -> Duration);
    assert_eq!(
        acc.add_random_event(0, 0, &[]),
        Err(FortunaError::EventLength { len: 0 })
    );
    assert_eq!(acc.pool_len(0), Some(0), "nothing appended");
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Locked, &[0; 32], zero as fn() -> Duration).unwrap();
    assert_eq!(
        f.add_random_event(0, 0, &[]),
        Err(FortunaError::EventLength { len: 0 })
    );
}

#[test]
fn long_event() {
    let mut acc = Accumulator::new(zero as fn() -> Duration);
    assert_eq!(
        acc.add_random_event(0, 3, &[0; 33]),
        Err(FortunaError::EventLength { len: 33 })
    );
    assert_eq!(
        acc.add_random_event(0, 3, &vec![0; 300]),
        Err(FortunaError::EventLength { len: 300 }),
        "a length that does not fit the length byte is rejected, not truncated"
    );
    assert_eq!(acc.pool_len(3), Some(0));
    acc.add_random_event(0, 3, &[0; 32]).unwrap();
    assert_eq!(acc.pool_len(3), Some(34));
}

#[test]
fn pool_out_of_range() {
    let mut acc = Accumulator::new(zero as fn() -> Duration);
    assert_eq!(
        acc.add_random_event(0, 32, &[1]),
        Err(FortunaError::PoolIndex { pool: 32 })
    );
    assert_eq!(
        acc.add_random_event(0, usize::MAX, &[1]),
        Err(FortunaError::PoolIndex { pool: usize::MAX })
    );
    assert_eq!(acc.pool_len(32), None);
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Concurrent, &[0; 32], zero as fn() -> Duration).unwrap();
    assert_eq!(
        f.add_random_event(0, 99, &[1]),
        Err(FortunaError::PoolIndex { pool: 99 })
    );
}

#[test]
fn zero_min_pool_size() {
    assert_eq!(
        Accumulator::with_min_pool_size(zero as fn() -> Duration, 0).err(),
        Some(FortunaError::MinPoolSize)
    );
    assert!(Accumulator::with_min_pool_size(zero as fn() -> Duration, 1).is_ok());
}

#[test]
fn short_fortuna_seed() {
    for len in [0, 1, 31] {
        let seed = vec![7u8; len];
        let r: Result<Fortuna, _> =
            Fortuna::from_seed(ReadMode::Concurrent, &seed, zero as fn() -> Duration);
        assert_eq!(r.err(), Some(FortunaError::SeedTooShort { len }));
    }
    let ok: Result<Fortuna, _> =
        Fortuna::from_seed(ReadMode::Locked, &[7; 32], zero as fn() -> Duration);
    assert!(ok.is_ok());
    // The constructors with the default clock (and PRF) refuse the same seeds.
    #[cfg(feature = "std")]
    for len in [0, 1, 31] {
        let seed = vec![7u8; len];
        let e = Some(FortunaError::SeedTooShort { len });
        assert_eq!(Fortuna::with_seed(ReadMode::Locked, &seed).err(), e);
        assert_eq!(
            Fortuna::<scalrand_pool::fortuna::ChaCha20Prf>::with_prf_and_seed(
                ReadMode::Locked,
                &seed
            )
            .err(),
            e
        );
    }
}

#[test]
fn empty_reseed_is_accepted() {
    let mut g = Generator::new();
    g.reseed(b"");
    assert!(g.is_seeded());
    let mut a = [0u8; 16];
    g.pseudo_random_data(&mut a).unwrap();
    let f: Fortuna =
        Fortuna::from_seed(ReadMode::Locked, &[1; 32], zero as fn() -> Duration).unwrap();
    let twin: Fortuna =
        Fortuna::from_seed(ReadMode::Locked, &[1; 32], zero as fn() -> Duration).unwrap();
    f.reseed(b"");
    let (mut x, mut y) = ([0u8; 16], [0u8; 16]);
    f.fill_bytes(&mut x);
    twin.fill_bytes(&mut y);
    assert_ne!(x, y, "an empty reseed still changes the key");
}

#[test]
fn fortuna_any_length() {
    for mode in [ReadMode::Locked, ReadMode::Concurrent] {
        let f: Fortuna = Fortuna::from_seed(mode, &[2; 32], zero as fn() -> Duration).unwrap();
        let twin: Fortuna = Fortuna::from_seed(mode, &[2; 32], zero as fn() -> Duration).unwrap();
        f.fill_bytes(&mut []);
        // n = 0 rekeys: the next bytes differ from a twin that did not read.
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        f.fill_bytes(&mut a);
        twin.fill_bytes(&mut b);
        assert_ne!(a, b);
        let mut big = vec![0u8; 2 * MAX_REQUEST + 5];
        f.fill_bytes(&mut big);
        // No 16-byte block of a 2 MiB read repeats, and the tail is filled.
        let mut blocks: Vec<&[u8]> = big.chunks_exact(16).collect();
        blocks.sort_unstable();
        blocks.dedup();
        assert_eq!(blocks.len(), big.len() / 16);
        assert_ne!(big[big.len() - 5..], [0; 5]);
    }
}

#[test]
fn clock_going_backwards() {
    #[derive(Debug)]
    struct Manual(AtomicU64);
    impl Clock for Manual {
        fn now(&self) -> Duration {
            Duration::from_millis(self.0.load(Ordering::SeqCst))
        }
    }
    let clock = Manual(AtomicU64::new(10_000));
    let mut acc = Accumulator::new(&clock);
    let mut g = Generator::new();
    let fill = |acc: &mut Accumulator<&Manual>| {
        acc.add_random_event(0, 0, &[1; 32]).unwrap();
        acc.add_random_event(0, 0, &[1; 32]).unwrap();
    };
    fill(&mut acc);
    assert_eq!(acc.reseed_if_due(&mut g), Some(1));
    fill(&mut acc);
    clock.0.store(1_000, Ordering::SeqCst); // 9 s into the past
    assert_eq!(
        acc.reseed_if_due(&mut g),
        None,
        "a clock going backwards is no time passing"
    );
    clock.0.store(10_099, Ordering::SeqCst);
    assert_eq!(acc.reseed_if_due(&mut g), None);
    clock.0.store(10_100, Ordering::SeqCst);
    assert_eq!(acc.reseed_if_due(&mut g), Some(2));
}

#[test]
fn errors_display_and_debug() {
    let e = FortunaError::RequestTooLarge { requested: 5 };
    assert!(e.to_string().contains("2^20"));
    assert!(
        FortunaError::EventLength { len: 0 }
            .to_string()
            .contains("1 to 32")
    );
    let _: &dyn std::error::Error = &e;
}
