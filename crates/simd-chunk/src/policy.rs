//! Check-interval policies: how many bytes to process between two `should_yield` checks.
//!
//! Follows the outcome of the kernel thread LKML, Robert Elliott, "[PATCH v4 10/24] crypto: x86/poly - limit FPU preemption", December 2022 and the kernel patches after it: a
//! fixed 4 KiB interval with a cheap test, not per-algorithm byte tables. Two refinements on
//! top: the interval is rounded to a multiple of the algorithm's block size (so the
//! hasher never buffers a partial block at a check), and a latency target can be turned into an
//! interval from a measured ns/byte, so fast and slow algorithms get the same latency.

use core::fmt;

use digest::common::BlockSizeUser;
use digest::typenum::Unsigned;

/// Bytes between checks for block hashes such as SHA-1 and SHA-2 (64- and 128-byte blocks):
/// the kernel's 4 KiB.
pub const DEFAULT_INTERVAL: usize = 4096;

/// Bytes between checks for tree hashes such as BLAKE3: 64 KiB, 64 of BLAKE3's 1 KiB chunks.
///
/// BLAKE3 hashes 8 or 16 chunks at once with AVX2/AVX-512 and merges subtrees as large as each
/// `update` allows, so short updates cost it throughput, and 64 KiB updates keep it near
/// one-shot speed (BENCHMARKS.md, "scalrand-simd-chunk", has the ratios). At BLAKE3 speeds
/// 64 KiB is still only microseconds between checks.
pub const TREE_HASH_INTERVAL: usize = 64 * 1024;

/// A bad policy parameter. Every constructor that can be misused returns one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyError {
    /// The check interval was 0 bytes.
    ZeroInterval,
    /// The block size was 0 bytes.
    ZeroBlockSize,
    /// Rounding the interval up to a block multiple overflowed `usize`.
    IntervalOverflow,
    /// The latency target (or a per-poll budget) was zero.
    ZeroTarget,
    /// The ns/byte rate was zero, negative, NaN or infinite.
    BadRate,
    /// The calibration sample was empty.
    EmptySample,
    /// The clock did not advance while the calibration sample was hashed.
    ClockTooCoarse,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicyError::ZeroInterval => "check interval must be at least one byte",
            PolicyError::ZeroBlockSize => "block size must be at least one byte",
            PolicyError::IntervalOverflow => {
                "check interval overflows when rounded to a block multiple"
            }
            PolicyError::ZeroTarget => "latency target or budget must be non-zero",
            PolicyError::BadRate => "ns/byte rate must be finite and positive",
            PolicyError::EmptySample => "calibration sample is empty",
            PolicyError::ClockTooCoarse => "clock did not advance during calibration",
        })
    }
}

impl core::error::Error for PolicyError {}

/// How often the driver checks for preemption: every `interval` bytes, where `interval` is a
/// multiple of `block_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    interval: usize,
    block_size: usize,
}

impl Policy {
    /// Checks every `interval` bytes, whatever the algorithm (block size 1).
    pub const fn new(interval: usize) -> Result<Self, PolicyError> {
        if interval == 0 {
            return Err(PolicyError::ZeroInterval);
        }
        Ok(Policy {
            interval,
            block_size: 1,
        })
    }

    /// Checks about every `interval` bytes, rounded **up** to a multiple of `block_size`.
    pub const fn for_block_size(interval: usize, block_size: usize) -> Result<Self, PolicyError> {
        if interval == 0 {
            return Err(PolicyError::ZeroInterval);
        }
        if block_size == 0 {
            return Err(PolicyError::ZeroBlockSize);
        }
        let rem = interval % block_size;
        let interval = if rem == 0 {
            interval
        } else {
            match interval.checked_add(block_size - rem) {
                Some(i) => i,
                None => return Err(PolicyError::IntervalOverflow),
            }
        };
        Ok(Policy {
            interval,
            block_size,
        })
    }

    /// The default for `D`: [`DEFAULT_INTERVAL`] (4 KiB) rounded up to a multiple of `D`'s
    /// block size (4096 for SHA-1/SHA-2/BLAKE3; 4216 for SHA3-256's 136-byte blocks).
    pub fn for_digest<D: BlockSizeUser>() -> Self {
        Self::round_or_block(DEFAULT_INTERVAL, D::BlockSize::USIZE)
    }

