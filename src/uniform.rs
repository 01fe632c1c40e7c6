//! Uniform integers below a bound, without modulo bias: Lemire's nearly divisionless method
//! (D. Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS 29(1), 2019,
//! arXiv:1805.10941), the method `fastrand` and rand's `UniformInt` use.
//!
//! The multiply maps a word `x` to `x * s >> BITS`; the `2^BITS mod s` words whose low half
//! falls below that remainder are drawn again, so each of the `s` answers comes from exactly
//! `2^BITS / s` (rounded down) of the accepted words. One macro writes the 32-, 64- and
//! 128-bit versions, which are fastrand 2's `gen_mod_u32`, `gen_mod_u64` and `gen_mod_u128`
//! step for step (the same words drawn, the same answers: `scalrand::fast::Rng` reproduces its
//! streams), and an 8-bit one the tests check exhaustively, over every word and bound.

macro_rules! below {
    ($(#[$m:meta])* $name:ident, $w:ty, $mul_high:ident) => {
        $(#[$m])*
        /// A uniform value in `0..s` from the words `next` returns; `s` must not be 0
        /// (callers map the full range to a raw word instead).
        #[inline]
        pub(crate) fn $name(s: $w, mut next: impl FnMut() -> $w) -> $w {
            // Both halves of each product, taken together (as fastrand does): the compiler
            // then makes them one widening multiply, instead of a second multiply after the
            // test on the low half.
            let x = next();
            let mut low = x.wrapping_mul(s);
            let mut high = $mul_high(x, s);
            if low < s {
                // 2^BITS mod s, computed in BITS-bit arithmetic.
                let t = s.wrapping_neg() % s;
                while low < t {
                    let x = next();
                    low = x.wrapping_mul(s);
                    high = $mul_high(x, s);
                }
            }
            high
        }
    };
}

below!(below_u32, u32, mul_high_u32);
below!(below_u64, u64, mul_high_u64);
below!(below_u128, u128, mul_high_u128);
below!(
    #[cfg(test)]
    below_u8,
    u8,
    mul_high_u8
);

/// `(a * b) >> 8`.
#[cfg(test)]
#[inline]
fn mul_high_u8(a: u8, b: u8) -> u8 {
    ((u16::from(a) * u16::from(b)) >> 8) as u8
}

/// `(a * b) >> 32`.
#[inline]
fn mul_high_u32(a: u32, b: u32) -> u32 {
    ((u64::from(a) * u64::from(b)) >> 32) as u32
}

/// `(a * b) >> 64`.
#[inline]
fn mul_high_u64(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}

/// `(a * b) >> 128`, from four 64×64→128-bit products (schoolbook, as fastrand computes it).
#[inline]
fn mul_high_u128(a: u128, b: u128) -> u128 {
    let (a_lo, a_hi) = (a as u64 as u128, a >> 64);
    let (b_lo, b_hi) = (b as u64 as u128, b >> 64);
    let (hl, lh) = (a_hi * b_lo, a_lo * b_hi);
    // The carry out of the middle column: bits 64..128 of a_lo*b_lo plus the low halves of
    // the two cross products.
    let carry = ((hl as u64 as u128) + (lh as u64 as u128) + ((a_lo * b_lo) >> 64)) >> 64;
    a_hi * b_hi + (hl >> 64) + (lh >> 64) + carry
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For every bound `s` of 8-bit words and every first word `x`: which words are drawn
    /// again, and how often each answer comes out of the accepted ones. An unbiased method
    /// gives every answer exactly `256 / s` words and redraws exactly `256 % s` of them.
    #[test]
    fn exhaustive_8_bit_is_exactly_uniform() {
        for s in 1..=255u8 {
            let mut hits = [0u32; 256];
            let mut redrawn = 0u32;
            for x in 0..=255u8 {
                let mut calls = 0u32;
                let v = below_u8(s, || {
                    calls += 1;
                    // A redraw gets 255, which is never redrawn (255 * s mod 256 = 256 - s,
                    // at least 256 mod s), so each call here makes at most two draws.
                    if calls == 1 { x } else { 255 }
                });
                assert!(calls <= 2, "s = {s}, x = {x}: {calls} draws");
                assert!(v < s, "s = {s}, x = {x}: {v} out of range");
                if calls == 1 {
                    hits[usize::from(v)] += 1;
                } else {
                    redrawn += 1;
                }
            }
            let each = 256 / u32::from(s);
            assert!(
                hits[..usize::from(s)].iter().all(|&h| h == each),
                "s = {s}: {:?}",
                &hits[..usize::from(s)]
            );
            assert_eq!(redrawn, 256 % u32::from(s), "s = {s}");
        }
    }

    /// The 128-bit high product against the exact one, on operands whose product is known.
    #[test]
    fn mul_high_u128_is_the_high_half() {
        let m = u128::MAX;
        assert_eq!(mul_high_u128(m, m), m - 1);
        assert_eq!(mul_high_u128(1 << 64, 1 << 64), 1);
        assert_eq!(mul_high_u128(1 << 127, 2), 1);
        assert_eq!(mul_high_u128(m, 1), 0);
        // (2^64 + 1)^2 = 2^128 + 2^65 + 1: high half 1.
        let x = (1u128 << 64) + 1;
        assert_eq!(mul_high_u128(x, x), 1);
        // (2^128 - 1)(2^64 + 3) = 2^192 + 3 * 2^128 - 2^64 - 3: high half 2^64 + 2.
        assert_eq!(mul_high_u128(m, (1 << 64) + 3), (1 << 64) + 2);
        for a in [0u64, 1, 0xdead_beef, u64::MAX] {
            for b in [0u64, 7, 0x1234_5678_9abc_def0, u64::MAX] {
                let exact = u128::from(a) * u128::from(b);
                // Shifting one operand left by 64 multiplies the product by 2^64.
                assert_eq!(
                    mul_high_u128(u128::from(a) << 64, u128::from(b)),
                    exact >> 64
                );
            }
        }
    }

    /// The 64-bit version on a bound where modulo reduction is visibly biased: with
    /// `s = 3 * 2^62`, `x % s` lands below `2^62` half the time, a uniform answer a third.
    #[test]
    fn large_bound_has_no_modulo_bias() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            // splitmix64 (Steele, Lea, Flood 2014): an independent word source.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let s = 3u64 << 62;
        let n = 200_000;
        let low = (0..n).filter(|_| below_u64(s, &mut next) < 1 << 62).count();
        let frac = low as f64 / f64::from(n);
        // sd of the fraction is 0.001; 0.01 is 10 sd away from 1/3 and far from 1/2.
        assert!((frac - 1.0 / 3.0).abs() < 0.01, "{frac}");
    }
}
