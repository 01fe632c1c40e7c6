//! The reseed schedule's clock and policy.
//!
//! Linux reseeds its crng on a timer-free schedule: a reader that finds the key older than the
//! interval reseeds before it answers. The pools do the same, with the two triggers of the
//! issue: after [`ReseedPolicy::max_bytes`] bytes of output, or after
//! [`ReseedPolicy::max_interval_secs`] seconds of the injected [`Clock`]. A `no_std` host
//! without a clock passes a [`ManualClock`] and advances it itself, or calls
//! [`super::NodePools::reseed`] when it likes.
//!
//! Readers look at the schedule every [`CHECK_EVERY_CALLS`] reads or [`CHECK_EVERY_BYTES`]
//! bytes of one per-CPU slot, so the clock is not read on every 32-byte read: a reseed is
//! due by the clock, and happens at the next check point of any slot.

use crate::numa::sync::{AtomicUsize, Ordering};
use core::fmt;

/// A slot checks the schedule after this many reads...
pub const CHECK_EVERY_CALLS: u32 = 64;
/// ...or after this many bytes, whichever comes first.
pub const CHECK_EVERY_BYTES: usize = 64 * 1024;

/// A monotonic clock in whole seconds, for the time half of the reseed schedule.
pub trait Clock: Send + Sync {
    /// Seconds since an arbitrary fixed origin; never goes backwards. `None` when the host
    /// has no clock (the time trigger is then off).
    fn now_secs(&self) -> Option<u64>;
}

/// When the pools reseed from the input pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReseedPolicy {
    /// Reseed once this many bytes were handed out since the last reseed (0: never by bytes).
    pub max_bytes: u64,
    /// Reseed once this many seconds passed since the last reseed (0: never by time).
    pub max_interval_secs: u64,
}

impl ReseedPolicy {
    /// Linux's interval (60 s) and 1 GiB of output.
    pub const LINUX_LIKE: Self = Self {
        max_bytes: 1 << 30,
        max_interval_secs: 60,
    };

    /// Only explicit [`super::NodePools::reseed`] calls (and forks) reseed.
    pub const MANUAL: Self = Self {
        max_bytes: 0,
        max_interval_secs: 0,
    };
}

/// A clock the host advances by hand (`no_std` hosts, tests).
pub struct ManualClock {
    secs: AtomicUsize,
}

impl ManualClock {
    /// A clock reading `secs`.
    pub fn new(secs: usize) -> Self {
        Self {
            secs: AtomicUsize::new(secs),
        }
    }

    /// Sets the time (callers keep it monotonic).
    pub fn set(&self, secs: usize) {
        self.secs.store(secs, Ordering::Relaxed);
    }

    /// Moves the time forward by `secs`.
    pub fn advance(&self, secs: usize) {
        self.secs.fetch_add(secs, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_secs(&self) -> Option<u64> {
        Some(self.secs.load(Ordering::Relaxed) as u64)
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("secs", &self.secs.load(Ordering::Relaxed))
            .finish()
    }
}

/// A clock that never answers: the time trigger is off (the `no_std` default).
#[derive(Debug, Clone, Copy)]
pub struct NoClock;

impl Clock for NoClock {
    fn now_secs(&self) -> Option<u64> {
        None
    }
}

/// `std::time::Instant` since the clock was made.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: std::time::Instant,
}

#[cfg(feature = "std")]
impl MonotonicClock {
    /// A clock starting at 0 now.
    pub fn new() -> Self {
        Self {
            origin: std::time::Instant::now(),
        }
    }
}

#[cfg(feature = "std")]
impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "std")]
impl Clock for MonotonicClock {
    fn now_secs(&self) -> Option<u64> {
        Some(self.origin.elapsed().as_secs())
    }
}
