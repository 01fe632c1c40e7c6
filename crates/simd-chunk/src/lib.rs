#![no_std]
// The README's examples use the OS (seeding, threads); without `std` the crate docs are a
// one-line summary so that `cargo test --no-default-features` still runs every doctest.
#![cfg_attr(feature = "std", doc = include_str!("../README.md"))]
#![cfg_attr(
    not(feature = "std"),
    doc = "Hash in bounded chunks and yield cooperatively (the full guide, with examples, is in the README, rendered with the `std` feature)."
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "std")]
extern crate std;

mod counters;
mod driver;
mod policy;
mod preempt;
mod section;

#[cfg(feature = "async")]
mod async_adapter;
#[cfg(feature = "tokio")]
mod tokio_coop;

pub use counters::Counters;
pub use driver::{Chunked, digest_chunked, digest_chunked_with, fill_chunked};
pub use policy::{DEFAULT_INTERVAL, Policy, PolicyError, TREE_HASH_INTERVAL, calibrate};
#[cfg(feature = "std")]
pub use preempt::ThreadYield;
pub use preempt::{FlagPreempt, NeverYield, Preempt, SpinYield, TimeBudget, Work, YieldNow};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use scalrand_os::MonotonicClock;
/// The clock of time budgets: the workspace's one [`Clock`] trait, from `scalrand-os`.
pub use scalrand_os::{Clock, FnClock, ManualClock, NoClock};
pub use section::{NoSection, SimdSection};

#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub use async_adapter::{
    AsyncPreempt, DEFAULT_POLL_BYTES, HashStream, Hashing, PollBudget, PollTimeBudget,
    digest_async, digest_stream,
};
#[cfg(all(feature = "async", feature = "std"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "async", feature = "std"))))]
pub use async_adapter::{HashReader, digest_reader};
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use tokio_coop::{TokioCoop, digest_tokio};

/// Re-export of the `digest` crate this crate is built against.
pub use digest;
