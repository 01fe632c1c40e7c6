//! The AVX2 backend: eight ChaCha blocks per pass, and two to six for what is left; no state
//! word ever on the stack.
//!
//! - **Eight blocks** ([`columns`], every whole 512 bytes of a call): the block-per-lane
//!   ("vertical") layout of Linux's `chacha_8block_xor_avx2`: `ymm` register `i` holds word `i`
//!   of eight blocks, so the rounds need no shuffles across lanes. Sixteen words and a scratch
//!   register do not fit in sixteen registers: words 0..3 live in a spill frame of
//!   wipe-on-fork memory ([`SPILL`], where Linux uses its stack), taken for the call and zeroed
//!   when it is given back.
//! - **Two to six blocks** (the rest of a call, and every pass of a call that finds no spill
//!   frame): the "horizontal" layout of the SSE2 one-block code ([`super::sse2`]), twice as
//!   wide: register `a` holds state words 0..3 of block `2s` in its low 128-bit half and of
//!   block `2s + 1` in its high half, `b` words 4..7, `c` 8..11, `d` 12..15 (the layout of
//!   Linux's `chacha_2block_xor_avx2` and `chacha_4block_xor_avx2`). `vpshufd`, which works
//!   within each 128-bit half, turns the diagonals into columns and back. Up to three such
//!   sets of four registers (`ymm0`–`ymm11`) run side by side, with `ymm12` and `ymm15` the
//!   rotations' scratch and `ymm13`/`ymm14` the byte-shuffle masks: everything fits in
//!   registers. A last pass of one or two blocks runs one set, of three or four two, of five
//!   all three; a block past the request is computed in registers and never stored.
//!
//! Rotations by 16 and 8 are byte shuffles (`vpshufb`), by 12 and 7 two shifts and an OR.
//! Each pass is one `asm!` block, so the compiler never holds a state word: the key is read
//! from the caller's `key` (and read again for the feed-forward), blocks are stored straight
//! from registers into `dest`, and the only other memory a pass reads is public (the
//! constants, the counter and nonce words). A fork from another thread at any instruction
//! finds no key word, round state or unstored block on the stack (`tests/stack_every_step.rs`)
//! and zeros in the spill frame. A signal delivered during a pass saves the registers in its
//! frame, which the section's end wipes (`erasure.rs`), as it clears the registers. A fork
//! made by a signal handler during a pass leaves that pass, in the child, on a zeroed spill
//! frame, as it leaves the read on its zeroed keys: the reads' checks for such a fork (the
//! pools' "Fork safety") discard what it computes.
//!
//! The passes take the round count as a value (their loop counter), so one copy serves
//! ChaCha8, ChaCha12 and ChaCha20.
//!
//! Every function here is `#[target_feature(enable = "avx2")]`; the one caller outside,
//! the dispatcher (`dispatch.rs`), holds the cached `cpufeatures` token that makes calling them sound.

use super::vocab::{BLOCK_LEN, CONSTANTS, DoubleRounds, KEY_LEN, Nonce, each_pass};
use scalrand_os::scratch::Scratch;
use scalrand_os::wipe::ZeroValid;

/// Blocks per whole pass.
pub(super) const LANES: usize = 6;

/// Public constants a pass reads: "expand 32-byte k" in both halves, and the `vpshufb` masks
/// that rotate every 32-bit word left by 16 and by 8.
#[repr(C, align(32))]
struct Constants {
    sigma: [u32; 8],
    rot16: [u8; 32],
    rot8: [u8; 32],
    /// Each of the four words of "expand 32-byte k" in all eight lanes (byte 96 on).
    columns: [[u32; 8]; 4],
    /// 0 to 7: the counter's step in each lane of a column pass (byte 224).
    lanes: [u32; 8],
}

