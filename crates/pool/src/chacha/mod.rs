//! ChaCha, the cipher under both generators of this crate: the block function, keystream and
//! fast key erasure, with 8, 12 or 20 rounds, on this crate's own SIMD backends, each call
//! followed by erasure of what it left on the stack and in vector registers.
//!
//! The cipher is D. J. Bernstein, "ChaCha, a variant of Salsa20" (SASC 2008), in the layout of
//! RFC 8439 §2.3: a 256-bit key, a 32-bit block counter (state word 12) and a 96-bit nonce
//! (words 13..15). The node pools ([`crate::numa`]) derive every key with the all-zero nonce;
//! with counter 0 the first block is then also the block of the original 64-bit-counter
//! ChaCha20 that Linux's `crng_fast_key_erasure` uses. Fortuna's ChaCha20 PRF
//! (the `fortuna` module, feature `fortuna`) puts the upper 96 bits of its 128-bit block number in the nonce.
//! [`Rounds`] picks ChaCha8, ChaCha12 or ChaCha20 (the paper's reduced-round variants: 4, 6 or
//! 10 double rounds).
//!
//! Single blocks ([`chacha20_block`], [`fast_key_erasure`]) run on SSE2 registers on x86_64
//! and in plain Rust elsewhere; bulk keystream ([`keystream`]) on the widest of AVX-512F, AVX2,
//! SSE2 and NEON that the CPU has (chosen once, at run time; [`backend`] says which). After
//! every call the stack the backend used is zeroed and the vector registers cleared, so no copy
//! of a key or of unread keystream outlives the call outside the caller's own buffers.
//!
//! # Sections
//!
//! Inside this crate a backend runs only as a method of a section (`section.rs`), which the
//! code gets only from the function that runs it and ends it on every path: the section's doc
//! comment is the one statement of where key material may live and what its end erases. The
//! backends' entry points are private to this module, so no other code of the crate, and no
//! user, can run one and skip the erasure (the one exception is a `doc(hidden)` test hook
//! that measures how deep the backends reach, which is not API):
//!
//! ```compile_fail
//! use scalrand_pool::chacha::Rounds;
//! // Private to `chacha`: only a section calls it.
//! scalrand_pool::chacha::dispatch::keystream_unwiped(
//!     &[7; 32], &[0; 3], 0, &mut [0; 64], Rounds::ChaCha20,
//! );
//! ```
//!
//! [`keystream`] and [`chacha20_block`] are the public ways in, each one section.
//!
//! # Source layout
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | each backend's build guard, and what the module exports |
//! | `vocab.rs` | the RFC 8439 vocabulary: sizes, state words, [`Rounds`] and the types it becomes |
//! | `block.rs` | the public block and keystream functions |
//! | `derive.rs` | key derivation by fast key erasure: one step, a batch refill, a large read's one-use key and its chunking |
//! | `dispatch.rs` | which backend runs ([`Backend`], [`backend`]), and its two entry points |
//! | `section.rs` | the section type: the only caller of those entry points, and the contract of every stretch that holds key material |
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

mod block;
mod derive;
mod dispatch;
mod erasure;
mod section;
#[cfg(test)]
mod tests;
mod vocab;

pub use block::{__keystream_unwiped, chacha20_block, keystream};
pub use erasure::__WIPE_DEPTH;
pub use vocab::{BLOCK_LEN, CHUNK_LEN, KEY_LEN, Rounds};

pub use derive::fast_key_erasure;
pub(crate) use derive::{OneReadKey, fast_key_erasure_in, fill_erasing, refill_batch};
pub use dispatch::{__cap_to_avx2, Backend, backend};
pub use erasure::__observe_keys;
#[cfg(feature = "fortuna")]
pub(crate) use erasure::{FORTUNA_WIPE_DEPTH, FORTUNA_WIPE_DEPTH_OWN, wipe_stack_bytes};
// Fortuna's block cipher clears the registers itself.
#[cfg(feature = "fortuna")]
pub(crate) use erasure::clear_vector_registers;
pub(crate) use erasure::observe_key;
pub(crate) use section::Section;
