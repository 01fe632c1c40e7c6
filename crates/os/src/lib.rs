#![no_std]
#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod clock;
pub mod cpu;
pub mod entropy;
pub mod fork;
#[cfg(all(feature = "alloc", not(scalrand_loom)))]
pub mod global;
pub mod lock;
pub mod primitive;
mod rseq;
#[cfg(feature = "alloc")]
pub mod wipe;

pub use clock::{Clock, FnClock, ManualClock, NoClock};
#[cfg(feature = "std")]
pub use clock::{MonotonicClock, monotonic_now};
pub use entropy::EntropyError;
pub use lock::{Lock, LockGuard};
