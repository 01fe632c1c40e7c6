//! The SSE2 backend (every x86_64 CPU): up to three ChaCha blocks per pass, one per set of
//! four registers, in registers only; also every single block on x86_64 ([`block`]).
//!
//! The "horizontal" layout of the SSE2 ChaCha implementations since Bernstein's own: register
//! `a` holds state words 0..3 of a block, `b` 4..7, `c` 8..11, `d` 12..15; a column round is
//! four quarter rounds at once, and a lane rotation of `b`, `c`, `d` (`pshufd`) turns the
//! diagonals into columns and back. [`super::avx2`] is the same layout two blocks wide.
//!
//! **Nothing is spilled.** Three sets (`xmm0`–`xmm11`) run side by side, each with a scratch
//! register of its own (`xmm12`–`xmm14`) for the rotations, which SSE2 makes of two shifts
//! and an OR (it has no rotate and no byte shuffle; by 16 it swaps 16-bit halves with
//! `pshuflw`/`pshufhw`). The feed-forward reloads the key from the caller's `key` into the
//! scratch register; each block's four rows are stored straight into `dest` from the
//! registers. The whole pass is one `asm!` block, so the compiler never holds a state word: a
//! fork from another thread at any instruction of a pass finds no key word, round state or
//! unstored block in memory (`tests/stack_every_step.rs`, with `--cfg scalrand_chacha_sse2`).
//! Besides the key, a pass reads only public memory: the constants, and the counter and nonce
//! rows built on this function's frame. A signal delivered during a pass saves the registers
//! in its frame, which the section's end wipes (`erasure.rs`), as it clears the registers.
//!
//! The pass's function takes the round count as a value, so one copy serves every round count.
//!
//! Every function here is `#[target_feature(enable = "sse2")]`, which every x86_64 CPU has
//! (it is part of the x86_64 baseline, and of every x86_64 Rust target).

use super::vocab::{BLOCK_LEN, CONSTANTS, DoubleRounds, KEY_LEN, Nonce, each_pass};

/// Blocks per whole pass of [`blocks`].
pub(super) const LANES: usize = 3;

/// "expand 32-byte k", 16-byte aligned (an SSE2 memory operand must be).
#[repr(C, align(16))]
struct Sigma([u32; 4]);

static SIGMA: Sigma = Sigma(CONSTANTS);

/// One half of a double round on each set `(a, b, c, d, t, off)` (`t` its scratch register,
/// `off` its counter row's offset), as assembly text.
macro_rules! half_round {
    ($(($a:literal, $b:literal, $c:literal, $d:literal, $t:literal, $off:literal)),+) => {
        concat!(
            $(
                "paddd xmm", $a, ", xmm", $b, "\n",
                "pxor xmm", $d, ", xmm", $a, "\n",
                "pshuflw xmm", $d, ", xmm", $d, ", 0xb1\n",
                "pshufhw xmm", $d, ", xmm", $d, ", 0xb1\n",
            )+
            $(
                "paddd xmm", $c, ", xmm", $d, "\n",
                "pxor xmm", $b, ", xmm", $c, "\n",
                "movdqa xmm", $t, ", xmm", $b, "\n",
                "pslld xmm", $t, ", 12\n",
                "psrld xmm", $b, ", 20\n",
                "por xmm", $b, ", xmm", $t, "\n",
            )+
            $(
                "paddd xmm", $a, ", xmm", $b, "\n",
                "pxor xmm", $d, ", xmm", $a, "\n",
                "movdqa xmm", $t, ", xmm", $d, "\n",
                "pslld xmm", $t, ", 8\n",
                "psrld xmm", $d, ", 24\n",
                "por xmm", $d, ", xmm", $t, "\n",
            )+
            $(
                "paddd xmm", $c, ", xmm", $d, "\n",
                "pxor xmm", $b, ", xmm", $c, "\n",
                "movdqa xmm", $t, ", xmm", $b, "\n",
                "pslld xmm", $t, ", 7\n",
                "psrld xmm", $b, ", 25\n",
                "por xmm", $b, ", xmm", $t, "\n",
            )+
        )
    };
}

/// Rotates the lanes of `b`, `c` and `d` in each set by the `pshufd` immediates given
/// (diagonals into columns: `0x39, 0x4e, 0x93`; and back: `0x93, 0x4e, 0x39`).
macro_rules! rotate_lanes {
    ($ib:literal, $ic:literal, $id:literal; $(($a:literal, $b:literal, $c:literal, $d:literal, $t:literal, $off:literal)),+) => {
        concat!($(
            "pshufd xmm", $b, ", xmm", $b, ", ", $ib, "\n",
            "pshufd xmm", $c, ", xmm", $c, ", ", $ic, "\n",
            "pshufd xmm", $d, ", xmm", $d, ", ", $id, "\n",
        )+)
    };
}

