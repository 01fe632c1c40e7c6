//! Synchronisation primitives of the NUMA pools, swappable for `loom`'s.
//!
//! crossbeam-utils' `primitive` pattern: everything concurrent in [`super`] imports its
//! atomics and cells from here, so `RUSTFLAGS="--cfg scalrand_loom"` model-checks the real code paths.
//!
//! [`Lock`] is the one lock of the module: a word-sized lock with a non-blocking
//! [`Lock::try_lock`] (the per-CPU slots never wait) and a spinning [`Lock::lock`] (node keys
//! and the input pool, held for one ChaCha20 block or one SHA-256 at most). **Waits spin**:
//! `core::hint::spin_loop` between attempts, and with `std` a `thread::yield_now` every 64
//! attempts so a preempted holder gets the CPU back. They never park.
//!
//! Fork: the lock word holds `fork generation + 1` of its holder. A child process inherits
//! locks that threads of its parent held at the moment of `fork()`; those threads do not exist
//! in the child, so [`Lock::lock`] takes over a word tagged with an older generation instead of
//! spinning forever. What the lock guards may then be half-updated; every caller rekeys from
//! fresh entropy after a fork before it uses what it guards, so a torn key is only ever hashed,
//! never used.

#[cfg(scalrand_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[cfg(not(scalrand_loom))]
pub(crate) use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use core::fmt;

/// `UnsafeCell` with loom's closure API, on both sides of `cfg(loom)`.
#[cfg(not(scalrand_loom))]
#[derive(Default)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(scalrand_loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(scalrand_loom)]
pub(crate) use loom::cell::UnsafeCell;

/// One step of a spin wait.
#[inline]
fn spin_wait(attempt: u32) {
    #[cfg(scalrand_loom)]
    {
        let _ = attempt;
        loom::thread::yield_now();
    }
    #[cfg(not(scalrand_loom))]
    {
        #[cfg(feature = "std")]
        if attempt % 64 == 63 {
            std::thread::yield_now();
            return;
        }
        let _ = attempt;
        core::hint::spin_loop();
    }
}

/// The lock tag of the current process image: never 0 (0 means unlocked).
#[inline]
pub(crate) fn current_tag() -> usize {
    // Truncation on 32-bit targets only matters after 2^32 nested forks.
    #[allow(clippy::cast_possible_truncation)]
    let g = crate::fork::generation() as usize;
    match g.wrapping_add(1) {
        0 => 1,
        t => t,
    }
}

/// A word-sized lock: try-lock without waiting, or spin (see the module docs).
/// `repr(C)`: the lock word sits right in front of the value it guards.
#[repr(C)]
pub(crate) struct Lock<T> {
    word: AtomicUsize,
    value: UnsafeCell<T>,
}

// SAFETY: `Lock` hands out `&mut T` only to the single holder of the lock word (acquired with
// an Acquire CAS, released with a Release store), so it is a mutex: `Sync` when `T: Send`.
unsafe impl<T: Send> Sync for Lock<T> {}
// SAFETY: moving the lock moves the `T` it owns; fine when `T: Send`.
unsafe impl<T: Send> Send for Lock<T> {}

impl<T> fmt::Debug for Lock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print what is inside: it holds keys.
        f.debug_struct("Lock").finish_non_exhaustive()
    }
}

impl<T> Lock<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            word: AtomicUsize::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes the lock if it is free right now; never waits.
    #[inline]
    pub(crate) fn try_lock(&self, tag: usize) -> Option<LockGuard<'_, T>> {
        self.word
            .compare_exchange(0, tag, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| LockGuard { lock: self })
    }

    /// Takes the lock, spinning while another thread holds it; takes over a lock left held
    /// by a thread of the parent process (a different fork generation).
    pub(crate) fn lock(&self) -> LockGuard<'_, T> {
        let tag = current_tag();
        let mut attempt = 0u32;
        loop {
            match self
                .word
                .compare_exchange(0, tag, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return LockGuard { lock: self },
                Err(held) if held != tag => {
                    // Held under another fork generation: its holder is a thread of a parent
                    // process and will never release it here.
                    if self
                        .word
                        .compare_exchange(held, tag, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                    {
                        return LockGuard { lock: self };
                    }
                }
                Err(_) => {}
            }
            spin_wait(attempt);
            attempt = attempt.wrapping_add(1);
        }
    }
}

/// Proof of holding a [`Lock`]; releases it on drop.
pub(crate) struct LockGuard<'a, T> {
    lock: &'a Lock<T>,
}

impl<T> LockGuard<'_, T> {
    /// Runs `f` on the guarded value.
    #[inline(always)]
    pub(crate) fn with<R>(&mut self, f: impl FnOnce(&mut T) -> R) -> R {
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
