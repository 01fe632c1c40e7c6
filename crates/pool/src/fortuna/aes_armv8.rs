//! AES-256 with the ARMv8 Cryptography Extension (`AESE`, `AESMC`), keyed in place as the
//! AES-NI code is: the key expansion writes each round key straight into the caller's memory
//! (a reader's frame of wipe-on-fork memory), and counter mode reads the round keys from
//! there with one volatile load per round per eight blocks, keeping the blocks in vector
//! registers (32 of them: eight blocks and a round key fit many times over), so no copy of
//! the key schedule or of a block is made in a stack frame.
//!
//! `AESE` is AddRoundKey, ShiftRows and SubBytes in that order and `AESMC` is MixColumns, so
//! a round of FIPS-197 §5.1 begins where an `AESE` does: thirteen `AESE`+`AESMC` pairs on
//! round keys 0..12, an `AESE` on round key 13 and an XOR with round key 14 (Arm
//! Architecture Reference Manual, "AESE", "AESMC"). The expansion is FIPS-197 §5.2 on
//! 32-bit words in general registers; SubWord is an `AESE` with a zero key on the word
//! repeated in all four columns (ShiftRows then moves nothing: the columns are equal). The
//! known-answer tests below hold both against the `aes` crate and FIPS-197 appendix C.3 (run
//! under qemu-user in CI, whose `max` CPU has the extension).

use core::arch::aarch64::{
    uint8x16_t, vaeseq_u8, vaesmcq_u8, vcombine_u64, vcreate_u64, vdupq_n_u8, vdupq_n_u32,
    veorq_u8, vgetq_lane_u32, vgetq_lane_u64, vreinterpretq_u8_u32, vreinterpretq_u8_u64,
    vreinterpretq_u32_u8, vreinterpretq_u64_u8, vst1q_u8,
};

/// Fifteen round keys.
pub(super) type RoundKeys = [[u8; 16]; 15];

/// SubWord (FIPS-197 §5.2): the S-box on each byte of `w`.
#[target_feature(enable = "aes")]
#[inline]
fn sub_word(w: u32) -> u32 {
    let s = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(w)), vdupq_n_u8(0));
    vgetq_lane_u32::<0>(vreinterpretq_u32_u8(s))
}

/// Stores `w` as word `i` (below 60) of the schedule at `rk`.
///
/// # Safety
/// `rk` is valid for writing 240 bytes.
#[inline(always)]
unsafe fn store(rk: *mut RoundKeys, i: usize, w: u32) {
    // SAFETY: word `i < 60` of the caller's 240 bytes (4-byte aligned: `RoundKeys` sits at
    // offset 0 of a 16-byte aligned struct, and the caller's pointer is to one).
    unsafe { core::ptr::write_volatile(rk.cast::<u32>().add(i), w.to_le()) };
}

/// Expands `key` into the 15 round keys at `rk`: the schedule's words in eight named
/// variables (no array a run-time index would put on the stack), each stored as it is made.
///
/// # Safety
/// The CPU has the AES extension; `rk` is valid for writing 240 bytes and 16-byte aligned.
#[target_feature(enable = "aes")]
pub(super) unsafe fn expand(key: &[u8; 32], rk: *mut RoundKeys) {
    // One volatile load per key word, straight into a general register.
    let word = |i: usize| match key.get(4 * i..4 * i + 4) {
        // SAFETY: four readable bytes; `[u8; 4]` has alignment 1.
        Some(b) => u32::from_le_bytes(unsafe { core::ptr::read_volatile(b.as_ptr().cast()) }),
        None => 0,
    };
    let (mut a0, mut a1, mut a2, mut a3) = (word(0), word(1), word(2), word(3));
    let (mut b0, mut b1, mut b2, mut b3) = (word(4), word(5), word(6), word(7));
    // SAFETY: the caller's promise (as for every `store` below); indices below 60.
    unsafe {
        store(rk, 0, a0);
        store(rk, 1, a1);
        store(rk, 2, a2);
        store(rk, 3, a3);
        store(rk, 4, b0);
        store(rk, 5, b1);
        store(rk, 6, b2);
        store(rk, 7, b3);
    }
    let mut rcon = 1u32;
    for k in 1..=7 {
        // w[8k] = w[8k - 8] ⊕ SubWord(RotWord(w[8k - 1])) ⊕ Rcon; RotWord of a little-endian
        // word is a rotation right by a byte.
        a0 ^= sub_word(b3.rotate_right(8)) ^ rcon;
        a1 ^= a0;
        a2 ^= a1;
        a3 ^= a2;
        rcon <<= 1;
        // SAFETY: as above.
        unsafe {
            store(rk, 8 * k, a0);
            store(rk, 8 * k + 1, a1);
            store(rk, 8 * k + 2, a2);
            store(rk, 8 * k + 3, a3);
        }
        if k < 7 {
            // w[8k + 4] = w[8k - 4] ⊕ SubWord(w[8k + 3]).
            b0 ^= sub_word(a3);
            b1 ^= b0;
            b2 ^= b1;
            b3 ^= b2;
            // SAFETY: as above.
            unsafe {
                store(rk, 8 * k + 4, b0);
                store(rk, 8 * k + 5, b1);
                store(rk, 8 * k + 6, b2);
                store(rk, 8 * k + 7, b3);
            }
        }
    }
}

