//! Properties of the read modes that the module docs state, checked on random request
//! sequences against the bare generator (a separate code path from Fortuna's locked and
//! concurrent read paths):
//! * a Concurrent read of n <= 2^20 bytes moves the global state exactly as one
//!   `Generator::pseudo_random_data` of 32 bytes, and those 32 bytes are the reader's private
//!   key: the read returns that key's keystream from block `READER_FIRST_BLOCK` on;
//! * a Locked read is exactly a sequence of `pseudo_random_data` calls of <= 4 KiB.
#![cfg(feature = "fortuna")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use core::time::Duration;

use proptest::prelude::*;
use scalrand_pool::fortuna::{
    ChaCha20Prf, Fortuna, Generator, LOCKED_STEP, MAX_REQUEST, Prf, READER_FIRST_BLOCK, ReadMode,
};

fn zero() -> Duration {
    Duration::ZERO
}

fn concurrent_matches_generator<P: Prf>(seed: &[u8; 32], lens: &[usize]) {
    let f = Fortuna::<P, fn() -> Duration>::from_seed(ReadMode::Concurrent, seed, zero).unwrap();
    let mut g = Generator::<P>::with_prf();
    g.reseed(seed);
    for &n in lens {
        let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
        f.fill_bytes(&mut a);
        let mut reader_key = [0u8; 32];
        g.pseudo_random_data(&mut reader_key).unwrap();
        P::keystream(&P::keyed(&reader_key), READER_FIRST_BLOCK, &mut b);
        assert_eq!(a, b, "read of {n}");
    }
}

fn locked_matches_generator<P: Prf>(seed: &[u8; 32], lens: &[usize]) {
    let f = Fortuna::<P, fn() -> Duration>::from_seed(ReadMode::Locked, seed, zero).unwrap();
    let mut g = Generator::<P>::with_prf();
    g.reseed(seed);
    for &n in lens {
        let mut a = vec![0u8; n];
        f.fill_bytes(&mut a);
        let mut b = vec![0u8; n];
        if n == 0 {
            g.pseudo_random_data(&mut []).unwrap();
        }
        for step in b.chunks_mut(LOCKED_STEP) {
            g.pseudo_random_data(step).unwrap();
        }
        assert_eq!(a, b, "read of {n}");
    }
}

fn lens() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(
        prop_oneof![
            0usize..100,
            4000usize..9000,
            Just(MAX_REQUEST),
            Just(MAX_REQUEST - 1)
        ],
        1..6,
    )
}

/// Cases per property: `PROPTEST_CASES` where it is set (proptest's own variable, which an
/// explicit count would override; CI's emulated aarch64 run sets it lower), else 4 in
/// unoptimised builds and 64 in optimised ones.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 4 } else { 64 })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn concurrent_read_is_a_32_byte_request_then_the_readers_keystream(seed in any::<[u8; 32]>(), lens in lens()) {
        concurrent_matches_generator::<scalrand_pool::fortuna::Aes256Prf>(&seed, &lens);
        concurrent_matches_generator::<ChaCha20Prf>(&seed, &lens);
    }

    #[test]
    fn locked_read_is_4k_generator_requests(seed in any::<[u8; 32]>(), lens in lens()) {
        locked_matches_generator::<scalrand_pool::fortuna::Aes256Prf>(&seed, &lens);
        locked_matches_generator::<ChaCha20Prf>(&seed, &lens);
    }
}
