//! The AVX2 backend: six ChaCha blocks per pass, two per register, in registers only.
//!
//! The "horizontal" layout of the SSE2 one-block code ([`super::sse2::block`]), twice as
//! wide: register `a` holds state words 0..3 of block `2s` in its low 128-bit half and of
//! block `2s + 1` in its high half, `b` words 4..7, `c` 8..11, `d` 12..15 (Linux's
//! `chacha_2block_xor_avx2` and `chacha_4block_xor_avx2`, `arch/x86/crypto/chacha-avx2-x86_64.S`,
//! use this layout for short inputs). A column round is four quarter rounds per block at once;
//! `vpshufd`, which works within each 128-bit half, turns the diagonals into columns and back.
//! Rotations by 16 and 8 are byte shuffles (`vpshufb`), by 12 and 7 two shifts and an OR.
//!
//! **Nothing is spilled.** Three such sets of four registers (six blocks) take `ymm0`–`ymm11`;
//! `ymm12` and `ymm15` are the rotations' scratch, `ymm13` and `ymm14` the byte-shuffle masks.
//! The feed-forward reloads the key from the caller's `key` (a broadcast of each 16-byte half)
//! instead of keeping a copy, and each block's four rows are stored straight into `dest` from
//! the registers (the low halves with `vmovdqu`, the high ones with `vextracti128`): no
//! transpose, so no temporaries. The whole pass is one `asm!` block, so the compiler never
//! holds a state word: a fork from another thread at any instruction of a pass finds no key
//! word, round state or unstored block in memory (`tests/stack_every_step.rs`). The only
//! memory a pass reads besides the key is public: the constants and the rows of counter and
//! nonce words, built on this function's frame. A last pass of one or two blocks runs one set
//! of registers, of three or four two sets, of five all three; a block past the request is
//! computed in registers and never stored. A signal delivered during a pass saves the registers in its
//! frame, which the section's end wipes (`erasure.rs`); the registers are cleared there too.
//!
//! The pass's function takes the round count as a value (its loop counter), so one copy
//! serves ChaCha8, ChaCha12 and ChaCha20.
//!
//! Every function here is `#[target_feature(enable = "avx2")]`; the one caller outside,
//! the dispatcher (`dispatch.rs`), holds the cached `cpufeatures` token that makes calling them sound.

use super::vocab::{BLOCK_LEN, CONSTANTS, DoubleRounds, KEY_LEN, Nonce};

/// Blocks per whole pass.
pub(super) const LANES: usize = 6;

/// Public constants a pass reads: "expand 32-byte k" in both halves, and the `vpshufb` masks
/// that rotate every 32-bit word left by 16 and by 8.
#[repr(C, align(32))]
struct Constants {
    sigma: [u32; 8],
    rot16: [u8; 32],
    rot8: [u8; 32],
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
};

/// One half of a double round (four quarter rounds per block, RFC 8439 §2.1, step by step)
/// on each set `(a, b, c, d, t, off)` of registers, `t` the set's scratch register (`off`:
/// see [`load`]), as assembly text.
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
    loop {
        let n = (rest.len() / BLOCK_LEN).min(LANES);
        if n == 0 {
            return ctr;
        }
        let rows = counter_rows(nonce, ctr);
        let out = rest.as_mut_ptr();
        // One, two or three sets of registers: as many as the pass's blocks need (a set's
        // chain of dependent instructions, not the number of instructions, bounds a pass of
        // fewer than three).
        macro_rules! pass {
            ($($set:tt),+; $($store:tt),+) => {
                // SAFETY: `{key}` points at the 32 key bytes, `{k}` at the 32-byte aligned
                // `CONST` (96 bytes read), `{rows}` at `rows` (32 bytes read per set); `{out}`
                // at `rest`, of which the stores write the first `64 * n` bytes
                // (`n <= rest.len() / 64`). `{dr}` counts the loop down from
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
        rest = &mut rest[n * BLOCK_LEN..];
        ctr = ctr.wrapping_add(n as u32);
    }
}
