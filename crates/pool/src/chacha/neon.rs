//! The NEON backend (aarch64): four ChaCha blocks per pass, one block per 32-bit lane.
//!
//! The block-per-lane layout of [`super::avx2`] on 128-bit registers, as in Linux's
//! `chacha_4block_xor_neon` (`arch/arm64/crypto/chacha-neon-core.S`): `x[i]` holds word `i` of
//! four consecutive blocks, so the rounds need no shuffles across lanes. The rotation by 16
//! is a halfword swap (`rev32`), by 8 a byte table lookup (`tbl`), by 12 and 7 a shift left
//! and a shift right with insert (`shl` + `sri`). After the feed-forward, a 4 × 4 transpose
//! per group of four words (`trn1`/`trn2` on 32- then 64-bit elements) gives each block's
//! words in order, stored straight into `dest`.
//!
//! aarch64 has 32 vector registers: the sixteen state words, the rotation table and the
//! temporaries fit, so little or nothing is spilled; the dispatcher still wipes the stack
//! after every call and clears every vector register (`erasure.rs`), including the
//! upper halves of `v8`–`v15`, which the procedure-call standard does not restore.
//!
//! NEON (Advanced SIMD) is part of the aarch64 baseline, so no run-time detection is needed.

use super::vocab::{BLOCK_LEN, DoubleRounds, KEY_LEN, Nonce};
use core::arch::aarch64::{
    uint32x4_t, vaddq_u32, vdupq_n_u32, veorq_u32, vld1q_u8, vld1q_u32, vqtbl1q_u8,
    vreinterpretq_u8_u32, vreinterpretq_u16_u32, vreinterpretq_u32_u8, vreinterpretq_u32_u16,
    vreinterpretq_u32_u64, vreinterpretq_u64_u32, vrev32q_u16, vshlq_n_u32, vsriq_n_u32,
    vtrn1q_u32, vtrn1q_u64, vtrn2q_u32, vtrn2q_u64,
};

/// Blocks per pass.
pub(super) const LANES: usize = 4;

/// Byte indices that rotate each 32-bit lane left by 8 (little-endian lanes).
const ROT8: [u8; 16] = [3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14];

#[inline(always)]
fn rotl16(x: uint32x4_t) -> uint32x4_t {
    // SAFETY: NEON is part of the aarch64 baseline; register-only operations.
    unsafe { vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(x))) }
}

#[inline(always)]
fn rotl8(x: uint32x4_t, table: core::arch::aarch64::uint8x16_t) -> uint32x4_t {
    // SAFETY: as in `rotl16`.
    unsafe { vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(x), table)) }
}

#[inline(always)]
fn rotl12(x: uint32x4_t) -> uint32x4_t {
    // SAFETY: as in `rotl16`.
    unsafe { vsriq_n_u32::<20>(vshlq_n_u32::<12>(x), x) }
}

#[inline(always)]
fn rotl7(x: uint32x4_t) -> uint32x4_t {
    // SAFETY: as in `rotl16`.
    unsafe { vsriq_n_u32::<25>(vshlq_n_u32::<7>(x), x) }
}

#[inline(always)]
fn add(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    // SAFETY: as in `rotl16`.
    unsafe { vaddq_u32(a, b) }
}

#[inline(always)]
fn xor(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
    // SAFETY: as in `rotl16`.
    unsafe { veorq_u32(a, b) }
}

/// Four independent quarter rounds on words `(a, b, c, d)` of `x`, step by step.
macro_rules! quarter_rounds {
    ($x:ident, $t8:ident; $(($a:literal, $b:literal, $c:literal, $d:literal)),+) => {
        $( $x[$a] = add($x[$a], $x[$b]); )+
        $( $x[$d] = rotl16(xor($x[$d], $x[$a])); )+
        $( $x[$c] = add($x[$c], $x[$d]); )+
        $( $x[$b] = rotl12(xor($x[$b], $x[$c])); )+
        $( $x[$a] = add($x[$a], $x[$b]); )+
        $( $x[$d] = rotl8(xor($x[$d], $x[$a]), $t8); )+
        $( $x[$c] = add($x[$c], $x[$d]); )+
        $( $x[$b] = rotl7(xor($x[$b], $x[$c])); )+
    };
}

/// Whole blocks from `counter` into `dest` (a multiple of 64 bytes), four per pass; a last
/// pass stores only the blocks `dest` has room for. Returns the counter after the last block.
#[inline(never)]
pub(super) fn blocks<R: DoubleRounds>(
    key: &[u8; KEY_LEN],
    nonce: &Nonce,
    counter: u32,
    dest: &mut [u8],
) -> u32 {
    let words = super::vocab::state_words(key, nonce, 0);
    // SAFETY: NEON is part of the aarch64 baseline; `vld1q_*` read 16 bytes from arrays of
    // exactly that size.
    let (input, t8, lanes) = unsafe {
        let input: [uint32x4_t; 16] = core::array::from_fn(|i| vdupq_n_u32(words[i]));
        (
            input,
            vld1q_u8(ROT8.as_ptr()),
            vld1q_u32([0u32, 1, 2, 3].as_ptr()),
        )
    };
    let mut ctr = counter;
    for pass in dest.chunks_mut(LANES * BLOCK_LEN) {
        let mut start = input;
        // SAFETY: as above.
        start[12] = add(unsafe { vdupq_n_u32(ctr) }, lanes);
        let mut x = start;
        for _ in 0..R::COUNT {
            quarter_rounds!(x, t8; (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15));
            quarter_rounds!(x, t8; (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14));
        }
        for (v, s) in x.iter_mut().zip(start.iter()) {
            *v = add(*v, *s);
        }
        for g in 0..4 {
            let (r0, r1, r2, r3) = (x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]);
            // SAFETY: as above; register-only permutes.
            let rows = unsafe {
                let t0 = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1));
                let t1 = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
                let t2 = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3));
                let t3 = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
                [
                    vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)),
                    vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)),
                    vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)),
                    vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)),
                ]
            };
            // Block j: words 4g..4g+4 in `rows[j]`.
            for (j, row) in rows.into_iter().enumerate() {
                let at = j * BLOCK_LEN + 16 * g;
                if let Some(o) = pass.get_mut(at..at + 16) {
                    o.copy_from_slice(&to_bytes(row));
                }
            }
        }
        ctr = ctr.wrapping_add((pass.len() / BLOCK_LEN) as u32);
    }
    ctr
}

#[inline(always)]
fn to_bytes(v: uint32x4_t) -> [u8; 16] {
    // SAFETY: `uint32x4_t` is 16 bytes of plain integer data with no padding and no invalid
    // bit patterns, and so is `[u8; 16]`; lane 0's word comes first, little-endian on the
    // little-endian aarch64 targets this backend is built for (RFC 8439's serialisation).
    unsafe { core::mem::transmute::<uint32x4_t, [u8; 16]>(v) }
}