    /// [`TREE_HASH_INTERVAL`] (64 KiB) rounded to `D`'s block size: use it for BLAKE3.
    pub fn tree_hash<D: BlockSizeUser>() -> Self {
        Self::round_or_block(TREE_HASH_INTERVAL, D::BlockSize::USIZE)
    }

    /// A latency target turned into an interval: `target_ns / ns_per_byte` bytes, rounded
    /// **down** to a block multiple but at least one block, so one interval takes about
    /// `target_ns` at the measured rate. Pass a fraction of the real latency goal (a quarter
    /// leaves room for cache misses and noise). Measure `ns_per_byte` with [`calibrate`].
    pub fn for_latency(
        target_ns: u64,
        ns_per_byte: f64,
        block_size: usize,
    ) -> Result<Self, PolicyError> {
        if target_ns == 0 {
            return Err(PolicyError::ZeroTarget);
        }
        if !(ns_per_byte.is_finite() && ns_per_byte > 0.0) {
            return Err(PolicyError::BadRate);
        }
        if block_size == 0 {
            return Err(PolicyError::ZeroBlockSize);
        }
        // `as` saturates for floats: a huge quotient becomes usize::MAX, never UB.
        let bytes = (target_ns as f64 / ns_per_byte) as usize;
        let blocks = (bytes / block_size).max(1);
        let interval = blocks
            .checked_mul(block_size)
            .ok_or(PolicyError::IntervalOverflow)?;
        Ok(Policy {
            interval,
            block_size,
        })
    }

    /// [`for_latency`](Policy::for_latency) with the rate measured now: [`calibrate`]s `D`
    /// over a 256 KiB sample with [`std::time::Instant`]. For a latency goal `L` between
    /// checks, pass a fraction of `L` (a quarter leaves room for cache misses and noise).
    #[cfg(feature = "std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
    pub fn calibrated<D: digest::Digest + BlockSizeUser>(
        target: core::time::Duration,
    ) -> Result<Self, PolicyError> {
        let target_ns = u64::try_from(target.as_nanos()).unwrap_or(u64::MAX);
        let sample = std::vec![0x5au8; 256 * 1024];
        let rate = calibrate::<D, _>(&scalrand_os::MonotonicClock::new(), &sample)?;
        Self::for_latency(target_ns, rate, D::BlockSize::USIZE)
    }

    /// Bytes between checks.
    #[inline]
    pub const fn interval(&self) -> usize {
        self.interval
    }

    /// The block size the interval is a multiple of.
    #[inline]
    pub const fn block_size(&self) -> usize {
        self.block_size
    }

    fn round_or_block(interval: usize, block_size: usize) -> Self {
        // A digest's block size is a small non-zero constant, so rounding cannot fail; fall
        // back to one block per check rather than panic if a pathological type says otherwise.
        match Self::for_block_size(interval, block_size) {
            Ok(p) => p,
            Err(_) => Policy {
                interval: block_size.max(1),
                block_size: block_size.max(1),
            },
        }
    }
}

/// Measures `D`'s speed in ns/byte by hashing `sample` three times with `clock` and keeping the
/// fastest run (the one least disturbed by other work). Use a sample of at least 64 KiB so
/// clock resolution does not dominate.
pub fn calibrate<D: digest::Digest, C: crate::Clock>(
    clock: &C,
    sample: &[u8],
) -> Result<f64, PolicyError> {
    if sample.is_empty() {
        return Err(PolicyError::EmptySample);
    }
    let mut best = u64::MAX;
    for _ in 0..3 {
        let start = crate::preempt::now_ns(clock);
        let out = D::digest(sample);
        core::hint::black_box(out);
        let elapsed = crate::preempt::now_ns(clock).saturating_sub(start);
        best = best.min(elapsed);
    }
    if best == 0 {
        return Err(PolicyError::ClockTooCoarse);
    }
    Ok(best as f64 / sample.len() as f64)
}
