//! AES-256 with AES-NI, keyed in place: the key expansion writes each round key straight into
//! the caller's memory (a reader's frame of wipe-on-fork memory), and counter-mode encryption
//! reads the round keys from there with one volatile load per round per eight blocks, so no
//! copy of the key schedule is ever made in a stack frame, not even for the length of a call.
//! (The `aes` crate returns the expanded schedule by value and its short-run path keeps round
//! keys in its own frame; the first two round keys of AES-256 are the key itself.)
//!
//! The expansion is FIPS-197 §5.2 in the form of Intel's AES-NI white paper (Gueron, "Intel
//! Advanced Encryption Standard (AES) New Instructions Set", rev. 3.01, 2012, figure 25,
//! `AES_256_Key_Expansion`); the known-answer tests below hold it and the counter mode
//! against the `aes` crate and against FIPS-197 appendix C.3.

use core::arch::x86_64::{
    __m128i, _mm_aesenc_si128, _mm_aesenclast_si128, _mm_aeskeygenassist_si128, _mm_cvtsi128_si64,
    _mm_loadu_si128, _mm_set_epi64x, _mm_setzero_si128, _mm_shuffle_epi32, _mm_slli_si128,
    _mm_storeu_si128, _mm_unpackhi_epi64, _mm_xor_si128,
};

/// Fifteen round keys, 16-byte aligned for the volatile `__m128i` loads.
pub(super) type RoundKeys = [[u8; 16]; 15];

/// `x` XOR its three 4-byte left shifts, XOR `t`: one step of the schedule.
#[target_feature(enable = "sse2")]
#[inline]
fn mix(x: __m128i, t: __m128i) -> __m128i {
    let mut x = x;
    let mut s = _mm_slli_si128::<4>(x);
    x = _mm_xor_si128(x, s);
    s = _mm_slli_si128::<4>(s);
    x = _mm_xor_si128(x, s);
    s = _mm_slli_si128::<4>(s);
    x = _mm_xor_si128(x, s);
    _mm_xor_si128(x, t)
}

/// Expands `key` into the 15 round keys at `rk`.
///
/// # Safety
/// The CPU has AES-NI; `rk` is valid for writing 240 bytes and 16-byte aligned.
#[target_feature(enable = "aes,sse2")]
pub(super) unsafe fn expand(key: &[u8; 32], rk: *mut RoundKeys) {
    let rk = rk.cast::<__m128i>();
    // SAFETY: 32 readable bytes of `key`; `rk` valid for 15 aligned 16-byte stores (caller).
    unsafe {
        let mut a = _mm_loadu_si128(key.as_ptr().cast());
        let mut b = _mm_loadu_si128(key.as_ptr().add(16).cast());
        _mm_storeu_si128(rk, a);
        _mm_storeu_si128(rk.add(1), b);
        macro_rules! step {
            ($i:expr, $rcon:expr, $last:expr) => {
                a = mix(
                    a,
                    _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<$rcon>(b)),
                );
                _mm_storeu_si128(rk.add(2 * $i), a);
                if !$last {
                    b = mix(
                        b,
                        _mm_shuffle_epi32::<0xaa>(_mm_aeskeygenassist_si128::<0>(a)),
                    );
                    _mm_storeu_si128(rk.add(2 * $i + 1), b);
                }
            };
        }
        step!(1, 0x01, false);
        step!(2, 0x02, false);
        step!(3, 0x04, false);
        step!(4, 0x08, false);
        step!(5, 0x10, false);
        step!(6, 0x20, false);
        step!(7, 0x40, true);
    }
}

/// Counter block `c`: its 16 little-endian bytes.
#[target_feature(enable = "sse2")]
#[inline]
fn counter_block(c: u128) -> __m128i {
    _mm_set_epi64x((c >> 64) as i64, c as i64)
}

/// Writes AES-256 of counter blocks `counter, counter + 1, …` (modulo 2^128) under `rk` into
/// `out` (a partial last block takes the block's first bytes); returns the next counter.
///
/// # Safety
/// The CPU has AES-NI; `rk` is 16-byte aligned (it always is inside
/// [`Aes256Keyed`](super::prf::Aes256Keyed)).
#[target_feature(enable = "aes,sse2")]
pub(super) unsafe fn ctr(rk: &RoundKeys, counter: u128, out: &mut [u8]) -> u128 {
    let p = rk.as_ptr().cast::<__m128i>();
    // One volatile load per use: the compiler may not keep round keys in registers across
    // the loop, where it would run out of them and spill the schedule to the stack.
    // SAFETY: `i < 15` round keys of 16 bytes at a 16-byte aligned address (caller).
    let key = |i: usize| unsafe { core::ptr::read_volatile(p.add(i)) };
    let mut c = counter;
    let mut eights = out.chunks_exact_mut(128);
    for chunk in &mut eights {
        // SAFETY: 128 writable bytes; AES-NI (caller).
        unsafe { eight_blocks(&key, c, chunk.as_mut_ptr()) };
        c = c.wrapping_add(8);
    }
    let rest = eights.into_remainder();
    if !rest.is_empty() {
        // One more pass of eight (as fast as one block: the rounds are latency-bound), of
        // which only the blocks `rest` asks for are stored, straight into it: no buffer on the
        // stack ever holds a block (a key derivation's blocks are the keys themselves, and a
        // child forked from another thread copies this thread's stack as it is).
        // SAFETY: `rest.len()` (below 128) writable bytes; AES-NI (caller).
        unsafe { eight_blocks_into(&key, c, rest.as_mut_ptr(), rest.len()) };
        c = c.wrapping_add(rest.len().div_ceil(16) as u128);
    }
    c
}

