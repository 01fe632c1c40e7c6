//! rand 0.10's helpers (`rand::RngExt`: `random`, `random_range`, `random_bool`, `fill`;
//! `rand::seq::SliceRandom::shuffle`, `IndexedRandom::choose`) on every scalrand generator:
//! the facade's [`scalrand::SecureRng`] handle, `&PerCpu<_>` (and the global `scalrand::fast`
//! one), the three xoroshiro types, and `&Fortuna` / `Fortuna`.
//!
//! All of them implement rand_core 0.10's `TryRng<Error = Infallible>`, which makes them
//! `rand::Rng` (and the pools `CryptoRng`), so no `UnwrapErr` adapter is needed.
//!
//! Independent references: `rand_xoshiro` (a separate implementation of the same
//! generators) must give the same shuffles and ranges from the same seed, and a Fortuna read
//! through rand must equal the bare FS&K generator's output for the same seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{CryptoRng, Rng, RngExt, SeedableRng};
use scalrand::fastprng::{PerCpu, Xoroshiro128Plus, Xoroshiro128PlusPlus, Xoroshiro128StarStar};

/// Exercises every helper on `rng` and checks what can be checked without knowing the
/// stream: bounds, coverage, a permutation that moved, non-constant output.
fn exercise<R: Rng + ?Sized>(rng: &mut R) {
    // random_range: in bounds, every value of a small range seen.
    let mut seen = [0u32; 6];
    for _ in 0..600 {
        let d: u8 = rng.random_range(1..=6);
        assert!((1..=6).contains(&d));
        seen[usize::from(d - 1)] += 1;
    }
    // Binomial(600, 1/6): mean 100, sd ~9; 40..160 is > 6 sd.
    assert!(seen.iter().all(|&n| (40..160).contains(&n)), "{seen:?}");
    let x: f64 = rng.random_range(-1.5..2.5);
    assert!((-1.5..2.5).contains(&x));
    let big = rng.random_range(u64::MAX - 3..=u64::MAX);
    assert!(big >= u64::MAX - 3);

    // random::<T>: different draws differ (2^-64 chance of a false failure per pair).
    let (a, b): (u64, u64) = (rng.random(), rng.random());
    assert_ne!(a, b);
    let u: f64 = rng.random();
    assert!((0.0..1.0).contains(&u));
    let arr: [u32; 4] = rng.random();
    assert_ne!(arr, [0; 4]);

    // random_bool: p = 0 and 1 are exact, 1/2 gives both.
    assert!(!rng.random_bool(0.0));
    assert!(rng.random_bool(1.0));
    let heads = (0..400).filter(|_| rng.random_bool(0.5)).count();
    assert!((120..280).contains(&heads), "{heads}");

    // fill: bytes and words.
    let mut bytes = [0u8; 64];
    rng.fill(&mut bytes[..]);
    assert_ne!(bytes, [0u8; 64]);
    let mut words = [0u32; 16];
    rng.fill(&mut words[..]);
    assert_ne!(words, [0u32; 16]);

    // shuffle: a permutation of the same elements, and not the identity (1/100! chance).
    let mut v: Vec<u32> = (0..100).collect();
    v.shuffle(rng);
    assert_ne!(v, (0..100).collect::<Vec<_>>());
    let mut sorted = v.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    let pick = v.choose(rng).unwrap();
    assert!(*pick < 100);
}

fn assert_crypto<R: CryptoRng + ?Sized>(_: &R) {}

#[test]
fn facade_crypto_handle() {
    let mut rng = scalrand::rng();
    assert_crypto(&rng);
    exercise(&mut rng);
    // A copy reads the same pools: it does not repeat the original's output.
    let mut copy = rng;
    assert_ne!(rng.random::<u64>(), copy.random::<u64>());
    let mut named = scalrand::SecureRng::new();
    exercise(&mut named);
    // Handles share the global pools; any number of them, on any thread.
    let tokens: Vec<[u8; 32]> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| scalrand::rng().random::<[u8; 32]>()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for i in 0..tokens.len() {
        for j in 0..i {
            assert_ne!(tokens[i], tokens[j]);
        }
    }
}

#[test]
fn per_cpu_by_shared_reference() {
    let p = PerCpu::with_cpus(Xoroshiro128PlusPlus::seed_from_u64(7), 4).unwrap();
    // `&PerCpu` is the generator: share it by reference, no `&mut`, no lock per thread.
    exercise(&mut &p);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut r = &p;
                exercise(&mut r);
            });
        }
    });
    // The process-wide fast generator behind `scalrand::fast`.
    exercise(&mut scalrand::fast::global());
    let mut owned = PerCpu::with_cpus(Xoroshiro128StarStar::seed_from_u64(1), 2).unwrap();
    exercise(&mut owned);
}

