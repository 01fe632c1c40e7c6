//! The locking primitives Fortuna is built on, in one place so that loom can replace them.
//!
//! crossbeam style: under `cfg(loom)` the mutex and atomics come from `loom`, so the model in
//! `rng.rs` explores every interleaving of the real read path; with `std` they are
//! `std::sync`'s (a futex mutex that parks waiters); without `std` the mutex is the small
//! test-and-test-and-set spin lock below (a `no_std` target has nothing to park on).
//!
//! Poisoning: no critical section in this module's users can panic (they do arithmetic, a
//! hash and a few cipher blocks, never an index or an unwrap), so a poisoned std mutex can only
//! come from a panic that never happened inside our code; we take the data as it is.

#[cfg(not(scalrand_loom))]
pub(crate) use core::sync::atomic::{AtomicBool, Ordering};
#[cfg(scalrand_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, Ordering};

/// A mutual-exclusion lock with one `lock()` that cannot fail.
#[derive(Debug)]
pub(crate) struct Mutex<T>(Inner<T>);

#[cfg(scalrand_loom)]
type Inner<T> = loom::sync::Mutex<T>;
#[cfg(all(not(scalrand_loom), feature = "std"))]
type Inner<T> = std::sync::Mutex<T>;
#[cfg(all(not(scalrand_loom), not(feature = "std")))]
type Inner<T> = spin::SpinMutex<T>;

/// The guard [`Mutex::lock`] returns; the lock is released when it is dropped.
#[cfg(scalrand_loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;
/// The guard [`Mutex::lock`] returns; the lock is released when it is dropped.
#[cfg(all(not(scalrand_loom), feature = "std"))]
pub(crate) type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;
/// The guard [`Mutex::lock`] returns; the lock is released when it is dropped.
#[cfg(all(not(scalrand_loom), not(feature = "std")))]
pub(crate) type MutexGuard<'a, T> = spin::SpinGuard<'a, T>;

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(Inner::new(value))
    }

    /// Acquires the lock (parks with `std`, spins without).
    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(any(scalrand_loom, feature = "std"))]
        {
            // See the module docs on poisoning.
            self.0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        }
        #[cfg(all(not(scalrand_loom), not(feature = "std")))]
        {
            self.0.lock()
        }
    }
}

/// The `no_std` lock. Compiled in tests too, so that it is tested on the host.
#[cfg(all(not(scalrand_loom), any(test, not(feature = "std"))))]
pub(crate) mod spin {
    use core::cell::UnsafeCell;
    use core::fmt;
    use core::ops::{Deref, DerefMut};
    use core::sync::atomic::{AtomicBool, Ordering};

    /// Test-and-test-and-set spin lock: waiters spin on a relaxed load (a shared cache line,
    /// no bus traffic) and only try the swap when the lock looks free. Fortuna holds it for
    /// a few hundred cycles (Concurrent) or one 4 KiB generation (Locked).
    pub(crate) struct SpinMutex<T> {
        locked: AtomicBool,
        value: UnsafeCell<T>,
    }

    // SAFETY: the lock hands out at most one `&mut T` at a time (the guard), so sharing the
    // mutex between threads only ever moves `T` between them, which `T: Send` allows.
    unsafe impl<T: Send> Sync for SpinMutex<T> {}

    impl<T> fmt::Debug for SpinMutex<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("SpinMutex { .. }")
        }
    }

    /// Exclusive access to a [`SpinMutex`]'s value; unlocks on drop.
    pub(crate) struct SpinGuard<'a, T> {
        mutex: &'a SpinMutex<T>,
    }

    impl<T> fmt::Debug for SpinGuard<'_, T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("SpinGuard { .. }")
        }
    }

    impl<T> SpinMutex<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self {
                locked: AtomicBool::new(false),
                value: UnsafeCell::new(value),
            }
        }

        pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
            loop {
                if !self.locked.swap(true, Ordering::Acquire) {
                    return SpinGuard { mutex: self };
                }
                while self.locked.load(Ordering::Relaxed) {
                    core::hint::spin_loop();
                }
            }
        }
    }

    impl<T> Deref for SpinGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: a guard exists only while `locked` is true and it was this guard's
            // `lock()` that set it, so no other reference to the value is live.
            unsafe { &*self.mutex.value.get() }
        }
    }

    impl<T> DerefMut for SpinGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: as in `deref`; `&mut self` makes this the only access through the guard.
            unsafe { &mut *self.mutex.value.get() }
        }
    }

    impl<T> Drop for SpinGuard<'_, T> {
        fn drop(&mut self) {
            self.mutex.locked.store(false, Ordering::Release);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        extern crate std;
        use std::sync::Arc;
        use std::thread;

        #[test]
        fn spin_mutex_counts_without_lost_updates() {
            let m = Arc::new(SpinMutex::new(0u64));
            let threads: std::vec::Vec<_> = (0..4)
                .map(|_| {
                    let m = Arc::clone(&m);
                    thread::spawn(move || {
                        for _ in 0..10_000 {
                            *m.lock() += 1;
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(*m.lock(), 40_000);
        }
    }
}
