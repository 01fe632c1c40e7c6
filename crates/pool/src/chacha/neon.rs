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
//! temporaries fit. The key words are loaded from the key's memory for the initial state
//! (`key_word`) and again inside the feed-forward's additions (`plus_key_word`), never kept as
//! copies the compiler could spill:
//! no key word is left in this function's frame (`tests/backend_frames.rs`, run under
//! qemu-user). The dispatcher still wipes the stack after every call and clears every vector
//! register (`erasure.rs`), including the upper halves of `v8`–`v15`, which the
//! procedure-call standard does not restore.
//!
//! NEON (Advanced SIMD) is part of the aarch64 baseline, so no run-time detection is needed.

use super::vocab::{BLOCK_LEN, CONSTANTS, DoubleRounds, KEY_LEN, Nonce, each_pass};
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
    // SAFETY: NEON is part of the aarch64 baseline; `vld1q_*` read 16 bytes from arrays of
    // exactly that size.
    let (t8, lanes) = unsafe { (vld1q_u8(ROT8.as_ptr()), vld1q_u32([0u32, 1, 2, 3].as_ptr())) };
    let dup = |w: u32| {
        // SAFETY: as above, register-only.
        unsafe { vdupq_n_u32(w) }
    };
    // The state's public words (constants, counter, nonce) from values; the key words from
    // the key's memory, here and again for the feed-forward (`key_word`): no copy of the key
    // is kept across the rounds, which the compiler could spill to this frame.
    let public = |i: usize, counters: uint32x4_t| match i {
        0..4 => dup(CONSTANTS[i]),
        12 => counters,
        _ => dup(nonce[(i - 13) & 3]),
    };
    each_pass(dest, counter, LANES, |pass, _, ctr| {
        let counters = add(dup(ctr), lanes);
        let mut x: [uint32x4_t; 16] = core::array::from_fn(|i| match i {
            4..12 => key_word(key, i - 4),
            _ => public(i, counters),
        });
        for _ in 0..R::COUNT {
            quarter_rounds!(x, t8; (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15));
            quarter_rounds!(x, t8; (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14));
        }
        // The counters again from the counter (public: through memory if the compiler likes),
        // so that nothing but the state and the rotation table is live across the rounds.
        let counters = add(dup(core::hint::black_box(ctr)), lanes);
        for (i, v) in x.iter_mut().enumerate() {
            *v = match i {
                4..12 => plus_key_word(*v, key, i - 4),
                _ => add(*v, public(i, counters)),
            };
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
    })
}

/// Key word `w` (0..8) of `key` in all four lanes, loaded from the key's memory by an assembly
/// `ld1r` that the compiler can neither drop nor merge with another: the feed-forward asks
/// again instead of keeping copies of the key words across the rounds (as the AVX-512
/// backend's `key_word`).
#[inline(always)]
fn key_word(key: &[u8; KEY_LEN], w: usize) -> uint32x4_t {
    let v: uint32x4_t;
    // SAFETY: a 4-byte load from bytes `4 w .. 4 w + 4` of the 32-byte key (`w & 7 < 8`);
    // NEON is part of the aarch64 baseline. Not `pure`: each call loads again.
    unsafe {
        core::arch::asm!(
            "ld1r {{{v:v}.4s}}, [{p}]",
            v = out(vreg) v,
            p = in(reg) key.as_ptr().add(4 * (w & 7)),
            options(readonly, nostack, preserves_flags),
        );
    }
    v
}

/// `v` plus key word `w` (0..8) of `key` in every lane: the word loaded (`ld1r`) into a
/// register of the assembly block's own and added there, so that it is never a value the
/// compiler holds (and could spill while the transpose that follows needs registers).
#[inline(always)]
fn plus_key_word(v: uint32x4_t, key: &[u8; KEY_LEN], w: usize) -> uint32x4_t {
    let out: uint32x4_t;
    // SAFETY: as in `key_word`; `t` is a scratch register of this block, zeroed before it ends.
    unsafe {
        core::arch::asm!(
            "ld1r {{{t:v}.4s}}, [{p}]",
            "add {o:v}.4s, {o:v}.4s, {t:v}.4s",
            "movi {t:v}.16b, #0",
            o = inout(vreg) v => out,
            t = out(vreg) _,
            p = in(reg) key.as_ptr().add(4 * (w & 7)),
            options(readonly, nostack, preserves_flags),
        );
    }
    out
}

#[inline(always)]
fn to_bytes(v: uint32x4_t) -> [u8; 16] {
    // SAFETY: `uint32x4_t` is 16 bytes of plain integer data with no padding and no invalid
    // bit patterns, and so is `[u8; 16]`; lane 0's word comes first, little-endian on the
    // little-endian aarch64 targets this backend is built for (RFC 8439's serialisation).
    unsafe { core::mem::transmute::<uint32x4_t, [u8; 16]>(v) }
}