static CONST: Constants = Constants {
    sigma: [
        CONSTANTS[0],
        CONSTANTS[1],
        CONSTANTS[2],
        CONSTANTS[3],
        CONSTANTS[0],
        CONSTANTS[1],
        CONSTANTS[2],
        CONSTANTS[3],
    ],
    rot16: [
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, //
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    ],
    rot8: [
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, //
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    ],
    columns: [
        [CONSTANTS[0]; 8],
        [CONSTANTS[1]; 8],
        [CONSTANTS[2]; 8],
        [CONSTANTS[3]; 8],
    ],
    lanes: [0, 1, 2, 3, 4, 5, 6, 7],
};

/// One half of a double round (four quarter rounds per block, RFC 8439 §2.1, step by step)
/// on each set `(a, b, c, d, t, off)` of registers, `t` the set's scratch register (`off`:
/// see `load!`), as assembly text.
macro_rules! half_round {
    ($(($a:literal, $b:literal, $c:literal, $d:literal, $t:literal, $off:literal)),+) => {
        concat!(
            $(
                "vpaddd ymm", $a, ", ymm", $a, ", ymm", $b, "\n",
                "vpxor ymm", $d, ", ymm", $d, ", ymm", $a, "\n",
                "vpshufb ymm", $d, ", ymm", $d, ", ymm13\n",
            )+
            $(
                "vpaddd ymm", $c, ", ymm", $c, ", ymm", $d, "\n",
                "vpxor ymm", $b, ", ymm", $b, ", ymm", $c, "\n",
                "vpslld ymm", $t, ", ymm", $b, ", 12\n",
                "vpsrld ymm", $b, ", ymm", $b, ", 20\n",
                "vpor ymm", $b, ", ymm", $b, ", ymm", $t, "\n",
            )+
            $(
                "vpaddd ymm", $a, ", ymm", $a, ", ymm", $b, "\n",
                "vpxor ymm", $d, ", ymm", $d, ", ymm", $a, "\n",
                "vpshufb ymm", $d, ", ymm", $d, ", ymm14\n",
            )+
            $(
                "vpaddd ymm", $c, ", ymm", $c, ", ymm", $d, "\n",
                "vpxor ymm", $b, ", ymm", $b, ", ymm", $c, "\n",
                "vpslld ymm", $t, ", ymm", $b, ", 7\n",
                "vpsrld ymm", $b, ", ymm", $b, ", 25\n",
                "vpor ymm", $b, ", ymm", $b, ", ymm", $t, "\n",
            )+
        )
    };
}

/// Rotates the lanes of `b`, `c` and `d` in each set by the `vpshufd` immediates given
/// (diagonals into columns: `0x39, 0x4e, 0x93`; and back: `0x93, 0x4e, 0x39`).
macro_rules! rotate_lanes {
    ($ib:literal, $ic:literal, $id:literal; $(($a:literal, $b:literal, $c:literal, $d:literal, $t:literal, $off:literal)),+) => {
        concat!($(
            "vpshufd ymm", $b, ", ymm", $b, ", ", $ib, "\n",
            "vpshufd ymm", $c, ", ymm", $c, ", ", $ic, "\n",
            "vpshufd ymm", $d, ", ymm", $d, ", ", $id, "\n",
        )+)
    };
}

/// Loads each set `(a, b, c, d, t, off)` (`off`: its counter rows' offset): the constants, the
/// key's two halves in both 128-bit halves, the counter and nonce rows.
macro_rules! load {
    ($(($a:literal, $b:literal, $c:literal, $d:literal, $t:literal, $off:literal)),+) => {
        concat!($(
            "vmovdqa ymm", $a, ", ymmword ptr [{k}]\n",
            "vbroadcasti128 ymm", $b, ", xmmword ptr [{key}]\n",
            "vbroadcasti128 ymm", $c, ", xmmword ptr [{key} + 16]\n",
            "vmovdqu ymm", $d, ", ymmword ptr [{rows} + ", $off, "]\n",
        )+)
    };
}

