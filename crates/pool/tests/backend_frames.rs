//! What a keystream call leaves in its own stack frames: no piece of its key, on every SIMD
//! backend, before the wipe that follows every call.
//!
//! `__keystream_unwiped` runs the backend without the stack wipe; right after it returns, the
//! stack below the caller (zeroed before the call) is copied and searched for 16-byte pieces
//! of the key (either half, or a key word repeated across four lanes: a broadcast key row).
//! A backend that spilled a key word, a key row or the initial state to its frame leaves it
//! there, where a fork from another thread during the call would have found it. Whole blocks
//! (the bulk backends) and lengths with a partial last block (the single-block function).
//!
//! The companion of `stack_every_step.rs`, which single-steps reads under `ptrace` on x86_64;
//! this test needs neither `ptrace` nor wipe-on-fork memory, so it also runs on aarch64 under
//! qemu-user (the NEON backend, and the portable one for single blocks). Every backend is
//! asserted, the portable one included (its state lives in wipe-on-fork memory). Optimised
//! builds only (without optimisation every backend copies key words into stack temporaries).

#![cfg(all(
    target_os = "linux",
    feature = "std",
    not(miri),
    not(scalrand_loom),
    not(debug_assertions)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_pool::chacha::{__keystream_unwiped, Rounds, backend, keystream};
use scalrand_testkit::stack::{copy_below, find_pieces, zero_below};

/// Bytes of stack below the caller searched (the backends reach less than 2 KiB deep).
const BELOW: usize = 32 << 10;

/// One unwiped keystream call, then the `BELOW` bytes of stack below it (where the call's
/// frames were, up to the copy's own local: the caller's frames, which hold the key's address
/// but never the key, stay out) copied into `out`.
#[inline(never)]
fn call_then_copy(key: &[u8; 32], dest: &mut [u8], rounds: Rounds, out: &mut [u8]) {
    __keystream_unwiped(key, 1, dest, rounds);
    copy_below(out, 16);
}

/// The key, on the heap, made in a frame of its own: the test's own registers and frame never
/// hold it (a callee-saved register of the test's, saved by a backend's prologue, would look
/// like the backend's spill).
#[inline(never)]
fn make_key() -> Box<[u8; 32]> {
    Box::new(core::array::from_fn(|i| {
        (i as u8).wrapping_mul(37).wrapping_add(5)
    }))
}

#[test]
fn no_backend_leaves_a_key_piece_in_its_frames() {
    let key = make_key();
    let mut below = vec![0u8; BELOW];
    let mut failures = Vec::new();
    for rounds in [Rounds::ChaCha8, Rounds::ChaCha12, Rounds::ChaCha20] {
        for len in [
            64usize,
            128,
            192,
            320,
            512,
            1024,
            2048,
            4096,
            100,
            300,
            4096 + 17,
        ] {
            let mut dest = vec![0u8; len];
            // A call that clears the registers after itself (another key): the unwiped calls do
            // not, and on aarch64 the next call's prologue would save the low halves of
            // `v8`–`v15` (callee-saved), with the last call's key words, into its frame.
            keystream(&[0x11; 32], 0, &mut [0u8; 64], rounds);
            zero_below::<{ 2 * BELOW }>();
            call_then_copy(&key, &mut dest, rounds, &mut below);
            let found = find_pieces(&below, &[*key]);
            if let Some((at, _, piece)) = found.first() {
                failures.push(format!(
                    "{rounds:?} {len} B: {} pieces, first {piece} {} bytes below the call",
                    found.len(),
                    BELOW - at
                ));
            }
        }
    }
    eprintln!("{:?}: {failures:#?}", backend());
    assert!(failures.is_empty(), "{:?}: {failures:#?}", backend());
}
