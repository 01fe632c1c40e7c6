//! Keystream backends for [`super::chacha`], chosen once at run time (RustCrypto's layout: one
//! file per backend, cached `cpufeatures` tokens, a `--cfg` to force a narrower one).
//!
//! | backend | where | blocks per pass |
//! |---|---|---:|
//! | `avx512` | x86_64 whose CPU and OS support AVX-512F (zmm state) | 16 (a tail of ≤ 4 blocks goes to the next one down) |
//! | `avx2` | x86_64 with AVX2 | 8 |
//! | `sse2` | every x86_64 CPU; also every single block (key derivations, a last partial block) there | 4, or 1 |
//! | `neon` | every little-endian aarch64 CPU (Advanced SIMD is part of the architecture) | 4 |
//! | `portable` | every other target, miri, `--cfg scalrand_chacha_portable`, and single blocks on aarch64 | 1 |
//!
//! Every backend is this crate's own code: none copies the key into a buffer it does not wipe.
//! Each keeps its state in registers as far as the register file allows and spills the rest
//! into its own stack frame; after every call the dispatcher zeroes the stack below its caller
//! to a depth measured per backend ([`WIPE_DEPTH`], checked by `tests/numa_erasure.rs`) and
//! clears the vector registers, so no key word, round state or unread keystream is left
//! behind for a fork child, a later stack frame or a signal frame to find.
//!
//! Forcing a narrower backend (a `--cfg`, never a Cargo feature: features are additive and any
//! crate in the graph could switch one on), each a ceiling:
//!
//! | `RUSTFLAGS` | what runs | stands for |
//! |---|---|---|
//! | (none) | the widest the CPU has | |
//! | `--cfg scalrand_chacha_soft` | AVX2 where the CPU has it, else SSE2 | a CPU without AVX-512F (AMD before Zen 4, Intel client chips) |
//! | `--cfg scalrand_chacha_sse2` | SSE2 | an x86_64 CPU without AVX2 |
//! | `--cfg scalrand_chacha_portable` | the portable backend (also on aarch64) | a target with no SIMD backend |
//!
//! Detection runs once: `cpufeatures` caches the CPUID/XGETBV answer in a static, so each call
//! costs one relaxed load. Every backend writes the same bytes; the tests below hold each one
//! against the `chacha20` crate and an independent scalar ChaCha.

#[cfg(all(
    target_arch = "x86_64",
    not(miri),
    not(scalrand_chacha_soft),
    not(scalrand_chacha_sse2),
    not(scalrand_chacha_portable)
))]
mod avx512;

#[cfg(all(
    target_arch = "x86_64",
    not(miri),
    not(scalrand_chacha_sse2),
    not(scalrand_chacha_portable)
))]
mod avx2;

#[cfg(all(target_arch = "x86_64", not(miri), not(scalrand_chacha_portable)))]
mod sse2;

#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    target_feature = "neon",
    not(miri),
    not(scalrand_chacha_portable)
))]
mod neon;

mod portable;

use super::chacha::{BLOCK_LEN, KEY_LEN, Rounds};
use zeroize::Zeroize;

#[cfg(all(
    target_arch = "x86_64",
    not(miri),
    not(scalrand_chacha_soft),
    not(scalrand_chacha_sse2),
    not(scalrand_chacha_portable)
))]
cpufeatures::new!(avx512_cpuid, "avx512f");

#[cfg(all(
    target_arch = "x86_64",
    not(miri),
    not(scalrand_chacha_sse2),
    not(scalrand_chacha_portable)
))]
cpufeatures::new!(avx2_cpuid, "avx2");

/// State words 13..15: the nonce (all zero for the node pools; Fortuna's ChaCha20 PRF puts
/// the upper 96 bits of its 128-bit block number there).
pub(crate) type Nonce = [u32; 3];

