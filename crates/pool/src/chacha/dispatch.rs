//! Which keystream backend runs, chosen once at run time (RustCrypto's layout: one file per
//! backend, cached `cpufeatures` tokens, a `--cfg` to force a narrower one), and the two
//! entry points that run one: `keystream_unwiped` and `block_leaving_registers`, visible to
//! `crate::chacha` alone and run through [`Section`](super::section::Section), whose end
//! erases what they left behind (`erasure.rs`).
//!
//! | backend | where | blocks per pass |
//! |---|---|---:|
//! | `avx512` | x86_64 whose CPU and OS support AVX-512F (zmm state) | 16 (a tail of ≤ 4 blocks goes to the next one down) |
//! | `avx2` | x86_64 with AVX2 | 8 (words 0..3 in a wipe-on-fork spill frame), then up to 6 (two per register) |
//! | `sse2` | every x86_64 CPU; also every single block (key derivations, a last partial block) there | 3, or 1 |
//! | `neon` | every little-endian aarch64 CPU (Advanced SIMD is part of the architecture) | 4 |
//! | `portable` | every other target, miri, `--cfg scalrand_chacha_portable`, and single blocks on aarch64 | 1 |
//!
//! Every backend is this crate's own code: none copies the key into a buffer it does not wipe.
//! The x86_64 backends keep a pass's state in registers (the AVX2 and SSE2 passes are one
//! assembly block each, AVX2's eight-block passes with words 0..3 in a spill frame of
//! wipe-on-fork memory; AVX-512 has 32 registers for its 16 state words) and store each
//! block straight into `dest`; the portable backend keeps its state in a frame of
//! wipe-on-fork memory and loads and stores it around each quarter round. The section every
//! call runs in ends by clearing the vector registers and zeroing the stack below its caller
//! to a depth measured per backend ([`WIPE_DEPTH`](super::erasure::WIPE_DEPTH), checked by
//! `tests/numa_erasure.rs`), so no key word, round state or unread keystream is left behind
//! for a fork child, a later stack frame or a signal frame to find.
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
//! costs one relaxed load. Every backend writes the same bytes; `tests.rs` holds each one
//! to the `chacha20` crate, an independent scalar ChaCha and the Python reference's vectors.

cfg_backend!(avx512 use super::avx512;);
cfg_backend!(avx2 use super::avx2;);
cfg_backend!(sse2 use super::sse2;);
cfg_backend!(neon use super::neon;);
use super::portable;
use super::vocab::{BLOCK_LEN, DoubleRounds, KEY_LEN, Nonce, Rounds, WithRounds};
use core::sync::atomic::{AtomicUsize, Ordering};
use scalrand_os::wipe::zero;

cfg_backend!(avx512 cpufeatures::new!(avx512_cpuid, "avx512f"););
cfg_backend!(avx2 cpufeatures::new!(avx2_cpuid, "avx2"););

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
        return Backend::Avx512;
    }
    if have_avx2() {
        return Backend::Avx2;
    }
    cfg_backend!(sse2 return Backend::Sse2;);
    cfg_backend!(neon return Backend::Neon;);
    #[allow(unreachable_code)]
    Backend::Portable
}

/// Whether this build has the AVX-512 backend, the CPU runs it and no [`__cap_to_avx2`] is in
/// force.
fn have_avx512() -> bool {
    cfg_backend!(avx512 return avx512_cpuid::get() && AVX2_CAPS.load(Ordering::Relaxed) == 0;);
    #[allow(unreachable_code)]
    false
}

/// Callers inside [`__cap_to_avx2`] now.
static AVX2_CAPS: AtomicUsize = AtomicUsize::new(0);

/// Benchmark hook (`doc(hidden)`, not API): runs `f` with the AVX-512 backend set aside, in the
/// whole process, so that a machine with AVX-512 measures, side by side with its own figures,
/// what a CPU without it (AVX2) gets: every bulk call while `f` runs (from any thread) takes
/// the AVX2 backend, as `--cfg scalrand_chacha_soft` would; nested and concurrent calls count,
/// and the cap ends with the last of them. Costs one relaxed load per bulk call.
#[doc(hidden)]
pub fn __cap_to_avx2<R>(f: impl FnOnce() -> R) -> R {
    struct Uncap;
    impl Drop for Uncap {
        fn drop(&mut self) {
            AVX2_CAPS.fetch_sub(1, Ordering::Relaxed);
        }
    }
    AVX2_CAPS.fetch_add(1, Ordering::Relaxed);
    let _uncap = Uncap;
    f()
}

