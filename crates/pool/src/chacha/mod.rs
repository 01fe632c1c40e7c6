//! ChaCha, the cipher under both generators of this crate: the block function, keystream and
//! fast key erasure, with 8, 12 or 20 rounds, on this crate's own SIMD backends, each call
//! followed by erasure of what it left on the stack and in vector registers.
//!
//! The cipher is D. J. Bernstein, "ChaCha, a variant of Salsa20" (SASC 2008), in the layout of
//! RFC 8439 §2.3: a 256-bit key, a 32-bit block counter (state word 12) and a 96-bit nonce
//! (words 13..15). The node pools ([`crate::numa`]) derive every key with the all-zero nonce;
//! with counter 0 the first block is then also the block of the original 64-bit-counter
//! ChaCha20 that Linux's `crng_fast_key_erasure` uses. Fortuna's ChaCha20 PRF
//! ([`crate::fortuna`]) puts the upper 96 bits of its 128-bit block number in the nonce.
//! [`Rounds`] picks ChaCha8, ChaCha12 or ChaCha20 (the paper's reduced-round variants: 4, 6 or
//! 10 double rounds).
//!
//! Single blocks ([`chacha20_block`], [`fast_key_erasure`]) run on SSE2 registers on x86_64
//! and in plain Rust elsewhere; bulk keystream ([`keystream`]) on the widest of AVX-512F, AVX2,
//! SSE2 and NEON that the CPU has (chosen once, at run time; [`backend`] says which). After
//! every call the stack the backend used is zeroed and the vector registers cleared, so no copy
//! of a key or of unread keystream outlives the call outside the caller's own buffers.
//!
//! # Source layout
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the RFC 8439 vocabulary (sizes, state words, [`Rounds`] and its types), the public block and keystream functions, each backend's build guard |
//! | `derive.rs` | key derivation by fast key erasure: one step, a batch refill, a large read's one-use key and its chunking |
//! | `dispatch.rs` | which backend runs ([`Backend`], [`backend`]), and the entry points that run one and then erase |
//! | `erasure.rs` | the stack wipe and its two depths, the vector-register clear, the test hook that observes derived keys |
//! | `avx512.rs`, `avx2.rs`, `sse2.rs`, `neon.rs`, `portable.rs` | one backend each |
//! | `tests.rs` | every backend against the `chacha20` crate, an independent scalar ChaCha and the Python reference's vectors |
//!
//! The known-answer tests (`tests/numa_kat.rs`) pin [`chacha20_block`] to RFC 8439's vectors,
//! [`fast_key_erasure`] to `tests/reference/chacha_ref.py`, an independent Python
//! implementation, and [`keystream`] for all three round counts to the same script's
//! ChaCha8/12/20 vectors (`tests/data/chacha_rounds.txt`).

/// Puts a backend's build guard on the item or statement that follows its name: the one place
/// each guard is written. A backend is built where its
/// architecture has it, outside miri, and unless a `--cfg` forces a narrower one
/// (`dispatch.rs` lists them): `scalrand_chacha_soft` removes AVX-512, `scalrand_chacha_sse2`
/// also AVX2, `scalrand_chacha_portable` every SIMD backend.
macro_rules! cfg_backend {
    (avx512 $($t:tt)*) => {
        cfg_backend! {@guard (all(
            target_arch = "x86_64",
            not(miri),
            not(scalrand_chacha_soft),
            not(scalrand_chacha_sse2),
            not(scalrand_chacha_portable)
        )) $($t)*}
    };
    (avx2 $($t:tt)*) => {
        cfg_backend! {@guard (all(
            target_arch = "x86_64",
            not(miri),
            not(scalrand_chacha_sse2),
            not(scalrand_chacha_portable)
        )) $($t)*}
    };
    (sse2 $($t:tt)*) => {
        cfg_backend! {@guard (all(
            target_arch = "x86_64",
            not(miri),
            not(scalrand_chacha_portable)
        )) $($t)*}
    };
    (neon $($t:tt)*) => {
        cfg_backend! {@guard (all(
            target_arch = "aarch64",
            target_endian = "little",
            target_feature = "neon",
            not(miri),
            not(scalrand_chacha_portable)
        )) $($t)*}
    };
    (@guard $pred:tt $($t:tt)+) => { #[cfg $pred] $($t)+ };
}

cfg_backend!(avx512 mod avx512;);
cfg_backend!(avx2 mod avx2;);
cfg_backend!(sse2 mod sse2;);
cfg_backend!(neon mod neon;);
mod portable;

mod derive;
mod dispatch;
mod erasure;
#[cfg(test)]
mod tests;

pub use derive::fast_key_erasure;
pub(crate) use derive::{OneReadKey, fast_key_erasure_in, fill_erasing, refill_batch};
pub(crate) use dispatch::keystream as keystream_with_nonce;
pub use dispatch::{Backend, backend};
pub use erasure::__observe_keys;
pub(crate) use erasure::{
    FORTUNA_WIPE_DEPTH, clear_vector_registers, observe_key, wipe_stack, wipe_stack_bytes,
};

/// Size of one ChaCha block in bytes.
pub const BLOCK_LEN: usize = 64;

/// Size of a ChaCha key in bytes.
pub const KEY_LEN: usize = 32;

/// Bytes of output one keystream key may produce before a huge read derives the next key:
/// 1 MiB, 16,384 blocks, far from the 2^32-block limit of RFC 8439's counter.
pub const CHUNK_LEN: usize = 1 << 20;

/// How many rounds of ChaCha a generator runs.
///
/// Bernstein's ChaCha paper defines ChaCha8, ChaCha12 and ChaCha20; RFC 8439 standardises
/// ChaCha20, the default. ChaCha8 and ChaCha12 trade security margin for speed (rand's
/// `StdRng` is ChaCha12). Every variant keeps RFC 8439's state layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rounds {
    /// 8 rounds (4 double rounds).
    ChaCha8,
    /// 12 rounds (6 double rounds).
    ChaCha12,
    /// 20 rounds (10 double rounds): RFC 8439's ChaCha20.
    #[default]
    ChaCha20,
}

