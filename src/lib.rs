#![no_std]
#![doc = include_str!("../README.md")]
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
/// The **cryptographic** generator: [`fill_bytes`] and [`next_u64`] read a lazily-initialised
/// global [`pool::numa::NodePools`] seeded from the OS; [`Rng`] is a `rand_core`
/// `Rng + CryptoRng` handle to it. For keys, nonces and tokens; see [`fast`] for speed without
/// cryptographic guarantees.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use crypto::{Rng, fill_bytes, next_u64, try_fill_bytes};

pub use scalrand_fastprng as fastprng;
pub use scalrand_os as os;
pub use scalrand_pool as pool;
pub use scalrand_shuffle as shuffle;
pub use scalrand_simd_chunk as simd_chunk;