/// The feed-forward: each set plus its input, the key's halves broadcast again into `ymm12`.
macro_rules! feed_forward {
    ($(($a:literal, $b:literal, $c:literal, $d:literal, $t:literal, $off:literal)),+) => {
        concat!(
            "vmovdqa ymm12, ymmword ptr [{k}]\n",
            $("vpaddd ymm", $a, ", ymm", $a, ", ymm12\n",)+
            "vbroadcasti128 ymm12, xmmword ptr [{key}]\n",
            $("vpaddd ymm", $b, ", ymm", $b, ", ymm12\n",)+
            "vbroadcasti128 ymm12, xmmword ptr [{key} + 16]\n",
            $("vpaddd ymm", $c, ", ymm", $c, ", ymm12\n",)+
            $("vpaddd ymm", $d, ", ymm", $d, ", ymmword ptr [{rows} + ", $off, "]\n",)+
        )
    };
}

/// Stores block `2s` (the low halves of set `(a, b, c, d)`) at byte `$lo` of `{out}`, then, if
/// `{n}` is above `$i`, block `2s + 1` (the high halves) at `$hi`; ends the stores (jumps to
/// label 9) when `{n}` is at most `$i` or `$i + 1`.
macro_rules! store_pair {
    ($a:literal, $b:literal, $c:literal, $d:literal; $lo:literal, $hi:literal, $i:literal, $next:literal) => {
        concat!(
            "vmovdqu xmmword ptr [{out} + ", $lo, "], xmm", $a, "\n",
            "vmovdqu xmmword ptr [{out} + ", $lo, " + 16], xmm", $b, "\n",
            "vmovdqu xmmword ptr [{out} + ", $lo, " + 32], xmm", $c, "\n",
            "vmovdqu xmmword ptr [{out} + ", $lo, " + 48], xmm", $d, "\n",
            "cmp {n}, ", $i, "\n",
            "jbe 9f\n",
            "vextracti128 xmmword ptr [{out} + ", $hi, "], ymm", $a, ", 1\n",
            "vextracti128 xmmword ptr [{out} + ", $hi, " + 16], ymm", $b, ", 1\n",
            "vextracti128 xmmword ptr [{out} + ", $hi, " + 32], ymm", $c, ", 1\n",
            "vextracti128 xmmword ptr [{out} + ", $hi, " + 48], ymm", $d, ", 1\n",
            "cmp {n}, ", $next, "\n",
            "jbe 9f\n",
        )
    };
}

/// One pass of the sets given: loads, `{dr}` double rounds, the feed-forward and the stores
/// (the text of the `asm!` block; after the `;`, the [`store_pair`]s' arguments).
macro_rules! pass_text {
    ($($set:tt),+; $(($sa:literal, $sb:literal, $sc:literal, $sd:literal; $lo:literal, $hi:literal, $i:literal, $next:literal)),+) => {
        concat!(
            "vmovdqa ymm13, ymmword ptr [{k} + 32]\n",
            "vmovdqa ymm14, ymmword ptr [{k} + 64]\n",
            load!($($set),+),
            "2:\n",
            half_round!($($set),+),
            rotate_lanes!(0x39, 0x4e, 0x93; $($set),+),
            half_round!($($set),+),
            rotate_lanes!(0x93, 0x4e, 0x39; $($set),+),
            "dec {dr:e}\n",
            "jnz 2b\n",
            feed_forward!($($set),+),
            $(store_pair!($sa, $sb, $sc, $sd; $lo, $hi, $i, $next),)+
            "9:\n",
        )
    };
}

/// Words 0..3 of the eight blocks of a column pass: the state that does not fit in registers,
/// kept in a [`Scratch`] frame of wipe-on-fork memory (never on the stack).
#[repr(C, align(32))]
struct Spill([u8; 128]);

// SAFETY: bytes; all-zero is the frame's state between passes.
unsafe impl ZeroValid for Spill {}

/// Frames for [`Spill`], mapped at the first column pass: one per CPU and more as calls in
/// flight need (signal handlers, preempted threads).
static SPILL: Scratch<Spill> = Scratch::new_unmapped(16);

