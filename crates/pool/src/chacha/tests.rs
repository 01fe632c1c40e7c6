//! Every backend this build and CPU can run, each alone and through the dispatcher, against
//! the `chacha20` crate, an independent scalar ChaCha (RFC 8439 §2.1–2.3) and the Python
//! reference's ChaCha8/12/20 vectors; and the derivation helpers against the block function.

use super::block::chacha_block;
use super::vocab::{DoubleRounds, Nonce, R8, R12, R20};
use super::*;
use alloc::vec;
use alloc::vec::Vec;
use chacha20::cipher::{KeyIvInit, StreamCipherCore};
use chacha20::{ChaChaCore, R8 as C8, R12 as C12, R20 as C20, variants::Ietf};
#[cfg(feature = "std")]
extern crate std;
use proptest::prelude::*;

cfg_backend!(avx512 cpufeatures::new!(avx512_cpuid, "avx512f"););
cfg_backend!(avx2 cpufeatures::new!(avx2_cpuid, "avx2"););

/// A backend under test, for one round count: writes `dest` and says whether it ran.
type Path = fn(&[u8; KEY_LEN], u32, &mut [u8]) -> bool;

/// A path's copies for ChaCha8, ChaCha12 and ChaCha20, in [`ALL`]'s order.
type Paths = [Path; 3];

/// `$f::<R8>`, `$f::<R12>`, `$f::<R20>`.
macro_rules! per_rounds {
    ($f:ident) => {
        [$f::<R8>, $f::<R12>, $f::<R20>]
    };
}

/// Whole blocks by `f`, the partial last block by the one-block function, as the dispatcher
/// splits them.
fn split<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    counter: u32,
    dest: &mut [u8],
    f: impl Fn(&[u8; KEY_LEN], &Nonce, u32, &mut [u8]) -> u32,
) {
    let whole = dest.len() - dest.len() % BLOCK_LEN;
    let (blocks, tail) = dest.split_at_mut(whole);
    let c = f(key, &[0; 3], counter, blocks);
    assert_eq!(c, counter.wrapping_add((whole / BLOCK_LEN) as u32));
    if !tail.is_empty() {
        let mut b = [0u8; BLOCK_LEN];
        dispatch::one_block::<R>(key, &[0; 3], c, &mut b);
        tail.copy_from_slice(&b[..tail.len()]);
    }
}

fn portable_path<R: DoubleRounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) -> bool {
    let mut c = counter;
    let whole = dest.len() - dest.len() % BLOCK_LEN;
    let (blocks, tail) = dest.split_at_mut(whole);
    c = portable::blocks::<R>(key, &[0; 3], c, blocks);
    if !tail.is_empty() {
        let mut b = [0u8; BLOCK_LEN];
        portable::block::<R>(key, &[0; 3], c, &mut b);
        tail.copy_from_slice(&b[..tail.len()]);
    }
    true
}

/// Every block through the one-block function of the platform (SSE2 on x86_64).
fn one_block_path<R: DoubleRounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) -> bool {
    let blocks_by_one = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, d: &mut [u8]| {
        let mut c = c;
        for b in d.chunks_exact_mut(BLOCK_LEN) {
            dispatch::one_block::<R>(k, n, c, b.try_into().unwrap());
            c = c.wrapping_add(1);
        }
        c
    };
    split::<R>(key, counter, dest, blocks_by_one);
    true
}

cfg_backend!(sse2
fn sse2_path<R: DoubleRounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) -> bool {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    let f = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, d: &mut [u8]| unsafe {
        sse2::blocks::<R>(k, n, c, d)
    };
    split::<R>(key, counter, dest, f);
    true
});

cfg_backend!(avx2
fn avx2_path<R: DoubleRounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) -> bool {
    if !avx2_cpuid::get() {
        return false;
    }
    // SAFETY: the token says the CPU has AVX2.
    let f = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, d: &mut [u8]| unsafe {
        avx2::blocks::<R>(k, n, c, d)
    };
    split::<R>(key, counter, dest, f);
    true
});

