//! Key derivation by fast key erasure (D. J. Bernstein, "Fast-key-erasure random-number
//! generators", 2017; Linux 5.18 `crng_fast_key_erasure`): each key produces one block, whose
//! first half replaces the key and whose rest is output, so nothing that comes later can
//! recompute what came before. One step, a batch refill, and a large read's one-use key.

use super::erasure::observe_key;
use super::section::Section;
use super::vocab::{BLOCK_LEN, CHUNK_LEN, KEY_LEN, Rounds};
use scalrand_os::wipe::zero;

/// One fast-key-erasure step (Bernstein 2017, Linux 5.18 `crng_fast_key_erasure`).
///
/// Computes block 0 of ChaCha20 under `key` with the zero nonce, replaces `key` with the
/// block's first 32 bytes and writes the next `out.len()` bytes (at most 32; more are never
/// produced, a longer `out` is filled only in its first 32 bytes) to `out`. The block is wiped.
/// The old key is gone once this returns: nothing that comes later can recompute `out`.
pub fn fast_key_erasure(key: &mut [u8; KEY_LEN], out: &mut [u8]) {
    let mut block = [0u8; BLOCK_LEN];
    Section::run(|s| fast_key_erasure_in(s, key, out, Rounds::ChaCha20, &mut block));
}

/// [`fast_key_erasure`] with `rounds` rounds and the block computed in `block` (zeroed before
/// this returns): the pools pass memory a fork child gets zeroed (a read's frame, the node
/// pool's work block), so that no copy of the next key or of `out` sits in a stack local
/// even for the moment between the block function and the copies. Runs in the caller's
/// section `s`, whose end (after the caller's lock is released, so that no other reader
/// waits on the wipe) clears the registers the copies went through.
pub(crate) fn fast_key_erasure_in(
    s: &mut Section,
    key: &mut [u8; KEY_LEN],
    out: &mut [u8],
    rounds: Rounds,
    block: &mut [u8; BLOCK_LEN],
) {
    s.block(key, &[0; 3], 0, rounds, block);
    key.copy_from_slice(&block[..KEY_LEN]);
    let n = out.len().min(BLOCK_LEN - KEY_LEN);
    out[..n].copy_from_slice(&block[KEY_LEN..KEY_LEN + n]);
    zero(block);
    observe_key(key);
    if let Ok(k) = <&[u8; KEY_LEN]>::try_from(&*out) {
        observe_key(k);
    }
}

/// One batch refill with fast key erasure (Bernstein 2017): `batch` (longer than [`KEY_LEN`])
/// becomes keystream under `key` from block 0, and its first [`KEY_LEN`] bytes replace `key`
/// and are zeroed in `batch`. The old key is gone; the new one exists only in `key`, the rest
/// of `batch` is output. The locked slots and the rseq slots both refill through this. The
/// vector registers are cleared once, after the key copy.
#[inline]
pub(crate) fn refill_batch(key: &mut [u8; KEY_LEN], batch: &mut [u8], rounds: Rounds) {
    Section::run(|s| {
        s.keystream(key, &[0; 3], 0, batch, rounds);
        key.copy_from_slice(&batch[..KEY_LEN]);
        // Plain stores: the batch is the caller's buffer and is read again, so they are not
        // dead.
        batch[..KEY_LEN].fill(0);
        observe_key(key);
    });
}

/// The secrets of one large read while it generates outside every lock: its one-read key and
/// the block that becomes the next chunk's key. Held in a [`Scratch`] frame of the pools (wipe-on-fork memory),
/// never in a stack local: a child forked from another thread while this read runs finds
/// zeros.
///
/// [`Scratch`]: scalrand_os::scratch::Scratch
#[repr(C)]
pub(crate) struct OneReadKey {
    pub(crate) key: [u8; KEY_LEN],
    pub(crate) block0: [u8; BLOCK_LEN],
}

// SAFETY: byte arrays; all zero is "no key", which no read uses (each writes its key first).
unsafe impl scalrand_os::wipe::ZeroValid for OneReadKey {}

/// Fills `dest` of any length from the one-use key `k.key`, erasing it on the way: up to
/// [`CHUNK_LEN`] bytes per key; before a chunk that is not the last, block 0 of the current key
/// (in `k.block0`) becomes the next key (fast key erasure again) and the chunk's output
/// starts at block 1. `k` is wiped when this returns.
pub(crate) fn fill_erasing(k: &mut OneReadKey, dest: &mut [u8], rounds: Rounds) {
    let mut rest = dest;
    while rest.len() > CHUNK_LEN {
        let (chunk, tail) = rest.split_at_mut(CHUNK_LEN);
        // One section per chunk: the next key's block, the chunk, the key's replacement.
        Section::run(|s| {
            s.block(&k.key, &[0; 3], 0, rounds, &mut k.block0);
            s.keystream(&k.key, &[0; 3], 1, chunk, rounds);
            k.key.copy_from_slice(&k.block0[..KEY_LEN]);
            zero(&mut k.block0);
            observe_key(&k.key);
        });
        rest = tail;
    }
    Section::run(|s| {
        s.keystream(&k.key, &[0; 3], 0, rest, rounds);
        zero(&mut k.key);
    });
}
