//! The synchronisation primitives every scalrand crate builds on, swapped for
//! [loom](https://docs.rs/loom)'s under `--cfg scalrand_loom`.
//!
//! crossbeam-utils' `primitive` pattern, once for the whole workspace: concurrent code imports
//! its atomics and cells from here, so `RUSTFLAGS="--cfg scalrand_loom"` model-checks the real
//! code paths. The cfg has its own name because tokio (a dependency of the examples) reads the
//! bare `cfg(loom)` itself and does not build under it.
//!
//! [`UnsafeCell`] has loom's closure API (`with`, `with_mut`) on both sides of the cfg, so one
//! code path serves both builds.

#[cfg(scalrand_loom)]
pub use loom::cell::UnsafeCell;
#[cfg(scalrand_loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

// Linked to core's own pages, not inlined: core's docs link into the Rust books by relative
// paths that only resolve on doc.rust-lang.org.
#[cfg(not(scalrand_loom))]
#[doc(no_inline)]
pub use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// `core::cell::UnsafeCell` with loom's closure-based access API.
#[cfg(not(scalrand_loom))]
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(scalrand_loom))]
impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    /// Runs `f` on a shared pointer to the value (loom checks it against writers).
    #[inline(always)]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` on a mutable pointer to the value (loom checks it against every other access).
    #[inline(always)]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// One step of a spin wait: loom's `yield_now` under the model; with `std`, a
/// `thread::yield_now` every 64th attempt so a preempted holder gets the CPU back; a
/// `spin_loop` hint otherwise. Never parks.
#[inline]
pub fn spin_wait(attempt: u32) {
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