/// One step of four independent quarter rounds of a column pass, as assembly text:
/// `a += b; d ^= a; d <<<= 16` (or 8: `$rot` names the byte-shuffle mask's register) for each
/// `(a, b, c, d)`. Words 0..3 (`a` in every quarter round) live in the spill frame at `{x}`,
/// words 4..15 in `ymm4` to `ymm15`; `ymm0` is the scratch register.
macro_rules! add_xor_shuffle {
    ($rot:literal; $(($a:literal, $b:literal, $c:literal, $d:literal)),+) => {
        concat!($(
            "vpaddd ymm0, ymm", $b, ", ymmword ptr [{x} + 32*", $a, "]\n",
            "vmovdqa ymmword ptr [{x} + 32*", $a, "], ymm0\n",
            "vpxor ymm", $d, ", ymm", $d, ", ymm0\n",
            "vpshufb ymm", $d, ", ymm", $d, ", ymm", $rot, "\n",
        )+)
    };
}

/// The other step: `c += d; b ^= c; b <<<= $l` (12 or 7) for each `(a, b, c, d)`, the rotation
/// as two shifts and an OR through `ymm0`.
macro_rules! add_xor_rotate {
    ($l:literal, $r:literal; $(($a:literal, $b:literal, $c:literal, $d:literal)),+) => {
        concat!($(
            "vpaddd ymm", $c, ", ymm", $c, ", ymm", $d, "\n",
            "vpxor ymm", $b, ", ymm", $b, ", ymm", $c, "\n",
            "vpslld ymm0, ymm", $b, ", ", $l, "\n",
            "vpsrld ymm", $b, ", ymm", $b, ", ", $r, "\n",
            "vpor ymm", $b, ", ymm", $b, ", ymm0\n",
        )+)
    };
}

/// Four quarter rounds of a column pass (RFC 8439 section 2.1), step by step; `ymm3` holds
/// the rotate-by-16 mask, `ymm2` the rotate-by-8 one.
macro_rules! column_quarter_rounds {
    ($($q:tt),+) => {
        concat!(
            add_xor_shuffle!(3; $($q),+),
            add_xor_rotate!(12, 20; $($q),+),
            add_xor_shuffle!(2; $($q),+),
            add_xor_rotate!(7, 25; $($q),+),
        )
    };
}

/// A 4 x 4 transpose of 32-bit words inside each 128-bit half of registers `r0..r3` (words
/// `4g..4g+4` of a group, one per register), through `t0` and `t1`: afterwards `r2`, `r3`,
/// `t0`, `r0` hold, in 128-bit half `h`, words `4g..4g+4` of blocks `4h`, `4h + 1`, `4h + 2`,
/// `4h + 3`; `r1` and `t1` are free.
macro_rules! transpose4 {
    ($r0:literal, $r1:literal, $r2:literal, $r3:literal, $t0:literal, $t1:literal) => {
        concat!(
            "vpunpckldq ymm", $t0, ", ymm", $r0, ", ymm", $r1, "\n",
            "vpunpckhdq ymm", $t1, ", ymm", $r0, ", ymm", $r1, "\n",
            "vpunpckldq ymm", $r0, ", ymm", $r2, ", ymm", $r3, "\n",
            "vpunpckhdq ymm", $r1, ", ymm", $r2, ", ymm", $r3, "\n",
            "vpunpcklqdq ymm", $r2, ", ymm", $t0, ", ymm", $r0, "\n",
            "vpunpckhqdq ymm", $r3, ", ymm", $t0, ", ymm", $r0, "\n",
            "vpunpcklqdq ymm", $t0, ", ymm", $t1, ", ymm", $r1, "\n",
            "vpunpckhqdq ymm", $r0, ", ymm", $t1, ", ymm", $r1, "\n",
        )
    };
}