/// "expand 32-byte k" (RFC 8439 §2.3).
pub(crate) const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// The 16 input words of RFC 8439 §2.3.
#[inline(always)]
pub(crate) fn state_words(key: &[u8; KEY_LEN], nonce: &Nonce, counter: u32) -> [u32; 16] {
    let mut w = [0u32; 16];
    w[..4].copy_from_slice(&CONSTANTS);
    for (o, b) in w[4..12].iter_mut().zip(key.chunks_exact(4)) {
        *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    w[12] = counter;
    w[13..].copy_from_slice(nonce);
    w
}

/// A ChaCha keystream backend (see the module docs); [`backend`] says which one runs here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// 16 blocks per pass in `zmm` registers (x86_64 with AVX-512F).
    Avx512,
    /// 8 blocks per pass in `ymm` registers (x86_64 with AVX2).
    Avx2,
    /// 4 blocks per pass, or one block, in `xmm` registers (every x86_64 CPU).
    Sse2,
    /// 4 blocks per pass in 128-bit Advanced SIMD registers (every little-endian aarch64 CPU).
    Neon,
    /// One block at a time in plain Rust (every other target).
    Portable,
}

/// The widest backend this build runs on this CPU for bulk keystream.
#[must_use]
pub fn backend() -> Backend {
    if have_avx512() {
        Backend::Avx512
    } else if have_avx2() {
        Backend::Avx2
    } else if cfg!(all(
        target_arch = "x86_64",
        not(miri),
        not(scalrand_chacha_portable)
    )) {
        Backend::Sse2
    } else if cfg!(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri),
        not(scalrand_chacha_portable)
    )) {
        Backend::Neon
    } else {
        Backend::Portable
    }
}

fn have_avx512() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(all(
            target_arch = "x86_64",
            not(miri),
            not(scalrand_chacha_soft),
            not(scalrand_chacha_sse2),
            not(scalrand_chacha_portable)
        ))] {
            avx512_cpuid::get()
        } else {
            false
        }
    }
}

fn have_avx2() -> bool {
    cfg_if::cfg_if! {
        if #[cfg(all(
            target_arch = "x86_64",
            not(miri),
            not(scalrand_chacha_sse2),
            not(scalrand_chacha_portable)
        ))] {
            avx2_cpuid::get()
        } else {
            false
        }
    }
}

/// Stack bytes below the caller's frame that [`wipe_stack`] zeroes after every backend call:
/// at least the deepest any backend reaches, measured by `tests/numa_erasure.rs`
/// (`backend_stack_depth_is_within_the_wipe`, which paints the stack, runs each call and finds
/// the lowest byte written: about 1.2 KiB for the AVX2 backend in an optimised x86_64
/// build; the AVX-512 backend's frame is smaller). Builds without optimisation spill every
/// temporary and keep deeper frames (about 21 KiB for AVX2; the AVX-512 transpose's
/// temporaries reach past 16 KiB), so they wipe 64 KiB.
#[cfg(not(debug_assertions))]
pub(crate) const WIPE_DEPTH: usize = 2048;
/// See the optimised builds' value.
#[cfg(debug_assertions)]
pub(crate) const WIPE_DEPTH: usize = 64 * 1024;

/// Zeroes [`WIPE_DEPTH`] bytes of stack below the caller's frame: the frames the backend call
/// just returned from. Never inlined, so its buffer lies where those frames were; the
/// optimisation barrier makes the compiler treat the zeroed buffer as read, so the stores stay.
#[inline(never)]
pub(crate) fn wipe_stack() {
    wipe_stack_bytes::<WIPE_DEPTH>();
}

/// [`wipe_stack`] with a depth of `BYTES`: for callers whose frames below reach deeper than
/// one backend call (Fortuna's reads, with the AES key schedule).
#[inline(never)]
pub(crate) fn wipe_stack_bytes<const BYTES: usize>() {
    let buf = [0u8; BYTES];
    core::hint::black_box(&buf);
}

/// Stack bytes wiped after every Fortuna read, reseed and construction: the deepest a read
/// reaches below the entry point (the AES key expansion and 8-block pipeline, a moved
/// expanded key, the generator's SHA-256), measured by `tests/numa_erasure.rs`
/// (`fortuna_stack_depth_is_within_the_wipe`). Unoptimised builds: 64 KiB.
#[cfg(not(debug_assertions))]
pub(crate) const FORTUNA_WIPE_DEPTH: usize = 8192;
/// See the optimised builds' value.
#[cfg(debug_assertions)]
pub(crate) const FORTUNA_WIPE_DEPTH: usize = 64 * 1024;

