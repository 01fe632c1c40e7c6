//! The AVX2 backend: eight ChaCha blocks per pass, one block per 32-bit lane.
//!
//! The block-per-lane layout of [`super::avx512`] on 256-bit registers (as in Linux's
//! `chacha_8block_xor_avx2`, `arch/x86/crypto/chacha-avx2-x86_64.S`): `x[i]` holds word `i`
//! of eight consecutive blocks, so the rounds need no shuffles across lanes. Rotations by 16
//! and 8 are byte shuffles (`vpshufb`), by 12 and 7 two shifts and an OR. After the
//! feed-forward, a 4 × 4 transpose inside each 128-bit half (32- and 64-bit unpacks) and one
//! `vperm2i128` per pair of groups give each block's words 0..7 and 8..15 as two registers,
//! stored straight into `dest`.
//!
//! Sixteen state registers plus temporaries do not fit in sixteen `ymm` registers: the round
//! loop is assembly that keeps words 0..3 in the state array on this function's frame and the
//! rest in registers ([`rounds`]); the dispatcher wipes that stack depth after every call and
//! clears the vector registers (`vzeroall`).
//!
//! Every function here is `#[target_feature(enable = "avx2")]`; the one caller outside,
//! the dispatcher (`dispatch.rs`), holds the cached `cpufeatures` token that makes calling them sound.

use super::vocab::{BLOCK_LEN, DoubleRounds, KEY_LEN, Nonce};
use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_cmpgt_epi32, _mm256_permute2x128_si256, _mm256_xor_si256, _mm256_set1_epi32, _mm256_setr_epi8,
    _mm256_setr_epi32, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi32,
    _mm256_unpacklo_epi64,
};

/// Blocks per pass.
pub(super) const LANES: usize = 8;

/// Word 13 (the nonce's first word) with its top bit flipped in the lanes at or past `n`, the
/// blocks a last partial pass computes but does not store. Those lanes would otherwise compute
/// the blocks that follow the request (a caller's next key, in Fortuna) and leave them in the
/// spill slots of the transpose; flipped, they compute blocks 2^63 further on, which no
/// caller reaches. Lanes below `n` are untouched.
#[target_feature(enable = "avx2")]
#[inline]
fn poison_unstored(word13: __m256i, lanes: __m256i, n: usize) -> __m256i {
    let past = _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(n as i32 - 1));
    _mm256_xor_si256(word13, _mm256_and_si256(past, _mm256_set1_epi32(i32::MIN)))
}

#[target_feature(enable = "avx2")]
#[inline]
fn to_bytes(v: __m256i) -> [u8; 32] {
    // SAFETY: `__m256i` is 32 bytes of plain integer data with no padding and no invalid bit
    // patterns, and so is `[u8; 32]`; a by-value transmute compiles to one store. Lane 0's
    // little-endian word comes first, which is RFC 8439's serialisation on x86.
    unsafe { core::mem::transmute::<__m256i, [u8; 32]>(v) }
}

/// One step of four independent quarter rounds, as assembly text: `a += b; d ^= a; d <<<= 16`
/// (or 8: `$rot` names the byte-shuffle mask's register) for each `(a, b, c, d)`. Words 0..3
/// (`a` in every quarter round) live in the state array at `{x}`, words 4..15 in `ymm4` to
/// `ymm15`; `ymm0` is the scratch register.
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

/// Four quarter rounds, step by step (RFC 8439 section 2.1), on the register layout of
/// [`add_xor_shuffle`]; `ymm3` holds the rotate-by-16 mask, `ymm2` the rotate-by-8 one.
macro_rules! quarter_rounds {
    ($($q:tt),+) => {
        concat!(
            add_xor_shuffle!(3; $($q),+),
            add_xor_rotate!(12, 20; $($q),+),
            add_xor_shuffle!(2; $($q),+),
            add_xor_rotate!(7, 25; $($q),+),
        )
    };
}