#[test]
fn xoroshiro_types() {
    exercise(&mut Xoroshiro128PlusPlus::seed_from_u64(1));
    exercise(&mut Xoroshiro128StarStar::seed_from_u64(2));
    exercise(&mut Xoroshiro128Plus::seed_from_u64(3));
    // Seeding one generator from another through rand_core's SeedableRng::from_rng.
    let mut from_crypto = Xoroshiro128PlusPlus::from_rng(&mut scalrand::rng());
    exercise(&mut from_crypto);
}

/// Same seed bytes, two independent implementations: rand's helpers must consume both
/// streams identically, so every derived value matches.
#[test]
fn xoroshiro_helpers_match_rand_xoshiro() {
    let seed: [u8; 16] = *b"scalrand-interop";
    macro_rules! same {
        ($ours:ty, $theirs:ty) => {{
            let mut a = <$ours>::from_seed(seed);
            let mut b = <$theirs>::from_seed(seed);
            let mut va: Vec<u16> = (0..1000).collect();
            let mut vb = va.clone();
            va.shuffle(&mut a);
            vb.shuffle(&mut b);
            assert_eq!(va, vb);
            for _ in 0..100 {
                assert_eq!(
                    a.random_range(0..1_000_003u32),
                    b.random_range(0..1_000_003u32)
                );
                assert_eq!(a.random::<f64>().to_bits(), b.random::<f64>().to_bits());
            }
            let (mut fa, mut fb) = ([0u8; 37], [0u8; 37]);
            a.fill(&mut fa[..]);
            b.fill(&mut fb[..]);
            assert_eq!(fa, fb);
        }};
    }
    same!(Xoroshiro128PlusPlus, rand_xoshiro::Xoroshiro128PlusPlus);
    same!(Xoroshiro128StarStar, rand_xoshiro::Xoroshiro128StarStar);
    same!(Xoroshiro128Plus, rand_xoshiro::Xoroshiro128Plus);
}

#[cfg(feature = "fortuna")]
#[test]
fn fortuna_by_reference_and_by_value() {
    use rand::TryRng;
    use scalrand::pool::fortuna::{Aes256Prf, Fortuna, Generator, ReadMode, monotonic_now};
    use std::convert::Infallible;
    use std::time::Duration;
    // Infallible: these are `Rng`, no adapter needed.
    fn infallible<R: TryRng<Error = Infallible>>(_: &R) {}
    let clock = monotonic_now as fn() -> Duration;
    let seed = [0x42u8; 32];

    for mode in [ReadMode::Concurrent, ReadMode::Locked] {
        let f = Fortuna::<Aes256Prf, _>::from_seed(mode, &seed, clock).unwrap();
        infallible(&&f);
        assert_crypto(&&f);
        let mut got = [0u8; 48];
        (&f).fill(&mut got[..]);
        if mode == ReadMode::Locked {
            // A Locked read of at most 4 KiB through rand is one FS&K generator request.
            let mut g = Generator::new();
            g.reseed(&seed);
            let mut want = [0u8; 48];
            g.pseudo_random_data(&mut want).unwrap();
            assert_eq!(got, want, "{mode:?}");
        } else {
            // Concurrent reads run under a private reader key (its known answers are in
            // scalrand-pool's tests): through rand they are as reproducible from the seed.
            let twin = Fortuna::<Aes256Prf, _>::from_seed(mode, &seed, clock).unwrap();
            let mut again = [0u8; 48];
            (&twin).fill(&mut again[..]);
            assert_eq!(got, again, "{mode:?}");
        }

        exercise(&mut &f);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| exercise(&mut &f));
            }
        });
        let mut owned = f;
        exercise(&mut owned);
    }
    let f = Fortuna::new(ReadMode::Concurrent).unwrap();
    exercise(&mut &f);
}

#[test]
fn node_pools_by_shared_reference() {
    use scalrand::pool::numa::{NodePools, Topology};
    let pools = NodePools::new(Topology::from_nodes(vec![vec![0, 1], vec![2, 3]])).unwrap();
    assert_crypto(&&pools);
    exercise(&mut &pools);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| exercise(&mut &pools));
        }
    });
}

