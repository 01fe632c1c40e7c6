//! The AVX-512F backend: 16 ChaCha blocks per pass, one block per 32-bit lane.
//!
//! The block-per-lane ("vertical") layout long used for Salsa20 and ChaCha on wide SIMD units
//! (e.g. M. Goll and S. Gueron, "Vectorization on ChaCha stream cipher", ITNG 2014): zmm
//! register `x[i]` holds state word `i` of 16 consecutive blocks, so a quarter round on four
//! registers runs the same quarter round in all 16 blocks, with no shuffles inside the rounds
//! (AVX-512F's `vprold` rotates in one instruction). Lane `j` of `x[12]` is `counter + j`
//! (mod 2^32); words 13..15 are the nonce (RFC 8439 §2.3 layout). After the rounds and the
//! feed-forward a 16 × 16 transpose of 32-bit words turns the word-major registers into 16
//! block-major ones, each stored as one 64-byte block (x86 is little-endian: the bytes are
//! RFC 8439's serialisation). The dispatcher hands a tail of at most 4 blocks to the AVX2 or
//! SSE2 backend, which is cheaper there.
//!
//! Every function here is `#[target_feature(enable = "avx512f")]`; the one caller outside,
//! the dispatcher (`dispatch.rs`), holds the cached `cpufeatures` token that makes calling them sound.

use super::vocab::{BLOCK_LEN, CONSTANTS, DoubleRounds, KEY_LEN, Nonce};
use core::arch::x86_64::{
    __m512i, _mm512_add_epi32, _mm512_cmpgt_epi32_mask, _mm512_mask_xor_epi32, _mm512_rol_epi32, _mm512_set1_epi32, _mm512_setr_epi32,
    _mm512_shuffle_i32x4, _mm512_unpackhi_epi32, _mm512_unpackhi_epi64, _mm512_unpacklo_epi32,
    _mm512_unpacklo_epi64, _mm512_xor_si512,
};

/// Key word `w` (0..8) of `key` broadcast to all 16 lanes, loaded from the key's memory by an
/// assembly `vpbroadcastd` that the compiler can neither drop nor merge with another: [`pass`]
/// asks again for the feed-forward instead of keeping copies of the key words across the
/// rounds, which the compiler would keep in stack slots (where a child forked from another
/// thread, or a signal frame, would find them). The key's memory is the caller's: a
/// wipe-on-fork frame or the pools' own.
#[target_feature(enable = "avx512f")]
#[inline]
fn key_word(key: &[u8; KEY_LEN], w: usize) -> __m512i {
    let v: __m512i;
    // SAFETY: a 4-byte load from bytes `4 w .. 4 w + 4` of the 32-byte key (`w < 8`, as every
    // caller passes); x86 loads need no alignment. Not `pure`: each call loads again.
    unsafe {
        core::arch::asm!(
            "vpbroadcastd {v}, dword ptr [{p}]",
            v = out(zmm_reg) v,
            p = in(reg) key.as_ptr().add(4 * (w & 7)),
            options(readonly, nostack, preserves_flags),
        );
    }
    v
}

/// Blocks per pass: one per 32-bit lane of a zmm register.
const LANES: usize = 16;

/// Bytes per pass (16 blocks, 1 KiB: half a slot batch).
const PASS_LEN: usize = LANES * BLOCK_LEN;

/// The 16 state words of RFC 8439 §2.3, one register each, for 16 blocks.
type Words = [__m512i; 16];

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes), 16 per pass; a last pass
/// stores only the blocks `dest` has room for. Returns the counter after the last block.
///
/// The work is [`passes`], never inlined, so that the dispatcher's stack wipe covers its
/// frames.
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) fn blocks<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    passes(key, nonce, counter, dest, R::COUNT)
}

