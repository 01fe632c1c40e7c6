//! The portable backend: the `chacha20` crate's IETF core (`ChaChaCore<R8/R12/R20, Ietf>`).
//!
//! "Portable" from this crate's point of view: no `unsafe` and no target feature here. The
//! `chacha20` crate still picks its own AVX2/SSE2/NEON/soft code at run time (its AVX-512
//! backend needs `--cfg chacha20_avx512`, which only the final binary can set), and falls back
//! to plain Rust under miri. It is also the reference the AVX-512 backend is tested against.

use super::super::chacha::{BLOCK_LEN, KEY_LEN, Rounds};
use chacha20::cipher::array::Array;
use chacha20::cipher::{KeyIvInit, StreamCipherCore};
use chacha20::{ChaChaCore, R8, R12, R20, variants::Ietf};
use zeroize::Zeroize;

fn core<R: chacha20::Rounds>(
    key: &[u8; KEY_LEN],
    counter: u32,
    nonce: &[u8; 12],
) -> ChaChaCore<R, Ietf> {
    let mut c = ChaChaCore::<R, Ietf>::new(key.into(), nonce.into());
    c.set_block_pos(counter);
    c
}

fn block_r<R: chacha20::Rounds>(
    key: &[u8; KEY_LEN],
    counter: u32,
    nonce: &[u8; 12],
) -> [u8; BLOCK_LEN] {
    let mut block = [0u8; BLOCK_LEN];
    core::<R>(key, counter, nonce).write_keystream_block((&mut block).into());
    // The core zeroizes its state on drop (chacha20's `zeroize` feature).
    block
}

/// The block function: block `counter` under `key` and `nonce`.
pub(crate) fn block(
    key: &[u8; KEY_LEN],
    counter: u32,
    nonce: &[u8; 12],
    rounds: Rounds,
) -> [u8; BLOCK_LEN] {
    match rounds {
        Rounds::ChaCha8 => block_r::<R8>(key, counter, nonce),
        Rounds::ChaCha12 => block_r::<R12>(key, counter, nonce),
        Rounds::ChaCha20 => block_r::<R20>(key, counter, nonce),
    }
}

fn keystream_r<R: chacha20::Rounds>(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8]) {
    let mut c = core::<R>(key, counter, &[0; 12]);
    let (blocks, tail) = Array::slice_as_chunks_mut(dest);
    // Steps word 12 modulo 2^32 and never touches the nonce (`write_keystream_blocks` does not
    // check the remaining blocks), which is the contract of `chacha::keystream`.
    c.write_keystream_blocks(blocks);
    if !tail.is_empty() {
        let mut block = [0u8; BLOCK_LEN];
        c.write_keystream_block((&mut block).into());
        tail.copy_from_slice(&block[..tail.len()]);
        block.zeroize();
    }
}

/// Keystream under `key`, zero nonce, from block `counter` (see `chacha::keystream`).
pub(crate) fn keystream(key: &[u8; KEY_LEN], counter: u32, dest: &mut [u8], rounds: Rounds) {
    match rounds {
        Rounds::ChaCha8 => keystream_r::<R8>(key, counter, dest),
        Rounds::ChaCha12 => keystream_r::<R12>(key, counter, dest),
        Rounds::ChaCha20 => keystream_r::<R20>(key, counter, dest),
    }
}
