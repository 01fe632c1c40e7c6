//! A program that glob-imports rand's prelude and scalrand builds with every warning denied:
//! no name of scalrand's root (the generator handle, the free functions, the modules) is one
//! of the prelude's, so neither glob shadows the other and no import is ambiguous. An
//! ambiguous name (a `Rng` in both, say) would fail this file's compilation, and a glob that
//! shadows nothing but warns (an unused or deprecated import) would fail it under
//! `deny(warnings)`.
#![deny(warnings)]

use rand::prelude::*;
use scalrand::*;

/// Names `Rng` as a bound: it must resolve to rand's trait, and only to it.
fn word<R: Rng + ?Sized>(r: &mut R) -> u64 {
    r.next_u64()
}

#[test]
fn rand_prelude_and_scalrand_glob_imports_coexist() {
    // rand's generator through the prelude's traits: `Rng` (rand_core's) and `RngExt`.
    let mut thread = rand::rng();
    let _ = thread.next_u32();
    let _ = word(&mut thread);
    let die: u8 = thread.random_range(1..=6);
    assert!((1..=6).contains(&die));
    let mut v = [1, 2, 3];
    v.shuffle(&mut thread);
    assert!(v.choose(&mut thread).is_some());
    let mut small = SmallRng::seed_from_u64(7);
    let _ = word(&mut small);

    // scalrand's root through its glob: the secure handle and functions, and `fast`.
    let mut secure: SecureRng = rng();
    let _ = word(&mut secure);
    let coin: bool = secure.random();
    let _ = coin;
    let mut key = [0u8; 32];
    fill_bytes(&mut key);
    assert_ne!(key, [0u8; 32]);
    let _ = next_u64();
    let _ = fast::bool();
}