/// The text of one pass on the sets given (`(a, b, c, d, t, off, s + 1)` for set `s`): loads,
/// `{dr}` double rounds, the feed-forward, and set `s`'s block stored at byte `64 s` of `{out}`
/// while `{n}` is above `s` (label 9 ends).
macro_rules! pass_text {
    ($(($a:literal, $b:literal, $c:literal, $d:literal, $t:literal, $off:literal, $next:literal)),+) => {
        concat!(
            $(
                "movdqa xmm", $a, ", xmmword ptr [{k}]\n",
                "movdqu xmm", $b, ", xmmword ptr [{key}]\n",
                "movdqu xmm", $c, ", xmmword ptr [{key} + 16]\n",
                "movdqu xmm", $d, ", xmmword ptr [{rows} + ", $off, "]\n",
            )+
            "2:\n",
            half_round!($(($a, $b, $c, $d, $t, $off)),+),
            rotate_lanes!(0x39, 0x4e, 0x93; $(($a, $b, $c, $d, $t, $off)),+),
            half_round!($(($a, $b, $c, $d, $t, $off)),+),
            rotate_lanes!(0x93, 0x4e, 0x39; $(($a, $b, $c, $d, $t, $off)),+),
            "dec {dr:e}\n",
            "jnz 2b\n",
            $(
                "paddd xmm", $a, ", xmmword ptr [{k}]\n",
                "movdqu xmm", $t, ", xmmword ptr [{key}]\n",
                "paddd xmm", $b, ", xmm", $t, "\n",
                "movdqu xmm", $t, ", xmmword ptr [{key} + 16]\n",
                "paddd xmm", $c, ", xmm", $t, "\n",
                "movdqu xmm", $t, ", xmmword ptr [{rows} + ", $off, "]\n",
                "paddd xmm", $d, ", xmm", $t, "\n",
            )+
            $(
                "movdqu xmmword ptr [{out} + 4*", $off, "], xmm", $a, "\n",
                "movdqu xmmword ptr [{out} + 4*", $off, " + 16], xmm", $b, "\n",
                "movdqu xmmword ptr [{out} + 4*", $off, " + 32], xmm", $c, "\n",
                "movdqu xmmword ptr [{out} + 4*", $off, " + 48], xmm", $d, "\n",
                "cmp {n}, ", $next, "\n",
                "jbe 9f\n",
            )+
            "9:\n",
        )
    };
}

/// The counter and nonce rows of up to three blocks from `counter` (word 12 steps modulo 2^32,
/// as RFC 8439's counter).
fn counter_rows(nonce: &Nonce, counter: u32) -> [[u32; 4]; LANES] {
    core::array::from_fn(|s| [counter.wrapping_add(s as u32), nonce[0], nonce[1], nonce[2]])
}

/// Up to [`LANES`] blocks from `counter`: the first `n` (1 to 3) stored at `out`.
///
/// # Safety
///
/// `out` is valid for writes of `64 * n` bytes; `double_rounds >= 1`.
#[target_feature(enable = "sse2")]
#[inline]
unsafe fn pass(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    out: *mut u8,
    n: usize,
    double_rounds: u32,
) {
    let rows = counter_rows(nonce, counter);
    macro_rules! run {
        ($($set:tt),+) => {
            // SAFETY: `{key}` points at the 32 key bytes, `{k}` at the 16-byte aligned
            // `SIGMA`, `{rows}` at `rows` (16 bytes read per set); `{out}` is valid for
            // `64 * n` bytes (the caller's contract), and set `s` stores only when `n > s`.
            // `{dr}` counts the loop down from `double_rounds >= 1`. Every register written is
            // declared; the stack is not touched; SSE2 is enabled for this function.
            unsafe {
                core::arch::asm!(
                    pass_text!($($set),+),
                    key = in(reg) key.as_ptr(),
                    k = in(reg) core::ptr::from_ref(&SIGMA),
                    rows = in(reg) rows.as_ptr(),
                    out = in(reg) out,
                    n = in(reg) n,
                    dr = inout(reg) double_rounds => _,
                    out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                    out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                    out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                    out("xmm12") _, out("xmm13") _, out("xmm14") _,
                    options(nostack),
                );
            }
        };
    }
    // A set per block: fewer sets, a shorter pass (each set is one chain of dependent
    // instructions; three side by side cost little more than one).
    match n {
        1 => run!((0, 1, 2, 3, 12, 0, 1)),
        2 => run!((0, 1, 2, 3, 12, 0, 1), (4, 5, 6, 7, 13, 16, 2)),
        _ => run!(
            (0, 1, 2, 3, 12, 0, 1),
            (4, 5, 6, 7, 13, 16, 2),
            (8, 9, 10, 11, 14, 32, 3)
        ),
    }
}

/// Block `counter` under `key` and `nonce` with `R` rounds, into `out`.
#[target_feature(enable = "sse2")]
#[inline]
pub(super) fn block<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    out: &mut [u8; BLOCK_LEN],
) {
    one(key, nonce, counter, out, R::COUNT);
}

/// [`block`] with the round count as a value.
#[target_feature(enable = "sse2")]
#[inline(never)]
fn one(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    out: &mut [u8; BLOCK_LEN],
    double_rounds: u32,
) {
    // SAFETY: `out` is 64 writable bytes; every round count is at least one double round.
    unsafe { pass(key, nonce, counter, out.as_mut_ptr(), 1, double_rounds) };
}

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes), three per pass; a last
/// pass of one or two blocks computes only those. Returns the counter after the last block.
#[target_feature(enable = "sse2")]
#[inline]
pub(super) fn blocks<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    passes(key, nonce, counter, dest, R::COUNT)
}

/// [`blocks`] with the round count as a value.
#[target_feature(enable = "sse2")]
#[inline(never)]
fn passes(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
    double_rounds: u32,
) -> u32 {
    debug_assert!(dest.len().is_multiple_of(BLOCK_LEN) && double_rounds >= 1);
    each_pass(dest, counter, LANES, |blocks, n, ctr| {
        // SAFETY: `blocks` holds `64 * n` bytes; every round count is at least one double
        // round.
        unsafe { pass(key, nonce, ctr, blocks.as_mut_ptr(), n, double_rounds) };
    })
}
