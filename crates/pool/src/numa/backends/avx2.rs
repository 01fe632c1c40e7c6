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
//! Sixteen state registers plus temporaries do not fit in sixteen `ymm` registers, so the
//! compiler spills a few to this function's frame; the dispatcher wipes that stack depth
//! after every call and clears the vector registers (`vzeroall`).
//!
//! Every function here is `#[target_feature(enable = "avx2")]`; the one caller outside,
//! `super::bulk`, holds the cached `cpufeatures` token that makes calling them sound.

use super::super::chacha::{BLOCK_LEN, KEY_LEN};
use super::Nonce;
use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_or_si256, _mm256_permute2x128_si256, _mm256_set1_epi32,
    _mm256_setr_epi8, _mm256_setr_epi32, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
    _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi32, _mm256_unpacklo_epi64,
    _mm256_xor_si256,
};

/// Blocks per pass.
pub(super) const LANES: usize = 8;

#[target_feature(enable = "avx2")]
#[inline]
fn rotl<const L: i32, const R: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<L>(x), _mm256_srli_epi32::<R>(x))
}

#[target_feature(enable = "avx2")]
#[inline]
fn to_bytes(v: __m256i) -> [u8; 32] {
    // SAFETY: `__m256i` is 32 bytes of plain integer data with no padding and no invalid bit
    // patterns, and so is `[u8; 32]`; a by-value transmute compiles to one store. Lane 0's
    // little-endian word comes first, which is RFC 8439's serialisation on x86.
    unsafe { core::mem::transmute::<__m256i, [u8; 32]>(v) }
}

/// Four independent quarter rounds on words `(a, b, c, d)` of `x`, step by step; `$r16` and
/// `$r8` are the byte-shuffle masks of the rotations by 16 and 8.
macro_rules! quarter_rounds {
    ($x:ident, $r16:ident, $r8:ident; $(($a:literal, $b:literal, $c:literal, $d:literal)),+) => {
        $( $x[$a] = _mm256_add_epi32($x[$a], $x[$b]); )+
        $( $x[$d] = _mm256_shuffle_epi8(_mm256_xor_si256($x[$d], $x[$a]), $r16); )+
        $( $x[$c] = _mm256_add_epi32($x[$c], $x[$d]); )+
        $( $x[$b] = rotl::<12, 20>(_mm256_xor_si256($x[$b], $x[$c])); )+
        $( $x[$a] = _mm256_add_epi32($x[$a], $x[$b]); )+
        $( $x[$d] = _mm256_shuffle_epi8(_mm256_xor_si256($x[$d], $x[$a]), $r8); )+
        $( $x[$c] = _mm256_add_epi32($x[$c], $x[$d]); )+
        $( $x[$b] = rotl::<7, 25>(_mm256_xor_si256($x[$b], $x[$c])); )+
    };
}

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes), eight per pass; a last
/// pass stores only the blocks `dest` has room for. Returns the counter after the last block.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(super) fn blocks(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    double_rounds: u32,
    dest: &mut [u8],
) -> u32 {
    match double_rounds {
        4 => blocks_dr::<4>(key, nonce, counter, dest),
        6 => blocks_dr::<6>(key, nonce, counter, dest),
        _ => blocks_dr::<10>(key, nonce, counter, dest),
    }
}

#[target_feature(enable = "avx2")]
#[inline]
fn blocks_dr<const DOUBLE_ROUNDS: usize>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    let words = super::state_words(key, nonce, 0);
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
        let mut x = start;
        for _ in 0..DOUBLE_ROUNDS {
            quarter_rounds!(x, r16, r8; (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15));
            quarter_rounds!(x, r16, r8; (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14));
        }
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