/// The code of `docs/MIGRATION.md`, kept compiling and passing here.
#[test]
fn migration_guide_snippets() {
    // rand::rng() -> scalrand::rng()
    let mut rng = scalrand::rng();
    let die: u8 = rng.random_range(1..=6);
    assert!((1..=6).contains(&die));
    let nonce: [u8; 12] = rng.random();
    let _ = nonce;
    // `scalrand::SecureRng` is Send + Sync + Copy (ThreadRng is none of them).
    fn send_sync_copy<T: Send + Sync + Copy>(_: &T) {}
    send_sync_copy(&rng);

    // getrandom::fill -> scalrand::fill_bytes
    let mut key = [0u8; 32];
    scalrand::fill_bytes(&mut key);
    assert_ne!(key, [0u8; 32]);

    // rand's free functions -> scalrand's
    let token: u128 = scalrand::random();
    let die: u8 = scalrand::random_range(1..=6);
    assert!((1..=6).contains(&die));
    let mut ids = [0u32; 4];
    scalrand::fill(&mut ids[..]);
    let coin = scalrand::random_bool(0.5);
    let two_in_three = scalrand::random_ratio(2, 3);
    let stream: Vec<u64> = scalrand::random_iter().take(3).collect();
    assert_eq!(stream.len(), 3);
    let _ = (token, coin, two_in_three);

    // fastrand -> scalrand::fast
    let _x = scalrand::fast::u64(..);
    let roll = scalrand::fast::u8(1..=6);
    assert!((1..=6).contains(&roll));
    let mut v: Vec<u32> = (0..10).collect();
    scalrand::fast::shuffle(&mut v);
    let mut rng = scalrand::fast::Rng::with_seed(42);
    let hand = rng.choose_multiple(&v, 3);
    assert_eq!(hand.len(), 3);
    let pick = scalrand::fast::choice(&v).unwrap();
    assert!(*pick < 10);
    assert_eq!(scalrand::fast::try_u8(6..6), None);
    let coin = scalrand::fast::bool();
    let unit = scalrand::fast::f64();
    assert!((0.0..1.0).contains(&unit));
    let _ = coin;
    // WyRand::from_state(7)'s words are fastrand::Rng::with_seed(7)'s `u64(..)` (checked
    // against fastrand in tests/fastrand_compat.rs through `fast::Rng`, whose words these are).
    let mut seeded = scalrand::fastprng::WyRand::from_state(7);
    let words: Vec<u64> = (0..3).map(|_| seeded.next_raw()).collect();
    let mut fast_rng = scalrand::fast::Rng::with_seed(7);
    assert_eq!(words, (0..3).map(|_| fast_rng.u64(..)).collect::<Vec<_>>());
    let mut rng = scalrand::fast::global();
    let roll: u8 = rng.random_range(1..=6);
    assert!((1..=6).contains(&roll));
    let mut v: Vec<u32> = (0..10).collect();
    v.shuffle(&mut rng);
    v.sort_unstable();
    assert_eq!(v, (0..10).collect::<Vec<_>>());

    // Your own generator instance
    let rng = PerCpu::with_cpus(Xoroshiro128PlusPlus::seed_from_u64(42), 8).unwrap();
    let sample: f64 = (&rng).random();
    assert!((0.0..1.0).contains(&sample));
    let first = rng.with_cpu(0, |slot| slot.random::<u64>()).unwrap();
    // Slot 0 of another instance from the same seed gives the same stream. Where the
    // try-lock path (no rseq) served `sample` and `cpu::current` named slot 0, `sample` took
    // that stream's first word, so `first` is its first or second.
    let twin = PerCpu::with_cpus(Xoroshiro128PlusPlus::seed_from_u64(42), 8).unwrap();
    let stream = twin
        .with_cpu(0, |slot| [slot.random::<u64>(), slot.random::<u64>()])
        .unwrap();
    assert!(stream.contains(&first), "{first:#x} not in {stream:x?}");
    let mut sim = Xoroshiro128PlusPlus::from_rng(&mut scalrand::rng());
    let step = sim.random_range(0..100);
    assert!(step < 100);
    let firsts: Vec<u64> = (&rng).random_iter().take(3).collect();
    assert_eq!(firsts.len(), 3);
}

/// The handle sits beside rand's `Rng` trait in one scope (a `scalrand::Rng` would be E0252
/// here; `tests/glob_import.rs` checks the glob form).
#[test]
fn secure_rng_sits_beside_rands_rng_trait() {
    use rand::Rng;
    use scalrand::SecureRng;
    let mut a: SecureRng = scalrand::rng();
    let mut b = a;
    assert_ne!(a.next_u64(), b.next_u64());
}

/// `try_` functions report a typed `scalrand::Error` that `?` converts into a boxed error.
#[test]
fn try_functions_return_scalrand_error() -> Result<(), Box<dyn std::error::Error>> {
    let mut salt = [0u8; 16];
    scalrand::try_fill_bytes(&mut salt)?;
    let id: Result<u64, scalrand::Error> = scalrand::try_next_u64();
    assert_ne!(id?, scalrand::try_next_u64()?);
    Ok(())
}