/// Stores 32 bytes of blocks `m` and `4 + m` from the transposed groups in registers `lo` and
/// `hi` (128-bit half `h` of each: block `4h + m`) at byte `$at` of each block, through `ymm1`.
macro_rules! store_halves {
    ($lo:literal, $hi:literal, $m:literal, $at:literal) => {
        concat!(
            "vperm2i128 ymm1, ymm", $lo, ", ymm", $hi, ", 0x20\n",
            "vmovdqu ymmword ptr [{out} + 64*", $m, " + ", $at, "], ymm1\n",
            "vperm2i128 ymm1, ymm", $lo, ", ymm", $hi, ", 0x31\n",
            "vmovdqu ymmword ptr [{out} + 64*", $m, " + 256 + ", $at, "], ymm1\n",
        )
    };
}

/// Whole eight-block passes from `counter` into `dest` (a multiple of 512 bytes) in the
/// "vertical" layout of Linux's `chacha_8block_xor_avx2` (`arch/x86/crypto/chacha-avx2-x86_64.S`,
/// from commit 3d1e93cdf16c "crypto: chacha20 - Add an eight block AVX2 variant for x86_64"):
/// `ymm` register `i` holds word `i` of eight blocks, so the rounds need no shuffles across
/// lanes; sixteen words and a scratch register do not fit in sixteen registers, so words 0..3
/// live in `spill` (wipe-on-fork memory, where Linux keeps them on its stack). After the
/// feed-forward, a 4 x 4 transpose inside each 128-bit half per group of four words and one
/// `vperm2i128` per pair of groups give each block's 32-byte halves, stored straight into
/// `dest`. One `asm!` block per pass: nothing on the stack. Returns the counter after the
/// last block.
#[target_feature(enable = "avx2")]
#[inline(never)]
fn columns(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
    double_rounds: u32,
    spill: &mut Spill,
) -> u32 {
    each_pass(dest, counter, 8, |pass, _, ctr| {
        // SAFETY: `{key}` points at the 32 key bytes, `{nonce}` at the 3 nonce words, `{k}` at
        // the 32-byte aligned `CONST` (bytes 32..256 read), `{x}` at the 32-byte aligned 128
        // bytes of `spill`, read and written; `{out}` at `pass`, whose 512 bytes are written.
        // `{dr}` counts the loop down from `double_rounds >= 1`. Every register written is
        // declared; the stack is not touched; AVX2 is enabled for this function.
        unsafe {
            core::arch::asm!(
                "vmovdqa ymm3, ymmword ptr [{k} + 32]",
                "vmovdqa ymm2, ymmword ptr [{k} + 64]",
                "vmovdqa ymm0, ymmword ptr [{k} + 96]",
                "vmovdqa ymmword ptr [{x}], ymm0",
                "vmovdqa ymm0, ymmword ptr [{k} + 128]",
                "vmovdqa ymmword ptr [{x} + 32], ymm0",
                "vmovdqa ymm0, ymmword ptr [{k} + 160]",
                "vmovdqa ymmword ptr [{x} + 64], ymm0",
                "vmovdqa ymm0, ymmword ptr [{k} + 192]",
                "vmovdqa ymmword ptr [{x} + 96], ymm0",
                "vpbroadcastd ymm4, dword ptr [{key}]",
                "vpbroadcastd ymm5, dword ptr [{key} + 4]",
                "vpbroadcastd ymm6, dword ptr [{key} + 8]",
                "vpbroadcastd ymm7, dword ptr [{key} + 12]",
                "vpbroadcastd ymm8, dword ptr [{key} + 16]",
                "vpbroadcastd ymm9, dword ptr [{key} + 20]",
                "vpbroadcastd ymm10, dword ptr [{key} + 24]",
                "vpbroadcastd ymm11, dword ptr [{key} + 28]",
                "vmovd xmm12, {ctr:e}",
                "vpbroadcastd ymm12, xmm12",
                "vpaddd ymm12, ymm12, ymmword ptr [{k} + 224]",
                "vpbroadcastd ymm13, dword ptr [{nonce}]",
                "vpbroadcastd ymm14, dword ptr [{nonce} + 4]",
                "vpbroadcastd ymm15, dword ptr [{nonce} + 8]",
                "2:",
                column_quarter_rounds!((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15)),
                column_quarter_rounds!((0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)),
                "dec {dr:e}",
                "jnz 2b",
                // The feed-forward of words 4..15 (the key again from its memory).
                "vpbroadcastd ymm0, dword ptr [{key}]",
                "vpaddd ymm4, ymm4, ymm0",
                "vpbroadcastd ymm0, dword ptr [{key} + 4]",
                "vpaddd ymm5, ymm5, ymm0",
                "vpbroadcastd ymm0, dword ptr [{key} + 8]",
                "vpaddd ymm6, ymm6, ymm0",
                "vpbroadcastd ymm0, dword ptr [{key} + 12]",
                "vpaddd ymm7, ymm7, ymm0",
                "vpbroadcastd ymm0, dword ptr [{key} + 16]",
                "vpaddd ymm8, ymm8, ymm0",
                "vpbroadcastd ymm0, dword ptr [{key} + 20]",
                "vpaddd ymm9, ymm9, ymm0",
                "vpbroadcastd ymm0, dword ptr [{key} + 24]",
                "vpaddd ymm10, ymm10, ymm0",
                "vpbroadcastd ymm0, dword ptr [{key} + 28]",
                "vpaddd ymm11, ymm11, ymm0",
                "vmovd xmm0, {ctr:e}",
                "vpbroadcastd ymm0, xmm0",
                "vpaddd ymm0, ymm0, ymmword ptr [{k} + 224]",
                "vpaddd ymm12, ymm12, ymm0",
                "vpbroadcastd ymm0, dword ptr [{nonce}]",
                "vpaddd ymm13, ymm13, ymm0",
                "vpbroadcastd ymm0, dword ptr [{nonce} + 4]",
                "vpaddd ymm14, ymm14, ymm0",
                "vpbroadcastd ymm0, dword ptr [{nonce} + 8]",
                "vpaddd ymm15, ymm15, ymm0",
                // Words 8..15 into blocks' second halves: groups 2 and 3 transposed (into
                // ymm10, ymm11, ymm0, ymm8 and ymm14, ymm15, ymm9, ymm12), then stored.
                transpose4!(8, 9, 10, 11, 0, 1),
                transpose4!(12, 13, 14, 15, 9, 1),
                store_halves!(10, 14, 0, 32),
                store_halves!(11, 15, 1, 32),
                store_halves!(0, 9, 2, 32),
                store_halves!(8, 12, 3, 32),
                // Words 0..7 into the first halves: group 1 (into ymm6, ymm7, ymm0, ymm4);
                // words 0..3 from the spill frame plus the constants (into ymm8..ymm11,
                // transposed into ymm10, ymm11, ymm12, ymm8).
                transpose4!(4, 5, 6, 7, 0, 1),
                "vmovdqa ymm8, ymmword ptr [{x}]",
                "vpaddd ymm8, ymm8, ymmword ptr [{k} + 96]",
                "vmovdqa ymm9, ymmword ptr [{x} + 32]",
                "vpaddd ymm9, ymm9, ymmword ptr [{k} + 128]",
                "vmovdqa ymm10, ymmword ptr [{x} + 64]",
                "vpaddd ymm10, ymm10, ymmword ptr [{k} + 160]",
                "vmovdqa ymm11, ymmword ptr [{x} + 96]",
                "vpaddd ymm11, ymm11, ymmword ptr [{k} + 192]",
                transpose4!(8, 9, 10, 11, 12, 13),
                store_halves!(10, 6, 0, 0),
                store_halves!(11, 7, 1, 0),
                store_halves!(12, 0, 2, 0),
                store_halves!(8, 4, 3, 0),
                key = in(reg) key.as_ptr(),
                nonce = in(reg) nonce.as_ptr(),
                k = in(reg) core::ptr::from_ref(&CONST),
                x = in(reg) spill.0.as_mut_ptr(),
                out = in(reg) pass.as_mut_ptr(),
                ctr = in(reg) ctr,
                dr = inout(reg) double_rounds => _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
                options(nostack),
            );
        }
    })
}

