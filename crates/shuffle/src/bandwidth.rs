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
//! A write costs more than a read in cache mode, hit or miss: the cache keeps its tags with the
//! data in near memory, so a written line's slot is first read to check whose line it holds,
//! and a streaming (non-temporal) store, which bypasses the CPU caches, does not bypass the
//! memory-side cache ("using MCDRAM as a cache necessarily generates read-for-write traffic",
//! Jefferson Lab's KNL system overview; NERSC's Cori KNL pages: cache mode "incurs some latency
//! and bandwidth penalties" against flat mode). [`BandwidthModel::cache_mode_gbps`] charges
//! that read: with a fraction `w` of the counted bytes written,
//!
//! ```text
//! bw(m, w) = 1 / ((1 - m) / near_gbps + m / far_gbps + w / near_gbps)
//! ```
//!
//! so a STREAM Triad (`a[i] = b[i] + q * c[i]`: 16 bytes read and 8 written per element, all
//! counted, `w = 1/3`) that never misses runs at 3/4 of near bandwidth. This is why a fresh
//! KNL, whose in-order allocation gives the arrays one page colour each, measured 336 GB/s and
//! not MCDRAM's 400+: Daniluk's cache-colouring RFC (LKML 2017-08-23) keeps STREAM within 1.5%
//! of its fresh 336 GB/s with colour-perfect placement over days of use, so what separates
//! 336 from 400 is not misses.
//!
//! What it leaves out: the fill of a missed line into near memory and the write-back of a
//! dirty victim (both add traffic on a miss, so the model is optimistic for write-heavy
//! misses), and any overlap of near and far transfers (pessimistic).
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
    /// `0 ..= 1`), counting no tag reads: reads only, or a flat-mode view of writes.
    pub fn effective_gbps(&self, miss_ratio: f64) -> f64 {
        self.cache_mode_gbps(miss_ratio, 0.0)
    }

    /// Delivered bandwidth in GB/s in cache mode at near-memory miss ratio `miss_ratio`, with
    /// `write_fraction` of the counted bytes written, each written line first reading its slot
    /// in near memory (module docs). Both are clamped to `0 ..= 1`.
    pub fn cache_mode_gbps(&self, miss_ratio: f64, write_fraction: f64) -> f64 {
        let m = miss_ratio.clamp(0.0, 1.0);
        let w = write_fraction.clamp(0.0, 1.0);
        1.0 / ((1.0 - m) / self.near_gbps + m / self.far_gbps + w / self.near_gbps)
    }
}