impl Rounds {
    /// Rounds per block: 8, 12 or 20.
    #[must_use]
    pub const fn count(self) -> u32 {
        match self {
            Self::ChaCha8 => 8,
            Self::ChaCha12 => 12,
            Self::ChaCha20 => 20,
        }
    }
}

/// A round count as a type: each backend's round loop runs `R::COUNT` double rounds, a
/// constant of its monomorphised copy (the shape of RustCrypto `chacha20`'s `R: Rounds`).
/// [`Rounds::run`] turns the run-time choice into one of these, in one place.
pub(crate) trait DoubleRounds {
    /// Double rounds per block: 4, 6 or 10.
    const COUNT: u32;
}

/// ChaCha8 as a type.
pub(crate) enum R8 {}
/// ChaCha12 as a type.
pub(crate) enum R12 {}
/// ChaCha20 as a type.
pub(crate) enum R20 {}

impl DoubleRounds for R8 {
    const COUNT: u32 = 4;
}
impl DoubleRounds for R12 {
    const COUNT: u32 = 6;
}
impl DoubleRounds for R20 {
    const COUNT: u32 = 10;
}

/// A computation generic over the round count (what [`Rounds::run`] runs).
pub(crate) trait WithRounds {
    /// What the computation returns.
    type Output;
    /// Runs it with `R` rounds.
    fn run<R: DoubleRounds>(self) -> Self::Output;
}

impl Rounds {
    /// Runs `f` with this round count as a type: the one place a run-time [`Rounds`] becomes
    /// a [`DoubleRounds`].
    #[inline(always)]
    pub(crate) fn run<F: WithRounds>(self, f: F) -> F::Output {
        match self {
            Self::ChaCha8 => f.run::<R8>(),
            Self::ChaCha12 => f.run::<R12>(),
            Self::ChaCha20 => f.run::<R20>(),
        }
    }
}

/// The ChaCha20 block function of RFC 8439 §2.3: the 64-byte block for `key`, block
/// `counter` and `nonce`.
#[must_use]
pub fn chacha20_block(key: &[u8; KEY_LEN], counter: u32, nonce: &[u8; 12]) -> [u8; BLOCK_LEN] {
    chacha_block(key, counter, nonce, Rounds::ChaCha20)
}

/// The block function with `rounds` rounds (RFC 8439 §2.3 with 8, 12 or 20 rounds).
pub(crate) fn chacha_block(
    key: &[u8; KEY_LEN],
    counter: u32,
    nonce: &[u8; 12],
    rounds: Rounds,
) -> [u8; BLOCK_LEN] {
    let mut out = [0u8; BLOCK_LEN];
    dispatch::block(key, &nonce_words(nonce), counter, rounds, &mut out);
    out
}

/// The nonce as state words 13..15 (little-endian).
fn nonce_words(nonce: &[u8; 12]) -> Nonce {
    core::array::from_fn(|i| {
        u32::from_le_bytes([
            nonce[4 * i],
            nonce[4 * i + 1],
            nonce[4 * i + 2],
            nonce[4 * i + 3],
        ])
    })
}

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

/// Writes ChaCha keystream with `rounds` rounds under `key` and the zero nonce to `dest`:
/// block `counter`, then `counter + 1`, … (RFC 8439 layout; a trailing partial block is the
/// prefix of the next block).
///
/// The counter is state word 12 alone and steps modulo 2^32: a `dest` longer than
/// `(2^32 - counter)` blocks wraps to block 0 and repeats keystream, exactly as the `chacha20`
/// crate's IETF core does (no carry into the nonce). The pools never get there: they start
/// at block 0 or 1 and write at most [`CHUNK_LEN`] bytes (16,384 blocks) per key.
///
/// Uses the fastest backend this CPU has ([`backend`]: AVX-512F, AVX2, SSE2 or portable,
/// checked once and cached); the output does not depend on which. Blocks are stored straight
/// into `dest`; afterwards the stack the backend used is zeroed and the vector registers are
/// cleared (`erasure.rs`), so the key and the keystream exist only in `key` and
/// `dest` once this returns.
pub fn keystream(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    dispatch::keystream(key, &[0; 3], counter, dest, rounds);
}

/// Test hook (`doc(hidden)`, not API): [`keystream`] without the stack wipe that follows every
/// backend call, so that a test can measure how deep the backends reach
/// (`tests/numa_erasure.rs`); with [`__WIPE_DEPTH`], the depth that is wiped.
#[doc(hidden)]
pub fn __keystream_unwiped(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    dispatch::keystream_unwiped(key, &[0; 3], counter, dest, rounds);
}

/// Test hook (`doc(hidden)`, not API): the stack depth wiped after every backend call.
#[doc(hidden)]
pub const __WIPE_DEPTH: usize = erasure::WIPE_DEPTH;

/// Test hook (`doc(hidden)`, not API): the stack depth wiped after every Fortuna read,
/// reseed and construction.
#[doc(hidden)]
pub const __FORTUNA_WIPE_DEPTH: usize = erasure::FORTUNA_WIPE_DEPTH;