cfg_backend!(avx512
fn avx512_path<R: DoubleRounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) -> bool {
    if !avx512_cpuid::get() {
        return false;
    }
    // SAFETY: the token says the CPU has AVX-512F.
    let f = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, d: &mut [u8]| unsafe {
        avx512::blocks::<R>(k, n, c, d)
    };
    split::<R>(key, counter, dest, f);
    true
});

cfg_backend!(neon
fn neon_path<R: DoubleRounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) -> bool {
    split::<R>(key, counter, dest, neon::blocks::<R>);
    true
});

fn dispatch_path<R: DoubleRounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) -> bool {
    let rounds = match R::COUNT {
        4 => Rounds::ChaCha8,
        6 => Rounds::ChaCha12,
        _ => Rounds::ChaCha20,
    };
    super::keystream(key, counter, dest, rounds);
    true
}

/// Every backend this build and CPU can run, each alone, plus the dispatcher.
fn paths() -> Vec<(&'static str, Paths)> {
    #[allow(unused_mut)]
    let mut p: Vec<(&'static str, Paths)> = vec![
        ("portable", per_rounds!(portable_path)),
        ("one block", per_rounds!(one_block_path)),
        ("dispatch", per_rounds!(dispatch_path)),
    ];
    cfg_backend!(sse2 p.push(("sse2", per_rounds!(sse2_path))););
    cfg_backend!(avx2 p.push(("avx2", per_rounds!(avx2_path))););
    cfg_backend!(avx512 p.push(("avx512", per_rounds!(avx512_path))););
    cfg_backend!(neon p.push(("neon", per_rounds!(neon_path))););
    p
}

/// An independent scalar ChaCha block (RFC 8439 §2.1–2.3 with `rounds` rounds).
fn reference_block(key: &[u8; KEY_LEN], counter: u32, rounds: Rounds) -> [u8; 64] {
    fn qr(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
        s[a] = s[a].wrapping_add(s[b]);
        s[d] = (s[d] ^ s[a]).rotate_left(16);
        s[c] = s[c].wrapping_add(s[d]);
        s[b] = (s[b] ^ s[c]).rotate_left(12);
        s[a] = s[a].wrapping_add(s[b]);
        s[d] = (s[d] ^ s[a]).rotate_left(8);
        s[c] = s[c].wrapping_add(s[d]);
        s[b] = (s[b] ^ s[c]).rotate_left(7);
    }
    let mut init = [0u32; 16];
    init[..4].copy_from_slice(&[0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574]);
    for (i, w) in key.chunks_exact(4).enumerate() {
        init[4 + i] = u32::from_le_bytes(w.try_into().unwrap());
    }
    init[12] = counter;
    let mut s = init;
    for _ in 0..rounds.count() / 2 {
        qr(&mut s, 0, 4, 8, 12);
        qr(&mut s, 1, 5, 9, 13);
        qr(&mut s, 2, 6, 10, 14);
        qr(&mut s, 3, 7, 11, 15);
        qr(&mut s, 0, 5, 10, 15);
        qr(&mut s, 1, 6, 11, 12);
        qr(&mut s, 2, 7, 8, 13);
        qr(&mut s, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for (i, o) in out.chunks_exact_mut(4).enumerate() {
        o.copy_from_slice(&s[i].wrapping_add(init[i]).to_le_bytes());
    }
    out
}

/// The `chacha20` crate's IETF core, one block at a time, the counter stepped mod 2^32.
fn crate_keystream(key: &[u8; KEY_LEN], counter: u32, len: usize, rounds: Rounds) -> Vec<u8> {
    fn go<R: chacha20::Rounds>(key: &[u8; KEY_LEN], counter: u32, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 64);
        let mut i = 0u32;
        while out.len() < len {
            let mut c = ChaChaCore::<R, Ietf>::new(key.into(), &[0u8; 12].into());
            c.set_block_pos(counter.wrapping_add(i));
            let mut b = [0u8; 64];
            c.write_keystream_block((&mut b).into());
            out.extend_from_slice(&b);
            i = i.wrapping_add(1);
        }
        out.truncate(len);
        out
    }
    match rounds {
        Rounds::ChaCha8 => go::<C8>(key, counter, len),
        Rounds::ChaCha12 => go::<C12>(key, counter, len),
        Rounds::ChaCha20 => go::<C20>(key, counter, len),
    }
}

fn reference_keystream(key: &[u8; KEY_LEN], counter: u32, len: usize, rounds: Rounds) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut c = counter;
    while out.len() < len {
        out.extend_from_slice(&reference_block(key, c, rounds));
        c = c.wrapping_add(1);
    }
    out.truncate(len);
    out
}