// Whether the CPU has AVX and AVX-512F, for clearing registers, whatever backend a forcing cfg
// allows: code outside the backends uses them too (the C library's `memcpy` on AVX-512 CPUs
// works in `ymm16`–`ymm31`, which `vzeroall` leaves alone; the `aes` crate's VAES path).
#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(clear_avx_cpuid, "avx");
#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(clear_avx512_cpuid, "avx512f");

/// Clears the vector registers that the keystream (and, for Fortuna, the block cipher) may have
/// left key-derived values in: on x86_64 `xmm0`–`xmm15`, their `ymm` upper halves where the
/// CPU has AVX (`vzeroall`), and all of `zmm0`–`zmm31` where it has AVX-512F (whichever
/// backend this build runs: the C library's `memcpy` uses `ymm16`–`ymm31` there, and a key
/// copy through it leaves key bytes in them); `v0`–`v31` on aarch64 with NEON. Every one of
/// them is caller-saved (x86-64 System V ABI, section 3.2.1; AAPCS64 for the upper halves of
/// `v8`–`v15`), so the compiler keeps nothing of its own in them across this call.
///
/// The one place registers are cleared: after the whole keystream or block call (the bulk
/// backends, then the single-block SSE2 function that every x86_64 path runs for a last
/// partial block, or code the compiler vectorised in the portable backend), after the last
/// key copy of a refill or a key derivation, and after Fortuna's block cipher.
#[inline]
pub(crate) fn clear_vector_registers() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        if clear_avx512_cpuid::get() {
            // SAFETY: `clear_zmm` is `#[target_feature(enable = "avx512f")]`; the cached
            // token says the CPU executes AVX-512F and the OS saves zmm state.
            unsafe {
                clear_zmm();
            }
        } else if clear_avx_cpuid::get() {
            // SAFETY: `clear_ymm` needs AVX, which the cached token just read says the CPU
            // executes and the OS saves.
            unsafe { clear_ymm() };
        } else {
            clear_xmm();
        }
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri)
    ))]
    clear_neon();
}

/// `vzeroall`: `ymm0`–`ymm15` (and the upper bits of `zmm0`–`zmm15`) zeroed.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx")]
#[inline]
fn clear_ymm() {
    core::arch::x86_64::_mm256_zeroall();
}

/// Clears `xmm0`–`xmm15` with SSE instructions (part of the x86_64 baseline).
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline]
fn clear_xmm() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered.
    unsafe {
        core::arch::asm!(
            "xorps xmm0, xmm0", "xorps xmm1, xmm1", "xorps xmm2, xmm2", "xorps xmm3, xmm3",
            "xorps xmm4, xmm4", "xorps xmm5, xmm5", "xorps xmm6, xmm6", "xorps xmm7, xmm7",
            "xorps xmm8, xmm8", "xorps xmm9, xmm9", "xorps xmm10, xmm10", "xorps xmm11, xmm11",
            "xorps xmm12, xmm12", "xorps xmm13, xmm13", "xorps xmm14, xmm14",
            "xorps xmm15, xmm15",
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(nomem, nostack, preserves_flags),
        );
    }
}

/// Clears `zmm16`–`zmm31`, which `vzeroall` leaves alone, then `zmm0`–`zmm15`.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx512f")]
#[inline]
fn clear_zmm() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered; the caller's token guarantees AVX-512F.
    unsafe {
        core::arch::asm!(
            "vpxord zmm16, zmm16, zmm16", "vpxord zmm17, zmm17, zmm17",
            "vpxord zmm18, zmm18, zmm18", "vpxord zmm19, zmm19, zmm19",
            "vpxord zmm20, zmm20, zmm20", "vpxord zmm21, zmm21, zmm21",
            "vpxord zmm22, zmm22, zmm22", "vpxord zmm23, zmm23, zmm23",
            "vpxord zmm24, zmm24, zmm24", "vpxord zmm25, zmm25, zmm25",
            "vpxord zmm26, zmm26, zmm26", "vpxord zmm27, zmm27, zmm27",
            "vpxord zmm28, zmm28, zmm28", "vpxord zmm29, zmm29, zmm29",
            "vpxord zmm30, zmm30, zmm30", "vpxord zmm31, zmm31, zmm31",
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nomem, nostack, preserves_flags),
        );
    }
    core::arch::x86_64::_mm256_zeroall();
}

