//! ChaCha (RFC 8439 layout) as the NUMA pools use it: the block function, the fast-key-erasure
//! step, and bulk keystream, with 8, 12 or 20 rounds.
//!
//! The cipher is D. J. Bernstein, "ChaCha, a variant of Salsa20" (SASC 2008), in the layout of
//! RFC 8439 §2.3: a 256-bit key, a 32-bit block counter (state word 12) and a 96-bit nonce
//! (words 13..15). Every derivation in [`super`] uses the all-zero nonce; with counter 0 the
//! first block is then also the block of the original 64-bit-counter ChaCha20 that Linux's
//! `crng_fast_key_erasure` uses. [`Rounds`] picks ChaCha8, ChaCha12 or ChaCha20 (the paper's
//! reduced-round variants: 4, 6 or 10 double rounds).
//!
//! Everything runs on this crate's own backends (`backends/`): single blocks
//! ([`chacha20_block`], [`fast_key_erasure`]) on SSE2 registers on x86_64 and in plain Rust
//! elsewhere; bulk keystream ([`keystream`]) on the widest of AVX-512F, AVX2 and SSE2 that the
//! CPU has (chosen once, at run time; [`backend`] says which). After every call the stack the
//! backend used is zeroed and the vector registers cleared, so no copy of a key or of unread
//! keystream outlives the call outside the caller's own buffers.
//!
//! The known-answer tests (`tests/numa_kat.rs`) pin [`chacha20_block`] to RFC 8439's vectors,
//! [`fast_key_erasure`] to `tests/reference/chacha_ref.py`, an independent Python
//! implementation, and [`keystream`] for all three round counts to the same script's
//! ChaCha8/12/20 vectors (`tests/data/chacha_rounds.txt`).

use super::backends;
use zeroize::Zeroize;

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
    backends::block(key, &nonce_words(nonce), counter, rounds, &mut out);
    out
}

/// The nonce as state words 13..15 (little-endian).
fn nonce_words(nonce: &[u8; 12]) -> backends::Nonce {
    core::array::from_fn(|i| {
        u32::from_le_bytes([
            nonce[4 * i],
            nonce[4 * i + 1],
            nonce[4 * i + 2],
            nonce[4 * i + 3],
        ])
    })
}

/// One fast-key-erasure step (Bernstein 2017, Linux 5.18 `crng_fast_key_erasure`).
///
/// Computes block 0 of ChaCha20 under `key` with the zero nonce, replaces `key` with the
/// block's first 32 bytes and writes the next `out.len()` bytes (at most 32; more are never
/// produced, a longer `out` is filled only in its first 32 bytes) to `out`. The block is wiped.
/// The old key is gone once this returns: nothing that comes later can recompute `out`.
pub fn fast_key_erasure(key: &mut [u8; KEY_LEN], out: &mut [u8]) {
    let mut block = [0u8; BLOCK_LEN];
    fast_key_erasure_in(key, out, Rounds::ChaCha20, &mut block);
}

/// [`fast_key_erasure`] with `rounds` rounds.
#[cfg(test)]
pub(crate) fn fast_key_erasure_rounds(key: &mut [u8; KEY_LEN], out: &mut [u8], rounds: Rounds) {
    let mut block = [0u8; BLOCK_LEN];
    fast_key_erasure_in(key, out, rounds, &mut block);
}

/// [`fast_key_erasure`] with `rounds` rounds and the block computed in `block` (zeroed before
/// this returns): the pools pass memory a fork child gets zeroed (a read's frame, the node
/// pool's work block), so that no copy of the next key or of `out` sits in a stack local
/// even for the moment between the block function and the copies. The vector registers are
/// cleared after the last instruction that touches the block (the copies go through them).
pub(crate) fn fast_key_erasure_in(
    key: &mut [u8; KEY_LEN],
    out: &mut [u8],
    rounds: Rounds,
    block: &mut [u8; BLOCK_LEN],
) {
    backends::block_leaving_registers(key, &[0; 3], 0, rounds, block);
    key.copy_from_slice(&block[..KEY_LEN]);
    let n = out.len().min(BLOCK_LEN - KEY_LEN);
    out[..n].copy_from_slice(&block[KEY_LEN..KEY_LEN + n]);
    block.zeroize();
    observe_key(key);
    if let Ok(k) = <&[u8; KEY_LEN]>::try_from(&*out) {
        observe_key(k);
    }
    backends::clear_vector_registers();
}

