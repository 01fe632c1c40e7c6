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

/// The system's monotonic time, as a plain function (`monotonic_now as fn() -> Duration` is a
/// [`Clock`]): `CLOCK_MONOTONIC` on Unix (time since an arbitrary fixed point, usually boot),
/// `std::time::Instant` since the first call elsewhere.
///
/// On Unix it keeps no state, so nothing about it can be left half-initialised by a `fork`
/// that interrupts another thread's first call (a `OnceLock` origin could be, and would hang
/// the child's first reading).
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub fn monotonic_now() -> Duration {
    #[cfg(unix)]
    {
        let mut ts = crate::sys::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec, and every Unix that libc supports has
        // CLOCK_MONOTONIC. On failure `ts` stays zero, which a `Clock` user tolerates (no time
        // passes, so time-based triggers wait for the next good reading).
        unsafe { crate::sys::clock_gettime(crate::sys::CLOCK_MONOTONIC, &mut ts) };
        let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
        let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0);
        Duration::new(secs, 0).saturating_add(Duration::from_nanos(u64::from(nanos)))
    }
    #[cfg(not(unix))]
    {
        static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        ORIGIN.get_or_init(std::time::Instant::now).elapsed()
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

    #[cfg(feature = "std")]
    #[test]
    fn monotonic_now_advances_with_instant() {
        let (t0, i0) = (monotonic_now(), std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (t1, i1) = (monotonic_now(), std::time::Instant::now());
        assert!(t1 >= t0);
        let (ours, theirs) = (t1 - t0, i1 - i0);
        assert!(ours >= Duration::from_millis(19), "{ours:?}");
        // Both read the same kernel clock; allow scheduling noise between the two reads.
        assert!(
            ours <= theirs + Duration::from_millis(50),
            "{ours:?} vs {theirs:?}"
        );
    }
}
