#![no_std]
// The README's examples use the OS (seeding, threads); without `std` the crate docs are a
// one-line summary so that `cargo test --no-default-features` still runs every doctest.
#![cfg_attr(feature = "std", doc = include_str!("../README.md"))]
#![cfg_attr(
    not(feature = "std"),
    doc = "CSPRNGs that scale: Fortuna and per-NUMA ChaCha20 pools (the full guide, with examples, is in the README, rendered with the `std` feature)."
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

// Transitional: the OS layer now lives in scalrand-os; these names go once every module
// uses it directly.
pub(crate) mod entropy {
    pub(crate) use scalrand_os::EntropyError;
    #[cfg(feature = "std")]
    pub(crate) use scalrand_os::entropy::fill as os_fill;
}
pub(crate) mod fork {
    pub(crate) fn generation() -> u64 {
        scalrand_os::fork::generation() as u64
    }
}
pub mod fortuna;
pub mod numa;
