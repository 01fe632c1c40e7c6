//! The two draws every workload makes from its generator: a whole number below a bound
//! ([`uniform`], Lemire's unbiased method) and a real number in (0, 1] ([`unit`]). Aging,
//! the server model, the heap, Zipf and the JVM heap all draw through these, so one
//! generator word means the same thing everywhere.

use rand_core::Rng;

use crate::shuffle::bounded;

/// A whole number in `[0, n)`, unbiased (Lemire), for `n ≥ 1`.
#[inline]
pub(crate) fn uniform<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
    let mut words = 0;
    bounded(rng, n, &mut words)
}

/// A real number in **(0, 1]**: the top 53 bits of one `next_u64`, plus one, times 2^-53, so
/// every value is a multiple of 2^-53 from 2^-53 up to exactly 1.0, each equally likely.
///
/// The interval is the one inverse-transform sampling needs: `t / unit(rng)` (a Pareto tail)
/// and `ln(unit(rng))` never see zero. An event of probability `p` is `unit(rng) <= p`:
/// never for `p = 0`, always for `p = 1`, and exactly `p` for any multiple of 2^-53.
#[inline]
pub(crate) fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use core::convert::Infallible;

    use rand_core::TryRng;

    use super::{uniform, unit};

    /// Hands out one fixed word, again and again.
    struct Word(u64);

    impl TryRng for Word {
        type Error = Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Infallible> {
            Ok(self.0 as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Infallible> {
            Ok(self.0)
        }
        fn try_fill_bytes(&mut self, _dst: &mut [u8]) -> Result<(), Infallible> {
            unimplemented!()
        }
    }

    const STEP: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53

    #[test]
    fn unit_endpoints() {
        // The smallest word gives the open end's neighbour, never zero.
        assert_eq!(unit(&mut Word(0)), STEP);
        // The low 11 bits are dropped.
        assert_eq!(unit(&mut Word(0x7ff)), STEP);
        assert_eq!(unit(&mut Word(0x800)), 2.0 * STEP);
        // The largest word gives the closed end, exactly.
        assert_eq!(unit(&mut Word(u64::MAX)), 1.0);
        assert_eq!(unit(&mut Word(u64::MAX - 0x7ff)), 1.0);
        assert_eq!(unit(&mut Word(u64::MAX - 0x800)), 1.0 - STEP);
        // The middle word: top bit set, the rest clear.
        assert_eq!(unit(&mut Word(1 << 63)), 0.5 + STEP);
    }

    #[test]
    fn unit_as_an_event() {
        // `unit(rng) <= p`: p = 0 never happens, p = 1 always does, p = 1/2 is exactly the
        // words whose top bit is clear.
        for w in [0, 1 << 11, (1 << 63) - 1, 1 << 63, u64::MAX] {
            let u = unit(&mut Word(w));
            assert!(u > 0.0, "{u} for {w:#x}");
            assert!(u <= 1.0, "{u} for {w:#x}");
            assert_eq!(u <= 0.5, w >> 63 == 0, "{u} for {w:#x}");
        }
    }

    #[test]
    fn uniform_bounds() {
        // Lemire: the high word of `w * n`; u64::MAX maps to n - 1.
        assert_eq!(uniform(&mut Word(u64::MAX), 10), 9);
        assert_eq!(uniform(&mut Word((1 << 63) + 1), 10), 5);
        assert_eq!(uniform(&mut Word(u64::MAX), 1), 0);
    }
}
