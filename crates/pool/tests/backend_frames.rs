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
//! qemu-user (the NEON backend). The portable backend keeps its state in general registers and
//! spills part of it (the pools' "Fork safety" says so): not asserted there. Optimised builds
//! only (without optimisation every backend copies key words into stack temporaries).

#![cfg(all(
    target_os = "linux",
    feature = "std",
    not(miri),
    not(scalrand_loom),
    not(debug_assertions)
))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use scalrand_pool::chacha::{__keystream_unwiped, Backend, Rounds, backend, keystream};

/// The 16-byte pieces of `key` searched for: either half, and each 32-bit word repeated four
/// times (a key word broadcast across a vector's lanes), with their names.
fn pieces(key: &[u8; 32]) -> Vec<([u8; 16], String)> {
    let mut p = Vec::new();
    for h in 0..2 {
        p.push((
            key[16 * h..16 * h + 16].try_into().unwrap(),
            format!("half {h}"),
        ));
    }
    for w in 0..8 {
        let mut b = [0u8; 16];
        for l in 0..4 {
            b[4 * l..4 * l + 4].copy_from_slice(&key[4 * w..4 * w + 4]);
        }
        p.push((b, format!("word {w} x4")));
    }
    p
}

/// Every piece of `key` found in `mem`, at every byte offset: (offset, piece).
fn find(mem: &[u8], key: &[u8; 32]) -> Vec<(usize, String)> {
    let pieces = pieces(key);
    mem.windows(16)
        .enumerate()
        .filter_map(|(i, w)| {
            pieces
                .iter()
                .find(|(p, _)| p == w)
                .map(|(_, n)| (i, n.clone()))
        })
        .collect()
}

/// Bytes of stack below the caller searched (the backends reach less than 2 KiB deep).
const BELOW: usize = 32 << 10;

/// Zeroes `2 * BELOW` bytes of stack below the caller.
#[inline(never)]
fn zero_below() {
    let mut zeros = [0u8; 2 * BELOW];
    core::hint::black_box(&mut zeros);
}

/// One unwiped keystream call, then the `BELOW` bytes of stack below it (where the call's
/// frames were) copied into `out` (word by word, volatile loads, in a frame of its own of a few
/// words).
#[inline(never)]
fn call_then_copy(key: &[u8; 32], dest: &mut [u8], rounds: Rounds, out: &mut [u8]) {
    __keystream_unwiped(key, 1, dest, rounds);
    copy_below(out);
}

/// Copies the `out.len()` bytes of stack that end right above this call's own local (the
/// caller's frames, which hold the key's address but never the key, stay out).
#[inline(never)]
fn copy_below(out: &mut [u8]) {
    let here = 0u8;
    let top = (core::ptr::from_ref(&here) as usize + 16) & !7;
    let base = top - out.len();
    for (i, c) in out.chunks_exact_mut(8).enumerate() {
        // SAFETY: the calling thread's own stack (the test thread's 2 MiB), within 32 KiB
        // below the caller's frame; volatile, as no Rust object lives there.
        let w = unsafe { core::ptr::read_volatile((base + 8 * i) as *const u64) };
        c.copy_from_slice(&w.to_ne_bytes());
    }
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
            zero_below();
            call_then_copy(&key, &mut dest, rounds, &mut below);
            let found = find(&below, &key);
            if let Some((at, piece)) = found.first() {
                failures.push(format!(
                    "{rounds:?} {len} B: {} pieces, first {piece} {} bytes below the call",
                    found.len(),
                    BELOW - at
                ));
            }
        }
    }
    eprintln!("{:?}: {failures:#?}", backend());
    if backend() != Backend::Portable {
        assert!(failures.is_empty(), "{:?}: {failures:#?}", backend());
    }
}
