//! Bandwidth of a memory-side cache in front of far memory, from the near-memory miss ratio.
//!
//! Every access is served by near memory when it hits and by far memory when it misses
//! (compulsory, capacity and conflict misses alike), and the two kinds of access take turns
//! rather than overlap, so time per byte is `(1 - m) / near + m / far` and the delivered
//! bandwidth is its inverse:
//!
//! ```text
//! bw(m) = 1 / ((1 - m) / near_gbps + m / far_gbps)
//! ```
//!
//! What it leaves out: the fill of a missed line into near memory and the write-back of a
//! dirty victim (both add traffic on a miss, so the model is optimistic for write-heavy
//! misses), any overlap of near and far transfers (pessimistic), and the cost of tag checks
//! in cache mode (a cache-mode hit is slower than a flat-mode access, which the model does
//! not know: it is optimistic at low miss ratios).
//!
//! [`BandwidthModel::KNL`] takes its two parameters from public figures for Intel Xeon Phi
//! x200 ("Knights Landing"): near = 400 GB/s, Intel's published bandwidth of the 16 GB of
//! on-package MCDRAM ("over 400 GB/s"); far = 90 GB/s, sustained STREAM on its six DDR4-2400
//! channels (peak 6 × 19.2 = 115.2 GB/s), the ratio of about 4.4 behind the usual "MCDRAM is
//! about five times DDR4".

/// Near and far bandwidth of a machine with a memory-side cache.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BandwidthModel {
    /// Bandwidth of near memory (the cache), GB/s.
    pub near_gbps: f64,
    /// Bandwidth of far memory, GB/s.
    pub far_gbps: f64,
}

impl BandwidthModel {
    /// Knights Landing in cache mode: MCDRAM 400 GB/s in front of DDR4 at 90 GB/s (module
    /// docs).
    pub const KNL: BandwidthModel = BandwidthModel {
        near_gbps: 400.0,
        far_gbps: 90.0,
    };

    /// Checks that both bandwidths are finite and positive and far is not above near.
    ///
    /// # Errors
    /// [`crate::Error::BadParameter`].
    pub fn validate(&self) -> Result<(), crate::Error> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !ok(self.near_gbps) || !ok(self.far_gbps) {
            return Err(crate::Error::BadParameter(
                "near and far bandwidth must be finite and above 0",
            ));
        }
        if self.far_gbps > self.near_gbps {
            return Err(crate::Error::BadParameter(
                "far bandwidth must not exceed near bandwidth",
            ));
        }
        Ok(())
    }

    /// Delivered bandwidth in GB/s at near-memory miss ratio `miss_ratio` (clamped to
    /// `0 ..= 1`).
    pub fn effective_gbps(&self, miss_ratio: f64) -> f64 {
        let m = miss_ratio.clamp(0.0, 1.0);
        1.0 / ((1.0 - m) / self.near_gbps + m / self.far_gbps)
    }
}
