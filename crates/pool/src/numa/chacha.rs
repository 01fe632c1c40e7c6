//! ChaCha20 (RFC 8439) as the NUMA pools use it: the block function, the fast-key-erasure
//! step, and bulk keystream.
//!
//! All three run on the `chacha20` crate's core, which picks its AVX2/SSE2/NEON backend at run
//! time. Keys and nonces here are RFC 8439's: a 256-bit key, a 32-bit block counter (state word
//! 12) and a 96-bit nonce. Every derivation in [`super`] uses the all-zero nonce; with counter 0
//! the first block is then also the block of the original 64-bit-counter ChaCha20 that Linux's
//! `crng_fast_key_erasure` uses.
//!
//! The known-answer tests (`tests/numa_kat.rs`) pin [`chacha20_block`] to RFC 8439's vectors
//! and [`fast_key_erasure`] to `tests/reference/chacha_ref.py`, an independent Python
//! implementation.

use chacha20::cipher::{KeyIvInit, StreamCipherCore};
use chacha20::{ChaChaCore, R20, variants::Ietf};
use zeroize::Zeroize;

type Core = ChaChaCore<R20, Ietf>;

/// Size of one ChaCha20 block in bytes.
pub const BLOCK_LEN: usize = 64;

/// Size of a ChaCha20 key in bytes.
pub const KEY_LEN: usize = 32;

/// Bytes of output one keystream key may produce before a huge read derives the next key:
/// 1 MiB, 16,384 blocks, far from the 2^32-block limit of RFC 8439's counter.
pub const CHUNK_LEN: usize = 1 << 20;

fn core(key: &[u8; KEY_LEN], nonce: &[u8; 12]) -> Core {
    Core::new(key.into(), nonce.into())
}

/// The ChaCha20 block function of RFC 8439 §2.3: the 64-byte block for `key`, block
/// `counter` and `nonce`.
pub fn chacha20_block(key: &[u8; KEY_LEN], counter: u32, nonce: &[u8; 12]) -> [u8; BLOCK_LEN] {
    let mut c = core(key, nonce);
    c.set_block_pos(counter);
    let mut block = [0u8; BLOCK_LEN];
    c.write_keystream_block((&mut block).into());
    block
}

/// One fast-key-erasure step (Bernstein 2017, Linux 5.18 `crng_fast_key_erasure`).
///
/// Computes block 0 of ChaCha20 under `key` with the zero nonce, replaces `key` with the
/// block's first 32 bytes and writes the next `out.len()` bytes (at most 32; more are never
/// produced, a longer `out` is filled only in its first 32 bytes) to `out`. The block is wiped.
/// The old key is gone once this returns: nothing that comes later can recompute `out`.
pub fn fast_key_erasure(key: &mut [u8; KEY_LEN], out: &mut [u8]) {
    let mut block = chacha20_block(key, 0, &[0; 12]);
    key.copy_from_slice(&block[..KEY_LEN]);
    let n = out.len().min(BLOCK_LEN - KEY_LEN);
    out[..n].copy_from_slice(&block[KEY_LEN..KEY_LEN + n]);
    block.zeroize();
}

/// Writes ChaCha20 keystream under `key` (zero nonce), starting at block `counter`, to `dest`.
/// `dest.len()` must keep the counter below 2^32 (callers stay under [`CHUNK_LEN`] + 1 block).
pub(crate) fn keystream(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) {
    let mut c = core(key, &[0; 12]);
    c.set_block_pos(counter);
    let (blocks, tail) = chacha20::cipher::array::Array::slice_as_chunks_mut(dest);
    c.write_keystream_blocks(blocks);
    if !tail.is_empty() {
        let mut block = [0u8; BLOCK_LEN];
        c.write_keystream_block((&mut block).into());
        tail.copy_from_slice(&block[..tail.len()]);
        block.zeroize();
    }
    // `c` zeroizes its state on drop (chacha20's `zeroize` feature).
}

/// Fills `dest` of any length from the one-use key `key`, erasing it on the way: up to
/// [`CHUNK_LEN`] bytes per key; before a chunk that is not the last, block 0 of the current key
/// becomes the next key (fast key erasure again) and the chunk's output starts at block 1.
/// `key` is wiped when this returns.
pub(crate) fn fill_erasing(key: &mut [u8; KEY_LEN], dest: &mut [u8]) {
    let mut rest = dest;
    while rest.len() > CHUNK_LEN {
        let (chunk, tail) = rest.split_at_mut(CHUNK_LEN);
        let mut next = [0u8; KEY_LEN];
        let mut block0 = chacha20_block(key, 0, &[0; 12]);
        next.copy_from_slice(&block0[..KEY_LEN]);
        block0.zeroize();
        keystream(key, 1, chunk);
        *key = next;
        next.zeroize();
        rest = tail;
    }
    keystream(key, 0, rest);
    key.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keystream_matches_blocks() {
        let key = [7u8; 32];
        let mut ks = [0u8; 200];
        keystream(&key, 3, &mut ks);
        for (i, chunk) in ks.chunks(64).enumerate() {
            let b = chacha20_block(&key, 3 + i as u32, &[0; 12]);
            assert_eq!(chunk, &b[..chunk.len()]);
        }
    }

    #[test]
    fn erasure_replaces_key() {
        let mut key = [1u8; 32];
        let b = chacha20_block(&key, 0, &[0; 12]);
        let mut out = [0u8; 40];
        fast_key_erasure(&mut key, &mut out);
        assert_eq!(key[..], b[..32]);
        assert_eq!(out[..32], b[32..]);
        assert_eq!(out[32..], [0u8; 8]);
    }
}
