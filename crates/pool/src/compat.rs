//! rand 0.8's and 0.9's traits for the generators: rand_core 0.6's (feature `rand_core_06`)
//! and rand_core 0.9's (feature `rand_core_09`) `RngCore` and `CryptoRng` for
//! [`Fortuna`], `&Fortuna` and `&NodePools`, the types that implement rand_core 0.10's
//! `TryCryptoRng` (rand_core 0.9's `TryRngCore` and `TryCryptoRng` come with them: rand_core's
//! blanket impls, error `Infallible`). Each read is the type's own `fill_bytes` or
//! `next_u64`, as under rand_core 0.10, so rand 0.8's and 0.9's `Rng` methods, `seq` and
//! distributions draw from the same generator.
//!
//! Where a read can fail (a fork child whose rekey gets no fresh OS entropy), `fill_bytes`,
//! `next_u32` and `next_u64` panic, as the 0.10 impls and the types' own `fill_bytes` do (no
//! secure answer exists); rand_core 0.6's `try_fill_bytes` returns the failure instead, as
//! `rand_core::Error` code [`RAND_CORE_06_ERROR_CODE`].

use crate::fortuna::{Clock, Fortuna, Prf};
use crate::numa::NodePools;

/// The code of the `rand_core` 0.6 `Error` that `try_fill_bytes` returns when a read fails
/// (rand_core's first custom code, `Error::CUSTOM_START`).
#[cfg(feature = "rand_core_06")]
#[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
pub const RAND_CORE_06_ERROR_CODE: u32 = rand_core_06::Error::CUSTOM_START;

/// The rand_core 0.6 error for a failed read.
#[cfg(feature = "rand_core_06")]
fn error_06() -> rand_core_06::Error {
    match core::num::NonZeroU32::new(RAND_CORE_06_ERROR_CODE) {
        Some(code) => rand_core_06::Error::from(code),
        // `CUSTOM_START` is not zero: this arm is never taken.
        None => rand_core_06::Error::from(core::num::NonZeroU32::MIN),
    }
}

/// rand_core 0.6's and 0.9's `RngCore` and `CryptoRng` for `$t`, reading through `$fill`
/// (`fn(&T, &mut [u8])`, the panicking read) and `$try_fill` (the fallible one).
macro_rules! crypto_rng {
    ($([$($g:tt)*] $t:ty, $fill:path, $try_fill:path;)+) => {$(
        #[cfg(feature = "rand_core_06")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
        impl<$($g)*> rand_core_06::RngCore for $t {
            #[inline]
            fn next_u32(&mut self) -> u32 {
                let mut b = [0u8; 4];
                $fill(self, &mut b);
                u32::from_le_bytes(b)
            }
            #[inline]
            fn next_u64(&mut self) -> u64 {
                let mut b = [0u8; 8];
                $fill(self, &mut b);
                u64::from_le_bytes(b)
            }
            #[inline]
            fn fill_bytes(&mut self, dest: &mut [u8]) {
                $fill(self, dest)
            }
            #[inline]
            fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core_06::Error> {
                $try_fill(self, dest).map_err(|_| error_06())
            }
        }

        #[cfg(feature = "rand_core_06")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
        impl<$($g)*> rand_core_06::CryptoRng for $t {}

        #[cfg(feature = "rand_core_09")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_09")))]
        impl<$($g)*> rand_core_09::RngCore for $t {
            #[inline]
            fn next_u32(&mut self) -> u32 {
                let mut b = [0u8; 4];
                $fill(self, &mut b);
                u32::from_le_bytes(b)
            }
            #[inline]
            fn next_u64(&mut self) -> u64 {
                let mut b = [0u8; 8];
                $fill(self, &mut b);
                u64::from_le_bytes(b)
            }
            #[inline]
            fn fill_bytes(&mut self, dest: &mut [u8]) {
                $fill(self, dest)
            }
        }

        #[cfg(feature = "rand_core_09")]
        #[cfg_attr(docsrs, doc(cfg(feature = "rand_core_09")))]
        impl<$($g)*> rand_core_09::CryptoRng for $t {}
    )+};
}

crypto_rng! {
    [P: Prf, C: Clock] Fortuna<P, C>, Fortuna::fill_bytes, Fortuna::try_fill_bytes;
    ['a, P: Prf, C: Clock] &'a Fortuna<P, C>, Fortuna::fill_bytes, Fortuna::try_fill_bytes;
    ['a] &'a NodePools, NodePools::fill_bytes, NodePools::try_fill_bytes;
}

#[cfg(all(test, feature = "std"))]
#[allow(clippy::unwrap_used)] // test helpers fail loudly
mod tests {
    use alloc::vec;

    use crate::fortuna::{Fortuna, ReadMode};
    use crate::numa::{NodePools, Topology};

    fn pools() -> NodePools {
        NodePools::from_seed(Topology::from_nodes(vec![vec![0, 1]]), &[7; 32]).unwrap()
    }

    #[cfg(feature = "rand_core_06")]
    #[test]
    fn rand_core_06_reads_the_generators() {
        use rand_core_06::RngCore;
        fn crypto<R: rand_core_06::CryptoRng + RngCore>(r: &mut R) -> [u8; 32] {
            let mut b = [0u8; 32];
            r.try_fill_bytes(&mut b).unwrap();
            assert_ne!(r.next_u64(), r.next_u64());
            b
        }
        let p = pools();
        assert_ne!(crypto(&mut &p), crypto(&mut &p));
        let mut f = Fortuna::with_seed(ReadMode::Concurrent, &[1; 32]).unwrap();
        assert_ne!(crypto(&mut &f), crypto(&mut f));
        assert_ne!(crypto(&mut f), [0; 32]);
    }

    #[cfg(feature = "rand_core_09")]
    #[test]
    fn rand_core_09_reads_the_generators() {
        use rand_core_09::RngCore;
        fn crypto<R: rand_core_09::TryCryptoRng + RngCore>(r: &mut R) -> [u8; 32] {
            let mut b = [0u8; 32];
            r.try_fill_bytes(&mut b).unwrap();
            assert_ne!(r.next_u32(), r.next_u32());
            b
        }
        let p = pools();
        assert_ne!(crypto(&mut &p), crypto(&mut &p));
        let mut f = Fortuna::with_seed(ReadMode::Locked, &[1; 32]).unwrap();
        assert_ne!(crypto(&mut &f), crypto(&mut f));
    }
}
