//! [`Clock`]: the one monotonic time source every scalrand crate takes (reseed intervals,
//! Fortuna's 100 ms rule, chunked hashing's time budgets), injectable so `no_std` hosts pass
//! their own timer and tests pass one they control.

use core::fmt;
use core::time::Duration;

/// A monotonic clock: [`now`](Clock::now) is the time since an arbitrary fixed origin.
///
/// Implementations should never go backwards; every user in scalrand tolerates one that does
/// (elapsed time saturates at zero).
pub trait Clock {
    /// The time since this clock's origin.
    fn now(&self) -> Duration;
}

impl Clock for fn() -> Duration {
    #[inline]
    fn now(&self) -> Duration {
        self()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now(&self) -> Duration {
        (**self).now()
    }
}

#[cfg(feature = "alloc")]
impl<C: Clock + ?Sized> Clock for alloc::boxed::Box<C> {
    #[inline]
    fn now(&self) -> Duration {
        (**self).now()
    }
}

/// A closure as a [`Clock`]: `FnClock(|| Duration::from_nanos(read_timer()))`, for hosts with a
/// timer of their own and for tests whose fake clock advances on every reading.
#[derive(Clone, Copy)]
pub struct FnClock<F>(pub F);

impl<F: Fn() -> Duration> Clock for FnClock<F> {
    #[inline]
    fn now(&self) -> Duration {
        (self.0)()
    }
}

impl<F> fmt::Debug for FnClock<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnClock(..)")
    }
}

/// A clock that never advances: time-based triggers never fire (the `no_std` default).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoClock;

impl Clock for NoClock {
    #[inline]
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// A clock the host sets by hand (`no_std` hosts with their own timer, tests). Resolution 1 ns;
/// on targets without 64-bit atomics, 1 µs (wrapping after 71 minutes on 32-bit targets).
#[derive(Default)]
pub struct ManualClock {
    #[cfg(target_has_atomic = "64")]
    nanos: core::sync::atomic::AtomicU64,
    #[cfg(not(target_has_atomic = "64"))]
    micros: core::sync::atomic::AtomicUsize,
}

impl ManualClock {
    /// A clock reading `now`.
    pub fn new(now: Duration) -> Self {
        let c = Self::default();
        c.set(now);
        c
    }

    /// Sets the time (callers keep it monotonic).
    pub fn set(&self, now: Duration) {
        use core::sync::atomic::Ordering::Relaxed;
        #[cfg(target_has_atomic = "64")]
        self.nanos
            .store(u64::try_from(now.as_nanos()).unwrap_or(u64::MAX), Relaxed);
        #[cfg(not(target_has_atomic = "64"))]
        self.micros.store(
            usize::try_from(now.as_micros()).unwrap_or(usize::MAX),
            Relaxed,
        );
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.set(self.now().saturating_add(by));
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> Duration {
        use core::sync::atomic::Ordering::Relaxed;
        #[cfg(target_has_atomic = "64")]
        return Duration::from_nanos(self.nanos.load(Relaxed));
        #[cfg(not(target_has_atomic = "64"))]
        return Duration::from_micros(self.micros.load(Relaxed) as u64);
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now", &self.now())
            .finish()
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
    /// A clock whose zero is now.
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
    #[inline]
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_sets_and_advances() {
        let c = ManualClock::new(Duration::from_secs(3));
        c.advance(Duration::from_millis(250));
        assert_eq!(c.now(), Duration::from_millis(3250));
        assert_eq!(Clock::now(&&c), Duration::from_millis(3250));
        assert_eq!(NoClock.now(), Duration::ZERO);
        let ticks = core::cell::Cell::new(0u64);
        let f = FnClock(|| {
            ticks.set(ticks.get() + 1);
            Duration::from_nanos(ticks.get())
        });
        assert_eq!(
            (f.now(), f.now()),
            (Duration::from_nanos(1), Duration::from_nanos(2))
        );
    }
}
