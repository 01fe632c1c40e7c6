//! The portable backend: ChaCha in plain Rust on `u32` words, one block at a time.
//!
//! It runs where no SIMD backend applies (targets other than x86_64, under miri, with
//! `--cfg scalrand_chacha_portable`) and writes the last partial block of every keystream on
//! targets without the SSE2 one-block function. The state is 16 words; x86_64 has 15 usable
//! general registers, so the compiler spills some of them to this function's frame, which
//! the dispatcher wipes after every call (`erasure.rs`).

use super::vocab::{BLOCK_LEN, DoubleRounds, KEY_LEN, Nonce, each_pass, state_words};

/// One quarter round of RFC 8439 §2.1 on words `(a, b, c, d)`.
#[inline(always)]
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

/// Block `counter` under `key` and `nonce` with `R` rounds, written to
/// `out` (RFC 8439 §2.3 serialisation: each word little-endian).
#[inline(never)]
pub(super) fn block<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    out: &mut [u8; BLOCK_LEN],
) {
    let init = state_words(key, nonce, counter);
    let mut s = init;
    for _ in 0..R::COUNT {
        qr(&mut s, 0, 4, 8, 12);
        qr(&mut s, 1, 5, 9, 13);
        qr(&mut s, 2, 6, 10, 14);
        qr(&mut s, 3, 7, 11, 15);
        qr(&mut s, 0, 5, 10, 15);
        qr(&mut s, 1, 6, 11, 12);
        qr(&mut s, 2, 7, 8, 13);
        qr(&mut s, 3, 4, 9, 14);
    }
    for ((o, w), i) in out.chunks_exact_mut(4).zip(s.iter()).zip(init.iter()) {
        o.copy_from_slice(&w.wrapping_add(*i).to_le_bytes());
    }
}

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes); returns the counter after
/// the last block (mod 2^32).
#[inline(never)]
pub(super) fn blocks<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    each_pass(dest, counter, 1, |b, _, ctr| {
        if let Ok(b) = <&mut [u8; BLOCK_LEN]>::try_from(b) {
            block::<R>(key, nonce, ctr, b);
        }
    })
}
