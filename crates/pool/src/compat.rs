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
//! `rand_core::Error` code [`RAND_CORE_06_ERROR_CODE`]. The impls come from the adapter every
//! scalrand crate shares (`scalrand_os::rand_core_compat!`).

#[cfg(feature = "fortuna")]
use crate::fortuna::{Clock, Fortuna, Prf};
use crate::numa::NodePools;

/// The code of the `rand_core` 0.6 `Error` that `try_fill_bytes` returns when a read fails
/// (rand_core's first custom code, `Error::CUSTOM_START`).
#[cfg(feature = "rand_core_06")]
#[cfg_attr(docsrs, doc(cfg(feature = "rand_core_06")))]
pub const RAND_CORE_06_ERROR_CODE: u32 = rand_core_06::Error::CUSTOM_START;

scalrand_os::rand_core_compat!(crypto: ['a] &'a NodePools => NodePools::try_fill_bytes);
#[cfg(feature = "fortuna")]
scalrand_os::rand_core_compat!(crypto:
    [P: Prf, C: Clock] Fortuna<P, C> => Fortuna::try_fill_bytes,
    ['a, P: Prf, C: Clock] &'a Fortuna<P, C> => Fortuna::try_fill_bytes,
);

#[cfg(all(test, feature = "std"))]
#[allow(clippy::unwrap_used)] // test helpers fail loudly
mod tests {
    use alloc::vec;

    #[cfg(feature = "fortuna")]
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
        #[cfg(feature = "fortuna")]
        {
            let mut f = Fortuna::with_seed(ReadMode::Concurrent, &[1; 32]).unwrap();
            assert_ne!(crypto(&mut &f), crypto(&mut f));
            assert_ne!(crypto(&mut f), [0; 32]);
        }
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
        #[cfg(feature = "fortuna")]
        {
            let mut f = Fortuna::with_seed(ReadMode::Locked, &[1; 32]).unwrap();
            assert_ne!(crypto(&mut &f), crypto(&mut f));
        }
    }
}