/// Clears `v0`–`v31`: the NEON backend's state and temporaries, including the upper halves
/// of `v8`–`v15`, which the AAPCS64 does not preserve (the compiler restores only their low
/// 64 bits, the caller's own values, around this call).
#[cfg(all(
    target_arch = "aarch64",
    target_endian = "little",
    target_feature = "neon",
    not(miri)
))]
#[inline]
fn clear_neon() {
    // SAFETY: register-only instructions (no memory, no stack), and every register written is
    // declared clobbered.
    unsafe {
        core::arch::asm!(
            "movi v0.16b, #0", "movi v1.16b, #0", "movi v2.16b, #0", "movi v3.16b, #0",
            "movi v4.16b, #0", "movi v5.16b, #0", "movi v6.16b, #0", "movi v7.16b, #0",
            "movi v8.16b, #0", "movi v9.16b, #0", "movi v10.16b, #0", "movi v11.16b, #0",
            "movi v12.16b, #0", "movi v13.16b, #0", "movi v14.16b, #0", "movi v15.16b, #0",
            "movi v16.16b, #0", "movi v17.16b, #0", "movi v18.16b, #0", "movi v19.16b, #0",
            "movi v20.16b, #0", "movi v21.16b, #0", "movi v22.16b, #0", "movi v23.16b, #0",
            "movi v24.16b, #0", "movi v25.16b, #0", "movi v26.16b, #0", "movi v27.16b, #0",
            "movi v28.16b, #0", "movi v29.16b, #0", "movi v30.16b, #0", "movi v31.16b, #0",
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v24") _, out("v25") _, out("v26") _, out("v27") _,
            out("v28") _, out("v29") _, out("v30") _, out("v31") _,
            options(nomem, nostack, preserves_flags),
        );
    }
}

/// Whole blocks (`dest.len()` a multiple of 64) by the widest backend that fits; returns the
/// counter after the last block. The caller wipes the stack and clears the vector registers.
#[inline]
fn bulk(key: &[u8; KEY_LEN], nonce: &Nonce, counter: u32, dr: u32, dest: &mut [u8]) -> u32 {
    #[allow(unused_mut)]
    let mut ctr = counter;
    #[allow(unused_mut)]
    let mut rest = dest;
    #[cfg(all(
        target_arch = "x86_64",
        not(miri),
        not(scalrand_chacha_soft),
        not(scalrand_chacha_sse2),
        not(scalrand_chacha_portable)
    ))]
    if avx512_cpuid::get() && rest.len() > 4 * BLOCK_LEN {
        // Whole passes, and a last partial pass when more than 4 blocks remain (a pass costs
        // about as much as 8 blocks of the AVX2 backend).
        const PASS: usize = 16 * BLOCK_LEN;
        let tail = rest.len() % PASS;
        let n = if tail > 4 * BLOCK_LEN {
            rest.len()
        } else {
            rest.len() - tail
        };
        let (now, later) = rest.split_at_mut(n);
        // SAFETY: `avx512::blocks` is `#[target_feature(enable = "avx512f")]`; the cached
        // `cpufeatures` token just read says the CPU executes AVX-512F and the OS saves zmm
        // state (CPUID leaf 7 and XCR0 via XGETBV). The backend indexes `dest` only through
        // safe slice methods.
        unsafe {
            ctr = avx512::blocks(key, nonce, ctr, dr, now);
        }
        rest = later;
    }
    if rest.is_empty() {
        return ctr;
    }
    #[cfg(all(
        target_arch = "x86_64",
        not(miri),
        not(scalrand_chacha_sse2),
        not(scalrand_chacha_portable)
    ))]
    if avx2_cpuid::get() && rest.len() > 2 * BLOCK_LEN {
        // SAFETY: `avx2::blocks` is `#[target_feature(enable = "avx2")]`; the cached token
        // says the CPU executes AVX2 and the OS saves ymm state. Safe slice indexing only.
        return unsafe { avx2::blocks(key, nonce, ctr, dr, rest) };
    }
    #[cfg(all(target_arch = "x86_64", not(miri), not(scalrand_chacha_portable)))]
    // SAFETY: `sse2::blocks` is `#[target_feature(enable = "sse2")]`, which every x86_64 CPU
    // executes (part of the architecture's baseline). Safe slice indexing only.
    return unsafe { sse2::blocks(key, nonce, ctr, dr, rest) };
    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri),
        not(scalrand_chacha_portable)
    ))]
    if rest.len() > BLOCK_LEN {
        return neon::blocks(key, nonce, ctr, dr, rest);
    }
    #[allow(unreachable_code)]
    portable::blocks(key, nonce, ctr, dr, rest)
}