/// The counter and nonce rows of three sets: set `s` holds blocks `counter + 2s` and
/// `counter + 2s + 1` (word 12 steps modulo 2^32, as RFC 8439's counter).
fn counter_rows(nonce: &Nonce, counter: u32) -> [[u32; 8]; 3] {
    core::array::from_fn(|s| {
        let c = counter.wrapping_add(2 * s as u32);
        [
            c,
            nonce[0],
            nonce[1],
            nonce[2],
            c.wrapping_add(1),
            nonce[0],
            nonce[1],
            nonce[2],
        ]
    })
}

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes), six per pass; a last
/// pass stores only the blocks `dest` has room for. Returns the counter after the last block.
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn blocks<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    passes(key, nonce, counter, dest, R::COUNT)
}

/// [`blocks`] with `double_rounds` (at least 1) as a value.
#[target_feature(enable = "avx2")]
#[inline(never)]
fn passes(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
    double_rounds: u32,
) -> u32 {
    debug_assert!(dest.len().is_multiple_of(BLOCK_LEN) && double_rounds >= 1);
    let mut ctr = counter;
    let mut rest = dest;
    let whole = rest.len() - rest.len() % (8 * BLOCK_LEN);
    if whole > 0 {
        let hint = scalrand_os::cpu::rseq_cpu().unwrap_or(0);
        // Whole eight-block passes on a spill frame (a closure inherits this function's
        // target features); without one, every pass runs below on registers alone.
        let done = SPILL.try_with(hint, |spill| {
            columns(key, nonce, ctr, &mut rest[..whole], double_rounds, spill)
        });
        if let Some(c) = done {
            ctr = c;
            rest = &mut rest[whole..];
        }
    }
    each_pass(rest, ctr, LANES, |blocks, n, ctr| {
        let rows = counter_rows(nonce, ctr);
        let out = blocks.as_mut_ptr();
        // One, two or three sets of registers: as many as the pass's blocks need (a set's
        // chain of dependent instructions, not the number of instructions, bounds a pass of
        // fewer than three).
        macro_rules! pass {
            ($($set:tt),+; $($store:tt),+) => {
                // SAFETY: `{key}` points at the 32 key bytes, `{k}` at the 32-byte aligned
                // `CONST` (96 bytes read), `{rows}` at `rows` (32 bytes read per set); `{out}`
                // at `blocks`, whose `64 * n` bytes the stores write (at most). `{dr}` counts the loop down from
                // `double_rounds >= 1`. Every register written is declared; the stack is not
                // touched; AVX2 is enabled for this function.
                unsafe {
                    core::arch::asm!(
                        pass_text!($($set),+; $($store),+),
                        key = in(reg) key.as_ptr(),
                        k = in(reg) core::ptr::from_ref(&CONST),
                        rows = in(reg) rows.as_ptr(),
                        out = in(reg) out,
                        n = in(reg) n,
                        dr = inout(reg) double_rounds => _,
                        out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                        out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                        out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                        out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
                        options(nostack),
                    );
                }
            };
        }
        match n {
            1 | 2 => pass!(
                (0, 1, 2, 3, 12, 0);
                (0, 1, 2, 3; 0, 64, 1, 2)
            ),
            3 | 4 => pass!(
                (0, 1, 2, 3, 12, 0),
                (4, 5, 6, 7, 15, 32);
                (0, 1, 2, 3; 0, 64, 1, 2),
                (4, 5, 6, 7; 128, 192, 3, 4)
            ),
            _ => pass!(
                (0, 1, 2, 3, 12, 0),
                (4, 5, 6, 7, 15, 32),
                (8, 9, 10, 11, 12, 64);
                (0, 1, 2, 3; 0, 64, 1, 2),
                (4, 5, 6, 7; 128, 192, 3, 4),
                (8, 9, 10, 11; 256, 320, 5, 6)
            ),
        }
    })
}
