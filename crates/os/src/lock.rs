//! [`Lock`]: a word-sized lock with a non-blocking [`Lock::try_lock`] and a spinning
//! [`Lock::lock`], which a fork child can take over from a parent's thread.
//!
//! **Waits spin** ([`primitive::spin_wait`](crate::primitive::spin_wait): a `spin_loop` hint,
//! and with `std` a `thread::yield_now` every 64 attempts); nothing parks. The locks of
//! scalrand guard a slot's key for one read, a node key for one ChaCha20 block, or one SHA-256
//! of the input pool.
//!
//! # Fork
//!
//! The word holds its holder's [`fork::tag`] (fork generation + 1; 0 is
//! free). A child process inherits every lock that a thread of its parent held at the moment
//! of `fork()`; that thread does not exist in the child and would never release it. So
//! [`Lock::lock`] and [`Lock::try_take_over`] take over a word carrying another generation's
//! tag instead of waiting forever. What the lock guards may then be half-updated: every user in
//! scalrand rekeys or wipes the guarded state after a fork before using it.
//!
//! A lock in wipe-on-fork memory ([`crate::wipe`]) is simply free in the child (its word is 0).

use core::fmt;

use crate::fork;
use crate::primitive::{AtomicUsize, Ordering, UnsafeCell, spin_wait};

/// A word-sized mutual-exclusion lock (see the module docs). `repr(C)`: the word sits right in
/// front of the value it guards, on the same cache line.
#[repr(C)]
pub struct Lock<T> {
    word: AtomicUsize,
    value: UnsafeCell<T>,
}

// SAFETY: `Lock` hands out access to `T` only to the single holder of the word (acquired with
// an Acquire compare-exchange, released with a Release store), so it is a mutex: `Sync` when
// `T: Send`.
unsafe impl<T: Send> Sync for Lock<T> {}
// SAFETY: moving the lock moves the `T` it owns; fine when `T: Send`.
unsafe impl<T: Send> Send for Lock<T> {}

impl<T> fmt::Debug for Lock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print what is inside: in scalrand it holds keys.
        f.debug_struct("Lock").finish_non_exhaustive()
    }
}

impl<T: Default> Default for Lock<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> Lock<T> {
    /// An unlocked lock around `value`.
    pub fn new(value: T) -> Self {
        Self {
            word: AtomicUsize::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock if it is free right now; never waits.
    #[inline]
    pub fn try_lock(&self) -> Option<LockGuard<'_, T>> {
        self.try_lock_tagged(fork::tag())
    }

    /// [`try_lock`](Self::try_lock) with a tag the caller already has (`fork::tag()`), to
    /// save the lookup on hot paths that take several locks.
    #[inline]
    pub fn try_lock_tagged(&self, tag: usize) -> Option<LockGuard<'_, T>> {
        self.word
            .compare_exchange(0, tag, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| LockGuard { lock: self })
    }

    /// Takes the lock if it is free, or held by a thread of an earlier process image (see the
    /// module docs); never waits. `None` when a thread of this process holds it, which may
    /// be the caller itself.
    #[inline]
    pub fn try_take_over(&self, tag: usize) -> Option<LockGuard<'_, T>> {
        match self
            .word
            .compare_exchange(0, tag, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Some(LockGuard { lock: self }),
            Err(held) if held != tag => self
                .word
                .compare_exchange(held, tag, Ordering::Acquire, Ordering::Relaxed)
                .ok()
                .map(|_| LockGuard { lock: self }),
            Err(_) => None,
        }
    }

    /// Takes the lock, spinning while a thread of this process holds it; takes over a lock
    /// left held by a thread of a parent process. A thread that already holds this lock and
    /// calls `lock` again spins forever: scalrand's lock orders rule that out.
    pub fn lock(&self) -> LockGuard<'_, T> {
        let tag = fork::tag();
        let mut attempt = 0u32;
        loop {
            if let Some(g) = self.try_take_over(tag) {
                return g;
            }
            spin_wait(attempt);
            attempt = attempt.wrapping_add(1);
        }
    }

    /// As [`lock`](Self::lock), but gives up after `attempts` tries (each followed by a
    /// [`spin_wait`]): `None` if the lock stayed held. The wait is
    /// bounded even when the holder is the caller's own thread, interrupted by the signal
    /// handler that now asks (where [`lock`](Self::lock) would spin forever).
    pub fn lock_bounded(&self, attempts: u32) -> Option<LockGuard<'_, T>> {
        let tag = fork::tag();
        for attempt in 0..attempts {
            if let Some(g) = self.try_take_over(tag) {
                return Some(g);
            }
            spin_wait(attempt);
        }
        None
    }

    /// Whether some thread holds the lock at this instant.
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) != 0
    }

    /// The value, through exclusive access to the lock.
    pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: `&mut self` excludes every other access to the lock and its value.
        self.value.with_mut(|p| f(unsafe { &mut *p }))
    }
}

/// Proof of holding a [`Lock`]; releases it on drop (also when unwinding).
pub struct LockGuard<'a, T> {
    lock: &'a Lock<T>,
}

impl<T> LockGuard<'_, T> {
    /// Runs `f` on the guarded value.
    #[inline(always)]
    pub fn with<R>(&mut self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: this guard is the only holder of the lock (acquired with Acquire, released
        // with Release in `drop`), so no other reference to the value exists while `f` runs;
        // `&mut self` keeps this guard from handing out two at once.
        self.lock.value.with_mut(|p| f(unsafe { &mut *p }))
    }
}

impl<T> Drop for LockGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock.word.store(0, Ordering::Release);
    }
}

impl<T> fmt::Debug for LockGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LockGuard")
    }
}

#[cfg(all(test, feature = "std", not(scalrand_loom)))]
mod tests {
    use super::*;
    extern crate std;

    #[test]
    fn try_lock_excludes_and_releases() {
        let l = Lock::new(5u32);
        let mut g = l.try_lock().unwrap();
        assert!(l.try_lock().is_none());
        assert!(
            l.try_take_over(fork::tag()).is_none(),
            "same generation: no takeover"
        );
        g.with(|v| *v += 1);
        drop(g);
        assert_eq!(l.lock().with(|v| *v), 6);
        assert!(!l.is_locked());
    }

    #[test]
    fn lock_bounded_gives_up_on_a_lock_this_thread_holds() {
        let l = Lock::new(0u8);
        let g = l.lock();
        // What a signal handler on the holder's own thread meets: `lock` would never return.
        assert!(l.lock_bounded(200).is_none());
        drop(g);
        assert!(l.lock_bounded(1).is_some());
    }

    #[test]
    fn a_lock_of_another_generation_is_taken_over() {
        let l = Lock::new(0u8);
        // Held under a tag that is not this process image's: what a child inherits.
        let stale = fork::tag().wrapping_add(1).max(1);
        let held = l.try_lock_tagged(stale).unwrap();
        core::mem::forget(held);
        assert!(l.try_lock().is_none());
        let mut g = l.lock();
        g.with(|v| *v = 1);
    }

    #[test]
    fn counts_without_lost_updates() {
        // Fewer under miri, which interprets every step.
        const PER_THREAD: u64 = if cfg!(miri) { 1_000 } else { 10_000 };
        let l = Lock::new(0u64);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..PER_THREAD {
                        l.lock().with(|v| *v += 1);
                    }
                });
            }
        });
        assert_eq!(l.lock().with(|v| *v), 4 * PER_THREAD);
    }
}
