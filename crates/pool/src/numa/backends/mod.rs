//! Keystream backends for [`super::chacha`], chosen at run time (RustCrypto's layout: one file
//! per backend, cached `cpufeatures` tokens, a `--cfg` to force the portable one).
//!
//! | backend | where | blocks per pass |
//! |---|---|---:|
//! | `avx512` (this crate's) | x86_64 whose CPU and OS support AVX-512F (zmm state) | 16 (a tail of ≤ 4 blocks: `soft`) |
//! | `soft`: the `chacha20` crate's core | everywhere else, under miri, and with `--cfg scalrand_chacha_soft` | its own (AVX2: 4) |
//!
//! Detection runs once: `cpufeatures` caches the CPUID/XGETBV answer in a static, so each call
//! costs one relaxed load. Build with `RUSTFLAGS="--cfg scalrand_chacha_soft"` to leave the
//! AVX-512 backend out entirely (a `--cfg`, not a Cargo feature: features are additive and any
//! crate in the graph could switch one on). Every backend writes the same bytes; the tests
//! below hold each one against the `chacha20` crate and an independent scalar ChaCha.

pub(crate) mod soft;

#[cfg(all(target_arch = "x86_64", not(scalrand_chacha_soft)))]
mod avx512;

use super::chacha::{KEY_LEN, Rounds};

#[cfg(all(target_arch = "x86_64", not(scalrand_chacha_soft)))]
cpufeatures::new!(avx512_cpuid, "avx512f");

/// Keystream under `key`, zero nonce, from block `counter`, by the fastest backend this CPU
/// has (contract: `chacha::keystream`).
#[inline]
pub(crate) fn keystream(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    if !avx512(key, counter, dest, rounds) {
        soft::keystream(key, counter, dest, rounds);
    }
}

/// The AVX-512 backend, if this CPU and OS have AVX-512F: writes `dest` and returns `true`;
/// otherwise leaves `dest` alone and returns `false`.
#[cfg(all(target_arch = "x86_64", not(scalrand_chacha_soft)))]
#[inline]
pub(crate) fn avx512(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
    if !avx512_cpuid::get() {
        return false;
    }
    // SAFETY: `avx512::keystream` is `#[target_feature(enable = "avx512f")]`, and calling it
    // is sound only where the CPU executes AVX-512F and the OS saves zmm state. The cached
    // `cpufeatures` token just read checks both (CPUID leaf 7 EBX bit 16 and XCR0's opmask
    // and zmm bits via XGETBV). Bounds are not at stake: the backend only indexes `dest`
    // through safe slice methods.
    unsafe { avx512::keystream(key, counter, dest, rounds) };
    // Unoptimised builds spill every temporary of that call (key words, keystream the caller
    // has not handed out yet, e.g. the rest of a slot batch) to stack memory, which would
    // outlive the call and which a fork child inherits: wipe it.
    #[cfg(debug_assertions)]
    zeroize::zeroize_stack::<UNOPTIMISED_STACK_DEPTH>();
    true
}

/// Stack bytes below the caller's frame wiped after each `avx512::keystream` call in builds
/// with debug assertions (zeroize's `zeroize_stack`, best effort: it has to know the depth).
/// Those builds are unoptimised and spill every temporary; there `tests/numa_fork.rs` finds
/// a parent's unread batch in a fork child after a 16 KiB wipe and none after 32 KiB, so
/// 64 KiB are wiped (and must be free). Optimised builds are not wiped: they keep the state
/// in zmm registers and store blocks straight into `dest` (no stack access in `pass` in
/// `objdump` of an x86_64 release build), and the one frame with stack data holds the
/// broadcast key words, which `avx512::keystream` wipes itself; a 2 KiB wipe there cost
/// ~25 ns per call, 20% of a 1 KiB ChaCha8 batch. `cargo test --release --test numa_fork`
/// checks that build.
#[cfg(all(target_arch = "x86_64", not(scalrand_chacha_soft), debug_assertions))]
const UNOPTIMISED_STACK_DEPTH: usize = 64 * 1024;

/// No AVX-512 backend on this target or in this build (`--cfg scalrand_chacha_soft`).
#[cfg(not(all(target_arch = "x86_64", not(scalrand_chacha_soft))))]
#[inline]
pub(crate) fn avx512(_: &[u8; KEY_LEN], _: u32, _: &mut [u8], _: Rounds) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use chacha20::cipher::{KeyIvInit, StreamCipherCore};
    use chacha20::{ChaChaCore, R8, R12, R20, variants::Ietf};
    use proptest::prelude::*;

    const ALL: [Rounds; 3] = [Rounds::ChaCha8, Rounds::ChaCha12, Rounds::ChaCha20];

    /// A backend under test: writes `dest` and says whether it ran.
    type Path = fn(&[u8; KEY_LEN], u32, &mut [u8], Rounds) -> bool;

    fn soft_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        soft::keystream(key, counter, dest, rounds);
        true
    }

    fn dispatch_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        keystream(key, counter, dest, rounds);
        true
    }

    /// Every path the dispatcher can take, plus the dispatcher itself. The AVX-512 one only
    /// where the CPU has it (it reports `false` otherwise) and never under miri, which has no
    /// AVX-512 (cpufeatures reports `false` there anyway).
    fn paths() -> Vec<(&'static str, Path)> {
        let mut p: Vec<(&'static str, Path)> =
            vec![("soft", soft_path), ("dispatch", dispatch_path)];
        if !cfg!(miri) {
            p.push(("avx512", avx512));
        }
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
            Rounds::ChaCha8 => go::<R8>(key, counter, len),
            Rounds::ChaCha12 => go::<R12>(key, counter, len),
            Rounds::ChaCha20 => go::<R20>(key, counter, len),
        }
    }

    fn reference_keystream(
        key: &[u8; KEY_LEN],
        counter: u32,
        len: usize,
        rounds: Rounds,
    ) -> Vec<u8> {
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
        for (name, path) in paths() {
            let mut dest = vec![0xA5u8; len];
            if path(key, counter, &mut dest, rounds) {
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
    fn dispatcher_picks_avx512_where_present() {
        let mut a = [0u8; 100];
        let ran = avx512(&[1; 32], 0, &mut a, Rounds::ChaCha20);
        #[cfg(all(
            target_arch = "x86_64",
            not(scalrand_chacha_soft),
            not(miri),
            feature = "std"
        ))]
        assert_eq!(ran, std::is_x86_feature_detected!("avx512f"));
        #[cfg(any(not(target_arch = "x86_64"), scalrand_chacha_soft, miri))]
        assert!(!ran);
        let _ = ran;
    }

    /// Every path against the independent Python reference's ChaCha8/12/20 vectors
    /// (`tests/data/chacha_rounds.txt`, from `tests/reference/chacha_ref.py rounds`).
    #[test]
    fn every_path_matches_the_python_reference_vectors() {
        let data = include_str!("../../../tests/data/chacha_rounds.txt");
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
}
