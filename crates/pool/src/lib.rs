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

pub mod chacha;
#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "rand_core_06", feature = "rand_core_09")))
)]
pub mod compat;
mod fork_seed;
#[cfg(feature = "fortuna")]
#[cfg_attr(docsrs, doc(cfg(feature = "fortuna")))]
pub mod fortuna;
pub mod numa;
mod secret;
mod sha256;