/// Encrypts counter blocks `c .. c + 8` into the 128 bytes at `out`; `key(i)` loads round key
/// `i`.
///
/// # Safety
/// The CPU has AES-NI; `out` is valid for 128 bytes of writes.
#[target_feature(enable = "aes,sse2")]
#[inline]
unsafe fn eight_blocks(key: &impl Fn(usize) -> __m128i, c: u128, out: *mut u8) {
    let b = rounds(key, c);
    for (j, x) in b.iter().enumerate() {
        // SAFETY: block `j` of the caller's 128 bytes.
        unsafe { _mm_storeu_si128(out.add(16 * j).cast(), *x) };
    }
}

/// Encrypts counter blocks `c .. c + 8` and stores the first `len` bytes of them at `out`:
/// whole blocks with one store each, a last partial block byte by byte from two general
/// registers. The blocks never pass through memory other than `out`.
///
/// # Safety
/// The CPU has AES-NI; `out` is valid for `len < 128` bytes of writes.
#[target_feature(enable = "aes,sse2")]
#[inline]
unsafe fn eight_blocks_into(key: &impl Fn(usize) -> __m128i, c: u128, out: *mut u8, len: usize) {
    let mut b = rounds(key, c);
    // Every block is computed here, in registers: without this fence the compiler sinks the
    // rounds of the blocks that are stored only for some lengths into those branches and keeps
    // the round keys (the first two are the key itself) in stack slots until then.
    // SAFETY: an empty instruction string; it only marks the eight registers as read and
    // written.
    unsafe {
        core::arch::asm!(
            "/* {0} {1} {2} {3} {4} {5} {6} {7} */",
            inout(xmm_reg) b[0], inout(xmm_reg) b[1], inout(xmm_reg) b[2], inout(xmm_reg) b[3],
            inout(xmm_reg) b[4], inout(xmm_reg) b[5], inout(xmm_reg) b[6], inout(xmm_reg) b[7],
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    let (whole, part) = (len / 16, len % 16);
    // Unrolled over the eight blocks with `j` a constant in each copy, so that `b` stays in
    // registers (an index only known at run time would put the array in a stack slot).
    let mut last = _mm_setzero_si128();
    for (j, x) in b.iter().enumerate() {
        if j < whole {
            // SAFETY: block `j` lies within the caller's `len` bytes.
            unsafe { _mm_storeu_si128(out.add(16 * j).cast(), *x) };
        } else if j == whole {
            last = *x;
        }
    }
    let lo = _mm_cvtsi128_si64(last) as u64;
    let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(last, last)) as u64;
    let tail = out.wrapping_add(16 * whole);
    for i in 0..part {
        let w = if i < 8 {
            lo >> (8 * i)
        } else {
            hi >> (8 * (i - 8))
        };
        // SAFETY: byte `16 * whole + i < len` of the caller's bytes.
        unsafe { tail.add(i).write(w as u8) };
    }
}

/// The fourteen rounds of AES-256 on counter blocks `c .. c + 8`, in registers.
#[target_feature(enable = "aes,sse2")]
#[inline]
fn rounds(key: &impl Fn(usize) -> __m128i, c: u128) -> [__m128i; 8] {
    let k = key(0);
    let mut b = [k; 8];
    for (j, x) in b.iter_mut().enumerate() {
        *x = _mm_xor_si128(counter_block(c.wrapping_add(j as u128)), k);
    }
    for r in 1..14 {
        let k = key(r);
        for x in &mut b {
            *x = _mm_aesenc_si128(*x, k);
        }
    }
    let k = key(14);
    for x in &mut b {
        *x = _mm_aesenclast_si128(*x, k);
    }
    b
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    extern crate std;

    #[repr(C, align(16))]
    struct Aligned(RoundKeys);

    /// Expands `key` and runs the counter mode, where the CPU has AES-NI (`None` elsewhere).
    fn run(key: &[u8; 32], c: u128, out: &mut [u8]) -> u128 {
        let mut rk = Aligned([[0; 16]; 15]);
        // SAFETY: AES-NI is present (the callers check); an aligned 240-byte buffer.
        unsafe {
            expand(key, &mut rk.0);
            ctr(&rk.0, c, out)
        }
    }

    fn have_aes() -> bool {
        std::arch::is_x86_feature_detected!("aes")
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