/// Whether this build has the AVX2 backend and the CPU runs it.
fn have_avx2() -> bool {
    cfg_backend!(avx2 return avx2_cpuid::get(););
    #[allow(unreachable_code)]
    false
}

/// Whole blocks (`dest.len()` a multiple of 64) by the widest backend that fits; returns the
/// counter after the last block. The caller wipes the stack and clears the vector registers.
#[inline]
pub(super) fn bulk<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    #[allow(unused_mut)]
    let mut ctr = counter;
    #[allow(unused_mut)]
    let mut rest = dest;
    cfg_backend!(avx512 if have_avx512() && rest.len() > 4 * BLOCK_LEN {
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
            ctr = avx512::blocks::<R>(key, nonce, ctr, now);
        }
        rest = later;
    });
    if rest.is_empty() {
        return ctr;
    }
    cfg_backend!(avx2 if avx2_cpuid::get() {
        // SAFETY: `avx2::blocks` is `#[target_feature(enable = "avx2")]`; the cached token
        // says the CPU executes AVX2 and the OS saves ymm state. Safe slice indexing only.
        return unsafe { avx2::blocks::<R>(key, nonce, ctr, rest) };
    });
    // SAFETY: `sse2::blocks` is `#[target_feature(enable = "sse2")]`, which every x86_64 CPU
    // executes (part of the architecture's baseline). Safe slice indexing only.
    cfg_backend!(sse2 return unsafe { sse2::blocks::<R>(key, nonce, ctr, rest) };);
    cfg_backend!(neon if rest.len() > BLOCK_LEN {
        return neon::blocks::<R>(key, nonce, ctr, rest);
    });
    #[allow(unreachable_code)]
    portable::blocks::<R>(key, nonce, ctr, rest)
}

/// One block by the backend for single blocks (SSE2 on x86_64, portable elsewhere). The
/// caller wipes the stack.
#[inline]
pub(super) fn one_block<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    out: &mut [u8; BLOCK_LEN],
) {
    // SAFETY: as in `bulk`: SSE2 is part of the x86_64 baseline.
    cfg_backend!(sse2 return unsafe { sse2::block::<R>(key, nonce, counter, out) };);
    #[allow(unreachable_code)]
    portable::block::<R>(key, nonce, counter, out)
}

/// Keystream from block `counter` into `dest`: whole blocks in bulk, then a last partial
/// block through a zeroed local block. No erasure.
struct Stream<'a> {
    key: &'a [u8; KEY_LEN],
    nonce: &'a Nonce,
    counter: u32,
    dest: &'a mut [u8],
}

impl WithRounds for Stream<'_> {
    type Output = ();
    #[inline(always)]
    fn run<R: DoubleRounds>(self) {
        let whole = self.dest.len() - self.dest.len() % BLOCK_LEN;
        let (blocks, tail) = self.dest.split_at_mut(whole);
        let ctr = bulk::<R>(self.key, self.nonce, self.counter, blocks);
        if !tail.is_empty() {
            let mut b = [0u8; BLOCK_LEN];
            one_block::<R>(self.key, self.nonce, ctr, &mut b);
            tail.copy_from_slice(&b[..tail.len()]);
            zero(&mut b);
        }
    }
}

/// One block into `out`. No erasure.
struct Block<'a> {
    key: &'a [u8; KEY_LEN],
    nonce: &'a Nonce,
    counter: u32,
    out: &'a mut [u8; BLOCK_LEN],
}

impl WithRounds for Block<'_> {
    type Output = ();
    #[inline(always)]
    fn run<R: DoubleRounds>(self) {
        one_block::<R>(self.key, self.nonce, self.counter, self.out);
    }
}

/// Keystream under `key` and `nonce` from block `counter` into `dest` (contract:
/// [`super::keystream`], with the nonce in words 13..15), with neither the registers cleared
/// nor the stack wiped: what [`Section::keystream`](super::section::Section::keystream)
/// runs (the section's end erases), and the stack-depth measurement's entry point.
#[inline(never)]
pub(super) fn keystream_unwiped(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
    rounds: Rounds,
) {
    rounds.run(Stream {
        key,
        nonce,
        counter,
        dest,
    });
}

/// Block `counter` under `key` and `nonce` into `out`, with neither the registers cleared nor
/// the stack wiped: what [`Section::block`](super::section::Section::block) runs.
#[inline(never)]
pub(super) fn block_leaving_registers(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    rounds: Rounds,
    out: &mut [u8; BLOCK_LEN],
) {
    rounds.run(Block {
        key,
        nonce,
        counter,
        out,
    });
}
