#![no_std]
// The front page is its own file, not the README that `STYLE` habits include: the README is
// the repository's page and links to files (BENCHMARKS.md, docs/) that docs.rs does not host.
// This page links with intra-doc links and absolute URLs only, and `cargo xtask ci --only
// doc-links` checks every link it renders.
#![doc = include_str!("../docs/crate.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub mod fast;

/// **Cryptographically secure** randomness: per-NUMA ChaCha20 pools with per-CPU fast key
/// erasure, OS-seeded and fork-safe ([`scalrand_pool::numa`]). Not to be confused with the
/// non-cryptographic [`fast`] module.
#[cfg(feature = "std")]
mod crypto;
#[cfg(feature = "std")]
mod error;
#[cfg(feature = "std")]
mod uniform;

/// The **cryptographic** generator: [`fill_bytes`] and [`next_u64`] read a lazily-initialised
/// global [`pool::numa::NodePools`] seeded from the OS; [`rng`] returns a [`SecureRng`], a
/// `rand_core` `Rng + CryptoRng` handle to it. For keys, nonces and tokens; see [`fast`] for
/// speed without cryptographic guarantees.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use crypto::{SecureRng, fill_bytes, next_u64, rng, try_fill_bytes, try_next_u64};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use error::Error;

/// The former name of [`SecureRng`], which collided with rand 0.10's `Rng` trait in a
/// `use rand::Rng; use scalrand::Rng;` (E0252).
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
#[deprecated(
    since = "0.1.0",
    note = "renamed to `SecureRng` (or call `scalrand::rng()`)"
)]
pub type Rng = SecureRng;

#[doc(inline)]
pub use scalrand_fastprng as fastprng;
#[doc(inline)]
pub use scalrand_os as os;
#[doc(inline)]
pub use scalrand_pool as pool;
#[doc(inline)]
pub use scalrand_shuffle as shuffle;
#[doc(inline)]
pub use scalrand_simd_chunk as simd_chunk;
