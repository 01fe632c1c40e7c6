//! The portable backend: ChaCha in plain Rust on `u32` words, one block at a time, with no
//! state word on the stack in optimised builds.
//!
//! It runs where no SIMD backend applies (targets other than x86_64 and little-endian
//! aarch64, under miri, with `--cfg scalrand_chacha_portable`) and writes every single block
//! on aarch64 (key derivations, the last partial block of a keystream). Sixteen state words and the rounds'
//! temporaries do not fit in the general registers of most targets (x86_64 has 15 usable), and
//! a compiler that holds the state in locals spills key words and round state to the stack
//! frame, where a child forked from another thread during the call finds them. So the state
//! lives in a [`Work`] frame of wipe-on-fork memory ([`WORK`], taken for the call and zeroed
//! when it is given back, as the AVX2 backend's spill frame), and each quarter round loads
//! its four words from there and stores them back with volatile accesses: the compiler can
//! neither keep a word in a register from one quarter round to the next nor merge the
//! accesses away, and four words and a temporary fit in the general registers of the targets
//! this backend serves (the stack searches, `tests/stack_every_step.rs` and
//! `tests/backend_frames.rs`, run it on x86_64 and aarch64). The feed-forward reads the key
//! words again from the caller's `key` (volatile too: a plain load could reuse the value
//! loaded before the rounds, which would then live across them), so no key word is held
//! while the rounds run. The frame is on the stack, zeroed when the call ends, where
//! wipe-on-fork memory does not come from mappings of its own
//! (`scalrand_os::wipe::OWN_MAPPINGS`: there a fork child copies the heap as it copies the
//! stack, and a heap frame would make the first call allocate, from an interrupt handler
//! too), and when all 4,080 frames are busy (`Scratch::with`).
//!
//! The volatile accesses cost speed (each quarter round waits on the stores of the one
//! before); this backend serves targets with no SIMD backend and single blocks, where the
//! promise matters more than the rate.

use super::vocab::{BLOCK_LEN, CONSTANTS, DoubleRounds, KEY_LEN, Nonce, each_pass};
use scalrand_os::scratch::Scratch;
use scalrand_os::wipe::ZeroValid;

/// A block's state while its rounds run (RFC 8439 §2.3's 16 words), in a frame of
/// wipe-on-fork memory.
#[repr(C, align(64))]
struct Work([u32; 16]);

// SAFETY: plain words; all-zero is the frame's state between calls.
unsafe impl ZeroValid for Work {}

/// Frames for [`Work`], mapped at the first call: 16, and more as calls in flight need
/// (signal handlers, preempted threads).
static WORK: Scratch<Work> = Scratch::new_unmapped(16);

impl Work {
    /// Word `i` (below 16), loaded from the frame.
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        // SAFETY: a reference to an aligned, initialised word of the frame.
        unsafe { core::ptr::read_volatile(&raw const self.0[i]) }
    }

    /// Stores `v` as word `i` (below 16).
    #[inline(always)]
    fn set(&mut self, i: usize, v: u32) {
        // SAFETY: a reference to an aligned word of the frame, borrowed mutably.
        unsafe { core::ptr::write_volatile(&raw mut self.0[i], v) }
    }

    /// One quarter round of RFC 8439 §2.1 on words `(a, b, c, d)`: loaded, mixed in
    /// registers, stored back.
    #[inline(always)]
    fn qr(&mut self, a: usize, b: usize, c: usize, d: usize) {
        let (mut x, mut y, mut z, mut t) = (self.get(a), self.get(b), self.get(c), self.get(d));
        x = x.wrapping_add(y);
        t = (t ^ x).rotate_left(16);
        z = z.wrapping_add(t);
        y = (y ^ z).rotate_left(12);
        x = x.wrapping_add(y);
        t = (t ^ x).rotate_left(8);
        z = z.wrapping_add(t);
        y = (y ^ z).rotate_left(7);
        self.set(a, x);
        self.set(b, y);
        self.set(c, z);
        self.set(d, t);
    }
}

/// Key word `i` (below 8; 0 past the key) of `key`, read with a volatile load (see the
/// module docs).
#[inline(always)]
fn key_word(key: &[u8; KEY_LEN], i: usize) -> u32 {
    let Some(w) = key.get(4 * i..4 * i + 4) else {
        return 0;
    };
    // SAFETY: `w` is four readable bytes; `[u8; 4]` has alignment 1.
    u32::from_le_bytes(unsafe { core::ptr::read_volatile(w.as_ptr().cast::<[u8; 4]>()) })
}

/// Word `i` (below 16) of the initial state (RFC 8439 §2.3): the constants, the key (read
/// from `key` each time: see [`key_word`]), the counter and the nonce.
#[inline(always)]
fn initial_word(key: &[u8; KEY_LEN], nonce: &Nonce, counter: u32, i: usize) -> u32 {
    match i {
        0..4 => CONSTANTS[i],
        4..12 => key_word(key, i - 4),
        12 => counter,
        _ => nonce[i - 13],
    }
}

/// Block `counter` under `key` and `nonce` with `R` rounds, written to `out` (RFC 8439 §2.3
/// serialisation: each word little-endian), on the frame `w`.
#[inline(always)]
fn block_on<R: DoubleRounds>(
    w: &mut Work,
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    out: &mut [u8; BLOCK_LEN],
) {
    for i in 0..16 {
        w.set(i, initial_word(key, nonce, counter, i));
    }
    for _ in 0..R::COUNT {
        w.qr(0, 4, 8, 12);
        w.qr(1, 5, 9, 13);
        w.qr(2, 6, 10, 14);
        w.qr(3, 7, 11, 15);
        w.qr(0, 5, 10, 15);
        w.qr(1, 6, 11, 12);
        w.qr(2, 7, 8, 13);
        w.qr(3, 4, 9, 14);
    }
    for (i, o) in out.chunks_exact_mut(4).enumerate() {
        let v = w.get(i).wrapping_add(initial_word(key, nonce, counter, i));
        o.copy_from_slice(&v.to_le_bytes());
    }
}

/// Runs `f` on a [`Work`] frame: one of [`WORK`]'s where wipe-on-fork memory is mapped, else
/// one on the stack (see the module docs and `Scratch::with_own_or_stack`). The hint is the
/// CPU this thread runs on where rseq says it without a system call, as the AVX2 backend's;
/// threads passing the same hint spread by their stack's page.
#[inline(always)]
fn on_work<R>(f: impl FnOnce(&mut Work) -> R) -> R {
    WORK.with_own_or_stack(scalrand_os::cpu::rseq_cpu().unwrap_or(0), f)
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
    on_work(|w| block_on::<R>(w, key, nonce, counter, out));
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
    on_work(|w| {
        each_pass(dest, counter, 1, |b, _, ctr| {
            if let Ok(b) = <&mut [u8; BLOCK_LEN]>::try_from(b) {
                block_on::<R>(w, key, nonce, ctr, b);
            }
        })
    })
}