/// One block by the backend for single blocks (SSE2 on x86_64, portable elsewhere). The
/// caller wipes the stack.
#[inline]
fn one_block(key: &[u8; KEY_LEN], nonce: &Nonce, counter: u32, dr: u32, out: &mut [u8; BLOCK_LEN]) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(scalrand_chacha_portable)))]
    // SAFETY: as in `bulk`: SSE2 is part of the x86_64 baseline.
    return unsafe { sse2::block(key, nonce, counter, dr, out) };
    #[allow(unreachable_code)]
    portable::block(key, nonce, counter, dr, out)
}

/// Keystream under `key` and `nonce` from block `counter` into `dest` (contract:
/// `chacha::keystream`, with the nonce in words 13..15); the stack below the caller is wiped
/// afterwards.
#[inline(never)]
pub(crate) fn keystream(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
    rounds: Rounds,
) {
    keystream_leaving_registers(key, nonce, counter, dest, rounds);
    clear_vector_registers();
}

/// [`keystream`] with the stack wiped but the vector registers left as they are: for a caller
/// that touches key material after it (a batch refill's key copy) and clears them once, after
/// its last such instruction.
#[inline(never)]
pub(crate) fn keystream_leaving_registers(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
    rounds: Rounds,
) {
    keystream_unwiped(key, nonce, counter, dest, rounds);
    wipe_stack();
}

#[inline(never)]
pub(crate) fn keystream_unwiped(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
    rounds: Rounds,
) {
    let dr = rounds.count() / 2;
    let whole = dest.len() - dest.len() % BLOCK_LEN;
    let (blocks, tail) = dest.split_at_mut(whole);
    let ctr = bulk(key, nonce, counter, dr, blocks);
    if !tail.is_empty() {
        let mut b = [0u8; BLOCK_LEN];
        one_block(key, nonce, ctr, dr, &mut b);
        tail.copy_from_slice(&b[..tail.len()]);
        b.zeroize();
    }
}

/// Block `counter` under `key` and `nonce` into `out`; the stack below the caller is wiped
/// afterwards.
#[inline(never)]
pub(crate) fn block(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    rounds: Rounds,
    out: &mut [u8; BLOCK_LEN],
) {
    block_leaving_registers(key, nonce, counter, rounds, out);
    clear_vector_registers();
}