/// Each path's output for (key, counter, len, rounds) against the `chacha20` crate; the
/// destination starts dirty (a backend must overwrite, not XOR into, it).
fn check(key: &[u8; KEY_LEN], counter: u32, len: usize, rounds: Rounds, expect: &[u8]) {
    let r = ALL.iter().position(|&a| a == rounds).unwrap();
    for (name, path) in paths() {
        let mut dest = vec![0xA5u8; len];
        if path[r](key, counter, &mut dest) {
            assert!(
                dest == expect,
                "{name} {rounds:?} counter {counter:#x} len {len}: differs"
            );
        }
    }
}

/// Around block, pass (1 KiB) and short-tail (4 blocks) boundaries.
#[rustfmt::skip]
const LENGTHS: [usize; 16] = [
    0, 1, 63, 64, 65, 127, 257, 320, 960, 1023, 1024, 1025, 2048, 3000, 4096, 4096 + 17,
];

#[test]
fn every_path_matches_the_chacha20_crate_and_a_scalar_reference() {
    let key: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(29).wrapping_add(11));
    // Miri interprets every instruction: a few short lengths, all rounds.
    let lengths: &[usize] = if cfg!(miri) {
        &[0, 1, 64, 65, 130]
    } else {
        &LENGTHS
    };
    for rounds in ALL {
        for &len in lengths {
            for counter in [0, 1, 7, 0x8000_0000] {
                let expect = crate_keystream(&key, counter, len, rounds);
                assert_eq!(expect, reference_keystream(&key, counter, len, rounds));
                check(&key, counter, len, rounds, &expect);
            }
        }
    }
}

/// The counter is word 12 alone and wraps mod 2^32 with no carry into the nonce, as the
/// `chacha20` crate's IETF core does (callers keep counter + blocks ≤ 2^32; this pins what
/// happens beyond, so no backend can differ there either).
#[test]
fn counter_wraps_at_2_pow_32_like_the_chacha20_crate() {
    let key = [0x5Cu8; 32];
    let lengths: &[usize] = if cfg!(miri) {
        &[130]
    } else {
        &[65, 1024, 1025, 4096 + 17]
    };
    for rounds in ALL {
        for &len in lengths {
            for back in [1u32, 2, 15, 16, 17] {
                let counter = 0u32.wrapping_sub(back);
                let expect = crate_keystream(&key, counter, len, rounds);
                check(&key, counter, len, rounds, &expect);
                // Block `back` of the output is block 0 of the key.
                let wrapped = back as usize * 64;
                if len >= wrapped + 64 {
                    assert_eq!(
                        expect[wrapped..wrapped + 64],
                        reference_block(&key, 0, rounds)
                    );
                }
            }
        }
    }
}

