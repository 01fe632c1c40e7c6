//! rand 0.8's and 0.9's traits for [`SecureRng`]: rand_core 0.6's (feature `rand_core_06`)
//! and rand_core 0.9's (feature `rand_core_09`) `RngCore` and `CryptoRng` (rand_core 0.9's
//! `TryRngCore` and `TryCryptoRng` come with them: rand_core's blanket impls, error
//! `Infallible`), so `scalrand::rng()` stands where rand 0.8's `thread_rng()` and rand 0.9's
//! `rng()` stood. Each read is [`fill_bytes`](crate::fill_bytes) or
//! [`next_u64`](crate::next_u64), as under rand_core 0.10; they panic only where those do (the
//! OS entropy source fails on first use, as rand's `ThreadRng` does). rand_core 0.6's
//! `try_fill_bytes` returns that failure instead, as `rand_core::Error` code
//! `Error::CUSTOM_START` (the code `scalrand::pool::compat::RAND_CORE_06_ERROR_CODE` names).

use crate::SecureRng;

#[cfg(feature = "rand_core_06")]
impl rand_core_06::RngCore for SecureRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        crate::fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }
    #[inline]
    fn next_u64(&mut self) -> u64 {
        crate::next_u64()
    }
    #[inline]
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        crate::fill_bytes(dest);
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core_06::Error> {
        crate::try_fill_bytes(dest).map_err(|_| {
            let code = core::num::NonZeroU32::new(scalrand_pool::compat::RAND_CORE_06_ERROR_CODE)
                .unwrap_or(core::num::NonZeroU32::MIN);
            rand_core_06::Error::from(code)
        })
    }
}

#[cfg(feature = "rand_core_06")]
impl rand_core_06::CryptoRng for SecureRng {}

#[cfg(feature = "rand_core_09")]
impl rand_core_09::RngCore for SecureRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        crate::fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }
    #[inline]
    fn next_u64(&mut self) -> u64 {
        crate::next_u64()
    }
    #[inline]
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        crate::fill_bytes(dest);
    }
}

#[cfg(feature = "rand_core_09")]
impl rand_core_09::CryptoRng for SecureRng {}
