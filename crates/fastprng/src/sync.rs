//! The synchronisation primitives the per-CPU slots use, swapped for loom's under `cfg(loom)`
//! so the try-lock protocol can be model-checked (crossbeam's `primitive` pattern).

#[cfg(scalrand_loom)]
pub(crate) use loom::cell::UnsafeCell;
#[cfg(scalrand_loom)]
pub(crate) use loom::sync::atomic::{AtomicUsize, Ordering};

#[cfg(not(scalrand_loom))]
pub(crate) use core::sync::atomic::{AtomicUsize, Ordering};

/// `core::cell::UnsafeCell` with loom's closure-based access API, so one code path serves
/// both builds.
#[cfg(not(scalrand_loom))]
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(scalrand_loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(v: T) -> Self {
        Self(core::cell::UnsafeCell::new(v))
    }
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
