//! Atomics used by the crate, swapped for `loom`'s under `cfg(loom)` so the cross-thread
//! preemption flag can be model-checked (the crossbeam-utils `primitive` pattern, see
//! STYLE.md).

#[cfg(scalrand_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, Ordering};

#[cfg(not(scalrand_loom))]
pub(crate) use core::sync::atomic::{AtomicBool, Ordering};
