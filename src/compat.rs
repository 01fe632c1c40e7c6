//! rand 0.8's and 0.9's traits for [`SecureRng`]: rand_core 0.6's (feature `rand_core_06`)
//! and rand_core 0.9's (feature `rand_core_09`) `RngCore` and `CryptoRng` (rand_core 0.9's
//! `TryRngCore` and `TryCryptoRng` come with them: rand_core's blanket impls, error
//! `Infallible`), so `scalrand::rng()` stands where rand 0.8's `thread_rng()` and rand 0.9's
//! `rng()` stood. Each read is [`fill_bytes`](crate::fill_bytes) or
//! [`next_u64`](crate::next_u64), as under rand_core 0.10; they panic only where those do (the
//! OS entropy source fails on first use, as rand's `ThreadRng` does). rand_core 0.6's
//! `try_fill_bytes` returns that failure instead, as `rand_core::Error` code
//! `Error::CUSTOM_START` (the code `scalrand::pool::compat::RAND_CORE_06_ERROR_CODE` names).
//! The impls come from the adapter every scalrand crate shares (`scalrand_os::rand_core_compat!`).

use crate::SecureRng;

/// rand_core 0.6's fallible read: the pools' [`try_fill_bytes`](crate::try_fill_bytes).
#[cfg(feature = "rand_core_06")]
fn try_fill(_: &SecureRng, dest: &mut [u8]) -> Result<(), crate::Error> {
    crate::try_fill_bytes(dest)
}

scalrand_os::rand_core_compat!(crypto: [] SecureRng => try_fill);