/// [`blocks`] with the round count as a value: one copy of the round loop for every round
/// count, not one per count.
#[target_feature(enable = "avx512f")]
#[inline(never)]
fn passes(key: &[u8; KEY_LEN], nonce: &Nonce, counter: u32, dest: &mut [u8], double_rounds: u32) -> u32 {
    let mut ctr = counter;
    for pass_out in dest.chunks_mut(PASS_LEN) {
        pass(key, nonce, ctr, pass_out, double_rounds);
        ctr = ctr.wrapping_add((pass_out.len() / BLOCK_LEN) as u32);
    }
    ctr
}

/// Four independent quarter rounds (RFC 8439 §2.1) on words `(a, b, c, d)` of `x`,
/// interleaved step by step so that each step is four independent instructions. A macro, not
/// a function: a `#[target_feature]` function cannot be `#[inline(always)]`, and an outlined
/// call would index `x` from memory with run-time word numbers.
macro_rules! quarter_rounds {
    ($x:ident; $(($a:literal, $b:literal, $c:literal, $d:literal)),+) => {
        $( $x[$a] = _mm512_add_epi32($x[$a], $x[$b]); )+
        $( $x[$d] = _mm512_rol_epi32::<16>(_mm512_xor_si512($x[$d], $x[$a])); )+
        $( $x[$c] = _mm512_add_epi32($x[$c], $x[$d]); )+
        $( $x[$b] = _mm512_rol_epi32::<12>(_mm512_xor_si512($x[$b], $x[$c])); )+
        $( $x[$a] = _mm512_add_epi32($x[$a], $x[$b]); )+
        $( $x[$d] = _mm512_rol_epi32::<8>(_mm512_xor_si512($x[$d], $x[$a])); )+
        $( $x[$c] = _mm512_add_epi32($x[$c], $x[$d]); )+
        $( $x[$b] = _mm512_rol_epi32::<7>(_mm512_xor_si512($x[$b], $x[$c])); )+
    };
}

/// 16 blocks from block `ctr` (rounds, feed-forward, transpose) into `dest`: block `ctr + j`
/// at offset `64 j` for every whole block `dest` (at most 1 KiB) has room for, each stored
/// straight from its register.
#[target_feature(enable = "avx512f")]
#[inline]
fn pass(key: &[u8; KEY_LEN], nonce: &Nonce, ctr: u32, dest: &mut [u8], double_rounds: u32) {
    let c = |i: usize| _mm512_set1_epi32(CONSTANTS[i].cast_signed());
    let counters = _mm512_add_epi32(
        _mm512_set1_epi32(ctr.cast_signed()),
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    );
    // Lanes past the blocks this pass stores compute blocks 2^63 further on, not the ones
    // after the request (see `avx2::poison_unstored`).
    let past = _mm512_cmpgt_epi32_mask(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((dest.len() / BLOCK_LEN) as i32 - 1),
    );
    let n13 = _mm512_set1_epi32(nonce[0].cast_signed());
    let n13 = _mm512_mask_xor_epi32(n13, past, n13, _mm512_set1_epi32(i32::MIN));
    let n14 = _mm512_set1_epi32(nonce[1].cast_signed());
    let n15 = _mm512_set1_epi32(nonce[2].cast_signed());
    // The key words come from the key's memory, here and again for the feed-forward: no copy
    // of the key is kept across the rounds (see `key_word`).
    let mut x: Words = [
        c(0),
        c(1),
        c(2),
        c(3),
        key_word(key, 0),
        key_word(key, 1),
        key_word(key, 2),
        key_word(key, 3),
        key_word(key, 4),
        key_word(key, 5),
        key_word(key, 6),
        key_word(key, 7),
        counters,
        n13,
        n14,
        n15,
    ];
    for _ in 0..double_rounds {
        // RFC 8439 §2.3: column round, then diagonal round.
        quarter_rounds!(x; (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15));
        quarter_rounds!(x; (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14));
    }
    for (i, v) in x.iter_mut().enumerate() {
        let input = match i {
            0..4 => c(i),
            4..12 => key_word(key, i - 4),
            12 => counters,
            13 => n13,
            14 => n14,
            _ => n15,
        };
        *v = _mm512_add_epi32(*v, input);
    }
    let out = transpose(&x);
    for (j, &v) in out.iter().enumerate() {
        if let Some(block) = dest.get_mut(j * BLOCK_LEN..(j + 1) * BLOCK_LEN) {
            block.copy_from_slice(&to_bytes(v));
        }
    }
}

