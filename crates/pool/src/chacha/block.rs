//! The block function and keystream as this crate's API offers them: RFC 8439 blocks with a
//! given nonce, and keystream with the zero nonce from any block counter.

use super::dispatch;
use super::section::Section;
use super::vocab::{BLOCK_LEN, KEY_LEN, Nonce, Rounds};

/// The ChaCha20 block function of RFC 8439 §2.3: the 64-byte block for `key`, block
/// `counter` and `nonce`.
#[must_use]
pub fn chacha20_block(key: &[u8; KEY_LEN], counter: u32, nonce: &[u8; 12]) -> [u8; BLOCK_LEN] {
    chacha_block(key, counter, nonce, Rounds::ChaCha20)
}

/// The block function with `rounds` rounds (RFC 8439 §2.3 with 8, 12 or 20 rounds). Not
/// inlined: its section's end wipes below this frame.
#[inline(never)]
pub(crate) fn chacha_block(
    key: &[u8; KEY_LEN],
    counter: u32,
    nonce: &[u8; 12],
    rounds: Rounds,
) -> [u8; BLOCK_LEN] {
    let mut out = [0u8; BLOCK_LEN];
    let nonce = nonce_words(nonce);
    Section::run(|s| s.block(key, &nonce, counter, rounds, &mut out));
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

/// Writes ChaCha keystream with `rounds` rounds under `key` and the zero nonce to `dest`:
/// block `counter`, then `counter + 1`, … (RFC 8439 layout; a trailing partial block is the
/// prefix of the next block).
///
/// The counter is state word 12 alone and steps modulo 2^32: a `dest` longer than
/// `(2^32 - counter)` blocks wraps to block 0 and repeats keystream, exactly as the `chacha20`
/// crate's IETF core does (no carry into the nonce). The pools never get there: they start
/// at block 0 or 1 and write at most [`CHUNK_LEN`](super::CHUNK_LEN) bytes (16,384 blocks) per key.
///
/// Uses the fastest backend this CPU has ([`backend`](super::backend): AVX-512F, AVX2, SSE2 or portable,
/// checked once and cached); the output does not depend on which. Blocks are stored straight
/// into `dest`; afterwards the stack the backend used is zeroed and the vector registers are
/// cleared (`erasure.rs`), so the key and the keystream exist only in `key` and
/// `dest` once this returns.
#[inline(never)]
pub fn keystream(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    Section::run(|s| s.keystream(key, &[0; 3], counter, dest, rounds));
}

/// Test hook (`doc(hidden)`, not API): [`keystream`] without the stack wipe that follows every
/// backend call, so that a test can measure how deep the backends reach
/// (`tests/numa_erasure.rs`); with [`__WIPE_DEPTH`](super::__WIPE_DEPTH), the depth that is wiped.
#[doc(hidden)]
pub fn __keystream_unwiped(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    dispatch::keystream_unwiped(key, &[0; 3], counter, dest, rounds);
}