/// The key observer of the erasure tests (a `fn` pointer as a word; 0: none).
static KEY_OBSERVER: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Test hook (`doc(hidden)`, not API): from now on `f` sees every key the pools and their
/// generators derive (node keys, slot keys, one-read keys, the keys of a huge read's chunks),
/// right after it is made, so a test can look for copies of it outside the pools' secret
/// memory (`tests/numa_erasure.rs`). `None` stops it. Costs one relaxed load per derived key.
#[doc(hidden)]
pub fn __observe_keys(f: Option<fn(&[u8; KEY_LEN])>) {
    KEY_OBSERVER.store(
        f.map_or(0, |f| f as usize),
        core::sync::atomic::Ordering::Release,
    );
}

/// Shows `key` to the test observer, if one is set.
#[inline]
pub(crate) fn observe_key(key: &[u8; KEY_LEN]) {
    let f = KEY_OBSERVER.load(core::sync::atomic::Ordering::Acquire);
    if f != 0 {
        // SAFETY: the only nonzero values stored are `fn(&[u8; KEY_LEN])` pointers cast to
        // `usize` (in `__observe_keys`), and a function pointer round-trips through `usize`.
        let f = unsafe { core::mem::transmute::<usize, fn(&[u8; KEY_LEN])>(f) };
        f(key);
    }
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
/// cleared (see `backends/mod.rs`), so the key and the keystream exist only in `key` and
/// `dest` once this returns.
pub fn keystream(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    backends::keystream(key, &[0; 3], counter, dest, rounds);
}

pub use backends::{Backend, backend};

/// Test hook (`doc(hidden)`, not API): [`keystream`] without the stack wipe that follows every
/// backend call, so that a test can measure how deep the backends reach
/// (`tests/numa_erasure.rs`); with [`__WIPE_DEPTH`], the depth that is wiped.
#[doc(hidden)]
pub fn __keystream_unwiped(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    backends::keystream_unwiped(key, &[0; 3], counter, dest, rounds);
}

/// Test hook (`doc(hidden)`, not API): the stack depth wiped after every backend call.
#[doc(hidden)]
pub const __WIPE_DEPTH: usize = backends::WIPE_DEPTH;

/// Test hook (`doc(hidden)`, not API): the stack depth wiped after every Fortuna read,
/// reseed and construction.
#[doc(hidden)]
pub const __FORTUNA_WIPE_DEPTH: usize = backends::FORTUNA_WIPE_DEPTH;

/// One batch refill with fast key erasure (Bernstein 2017): `batch` (longer than [`KEY_LEN`])
/// becomes keystream under `key` from block 0, and its first [`KEY_LEN`] bytes replace `key`
/// and are zeroed in `batch`. The old key is gone; the new one exists only in `key`, the rest
/// of `batch` is output. The locked slots and the rseq slots both refill through this. The
/// vector registers are cleared once, after the key copy.
#[inline]
pub(crate) fn refill_batch(key: &mut [u8; KEY_LEN], batch: &mut [u8], rounds: Rounds) {
    backends::keystream_leaving_registers(key, &[0; 3], 0, batch, rounds);
    key.copy_from_slice(&batch[..KEY_LEN]);
    // Plain stores: the batch is the caller's buffer and is read again, so they are not dead.
    batch[..KEY_LEN].fill(0);
    observe_key(key);
    backends::clear_vector_registers();
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
        backends::block_leaving_registers(&k.key, &[0; 3], 0, rounds, &mut k.block0);
        keystream(&k.key, 1, chunk, rounds);
        k.key.copy_from_slice(&k.block0[..KEY_LEN]);
        k.block0.zeroize();
        observe_key(&k.key);
        rest = tail;
    }
    // The last keystream call clears the vector registers after the key copy above.
    keystream(&k.key, 0, rest, rounds);
    k.key.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;

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
            fast_key_erasure_rounds(&mut key, &mut out, rounds);
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
}