#[test]
fn the_dispatcher_picks_the_widest_backend_the_build_allows() {
    let b = backend();
    #[cfg(all(
        target_arch = "x86_64",
        not(miri),
        not(scalrand_chacha_soft),
        not(scalrand_chacha_sse2),
        not(scalrand_chacha_portable),
        feature = "std"
    ))]
    if std::is_x86_feature_detected!("avx512f") {
        assert_eq!(b, Backend::Avx512);
    }
    #[cfg(all(
        target_arch = "x86_64",
        not(miri),
        scalrand_chacha_soft,
        not(scalrand_chacha_sse2),
        not(scalrand_chacha_portable),
        feature = "std"
    ))]
    assert_eq!(
        b,
        if std::is_x86_feature_detected!("avx2") {
            Backend::Avx2
        } else {
            Backend::Sse2
        }
    );
    #[cfg(all(
        target_arch = "x86_64",
        not(miri),
        scalrand_chacha_sse2,
        not(scalrand_chacha_portable)
    ))]
    assert_eq!(b, Backend::Sse2);
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri),
        not(scalrand_chacha_portable)
    ))]
    assert_eq!(b, Backend::Neon);
    #[cfg(any(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        miri,
        scalrand_chacha_portable
    ))]
    assert_eq!(b, Backend::Portable);
    let _ = b;
}

/// Every path against the independent Python reference's ChaCha8/12/20 vectors
/// (`tests/data/chacha_rounds.txt`, from `tests/reference/chacha_ref.py rounds`).
#[test]
fn every_path_matches_the_python_reference_vectors() {
    let data = include_str!("../../tests/data/chacha_rounds.txt");
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let mut n = 0;
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split(' ').collect();
        let rounds = match f[0] {
            "8" => Rounds::ChaCha8,
            "12" => Rounds::ChaCha12,
            _ => Rounds::ChaCha20,
        };
        let counter: u32 = f[1].parse().unwrap();
        let key: [u8; 32] = hex(f[2]).try_into().unwrap();
        let len: usize = f[3].parse().unwrap();
        if cfg!(miri) && len > 64 {
            continue;
        }
        check(&key, counter, len, rounds, &hex(f[4]));
        n += 1;
    }
    assert!(n >= 6);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    #[cfg_attr(miri, ignore = "proptest under miri takes hours; the fixed cases above run")]
    fn random_keys_counters_lengths_and_rounds(
        key in any::<[u8; 32]>(),
        counter in prop_oneof![any::<u32>(), (u32::MAX - 40)..=u32::MAX, 0u32..40],
        len in prop_oneof![prop::sample::select(LENGTHS.to_vec()), 0usize..5000],
        rounds in prop::sample::select(ALL.to_vec()),
    ) {
        let expect = crate_keystream(&key, counter, len, rounds);
        check(&key, counter, len, rounds, &expect);
    }
}

const ALL: [Rounds; 3] = [Rounds::ChaCha8, Rounds::ChaCha12, Rounds::ChaCha20];

#[test]
fn keystream_matches_blocks() {
    let key = [7u8; 32];
    for rounds in ALL {
        let mut ks = [0u8; 200];
        keystream(&key, 3, &mut ks, rounds);
        for (i, chunk) in ks.chunks(64).enumerate() {
            let b = chacha_block(&key, 3 + i as u32, &[0; 12], rounds);
            assert_eq!(chunk, &b[..chunk.len()]);
        }
    }
}

#[test]
fn erasure_replaces_key() {
    for rounds in ALL {
        let mut key = [1u8; 32];
        let b = chacha_block(&key, 0, &[0; 12], rounds);
        let mut out = [0u8; 40];
        super::Section::run(|s| {
            fast_key_erasure_in(s, &mut key, &mut out, rounds, &mut [0u8; BLOCK_LEN])
        });
        assert_eq!(key[..], b[..32]);
        assert_eq!(out[..32], b[32..]);
        assert_eq!(out[32..], [0u8; 8]);
    }
}

#[test]
fn round_counts_differ_and_default_is_chacha20() {
    assert_eq!(Rounds::default(), Rounds::ChaCha20);
    assert_eq!(ALL.map(Rounds::count), [8, 12, 20]);
    let blocks = ALL.map(|r| chacha_block(&[3; 32], 0, &[0; 12], r));
    assert_ne!(blocks[0], blocks[1]);
    assert_ne!(blocks[1], blocks[2]);
    assert_eq!(blocks[2], chacha20_block(&[3; 32], 0, &[0; 12]));
}

