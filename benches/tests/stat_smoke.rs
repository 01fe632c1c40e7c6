//! Statistical smoke over every generator: a few MB each through monobit, byte chi-square and
//! serial correlation (see `scalrand_benches::stats`). Fast enough for CI, and meant only to
//! catch a broken generator; `cargo xtask stats GEN --dieharder` gives real verdicts.

use scalrand_benches::{sources, stats};

fn bytes() -> usize {
    if cfg!(debug_assertions) {
        1 << 20
    } else {
        8 << 20
    }
}

#[test]
fn every_generator_passes_smoke() {
    let mut failures = vec![];
    for (name, _, make) in sources::all() {
        if name == "xoroshiro128plus-low" {
            // Its weakness is linear (binary rank / linear complexity), which these three
            // tests do not look at; it is listed for dieharder, not for this smoke.
            continue;
        }
        let mut buf = vec![0u8; bytes()];
        make(0x5eed).unwrap()(&mut buf);
        if let Err(e) = stats::smoke(&buf) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The smoke can fail: streams with known defects are rejected.
#[test]
fn smoke_rejects_broken_streams() {
    let n = 1 << 20;
    // A counter: perfect byte frequencies, but consecutive bytes are strongly correlated.
    let counter: Vec<u8> = (0..n).map(|i| i as u8).collect();
    assert!(stats::smoke(&counter).is_err());
    // Biased bits: every byte has its top bit cleared.
    let mut biased = vec![0u8; n];
    sources::by_name("xoroshiro128plusplus", 1)
        .unwrap()
        .unwrap()(&mut biased);
    biased.iter_mut().for_each(|b| *b &= 0x7f);
    assert!(stats::smoke(&biased).is_err());
    // A generator stuck at one value.
    assert!(stats::smoke(&vec![0xa5u8; n]).is_err());
}

#[test]
fn z_scores_of_a_known_sequence() {
    // 0x0f repeated: exactly half the bits are ones, so monobit z is exactly 0.
    let data = vec![0x0fu8; 4096];
    assert_eq!(stats::monobit_z(&data), 0.0);
    // All bytes one value: chi-square = 255 * n, far in the tail.
    assert!(stats::byte_chi2_z(&data) > 100.0);
}
