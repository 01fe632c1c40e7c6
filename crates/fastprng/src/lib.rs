#![no_std]
// The README's example uses `PerCpu` (feature `alloc`); without it the crate docs are a
// one-line summary so that `cargo test --no-default-features` still runs every doctest.
#![cfg_attr(feature = "alloc", doc = include_str!("../README.md"))]
#![cfg_attr(
    not(feature = "alloc"),
    doc = "Bit-exact xoroshiro128 generators (the full guide is in the README, rendered with the `alloc` feature)."
)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(any(feature = "rand_core_06", feature = "rand_core_09"))]
mod compat;
mod engine;
mod error;
mod layout;
#[cfg(feature = "alloc")]
mod locked;
#[cfg(feature = "alloc")]
mod percpu;
#[cfg(feature = "alloc")]
mod placement;
#[cfg(all(feature = "std", not(scalrand_loom)))]
mod static_wy;
mod wyrand;
mod xoroshiro;

// The restartable-sequence fast path exists where `scalrand_os::cfg_rseq!` says the
// sections run; everywhere else `rseq` is a stub whose offset is `None`, so the callers need
// no cfg of their own (the way RustCrypto's `chacha20/src/backends.rs` picks a backend in
// source).
scalrand_os::cfg_rseq! {
    if {
        mod rseq;
    } else {
        #[path = "rseq_none.rs"]
        mod rseq;
    }
}

pub use engine::Engine;
pub use error::Error;

/// The most CPU slots a `PerCpu` supports (the rseq path compares `cpu_id` as a `u32`).
pub const MAX_CPUS: usize = 1 << 20;
#[cfg(feature = "alloc")]
pub use locked::BUSY_SWEEPS;
#[cfg(feature = "alloc")]
pub use percpu::{FastPath, PerCpu};
#[cfg(all(feature = "std", not(scalrand_loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use placement::Static;
#[cfg(feature = "alloc")]
pub use placement::{Heap, Placement};
#[cfg(all(feature = "std", not(scalrand_loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use static_wy::StaticWyRand;
#[cfg(feature = "alloc")]
pub use wyrand::PerCpuWyRand;
pub use wyrand::WyRand;
pub use xoroshiro::{Xoroshiro128, Xoroshiro128Plus, Xoroshiro128PlusPlus, Xoroshiro128StarStar};

/// Fills `dest` with the little-endian bytes of successive words from `next`; a final partial
/// word contributes its low bytes (rand_core's `fill_bytes_via_next` convention).
#[inline]
pub(crate) fn fill_via_u64(dest: &mut [u8], mut next: impl FnMut() -> u64) {
    let mut chunks = dest.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&next().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let n = rest.len();
        rest.copy_from_slice(&next().to_le_bytes()[..n]);
    }
}