/// [`block`] with the stack wiped but the vector registers left as they are (see
/// [`keystream_leaving_registers`]).
#[inline(never)]
pub(crate) fn block_leaving_registers(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    rounds: Rounds,
    out: &mut [u8; BLOCK_LEN],
) {
    one_block(key, nonce, counter, rounds.count() / 2, out);
    wipe_stack();
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;
    use chacha20::cipher::{KeyIvInit, StreamCipherCore};
    use chacha20::{ChaChaCore, R8, R12, R20, variants::Ietf};
    #[cfg(feature = "std")]
    extern crate std;
    use proptest::prelude::*;

    const ALL: [Rounds; 3] = [Rounds::ChaCha8, Rounds::ChaCha12, Rounds::ChaCha20];

    /// A backend under test: writes `dest` and says whether it ran.
    type Path = fn(&[u8; KEY_LEN], u32, &mut [u8], Rounds) -> bool;

    /// Whole blocks by `f`, the partial last block by `one`, as the dispatcher splits them.
    fn split(
        key: &[u8; KEY_LEN],
        counter: u32,
        dest: &mut [u8],
        rounds: Rounds,
        f: impl Fn(&[u8; KEY_LEN], &Nonce, u32, u32, &mut [u8]) -> u32,
        one: fn(&[u8; KEY_LEN], &Nonce, u32, u32, &mut [u8; BLOCK_LEN]),
    ) {
        let dr = rounds.count() / 2;
        let whole = dest.len() - dest.len() % BLOCK_LEN;
        let (blocks, tail) = dest.split_at_mut(whole);
        let c = f(key, &[0; 3], counter, dr, blocks);
        assert_eq!(c, counter.wrapping_add((whole / BLOCK_LEN) as u32));
        if !tail.is_empty() {
            let mut b = [0u8; BLOCK_LEN];
            one(key, &[0; 3], c, dr, &mut b);
            tail.copy_from_slice(&b[..tail.len()]);
        }
    }

    fn portable_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        split(
            key,
            counter,
            dest,
            rounds,
            portable::blocks,
            portable::block,
        );
        true
    }

    /// Every block through the one-block function of the platform (SSE2 on x86_64).
    fn one_block_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        let blocks_by_one = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, dr: u32, d: &mut [u8]| {
            let mut c = c;
            for b in d.chunks_exact_mut(BLOCK_LEN) {
                one_block(k, n, c, dr, b.try_into().unwrap());
                c = c.wrapping_add(1);
            }
            c
        };
        split(key, counter, dest, rounds, blocks_by_one, one_block);
        true
    }

    #[cfg(all(target_arch = "x86_64", not(miri), not(scalrand_chacha_portable)))]
    fn sse2_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        let f = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, dr: u32, d: &mut [u8]| unsafe {
            sse2::blocks(k, n, c, dr, d)
        };
        split(key, counter, dest, rounds, f, one_block);
        true
    }

    #[cfg(all(
        target_arch = "x86_64",
        not(miri),
        not(scalrand_chacha_sse2),
        not(scalrand_chacha_portable)
    ))]
    fn avx2_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        if !avx2_cpuid::get() {
            return false;
        }
        // SAFETY: the token says the CPU has AVX2.
        let f = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, dr: u32, d: &mut [u8]| unsafe {
            avx2::blocks(k, n, c, dr, d)
        };
        split(key, counter, dest, rounds, f, one_block);
        true
    }

    #[cfg(all(
        target_arch = "x86_64",
        not(miri),
        not(scalrand_chacha_soft),
        not(scalrand_chacha_sse2),
        not(scalrand_chacha_portable)
    ))]
    fn avx512_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        if !avx512_cpuid::get() {
            return false;
        }
        // SAFETY: the token says the CPU has AVX-512F.
        let f = |k: &[u8; KEY_LEN], n: &Nonce, c: u32, dr: u32, d: &mut [u8]| unsafe {
            avx512::blocks(k, n, c, dr, d)
        };
        split(key, counter, dest, rounds, f, one_block);
        true
    }

    #[cfg(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon",
        not(miri),
        not(scalrand_chacha_portable)
    ))]
    fn neon_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        split(key, counter, dest, rounds, neon::blocks, one_block);
        true
    }

    fn dispatch_path(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) -> bool {
        keystream(key, &[0; 3], counter, dest, rounds);
        true
    }

    /// Every backend this build and CPU can run, each alone, plus the dispatcher.
    fn paths() -> Vec<(&'static str, Path)> {
        #[allow(unused_mut)]
        let mut p: Vec<(&'static str, Path)> = vec![
            ("portable", portable_path),
            ("one block", one_block_path),
            ("dispatch", dispatch_path),
        ];
        #[cfg(all(target_arch = "x86_64", not(miri), not(scalrand_chacha_portable)))]
        p.push(("sse2", sse2_path));
        #[cfg(all(
            target_arch = "x86_64",
            not(miri),
            not(scalrand_chacha_sse2),
            not(scalrand_chacha_portable)
        ))]
        p.push(("avx2", avx2_path));
        #[cfg(all(
            target_arch = "x86_64",
            not(miri),
            not(scalrand_chacha_soft),
            not(scalrand_chacha_sse2),
            not(scalrand_chacha_portable)
        ))]
        p.push(("avx512", avx512_path));
        #[cfg(all(
            target_arch = "aarch64",
            target_endian = "little",
            target_feature = "neon",
            not(miri),
            not(scalrand_chacha_portable)
        ))]
        p.push(("neon", neon_path));
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