/// Counter block `c`: its 16 little-endian bytes, built in a register.
#[target_feature(enable = "neon")]
#[inline]
fn counter_block(c: u128) -> uint8x16_t {
    vreinterpretq_u8_u64(vcombine_u64(
        vcreate_u64(c as u64),
        vcreate_u64((c >> 64) as u64),
    ))
}

/// Writes AES-256 of counter blocks `counter, counter + 1, …` (modulo 2^128) under `rk` into
/// `out` (a partial last block takes the block's first bytes); returns the next counter.
///
/// # Safety
/// The CPU has the AES extension; `rk` is 16-byte aligned (it always is inside
/// [`Aes256Keyed`](super::prf::Aes256Keyed)).
#[target_feature(enable = "aes")]
pub(super) unsafe fn ctr(rk: &RoundKeys, counter: u128, out: &mut [u8]) -> u128 {
    // One volatile load per use, as the AES-NI code's.
    let key = |i: usize| match rk.get(i) {
        // SAFETY: 16 readable bytes of the schedule, 16-byte aligned (the caller's promise).
        Some(k) => unsafe { core::ptr::read_volatile(k.as_ptr().cast::<uint8x16_t>()) },
        None => vdupq_n_u8(0),
    };
    let mut c = counter;
    let mut eights = out.chunks_exact_mut(128);
    for chunk in &mut eights {
        let b = rounds(&key, c);
        for (j, x) in b.iter().enumerate() {
            // SAFETY: block `j` of the chunk's 128 bytes.
            unsafe { vst1q_u8(chunk.as_mut_ptr().add(16 * j), *x) };
        }
        c = c.wrapping_add(8);
    }
    let rest = eights.into_remainder();
    if !rest.is_empty() {
        let mut b = rounds(&key, c);
        // Every block is computed here, in registers (see the AES-NI code's partial pass).
        // SAFETY: an empty instruction string; it only marks the eight registers as read and
        // written.
        unsafe {
            core::arch::asm!(
                "/* {0:v} {1:v} {2:v} {3:v} {4:v} {5:v} {6:v} {7:v} */",
                inout(vreg) b[0], inout(vreg) b[1], inout(vreg) b[2], inout(vreg) b[3],
                inout(vreg) b[4], inout(vreg) b[5], inout(vreg) b[6], inout(vreg) b[7],
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        let (whole, part) = (rest.len() / 16, rest.len() % 16);
        let mut last = vdupq_n_u8(0);
        for (j, x) in b.iter().enumerate() {
            if j < whole {
                // SAFETY: block `j` lies within `rest`.
                unsafe { vst1q_u8(rest.as_mut_ptr().add(16 * j), *x) };
            } else if j == whole {
                last = *x;
            }
        }
        let lo = vgetq_lane_u64::<0>(vreinterpretq_u64_u8(last));
        let hi = vgetq_lane_u64::<1>(vreinterpretq_u64_u8(last));
        for (i, o) in rest[16 * whole..16 * whole + part].iter_mut().enumerate() {
            *o = if i < 8 {
                lo >> (8 * i)
            } else {
                hi >> (8 * (i - 8))
            } as u8;
        }
        c = c.wrapping_add(rest.len().div_ceil(16) as u128);
    }
    c
}

/// The fourteen rounds of AES-256 on counter blocks `c .. c + 8`, in registers.
#[target_feature(enable = "aes")]
#[inline]
fn rounds(key: &impl Fn(usize) -> uint8x16_t, c: u128) -> [uint8x16_t; 8] {
    let mut b = [vdupq_n_u8(0); 8];
    for (j, x) in b.iter_mut().enumerate() {
        *x = counter_block(c.wrapping_add(j as u128));
    }
    for r in 0..13 {
        let k = key(r);
        for x in &mut b {
            *x = vaesmcq_u8(vaeseq_u8(*x, k));
        }
    }
    let (k13, k14) = (key(13), key(14));
    for x in &mut b {
        *x = veorq_u8(vaeseq_u8(*x, k13), k14);
    }
    b
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    extern crate std;

    #[repr(C, align(16))]
    struct Aligned(RoundKeys);

    /// Expands `key` and runs the counter mode (the callers check the extension).
    fn run(key: &[u8; 32], c: u128, out: &mut [u8]) -> u128 {
        let mut rk = Aligned([[0; 16]; 15]);
        // SAFETY: the extension is present (the callers check); an aligned 240-byte buffer.
        unsafe {
            expand(key, &mut rk.0);
            ctr(&rk.0, c, out)
        }
    }

    fn have_aes() -> bool {
        std::arch::is_aarch64_feature_detected!("aes")
    }

    #[test]
    fn fips_197_c3() {
        if have_aes() {
            super::super::aes_kat::fips_197_c3(run);
        }
    }

    #[test]
    fn matches_the_aes_crate_for_every_length_and_counter_carry() {
        if have_aes() {
            super::super::aes_kat::matches_the_aes_crate(run);
        }
    }
}