#[test]
fn fill_erasing_wipes_the_key() {
    let mut k = OneReadKey {
        key: [5u8; 32],
        block0: [0; BLOCK_LEN],
    };
    let mut out = [0u8; 100];
    fill_erasing(&mut k, &mut out, Rounds::ChaCha12);
    assert_eq!(k.key, [0u8; 32]);
    let mut ks = [0u8; 100];
    keystream(&[5u8; 32], 0, &mut ks, Rounds::ChaCha12);
    assert_eq!(out, ks);
}

/// The nonce words reach every bulk backend's state (words 13..15), in every pass shape: each
/// backend alone and the dispatcher, 1 to 20 blocks, against the `chacha20` crate's IETF core
/// with the same 12 nonce bytes.
#[test]
fn every_bulk_backend_puts_the_nonce_in_words_13_to_15() {
    let key: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(13).wrapping_add(5));
    let nonce: Nonce = [0x0302_0100, 0x0706_0504, 0x0b0a_0908];
    let nonce_bytes: [u8; 12] = core::array::from_fn(|i| i as u8);
    let counter = 5u32;
    let blocks_max = if cfg!(miri) { 3 } else { 20 };
    /// A bulk backend's `blocks::<R20>`.
    type Bulk = fn(&[u8; KEY_LEN], &Nonce, u32, &mut [u8]) -> u32;
    #[allow(unused_mut)]
    let mut backends: Vec<(&str, Bulk)> = vec![
        ("portable", portable::blocks::<R20>),
        ("dispatch", |k, n, c, d| dispatch::bulk::<R20>(k, n, c, d)),
    ];
    cfg_backend!(sse2 backends.push(("sse2", |k, n, c, d| {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe { sse2::blocks::<R20>(k, n, c, d) }
    })););
    cfg_backend!(avx2 if avx2_cpuid::get() {
        backends.push(("avx2", |k, n, c, d| {
            // SAFETY: pushed only where the cached token says the CPU has AVX2.
            unsafe { avx2::blocks::<R20>(k, n, c, d) }
        }));
    });
    cfg_backend!(avx512 if avx512_cpuid::get() {
        backends.push(("avx512", |k, n, c, d| {
            // SAFETY: pushed only where the cached token says the CPU has AVX-512F.
            unsafe { avx512::blocks::<R20>(k, n, c, d) }
        }));
    });
    for n in 1..=blocks_max {
        let mut expect = vec![0u8; 64 * n];
        for (i, b) in expect.chunks_exact_mut(64).enumerate() {
            let mut core = ChaChaCore::<C20, Ietf>::new((&key).into(), (&nonce_bytes).into());
            core.set_block_pos(counter + i as u32);
            let mut block = [0u8; 64];
            core.write_keystream_block((&mut block).into());
            b.copy_from_slice(&block);
        }
        for (name, f) in &backends {
            let mut dest = vec![0xA5u8; 64 * n];
            assert_eq!(f(&key, &nonce, counter, &mut dest), counter + n as u32);
            assert!(dest == expect, "{name}: {n} blocks with a nonce differ");
        }
    }
}

/// The benchmark cap sets AVX-512 aside while it runs, and only then; the bytes do not change.
#[test]
fn the_avx2_cap_changes_the_backend_not_the_bytes() {
    let key = [0x33u8; 32];
    let mut free = vec![0u8; 4096 + 17];
    keystream(&key, 9, &mut free, Rounds::ChaCha20);
    let before = backend();
    let mut capped = vec![0u8; free.len()];
    let inside = __cap_to_avx2(|| {
        keystream(&key, 9, &mut capped, Rounds::ChaCha20);
        __cap_to_avx2(backend)
    });
    assert_eq!(capped, free);
    assert_eq!(backend(), before);
    if before == Backend::Avx512 {
        assert_eq!(inside, Backend::Avx2);
    } else {
        assert_eq!(inside, before);
    }
}