/// Transposes 16 word-major registers (`x[w]` lane `j` = word `w` of block `j`) into 16
/// block-major ones (`out[j]` lane `w` = the same word).
///
/// Three steps on the 4 × 4 grid of 128-bit lanes: within each group of four words, 32-bit
/// and 64-bit unpacks gather words `4g..4g+4` of blocks `4k + m` into 128-bit lane `k` of
/// `a[g][m]`; two rounds of `vshufi32x4` then transpose the 128-bit lanes across the four
/// groups, so `out[4k + m]` is `a[0][m].lane(k) ‖ a[1][m].lane(k) ‖ a[2][m].lane(k) ‖
/// a[3][m].lane(k)`.
#[target_feature(enable = "avx512f")]
#[inline]
fn transpose(x: &Words) -> Words {
    let zero = _mm512_set1_epi32(0);
    let mut a = [[zero; 4]; 4];
    for (g, ag) in a.iter_mut().enumerate() {
        let (r0, r1, r2, r3) = (x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]);
        // Per 128-bit lane k: [r0[4k], r1[4k], r0[4k+1], r1[4k+1]] and the +2/+3 half.
        let lo01 = _mm512_unpacklo_epi32(r0, r1);
        let hi01 = _mm512_unpackhi_epi32(r0, r1);
        let lo23 = _mm512_unpacklo_epi32(r2, r3);
        let hi23 = _mm512_unpackhi_epi32(r2, r3);
        // Per 128-bit lane k: [r0[4k+m], r1[4k+m], r2[4k+m], r3[4k+m]].
        ag[0] = _mm512_unpacklo_epi64(lo01, lo23);
        ag[1] = _mm512_unpackhi_epi64(lo01, lo23);
        ag[2] = _mm512_unpacklo_epi64(hi01, hi23);
        ag[3] = _mm512_unpackhi_epi64(hi01, hi23);
    }
    let mut out = [zero; 16];
    for m in 0..4 {
        // Lanes (0, 2) and (1, 3) of two groups, then of the pairs: a 4 × 4 lane transpose.
        const EVEN: i32 = 0b10_00_10_00;
        const ODD: i32 = 0b11_01_11_01;
        let x0 = _mm512_shuffle_i32x4::<EVEN>(a[0][m], a[1][m]);
        let x1 = _mm512_shuffle_i32x4::<ODD>(a[0][m], a[1][m]);
        let y0 = _mm512_shuffle_i32x4::<EVEN>(a[2][m], a[3][m]);
        let y1 = _mm512_shuffle_i32x4::<ODD>(a[2][m], a[3][m]);
        out[m] = _mm512_shuffle_i32x4::<EVEN>(x0, y0);
        out[4 + m] = _mm512_shuffle_i32x4::<EVEN>(x1, y1);
        out[8 + m] = _mm512_shuffle_i32x4::<ODD>(x0, y0);
        out[12 + m] = _mm512_shuffle_i32x4::<ODD>(x1, y1);
    }
    out
}

/// The register's 64 bytes in memory order (lane 0's little-endian word first).
#[target_feature(enable = "avx512f")]
#[inline]
fn to_bytes(v: __m512i) -> [u8; BLOCK_LEN] {
    // SAFETY: `__m512i` is 64 bytes of plain integer data with no padding and no invalid bit
    // patterns, and so is `[u8; 64]`; a by-value transmute between them reads nothing out of
    // bounds (it compiles to one vector store). `core::arch` offers no safe conversion: the
    // store intrinsics take raw pointers.
    unsafe { core::mem::transmute::<__m512i, [u8; BLOCK_LEN]>(v) }
}