/// `double_rounds` ChaCha double rounds on `x` (word `i` of eight blocks in `x[i]`), in place.
///
/// Register allocation as in Linux's eight-block AVX2 ChaCha (commit 3d1e93cdf16c "crypto:
/// chacha20 - Add an eight block AVX2 variant for x86_64", `chacha20-avx2-x86_64.S`, now
/// `arch/x86/crypto/chacha-avx2-x86_64.S`): twelve words stay in registers for the whole
/// loop, words 0..3 in memory (here `x` itself: each step's first add reads one and stores it
/// back), which leaves a scratch register and the two rotation masks. The compiler, given the
/// sixteen words as values, spilled and reloaded them all over the loop instead. `x` is in
/// the caller's frame, which the dispatcher's stack wipe covers.
#[target_feature(enable = "avx2")]
#[inline]
fn rounds(x: &mut [__m256i; 16], double_rounds: u32, r16: &__m256i, r8: &__m256i) {
    // SAFETY: `x` is 16 aligned `__m256i` (512 bytes, read and written at offsets 0..512),
    // `r16` and `r8` one aligned `__m256i` each; the loop runs `double_rounds >= 1` times
    // (every caller passes 4, 6 or 10); every register the text writes is declared clobbered;
    // AVX2 is enabled for this function.
    unsafe {
        core::arch::asm!(
            "vmovdqa ymm3, ymmword ptr [{r16}]",
            "vmovdqa ymm2, ymmword ptr [{r8}]",
            "vmovdqa ymm4, ymmword ptr [{x} + 32*4]",
            "vmovdqa ymm5, ymmword ptr [{x} + 32*5]",
            "vmovdqa ymm6, ymmword ptr [{x} + 32*6]",
            "vmovdqa ymm7, ymmword ptr [{x} + 32*7]",
            "vmovdqa ymm8, ymmword ptr [{x} + 32*8]",
            "vmovdqa ymm9, ymmword ptr [{x} + 32*9]",
            "vmovdqa ymm10, ymmword ptr [{x} + 32*10]",
            "vmovdqa ymm11, ymmword ptr [{x} + 32*11]",
            "vmovdqa ymm12, ymmword ptr [{x} + 32*12]",
            "vmovdqa ymm13, ymmword ptr [{x} + 32*13]",
            "vmovdqa ymm14, ymmword ptr [{x} + 32*14]",
            "vmovdqa ymm15, ymmword ptr [{x} + 32*15]",
            "2:",
            quarter_rounds!((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15)),
            quarter_rounds!((0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)),
            "dec {n:e}",
            "jnz 2b",
            "vmovdqa ymmword ptr [{x} + 32*4], ymm4",
            "vmovdqa ymmword ptr [{x} + 32*5], ymm5",
            "vmovdqa ymmword ptr [{x} + 32*6], ymm6",
            "vmovdqa ymmword ptr [{x} + 32*7], ymm7",
            "vmovdqa ymmword ptr [{x} + 32*8], ymm8",
            "vmovdqa ymmword ptr [{x} + 32*9], ymm9",
            "vmovdqa ymmword ptr [{x} + 32*10], ymm10",
            "vmovdqa ymmword ptr [{x} + 32*11], ymm11",
            "vmovdqa ymmword ptr [{x} + 32*12], ymm12",
            "vmovdqa ymmword ptr [{x} + 32*13], ymm13",
            "vmovdqa ymmword ptr [{x} + 32*14], ymm14",
            "vmovdqa ymmword ptr [{x} + 32*15], ymm15",
            x = in(reg) x.as_mut_ptr(),
            r16 = in(reg) core::ptr::from_ref(r16),
            r8 = in(reg) core::ptr::from_ref(r8),
            n = inout(reg) double_rounds => _,
            out("ymm0") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack),
        );
    }
}

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes), eight per pass; a last
/// pass stores only the blocks `dest` has room for. Returns the counter after the last block.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(super) fn blocks<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    let words = super::vocab::state_words(key, nonce, 0);
    let input: [__m256i; 16] = core::array::from_fn(|i| _mm256_set1_epi32(words[i].cast_signed()));
    #[rustfmt::skip]
    let r16 = _mm256_setr_epi8(
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    );
    #[rustfmt::skip]
    let r8 = _mm256_setr_epi8(
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    );
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let mut ctr = counter;
    for pass in dest.chunks_mut(LANES * BLOCK_LEN) {
        let mut start = input;
        start[12] = _mm256_add_epi32(_mm256_set1_epi32(ctr.cast_signed()), lanes);
        start[13] = poison_unstored(input[13], lanes, pass.len() / BLOCK_LEN);
        let mut x = start;
        rounds(&mut x, R::COUNT, &r16, &r8);
        for (v, s) in x.iter_mut().zip(start.iter()) {
            *v = _mm256_add_epi32(*v, *s);
        }
        // a[g][m], 128-bit half h: words 4g..4g+4 of block 4h + m.
        let zero = _mm256_set1_epi32(0);
        let mut a = [[zero; 4]; 4];
        for (g, ag) in a.iter_mut().enumerate() {
            let (r0, r1, r2, r3) = (x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]);
            let t0 = _mm256_unpacklo_epi32(r0, r1);
            let t1 = _mm256_unpackhi_epi32(r0, r1);
            let t2 = _mm256_unpacklo_epi32(r2, r3);
            let t3 = _mm256_unpackhi_epi32(r2, r3);
            ag[0] = _mm256_unpacklo_epi64(t0, t2);
            ag[1] = _mm256_unpackhi_epi64(t0, t2);
            ag[2] = _mm256_unpacklo_epi64(t1, t3);
            ag[3] = _mm256_unpackhi_epi64(t1, t3);
        }
        // `m` picks a register in four groups at once; an iterator would hide that.
        #[allow(clippy::needless_range_loop)]
        for m in 0..4 {
            // Block m: low halves of groups (0, 1) then (2, 3); block 4 + m: the high halves.
            let halves = [
                (m, 0, _mm256_permute2x128_si256::<0x20>(a[0][m], a[1][m])),
                (m, 32, _mm256_permute2x128_si256::<0x20>(a[2][m], a[3][m])),
                (
                    4 + m,
                    0,
                    _mm256_permute2x128_si256::<0x31>(a[0][m], a[1][m]),
                ),
                (
                    4 + m,
                    32,
                    _mm256_permute2x128_si256::<0x31>(a[2][m], a[3][m]),
                ),
            ];
            for (j, off, v) in halves {
                let at = j * BLOCK_LEN + off;
                if let Some(o) = pass.get_mut(at..at + 32) {
                    o.copy_from_slice(&to_bytes(v));
                }
            }
        }
        ctr = ctr.wrapping_add((pass.len() / BLOCK_LEN) as u32);
    }
    ctr
}
