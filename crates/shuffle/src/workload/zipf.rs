//! Zipf(s) popularity over ranks, sampled by inverse CDF: which page of a hot region an
//! access falls on.

use alloc::vec::Vec;

use rand_core::Rng;

use crate::Error;
use crate::draw::unit;

/// A Zipf(s) sampler over ranks `0 .. n` (rank 0 the most popular), by inverse CDF.
#[derive(Clone, Debug)]
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// Weights `1 / (k + 1)^s`.
    ///
    /// # Errors
    /// [`Error::BadParameter`] for `n == 0` or a negative or non-finite `s`.
    pub fn new(n: usize, s: f64) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::BadParameter("Zipf over zero ranks"));
        }
        if !(s.is_finite() && s >= 0.0) {
            return Err(Error::BadParameter("Zipf exponent must be finite and >= 0"));
        }
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for k in 0..n {
            acc += libm::pow(k as f64 + 1.0, -s);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Ok(Zipf { cdf })
    }

    /// One rank.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let u = unit(rng);
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}
